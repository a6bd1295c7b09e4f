//! The OAI-PMH 2.0 data provider (the Open Archives Initiative Protocol for Metadata
//! Harvesting), at the Archive service URL: a request to the service with a `verb` and no
//! `servicesubject` is answered here, the same under the CGI and `serve`.
//!
//! - Records are the Archive's metadata items (`contenttype = "Metadata"`): one record per
//!   item, in each format of its `[formats]`, the XML of that file of its doc/. A data item
//!   without a metadata item has no record (Identify says so).
//! - The OAI identifier of a record is its metadata item's persistent URL
//!   ([`Config::persistent_url`] of its IBIp, else its rep): a URI, the same whichever
//!   Archive holds the item, and what a reader follows.
//! - The datestamp is the item's timestamp (seconds, UTC); a tombstone (state Deleted) is a
//!   deleted record, kept for ever (`deletedRecord` persistent).
//! - No sets.
//! - Lists come in pages of `[oai] page_size` records (100 by default), in the order of
//!   `var/oai-records` ([`crate::oai_index`]: datestamp, then rep), found there by a binary
//!   search. No request walks col/: an index missing, unreadable or older than col/ is
//!   built apart from the request ([`crate::oai_build`]), a list meanwhile answered from
//!   the index as it is, or `503` with `Retry-After` without one. A resumption token
//!   holds where the next page starts, signed with the Archive's secret (no state is kept
//!   between requests).
//! - Every answer is written by quick-xml's writer; a record's metadata is the file's XML
//!   read by quick-xml and written again, so that a file that is not well-formed UTF-8
//!   XML, or larger than [`MAX_METADATA`], is left out (one line in the log) and never
//!   breaks the answer.

use std::borrow::Cow;
use std::io::Read;
use std::rc::Rc;

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime};
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;

use crate::config::Config;
use crate::ibi::{shown, Ibi, Rep};
use crate::item::{ContentType, Item, State};
use crate::layout::{Col, DocEntry};
use crate::oai_build;
use crate::oai_index::{self, Index};
use crate::query::Query;
use crate::service::{Answer, Archive};
use crate::urlkey::UrlKeys;

/// The media type of every answer.
pub const CONTENT_TYPE: &str = "text/xml; charset=utf-8";
/// Largest metadata file answered.
pub const MAX_METADATA: u64 = 1024 * 1024;
/// Most bytes of the index a new list counts its size in (about 35,000 lines): past
/// them, the size is estimated.
const MAX_COUNTED: u64 = 2 * 1024 * 1024;
/// Most bytes of metadata in one page: the page ends early past it.
const MAX_PAGE_METADATA: usize = 8 * 1024 * 1024;

const OAI_NS: &str = "http://www.openarchives.org/OAI/2.0/";
const OAI_SCHEMA: &str =
    "http://www.openarchives.org/OAI/2.0/ http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd";
const XSI_NS: &str = "http://www.w3.org/2001/XMLSchema-instance";

/// The formats whose schema and namespace are known; the others are announced with what
/// their file's root element declares.
const KNOWN_FORMATS: &[(&str, &str, &str)] = &[
    (
        "oai_dc",
        "http://www.openarchives.org/OAI/2.0/oai_dc.xsd",
        "http://www.openarchives.org/OAI/2.0/oai_dc/",
    ),
    (
        "marcxml",
        "http://www.loc.gov/standards/marcxml/schema/MARC21slim.xsd",
        "http://www.loc.gov/MARC21/slim",
    ),
    (
        "mods",
        "http://www.loc.gov/standards/mods/v3/mods-3-8.xsd",
        "http://www.loc.gov/mods/v3",
    ),
    (
        "oai_datacite",
        "http://schema.datacite.org/oai/oai-1.1/oai.xsd",
        "http://schema.datacite.org/oai/oai-1.1/",
    ),
    (
        "datacite",
        "http://schema.datacite.org/meta/kernel-4/metadata.xsd",
        "http://datacite.org/schema/kernel-4",
    ),
];

/// The schema and namespace of a format of [`KNOWN_FORMATS`].
fn known_schema(prefix: &str) -> Option<(String, String)> {
    KNOWN_FORMATS
        .iter()
        .find(|(p, _, _)| *p == prefix)
        .map(|(_, schema, ns)| (schema.to_string(), ns.to_string()))
}

/// Whether a service request without `servicesubject` is one for the data provider: a
/// `verb` (the service looks at `servicesubject` first).
pub fn is_oai(query: &Query) -> bool {
    query.get("verb").is_some()
}

/// Whether a whole request is one for the data provider: a `verb` and no
/// `servicesubject` (what may be POSTed).
pub fn is_oai_request(query: &Query) -> bool {
    is_oai(query) && query.get("servicesubject").is_none()
}

/// The protocol's verbs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    Identify,
    ListMetadataFormats,
    ListSets,
    GetRecord,
    ListIdentifiers,
    ListRecords,
}

impl Verb {
    fn parse(s: &str) -> Option<Verb> {
        Some(match s {
            "Identify" => Verb::Identify,
            "ListMetadataFormats" => Verb::ListMetadataFormats,
            "ListSets" => Verb::ListSets,
            "GetRecord" => Verb::GetRecord,
            "ListIdentifiers" => Verb::ListIdentifiers,
            "ListRecords" => Verb::ListRecords,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Verb::Identify => "Identify",
            Verb::ListMetadataFormats => "ListMetadataFormats",
            Verb::ListSets => "ListSets",
            Verb::GetRecord => "GetRecord",
            Verb::ListIdentifiers => "ListIdentifiers",
            Verb::ListRecords => "ListRecords",
        }
    }

    /// The arguments it takes: (name, required).
    fn arguments(self) -> &'static [(&'static str, bool)] {
        match self {
            Verb::Identify => &[],
            Verb::ListMetadataFormats => &[("identifier", false)],
            Verb::ListSets => &[("resumptionToken", false)],
            Verb::GetRecord => &[("identifier", true), ("metadataPrefix", true)],
            Verb::ListIdentifiers | Verb::ListRecords => &[
                ("metadataPrefix", true),
                ("from", false),
                ("until", false),
                ("set", false),
                ("resumptionToken", false),
            ],
        }
    }
}

/// An error condition of the protocol: its code and what to tell the harvester.
#[derive(Debug)]
struct OaiError {
    code: &'static str,
    message: String,
}

fn error(code: &'static str, message: impl Into<String>) -> OaiError {
    OaiError {
        code,
        message: message.into(),
    }
}

/// Why a request is not answered as the protocol says: an error of the protocol, or the
/// index being built (`503`, with the seconds to wait).
#[derive(Debug)]
enum Failure {
    Protocol(OaiError),
    Unavailable { retry_after: u64 },
}

impl From<OaiError> for Failure {
    fn from(e: OaiError) -> Failure {
        Failure::Protocol(e)
    }
}

/// The arguments of a request, checked for its verb.
#[derive(Debug, Default)]
struct Args {
    /// Every argument as given (for the `request` element of an answer).
    given: Vec<(String, String)>,
}

