//! The Common Gateway Interface (RFC 3875): a request read from the environment a web
//! server sets, routed to the service or to a file-list page, and the answer framed as
//! CGI output.

use std::ffi::OsString;
use std::io::{self, Write};
use std::net::IpAddr;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use crate::config::Config;
use crate::filelist;
use crate::query::Query;
use crate::service::{Answer, Archive};

/// The parts of a CGI request the service reads.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub method: String,
    pub query: Vec<u8>,
    pub path_info: String,
    pub remote_addr: Option<IpAddr>,
    /// `IBI_ARCHIVE_ROOT`: the Archive this service answers for.
    pub root: Option<PathBuf>,
}

impl Request {
    /// Reads a request from environment variables through `var`.
    pub fn from_env(var: impl Fn(&str) -> Option<OsString>) -> Request {
        let text =
            |name: &str| var(name).map(|v| String::from_utf8_lossy(&v.into_vec()).into_owned());
        Request {
            method: text("REQUEST_METHOD").unwrap_or_else(|| "GET".into()),
            query: var("QUERY_STRING")
                .map(OsString::into_vec)
                .unwrap_or_default(),
            path_info: text("PATH_INFO").unwrap_or_default(),
            remote_addr: text("REMOTE_ADDR").and_then(|a| a.parse().ok()),
            root: var("IBI_ARCHIVE_ROOT")
                .filter(|r| !r.is_empty())
                .map(PathBuf::from),
        }
    }

    /// A GET of the service with this query string, for the shell commands.
    pub fn get(root: PathBuf, query: &[u8]) -> Request {
        Request {
            method: "GET".into(),
            query: query.to_vec(),
            root: Some(root),
            ..Request::default()
        }
    }
}

/// Answers one request at POSIX second `now`.
pub fn handle(req: &Request, now: i64) -> Answer {
    if req.method != "GET" && req.method != "HEAD" {
        let shown: String = req.method.chars().take(32).collect();
        let mut a = Answer::error(
            405,
            "method not allowed",
            format!("method {shown:?} not allowed"),
        );
        a.headers.push(("Allow".into(), "GET, HEAD".into()));
        return a;
    }
    let Some(root) = &req.root else {
        return Answer::error(
            500,
            "archive not configured",
            "IBI_ARCHIVE_ROOT is not set".into(),
        );
    };
    let config = match Config::load(root) {
        Ok(c) => c,
        Err(e) => return Answer::error(500, "archive configuration unavailable", e.to_string()),
    };
    let archive = Archive::new(root, config);
    let path = req.path_info.trim_end_matches('/');
    if path.is_empty() {
        return match Query::parse(&req.query) {
            Ok(q) => archive.respond(&q, now),
            Err(e) => Answer::error(400, "malformed query string", e.to_string()),
        };
    }
    if let Some(rep) = path.strip_prefix("/filelist/") {
        let mut a = filelist::page(&archive, rep, req.remote_addr);
        a.log.extend(archive.store().take_warnings());
        return a;
    }
    let shown: String = path.chars().take(200).collect();
    Answer::error(404, "not found", format!("no such page {shown:?}"))
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
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        410 => "Gone",
        500 => "Internal Server Error",
        _ => "Unknown",
    }
}
