//! `ibi-resolver serve`: the HTTP server. hyper serves each connection (head read within
//! [`HEAD_TIMEOUT`], at most [`MAX_HEAD`] bytes), axum routes: the resolver service at
//! `/<serviceibi>`, resolution on every other path. One log line per request on stderr,
//! control bytes escaped, the registration key never in it — also for a head hyper
//! refuses (400, 431) or that does not arrive within [`HEAD_TIMEOUT`].

use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use ibi_archive::ibi::Ibi;
use ibi_archive::logline;
use ibi_archive::markup::escape_html;
use ibi_archive::persistent::PersistentUrl;
use ibi_archive::query::Query;
use tokio::sync::Semaphore;
use tower::ServiceExt;

use crate::acknowledge::Acknowledger;
use crate::client::Confirmation;
use crate::config::Config;
use crate::lang::{self, PageLang};
use crate::memory::LocationMemory;
use crate::pages;
use crate::registry::{self, Included, Registry, RegistryError};
use crate::resolve::{Engine, Outcome, Reader};
use crate::service::{self, Slowdown};

/// The request head is read within this time.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest request head read, in bytes.
pub const MAX_HEAD: usize = 16 * 1024;
/// The longest path and query read, in bytes.
pub const MAX_TARGET: usize = 8 * 1024;
/// A whole resolution ends within this time.
pub const MAX_RESOLUTION: Duration = Duration::from_secs(60);
/// How often the list of included Archives is read again from the registry (it may be
/// changed by `register`/`unregister` from the shell).
pub const REFRESH: Duration = Duration::from_secs(2);
/// At a stop, how long requests under way get to end.
pub const STOP_GRACE: Duration = Duration::from_secs(5);
/// The longest request shown in a log line (escaped), so that its status and note fit.
pub const MAX_SHOWN: usize = 1024;

/// Everything the handlers share.
pub struct AppState {
    pub config: Config,
    pub engine: Engine,
    registry: Arc<Mutex<Registry>>,
    archives: RwLock<Arc<Vec<Included>>>,
    slowdown: Mutex<Slowdown>,
    key_checks: Semaphore,
    acknowledgments: Acknowledger,
    /// Resolutions under way; when none is left, `503`.
    resolutions: Semaphore,
}

impl AppState {
    pub fn new(config: Config) -> Result<AppState, RegistryError> {
        let config_resolutions = config.limits.resolutions;
        let registry = Registry::open(&config.database)?;
        let archives = registry.included()?;
        let engine = Engine {
            memory: Arc::new(LocationMemory::open(
                &config.database,
                config.memory_entries,
            )?),
            ..Engine::new(&config)
        };
        engine.client.fit(
            &archives
                .iter()
                .map(|a| a.address.as_str())
                .collect::<Vec<_>>(),
        );
        let acknowledgments = Acknowledger::new(
            engine.client.clone(),
            engine.timeout,
            engine.metrics.clone(),
        );
        Ok(AppState {
            config,
            engine,
            registry: Arc::new(Mutex::new(registry)),
            archives: RwLock::new(Arc::new(archives)),
            slowdown: Mutex::new(Slowdown::new()),
            // argon2id works in 19 MiB per check.
            key_checks: Semaphore::new(2),
            acknowledgments,
            resolutions: Semaphore::new(config_resolutions),
        })
    }

    /// The included Archives now.
    pub fn archives(&self) -> Arc<Vec<Included>> {
        self.archives.read().map(|a| a.clone()).unwrap_or_default()
    }

    /// Reads the included Archives from the registry again.
    pub async fn refresh(&self) -> Result<(), RegistryError> {
        let list = self.with_registry(|r| r.included()).await?;
        let names: Vec<&str> = list.iter().map(|a| a.serviceibi.as_str()).collect();
        self.engine.health.retain(&names);
        self.engine
            .client
            .fit(&list.iter().map(|a| a.address.as_str()).collect::<Vec<_>>());
        self.acknowledgments.retain(&names);
        if let Ok(mut a) = self.archives.write() {
            *a = Arc::new(list);
        }
        Ok(())
    }

