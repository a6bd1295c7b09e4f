//! What the location memory is taught by a round of a resolution of the IBI itself
//! (`Admit`, `Admission`): an entry verified, forgotten, or made for the one Archive that
//! holds the item without doubt; conflicts of claims of the Original.

use std::sync::Arc;

use super::conflict::Judge;
use super::guard::{Guard, Said};
use super::outcome::MayHold;
use crate::registry::Included;

/// What the memory may learn from a round of a resolution of the IBI itself.
pub(super) struct Admit {
    /// The IBI's key.
    pub(super) key: String,
    /// The remembered Archive (index), when the round verifies its entry.
    pub(super) holder: Option<usize>,
}

/// Every answer of a round, read to its end for the memory: a cache of what asking every
/// Archive says without doubt, never of who answered first.
/// - Verifying an entry: its Archive still holds the item (fresh again; any other
///   Archive claiming the Original while it does is a conflict, and it keeps the entry,
///   unless the other is the IBI's home, which takes it), or said it is not there
///   (forgotten, and the rest admitted as below), or did not answer (the entry stays,
///   stale).
/// - Nothing remembered: an entry is made only when every Archive that may hold the IBI
///   (its home) answered, and exactly one Archive claims the Original (or, none claiming
///   it, exactly one holds the item) — Archives silent elsewhere in the network do not
///   keep the memory from learning. Two or more claiming the Original is a conflict:
///   the home is remembered when it is one of them, else none.
pub(super) struct Admission {
    pub(super) admit: Admit,
    pub(super) guard: Guard,
    pub(super) archives: Arc<[Included]>,
    pub(super) said: Vec<Said>,
    pub(super) judge: Judge,
}

impl Admission {
    pub(super) fn settle(&self) {
        let key = &self.admit.key;
        let memory = &self.judge.memory;
        let Some(h) = self.admit.holder else {
            self.admit_one(None);
            return;
        };
        let holder = &self.archives[h];
        match self.said[h] {
            Said::Holds { original } => {
                let home = self.claiming_home(Some(h));
                match home {
                    // The IBI's home claims the Original the remembered Archive claims
                    // too: the home, which no Archive can make itself, takes the entry.
                    Some(home) if original => {
                        memory.remember(key, &self.archives[home].key);
                        self.conflict(Some((&self.archives[home], true)), holder, &[]);
                    }
                    _ => memory.verified(key, &holder.key),
                }
                if original {
                    let (keeper, at_home) = match home {
                        Some(home) => (home, true),
                        None => (h, self.guard.may_hold(h) == Some(MayHold::Home)),
                    };
                    for (i, s) in self.said.iter().enumerate() {
                        if i != h && Some(i) != home && *s == (Said::Holds { original: true }) {
                            let keeper = (&self.archives[keeper], at_home);
                            self.conflict(Some(keeper), &self.archives[i], &[]);
                        }
                    }
                }
            }
            Said::Gone => {
                memory.forget(key, Some(&holder.key));
                self.admit_one(Some(h));
            }
            _ => {}
        }
    }

    /// The IBI's home (index) that claims its Original, if one does (but `but`).
    fn claiming_home(&self, but: Option<usize>) -> Option<usize> {
        self.guard
            .members
            .iter()
            .find(|(i, why)| {
                *why == MayHold::Home
                    && Some(*i) != but
                    && self.said[*i] == (Said::Holds { original: true })
            })
            .map(|(i, _)| *i)
    }

    /// Remembers the one Archive that holds the item without doubt, if there is one
    /// (`but`: an Archive heard already, left out).
    fn admit_one(&self, but: Option<usize>) {
        if self
            .guard
            .said(&self.said)
            .any(|s| s.silent() || s == Said::Waiting)
        {
            return;
        }
        let heard: Vec<(usize, Said)> = self
            .said
            .iter()
            .copied()
            .enumerate()
            .filter(|(i, _)| Some(*i) != but && !self.guard.set_aside.contains(i))
            .collect();
        let originals: Vec<usize> = heard
            .iter()
            .filter(|(_, s)| *s == (Said::Holds { original: true }))
            .map(|(i, _)| *i)
            .collect();
        let holders: Vec<usize> = heard
            .iter()
            .filter(|(_, s)| matches!(s, Said::Holds { .. }))
            .map(|(i, _)| *i)
            .collect();
        let memory = &self.judge.memory;
        match (originals.as_slice(), holders.as_slice()) {
            ([one], _) | ([], [one]) => memory.remember(&self.admit.key, &self.archives[*one].key),
            ([_, _, ..], _) => match self.claiming_home(but) {
                Some(home) => {
                    memory.remember(&self.admit.key, &self.archives[home].key);
                    for &i in originals.iter().filter(|&&i| i != home) {
                        let keeper = (&self.archives[home], true);
                        self.conflict(Some(keeper), &self.archives[i], &[]);
                    }
                }
                None => {
                    for &i in &originals {
                        let others: Vec<&Included> = originals
                            .iter()
                            .filter(|&&o| o != i)
                            .map(|&o| &self.archives[o])
                            .collect();
                        self.conflict(None, &self.archives[i], &others);
                    }
                }
            },
            _ => {}
        }
        // The answers of Archives set aside, weighed only against the home.
        if let Some(home) = self.claiming_home(but) {
            for &i in &self.guard.set_aside {
                if self.said[i] == (Said::Holds { original: true }) {
                    self.conflict(Some((&self.archives[home], true)), &self.archives[i], &[]);
                }
            }
        }
    }

