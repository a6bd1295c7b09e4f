//! Who may hold an IBI and what their silence decides: what each Archive said (`Said`),
//! the Archives of a round that may hold its IBI (`Guard`: the remembered one, the homes)
//! and where they stand, and the answer that decides a round now (`decide`).

use super::outcome::{shown_archive, Asked, MayHold, Next};
use crate::answer::Reading;
use crate::client::Fetched;
use crate::registry::Included;

/// What an Archive said of the item, for the location memory's rules and for the rules
/// of who may hold it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Said {
    /// Nothing yet.
    Waiting,
    /// It holds the item and its answer satisfied the request; `original`: it said
    /// `state Original`.
    Holds { original: bool },
    /// It does not hold the item (empty), or holds its tombstone.
    Gone,
    /// It holds the item, without what was asked (a file, a relation); `original`: not
    /// as a copy (`state Original`, or no state), and so claims it all the same.
    Here { original: bool },
    /// No answer, though it lives: `503`/`429` until the timeout, no answer within it, or
    /// not asked because the resolver had as many requests under way as it allows.
    Busy,
    /// No answer: it failed (no connection, an error status, not a pair list), is
    /// dormant, or is at an address the resolver may not contact.
    Down,
}

impl Said {
    /// What the request that ended in `fetched` says, before its answer (if any) is read.
    pub(super) fn of(fetched: &Fetched) -> Said {
        match fetched {
            Fetched::Busy | Fetched::Overloaded(_) | Fetched::TimedOut => Said::Busy,
            Fetched::Failed(_) | Fetched::Refused(_) => Said::Down,
            // Read by the caller; an answer that is no pair list is Down.
            Fetched::Body(_) => Said::Down,
        }
    }

    pub(super) fn silent(self) -> bool {
        matches!(self, Said::Busy | Said::Down)
    }
}

impl Reading {
    pub(super) fn said(&self) -> Said {
        match self {
            Reading::Satisfies(f) => Said::Holds {
                original: f.claims_original(),
            },
            Reading::Ask(_) => Said::Holds { original: false },
            // Only with a verb: the memory never learns from it.
            Reading::Offers(_) => Said::Holds { original: false },
            Reading::Deleted(_) | Reading::Empty => Said::Gone,
            Reading::Here { original } => Said::Here {
                original: *original,
            },
            Reading::Invalid(_) => Said::Down,
        }
    }
}

/// Where the Archives that may hold the IBI stand, for what another Archive's answer may
/// do ([`Guard::stand`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stand {
    /// One of them has not answered yet: no other answer decides.
    Waiting,
    /// None stands in the way (none, or each answered it does not hold the item, has
    /// it only as a copy, or is down): the first satisfying answer wins.
    Clear,
    /// One of them is busy: only an answer that says it is a copy may win.
    Busy,
    /// One of them claims the Original, without what was asked: no other answer wins.
    Claimed,
}

/// The Archives of a round that may hold its IBI (the remembered one, the homes), what
/// those asked alone before the round, and not again in it, said, and the Archives whose
/// answers decide nothing ([`crate::suspicion`]).
#[derive(Clone, Debug, Default)]
pub(super) struct Guard {
    /// Indices in the round's list, each with why it may hold the IBI.
    pub(super) members: Vec<(usize, MayHold)>,
    /// Those heard before the round.
    pub(super) before: Vec<Before>,
    /// Indices in the round's list of Archives under suspicion that may not hold the
    /// IBI: their answers are read, shown and weighed for conflicts, and decide nothing.
    pub(super) set_aside: Vec<usize>,
}

/// An Archive that may hold the IBI, heard before the round.
#[derive(Clone, Debug)]
pub(super) struct Before {
    pub(super) said: Said,
    pub(super) archive: Included,
    pub(super) why: MayHold,
    /// Its silence was an outage (not an address the resolver may not contact).
    pub(super) outage: bool,
}

impl Guard {
    /// The guard of a round over every Archive: `members`, by index, with why each may
    /// hold the IBI.
    pub(super) fn of(members: &[(usize, MayHold)]) -> Guard {
        Guard {
            members: members.to_vec(),
            ..Guard::default()
        }
    }

    pub(super) fn contains(&self, i: usize) -> bool {
        self.members.iter().any(|(m, _)| *m == i)
    }

    pub(super) fn may_hold(&self, i: usize) -> Option<MayHold> {
        self.members
            .iter()
            .find(|(m, _)| *m == i)
            .map(|(_, why)| *why)
    }

