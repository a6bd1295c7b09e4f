//! The `col/` tree: finding an item by either form of its IBI without any index.
//!
//! A rep names its own directory, `col/<subdomain>/<word[.port]>/<year>/<mm.dd…>`; the
//! first two levels are compared as the standard compares them (case, `@`/`.`, port 80),
//! so only those two small levels are ever listed. An IBIp's suffix decodes to the date
//! that is also its rep's suffix (generation standard, Algorithms 2 and 6), so an IBIp is
//! found by looking for `col/*/*/<year>/<mm.dd…>` under each prefix and keeping the item
//! whose item.toml records that ibip. The names of col/'s two levels come from
//! `var/col-prefixes` for each directory that keeps the stamp remembered there, and from
//! a listing for any other (see `colmemo`). Neither lookup depends on the number of items,
//! and an item dropped into `col/` answers at once.

use std::cell::{OnceCell, RefCell};
use std::path::{Path, PathBuf};

use crate::colmemo::{Memo, MemoState, Remembered, Stamp, Subdomain};
use crate::ibi::{Ibi, Ibip, Rep};
use crate::item::Item;

/// Read access to an Archive's `col/` tree.
pub struct Store {
    col: PathBuf,
    /// `var/`, when the listings of col/'s two top levels remembered in
    /// `var/col-prefixes` are believed.
    var: Option<PathBuf>,
    /// `var/col-prefixes`, read on first need (at most once per request).
    memo: OnceCell<Option<Remembered>>,
    /// The subdomains in col/, each with its `word[.port]` prefixes once looked at.
    subdomains: OnceCell<Vec<(String, OnceCell<Vec<String>>)>>,
    /// Directories below col/ found free of symbolic links during this request.
    plain_dirs: RefCell<Vec<PathBuf>>,
    warnings: RefCell<Vec<String>>,
}

impl Store {
    /// The store of the Archive at `root` (its items are under `root/col`).
    pub fn new(root: &Path) -> Store {
        Store {
            col: root.join("col"),
            var: None,
            memo: OnceCell::new(),
            subdomains: OnceCell::new(),
            plain_dirs: RefCell::new(Vec::new()),
            warnings: RefCell::new(Vec::new()),
        }
    }

    /// The store of the Archive at `root` that believes the listings of col/'s two top
    /// levels remembered in `root/var/col-prefixes` while the directories they came from
    /// are unchanged, and lists the others (see `colmemo`). It never writes: the service
    /// answers without touching the disk.
    pub fn with_memo(root: &Path) -> Store {
        Store {
            var: Some(root.join("var")),
            ..Store::new(root)
        }
    }

