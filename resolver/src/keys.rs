//! Registration-key checks: what a check found ([`KeyCheck`]), the slowdown of wrong keys
//! ([`Slowdown`]), the line each client network's checks wait in for their turn, one
//! check under way at a time ([`KeyLines`], [`KeyTurn`]), and the bound on the argon2id
//! work under way ([`KEY_CHECKS`]). [`crate::state::AppState::check_key`] puts them
//! together with the registry's stored hash.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::clients::Network;

/// What a registration key's check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyCheck {
    /// Right; after waiting this long (the slowdown of its network's and Archive's wrong
    /// keys).
    Right { waited: Duration },
    /// Wrong, or an unregistered Archive; after waiting this long.
    Wrong { waited: Duration },
    /// Not checked: a bound of the checks waiting was reached; to be asked again after
    /// `retry_after` seconds.
    Busy { crowd: Crowd, retry_after: u64 },
    /// Not checked: the registry cannot be reached (PostgreSQL down, or failing over).
    Unavailable { reason: String },
}

/// Which bound kept a key from being checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crowd {
    /// [`MAX_KEY_CHECKS_IN_LINE`] checks of the client's network were already waiting.
    NetworkLine,
    /// The network's turn did not come within [`KEY_TURN_WAIT`].
    NetworkTurn,
    /// [`MAX_KEY_CHECKS_WAITING`] checks, of every network, were waiting for a slot.
    Everyone,
}

/// Key checks under way at once (argon2id works in 19 MiB per check).
pub const KEY_CHECKS: usize = 2;
/// Key checks that may wait for one of [`KEY_CHECKS`] at once; beyond, 429.
pub const MAX_KEY_CHECKS_WAITING: usize = 64;
/// Key checks of one client network that may wait in its line behind the one under way;
/// beyond, 429. A machine room of Archives switched on at once after a power cut sends
/// one inclusion request each from one network: they are served in turn.
pub const MAX_KEY_CHECKS_IN_LINE: usize = 32;
/// How long a key check waits at most for its network's turn; then 429. Half the time an
/// Archive gives the resolver to answer (10 s), so that the check, the confirmation and
/// the registry's write fit in the rest.
pub const KEY_TURN_WAIT: Duration = Duration::from_secs(5);
/// The longest `Retry-After` of a key check not made, in seconds: the failures that slow a
/// network down are forgotten by then.
pub const MAX_RETRY_AFTER: u64 = FORGET_AFTER.as_secs();

/// The lines of the client networks that have key checks waiting or under way: each
/// network's in the order they came (a fair semaphore of one), and how long the work of
/// a turn takes, for the `Retry-After` of a check that cannot wait.
pub struct KeyLines {
    lines: Mutex<HashMap<Network, Line>>,
    /// The work of a turn (waiting for a slot, reading the hash, argon2id), averaged
    /// over the last turns, in microseconds.
    work: AtomicU64,
}

/// One network's line.
struct Line {
    turn: Arc<Semaphore>,
    /// The checks in it, the one under way included.
    len: usize,
}

/// Why no turn was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoTurn {
    /// The line was full.
    Full,
    /// The turn did not come in time.
    Late,
}

/// What a turn's work is taken to last before any was measured: argon2id's, with room.
const FIRST_WORK: Duration = Duration::from_millis(100);

impl KeyLines {
    pub fn new() -> Arc<KeyLines> {
        Arc::new(KeyLines {
            lines: Mutex::new(HashMap::new()),
            work: AtomicU64::new(FIRST_WORK.as_micros() as u64),
        })
    }

