//! The access log, `var/acknowledgments.log`: one line per counted acknowledgment
//! (resolution standard §8.2: "useful for Archives that keep access statistics").
//!
//! A line is `<ISO 8601 UTC>\t<urlkey>\t<item>\t<contenttype>\t<url>\n`: the key in its
//! canonical spelling (digits and one `-`), the item's rep as stored, `Data`, `Metadata`
//! or `-`, and the url escaped as a pair-list word and cut to 200 bytes — no field can
//! hold a tab, a line break or another control byte, and a line stays short.
//!
//! Each key counts once. That is known without reading the log: counting a key makes
//! `var/acknowledged/<hour of issue>/<key>`, which fails when it exists; so an
//! acknowledgment costs the same on a log of a gigabyte as on an empty one. A mark is a
//! hard link to one file of its hour, `.mark` (made when missing; a fresh one when it has
//! as many links as the file system allows): a directory entry, not an inode, per
//! acknowledgment, for the allocation of an inode was most of what an acknowledgment cost
//! the file system (ext4 searches its inode bitmaps past the recently deleted ones). Keys live
//! a day, so the directories of hours older than that are removed, a few entries per
//! acknowledgment. The line is appended under an exclusive lock on the log, whole or not
//! at all.
//!
//! An acknowledgment is counted once its line is in the log: written by one `write(2)`
//! under the log's lock, before "counted" is answered, so that a crash or a `kill -9` of
//! the process loses nothing answered counted (the page cache outlives the process). The
//! log is an access log, and no web server syncs its access log per request: it is synced
//! at most archive.toml's `[acknowledgments] sync_interval` later (1 s unless set), by
//! group commit, whether the acknowledgments come from threads of `serve` or from CGI
//! processes. `var/acknowledgments.synced` records how far the log is known to be synced
//! (its inode and a length) and when that sync began. After its line, a writer reads the
//! record: when its line is covered, or the last sync began less than the interval ago, it
//! is done; else it takes the record's lock (when another holds it, that one is syncing,
//! and the writer is done too), reads the record again, takes the length of the log (under
//! a shared lock of the log: whole lines only), `fdatasync`s the log, which makes every
//! line written before durable, and records that length and the time it began. So a
//! stream of acknowledgments costs one sync per interval, and a line waits for its sync at
//! most the interval (plus the sync under way) while acknowledgments keep coming. When none comes,
//! nothing in a CGI process may linger to sync it: `serve` runs a timer that calls
//! [`sync_due`] (and syncs once more when it stops), `stats` syncs before it counts, and
//! otherwise the kernel writes the pages back on its own (Linux: dirty pages older than
//! `vm.dirty_expire_centisecs`, 30 s by default). A power cut thus loses at most the lines
//! of the last interval, plus, under the CGI, those written after the last sync when no
//! acknowledgment came since and the kernel had not written them back. A line is never
//! written twice (its key's mark is made before it, under the same lock), and never torn
//! unless its writer died inside its `write(2)` (unanswered then, its key marked; the next
//! line starts on a line of its own, and the torn one reads as malformed, or as the access
//! it was when only its url was cut) or the power failed before its sync (the log may then
//! end short, its last line cut).
//!
//! `sync_interval = "0"` keeps the stricter contract: "counted" only once the line is on
//! stable storage. The writer then waits for the record's lock; when the record already
//! covers its line, another's sync made it durable and it is done at once; else it syncs
//! as above. While one sync runs, the writers behind it wait for the lock and then, mostly,
//! find their lines covered. The record is a hint either way: lost or stale, it costs a
//! sync, never a line (it is only ever trusted for the inode it names and up to the log's
//! length).
//!
//! Failures: a write that fails (a full disk) is cut back under the lock and its mark
//! removed, so no partial line stays and the key may be counted again. A sync that fails
//! (`EIO`) cannot cut its line (other lines may follow it) and its mark stays: whether the
//! line reached the disk is unknown after such an error, and a key is never logged twice,
//! so a retry is answered "already counted". With a zero interval it is answered "not
//! counted"; with a deferred sync the line is counted as the lines before it were, and the
//! failure is said ([`Outcome::CountedUnsynced`]).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Seek, SeekFrom, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::var_owner;
use ::ibi::atomic;

use crate::urlkey::KEY_LIFETIME_SECS;
use ::ibi::time::iso8601;

/// The log of an Archive whose writable state is in `var`.
pub fn log_path(var: &Path) -> PathBuf {
    var.join(LOG_NAME)
}

/// The log's name in var/.
pub const LOG_NAME: &str = "acknowledgments.log";

/// How far the log is known to be on stable storage (see the module header), in var/.
pub const SYNCED_NAME: &str = "acknowledgments.synced";

/// Where the counted keys are marked, one directory per hour of issue.
pub const MARKS_DIR: &str = "acknowledged";
/// Where each item's count of accesses is kept (see [`access_count`]).
pub const COUNTS_DIR: &str = "accesses";

/// Longest line read back from the log; longer ones are malformed.
pub const MAX_LINE: usize = 4096;
/// Expired marks removed per acknowledgment (more than one is made).
const PRUNE_PER_ACK: usize = 16;

/// One counted access.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// POSIX second the acknowledgment arrived.
    pub time: i64,
    pub key: String,
    /// The item served (its rep as stored), `-` if unknown.
    pub item: String,
    pub contenttype: String,
    /// The url, escaped as a pair-list word.
    pub url: String,
}

impl Record {
    fn to_line(&self) -> String {
        let clean = |s: &str| -> String {
            let s: String = s
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            ::ibi::logline::clean(&s).into_owned()
        };
        format!(
            "{}\t{}\t{}\t{}\t{}\n",
            iso8601(self.time),
            clean(&self.key),
            clean(&self.item),
            clean(&self.contenttype),
            clean(&self.url)
        )
    }

