//! `check`: validates an Archive on disk and names every fault with its path (relative to
//! the Archive root).
//!
//! One walk of `col/` (walkdir, sorted, symlinks not followed) checks, per entry:
//! - levels 1–4 are directories named as the parts of a uniform repository name
//!   (subdomain, word[.port], year, month.day.hour.minute[.second[.fraction]]);
//! - an item directory holds `item.toml` and `doc/` and nothing else; its item.toml loads;
//!   its `ibip` codes the directory's date (else the IBIp lookup cannot find it); its
//!   target (given, or the default rule: the only file in doc/, else index.html) and its
//!   `[formats]` files are files inside doc/ — except for Deleted items, items with a
//!   `url`, and the Archive service item, whose URLs are not files;
//! - two directories naming the same IBI (rep equality: case, `@`/`.`, port 80), e.g. an
//!   Original and a Copy, reported on the one that sorts later;
//! - an IBIp recorded by two items;
//! - a file of doc/ that is never served: one with several hard links, a named pipe, a
//!   device or a socket (see `layout`);
//! - (a note, not a fault) a `nextedition`, `metadata` or `translations` IBI that this
//!   Archive does not hold: item.toml allows a relation to an item "here or elsewhere",
//!   and the resolver looks for it in the other Archives, so only the administrator can
//!   tell a relation to another Archive from a misspelt one. A rep is held when a
//!   directory spelling it exists under col/, an IBIp when the service's lookup finds it;
//! - any symlink that resolves outside col/;
//! - a temporary entry left by an interrupted `new` or `delete` (other dot-names are
//!   ignored, as the service ignores them).
//!
//! After the walk: loops of next editions among the items here, one fault per loop, on
//! the item.toml that sorts first. Before it: archive.toml loads — every setting, as the
//! service, `new` and `include`/`exclude` read it: [`Config::load`] checks `[minting]` as
//! `new` mints, and `[registration]` is checked by `include`'s own function — and its
//! `archiveserviceibi` is an Original item here. A fault of a TOML text is placed at its
//! line and column (`archive.toml:12:15: …`).
//!
//! When archive.toml does not load, what can still be read of it (its
//! `archiveserviceibi`, whether it has a `[registration]`) is used; the checks that need
//! what cannot be read are skipped, and one note says which (no false fault: the service
//! item, whose URL is no file, would otherwise be judged as an item without files). With
//! neither archive.toml nor col/, the root is no Archive: that one fault is reported.
//!
//! Also before the walk: `var/`, and what the service uses in it (the urlkey secret, the
//! access log, the directories of the marks of counted keys), as the web server's user
//! needs them (see `check_var_access`, judged by mode bits with [`crate::var_owner`]): a
//! fault each that user cannot use, said with the `chown` to run.
//!
//! Warnings (not faults: the Archive works, but a secret is exposed): archive.toml
//! holding the registration key, or var/urlkey.secret, readable by every local user.
//! Notes (neither faults nor warnings): what check could not judge, and the relations to
//! IBIs held elsewhere. Warnings and notes are counted apart from the faults.
//!
//! After the checks, `var/oai-records` (the OAI-PMH data provider's index, see
//! [`crate::oai_index`]) is written from the metadata items the walk loaded, with the
//! lines `new` and `delete` added meanwhile, and beside it the stamp of `col/` taken
//! before the walk (see [`crate::oai_build`]: a change while it walks makes the index
//! stale, and the data provider builds it again).
//!
//! Memory: one entry per metadata item (for `var/oai-records`), one per item with an
//! IBIp (IBIp → rep) and one per item with a next edition (rep → next); nothing else is
//! kept per item.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use super::registration::{prepare, Direction};
use crate::config::Config;
use crate::item::{Item, State, MAX_REASON};
use crate::layout::{Col, ItemDir, Refusal};
use crate::store::Store;
use ::ibi::atomic::TEMP_PREFIX;
use ::ibi::toml_error::{located, Position};
use ::ibi::{Ibi, Ibip, Rep};

/// One fault (or warning, or note): where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// Relative to the Archive root, e.g. `col/sid.inpe.br/mtc-m19/2013/09.04.12.27.57/item.toml`.
    pub path: String,
    /// The line and column in that file, when known (a TOML error).
    pub at: Option<Position>,
    pub message: String,
    pub kind: Kind,
}

/// What a reported line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A fault of the Archive.
    Fault,
    /// Reported, but not a fault of the Archive (see the module header).
    Warning,
    /// Neither: what check could not do (archive.toml did not load), or a relation to an
    /// IBI this Archive does not hold.
    Note,
}

impl fmt::Display for Fault {
    /// `<path>[:LINE:COLUMN]: <message>` (`<path>: warning: <message>`, `<path>: note:
    /// <message>`), as one line: file names and messages may hold any byte, and a name
    /// holding a line break must not forge a line of the report.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = match self.kind {
            Kind::Fault => "",
            Kind::Warning => "warning: ",
            Kind::Note => "note: ",
        };
        let line = located(&self.path, self.at, format_args!("{label}{}", self.message));
        f.write_str(&::ibi::logline::clean(&line))
    }
}

/// What a check found, in numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    pub items: u64,
    pub faults: u64,
    pub warnings: u64,
    pub notes: u64,
}

/// The web server's user when `check` is not told (`--web-user`): Debian's.
pub use crate::var_owner::DEFAULT_WEB_USER;

