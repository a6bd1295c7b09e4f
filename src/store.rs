//! The `col/` tree: finding an item by either form of its IBI without any index.
//!
//! A rep names its own directory, `col/<subdomain>/<word[.port]>/<year>/<mm.dd…>`; the
//! first two levels are compared as the standard compares them (case, `@`/`.`, port 80),
//! so only those two small levels are ever listed. An IBIp's suffix decodes to the date
//! that is also its rep's suffix (generation standard, Algorithms 2 and 6), so an IBIp is
//! found by looking for `col/*/*/<year>/<mm.dd…>` under each prefix and keeping the item
//! whose item.toml records that ibip. The names of col/'s two levels come from
//! `var/col-prefixes` for each directory that keeps the stamp remembered there, and from
//! a listing for any other (see `col_prefixes`). Neither lookup depends on the number of items,
//! and an item dropped into `col/` answers at once.

use std::cell::{Cell, OnceCell};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::col_prefixes::{FileState, Listing, ListingText, Stamp, Subdomain};
use crate::item::Item;
use crate::layout::{Col, Refusal};
use ::ibi::time::Clock;
use ::ibi::{Ibi, Ibip, Rep};

/// Read access to an Archive's `col/` tree.
pub struct Store {
    root: PathBuf,
    /// `col/`, opened on first need (`None`: it cannot be opened, so nothing is here).
    col: OnceCell<Option<Col>>,
    /// `var/`, when the listings of col/'s two top levels remembered in
    /// `var/col-prefixes` are believed.
    var: Option<PathBuf>,
    /// `var/col-prefixes`, read on first need (at most once per request).
    memo: OnceCell<Option<ListingText>>,
    /// The subdomains in col/, each with its `word[.port]` prefixes once looked at.
    subdomains: OnceCell<Vec<(String, OnceCell<Vec<String>>)>>,
    /// Whether col/ exists but could not be opened.
    unavailable: Cell<bool>,
}

/// Lines for the web server's error log (or an administrator's notes), each kept once:
/// the lookups of one request can meet the same fault (a bare GetTranslation before
/// GetLastEdition follows one looping chain per language), and it should be read once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogLines(Vec<String>);

impl LogLines {
    /// Adds `line`, unless it is there already.
    pub fn push(&mut self, line: String) {
        if !self.0.contains(&line) {
            self.0.push(line);
        }
    }

    /// The lines, in the order they were first added.
    pub fn lines(&self) -> &[String] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn into_lines(self) -> Vec<String> {
        self.0
    }
}

impl Extend<String> for LogLines {
    fn extend<I: IntoIterator<Item = String>>(&mut self, lines: I) {
        for line in lines {
            self.push(line);
        }
    }
}

impl IntoIterator for LogLines {
    type Item = String;
    type IntoIter = std::vec::IntoIter<String>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// What a lookup found, and what went wrong on the way (a broken item.toml, an item
/// reached through a symbolic link, col/ that cannot be opened), one line each for the
/// web server's error log.
#[derive(Debug)]
#[must_use]
pub struct Lookup {
    pub item: Option<Item>,
    pub log: LogLines,
}

impl Lookup {
    /// The item found, its lines added to `log`.
    pub fn into_item(self, log: &mut LogLines) -> Option<Item> {
        log.extend(self.log);
        self.item
    }
}

impl Store {
    /// The store of the Archive at `root` (its items are under `root/col`).
    pub fn new(root: &Path) -> Store {
        Store {
            root: root.to_path_buf(),
            col: OnceCell::new(),
            var: None,
            memo: OnceCell::new(),
            subdomains: OnceCell::new(),
            unavailable: Cell::new(false),
        }
    }

    /// The store of the Archive at `root` that believes the listings of col/'s two top
    /// levels remembered in `root/var/col-prefixes` while the directories they came from
    /// are unchanged, and lists the others (see `col_prefixes`). It never writes: the service
    /// answers without touching the disk.
    pub fn with_memo(root: &Path) -> Store {
        Store {
            var: Some(root.join("var")),
            ..Store::new(root)
        }
    }

