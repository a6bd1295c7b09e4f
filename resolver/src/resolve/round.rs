//! One round of a resolution: the urlRequest of Table 8.9 to every Archive given, the
//! answers gathered until one decides, the rest left to end in the background.

use std::sync::Arc;

use ibi::persistent::PersistentUrl;

use super::guard::{Guard, Said};
use super::hearing::{Gathered, Hearing, InFlight, Late, Ledger, Requests, Watch};
use super::outcome::{AskResult, Asked, Next, Round};
use super::tally::Tally;
use super::teach::{Admission, Admit};
use super::urls::ip_list;
use super::{Engine, Reader};
use crate::clock;
use crate::health::{self, Health};
use crate::registry::Included;

/// The detail of an answer set aside, in the inspection view.
const SET_ASIDE: &str = "set aside: this Archive answered against the homes of several IBIs";

/// How a round is to be run besides its Archives.
#[derive(Default)]
pub(super) struct Ask<'a> {
    /// An Archive whose failure is already counted in this step: not counted again.
    pub(super) counted: Option<&'a str>,
    /// The Archive (index) whose answer is awaited before any decides, and preferred
    /// when it satisfies: the remembered one, being verified.
    pub(super) incumbent: Option<usize>,
    /// The Archives that may hold the IBI.
    pub(super) guard: Guard,
    /// What the memory may learn from every answer of the round.
    pub(super) admit: Option<Admit>,
    /// Its requests are marked while under way ([`crate::loops`]): every round but
    /// those that ask the remembered Archive or the home alone.
    pub(super) marked: bool,
}

/// What a round gave.
pub(super) struct Ended {
    pub(super) round: Round,
    pub(super) next: Next,
    /// What each Archive said of the item, by the time the round decided.
    pub(super) said: Vec<Said>,
    /// No other Archive could have answered better: false when a bare translation was
    /// chosen among these answers without the reader's first language.
    pub(super) settled: bool,
}

impl Engine {
    /// One round: the urlRequest to every Archive given (but dormant ones), answers read
    /// as they come, until one decides (the incumbent's, when it satisfies, once it is
    /// in; another's only as [`Guard::allows`]) or all are in. With `ask.admit`, every
    /// answer is read to its end (in the background, past the decision) and the memory
    /// learns from them all ([`Admission`]).
    pub(super) async fn round(
        &self,
        archives: &[Included],
        url: &PersistentUrl,
        reader: &Reader,
        ask: Ask<'_>,
    ) -> Ended {
        let verblist = url.verblist_text();
        let mut ask = ask;
        // An Archive under suspicion that may not hold the IBI is asked, and decides
        // nothing.
        let now = clock::millis(&*self.clock);
        ask.guard.set_aside = (0..archives.len())
            .filter(|&i| !ask.guard.contains(i) && self.suspicion.suspects(&archives[i].key, now))
            .collect();
        let mut hearing = Hearing::new(self, archives, ask.counted, &ask.guard);
        let requests = self.requests(archives, url, &verblist, reader, &mut hearing);
        let marking = ask.marked.then(|| (self.underway.clone(), url.ibi().key()));
        let mut in_flight = InFlight::start(self, requests, marking);
        let mut tally = Tally::default();
        let gathered = hearing
            .gather(
                &mut in_flight,
                &mut tally,
                archives,
                url,
                reader,
                (ask.incumbent, &ask.guard),
            )
            .await;
        let (deciding, settled) = match gathered {
            Gathered::Claimed => (None, true),
            Gathered::Decided(_) | Gathered::All => tally.deciding(
                gathered.decided(),
                url,
                &reader.languages,
                (ask.incumbent, &ask.guard),
                &hearing.said,
            ),
        };
        let Hearing {
            mut asked,
            said,
            healths,
            ledger,
        } = hearing;
        let guard = ask.guard;
        for &i in &guard.set_aside {
            if matches!(said[i], Said::Holds { .. }) {
                asked[i].detail = Some(SET_ASIDE.to_string());
            }
        }
        let next = match deciding {
            Some(next) => next,
            None => self.undecided(tally, url, archives, (&said, &asked), &guard),
        };
        // The answers still under way are weighed against the Archives that claim the
        // Original without what was asked, as they come.
        let watch = matches!(gathered, Gathered::Claimed).then(|| Watch {
            claimers: guard.claiming(Said::Here { original: true }, &said, archives),
            key: url.ibi().key(),
            judge: self.judge(),
        });
        self.finish_in_background(
            in_flight.running,
            archives,
            url,
            (healths, ledger),
            (ask.admit.map(|admit| (admit, guard)), watch),
            &said,
        );
        let round = Round {
            ibi: url.ibi().as_str().to_string(),
            verblist,
            remembered: false,
            home: false,
            why: None,
            asked,
        };
        Ended {
            round,
            next,
            said,
            settled,
        }
    }

