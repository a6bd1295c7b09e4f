//! Time as the Archive and the resolver use it: POSIX time read from a [`Clock`] (seconds; nanoseconds
//! for minting) — the system clock in the executables, read once at the top of a request
//! or a command and passed down, and a [`ManualClock`] in tests, which moves only when
//! told (or slept on) — and the two ways an instant is written: ISO 8601 UTC in pair lists
//! and logs, the HTTP date in headers.

use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Leeway for clocks that differ between processes or machines (seconds): how far in
/// the future an instant another process wrote may be and still be believed.
pub const CLOCK_SLACK_SECS: i64 = 300;

/// Where the time is read, and how waiting for it to pass is done.
pub trait Clock: Send + Sync {
    /// Nanoseconds since the epoch (UTC, leap seconds not counted; before 1970: negative).
    /// Minting reads the clock this finely (the temporal distributor).
    fn now_nanos(&self) -> i128;
    /// POSIX seconds (UTC, leap seconds not counted).
    fn now(&self) -> i64 {
        self.now_nanos().div_euclid(NANOS_PER_SEC) as i64
    }
    /// Waits for `d` to pass.
    fn sleep(&self, d: Duration);
}

const NANOS_PER_SEC: i128 = 1_000_000_000;

/// The system's clock (`SystemTime`) and `std::thread::sleep`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl SystemClock {
    /// POSIX seconds now, by the system's clock (before 1970: negative).
    pub fn now() -> i64 {
        Clock::now(&SystemClock)
    }
}

impl Clock for SystemClock {
    fn now_nanos(&self) -> i128 {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i128,
            Err(e) => -(e.duration().as_nanos() as i128),
        }
    }

    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}

/// A clock for tests: it reads what it was set to, and sleeping on it moves it forward at
/// once; it keeps count of the time slept.
#[derive(Debug)]
pub struct ManualClock {
    /// Nanoseconds since the epoch, and those slept.
    state: Mutex<(i128, Duration)>,
}

impl ManualClock {
    /// A clock at POSIX second `secs`.
    pub fn at(secs: i64) -> ManualClock {
        ManualClock {
            state: Mutex::new((i128::from(secs) * NANOS_PER_SEC, Duration::ZERO)),
        }
    }

    /// Moves the clock forward by `d` (not counted as slept).
    pub fn advance(&self, d: Duration) {
        self.lock().0 += d.as_nanos() as i128;
    }

    /// The time slept on this clock so far.
    pub fn slept(&self) -> Duration {
        self.lock().1
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (i128, Duration)> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Clock for ManualClock {
    fn now_nanos(&self) -> i128 {
        self.lock().0
    }

    fn sleep(&self, d: Duration) {
        let mut state = self.lock();
        state.0 += d.as_nanos() as i128;
        state.1 += d;
    }
}

/// ISO 8601 UTC, as the pairs `timestamp…` carry it (Table 9.3): `2014-01-02T17:23:57Z`.
pub fn iso8601(seconds: i64) -> String {
    match chrono::DateTime::from_timestamp(seconds, 0) {
        Some(t) => t.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        None => "1970-01-01T00:00:00Z".to_string(),
    }
}

/// The HTTP date of `seconds` (IMF-fixdate, RFC 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37
/// GMT`; `None` outside the years chrono can write.
pub fn http_date(seconds: i64) -> Option<String> {
    chrono::DateTime::from_timestamp(seconds, 0)
        .map(|t| t.format("%a, %d %b %Y %H:%M:%S GMT").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_as_pair_lists_and_http_write_them() {
        assert_eq!(iso8601(1_388_683_437), "2014-01-02T17:23:57Z");
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(i64::MAX), "1970-01-01T00:00:00Z");
        // RFC 9110's own example.
        assert_eq!(
            http_date(784_111_777).as_deref(),
            Some("Sun, 06 Nov 1994 08:49:37 GMT")
        );
        assert_eq!(http_date(i64::MAX), None);
    }

    #[test]
    fn a_manual_clock_moves_when_slept_on_or_advanced() {
        let clock = ManualClock::at(1_000);
        assert_eq!(clock.now(), 1_000);
        clock.sleep(Duration::from_millis(1_500));
        assert_eq!(clock.now(), 1_001);
        clock.sleep(Duration::from_millis(500));
        assert_eq!(clock.now(), 1_002);
        clock.advance(Duration::from_secs(10));
        assert_eq!(
            (clock.now(), clock.slept()),
            (1_012, Duration::from_secs(2))
        );
        let before = ManualClock::at(-1);
        assert_eq!(before.now(), -1);
    }

    #[test]
    fn the_system_clock_is_past_the_time_this_was_written() {
        // 2026-01-01T00:00:00Z: a clock reading zero (or an error turned into zero)
        // would be before it.
        assert!(SystemClock::now() > 1_767_225_600);
        assert!(Clock::now(&SystemClock) >= SystemClock::now() - 1);
    }
}
