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

/// An HTTP-date (§5.6.7: IMF-fixdate, and the obsolete RFC 850 and asctime forms a
/// recipient must accept) as POSIX seconds, negative before 1970; `None` when it is none
/// of them, or its weekday is not its date's. Read here, not by a crate that stops at
/// 1970: a date before it is a date all the same (`If-Unmodified-Since: Wed, 31 Dec 1969
/// 23:59:59 GMT` asks for a file unmodified since then, 412, not for the condition to be
/// ignored).
pub fn parse_http_date(text: &str) -> Option<i64> {
    use chrono::Datelike;
    let s = text.trim().as_bytes();
    // (weekday, day, month, year, time) as the form spells them.
    let (weekday, day, month, year, time): (&[u8], &[u8], &[u8], Year, &[u8]) = match s.len() {
        // IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
        29 if &s[3..5] == b", " && s[7] == b' ' && s[11] == b' ' && s[16] == b' ' => {
            if &s[25..] != b" GMT" {
                return None;
            }
            (
                &s[..3],
                &s[5..7],
                &s[8..11],
                Year::Full(&s[12..16]),
                &s[17..25],
            )
        }
        // asctime: `Sun Nov  6 08:49:37 1994`.
        24 if s[3] == b' ' && s[7] == b' ' && s[10] == b' ' && s[19] == b' ' => {
            let day: &[u8] = if s[8] == b' ' { &s[9..10] } else { &s[8..10] };
            (&s[..3], day, &s[4..7], Year::Full(&s[20..]), &s[11..19])
        }
        // RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`.
        _ => {
            let comma = s.iter().position(|&b| b == b',')?;
            let rest = &s[comma..];
            if rest.len() != 24
                || &rest[..2] != b", "
                || rest[4] != b'-'
                || rest[8] != b'-'
                || rest[11] != b' '
                || &rest[20..] != b" GMT"
            {
                return None;
            }
            let long = &s[..comma];
            let short = LONG_DAYS.iter().position(|d| d.as_bytes() == long)?;
            (
                DAYS[short].as_bytes(),
                &rest[2..4],
                &rest[5..8],
                Year::TwoDigits(&rest[9..11]),
                &rest[12..20],
            )
        }
    };
    let number = |digits: &[u8]| -> Option<u32> {
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(digits).ok()?.parse().ok()
    };
    let month = MONTHS.iter().position(|m| m.as_bytes() == month)? as u32 + 1;
    let year = match year {
        Year::Full(y) => i32::try_from(number(y)?).ok()?,
        Year::TwoDigits(y) => {
            // The year within 50 years of now, past rather than future (§5.6.7).
            let yy = i32::try_from(number(y)?).ok()?;
            let now =
                chrono::DateTime::from_timestamp(SystemClock::now(), 0).map_or(1970, |t| t.year());
            let mut year = now - now % 100 + yy;
            if year > now + 50 {
                year -= 100;
            } else if year + 100 <= now + 50 {
                year += 100;
            }
            year
        }
    };
    let date = chrono::NaiveDate::from_ymd_opt(year, month, number(day)?)?;
    if time.len() != 8 || time[2] != b':' || time[5] != b':' {
        return None;
    }
    let time = chrono::NaiveTime::from_hms_opt(
        number(&time[..2])?,
        number(&time[3..5])?,
        number(&time[6..])?,
    )?;
    if DAYS[date.weekday().num_days_from_monday() as usize].as_bytes() != weekday {
        return None;
    }
    Some(date.and_time(time).and_utc().timestamp())
}

/// A date's year as its form writes it.
enum Year<'a> {
    Full(&'a [u8]),
    /// RFC 850's two digits.
    TwoDigits(&'a [u8]),
}

const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const LONG_DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

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

    /// RFC 9110's example instant.
    const T: i64 = 784_111_777;

    #[test]
    fn http_dates_in_the_three_forms() {
        for text in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
            " Sun, 06 Nov 1994 08:49:37 GMT ",
        ] {
            assert_eq!(parse_http_date(text), Some(T), "{text:?}");
        }
        // Before 1970: negative seconds, in every form that can say so (RFC 850's
        // two-digit year is read within 50 years of now, RFC 9110 §5.6.7).
        assert_eq!(parse_http_date("Wed, 31 Dec 1969 23:59:59 GMT"), Some(-1));
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1904 08:49:37 GMT"),
            Some(T - 2_840_140_800)
        );
        assert_eq!(
            parse_http_date("Sun Nov  6 08:49:37 1904"),
            Some(T - 2_840_140_800)
        );
        assert_eq!(
            parse_http_date("Sat, 01 Jan 0000 00:00:00 GMT"),
            Some(-62_167_219_200)
        );
        assert_eq!(
            parse_http_date("Fri, 31 Dec 9999 23:59:59 GMT"),
            Some(253_402_300_799)
        );
        for text in [
            "Sun, 06 Nov 1994 08:49:37",
            "Sun, 06 Nov 1994 25:49:37 GMT",
            // The weekday must be the date's.
            "Mon, 06 Nov 1994 08:49:37 GMT",
            "Monday, 06-Nov-94 08:49:37 GMT",
            "Mon Nov  6 08:49:37 1994",
            // Names are case-sensitive; a day is two digits (asctime's may be a space and
            // one); no sign, no second 60, no day a month lacks.
            "sun, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 nov 1994 08:49:37 GMT",
            "Sun, 06 Nov -994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:60 GMT",
            "Sun, 31 Feb 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 6 Nov 1994 08:49:37 GMT",
            "",
        ] {
            assert_eq!(parse_http_date(text), None, "{text:?}");
        }
    }
}
