//! A duration as the configuration files write one: a whole number and its unit
//! (`"500ms"`, `"2s"`, `"1h"`, `"7d"`). What range a setting allows is the setting's.

use std::time::Duration;

/// A unit: its suffix and its length in milliseconds.
pub type Unit = (&'static str, u64);

pub const MS: Unit = ("ms", 1);
pub const S: Unit = ("s", 1000);
pub const H: Unit = ("h", 3_600_000);
pub const D: Unit = ("d", 86_400_000);

/// `s` read as digits (no sign, no point) followed by one of `units`, tried in their
/// order (so [`MS`] before [`S`]); a fault's text suggests `example` and `"500ms"`.
pub fn parse(s: &str, units: &[Unit], example: &str) -> Result<Duration, String> {
    let Some((digits, unit_ms)) = units
        .iter()
        .find_map(|(suffix, ms)| Some((s.strip_suffix(suffix)?, *ms)))
    else {
        return Err(format!(
            "{s:?} has no unit; write it as \"{example}\" or \"500ms\""
        ));
    };
    let n: u64 = digits
        .parse()
        .ok()
        .filter(|_| digits.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(|| format!("{s:?} is not a whole number of {}", names(units)))?;
    Ok(Duration::from_millis(n.saturating_mul(unit_ms)))
}

/// The units' suffixes as a sentence lists them: `ms, s or h`.
fn names(units: &[Unit]) -> String {
    let suffixes: Vec<&str> = units.iter().map(|(suffix, _)| *suffix).collect();
    match suffixes.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_with_their_unit() {
        let all = [MS, S, H, D];
        let ms = |n| Ok(Duration::from_millis(n));
        assert_eq!(parse("500ms", &all, "2s"), ms(500));
        assert_eq!(parse("2s", &all, "2s"), ms(2_000));
        assert_eq!(parse("1h", &all, "2s"), ms(3_600_000));
        assert_eq!(parse("7d", &all, "2s"), ms(604_800_000));
        assert_eq!(parse("0s", &all, "2s"), ms(0));
        assert_eq!(
            parse("1", &all, "2s"),
            Err("\"1\" has no unit; write it as \"2s\" or \"500ms\"".into())
        );
        for bad in ["+1s", "-1s", "1.5s", "s", " 1s", "1 s"] {
            assert_eq!(
                parse(bad, &all, "2s"),
                Err(format!("{bad:?} is not a whole number of ms, s, h or d"))
            );
        }
        // A unit not offered is no unit.
        assert_eq!(
            parse("1d", &[MS, S, H], "1s"),
            Err("\"1d\" has no unit; write it as \"1s\" or \"500ms\"".into())
        );
        assert_eq!(
            parse("x1s", &[MS, S, H], "1s"),
            Err("\"x1s\" is not a whole number of ms, s or h".into())
        );
    }
}