    /// What a round that no answer decided gives ([`Tally::outcome`]), the conflicts it
    /// found judged.
    fn undecided(
        &self,
        tally: Tally,
        url: &PersistentUrl,
        archives: &[Included],
        (said, asked): (&[Said], &[Asked]),
        guard: &Guard,
    ) -> Next {
        let (next, conflicts) = tally.outcome(url, archives, said, asked, guard);
        let judge = self.judge();
        for seen in conflicts {
            let holder = (&seen.holder, seen.home);
            judge.conflict(&url.ibi().key(), Some(holder), &seen.claimant, &[]);
        }
        next
    }

    /// The urlRequest of the round to each Archive that may be asked, by index; the
    /// others (dormant, or at an address the resolver may not contact) noted in
    /// `hearing`.
    pub(super) fn requests(
        &self,
        archives: &[Included],
        url: &PersistentUrl,
        verblist: &str,
        reader: &Reader,
        hearing: &mut Hearing,
    ) -> Vec<(usize, String)> {
        let ips = ip_list(&reader.ips);
        let mut requests: Vec<(usize, String)> = Vec::with_capacity(archives.len());
        for (i, a) in archives.iter().enumerate() {
            match hearing.healths[i].state() {
                health::State::Awake => {}
                health::State::Dormant => {
                    hearing.asked[i].result = AskResult::Dormant;
                    hearing.said[i] = Said::Down;
                    continue;
                }
            }
            let mut pairs: Vec<(&str, &[u8])> =
                vec![("clientinformation.ipaddress", ips.as_bytes())];
            if let Some(path) = url.filepath() {
                pairs.push(("parsedibiurl.filepath", path));
            }
            pairs.push(("parsedibiurl.ibi", url.ibi().as_str().as_bytes()));
            if !verblist.is_empty() {
                pairs.push(("parsedibiurl.verblist", verblist.as_bytes()));
            }
            pairs.push(("servicesubject", b"urlRequest"));
            match self
                .client
                .service_url(&a.address, a.serviceibi.as_str(), &pairs)
            {
                Ok(request) => requests.push((i, request)),
                Err(e) => {
                    // Not asked, but no outage either: its address is one the resolver
                    // may not contact.
                    hearing.asked[i].result = AskResult::Refused;
                    hearing.asked[i].detail = Some(e);
                    hearing.said[i] = Said::Down;
                }
            }
        }
        requests
    }

    /// Lets the round's requests still under way end in the background, each within the
    /// timeout: cut off, their connections could not be used again, and the next
    /// resolution would open new ones. What they get counts toward their Archives'
    /// health, and toward what the memory learns (`admit`, with the Archives that may
    /// hold the IBI), not toward this resolution. With none under way, what the memory
    /// learns is settled at once.
    fn finish_in_background(
        &self,
        tasks: Requests,
        archives: &[Included],
        url: &PersistentUrl,
        (healths, ledger): (Vec<Arc<Health>>, Ledger),
        (admit, watch): (Option<(Admit, Guard)>, Option<Watch>),
        said: &[Said],
    ) {
        if admit.is_none() && tasks.is_empty() {
            return;
        }
        // What outlives the round shares one copy of its Archives.
        let archives: Arc<[Included]> = Arc::from(archives);
        let admission = admit.map(|(admit, guard)| Admission {
            admit,
            guard,
            archives: archives.clone(),
            said: said.to_vec(),
            judge: self.judge(),
        });
        if tasks.is_empty() {
            if let Some(admission) = admission {
                admission.settle();
            }
            return;
        }
        let late = Late {
            archives,
            url: url.clone(),
            healths,
            ledger,
            watch,
        };
        tokio::spawn(late.drain(tasks, admission));
    }
}
