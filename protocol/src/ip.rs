//! An IP address text read as a number (generation standard, Algorithm 5, Tables 7.4 and
//! 7.5): IPv4 text in base 11 over `0-9 .`, IPv6 text in base 17 over `0-9 a-f :`.
//!
//! The number is the *text*, digit by digit, so which text is read matters. Minting reads
//! [`ip_text`]: dotted decimal for IPv4, the RFC 5952 form for IPv6 (lower case, longest
//! run of zero groups compressed) but always in hexadecimal, since Table 7.5 has no `.` for
//! a dotted tail. Decoding gives back exactly the text that was read, with one repair: a
//! number cannot hold the text's leading zero digits, so a decoded text that starts with a
//! lone `.` or `:` gets back the `0` it lost (`0.0.0.0`, `0:1:2:3:4:5:6:7`). Any text whose
//! first group has no leading zeros — every text [`ip_text`] writes — decodes to itself.

use super::base27::Natural;
use super::IbiError;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Table 7.4 (decimal to IPv4): the character of value `i` is `IPV4_DIGITS[i]`.
pub const IPV4_DIGITS: &[u8; 11] = b"0123456789.";

/// Table 7.5 (decimal to IPv6): the character of value `i` is `IPV6_DIGITS[i]`.
pub const IPV6_DIGITS: &[u8; 17] = b"0123456789abcdef:";

/// The longest text of an IPv4 address (`255.255.255.255`).
const IPV4_MAX_TEXT: usize = 15;
/// The longest text of an IPv6 address without a dotted tail (eight groups of four).
const IPV6_MAX_TEXT: usize = 39;

/// The host of `hostport` (`host`, `host:port`, `[v6]` or `[v6]:port`): the address
/// of an IPv6 one without its brackets.
pub fn host_of(hostport: &str) -> &str {
    if let Some(rest) = hostport.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    hostport.split(':').next().unwrap_or(hostport)
}

/// The text Algorithm 5 reads for `ip` when minting.
pub fn ip_text(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => ipv6_hex_text(v6),
    }
}

/// RFC 5952 §4 text of an IPv6 address, without the dotted form of §5.
fn ipv6_hex_text(ip: Ipv6Addr) -> String {
    let groups = ip.segments();
    // The longest run of two or more zero groups (the first one on a tie) becomes "::".
    let (mut best_start, mut best_len) = (0, 0);
    let mut i = 0;
    while i < 8 {
        if groups[i] == 0 {
            let start = i;
            while i < 8 && groups[i] == 0 {
                i += 1;
            }
            if i - start > best_len {
                (best_start, best_len) = (start, i - start);
            }
        } else {
            i += 1;
        }
    }
    let hex = |g: &[u16]| {
        g.iter()
            .map(|x| format!("{x:x}"))
            .collect::<Vec<_>>()
            .join(":")
    };
    if best_len >= 2 {
        format!(
            "{}::{}",
            hex(&groups[..best_start]),
            hex(&groups[best_start + best_len..])
        )
    } else {
        hex(&groups)
    }
}

/// CONVERTTODECIMAL(IP, decim-to-IPv4) or CONVERTTODECIMAL(IP, decim-to-IPv6): the number
/// the text stands for, chosen as Algorithm 5 line 5 does (a `.` makes it IPv4). Hex digits
/// are read in either case. The text must be an IP address.
pub fn text_to_number(text: &str) -> Result<Natural, IbiError> {
    let bad = || IbiError::new(format!("invalid IP {text:?}: not an IPv4 or IPv6 address"));
    let lower = text.to_ascii_lowercase();
    if lower.contains('.') {
        if lower.parse::<Ipv6Addr>().is_ok() {
            return Err(IbiError::new(format!(
                "invalid IP {text:?}: an IPv6 text with a dotted tail cannot be read by Table 7.5"
            )));
        }
        lower.parse::<Ipv4Addr>().map_err(|_| bad())?;
        Ok(read(&lower, IPV4_DIGITS))
    } else {
        lower.parse::<Ipv6Addr>().map_err(|_| bad())?;
        Ok(read(&lower, IPV6_DIGITS))
    }
}

/// Table 7.2 as text to text: the decimal numeral of an IP address text.
pub fn text_to_decimal(text: &str) -> Result<String, IbiError> {
    text_to_number(text).map(|n| n.to_decimal())
}

fn read(text: &str, table: &[u8]) -> Natural {
    let digit = |b: u8| {
        table
            .iter()
            .position(|&c| c == b)
            .expect("checked by the IP parser") as u32
    };
    Natural::from_digits(text.bytes().map(digit), table.len() as u32)
}

/// The IPv4 text a number stands for (Table 7.4), if it is one.
pub fn ipv4_from_number(n: &Natural) -> Option<(Ipv4Addr, String)> {
    let text = write(n, IPV4_DIGITS, b'.', IPV4_MAX_TEXT)?;
    let ip = text.parse::<Ipv4Addr>().ok()?;
    Some((ip, text))
}

