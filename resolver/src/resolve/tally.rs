//! A round's decision: its answers counted into a `Tally`, the one that decides taken
//! out of them (a bare translation chosen among every answer), and, once no answer
//! decided, what the round gives (the Original check's verdict, in `original`; the item
//! in its own language; deleted, no translation, unavailable, not found) with the
//! conflicts it found.

use std::collections::HashSet;

use ibi::persistent::PersistentUrl;
use ibi::relation::{Lang, Relation, Step};

use super::conflict::Seen;
use super::guard::{decide, Guard, Said, Stand};
use super::outcome::{shown_archive, AskResult, Asked, MayHold, Missing, Next, Outcome};
use crate::answer::{own_language, Asking, Found, Gives, Offers, Reading};
use crate::lang;
use crate::registry::Included;

/// What the answers of a round gave so far, toward its decision.
#[derive(Default)]
pub(super) struct Tally {
    /// With the Original check: the answers that satisfied, each a claim, by Archive.
    pub(super) claims: Vec<(usize, Found)>,
    /// Answers naming where to ask next, in the order they came: without the Original
    /// check, taken only when no answer holds the URL; with it, followed only when
    /// every answer agrees on the IBI.
    pub(super) asks: Vec<(usize, Asking)>,
    /// With the Original check: an answer offered no translation the reader takes.
    untranslated: bool,
    /// A bare translation: every answer's variants, chosen among once all are in,
    /// unless one offers the reader's first language (then it decides at once).
    offers: Vec<(usize, Box<Offers>)>,
    /// The first tombstone: the Archive, and the date.
    deleted: Option<(usize, String)>,
    /// The Archives that hold the item, without what was asked.
    here: Vec<usize>,
    /// Answers that would decide, in the order they came.
    pub(super) candidates: Vec<(usize, Next)>,
}

impl Tally {
    /// Counts the answer of Archive `i` (`asked`); what it decides, if it would.
    pub(super) fn add(
        &mut self,
        i: usize,
        reading: Reading,
        original: bool,
        languages: &[Lang],
        asked: &mut Asked,
    ) -> Option<Next> {
        match reading {
            Reading::Satisfies(found) if original => {
                self.claims.push((i, found));
                None
            }
            Reading::Satisfies(found) => Some(Next::Done(Outcome::Found(found))),
            Reading::Ask(asking) => {
                // A URL another Archive holds is worth more than a name that may lead
                // nowhere: this waits for the other answers.
                self.asks.push((i, asking));
                None
            }
            Reading::Offers(o) if original => {
                match alone(&o, languages) {
                    Some(Next::Done(Outcome::Found(found))) => self.claims.push((i, found)),
                    Some(Next::Ask(asking)) => self.asks.push((i, asking)),
                    _ => self.untranslated = true,
                }
                None
            }
            Reading::Offers(o) => {
                // The reader's first language exactly, with its URL, decides at once.
                let first_language = o
                    .best(languages)
                    .filter(|(rank, gives)| {
                        *rank == lang::Rank::BEST && matches!(gives, Gives::Url(_))
                    })
                    .map(|(_, gives)| next_of(gives.clone()));
                self.offers.push((i, o));
                first_language
            }
            Reading::Deleted(date) => {
                self.deleted.get_or_insert((i, date));
                None
            }
            Reading::Here { .. } => {
                self.here.push(i);
                None
            }
            Reading::Empty => {
                asked.result = AskResult::Empty;
                None
            }
            Reading::Invalid(why) => {
                asked.result = AskResult::Failed;
                asked.detail = Some(why);
                None
            }
        }
    }

    /// Without the Original check, the answer that decides the round (`decided`, if one
    /// did before all were in), taken out of the candidates; and whether no other
    /// Archive could have answered better (false when a bare translation was chosen
    /// among these answers without the reader's first language). Once every answer is
    /// in, an Archive that may not hold the IBI decides only as [`Guard::allows`].
    pub(super) fn deciding(
        &mut self,
        mut decided: Option<usize>,
        url: &PersistentUrl,
        languages: &[Lang],
        who: (Option<usize>, &Guard),
        said: &[Said],
    ) -> (Option<Next>, bool) {
        let guard = who.1;
        let mut settled = true;
        if !url.requires_original() && decided.is_none() {
            // What an Archive that may not hold the IBI names or offers counts only
            // while none that may stands in the way (a copy is a URL, not a name).
            let heard = |i: usize| {
                guard.contains(i)
                    || (!guard.set_aside.contains(&i) && guard.stand(said) == Stand::Clear)
            };
            if self.candidates.is_empty() && !self.offers.is_empty() {
                // A bare translation without the reader's first language: the best of
                // every answer's variants, the same whichever answered first.
                settled = false;
                let offers: Vec<(usize, Box<Offers>)> = self
                    .offers
                    .iter()
                    .filter(|(i, _)| heard(*i))
                    .cloned()
                    .collect();
                self.candidates
                    .extend(choose_translation(&offers, languages, url));
            }
            if self.candidates.is_empty() {
                // No answer held the URL: the first that named where it is.
                if let Some((i, asking)) = self.asks.iter().find(|(i, _)| heard(*i)) {
                    self.candidates.push((*i, Next::Ask(asking.clone())));
                }
            }
            // Every answer is in and the incumbent did not satisfy: the first that did
            // and may decide.
            decided = decide(&self.candidates, said, who);
        }
        let deciding = decided.and_then(|d| {
            let at = self.candidates.iter().position(|(i, _)| *i == d)?;
            Some(self.candidates.swap_remove(at).1)
        });
        (deciding, settled)
    }

