//! The `ibi-archive` executable: a CGI program when a web server runs it
//! (`GATEWAY_INTERFACE` set; see `cgi_entry`), the administrator's tool otherwise.

use std::process::ExitCode;

mod cgi_entry;
mod cli;

fn main() -> ExitCode {
    if cgi_entry::is_cgi() {
        return cgi_entry::answer();
    }
    let result = cli::run(&mut lexopt::Parser::from_env());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            cli::say(&e.to_string());
            ExitCode::from(e.code)
        }
    }
}
