//! The `col/` tree: finding an item by either form of its IBI without any index.
//!
//! A rep names its own directory, `col/<subdomain>/<word[.port]>/<year>/<mm.dd…>`; the
//! first two levels are compared as the standard compares them (case, `@`/`.`, port 80),
//! so only those two small levels are ever listed. An IBIp's suffix decodes to the date
//! that is also its rep's suffix (generation standard, Algorithms 2 and 6), so an IBIp is
//! found by looking for `col/*/*/<year>/<mm.dd…>` under each prefix and keeping the item
//! whose item.toml records that ibip. Neither lookup depends on the number of items, and
//! an item dropped into `col/` answers at once.

use std::cell::{OnceCell, RefCell};
use std::path::{Path, PathBuf};

use crate::ibi::{Ibi, Ibip, Rep};
use crate::item::Item;

/// Read access to an Archive's `col/` tree.
pub struct Store {
    col: PathBuf,
    canonical_col: OnceCell<Option<PathBuf>>,
    prefixes: OnceCell<Vec<(String, String)>>,
    warnings: RefCell<Vec<String>>,
}

impl Store {
    /// The store of the Archive at `root` (its items are under `root/col`).
    pub fn new(root: &Path) -> Store {
        Store {
            col: root.join("col"),
            canonical_col: OnceCell::new(),
            prefixes: OnceCell::new(),
            warnings: RefCell::new(Vec::new()),
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
        self.warnings.borrow_mut().push(line);
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
        let exact = self
            .col
            .join(rep.subdomain())
            .join(rep.word_port())
            .join(rep.year())
            .join(rep.day_time());
        if exact.is_dir() {
            return self.load(&exact, rep.subdomain(), rep.word_port(), rep);
        }
        for (sub, wp) in self.prefixes() {
            if sub == rep.subdomain() && wp == rep.word_port() {
                continue;
            }
            if !sub.eq_ignore_ascii_case(rep.subdomain()) {
                continue;
            }
            let dir = self
                .col
                .join(sub)
                .join(wp)
                .join(rep.year())
                .join(rep.day_time());
            if !dir.is_dir() {
                continue;
            }
            let Ok(found) = Rep::parse(&format!("{sub}/{wp}/{}/{}", rep.year(), rep.day_time()))
            else {
                continue;
            };
            if found == *rep {
                return self.load(&dir, sub, wp, rep);
            }
        }
        None
    }

    /// The item whose item.toml records this IBIp.
    pub fn find_ibip(&self, ibip: &Ibip) -> Option<Item> {
        let suffix = ibip.date().rep_suffix();
        let (year, day_time) = suffix.split_once('/')?;
        for (sub, wp) in self.prefixes() {
            let dir = self.col.join(sub).join(wp).join(year).join(day_time);
            if !dir.is_dir() {
                continue;
            }
            let Ok(rep) = Rep::parse(&format!("{sub}/{wp}/{year}/{day_time}")) else {
                continue;
            };
            if let Some(item) = self.load(&dir, sub, wp, &rep) {
                if item.ibip.as_ref() == Some(ibip) {
                    return Some(item);
                }
            }
        }
        None
    }

    /// The two top levels of `col/`, `(subdomain, word[.port])`, sorted.
    fn prefixes(&self) -> &[(String, String)] {
        self.prefixes.get_or_init(|| {
            let mut out = Vec::new();
            for sub in sorted_dir_names(&self.col) {
                for wp in sorted_dir_names(&self.col.join(&sub)) {
                    out.push((sub.clone(), wp));
                }
            }
            out
        })
    }

    /// Loads the item in `dir` (named with the on-disk spelling of its prefix).
    fn load(&self, dir: &Path, sub: &str, wp: &str, asked: &Rep) -> Option<Item> {
        if !self.inside_col(dir) {
            self.warn(format!(
                "{}: item directory leads outside col/; treated as absent",
                dir.display()
            ));
            return None;
        }
        let spelled = format!("{sub}/{wp}/{}/{}", asked.year(), asked.day_time());
        let rep = Rep::parse(&spelled).ok()?;
        match Item::load(dir, rep) {
            Ok(item) => Some(item),
            Err(e) => {
                self.warn(format!("{e}; item treated as absent"));
                None
            }
        }
    }

    /// Whether `path` resolves to a place inside `col/` (symlinks followed).
    pub fn inside_col(&self, path: &Path) -> bool {
        let col = self
            .canonical_col
            .get_or_init(|| std::fs::canonicalize(&self.col).ok());
        match (col, std::fs::canonicalize(path)) {
            (Some(col), Ok(p)) => p.starts_with(col) && p != *col,
            _ => false,
        }
    }
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
