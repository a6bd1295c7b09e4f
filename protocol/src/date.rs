//! The date an IBI codes: a UTC instant to any decimal fraction of a second, and its three
//! spellings — ISO 8601, the rep suffix (Algorithm 2) and the IBIp suffix (Algorithm 6).
//!
//! IBIp fraction coding (Algorithm 6 lines 3–7, which leave it open): the fraction's digits
//! without trailing zeros are read as a decimal integer and written in base 27, and each
//! *leading* zero digit of the fraction is written as one base-27 zero digit `2` in front.
//! So .5 → `W7`, .05 → `W27`, .394023 → `W` + base27(394023). A fraction with no leading
//! zero gets exactly the literal reading of the standard; one with leading zeros (which
//! minting at r ≤ 0.01 produces) still decodes to itself, since a base-27 numeral of a
//! nonzero number never begins with `2`.

use super::base27::{self, Natural};
use super::IbiError;
use chrono::{DateTime, Datelike, NaiveDate, Timelike};
use std::fmt::Write as _;

/// 1995-08-01T00:00:00Z, the origin of IBIp suffixes (generation standard, Algorithm 6).
pub const IBIP_EPOCH: i64 = 807_235_200;

/// 0000-01-01T00:00:00Z: rep years have four digits (Table 6.1), ISO 8601 too.
pub const MIN_SECONDS: i64 = -62_167_219_200;
/// 9999-12-31T23:59:59Z.
pub const MAX_SECONDS: i64 = 253_402_300_799;
/// The most fraction digits a date carries (an IBI is at most 255 bytes anyway).
pub const MAX_FRACTION_DIGITS: usize = 240;

/// A UTC instant: whole POSIX seconds and the decimal digits of the fraction of a second
/// (no trailing zeros; empty for a whole second). Years 0000 to 9999.
///
/// The derived order is the order of instants: equal seconds compare their fraction digits
/// as strings, which for digit strings without trailing zeros is their numeric order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IbiDate {
    seconds: i64,
    fraction: String,
}

/// Calendar fields of a second, as Algorithm 2's EXTRACT gives them.
struct Civil {
    year: i32,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
}

