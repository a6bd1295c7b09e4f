//! The URLs a resolution shows, sends and redirects to: the persistent URL as pages cite
//! it and as the reader gave it (`url.persistent`), the location with the reader's own
//! query pairs, the pairs kept of a query, `clientinformation.ipaddress`.

use std::net::IpAddr;

use ibi::persistent::PersistentUrl;

/// `url` as pages cite it, after `base`: its path, and of its query only the `ibiurl.*`
/// pairs (the reader's other pairs are the reader's own: pages do not show them).
pub fn persistent_url(base: &str, url: &PersistentUrl) -> String {
    let text = url.to_string();
    // The file path escapes `?`: the first one starts the query.
    let (path, query) = match text.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (text.as_str(), None),
    };
    let kept = query.map_or(Vec::new(), |q| {
        kept_pairs(q, |name| name.starts_with("ibiurl.")).0
    });
    if kept.is_empty() {
        format!("{base}{path}")
    } else {
        format!("{base}{path}?{}", kept.join("&"))
    }
}

/// `url` as the reader gave it, after `base`: `url.persistent` of Table 8.11 — its path,
/// and its whole query (the item's own pairs and the resolver's) but `noredirect`, which
/// asks this resolver for its inspection view and is no part of the persistent URL, and
/// a `registrationkey`, which no log of an Archive's is to hold.
pub fn as_given(base: &str, url: &PersistentUrl) -> String {
    let text = url.to_string();
    // The file path escapes `?`: the first one starts the query.
    let (path, query) = match text.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (text.as_str(), None),
    };
    let kept = query.map_or(Vec::new(), |q| {
        kept_pairs(q, |name| !matches!(name, "noredirect" | "registrationkey")).0
    });
    if kept.is_empty() {
        format!("{base}{path}")
    } else {
        format!("{base}{path}?{}", kept.join("&"))
    }
}

/// The URL a reader is sent to for `found`, an Archive's URL: with the query pairs of
/// `url` that are not the resolver's (`ibiurl.*`) after its own — pairs meant for the item
/// itself, a web service's parameters say (§8.1) — as the reader sent them, but what may
/// not stand in a Location (controls, spaces, quotes, angle brackets, backslashes,
/// backquotes, `#`) percent-encoded; before the URL's fragment, if it has one.
pub fn location(found: &str, url: &PersistentUrl) -> String {
    let Some(query) = url.query() else {
        return found.to_string();
    };
    let (kept, _) = kept_pairs(query, |name| !name.starts_with("ibiurl."));
    if kept.is_empty() {
        return found.to_string();
    }
    let (base, fragment) = match found.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (found, None),
    };
    let mut out = String::from(base);
    out.push(if base.contains('?') { '&' } else { '?' });
    for (n, pair) in kept.iter().enumerate() {
        if n > 0 {
            out.push('&');
        }
        out.extend(percent_encoding::percent_encode(
            pair.as_bytes(),
            NOT_IN_A_LOCATION,
        ));
    }
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// What [`location`] percent-encodes in a reader's query pair: what
/// [`usable_location`](crate::answer::usable_location) refuses, and `#`, which would end the query.
const NOT_IN_A_LOCATION: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'\\')
    .add(b'`');

/// The pairs of `query` whose names (percent-decoded) `keep` accepts, as sent, and
/// whether any was left out. What is kept is shown, logged or sent on, so `;`, which
/// some clients and servers take for a separator, is one here too: a pair is kept only
/// when every part of it between `;` has a name `keep` accepts (else a registration key
/// could follow a pair that is shown, `servicesubject=inclusionRequest;registrationkey=…`).
/// A pair that holds a registration key in any other way (escaped, in a value:
/// [`ibi::logline::hide_keys`]) is never kept.
pub fn kept_pairs(query: &str, keep: impl Fn(&str) -> bool) -> (Vec<&str>, bool) {
    let mut kept = Vec::new();
    let mut left_out = false;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let accepted = pair.split(';').filter(|p| !p.is_empty()).all(|part| {
            let name = part.split('=').next().unwrap_or("");
            keep(&percent_encoding::percent_decode_str(name).decode_utf8_lossy())
        });
        if accepted && ibi::logline::hide_keys(pair) == pair {
            kept.push(pair);
        } else {
            left_out = true;
        }
    }
    (kept, left_out)
}

