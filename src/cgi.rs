//! The Common Gateway Interface (RFC 3875): a request read from the environment a web
//! server sets, routed to the service, a file-list page or a file of an item, and the
//! answer framed as CGI output.

use std::ffi::OsString;
use std::io::{self, Write};
use std::net::IpAddr;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use crate::config::Config;
use crate::filelist;
use crate::layout;
use crate::query::Query;
use crate::routes::{self, Reply, Route};
use crate::service::{Answer, Archive};

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
}

impl CgiRequest {
    /// Reads a request from environment variables through `var`.
    pub fn from_env(var: impl Fn(&str) -> Option<OsString>) -> CgiRequest {
        let text =
            |name: &str| var(name).map(|v| String::from_utf8_lossy(&v.into_vec()).into_owned());
        CgiRequest {
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
        }
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
}

/// Answers one request at POSIX second `now`: a file of an item when the web server
/// ran this program for `/col/` ([`FILES_SCRIPT_NAME`]), else the service ([`handle`]).
pub fn respond(req: &CgiRequest, now: i64) -> Reply {
    if req.script_name.trim_end_matches('/') != FILES_SCRIPT_NAME {
        return Reply::Page(handle(req, now));
    }
    if let Some(refused) = refuse_method(req) {
        return Reply::Page(refused);
    }
    let (root, config) = match open(req) {
        Ok(opened) => opened,
        Err(a) => return Reply::Page(a),
    };
    // The request target as sent, decoded here as `serve` decodes it; without one, the
    // path the web server decoded.
    let route = match &req.request_uri {
        Some(uri) => {
            let path = routes::origin_form(uri)
                .split('?')
                .next()
                .unwrap_or_default();
            routes::route(&config, path)
        }
        None => {
            let mut path = FILES_SCRIPT_NAME.as_bytes().to_vec();
            path.extend_from_slice(&req.path_info_bytes);
            routes::route_decoded(&config, &path)
        }
    };
    match route {
        Route::File { rep, path } => {
            routes::file(root, &config, &rep, path.as_deref(), req.remote_addr)
        }
        _ => Reply::Page(Answer::text(404, "not found\n")),
    }
}

/// The 405 answer to any method but GET and HEAD.
fn refuse_method(req: &CgiRequest) -> Option<Answer> {
    if req.method == "GET" || req.method == "HEAD" {
        return None;
    }
    let shown: String = req.method.chars().take(32).collect();
    let mut a = Answer::error(
        405,
        "method not allowed",
        format!("method {shown:?} not allowed"),
    );
    a.headers.push(("Allow".into(), "GET, HEAD".into()));
    Some(a)
}

/// The Archive the request is for, and its configuration.
fn open(req: &CgiRequest) -> Result<(&PathBuf, Config), Answer> {
    let Some(root) = &req.root else {
        return Err(Answer::error(
            500,
            "archive not configured",
            "IBI_ARCHIVE_ROOT is not set".into(),
        ));
    };
    match Config::load(root) {
        Ok(c) => Ok((root, c)),
        Err(e) => Err(Answer::error(
            500,
            "archive configuration unavailable",
            e.to_string(),
        )),
    }
}

/// Answers one request to the service (or a file-list page) at POSIX second `now`.
pub fn handle(req: &CgiRequest, now: i64) -> Answer {
    if let Some(refused) = refuse_method(req) {
        return refused;
    }
    let (root, config) = match open(req) {
        Ok(opened) => opened,
        Err(a) => return a,
    };
    let archive = Archive::new(root, config);
    let path = req.path_info.trim_end_matches('/');
    if path.is_empty() {
        return match Query::parse(&req.query) {
            Ok(q) => archive.respond(&q, now),
            Err(e) => Answer::error(400, "malformed query string", e.to_string()),
        };
    }
    if let Some(ibi) = layout::split_file_list_path(path.as_bytes()) {
        return filelist::page(&archive, ibi, req.remote_addr);
    }
    let shown: String = path.chars().take(200).collect();
    Answer::error(404, "not found", format!("no such page {shown:?}"))
}

/// Writes a [`Reply`] as CGI output (headers, blank line, body unless `head_only`); a
/// file is copied from its descriptor.
pub fn write_reply(out: &mut impl Write, reply: Reply, head_only: bool) -> io::Result<()> {
    match reply {
        Reply::Page(answer) => write(out, &answer, head_only),
        Reply::File(f) => {
            let mut head = String::new();
            for (name, value) in f.headers() {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            out.write_all(head.as_bytes())?;
            if !head_only {
                let copied = io::copy(&mut io::Read::take(&f.file, f.len), out)?;
                if copied < f.len {
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
        301 => "Moved Permanently",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        410 => "Gone",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::reason;

    /// The reason phrases of RFC 9110 §15 for every status this program sends.
    #[test]
    fn reason_phrases_are_the_standard_ones() {
        let sent = [
            (200, "OK"),
            (301, "Moved Permanently"),
            (400, "Bad Request"),
            (403, "Forbidden"),
            (404, "Not Found"),
            (405, "Method Not Allowed"),
            (408, "Request Timeout"),
            (410, "Gone"),
            (431, "Request Header Fields Too Large"),
            (500, "Internal Server Error"),
            (503, "Service Unavailable"),
        ];
        for (status, phrase) in sent {
            assert_eq!(reason(status), phrase, "{status}");
        }
    }
}
