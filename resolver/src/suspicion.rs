//! Archives under suspicion: those that answered, for several IBIs, against the IBI's
//! home ([`crate::homes`]) — a URL for a file or relation the home, claiming the
//! Original, says it does not have; or the Original the home claims too. The home is the
//! one Archive no other can make itself, so an Archive that contradicts the homes of
//! [`SUSPECT_AFTER`] IBIs is one that claims what it does not hold (an Archive that
//! claims every IBI asked is caught at its third file path).
//!
//! An Archive under suspicion is still asked, and its answers shown, but what it answers
//! decides nothing unless it may hold the IBI itself (its home, or the Archive the memory
//! names): its claims no longer take the IBIs nobody else answers for, nor those whose
//! holder is down. Said once in the log, counted in `/metrics`. It is forgiven
//! [`FORGIVEN_AFTER`] after its last contradiction, and not before: no request of its own
//! (an exclusion and a new inclusion, say) clears it. Excluding it, or unregistering it,
//! is the operator's answer for good.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

/// Distinct IBIs whose home an Archive contradicted before it is under suspicion.
pub const SUSPECT_AFTER: usize = 3;
/// How long after its last contradiction an Archive stays under suspicion.
pub const FORGIVEN_AFTER: Duration = Duration::from_secs(24 * 3600);
/// Archives whose contradictions are kept at most (the least recent forgotten first).
const KEPT: usize = 10_000;

/// What is known of one Archive's contradictions.
#[derive(Debug)]
struct Record {
    /// The IBIs (keys) whose home it contradicted, at most [`SUSPECT_AFTER`].
    ibis: HashSet<String>,
    /// Milliseconds since the epoch of the last contradiction.
    last_ms: i64,
}

/// The Archives that contradicted homes, by key.
#[derive(Debug, Default)]
pub struct Suspicion {
    map: Mutex<HashMap<String, Record>>,
}

/// What a contradiction changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Unchanged,
    /// The Archive is under suspicion from now on.
    Suspected,
}

impl Suspicion {
    /// `archive` answered for `ibi` against the IBI's home, at `now_ms`.
    pub fn contradicted(&self, archive: &str, ibi: &str, now_ms: i64) -> Change {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        let forgotten = |r: &Record| now_ms - r.last_ms >= FORGIVEN_AFTER.as_millis() as i64;
        if !map.contains_key(archive) && map.len() >= KEPT {
            map.retain(|_, r| !forgotten(r));
            if map.len() >= KEPT {
                if let Some(oldest) = map
                    .iter()
                    .min_by_key(|(_, r)| r.last_ms)
                    .map(|(k, _)| k.clone())
                {
                    map.remove(&oldest);
                }
            }
        }
        let record = map.entry(archive.to_string()).or_insert(Record {
            ibis: HashSet::new(),
            last_ms: now_ms,
        });
        if forgotten(record) {
            record.ibis.clear();
        }
        let before = record.ibis.len() >= SUSPECT_AFTER;
        if record.ibis.len() < SUSPECT_AFTER {
            record.ibis.insert(ibi.to_string());
        }
        record.last_ms = now_ms;
        if !before && record.ibis.len() >= SUSPECT_AFTER {
            Change::Suspected
        } else {
            Change::Unchanged
        }
    }

    /// Whether `archive` is under suspicion at `now_ms`.
    pub fn suspects(&self, archive: &str, now_ms: i64) -> bool {
        let map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.get(archive).is_some_and(|r| {
            r.ibis.len() >= SUSPECT_AFTER && now_ms - r.last_ms < FORGIVEN_AFTER.as_millis() as i64
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_contradicted_homes_make_a_suspect_until_a_day_without_one() {
        let s = Suspicion::default();
        let t = 1_000_000;
        // The same IBI again and again is one IBI.
        for _ in 0..5 {
            assert_eq!(s.contradicted("m", "ibi-1", t), Change::Unchanged);
        }
        assert!(!s.suspects("m", t));
        assert_eq!(s.contradicted("m", "ibi-2", t), Change::Unchanged);
        assert_eq!(s.contradicted("m", "ibi-3", t + 1), Change::Suspected);
        assert!(s.suspects("m", t + 1));
        // Said once: the next contradiction changes nothing.
        assert_eq!(s.contradicted("m", "ibi-4", t + 2), Change::Unchanged);
        // Others are not touched.
        assert!(!s.suspects("r", t + 2));
        // Forgiven a day after its last contradiction; then it starts again from none.
        let day = FORGIVEN_AFTER.as_millis() as i64;
        assert!(s.suspects("m", t + 2 + day - 1));
        assert!(!s.suspects("m", t + 2 + day));
        assert_eq!(s.contradicted("m", "ibi-5", t + 2 + day), Change::Unchanged);
        assert!(!s.suspects("m", t + 2 + day));
    }
}
