//! The Common Gateway Interface (RFC 3875): a request read from the environment a web
//! server sets, handed to the one dispatch of `routes` (the service, a file-list page
//! or a file of an item), and the answer framed as CGI output.

use std::ffi::OsString;
use std::io::{self, Write};
use std::net::IpAddr;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use crate::routes::{self, Target};

use crate::http::Answer;
use crate::http::{Headers, Reply, Request};

/// The SCRIPT_NAME under which the configurations of `cgi-bin/` run this program for
/// the items' files (`/col/<rep>/doc/<file>`).
pub const FILES_SCRIPT_NAME: &str = "/col";

/// The parts of a CGI request the service reads.
#[derive(Debug, Clone, Default)]
pub struct CgiRequest {
    pub method: String,
    pub query: Vec<u8>,
    pub path_info: String,
    /// SCRIPT_NAME: the URL path the web server mapped onto this program.
    pub script_name: String,
    /// REQUEST_URI: the request target as the client sent it (still %-escaped).
    pub request_uri: Option<String>,
    /// PATH_INFO as bytes (decoded by the server; file names may be Latin-1).
    pub path_info_bytes: Vec<u8>,
    pub remote_addr: Option<IpAddr>,
    /// `IBI_ARCHIVE_ROOT`: the Archive this service answers for.
    pub root: Option<PathBuf>,
    /// The request headers pages and files answer by (`HTTP_*`), read only for them.
    pub headers: Headers,
    /// The body of a POST of an HTML form (`application/x-www-form-urlencoded`), as an
    /// OAI-PMH harvester may send its arguments; set by the caller, which reads stdin.
    pub form: Option<Vec<u8>>,
}

impl CgiRequest {
    /// Reads a request from environment variables through `var`.
    pub fn from_env(var: impl Fn(&str) -> Option<OsString>) -> CgiRequest {
        let text =
            |name: &str| var(name).map(|v| String::from_utf8_lossy(&v.into_vec()).into_owned());
        let mut req = CgiRequest {
            method: text("REQUEST_METHOD").unwrap_or_else(|| "GET".into()),
            query: var("QUERY_STRING")
                .map(OsString::into_vec)
                .unwrap_or_default(),
            path_info: text("PATH_INFO").unwrap_or_default(),
            script_name: text("SCRIPT_NAME").unwrap_or_default(),
            request_uri: text("REQUEST_URI"),
            path_info_bytes: var("PATH_INFO").map(OsString::into_vec).unwrap_or_default(),
            remote_addr: text("REMOTE_ADDR").and_then(|a| a.parse().ok()),
            root: var("IBI_ARCHIVE_ROOT")
                .filter(|r| !r.is_empty())
                .map(PathBuf::from),
            headers: Headers::default(),
            form: None,
        };
        // The service itself (an empty PATH_INFO below it) depends on no header: the
        // urlRequest path does not look them up.
        if !req.is_service_itself() {
            for name in Headers::NAMES {
                let cgi_name = format!("HTTP_{}", name.to_ascii_uppercase().replace('-', "_"));
                if let Some(value) = text(&cgi_name) {
                    req.headers.add(name, &value);
                }
            }
        }
        req
    }

    /// Whether this is a request of the service itself, not of a page below it or of a
    /// file.
    fn is_service_itself(&self) -> bool {
        !self.is_files() && self.path_info.trim_end_matches('/').is_empty()
    }

    /// Whether the web server ran this program for the items' files.
    fn is_files(&self) -> bool {
        self.script_name.trim_end_matches('/') == FILES_SCRIPT_NAME
    }

    /// A GET of the service with this query string, for the shell commands.
    pub fn get(root: PathBuf, query: &[u8]) -> CgiRequest {
        CgiRequest {
            method: "GET".into(),
            query: query.to_vec(),
            root: Some(root),
            ..CgiRequest::default()
        }
    }

    /// The request as `routes` takes it (what it asks for aside).
    fn routed(&self) -> Request<'_> {
        Request {
            method: &self.method,
            query: &self.query,
            client: self.remote_addr,
            root: self.root.as_deref(),
            headers: &self.headers,
            form: self.form.as_deref(),
        }
    }
}

