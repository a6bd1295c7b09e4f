//! The embedded HTTP/1.1 server of `ibi-archive serve`: event loops (epoll) that hold the
//! connections waiting for a request and answer the quick ones themselves (a file of an
//! item, [`Quick`]) — and a thread for a connection from its first request that is not
//! quick (the service, a page, a large file, a client that does not read its answer) to
//! its end. Requests are parsed by `httparse`, with a bound on everything a client can
//! hold: the size and time of a request head, the time a kept-alive connection may sit
//! idle, the time a write may make no progress, the connections open at once (in all and
//! per client address). A loop never waits on a client: it reads what has come and
//! writes what the socket takes at once, and hands the connection to a thread of its own
//! for the rest; a slow or stalled client holds its own thread and nothing else. An accept
//! that fails for want of descriptors is retried, never the end of the loop.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::event::epoll;

use ::ibi::logline::Complaints;
use ::ibi::time::SystemClock;

/// What a client may hold, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at once; beyond, a client gets `503` (see `REFUSING`).
    pub max_connections: usize,
    /// Connections open at once from one client address.
    pub max_per_client: usize,
    /// Largest request head (request line and headers), in bytes; beyond: `431`.
    pub max_head: usize,
    /// Longest time from the first byte of a request head to its end.
    pub head_timeout: Duration,
    /// Longest wait for the next request on a kept-alive connection (and for the first).
    pub idle_timeout: Duration,
    /// Longest time a write may make no progress (a client that does not read).
    pub write_timeout: Duration,
    /// Requests answered on one connection before it is closed.
    pub max_requests: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 256,
            max_per_client: ::ibi::CONNECTIONS_PER_CLIENT,
            max_head: 16 * 1024,
            head_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(5),
            write_timeout: Duration::from_secs(30),
            max_requests: 100,
        }
    }
}

/// Most header fields in a request head.
const MAX_HEADERS: usize = 64;
/// Bytes a second a client must read a file at, once past the write timeout.
const MIN_RATE: f64 = 1024.0;
/// A file of at most this many bytes goes out with its head in one write, read from its
/// descriptor (as lighttpd sends a small file); a larger one goes by sendfile(2).
const SMALL_FILE: u64 = 16 * 1024;
/// Stack of a connection's thread (the service's work is shallow; parsing is bounded).
const THREAD_STACK: usize = 1 << 20;
/// Connections refused (beyond the limits) that get a thread of their own, at most: it
/// reads the request before it answers `503`, so that a client which opened the
/// connection and sent its request reads the refusal as the answer to it (an answer come
/// before the request, or a close with the request unread, is a broken connection to an
/// HTTP client, not a `503` to try again after). Beyond these, a refusal is written at
/// once, the request unread.
const REFUSING: usize = 16;
/// How long such a refusal waits for the request, and for the client to take the answer.
const REFUSAL_WAIT: Duration = Duration::from_secs(1);
/// The text of a refusal beyond the limits.
const TOO_MANY: &str = "too many connections; try again later\n";

/// A request, as the handler sees it.
#[derive(Debug)]
pub struct Request<'a> {
    pub method: &'a str,
    /// The request target in origin form (`/path?query`), still %-escaped.
    pub target: &'a str,
    /// The address of the connection.
    pub client: IpAddr,
    /// POSIX second its head was read: the time the service answers at, and the answer's
    /// `Date`.
    pub now: i64,
    /// The request's header fields, as received.
    pub headers: &'a [httparse::Header<'a>],
    /// The body of a POST of an HTML form (`application/x-www-form-urlencoded`, at most
    /// [`::ibi::query::MAX_QUERY_LEN`] bytes); no other body is ever read.
    pub form: Option<&'a [u8]>,
}

/// An answer's body.
pub enum Body {
    Bytes(Vec<u8>),
    /// `len` bytes of a file from offset `start` (`File(file, start, len)`), copied from
    /// its descriptor.
    File(File, u64, u64),
}

/// An answer.
pub struct Response {
    pub status: u16,
    /// Headers besides Content-Length, Connection and Date: names, values.
    pub headers: Vec<(Cow<'static, str>, String)>,
    pub body: Body,
    /// Lines for the log (the service's complaints).
    pub log: Vec<String>,
}

impl Response {
    pub fn text(status: u16, text: &str) -> Response {
        Response {
            status,
            headers: vec![("Content-Type".into(), "text/plain".into())],
            body: Body::Bytes(text.as_bytes().to_vec()),
            log: Vec::new(),
        }
    }

