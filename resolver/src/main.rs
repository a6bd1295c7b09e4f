//! The `ibi-resolver` command: the server and the operator's tools.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use ibi::persistent::PersistentUrl;
use ibi::Ibi;
use ibi_resolver::config::{self, Config};
use ibi_resolver::registry::{self, Registry};
use ibi_resolver::resolve::{Engine, Outcome, Reader};
use ibi_resolver::{client, lang, server};
use lexopt::prelude::*;

const USAGE: &str = "\
usage: ibi-resolver COMMAND [--config FILE] [ARGS]

Commands (each takes --help; --config defaults to ./resolver.toml):
  serve                                 run the resolver (HTTP) until SIGINT or SIGTERM
  register SERVICEIBI --email E [--key-file F]
                                        register an Archive; its key is read from F or
                                        from the first line of standard input
  unregister SERVICEIBI                 forget an Archive
  archives [--csv]                      every registered Archive and its state
  resolve PERSISTENT-URL [--lang L] [--ip IP] [--acknowledge]
                                        resolve once and print each step
  memory [IBI]                          the remembered locations (of IBI only)
  forget IBI                            forget where IBI was found (a running server
                                        drops it within seconds)

Exit status: 0 success, 1 failure (or, for resolve, not found), 2 usage error.
";

enum Failure {
    Usage(String),
    Failed(String),
    NotFound,
}

impl From<lexopt::Error> for Failure {
    fn from(e: lexopt::Error) -> Failure {
        Failure::Usage(e.to_string())
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(m)) => {
            ibi_resolver::log::say(&m);
            eprint!("{USAGE}");
            ExitCode::from(2)
        }
        Err(Failure::Failed(m)) => {
            ibi_resolver::log::say(&m);
            ExitCode::from(1)
        }
        Err(Failure::NotFound) => ExitCode::from(1),
    }
}

fn run() -> Result<(), Failure> {
    let mut parser = lexopt::Parser::from_env();
    let mut config_path = PathBuf::from(config::DEFAULT_PATH);
    let mut command: Option<String> = None;
    let mut positional: Vec<String> = Vec::new();
    let mut email = None;
    let mut key_file: Option<PathBuf> = None;
    let mut csv = false;
    let mut lang_header: Option<String> = None;
    let mut ip: Option<String> = None;
    let mut acknowledge = false;
    let mut help = false;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => help = true,
            Long("version") => {
                println!("ibi-resolver {}", env!("CARGO_PKG_VERSION"));
                return Ok(());
            }
            Long("config") => config_path = parser.value()?.into(),
            Long("email") => email = Some(parser.value()?.string()?),
            Long("key-file") => key_file = Some(parser.value()?.into()),
            Long("csv") => csv = true,
            Long("lang") => lang_header = Some(parser.value()?.string()?),
            Long("ip") => ip = Some(parser.value()?.string()?),
            Long("acknowledge") => acknowledge = true,
            Value(v) if command.is_none() => command = Some(v.string()?),
            Value(v) => positional.push(v.string()?),
            other => return Err(Failure::Usage(other.unexpected().to_string())),
        }
    }
    if help || command.as_deref() == Some("help") {
        print!("{USAGE}");
        return Ok(());
    }
    let Some(command) = command else {
        return Err(Failure::Usage("no command given".into()));
    };
    let one = |what: &str| -> Result<String, Failure> {
        match positional.as_slice() {
            [x] => Ok(x.clone()),
            [] => Err(Failure::Usage(format!("{command}: {what} is missing"))),
            _ => Err(Failure::Usage(format!("{command}: one {what} only"))),
        }
    };
    match command.as_str() {
        "serve" => {
            if !positional.is_empty() {
                return Err(Failure::Usage("serve takes no arguments".into()));
            }
            let config = load(&config_path)?;
            ibi_resolver::process::tune_allocator();
            let runtime = tokio::runtime::Runtime::new()
                .map_err(|e| Failure::Failed(format!("cannot start: {e}")))?;
            runtime
                .block_on(server::serve(config))
                .map_err(Failure::Failed)
        }
        "register" => {
            let ibi = parse_ibi(&one("SERVICEIBI")?)?;
            let email =
                email.ok_or_else(|| Failure::Usage("register: --email E is required".into()))?;
            if !email.contains('@')
                || email.len() > 254
                || email.chars().any(|c| c.is_whitespace() || c.is_control())
            {
                return Err(Failure::Usage(format!(
                    "register: {email:?} is not an e-mail address"
                )));
            }
            let key = read_key(key_file.as_deref())?;
            let config = load(&config_path)?;
            let mut r = open(&config)?;
            r.register(&ibi, &email, &key)
                .map_err(|e| Failure::Failed(e.to_string()))?;
            println!("registered {}", ibi.key());
            Ok(())
        }
        "unregister" => {
            let ibi = parse_ibi(&one("SERVICEIBI")?)?;
            let config = load(&config_path)?;
            let mut r = open(&config)?;
            if r.unregister(&ibi)
                .map_err(|e| Failure::Failed(e.to_string()))?
            {
                println!("unregistered {}", ibi.key());
                Ok(())
            } else {
                Err(Failure::Failed(format!("{} is not registered", ibi.key())))
            }
        }
        "archives" => {
            if !positional.is_empty() {
                return Err(Failure::Usage("archives takes no arguments".into()));
            }
            let config = load(&config_path)?;
            let r = open(&config)?;
            let list = r.list().map_err(|e| Failure::Failed(e.to_string()))?;
            print_archives(&list, csv);
            Ok(())
        }
        "memory" => {
            let ibi = match positional.as_slice() {
                [] => None,
                [one] => Some(parse_ibi(one)?.key()),
                _ => return Err(Failure::Usage("memory: one IBI at most".into())),
            };
            let config = load(&config_path)?;
            let rows = open(&config)?
                .locations(ibi.as_deref())
                .map_err(|e| Failure::Failed(e.to_string()))?;
            if let (Some(ibi), true) = (&ibi, rows.is_empty()) {
                return Err(Failure::Failed(format!("{ibi} is not remembered")));
            }
            print_locations(&rows, &config);
            Ok(())
        }
        "forget" => {
            let ibi = parse_ibi(&one("IBI")?)?.key();
            let config = load(&config_path)?;
            if open(&config)?
                .forget_location(&ibi)
                .map_err(|e| Failure::Failed(e.to_string()))?
            {
                println!("forgot {ibi}");
                Ok(())
            } else {
                Err(Failure::Failed(format!("{ibi} is not remembered")))
            }
        }
        "resolve" => {
            let target = one("PERSISTENT-URL")?;
            let config = load(&config_path)?;
            resolve(
                &config,
                &target,
                lang_header.as_deref(),
                ip.as_deref(),
                acknowledge,
            )
        }
        other => Err(Failure::Usage(format!("unknown command {other:?}"))),
    }
}

