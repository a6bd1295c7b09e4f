//! Base 27 (generation standard, Table 7.6) and the arbitrary-precision natural number the
//! IBIp conversions need (an IPv6 text read in base 17 exceeds `u128`).
//!
//! CONVERTFROMDECIMAL and CONVERTTODECIMAL of the generation standard (§7, Tables 7.2, 7.3)
//! are radix conversions of natural numbers; [`Natural`] does them exactly with 32-bit limbs,
//! multiply-by-small-and-add and divide-by-small, which is all that is needed.

use std::cmp::Ordering;

/// Table 7.6 (decimal to IBIp): the digit of value `i` is `DIGITS[i]`. `0`, `1`, `I`, `O`,
/// `V`, `Y` and `Z` are left out (Table 7.1); `W` and `X` are separators.
pub const DIGITS: &[u8; 27] = b"23456789ABCDEFGHJKLMNPQRSTU";

/// The value of a base-27 digit, either case (Table 7.1: IBIps are case-insensitive).
pub fn digit_value(c: u8) -> Option<u32> {
    let upper = c.to_ascii_uppercase();
    DIGITS.iter().position(|&d| d == upper).map(|i| i as u32)
}

/// A natural number of any size: little-endian 32-bit limbs with no high zero limb (zero has
/// no limbs).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Natural {
    limbs: Vec<u32>,
}

impl Natural {
    pub fn zero() -> Natural {
        Natural { limbs: Vec::new() }
    }

    pub fn from_u64(n: u64) -> Natural {
        let mut limbs = vec![n as u32, (n >> 32) as u32];
        while limbs.last() == Some(&0) {
            limbs.pop();
        }
        Natural { limbs }
    }

    /// The value, if it fits in a `u64`.
    pub fn to_u64(&self) -> Option<u64> {
        match self.limbs.as_slice() {
            [] => Some(0),
            [lo] => Some(u64::from(*lo)),
            [lo, hi] => Some(u64::from(*lo) | (u64::from(*hi) << 32)),
            _ => None,
        }
    }

    pub fn is_zero(&self) -> bool {
        self.limbs.is_empty()
    }

    /// `self = self * m + a`.
    pub fn mul_add_small(&mut self, m: u32, a: u32) {
        if m == 0 {
            *self = Natural::from_u64(u64::from(a));
            return;
        }
        let mut carry = u64::from(a);
        for limb in &mut self.limbs {
            let v = u64::from(*limb) * u64::from(m) + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            self.limbs.push(carry as u32);
        }
    }

    /// `self = self / d`, returning the remainder. `d` must not be zero.
    pub fn divmod_small(&mut self, d: u32) -> u32 {
        assert!(d != 0, "division by zero");
        let mut rem = 0u64;
        for limb in self.limbs.iter_mut().rev() {
            let v = (rem << 32) | u64::from(*limb);
            *limb = (v / u64::from(d)) as u32;
            rem = v % u64::from(d);
        }
        while self.limbs.last() == Some(&0) {
            self.limbs.pop();
        }
        rem as u32
    }

    /// The number whose digits in `radix` are `digits`, most significant first. Every digit
    /// must be below `radix`.
    pub fn from_digits(digits: impl IntoIterator<Item = u32>, radix: u32) -> Natural {
        let mut n = Natural::zero();
        for d in digits {
            debug_assert!(d < radix);
            n.mul_add_small(radix, d);
        }
        n
    }

    /// The digits of the number in `radix` (2 or more), most significant first; zero has the
    /// single digit 0.
    pub fn to_digits(&self, radix: u32) -> Vec<u32> {
        assert!(radix >= 2, "radix below 2");
        let mut n = self.clone();
        let mut out = Vec::new();
        loop {
            out.push(n.divmod_small(radix));
            if n.is_zero() {
                break;
            }
        }
        out.reverse();
        out
    }

    /// Reads a decimal numeral (ASCII digits only, at least one).
    pub fn parse_decimal(s: &str) -> Option<Natural> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(Natural::from_digits(
            s.bytes().map(|b| u32::from(b - b'0')),
            10,
        ))
    }

    /// The decimal numeral of the number, without leading zeros.
    pub fn to_decimal(&self) -> String {
        self.to_digits(10)
            .into_iter()
            .map(|d| char::from(b'0' + d as u8))
            .collect()
    }
}

impl Ord for Natural {
    fn cmp(&self, other: &Natural) -> Ordering {
        self.limbs
            .len()
            .cmp(&other.limbs.len())
            .then_with(|| self.limbs.iter().rev().cmp(other.limbs.iter().rev()))
    }
}

