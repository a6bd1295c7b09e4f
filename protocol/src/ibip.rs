//! The IBIp, the opaque IBI spelled with an IP address (generation standard, §7, Table 7.1),
//! e.g. `8JMKD3MGP8W/34PGRBS`.
//!
//! ```text
//! IBIp = word "/" word          ; Table 7.1, digits of Table 7.6 plus W and X
//! prefix = coded-IP ("W" | "X") [coded-port]     ; Algorithm 5
//! suffix = coded-seconds ["W" coded-fraction]    ; Algorithm 6
//! ```
//!
//! The semantic rules of Algorithms 5–7 are checked too: the prefix decodes to an IPv4
//! (`W`) or IPv6 (`X`) address and a port (none coded means 800; 800 is never coded), the
//! suffix to a date. Numbers are written without leading zero digits (`2`), as the
//! algorithms write them, so each IBIp has one spelling up to case.

use super::base27;
use super::date::decode_ibip_suffix;
use super::ip::{ipv4_from_number, ipv6_from_number};
use super::{shown, IbiDate, IbiError, MAX_LEN};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::net::IpAddr;
use std::str::FromStr;

/// The port an IBIp prefix leaves out (Algorithm 5, lines 1–2).
pub const DEFAULT_PORT: u16 = 800;

/// An IBIp (Table 7.1); it exists only if it parsed. Equality and hashing ignore case.
#[derive(Clone, Debug)]
pub struct Ibip {
    text: String,
    slash: usize,
    ip: IpAddr,
    ip_text: String,
    port: u16,
    date: IbiDate,
}

impl Ibip {
    /// Parses an IBIp; the error names the part at fault.
    pub fn parse(s: &str) -> Result<Ibip, IbiError> {
        parse(s).map_err(|why| IbiError::new(format!("invalid IBIp {}: {why}", shown(s))))
    }

    /// The spelling it was parsed from.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The spelling shared by all IBIps equal to this one: upper case (equality ignores
    /// case, and a number is written without leading zero digits, so case is all that
    /// two spellings of one IBIp can differ in).
    pub fn canonical(&self) -> String {
        self.text.to_ascii_uppercase()
    }

    /// The coded IP and port, as spelled.
    pub fn prefix(&self) -> &str {
        &self.text[..self.slash]
    }

    /// The coded date, as spelled.
    pub fn suffix(&self) -> &str {
        &self.text[self.slash + 1..]
    }

    /// The IP address the prefix codes.
    pub fn ip(&self) -> IpAddr {
        self.ip
    }

    /// The IP text the prefix codes, exactly as it was read when minting (see
    /// [`super::ip`]), e.g. `2001:252:0:1::2008:6`.
    pub fn ip_text(&self) -> &str {
        &self.ip_text
    }

    /// The port the prefix codes, 800 when none is coded.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The date the suffix codes.
    pub fn date(&self) -> IbiDate {
        self.date.clone()
    }
}

fn parse(s: &str) -> Result<Ibip, String> {
    if s.is_empty() {
        return Err("it is empty".into());
    }
    if s.len() > MAX_LEN {
        return Err(format!("it is longer than {MAX_LEN} bytes"));
    }
    let slashes = s.bytes().filter(|&b| b == b'/').count();
    if slashes != 1 {
        return Err(format!("it has {slashes} '/', expected 1 (prefix/suffix)"));
    }
    let (prefix, suffix) = s.split_once('/').expect("one slash");
    if prefix.is_empty() {
        return Err("prefix is empty".into());
    }
    if suffix.is_empty() {
        return Err("suffix is empty".into());
    }
    if let Some(c) = prefix.chars().find(|&c| !is_prefix_char(c)) {
        return Err(format!(
            "prefix {prefix:?} holds {c:?}, not a base-27 digit, 'W' or 'X'"
        ));
    }
    let (ip, ip_text, port) = decode_prefix(prefix)?;
    let date = decode_ibip_suffix(suffix)?;
    Ok(Ibip {
        text: s.to_string(),
        slash: prefix.len(),
        ip,
        ip_text,
        port,
        date,
    })
}

