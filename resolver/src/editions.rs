//! Editions through time (Memento, RFC 7089): an item's editions walked from its IBI by
//! `ibi.nextedition`, across Archives, each with its `timestamp`; the edition a TimeGate
//! chooses for an `Accept-Datetime`, the `Link` header of its redirect, and the TimeMap.
//!
//! Each edition is resolved as its IBI alone (its URL and `timestamp`), then, unless that
//! answer named it, its next edition is asked for as one step of `!` (an Archive names
//! `ibi.nextedition` when the last edition is asked, Example 10.2).
//!
//! The persistent URL of an item is its own TimeGate (URI-R = URI-G, RFC 7089 §4.1.1,
//! 302-style): `Accept-Datetime` on it redirects to the edition current at that instant
//! (the last whose timestamp is not after it; the first when the instant precedes them
//! all), its file path kept. The mementos a TimeMap lists are the editions' own
//! persistent URLs, each as lasting as the item's; the redirect's `memento` link is the
//! location it sends the reader to. A walk resolves at most [`MAX_EDITIONS`] editions, one
//! IBI once, within the resolution's time bound (the router's).

use std::collections::HashSet;
use std::sync::Arc;

use ibi::escape::link_target;
use ibi::persistent::PersistentUrl;
use ibi::time::{http_date, parse_http_date};
use ibi::Ibi;

use crate::homes::Archives;
use crate::log::say;
use crate::resolve::{persistent_url, Budget, Engine, Outcome, Reader, Trace};

/// Editions one walk resolves at most (as many as the rounds of one resolution).
pub const MAX_EDITIONS: usize = crate::resolve::MAX_ROUNDS;

/// The media type of a TimeMap (RFC 7089 §5.1, RFC 6690).
pub const LINK_FORMAT: &str = "application/link-format";

/// The path before an IBI that asks for its TimeMap: `/timemap/link/<IBI>`.
pub const TIMEMAP_PATH: &str = "/timemap/link";

/// The path before an IBI that asks for the list of its editions for readers (HTML):
/// `/timemap/html/<IBI>`, which an Archive's landing page links.
pub use ibi::persistent::EDITIONS_PATH;

/// One edition: its IBI, the instant of its `timestamp` (POSIX seconds) and the
/// resolution of its IBI (found).
#[derive(Clone, Debug)]
pub struct Edition {
    pub ibi: Ibi,
    pub datetime: i64,
    pub trace: Trace,
}

/// An `Accept-Datetime` that is no HTTP-date.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadDatetime(pub String);

impl std::fmt::Display for BadDatetime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Accept-Datetime {:?} is not an HTTP-date such as \"Sun, 06 Nov 1994 08:49:37 GMT\"",
            ibi::text::cut(&self.0, 64)
        )
    }
}

/// The instant an `Accept-Datetime` names (RFC 7089 §2.1.1: an RFC 1123 date, the
/// IMF-fixdate of RFC 9110 §5.6.7, whose obsolete forms a recipient accepts too).
pub fn accept_datetime(header: &str) -> Result<i64, BadDatetime> {
    parse_http_date(header).ok_or_else(|| BadDatetime(header.to_string()))
}

/// The instant of a `timestamp` pair (`2014-01-02T17:23:57Z`, Table 9.3).
fn instant(timestamp: &str) -> Option<i64> {
    ibi::date::IbiDate::parse_iso(timestamp)
        .ok()
        .map(|d| d.seconds())
}

