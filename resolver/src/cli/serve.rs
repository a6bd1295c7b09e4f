//! `ibi-resolver serve`: the resolver's HTTP server, until SIGINT or SIGTERM.

use std::path::PathBuf;

use ibi_resolver::server;

use super::{CliError, CliResult};

pub const HELP: &str = "\
usage: ibi-resolver serve [--listen [ADDRESS:]PORT] [--config FILE]

Runs the resolver (HTTP) with the settings of FILE [$IBI_RESOLVER_CONFIG, else
/etc/ibi-resolver/resolver.toml] until SIGINT or SIGTERM: new connections are then
refused, idle ones closed at once, and requests under way get 5 s. --listen takes
ADDRESS:PORT (127.0.0.1:8091, [::1]:8091) or a PORT alone, on 127.0.0.1, in place of
the settings' listen: instances that share one settings file (and registry) each on a
port of its own (ibi-resolver@PORT.service). One line per request
on stderr, after its time (RFC 3339, UTC), or without it when stderr is the systemd
journal; so is the last line, why it could not start or stopped on a fault.
";

pub fn run(parser: &mut lexopt::Parser, mut config: PathBuf) -> CliResult {
    use lexopt::prelude::*;
    let mut listen = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return super::print_text(HELP),
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
