//! The resolver service at `<publicurl>/<serviceibi>` (§7.2): inclusion and exclusion of
//! Archives with the eight pairs of Table 7.2, the confirmation round trip of Figure 7.1
//! (Example 7.4), and the resolver's identity.
//!
//! A missing or malformed pair answers `400 error {…}` naming the pair (never its value);
//! an unregistered Archive and a wrong key answer the same `403`, after the same argon2
//! work, slowed down further for an address that keeps trying. The key is never logged
//! or echoed.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use ibi_archive::ibi::Ibi;
use ibi_archive::pairs::{PairList, Value};
use ibi_archive::query::Query;

use crate::client::{check_hostport, literal_ip, Confirmation};
use crate::registry::{self, Inclusion};
use crate::server::AppState;

/// A service answer: status and pair list, and what the log line says of it.
pub struct ServiceAnswer {
    pub status: u16,
    pub pairs: PairList,
    pub note: String,
}

fn error(status: u16, words: &[&str], note: impl Into<String>) -> ServiceAnswer {
    let mut pairs = PairList::new();
    pairs.push(
        "error",
        Value::words(words.iter().map(|w| w.as_bytes().to_vec())),
    );
    ServiceAnswer {
        status,
        pairs,
        note: note.into(),
    }
}

/// The 403 of an unregistered Archive or a wrong key: one answer for both.
fn refused(note: &str) -> ServiceAnswer {
    error(
        403,
        &["unknown", "Archive", "or", "wrong", "registration", "key"],
        note,
    )
}

/// Answers a request to the resolver service.
pub async fn answer(state: &AppState, query: Option<&str>, client: IpAddr) -> ServiceAnswer {
    let query = match Query::parse(query.unwrap_or("").as_bytes()) {
        Ok(q) => q,
        Err(e) => return error(400, &["malformed", "query", "string"], e.to_string()),
    };
    match query.get("servicesubject") {
        None => identity(state),
        Some(b"inclusionRequest") => change(state, &query, client, true).await,
        Some(b"exclusionRequest") => change(state, &query, client, false).await,
        Some(_) => error(
            400,
            &["unknown", "servicesubject"],
            "unknown servicesubject",
        ),
    }
}

/// The resolver's identity pairs.
fn identity(state: &AppState) -> ServiceAnswer {
    let ibi = &state.config.serviceibi;
    let form: &[u8] = match ibi {
        Ibi::Rep(_) => b"rep",
        Ibi::Ibip(_) => b"ibip",
    };
    let mut pairs = PairList::new();
    pairs.push(
        "ibi.resolverservice",
        Value::words([form.to_vec(), ibi.as_str().as_bytes().to_vec()]),
    );
    pairs.push_word(
        "resolveraddress",
        state
            .config
            .publicurl
            .split_once("://")
            .map_or("", |(_, a)| a)
            .as_bytes()
            .to_vec(),
    );
    ServiceAnswer {
        status: 200,
        pairs,
        note: "identity".into(),
    }
}

/// The eight pairs of Table 7.2, checked.
struct Request<'a> {
    address: &'a str,
    serviceibi: Ibi,
    ip: IpAddr,
    platformversion: &'a str,
    email: &'a str,
    key: &'a str,
}

