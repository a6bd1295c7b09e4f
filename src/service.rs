//! The Archive service (resolution standard, §9): MONTARRESPOSTA and MONTARLISTADEURL
//! with its routines, filtered as FILTRARLISTADEURL would filter it.
//!
//! FILTRARLISTADEURL is not run over a full list: the verb list is read first and only the
//! relations it names are computed, so a filtered answer costs no more than its pairs.

use std::net::IpAddr;
use std::rc::Rc;

use crate::acklog;
use crate::archive::Archive;
use crate::http::Answer;
use crate::item::{Access, ContentType, Item, State};
use crate::layout::{self};
use crate::urlkey::KeyError;
use ::ibi::pairs::{PairList, Value};
use ::ibi::query::Query;
use ::ibi::relation::{Lang, Relation, Step, VerbList};
use ::ibi::time::iso8601;
use ::ibi::Ibi;

/// Longest chain of next editions followed inside one Archive.
pub const MAX_EDITION_CHAIN: usize = 64;

/// MONTARLISTADEURL's list, and the lines for the web server's error log its making
/// wrote (an item that does not load, a chain of editions that loops…).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlList {
    pub pairs: PairList,
    pub log: Vec<String>,
}

/// What a urlRequest says about the client and the wanted resource (Table 8.9).
#[derive(Debug, Clone, Default)]
pub struct UrlRequest {
    /// First IP of `clientinformation.ipaddress`.
    pub client: Option<IpAddr>,
    /// `parsedibiurl.filepath`, as bytes (file names may be Latin-1).
    pub filepath: Option<Vec<u8>>,
    pub verbs: VerbList,
}

/// Where following a relation from an item ends ([`Archive::follow`]).
enum Followed {
    /// The node the whole relation leads to, and whether the oai_dc format was asked.
    Reached(Node, bool),
    /// An item this Archive does not hold, reached after `walked` steps with more of
    /// the relation to go.
    Left { walked: usize, node: Node },
}

impl Archive {
    /// MONTARRESPOSTA (Algorithm 1) over a decoded query string, at POSIX second `now`;
    /// the answer carries every line for the log its making wrote.
    pub fn respond(&self, query: &Query, now: i64) -> Answer {
        let subject = match query.get_str("servicesubject") {
            Ok(s) => s,
            Err(e) => return Answer::error(400, "malformed query string", e.to_string()),
        };
        let mut answer = match subject {
            None if crate::oai::is_oai(query) => crate::oai::answer(self, query, now),
            None => Answer::pairs(&self.identity()),
            Some("inclusionConfirmationRequest") => Answer::text(200, "confirmation yes"),
            Some("acknowledgment") => self.acknowledge(query, now),
            Some("urlRequest") => self.url_request(query, now),
            Some(other) => {
                let shown: String = other.chars().take(64).collect();
                Answer::error(
                    400,
                    "unknown servicesubject",
                    format!("unknown servicesubject {shown:?}"),
                )
            }
        };
        answer.log.extend(self.take_log());
        answer
    }

    /// The Archive's identity pairs (lines 6–10 of Algorithm 2).
    pub fn identity(&self) -> PairList {
        let mut p = PairList::new();
        p.push_word("archiveaddress", self.config.archiveaddress.as_bytes());
        p.push("ibi.archiveservice", forms_as_written(&self.config.service));
        p.push(
            "ibi.platformsoftware",
            self.config
                .platformsoftware
                .as_ref()
                .map_or(Value::words(Vec::<Vec<u8>>::new()), forms_as_written),
        );
        p
    }