    /// Writes to the registry what resolutions learnt of the Archives' health.
    pub async fn record_health(&self) -> Result<(), RegistryError> {
        let changed = Arc::new(self.engine.health.take_changed());
        if changed.is_empty() {
            return Ok(());
        }
        let writing = changed.clone();
        let written = self.with_registry(move |r| r.record_health(&writing)).await;
        if written.is_err() {
            self.engine.health.changed_again(&changed);
        }
        written
    }

    /// Asks every dormant Archive whether it answers again (inclusionConfirmationRequest).
    pub async fn probe_dormant(&self) {
        let archives = self.archives();
        let mut probes = tokio::task::JoinSet::new();
        for a in archives.iter() {
            let health = self.engine.health.of(&a.serviceibi, || a.recorded.clone());
            if !health.is_dormant() {
                continue;
            }
            let client = self.engine.client.clone();
            let timeout = self.engine.timeout;
            let (address, archive) = (a.address.clone(), a.serviceibi.clone());
            probes.spawn(async move {
                let start = Instant::now();
                if client.confirm(&address, &archive, timeout).await == Confirmation::Yes
                    && health.success(start.elapsed()) == crate::health::Change::Woke
                {
                    say(&format!("{archive} answers again: asked again"));
                }
            });
        }
        while probes.join_next().await.is_some() {}
    }

    /// Runs `work` on the registry off the async threads (SQLite blocks).
    async fn with_registry<T, F>(&self, work: F) -> Result<T, RegistryError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Registry) -> Result<T, RegistryError> + Send + 'static,
    {
        let registry = self.registry.clone();
        tokio::task::spawn_blocking(move || {
            let mut r = registry
                .lock()
                .map_err(|_| RegistryError("registry lock poisoned".into()))?;
            work(&mut r)
        })
        .await
        .map_err(|e| RegistryError(format!("registry task: {e}")))?
    }

    /// Runs one change of the registry (a transaction) off the async threads, then
    /// reads the included Archives again.
    pub async fn write<F>(&self, change: F) -> Result<(), RegistryError>
    where
        F: FnOnce(&mut Registry) -> Result<(), RegistryError> + Send + 'static,
    {
        self.with_registry(change).await?;
        self.refresh().await
    }

    /// Whether `key` is the registered key of `serviceibi`; a refusal is slowed down.
    pub async fn check_key(&self, serviceibi: &Ibi, key: &str, client: IpAddr) -> bool {
        let Ok(_permit) = self.key_checks.acquire().await else {
            return false;
        };
        let ibi = serviceibi.clone();
        let key = key.to_string();
        // An unreadable registry verifies against no hash: a refusal after the same work.
        let ok = self
            .with_registry(move |r| {
                let hash = r.key_hash(&ibi).ok().flatten();
                Ok(registry::verify_key(&key, hash.as_deref()))
            })
            .await
            .unwrap_or(false);
        let wait = match self.slowdown.lock() {
            Ok(mut s) if ok => {
                s.succeeded(client);
                Duration::ZERO
            }
            Ok(mut s) => s.failed(client, Instant::now()),
            Err(_) => Duration::from_secs(1),
        };
        if !ok {
            tokio::time::sleep(wait).await;
        }
        ok
    }
}

