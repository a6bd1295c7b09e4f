//! What one Archive's answer to a urlRequest says of the request (§8.2, §9.2): a URL that
//! satisfies it ([`Found`]), the IBI of a related item named without its URL (the next
//! round, [`Asking`], and [`Why`] it is asked), the language variants of a bare
//! translation ([`Offers`]), a tombstone, the item without what was asked, or nothing.
//!
//! Only an absolute `http`/`https` URL with a `//` authority, no user information and
//! only visible ASCII is ever taken ([`usable_location`]); anything else an Archive
//! answers counts as no URL. An answer of thousands of pairs costs as many steps, and at
//! most [`MAX_VARIANTS`] of its variants are read.

use std::collections::{HashMap, HashSet};

use ibi::item::State;
use ibi::pairs::{self, PairList};
use ibi::persistent::PersistentUrl;
use ibi::relation::{Lang, Relation, Step};
use ibi::Ibi;
use serde::Serialize;

use crate::lang;
use crate::registry::Included;

/// Variants of one answer read (URLs of translations, say): more than any item has.
pub const MAX_VARIANTS: usize = 256;

/// Why a round was asked after the first: shown in words on the pages, in English by its
/// `Display` (in the log, `resolve` and the JSON inspection view).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Why {
    /// The Archive `archive` at `address` named the IBI as the `pair` of `of`, without
    /// its URL.
    Named {
        address: String,
        archive: String,
        pair: String,
        of: String,
    },
    /// The Archive `archive` at `address` named the IBI as `ibi.nextedition` of `of`.
    NextEdition {
        address: String,
        archive: String,
        of: String,
    },
    /// No translation in the reader's languages: the item in its own language.
    OwnLanguage,
}

impl std::fmt::Display for Why {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Why::Named {
                address,
                archive,
                pair,
                of,
            } => write!(
                f,
                "{address} ({archive}) named it as {pair} of {of}, without its URL"
            ),
            Why::NextEdition {
                address,
                archive,
                of,
            } => write!(
                f,
                "{address} ({archive}) named it as ibi.nextedition of {of}"
            ),
            Why::OwnLanguage => f.write_str(
                "no translation in the reader's languages: the item in its own language",
            ),
        }
    }
}

impl Serialize for Why {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The chosen answer.
#[derive(Clone, Debug, Serialize)]
pub struct Found {
    pub url: String,
    pub archive: String,
    pub address: String,
    pub contenttype: String,
    /// `state` as the Archive said it; none: it claims nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<SaidState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ibi: Option<String>,
    #[serde(skip)]
    pub urlkey: Option<String>,
    /// The translation chosen for a bare `+`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Its editions' place in time, for Memento ([`crate::editions`]): `timestamp` of
    /// what was found, as the Archive said it.
    #[serde(skip)]
    pub timestamp: Option<String>,
    /// The IBI the answer names as `ibi.nextedition` of the IBI asked for.
    #[serde(skip)]
    pub next_edition: Option<Box<Ibi>>,
}

impl Found {
    /// Whether the Archive claims to hold the Original.
    pub fn claims_original(&self) -> bool {
        self.state == Some(SaidState::Known(State::Original))
    }
}

/// `state` as an Archive said it of an item: one of Figure 5.4's (and the tombstone's),
/// or another word, kept as said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SaidState {
    Known(State),
    Other(String),
}

impl SaidState {
    /// The state `word` says.
    pub fn of(word: &str) -> SaidState {
        match State::from_word(word) {
            Some(state) => SaidState::Known(state),
            None => SaidState::Other(word.to_string()),
        }
    }

    /// The word as the Archive said it.
    pub fn as_str(&self) -> &str {
        match self {
            SaidState::Known(state) => state.as_str(),
            SaidState::Other(word) => word,
        }
    }
}

