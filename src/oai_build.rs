//! `var/oai-records` kept up to date by the OAI-PMH data provider itself, so that no
//! request ever walks `col/`: an Archive filled by dropping directories into col/ has no
//! index until one is built, and one built before items were dropped by hand does not
//! list them.
//!
//! - **Stamp.** With the index, `var/oai-records.stamp` says what col/ was when it was
//!   built: a SHA-256 over the inode and change time of every directory above the items
//!   (col/, its subdomains, their words, their years: [`Col::upper_dirs`], at most
//!   [`MAX_STAMPED`] of them). An item added, removed or renamed changes its year's
//!   change time, which nothing can set back; a request of a list compares the stamp with
//!   col/ as it is ([`is_fresh`]): a few hundred `stat`s, bounded, never a walk. The
//!   stamp is believed only when every stamped directory last changed
//!   [`SETTLED_SECS`] or more before it was taken (file systems stamp change times with
//!   a coarse clock: a change within the same tick would leave the same time); a build
//!   waits for that, at most [`MAX_SETTLE_WAIT`], and `check` writes the stamp without
//!   waiting (unsettled: the next request builds the index again).
//! - **Build.** Missing, unreadable or stale, the index is built by [`start`]: one build
//!   at a time (an exclusive lock on `var/oai-records.lock`), a walk of col/ through
//!   [`crate::layout`] (from col/'s descriptor, no link followed), the lines `new` and
//!   `delete` added meanwhile kept, written under `var/items.lock` as `check` writes
//!   it. The build runs apart from the request ([`detach_builds_with`]: a thread of
//!   `serve`, a child process of the CGI in a session of its own) and the request is
//!   answered at once: from the index as it is when there is one (its lines are checked
//!   against each item anyway), else `503` with `Retry-After`. A process that sets no way
//!   (`ibi-archive query`, the tests) builds in the request.
//! - **Pace.** A build begins no sooner after the last one ended than that one lasted
//!   (the lock file records when it began and ended, and how it went): an Archive whose
//!   col/ keeps changing is walked at most half the time.
//! - **Read-only.** Where `var/` cannot be written (a read-only mount), nothing can be
//!   built: without an index the lists answer `503` and the error log says why (run
//!   `ibi-archive check` where it can be written); a stale index is answered as it is,
//!   with the same line.

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::ops::ControlFlow;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rustix::fs::{self as rfs, FlockOperation, Mode, OFlags};
use sha2::{Digest, Sha256};

use crate::item::Item;
use crate::layout::Col;
use crate::oai_index::{self, Entry};
use ::ibi::time::SystemClock;
use ::ibi::Rep;

/// The lock of the builds, and the record of the last one, under `var/`.
pub const LOCK_NAME: &str = "oai-records.lock";
/// The stamp of col/ the index was built from, under `var/`.
pub const STAMP_NAME: &str = "oai-records.stamp";
/// Most directories of col/'s upper levels a stamp covers (col/, subdomains and words
/// first, then years): the bound of a request's check, about a millisecond. Past it, an
/// item added into a year not stamped is listed after the next change elsewhere, or
/// the next `check`.
pub const MAX_STAMPED: usize = 4096;
/// Seconds every stamped directory must have been unchanged for the stamp to be
/// believed (as `var/col-prefixes` asks of its directories).
pub use crate::file_stamp::SETTLED_SECS;
/// Longest a build waits for col/ to settle before it stamps it.
pub const MAX_SETTLE_WAIT: Duration = Duration::from_secs(10);
/// Retry-After while a build of unknown length is under way, in seconds.
const RETRY_UNKNOWN: u64 = 5;
/// Longest Retry-After said.
const RETRY_MAX: u64 = 300;

const STAMP_HEADER: &str = "ibi-archive oai-stamp 1\n";
const LOCK_HEADER: &str = "ibi-archive oai-build 1\n";

/// col/ as a stamp sees it: a digest of its upper directories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeStamp {
    digest: [u8; 32],
    /// Directories stamped.
    pub dirs: usize,
    /// The latest change time among them (seconds).
    pub newest_change: i64,
}

