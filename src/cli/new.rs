//! `ibi-archive new` (to be built).

use super::{CliError, CliResult};

pub fn run(_parser: &mut lexopt::Parser) -> CliResult {
    Err(CliError::failed("new: not built yet"))
}
