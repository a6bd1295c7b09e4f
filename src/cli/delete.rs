//! `ibi-archive delete`: turns an item into a tombstone (see `ibi_archive::admin::delete`).

use std::io::Write;
use std::path::PathBuf;

use ::ibi::pairs::PairList;
use ::ibi::time::{iso8601, SystemClock};
use ::ibi::Ibi;
use ibi_archive::admin::delete::delete;
use ibi_archive::item::MAX_REASON;

use super::{root_flag, CliError, CliResult};

pub fn run(parser: &mut lexopt::Parser) -> CliResult {
    use lexopt::Arg::{Long, Short, Value};
    let mut root: Option<PathBuf> = None;
    let mut keep = false;
    let mut reason: Option<String> = None;
    let mut ibi: Option<Ibi> = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return super::print_help("delete"),
            Long("root") => root = Some(parser.value()?.into()),
            Long("keep-content") => keep = true,
            Long("reason") => {
                let text = parser
                    .value()?
                    .into_string()
                    .map_err(|_| CliError::usage("delete: --reason is not UTF-8"))?;
                if text.trim().is_empty() {
                    return Err(CliError::usage(
                        "delete: --reason is empty: give one, or leave the flag out",
                    ));
                }
                if text.len() > MAX_REASON {
                    return Err(CliError::usage(format!(
                        "delete: --reason is {} bytes long: the landing page shows at most {MAX_REASON}",
                        text.len()
                    )));
                }
                reason = Some(text);
            }
            Value(v) if ibi.is_none() => {
                let s = v
                    .into_string()
                    .map_err(|v| CliError::usage(format!("delete: {v:?} is not an IBI")))?;
                ibi = Some(Ibi::parse(&s).map_err(|e| CliError::usage(format!("delete: {e}")))?);
            }
            other => return Err(CliError::unexpected(&super::PROGRAM, "delete", other)),
        }
    }
    let ibi = ibi.ok_or_else(|| CliError::missing(&super::PROGRAM, "delete", "IBI"))?;
    let now = SystemClock::now();
    let done = delete(&root_flag(root), &ibi, keep, reason.as_deref(), now)
        .map_err(|e| CliError::failed(format!("delete: {e}")))?;
    for note in &done.notes {
        super::say(&format!("note: {note}"));
    }
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
