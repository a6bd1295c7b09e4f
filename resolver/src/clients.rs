//! Per-client bounds: what one client may hold of the resolver at once, so that it can
//! neither amplify itself into every Archive nor starve other readers.
//!
//! A client is its network — an IPv4 /24 or an IPv6 /64, the reader's address after
//! trusted proxies ([`crate::router::client_ips`]) — since one machine has many addresses
//! of its network at hand. Each network may have `per_client_resolutions` resolutions
//! under way, `per_client_connections` connections open (those of a trusted proxy are not
//! counted: they carry many readers), and spend `per_client_misses` resolutions a second
//! that ask every Archive (a token bucket holding [`MISS_BURST_SECONDS`] of them, so a
//! page of links is not refused). Beyond, the request is answered `429` with the seconds
//! to wait in `Retry-After`.
//!
//! At most [`MAX_TRACKED`] networks are followed at once; past them (only a client with
//! that many networks gets there) every new network shares the bounds of one more,
//! [`Network::Others`], until some are forgotten.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::config::{Limits, MISS_BURST_SECONDS};
use crate::labels::Limit;

/// Networks followed at once, at most.
pub const MAX_TRACKED: usize = 100_000;

/// A client network: the first 24 bits of an IPv4 address, the first 64 of an IPv6 one
/// (an IPv4-mapped IPv6 address is its IPv4 address).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Network {
    V4([u8; 3]),
    V6([u16; 4]),
    /// Every network met while [`MAX_TRACKED`] others are followed.
    Others,
}

impl Network {
    pub fn of(ip: IpAddr) -> Network {
        match ip.to_canonical() {
            IpAddr::V4(v4) => {
                let o = v4.octets();
                Network::V4([o[0], o[1], o[2]])
            }
            IpAddr::V6(v6) => {
                let s = v6.segments();
                Network::V6([s[0], s[1], s[2], s[3]])
            }
        }
    }
}

impl std::fmt::Display for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Network::V4([a, b, c]) => write!(f, "{a}.{b}.{c}.0/24"),
            Network::V6(s) => {
                let ip = std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0);
                write!(f, "{ip}/64")
            }
            Network::Others => f.write_str("the networks beyond those followed"),
        }
    }
}

/// What one bound refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused {
    /// Which bound.
    pub limit: Limit,
    /// Seconds before trying again is worth it.
    pub retry_after: u64,
}

/// What a network holds now.
struct Client {
    resolutions: usize,
    connections: usize,
    /// Misses it may still spend.
    tokens: f64,
    refilled: Instant,
}

/// Every client network's share.
pub struct ClientBook {
    resolutions: usize,
    connections: usize,
    misses_per_second: f64,
    burst: f64,
    clients: Mutex<HashMap<Network, Client>>,
}

/// A resolution or a connection counted for its network until dropped.
pub struct Held {
    book: Arc<ClientBook>,
    network: Network,
    kind: Kind,
}

#[derive(Clone, Copy)]
enum Kind {
    Resolution,
    Connection,
}

impl ClientBook {
    pub fn new(limits: &Limits) -> Arc<ClientBook> {
        let rate = f64::from(limits.per_client_misses);
        Arc::new(ClientBook {
            resolutions: limits.per_client_resolutions,
            connections: limits.per_client_connections,
            misses_per_second: rate,
            burst: rate * f64::from(MISS_BURST_SECONDS),
            clients: Mutex::new(HashMap::new()),
        })
    }

    /// A resolution for the client at `ip`, if its network has fewer than
    /// `per_client_resolutions` under way.
    pub fn resolution(self: &Arc<Self>, ip: IpAddr) -> Result<Held, Refused> {
        self.hold(ip, Kind::Resolution, Instant::now())
    }

    /// A connection from `ip`, if its network has fewer than `per_client_connections`.
    pub fn connection(self: &Arc<Self>, ip: IpAddr) -> Result<Held, Refused> {
        self.hold(ip, Kind::Connection, Instant::now())
    }

    /// Spends one of the misses of `ip`'s network.
    pub fn miss(&self, ip: IpAddr) -> Result<(), Refused> {
        self.miss_at(ip, Instant::now())
    }