impl Serialize for SaidState {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// What one answer says about the request.
#[derive(Clone, Debug)]
pub(crate) enum Reading {
    Satisfies(Found),
    /// The answer names the IBI of what was asked for, without its URL: ask every
    /// Archive for it (§8.2, the loop).
    Ask(Asking),
    /// A bare translation: what the answer offers, chosen among every answer's.
    Offers(Box<Offers>),
    Deleted(String),
    /// Here, but nothing for this request; `original`: it said `state Original`, or no
    /// state at all (an Archive answers its identity pairs alone for an item it has
    /// without what was asked, Example 10.2): it holds the item as its Original, not
    /// as a copy, and claims it all the same.
    Here {
        original: bool,
    },
    Empty,
    Invalid(String),
}

/// The next round of a resolution, and why it is asked.
#[derive(Clone, Debug)]
pub struct Asking {
    pub(crate) url: PersistentUrl,
    pub(crate) why: Why,
}

/// What one variant of a bare translation gives.
#[derive(Clone, Debug)]
pub(crate) enum Gives {
    Url(Found),
    Ask(Asking),
}

impl Gives {
    /// Whether the Archive claims the Original of what it gives (a translation named
    /// elsewhere: not known).
    pub(crate) fn original(&self) -> bool {
        matches!(self, Gives::Url(found) if found.claims_original())
    }
}

/// One answer to a bare translation (`+`, `GetTranslation`): every language variant it
/// names (with its URL, or the IBI of the translation kept elsewhere), the item in its
/// own language when one of the variants is the item itself, and where to ask when the
/// translation's place is not reached here (the next edition, say).
#[derive(Clone, Debug)]
pub(crate) struct Offers {
    pub(crate) variants: Vec<(Lang, Gives)>,
    pub(crate) itself: Option<Gives>,
    pub(crate) onward: Option<Asking>,
}

impl Offers {
    /// The variant the reader prefers most (of equals, one with its URL, an Original
    /// first), and how much.
    pub(crate) fn best(&self, languages: &[Lang]) -> Option<(lang::Rank, &Gives)> {
        self.variants
            .iter()
            .filter_map(|(l, g)| lang::rank(languages, l).map(|r| (r, g)))
            .min_by_key(|(r, g)| (*r, matches!(g, Gives::Ask(_)), !g.original()))
    }
}

impl Found {
    /// The key of the item it is the URL of, when its answer named it.
    pub fn ibi_key(&self) -> Option<String> {
        let words: Vec<&str> = self.ibi.as_deref()?.split_whitespace().collect();
        ibi_of(&words).map(|ibi| ibi.key())
    }

    /// Whether the Archive says it holds a copy (`state Copy`): it claims no Original.
    pub fn says_copy(&self) -> bool {
        self.state == Some(SaidState::Known(State::Copy))
    }
}

/// The next round when no answer offers a translation in the reader's languages and
/// none of them is the item itself: the item in its own language (Example 8.3).
pub(crate) fn own_language(url: &PersistentUrl, step: usize) -> Asking {
    Asking {
        url: url.without_translation_at(step),
        why: Why::OwnLanguage,
    }
}

/// Whether `body` is an answer at all: empty ("not here") or a pair list.
pub(crate) fn is_answer(body: &str) -> bool {
    let text = body.trim_end_matches(['\r', '\n']);
    text.trim().is_empty() || pairs::parse(text).is_ok()
}

/// Reads one answer against the request. Also gives the pairs to show (urlkey hidden).
pub(crate) fn read_answer(
    body: &str,
    url: &PersistentUrl,
    archive: &Included,
) -> (Reading, Vec<(String, String)>) {
    let text = body.trim_end_matches(['\r', '\n']);
    if text.trim().is_empty() {
        return (Reading::Empty, Vec::new());
    }
    let list = match pairs::parse(text) {
        Ok(list) => list,
        Err(e) => {
            return (
                Reading::Invalid(format!("not a pair list: {e}")),
                Vec::new(),
            )
        }
    };
    let shown = list
        .iter()
        .map(|(n, v)| {
            let v = if n == "urlkey" {
                "(hidden)".to_string()
            } else {
                v.joined()
            };
            (n.to_string(), v)
        })
        .collect();
    (read_pairs(&list, url, archive), shown)
}

/// Each name's first pair of an answer, looked up once per name: an answer of thousands
/// of pairs costs as many steps, not their square.
type Index<'a> = HashMap<&'a str, &'a [&'a str]>;