    fn url_request(&self, query: &Query, now: i64) -> Answer {
        let ibi = match query.get_str("parsedibiurl.ibi") {
            Ok(Some(s)) => s,
            Ok(None) => {
                return Answer::error(
                    400,
                    "missing parsedibiurl.ibi",
                    "urlRequest without parsedibiurl.ibi".into(),
                )
            }
            Err(e) => return Answer::error(400, "malformed query string", e.to_string()),
        };
        let mut log = Vec::new();
        let ibi = match Ibi::parse(ibi) {
            Ok(ibi) => ibi,
            Err(e) => {
                log.push(format!("urlRequest for a malformed IBI: {e}"));
                return Answer {
                    log,
                    ..Answer::text(200, "")
                };
            }
        };
        let verbs = match query.get_str("parsedibiurl.verblist") {
            Ok(None) => VerbList::default(),
            Ok(Some(v)) => match VerbList::parse(v) {
                Ok(v) => v,
                Err(e) => {
                    // The verb list is the client's: cut its echo in the log to 300 bytes,
                    // as other echoes are cut (a 16 KiB verb list made a 16 KiB log line).
                    let line = format!("urlRequest with a bad verb list: {e}");
                    log.push(::ibi::text::cut(&line, 300).into_owned());
                    return Answer {
                        log,
                        ..Answer::text(200, "")
                    };
                }
            },
            Err(e) => return Answer::error(400, "malformed query string", e.to_string()),
        };
        let client = query
            .get("clientinformation.ipaddress")
            .and_then(|v| std::str::from_utf8(v).ok())
            .and_then(|v| v.split([' ', ',']).find(|s| !s.is_empty()))
            .and_then(|ip| ip.parse().ok());
        let filepath = query
            .get("parsedibiurl.filepath")
            .filter(|f| !f.is_empty())
            .map(<[u8]>::to_vec);
        let req = UrlRequest {
            client,
            filepath,
            verbs,
        };
        let list = self.list(&ibi, Some(&req), now);
        if self.store.unavailable() {
            // col/ is there but could not be opened: not an absence. (The store's line in
            // the log says why.)
            let mut a = Answer::error(503, "archive unavailable", String::new());
            a.log = log;
            return a;
        }
        Answer {
            log,
            ..Answer::pairs(&list)
        }
    }

    /// MONTARLISTADEURL for `ibi`, filtered for `req` (FILTRARLISTADEURL), or the whole
    /// list over the Archive's relation subset when `req` is `None` (Example 9.2); with
    /// the lines for the log its making wrote.
    pub fn url_list(&self, ibi: &Ibi, req: Option<&UrlRequest>, now: i64) -> UrlList {
        let pairs = self.list(ibi, req, now);
        UrlList {
            pairs,
            log: self.take_log(),
        }
    }

    /// [`Archive::url_list`]'s pairs; the lines for the log stay in the Archive's.
    fn list(&self, ibi: &Ibi, req: Option<&UrlRequest>, now: i64) -> PairList {
        let mut out = PairList::new();
        let Some(item) = self.item(ibi) else {
            return out;
        };
        out.extend(self.identity());
        let start = Node::Local(item.clone(), Forms::of_item(&item));
        out.push("ibi", start.forms().value());
        if item.state == State::Deleted {
            out.push_word("state", State::Deleted.as_str());
            out.push_word("timestamp", iso8601(self.timestamp(&item)));
            return out;
        }
        let default_req = UrlRequest::default();
        let ctx = req.unwrap_or(&default_req);
        let relations = match req {
            None => self.subset_for(&item),
            Some(r) => self.relations_asked(&start, r.verbs.relation()),
        };
        let wants_next = req.is_none_or(|r| r.verbs.relation().involves_last_edition());
        if wants_next {
            if let Some(next) = &item.nextedition {
                out.push("ibi.nextedition", self.reference(next).forms().value());
            }
        }
        // Each URL with the item it serves: the key binds the two.
        let mut urls: Vec<(String, Vec<u8>)> = Vec::new();
        for relation in &relations {
            let (node, oai_dc) = match self.follow(&start, relation) {
                None => continue,
                Some(Followed::Left { walked, node }) => {
                    // Kept in another Archive before the relation's end: named, for the
                    // resolver to ask every Archive for it with the rest of the relation.
                    let way = Relation::from_steps(relation.steps()[..walked].to_vec())
                        .expect("a prefix of a relation in the grammar is in it");
                    let name = way.pair_name("ibi");
                    if out.get(&name).is_none() {
                        out.push(name, node.forms().value());
                    }
                    continue;
                }
                Some(Followed::Reached(node, oai_dc)) => (node, oai_dc),
            };
            let name = relation.pair_name("ibi");
            if !relation.steps().is_empty() && out.get(&name).is_none() {
                out.push(name, node.forms().value());
            }
            if let Some(target) = self.url_of(&node, oai_dc, ctx) {
                out.push_word(
                    relation.pair_name("contenttype"),
                    target.contenttype.as_str(),
                );
                out.push_word(relation.pair_name("state"), target.item.state.as_str());
                out.push_word(
                    relation.pair_name("timestamp"),
                    iso8601(self.timestamp(&target.item)),
                );
                out.push_word(relation.pair_name("url"), target.url.clone());
                urls.push((target.item.rep.canonical().to_string(), target.url));
            }
        }
        if !urls.is_empty() {
            urls.sort();
            urls.dedup();
            let keys = self.url_keys();
            let refs: Vec<(&str, &[u8])> = urls
                .iter()
                .map(|(item, url)| (item.as_str(), url.as_slice()))
                .collect();
            out.push_word("urlkey", keys.issue(now, &refs));
        }
        out
    }

