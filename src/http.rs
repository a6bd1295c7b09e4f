//! The HTTP vocabulary of the Archive's answers, whichever server carries them (the CGI
//! under Apache or lighttpd, `ibi-archive serve`): a request and the headers pages and
//! files are answered by ([`Request`], [`Headers`]), an answer ([`Answer`], a page; a
//! [`StaticFile`], a file's bytes from its descriptor; the two as a [`Reply`]), what of
//! a file is sent ([`Part`]), the headers of an answer private to its client
//! ([`PRIVATE`]), a file's media type by its name ([`content_type`]) and the HTTP date.
//! A leaf: it imports no module of the Archive's that answers anything.

use std::fs::File;
use std::net::IpAddr;
use std::path::Path;

use ::ibi::pairs::{PairList, Value};

/// A request to an Archive, from the CGI's environment or from `serve`'s connection,
/// besides what it asks for ([`Target`]).
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub method: &'a str,
    /// The query string, still %-escaped.
    pub query: &'a [u8],
    /// The address of the connection (never anything the request says).
    pub client: Option<IpAddr>,
    /// The Archive (`IBI_ARCHIVE_ROOT`; `None` when it is not set).
    pub root: Option<&'a Path>,
    /// The request headers the pages and files answer by (none for the service itself).
    pub headers: &'a Headers,
    /// The body of a POST of an HTML form (`application/x-www-form-urlencoded`, at most
    /// [`::ibi::query::MAX_QUERY_LEN`] bytes): the arguments of an OAI-PMH request, which
    /// the protocol lets a harvester POST. Every other POST is refused.
    pub form: Option<&'a [u8]>,
}

/// The request headers an Archive's pages and files depend on, as received (several
/// fields of one name joined with `, `). The service (`urlRequest` and the other
/// subjects) reads none of them, and the CGI does not even look them up for it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Headers {
    pub accept: Option<String>,
    pub accept_language: Option<String>,
    pub range: Option<String>,
    pub if_range: Option<String>,
    pub if_none_match: Option<String>,
    pub if_modified_since: Option<String>,
    pub if_match: Option<String>,
    pub if_unmodified_since: Option<String>,
}

impl Headers {
    /// The names of the fields read, in HTTP's spelling, each with the slot it fills.
    pub const NAMES: [&'static str; 8] = [
        "Accept",
        "Accept-Language",
        "Range",
        "If-Range",
        "If-None-Match",
        "If-Modified-Since",
        "If-Match",
        "If-Unmodified-Since",
    ];

    /// The slot of the field `name` (any case), if it is one of [`Headers::NAMES`].
    pub fn slot(&mut self, name: &str) -> Option<&mut Option<String>> {
        let slots = [
            &mut self.accept,
            &mut self.accept_language,
            &mut self.range,
            &mut self.if_range,
            &mut self.if_none_match,
            &mut self.if_modified_since,
            &mut self.if_match,
            &mut self.if_unmodified_since,
        ];
        Self::NAMES
            .iter()
            .zip(slots)
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, slot)| slot)
    }

    /// Adds one received field `name: value` (a field not read is ignored; a second one
    /// of a name is joined to the first with `, `, RFC 9110 §5.3).
    pub fn add(&mut self, name: &str, value: &str) {
        if let Some(slot) = self.slot(name) {
            match slot {
                Some(v) => {
                    v.push_str(", ");
                    v.push_str(value);
                }
                None => *slot = Some(value.to_string()),
            }
        }
    }
}

/// An answer of the service, before it is framed as CGI or HTTP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    /// Headers besides Content-Type (e.g. `Allow` on a 405).
    pub headers: Vec<(String, String)>,
    /// Lines for the web server's error log.
    pub log: Vec<String>,
}

impl Answer {
    pub fn pairs(list: &PairList) -> Answer {
        Answer::text(200, list.to_text())
    }

    pub fn text(status: u16, body: impl Into<Vec<u8>>) -> Answer {
        Answer {
            status,
            content_type: "text/plain",
            body: body.into(),
            headers: Vec::new(),
            log: Vec::new(),
        }
    }

    /// An error answer: `error {…}` as a pair list, and one line for the log.
    pub fn error(status: u16, what: &str, log: String) -> Answer {
        let mut p = PairList::new();
        p.push("error", Value::words(what.split(' ')));
        Answer {
            log: vec![log],
            ..Answer::pairs_with_status(status, &p)
        }
    }

    fn pairs_with_status(status: u16, list: &PairList) -> Answer {
        Answer::text(status, list.to_text())
    }
}

/// The headers of an answer whose content depends on the client's network (a restricted
/// item's files, 200, 206, 304 or 403, and its landing page, [`Item::depends_on_network`]):
/// no shared cache may keep it (`private`), and a cache must not reuse it for another
/// request (`Vary: *`, RFC 9110 §12.5.5: what decides may be outside the request, here
/// the address of the connection).
pub const PRIVATE: [(&str, &str); 2] = [("Cache-Control", "private"), ("Vary", "*")];

/// The answer to GET or HEAD of a [`Route::File`].
pub enum Reply {
    /// A page (an error, a redirect).
    Page(Answer),
    /// The bytes of a file, from the descriptor that was checked.
    File(StaticFile),
}

/// A file of an item, opened for a client that may have it.
#[derive(Debug)]
pub struct StaticFile {
    pub file: File,
    pub len: u64,
    pub content_type: &'static str,
    /// Seconds since the epoch of its last modification.
    pub modified: i64,
    /// `Link` header values (RFC 8288), sent as one field joined with `, `.
    pub links: Vec<String>,
    /// Its strong entity tag (`crate::download::etag`).
    pub etag: String,
    /// What of it the answer carries (`crate::download::answer` decides).
    pub part: Part,
    /// Whether the answer depends on the client's network ([`PRIVATE`]).
    pub private: bool,
}

