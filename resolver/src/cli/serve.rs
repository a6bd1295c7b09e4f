//! `ibi-resolver serve`: the resolver's HTTP server, until SIGINT or SIGTERM.

use std::path::PathBuf;

use ibi_resolver::server;

use super::{CliError, CliResult};

pub const HELP: &str = "\
usage: ibi-resolver serve [--config FILE]

Runs the resolver (HTTP) with the settings of FILE [$IBI_RESOLVER_CONFIG, else
/etc/ibi-resolver/resolver.toml] until SIGINT or SIGTERM: new connections are then
refused, idle ones closed at once, and requests under way get 5 s. One line per request
on stderr, after its time (RFC 3339, UTC), or without it when stderr is the systemd
journal; so is the last line, why it could not start or stopped on a fault.
";

pub fn run(parser: &mut lexopt::Parser, config: PathBuf) -> CliResult {
    let Some((config, _)) = super::config_and_operands(parser, "serve", HELP, config, 0)? else {
        return Ok(());
    };
    // Whether log lines carry their time is decided once, before any thread starts.
    ibi_resolver::log::stamped();
    serve(&config).map_err(|why| {
        // The server's last line: a log line, timed as the others (a supervisor's log
        // file shows when it gave up).
        ibi_resolver::log::say(&why);
        CliError::quiet()
    })
}

/// The server with the settings of `config`, until it is stopped; why it could not start
/// or failed.
fn serve(config: &std::path::Path) -> Result<(), String> {
    let config = ibi_resolver::config::Config::load(config)?;
    ibi_resolver::process::tune_allocator();
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start: {e}"))?;
    let served = runtime.block_on(server::serve(config));
    // A call of the registry still blocked on a database that hangs does not hold up
    // the exit.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    served
}
