//! `var/oai-records`: the metadata items of the Archive in the order the OAI-PMH data
//! provider ([`crate::oai`]) hands them out — by datestamp, then rep — so that a harvest
//! from a date finds its first record by a binary search in the file, and reads from there
//! only the lines its page needs, however many items the Archive holds.
//!
//! Every line the service reads is checked against the item's own item.toml before it is
//! answered (a line that no longer says what the item says is skipped). `ibi-archive
//! check` writes it whole from its walk, and so does the data provider itself when it is
//! missing, does not read, or col/ has changed since it was written
//! ([`crate::oai_build`]: the provider never walks col/ for a request); `new` and
//! `delete` add the line of each metadata item they make or turn into a tombstone
//! (appended while it keeps the order, else the file is rewritten).
//!
//! Format: a header line, a line `formats <format>[,<format>…]` (every format of the
//! lines, for ListMetadataFormats), then one line per metadata item,
//! `<datestamp> <L|D> <rep> <format>[,<format>…]` — POSIX seconds, live or deleted, the
//! rep as its directory spells it, the keys of its `[formats]` — sorted by datestamp, then
//! rep (as bytes). A line after its item was changed again by `delete` stays until the
//! next `check`, and is skipped.

use std::cmp::Ordering;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::item::is_format_name;
use ::ibi::Rep;

/// The file, under the Archive's `var/`.
pub const FILE_NAME: &str = "oai-records";

const HEADER: &[u8] = b"ibi-archive oai-records 1\n";
/// Longest line believed (a rep is at most a few hundred bytes, formats a few).
const MAX_LINE: usize = 2048;

/// One line: a metadata item, its datestamp, whether it is a tombstone, its formats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub seconds: i64,
    pub deleted: bool,
    /// The rep as the item's directory spells it (its path below `col/`).
    pub rep: String,
    pub formats: Vec<String>,
}

impl Entry {
    /// The order of the file: datestamp, then rep as bytes.
    pub fn key(&self) -> (i64, &str) {
        (self.seconds, &self.rep)
    }

    fn line(&self) -> Option<String> {
        if !self.formats.iter().all(|f| is_format_name(f)) || Rep::parse(&self.rep).is_err() {
            return None;
        }
        if self.rep.bytes().any(|b| b == b' ' || b.is_ascii_control()) {
            return None;
        }
        Some(format!(
            "{} {} {} {}\n",
            self.seconds,
            if self.deleted { 'D' } else { 'L' },
            self.rep,
            self.formats.join(",")
        ))
    }

    fn parse(line: &[u8]) -> Option<Entry> {
        let line = std::str::from_utf8(line).ok()?;
        let mut fields = line.split(' ');
        let seconds: i64 = fields.next()?.parse().ok()?;
        let deleted = match fields.next()? {
            "L" => false,
            "D" => true,
            _ => return None,
        };
        let rep = fields.next()?;
        Rep::parse(rep).ok()?;
        let formats = fields.next()?;
        if fields.next().is_some() {
            return None;
        }
        let formats: Vec<String> = if formats.is_empty() {
            Vec::new()
        } else {
            formats.split(',').map(str::to_string).collect()
        };
        if !formats.iter().all(|f| is_format_name(f)) {
            return None;
        }
        Some(Entry {
            seconds,
            deleted,
            rep: rep.to_string(),
            formats,
        })
    }
}

/// The line of `item` when it is a record of the data provider (its datestamp as the service works it
/// out: its timestamp, else the newest modification in its directory).
pub fn entry_of(item: &crate::item::Item) -> Option<Entry> {
    if !item.is_record() {
        return None;
    }
    let seconds = match item.timestamp {
        Some(t) => t,
        None => {
            let dir = item.handle.as_ref()?;
            let (newest, _) = dir.newest_mtime(crate::layout::MAX_TIMESTAMP_ENTRIES);
            newest.or_else(|| dir.item_toml_mtime()).unwrap_or(0)
        }
    };
    Some(Entry {
        seconds,
        deleted: item.state == crate::item::State::Deleted,
        rep: item.rep.as_str().to_string(),
        formats: item.formats.keys().cloned().collect(),
    })
}

/// A format of a record left out of the index: the format, its file, and why.
pub type FormatFault = (String, String, String);

