//! Lines for the web server's error log and for a terminal: whatever they echo (an
//! item.toml's text, a file name, a client's query), they cannot forge another line,
//! move a terminal's cursor or flood the log.
//!
//! A fault that every request or every turn of a loop meets (descriptors run out, an
//! Archive that takes no acknowledgment, a registry on a full disk) would otherwise
//! write one line each time: [`Complaints`] writes the first line of a kind, and keeps
//! the next ones of that kind quiet for a while.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write;
use std::time::{Duration, Instant};

/// Longest line written, in bytes; a longer one is cut and ends with `...`.
pub const MAX_LINE: usize = 2048;

/// `text` as one line: every control character (C0, DEL and C1, so also CR, LF, TAB
/// and ESC) written as `\xHH` (`\u{HHHH}` beyond one byte), cut to [`MAX_LINE`] bytes,
/// and without a registration key ([`hide_keys`]).
pub fn clean(text: &str) -> Cow<'_, str> {
    match hide_keys(text) {
        Cow::Borrowed(text) => escaped(text),
        Cow::Owned(hidden) => Cow::Owned(escaped(&hidden).into_owned()),
    }
}

/// The name of the pair that carries an Archive's registration key (Table 7.2).
const KEY_PAIR: &[u8] = b"registrationkey=";

/// What ends a piece of text that [`hide_keys`] judges: the separators of query pairs
/// (`&`, and `;`, which some clients and servers take for one), the start of a query,
/// and what surrounds a value echoed in a line or a pair list.
fn ends_a_piece(c: char) -> bool {
    matches!(
        c,
        '&' | ';' | '?' | ' ' | '"' | '\'' | '<' | '>' | '{' | '}'
    )
}

/// `text` with every piece of it (a run of characters between [`ends_a_piece`]'s) that
/// holds `registrationkey=`, in any case, as written or once percent-decoded, written
/// `…`: a request's target, a query, or an echo of a value, whichever way its pairs are
/// separated or escaped, never shows an Archive's registration key. Text without the
/// name and without `%` is returned as it is, unread further.
pub fn hide_keys(text: &str) -> Cow<'_, str> {
    let name = &KEY_PAIR[..KEY_PAIR.len() - 1];
    if !text.contains('%') && !contains_ignoring_case(text.as_bytes(), name) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut rest = text;
    while !rest.is_empty() {
        let end = rest.find(ends_a_piece).unwrap_or(rest.len());
        let (piece, after) = rest.split_at(end);
        let holds_key = if piece.contains('%') {
            let decoded: Vec<u8> = percent_encoding::percent_decode_str(piece).collect();
            contains_ignoring_case(&decoded, KEY_PAIR)
        } else {
            contains_ignoring_case(piece.as_bytes(), KEY_PAIR)
        };
        if holds_key {
            out.push('…');
            changed = true;
        } else {
            out.push_str(piece);
        }
        // The separator itself, then the next piece.
        let mut chars = after.chars();
        if let Some(c) = chars.next() {
            out.push(c);
        }
        rest = chars.as_str();
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

/// Whether `haystack` holds `needle` (ASCII letters in any case).
fn contains_ignoring_case(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle))
}

/// [`clean`] but for the key: controls escaped, cut to [`MAX_LINE`].
fn escaped(text: &str) -> Cow<'_, str> {
    if text.len() <= MAX_LINE && !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len().min(MAX_LINE) + 8);
    let mut piece = String::with_capacity(10);
    for c in text.chars() {
        piece.clear();
        match c {
            c if c.is_control() && (c as u32) < 0x100 => {
                let _ = write!(piece, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                let _ = write!(piece, "\\u{{{:04x}}}", c as u32);
            }
            c => piece.push(c),
        }
        if out.len() + piece.len() > MAX_LINE - 3 {
            out.push_str("...");
            break;
        }
        out.push_str(&piece);
    }
    Cow::Owned(out)
}