/// `clientinformation.ipaddress`: the list of Table 8.10.
pub(super) fn ip_list(ips: &[IpAddr]) -> String {
    let words: Vec<String> = ips.iter().map(|ip| ip.to_string()).collect();
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::tests::url;
    use crate::answer::usable_location;

    #[test]
    fn the_persistent_url_keeps_of_the_query_only_what_the_resolver_reads() {
        let shown = |path: &str, query: Option<&str>| {
            persistent_url(
                "http://urlib.net:80",
                &PersistentUrl::parse(path, query).unwrap(),
            )
        };
        assert_eq!(
            shown(
                "/LK47B6W/362SFKH+",
                Some("registrationkey=12345678901&ibiurl.verblist=GetMetadata&session=s")
            ),
            "http://urlib.net:80/LK47B6W/362SFKH+?ibiurl.verblist=GetMetadata"
        );
        assert_eq!(
            shown("/LK47B6W/362SFKH/a%3Fb.pdf", Some("noredirect")),
            "http://urlib.net:80/LK47B6W/362SFKH/a%3Fb.pdf"
        );
        assert_eq!(
            shown("/LK47B6W/362SFKH", None),
            "http://urlib.net:80/LK47B6W/362SFKH"
        );
    }

    #[test]
    fn url_persistent_is_the_persistent_url_as_the_reader_gave_it() {
        let given = |path: &str, query: Option<&str>| {
            as_given(
                "http://urlib.net:80",
                &PersistentUrl::parse(path, query).unwrap(),
            )
        };
        // The item's own pairs and the resolver's, in the reader's order and spelling.
        assert_eq!(
            given(
                "/LK47B6W/362SFKH+",
                Some("session=s&ibiurl.verblist=GetMetadata&page=2")
            ),
            "http://urlib.net:80/LK47B6W/362SFKH+?session=s&ibiurl.verblist=GetMetadata&page=2"
        );
        // Not the inspection view's pair, nor a registration key.
        assert_eq!(
            given(
                "/LK47B6W/362SFKH/a%3Fb.pdf",
                Some("noredirect&registrationkey=12345678901&q=a%20b")
            ),
            "http://urlib.net:80/LK47B6W/362SFKH/a%3Fb.pdf?q=a%20b"
        );
        assert_eq!(
            given("/LK47B6W/362SFKH", Some("noredirect")),
            "http://urlib.net:80/LK47B6W/362SFKH"
        );
    }

    #[test]
    fn the_readers_own_pairs_follow_the_url_found_encoded_where_they_must_be() {
        let at = |found: &str, path: &str| location(found, &url(path));
        assert_eq!(at("http://a/b.pdf", "/LK47B6W/362SFKH"), "http://a/b.pdf");
        assert_eq!(
            at(
                "http://a/b.pdf",
                "/LK47B6W/362SFKH?ibiurl.verblist=GetFileList"
            ),
            "http://a/b.pdf"
        );
        assert_eq!(
            at(
                "http://a/ws?op=1#top",
                "/LK47B6W/362SFKH?x=1&ibiurl.requireditemstatus=Original&y=a%20b"
            ),
            "http://a/ws?op=1&x=1&y=a%20b#top"
        );
        assert_eq!(
            at(
                "http://a/b",
                "/LK47B6W/362SFKH?q=<\"x\\y`>#&%69biurl.verblist=GetMetadata&k=\u{e9}"
            ),
            "http://a/b?q=%3C%22x%5Cy%60%3E%23&k=%C3%A9"
        );
        assert!(usable_location(&at(
            "http://a/b",
            "/LK47B6W/362SFKH?q=<\"x\\y`> #"
        )));
    }
}