    fn miss_at(&self, ip: IpAddr, now: Instant) -> Result<(), Refused> {
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        let (_, client) = self.client(&mut clients, Network::of(ip), now);
        self.refill(client, now);
        if client.tokens >= 1.0 {
            client.tokens -= 1.0;
            return Ok(());
        }
        let wait = (1.0 - client.tokens) / self.misses_per_second;
        Err(Refused {
            limit: Limit::Misses,
            retry_after: (wait.ceil() as u64).max(1),
        })
    }

    fn hold(self: &Arc<Self>, ip: IpAddr, kind: Kind, now: Instant) -> Result<Held, Refused> {
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        let (network, client) = self.client(&mut clients, Network::of(ip), now);
        let (count, most, limit) = match kind {
            Kind::Resolution => (
                &mut client.resolutions,
                self.resolutions,
                Limit::Resolutions,
            ),
            Kind::Connection => (
                &mut client.connections,
                self.connections,
                Limit::Connections,
            ),
        };
        if *count >= most {
            return Err(Refused {
                limit,
                retry_after: 1,
            });
        }
        *count += 1;
        Ok(Held {
            book: self.clone(),
            network,
            kind,
        })
    }

    /// `network`'s entry, made when it has none, or that of [`Network::Others`] when no
    /// more can be followed; and the network it is of.
    fn client<'a>(
        &self,
        clients: &'a mut HashMap<Network, Client>,
        network: Network,
        now: Instant,
    ) -> (Network, &'a mut Client) {
        let mut network = network;
        if !clients.contains_key(&network) && clients.len() >= MAX_TRACKED {
            self.sweep_locked(clients, now);
            if clients.len() >= MAX_TRACKED {
                network = Network::Others;
            }
        }
        let client = clients.entry(network).or_insert_with(|| Client {
            resolutions: 0,
            connections: 0,
            tokens: self.burst,
            refilled: now,
        });
        (network, client)
    }

    fn refill(&self, client: &mut Client, now: Instant) {
        let earned = now.duration_since(client.refilled).as_secs_f64() * self.misses_per_second;
        client.tokens = (client.tokens + earned).min(self.burst);
        client.refilled = now;
    }

    /// Forgets the networks that hold nothing and have all their misses back.
    pub fn sweep(&self) {
        self.sweep_at(Instant::now());
    }

    fn sweep_at(&self, now: Instant) {
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        self.sweep_locked(&mut clients, now);
    }

    fn sweep_locked(&self, clients: &mut HashMap<Network, Client>, now: Instant) {
        clients.retain(|_, c| {
            self.refill(c, now);
            c.resolutions > 0 || c.connections > 0 || c.tokens < self.burst
        });
    }

    /// Networks followed now (what the tests count).
    #[cfg(test)]
    fn tracked(&self) -> usize {
        self.clients.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut clients = self.book.clients.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = clients.get_mut(&self.network) {
            match self.kind {
                Kind::Resolution => c.resolutions = c.resolutions.saturating_sub(1),
                Kind::Connection => c.connections = c.connections.saturating_sub(1),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn book(resolutions: usize, misses: u32, connections: usize) -> Arc<ClientBook> {
        let mut limits = crate::config::Config::parse(
            "serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"http://r\"\n",
            std::path::Path::new("."),
        )
        .unwrap()
        .limits;
        limits.per_client_resolutions = resolutions;
        limits.per_client_misses = misses;
        limits.per_client_connections = connections;
        ClientBook::new(&limits)
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_client_is_its_v4_slash_24_or_v6_slash_64() {
        assert_eq!(
            Network::of(ip("150.163.68.1")),
            Network::of(ip("150.163.68.254"))
        );
        assert_ne!(
            Network::of(ip("150.163.68.1")),
            Network::of(ip("150.163.69.1"))
        );
        assert_eq!(
            Network::of(ip("::ffff:150.163.68.9")),
            Network::of(ip("150.163.68.1"))
        );
        assert_eq!(
            Network::of(ip("2001:db8:1:2::1")),
            Network::of(ip("2001:db8:1:2:ffff::9"))
        );
        assert_ne!(
            Network::of(ip("2001:db8:1:2::1")),
            Network::of(ip("2001:db8:1:3::1"))
        );
        assert_eq!(
            Network::of(ip("150.163.68.1")).to_string(),
            "150.163.68.0/24"
        );
        assert_eq!(
            Network::of(ip("2001:db8:1:2::1")).to_string(),
            "2001:db8:1:2::/64"
        );
    }

    #[test]
    fn resolutions_and_connections_are_held_per_network_until_dropped() {
        let b = book(2, 20, 1);
        let one = b.resolution(ip("10.0.0.1")).unwrap();
        let _two = b.resolution(ip("10.0.0.2")).unwrap();
        assert_eq!(
            b.resolution(ip("10.0.0.3")).err(),
            Some(Refused {
                limit: Limit::Resolutions,
                retry_after: 1
            })
        );
        // Another network is not refused, and connections are counted apart.
        let _other = b.resolution(ip("10.0.1.1")).unwrap();
        let _conn = b.connection(ip("10.0.0.1")).unwrap();
        assert_eq!(
            b.connection(ip("10.0.0.9")).err().map(|r| r.limit),
            Some(Limit::Connections)
        );
        drop(one);
        assert!(b.resolution(ip("10.0.0.3")).is_ok());
    }

    #[test]
    fn misses_are_a_bucket_of_five_seconds_refilled_at_the_rate() {
        let b = book(64, 2, 256);
        let t = Instant::now();
        // 2 a second, 10 at once.
        for n in 0..10 {
            assert_eq!(b.miss_at(ip("10.0.0.1"), t), Ok(()), "miss {n}");
        }
        assert_eq!(
            b.miss_at(ip("10.0.0.1"), t),
            Err(Refused {
                limit: Limit::Misses,
                retry_after: 1
            })
        );
        // Half a second gives one back.
        assert_eq!(
            b.miss_at(ip("10.0.0.1"), t + Duration::from_millis(500)),
            Ok(())
        );
        assert!(b
            .miss_at(ip("10.0.0.1"), t + Duration::from_millis(500))
            .is_err());
        // Another network has its own.
        assert_eq!(b.miss_at(ip("10.0.1.1"), t), Ok(()));
    }

    #[test]
    fn beyond_the_networks_followed_new_ones_share_one_bound() {
        let b = book(1, 20, 256);
        let v6 = |i: usize| {
            IpAddr::from(std::net::Ipv6Addr::new(
                0x2001,
                0xdb8,
                (i >> 16) as u16,
                i as u16,
                0,
                0,
                0,
                1,
            ))
        };
        // As many networks as are followed, each holding a resolution (none forgotten).
        let held: Vec<Held> = (0..MAX_TRACKED)
            .map(|i| b.resolution(v6(i)).unwrap())
            .collect();
        assert_eq!(b.tracked(), MAX_TRACKED);
        // The next new network is followed as the others' one; a second one shares it.
        let first = b.resolution(v6(MAX_TRACKED)).unwrap();
        assert_eq!(
            b.resolution(v6(MAX_TRACKED + 1)).err().map(|r| r.limit),
            Some(Limit::Resolutions)
        );
        drop(first);
        assert!(b.resolution(v6(MAX_TRACKED + 1)).is_ok());
        drop(held);
    }

    #[test]
    fn networks_that_hold_nothing_and_owe_nothing_are_forgotten() {
        let b = book(64, 20, 256);
        let t = Instant::now();
        let held = b.hold(ip("10.0.0.1"), Kind::Resolution, t).unwrap();
        b.miss_at(ip("10.0.2.1"), t).unwrap();
        drop(b.hold(ip("10.0.3.1"), Kind::Connection, t).unwrap());
        assert_eq!(b.tracked(), 3);
        // 10.0.3.0/24 holds nothing and owes nothing.
        b.sweep_at(t);
        assert_eq!(b.tracked(), 2);
        // 10.0.2.0/24 has its miss back 50 ms later (20 a second).
        b.sweep_at(t + Duration::from_millis(50));
        assert_eq!(b.tracked(), 1);
        drop(held);
        b.sweep_at(t + Duration::from_millis(50));
        assert_eq!(b.tracked(), 0);
    }
}
