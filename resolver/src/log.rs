//! The resolver's log: one line per event on stderr, control bytes escaped
//! ([`ibi::logline::clean`]), and a fault that repeats written once, then counted.
//!
//! A fault that every request meets (an Archive that takes no acknowledgment, a registry
//! on a full disk) would otherwise write one line per request. [`complain`] writes the
//! first line of a kind, counts the next ones for [`QUIET`], and then writes one line
//! with the count (`<kind>: 49 more times since 10:00:00Z`) before the next complaint of
//! that kind; [`flush`] writes the counts still open, at a stop.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ibi::logline;

/// How long the complaints of one kind after the first are counted, not written.
pub const QUIET: Duration = Duration::from_secs(10);

/// Kinds of complaint followed at once at most; past them the oldest are written out.
const MAX_KINDS: usize = 1024;

/// One line on stderr, escaped.
pub fn say(line: &str) {
    eprintln!("ibi-resolver: {}", logline::clean(line));
}

/// A kind of complaint whose lines are being counted.
struct Counting {
    since: Instant,
    /// When the first line was written, as the log says it.
    since_text: String,
    more: u64,
}

static COUNTING: Mutex<Option<HashMap<String, Counting>>> = Mutex::new(None);

/// Writes `line`, a complaint of `kind` (a few words naming the fault and what it is
/// about, without the detail that changes from one line to the next), unless one of
/// that kind was written less than [`QUIET`] ago: then it is counted.
pub fn complain(kind: &str, line: &str) {
    complain_at(kind, line, Instant::now(), &mut |l| say(l));
}

/// Writes the counts of complaints not yet written (at a stop).
pub fn flush() {
    let open = {
        let mut counting = COUNTING.lock().unwrap_or_else(|p| p.into_inner());
        counting.take().unwrap_or_default()
    };
    let mut kinds: Vec<_> = open.into_iter().filter(|(_, c)| c.more > 0).collect();
    kinds.sort_by_key(|(_, c)| c.since);
    for (kind, c) in kinds {
        say(&count_line(&kind, &c));
    }
}

fn count_line(kind: &str, c: &Counting) -> String {
    format!("{kind}: {} more times since {}", c.more, c.since_text)
}

fn complain_at(kind: &str, line: &str, now: Instant, write: &mut dyn FnMut(&str)) {
    let mut guard = COUNTING.lock().unwrap_or_else(|p| p.into_inner());
    let counting = guard.get_or_insert_with(HashMap::new);
    if let Some(c) = counting.get_mut(kind) {
        if now.duration_since(c.since) < QUIET {
            c.more += 1;
            return;
        }
        if c.more > 0 {
            write(&count_line(kind, c));
        }
        counting.remove(kind);
    }
    if counting.len() >= MAX_KINDS {
        // The longest-counted kinds are written out to make room.
        let mut oldest: Vec<(String, Instant)> =
            counting.iter().map(|(k, c)| (k.clone(), c.since)).collect();
        oldest.sort_by_key(|(_, since)| *since);
        for (k, _) in oldest.into_iter().take(MAX_KINDS / 4) {
            if let Some(c) = counting.remove(&k) {
                if c.more > 0 {
                    write(&count_line(&k, &c));
                }
            }
        }
    }
    counting.insert(
        kind.to_string(),
        Counting {
            since: now,
            since_text: clock_time(),
            more: 0,
        },
    );
    write(line);
}

/// The time of day now, `HH:MM:SSZ`.
fn clock_time() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let iso = ibi::time::iso8601(secs);
    iso.split_once('T')
        .map_or(iso.clone(), |(_, t)| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_complaint_is_written_once_then_counted() {
        let start = Instant::now();
        let mut written = Vec::new();
        let mut write = |l: &str| written.push(l.to_string());
        let kind = "test kind a";
        for i in 0..50 {
            complain_at(kind, &format!("line {i}"), start, &mut write);
        }
        // Another kind is not counted with it.
        complain_at("test kind b", "other", start, &mut write);
        // Past the quiet time: the count, then the new line.
        complain_at(kind, "line 50", start + QUIET, &mut write);
        assert_eq!(written.len(), 4, "{written:?}");
        assert_eq!(written[0], "line 0");
        assert_eq!(written[1], "other");
        assert!(
            written[2].starts_with("test kind a: 49 more times since "),
            "{}",
            written[2]
        );
        assert_eq!(written[3], "line 50");
    }
}
