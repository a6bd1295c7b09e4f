//! A round's requests and answers: the requests under way in a window (`InFlight`), the
//! answers heard as they come and what they did to their Archives' health (`Hearing`,
//! `Ledger`), and those still under way past the decision (`Late`).

use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use ibi::persistent::PersistentUrl;

use super::conflict::Judge;
use super::guard::{decide, Guard, Said, Stand};
use super::outcome::{ms, AskResult, Asked, MayHold};
use super::tally::Tally;
use super::teach::Admission;
use super::{Engine, Reader, WINDOW};
use crate::answer::{is_answer, read_answer, Reading};
use crate::client::{ArchiveClient, Fetched};
use crate::clock::{self, Clock};
use crate::health::{self, Health};
use crate::labels::Request;
use crate::log::say;
use crate::loops::Underway;
use crate::metrics::Metrics;
use crate::registry::Included;

/// One request's end: the Archive's index, what came, and how long it took.
type Heard = (usize, Fetched, Duration);

/// A round's requests under way, driven by whoever awaits them: the resolution, then the
/// task that lets them end in the background. No task of its own each: a round over a
/// hundred Archives costs one task, not a hundred.
pub(super) type Requests =
    FuturesUnordered<std::pin::Pin<Box<dyn std::future::Future<Output = Heard> + Send>>>;

/// A round's requests under way: at most [`WINDOW`] at once, the next one sent as each
/// ends, so that a round over thousands of Archives goes in waves, and one resolution
/// does not take every request the client allows at once (client::UNDER_WAY). Each is
/// marked while under way when `marking` says about which IBI ([`crate::loops`]).
pub(super) struct InFlight {
    pub(super) running: Requests,
    waiting: std::vec::IntoIter<(usize, String)>,
    client: ArchiveClient,
    timeout: Duration,
    marking: Option<(Arc<Underway>, String)>,
}

impl InFlight {
    pub(super) fn start(
        engine: &Engine,
        requests: Vec<(usize, String)>,
        marking: Option<(Arc<Underway>, String)>,
    ) -> InFlight {
        let mut in_flight = InFlight {
            running: FuturesUnordered::new(),
            waiting: requests.into_iter(),
            client: engine.client.clone(),
            timeout: engine.timeout,
            marking,
        };
        for _ in 0..WINDOW {
            let Some(request) = in_flight.waiting.next() else {
                break;
            };
            in_flight.send(request);
        }
        in_flight
    }

    fn send(&mut self, (i, request): (usize, String)) {
        let client = self.client.clone();
        let timeout = self.timeout;
        let mark = self
            .marking
            .as_ref()
            .and_then(|(underway, ibi)| underway.mark(ibi, client.address_of(&request)?));
        self.running.push(Box::pin(async move {
            let (fetched, took) = client.get(&request, timeout).await;
            drop(mark);
            (i, fetched, took)
        }));
    }

    /// The next request to end (`None` when none is left), the next one waiting sent.
    pub(super) async fn next(&mut self) -> Option<Heard> {
        let heard = self.running.next().await?;
        if let Some(request) = self.waiting.next() {
            self.send(request);
        }
        Some(heard)
    }
}

/// How the reading of a round's answers ended.
pub(super) enum Gathered {
    /// This answer (index) decides.
    Decided(usize),
    /// An Archive that may hold the IBI claims the Original without what was asked:
    /// whatever the others answer, it is not found.
    Claimed,
    /// Every answer is in.
    All,
}

impl Gathered {
    /// The answer (index) that decided, if one did.
    pub(super) fn decided(&self) -> Option<usize> {
        match self {
            Gathered::Decided(i) => Some(*i),
            Gathered::Claimed | Gathered::All => None,
        }
    }
}

/// What a round heard of each of its Archives, and their health as it counts.
pub(super) struct Hearing {
    pub(super) asked: Vec<Asked>,
    pub(super) said: Vec<Said>,
    pub(super) healths: Vec<Arc<Health>>,
    pub(super) ledger: Ledger,
}

