//! `ibi-resolver serve`: the resolver's HTTP server, until SIGINT or SIGTERM.

use std::path::PathBuf;

use ibi_resolver::server;

use super::{CliError, CliResult};

pub fn run(parser: &mut lexopt::Parser, mut config: PathBuf) -> CliResult {
    use lexopt::prelude::*;
    let mut listen = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return super::print_help("serve"),
            Long("config") => config = parser.value()?.into(),
            Long("listen") => {
                listen = Some(
                    cmdline::listen_address(&parser.value()?.string()?).map_err(CliError::usage)?,
                )
            }
            other => return Err(CliError::unexpected(&super::PROGRAM, "serve", other)),
        }
    }
    // Whether log lines carry their time is decided once, before any thread starts.
    ibi_resolver::log::stamped();
    serve(&config, listen).map_err(|why| {
        // The server's last line: a log line, timed as the others (a supervisor's log
        // file shows when it gave up).
        ibi_resolver::log::say(&why);
        CliError::quiet()
    })
}

/// The server with the settings of `config` (listening on `listen` when given), until it
/// is stopped; why it could not start or failed.
fn serve(config: &std::path::Path, listen: Option<std::net::SocketAddr>) -> Result<(), String> {
    let mut config = ibi_resolver::config::Config::load(config)?;
    if let Some(listen) = listen {
        config.listen = listen;
    }
    ibi_resolver::process::tune_allocator();
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start: {e}"))?;
    let served = runtime.block_on(server::serve(config));
    // A call of the registry still blocked on a database that hangs does not hold up
    // the exit.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    served
}
