//! The temporal distributor (generation standard, §6, Algorithm 4, Table 6.2): it turns the
//! moment an identification is asked for into the date of the suffix, one date per item,
//! strictly increasing, on a grid of granularity r, as short as the previous date allows.
//!
//! [`next_date`] is the algorithm itself on exact instants (nanoseconds; no floating point,
//! since r = 0.1 has no binary fraction). [`Distributor`] keeps its one global,
//! last-date-for-suffix, in a state file under an exclusive lock, so that processes minting
//! at the same time get distinct increasing dates.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use ::ibi::time::Clock;
use ::ibi::{shown, IbiDate, IbiError};

const NANOS_PER_SEC: i128 = 1_000_000_000;

/// The granularity r of Algorithm 4: 60 s, 1 s, or 10⁻ᵏ s for k = 1…9 (the standard's set
/// G = {60, 1, 1/10, 1/100, …}, cut at the nanosecond).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Granularity {
    nanos: i64,
}

impl Granularity {
    pub const MINUTE: Granularity = Granularity {
        nanos: 60_000_000_000,
    };
    pub const SECOND: Granularity = Granularity {
        nanos: 1_000_000_000,
    };

    /// Reads `60`, `1`, `0.1`, `0.01`, … `0.000000001` (trailing zeros after the point
    /// allowed: `1.0`, `0.10`); anything else is refused.
    pub fn parse(s: &str) -> Result<Granularity, IbiError> {
        let bad = || {
            IbiError::new(format!(
                "invalid granularity {}: expected 60, 1, 0.1, 0.01, ... or 0.000000001 (seconds)",
                shown(s)
            ))
        };
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
        if int.is_empty() || !digits(int) || !digits(frac) || (s.contains('.') && frac.is_empty()) {
            return Err(bad());
        }
        let frac = frac.trim_end_matches('0');
        let int = int.trim_start_matches('0');
        if frac.len() > 9 || int.len() > 2 {
            return Err(bad());
        }
        let whole: i64 = if int.is_empty() {
            0
        } else {
            int.parse().map_err(|_| bad())?
        };
        let part: i64 = format!("{frac:0<9}").parse().map_err(|_| bad())?;
        let nanos = whole * 1_000_000_000 + part;
        Granularity::from_nanos(nanos).ok_or_else(bad)
    }

    /// The granularity of `nanos` nanoseconds, if it is one of the set.
    pub fn from_nanos(nanos: i64) -> Option<Granularity> {
        let ok = nanos == 60_000_000_000 || (0..=9).any(|k| nanos == 1_000_000_000 / 10i64.pow(k));
        ok.then_some(Granularity { nanos })
    }

    /// r in nanoseconds.
    pub fn as_nanos(&self) -> i64 {
        self.nanos
    }
}

impl fmt::Display for Granularity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.nanos >= 1_000_000_000 {
            write!(f, "{}", self.nanos / 1_000_000_000)
        } else {
            let frac = format!("{:09}", self.nanos);
            write!(f, "0.{}", frac.trim_end_matches('0'))
        }
    }
}

impl FromStr for Granularity {
    type Err = IbiError;
    fn from_str(s: &str) -> Result<Granularity, IbiError> {
        Granularity::parse(s)
    }
}

/// An exact instant: nanoseconds since 1970-01-01T00:00:00Z (POSIX time).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PosixTime {
    nanos: i128,
}

impl PosixTime {
    /// `secs` + `nanos`/10⁹ seconds; `None` when `nanos` is 10⁹ or more.
    pub fn from_parts(secs: i64, nanos: u32) -> Option<PosixTime> {
        (i128::from(nanos) < NANOS_PER_SEC).then(|| PosixTime {
            nanos: i128::from(secs) * NANOS_PER_SEC + i128::from(nanos),
        })
    }

    /// What `clock` reads now.
    pub fn now(clock: &dyn Clock) -> PosixTime {
        PosixTime {
            nanos: clock.now_nanos(),
        }
    }

    /// Reads POSIX seconds with up to nine decimals, e.g. `1287587646.394023`.
    pub fn parse(s: &str) -> Result<PosixTime, IbiError> {
        let bad = || {
            IbiError::new(format!(
                "invalid instant {}: expected POSIX seconds with up to 9 decimals",
                shown(s)
            ))
        };
        let (neg, body) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let (int, frac) = body.split_once('.').unwrap_or((body, ""));
        let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
        if int.is_empty() || int.len() > 12 || frac.len() > 9 || !digits(int) || !digits(frac) {
            return Err(bad());
        }
        if body.contains('.') && frac.is_empty() {
            return Err(bad());
        }
        let secs: i128 = int.parse().map_err(|_| bad())?;
        let part: i128 = format!("{frac:0<9}").parse().map_err(|_| bad())?;
        let nanos = secs * NANOS_PER_SEC + part;
        Ok(PosixTime {
            nanos: if neg { -nanos } else { nanos },
        })
    }

