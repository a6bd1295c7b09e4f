//! One step of a resolution, for one IBI: the location memory read, the remembered Archive
//! or the home asked alone, then, when what they said does not settle it, every other
//! Archive; what the memory may learn decided by the rules of [`super`]'s header.

use ibi::persistent::PersistentUrl;

use super::guard::{Before, Guard, Said};
use super::outcome::{counting, AskResult, MayHold, Next, Outcome, Round};
use super::round::Ask;
use super::teach::Admit;
use super::{Budget, Engine, Reader};
use crate::clock;
use crate::health;
use crate::homes::Archives;
use crate::labels;
use crate::memory::Recalled;
use crate::registry::Included;

/// What one step of a resolution may do with the location memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MemoryUse {
    /// Read it, marking nothing used (the inspection view).
    Read,
    /// Use it, and forget an entry whose Archive said the item left (a related item's
    /// round).
    Keep,
    /// Also learn where the item is (the resolution of the IBI asked for).
    Learn,
}

impl Engine {
    /// One step of a resolution, for one IBI: the remembered Archive alone when there is
    /// a fresh entry, else the IBI's home alone when nothing is remembered, then, when
    /// what they said does not settle it, every other Archive (a stale entry is verified
    /// by every Archive at once, its Archive awaited and preferred); the memory kept by
    /// the rules of the module's header. Never the memory for `requireditemstatus=
    /// Original`, which weighs every Archive's answer (the remembered Archive and the
    /// home may hold the IBI all the same). Each round that asks more than the remembered
    /// Archive or the home is charged to `budget` first.
    pub(super) async fn step(
        &self,
        archives: &Archives,
        url: &PersistentUrl,
        reader: &Reader,
        memory: MemoryUse,
        budget: &dyn Budget,
        rounds: &mut Vec<Round>,
    ) -> Next {
        let writes = memory != MemoryUse::Read;
        let key = url.ibi().key();
        let holders = self.holders(archives, url, writes);
        let guardians = holders.guardians();
        if url.requires_original() {
            let ask = Ask {
                guard: Guard::of(&guardians),
                marked: true,
                ..Ask::default()
            };
            return self
                .fan_out(archives, url, reader, budget, ask, rounds)
                .await;
        }
        // Only a resolution of the IBI itself may make or change an entry.
        let may_remember = memory == MemoryUse::Learn
            && self.memory.enabled()
            && url.filepath().is_none()
            && url.verbs().is_empty();
        let admit = |holder: Option<usize>| Admit {
            key: key.clone(),
            holder,
        };
        let fresh = holders.recalled.as_ref().is_some_and(|r| r.fresh);
        if let (Some(h), false) = (holders.holder, fresh) {
            // Verified by every Archive, the remembered one awaited and preferred.
            self.metrics.memory(labels::MemoryUse::Verify);
            let ask = Ask {
                incumbent: Some(h),
                guard: Guard::of(&guardians),
                admit: may_remember.then(|| admit(Some(h))),
                marked: true,
                ..Ask::default()
            };
            return self
                .fan_out(archives, url, reader, budget, ask, rounds)
                .await;
        }
        let first = holders.first();
        let by_home = holders.holder.is_none();
        let learns = may_remember && holders.recalled.is_none();
        // The home, asked alone, teaches the memory as a fan-out does (every one of the
        // homes heard, exactly one claiming the Original): verified by every Archive
        // once stale.
        let admit_home = (by_home && learns).then(|| admit(None));
        let alone = if first.is_empty() {
            None
        } else {
            Some(self.alone(archives, url, reader, &first, admit_home).await)
        };
        if let Some(next) = alone.as_ref().and_then(|a| a.kept(rounds)) {
            self.metrics.memory(if by_home {
                labels::MemoryUse::Home
            } else {
                labels::MemoryUse::Hit
            });
            return next;
        }
        self.metrics.memory(holders.missed(alone.is_some()));
        let said_first: Vec<(usize, Said, AskResult)> =
            alone.as_ref().map(|a| a.heard.clone()).unwrap_or_default();
        // It answered that the item is not there: the one reason to replace an entry.
        let holder_gone = holders.holder.is_some_and(|h| {
            said_first
                .iter()
                .any(|(i, s, _)| *i == h && *s == Said::Gone)
        });
        if let (Some(h), true, true) = (holders.holder, holder_gone, writes) {
            self.memory.forget(&key, Some(&archives[h].key));
        }
        let others = Others::after(&first, alone.as_ref(), holders.holder, archives.len());
        // Every Archive was asked alone already (one included, say): what they said is
        // weighed as a round would, and nothing more is asked.
        if !others.asked_now.is_empty() {
            if let Err(retry_after) = budget.fan_out() {
                return Next::Done(Outcome::Throttled { retry_after });
            }
        }
        let subset: Vec<Included> = others
            .asked_now
            .iter()
            .map(|&i| archives[i].clone())
            .collect();
        // The memory learns from the others once nothing is remembered, or the
        // remembered Archive said the item left.
        let admit = (may_remember && (learns || holder_gone)).then(|| admit(None));
        // The remembered Archive's failure is counted once, by the round that asked it
        // first.
        let counted = holders
            .holder
            .filter(|h| said_first.iter().any(|(i, _, _)| i == h))
            .map(|h| archives[h].serviceibi.as_str());
        let ask = Ask {
            counted,
            guard: others.guard(&guardians, &said_first, archives),
            admit,
            marked: true,
            ..Ask::default()
        };
        let ended = self.round(&subset, url, reader, ask).await;
        if !subset.is_empty() {
            rounds.push(ended.round);
        }
        weigh(
            ended.next,
            alone.and_then(|a| a.next),
            others.heard_before.len(),
        )
    }

