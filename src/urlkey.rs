//! URL keys (`urlkey`, resolution standard §9.2 and Table 8.11): issued with every answer
//! that carries URLs, without writing anything, and checked when the resolver's
//! acknowledgment comes back.
//!
//! A key follows rule `chave` of Table 7.1 (`número ["-" número]`, 10 or more digits):
//! `<T>-<nonce><mac>…` where T is the POSIX second of issue (10 digits), the nonce is 12
//! random digits, and for each URL of the answer a 10-digit number is cut from
//! HMAC-SHA256(secret, T | nonce | item | url), the item being the canonical rep of the
//! item the URL serves. So a key proves that this Archive issued it, for which URLs, and
//! for which item each — an acknowledgment cannot credit another item with it — with
//! only a secret kept in `var/urlkey.secret` (mode 0600: whoever reads it can forge keys).
//!
//! A key counts once: two answers for one URL in one second must not draw the same
//! nonce, or the second reader's access is lost as "already counted". With 12 digits,
//! `n` answers a second for one URL share a key about once in `2·10^12 / n²` seconds
//! (at 2,000 a second, once in 16 years); keys of 6 digits, as earlier releases issued
//! them (twice a second at 2,000), still check out for their day, their nonce read in
//! the width it was written in, so that no key can be spelt again in the other width.

use std::fmt;
use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use ::ibi::time::CLOCK_SLACK_SECS;

type HmacSha256 = Hmac<Sha256>;

/// How long after its issue an acknowledgment may still count a key.
pub const KEY_LIFETIME_SECS: i64 = 24 * 60 * 60;
const NONCE_DIGITS: usize = 12;
/// The nonce of the keys of earlier releases.
const OLD_NONCE_DIGITS: usize = 6;
const MAC_DIGITS: usize = 10;
/// Longest key checked (an answer's URLs are few; a longer key is malformed).
pub const MAX_KEY_LEN: usize = 2048;

/// The secret that signs keys, held as the HMAC state it keys (the inner and outer
/// blocks of the secret hashed once, not again for every key or every check).
pub struct UrlKeys {
    keyed: HmacSha256,
}

impl fmt::Debug for UrlKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UrlKeys(<secret>)")
    }
}

/// Where the secret lives under an Archive's `var/`.
pub fn secret_path(var: &Path) -> PathBuf {
    var.join("urlkey.secret")
}