fn read_request(query: &Query) -> Result<Request<'_>, ServiceAnswer> {
    let text = |name: &'static str| -> Result<&str, ServiceAnswer> {
        match query.get_str(name) {
            Ok(Some(v)) if !v.is_empty() => Ok(v),
            Ok(_) => Err(error(400, &["missing", name], format!("missing {name}"))),
            Err(_) => Err(error(
                400,
                &["malformed", name],
                format!("malformed {name}"),
            )),
        }
    };
    let malformed =
        |name: &'static str| error(400, &["malformed", name], format!("malformed {name}"));
    let address = text("archiveaddress")?;
    check_hostport(address).map_err(|_| malformed("archiveaddress"))?;
    let serviceibi =
        Ibi::parse(text("archiveserviceibi")?).map_err(|_| malformed("archiveserviceibi"))?;
    let ip: IpAddr = text("archiveip")?
        .parse()
        .map_err(|_| malformed("archiveip"))?;
    if text("archiveprotocol")? != "HTTP" {
        return Err(malformed("archiveprotocol"));
    }
    let platformversion = text("archiveplatformversion")?;
    if platformversion.len() > 128
        || !platformversion
            .bytes()
            .all(|b| b.is_ascii_graphic() || b == b' ')
    {
        return Err(malformed("archiveplatformversion"));
    }
    let email = text("archiveadmemailaddress")?;
    if !is_authority(email) {
        return Err(malformed("archiveadmemailaddress"));
    }
    let key = text("registrationkey")?;
    if !registry::is_registration_key(key) {
        return Err(malformed("registrationkey"));
    }
    Ok(Request {
        address,
        serviceibi,
        ip,
        platformversion,
        email,
        key,
    })
}

/// Rule `authority` of RFC 3986 §3.2 as Table 7.2 uses it for an e-mail address:
/// `userinfo "@" host`, visible ASCII, bounded.
fn is_authority(s: &str) -> bool {
    let Some((user, host)) = s.split_once('@') else {
        return false;
    };
    s.len() <= 254
        && !user.is_empty()
        && !host.contains('@')
        && user
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:%".contains(&b))
        && check_hostport(host).is_ok()
}

async fn change(state: &AppState, query: &Query, client: IpAddr, include: bool) -> ServiceAnswer {
    let req = match read_request(query) {
        Ok(r) => r,
        Err(answer) => return answer,
    };
    let id = registry::ibi_key(&req.serviceibi);
    if !state.check_key(&req.serviceibi, req.key, client).await {
        return refused(&format!("{id}: refused (unregistered or wrong key)"));
    }
    if !include {
        return match state.write(move |r| r.exclude(&req.serviceibi)).await {
            Ok(()) => {
                let mut pairs = PairList::new();
                pairs.push_word("status.archive", b"excluded".to_vec());
                ServiceAnswer {
                    status: 200,
                    pairs,
                    note: format!("{id}: excluded"),
                }
            }
            Err(e) => error(503, &["registry", "unavailable"], format!("{id}: {e}")),
        };
    }
    if let Err(why) = allowed_address(state, req.address).await {
        return error(
            403,
            &[
                "archiveaddress",
                "outside",
                "the",
                "networks",
                "this",
                "resolver",
                "asks",
            ],
            format!("{id}: {why}"),
        );
    }
    // Figure 7.1, message 3: "Solicitar confirmação".
    let confirmed = state
        .engine
        .client
        .confirm(
            req.address,
            req.serviceibi.as_str(),
            state.config.archives.timeout,
        )
        .await
        == Confirmation::Yes;
    let address = req.address.to_string();
    let ip = req.ip.to_string();
    let version = req.platformversion.to_string();
    let email = req.email.to_string();
    let ibi = req.serviceibi.clone();
    let written = state
        .write(move |r| {
            r.include(
                &ibi,
                &Inclusion {
                    address: &address,
                    ip: &ip,
                    platformversion: &version,
                    email: &email,
                    confirmed,
                },
            )
        })
        .await;
    if written.is_ok() && confirmed {
        // It answered: whatever failures were counted against it are over.
        state.engine.health.reset(req.serviceibi.as_str());
    }
    match written {
        Ok(()) => {
            let outcome: &[u8] = if confirmed {
                b"successful"
            } else {
                b"unsuccessful"
            };
            let mut pairs = PairList::new();
            pairs.push_word("status.archive", b"included".to_vec());
            pairs.push_word("status.confirmation", outcome.to_vec());
            ServiceAnswer {
                status: 200,
                pairs,
                note: format!(
                    "{id}: included at {}, confirmation {}",
                    req.address,
                    String::from_utf8_lossy(outcome)
                ),
            }
        }
        Err(e) => error(503, &["registry", "unavailable"], format!("{id}: {e}")),
    }
}