    /// Who may hold the IBI of `url` among `archives`, as the memory (read without
    /// marking anything used by the inspection view, `writes` false, and by the Original
    /// check) and the homes say. An entry naming an Archive under suspicion (not the
    /// IBI's home) is no guide: it is forgotten (when the step `writes`), and the IBI
    /// resolved as if nothing were remembered.
    fn holders(&self, archives: &Archives, url: &PersistentUrl, writes: bool) -> Holders {
        let key = url.ibi().key();
        let mut recalled = if writes && !url.requires_original() {
            self.memory.recall(&key)
        } else {
            self.memory.peek(&key)
        };
        let mut holder = recalled
            .as_ref()
            .and_then(|r| archives.iter().position(|a| *a.key == *r.archive));
        let homes = archives.homes(url.ibi());
        let now = clock::millis(&*self.clock);
        if let Some(h) = holder {
            if !homes.contains(&h) && self.suspicion.suspects(&archives[h].key, now) {
                if writes {
                    self.memory.forget(&key, Some(&archives[h].key));
                }
                (recalled, holder) = (None, None);
            }
        }
        // One home is the IBI's; several (Archives sharing an address) are only where it
        // may be.
        let home_kind = if homes.len() == 1 {
            MayHold::Home
        } else {
            MayHold::SharedHome
        };
        Holders {
            recalled,
            holder,
            homes,
            home_kind,
        }
    }

    /// A round over `archives` as `ask` says, charged to `budget` first, kept in `rounds`.
    async fn fan_out(
        &self,
        archives: &Archives,
        url: &PersistentUrl,
        reader: &Reader,
        budget: &dyn Budget,
        ask: Ask<'_>,
        rounds: &mut Vec<Round>,
    ) -> Next {
        if let Err(retry_after) = budget.fan_out() {
            return Next::Done(Outcome::Throttled { retry_after });
        }
        let ended = self.round(archives, url, reader, ask).await;
        rounds.push(ended.round);
        ended.next
    }