impl Hearing {
    pub(super) fn new(
        engine: &Engine,
        archives: &[Included],
        counted: Option<&str>,
        guard: &Guard,
    ) -> Hearing {
        Hearing {
            asked: archives
                .iter()
                .enumerate()
                .map(|(i, a)| Asked {
                    archive: a.serviceibi.to_string(),
                    address: a.address.clone(),
                    result: AskResult::NotAwaited,
                    detail: None,
                    may_hold: guard.may_hold(i),
                    pairs: Vec::new(),
                    ms: 0.0,
                })
                .collect(),
            said: vec![Said::Waiting; archives.len()],
            healths: archives
                .iter()
                .map(|a| {
                    engine
                        .health
                        .of(a.serviceibi.as_str(), || a.recorded.clone())
                })
                .collect(),
            ledger: Ledger {
                metrics: engine.metrics.clone(),
                clock: engine.clock.clone(),
                dormant_after: engine.dormant_after,
                counted: counted.map(str::to_string),
            },
        }
    }

    /// Reads the answers as they come into `tally` until one decides (without the
    /// Original check, as [`decide`] says), or an Archive that may hold the IBI claims
    /// the Original without what was asked (no other answer can change the outcome
    /// then), or all are in.
    pub(super) async fn gather(
        &mut self,
        in_flight: &mut InFlight,
        tally: &mut Tally,
        archives: &[Included],
        url: &PersistentUrl,
        reader: &Reader,
        who: (Option<usize>, &Guard),
    ) -> Gathered {
        let original = url.requires_original();
        // Claimed already by what was heard before the round (the remembered Archive or
        // the home, asked alone): the others' answers are read in the background.
        if !original && who.1.stand(&self.said) == Stand::Claimed {
            return Gathered::Claimed;
        }
        while let Some((i, fetched, took)) = in_flight.next().await {
            if let Some(reading) = self.hear(i, fetched, took, &archives[i], url) {
                self.asked[i].result = AskResult::Answered;
                self.said[i] = reading.said();
                let languages = &reader.languages;
                if let Some(next) = tally.add(i, reading, original, languages, &mut self.asked[i]) {
                    tally.candidates.push((i, next));
                }
            }
            if !original {
                if let Some(i) = decide(&tally.candidates, &self.said, who) {
                    return Gathered::Decided(i);
                }
                if who.1.stand(&self.said) == Stand::Claimed {
                    return Gathered::Claimed;
                }
            }
        }
        Gathered::All
    }

    /// Notes what came from Archive `i` after `took`, and its answer read, if it answered.
    fn hear(
        &mut self,
        i: usize,
        fetched: Fetched,
        took: Duration,
        included: &Included,
        url: &PersistentUrl,
    ) -> Option<Reading> {
        let a = &mut self.asked[i];
        a.ms = ms(took);
        let archive = included.serviceibi.as_str();
        let (ledger, health) = (&self.ledger, &self.healths[i]);
        self.said[i] = Said::of(&fetched);
        match fetched {
            Fetched::Busy => {
                a.result = AskResult::Busy;
                ledger
                    .metrics
                    .archive_request(archive, Request::NotSent, took);
                None
            }
            Fetched::Overloaded(why) => {
                // The Archive works; it has more to do than it takes: not toward its
                // dormancy (but see Health::overloaded).
                a.result = AskResult::Overloaded;
                a.detail = Some(why);
                ledger.overloaded(archive, health, took);
                None
            }
            Fetched::TimedOut => {
                a.result = AskResult::TimedOut;
                ledger.failed(archive, health, Request::TimedOut, took);
                None
            }
            Fetched::Failed(why) => {
                a.result = AskResult::Failed;
                a.detail = Some(why);
                ledger.failed(archive, health, Request::Failed, took);
                None
            }
            Fetched::Refused(why) => {
                // Its name resolves only outside the networks Archives may have: not
                // asked, as an address refused before the round; no failure of its.
                a.result = AskResult::Refused;
                a.detail = Some(why);
                ledger
                    .metrics
                    .archive_request(archive, Request::Refused, took);
                None
            }
            Fetched::Body(body) => {
                let (reading, shown) = read_answer(&body, url, included);
                a.pairs = shown;
                if let Reading::Invalid(_) = reading {
                    ledger.failed(archive, health, Request::Failed, took);
                } else {
                    ledger.answered(archive, health, took);
                }
                Some(reading)
            }
        }
    }
}

/// What outlives a round whose requests are still under way.
pub(super) struct Late {
    pub(super) archives: Arc<[Included]>,
    pub(super) url: PersistentUrl,
    pub(super) healths: Vec<Arc<Health>>,
    pub(super) ledger: Ledger,
    pub(super) watch: Option<Watch>,
}

