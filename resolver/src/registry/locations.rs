//! The location memory as the registry keeps it: which Archive last answered for an IBI
//! (the table [`crate::memory`] writes behind to), and the entries `ibi-resolver forget`
//! removed, noted for running servers to drop too.

use super::{Registry, RegistryError, RegistryErrorKind};
use crate::clock;
use crate::store::{StoreError, REGISTRY_CHANNEL};
use crate::values;

/// How long the entries `forget` removed are kept for running servers to read.
const FORGOTTEN_KEPT_MS: i64 = 86_400_000;

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

impl Registry {
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
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::store::testing::{registries, TestRegistry};

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
}