    /// Brings `root/var/col-prefixes` up to date for the service (`ibi-archive
    /// prefixes`): lists what changed and rewrites the file when every directory in it
    /// has settled by `clock`, waiting for that on `clock`, a second at a time, up to
    /// `wait`. The prefixes, and what became of the file.
    pub fn remember_prefixes(
        root: &Path,
        wait: Duration,
        clock: &dyn Clock,
    ) -> (Vec<(String, Vec<String>)>, FileState) {
        let mut waited = Duration::ZERO;
        loop {
            let (prefixes, state) =
                Store::new(root).relist_and_remember(&root.join("var"), clock.now());
            if state != FileState::Unsettled || waited >= wait {
                return (prefixes, state);
            }
            clock.sleep(Duration::from_secs(1));
            waited += Duration::from_secs(1);
        }
    }

    /// `col/`, opened (see `layout`); `None` when the Archive has no col/, or when it
    /// cannot be opened (out of descriptors, say: then [`Store::unavailable`] says so,
    /// and the lookup that tried has one line in its log).
    fn col(&self, log: &mut LogLines) -> Option<&Col> {
        self.col
            .get_or_init(|| match Col::open(&self.root) {
                Ok(col) => Some(col),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => {
                    log.push(format!("{}/col: {e}", self.root.display()));
                    self.unavailable.set(true);
                    None
                }
            })
            .as_ref()
    }

    /// Whether col/ exists but could not be opened: "not here" would then be a lie.
    pub fn unavailable(&self) -> bool {
        self.unavailable.get()
    }

    /// Whether col/ has a directory for the item `rep`, under any spelling a lookup tries
    /// ([`Store::find`]), whether or not it loads: a lookup that found nothing there found
    /// an item that should be here (an item.toml that does not load, a link refused), not
    /// one of another Archive. Asked only after a lookup failed: the names of col/ it reads
    /// are those the lookup read.
    pub fn has_item_directory(&self, rep: &Rep) -> bool {
        let mut log = LogLines::default();
        let Some(col) = self.col(&mut log) else {
            return false;
        };
        if col.has(rep.as_str()) {
            return true;
        }
        for entry in self.subdomains(&mut log) {
            if !entry.0.eq_ignore_ascii_case(rep.subdomain()) {
                continue;
            }
            for wp in self.prefixes_in(entry, &mut log) {
                if rep.has_word_port(wp)
                    && col.has(&format!(
                        "{}/{wp}/{}/{}",
                        entry.0,
                        rep.year(),
                        rep.day_time()
                    ))
                {
                    return true;
                }
            }
        }
        false
    }

    /// The item with this IBI, if this Archive holds one that loads, and what went
    /// wrong while looking. (Inlined: the lookup is then built where its caller takes it
    /// apart, not copied, an item being some hundreds of bytes.)
    #[inline]
    pub fn find(&self, ibi: &Ibi) -> Lookup {
        let mut log = LogLines::default();
        let item = match ibi {
            Ibi::Rep(rep) => self.find_rep(rep, &mut log),
            Ibi::Ibip(ibip) => self.find_ibip(ibip, &mut log),
        };
        Lookup { item, log }
    }

    /// The item whose uniform repository name equals `rep` (in the standard's sense).
    fn find_rep(&self, rep: &Rep, log: &mut LogLines) -> Option<Item> {
        if let Some(found) = self.load(rep.as_str(), || Some(rep.clone()), log) {
            return found;
        }
        // Another spelling of the prefix (case, `@`/`.`, port 80): only the subdomains
        // equal to the asked one but for case are looked into, and only the prefixes that
        // spell the asked one are looked for the item, so a rep of another Archive (the
        // usual question) costs the names of col/ (remembered, or one listing).
        for entry in self.subdomains(log) {
            let sub = &entry.0;
            if !sub.eq_ignore_ascii_case(rep.subdomain()) {
                continue;
            }
            for wp in self.prefixes_in(entry, log) {
                if sub == rep.subdomain() && wp == rep.word_port() || !rep.has_word_port(wp) {
                    continue;
                }
                let spelled = format!("{sub}/{wp}/{}/{}", rep.year(), rep.day_time());
                if let Some(found) = self.load(&spelled, || Rep::parse(&spelled).ok(), log) {
                    return found;
                }
            }
        }
        None
    }