impl TreeStamp {
    /// Stamps col/ as it is now.
    pub fn take(col: &Col) -> TreeStamp {
        let (dirs, _complete) = col.upper_dirs(MAX_STAMPED);
        let mut hash = Sha256::new();
        let mut newest = i64::MIN;
        for d in &dirs {
            hash.update(&d.rel);
            hash.update([0]);
            hash.update(d.ino.to_le_bytes());
            hash.update(d.changed.0.to_le_bytes());
            hash.update(d.changed.1.to_le_bytes());
            newest = newest.max(d.changed.0);
        }
        TreeStamp {
            digest: hash.finalize().into(),
            dirs: dirs.len(),
            newest_change: newest,
        }
    }

    /// Whether every stamped directory last changed [`SETTLED_SECS`] or more before
    /// POSIX second `at`: a change after `at` then moves a change time.
    pub fn settled(&self, at: i64) -> bool {
        crate::file_stamp::settled(self.newest_change, at)
    }

    fn hex(&self) -> String {
        self.digest.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Writes the stamp `stamp`, taken at POSIX second `at`, beside the index (as var/'s
/// owner's); whether it was written.
pub fn write_stamp(var: &Path, stamp: &TreeStamp, at: i64) -> bool {
    let text = format!(
        "{STAMP_HEADER}{} {} {}\n",
        stamp.hex(),
        stamp.dirs,
        u8::from(stamp.settled(at))
    );
    let Ok(dir) = crate::var_owner::open_dir(var) else {
        return false;
    };
    let Ok(owner) = crate::var_owner::owner_for_new(dir.as_fd(), var) else {
        return false;
    };
    ::ibi::atomic::write_owned_at(dir.as_fd(), STAMP_NAME, text.as_bytes(), 0o666, owner).is_ok()
}

/// Whether the index under `var` describes col/ as it is: its stamp is there, was
/// settled when taken, and is col/'s now. Bounded: one small file read and
/// [`MAX_STAMPED`] directories at most.
pub fn is_fresh(var: &Path, col: &Col) -> bool {
    let Some(text) = read_small(&var.join(STAMP_NAME)) else {
        return false;
    };
    let Some(line) = text.strip_prefix(STAMP_HEADER) else {
        return false;
    };
    let mut fields = line.trim_end_matches('\n').split(' ');
    let (Some(digest), Some(_dirs), Some("1"), None) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return false;
    };
    TreeStamp::take(col).hex() == digest
}

/// The text of a small regular file (at most 4 KiB), opened without blocking (a named
/// pipe in its place would stall the request) and without following a link.
fn read_small(path: &Path) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(4096).read_to_string(&mut text).ok()?;
    Some(text)
}

/// How a process runs a build apart from the request that began it: `serve` on a thread
/// of its own, the CGI in a child process detached from the web server. The function
/// runs `work` and returns at once.
pub type Detach = fn(Box<dyn FnOnce() + Send + 'static>) -> io::Result<()>;

static DETACH: OnceLock<Detach> = OnceLock::new();

/// Sets how this process runs builds (once; without it, a build runs in the request).
pub fn detach_builds_with(detach: Detach) {
    let _ = DETACH.set(detach);
}

/// What became of a request to build the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Started {
    /// Built, in this request (a process that set no [`Detach`]).
    Built,
    /// Begun now, apart from the request: done in about `retry_after` seconds.
    Begun { retry_after: u64 },
    /// Another build is under way: done in about `retry_after` seconds.
    UnderWay { retry_after: u64 },
    /// Not begun: the last build ended too recently (in `retry_after` seconds); how it
    /// ended, when it failed.
    Paced {
        retry_after: u64,
        failed: Option<String>,
    },
    /// It cannot be built here: why.
    Impossible(String),
}

/// The last build, as the lock file records it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct LastBuild {
    started: Option<i64>,
    ended: Option<i64>,
    millis: Option<u64>,
    /// `None` while it runs (or when it was cut short).
    outcome: Option<String>,
}