impl UrlKeys {
    /// Reads the secret of the Archive whose writable state is in `var`, creating it on
    /// first use. When it can be neither read nor created (a read-only Archive with no
    /// secret yet), keys are signed with a secret of this process alone: they are still
    /// well-formed and new in every answer, but no acknowledgment can count them; the
    /// returned warning says so.
    pub fn load_or_create(var: &Path) -> (UrlKeys, Option<String>) {
        let path = secret_path(var);
        match read_secret(&path) {
            Ok(secret) => return (UrlKeys::new(secret), None),
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return (
                    UrlKeys::ephemeral(),
                    Some(format!(
                        "{}: {e}; acknowledgments cannot be counted",
                        path.display()
                    )),
                )
            }
            Err(_) => {}
        }
        match create_secret(&path) {
            Ok(secret) => (UrlKeys::new(secret), None),
            Err(e) => (
                UrlKeys::ephemeral(),
                Some(format!(
                    "{}: cannot create: {e}; acknowledgments cannot be counted",
                    path.display()
                )),
            ),
        }
    }

    /// A key for this process only.
    pub fn ephemeral() -> UrlKeys {
        UrlKeys::new(rand::random())
    }

    fn new(secret: [u8; 32]) -> UrlKeys {
        UrlKeys {
            keyed: HmacSha256::new_from_slice(&secret).expect("HMAC takes keys of any length"),
        }
    }

    #[cfg(test)]
    pub(crate) fn from_secret(secret: [u8; 32]) -> UrlKeys {
        UrlKeys::new(secret)
    }

    /// HMAC-SHA256 under the Archive's secret of `message`, for another use than urlkeys
    /// (the OAI-PMH provider's resumption tokens): `domain` (which starts with a letter,
    /// where every urlkey's message starts with its time, digits) and a NUL come first,
    /// so that no such tag is ever the MAC of a urlkey, nor one use's the other's.
    pub fn tag(&self, domain: &str, message: &[u8]) -> [u8; 32] {
        debug_assert!(domain.starts_with(|c: char| c.is_ascii_alphabetic()));
        let mut mac = self.keyed.clone();
        mac.update(domain.as_bytes());
        mac.update(b"\0");
        mac.update(message);
        mac.finalize().into_bytes().into()
    }

    /// A new key for an answer holding `urls`, each with the canonical rep of the item
    /// it serves and as written in the pair list, issued at POSIX second `now`.
    pub fn issue(&self, now: i64, urls: &[(&str, &[u8])]) -> String {
        let nonce = format!("{:0NONCE_DIGITS$}", nonce());
        let mut key = format!("{now:010}-{nonce}");
        for (item, url) in urls {
            key.push_str(&self.mac_digits(now, &nonce, item, &canonical_url(url)));
        }
        if urls.is_empty() {
            key.push_str(&self.mac_digits(now, &nonce, "", b""));
        }
        key
    }

    /// Checks that `key` was issued by this Archive, at most [`KEY_LIFETIME_SECS`] before
    /// `now`, for the URL `url` (as the acknowledgment carries it, once decoded) of one
    /// of the `items` (canonical reps): which one is in the answer.
    pub fn verify(
        &self,
        key: &str,
        items: &[&str],
        url: &[u8],
        now: i64,
    ) -> Result<IssuedKey, KeyError> {
        if key.len() > MAX_KEY_LEN {
            return Err(KeyError::Malformed);
        }
        let (t, rest) = key.split_once('-').ok_or(KeyError::Malformed)?;
        // The nonce's width: 12 digits, or an earlier release's 6 (the lengths of the two
        // forms differ modulo the 10 digits of a URL's number).
        let width = [NONCE_DIGITS, OLD_NONCE_DIGITS]
            .into_iter()
            .find(|w| rest.len() >= w + MAC_DIGITS && (rest.len() - w).is_multiple_of(MAC_DIGITS));
        let Some(width) = width else {
            return Err(KeyError::Malformed);
        };
        if t.len() < 10 || !t.bytes().chain(rest.bytes()).all(|b| b.is_ascii_digit()) {
            return Err(KeyError::Malformed);
        }
        let issued: i64 = t.parse().map_err(|_| KeyError::Malformed)?;
        if issued > now + CLOCK_SLACK_SECS || now - issued > KEY_LIFETIME_SECS {
            return Err(KeyError::Expired);
        }
        // An earlier release's nonce went into the MAC as a number (`42`), a nonce of
        // now as written (`000000000042`).
        let written = &rest[..width];
        let nonce = if width == OLD_NONCE_DIGITS {
            written
                .parse::<u32>()
                .map_err(|_| KeyError::Malformed)?
                .to_string()
        } else {
            written.to_string()
        };
        // The resolver may send the URL with its %-escapes decoded once more or not
        // (Examples 8.9 and 10.2 differ): accept either reading.
        let readings = [url.to_vec(), canonical_url(url)];
        let nonce = nonce.as_str();
        let macs: Vec<(usize, String)> = items
            .iter()
            .enumerate()
            .flat_map(|(i, item)| {
                readings
                    .iter()
                    .map(move |u| (i, self.mac_digits(issued, nonce, item, u)))
            })
            .collect();
        let granted = rest.as_bytes()[width..]
            .chunks(MAC_DIGITS)
            .find_map(|chunk| macs.iter().find(|(_, m)| m.as_bytes() == chunk));
        match granted {
            // The key as it would have been issued for this url alone: a key padded with
            // more digit groups, with its groups reordered or with its time written with
            // leading zeros still checks out, and must not count as another key.
            Some((item, mac)) => Ok(IssuedKey {
                issued,
                item: *item,
                canonical: format!("{issued:010}-{written}{mac}"),
            }),
            None => Err(KeyError::NotIssuedForUrl),
        }
    }

    fn mac_digits(&self, t: i64, nonce: &str, item: &str, url: &[u8]) -> String {
        let mut mac = self.keyed.clone();
        mac.update(format!("{t}|{nonce}|{item}|").as_bytes());
        mac.update(url);
        let bytes = mac.finalize().into_bytes();
        let n = u64::from_be_bytes(bytes[..8].try_into().expect("32-byte digest"));
        format!("{:0MAC_DIGITS$}", n % 10u64.pow(MAC_DIGITS as u32))
    }
}

/// A key's nonce: [`NONCE_DIGITS`] random digits, uniform, from one `getrandom` system
/// call. (`rand`'s thread-local generator would first seed itself from the system, with a
/// probe call of its own, and expand the seed: a fifth of a CGI hit's instructions; one
/// CGI run draws one nonce.)
fn nonce() -> u64 {
    const RANGE: u64 = 10u64.pow(NONCE_DIGITS as u32);
    // The largest multiple of RANGE a u64 holds: below it, `x % RANGE` is uniform.
    const LIMIT: u64 = u64::MAX - u64::MAX % RANGE;
    // Almost never more than one draw (a 1-in-10^7 chance each), but bounded.
    for _ in 0..8 {
        let mut bytes = [0u8; 8];
        match rustix::rand::getrandom(&mut bytes, rustix::rand::GetRandomFlags::empty()) {
            Ok(filled) if filled == bytes.len() => {}
            // No getrandom(2) (or a short read): rand finds another source.
            _ => break,
        }
        let x = u64::from_ne_bytes(bytes);
        if x < LIMIT {
            return x % RANGE;
        }
    }
    rand::random_range(0..RANGE)
}

