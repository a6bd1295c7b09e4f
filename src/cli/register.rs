//! `ibi-archive include` / `ibi-archive exclude` (to be built).

use super::{CliError, CliResult};

/// Which request goes to the resolver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Include,
    Exclude,
}

pub fn run(_parser: &mut lexopt::Parser, _direction: Direction) -> CliResult {
    Err(CliError::failed("include/exclude: not built yet"))
}
