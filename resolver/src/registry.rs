//! The registry (§7.1): every registered Archive, in an SQLite database created on first
//! use or in a PostgreSQL database several resolvers share ([`crate::store`]), the same
//! schema in both, brought up to date by the same migrations (`migrations/`, run by
//! refinery). Registration keys are kept only as argon2id hashes (PHC strings with their
//! own salt). Every change is one transaction; SQLite runs in WAL mode with full
//! synchronisation, so a crash leaves it as before or after a change. Each change of the
//! Archives, or of the memory by `forget`, is announced to the other resolvers of a
//! PostgreSQL database when it commits ([`REGISTRY_CHANNEL`]).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use ibi::Ibi;
use rusqlite::{params, Connection};

use crate::clock::{self, Clock};
use crate::health::Snapshot;
use crate::store::{Conn, Database, PgConn, StoreError, StoreErrorKind, Value, REGISTRY_CHANNEL};
use crate::values;

/// The version of the schema of an SQLite registry made before the migrations, in `PRAGMA
/// user_version`: the tables are the migrations' (`migrations/`), and a registry of an
/// older version is first brought to this one by [`upgrade`] (its deltas below).
const SCHEMA_VERSION: i64 = 4;

/// Version 2: the health of each Archive (dormant after failures in a row) and the
/// location memory (which Archive last answered for an IBI; `used` in seconds since the
/// epoch, the oldest pruned first).
const SCHEMA_2: &str = "
ALTER TABLE archives ADD COLUMN dormant INTEGER NOT NULL DEFAULT 0;
CREATE TABLE locations (
    ibi     TEXT PRIMARY KEY NOT NULL,
    archive TEXT NOT NULL,
    used    INTEGER NOT NULL
);
CREATE INDEX locations_used ON locations (used);
";

/// Version 3: the location memory's times in milliseconds, when each entry was last
/// verified (0: never, so entries of version 2 are verified again at their next use),
/// the entries `ibi-resolver forget` removed (for a running server to drop them too),
/// and the conflicts seen (two Archives claiming the Original of one IBI; Archives by
/// their key).
const SCHEMA_3: &str = "
UPDATE locations SET used = used * 1000;
ALTER TABLE locations ADD COLUMN verified INTEGER NOT NULL DEFAULT 0;
CREATE TABLE forgotten (
    id  INTEGER PRIMARY KEY AUTOINCREMENT,
    ibi TEXT NOT NULL,
    at  INTEGER NOT NULL
);
CREATE TABLE conflicts (
    ibi      TEXT NOT NULL,
    holder   TEXT NOT NULL,
    claimant TEXT NOT NULL,
    first    INTEGER NOT NULL,
    last     INTEGER NOT NULL,
    times    INTEGER NOT NULL,
    PRIMARY KEY (ibi, claimant)
);
CREATE INDEX conflicts_last ON conflicts (last);
CREATE INDEX conflicts_claimant ON conflicts (claimant);
";

// Version 4 changes no table: it keys every row by `Ibi::key` (`canonical_keys`).
// Before version 3 an IBIp was kept as written (a rep always had its canonical
// spelling), and version 3 changed the key without rewriting the rows, so an Archive
// registered as `lk47b6w/32nsfrp` was no longer found when it asked to be included.

/// How long the entries `forget` removed are kept for running servers to read.
const FORGOTTEN_KEPT_MS: i64 = 86_400_000;

/// The key of an IBI kept in a row ([`Ibi::key`]); a value that is no IBI (an
/// empty holder) is kept as it is.
fn key_of(kept: &str) -> String {
    Ibi::parse(kept).map_or_else(|_| kept.to_string(), |ibi| ibi.key())
}

/// One registered Archive.
#[derive(Clone, Debug, PartialEq)]
pub struct ArchiveRecord {
    pub serviceibi: String,
    pub email: String,
    pub registered: String,
    pub address: Option<String>,
    pub ip: Option<String>,
    pub platformversion: Option<String>,
    pub included: bool,
    /// `successful` or `unsuccessful`: the last inclusion's confirmation.
    pub confirmation: Option<String>,
    /// When it was last included or excluded.
    pub changed: Option<String>,
    pub lastsuccess: Option<String>,
    pub failures: i64,
    pub latencyms: Option<f64>,
    /// Not asked by resolutions until a probe answers.
    pub dormant: bool,
    /// IBIs remembered at another Archive whose Original it claimed too.
    pub conflicts: i64,
    /// Inclusions at another address than the one recorded.
    pub moves: i64,
    /// When the last move was made, and the address it left.
    pub movedat: Option<String>,
    pub movedfrom: Option<String>,
    /// Moves refused: the Archive still answered at the address recorded.
    pub movesrefused: i64,
}

/// Where an Archive is recorded: what decides whether an inclusion moves it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// Its address, once it was included.
    pub address: Option<String>,
    pub included: bool,
}

impl Place {
    /// The address an inclusion at `address` moves the Archive from, while it is
    /// included elsewhere (an excluded Archive, or one never included, is moved freely).
    pub fn moving_from(&self, address: &str) -> Option<&str> {
        self.address
            .as_deref()
            .filter(|old| self.included && is_another_address(old, address))
    }
}

/// Whether `new` is another address than `old` (host names are told apart without
/// regard to case).
pub fn is_another_address(old: &str, new: &str) -> bool {
    !old.eq_ignore_ascii_case(new)
}

/// A remembered location, as the table holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub ibi: String,
    /// The Archive's service IBI, as included.
    pub archive: String,
    /// Milliseconds since the epoch.
    pub used_ms: i64,
    /// Milliseconds since the epoch; 0: never.
    pub verified_ms: i64,
}

/// An included Archive, as resolutions ask it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Included {
    /// Its key in the registry ([`Ibi::key`] of its service IBI): what the location
    /// memory and the conflicts name it by, whatever spelling it was included under.
    pub key: String,
    /// Its service IBI as it spelt it when included: the path it is asked at.
    pub serviceibi: Ibi,
    pub address: String,
    /// Its `archiveip`, once the resolver reached its service at that address: what makes
    /// it the home of the IBIps minted there ([`crate::homes`]).
    pub ip: Option<std::net::IpAddr>,
    /// Its health as last recorded.
    pub recorded: Snapshot,
}

/// What an inclusion request told about the Archive.
#[derive(Clone, Debug)]
pub struct Inclusion<'a> {
    pub address: &'a str,
    pub ip: &'a str,
    pub platformversion: &'a str,
    pub email: &'a str,
    pub confirmed: bool,
    /// Its service answered `confirmation yes` at `ip` too.
    pub ip_reached: bool,
}

/// A registry error, for the operator or the log: its kind, and what happened.
#[derive(Debug)]
pub struct RegistryError {
    kind: RegistryErrorKind,
    message: String,
}

/// The kinds of [`RegistryError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryErrorKind {
    /// The registry cannot be created or opened (for writing).
    Unopenable,
    /// A write was refused for want of permission.
    ReadOnly,
    /// The file is no registry this resolver can use: not SQLite, damaged, another
    /// program's, or a schema version it does not know or cannot upgrade.
    Unusable,
    /// The Archive to register is registered already.
    AlreadyRegistered,
    /// The Archive to change is no longer registered.
    NotRegistered,
    /// The database cannot be reached (PostgreSQL down, or the connection lost).
    Unreachable,
    /// A row's key taken meanwhile by another writer.
    Duplicate,
    /// Any other fault of the database, or of the work on it.
    Database,
}

impl RegistryError {
    pub fn new(kind: RegistryErrorKind, message: impl Into<String>) -> RegistryError {
        RegistryError {
            kind,
            message: message.into(),
        }
    }

    pub fn kind(&self) -> RegistryErrorKind {
        self.kind
    }
}

impl std::fmt::Display for RegistryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RegistryError {}

/// What a write refused for want of permission needs: SQLite gives the `-wal` and `-shm`
/// files beside the registry its mode when it makes them, so a registry once read-only
/// stays so until they are writable too.
const WRITABLE: &str =
    "the registry, its -wal and -shm files and its directory must be writable by this user";

impl From<rusqlite::Error> for RegistryError {
    fn from(e: rusqlite::Error) -> RegistryError {
        if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ReadOnly) {
            RegistryError::new(
                RegistryErrorKind::ReadOnly,
                format!("registry: {e} ({WRITABLE})"),
            )
        } else {
            RegistryError::new(RegistryErrorKind::Database, format!("registry: {e}"))
        }
    }
}

