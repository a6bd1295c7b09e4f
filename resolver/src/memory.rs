//! The location memory (§5.1: a resolver may remember where items are): which Archive
//! last answered for an IBI, asked first the next time so that a popular item costs one
//! Archive request instead of one per included Archive.
//!
//! - Bounded: at most `entries` IBIs, the least recently used forgotten first, in memory
//!   and in the registry's `locations` table (an IBI the memory evicts is deleted from
//!   the table; the table is also pruned to the same size, oldest written first, for the
//!   rows a full queue or a smaller `entries` left over).
//! - Kept in the registry database, so a restart does not start cold: the newest
//!   `entries` rows are loaded at start. Writes go to one thread of their own, in batches,
//!   through a bounded queue: a resolution never waits for the disk, and when the queue is
//!   full a change is dropped (it costs one fan-out later, never a wrong answer).
//! - Only a hint: a remembered Archive that does not satisfy the request sends the
//!   resolution to every Archive, and the memory is corrected from what they answer.

use std::collections::HashSet;
use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use lru::LruCache;
use rusqlite::{params, Connection};

use crate::registry::RegistryError;

/// Changes waiting for the writer; past this many, new ones are dropped.
const QUEUE: usize = 8192;
/// Changes written in one transaction at most.
const BATCH: usize = 1024;
/// A remembered location used again after this long is written again, so that the
/// table's oldest rows are the least used ones.
const REFRESH_SECS: i64 = 3600;

/// One change for the table.
enum Change {
    Set {
        ibi: String,
        archive: Arc<str>,
        used: i64,
    },
    Forget(String),
    /// Answered once every change sent before it is committed.
    Flush(std::sync::mpsc::Sender<()>),
}

#[derive(Clone)]
struct Entry {
    archive: Arc<str>,
    /// When it was last written to the table (seconds since the epoch).
    written: i64,
}

/// The remembered locations, each Archive's name held once however many IBIs it holds
/// (an entry costs about 150 bytes).
struct Remembered {
    lru: LruCache<Box<str>, Entry>,
    names: HashSet<Arc<str>>,
}

impl Remembered {
    /// `archive`'s one shared name.
    fn name(&mut self, archive: &str) -> Arc<str> {
        if let Some(name) = self.names.get(archive) {
            return name.clone();
        }
        let name: Arc<str> = archive.into();
        self.names.insert(name.clone());
        name
    }
}

/// The memory; [`LocationMemory::disabled`] remembers nothing.
pub struct LocationMemory {
    map: Option<Mutex<Remembered>>,
    writes: Option<SyncSender<Change>>,
}

fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

impl LocationMemory {
    /// Remembers nothing (`entries = 0`).
    pub fn disabled() -> LocationMemory {
        LocationMemory {
            map: None,
            writes: None,
        }
    }

