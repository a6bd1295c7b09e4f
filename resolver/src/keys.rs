//! Registration-key checks: what a check found ([`KeyCheck`]), the slowdown of wrong keys
//! ([`Slowdown`]), one check at a time per client network ([`KeyTurn`]) and the bound on
//! the argon2id work under way ([`KEY_CHECKS`]). [`crate::state::AppState::check_key`]
//! puts them together with the registry's stored hash.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::clients::Network;

/// What a registration key's check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyCheck {
    Right,
    /// Wrong, or an unregistered Archive; after waiting this long.
    Wrong {
        waited: Duration,
    },
    /// Not checked: a check from the same client network is under way.
    Busy {
        retry_after: u64,
    },
    /// Not checked: the registry cannot be reached (PostgreSQL down, or failing over).
    Unavailable {
        reason: String,
    },
}

/// Key checks under way at once (argon2id works in 19 MiB per check).
pub const KEY_CHECKS: usize = 2;
/// Key checks that may wait for one of [`KEY_CHECKS`] at once; beyond, 429.
pub const MAX_KEY_CHECKS_WAITING: usize = 64;

/// A client network's turn to have a key checked, until dropped.
pub struct KeyTurn {
    checking: Arc<Mutex<HashSet<Network>>>,
    network: Network,
}

impl KeyTurn {
    /// The turn of `network`, unless one of its checks is under way.
    pub fn take(checking: &Arc<Mutex<HashSet<Network>>>, network: Network) -> Option<KeyTurn> {
        let fresh = checking
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(network);
        // Made only when taken: a turn dropped gives its network's place back.
        fresh.then(|| KeyTurn {
            checking: checking.clone(),
            network,
        })
    }
}

impl Drop for KeyTurn {
    fn drop(&mut self) {
        let mut set = self.checking.lock().unwrap_or_else(|p| p.into_inner());
        set.remove(&self.network);
    }
}

/// Wrong keys are answered later and later: the next check of a key from a client
/// network (IPv4 /24, IPv6 /64) that gave wrong ones waits 250 ms doubled at each
/// failure, up to 8 s; so does the next check of an Archive's key that others tried
/// (except from a network that gave its right key before), so that guesses spread over
/// many networks slow down too. Forgotten 15 minutes after the last failure; a right
/// key clears its network's and its Archive's count. The wait is taken before the check
/// and holds nothing shared (see [`crate::state::AppState::check_key`]).
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
}