    fn len(&self) -> u64 {
        match &self.body {
            Body::Bytes(b) => b.len() as u64,
            Body::File(_, _, len) => *len,
        }
    }
}

/// The answer to one request.
pub type Handler = dyn Fn(&Request<'_>) -> Response + Send + Sync;
/// Where log lines go (one call per line, already one line).
pub type Log = dyn Fn(&str) + Send + Sync;
/// Where several log lines go at once (each already one line): in one write, where the
/// event loop has answered several requests before it waits again.
pub type LogLines = dyn Fn(&[String]) + Send + Sync;
/// Whether a request (its method and target, as received) may be answered on the event
/// loop itself: one whose answer the handler makes from the local file system alone,
/// never waiting on another process, the network or a lock held across either (a file of
/// an item). Only who answers depends on it, never what.
pub type Quick = dyn Fn(&str, &str) -> bool + Send + Sync;

/// Serves `listener` until `stop` is set: the requests `quick` names on the event loops
/// (two per processor, at most [`MAX_LOOPS`]: a loop whose file system call waits on
/// the disk holds up its own connections alone, while the others go on), the others each
/// on its connection's thread.
pub fn serve(
    listener: TcpListener,
    limits: Limits,
    stop: &AtomicBool,
    handler: Arc<Handler>,
    quick: Arc<Quick>,
    log: Arc<Log>,
    log_lines: Arc<LogLines>,
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    let open = Arc::new(Open::default());
    let refusing = Arc::new(AtomicUsize::new(0));
    let processors = std::thread::available_parallelism().map_or(1, |n| n.get());
    let loops = (2 * processors).min(MAX_LOOPS);
    let mut each = Vec::with_capacity(loops);
    for _ in 0..loops {
        let listener = listener.try_clone()?;
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)?;
        add_listener(&epoll, &listener)?;
        each.push(EventLoop {
            epoll,
            listener,
            limits,
            handler: handler.clone(),
            quick: quick.clone(),
            log: log.clone(),
            log_lines: log_lines.clone(),
            lines: Vec::new(),
            open: open.clone(),
            refusing: refusing.clone(),
            complaints: Complaints::dropped(Duration::from_secs(10)),
            conns: HashMap::new(),
            next_token: LISTENER + 1,
            paused_until: None,
            chunk: vec![0u8; READ_CHUNK],
        });
    }
    drop(listener);
    std::thread::scope(|scope| {
        let mut each = each.into_iter();
        let first = each.next();
        for (i, ev) in each.enumerate() {
            let spawned = std::thread::Builder::new()
                .name(format!("loop-{}", i + 1))
                .stack_size(THREAD_STACK)
                .spawn_scoped(scope, move || ev.run(stop));
            if let Err(e) = spawned {
                log(&format!(
                    "ibi-archive: cannot start an event loop's thread: {e}"
                ));
            }
        }
        if let Some(ev) = first {
            ev.run(stop);
        }
    });
    Ok(())
}

/// Event loops at most, whatever the processors.
const MAX_LOOPS: usize = 16;

/// Puts the listener in an event loop's set: each connection waiting wakes one loop.
fn add_listener(epoll: &std::os::fd::OwnedFd, listener: &TcpListener) -> io::Result<()> {
    Ok(epoll::add(
        epoll,
        listener,
        epoll::EventData::new_u64(LISTENER),
        epoll::EventFlags::IN | epoll::EventFlags::EXCLUSIVE,
    )?)
}

impl EventLoop {
    /// Serves until `stop` is set, then a moment longer for the answers under way (in all
    /// the loops and threads).
    fn run(mut self, stop: &AtomicBool) {
        let mut events: Vec<epoll::Event> = Vec::with_capacity(256);
        let wait = rustix::event::Timespec {
            tv_sec: 0,
            tv_nsec: TICK.as_nanos() as i64,
        };
        let mut next_sweep = Instant::now() + TICK;
        let mut stopping: Option<Instant> = None;
        loop {
            if stopping.is_none() && stop.load(Ordering::SeqCst) {
                // No more connections; those waiting for a request are closed; a request
                // whose head is coming is still answered, for a moment.
                let _ = epoll::delete(&self.epoll, &self.listener);
                self.paused_until = None;
                let idle: Vec<u64> = self
                    .conns
                    .iter()
                    .filter(|(_, c)| c.buf.is_empty())
                    .map(|(t, _)| *t)
                    .collect();
                for token in idle {
                    self.close(token);
                }
                stopping = Some(Instant::now() + Duration::from_secs(2));
            }
            if let Some(until) = stopping {
                if self.open.total() == 0 || Instant::now() >= until {
                    return;
                }
            }
            events.clear();
            match epoll::wait(
                &self.epoll,
                rustix::buffer::spare_capacity(&mut events),
                Some(&wait),
            ) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                // Out of memory for the wait: a moment, as for EMFILE below.
                Err(e) => {
                    self.complain(&format!("cannot wait for connections: {e}; retrying"));
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
            }
            for event in &events {
                match event.data.u64() {
                    LISTENER => self.accept(),
                    token => self.ready(token),
                }
            }
            self.write_lines();
            let now = Instant::now();
            if self.paused_until.is_some_and(|t| now >= t) && stopping.is_none() {
                self.paused_until = None;
                let _ = add_listener(&self.epoll, &self.listener);
            }
            if now >= next_sweep {
                self.sweep(now);
                next_sweep = now + TICK;
            }
        }
    }
}

/// The listener's token in the event loop; a connection's is any other.
const LISTENER: u64 = 0;
/// The event loop's longest wait, and how often it looks for connections past their
/// time: a timeout may be overrun by this much.
const TICK: Duration = Duration::from_millis(50);
/// Most connections taken from the listener's queue in one go, so that those open are
/// served between.
const ACCEPTS_AT_ONCE: usize = 64;
/// Most bytes read from a connection at once.
const READ_CHUNK: usize = 4096;

/// The connections waiting for a request (or for the rest of its head), and what answers
/// them.
struct EventLoop {
    epoll: std::os::fd::OwnedFd,
    listener: TcpListener,
    limits: Limits,
    handler: Arc<Handler>,
    quick: Arc<Quick>,
    log: Arc<Log>,
    log_lines: Arc<LogLines>,
    /// The lines of the requests answered since the loop last waited, written before it
    /// waits again (or hands a connection to a thread).
    lines: Vec<String>,
    open: Arc<Open>,
    refusing: Arc<AtomicUsize>,
    complaints: Complaints,
    conns: HashMap<u64, Conn>,
    next_token: u64,
    /// Until when the listener is left alone, out of descriptors.
    paused_until: Option<Instant>,
    chunk: Vec<u8>,
}

/// A connection on the event loop.
struct Conn {
    stream: TcpStream,
    client: IpAddr,
    slot: Slot,
    /// What has come of the next request.
    buf: Vec<u8>,
    /// Requests answered on it so far.
    served: usize,
    /// When it is given up: for its next request (idle), or for the rest of its head.
    deadline: Instant,
}

/// What became of a connection's turn on the event loop.
enum Turn {
    /// It waits on the loop for more.
    Wait,
    /// It is done: closed.
    Close,
    /// It goes on in a thread of its own, with what is left to write of an answer.
    Thread(Option<Pending>),
}

impl EventLoop {
    fn complain(&mut self, line: &str) {
        let log = self.log.clone();
        complain(&mut self.complaints, &*log, line);
    }