    /// The memory of the registry at `database`, at most `entries` IBIs, loaded from its
    /// table; a thread of its own writes the changes back.
    pub fn open(database: &Path, entries: usize) -> Result<LocationMemory, RegistryError> {
        let Some(capacity) = NonZeroUsize::new(entries) else {
            return Ok(LocationMemory::disabled());
        };
        let conn = Connection::open(database)?;
        conn.busy_timeout(Duration::from_secs(5))?;
        // A lost change costs one fan-out, not a wrong answer: no fsync per batch.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        let mut map = Remembered {
            lru: LruCache::new(capacity),
            names: HashSet::new(),
        };
        {
            let mut stmt =
                conn.prepare("SELECT ibi, archive, used FROM locations ORDER BY used ASC LIMIT ?1 OFFSET max(0, (SELECT count(*) FROM locations) - ?1)")?;
            let rows = stmt.query_map(params![entries as i64], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })?;
            // Oldest first, so that the newest end up the most recently used.
            for row in rows {
                let (ibi, archive, used) = row?;
                let archive = map.name(&archive);
                map.lru.put(
                    ibi.into(),
                    Entry {
                        archive,
                        written: used,
                    },
                );
            }
        }
        let (tx, rx) = sync_channel(QUEUE);
        std::thread::Builder::new()
            .name("location-memory".into())
            .spawn(move || writer(conn, rx, entries))
            .map_err(|e| RegistryError(format!("location memory: {e}")))?;
        Ok(LocationMemory {
            map: Some(Mutex::new(map)),
            writes: Some(tx),
        })
    }

    /// The Archive (service IBI) remembered for `ibi` (a registry key), if any.
    pub fn recall(&self, ibi: &str) -> Option<Arc<str>> {
        let mut map = self.map.as_ref()?.lock().unwrap_or_else(|p| p.into_inner());
        let entry = map.lru.get_mut(ibi)?;
        let now = now_secs();
        if now - entry.written >= REFRESH_SECS {
            entry.written = now;
            self.send(Change::Set {
                ibi: ibi.to_string(),
                archive: entry.archive.clone(),
                used: now,
            });
        }
        Some(entry.archive.clone())
    }

    /// Remembers that `archive` answered for `ibi`.
    pub fn remember(&self, ibi: &str, archive: &str) {
        let Some(map) = &self.map else {
            return;
        };
        let used = now_secs();
        let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
        if map.lru.get_mut(ibi).is_some_and(|e| &*e.archive == archive) {
            return;
        }
        let archive = map.name(archive);
        let entry = Entry {
            archive: archive.clone(),
            written: used,
        };
        // `push` hands back the entry it replaced (the same IBI) or the one it evicted.
        // The evicted IBI leaves the table with the memory: pruning by the time a row was
        // written would not follow the memory's order (a recall within REFRESH_SECS does
        // not rewrite its row), and could delete a row the memory still holds.
        if let Some((evicted, _)) = map.lru.push(ibi.into(), entry) {
            if &*evicted != ibi {
                self.send(Change::Forget(evicted.into()));
            }
        }
        self.send(Change::Set {
            ibi: ibi.to_string(),
            archive,
            used,
        });
    }

    /// Forgets `ibi` (no Archive has it, or only a tombstone).
    pub fn forget(&self, ibi: &str) {
        let Some(map) = &self.map else {
            return;
        };
        let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
        if map.lru.pop(ibi).is_some() {
            self.send(Change::Forget(ibi.to_string()));
        }
    }

    /// IBIs remembered now.
    pub fn len(&self) -> usize {
        self.map
            .as_ref()
            .map(|m| m.lock().unwrap_or_else(|p| p.into_inner()).lru.len())
            .unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waits (at most `timeout`) until every change made so far is in the table: at a
    /// graceful stop, and in tests.
    pub fn flush(&self, timeout: Duration) {
        let Some(tx) = &self.writes else {
            return;
        };
        let (done, wait) = std::sync::mpsc::channel();
        if tx.send(Change::Flush(done)).is_ok() {
            let _ = wait.recv_timeout(timeout);
        }
    }

    /// Queues `change` for the writer. Called with the map locked, so that the table sees
    /// the changes in the order the memory made them (an IBI evicted by one resolution
    /// and remembered again by another is not deleted after it was written again).
    fn send(&self, change: Change) {
        if let Some(tx) = &self.writes {
            // Full: dropped (a fan-out later, never a wrong answer). Disconnected: the
            // writer has ended, at a stop.
            let _ = tx.try_send(change);
        }
    }
}

/// The writer thread: batches of changes, one transaction each, then the table pruned
/// back to `entries` rows. Ends when the memory is dropped.
fn writer(mut conn: Connection, rx: Receiver<Change>, entries: usize) {
    let mut since_prune = 0usize;
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(c) => batch.push(c),
                Err(_) => break,
            }
        }
        let mut flushed = Vec::new();
        batch.retain(|c| match c {
            Change::Flush(done) => {
                flushed.push(done.clone());
                false
            }
            _ => true,
        });
        since_prune += batch.len();
        let prune = since_prune >= entries.div_ceil(16).max(1);
        if let Err(e) = write_batch(&mut conn, &batch, prune.then_some(entries)) {
            crate::server::say(&format!("location memory: {e}"));
        }
        if prune {
            since_prune = 0;
        }
        for done in flushed {
            let _ = done.send(());
        }
    }
}