/// How long an opener waits for another connection's lock: SQLite's busy timeout, and
/// the bound of [`switch_to_wal`]'s retries.
const BUSY_WAIT: Duration = Duration::from_secs(5);

fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// The schema's version and whether the database holds tables, read in one read
/// transaction. The schema and its version are committed together, so one snapshot
/// shows tables under version 0 only in some other program's database; read apart,
/// they may straddle another opener's commit of a new registry's schema.
fn version_and_tables(conn: &mut Connection) -> rusqlite::Result<(i64, bool)> {
    let tx = conn.transaction()?;
    let version = user_version(&tx)?;
    let tables: i64 = tx.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
    tx.commit()?;
    Ok((version, tables != 0))
}

/// Puts a new database in WAL mode. The switch reads the file's header in a read
/// transaction, then takes the write lock to change it; SQLite's busy handler does not
/// wait for a lock wanted from within a transaction (two readers each waiting for the
/// other to end would wait for ever), so while another opener makes the same switch
/// or creates the schema, SQLITE_BUSY comes at once. The switch is tried again,
/// outside any transaction, until [`BUSY_WAIT`] has passed; once another opener has
/// made it, it finds the header changed and has nothing to write.
fn switch_to_wal(conn: &Connection) -> rusqlite::Result<()> {
    let deadline = Instant::now() + BUSY_WAIT;
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(e)
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            done => return done,
        }
    }
}

/// Why [`upgrade`] did not.
enum Upgrade {
    /// Version 0 with tables: some other program's database.
    Foreign,
    /// Two or more Archives registered under spellings of one service IBI, none of them
    /// its key (`spellings` sorted): which one to keep is the operator's choice.
    Collision {
        key: String,
        spellings: Vec<String>,
    },
    Failed(rusqlite::Error),
}

impl From<rusqlite::Error> for Upgrade {
    fn from(e: rusqlite::Error) -> Upgrade {
        Upgrade::Failed(e)
    }
}

/// Marks an empty database as of [`SCHEMA_VERSION`] (the migrations then make its
/// tables), or brings an older one to it, in one transaction that holds the write lock from its start and
/// reads the version again under it: of commands started together, one does the work
/// and the others find it done.
fn upgrade(conn: &mut Connection) -> Result<(), Upgrade> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    match user_version(&tx)? {
        0 => {
            // A new database, or one of some other program: create only into an empty one.
            let tables: i64 =
                tx.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
            if tables != 0 {
                return Err(Upgrade::Foreign);
            }
            // Its tables are made by the migrations, as PostgreSQL's are.
        }
        1 => {
            tx.execute_batch(SCHEMA_2)?;
            tx.execute_batch(SCHEMA_3)?;
            canonical_keys(&tx)?;
        }
        2 => {
            tx.execute_batch(SCHEMA_3)?;
            canonical_keys(&tx)?;
        }
        3 => canonical_keys(&tx)?,
        _ => return Ok(()),
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.commit()?;
    Ok(())
}

/// Version 4: every service IBI and every IBI of the location memory, the conflicts and
/// the forgotten entries keyed by [`key_of`].
///
/// An Archive whose row changes keeps the spelling it was asked at (`spelling`, when
/// it had none). Rows that become one: of the Archives, the one already spelt as the
/// key is kept — the only one version 3 found, by key check, inclusion, exclusion or
/// unregistration — and the others dropped; when none is, [`Upgrade::Collision`]. Of
/// the locations, the most recently used; of the conflicts of one IBI and claimant,
/// one with the first and last times of all, their times summed and the holder of the
/// latest.
fn canonical_keys(tx: &Connection) -> Result<(), Upgrade> {
    use std::collections::BTreeMap;
    let mut archives: BTreeMap<String, Vec<String>> = BTreeMap::new();
    {
        let mut stmt = tx.prepare("SELECT serviceibi FROM archives ORDER BY serviceibi")?;
        for row in stmt.query_map([], |r| r.get::<_, String>(0))? {
            let kept = row?;
            archives.entry(key_of(&kept)).or_default().push(kept);
        }
    }
    for (key, spellings) in archives {
        match spellings.as_slice() {
            [one] if *one == key => {}
            [one] => {
                tx.execute(
                    "UPDATE archives SET serviceibi = ?1, spelling = coalesce(spelling, ?2)
                     WHERE serviceibi = ?2",
                    params![key, one],
                )?;
            }
            several if several.contains(&key) => {
                for other in several.iter().filter(|s| **s != key) {
                    tx.execute("DELETE FROM archives WHERE serviceibi = ?1", [other])?;
                }
            }
            _ => return Err(Upgrade::Collision { key, spellings }),
        }
    }

    // (archive, used, verified) by IBI, the most recently used of those that merge.
    let mut locations: BTreeMap<String, (String, i64, i64)> = BTreeMap::new();
    let mut changed = false;
    {
        let mut stmt =
            tx.prepare("SELECT ibi, archive, used, verified FROM locations ORDER BY ibi")?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
            ))
        })?;
        for row in rows {
            let (ibi, archive, used, verified) = row?;
            let (ibi_k, archive_k) = (key_of(&ibi), key_of(&archive));
            changed |= ibi_k != ibi || archive_k != archive;
            match locations.get(&ibi_k) {
                Some((_, kept_used, _)) if *kept_used >= used => {}
                _ => {
                    locations.insert(ibi_k, (archive_k, used, verified));
                }
            }
        }
    }
    if changed {
        tx.execute("DELETE FROM locations", [])?;
        let mut insert = tx.prepare(
            "INSERT INTO locations (ibi, archive, used, verified) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for (ibi, (archive, used, verified)) in &locations {
            insert.execute(params![ibi, archive, used, verified])?;
        }
    }

    // (holder, first, last, times) by (IBI, claimant).
    type Merged = (String, i64, i64, i64);
    let mut conflicts: BTreeMap<(String, String), Merged> = BTreeMap::new();
    let mut changed = false;
    {
        let mut stmt = tx.prepare(
            "SELECT ibi, holder, claimant, first, last, times FROM conflicts ORDER BY ibi, claimant",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, i64>(5)?,
            ))
        })?;
        for row in rows {
            let (ibi, holder, claimant, first, last, times) = row?;
            let keys = (key_of(&ibi), key_of(&holder), key_of(&claimant));
            changed |= keys.0 != ibi || keys.1 != holder || keys.2 != claimant;
            let (ibi, holder, claimant) = keys;
            let merged = conflicts
                .entry((ibi, claimant))
                .or_insert_with(|| (holder.clone(), first, last, 0));
            if last > merged.2 {
                merged.0 = holder;
            }
            merged.1 = merged.1.min(first);
            merged.2 = merged.2.max(last);
            merged.3 += times;
        }
    }
    if changed {
        tx.execute("DELETE FROM conflicts", [])?;
        let mut insert = tx.prepare(
            "INSERT INTO conflicts (ibi, holder, claimant, first, last, times)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for ((ibi, claimant), (holder, first, last, times)) in &conflicts {
            insert.execute(params![ibi, holder, claimant, first, last, times])?;
        }
    }

    let forgotten: Vec<(i64, String)> = tx
        .prepare("SELECT id, ibi FROM forgotten")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (id, ibi) in forgotten {
        let key = key_of(&ibi);
        if key != ibi {
            tx.execute(
                "UPDATE forgotten SET ibi = ?2 WHERE id = ?1",
                params![id, key],
            )?;
        }
    }
    Ok(())
}

pub struct Registry {
    conn: Conn,
    /// The time of day of its dates.
    clock: Arc<dyn Clock>,
}

mod embedded {
    refinery::embed_migrations!("migrations");
}

/// The key of the PostgreSQL advisory lock the resolvers of one database take in turn to
/// bring its schema up to date ("ibi-reg" in ASCII).
const MIGRATION_LOCK: i64 = 0x0069_6269_2d72_6567;

impl From<StoreError> for RegistryError {
    fn from(e: StoreError) -> RegistryError {
        match e.kind {
            StoreErrorKind::ReadOnly => RegistryError::new(
                RegistryErrorKind::ReadOnly,
                format!("registry: {e} ({WRITABLE})"),
            ),
            StoreErrorKind::Unreachable => RegistryError::new(
                RegistryErrorKind::Unreachable,
                format!("registry unreachable: {e}"),
            ),
            StoreErrorKind::Duplicate => {
                RegistryError::new(RegistryErrorKind::Duplicate, format!("registry: {e}"))
            }
            _ => RegistryError::new(RegistryErrorKind::Database, format!("registry: {e}")),
        }
    }
}

