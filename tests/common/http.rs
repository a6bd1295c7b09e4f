//! A deliberately small HTTP/1.1 client over `std::net::TcpStream`.
//!
//! It sends the request target exactly as given (no re-encoding, so a test can
//! ask for `/doc/Relat%f3rio%20Final.pdf` or put raw bytes in the request line),
//! shows every response header as received, and understands the three ways a
//! response body can end: `Transfer-Encoding: chunked` (what Apache's mod_cgid
//! uses on a keep-alive connection), `Content-Length`, or the server closing
//! the connection.  4xx and 5xx are ordinary responses, not errors.
//!
//! [`whole_response`] and [`read_response`] check what a test of a server
//! under attack must see: well-formed HTTP/1.1, one response and nothing after it.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// How long a test waits for one response before giving up (and panicking).
pub const HTTP_TIMEOUT: Duration = Duration::from_secs(30);

/// One HTTP response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The status line and header lines, as received (without the empty line).
    pub head: String,
    pub status: u16,
    /// Header fields in the order received; names as sent by the server.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked; empty for HEAD, 1xx, 204 and 304.
    pub body: Vec<u8>,
}

impl Response {
    /// The first header with this name (compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }

    /// The Content-Type header, or "" when there is none.
    pub fn content_type(&self) -> &str {
        self.header("content-type").unwrap_or("")
    }

    /// The body as text (invalid UTF-8 replaced), for messages and assertions.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Panics unless it is well-formed HTTP/1.1: the status line `HTTP/1.1 NNN …`, each
    /// header line `name: value` (a name of visible ASCII, a value of visible ASCII,
    /// spaces and tabs), and a body as long as its Content-Length says.
    fn assert_well_formed(&self) {
        let mut lines = self.head.split("\r\n");
        let status_line = lines.next().unwrap_or("");
        assert!(
            status_line
                .strip_prefix("HTTP/1.1 ")
                .and_then(|s| s.get(..3))
                .is_some_and(|s| s.bytes().all(|b| b.is_ascii_digit())),
            "bad status line {status_line:?}"
        );
        for line in lines {
            let (name, value) = line
                .split_once(": ")
                .unwrap_or_else(|| panic!("bad header line {line:?}"));
            assert!(
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic()),
                "{line:?}"
            );
            assert!(
                value
                    .bytes()
                    .all(|b| b == b'\t' || (0x20..0x7f).contains(&b)),
                "{line:?}"
            );
        }
        if let Some(len) = self.header("content-length") {
            assert_eq!(
                self.body.len(),
                len.parse::<usize>().unwrap(),
                "body of {status_line}"
            );
        }
    }
}

/// The response `raw` holds, read until the server closed the connection: `Err` when it
/// is not a whole response.
pub fn response_of(raw: &[u8]) -> Result<Response, String> {
    parse_response_at_eof(raw, false)
}

/// The one response `raw` holds, all of it: panics unless it is well-formed
/// ([`Response::assert_well_formed`]) and nothing follows it.
pub fn whole_response(raw: &[u8]) -> Response {
    let head = parse_head(raw)
        .unwrap_or_else(|| panic!("no complete head in {:?}", String::from_utf8_lossy(raw)))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        std::str::from_utf8(&raw[..head.body_start]).is_ok(),
        "a head of text"
    );
    let response = Response {
        head: head.text,
        status: head.status,
        headers: head.headers,
        body: raw[head.body_start..].to_vec(),
    };
    response.assert_well_formed();
    response
}

/// `GET url` with `Connection: close`.
pub fn http_get(url: &str) -> Response {
    http_request("GET", url)
}

/// `GET url` from the loopback address `source` (127.0.0.2, say): the server sees that
/// address as the client's.
pub fn http_get_from(source: IpAddr, url: &str) -> Response {
    let (authority, target) = split_url(url);
    let req = format!(
        "GET {target} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: ibi-archive-tests\r\nConnection: close\r\n\r\n"
    );
    http_raw_from(Some(source), authority, req.as_bytes(), false)
}

