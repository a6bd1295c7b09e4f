//! The Archive on disk, and what of it may leave the Archive: the one place that says
//! which directories under `col/` are items and which files of an item may be served
//! (which clients may have them is the item's rule, `Item::access`). The service, the
//! file route of the CGI and of `ibi-archive serve`, `check` and the administrator's
//! commands all ask here.
//!
//! Everything below `col/` is reached from a descriptor of `col/` (which may itself be a
//! symbolic link or a mount point), without following any symbolic link on the way —
//! `openat2(2)` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, or, where the kernel lacks
//! it, one `O_NOFOLLOW` open per level — and what was opened is then checked with
//! `fstat`: a file is served only from the descriptor that was checked, so a name swapped
//! for a link, a pipe or another file between a check and a use is never followed (there
//! is no second use of the name).
//!
//! A file of an item may be served when it is a regular file with a single link, inside
//! the item's `doc/`, reached without a symbolic link, and not named `item.toml` or
//! `archive.toml`. A second link could be anywhere on the file system (a hard link to
//! `archive.toml` or to `var/urlkey.secret` looks like any other file in doc/), so a file
//! with more than one is never served.
//!
//! On the web such a file is `/col/<rep>/doc/<file>` ([`push_doc_url_path`]), and the
//! list of an item's files is `/<archiveserviceibi>/filelist/<rep>`, below the service
//! ([`::ibi::persistent::push_file_list_path`]), both under the Archive's base URL: the URLs the service
//! hands out and the paths the web routes answer are those forms, each written by one
//! function and read back by one.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use ::ibi::escape::push_url_path;

/// An item's description, beside its `doc/`.
pub const ITEM_TOML: &str = "item.toml";
/// The folder of an item's files, the only part of an item ever served.
pub const DOC: &str = "doc";
/// Most entries of an item looked at to find its newest modification (an item without
/// `timestamp`); an item with more is given its item.toml's modification time.
pub const MAX_TIMESTAMP_ENTRIES: usize = 4096;
/// Most entries of a doc/ folder read to list its files (the file-list page) or to tell
/// whether it holds a single file (the default target).
pub const MAX_LISTED_ENTRIES: usize = 10_000;

/// Why something below `col/` cannot be had as asked.
#[derive(Debug)]
pub enum Refusal {
    /// Nothing there, or not a directory where one is needed.
    Absent,
    /// A symbolic link on the way (or at the end).
    Link,
    /// Not a regular file: a directory, a named pipe, a device, a socket.
    NotRegular,
    /// A regular file with this many links.
    HardLinks(u64),
    /// A name that cannot be a file of doc/: empty, absolute, `.`/`..`, a backslash or
    /// NUL, or `item.toml`/`archive.toml`.
    BadName,
    /// The file system said no (permissions, I/O).
    Io(io::Error),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Absent => f.write_str("no such file"),
            Refusal::Link => f.write_str("reached through a symbolic link; never served"),
            Refusal::NotRegular => f.write_str("not a regular file; never served"),
            Refusal::HardLinks(n) => write!(f, "has {n} hard links; never served"),
            Refusal::BadName => f.write_str("not a plain name inside doc/"),
            Refusal::Io(e) => write!(f, "{e}"),
        }
    }
}

impl Refusal {
    /// Whether this is a fault of the Archive worth a line in the log (a link, a hard
    /// link, a pipe where a file was expected), rather than a plain absence.
    pub fn is_fault(&self) -> bool {
        matches!(
            self,
            Refusal::Link | Refusal::NotRegular | Refusal::HardLinks(_) | Refusal::Io(_)
        )
    }

    fn of(e: Errno) -> Refusal {
        match e {
            Errno::NOENT | Errno::NOTDIR | Errno::NAMETOOLONG => Refusal::Absent,
            Errno::LOOP | Errno::XDEV => Refusal::Link,
            other => Refusal::Io(other.into()),
        }
    }
}

/// Why the text of a file of doc/ was not read ([`ItemDir::doc_text`]).
#[derive(Debug)]
pub enum DocTextError {
    /// No such servable file.
    Unopened,
    /// Longer than the bytes read (that many).
    TooLarge(u64),
    Io(io::Error),
    NotUtf8,
}

impl std::fmt::Display for DocTextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DocTextError::Unopened => f.write_str("cannot be opened"),
            DocTextError::TooLarge(max) => write!(f, "larger than {max} bytes"),
            DocTextError::Io(e) => write!(f, "{e}"),
            DocTextError::NotUtf8 => f.write_str("not UTF-8"),
        }
    }
}

/// Whether `name` (a path relative to doc/, as bytes) may name a file of doc/: not
/// empty, relative, no empty, `.` or `..` part, no backslash or NUL, and its last part
/// not `item.toml` or `archive.toml`.
pub fn doc_name_ok(name: &[u8]) -> bool {
    if !plain_names(name) || name.contains(&0) || name.contains(&b'\\') {
        return false;
    }
    let last = name.rsplit(|&b| b == b'/').next().unwrap_or_default();
    last != ITEM_TOML.as_bytes() && last != b"archive.toml"
}

/// Appends the URL path of the file `file` of the doc/ of the item `rep` (spelled as its
/// directory is): `/col/<rep>/doc/<file>`, escaped as a URL path (a name may hold any
/// byte; see [`::ibi::escape::push_url_path`]). An empty `file` gives doc/'s own path,
/// `/col/<rep>/doc/`.
pub fn push_doc_url_path(url: &mut String, rep: &str, file: &[u8]) {
    url.push_str("/col/");
    push_url_path(url, rep.as_bytes());
    url.push_str("/doc/");
    push_url_path(url, file);
}

/// A URL path below `/col/`, split: the rep of the item it points into (the four
/// components after `/col/`, as the path spells them) and the rest of the path (empty,
/// or from the `/` after the rep); `None` for any other path.
pub fn split_col_url_path(path: &[u8]) -> Option<(&[u8], &[u8])> {
    split_rep(path.strip_prefix(b"/col/")?)
}