/// Refuses an address whose literal IP, or any address its name resolves to, is outside
/// `[archives].networks`. A name that does not resolve is let through: the Archive is
/// then included without confirmation, and every later contact is checked again.
async fn allowed_address(state: &AppState, address: &str) -> Result<(), String> {
    let policy = state.engine.client.policy();
    if let Some(ip) = literal_ip(address) {
        return if policy.allows(ip) {
            Ok(())
        } else {
            Err(format!("{address} is outside [archives] networks"))
        };
    }
    let with_port = if address.contains(':') {
        address.to_string()
    } else {
        format!("{address}:80")
    };
    let lookup =
        tokio::time::timeout(Duration::from_secs(5), tokio::net::lookup_host(with_port)).await;
    if let Ok(Ok(found)) = lookup {
        for a in found {
            if !policy.allows(a.ip()) {
                return Err(format!(
                    "{address} resolves to {}, outside [archives] networks",
                    a.ip()
                ));
            }
        }
    }
    Ok(())
}

/// Wrong keys from one address are answered later and later: 250 ms doubled at each
/// failure, up to 8 s, forgotten 15 minutes after the last one.
pub struct Slowdown {
    failures: HashMap<IpAddr, (u32, Instant)>,
}

/// Addresses remembered at most (the oldest are forgotten first when full).
const MAX_REMEMBERED: usize = 10_000;
const FORGET_AFTER: Duration = Duration::from_secs(15 * 60);

impl Slowdown {
    pub fn new() -> Slowdown {
        Slowdown {
            failures: HashMap::new(),
        }
    }

    /// Records a failure from `ip`; returns how long to wait before answering.
    pub fn failed(&mut self, ip: IpAddr, now: Instant) -> Duration {
        if self.failures.len() >= MAX_REMEMBERED {
            self.failures
                .retain(|_, (_, last)| now.duration_since(*last) < FORGET_AFTER);
            if self.failures.len() >= MAX_REMEMBERED {
                if let Some(oldest) = self
                    .failures
                    .iter()
                    .min_by_key(|(_, (_, t))| *t)
                    .map(|(ip, _)| *ip)
                {
                    self.failures.remove(&oldest);
                }
            }
        }
        let entry = self.failures.entry(ip).or_insert((0, now));
        if now.duration_since(entry.1) >= FORGET_AFTER {
            entry.0 = 0;
        }
        entry.0 = entry.0.saturating_add(1);
        entry.1 = now;
        let exp = entry.0.saturating_sub(1).min(5);
        Duration::from_millis(250 << exp)
    }

    pub fn succeeded(&mut self, ip: IpAddr) {
        self.failures.remove(&ip);
    }
}

impl Default for Slowdown {
    fn default() -> Slowdown {
        Slowdown::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_keys_wait_longer_and_longer() {
        let mut s = Slowdown::new();
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        let t = Instant::now();
        let waits: Vec<u128> = (0..8).map(|_| s.failed(ip, t).as_millis()).collect();
        assert_eq!(waits, [250, 500, 1000, 2000, 4000, 8000, 8000, 8000]);
        s.succeeded(ip);
        assert_eq!(s.failed(ip, t).as_millis(), 250);
        assert_eq!(s.failed(ip, t + FORGET_AFTER).as_millis(), 250);
    }

    #[test]
    fn e_mail_addresses_as_authority() {
        assert!(is_authority("banon@dpi.inpe.br"));
        assert!(is_authority("archive-admin@example.org"));
        for bad in ["banon", "@x.org", "a@b@c", "a b@c.org", "a@b/c", "a@"] {
            assert!(!is_authority(bad), "{bad}");
        }
    }
}