impl Registry {
    /// The same registry, its dates written by `clock`.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Registry {
        self.clock = clock;
        self
    }

    /// Now, as the registry writes its dates (ISO 8601 UTC).
    fn now(&self) -> String {
        ibi::time::iso8601(self.clock.now())
    }

    /// Opens the registry of `database`, creating its schema, or bringing it up to date,
    /// when needed (an SQLite file is made, mode 0600, when there is none).
    pub fn open(database: &Database) -> Result<Registry, RegistryError> {
        let conn = match database {
            Database::Sqlite(path) => Conn::Sqlite(open_sqlite(path)?),
            Database::Postgres(uri) => Conn::Postgres(Box::new(open_postgres(uri, database)?)),
        };
        Ok(Registry {
            conn,
            clock: clock::system(),
        })
    }

    /// Registers an Archive with its key (stored hashed) and its administrator's e-mail.
    pub fn register(
        &mut self,
        serviceibi: &Ibi,
        email: &str,
        key: &str,
    ) -> Result<(), RegistryError> {
        let id = serviceibi.key();
        let hash = hash_key(key)?;
        let now = self.now();
        self.conn.transaction(|tx| {
            let n = tx.execute(
                "INSERT INTO archives (serviceibi, keyhash, email, registered)
                 VALUES (?1, ?2, ?3, ?4) ON CONFLICT (serviceibi) DO NOTHING",
                values![&id, hash, email, now],
            )?;
            if n == 0 {
                return Err(RegistryError::new(
                    RegistryErrorKind::AlreadyRegistered,
                    format!("{id} is already registered (unregister it first to change its key)"),
                ));
            }
            tx.notify(REGISTRY_CHANNEL, "")?;
            Ok(())
        })
    }

    /// Forgets an Archive; `false` when it was not registered.
    pub fn unregister(&mut self, serviceibi: &Ibi) -> Result<bool, RegistryError> {
        self.conn.transaction(|tx| {
            let n = tx.execute(
                "DELETE FROM archives WHERE serviceibi = ?1",
                values![serviceibi.key()],
            )?;
            tx.notify(REGISTRY_CHANNEL, "")?;
            Ok(n == 1)
        })
    }

    /// Every registered Archive, by service IBI.
    pub fn list(&mut self) -> Result<Vec<ArchiveRecord>, RegistryError> {
        let rows = self.conn.query(
            "SELECT serviceibi, email, registered, address, ip, platformversion, included,
                    confirmation, changed, lastsuccess, failures, latencyms, dormant,
                    (SELECT count(*) FROM conflicts WHERE claimant = archives.serviceibi),
                    moves, movedat, movedfrom, movesrefused
             FROM archives ORDER BY serviceibi",
            &[],
        )?;
        rows.iter()
            .map(|r| {
                Ok(ArchiveRecord {
                    serviceibi: r.text(0)?,
                    email: r.text(1)?,
                    registered: r.text(2)?,
                    address: r.opt_text(3)?,
                    ip: r.opt_text(4)?,
                    platformversion: r.opt_text(5)?,
                    included: r.int(6)? != 0,
                    confirmation: r.opt_text(7)?,
                    changed: r.opt_text(8)?,
                    lastsuccess: r.opt_text(9)?,
                    failures: r.int(10)?,
                    latencyms: r.opt_real(11)?,
                    dormant: r.int(12)? != 0,
                    conflicts: r.int(13)?,
                    moves: r.int(14)?,
                    movedat: r.opt_text(15)?,
                    movedfrom: r.opt_text(16)?,
                    movesrefused: r.int(17)?,
                })
            })
            .collect::<Result<_, StoreError>>()
            .map_err(Into::into)
    }

    /// The included Archives, as resolutions ask them.
    pub fn included(&mut self) -> Result<Vec<Included>, RegistryError> {
        let rows = self.conn.query(
            "SELECT coalesce(spelling, serviceibi), address, failures, dormant, latencyms,
                    serviceibi, CASE WHEN ipreached = 1 THEN ip END
             FROM archives WHERE included = 1 AND address IS NOT NULL ORDER BY serviceibi",
            &[],
        )?;
        rows.iter()
            .map(|r| {
                Ok(Included {
                    key: r.text(5)?,
                    serviceibi: spelt_ibi(r.text(0)?)?,
                    address: r.text(1)?,
                    ip: r.opt_text(6)?.and_then(|ip| ip.parse().ok()),
                    recorded: Snapshot {
                        failures: r.int(2)?.clamp(0, u32::MAX as i64) as u32,
                        dormant: r.int(3)? != 0,
                        last_success_ms: 0,
                        latency_us: r.opt_real(4)?.map_or(0, |ms| (ms * 1000.0).max(0.0) as u64),
                    },
                })
            })
            .collect::<Result<_, RegistryError>>()
    }

    /// The stored key hash of an Archive, if registered.
    pub fn key_hash(&mut self, serviceibi: &Ibi) -> Result<Option<String>, RegistryError> {
        match self.conn.query_one(
            "SELECT keyhash FROM archives WHERE serviceibi = ?1",
            values![serviceibi.key()],
        )? {
            Some(r) => Ok(Some(r.text(0)?)),
            None => Ok(None),
        }
    }

    /// Where the Archive is recorded (`None`: it is not registered).
    pub fn place(&mut self, serviceibi: &Ibi) -> Result<Option<Place>, RegistryError> {
        let row = self.conn.query_one(
            "SELECT address, included FROM archives WHERE serviceibi = ?1",
            values![serviceibi.key()],
        )?;
        Ok(match row {
            Some(r) => Some(Place {
                address: r.opt_text(0)?,
                included: r.int(1)? != 0,
            }),
            None => None,
        })
    }

    /// Records an inclusion (the Archive must be registered), and, when it is at another
    /// address than the one recorded, a move: counted, its time and the address it left
    /// kept. The address left, when it moved.
    pub fn include(
        &mut self,
        serviceibi: &Ibi,
        inc: &Inclusion<'_>,
    ) -> Result<Option<String>, RegistryError> {
        let now = self.now();
        self.conn.transaction(|tx| {
            // Read under the transaction's lock (SQLite's write lock from its start, the
            // row's on PostgreSQL), so that the move counted is the one written.
            let lock = if tx.is_postgres() { " FOR UPDATE" } else { "" };
            let old = tx
                .query_one(
                    &format!("SELECT address FROM archives WHERE serviceibi = ?1{lock}"),
                    values![serviceibi.key()],
                )?
                .map(|r| r.opt_text(0))
                .transpose()?
                .flatten();
            let moved_from = old.filter(|old| is_another_address(old, inc.address));
            if let Some(from) = &moved_from {
                tx.execute(
                    "UPDATE archives SET moves = moves + 1, movedat = ?2, movedfrom = ?3
                     WHERE serviceibi = ?1",
                    values![serviceibi.key(), &now, from],
                )?;
            }
            let n = tx.execute(
                "UPDATE archives SET address = ?2, ip = ?3, platformversion = ?4,
                        reportedemail = ?5, included = 1, confirmation = ?6, changed = ?7,
                        failures = 0, dormant = 0, spelling = ?8, ipreached = ?9,
                        lastsuccess = CASE WHEN ?6 = 'successful' THEN ?7 ELSE lastsuccess END
                 WHERE serviceibi = ?1",
                values![
                    serviceibi.key(),
                    inc.address,
                    inc.ip,
                    inc.platformversion,
                    inc.email,
                    if inc.confirmed {
                        "successful"
                    } else {
                        "unsuccessful"
                    },
                    now,
                    serviceibi.as_str(),
                    i64::from(inc.ip_reached)
                ],
            )?;
            one_row(n, serviceibi)?;
            tx.notify(REGISTRY_CHANNEL, "")?;
            Ok(moved_from)
        })
    }

    /// Counts a move refused: an inclusion at another address while the Archive still
    /// answered at the one recorded.
    pub fn refuse_move(&mut self, serviceibi: &Ibi) -> Result<(), RegistryError> {
        self.conn.transaction(|tx| {
            let n = tx.execute(
                "UPDATE archives SET movesrefused = movesrefused + 1 WHERE serviceibi = ?1",
                values![serviceibi.key()],
            )?;
            one_row(n, serviceibi)
        })
    }

    /// Records what resolutions learnt of Archives' health (`archive` as resolutions
    /// spell it), in one transaction. Archives no longer registered are skipped.
    pub fn record_health(&mut self, changes: &[(String, Snapshot)]) -> Result<(), RegistryError> {
        self.conn.transaction(|tx| {
            for (archive, h) in changes {
                let last =
                    (h.last_success_ms > 0).then(|| ibi::time::iso8601(h.last_success_ms / 1000));
                let latency =
                    (h.latency_us > 0).then_some(Value::Real(h.latency_us as f64 / 1000.0));
                tx.execute(
                    "UPDATE archives SET failures = ?2, dormant = ?3,
                            latencyms = coalesce(?4, latencyms),
                            lastsuccess = coalesce(?5, lastsuccess)
                     WHERE coalesce(spelling, serviceibi) = ?1",
                    &[
                        Value::from(archive),
                        Value::Int(h.failures.into()),
                        Value::Int(h.dormant.into()),
                        latency.unwrap_or(Value::Null),
                        Value::from(last),
                    ],
                )?;
            }
            Ok(())
        })
    }

    /// Copies the whole registry into `dest` (a new, empty database) with SQLite's
    /// online backup, safe while a server uses the registry and writes to it. All pages
    /// are copied in one step, inside one read transaction: in WAL mode that snapshot
    /// holds up no writer, and a copy made in smaller steps would start again at every
    /// change another connection commits, never ending under a steady load of
    /// resolutions (each writes the location memory). `dest` gets the registry as it was
    /// at one commit, in WAL mode as the registry is. A registry in PostgreSQL is backed
    /// up with PostgreSQL's own tools.
    pub fn backup_to(&self, dest: &mut Connection) -> Result<(), RegistryError> {
        use rusqlite::backup::{Backup, StepResult};
        let Conn::Sqlite(conn) = &self.conn else {
            return Err(RegistryError::new(
                RegistryErrorKind::Database,
                "the registry is in PostgreSQL: back it up with pg_dump (or the cluster's own backups)",
            ));
        };
        let backup = Backup::new(conn, dest)?;
        let deadline = Instant::now() + BUSY_WAIT;
        loop {
            match backup.step(-1)? {
                StepResult::Done => return Ok(()),
                StepResult::Busy | StepResult::Locked if Instant::now() >= deadline => {
                    return Err(RegistryError::new(
                        RegistryErrorKind::Database,
                        format!(
                            "registry: still locked by another connection after {} s",
                            BUSY_WAIT.as_secs()
                        ),
                    ))
                }
                StepResult::Busy | StepResult::Locked => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                _ => {}
            }
        }
    }

    /// The remembered locations (of `ibi` only, when given), most recently used first.
    pub fn locations(&mut self, ibi: Option<&str>) -> Result<Vec<Location>, RegistryError> {
        let rows = match ibi {
            Some(ibi) => self.conn.query(
                "SELECT ibi, archive, used, verified FROM locations WHERE ibi = ?1",
                values![ibi],
            )?,
            None => self.conn.query(
                "SELECT ibi, archive, used, verified FROM locations ORDER BY used DESC, ibi",
                &[],
            )?,
        };
        rows.iter()
            .map(|r| {
                Ok(Location {
                    ibi: r.text(0)?,
                    archive: r.text(1)?,
                    used_ms: r.int(2)?,
                    verified_ms: r.int(3)?,
                })
            })
            .collect::<Result<_, StoreError>>()
            .map_err(Into::into)
    }

    /// Forgets the remembered location of `ibi` (a key), and notes it for running
    /// servers to drop from their memory; `false` when the table did not hold it.
    pub fn forget_location(&mut self, ibi: &str) -> Result<bool, RegistryError> {
        // Two forgets at once on PostgreSQL may take the same number: the second is
        // made again, after the first.
        let mut tries = 0;
        loop {
            match self.forget_location_once(ibi) {
                Err(e) if e.kind() == RegistryErrorKind::Duplicate && tries < 3 => tries += 1,
                done => return done,
            }
        }
    }

    fn forget_location_once(&mut self, ibi: &str) -> Result<bool, RegistryError> {
        let now = clock::millis(&*self.clock);
        self.conn.transaction(|tx| {
            let n = tx.execute("DELETE FROM locations WHERE ibi = ?1", values![ibi])?;
            // Noted even when the table did not hold it: a server may not have written it yet.
            tx.execute(
                "INSERT INTO forgotten (id, ibi, at)
                 SELECT coalesce(max(id), 0) + 1, ?1, ?2 FROM forgotten",
                values![ibi, now],
            )?;
            tx.execute(
                "DELETE FROM forgotten
                 WHERE at < ?1 AND id < (SELECT max(id) FROM forgotten)",
                values![now - FORGOTTEN_KEPT_MS],
            )?;
            tx.notify(REGISTRY_CHANNEL, "")?;
            Ok(n > 0)
        })
    }

    /// The newest note of [`Registry::forget_location`] (0: none).
    pub fn last_forgotten(&mut self) -> Result<i64, RegistryError> {
        let row = self
            .conn
            .query_one("SELECT coalesce(max(id), 0) FROM forgotten", &[])?;
        Ok(row.map_or(Ok(0), |r| r.int(0))?)
    }

    /// The IBIs forgotten after note `id`, and the newest note.
    pub fn forgotten_after(&mut self, id: i64) -> Result<(Vec<String>, i64), RegistryError> {
        let rows = self.conn.query(
            "SELECT id, ibi FROM forgotten WHERE id > ?1 ORDER BY id",
            values![id],
        )?;
        let mut last = id;
        let mut ibis = Vec::new();
        for r in rows {
            last = last.max(r.int(0)?);
            ibis.push(r.text(1)?);
        }
        Ok((ibis, last))
    }

    /// Records an exclusion: the Archive stays registered and is asked no more.
    pub fn exclude(&mut self, serviceibi: &Ibi) -> Result<(), RegistryError> {
        let now = self.now();
        self.conn.transaction(|tx| {
            let n = tx.execute(
                "UPDATE archives SET included = 0, changed = ?2 WHERE serviceibi = ?1",
                values![serviceibi.key(), now],
            )?;
            one_row(n, serviceibi)?;
            tx.notify(REGISTRY_CHANNEL, "")?;
            Ok(())
        })
    }

    /// The connection, for the work of this crate that goes beyond the registry's own
    /// (moving a registry into another database).
    pub fn conn(&mut self) -> &mut Conn {
        &mut self.conn
    }
}

