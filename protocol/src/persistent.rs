//! Persistent URLs (resolution standard §8.1, Tables 8.1 to 8.5): what a resolver reads
//! from the path and query of a request before it asks the Archives.
//!
//! ```text
//! URL-persistente = "http://urlib.net/" IBI [mdf] [path-absolute] ["?" pergunta]   (Table 8.1)
//! IBI = repositório | IBIp
//! mdf = ([u [t]] | [t [u]]) [m [t]]
//! u   = "!"                                      last edition
//! t   = "+" ["(" idioma ["-" país] ")"]          translation
//! m   = ":" ["(" formato ")"]                    metadata
//! formato  = "oai_dc"
//! pergunta = [par *("&" par)]     par = nome "=" valor
//! ```
//!
//! The modifier is glued to the IBI's last segment (`35MME4E!:(oai_dc)`); a file path may
//! follow it (`LK47B6W/362SFKH/reference.bib`). Of the query, the resolver reads
//! `ibiurl.verblist` (Table 8.4) and `ibiurl.requireditemstatus` (Table 8.3) and ignores
//! every other pair. The verb list sent to the Archives, `parsedibiurl.verblist` of
//! Table 8.6, is the union without repetition and in order of the modifier's verbs
//! (Table 8.5: `!` GetLastEdition, `+` GetTranslation, `:` GetMetadata) then the query's
//! (Example 8.8: `LK47B6W/362SFKH+?…&ibiurl.verblist=GetMetadata` gives
//! `GetTranslation GetMetadata`). The same verb with and without its parameter, at one
//! place of the relation, is one verb: the one with the parameter, in the place of the
//! first (`+(pt)` and `GetTranslation` give `GetTranslation(pt)`; see `add_verb`).
//!
//! A language, in `+(ll-CC)` or `GetTranslation(ll-CC)`, must be one of ISO 639-1 and its
//! country one of ISO 3166-1 alpha-2 (Appendix B, Table B.1; [`Lang::check_codes`]).
//!
//! The IBI and its modifier may arrive percent-encoded (`%21` for `!`); each path segment
//! is decoded on its own, so `%2F` never splits one. The file path is kept as the bytes it
//! decodes to (a file name may be Latin-1, Example 6.2).

use std::fmt;

use percent_encoding::{percent_decode_str, AsciiSet, CONTROLS};

use crate::negotiate::Wanted;
use crate::query::Query;
use crate::relation::{Lang, Relation, Step, Verb, VerbList};
use crate::{Ibi, Ibip, Rep};

/// Longest path read, in bytes (an IBI is at most 255; a file path much less than this).
pub const MAX_PATH_LEN: usize = 4096;

/// The path before an IBI at which a resolver lists the item's editions for readers, an
/// HTML page: `<publicurl>/timemap/html/<IBI>`, beside its TimeMap for Memento clients at
/// `/timemap/link/<IBI>`. An Archive's landing page links it for an item with a next
/// edition.
pub const EDITIONS_PATH: &str = "/timemap/html";

/// The path below an Archive's service (`<baseurl>/<archiveserviceibi>`) that names an
/// item's file-list page, its landing page: written by the Archive, read by its routes,
/// and linked by a resolver to a tombstone kept there.
pub const FILE_LIST_PATH: &str = "/filelist/";

/// Appends the path, below the Archive service's own (`<baseurl>/<archiveserviceibi>`),
/// of the file-list page of the item `rep` (spelled as its directory is):
/// `/filelist/<rep>`, escaped as a URL path.
pub fn push_file_list_path(url: &mut String, rep: &str) {
    url.push_str(FILE_LIST_PATH);
    crate::escape::push_url_path(url, rep.as_bytes());
}

/// A path below the Archive service (a PATH_INFO) of [`push_file_list_path`]'s form: the
/// IBI after `/filelist/`, as the path spells it; `None` for any other path.
pub fn split_file_list_path(path_info: &[u8]) -> Option<&[u8]> {
    path_info.strip_prefix(FILE_LIST_PATH.as_bytes())
}

