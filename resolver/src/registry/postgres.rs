//! The registry in PostgreSQL, shared by several resolvers: connected to, refused when
//! the database holds another program's tables, migrated under an advisory lock.

use super::migrations::migrate;
use super::{not_a_registry, RegistryError, RegistryErrorKind};
use crate::store::{Conn, Database, PgConn};
use crate::values;

/// The key of the PostgreSQL advisory lock the resolvers of one database take in turn to
/// bring its schema up to date ("ibi-reg" in ASCII).
const MIGRATION_LOCK: i64 = 0x0069_6269_2d72_6567;

/// Connects to the registry in PostgreSQL at `uri` and brings its schema up to date,
/// under an advisory lock: of resolvers started together, one migrates and the others
/// wait, then find the work done. A database that holds other tables and no registry
/// is refused before anything is written in it.
pub(super) fn open_postgres(uri: &str, database: &Database) -> Result<PgConn, RegistryError> {
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
            return Err(not_a_registry(&shown));
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

#[cfg(test)]
mod tests {
    use ibi::Ibi;

    use super::*;
    use crate::registry::Registry;
    use crate::store::{StoreErrorKind, Value};

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
}