/// The line of `item` as the index holds it ([`entry_of`]): of a live record, only the
/// formats whose file the data provider can answer, so that no list names the record in
/// another; with, for each format whose file is in doc/ but cannot be answered, the
/// format, the file and why (a fault `check` reports; a file that is not there, or not
/// servable, is reported by its check of the item's files).
pub fn indexed_entry(item: &crate::item::Item) -> Option<(Entry, Vec<FormatFault>)> {
    let mut entry = entry_of(item)?;
    let mut faults = Vec::new();
    if item.state != crate::item::State::Deleted {
        entry.formats.retain(|f| {
            let file = &item.formats[f];
            let servable = item
                .handle
                .as_ref()
                .is_some_and(|d| d.stored_doc_name(file.as_bytes()).is_ok());
            match crate::oai::metadata::check_metadata(item, file) {
                Ok(()) => true,
                Err(_) if !servable => false,
                Err(e) => {
                    faults.push((f.clone(), file.clone(), e));
                    false
                }
            }
        });
    }
    Some((entry, faults))
}

/// The file, opened for reading by the service.
pub struct Index {
    file: File,
    len: u64,
    /// Where the lines of items begin.
    start: u64,
    /// Every format of the lines.
    pub formats: Vec<String>,
}

impl Index {
    /// Opens `var/oai-records`; `None` when it is absent, unreadable or has not the header
    /// and the line of formats.
    pub fn open(var: &Path) -> Option<Index> {
        let file = open_regular(var)?;
        let len = file.metadata().ok()?.len();
        let mut head = vec![0u8; (HEADER.len() + MAX_LINE).min(len as usize)];
        file.read_exact_at(&mut head, 0).ok()?;
        let rest = head.strip_prefix(HEADER)?;
        let end = rest.iter().position(|&b| b == b'\n')?;
        let formats = parse_formats(&rest[..end])?;
        Some(Index {
            file,
            len,
            start: (HEADER.len() + end + 1) as u64,
            formats,
        })
    }

    /// Where the lines begin.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Where they end.
    pub fn end(&self) -> u64 {
        self.len
    }

    /// The line that starts at `at`, and where the next one starts; `None` at the end,
    /// `Some(Err)` for a line that does not read (the file is then not believed).
    pub fn line_at(&self, at: u64) -> Option<io::Result<(Entry, u64)>> {
        if at >= self.len {
            return None;
        }
        let mut buf = vec![0u8; MAX_LINE.min((self.len - at) as usize)];
        if let Err(e) = self.file.read_exact_at(&mut buf, at) {
            return Some(Err(e));
        }
        let Some(end) = buf.iter().position(|&b| b == b'\n') else {
            // The last line, still being appended when the file was opened: not yet.
            if at + buf.len() as u64 == self.len {
                return None;
            }
            return Some(Err(bad_line(at)));
        };
        match Entry::parse(&buf[..end]) {
            Some(e) => Some(Ok((e, at + end as u64 + 1))),
            None => Some(Err(bad_line(at))),
        }
    }