/// A URL path of [`push_doc_url_path`]'s form, split: the rep as the path spells it, and
/// the path below doc/ (`None` for `…/doc` itself, without its slash); `None` for any
/// path that is not below an item's doc/.
pub fn split_doc_url_path(path: &[u8]) -> Option<(&[u8], Option<&[u8]>)> {
    let (rep, rest) = split_col_url_path(path)?;
    match rest.strip_prefix(b"/doc")? {
        b"" => Some((rep, None)),
        below => Some((rep, Some(below.strip_prefix(b"/")?))),
    }
}

/// `path` split after its first four components — a rep, as `col/` nests its
/// directories, `<subdomain>/<word>/<year>/<mm.dd…>` — and the rest (empty, or from the
/// `/` after them); `None` when it has fewer.
pub fn split_rep(path: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut end = 0;
    for i in 0..4 {
        if i > 0 {
            if path.get(end) != Some(&b'/') {
                return None;
            }
            end += 1;
        }
        end += path[end..]
            .iter()
            .position(|&b| b == b'/')
            .unwrap_or(path.len() - end);
    }
    Some(path.split_at(end))
}

/// An Archive's `col/`, opened.
#[derive(Debug)]
pub struct Col {
    fd: OwnedFd,
    path: PathBuf,
}