/// Checks the Archive at `root`, handing each fault to `report` as it is found and the
/// number of items seen so far to `progress`; var/ is judged as the user `web_user` (the
/// web server's, which runs the service) needs it.
pub fn check(
    root: &Path,
    web_user: &str,
    report: &mut dyn FnMut(Fault),
    progress: &mut dyn FnMut(u64),
) -> Summary {
    check_and_fix(root, web_user, false, report, progress)
}

/// [`check`], and with `fix`, the metadata items' persistent URLs that name a resolver
/// `[registration]` does not name rewritten to name its first
/// ([`Checker::check_persistent_urls`]); each rewrite is a note.
pub fn check_and_fix(
    root: &Path,
    web_user: &str,
    fix: bool,
    report: &mut dyn FnMut(Fault),
    progress: &mut dyn FnMut(u64),
) -> Summary {
    let mut c = Checker {
        fix,
        web_user: web_user.to_string(),
        root: root.to_path_buf(),
        col: root.join("col"),
        col_dir: None,
        real_col: None,
        config: None,
        store: Store::new(root),
        service: None,
        groups: HashMap::new(),
        ibips: HashMap::new(),
        editions: HashMap::new(),
        summary: Summary::default(),
        report,
        oai: Vec::new(),
    };
    c.run(progress);
    c.summary
}

struct Checker<'a> {
    /// Whether persistent URLs naming another resolver are rewritten.
    fix: bool,
    /// The web server's user, who must be able to use var/.
    web_user: String,
    root: PathBuf,
    col: PathBuf,
    /// col/, opened: items are read from it as the service reads them.
    col_dir: Option<Col>,
    real_col: Option<PathBuf>,
    config: Option<Config>,
    /// col/ as the service looks into it (its two top levels listed once): where the
    /// IBIps that items name are looked for.
    store: Store,
    /// archiveserviceibi, also when archive.toml is otherwise broken.
    service: Option<Ibi>,
    /// Canonical prefix → the spellings of it found in col/ (sorted).
    groups: HashMap<String, Vec<(String, String)>>,
    /// IBIp (upper case) → the rep of the item recording it, as on disk.
    ibips: HashMap<Box<str>, Box<str>>,
    /// Canonical rep → (rep as on disk, its next edition).
    editions: HashMap<Box<str>, (Box<str>, Next)>,
    summary: Summary,
    report: &'a mut dyn FnMut(Fault),
    /// The metadata items that load, for `var/oai-records`.
    oai: Vec<crate::oai_index::Entry>,
}