    /// Takes the connections waiting in the listener's queue.
    fn accept(&mut self) {
        for _ in 0..ACCEPTS_AT_ONCE {
            let (stream, peer) = match self.listener.accept() {
                Ok(accepted) => accepted,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) => {
                    // Out of descriptors or memory: the connection waits in the backlog
                    // until one is freed, the listener left alone a moment meanwhile.
                    // Said once in a while, never the end of the server.
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
                    ) {
                        self.complain(&format!("cannot accept a connection: {e}; retrying"));
                        let _ = epoll::delete(&self.epoll, &self.listener);
                        self.paused_until = Some(Instant::now() + Duration::from_millis(50));
                    }
                    return;
                }
            };
            let client = peer.ip().to_canonical();
            let Some(slot) = self.open.take(client, &self.limits) else {
                refuse_after_request(stream, &self.refusing, &self.limits);
                continue;
            };
            let _ = stream.set_nodelay(true);
            if stream.set_nonblocking(true).is_err() {
                continue;
            }
            let token = self.next_token;
            self.next_token += 1;
            if epoll::add(
                &self.epoll,
                &stream,
                epoll::EventData::new_u64(token),
                epoll::EventFlags::IN | epoll::EventFlags::RDHUP,
            )
            .is_err()
            {
                continue;
            }
            let first_wait = self.limits.head_timeout.min(self.limits.idle_timeout);
            self.conns.insert(
                token,
                Conn {
                    stream,
                    client,
                    slot,
                    buf: Vec::new(),
                    served: 0,
                    deadline: Instant::now() + first_wait,
                },
            );
        }
    }

    /// Reads what came on the connection `token` and answers the requests it completes.
    fn ready(&mut self, token: u64) {
        let Some(conn) = self.conns.get_mut(&token) else {
            return;
        };
        let room = self.limits.max_head.saturating_sub(conn.buf.len());
        let was_empty = conn.buf.is_empty();
        let turn = match (&conn.stream).read(&mut self.chunk[..room.min(READ_CHUNK)]) {
            // The client closed its side (or the head is full: its thread refuses it).
            Ok(0) if room > 0 => Turn::Close,
            Ok(n) => {
                conn.buf.extend_from_slice(&self.chunk[..n]);
                if was_empty && n > 0 {
                    conn.deadline = Instant::now() + self.limits.head_timeout;
                }
                answer_on_loop(
                    conn,
                    &self.limits,
                    &*self.handler,
                    &*self.quick,
                    &mut self.lines,
                )
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                ) =>
            {
                Turn::Wait
            }
            Err(_) => Turn::Close,
        };
        match turn {
            Turn::Wait => {}
            Turn::Close => self.close(token),
            Turn::Thread(pending) => self.hand_over(token, pending),
        }
    }

    /// Closes the connection `token`: it stops counting before its client can see it
    /// closed (a client that opens its next connection once it sees this one closed, as
    /// a resolver keeping to the connections allowed per client does, is never refused
    /// for this one).
    fn close(&mut self, token: u64) {
        if let Some(conn) = self.conns.remove(&token) {
            let _ = epoll::delete(&self.epoll, &conn.stream);
            drop(conn.slot);
            let _ = conn.stream.shutdown(Shutdown::Both);
        }
    }

    /// Hands the connection `token` to a thread of its own, which writes what is
    /// `pending` of an answer and serves its next requests.
    fn hand_over(&mut self, token: u64, pending: Option<Pending>) {
        let Some(conn) = self.conns.remove(&token) else {
            return;
        };
        // The lines of its answers so far come before those of its thread.
        self.write_lines();
        let _ = epoll::delete(&self.epoll, &conn.stream);
        let (handler, log, limits) = (self.handler.clone(), self.log.clone(), self.limits);
        let spawned = std::thread::Builder::new()
            .stack_size(THREAD_STACK)
            .spawn(move || {
                let Conn {
                    mut stream,
                    client,
                    slot,
                    buf,
                    served,
                    ..
                } = conn;
                if stream.set_nonblocking(false).is_ok() {
                    let at = At { buf, served };
                    connection(&mut stream, client, &limits, &*handler, &*log, at, pending);
                }
                drop(slot);
                let _ = stream.shutdown(Shutdown::Both);
            });
        if let Err(e) = spawned {
            self.complain(&format!("cannot start a connection's thread: {e}"));
        }
    }

    /// Writes the lines of the requests answered since the last time.
    fn write_lines(&mut self) {
        if !self.lines.is_empty() {
            (self.log_lines)(&self.lines);
            self.lines.clear();
        }
    }

    /// Gives up the connections past their time: one that sent nothing more is closed,
    /// one in the middle of a head is answered `408` (what the socket takes at once).
    fn sweep(&mut self, now: Instant) {
        let late: Vec<u64> = self
            .conns
            .iter()
            .filter(|(_, c)| c.deadline <= now)
            .map(|(t, _)| *t)
            .collect();
        for token in late {
            if let Some(conn) = self.conns.get_mut(&token) {
                if !conn.buf.is_empty() {
                    refuse_and_close(&mut conn.stream, &self.limits, 408, "request timeout\n");
                }
            }
            self.close(token);
        }
    }
}