/// Runs the server until SIGINT or SIGTERM.
pub async fn serve(config: Config) -> Result<(), String> {
    let listen = config.listen;
    let state = Arc::new(AppState::new(config).map_err(|e| e.to_string())?);
    // Half the open files for readers' connections, half for the Archives' and the
    // registry's: a limit too low for [limits] connections lowers it, saying so, rather
    // than letting requests to Archives fail for want of descriptors.
    let open_files = crate::process::raise_open_files();
    let fitting = usize::try_from(open_files / 2).unwrap_or(usize::MAX);
    let max_connections = if state.config.limits.connections > fitting {
        say(&format!(
            "the open-file limit is {open_files}: at most {fitting} client connections ([limits] connections is {})",
            state.config.limits.connections
        ));
        fitting
    } else {
        state.config.limits.connections
    };
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    say(&format!(
        "listening on http://{local} ({} Archives included)",
        state.archives().len()
    ));
    let refresher = state.clone();
    tokio::spawn(async move {
        // Told once when writing starts failing (a read-only registry), and once when it
        // works again, not every REFRESH.
        let mut failing = false;
        loop {
            tokio::time::sleep(REFRESH).await;
            match refresher.record_health().await {
                Err(e) if !failing => {
                    failing = true;
                    say(&format!(
                        "cannot write the Archives' health (tried again every {REFRESH:?}): {e}"
                    ))
                }
                Ok(()) if failing => {
                    failing = false;
                    say("the Archives' health is written again")
                }
                _ => {}
            }
            crate::process::give_back_memory();
            if let Err(e) = refresher.refresh().await {
                say(&format!("cannot read the registry: {e}"));
            }
        }
    });
    let prober = state.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(prober.config.archives.probe).await;
            prober.probe_dormant().await;
        }
    });
    let router = Router::new().fallback(handle).with_state(state.clone());
    let connections = Arc::new(Semaphore::new(max_connections));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown_signal());
    let mut last_complaint: Option<Instant> = None;
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // EMFILE and friends: wait a little instead of spinning.
                    complain(&mut last_complaint, &format!("accept: {e}"));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = connections.clone().try_acquire_owned() else {
            complain(
                &mut last_complaint,
                &format!("{max_connections} connections open; closing new ones"),
            );
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let opened = Instant::now();
        let pending = Arc::new(AtomicBool::new(false));
        let handed = pending.clone();
        let service = hyper::service::service_fn(move |mut req: Request<hyper::body::Incoming>| {
            handed.store(false, Ordering::Relaxed);
            req.extensions_mut().insert(ConnectInfo(peer));
            router.clone().oneshot(req)
        });
        let io = Noting {
            stream,
            pending: pending.clone(),
        };
        let conn = graceful.watch(
            hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEAD_TIMEOUT)
                .max_buf_size(MAX_HEAD)
                .serve_connection(TokioIo::new(io), service),
        );
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                if let Some(status) = refused_head(&e, pending.load(Ordering::Relaxed)) {
                    say(&format!(
                        "{} \"-\" {status} {:.1}ms {e}",
                        peer.ip(),
                        opened.elapsed().as_secs_f64() * 1e3
                    ));
                }
            }
            drop(permit);
        });
    }
    say("stopping");
    // No new connection; idle ones are closed at once, and requests under way get a few
    // seconds to end.
    drop(listener);
    let _ = tokio::time::timeout(STOP_GRACE, graceful.shutdown()).await;
    if let Err(e) = state.record_health().await {
        say(&format!("cannot write the Archives' health: {e}"));
    }
    state.engine.memory.flush(Duration::from_secs(2));
    say("stopped");
    Ok(())
}

/// A client's connection that notes when bytes arrive, so that a head cut off by
/// [`HEAD_TIMEOUT`] is told from an idle connection (the service clears the note when a
/// head is complete).
struct Noting {
    stream: tokio::net::TcpStream,
    pending: Arc<AtomicBool>,
}

impl tokio::io::AsyncRead for Noting {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.pending.store(true, Ordering::Relaxed);
        }
        polled
    }
}

impl tokio::io::AsyncWrite for Noting {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// For a connection that ended in `e`: the status hyper answered a request head it
/// refused with (`-` for none), or `None` when no request was refused (a client gone, an
/// idle connection closed).
fn refused_head(e: &hyper::Error, pending: bool) -> Option<&'static str> {
    if e.is_parse_too_large() {
        Some("431")
    } else if e.is_parse_version_h2() {
        Some("-")
    } else if e.is_parse() {
        Some("400")
    } else if e.is_timeout() && pending {
        Some("-")
    } else {
        None
    }
}

