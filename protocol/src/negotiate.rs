//! Content negotiation, as the resolver and the Archive both do it: the reader's languages
//! (Accept-Language, RFC 9110 §12.5.4), for a bare translation and for the language of
//! pages, and whether a client prefers one of an item's descriptions (schema.org JSON-LD,
//! the `oai_dc` record, a citation, the linkset) to what a server gives by default
//! (Accept, RFC 9110 §12.5.1), with the style and locale of a formatted citation.
//!
//! Both headers are weighted lists (`value;param=x;q=0.5, value`); at most
//! [`MAX_HEADER`] bytes and [`MAX_ELEMENTS`] elements of one are read, so a hostile header
//! costs no more than a usual one. An element whose q-value is not one (`q=2`, `q=x`) is
//! left out.

use crate::cite::{Format, Options};
use crate::query::Query;
use crate::relation::Lang;

/// At most this many bytes of a header are read...
pub const MAX_HEADER: usize = 1024;
/// ... and this many of its elements.
pub const MAX_ELEMENTS: usize = 32;

/// The languages of an Accept-Language header, most preferred first (by q-value, then in
/// the order written); `q=0`, `*` and tags that are not `ll[-CC…]` are left out. The
/// resolver chooses a bare translation by them.
pub fn preferences(header: Option<&str>) -> Vec<Lang> {
    let Some(header) = header else {
        return Vec::new();
    };
    let header = crate::text::prefix(header, MAX_HEADER);
    let mut out: Vec<Lang> = Vec::new();
    for (tag, q) in accept_language::parse_with_quality(header) {
        if !(q > 0.0 && q <= 1.0) {
            continue;
        }
        if let Some(lang) = primary(&tag) {
            if !out.contains(&lang) {
                out.push(lang);
            }
        }
        if out.len() == MAX_ELEMENTS {
            break;
        }
    }
    out
}

/// `pt-BR` → pt-BR, `zh-Hant-TW` → zh, `*` → none.
fn primary(tag: &str) -> Option<Lang> {
    let mut parts = tag.split('-');
    let language = parts.next()?;
    if language.len() != 2 {
        return None;
    }
    match parts.next() {
        Some(c) if c.len() == 2 => Lang::parse(&format!("{language}-{c}")).ok(),
        _ => Lang::parse(language).ok(),
    }
}

/// The languages the resolver's and the Archive's pages are written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageLang {
    En,
    /// Brazilian Portuguese, the page for any `pt`.
    Pt,
}

impl PageLang {
    /// Portuguese when the reader prefers it to English ([`preferences`]), else English.
    pub fn of(prefs: &[Lang]) -> PageLang {
        for p in prefs {
            match p.to_string().get(..2) {
                Some("pt") => return PageLang::Pt,
                Some("en") => return PageLang::En,
                _ => {}
            }
        }
        PageLang::En
    }

    /// The page's `lang` attribute (and `Content-Language`).
    pub fn code(self) -> &'static str {
        match self {
            PageLang::En => "en",
            PageLang::Pt => "pt-BR",
        }
    }
}

/// The media type of schema.org JSON-LD.
pub const JSON_LD: &str = "application/ld+json";
/// The media type of an `oai_dc` record.
pub const XML: &str = "application/xml";
/// The profile of an `oai_dc` record (its XML Schema's namespace), for `Link` headers.
pub const OAI_DC_PROFILE: &str = "http://www.openarchives.org/OAI/2.0/oai_dc/";

/// What a reader's `Accept` (or a link's `format=` query, [`Wanted::from_query`]) asks of
/// an item: besides what a server gives by default (the resolver's redirect to the item;
/// an Archive's HTML landing page), an item has machine-readable descriptions: schema.org
/// JSON-LD, its `oai_dc` record, its citation in four forms ([`crate::cite`]) and its
/// linkset (RFC 9264) in two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted {
    /// What the server gives by default.
    Default,
    /// schema.org JSON-LD (`application/ld+json`, with or without a `profile`).
    JsonLd,
    /// The `oai_dc` record (`application/xml`, `text/xml`).
    OaiDc,
    /// A citation (`application/x-bibtex`, `application/x-research-info-systems`,
    /// `application/vnd.citationstyles.csl+json`, `text/x-bibliography`).
    Citation(Format),
    /// The linkset of the item's Signposting links.
    Linkset(LinksetFormat),
}