/// Answers on the event loop the requests whose heads `conn` holds, as long as they are
/// quick and their answers go out at once.
fn answer_on_loop(
    conn: &mut Conn,
    limits: &Limits,
    handler: &Handler,
    quick: &Quick,
    log: &mut Vec<String>,
) -> Turn {
    loop {
        if conn.buf.is_empty() {
            return Turn::Wait;
        }
        if conn.served >= limits.max_requests {
            return Turn::Close;
        }
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut parsed = httparse::Request::new(&mut headers);
        let head_len = match parsed.parse(&conn.buf) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) if conn.buf.len() < limits.max_head => return Turn::Wait,
            // Too large, or not HTTP: its thread answers as it answers any other head.
            _ => return Turn::Thread(None),
        };
        let (Some(method), Some(target), Some(version)) =
            (parsed.method, parsed.path, parsed.version)
        else {
            return Turn::Thread(None);
        };
        let frame = match framing(parsed.headers, version, conn.served, limits) {
            Ok(frame) if !frame.has_body => frame,
            _ => return Turn::Thread(None),
        };
        let target = crate::routes::origin_form(target);
        if !(method == "GET" || method == "HEAD") || !quick(method, target) {
            return Turn::Thread(None);
        }
        let now = SystemClock::now();
        let response = handler(&Request {
            method,
            target,
            client: conn.client,
            now,
            headers: parsed.headers,
            form: None,
        });
        for line in &response.log {
            log.push(format!("ibi-archive: {line}"));
        }
        let line = request_line(conn.client, method, target, &response);
        let shown_target = shown(target).to_string();
        let head_only = method == "HEAD";
        let keep_alive = frame.keep_alive;
        conn.buf.drain(..head_len);
        conn.served += 1;
        conn.deadline = Instant::now()
            + match conn.buf.is_empty() {
                true => limits.idle_timeout,
                false => limits.head_timeout,
            };
        let Ok((wire, rest)) = wire(response, head_only, keep_alive, now) else {
            log.push(line);
            return Turn::Close;
        };
        // What the socket takes now; a thread writes the rest, waiting on the client.
        let written = match (&conn.stream).write(&wire.bytes) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
            Err(_) => {
                log.push(line);
                return Turn::Close;
            }
        };
        let pending = Pending {
            bytes: wire.bytes,
            written,
            file: rest,
            shrank: wire.shrank,
            keep_alive,
            shown_target,
            line,
        };
        if pending.written < pending.bytes.len() || pending.file.is_some() {
            return Turn::Thread(Some(pending));
        }
        log.push(pending.line);
        if pending.shrank {
            log.push(format!(
                "ibi-archive: {}: {}",
                pending.shown_target,
                shrank()
            ));
        }
        if !keep_alive || pending.shrank {
            return Turn::Close;
        }
    }
}

/// What is left to write of an answer begun on the event loop.
struct Pending {
    bytes: Vec<u8>,
    written: usize,
    /// A large file's part, sent after the bytes.
    file: Option<FilePart>,
    /// The file shrank before its bytes were read: the answer falls short.
    shrank: bool,
    keep_alive: bool,
    shown_target: String,
    /// The request's line in the log, written once the answer is.
    line: String,
}