    /// Reads a line written by `Record::to_line` (without its newline).
    pub fn parse_line(line: &str) -> Option<Record> {
        let mut f = line.split('\t');
        let time = chrono::DateTime::parse_from_rfc3339(f.next()?)
            .ok()?
            .timestamp();
        let rec = Record {
            time,
            key: f.next()?.to_string(),
            item: f.next()?.to_string(),
            contenttype: f.next()?.to_string(),
            url: f.next()?.to_string(),
        };
        f.next().is_none().then_some(rec)
    }
}

/// What became of an acknowledgment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Counted,
    /// Counted (its line is in the log), but the sync that fell to it failed (`EIO`):
    /// the lines written since the last sync, its own among them, may not be on stable
    /// storage. What the sync said.
    CountedUnsynced(String),
    AlreadyCounted,
}

/// When a counted line reaches stable storage: archive.toml's `[acknowledgments]
/// sync_interval`, and the clock it is measured by.
#[derive(Clone, Copy)]
pub struct Durability<'a> {
    /// How long a counted line may wait for a sync once written: the first acknowledgment
    /// (or [`sync_due`]) that finds the last sync this old syncs the log. Zero: each line
    /// is synced before its acknowledgment is answered.
    pub interval: Duration,
    /// Milliseconds since the epoch: [`wall_clock_ms`], or a test's own clock.
    pub clock: &'a dyn Fn() -> u64,
}

impl Durability<'static> {
    /// `interval` by the wall clock, which every process writing the log shares.
    pub fn by_wall_clock(interval: Duration) -> Durability<'static> {
        Durability {
            interval,
            clock: &wall_clock_ms,
        }
    }
}

/// Milliseconds since the epoch, by the system's clock.
pub fn wall_clock_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Appends `rec` unless its key was already counted, and returns `Counted` once the line
/// is in the log, and with `durability.interval` zero only once it is on stable storage
/// (see the module header). `issued` is the key's date of issue. What it makes in `var`
/// (the log, its synced record, the marks and their directories) is var/'s owner's, the
/// user the service runs as, whoever makes it (see [`crate::var_owner`]).
pub fn record_once(
    var: &Path,
    rec: &Record,
    issued: i64,
    durability: Durability<'_>,
) -> io::Result<Outcome> {
    let outcome = record_once_uncounted(var, rec, issued, durability);
    if let Ok(Outcome::Counted | Outcome::CountedUnsynced(_)) = &outcome {
        COUNTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    outcome
}

/// Acknowledgments this process counted ([`record_once`]), for `serve`'s `/metrics`.
static COUNTED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many acknowledgments this process has counted.
pub fn counted_by_this_process() -> u64 {
    COUNTED.load(std::sync::atomic::Ordering::Relaxed)
}

fn record_once_uncounted(
    var: &Path,
    rec: &Record,
    issued: i64,
    durability: Durability<'_>,
) -> io::Result<Outcome> {
    if rec.key.is_empty() || !rec.key.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a urlkey is digits and a dash",
        ));
    }
    let var_dir = var_owner::make_and_open_var(var)?;
    let owner = var_owner::owner_for_new(var_dir.as_fd(), var)?;
    let marks = atomic::make_dir_at(var_dir.as_fd(), MARKS_DIR, owner)?;
    let hour = atomic::make_dir_at(marks.as_fd(), &issued.div_euclid(3600).to_string(), owner)?;
    let mut file = open_or_make(var_dir.as_fd(), LOG_NAME, true, owner)?;
    file.lock()?;
    let result = append_if_new(&mut file, rec, hour.as_fd(), owner);
    let unlocked = file.unlock();
    prune(&var.join(MARKS_DIR), rec.time);
    let end = result?;
    unlocked?;
    let Some(end) = end else {
        return Ok(Outcome::AlreadyCounted);
    };
    count_access(var_dir.as_fd(), &rec.item, owner);
    let record = || open_or_make(var_dir.as_fd(), SYNCED_NAME, false, owner);
    if durability.interval.is_zero() {
        make_durable(&file, &record()?, end, durability).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("its line was written but could not be synced to stable storage: {e}"),
            )
        })?;
        return Ok(Outcome::Counted);
    }
    // The line is in the page cache: a kill of this process loses nothing now. A power
    // cut may, until the sync that is due at most `interval` after the last one; what
    // fails from here on leaves the line counted, as the lines before it.
    match record().and_then(|record| sync_if_due(&file, &record, end, durability)) {
        Ok(()) => Ok(Outcome::Counted),
        Err(e) => Ok(Outcome::CountedUnsynced(e.to_string())),
    }
}

/// The file `name` of var/, opened to be read and written (`append`: written at its
/// end only); made (empty, given to `owner`) if missing.
fn open_or_make(
    var: BorrowedFd<'_>,
    name: &str,
    append: bool,
    owner: Option<atomic::Owner>,
) -> io::Result<File> {
    let mut flags = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    if append {
        flags |= OFlags::APPEND;
    }
    let open = || rfs::openat(var, name, flags, Mode::empty());
    match open() {
        Ok(fd) => return Ok(File::from(fd)),
        Err(Errno::NOENT) => {}
        Err(e) => return Err(e.into()),
    }
    match ::ibi::atomic::create_owned_at(var, name, b"", 0o666, owner) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    Ok(File::from(open()?))
}

/// Appends `rec`'s line unless its key is marked; the log's length after the line, or
/// `None` when the key was already counted. The caller holds the log's lock.
fn append_if_new(
    file: &mut File,
    rec: &Record,
    hour: BorrowedFd<'_>,
    owner: Option<atomic::Owner>,
) -> io::Result<Option<u64>> {
    let mark = rec.key.as_str();
    if !make_mark(hour, mark, owner)? {
        return Ok(None);
    }
    let len = file.seek(SeekFrom::End(0))?;
    let mut last = [0u8; 1];
    let ends_with_newline =
        len == 0 || (file.read_exact_at(&mut last, len - 1).is_ok() && last[0] == b'\n');
    let mut line = rec.to_line();
    if !ends_with_newline {
        // A writer died mid-line: end that line so ours stands whole.
        line.insert(0, '\n');
    }
    // One `write(2)` of the whole line (a few hundred bytes; O_APPEND, under the lock):
    // it is in the page cache when this returns, where a kill of the process cannot take
    // it. Only a full disk writes part of it; `write_all` then
    // asks for the rest, which such a disk refuses.
    if let Err(e) = file.write_all(line.as_bytes()) {
        // A full disk takes part of a line and refuses the rest: cut the log back to
        // where it was (we hold the lock), so that no partial record is left to be read
        // as a counted one, nor glued to the next; and the key may be counted again.
        let _ = file.set_len(len);
        let _ = rfs::unlinkat(hour, mark, AtFlags::empty());
        return Err(e);
    }
    Ok(Some(len + line.len() as u64))
}

