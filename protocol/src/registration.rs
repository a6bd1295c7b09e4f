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
//!   of at most 65535.

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
        if s.len() <= MAX_EMAIL && user_ok && HostPort::parse(host).is_ok() {
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
    pub fn parse(s: &str) -> Result<HostPort, Invalid> {
        if s.is_empty() || s.len() > MAX_HOSTPORT {
            return Err(Invalid::HostPort);
        }
        let (host, port) = if let Some(rest) = s.strip_prefix('[') {
            let (literal, after) = rest.split_once(']').ok_or(Invalid::HostPort)?;
            let ip: Ipv6Addr = literal.parse().map_err(|_| Invalid::HostPort)?;
            // As written when contacted, the form URL parsers write (WHATWG): RFC 5952's,
            // but an IPv4-mapped address in hexadecimal (`::ffff:7f00:1`).
            let written = match ip.to_ipv4_mapped() {
                Some(v4) => {
                    let [a, b, c, d] = v4.octets();
                    let (hi, lo) = (u16::from_be_bytes([a, b]), u16::from_be_bytes([c, d]));
                    format!("::ffff:{hi:x}:{lo:x}")
                }
                None => ip.to_string(),
            };
            if !written.eq_ignore_ascii_case(literal) {
                return Err(Invalid::HostPort);
            }
            match after {
                "" => (None, None),
                p => (None, Some(p.strip_prefix(':').ok_or(Invalid::HostPort)?)),
            }
        } else {
            match s.split_once(':') {
                Some((h, p)) => (Some(h), Some(p)),
                None => (Some(s), None),
            }
        };
        if let Some(port) = port {
            let digits =
                !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit());
            if !digits || port.parse::<u32>().map_or(true, |p| p > 65535) {
                return Err(Invalid::HostPort);
            }
        }
        if let Some(host) = host {
            if !is_host(host) {
                return Err(Invalid::HostPort);
            }
        }
        Ok(HostPort(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A DNS name (labels of letters, digits, `-` and `_`, not beginning or ending with `-`,
/// at most 63 bytes each, 253 in all), or an IPv4 address in its dotted form: a name whose
/// last label is a number is read as an address, as URL parsers read it, and must be one.
fn is_host(host: &str) -> bool {
    if host.is_empty() || host.len() > 253 {
        return false;
    }
    // Read in place, nothing allocated: archive.toml's address is checked at every CGI
    // request.
    let name = host.strip_suffix('.').unwrap_or(host);
    let last = name.rsplit('.').next().unwrap_or("");
    if !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()) || last.starts_with("0x") {
        return is_dotted_quad(host);
    }
    name.split('.').all(|l| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            && !l.starts_with('-')
            && !l.ends_with('-')
    })
}

/// An IPv4 address as written when contacted: four decimal numbers of at most 255, each
/// without a leading zero (`127.0.0.1`; not `127.1`, `127.0.0.01`, `0x7f.0.0.1`).
fn is_dotted_quad(host: &str) -> bool {
    let mut numbers = 0;
    for part in host.split('.') {
        numbers += 1;
        let written = !part.is_empty()
            && part.len() <= 3
            && part.bytes().all(|b| b.is_ascii_digit())
            && (part == "0" || !part.starts_with('0'));
        if !written || numbers > 4 || part.parse::<u16>().map_or(true, |n| n > 255) {
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
        ] {
            assert!(HostPort::parse(ok).is_ok(), "{ok}");
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
            long_label.as_str(),
        ] {
            assert_eq!(HostPort::parse(bad), Err(Invalid::HostPort), "{bad}");
        }
    }
}
