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
//! An acknowledgment is counted once its line is on stable storage, and many share one
//! sync (group commit), whether they come from threads of `serve` or from CGI processes:
//! the line is written under the log's lock, the lock released, and then the writer takes
//! the lock of `var/acknowledgments.synced`, which records how far the log is known to be
//! synced (its inode and a length). When that length already covers its line, another's
//! sync made it durable and the writer is done at once; otherwise it takes the length of
//! the log (under a shared lock of the log: whole lines only), `fdatasync`s the log, which
//! makes every line written before durable, and records that length. While one sync runs,
//! the writers behind it wait for the lock and then, mostly, find their lines covered.
//! That record is a hint: lost or stale, it costs a sync, never a line (it is only ever
//! trusted for the inode it names and up to the log's length).
//!
//! Failures: a write that fails (a full disk) is cut back under the lock and its mark
//! removed, so no partial line stays and the key may be counted again. A sync that fails
//! (`EIO`) is answered "not counted"; its line cannot be cut (other lines may follow it)
//! and its mark stays: whether the line reached the disk is unknown after such an error,
//! and a key is never logged twice, so a retry is answered "already counted".

use std::fs::File;
use std::io::{self, BufRead, BufReader, Seek, SeekFrom, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};
use rustix::io::Errno;

use crate::var_owner;

use crate::time::iso8601;
use crate::urlkey::KEY_LIFETIME_SECS;

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
            crate::logline::clean(&s).into_owned()
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Counted,
    AlreadyCounted,
}

/// Appends `rec` unless its key was already counted, and returns `Counted` only once the
/// line is on stable storage (see the module header). `issued` is the key's date of
/// issue. What it makes in `var` (the log, its synced record, the marks and their
/// directories) is var/'s owner's, the user the service runs as, whoever makes it (see
/// [`crate::var_owner`]).
pub fn record_once(var: &Path, rec: &Record, issued: i64) -> io::Result<Outcome> {
    if rec.key.is_empty() || !rec.key.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a urlkey is digits and a dash",
        ));
    }
    let var_dir = var_owner::make_and_open_var(var)?;
    let owner = var_owner::owner_for_new(var_dir.as_fd(), var)?;
    let marks = var_owner::make_dir_at(var_dir.as_fd(), MARKS_DIR, owner)?;
    let hour = var_owner::make_dir_at(marks.as_fd(), &issued.div_euclid(3600).to_string(), owner)?;
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
    make_durable(var_dir.as_fd(), &file, end, owner)?;
    Ok(Outcome::Counted)
}

