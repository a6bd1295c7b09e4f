//! Sending the acknowledgment of a found URL (Table 8.11) without making the reader wait
//! for the Archive's answer, and without losing it when the Archive is busy.
//!
//! An acknowledgment is a line of the Archive's access statistics. At most
//! [`PER_ARCHIVE`] are under way to one Archive; a resolution that finds them all taken
//! waits for one to end (at most the Archive timeout) before it answers the reader. So a
//! burst of readers is slowed to the pace the Archive takes acknowledgments at — a
//! resolution needs the urlRequest and the acknowledgment — instead of piling up
//! connections to it and dropping what does not fit. Only an Archive that takes none
//! within the timeout loses one; that is logged and counted in the metrics.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::client::{ArchiveClient, Fetched};
use crate::log::complain;
use crate::metrics::Metrics;

/// Acknowledgments under way to one Archive at once.
pub const PER_ARCHIVE: usize = 32;

/// The acknowledgments of every Archive.
pub struct Acknowledger {
    client: ArchiveClient,
    timeout: Duration,
    metrics: Arc<Metrics>,
    /// Free slots of each Archive, by its service IBI as included.
    slots: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl Acknowledger {
    pub fn new(client: ArchiveClient, timeout: Duration, metrics: Arc<Metrics>) -> Acknowledger {
        Acknowledger {
            client,
            timeout,
            metrics,
            slots: Mutex::new(HashMap::new()),
        }
    }

    fn slots_of(&self, archive: &str) -> Arc<Semaphore> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots
            .entry(archive.to_string())
            .or_insert_with(|| Arc::new(Semaphore::new(PER_ARCHIVE)))
            .clone()
    }

    /// Sends `url` to the Archive `archive` at `address` once a slot is free; returns
    /// when it is under way (or dropped, after the timeout).
    pub async fn send(&self, archive: &str, address: &str, url: String) {
        let slots = self.slots_of(archive);
        let Ok(Ok(slot)) = tokio::time::timeout(self.timeout, slots.acquire_owned()).await else {
            self.metrics.acknowledgment("dropped");
            complain(
                &format!("acknowledgments to {address} dropped"),
                &format!(
                    "acknowledgment to {address} dropped: {PER_ARCHIVE} still under way after {:?}",
                    self.timeout
                ),
            );
            return;
        };
        let (client, timeout, metrics) = (self.client.clone(), self.timeout, self.metrics.clone());
        let address = address.to_string();
        tokio::spawn(async move {
            let (fetched, _) = client.get(&url, timeout).await;
            drop(slot);
            // One line per kind of trouble and Archive, then a count: an Archive that
            // takes no acknowledgment would otherwise write a line per resolution.
            let failing = format!("acknowledgments to {address} failing");
            match fetched {
                Fetched::Body(_) => metrics.acknowledgment("sent"),
                Fetched::Failed(why) => {
                    metrics.acknowledgment("failed");
                    complain(
                        &failing,
                        &format!("acknowledgment to {address} failed: {why}"),
                    )
                }
                Fetched::TimedOut => {
                    metrics.acknowledgment("failed");
                    complain(&failing, &format!("acknowledgment to {address} timed out"))
                }
                Fetched::Overloaded(why) => {
                    metrics.acknowledgment("failed");
                    complain(
                        &failing,
                        &format!("acknowledgment to {address} not taken: {why}"),
                    )
                }
                Fetched::Refused(why) => {
                    metrics.acknowledgment("failed");
                    complain(
                        &failing,
                        &format!("acknowledgment to {address} not sent: {why}"),
                    )
                }
                Fetched::Busy => {
                    metrics.acknowledgment("dropped");
                    complain(
                        &format!("acknowledgments to {address} dropped"),
                        &format!(
                            "acknowledgment to {address} dropped: the resolver had as many requests under way as it allows"
                        ),
                    )
                }
            }
        });
    }

    /// Forgets the Archives no longer included.
    pub fn retain(&self, archives: &[&str]) {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.retain(|name, _| archives.contains(&name.as_str()));
    }
}