    /// The Archives, not among those that may hold the IBI, whose answers satisfied the
    /// request (a URL, a name, a translation, or a claim of the Original check).
    fn answered_besides(&self, guard: &Guard) -> Vec<usize> {
        let mut set: Vec<usize> = self
            .candidates
            .iter()
            .map(|(i, _)| *i)
            .chain(self.asks.iter().map(|(i, _)| *i))
            .chain(self.offers.iter().map(|(i, _)| *i))
            .chain(self.claims.iter().map(|(i, _)| *i))
            .filter(|i| !guard.contains(*i))
            .collect();
        set.sort_unstable();
        set.dedup();
        set
    }

    /// What a round that no answer decided gives: the Original check's verdict, the
    /// item in its own language, or how it ended (deleted, no translation, not found,
    /// unavailable while an Archive that may hold the IBI did not answer); and the
    /// conflicts it found ([`Tally::conflicts`]). The answers of Archives set aside
    /// count only toward conflicts.
    pub(super) fn outcome(
        mut self,
        url: &PersistentUrl,
        archives: &[Included],
        said: &[Said],
        asked: &[Asked],
        guard: &Guard,
    ) -> (Next, Vec<Seen>) {
        let original = url.requires_original();
        // The Archives that may hold the IBI, claim its Original, and said what was asked
        // is not there; and the others' answers for it, which are conflicts.
        let claimers = guard.claiming(Said::Here { original: true }, said, archives);
        let besides = self.answered_besides(guard);
        let mut conflicts = self.conflicts(original, &claimers, &besides, archives, said, guard);
        // Past the conflicts, what an Archive set aside answered counts for nothing.
        let weighed = |i: &usize| !guard.set_aside.contains(i);
        self.claims.retain(|(i, _)| weighed(i));
        self.asks.retain(|(i, _)| weighed(i));
        let ending = Ending {
            archives,
            silent: guard.silent(said, asked, archives),
            unasked: (0..archives.len())
                .filter(|&i| !guard.contains(i) && said[i].silent() && asked[i].result.is_outage())
                .map(|i| shown_archive(&archives[i]))
                .collect(),
            claimers,
            besides: besides.into_iter().filter(weighed).collect(),
        };
        if original {
            if let Some(verdict) = self.original_check(&ending, &mut conflicts) {
                return verdict;
            }
        }
        if let (true, Some(step)) = (self.untranslated, url.relation().bare_translation_at()) {
            return (Next::Ask(own_language(url, step)), Vec::new());
        }
        (Next::Done(self.ended(url, guard, ending)), conflicts)
    }

    /// The conflicts of a round: each Archive `besides` those that may hold the IBI that
    /// answered for what `claimers` (the remembered or home Archive, claiming the
    /// Original) say is not there; and, in the Original check (`original`), one that
    /// claims the Original the home claims too.
    fn conflicts(
        &self,
        original: bool,
        claimers: &[(Included, MayHold)],
        besides: &[usize],
        archives: &[Included],
        said: &[Said],
        guard: &Guard,
    ) -> Vec<Seen> {
        let against = |holders: &[(Included, MayHold)]| -> Vec<Seen> {
            holders
                .iter()
                .flat_map(|(h, why)| {
                    besides.iter().map(move |&i| Seen {
                        holder: h.clone(),
                        home: *why == MayHold::Home,
                        claimant: archives[i].clone(),
                    })
                })
                .collect()
        };
        let mut conflicts = against(claimers);
        if original && claimers.is_empty() {
            // The home claims the Original with what was asked; so do others.
            let homes: Vec<(Included, MayHold)> = guard
                .claiming(Said::Holds { original: true }, said, archives)
                .into_iter()
                .filter(|(_, why)| *why == MayHold::Home)
                .collect();
            let claim_too: HashSet<usize> = self
                .claims
                .iter()
                .filter(|(i, f)| !guard.contains(*i) && f.claims_original())
                .map(|(i, _)| *i)
                .collect();
            conflicts.extend(
                against(&homes)
                    .into_iter()
                    .filter(|c| claim_too.iter().any(|&i| archives[i].key == c.claimant.key)),
            );
        }
        conflicts
    }