impl Args {
    fn get(&self, name: &str) -> Option<&str> {
        self.given
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The verb and arguments of `query`, or the error the protocol gives (badVerb before
/// badArgument: a request whose verb is not one cannot have its arguments judged).
fn parse_request(query: &Query) -> Result<(Verb, Args), OaiError> {
    let mut verb = None;
    let mut args = Args::default();
    let mut bad: Option<OaiError> = None;
    for (name, value) in query.pairs() {
        let name = std::str::from_utf8(name).unwrap_or("");
        let Ok(value) = std::str::from_utf8(value) else {
            bad.get_or_insert(error(
                "badArgument",
                format!("the value of {} is not UTF-8", shown(name)),
            ));
            continue;
        };
        if name == "verb" {
            if verb.is_some() {
                return Err(error("badVerb", "the verb is repeated"));
            }
            verb = Some(value);
            continue;
        }
        if args.get(name).is_some() {
            bad.get_or_insert(error(
                "badArgument",
                format!("the argument {} is repeated", shown(name)),
            ));
            continue;
        }
        args.given.push((name.to_string(), value.to_string()));
    }
    let verb = verb.unwrap_or("");
    let Some(verb) = Verb::parse(verb) else {
        return Err(error(
            "badVerb",
            format!("{} is not a verb of OAI-PMH 2.0", shown(verb)),
        ));
    };
    if let Some(e) = bad {
        return Err(e);
    }
    let allowed = verb.arguments();
    for (name, value) in &args.given {
        if !allowed.iter().any(|(n, _)| n == name) {
            return Err(error(
                "badArgument",
                format!("{} takes no argument {}", verb.name(), shown(name)),
            ));
        }
        if value.is_empty() {
            return Err(error(
                "badArgument",
                format!("the argument {name} is empty"),
            ));
        }
    }
    if args.get("resumptionToken").is_some() {
        // The exclusive argument: nothing else may come with it.
        if args.given.len() > 1 {
            return Err(error(
                "badArgument",
                "resumptionToken is an exclusive argument: no other argument may be given with it",
            ));
        }
    } else {
        for (name, required) in allowed {
            if *required && args.get(name).is_none() {
                return Err(error(
                    "badArgument",
                    format!("{} needs the argument {name}", verb.name()),
                ));
            }
        }
    }
    Ok((verb, args))
}

/// The answer to an OAI-PMH request `query` at POSIX second `now`.
pub fn answer(archive: &Archive, query: &Query, now: i64) -> Answer {
    let mut doc = Document::new(now, &base_url(archive.config()));
    let mut log = Vec::new();
    match parse_request(query) {
        Err(e) => {
            // badVerb and badArgument: the request element has no attributes.
            doc.request(&[]);
            doc.error(&e);
        }
        Ok((verb, args)) => {
            let attributes: Vec<(&str, &str)> = std::iter::once(("verb", verb.name()))
                .chain(args.given.iter().map(|(n, v)| (n.as_str(), v.as_str())))
                .collect();
            let provider = Provider {
                archive,
                log: &mut log,
                col: Col::open(archive.root()).ok().map(Rc::new),
                now,
            };
            match provider.answer(verb, &args, &mut doc, &attributes) {
                Ok(()) => {}
                Err(Failure::Unavailable { retry_after }) => {
                    // The flow control of the protocol (OAI-PMH 2.0, §3.1.2.2): a
                    // harvester asks again after Retry-After.
                    return Answer {
                        status: 503,
                        content_type: "text/plain",
                        body: format!(
                            "the index of this Archive's records is being built: try again in {retry_after} s\n"
                        )
                        .into_bytes(),
                        headers: vec![("Retry-After".into(), retry_after.to_string())],
                        log,
                    };
                }
                Err(Failure::Protocol(e)) => {
                    let attrs = if matches!(e.code, "badArgument" | "badVerb") {
                        &[][..]
                    } else {
                        &attributes[..]
                    };
                    doc.restart(now);
                    doc.request(attrs);
                    doc.error(&e);
                }
            }
        }
    }
    Answer {
        status: 200,
        content_type: CONTENT_TYPE,
        body: doc.finish(),
        headers: Vec::new(),
        log,
    }
}

/// The base URL of the provider: the Archive service URL.
fn base_url(config: &Config) -> String {
    format!("{}/{}", config.baseurl, config.service.as_str())
}

/// An answer being written.
struct Document {
    w: Writer<Vec<u8>>,
    base_url: String,
}

impl Document {
    fn new(now: i64, base_url: &str) -> Document {
        let mut d = Document {
            w: Writer::new(Vec::with_capacity(16 * 1024)),
            base_url: base_url.to_string(),
        };
        d.start(now);
        d
    }

    fn start(&mut self, now: i64) {
        let _ = self
            .w
            .write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)));
        self.text("\n");
        let root = BytesStart::new("OAI-PMH").with_attributes([
            ("xmlns", OAI_NS),
            ("xmlns:xsi", XSI_NS),
            ("xsi:schemaLocation", OAI_SCHEMA),
        ]);
        let _ = self.w.write_event(Event::Start(root));
        self.text("\n");
        self.element("responseDate", &datestamp(now));
    }

    /// Starts again (an error found after some of the answer was written).
    fn restart(&mut self, now: i64) {
        self.w.get_mut().clear();
        self.start(now);
    }

    fn request(&mut self, attributes: &[(&str, &str)]) {
        let clean: Vec<(&str, Cow<'_, str>)> =
            attributes.iter().map(|(n, v)| (*n, xml_chars(v))).collect();
        let start =
            BytesStart::new("request").with_attributes(clean.iter().map(|(n, v)| (*n, v.as_ref())));
        let _ = self.w.write_event(Event::Start(start));
        let base = self.base_url.clone();
        self.text(&base);
        self.end("request");
    }

    fn error(&mut self, e: &OaiError) {
        let start = BytesStart::new("error").with_attributes([("code", e.code)]);
        let _ = self.w.write_event(Event::Start(start));
        self.text(&e.message);
        self.end("error");
    }

    fn open(&mut self, name: &str) {
        let _ = self.w.write_event(Event::Start(BytesStart::new(name)));
    }

    fn open_with(&mut self, name: &str, attributes: &[(&str, &str)]) {
        let start = BytesStart::new(name).with_attributes(attributes.iter().copied());
        let _ = self.w.write_event(Event::Start(start));
    }

    fn end(&mut self, name: &str) {
        let _ = self.w.write_event(Event::End(BytesEnd::new(name)));
        self.text("\n");
    }

    fn empty_with(&mut self, name: &str, attributes: &[(&str, &str)]) {
        let start = BytesStart::new(name).with_attributes(attributes.iter().copied());
        let _ = self.w.write_event(Event::Empty(start));
        self.text("\n");
    }

    fn text(&mut self, s: &str) {
        // `<`, `>` and `&` escaped (quotes need none in text).
        let s = xml_chars(s);
        let escaped = quick_xml::escape::partial_escape(s.as_ref());
        let _ = self
            .w
            .write_event(Event::Text(BytesText::from_escaped(escaped)));
    }

    fn element(&mut self, name: &str, value: &str) {
        self.open(name);
        self.text(value);
        self.end(name);
    }

    /// Appends an XML fragment that quick-xml's writer has already written (a record's
    /// metadata, checked whole before).
    fn fragment(&mut self, xml: &[u8]) {
        self.w.get_mut().extend_from_slice(xml);
    }

    fn finish(mut self) -> Vec<u8> {
        self.end("OAI-PMH");
        self.w.into_inner()
    }
}

/// `s` with the characters XML 1.0 cannot hold dropped (controls but tab, newline and
/// carriage return; U+FFFE and U+FFFF).
fn xml_chars(s: &str) -> Cow<'_, str> {
    let bad = |c: char| {
        (c.is_control() && !matches!(c, '\t' | '\n' | '\r') && (c as u32) < 0x20)
            || c == '\u{fffe}'
            || c == '\u{ffff}'
    };
    if s.chars().any(bad) {
        Cow::Owned(s.chars().filter(|&c| !bad(c)).collect())
    } else {
        Cow::Borrowed(s)
    }
}

