//! The two top levels of `col/` (subdomains, then `word[.port]` prefixes), remembered
//! between requests in `var/col-prefixes` and believed only while every directory they
//! were read from is unchanged.
//!
//! An IBIp names an item's date but not its prefix, so finding one means knowing every
//! prefix of the Archive; a rep not found as spelled needs the names in col/ to look for
//! other spellings of its subdomain (and of its prefix there). Listing `col/` and each of
//! its subdomains costs five system calls per directory (ext4 reads even a one-block
//! directory through its hash tree): on the reference machine ~7.5 µs each, the better
//! part of an IBIp lookup, for names that change a few times in an Archive's life. So the
//! administrator's command `ibi-archive prefixes` writes the listings down, each with the
//! identity (device, inode) and change time (ctime) of the directory it came from, and a
//! request `stat`s those directories instead of listing them; the service itself never
//! writes the file. A directory's ctime moves whenever an entry is added, removed or
//! renamed in it (and cannot be set back by `touch` or `rsync`, unlike mtime); a
//! directory replaced by another has another inode.
//! The file is an optimisation only: absent, unreadable, malformed or out of date, the
//! directories that changed are listed and the answer is the same.
//!
//! File systems stamp ctimes with a coarse clock (a few milliseconds), so an entry added
//! in the same tick as a listing could leave the ctime unchanged. A listing is therefore
//! written down only when every directory in it last changed at least two seconds
//! before: any later change then stamps a different ctime.
//!
//! Nothing below the prefixes is remembered: items are looked up by name on every
//! request, and an item dropped into an existing prefix answers at once.

use std::io::Read;
use std::ops::Range;
use std::path::Path;

use crate::layout::Col;

/// The file, under the Archive's `var/`.
pub const FILE_NAME: &str = "col-prefixes";

const HEADER: &str = "ibi-archive col-prefixes 1";
/// Larger files are not read (an Archive has tens of prefixes, not thousands).
const MAX_LEN: u64 = 256 * 1024;

/// A directory's identity and last change: while both stay, so do its entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    ctime: i64,
    ctime_nsec: i64,
}

impl Stamp {
    /// The stamp of `col/` itself.
    pub fn of_col(col: &Col) -> Option<Stamp> {
        Stamp::of_stat(&col.stat().ok()?)
    }

    /// The stamp of the directory `name` in `col/` (through a symbolic link, as a
    /// listing goes).
    pub fn in_col(col: &Col, name: &str) -> Option<Stamp> {
        Stamp::of_stat(&col.stat_at(name).ok()?)
    }

    fn of_stat(st: &rustix::fs::Stat) -> Option<Stamp> {
        let is_dir =
            rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Directory;
        is_dir.then_some(Stamp {
            dev: st.st_dev,
            ino: st.st_ino,
            ctime: st.st_ctime,
            ctime_nsec: st.st_ctime_nsec as i64,
        })
    }

    /// Whether the last change was long enough before `now` (POSIX seconds) that any
    /// later change gets another ctime.
    pub fn settled(&self, now: i64) -> bool {
        crate::file_stamp::settled(self.ctime, now)
    }

    fn write(&self, out: &mut String) {
        use std::fmt::Write;
        let _ = write!(
            out,
            "{} {} {} {}",
            self.dev, self.ino, self.ctime, self.ctime_nsec
        );
    }

    fn parse<'a>(fields: &mut impl Iterator<Item = &'a [u8]>) -> Option<Stamp> {
        let mut number = || -> Option<i64> {
            let digits = fields.next()?;
            let (negative, digits) = match digits.strip_prefix(b"-") {
                Some(rest) => (true, rest),
                None => (false, digits),
            };
            if digits.is_empty() || digits.len() > 18 {
                return None;
            }
            let mut n: i64 = 0;
            for &d in digits {
                if !d.is_ascii_digit() {
                    return None;
                }
                n = n * 10 + i64::from(d - b'0');
            }
            Some(if negative { -n } else { n })
        };
        Some(Stamp {
            dev: u64::try_from(number()?).ok()?,
            ino: u64::try_from(number()?).ok()?,
            ctime: number()?,
            ctime_nsec: number()?,
        })
    }
}