    /// What the Archives that may hold the IBI said, those of the round by `said`.
    pub(super) fn said<'a>(&'a self, said: &'a [Said]) -> impl Iterator<Item = Said> + 'a {
        self.members
            .iter()
            .map(|(i, _)| said[*i])
            .chain(self.before.iter().map(|b| b.said))
    }

    pub(super) fn stand(&self, said: &[Said]) -> Stand {
        let mut stand = Stand::Clear;
        for s in self.said(said) {
            match s {
                Said::Waiting => return Stand::Waiting,
                Said::Here { original: true } => stand = Stand::Claimed,
                Said::Busy if stand == Stand::Clear => stand = Stand::Busy,
                _ => {}
            }
        }
        stand
    }

    /// The Archives that may hold the IBI and could not be heard for a while (not one at
    /// an address the resolver may not contact), as pages name them.
    pub(super) fn silent(
        &self,
        said: &[Said],
        asked: &[Asked],
        archives: &[Included],
    ) -> Vec<String> {
        let of_round = self
            .members
            .iter()
            .filter(|(i, _)| said[*i].silent() && asked[*i].result.is_outage())
            .map(|(i, _)| shown_archive(&archives[*i]));
        let before = self
            .before
            .iter()
            .filter(|b| b.said.silent() && b.outage)
            .map(|b| shown_archive(&b.archive));
        of_round.chain(before).collect()
    }

    /// The Archives that may hold the IBI and said `wanted`, with why they may.
    pub(super) fn claiming(
        &self,
        wanted: Said,
        said: &[Said],
        archives: &[Included],
    ) -> Vec<(Included, MayHold)> {
        self.members
            .iter()
            .filter(|(i, _)| said[*i] == wanted)
            .map(|(i, why)| (archives[*i].clone(), *why))
            .chain(
                self.before
                    .iter()
                    .filter(|b| b.said == wanted)
                    .map(|b| (b.archive.clone(), b.why)),
            )
            .collect()
    }

    /// Whether what Archive `i` gives (`next`) may decide now.
    fn allows(&self, i: usize, next: &Next, said: &[Said]) -> bool {
        if self.contains(i) {
            return true;
        }
        if self.set_aside.contains(&i) {
            return false;
        }
        match self.stand(said) {
            Stand::Clear => true,
            Stand::Busy => next.says_copy(),
            Stand::Waiting | Stand::Claimed => false,
        }
    }
}

/// The answer (index) that decides a round now, if one does: with an incumbent, none
/// before it is heard, then its own when it satisfied — unless the IBI's home, heard too,
/// claims the Original with what was asked (the home, which no Archive can make itself,
/// comes before what the memory says); else the first of an Archive that may hold the
/// IBI; else the first that [`Guard::allows`].
pub(super) fn decide(
    candidates: &[(usize, Next)],
    said: &[Said],
    (incumbent, guard): (Option<usize>, &Guard),
) -> Option<usize> {
    if let Some(inc) = incumbent {
        if said[inc] == Said::Waiting {
            return None;
        }
        if candidates.iter().any(|(i, _)| *i == inc) {
            if guard.may_hold(inc) == Some(MayHold::Home) {
                return Some(inc);
            }
            let homes = || {
                guard
                    .members
                    .iter()
                    .filter(|(i, why)| *why == MayHold::Home && *i != inc)
            };
            if homes().any(|(i, _)| said[*i] == Said::Waiting) {
                return None;
            }
            let home = candidates
                .iter()
                .find(|(i, next)| homes().any(|(h, _)| h == i) && next.claims_original());
            return Some(home.map_or(inc, |(h, _)| *h));
        }
    }
    candidates
        .iter()
        .find(|(i, _)| guard.contains(*i))
        .or_else(|| {
            candidates
                .iter()
                .find(|(i, next)| guard.allows(*i, next, said))
        })
        .map(|(i, _)| *i)
}

#[cfg(test)]
pub(super) mod tests {
    use ibi::Ibi;

    use super::*;
    use crate::answer::{Found, SaidState};
    use crate::resolve::outcome::Outcome;

    /// A URL found at Archive `i`, whose answer said `state` (`None`: no state).
    fn found_at(i: usize, state: Option<&str>) -> (usize, Next) {
        let found = Found {
            url: format!("http://a{i}.example/col/x/doc/a.pdf"),
            archive: format!("a{i}.example/www/2020/01.01.01.01"),
            address: format!("a{i}.example"),
            contenttype: "Data".into(),
            state: state.map(SaidState::of),
            ibi: None,
            urlkey: None,
            language: None,
            timestamp: None,
            next_edition: None,
        };
        (i, Next::Done(Outcome::Found(found)))
    }

