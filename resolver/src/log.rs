//! The resolver's log: one line per event on stderr, control bytes escaped
//! ([`ibi::logline::clean`]), and a fault that repeats written once, then counted.
//!
//! A fault that every request meets (an Archive that takes no acknowledgment, a registry
//! on a full disk) would otherwise write one line per request. [`complain`] writes the
//! first line of a kind, counts the next ones for [`QUIET`], and then writes one line
//! with the count (`<kind>: 49 more times since 10:00:00Z`) before the next complaint of
//! that kind; [`flush`] writes the counts still open, at a stop ([`Complaints`], as
//! `ibi-archive serve` keeps its own quiet).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use ibi::logline::{self, Complaints};

/// How long the complaints of one kind after the first are counted, not written.
pub const QUIET: Duration = Duration::from_secs(10);

/// One line on stderr, escaped.
pub fn say(line: &str) {
    eprintln!("ibi-resolver: {}", logline::clean(line));
}

/// The complaints of the whole process, made when first needed.
static COMPLAINTS: Mutex<Option<Complaints>> = Mutex::new(None);

/// Writes `line`, a complaint of `kind` (a few words naming the fault and what it is
/// about, without the detail that changes from one line to the next), unless one of
/// that kind was written less than [`QUIET`] ago: then it is counted.
pub fn complain(kind: &str, line: &str) {
    let mut complaints = COMPLAINTS.lock().unwrap_or_else(|p| p.into_inner());
    complaints
        .get_or_insert_with(|| Complaints::counted(QUIET))
        .complain(kind, line, Instant::now(), &mut |l| say(l));
}

/// Writes the counts of complaints not yet written (at a stop).
pub fn flush() {
    let open = {
        let mut complaints = COMPLAINTS.lock().unwrap_or_else(|p| p.into_inner());
        complaints.take()
    };
    if let Some(mut open) = open {
        open.flush(&mut |l| say(l));
    }
}