impl PartialOrd for Natural {
    fn partial_cmp(&self, other: &Natural) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// CONVERTFROMDECIMAL(n, decim-to-IBIp): the base-27 numeral of `n` (zero is `2`).
pub fn encode(n: &Natural) -> String {
    n.to_digits(27)
        .into_iter()
        .map(|d| char::from(DIGITS[d as usize]))
        .collect()
}

/// [`encode`] for a machine integer.
pub fn encode_u64(n: u64) -> String {
    encode(&Natural::from_u64(n))
}

/// CONVERTTODECIMAL(s, decim-to-IBIp): the number a base-27 numeral stands for, either case;
/// `None` when `s` is empty or holds a character outside Table 7.6. Leading zero digits (`2`)
/// are accepted here; the IBIp parser decides whether they are allowed where they occur.
pub fn decode(s: &str) -> Option<Natural> {
    if s.is_empty() {
        return None;
    }
    let mut n = Natural::zero();
    for b in s.bytes() {
        n.mul_add_small(27, digit_value(b)?);
    }
    Some(n)
}

/// Table 7.3 as text to text: the base-27 numeral of a decimal numeral.
pub fn from_decimal(decimal: &str) -> Option<String> {
    Natural::parse_decimal(decimal).map(|n| encode(&n))
}

/// The inverse of [`from_decimal`]: the decimal numeral of a base-27 numeral.
pub fn to_decimal(coded: &str) -> Option<String> {
    decode(coded).map(|n| n.to_decimal())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_7_3_vectors() {
        for (dec, coded) in [
            ("1", "3"),
            ("19050", "U5H"),
            ("480992662", "38G3TS3"),
            ("4588904456580", "J8LNKAN8P"),
            ("478239719325051908572237", "7URMDHLL9SSN2D89M"),
        ] {
            assert_eq!(from_decimal(dec).as_deref(), Some(coded), "{dec}");
            assert_eq!(to_decimal(coded).as_deref(), Some(dec), "{coded}");
            assert_eq!(
                to_decimal(&coded.to_lowercase()).as_deref(),
                Some(dec),
                "{coded}"
            );
        }
    }

    #[test]
    fn zero_is_the_digit_2() {
        assert_eq!(encode_u64(0), "2");
        assert_eq!(to_decimal("2").as_deref(), Some("0"));
        assert_eq!(to_decimal("222").as_deref(), Some("0"));
    }

    #[test]
    fn every_digit_has_its_value() {
        for (i, &d) in DIGITS.iter().enumerate() {
            assert_eq!(digit_value(d), Some(i as u32));
            assert_eq!(digit_value(d.to_ascii_lowercase()), Some(i as u32));
        }
        for c in b"01IOVWXYZiovwxyz/-. " {
            assert_eq!(digit_value(*c), None, "{}", *c as char);
        }
    }

    #[test]
    fn u64_round_trip_over_a_sweep() {
        let mut n: u64 = 0;
        while n < u64::MAX / 3 {
            let coded = encode_u64(n);
            assert_eq!(decode(&coded).and_then(|v| v.to_u64()), Some(n));
            assert!(n == 0 || !coded.starts_with('2'));
            n = n * 3 + 1;
        }
        for n in 0..30_000u64 {
            assert_eq!(decode(&encode_u64(n)).and_then(|v| v.to_u64()), Some(n));
        }
        assert_eq!(
            decode(&encode_u64(u64::MAX)).and_then(|v| v.to_u64()),
            Some(u64::MAX)
        );
    }

    #[test]
    fn huge_round_trip_and_order() {
        let mut n = Natural::from_u64(1);
        let mut prev = Natural::zero();
        for i in 0..400u32 {
            n.mul_add_small(1_000_003, i);
            let dec = n.to_decimal();
            assert_eq!(Natural::parse_decimal(&dec).as_ref(), Some(&n));
            assert_eq!(decode(&encode(&n)).as_ref(), Some(&n));
            assert!(prev < n);
            prev = n.clone();
        }
        assert_eq!(n.to_u64(), None);
    }

    #[test]
    fn bad_input_is_none() {
        assert_eq!(decode(""), None);
        assert_eq!(decode("3O"), None);
        assert_eq!(from_decimal(""), None);
        assert_eq!(from_decimal("12a"), None);
        assert_eq!(from_decimal("-1"), None);
    }
}