    /// The relation subset used for an unfiltered list.
    fn subset_for(&self, item: &Item) -> Vec<Relation> {
        match &self.config.relations {
            Some(list) => list.clone(),
            None => Relation::all_over(&languages_of(item)),
        }
    }

    /// The concrete relations a verb list asks for: itself, or for a bare translation,
    /// every language variant at that place — those of the Archive's subset when it
    /// names one (as filtering the full list would keep them), else every language known
    /// at that place.
    fn relations_asked(&self, start: &Node, asked: &Relation) -> Vec<Relation> {
        let Some(i) = asked.bare_translation_at() else {
            return match &self.config.relations {
                Some(subset) if !subset.contains(asked) => Vec::new(),
                _ => vec![asked.clone()],
            };
        };
        if let Some(subset) = &self.config.relations {
            return subset
                .iter()
                .filter(|r| {
                    r.steps().len() == asked.steps().len()
                        && matches!(r.steps()[i], Step::Translation(_))
                        && asked.with_step(i, r.steps()[i].clone()) == **r
                })
                .cloned()
                .collect();
        }
        let mut out = vec![asked.clone()];
        let before = Relation::from_steps(asked.steps()[..i].to_vec()).unwrap_or_default();
        if let Some(Followed::Reached(Node::Local(at, _), _)) = self.follow(start, &before) {
            for lang in languages_of(&at) {
                out.push(asked.with_step(i, Step::Translation(Some(lang))));
            }
        }
        out
    }

    /// The node a reference written in an item.toml leads to.
    fn reference(&self, ibi: &Ibi) -> Node {
        match self.item(ibi) {
            Some(item) => {
                let forms = Forms::as_referenced(ibi, &item);
                Node::Local(item, forms)
            }
            None => Node::Foreign(ibi.clone()),
        }
    }