/// POSIX second `t` as an OAI-PMH datestamp, `YYYY-MM-DDThh:mm:ssZ`.
fn datestamp(t: i64) -> String {
    DateTime::from_timestamp(t, 0)
        .map(|d| d.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".into())
}

/// A `from` or `until` argument: `YYYY-MM-DD` or `YYYY-MM-DDThh:mm:ssZ`, as POSIX
/// seconds (a day as its first second for `from`, its last for `until`), and whether it
/// was given to the second.
fn parse_date(s: &str, until: bool) -> Option<(i64, bool)> {
    // Digits where the forms have digits (chrono's `%Y` would take a sign or a space).
    let form = b"dddd-dd-ddTdd:dd:ddZ";
    if !(s.len() == 10 || s.len() == 20)
        || s.bytes().zip(form).any(|(b, &f)| {
            if f == b'd' {
                !b.is_ascii_digit()
            } else {
                b != f
            }
        })
    {
        return None;
    }
    if s.len() == 10 {
        let d = NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()?;
        let t = if until {
            NaiveTime::from_hms_opt(23, 59, 59)?
        } else {
            NaiveTime::MIN
        };
        return Some((d.and_time(t).and_utc().timestamp(), false));
    }
    if s.len() == 20 && s.ends_with('Z') && s.as_bytes()[10] == b'T' {
        let d = NaiveDateTime::parse_from_str(&s[..19], "%Y-%m-%dT%H:%M:%S").ok()?;
        return Some((d.and_utc().timestamp(), true));
    }
    None
}

/// What a list asks for: the format, the dates, where this page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ListState {
    headers_only: bool,
    prefix: String,
    from: Option<i64>,
    until: Option<i64>,
    /// Records handed out before this page.
    cursor: u64,
    /// The size of the whole list, when known (from the index).
    total: Option<u64>,
    /// Where the last page ended.
    after: Option<Position>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Position {
    /// After this line of the index (datestamp, rep): a place in any index of the
    /// Archive, this one or one built since.
    Index(i64, String),
}

/// What signs and checks the resumption tokens of one Archive: its secret (the one of its
/// urlkeys, var/urlkey.secret) over its identity — its service's IBI and base URL — and
/// every field of the token, which holds every argument of its list (verb,
/// metadataPrefix, from, until, set) and where its next page starts. A token is thus
/// good only for the Archive that gave it and for its own list: one forged, altered, or
/// given by another Archive (even a copy of this one with a secret of its own) is a
/// badResumptionToken.
struct Signer<'a> {
    keys: &'a UrlKeys,
    /// The Archive's identity, as it is signed.
    archive: String,
}

impl Signer<'_> {
    /// The domain of the tags ([`UrlKeys::tag`]).
    const DOMAIN: &'static str = "ibi-archive oai-pmh resumption token";
    /// Bytes of the HMAC kept in a token (128 bits, 32 hex digits).
    const TAG_BYTES: usize = 16;

    fn new<'a>(keys: &'a UrlKeys, config: &Config) -> Signer<'a> {
        Signer {
            keys,
            archive: format!("{}\n{}", config.service.as_str(), base_url(config)),
        }
    }

    /// The tag of a token's fields, in hex.
    fn tag(&self, body: &str) -> String {
        let message = format!("{}\n{body}", self.archive);
        self.keys.tag(Self::DOMAIN, message.as_bytes())[..Self::TAG_BYTES]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// Whether `tag` is the tag of `body`, compared in time independent of where they
    /// differ.
    fn holds(&self, body: &str, tag: &str) -> bool {
        let want = self.tag(body);
        want.len() == tag.len()
            && want
                .bytes()
                .zip(tag.bytes())
                .fold(0u8, |d, (a, b)| d | (a ^ b))
                == 0
    }
}

impl ListState {
    /// The resumption token of the page that starts here: the fields, separated by `,`
    /// (which no rep, format or number holds), then their tag ([`Signer`]).
    fn token(&self, signer: &Signer<'_>) -> String {
        let opt = |v: Option<i64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
        let (at_seconds, at_rep) = match &self.after {
            Some(Position::Index(s, r)) => (s.to_string(), r.as_str()),
            None => ("-".to_string(), ""),
        };
        // `set` is always `-` (this Archive has no sets), signed all the same: a token is
        // bound to every argument its list can have.
        let body = format!(
            "2,{},{},{},{},-,{},{},{},{}",
            if self.headers_only { "I" } else { "R" },
            self.prefix,
            opt(self.from),
            opt(self.until),
            self.cursor,
            self.total
                .map_or_else(|| "-".to_string(), |t| t.to_string()),
            at_seconds,
            at_rep
        );
        let tag = signer.tag(&body);
        format!("{body},{tag}")
    }

    fn from_token(token: &str, headers_only: bool, signer: &Signer<'_>) -> Option<ListState> {
        let (body, tag) = token.rsplit_once(',')?;
        if !signer.holds(body, tag) {
            return None;
        }
        let f: Vec<&str> = body.split(',').collect();
        let [version, verb, prefix, from, until, set, cursor, total, at_seconds, at_rep] =
            f.as_slice()
        else {
            return None;
        };
        let opt = |s: &str| -> Option<Option<i64>> {
            if s == "-" {
                Some(None)
            } else {
                s.parse().ok().map(Some)
            }
        };
        if *version != "2" || *verb != if headers_only { "I" } else { "R" } || *set != "-" {
            return None;
        }
        if !oai_index::is_format_name(prefix) {
            return None;
        }
        let after = Some(Position::Index(at_seconds.parse().ok()?, rep_of(at_rep)?));
        // Signed by this Archive, but still judged: counts no list reaches past, never
        // negative, a cursor within its size.
        let count = |s: &str| -> Option<u64> { u64::try_from(s.parse::<i64>().ok()?).ok() };
        let cursor = count(cursor)?;
        let total = match *total {
            "-" => None,
            t => Some(count(t)?),
        };
        if total.is_some_and(|t| cursor > t) {
            return None;
        }
        Some(ListState {
            headers_only,
            prefix: prefix.to_string(),
            from: opt(from)?,
            until: opt(until)?,
            cursor,
            total,
            after,
        })
    }
}

fn rep_of(s: &str) -> Option<String> {
    Rep::parse(s).ok().map(|_| s.to_string())
}

/// One record found for a page: the item and its datestamp.
struct Found {
    item: Item,
    seconds: i64,
}

/// A page of a list: its records, and where the next begins (`None`: this is the last).
struct Page {
    records: Vec<Found>,
    next: Option<Position>,
    total: Option<u64>,
}

impl Page {
    /// Where a list continues after `found`.
    fn position_after(&self, found: &Found) -> Position {
        Position::Index(found.seconds, found.item.rep.as_str().to_string())
    }
}

struct Provider<'a> {
    archive: &'a Archive,
    log: &'a mut Vec<String>,
    /// `col/`, opened once for the request.
    col: Option<Rc<Col>>,
    /// POSIX second of the request.
    now: i64,
}