/// Complaints, by kind (a few words naming the fault and what it is about, without the
/// detail that changes from one line to the next): the first line of a kind is written,
/// the next ones of that kind for a quiet time after it are not.
pub struct Complaints {
    quiet: Duration,
    /// Whether the lines kept quiet are counted, and the count written.
    counted: bool,
    kinds: HashMap<String, Quiet>,
}

/// A kind of complaint whose lines are kept quiet.
struct Quiet {
    since: Instant,
    /// When the first line was written, as the count line says it (counted only).
    since_text: String,
    more: u64,
}

/// Kinds of complaint followed at once at most; past them the oldest are let go (their
/// counts written).
const MAX_KINDS: usize = 1024;

impl Complaints {
    /// Complaints whose lines in the `quiet` time after one of their kind are counted:
    /// the count (`<kind>: 49 more times since 10:00:00Z`) is written before the next line
    /// of that kind, or by [`Complaints::flush`].
    pub fn counted(quiet: Duration) -> Complaints {
        Complaints {
            quiet,
            counted: true,
            kinds: HashMap::new(),
        }
    }

    /// Complaints whose lines in the `quiet` time after one of their kind are dropped.
    pub fn dropped(quiet: Duration) -> Complaints {
        Complaints {
            counted: false,
            ..Complaints::counted(quiet)
        }
    }

    /// Writes `line`, a complaint of `kind` made at `now`, unless one of that kind was
    /// written less than the quiet time before.
    pub fn complain(&mut self, kind: &str, line: &str, now: Instant, write: &mut dyn FnMut(&str)) {
        if let Some(q) = self.kinds.get_mut(kind) {
            if now.duration_since(q.since) < self.quiet {
                q.more += 1;
                return;
            }
            if let Some(q) = self.kinds.remove(kind) {
                self.write_count(kind, &q, write);
            }
        }
        if self.kinds.len() >= MAX_KINDS {
            // The longest-followed kinds are let go to make room.
            let mut oldest: Vec<(String, Instant)> = self
                .kinds
                .iter()
                .map(|(k, q)| (k.clone(), q.since))
                .collect();
            oldest.sort_by_key(|(_, since)| *since);
            for (k, _) in oldest.into_iter().take(MAX_KINDS / 4) {
                if let Some(q) = self.kinds.remove(&k) {
                    self.write_count(&k, &q, write);
                }
            }
        }
        let since_text = if self.counted {
            time_of_day()
        } else {
            String::new()
        };
        self.kinds.insert(
            kind.to_string(),
            Quiet {
                since: now,
                since_text,
                more: 0,
            },
        );
        write(line);
    }

    /// Writes the counts not written yet, the oldest first (at a stop), and forgets every
    /// kind.
    pub fn flush(&mut self, write: &mut dyn FnMut(&str)) {
        let mut kinds: Vec<_> = self.kinds.drain().collect();
        kinds.sort_by_key(|(_, q)| q.since);
        for (kind, q) in kinds {
            self.write_count(&kind, &q, write);
        }
    }

    fn write_count(&self, kind: &str, q: &Quiet, write: &mut dyn FnMut(&str)) {
        if self.counted && q.more > 0 {
            write(&format!(
                "{kind}: {} more times since {}",
                q.more, q.since_text
            ));
        }
    }
}

