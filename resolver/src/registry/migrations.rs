//! The registry's schema, SQLite's and PostgreSQL's alike: the migrations of
//! `resolver/migrations/`, embedded and run by refinery.

use super::{RegistryError, RegistryErrorKind};
use crate::store::Conn;

mod embedded {
    refinery::embed_migrations!("migrations");
}

/// Brings the schema of a registry up to date with the migrations (`migrations/`), one
/// opener at a time.
pub(super) fn migrate(conn: &mut Conn, shown: &str) -> Result<(), RegistryError> {
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