/// The name in [`COUNTS_DIR`] of the count of the item whose rep is stored as `item`:
/// the rep with each `/` written `+` (a rep holds no `+`); `None` for anything else (the
/// `-` of an access whose item is unknown).
fn count_name(item: &str) -> Option<String> {
    ::ibi::rep::Rep::parse(item)
        .ok()
        .filter(|r| !r.as_str().contains('+'))
        .map(|r| r.as_str().replace('/', "+"))
}

/// Adds one to the count of accesses of `item` (its rep as stored): one byte appended
/// to its file in [`COUNTS_DIR`] (made, given to `owner`, when missing), whose length is
/// the count. One `write(2)` of one byte with `O_APPEND` needs no lock, and the count is
/// read with one `stat`: a landing page shows it at the cost of a system call, whatever
/// the size of the log. It grows a byte per access, a hundredth of the log's line. A
/// hint beside the log, which `stats` counts: a failure here (a full disk) leaves the
/// access counted in the log and not in the hint.
fn count_access(var: BorrowedFd<'_>, item: &str, owner: Option<atomic::Owner>) {
    let Some(name) = count_name(item) else {
        return;
    };
    let _ = atomic::make_dir_at(var, COUNTS_DIR, owner)
        .and_then(|dir| open_or_make(dir.as_fd(), &name, true, owner))
        .and_then(|mut f| f.write_all(b"."));
}

/// How many accesses of the item whose rep is stored as `item` were counted (see
/// [`count_access`]): zero when none was, or the count cannot be read. Read as it is
/// written: var/ opened as the writer opens it ([`var_owner::open_dir`]), [`COUNTS_DIR`]
/// from it with `O_NOFOLLOW | O_DIRECTORY` (as `atomic::make_dir_at` opens it), the count
/// a regular file in it, no link followed — a [`COUNTS_DIR`] that is a symbolic link is
/// none, whatever it points to.
pub fn access_count(var: &Path, item: &str) -> u64 {
    let Some(name) = count_name(item) else {
        return 0;
    };
    let Ok(var_dir) = var_owner::open_dir(var) else {
        return 0;
    };
    let Ok(counts) = rfs::openat(
        var_dir.as_fd(),
        COUNTS_DIR,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return 0;
    };
    rfs::statat(counts.as_fd(), name.as_str(), AtFlags::SYMLINK_NOFOLLOW)
        .ok()
        .filter(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile)
        .map_or(0, |st| st.st_size as u64)
}

/// The file every mark of an hour is a hard link to; no key has its name (a key is
/// digits and a dash).
const MARK_INODE: &str = ".mark";