/// A parsed persistent URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PersistentUrl {
    ibi: Ibi,
    /// The modifier, as the verbs its symbols stand for (Table 8.5), in order.
    modifier: Vec<Verb>,
    /// `parsedibiurl.filepath`: the decoded path after the IBI and its modifier, starting
    /// with `/`.
    filepath: Option<Vec<u8>>,
    /// `parsedibiurl.verblist`: the modifier's verbs, then the query's not already there.
    verbs: Vec<Verb>,
    /// The relation the verbs name and whether they ask for the file list.
    verblist: VerbList,
    /// `parsedibiurl.requireditemstatus` is `Original`.
    original: bool,
    /// The query as received (without `?`), when there was one.
    query: Option<String>,
}

/// Why a path and query are not a persistent URL: the reason, for a page in any language
/// to say, and a message in English for the log (its `Display`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PersistentUrlError {
    pub refusal: Refusal,
    message: String,
}

/// The reason a path and query are not a persistent URL, with the values of the request
/// it names, each as [`crate::shown`] writes it (quoted, cut).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The path is `length` bytes long, more than the `max` read.
    PathTooLong {
        length: usize,
        max: usize,
    },
    NoLeadingSlash,
    EmptyPath,
    /// A part of the IBI is not UTF-8 once decoded.
    IbiPartNotUtf8 {
        part: String,
    },
    /// A part of the IBI holds an encoded `/` or a control character.
    IbiPartSlash {
        part: String,
    },
    /// What starts the path is neither an IBIp nor a uniform repository name.
    NoIbi,
    /// What looks like a uniform repository name has `found` segments, not four.
    RepSegments {
        found: usize,
    },
    /// The path has one segment.
    OneSegment {
        segment: String,
    },
    ModifierNotClosed {
        modifier: String,
    },
    /// `!(…)`: the last edition takes no parameter.
    LastEditionParameter {
        modifier: String,
    },
    /// `+(…)` names no language.
    ModifierLanguage {
        modifier: String,
        language: String,
    },
    /// `+(…)` (`modifier` is `Some`) or a `GetTranslation(…)` of `ibiurl.verblist`
    /// (`word` is `Some`) names a language (or a country, `country`) by a code the
    /// standard does not know: `code`.
    UnknownCode {
        modifier: Option<String>,
        word: Option<String>,
        code: String,
        country: bool,
    },
    /// `:(…)` names a metadata format other than oai_dc.
    MetadataFormat {
        modifier: String,
        format: String,
    },
    /// A character of the modifier is none of `!`, `+`, `:`.
    ModifierSymbol {
        modifier: String,
        symbol: String,
    },
    /// The modifier is none of the compositions of Table 8.2.
    ModifierComposition {
        modifier: String,
    },
    FileDotSegment,
    FileControl,
    QueryNotPairs,
    /// `ibiurl.verblist` is not text.
    VerbListNotText,
    /// A word of `ibiurl.verblist` is not a verb of Table 8.4.
    NotAVerb {
        word: String,
    },
    /// `ibiurl.requireditemstatus` is not `Original`.
    RequiredStatus {
        value: String,
    },
    /// The verbs name no relation of Table 9.5.
    NoRelation {
        verbs: String,
    },
}

impl PersistentUrlError {
    fn new(refusal: Refusal, message: impl Into<String>) -> PersistentUrlError {
        PersistentUrlError {
            refusal,
            message: message.into(),
        }
    }
}

impl fmt::Display for PersistentUrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PersistentUrlError {}

fn err<T>(refusal: Refusal, message: impl Into<String>) -> Result<T, PersistentUrlError> {
    Err(PersistentUrlError::new(refusal, message))
}