/// Answers one request at POSIX second `now`: a file of an item when the web server
/// ran this program for `/col/` ([`FILES_SCRIPT_NAME`]), else the service; the one
/// dispatch of `routes`.
pub fn respond(req: &CgiRequest, now: i64) -> Reply {
    let target = if !req.is_files() {
        Target::Service(&req.path_info)
    } else if let Some(uri) = &req.request_uri {
        // The request target as sent, decoded by `routes` as `serve`'s is.
        Target::Col(
            routes::origin_form(uri)
                .split('?')
                .next()
                .unwrap_or_default(),
        )
    } else {
        // Without one, the path the web server decoded.
        let mut path = FILES_SCRIPT_NAME.as_bytes().to_vec();
        path.extend_from_slice(&req.path_info_bytes);
        Target::ColDecoded(path)
    };
    routes::answer(&req.routed(), &target, now)
}

/// Answers one request to the service (or a file-list page) at POSIX second `now`.
pub fn handle(req: &CgiRequest, now: i64) -> Answer {
    routes::answer_service(&req.routed(), &req.path_info, now)
}

/// Writes a [`Reply`] made at POSIX second `now` as CGI output (headers, blank line, body
/// unless `head_only`); a file is copied from its descriptor.
pub fn write_reply(
    out: &mut impl Write,
    reply: Reply,
    head_only: bool,
    now: i64,
) -> io::Result<()> {
    match reply {
        Reply::Page(answer) => write(out, &answer, head_only),
        Reply::File(f) => {
            let mut head = String::new();
            let status = f.status();
            if status != 200 {
                head.push_str(&format!("Status: {status} {}\r\n", reason(status)));
            }
            for (name, value) in f.headers() {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            // The Date of the clock Last-Modified was held to (never later than it,
            // RFC 9110 §8.8.2.1): the web server's own may be a second behind
            // (lighttpd's is the second its event loop last saw).
            if let Some(date) = ::ibi::time::http_date(now) {
                head.push_str(&format!("Date: {date}\r\n"));
            }
            let body = f.body().filter(|_| !head_only);
            if body.is_some() {
                // The file may shrink while it is copied, and a CGI program cannot tell
                // the web server that its answer fell short of the Content-Length it
                // sent: Apache (which keeps it, `ap_trust_cgilike_cl`) would then take
                // the next answer on the connection for the rest of this body. The
                // connection ends with the body instead.
                head.push_str("Connection: close\r\n");
            }
            head.push_str("\r\n");
            out.write_all(head.as_bytes())?;
            if let Some((start, len)) = body {
                let mut file = &f.file;
                if start > 0 {
                    io::Seek::seek(&mut file, io::SeekFrom::Start(start))?;
                }
                let copied = io::copy(&mut io::Read::take(file, len), out)?;
                if copied < len {
                    // The file shrank while it was sent: the answer is cut short, and the
                    // server must not take it for whole.
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the file shrank while it was sent",
                    ));
                }
            }
            out.flush()
        }
    }
}

/// Writes `answer` as CGI output (headers, blank line, body unless `head_only`).
pub fn write(out: &mut impl Write, answer: &Answer, head_only: bool) -> io::Result<()> {
    let mut head = String::new();
    if answer.status != 200 {
        head.push_str(&format!(
            "Status: {} {}\r\n",
            answer.status,
            reason(answer.status)
        ));
    }
    for (name, value) in &answer.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "Content-Type: {}\r\nContent-Length: {}\r\n\r\n",
        answer.content_type,
        answer.body.len()
    ));
    // One buffer, so that stdout (line-buffered) writes it in as few calls as it can.
    let mut bytes = head.into_bytes();
    if !head_only {
        bytes.extend_from_slice(&answer.body);
    }
    out.write_all(&bytes)?;
    out.flush()
}

