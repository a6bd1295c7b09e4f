//! The resolver service at `<publicurl>/<serviceibi>` (§7.2): inclusion and exclusion of
//! Archives with the eight pairs of Table 7.2, the confirmation round trip of Figure 7.1
//! (Example 7.4), and the resolver's identity.
//!
//! A missing or malformed pair answers `400 error {…}` naming the pair (never its value);
//! an unregistered Archive and a wrong key answer the same `403`, after the same argon2
//! work, slowed down further for an address that keeps trying. Requests from one client
//! network are checked in turn, in the order they came; past the bounds of that line, the
//! answer is `429` with the seconds to wait in `Retry-After`. The key is never logged or
//! echoed. An included Archive asking for another address (a move) is refused, `409`,
//! while it still answers at the one recorded; a move made is logged and counted.

use std::net::IpAddr;
use std::time::Duration;

use ibi::pairs::{PairList, Value};
use ibi::query::Query;
use ibi::Ibi;

use crate::client::{literal_ip, Confirmation};
use crate::keys::{Crowd, KeyCheck, KEY_TURN_WAIT, MAX_KEY_CHECKS_IN_LINE, MAX_KEY_CHECKS_WAITING};
use crate::labels::Move;
use crate::registry::Inclusion;
use crate::state::AppState;
use ibi::registration::{Email, HostPort, Key};

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
    HostPort::check(address).map_err(|_| malformed("archiveaddress"))?;
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
    if Email::parse(email).is_err() {
        return Err(malformed("archiveadmemailaddress"));
    }
    let key = text("registrationkey")?;
    if Key::parse(key).is_err() {
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

/// An inclusion request (`include`) or an exclusion request of an Archive (§7.2): read,
/// its key checked, then made, or refused with the answer that says why.
async fn change(state: &AppState, query: &Query, client: IpAddr, include: bool) -> ServiceAnswer {
    let req = match read_request(query) {
        Ok(r) => r,
        Err(answer) => return answer,
    };
    let id = req.serviceibi.key();
    let slowed = match key_checked(state, &req, &id, client).await {
        Ok(slowed) => slowed,
        Err(answer) => return answer,
    };
    if !include {
        return exclude(state, req.serviceibi, &id, &slowed).await;
    }
    if let Err(answer) = may_be_at(state, &req, &id).await {
        return answer;
    }
    if let Err(answer) = no_move_while_answering(state, &req, &id).await {
        return answer;
    }
    included(state, &req, &id, &slowed).await
}

/// The registration key of `req` checked (`id`: its Archive's key, `client`: who asks):
/// what the log line says of the wait for the wrong keys before it, when there was one;
/// else the answer refusing the request.
async fn key_checked(
    state: &AppState,
    req: &Request<'_>,
    id: &str,
    client: IpAddr,
) -> Result<String, ServiceAnswer> {
    let waited = match state.check_key(&req.serviceibi, req.key, client).await {
        KeyCheck::Right { waited } => waited,
        KeyCheck::Wrong { waited } => {
            return Err(refused(&format!(
                "{id}: refused (unregistered or wrong key) after waiting {} ms",
                waited.as_millis()
            )))
        }
        KeyCheck::Busy { crowd, retry_after } => return Err(busy(id, crowd, retry_after)),
        KeyCheck::Unavailable { reason } => return Err(unavailable(id, &reason)),
    };
    // How long the key's check waited for the wrong keys before it, when it did.
    Ok(if waited.is_zero() {
        String::new()
    } else {
        format!(", key checked after waiting {} ms", waited.as_millis())
    })
}

/// The exclusion of the Archive `serviceibi` (`id`), once its key is checked.
async fn exclude(state: &AppState, serviceibi: Ibi, id: &str, slowed: &str) -> ServiceAnswer {
    match state.write(move |r| r.exclude(&serviceibi)).await {
        Ok(()) => {
            let mut pairs = PairList::new();
            pairs.push_word("status.archive", b"excluded".to_vec());
            ServiceAnswer {
                status: 200,
                pairs,
                note: format!("{id}: excluded{slowed}"),
                retry_after: None,
            }
        }
        Err(e) => unavailable(id, &e.to_string()),
    }
}

/// Whether an Archive may be included at the address `req` gives: one of the networks
/// the resolver asks, and not the resolver's own; else the answer refusing it.
async fn may_be_at(state: &AppState, req: &Request<'_>, id: &str) -> Result<(), ServiceAnswer> {
    if let Err(why) = allowed_address(state, req.address).await {
        return Err(error(
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
        ));
    }
    if state.is_own_address(req.address).await {
        return Err(error(
            403,
            &["archiveaddress", "is", "this", "resolver"],
            format!("{id}: {} is this resolver's own address", req.address),
        ));
    }
    Ok(())
}

/// A move: an Archive included at one address asking to be included at another.
/// Whoever holds its key may ask it (a key sent in clear, one shared with another
/// resolver), and its IBIs then lead there: refused while the Archive still answers at
/// the address recorded (counted), and logged and counted when made ([`included`]).
async fn no_move_while_answering(
    state: &AppState,
    req: &Request<'_>,
    id: &str,
) -> Result<(), ServiceAnswer> {
    let place = {
        let ibi = req.serviceibi.clone();
        match state.read(move |r| r.place(&ibi)).await {
            Ok(place) => place,
            Err(e) => return Err(unavailable(id, &e.to_string())),
        }
    };
    let Some(old) = place.as_ref().and_then(|p| p.moving_from(req.address)) else {
        return Ok(());
    };
    let still = state
        .engine
        .client
        .confirm(old, req.serviceibi.as_str(), state.config.archives.timeout)
        .await;
    if still != Confirmation::Yes {
        return Ok(());
    }
    let ibi = req.serviceibi.clone();
    let counted = match state.write(move |r| r.refuse_move(&ibi)).await {
        Ok(()) => String::new(),
        Err(e) => format!(" (not counted in the registry: {e})"),
    };
    state.engine.metrics.archive_move(id, Move::Refused);
    let words = format!(
        "the Archive still answers at its old address {old}: switch it off or exclude it first"
    );
    Err(error(
        409,
        &words.split(' ').collect::<Vec<_>>(),
        format!(
            "{id}: move from {old} to {} refused: the Archive still answers at {old}{counted}",
            req.address
        ),
    ))
}

/// The inclusion of `req`'s Archive (`id`) once it may be made: its confirmation asked
/// (Figure 7.1, message 3: "Solicitar confirmação"), its `archiveip` tried, the
/// registry written, a move counted, and the answer.
async fn included(state: &AppState, req: &Request<'_>, id: &str, slowed: &str) -> ServiceAnswer {
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
    let ip_reached = confirmed && reached_at(state, req.address, &req.serviceibi, req.ip).await;
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
                    ip_reached,
                },
            )
        })
        .await;
    if written.is_ok() && confirmed {
        // It answered: whatever failures were counted against it are over.
        state.engine.health.reset(req.serviceibi.as_str());
    }
    if let Ok(Some(_)) = &written {
        state.engine.metrics.archive_move(id, Move::Moved);
    }
    match written {
        Ok(moved_from) => {
            let moved = moved_from.map_or(String::new(), |from| format!(", moved from {from}"));
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
                    "{id}: included at {}{moved}, confirmation {}{slowed}",
                    req.address,
                    String::from_utf8_lossy(outcome)
                ),
                retry_after: None,
            }
        }
        Err(e) => unavailable(id, &e.to_string()),
    }
}