    /// How a round ended that neither decided nor the Original check settled: deleted (a
    /// tombstone heard), no translation (the item heard without it), unavailable (an
    /// Archive that may hold the IBI silent), else not found.
    fn ended(mut self, url: &PersistentUrl, guard: &Guard, ending: Ending) -> Outcome {
        let Ending {
            archives,
            silent,
            unasked,
            ..
        } = ending;
        let weighed = |i: &usize| !guard.set_aside.contains(i);
        // Said by an Archive that may hold the IBI, or by another (not set aside) while
        // none of those is silent.
        let heard = |i: usize| guard.contains(i) || (silent.is_empty() && weighed(&i));
        let here_before = guard
            .before
            .iter()
            .any(|b| matches!(b.said, Said::Here { .. }));
        self.here.retain(weighed);
        let here = here_before || !self.here.is_empty();
        let translation = explicit_translation(url.relation());
        match (self.deleted, translation) {
            (Some((i, date)), _) if heard(i) => Outcome::Deleted {
                date,
                keeper: Some((
                    archives[i].address.clone(),
                    archives[i].serviceibi.to_string(),
                )),
            },
            (_, Some(language)) if here_before || self.here.iter().any(|&i| heard(i)) => {
                Outcome::NoTranslation { language }
            }
            _ if !silent.is_empty() => Outcome::Unavailable {
                archives: silent,
                asked: archives.len(),
                unasked,
            },
            _ => Outcome::NotFound {
                asked: archives.len(),
                missing: here.then(|| Missing::of(url)),
                unasked,
            },
        }
    }
}

/// What the end of a round that no answer decided is weighed with, besides its tally.
pub(super) struct Ending<'a> {
    pub(super) archives: &'a [Included],
    /// The Archives that may hold the IBI and could not be heard for a while, as shown.
    pub(super) silent: Vec<String>,
    /// The other Archives that could not be heard, as shown.
    pub(super) unasked: Vec<String>,
    /// The Archives that may hold the IBI and claim its Original without what was asked.
    pub(super) claimers: Vec<(Included, MayHold)>,
    /// The other Archives (indices, but those set aside) whose answers satisfied.
    pub(super) besides: Vec<usize>,
}

/// What the answer of `offers` alone gives: its best variant, else the item itself, else
/// where to ask on.
pub(super) fn alone(offers: &Offers, languages: &[Lang]) -> Option<Next> {
    offers
        .best(languages)
        .map(|(_, g)| g.clone())
        .or_else(|| offers.itself.clone())
        .map(next_of)
        .or_else(|| offers.onward.clone().map(Next::Ask))
}

/// What a variant of a bare translation leads to.
fn next_of(gives: Gives) -> Next {
    match gives {
        Gives::Url(found) => Next::Done(Outcome::Found(found)),
        Gives::Ask(asking) => Next::Ask(asking),
    }
}

/// The variant of a bare translation chosen among every answer's `offers` (with the
/// index of the Archive that gave it): the one the reader prefers most, an Original
/// before a copy, then the first Archive in the registry's order; else the item itself
/// (the same order); else where an answer says to ask on; else the item in its own
/// language. The same answers give the same choice, whichever came first.
fn choose_translation(
    offers: &[(usize, Box<Offers>)],
    languages: &[Lang],
    url: &PersistentUrl,
) -> Option<(usize, Next)> {
    let preferred = offers
        .iter()
        .filter_map(|(i, o)| {
            let (rank, g) = o.best(languages)?;
            Some(((rank, matches!(g, Gives::Ask(_)), !g.original(), *i), g))
        })
        .min_by_key(|(k, _)| *k)
        .map(|((_, _, _, i), g)| (i, next_of(g.clone())));
    let itself = || {
        offers
            .iter()
            .filter_map(|(i, o)| o.itself.as_ref().map(|g| ((!g.original(), *i), g)))
            .min_by_key(|(k, _)| *k)
            .map(|((_, i), g)| (i, next_of(g.clone())))
    };
    let onward = || {
        offers
            .iter()
            .filter_map(|(i, o)| o.onward.as_ref().map(|a| (*i, a)))
            .min_by_key(|(i, _)| *i)
            .map(|(i, a)| (i, Next::Ask(a.clone())))
    };
    let in_own_language = || {
        let step = url.relation().bare_translation_at()?;
        let first = offers.iter().map(|(i, _)| *i).min()?;
        Some((first, Next::Ask(own_language(url, step))))
    };
    preferred
        .or_else(itself)
        .or_else(onward)
        .or_else(in_own_language)
}

