//! `ibi-archive delete`: turns an item into a tombstone (see `ibi_archive::admin::delete`).

use std::io::Write;
use std::path::PathBuf;

use ibi_archive::admin::delete::delete;
use ibi_archive::ibi::Ibi;
use ibi_archive::pairs::PairList;
use ibi_archive::time::{iso8601, SystemClock};

use super::{root_flag, CliError, CliResult};

pub const HELP: &str = "\
usage: ibi-archive delete [--root R] [--keep-content] IBI

Turns the item IBI into a tombstone: state Deleted, timestamp now, its doc/ removed
(kept with --keep-content). The service then answers state Deleted and the timestamp.
Refuses an unknown item, an item already Deleted and the Archive service item.
";

pub fn run(parser: &mut lexopt::Parser) -> CliResult {
    use lexopt::Arg::{Long, Short, Value};
    let mut root: Option<PathBuf> = None;
    let mut keep = false;
    let mut ibi: Option<Ibi> = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return super::print_text(HELP),
            Long("root") => root = Some(parser.value()?.into()),
            Long("keep-content") => keep = true,
            Value(v) if ibi.is_none() => {
                let s = v
                    .into_string()
                    .map_err(|v| CliError::usage(format!("delete: {v:?} is not an IBI")))?;
                ibi = Some(Ibi::parse(&s).map_err(|e| CliError::usage(format!("delete: {e}")))?);
            }
            other => return Err(CliError::unexpected("delete", other)),
        }
    }
    let ibi = ibi.ok_or_else(|| CliError::missing("delete", "IBI"))?;
    let now = SystemClock::now();
    let done = delete(&root_flag(root), &ibi, keep, now)
        .map_err(|e| CliError::failed(format!("delete: {e}")))?;
    let mut pairs = PairList::new();
    pairs.push_word("rep", done.rep.as_str());
    if let Some(p) = &done.ibip {
        pairs.push_word("ibip", p.as_str());
    }
    pairs.push_word("state", "Deleted");
    pairs.push_word("timestamp", iso8601(done.timestamp));
    pairs.push_word(
        "content",
        if done.content_removed {
            "removed"
        } else {
            "kept"
        },
    );
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", pairs.to_lines())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::failed(e.to_string()))
}