impl Col {
    /// Opens `<root>/col` (following a symbolic link there: `col/` itself may be one).
    pub fn open(root: &Path) -> io::Result<Col> {
        let path = root.join("col");
        let fd = rfs::open(
            &path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Col { fd, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `col/`'s own status.
    pub fn stat(&self) -> io::Result<rfs::Stat> {
        Ok(rfs::fstat(&self.fd)?)
    }

    /// The status of `rel` below col/ (one of its two listed levels), following a link
    /// at its end as a listing would.
    pub fn stat_at(&self, rel: &str) -> io::Result<rfs::Stat> {
        Ok(rfs::statat(&self.fd, rel, AtFlags::empty())?)
    }

    /// The names in `rel` (a directory below col/, or "" for col/ itself) that may be
    /// directories (directories, and links, which a lookup then refuses), valid UTF-8,
    /// not starting with a dot; sorted. Empty when it cannot be read.
    pub fn dir_names(&self, rel: &str) -> Vec<String> {
        let opened = if rel.is_empty() {
            rfs::openat(
                &self.fd,
                ".",
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(Refusal::of)
        } else {
            open_beneath(
                self.fd.as_fd(),
                rel.as_bytes(),
                OFlags::RDONLY | OFlags::DIRECTORY,
            )
        };
        let Ok(fd) = opened else {
            return Vec::new();
        };
        let mut names = Vec::new();
        let Ok(mut dir) = rfs::Dir::new(fd) else {
            return names;
        };
        while let Some(Ok(entry)) = dir.read() {
            let kind = entry.file_type();
            if !matches!(
                kind,
                FileType::Directory | FileType::Symlink | FileType::Unknown
            ) {
                continue;
            }
            let Ok(name) = entry.file_name().to_str() else {
                continue;
            };
            if name.starts_with('.') {
                continue;
            }
            names.push(name.to_string());
        }
        names.sort();
        names
    }

    /// Whether anything is at `col/<rel>`: a probe, cheaper than [`Col::item`] where
    /// most candidates are not there (an IBIp lookup tries one per prefix); what it finds
    /// is then opened by [`Col::item`], which alone decides.
    pub fn has(&self, rel: &str) -> bool {
        rfs::statat(&self.fd, rel, AtFlags::SYMLINK_NOFOLLOW).is_ok()
    }

    /// The item directory `col/<rel>` (`<subdomain>/<word>/<year>/<mm.dd…>`), reached
    /// without any symbolic link.
    pub fn item(&self, rel: &str) -> Result<ItemDir, Refusal> {
        match openat_beneath(
            self.fd.as_fd(),
            rel.as_bytes(),
            OFlags::PATH | OFlags::DIRECTORY,
        ) {
            Ok(fd) => Ok(ItemDir {
                fd: Arc::new(fd),
                path: self.path.join(rel),
            }),
            // ENOTDIR: a link or a file at the end (or on the way); tell which, so that
            // a link is named in the log. A plain miss (ENOENT) costs nothing more.
            Err(Errno::NOTDIR) if self.is_link_on_the_way(rel) => Err(Refusal::Link),
            Err(e) => Err(Refusal::of(e)),
        }
    }

    fn is_link_on_the_way(&self, rel: &str) -> bool {
        let mut at = 0;
        for part in rel.split('/') {
            at += part.len();
            match rfs::statat(&self.fd, &rel[..at], AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => return true,
                Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Directory => {}
                _ => return false,
            }
            at += 1;
        }
        false
    }
}

/// One directory of col/'s upper levels (col/ itself, a subdomain, a word, a year), as
/// [`Col::upper_dirs`] finds it: its path below col/ (empty for col/) and what moves
/// whenever an entry of it is added, removed or renamed, and cannot be set back (unlike
/// the modification time, which `touch` and `rsync -t` set): its change time, and its
/// inode (another directory in its place).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpperDir {
    pub rel: Vec<u8>,
    pub ino: u64,
    /// Its change time: seconds and nanoseconds.
    pub changed: (i64, i64),
}

impl Col {
    /// The directories above the items, whose change times move when an item (or a
    /// year, a word, a subdomain) is added below them, removed or renamed: col/ itself,
    /// its subdomains and their words (the prefixes), then the years of each prefix, in
    /// that order and each level in the order of the names; at most `max` of them, and
    /// whether that was all (a listing is read no further than the bound leaves room
    /// for: cut, it keeps the names it gave first, the same while the directory stays
    /// the same). Reached from col/'s descriptor without following any link
    /// (a link in the place of one is not gone into: its parent's change time tells that
    /// it came or went); names starting with a dot are left out, as every lookup leaves
    /// them. Nothing is read but these directories' entries: no item is opened.
    pub fn upper_dirs(&self, max: usize) -> (Vec<UpperDir>, bool) {
        let mut out: Vec<UpperDir> = Vec::new();
        let read = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let upper = |rel: Vec<u8>, st: &rfs::Stat| UpperDir {
            rel,
            ino: st.st_ino,
            changed: (st.st_ctime, st.st_ctime_nsec as i64),
        };
        let Ok(top) = rfs::openat(&self.fd, ".", read, Mode::empty()) else {
            return (out, false);
        };
        let Ok(st) = rfs::fstat(&top) else {
            return (out, false);
        };
        if max == 0 {
            return (out, false);
        }
        out.push(upper(Vec::new(), &st));
        // Every listing is read only as far as the bound leaves room for: the work and
        // the memory of a stamp are those of `max` directories, whatever col/ holds.
        let (subs, mut complete) = subdirectory_names(&top, max - out.len());
        let mut prefixes: Vec<Vec<u8>> = Vec::new();
        for sub in subs {
            if out.len() + prefixes.len() >= max {
                complete = false;
                break;
            }
            let Ok(fd) = rfs::openat(&top, sub.as_slice(), read, Mode::empty()) else {
                continue;
            };
            let Ok(st) = rfs::fstat(&fd) else {
                continue;
            };
            out.push(upper(sub.clone(), &st));
            let (words, all) = subdirectory_names(&fd, max - out.len() - prefixes.len());
            complete &= all;
            prefixes.extend(
                words
                    .into_iter()
                    .map(|word| [sub.as_slice(), b"/", word.as_slice()].concat()),
            );
        }
        // The words, then their years (stat'ed from the word's descriptor, no link
        // followed), kept apart to come after every word.
        let room = max - out.len() - prefixes.len();
        let mut years: Vec<UpperDir> = Vec::new();
        for prefix in prefixes {
            let Ok(fd) = open_beneath(top.as_fd(), &prefix, OFlags::RDONLY | OFlags::DIRECTORY)
            else {
                continue;
            };
            let Ok(st) = rfs::fstat(&fd) else {
                continue;
            };
            out.push(upper(prefix.clone(), &st));
            let (names, all) = subdirectory_names(&fd, room - years.len());
            complete &= all;
            for year in names {
                let Ok(st) = rfs::statat(&fd, year.as_slice(), AtFlags::SYMLINK_NOFOLLOW) else {
                    continue;
                };
                if FileType::from_raw_mode(st.st_mode) == FileType::Directory {
                    years.push(upper(
                        [prefix.as_slice(), b"/", year.as_slice()].concat(),
                        &st,
                    ));
                }
            }
        }
        out.extend(years);
        (out, complete)
    }
}

/// The names in the directory `dir` that may be directories (directories, and entries
/// whose type the listing does not give), not starting with a dot, sorted; at most
/// `limit` of them (the first the listing gives), and whether that was all.
fn subdirectory_names(dir: &OwnedFd, limit: usize) -> (Vec<Vec<u8>>, bool) {
    let mut names = Vec::new();
    let Ok(own) = rustix::io::dup(dir) else {
        return (names, false);
    };
    let Ok(mut listing) = rfs::Dir::new(own) else {
        return (names, false);
    };
    let mut all = true;
    while let Some(Ok(entry)) = listing.read() {
        if !matches!(entry.file_type(), FileType::Directory | FileType::Unknown) {
            continue;
        }
        let name = entry.file_name().to_bytes();
        if name.starts_with(b".") {
            continue;
        }
        if names.len() == limit {
            all = false;
            break;
        }
        names.push(name.to_vec());
    }
    names.sort();
    (names, all)
}

/// An item's directory, opened (`O_PATH`): its item.toml and doc/ are reached from it.
#[derive(Debug, Clone)]
pub struct ItemDir {
    fd: Arc<OwnedFd>,
    path: PathBuf,
}

/// A file of doc/, opened and checked: serve these bytes.
#[derive(Debug)]
pub struct DocFile {
    pub file: File,
    pub len: u64,
    /// Seconds since the epoch of its last modification.
    pub modified: i64,
    /// What its entity tag is made of, from the same fstat.
    pub stamp: Stamp,
}

/// What tells one version of a file's bytes from another (`download::etag`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub inode: u64,
    pub len: u64,
    /// Nanoseconds since the epoch of its last modification, and of its last change
    /// (of its bytes or its inode: no one sets that back).
    pub modified_ns: i128,
    pub changed_ns: i128,
}

/// What a name in doc/ leads to.
#[derive(Debug)]
pub enum DocEntry {
    File(DocFile),
    /// A directory inside doc/ (or doc/ itself).
    Dir,
}

/// The files of a doc/ folder, as the file-list page shows them.
#[derive(Debug, Default)]
pub struct DocListing {
    /// Each servable file: its path below doc/ (bytes as stored) and its size.
    pub files: Vec<(Vec<u8>, u64)>,
    /// Whether every entry was looked at (false: the listing stopped at a bound).
    pub complete: bool,
    /// Entries read but not looked at once `max_files` were listed (files, folders,
    /// anything): what a page can say it left out, without looking.
    pub unlisted: usize,
    /// Whether the listing stopped at [`MAX_LISTED_ENTRIES`] entries read: then more
    /// than [`DocListing::unlisted`] were left out.
    pub exhausted: bool,
}

impl ItemDir {
    /// `col/<rep>`, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads item.toml, up to `max` bytes: opened without following a symbolic link and
    /// without blocking (a named pipe in its place must not stall a request); what it is
    /// is asked only when reading or parsing fails, so the usual item costs no `stat`.
    /// `parse` turns the text into a value; errors are messages for the log.
    pub fn read_item_toml<T>(
        &self,
        max: u64,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<T, String> {
        let fd = rfs::openat(
            &*self.fd,
            ITEM_TOML,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::LOOP => "is a symbolic link".to_string(),
            e => io::Error::from(e).to_string(),
        })?;
        let file = File::from(fd);
        let not_regular = || {
            rfs::fstat(&file)
                .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) != FileType::RegularFile)
        };
        // Room for a usual item.toml, so it is read in one call.
        let mut text = String::with_capacity(4096);
        let parsed = match (&file).take(max + 1).read_to_string(&mut text) {
            Ok(_) if text.len() as u64 > max => Err(format!("larger than {max} bytes")),
            Ok(_) => parse(&text),
            Err(e) => Err(e.to_string()),
        };
        parsed.map_err(|message| match not_regular() {
            true => "not a regular file".to_string(),
            false => message,
        })
    }