impl Engine {
    /// The editions of `url`'s item, from its IBI on, in the order of their timestamps
    /// (the chain's order among equals). `Err` with the resolution of the IBI itself when
    /// it found nothing (its page says why); the walk stops, and says so in the log, at an
    /// edition not found, without a timestamp, named twice or past [`MAX_EDITIONS`].
    pub async fn editions(
        &self,
        archives: Arc<Archives>,
        url: &PersistentUrl,
        reader: &Reader,
        budget: &dyn Budget,
    ) -> Result<Vec<Edition>, Box<Trace>> {
        let mut editions: Vec<Edition> = Vec::new();
        let mut seen = HashSet::new();
        let mut next = Some(url.ibi().clone());
        while let Some(ibi) = next.take() {
            let first = editions.is_empty();
            if !seen.insert(ibi.key()) || editions.len() == MAX_EDITIONS {
                say(&format!(
                    "editions of {}: {} named again or past {MAX_EDITIONS} editions; the walk stops",
                    url.ibi(),
                    ibi
                ));
                break;
            }
            let asked = PersistentUrl::of(ibi.clone());
            let trace = self
                .resolve(archives.clone(), &asked, reader, true, budget)
                .await;
            let found = match &trace.outcome {
                Outcome::Found(found) => found.clone(),
                _ if first => return Err(Box::new(trace)),
                other => {
                    say(&format!(
                        "editions of {}: the edition {ibi} was not found ({}); the walk stops",
                        url.ibi(),
                        other.label().label()
                    ));
                    break;
                }
            };
            let Some(datetime) = found.timestamp.as_deref().and_then(instant) else {
                if first {
                    // No place in time: the item alone, as if it had no editions.
                    return Err(Box::new(trace));
                }
                say(&format!(
                    "editions of {}: the edition {ibi} has no timestamp; the walk stops",
                    url.ibi()
                ));
                break;
            };
            // An Archive that does not filter its answers names the next edition with the
            // item itself; one that does, only when the last edition is asked.
            next = match found.next_edition.clone() {
                Some(next) => Some(*next),
                None => self.next_edition(&archives, &asked, reader, budget).await,
            };
            editions.push(Edition {
                ibi,
                datetime,
                trace,
            });
        }
        // Stable: editions of one instant keep the chain's order.
        editions.sort_by_key(|e| e.datetime);
        Ok(editions)
    }
}

/// The edition current at `at`: the last whose instant is not after it, else the first.
/// `editions` is in time order and not empty.
pub fn current_at(editions: &[Edition], at: i64) -> usize {
    editions.iter().rposition(|e| e.datetime <= at).unwrap_or(0)
}

/// What the TimeGate's and the TimeMap's links name: the original resource (the
/// persistent URL asked, which is its own TimeGate), the TimeMap, and each edition's
/// persistent URL (with the file path asked) and HTTP-date, in time order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Times {
    pub original: String,
    pub timemap: String,
    pub mementos: Vec<(String, String)>,
}

impl Times {
    /// Of `editions` (in time order, not empty) of `url`, the resolver at `base`.
    pub fn of(base: &str, url: &PersistentUrl, editions: &[Edition]) -> Times {
        let mementos = editions
            .iter()
            .map(|e| {
                (
                    persistent_url(base, &url.with_ibi(e.ibi.clone())),
                    http_date(e.datetime).unwrap_or_default(),
                )
            })
            .collect();
        Times {
            original: persistent_url(base, url),
            timemap: timemap_url(base, url),
            mementos,
        }
    }

    /// The `rel` of the memento at `i`: `first`/`last` where it is one.
    fn rel(&self, i: usize) -> &'static str {
        let last = self.mementos.len() - 1;
        match (i == 0, i == last) {
            (true, true) => "first last memento",
            (true, false) => "first memento",
            (false, true) => "last memento",
            (false, false) => "memento",
        }
    }

    /// The TimeMap's own link attributes: its media type and the span of its mementos.
    fn span(&self) -> String {
        let from = self.mementos.first().map_or("", |m| m.1.as_str());
        let until = self.mementos.last().map_or("", |m| m.1.as_str());
        format!("type=\"{LINK_FORMAT}\"; from=\"{from}\"; until=\"{until}\"")
    }

    /// The TimeMap (RFC 7089 §5.1.1, `application/link-format`): the original, the
    /// TimeMap itself, the TimeGate, then every memento with its datetime; one link a
    /// line, ending with a newline.
    pub fn timemap(&self) -> String {
        let mut links = vec![
            format!("<{}>; rel=\"original\"", link_target(&self.original)),
            format!(
                "<{}>; rel=\"self\"; {}",
                link_target(&self.timemap),
                self.span()
            ),
            format!("<{}>; rel=\"timegate\"", link_target(&self.original)),
        ];
        for (i, (uri, datetime)) in self.mementos.iter().enumerate() {
            links.push(format!(
                "<{}>; rel=\"{}\"; datetime=\"{datetime}\"",
                link_target(uri),
                self.rel(i)
            ));
        }
        let mut text = links.join(",\n");
        text.push('\n');
        text
    }

    /// The links to the original (its own TimeGate) and to the TimeMap, with its span:
    /// those of the list of editions for readers, and the first of a TimeGate's redirect.
    pub fn original_and_timemap(&self) -> Vec<String> {
        vec![
            format!(
                "<{}>; rel=\"original timegate\"",
                link_target(&self.original)
            ),
            format!(
                "<{}>; rel=\"timemap\"; {}",
                link_target(&self.timemap),
                self.span()
            ),
        ]
    }

    /// The links of the TimeGate's redirect to the memento at `chosen`, found at
    /// `location` (RFC 7089 §4.1.1): the original (its own TimeGate), the TimeMap, the
    /// first and last mementos, and the one chosen, where the reader is sent.
    pub fn timegate_links(&self, chosen: usize, location: &str) -> Vec<String> {
        let mut links = self.original_and_timemap();
        let last = self.mementos.len() - 1;
        for i in [0, last] {
            let (uri, datetime) = &self.mementos[i];
            links.push(format!(
                "<{}>; rel=\"{}\"; datetime=\"{datetime}\"",
                link_target(uri),
                self.rel(i)
            ));
            if last == 0 {
                break;
            }
        }
        links.push(format!(
            "<{}>; rel=\"memento\"; datetime=\"{}\"",
            link_target(location),
            self.mementos[chosen].1
        ));
        links
    }
}