/// Marks `key` counted in `hour`: false when it was already. The caller holds the log's
/// lock, so no other writer makes or replaces [`MARK_INODE`] meanwhile.
fn make_mark(hour: BorrowedFd<'_>, key: &str, owner: Option<atomic::Owner>) -> io::Result<bool> {
    // At most: the link, the shared file made (missing) or made anew (full), the link.
    for _ in 0..2 {
        match rfs::linkat(hour, MARK_INODE, hour, key, AtFlags::empty()) {
            Ok(()) => return Ok(true),
            Err(Errno::EXIST) => return Ok(false),
            Err(Errno::NOENT) => {}
            // As many links as the file system allows (65,000 on ext4): the marks made
            // keep that file; the next ones share a new one.
            Err(Errno::MLINK) => rfs::unlinkat(hour, MARK_INODE, AtFlags::empty())?,
            Err(e) => return Err(e.into()),
        }
        match rfs::openat(
            hour,
            MARK_INODE,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        ) {
            Ok(fd) => {
                if let Err(e) = atomic::give(fd.as_fd(), owner) {
                    let _ = rfs::unlinkat(hour, MARK_INODE, AtFlags::empty());
                    return Err(e);
                }
            }
            Err(Errno::EXIST) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Err(io::Error::other(format!(
        "cannot link the mark of {key} to {MARK_INODE}"
    )))
}

/// Returns once the log `log` is on stable storage up to `end` (group commit, see the
/// module header): at once when a sync since the line was written covered it, else after
/// a sync of its own, which covers the lines of the writers waiting behind it as well.
/// `record` is the log's synced record.
/// (With a zero `d.interval`, every line not covered is due.)
fn make_durable(log: &File, record: &File, end: u64, d: Durability<'_>) -> io::Result<()> {
    record.lock()?;
    let result = sync_locked(log, record, Some(end), d);
    let _ = record.unlock();
    result
}

/// With `record`'s lock held: syncs the log when the line ending at `end` (the log's
/// whole length when `None`) calls for it ([`is_due`]), by the record read under the
/// lock: a sync that has just ended may have covered it.
fn sync_locked(log: &File, record: &File, end: Option<u64>, d: Durability<'_>) -> io::Result<()> {
    let meta = log.metadata()?;
    let end = end.unwrap_or(meta.len());
    if is_due(read_synced(record, meta.ino(), meta.len()), end, d) {
        sync_and_record(log, record, meta.ino(), d)?;
    }
    Ok(())
}

/// With a deferred sync (`d.interval` not zero): syncs the log when the line ending at
/// `end` is not yet covered and the last sync is `d.interval` old or more (or unknown),
/// unless another process or thread is syncing it right now.
fn sync_if_due(log: &File, record: &File, end: u64, d: Durability<'_>) -> io::Result<()> {
    let meta = log.metadata()?;
    // Read without the lock: a record torn by a writer meanwhile fails its check and
    // reads as unknown, which only sends us to the lock, where it is read again whole.
    if !is_due(read_synced(record, meta.ino(), meta.len()), end, d) {
        return Ok(());
    }
    match record.try_lock() {
        Ok(()) => {}
        // Someone is syncing now. Our line may have come after the length that sync
        // covers; then the sync due one interval after that one began covers it, run by
        // the next acknowledgment (or `serve`'s timer). No answer waits for a sync.
        Err(std::fs::TryLockError::WouldBlock) => return Ok(()),
        Err(std::fs::TryLockError::Error(e)) => return Err(e),
    }
    let result = sync_locked(log, record, Some(end), d);
    let _ = record.unlock();
    result
}

/// Whether the line ending at `end` calls for a sync now: not covered by the record
/// `synced`, and the last sync `d.interval` old — or of a time ahead of the clock (the
/// clock set back), which would otherwise put the next sync off by as much.
fn is_due(synced: Option<Synced>, end: u64, d: Durability<'_>) -> bool {
    let Some(s) = synced else {
        return true;
    };
    if end <= s.len {
        return false;
    }
    (d.clock)()
        .checked_sub(s.at_ms)
        .is_none_or(|age| age >= millis(d.interval))
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Syncs the log whole and records it in `record` (whose lock the caller holds): the length
/// (whole lines only, taken before the sync: every line written before it is made durable
/// by it) and the time the sync began (the lines it does not cover were all written after
/// that).
fn sync_and_record(log: &File, record: &File, ino: u64, d: Durability<'_>) -> io::Result<()> {
    let began = (d.clock)();
    // Whole lines only: a writer holds the log's lock exclusively while it writes (and
    // while it cuts back a line a full disk refused).
    log.lock_shared()?;
    let whole = log.metadata().map(|m| m.len());
    log.unlock()?;
    let whole = whole?;
    sync_log(log)?;
    // A hint for the writers that follow: if it cannot be written they sync themselves.
    let _ = record.write_all_at(synced_line(ino, whole, began).as_bytes(), 0);
    Ok(())
}

/// `fdatasync` of the log; counted in the unit tests, which check when it happens.
fn sync_log(log: &File) -> io::Result<()> {
    #[cfg(test)]
    tests::SYNCS.with(|n| n.set(n.get() + 1));
    log.sync_data()
}

/// Syncs the log of `var` when it holds lines no sync covers and the last sync is
/// `d.interval` old (at once when `d.interval` is zero); how long until a sync may next
/// be due, for a caller that comes back then: `serve`'s timer, which syncs what no later
/// acknowledgment came to, and `stats` (zero interval), so that what it counts is on
/// stable storage. Makes nothing but the synced record (given to var/'s owner, as
/// [`record_once`] does); no var/ or no log: nothing to sync.
pub fn sync_due(var: &Path, d: Durability<'_>) -> io::Result<Duration> {
    let var_dir = match var_owner::open_dir(var) {
        Ok(fd) => fd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(d.interval),
        Err(e) => return Err(e),
    };
    let log = match rfs::openat(
        var_dir.as_fd(),
        LOG_NAME,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => File::from(fd),
        Err(Errno::NOENT) => return Ok(d.interval),
        Err(e) => return Err(e.into()),
    };
    let owner = var_owner::owner_for_new(var_dir.as_fd(), var)?;
    let record = open_or_make(var_dir.as_fd(), SYNCED_NAME, false, owner)?;
    let meta = log.metadata()?;
    let synced = read_synced(&record, meta.ino(), meta.len());
    if !is_due(synced, meta.len(), d) {
        // Covered, or not yet due: due one interval after the last sync at the latest.
        let next = synced.map_or(0, |s| s.at_ms.saturating_add(millis(d.interval)));
        let wait = Duration::from_millis(next.saturating_sub((d.clock)()));
        return Ok(if wait.is_zero() {
            d.interval
        } else {
            wait.min(d.interval)
        });
    }
    // Unlike an acknowledgment, this waits for a sync under way: nobody waits for it.
    record.lock()?;
    let result = sync_locked(&log, &record, None, d).map(|()| d.interval);
    let _ = record.unlock();
    result
}

/// Bytes of the record of `var/acknowledgments.synced`.
const SYNCED_LEN: usize = 84;

/// What the record says: the log was synced up to `len` by a sync begun at `at_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Synced {
    len: u64,
    at_ms: u64,
}

/// The record: the log's inode, the length known synced, the time (milliseconds since the
/// epoch) the sync began, and a check of all three (so that a record torn by a crash is
/// not taken for another), each in 20 digits.
fn synced_line(ino: u64, len: u64, at_ms: u64) -> String {
    format!(
        "{ino:020} {len:020} {at_ms:020} {:020}\n",
        synced_check(ino, len, at_ms)
    )
}

fn synced_check(ino: u64, len: u64, at_ms: u64) -> u64 {
    use sha2::{Digest, Sha256};
    let sum = Sha256::digest(format!("{ino} {len} {at_ms}"));
    u64::from_be_bytes(sum[..8].try_into().expect("a SHA-256 sum has 32 bytes"))
}

/// What the record says of the log of inode `ino`, now `log_len` long, when it is of that
/// inode, whole, and within the log (a log cut in place makes it stale).
fn read_synced(record: &File, ino: u64, log_len: u64) -> Option<Synced> {
    let mut buf = [0u8; SYNCED_LEN];
    record.read_exact_at(&mut buf, 0).ok()?;
    let text = std::str::from_utf8(&buf).ok()?.strip_suffix('\n')?;
    let mut fields = text.split(' ').map(|f| f.parse::<u64>().ok());
    let (Some(i), Some(len), Some(at_ms), Some(check), None) = (
        fields.next()?,
        fields.next()?,
        fields.next()?,
        fields.next()?,
        fields.next(),
    ) else {
        return None;
    };
    (i == ino && len <= log_len && check == synced_check(i, len, at_ms))
        .then_some(Synced { len, at_ms })
}

/// Removes a few marks of hours no key of which can still be acknowledged (and their
/// directories once empty): bounded work per acknowledgment, more than each one adds.
fn prune(marks: &Path, now: i64) {
    let expired_before = (now - KEY_LIFETIME_SECS - 3600).div_euclid(3600);
    let Ok(entries) = std::fs::read_dir(marks) else {
        return;
    };
    let oldest = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i64>().ok())
        .filter(|&h| h < expired_before)
        .min();
    let Some(hour) = oldest else {
        return;
    };
    let dir = marks.join(hour.to_string());
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut removed = 0;
    for e in entries.filter_map(Result::ok).take(PRUNE_PER_ACK) {
        if std::fs::remove_file(e.path()).is_ok() {
            removed += 1;
        }
    }
    if removed < PRUNE_PER_ACK {
        let _ = std::fs::remove_dir(&dir);
    }
}

/// Hands every well-formed record of the log to `each`, in order, reading it as a
/// stream (memory does not grow with the log); the number of malformed lines.
pub fn for_each(var: &Path, mut each: impl FnMut(Record)) -> io::Result<usize> {
    let file = match File::open(log_path(var)) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    read_records(BufReader::with_capacity(64 * 1024, file), &mut each)
}

/// [`for_each`] over the logs logrotate kept too, oldest first, then the log: each
/// `acknowledgments.log.N` or, compressed, `acknowledgments.log.N.gz` of var/ (N from 1,
/// the highest the oldest; where both spellings of one N are there, gzip is under way
/// and the plain one is whole). Each is opened from var/'s descriptor, following no
/// link. A fault names the file it came from.
pub fn for_each_kept(var: &Path, mut each: impl FnMut(Record)) -> io::Result<usize> {
    let named = |name: &str| {
        let name = name.to_string();
        move |e: io::Error| io::Error::new(e.kind(), format!("{name}: {e}"))
    };
    // var/, listed: one that cannot be (a user who may search it but not read it) has its
    // log read alone, as before any rotation.
    let dir = var_owner::open_dir(var);
    let listed = dir.as_ref().ok().and_then(|d| rfs::Dir::read_from(d).ok());
    let (Ok(dir), Some(listed)) = (dir, listed) else {
        return for_each(var, &mut each).map_err(named(LOG_NAME));
    };
    // N → whether only its compressed spelling is there.
    let mut kept: std::collections::BTreeMap<u64, bool> = std::collections::BTreeMap::new();
    for entry in listed {
        let entry = entry?;
        let Ok(name) = std::str::from_utf8(entry.file_name().to_bytes()) else {
            continue;
        };
        let Some(rest) = name
            .strip_prefix(LOG_NAME)
            .and_then(|r| r.strip_prefix('.'))
        else {
            continue;
        };
        let (digits, gz) = match rest.strip_suffix(".gz") {
            Some(d) => (d, true),
            None => (rest, false),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(n) = digits.parse::<u64>() {
            let only_gz = kept.get(&n).copied().unwrap_or(true) && gz;
            kept.insert(n, only_gz);
        }
    }
    let mut bad = 0;
    for (n, gz) in kept.into_iter().rev() {
        let name = if gz {
            format!("{LOG_NAME}.{n}.gz")
        } else {
            format!("{LOG_NAME}.{n}")
        };
        let file: File = rfs::openat(
            &dir,
            name.as_str(),
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io::Error::from)
        .map_err(named(&name))?
        .into();
        bad += if gz {
            let unzipped = flate2::read::MultiGzDecoder::new(file);
            read_records(BufReader::with_capacity(64 * 1024, unzipped), &mut each)
        } else {
            read_records(BufReader::with_capacity(64 * 1024, file), &mut each)
        }
        .map_err(named(&name))?;
    }
    bad += for_each(var, &mut each).map_err(named(LOG_NAME))?;
    Ok(bad)
}

/// The records of one log read from `reader`, handed to `each`; the malformed lines.
fn read_records(mut reader: impl BufRead, each: &mut impl FnMut(Record)) -> io::Result<usize> {
    let mut line = Vec::with_capacity(512);
    let mut bad = 0;
    loop {
        line.clear();
        let too_long = read_line(&mut reader, &mut line)?;
        if line.is_empty() && !too_long {
            break;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        if text.is_empty() && !too_long {
            continue;
        }
        match (
            too_long,
            std::str::from_utf8(text).ok().and_then(Record::parse_line),
        ) {
            (false, Some(r)) => each(r),
            _ => bad += 1,
        }
    }
    Ok(bad)
}

/// Reads one line into `line`, keeping at most [`MAX_LINE`] bytes of it (the rest is
/// skipped); whether it was longer.
fn read_line(reader: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<bool> {
    let mut too_long = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(too_long);
        }
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..=i], true),
            None => (available, false),
        };
        let n = chunk.len();
        if line.len() + n <= MAX_LINE {
            line.extend_from_slice(chunk);
        } else {
            too_long = true;
            if done {
                line.clear();
                line.push(b'\n');
            }
        }
        reader.consume(n);
        if done {
            return Ok(too_long);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        /// The `fdatasync`s of the log made on this thread (see `sync_log`).
        pub(super) static SYNCS: Cell<usize> = const { Cell::new(0) };
    }

    fn syncs() -> usize {
        SYNCS.with(Cell::get)
    }

    /// archive.toml's default: synced within a second, by the wall clock.
    fn default() -> Durability<'static> {
        Durability::by_wall_clock(Duration::from_secs(1))
    }

    /// `sync_interval = "0"`: synced before the answer.
    fn at_once() -> Durability<'static> {
        Durability::by_wall_clock(Duration::ZERO)
    }

    fn rec(time: i64, key: &str) -> Record {
        Record {
            time,
            key: key.into(),
            item: "a.b/c/2020/01.02.03.04".into(),
            contenttype: "Data".into(),
            url: "http://x/col/a.b/c/2020/01.02.03.04/doc/f%20g.pdf".into(),
        }
    }

    fn read_all(var: &Path) -> (Vec<Record>, usize) {
        let mut all = Vec::new();
        let bad = for_each(var, |r| all.push(r)).unwrap();
        (all, bad)
    }

    #[test]
    fn a_key_counts_once() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            record_once(dir.path(), &rec(1000, "1-1"), 990, default()).unwrap(),
            Outcome::Counted
        );
        assert_eq!(
            record_once(dir.path(), &rec(1001, "1-2"), 990, default()).unwrap(),
            Outcome::Counted
        );
        assert_eq!(
            record_once(dir.path(), &rec(1002, "1-1"), 990, default()).unwrap(),
            Outcome::AlreadyCounted
        );
        assert_eq!(
            read_all(dir.path()),
            (vec![rec(1000, "1-1"), rec(1001, "1-2")], 0)
        );
        assert!(record_once(dir.path(), &rec(1003, "../x"), 990, default()).is_err());
        // The item's count, kept beside the log, counts what the log counts.
        assert_eq!(access_count(dir.path(), "a.b/c/2020/01.02.03.04"), 2);
        assert_eq!(
            std::fs::read(dir.path().join("accesses/a.b+c+2020+01.02.03.04")).unwrap(),
            b".."
        );
        assert_eq!(access_count(dir.path(), "a.b/c/2020/01.02.03.05"), 0);
        let unknown = Record {
            item: "-".into(),
            ..rec(1004, "1-3")
        };
        assert_eq!(
            record_once(dir.path(), &unknown, 990, default()).unwrap(),
            Outcome::Counted
        );
        assert_eq!(access_count(dir.path(), "-"), 0);
        assert_eq!(
            std::fs::read_dir(dir.path().join("accesses"))
                .unwrap()
                .count(),
            1
        );
    }

    /// A var/accesses that is a symbolic link to a directory elsewhere (holding a count
    /// of the item's name) is no count: none is read from there, and an acknowledgment
    /// adds none there either.
    #[test]
    fn a_linked_counts_directory_is_read_as_none() {
        let dir = tempfile::tempdir().unwrap();
        let var = dir.path().join("var");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(&var).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("a.b+c+2020+01.02.03.04"), b"...").unwrap();
        std::os::unix::fs::symlink(&elsewhere, var.join(COUNTS_DIR)).unwrap();
        assert_eq!(access_count(&var, "a.b/c/2020/01.02.03.04"), 0);
        record_once(&var, &rec(1000, "1-1"), 990, default()).unwrap();
        assert_eq!(
            std::fs::read(elsewhere.join("a.b+c+2020+01.02.03.04")).unwrap(),
            b"..."
        );
        assert_eq!(access_count(&var, "a.b/c/2020/01.02.03.04"), 0);
        // The same directory, not linked: read.
        std::fs::remove_file(var.join(COUNTS_DIR)).unwrap();
        std::fs::rename(&elsewhere, var.join(COUNTS_DIR)).unwrap();
        assert_eq!(access_count(&var, "a.b/c/2020/01.02.03.04"), 3);
    }

    #[test]
    fn the_marks_of_an_hour_share_one_inode() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let hour = dir.path().join(MARKS_DIR).join("0");
        let ino = |name: &str| std::fs::symlink_metadata(hour.join(name)).unwrap().ino();
        for key in ["1-1", "1-2", "1-3"] {
            let outcome = record_once(dir.path(), &rec(1000, key), 990, default()).unwrap();
            assert_eq!(outcome, Outcome::Counted);
        }
        let shared = ino(MARK_INODE);
        assert_eq!([ino("1-1"), ino("1-2"), ino("1-3")], [shared; 3]);
        let meta = std::fs::symlink_metadata(hour.join(MARK_INODE)).unwrap();
        assert_eq!(meta.nlink(), 4);
        assert!(meta.is_file());
        // The shared file gone (pruned, or left behind when it had all its links): the
        // next mark makes a new one, and the marks made before still count.
        std::fs::remove_file(hour.join(MARK_INODE)).unwrap();
        let outcome = record_once(dir.path(), &rec(1001, "1-4"), 990, default()).unwrap();
        assert_eq!(outcome, Outcome::Counted);
        assert_ne!(ino(MARK_INODE), shared);
        assert_eq!(ino("1-4"), ino(MARK_INODE));
        let again = record_once(dir.path(), &rec(1002, "1-2"), 990, default()).unwrap();
        assert_eq!(again, Outcome::AlreadyCounted);
        let (records, malformed) = read_all(dir.path());
        assert_eq!((records.len(), malformed), (4, 0));
    }

    #[test]
    fn torn_lines_are_closed_and_long_lines_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = rec(5000, "5-0").to_line();
        text.push_str(&"x".repeat(3 * MAX_LINE));
        text.push('\n');
        text.push_str("2026-01-01T00:00:00Z\ttorn");
        std::fs::write(log_path(dir.path()), &text).unwrap();
        assert_eq!(
            record_once(dir.path(), &rec(9999, "9-9"), 9000, default()).unwrap(),
            Outcome::Counted
        );
        assert_eq!(
            read_all(dir.path()),
            (vec![rec(5000, "5-0"), rec(9999, "9-9")], 2)
        );
    }

    #[test]
    fn marks_of_expired_hours_are_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join(MARKS_DIR).join("1");
        std::fs::create_dir_all(&old).unwrap();
        for i in 0..20 {
            std::fs::write(old.join(format!("1-{i}")), "").unwrap();
        }
        let now = 10 * KEY_LIFETIME_SECS;
        record_once(dir.path(), &rec(now, "7-7"), now, default()).unwrap();
        assert_eq!(std::fs::read_dir(&old).unwrap().count(), 4);
        record_once(dir.path(), &rec(now, "7-8"), now, default()).unwrap();
        assert!(!old.exists());
    }

    fn synced_of(var: &Path) -> Option<Synced> {
        let log = std::fs::metadata(log_path(var)).unwrap();
        let record = File::open(var.join(SYNCED_NAME)).unwrap();
        read_synced(&record, log.ino(), log.len())
    }

    fn log_len(var: &Path) -> u64 {
        std::fs::metadata(log_path(var)).unwrap().len()
    }

    /// The length the synced record covers.
    fn synced_len(var: &Path) -> Option<u64> {
        synced_of(var).map(|s| s.len)
    }

    /// With `sync_interval = "0"`, the contract before deferred syncs: each counted line
    /// is covered by the record (synced) before record_once returns.
    #[test]
    fn a_counted_line_is_covered_by_the_synced_record() {
        let dir = tempfile::tempdir().unwrap();
        let var = dir.path();
        record_once(var, &rec(1000, "1-1"), 990, at_once()).unwrap();
        let one = log_len(var);
        assert_eq!(synced_len(var), Some(one));
        record_once(var, &rec(1001, "1-2"), 990, at_once()).unwrap();
        let two = log_len(var);
        assert_eq!(two, 2 * one);
        assert_eq!(synced_len(var), Some(two));
        // A replay writes nothing and leaves the record as it is.
        assert_eq!(
            record_once(var, &rec(1002, "1-1"), 990, at_once()).unwrap(),
            Outcome::AlreadyCounted
        );
        assert_eq!(synced_len(var), Some(two));
    }

    #[test]
    fn a_stale_or_torn_synced_record_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let var = dir.path();
        record_once(var, &rec(1000, "1-1"), 990, at_once()).unwrap();
        // The log moved away and a new one begun: the record names the old inode.
        std::fs::rename(log_path(var), var.join("old.log")).unwrap();
        assert_eq!(
            std::fs::read(var.join(SYNCED_NAME)).unwrap().len(),
            SYNCED_LEN
        );
        record_once(var, &rec(1001, "1-2"), 990, at_once()).unwrap();
        let len = log_len(var);
        assert_eq!(synced_len(var), Some(len));

        let ino = std::fs::metadata(log_path(var)).unwrap().ino();
        let record = File::open(var.join(SYNCED_NAME)).unwrap();
        assert_eq!(read_synced(&record, ino + 1, len), None);
        // 20 digits each, the check of the three, a newline: 84 bytes.
        let line = synced_line(7, 120, 5000);
        assert_eq!(line.len(), SYNCED_LEN);
        assert!(line.starts_with("00000000000000000007 00000000000000000120 00000000000000005000 "));
        // A record torn by a crash (its length from one write, its check from another),
        // and one of the format before the time was recorded (63 bytes).
        let torn = format!("{}{}", &synced_line(7, 999, 5000)[..42], &line[42..]);
        let old = "00000000000000000007 00000000000000000120 12345678901234567890\n";
        for text in [line.as_str(), torn.as_str(), old, "garbage\n"] {
            std::fs::write(var.join(SYNCED_NAME), text).unwrap();
            let record = File::open(var.join(SYNCED_NAME)).unwrap();
            let expected = (text == line).then_some(Synced {
                len: 120,
                at_ms: 5000,
            });
            assert_eq!(read_synced(&record, 7, 1000), expected, "{text:?}");
        }
        // A record beyond the log's length (the log cut in place) is not trusted either:
        // the next line is synced and the record set back.
        let record = File::open(var.join(SYNCED_NAME)).unwrap();
        assert_eq!(read_synced(&record, 7, 119), None);
        std::fs::write(var.join(SYNCED_NAME), synced_line(ino, 1 << 40, 0)).unwrap();
        record_once(var, &rec(1003, "1-3"), 990, at_once()).unwrap();
        assert_eq!(synced_len(var), Some(log_len(var)));
    }

    /// The lines of the log of `var`, whole.
    fn lines(var: &Path) -> Vec<String> {
        let text = std::fs::read_to_string(log_path(var)).unwrap();
        assert!(text.ends_with('\n'), "{text:?}");
        text.lines().map(String::from).collect()
    }

    #[test]
    fn a_line_is_in_the_log_when_counted_and_synced_once_the_interval_is_past() {
        let dir = tempfile::tempdir().unwrap();
        let var = dir.path();
        let now = Cell::new(10_000u64);
        let clock = || now.get();
        let d = Durability {
            interval: Duration::from_secs(1),
            clock: &clock,
        };
        let count = |key: &str, at: u64| {
            now.set(at);
            let before = syncs();
            let outcome = record_once(var, &rec(1000, key), 990, d).unwrap();
            (outcome, syncs() - before)
        };
        // No record yet: the last sync is unknown, so the first line is synced.
        assert_eq!(count("1-1", 10_000), (Outcome::Counted, 1));
        assert_eq!(
            synced_of(var),
            Some(Synced {
                len: log_len(var),
                at_ms: 10_000
            })
        );
        let first = log_len(var);
        // Within the interval: the line is in the log when "counted" is answered, unsynced.
        assert_eq!(count("1-2", 10_400), (Outcome::Counted, 0));
        assert_eq!(count("1-3", 10_999), (Outcome::Counted, 0));
        assert_eq!(lines(var).len(), 3);
        assert!(lines(var)[2].contains("\t1-3\t"));
        assert_eq!(synced_len(var), Some(first));
        // A replay writes nothing and syncs nothing, even past the interval.
        assert_eq!(count("1-2", 12_000), (Outcome::AlreadyCounted, 0));
        // The interval past since the last sync began: this line's sync covers the three.
        assert_eq!(count("1-4", 11_000), (Outcome::Counted, 1));
        assert_eq!(
            synced_of(var),
            Some(Synced {
                len: log_len(var),
                at_ms: 11_000
            })
        );
        assert_eq!(lines(var).len(), 4);
        // The clock set back: a last sync "in the future" would put the next one off by
        // as much, so it is due at once.
        assert_eq!(count("1-5", 5_000), (Outcome::Counted, 1));
        assert_eq!(
            synced_of(var),
            Some(Synced {
                len: log_len(var),
                at_ms: 5_000
            })
        );

        // What no later acknowledgment came to sync: sync_due (serve's timer) says when
        // to come back, and syncs once the interval is past.
        assert_eq!(count("1-6", 5_200), (Outcome::Counted, 0));
        let behind = synced_len(var);
        now.set(5_500);
        assert_eq!(sync_due(var, d).unwrap(), Duration::from_millis(500));
        assert_eq!((syncs(), synced_len(var)), (3, behind));
        now.set(6_000);
        assert_eq!(sync_due(var, d).unwrap(), Duration::from_secs(1));
        assert_eq!(syncs(), 4);
        assert_eq!(
            synced_of(var),
            Some(Synced {
                len: log_len(var),
                at_ms: 6_000
            })
        );
        // Nothing behind: nothing synced, whatever the time.
        now.set(9_000);
        assert_eq!(sync_due(var, d).unwrap(), Duration::from_secs(1));
        assert_eq!(syncs(), 4);
        assert_eq!(lines(var).len(), 6);
    }

    #[test]
    fn a_zero_interval_syncs_before_each_answer() {
        let dir = tempfile::tempdir().unwrap();
        let var = dir.path();
        // The clock stands still: a zero interval does not look at it.
        let clock = || 10_000u64;
        let d = Durability {
            interval: Duration::ZERO,
            clock: &clock,
        };
        for (n, key) in ["2-1", "2-2", "2-3"].into_iter().enumerate() {
            assert_eq!(
                record_once(var, &rec(1000, key), 990, d).unwrap(),
                Outcome::Counted
            );
            assert_eq!(syncs(), n + 1);
            assert_eq!(synced_len(var), Some(log_len(var)));
        }
        assert_eq!(
            record_once(var, &rec(1000, "2-1"), 990, d).unwrap(),
            Outcome::AlreadyCounted
        );
        assert_eq!(syncs(), 3);
    }

    #[test]
    fn stats_syncs_what_no_acknowledgment_came_to_sync() {
        let dir = tempfile::tempdir().unwrap();
        let var = dir.path();
        // Neither var/ nor a log: nothing to sync, nothing made.
        let missing = var.join("var");
        assert_eq!(sync_due(&missing, at_once()).unwrap(), Duration::ZERO);
        assert!(!missing.exists());
        assert_eq!(sync_due(var, at_once()).unwrap(), Duration::ZERO);
        assert_eq!(syncs(), 0);
        assert!(!var.join(SYNCED_NAME).exists());
        // A line not synced (the record lost: as after an older version's log).
        record_once(var, &rec(1000, "3-1"), 990, at_once()).unwrap();
        std::fs::remove_file(var.join(SYNCED_NAME)).unwrap();
        assert_eq!(sync_due(var, at_once()).unwrap(), Duration::ZERO);
        assert_eq!(syncs(), 2);
        assert_eq!(synced_len(var), Some(log_len(var)));
        assert_eq!(sync_due(var, at_once()).unwrap(), Duration::ZERO);
        assert_eq!(syncs(), 2);
    }

    #[test]
    fn a_due_sync_under_way_elsewhere_is_not_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let var = dir.path().to_path_buf();
        record_once(&var, &rec(1000, "4-1"), 990, default()).unwrap();
        let synced = synced_len(&var);
        // Another writer holds the record's lock, as while it syncs. The acknowledgment,
        // due (the record says its last sync began at the epoch), returns without it.
        let record = File::open(var.join(SYNCED_NAME)).unwrap();
        let ino = std::fs::metadata(log_path(&var)).unwrap().ino();
        std::fs::write(var.join(SYNCED_NAME), synced_line(ino, synced.unwrap(), 0)).unwrap();
        record.lock().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let writer = {
            let var = var.clone();
            std::thread::spawn(move || {
                let outcome = record_once(&var, &rec(1000, "4-2"), 990, default());
                tx.send((outcome.unwrap(), syncs())).unwrap();
            })
        };
        // A writer that waited for the lock would not answer before it is released.
        let answered = rx.recv_timeout(Duration::from_secs(60));
        record.unlock().unwrap();
        writer.join().unwrap();
        assert_eq!(answered, Ok((Outcome::Counted, 0)));
        assert_eq!(lines(&var).len(), 2);
        assert_eq!(synced_len(&var), synced);
    }

    #[test]
    fn a_failed_write_counts_nothing_and_the_key_counts_again() {
        use rustix::fs::FileType;
        let dir = tempfile::tempdir().unwrap();
        let var = dir.path();
        // The log a character device that refuses every write as a full disk does:
        // /dev/full's (1, 7). Only where device nodes may be made (root).
        let full = rfs::mknodat(
            rfs::CWD,
            log_path(var),
            FileType::CharacterDevice,
            Mode::from_raw_mode(0o666),
            rfs::makedev(1, 7),
        );
        if full.is_err() {
            eprintln!("skipping: cannot make a device node here (not root)");
            return;
        }
        let err = record_once(var, &rec(1000, "5-1"), 990, default()).unwrap_err();
        assert_eq!(
            err.raw_os_error(),
            Some(Errno::NOSPC.raw_os_error()),
            "{err}"
        );
        assert_eq!(syncs(), 0);
        assert!(!var.join(MARKS_DIR).join("0").join("5-1").exists());
        // Room again: the same key counts, once.
        std::fs::remove_file(log_path(var)).unwrap();
        assert_eq!(
            record_once(var, &rec(1001, "5-1"), 990, default()).unwrap(),
            Outcome::Counted
        );
        assert_eq!(
            record_once(var, &rec(1002, "5-1"), 990, default()).unwrap(),
            Outcome::AlreadyCounted
        );
        assert_eq!(read_all(var), (vec![rec(1001, "5-1")], 0));
    }

    #[test]
    fn fields_hold_no_control_bytes() {
        let mut r = rec(1, "1-1");
        r.contenttype = "a\tb\nc\x1b[31m".into();
        let line = r.to_line();
        assert_eq!(line.matches('\t').count(), 4);
        assert_eq!(line.matches('\n').count(), 1);
        assert!(!line.contains('\x1b'));
    }
}
