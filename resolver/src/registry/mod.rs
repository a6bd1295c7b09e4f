//! The registry (§7.1): every registered Archive, in an SQLite database created on first
//! use or in a PostgreSQL database several resolvers share ([`crate::store`]), the same
//! schema in both, brought up to date by the same migrations (`migrations/`, run by
//! refinery). Registration keys are kept only as argon2id hashes (PHC strings with their
//! own salt). Every change is one transaction; SQLite runs in WAL mode with full
//! synchronisation, so a crash leaves it as before or after a change. Each change of the
//! Archives, or of the memory by `forget`, is announced to the other resolvers of a
//! PostgreSQL database when it commits ([`REGISTRY_CHANNEL`](crate::store::REGISTRY_CHANNEL)).
//!
//! One concept a file; the files import the types of this one, and one another one way
//! (`sqlite` and `postgres` → `upgrade`, `migrations`; `archives` → `key_hash`):
//!
//! | file | what it is the home of |
//! |---|---|
//! | `mod.rs` | [`Registry`] (opened on either database), [`RegistryError`] and its kinds |
//! | `archives` | the registered Archives: register, include (a move), exclude, unregister, their health; [`ArchiveRecord`], [`Included`], [`Inclusion`], [`Place`] |
//! | `locations` | the location memory's table and the entries `forget` removed; [`Location`] |
//! | `key_hash` | registration keys as argon2id hashes: [`verify_key`] |
//! | `sqlite` | the SQLite file: made, checked, upgraded, migrated; the online backup |
//! | `upgrade` | SQLite registries of before the migrations: `user_version` and the deltas to version 4 |
//! | `migrations` | the schema of both databases: `resolver/migrations/`, run by refinery |
//! | `postgres` | the PostgreSQL database: connected to, checked, migrated under an advisory lock |

use std::sync::Arc;

use crate::clock::{self, Clock};
use crate::store::{Conn, Database, StoreError, StoreErrorKind};

mod archives;
mod key_hash;
mod locations;
mod migrations;
mod postgres;
mod sqlite;
#[cfg(test)]
mod testing;
mod upgrade;

pub use archives::{ArchiveRecord, Included, Inclusion, Place};
pub use key_hash::verify_key;
pub use locations::Location;

/// A registry opened: its connection, SQLite's or PostgreSQL's, and the clock of its
/// dates.
pub struct Registry {
    conn: Conn,
    /// The time of day of its dates.
    clock: Arc<dyn Clock>,
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
pub(super) const WRITABLE: &str =
    "the registry, its -wal and -shm files and its directory must be writable by this user";

/// The refusal of a database `shown` that holds another program's tables.
fn not_a_registry(shown: &str) -> RegistryError {
    RegistryError::new(
        RegistryErrorKind::Unusable,
        format!("{shown}: holds tables but is not a resolver registry"),
    )
}

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
            Database::Sqlite(path) => Conn::Sqlite(sqlite::open_sqlite(path)?),
            Database::Postgres(uri) => {
                Conn::Postgres(Box::new(postgres::open_postgres(uri, database)?))
            }
        };
        Ok(Registry {
            conn,
            clock: clock::system(),
        })
    }

    /// The connection, for the work of this crate that goes beyond the registry's own
    /// (moving a registry into another database).
    pub fn conn(&mut self) -> &mut Conn {
        &mut self.conn
    }
}