/// The two forms of a linkset (RFC 9264).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinksetFormat {
    /// `application/linkset+json`.
    Json,
    /// `application/linkset`: the links as a `Link` header's value writes them.
    LinkFormat,
}

impl LinksetFormat {
    pub const ALL: [LinksetFormat; 2] = [LinksetFormat::Json, LinksetFormat::LinkFormat];

    pub fn media_type(self) -> &'static str {
        match self {
            LinksetFormat::Json => "application/linkset+json",
            LinksetFormat::LinkFormat => "application/linkset",
        }
    }

    /// Its name in a `format=` query.
    pub fn name(self) -> &'static str {
        match self {
            LinksetFormat::Json => "linkset-json",
            LinksetFormat::LinkFormat => "linkset",
        }
    }
}

impl Wanted {
    /// Every description, in the order one is preferred to another named at the same
    /// q-value and specificity.
    pub const DESCRIPTIONS: [Wanted; 8] = [
        Wanted::JsonLd,
        Wanted::OaiDc,
        Wanted::Citation(Format::BibTex),
        Wanted::Citation(Format::Ris),
        Wanted::Citation(Format::CslJson),
        Wanted::Citation(Format::Bibliography),
        Wanted::Linkset(LinksetFormat::Json),
        Wanted::Linkset(LinksetFormat::LinkFormat),
    ];

    /// The media types that name it (none for the default): a citation's and a linkset's
    /// as their formats give them.
    fn media_types(self) -> impl Iterator<Item = &'static str> {
        let (first, second) = match self {
            Wanted::Default => (None, None),
            Wanted::JsonLd => (Some(JSON_LD), None),
            Wanted::OaiDc => (Some(XML), Some("text/xml")),
            Wanted::Citation(f) => (Some(f.media_type()), None),
            Wanted::Linkset(f) => (Some(f.media_type()), None),
        };
        first.into_iter().chain(second)
    }

    /// Its name in a `format=` query: `json-ld`, a citation's ([`Format::name`]) or a
    /// linkset's ([`LinksetFormat::name`]); none for the default and the `oai_dc` record
    /// (which has a URL of its own).
    pub fn query_name(self) -> Option<&'static str> {
        match self {
            Wanted::JsonLd => Some("json-ld"),
            Wanted::Citation(f) => Some(f.name()),
            Wanted::Linkset(f) => Some(f.name()),
            Wanted::Default | Wanted::OaiDc => None,
        }
    }

    /// What the `format=` of a query (`?format=bibtex&style=apa`) asks: a link's way of
    /// asking what an `Accept` asks. None without one, or naming nothing known.
    pub fn from_query(query: &[u8]) -> Option<Wanted> {
        let query = Query::parse(query).ok()?;
        Wanted::by_query_name(query.get_str("format").ok()??)
    }

    /// The description a `format=` names (`bibtex`, `json-ld`, `linkset`, …), if any: for
    /// a caller that decoded the query once ([`Query::parse`]) and reads `format=` itself.
    pub fn by_query_name(name: &str) -> Option<Wanted> {
        Wanted::DESCRIPTIONS
            .into_iter()
            .find(|w| w.query_name() == Some(name))
    }
}

/// What a server gives when no description is wanted, as far as `Accept` can name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Given {
    /// An HTML page (`text/html`).
    Html,
    /// The item itself, whatever it is (a redirect to it): any media type but the
    /// descriptions'.
    Item,
}

/// What `accept` asks for, given what the server gives by `default`. Each is weighed by
/// the most specific element of the list that names it (`type/subtype`, then `type/*`,
/// then `*/*`; [`Given::Item`] by the best of the elements that name no description); a
/// description is chosen only when its q-value is higher than the default's, or the same
/// and named more specifically (`application/ld+json, */*`: JSON-LD). Between the
/// descriptions the same rule, in the order of `Wanted::DESCRIPTIONS` when they are even
/// (JSON-LD first). So a browser's `text/html,…,application/xml;q=0.9,*/*;q=0.8` gets the
/// default, and no header too.
pub fn negotiate(accept: Option<&str>, default: Given) -> Wanted {
    let Some(accept) = accept else {
        return Wanted::Default;
    };
    let list = elements(accept);
    let by_default = match default {
        Given::Html => quality(&list, "text/html"),
        Given::Item => list
            .iter()
            .filter(|e| !is_description(e.value))
            .map(|e| (e.q, specificity(e.value)))
            .max()
            .unwrap_or((0, 0)),
    };
    // (q-value, specificity) compare in that order; the first of equals stays.
    let mut best = (Wanted::Default, (0, 0));
    for wanted in Wanted::DESCRIPTIONS {
        let q = wanted
            .media_types()
            .map(|t| quality(&list, t))
            .max()
            .unwrap_or((0, 0));
        if q > best.1 {
            best = (wanted, q);
        }
    }
    match best {
        (wanted, q) if q.0 > 0 && q > by_default => wanted,
        _ => Wanted::Default,
    }
}

