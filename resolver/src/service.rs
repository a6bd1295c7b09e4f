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

use ibi::pairs::{PairList, Value};
use ibi::query::Query;
use ibi::Ibi;

use crate::client::{check_hostport, literal_ip, Confirmation};
use crate::clients::Network;
use crate::registry::{self, Inclusion};
use crate::server::{AppState, KeyCheck};

/// A service answer: status and pair list, and what the log line says of it.
pub struct ServiceAnswer {
    pub status: u16,
    pub pairs: PairList,
    pub note: String,
    /// Seconds for a `Retry-After`.
    pub retry_after: Option<u64>,
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
        retry_after: None,
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
pub fn identity(state: &AppState) -> ServiceAnswer {
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
        retry_after: None,
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
    let id = req.serviceibi.key();
    match state.check_key(&req.serviceibi, req.key, client).await {
        KeyCheck::Right => {}
        KeyCheck::Wrong { waited } => {
            return refused(&format!(
                "{id}: refused (unregistered or wrong key) after waiting {} ms",
                waited.as_millis()
            ))
        }
        KeyCheck::Busy { retry_after } => {
            let mut answer = error(
                429,
                &[
                    "a", "key", "check", "from", "your", "network", "is", "under", "way",
                ],
                format!("{id}: not checked, another key check of the network under way"),
            );
            answer.retry_after = Some(retry_after);
            return answer;
        }
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
                    retry_after: None,
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
    if state.is_own_address(req.address).await {
        return error(
            403,
            &["archiveaddress", "is", "this", "resolver"],
            format!("{id}: {} is this resolver's own address", req.address),
        );
    }
    // Figure 7.1, message 3: "Solicitar confirmação".
    let confirmation = state
        .engine
        .client
        .confirm(
            req.address,
            req.serviceibi.as_str(),
            state.config.archives.timeout,
        )
        .await;
    if confirmation == Confirmation::AsResolver {
        // Asking it as an Archive would send every resolution round to it and back.
        return error(
            403,
            &["archiveaddress", "answers", "as", "a", "resolver"],
            format!("{id}: {} answers as a resolver", req.address),
        );
    }
    let confirmed = confirmation == Confirmation::Yes;
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
                retry_after: None,
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

/// Wrong keys are answered later and later: the next check of a key from a client
/// network (IPv4 /24, IPv6 /64) that gave wrong ones waits 250 ms doubled at each
/// failure, up to 8 s; so does the next check of an Archive's key that others tried
/// (except from a network that gave its right key before), so that guesses spread over
/// many networks slow down too. Forgotten 15 minutes after the last failure; a right
/// key clears its network's and its Archive's count. The wait is taken before the check
/// and holds nothing shared (see [`crate::server::AppState::check_key`]).
pub struct Slowdown {
    networks: HashMap<Network, Failures>,
    archives: HashMap<String, Failures>,
    /// The networks that gave each Archive's right key (a few each).
    trusted: HashMap<String, Vec<Network>>,
}

#[derive(Clone, Copy)]
struct Failures {
    count: u32,
    last: Instant,
}

/// Networks and Archives remembered at most (the oldest are forgotten first when full).
const MAX_REMEMBERED: usize = 10_000;
const FORGET_AFTER: Duration = Duration::from_secs(15 * 60);
/// Networks remembered as trusted per Archive.
const TRUSTED_PER_ARCHIVE: usize = 4;

/// The wait after `f`, at `now`.
fn penalty(f: Option<&Failures>, now: Instant) -> Duration {
    match f {
        Some(f) if f.count > 0 && now.duration_since(f.last) < FORGET_AFTER => {
            Duration::from_millis(250 << (f.count - 1).min(5))
        }
        _ => Duration::ZERO,
    }
}

/// Counts one more failure for `key` in `map`, bounded.
fn count<K: std::hash::Hash + Eq + Clone>(map: &mut HashMap<K, Failures>, key: &K, now: Instant) {
    if !map.contains_key(key) && map.len() >= MAX_REMEMBERED {
        map.retain(|_, f| now.duration_since(f.last) < FORGET_AFTER);
        if map.len() >= MAX_REMEMBERED {
            if let Some(oldest) = map
                .iter()
                .min_by_key(|(_, f)| f.last)
                .map(|(k, _)| k.clone())
            {
                map.remove(&oldest);
            }
        }
    }
    let f = map.entry(key.clone()).or_insert(Failures {
        count: 0,
        last: now,
    });
    if now.duration_since(f.last) >= FORGET_AFTER {
        f.count = 0;
    }
    f.count = f.count.saturating_add(1);
    f.last = now;
}

impl Slowdown {
    pub fn new() -> Slowdown {
        Slowdown {
            networks: HashMap::new(),
            archives: HashMap::new(),
            trusted: HashMap::new(),
        }
    }

    /// How long the next check of `archive`'s key from `network` waits.
    pub fn wait(&self, network: Network, archive: &str, now: Instant) -> Duration {
        let of_network = penalty(self.networks.get(&network), now);
        let trusted = self
            .trusted
            .get(archive)
            .is_some_and(|t| t.contains(&network));
        let of_archive = if trusted {
            Duration::ZERO
        } else {
            penalty(self.archives.get(archive), now)
        };
        of_network.max(of_archive)
    }

    /// A wrong key (or an unregistered Archive) from `network`.
    pub fn failed(&mut self, network: Network, archive: &str, now: Instant) {
        count(&mut self.networks, &network, now);
        count(&mut self.archives, &archive.to_string(), now);
    }

    /// `archive`'s right key from `network`.
    pub fn succeeded(&mut self, network: Network, archive: &str) {
        self.networks.remove(&network);
        self.archives.remove(archive);
        if !self.trusted.contains_key(archive) && self.trusted.len() >= MAX_REMEMBERED {
            self.trusted.clear();
        }
        let list = self.trusted.entry(archive.to_string()).or_default();
        if !list.contains(&network) {
            if list.len() == TRUSTED_PER_ARCHIVE {
                list.remove(0);
            }
            list.push(network);
        }
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

    fn net(s: &str) -> Network {
        Network::of(s.parse().unwrap())
    }

    const A: &str = "urlib.net/www/2012/01.01.01.01";
    const B: &str = "urlib.net/www/2012/01.01.01.02";

    #[test]
    fn wrong_keys_from_one_network_wait_longer_and_longer() {
        let mut s = Slowdown::new();
        let t = Instant::now();
        // Each failure from 192.0.2.0/24, whatever address of it, for B: the next check
        // from that network waits longer.
        let waits: Vec<u128> = (1..=8)
            .map(|i| {
                let w = s.wait(net(&format!("192.0.2.{i}")), B, t).as_millis();
                s.failed(net(&format!("192.0.2.{i}")), B, t);
                w
            })
            .collect();
        assert_eq!(waits, [0, 250, 500, 1000, 2000, 4000, 8000, 8000]);
        s.succeeded(net("192.0.2.1"), B);
        assert_eq!(s.wait(net("192.0.2.9"), B, t).as_millis(), 0);
        s.failed(net("192.0.2.1"), B, t);
        assert_eq!(s.wait(net("192.0.2.1"), B, t).as_millis(), 250);
        assert_eq!(s.wait(net("192.0.2.1"), B, t + FORGET_AFTER).as_millis(), 0);
    }

    #[test]
    fn wrong_keys_for_one_archive_slow_every_network_but_its_own() {
        let mut s = Slowdown::new();
        let t = Instant::now();
        s.succeeded(net("150.163.0.1"), A);
        // Guesses of A's key from three networks.
        for n in ["198.51.100.1", "203.0.113.1", "192.0.2.1"] {
            s.failed(net(n), A, t);
        }
        // A fourth network waits for A (A's third failure: 1 s) but not for B...
        assert_eq!(s.wait(net("100.64.0.1"), A, t).as_millis(), 1000);
        assert_eq!(s.wait(net("100.64.0.1"), B, t).as_millis(), 0);
        // ... and A's own network, which gave its right key, does not wait.
        assert_eq!(s.wait(net("150.163.0.9"), A, t).as_millis(), 0);
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
