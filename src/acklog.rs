//! The access log, `var/acknowledgments.log`: one line per counted acknowledgment
//! (resolution standard §8.2: "useful for Archives that keep access statistics").
//!
//! A line is `<ISO 8601 UTC>\t<urlkey>\t<item>\t<contenttype>\t<url>\n`, the url escaped as
//! a pair-list word. Appends happen under an exclusive lock, after checking that the key
//! was not counted before; a key can only be counted within its lifetime, so that check
//! reads the log backwards only as far as the key's date of issue.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::item::iso8601;

/// The log of an Archive whose writable state is in `var`.
pub fn log_path(var: &Path) -> PathBuf {
    var.join("acknowledgments.log")
}

/// One counted access.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// POSIX second the acknowledgment arrived.
    pub time: i64,
    pub key: String,
    /// The item served (its rep as stored, or the IBI the resolver named), `-` if unknown.
    pub item: String,
    pub contenttype: String,
    /// The url, escaped as a pair-list word.
    pub url: String,
}

impl Record {
    fn to_line(&self) -> String {
        let clean = |s: &str| s.replace(['\t', '\n', '\r'], " ");
        format!(
            "{}\t{}\t{}\t{}\t{}\n",
            iso8601(self.time),
            clean(&self.key),
            clean(&self.item),
            clean(&self.contenttype),
            clean(&self.url)
        )
    }

    /// Reads a line written by [`Record::to_line`] (without its newline).
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

/// Appends `rec` unless its key was already counted. `issued` is the key's date of issue:
/// no earlier line can hold it.
pub fn record_once(var: &Path, rec: &Record, issued: i64) -> io::Result<Outcome> {
    std::fs::create_dir_all(var)?;
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(log_path(var))?;
    file.lock()?;
    let result = append_if_new(&mut file, rec, issued);
    let unlocked = file.unlock();
    let outcome = result?;
    unlocked?;
    Ok(outcome)
}

fn append_if_new(file: &mut File, rec: &Record, issued: i64) -> io::Result<Outcome> {
    let len = file.seek(SeekFrom::End(0))?;
    let (seen, ends_with_newline) = key_seen_since(file, len, &rec.key, issued - 300)?;
    if seen {
        return Ok(Outcome::AlreadyCounted);
    }
    let mut line = rec.to_line();
    if len > 0 && !ends_with_newline {
        // A writer died mid-line: end that line so ours stands whole.
        line.insert(0, '\n');
    }
    if let Err(e) = file
        .write_all(line.as_bytes())
        .and_then(|()| file.sync_data())
    {
        // A full disk takes part of a line and refuses the rest: cut the log back to
        // where it was (we hold the lock), so that no partial record is left to be read
        // as a counted one, nor glued to the next.
        let _ = file.set_len(len);
        return Err(e);
    }
    Ok(Outcome::Counted)
}

/// Reads the log backwards from `len` in blocks until lines are older than `since`.
/// Returns whether `key` was found, and whether the log ends with a newline.
fn key_seen_since(file: &mut File, len: u64, key: &str, since: i64) -> io::Result<(bool, bool)> {
    const BLOCK: u64 = 64 * 1024;
    let mut end = len;
    let mut carry: Vec<u8> = Vec::new();
    let mut ends_with_newline = true;
    let mut first = true;
    while end > 0 {
        let start = end.saturating_sub(BLOCK);
        let mut block = vec![0u8; (end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut block)?;
        if first {
            ends_with_newline = block.last() == Some(&b'\n');
            first = false;
        }
        block.extend_from_slice(&carry);
        // The first (partial) line of the block waits for the next block, unless this
        // block starts the file.
        let cut = if start == 0 {
            0
        } else {
            block
                .iter()
                .position(|&b| b == b'\n')
                .map_or(block.len(), |i| i + 1)
        };
        carry = block[..cut].to_vec();
        let mut older = false;
        for line in block[cut..].split(|&b| b == b'\n').rev() {
            let Ok(line) = std::str::from_utf8(line) else {
                continue;
            };
            let Some(r) = Record::parse_line(line) else {
                continue;
            };
            if r.key == key {
                return Ok((true, ends_with_newline));
            }
            if r.time < since {
                older = true;
            }
        }
        if older {
            break;
        }
        end = start;
    }
    Ok((false, ends_with_newline))
}

/// Every well-formed record of the log, in order; malformed lines are counted, not fatal.
pub fn read_all(var: &Path) -> io::Result<(Vec<Record>, usize)> {
    let text = match std::fs::read(log_path(var)) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
        Err(e) => return Err(e),
    };
    let mut records = Vec::new();
    let mut bad = 0;
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        match std::str::from_utf8(line).ok().and_then(Record::parse_line) {
            Some(r) => records.push(r),
            None => bad += 1,
        }
    }
    Ok((records, bad))
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

    #[test]
    fn a_key_counts_once() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            record_once(dir.path(), &rec(1000, "k1"), 990).unwrap(),
            Outcome::Counted
        );
        assert_eq!(
            record_once(dir.path(), &rec(1001, "k2"), 990).unwrap(),
            Outcome::Counted
        );
        assert_eq!(
            record_once(dir.path(), &rec(1002, "k1"), 990).unwrap(),
            Outcome::AlreadyCounted
        );
        let (all, bad) = read_all(dir.path()).unwrap();
        assert_eq!(bad, 0);
        assert_eq!(all, vec![rec(1000, "k1"), rec(1001, "k2")]);
    }

    #[test]
    fn duplicates_are_found_across_blocks_and_torn_lines_are_closed() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::new();
        text.push_str(&rec(5000, "early").to_line());
        for i in 0..3000 {
            text.push_str(&rec(6000 + i, &format!("k{i}")).to_line());
        }
        text.push_str("2026-01-01T00:00:00Z\ttorn");
        std::fs::write(log_path(dir.path()), &text).unwrap();
        assert_eq!(
            record_once(dir.path(), &rec(9999, "early"), 4000).unwrap(),
            Outcome::AlreadyCounted
        );
        assert_eq!(
            record_once(dir.path(), &rec(9999, "new"), 9000).unwrap(),
            Outcome::Counted
        );
        let (all, bad) = read_all(dir.path()).unwrap();
        assert_eq!(bad, 1);
        assert_eq!(all.last(), Some(&rec(9999, "new")));
        assert_eq!(all.len(), 3002);
    }
}
