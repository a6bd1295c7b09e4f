//! `ibi-archive stats`: access counts from the acknowledgment log (see
//! `ibi_archive::admin::stats`).

use std::io::Write;
use std::path::PathBuf;

use ::ibi::Ibi;
use ibi_archive::admin::stats::compute;

use super::{root_flag, CliError, CliResult};

pub const HELP: &str = "\
usage: ibi-archive stats [--root R] [--csv] [--item IBI]

Counts the accesses recorded in var/acknowledgments.log: one line per acknowledgment
the service counted (the resolver acknowledging a URL it handed out, with a urlkey it
issued, once per key), per item and per month (UTC). Columns:

  item    the item's rep as stored here (the log may name another form of its IBI;
          an item no longer here keeps the name the log gives);
          `*` adds up every item;
          `-` counts log lines that name no item (an earlier version of the service
          wrote them for acknowledgments whose item it could not tell)
  month   YYYY-MM, or `total` for every month
  count   the accesses

Rows: for each item, one per month with accesses, then its total; then those of item
`*`. The table starts with a line saying what it counts and, when there is a row `-`,
ends with a line saying what that is. --csv prints the rows alone, after the header
item,month,count (an item holding a comma or a quote is quoted). --item counts one item
only (either form of its IBI). The log is first synced to disk, when the service wrote
lines no sync covers yet (see [acknowledgments] sync_interval in archive.toml). Lines of
the log that cannot be read are counted and reported on stderr. Fails (exit status 1) outside an Archive: without an archive.toml
that loads in the root.
";

pub fn run(parser: &mut lexopt::Parser) -> CliResult {
    use lexopt::Arg::{Long, Short};
    let mut root: Option<PathBuf> = None;
    let mut csv = false;
    let mut item: Option<Ibi> = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return super::print_text(HELP),
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