    /// The lines from `at` on, read in blocks of 64 KiB: each with where the next starts.
    pub fn lines_from(&self, at: u64) -> Lines<'_> {
        Lines {
            index: self,
            at,
            buf: Vec::new(),
            used: 0,
            failed: false,
        }
    }

    /// The first line starting at or after byte `at` (`at` itself when a line starts there).
    fn line_start_from(&self, at: u64) -> io::Result<u64> {
        if at <= self.start() {
            return Ok(self.start());
        }
        let from = at - 1;
        let mut buf = vec![0u8; MAX_LINE.min((self.len - from) as usize)];
        self.file.read_exact_at(&mut buf, from)?;
        match buf.iter().position(|&b| b == b'\n') {
            Some(i) => Ok(from + i as u64 + 1),
            None if from + (buf.len() as u64) >= self.len => Ok(self.len),
            None => Err(bad_line(at)),
        }
    }

    /// Where the first line whose key is not before `key` starts (or strictly after it,
    /// `after`): a binary search over the bytes of the file, lines found by their ends.
    pub fn seek(&self, key: (i64, &str), after: bool) -> io::Result<u64> {
        let mut lo = self.start();
        let mut hi = self.len;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let s = self.line_start_from(mid)?;
            if s >= hi {
                hi = mid;
                continue;
            }
            let (entry, next) = match self.line_at(s) {
                Some(r) => r?,
                None => break,
            };
            let before = match entry.key().cmp(&key) {
                Ordering::Less => true,
                Ordering::Equal => after,
                Ordering::Greater => false,
            };
            if before {
                lo = next;
            } else {
                hi = s;
            }
        }
        Ok(lo)
    }

    /// How many lines in the bytes `from..to` (both line starts) are in the list of
    /// format `prefix` (the lines that have it, and the tombstones for oai_dc), each line's
    /// fields checked without making anything of them, the file read in blocks; `prefix`
    /// empty counts every line. Past `cap` bytes read, the rest is estimated from what was
    /// counted (in proportion to the bytes): the second value says whether the count is
    /// exact.
    pub fn count(
        &self,
        from: u64,
        to: u64,
        prefix: &str,
        cap: Option<u64>,
    ) -> io::Result<(u64, bool)> {
        let mut buf = vec![0u8; 1 << 16];
        let mut carry: Vec<u8> = Vec::new();
        let mut at = from;
        let mut n = 0u64;
        let stop = cap.map_or(to, |c| to.min(from.saturating_add(c)));
        while at < stop {
            let want = ((stop - at) as usize).min(buf.len());
            let got = self.file.read_at(&mut buf[..want], at)?;
            if got == 0 {
                break;
            }
            at += got as u64;
            carry.extend_from_slice(&buf[..got]);
            let mut start = 0;
            while let Some(i) = carry[start..].iter().position(|&b| b == b'\n') {
                let line = &carry[start..start + i];
                if counts(line, prefix).ok_or_else(|| bad_line(at))? {
                    n += 1;
                }
                start += i + 1;
            }
            carry.drain(..start);
            if carry.len() > MAX_LINE {
                return Err(bad_line(at));
            }
        }
        if at >= to {
            return Ok((n, true));
        }
        // Estimated: the lines counted, in proportion to the bytes of the whole range.
        let read = (at - from - carry.len() as u64).max(1);
        Ok((
            (n as u128 * u128::from(to - from) / u128::from(read)) as u64,
            false,
        ))
    }
}

/// Whether the index line `line` is in the list of format `prefix` (every line when it
/// is empty); `None` when it is not in the format (its rep checked for spaces only: the
/// page that reads it checks it whole).
fn counts(line: &[u8], prefix: &str) -> Option<bool> {
    let mut fields = line.split(|&b| b == b' ');
    let seconds = fields.next()?;
    let digits = seconds.strip_prefix(b"-").unwrap_or(seconds);
    if digits.is_empty() || digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let deleted = match fields.next()? {
        b"L" => false,
        b"D" => true,
        _ => return None,
    };
    if fields.next()?.is_empty() {
        return None;
    }
    let formats = fields.next()?;
    if fields.next().is_some() {
        return None;
    }
    Some(
        prefix.is_empty()
            || (deleted && prefix == "oai_dc")
            || formats
                .split(|&b| b == b',')
                .any(|f| f == prefix.as_bytes()),
    )
}

/// The lines of the index from a place on (see [`Index::lines_from`]); a line that does
/// not read ends them with an error.
pub struct Lines<'a> {
    index: &'a Index,
    /// Where `buf` begins in the file.
    at: u64,
    buf: Vec<u8>,
    /// Bytes of `buf` already handed out.
    used: usize,
    failed: bool,
}

impl Iterator for Lines<'_> {
    type Item = io::Result<(Entry, u64)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            let start = self.at + self.used as u64;
            if let Some(i) = self.buf[self.used..].iter().position(|&b| b == b'\n') {
                let line = &self.buf[self.used..self.used + i];
                self.used += i + 1;
                return match Entry::parse(line) {
                    Some(e) => Some(Ok((e, self.at + self.used as u64))),
                    None => {
                        self.failed = true;
                        Some(Err(bad_line(start)))
                    }
                };
            }
            if start >= self.index.len {
                return None;
            }
            // The rest of the block, then the next one.
            self.buf.drain(..self.used);
            self.at = start;
            self.used = 0;
            if self.buf.len() > MAX_LINE {
                self.failed = true;
                return Some(Err(bad_line(start)));
            }
            let have = self.buf.len();
            let want = (64 * 1024).min((self.index.len - start) as usize - have);
            if want == 0 {
                // A last line being appended when the file was opened: not yet.
                return None;
            }
            self.buf.resize(have + want, 0);
            if let Err(e) = self
                .index
                .file
                .read_exact_at(&mut self.buf[have..], start + have as u64)
            {
                self.failed = true;
                return Some(Err(e));
            }
        }
    }
}