impl PersistentUrl {
    /// Reads the path (`/` then the IBI…, as sent on the request line) and the query
    /// (without `?`) of a request.
    pub fn parse(path: &str, query: Option<&str>) -> Result<PersistentUrl, PersistentUrlError> {
        if path.len() > MAX_PATH_LEN {
            return err(
                Refusal::PathTooLong {
                    length: path.len(),
                    max: MAX_PATH_LEN,
                },
                format!(
                    "the path is {} bytes long; at most {MAX_PATH_LEN} are read",
                    path.len()
                ),
            );
        }
        let Some(rest) = path.strip_prefix('/') else {
            return err(Refusal::NoLeadingSlash, "the path does not start with /");
        };
        if rest.is_empty() {
            return err(Refusal::EmptyPath, "no IBI: the path is empty");
        }
        let segments: Vec<&str> = rest.split('/').collect();
        let (ibi, modifier_text, used) = split_ibi(&segments)?;
        let modifier = parse_modifier(&modifier_text)?;
        let filepath = file_path(&segments[used..])?;

        let query_text = query.filter(|q| !q.is_empty());
        let (query_verbs, original) = match query_text {
            None => (Vec::new(), false),
            Some(q) => read_query(q)?,
        };
        let mut verbs = modifier.clone();
        for v in query_verbs {
            add_verb(&mut verbs, v);
        }
        let words: Vec<String> = verbs.iter().map(Verb::to_string).collect();
        let verblist = VerbList::parse(&words.join(" ")).map_err(|e| {
            PersistentUrlError::new(
                Refusal::NoRelation {
                    verbs: shown(&words.join(" ")),
                },
                format!(
                    "the verbs {} name no relation of Table 9.5 ({e})",
                    words.join(" ")
                ),
            )
        })?;
        Ok(PersistentUrl {
            ibi,
            modifier,
            filepath,
            verbs,
            verblist,
            original,
            query: query_text.map(str::to_string),
        })
    }

    /// The plain persistent URL of `ibi`: no modifier, file path or query (what `/<IBI>`
    /// parses to).
    pub fn of(ibi: Ibi) -> PersistentUrl {
        PersistentUrl {
            ibi,
            modifier: Vec::new(),
            filepath: None,
            verbs: Vec::new(),
            verblist: VerbList::default(),
            original: false,
            query: None,
        }
    }

    /// `parsedibiurl.ibi`.
    pub fn ibi(&self) -> &Ibi {
        &self.ibi
    }

    /// `parsedibiurl.filepath`, decoded.
    pub fn filepath(&self) -> Option<&[u8]> {
        self.filepath.as_deref()
    }

    /// `parsedibiurl.verblist` as sent to the Archives: verbs separated by spaces
    /// (Example 10.2: `GetLastEdition GetMetadata(oai_dc)`); empty when there is none.
    pub fn verblist_text(&self) -> String {
        let words: Vec<String> = self.verbs.iter().map(Verb::to_string).collect();
        words.join(" ")
    }

    /// The verbs of `parsedibiurl.verblist`, in order.
    pub fn verbs(&self) -> &[Verb] {
        &self.verbs
    }

    /// The relation asked for (the pair `url<relation>` answers it).
    pub fn relation(&self) -> &Relation {
        self.verblist.relation()
    }

    /// Whether `GetFileList` is among the verbs.
    pub fn wants_file_list(&self) -> bool {
        self.verblist.wants_file_list()
    }

    /// The query as received (without `?`), when there was one.
    pub fn query(&self) -> Option<&str> {
        self.query.as_deref()
    }

    /// `ibiurl.requireditemstatus=Original` was asked.
    pub fn requires_original(&self) -> bool {
        self.original
    }

    /// The modifier as written in canonical form (`!+(pt-BR):(oai_dc)`).
    pub fn modifier_text(&self) -> String {
        self.modifier.iter().map(symbol).collect()
    }

    /// The same persistent URL for another IBI (a next edition, §8.2): the modifier,
    /// file path and query stay.
    pub fn with_ibi(&self, ibi: Ibi) -> PersistentUrl {
        PersistentUrl {
            ibi,
            ..self.clone()
        }
    }

    /// The same persistent URL with the translation step at `i` of its relation dropped
    /// (the item in its own language, when no translation suits the reader: Example 8.3).
    pub fn without_translation_at(&self, i: usize) -> PersistentUrl {
        let mut steps = self.relation().steps().to_vec();
        steps.remove(i);
        let relation = Relation::from_steps(steps)
            .expect("dropping a translation step keeps a relation in the grammar");
        self.for_related(self.ibi.clone(), &relation)
    }

