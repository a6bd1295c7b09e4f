//! `ibi-archive delete` (to be built).

use super::{CliError, CliResult};

pub fn run(_parser: &mut lexopt::Parser) -> CliResult {
    Err(CliError::failed("delete: not built yet"))
}
