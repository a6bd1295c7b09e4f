//! The health of each included Archive: consecutive failures, last success and latency.
//! An Archive that fails `dormant_after` times in a row is dormant: resolutions do not ask
//! it, and it is probed every `probe` interval with `inclusionConfirmationRequest` until
//! it answers. Kept in memory by the server and written to the registry with the rest of
//! its state, so that `ibi-resolver archives` shows it and a restart remembers it.
//! Whether it is asked is a [`State`], each decision on it a `match`: another state would
//! be pointed at by the compiler wherever one is made.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use crate::labels::label_enum;

/// Weight of a new latency in the running average, out of 8.
const LATENCY_WEIGHT: u64 = 2;

/// An Archive that answers nothing but `503` or `429` for this long (and at least
/// `dormant_after` times) is dormant too: it is down behind a proxy that answers for it,
/// or hostile. The resolver's own load cannot bring it there: it keeps to the
/// connections a default `ibi-archive serve` accepts from one client.
pub const OVERLOADED_FOR: Duration = Duration::from_secs(30);

label_enum! {
    /// Whether resolutions ask an Archive.
    #[derive(Default)]
    State {
        /// Asked by resolutions.
        #[default]
        Awake => "awake",
        /// It failed `dormant_after` times in a row (or was overloaded as long): asked by no
        /// resolution, only probed, until it answers.
        Dormant => "dormant",
    }
}

impl State {
    /// The value of `archive_up`: 1 while it is asked, 0 while it is not.
    pub fn up(self) -> i64 {
        match self {
            State::Awake => 1,
            State::Dormant => 0,
        }
    }
}

/// One Archive's health; shared by every resolution that asks it.
#[derive(Debug, Default)]
pub struct Health {
    failures: AtomicU32,
    /// Its [`State`], kept lock-free: read and changed only by [`Health::state`] and
    /// [`Health::swap_state`].
    dormant: AtomicBool,
    /// Milliseconds since the epoch of the last answer; 0 when none yet.
    last_success_ms: AtomicI64,
    /// Running average of the answers' latency, µs; 0 when none yet.
    latency_us: AtomicU64,
    /// Changed since last written to the registry.
    dirty: AtomicBool,
    /// Milliseconds since the epoch of the first of the `503`/`429` answers in a row
    /// (0: the last answer was none), and how many.
    overloaded_since_ms: AtomicI64,
    overloads: AtomicU32,
}

/// What the registry keeps of a [`Health`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub failures: u32,
    pub state: State,
    /// Milliseconds since the epoch; 0 when never.
    pub last_success_ms: i64,
    /// µs; 0 when unknown.
    pub latency_us: u64,
}

/// What a request to an Archive did to its health.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Unchanged,
    /// It failed `dormant_after` times in a row: asked no more until a probe answers.
    FellDormant,
    /// It was dormant and answered.
    Woke,
}

impl Health {
    /// A health as the registry last recorded it.
    pub fn from_snapshot(s: &Snapshot) -> Health {
        Health {
            failures: AtomicU32::new(s.failures),
            dormant: AtomicBool::new(dormant_flag(s.state)),
            last_success_ms: AtomicI64::new(s.last_success_ms),
            latency_us: AtomicU64::new(s.latency_us),
            dirty: AtomicBool::new(false),
            overloaded_since_ms: AtomicI64::new(0),
            overloads: AtomicU32::new(0),
        }
    }

    /// Whether resolutions ask it now.
    pub fn state(&self) -> State {
        state_of_flag(self.dormant.load(Ordering::Relaxed))
    }