impl Pending {
    /// Writes the rest of the answer, waiting on the client as [`send`] does; whether the
    /// connection goes on.
    fn finish(self, stream: &mut TcpStream, limits: &Limits, log: &Log) -> bool {
        // The request's line before the rest of its answer (see `connection`).
        log(&self.line);
        let mut sent = stream.write_all(&self.bytes[self.written..]);
        if sent.is_ok() {
            if let Some((file, start, len)) = &self.file {
                sent = send_file(stream, file, *start, *len, limits.write_timeout);
            }
        }
        if sent.is_ok() && self.shrank {
            sent = Err(shrank());
        }
        if let Err(e) = &sent {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                log(&format!("ibi-archive: {}: {e}", self.shown_target));
            }
        }
        sent.is_ok() && self.keep_alive
    }
}

/// The first 200 characters of a request's target, as the log shows it.
fn shown(target: &str) -> &str {
    if target.len() <= 200 {
        return target;
    }
    match target.char_indices().nth(200) {
        Some((end, _)) => &target[..end],
        None => target,
    }
}

/// The request's line in the log: client, request, status, length.
fn request_line(client: IpAddr, method: &str, target: &str, response: &Response) -> String {
    format!(
        "{client} \"{method} {}\" {} {}",
        shown(target),
        response.status,
        response.len()
    )
}

/// Logs `line` unless a complaint was logged less than 10 s ago (a loop short of
/// descriptors or memory must not flood the log): the accept loop's complaints are of one
/// kind, and those kept quiet are dropped.
fn complain(complaints: &mut Complaints, log: &Log, line: &str) {
    complaints.complain("accept loop", line, Instant::now(), &mut |l| log(l));
}

/// The connections open, in all and per client address.
#[derive(Default)]
struct Open {
    counts: Mutex<(usize, HashMap<IpAddr, usize>)>,
}

/// A connection counted in [`Open`] until it is dropped.
struct Slot {
    open: Arc<Open>,
    client: IpAddr,
}

impl Open {
    fn take(self: &Arc<Open>, client: IpAddr, limits: &Limits) -> Option<Slot> {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let per_client = counts.1.get(&client).copied().unwrap_or(0);
        if counts.0 >= limits.max_connections || per_client >= limits.max_per_client {
            return None;
        }
        counts.0 += 1;
        counts.1.insert(client, per_client + 1);
        Some(Slot {
            open: self.clone(),
            client,
        })
    }

    fn total(&self) -> usize {
        self.counts.lock().unwrap_or_else(|e| e.into_inner()).0
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.open.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.0 -= 1;
        if let Some(n) = counts.1.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                counts.1.remove(&self.client);
            }
        }
    }
}

