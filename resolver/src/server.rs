//! `ibi-resolver serve`: the HTTP server. hyper serves each connection (head read within
//! [`HEAD_TIMEOUT`], at most [`MAX_HEAD`] bytes), axum routes: the resolver service at
//! `/<serviceibi>`, resolution on every other path. One log line per request on stderr,
//! control bytes escaped, the registration key never in it — also for a head hyper
//! refuses (400, 431) or that does not arrive within [`HEAD_TIMEOUT`].

use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use ibi::markup::escape_html;
use ibi::pairs::{PairList, Value};
use ibi::persistent::PersistentUrl;
use ibi::query::Query;
use ibi::text::cut;
use ibi::Ibi;
use tokio::sync::Semaphore;
use tower::ServiceExt;

use crate::acknowledge::Acknowledger;
use crate::client::{Confirmation, Counted};
use crate::clients::{ClientBook, Network, Refused};
use crate::config::Config;
use crate::lang::{self, PageLang};
use crate::log::{complain, say};
use crate::memory::LocationMemory;
use crate::pages;
use crate::registry::{self, Included, Registry, RegistryError};
use crate::resolve::{kept_pairs, Budget, Engine, Outcome, Reader};
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
    /// Key checks (argon2id, 19 MiB each) under way at once, their work included.
    key_checks: Arc<Semaphore>,
    /// Key checks waiting for one of `key_checks`; beyond [`MAX_KEY_CHECKS_WAITING`], 429.
    key_checks_waiting: Arc<std::sync::atomic::AtomicUsize>,
    acknowledgments: Acknowledger,
    /// Resolutions under way; when none is left, `503`.
    resolutions: Semaphore,
    /// What each client network holds.
    clients: Arc<ClientBook>,
    /// The client networks a key check is under way for (one at a time each).
    key_checking: Arc<Mutex<HashSet<Network>>>,
    /// The address the server listens on, once it does.
    local: OnceLock<SocketAddr>,
    /// The newest entry of `ibi-resolver forget` dropped from the memory.
    forgotten: AtomicI64,
}