/// The reason phrase of the statuses this program sends.
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        206 => "Partial Content",
        301 => "Moved Permanently",
        303 => "See Other",
        304 => "Not Modified",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        410 => "Gone",
        412 => "Precondition Failed",
        413 => "Content Too Large",
        416 => "Range Not Satisfiable",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::{reason, CgiRequest};
    use crate::http::Headers;
    use std::ffi::OsString;

    fn request(env: &[(&str, &str)]) -> CgiRequest {
        CgiRequest::from_env(|name| {
            env.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(*v))
        })
    }

    /// Pages and files get the headers they answer by; the service itself does not even
    /// look them up.
    #[test]
    fn headers_are_read_for_pages_and_files_only() {
        let sent = [
            ("HTTP_ACCEPT", "application/ld+json"),
            ("HTTP_ACCEPT_LANGUAGE", "pt-BR"),
            ("HTTP_RANGE", "bytes=0-9"),
            ("HTTP_IF_RANGE", "\"x\""),
            ("HTTP_IF_NONE_MATCH", "\"y\""),
            ("HTTP_IF_MODIFIED_SINCE", "Sun, 06 Nov 1994 08:49:37 GMT"),
            ("HTTP_IF_MATCH", "\"z\""),
            ("HTTP_IF_UNMODIFIED_SINCE", "Sun, 06 Nov 1994 08:49:38 GMT"),
            ("HTTP_COOKIE", "a=b"),
        ];
        let read = Headers {
            accept: Some("application/ld+json".into()),
            accept_language: Some("pt-BR".into()),
            range: Some("bytes=0-9".into()),
            if_range: Some("\"x\"".into()),
            if_none_match: Some("\"y\"".into()),
            if_modified_since: Some("Sun, 06 Nov 1994 08:49:37 GMT".into()),
            if_match: Some("\"z\"".into()),
            if_unmodified_since: Some("Sun, 06 Nov 1994 08:49:38 GMT".into()),
        };
        let with = |extra: &[(&'static str, &'static str)]| {
            let mut env = sent.to_vec();
            env.extend_from_slice(extra);
            request(&env).headers
        };
        assert_eq!(with(&[("SCRIPT_NAME", "/col")]), read);
        assert_eq!(
            with(&[
                ("SCRIPT_NAME", "/J8LNKB5R7W/3FUQHC5"),
                ("PATH_INFO", "/filelist/x")
            ]),
            read
        );
        assert_eq!(
            with(&[("SCRIPT_NAME", "/J8LNKB5R7W/3FUQHC5")]),
            Headers::default()
        );
        assert_eq!(
            with(&[("SCRIPT_NAME", "/J8LNKB5R7W/3FUQHC5"), ("PATH_INFO", "/")]),
            Headers::default()
        );
    }

    /// Two fields of one name are one list (RFC 9110 §5.3); fields not read are ignored.
    #[test]
    fn headers_join_repeated_fields() {
        let mut h = Headers::default();
        h.add("accept", "text/html");
        h.add("ACCEPT", "application/xml;q=0.9");
        h.add("Cookie", "a=b");
        assert_eq!(
            h,
            Headers {
                accept: Some("text/html, application/xml;q=0.9".into()),
                ..Headers::default()
            }
        );
    }

    /// A file's answer as CGI output: its status line unless 200, the answer's Date,
    /// `Connection: close` whenever bytes of the file follow (a file that shrinks cannot
    /// leave the web server's connection out of step), and exactly the promised bytes.
    #[test]
    fn a_file_answer_ends_its_connection_when_it_has_a_body() {
        use crate::http::Part;
        use crate::http::{Reply, StaticFile};
        use std::io::Write;
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        tmp.write_all(b"0123456789").unwrap();
        let written = |part: Part, head_only: bool| {
            let f = StaticFile {
                // Opened anew, as each request opens it: at offset 0.
                file: std::fs::File::open(tmp.path()).unwrap(),
                len: 10,
                content_type: "text/plain",
                modified: 784_111_777,
                links: Vec::new(),
                etag: "\"e\"".into(),
                part,
                private: false,
            };
            let mut out = Vec::new();
            super::write_reply(&mut out, Reply::File(f), head_only, 784_111_778).unwrap();
            String::from_utf8(out).unwrap()
        };
        let date = "Date: Sun, 06 Nov 1994 08:49:38 GMT\r\n";
        let part = written(Part::Range { start: 2, len: 3 }, false);
        assert!(
            part.starts_with("Status: 206 Partial Content\r\n"),
            "{part}"
        );
        assert!(part.contains("Content-Range: bytes 2-4/10\r\n"), "{part}");
        assert!(part.contains(date), "{part}");
        assert!(part.ends_with("Connection: close\r\n\r\n234"), "{part}");
        let whole = written(Part::Whole, false);
        assert!(!whole.starts_with("Status:"), "{whole}");
        assert!(
            whole.ends_with("Connection: close\r\n\r\n0123456789"),
            "{whole}"
        );
        // No body, nothing to fall short: the connection may serve the next request.
        for (part, head_only) in [(Part::Whole, true), (Part::NotModified, false)] {
            let out = written(part, head_only);
            assert!(out.contains(date), "{out}");
            assert!(!out.contains("Connection:"), "{out}");
            assert!(out.ends_with("\r\n\r\n"), "{out}");
        }
    }

    /// RFC 9110 §15: every status code it defines, with its reason phrase.
    const RFC_9110: [(u16, &str); 46] = [
        (100, "Continue"),
        (101, "Switching Protocols"),
        (200, "OK"),
        (201, "Created"),
        (202, "Accepted"),
        (203, "Non-Authoritative Information"),
        (204, "No Content"),
        (205, "Reset Content"),
        (206, "Partial Content"),
        (300, "Multiple Choices"),
        (301, "Moved Permanently"),
        (302, "Found"),
        (303, "See Other"),
        (304, "Not Modified"),
        (305, "Use Proxy"),
        (307, "Temporary Redirect"),
        (308, "Permanent Redirect"),
        (400, "Bad Request"),
        (401, "Unauthorized"),
        (402, "Payment Required"),
        (403, "Forbidden"),
        (404, "Not Found"),
        (405, "Method Not Allowed"),
        (406, "Not Acceptable"),
        (407, "Proxy Authentication Required"),
        (408, "Request Timeout"),
        (409, "Conflict"),
        (410, "Gone"),
        (411, "Length Required"),
        (412, "Precondition Failed"),
        (413, "Content Too Large"),
        (414, "URI Too Long"),
        (415, "Unsupported Media Type"),
        (416, "Range Not Satisfiable"),
        (417, "Expectation Failed"),
        (421, "Misdirected Request"),
        (422, "Unprocessable Content"),
        (426, "Upgrade Required"),
        (500, "Internal Server Error"),
        (501, "Not Implemented"),
        (502, "Bad Gateway"),
        (503, "Service Unavailable"),
        (504, "Gateway Timeout"),
        (505, "HTTP Version Not Supported"),
        // RFC 6585, §5 and §4.
        (431, "Request Header Fields Too Large"),
        (429, "Too Many Requests"),
    ];

    /// The statuses the program's answers are made with, read from its source (outside
    /// its tests): each three-digit literal from 100 to 599 in a call that makes an
    /// answer or a refusal (`Answer::text(`, `Answer::error(`, `Response::text(`,
    /// `html(`, `page(`, `refuse…(`, `Err((`), set as a `status:`, or given in a `fn
    /// status`. A status added to any of them is found here, whatever the test knew.
    fn statuses_answered() -> std::collections::BTreeMap<u16, String> {
        const MAKERS: [&str; 8] = [
            "Answer::text(",
            "Answer::error(",
            "Response::text(",
            "html(",
            "page(",
            "refuse",
            "Err((",
            "status:",
        ];
        let mut found = std::collections::BTreeMap::new();
        let mut dirs = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap_or_default();
                let mut in_status_fn = false;
                for (n, line) in code.lines().enumerate() {
                    let line = line.split("//").next().unwrap_or_default();
                    if line.contains("fn ") {
                        in_status_fn = line.contains("fn status(");
                    }
                    let bytes = line.as_bytes();
                    for i in 0..bytes.len().saturating_sub(2) {
                        let digits = &bytes[i..i + 3];
                        let before = i.checked_sub(1).map(|j| bytes[j]);
                        let after = bytes.get(i + 3).copied();
                        let word = |b: Option<u8>| {
                            b.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
                        };
                        if !digits.iter().all(u8::is_ascii_digit) || word(before) || word(after) {
                            continue;
                        }
                        let status: u16 = std::str::from_utf8(digits).unwrap().parse().unwrap();
                        let made = MAKERS.iter().any(|m| line[..i].contains(m));
                        if (100..600).contains(&status) && (made || in_status_fn) {
                            found
                                .entry(status)
                                .or_insert_with(|| format!("{}:{}", path.display(), n + 1));
                        }
                    }
                }
            }
        }
        found
    }

    /// Every status the program answers with has the reason phrase of RFC 9110 (the
    /// statuses read from the source, not listed here).
    #[test]
    fn reason_phrases_are_the_standard_ones() {
        let answered = statuses_answered();
        // What the reader of the source must find, or it reads nothing.
        for status in [
            200, 206, 301, 303, 304, 400, 404, 405, 406, 408, 410, 412, 416, 503,
        ] {
            assert!(answered.contains_key(&status), "{status}: {answered:?}");
        }
        for (status, place) in answered {
            let standard = RFC_9110.iter().find(|(s, _)| *s == status).map(|(_, p)| *p);
            assert_eq!(
                Some(reason(status)),
                standard,
                "{status}, answered at {place}"
            );
        }
    }
}