    /// Puts it in `to`; the state it was in.
    fn swap_state(&self, to: State) -> State {
        state_of_flag(self.dormant.swap(dormant_flag(to), Ordering::Relaxed))
    }

    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            failures: self.failures.load(Ordering::Relaxed),
            state: self.state(),
            last_success_ms: self.last_success_ms.load(Ordering::Relaxed),
            latency_us: self.latency_us.load(Ordering::Relaxed),
        }
    }

    /// An answer (any answer: an empty one is "not here", not a failure) after `took`,
    /// at `now_ms` (milliseconds since the epoch).
    pub fn success(&self, took: Duration, now_ms: i64) -> Change {
        let us = took.as_micros().min(u64::MAX as u128) as u64;
        let old = self.latency_us.load(Ordering::Relaxed);
        let new = if old == 0 {
            us.max(1)
        } else {
            ((old * (8 - LATENCY_WEIGHT) + us * LATENCY_WEIGHT) / 8).max(1)
        };
        self.latency_us.store(new, Ordering::Relaxed);
        self.last_success_ms.store(now_ms, Ordering::Relaxed);
        self.failures.store(0, Ordering::Relaxed);
        self.overloaded_since_ms.store(0, Ordering::Relaxed);
        self.overloads.store(0, Ordering::Relaxed);
        self.dirty.store(true, Ordering::Relaxed);
        match self.swap_state(State::Awake) {
            State::Dormant => Change::Woke,
            State::Awake => Change::Unchanged,
        }
    }

    /// A failure (no answer in time, a refused connection, an answer that is not a pair
    /// list); dormant once `dormant_after` come in a row (never, when 0).
    pub fn failure(&self, dormant_after: u32) -> Change {
        let failures = self
            .failures
            .fetch_add(1, Ordering::Relaxed)
            .saturating_add(1);
        self.dirty.store(true, Ordering::Relaxed);
        if dormant_after > 0 && failures >= dormant_after {
            self.fall_dormant()
        } else {
            Change::Unchanged
        }
    }

    /// An answer `503` or `429` until the timeout: overloaded, no failure; dormant only
    /// once nothing else came for [`OVERLOADED_FOR`] and `dormant_after` times (never,
    /// when 0); `now` in milliseconds since the epoch.
    pub fn overloaded(&self, dormant_after: u32, now: i64) -> Change {
        let since = match self.overloaded_since_ms.compare_exchange(
            0,
            now,
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            Ok(_) => now,
            Err(since) => since,
        };
        let overloads = self
            .overloads
            .fetch_add(1, Ordering::Relaxed)
            .saturating_add(1);
        let lasted = now - since >= OVERLOADED_FOR.as_millis() as i64;
        if dormant_after > 0 && overloads >= dormant_after && lasted {
            let change = self.fall_dormant();
            if change == Change::FellDormant {
                self.dirty.store(true, Ordering::Relaxed);
            }
            change
        } else {
            Change::Unchanged
        }
    }

    /// Makes it dormant: [`Change::FellDormant`] the first time, not again while it is.
    fn fall_dormant(&self) -> Change {
        match self.swap_state(State::Dormant) {
            State::Awake => Change::FellDormant,
            State::Dormant => Change::Unchanged,
        }
    }

    /// Whether it changed since the last call.
    fn take_dirty(&self) -> bool {
        self.dirty.swap(false, Ordering::Relaxed)
    }
}

/// The private form of `state` in [`Health`]'s atomic.
fn dormant_flag(state: State) -> bool {
    match state {
        State::Awake => false,
        State::Dormant => true,
    }
}

/// The state the private form `dormant` stands for.
fn state_of_flag(dormant: bool) -> State {
    if dormant {
        State::Dormant
    } else {
        State::Awake
    }
}

/// The health of every included Archive, by service IBI (registry key).
#[derive(Debug, Default)]
pub struct HealthBook {
    map: RwLock<HashMap<String, Arc<Health>>>,
}

impl HealthBook {
    /// The health of `archive`, created from `recorded` (what the registry holds) the
    /// first time it is asked for.
    pub fn of(&self, archive: &str, recorded: impl FnOnce() -> Snapshot) -> Arc<Health> {
        if let Some(h) = self
            .map
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(archive)
        {
            return h.clone();
        }
        let mut map = self.map.write().unwrap_or_else(|p| p.into_inner());
        map.entry(archive.to_string())
            .or_insert_with(|| Arc::new(Health::from_snapshot(&recorded())))
            .clone()
    }

    /// Forgets what is known of `archive` (it was included again, its confirmation
    /// answered): the next resolution asks it.
    pub fn reset(&self, archive: &str) {
        self.map
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(archive);
    }

