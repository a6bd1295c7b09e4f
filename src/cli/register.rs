//! `ibi-archive include` / `ibi-archive exclude`: the inclusion and exclusion requests of
//! §7.2 of the resolution standard (see `ibi_archive::admin::registration`).

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use ibi_archive::admin::registration::{
    crosses_in_clear, judge, prepare, send_when_asked, Failure, Prepared, Verdict, MAX_RETRY_WAIT,
    TRIES,
};
use ibi_archive::config::Config;

pub use ibi_archive::admin::registration::Direction;

use super::{root_flag, CliError, CliResult};

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
    let mut resolvers: Vec<String> = Vec::new();
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return super::print_help(cmd),
            Long("root") => root = Some(parser.value()?.into()),
            Long("resolver") => {
                resolvers.push(parser.value()?.into_string().map_err(|v| {
                    CliError::usage(format!("{cmd}: --resolver {v:?} is not a URL"))
                })?)
            }
            other => return Err(CliError::unexpected(&super::PROGRAM, cmd, other)),
        }
    }
    let root = root_flag(root);
    let config = Config::load(&root).map_err(|e| CliError::failed(format!("{cmd}: {e}")))?;
    let requests = prepare(&config, direction, &resolvers)
        .map_err(|e| CliError::failed(format!("{cmd}: {e}")))?;
    if direction == Direction::Include {
        for req in requests.iter().filter(|r| crosses_in_clear(&r.resolver)) {
            super::say(&format!(
                "{cmd}: warning: the registration key for {} crosses the network in clear (http): whoever reads it on the way can include this Archive at another address there; reach that resolver through a TLS tunnel (the administrator's guide, \"Joining resolvers\")",
                req.resolver
            ));
        }
    }
    let several = requests.len() > 1;
    let mut failed = 0;
    for req in &requests {
        match ask(cmd, req, several, &config) {
            Ok(()) => {}
            // With one resolver, its failure is the command's.
            Err(e) if !several => return Err(e),
            Err(e) => {
                failed += 1;
                super::say(&format!("{cmd}: {e}"));
            }
        }
    }
    if failed > 0 {
        return Err(CliError::failed(format!(
            "{cmd}: {failed} of {} resolvers failed",
            requests.len()
        )));
    }
    Ok(())
}

/// Sends one request (again when the resolver asks for it, saying so each time) and
/// prints the resolver's answer (each line after the resolver's URL when there are
/// `several`); Err when it did not answer success.
fn ask(cmd: &str, req: &Prepared, several: bool, config: &Config) -> CliResult {
    let mut pausing = |failure: &Failure, pause: Duration, next: u32| {
        let asked = failure.retry_after.unwrap_or_default();
        let cut = if asked > MAX_RETRY_WAIT {
            format!(
                ", the longest wait, rather than the {} s it asked",
                asked.as_secs()
            )
        } else {
            String::new()
        };
        super::say(&format!(
            "{cmd}: {failure}; asking again in {} s{cut} (try {next} of {TRIES})",
            pause.as_secs()
        ));
    };
    let answer = send_when_asked(req, &mut pausing).map_err(|e| CliError::failed(e.message))?;
    let mut out = std::io::stdout().lock();
    for line in answer.lines() {
        let line = req.scrub(&line);
        let line = if several {
            format!("{}: {line}", req.resolver)
        } else {
            line
        };
        writeln!(out, "{}", ::ibi::logline::clean(&line))
            .map_err(|e| CliError::failed(e.to_string()))?;
    }
    out.flush().map_err(|e| CliError::failed(e.to_string()))?;
    match judge(req, &answer) {
        Ok(Verdict::Done) => Ok(()),
        Ok(Verdict::IncludedUnconfirmed) => {
            super::say(&format!(
                "include: included, but the resolver at {} could not confirm the Archive service at http://{}/{} (status.confirmation unsuccessful): is the Archive reachable at archiveaddress?",
                req.resolver, config.archiveaddress, config.service
            ));
            Ok(())
        }
        Err(e) => Err(CliError::failed(e.message)),
    }
}