/// Brings the schema of a registry up to date with the migrations (`migrations/`), one
/// opener at a time.
fn migrate(conn: &mut Conn, shown: &str) -> Result<(), RegistryError> {
    let failed = |e: refinery::Error| {
        RegistryError::new(
            RegistryErrorKind::Unusable,
            format!("{shown}: cannot bring the registry's schema up to date: {e}"),
        )
    };
    let runner = embedded::migrations::runner();
    match conn {
        Conn::Sqlite(c) => runner.run(c).map(|_| ()).map_err(failed),
        Conn::Postgres(p) => runner.run(p.client()?).map(|_| ()).map_err(failed),
    }
}

/// Opens the SQLite registry at `path`, creating it (mode 0600: it holds key hashes)
/// when it does not exist, and brings its schema up to date.
fn open_sqlite(path: &Path) -> Result<Connection, RegistryError> {
    let shown = path.display();
    {
        use std::os::unix::fs::OpenOptionsExt;
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(path)
        {
            Ok(_) => {}
            // create_new: a symbolic link there, even to nothing, is AlreadyExists;
            // the open below refuses it.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(RegistryError::new(
                    RegistryErrorKind::Unopenable,
                    format!("{shown}: cannot create: {e}"),
                ))
            }
        }
    }
    // Never through a symbolic link: whoever may write in the registry's directory
    // cannot have the resolver, or init run as root, open another file.
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(RegistryError::new(
            RegistryErrorKind::Unopenable,
            format!("{shown}: is a symbolic link: name the registry's own file"),
        ));
    }
    let flags = rusqlite::OpenFlags::default() | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let mut conn = Connection::open_with_flags(path, flags).map_err(|e| {
        RegistryError::new(
            RegistryErrorKind::Unopenable,
            format!("{shown}: cannot open: {e}"),
        )
    })?;
    let fail = |e: rusqlite::Error| {
        RegistryError::new(RegistryErrorKind::Database, format!("{shown}: {e}"))
    };
    let foreign = || {
        RegistryError::new(
            RegistryErrorKind::Unusable,
            format!("{shown}: holds tables but is not a resolver registry"),
        )
    };
    conn.busy_timeout(BUSY_WAIT).map_err(fail)?;
    let check: String = conn
        .query_row("PRAGMA quick_check", [], |r| r.get(0))
        .map_err(|e| match e.sqlite_error_code() {
            // A registry in WAL mode needs to write beside itself even to be read.
            Some(
                rusqlite::ErrorCode::ReadOnly
                | rusqlite::ErrorCode::CannotOpen
                | rusqlite::ErrorCode::PermissionDenied,
            ) => RegistryError::new(
                RegistryErrorKind::Unopenable,
                format!("{shown}: cannot be opened for writing: {e} ({WRITABLE})"),
            ),
            _ => RegistryError::new(
                RegistryErrorKind::Unusable,
                format!("{shown}: not a usable SQLite database: {e}"),
            ),
        })?;
    if check != "ok" {
        return Err(RegistryError::new(
            RegistryErrorKind::Unusable,
            format!("{shown}: database is damaged: {check}"),
        ));
    }
    // A file cut short mid-page passes quick_check: SQLite reads the missing bytes
    // as zeros. Pages are only ever written whole.
    let page_size: u64 = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .map_err(fail)?;
    let len = std::fs::metadata(path)
        .map_err(|e| RegistryError::new(RegistryErrorKind::Database, format!("{shown}: {e}")))?
        .len();
    if page_size > 0 && len % page_size != 0 {
        return Err(RegistryError::new(RegistryErrorKind::Unusable, format!(
            "{shown}: database is damaged: {len} bytes, not a whole number of {page_size}-byte pages"
        )));
    }
    let (version, tables) = version_and_tables(&mut conn).map_err(fail)?;
    if !(0..=SCHEMA_VERSION).contains(&version) {
        return Err(RegistryError::new(
            RegistryErrorKind::Unusable,
            format!("{shown}: schema version {version}; this resolver knows {SCHEMA_VERSION}"),
        ));
    }
    if version < SCHEMA_VERSION {
        if version == 0 {
            // Another program's database is refused before anything is changed in it.
            if tables {
                return Err(foreign());
            }
            // WAL needs write access; a read-only file fails here, clearly.
            switch_to_wal(&conn).map_err(fail)?;
        }
        upgrade(&mut conn).map_err(|e| match e {
            Upgrade::Foreign => foreign(),
            Upgrade::Collision { key, spellings } => RegistryError::new(RegistryErrorKind::Unusable, format!(
                "{shown}: schema version {version} cannot be upgraded to {SCHEMA_VERSION}, which keeps one registration per service IBI: {} are registered apart and are one IBI, {key}; delete the rows of all but the one to keep, e.g. sqlite3 {shown} \"DELETE FROM archives WHERE serviceibi = '{}'\"",
                spellings.join(" and "),
                spellings[0]
            )),
            Upgrade::Failed(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ReadOnly) => {
                RegistryError::new(RegistryErrorKind::ReadOnly, format!(
                    "{shown}: schema version {version} must be upgraded to {SCHEMA_VERSION}, which needs to write: {e} ({WRITABLE})"
                ))
            }
            Upgrade::Failed(e) => fail(e),
        })?;
    }
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(fail)?;
    // The migrations, one opener at a time: the lock of the registry's directory (a
    // lock of the file itself would be SQLite's own, released by any close of it).
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let dir = std::fs::File::open(dir)
        .map_err(|e| RegistryError::new(RegistryErrorKind::Unopenable, format!("{shown}: {e}")))?;
    rustix::fs::flock(&dir, rustix::fs::FlockOperation::LockExclusive)
        .map_err(|e| RegistryError::new(RegistryErrorKind::Database, format!("{shown}: {e}")))?;
    let mut conn = Conn::Sqlite(conn);
    let migrated = migrate(&mut conn, &shown.to_string());
    drop(dir);
    migrated?;
    let Conn::Sqlite(conn) = conn else {
        unreachable!("made above")
    };
    Ok(conn)
}