    /// `network`'s turn, after the checks in its line before it: refused at once when
    /// `bound` checks already wait behind the one under way, and after `within` when the
    /// turn has not come by then. A check that leaves the line, whatever the way (its
    /// turn over, refused, or its request dropped while it waits), gives its place back.
    pub async fn take(
        self: &Arc<Self>,
        network: Network,
        within: Duration,
        bound: usize,
    ) -> Result<KeyTurn, NoTurn> {
        let turn = {
            let mut lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
            let line = lines.entry(network).or_insert_with(|| Line {
                turn: Arc::new(Semaphore::new(1)),
                len: 0,
            });
            if line.len > bound {
                return Err(NoTurn::Full);
            }
            line.len += 1;
            line.turn.clone()
        };
        let place = Place {
            lines: self.clone(),
            network,
        };
        match tokio::time::timeout(within, turn.acquire_owned()).await {
            Ok(Ok(permit)) => Ok(KeyTurn {
                permit,
                place,
                since: Instant::now(),
            }),
            _ => Err(NoTurn::Late),
        }
    }

    /// The checks in `network`'s line, the one under way included.
    pub fn len(&self, network: Network) -> usize {
        let lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        lines.get(&network).map_or(0, |l| l.len)
    }

    /// How long the work of a turn takes, on average.
    pub fn work(&self) -> Duration {
        Duration::from_micros(self.work.load(Ordering::Relaxed))
    }

    /// One more turn's work took `took`: an average over about the last eight.
    fn worked(&self, took: Duration) {
        let took = took.as_micros().min(u64::MAX as u128) as u64;
        let _ = self
            .work
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |mean| {
                Some(mean - mean / 8 + took / 8)
            });
    }
}

/// A place in a network's line, given back when dropped.
struct Place {
    lines: Arc<KeyLines>,
    network: Network,
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut lines = self.lines.lines.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(line) = lines.get_mut(&self.network) {
            line.len -= 1;
            // Nobody holds or waits for its semaphore: the next check starts a new line.
            if line.len == 0 {
                lines.remove(&self.network);
            }
        }
    }
}

/// A client network's turn to have a key checked, until dropped (the next check in its
/// line then has its turn).
pub struct KeyTurn {
    permit: OwnedSemaphorePermit,
    place: Place,
    since: Instant,
}

impl KeyTurn {
    /// The turn's work begins now (what came before, the slowdown's wait, is not work).
    pub fn working(&mut self) {
        self.since = Instant::now();
    }

    /// The turn's work is done: its length counted for the next `Retry-After`s, and the
    /// turn given to the next check in line.
    pub fn done(self) {
        self.place.lines.worked(self.since.elapsed());
        drop(self.permit);
    }
}

/// The `Retry-After` of a check not made, in seconds: the time `ahead` checks take that
/// each last `each`, rounded up; one at least, [`MAX_RETRY_AFTER`] at most.
pub fn retry_after(ahead: usize, each: Duration) -> u64 {
    let seconds = (each.as_secs_f64() * ahead as f64).ceil();
    (seconds.min(MAX_RETRY_AFTER as f64) as u64).max(1)
}