/// The TimeMap URL of `url` at the resolver `base`: `<base>/timemap/link/<IBI>[path]`.
pub fn timemap_url(base: &str, url: &PersistentUrl) -> String {
    persistent_url(&format!("{base}{TIMEMAP_PATH}"), url)
}

/// One edition as the list for readers shows it: its IBI, its persistent URL (which
/// always reaches it), the URL its resolution found (its location now, as the Archive
/// that holds it said it) and its instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    pub ibi: String,
    pub persistent: String,
    pub location: String,
    pub datetime: i64,
}

/// `editions` (in time order) of the item `url` names, for the list at the resolver
/// `base`.
pub fn listed(base: &str, url: &PersistentUrl, editions: &[Edition]) -> Vec<Listed> {
    editions
        .iter()
        .map(|e| Listed {
            ibi: e.ibi.as_str().to_string(),
            persistent: persistent_url(base, &url.with_ibi(e.ibi.clone())),
            location: match &e.trace.outcome {
                Outcome::Found(found) => e.trace.location.as_deref().unwrap_or(&found.url),
                _ => "",
            }
            .to_string(),
            datetime: e.datetime,
        })
        .collect()
}

/// The links every answer of a persistent URL that may be a TimeGate carries (with
/// `Vary: accept-datetime`): the original and its TimeGate (itself), and its TimeMap.
pub fn timegate_of(base: &str, url: &PersistentUrl) -> Vec<String> {
    vec![
        format!(
            "<{}>; rel=\"original timegate\"",
            link_target(&persistent_url(base, url))
        ),
        format!(
            "<{}>; rel=\"timemap\"; type=\"{LINK_FORMAT}\"",
            link_target(&timemap_url(base, url))
        ),
    ]
}