/// The IPv6 text a number stands for (Table 7.5), if it is one.
pub fn ipv6_from_number(n: &Natural) -> Option<(Ipv6Addr, String)> {
    let text = write(n, IPV6_DIGITS, b':', IPV6_MAX_TEXT)?;
    let ip = text.parse::<Ipv6Addr>().ok()?;
    Some((ip, text))
}

/// The digits of `n` through `table`, with the lost leading `0` put back before a lone
/// separator; `None` when longer than `max` (checked before any text is built).
fn write(n: &Natural, table: &[u8], sep: u8, max: usize) -> Option<String> {
    let digits = n.to_digits(table.len() as u32);
    if digits.len() > max {
        return None;
    }
    let mut text: String = digits
        .iter()
        .map(|&d| char::from(table[d as usize]))
        .collect();
    let b = text.as_bytes();
    if b.first() == Some(&sep) && b.get(1) != Some(&sep) {
        text.insert(0, '0');
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_7_2_vectors() {
        assert_eq!(text_to_decimal("150.163.2.174").unwrap(), "4588904456580");
        assert_eq!(
            text_to_decimal("2001:252:0:1::2008:6").unwrap(),
            "478239719325051908572237"
        );
    }

    #[test]
    fn ipv6_text_is_rfc_5952_in_hex() {
        for (ip, text) in [
            ("2001:252:0:1:0:0:2008:6", "2001:252:0:1::2008:6"),
            ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
            ("2001:DB8:0:0:0:0:0:1", "2001:db8::1"),
            ("::", "::"),
            ("::1", "::1"),
            ("1::", "1::"),
            ("0:1:2:3:4:5:6:7", "0:1:2:3:4:5:6:7"),
            ("1:0:2:3:4:5:6:7", "1:0:2:3:4:5:6:7"),
            ("::ffff:10.0.0.1", "::ffff:a00:1"),
            ("::10.0.0.1", "::a00:1"),
            ("fe80::1:2", "fe80::1:2"),
        ] {
            let v6: Ipv6Addr = ip.parse().unwrap();
            assert_eq!(ip_text(IpAddr::V6(v6)), text, "{ip}");
            // The text is one std reads back, and decodes to itself.
            assert_eq!(text.parse::<Ipv6Addr>().unwrap(), v6);
            let n = text_to_number(text).unwrap();
            assert_eq!(ipv6_from_number(&n), Some((v6, text.to_string())), "{text}");
        }
    }

    #[test]
    fn lost_leading_zero_is_put_back() {
        let n = text_to_number("0.0.0.0").unwrap();
        assert_eq!(ipv4_from_number(&n).unwrap().1, "0.0.0.0");
        let n = text_to_number("0.1.2.3").unwrap();
        assert_eq!(ipv4_from_number(&n).unwrap().1, "0.1.2.3");
        let n = text_to_number("0:1:2:3:4:5:6:7").unwrap();
        assert_eq!(ipv6_from_number(&n).unwrap().1, "0:1:2:3:4:5:6:7");
        // "::" keeps its two colons: nothing to put back.
        let n = text_to_number("::1").unwrap();
        assert_eq!(ipv6_from_number(&n).unwrap().1, "::1");
    }

    #[test]
    fn ipv4_round_trip_over_a_sweep() {
        let mut x: u32 = 0;
        loop {
            let ip = Ipv4Addr::from(x);
            let text = ip_text(IpAddr::V4(ip));
            let n = text_to_number(&text).unwrap();
            assert_eq!(ipv4_from_number(&n), Some((ip, text)));
            match x.checked_add(65_521) {
                Some(next) => x = next,
                None => break,
            }
        }
    }

    #[test]
    fn numbers_that_are_not_addresses() {
        assert_eq!(ipv4_from_number(&Natural::zero()), None);
        // "1.2.3" is read fine as a number but is no address.
        let n = Natural::from_digits([1, 10, 2, 10, 3], 11);
        assert_eq!(ipv4_from_number(&n), None);
        // Sixteen characters: too long for any IPv4 text, refused before parsing.
        let n = Natural::from_digits([1; 16], 11);
        assert_eq!(ipv4_from_number(&n), None);
        let n = Natural::from_digits([1; 40], 17);
        assert_eq!(ipv6_from_number(&n), None);
    }

    #[test]
    fn text_that_is_not_an_address() {
        for t in [
            "",
            "1.2.3",
            "150.163.034.243",
            "::g",
            "1:2",
            "256.1.1.1",
            "::ffff:1.2.3.4x",
        ] {
            let e = text_to_number(t).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("invalid IP {t:?}: not an IPv4 or IPv6 address")
            );
        }
        assert_eq!(
            text_to_number("::ffff:1.2.3.4").unwrap_err().to_string(),
            "invalid IP \"::ffff:1.2.3.4\": an IPv6 text with a dotted tail cannot be read by Table 7.5"
        );
    }
}