    /// Brings `root/var/col-prefixes` up to date for the service (`ibi-archive
    /// prefixes`): lists what changed and rewrites the file when every directory in it
    /// has settled, waiting for that, a second at a time, up to `wait`. The prefixes,
    /// and what became of the file.
    pub fn remember_prefixes(
        root: &Path,
        wait: std::time::Duration,
    ) -> (Vec<(String, Vec<String>)>, MemoState) {
        let started = std::time::Instant::now();
        loop {
            let (prefixes, state) = Store::new(root).relist_and_remember(&root.join("var"));
            if state != MemoState::Unsettled || started.elapsed() >= wait {
                return (prefixes, state);
            }
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
    }

    pub fn col(&self) -> &Path {
        &self.col
    }

    /// What went wrong while looking (broken item.toml, items leading outside col/):
    /// one line each, for the web server's error log.
    pub fn take_warnings(&self) -> Vec<String> {
        self.warnings.take()
    }

    /// Records a line for the web server's error log.
    pub fn warn(&self, line: String) {
        // Once per request: several relations of one answer can meet the same fault (a
        // bare GetTranslation before GetLastEdition follows one looping chain per
        // language), and the administrator should read it once.
        let mut warnings = self.warnings.borrow_mut();
        if !warnings.contains(&line) {
            warnings.push(line);
        }
    }

    /// The item with this IBI, if this Archive holds one that loads.
    pub fn find(&self, ibi: &Ibi) -> Option<Item> {
        match ibi {
            Ibi::Rep(rep) => self.find_rep(rep),
            Ibi::Ibip(ibip) => self.find_ibip(ibip),
        }
    }

    /// The item whose uniform repository name equals `rep` (in the standard's sense).
    pub fn find_rep(&self, rep: &Rep) -> Option<Item> {
        let exact = item_path(
            &self.col,
            rep.subdomain(),
            rep.word_port(),
            rep.year(),
            rep.day_time(),
        );
        if exact.is_dir() {
            return self.load(&exact, rep.clone());
        }
        // Another spelling of the prefix (case, `@`/`.`, port 80): only the subdomains
        // equal to the asked one but for case are looked into, and only the prefixes that
        // spell the asked one are looked for the item, so a rep of another Archive (the
        // usual question) costs the names of col/ (remembered, or one listing).
        for entry in self.subdomains() {
            let sub = &entry.0;
            if !sub.eq_ignore_ascii_case(rep.subdomain()) {
                continue;
            }
            for wp in self.prefixes_in(entry) {
                if sub == rep.subdomain() && wp == rep.word_port() || !rep.has_word_port(wp) {
                    continue;
                }
                let dir = item_path(&self.col, sub, wp, rep.year(), rep.day_time());
                if !dir.is_dir() {
                    continue;
                }
                let spelled = format!("{sub}/{wp}/{}/{}", rep.year(), rep.day_time());
                if let Ok(found) = Rep::parse(&spelled) {
                    return self.load(&dir, found);
                }
            }
        }
        None
    }

    /// The item whose item.toml records this IBIp.
    pub fn find_ibip(&self, ibip: &Ibip) -> Option<Item> {
        let suffix = ibip.date().rep_suffix();
        let (year, day_time) = suffix.split_once('/')?;
        for entry in self.subdomains() {
            let sub = &entry.0;
            for wp in self.prefixes_in(entry) {
                let dir = item_path(&self.col, sub, wp, year, day_time);
                if !dir.is_dir() {
                    continue;
                }
                let Ok(rep) = Rep::parse(&format!("{sub}/{wp}/{year}/{day_time}")) else {
                    continue;
                };
                if let Some(item) = self.load(&dir, rep) {
                    if item.ibip.as_ref() == Some(ibip) {
                        return Some(item);
                    }
                }
            }
        }
        None
    }

    /// `var/col-prefixes`, when this store believes it and it reads.
    fn memo(&self) -> Option<&Remembered> {
        self.memo
            .get_or_init(|| self.var.as_deref().and_then(Remembered::read))
            .as_ref()
    }

    /// The subdomains in col/, sorted: remembered while col/ keeps its stamp, else
    /// listed. Their prefixes are looked at by `prefixes_in`.
    fn subdomains(&self) -> &[(String, OnceCell<Vec<String>>)] {
        self.subdomains.get_or_init(|| {
            let names = match self.memo() {
                Some(memo) if Stamp::of(&self.col) == Some(memo.col) => {
                    memo.subdomains().map(str::to_string).collect()
                }
                _ => sorted_dir_names(&self.col),
            };
            names.into_iter().map(|n| (n, OnceCell::new())).collect()
        })
    }

    /// The prefixes of a subdomain of `subdomains`, sorted: remembered while its
    /// directory keeps its stamp, else listed.
    fn prefixes_in<'a>(&self, sub: &'a (String, OnceCell<Vec<String>>)) -> &'a [String] {
        sub.1.get_or_init(|| {
            let dir = self.col.join(&sub.0);
            match self.memo().and_then(|m| m.prefixes(&sub.0)) {
                Some((stamp, prefixes)) if Stamp::of(&dir) == Some(stamp) => {
                    prefixes.into_iter().map(str::to_string).collect()
                }
                _ => sorted_dir_names(&dir),
            }
        })
    }

    /// The two top levels of `col/` (each subdomain with its prefixes, sorted), listing every directory whose stamp is not
    /// the one remembered in `var/col-prefixes` (its stamp taken first); the file is
    /// rewritten when some directory was listed and all have settled. Also what became
    /// of the file.
    fn relist_and_remember(&self, var: &Path) -> (Vec<(String, Vec<String>)>, MemoState) {
        let now = chrono::Utc::now().timestamp();
        let col = Stamp::of(&self.col);
        let memo = Memo::read(var);
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
                sorted_dir_names(&self.col)
            }
        };
        let mut settled = col.is_some_and(|s| s.settled(now));
        let mut subdomains = Vec::with_capacity(names.len());
        for name in names {
            let dir = self.col.join(&name);
            let stamp = Stamp::of(&dir);
            settled &= stamp.is_some_and(|s| s.settled(now));
            let remembered = known
                .iter_mut()
                .find(|s| s.name == name && Some(s.stamp) == stamp)
                .map(|s| std::mem::take(&mut s.prefixes));
            let prefixes = remembered.unwrap_or_else(|| {
                listed = true;
                sorted_dir_names(&dir)
            });
            subdomains.push((name, stamp, prefixes));
        }
        if let (Some(col), true) = (col, listed && settled) {
            let memo = Memo {
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
                MemoState::Held
            } else {
                MemoState::Unwritable
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
            (false, _) => MemoState::Held,
            (true, false) => MemoState::Unsettled,
            (true, true) => MemoState::Unwritable,
        };
        (prefixes, state)
    }

    /// Loads the item in `dir`, whose rep is `rep` (spelled as on disk).
    fn load(&self, dir: &Path, rep: Rep) -> Option<Item> {
        if !self.inside_col(dir) {
            self.warn(format!(
                "{}: item directory is reached through a symbolic link; treated as absent",
                dir.display()
            ));
            return None;
        }
        match Item::load(dir, rep) {
            Ok(item) => Some(item),
            Err(e) => {
                self.warn(format!("{e}; item treated as absent"));
                None
            }
        }
    }

    /// Whether `path` is a place inside `col/` reached without any symbolic link below col/.
    pub fn inside_col(&self, path: &Path) -> bool {
        // Checked level by level from the deepest directory already found plain in this
        // request (an item's doc/ after the item), else from col/ itself.
        let known = {
            let dirs = self.plain_dirs.borrow();
            if dirs.iter().any(|d| d.as_path() == path) {
                return true;
            }
            dirs.iter()
                .filter(|d| below(path, d).is_some())
                .max_by_key(|d| d.as_os_str().len())
                .cloned()
        };
        // No symbolic link is followed below col/ (col/ itself may be one): the web
        // servers of cgi-bin/ follow none there, so what a link reaches could not be served.
        match plain_below(known.as_deref().unwrap_or(&self.col), path) {
            Some(meta) => {
                if meta.is_dir() {
                    self.plain_dirs.borrow_mut().push(path.to_path_buf());
                }
                true
            }
            None => false,
        }
    }
}