/// The Archives that claimed the Original of a round's IBI without what was asked, and
/// where the conflicts of late answers go.
pub(super) struct Watch {
    pub(super) claimers: Vec<(Included, MayHold)>,
    pub(super) key: String,
    pub(super) judge: Judge,
}

impl Late {
    /// Waits for every request in `tasks`, counting what each got toward its Archive's
    /// health and, with an `admission`, toward what the memory learns; then settles it.
    pub(super) async fn drain(self, mut tasks: Requests, mut admission: Option<Admission>) {
        while let Some((i, fetched, took)) = tasks.next().await {
            let heard = self.hear(i, fetched, took, admission.is_some());
            if let Some(a) = &mut admission {
                a.said[i] = heard;
            }
        }
        if let Some(admission) = admission {
            admission.settle();
        }
    }

    /// What Archive `i` said, late; its answer read whole only when the memory is to
    /// learn from it (`learning`).
    fn hear(&self, i: usize, fetched: Fetched, took: Duration, learning: bool) -> Said {
        let (archive, health) = (&self.archives[i], &self.healths[i]);
        let (ledger, name) = (&self.ledger, archive.serviceibi.as_str());
        let said = Said::of(&fetched);
        match fetched {
            Fetched::Body(body) => {
                let heard = if learning || self.watch.is_some() {
                    read_answer(&body, &self.url, archive).0.said()
                } else if is_answer(&body) {
                    Said::Here { original: false }
                } else {
                    Said::Down
                };
                if heard == Said::Down {
                    ledger.failed(name, health, Request::Failed, took);
                } else {
                    ledger.answered(name, health, took);
                }
                if let (Some(w), Said::Holds { .. }) = (&self.watch, heard) {
                    for (holder, why) in &w.claimers {
                        let holder = (holder, *why == MayHold::Home);
                        w.judge.conflict(&w.key, Some(holder), archive, &[]);
                    }
                }
                heard
            }
            Fetched::Failed(_) => {
                ledger.failed(name, health, Request::Failed, took);
                said
            }
            Fetched::TimedOut => {
                ledger.failed(name, health, Request::TimedOut, took);
                said
            }
            Fetched::Overloaded(_) => {
                ledger.overloaded(name, health, took);
                said
            }
            Fetched::Busy | Fetched::Refused(_) => said,
        }
    }
}

/// What requests did to their Archives' health and to the metrics. Cloned into the task
/// that lets a round's requests still under way end (see [`Engine::round`]).
#[derive(Clone)]
pub(super) struct Ledger {
    metrics: Arc<Metrics>,
    clock: Arc<dyn Clock>,
    dormant_after: u32,
    /// The Archive whose failure in this step is counted already: not counted again.
    counted: Option<String>,
}

impl Ledger {
    /// A request to `archive` answered after `took`.
    pub(super) fn answered(&self, archive: &str, health: &Health, took: Duration) {
        self.metrics
            .archive_request(archive, Request::Answered, took);
        if health.success(took, clock::millis(&*self.clock)) == health::Change::Woke {
            say(&format!("{archive} answers again: asked again"));
        }
    }

    /// A request to `archive` was answered 503 or 429 until the timeout: counted apart,
    /// and toward dormancy only when it lasts (see [`Health::overloaded`]).
    pub(super) fn overloaded(&self, archive: &str, health: &Health, took: Duration) {
        self.metrics
            .archive_request(archive, Request::Overloaded, took);
        let now = clock::millis(&*self.clock);
        if health.overloaded(self.dormant_after, now) == health::Change::FellDormant {
            say(&format!(
                "{archive} answered nothing but 503 or 429 for {} s: dormant, asked no more until it answers",
                health::OVERLOADED_FOR.as_secs()
            ));
        }
    }

    /// A request to `archive` failed (`result`: `failed`, `timed_out`). Only failures
    /// come here: an overloaded Archive or a request the resolver did not send never
    /// counts toward dormancy.
    pub(super) fn failed(&self, archive: &str, health: &Health, result: Request, took: Duration) {
        self.metrics.archive_request(archive, result, took);
        if self.counted.as_deref() == Some(archive) {
            return;
        }
        if health.failure(self.dormant_after) == health::Change::FellDormant {
            say(&format!(
                "{archive} failed {} times in a row: dormant, asked no more until it answers",
                self.dormant_after
            ));
        }
    }
}
