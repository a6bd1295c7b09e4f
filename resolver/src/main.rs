//! The `ibi-resolver` command: the server and the operator's tools (see `cli`).

use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    match cli::run(&mut lexopt::Parser::from_env()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if !e.message.is_empty() {
                ibi_resolver::log::tell(&e.message);
            }
            ExitCode::from(e.code)
        }
    }
}