impl AppState {
    pub fn new(config: Config) -> Result<AppState, RegistryError> {
        let config_resolutions = config.limits.resolutions;
        let registry = Registry::open(&config.database)?;
        let archives = registry.included()?;
        let forgotten = registry.last_forgotten()?;
        let engine = Engine {
            memory: Arc::new(LocationMemory::open(
                &config.database,
                config.memory_entries,
                config.memory_expiry,
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
            clients: ClientBook::new(&config.limits),
            key_checking: Arc::new(Mutex::new(HashSet::new())),
            key_checks_waiting: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
            local: OnceLock::new(),
            forgotten: AtomicI64::new(forgotten),
            config,
            engine,
            registry: Arc::new(Mutex::new(registry)),
            archives: RwLock::new(Arc::new(archives)),
            slowdown: Mutex::new(Slowdown::new()),
            // argon2id works in 19 MiB per check.
            key_checks: Arc::new(Semaphore::new(KEY_CHECKS)),
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
        // What `ibi-resolver forget` removed from the table leaves the memory too.
        let since = self.forgotten.load(Ordering::Relaxed);
        let (ibis, last) = self
            .with_registry(move |r| r.forgotten_after(since))
            .await?;
        self.engine.memory.drop_entries(&ibis);
        self.forgotten.store(last, Ordering::Relaxed);
        self.clients.sweep();
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

    /// Whether `key` is the registered key of `serviceibi`. The check first waits the
    /// slowdown of wrong keys ([`Slowdown`]) from the client's network; one check at a
    /// time per network (another one meanwhile is refused at once, never queued), and
    /// the wait holds none of the slots of the key checks themselves, so wrong keys from
    /// one network delay a check from another by one key check at most. A check is
    /// counted as a failure before it is made (and the count cleared when the key is
    /// right), and its work holds its slot and its network's turn to its end, so a
    /// client that goes away escapes neither the slowdown nor the bound.
    pub async fn check_key(&self, serviceibi: &Ibi, key: &str, client: IpAddr) -> KeyCheck {
        let network = Network::of(client);
        let archive = serviceibi.key();
        let wait = match self.slowdown.lock() {
            Ok(s) => s.wait(network, &archive, Instant::now()),
            Err(_) => Duration::from_secs(1),
        };
        let busy = KeyCheck::Busy {
            retry_after: (wait.as_secs_f64().ceil() as u64).max(1),
        };
        let Some(turn) = KeyTurn::take(&self.key_checking, network) else {
            return busy;
        };
        if let Ok(mut s) = self.slowdown.lock() {
            s.failed(network, &archive, Instant::now());
        }
        tokio::time::sleep(wait).await;
        let waiting = Counted::enter(&self.key_checks_waiting);
        if waiting.count > MAX_KEY_CHECKS_WAITING {
            return busy;
        }
        let Ok(permit) = self.key_checks.clone().acquire_owned().await else {
            return KeyCheck::Wrong { waited: wait };
        };
        drop(waiting);
        // The stored hash is read under the registry's lock; the key is verified outside
        // it, the slot and the turn held until the work ends, whoever waits for it.
        let ibi = serviceibi.clone();
        let hash = self
            .with_registry(move |r| Ok(r.key_hash(&ibi).ok().flatten()))
            .await
            .unwrap_or(None);
        let key = key.to_string();
        // An unreadable registry verifies against no hash: a refusal after the same work.
        let right = tokio::task::spawn_blocking(move || {
            let right = registry::verify_key(&key, hash.as_deref());
            drop((permit, turn));
            right
        })
        .await
        .unwrap_or(false);
        if right {
            if let Ok(mut s) = self.slowdown.lock() {
                s.succeeded(network, &archive);
            }
            KeyCheck::Right
        } else {
            KeyCheck::Wrong { waited: wait }
        }
    }

    /// Whether an Archive at `address` (`host[:port]`) would be this resolver itself: its
    /// public URL's host and port, or an address the name resolves to that is the one it
    /// listens on (any local address, when it listens on all).
    pub async fn is_own_address(&self, address: &str) -> bool {
        let Ok(url) = url::Url::parse(&format!("http://{address}/")) else {
            return false;
        };
        let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
            return false;
        };
        if let Ok(public) = url::Url::parse(&self.config.publicurl) {
            if public
                .host_str()
                .is_some_and(|h| h.eq_ignore_ascii_case(host))
                && public.port_or_known_default() == Some(port)
            {
                return true;
            }
        }
        let listening = self.local.get().copied().unwrap_or(self.config.listen);
        if port != listening.port() {
            return false;
        }
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let lookup = tokio::time::timeout(
            Duration::from_secs(5),
            tokio::net::lookup_host((host, port)),
        )
        .await;
        let Ok(Ok(found)) = lookup else {
            return false;
        };
        found.into_iter().any(|a| {
            let ip = a.ip().to_canonical();
            ip == listening.ip()
                || (listening.ip().is_unspecified()
                    && (ip.is_loopback() || std::net::UdpSocket::bind((ip, 0)).is_ok()))
        })
    }
}

/// What a registration key's check found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyCheck {
    Right,
    /// Wrong, or an unregistered Archive; after waiting this long.
    Wrong {
        waited: Duration,
    },
    /// Not checked: a check from the same client network is under way.
    Busy {
        retry_after: u64,
    },
}

/// Key checks under way at once (argon2id works in 19 MiB per check).
const KEY_CHECKS: usize = 2;
/// Key checks that may wait for one of [`KEY_CHECKS`] at once; beyond, 429.
const MAX_KEY_CHECKS_WAITING: usize = 64;

/// A client network's turn to have a key checked, until dropped.
struct KeyTurn {
    checking: Arc<Mutex<HashSet<Network>>>,
    network: Network,
}

impl KeyTurn {
    /// The turn of `network`, unless one of its checks is under way.
    fn take(checking: &Arc<Mutex<HashSet<Network>>>, network: Network) -> Option<KeyTurn> {
        let fresh = checking
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(network);
        // Made only when taken: a turn dropped gives its network's place back.
        fresh.then(|| KeyTurn {
            checking: checking.clone(),
            network,
        })
    }
}

impl Drop for KeyTurn {
    fn drop(&mut self) {
        let mut set = self.checking.lock().unwrap_or_else(|p| p.into_inner());
        set.remove(&self.network);
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
    let _ = state.local.set(local);
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
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // EMFILE and friends: wait a little instead of spinning.
                    complain("accept failing", &format!("accept: {e}"));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = connections.clone().try_acquire_owned() else {
            complain(
                "connections closed at the limit",
                &format!("{max_connections} connections open; closing new ones"),
            );
            drop(stream);
            continue;
        };
        // A trusted proxy's connections carry many readers: not bounded per client.
        let peer_ip = peer.ip().to_canonical();
        let client_slot = if state.config.is_trusted_proxy(peer_ip) {
            None
        } else {
            match state.clients.connection(peer_ip) {
                Ok(held) => Some(held),
                Err(refused) => {
                    state.engine.metrics.throttled(refused.limit);
                    complain(
                        &format!("connections refused to {}", Network::of(peer_ip)),
                        &format!(
                            "{peer_ip}: {} connections open from {}; refusing more (429)",
                            state.config.limits.per_client_connections,
                            Network::of(peer_ip)
                        ),
                    );
                    refuse_connection(stream, refused);
                    continue;
                }
            }
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
            drop(client_slot);
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
    crate::log::flush();
    say("stopped");
    Ok(())
}

/// Answers `429` on a connection refused before its request is read, and closes it,
/// never waiting on the client.
fn refuse_connection(stream: tokio::net::TcpStream, refused: Refused) {
    let body = "too many connections from your network; try again later\n";
    let head = format!(
        "HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nRetry-After: {}\r\nConnection: close\r\n\r\n{body}",
        body.len(),
        refused.retry_after
    );
    let _ = stream.try_write(head.as_bytes());
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

async fn handle(
    State(state): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    req: Request<Body>,
) -> Response<Body> {
    let (parts, _body) = req.into_parts();
    let ips = client_ips(&state.config, peer.ip(), &parts.headers);
    // Logged when the client goes away before the answer: hyper drops this future then.
    let mut line = LogLine {
        state: state.clone(),
        client: ips.first().copied().unwrap_or(peer.ip()),
        method: parts.method.clone(),
        shown: shown_request(parts.uri.path(), parts.uri.query()),
        start: Instant::now(),
        answered: false,
    };
    let (response, note) = route(&state, &parts, &ips).await;
    line.answered = true;
    line.write(response.status().as_u16(), &note);
    response
}

/// The log line of one request: written once it is answered, or, if the client closed
/// its connection first, with status 499 (and counted).
struct LogLine {
    state: Arc<AppState>,
    client: IpAddr,
    method: Method,
    /// The request as the log may show it ([`shown_request`]).
    shown: String,
    start: Instant,
    answered: bool,
}

impl LogLine {
    fn write(&self, status: u16, note: &str) {
        say(&format!(
            "{} \"{} {}\" {status} {:.1}ms {note}",
            self.client,
            self.method,
            cut(&self.shown, MAX_SHOWN),
            self.start.elapsed().as_secs_f64() * 1e3,
        ));
    }
}

impl Drop for LogLine {
    fn drop(&mut self) {
        if !self.answered {
            self.state.engine.metrics.abandoned();
            self.write(499, "abandoned by the client");
        }
    }
}

/// Query pairs a log line or a page may show with their values; every other pair is
/// left out (`&…`), so that no registration key, whatever the request's method, length
/// or path, reaches the log: it goes only in the query of the resolver service.
const SHOWN_PAIRS: [&str; 4] = [
    "ibiurl.verblist",
    "ibiurl.requireditemstatus",
    "noredirect",
    "servicesubject",
];

/// The request target as a log line or a page may show it: the path (unless it names
/// a registration key, when a query was sent escaped into it), and of the query only the
/// pairs of [`SHOWN_PAIRS`].
pub fn shown_request(path: &str, query: Option<&str>) -> String {
    let mut shown = if names_a_key(path) {
        "/…".to_string()
    } else {
        path.to_string()
    };
    let Some(query) = query else {
        return shown;
    };
    let (mut kept, left_out) = kept_pairs(query, |name| SHOWN_PAIRS.contains(&name));
    if left_out {
        kept.push("…");
    }
    if !kept.is_empty() || query.is_empty() {
        shown.push('?');
        shown.push_str(&kept.join("&"));
    }
    shown
}

/// Whether `path`, decoded, names a registration key (a query sent escaped into it).
fn names_a_key(path: &str) -> bool {
    percent_encoding::percent_decode_str(path)
        .decode_utf8_lossy()
        .to_ascii_lowercase()
        .contains("registrationkey")
}

/// The answer to a request, and a note for its log line.
async fn route(
    state: &Arc<AppState>,
    parts: &axum::http::request::Parts,
    ips: &[IpAddr],
) -> (Response<Body>, String) {
    let (method, headers) = (&parts.method, &parts.headers);
    let path = parts.uri.path();
    let query = parts.uri.query();
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
        return (r, String::new());
    }
    if asked_by_a_resolver(headers) {
        // An Archive's address that leads back to a resolver: asking every Archive again
        // would loop.
        return (
            as_a_resolver(state, 508, "a resolver asked this resolver: loop"),
            "loop: asked by a resolver".into(),
        );
    }
    let target_len = path.len() + query.map_or(0, str::len);
    if target_len > MAX_TARGET {
        let page = pages::bad_request(
            page_lang,
            &cut(&shown_request(path, query), MAX_SHOWN),
            &format!(
                "the path and query are {target_len} bytes long; at most {MAX_TARGET} are read"
            ),
        );
        let mut r = page_response(page);
        *r.status_mut() = StatusCode::URI_TOO_LONG;
        return (r, "too long".into());
    }
    let service_path = format!("/{}", state.config.serviceibi);
    if path == service_path {
        let answer = service::answer(state, query, ips[0]).await;
        let mut r = pair_list(answer.status, answer.pairs);
        if let Some(seconds) = answer.retry_after {
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        return (r, answer.note);
    }
    if path == "/" {
        return (page_response(home(state, page_lang)), String::new());
    }
    if path == "/favicon.ico" || path == "/robots.txt" {
        return (text(404, ""), String::new());
    }
    if path == "/metrics" {
        if !state.config.may_see_metrics(ips[0]) {
            return (text(404, ""), "metrics refused".into());
        }
        let mut r = Response::new(Body::from(state.engine.metrics.render()));
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(crate::metrics::CONTENT_TYPE),
        );
        return (r, String::new());
    }
    let parsed_query = query.and_then(|q| Query::parse(q.as_bytes()).ok());
    if parsed_query
        .as_ref()
        .is_some_and(|q| q.get("servicesubject").is_some())
    {
        // An Archive's request (or a resolver taking this one for an Archive): answered
        // as what this is, a resolver, and never resolved.
        return (
            as_a_resolver(state, 400, "this is an IBI resolver, not an Archive"),
            "an Archive's request".into(),
        );
    }
    let misspelt = || {
        let mut pairs = PairList::new();
        pairs.push(
            "error",
            words(&format!("the resolver service is at {service_path}")),
        );
        (pair_list(400, pairs), "the service path misspelt".into())
    };
    let url = match PersistentUrl::parse(path, query) {
        // The resolver's own IBI spelt otherwise (another case, escaped, a trailing `/`):
        // refused rather than resolved, since such a request carries a registration key.
        Ok(u) if *u.ibi() == state.config.serviceibi => return misspelt(),
        Ok(u) => u,
        Err(_) if names_the_service(path, &state.config.serviceibi) => return misspelt(),
        Err(e) => {
            // The reason quotes the path: not when it holds a key.
            let note = if names_a_key(path) {
                "the path is not a persistent URL".to_string()
            } else {
                e.to_string()
            };
            state
                .engine
                .metrics
                .resolution("bad_request", Duration::ZERO);
            let shown = cut(&shown_request(path, query), MAX_SHOWN).into_owned();
            return (
                page_response(pages::bad_request(page_lang, &shown, &note)),
                note,
            );
        }
    };
    let inspect = parsed_query.is_some_and(|q| q.get("noredirect").is_some());
    let reader = Reader {
        ips: ips.to_vec(),
        languages,
    };
    resolve(
        state,
        &url,
        reader,
        inspect,
        method == Method::HEAD,
        headers,
    )
    .await
}

/// Resolves `url` for `reader` within the per-client bounds and the resolver's, and
/// answers: the redirect (with the acknowledgment, but for HEAD and the inspection
/// view), the inspection view, or the outcome's page.
async fn resolve(
    state: &Arc<AppState>,
    url: &PersistentUrl,
    reader: Reader,
    inspect: bool,
    head: bool,
    headers: &HeaderMap,
) -> (Response<Body>, String) {
    let page_lang = PageLang::of(&reader.languages);
    let client = reader.ips[0];
    let _mine = match state.clients.resolution(client) {
        Ok(held) => held,
        Err(refused) => return throttled(state, page_lang, refused),
    };
    let Ok(_resolving) = state.resolutions.try_acquire() else {
        state.engine.metrics.overloaded();
        let mut r = page_response(pages::overloaded(page_lang));
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return (
            r,
            format!(
                "overloaded: {} resolutions under way",
                state.config.limits.resolutions
            ),
        );
    };
    // Each round that asks every Archive spends one of the client network's misses.
    let budget = Misses {
        clients: &state.clients,
        client,
    };
    let archives = state.archives();
    let trace = match tokio::time::timeout(
        MAX_RESOLUTION,
        state
            .engine
            .resolve(archives, url, &reader, !inspect, &budget),
    )
    .await
    {
        Ok(t) => t,
        Err(_) => {
            state.engine.metrics.resolution("timed_out", MAX_RESOLUTION);
            let r = text(504, "resolution took too long\n");
            return (r, "resolution took too long".into());
        }
    };
    let note = summary(&trace);
    state.engine.metrics.resolution(
        outcome_name(&trace.outcome),
        Duration::from_secs_f64(trace.ms / 1e3),
    );
    if let Outcome::Throttled { retry_after } = trace.outcome {
        // The inspection view too: it asks every Archive as a redirect does.
        return throttled(
            state,
            page_lang,
            Refused {
                limit: "misses",
                retry_after,
            },
        );
    }
    if inspect {
        let json = headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("application/json"));
        return (
            page_response(pages::inspection(page_lang, &trace, json)),
            note,
        );
    }
    let mut r = page_response(pages::outcome(page_lang, &trace, url.ibi().as_str()));
    *r.status_mut() =
        StatusCode::from_u16(pages::status_of(&trace.outcome)).unwrap_or(StatusCode::NOT_FOUND);
    match &trace.outcome {
        Outcome::Found(found) => {
            // A HEAD is no access to the item: no acknowledgment is sent.
            if !head {
                if let Some(ack) = state.engine.acknowledgment(&trace, &reader) {
                    state
                        .acknowledgments
                        .send(&found.archive, &found.address, ack)
                        .await;
                }
            }
            // usable_location() let only visible ASCII through, and location() encodes
            // what the reader's pairs add: always a valid header.
            let location = trace.location.as_deref().unwrap_or(&found.url);
            if let Ok(v) = HeaderValue::from_str(location) {
                r.headers_mut().insert(header::LOCATION, v);
            }
        }
        Outcome::Unverifiable { .. } | Outcome::Unavailable { .. } => {
            r.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from(state.config.archives.probe.as_secs().max(1)),
            );
        }
        _ => {}
    }
    (r, note)
}

/// The misses of the reader's client network, as a resolution spends them.
struct Misses<'a> {
    clients: &'a ClientBook,
    client: IpAddr,
}

impl Budget for Misses<'_> {
    fn fan_out(&self) -> Result<(), u64> {
        self.clients.miss(self.client).map_err(|r| r.retry_after)
    }
}