    /// The item whose item.toml records this IBIp.
    fn find_ibip(&self, ibip: &Ibip, log: &mut LogLines) -> Option<Item> {
        let suffix = ibip.date().rep_suffix();
        // One buffer for every candidate (a lookup tries one per prefix).
        let mut spelled = String::with_capacity(96);
        for entry in self.subdomains(log) {
            let sub = &entry.0;
            for wp in self.prefixes_in(entry, log) {
                spelled.clear();
                for part in [sub.as_str(), "/", wp, "/", &suffix] {
                    spelled.push_str(part);
                }
                // Most prefixes hold no item at that date: a stat from col/ says so for
                // about half the cost of opening (measured in BENCHMARKS.md).
                if !self.col(log)?.has(&spelled) {
                    continue;
                }
                let found = self.load(&spelled, || Rep::parse(&spelled).ok(), log);
                if let Some(Some(item)) = found {
                    if item.ibip.as_ref() == Some(ibip) {
                        return Some(item);
                    }
                }
            }
        }
        None
    }

    /// The item in `col/<rel>`: `None` when no directory is there, `Some(None)` when one
    /// is but it is not an item that loads (a link on the way, a broken item.toml: one
    /// line in the log). `rep` spells `rel` as a rep (asked only once a directory is
    /// found).
    fn load(
        &self,
        rel: &str,
        rep: impl FnOnce() -> Option<Rep>,
        log: &mut LogLines,
    ) -> Option<Option<Item>> {
        let col = self.col(log)?;
        let dir = match col.item(rel) {
            Ok(dir) => dir,
            Err(Refusal::Absent) => return None,
            Err(Refusal::Link) => {
                log.push(format!(
                    "{}: item directory is reached through a symbolic link; treated as absent",
                    col.path().join(rel).display()
                ));
                return Some(None);
            }
            Err(e) => {
                log.push(format!(
                    "{}: {e}; item treated as absent",
                    col.path().join(rel).display()
                ));
                return Some(None);
            }
        };
        let rep = rep()?;
        match Item::load(&dir, rep) {
            Ok(item) => Some(Some(item)),
            Err(e) => {
                log.push(format!("{e}; item treated as absent"));
                Some(None)
            }
        }
    }

    /// `var/col-prefixes`, when this store believes it and it reads.
    fn memo(&self) -> Option<&ListingText> {
        self.memo
            .get_or_init(|| self.var.as_deref().and_then(ListingText::read))
            .as_ref()
    }

    /// The subdomains in col/, sorted: remembered while col/ keeps its stamp, else
    /// listed. Their prefixes are looked at by `prefixes_in`.
    fn subdomains(&self, log: &mut LogLines) -> &[(String, OnceCell<Vec<String>>)] {
        self.subdomains.get_or_init(|| {
            let Some(col) = self.col(log) else {
                return Vec::new();
            };
            let names = match self.memo() {
                Some(memo) if Stamp::of_col(col) == Some(memo.col) => {
                    memo.subdomains().map(str::to_string).collect()
                }
                _ => col.dir_names(""),
            };
            names.into_iter().map(|n| (n, OnceCell::new())).collect()
        })
    }