/// Whether `url` may be a TimeGate: the item itself or a file of it, asked without a
/// modifier, verb or required status (which ask for something else, and win).
pub fn is_timegate(url: &PersistentUrl) -> bool {
    url.verbs().is_empty() && !url.requires_original()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_datetime_is_an_http_date_and_nothing_else() {
        // RFC 7089's own example, and RFC 9110's.
        assert_eq!(
            accept_datetime("Thu, 31 May 2007 20:35:00 GMT"),
            Ok(1_180_643_700)
        );
        assert_eq!(
            accept_datetime("Sun, 06 Nov 1994 08:49:37 GMT"),
            Ok(784_111_777)
        );
        // The obsolete forms HTTP's recipients accept.
        assert_eq!(
            accept_datetime("Sunday, 06-Nov-94 08:49:37 GMT"),
            Ok(784_111_777)
        );
        assert_eq!(accept_datetime("Sun Nov  6 08:49:37 1994"), Ok(784_111_777));
        for bad in [
            "",
            "yesterday",
            "2007-05-31T20:35:00Z",
            "Thu, 31 May 2007 20:35:00",
            "Thu, 31 May 2007 20:35:00 UTC",
            "Fri, 31 May 2007 20:35:00 GMT",
            "Thu, 31 May 2007 24:35:00 GMT",
            "Thu, 32 May 2007 20:35:00 GMT",
        ] {
            assert_eq!(
                accept_datetime(bad),
                Err(BadDatetime(bad.into())),
                "{bad:?}"
            );
        }
        assert_eq!(
            BadDatetime("2007-05-31".into()).to_string(),
            "Accept-Datetime \"2007-05-31\" is not an HTTP-date such as \"Sun, 06 Nov 1994 08:49:37 GMT\""
        );
    }

    fn times(n: usize) -> Times {
        let all = [
            (
                "http://r.example/a.b/c/2020/01.02.03.04/doc.pdf",
                "Wed, 01 Jan 2020 00:00:00 GMT",
            ),
            (
                "http://r.example/a.b/c/2021/01.02.03.04/doc.pdf",
                "Fri, 01 Jan 2021 12:00:00 GMT",
            ),
            (
                "http://r.example/x.y/z/2022/01.02.03.04/doc.pdf",
                "Sat, 01 Jan 2022 23:59:59 GMT",
            ),
        ];
        Times {
            original: all[0].0.into(),
            timemap: "http://r.example/timemap/link/a.b/c/2020/01.02.03.04/doc.pdf".into(),
            mementos: all[..n]
                .iter()
                .map(|(u, d)| (u.to_string(), d.to_string()))
                .collect(),
        }
    }

    /// A file path holding `,` and `;` (which a file of the standard may be named with):
    /// each link target has them %-escaped, as the Archive's `Link` headers have them, so
    /// that a parser that splits at commas or semicolons before it reads `<…>` does not
    /// cut the URL; `<` and `>` are escaped as everywhere.
    #[test]
    fn commas_and_semicolons_of_a_file_path_are_escaped_in_every_link() {
        let t = Times {
            original: "http://r.example/a.b/c/2020/01.02.03.04/a,b;<c>.pdf".into(),
            timemap: "http://r.example/timemap/link/a.b/c/2020/01.02.03.04/a,b;<c>.pdf".into(),
            mementos: vec![(
                "http://r.example/a.b/c/2020/01.02.03.04/a,b;<c>.pdf".into(),
                "Wed, 01 Jan 2020 00:00:00 GMT".into(),
            )],
        };
        let escaped = "a%2Cb%3B%3Cc%3E.pdf>";
        let timemap = t.timemap();
        assert_eq!(timemap.matches(escaped).count(), 4, "{timemap}");
        assert!(!timemap.contains("a,b"), "{timemap}");
        let links = t.timegate_links(0, "http://a.example/col/x/doc/a,b;c.pdf");
        for link in &links[..links.len() - 1] {
            assert!(link.contains(escaped), "{link}");
        }
        assert!(
            links
                .last()
                .unwrap()
                .starts_with("<http://a.example/col/x/doc/a%2Cb%3Bc.pdf>"),
            "{links:?}"
        );
        let url = PersistentUrl::parse("/a.b/c/2020/01.02.03.04/a%2Cb%3Bc.pdf", None).unwrap();
        for link in timegate_of("http://r.example", &url) {
            assert!(link.contains("/a%2Cb%3Bc.pdf>"), "{link}");
        }
    }

    #[test]
    fn a_timemap_of_three_editions_byte_for_byte() {
        assert_eq!(
            times(3).timemap(),
            "<http://r.example/a.b/c/2020/01.02.03.04/doc.pdf>; rel=\"original\",\n\
             <http://r.example/timemap/link/a.b/c/2020/01.02.03.04/doc.pdf>; rel=\"self\"; type=\"application/link-format\"; from=\"Wed, 01 Jan 2020 00:00:00 GMT\"; until=\"Sat, 01 Jan 2022 23:59:59 GMT\",\n\
             <http://r.example/a.b/c/2020/01.02.03.04/doc.pdf>; rel=\"timegate\",\n\
             <http://r.example/a.b/c/2020/01.02.03.04/doc.pdf>; rel=\"first memento\"; datetime=\"Wed, 01 Jan 2020 00:00:00 GMT\",\n\
             <http://r.example/a.b/c/2021/01.02.03.04/doc.pdf>; rel=\"memento\"; datetime=\"Fri, 01 Jan 2021 12:00:00 GMT\",\n\
             <http://r.example/x.y/z/2022/01.02.03.04/doc.pdf>; rel=\"last memento\"; datetime=\"Sat, 01 Jan 2022 23:59:59 GMT\"\n"
        );
    }

    #[test]
    fn a_timemap_of_one_edition_names_it_first_and_last() {
        assert_eq!(
            times(1).timemap(),
            "<http://r.example/a.b/c/2020/01.02.03.04/doc.pdf>; rel=\"original\",\n\
             <http://r.example/timemap/link/a.b/c/2020/01.02.03.04/doc.pdf>; rel=\"self\"; type=\"application/link-format\"; from=\"Wed, 01 Jan 2020 00:00:00 GMT\"; until=\"Wed, 01 Jan 2020 00:00:00 GMT\",\n\
             <http://r.example/a.b/c/2020/01.02.03.04/doc.pdf>; rel=\"timegate\",\n\
             <http://r.example/a.b/c/2020/01.02.03.04/doc.pdf>; rel=\"first last memento\"; datetime=\"Wed, 01 Jan 2020 00:00:00 GMT\"\n"
        );
    }

    #[test]
    fn the_timegate_links_name_first_last_and_the_memento_chosen() {
        assert_eq!(
            times(3).timegate_links(1, "http://a.example/col/x/doc/doc.pdf"),
            [
                "<http://r.example/a.b/c/2020/01.02.03.04/doc.pdf>; rel=\"original timegate\"",
                "<http://r.example/timemap/link/a.b/c/2020/01.02.03.04/doc.pdf>; rel=\"timemap\"; type=\"application/link-format\"; from=\"Wed, 01 Jan 2020 00:00:00 GMT\"; until=\"Sat, 01 Jan 2022 23:59:59 GMT\"",
                "<http://r.example/a.b/c/2020/01.02.03.04/doc.pdf>; rel=\"first memento\"; datetime=\"Wed, 01 Jan 2020 00:00:00 GMT\"",
                "<http://r.example/x.y/z/2022/01.02.03.04/doc.pdf>; rel=\"last memento\"; datetime=\"Sat, 01 Jan 2022 23:59:59 GMT\"",
                "<http://a.example/col/x/doc/doc.pdf>; rel=\"memento\"; datetime=\"Fri, 01 Jan 2021 12:00:00 GMT\"",
            ]
        );
        assert_eq!(
            times(1).timegate_links(0, "http://a.example/d")[2..],
            [
                "<http://r.example/a.b/c/2020/01.02.03.04/doc.pdf>; rel=\"first last memento\"; datetime=\"Wed, 01 Jan 2020 00:00:00 GMT\"",
                "<http://a.example/d>; rel=\"memento\"; datetime=\"Wed, 01 Jan 2020 00:00:00 GMT\"",
            ]
        );
    }

    #[test]
    fn the_edition_current_at_an_instant_is_the_last_not_after_it() {
        let trace = Trace {
            persistent_url: String::new(),
            rounds: Vec::new(),
            outcome: Outcome::NotFound {
                asked: 0,
                missing: None,
                unasked: Vec::new(),
            },
            location: None,
            conflicts: Vec::new(),
            ms: 0.0,
        };
        let editions: Vec<Edition> = [100, 200, 200, 300]
            .iter()
            .enumerate()
            .map(|(i, &datetime)| Edition {
                ibi: Ibi::parse(&format!("a.b/c/2020/01.02.03.0{i}")).unwrap(),
                datetime,
                trace: trace.clone(),
            })
            .collect();
        let at = |t| current_at(&editions, t);
        // Before the first: the first; at an instant: the edition of it (the later in the
        // chain of two of one instant); after the last: the last.
        assert_eq!(
            [
                at(0),
                at(99),
                at(100),
                at(199),
                at(200),
                at(299),
                at(300),
                at(i64::MAX)
            ],
            [0, 0, 0, 0, 2, 2, 3, 3]
        );
    }
}