impl Checker<'_> {
    fn report(
        &mut self,
        kind: Kind,
        path: impl Into<String>,
        at: Option<Position>,
        message: impl Into<String>,
    ) {
        match kind {
            Kind::Fault => self.summary.faults += 1,
            Kind::Warning => self.summary.warnings += 1,
            Kind::Note => self.summary.notes += 1,
        }
        (self.report)(Fault {
            path: path.into(),
            at,
            message: message.into(),
            kind,
        });
    }

    fn fault(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.report(Kind::Fault, path, None, message);
    }

    fn warn(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.report(Kind::Warning, path, None, message);
    }

    fn rel(&self, path: &Path) -> String {
        super::relative(&self.root, path)
    }

    fn run(&mut self, progress: &mut dyn FnMut(u64)) {
        let toml_path = self.root.join("archive.toml");
        // Whether archive.toml holds the registration key (None: cannot be told).
        let holds_key;
        let mut skipped: Vec<&str> = Vec::new();
        let mut no_archive_toml = false;
        match Config::load(&self.root) {
            Ok(c) => {
                holds_key = Some(c.registration.is_some());
                self.service = Some(c.service.clone());
                self.check_registration(&c);
                if let Err(e) = c.minting() {
                    self.fault("archive.toml", e);
                }
                self.config = Some(c);
            }
            Err(e) => {
                self.report(Kind::Fault, "archive.toml", e.at, e.message);
                no_archive_toml = std::fs::symlink_metadata(&toml_path).is_err();
                let table = table_of(&toml_path);
                self.service = table.as_ref().and_then(service_ibi_of);
                holds_key = table.map(|t| t.contains_key("registration"));
                if self.service.is_none() {
                    skipped.push("the Archive service item");
                    skipped.push("the target and format files of items (any could be the service item, whose URL is no file)");
                }
                if holds_key.is_none() && !no_archive_toml {
                    skipped.push("whether other users can read its registration key");
                }
            }
        }
        self.check_secrets(holds_key == Some(true));
        self.check_var_access();
        self.col_dir = Col::open(&self.root).ok();
        if self.col_dir.is_none() || !self.col.is_dir() {
            // Neither archive.toml nor col/: no Archive, which the fault above says.
            if !no_archive_toml {
                self.fault("col", "no such directory: the Archive holds no items");
            }
            return;
        }
        if !skipped.is_empty() {
            self.report(
                Kind::Note,
                "archive.toml",
                None,
                format!(
                    "it did not load, so check skipped what depends on it: {}",
                    skipped.join("; ")
                ),
            );
        }
        self.real_col = std::fs::canonicalize(&self.col).ok();
        self.check_service_item();
        self.read_groups();
        // col/ stamped before the walk (see crate::oai_build): a change while it walks
        // makes the index stale, and the data provider builds it again.
        let stamp = self.col_dir.as_ref().map(crate::oai_build::TreeStamp::take);
        let started = ::ibi::time::SystemClock::now();
        self.walk(progress);
        self.check_edition_loops();
        if let Some(stamp) = stamp {
            self.write_oai_records(started, &stamp);
        }
    }

    /// Writes `var/oai-records` from the walk (see [`crate::oai_index`]), with the lines
    /// `new` and `delete` added while it walked, and the stamp of col/ beside it;
    /// nothing when var/ does not exist.
    fn write_oai_records(&mut self, started: i64, stamp: &crate::oai_build::TreeStamp) {
        if !self.root.join("var").is_dir() {
            return;
        }
        let entries = std::mem::take(&mut self.oai);
        let _ = crate::oai_build::finish(&self.root, entries, started, stamp, started);
    }

    /// [registration] as `include` and `exclude` check it before sending anything.
    fn check_registration(&mut self, config: &Config) {
        if config.registration.is_none() {
            return;
        }
        if let Err(e) = prepare(config, Direction::Include, &[]) {
            let message = e.message.trim_end_matches("; nothing was sent").to_string();
            self.fault("archive.toml", message);
        }
    }

    /// The two secrets of an Archive must not be readable by every local user.
    fn check_secrets(&mut self, holds_key: bool) {
        use std::os::unix::fs::PermissionsExt;
        let others_read =
            |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o004 != 0);
        if holds_key && others_read(&self.root.join("archive.toml")) {
            self.warn(
                "archive.toml",
                "readable by every local user, and it holds the registration key; chmod o-rwx archive.toml (the web server needs only its group's read)",
            );
        }
        let secret = crate::urlkey::secret_path(&self.root.join("var"));
        if others_read(&secret) {
            self.warn(
                "var/urlkey.secret",
                "readable by every local user, who could then forge urlkeys; chmod 600 var/urlkey.secret",
            );
        }
    }

    /// var/ and what the service uses in it, as the web server's user needs them: var/
    /// writable and searchable, the urlkey secret readable, the access log and the
    /// directories of the marks of counted keys writable. A var/ that is not there (the
    /// service has made nothing yet) is not judged; neither is what is in a var/ the
    /// user cannot use, nor what this process cannot see.
    fn check_var_access(&mut self) {
        use crate::var_owner::{cannot, group_name, user_name, Access, User};
        let var = self.root.join("var");
        let Ok(var_meta) = std::fs::metadata(&var) else {
            return;
        };
        let Some(user) = User::by_name(&self.web_user) else {
            let message = format!(
                "there is no user {} here, so whether the web server's user can use var/ was not checked (--web-user USER names it)",
                self.web_user
            );
            self.report(Kind::Note, "var", None, message);
            return;
        };
        const ALL: Access = Access {
            read: true,
            write: true,
            search: true,
        };
        const UNCOUNTED: &str = "so accesses are not counted";
        let mut entries: Vec<(String, std::fs::Metadata, Access, &str)> = vec![(
            "var".to_string(),
            var_meta,
            Access {
                read: false,
                write: true,
                search: true,
            },
            "so the service can neither keep its urlkey secret nor count accesses",
        )];
        let marks = var.join(crate::acklog::MARKS_DIR);
        if let Ok(m) = std::fs::metadata(&marks) {
            entries.push((self.rel(&marks), m, ALL, UNCOUNTED));
            let mut hours: Vec<PathBuf> = std::fs::read_dir(&marks)
                .map(|d| {
                    d.filter_map(Result::ok)
                        .map(|e| e.path())
                        .filter(|p| p.is_dir())
                        .collect()
                })
                .unwrap_or_default();
            hours.sort();
            for h in hours {
                if let Ok(m) = std::fs::metadata(&h) {
                    entries.push((self.rel(&h), m, ALL, UNCOUNTED));
                }
            }
        }
        let files = [
            (
                crate::acklog::log_path(&var),
                Access {
                    read: true,
                    write: true,
                    search: false,
                },
                UNCOUNTED,
            ),
            (
                var.join(crate::acklog::SYNCED_NAME),
                Access {
                    read: true,
                    write: true,
                    search: false,
                },
                UNCOUNTED,
            ),
            (
                crate::urlkey::secret_path(&var),
                Access {
                    read: true,
                    write: false,
                    search: false,
                },
                "so the service cannot count accesses",
            ),
            (
                var.join("items.lock"),
                Access {
                    read: true,
                    write: false,
                    search: false,
                },
                "so the OAI-PMH data provider cannot build its index",
            ),
            (
                var.join(crate::oai_build::LOCK_NAME),
                Access {
                    read: true,
                    write: true,
                    search: false,
                },
                "so the OAI-PMH data provider cannot build its index",
            ),
        ];
        for (path, need, why) in files {
            if let Ok(m) = std::fs::metadata(&path) {
                entries.push((self.rel(&path), m, need, why));
            }
        }
        for (i, (rel, meta, need, why)) in entries.into_iter().enumerate() {
            let Some(missing) = cannot(&user, &meta, need) else {
                continue;
            };
            use std::os::unix::fs::MetadataExt;
            let message = format!(
                "{name} (the web server's user) cannot {missing} it (owner {}, group {}, mode {:o}), {why}; chown -R {name}: var",
                user_name(meta.uid()),
                group_name(meta.gid()),
                meta.mode() & 0o7777,
                name = user.name,
            );
            self.fault(rel, message);
            if i == 0 {
                // What is in a var/ it cannot use does not matter.
                return;
            }
        }
    }

    fn check_service_item(&mut self) {
        let Some(service) = self.service.clone() else {
            return;
        };
        let found = Store::new(&self.root).find(&service);
        match found.item {
            None if found.log.is_empty() => self.fault(
                "archive.toml",
                format!("archiveserviceibi {service}: no such item in col/"),
            ),
            None => self.fault(
                "archive.toml",
                format!("archiveserviceibi {service}: its item cannot be read"),
            ),
            Some(item) if item.state != State::Original => self.fault(
                "archive.toml",
                format!(
                    "archiveserviceibi {service} is a {} item; the Archive service item must be the Original",
                    item.state.as_str()
                ),
            ),
            Some(item) => self.check_logo(&item),
        }
    }

    /// archive.toml's `[site] logo`, when it names a file: a file of the service item's
    /// doc/, which the landing pages show (as the Archive serves it).
    fn check_logo(&mut self, service: &crate::item::Item) {
        let Some(crate::config::Logo::File(name)) =
            self.config.as_ref().and_then(|c| c.site.logo.clone())
        else {
            return;
        };
        // A regular file the Archive serves (one link, no symlink), as a page shows it.
        let is_file = service
            .handle
            .as_ref()
            .is_some_and(|dir| dir.stored_doc_name(name.as_bytes()).is_ok());
        if !is_file {
            self.fault(
                "archive.toml",
                format!(
                    "[site] logo {name}: no such file in the service item's doc/ ({}/doc)",
                    self.rel(&service.dir)
                ),
            );
        }
        let Some(config) = self.config.as_ref() else {
            return;
        };
        let url = crate::face::logo_file_url(config, service.rep.as_str(), &name);
        if crate::face::csp_source(&url).is_none() {
            let baseurl = config.baseurl.clone();
            self.warn(
                "archive.toml",
                format!(
                    "[site] logo {name}: its URL {url} (from baseurl {baseurl}) cannot be named in a Content-Security-Policy (a host of letters, digits, '-' and '.', and a port); the landing pages show no logo"
                ),
            );
        }
    }

    /// The two top levels of col/, grouped by the prefix they spell.
    fn read_groups(&mut self) {
        for sub in names(&self.col) {
            for wp in names(&self.col.join(&sub)) {
                if let Some(key) = canonical_prefix(&sub, &wp) {
                    self.groups.entry(key).or_default().push((sub.clone(), wp));
                }
            }
        }
        for g in self.groups.values_mut() {
            g.sort();
        }
    }

    /// One walk of col/, sorted, links not followed: every entry checked as its level
    /// requires, each item with [`Checker::check_item`].
    fn walk(&mut self, progress: &mut dyn FnMut(u64)) {
        let mut it = walkdir::WalkDir::new(&self.col)
            .min_depth(1)
            .follow_links(false)
            .sort_by_file_name()
            .into_iter();
        // The parts of the current item's rep, by level.
        let mut parts: [String; 4] = Default::default();
        while let Some(entry) = it.next() {
            let e = match entry {
                Ok(e) => e,
                Err(err) => {
                    self.unreadable(&err);
                    continue;
                }
            };
            // skip_current_dir after a file would skip the rest of its directory.
            if !self.check_entry(&e, &mut parts, progress) && e.file_type().is_dir() {
                it.skip_current_dir();
            }
        }
    }

    /// An entry the walk could not read.
    fn unreadable(&mut self, err: &walkdir::Error) {
        let path = err
            .path()
            .map_or_else(|| "col".to_string(), |p| self.rel(p));
        let why = err
            .io_error()
            .map_or_else(|| err.to_string(), |io| io.to_string());
        self.fault(path, format!("cannot read: {why}"));
    }

    /// Checks one entry of col/ as its level requires (`parts`: the rep's parts above it);
    /// false when the walk must not go into it.
    fn check_entry(
        &mut self,
        e: &walkdir::DirEntry,
        parts: &mut [String; 4],
        progress: &mut dyn FnMut(u64),
    ) -> bool {
        let depth = e.depth();
        let rel = self.rel(e.path());
        let name = e.file_name().to_string_lossy().into_owned();
        if depth <= 5 && name.starts_with('.') {
            self.check_dot_name(rel, &name);
            return false;
        }
        if e.path_is_symlink() {
            self.check_symlink(e.path(), rel);
            return true;
        }
        match depth {
            1..=4 => self.check_rep_part(e, rel, parts, progress),
            5 => self.check_item_entry(e, rel, &name),
            _ => {
                if !e.file_type().is_dir() {
                    self.check_doc_file(e, rel);
                }
                true
            }
        }
    }

    /// A dot-name above doc/, which the service ignores: a fault when it is a temporary
    /// entry of the tools.
    fn check_dot_name(&mut self, rel: String, name: &str) {
        if name.starts_with(TEMP_PREFIX) {
            self.fault(
                rel,
                "temporary entry of an interrupted (or running) `ibi-archive new` or `delete`; remove it",
            );
        }
    }

    /// A symlink anywhere under col/: the service treats it as absent.
    fn check_symlink(&mut self, path: &Path, rel: String) {
        let outside = std::fs::canonicalize(path)
            .ok()
            .is_some_and(|real| self.real_col.as_ref().is_some_and(|c| !real.starts_with(c)));
        if outside {
            self.fault(
                rel,
                "symlink leads outside col/; the service treats it as absent",
            );
        } else {
            self.fault(
                rel,
                "symlink below col/: neither the service nor the web servers follow it, so it is treated as absent",
            );
        }
    }

    /// An entry of the four levels of reps: a directory named as the part of a rep of its
    /// level; at the fourth, an item, counted and checked. False when the walk must not go
    /// into it.
    fn check_rep_part(
        &mut self,
        e: &walkdir::DirEntry,
        rel: String,
        parts: &mut [String; 4],
        progress: &mut dyn FnMut(u64),
    ) -> bool {
        let depth = e.depth();
        let Some(name) = e.file_name().to_str() else {
            self.fault(
                rel,
                "name is not UTF-8, so it is not part of a uniform repository name",
            );
            return false;
        };
        if !e.file_type().is_dir() {
            self.fault(
                rel,
                "stray file: the four levels under col/ hold only the directories of uniform repository names",
            );
            return true;
        }
        parts[depth - 1] = name.to_string();
        if let Err(why) = check_part(depth, parts) {
            self.fault(
                rel,
                format!("directory name is not part of a uniform repository name: {why}"),
            );
            return false;
        }
        if depth == 4 {
            self.summary.items += 1;
            progress(self.summary.items);
            let rep = Rep::parse(&parts.join("/")).expect("checked by check_part");
            self.check_item(&rel, rep);
        }
        true
    }

    /// An entry of an item directory, which holds only the file item.toml and the
    /// directory doc/. False when the walk must not go into it.
    fn check_item_entry(&mut self, e: &walkdir::DirEntry, rel: String, name: &str) -> bool {
        let ok = match name {
            "item.toml" => e.file_type().is_file(),
            "doc" => e.file_type().is_dir(),
            _ => false,
        };
        if !ok {
            self.fault(
                rel,
                "stray entry: an item directory holds only the file item.toml and the directory doc/",
            );
        }
        ok
    }

    /// A file of doc/ (links are reported as such): one the service and the web servers
    /// never serve is a fault to know of.
    fn check_doc_file(&mut self, e: &walkdir::DirEntry, rel: String) {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = e.metadata() else {
            return;
        };
        if !meta.is_file() {
            self.fault(
                rel,
                "not a regular file (a named pipe, device or socket): never served",
            );
        } else if meta.nlink() > 1 {
            self.fault(
                rel,
                format!(
                    "has {} hard links: never served (another link could be any file, such as archive.toml)",
                    meta.nlink()
                ),
            );
        }
    }

    /// Checks the item in directory `rel` (`col/<rep>`): its item.toml loads, no other
    /// directory names its IBI, then its IBIp, its files and its references to items
    /// here; its IBIp and next edition are kept for the checks across items.
    fn check_item(&mut self, rel: &str, rep: Rep) {
        let toml_rel = format!("{rel}/item.toml");
        let loaded = self.load_item(rel, &toml_rel, &rep);
        self.check_same_ibi(rel, &rep, loaded.as_ref().map(|i| i.state));
        let Some(item) = loaded else {
            return;
        };
        if let Some(p) = &item.ibip {
            self.check_ibip(rel, &toml_rel, &rep, p);
        }
        if let Some(next) = &item.nextedition {
            let next = match next {
                Ibi::Rep(r) => Next::Rep(r.canonical().into()),
                Ibi::Ibip(p) => Next::Ibip(p.canonical().into()),
            };
            self.editions
                .insert(rep.canonical().into(), (rep_of_rel(rel).into(), next));
        }
        if let Some(reason) = &item.reason {
            self.check_reason(&item, reason, &toml_rel);
        }
        // A format whose file the data provider cannot answer is not in the index, so
        // that no list names the record in it (a file not servable: check_files says so).
        if let Some((entry, faults)) = crate::oai_index::indexed_entry(&item) {
            for (f, file, e) in faults {
                self.fault(
                    &toml_rel,
                    format!("formats.{f}: {file}: {e}: left out of OAI-PMH answers"),
                );
            }
            self.oai.push(entry);
        }
        if item.contenttype == crate::item::ContentType::Metadata {
            self.check_persistent_urls(rel, &item);
        }
        if item.state == State::Deleted {
            return;
        }
        // Without the service's IBI (archive.toml unread), any item could be the service
        // item, whose URL is no file: its files are not judged (the note says so).
        if item.url.is_none() && self.service.is_some() && !self.is_service_item(&item) {
            self.check_files(&item, &toml_rel);
        }
        self.check_references(&item, &toml_rel);
    }

    /// The order trap: an Archive made before its own resolver existed took the
    /// standard's (urlib.net), and `new` wrote that resolver into the persistent URL of
    /// every item it described then (`dc:identifier` of the metadata item's oai_dc record,
    /// the link of its page, [`super::dublin_core`]). A persistent URL there
    /// (`<publicurl>/<IBI>`, the IBI held here, the record `new`'s: its page links the
    /// item by that URL) whose resolver is not one of `[registration]` is a note, and
    /// with `--fix` is rewritten to name the first of them, in the record and in the page
    /// (`metadata.html`), each file replaced whole.
    fn check_persistent_urls(&mut self, rel: &str, item: &Item) {
        let (Some(config), Some(file)) = (self.config.as_ref(), item.formats.get("oai_dc")) else {
            return;
        };
        let publicurls = config.resolver_publicurls();
        let Some(dir) = self
            .col_dir
            .as_ref()
            .and_then(|c| c.item(rep_of_rel(rel)).ok())
        else {
            return;
        };
        let (Some(record), Some(page)) = (
            dir.doc_text(file.as_bytes(), ::ibi::dc::MAX_RECORD).ok(),
            dir.doc_text(b"metadata.html", crate::oai::metadata::MAX_METADATA)
                .ok(),
        ) else {
            return;
        };
        let mut stale = Vec::new();
        let Ok(dc) = ::ibi::dc::DublinCore::parse(&record) else {
            return;
        };
        for id in dc.all("identifier").map(str::to_string) {
            let Some((publicurl, ibi)) = split_persistent_url(&id) else {
                continue;
            };
            // Written by `new`: its page links the item described by that URL. Records
            // made otherwise (another Archive's, copied) are their makers' to cite by.
            let by_new = super::dublin_core::described_link(&id);
            if publicurls.contains(&publicurl) || !self.holds(&ibi) || !page.contains(&by_new) {
                continue;
            }
            stale.push((id.clone(), config.persistent_url(ibi.as_str()), publicurl));
        }
        let record_rel = format!("{rel}/doc/{file}");
        for (old, new, publicurl) in stale {
            let said = format!(
                "dc:identifier {old} names the resolver {publicurl}, which [registration] of archive.toml does not name"
            );
            if !self.fix {
                self.report(
                    Kind::Note,
                    &record_rel,
                    None,
                    format!("{said}: ibi-archive check --fix rewrites it to {new}"),
                );
                continue;
            }
            let (old_x, new_x) = (
                super::dublin_core::xml_escape(&old),
                super::dublin_core::xml_escape(&new),
            );
            let mut done = Vec::new();
            for name in [file.as_str(), "metadata.html"] {
                let Ok(text) = dir.doc_text(name.as_bytes(), crate::oai::metadata::MAX_METADATA)
                else {
                    continue;
                };
                if !text.contains(&old_x) {
                    continue;
                }
                match dir.replace_doc(name, text.replace(&old_x, &new_x).as_bytes()) {
                    Ok(()) => done.push(name.to_string()),
                    Err(e) => self.fault(
                        format!("{rel}/doc/{name}"),
                        format!("{said}; cannot rewrite it: {e}"),
                    ),
                }
            }
            if !done.is_empty() {
                self.report(
                    Kind::Note,
                    &record_rel,
                    None,
                    format!("{said}: rewritten to {new} in {}", done.join(" and ")),
                );
            }
        }
    }

    /// The item in directory `rel`, opened from col/ and loaded as the service loads it;
    /// `None`, with the fault reported, when it cannot be.
    fn load_item(&mut self, rel: &str, toml_rel: &str, rep: &Rep) -> Option<Item> {
        match self.col_dir.as_ref()?.item(rep_of_rel(rel)) {
            Ok(dir) if !dir.has_item_toml() => {
                self.fault(
                    rel,
                    "no item.toml: the service treats this directory as absent",
                );
                None
            }
            Ok(dir) => match Item::load(&dir, rep.clone()) {
                Ok(item) => Some(item),
                Err(e) => {
                    self.report(Kind::Fault, toml_rel, e.at, e.message);
                    None
                }
            },
            Err(e) => {
                self.fault(rel, format!("cannot be opened as an item: {e}"));
                None
            }
        }
    }

    /// A tombstone's `reason` is shown on its landing page: only a tombstone's, and at
    /// most [`MAX_REASON`] bytes of it.
    fn check_reason(&mut self, item: &Item, reason: &str, toml_rel: &str) {
        if item.state != State::Deleted {
            self.fault(
                toml_rel,
                format!(
                    "reason is for tombstones (state = \"Deleted\"), not an item in state {}: no page shows it",
                    item.state.as_str()
                ),
            );
        } else if reason.len() > MAX_REASON {
            self.fault(
                toml_rel,
                format!(
                    "reason is {} bytes long: the landing page shows only its first {MAX_REASON}",
                    reason.len()
                ),
            );
        } else if reason.trim().is_empty() {
            self.fault(toml_rel, "reason is empty: give one, or leave the key out");
        }
    }

    /// The item's IBIp must code its directory's date (else the IBIp lookup cannot find
    /// it) and be recorded by no other item.
    fn check_ibip(&mut self, rel: &str, toml_rel: &str, rep: &Rep, p: &Ibip) {
        let coded = p.date().rep_suffix();
        if coded != rep.suffix() {
            self.fault(
                toml_rel,
                format!(
                    "ibip {p} codes the date {coded}, not this directory's {}; the IBIp lookup cannot find this item",
                    rep.suffix()
                ),
            );
        }
        let key: Box<str> = p.canonical().into();
        if let Some(other) = self.ibips.get(&key) {
            let other = other.clone();
            self.fault(
                toml_rel,
                format!("ibip {p} is also recorded by col/{other}/item.toml"),
            );
        } else {
            self.ibips.insert(key, rep_of_rel(rel).into());
        }
    }

    /// The IBIs the item names (next edition, metadata, translations) that this Archive
    /// does not hold: one note each.
    fn check_references(&mut self, item: &Item, toml_rel: &str) {
        let mut refs: Vec<(String, &Ibi)> = Vec::new();
        if let Some(n) = &item.nextedition {
            refs.push(("nextedition".into(), n));
        }
        if let Some(m) = &item.metadata {
            refs.push(("metadata".into(), m));
        }
        for (lang, t) in &item.translations {
            refs.push((format!("translations.{lang}"), t));
        }
        for (field, target) in refs {
            if !self.holds(target) {
                self.report(
                    Kind::Note,
                    toml_rel,
                    None,
                    format!("{field} {target}: not in this Archive, so the resolver looks for it in the other Archives"),
                );
            }
        }
    }

    /// Whether this Archive holds `ibi`: a directory spelling the rep (a fault there is
    /// reported on it), or an item the service's IBIp lookup finds.
    fn holds(&self, ibi: &Ibi) -> bool {
        match ibi {
            Ibi::Rep(r) => self.holds_rep(r),
            Ibi::Ibip(_) => self.store.find(ibi).item.is_some(),
        }
    }

    fn is_service_item(&self, item: &Item) -> bool {
        match &self.service {
            Some(Ibi::Rep(r)) => *r == item.rep,
            Some(Ibi::Ibip(p)) => item.ibip.as_ref() == Some(p),
            None => false,
        }
    }

    fn check_files(&mut self, item: &Item, toml_rel: &str) {
        let Some(dir) = item.handle.clone() else {
            return;
        };
        match &item.target {
            Some(t) => {
                if let Err(e) = dir.stored_doc_name(t.as_bytes()) {
                    self.fault(toml_rel, not_servable("target", t, &e));
                }
            }
            None => match dir.default_target() {
                Err(_) => self.fault(toml_rel, "no doc/ folder, so no target file"),
                Ok(t) if !served(&dir, &t) => self.fault(
                    toml_rel,
                    "no target given, and doc/ holds neither a single file nor index.html",
                ),
                Ok(_) => {}
            },
        }
        for (format, file) in &item.formats {
            if let Err(e) = dir.stored_doc_name(file.as_bytes()) {
                self.fault(
                    toml_rel,
                    not_servable(&format!("formats.{format}"), file, &e),
                );
            }
        }
    }

    /// Whether a directory for the rep exists, under any spelling of its prefix.
    fn holds_rep(&self, r: &Rep) -> bool {
        let key = prefix_of_canonical(r.canonical());
        let Some(group) = self.groups.get(key) else {
            return false;
        };
        group.iter().any(|(sub, wp)| {
            std::fs::symlink_metadata(
                self.col
                    .join(sub)
                    .join(wp)
                    .join(r.year())
                    .join(r.day_time()),
            )
            .is_ok()
        })
    }

    /// Another directory under an equal prefix that sorts before this one and names the
    /// same IBI.
    fn check_same_ibi(&mut self, rel: &str, rep: &Rep, state: Option<State>) {
        let key = prefix_of_canonical(rep.canonical());
        let Some(group) = self.groups.get(key) else {
            return;
        };
        let here = (rep.subdomain().to_string(), rep.word_port().to_string());
        let earlier = group.iter().filter(|g| **g < here).find_map(|(sub, wp)| {
            let other = format!("{sub}/{wp}/{}", rep.suffix());
            std::fs::symlink_metadata(self.col.join(&other))
                .is_ok()
                .then_some(other)
        });
        let Some(other) = earlier else {
            return;
        };
        let there = Rep::parse(&other)
            .ok()
            .and_then(|r| {
                let dir = self.col_dir.as_ref()?.item(&other).ok()?;
                Item::load(&dir, r).ok()
            })
            .map(|i| i.state);
        let shown = |s: Option<State>| s.map_or("unreadable", State::as_str);
        self.fault(
            rel,
            format!(
                "the same IBI as col/{other} ({} here, {} there)",
                shown(state),
                shown(there)
            ),
        );
    }

    /// Loops of next editions among the items here: one fault per loop.
    fn check_edition_loops(&mut self) {
        let resolve = |next: &Next, ibips: &HashMap<Box<str>, Box<str>>| -> Option<String> {
            match next {
                Next::Rep(canonical) => Some(canonical.to_string()),
                Next::Ibip(upper) => {
                    let rep = ibips.get(upper)?;
                    Rep::parse(rep).ok().map(|r| r.canonical().to_string())
                }
            }
        };
        let mut starts: Vec<&Box<str>> = self.editions.keys().collect();
        starts.sort();
        // 0 unseen, 1 on the current path, 2 done.
        let mut mark: HashMap<&str, u8> = HashMap::new();
        let mut loops: Vec<(String, String)> = Vec::new();
        for start in starts {
            if mark.get(&**start).copied().unwrap_or(0) != 0 {
                continue;
            }
            let mut path: Vec<&str> = Vec::new();
            let mut node: Option<&str> = Some(start);
            while let Some(n) = node {
                match mark.get(n).copied().unwrap_or(0) {
                    1 => {
                        let at = path.iter().position(|p| *p == n).expect("on the path");
                        let cycle: Vec<&str> = path[at..].to_vec();
                        let shown: Vec<&str> =
                            cycle.iter().map(|c| &*self.editions[*c].0).collect();
                        let first = (0..shown.len()).min_by_key(|&i| shown[i]).unwrap_or(0);
                        let mut line: Vec<&str> = Vec::new();
                        for i in 0..=shown.len() {
                            line.push(shown[(first + i) % shown.len()]);
                        }
                        loops.push((
                            format!("col/{}/item.toml", shown[first]),
                            format!("next editions loop: {}", line.join(" -> ")),
                        ));
                        break;
                    }
                    2 => break,
                    _ => {}
                }
                let Some((key, (_, next))) = self.editions.get_key_value(n) else {
                    break;
                };
                mark.insert(key, 1);
                path.push(key);
                node = resolve(next, &self.ibips)
                    .and_then(|k| self.editions.get_key_value(k.as_str()).map(|(k, _)| &**k));
            }
            for p in path {
                mark.insert(p, 2);
            }
        }
        for (path, message) in loops {
            self.fault(path, message);
        }
    }
}

