//! The embedded HTTP/1.1 server of `ibi-archive serve`: one thread per connection,
//! requests parsed by `httparse`, and a bound on everything a client can hold — the
//! size and time of a request head, the time a kept-alive connection may sit idle, the
//! time a write may make no progress, the connections open at once (in all and per
//! client address). A slow or stalled client holds its own thread and nothing else; an
//! accept that fails for want of descriptors is retried, never the end of the loop.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::logline::Complaints;
use crate::time::{http_date, SystemClock};

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
    /// [`crate::query::MAX_QUERY_LEN`] bytes); no other body is ever read.
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
    /// Headers besides Content-Length, Connection and Date.
    pub headers: Vec<(String, String)>,
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

/// Serves `listener` until `stop` is set.
pub fn serve(
    listener: TcpListener,
    limits: Limits,
    stop: &AtomicBool,
    handler: Arc<Handler>,
    log: Arc<Log>,
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    let open = Arc::new(Open::default());
    let refusing = Arc::new(AtomicUsize::new(0));
    let mut complaints = Complaints::dropped(Duration::from_secs(10));
    while !stop.load(Ordering::SeqCst) {
        let mut fds = [rustix::event::PollFd::new(
            &listener,
            rustix::event::PollFlags::IN,
        )];
        let timeout = rustix::event::Timespec {
            tv_sec: 0,
            tv_nsec: 200_000_000,
        };
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(0) | Err(rustix::io::Errno::INTR) => continue,
            Ok(_) => {}
            // Out of memory for the poll: wait, as for EMFILE below.
            Err(e) => {
                complain(
                    &mut complaints,
                    &*log,
                    &format!("cannot poll: {e}; retrying"),
                );
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        }
        let (stream, peer) = match listener.accept() {
            Ok(accepted) => accepted,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => {
                // Out of descriptors or memory: the connection waits in the backlog until
                // one is freed. Said once in a while, never the end of the server.
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
                ) {
                    let line = format!("cannot accept a connection: {e}; retrying");
                    complain(&mut complaints, &*log, &line);
                    std::thread::sleep(Duration::from_millis(50));
                }
                continue;
            }
        };
        let client = peer.ip().to_canonical();
        let Some(slot) = open.take(client, &limits) else {
            refuse_after_request(stream, &refusing, &limits);
            continue;
        };
        let (handler, log2) = (handler.clone(), log.clone());
        let spawned = std::thread::Builder::new()
            .stack_size(THREAD_STACK)
            .spawn(move || {
                let mut stream = stream;
                connection(&mut stream, client, &limits, &*handler, &*log2);
                // The connection stops counting before its client can see it closed: a
                // client that opens its next connection once it sees this one closed (a
                // resolver keeping to the connections allowed per client does) is never
                // refused for this one.
                drop(slot);
                let _ = stream.shutdown(Shutdown::Both);
            });
        if let Err(e) = spawned {
            let line = format!("cannot start a connection's thread: {e}");
            complain(&mut complaints, &*log, &line);
        }
    }
    // A moment for the answers under way, then the process may end.
    let until = Instant::now() + Duration::from_secs(2);
    while open.total() > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
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
            let _ = read_head(&mut stream, &mut buf, REFUSAL_WAIT, &limits);
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