    /// Opens `name` below doc/ for serving: a regular file with one link, or a
    /// directory (for its index page).
    pub fn open_doc(&self, name: &[u8]) -> Result<DocEntry, Refusal> {
        let fd = self.doc_at(name, OFlags::RDONLY | OFlags::NONBLOCK)?;
        let st = rfs::fstat(&fd).map_err(|e| Refusal::Io(e.into()))?;
        if FileType::from_raw_mode(st.st_mode) == FileType::Directory {
            return Ok(DocEntry::Dir);
        }
        servable(&st)?;
        Ok(DocEntry::File(DocFile {
            file: File::from(fd),
            len: st.st_size as u64,
            modified: st.st_mtime,
            stamp: Stamp {
                inode: st.st_ino,
                len: st.st_size as u64,
                modified_ns: i128::from(st.st_mtime) * 1_000_000_000 + i128::from(st.st_mtime_nsec),
                changed_ns: i128::from(st.st_ctime) * 1_000_000_000 + i128::from(st.st_ctime_nsec),
            },
        }))
    }

    /// Whether `name` below doc/ is a file that may be served (as [`ItemDir::open_doc`]
    /// would serve it), without opening it for reading.
    pub fn doc_file_ok(&self, name: &[u8]) -> Result<(), Refusal> {
        let fd = self.doc_at(name, OFlags::PATH)?;
        let st = rfs::fstat(&fd).map_err(|e| Refusal::Io(e.into()))?;
        servable(&st)
    }

    /// The name under which `name` is stored in doc/ and may be served; a name given
    /// as UTF-8 also finds the same name stored as Latin-1 bytes (file names of older
    /// Archives).
    pub fn stored_doc_name(&self, name: &[u8]) -> Result<Vec<u8>, Refusal> {
        match self.doc_file_ok(name) {
            Ok(()) => Ok(name.to_vec()),
            Err(Refusal::Absent) => match latin1_of(name) {
                Some(latin1) => self.doc_file_ok(&latin1).map(|()| latin1),
                None => Err(Refusal::Absent),
            },
            Err(e) => Err(e),
        }
    }

    /// item.toml's default target: the only file in doc/, else `index.html` (also when
    /// doc/ holds more than [`MAX_LISTED_ENTRIES`] entries to look through).
    pub fn default_target(&self) -> Result<Vec<u8>, Refusal> {
        let mut files = Vec::with_capacity(2);
        let mut seen = 0;
        let fd = open_beneath(
            self.fd.as_fd(),
            DOC.as_bytes(),
            OFlags::RDONLY | OFlags::DIRECTORY,
        )?;
        let mut dir = rfs::Dir::new(fd).map_err(|e| Refusal::Io(e.into()))?;
        while let Some(Ok(entry)) = dir.read() {
            seen += 1;
            if seen > MAX_LISTED_ENTRIES || files.len() > 1 {
                break;
            }
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::Unknown => dir
                    .fd()
                    .ok()
                    .and_then(|d| rfs::statat(d, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW).ok())
                    .map_or(FileType::Unknown, |st| FileType::from_raw_mode(st.st_mode)),
                kind => kind,
            };
            if kind == FileType::RegularFile {
                files.push(name.to_vec());
            }
        }
        match files.len() {
            1 => Ok(files.pop().unwrap_or_default()),
            _ => Ok(b"index.html".to_vec()),
        }
    }

    /// The servable files below doc/, sorted by path, at most `max_files` of them and
    /// [`MAX_LISTED_ENTRIES`] entries looked at; links, pipes, hard-linked files and
    /// unreadable directories are left out.
    pub fn list_doc(&self, max_files: usize) -> DocListing {
        let mut listing = DocListing {
            files: Vec::new(),
            complete: true,
            ..DocListing::default()
        };
        let Ok(fd) = open_beneath(
            self.fd.as_fd(),
            DOC.as_bytes(),
            OFlags::RDONLY | OFlags::DIRECTORY,
        ) else {
            return listing;
        };
        let mut budget = MAX_LISTED_ENTRIES;
        list_into(fd, &mut Vec::new(), max_files, &mut budget, &mut listing, 0);
        listing
    }

    /// The newest modification time (POSIX seconds) of the item directory and
    /// everything in it, links not followed, looking at `max` entries at most (see
    /// [`MAX_TIMESTAMP_ENTRIES`]); `None` when it holds more (the caller then falls back
    /// on item.toml's own). Also the number of entries looked at.
    pub fn newest_mtime(&self, max: usize) -> (Option<i64>, usize) {
        let mut budget = max;
        let newest = (|| {
            let mut newest = rfs::fstat(&*self.fd).ok()?.st_mtime;
            let fd = rfs::openat(
                &*self.fd,
                ".",
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok()?;
            newest_into(fd, &mut newest, &mut budget, 0)?;
            Some(newest)
        })();
        (newest, max - budget)
    }

    /// Whether the item directory holds an entry named item.toml (of any kind).
    pub fn has_item_toml(&self) -> bool {
        rfs::statat(&*self.fd, ITEM_TOML, AtFlags::SYMLINK_NOFOLLOW).is_ok()
    }

    /// item.toml's own status (a link there is not followed: its status is the link's),
    /// from the item's descriptor.
    pub fn item_toml_stat(&self) -> io::Result<rfs::Stat> {
        Ok(rfs::statat(
            &*self.fd,
            ITEM_TOML,
            AtFlags::SYMLINK_NOFOLLOW,
        )?)
    }

    /// item.toml's modification time.
    pub fn item_toml_mtime(&self) -> Option<i64> {
        rfs::statat(&*self.fd, ITEM_TOML, AtFlags::SYMLINK_NOFOLLOW)
            .ok()
            .map(|st| st.st_mtime)
    }

    /// `doc/<name>` opened with `flags`, after the name is checked.
    fn doc_at(&self, name: &[u8], flags: OFlags) -> Result<OwnedFd, Refusal> {
        let dir_request = name.is_empty() || name.ends_with(b"/");
        let trimmed = name.strip_suffix(b"/").unwrap_or(name);
        if !trimmed.is_empty() && !doc_name_ok(trimmed) {
            return Err(Refusal::BadName);
        }
        let mut rel = Vec::with_capacity(DOC.len() + 1 + trimmed.len());
        rel.extend_from_slice(DOC.as_bytes());
        if !trimmed.is_empty() {
            rel.push(b'/');
            rel.extend_from_slice(trimmed);
        }
        let flags = if dir_request {
            flags | OFlags::DIRECTORY
        } else {
            flags
        };
        open_beneath(self.fd.as_fd(), &rel, flags)
    }
}

