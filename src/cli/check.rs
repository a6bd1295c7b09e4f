//! `ibi-archive check`: validates the whole Archive (see `ibi_archive::admin::check`).

use std::io::{IsTerminal, Write};

use ibi_archive::admin::check::{check_and_fix, DEFAULT_WEB_USER};

use super::{CliError, CliResult};

pub const HELP: &str = "\
usage: ibi-archive check [--root R] [--web-user USER] [--fix]

Validates the Archive: archive.toml (every setting, as the service, new and
include/exclude read it) and its service item, every directory and item under col/
(names, item.toml, ibip dates, target and format files, duplicate IBIs, Original and
Copy of one IBI, next-edition loops, symlinks leading outside col/, files of doc/ that
are never served: hard links, pipes).
Prints one line per fault, `<path>: <fault>` (`<path>:LINE:COLUMN: <fault>` for a
TOML error), paths relative to the Archive root and control characters escaped, then
`checked N items: K faults`. Warnings (archive.toml with the registration key, or
var/urlkey.secret, readable by every local user) are `<path>: warning: ...` lines,
counted in the summary. var/ and what the service uses in it must be usable by the
web server's user, USER (default www-data): var/ writable and searchable,
var/urlkey.secret readable, var/acknowledgments.log, var/acknowledgments.synced and
var/acknowledged/ writable; each that is not is a fault, said with the chown to run
(no such user here: a note, and this is not checked). Notes are `<path>: note: ...` lines, counted in the summary
too: a nextedition, metadata or translation naming an IBI this Archive does not hold
(item.toml allows one held elsewhere: the resolver looks for it in the other
Archives); a persistent URL in a metadata item's record (dc:identifier) that names a
resolver [registration] does not name (an Archive made before its resolver took the
standard's, urlib.net), which --fix rewrites to name the first resolver of
[registration], in the record and in metadata.html; and, when archive.toml does not
load, which checks depending on it were skipped. Exit status 1 when there are faults (warnings and notes alone exit 0).
Shows progress on stderr when it is a terminal. Writes var/oai-records, the index of
the OAI-PMH data provider's records, from its walk, and var/oai-records.stamp, what
col/ was (when var/ exists); the data provider builds them itself when they are
missing or col/ has changed since.
";

pub fn run(parser: &mut lexopt::Parser) -> CliResult {
    use lexopt::Arg::{Long, Short};
    let mut root = None;
    let mut web_user = DEFAULT_WEB_USER.to_string();
    let mut fix = false;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return super::print_text(HELP),
            Long("root") => root = Some(parser.value()?.into()),
            Long("web-user") => {
                use lexopt::ValueExt;
                web_user = parser.value()?.string()?;
            }
            Long("fix") => fix = true,
            other => return Err(CliError::unexpected(&super::PROGRAM, "check", other)),
        }
    }
    let root = super::root_flag(root);
    let bar = if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} checking: {human_pos} items, {elapsed}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        Some(bar)
    } else {
        None
    };
    let mut out = std::io::stdout().lock();
    let mut write_error = None;
    let summary = check_and_fix(
        &root,
        &web_user,
        fix,
        &mut |fault| {
            let line = format!("{fault}");
            let mut write = || writeln!(out, "{line}");
            let r = match &bar {
                Some(b) => b.suspend(write),
                None => write(),
            };
            if let Err(e) = r {
                write_error.get_or_insert(e);
            }
        },
        &mut |n| {
            if let Some(b) = &bar {
                b.set_position(n);
            }
        },
    );
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let warnings = match summary.warnings {
        0 => String::new(),
        n => format!(", {}", plural(n, "warning", "warnings")),
    };
    let notes = match summary.notes {
        0 => String::new(),
        n => format!(", {}", plural(n, "note", "notes")),
    };
    writeln!(
        out,
        "checked {}: {}{warnings}{notes}",
        plural(summary.items, "item", "items"),
        plural(summary.faults, "fault", "faults")
    )
    .and_then(|()| out.flush())
    .map_err(|e| CliError::failed(e.to_string()))?;
    if let Some(e) = write_error {
        return Err(CliError::failed(format!("check: cannot write: {e}")));
    }
    if summary.faults > 0 {
        return Err(CliError::failed(
            "check: the Archive has faults (listed above)",
        ));
    }
    Ok(())
}