impl IbiDate {
    /// The date `seconds` + 0.`fraction_digits` (trailing zeros dropped).
    pub fn new(seconds: i64, fraction_digits: &str) -> Result<IbiDate, IbiError> {
        if !(MIN_SECONDS..=MAX_SECONDS).contains(&seconds) {
            return Err(IbiError::new(format!(
                "date {seconds} is out of range (years 0000 to 9999)"
            )));
        }
        if !fraction_digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(IbiError::new(format!(
                "fraction {fraction_digits:?} is not a string of decimal digits"
            )));
        }
        if fraction_digits.len() > MAX_FRACTION_DIGITS {
            return Err(IbiError::new(format!(
                "fraction has more than {MAX_FRACTION_DIGITS} digits"
            )));
        }
        let fraction = fraction_digits.trim_end_matches('0').to_string();
        Ok(IbiDate { seconds, fraction })
    }

    /// Whole POSIX seconds (floor of the instant).
    pub fn seconds(&self) -> i64 {
        self.seconds
    }

    /// The decimal digits after the point, without trailing zeros.
    pub fn fraction(&self) -> &str {
        &self.fraction
    }

    fn civil(&self) -> Civil {
        let t = DateTime::from_timestamp(self.seconds, 0).expect("seconds checked by new");
        Civil {
            year: t.year(),
            month: t.month(),
            day: t.day(),
            hour: t.hour(),
            minute: t.minute(),
            second: t.second(),
        }
    }

    /// ISO 8601 in UTC: `2013-09-04T12:27:57Z`, `2010-10-20T15:14:06.394023Z`.
    pub fn to_iso(&self) -> String {
        let c = self.civil();
        let mut out = format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            c.year, c.month, c.day, c.hour, c.minute, c.second
        );
        if !self.fraction.is_empty() {
            out.push('.');
            out.push_str(&self.fraction);
        }
        out.push('Z');
        out
    }

    /// The rep suffix of Algorithm 2: `yyyy/mm.dd.hh.mm`, then `.ss` when the second is not
    /// 00 or there is a fraction, then `.fraction` when there is one.
    pub fn rep_suffix(&self) -> String {
        let c = self.civil();
        let mut out = format!(
            "{:04}/{:02}.{:02}.{:02}.{:02}",
            c.year, c.month, c.day, c.hour, c.minute
        );
        if !self.fraction.is_empty() {
            let _ = write!(out, ".{:02}.{}", c.second, self.fraction);
        } else if c.second != 0 {
            let _ = write!(out, ".{:02}", c.second);
        }
        out
    }

    /// The IBIp suffix of Algorithm 6: base 27 of the seconds since 1995-08-01T00:00:00Z,
    /// then `W` and the coded fraction (see the module header) when there is one. Dates
    /// before 1995-08-01 have no IBIp suffix.
    pub fn ibip_suffix(&self) -> Result<String, IbiError> {
        if self.seconds < IBIP_EPOCH {
            return Err(IbiError::new(format!(
                "date {} is before 1995-08-01T00:00:00Z and has no IBIp suffix",
                self.to_iso()
            )));
        }
        let mut out = base27::encode_u64((self.seconds - IBIP_EPOCH) as u64);
        if !self.fraction.is_empty() {
            out.push('W');
            let digits = self.fraction.trim_start_matches('0');
            for _ in 0..self.fraction.len() - digits.len() {
                out.push(char::from(base27::DIGITS[0]));
            }
            let n = Natural::parse_decimal(digits).expect("a fraction is decimal digits");
            out.push_str(&base27::encode(&n));
        }
        Ok(out)
    }

    /// Reads an IBIp suffix (Algorithm 6 backwards): the inverse of [`IbiDate::ibip_suffix`].
    pub fn from_ibip_suffix(suffix: &str) -> Result<IbiDate, IbiError> {
        decode_ibip_suffix(suffix)
            .map_err(|why| IbiError::new(format!("invalid IBIp suffix {suffix:?}: {why}")))
    }

    /// Reads `2009-02-16T17:46:00Z`, `2009-02-16T17:46Z`, `2010-10-20T15:14:06.394023Z` (UTC
    /// only, `T`/`Z` in either case) or POSIX seconds such as `1287587646.394023`.
    pub fn parse_iso(s: &str) -> Result<IbiDate, IbiError> {
        parse_iso_or_posix(s).map_err(|why| IbiError::new(format!("invalid date {s:?}: {why}")))
    }

    /// The date of calendar fields, each checked, with messages naming the field at fault.
    pub(crate) fn from_civil(
        year: i32,
        month: u32,
        day: u32,
        hour: u32,
        minute: u32,
        second: u32,
        fraction: &str,
    ) -> Result<IbiDate, String> {
        if !(0..=9999).contains(&year) {
            return Err(format!("year {year} is out of range"));
        }
        if !(1..=12).contains(&month) {
            return Err(format!("month {month:02} is out of range"));
        }
        let date = NaiveDate::from_ymd_opt(year, month, day)
            .ok_or_else(|| format!("day {day:02} is out of range for {year:04}-{month:02}"))?;
        if hour > 23 {
            return Err(format!("hour {hour:02} is out of range"));
        }
        if minute > 59 {
            return Err(format!("minute {minute:02} is out of range"));
        }
        if second > 59 {
            return Err(format!("second {second:02} is out of range"));
        }
        let t = date
            .and_hms_opt(hour, minute, second)
            .expect("fields checked above");
        IbiDate::new(t.and_utc().timestamp(), fraction).map_err(|e| e.to_string())
    }
}

/// The body of [`IbiDate::from_ibip_suffix`]; the error names the part at fault.
pub(crate) fn decode_ibip_suffix(suffix: &str) -> Result<IbiDate, String> {
    let (int, frac) = match suffix.split_once(['W', 'w']) {
        Some((i, f)) => (i, Some(f)),
        None => (suffix, None),
    };
    if int.is_empty() {
        return Err("suffix has no seconds before 'W'".into());
    }
    check_digits(int, "suffix")?;
    if int.len() > 1 && int.starts_with('2') {
        return Err(format!("suffix {int:?} starts with the zero digit '2'"));
    }
    // Nine base-27 digits reach past year 9999 already; longer is refused unread.
    let secs = (int.len() <= 9)
        .then(|| base27::decode(int).and_then(|n| n.to_u64()))
        .flatten()
        .and_then(|n| i64::try_from(n).ok())
        .and_then(|n| n.checked_add(IBIP_EPOCH))
        .filter(|&s| s <= MAX_SECONDS)
        .ok_or_else(|| format!("suffix {int:?} is past the year 9999"))?;
    let fraction = match frac {
        None => String::new(),
        Some(f) => decode_fraction(f)?,
    };
    IbiDate::new(secs, &fraction).map_err(|e| e.to_string())
}