    /// The persistent URL that asks for the description content negotiation chose
    /// (`crate::negotiate`): the landing page (`GetFileList`) for JSON-LD, a citation or
    /// the linkset, which the landing page answers by the same `Accept`, or the metadata
    /// item (`:(oai_dc)`) for its record. None when the reader wants the default or this URL asks for something
    /// itself (a modifier or a verb list, or a file path), which wins over `Accept`.
    pub fn negotiated(&self, wanted: Wanted) -> Option<PersistentUrl> {
        if !self.verbs.is_empty() || self.filepath.is_some() {
            return None;
        }
        match wanted {
            Wanted::Default => None,
            Wanted::OaiDc => Some(
                self.for_related(
                    self.ibi.clone(),
                    &Relation::from_steps(vec![Step::Metadata { oai_dc: true }])
                        .expect("the metadata step alone is a relation"),
                ),
            ),
            Wanted::JsonLd | Wanted::Citation(_) | Wanted::Linkset(_) => Some(PersistentUrl {
                verbs: vec![Verb::GetFileList],
                verblist: VerbList::parse("GetFileList").expect("GetFileList is a verb list"),
                ..self.clone()
            }),
        }
    }

    /// The persistent URL of the next round for a related item an Archive named without
    /// its URL (§8.2, the loop): `ibi` asked with `relation`, what is left of the verb
    /// list; the file path, `GetFileList`, the required status and the query stay.
    pub fn for_related(&self, ibi: Ibi, relation: &Relation) -> PersistentUrl {
        let mut verbs: Vec<Verb> = relation
            .steps()
            .iter()
            .map(|s| match s {
                Step::LastEdition => Verb::GetLastEdition,
                Step::Translation(l) => Verb::GetTranslation(l.clone()),
                Step::Metadata { oai_dc } => Verb::GetMetadata { oai_dc: *oai_dc },
            })
            .collect();
        if self.wants_file_list() {
            verbs.push(Verb::GetFileList);
        }
        let words: Vec<String> = verbs.iter().map(Verb::to_string).collect();
        let verblist = VerbList::parse(&words.join(" "))
            .expect("the verbs of a relation in the grammar name it");
        PersistentUrl {
            ibi,
            // Written back with the modifier of what is asked (the query may still carry
            // the verb list the reader wrote).
            modifier: verbs
                .iter()
                .filter(|v| **v != Verb::GetFileList)
                .cloned()
                .collect(),
            verbs,
            verblist,
            ..self.clone()
        }
    }
}

/// Writes the path and query back: `/<IBI><mdf>[<file path>][?<query>]`, the file path
/// percent-encoded where it must be. Parsing the output gives the same value.
impl fmt::Display for PersistentUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/{}{}", self.ibi, self.modifier_text())?;
        if let Some(path) = &self.filepath {
            for (i, segment) in path.split(|&b| b == b'/').enumerate() {
                if i > 0 {
                    f.write_str("/")?;
                }
                for piece in percent_encoding::percent_encode(segment, PATH_SEGMENT) {
                    f.write_str(piece)?;
                }
            }
        }
        if let Some(q) = &self.query {
            write!(f, "?{q}")?;
        }
        Ok(())
    }
}

/// Bytes of a file-path segment written as `%XX`: controls, space, non-ASCII, and what
/// would end the path or be read as a modifier's part (`?`, `#`, `%`, `/`).
const PATH_SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}');