/// Answers `503` ([`TOO_MANY`]) and closes: after reading the request, in a thread of its
/// own, when fewer than [`REFUSING`] are; else at once (see [`REFUSING`]).
fn refuse_after_request(stream: TcpStream, refusing: &Arc<AtomicUsize>, limits: &Limits) {
    if refusing.fetch_add(1, Ordering::SeqCst) >= REFUSING {
        refusing.fetch_sub(1, Ordering::SeqCst);
        return refuse(stream, 503, TOO_MANY);
    }
    let limits = Limits {
        head_timeout: limits.head_timeout.min(REFUSAL_WAIT),
        write_timeout: limits.write_timeout.min(REFUSAL_WAIT),
        ..*limits
    };
    let ended = refusing.clone();
    let spawned = std::thread::Builder::new()
        .stack_size(THREAD_STACK)
        .spawn(move || {
            let mut stream = stream;
            let _ = stream.set_write_timeout(Some(limits.write_timeout));
            let mut buf = Vec::new();
            // Whatever came (or nothing, within the wait), the answer is the refusal.
            let _ = read_head(&mut stream, &mut buf, REFUSAL_WAIT, &limits, &mut None);
            refuse_and_close(&mut stream, &limits, 503, TOO_MANY);
            ended.fetch_sub(1, Ordering::SeqCst);
            let _ = stream.shutdown(Shutdown::Both);
        });
    if spawned.is_err() {
        // The connection, in the closure not run, is closed.
        refusing.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Answers `status` and closes, without reading the request, never waiting on the client.
fn refuse(stream: TcpStream, status: u16, text: &str) {
    let _ = stream.set_nonblocking(true);
    let head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        crate::cgi::reason(status),
        text.len()
    );
    let _ = (&stream).write(head.as_bytes());
    let _ = stream.shutdown(Shutdown::Both);
}

/// Why no request head came.
enum NoHead {
    /// The client closed the connection, or sent nothing before the idle timeout.
    Gone,
    /// Part of a head came, but not the rest within the head timeout.
    TooSlow,
    TooLarge,
}

/// An answer that ends the connection (closed by the caller of [`connection`]).
fn refuse_and_close(stream: &mut TcpStream, limits: &Limits, status: u16, text: &str) {
    let _ = send(
        stream,
        Response::text(status, text),
        false,
        false,
        SystemClock::now(),
        limits.write_timeout,
    );
}

/// Where a connection's thread takes it up: what has come of its next request, and how
/// many it has answered.
struct At {
    buf: Vec<u8>,
    served: usize,
}

/// How a request head frames its request, once checked.
struct Framing {
    /// The `Content-Length`, if one was given (lowercased, trimmed).
    length: Option<String>,
    chunked: bool,
    has_body: bool,
    /// Whether the connection goes on after the answer.
    keep_alive: bool,
    /// `Content-Type: application/x-www-form-urlencoded`.
    form_type: bool,
}

/// How the head of the request `served` (counted from 0) of a connection frames it, or
/// the refusal that ends the connection.
fn framing(
    headers: &[httparse::Header<'_>],
    version: u8,
    served: usize,
    limits: &Limits,
) -> Result<Framing, (u16, &'static str)> {
    // One pass over the fields: those framing reads, as received (trimmed, lowercased).
    let (mut lengths, mut chunked, mut hosts) = (Vec::new(), false, 0usize);
    let (mut connection_header, mut content_type) = (String::new(), None::<String>);
    let value =
        |h: &httparse::Header<'_>| String::from_utf8_lossy(h.value).trim().to_ascii_lowercase();
    for h in headers {
        let name = h.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            lengths.push(value(h));
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            chunked = true;
        } else if name.eq_ignore_ascii_case(b"host") {
            hosts += 1;
        } else if name.eq_ignore_ascii_case(b"connection") {
            if !connection_header.is_empty() {
                connection_header.push(',');
            }
            connection_header.push_str(&value(h));
        } else if name.eq_ignore_ascii_case(b"content-type") && content_type.is_none() {
            content_type = Some(value(h));
        }
    }
    // RFC 9112 §6.3: two Content-Lengths, or one beside Transfer-Encoding, is how
    // requests are smuggled past a proxy: refused, and the connection closed.
    if lengths.len() > 1 || (chunked && !lengths.is_empty()) {
        return Err((400, "ambiguous request length\n"));
    }
    // RFC 9112 §3.2: an HTTP/1.1 request without exactly one Host is refused.
    if version == 1 && hosts != 1 {
        return Err((400, "one Host header is required\n"));
    }
    let has_body = chunked || lengths.first().is_some_and(|l| l != "0");
    // A body is never read: its connection ends after the answer. So does the last one a
    // connection serves, and its answer says so, so that a client keeping connections
    // does not send the next request where nobody reads it.
    let keep_alive = !has_body
        && served + 1 < limits.max_requests
        && match version {
            1 => !connection_header.contains("close"),
            _ => connection_header.contains("keep-alive"),
        };
    let form_type = content_type.is_some_and(|t| {
        t.split(';').next().unwrap_or("").trim() == "application/x-www-form-urlencoded"
    });
    Ok(Framing {
        length: lengths.into_iter().next(),
        chunked,
        has_body,
        keep_alive,
        form_type,
    })
}

/// Serves the requests of one connection from `at` on, after writing what is `pending`
/// of the last answer; its caller closes it once it returns.
fn connection(
    stream: &mut TcpStream,
    client: IpAddr,
    limits: &Limits,
    handler: &Handler,
    log: &Log,
    at: At,
    pending: Option<Pending>,
) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(limits.write_timeout));
    if let Some(pending) = pending {
        if !pending.finish(stream, limits, log) {
            return;
        }
    }
    let At { mut buf, served } = at;
    // The read timeout last set: set again only when it changes.
    let mut timeout = None;
    for served in served..limits.max_requests {
        let first_wait = if served == 0 {
            limits.head_timeout.min(limits.idle_timeout)
        } else {
            limits.idle_timeout
        };
        let head_len = match read_head(stream, &mut buf, first_wait, limits, &mut timeout) {
            Ok(n) => n,
            Err(NoHead::Gone) => return,
            Err(NoHead::TooSlow) => {
                return refuse_and_close(stream, limits, 408, "request timeout\n")
            }
            Err(NoHead::TooLarge) => {
                return refuse_and_close(stream, limits, 431, "request header fields too large\n")
            }
        };
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut parsed = httparse::Request::new(&mut headers);
        let status = parsed.parse(&buf[..head_len]);
        let (method, target, version) = match (status, parsed.method, parsed.path, parsed.version) {
            (Ok(httparse::Status::Complete(_)), Some(m), Some(p), Some(v)) => (m, p, v),
            _ => return refuse_and_close(stream, limits, 400, "bad request\n"),
        };
        let frame = match framing(parsed.headers, version, served, limits) {
            Ok(frame) => frame,
            Err((status, text)) => return refuse_and_close(stream, limits, status, text),
        };
        let (chunked, has_body, keep_alive) = (frame.chunked, frame.has_body, frame.keep_alive);
        let target = crate::routes::origin_form(target);
        // The one body read: a form POSTed (OAI-PMH lets a harvester send its arguments
        // so), of a length given and bounded, within the head's timeout.
        let mut form = None;
        if method == "POST" && frame.form_type && !chunked {
            match frame.length.as_deref().map(str::parse::<usize>) {
                Some(Ok(n)) if n <= ::ibi::query::MAX_QUERY_LEN => {
                    match read_body(stream, &buf[head_len..], n, limits, &mut timeout) {
                        Ok(body) => form = Some(body),
                        Err(NoHead::Gone) => return,
                        Err(_) => {
                            return refuse_and_close(stream, limits, 408, "request timeout\n")
                        }
                    }
                }
                Some(Ok(_)) => {
                    return refuse_and_close(stream, limits, 413, "request body too large\n")
                }
                _ => {}
            }
        }
        let now = SystemClock::now();
        let response = if has_body && (method == "GET" || method == "HEAD") {
            Response::text(400, "a GET or HEAD request has no body\n")
        } else {
            handler(&Request {
                method,
                target,
                client,
                now,
                headers: parsed.headers,
                form: form.as_deref(),
            })
        };
        let shown_target = shown(target).to_string();
        for line in &response.log {
            log(&format!("ibi-archive: {line}"));
        }
        // The request's line is in the log before its answer reaches the client: a
        // client that asks again once answered finds its requests' lines in order.
        log(&request_line(client, method, target, &response));
        let sent = send(
            stream,
            response,
            method == "HEAD",
            keep_alive,
            now,
            limits.write_timeout,
        );
        // A client that goes away or stops reading is its own affair; a file cut short
        // is the Archive's (what the CGI program logs too).
        if let Err(e) = &sent {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                log(&format!("ibi-archive: {shown_target}: {e}"));
            }
        }
        if sent.is_err() || !keep_alive {
            return;
        }
        buf.drain(..head_len);
    }
}