    /// A guard of the Archives `members` (by index): the first one remembered, the
    /// others homes.
    pub(crate) fn guard(members: &[usize]) -> Guard {
        let why = |n: usize| {
            if n == 0 {
                MayHold::Remembered
            } else {
                MayHold::Home
            }
        };
        Guard {
            members: members
                .iter()
                .enumerate()
                .map(|(n, &i)| (i, why(n)))
                .collect(),
            ..Guard::default()
        }
    }

    #[test]
    fn the_incumbent_is_awaited_and_preferred() {
        let found = |i: usize| found_at(i, Some("Original"));
        let holds = Said::Holds { original: true };
        let here = Said::Here { original: false };
        use Said::{Down, Gone, Waiting};
        let none = Guard::default();
        // Without an incumbent, nor an Archive that may hold the IBI: the first that
        // satisfied.
        assert_eq!(
            decide(
                &[found(2), found(0)],
                &[holds, Waiting, holds],
                (None, &none)
            ),
            Some(2)
        );
        assert_eq!(decide(&[], &[Waiting, here], (None, &none)), None);
        // With one: nothing before it is heard, however many others satisfied.
        let inc = guard(&[0]);
        assert_eq!(
            decide(&[found(2)], &[Waiting, here, holds], (Some(0), &inc)),
            None
        );
        // Its own answer once it satisfied, even when it came last.
        assert_eq!(
            decide(
                &[found(2), found(0)],
                &[holds, here, holds],
                (Some(0), &inc)
            ),
            Some(0)
        );
        // Heard without satisfying (gone, down): the first other.
        assert_eq!(
            decide(&[found(2)], &[Gone, here, holds], (Some(0), &inc)),
            Some(2)
        );
        assert_eq!(
            decide(&[found(2)], &[Down, here, holds], (Some(0), &inc)),
            Some(2)
        );
    }

    #[test]
    fn only_an_archive_that_may_hold_the_ibi_stands_in_the_way() {
        let holds = Said::Holds { original: true };
        let claims_here = Said::Here { original: true };
        let copy_here = Said::Here { original: false };
        use Said::{Busy, Down, Gone, Waiting};
        let original = |i| found_at(i, Some("Original"));
        let stateless = |i| found_at(i, None);
        let copy = |i| found_at(i, Some("Copy"));
        // Archive 0 is the home.
        let home = guard(&[0]);
        // Another Archive's answer waits for the home's...
        assert_eq!(
            decide(&[original(2)], &[Waiting, Gone, holds], (None, &home)),
            None
        );
        // ... which decides at once when it satisfies, whoever answered before.
        assert_eq!(
            decide(
                &[original(2), original(0)],
                &[holds, Gone, holds],
                (None, &home)
            ),
            Some(0)
        );
        // The home said it does not hold it, or is down: the first other answer.
        for first in [Gone, Down, copy_here] {
            assert_eq!(
                decide(&[original(2)], &[first, Gone, holds], (None, &home)),
                Some(2),
                "{first:?}"
            );
        }
        // The home is busy: no Original claim wins, nor an answer without state; a
        // copy that says it is one does.
        assert_eq!(
            decide(
                &[original(1), stateless(2)],
                &[Busy, holds, holds],
                (None, &home)
            ),
            None
        );
        assert_eq!(
            decide(
                &[original(1), copy(2)],
                &[Busy, holds, holds],
                (None, &home)
            ),
            Some(2)
        );
        // The home claims the Original without what was asked: nothing else wins, not
        // even a copy.
        assert_eq!(
            decide(
                &[original(1), copy(2)],
                &[claims_here, holds, holds],
                (None, &home)
            ),
            None
        );
        // An Archive that may not hold it is silent: nothing stands in the way.
        assert_eq!(
            decide(&[original(2)], &[Gone, Busy, holds], (None, &home)),
            Some(2)
        );
        // What was heard alone before the round counts as well.
        let before = Guard {
            before: vec![Before {
                said: Busy,
                archive: archive_named("h"),
                why: MayHold::Home,
                outage: true,
            }],
            ..Guard::default()
        };
        assert_eq!(
            decide(&[original(1)], &[Gone, holds], (None, &before)),
            None
        );
        assert_eq!(decide(&[copy(1)], &[Gone, holds], (None, &before)), Some(1));
    }

    pub(crate) fn archive_named(k: &str) -> Included {
        Included {
            key: format!("{k}.example/www/2020/01.01.01.01"),
            serviceibi: Ibi::parse(&format!("{k}.example/www/2020/01.01.01.01")).unwrap(),
            address: format!("{k}.example"),
            ip: None,
            recorded: Default::default(),
        }
    }
}
