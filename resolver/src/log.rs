//! The resolver's log: one line per event on stderr, control bytes escaped
//! ([`ibi::logline::clean`]), and a fault that repeats written once, then counted.
//!
//! Each line starts with its time, RFC 3339 in UTC to the millisecond
//! (`2026-11-26T15:09:43.123Z ibi-resolver: listening on ...`), except when stderr is the
//! systemd journal, which stamps every line itself: systemd sets `JOURNAL_STREAM` to the
//! device and inode of the stream it connects to stderr (`systemd.exec(5)`), and the
//! line is then written as it is (`ibi-resolver: listening on ...`). Which one is decided
//! once, at the first line ([`stamped`]). A command's own message (a usage error, why it
//! failed: [`tell`]) is its answer to the operator, not a log line, and has no time.
//!
//! A fault that every request meets (an Archive that takes no acknowledgment, a registry
//! on a full disk) would otherwise write one line per request. [`complain`] writes the
//! first line of a kind, counts the next ones for [`QUIET`], and then writes one line
//! with the count (`<kind>: 49 more times since 10:00:00Z`) before the next complaint of
//! that kind; [`flush`] writes the counts still open, at a stop ([`Complaints`], as
//! `ibi-archive serve` keeps its own quiet).

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use ibi::logline::{self, Complaints};

/// How long the complaints of one kind after the first are counted, not written.
pub const QUIET: Duration = Duration::from_secs(10);

/// One log line on stderr, escaped, after its time unless stderr is the journal.
pub fn say(line: &str) {
    if stamped() {
        write(&format!(
            "{} ibi-resolver: {}\n",
            now(),
            logline::clean(line)
        ));
    } else {
        tell(line);
    }
}

/// A command's message on stderr, escaped, without a time.
pub fn tell(line: &str) {
    write(&format!("ibi-resolver: {}\n", logline::clean(line)));
}

/// `line` written to stderr in one piece, so that lines of several threads never mix
/// and a reader never meets half a line's time; a failed write is not reported (there
/// is nowhere to).
fn write(line: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// The time of a log line: now, RFC 3339 in UTC with milliseconds.
fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Whether log lines carry their time: not when stderr is the systemd journal. Decided
/// at the first call, for the life of the process.
pub fn stamped() -> bool {
    static STAMPED: OnceLock<bool> = OnceLock::new();
    *STAMPED.get_or_init(|| !stderr_is_journal(std::env::var("JOURNAL_STREAM").ok().as_deref()))
}

/// Whether stderr is the stream `journal_stream` names (`DEVICE:INODE`, in decimal, as
/// systemd sets `JOURNAL_STREAM`): the variable is inherited by children whose stderr
/// goes elsewhere, so it counts only when it matches.
fn stderr_is_journal(journal_stream: Option<&str>) -> bool {
    let Some((dev, ino)) = journal_stream.and_then(|v| v.split_once(':')) else {
        return false;
    };
    match rustix::fs::fstat(std::io::stderr()) {
        Ok(st) => dev.parse() == Ok(st.st_dev) && ino.parse() == Ok(st.st_ino),
        Err(_) => false,
    }
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