/// A URL of an answer that satisfies the request: the language at a bare translation's
/// place, the relation's text after `url`, and what it gives.
type Answering = (Option<Lang>, String, Found);

/// An `ibi<relation>` pair naming what the request asks for, or a part of the way to it,
/// whose URL is not given: the IBI, how many steps of the relation it went, the language
/// at the bare place, and the pair's name.
type Named = (Ibi, usize, Option<Lang>, String);

/// What an answer is read against: the request, the steps of its relation, and the
/// Archive that answered.
struct Against<'a> {
    url: &'a PersistentUrl,
    wanted: &'a [Step],
    archive: &'a Included,
}

/// What the pairs of one answer (`list`) say of the request `url`, answered by `archive`:
/// a URL that satisfies it, the variants a bare translation offers, the IBI to ask next,
/// a tombstone, or the item without what was asked.
pub(crate) fn read_pairs(list: &PairList, url: &PersistentUrl, archive: &Included) -> Reading {
    // The words as text (those of a list read from text are ASCII).
    let list: Vec<(&str, Vec<&str>)> = list
        .iter()
        .map(|(name, value)| (name, value.as_strs().unwrap_or_default()))
        .collect();
    let mut index: Index = HashMap::with_capacity(list.len());
    for (name, words) in &list {
        index.entry(name).or_insert(words.as_slice());
    }
    let get = |name: &str| index.get(name).copied();
    let against = Against {
        url,
        wanted: url.relation().steps(),
        archive,
    };
    let urls = against.urls(&list, &index);
    let with_url: HashSet<&str> = urls.iter().map(|(_, suffix, _)| suffix.as_str()).collect();
    let named = against.named(&list, &with_url);
    if let Some(step) = url.relation().bare_translation_at() {
        if let Some(offers) = against.offers(step, &urls, &named, &index) {
            return Reading::Offers(Box::new(offers));
        }
    } else {
        if let Some((_, _, found)) = urls.into_iter().next() {
            return Reading::Satisfies(found);
        }
        // The longest way an answer went toward what was asked, the first of equals.
        let farthest = named.iter().map(|n| n.1).max();
        if let Some(a) = named
            .iter()
            .filter(|n| Some(n.1) == farthest)
            .find_map(|n| against.asking(n))
        {
            return Reading::Ask(a);
        }
        if let Some(a) = against.next_edition(&index) {
            return Reading::Ask(a);
        }
    }
    let state = get("state")
        .and_then(|w| w.first())
        .map(|w| SaidState::of(w));
    if state == Some(SaidState::Known(State::Deleted)) {
        let date = get("timestamp")
            .and_then(|w| w.first())
            .map(|w| w.to_string())
            .unwrap_or_default();
        return Reading::Deleted(date);
    }
    Reading::Here {
        original: matches!(state, None | Some(SaidState::Known(State::Original))),
    }
}