/// `status` with the resolver's identity pairs and `error {text}`: what an Archive's
/// request gets here, so that whoever sent it can tell it reached a resolver
/// ([`crate::client::Confirmation::AsResolver`]).
fn as_a_resolver(state: &AppState, status: u16, text: &str) -> Response<Body> {
    let mut answer = service::identity(state).pairs;
    answer.push("error", words(text));
    pair_list(status, answer)
}

/// A pair-list value of the words of `text`.
fn words(text: &str) -> Value {
    Value::words(text.split(' ').map(|w| w.as_bytes().to_vec()))
}

/// The `429` of a per-client bound.
fn throttled(state: &AppState, lang: PageLang, refused: Refused) -> (Response<Body>, String) {
    state.engine.metrics.throttled(refused.limit);
    let mut r = page_response(pages::too_many(lang));
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(refused.retry_after));
    (
        r,
        format!("beyond the client network's {} bound", refused.limit),
    )
}

/// Whether the request comes from an IBI resolver (its `Via` says so,
/// [`crate::client::VIA`]).
fn asked_by_a_resolver(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::VIA)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.to_ascii_lowercase().contains("ibi-resolver"))
}

/// Whether `path`, which is no persistent URL, is the resolver service's path spelt
/// otherwise (with `//` or `/.`).
fn names_the_service(path: &str, service: &Ibi) -> bool {
    let decoded = percent_encoding::percent_decode_str(path).decode_utf8_lossy();
    let segments: Vec<&str> = decoded
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    Ibi::parse(&segments.join("/")).is_ok_and(|ibi| ibi.key() == service.key())
}