    /// Follows `relation` from `start`: where it ends (and whether the oai_dc format was
    /// asked), or the item held elsewhere it reaches before its end; `None` when it leads
    /// nowhere known here.
    fn follow(&self, start: &Node, relation: &Relation) -> Option<Followed> {
        let mut node = start.clone();
        let mut oai_dc = false;
        let steps = relation.steps();
        for (at, step) in steps.iter().enumerate() {
            if let Node::Foreign(_) = node {
                // Only a translation without a language passes an item held elsewhere
                // (which language it is in, this Archive does not know).
                if steps[at..].iter().any(|s| *s != Step::Translation(None)) {
                    return Some(Followed::Left { walked: at, node });
                }
            }
            node = match step {
                Step::LastEdition => self.last_edition(&node)?,
                // §9.2 (after Table 9.5): the unparametrised `.translation` is for items
                // stored without a language; one in a language answers as
                // `.translation(<that language>)` instead, so that a resolver picking by
                // the reader's languages never takes it for a translation.
                Step::Translation(None) => match &node {
                    Node::Local(item, _) if item.language.is_some() => return None,
                    _ => node,
                },
                Step::Translation(Some(lang)) => self.translation(&node, lang)?,
                Step::Metadata { oai_dc: format } => {
                    oai_dc = *format;
                    let Node::Local(item, _) = &node else {
                        return None;
                    };
                    match &item.metadata {
                        Some(ibi) => self.reference(ibi),
                        // A metadata item is its own metadata: a resolver that found it
                        // through another Archive's item asks it for its formats.
                        None if item.contenttype == ContentType::Metadata => node.clone(),
                        None => return None,
                    }
                }
            };
        }
        Some(Followed::Reached(node, oai_dc))
    }

    /// The last edition: the node itself without a next edition; the end of the chain
    /// when it stays in this Archive; unknown here when it leaves (the resolver then
    /// follows `ibi.nextedition`, Example 10.2).
    fn last_edition(&self, node: &Node) -> Option<Node> {
        let Node::Local(item, _) = node else {
            return None;
        };
        let mut current = node.clone();
        let mut next = item.nextedition.clone();
        let mut seen = vec![item.dir.clone()];
        while let Some(ibi) = next {
            let n = self.reference(&ibi);
            let Node::Local(edition, _) = &n else {
                return None;
            };
            if seen.contains(&edition.dir) || seen.len() > MAX_EDITION_CHAIN {
                self.warn(format!(
                    "{}: chain of next editions loops or exceeds {MAX_EDITION_CHAIN}; last edition unknown",
                    item.dir.join("item.toml").display()
                ));
                return None;
            }
            seen.push(edition.dir.clone());
            next = edition.nextedition.clone();
            current = n;
        }
        Some(current)
    }

    /// The translation in `lang`: an exact language[-COUNTRY] match first (the item's
    /// own language counts), then the same language with another or no country.
    fn translation(&self, node: &Node, lang: &Lang) -> Option<Node> {
        let Node::Local(item, _) = node else {
            return None;
        };
        if let Some((_, ibi)) = item.translations.iter().find(|(l, _)| l == lang) {
            return Some(self.reference(ibi));
        }
        if item.language.as_ref() == Some(lang) {
            return Some(node.clone());
        }
        if let Some((_, ibi)) = item
            .translations
            .iter()
            .find(|(l, _)| l.same_language(lang))
        {
            return Some(self.reference(ibi));
        }
        if item
            .language
            .as_ref()
            .is_some_and(|l| l.same_language(lang))
        {
            return Some(node.clone());
        }
        None
    }

    /// CRIARPARURL for a node: the URL handed out for it, or none when the Archive
    /// cannot give one that answers.
    fn url_of(&self, node: &Node, oai_dc: bool, req: &UrlRequest) -> Option<Target> {
        let Node::Local(item, _) = node else {
            return None;
        };
        match item.access(&self.config, req.client) {
            Access::Deleted => return None,
            Access::Granted => {}
            Access::Restricted => {
                // §9.2: an Archive may point clients outside its licence at the metadata.
                let Node::Local(meta, _) = self.reference(item.metadata.as_ref()?) else {
                    return None;
                };
                // The metadata must be something this client may have: an item that
                // names itself (or another restricted item) as its metadata would
                // otherwise hand out what the restriction keeps out.
                if meta.access(&self.config, req.client) != Access::Granted {
                    return None;
                }
                let url = self.data_url(&meta)?;
                return Some(Target {
                    url,
                    contenttype: ContentType::Metadata,
                    item: meta,
                });
            }
        }
        let url = if req.verbs.wants_file_list() {
            self.file_list_url(item)
        } else if let Some(path) = &req.filepath {
            self.doc_url(item, strip_leading_slash(path))?
        } else if oai_dc {
            self.named_file_url(item, item.formats.get("oai_dc")?.as_bytes())?
        } else {
            self.data_url(item)?
        };
        Some(Target {
            url,
            contenttype: item.contenttype,
            item: item.clone(),
        })
    }