/// The `length` bytes of a request body, `read` of them already received, the rest read
/// within [`Limits::head_timeout`].
fn read_body(
    stream: &mut TcpStream,
    read: &[u8],
    length: usize,
    limits: &Limits,
    timeout: &mut Option<Duration>,
) -> Result<Vec<u8>, NoHead> {
    let mut body = read[..read.len().min(length)].to_vec();
    let deadline = Instant::now() + limits.head_timeout;
    while body.len() < length {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(NoHead::TooSlow);
        }
        let room = length - body.len();
        read_some(stream, &mut body, room, left, timeout)?;
    }
    Ok(body)
}

/// One read of at most `room` bytes (and 4 KiB) appended to `buf`, waiting at most
/// `left`: how many came, 0 when the wait ended or was interrupted (the caller looks at
/// its deadline); `Gone` when the client closed the connection or the read failed.
/// `timeout` is the socket's read timeout as last set (`None`: not known): the wait is
/// `left` rounded down to 10 ms, so that the same wait on the next request (`left` a few
/// microseconds shorter) needs no system call; a wait cut short by the rounding comes
/// back here with what is left.
fn read_some(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    room: usize,
    left: Duration,
    timeout: &mut Option<Duration>,
) -> Result<usize, NoHead> {
    const STEP: u128 = 10_000_000;
    let wait = match left.as_nanos() {
        // A zero timeout is none at all: the shortest one instead.
        0 => Duration::from_nanos(1),
        n if n < STEP => left,
        n => Duration::from_nanos(u64::try_from(n - n % STEP).unwrap_or(u64::MAX)),
    };
    if *timeout != Some(wait) {
        *timeout = stream.set_read_timeout(Some(wait)).ok().map(|()| wait);
    }
    let mut chunk = [0u8; 4096];
    let room = room.min(chunk.len());
    match stream.read(&mut chunk[..room]) {
        Ok(0) => Err(NoHead::Gone),
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            Ok(n)
        }
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(0),
        // The read timeout: the loop sees the deadline passed.
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ) =>
        {
            Ok(0)
        }
        Err(_) => Err(NoHead::Gone),
    }
}

/// Reads until `buf` holds a whole request head, as httparse reads one (lines may end
/// with CRLF or a bare LF); its length. The first byte is awaited for `first_wait`, the
/// whole head for [`Limits::head_timeout`] from its first byte.
fn read_head(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    first_wait: Duration,
    limits: &Limits,
    timeout: &mut Option<Duration>,
) -> Result<usize, NoHead> {
    let started = Instant::now();
    let mut deadline = match buf.is_empty() {
        true => started + first_wait,
        false => started + limits.head_timeout,
    };
    loop {
        if !buf.is_empty() {
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            match httparse::Request::new(&mut headers).parse(buf) {
                Ok(httparse::Status::Complete(n)) => return Ok(n),
                Ok(httparse::Status::Partial) => {}
                Err(httparse::Error::TooManyHeaders) => return Err(NoHead::TooLarge),
                // A head that cannot parse: as far as it goes, for the caller to refuse.
                Err(_) => return Ok(buf.len()),
            }
        }
        if buf.len() >= limits.max_head {
            return Err(NoHead::TooLarge);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(if buf.is_empty() {
                NoHead::Gone
            } else {
                NoHead::TooSlow
            });
        }
        let was_empty = buf.is_empty();
        let room = limits.max_head - buf.len();
        if read_some(stream, buf, room, left, timeout)? > 0 && was_empty {
            deadline = Instant::now() + limits.head_timeout;
        }
    }
}

/// Writes `response` (its body unless `head_only`), dated `date` (POSIX seconds). A
/// client that reads nothing for [`Limits::write_timeout`] fails the write, which ends
/// its connection.
fn send(
    stream: &mut TcpStream,
    response: Response,
    head_only: bool,
    keep_alive: bool,
    date: i64,
    write_timeout: Duration,
) -> io::Result<()> {
    let (wire, rest) = wire(response, head_only, keep_alive, date)?;
    stream.write_all(&wire.bytes)?;
    if let Some((file, start, len)) = rest {
        send_file(stream, &file, start, len, write_timeout)?;
    }
    // The file shrank since it was opened: what there was is sent, and the connection
    // must end, its framing broken (as by sendfile).
    if wire.shrank {
        return Err(shrank());
    }
    stream.flush()
}

