//! The registered Archives (§7.1): their records as listed ([`ArchiveRecord`]) and as
//! resolutions ask them ([`Included`]); registration and unregistration, inclusion (a move
//! when at another address: [`Place`]) and exclusion, and the health resolutions learnt.

use ibi::Ibi;

use super::key_hash::hash_key;
use super::{Registry, RegistryError, RegistryErrorKind};
use crate::health::{Snapshot, State};
use crate::store::{StoreError, StoreErrorKind, Value, REGISTRY_CHANNEL};
use crate::values;

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
    /// Asked by resolutions, or dormant: not asked until a probe answers.
    pub health: State,
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
fn is_another_address(old: &str, new: &str) -> bool {
    !old.eq_ignore_ascii_case(new)
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

impl Registry {
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
                    health: state_from_stored(r.int(12)?)?,
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
                        state: state_from_stored(r.int(3)?)?,
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
                        failures = 0, dormant = ?10, spelling = ?8, ipreached = ?9,
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
                    i64::from(inc.ip_reached),
                    stored_state(State::Awake)
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
                        Value::Int(stored_state(h.state)),
                        latency.unwrap_or(Value::Null),
                        Value::from(last),
                    ],
                )?;
            }
            Ok(())
        })
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

/// A [`State`] as the registry stores it, in the column `dormant`: 0 or 1.
fn stored_state(state: State) -> i64 {
    match state {
        State::Awake => 0,
        State::Dormant => 1,
    }
}

/// The [`State`] stored as `stored` in the column `dormant`; refused when it is none.
fn state_from_stored(stored: i64) -> Result<State, StoreError> {
    match stored {
        0 => Ok(State::Awake),
        1 => Ok(State::Dormant),
        other => Err(StoreError {
            message: format!("dormant: 0 or 1 expected, {other} found"),
            kind: StoreErrorKind::Other,
        }),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::verify_key;
    use crate::store::testing::{registries, TestRegistry};

    #[test]
    fn the_state_is_stored_as_0_or_1_and_any_other_value_refused() {
        assert_eq!(stored_state(State::Awake), 0);
        assert_eq!(stored_state(State::Dormant), 1);
        assert_eq!(state_from_stored(0).unwrap(), State::Awake);
        assert_eq!(state_from_stored(1).unwrap(), State::Dormant);
        for state in State::ALL {
            assert_eq!(state_from_stored(stored_state(*state)).unwrap(), *state);
        }
        for wrong in [2, -1, i64::MAX] {
            let e = state_from_stored(wrong).unwrap_err();
            assert_eq!(e.kind, StoreErrorKind::Other);
            assert_eq!(
                e.message,
                format!("dormant: 0 or 1 expected, {wrong} found")
            );
        }
    }

    #[test]
    fn a_dormant_archive_is_read_back_dormant_and_an_unknown_state_is_an_error() {
        for TestRegistry { database, .. } in registries() {
            let ibi = Ibi::parse("sid.inpe.br/mtc-m21/2012/06.05.15.34.39").unwrap();
            let mut r = Registry::open(&database).unwrap();
            r.register(&ibi, "banon@dpi.inpe.br", "1234567890").unwrap();
            let inclusion = Inclusion {
                address: "mtc-m21.sid.inpe.br",
                ip: "150.163.34.239",
                platformversion: "2014:11.09.02.16.15",
                email: "banon@dpi.inpe.br",
                confirmed: true,
                ip_reached: false,
            };
            r.include(&ibi, &inclusion).unwrap();
            let dormant = Snapshot {
                failures: 5,
                state: State::Dormant,
                ..Snapshot::default()
            };
            r.record_health(&[(ibi.as_str().to_string(), dormant.clone())])
                .unwrap();
            assert_eq!(r.included().unwrap()[0].recorded, dormant);
            assert_eq!(r.list().unwrap()[0].health, State::Dormant);
            let stored = r.conn.query("SELECT dormant FROM archives", &[]).unwrap();
            assert_eq!(stored[0].int(0).unwrap(), 1);
            r.conn
                .execute("UPDATE archives SET dormant = 2", &[])
                .unwrap();
            let e = r.list().unwrap_err();
            assert_eq!(e.kind(), RegistryErrorKind::Database);
            assert!(e.to_string().contains("0 or 1 expected, 2 found"), "{e}");
            assert!(r.included().is_err());
            // Included again: awake, stored as 0.
            r.include(&ibi, &inclusion).unwrap();
            assert_eq!(r.list().unwrap()[0].health, State::Awake);
            let stored = r.conn.query("SELECT dormant FROM archives", &[]).unwrap();
            assert_eq!(stored[0].int(0).unwrap(), 0);
        }
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
}