/// What became of `var/col-prefixes` when the administrator's tools brought it up to date.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileState {
    /// It holds the current listing (it did already, or was rewritten).
    Held,
    /// Not rewritten: a directory in it changed less than two seconds ago (or `col/`
    /// is missing).
    Unsettled,
    /// Not rewritten: `var/` is missing or not writable, or another user's than this
    /// process's (which is not root), or a name cannot be written in it (a space or a
    /// control character).
    Unwritable,
}

/// One subdomain directory and its prefixes, as listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subdomain {
    pub name: String,
    pub stamp: Stamp,
    pub prefixes: Vec<String>,
}

/// What the file holds: `col/`'s stamp and each subdomain's listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listing {
    pub col: Stamp,
    pub subdomains: Vec<Subdomain>,
}

impl Listing {
    /// Reads `var/col-prefixes`; `None` when absent or not exactly in the format.
    pub fn read(var: &Path) -> Option<Listing> {
        ListingText::read(var)?.to_listing()
    }

    /// The file's text (see `ListingText::parse`) as names and stamps.
    pub fn parse(text: &str) -> Option<Listing> {
        ListingText::parse(text.to_string())?.to_listing()
    }

    /// The text `parse` reads back; `None` when a name cannot be written in it.
    pub fn to_text(&self) -> Option<String> {
        let mut out = String::with_capacity(1024);
        out.push_str(HEADER);
        out.push_str("\n. ");
        self.col.write(&mut out);
        out.push('\n');
        for s in &self.subdomains {
            if !storable(&s.name) || !s.prefixes.iter().all(|p| storable(p)) {
                return None;
            }
            out.push_str(&s.name);
            out.push(' ');
            s.stamp.write(&mut out);
            for p in &s.prefixes {
                out.push(' ');
                out.push_str(p);
            }
            out.push('\n');
        }
        Some(out)
    }

    /// Writes the file atomically (see [`::ibi::atomic`]), so readers see the old one or
    /// the new one, never a part; whether it was written. Nothing is written where `var/`
    /// does not exist; a failure leaves no temporary file and is not an error (the service
    /// lists). The file is var/'s owner's, the user the service runs as (written by root,
    /// it is given to that user; by another user, it is not written: see
    /// [`crate::var_owner`]).
    pub fn write(&self, var: &Path) -> bool {
        use std::os::fd::AsFd;
        let Some(text) = self.to_text() else {
            return false;
        };
        let Ok(dir) = crate::var_owner::open_dir(var) else {
            return false;
        };
        let Ok(owner) = crate::var_owner::owner_for_new(dir.as_fd(), var) else {
            return false;
        };
        ::ibi::atomic::write_owned_at(dir.as_fd(), FILE_NAME, text.as_bytes(), 0o666, owner).is_ok()
    }
}

/// `var/col-prefixes` as a request reads it: the header, `col/`'s stamp and the
/// subdomains' names checked at once, each subdomain's stamp and prefixes only when that
/// subdomain is looked into (a line that does not read is then not believed); the names
/// are left in the text (a `String` per name would cost a request more than the listing
/// it spares).
#[derive(Clone, Debug)]
pub struct ListingText {
    text: String,
    /// `col/`'s stamp.
    pub col: Stamp,
    /// Each subdomain's line: its name, and the rest of the line after the space that
    /// follows the name, as byte ranges of the text.
    lines: Vec<(Range<usize>, Range<usize>)>,
}

impl ListingText {
    /// Reads `var/col-prefixes`; `None` when absent or its header, `col/` line or names
    /// are not exactly in the format.
    pub fn read(var: &Path) -> Option<ListingText> {
        // Without blocking: a FIFO in its place (no writer) reads as empty, not for ever.
        let file = {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(var.join(FILE_NAME))
                .ok()?
        };
        // Through `take`, so that std does not `stat` the file for a size hint.
        let mut text = String::with_capacity(4096);
        file.take(MAX_LEN).read_to_string(&mut text).ok()?;
        ListingText::parse(text)
    }