impl Provider<'_> {
    fn config(&self) -> &Config {
        self.archive.config()
    }

    fn answer(
        mut self,
        verb: Verb,
        args: &Args,
        doc: &mut Document,
        attributes: &[(&str, &str)],
    ) -> Result<(), Failure> {
        // The checks that need no reading come first, so that the request element is
        // written only for an answer that is not an error of the arguments.
        match verb {
            Verb::Identify => {
                doc.request(attributes);
                self.identify(doc);
            }
            Verb::ListSets => {
                if let Some(t) = args.get("resumptionToken") {
                    return Err(error(
                        "badResumptionToken",
                        format!(
                            "{} is not a token this Archive gave: it has no sets",
                            shown(t)
                        ),
                    )
                    .into());
                }
                return Err(error("noSetHierarchy", "this Archive has no sets").into());
            }
            Verb::ListMetadataFormats => {
                let formats = match args.get("identifier") {
                    Some(id) => {
                        let item = self.record_item(id)?;
                        let formats = self.item_formats(&item);
                        if formats.is_empty() {
                            return Err(error(
                                "noMetadataFormats",
                                "this item has no metadata format that can be answered",
                            )
                            .into());
                        }
                        formats
                    }
                    None => {
                        let index = self.index()?;
                        self.all_formats(&index)
                    }
                };
                doc.request(attributes);
                doc.open("ListMetadataFormats");
                doc.text("\n");
                for (f, (schema, namespace)) in formats {
                    doc.open("metadataFormat");
                    doc.element("metadataPrefix", &f);
                    doc.element("schema", &schema);
                    doc.element("metadataNamespace", &namespace);
                    doc.end("metadataFormat");
                }
                doc.end("ListMetadataFormats");
            }
            Verb::GetRecord => {
                let id = args.get("identifier").unwrap_or_default();
                let prefix = args.get("metadataPrefix").unwrap_or_default();
                let item = self.record_item(id)?;
                let seconds = self.archive.timestamp_of(&item);
                let metadata = if item.state == State::Deleted {
                    if !disseminates(&item, prefix) {
                        return Err(cannot_disseminate(prefix).into());
                    }
                    None
                } else {
                    let file = item
                        .formats
                        .get(prefix)
                        .ok_or_else(|| cannot_disseminate(prefix))?;
                    Some(
                        self.metadata(&item, file)
                            .ok_or_else(|| cannot_disseminate(prefix))?,
                    )
                };
                doc.request(attributes);
                doc.open("GetRecord");
                doc.text("\n");
                self.record(doc, &item, seconds, metadata.as_deref());
                doc.end("GetRecord");
            }
            Verb::ListIdentifiers | Verb::ListRecords => {
                let headers_only = verb == Verb::ListIdentifiers;
                let signer = Signer::new(self.archive.url_keys(), self.config());
                let state = match args.get("resumptionToken") {
                    Some(t) => {
                        ListState::from_token(t, headers_only, &signer).ok_or_else(|| {
                            error(
                                "badResumptionToken",
                                format!(
                                    "{} is not a token this Archive gave for {}",
                                    shown(t),
                                    verb.name()
                                ),
                            )
                        })?
                    }
                    None => self.new_list(args, headers_only)?,
                };
                // The arguments judged, the index is needed (a bad argument or token is
                // told at once, built index or not).
                let index = self.index()?;
                // A format the repository does not support: oai_dc (every record's, the
                // protocol's own) and the formats of the index's records are what
                // ListMetadataFormats announces, and any other is cannotDisseminateFormat
                // (not noRecordsMatch: no record is in it, whatever the dates).
                let supported = state.prefix == "oai_dc" || index.formats.contains(&state.prefix);
                if state.after.is_none() && !supported {
                    return Err(cannot_disseminate(&state.prefix).into());
                }
                let fresh = state.after.is_none() && state.cursor == 0;
                let mut state = state;
                // A page, and what of it is answered (its index, and its metadata for
                // ListRecords): a live record whose file does not read is left out, and
                // a page whose every record is left out gives way to the next, since a
                // list holds at least one record.
                let (page, kept) = loop {
                    let page = self.page(&index, &state)?;
                    if page.records.is_empty() {
                        if fresh {
                            return Err(error(
                                "noRecordsMatch",
                                "no record has that format and a datestamp in those dates",
                            )
                            .into());
                        }
                        return Err(error(
                            "badResumptionToken",
                            "the list has changed since this token was given: harvest again from its start",
                        )
                        .into());
                    }
                    let mut kept: Vec<(usize, Option<Vec<u8>>)> = Vec::new();
                    let mut bytes = 0;
                    for (i, found) in page.records.iter().enumerate() {
                        let metadata = if headers_only || found.item.state == State::Deleted {
                            None
                        } else {
                            let file = found
                                .item
                                .formats
                                .get(&state.prefix)
                                .cloned()
                                .unwrap_or_default();
                            match self.metadata(&found.item, &file) {
                                Some(m) => Some(m),
                                // Left out, with its line in the log.
                                None => continue,
                            }
                        };
                        bytes += metadata.as_ref().map_or(0, Vec::len);
                        kept.push((i, metadata));
                        if bytes > MAX_PAGE_METADATA {
                            // A page of large records ends early.
                            break;
                        }
                    }
                    if !kept.is_empty() {
                        break (page, kept);
                    }
                    match page.next {
                        Some(next) => {
                            state = ListState {
                                after: Some(next),
                                ..state
                            };
                        }
                        None => {
                            return Err(error(
                                "noRecordsMatch",
                                "no record of the rest of the list can be answered in that format",
                            )
                            .into())
                        }
                    }
                };
                let last = kept.last().map_or(0, |(i, _)| *i);
                let next = if last + 1 < page.records.len() {
                    Some(page.position_after(&page.records[last]))
                } else {
                    page.next.clone()
                };
                doc.request(attributes);
                doc.open(verb.name());
                doc.text("\n");
                let handed = kept.len() as u64;
                for (i, metadata) in kept {
                    let found = &page.records[i];
                    if headers_only {
                        self.header(doc, &found.item, found.seconds);
                    } else {
                        self.record(doc, &found.item, found.seconds, metadata.as_deref());
                    }
                }
                let total = state.total.or(page.total);
                if next.is_some() || !fresh {
                    let cursor = state.cursor.to_string();
                    let size = total.map(|t| t.max(state.cursor + handed).to_string());
                    let mut attrs: Vec<(&str, &str)> = Vec::new();
                    if let Some(s) = &size {
                        attrs.push(("completeListSize", s));
                    }
                    attrs.push(("cursor", &cursor));
                    match next {
                        Some(at) => {
                            let token = ListState {
                                cursor: state.cursor + handed,
                                total,
                                after: Some(at),
                                ..state.clone()
                            }
                            .token(&signer);
                            doc.open_with("resumptionToken", &attrs);
                            doc.text(&token);
                            doc.end("resumptionToken");
                        }
                        None => doc.empty_with("resumptionToken", &attrs),
                    }
                }
                doc.end(verb.name());
            }
        }
        Ok(())
    }

    fn identify(&mut self, doc: &mut Document) {
        let config = self.config();
        let name = crate::face::repository_name(config);
        let email = config
            .oai
            .adminemail
            .clone()
            .or_else(|| config.registration.as_ref().map(|r| r.adminemail.clone()))
            .unwrap_or_else(|| {
                format!("postmaster@{}", ::ibi::ip::host_of(&config.archiveaddress))
            });
        let earliest = self.earliest();
        let base = base_url(config);
        doc.open("Identify");
        doc.text("\n");
        doc.element("repositoryName", &name);
        doc.element("baseURL", &base);
        doc.element("protocolVersion", "2.0");
        doc.element("adminEmail", &email);
        doc.element("earliestDatestamp", &datestamp(earliest));
        doc.element("deletedRecord", "persistent");
        doc.element("granularity", "YYYY-MM-DDThh:mm:ssZ");
        // What is exposed, in Dublin Core (the description the protocol's guidelines
        // suggest for free text).
        doc.open("description");
        doc.open_with(
            "oai_dc:dc",
            &[
                ("xmlns:oai_dc", "http://www.openarchives.org/OAI/2.0/oai_dc/"),
                ("xmlns:dc", "http://purl.org/dc/elements/1.1/"),
                ("xsi:schemaLocation", "http://www.openarchives.org/OAI/2.0/oai_dc/ http://www.openarchives.org/OAI/2.0/oai_dc.xsd"),
            ],
        );
        doc.element(
            "dc:description",
            "Records are the metadata items of this IBI Archive, one per item, in each format the item holds; a data item without a metadata item has no record. The identifier of a record is its metadata item's persistent URL, which stays the same when the item moves to another Archive. A metadata item removed is kept as a deleted record.",
        );
        doc.end("oai_dc:dc");
        doc.end("description");
        doc.end("Identify");
    }

    /// The earliest datestamp: the index's first line; else the epoch (a lower bound the
    /// protocol allows, found without reading every item).
    fn earliest(&self) -> i64 {
        Index::open(&self.archive.var())
            .and_then(|i| i.line_at(i.start()))
            .and_then(Result::ok)
            .map_or(0, |(e, _)| e.seconds.max(0))
    }

    /// The formats of one record with their schemas and namespaces: those whose file
    /// can be answered (a tombstone: those it had, else oai_dc).
    fn item_formats(&mut self, item: &Item) -> Vec<(String, (String, String))> {
        if item.state == State::Deleted {
            let mut names: Vec<String> = item.formats.keys().cloned().collect();
            if names.is_empty() {
                names.push("oai_dc".into());
            }
            return names
                .into_iter()
                .map(|f| {
                    let schema = self.format_schema(&f, None);
                    (f, schema)
                })
                .collect();
        }
        let mut out = Vec::new();
        for (f, file) in &item.formats {
            let Some(xml) = self.metadata(item, file) else {
                continue;
            };
            let schema = self.format_schema(f, Some(&xml));
            out.push((f.clone(), schema));
        }
        out
    }

    /// Every format announced, with its schema and namespace: oai_dc, and those of the
    /// index's line of formats.
    fn all_formats(&mut self, index: &Index) -> Vec<(String, (String, String))> {
        let mut names = std::collections::BTreeSet::from(["oai_dc".to_string()]);
        names.extend(index.formats.iter().cloned());
        names
            .into_iter()
            .map(|f| {
                let schema = self.format_schema(&f, None);
                (f, schema)
            })
            .collect()
    }

    /// The schema and namespace of a format: known, else what the root element of one of
    /// its files declares (as it is in the index; without the index, while it is built,
    /// the file `own` of the record asked about), else the format's name.
    fn format_schema(&mut self, prefix: &str, own: Option<&[u8]>) -> (String, String) {
        if let Some(known) = known_schema(prefix) {
            return known;
        }
        // The first records of that format, in the index's order (at most 8 files read,
        // among its first 10,000 lines): the first whose file names a schema, else the
        // first whose root has a namespace. One answer per format, whichever record is
        // asked about.
        let mut first: Option<(String, String)> = None;
        let mut tried = 0;
        let mut consider = |xml: Option<Vec<u8>>| -> bool {
            tried += 1;
            if let Some(found) = xml.as_deref().and_then(root_schema) {
                if !found.0.is_empty() {
                    first = Some(found);
                    return true;
                }
                first.get_or_insert(found);
            }
            tried == 8
        };
        if let Some(index) = Index::open(&self.archive.var()) {
            let lines: Vec<String> = index
                .lines_from(index.start())
                .map_while(Result::ok)
                .take(10_000)
                .filter(|(e, _)| !e.deleted && e.formats.iter().any(|f| f == prefix))
                .map(|(e, _)| e.rep)
                .take(8)
                .collect();
            for rep in lines {
                let xml = self.load(&rep).and_then(|item| {
                    let file = item.formats.get(prefix)?.clone();
                    self.metadata(&item, &file)
                });
                if consider(xml) {
                    break;
                }
            }
        } else if let Some(xml) = own {
            consider(Some(xml.to_vec()));
        }
        first.unwrap_or_default()
    }

    /// The metadata item `id` names (its persistent URL, any spelling of its IBI), or
    /// idDoesNotExist.
    fn record_item(&mut self, id: &str) -> Result<Item, OaiError> {
        let prefix = self.config().persistent_url("");
        let not_here = || {
            error(
                "idDoesNotExist",
                format!(
                    "{} is not the identifier of a record of this Archive",
                    shown(id)
                ),
            )
        };
        let rest = match id.get(..prefix.len()) {
            Some(p) if p.eq_ignore_ascii_case(&prefix) => &id[prefix.len()..],
            _ => return Err(not_here()),
        };
        let ibi = Ibi::parse(rest).map_err(|_| not_here())?;
        let lookup = self.archive.store().find(&ibi);
        self.log.extend(lookup.log.into_lines());
        match lookup.item {
            Some(item) if is_record(&item) => Ok(item),
            _ => Err(not_here()),
        }
    }

    /// The item in `col/<rel>`, if it loads.
    /// (A directory without item.toml is no item, and says nothing; at most 8 lines go
    /// to the log, however many items of a page are faulty.)
    fn load(&mut self, rel: &str) -> Option<Item> {
        let rep = Rep::parse(rel).ok()?;
        let dir = self.col.as_ref()?.item(rel).ok()?;
        if !dir.has_item_toml() {
            return None;
        }
        match Item::load(&dir, rep) {
            Ok(item) => Some(item),
            Err(e) => {
                if self.log.len() < 8 {
                    self.log.push(e.to_string());
                }
                None
            }
        }
    }

    /// A new list's state from its arguments.
    fn new_list(&self, args: &Args, headers_only: bool) -> Result<ListState, OaiError> {
        if args.get("set").is_some() {
            return Err(error("noSetHierarchy", "this Archive has no sets"));
        }
        let prefix = args.get("metadataPrefix").unwrap_or_default();
        let date = |name: &str, until: bool| -> Result<Option<(i64, bool)>, OaiError> {
            match args.get(name) {
                None => Ok(None),
                Some(v) => parse_date(v, until).map(Some).ok_or_else(|| {
                    error(
                        "badArgument",
                        format!("{name} {} is not a date of the form YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ", shown(v)),
                    )
                }),
            }
        };
        let from = date("from", false)?;
        let until = date("until", true)?;
        if let (Some((f, fs)), Some((u, us))) = (from, until) {
            if fs != us {
                return Err(error(
                    "badArgument",
                    "from and until are not of the same granularity",
                ));
            }
            if f > u {
                return Err(error("badArgument", "from is later than until"));
            }
        }
        if !oai_index::is_format_name(prefix) {
            return Err(cannot_disseminate(prefix));
        }
        Ok(ListState {
            headers_only,
            prefix: prefix.to_string(),
            from: from.map(|(s, _)| s),
            until: until.map(|(s, _)| s),
            cursor: 0,
            total: None,
            after: None,
        })
    }

    /// One page of the list `state`, from `index`. A line that does not read makes the
    /// index unusable: it is built again, and the harvester asked to come back.
    fn page(&mut self, index: &Index, state: &ListState) -> Result<Page, Failure> {
        let e = match self.index_page(index, state) {
            Ok(page) => return Ok(page),
            Err(e) => e,
        };
        let var = self.archive.var();
        self.log.push(format!(
            "{}: {e}; it is built again",
            var.join(oai_index::FILE_NAME).display()
        ));
        match oai_build::start(self.archive.root(), self.now) {
            // Built in the request: the page from the new index (once).
            oai_build::Started::Built => match Index::open(&var) {
                Some(index) => self
                    .index_page(&index, state)
                    .map_err(|_| self.unavailable("it was built but does not read", 60)),
                None => Err(self.unavailable("it was built but does not read", 60)),
            },
            started => Err(self.not_yet(started)),
        }
    }

    /// The index of the lists, built first when there is none (the answer is then a
    /// `503` unless this process builds in the request); an index older than col/ is
    /// answered as it is while it is built again apart from the request. Never a walk
    /// of col/: its staleness is told by the stamp ([`oai_build::is_fresh`]).
    fn index(&mut self) -> Result<Index, Failure> {
        let var = self.archive.var();
        let path = var.join(oai_index::FILE_NAME);
        if let Some(index) = Index::open(&var) {
            let fresh = self
                .col
                .as_ref()
                .is_none_or(|col| oai_build::is_fresh(&var, col));
            if fresh {
                return Ok(index);
            }
            match oai_build::start(self.archive.root(), self.now) {
                oai_build::Started::Built => {
                    return Index::open(&var)
                        .ok_or_else(|| self.unavailable("it was built but does not read", 60))
                }
                oai_build::Started::Begun { .. } => self.log.push(format!(
                    "{}: col/ has changed since it was written; it is built again apart from the request, and answered as it is meanwhile",
                    path.display()
                )),
                oai_build::Started::Paced {
                    retry_after,
                    failed: Some(why),
                } => self.log.push(format!(
                    "{}: col/ has changed since it was written, and its last build {why}; it is built again in {retry_after} s, and answered as it is meanwhile",
                    path.display()
                )),
                oai_build::Started::UnderWay { .. } | oai_build::Started::Paced { .. } => {}
                oai_build::Started::Impossible(why) => self.log.push(format!(
                    "{}: col/ has changed since it was written, and it cannot be built again here: {why}; answered as it is (run ibi-archive check where var/ can be written)",
                    path.display()
                )),
            }
            return Ok(index);
        }
        match oai_build::start(self.archive.root(), self.now) {
            oai_build::Started::Built => Index::open(&var)
                .ok_or_else(|| self.unavailable("it was built but does not read", 60)),
            started => Err(self.not_yet(started)),
        }
    }

    /// `503`, with a line in the log when a build begins, cannot begin, or last failed.
    fn not_yet(&mut self, started: oai_build::Started) -> Failure {
        match started {
            oai_build::Started::Built => Failure::Unavailable { retry_after: 1 },
            oai_build::Started::Begun { retry_after } => self.unavailable(
                "absent or unreadable: it is built apart from the request, and lists answer 503 meanwhile",
                retry_after,
            ),
            oai_build::Started::UnderWay { retry_after } => Failure::Unavailable { retry_after },
            oai_build::Started::Paced {
                retry_after,
                failed: None,
            } => Failure::Unavailable { retry_after },
            oai_build::Started::Paced {
                retry_after,
                failed: Some(why),
            } => self.unavailable(
                &format!("absent, and its last build {why}; it is built again in {retry_after} s"),
                retry_after,
            ),
            oai_build::Started::Impossible(why) => self.unavailable(
                &format!("absent, and it cannot be built here: {why}; lists answer 503 until ibi-archive check writes it where var/ can be written"),
                3600,
            ),
        }
    }

    fn unavailable(&mut self, why: &str, retry_after: u64) -> Failure {
        self.log.push(format!(
            "{}: {why}",
            self.archive.var().join(oai_index::FILE_NAME).display()
        ));
        Failure::Unavailable { retry_after }
    }

    /// The page of the list `state` in `index`: from the line after the last page's
    /// (or the first at or after `from`, by a binary search), the lines it hands out and
    /// the one after, each believed only while its item says the same.
    fn index_page(&mut self, index: &Index, state: &ListState) -> std::io::Result<Page> {
        let size = self.config().oai.page_size;
        let at = match &state.after {
            Some(Position::Index(s, r)) => index.seek((*s, r), true)?,
            _ => index.seek((state.from.unwrap_or(i64::MIN), ""), false)?,
        };
        let total = match (state.total, &state.after) {
            (Some(t), _) => Some(t),
            (None, None) => Some(self.count(index, at, state)?),
            (None, Some(_)) => None,
        };
        let mut records = Vec::new();
        let mut next = None;
        for line in index.lines_from(at) {
            let (entry, _) = line?;
            if state.until.is_some_and(|u| entry.seconds > u) {
                break;
            }
            if !entry_has(&entry, &state.prefix) {
                continue;
            }
            let Some(item) = self.load(&entry.rep) else {
                continue;
            };
            // Believed only while the item says the same (the datestamp of an item.toml
            // without timestamp is the newest modification in its directory, as check
            // worked it out: not worked out again here).
            if !is_record(&item)
                || (item.state == State::Deleted) != entry.deleted
                || item.timestamp.is_some_and(|t| t != entry.seconds)
                || !disseminates(&item, &state.prefix)
            {
                continue;
            }
            if records.len() == size {
                // One more there: this page ends before it.
                next = records
                    .last()
                    .map(|f: &Found| Position::Index(f.seconds, f.item.rep.as_str().to_string()));
                break;
            }
            records.push(Found {
                seconds: entry.seconds,
                item,
            });
        }
        Ok(Page {
            records,
            next,
            total,
        })
    }

    /// How many lines of the index from `at` are in the list (their format and dates;
    /// a line whose item has changed since is counted: the size is then a bound), once
    /// per list: counted in the first [`MAX_COUNTED`] bytes of the list's lines, past
    /// them estimated in proportion (completeListSize, which the protocol makes
    /// optional, is a guide to the harvester, not a promise: the list may change while
    /// it is harvested).
    fn count(&self, index: &Index, at: u64, state: &ListState) -> std::io::Result<u64> {
        let end = match state.until {
            Some(u) => index.seek((u, "\u{10ffff}"), true)?,
            None => index.end(),
        };
        Ok(index.count(at, end, &state.prefix, Some(MAX_COUNTED))?.0)
    }

    fn header(&self, doc: &mut Document, item: &Item, seconds: i64) {
        if item.state == State::Deleted {
            doc.open_with("header", &[("status", "deleted")]);
        } else {
            doc.open("header");
        }
        // A record's identifier: its item's persistent URL.
        let identifier = crate::filelist::persistent_url(self.config(), item);
        doc.element("identifier", &identifier);
        doc.element("datestamp", &datestamp(seconds));
        doc.end("header");
    }

    fn record(&self, doc: &mut Document, item: &Item, seconds: i64, metadata: Option<&[u8]>) {
        doc.open("record");
        self.header(doc, item, seconds);
        if let Some(xml) = metadata {
            doc.open("metadata");
            doc.fragment(xml);
            doc.end("metadata");
        }
        doc.end("record");
    }

    /// The metadata file `file` of `item`, as XML to put inside `metadata`; `None`, with a
    /// line in the log, when it cannot be read or is not one well-formed element.
    fn metadata(&mut self, item: &Item, file: &str) -> Option<Vec<u8>> {
        match read_metadata(item, file) {
            Ok(xml) => Some(xml),
            Err(e) => {
                self.log.push(format!(
                    "{}/{file}: {e}: left out of OAI-PMH answers",
                    item.doc().display()
                ));
                None
            }
        }
    }
}

