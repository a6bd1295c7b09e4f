//! `ibi-resolver serve`: the HTTP server. It listens, accepts within the bounds of
//! connections (all of them, and per client network), has hyper serve each connection
//! (head read within [`HEAD_TIMEOUT`], at most [`MAX_HEAD`] bytes) with
//! [`crate::router::handle`] answering each request, runs the background work
//! ([`keep_registry`], [`probe_dormant`]) and stops gracefully at SIGINT or SIGTERM. A
//! head hyper refuses (400, 431) or that does not arrive within [`HEAD_TIMEOUT`] gets
//! its log line here.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use hyper::Request;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::clients::{Held, Network, Refused};
use crate::config::Config;
use crate::log::{complain, say};
use crate::router;
use crate::state::{AppState, REFRESH};
use crate::store::Database;

/// The request head is read within this time.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest request head read, in bytes.
pub const MAX_HEAD: usize = 16 * 1024;
/// The longest path and query read, in bytes (a bound of the router's, named here with
/// the server's own).
pub use crate::router::MAX_TARGET;
/// How often a resolver told of the registry's changes by PostgreSQL reads it all the
/// same, in case a change was told to nobody: every this many [`REFRESH`]es.
const TOLD_REFRESHES: u32 = 15;
/// At a stop, how long requests under way get to end.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// Runs the server until SIGINT or SIGTERM.
pub async fn serve(config: Config) -> Result<(), String> {
    let listen = config.listen;
    // The registry opened off the async threads: its PostgreSQL client blocks.
    let state = tokio::task::spawn_blocking(move || AppState::new(config))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    let state = Arc::new(state);
    let max_connections = connections_that_fit(&state.config);
    let listener = TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    let _ = state.local.set(local);
    let included = match state.archives().len() {
        1 => "1 Archive included".to_string(),
        n => format!("{n} Archives included"),
    };
    say(&format!("listening on http://{local} ({included})"));
    tokio::spawn(keep_registry(state.clone()));
    if let Database::Postgres(uri) = &state.config.database {
        tokio::spawn(crate::listen::listen(state.clone(), uri.clone()));
    }
    tokio::spawn(probe_dormant(state.clone()));
    let graceful = GracefulShutdown::new();
    accept(&state, &listener, max_connections, &graceful).await;
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

/// The client connections open at once: `[limits] connections`, unless half the open
/// files (raised as far as allowed) are fewer. Half the open files go to readers'
/// connections, half to the Archives' and the registry's: a limit too low for
/// `[limits] connections` lowers it, saying so, rather than letting requests to Archives
/// fail for want of descriptors.
fn connections_that_fit(config: &Config) -> usize {
    let open_files = crate::process::raise_open_files();
    let fitting = usize::try_from(open_files / 2).unwrap_or(usize::MAX);
    if config.limits.connections > fitting {
        say(&format!(
            "the open-file limit is {open_files}: at most {fitting} client connections ([limits] connections is {})",
            config.limits.connections
        ));
        fitting
    } else {
        config.limits.connections
    }
}

/// Every [`REFRESH`]: writes what resolutions learnt of the Archives' health, gives
/// memory back, and reads the included Archives again. A registry that cannot be
/// written is told once when writing starts failing (a read-only registry), and once
/// when it works again, not every [`REFRESH`].
async fn keep_registry(state: Arc<AppState>) {
    let mut failing = false;
    let mut ticks = 0u32;
    loop {
        tokio::time::sleep(REFRESH).await;
        ticks = ticks.wrapping_add(1);
        match state.record_health().await {
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
        if !state.listening.load(Ordering::Relaxed) || ticks.is_multiple_of(TOLD_REFRESHES) {
            let _ = state.refresh().await;
        }
    }
}

/// Every `[archives] probe`: asks the dormant Archives whether they answer again.
async fn probe_dormant(state: Arc<AppState>) {
    loop {
        tokio::time::sleep(state.config.archives.probe).await;
        state.probe_dormant().await;
    }
}

/// Accepts connections until SIGINT or SIGTERM, each served within the bounds of
/// connections, `graceful` watching them.
async fn accept(
    state: &Arc<AppState>,
    listener: &TcpListener,
    max_connections: usize,
    graceful: &GracefulShutdown,
) {
    let connections = Arc::new(Semaphore::new(max_connections));
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
        let client_slot = match client_slot(state, peer) {
            Ok(held) => held,
            Err(refused) => {
                refuse_connection(stream, refused);
                continue;
            }
        };
        serve_connection(state, stream, peer, graceful, (client_slot, permit));
    }
}

/// The slot of the connection in its client network's count (none for a trusted
/// proxy's: they carry many readers), or why it is refused.
fn client_slot(state: &AppState, peer: SocketAddr) -> Result<Option<Held>, Refused> {
    let peer_ip = peer.ip().to_canonical();
    if state.config.is_trusted_proxy(peer_ip) {
        return Ok(None);
    }
    state
        .clients
        .connection(peer_ip)
        .map(Some)
        .inspect_err(|refused| {
            state.engine.metrics.throttled(refused.limit);
            complain(
                &format!("connections refused to {}", Network::of(peer_ip)),
                &format!(
                    "{peer_ip}: {} connections open from {}; refusing more (429)",
                    state.config.limits.per_client_connections,
                    Network::of(peer_ip)
                ),
            );
        })
}

/// Has hyper serve one connection in a task of its own, each request answered by
/// [`router::handle`]; `slots` are held until the connection ends.
fn serve_connection(
    state: &Arc<AppState>,
    stream: TcpStream,
    peer: SocketAddr,
    graceful: &GracefulShutdown,
    slots: (Option<Held>, OwnedSemaphorePermit),
) {
    let _ = stream.set_nodelay(true);
    let opened = Instant::now();
    let pending = Arc::new(AtomicBool::new(false));
    let handed = pending.clone();
    let state = state.clone();
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        handed.store(false, Ordering::Relaxed);
        let state = state.clone();
        async move { Ok::<_, std::convert::Infallible>(router::handle(state, peer, req).await) }
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
        drop(slots);
    });
}

/// Answers `429` on a connection refused before its request is read, and closes it,
/// never waiting on the client.
fn refuse_connection(stream: TcpStream, refused: Refused) {
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
    stream: TcpStream,
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