/// Opens the directory `path`, named by the administrator (a link there is followed),
/// so that what is below it is reached with [`open_file_beneath`].
pub fn open_named_dir(path: &Path) -> io::Result<OwnedFd> {
    Ok(rfs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Opens `rel` below the directory `dir` for reading: a regular file with one link,
/// reached without any symbolic link — what may be served, and so what `new DIR`
/// copies into an item (a link inside DIR could lead to any file, such as archive.toml).
pub fn open_file_beneath(dir: BorrowedFd<'_>, rel: &[u8]) -> Result<File, Refusal> {
    let fd = open_beneath(dir, rel, OFlags::RDONLY | OFlags::NONBLOCK)?;
    let st = rfs::fstat(&fd).map_err(|e| Refusal::Io(e.into()))?;
    servable(&st).map(|()| File::from(fd))
}

/// The number of links of a file (`st_nlink` is narrower on some targets).
#[allow(clippy::useless_conversion)]
fn links(st: &rfs::Stat) -> u64 {
    u64::from(st.st_nlink)
}

/// Whether an opened entry of doc/ may be served.
fn servable(st: &rfs::Stat) -> Result<(), Refusal> {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile if st.st_nlink == 1 => Ok(()),
        FileType::RegularFile => Err(Refusal::HardLinks(links(st))),
        FileType::Symlink => Err(Refusal::Link),
        _ => Err(Refusal::NotRegular),
    }
}

/// Deepest directory level walked below doc/ or an item.
const MAX_DEPTH: usize = 32;

/// Lists the directory `fd` (whose path below doc/ is `prefix`) into `out`, sorted,
/// depth first.
fn list_into(
    fd: OwnedFd,
    prefix: &mut Vec<u8>,
    max_files: usize,
    budget: &mut usize,
    out: &mut DocListing,
    depth: usize,
) {
    let Ok(mut dir) = rfs::Dir::new(fd) else {
        return;
    };
    let mut names: Vec<Vec<u8>> = Vec::new();
    while let Some(entry) = dir.read() {
        let Ok(entry) = entry else {
            break;
        };
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        if *budget == 0 {
            out.complete = false;
            out.exhausted = true;
            break;
        }
        *budget -= 1;
        names.push(name.to_vec());
    }
    names.sort();
    let Ok(dfd) = dir.fd() else {
        return;
    };
    for (i, name) in names.iter().enumerate() {
        if out.files.len() >= max_files {
            out.complete = false;
            out.unlisted += names.len() - i;
            return;
        }
        let Ok(st) = rfs::statat(dfd, name.as_slice(), AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        let at = prefix.len();
        if !prefix.is_empty() {
            prefix.push(b'/');
        }
        prefix.extend_from_slice(name);
        match FileType::from_raw_mode(st.st_mode) {
            FileType::Directory if depth < MAX_DEPTH => {
                if let Ok(sub) = open_beneath(dfd, name, OFlags::RDONLY | OFlags::DIRECTORY) {
                    list_into(sub, prefix, max_files, budget, out, depth + 1);
                }
            }
            _ if servable(&st).is_ok() && doc_name_ok(prefix) => {
                out.files.push((prefix.clone(), st.st_size as u64));
            }
            _ => {}
        }
        prefix.truncate(at);
    }
}

/// Raises `newest` to the newest modification time below the directory `fd`; `None`
/// when the budget of entries runs out.
fn newest_into(fd: OwnedFd, newest: &mut i64, budget: &mut usize, depth: usize) -> Option<()> {
    let mut dir = rfs::Dir::new(fd).ok()?;
    let mut subdirs: Vec<Vec<u8>> = Vec::new();
    while let Some(entry) = dir.read() {
        let Ok(entry) = entry else {
            break;
        };
        let name = entry.file_name();
        if name.to_bytes() == b"." || name.to_bytes() == b".." {
            continue;
        }
        *budget = budget.checked_sub(1)?;
        let dfd = dir.fd().ok()?;
        let Ok(st) = rfs::statat(dfd, name, AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        *newest = (*newest).max(st.st_mtime);
        if FileType::from_raw_mode(st.st_mode) == FileType::Directory && depth < MAX_DEPTH {
            subdirs.push(name.to_bytes().to_vec());
        }
    }
    let dfd = dir.fd().ok()?;
    for name in subdirs {
        if let Ok(sub) = open_beneath(dfd, &name, OFlags::RDONLY | OFlags::DIRECTORY) {
            newest_into(sub, newest, budget, depth + 1)?;
        }
    }
    Some(())
}

/// `name` as Latin-1 bytes, when it is UTF-8 with non-ASCII characters that all fit.
fn latin1_of(name: &[u8]) -> Option<Vec<u8>> {
    let s = std::str::from_utf8(name).ok()?;
    if s.is_ascii() {
        return None;
    }
    s.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect()
}

/// Whether openat2(2) answered ENOSYS (or EPERM, as some seccomp filters do) once.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// Opens `rel` (plain names separated by `/`: no empty, `.` or `..` part) below the
/// directory `dir`, following no symbolic link and never leaving `dir`. `flags` get
/// `O_NOFOLLOW` and `O_CLOEXEC`; with `O_PATH` (and not `O_DIRECTORY`) a link at the end
/// is opened itself, as openat2(2) does, and `fstat` tells.
fn open_beneath(dir: BorrowedFd<'_>, rel: &[u8], flags: OFlags) -> Result<OwnedFd, Refusal> {
    openat_beneath(dir, rel, flags).map_err(Refusal::of)
}

/// [`open_beneath`], with the error number (a link on the way is `ELOOP`, a name with
/// an empty, `.` or `..` part `ENOENT`).
fn openat_beneath(dir: BorrowedFd<'_>, rel: &[u8], flags: OFlags) -> Result<OwnedFd, Errno> {
    if !plain_names(rel) {
        return Err(Errno::NOENT);
    }
    let mut flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    // openat2(2) refuses O_PATH with any flag but these three.
    if !flags.contains(OFlags::PATH) {
        flags |= OFlags::NOCTTY;
    }
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        // EAGAIN: a concurrent rename made the kernel give up on a safe walk; once more.
        for _ in 0..2 {
            match rfs::openat2(dir, rel, flags, Mode::empty(), resolve) {
                Ok(fd) => return Ok(fd),
                Err(Errno::AGAIN) => continue,
                Err(Errno::NOSYS | Errno::PERM) => {
                    NO_OPENAT2.store(true, Ordering::Relaxed);
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        if !NO_OPENAT2.load(Ordering::Relaxed) {
            return Err(Errno::AGAIN);
        }
    }
    open_level_by_level(dir, rel, flags)
}

/// Whether `rel` is plain names separated by `/`: none empty, `.` or `..` (one pass: it
/// runs for every candidate directory of a lookup).
fn plain_names(rel: &[u8]) -> bool {
    let (mut len, mut dots) = (0usize, 0usize);
    for &b in rel {
        if b == b'/' {
            if len == 0 || (dots == len && len <= 2) {
                return false;
            }
            (len, dots) = (0, 0);
        } else {
            len += 1;
            dots += usize::from(b == b'.');
        }
    }
    len != 0 && !(dots == len && len <= 2)
}

/// [`open_beneath`] without openat2(2): one `O_NOFOLLOW` open per level, each from the
/// descriptor the level above gave.
fn open_level_by_level(dir: BorrowedFd<'_>, rel: &[u8], flags: OFlags) -> Result<OwnedFd, Errno> {
    let parts: Vec<&[u8]> = rel.split(|&b| b == b'/').collect();
    let (last, above) = parts.split_last().ok_or(Errno::NOENT)?;
    let mut held: Option<OwnedFd> = None;
    for part in above {
        let at = held.as_ref().map_or(dir, |fd| fd.as_fd());
        let step = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let next = rfs::openat(at, *part, step, Mode::empty()).map_err(|e| match e {
            // A link at this level: O_DIRECTORY refuses it as "not a directory".
            Errno::NOTDIR if is_link(at, part) => Errno::LOOP,
            e => e,
        })?;
        held = Some(next);
    }
    let at = held.as_ref().map_or(dir, |fd| fd.as_fd());
    rfs::openat(at, *last, flags, Mode::empty()).map_err(|e| match e {
        Errno::NOTDIR if is_link(at, last) => Errno::LOOP,
        e => e,
    })
}

fn is_link(dir: BorrowedFd<'_>, name: &[u8]) -> bool {
    rfs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink)
}

/// Removes the entry `name` of the directory `dir` and everything below it, from
/// descriptors, following no link (a link is removed, not followed).
fn remove_tree_at(dir: BorrowedFd<'_>, name: &[u8]) -> io::Result<()> {
    let st = rfs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return Ok(rfs::unlinkat(dir, name, AtFlags::empty())?);
    }
    let fd = rfs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut entries = rfs::Dir::new(fd)?;
    let mut names: Vec<Vec<u8>> = Vec::new();
    while let Some(entry) = entries.read() {
        let entry = entry?;
        let n = entry.file_name().to_bytes();
        if n != b"." && n != b".." {
            names.push(n.to_vec());
        }
    }
    let sub = entries.fd()?;
    for n in names {
        remove_tree_at(sub, &n)?;
    }
    Ok(rfs::unlinkat(dir, name, AtFlags::REMOVEDIR)?)
}

/// Changes the administrator's commands make to an item in place, from its directory's
/// descriptor (never by re-resolving its path, which could have been swapped for a link
/// in between).
impl ItemDir {
    /// item.toml's text, as [`ItemDir::read_item_toml`] reads it.
    pub fn item_toml_text(&self, max: u64) -> Result<String, String> {
        self.read_item_toml(max, |text| Ok(text.to_string()))
    }

    /// Replaces item.toml with `bytes` atomically, from the item's descriptor (see
    /// [`::ibi::atomic`]): readers see the old file or the new one.
    pub fn replace_item_toml(&self, bytes: &[u8]) -> io::Result<()> {
        ::ibi::atomic::write_at(self.fd.as_fd(), ITEM_TOML, bytes, 0o644)
    }

    /// The text of the file `name` of doc/, opened as it is served (under its name
    /// stored as Latin-1 bytes too, [`ItemDir::stored_doc_name`]), at most `max` bytes
    /// (a file that grows past them while read is refused too): a record or a page of an
    /// item, read by the landing page, the data provider and `check` alike.
    pub fn doc_text(&self, name: &[u8], max: u64) -> Result<String, DocTextError> {
        let stored = self
            .stored_doc_name(name)
            .map_err(|_| DocTextError::Unopened)?;
        let Ok(DocEntry::File(f)) = self.open_doc(&stored) else {
            return Err(DocTextError::Unopened);
        };
        if f.len > max {
            return Err(DocTextError::TooLarge(max));
        }
        let mut bytes = Vec::with_capacity(f.len as usize);
        (&f.file)
            .take(max + 1)
            .read_to_end(&mut bytes)
            .map_err(DocTextError::Io)?;
        if bytes.len() as u64 > max {
            return Err(DocTextError::TooLarge(max));
        }
        String::from_utf8(bytes).map_err(|_| DocTextError::NotUtf8)
    }

    /// Replaces the file `name` of doc/ (a path below it: `sub/x.xml`) with `bytes`
    /// atomically, from the descriptor of its directory, walked down from the item's as
    /// every file of doc/ is ([`ItemDir::doc_at`]: a plain name, no link followed; see
    /// [`::ibi::atomic`]).
    pub fn replace_doc(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let refused = |r: Refusal| io::Error::other(format!("doc/{name}: {r}"));
        if !doc_name_ok(name.as_bytes()) {
            return Err(refused(Refusal::BadName));
        }
        let (parent, last) = name.rsplit_once('/').unwrap_or(("", name));
        let dir = self
            .doc_at(parent.as_bytes(), OFlags::RDONLY | OFlags::DIRECTORY)
            .map_err(refused)?;
        ::ibi::atomic::write_at(dir.as_fd(), last, bytes, 0o644)
    }

    /// Renames doc/ to `aside` in the same directory (one rename: a web server sees all
    /// of doc/ or none of it); false when there is no doc/.
    pub fn move_doc_aside(&self, aside: &str) -> io::Result<bool> {
        match rfs::renameat(&*self.fd, DOC, &*self.fd, aside) {
            Ok(()) => {
                self.sync();
                Ok(true)
            }
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Removes the entry `name` of the item directory and all below it, following no
    /// link.
    pub fn remove(&self, name: &str) -> io::Result<()> {
        remove_tree_at(self.fd.as_fd(), name.as_bytes())
    }

    /// Makes the directory's entries durable (where directories can be synced).
    fn sync(&self) {
        ::ibi::atomic::sync_dir_at(self.fd.as_fd());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn tree() -> (tempfile::TempDir, Col) {
        let t = tempfile::tempdir().unwrap();
        let item = t.path().join("col/a.b/w/2020/01.02.03.04");
        std::fs::create_dir_all(item.join("doc/sub")).unwrap();
        std::fs::write(item.join("item.toml"), "state = \"Original\"\n").unwrap();
        std::fs::write(item.join("doc/f.pdf"), "pdf").unwrap();
        std::fs::write(item.join("doc/sub/g.txt"), "g").unwrap();
        std::fs::write(t.path().join("secret"), "secret").unwrap();
        symlink(t.path().join("secret"), item.join("doc/link.txt")).unwrap();
        symlink("sub", item.join("doc/sublink")).unwrap();
        std::fs::hard_link(t.path().join("secret"), item.join("doc/hard.txt")).unwrap();
        std::fs::create_dir_all(t.path().join("col/a.b/linked/2020")).unwrap();
        symlink(&item, t.path().join("col/a.b/linked/2020/01.02.03.04")).unwrap();
        symlink(t.path().join("col/a.b/w"), t.path().join("col/a.b/wl")).unwrap();
        let col = Col::open(t.path()).unwrap();
        (t, col)
    }

    fn kind(r: Result<(), Refusal>) -> String {
        match r {
            Ok(()) => "ok".into(),
            Err(e) => format!("{e:?}").split('(').next().unwrap().to_string(),
        }
    }

    #[test]
    fn items_are_reached_without_links() {
        let (_t, col) = tree();
        assert!(col.item("a.b/w/2020/01.02.03.04").is_ok());
        assert!(matches!(
            col.item("a.b/w/2020/01.02.03.05"),
            Err(Refusal::Absent)
        ));
        assert!(matches!(
            col.item("a.b/linked/2020/01.02.03.04"),
            Err(Refusal::Link)
        ));
        assert!(matches!(
            col.item("a.b/wl/2020/01.02.03.04"),
            Err(Refusal::Link)
        ));
        assert!(col.item("a.b/w/../w/2020/01.02.03.04").is_err());
        assert_eq!(col.dir_names(""), ["a.b"]);
        assert_eq!(col.dir_names("a.b"), ["linked", "w", "wl"]);
    }

    #[test]
    fn only_single_link_regular_files_inside_doc_are_served() {
        let (_t, col) = tree();
        let item = col.item("a.b/w/2020/01.02.03.04").unwrap();
        let cases: [(&[u8], &str); 9] = [
            (b"f.pdf", "ok"),
            (b"sub/g.txt", "ok"),
            (b"link.txt", "Link"),
            (b"sublink/g.txt", "Link"),
            (b"hard.txt", "HardLinks"),
            (b"sub", "NotRegular"),
            (b"../item.toml", "BadName"),
            (b"nothing", "Absent"),
            (b"sub/item.toml", "BadName"),
        ];
        for (name, want) in cases {
            assert_eq!(
                kind(item.doc_file_ok(name)),
                want,
                "{}",
                String::from_utf8_lossy(name)
            );
        }
        match item.open_doc(b"f.pdf").unwrap() {
            DocEntry::File(f) => assert_eq!(f.len, 3),
            DocEntry::Dir => panic!("a file"),
        }
        assert!(matches!(item.open_doc(b"sub/"), Ok(DocEntry::Dir)));
        assert!(matches!(item.open_doc(b"link.txt"), Err(Refusal::Link)));
    }

    #[test]
    fn the_level_by_level_walk_refuses_what_openat2_refuses() {
        let (t, _col) = tree();
        let col = rfs::open(
            t.path().join("col"),
            OFlags::PATH | OFlags::DIRECTORY,
            Mode::empty(),
        )
        .unwrap();
        let cases: [(&[u8], OFlags); 6] = [
            (b"a.b/w/2020/01.02.03.04/doc/f.pdf", OFlags::RDONLY),
            (b"a.b/w/2020/01.02.03.04/doc/link.txt", OFlags::RDONLY),
            (b"a.b/w/2020/01.02.03.04/doc/link.txt", OFlags::PATH),
            (b"a.b/wl/2020/01.02.03.04", OFlags::PATH | OFlags::DIRECTORY),
            (b"a.b/w/2020/01.02.03.04/doc/sublink/g.txt", OFlags::RDONLY),
            (b"a.b/w/2020/missing", OFlags::PATH),
        ];
        // What was opened: a link opened itself (O_PATH) counts as a link.
        let what = |r: Result<OwnedFd, Refusal>| {
            kind(r.and_then(
                |fd| match FileType::from_raw_mode(rfs::fstat(&fd).unwrap().st_mode) {
                    FileType::Symlink => Err(Refusal::Link),
                    _ => Ok(()),
                },
            ))
        };
        for (rel, flags) in cases {
            let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let a = what(open_beneath(col.as_fd(), rel, flags));
            let b = what(open_level_by_level(col.as_fd(), rel, flags).map_err(Refusal::of));
            assert_eq!(a, b, "{}", String::from_utf8_lossy(rel));
        }
    }

    /// A file of doc/ replaced whole, below a folder too (a record `check --fix`
    /// rewrites may be `sub/x.xml`), walked as a file is served: never through a link,
    /// never item.toml, never outside doc/.
    #[test]
    fn doc_files_are_replaced_below_doc_only_and_never_through_a_link() {
        let (t, col) = tree();
        let item = col.item("a.b/w/2020/01.02.03.04").unwrap();
        let doc = t.path().join("col/a.b/w/2020/01.02.03.04/doc");
        item.replace_doc("f.pdf", b"new pdf").unwrap();
        assert_eq!(std::fs::read(doc.join("f.pdf")).unwrap(), b"new pdf");
        item.replace_doc("sub/g.txt", b"new g").unwrap();
        assert_eq!(std::fs::read(doc.join("sub/g.txt")).unwrap(), b"new g");
        for refused in [
            "sublink/g.txt",
            "../item.toml",
            "sub/item.toml",
            "/etc/x",
            "sub/../f.pdf",
        ] {
            assert!(item.replace_doc(refused, b"x").is_err(), "{refused}");
        }
        assert_eq!(std::fs::read(doc.join("sub/g.txt")).unwrap(), b"new g");
        assert_eq!(std::fs::read(t.path().join("secret")).unwrap(), b"secret");
        assert_eq!(
            std::fs::read_dir(&doc).unwrap().count(),
            5,
            "f.pdf, sub, link.txt, sublink, hard.txt: no temporary file left in doc/"
        );
    }

    #[test]
    fn listings_and_timestamps_are_bounded_and_skip_links() {
        let (_t, col) = tree();
        let item = col.item("a.b/w/2020/01.02.03.04").unwrap();
        let l = item.list_doc(100);
        let names: Vec<&[u8]> = l.files.iter().map(|(n, _)| n.as_slice()).collect();
        assert_eq!(names, [b"f.pdf".as_slice(), b"sub/g.txt"]);
        assert!(l.complete);
        let l = item.list_doc(1);
        assert_eq!(l.files.len(), 1);
        assert!(!l.complete);
        // item.toml and doc/; in doc/ f.pdf, sub/, link.txt, sublink, hard.txt; g.txt.
        assert_eq!(item.newest_mtime(100).1, 8);
        assert!(item.newest_mtime(100).0.is_some());
        assert_eq!(item.newest_mtime(5), (None, 5));
    }

    #[test]
    fn plain_names_only() {
        for ok in [&b"a"[..], b"a/b", b"...", b"a/.b/c", b"a..b/..c"] {
            assert!(plain_names(ok), "{}", String::from_utf8_lossy(ok));
        }
        for bad in [
            &b""[..],
            b"/",
            b"/a",
            b"a/",
            b"a//b",
            b".",
            b"..",
            b"a/./b",
            b"a/../b",
            b"../a",
            b"a/..",
        ] {
            assert!(!plain_names(bad), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn doc_names() {
        for ok in [
            &b"a.pdf"[..],
            b"sub/a.pdf",
            b"Relat\xf3rio.pdf",
            b"item.toml.bak",
        ] {
            assert!(doc_name_ok(ok));
        }
        for bad in [
            &b""[..],
            b"/etc/passwd",
            b"../x",
            b"a//b",
            b"./a",
            b"a\\b",
            b"a\0",
            b"item.toml",
            b"x/archive.toml",
        ] {
            assert!(!doc_name_ok(bad), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn doc_urls_are_written_and_read_back_in_one_form() {
        let mut url = String::from("http://a");
        push_doc_url_path(
            &mut url,
            "a.b/c@80/2020/01.02.03.04",
            b"Relat\xf3rio #1.pdf",
        );
        assert_eq!(
            url,
            "http://a/col/a.b/c@80/2020/01.02.03.04/doc/Relat%f3rio%20%231.pdf"
        );
        let path = url.strip_prefix("http://a").unwrap().as_bytes();
        assert_eq!(
            split_doc_url_path(path),
            Some((
                &b"a.b/c@80/2020/01.02.03.04"[..],
                Some(&b"Relat%f3rio%20%231.pdf"[..])
            ))
        );
        let rep = &b"a.b/c/2020/01.02.03.04"[..];
        for (path, want) in [
            (&b"/col/a.b/c/2020/01.02.03.04/doc"[..], Some((rep, None))),
            (
                b"/col/a.b/c/2020/01.02.03.04/doc/",
                Some((rep, Some(&b""[..]))),
            ),
            (
                b"/col/a.b/c/2020/01.02.03.04/doc/d/e",
                Some((rep, Some(&b"d/e"[..]))),
            ),
            (b"/col/a.b/c/2020/01.02.03.04/docs/e", None),
            (b"/col/a.b/c/2020/01.02.03.04/item.toml", None),
            (b"/col/a.b/c/2020/01.02.03.04", None),
            (b"/col/a.b/c/2020", None),
            (b"/var/a.b/c/2020/01.02.03.04/doc/e", None),
        ] {
            assert_eq!(
                split_doc_url_path(path),
                want,
                "{}",
                String::from_utf8_lossy(path)
            );
        }
        assert_eq!(
            split_col_url_path(b"/col/a.b/c/2020/01.02.03.04/item.toml"),
            Some((rep, &b"/item.toml"[..]))
        );
        assert_eq!(split_rep(b"a//c/d/e"), Some((&b"a//c/d"[..], &b"/e"[..])));
        assert_eq!(split_rep(b"a/b/c/d"), Some((&b"a/b/c/d"[..], &b""[..])));
        assert_eq!(split_rep(b"a/b/c"), None);
    }
}