    /// Keeps only the Archives in `archives` (the others were excluded or unregistered).
    pub fn retain(&self, archives: &[&str]) {
        let keep: std::collections::HashSet<&str> = archives.iter().copied().collect();
        self.map
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|k, _| keep.contains(k.as_str()));
    }

    /// The Archives whose health changed since the last call, with their state now.
    pub fn take_changed(&self) -> Vec<(String, Snapshot)> {
        self.map
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|(_, h)| h.take_dirty())
            .map(|(k, h)| (k.clone(), h.snapshot()))
            .collect()
    }

    /// Reports `changed` again at the next [`HealthBook::take_changed`] (writing them
    /// failed); an Archive forgotten since is left out.
    pub fn changed_again(&self, changed: &[(String, Snapshot)]) {
        let map = self.map.read().unwrap_or_else(|p| p.into_inner());
        for (name, _) in changed {
            if let Some(h) = map.get(name) {
                h.dirty.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Every Archive's health now.
    pub fn all(&self) -> Vec<(String, Snapshot)> {
        let mut all: Vec<(String, Snapshot)> = self
            .map
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(k, h)| (k.clone(), h.snapshot()))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_000_000_000_000;

    #[test]
    fn dormant_after_n_failures_in_a_row_and_awake_at_the_first_answer() {
        let h = Health::default();
        assert_eq!(h.failure(3), Change::Unchanged);
        assert_eq!(h.failure(3), Change::Unchanged);
        // An answer in between starts the count again.
        assert_eq!(h.success(Duration::from_millis(4), NOW), Change::Unchanged);
        assert_eq!(h.snapshot().failures, 0);
        assert_eq!(h.failure(3), Change::Unchanged);
        assert_eq!(h.failure(3), Change::Unchanged);
        assert_eq!(h.state(), State::Awake);
        assert_eq!(h.failure(3), Change::FellDormant);
        assert_eq!(h.state(), State::Dormant);
        // Falling once, not again at every further failure.
        assert_eq!(h.failure(3), Change::Unchanged);
        assert_eq!(h.snapshot().failures, 4);
        assert_eq!(h.success(Duration::from_millis(4), NOW), Change::Woke);
        assert_eq!(h.state(), State::Awake);
        // 0: never dormant.
        let h = Health::default();
        for _ in 0..100 {
            assert_eq!(h.failure(0), Change::Unchanged);
        }
        assert_eq!(h.state(), State::Awake);
    }

    #[test]
    fn overloaded_for_long_is_dormant_but_not_for_a_moment() {
        let h = Health::default();
        let t = 1_000_000_000_000;
        let after = |ms: u64| t + ms as i64;
        // Many 503s within OVERLOADED_FOR: no dormancy, and no failure counted.
        for ms in (0..29_000).step_by(1000) {
            assert_eq!(h.overloaded(3, after(ms)), Change::Unchanged);
        }
        assert_eq!(h.snapshot().failures, 0);
        assert_eq!(h.state(), State::Awake);
        // An answer in between starts it again.
        assert_eq!(h.success(Duration::from_millis(4), NOW), Change::Unchanged);
        assert_eq!(h.overloaded(3, after(30_000)), Change::Unchanged);
        assert_eq!(h.overloaded(3, after(59_999)), Change::Unchanged);
        // Nothing but 503s for OVERLOADED_FOR, and at least dormant_after of them.
        assert_eq!(h.overloaded(3, after(60_000)), Change::FellDormant);
        assert_eq!(h.state(), State::Dormant);
        assert_eq!(h.success(Duration::from_millis(4), NOW), Change::Woke);
        // Two in 30 s are not three.
        let h = Health::default();
        assert_eq!(h.overloaded(3, after(0)), Change::Unchanged);
        assert_eq!(h.overloaded(3, after(40_000)), Change::Unchanged);
        assert_eq!(h.overloaded(3, after(40_001)), Change::FellDormant);
        // 0: never.
        let h = Health::default();
        assert_eq!(h.overloaded(0, after(0)), Change::Unchanged);
        assert_eq!(h.overloaded(0, after(100_000)), Change::Unchanged);
    }

    #[test]
    fn latency_is_a_running_average() {
        let h = Health::default();
        h.success(Duration::from_micros(800), NOW);
        assert_eq!(h.snapshot().latency_us, 800);
        // (800 × 6 + 1600 × 2) / 8 = 1000
        h.success(Duration::from_micros(1600), NOW);
        assert_eq!(h.snapshot().latency_us, 1000);
        assert!(h.snapshot().last_success_ms > 0);
    }

    #[test]
    fn the_book_reports_each_change_once_and_forgets_excluded_archives() {
        let book = HealthBook::default();
        let a = book.of("a", || Snapshot {
            failures: 2,
            ..Snapshot::default()
        });
        let b = book.of("b", Snapshot::default);
        assert_eq!(a.snapshot().failures, 2);
        assert!(book.take_changed().is_empty());
        a.failure(5);
        let changed = book.take_changed();
        assert_eq!(changed.len(), 1);
        assert_eq!(changed[0].0, "a");
        assert_eq!(changed[0].1.failures, 3);
        assert!(book.take_changed().is_empty());
        // Writing them failed: reported again, with the state at that time.
        a.failure(5);
        let changed = book.take_changed();
        book.changed_again(&changed);
        a.failure(5);
        assert_eq!(
            book.take_changed(),
            vec![(
                "a".to_string(),
                Snapshot {
                    failures: 5,
                    state: State::Dormant,
                    ..Snapshot::default()
                }
            )]
        );
        // The same Arc the second time; the recorded state is not read again.
        assert!(Arc::ptr_eq(&book.of("b", || panic!("read again")), &b));
        book.retain(&["b"]);
        assert_eq!(book.all().len(), 1);
        assert_eq!(book.all()[0].0, "b");
    }

    #[test]
    fn each_state_has_its_label_and_its_value_of_archive_up() {
        let labels: Vec<&str> = State::ALL.iter().map(|s| s.label()).collect();
        assert_eq!(labels, ["awake", "dormant"]);
        let up: Vec<i64> = State::ALL.iter().map(|s| s.up()).collect();
        assert_eq!(up, [1, 0]);
        let mut text = String::new();
        {
            use prometheus_client::encoding::text::encode;
            use prometheus_client::encoding::EncodeLabelSet;
            use prometheus_client::metrics::counter::Counter;
            use prometheus_client::metrics::family::Family;
            use prometheus_client::registry::Registry;

            #[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
            struct Labels {
                state: State,
            }
            let family = Family::<Labels, Counter>::default();
            for &state in State::ALL {
                family.get_or_create(&Labels { state }).inc();
            }
            let mut registry = Registry::default();
            registry.register("archives", "Archives by state", family);
            encode(&mut text, &registry).expect("encoded");
        }
        assert!(
            text.contains("archives_total{state=\"awake\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("archives_total{state=\"dormant\"} 1\n"),
            "{text}"
        );
    }
}
