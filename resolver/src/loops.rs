//! Relay loops: an Archive that, asked about an IBI, asks this resolver to resolve that
//! IBI (an Archive that relays, or one that takes the resolver for its own upstream)
//! would have every round ask it again, and each ask start another round. What the
//! resolver is asking each Archive about right now is marked ([`Underway::mark`], by
//! the IBI and the Archive's address).
//!
//! A resolution that arrives from that address for that IBI while a mark stands may be
//! the loop itself, or a reader behind the same address as the Archive (one institution
//! behind one NAT; every process of a test on loopback). The two part by what they wait
//! for: the Archive that relays waits for this resolution before it answers, so its
//! request stays under way; a reader's does not. So the resolution waits, at most
//! [`Underway::relayed`]'s patience, for the requests marked when it arrived to end
//! (those marked later do not count): they end, and it is resolved as any other; they do
//! not, and it is the loop, answered `508` before any Archive is asked again. A loop
//! costs one resolution and one wait, however long the relays would chain.
//!
//! Only the rounds that ask beyond the remembered Archive or the home are marked: an
//! Archive asked alone for an item it holds is answering, not relaying.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

/// Marks kept at once at most: past them, no more are made (a loop then meets the
/// per-client bounds instead).
const MAX_MARKS: usize = 65_536;

/// What the resolver is asking which Archive about, now.
#[derive(Debug, Default)]
pub struct Underway {
    inner: Mutex<Inner>,
    /// Told each time a mark ends.
    ended: Notify,
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    /// The marks under way for each IBI (key) and address.
    marks: HashMap<(String, IpAddr), Vec<u64>>,
    count: usize,
}

/// A request under way to the Archive at an address about an IBI, until dropped.
pub struct Mark {
    underway: Arc<Underway>,
    key: (String, IpAddr),
    id: u64,
}

impl Underway {
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Marks a request about `ibi` (its key) to the Archive at `ip`, until the mark is
    /// dropped; `None` when [`MAX_MARKS`] are kept already.
    pub fn mark(self: &Arc<Underway>, ibi: &str, ip: IpAddr) -> Option<Mark> {
        let mut inner = self.inner();
        if inner.count >= MAX_MARKS {
            return None;
        }
        let id = inner.next;
        inner.next += 1;
        inner.count += 1;
        let key = (ibi.to_string(), ip);
        inner.marks.entry(key.clone()).or_default().push(id);
        Some(Mark {
            underway: self.clone(),
            key,
            id,
        })
    }

    /// The marks under way about `ibi` to the Archive at `ip`.
    fn marked(&self, key: &(String, IpAddr)) -> Vec<u64> {
        self.inner().marks.get(key).cloned().unwrap_or_default()
    }

    /// Whether a resolution of `ibi` (its key) that came from `ip` is a relay of a
    /// request under way to the Archive at `ip`: some of the requests marked now do not
    /// end within `patience`.
    pub async fn relayed(&self, ibi: &str, ip: IpAddr, patience: Duration) -> bool {
        let key = (ibi.to_string(), ip);
        let waited_for = self.marked(&key);
        if waited_for.is_empty() {
            return false;
        }
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            let ended = self.ended.notified();
            tokio::pin!(ended);
            // Told of every end from here on, before looking.
            ended.as_mut().enable();
            let now = self.marked(&key);
            if !waited_for.iter().any(|id| now.contains(id)) {
                return false;
            }
            if tokio::time::timeout_at(deadline, ended).await.is_err() {
                return true;
            }
        }
    }
}

impl Drop for Mark {
    fn drop(&mut self) {
        {
            let mut inner = self.underway.inner();
            inner.count -= 1;
            if let Some(ids) = inner.marks.get_mut(&self.key) {
                ids.retain(|id| *id != self.id);
                if ids.is_empty() {
                    inner.marks.remove(&self.key);
                }
            }
        }
        self.underway.ended.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IBI: &str = "urlib.net/www/2020/01.01.01.01";

    #[tokio::test]
    async fn a_request_that_ends_is_no_relay_and_one_that_waits_is() {
        let underway = Arc::new(Underway::default());
        let archive: IpAddr = "192.0.2.7".parse().unwrap();
        let other: IpAddr = "192.0.2.8".parse().unwrap();
        let patience = Duration::from_millis(200);
        // Nothing under way: no relay, at once.
        assert!(!underway.relayed(IBI, archive, patience).await);
        // Under way, and it ends meanwhile (a reader behind the Archive's address): no
        // relay, though another request is marked after it.
        let first = underway.mark(IBI, archive).unwrap();
        let later = {
            let underway = underway.clone();
            tokio::spawn(async move {
                let later = underway.mark(IBI, archive).unwrap();
                drop(first);
                later
            })
        };
        assert!(!underway.relayed(IBI, archive, patience).await);
        let later = later.await.unwrap();
        // Another IBI, another address: no relay.
        assert!(
            !underway
                .relayed("urlib.net/www/2020/01.01.01.02", archive, patience)
                .await
        );
        assert!(!underway.relayed(IBI, other, patience).await);
        // Under way, and it does not end (it waits for this resolution): a relay.
        assert!(underway.relayed(IBI, archive, patience).await);
        drop(later);
        assert!(!underway.relayed(IBI, archive, patience).await);
        assert_eq!(underway.inner().count, 0);
        assert!(underway.inner().marks.is_empty());
    }
}