    /// Counts one access for a valid acknowledgment; the answer is the same whatever
    /// happens (Algorithm 1, line 20).
    fn acknowledge(&self, query: &Query, now: i64) -> Answer {
        let mut p = PairList::new();
        p.push("notice", Value::words(["acknowledgment", "received"]));
        let mut answer = Answer::pairs(&p);
        if let Err(line) = self.count_access(query, now) {
            answer.log.push(line);
        }
        answer
    }

    fn count_access(&self, query: &Query, now: i64) -> Result<(), String> {
        let key = query.get_str("urlkey").ok().flatten().unwrap_or("");
        let url = query.get("url").unwrap_or(b"");
        if key.is_empty() || url.is_empty() {
            return Err("acknowledgment not counted: no urlkey or no url".into());
        }
        let mut shown = String::new();
        ::ibi::escape::push_word(&mut shown, &url[..url.len().min(200)]);
        let keys = self.url_keys();
        if self.keys_ephemeral.get() {
            // The secret is unreadable (var/ broken): no key can be checked, and the one
            // log line of url_keys says so ("...; acknowledgments cannot be counted"); a
            // second line calling the key forged would mislead.
            return Ok(());
        }
        // The item is the one the key was issued for: among the item the url points into
        // and the one the acknowledgment names (its `ibi` pair, Table 8.11), the key
        // says which; naming another item does not credit it.
        let mut items: Vec<Rc<Item>> = Vec::with_capacity(2);
        for item in [self.item_of_url(url), self.item_of_ack(query)]
            .into_iter()
            .flatten()
        {
            if !items.iter().any(|i| i.rep == item.rep) {
                items.push(item);
            }
        }
        let reps: Vec<&str> = items.iter().map(|i| i.rep.canonical()).collect();
        let issued = keys.verify(key, &reps, url, now).map_err(|e| match e {
            KeyError::NotIssuedForUrl if reps.is_empty() => format!(
                "acknowledgment not counted: its url and ibi name no item of this Archive ({shown})"
            ),
            e => format!("acknowledgment not counted: {e} ({shown})"),
        })?;
        let contenttype = match query.get_str("contenttype") {
            Ok(Some(c @ ("Data" | "Metadata"))) => c,
            _ => "-",
        };
        let record = acklog::Record {
            time: now,
            // Counted once in its canonical spelling: padded or reordered variants of one
            // issued key are the same key.
            key: issued.canonical.clone(),
            item: items[issued.item].rep.as_str().to_string(),
            contenttype: contenttype.to_string(),
            url: shown.clone(),
        };
        let durability =
            acklog::Durability::by_wall_clock(self.config.acknowledgments.sync_interval);
        match acklog::record_once(&self.var(), &record, issued.issued, durability) {
            Ok(acklog::Outcome::Counted) => Ok(()),
            Ok(acklog::Outcome::CountedUnsynced(e)) => Err(format!(
                "acknowledgment counted, but {} could not be synced to stable storage: {e}",
                acklog::log_path(&self.var()).display()
            )),
            Ok(acklog::Outcome::AlreadyCounted) => Err(format!(
                "acknowledgment not counted: urlkey {} was already counted",
                issued.canonical
            )),
            Err(e) => Err(format!(
                "acknowledgment not counted: cannot write {}: {e}",
                acklog::log_path(&self.var()).display()
            )),
        }
    }