/// Whether `item` is a record: a metadata item, not restricted (the metadata of a
/// restricted metadata item is for the licensed networks only, and a harvester's list is
/// the same for every client).
pub fn is_record(item: &Item) -> bool {
    item.contenttype == ContentType::Metadata && !item.restricted
}

/// Whether a line of the index is in the list of format `prefix`.
fn entry_has(entry: &oai_index::Entry, prefix: &str) -> bool {
    entry.formats.iter().any(|f| f == prefix) || (entry.deleted && prefix == "oai_dc")
}

/// Whether `item` has a record in `prefix`: a format of it, or, for a tombstone, oai_dc
/// (every record of a repository is in oai_dc).
fn disseminates(item: &Item, prefix: &str) -> bool {
    item.formats.contains_key(prefix) || (item.state == State::Deleted && prefix == "oai_dc")
}

fn cannot_disseminate(prefix: &str) -> OaiError {
    error(
        "cannotDisseminateFormat",
        format!(
            "{} is not a metadata format of this record or Archive",
            shown(prefix)
        ),
    )
}

/// The metadata file `file` of `item` (opened as it is served), read (at most
/// [`MAX_METADATA`] bytes) and written again by quick-xml: its one root element and what
/// it holds, comments kept; the XML declaration, a document type and processing
/// instructions left out. Refused: not UTF-8, a character XML cannot hold, an entity
/// other than the five of XML, not one well-formed element, an element of the OAI-PMH
/// namespace ([`well_formed_in_metadata`]).
fn read_metadata(item: &Item, file: &str) -> Result<Vec<u8>, String> {
    let dir = item.handle.as_ref().ok_or("no directory")?;
    let stored = dir
        .stored_doc_name(file.as_bytes())
        .map_err(|_| "cannot be opened")?;
    let Ok(DocEntry::File(f)) = dir.open_doc(&stored) else {
        return Err("cannot be opened".into());
    };
    if f.len > MAX_METADATA {
        return Err(format!("larger than {MAX_METADATA} bytes"));
    }
    let mut bytes = Vec::with_capacity(f.len as usize);
    (&f.file)
        .take(MAX_METADATA + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_METADATA {
        return Err(format!("larger than {MAX_METADATA} bytes"));
    }
    let text = std::str::from_utf8(&bytes).map_err(|_| "not UTF-8")?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if xml_chars(text).len() != text.len() {
        return Err("holds a character XML cannot hold".into());
    }
    let (out, undeclare) = copy_metadata(text, false)?;
    // What is in no namespace in the file stays in none inside `metadata`, whose default
    // is the OAI-PMH namespace: written again, the root undeclaring it.
    let out = if undeclare {
        copy_metadata(text, true)?.0
    } else {
        out
    };
    well_formed_in_metadata(&out)?;
    Ok(out)
}

/// The XML of a metadata file (`text`) written again by quick-xml, checked as
/// [`read_metadata`] says, its root given `xmlns=""` when `undeclare`; and whether it
/// should be (an element has no prefix, and the root declares no default namespace).
fn copy_metadata(text: &str, undeclare: bool) -> Result<(Vec<u8>, bool), String> {
    use quick_xml::Reader;
    let mut reader = Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let mut out = Writer::new(Vec::with_capacity(text.len()));
    let mut depth = 0usize;
    let mut roots = 0usize;
    // Whether the root declares a default namespace, whether an element has no prefix.
    let (mut root_default_ns, mut unprefixed) = (false, false);
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("not well-formed XML: {e}"))?;
        let inside = depth > 0;
        match &event {
            Event::Eof => break,
            Event::Decl(d) => {
                if let Some(Ok(enc)) = d.encoding() {
                    if !enc.eq_ignore_ascii_case(b"utf-8") {
                        return Err("not declared UTF-8".into());
                    }
                }
                continue;
            }
            Event::DocType(_) | Event::PI(_) => continue,
            Event::Start(e) | Event::Empty(e) => {
                if depth == 0 {
                    roots += 1;
                    if roots > 1 {
                        return Err("more than one root element".into());
                    }
                }
                for a in e.attributes() {
                    let a = a.map_err(|e| format!("not well-formed XML: {e}"))?;
                    a.unescape_value()
                        .map_err(|e| format!("an attribute that does not read: {e}"))?;
                    if depth == 0 && a.key.as_ref() == b"xmlns" {
                        root_default_ns = true;
                    }
                }
                unprefixed |= e.name().prefix().is_none();
                if depth == 0 && undeclare {
                    let mut root = e.clone().into_owned();
                    root.push_attribute(("xmlns", ""));
                    let root = match event {
                        Event::Start(_) => Event::Start(root),
                        _ => Event::Empty(root),
                    };
                    out.write_event(root).map_err(|e| e.to_string())?;
                    if matches!(event, Event::Start(_)) {
                        depth += 1;
                    }
                    continue;
                }
                if matches!(event, Event::Start(_)) {
                    depth += 1;
                }
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Text(t) => {
                if !inside {
                    if t.iter().all(|b| b.is_ascii_whitespace()) {
                        continue;
                    }
                    return Err("text outside the root element".into());
                }
            }
            Event::GeneralRef(r) => {
                if !inside {
                    return Err("a reference outside the root element".into());
                }
                let known = if r.is_char_ref() {
                    matches!(r.resolve_char_ref(), Ok(Some(c)) if xml_chars(&c.to_string()).len() == c.len_utf8())
                } else {
                    let name = r.decode().map_err(|e| e.to_string())?;
                    quick_xml::escape::resolve_predefined_entity(&name).is_some()
                };
                if !known {
                    return Err("a reference to an entity that is not one of XML's".into());
                }
            }
            Event::CData(_) | Event::Comment(_) => {
                if !inside {
                    continue;
                }
            }
        }
        out.write_event(event).map_err(|e| e.to_string())?;
    }
    if roots != 1 || depth != 0 {
        return Err("not one well-formed element".into());
    }
    Ok((out.into_inner(), unprefixed && !root_default_ns))
}