    /// The Archives of `first` asked alone (but dormant ones): what they gave, and what
    /// each said; with `admit`, what the memory learns from them ([`Admission`](super::teach::Admission)).
    async fn alone(
        &self,
        archives: &Archives,
        url: &PersistentUrl,
        reader: &Reader,
        first: &[(usize, MayHold)],
        admit: Option<Admit>,
    ) -> Alone {
        let awake: Vec<(usize, MayHold)> = first
            .iter()
            .copied()
            .filter(|(i, _)| {
                let a = &archives[*i];
                match self
                    .health
                    .of(a.serviceibi.as_str(), || a.recorded.clone())
                    .state()
                {
                    health::State::Awake => true,
                    health::State::Dormant => false,
                }
            })
            .collect();
        let mut heard: Vec<(usize, Said, AskResult)> = first
            .iter()
            .filter(|(i, _)| !awake.iter().any(|(a, _)| a == i))
            .map(|(i, _)| (*i, Said::Down, AskResult::Dormant))
            .collect();
        if awake.is_empty() {
            return Alone {
                round: None,
                next: None,
                heard,
                settled: false,
            };
        }
        let subset: Vec<Included> = awake.iter().map(|(i, _)| archives[*i].clone()).collect();
        let ask = Ask {
            guard: Guard {
                members: awake
                    .iter()
                    .enumerate()
                    .map(|(p, (_, why))| (p, *why))
                    .collect(),
                ..Guard::default()
            },
            admit,
            ..Ask::default()
        };
        let mut ended = self.round(&subset, url, reader, ask).await;
        let by_home = awake.iter().all(|(_, why)| why.home());
        ended.round.remembered = !by_home;
        ended.round.home = by_home;
        heard.extend(
            awake
                .iter()
                .enumerate()
                .map(|(p, (i, _))| (*i, ended.said[p], ended.round.asked[p].result)),
        );
        Alone {
            round: Some(ended.round),
            next: Some(ended.next),
            heard,
            settled: ended.settled,
        }
    }
}

/// What asking the remembered Archive or the home alone gave.
struct Alone {
    /// The round, when one was asked (none when all are dormant).
    round: Option<Round>,
    next: Option<Next>,
    /// Each Archive of the first ask (its index among all), what it said and how its
    /// request ended (dormant ones too).
    heard: Vec<(usize, Said, AskResult)>,
    /// No other Archive could have answered better ([`Ended::settled`](super::round::Ended::settled)).
    settled: bool,
}

impl Alone {
    /// Its round kept in `rounds`, if one was asked; what it gave, when that settles the
    /// step: it satisfied the request, and no other Archive could have answered better.
    fn kept(&self, rounds: &mut Vec<Round>) -> Option<Next> {
        if let Some(round) = &self.round {
            rounds.push(round.clone());
        }
        let next = self.next.as_ref()?;
        (self.settled && next.satisfied()).then(|| next.clone())
    }
}

/// Who may hold the IBI of a step: the Archive the memory remembers for it, and its
/// homes ([`crate::homes`]).
struct Holders {
    /// The memory's entry, unless it named an Archive under suspicion.
    recalled: Option<Recalled>,
    /// The remembered Archive (index), when it is included now.
    holder: Option<usize>,
    /// The IBI's homes (indices).
    homes: Vec<usize>,
    /// Why a home may hold the IBI: the one home, or one of several sharing an address.
    home_kind: MayHold,
}

impl Holders {
    /// The Archives that may hold the IBI, with why: the remembered one, then the homes.
    fn guardians(&self) -> Vec<(usize, MayHold)> {
        let mut guardians: Vec<(usize, MayHold)> = self
            .holder
            .map(|h| (h, MayHold::Remembered))
            .into_iter()
            .collect();
        guardians.extend(
            self.homes
                .iter()
                .filter(|&&h| Some(h) != self.holder)
                .map(|&h| (h, self.home_kind)),
        );
        guardians
    }

    /// Those asked alone first: the remembered Archive, else the homes (nothing
    /// remembered, or its Archive not included now: then the entry stays for when it
    /// is, and nothing is learnt).
    fn first(&self) -> Vec<(usize, MayHold)> {
        match self.holder {
            Some(h) => vec![(h, MayHold::Remembered)],
            None => self.homes.iter().map(|&h| (h, self.home_kind)).collect(),
        }
    }