fn write_batch(
    conn: &mut Connection,
    batch: &[Change],
    prune_to: Option<usize>,
) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    {
        let mut set = tx.prepare_cached(
            "INSERT INTO locations (ibi, archive, used) VALUES (?1, ?2, ?3)
             ON CONFLICT(ibi) DO UPDATE SET archive = excluded.archive, used = excluded.used",
        )?;
        let mut forget = tx.prepare_cached("DELETE FROM locations WHERE ibi = ?1")?;
        for change in batch {
            match change {
                Change::Set { ibi, archive, used } => {
                    set.execute(params![ibi, &**archive, used])?;
                }
                Change::Forget(ibi) => {
                    forget.execute(params![ibi])?;
                }
                Change::Flush(_) => {}
            }
        }
    }
    if let Some(entries) = prune_to {
        tx.execute(
            "DELETE FROM locations WHERE ibi IN (SELECT ibi FROM locations ORDER BY used ASC
             LIMIT max(0, (SELECT count(*) FROM locations) - ?1))",
            params![entries as i64],
        )?;
    }
    tx.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "urlib.net/www/2012/01.01.01.01";
    const B: &str = "urlib.net/www/2012/01.01.01.02";

    /// A registry at `dir` (the memory's table is made by the registry).
    fn registry(dir: &Path) -> std::path::PathBuf {
        let path = dir.join("r.sqlite");
        crate::registry::Registry::open(&path).unwrap();
        path
    }

    fn table(path: &Path) -> Vec<(String, String)> {
        let conn = Connection::open(path).unwrap();
        let mut stmt = conn
            .prepare("SELECT ibi, archive FROM locations ORDER BY ibi")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    /// A memory of 3 entries at `dir`, full: i1 and i3 at A, i2 at B, i1 the least
    /// recently used.
    fn three_remembered(dir: &Path) -> (std::path::PathBuf, LocationMemory) {
        let path = registry(dir);
        let memory = LocationMemory::open(&path, 3).unwrap();
        memory.remember("i1", A);
        memory.remember("i2", B);
        memory.remember("i3", A);
        (path, memory)
    }

    fn pair(ibi: &str, archive: &str) -> (String, String) {
        (ibi.to_string(), archive.to_string())
    }

    #[test]
    fn the_least_recently_used_is_forgotten_in_memory_and_in_the_table() {
        let dir = tempfile::tempdir().unwrap();
        let (path, memory) = three_remembered(dir.path());
        // i1 used again: i2 is now the least recently used, and goes first.
        assert_eq!(memory.recall("i1").as_deref(), Some(A));
        memory.remember("i4", B);
        assert_eq!(memory.len(), 3);
        assert_eq!(memory.recall("i2"), None);
        assert_eq!(memory.recall("i4").as_deref(), Some(B));
        memory.forget("i3");
        assert_eq!(memory.recall("i3"), None);
        memory.flush(Duration::from_secs(10));
        // The table holds no more than `entries` rows, and not what was forgotten.
        let rows = table(&path);
        assert!(rows.len() <= 3, "{rows:?}");
        assert!(
            rows.contains(&pair("i1", A)) && rows.contains(&pair("i4", B)),
            "{rows:?}"
        );
        assert!(!rows.iter().any(|(i, _)| i == "i3"), "{rows:?}");
        drop(memory);
        // Read back at the next start.
        let again = LocationMemory::open(&path, 3).unwrap();
        assert_eq!(again.recall("i1").as_deref(), Some(A));
        assert_eq!(again.recall("i4").as_deref(), Some(B));
        assert_eq!(again.recall("i3"), None);
    }

    /// The table holds what the memory holds: an IBI evicted from memory is forgotten in
    /// the table too, and one still in memory is never pruned from the table because its
    /// row was written earlier than the evicted one's (a recall within the refresh
    /// interval does not rewrite its row).
    #[test]
    fn the_table_holds_what_the_memory_holds_after_an_eviction() {
        let dir = tempfile::tempdir().unwrap();
        let (path, memory) = three_remembered(dir.path());
        memory.flush(Duration::from_secs(10));
        assert_eq!(memory.recall("i1").as_deref(), Some(A));
        memory.remember("i4", B);
        memory.flush(Duration::from_secs(10));
        assert_eq!(
            table(&path),
            vec![pair("i1", A), pair("i3", A), pair("i4", B)]
        );
    }

    #[test]
    fn a_smaller_memory_loads_the_newest_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = registry(dir.path());
        let conn = Connection::open(&path).unwrap();
        for (i, used) in [("old", 100), ("newer", 200), ("newest", 300)] {
            conn.execute(
                "INSERT INTO locations (ibi, archive, used) VALUES (?1, ?2, ?3)",
                params![i, A, used],
            )
            .unwrap();
        }
        let memory = LocationMemory::open(&path, 2).unwrap();
        assert_eq!(memory.len(), 2);
        assert_eq!(memory.recall("old"), None);
        assert_eq!(memory.recall("newest").as_deref(), Some(A));
    }

    #[test]
    fn no_entries_remembers_nothing_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = registry(dir.path());
        let memory = LocationMemory::open(&path, 0).unwrap();
        memory.remember("i1", A);
        assert_eq!(memory.recall("i1"), None);
        assert!(memory.is_empty());
        memory.flush(Duration::from_secs(10));
        assert!(table(&path).is_empty());
    }

    #[test]
    fn every_entry_of_one_archive_shares_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = registry(dir.path());
        let memory = LocationMemory::open(&path, 10).unwrap();
        memory.remember("i1", A);
        memory.remember("i2", A);
        let (one, two) = (memory.recall("i1").unwrap(), memory.recall("i2").unwrap());
        assert!(Arc::ptr_eq(&one, &two));
        memory.flush(Duration::from_secs(10));
        drop((memory, one, two));
        let loaded = LocationMemory::open(&path, 10).unwrap();
        let (one, two) = (loaded.recall("i1").unwrap(), loaded.recall("i2").unwrap());
        assert!(Arc::ptr_eq(&one, &two));
    }
}