    pub(super) fn conflict(
        &self,
        holder: Option<(&Included, bool)>,
        claimant: &Included,
        others: &[&Included],
    ) {
        self.judge
            .conflict(&self.admit.key, holder, claimant, others);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::clock;
    use crate::health::HealthBook;
    use crate::memory::{Conflict, LocationMemory};
    use crate::metrics::Metrics;
    use crate::resolve::guard::tests::{archive_named, guard};
    use crate::suspicion::Suspicion;

    /// An Admission over Archives a, b, c whose answers said `said`, on a memory of
    /// its own (which holds `remembered`: (IBI, Archive key, fresh)).
    fn admission(
        dir: &std::path::Path,
        holder: Option<usize>,
        said: [Said; 3],
        remembered: Option<&str>,
        may_hold: &[usize],
    ) -> Admission {
        let path = crate::store::Database::Sqlite(dir.join("r.sqlite"));
        crate::registry::Registry::open(&path).unwrap();
        let memory = Arc::new(LocationMemory::open(&path, 10, Duration::from_secs(60)).unwrap());
        if let Some(archive) = remembered {
            memory.remember("ibi", archive);
        }
        let archives = ["a", "b", "c"].iter().map(|k| archive_named(k)).collect();
        let health = Arc::new(HealthBook::default());
        Admission {
            admit: Admit {
                key: "ibi".into(),
                holder,
            },
            guard: guard(may_hold),
            archives,
            said: said.to_vec(),
            judge: Judge {
                memory,
                metrics: Arc::new(Metrics::new(health)),
                suspicion: Arc::new(Suspicion::default()),
                clock: clock::system(),
            },
        }
    }

    const A: &str = "a.example/www/2020/01.01.01.01";
    const B: &str = "b.example/www/2020/01.01.01.01";
    const C: &str = "c.example/www/2020/01.01.01.01";
    const ORIGINAL: Said = Said::Holds { original: true };
    const NO_CLAIM: Said = Said::Holds { original: false };

    fn remembered(a: &Admission) -> Option<(String, bool)> {
        a.judge
            .memory
            .peek("ibi")
            .map(|r| (r.archive.to_string(), r.fresh))
    }

    #[test]
    fn only_an_undoubted_holder_is_remembered() {
        let dir = tempfile::tempdir().unwrap();
        // The one Original, though another answered first without claiming anything.
        let a = admission(
            dir.path(),
            None,
            [NO_CLAIM, ORIGINAL, Said::Gone],
            None,
            &[],
        );
        a.settle();
        assert_eq!(remembered(&a), Some((B.to_string(), true)));
        // The IBI's home not heard: it may hold the Original.
        for silent in [Said::Busy, Said::Down] {
            let dir = tempfile::tempdir().unwrap();
            let a = admission(dir.path(), None, [ORIGINAL, Said::Gone, silent], None, &[2]);
            a.settle();
            assert_eq!(remembered(&a), None, "{silent:?}");
        }
        // An Archive silent elsewhere in the network, which may not hold it, does not
        // keep the memory from learning.
        for silent in [Said::Busy, Said::Down] {
            let dir = tempfile::tempdir().unwrap();
            let a = admission(dir.path(), None, [ORIGINAL, Said::Gone, silent], None, &[1]);
            a.settle();
            assert_eq!(remembered(&a), Some((A.to_string(), true)), "{silent:?}");
        }
        // Nobody claims the Original, one holds the item: it.
        let dir = tempfile::tempdir().unwrap();
        let here = Said::Here { original: false };
        let a = admission(dir.path(), None, [Said::Gone, here, NO_CLAIM], None, &[]);
        a.settle();
        assert_eq!(remembered(&a), Some((C.to_string(), true)));
        // Two hold it, neither claims the Original: neither.
        let dir = tempfile::tempdir().unwrap();
        let a = admission(
            dir.path(),
            None,
            [NO_CLAIM, NO_CLAIM, Said::Gone],
            None,
            &[],
        );
        a.settle();
        assert_eq!(remembered(&a), None);
    }

    #[test]
    fn two_claims_of_the_original_are_a_conflict_and_neither_is_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let a = admission(
            dir.path(),
            None,
            [ORIGINAL, Said::Gone, ORIGINAL],
            None,
            &[],
        );
        a.settle();
        assert_eq!(remembered(&a), None);
        let claimants: Vec<(Option<String>, String)> = a
            .judge
            .memory
            .conflicts_of("ibi")
            .into_iter()
            .map(|c| (c.holder, c.claimant))
            .collect();
        assert_eq!(
            claimants,
            vec![(None, A.to_string()), (None, C.to_string())]
        );
    }