async fn shutdown_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

fn complain(last: &mut Option<Instant>, what: &str) {
    if last.is_none_or(|t| t.elapsed() > Duration::from_secs(10)) {
        say(what);
        *last = Some(Instant::now());
    }
}

/// One line on stderr, escaped.
pub fn say(line: &str) {
    eprintln!("ibi-resolver: {}", logline::clean(line));
}

async fn handle(
    State(state): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    req: Request<Body>,
) -> Response<Body> {
    let start = Instant::now();
    let (parts, _body) = req.into_parts();
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().map(str::to_string);
    let ips = client_ips(&state.config, peer.ip(), &parts.headers);
    let (response, shown, note) = route(
        &state,
        &parts.method,
        &path,
        query.as_deref(),
        &parts.headers,
        &ips,
    )
    .await;
    say(&format!(
        "{} \"{} {}\" {} {:.1}ms {}",
        ips.first().unwrap_or(&peer.ip()),
        parts.method,
        cut(&logline::clean(&shown), MAX_SHOWN),
        response.status().as_u16(),
        start.elapsed().as_secs_f64() * 1e3,
        note
    ));
    response
}

/// The answer, how the request is shown in the log, and a note for the log.
async fn route(
    state: &Arc<AppState>,
    method: &Method,
    path: &str,
    query: Option<&str>,
    headers: &HeaderMap,
    ips: &[IpAddr],
) -> (Response<Body>, String, String) {
    let target_len = path.len() + query.map_or(0, str::len);
    let full = match query {
        Some(q) => format!("{path}?{q}"),
        None => path.to_string(),
    };
    let languages = lang::preferences(
        headers
            .get(header::ACCEPT_LANGUAGE)
            .and_then(|v| v.to_str().ok()),
    );
    let page_lang = PageLang::of(&languages);
    if method != Method::GET && method != Method::HEAD {
        let mut r = text(405, "error {method not allowed}\r\n");
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return (r, full.clone(), String::new());
    }
    if target_len > MAX_TARGET {
        let page = pages::bad_request(
            page_lang,
            &full.clone(),
            &format!(
                "the path and query are {target_len} bytes long; at most {MAX_TARGET} are read"
            ),
        );
        let mut r = page_response(page);
        *r.status_mut() = StatusCode::URI_TOO_LONG;
        return (r, full.clone(), "too long".into());
    }
    let service_path = format!("/{}", state.config.serviceibi);
    if path == service_path {
        let answer = service::answer(state, query, ips[0]).await;
        // The log shows the service's subject and Archive, never the key.
        let q = query
            .and_then(|q| Query::parse(q.as_bytes()).ok())
            .unwrap_or_default();
        let subject = q
            .get_str("servicesubject")
            .ok()
            .flatten()
            .unwrap_or("-")
            .to_string();
        let mut body = answer.pairs.to_text();
        if !body.is_empty() {
            body.push_str("\r\n");
        }
        return (
            text(answer.status, &body),
            format!("{path}?servicesubject={subject}"),
            answer.note,
        );
    }
    if path == "/" {
        return (page_response(home(state, page_lang)), full, String::new());
    }
    if path == "/favicon.ico" || path == "/robots.txt" {
        return (text(404, ""), full, String::new());
    }
    if path == "/metrics" {
        if !state.config.may_see_metrics(ips[0]) {
            return (text(404, ""), full, "metrics refused".into());
        }
        let mut r = Response::new(Body::from(state.engine.metrics.render()));
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(crate::metrics::CONTENT_TYPE),
        );
        return (r, full, String::new());
    }
    let url = match PersistentUrl::parse(path, query) {
        Ok(u) => u,
        Err(e) => {
            let note = e.to_string();
            state
                .engine
                .metrics
                .resolution("bad_request", Duration::ZERO);
            return (
                page_response(pages::bad_request(page_lang, &full, &note)),
                full.clone(),
                note,
            );
        }
    };
    let Ok(_resolving) = state.resolutions.try_acquire() else {
        state.engine.metrics.overloaded();
        let mut r = page_response(pages::overloaded(page_lang));
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return (
            r,
            full.clone(),
            format!(
                "overloaded: {} resolutions under way",
                state.config.limits.resolutions
            ),
        );
    };
    let inspect = query
        .and_then(|q| Query::parse(q.as_bytes()).ok())
        .is_some_and(|q| q.get("noredirect").is_some());
    let reader = Reader {
        ips: ips.to_vec(),
        languages,
    };
    let archives = state.archives();
    let trace = match tokio::time::timeout(
        MAX_RESOLUTION,
        state.engine.resolve(archives, &url, &reader),
    )
    .await
    {
        Ok(t) => t,
        Err(_) => {
            state.engine.metrics.resolution("timed_out", MAX_RESOLUTION);
            let r = text(504, "resolution took too long\n");
            return (r, full.clone(), "resolution took too long".into());
        }
    };
    let note = summary(&trace);
    state.engine.metrics.resolution(
        outcome_name(&trace.outcome),
        Duration::from_secs_f64(trace.ms / 1e3),
    );
    if inspect {
        let json = headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("application/json"));
        return (
            page_response(pages::inspection(page_lang, &trace, json)),
            full.clone(),
            note,
        );
    }
    if let Outcome::Found(found) = &trace.outcome {
        if let Some(ack) = state.engine.acknowledgment(&trace, &reader) {
            state
                .acknowledgments
                .send(&found.archive, &found.address, ack)
                .await;
        }
        let mut r = page_response(pages::outcome(page_lang, &trace, url.ibi().as_str()));
        *r.status_mut() = StatusCode::FOUND;
        // usable_location() let only visible ASCII through: always a valid header.
        if let Ok(v) = HeaderValue::from_str(&found.url) {
            r.headers_mut().insert(header::LOCATION, v);
        }
        return (r, full.clone(), note);
    }
    let page = pages::outcome(page_lang, &trace, url.ibi().as_str());
    let mut r = page_response(page);
    *r.status_mut() =
        StatusCode::from_u16(pages::status_of(&trace.outcome)).unwrap_or(StatusCode::NOT_FOUND);
    (r, full.clone(), note)
}