/// The file, opened for reading when it is a regular file: without blocking (a FIFO put
/// in its place would block every request), then its type checked.
fn open_regular(var: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(var.join(FILE_NAME))
        .ok()?;
    file.metadata().ok()?.is_file().then_some(file)
}

fn bad_line(at: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{FILE_NAME}: the line at byte {at} is not in the format"),
    )
}

/// Writes the whole file from `entries` (sorted here), atomically, as `var/`'s owner's
/// (see [`crate::col_prefixes::Listing::write`] for the same rule); whether it was written.
/// An entry that cannot be written in the format (a name with a space) is left out: the
/// walk finds its item.
pub fn write(var: &Path, mut entries: Vec<Entry>) -> bool {
    entries.sort_by(|a, b| a.key().cmp(&b.key()));
    entries.dedup_by(|a, b| a.rep == b.rep && a.seconds == b.seconds);
    let mut text = Vec::with_capacity(HEADER.len() + entries.len() * 64);
    text.extend_from_slice(HEADER);
    let mut formats: Vec<&str> = entries
        .iter()
        .filter(|e| e.line().is_some())
        .flat_map(|e| e.formats.iter().map(String::as_str))
        .collect();
    formats.sort_unstable();
    formats.dedup();
    text.extend_from_slice(format!("formats {}\n", formats.join(",")).as_bytes());
    for e in &entries {
        if let Some(line) = e.line() {
            text.extend_from_slice(line.as_bytes());
        }
    }
    let Ok(dir) = crate::var_owner::open_dir(var) else {
        return false;
    };
    let Ok(owner) = crate::var_owner::owner_for_new(dir.as_fd(), var) else {
        return false;
    };
    ::ibi::atomic::write_owned_at(dir.as_fd(), FILE_NAME, &text, 0o666, owner).is_ok()
}

/// Every line of the file at `var`, in its order (a last line without its newline, cut
/// by a crash, left out); `None` when it is absent or a line does not read.
pub fn read_all(var: &Path) -> Option<Vec<Entry>> {
    let mut text = Vec::new();
    open_regular(var)?.read_to_end(&mut text).ok()?;
    let rest = text.strip_prefix(HEADER)?;
    let end = rest.iter().position(|&b| b == b'\n')?;
    parse_formats(&rest[..end])?;
    let body = &rest[end + 1..];
    let body = match body.iter().rposition(|&b| b == b'\n') {
        Some(last) => &body[..last],
        None => return Some(Vec::new()),
    };
    body.split(|&b| b == b'\n').map(Entry::parse).collect()
}

/// Adds the line of one item that `new` or `delete` has just made or changed (the caller
/// holds `var/items.lock`): appended when it sorts after the last line, else the file is
/// rewritten with it in its place. Nothing is done when the file does not exist (the
/// service walks; `check` writes it) or does not read (`check` rewrites it). Whether
/// the file holds the line.
pub fn add(var: &Path, entry: Entry) -> bool {
    let Some(line) = entry.line() else {
        return false;
    };
    let Some(index) = Index::open(var) else {
        return false;
    };
    let new_format = entry.formats.iter().any(|f| !index.formats.contains(f));
    // A last line without its newline was cut by a crash (the caller holds the lock, so
    // none is being appended): a line appended to it would be joined to it.
    let mut end = [0u8];
    let cut = index.end() > index.start()
        && (index.file.read_exact_at(&mut end, index.end() - 1).is_err() || end[0] != b'\n');
    let last = last_line(&index);
    match last {
        // A format the line of formats does not hold yet, or a cut line: the whole file
        // again.
        _ if new_format || cut => {}
        Some(Ok(last)) if last.key() > entry.key() => {}
        Some(Err(_)) => return false,
        _ => {
            let Ok(mut f) = std::fs::OpenOptions::new()
                .append(true)
                .open(var.join(FILE_NAME))
            else {
                return false;
            };
            return f.write_all(line.as_bytes()).is_ok() && f.sync_data().is_ok();
        }
    }
    // Out of order (a clock set back, a timestamp given by hand): the whole file again.
    let Some(mut all) = read_all(var) else {
        return false;
    };
    all.push(entry);
    write(var, all)
}

/// The line of formats: `formats ` and the names, separated by `,`.
fn parse_formats(line: &[u8]) -> Option<Vec<String>> {
    let list = std::str::from_utf8(line.strip_prefix(b"formats ")?).ok()?;
    if list.is_empty() {
        return Some(Vec::new());
    }
    let formats: Vec<String> = list.split(',').map(str::to_string).collect();
    formats.iter().all(|f| is_format_name(f)).then_some(formats)
}