fn is_prefix_char(c: char) -> bool {
    c.is_ascii() && (base27::digit_value(c as u8).is_some() || matches!(c, 'W' | 'X' | 'w' | 'x'))
}

/// Algorithm 5 backwards.
fn decode_prefix(prefix: &str) -> Result<(IpAddr, String, u16), String> {
    let mut seps = prefix.match_indices(['W', 'X', 'w', 'x']);
    let Some((at, sep)) = seps.next() else {
        return Err(format!(
            "prefix {prefix:?} has no 'W' (IPv4) or 'X' (IPv6) separator"
        ));
    };
    if seps.next().is_some() {
        return Err(format!("prefix {prefix:?} has more than one 'W' or 'X'"));
    }
    let (coded_ip, coded_port) = (&prefix[..at], &prefix[at + 1..]);
    let v6 = sep.eq_ignore_ascii_case("X");
    if coded_ip.is_empty() {
        return Err(format!(
            "prefix {prefix:?} has no coded IP before {:?}",
            sep
        ));
    }
    if coded_ip.len() > 1 && coded_ip.starts_with('2') {
        return Err(format!(
            "coded IP {coded_ip:?} starts with the zero digit '2'"
        ));
    }
    let n = base27::decode(coded_ip).expect("digits checked");
    let decoded = if v6 {
        ipv6_from_number(&n).map(|(ip, t)| (IpAddr::V6(ip), t))
    } else {
        ipv4_from_number(&n).map(|(ip, t)| (IpAddr::V4(ip), t))
    };
    let Some((ip, ip_text)) = decoded else {
        let kind = if v6 { "IPv6" } else { "IPv4" };
        return Err(format!(
            "coded IP {coded_ip:?} does not decode to an {kind} address"
        ));
    };
    let port = if coded_port.is_empty() {
        DEFAULT_PORT
    } else {
        if coded_port.len() > 1 && coded_port.starts_with('2') {
            return Err(format!(
                "coded port {coded_port:?} starts with the zero digit '2'"
            ));
        }
        // 65535 has four base-27 digits; five or more is out of range unread.
        let value = (coded_port.len() <= 4)
            .then(|| base27::decode(coded_port).and_then(|n| n.to_u64()))
            .flatten();
        match value {
            Some(800) => {
                return Err(format!(
                    "coded port {coded_port:?} is 800, which Algorithm 5 never codes"
                ))
            }
            Some(p @ 1..=65535) => p as u16,
            Some(p) => return Err(format!("coded port {coded_port:?} is {p}, out of range")),
            None => return Err(format!("coded port {coded_port:?} is out of range")),
        }
    };
    Ok((ip, ip_text, port))
}

impl PartialEq for Ibip {
    fn eq(&self, other: &Ibip) -> bool {
        self.text.eq_ignore_ascii_case(&other.text)
    }
}

impl Eq for Ibip {}

impl Hash for Ibip {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for b in self.text.bytes() {
            state.write_u8(b.to_ascii_uppercase());
        }
        state.write_u8(0xff);
    }
}