/// The time of day now, `HH:MM:SSZ`.
fn time_of_day() -> String {
    let iso = crate::time::iso8601(crate::time::SystemClock::now());
    iso.split_once('T')
        .map_or(iso.clone(), |(_, t)| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_long_lines_cut() {
        assert_eq!(clean("plain line"), "plain line");
        assert_eq!(
            clean("a\nchecked 99 items: 0 faults\r\x1b[31m\u{85}"),
            "a\\x0achecked 99 items: 0 faults\\x0d\\x1b[31m\\x85"
        );
        let long = "é".repeat(MAX_LINE);
        let cut = clean(&long);
        assert!(cut.len() <= MAX_LINE, "{}", cut.len());
        assert!(cut.ends_with("..."));
    }

    #[test]
    fn no_registration_key_is_shown_however_its_pairs_are_separated_or_escaped() {
        for (text, shown) in [
            (
                "\"GET /X/Y?servicesubject=inclusionRequest&registrationkey=1234567890\" 400",
                "\"GET /X/Y?servicesubject=inclusionRequest&…\" 400",
            ),
            (
                "/X/Y?servicesubject=inclusionRequest;registrationkey=1234567890;archiveip=1.2.3.4",
                "/X/Y?servicesubject=inclusionRequest;…;archiveip=1.2.3.4",
            ),
            (
                "unknown servicesubject \"inclusionRequest;RegistrationKey=1234567890\"",
                "unknown servicesubject \"inclusionRequest;…\"",
            ),
            // Escaped: the name, the `=`, a separator.
            ("/X?registration%6Bey=1234567890&a=b", "/X?…&a=b"),
            ("/X?registrationkey%3D1234567890", "/X?…"),
            (
                "/X?servicesubject=inclusionRequest%3Bregistrationkey%3D1234567890",
                "/X?…",
            ),
            ("/X%3Fregistrationkey=1234567890", "…"),
            ("error {registrationkey=1-2}", "error {…}"),
        ] {
            assert_eq!(hide_keys(text), shown, "{text}");
            assert_eq!(clean(text), shown, "{text}");
        }
        // Naming the pair is no key; nor is an escape elsewhere.
        for kept in [
            "malformed registrationkey",
            "registration.key in archive.toml does not follow rule chave",
            "/col/a%20b/registrationkey.txt",
            "http://a.org/x%3Fy=1",
        ] {
            assert!(matches!(hide_keys(kept), Cow::Borrowed(_)), "{kept}");
        }
        // Hidden before the controls are escaped, so an escaped line cannot carry one.
        assert_eq!(clean("a\nregistrationkey=1234567890"), "…");
        assert_eq!(clean("a\n&registrationkey=1234567890"), "a\\x0a&…");
    }

    #[test]
    fn a_repeated_complaint_is_written_once_then_counted() {
        let quiet = Duration::from_secs(10);
        let mut complaints = Complaints::counted(quiet);
        let start = Instant::now();
        let mut written = Vec::new();
        let mut write = |l: &str| written.push(l.to_string());
        let kind = "test kind a";
        for i in 0..50 {
            complaints.complain(kind, &format!("line {i}"), start, &mut write);
        }
        // Another kind is not counted with it.
        complaints.complain("test kind b", "other", start, &mut write);
        // Past the quiet time: the count, then the new line.
        complaints.complain(kind, "line 50", start + quiet, &mut write);
        complaints.complain(kind, "line 51", start + quiet, &mut write);
        complaints.flush(&mut write);
        assert_eq!(written.len(), 5, "{written:?}");
        assert_eq!(written[0], "line 0");
        assert_eq!(written[1], "other");
        assert!(
            written[2].starts_with("test kind a: 49 more times since "),
            "{}",
            written[2]
        );
        assert_eq!(written[3], "line 50");
        assert!(
            written[4].starts_with("test kind a: 1 more times since "),
            "{}",
            written[4]
        );
    }

    #[test]
    fn dropped_complaints_are_not_counted() {
        let quiet = Duration::from_secs(10);
        let mut complaints = Complaints::dropped(quiet);
        let start = Instant::now();
        let mut written = Vec::new();
        let mut write = |l: &str| written.push(l.to_string());
        complaints.complain("loop", "first", start, &mut write);
        complaints.complain("loop", "second", start + quiet / 2, &mut write);
        complaints.complain("loop", "third", start + quiet, &mut write);
        complaints.complain("loop", "fourth", start + quiet, &mut write);
        complaints.flush(&mut write);
        assert_eq!(written, ["first", "third"]);
    }
}