/// The outcome's label in the metrics.
fn outcome_name(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Found(_) => "found",
        Outcome::NotFound { .. } => "not_found",
        Outcome::NoTranslation { .. } => "no_translation",
        Outcome::Deleted { .. } => "deleted",
        Outcome::Suspicion { .. } => "suspicion",
        Outcome::NoOriginal { .. } => "no_original",
        Outcome::EditionChain { .. } => "edition_chain",
    }
}

/// The outcome in a few words, for the log.
fn summary(trace: &crate::resolve::Trace) -> String {
    let rounds = trace.rounds.len();
    match &trace.outcome {
        Outcome::Found(f) => format!("found at {} in {rounds} round(s)", f.address),
        Outcome::NotFound { unanswered, asked } => {
            format!("not found ({asked} asked, {unanswered} did not answer)")
        }
        Outcome::NoTranslation { language } => format!("no translation in {language}"),
        Outcome::Deleted { date } => format!("deleted on {date}"),
        Outcome::Suspicion { archives } => format!("suspicion: {}", archives.join(", ")),
        Outcome::NoOriginal { copies } => format!("no original, copies at {}", copies.join(", ")),
        Outcome::EditionChain { detail } => format!("edition chain: {detail}"),
    }
}

/// `clientinformation.ipaddress` (Table 8.10): the connection's address, or, when it is a
/// trusted proxy, the X-Forwarded-For chain read from the right up to the first address
/// that is not a trusted proxy — the reader first, then its proxies (Example 10.1).
pub fn client_ips(config: &Config, peer: IpAddr, headers: &HeaderMap) -> Vec<IpAddr> {
    let peer = match peer {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(peer, IpAddr::V4),
        v4 => v4,
    };
    let mut chain = vec![peer];
    if !config.is_trusted_proxy(peer) {
        return chain;
    }
    let forwarded: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    for entry in forwarded.iter().rev().take(16) {
        let Ok(ip) = entry.parse::<IpAddr>() else {
            break;
        };
        chain.insert(0, ip);
        if !config.is_trusted_proxy(ip) {
            break;
        }
    }
    chain
}