/// The style and locale a `text/x-bibliography` element of `accept` asks
/// (`text/x-bibliography; style=apa; locale=pt-BR`, as doi.org reads them), else those of
/// a `format=bibliography` query's `style=` and `locale=`; none of either when absent.
/// Each at most [`MAX_PARAMETER`] bytes (a longer one is kept whole, to be refused as
/// unknown).
pub fn citation_options(accept: Option<&str>, query: Option<&[u8]>) -> Options {
    let query = query.and_then(|q| Query::parse(q).ok());
    citation_options_of(accept, query.as_ref())
}

/// [`citation_options`] of a query decoded once ([`Query::parse`]).
pub fn citation_options_of(accept: Option<&str>, query: Option<&Query>) -> Options {
    let mut options = Options::default();
    if let Some(q) = query {
        let get = |n: &str| q.get_str(n).ok().flatten().map(bounded);
        options.style = get("style");
        options.locale = get("locale");
    }
    let Some(accept) = accept else {
        return options;
    };
    let header = crate::text::prefix(accept, MAX_HEADER);
    for part in split_outside_quotes(header, b',')
        .into_iter()
        .take(MAX_ELEMENTS)
    {
        let mut params = split_outside_quotes(part, b';').into_iter();
        if !params
            .next()
            .unwrap_or("")
            .trim()
            .eq_ignore_ascii_case("text/x-bibliography")
        {
            continue;
        }
        for p in params {
            let (name, v) = p.split_once('=').unwrap_or((p, ""));
            let v = bounded(v.trim().trim_matches('"'));
            match name.trim().to_ascii_lowercase().as_str() {
                "style" => options.style = Some(v),
                "locale" => options.locale = Some(v),
                _ => {}
            }
        }
        break;
    }
    options
}

/// Most bytes of a style's or a locale's name read.
pub const MAX_PARAMETER: usize = 100;

fn bounded(s: &str) -> String {
    crate::text::prefix(s, MAX_PARAMETER).to_string()
}

/// Whether a media range names one of the descriptions itself.
fn is_description(value: &str) -> bool {
    Wanted::DESCRIPTIONS
        .iter()
        .flat_map(|w| w.media_types())
        .any(|t| t.eq_ignore_ascii_case(value))
}

/// How specific a media range is: 3 a type, 2 `type/*`, 1 `*/*`.
fn specificity(value: &str) -> u8 {
    match value.split_once('/') {
        Some(("*", "*")) => 1,
        Some((_, "*")) => 2,
        _ => 3,
    }
}

/// The q-value `list` gives `media_type` (`type/subtype`) by its most specific element that matches
/// (`type/subtype`, then `type/*`, then `*/*`; the first written among equals), and how
/// specific that element is (3, 2, 1; 0 and q 0 when none matches).
fn quality(list: &[Element<'_>], media_type: &str) -> (u16, u8) {
    let (type_, subtype) = media_type.split_once('/').unwrap_or((media_type, ""));
    let mut best = (0, 0);
    for e in list {
        let (t, s) = e.value.split_once('/').unwrap_or((e.value, ""));
        let specific = if t.eq_ignore_ascii_case(type_) && s.eq_ignore_ascii_case(subtype) {
            3
        } else if t.eq_ignore_ascii_case(type_) && s == "*" {
            2
        } else if t == "*" && s == "*" {
            1
        } else {
            continue;
        };
        if specific > best.1 {
            best = (e.q, specific);
        }
    }
    best
}

/// One element of a weighted list: its value (without parameters) and its q-value in
/// thousandths.
#[derive(Debug, PartialEq, Eq)]
struct Element<'a> {
    value: &'a str,
    q: u16,
}

