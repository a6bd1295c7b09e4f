//! The Original check of `requireditemstatus=Original` (§8.2): once every answer is in,
//! exactly one Archive may claim the Original; two or more, or answers that disagree on
//! the item, are under suspicion; only copies are named; nothing is verified while an
//! Archive that may hold the IBI did not answer.

use std::collections::HashSet;

use super::conflict::Seen;
use super::outcome::{shown_archive, Next, Outcome};
use super::tally::{Ending, Tally};
use crate::answer::Found;

impl Tally {
    /// The Original check's verdict, when it settles the round (with the `conflicts`
    /// found, taken, when the verdict counts them): unverifiable while an Archive that may
    /// hold the IBI is silent; suspicion when one claims the Original without what was
    /// asked and others give it; the IBI named, followed only when every answer speaks of
    /// the same item; the one Original, else the copies, else suspicion of every claimant.
    pub(super) fn original_check(
        &mut self,
        ending: &Ending,
        conflicts: &mut Vec<Seen>,
    ) -> Option<(Next, Vec<Seen>)> {
        let archives = ending.archives;
        let shown_found = |f: &Found| format!("{} ({})", f.address, f.archive);
        let done = |outcome: Outcome, conflicts: Vec<Seen>| Some((Next::Done(outcome), conflicts));
        // The check is made only once every Archive that may hold the IBI said what it
        // holds.
        if !ending.silent.is_empty() {
            let copies: Vec<Found> = self
                .claims
                .iter()
                .filter(|(_, f)| !f.claims_original())
                .map(|(_, f)| f.clone())
                .collect();
            return done(
                Outcome::Unverifiable {
                    archives: ending.silent.clone(),
                    copies,
                },
                Vec::new(),
            );
        }
        if !ending.claimers.is_empty() && !ending.besides.is_empty() {
            // It claims the Original without what was asked; others give it.
            let mut suspects: Vec<String> = ending
                .claimers
                .iter()
                .map(|(a, _)| shown_archive(a))
                .collect();
            suspects.extend(ending.besides.iter().map(|&i| shown_archive(&archives[i])));
            return done(
                Outcome::Suspicion { archives: suspects },
                std::mem::take(conflicts),
            );
        }
        if !self.asks.is_empty() {
            // Followed only when every answer that named an IBI, and every one that gave a
            // URL, speak of the same item: else the Archives disagree on what it is.
            let named: HashSet<String> = self.asks.iter().map(|(_, a)| a.url.ibi().key()).collect();
            let agree = named.len() == 1
                && self
                    .claims
                    .iter()
                    .all(|(_, f)| f.ibi_key().is_some_and(|k| named.contains(&k)));
            if agree {
                return Some((Next::Ask(self.asks.swap_remove(0).1), Vec::new()));
            }
            let mut suspects: Vec<String> = self
                .asks
                .iter()
                .map(|(i, _)| shown_archive(&archives[*i]))
                .collect();
            suspects.extend(self.claims.iter().map(|(_, f)| shown_found(f)));
            return done(Outcome::Suspicion { archives: suspects }, Vec::new());
        }
        if self.claims.is_empty() {
            return None;
        }
        let originals: Vec<&Found> = self
            .claims
            .iter()
            .map(|(_, f)| f)
            .filter(|f| f.claims_original())
            .collect();
        let outcome = match originals.as_slice() {
            [one] => Outcome::Found((*one).clone()),
            [] => Outcome::NoOriginal {
                copies: self.claims.iter().map(|(_, f)| f.clone()).collect(),
                unasked: ending.unasked.clone(),
            },
            many => Outcome::Suspicion {
                archives: many.iter().map(|f| shown_found(f)).collect(),
            },
        };
        done(outcome, std::mem::take(conflicts))
    }
}