/// `col/<sub>/<wp>/<year>/<day_time>`, built in one allocation.
fn item_path(col: &Path, sub: &str, wp: &str, year: &str, day_time: &str) -> PathBuf {
    let mut p = PathBuf::with_capacity(
        col.as_os_str().len() + sub.len() + wp.len() + year.len() + day_time.len() + 4,
    );
    p.push(col);
    p.push(sub);
    p.push(wp);
    p.push(year);
    p.push(day_time);
    p
}

/// When `path` is `base` followed by one or more plain names none of which is a symbolic
/// link (each exists; `lstat` says so level by level), the metadata of its last level.
/// Such a path resolves to `base`'s own resolution followed by the same names, so it is
/// inside `base` whatever `base` itself is (a mount point or a symlink): what resolving
/// both paths would find, for one `lstat` per level below `base` instead of two
/// `realpath`s (each one `readlink` per component of the whole path). `None` means
/// "cannot tell this way" (a link, `.`/`..`, a missing level, a path outside `base`):
/// resolve them.
pub(crate) fn plain_below(base: &Path, path: &Path) -> Option<std::fs::Metadata> {
    use std::os::unix::ffi::OsStrExt;
    let mut p = PathBuf::with_capacity(path.as_os_str().len() + 1);
    p.push(base);
    let mut last = None;
    let mut step = |p: &Path| -> Option<()> {
        let m = std::fs::symlink_metadata(p).ok()?;
        if m.file_type().is_symlink() {
            return None;
        }
        last = Some(m);
        Some(())
    };
    // The usual spelling, `base/name/…` with plain names, is split as bytes; any other
    // goes through `Path` (comparing component by component costs more).
    match below(path, base) {
        Some(rel) => {
            for name in rel.split(|&b| b == b'/') {
                p.push(std::ffi::OsStr::from_bytes(name));
                step(&p)?;
            }
        }
        None => {
            for c in path.strip_prefix(base).ok()?.components() {
                let std::path::Component::Normal(name) = c else {
                    return None;
                };
                p.push(name);
                step(&p)?;
            }
        }
    }
    last
}

/// The bytes of `path` after `dir/`, when they are plain names (none empty, `.` or `..`).
fn below<'a>(path: &'a Path, dir: &Path) -> Option<&'a [u8]> {
    use std::os::unix::ffi::OsStrExt;
    let (path, dir) = (path.as_os_str().as_bytes(), dir.as_os_str().as_bytes());
    let rel = path.strip_prefix(dir)?.strip_prefix(b"/")?;
    rel.split(|&b| b == b'/')
        .all(|n| !n.is_empty() && n != b"." && n != b"..")
        .then_some(rel)
}

/// Names of the sub-directories of `dir` that are valid UTF-8, sorted; none if unreadable.
fn sorted_dir_names(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_type()
                .map(|t| t.is_dir() || t.is_symlink())
                .unwrap_or(false)
        })
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names
}