fn load(path: &std::path::Path) -> Result<Config, Failure> {
    Config::load(path).map_err(Failure::Failed)
}

fn open(config: &Config) -> Result<Registry, Failure> {
    Registry::open(&config.database).map_err(|e| Failure::Failed(e.to_string()))
}

fn parse_ibi(s: &str) -> Result<Ibi, Failure> {
    Ibi::parse(s).map_err(|e| Failure::Usage(e.to_string()))
}

/// The registration key, from a file or the first line of standard input (never from
/// the command line, where other users could read it).
fn read_key(file: Option<&std::path::Path>) -> Result<String, Failure> {
    let mut text = String::new();
    match file {
        Some(f) => {
            text = std::fs::read_to_string(f)
                .map_err(|e| Failure::Failed(format!("{}: {e}", f.display())))?;
        }
        None => {
            std::io::stdin()
                .take(4096)
                .read_to_string(&mut text)
                .map_err(|e| {
                    Failure::Failed(format!("cannot read the key from standard input: {e}"))
                })?;
        }
    }
    let key = text.lines().next().unwrap_or("").trim().to_string();
    if !registry::is_registration_key(&key) {
        return Err(Failure::Usage(
            "the registration key must be ten or more digits, optionally '-' and ten or more again (Table 7.1)".into(),
        ));
    }
    Ok(key)
}

fn print_archives(list: &[registry::ArchiveRecord], csv: bool) {
    let dash = |o: &Option<String>| o.clone().unwrap_or_else(|| "-".into());
    if csv {
        println!(
            "serviceibi,address,included,confirmation,lastsuccess,failures,dormant,latencyms,changed,email,conflicts"
        );
        for a in list {
            let field = |s: &str| {
                if s.contains([',', '"', '\n']) {
                    format!("\"{}\"", s.replace('"', "\"\""))
                } else {
                    s.to_string()
                }
            };
            println!(
                "{},{},{},{},{},{},{},{},{},{},{}",
                field(&a.serviceibi),
                field(&dash(&a.address)),
                if a.included { "yes" } else { "no" },
                dash(&a.confirmation),
                dash(&a.lastsuccess),
                a.failures,
                if a.dormant { "yes" } else { "no" },
                a.latencyms.map_or("-".into(), |l| format!("{l:.3}")),
                dash(&a.changed),
                field(&a.email),
                a.conflicts
            );
        }
        return;
    }
    if list.is_empty() {
        println!("no Archive is registered");
        return;
    }
    for a in list {
        println!(
            "{}  {}  {}  confirmation {}  last seen {}  failures {}{}{}",
            a.serviceibi,
            dash(&a.address),
            match (a.included, a.dormant) {
                (false, _) => "not included",
                (true, false) => "included",
                (true, true) => "included, dormant",
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
            }
        );
    }
}