impl LastBuild {
    fn parse(text: &str) -> LastBuild {
        let Some(line) = text.strip_prefix(LOCK_HEADER) else {
            return LastBuild::default();
        };
        let line = line.lines().next().unwrap_or("");
        let mut fields = line.splitn(4, ' ');
        let mut number = || fields.next().and_then(|f| f.parse::<i64>().ok());
        let started = number();
        let ended = number();
        let millis = number().and_then(|m| u64::try_from(m).ok());
        let outcome = fields
            .next()
            .filter(|o| !o.is_empty() && *o != "running")
            .map(str::to_string);
        LastBuild {
            started,
            ended,
            millis,
            outcome,
        }
    }

    /// Seconds it took (rounded up), when known.
    fn seconds(&self) -> Option<u64> {
        self.millis.map(|m| m.div_ceil(1000).max(1))
    }
}

fn clamp_retry(s: u64) -> u64 {
    s.clamp(1, RETRY_MAX)
}

/// The exclusive lock on `var/oai-records.lock`, held for a build.
pub struct BuildLock {
    file: File,
    root: PathBuf,
}

impl BuildLock {
    /// Records the build's beginning (the last build's length kept, for Retry-After).
    fn record_start(&mut self, started: i64, last: &LastBuild) {
        let millis = last.millis.map_or("-".to_string(), |m| m.to_string());
        self.record(&format!("{started} - {millis} running"));
    }

    fn record(&mut self, line: &str) {
        let text = format!("{LOCK_HEADER}{line}\n");
        let _ = self.file.set_len(0);
        let _ = self.file.rewind();
        let _ = self.file.write_all(text.as_bytes());
    }
}

/// Begins a build of the index of the Archive at `root` at POSIX second `now`, unless one
/// is under way or the last ended too recently, the way this process set
/// ([`detach_builds_with`]; none: in the request, unpaced).
pub fn start(root: &Path, now: i64) -> Started {
    start_with(root, now, DETACH.get().copied())
}

/// [`start`], apart from the request by `detach` (paced), else in it.
fn start_with(root: &Path, now: i64, detach: Option<Detach>) -> Started {
    let var = root.join("var");
    let lock_path = var.join(LOCK_NAME);
    let dir = match crate::var_owner::make_and_open_var(&var) {
        Ok(d) => d,
        Err(e) => return Started::Impossible(format!("{}: {e}", var.display())),
    };
    let owner = match crate::var_owner::owner_for_new(dir.as_fd(), &var) {
        Ok(o) => o,
        Err(e) => return Started::Impossible(e.to_string()),
    };
    let fd = match rfs::openat(
        &dir,
        LOCK_NAME,
        OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o666),
    ) {
        Ok(fd) => fd,
        Err(e) => {
            return Started::Impossible(format!("{}: {}", lock_path.display(), io::Error::from(e)))
        }
    };
    match rfs::fstat(&fd) {
        Ok(st) if rfs::FileType::from_raw_mode(st.st_mode) == rfs::FileType::RegularFile => {}
        _ => return Started::Impossible(format!("{}: not a regular file", lock_path.display())),
    }
    let _ = ::ibi::atomic::give(fd.as_fd(), owner);
    let mut file = File::from(fd);
    let mut text = String::new();
    let _ = (&file).take(4096).read_to_string(&mut text);
    let last = LastBuild::parse(&text);
    match rfs::flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(rustix::io::Errno::WOULDBLOCK) => {
            let left = match (last.started, last.seconds()) {
                (Some(s), Some(took)) => (s + took as i64 - now).max(1) as u64,
                _ => RETRY_UNKNOWN,
            };
            return Started::UnderWay {
                retry_after: clamp_retry(left),
            };
        }
        Err(e) => {
            return Started::Impossible(format!(
                "{}: cannot lock: {}",
                lock_path.display(),
                io::Error::from(e)
            ))
        }
    }
    if detach.is_some() {
        if let (Some(ended), Some(took)) = (last.ended, last.seconds()) {
            let next = ended.saturating_add(took as i64);
            if now < next {
                let failed = last.outcome.clone().filter(|o| o != "ok");
                return Started::Paced {
                    retry_after: clamp_retry((next - now) as u64),
                    failed,
                };
            }
        }
    }
    let _ = file.rewind();
    let mut lock = BuildLock {
        file,
        root: root.to_path_buf(),
    };
    lock.record_start(now, &last);
    let retry_after = clamp_retry(last.seconds().unwrap_or(RETRY_UNKNOWN));
    match detach {
        None => {
            build(lock);
            Started::Built
        }
        Some(detach) => match detach(Box::new(move || build(lock))) {
            Ok(()) => Started::Begun { retry_after },
            Err(e) => Started::Impossible(format!("cannot begin a build: {e}")),
        },
    }
}