/// The IBI at the start of the segments, the modifier glued to its last segment and how
/// many segments it used: a rep takes four, an IBIp two.
fn split_ibi(segments: &[&str]) -> Result<(Ibi, String, usize), PersistentUrlError> {
    let decoded = |s: &str| -> Result<String, PersistentUrlError> {
        let text = percent_decode_str(s).decode_utf8().map_err(|_| {
            PersistentUrlError::new(
                Refusal::IbiPartNotUtf8 { part: shown(s) },
                format!("the IBI part {} is not UTF-8 once decoded", shown(s)),
            )
        })?;
        if text.contains('/') || text.chars().any(char::is_control) {
            return err(
                Refusal::IbiPartSlash { part: shown(s) },
                format!(
                    "the IBI part {} holds an encoded / or a control character",
                    shown(s)
                ),
            );
        }
        Ok(text.into_owned())
    };
    let glued = |last: &str| -> (String, String) {
        match last.find(['!', '+', ':']) {
            Some(i) => (last[..i].to_string(), last[i..].to_string()),
            None => (last.to_string(), String::new()),
        }
    };
    let mut rep_error = None;
    if segments.len() >= 4 {
        let mut parts = Vec::with_capacity(4);
        for s in &segments[..4] {
            parts.push(decoded(s)?);
        }
        let (suffix, mdf) = glued(&parts[3]);
        let text = format!("{}/{}/{}/{}", parts[0], parts[1], parts[2], suffix);
        match Rep::parse(&text) {
            Ok(rep) => return Ok((Ibi::Rep(rep), mdf, 4)),
            Err(e) => rep_error = Some(e.to_string()),
        }
    }
    if segments.len() >= 2 {
        let prefix = decoded(segments[0])?;
        let (suffix, mdf) = glued(&decoded(segments[1])?);
        let text = format!("{prefix}/{suffix}");
        match Ibip::parse(&text) {
            Ok(ibip) => return Ok((Ibi::Ibip(ibip), mdf, 2)),
            Err(e) => {
                // A first segment that looks like a host name was meant as a rep.
                let meant_rep =
                    prefix.contains('.') || prefix.bytes().any(|b| b.is_ascii_lowercase());
                return match rep_error {
                    Some(r) if meant_rep => err(
                        Refusal::NoIbi,
                        format!("no IBI at the start of the path: {r}"),
                    ),
                    _ if meant_rep => err(
                        Refusal::RepSegments {
                            found: segments.len(),
                        },
                        format!(
                        "no IBI at the start of the path: a uniform repository name has four segments ({} found)",
                        segments.len()
                    )),
                    _ => err(
                        Refusal::NoIbi,
                        format!("no IBI at the start of the path: {e}"),
                    ),
                };
            }
        }
    }
    err(
        Refusal::OneSegment {
            segment: shown(segments[0]),
        },
        format!(
        "no IBI at the start of the path: {} is one segment; an IBIp has two, a uniform repository name four",
        shown(segments[0])
    ))
}

/// The refusal of `lang`, whose language or country code is not in the standard's tables.
fn unknown_code(lang: &Lang, modifier: Option<String>, word: Option<String>) -> Refusal {
    let text = lang.to_string();
    let (language, country) = text.split_once('-').unwrap_or((&text, ""));
    let known_language = Lang::parse(language).is_ok_and(|l| l.check_codes().is_ok());
    let (code, country) = if known_language {
        (country.to_string(), true)
    } else {
        (language.to_string(), false)
    };
    Refusal::UnknownCode {
        modifier,
        word,
        code,
        country,
    }
}

/// The mdf of Table 8.1, as verbs.
fn parse_modifier(text: &str) -> Result<Vec<Verb>, PersistentUrlError> {
    let mut verbs = Vec::new();
    let mut steps = Vec::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        rest = &rest[c.len_utf8()..];
        let param = match rest.strip_prefix('(') {
            Some(r) => match r.find(')') {
                Some(end) => {
                    rest = &r[end + 1..];
                    Some(&r[..end])
                }
                None => {
                    return err(
                        Refusal::ModifierNotClosed {
                            modifier: shown(text),
                        },
                        format!("modifier {}: \"(\" is not closed", shown(text)),
                    )
                }
            },
            None => None,
        };
        let (verb, step) = match (c, param) {
            ('!', None) => (Verb::GetLastEdition, Step::LastEdition),
            ('!', Some(_)) => {
                return err(
                    Refusal::LastEditionParameter {
                        modifier: shown(text),
                    },
                    format!(
                        "modifier {}: ! (last edition) takes no parameter",
                        shown(text)
                    ),
                )
            }
            ('+', None) => (Verb::GetTranslation(None), Step::Translation(None)),
            ('+', Some(p)) => {
                let lang = Lang::parse(p).map_err(|_| {
                    PersistentUrlError::new(
                        Refusal::ModifierLanguage {
                            modifier: shown(text),
                            language: shown(p),
                        },
                        format!(
                        "modifier {}: +({p}) names no language; expected +(ll) or +(ll-CC), as +(pt-BR)",
                        shown(text)
                    ))
                })?;
                lang.check_codes().map_err(|e| {
                    PersistentUrlError::new(
                        unknown_code(&lang, Some(shown(text)), None),
                        format!("modifier {}: {e}", shown(text)),
                    )
                })?;
                (
                    Verb::GetTranslation(Some(lang.clone())),
                    Step::Translation(Some(lang)),
                )
            }
            (':', None) => (
                Verb::GetMetadata { oai_dc: false },
                Step::Metadata { oai_dc: false },
            ),
            (':', Some("oai_dc")) => (
                Verb::GetMetadata { oai_dc: true },
                Step::Metadata { oai_dc: true },
            ),
            (':', Some(p)) => {
                return err(
                    Refusal::MetadataFormat {
                        modifier: shown(text),
                        format: shown(p),
                    },
                    format!(
                "modifier {}: :({p}) names an unknown metadata format; the one format is oai_dc",
                shown(text)
            ),
                )
            }
            (other, _) => {
                return err(
                    Refusal::ModifierSymbol {
                        modifier: shown(text),
                        symbol: format!("{other:?}"),
                    },
                    format!(
                        "modifier {}: {other:?} is not a modifier (!, + or :)",
                        shown(text)
                    ),
                )
            }
        };
        verbs.push(verb);
        steps.push(step);
    }
    if Relation::from_steps(steps).is_err() {
        return err(
            Refusal::ModifierComposition {
                modifier: shown(text),
            },
            format!(
                "modifier {} is not one of the compositions of Table 8.2",
                shown(text)
            ),
        );
    }
    Ok(verbs)
}

