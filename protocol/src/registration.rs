//! The values of a registration (Table 7.2 of the resolution standard), each checked by one
//! rule that the Archive (archive.toml, `init`, `include`) and the resolver (`register`,
//! its service) both take, so that what one accepts the other accepts:
//! - [`Key`], rule `chave` of Table 7.1: ten to [`MAX_KEY_DIGITS`] digits, optionally `-`
//!   and as many again;
//! - [`Email`], rule `authority` as Table 7.2 uses it for the administrator's address:
//!   `userinfo "@" host [":" port]`;
//! - [`HostPort`], `host [":" port]` of RFC 3986 as §6.1 uses it for `archiveaddress`:
//!   a DNS name, an IPv4 address in its dotted form or an IPv6 literal in brackets (each
//!   as written when contacted, so that what is checked is what is contacted), and a port
//!   of at most 65535; [`HostPort::check`] checks a value kept elsewhere, reading it in
//!   place, and [`HostPort::parse`] keeps a copy after the same check.

use std::fmt;
use std::net::Ipv6Addr;

/// Most digits of each number of a key (a bound of this program's: the rule sets none).
pub const MAX_KEY_DIGITS: usize = 64;
/// Longest e-mail address, in bytes (RFC 5321's path, less its brackets).
pub const MAX_EMAIL: usize = 254;
/// Longest `host[:port]`, in bytes: a DNS name's 253 and `:65535`.
pub const MAX_HOSTPORT: usize = 261;

/// A registration key, rule `chave`. Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Key(String);

impl Key {
    pub fn parse(s: &str) -> Result<Key, Invalid> {
        let number = |n: &str| {
            (10..=MAX_KEY_DIGITS).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit())
        };
        let ok = match s.split_once('-') {
            Some((a, b)) => number(a) && number(b),
            None => number(s),
        };
        if ok {
            Ok(Key(s.to_string()))
        } else {
            Err(Invalid::Key)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Key(<key>)")
    }
}

/// An administrator's e-mail address, rule `authority`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Email(String);

