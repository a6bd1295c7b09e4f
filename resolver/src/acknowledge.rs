//! Sending the acknowledgment of a found URL (Table 8.11) without making the reader wait:
//! neither for the Archive's answer, nor for a connection, nor for the acknowledgments
//! sent before.
//!
//! An acknowledgment is a line of the Archive's access statistics, which the Archive
//! answers once that line is on its disk: on a busy machine, far later than it answers a
//! urlRequest. So the redirect is answered at once, and the acknowledgment waits in the
//! background for a connection to the Archive, on connections the resolutions do not
//! need: it never holds those the client reserves for them
//! ([`crate::client::reserved_for_resolutions`]). At most [`PER_ARCHIVE`] wait or are
//! under way to one Archive, each given 10 times the Archive timeout to find a
//! connection, and as long then to be answered
//! ([`crate::client::ACKNOWLEDGMENT_PATIENCE`]); one beyond, or one that found no
//! connection in that time, is dropped: logged and counted in the metrics (`dropped`).
//! An Archive that takes acknowledgments more slowly than readers come for a while loses
//! some of its access counts rather than slow every resolution of its items to that pace.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::client::{ArchiveClient, Fetched, Purpose};
use crate::labels::Acknowledgment;
use crate::log::complain;
use crate::metrics::Metrics;

/// Acknowledgments waiting for a connection or under way to one Archive at once: those
/// of a burst of resolutions wait in the background for the Archive to take them, within
/// this bound of the resolver's memory.
pub const PER_ARCHIVE: usize = 1024;

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

    /// Sends `url` to the Archive `archive` at `address` in the background, by its
    /// acknowledgments' lane; drops it at once when [`PER_ARCHIVE`] are waiting or under
    /// way. Never waits. Needs a tokio runtime.
    pub fn send(&self, archive: &str, address: &str, url: String) {
        let slots = self.slots_of(archive);
        let Ok(slot) = slots.try_acquire_owned() else {
            self.metrics.acknowledgment(Acknowledgment::Dropped);
            complain(
                &format!("acknowledgments to {address} dropped"),
                &format!(
                    "acknowledgment to {address} dropped: {PER_ARCHIVE} still waiting or under way"
                ),
            );
            return;
        };
        let (client, timeout, metrics) = (self.client.clone(), self.timeout, self.metrics.clone());
        let address = address.to_string();
        tokio::spawn(async move {
            let (fetched, _) = client.get_for(Purpose::Acknowledgment, &url, timeout).await;
            drop(slot);
            // One line per kind of trouble and Archive, then a count: an Archive that
            // takes no acknowledgment would otherwise write a line per resolution.
            let failing = format!("acknowledgments to {address} failing");
            match fetched {
                Fetched::Body(_) => metrics.acknowledgment(Acknowledgment::Sent),
                Fetched::Failed(why) => {
                    metrics.acknowledgment(Acknowledgment::Failed);
                    complain(
                        &failing,
                        &format!("acknowledgment to {address} failed: {why}"),
                    )
                }
                Fetched::TimedOut => {
                    metrics.acknowledgment(Acknowledgment::Failed);
                    complain(&failing, &format!("acknowledgment to {address} timed out"))
                }
                Fetched::Overloaded(why) => {
                    metrics.acknowledgment(Acknowledgment::Failed);
                    complain(
                        &failing,
                        &format!("acknowledgment to {address} not taken: {why}"),
                    )
                }
                Fetched::Refused(why) => {
                    metrics.acknowledgment(Acknowledgment::Failed);
                    complain(
                        &failing,
                        &format!("acknowledgment to {address} not sent: {why}"),
                    )
                }
                Fetched::Busy => {
                    metrics.acknowledgment(Acknowledgment::Dropped);
                    complain(
                        &format!("acknowledgments to {address} dropped"),
                        &format!(
                            "acknowledgment to {address} dropped: no connection free within {timeout:?}"
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