/// A connection to `addr` from the local address `source` (any port). Close-on-exec, as
/// every descriptor std opens: the servers other tests start at the same time must not
/// inherit it.
pub fn connect_from(source: IpAddr, addr: SocketAddr) -> std::io::Result<TcpStream> {
    use rustix::net::{bind, connect, socket_with, AddressFamily, SocketFlags, SocketType};
    let family = match source {
        IpAddr::V4(_) => AddressFamily::INET,
        IpAddr::V6(_) => AddressFamily::INET6,
    };
    let fd = socket_with(family, SocketType::STREAM, SocketFlags::CLOEXEC, None)?;
    bind(&fd, &SocketAddr::new(source, 0))?;
    connect(&fd, &addr)?;
    Ok(TcpStream::from(fd))
}

/// `METHOD url` with no body (POST is sent with `Content-Length: 0`).
pub fn http_request(method: &str, url: &str) -> Response {
    http_request_with_body(method, url, &[], b"")
}

/// `METHOD url` with extra header lines and a body (a Content-Length header is
/// added whenever the body is non-empty or the method is POST or PUT).
pub fn http_request_with_body(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let (authority, target) = split_url(url);
    let mut req = Vec::new();
    write!(
        req,
        "{method} {target} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: ibi-archive-tests\r\nConnection: close\r\n"
    )
    .unwrap();
    for (name, value) in headers {
        write!(req, "{name}: {value}\r\n").unwrap();
    }
    if !body.is_empty() || method == "POST" || method == "PUT" {
        write!(req, "Content-Length: {}\r\n", body.len()).unwrap();
    }
    req.extend_from_slice(b"\r\n");
    req.extend_from_slice(body);
    http_raw(authority, &req, method == "HEAD")
}

/// Sends `request` (a complete HTTP/1.x request, bytes as they are) to
/// `authority` ("host:port", or a base URL such as `Server::base_url`) and
/// reads one response.  The response is complete as soon as its framing says
/// so, so a keep-alive request does not wait for the server to close.
/// `head` tells whether the request was a HEAD (whose response has no body).
pub fn http_raw(authority: &str, request: &[u8], head: bool) -> Response {
    http_raw_from(None, authority, request, head)
}

/// [`http_raw`] from the local address `source`, when given.
pub fn http_raw_from(
    source: Option<IpAddr>,
    authority: &str,
    request: &[u8],
    head: bool,
) -> Response {
    Connection::open_from(source, authority).exchange(request, head)
}

/// [`http_raw_from`], a failure to connect, to send or to read a whole response returned
/// (saying what went wrong) instead of panicking: for a load that counts its failures.
pub fn try_http_raw_from(
    source: Option<IpAddr>,
    authority: &str,
    request: &[u8],
    head: bool,
) -> Result<Response, String> {
    Connection::try_open_from(source, authority)?.try_exchange(request, head)
}

/// A connection that stays open from one request to the next (keep-alive), each
/// response read by its framing alone: a response the client could only end by the
/// server's closing the connection leaves no connection for the next request.
pub struct Connection {
    stream: TcpStream,
    authority: String,
    /// Bytes received after the last response read (the start of the next one).
    buf: Vec<u8>,
}

impl Connection {
    /// A connection to `authority` ("host:port", or a base URL such as
    /// `Server::base_url`).
    pub fn open(authority: &str) -> Connection {
        Connection::open_from(None, authority)
    }

    /// [`Connection::open`] from the local address `source`, when given.
    fn open_from(source: Option<IpAddr>, authority: &str) -> Connection {
        Connection::try_open_from(source, authority).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Connection::open_from`], what went wrong returned instead of panicking.
    fn try_open_from(source: Option<IpAddr>, authority: &str) -> Result<Connection, String> {
        let authority = authority
            .strip_prefix("http://")
            .unwrap_or(authority)
            .trim_end_matches('/');
        let addr = authority
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve {authority}: {e}"))?
            .next()
            .ok_or_else(|| format!("no address for {authority}"))?;
        let stream = match source {
            Some(source) => connect_from(source, addr),
            None => TcpStream::connect_timeout(&addr, HTTP_TIMEOUT),
        }
        .map_err(|e| format!("cannot connect to {authority}: {e}"))?;
        stream.set_read_timeout(Some(HTTP_TIMEOUT)).unwrap();
        stream.set_write_timeout(Some(HTTP_TIMEOUT)).unwrap();
        Ok(Connection {
            stream,
            authority: authority.to_string(),
            buf: Vec::new(),
        })
    }

    /// Sends `request` (bytes as they are) and reads one response. `head` tells whether
    /// the request was a HEAD (whose response has no body).
    pub fn exchange(&mut self, request: &[u8], head: bool) -> Response {
        self.try_exchange(request, head)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Connection::exchange`], what went wrong returned instead of panicking.
    pub fn try_exchange(&mut self, request: &[u8], head: bool) -> Result<Response, String> {
        let authority = &self.authority;
        self.stream
            .write_all(request)
            .map_err(|e| format!("cannot send request to {authority}: {e}"))?;
        self.read(head)
    }