    /// The local item a URL handed out by this Archive points into (a file of its doc/
    /// or its file-list page). Only the rep part is decoded: the file name after it may
    /// be Latin-1.
    fn item_of_url(&self, url: &[u8]) -> Option<Rc<Item>> {
        let rest = url.strip_prefix(self.config.baseurl.as_bytes())?;
        let (rep, _) = match layout::split_col_url_path(rest) {
            Some(split) => split,
            None => {
                let service = format!("/{}", self.config.service);
                let path_info = rest.strip_prefix(service.as_bytes())?;
                layout::split_rep(::ibi::persistent::split_file_list_path(path_info)?)?
            }
        };
        let rep: Vec<u8> = percent_encoding::percent_decode(rep).collect();
        let rep = ::ibi::Rep::parse(std::str::from_utf8(&rep).ok()?).ok()?;
        self.item(&Ibi::Rep(rep))
    }

    /// The local item an acknowledgment names in its `ibi` pair (`rep X`, `ibip Y` or
    /// both).
    fn item_of_ack(&self, query: &Query) -> Option<Rc<Item>> {
        let forms = query.get_str("ibi").ok().flatten()?;
        let words: Vec<&str> = forms.split(' ').filter(|w| !w.is_empty()).collect();
        let named = match words.as_slice() {
            ["rep", ibi, ..] | ["ibip", ibi] => ibi,
            _ => return None,
        };
        self.item(&Ibi::parse(named).ok()?)
    }
}

/// Where a URL points and what it serves.
struct Target {
    url: Vec<u8>,
    contenttype: ContentType,
    item: Rc<Item>,
}

/// An item reached while following a relation: held here (with the forms its IBI is
/// given in) or known only by a reference to another Archive.
#[derive(Clone)]
enum Node {
    Local(Rc<Item>, Forms),
    Foreign(Ibi),
}

impl Node {
    fn forms(&self) -> Forms {
        match self {
            Node::Local(_, f) => f.clone(),
            Node::Foreign(ibi) => Forms::written(ibi),
        }
    }
}

/// Rule `formas-de-ibi` of Table 9.4: `rep X`, `ibip Y` or both.
#[derive(Clone, Debug)]
struct Forms {
    rep: Option<String>,
    ibip: Option<String>,
}

impl Forms {
    /// Both forms of an item reached directly, spelled as stored.
    fn of_item(item: &Item) -> Forms {
        Forms {
            rep: Some(item.rep.as_str().to_string()),
            ibip: item.ibip.as_ref().map(|p| p.as_str().to_string()),
        }
    }

    /// The form a reference was written in, spelled as the item is stored.
    fn as_referenced(ibi: &Ibi, item: &Item) -> Forms {
        match ibi {
            Ibi::Rep(_) => Forms {
                rep: Some(item.rep.as_str().to_string()),
                ibip: None,
            },
            Ibi::Ibip(p) => Forms {
                rep: None,
                ibip: Some(
                    item.ibip
                        .as_ref()
                        .map_or(p.as_str(), |s| s.as_str())
                        .to_string(),
                ),
            },
        }
    }

    fn written(ibi: &Ibi) -> Forms {
        match ibi {
            Ibi::Rep(r) => Forms {
                rep: Some(r.as_str().to_string()),
                ibip: None,
            },
            Ibi::Ibip(p) => Forms {
                rep: None,
                ibip: Some(p.as_str().to_string()),
            },
        }
    }

    fn value(&self) -> Value {
        let mut words: Vec<&str> = Vec::with_capacity(4);
        if let Some(r) = &self.rep {
            words.extend(["rep", r]);
        }
        if let Some(p) = &self.ibip {
            words.extend(["ibip", p]);
        }
        Value::words(words)
    }
}

fn forms_as_written(ibi: &Ibi) -> Value {
    Forms::written(ibi).value()
}

/// Languages an item is known in: its translations and its own.
fn languages_of(item: &Item) -> Vec<Lang> {
    let mut langs: Vec<Lang> = item.translations.iter().map(|(l, _)| l.clone()).collect();
    if let Some(own) = &item.language {
        langs.push(own.clone());
    }
    langs.sort();
    langs.dedup();
    langs
}