impl Email {
    pub fn parse(s: &str) -> Result<Email, Invalid> {
        let Some((user, host)) = s.split_once('@') else {
            return Err(Invalid::Email);
        };
        let user_ok = !user.is_empty()
            && user
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:%".contains(&b));
        if s.len() <= MAX_EMAIL && user_ok && HostPort::check(host).is_ok() {
            Ok(Email(s.to_string()))
        } else {
            Err(Invalid::Email)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A `host[:port]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostPort(String);

impl HostPort {
    /// `s`, kept, when it is a `host[:port]` ([`HostPort::check`]).
    pub fn parse(s: &str) -> Result<HostPort, Invalid> {
        HostPort::check(s)?;
        Ok(HostPort(s.to_string()))
    }

    /// Whether `s` is a `host[:port]`, for a value that is kept as it is given: read in
    /// place, nothing allocated (archive.toml's address is checked at every CGI request).
    pub fn check(s: &str) -> Result<(), Invalid> {
        let bytes = s.as_bytes();
        if bytes.is_empty() || bytes.len() > MAX_HOSTPORT {
            return Err(Invalid::HostPort);
        }
        let (host, port) = if let Some(rest) = bytes.strip_prefix(b"[") {
            let close = rest
                .iter()
                .position(|&b| b == b']')
                .ok_or(Invalid::HostPort)?;
            let (literal, after) = (&rest[..close], &rest[close + 1..]);
            if !is_ipv6_as_written(literal) {
                return Err(Invalid::HostPort);
            }
            match after {
                [] => (None, None),
                [b':', port @ ..] => (None, Some(port)),
                _ => return Err(Invalid::HostPort),
            }
        } else {
            match bytes.iter().position(|&b| b == b':') {
                Some(colon) => (Some(&bytes[..colon]), Some(&bytes[colon + 1..])),
                None => (Some(bytes), None),
            }
        };
        if let Some(port) = port {
            if !(1..=5).contains(&port.len()) || number(port).is_none_or(|p| p > 65535) {
                return Err(Invalid::HostPort);
            }
        }
        if let Some(host) = host {
            if !is_host(host) {
                return Err(Invalid::HostPort);
            }
        }
        Ok(())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The value of `digits` when it is a decimal number of at most 9 digits (a leading zero
/// allowed), else `None`.
fn number(digits: &[u8]) -> Option<u32> {
    if digits.is_empty() || digits.len() > 9 {
        return None;
    }
    digits.iter().try_fold(0u32, |n, &b| {
        b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
    })
}

/// Whether `literal` (inside the brackets) is an IPv6 address as written when contacted,
/// the form URL parsers write (WHATWG): RFC 5952's, but an IPv4-mapped address in
/// hexadecimal (`::ffff:7f00:1`). Written out to be compared: an address in brackets is
/// rare enough in archive.toml for the one allocation.
fn is_ipv6_as_written(literal: &[u8]) -> bool {
    let Some(ip) = std::str::from_utf8(literal)
        .ok()
        .and_then(|l| l.parse::<Ipv6Addr>().ok())
    else {
        return false;
    };
    let written = match ip.to_ipv4_mapped() {
        Some(v4) => {
            let [a, b, c, d] = v4.octets();
            let (hi, lo) = (u16::from_be_bytes([a, b]), u16::from_be_bytes([c, d]));
            format!("::ffff:{hi:x}:{lo:x}")
        }
        None => ip.to_string(),
    };
    written.as_bytes().eq_ignore_ascii_case(literal)
}

/// A DNS name (labels of letters, digits, `-` and `_`, not beginning or ending with `-`,
/// at most 63 bytes each, 253 in all), or an IPv4 address in its dotted form: a name whose
/// last label is a number is read as an address, as URL parsers read it, and must be one.
fn is_host(host: &[u8]) -> bool {
    if host.is_empty() || host.len() > 253 {
        return false;
    }
    // Read in place, byte by byte, nothing allocated: archive.toml's address is checked
    // at every CGI request.
    let name = host.strip_suffix(b".").unwrap_or(host);
    let last = name.rsplit(|&b| b == b'.').next().unwrap_or(&[]);
    if !last.is_empty() && last.iter().all(u8::is_ascii_digit) || last.starts_with(b"0x") {
        return is_dotted_quad(host);
    }
    name.split(|&b| b == b'.').all(|l| {
        !l.is_empty()
            && l.len() <= 63
            && l.iter()
                .all(|&b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            && !l.starts_with(b"-")
            && !l.ends_with(b"-")
    })
}

/// An IPv4 address as written when contacted: four decimal numbers of at most 255, each
/// without a leading zero (`127.0.0.1`; not `127.1`, `127.0.0.01`, `0x7f.0.0.1`).
fn is_dotted_quad(host: &[u8]) -> bool {
    let mut numbers = 0;
    for part in host.split(|&b| b == b'.') {
        numbers += 1;
        let written = part.len() <= 3 && (part == b"0" || !part.starts_with(b"0"));
        if !written || numbers > 4 || number(part).is_none_or(|n| n > 255) {
            return false;
        }
    }
    numbers == 4
}

/// Which rule a value breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Invalid {
    Key,
    Email,
    HostPort,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Invalid::Key => "does not follow rule chave of Table 7.1 (10 or more digits, optionally '-' and 10 or more digits)",
            Invalid::Email => "is not an e-mail address (user@host)",
            Invalid::HostPort => "is not a host[:port]",
        })
    }
}

impl std::error::Error for Invalid {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_table_7_1() {
        let (longest, too_long) = ("9".repeat(64), "9".repeat(65));
        for ok in [
            "1234567890",
            "1234567890-1234567890",
            "12345678901234",
            longest.as_str(),
        ] {
            assert!(Key::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "123456789",
            "1234567890-",
            "-1234567890",
            "12345678a0",
            "1234567890-123",
            "1234567890-1234567890-1234567890",
            "",
            " 1234567890",
            too_long.as_str(),
        ] {
            assert_eq!(Key::parse(bad), Err(Invalid::Key), "{bad}");
        }
        assert_eq!(
            format!("{:?}", Key::parse("1234567890").unwrap()),
            "Key(<key>)"
        );
    }

    #[test]
    fn emails_follow_rule_authority() {
        let long = format!("{}@example.org", "a".repeat(250));
        for ok in [
            "banon@dpi.inpe.br",
            "archive-admin@example.org",
            "a.b+c@[::1]",
            "banon@localhost",
            "root@127.0.0.1",
            "x@host:8080",
            "o'brien@example.org",
        ] {
            assert!(Email::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "banon",
            "@dpi.inpe.br",
            "ba non@dpi.inpe.br",
            "a@b@c.org",
            "a@",
            "a@-x.org",
            "a@b..org",
            "a@999.1.1.1",
            "a@<script>",
            "é@example.org",
            long.as_str(),
        ] {
            assert_eq!(Email::parse(bad), Err(Invalid::Email), "{bad}");
        }
    }

    #[test]
    fn addresses_as_contacted() {
        let long_label = "a".repeat(64);
        for ok in [
            "mtc-m21.sid.inpe.br",
            "MTC-m21.sid.inpe.br:80",
            "127.0.0.1:8080",
            "[::1]:8080",
            "[::1]",
            "[::ffff:7f00:1]:80",
            "localhost",
            "host_1.example.org:65535",
            "example.org.",
            "[2001:db8::1]",
            "[1:2:3:4:5:6:7:8]:65535",
            "[::FFFF:7F00:1]",
        ] {
            assert_eq!(HostPort::parse(ok).map(|h| h.0), Ok(ok.to_string()));
            assert_eq!(HostPort::check(ok), Ok(()), "{ok}");
        }
        for bad in [
            "a b",
            "user@host",
            "host/path",
            "",
            "host:99999",
            "host:",
            "host:8x",
            ":80",
            "127.1",
            "127.0.0.01",
            "127.0.0.1.1",
            "256.0.0.1",
            "127.0.0.",
            "1.2.3.999",
            "0x7f.0.0.1",
            "[0:0::1]",
            "[::ffff:7f00:0001]",
            "[::ffff:127.0.0.1]",
            "[::1",
            "[::1]x",
            "[nonsense]",
            "-x.org",
            "a..org",
            "a:b:c",
            "[::1]:",
            "[::1]:65536",
            "[2001:db8:0:0:0:0:0:1]",
            "host:012345",
            long_label.as_str(),
        ] {
            assert_eq!(HostPort::parse(bad), Err(Invalid::HostPort), "{bad}");
            assert_eq!(HostPort::check(bad), Err(Invalid::HostPort), "{bad}");
        }
    }
}
