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
journal.
";

pub fn run(parser: &mut lexopt::Parser, config: PathBuf) -> CliResult {
    let Some((config, _)) = super::config_and_operands(parser, "serve", HELP, config, 0)? else {
        return Ok(());
    };
    let config = super::load(&config)?;
    // Whether log lines carry their time is decided once, before any thread starts.
    ibi_resolver::log::stamped();
    ibi_resolver::process::tune_allocator();
    let runtime = tokio::runtime::Runtime::new()
        .map_err(|e| CliError::failed(format!("cannot start: {e}")))?;
    let served = runtime.block_on(server::serve(config));
    // A call of the registry still blocked on a database that hangs does not hold up
    // the exit.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    served.map_err(CliError::failed)
}