fn strip_leading_slash(path: &[u8]) -> &[u8] {
    path.strip_prefix(b"/").unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    /// An Archive in a temporary directory holding the items `(rep, item.toml)`.
    fn archive_of(items: &[(&str, &str)]) -> (tempfile::TempDir, Archive) {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(
            t.path().join("archive.toml"),
            "archiveaddress = \"a.example\"\narchiveserviceibi = \"a.b/c/2020/01.01.00.00\"\n",
        )
        .unwrap();
        for (rep, toml) in items {
            let dir = t.path().join("col").join(rep);
            std::fs::create_dir_all(dir.join("doc")).unwrap();
            std::fs::write(dir.join("item.toml"), toml).unwrap();
        }
        let config = Config::load(t.path()).unwrap();
        let archive = Archive::new(t.path(), config);
        (t, archive)
    }

    #[test]
    fn a_metadata_item_is_its_own_metadata_and_gives_its_formats() {
        let (t, archive) = archive_of(&[
            (
                "a.b/c/2020/01.02.03.09",
                "state = \"Original\"\ncontenttype = \"Metadata\"\ntarget = \"m.html\"\n\n[formats]\noai_dc = \"oai_dc.xml\"\n",
            ),
            (
                "a.b/c/2020/01.02.03.00",
                "state = \"Original\"\ntarget = \"d.pdf\"\nmetadata = \"x.y/z/2020/01.02.03.09\"\n",
            ),
        ]);
        let doc = t.path().join("col/a.b/c/2020/01.02.03.09/doc");
        for file in ["m.html", "oai_dc.xml"] {
            std::fs::write(doc.join(file), "m").unwrap();
        }
        let asked = |ibi: &str, verbs: &str| {
            let req = UrlRequest {
                client: None,
                filepath: None,
                verbs: VerbList::parse(verbs).unwrap(),
            };
            let list = archive.url_list(&Ibi::parse(ibi).unwrap(), Some(&req), 1_800_000_000);
            let names: Vec<String> = list.pairs.iter().map(|(n, _)| n.to_string()).collect();
            let url = list
                .pairs
                .iter()
                .find(|(n, _)| n.starts_with("url") && *n != "urlkey")
                .map(|(n, v)| format!("{n} {}", String::from_utf8_lossy(&v.as_words()[0])));
            (names, url)
        };
        // Asked for its metadata in oai_dc, the metadata item answers its own format.
        assert_eq!(
            asked("a.b/c/2020/01.02.03.09", "GetMetadata(oai_dc)")
                .1
                .as_deref(),
            Some("url.metadata(oai_dc) http://a.example/col/a.b/c/2020/01.02.03.09/doc/oai_dc.xml")
        );
        assert_eq!(
            asked("a.b/c/2020/01.02.03.09", "GetMetadata").1.as_deref(),
            Some("url.metadata http://a.example/col/a.b/c/2020/01.02.03.09/doc/m.html")
        );
        // A data item whose metadata is elsewhere names it, without a URL.
        let (names, url) = asked("a.b/c/2020/01.02.03.00", "GetMetadata(oai_dc)");
        assert!(
            names.contains(&"ibi.metadata(oai_dc)".to_string()),
            "{names:?}"
        );
        assert_eq!(url, None);
    }

    #[test]
    fn an_item_held_elsewhere_before_the_relations_end_is_named() {
        let (_t, archive) = archive_of(&[(
            "a.b/c/2020/01.02.03.00",
            "state = \"Original\"\nurl = \"http://x.example/\"\nlanguage = \"en\"\nmetadata = \"x.y/z/2020/01.02.03.09\"\nnextedition = \"x.y/z/2020/01.02.03.01\"\n\n[translations]\nes = \"x.y/z/2020/01.02.03.03\"\n",
        )]);
        let names = |verbs: &str| -> Vec<String> {
            let req = UrlRequest {
                client: None,
                filepath: None,
                verbs: VerbList::parse(verbs).unwrap(),
            };
            let ibi = Ibi::parse("a.b/c/2020/01.02.03.00").unwrap();
            let list = archive.url_list(&ibi, Some(&req), 1_800_000_000);
            list.pairs
                .iter()
                .filter(|(n, _)| {
                    n.starts_with("ibi.")
                        && !n.starts_with("ibi.archiveservice")
                        && !n.starts_with("ibi.platform")
                })
                .map(|(n, v)| format!("{n} {}", String::from_utf8_lossy(&v.as_words().join(&b' '))))
                .collect()
        };
        // The translation, then its metadata: the translation is named.
        assert_eq!(
            names("GetTranslation(es) GetMetadata(oai_dc)"),
            ["ibi.translation(es) rep x.y/z/2020/01.02.03.03"]
        );
        // The metadata, then its translation; the translation, then its last edition.
        assert_eq!(
            names("GetMetadata GetTranslation(es)"),
            ["ibi.metadata rep x.y/z/2020/01.02.03.09"]
        );
        assert_eq!(
            names("GetTranslation(es) GetLastEdition"),
            [
                "ibi.nextedition rep x.y/z/2020/01.02.03.01",
                "ibi.translation(es) rep x.y/z/2020/01.02.03.03"
            ]
        );
        // The whole relation held elsewhere, as before.
        assert_eq!(
            names("GetMetadata(oai_dc)"),
            ["ibi.metadata(oai_dc) rep x.y/z/2020/01.02.03.09"]
        );
        // A bare translation, then metadata: each language's translation, named once.
        assert_eq!(
            names("GetTranslation GetMetadata"),
            [
                "ibi.translation(en).metadata rep x.y/z/2020/01.02.03.09",
                "ibi.translation(es) rep x.y/z/2020/01.02.03.03",
            ]
        );
    }

    #[test]
    fn a_list_carries_the_lines_its_making_wrote() {
        let (_t, archive) = archive_of(&[
            (
                "a.b/c/2020/01.02.03.04",
                "state = \"Original\"\nurl = \"http://x.example/\"\nnextedition = \"a.b/c/2020/01.02.03.05\"\n",
            ),
            ("a.b/c/2020/01.02.03.05", "state = \"Gone\"\n"),
        ]);
        let head = Ibi::parse("a.b/c/2020/01.02.03.04").unwrap();
        let list = archive.url_list(&head, None, 1_800_000_000);
        assert!(!list.pairs.is_empty());
        assert_eq!(list.log.len(), 1, "{:?}", list.log);
        assert!(
            list.log[0].contains("01.02.03.05/item.toml")
                && list.log[0].ends_with("; item treated as absent"),
            "{:?}",
            list.log
        );
        // Handed out with that list: the next one does not repeat it.
        assert_eq!(
            archive.url_list(&head, None, 1_800_000_000).log,
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_spellings_of_one_rep_load_its_item_once() {
        let (_t, archive) = archive_of(&[(
            "a.b/c/2020/01.02.03.04",
            "state = \"Original\"\nurl = \"http://x.example/\"\n",
        )]);
        // Equal reps (§6 of the generation standard: case, `@` or `.` before the port,
        // port 80): one item, looked up once.
        let spellings = [
            "a.b/c/2020/01.02.03.04",
            "A.B/C@80/2020/01.02.03.04",
            "a.B/c.80/2020/01.02.03.04",
        ];
        let items: Vec<Rc<Item>> = spellings
            .iter()
            .map(|s| archive.item(&Ibi::parse(s).unwrap()).unwrap())
            .collect();
        assert!(items.iter().all(|i| Rc::ptr_eq(i, &items[0])));
        assert_eq!(archive.work().items_looked_up, 1);
    }
}