/// Serves the requests of one connection; its caller closes it once it returns.
fn connection(
    stream: &mut TcpStream,
    client: IpAddr,
    limits: &Limits,
    handler: &Handler,
    log: &Log,
) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(limits.write_timeout));
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    for served in 0..limits.max_requests {
        let first_wait = if served == 0 {
            limits.head_timeout.min(limits.idle_timeout)
        } else {
            limits.idle_timeout
        };
        let head_len = match read_head(stream, &mut buf, first_wait, limits) {
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
        let values = |name: &str| -> Vec<String> {
            parsed
                .headers
                .iter()
                .filter(|h| h.name.eq_ignore_ascii_case(name))
                .map(|h| String::from_utf8_lossy(h.value).trim().to_ascii_lowercase())
                .collect()
        };
        let lengths = values("content-length");
        let chunked = !values("transfer-encoding").is_empty();
        // RFC 9112 §6.3: two Content-Lengths, or one beside Transfer-Encoding, is how
        // requests are smuggled past a proxy: refused, and the connection closed.
        if lengths.len() > 1 || (chunked && !lengths.is_empty()) {
            return refuse_and_close(stream, limits, 400, "ambiguous request length\n");
        }
        // RFC 9112 §3.2: an HTTP/1.1 request without exactly one Host is refused.
        if version == 1 && values("host").len() != 1 {
            return refuse_and_close(stream, limits, 400, "one Host header is required\n");
        }
        let has_body = chunked || lengths.first().is_some_and(|l| l != "0");
        let connection_header = values("connection").join(",");
        // A body is never read: its connection ends after the answer. So does the last
        // one a connection serves, and its answer says so, so that a client keeping
        // connections does not send the next request where nobody reads it.
        let keep_alive = !has_body
            && served + 1 < limits.max_requests
            && match version {
                1 => !connection_header.contains("close"),
                _ => connection_header.contains("keep-alive"),
            };
        let target = crate::routes::origin_form(target);
        // The one body read: a form POSTed (OAI-PMH lets a harvester send its arguments
        // so), of a length given and bounded, within the head's timeout.
        let form_type = values("content-type").first().is_some_and(|t| {
            t.split(';').next().unwrap_or("").trim() == "application/x-www-form-urlencoded"
        });
        let mut form = None;
        if method == "POST" && form_type && !chunked {
            match lengths.first().map(|l| l.parse::<usize>()) {
                Some(Ok(n)) if n <= crate::query::MAX_QUERY_LEN => {
                    match read_body(stream, &buf[head_len..], n, limits) {
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
        let shown_target: String = target.chars().take(200).collect();
        for line in &response.log {
            log(&format!("ibi-archive: {line}"));
        }
        let (status, len) = (response.status, response.len());
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
        log(&format!(
            "{client} \"{method} {shown_target}\" {status} {len}"
        ));
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
) -> Result<Vec<u8>, NoHead> {
    let mut body = read[..read.len().min(length)].to_vec();
    let deadline = Instant::now() + limits.head_timeout;
    while body.len() < length {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(NoHead::TooSlow);
        }
        let room = length - body.len();
        read_some(stream, &mut body, room, left)?;
    }
    Ok(body)
}

/// One read of at most `room` bytes (and 4 KiB) appended to `buf`, waiting at most
/// `left`: how many came, 0 when the wait ended or was interrupted (the caller looks at
/// its deadline); `Gone` when the client closed the connection or the read failed.
fn read_some(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    room: usize,
    left: Duration,
) -> Result<usize, NoHead> {
    let _ = stream.set_read_timeout(Some(left));
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
        if read_some(stream, buf, room, left)? > 0 && was_empty {
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
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        response.status,
        crate::cgi::reason(response.status)
    );
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    // A 304 has no body, and no Content-Length but the 200's (RFC 9110 §8.6): none.
    if response.status != 304 {
        head.push_str(&format!("Content-Length: {}\r\n", response.len()));
    }
    head.push_str(&format!(
        "Date: {}\r\nConnection: {}\r\n\r\n",
        http_date(date).unwrap_or_default(),
        if keep_alive { "keep-alive" } else { "close" }
    ));
    let mut bytes = head.into_bytes();
    match response.body {
        Body::Bytes(body) => {
            if !head_only {
                bytes.extend_from_slice(&body);
            }
            stream.write_all(&bytes)?;
        }
        // One write, one segment: the head and the bytes of a small file together.
        Body::File(file, start, len) if !head_only && len <= SMALL_FILE => {
            let head_len = bytes.len();
            bytes.resize(head_len + len as usize, 0);
            let read = read_at(&file, &mut bytes[head_len..], start)?;
            bytes.truncate(head_len + read);
            stream.write_all(&bytes)?;
            // The file shrank since it was opened: what there was is sent, and the
            // connection must end, its framing broken (as by sendfile below).
            if (read as u64) < len {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the file shrank while it was sent",
                ));
            }
        }
        Body::File(file, start, len) => {
            stream.write_all(&bytes)?;
            if !head_only {
                send_file(stream, &file, start, len, write_timeout)?;
            }
        }
    }
    stream.flush()
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