    /// Whole seconds (rounded down).
    pub fn secs(&self) -> i64 {
        self.nanos.div_euclid(NANOS_PER_SEC) as i64
    }

    /// Nanoseconds past [`PosixTime::secs`].
    pub fn subsec_nanos(&self) -> u32 {
        self.nanos.rem_euclid(NANOS_PER_SEC) as u32
    }

    /// The same instant as an [`IbiDate`] (fails only outside the years 0000–9999).
    pub fn to_ibi_date(&self) -> Result<IbiDate, IbiError> {
        IbiDate::new(self.secs(), &format!("{:09}", self.subsec_nanos()))
    }

    /// The instant of an [`IbiDate`]; fails when its fraction is finer than a nanosecond.
    pub fn from_ibi_date(date: &IbiDate) -> Result<PosixTime, IbiError> {
        if date.fraction().len() > 9 {
            return Err(IbiError::new(format!(
                "date {} is finer than a nanosecond",
                date.to_iso()
            )));
        }
        let part: u32 = format!("{:0<9}", date.fraction())
            .parse()
            .expect("nine digits");
        Ok(PosixTime::from_parts(date.seconds(), part).expect("below one second"))
    }

    fn floor(self, step: i128) -> PosixTime {
        PosixTime {
            nanos: self.nanos.div_euclid(step) * step,
        }
    }
}

impl fmt::Display for PosixTime {
    /// POSIX seconds, decimals without trailing zeros: `1287587646.394023`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (sign, abs) = if self.nanos < 0 {
            ("-", -self.nanos)
        } else {
            ("", self.nanos)
        };
        let frac = format!("{:09}", abs % NANOS_PER_SEC);
        let frac = frac.trim_end_matches('0');
        write!(f, "{sign}{}", abs / NANOS_PER_SEC)?;
        if !frac.is_empty() {
            write!(f, ".{frac}")?;
        }
        Ok(())
    }
}

/// What one run of Algorithm 4 decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// creation-date (line 5): the run waits until then (line 7).
    pub creation: PosixTime,
    /// date-for-suffix (line 16), which is also the new last-date-for-suffix (line 17).
    pub for_suffix: PosixTime,
}

impl Decision {
    /// The delay of line 6 for a run started at `current` (zero when not positive).
    pub fn delay(&self, current: PosixTime) -> Duration {
        let d = self.creation.nanos - current.nanos;
        if d <= 0 {
            Duration::ZERO
        } else {
            Duration::from_nanos(u64::try_from(d).unwrap_or(u64::MAX))
        }
    }
}

/// Algorithm 4 (CREATEDATETOMOUNTSUFFIXOFIBIOFANITEM), lines 1–17, without the waiting:
/// `current` is current-date, `last` is last-date-for-suffix (`None` when it does not exist
/// yet), `r` the granularity. INT is taken as the floor, which is the integer part for the
/// positive dates the standard speaks of.
pub fn next_date(current: PosixTime, last: Option<PosixTime>, r: Granularity) -> Decision {
    let r = i128::from(r.nanos);
    let minute = 60 * NANOS_PER_SEC;
    // 1. rounded-date ← r ∗ INT(current-date/r)
    let rounded = current.floor(r);
    // 2–3. If last-date-for-suffix does not exist, last-date-for-suffix ← rounded-date − r
    let last = last.unwrap_or(PosixTime {
        nanos: rounded.nanos - r,
    });
    // 4. last-date-for-suffix ← r ∗ INT(last-date-for-suffix/r)   (r may have changed)
    let last = last.floor(r);
    // 5. creation-date ← MAX(last-date-for-suffix + r, rounded-date)
    let creation = PosixTime {
        nanos: last.nanos + r,
    }
    .max(rounded);
    // 8–15: the shortest date of the coarser grids that is still after last-date-for-suffix.
    let mut short = creation;
    let mut s = r;
    let mut t = creation;
    while last < short {
        s *= 10;
        if s == 10 * NANOS_PER_SEC {
            s = minute;
        }
        t = short;
        if s > minute {
            break;
        }
        short = creation.floor(s);
    }
    // 16–17. date-for-suffix ← t; last-date-for-suffix ← t
    Decision {
        creation,
        for_suffix: t,
    }
}

/// One date issued by [`Distributor::next_step`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issued {
    /// last-date-for-suffix as found in the state file (`None`: no state yet).
    pub previous: Option<PosixTime>,
    /// current-date: when the lock was held and the clock read.
    pub current: PosixTime,
    /// What Algorithm 4 decided.
    pub decision: Decision,
    /// date-for-suffix, the date to mint with.
    pub date: IbiDate,
}