/// The file `name` of var/, opened to be read and written (`append`: written at its
/// end only); made (empty, given to `owner`) if missing.
fn open_or_make(
    var: BorrowedFd<'_>,
    name: &str,
    append: bool,
    owner: Option<var_owner::Owner>,
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
    match crate::atomic::create_owned_at(var, name, b"", 0o666, owner) {
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
    owner: Option<var_owner::Owner>,
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

/// The file every mark of an hour is a hard link to; no key has its name (a key is
/// digits and a dash).
const MARK_INODE: &str = ".mark";

/// Marks `key` counted in `hour`: false when it was already. The caller holds the log's
/// lock, so no other writer makes or replaces [`MARK_INODE`] meanwhile.
fn make_mark(hour: BorrowedFd<'_>, key: &str, owner: Option<var_owner::Owner>) -> io::Result<bool> {
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
                if let Err(e) = var_owner::give(fd.as_fd(), owner) {
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
fn make_durable(
    var: BorrowedFd<'_>,
    log: &File,
    end: u64,
    owner: Option<var_owner::Owner>,
) -> io::Result<()> {
    let record = open_or_make(var, SYNCED_NAME, false, owner)?;
    // Held until the record is dropped (closed), over the sync.
    record.lock()?;
    let meta = log.metadata()?;
    if read_synced(&record, meta.ino()).is_some_and(|synced| end <= synced && synced <= meta.len())
    {
        return Ok(());
    }
    // Whole lines only: a writer holds the log's lock exclusively while it writes (and
    // while it cuts back a line a full disk refused).
    log.lock_shared()?;
    let whole = log.metadata().map(|m| m.len());
    log.unlock()?;
    let whole = whole?;
    log.sync_data().map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("its line was written but could not be synced to stable storage: {e}"),
        )
    })?;
    // A hint for the writers that follow: if it cannot be written they sync themselves.
    let _ = record.write_all_at(synced_line(meta.ino(), whole).as_bytes(), 0);
    Ok(())
}

/// Bytes of the record of `var/acknowledgments.synced`.
const SYNCED_LEN: usize = 63;

/// The record: the log's inode, the length known synced, and a check of both (so that a
/// record torn by a crash is not taken for another), each in 20 digits.
fn synced_line(ino: u64, len: u64) -> String {
    format!("{ino:020} {len:020} {:020}\n", synced_check(ino, len))
}

fn synced_check(ino: u64, len: u64) -> u64 {
    use sha2::{Digest, Sha256};
    let sum = Sha256::digest(format!("{ino} {len}"));
    u64::from_be_bytes(sum[..8].try_into().expect("a SHA-256 sum has 32 bytes"))
}

/// The length of the log of inode `ino` known synced, when the record is of that inode
/// and whole.
fn read_synced(record: &File, ino: u64) -> Option<u64> {
    let mut buf = [0u8; SYNCED_LEN];
    record.read_exact_at(&mut buf, 0).ok()?;
    let text = std::str::from_utf8(&buf).ok()?.strip_suffix('\n')?;
    let mut fields = text.split(' ').map(|f| f.parse::<u64>().ok());
    let (Some(i), Some(len), Some(check), None) = (
        fields.next()?,
        fields.next()?,
        fields.next()?,
        fields.next(),
    ) else {
        return None;
    };
    (i == ino && check == synced_check(i, len)).then_some(len)
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
    let mut reader = BufReader::with_capacity(64 * 1024, file);
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
            record_once(dir.path(), &rec(1000, "1-1"), 990).unwrap(),
            Outcome::Counted
        );
        assert_eq!(
            record_once(dir.path(), &rec(1001, "1-2"), 990).unwrap(),
            Outcome::Counted
        );
        assert_eq!(
            record_once(dir.path(), &rec(1002, "1-1"), 990).unwrap(),
            Outcome::AlreadyCounted
        );
        assert_eq!(
            read_all(dir.path()),
            (vec![rec(1000, "1-1"), rec(1001, "1-2")], 0)
        );
        assert!(record_once(dir.path(), &rec(1003, "../x"), 990).is_err());
    }

    #[test]
    fn the_marks_of_an_hour_share_one_inode() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let hour = dir.path().join(MARKS_DIR).join("0");
        let ino = |name: &str| std::fs::symlink_metadata(hour.join(name)).unwrap().ino();
        for key in ["1-1", "1-2", "1-3"] {
            let outcome = record_once(dir.path(), &rec(1000, key), 990).unwrap();
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
        let outcome = record_once(dir.path(), &rec(1001, "1-4"), 990).unwrap();
        assert_eq!(outcome, Outcome::Counted);
        assert_ne!(ino(MARK_INODE), shared);
        assert_eq!(ino("1-4"), ino(MARK_INODE));
        let again = record_once(dir.path(), &rec(1002, "1-2"), 990).unwrap();
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
            record_once(dir.path(), &rec(9999, "9-9"), 9000).unwrap(),
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
        record_once(dir.path(), &rec(now, "7-7"), now).unwrap();
        assert_eq!(std::fs::read_dir(&old).unwrap().count(), 4);
        record_once(dir.path(), &rec(now, "7-8"), now).unwrap();
        assert!(!old.exists());
    }

    fn synced_of(var: &Path) -> Option<u64> {
        let log = std::fs::metadata(log_path(var)).unwrap();
        let record = File::open(var.join(SYNCED_NAME)).unwrap();
        read_synced(&record, log.ino())
    }

    #[test]
    fn a_counted_line_is_covered_by_the_synced_record() {
        let dir = tempfile::tempdir().unwrap();
        let var = dir.path();
        record_once(var, &rec(1000, "1-1"), 990).unwrap();
        let one = std::fs::metadata(log_path(var)).unwrap().len();
        assert_eq!(synced_of(var), Some(one));
        record_once(var, &rec(1001, "1-2"), 990).unwrap();
        let two = std::fs::metadata(log_path(var)).unwrap().len();
        assert_eq!(two, 2 * one);
        assert_eq!(synced_of(var), Some(two));
        // A replay writes nothing and leaves the record as it is.
        assert_eq!(
            record_once(var, &rec(1002, "1-1"), 990).unwrap(),
            Outcome::AlreadyCounted
        );
        assert_eq!(synced_of(var), Some(two));
    }

    #[test]
    fn a_stale_or_torn_synced_record_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let var = dir.path();
        record_once(var, &rec(1000, "1-1"), 990).unwrap();
        // The log moved away and a new one begun: the record names the old inode.
        std::fs::rename(log_path(var), var.join("old.log")).unwrap();
        assert_eq!(
            std::fs::read(var.join(SYNCED_NAME)).unwrap().len(),
            SYNCED_LEN
        );
        record_once(var, &rec(1001, "1-2"), 990).unwrap();
        let len = std::fs::metadata(log_path(var)).unwrap().len();
        assert_eq!(synced_of(var), Some(len));

        let ino = std::fs::metadata(log_path(var)).unwrap().ino();
        let record = File::open(var.join(SYNCED_NAME)).unwrap();
        assert_eq!(read_synced(&record, ino + 1), None);
        // 20 digits each, the check of both, a newline: 63 bytes.
        let line = synced_line(7, 120);
        assert_eq!(line.len(), SYNCED_LEN);
        assert!(line.starts_with("00000000000000000007 00000000000000000120 "));
        // A record torn by a crash (its length from one write, its check from another).
        let torn = format!("{}{}", &synced_line(7, 999)[..42], &line[42..]);
        for text in [line.as_str(), torn.as_str(), "garbage\n"] {
            std::fs::write(var.join(SYNCED_NAME), text).unwrap();
            let record = File::open(var.join(SYNCED_NAME)).unwrap();
            let expected = (text == line).then_some(120);
            assert_eq!(read_synced(&record, 7), expected, "{text:?}");
        }
        // A record beyond the log's length (the log cut in place) is not trusted either:
        // the next line is synced and the record set back.
        std::fs::write(var.join(SYNCED_NAME), synced_line(ino, 1 << 40)).unwrap();
        record_once(var, &rec(1003, "1-3"), 990).unwrap();
        let len = std::fs::metadata(log_path(var)).unwrap().len();
        assert_eq!(synced_of(var), Some(len));
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