    /// Reads one response.
    fn read(&mut self, head: bool) -> Result<Response, String> {
        let authority = &self.authority;
        let mut chunk = [0u8; 16 * 1024];
        loop {
            if let Some(result) = parse_response(&self.buf, head) {
                let (response, used) = result.map_err(|e| {
                    format!(
                        "bad HTTP response from {authority}: {e}\n{}",
                        String::from_utf8_lossy(&self.buf)
                    )
                })?;
                self.buf.drain(..used);
                return Ok(response);
            }
            let n = match self.stream.read(&mut chunk) {
                Ok(n) => n,
                // A signal came before any byte: nothing was read, read again (as
                // `Read::read` documents; under load it happens).
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(format!(
                        "reading response from {authority} failed after {} bytes: {e}\n{}",
                        self.buf.len(),
                        String::from_utf8_lossy(&self.buf)
                    ))
                }
            };
            if n == 0 {
                // Connection closed: a response without framing ends here.
                let buf = std::mem::take(&mut self.buf);
                return parse_response_at_eof(&buf, head).map_err(|e| {
                    format!(
                        "bad HTTP response from {authority}: {e}\n{}",
                        String::from_utf8_lossy(&buf)
                    )
                });
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

/// The responses `raw` holds one after another (the answers to pipelined requests, read
/// until the server closed the connection), each checked as [`whole_response`] does.
pub fn responses_of(raw: &[u8]) -> Vec<Response> {
    let mut responses = Vec::new();
    let mut rest = raw;
    while !rest.is_empty() {
        let (response, used) = match parse_response(rest, false) {
            Some(framed) => {
                framed.unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(rest)))
            }
            // The last, ended by the server's closing (or cut: then it fails).
            None => (whole_response(rest), rest.len()),
        };
        response.assert_well_formed();
        responses.push(response);
        rest = &rest[used..];
    }
    responses
}

/// Reads one response (not to a HEAD) from `stream`, a connection a test drives itself and
/// that stays open after it, and checks it as [`whole_response`] does.
pub fn read_response(stream: &TcpStream) -> Response {
    let stream = stream.try_clone().unwrap();
    stream.set_read_timeout(Some(HTTP_TIMEOUT)).unwrap();
    let authority = stream.peer_addr().unwrap().to_string();
    let response = Connection {
        stream,
        authority,
        buf: Vec::new(),
    }
    .read(false)
    .unwrap_or_else(|e| panic!("{e}"));
    response.assert_well_formed();
    response
}

/// Splits "http://host:port/path?query" into ("host:port", "/path?query").
fn split_url(url: &str) -> (&str, &str) {
    let rest = url
        .strip_prefix("http://")
        .unwrap_or_else(|| panic!("only http:// URLs are supported: {url}"));
    match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    }
}

struct Head {
    text: String,
    status: u16,
    headers: Vec<(String, String)>,
    body_start: usize,
}

/// Parses the status line and header fields, if they are complete.
fn parse_head(buf: &[u8]) -> Option<Result<Head, String>> {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let text = String::from_utf8_lossy(&buf[..end]);
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/1.") {
        return Some(Err(format!("not an HTTP/1.x status line: {status_line:?}")));
    }
    let status = match parts.next().and_then(|s| s.parse::<u16>().ok()) {
        Some(s) => s,
        None => return Some(Err(format!("bad status line: {status_line:?}"))),
    };
    let mut headers = Vec::new();
    for line in lines {
        match line.split_once(':') {
            Some((n, v)) => headers.push((n.trim().to_string(), v.trim().to_string())),
            None => return Some(Err(format!("bad header line: {line:?}"))),
        }
    }
    Some(Ok(Head {
        text: text.into_owned(),
        status,
        headers,
        body_start: end + 4,
    }))
}