/// Whether the service of the Archive at `address` answers `confirmation yes` as
/// `serviceibi` at `ip` too, on its address's port: only an `archiveip` the resolver
/// reached makes the Archive the home of the IBIps minted there ([`crate::homes`]).
async fn reached_at(state: &AppState, address: &str, serviceibi: &Ibi, ip: IpAddr) -> bool {
    if literal_ip(address) == Some(ip) {
        return true;
    }
    let port = url::Url::parse(&format!("http://{address}/"))
        .ok()
        .and_then(|u| u.port_or_known_default())
        .unwrap_or(80);
    let at = match ip {
        IpAddr::V4(v4) => format!("{v4}:{port}"),
        IpAddr::V6(v6) => format!("[{v6}]:{port}"),
    };
    state
        .engine
        .client
        .confirm(&at, serviceibi.as_str(), state.config.archives.timeout)
        .await
        == Confirmation::Yes
}

/// The `429` of a key not checked because too many checks wait (`crowd` says which
/// bound), to be asked again after `retry_after` seconds.
fn busy(id: &str, crowd: Crowd, retry_after: u64) -> ServiceAnswer {
    let (words, why): (&[&str], String) = match crowd {
        Crowd::NetworkLine => (
            &[
                "too", "many", "key", "checks", "from", "your", "network", "waiting",
            ],
            format!("{MAX_KEY_CHECKS_IN_LINE} key checks of the network waiting"),
        ),
        Crowd::NetworkTurn => (
            &[
                "the", "key", "checks", "from", "your", "network", "before", "this", "one", "took",
                "too", "long",
            ],
            format!(
                "the network's turn did not come within {} s",
                KEY_TURN_WAIT.as_secs()
            ),
        ),
        Crowd::Everyone => (
            &["too", "many", "key", "checks", "waiting"],
            format!("{MAX_KEY_CHECKS_WAITING} key checks waiting"),
        ),
    };
    let mut answer = error(
        429,
        words,
        format!("{id}: not checked: {why}; Retry-After {retry_after}"),
    );
    answer.retry_after = Some(retry_after);
    answer
}

/// The registry cannot be written now (its database out of reach): `503`, to be asked
/// again after [`REGISTRY_RETRY`] seconds; the reason in the log only.
fn unavailable(id: &str, reason: &str) -> ServiceAnswer {
    let mut answer = error(503, &["registry", "unavailable"], format!("{id}: {reason}"));
    answer.retry_after = Some(REGISTRY_RETRY);
    answer
}

/// When an Archive asks again after the registry was unavailable, in seconds.
const REGISTRY_RETRY: u64 = 5;

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