/// Algorithm 4 with its global kept in a state file.
///
/// The state file holds last-date-for-suffix as POSIX seconds (`1287588115.35` and a
/// newline). Each run takes an exclusive lock on a sibling file, `<state>.lock`, and keeps
/// it through read, compute, wait and write, so runs in several processes are serialised
/// and each sees the date the one before it wrote. The new state is written to a temporary
/// file beside it, synced and renamed over the state file (see [`::ibi::atomic`]), so a
/// crash leaves the old state or the new one, never a torn one. (The lock is not on the
/// state file itself because the rename replaces that file: a process waiting on the old
/// one would then read stale state.)
pub struct Distributor<'c> {
    state: PathBuf,
    r: Granularity,
    clock: &'c dyn Clock,
}

impl<'c> Distributor<'c> {
    /// A distributor with granularity `r` keeping its state in `state` (e.g.
    /// `<archive>/var/minting.state`; its directory must exist), reading and waiting on
    /// `clock`. It waits at most r + 60 s: a run that would wait longer (the state is ahead
    /// of the clock, e.g. after the clock was set back) fails instead of stalling.
    pub fn new(state: impl AsRef<Path>, r: Granularity, clock: &'c dyn Clock) -> Distributor<'c> {
        Distributor {
            state: state.as_ref().to_path_buf(),
            r,
            clock,
        }
    }

    /// Runs Algorithm 4 once, waiting as it says, and returns date-for-suffix.
    pub fn next(&self) -> Result<IbiDate, IbiError> {
        self.next_step().map(|issued| issued.date)
    }

    /// [`Distributor::next`] with the details of the run.
    pub fn next_step(&self) -> Result<Issued, IbiError> {
        let lock_path = sibling(&self.state, ".lock");
        let lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(|e| io_error("cannot open minting lock", &lock_path, e))?;
        lock.lock()
            .map_err(|e| io_error("cannot lock", &lock_path, e))?;
        // The lock holds until `lock` is dropped (or the process dies).

        let previous = self.read_state()?;
        let current = PosixTime::now(self.clock);
        let decision = next_date(current, previous, self.r);
        let delay = decision.delay(current);
        if delay > Duration::from_nanos(self.r.nanos as u64) + Duration::from_secs(60) {
            return Err(IbiError::new(format!(
                "minting state {} holds {}, ahead of the clock ({}) by {:.3} s: refusing to wait",
                self.state.display(),
                previous.map(|p| p.to_string()).unwrap_or_default(),
                current,
                delay.as_secs_f64()
            )));
        }
        // 7. If delay > 0 then WAIT(delay) — until the clock has truly reached the date.
        let mut now = current;
        while now < decision.creation {
            self.clock.sleep(decision.delay(now));
            now = PosixTime::now(self.clock);
        }
        let date = decision.for_suffix.to_ibi_date()?;
        self.write_state(decision.for_suffix)?;
        drop(lock);
        Ok(Issued {
            previous,
            current,
            decision,
            date,
        })
    }

    fn read_state(&self) -> Result<Option<PosixTime>, IbiError> {
        let mut text = String::new();
        match File::open(&self.state) {
            Ok(mut f) => {
                // A state is one short line; read a little more than that, no further.
                Read::by_ref(&mut f)
                    .take(256)
                    .read_to_string(&mut text)
                    .map_err(|e| io_error("cannot read minting state", &self.state, e))?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error("cannot read minting state", &self.state, e)),
        }
        let line = text.strip_suffix('\n').unwrap_or(&text);
        PosixTime::parse(line).map(Some).map_err(|_| {
            IbiError::new(format!(
                "minting state {} is corrupt: {} is not POSIX seconds such as 1287588115.35",
                self.state.display(),
                shown(line)
            ))
        })
    }

    fn write_state(&self, last: PosixTime) -> Result<(), IbiError> {
        ::ibi::atomic::write(&self.state, format!("{last}\n").as_bytes(), 0o666)
            .map_err(|e| io_error("cannot write minting state", &self.state, e))
    }
}

fn sibling(path: &Path, ext: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(ext);
    PathBuf::from(s)
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> IbiError {
    IbiError::new(format!("{what} {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::ibi::time::ManualClock;
    use std::fs;

    fn at(s: &str) -> PosixTime {
        PosixTime::parse(s).unwrap()
    }

    #[test]
    fn granularity_set() {
        for (s, nanos, shown) in [
            ("60", 60_000_000_000, "60"),
            ("60.0", 60_000_000_000, "60"),
            ("1", 1_000_000_000, "1"),
            ("1.0", 1_000_000_000, "1"),
            ("0.1", 100_000_000, "0.1"),
            ("0.10", 100_000_000, "0.1"),
            (".", 0, ""),
            ("0.01", 10_000_000, "0.01"),
            ("0.000000001", 1, "0.000000001"),
        ] {
            if shown.is_empty() {
                assert!(Granularity::parse(s).is_err(), "{s}");
                continue;
            }
            let g = Granularity::parse(s).unwrap();
            assert_eq!(g.as_nanos(), nanos, "{s}");
            assert_eq!(g.to_string(), shown);
        }
        for s in [
            "",
            "0",
            "10",
            "30",
            "0.2",
            "0.05",
            "2",
            "600",
            "0.0000000001",
            "1e-3",
            "-1",
            "1.",
            "abc",
            "0.1.1",
        ] {
            assert_eq!(
                Granularity::parse(s).unwrap_err().to_string(),
                format!(
                    "invalid granularity {s:?}: expected 60, 1, 0.1, 0.01, ... or 0.000000001 (seconds)"
                ),
            );
        }
    }

    #[test]
    fn instant_text() {
        assert_eq!(at("1287587646.394023").to_string(), "1287587646.394023");
        assert_eq!(at("1287587646.000").to_string(), "1287587646");
        assert_eq!(at("-1.5").to_string(), "-1.5");
        assert_eq!(at("-1.5").secs(), -2);
        assert_eq!(at("-1.5").subsec_nanos(), 500_000_000);
        for s in ["", "1.", ".5", "1.0000000001", "x", "1e3", "1234567890123"] {
            assert!(PosixTime::parse(s).is_err(), "{s}");
        }
        let d = at("1287587646.05").to_ibi_date().unwrap();
        assert_eq!((d.seconds(), d.fraction()), (1_287_587_646, "05"));
        assert_eq!(PosixTime::from_ibi_date(&d).unwrap(), at("1287587646.05"));
        let fine = IbiDate::new(1, "0000000001").unwrap();
        assert!(PosixTime::from_ibi_date(&fine).is_err());
    }

    /// A clock at the instant `s` (POSIX seconds, with a fraction).
    fn clock_at(s: &str) -> ManualClock {
        let clock = ManualClock::at(at(s).secs());
        clock.advance(Duration::from_nanos(at(s).subsec_nanos().into()));
        clock
    }

    #[test]
    fn distributor_keeps_state_and_waits() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("minting.state");
        let clock = clock_at("1287588115.186234");
        let d = Distributor::new(&state, Granularity::SECOND, &clock);
        let first = d.next_step().unwrap();
        assert_eq!(first.previous, None);
        assert_eq!(first.date.rep_suffix(), "2010/10.20.15.21.55");
        assert_eq!(fs::read_to_string(&state).unwrap(), "1287588115\n");
        assert_eq!(clock.slept(), Duration::ZERO);
        // Same second again: waits for the next one.
        let second = d.next_step().unwrap();
        assert_eq!(second.previous, Some(at("1287588115")));
        assert_eq!(second.date.rep_suffix(), "2010/10.20.15.21.56");
        // Once, to the second: 1 - 0.186234 s.
        assert_eq!(clock.slept(), Duration::from_micros(813_766));
        assert_eq!(PosixTime::now(&clock), at("1287588116"));
        assert_eq!(fs::read_to_string(&state).unwrap(), "1287588116\n");
        // The state and its lock, and no temporary file.
        let mut names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["minting.state", "minting.state.lock"]);
    }

    #[test]
    fn corrupt_or_future_state_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("minting.state");
        let clock = clock_at("1287588115");
        let d = Distributor::new(&state, Granularity::SECOND, &clock);
        for bad in ["", "garbage\n", "1287588115.5.5\n", "1287588115\n\n"] {
            fs::write(&state, bad).unwrap();
            assert_eq!(
                d.next().unwrap_err().to_string(),
                format!(
                    "minting state {} is corrupt: {} is not POSIX seconds such as 1287588115.35",
                    state.display(),
                    ::ibi::shown(bad.strip_suffix('\n').unwrap_or(bad))
                )
            );
        }
        fs::write(&state, "1287598115\n").unwrap();
        assert_eq!(
            d.next().unwrap_err().to_string(),
            format!(
                "minting state {} holds 1287598115, ahead of the clock (1287588115) by 10001.000 s: refusing to wait",
                state.display()
            )
        );
        // Nothing was written by the failed runs.
        assert_eq!(fs::read_to_string(&state).unwrap(), "1287598115\n");
        assert_eq!(clock.slept(), Duration::ZERO);
    }
}