/// Builds the index holding `lock`, and records how it went in the lock file.
pub fn build(mut lock: BuildLock) {
    let started = SystemClock::now();
    let clock = Instant::now();
    let outcome = build_index(&lock.root);
    let millis = clock.elapsed().as_millis();
    let ended = SystemClock::now();
    let outcome = match outcome {
        Ok(_) => "ok".to_string(),
        // One line, short: it is read back for the error log.
        Err(e) => {
            let line = ::ibi::logline::clean(&format!("failed: {e}")).into_owned();
            ::ibi::text::cut(&line, 300).into_owned()
        }
    };
    lock.record(&format!("{started} {ended} {millis} {outcome}"));
}

/// Walks col/ and writes the index and its stamp; the number of lines written.
fn build_index(root: &Path) -> Result<usize, String> {
    let col = Col::open(root).map_err(|e| format!("{}: {e}", root.join("col").display()))?;
    // Stamped once col/ has settled (or after MAX_SETTLE_WAIT, unsettled), before the
    // walk: a change during the walk makes the index stale, and is built again.
    let deadline = Instant::now() + MAX_SETTLE_WAIT;
    let (stamp, stamped_at) = loop {
        let stamp = TreeStamp::take(&col);
        let at = SystemClock::now();
        if stamp.settled(at) || Instant::now() >= deadline {
            break (stamp, at);
        }
        let wait = Duration::from_secs((stamp.newest_change + SETTLED_SECS - at).clamp(0, 2) as u64)
            + Duration::from_millis(50);
        std::thread::sleep(wait.min(deadline.saturating_duration_since(Instant::now())));
    };
    let mut entries = Vec::new();
    let _ = walk(&col, "", 0, &mut |rel: &str| {
        if let Some(item) = load(&col, rel) {
            if let Some((entry, _)) = oai_index::indexed_entry(&item) {
                entries.push(entry);
            }
        }
        ControlFlow::Continue(())
    });
    let n = entries.len();
    finish(root, entries, stamped_at, &stamp, stamped_at)?;
    Ok(n)
}

/// The item in `col/<rel>`, if it is one and loads.
fn load(col: &Col, rel: &str) -> Option<Item> {
    let rep = Rep::parse(rel).ok()?;
    let dir = col.item(rel).ok()?;
    if !dir.has_item_toml() {
        return None;
    }
    Item::load(&dir, rep).ok()
}

/// Writes `entries` (the metadata items of a walk that began at POSIX second `started`)
/// as the index of the Archive at `root`, with the lines `new` and `delete` added while
/// it walked, and `stamp` (taken at `stamped_at`) beside it: under `var/items.lock`, so
/// that no line is added between the two.
pub fn finish(
    root: &Path,
    mut entries: Vec<Entry>,
    started: i64,
    stamp: &TreeStamp,
    stamped_at: i64,
) -> Result<(), String> {
    let var = root.join("var");
    let _lock = crate::items_lock::ItemsLock::take(root).map_err(|e| e.to_string())?;
    if let Some(recent) = oai_index::read_all(&var) {
        entries.extend(recent.into_iter().filter(|e| e.seconds >= started - 2));
    }
    // One line per item: its newest (a deletion over the line of its making).
    entries.sort_by(|a, b| (&a.rep, a.seconds, a.deleted).cmp(&(&b.rep, b.seconds, b.deleted)));
    entries.reverse();
    entries.dedup_by(|later, kept| later.rep == kept.rep);
    if !oai_index::write(&var, entries) {
        return Err(format!(
            "{}: cannot be written",
            var.join(oai_index::FILE_NAME).display()
        ));
    }
    if !write_stamp(&var, stamp, stamped_at) {
        return Err(format!(
            "{}: cannot be written",
            var.join(STAMP_NAME).display()
        ));
    }
    Ok(())
}