/// The elements of a weighted list, bounded (see the module's text). Commas inside a
/// quoted parameter value (`profile="a,b"`) do not split it.
fn elements(header: &str) -> Vec<Element<'_>> {
    let header = crate::text::prefix(header, MAX_HEADER);
    let mut out = Vec::new();
    for part in split_outside_quotes(header, b',') {
        if out.len() == MAX_ELEMENTS {
            break;
        }
        let mut params = split_outside_quotes(part, b';').into_iter();
        let value = params.next().unwrap_or("").trim();
        if value.is_empty() {
            continue;
        }
        let mut q = Some(1000);
        for p in params {
            let (name, v) = p.split_once('=').unwrap_or((p, ""));
            if name.trim().eq_ignore_ascii_case("q") {
                q = qvalue(v.trim());
            }
        }
        if let Some(q) = q {
            out.push(Element { value, q });
        }
    }
    out
}

/// `s` cut at each `sep` that is not inside a quoted string.
fn split_outside_quotes(s: &str, sep: u8) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, b) in s.bytes().enumerate() {
        if escaped {
            escaped = false;
        } else if quoted && b == b'\\' {
            escaped = true;
        } else if b == b'"' {
            quoted = !quoted;
        } else if b == sep && !quoted {
            parts.push(&s[start..i]);
            start = i + 1;
        }
    }
    parts.push(&s[start..]);
    parts
}

