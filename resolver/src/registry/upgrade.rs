//! SQLite registries made before the migrations: their schema version in `PRAGMA
//! user_version`, and the deltas that bring an older one to [`SCHEMA_VERSION`] (versions 2
//! and 3 add tables and columns, version 4 keys every row by [`Ibi::key`]).

use std::collections::BTreeMap;

use ibi::Ibi;
use rusqlite::{params, Connection};

use super::{not_a_registry, RegistryError, RegistryErrorKind, WRITABLE};

/// The version of the schema of an SQLite registry made before the migrations, in `PRAGMA
/// user_version`: the tables are the migrations' (`migrations/`), and a registry of an
/// older version is first brought to this one by [`upgrade`] (its deltas below).
pub(super) const SCHEMA_VERSION: i64 = 4;

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

/// The key of an IBI kept in a row ([`Ibi::key`]); a value that is no IBI (an
/// empty holder) is kept as it is.
fn key_of(kept: &str) -> String {
    Ibi::parse(kept).map_or_else(|_| kept.to_string(), |ibi| ibi.key())
}

pub(super) fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// Why [`run`] did not.
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

/// Marks an empty database (`version` 0, as read before) as of [`SCHEMA_VERSION`] (the
/// migrations then make its tables), or brings an older one to it; what it did not, in
/// words for the operator of the registry `shown`.
pub(super) fn upgrade(
    conn: &mut Connection,
    shown: &str,
    version: i64,
) -> Result<(), RegistryError> {
    run(conn).map_err(|e| match e {
        Upgrade::Foreign => not_a_registry(shown),
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
        Upgrade::Failed(e) => RegistryError::new(RegistryErrorKind::Database, format!("{shown}: {e}")),
    })
}

/// [`upgrade`]'s work, in one transaction that holds the write lock from its start and
/// reads the version again under it: of commands started together, one does the work
/// and the others find it done.
fn run(conn: &mut Connection) -> Result<(), Upgrade> {
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
    canonical_archives(tx)?;
    canonical_locations(tx)?;
    canonical_conflicts(tx)?;
    canonical_forgotten(tx)
}

/// The Archives by key: one spelling renamed, or the one spelt as the key kept.
fn canonical_archives(tx: &Connection) -> Result<(), Upgrade> {
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
    Ok(())
}

/// The location memory by key: of the rows that merge, the most recently used.
fn canonical_locations(tx: &Connection) -> Result<(), Upgrade> {
    // (archive, used, verified) by IBI.
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
    Ok(())
}

/// The conflicts by key: of the rows of one IBI and claimant, one with the first and
/// last times of all, their times summed and the holder of the latest.
fn canonical_conflicts(tx: &Connection) -> Result<(), Upgrade> {
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
    Ok(())
}

/// The forgotten entries by key.
fn canonical_forgotten(tx: &Connection) -> Result<(), Upgrade> {
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::health::Snapshot;
    use crate::registry::testing::{open, open_all_at_once};
    use crate::registry::{key_hash::hash_key, Included, Location, Registry};

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

    /// Every row of the conflicts table: (ibi, holder, claimant, first, last, times).
    fn conflicts(r: &mut Registry) -> Vec<(String, String, String, i64, i64, i64)> {
        r.conn
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
            .collect()
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
        let conflicts = conflicts(&mut r);
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

    #[test]
    fn commands_started_together_on_a_version_1_registry_all_open_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.sqlite");
        version_1(&path);
        open_all_at_once(&path);
        assert_eq!(open(&path).unwrap().included().unwrap().len(), 1);
    }
}