    /// The metric of the memory for a step that what was asked alone (`asked_alone`:
    /// whether any was) did not settle.
    fn missed(&self, asked_alone: bool) -> labels::MemoryUse {
        match (self.holder, asked_alone) {
            (Some(_), _) => labels::MemoryUse::Stale,
            (None, true) => labels::MemoryUse::HomeMiss,
            (None, false) if self.recalled.is_some() => labels::MemoryUse::Stale,
            (None, false) => labels::MemoryUse::Miss,
        }
    }
}

/// The Archives of a step asked after those asked alone did not satisfy the request:
/// every other Archive, and one asked alone again only when its translation is to be
/// weighed against every other's, or it is the remembered one and failed at once (a
/// moment of overload may be over): one that answered, timed out or was overloaded was
/// heard, or waited for, enough.
struct Others {
    /// Those asked alone and not again (indices).
    heard_before: Vec<usize>,
    /// Those asked now (indices).
    asked_now: Vec<usize>,
}

impl Others {
    /// After `first` was asked alone (`alone`: what it gave, if any was) among `count`
    /// Archives, `holder` the remembered one.
    fn after(
        first: &[(usize, MayHold)],
        alone: Option<&Alone>,
        holder: Option<usize>,
        count: usize,
    ) -> Others {
        let unsettled = alone.is_some_and(|a| a.next.as_ref().is_some_and(Next::satisfied));
        let again: Vec<usize> = alone
            .map(|a| a.heard.as_slice())
            .unwrap_or_default()
            .iter()
            .filter(|(i, _, result)| {
                unsettled || (*result == AskResult::Failed && Some(*i) == holder)
            })
            .map(|(i, _, _)| *i)
            .collect();
        let heard_before: Vec<usize> = first
            .iter()
            .map(|(i, _)| *i)
            .filter(|i| !again.contains(i))
            .collect();
        let asked_now: Vec<usize> = (0..count).filter(|i| !heard_before.contains(i)).collect();
        Others {
            heard_before,
            asked_now,
        }
    }

    /// The guard of the round that asks them: the `guardians` asked now, by their place
    /// in it, and those heard before with what they said (`said_first`; one not heard,
    /// dormant).
    fn guard(
        &self,
        guardians: &[(usize, MayHold)],
        said_first: &[(usize, Said, AskResult)],
        archives: &Archives,
    ) -> Guard {
        let position = |i: usize| self.asked_now.iter().position(|&n| n == i);
        Guard {
            members: guardians
                .iter()
                .filter_map(|&(i, why)| position(i).map(|p| (p, why)))
                .collect(),
            before: guardians
                .iter()
                .filter(|(i, _)| position(*i).is_none())
                .map(|&(i, why)| {
                    let (said, result) = said_first
                        .iter()
                        .find(|(n, _, _)| *n == i)
                        .map_or((Said::Down, AskResult::Dormant), |(_, s, r)| (*s, *r));
                    Before {
                        said,
                        archive: archives[i].clone(),
                        why,
                        outage: result.is_outage(),
                    }
                })
                .collect(),
            set_aside: Vec::new(),
        }
    }
}

/// What a step gives: what the round of the others gave (`next`), unless what was asked
/// alone first (`first`) stands; a round's count of Archives asked with the `before`
/// asked alone.
fn weigh(next: Next, first: Option<Next>, before: usize) -> Next {
    match (next, first) {
        // Its translation, weighed against every other Archive's, stands when the
        // others gave none (though one gave a tombstone).
        (next, Some(first)) if first.satisfied() && !next.satisfied() => first,
        // Nobody else has it: what the Archive asked alone said stands (a tombstone,
        // or the item without the translation asked for).
        (
            Next::Done(Outcome::NotFound { .. } | Outcome::Unavailable { .. }),
            Some(first @ Next::Done(Outcome::Deleted { .. } | Outcome::NoTranslation { .. })),
        ) => first,
        (Next::Done(outcome), _) => Next::Done(counting(outcome, before)),
        (next, _) => next,
    }
}