/// A q-value (RFC 9110 §12.4.2: `0`, `0.xxx`, `1`, `1.000`) in thousandths.
fn qvalue(s: &str) -> Option<u16> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let thousandths: u16 = format!("{frac:0<3}").parse().ok()?;
    match int {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn langs(v: &[Lang]) -> Vec<String> {
        v.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn example_8_8_preference_in_order() {
        let p = preferences(Some("pt-br,fr;q=0.8,en;q=0.5,pt;q=0.3"));
        assert_eq!(langs(&p), ["pt-BR", "fr", "en", "pt"]);
        // q-values, not the order written, decide; q=0 and * are dropped.
        let p = preferences(Some("en;q=0.2, *;q=0.5, de;q=0, pt-BR"));
        assert_eq!(langs(&p), ["pt-BR", "en"]);
        assert!(preferences(Some(";;;,,,q=")).is_empty());
        assert!(preferences(None).is_empty());
    }

    #[test]
    fn the_page_language_by_q_value() {
        let of = |h: Option<&str>| PageLang::of(&preferences(h));
        assert_eq!(of(None), PageLang::En);
        assert_eq!(of(Some("")), PageLang::En);
        assert_eq!(of(Some("pt-BR,pt;q=0.9,en;q=0.8")), PageLang::Pt);
        assert_eq!(of(Some("PT-pt")), PageLang::Pt);
        assert_eq!(of(Some("en-US,pt;q=0.9")), PageLang::En);
        assert_eq!(of(Some("en;q=0.5, pt;q=0.6")), PageLang::Pt);
        assert_eq!(of(Some("fr,en;q=0.5,pt;q=0.4")), PageLang::En);
        // Neither: English; a language refused is never chosen.
        assert_eq!(of(Some("fr, de")), PageLang::En);
        assert_eq!(of(Some("fr, pt;q=0")), PageLang::En);
        // The first written on a tie; an impossible q-value leaves its element out.
        assert_eq!(of(Some("pt, en")), PageLang::Pt);
        assert_eq!(of(Some("pt;q=2, en;q=0.1")), PageLang::En);
        assert_eq!(PageLang::Pt.code(), "pt-BR");
        assert_eq!(PageLang::En.code(), "en");
    }

    /// What an Archive's landing page gives: its HTML, or its JSON-LD.
    #[test]
    fn json_ld_when_preferred_to_html() {
        let json_ld = |accept: Option<&str>| negotiate(accept, Given::Html) == Wanted::JsonLd;
        assert!(!json_ld(None));
        assert!(json_ld(Some("application/ld+json")));
        assert!(json_ld(Some(
            "application/ld+json; profile=\"https://schema.org\""
        )));
        assert!(json_ld(Some(
            "Application/LD+JSON;profile=\"a, b\";q=0.9, text/html;q=0.8"
        )));
        // A browser's header: HTML.
        assert!(!json_ld(Some(
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
        )));
        assert!(!json_ld(Some("*/*")));
        assert!(!json_ld(Some("text/html, application/ld+json")));
        assert!(!json_ld(Some("application/ld+json;q=0.5, text/html;q=0.9")));
        assert!(!json_ld(Some("application/ld+json;q=0")));
        // The same q-value as HTML's, but by name against a wildcard: JSON-LD.
        assert!(json_ld(Some("application/ld+json, */*")));
        assert!(json_ld(Some("text/*;q=0.5, application/*")));
        assert!(!json_ld(Some("application/json")));
        // Against HTML, a type the page is not is no rival.
        assert!(json_ld(Some("application/pdf, application/ld+json")));
    }

    /// What the resolver gives for a bare persistent URL: the redirect to the item, or one
    /// of its descriptions.
    #[test]
    fn a_description_when_preferred_to_the_item() {
        let cases = [
            (None, Wanted::Default),
            (Some(""), Wanted::Default),
            (Some(" , ,"), Wanted::Default),
            (Some("*/*"), Wanted::Default),
            (Some("text/html"), Wanted::Default),
            (Some("application/ld+json"), Wanted::JsonLd),
            (Some("application/ld+json; profile=\"https://schema.org\""), Wanted::JsonLd),
            (Some("APPLICATION/LD+JSON"), Wanted::JsonLd),
            (Some("application/xml"), Wanted::OaiDc),
            (Some("text/xml"), Wanted::OaiDc),
            (
                Some("application/xml;profile=\"http://www.openarchives.org/OAI/2.0/oai_dc/\""),
                Wanted::OaiDc,
            ),
            // A range does not outweigh a type named at the same q-value...
            (Some("application/ld+json, */*"), Wanted::JsonLd),
            (Some("*/*, application/xml"), Wanted::OaiDc),
            (Some("application/*, application/ld+json"), Wanted::JsonLd),
            // ... nor does a range alone name a description.
            (Some("application/*"), Wanted::Default),
            // JSON-LD first at one q-value.
            (Some("application/xml, application/ld+json"), Wanted::JsonLd),
            (Some("application/xml, application/ld+json;q=0.5"), Wanted::OaiDc),
            // Chromium's and Firefox's navigation.
            (
                Some("text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8"),
                Wanted::Default,
            ),
            // Another type preferred, or named at the same q-value.
            (Some("application/xml, text/html"), Wanted::Default),
            (Some("application/pdf, application/ld+json"), Wanted::Default),
            (Some("application/ld+json;q=0.5, */*"), Wanted::Default),
            (Some("application/ld+json;q=0, */*;q=0.1"), Wanted::Default),
            (Some("application/xml;q=0"), Wanted::Default),
            // An unreadable q-value leaves the element out; so does what is no media type.
            (Some("application/ld+json;q=high"), Wanted::Default),
            (Some("application/ld+json;q=2"), Wanted::Default),
            (Some("ld+json"), Wanted::Default),
            // A comma inside quotes ends no element.
            (
                Some("text/html;q=0.1;x=\"a, application/ld+json\", application/xml;q=0.2"),
                Wanted::OaiDc,
            ),
        ];
        for (accept, wanted) in cases {
            assert_eq!(negotiate(accept, Given::Item), wanted, "{accept:?}");
        }
    }

    /// Citations and linksets, as doi.org's clients and Signposting clients ask them.
    #[test]
    fn citations_and_linksets_by_accept() {
        let cases = [
            ("application/x-bibtex", Wanted::Citation(Format::BibTex)),
            (
                "Application/X-BibTeX;q=0.9",
                Wanted::Citation(Format::BibTex),
            ),
            (
                "application/x-research-info-systems",
                Wanted::Citation(Format::Ris),
            ),
            (
                "application/vnd.citationstyles.csl+json",
                Wanted::Citation(Format::CslJson),
            ),
            (
                "text/x-bibliography; style=apa; locale=pt-BR",
                Wanted::Citation(Format::Bibliography),
            ),
            (
                "application/linkset+json",
                Wanted::Linkset(LinksetFormat::Json),
            ),
            (
                "application/linkset",
                Wanted::Linkset(LinksetFormat::LinkFormat),
            ),
            // The better q-value wins between descriptions; the list's order on a tie.
            (
                "application/x-bibtex;q=0.5, application/x-research-info-systems",
                Wanted::Citation(Format::Ris),
            ),
            (
                "application/x-research-info-systems, application/x-bibtex",
                Wanted::Citation(Format::BibTex),
            ),
            ("application/ld+json, text/x-bibliography", Wanted::JsonLd),
            // A range names none of them.
            ("text/*", Wanted::Default),
            ("application/x-bibtex;q=0, */*", Wanted::Default),
        ];
        for (accept, wanted) in cases {
            assert_eq!(negotiate(Some(accept), Given::Item), wanted, "{accept}");
            assert_eq!(negotiate(Some(accept), Given::Html), wanted, "{accept}");
        }
        // Named alike with the landing page's HTML: the page.
        assert_eq!(
            negotiate(Some("text/html, application/x-bibtex"), Given::Html),
            Wanted::Default
        );
    }

    #[test]
    fn a_link_asks_by_format() {
        let q = |s: &str| Wanted::from_query(s.as_bytes());
        assert_eq!(q("format=bibtex"), Some(Wanted::Citation(Format::BibTex)));
        assert_eq!(
            q("format=bibliography&style=ieee"),
            Some(Wanted::Citation(Format::Bibliography))
        );
        assert_eq!(
            q("format=csl-json"),
            Some(Wanted::Citation(Format::CslJson))
        );
        assert_eq!(q("format=ris"), Some(Wanted::Citation(Format::Ris)));
        assert_eq!(q("format=json-ld"), Some(Wanted::JsonLd));
        assert_eq!(
            q("format=linkset"),
            Some(Wanted::Linkset(LinksetFormat::LinkFormat))
        );
        assert_eq!(
            q("format=linkset-json"),
            Some(Wanted::Linkset(LinksetFormat::Json))
        );
        assert_eq!(q("format=oai_dc"), None);
        assert_eq!(q("format=BibTeX"), None);
        assert_eq!(q("x=1"), None);
        assert_eq!(q("format=%ZZ"), None);
        for w in Wanted::DESCRIPTIONS {
            if let Some(name) = w.query_name() {
                assert_eq!(q(&format!("format={name}")), Some(w));
            }
        }
    }

    #[test]
    fn the_style_and_locale_of_a_bibliography() {
        let o = |a: Option<&str>, q: Option<&str>| {
            let o = citation_options(a, q.map(str::as_bytes));
            (o.style, o.locale)
        };
        assert_eq!(o(None, None), (None, None));
        assert_eq!(
            o(Some("text/x-bibliography; style=apa; locale=pt-BR"), None),
            (Some("apa".into()), Some("pt-BR".into()))
        );
        assert_eq!(
            o(
                Some("application/x-bibtex, TEXT/X-Bibliography;Style=\"ieee\""),
                None
            ),
            (Some("ieee".into()), None)
        );
        // A parameter of another element is not the bibliography's.
        assert_eq!(o(Some("text/html;style=apa"), None), (None, None));
        // The query's, and the header's over it.
        assert_eq!(
            o(
                None,
                Some("format=bibliography&style=vancouver&locale=en-GB")
            ),
            (Some("vancouver".into()), Some("en-GB".into()))
        );
        assert_eq!(
            o(Some("text/x-bibliography;style=apa"), Some("style=ieee")),
            (Some("apa".into()), None)
        );
        let long = "x".repeat(500);
        assert_eq!(
            o(Some(&format!("text/x-bibliography;style={long}")), None).0,
            Some("x".repeat(MAX_PARAMETER))
        );
    }

    #[test]
    fn weighted_lists_are_bounded() {
        let long = "x, ".repeat(1000) + "application/ld+json";
        assert_eq!(negotiate(Some(&long), Given::Html), Wanted::Default);
        let many = "a/b,".repeat(MAX_ELEMENTS) + "application/ld+json";
        assert_eq!(elements(&many).len(), MAX_ELEMENTS);
        assert_eq!(negotiate(Some(&many), Given::Item), Wanted::Default);
        assert_eq!(qvalue("0.5"), Some(500));
        assert_eq!(qvalue("1.000"), Some(1000));
        assert_eq!(qvalue("1.001"), None);
        assert_eq!(qvalue(".5"), None);
        assert_eq!(qvalue("0.05"), Some(50));
    }
}