/// A persistent URL, `<publicurl>/<IBI>`: its resolver's public URL (spelt as
/// [`crate::config::publicurl_spelt`] spells one: the scheme in lower case, no default
/// port) and the IBI; `None` for anything else.
fn split_persistent_url(url: &str) -> Option<(String, Ibi)> {
    let after = url.find("://")? + 3;
    // The public URL may have a path of its own: the IBI is the first tail that is one.
    let (slash, ibi) = url[after..]
        .match_indices('/')
        .find_map(|(i, _)| Some((after + i, Ibi::parse(&url[after + i + 1..]).ok()?)))?;
    let publicurl = crate::config::publicurl_spelt(&url[..slash]);
    Some((publicurl, ibi))
}

/// An archive.toml that does not load as a whole, as a TOML table, if it reads as one.
fn table_of(path: &Path) -> Option<toml::Table> {
    let text = std::fs::read_to_string(path).ok()?;
    toml::from_str(&text).ok()
}

/// `archiveserviceibi` of such a table, if valid: its item is still the service item, and
/// must not be taken for an item without files.
fn service_ibi_of(table: &toml::Table) -> Option<Ibi> {
    Ibi::parse(table.get("archiveserviceibi")?.as_str()?).ok()
}

/// A next edition, as kept for the loop check: a canonical rep or an upper-case IBIp.
enum Next {
    Rep(Box<str>),
    Ibip(Box<str>),
}