/// The language of the first translation step with a language, if any.
fn explicit_translation(relation: &Relation) -> Option<String> {
    relation.steps().iter().find_map(|s| match s {
        Step::Translation(Some(l)) => Some(l.to_string()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::tests::{read, url, EXAMPLE_9_3};

    #[test]
    fn example_8_3_bare_translation_by_accept_language() {
        let pick = |accept: &str| {
            let Reading::Offers(offers) = read(EXAMPLE_9_3, "/8JMKD3MGP8W/35MME4E+") else {
                panic!("not offers");
            };
            let prefs = lang::preferences(Some(accept));
            match choose_translation(&[(0, offers)], &prefs, &url("/8JMKD3MGP8W/35MME4E+")) {
                Some((0, Next::Done(Outcome::Found(f)))) => f.language.unwrap(),
                _ => panic!("no translation chosen"),
            }
        };
        assert_eq!(pick("pt-BR,fr;q=0.8,en;q=0.5,pt;q=0.3"), "pt");
        assert_eq!(pick("en"), "en");
        // Nothing preferred: the item in its own language (its variant is itself).
        assert_eq!(pick("fr"), "en");
        assert_eq!(pick(""), "en");
    }

    #[test]
    fn a_bare_translation_is_chosen_among_every_answer_the_same_way_whichever_came_first() {
        let answer = |state: &str, langs: &[(&str, &str)]| {
            // As an Archive answers a bare GetTranslation: each variant with its state.
            let mut a = "archiveaddress a\r\nibi {rep x.y/z/2020/01.01.01.00}\r\n".to_string();
            for (lang, url) in langs {
                a.push_str(&format!(
                    "ibi.translation({lang}) {{rep x.y/z/2020/01.01.01.0{}}}\r\n",
                    lang.len()
                ));
                if !url.is_empty() {
                    a.push_str(&format!("state.translation({lang}) {state}\r\n"));
                    a.push_str(&format!("url.translation({lang}) {url}\r\n"));
                }
            }
            let Reading::Offers(o) = read(&a, "/x.y/z/2020/01.01.01.00+") else {
                panic!("{a}");
            };
            o
        };
        let copy = answer("Copy", &[("en", "http://copy/en")]);
        let original = answer(
            "Original",
            &[("en", "http://orig/en"), ("pt", "http://orig/pt")],
        );
        let elsewhere = answer("Copy", &[("pt-BR", "")]);
        let chosen = |offers: &[(usize, Box<Offers>)], accept: &str| match choose_translation(
            offers,
            &lang::preferences(Some(accept)),
            &url("/x.y/z/2020/01.01.01.00+"),
        ) {
            Some((i, Next::Done(Outcome::Found(f)))) => format!("{i} {}", f.url),
            Some((i, Next::Ask(a))) => format!("{i} ask {} {}", a.url.ibi(), a.url.verblist_text()),
            _ => "none".into(),
        };
        for accept in ["pt-BR,pt;q=0.9,en;q=0.5", "en", "pt", "fr"] {
            let forward = [
                (0, copy.clone()),
                (1, original.clone()),
                (2, elsewhere.clone()),
            ];
            let backward = [
                (2, elsewhere.clone()),
                (1, original.clone()),
                (0, copy.clone()),
            ];
            assert_eq!(
                chosen(&forward, accept),
                chosen(&backward, accept),
                "{accept}"
            );
        }
        let all = [
            (0, copy.clone()),
            (1, original.clone()),
            (2, elsewhere.clone()),
        ];
        // The reader's first language exactly, though only named (kept elsewhere).
        assert_eq!(
            chosen(&all, "pt-BR,pt;q=0.9,en;q=0.5"),
            "2 ask x.y/z/2020/01.01.01.05 "
        );
        assert_eq!(chosen(&all, "pt"), "1 http://orig/pt");
        // Equal languages: the Original before the copy.
        assert_eq!(chosen(&all, "en"), "1 http://orig/en");
        // None of the reader's: the item in its own language.
        assert_eq!(chosen(&all, "fr"), "0 ask x.y/z/2020/01.01.01.00 ");
        // Only the reader's first language, exactly, decides at once.
        let prefs = lang::preferences(Some("pt-BR,pt;q=0.9"));
        assert_eq!(elsewhere.best(&prefs).map(|b| b.0), Some(lang::Rank::BEST));
        assert!(original.best(&prefs).map(|b| b.0) > Some(lang::Rank::BEST));
    }
}
