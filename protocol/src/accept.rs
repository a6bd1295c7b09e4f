//! Content negotiation by `Accept` (RFC 9110 §12.5.1), as both servers do it for an
//! item: a persistent URL on the resolver, the landing page on an Archive. Besides what
//! each gives by default (the redirect to the item; the HTML page), an item has two
//! machine-readable descriptions: schema.org JSON-LD and its Dublin Core record in
//! `oai_dc` XML.
//!
//! The rule: a description is chosen only when the reader prefers it, by q-value, to
//! every other media type it named. A media range (`*/*`, `application/*`) does not
//! outweigh a type named exactly at the same q-value, so `application/ld+json, */*`
//! gets JSON-LD; a browser's `text/html,…,application/xml;q=0.9,*/*;q=0.8` gets the
//! page. Between the two descriptions at one q-value, JSON-LD. Parameters other than
//! `q` (a `profile`, for one) do not change which description a type names.

use std::str::FromStr;

/// At most this many bytes of the header, and this many media ranges, are read.
const MAX_HEADER: usize = 1024;
const MAX_RANGES: usize = 32;

/// The media type of schema.org JSON-LD.
pub const JSON_LD: &str = "application/ld+json";
/// The media type of an `oai_dc` record.
pub const XML: &str = "application/xml";
/// The profile of an `oai_dc` record (its XML Schema's namespace), for `Link` headers.
pub const OAI_DC_PROFILE: &str = "http://www.openarchives.org/OAI/2.0/oai_dc/";

/// What a reader's `Accept` asks of an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted {
    /// What the server gives by default.
    Default,
    /// schema.org JSON-LD (`application/ld+json`).
    JsonLd,
    /// The `oai_dc` record (`application/xml`, `text/xml`).
    OaiDc,
}

/// What `accept` (the header's value; none: anything) asks for.
pub fn negotiate(accept: Option<&str>) -> Wanted {
    let Some(accept) = accept else {
        return Wanted::Default;
    };
    // The best q-value of each: a description, a type named exactly, a media range.
    let (mut json_ld, mut xml, mut named, mut range) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
    for element in split_list(crate::text::prefix(accept, MAX_HEADER)).take(MAX_RANGES) {
        let Ok(media) = mime::Mime::from_str(element) else {
            continue;
        };
        let q = match media.get_param("q") {
            None => 1.0,
            Some(q) => match q.as_str().parse::<f32>() {
                Ok(q) if (0.0..=1.0).contains(&q) => q,
                _ => continue,
            },
        };
        let slot = match media.essence_str() {
            _ if media.subtype() == mime::STAR => &mut range,
            JSON_LD => &mut json_ld,
            XML | "text/xml" => &mut xml,
            _ => &mut named,
        };
        *slot = slot.max(q);
    }
    if json_ld > 0.0 && json_ld > named && json_ld >= range && json_ld >= xml {
        Wanted::JsonLd
    } else if xml > 0.0 && xml > named && xml >= range && xml > json_ld {
        Wanted::OaiDc
    } else {
        Wanted::Default
    }
}

/// The elements of a comma-separated list (RFC 9110 §5.6.1), a comma inside a quoted
/// string not ending one; empty elements skipped.
fn split_list(list: &str) -> impl Iterator<Item = &str> {
    let mut quoted = false;
    let mut escaped = false;
    let mut start = 0;
    let mut ends = Vec::new();
    for (i, c) in list.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => {
                ends.push((start, i));
                start = i + 1;
            }
            _ => {}
        }
    }
    ends.push((start, list.len()));
    ends.into_iter()
        .map(move |(a, b)| list[a..b].trim())
        .filter(|e| !e.is_empty())
}

#[cfg(test)]
mod tests {
    use super::{negotiate, Wanted};

    #[test]
    fn no_header_or_anything_gets_the_default() {
        for accept in [None, Some(""), Some("*/*"), Some("text/html"), Some(" , ,")] {
            assert_eq!(negotiate(accept), Wanted::Default, "{accept:?}");
        }
    }

    #[test]
    fn the_descriptions_by_their_types() {
        let cases = [
            ("application/ld+json", Wanted::JsonLd),
            (
                "application/ld+json; profile=\"https://schema.org\"",
                Wanted::JsonLd,
            ),
            ("APPLICATION/LD+JSON", Wanted::JsonLd),
            ("application/xml", Wanted::OaiDc),
            ("text/xml", Wanted::OaiDc),
            (
                "application/xml;profile=\"http://www.openarchives.org/OAI/2.0/oai_dc/\"",
                Wanted::OaiDc,
            ),
            // A range does not outweigh a type named at the same q-value.
            ("application/ld+json, */*", Wanted::JsonLd),
            ("*/*, application/xml", Wanted::OaiDc),
            ("application/*, application/ld+json", Wanted::JsonLd),
            // JSON-LD first at one q-value.
            ("application/xml, application/ld+json", Wanted::JsonLd),
            ("application/xml, application/ld+json;q=0.5", Wanted::OaiDc),
        ];
        for (accept, wanted) in cases {
            assert_eq!(negotiate(Some(accept)), wanted, "{accept}");
        }
    }

    #[test]
    fn another_type_preferred_or_equal_keeps_the_default() {
        let cases = [
            // Chromium's and Firefox's navigation.
            "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8",
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
            "application/xml, text/html",
            "application/pdf, application/ld+json",
            "application/ld+json;q=0.5, */*",
            "application/ld+json;q=0, */*;q=0.1",
            "application/xml;q=0",
            // An unreadable q-value leaves the element out.
            "application/ld+json;q=high",
            "application/ld+json;q=2",
            // Not a media type.
            "ld+json",
        ];
        for accept in cases {
            assert_eq!(negotiate(Some(accept)), Wanted::Default, "{accept}");
        }
    }

    #[test]
    fn a_comma_inside_quotes_ends_no_element() {
        assert_eq!(
            negotiate(Some(
                "text/html;q=0.1;x=\"a, application/ld+json\", application/xml;q=0.2"
            )),
            Wanted::OaiDc
        );
    }

    #[test]
    fn a_long_header_is_read_to_a_bound() {
        let long = format!("{}application/ld+json", "text/plain;q=0.1, ".repeat(100));
        assert_eq!(negotiate(Some(&long)), Wanted::Default);
    }
}