/// Calls `visit` with each item directory of col/ below `dir` (at `depth` 0..=3 of the
/// four levels of a rep) in the order of the names, each level listed from col/'s
/// descriptor without following a link ([`Col::dir_names`]).
fn walk(
    col: &Col,
    dir: &str,
    depth: usize,
    visit: &mut dyn FnMut(&str) -> ControlFlow<()>,
) -> ControlFlow<()> {
    for name in col.dir_names(dir) {
        let rel = if dir.is_empty() {
            name
        } else {
            format!("{dir}/{name}")
        };
        if depth == 3 {
            visit(&rel)?;
        } else {
            walk(col, &rel, depth + 1, visit)?;
        }
    }
    ControlFlow::Continue(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_of_the_last_build_reads_back() {
        let last = LastBuild::parse("ibi-archive oai-build 1\n100 103 2500 ok\n");
        assert_eq!(
            last,
            LastBuild {
                started: Some(100),
                ended: Some(103),
                millis: Some(2500),
                outcome: Some("ok".into())
            }
        );
        assert_eq!(last.seconds(), Some(3));
        let running = LastBuild::parse("ibi-archive oai-build 1\n200 - 2500 running\n");
        assert_eq!((running.ended, running.outcome), (None, None));
        let failed = LastBuild::parse("ibi-archive oai-build 1\n1 2 3 failed: no space\n");
        assert_eq!(failed.outcome.as_deref(), Some("failed: no space"));
        assert_eq!(LastBuild::parse("garbage"), LastBuild::default());
    }

    /// A detached build, run at once in the test's thread.
    fn at_once(work: Box<dyn FnOnce() + Send + 'static>) -> io::Result<()> {
        work();
        Ok(())
    }

    fn record(root: &Path, line: &str) {
        std::fs::write(
            root.join("var").join(LOCK_NAME),
            format!("{LOCK_HEADER}{line}\n"),
        )
        .unwrap();
    }

    /// One build at a time; none sooner after the last ended than it lasted, how it
    /// failed said; none where the lock cannot be had; in the request when nothing
    /// detaches it.
    #[test]
    fn builds_are_one_at_a_time_and_paced() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("col/a.b/c/2020/01.01.00.00")).unwrap();
        std::fs::create_dir_all(root.join("var")).unwrap();
        let t = 2_000_000_000;
        // The last build ended at t after 5 s: not again before t + 5.
        record(root, &format!("{} {t} 5000 ok", t - 5));
        assert_eq!(
            start_with(root, t + 1, Some(at_once)),
            Started::Paced {
                retry_after: 4,
                failed: None
            }
        );
        record(
            root,
            &format!("{} {t} 5000 failed: {}: no space", t - 5, "var/x"),
        );
        assert_eq!(
            start_with(root, t + 2, Some(at_once)),
            Started::Paced {
                retry_after: 3,
                failed: Some("failed: var/x: no space".into())
            }
        );
        // Past the pause: begun (here run at once), its length the estimate.
        assert_eq!(
            start_with(root, t + 5, Some(at_once)),
            Started::Begun { retry_after: 5 }
        );
        assert!(root.join("var").join(oai_index::FILE_NAME).is_file());
        let last =
            LastBuild::parse(&std::fs::read_to_string(root.join("var").join(LOCK_NAME)).unwrap());
        assert_eq!(last.outcome.as_deref(), Some("ok"));
        // Under way (the lock held by another open file): not twice.
        let held = File::open(root.join("var").join(LOCK_NAME)).unwrap();
        rfs::flock(&held, FlockOperation::NonBlockingLockExclusive).unwrap();
        record(root, &format!("{} - 3000 running", SystemClock::now()));
        assert!(matches!(
            start_with(root, SystemClock::now(), Some(at_once)),
            Started::UnderWay { retry_after: 1..=3 }
        ));
        drop(held);
        // In the request (nothing detaches it): not paced.
        record(root, &format!("{} {t} 5000 ok", t - 5));
        assert_eq!(start_with(root, t + 1, None), Started::Built);
        // The lock cannot be opened: no build.
        std::fs::remove_file(root.join("var").join(LOCK_NAME)).unwrap();
        std::fs::create_dir(root.join("var").join(LOCK_NAME)).unwrap();
        assert!(matches!(
            start_with(root, t + 100, Some(at_once)),
            Started::Impossible(why) if why.ends_with("oai-records.lock: Is a directory (os error 21)")
        ));
    }

    #[test]
    fn a_stamp_moves_when_an_item_comes_and_is_believed_once_settled() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("col/a.b/c/2020/01.01.00.00")).unwrap();
        std::fs::create_dir_all(root.join("var")).unwrap();
        let col = Col::open(root).unwrap();
        let before = TreeStamp::take(&col);
        // col/, a.b, a.b/c, a.b/c/2020.
        assert_eq!(before.dirs, 4);
        assert_eq!(TreeStamp::take(&col), before);
        // Just made: not settled, so not believed even as it is.
        let now = SystemClock::now();
        assert!(!before.settled(now));
        assert!(write_stamp(&root.join("var"), &before, now));
        assert!(!is_fresh(&root.join("var"), &col));
        // Settled (as if taken later): believed while col/ stays as it is.
        assert!(before.settled(now + SETTLED_SECS + 1));
        assert!(write_stamp(
            &root.join("var"),
            &before,
            now + SETTLED_SECS + 1
        ));
        assert!(is_fresh(&root.join("var"), &col));
        // An item dropped into the year: its change time moves.
        std::fs::create_dir_all(root.join("col/a.b/c/2020/01.01.00.01")).unwrap();
        assert_ne!(TreeStamp::take(&col), before);
        assert!(!is_fresh(&root.join("var"), &col));
        // A new prefix: col/'s subdomain changes.
        let again = TreeStamp::take(&col);
        std::fs::create_dir_all(root.join("col/a.b/d")).unwrap();
        assert_ne!(TreeStamp::take(&col), again);
        // No stamp, or one not in the format: not fresh.
        std::fs::write(root.join("var").join(STAMP_NAME), "x\n").unwrap();
        assert!(!is_fresh(&root.join("var"), &col));
    }

    #[test]
    fn a_stamp_covers_at_most_its_bound_upper_levels_first() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        for year in 0..20 {
            std::fs::create_dir_all(root.join(format!("col/a.b/c/{}", 2000 + year))).unwrap();
        }
        let col = Col::open(root).unwrap();
        let (all, complete) = col.upper_dirs(100);
        assert_eq!((all.len(), complete), (23, true));
        let (some, complete) = col.upper_dirs(10);
        assert_eq!((some.len(), complete), (10, false));
        let rels: Vec<String> = some
            .iter()
            .map(|d| String::from_utf8_lossy(&d.rel).into_owned())
            .collect();
        // col/ and the prefix first; then as many years as there is room for (those the
        // listing gives first: a listing is read no further than the bound).
        assert_eq!(rels[..3], ["", "a.b", "a.b/c"].map(String::from));
        assert!(
            rels[3..].iter().all(|r| r.starts_with("a.b/c/20")),
            "{rels:?}"
        );
        // Taken again, col/ unchanged: the same stamp.
        assert_eq!(col.upper_dirs(10), (some, false));
    }
}
