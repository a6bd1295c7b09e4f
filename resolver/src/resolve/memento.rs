//! What the editions through time ([`crate::editions`], Memento) ask of the engine: the
//! next edition an IBI names, one step of the resolution of its last edition.

use ibi::persistent::PersistentUrl;

use super::outcome::{Next, Outcome};
use super::step::MemoryUse;
use super::{Budget, Engine, Reader};
use crate::answer::{Asking, Why};
use crate::homes::Archives;

impl Engine {
    /// The next edition of the IBI `url` names, as the Archives say it (one step of the
    /// resolution of its last edition, `!`, none of the chain followed): the IBI an
    /// answer names as its `ibi.nextedition`; none when it has none, or nothing was
    /// found. Each round that asks every Archive is charged to `budget`.
    pub async fn next_edition(
        &self,
        archives: &Archives,
        url: &PersistentUrl,
        reader: &Reader,
        budget: &dyn Budget,
    ) -> Option<ibi::Ibi> {
        let last = PersistentUrl::parse(&format!("/{}!", url.ibi().as_str()), None).ok()?;
        let mut rounds = Vec::new();
        let next = self
            .step(
                archives,
                &last,
                reader,
                MemoryUse::Keep,
                budget,
                &mut rounds,
            )
            .await;
        match next {
            Next::Ask(Asking {
                url,
                why: Why::NextEdition { .. },
            }) => Some(url.ibi().clone()),
            Next::Done(Outcome::Found(found)) => found.next_edition.map(|n| *n),
            _ => None,
        }
    }
}