/// A URL with its %-escapes decoded: the form both sides of a key agree on.
fn canonical_url(url: &[u8]) -> Vec<u8> {
    percent_encoding::percent_decode(url).collect()
}

fn read_secret(path: &Path) -> std::io::Result<[u8; 32]> {
    use std::io::Read;
    // At most a little more than the 64 digits and a newline, through `take` (no `stat`
    // for a size hint, and a huge file is not read whole).
    let mut text = String::with_capacity(128);
    std::fs::File::open(path)?
        .take(128)
        .read_to_string(&mut text)?;
    parse_hex32(text.trim())
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, "not 64 hex digits"))
}

fn parse_hex32(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// Writes a new secret atomically, kept if another process wrote one first (serve's
/// threads may all make one at once): then that one is used. It is var/'s owner's, the
/// user the service runs as, whoever makes it (see [`crate::var_owner`]).
fn create_secret(path: &Path) -> std::io::Result<[u8; 32]> {
    use std::os::fd::AsFd;
    let var = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = crate::var_owner::make_and_open_var(var)?;
    let owner = crate::var_owner::owner_for_new(dir.as_fd(), var)?;
    let secret: [u8; 32] = rand::random();
    let mut hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    hex.push('\n');
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("urlkey.secret");
    match ::ibi::atomic::create_owned_at(dir.as_fd(), name, hex.as_bytes(), 0o600, owner) {
        Ok(()) => Ok(secret),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read_secret(path),
        Err(e) => Err(e),
    }
}

/// A key that checked out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedKey {
    /// POSIX second of issue.
    pub issued: i64,
    /// Which of the items given to `verify` the key was issued for.
    pub item: usize,
    /// The key in the one spelling that counts (time of 10 digits, nonce, the digits for
    /// this url only): what the access log records and counts once.
    pub canonical: String,
}