impl Against<'_> {
    /// Every `url<relation>` pair of `list` that answers the request, taken when its URL
    /// may become a Location: exact, or with a language at a bare translation's place.
    fn urls(&self, list: &[(&str, Vec<&str>)], index: &Index) -> Vec<Answering> {
        let mut urls: Vec<Answering> = Vec::new();
        for (name, words) in list {
            let Some(rest) = name.strip_prefix("url") else {
                continue;
            };
            let Ok(rel) = Relation::parse(rest) else {
                continue;
            };
            if let (Some(lang), [value]) = (matches(self.wanted, rel.steps()), words.as_slice()) {
                if usable_location(value) {
                    let found = found_at(index, rest, value, self.url, self.archive, lang.as_ref());
                    urls.push((lang, rest.to_string(), found));
                    if urls.len() == MAX_VARIANTS {
                        break;
                    }
                }
            }
        }
        urls
    }

    /// Every `ibi<relation>` pair of `list` naming what the request asks for, or a part
    /// of the way to it, whose URL is not given (`with_url`: the relations whose URL is).
    fn named(&self, list: &[(&str, Vec<&str>)], with_url: &HashSet<&str>) -> Vec<Named> {
        let wanted = self.wanted;
        let mut named: Vec<Named> = Vec::new();
        for (name, words) in list {
            let Some(rest) = name.strip_prefix("ibi").filter(|r| r.starts_with('.')) else {
                continue;
            };
            let Ok(rel) = Relation::parse(rest) else {
                continue;
            };
            let steps = rel.steps();
            if steps.len() > wanted.len() || with_url.contains(rest) || named.len() == MAX_VARIANTS
            {
                continue;
            }
            let (Some(lang), Some(ibi)) = (matches(&wanted[..steps.len()], steps), ibi_of(words))
            else {
                continue;
            };
            // A translation without a language at the end was not taken (an Archive
            // passes it through an item it does not hold): the way stops before it.
            let mut went = steps.len();
            while went > 0 && steps[went - 1] == Step::Translation(None) {
                went -= 1;
            }
            if went > 0 {
                named.push((ibi, went, lang, name.to_string()));
            }
        }
        named
    }

    /// The next round for what `named` names: its IBI, asked for what is left of the
    /// relation (its last edition stays asked, and so does a metadata format, which is
    /// the metadata item's own); none when it would ask again what was just asked.
    fn asking(&self, (ibi, went, _, pair): &Named) -> Option<Asking> {
        let url = self.url;
        let (walked, left) = self.wanted.split_at(*went);
        let mut rest: Vec<Step> = Vec::new();
        if walked.last() == Some(&Step::LastEdition) {
            rest.push(Step::LastEdition);
        }
        // The format applies to where the relation ends: asked of the metadata item
        // named, or of its translation, until a metadata step of what is left.
        let format = Step::Metadata { oai_dc: true };
        if walked.contains(&format) && !left.iter().any(|s| matches!(s, Step::Metadata { .. })) {
            rest.push(format);
        }
        rest.extend(left.iter().cloned());
        let relation = Relation::from_steps(rest).ok()?;
        let next = url.for_related(ibi.clone(), &relation);
        if ibi.key() == url.ibi().key() && next.verblist_text() == url.verblist_text() {
            return None;
        }
        Some(Asking {
            url: next,
            why: Why::Named {
                address: self.archive.address.clone(),
                archive: self.archive.serviceibi.to_string(),
                pair: pair.clone(),
                of: url.ibi().to_string(),
            },
        })
    }

    /// The next edition the answer names (`ibi.nextedition`), asked when the request
    /// involves the last edition.
    fn next_edition(&self, index: &Index) -> Option<Asking> {
        let next = index.get("ibi.nextedition").copied().and_then(ibi_of)?;
        let url = self.url;
        url.relation().involves_last_edition().then(|| Asking {
            url: url.with_ibi(next),
            why: Why::NextEdition {
                address: self.archive.address.clone(),
                archive: self.archive.serviceibi.to_string(),
                of: url.ibi().to_string(),
            },
        })
    }

    /// What an answer offers for a bare translation at `step`: past the bare place, a
    /// language variant; short of it, where to ask on; and the variant that is the item
    /// itself. None when it offers nothing.
    fn offers(
        &self,
        step: usize,
        urls: &[Answering],
        named: &[Named],
        index: &Index,
    ) -> Option<Offers> {
        let get = |name: &str| index.get(name).copied();
        let mut variants: Vec<(Lang, Gives)> = Vec::new();
        for (lang, _, found) in urls {
            if let Some(lang) = lang {
                variants.push((lang.clone(), Gives::Url(found.clone())));
            }
        }
        for n in named {
            if let (Some(lang), true) = (&n.2, n.1 > step) {
                if !variants.iter().any(|(l, _)| l == lang) {
                    if let Some(a) = self.asking(n) {
                        variants.push((lang.clone(), Gives::Ask(a)));
                    }
                }
            }
        }
        // The variant that is the item itself: its own language.
        let own_rep = get("ibi").and_then(|w| rep_of(w));
        let itself = urls
            .iter()
            .find(|(_, suffix, _)| {
                own_rep.is_some() && get(&format!("ibi{suffix}")).and_then(|w| rep_of(w)) == own_rep
            })
            .map(|(_, _, found)| Gives::Url(found.clone()));
        let onward = named
            .iter()
            .filter(|n| n.1 <= step)
            .max_by_key(|n| n.1)
            .and_then(|n| self.asking(n))
            .or_else(|| self.next_edition(index));
        (!variants.is_empty() || itself.is_some() || onward.is_some()).then_some(Offers {
            variants,
            itself,
            onward,
        })
    }
}