/// Connects to the registry in PostgreSQL at `uri` and brings its schema up to date,
/// under an advisory lock: of resolvers started together, one migrates and the others
/// wait, then find the work done. A database that holds other tables and no registry
/// is refused before anything is written in it.
fn open_postgres(uri: &str, database: &Database) -> Result<PgConn, RegistryError> {
    let shown = database.to_string();
    let mut conn = Conn::Postgres(Box::new(PgConn::connect(uri, "registry").map_err(|e| {
        RegistryError::new(
            RegistryErrorKind::Unreachable,
            format!("{shown}: cannot connect: {e}"),
        )
    })?));
    conn.execute("SELECT pg_advisory_lock(?1)", values![MIGRATION_LOCK])?;
    let migrated = (|| {
        let tables = conn.query(
            "SELECT table_name FROM information_schema.tables
             WHERE table_schema = current_schema()",
            &[],
        )?;
        let names: Vec<String> = tables.iter().map(|r| r.text(0)).collect::<Result<_, _>>()?;
        if !names.is_empty() && !names.iter().any(|n| n == "refinery_schema_history") {
            return Err(RegistryError::new(
                RegistryErrorKind::Unusable,
                format!("{shown}: holds tables but is not a resolver registry"),
            ));
        }
        migrate(&mut conn, &shown)
    })();
    let unlocked = conn.execute("SELECT pg_advisory_unlock(?1)", values![MIGRATION_LOCK]);
    migrated?;
    unlocked?;
    let Conn::Postgres(p) = conn else {
        unreachable!("made above")
    };
    Ok(*p)
}

/// A service IBI as the registry holds it, read back.
fn spelt_ibi(spelling: String) -> Result<Ibi, RegistryError> {
    Ibi::parse(&spelling).map_err(|e| {
        RegistryError::new(
            RegistryErrorKind::Database,
            format!("registry: {spelling:?} is no IBI: {e}"),
        )
    })
}

/// An update of one Archive's row: it must have been there.
fn one_row(changed: u64, serviceibi: &Ibi) -> Result<(), RegistryError> {
    if changed == 1 {
        Ok(())
    } else {
        Err(RegistryError::new(
            RegistryErrorKind::NotRegistered,
            format!("{} is no longer registered", serviceibi.key()),
        ))
    }
}

/// The argon2id hash (PHC string, random salt) of a registration key.
pub fn hash_key(key: &str) -> Result<String, RegistryError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(key.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| {
            RegistryError::new(
                RegistryErrorKind::Database,
                format!("cannot hash the key: {e}"),
            )
        })
}

/// The key of [`dummy_hash`].
const DUMMY_KEY: &str = "0000000000";

/// The hash an unregistered Archive's key is checked against: of a fixed key, made as
/// [`hash_key`] makes every registered one (same algorithm and parameters).
fn dummy_hash() -> &'static str {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DUMMY.get_or_init(|| hash_key(DUMMY_KEY).unwrap_or_default())
}