/// Wrong keys are answered later and later: the next check of a key from a client
/// network (IPv4 /24, IPv6 /64) that gave wrong ones waits 250 ms doubled at each
/// failure, up to 8 s; so does the next check of an Archive's key that others tried
/// (except from a network that gave its right key before), so that guesses spread over
/// many networks slow down too. Forgotten 15 minutes after the last failure; a right
/// key clears its network's and its Archive's count. The wait is reckoned once the check
/// has its network's turn, after every check before it in line was counted, and holds
/// that turn but no slot of the argon2id work (see [`crate::state::AppState::check_key`]).
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

    /// Longer than any turn of these tests is held.
    const LONG: Duration = Duration::from_secs(60);

    /// Waits (yielding to the tasks that queue) until `network`'s line holds `len`.
    async fn line_of(lines: &KeyLines, network: Network, len: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while lines.len(network) != len {
            assert!(
                Instant::now() < deadline,
                "the line holds {}, not {len}",
                lines.len(network)
            );
            tokio::task::yield_now().await;
        }
    }

    /// A check that queues in `network`'s line (bounded by `bound`), and once it has its
    /// turn notes `n` in `order` and ends it.
    fn queue(
        lines: &Arc<KeyLines>,
        network: Network,
        bound: usize,
        n: usize,
        order: &Arc<Mutex<Vec<usize>>>,
    ) -> tokio::task::JoinHandle<Result<(), NoTurn>> {
        let (lines, order) = (lines.clone(), order.clone());
        tokio::spawn(async move {
            let turn = lines.take(network, LONG, bound).await?;
            order.lock().unwrap().push(n);
            turn.done();
            Ok(())
        })
    }

    #[tokio::test]
    async fn a_network_s_checks_have_their_turns_in_the_order_they_came() {
        let lines = KeyLines::new();
        let (a, b) = (net("192.0.2.1"), net("198.51.100.1"));
        let first = lines.take(a, LONG, 32).await.unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut waiting = Vec::new();
        for n in 0..5 {
            waiting.push(queue(
                &lines,
                net(&format!("192.0.2.{}", n + 2)),
                32,
                n,
                &order,
            ));
            line_of(&lines, a, n + 2).await;
        }
        // Another network does not wait for this one's line.
        let other = lines.take(b, Duration::ZERO, 32).await;
        assert!(other.is_ok());
        assert!(order.lock().unwrap().is_empty());
        first.done();
        for w in waiting {
            assert_eq!(w.await.unwrap(), Ok(()));
        }
        assert_eq!(*order.lock().unwrap(), [0, 1, 2, 3, 4]);
        assert_eq!(lines.len(a), 0);
        drop(other);
        assert!(lines.lines.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn past_the_bound_a_check_is_refused_at_once_and_its_retry_after_estimated() {
        let lines = KeyLines::new();
        let a = net("192.0.2.1");
        let first = lines.take(a, LONG, 3).await.unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let waiting: Vec<_> = (0..3).map(|n| queue(&lines, a, 3, n, &order)).collect();
        line_of(&lines, a, 4).await;
        let started = Instant::now();
        assert_eq!(lines.take(a, LONG, 3).await.err(), Some(NoTurn::Full));
        assert!(started.elapsed() < Duration::from_secs(1));
        // Refused, it took no place.
        assert_eq!(lines.len(a), 4);
        // Four checks in line of 100 ms each (the first estimate of a turn's work).
        assert_eq!(retry_after(lines.len(a), lines.work()), 1);
        first.done();
        for w in waiting {
            assert_eq!(w.await.unwrap(), Ok(()));
        }
        assert_eq!(lines.len(a), 0);
    }

    #[tokio::test]
    async fn a_turn_that_does_not_come_in_time_is_late_and_its_place_given_back() {
        let lines = KeyLines::new();
        let a = net("2001:db8::1");
        let first = lines.take(a, LONG, 32).await.unwrap();
        let within = Duration::from_millis(50);
        let started = Instant::now();
        assert_eq!(lines.take(a, within, 32).await.err(), Some(NoTurn::Late));
        assert!(started.elapsed() >= within);
        assert_eq!(lines.len(a), 1);
        // So is the place of a request dropped while it waits.
        let order = Arc::new(Mutex::new(Vec::new()));
        let dropped = queue(&lines, net("2001:db8::2"), 32, 0, &order);
        line_of(&lines, a, 2).await;
        dropped.abort();
        line_of(&lines, a, 1).await;
        first.done();
        assert_eq!(lines.len(a), 0);
        assert!(order.lock().unwrap().is_empty());
    }

    #[test]
    fn retry_after_is_the_time_of_the_checks_ahead_in_whole_seconds() {
        let ms = Duration::from_millis;
        assert_eq!(retry_after(0, ms(100)), 1);
        assert_eq!(retry_after(32, ms(100)), 4);
        assert_eq!(retry_after(32, ms(8_100)), 260);
        assert_eq!(retry_after(1_000, ms(8_000)), MAX_RETRY_AFTER);
    }

    #[test]
    fn the_work_of_a_turn_is_an_average_of_the_last_ones() {
        let lines = KeyLines::new();
        assert_eq!(lines.work(), FIRST_WORK);
        for _ in 0..64 {
            lines.worked(Duration::from_millis(20));
        }
        let work = lines.work().as_millis();
        assert!((20..=21).contains(&work), "{work} ms");
    }

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