    #[test]
    fn a_verified_holder_keeps_its_entry_against_a_second_claim() {
        let dir = tempfile::tempdir().unwrap();
        let a = admission(
            dir.path(),
            Some(0),
            [ORIGINAL, ORIGINAL, Said::Gone],
            Some(A),
            &[0],
        );
        a.settle();
        assert_eq!(remembered(&a), Some((A.to_string(), true)));
        assert_eq!(
            a.judge.memory.conflicts_of("ibi"),
            vec![Conflict {
                ibi: "ibi".into(),
                holder: Some(A.into()),
                claimant: B.into(),
            }]
        );
    }

    #[test]
    fn the_home_claiming_the_original_comes_before_the_memory_and_other_claimants() {
        let home_only = |i: usize| Guard {
            members: vec![(i, MayHold::Home)],
            ..Guard::default()
        };
        // Verifying A's entry: C, the IBI's home, claims the Original too: C takes it, and
        // A's claim is the conflict, against the home.
        let dir = tempfile::tempdir().unwrap();
        let mut a = admission(
            dir.path(),
            Some(0),
            [ORIGINAL, Said::Gone, ORIGINAL],
            Some(A),
            &[0],
        );
        a.guard.members.push((2, MayHold::Home));
        a.settle();
        assert_eq!(remembered(&a), Some((C.to_string(), true)));
        assert_eq!(
            a.judge.memory.conflicts_of("ibi"),
            vec![Conflict {
                ibi: "ibi".into(),
                holder: Some(C.into()),
                claimant: A.into(),
            }]
        );
        // Nothing remembered: B and C claim the Original, C is the home: C.
        let dir = tempfile::tempdir().unwrap();
        let mut a = admission(
            dir.path(),
            None,
            [Said::Gone, ORIGINAL, ORIGINAL],
            None,
            &[],
        );
        a.guard = home_only(2);
        a.settle();
        assert_eq!(remembered(&a), Some((C.to_string(), true)));
        assert_eq!(
            a.judge.memory.conflicts_of("ibi"),
            vec![Conflict {
                ibi: "ibi".into(),
                holder: Some(C.into()),
                claimant: B.into(),
            }]
        );
        // An Archive set aside is not remembered, however it claims.
        let dir = tempfile::tempdir().unwrap();
        let mut a = admission(
            dir.path(),
            None,
            [Said::Gone, ORIGINAL, Said::Gone],
            None,
            &[],
        );
        a.guard.set_aside = vec![1];
        a.settle();
        assert_eq!(remembered(&a), None);
    }

    #[test]
    fn a_holder_that_says_the_item_left_is_replaced_and_a_silent_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let a = admission(
            dir.path(),
            Some(0),
            [Said::Gone, ORIGINAL, Said::Gone],
            Some(A),
            &[0],
        );
        a.settle();
        assert_eq!(remembered(&a), Some((B.to_string(), true)));
        // Silent: the entry stays as it was (here fresh, as made by `admission`).
        for silent in [Said::Busy, Said::Down] {
            let dir = tempfile::tempdir().unwrap();
            let a = admission(
                dir.path(),
                Some(0),
                [silent, ORIGINAL, Said::Gone],
                Some(A),
                &[0],
            );
            a.settle();
            assert_eq!(remembered(&a), Some((A.to_string(), true)));
            assert!(a.judge.memory.conflicts_of("ibi").is_empty());
        }
    }
}
