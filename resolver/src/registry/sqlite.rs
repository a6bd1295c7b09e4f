//! The registry in an SQLite file: made on first use (mode 0600, never through a symbolic
//! link), checked (SQLite, whole, a registry of a version this resolver knows), upgraded
//! from before the migrations, put in WAL mode with full synchronisation, migrated one
//! opener at a time; and copied whole by SQLite's online backup.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::migrations::migrate;
use super::upgrade::{upgrade, user_version, SCHEMA_VERSION};
use super::{not_a_registry, Registry, RegistryError, RegistryErrorKind, WRITABLE};
use crate::store::Conn;

/// How long an opener waits for another connection's lock: SQLite's busy timeout, and
/// the bound of [`switch_to_wal`]'s retries.
const BUSY_WAIT: Duration = Duration::from_secs(5);

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

/// Opens the SQLite registry at `path`, creating it (mode 0600: it holds key hashes)
/// when it does not exist, and brings its schema up to date.
pub(super) fn open_sqlite(path: &Path) -> Result<Connection, RegistryError> {
    let shown = path.display().to_string();
    create(path, &shown)?;
    let mut conn = connect(path, &shown)?;
    let fail = |e: rusqlite::Error| {
        RegistryError::new(RegistryErrorKind::Database, format!("{shown}: {e}"))
    };
    conn.busy_timeout(BUSY_WAIT).map_err(fail)?;
    check_whole(&conn, path, &shown)?;
    to_current_version(&mut conn, &shown)?;
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(fail)?;
    migrate_alone(conn, path, &shown)
}

/// Makes the registry's file, mode 0600, unless there is one (or a symbolic link).
fn create(path: &Path, shown: &str) -> Result<(), RegistryError> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
    {
        Ok(_) => Ok(()),
        // create_new: a symbolic link there, even to nothing, is AlreadyExists;
        // the open below refuses it.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(RegistryError::new(
            RegistryErrorKind::Unopenable,
            format!("{shown}: cannot create: {e}"),
        )),
    }
}

/// Opens the registry's file by its own name.
fn connect(path: &Path, shown: &str) -> Result<Connection, RegistryError> {
    // Never through a symbolic link: whoever may write in the registry's directory
    // cannot have the resolver, or init run as root, open another file.
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(RegistryError::new(
            RegistryErrorKind::Unopenable,
            format!("{shown}: is a symbolic link: name the registry's own file"),
        ));
    }
    let flags = rusqlite::OpenFlags::default() | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
    Connection::open_with_flags(path, flags).map_err(|e| {
        RegistryError::new(
            RegistryErrorKind::Unopenable,
            format!("{shown}: cannot open: {e}"),
        )
    })
}

/// Refuses a file that is no SQLite database, or one damaged or cut short.
fn check_whole(conn: &Connection, path: &Path, shown: &str) -> Result<(), RegistryError> {
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
        .map_err(|e| RegistryError::new(RegistryErrorKind::Database, format!("{shown}: {e}")))?;
    let len = std::fs::metadata(path)
        .map_err(|e| RegistryError::new(RegistryErrorKind::Database, format!("{shown}: {e}")))?
        .len();
    if page_size > 0 && len % page_size != 0 {
        return Err(RegistryError::new(RegistryErrorKind::Unusable, format!(
            "{shown}: database is damaged: {len} bytes, not a whole number of {page_size}-byte pages"
        )));
    }
    Ok(())
}

/// Brings a registry of an older schema version, or a new database, to
/// [`SCHEMA_VERSION`]; refuses a newer one, and another program's database before
/// anything is changed in it.
fn to_current_version(conn: &mut Connection, shown: &str) -> Result<(), RegistryError> {
    let fail = |e: rusqlite::Error| {
        RegistryError::new(RegistryErrorKind::Database, format!("{shown}: {e}"))
    };
    let (version, tables) = version_and_tables(conn).map_err(fail)?;
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
                return Err(not_a_registry(shown));
            }
            // WAL needs write access; a read-only file fails here, clearly.
            switch_to_wal(conn).map_err(fail)?;
        }
        upgrade(conn, shown, version)?;
    }
    Ok(())
}

/// Runs the migrations, one opener at a time: under the lock of the registry's
/// directory (a lock of the file itself would be SQLite's own, released by any close of
/// it).
fn migrate_alone(conn: Connection, path: &Path, shown: &str) -> Result<Connection, RegistryError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let dir = std::fs::File::open(dir)
        .map_err(|e| RegistryError::new(RegistryErrorKind::Unopenable, format!("{shown}: {e}")))?;
    rustix::fs::flock(&dir, rustix::fs::FlockOperation::LockExclusive)
        .map_err(|e| RegistryError::new(RegistryErrorKind::Database, format!("{shown}: {e}")))?;
    let mut conn = Conn::Sqlite(conn);
    let migrated = migrate(&mut conn, shown);
    drop(dir);
    migrated?;
    let Conn::Sqlite(conn) = conn else {
        unreachable!("made above")
    };
    Ok(conn)
}

impl Registry {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::testing::{open, open_all_at_once};

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

    /// Openers race only while a new file is being made a registry, and one file rarely
    /// shows it; 50 in a row show a race left in `open` on almost every run.
    #[test]
    fn commands_started_together_on_a_new_registry_all_open_it() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..50 {
            open_all_at_once(&dir.path().join(format!("r{i}.sqlite")));
        }
    }
}