/// `memory`: one line per remembered IBI, the most recently used first.
fn print_locations(rows: &[registry::Location], config: &Config) {
    let now = ibi_resolver::memory::now_ms();
    let expiry = i64::try_from(config.memory_expiry.as_millis()).unwrap_or(i64::MAX);
    let time = |ms: i64| ibi::time::iso8601(ms.div_euclid(1000));
    for row in rows {
        let verified = if row.verified_ms == 0 {
            "never".to_string()
        } else {
            time(row.verified_ms)
        };
        let expired = if now - row.verified_ms >= expiry {
            " (expired)"
        } else {
            ""
        };
        println!(
            "{}  {}  used {}  verified {verified}{expired}",
            row.ibi,
            row.archive,
            time(row.used_ms)
        );
    }
}

/// `resolve`: one resolution from the shell, every step printed.
fn resolve(
    config: &Config,
    target: &str,
    lang_header: Option<&str>,
    ip: Option<&str>,
    acknowledge: bool,
) -> Result<(), Failure> {
    // A whole URL, a path, or an IBI with what follows it.
    let rest = match target.split_once("://") {
        Some((_, after)) => after.find('/').map_or("/", |i| &after[i..]).to_string(),
        None if target.starts_with('/') => target.to_string(),
        None => format!("/{target}"),
    };
    let (path, query) = match rest.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (rest.as_str(), None),
    };
    let url = PersistentUrl::parse(path, query).map_err(|e| Failure::Usage(e.to_string()))?;
    let ips = match ip {
        Some(list) => list
            .split([' ', ','])
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.parse()
                    .map_err(|_| Failure::Usage(format!("--ip: {s:?} is not an IP address")))
            })
            .collect::<Result<Vec<_>, _>>()?,
        None => vec!["127.0.0.1".parse().expect("literal")],
    };
    let reader = Reader {
        ips,
        languages: lang::preferences(lang_header),
    };
    let archives = open(config)?
        .included()
        .map_err(|e| Failure::Failed(e.to_string()))?;
    let engine = Engine::new(config);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Failed(format!("cannot start: {e}")))?;
    runtime.block_on(async {
        let trace = engine
            .resolve(
                std::sync::Arc::new(archives.clone()),
                &url,
                &reader,
                false,
                &ibi_resolver::resolve::Unbounded,
            )
            .await;
        println!("persistent URL {}", trace.persistent_url);
        for (n, round) in trace.rounds.iter().enumerate() {
            println!(
                "round {}: parsedibiurl.ibi={} parsedibiurl.verblist={}",
                n + 1,
                round.ibi,
                if round.verblist.is_empty() {
                    "-"
                } else {
                    &round.verblist
                }
            );
            if let Some(why) = &round.why {
                println!("  asked because {why}");
            }
            for a in &round.asked {
                println!(
                    "  {} ({}): {}{} in {:.1} ms",
                    a.address,
                    a.archive,
                    a.result,
                    a.detail
                        .as_deref()
                        .map(|d| format!(": {d}"))
                        .unwrap_or_default(),
                    a.ms
                );
                for (name, value) in &a.pairs {
                    println!("    {name} {value}");
                }
            }
        }
        let found = matches!(trace.outcome, Outcome::Found(_));
        match &trace.outcome {
            Outcome::Found(f) => println!(
                "found {} at {} in {:.1} ms",
                trace.location.as_deref().unwrap_or(&f.url),
                f.address,
                trace.ms
            ),
            other => println!(
                "{} in {:.1} ms",
                serde_json::to_string(other).unwrap_or_default(),
                trace.ms
            ),
        }
        if acknowledge {
            match engine.acknowledgment(&trace, &reader) {
                Some(ack) => {
                    let (fetched, took) = engine.client.get(&ack, engine.timeout).await;
                    match fetched {
                        client::Fetched::Body(b) => println!(
                            "acknowledged in {:.1} ms: {}",
                            took.as_secs_f64() * 1e3,
                            b.trim_end()
                        ),
                        other => println!("acknowledgment failed: {other:?}"),
                    }
                }
                None if found => println!("no acknowledgment: the Archive gave no urlkey"),
                None => {}
            }
        }
        if found {
            Ok(())
        } else {
            Err(Failure::NotFound)
        }
    })
}