/// Checks the part of a rep at `depth` (1–4), the parts above it being valid.
fn check_part(depth: usize, parts: &[String; 4]) -> Result<(), String> {
    let probe = match depth {
        1 => format!("{}/x/2000/01.01.00.00", parts[0]),
        2 => format!("{}/{}/2000/01.01.00.00", parts[0], parts[1]),
        3 => format!("{}/{}/{}/01.01.00.00", parts[0], parts[1], parts[2]),
        _ => parts.join("/"),
    };
    match Rep::parse(&probe) {
        Ok(_) => Ok(()),
        Err(e) => {
            let text = e.to_string();
            let head = format!("invalid rep {}: ", ::ibi::shown(&probe));
            Err(text.strip_prefix(&head).unwrap_or(&text).to_string())
        }
    }
}

/// The canonical prefix of `sub/wp`, if it is a valid one.
fn canonical_prefix(sub: &str, wp: &str) -> Option<String> {
    let rep = Rep::parse(&format!("{sub}/{wp}/2000/01.01.00.00")).ok()?;
    Some(prefix_of_canonical(rep.canonical()).to_string())
}

/// The prefix part of a canonical rep (everything before its last two parts).
fn prefix_of_canonical(canonical: &str) -> &str {
    let mut cut = canonical.len();
    for _ in 0..2 {
        cut = canonical[..cut].rfind('/').unwrap_or(0);
    }
    &canonical[..cut]
}

