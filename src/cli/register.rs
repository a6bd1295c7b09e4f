//! `ibi-archive include` / `ibi-archive exclude`: the inclusion and exclusion requests of
//! §7.2 of the resolution standard (see `ibi_archive::admin::registration`).

use std::io::Write;
use std::path::PathBuf;

use ibi_archive::admin::registration::{judge, prepare, send, Verdict};
use ibi_archive::config::Config;

pub use ibi_archive::admin::registration::Direction;

use super::{root_flag, CliError, CliResult};

pub const HELP: &str = "\
usage: ibi-archive include [--root R] [--resolver URL]
       ibi-archive exclude [--root R] [--resolver URL]

Sends the resolver (--resolver, else [registration].resolver of archive.toml) the
inclusion or exclusion request of Table 7.2 of the resolution standard, with the
values of archive.toml ([registration]: adminemail, key, ip, platformversion), and
prints the status pairs it answers. Exit status 0 only when it answers
status.archive included (include) or excluded (exclude). The registration key is
checked (rule chave of Table 7.1) before anything is sent, and never printed.
";

/// `ibi-archive include`.
pub fn include(parser: &mut lexopt::Parser) -> CliResult {
    run(parser, Direction::Include)
}

/// `ibi-archive exclude`.
pub fn exclude(parser: &mut lexopt::Parser) -> CliResult {
    run(parser, Direction::Exclude)
}

fn run(parser: &mut lexopt::Parser, direction: Direction) -> CliResult {
    use lexopt::Arg::{Long, Short};
    let cmd = match direction {
        Direction::Include => "include",
        Direction::Exclude => "exclude",
    };
    let mut root: Option<PathBuf> = None;
    let mut resolver: Option<String> = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return super::print_text(HELP),
            Long("root") => root = Some(parser.value()?.into()),
            Long("resolver") => {
                resolver = Some(parser.value()?.into_string().map_err(|v| {
                    CliError::usage(format!("{cmd}: --resolver {v:?} is not a URL"))
                })?)
            }
            other => return Err(CliError::unexpected(cmd, other)),
        }
    }
    let root = root_flag(root);
    let config = Config::load(&root).map_err(|e| CliError::failed(format!("{cmd}: {e}")))?;
    let req = prepare(&config, direction, resolver.as_deref())
        .map_err(|e| CliError::failed(format!("{cmd}: {e}")))?;
    let answer = send(&req).map_err(|e| CliError::failed(format!("{cmd}: {e}")))?;
    let mut out = std::io::stdout().lock();
    for line in answer.lines() {
        let line = req.scrub(&line);
        writeln!(out, "{}", ibi_archive::logline::clean(&line))
            .map_err(|e| CliError::failed(e.to_string()))?;
    }
    out.flush().map_err(|e| CliError::failed(e.to_string()))?;
    match judge(direction, &answer) {
        Ok(Verdict::Done) => Ok(()),
        Ok(Verdict::IncludedUnconfirmed) => {
            eprintln!(
                "ibi-archive: include: included, but the resolver could not confirm the Archive service at http://{}/{} (status.confirmation unsuccessful): is the Archive reachable at archiveaddress?",
                config.archiveaddress, config.service
            );
            Ok(())
        }
        Err(e) => Err(CliError::failed(req.scrub(&format!("{cmd}: {e}")))),
    }
}