/// The path after the IBI: `None` when there is none (or only a `/`), else the decoded
/// bytes. Dot segments are refused: a file path names a file of the item, not a way out.
fn file_path(segments: &[&str]) -> Result<Option<Vec<u8>>, PersistentUrlError> {
    if segments.is_empty() || segments == [""] {
        return Ok(None);
    }
    let mut out = Vec::new();
    for s in segments {
        let bytes: Vec<u8> = percent_decode_str(s).collect();
        if bytes == b"." || bytes == b".." {
            return err(
                Refusal::FileDotSegment,
                "the file path has a . or .. segment",
            );
        }
        if bytes.iter().any(|&b| b < 0x20 || b == 0x7f || b == b'/') {
            return err(
                Refusal::FileControl,
                "the file path holds a control character or an encoded /",
            );
        }
        out.push(b'/');
        out.extend_from_slice(&bytes);
    }
    Ok(Some(out))
}

/// `ibiurl.verblist` and `ibiurl.requireditemstatus` of the query (Table 8.3).
fn read_query(q: &str) -> Result<(Vec<Verb>, bool), PersistentUrlError> {
    let query = Query::parse(q.as_bytes()).map_err(|e| {
        PersistentUrlError::new(
            Refusal::QueryNotPairs,
            format!("the query is not a list of pairs: {e}"),
        )
    })?;
    let mut verbs = Vec::new();
    if let Some(list) = query.get_str("ibiurl.verblist").map_err(|e| {
        PersistentUrlError::new(Refusal::VerbListNotText, format!("ibiurl.verblist: {e}"))
    })? {
        for word in list.split([' ', '+']).filter(|w| !w.is_empty()) {
            match Verb::parse(word) {
                Some(v) => {
                    if let Verb::GetTranslation(Some(lang)) = &v {
                        lang.check_codes().map_err(|e| {
                            PersistentUrlError::new(
                                unknown_code(lang, None, Some(shown(word))),
                                format!("ibiurl.verblist: {}: {e}", shown(word)),
                            )
                        })?;
                    }
                    verbs.push(v)
                }
                None => {
                    return err(
                        Refusal::NotAVerb { word: shown(word) },
                        format!(
                        "ibiurl.verblist: {} is not a verb of Table 8.4 (GetLastEdition, GetTranslation[(ll[-CC])], GetMetadata[(oai_dc)], GetFileList)",
                        shown(word)
                    ))
                }
            }
        }
    }
    let original = match query.get("ibiurl.requireditemstatus") {
        None => false,
        Some(b"Original") => true,
        Some(other) => {
            let value = shown(&String::from_utf8_lossy(other));
            return err(
                Refusal::RequiredStatus {
                    value: value.clone(),
                },
                format!("ibiurl.requireditemstatus is {value}; its one value is Original"),
            );
        }
    };
    Ok((verbs, original))
}