/// The value of the first of `headers` named `name` (compared case-insensitively).
pub(super) fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn has_no_body(status: u16, head: bool) -> bool {
    head || (100..200).contains(&status) || status == 204 || status == 304
}

/// A complete response from the start of `buf` and the number of bytes it takes, `None`
/// while more bytes are needed.
fn parse_response(buf: &[u8], head_request: bool) -> Option<Result<(Response, usize), String>> {
    let head = match parse_head(buf)? {
        Ok(h) => h,
        Err(e) => return Some(Err(e)),
    };
    let rest = &buf[head.body_start..];
    let (body, used) = if has_no_body(head.status, head_request) {
        (Vec::new(), 0)
    } else if header(&head.headers, "transfer-encoding")
        .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"))
    {
        match decode_chunked_prefix(rest) {
            Ok(Some(body_and_used)) => body_and_used,
            Ok(None) => return None,
            Err(e) => return Some(Err(e)),
        }
    } else if let Some(cl) = header(&head.headers, "content-length") {
        let n: usize = match cl.parse() {
            Ok(n) => n,
            Err(_) => return Some(Err(format!("bad Content-Length {cl:?}"))),
        };
        if rest.len() < n {
            return None;
        }
        (rest[..n].to_vec(), n)
    } else {
        return None; // ends when the connection closes
    };
    let response = Response {
        head: head.text,
        status: head.status,
        headers: head.headers,
        body,
    };
    Some(Ok((response, head.body_start + used)))
}

fn parse_response_at_eof(buf: &[u8], head_request: bool) -> Result<Response, String> {
    if let Some(r) = parse_response(buf, head_request) {
        return r.map(|(response, _)| response);
    }
    let head = match parse_head(buf) {
        Some(h) => h?,
        None => return Err("connection closed before the end of the header".into()),
    };
    let rest = &buf[head.body_start..];
    let framed = header(&head.headers, "transfer-encoding").is_some()
        || header(&head.headers, "content-length").is_some();
    if framed {
        return Err(format!(
            "connection closed before the end of the body ({} bytes received)",
            rest.len()
        ));
    }
    Ok(Response {
        head: head.text,
        status: head.status,
        headers: head.headers,
        body: rest.to_vec(),
    })
}

/// Decodes a complete chunked body (RFC 9112 section 7.1), trailers ignored.
pub fn decode_chunked(data: &[u8]) -> Result<Vec<u8>, String> {
    match decode_chunked_prefix(data)? {
        Some((body, _)) => Ok(body),
        None => Err("incomplete chunked body".into()),
    }
}

/// `Ok(None)` if `data` does not yet hold the whole chunked body; otherwise
/// the body and the number of bytes of `data` it used.
fn decode_chunked_prefix(data: &[u8]) -> Result<Option<(Vec<u8>, usize)>, String> {
    let mut body = Vec::new();
    let mut pos = 0;
    loop {
        let Some(eol) = find_crlf(&data[pos..]) else {
            return Ok(None);
        };
        let line = String::from_utf8_lossy(&data[pos..pos + eol]);
        let size_text = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| format!("bad chunk size line {line:?}"))?;
        pos += eol + 2;
        if size == 0 {
            // Trailer fields, then an empty line.
            loop {
                let Some(eol) = find_crlf(&data[pos..]) else {
                    return Ok(None);
                };
                pos += eol + 2;
                if eol == 0 {
                    return Ok(Some((body, pos)));
                }
            }
        }
        if data.len() < pos + size + 2 {
            return Ok(None);
        }
        body.extend_from_slice(&data[pos..pos + size]);
        pos += size;
        if &data[pos..pos + 2] != b"\r\n" {
            return Err(format!("chunk of {size} bytes not followed by CRLF"));
        }
        pos += 2;
    }
}

fn find_crlf(data: &[u8]) -> Option<usize> {
    data.windows(2).position(|w| w == b"\r\n")
}