impl fmt::Display for Ibip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for Ibip {
    type Err = IbiError;
    fn from_str(s: &str) -> Result<Ibip, IbiError> {
        Ibip::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn example_2() {
        let i = Ibip::parse("8JMKD3MGP8W/34PGRBS").unwrap();
        assert_eq!(i.prefix(), "8JMKD3MGP8W");
        assert_eq!(i.suffix(), "34PGRBS");
        assert_eq!(i.ip(), "150.163.34.243".parse::<IpAddr>().unwrap());
        assert_eq!(i.ip_text(), "150.163.34.243");
        assert_eq!(i.port(), 800);
        assert_eq!(i.date().to_iso(), "2009-02-16T17:46:00Z");
    }

    #[test]
    fn case_is_ignored_but_kept() {
        let a = Ibip::parse("8JMKD3MGP8W/34PGRBS").unwrap();
        let b = Ibip::parse("8jmkd3mgp8w/34pgrbs").unwrap();
        assert_eq!(a, b);
        assert_eq!(b.to_string(), "8jmkd3mgp8w/34pgrbs");
        let set: HashSet<Ibip> = [a, b].into_iter().collect();
        assert_eq!(set.len(), 1);
        assert_ne!(
            Ibip::parse("8JMKD3MGP8W/34PGRBS").unwrap(),
            Ibip::parse("8JMKD3MGP8W/34PGRBT").unwrap()
        );
    }

    #[test]
    fn refusals_name_the_part() {
        for (s, want) in [
            ("", "it is empty"),
            (
                "8JMKD3MGP8W34PGRBS",
                "it has 0 '/', expected 1 (prefix/suffix)",
            ),
            (
                "8JMKD3MGP8W/34PG/RBS",
                "it has 2 '/', expected 1 (prefix/suffix)",
            ),
            ("/34PGRBS", "prefix is empty"),
            ("8JMKD3MGP8W/", "suffix is empty"),
            (
                "8JMKD3MGP8O/34PGRBS",
                "prefix \"8JMKD3MGP8O\" holds 'O', not a base-27 digit, 'W' or 'X'",
            ),
            (
                "8JMKD3MGP8/34PGRBS",
                "prefix \"8JMKD3MGP8\" has no 'W' (IPv4) or 'X' (IPv6) separator",
            ),
            (
                "8JMKD3MGP8WX/34PGRBS",
                "prefix \"8JMKD3MGP8WX\" has more than one 'W' or 'X'",
            ),
            ("W/34PGRBS", "prefix \"W\" has no coded IP before \"W\""),
            (
                "28JMKD3MGP8W/34PGRBS",
                "coded IP \"28JMKD3MGP8\" starts with the zero digit '2'",
            ),
            (
                "8JMKD3MGP8X/34PGRBS",
                "coded IP \"8JMKD3MGP8\" does not decode to an IPv6 address",
            ),
            (
                "3W/34PGRBS",
                "coded IP \"3\" does not decode to an IPv4 address",
            ),
            (
                "8JMKD3MGP8W2J/34PGRBS",
                "coded port \"2J\" starts with the zero digit '2'",
            ),
            (
                "8JMKD3MGP8W2/34PGRBS",
                "coded port \"2\" is 0, out of range",
            ),
            (
                "8JMKD3MGP8WUUUU/34PGRBS",
                "coded port \"UUUU\" is 531440, out of range",
            ),
            (
                "8JMKD3MGP8W33333/34PGRBS",
                "coded port \"33333\" is out of range",
            ),
            (
                "8JMKD3MGP8W34K/34PGRBS",
                "coded port \"34K\" is 800, which Algorithm 5 never codes",
            ),
            (
                "8JMKD3MGP8W/34PGRBSX",
                "suffix \"34PGRBSX\" holds 'X', not a base-27 digit",
            ),
            (
                "8JMKD3MGP8W/34PGRB1",
                "suffix \"34PGRB1\" holds '1', not a base-27 digit",
            ),
        ] {
            let e = Ibip::parse(s).unwrap_err().to_string();
            assert_eq!(e, format!("invalid IBIp {}: {want}", shown(s)), "{s}");
        }
    }

    #[test]
    fn ports_round_trip() {
        for port in [1u16, 80, 799, 801, 802, 8080, 65535] {
            let coded = base27::encode_u64(u64::from(port));
            let i = Ibip::parse(&format!("8JMKD3MGP8W{coded}/34PGRBS")).unwrap();
            assert_eq!(i.port(), port);
        }
    }
}
