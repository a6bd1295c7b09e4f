//! `ibi-resolver resolve`: one resolution from the shell, every step printed.

use std::path::PathBuf;
use std::sync::Arc;

use ibi::persistent::PersistentUrl;
use ibi_resolver::config::Config;
use ibi_resolver::resolve::{Engine, MayHold, Outcome, Reader, Trace, Unbounded};
use ibi_resolver::{client, lang};

use super::{CliError, CliResult};

/// What `resolve` was given.
struct Asked {
    config: PathBuf,
    target: String,
    lang: Option<String>,
    ip: Option<String>,
    acknowledge: bool,
}

pub fn run(parser: &mut lexopt::Parser, config: PathBuf) -> CliResult {
    let Some(asked) = parse(parser, config)? else {
        return Ok(());
    };
    let config = super::load(&asked.config)?;
    let url = persistent_url(&asked.target)?;
    let reader = reader(asked.ip.as_deref(), asked.lang.as_deref())?;
    let archives = super::open(&config)?
        .included()
        .map_err(|e| CliError::failed(e.to_string()))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::failed(format!("cannot start: {e}")))?;
    runtime.block_on(resolve(&config, archives, &url, &reader, asked.acknowledge))
}

/// The command line of `resolve`; `None` once --help is answered.
fn parse(parser: &mut lexopt::Parser, mut config: PathBuf) -> Result<Option<Asked>, CliError> {
    use lexopt::prelude::*;
    let (mut target, mut lang, mut ip, mut acknowledge) = (None, None, None, false);
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return super::print_help("resolve").map(|()| None),
            Long("config") => config = parser.value()?.into(),
            Long("lang") => lang = Some(parser.value()?.string()?),
            Long("ip") => ip = Some(parser.value()?.string()?),
            Long("acknowledge") => acknowledge = true,
            Value(v) if target.is_none() => target = Some(v.string()?),
            other => return Err(CliError::unexpected(&super::PROGRAM, "resolve", other)),
        }
    }
    let target =
        target.ok_or_else(|| CliError::missing(&super::PROGRAM, "resolve", "PERSISTENT-URL"))?;
    Ok(Some(Asked {
        config,
        target,
        lang,
        ip,
        acknowledge,
    }))
}

/// The persistent URL of `target`: a whole URL, a path, or an IBI with what follows it.
fn persistent_url(target: &str) -> Result<PersistentUrl, CliError> {
    let rest = match target.split_once("://") {
        Some((_, after)) => after.find('/').map_or("/", |i| &after[i..]).to_string(),
        None if target.starts_with('/') => target.to_string(),
        None => format!("/{target}"),
    };
    let (path, query) = match rest.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (rest.as_str(), None),
    };
    PersistentUrl::parse(path, query).map_err(|e| CliError::usage(e.to_string()))
}

/// The reader: `--ip` (addresses parted by spaces or commas; 127.0.0.1 when not given)
/// and the languages of `--lang`.
fn reader(ip: Option<&str>, lang_header: Option<&str>) -> Result<Reader, CliError> {
    let ips = match ip {
        Some(list) => list
            .split([' ', ','])
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.parse()
                    .map_err(|_| CliError::usage(format!("--ip: {s:?} is not an IP address")))
            })
            .collect::<Result<Vec<_>, _>>()?,
        None => vec!["127.0.0.1".parse().expect("literal")],
    };
    Ok(Reader {
        ips,
        languages: lang::preferences(lang_header),
    })
}

/// Resolves `url` for `reader` among `archives`, printing every step, and acknowledges
/// the URL found when asked to.
async fn resolve(
    config: &Config,
    archives: Vec<ibi_resolver::registry::Included>,
    url: &PersistentUrl,
    reader: &Reader,
    acknowledge: bool,
) -> CliResult {
    let engine = Engine::new(config);
    let trace = engine
        .resolve(Arc::new(archives.into()), url, reader, false, &Unbounded)
        .await;
    let spelled = ibi_resolver::resolve::persistent_url(&config.publicurl, url);
    super::print_text(&trace_text(&spelled, &trace))?;
    let found = matches!(trace.outcome, Outcome::Found(_));
    if acknowledge {
        super::print_text(&acknowledgment(&engine, &trace, reader, found).await)?;
    }
    if found {
        Ok(())
    } else {
        Err(CliError::quiet())
    }
}

/// Every round of `trace` (of the persistent URL spelled `persistent_url`, as readers
/// follow it), every Archive's answer, and the outcome.
fn trace_text(persistent_url: &str, trace: &Trace) -> String {
    let mut out = format!("persistent URL {persistent_url}\n");
    for (n, round) in trace.rounds.iter().enumerate() {
        out.push_str(&format!(
            "round {}: parsedibiurl.ibi={} parsedibiurl.verblist={}\n",
            n + 1,
            round.ibi,
            if round.verblist.is_empty() {
                "-"
            } else {
                &round.verblist
            }
        ));
        if let Some(why) = &round.why {
            out.push_str(&format!("  asked because {why}\n"));
        }
        if round.remembered || round.home {
            let alone = if round.home {
                "the home of the IBI"
            } else {
                "the remembered Archive"
            };
            out.push_str(&format!("  asked alone: {alone}\n"));
        }
        for a in &round.asked {
            let may_hold = match a.may_hold {
                Some(MayHold::Remembered) => " [remembered: may hold it]",
                Some(MayHold::Home) => " [its home: may hold it]",
                Some(MayHold::SharedHome) => " [one of its homes: may hold it]",
                None => "",
            };
            out.push_str(&format!(
                "  {} ({}){may_hold}: {}{} in {:.1} ms\n",
                a.address,
                a.archive,
                a.result,
                a.detail
                    .as_deref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default(),
                a.ms
            ));
            for (name, value) in &a.pairs {
                out.push_str(&format!("    {name} {value}\n"));
            }
        }
    }
    out.push_str(&match &trace.outcome {
        Outcome::Found(f) => format!(
            "found {} at {} in {:.1} ms\n",
            trace.location.as_deref().unwrap_or(&f.url),
            f.address,
            trace.ms
        ),
        other => format!(
            "{} in {:.1} ms\n",
            serde_json::to_string(other).unwrap_or_default(),
            trace.ms
        ),
    });
    out
}

/// `--acknowledge`: the acknowledgment of the URL found sent to its Archive, and what
/// came of it.
async fn acknowledgment(engine: &Engine, trace: &Trace, reader: &Reader, found: bool) -> String {
    match engine.acknowledgment(trace, reader) {
        Some(ack) => {
            let (fetched, took) = engine
                .client
                .get_for(client::Purpose::Acknowledgment, &ack, engine.timeout)
                .await;
            match fetched {
                client::Fetched::Body(b) => format!(
                    "acknowledged in {:.1} ms: {}\n",
                    took.as_secs_f64() * 1e3,
                    b.trim_end()
                ),
                other => format!("acknowledgment failed: {other:?}\n"),
            }
        }
        None if found => "no acknowledgment: the Archive gave no urlkey\n".into(),
        None => String::new(),
    }
}