/// Why a key does not count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyError {
    Malformed,
    Expired,
    NotIssuedForUrl,
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KeyError::Malformed => "urlkey does not follow rule chave",
            KeyError::Expired => "urlkey has expired",
            KeyError::NotIssuedForUrl => {
                "urlkey was not issued by this Archive for that url and item"
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_426_203_276;
    const A: &str = "a.b/c/2009/01.02.03.04";
    const B: &str = "a.b/c/2009/01.02.03.05";

    fn keys() -> UrlKeys {
        UrlKeys::from_secret([7; 32])
    }

    #[test]
    fn keys_follow_rule_chave_and_differ_each_time() {
        let k = keys();
        let a = k.issue(NOW, &[(A, b"http://a/col/x/doc/f.pdf")]);
        let b = k.issue(NOW, &[(A, b"http://a/col/x/doc/f.pdf")]);
        assert_ne!(a, b);
        let (t, n) = a.split_once('-').unwrap();
        assert_eq!(t, "1426203276");
        assert_eq!(n.len(), 22);
        assert!(n.bytes().all(|c| c.is_ascii_digit()));
    }

    #[test]
    fn a_key_counts_only_for_its_urls_and_their_items() {
        let k = keys();
        let key = k.issue(
            NOW,
            &[
                (A, b"http://a/doc/Relat%f3rio%20Final.pdf"),
                (B, b"http://a/doc/b.pdf"),
            ],
        );
        let ok = |items: &[&str], url: &[u8]| k.verify(&key, items, url, NOW + 5).map(|i| i.item);
        assert_eq!(ok(&[A], b"http://a/doc/Relat\xf3rio Final.pdf"), Ok(0));
        assert_eq!(ok(&[A], b"http://a/doc/Relat%f3rio%20Final.pdf"), Ok(0));
        assert_eq!(ok(&[A, B], b"http://a/doc/b.pdf"), Ok(1));
        // The url of item B does not credit item A, nor A's url item B.
        assert_eq!(
            ok(&[A], b"http://a/doc/b.pdf"),
            Err(KeyError::NotIssuedForUrl)
        );
        assert_eq!(
            ok(&[B], b"http://a/doc/Relat%f3rio%20Final.pdf"),
            Err(KeyError::NotIssuedForUrl)
        );
        assert_eq!(
            ok(&[A, B], b"http://a/doc/c.pdf"),
            Err(KeyError::NotIssuedForUrl)
        );
        let other = UrlKeys::from_secret([8; 32]);
        assert_eq!(
            other.verify(&key, &[B], b"http://a/doc/b.pdf", NOW),
            Err(KeyError::NotIssuedForUrl)
        );
        let long = format!("{key}{}", "0".repeat(MAX_KEY_LEN));
        assert_eq!(
            k.verify(&long, &[B], b"http://a/doc/b.pdf", NOW),
            Err(KeyError::Malformed)
        );
    }

    #[test]
    fn nonces_are_twelve_digits_and_differ() {
        let drawn: Vec<u64> = (0..64).map(|_| nonce()).collect();
        assert!(drawn.iter().all(|n| *n < 1_000_000_000_000), "{drawn:?}");
        // 64 draws of 10^12 values, all the same: a chance of 10^-756.
        assert!(drawn.iter().any(|n| *n != drawn[0]), "{drawn:?}");
        // Keys of one second for one URL: 20,000 of them, none twice (with 6 digits,
        // 200 shared on average).
        let k = keys();
        let issued: std::collections::HashSet<String> = (0..20_000)
            .map(|_| k.issue(NOW, &[(A, b"http://a/col/x/doc/f.pdf")]))
            .collect();
        assert_eq!(issued.len(), 20_000);
    }

    #[test]
    fn a_key_is_one_key_in_the_width_of_its_nonce() {
        let k = keys();
        let url = b"http://a/col/x/doc/f.pdf";
        let key = k.issue(NOW, &[(A, url)]);
        let (t, rest) = key.split_once('-').unwrap();
        assert_eq!((t.len(), rest.len()), (10, 12 + 10));
        let checked = k.verify(&key, &[A], url, NOW + 60).unwrap();
        assert_eq!(checked.canonical, key);
        // Its nonce cut to an earlier release's 6 digits, when it begins with six zeros,
        // or an earlier key's nonce padded to 12: no longer a key.
        let old = "1426203276-0000421942835635";
        let padded = format!("1426203276-000000{}", &old[11..]);
        assert_eq!(
            k.verify(&padded, &[A], url, NOW + 60),
            Err(KeyError::NotIssuedForUrl)
        );
        let nonce = format!("{:012}", 42);
        let new = format!(
            "{NOW:010}-{nonce}{}",
            k.mac_digits(NOW, &nonce, A, url.as_slice())
        );
        assert!(k.verify(&new, &[A], url, NOW + 60).is_ok());
        let cut = format!("{NOW:010}-000042{}", &new[23..]);
        assert_eq!(
            k.verify(&cut, &[A], url, NOW + 60),
            Err(KeyError::NotIssuedForUrl)
        );
    }

    #[test]
    fn keys_issued_by_earlier_releases_still_check_out() {
        // HMAC-SHA256(secret, "1426203276|42|<A>|http://a/col/x/doc/f.pdf") begins with
        // 97 39 3b de e6 ef 21 b3: as a big-endian u64, modulo 10^10, 1942835635 (worked out apart,
        // with Python's hmac module). The nonce 42 is written 000042 in the key.
        let k = keys();
        let key = "1426203276-0000421942835635";
        assert_eq!(
            k.verify(key, &[B, A], b"http://a/col/x/doc/f.pdf", NOW + 60),
            Ok(IssuedKey {
                issued: NOW,
                item: 1,
                canonical: key.to_string(),
            })
        );
        assert_eq!(
            k.verify(key, &[B], b"http://a/col/x/doc/f.pdf", NOW + 60),
            Err(KeyError::NotIssuedForUrl)
        );
    }

    #[test]
    fn forged_malformed_and_old_keys_are_refused() {
        let k = keys();
        assert_eq!(
            k.verify("1426203276-5985125171467764", &[A], b"http://a", NOW),
            Err(KeyError::NotIssuedForUrl)
        );
        assert_eq!(
            k.verify("1426203276", &[A], b"http://a", NOW),
            Err(KeyError::Malformed)
        );
        assert_eq!(
            k.verify("14262032-59851251714677", &[A], b"http://a", NOW),
            Err(KeyError::Malformed)
        );
        assert_eq!(
            k.verify("1426203276-59851251714677x4", &[A], b"http://a", NOW),
            Err(KeyError::Malformed)
        );
        let key = k.issue(NOW, &[(A, b"http://a")]);
        assert_eq!(
            k.verify(&key, &[A], b"http://a", NOW + KEY_LIFETIME_SECS + 1),
            Err(KeyError::Expired)
        );
        assert_eq!(
            k.verify(&key, &[A], b"http://a", NOW - 3600),
            Err(KeyError::Expired)
        );
    }

    #[test]
    fn the_secret_is_created_once_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let var = dir.path().join("var");
        let (a, w) = UrlKeys::load_or_create(&var);
        assert!(w.is_none());
        let key = a.issue(NOW, &[(A, b"http://x")]);
        let (b, w) = UrlKeys::load_or_create(&var);
        assert!(w.is_none());
        assert!(b.verify(&key, &[A], b"http://x", NOW).is_ok());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(secret_path(&var))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
}