/// The [`Found`] of the pair `url<suffix>` (its `value`): the pairs of the same relation
/// say its content type, state and IBI.
fn found_at(
    index: &Index,
    suffix: &str,
    value: &str,
    url: &PersistentUrl,
    archive: &Included,
    lang: Option<&Lang>,
) -> Found {
    let get = |name: &str| index.get(name).copied();
    let word = |n: &str| {
        get(&format!("{n}{suffix}"))
            .and_then(|w| w.first())
            .map(|w| w.to_string())
    };
    let metadata = url
        .relation()
        .steps()
        .iter()
        .any(|s| matches!(s, Step::Metadata { .. }));
    Found {
        url: value.to_string(),
        archive: archive.serviceibi.to_string(),
        address: archive.address.clone(),
        contenttype: word("contenttype")
            .unwrap_or_else(|| if metadata { "Metadata" } else { "Data" }.into()),
        state: word("state").as_deref().map(SaidState::of),
        ibi: get(&format!("ibi{suffix}")).map(|w| w.join(" ")),
        urlkey: get("urlkey").and_then(|w| w.first()).map(|w| w.to_string()),
        language: lang.map(|l| l.to_string()),
        timestamp: word("timestamp"),
        next_edition: get("ibi.nextedition").and_then(ibi_of).map(Box::new),
    }
}

/// `Some(language at the first bare place)` when `got` answers `wanted`.
fn matches(wanted: &[Step], got: &[Step]) -> Option<Option<Lang>> {
    if wanted.len() != got.len() {
        return None;
    }
    let mut lang = None;
    for (w, g) in wanted.iter().zip(got) {
        match (w, g) {
            (Step::Translation(None), Step::Translation(Some(l))) => {
                lang.get_or_insert_with(|| l.clone());
            }
            _ if w == g => {}
            _ => return None,
        }
    }
    Some(lang)
}

/// The rep of a value of the `formas-de-ibi` rule (`rep X ibip Y`).
fn rep_of<'a>(words: &[&'a str]) -> Option<&'a str> {
    words.windows(2).find(|w| w[0] == "rep").map(|w| w[1])
}

/// The IBI of a value of the `formas-de-ibi` rule: the rep when given, else the IBIp.
fn ibi_of(words: &[&str]) -> Option<Ibi> {
    let form = |tag: &str| {
        words
            .windows(2)
            .find(|w| w[0] == tag)
            .and_then(|w| Ibi::parse(w[1]).ok())
    };
    form("rep")
        .or_else(|| form("ibip"))
        .or_else(|| match words {
            [one] => Ibi::parse(one).ok(),
            _ => None,
        })
}