    /// The file's text: a header line, `col/`'s stamp, then one line per subdomain
    /// (`<name> <dev> <ino> <ctime> <ctime_nsec> <prefix>…`), names sorted, fields
    /// separated by one space, every line ended by a newline. (Read on every request that
    /// needs col/'s names, so it is split as bytes: a `str` pattern split costs several
    /// times more here.)
    pub fn parse(text: String) -> Option<ListingText> {
        let bytes = text.as_bytes();
        let body_start = HEADER.len() + 1;
        if !text.starts_with(HEADER) || bytes.get(HEADER.len()) != Some(&b'\n') {
            return None;
        }
        if bytes.len() <= body_start || bytes.last() != Some(&b'\n') {
            return None;
        }
        let mut at = body_start;
        let mut lines = bytes[body_start..bytes.len() - 1].split(|&b| b == b'\n');
        let first = lines.next()?;
        at += first.len() + 1;
        let mut fields = first.split(|&b| b == b' ');
        if fields.next()? != b"." {
            return None;
        }
        let col = Stamp::parse(&mut fields)?;
        if fields.next().is_some() {
            return None;
        }
        let mut parsed: Vec<(Range<usize>, Range<usize>)> = Vec::with_capacity(16);
        for line in lines {
            let end = line.iter().position(|&b| b == b' ').unwrap_or(line.len());
            let sub = name(&line[..end])?;
            if parsed
                .last()
                .is_some_and(|(last, _)| &bytes[last.clone()] >= sub.as_bytes())
            {
                return None;
            }
            let rest = (at + end + 1).min(at + line.len())..at + line.len();
            parsed.push((at..at + end, rest));
            at += line.len() + 1;
        }
        Some(ListingText {
            text,
            col,
            lines: parsed,
        })
    }

    /// Each subdomain's name, in order.
    pub fn subdomains(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().map(|(name, _)| &self.text[name.clone()])
    }

    /// The stamp and the prefixes remembered for the subdomain `sub`; `None` when it is
    /// not there or its line does not read.
    pub fn prefixes(&self, sub: &str) -> Option<(Stamp, Vec<&str>)> {
        let (_, rest) = self
            .lines
            .iter()
            .find(|(name, _)| &self.text[name.clone()] == sub)?;
        let mut fields = self.text.as_bytes()[rest.clone()].split(|&b| b == b' ');
        let stamp = Stamp::parse(&mut fields)?;
        let mut prefixes: Vec<&str> = Vec::new();
        for p in fields {
            let p = name(p)?;
            if prefixes.last().is_some_and(|&last| last >= p) {
                return None;
            }
            prefixes.push(p);
        }
        Some((stamp, prefixes))
    }