fn decode_fraction(coded: &str) -> Result<String, String> {
    if coded.is_empty() {
        return Err("coded fraction after 'W' is empty".into());
    }
    check_digits(coded, "coded fraction")?;
    let rest = coded.trim_start_matches('2');
    let zeros = coded.len() - rest.len();
    if rest.is_empty() {
        return Err(format!("coded fraction {coded:?} is zero"));
    }
    // A number has at least as many decimal digits as base-27 ones (less one, for one or two
    // digits), so what is longer than the limit coded is refused before it is decoded.
    if coded.len() > MAX_FRACTION_DIGITS {
        return Err(format!("coded fraction {coded:?} is too long"));
    }
    let digits = base27::decode(rest).expect("digits checked").to_decimal();
    if digits.ends_with('0') {
        return Err(format!(
            "coded fraction {coded:?} stands for {digits}, but a fraction has no trailing zero"
        ));
    }
    let fraction = "0".repeat(zeros) + &digits;
    if fraction.len() > MAX_FRACTION_DIGITS {
        return Err(format!("coded fraction {coded:?} is too long"));
    }
    Ok(fraction)
}

fn check_digits(s: &str, part: &str) -> Result<(), String> {
    match s
        .chars()
        .find(|c| !c.is_ascii() || base27::digit_value(*c as u8).is_none())
    {
        Some(c) => Err(format!("{part} {s:?} holds {c:?}, not a base-27 digit")),
        None => Ok(()),
    }
}