fn shrank() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the file shrank while it was sent",
    )
}

/// `len` bytes of a file from offset `start`: `(file, start, len)`.
type FilePart = (File, u64, u64);

/// An answer's bytes, as written in one go.
struct Wire {
    /// The head, and the body when it is bytes or a small file.
    bytes: Vec<u8>,
    /// The small file was shorter than its length when it was read.
    shrank: bool,
}

/// The bytes of `response` (its body unless `head_only`), dated `date`: the head with a
/// small body, or with a small file read from its descriptor (one write, one segment, as
/// lighttpd sends a small file); and the part of a larger file to send after them by
/// sendfile(2).
fn wire(
    response: Response,
    head_only: bool,
    keep_alive: bool,
    date: i64,
) -> io::Result<(Wire, Option<FilePart>)> {
    let mut head = String::with_capacity(512);
    let _ = write!(
        head,
        "HTTP/1.1 {} {}\r\n",
        response.status,
        crate::cgi::reason(response.status)
    );
    for (name, value) in &response.headers {
        let _ = write!(head, "{name}: {value}\r\n");
    }
    // A 304 has no body, and no Content-Length but the 200's (RFC 9110 §8.6): none.
    if response.status != 304 {
        let _ = write!(head, "Content-Length: {}\r\n", response.len());
    }
    head.push_str("Date: ");
    head.push_str(&crate::http::http_date(date).unwrap_or_default());
    head.push_str(match keep_alive {
        true => "\r\nConnection: keep-alive\r\n\r\n",
        false => "\r\nConnection: close\r\n\r\n",
    });
    let mut bytes = head.into_bytes();
    let mut shrank = false;
    let rest = match response.body {
        Body::Bytes(body) => {
            if !head_only {
                bytes.extend_from_slice(&body);
            }
            None
        }
        Body::File(file, start, len) if !head_only && len <= SMALL_FILE => {
            let head_len = bytes.len();
            bytes.resize(head_len + len as usize, 0);
            let read = read_at(&file, &mut bytes[head_len..], start)?;
            bytes.truncate(head_len + read);
            shrank = (read as u64) < len;
            None
        }
        Body::File(..) if head_only => None,
        Body::File(file, start, len) => Some((file, start, len)),
    };
    Ok((Wire { bytes, shrank }, rest))
}

/// Reads `buf.len()` bytes of `file` from offset `offset`, fewer only at its end: how
/// many.
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Sends `len` bytes of `file` from offset `start` with sendfile(2), the socket
/// non-blocking: each step waits at most `timeout` for the client to make room, so a
/// client that stops reading loses its connection instead of holding a thread for good.
fn send_file(
    stream: &TcpStream,
    file: &File,
    start: u64,
    len: u64,
    timeout: Duration,
) -> io::Result<()> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let wait = Timespec {
        tv_sec: timeout.as_secs() as i64,
        tv_nsec: i64::from(timeout.subsec_nanos()),
    };
    stream.set_nonblocking(true)?;
    // sendfile(2) moves `offset` on; `end - offset` is what is left.
    let mut offset = start;
    let end = start.saturating_add(len);
    let started = Instant::now();
    let result = loop {
        if offset >= end {
            break Ok(());
        }
        // A client that reads a byte now and then keeps its connection no longer than
        // the write timeout: past it, it must have taken MIN_RATE bytes a second.
        let elapsed = started.elapsed();
        if elapsed > timeout && ((offset - start) as f64) < MIN_RATE * elapsed.as_secs_f64() {
            break Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client reads slower than the minimum rate",
            ));
        }
        let chunk = (end - offset).min(1 << 20) as usize;
        match rustix::fs::sendfile(stream, file, Some(&mut offset), chunk) {
            // The file shrank while it was sent: the framing is broken, so the
            // connection must end.
            Ok(0) => {
                break Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the file shrank while it was sent",
                ))
            }
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::AGAIN) => {
                let mut fds = [PollFd::new(stream, PollFlags::OUT)];
                match poll(&mut fds, Some(&wait)) {
                    Ok(0) => {
                        break Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            "the client read nothing for the write timeout",
                        ))
                    }
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(e) => break Err(e.into()),
                }
            }
            Err(e) => break Err(e.into()),
        }
    };
    let _ = stream.set_nonblocking(false);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_counted_per_client_and_in_all() {
        let limits = Limits {
            max_connections: 3,
            max_per_client: 2,
            ..Limits::default()
        };
        let open = Arc::new(Open::default());
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        let s1 = open.take(a, &limits).unwrap();
        let _s2 = open.take(a, &limits).unwrap();
        assert!(open.take(a, &limits).is_none());
        let _s3 = open.take(b, &limits).unwrap();
        assert!(open.take(b, &limits).is_none());
        drop(s1);
        assert_eq!(open.total(), 2);
        assert!(open.take(a, &limits).is_some());
    }
}