/// Whether `key` matches `hash`. With no hash (an unregistered Archive) a hash of a
/// fixed key is checked instead, so both refusals take the same time.
pub fn verify_key(key: &str, hash: Option<&str>) -> bool {
    let (stored, real) = match hash {
        Some(h) => (h, true),
        None => (dummy_hash(), false),
    };
    let Ok(parsed) = PasswordHash::new(stored) else {
        return false;
    };
    let matches = Argon2::default()
        .verify_password(key.as_bytes(), &parsed)
        .is_ok();
    #[cfg(test)]
    tests::VERIFIED.with(|v| v.borrow_mut().push((stored.to_string(), matches)));
    matches && real
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::{registries, TestRegistry};

    /// The SQLite registry at `path`.
    fn open(path: &Path) -> Result<Registry, RegistryError> {
        Registry::open(&Database::Sqlite(path.to_path_buf()))
    }

    std::thread_local! {
        /// The hashes [`verify_key`] had argon2 verify a key against on this thread, and
        /// whether the key matched.
        pub(super) static VERIFIED: std::cell::RefCell<Vec<(String, bool)>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }

    /// What `verify_key(key, hash)` answered, and the verifications argon2 made for it.
    fn verified(key: &str, hash: Option<&str>) -> (bool, Vec<(String, bool)>) {
        VERIFIED.with(|v| v.borrow_mut().clear());
        let answer = verify_key(key, hash);
        (answer, VERIFIED.with(|v| v.take()))
    }

    /// An unregistered Archive's key (no hash) and a wrong key are refused after the same
    /// work: one argon2 verification each, against a hash made the same way. (The time is
    /// not measured: the work is.)
    #[test]
    fn an_unregistered_archive_and_a_wrong_key_cost_the_same_argon2_verification() {
        let hash = hash_key("1234567890").unwrap();
        let dummy = dummy_hash().to_string();
        assert_eq!(
            verified("9999999999", Some(&hash)),
            (false, vec![(hash.clone(), false)])
        );
        assert_eq!(
            verified("1234567890", Some(&hash)),
            (true, vec![(hash.clone(), true)])
        );
        assert_eq!(
            verified("1234567890", None),
            (false, vec![(dummy.clone(), false)])
        );
        // argon2 did verify the dummy hash: it found the one key it was made of, which
        // still registers nothing.
        assert_eq!(
            verified(DUMMY_KEY, None),
            (false, vec![(dummy.clone(), true)])
        );
        // A registry that cannot be read gives no hash: the same work again.
        assert_eq!(
            verified("9999999999", None),
            (false, vec![(dummy.clone(), false)])
        );
        // The same algorithm, version and parameters (memory, passes, lanes) as a
        // registered key's hash; only the salt and the hash differ.
        let (d, h) = (
            PasswordHash::new(&dummy).unwrap(),
            PasswordHash::new(&hash).unwrap(),
        );
        assert_eq!(d.algorithm.as_str(), "argon2id");
        assert_eq!(
            (d.algorithm, d.version, d.params.to_string()),
            (h.algorithm, h.version, h.params.to_string())
        );
        assert_ne!(d.salt, h.salt);
    }

    #[test]
    fn register_include_exclude_unregister() {
        for TestRegistry { database, .. } in registries() {
            let ibi = Ibi::parse("sid.inpe.br/mtc-m21/2012/06.05.15.34.39").unwrap();
            {
                let mut r = Registry::open(&database).unwrap();
                r.register(&ibi, "banon@dpi.inpe.br", "1234567890").unwrap();
                assert!(r.register(&ibi, "x@y", "1234567890").is_err());
                let hash = r.key_hash(&ibi).unwrap().unwrap();
                assert!(hash.starts_with("$argon2id$"), "{hash}");
                assert!(!hash.contains("1234567890"));
                assert!(verify_key("1234567890", Some(&hash)));
                assert!(!verify_key("1234567891", Some(&hash)));
                assert!(!verify_key("0000000000", None));
                assert!(r.included().unwrap().is_empty());
                r.include(
                    &ibi,
                    &Inclusion {
                        address: "mtc-m21.sid.inpe.br",
                        ip: "150.163.34.239",
                        platformversion: "2014:11.09.02.16.15",
                        email: "banon@dpi.inpe.br",
                        confirmed: false,
                        ip_reached: false,
                    },
                )
                .unwrap();
            }
            let mut r = Registry::open(&database).unwrap();
            assert_eq!(
                r.included().unwrap(),
                vec![Included {
                    key: "sid.inpe.br/mtc-m21/2012/06.05.15.34.39".into(),
                    serviceibi: Ibi::parse("sid.inpe.br/mtc-m21/2012/06.05.15.34.39").unwrap(),
                    address: "mtc-m21.sid.inpe.br".into(),
                    ip: None,
                    recorded: Snapshot::default(),
                }]
            );
            let rec = &r.list().unwrap()[0];
            assert_eq!(rec.confirmation.as_deref(), Some("unsuccessful"));
            r.exclude(&ibi).unwrap();
            assert!(r.included().unwrap().is_empty());
            assert!(r.list().unwrap()[0].address.is_some());
            assert!(r.unregister(&ibi).unwrap());
            assert!(!r.unregister(&ibi).unwrap());
            if let Some(path) = database.path() {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode, 0o600);
            }
        }
    }

    #[test]
    fn an_inclusion_at_another_address_is_a_move_counted_with_the_address_left() {
        for TestRegistry { database, .. } in registries() {
            let ibi = Ibi::parse("sid.inpe.br/mtc-m21/2012/06.05.15.34.39").unwrap();
            let mut r = Registry::open(&database).unwrap();
            r.register(&ibi, "banon@dpi.inpe.br", "1234567890").unwrap();
            let at = |address: &'static str| Inclusion {
                address,
                ip: "150.163.34.239",
                platformversion: "1",
                email: "banon@dpi.inpe.br",
                confirmed: true,
                ip_reached: false,
            };
            let moves = |r: &mut Registry| {
                let a = &r.list().unwrap()[0];
                (
                    a.moves,
                    a.movedfrom.clone(),
                    a.movedat.is_some(),
                    a.movesrefused,
                )
            };
            assert_eq!(
                r.place(&ibi).unwrap(),
                Some(Place {
                    address: None,
                    included: false
                })
            );
            // The first inclusion, and one at the same address in another case: no move.
            assert_eq!(r.include(&ibi, &at("a.example.org:8080")).unwrap(), None);
            assert_eq!(r.include(&ibi, &at("A.example.org:8080")).unwrap(), None);
            assert_eq!(moves(&mut r), (0, None, false, 0));
            let place = r.place(&ibi).unwrap().unwrap();
            assert_eq!(place.moving_from("a.EXAMPLE.org:8080"), None);
            assert_eq!(
                place.moving_from("b.example.org"),
                Some("A.example.org:8080")
            );
            // Included elsewhere: a move, counted, the address it left kept.
            assert_eq!(
                r.include(&ibi, &at("b.example.org")).unwrap().as_deref(),
                Some("A.example.org:8080")
            );
            assert_eq!(
                moves(&mut r),
                (1, Some("A.example.org:8080".to_string()), true, 0)
            );
            // Excluded, it moves freely, and the move is still one.
            r.exclude(&ibi).unwrap();
            assert_eq!(
                r.place(&ibi).unwrap().unwrap().moving_from("c.example.org"),
                None
            );
            assert_eq!(
                r.include(&ibi, &at("c.example.org")).unwrap().as_deref(),
                Some("b.example.org")
            );
            r.refuse_move(&ibi).unwrap();
            assert_eq!(
                moves(&mut r),
                (2, Some("b.example.org".to_string()), true, 1)
            );
            // Unregistered: nowhere.
            r.unregister(&ibi).unwrap();
            assert_eq!(r.place(&ibi).unwrap(), None);
            assert!(r.refuse_move(&ibi).is_err());
        }
    }

    #[test]
    fn a_file_that_is_not_a_registry_is_refused_clearly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.sqlite");
        std::fs::write(
            &path,
            b"not a database at all, just text that is long enough to matter",
        )
        .unwrap();
        let e = open(&path).err().unwrap().to_string();
        assert!(e.contains("not a usable SQLite database"), "{e}");
    }

    /// A registry whose name is a symbolic link is refused, whether the link leads to a
    /// registry or to nothing yet: the registry is opened by its own name only, so that
    /// whoever may write in its directory cannot have the resolver (or `init`, run as
    /// root) open or make another file through a link put there.
    #[test]
    fn a_registry_that_is_a_symbolic_link_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.sqlite");
        open(&real).unwrap();
        let link = dir.path().join("r.sqlite");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let e = open(&link).err().unwrap();
        assert_eq!(e.kind, RegistryErrorKind::Unopenable, "{e}");
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        let dangling = dir.path().join("d.sqlite");
        std::os::unix::fs::symlink(dir.path().join("elsewhere.sqlite"), &dangling).unwrap();
        let e = open(&dangling).err().unwrap();
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        assert!(!dir.path().join("elsewhere.sqlite").exists());
    }

    /// The tables of version 1, as the resolver of that version made them (the history
    /// an old registry is upgraded from; new registries are made by the migrations).
    const SCHEMA: &str = "
