//! `ibi-archive serve`: the routes of an Archive (src/routes.rs) over an embedded HTTP
//! server, for trying an Archive and for tests, with no web server installed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ::ibi::Ibi;
use ibi_archive::acklog;
use ibi_archive::admin::auto_inclusion::{self, Switch};
use ibi_archive::config::{Acknowledgments, Config};
use ibi_archive::http::{self, Reply};
use ibi_archive::httpd::{self, Body, Limits, Response};
use ibi_archive::routes::{self, Target};
use ibi_archive::serve_metrics;
use lexopt::ValueExt;

use super::{root_flag, CliError, CliResult};

pub fn run(parser: &mut lexopt::Parser) -> CliResult {
    use lexopt::Arg::{Long, Short};
    let mut root: Option<PathBuf> = None;
    let mut listen = std::net::SocketAddr::from(([127, 0, 0, 1], 8080));
    let mut limits = Limits::default();
    let mut max_connections: Option<usize> = None;
    let mut automatic_inclusion = true;
    let secs = |parser: &mut lexopt::Parser, flag: &str| -> Result<Duration, CliError> {
        let v: f64 = parser.value()?.parse().map_err(|e| {
            CliError::usage(format!("serve: {flag}: {e} (give a number of seconds)"))
        })?;
        if !(v > 0.0 && v <= 86_400.0) {
            return Err(CliError::usage(format!(
                "serve: {flag} must be more than 0 and at most 86400 seconds"
            )));
        }
        Ok(Duration::from_secs_f64(v))
    };
    let count = |parser: &mut lexopt::Parser, flag: &str| -> Result<usize, CliError> {
        let v: usize = parser
            .value()?
            .parse()
            .map_err(|e| CliError::usage(format!("serve: {flag}: {e}")))?;
        if v == 0 {
            return Err(CliError::usage(format!("serve: {flag} must be at least 1")));
        }
        Ok(v)
    };
    while let Some(arg) = parser.next()? {
        match arg {
            Long("root") => root = Some(parser.value()?.into()),
            Long("listen") => listen = listen_address(&parser.value()?.to_string_lossy())?,
            Long("max-connections") => max_connections = Some(count(parser, "--max-connections")?),
            Long("max-per-client") => limits.max_per_client = count(parser, "--max-per-client")?,
            Long("head-timeout") => limits.head_timeout = secs(parser, "--head-timeout")?,
            Long("idle-timeout") => limits.idle_timeout = secs(parser, "--idle-timeout")?,
            Long("write-timeout") => limits.write_timeout = secs(parser, "--write-timeout")?,
            Long("no-inclusion") => automatic_inclusion = false,
            Short('h') | Long("help") => return super::print_help("serve"),
            other => return Err(CliError::unexpected(&super::PROGRAM, "serve", other)),
        }
    }
    let root = root_flag(root);
    let root = std::fs::canonicalize(&root)
        .map_err(|e| CliError::failed(format!("{}: {e}", root.display())))?;
    let config = Config::load(&root).map_err(|e| CliError::failed(e.to_string()))?;
    limits.max_connections = max_connections.unwrap_or_else(connections_for_descriptors);
    let listener = std::net::TcpListener::bind(listen)
        .map_err(|e| CliError::failed(format!("cannot listen on {listen}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_or(listen.to_string(), |a| a.to_string());

    print_examples(&root, &config, &bound);
    // SIGINT, SIGTERM and SIGHUP (ctrlc's "termination"): the accept loop ends, and the
    // exclusions begin at once, while the answers under way end.
    let stop = Arc::new(AtomicBool::new(false));
    let switch = Switch::new();
    {
        let (stop, switch) = (stop.clone(), switch.clone());
        ctrlc::set_handler(move || {
            stop.store(true, Ordering::SeqCst);
            switch.turn_off();
        })
        .map_err(|e| CliError::failed(format!("cannot catch SIGINT and SIGTERM: {e}")))?;
    }
    // A build of the OAI-PMH provider's index runs on a thread of its own: the request
    // that begins it, and those meanwhile, are answered at once.
    ibi_archive::oai_build::detach_builds_with(|work| {
        std::thread::Builder::new()
            .name("oai-records".into())
            .spawn(work)
            .map(|_| ())
    });
    let handler_root = root.clone();
    // archive.toml, col/'s handle and the items' judgements read again only when they
    // change, not for every request.
    let kept = Arc::new(routes::Kept::default());
    let handler_kept = kept.clone();
    // Requests counted by kind and outcome, for /metrics.
    let metrics = Arc::new(serve_metrics::Metrics::default());
    let handler = Arc::new(move |req: &httpd::Request<'_>| {
        let (path, query) = req.target.split_once('?').unwrap_or((req.target, ""));
        if path == "/metrics" && req.client.is_loopback() {
            return metrics_answer(&metrics);
        }
        let began = std::time::Instant::now();
        let response = answer(&handler_root, &handler_kept, req);
        metrics.request(
            serve_metrics::kind_of(path, query),
            response.status,
            began.elapsed(),
        );
        response
    });
    let log: Arc<httpd::Log> = Arc::new(|line: &str| write_lines([line]));
    let syncer = start_log_syncer(&root, &config, kept, log.clone())
        .map_err(|e| CliError::failed(format!("cannot start the access log's sync thread: {e}")))?;
    // The lines of the answers an event loop made in one go, in one write.
    let log_lines: Arc<httpd::LogLines> =
        Arc::new(|lines: &[String]| write_lines(lines.iter().map(String::as_str)));
    // The listener is bound: a resolver's confirmation request waits in its backlog until
    // the loop below, which starts at once, accepts it.
    let inclusion = automatic_inclusion
        .then(|| auto_inclusion::start(&config, switch.clone(), log.clone()))
        .flatten();
    if let Some(inclusion) = &inclusion {
        let _ = writeln!(
            std::io::stdout(),
            "automatic inclusion in {} (excluded again when serve stops; --no-inclusion: none)",
            inclusion.resolvers().join(", ")
        );
    }
    // A file of an item is answered on the event loop: its answer needs the local file
    // system alone. Everything else (the service, whose acknowledgments wait for the
    // disk, pages, OAI-PMH) on its connection's thread.
    let quick: Arc<httpd::Quick> = Arc::new(|_method: &str, target: &str| {
        let path = target.split_once('?').map_or(target, |(p, _)| p);
        ibi_archive::layout::split_doc_url_path(path.as_bytes()).is_some()
    });
    let served = httpd::serve(listener, limits, &stop, handler, quick, log, log_lines);
    if let Some(inclusion) = inclusion {
        inclusion.finish();
    }
    syncer.finish();
    served.map_err(|e| CliError::failed(format!("serve: {e}")))?;
    eprintln!("ibi-archive: stopped");
    Ok(())
}

/// The thread that syncs the access log when no acknowledgment comes to: an acknowledgment
/// syncs the log only when it finds the last sync `[acknowledgments] sync_interval` old,
/// so the lines of the last ones before a pause would wait for the kernel's writeback.
/// This wakes when a sync may next be due (see [`acklog::sync_due`]), and syncs once more
/// when `serve` stops.
struct LogSyncer {
    /// Dropped to stop the thread (which wakes at once).
    stop: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

/// `lines`, each made safe for a log, written to stderr in one write (stderr is
/// unbuffered: a `writeln!` writes a line and its newline apart).
fn write_lines<'a>(lines: impl IntoIterator<Item = &'a str>) {
    let mut text = String::new();
    for line in lines {
        text.push_str(&::ibi::logline::clean(line));
        text.push('\n');
    }
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

fn start_log_syncer(
    root: &Path,
    config: &Config,
    kept: Arc<routes::Kept>,
    log: Arc<httpd::Log>,
) -> std::io::Result<LogSyncer> {
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let root = root.to_path_buf();
    let mut interval = config.acknowledgments.sync_interval;
    let thread = std::thread::Builder::new()
        .name("acklog-sync".into())
        .spawn(move || {
            let var = root.join("var");
            let cannot = |e: std::io::Error| {
                format!(
                    "ibi-archive: cannot sync {}: {e}",
                    acklog::log_path(&var).display()
                )
            };
            let mut failed = false;
            // The first look is one interval after the start: what an earlier run left
            // unsynced, the first acknowledgment syncs (the last sync is older than the
            // interval), and until then nothing new is written.
            let mut wait = interval;
            loop {
                // A zero interval: every acknowledgment syncs its own line; look again
                // after the default interval all the same, in case archive.toml changes.
                let wait_for = if wait.is_zero() {
                    Acknowledgments::DEFAULT_SYNC_INTERVAL
                } else {
                    wait
                };
                match stopped.recv_timeout(wait_for) {
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                    _ => break,
                }
                // archive.toml may have changed: as the answers have it (read again only
                // when it did).
                if let Ok(c) = kept.config.get(&root, ibi::time::SystemClock::now()) {
                    interval = c.acknowledgments.sync_interval;
                }
                wait = match acklog::sync_due(&var, acklog::Durability::by_wall_clock(interval)) {
                    Ok(wait) => {
                        failed = false;
                        wait
                    }
                    Err(e) => {
                        // Said once until it works again, not at every tick.
                        if !failed {
                            log(&cannot(e));
                        }
                        failed = true;
                        interval
                    }
                };
            }
            // Stopping: whatever is not yet synced, at once.
            if let Err(e) =
                acklog::sync_due(&var, acklog::Durability::by_wall_clock(Duration::ZERO))
            {
                log(&cannot(e));
            }
        })?;
    Ok(LogSyncer { stop, thread })
}

impl LogSyncer {
    /// Syncs what is left and ends the thread.
    fn finish(self) {
        drop(self.stop);
        let _ = self.thread.join();
    }
}

/// `--listen`: `ADDRESS:PORT`, or a port alone on 127.0.0.1.
fn listen_address(v: &str) -> Result<std::net::SocketAddr, CliError> {
    cmdline::listen_address(v).map_err(|e| CliError::usage(format!("serve: {e}")))
}

/// As many connections as the descriptors allow (the soft limit raised to the hard one
/// first): each holds its socket and, while answering, the directories of the items it
/// looks up (at most `MAX_ITEMS_PER_ANSWER`) and a few files.
fn connections_for_descriptors() -> usize {
    let fds = ::ibi::process::raise_open_files(65_536).unwrap_or(1024) as usize;
    let per_connection = ibi_archive::archive::MAX_ITEMS_PER_ANSWER + 8;
    (fds.saturating_sub(64) / per_connection).clamp(4, Limits::default().max_connections)
}

/// Tells what to try: the service's address and a few requests that answer.
fn print_examples(root: &Path, config: &Config, bound: &str) {
    let base = format!("http://{bound}");
    let service = format!("{base}/{}", config.service);
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "ibi-archive: serving the Archive at {} on {base}/ (Ctrl-C stops)",
        root.display()
    );
    if config.baseurl != base && config.baseurl.replace("//localhost:", "//127.0.0.1:") != base {
        let _ = writeln!(
            out,
            "note: archive.toml says baseurl {}; the URLs in answers point there, not here",
            config.baseurl
        );
    }
    let _ = writeln!(out, "try:");
    let _ = writeln!(
        out,
        "  curl '{service}?servicesubject=inclusionConfirmationRequest'"
    );
    for ibi in some_items(root, 2) {
        let _ = writeln!(
            out,
            "  curl '{service}?servicesubject=urlRequest&clientinformation.ipaddress=127.0.0.1&parsedibiurl.ibi={ibi}'"
        );
    }
    let _ = out.flush();
}

/// Up to `n` items of the Archive, by IBIp when they have one (a bounded look, not a walk).
fn some_items(root: &Path, n: usize) -> Vec<String> {
    let Ok(col) = ibi_archive::layout::Col::open(root) else {
        return Vec::new();
    };
    let store = ibi_archive::store::Store::new(root);
    let mut found = Vec::new();
    let mut looked = 0;
    'all: for sub in col.dir_names("") {
        for wp in col.dir_names(&sub) {
            for year in col.dir_names(&format!("{sub}/{wp}")) {
                for day in col.dir_names(&format!("{sub}/{wp}/{year}")) {
                    looked += 1;
                    if found.len() >= n || looked > 50 {
                        break 'all;
                    }
                    let Ok(rep) = ::ibi::Rep::parse(&format!("{sub}/{wp}/{year}/{day}")) else {
                        continue;
                    };
                    let Some(item) = store.find(&Ibi::Rep(rep.clone())).item else {
                        continue;
                    };
                    let usable = item.state != ibi_archive::item::State::Deleted
                        && item.url.is_none()
                        && !item.restricted;
                    if usable {
                        found.push(item.ibip.map_or(rep.to_string(), |p| p.to_string()));
                    }
                }
            }
        }
    }
    found
}

/// `/metrics`, for a client of this machine (elsewhere the path is the Archive's, where
/// no route leads).
fn metrics_answer(metrics: &serve_metrics::Metrics) -> Response {
    Response {
        status: 200,
        headers: vec![(
            "Content-Type".into(),
            serve_metrics::CONTENT_TYPE.to_string(),
        )],
        body: Body::Bytes(
            metrics
                .render(acklog::counted_by_this_process())
                .into_bytes(),
        ),
        log: Vec::new(),
    }
}

/// The answer to one request: the same dispatch as under a web server (`routes`).
fn answer(root: &Path, kept: &routes::Kept, req: &httpd::Request<'_>) -> Response {
    let (path, query) = req.target.split_once('?').unwrap_or((req.target, ""));
    let mut headers = http::Headers::default();
    for h in req.headers {
        headers.add(h.name, String::from_utf8_lossy(h.value).trim());
    }
    let routed = http::Request {
        form: req.form,
        method: req.method,
        query: query.as_bytes(),
        client: Some(req.client),
        root: Some(root),
        headers: &headers,
    };
    let reply = routes::answer_kept(&routed, &Target::Path(path), req.now, kept);
    match reply {
        Reply::Page(a) => {
            let mut headers = vec![("Content-Type".into(), a.content_type.to_string())];
            headers.extend(a.headers.into_iter().map(|(n, v)| (n.into(), v)));
            Response {
                status: a.status,
                headers,
                body: Body::Bytes(a.body),
                log: a.log,
            }
        }
        Reply::File(f) => Response {
            status: f.status(),
            headers: f
                .headers()
                .into_iter()
                .filter(|(name, _)| *name != "Content-Length")
                .map(|(n, v)| (n.into(), v))
                .collect(),
            log: Vec::new(),
            body: match f.body() {
                Some((start, len)) => Body::File(f.file, start, len),
                None => Body::Bytes(Vec::new()),
            },
        },
    }
}