/// The last line of the file.
fn last_line(index: &Index) -> Option<io::Result<Entry>> {
    if index.end() <= index.start() {
        return None;
    }
    let from = index
        .end()
        .saturating_sub(MAX_LINE as u64)
        .max(index.start());
    let start = match index.line_start_from(from) {
        Ok(s) => s,
        Err(e) => return Some(Err(e)),
    };
    let mut at = start;
    let mut last = None;
    while let Some(r) = index.line_at(at) {
        match r {
            Ok((e, next)) => {
                last = Some(Ok(e));
                at = next;
            }
            Err(e) => return Some(Err(e)),
        }
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(seconds: i64, rep: &str, deleted: bool) -> Entry {
        Entry {
            seconds,
            deleted,
            rep: rep.into(),
            formats: vec!["oai_dc".into()],
        }
    }

    fn var() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn lines_read_back_and_bad_ones_do_not() {
        let e = entry(
            1_400_000_000,
            "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47",
            true,
        );
        let line = e.line().unwrap();
        assert_eq!(
            line,
            "1400000000 D sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47 oai_dc\n"
        );
        assert_eq!(Entry::parse(line.trim_end().as_bytes()), Some(e));
        for bad in [
            "x D a.b/c/2009/07.21.13.23 oai_dc",
            "1 X a.b/c/2009/07.21.13.23 oai_dc",
            "1 L not-a-rep oai_dc",
            "1 L a.b/c/2009/07.21.13.23 oai_dc extra",
            "1 L a.b/c/2009/07.21.13.23 oai<dc",
            "1 L a.b/c/2009/07.21.13.23",
        ] {
            assert_eq!(Entry::parse(bad.as_bytes()), None, "{bad}");
        }
        let mut spaced = entry(1, "a.b/c/2009/07.21.13.23", false);
        spaced.formats = vec!["a b".into()];
        assert_eq!(spaced.line(), None);
    }

    #[test]
    fn the_search_finds_the_first_line_at_or_after_a_key() {
        let var = var();
        // 500 items, two per second, from second 1000.
        let entries: Vec<Entry> = (0..500)
            .map(|i| {
                entry(
                    1000 + i / 2,
                    &format!("a.b/c/2009/07.21.13.{:02}.{:02}", i / 60, i % 60),
                    false,
                )
            })
            .collect();
        assert!(write(var.path(), entries.clone()));
        let index = Index::open(var.path()).unwrap();
        let mut sorted = entries.clone();
        sorted.sort_by(|a, b| a.key().cmp(&b.key()));
        for probe in [0usize, 1, 2, 77, 250, 498, 499] {
            let want = &sorted[probe];
            let at = index.seek(want.key(), false).unwrap();
            assert_eq!(index.line_at(at).unwrap().unwrap().0, *want, "{probe}");
            let after = index.seek(want.key(), true).unwrap();
            match sorted.get(probe + 1) {
                Some(next) => assert_eq!(index.line_at(after).unwrap().unwrap().0, *next),
                None => assert_eq!(after, index.end()),
            }
        }
        assert_eq!(index.seek((0, ""), false).unwrap(), index.start());
        assert_eq!(index.seek((1_000_000, ""), false).unwrap(), index.end());
        // Second 1100 holds items 200 and 201.
        let from = index.seek((1100, ""), false).unwrap();
        let to = index.seek((1100, "\u{10ffff}"), true).unwrap();
        assert_eq!(index.count(from, to, "", None).unwrap(), (2, true));
        assert_eq!(
            index
                .count(index.start(), index.end(), "oai_dc", None)
                .unwrap(),
            (500, true)
        );
        assert_eq!(
            index
                .count(index.start(), index.end(), "mods", None)
                .unwrap(),
            (0, true)
        );
        // Past a cap: estimated from the part read (every line here is as long as the
        // others, so the estimate is right within a line).
        let (estimate, exact) = index
            .count(index.start(), index.end(), "", Some(4096))
            .unwrap();
        assert!(!exact);
        assert!((499..=501).contains(&estimate), "{estimate}");
    }

    #[test]
    fn added_lines_keep_the_order() {
        let var = var();
        // No file: nothing added (the service walks until check writes one).
        assert!(!add(var.path(), entry(5, "a.b/c/2009/07.21.13.23", false)));
        assert!(write(
            var.path(),
            vec![entry(10, "a.b/c/2009/07.21.13.23", false)]
        ));
        assert!(add(var.path(), entry(20, "a.b/c/2009/07.21.13.24", false)));
        assert!(add(var.path(), entry(20, "a.b/c/2009/07.21.13.23", true)));
        let all = read_all(var.path()).unwrap();
        let keys: Vec<(i64, &str)> = all.iter().map(Entry::key).collect();
        assert_eq!(
            keys,
            [
                (10, "a.b/c/2009/07.21.13.23"),
                (20, "a.b/c/2009/07.21.13.23"),
                (20, "a.b/c/2009/07.21.13.24")
            ]
        );
        // The second, out of order: the file was rewritten sorted.
        assert!(all[1].deleted);
        // A format not yet in the line of formats: the file written again with it.
        let mut mods = entry(30, "a.b/c/2009/07.21.13.25", false);
        mods.formats.push("mods".into());
        assert!(add(var.path(), mods));
        assert_eq!(Index::open(var.path()).unwrap().formats, ["mods", "oai_dc"]);
        assert_eq!(read_all(var.path()).unwrap().len(), 4);
        // A last line being appended (no newline yet) is not read, and is no fault.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(var.path().join(FILE_NAME))
            .unwrap();
        f.write_all(b"40 L a.b/c/20").unwrap();
        let index = Index::open(var.path()).unwrap();
        let mut at = index.start();
        let mut n = 0;
        while let Some(line) = index.line_at(at) {
            at = line.unwrap().1;
            n += 1;
        }
        assert_eq!(n, 4);
        let read: Vec<_> = index
            .lines_from(index.start())
            .map(Result::unwrap)
            .collect();
        assert_eq!(read.len(), 4);
        assert_eq!(read[3].1, at);
    }

    #[test]
    fn a_line_cut_by_a_crash_is_not_joined_to_the_next() {
        let var = var();
        assert!(write(
            var.path(),
            vec![entry(10, "a.b/c/2009/07.21.13.23", false)]
        ));
        // A crash while `new` appended its line: the first bytes of a datestamp.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(var.path().join(FILE_NAME))
            .unwrap();
        f.write_all(b"17").unwrap();
        assert!(add(var.path(), entry(20, "a.b/c/2009/07.21.13.24", false)));
        let all = read_all(var.path()).unwrap();
        let keys: Vec<(i64, &str)> = all.iter().map(Entry::key).collect();
        assert_eq!(
            keys,
            [
                (10, "a.b/c/2009/07.21.13.23"),
                (20, "a.b/c/2009/07.21.13.24")
            ]
        );
    }

    #[test]
    fn a_fifo_or_a_directory_in_its_place_is_no_index() {
        let var = var();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            var.path().join(FILE_NAME),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o666),
            0,
        )
        .unwrap();
        // Opened for reading, a FIFO without a writer would block every request.
        assert!(Index::open(var.path()).is_none());
        assert!(!add(var.path(), entry(20, "a.b/c/2009/07.21.13.24", false)));
        std::fs::remove_file(var.path().join(FILE_NAME)).unwrap();
        std::fs::create_dir(var.path().join(FILE_NAME)).unwrap();
        assert!(Index::open(var.path()).is_none());
        assert!(read_all(var.path()).is_none());
    }

    #[test]
    fn a_file_not_in_the_format_is_not_believed() {
        let var = var();
        std::fs::write(var.path().join(FILE_NAME), "something else\n").unwrap();
        assert!(Index::open(var.path()).is_none());
        // No line of formats.
        std::fs::write(
            var.path().join(FILE_NAME),
            "ibi-archive oai-records 1\n1 L a.b/c/2009/07.21.13.23 oai_dc\n",
        )
        .unwrap();
        assert!(Index::open(var.path()).is_none());
        std::fs::write(
            var.path().join(FILE_NAME),
            "ibi-archive oai-records 1\nformats oai_dc\n1 L a.b/c/2009/07.21.13.23 oai_dc\ngarbage\n",
        )
        .unwrap();
        let index = Index::open(var.path()).unwrap();
        let (_, next) = index.line_at(index.start()).unwrap().unwrap();
        assert!(index.line_at(next).unwrap().is_err());
        assert!(read_all(var.path()).is_none());
    }
}
