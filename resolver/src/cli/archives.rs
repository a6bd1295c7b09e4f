//! `ibi-resolver archives`: every registered Archive and its state.

use std::path::PathBuf;

use ibi_resolver::health::State;
use ibi_resolver::registry::ArchiveRecord;

use super::{CliError, CliResult};

pub fn run(parser: &mut lexopt::Parser, mut config: PathBuf) -> CliResult {
    use lexopt::prelude::*;
    let mut csv = false;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return super::print_help("archives"),
            Long("config") => config = parser.value()?.into(),
            Long("csv") => csv = true,
            other => return Err(CliError::unexpected(&super::PROGRAM, "archives", other)),
        }
    }
    let config = super::load(&config)?;
    let list = super::open(&config)?
        .list()
        .map_err(|e| CliError::failed(e.to_string()))?;
    super::print_text(&if csv { csv_rows(&list) } else { lines(&list) })
}

fn dash(o: &Option<String>) -> String {
    o.clone().unwrap_or_else(|| "-".into())
}

/// `--csv`: a header, then one row per Archive.
fn csv_rows(list: &[ArchiveRecord]) -> String {
    let mut out = String::from(
        "serviceibi,address,included,confirmation,lastsuccess,failures,dormant,latencyms,changed,email,conflicts,moves,movedat,movedfrom,movesrefused\n",
    );
    let field = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    for a in list {
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            field(&a.serviceibi),
            field(&dash(&a.address)),
            if a.included { "yes" } else { "no" },
            dash(&a.confirmation),
            dash(&a.lastsuccess),
            a.failures,
            match a.health {
                State::Awake => "no",
                State::Dormant => "yes",
            },
            a.latencyms.map_or("-".into(), |l| format!("{l:.3}")),
            dash(&a.changed),
            field(&a.email),
            a.conflicts,
            a.moves,
            dash(&a.movedat),
            field(&dash(&a.movedfrom)),
            a.movesrefused
        ));
    }
    out
}

/// One line per Archive, for a person.
fn lines(list: &[ArchiveRecord]) -> String {
    if list.is_empty() {
        return "no Archive is registered\n".into();
    }
    let mut out = String::new();
    for a in list {
        out.push_str(&format!(
            "{}  {}  {}  confirmation {}  last seen {}  failures {}{}{}{}{}\n",
            a.serviceibi,
            dash(&a.address),
            match (a.included, a.health) {
                (false, _) => "not included",
                (true, State::Awake) => "included",
                (true, State::Dormant) => "included, dormant",
            },
            dash(&a.confirmation),
            dash(&a.lastsuccess),
            a.failures,
            a.latencyms
                .map_or(String::new(), |l| format!("  latency {l:.1} ms")),
            if a.conflicts > 0 {
                format!(
                    "  conflicts {} (claims of IBIs remembered elsewhere)",
                    a.conflicts
                )
            } else {
                String::new()
            },
            if a.moves > 0 {
                format!(
                    "  moved {} time{}, last {} from {}",
                    a.moves,
                    if a.moves == 1 { "" } else { "s" },
                    dash(&a.movedat),
                    dash(&a.movedfrom)
                )
            } else {
                String::new()
            },
            if a.movesrefused > 0 {
                format!(
                    "  moves refused {} (it answered at its address)",
                    a.movesrefused
                )
            } else {
                String::new()
            }
        ));
    }
    out
}