/// Adds a verb of the query to the verb list: not again when it is there (the union
/// of Table 8.6), and as one verb with the same verb with or without its parameter at
/// the place of the relation it would take (after the metadata verb when there is one,
/// else before it), where two would name no relation: the one with the parameter, in the
/// place of the first (`GetTranslation(pt)` and `GetTranslation` are `GetTranslation(pt)`;
/// `GetMetadata` and `GetMetadata(oai_dc)`, `GetMetadata(oai_dc)`). Two parameters that
/// differ stay two verbs, which name no relation.
fn add_verb(verbs: &mut Vec<Verb>, v: Verb) {
    if verbs.contains(&v) {
        return;
    }
    let metadata_at = verbs
        .iter()
        .position(|w| matches!(w, Verb::GetMetadata { .. }));
    let same_place = |i: usize, w: &Verb| match (w, &v) {
        (Verb::GetMetadata { .. }, Verb::GetMetadata { .. }) => true,
        (Verb::GetTranslation(x), Verb::GetTranslation(y)) => {
            (x.is_none() || y.is_none()) && metadata_at.is_none_or(|m| i > m)
        }
        _ => false,
    };
    match verbs.iter().enumerate().position(|(i, w)| same_place(i, w)) {
        // The one there has the parameter (or they are the same): nothing to add.
        Some(i) if !has_parameter(&v) || has_parameter(&verbs[i]) => {}
        Some(i) => verbs[i] = v,
        None => verbs.push(v),
    }
}

/// Whether a verb has its parameter (a language, a metadata format).
fn has_parameter(v: &Verb) -> bool {
    matches!(
        v,
        Verb::GetTranslation(Some(_)) | Verb::GetMetadata { oai_dc: true }
    )
}

fn symbol(v: &Verb) -> String {
    match v {
        Verb::GetLastEdition => "!".into(),
        Verb::GetTranslation(None) => "+".into(),
        Verb::GetTranslation(Some(l)) => format!("+({l})"),
        Verb::GetMetadata { oai_dc: false } => ":".into(),
        Verb::GetMetadata { oai_dc: true } => ":(oai_dc)".into(),
        Verb::GetFileList => String::new(),
    }
}