/// The outcome's label in the metrics.
fn outcome_name(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Found(_) => "found",
        Outcome::NotFound { .. } => "not_found",
        Outcome::Unavailable { .. } => "unavailable",
        Outcome::NoTranslation { .. } => "no_translation",
        Outcome::Deleted { .. } => "deleted",
        Outcome::Suspicion { .. } => "suspicion",
        Outcome::NoOriginal { .. } => "no_original",
        Outcome::Unverifiable { .. } => "unverifiable",
        Outcome::Chain { .. } => "chain",
        Outcome::Throttled { .. } => "throttled",
    }
}

/// The outcome in a few words, for the log.
fn summary(trace: &crate::resolve::Trace) -> String {
    let rounds = trace.rounds.len();
    match &trace.outcome {
        Outcome::Found(f) => format!("found at {} in {rounds} round(s)", f.address),
        Outcome::NotFound { asked } => format!("not found ({asked} asked, 0 did not answer)"),
        Outcome::Unavailable { archives, asked } => format!(
            "not found ({asked} asked, {} did not answer: {})",
            archives.len(),
            archives.join(", ")
        ),
        Outcome::NoTranslation { language } => format!("no translation in {language}"),
        Outcome::Deleted { date } => format!("deleted on {date}"),
        Outcome::Suspicion { archives } => format!("suspicion: {}", archives.join(", ")),
        Outcome::NoOriginal { copies } => format!(
            "no original, copies at {}",
            copies
                .iter()
                .map(|f| format!("{} ({})", f.address, f.archive))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Outcome::Unverifiable { archives } => {
            format!(
                "the Original cannot be checked: no answer from {}",
                archives.join(", ")
            )
        }
        Outcome::Chain { detail } => format!("endless related items: {detail}"),
        Outcome::Throttled { .. } => "beyond the client network's misses".into(),
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

/// A pair list (Table 6.2), one pair per line.
fn pair_list(status: u16, pairs: PairList) -> Response<Body> {
    let mut body = pairs.to_text();
    if !body.is_empty() {
        body.push_str("\r\n");
    }
    text(status, &body)
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
