//! The location memory (§5.1: a resolver may remember where items are): which Archive
//! answered for an IBI, asked first the next time so that a popular item costs one
//! Archive request instead of one per included Archive.
//!
//! A cache, never an authority that others can write (the rules are the resolver's,
//! [`crate::resolve`]; this module keeps what they decide):
//! - an entry is made only by a resolution of the IBI itself, and replaced only when its
//!   Archive no longer holds the item; one key per IBI, its canonical spelling
//!   ([`ibi::Ibi::key`]);
//! - an entry is *fresh* for `expiry` after it was last verified (made, or confirmed by
//!   a resolution that asked every Archive), then *stale*: it is verified again;
//! - a second Archive claiming the Original of an IBI whose remembered Archive still
//!   claims it is a [`Conflict`], kept beside the entry, never in its place.
//!
//! Bounded: at most `entries` IBIs, in two segments (a segmented LRU): a new entry is on
//! probation, and moves to the protected segment (four fifths of `entries`) when it is
//! used again; only the probation's least recently used are forgotten, so a flood of
//! IBIs asked once, whoever sends it, cannot push out the entries readers come back to.
//! An IBI the memory evicts is deleted from the registry's `locations` table; the table
//! is also pruned to the same size, oldest used first, for the rows a full queue or a
//! smaller `entries` left over. Kept in the registry database, so a
//! restart does not start cold: the most recently used `entries` rows are loaded at start.
//! Writes go to one thread of their own, in batches, through a bounded queue: a
//! resolution never waits for the disk, and when the queue is full a change is dropped
//! (it costs one fan-out later, never a wrong answer).

use std::collections::HashSet;
use std::num::NonZeroUsize;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lru::LruCache;
use serde::Serialize;

use crate::clock::{self, Clock, SystemClock};
use crate::registry::{RegistryError, RegistryErrorKind};
use crate::store::{Conn, Database, StoreError, MEMORY_CHANNEL};
use crate::values;

/// Changes waiting for the writer; past this many, new ones are dropped.
const QUEUE: usize = 8192;
/// Changes written in one transaction at most.
const BATCH: usize = 1024;
/// A remembered location used again after this long is written again, so that the
/// table's oldest rows are the least used ones (milliseconds).
const REFRESH_MS: i64 = 3_600_000;
/// IBIs whose conflicts are kept in memory for the inspection view, at most.
const CONFLICTS_KEPT: usize = 10_000;
/// IBIs taken from one notification of another resolver, at most.
pub const SHARED_MAX: usize = 1024;
/// Claimants kept per IBI, at most.
const CLAIMANTS_KEPT: usize = 8;

/// Two Archives claiming the Original of one IBI: a second one while the remembered one
/// (the holder, which keeps the entry) claims it too, or two or more when none was
/// remembered (none is then).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Conflict {
    /// The IBI's key.
    pub ibi: String,
    /// The remembered Archive (its key), if there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holder: Option<String>,
    /// An Archive (its key) that claimed it besides.
    pub claimant: String,
}

/// What the memory holds for an IBI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recalled {
    /// The Archive's service IBI.
    pub archive: Arc<str>,
    /// Verified less than `expiry` ago.
    pub fresh: bool,
}

/// One change for the table.
enum Change {
    Set {
        ibi: String,
        archive: Arc<str>,
        used: i64,
        verified: i64,
    },
    Forget(String),
    /// Pushed out of this memory by newer entries: out of the table too, unless the table
    /// is shared by several resolvers (PostgreSQL), whose memories hold other entries;
    /// there it is pruned to `entries` rows, the least recently used first.
    Evict(String),
    /// The conflicts of an IBI the operator forgot.
    ForgetConflicts(String),
    Conflict {
        conflict: Conflict,
        at: i64,
    },
    /// Answered once every change sent before it is committed.
    Flush(std::sync::mpsc::Sender<()>),
}

impl Change {
    /// The IBI it changes (empty for a flush).
    fn ibi(&self) -> &str {
        match self {
            Change::Set { ibi, .. }
            | Change::Forget(ibi)
            | Change::Evict(ibi)
            | Change::ForgetConflicts(ibi) => ibi,
            Change::Conflict { conflict, .. } => &conflict.ibi,
            Change::Flush(_) => "",
        }
    }
}