/// Whether an Archive's URL may become a `Location`: an absolute `http` or `https` URL
/// written with its `//` authority (`http:/x`, `http:x` and `http:///x` are not, though
/// URL parsers make something of them), a host, no user information, and only visible
/// ASCII without quotes, backslashes or angle brackets.
pub fn usable_location(url: &str) -> bool {
    if url.len() > 8 * 1024
        || !url
            .bytes()
            .all(|b| (0x21..0x7f).contains(&b) && !matches!(b, b'"' | b'<' | b'>' | b'\\' | b'`'))
    {
        return false;
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        return false;
    };
    if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
        return false;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.is_empty() || authority.contains('@') {
        return false;
    }
    match url::Url::parse(url) {
        Ok(u) => {
            u.host_str().is_some_and(|h| !h.is_empty())
                && u.username().is_empty()
                && u.password().is_none()
        }
        Err(_) => false,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The first answer of Example 10.1.
    pub(crate) const EXAMPLE_10_1: &str = "archiveaddress mtc-m16c.sid.inpe.br\r\ncontenttype Data\r\nibi {rep sid.inpe.br/mtc-m18@80/2009/07.21.14.43 ibip 8JMKD3MGP8W/35MMLL8}\r\nibi.archiveservice {rep sid.inpe.br/mtc-m18@80/2008/03.17.15.17}\r\nibi.platformsoftware {rep dpi.inpe.br/banon/1998/08.02.08.56}\r\nstate Original\r\ntimestamp 2009-07-21T14:43:31Z\r\nurl http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf\r\nurlkey 1427244889-5349022633744855";

    /// Example 9.3's answer to a bare GetTranslation.
    pub(crate) const EXAMPLE_9_3: &str = "archiveaddress mtc-m16c.sid.inpe.br\r\ncontenttype.translation(en) Data\r\ncontenttype.translation(pt) Data\r\nibi {rep sid.inpe.br/mtc-m18@80/2009/07.21.13.23 ibip 8JMKD3MGP8W/35MME4E}\r\nibi.translation(en) {rep sid.inpe.br/mtc-m18@80/2009/07.21.13.23}\r\nibi.translation(pt) {rep sid.inpe.br/mtc-m18@80/2009/08.25.19.43}\r\nurl.translation(en) http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS%20643.0-B-1.pdf\r\nurl.translation(pt) http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/08.25.19.43/doc/RTC-07.pdf\r\nurlkey 1";

    pub(crate) fn archive() -> Included {
        Included {
            key: "sid.inpe.br/mtc-m18/2008/03.17.15.17".into(),
            serviceibi: Ibi::parse("sid.inpe.br/mtc-m18@80/2008/03.17.15.17").unwrap(),
            address: "mtc-m16c.sid.inpe.br".into(),
            ip: None,
            recorded: Default::default(),
        }
    }

    pub(crate) fn url(path: &str) -> PersistentUrl {
        let (p, q) = match path.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (path, None),
        };
        PersistentUrl::parse(p, q).unwrap()
    }

    pub(crate) fn read(answer: &str, path: &str) -> Reading {
        read_pairs(&pairs::parse(answer).unwrap(), &url(path), &archive())
    }

    #[test]
    fn only_http_urls_become_locations() {
        for bad in [
            "javascript:alert(1)",
            "data:text/html,x",
            "http://a b",
            "http://a\r\nSet-Cookie: x=1",
            "ftp://x/y",
            "http://",
            "//evil.example/x",
            "http://x/\"><script>",
            // Not absolute with an authority, though URL parsers make something of them.
            "http:/evil.example/x",
            "http:evil.example/x",
            "https:evil.example/x",
            "http:///evil.example/x",
            "http:\\\\evil.example/x",
            // User information.
            "http://user:pass@evil.example/x",
            "http://user@evil.example/x",
            "http://@evil.example/x",
            "http://evil.example\\@good.example/x",
            // Other schemes, however spelt.
            "JaVaScRiPt:alert(1)",
            "javascript://%0aalert(1)",
            "vbscript:msgbox(1)",
            "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
            "file:///etc/passwd",
            "ws://evil.example/x",
            // Relative.
            "",
            "/x/y",
            "x/y",
            "../x",
            "?x=1",
            "#x",
            // Line breaks, controls, spaces.
            "http://a/x\nSet-Cookie: x=1",
            "http://a/x\rSet-Cookie: x=1",
            "http://a/x\tb",
            "http://a/x\0b",
            "http://a/x\x7fb",
            " http://a/x",
            "http://a/x ",
            "http:// evil.example/x",
            // Quotes, angle brackets, backslashes, backticks.
            "http://a/x\"onmouseover=\"alert(1)",
            "http://a/<script>alert(1)</script>",
            "http://a/x\\y",
            "http://a/`x`",
            // Not ASCII: the host, the path, a right-to-left override.
            "http://ex\u{e4}mple.org/x",
            "http://a/\u{e9}",
            "http://a/\u{202e}fdp.exe",
            // Not a URL.
            "http://[::1/x",
            "http://a:99999/x",
        ] {
            assert!(!usable_location(bad), "{bad:?}");
        }
        for good in [
            "https://mtc-m16c.sid.inpe.br/col/x/doc/a%20b.pdf",
            "HTTP://mtc-m16c.sid.inpe.br:8080/col/x/doc/a.pdf?x=1#y",
            "http://[2001:db8::1]/x",
            "http://mtc-m16c.sid.inpe.br/col/x@y/doc/a.pdf",
        ] {
            assert!(usable_location(good), "{good:?}");
        }
        // Over-long: 8 KiB at most.
        let at_most = format!("http://a/{}", "l".repeat(8 * 1024 - 9));
        assert_eq!(at_most.len(), 8 * 1024);
        assert!(usable_location(&at_most));
        assert!(!usable_location(&format!("{at_most}l")));
        let answer = EXAMPLE_10_1.replace(
            "url http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf",
            "url javascript:alert(1)",
        );
        assert!(matches!(
            read(&answer, "/8JMKD3MGP8W/35MMLL8"),
            Reading::Here { .. }
        ));
    }

    #[test]
    fn a_tombstone_reads_as_deleted_with_its_date() {
        let answer = "archiveaddress a\r\nibi {rep x.y/z/2010/01.02.03.04}\r\nstate Deleted\r\ntimestamp 2020-05-06T07:08:09Z";
        match read(answer, "/x.y/z/2010/01.02.03.04") {
            Reading::Deleted(d) => assert_eq!(d, "2020-05-06T07:08:09Z"),
            other => panic!("{other:?}"),
        }
    }

    /// Where an answer sends the next round: its IBI and verb list, and why.
    fn next_round(answer: &str, path: &str) -> Option<(String, String, String)> {
        match read(answer, path) {
            Reading::Ask(a) => Some((
                a.url.ibi().as_str().to_string(),
                a.url.verblist_text(),
                a.why.to_string(),
            )),
            _ => None,
        }
    }

    #[test]
    fn a_relation_named_without_its_url_is_asked_of_every_archive_for_what_is_left() {
        let head = "archiveaddress a\r\nibi {rep x.y/z/2020/01.01.01.00}\r\nstate Copy\r\n";
        let why = |pair: &str| {
            format!("mtc-m16c.sid.inpe.br (sid.inpe.br/mtc-m18@80/2008/03.17.15.17) named it as {pair} of x.y/z/2020/01.01.01.00, without its URL")
        };
        let cases: [(&str, &str, (&str, &str, String)); 7] = [
            // The metadata: the metadata item itself; in a format: its own format.
            (
                "ibi.metadata {rep x.y/z/2020/01.01.01.09}",
                ":",
                ("x.y/z/2020/01.01.01.09", "", why("ibi.metadata")),
            ),
            (
                "ibi.metadata(oai_dc) {rep x.y/z/2020/01.01.01.09}",
                ":(oai_dc)",
                (
                    "x.y/z/2020/01.01.01.09",
                    "GetMetadata(oai_dc)",
                    why("ibi.metadata(oai_dc)"),
                ),
            ),
            // A translation: the translated item itself, and what follows it.
            (
                "ibi.translation(es) {rep x.y/z/2020/01.01.01.03}",
                "+(es):",
                (
                    "x.y/z/2020/01.01.01.03",
                    "GetMetadata",
                    why("ibi.translation(es)"),
                ),
            ),
            // The last edition stays asked of the edition named.
            (
                "ibi.lastedition {rep x.y/z/2020/01.01.01.05}",
                "!:(oai_dc)",
                (
                    "x.y/z/2020/01.01.01.05",
                    "GetLastEdition GetMetadata(oai_dc)",
                    why("ibi.lastedition"),
                ),
            ),
            // Composed: the whole way named at once.
            (
                "ibi.lastedition.metadata(oai_dc) {rep x.y/z/2020/01.01.01.09}",
                "!:(oai_dc)",
                (
                    "x.y/z/2020/01.01.01.09",
                    "GetMetadata(oai_dc)",
                    why("ibi.lastedition.metadata(oai_dc)"),
                ),
            ),
            // The format stays asked of a translation of the metadata named.
            (
                "ibi.metadata(oai_dc).translation(es) {rep x.y/z/2020/01.01.01.13}",
                ":(oai_dc)+(es)",
                (
                    "x.y/z/2020/01.01.01.13",
                    "GetMetadata(oai_dc)",
                    why("ibi.metadata(oai_dc).translation(es)"),
                ),
            ),
            // A bare translation passed through an item held elsewhere is still to be
            // chosen there.
            (
                "ibi.metadata.translation {rep x.y/z/2020/01.01.01.09}",
                ":+",
                (
                    "x.y/z/2020/01.01.01.09",
                    "GetTranslation",
                    why("ibi.metadata.translation"),
                ),
            ),
        ];
        for (pair, mdf, (ibi, verbs, why)) in cases {
            let answer = format!("{head}{pair}");
            let path = format!("/x.y/z/2020/01.01.01.00{mdf}");
            let got = match read(&answer, &path) {
                Reading::Ask(a) => (
                    a.url.ibi().as_str().to_string(),
                    a.url.verblist_text(),
                    a.why.to_string(),
                ),
                Reading::Offers(o) => match o.onward {
                    Some(a) => (
                        a.url.ibi().as_str().to_string(),
                        a.url.verblist_text(),
                        a.why.to_string(),
                    ),
                    None => panic!("{pair}: {o:?}"),
                },
                other => panic!("{pair}: {other:?}"),
            };
            assert_eq!(got, (ibi.to_string(), verbs.to_string(), why), "{pair}");
        }
        // A URL given wins over the IBI; an unusable one counts as none.
        let with_url = format!(
            "{head}ibi.metadata {{rep x.y/z/2020/01.01.01.09}}\r\nurl.metadata http://a/m.html"
        );
        assert!(matches!(
            read(&with_url, "/x.y/z/2020/01.01.01.00:"),
            Reading::Satisfies(_)
        ));
        let bad_url = with_url.replace("http://a/m.html", "javascript:x");
        assert_eq!(
            next_round(&bad_url, "/x.y/z/2020/01.01.01.00:").map(|n| n.0),
            Some("x.y/z/2020/01.01.01.09".to_string())
        );
        // Naming the same request again, or another relation, starts no round.
        let itself = format!("{head}ibi.metadata(oai_dc) {{rep x.y/z/2020/01.01.01.00}}");
        assert!(matches!(
            read(&itself, "/x.y/z/2020/01.01.01.00:(oai_dc)"),
            Reading::Here { .. }
        ));
        let other = format!("{head}ibi.metadata {{rep x.y/z/2020/01.01.01.09}}");
        assert!(matches!(
            read(&other, "/x.y/z/2020/01.01.01.00:(oai_dc)"),
            Reading::Here { .. }
        ));
        // The file path, GetFileList and the query stay with the next round.
        let files = format!("{head}ibi.translation(es) {{rep x.y/z/2020/01.01.01.03}}");
        let Reading::Ask(a) = read(
            &files,
            "/x.y/z/2020/01.01.01.00+(es)/a/b.pdf?ibiurl.verblist=GetFileList&x=1",
        ) else {
            panic!("no next round");
        };
        assert_eq!(
            a.url.to_string(),
            "/x.y/z/2020/01.01.01.03/a/b.pdf?ibiurl.verblist=GetFileList&x=1"
        );
        assert_eq!(a.url.verblist_text(), "GetFileList");
    }

    #[test]
    fn an_answer_offering_thousands_of_translations_is_read_as_far_as_any_item_has() {
        let mut answer = "archiveaddress a\r\nibi {rep x.y/z/2020/01.01.01.00}\r\n".to_string();
        let mut n = 0;
        for a in b'a'..=b'z' {
            for b in b'a'..=b'z' {
                for c in [b'A', b'B', b'C'] {
                    let lang = format!("{}{}-{}{}", a as char, b as char, c as char, c as char);
                    answer.push_str(&format!("url.translation({lang}) http://a/{n}\r\n"));
                    n += 1;
                }
            }
        }
        assert!(n > MAX_VARIANTS * 7, "{n}");
        let Reading::Offers(o) = read(&answer, "/x.y/z/2020/01.01.01.00+") else {
            panic!("not offers");
        };
        assert_eq!(o.variants.len(), MAX_VARIANTS);
    }
}