fn parse_iso_or_posix(s: &str) -> Result<IbiDate, String> {
    if s.is_empty() {
        return Err("empty".into());
    }
    // Long enough for every date an IBI can code (to_iso of a fraction of
    // MAX_FRACTION_DIGITS digits is 21 + MAX_FRACTION_DIGITS bytes), so that what
    // `to_iso` prints reads back; still bounded for hostile input.
    if s.len() > 21 + MAX_FRACTION_DIGITS {
        return Err("too long".into());
    }
    if s.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        if int.is_empty() || (s.contains('.') && frac.is_empty()) || frac.contains('.') {
            return Err("expected POSIX seconds such as 1287587646.394023".into());
        }
        let secs = int
            .parse::<i64>()
            .ok()
            .filter(|&n| n <= MAX_SECONDS)
            .ok_or_else(|| "POSIX seconds past the year 9999".to_string())?;
        return IbiDate::new(secs, frac).map_err(|e| e.to_string());
    }
    let shape = "expected ISO 8601 UTC such as 2009-02-16T17:46:00Z, or POSIX seconds";
    if !s.is_ascii() {
        return Err(shape.into());
    }
    let b = s.as_bytes();
    // yyyy-mm-ddThh:mm then [:ss[.fraction]] then Z.
    let fixed = |i: usize, c: u8| b.get(i).is_some_and(|x| x.eq_ignore_ascii_case(&c));
    if b.len() < 16 || !fixed(4, b'-') || !fixed(7, b'-') || !fixed(10, b'T') || !fixed(13, b':') {
        return Err(shape.into());
    }
    let Some(body) = s.strip_suffix(['Z', 'z']) else {
        return Err("no 'Z': only UTC dates are accepted".into());
    };
    if body.len() < 16 {
        return Err(shape.into());
    }
    let num = |r: std::ops::Range<usize>| -> Result<u32, String> {
        let t = &body[r];
        if t.bytes().all(|b| b.is_ascii_digit()) {
            Ok(t.parse().expect("digits"))
        } else {
            Err(shape.to_string())
        }
    };
    let year = num(0..4)? as i32;
    let (month, day, hour, minute) = (num(5..7)?, num(8..10)?, num(11..13)?, num(14..16)?);
    let (second, fraction) = match &body[16..] {
        "" => (0, ""),
        rest => {
            let rest = rest.strip_prefix(':').ok_or_else(|| shape.to_string())?;
            let (ss, frac) = rest.split_once('.').unwrap_or((rest, ""));
            if ss.len() != 2 || (rest.contains('.') && frac.is_empty()) {
                return Err(shape.into());
            }
            if !frac.bytes().all(|b| b.is_ascii_digit()) {
                return Err(shape.into());
            }
            (num(17..19)?, frac)
        }
    };
    IbiDate::from_civil(year, month, day, hour, minute, second, fraction)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: i64, f: &str) -> IbiDate {
        IbiDate::new(s, f).unwrap()
    }

    #[test]
    fn example_2_suffix() {
        assert_eq!(d(1_234_806_360, "").ibip_suffix().unwrap(), "34PGRBS");
        assert_eq!(
            IbiDate::from_ibip_suffix("34PGRBS").unwrap(),
            d(1_234_806_360, "")
        );
        assert_eq!(d(1_234_806_360, "").rep_suffix(), "2009/02.16.17.46");
        assert_eq!(d(1_234_806_360, "").to_iso(), "2009-02-16T17:46:00Z");
    }

    #[test]
    fn algorithm_2_seconds_and_fraction() {
        assert_eq!(d(1_287_587_646, "").rep_suffix(), "2010/10.20.15.14.06");
        assert_eq!(d(1_287_587_640, "").rep_suffix(), "2010/10.20.15.14");
        assert_eq!(d(1_287_587_640, "5").rep_suffix(), "2010/10.20.15.14.00.5");
        assert_eq!(
            d(1_287_587_646, "394023").rep_suffix(),
            "2010/10.20.15.14.06.394023"
        );
        assert_eq!(
            d(1_287_587_646, "394023").to_iso(),
            "2010-10-20T15:14:06.394023Z"
        );
    }

    #[test]
    fn new_drops_trailing_zeros_and_checks() {
        assert_eq!(d(5, "500").fraction(), "5");
        assert_eq!(d(5, "000").fraction(), "");
        assert_eq!(
            IbiDate::new(5, "1a").unwrap_err().to_string(),
            "fraction \"1a\" is not a string of decimal digits"
        );
        assert_eq!(
            IbiDate::new(MAX_SECONDS + 1, "").unwrap_err().to_string(),
            "date 253402300800 is out of range (years 0000 to 9999)"
        );
        assert!(IbiDate::new(MIN_SECONDS, "").is_ok());
        assert_eq!(d(MIN_SECONDS, "").to_iso(), "0000-01-01T00:00:00Z");
        assert_eq!(d(MAX_SECONDS, "").to_iso(), "9999-12-31T23:59:59Z");
    }

    #[test]
    fn order_is_the_order_of_instants() {
        let mut v = vec![
            d(2, ""),
            d(1, "5"),
            d(1, "45"),
            d(1, "05"),
            d(1, ""),
            d(1, "4"),
        ];
        v.sort();
        let want = vec![
            d(1, ""),
            d(1, "05"),
            d(1, "4"),
            d(1, "45"),
            d(1, "5"),
            d(2, ""),
        ];
        assert_eq!(v, want);
    }

    #[test]
    fn fraction_coding() {
        for (frac, coded) in [
            ("5", "34PGRBSW7"),
            ("05", "34PGRBSW27"),
            ("005", "34PGRBSW227"),
            ("1", "34PGRBSW3"),
            ("99", "34PGRBSW5L"),
        ] {
            let date = d(1_234_806_360, frac);
            assert_eq!(date.ibip_suffix().unwrap(), coded);
            assert_eq!(IbiDate::from_ibip_suffix(coded).unwrap(), date);
        }
    }

    #[test]
    fn ibip_suffix_round_trip_over_fractions() {
        for k in 0..20_000u32 {
            let frac = format!("{:04}", k * 7 % 10_000);
            let date = d(IBIP_EPOCH + i64::from(k) * 1_234_567 % 8_000_000_000, &frac);
            let coded = date.ibip_suffix().unwrap();
            assert_eq!(IbiDate::from_ibip_suffix(&coded).unwrap(), date, "{coded}");
            assert_eq!(
                IbiDate::from_ibip_suffix(&coded.to_lowercase()).unwrap(),
                date
            );
        }
    }

    #[test]
    fn ibip_suffix_refusals() {
        for (s, why) in [
            ("", "suffix has no seconds before 'W'"),
            ("W7", "suffix has no seconds before 'W'"),
            (
                "234PGRBS",
                "suffix \"234PGRBS\" starts with the zero digit '2'",
            ),
            ("34PGRBSW", "coded fraction after 'W' is empty"),
            ("34PGRBSW22", "coded fraction \"22\" is zero"),
            (
                "34PGRBSWC",
                "coded fraction \"C\" stands for 10, but a fraction has no trailing zero",
            ),
            (
                "34PGRBSW7W7",
                "coded fraction \"7W7\" holds 'W', not a base-27 digit",
            ),
            ("34PGO", "suffix \"34PGO\" holds 'O', not a base-27 digit"),
            ("UUUUUUUUU", "suffix \"UUUUUUUUU\" is past the year 9999"),
            (
                "3333333333333333333333",
                "suffix \"3333333333333333333333\" is past the year 9999",
            ),
        ] {
            assert_eq!(
                IbiDate::from_ibip_suffix(s).unwrap_err().to_string(),
                format!("invalid IBIp suffix {s:?}: {why}")
            );
        }
        // The epoch itself is the single digit 2.
        assert_eq!(IbiDate::from_ibip_suffix("2").unwrap(), d(IBIP_EPOCH, ""));
        assert_eq!(d(IBIP_EPOCH, "").ibip_suffix().unwrap(), "2");
        assert_eq!(
            d(IBIP_EPOCH - 1, "").ibip_suffix().unwrap_err().to_string(),
            "date 1995-07-31T23:59:59Z is before 1995-08-01T00:00:00Z and has no IBIp suffix"
        );
    }

    #[test]
    fn parse_iso_forms() {
        for (s, secs, frac) in [
            ("2009-02-16T17:46:00Z", 1_234_806_360, ""),
            ("2009-02-16T17:46Z", 1_234_806_360, ""),
            ("2009-02-16t17:46z", 1_234_806_360, ""),
            ("2010-10-20T15:14:06.394023Z", 1_287_587_646, "394023"),
            ("2010-10-20T15:14:06.50Z", 1_287_587_646, "5"),
            ("1287587646.394023", 1_287_587_646, "394023"),
            ("1287587646", 1_287_587_646, ""),
            ("0", 0, ""),
        ] {
            assert_eq!(IbiDate::parse_iso(s).unwrap(), d(secs, frac), "{s}");
        }
    }

    #[test]
    fn parse_iso_refusals() {
        let shape = "expected ISO 8601 UTC such as 2009-02-16T17:46:00Z, or POSIX seconds";
        for (s, why) in [
            ("", "empty"),
            ("2009-02-16", shape),
            ("2009-02-16T17:46:00", "no 'Z': only UTC dates are accepted"),
            ("2009-02-16T17:46", "no 'Z': only UTC dates are accepted"),
            ("2009-02-16T17:4Z", shape),
            (
                "2009-02-16T17:46:00+01:00",
                "no 'Z': only UTC dates are accepted",
            ),
            ("2009-13-16T17:46Z", "month 13 is out of range"),
            ("2009-04-31T17:46Z", "day 31 is out of range for 2009-04"),
            ("2009-02-29T17:46Z", "day 29 is out of range for 2009-02"),
            ("2009-02-16T24:46Z", "hour 24 is out of range"),
            ("2009-02-16T17:60Z", "minute 60 is out of range"),
            ("2009-02-16T17:46:60Z", "second 60 is out of range"),
            ("2009-02-16T17:46:0Z", shape),
            ("2009-02-16T17:46:00.Z", shape),
            ("2009-02-16T17:46:00.1xZ", shape),
            ("2009-0a-16T17:46Z", shape),
            ("2009-02-16T17:4\u{e9}00Z", shape),
            ("2009-02-16T17:46:\u{e9}Z", shape),
            (
                "1287587646.",
                "expected POSIX seconds such as 1287587646.394023",
            ),
            ("1.2.3", "expected POSIX seconds such as 1287587646.394023"),
            ("99999999999999999999", "POSIX seconds past the year 9999"),
        ] {
            assert_eq!(
                IbiDate::parse_iso(s).unwrap_err().to_string(),
                format!("invalid date {s:?}: {why}")
            );
        }
        assert!(IbiDate::parse_iso("2008-02-29T00:00Z").is_ok());
        assert!(IbiDate::parse_iso("2000-02-29T00:00Z").is_ok());
        assert!(IbiDate::parse_iso("1900-02-29T00:00Z").is_err());
    }
}