/// `s` cut to at most `max` bytes, then `...`.
fn cut(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if s.len() <= max {
        return s.into();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end]).into()
}

fn text(status: u16, body: &str) -> Response<Body> {
    let mut r = Response::new(Body::from(body.to_string()));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    r
}

fn page_response(page: pages::Page) -> Response<Body> {
    let mut r = Response::new(Body::from(page.body));
    *r.status_mut() =
        StatusCode::from_u16(page.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(page.content_type),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::VARY,
        HeaderValue::from_static("Accept-Language, Accept"),
    );
    r
}

/// The resolver's home page: what it is and how to use it.
fn home(state: &AppState, lang: PageLang) -> pages::Page {
    let example = format!("{}/{}", state.config.publicurl, state.config.serviceibi);
    let body = match lang {
        PageLang::Pt => format!(
            "<p>Este é um resolvedor de IBI: acrescente um IBI a este endereço para chegar ao item, por exemplo <code>{0}/8JMKD3MGP8W/35MME4E</code>; acrescente <code>?noredirect</code> para ver a resolução sem segui-la.</p>\n<p>{1} Arquivos incluídos. Serviço do resolvedor: <code>{2}</code>.</p>\n",
            escape_html(&state.config.publicurl),
            state.archives().len(),
            escape_html(&example)
        ),
        PageLang::En => format!(
            "<p>This is an IBI resolver: add an IBI to this address to reach the item, for example <code>{0}/8JMKD3MGP8W/35MME4E</code>; add <code>?noredirect</code> to see the resolution without following it.</p>\n<p>{1} Archives included. Resolver service: <code>{2}</code>.</p>\n",
            escape_html(&state.config.publicurl),
            state.archives().len(),
            escape_html(&example)
        ),
    };
    pages::Page {
        status: 200,
        content_type: "text/html; charset=utf-8",
        body: format!(
            "<!DOCTYPE html>\n<html lang=\"{}\">\n<head><meta charset=\"utf-8\"><title>IBI resolver</title></head>\n<body>\n<h1>IBI resolver</h1>\n{body}</body>\n</html>\n",
            lang.code()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwarded_for_is_believed_only_from_trusted_proxies() {
        let config = Config::parse(
            "serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"http://r\"\ntrustedproxies = [\"127.0.0.1/32\", \"150.163.68.1\"]\n",
            std::path::Path::new("."),
        )
        .unwrap();
        let mut h = HeaderMap::new();
        h.insert(
            "x-forwarded-for",
            HeaderValue::from_static("6.6.6.6, 172.16.44.200, 150.163.68.1"),
        );
        let ips = |peer: &str, h: &HeaderMap| -> Vec<String> {
            client_ips(&config, peer.parse().unwrap(), h)
                .iter()
                .map(|i| i.to_string())
                .collect()
        };
        // From the local proxy: 150.163.68.1 is trusted too, 172.16.44.200 is the reader;
        // 6.6.6.6 is what the reader claimed and is not believed.
        assert_eq!(
            ips("127.0.0.1", &h),
            ["172.16.44.200", "150.163.68.1", "127.0.0.1"]
        );
        // From anyone else the header is ignored.
        assert_eq!(ips("203.0.113.9", &h), ["203.0.113.9"]);
        h.insert("x-forwarded-for", HeaderValue::from_static("garbage"));
        assert_eq!(ips("127.0.0.1", &h), ["127.0.0.1"]);
    }
}
