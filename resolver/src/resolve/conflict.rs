//! Conflicts: an Archive that answered against the one that may hold an IBI (`Seen`), and
//! where conflicts go (`Judge`: kept by the memory, counted, logged, suspicion).

use std::sync::Arc;

use crate::clock::{self, Clock};
use crate::log::{complain, say};
use crate::memory::{Conflict, LocationMemory};
use crate::metrics::Metrics;
use crate::registry::Included;
use crate::suspicion::{self, Suspicion};

/// A conflict found by a round: `claimant` answered against `holder`, which may hold the
/// IBI (`home`: as its home).
#[derive(Clone, Debug)]
pub(super) struct Seen {
    pub(super) holder: Included,
    pub(super) home: bool,
    pub(super) claimant: Included,
}

/// Where conflicts go: the memory keeps them (beside its entries, for the inspection
/// view and `ibi-resolver archives`), the metrics count them, the log says them; and an
/// Archive that answers against the homes of several IBIs comes under suspicion
/// ([`crate::suspicion`]).
#[derive(Clone)]
pub(super) struct Judge {
    pub(super) memory: Arc<LocationMemory>,
    pub(super) metrics: Arc<Metrics>,
    pub(super) suspicion: Arc<Suspicion>,
    pub(super) clock: Arc<dyn Clock>,
}

impl Judge {
    /// `claimant` claimed the Original of `ibi` (or answered for it while the holder
    /// claims the Original without what was asked) besides `holder` (remembered, or the
    /// home: `true`) or `others` (none remembered): counted, kept, logged the first time
    /// (and then once in a while per claimant, however many IBIs it claims).
    pub(super) fn conflict(
        &self,
        ibi: &str,
        holder: Option<(&Included, bool)>,
        claimant: &Included,
        others: &[&Included],
    ) {
        self.metrics.conflict(claimant.serviceibi.as_str());
        if let Some((h, true)) = holder {
            let now = clock::millis(&*self.clock);
            if self.suspicion.contradicted(&claimant.key, ibi, now) == suspicion::Change::Suspected
            {
                self.metrics.suspected(claimant.serviceibi.as_str());
                say(&format!(
                    "{} ({}) is under suspicion: it answered against the homes of {} IBIs, the last {}, whose home is {} ({}); for {} h after its last such answer, its answers decide nothing for an IBI it may not hold",
                    claimant.key,
                    claimant.address,
                    suspicion::SUSPECT_AFTER,
                    ibi,
                    h.key,
                    h.address,
                    suspicion::FORGIVEN_AFTER.as_secs() / 3600
                ));
            }
        }
        let conflict = Conflict {
            ibi: ibi.to_string(),
            holder: holder.map(|(h, _)| h.key.clone()),
            claimant: claimant.key.clone(),
        };
        if !self.memory.conflict(conflict) {
            return;
        }
        let line = match holder {
            Some((h, home)) => format!(
                "conflict: {} ({}) claims {}, which {} ({}{}) holds: {} keeps it",
                claimant.key,
                claimant.address,
                ibi,
                h.key,
                h.address,
                if home { ", its home" } else { "" },
                h.key
            ),
            None => format!(
                "conflict: {} ({}) claims the Original of {}, as {} do: none is remembered",
                claimant.key,
                claimant.address,
                ibi,
                others
                    .iter()
                    .map(|o| format!("{} ({})", o.key, o.address))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        complain(&format!("conflicts claimed by {}", claimant.key), &line);
    }
}