impl StaticFile {
    /// The status of the answer: 200, 206 (a part) or 304.
    pub fn status(&self) -> u16 {
        match self.part {
            Part::Whole => 200,
            Part::Range { .. } => 206,
            Part::NotModified => 304,
        }
    }

    /// The bytes the answer carries, as `(start, len)`; none for a 304.
    pub fn body(&self) -> Option<(u64, u64)> {
        match self.part {
            Part::Whole => Some((0, self.len)),
            Part::Range { start, len } => Some((start, len)),
            Part::NotModified => None,
        }
    }

    /// The headers of the answer, besides its status, as `(name, value)`. A 304 has the
    /// validators and the links a 200 would have, and nothing that describes a body.
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        let modified = http_date(self.modified);
        let mut h = Vec::with_capacity(9);
        if let Some((start, len)) = self.body() {
            h.push(("Content-Type", self.content_type.to_string()));
            h.push(("Content-Length", len.to_string()));
            if self.part != Part::Whole {
                h.push((
                    "Content-Range",
                    format!("bytes {start}-{}/{}", start + len - 1, self.len),
                ));
            }
            h.push(("Accept-Ranges", "bytes".to_string()));
            // Deposited files are data: a browser must not sniff them into HTML.
            h.push(("X-Content-Type-Options", "nosniff".to_string()));
            // A deposited page runs in a sandbox, with an origin of its own: its scripts
            // cannot read this Archive's other files (a restricted item's among them)
            // through a licensed reader's browser. PDFs and images, which browsers refuse
            // to show sandboxed, are not active content and go without.
            if ACTIVE_TYPES.contains(&self.content_type) {
                h.push((
                    "Content-Security-Policy",
                    "sandbox allow-scripts allow-forms allow-popups allow-downloads".to_string(),
                ));
            }
        }
        h.push(("ETag", self.etag.clone()));
        if let Some(m) = modified {
            h.push(("Last-Modified", m));
        }
        if !self.links.is_empty() {
            h.push(("Link", self.links.join(", ")));
        }
        if self.private {
            h.extend(PRIVATE.map(|(n, v)| (n, v.to_string())));
        }
        h
    }
}

/// What of a file an answer carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// All of it: 200.
    Whole,
    /// `len` bytes from `start` (`len` ≥ 1): 206, with `Content-Range`.
    Range { start: u64, len: u64 },
    /// Nothing: the client's copy is current (304).
    NotModified,
}

/// The HTTP-date of POSIX second `seconds` ([`::ibi::time::http_date`]), written once per
/// thread while it is the same second: the `Date` of every answer of a second, the
/// `Last-Modified` of a file asked for again and again.
pub fn http_date(seconds: i64) -> Option<String> {
    thread_local! {
        static LAST: std::cell::RefCell<[(i64, Option<String>); 2]> =
            const { std::cell::RefCell::new([(i64::MIN, None), (i64::MIN, None)]) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((_, date)) = last.iter().find(|(s, _)| *s == seconds) {
            return date.clone();
        }
        let date = ::ibi::time::http_date(seconds);
        // Two kept: the answer's date and its file's modification beside it.
        last.swap(0, 1);
        last[0] = (seconds, date.clone());
        date
    })
}

/// Types a browser runs scripts in.
const ACTIVE_TYPES: [&str; 4] = [
    "text/html",
    "application/xhtml+xml",
    "image/svg+xml",
    "application/xml",
];

/// The Content-Type of a file of doc/, by its extension: the types Archives usually
/// hold (text types without a charset: files are served as stored).
pub fn content_type(name: &[u8]) -> &'static str {
    let ext = name
        .rsplit(|&b| b == b'/')
        .next()
        .and_then(|n| n.iter().rposition(|&b| b == b'.').map(|i| &n[i + 1..]))
        .map(<[u8]>::to_ascii_lowercase)
        .unwrap_or_default();
    match ext.as_slice() {
        b"pdf" => "application/pdf",
        b"html" | b"htm" => "text/html",
        b"xhtml" => "application/xhtml+xml",
        b"xml" => "application/xml",
        b"txt" | b"text" | b"bib" | b"bst" | b"tex" | b"ltx" | b"sty" | b"cls" | b"log" | b"md" => {
            "text/plain"
        }
        b"csv" => "text/csv",
        b"css" => "text/css",
        b"js" => "text/javascript",
        b"json" => "application/json",
        b"rtf" => "application/rtf",
        b"ps" | b"eps" => "application/postscript",
        b"zip" => "application/zip",
        b"gz" | b"tgz" => "application/gzip",
        b"tar" => "application/x-tar",
        b"doc" => "application/msword",
        b"docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        b"xls" => "application/vnd.ms-excel",
        b"xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        b"ppt" => "application/vnd.ms-powerpoint",
        b"pptx" => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        b"odt" => "application/vnd.oasis.opendocument.text",
        b"ods" => "application/vnd.oasis.opendocument.spreadsheet",
        b"odp" => "application/vnd.oasis.opendocument.presentation",
        b"png" => "image/png",
        b"jpg" | b"jpeg" => "image/jpeg",
        b"gif" => "image/gif",
        b"tif" | b"tiff" => "image/tiff",
        b"svg" => "image/svg+xml",
        b"mp3" => "audio/mpeg",
        b"wav" => "audio/wav",
        b"mp4" => "video/mp4",
        b"avi" => "video/x-msvideo",
        _ => "application/octet-stream",
    }
}