CREATE TABLE archives (
    serviceibi      TEXT PRIMARY KEY NOT NULL,
    -- The service IBI as the Archive spells it in its inclusion request: the path at
    -- which it is asked (a rep's canonical spelling may differ, e.g. without @80).
    spelling        TEXT,
    keyhash         TEXT NOT NULL,
    email           TEXT NOT NULL,
    registered      TEXT NOT NULL,
    address         TEXT,
    ip              TEXT,
    platformversion TEXT,
    reportedemail   TEXT,
    included        INTEGER NOT NULL DEFAULT 0,
    confirmation    TEXT,
    changed         TEXT,
    lastsuccess     TEXT,
    failures        INTEGER NOT NULL DEFAULT 0,
    latencyms       INTEGER
);
";

    /// A registry as version 1 of the resolver left it: one Archive, included.
    fn version_1(path: &Path) {
        let conn = Connection::open(path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.execute_batch(&format!(
            "BEGIN; {SCHEMA} PRAGMA user_version = 1; COMMIT;
             INSERT INTO archives (serviceibi, keyhash, email, registered, address, included, failures)
             VALUES ('urlib.net/www/2012/01.01.01.01', 'h', 'a@example.org', '2025-01-01', 'a.example.org', 1, 3);"
        ))
        .unwrap();
    }

    #[test]
    fn a_version_1_registry_is_upgraded_keeping_its_archives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.sqlite");
        version_1(&path);
        let mut r = open(&path).unwrap();
        assert_eq!(
            r.included().unwrap(),
            vec![Included {
                key: "urlib.net/www/2012/01.01.01.01".into(),
                serviceibi: Ibi::parse("urlib.net/www/2012/01.01.01.01").unwrap(),
                address: "a.example.org".into(),
                ip: None,
                recorded: Snapshot {
                    failures: 3,
                    ..Snapshot::default()
                },
            }]
        );
        let version = r
            .conn
            .query_one("PRAGMA user_version", &[])
            .unwrap()
            .unwrap()
            .int(0)
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        drop(r);
        // And opened again as version 2.
        assert_eq!(open(&path).unwrap().list().unwrap().len(), 1);
    }

    #[test]
    fn a_version_2_registry_keeps_its_locations_to_be_verified_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.sqlite");
        version_1(&path);
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(&format!(
                "BEGIN; {SCHEMA_2} PRAGMA user_version = 2; COMMIT;
                 INSERT INTO locations (ibi, archive, used) VALUES ('LK47B6W/362SFKH', 'urlib.net/www/2012/01.01.01.01', 1764000000);"
            ))
            .unwrap();
        }
        let mut r = open(&path).unwrap();
        // Seconds become milliseconds; never verified, so stale at its next use.
        assert_eq!(
            r.locations(None).unwrap(),
            vec![Location {
                ibi: "LK47B6W/362SFKH".into(),
                archive: "urlib.net/www/2012/01.01.01.01".into(),
                used_ms: 1_764_000_000_000,
                verified_ms: 0,
            }]
        );
        assert_eq!(r.last_forgotten().unwrap(), 0);
        assert!(r.forget_location("LK47B6W/362SFKH").unwrap());
        assert!(!r.forget_location("LK47B6W/362SFKH").unwrap());
        assert!(r.locations(None).unwrap().is_empty());
        // Both forgets are noted for running servers, in order.
        assert_eq!(
            r.forgotten_after(0).unwrap(),
            (vec!["LK47B6W/362SFKH".to_string(); 2], 2)
        );
        assert_eq!(r.forgotten_after(2).unwrap(), (Vec::new(), 2));
        assert_eq!(r.list().unwrap()[0].conflicts, 0);
    }

    /// A connection the server ended (a restart, `pg_terminate_backend`) is a registry
    /// out of reach, not a fault of the statement: the caller answers 503 (a key is never
    /// refused for it), and the next call connects again. A value of the wrong type for
    /// a column is refused, not written as another.
    #[test]
    fn a_connection_ended_by_postgresql_is_out_of_reach_then_made_again() {
        let Some(test) = crate::store::testing::postgres() else {
            return;
        };
        let database = test.database.clone();
        let Database::Postgres(uri) = &database else {
            unreachable!()
        };
        let mut r = Registry::open(&database).unwrap();
        let ibi = Ibi::parse("sid.inpe.br/mtc-m21/2012/06.05.15.34.39").unwrap();
        r.register(&ibi, "a@example.org", "1234567890").unwrap();
        let mut other = crate::store::PgConn::connect(uri, "test").unwrap();
        let ended = other
            .client()
            .unwrap()
            .query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                 WHERE application_name = 'ibi-resolver registry'",
                &[],
            )
            .unwrap();
        assert_eq!(ended.len(), 1);
        let e = r.key_hash(&ibi).unwrap_err();
        assert_eq!(e.kind(), RegistryErrorKind::Unreachable, "{e}");
        assert!(r.key_hash(&ibi).unwrap().is_some());
        let e = r
            .conn
            .query("SELECT CAST(?1 AS BIGINT)", &[Value::Real(1.5)])
            .unwrap_err();
        assert_eq!(e.kind, StoreErrorKind::Other, "{e}");
        assert_eq!(
            r.conn
                .query_one("SELECT CAST(?1 AS BIGINT)", &[Value::Real(2.0)])
                .unwrap()
                .unwrap()
                .int(0)
                .unwrap(),
            2
        );
    }

    /// `forget` notes what it removes for running servers, numbered in order, the newest
    /// note kept however old (the next one follows it), on every kind of registry.
    #[test]
    fn forgotten_entries_are_noted_in_order_and_the_newest_kept() {
        for TestRegistry { database, .. } in registries() {
            let clock = Arc::new(ibi::time::ManualClock::at(1_800_000_000));
            let mut r = Registry::open(&database).unwrap().with_clock(clock.clone());
            assert_eq!(r.last_forgotten().unwrap(), 0);
            r.conn
                .execute(
                    "INSERT INTO locations (ibi, archive, used, verified) VALUES (?1, ?2, ?3, ?3)",
                    values!["LK47B6W/362SFKH", "urlib.net/www/2012/01.01.01.01", 5_i64],
                )
                .unwrap();
            assert!(r.forget_location("LK47B6W/362SFKH").unwrap());
            assert!(!r.forget_location("LK47B6W/362SFKH").unwrap());
            assert!(r.locations(None).unwrap().is_empty());
            assert_eq!(
                r.forgotten_after(0).unwrap(),
                (vec!["LK47B6W/362SFKH".to_string(); 2], 2)
            );
            // Two days on, the old notes are pruned but for the newest, which the next
            // one follows.
            clock.advance(std::time::Duration::from_secs(2 * 86_400));
            assert!(!r.forget_location("8JMKD3MGP8W/35MME4F").unwrap());
            assert_eq!(
                r.forgotten_after(0).unwrap(),
                (vec!["8JMKD3MGP8W/35MME4F".to_string()], 3)
            );
            assert_eq!(r.last_forgotten().unwrap(), 3);
        }
    }

    /// An Archive registered under one spelling of its service IBI is found under every
    /// other: its key check, inclusion, exclusion and unregistration.
    #[test]
    fn an_archive_is_found_under_every_spelling_of_its_service_ibi() {
        for TestRegistry { database, .. } in registries() {
            let mut r = Registry::open(&database).unwrap();
            let upper = Ibi::parse("LK47B6W/32NSFRP").unwrap();
            let lower = Ibi::parse("lk47b6w/32nsfrp").unwrap();
            let inclusion = Inclusion {
                address: "a.example.org",
                ip: "127.0.0.1",
                platformversion: "1",
                email: "a@example.org",
                confirmed: true,
                ip_reached: true,
            };
            for (registered, asked) in [(&upper, &lower), (&lower, &upper)] {
                r.register(registered, "a@example.org", "1234567890")
                    .unwrap();
                let again = r.register(asked, "b@example.org", "1234567890");
                assert_eq!(
                    again.unwrap_err().to_string(),
                    "LK47B6W/32NSFRP is already registered (unregister it first to change its key)"
                );
                assert!(r.key_hash(asked).unwrap().is_some());
                r.include(asked, &inclusion).unwrap();
                // Asked at the spelling it included itself under, named by its key.
                assert_eq!(
                    r.included().unwrap(),
                    vec![Included {
                        key: "LK47B6W/32NSFRP".into(),
                        serviceibi: Ibi::parse(asked.as_str()).unwrap(),
                        address: "a.example.org".into(),
                        ip: Some("127.0.0.1".parse().unwrap()),
                        recorded: Snapshot::default(),
                    }]
                );
                let listed: Vec<String> = r
                    .list()
                    .unwrap()
                    .into_iter()
                    .map(|a| a.serviceibi)
                    .collect();
                assert_eq!(listed, ["LK47B6W/32NSFRP"]);
                r.exclude(asked).unwrap();
                assert!(r.included().unwrap().is_empty());
                assert!(r.unregister(asked).unwrap());
                assert!(r.list().unwrap().is_empty());
            }
        }
    }

    /// A registry at schema version 3 holding `rows` (SQL statements), as a resolver of
    /// that version wrote it: an IBIp registered or remembered before version 3 kept the
    /// case it was written in.
    fn version_3(path: &Path, rows: &str) {
        let conn = Connection::open(path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.execute_batch(&format!(
            "BEGIN; {SCHEMA} {SCHEMA_2} {SCHEMA_3} PRAGMA user_version = 3; COMMIT; {rows}"
        ))
        .unwrap();
    }

    fn version_of(path: &Path) -> i64 {
        let conn = Connection::open(path).unwrap();
        user_version(&conn).unwrap()
    }

    /// Version 4 keys every row of a version 3 registry by [`Ibi::key`]: the Archive
    /// registered as `lk47b6w/32nsfrp` is found as LK47B6W/32NSFRP (and still asked at the
    /// spelling it was included under); locations, conflicts and forgotten entries written
    /// under two spellings of one IBI become one, the most recent kept.
    #[test]
    fn a_version_3_registry_is_keyed_canonically() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.sqlite");
        let hash = hash_key("1234567890").unwrap();
        version_3(
            &path,
            &format!(
                "INSERT INTO archives (serviceibi, keyhash, email, registered, address, included)
                 VALUES ('lk47b6w/32nsfrp', '{hash}', 'a@example.org', '2025-01-01', 'a.example.org', 1),
                        ('urlib.net/www/2012/01.01.01.01', 'h', 'b@example.org', '2025-01-01', 'b.example.org', 1);
                 INSERT INTO locations (ibi, archive, used, verified) VALUES
                        ('lk47b6w/362sfkh', 'lk47b6w/32nsfrp', 5000, 5000),
                        ('LK47B6W/362SFKH', 'urlib.net/www/2012/01.01.01.01', 9000, 0),
                        ('8jmkd3mgp8w/35mme4e', 'lk47b6w/32nsfrp', 7000, 7000),
                        ('iconet.com.br/banon/2009/09.09.22.01', 'lk47b6w/32nsfrp', 6000, 6000);
                 INSERT INTO conflicts (ibi, holder, claimant, first, last, times) VALUES
                        ('lk47b6w/362sfkh', 'urlib.net/www/2012/01.01.01.01', 'lk47b6w/32nsfrp', 1000, 2000, 2),
                        ('LK47B6W/362SFKH', '', 'LK47B6W/32NSFRP', 3000, 4000, 1);
                 INSERT INTO forgotten (ibi, at) VALUES ('8jmkd3mgp8w/35mme4f', 1000);"
            ),
        );
        let mut r = open(&path).unwrap();
        assert_eq!(version_of(&path), 4);
        let ibi = Ibi::parse("LK47B6W/32NSFRP").unwrap();
        assert_eq!(r.key_hash(&ibi).unwrap(), Some(hash));
        assert_eq!(
            r.included().unwrap(),
            vec![
                Included {
                    key: "LK47B6W/32NSFRP".into(),
                    serviceibi: Ibi::parse("lk47b6w/32nsfrp").unwrap(),
                    address: "a.example.org".into(),
                    ip: None,
                    recorded: Snapshot::default(),
                },
                Included {
                    key: "urlib.net/www/2012/01.01.01.01".into(),
                    serviceibi: Ibi::parse("urlib.net/www/2012/01.01.01.01").unwrap(),
                    address: "b.example.org".into(),
                    ip: None,
                    recorded: Snapshot::default(),
                },
            ]
        );
        let location = |ibi: &str, archive: &str, used_ms: i64, verified_ms: i64| Location {
            ibi: ibi.into(),
            archive: archive.into(),
            used_ms,
            verified_ms,
        };
        assert_eq!(
            r.locations(None).unwrap(),
            vec![
                location("LK47B6W/362SFKH", "urlib.net/www/2012/01.01.01.01", 9000, 0),
                location("8JMKD3MGP8W/35MME4E", "LK47B6W/32NSFRP", 7000, 7000),
                location(
                    "iconet.com.br/banon/2009/09.09.22.01",
                    "LK47B6W/32NSFRP",
                    6000,
                    6000
                ),
            ]
        );
        let conflicts: Vec<(String, String, String, i64, i64, i64)> = r
            .conn
            .query(
                "SELECT ibi, holder, claimant, first, last, times FROM conflicts",
                &[],
            )
            .unwrap()
            .iter()
            .map(|row| {
                (
                    row.text(0).unwrap(),
                    row.text(1).unwrap(),
                    row.text(2).unwrap(),
                    row.int(3).unwrap(),
                    row.int(4).unwrap(),
                    row.int(5).unwrap(),
                )
            })
            .collect();
        assert_eq!(
            conflicts,
            [(
                "LK47B6W/362SFKH".to_string(),
                String::new(),
                "LK47B6W/32NSFRP".to_string(),
                1000,
                4000,
                3
            )]
        );
        assert_eq!(r.list().unwrap()[0].conflicts, 1);
        assert_eq!(
            r.forgotten_after(0).unwrap(),
            (vec!["8JMKD3MGP8W/35MME4F".to_string()], 1)
        );
        r.exclude(&Ibi::parse("lk47b6w/32nsfrp").unwrap()).unwrap();
        assert!(r.unregister(&ibi).unwrap());
    }

    /// Two Archives registered under two spellings of one service IBI: the one spelt as
    /// its key is the one version 3 answered from (it never found the other), so it is
    /// kept; when neither is spelt so, the upgrade is refused, naming both, and the
    /// registry is left as it was.
    #[test]
    fn two_registrations_of_one_service_ibi_keep_the_one_in_use_or_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.sqlite");
        version_3(
            &path,
            "INSERT INTO archives (serviceibi, keyhash, email, registered)
             VALUES ('lk47b6w/32nsfrp', 'old', 'old@example.org', '2025-01-01'),
                    ('LK47B6W/32NSFRP', 'new', 'new@example.org', '2025-02-01');",
        );
        let mut r = open(&path).unwrap();
        let listed: Vec<(String, String)> = r
            .list()
            .unwrap()
            .into_iter()
            .map(|a| (a.serviceibi, a.email))
            .collect();
        assert_eq!(
            listed,
            [("LK47B6W/32NSFRP".to_string(), "new@example.org".to_string())]
        );
        drop(r);

        let path = dir.path().join("r2.sqlite");
        version_3(
            &path,
            "INSERT INTO archives (serviceibi, keyhash, email, registered)
             VALUES ('lk47b6w/32nsfrp', 'a', 'a@example.org', '2025-01-01'),
                    ('Lk47b6w/32nsfrp', 'b', 'b@example.org', '2025-02-01');",
        );
        let e = open(&path).err().unwrap().to_string();
        assert_eq!(
            e,
            format!(
                "{}: schema version 3 cannot be upgraded to 4, which keeps one registration per service IBI: Lk47b6w/32nsfrp and lk47b6w/32nsfrp are registered apart and are one IBI, LK47B6W/32NSFRP; delete the rows of all but the one to keep, e.g. sqlite3 {} \"DELETE FROM archives WHERE serviceibi = 'Lk47b6w/32nsfrp'\"",
                path.display(),
                path.display()
            )
        );
        assert_eq!(version_of(&path), 3);
        let conn = Connection::open(&path).unwrap();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM archives", [], |row| row.get(0))
            .unwrap();
        assert_eq!(n, 2);
    }

    /// Opens `path` from 8 threads at once; every one must succeed.
    fn open_all_at_once(path: &Path) {
        let start = std::sync::Arc::new(std::sync::Barrier::new(8));
        let opened: Vec<_> = (0..8)
            .map(|_| {
                let (start, path) = (start.clone(), path.to_path_buf());
                std::thread::spawn(move || {
                    start.wait();
                    open(&path).map(|_| ()).map_err(|e| e.to_string())
                })
            })
            .collect();
        for o in opened {
            assert_eq!(o.join().unwrap(), Ok(()));
        }
    }

    /// Openers race only while a new file is being made a registry, and one file rarely
    /// shows it; 50 in a row show a race left in `open` on almost every run.
    #[test]
    fn commands_started_together_on_a_new_registry_all_open_it() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..50 {
            open_all_at_once(&dir.path().join(format!("r{i}.sqlite")));
        }
    }

    #[test]
    fn commands_started_together_on_a_version_1_registry_all_open_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.sqlite");
        version_1(&path);
        open_all_at_once(&path);
        assert_eq!(open(&path).unwrap().included().unwrap().len(), 1);
    }
}