/// Whether `fragment` is well-formed XML with namespaces where an answer puts it, inside
/// `metadata` (the OAI-PMH namespace by default, `xsi` declared): read by xml-rs, which
/// judges what quick-xml's reader lets through (names, attributes, `]]>` in text, `--`
/// in comments, character references, prefixes not declared). An element of the
/// OAI-PMH namespace in it is refused: a harvester would read a `resumptionToken`, an
/// `error` or a `record` there as part of the answer itself (a forged token, a forged
/// end of the list), whatever prefix or default namespace put it there.
fn well_formed_in_metadata(fragment: &[u8]) -> Result<(), String> {
    let head = format!(r#"<metadata xmlns="{OAI_NS}" xmlns:xsi="{XSI_NS}">"#);
    let whole = [head.as_bytes(), fragment, b"</metadata>"].concat();
    let mut wrapper = true;
    for event in xml::EventReader::new(whole.as_slice()) {
        let event = event.map_err(|e| format!("not well-formed XML: {}", e.msg()))?;
        if let xml::reader::XmlEvent::StartElement { name, .. } = event {
            if !std::mem::take(&mut wrapper) && name.namespace.as_deref() == Some(OAI_NS) {
                return Err(format!(
                    "holds an element of the OAI-PMH namespace ({}), which a harvester would take for part of the answer",
                    shown(&name.local_name)
                ));
            }
        }
    }
    Ok(())
}

/// Whether the metadata file `file` of `item` can be answered (see [`read_metadata`]).
pub fn check_metadata(item: &Item, file: &str) -> Result<(), String> {
    read_metadata(item, file).map(|_| ())
}

/// The schema and namespace of a metadata file's root element: its namespace as resolved
/// (whatever its prefix), and the schema `xsi:schemaLocation` (the attribute of the XML
/// Schema instance namespace, whatever its prefix) pairs with it, empty when none does.
/// `None` when the root is in no namespace.
fn root_schema(xml: &[u8]) -> Option<(String, String)> {
    use quick_xml::name::{Namespace, ResolveResult};
    let mut reader = quick_xml::NsReader::from_reader(xml);
    loop {
        let (resolved, event) = reader.read_resolved_event().ok()?;
        let ns = match resolved {
            ResolveResult::Bound(Namespace(ns)) => String::from_utf8(ns.to_vec()).ok(),
            _ => None,
        };
        match event {
            Event::Start(e) | Event::Empty(e) => {
                let ns = ns?;
                let mut schema = String::new();
                for a in e.attributes().filter_map(Result::ok) {
                    let (attr_ns, local) = reader.resolve_attribute(a.key);
                    let is_xsi = matches!(attr_ns, ResolveResult::Bound(Namespace(n)) if n == XSI_NS.as_bytes());
                    if !is_xsi || local.as_ref() != b"schemaLocation" {
                        continue;
                    }
                    let Ok(locations) = a.unescape_value() else {
                        continue;
                    };
                    let words: Vec<&str> = locations.split_whitespace().collect();
                    if let Some(pair) = words.chunks(2).find(|p| p.first() == Some(&ns.as_str())) {
                        schema = pair.get(1).map_or_else(String::new, |s| s.to_string());
                    }
                }
                return Some((schema, ns));
            }
            Event::Eof => return None,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_at_both_granularities() {
        assert_eq!(
            parse_date("2009-07-21", false),
            Some((1_248_134_400, false))
        );
        assert_eq!(parse_date("2009-07-21", true), Some((1_248_220_799, false)));
        assert_eq!(
            parse_date("2009-07-21T13:23:45Z", false),
            Some((1_248_182_625, true))
        );
        for bad in [
            "2009-7-21",
            "2009-07-21T13:23:45",
            "2009-07-21T13:23Z",
            "2009-02-30",
            "2009-07-21T25:00:00Z",
            "2009-07-21 13:23:45Z",
            "",
            "-999-07-21",
            "+999-07-21",
            " 999-07-21",
            "2009-07-+1",
            "+999-07-21T13:23:45Z",
            "2009-07-21T+3:23:45Z",
            "2009-07-21T13:23:+5Z",
        ] {
            assert_eq!(parse_date(bad, false), None, "{bad}");
        }
        assert_eq!(datestamp(1_248_182_625), "2009-07-21T13:23:45Z");
    }

    fn signer_of(keys: &UrlKeys) -> Signer<'_> {
        Signer {
            keys,
            archive: "sid.inpe.br/mtc-m18@80/2008/03.17.15.17\nhttp://localhost:8080/sid.inpe.br/mtc-m18@80/2008/03.17.15.17".into(),
        }
    }

    #[test]
    fn tokens_read_back_and_altered_ones_do_not() {
        let keys = UrlKeys::from_secret([7; 32]);
        let signer = signer_of(&keys);
        let state = ListState {
            headers_only: false,
            prefix: "oai_dc".into(),
            from: Some(1000),
            until: None,
            cursor: 100,
            total: Some(250),
            after: Some(Position::Index(
                1234,
                "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47".into(),
            )),
        };
        let token = state.token(&signer);
        let (body, tag) = token.rsplit_once(',').unwrap();
        assert_eq!(
            body,
            "2,R,oai_dc,1000,-,-,100,250,1234,sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47"
        );
        assert_eq!(tag.len(), 32);
        assert_eq!(
            ListState::from_token(&token, false, &signer),
            Some(state.clone())
        );
        // For the other list verb, not.
        assert_eq!(ListState::from_token(&token, true, &signer), None);
        let altered = token.replacen(",100,", ",200,", 1);
        assert_ne!(altered, token);
        assert_eq!(ListState::from_token(&altered, false, &signer), None);
        assert_eq!(
            ListState::from_token(&token[..token.len() - 1], false, &signer),
            None
        );
        assert_eq!(ListState::from_token("garbage", false, &signer), None);
        // Another secret, or another Archive with this secret: not this Archive's.
        let other_keys = UrlKeys::from_secret([8; 32]);
        let other = signer_of(&other_keys);
        assert_eq!(ListState::from_token(&token, false, &other), None);
        let elsewhere = Signer {
            keys: &keys,
            archive: "sid.inpe.br/mtc-m18@80/2008/03.17.15.17\nhttp://other.example.org/sid.inpe.br/mtc-m18@80/2008/03.17.15.17".into(),
        };
        assert_eq!(ListState::from_token(&token, false, &elsewhere), None);
        // Signed, and still judged: a cursor or size past any list, or past its size.
        for (cursor, total) in [(u64::MAX, None), (1 << 63, None), (300, Some(250))] {
            let odd = ListState {
                cursor,
                total,
                ..state.clone()
            };
            assert_eq!(
                ListState::from_token(&odd.token(&signer), false, &signer),
                None
            );
        }
        // A set other than none, signed.
        let with_set = body.replacen(",-,-,100,", ",-,s,100,", 1);
        let with_set = format!("{with_set},{}", signer.tag(&with_set));
        assert_eq!(ListState::from_token(&with_set, false, &signer), None);
    }

    #[test]
    fn requests_are_judged_as_the_protocol_says() {
        let code = |qs: &str| match parse_request(&Query::parse(qs.as_bytes()).unwrap()) {
            Ok((v, _)) => v.name().to_string(),
            Err(e) => e.code.to_string(),
        };
        assert_eq!(code("verb=Identify"), "Identify");
        assert_eq!(code("verb=Nonsense"), "badVerb");
        assert_eq!(code("verb=Identify&verb=Identify"), "badVerb");
        assert_eq!(code("verb=Identify&x=1"), "badArgument");
        assert_eq!(code("verb=ListRecords"), "badArgument");
        assert_eq!(
            code("verb=ListRecords&metadataPrefix=oai_dc"),
            "ListRecords"
        );
        assert_eq!(
            code("verb=ListRecords&metadataPrefix=oai_dc&metadataPrefix=oai_dc"),
            "badArgument"
        );
        assert_eq!(code("verb=ListRecords&resumptionToken=x"), "ListRecords");
        assert_eq!(
            code("verb=ListRecords&resumptionToken=x&metadataPrefix=oai_dc"),
            "badArgument"
        );
        assert_eq!(code("verb=GetRecord&identifier=x"), "badArgument");
        assert_eq!(
            code("verb=GetRecord&identifier=x&metadataPrefix=oai_dc"),
            "GetRecord"
        );
        assert_eq!(code("verb=ListIdentifiers&metadataPrefix="), "badArgument");
        assert_eq!(code("verb=ListSets&resumptionToken=x"), "ListSets");
    }

    #[test]
    fn xml_cannot_hold_controls() {
        assert_eq!(xml_chars("a\u{1}b\tc\u{ffff}"), "ab\tc");
        assert!(matches!(xml_chars("plain é"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_root_element_tells_its_schema() {
        // Whatever the prefixes, the namespace as resolved; no schema given: empty.
        let xml = br#"<record xmlns="urn:example:a" xmlns:i="http://www.w3.org/2001/XMLSchema-instance" i:schemaLocation="urn:example:other http://example.org/o.xsd urn:example:a http://example.org/a.xsd"/>"#;
        assert_eq!(
            root_schema(xml),
            Some(("http://example.org/a.xsd".into(), "urn:example:a".into()))
        );
        assert_eq!(
            root_schema(br#"<n:note xmlns:n="urn:example:note">x</n:note>"#),
            Some((String::new(), "urn:example:note".into()))
        );
        let xml = br#"<m:mods xmlns:m="http://www.loc.gov/mods/v3" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.loc.gov/mods/v3 http://example.org/mods.xsd"/>"#;
        assert_eq!(
            root_schema(xml),
            Some((
                "http://example.org/mods.xsd".into(),
                "http://www.loc.gov/mods/v3".into()
            ))
        );
        assert_eq!(root_schema(b"<a/>"), None);
    }
}
