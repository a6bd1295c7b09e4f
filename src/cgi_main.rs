//! `ibi-archive-cgi`: the Archive service alone, for the web server to run as a CGI
//! program. It answers what `ibi-archive` answers as a CGI program, byte for byte (the
//! same `cgi_entry`), without the administrator's commands.

use std::process::ExitCode;

mod cgi_entry;

fn main() -> ExitCode {
    if cgi_entry::is_cgi() {
        return cgi_entry::answer();
    }
    eprintln!("ibi-archive-cgi: the Archive service, run by a web server as a CGI program (GATEWAY_INTERFACE is not set); the administrator's commands are ibi-archive's");
    ExitCode::from(2)
}