    /// The same, as names and stamps; `None` when some line does not read.
    fn to_listing(&self) -> Option<Listing> {
        let subdomains = self
            .subdomains()
            .map(|sub| {
                let (stamp, prefixes) = self.prefixes(sub)?;
                Some(Subdomain {
                    name: sub.to_string(),
                    stamp,
                    prefixes: prefixes.into_iter().map(str::to_string).collect(),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Listing {
            col: self.col,
            subdomains,
        })
    }
}

/// `bytes` as a name the file can hold (the bytes of `storable`'s test; a tampered
/// file could at worst hide or invent a prefix, never reach outside `col/`).
fn name(bytes: &[u8]) -> Option<&str> {
    let plain = |&b: &u8| b > b' ' && b != b'/' && b != 0x7f;
    if bytes.first().is_none_or(|&b| b == b'.') || !bytes.iter().all(plain) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

/// Names the file can hold: what a listing of col/ keeps (not empty, not starting with
/// a dot) and free of `/`, spaces and control characters.
fn storable(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && !name.chars().any(|c| c == '/' || c == ' ' || c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_in_its_place_is_no_listing() {
        let var = tempfile::tempdir().unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            var.path().join(FILE_NAME),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o666),
            0,
        )
        .unwrap();
        // Opened for reading without a writer, a FIFO would block every request.
        assert!(ListingText::read(var.path()).is_none());
    }

    fn stamp(n: i64) -> Stamp {
        Stamp {
            dev: 2049,
            ino: 100 + n as u64,
            ctime: 1_700_000_000 + n,
            ctime_nsec: 123_456_789,
        }
    }

    fn memo() -> Listing {
        Listing {
            col: stamp(0),
            subdomains: vec![
                Subdomain {
                    name: "dpi.inpe.br".into(),
                    stamp: stamp(1),
                    prefixes: vec!["banon".into(), "banon-pc3".into()],
                },
                Subdomain {
                    name: "sid.inpe.br".into(),
                    stamp: stamp(2),
                    prefixes: vec!["mtc-m18@80".into(), "mtc-m19".into()],
                },
                Subdomain {
                    name: "urlib.net".into(),
                    stamp: stamp(3),
                    prefixes: vec![],
                },
            ],
        }
    }

    const TEXT: &str = "ibi-archive col-prefixes 1\n\
                        . 2049 100 1700000000 123456789\n\
                        dpi.inpe.br 2049 101 1700000001 123456789 banon banon-pc3\n\
                        sid.inpe.br 2049 102 1700000002 123456789 mtc-m18@80 mtc-m19\n\
                        urlib.net 2049 103 1700000003 123456789\n";

    #[test]
    fn the_text_is_as_documented_and_reads_back() {
        assert_eq!(memo().to_text().unwrap(), TEXT);
        assert_eq!(Listing::parse(TEXT), Some(memo()));
    }

    #[test]
    fn remembered_names_are_read_in_place() {
        let r = ListingText::parse(TEXT.to_string()).unwrap();
        assert_eq!(r.col, stamp(0));
        let subs: Vec<&str> = r.subdomains().collect();
        assert_eq!(subs, ["dpi.inpe.br", "sid.inpe.br", "urlib.net"]);
        assert_eq!(
            r.prefixes("sid.inpe.br"),
            Some((stamp(2), vec!["mtc-m18@80", "mtc-m19"]))
        );
        assert_eq!(r.prefixes("urlib.net"), Some((stamp(3), vec![])));
        assert!(r.prefixes("SID.inpe.br").is_none());
        assert!(r.prefixes("sid.inpe").is_none());
    }

    #[test]
    fn anything_off_format_is_refused() {
        let bad = [
            "",
            "ibi-archive col-prefixes 1\n",
            &TEXT.replace("col-prefixes 1", "col-prefixes 2"),
            &TEXT[..TEXT.len() - 1],
            &TEXT.replace(". 2049", "col 2049"),
            &TEXT.replace("123456789\ndpi", "123456789 extra\ndpi"),
            &TEXT.replace(" 101 ", " x "),
            &TEXT.replace(" 101 ", " "),
            &TEXT.replace("banon banon-pc3", "banon-pc3 banon"),
            &TEXT.replace("banon banon-pc3", "banon banon"),
            &TEXT.replace("banon banon-pc3", "banon  banon-pc3"),
            &TEXT.replace("banon banon-pc3", "banon .hidden"),
            &TEXT.replace("banon banon-pc3", "banon ../x"),
            &TEXT.replace("urlib.net", "a.net"),
            &TEXT.replace('\n', "\r\n"),
        ];
        for text in bad {
            assert_eq!(Listing::parse(text), None, "{text:?}");
        }
    }

    #[test]
    fn names_it_cannot_hold_are_not_written() {
        let mut m = memo();
        m.subdomains[0].prefixes.push("with space".into());
        assert_eq!(m.to_text(), None);
        let mut m = memo();
        m.subdomains[1].name = "tab\there".into();
        assert_eq!(m.to_text(), None);
    }

    #[test]
    fn a_change_is_settled_two_seconds_later() {
        let s = stamp(0);
        assert!(!s.settled(s.ctime));
        assert!(!s.settled(s.ctime + 1));
        assert!(s.settled(s.ctime + 2));
    }
}