/// `col/<rep>` → `<rep>`.
fn rep_of_rel(rel: &str) -> &str {
    rel.strip_prefix("col/").unwrap_or(rel)
}

/// Names (UTF-8, not dot-names) of the directories in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.'))
        .collect();
    out.sort();
    out
}

/// Whether `file` is a file of doc/ the service serves.
fn served(dir: &ItemDir, file: &[u8]) -> bool {
    dir.stored_doc_name(file).is_ok()
}

/// The fault of a file named in item.toml that cannot be served.
fn not_servable(field: &str, file: &str, why: &Refusal) -> String {
    match why {
        Refusal::Absent | Refusal::BadName | Refusal::Link => {
            format!("{field} {file:?} is not a file in doc/")
        }
        other => format!("{field} {file:?}: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_persistent_url_is_a_public_url_and_an_ibi() {
        let split = |u| split_persistent_url(u).map(|(p, i)| (p, i.to_string()));
        let urlib = Some((
            "http://urlib.net".to_string(),
            "8JMKD3MGP7W/3EPGUE5".to_string(),
        ));
        assert_eq!(split("http://urlib.net/8JMKD3MGP7W/3EPGUE5"), urlib);
        // Spelt as a public URL is: no default port, the scheme in lower case.
        assert_eq!(split("HTTP://urlib.net:80/8JMKD3MGP7W/3EPGUE5"), urlib);
        assert_eq!(
            split("https://r.example.org/ibi/sid.inpe.br/mtc-m19/2013/09.04.12.27.57"),
            Some((
                "https://r.example.org/ibi".to_string(),
                "sid.inpe.br/mtc-m19/2013/09.04.12.27.57".to_string()
            ))
        );
        // No IBI: not one.
        assert_eq!(split("doi:10.1000/182"), None);
        assert_eq!(split("http://example.org/about"), None);
        // The identifiers as the record's reader gives them, unescaped.
        let dc = ::ibi::dc::DublinCore::parse("<oai_dc:dc xmlns:oai_dc=\"http://www.openarchives.org/OAI/2.0/oai_dc/\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:title>x</dc:title>\n  <dc:identifier>http://a.org/B&amp;C</dc:identifier>\n  <dc:identifier>y</dc:identifier></oai_dc:dc>").unwrap();
        assert_eq!(
            dc.all("identifier").collect::<Vec<_>>(),
            ["http://a.org/B&C", "y"]
        );
    }

    #[test]
    fn prefixes_and_parts() {
        assert_eq!(
            canonical_prefix("SID.inpe.br", "mtc-m18@80").unwrap(),
            "sid.inpe.br/mtc-m18"
        );
        assert_eq!(
            prefix_of_canonical("sid.inpe.br/mtc-m18/2009/07.21.13.23"),
            "sid.inpe.br/mtc-m18"
        );
        let parts = [
            "a_b.org".to_string(),
            String::new(),
            String::new(),
            String::new(),
        ];
        assert_eq!(
            check_part(1, &parts).unwrap_err(),
            "subdomain word \"a_b\" holds '_', which is not a letter, digit or '-'"
        );
        let parts = [
            "a.org".into(),
            "w".into(),
            "2009".into(),
            "13.01.00.00".into(),
        ];
        assert!(check_part(4, &parts).is_err());
        assert!(check_part(3, &parts).is_ok());
    }
}
