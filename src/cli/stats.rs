//! `ibi-archive stats` (to be built).

use super::{CliError, CliResult};

pub fn run(_parser: &mut lexopt::Parser) -> CliResult {
    Err(CliError::failed("stats: not built yet"))
}