#[derive(Clone)]
struct Entry {
    archive: Arc<str>,
    /// When it was last written to the table (ms since the epoch).
    written: i64,
    /// When it was last verified (ms since the epoch; 0: never).
    verified: i64,
}

/// The remembered locations, each Archive's name held once however many IBIs it holds
/// (an entry costs about 150 bytes), and the conflicts seen.
struct Remembered {
    lru: Segmented,
    names: HashSet<Arc<str>>,
    conflicts: LruCache<Box<str>, Vec<Conflict>>,
}

/// A segmented LRU: new entries on probation, promoted to the protected segment when used
/// again, evicted only from the probation (the protected segment's least recently used
/// go back to the probation when it is full).
struct Segmented {
    probation: LruCache<Box<str>, Entry>,
    protected: LruCache<Box<str>, Entry>,
    capacity: usize,
    protected_capacity: usize,
}

impl Segmented {
    fn new(capacity: NonZeroUsize) -> Segmented {
        Segmented {
            probation: LruCache::unbounded(),
            protected: LruCache::unbounded(),
            capacity: capacity.get(),
            protected_capacity: capacity.get() * 4 / 5,
        }
    }

    fn len(&self) -> usize {
        self.probation.len() + self.protected.len()
    }

    fn peek(&self, ibi: &str) -> Option<&Entry> {
        self.protected
            .peek(ibi)
            .or_else(|| self.probation.peek(ibi))
    }

    /// The entry of `ibi`, marked used: promoted when it was on probation.
    fn get_mut(&mut self, ibi: &str) -> Option<&mut Entry> {
        if self.protected.contains(ibi) {
            return self.protected.get_mut(ibi);
        }
        let (key, entry) = self.probation.pop_entry(ibi)?;
        self.protected.push(key, entry);
        while self.protected.len() > self.protected_capacity {
            match self.protected.pop_lru() {
                Some((k, e)) => {
                    self.probation.push(k, e);
                }
                None => break,
            }
        }
        self.protected
            .get_mut(ibi)
            .or_else(|| self.probation.get_mut(ibi))
    }

    /// Puts `entry` for `ibi` (in place when it is there, else on probation); gives back
    /// the IBIs evicted to make room.
    fn put(&mut self, ibi: &str, entry: Entry) -> Vec<Box<str>> {
        if let Some(e) = self.protected.get_mut(ibi) {
            *e = entry;
            return Vec::new();
        }
        self.probation.push(ibi.into(), entry);
        let mut evicted = Vec::new();
        while self.len() > self.capacity {
            let lru = self
                .probation
                .pop_lru()
                .or_else(|| self.protected.pop_lru());
            match lru {
                Some((k, _)) => evicted.push(k),
                None => break,
            }
        }
        evicted
    }

    fn pop(&mut self, ibi: &str) -> Option<Entry> {
        self.protected.pop(ibi).or_else(|| self.probation.pop(ibi))
    }
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
    /// How long an entry stays fresh, in milliseconds.
    expiry_ms: i64,
    /// The time of day of its entries.
    clock: Arc<dyn Clock>,
    /// Names this resolver in what it tells the others of its database.
    instance: u64,
}

/// Milliseconds since the epoch now, by the system's clock.
pub fn now_ms() -> i64 {
    clock::millis(&SystemClock)
}

impl LocationMemory {
    /// Remembers nothing (`entries = 0`).
    pub fn disabled() -> LocationMemory {
        LocationMemory {
            map: None,
            writes: None,
            expiry_ms: 0,
            clock: clock::system(),
            instance: 0,
        }
    }

