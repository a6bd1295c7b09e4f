//! `ibi-archive check`: validates the whole Archive (see `ibi_archive::admin::check`).

use std::io::{IsTerminal, Write};

use ibi_archive::admin::check::{check_and_fix, DEFAULT_WEB_USER};

use super::{CliError, CliResult};

pub fn run(parser: &mut lexopt::Parser) -> CliResult {
    use lexopt::Arg::{Long, Short};
    let mut root = None;
    let mut web_user = DEFAULT_WEB_USER.to_string();
    let mut fix = false;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return super::print_help("check"),
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
