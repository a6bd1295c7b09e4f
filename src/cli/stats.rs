//! `ibi-archive stats`: access counts from the acknowledgment log (see
//! `ibi_archive::admin::stats`).

use std::io::Write;
use std::path::PathBuf;

use ::ibi::Ibi;
use ibi_archive::admin::stats::compute;

use super::{root_flag, CliError, CliResult};

pub fn run(parser: &mut lexopt::Parser) -> CliResult {
    use lexopt::Arg::{Long, Short};
    let mut root: Option<PathBuf> = None;
    let mut csv = false;
    let mut item: Option<Ibi> = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return super::print_help("stats"),
            Long("root") => root = Some(parser.value()?.into()),
            Long("csv") => csv = true,
            Long("item") => {
                let v = parser
                    .value()?
                    .into_string()
                    .map_err(|v| CliError::usage(format!("stats: --item {v:?} is not an IBI")))?;
                item = Some(
                    Ibi::parse(&v).map_err(|e| CliError::usage(format!("stats: --item: {e}")))?,
                );
            }
            other => return Err(CliError::unexpected(&super::PROGRAM, "stats", other)),
        }
    }
    let stats = compute(&root_flag(root), item.as_ref())
        .map_err(|e| CliError::failed(format!("stats: {e}")))?;
    if stats.malformed > 0 {
        eprintln!(
            "ibi-archive: stats: {} malformed line{} in var/acknowledgments.log skipped",
            stats.malformed,
            if stats.malformed == 1 { "" } else { "s" }
        );
    }
    let text = if csv { stats.csv() } else { stats.table() };
    // Item names come from the log: each line escaped, so none can reach the terminal raw.
    let text: String = text
        .lines()
        .map(|l| format!("{}\n", ::ibi::logline::clean(l)))
        .collect();
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::failed(e.to_string()))
}