    /// The same memory, its entries timed by `clock`.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> LocationMemory {
        self.clock = clock;
        self
    }

    /// Milliseconds since the epoch now, by the memory's clock.
    fn now_ms(&self) -> i64 {
        clock::millis(&*self.clock)
    }

    /// The memory of the registry at `database`, at most `entries` IBIs fresh for
    /// `expiry`, loaded from its table; a thread of its own writes the changes back.
    pub fn open(
        database: &Database,
        entries: usize,
        expiry: Duration,
    ) -> Result<LocationMemory, RegistryError> {
        let Some(capacity) = NonZeroUsize::new(entries) else {
            return Ok(LocationMemory::disabled());
        };
        let failed = |e: StoreError| RegistryError::from(e);
        let mut conn = Conn::open(database, "memory").map_err(failed)?;
        if let Conn::Sqlite(c) = &conn {
            c.busy_timeout(Duration::from_secs(5))?;
            // A lost change costs one fan-out, not a wrong answer: no fsync per batch.
            c.pragma_update(None, "synchronous", "NORMAL")?;
        }
        let mut map = Remembered {
            lru: Segmented::new(capacity),
            names: HashSet::new(),
            conflicts: LruCache::new(NonZeroUsize::new(CONFLICTS_KEPT).expect("not zero")),
        };
        let rows = conn
            .query(
                "SELECT ibi, archive, used, verified FROM locations ORDER BY used DESC LIMIT ?1",
                values![entries as i64],
            )
            .map_err(failed)?;
        // Oldest first, so that the newest end up the most recently used.
        for r in rows.iter().rev() {
            let (ibi, archive) = (r.text(0).map_err(failed)?, r.text(1).map_err(failed)?);
            let archive = map.name(&archive);
            map.lru.put(
                &ibi,
                Entry {
                    archive,
                    written: r.int(2).map_err(failed)?,
                    verified: r.int(3).map_err(failed)?,
                },
            );
        }
        let rows = conn
            .query(
                "SELECT ibi, holder, claimant FROM conflicts ORDER BY last DESC LIMIT ?1",
                values![CONFLICTS_KEPT as i64],
            )
            .map_err(failed)?;
        for r in rows.iter().rev() {
            let holder = r.text(1).map_err(failed)?;
            let c = Conflict {
                ibi: r.text(0).map_err(failed)?,
                holder: (!holder.is_empty()).then_some(holder),
                claimant: r.text(2).map_err(failed)?,
            };
            keep_conflict(&mut map.conflicts, c);
        }
        let instance = instance_id();
        let (tx, rx) = sync_channel(QUEUE);
        std::thread::Builder::new()
            .name("location-memory".into())
            .spawn(move || writer(conn, rx, entries, instance))
            .map_err(|e| {
                RegistryError::new(RegistryErrorKind::Database, format!("location memory: {e}"))
            })?;
        Ok(LocationMemory {
            map: Some(Mutex::new(map)),
            writes: Some(tx),
            expiry_ms: i64::try_from(expiry.as_millis()).unwrap_or(i64::MAX),
            clock: clock::system(),
            instance,
        })
    }

    /// The IBIs another resolver of the same PostgreSQL database remembered, from the
    /// payload of a notification on [`MEMORY_CHANNEL`] (this resolver's own give none):
    /// at most [`SHARED_MAX`]. Only names: where each is, the caller reads from the
    /// table, which only the resolvers write, whereas any role that may connect to the
    /// database may notify.
    pub fn shared_ibis(&self, payload: &str) -> Vec<String> {
        let mut lines = payload.lines();
        if self.map.is_none() || lines.next() == Some(self.instance.to_string().as_str()) {
            return Vec::new();
        }
        lines
            .filter(|l| !l.is_empty() && l.len() <= 256)
            .take(SHARED_MAX)
            .map(str::to_string)
            .collect()
    }

    /// Takes in entries another resolver of the same database remembered, as its table
    /// holds them (`ibi`, `archive`, `verified`): each verified later than the one held,
    /// or for an IBI not held, is held as it was verified there (on probation when new).
    /// Nothing is written back: the other resolver wrote it.
    pub fn take_shared(&self, entries: &[(String, String, i64)]) {
        let Some(mut map) = self.lock() else {
            return;
        };
        for (ibi, archive, verified) in entries {
            let verified = *verified;
            if map.lru.peek(ibi).is_some_and(|e| e.verified >= verified) {
                continue;
            }
            let archive = map.name(archive);
            let entry = Entry {
                archive,
                written: verified,
                verified,
            };
            match map.lru.get_mut(ibi) {
                Some(held) => *held = entry,
                None => {
                    map.lru.put(ibi, entry);
                }
            }
        }
    }

    /// Whether it remembers anything at all (`entries` > 0).
    pub fn enabled(&self) -> bool {
        self.map.is_some()
    }

    fn lock(&self) -> Option<std::sync::MutexGuard<'_, Remembered>> {
        Some(self.map.as_ref()?.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The Archive (service IBI) remembered for `ibi` (a registry key), if any; marks it
    /// used.
    pub fn recall(&self, ibi: &str) -> Option<Recalled> {
        self.recall_at(ibi, self.now_ms())
    }

    fn recall_at(&self, ibi: &str, now: i64) -> Option<Recalled> {
        let mut map = self.lock()?;
        let entry = map.lru.get_mut(ibi)?;
        let recalled = Recalled {
            archive: entry.archive.clone(),
            fresh: now - entry.verified < self.expiry_ms,
        };
        if now - entry.written >= REFRESH_MS {
            entry.written = now;
            let change = Change::Set {
                ibi: ibi.to_string(),
                archive: entry.archive.clone(),
                used: now,
                verified: entry.verified,
            };
            self.send(change);
        }
        Some(recalled)
    }

    /// What [`LocationMemory::recall`] gives, without marking it used.
    pub fn peek(&self, ibi: &str) -> Option<Recalled> {
        let now = self.now_ms();
        let map = self.lock()?;
        let entry = map.lru.peek(ibi)?;
        Some(Recalled {
            archive: entry.archive.clone(),
            fresh: now - entry.verified < self.expiry_ms,
        })
    }

    /// Remembers that `archive` holds `ibi`, verified now (a new entry, or one that
    /// replaces an Archive that no longer holds it).
    pub fn remember(&self, ibi: &str, archive: &str) {
        self.remember_at(ibi, archive, self.now_ms())
    }

    fn remember_at(&self, ibi: &str, archive: &str, now: i64) {
        let Some(mut map) = self.lock() else {
            return;
        };
        let archive = map.name(archive);
        let entry = Entry {
            archive: archive.clone(),
            written: now,
            verified: now,
        };
        // The evicted IBIs leave the table with the memory: pruning by the time a row was
        // written would not follow the memory's order (a recall within REFRESH_MS does
        // not rewrite its row), and could delete a row the memory still holds.
        for evicted in map.lru.put(ibi, entry) {
            self.send(Change::Evict(evicted.into()));
        }
        self.send(Change::Set {
            ibi: ibi.to_string(),
            archive,
            used: now,
            verified: now,
        });
    }

    /// `archive`, remembered for `ibi`, answered for it again when every Archive was
    /// asked: fresh again. Nothing happens when the entry names another Archive by now.
    pub fn verified(&self, ibi: &str, archive: &str) {
        let now = self.now_ms();
        let Some(mut map) = self.lock() else {
            return;
        };
        let Some(entry) = map.lru.get_mut(ibi) else {
            return;
        };
        if &*entry.archive != archive {
            return;
        }
        entry.verified = now;
        entry.written = now;
        let change = Change::Set {
            ibi: ibi.to_string(),
            archive: entry.archive.clone(),
            used: now,
            verified: now,
        };
        self.send(change);
    }

    /// Forgets `ibi` when it is remembered at `archive` (that Archive no longer holds
    /// it); `None` for `archive` forgets it whatever it names.
    pub fn forget(&self, ibi: &str, archive: Option<&str>) {
        let Some(mut map) = self.lock() else {
            return;
        };
        if archive.is_some_and(|a| map.lru.peek(ibi).is_some_and(|e| &*e.archive != a)) {
            return;
        }
        if map.lru.pop(ibi).is_some() {
            self.send(Change::Forget(ibi.to_string()));
        }
    }

    /// Forgets `ibis`, which `ibi-resolver forget` removed from the table, and their
    /// conflicts: deleted from the table again through the writer, after every change
    /// still queued (one of which could have written a row back).
    pub fn drop_entries(&self, ibis: &[String]) {
        let Some(mut map) = self.lock() else {
            return;
        };
        for ibi in ibis {
            map.lru.pop(ibi.as_str());
            map.conflicts.pop(ibi.as_str());
            self.send(Change::Forget(ibi.clone()));
            self.send(Change::ForgetConflicts(ibi.clone()));
        }
    }

    /// Records `conflict`; `true` the first time it is seen (then it is to be logged).
    pub fn conflict(&self, conflict: Conflict) -> bool {
        let Some(mut map) = self.lock() else {
            return false;
        };
        let known = map
            .conflicts
            .get(conflict.ibi.as_str())
            .is_some_and(|list| list.contains(&conflict));
        if !known {
            keep_conflict(&mut map.conflicts, conflict.clone());
        }
        self.send(Change::Conflict {
            conflict,
            at: self.now_ms(),
        });
        !known
    }

    /// The conflicts seen about `ibi`.
    pub fn conflicts_of(&self, ibi: &str) -> Vec<Conflict> {
        self.lock()
            .and_then(|map| map.conflicts.peek(ibi).cloned())
            .unwrap_or_default()
    }

    /// The IBI (its key) whose Archive was heard of last, among those whose Archive
    /// `keep` takes: the most recently verified entry, of equal ones the most recently
    /// used. The home page shows it as an example.
    pub fn latest(&self, keep: impl Fn(&str) -> bool) -> Option<String> {
        let map = self.lock()?;
        let mut best: Option<(&str, i64)> = None;
        for (ibi, entry) in map.lru.protected.iter().chain(map.lru.probation.iter()) {
            if best.is_some_and(|(_, verified)| verified >= entry.verified) {
                continue;
            }
            if keep(&entry.archive) {
                best = Some((ibi, entry.verified));
            }
        }
        best.map(|(ibi, _)| ibi.to_string())
    }

    /// IBIs remembered now.
    pub fn len(&self) -> usize {
        self.lock().map_or(0, |m| m.lru.len())
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

/// Adds `c` to the conflicts kept about its IBI (the oldest claimant dropped past
/// [`CLAIMANTS_KEPT`]).
fn keep_conflict(conflicts: &mut LruCache<Box<str>, Vec<Conflict>>, c: Conflict) {
    let list = conflicts.get_or_insert_mut(c.ibi.as_str().into(), Vec::new);
    list.retain(|k| k.claimant != c.claimant);
    if list.len() == CLAIMANTS_KEPT {
        list.remove(0);
    }
    list.push(c);
}

/// A number naming this resolver among those of one database.
fn instance_id() -> u64 {
    use argon2::password_hash::rand_core::RngCore;
    argon2::password_hash::rand_core::OsRng.next_u64()
}

/// The writer thread: batches of changes, one transaction each, then the table pruned
/// back to `entries` rows. Ends when the memory is dropped.
fn writer(mut conn: Conn, rx: Receiver<Change>, entries: usize, instance: u64) {
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
        // In the order of their IBIs (each IBI's changes in the order made), so that
        // the writers of several resolvers take the rows' locks in one order; a batch
        // that met another's all the same is written again, once.
        batch.sort_by(|a, b| a.ibi().cmp(b.ibi()));
        let mut written = write_batch(&mut conn, &batch, prune.then_some(entries), instance);
        if written
            .as_ref()
            .is_err_and(|e| e.kind == crate::store::StoreErrorKind::Conflict)
        {
            written = write_batch(&mut conn, &batch, prune.then_some(entries), instance);
        }
        if let Err(e) = written {
            crate::log::complain(
                "location memory not written",
                &format!("location memory: {e}"),
            );
        }
        if prune {
            since_prune = 0;
        }
        for done in flushed {
            let _ = done.send(());
        }
    }
}

/// The payloads of the notifications that tell the other resolvers of a PostgreSQL
/// database which IBIs `batch` remembered (PostgreSQL takes under 8000 bytes each): this
/// resolver's number, then one IBI a line.
fn shared(batch: &[Change], instance: u64) -> Vec<String> {
    const MAX: usize = 7000;
    let head = format!("{instance}\n");
    let mut payloads = Vec::new();
    let mut payload = head.clone();
    for change in batch {
        if let Change::Set { ibi, .. } = change {
            if payload.len() + ibi.len() + 1 > MAX && payload.len() > head.len() {
                payloads.push(std::mem::replace(&mut payload, head.clone()));
            }
            payload.push_str(ibi);
            payload.push('\n');
        }
    }
    if payload.len() > head.len() {
        payloads.push(payload);
    }
    payloads
}

fn write_batch(
    conn: &mut Conn,
    batch: &[Change],
    prune_to: Option<usize>,
    instance: u64,
) -> Result<(), StoreError> {
    let postgres = conn.is_postgres();
    conn.transaction(|tx| {
        for change in batch {
            match change {
                Change::Set {
                    ibi,
                    archive,
                    used,
                    verified,
                } => {
                    tx.execute(
                        // Never over an entry verified later (by another resolver of
                        // the same database): the later verification stands.
                        "INSERT INTO locations (ibi, archive, used, verified) VALUES (?1, ?2, ?3, ?4)
                         ON CONFLICT(ibi) DO UPDATE SET archive = excluded.archive,
                                                        used = excluded.used,
                                                        verified = excluded.verified
                         WHERE locations.verified <= excluded.verified",
                        values![ibi, &**archive, *used, *verified],
                    )?;
                }
                Change::Forget(ibi) => {
                    tx.execute("DELETE FROM locations WHERE ibi = ?1", values![ibi])?;
                }
                Change::Evict(ibi) if !postgres => {
                    tx.execute("DELETE FROM locations WHERE ibi = ?1", values![ibi])?;
                }
                Change::Evict(_) => {}
                Change::ForgetConflicts(ibi) => {
                    tx.execute("DELETE FROM conflicts WHERE ibi = ?1", values![ibi])?;
                }
                Change::Conflict { conflict: c, at } => {
                    let holder = c.holder.as_deref().unwrap_or("");
                    tx.execute(
                        "INSERT INTO conflicts (ibi, holder, claimant, first, last, times)
                         VALUES (?1, ?2, ?3, ?4, ?4, 1)
                         ON CONFLICT(ibi, claimant) DO UPDATE SET holder = excluded.holder,
                                                                  last = excluded.last,
                                                                  times = conflicts.times + 1",
                        values![&c.ibi, holder, &c.claimant, *at],
                    )?;
                }
                Change::Flush(_) => {}
            }
        }
        if let Some(entries) = prune_to {
            prune(tx, "locations", "ibi", "used", entries)?;
            // As many conflicts as the memory keeps, the latest.
            prune(tx, "conflicts", "ibi, claimant", "last", CONFLICTS_KEPT)?;
        }
        if postgres {
            for payload in shared(batch, instance) {
                tx.notify(MEMORY_CHANNEL, &payload)?;
            }
        }
        Ok(())
    })
}

/// Deletes the rows of `table` beyond the `keep` latest by `by`, rows named by `key`.
fn prune(tx: &mut Conn, table: &str, key: &str, by: &str, keep: usize) -> Result<(), StoreError> {
    let count = tx
        .query_one(&format!("SELECT count(*) FROM {table}"), &[])?
        .map_or(Ok(0), |r| r.int(0))?;
    let over = count - keep as i64;
    if over > 0 {
        tx.execute(
            &format!(
                "DELETE FROM {table} WHERE ({key}) IN
                 (SELECT {key} FROM {table} ORDER BY {by} ASC LIMIT ?1)"
            ),
            values![over],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "urlib.net/www/2012/01.01.01.01";
    const B: &str = "urlib.net/www/2012/01.01.01.02";
    const DAY: Duration = Duration::from_secs(86_400);

    use crate::store::testing::{registries, TestRegistry};

    fn table(db: &Database) -> Vec<(String, String)> {
        Conn::open(db, "test")
            .unwrap()
            .query("SELECT ibi, archive FROM locations ORDER BY ibi", &[])
            .unwrap()
            .iter()
            .map(|r| (r.text(0).unwrap(), r.text(1).unwrap()))
            .collect()
    }

    fn archive_of(memory: &LocationMemory, ibi: &str) -> Option<String> {
        memory.recall(ibi).map(|r| r.archive.to_string())
    }

    #[test]
    fn the_latest_entry_of_an_archive_kept() {
        for TestRegistry { database: path, .. } in registries() {
            let memory = LocationMemory::open(&path, 3, DAY).unwrap();
            assert_eq!(memory.latest(|_| true), None);
            memory.remember_at("i1", A, 1_000);
            memory.remember_at("i2", B, 2_000);
            memory.remember_at("i3", A, 3_000);
            assert_eq!(memory.latest(|_| true).as_deref(), Some("i3"));
            assert_eq!(memory.latest(|a| a == B).as_deref(), Some("i2"));
            assert_eq!(memory.latest(|_| false), None);
            // Used again (promoted) without being verified: still the older one.
            assert!(memory.recall_at("i1", 4_000).is_some());
            assert_eq!(memory.latest(|a| a == A).as_deref(), Some("i3"));
            assert_eq!(LocationMemory::disabled().latest(|_| true), None);
        }
    }

    /// A memory of 3 entries at `dir`, full: i1 and i3 at A, i2 at B, i1 the least
    /// recently used.
    fn three_remembered(path: &Database) -> LocationMemory {
        let memory = LocationMemory::open(path, 3, DAY).unwrap();
        memory.remember("i1", A);
        memory.remember("i2", B);
        memory.remember("i3", A);
        memory
    }

    fn pair(ibi: &str, archive: &str) -> (String, String) {
        (ibi.to_string(), archive.to_string())
    }

    #[test]
    fn the_least_recently_used_is_forgotten_in_memory_and_in_the_table() {
        for TestRegistry { database: path, .. } in registries() {
            let memory = three_remembered(&path);
            // i1 used again: i2 is now the least recently used, and goes first.
            assert_eq!(archive_of(&memory, "i1").as_deref(), Some(A));
            memory.remember("i4", B);
            assert_eq!(memory.len(), 3);
            assert_eq!(archive_of(&memory, "i2"), None);
            assert_eq!(archive_of(&memory, "i4").as_deref(), Some(B));
            memory.forget("i3", None);
            assert_eq!(archive_of(&memory, "i3"), None);
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
            let again = LocationMemory::open(&path, 3, DAY).unwrap();
            assert_eq!(archive_of(&again, "i1").as_deref(), Some(A));
            assert_eq!(archive_of(&again, "i4").as_deref(), Some(B));
            assert_eq!(archive_of(&again, "i3"), None);
        }
    }

    /// In SQLite, the table holds what the memory holds: an IBI evicted from memory is
    /// forgotten in the table too, and one still in memory is never pruned from the table
    /// because its row was written earlier than the evicted one's (a recall within the
    /// refresh interval does not rewrite its row). In PostgreSQL the table is every
    /// resolver's, whose memories hold other entries: an eviction leaves the row, and the
    /// table is pruned to `entries` rows, least recently written first.
    #[test]
    fn the_table_holds_what_the_memory_holds_after_an_eviction() {
        for TestRegistry { database: path, .. } in registries() {
            let memory = three_remembered(&path);
            memory.flush(Duration::from_secs(10));
            assert_eq!(archive_of(&memory, "i1").as_deref(), Some(A));
            memory.remember("i4", B);
            memory.flush(Duration::from_secs(10));
            let rows = table(&path);
            match path {
                Database::Sqlite(_) => {
                    assert_eq!(rows, vec![pair("i1", A), pair("i3", A), pair("i4", B)])
                }
                Database::Postgres(_) => {
                    assert_eq!(rows.len(), 3, "{rows:?}");
                    assert!(rows.contains(&pair("i4", B)), "{rows:?}");
                }
            }
        }
    }

    #[test]
    fn a_flood_of_ibis_asked_once_does_not_push_out_those_asked_again() {
        for TestRegistry { database: path, .. } in registries() {
            let memory = LocationMemory::open(&path, 10, DAY).unwrap();
            memory.remember("popular", A);
            // Used again: protected.
            assert!(memory.recall("popular").is_some());
            for n in 0..1000 {
                memory.remember(&format!("flood{n}"), B);
            }
            assert_eq!(memory.len(), 10);
            assert_eq!(archive_of(&memory, "popular").as_deref(), Some(A));
            // The flood evicted its own: only its last 9 are left.
            assert_eq!(archive_of(&memory, "flood990"), None);
            assert_eq!(archive_of(&memory, "flood991").as_deref(), Some(B));
        }
    }

    #[test]
    fn a_smaller_memory_loads_the_most_recently_used_rows() {
        for TestRegistry { database: path, .. } in registries() {
            let mut conn = Conn::open(&path, "test").unwrap();
            for (i, used) in [("old", 100), ("newer", 200), ("newest", 300)] {
                conn.execute(
                    "INSERT INTO locations (ibi, archive, used, verified) VALUES (?1, ?2, ?3, ?3)",
                    values![i, A, used],
                )
                .unwrap();
            }
            let memory = LocationMemory::open(&path, 2, DAY).unwrap();
            assert_eq!(memory.len(), 2);
            assert_eq!(archive_of(&memory, "old"), None);
            assert_eq!(archive_of(&memory, "newest").as_deref(), Some(A));
        }
    }

    #[test]
    fn no_entries_remembers_nothing_and_writes_nothing() {
        for TestRegistry { database: path, .. } in registries() {
            let memory = LocationMemory::open(&path, 0, DAY).unwrap();
            memory.remember("i1", A);
            assert_eq!(memory.recall("i1"), None);
            assert!(memory.is_empty());
            memory.flush(Duration::from_secs(10));
            assert!(table(&path).is_empty());
        }
    }

    #[test]
    fn every_entry_of_one_archive_shares_its_name() {
        for TestRegistry { database: path, .. } in registries() {
            let memory = LocationMemory::open(&path, 10, DAY).unwrap();
            memory.remember("i1", A);
            memory.remember("i2", A);
            let (one, two) = (memory.recall("i1").unwrap(), memory.recall("i2").unwrap());
            assert!(Arc::ptr_eq(&one.archive, &two.archive));
            memory.flush(Duration::from_secs(10));
            drop((memory, one, two));
            let loaded = LocationMemory::open(&path, 10, DAY).unwrap();
            let (one, two) = (loaded.recall("i1").unwrap(), loaded.recall("i2").unwrap());
            assert!(Arc::ptr_eq(&one.archive, &two.archive));
        }
    }

    #[test]
    fn an_entry_is_fresh_for_its_expiry_then_stale_until_verified_again() {
        for TestRegistry { database: path, .. } in registries() {
            let memory = LocationMemory::open(&path, 10, Duration::from_secs(60)).unwrap();
            let t = 1_000_000_000_000;
            memory.remember_at("i1", A, t);
            let at = |ms: i64| memory.recall_at("i1", ms).map(|r| r.fresh);
            assert_eq!(at(t + 59_999), Some(true));
            assert_eq!(at(t + 60_000), Some(false));
            // Being used does not make it fresh: only a verification does.
            assert_eq!(at(t + 61_000), Some(false));
            memory.verified("i1", A);
            assert_eq!(memory.peek("i1").map(|r| r.fresh), Some(true));
            // A verification by another Archive than the remembered one changes nothing.
            memory.remember_at("i2", A, t);
            memory.verified("i2", B);
            assert_eq!(memory.peek("i2").map(|r| r.fresh), Some(false));
            assert_eq!(archive_of(&memory, "i2").as_deref(), Some(A));
            // Stale rows are loaded stale, fresh ones fresh.
            memory.flush(Duration::from_secs(10));
            drop(memory);
            let loaded = LocationMemory::open(&path, 10, Duration::from_secs(60)).unwrap();
            assert_eq!(loaded.peek("i1").map(|r| r.fresh), Some(true));
            assert_eq!(loaded.peek("i2").map(|r| r.fresh), Some(false));
        }
    }

    #[test]
    fn forgetting_for_an_archive_leaves_an_entry_that_names_another() {
        for TestRegistry { database: path, .. } in registries() {
            let memory = LocationMemory::open(&path, 10, DAY).unwrap();
            memory.remember("i1", A);
            memory.forget("i1", Some(B));
            assert_eq!(archive_of(&memory, "i1").as_deref(), Some(A));
            memory.forget("i1", Some(A));
            assert_eq!(archive_of(&memory, "i1"), None);
        }
    }

    #[test]
    fn a_conflict_is_new_once_kept_beside_the_entry_and_in_the_table() {
        for TestRegistry { database: path, .. } in registries() {
            let memory = LocationMemory::open(&path, 10, DAY).unwrap();
            memory.remember("i1", A);
            let c = Conflict {
                ibi: "i1".into(),
                holder: Some(A.into()),
                claimant: B.into(),
            };
            assert!(memory.conflict(c.clone()));
            assert!(!memory.conflict(c.clone()));
            assert_eq!(memory.conflicts_of("i1"), vec![c.clone()]);
            assert_eq!(archive_of(&memory, "i1").as_deref(), Some(A));
            memory.flush(Duration::from_secs(10));
            let times = Conn::open(&path, "test")
                .unwrap()
                .query_one(
                    "SELECT times FROM conflicts WHERE ibi = 'i1' AND claimant = ?1",
                    values![B],
                )
                .unwrap()
                .unwrap()
                .int(0)
                .unwrap();
            assert_eq!(times, 2);
            drop(memory);
            // Known after a restart: not new again.
            let loaded = LocationMemory::open(&path, 10, DAY).unwrap();
            assert_eq!(loaded.conflicts_of("i1"), vec![c.clone()]);
            assert!(!loaded.conflict(c));
        }
    }
}