    /// The prefixes of a subdomain of `subdomains`, sorted: remembered while its
    /// directory keeps its stamp, else listed.
    fn prefixes_in<'a>(
        &self,
        sub: &'a (String, OnceCell<Vec<String>>),
        log: &mut LogLines,
    ) -> &'a [String] {
        sub.1.get_or_init(|| {
            let Some(col) = self.col(log) else {
                return Vec::new();
            };
            match self.memo().and_then(|m| m.prefixes(&sub.0)) {
                Some((stamp, prefixes)) if Stamp::in_col(col, &sub.0) == Some(stamp) => {
                    prefixes.into_iter().map(str::to_string).collect()
                }
                _ => col.dir_names(&sub.0),
            }
        })
    }

    /// The two top levels of `col/` (each subdomain with its prefixes, sorted), listing
    /// every directory whose stamp is not the one remembered in `var/col-prefixes` (its
    /// stamp taken first); the file is rewritten when some directory was listed and all
    /// have settled at POSIX second `now`. Also what became of the file.
    fn relist_and_remember(&self, var: &Path, now: i64) -> (Vec<(String, Vec<String>)>, FileState) {
        // Why col/ cannot be opened is not logged here: the command says what became of
        // the file.
        let Some(col_dir) = self.col(&mut LogLines::default()) else {
            return (Vec::new(), FileState::Unsettled);
        };
        let col = Stamp::of_col(col_dir);
        let memo = Listing::read(var);
        let mut listed = false;
        let mut known: Vec<Subdomain>;
        let names: Vec<String> = match memo {
            Some(memo) if Some(memo.col) == col => {
                known = memo.subdomains;
                known.iter().map(|s| s.name.clone()).collect()
            }
            memo => {
                listed = true;
                known = memo.map(|m| m.subdomains).unwrap_or_default();
                col_dir.dir_names("")
            }
        };
        let mut settled = col.is_some_and(|s| s.settled(now));
        let mut subdomains = Vec::with_capacity(names.len());
        for name in names {
            let stamp = Stamp::in_col(col_dir, &name);
            settled &= stamp.is_some_and(|s| s.settled(now));
            let remembered = known
                .iter_mut()
                .find(|s| s.name == name && Some(s.stamp) == stamp)
                .map(|s| std::mem::take(&mut s.prefixes));
            let prefixes = remembered.unwrap_or_else(|| {
                listed = true;
                col_dir.dir_names(&name)
            });
            subdomains.push((name, stamp, prefixes));
        }
        if let (Some(col), true) = (col, listed && settled) {
            let memo = Listing {
                col,
                subdomains: subdomains
                    .into_iter()
                    .map(|(name, stamp, prefixes)| Subdomain {
                        name,
                        // Every stamp is there: `settled` needs them all.
                        stamp: stamp.unwrap_or(col),
                        prefixes,
                    })
                    .collect(),
            };
            let state = if memo.write(var) {
                FileState::Held
            } else {
                FileState::Unwritable
            };
            let prefixes = memo
                .subdomains
                .into_iter()
                .map(|s| (s.name, s.prefixes))
                .collect();
            return (prefixes, state);
        }
        let prefixes = subdomains
            .into_iter()
            .map(|(name, _, prefixes)| (name, prefixes))
            .collect();
        let state = match (listed, settled) {
            (false, _) => FileState::Held,
            (true, false) => FileState::Unsettled,
            (true, true) => FileState::Unwritable,
        };
        (prefixes, state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_keeps_each_line_once_in_the_order_met() {
        let mut log = LogLines::default();
        log.push("b".into());
        log.push("a".into());
        log.extend(["b".to_string(), "c".to_string(), "a".to_string()]);
        assert_eq!(log.lines(), ["b", "a", "c"]);
        assert_eq!(log.into_iter().collect::<Vec<_>>(), ["b", "a", "c"]);
    }

    #[test]
    fn each_lookup_carries_what_went_wrong_on_its_way() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("col/a.b/c/2020/01.02.03.04");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("item.toml"), "state = \"Gone\"\n").unwrap();
        let store = Store::new(t.path());
        let broken = Ibi::parse("a.b/c/2020/01.02.03.04").unwrap();
        let found = store.find(&broken);
        assert!(found.item.is_none());
        assert_eq!(found.log.lines().len(), 1, "{:?}", found.log);
        assert!(
            found.log.lines()[0].ends_with("; item treated as absent"),
            "{:?}",
            found.log
        );
        // Nothing is left behind for a later lookup: each says what it met, and lines
        // gathered from several are kept once.
        let mut log = LogLines::default();
        assert!(store.find(&broken).into_item(&mut log).is_none());
        assert!(store.find(&broken).into_item(&mut log).is_none());
        assert_eq!(log, found.log);
        let absent = store.find(&Ibi::parse("a.b/c/2020/01.02.03.05").unwrap());
        assert!(absent.item.is_none() && absent.log.is_empty());
    }
}
