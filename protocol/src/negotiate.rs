//! Content negotiation of an Archive's pages: the reader's language among those a page is
//! written in (Accept-Language, RFC 9110 §12.5.4), and whether a client prefers the
//! schema.org JSON-LD of an item to its HTML page (Accept, RFC 9110 §12.5.1).
//!
//! Both headers are weighted lists (`value;param=x;q=0.5, value`); at most
//! [`MAX_HEADER`] bytes and [`MAX_ELEMENTS`] elements of one are read, so a hostile header
//! costs no more than a usual one. An element whose q-value is not one (`q=2`, `q=x`) is
//! left out.

/// At most this many bytes of a header are read...
pub const MAX_HEADER: usize = 1024;
/// ... and this many of its elements.
pub const MAX_ELEMENTS: usize = 32;

/// The languages an Archive's pages are written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageLang {
    En,
    /// Brazilian Portuguese, the page for any `pt`.
    Pt,
}

impl PageLang {
    /// The page's `lang` attribute (and `Content-Language`).
    pub fn code(self) -> &'static str {
        match self {
            PageLang::En => "en",
            PageLang::Pt => "pt-BR",
        }
    }

    /// The language of the page for `accept_language`: the one of highest q-value among
    /// Portuguese (any `pt`) and English (any `en`, or `*`), the first written on a tie;
    /// English when the header names neither.
    pub fn of(accept_language: Option<&str>) -> PageLang {
        let mut best: Option<(u16, PageLang)> = None;
        for e in elements(accept_language.unwrap_or("")) {
            let primary = e.value.split('-').next().unwrap_or("");
            let lang = if primary.eq_ignore_ascii_case("pt") {
                PageLang::Pt
            } else if primary.eq_ignore_ascii_case("en") || primary == "*" {
                PageLang::En
            } else {
                continue;
            };
            if e.q > 0 && best.is_none_or(|(q, _)| e.q > q) {
                best = Some((e.q, lang));
            }
        }
        best.map_or(PageLang::En, |(_, lang)| lang)
    }
}

/// Whether `accept` prefers `application/ld+json` (with or without a `profile`) to
/// `text/html`: its q-value is higher, or the same and given by a more specific element
/// (`application/ld+json` itself against `text/*` or `*/*`). No header: HTML.
pub fn prefers_json_ld(accept: Option<&str>) -> bool {
    let Some(accept) = accept else {
        return false;
    };
    let list = elements(accept);
    let (ld, ld_specific) = quality(&list, "application", "ld+json");
    let (html, html_specific) = quality(&list, "text", "html");
    ld > 0 && (ld > html || (ld == html && ld_specific > html_specific))
}

/// The q-value `list` gives `type/subtype` by its most specific element that matches
/// (`type/subtype`, then `type/*`, then `*/*`; the first written among equals), and how
/// specific that element is (3, 2, 1; 0 and q 0 when none matches).
fn quality(list: &[Element<'_>], type_: &str, subtype: &str) -> (u16, u8) {
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

    #[test]
    fn the_page_language_by_q_value() {
        assert_eq!(PageLang::of(None), PageLang::En);
        assert_eq!(PageLang::of(Some("")), PageLang::En);
        assert_eq!(PageLang::of(Some("pt-BR,pt;q=0.9,en;q=0.8")), PageLang::Pt);
        assert_eq!(PageLang::of(Some("PT-pt")), PageLang::Pt);
        assert_eq!(PageLang::of(Some("en-US,pt;q=0.9")), PageLang::En);
        assert_eq!(PageLang::of(Some("en;q=0.5, pt;q=0.6")), PageLang::Pt);
        // Neither: English; a language refused is never chosen.
        assert_eq!(PageLang::of(Some("fr, de")), PageLang::En);
        assert_eq!(PageLang::of(Some("fr, pt;q=0")), PageLang::En);
        assert_eq!(PageLang::of(Some("*;q=0.5, pt;q=0.4")), PageLang::En);
        // The first written on a tie; a malformed q-value leaves its element out.
        assert_eq!(PageLang::of(Some("pt, en")), PageLang::Pt);
        assert_eq!(PageLang::of(Some("pt;q=2, en;q=0.1")), PageLang::En);
        assert_eq!(PageLang::of(Some("pt;q=0.1234, en;q=0.1")), PageLang::En);
        assert_eq!(PageLang::Pt.code(), "pt-BR");
        assert_eq!(PageLang::En.code(), "en");
    }

    #[test]
    fn json_ld_when_preferred_to_html() {
        assert!(!prefers_json_ld(None));
        assert!(prefers_json_ld(Some("application/ld+json")));
        assert!(prefers_json_ld(Some(
            "application/ld+json; profile=\"https://schema.org\""
        )));
        assert!(prefers_json_ld(Some(
            "Application/LD+JSON;profile=\"a, b\";q=0.9, text/html;q=0.8"
        )));
        // A browser's header: HTML.
        assert!(!prefers_json_ld(Some(
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
        )));
        assert!(!prefers_json_ld(Some("*/*")));
        assert!(!prefers_json_ld(Some("text/html, application/ld+json")));
        assert!(!prefers_json_ld(Some(
            "application/ld+json;q=0.5, text/html;q=0.9"
        )));
        assert!(!prefers_json_ld(Some("application/ld+json;q=0")));
        // The same q-value as HTML's, but by name against a wildcard: JSON-LD.
        assert!(prefers_json_ld(Some("application/ld+json, */*")));
        assert!(prefers_json_ld(Some("text/*;q=0.5, application/*")));
        assert!(!prefers_json_ld(Some("application/json")));
    }

    #[test]
    fn weighted_lists_are_bounded() {
        let long = "x, ".repeat(1000) + "application/ld+json";
        assert!(!prefers_json_ld(Some(&long)));
        let many = "a/b,".repeat(MAX_ELEMENTS) + "application/ld+json";
        assert_eq!(elements(&many).len(), MAX_ELEMENTS);
        assert!(!prefers_json_ld(Some(&many)));
        assert_eq!(qvalue("0.5"), Some(500));
        assert_eq!(qvalue("1.000"), Some(1000));
        assert_eq!(qvalue("1.001"), None);
        assert_eq!(qvalue(".5"), None);
        assert_eq!(qvalue("0.05"), Some(50));
    }
}