/// A piece of input quoted for a message, cut short when long.
fn shown(s: &str) -> String {
    crate::shown(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The verb list [`add_verb`] makes of `base` and then `added`, as text.
    fn added(base: &[&str], added: &[&str]) -> String {
        let mut verbs: Vec<Verb> = base.iter().map(|w| Verb::parse(w).unwrap()).collect();
        for w in added {
            add_verb(&mut verbs, Verb::parse(w).unwrap());
        }
        let words: Vec<String> = verbs.iter().map(Verb::to_string).collect();
        words.join(" ")
    }

    /// Content negotiation asks for the landing page or the metadata record of a bare
    /// persistent URL only: a modifier, a verb list or a file path wins over `Accept`.
    #[test]
    fn negotiated_urls() {
        let url = |path: &str, query: Option<&str>| PersistentUrl::parse(path, query).unwrap();
        let bare = url("/8JMKD3MGP8W/35MME4E", Some("x=1"));
        assert_eq!(bare.negotiated(Wanted::Default), None);
        let json = bare.negotiated(Wanted::JsonLd).unwrap();
        assert_eq!(json.verblist_text(), "GetFileList");
        assert!(json.wants_file_list());
        assert!(json.relation().steps().is_empty());
        assert_eq!(json.query(), Some("x=1"));
        // A citation and the linkset: the landing page too, which answers them by Accept.
        for wanted in [
            Wanted::Citation(crate::cite::Format::Ris),
            Wanted::Linkset(crate::negotiate::LinksetFormat::Json),
        ] {
            assert_eq!(bare.negotiated(wanted), Some(json.clone()), "{wanted:?}");
        }
        let xml = bare.negotiated(Wanted::OaiDc).unwrap();
        assert_eq!(xml.verblist_text(), "GetMetadata(oai_dc)");
        assert_eq!(xml.to_string(), "/8JMKD3MGP8W/35MME4E:(oai_dc)?x=1");
        for (path, query) in [
            ("/8JMKD3MGP8W/35MME4E!", None),
            ("/8JMKD3MGP8W/35MME4E:", None),
            (
                "/8JMKD3MGP8W/35MME4E",
                Some("ibiurl.verblist=GetTranslation"),
            ),
            ("/8JMKD3MGP8W/35MME4E", Some("ibiurl.verblist=GetFileList")),
            ("/LK47B6W/362SFKH/reference.bib", None),
        ] {
            let u = url(path, query);
            for wanted in [
                Wanted::JsonLd,
                Wanted::OaiDc,
                Wanted::Citation(crate::cite::Format::BibTex),
            ] {
                assert_eq!(u.negotiated(wanted), None, "{path} {query:?}");
            }
        }
    }

    #[test]
    fn a_verb_with_and_without_its_parameter_at_one_place_is_one_verb() {
        for (base, more, want) in [
            // The union of Table 8.6: a verb already there is not added again.
            (
                &["GetTranslation"][..],
                &["GetTranslation"][..],
                "GetTranslation",
            ),
            (
                &["GetTranslation(pt)"],
                &["GetTranslation"],
                "GetTranslation(pt)",
            ),
            (
                &["GetTranslation"],
                &["GetTranslation(pt)"],
                "GetTranslation(pt)",
            ),
            (
                &["GetMetadata"],
                &["GetMetadata(oai_dc)"],
                "GetMetadata(oai_dc)",
            ),
            (
                &["GetMetadata(oai_dc)"],
                &["GetMetadata"],
                "GetMetadata(oai_dc)",
            ),
            // In the place of the first.
            (
                &["GetTranslation", "GetLastEdition"],
                &["GetTranslation(pt-BR)", "GetFileList"],
                "GetTranslation(pt-BR) GetLastEdition GetFileList",
            ),
            (
                &["GetMetadata", "GetTranslation"],
                &["GetMetadata(oai_dc)"],
                "GetMetadata(oai_dc) GetTranslation",
            ),
            // After the metadata a translation is another place: a step of its own.
            (
                &["GetTranslation(pt)", "GetMetadata"],
                &["GetTranslation"],
                "GetTranslation(pt) GetMetadata GetTranslation",
            ),
            (
                &["GetTranslation", "GetMetadata"],
                &["GetTranslation(en)"],
                "GetTranslation GetMetadata GetTranslation(en)",
            ),
            (
                &["GetTranslation", "GetMetadata", "GetTranslation"],
                &["GetTranslation(en)"],
                "GetTranslation GetMetadata GetTranslation(en)",
            ),
            // Two parameters that differ stay two verbs (no relation).
            (
                &["GetTranslation(pt)"],
                &["GetTranslation(en)"],
                "GetTranslation(pt) GetTranslation(en)",
            ),
        ] {
            assert_eq!(added(base, more), want, "{base:?} + {more:?}");
        }
    }

    #[test]
    fn the_plain_persistent_url_of_an_ibi_is_what_its_path_parses_to() {
        for ibi in [
            "8JMKD3MGP8W/35MME4E",
            "sid.inpe.br/mtc-m18@80/2009/07.21.13.23",
        ] {
            let parsed = PersistentUrl::parse(&format!("/{ibi}"), None).unwrap();
            assert_eq!(PersistentUrl::of(parsed.ibi().clone()), parsed);
        }
    }

    #[test]
    fn file_list_paths_are_written_and_read_back_in_one_form() {
        let mut url = String::from("http://a/d.e/f/2008/03.17.15.17");
        push_file_list_path(&mut url, "a.b/c@80/2020/01.02.03.04");
        assert_eq!(
            url,
            "http://a/d.e/f/2008/03.17.15.17/filelist/a.b/c@80/2020/01.02.03.04"
        );
        let path_info = url
            .strip_prefix("http://a/d.e/f/2008/03.17.15.17")
            .unwrap()
            .as_bytes();
        assert_eq!(
            split_file_list_path(path_info),
            Some(&b"a.b/c@80/2020/01.02.03.04"[..])
        );
        for other in [&b""[..], b"/", b"/filelist", b"/filelists/a", b"filelist/a"] {
            assert_eq!(split_file_list_path(other), None);
        }
    }
}
