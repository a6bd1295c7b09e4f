//! Resolution (§8.2, Figure 8.1): the urlRequest of Table 8.9 to every included Archive at
//! once, the analysis of their answers ([`crate::answer`]), new rounds for related items
//! named elsewhere, and the acknowledgment of Table 8.11.
//!
//! - Without `requireditemstatus`, the first non-empty answer that satisfies the request
//!   decides, without waiting for the others: it holds the URL asked for, or names the
//!   IBI of what was asked for (or of a step on the way: `ibi.metadata(oai_dc)`,
//!   `ibi.translation(es)`, `ibi.lastedition`, `ibi.nextedition`…) without its URL, which
//!   starts a new round for that IBI in every Archive, with the verb list it needs there
//!   (the loop of §8.2; Example 10.2 is one case). At most [`MAX_ROUNDS`] rounds, and no
//!   IBI and verb list twice.
//! - With `requireditemstatus=Original` every answer is awaited: exactly one Archive may
//!   claim the Original; two or more are under suspicion (409); only copies are named
//!   (404). An answer without `state` claims nothing.
//! - A bare translation (`+`, `GetTranslation`) is chosen among the
//!   `.translation(xx[-YY])` variants of every answer by the reader's languages
//!   ([`lang::rank`]), an Original before a copy, then the first Archive: an answer decides
//!   at once only when it offers the reader's first language exactly; else the item in its
//!   own language (Example 8.3). The same answers give the same choice.
//! - The reader's own query pairs follow the URL found ([`location`]).
//!
//! **Who may hold it.** With a hundred Archives some are always down; one that does not
//! answer matters only when it *may hold* the IBI: the Archive the memory remembers for
//! it (fresh or stale) or its home ([`crate::homes`]) — its [`Guard`]. Only such an
//! Archive's silence stands in the way of an answer:
//! - nothing found while one of them did not answer: `503` ([`Outcome::Unavailable`]),
//!   naming it; the Original check is not made while one of them did not answer
//!   ([`Outcome::Unverifiable`]); the memory does not learn;
//! - while one of them is *busy* (it answered 503 or 429 until the timeout, timed out, or
//!   was not asked because the resolver had as many requests under way as it allows),
//!   another Archive's answer wins only when it says it is a copy (`state Copy`): no
//!   flood of a holder hands its items to a rival;
//! - while one of them is *down* (it failed, or is dormant — which no flood can cause),
//!   the others are heard as the standard says, the first satisfying answer winning: an
//!   item that moved away from its home keeps resolving.
//!
//! The silence of any other Archive is shown on the page (the Archives that could not be
//! asked) and changes nothing else. And an Archive that claims the Original (`state
//! Original`) claims it whether or not its answer holds the file or relation asked: while
//! the remembered or home Archive claims the Original and says what was asked is not
//! there, another Archive's answer for it is a conflict (counted, kept, logged), never
//! the redirect.
//!
//! The location memory ([`crate::memory`]) is a cache, never an authority: the Archive it
//! names is asked first, alone, and its answer taken when it satisfies the request; with
//! nothing remembered, the IBI's home is asked first in the same way. The memory is
//! written only by a resolution of the IBI itself (no file path, no verb), never by the
//! inspection view; an entry is replaced only when its Archive answered that the item is
//! not there (empty, or a tombstone), never because it lacked a file or a relation, nor
//! because it did not answer; once stale (older than `[memory] expiry`) it is verified by
//! asking every Archive, the remembered one's answer awaited and preferred. A second
//! Archive claiming the Original while the remembered one claims it is a conflict:
//! logged once, counted, kept beside the entry.

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::stream::{FuturesUnordered, StreamExt};
use ibi::persistent::PersistentUrl;
use ibi::relation::{Lang, Relation, Step};
use serde::Serialize;

pub use crate::answer::{usable_location, Found, SaidState, Why};

use crate::answer::{is_answer, own_language, read_answer, Asking, Gives, Offers, Reading};
use crate::client::{ArchiveClient, Fetched};
use crate::clock::{self, Clock};
use crate::health::{self, Health, HealthBook};
use crate::homes::Archives;
use crate::lang;
use crate::log::{complain, say};
use crate::loops::Underway;
use crate::memory::{Conflict, LocationMemory};
use crate::metrics::Metrics;
use crate::registry::Included;
use crate::suspicion::{self, Suspicion};

/// Rounds of urlRequests one resolution may take (each next edition is one).
pub const MAX_ROUNDS: usize = 16;

/// Requests of one round under way at once.
pub const WINDOW: usize = 128;

/// What a resolution needs besides the Archives.
#[derive(Clone)]
pub struct Engine {
    pub client: ArchiveClient,
    /// Per request to one Archive, connect included.
    pub timeout: Duration,
    /// `http://host:port` of the resolver, for `url.persistent`.
    pub publicurl_with_port: String,
    /// Which Archive answered for an IBI, asked first.
    pub memory: Arc<LocationMemory>,
    pub health: Arc<HealthBook>,
    /// Failures in a row after which an Archive is dormant (0: never).
    pub dormant_after: u32,
    pub metrics: Arc<Metrics>,
    /// The time of day of the Archives' health and of the memory's entries.
    pub clock: Arc<dyn Clock>,
    /// The Archives that answered against the homes of several IBIs.
    pub suspicion: Arc<Suspicion>,
    /// What this engine is asking which Archive about now, for the loops it would make.
    pub underway: Arc<Underway>,
}

impl Engine {
    /// An engine for `config`'s Archives, without memory and with health and metrics of
    /// its own (the server replaces them with its shared ones).
    pub fn new(config: &crate::config::Config) -> Engine {
        let health = Arc::new(HealthBook::default());
        Engine {
            client: ArchiveClient::new(
                crate::client::Policy::new(config.archives.networks.clone()),
                config.archives.connections,
            ),
            timeout: config.archives.timeout,
            publicurl_with_port: config.publicurl_with_port.clone(),
            memory: Arc::new(LocationMemory::disabled()),
            metrics: Arc::new(Metrics::new(health.clone())),
            health,
            dormant_after: config.archives.dormant_after,
            clock: clock::system(),
            suspicion: Arc::new(Suspicion::default()),
            underway: Arc::new(Underway::default()),
        }
    }

    /// Where this engine's conflicts go.
    fn judge(&self) -> Judge {
        Judge {
            memory: self.memory.clone(),
            metrics: self.metrics.clone(),
            suspicion: self.suspicion.clone(),
            clock: self.clock.clone(),
        }
    }
}

/// The detail of an answer set aside, in the inspection view.
const SET_ASIDE: &str = "set aside: this Archive answered against the homes of several IBIs";

/// The reader's side of a resolution (Table 8.6).
#[derive(Clone, Debug)]
pub struct Reader {
    /// `clientinformation.ipaddress`: the reader, then its proxies.
    pub ips: Vec<IpAddr>,
    /// `clientinformation.languagepreference`, parsed; never sent to Archives.
    pub languages: Vec<Lang>,
}

/// Everything a resolution did, for the log, the inspection page and `resolve`.
#[derive(Clone, Debug, Serialize)]
pub struct Trace {
    /// The persistent URL as the reader gave it: `url.persistent` of the acknowledgment.
    pub persistent_url: String,
    pub rounds: Vec<Round>,
    pub outcome: Outcome,
    /// Where the reader is sent, when the outcome is found: the URL found, with the
    /// reader's own query pairs ([`location`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// The conflicts known about the IBI asked for.
    pub conflicts: Vec<Conflict>,
    pub ms: f64,
}

/// One round: the same urlRequest to every included Archive, or only to the one the
/// location memory names, or only to the IBI's home.
#[derive(Clone, Debug, Serialize)]
pub struct Round {
    pub ibi: String,
    pub verblist: String,
    /// Only the remembered Archive was asked.
    pub remembered: bool,
    /// Only the IBI's home was asked.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub home: bool,
    /// Why this round was started, when it is not the first of the resolution: which
    /// Archive named the IBI, as what.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<Why>,
    pub asked: Vec<Asked>,
}

/// Why the related items named from answer to answer do not end: shown in words on the
/// pages, in English by its `Display`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChainEnd {
    /// More than `max` rounds.
    TooLong { max: usize },
    /// `ibi` (with the same verbs) is named again, for `why`.
    Again { ibi: String, why: Option<Why> },
}

impl std::fmt::Display for ChainEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChainEnd::TooLong { max } => write!(f, "more than {max} rounds"),
            ChainEnd::Again { ibi, why } => match why {
                Some(why) => write!(f, "{ibi} is named again ({why})"),
                None => write!(f, "{ibi} is named again ()"),
            },
        }
    }
}

impl Serialize for ChainEnd {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// One Archive asked in a round.
#[derive(Clone, Debug, Serialize)]
pub struct Asked {
    pub archive: String,
    pub address: String,
    pub result: AskResult,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Why it may hold the IBI, when it may: its silence stands in the way of an answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub may_hold: Option<MayHold>,
    /// The answer's pairs (urlkey hidden), values as written.
    pub pairs: Vec<(String, String)>,
    pub ms: f64,
}

/// Why an Archive may hold an IBI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MayHold {
    /// The location memory names it.
    Remembered,
    /// The IBI was minted where it was, and nowhere else ([`crate::homes`]): what it
    /// claims comes before what the memory says, and what others answer against it
    /// counts toward their suspicion.
    Home,
    /// The IBI was minted where it was, as where other Archives were (several at one
    /// address): its silence counts as a home's, its word no more than any Archive's.
    SharedHome,
}

impl MayHold {
    /// It is the IBI's home, alone or not.
    pub fn home(self) -> bool {
        matches!(self, MayHold::Home | MayHold::SharedHome)
    }
}

/// What became of the request to one Archive in a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum AskResult {
    /// A pair list: the item, or what it has of the request.
    #[serde(rename = "answered")]
    Answered,
    /// An empty answer: the IBI is not there.
    #[serde(rename = "empty")]
    Empty,
    /// No connection, an error status, an answer that is not a pair list.
    #[serde(rename = "failed")]
    Failed,
    #[serde(rename = "timed out")]
    TimedOut,
    /// `503`/`429` until the timeout: busy, not failing.
    #[serde(rename = "overloaded")]
    Overloaded,
    /// Not sent: the resolver had as many requests under way as it allows.
    #[serde(rename = "not sent (the resolver was busy)")]
    Busy,
    /// Not sent: its address is not one the resolver may contact.
    #[serde(rename = "refused")]
    Refused,
    /// Not asked: it failed too often, and is probed until it answers.
    #[serde(rename = "dormant")]
    Dormant,
    /// Still under way when another answer decided.
    #[serde(rename = "not awaited")]
    NotAwaited,
}

impl AskResult {
    /// Whether the Archive could not be heard for a while (it could hold the item):
    /// not an empty answer, and not an Archive the resolver may not contact at all.
    pub fn is_outage(self) -> bool {
        !matches!(
            self,
            AskResult::Answered | AskResult::Empty | AskResult::Refused
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AskResult::Answered => "answered",
            AskResult::Empty => "empty",
            AskResult::Failed => "failed",
            AskResult::TimedOut => "timed out",
            AskResult::Overloaded => "overloaded",
            AskResult::Busy => "not sent (the resolver was busy)",
            AskResult::Refused => "refused",
            AskResult::Dormant => "dormant",
            AskResult::NotAwaited => "not awaited",
        }
    }
}

impl std::fmt::Display for AskResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a resolution ended.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// Redirect to `url`.
    Found(Found),
    /// No Archive that answered has what was asked, and every Archive that may hold the
    /// IBI answered (or none is included). `missing`: an Archive has the item, without
    /// it; `unasked`: the Archives that could not be asked (`address (service IBI)`),
    /// none of which may hold it.
    NotFound {
        asked: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        missing: Option<Missing>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        unasked: Vec<String>,
    },
    /// Nothing found while these Archives, which may hold the IBI, did not answer
    /// (dormant, failed, timed out, overloaded, not sent); `unasked`: the others that did
    /// not.
    Unavailable {
        archives: Vec<String>,
        asked: usize,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        unasked: Vec<String>,
    },
    /// `+(xx)` asked and the item is here, but without that translation.
    NoTranslation { language: String },
    /// The item was found only as a tombstone: its removal date, and the Archive that
    /// keeps it (`address`, service IBI), whose tombstone landing page says more.
    Deleted {
        date: String,
        #[serde(skip)]
        keeper: Option<(String, String)>,
    },
    /// `requireditemstatus=Original` and two or more Archives claim the Original.
    Suspicion { archives: Vec<String> },
    /// `requireditemstatus=Original` and no Archive that answered claims the Original:
    /// each answer found (a copy, or one that says no state).
    NoOriginal {
        copies: Vec<Found>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        unasked: Vec<String>,
    },
    /// `requireditemstatus=Original` while these Archives, which may hold the IBI, did
    /// not answer: the check cannot be made now. `copies`: the answers found meanwhile
    /// that claim no Original.
    Unverifiable {
        archives: Vec<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        copies: Vec<Found>,
    },
    /// The related items named from answer to answer loop, or go on past
    /// [`MAX_ROUNDS`].
    Chain { detail: ChainEnd },
    /// The reader's network has asked every Archive as often as it may for now.
    Throttled { retry_after: u64 },
}

impl Outcome {
    /// The outcome's label in the metrics and the log.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Found(_) => "found",
            Outcome::NotFound { .. } => "not_found",
            Outcome::Unavailable { .. } => "unavailable",
            Outcome::NoTranslation { .. } => "no_translation",
            Outcome::Deleted { .. } => "deleted",
            Outcome::Suspicion { .. } => "suspicion",
            Outcome::NoOriginal { .. } => "no_original",
            Outcome::Unverifiable { .. } => "unverifiable",
            Outcome::Chain { .. } => "chain",
            Outcome::Throttled { .. } => "throttled",
        }
    }
}

/// What an Archive has the item without: what a page says is missing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "what", content = "name", rename_all = "snake_case")]
pub enum Missing {
    /// The file of this path, in the item.
    File(String),
    /// Metadata (`:`, `GetMetadata`), in this format when one was asked.
    Metadata(Option<String>),
    /// What these verbs ask for.
    Relation(String),
    /// A URL for the item itself.
    Url,
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Missing::File(path) => write!(f, "without the file {path}"),
            Missing::Metadata(None) => f.write_str("without metadata"),
            Missing::Metadata(Some(format)) => write!(f, "without metadata in {format}"),
            Missing::Relation(verbs) => write!(f, "without what {verbs} asks for"),
            Missing::Url => f.write_str("without a URL for it"),
        }
    }
}

impl Missing {
    /// What was asked of `url`, which an Archive that has the item does not have.
    fn of(url: &PersistentUrl) -> Missing {
        if let Some(path) = url.filepath() {
            return Missing::File(String::from_utf8_lossy(path).into_owned());
        }
        let steps = url.relation().steps();
        if let Some(oai_dc) = steps.iter().rev().find_map(|s| match s {
            Step::Metadata { oai_dc } => Some(*oai_dc),
            _ => None,
        }) {
            return Missing::Metadata(oai_dc.then(|| "oai_dc".to_string()));
        }
        if steps.is_empty() {
            Missing::Url
        } else {
            Missing::Relation(url.verblist_text())
        }
    }
}

/// What an Archive said of the item, for the location memory's rules and for the rules
/// of who may hold it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Said {
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
    fn of(fetched: &Fetched) -> Said {
        match fetched {
            Fetched::Busy | Fetched::Overloaded(_) | Fetched::TimedOut => Said::Busy,
            Fetched::Failed(_) | Fetched::Refused(_) => Said::Down,
            // Read by the caller; an answer that is no pair list is Down.
            Fetched::Body(_) => Said::Down,
        }
    }

    fn silent(self) -> bool {
        matches!(self, Said::Busy | Said::Down)
    }
}

impl Reading {
    fn said(&self) -> Said {
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
enum Stand {
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
struct Guard {
    /// Indices in the round's list, each with why it may hold the IBI.
    members: Vec<(usize, MayHold)>,
    /// Those heard before the round.
    before: Vec<Before>,
    /// Indices in the round's list of Archives under suspicion that may not hold the
    /// IBI: their answers are read, shown and weighed for conflicts, and decide nothing.
    set_aside: Vec<usize>,
}

/// An Archive that may hold the IBI, heard before the round.
#[derive(Clone, Debug)]
struct Before {
    said: Said,
    archive: Included,
    why: MayHold,
    /// Its silence was an outage (not an address the resolver may not contact).
    outage: bool,
}

impl Guard {
    fn contains(&self, i: usize) -> bool {
        self.members.iter().any(|(m, _)| *m == i)
    }

    fn may_hold(&self, i: usize) -> Option<MayHold> {
        self.members
            .iter()
            .find(|(m, _)| *m == i)
            .map(|(_, why)| *why)
    }

    /// What the Archives that may hold the IBI said, those of the round by `said`.
    fn said<'a>(&'a self, said: &'a [Said]) -> impl Iterator<Item = Said> + 'a {
        self.members
            .iter()
            .map(|(i, _)| said[*i])
            .chain(self.before.iter().map(|b| b.said))
    }

    fn stand(&self, said: &[Said]) -> Stand {
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
    fn silent(&self, said: &[Said], asked: &[Asked], archives: &[Included]) -> Vec<String> {
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
    fn claiming(
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

/// How a round is to be run besides its Archives.
#[derive(Default)]
struct Ask<'a> {
    /// An Archive whose failure is already counted in this step: not counted again.
    counted: Option<&'a str>,
    /// The Archive (index) whose answer is awaited before any decides, and preferred
    /// when it satisfies: the remembered one, being verified.
    incumbent: Option<usize>,
    /// The Archives that may hold the IBI.
    guard: Guard,
    /// What the memory may learn from every answer of the round.
    admit: Option<Admit>,
    /// Its requests are marked while under way ([`crate::loops`]): every round but
    /// those that ask the remembered Archive or the home alone.
    marked: bool,
}

/// What one step of a resolution may do with the location memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MemoryUse {
    /// Read it, marking nothing used (the inspection view).
    Read,
    /// Use it, and forget an entry whose Archive said the item left (a related item's
    /// round).
    Keep,
    /// Also learn where the item is (the resolution of the IBI asked for).
    Learn,
}

/// What a round gave.
struct Ended {
    round: Round,
    next: Next,
    /// What each Archive said of the item, by the time the round decided.
    said: Vec<Said>,
    /// No other Archive could have answered better: false when a bare translation was
    /// chosen among these answers without the reader's first language.
    settled: bool,
}

/// What a resolution may spend of its reader's share: each round that asks every
/// Archive (not only the remembered one or the home) is one of the misses of
/// [`crate::clients`].
pub trait Budget: Sync {
    /// One round asking every Archive; `Err(seconds)` when the reader has none left, and
    /// when to come back.
    fn fan_out(&self) -> Result<(), u64>;
}

/// No bound: the shell's `resolve`.
pub struct Unbounded;

impl Budget for Unbounded {
    fn fan_out(&self) -> Result<(), u64> {
        Ok(())
    }
}

impl Engine {
    /// Resolves `url` for `reader` over `archives`. `writes`: whether the location memory
    /// may learn from it (not for the inspection view); each round that asks every
    /// Archive is charged to `budget`.
    pub async fn resolve(
        &self,
        archives: Arc<Archives>,
        url: &PersistentUrl,
        reader: &Reader,
        writes: bool,
        budget: &dyn Budget,
    ) -> Trace {
        let start = Instant::now();
        let mut rounds: Vec<Round> = Vec::new();
        let mut current = url.clone();
        let mut why: Option<Why> = None;
        let mut seen = HashSet::new();
        let outcome = loop {
            if rounds.len() >= MAX_ROUNDS {
                break Outcome::Chain {
                    detail: ChainEnd::TooLong { max: MAX_ROUNDS },
                };
            }
            if !seen.insert((current.ibi().key(), current.verblist_text())) {
                break Outcome::Chain {
                    detail: ChainEnd::Again {
                        ibi: current.ibi().to_string(),
                        why,
                    },
                };
            }
            // Only the first step, a resolution of the IBI asked for, may teach the memory.
            let memory = match (writes, seen.len()) {
                (false, _) => MemoryUse::Read,
                (true, 1) => MemoryUse::Learn,
                (true, _) => MemoryUse::Keep,
            };
            let first = rounds.len();
            let next = self
                .step(&archives, &current, reader, memory, budget, &mut rounds)
                .await;
            if let Some(round) = rounds.get_mut(first) {
                round.why = why.take();
            }
            match next {
                Next::Done(outcome) => break outcome,
                Next::Ask(asking) => {
                    current = asking.url;
                    why = Some(asking.why);
                }
            }
        };
        Trace {
            persistent_url: as_given(&self.publicurl_with_port, url),
            rounds,
            location: match &outcome {
                Outcome::Found(found) => Some(location(&found.url, url)),
                _ => None,
            },
            outcome,
            conflicts: self.memory.conflicts_of(&url.ibi().key()),
            ms: ms(start.elapsed()),
        }
    }

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

    /// The acknowledgment URL of Table 8.11 for a found URL (`None` when the Archive gave
    /// no urlkey: there is nothing to acknowledge). Each pair as the Archive said it: no
    /// `state` when it said none; `url.persistent` as the reader gave it.
    pub fn acknowledgment(&self, trace: &Trace, reader: &Reader) -> Option<String> {
        let Outcome::Found(found) = &trace.outcome else {
            return None;
        };
        let urlkey = found.urlkey.as_deref()?;
        let ips = ip_list(&reader.ips);
        let mut pairs: Vec<(&str, &[u8])> = vec![
            ("clientinformation.ipaddress", ips.as_bytes()),
            ("contenttype", found.contenttype.as_bytes()),
        ];
        if let Some(ibi) = &found.ibi {
            pairs.push(("ibi", ibi.as_bytes()));
        }
        pairs.push(("servicesubject", b"acknowledgment"));
        if let Some(state) = &found.state {
            pairs.push(("state", state.as_str().as_bytes()));
        }
        pairs.extend([
            ("url", found.url.as_bytes()),
            ("url.persistent", trace.persistent_url.as_bytes()),
            ("urlkey", urlkey.as_bytes()),
        ]);
        self.client
            .service_url(&found.address, &found.archive, &pairs)
            .ok()
    }

    /// One step of a resolution, for one IBI: the remembered Archive alone when there is
    /// a fresh entry, else the IBI's home alone when nothing is remembered, then, when
    /// what they said does not settle it, every other Archive (a stale entry is verified
    /// by every Archive at once, its Archive awaited and preferred); the memory kept by
    /// the rules of the module's header. Never the memory for `requireditemstatus=
    /// Original`, which weighs every Archive's answer (the remembered Archive and the
    /// home may hold the IBI all the same). Each round that asks more than the remembered
    /// Archive or the home is charged to `budget` first.
    async fn step(
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
        let original = url.requires_original();
        // The inspection view, and the Original check, read the memory without marking
        // anything used.
        let mut recalled = if writes && !original {
            self.memory.recall(&key)
        } else {
            self.memory.peek(&key)
        };
        let mut holder = recalled
            .as_ref()
            .and_then(|r| archives.iter().position(|a| *a.key == *r.archive));
        let homes = archives.homes(url.ibi());
        // One home is the IBI's; several (Archives sharing an address) are only where it
        // may be.
        let home_kind = if homes.len() == 1 {
            MayHold::Home
        } else {
            MayHold::SharedHome
        };
        // An entry naming an Archive under suspicion (not the IBI's home) is no guide: it
        // is forgotten, and the IBI resolved as if nothing were remembered.
        let now = clock::millis(&*self.clock);
        if let Some(h) = holder {
            if !homes.contains(&h) && self.suspicion.suspects(&archives[h].key, now) {
                if writes {
                    self.memory.forget(&key, Some(&archives[h].key));
                }
                (recalled, holder) = (None, None);
            }
        }
        let mut guardians: Vec<(usize, MayHold)> = holder
            .map(|h| (h, MayHold::Remembered))
            .into_iter()
            .collect();
        guardians.extend(
            homes
                .iter()
                .filter(|&&h| Some(h) != holder)
                .map(|&h| (h, home_kind)),
        );
        let everyone = |guard_of: &[(usize, MayHold)]| Guard {
            members: guard_of.to_vec(),
            ..Guard::default()
        };
        if original {
            if let Err(retry_after) = budget.fan_out() {
                return Next::Done(Outcome::Throttled { retry_after });
            }
            let ask = Ask {
                guard: everyone(&guardians),
                marked: true,
                ..Ask::default()
            };
            let ended = self.round(archives, url, reader, ask).await;
            rounds.push(ended.round);
            return ended.next;
        }
        // Only a resolution of the IBI itself may make or change an entry.
        let may_remember = memory == MemoryUse::Learn
            && self.memory.enabled()
            && url.filepath().is_none()
            && url.verbs().is_empty();
        let fresh = recalled.as_ref().is_some_and(|r| r.fresh);
        if let (Some(h), false) = (holder, fresh) {
            // Verified by every Archive, the remembered one awaited and preferred.
            self.metrics.memory("verify");
            if let Err(retry_after) = budget.fan_out() {
                return Next::Done(Outcome::Throttled { retry_after });
            }
            let ask = Ask {
                incumbent: Some(h),
                guard: everyone(&guardians),
                admit: may_remember.then(|| Admit {
                    key: key.clone(),
                    holder: Some(h),
                }),
                marked: true,
                ..Ask::default()
            };
            let ended = self.round(archives, url, reader, ask).await;
            rounds.push(ended.round);
            return ended.next;
        }
        // Asked alone first: the remembered Archive, else the home (nothing remembered,
        // or its Archive not included now: then the entry stays for when it is, and
        // nothing is learnt).
        let first: Vec<(usize, MayHold)> = match holder {
            Some(h) => vec![(h, MayHold::Remembered)],
            None => homes.iter().map(|&h| (h, home_kind)).collect(),
        };
        let by_home = holder.is_none();
        let learns = may_remember && recalled.is_none();
        // The home, asked alone, teaches the memory as a fan-out does (every one of the
        // homes heard, exactly one claiming the Original): verified by every Archive
        // once stale.
        let admit_home = (by_home && learns).then(|| Admit {
            key: key.clone(),
            holder: None,
        });
        let alone = if first.is_empty() {
            None
        } else {
            Some(self.alone(archives, url, reader, &first, admit_home).await)
        };
        if let Some(a) = &alone {
            if let Some(round) = &a.round {
                rounds.push(round.clone());
            }
            if let (Some(next), true) = (&a.next, a.settled) {
                if next.satisfied() {
                    self.metrics.memory(if by_home { "home" } else { "hit" });
                    return next.clone();
                }
            }
        }
        self.metrics.memory(match (holder, &alone) {
            (Some(_), _) => "stale",
            (None, Some(_)) => "home_miss",
            (None, None) if recalled.is_some() => "stale",
            (None, None) => "miss",
        });
        let said_first: Vec<(usize, Said, AskResult)> =
            alone.as_ref().map(|a| a.heard.clone()).unwrap_or_default();
        if let (Some(h), true) = (holder, writes) {
            // It answered that the item is not there: the one reason to replace an entry.
            if said_first
                .iter()
                .any(|(i, s, _)| *i == h && *s == Said::Gone)
            {
                self.memory.forget(&key, Some(&archives[h].key));
            }
        }
        // What was asked alone did not satisfy the request: every other Archive is asked,
        // and one asked alone again only when its translation is to be weighed against
        // every other's, or it is the remembered one and failed at once (a moment of
        // overload may be over): one that answered, timed out or was overloaded was
        // heard, or waited for, enough.
        let unsettled = alone
            .as_ref()
            .is_some_and(|a| a.next.as_ref().is_some_and(Next::satisfied));
        let again: Vec<usize> = said_first
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
        let asked_now: Vec<usize> = (0..archives.len())
            .filter(|i| !heard_before.contains(i))
            .collect();
        // Every Archive was asked alone already (one included, say): what they said is
        // weighed as a round would, and nothing more is asked.
        if !asked_now.is_empty() {
            if let Err(retry_after) = budget.fan_out() {
                return Next::Done(Outcome::Throttled { retry_after });
            }
        }
        let subset: Vec<Included> = asked_now.iter().map(|&i| archives[i].clone()).collect();
        let position = |i: usize| asked_now.iter().position(|&n| n == i);
        let guard = Guard {
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
        };
        // The memory learns from the others once nothing is remembered, or the
        // remembered Archive said the item left.
        let holder_gone = holder.is_some_and(|h| {
            said_first
                .iter()
                .any(|(i, s, _)| *i == h && *s == Said::Gone)
        });
        let admit = (may_remember && (learns || holder_gone)).then(|| Admit {
            key: key.clone(),
            holder: None,
        });
        // The remembered Archive's failure is counted once, by the round that asked it
        // first.
        let counted = holder
            .filter(|h| said_first.iter().any(|(i, _, _)| i == h))
            .map(|h| archives[h].serviceibi.as_str());
        let ended = self
            .round(
                &subset,
                url,
                reader,
                Ask {
                    counted,
                    guard,
                    admit,
                    marked: true,
                    ..Ask::default()
                },
            )
            .await;
        if !subset.is_empty() {
            rounds.push(ended.round);
        }
        let first_next = alone.and_then(|a| a.next);
        match (ended.next, first_next) {
            // Its translation, weighed against every other Archive's, stands when the
            // others gave none (though one gave a tombstone).
            (next, Some(first)) if first.satisfied() && !next.satisfied() => first,
            // Nobody else has it: what the Archive asked alone said stands (a tombstone,
            // or the item without the translation asked for).
            (
                Next::Done(Outcome::NotFound { .. } | Outcome::Unavailable { .. }),
                Some(first @ Next::Done(Outcome::Deleted { .. } | Outcome::NoTranslation { .. })),
            ) => first,
            (Next::Done(outcome), _) => Next::Done(counting(outcome, heard_before.len())),
            (next, _) => next,
        }
    }

    /// The Archives of `first` asked alone (but dormant ones): what they gave, and what
    /// each said; with `admit`, what the memory learns from them ([`Admission`]).
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
                !self
                    .health
                    .of(a.serviceibi.as_str(), || a.recorded.clone())
                    .is_dormant()
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

    /// One round: the urlRequest to every Archive given (but dormant ones), answers read
    /// as they come, until one decides (the incumbent's, when it satisfies, once it is
    /// in; another's only as [`Guard::allows`]) or all are in. With `ask.admit`, every
    /// answer is read to its end (in the background, past the decision) and the memory
    /// learns from them all ([`Admission`]).
    async fn round(
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
            Gathered::Decided(i) => tally.deciding(
                Some(i),
                url,
                &reader.languages,
                (ask.incumbent, &ask.guard),
                &hearing.said,
            ),
            Gathered::All => tally.deciding(
                None,
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
            None => {
                let (next, conflicts) = tally.outcome(url, archives, &said, &asked, &guard);
                let judge = self.judge();
                for seen in conflicts {
                    let holder = (&seen.holder, seen.home);
                    judge.conflict(&url.ibi().key(), Some(holder), &seen.claimant, &[]);
                }
                next
            }
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

    /// The urlRequest of the round to each Archive that may be asked, by index; the
    /// others (dormant, or at an address the resolver may not contact) noted in
    /// `hearing`.
    fn requests(
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
            if hearing.healths[i].is_dormant() {
                hearing.asked[i].result = AskResult::Dormant;
                hearing.said[i] = Said::Down;
                continue;
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

/// What asking the remembered Archive or the home alone gave.
struct Alone {
    /// The round, when one was asked (none when all are dormant).
    round: Option<Round>,
    next: Option<Next>,
    /// Each Archive of the first ask (its index among all), what it said and how its
    /// request ended (dormant ones too).
    heard: Vec<(usize, Said, AskResult)>,
    /// No other Archive could have answered better ([`Ended::settled`]).
    settled: bool,
}

/// `outcome` of a round that left out `before` Archives asked alone before it, with
/// them counted among those asked.
fn counting(outcome: Outcome, before: usize) -> Outcome {
    match outcome {
        Outcome::NotFound {
            asked,
            missing,
            unasked,
        } => Outcome::NotFound {
            asked: asked + before,
            missing,
            unasked,
        },
        Outcome::Unavailable {
            archives,
            asked,
            unasked,
        } => Outcome::Unavailable {
            archives,
            asked: asked + before,
            unasked,
        },
        other => other,
    }
}

/// One request's end: the Archive's index, what came, and how long it took.
type Heard = (usize, Fetched, Duration);

/// A round's requests under way, driven by whoever awaits them: the resolution, then the
/// task that lets them end in the background. No task of its own each: a round over a
/// hundred Archives costs one task, not a hundred.
type Requests =
    FuturesUnordered<std::pin::Pin<Box<dyn std::future::Future<Output = Heard> + Send>>>;

/// A round's requests under way: at most [`WINDOW`] at once, the next one sent as each
/// ends, so that a round over thousands of Archives goes in waves, and one resolution
/// does not take every request the client allows at once (client::UNDER_WAY). Each is
/// marked while under way when `marking` says about which IBI ([`crate::loops`]).
struct InFlight {
    running: Requests,
    waiting: std::vec::IntoIter<(usize, String)>,
    client: ArchiveClient,
    timeout: Duration,
    marking: Option<(Arc<Underway>, String)>,
}

impl InFlight {
    fn start(
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
    async fn next(&mut self) -> Option<Heard> {
        let heard = self.running.next().await?;
        if let Some(request) = self.waiting.next() {
            self.send(request);
        }
        Some(heard)
    }
}

/// How the reading of a round's answers ended.
enum Gathered {
    /// This answer (index) decides.
    Decided(usize),
    /// An Archive that may hold the IBI claims the Original without what was asked:
    /// whatever the others answer, it is not found.
    Claimed,
    /// Every answer is in.
    All,
}

/// What a round heard of each of its Archives, and their health as it counts.
struct Hearing {
    asked: Vec<Asked>,
    said: Vec<Said>,
    healths: Vec<Arc<Health>>,
    ledger: Ledger,
}

impl Hearing {
    fn new(
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
    async fn gather(
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
                ledger.metrics.archive_request(archive, "not_sent", took);
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
                ledger.failed(archive, health, "timed_out", took);
                None
            }
            Fetched::Failed(why) => {
                a.result = AskResult::Failed;
                a.detail = Some(why);
                ledger.failed(archive, health, "failed", took);
                None
            }
            Fetched::Refused(why) => {
                // Its name resolves only outside the networks Archives may have: not
                // asked, as an address refused before the round; no failure of its.
                a.result = AskResult::Refused;
                a.detail = Some(why);
                ledger.metrics.archive_request(archive, "refused", took);
                None
            }
            Fetched::Body(body) => {
                let (reading, shown) = read_answer(&body, url, included);
                a.pairs = shown;
                if let Reading::Invalid(_) = reading {
                    ledger.failed(archive, health, "failed", took);
                } else {
                    ledger.answered(archive, health, took);
                }
                Some(reading)
            }
        }
    }
}

/// What the answers of a round gave so far, toward its decision.
#[derive(Default)]
struct Tally {
    /// With the Original check: the answers that satisfied, each a claim, by Archive.
    claims: Vec<(usize, Found)>,
    /// Answers naming where to ask next, in the order they came: without the Original
    /// check, taken only when no answer holds the URL; with it, followed only when
    /// every answer agrees on the IBI.
    asks: Vec<(usize, Asking)>,
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
    candidates: Vec<(usize, Next)>,
}

impl Tally {
    /// Counts the answer of Archive `i` (`asked`); what it decides, if it would.
    fn add(
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
    fn deciding(
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
    /// conflicts it found: an Archive that answered for what the remembered or home
    /// Archive, claiming the Original, says is not there; and, in the Original check, one
    /// that claims the Original the home claims too. The answers of Archives set aside
    /// count only toward conflicts.
    fn outcome(
        mut self,
        url: &PersistentUrl,
        archives: &[Included],
        said: &[Said],
        asked: &[Asked],
        guard: &Guard,
    ) -> (Next, Vec<Seen>) {
        let original = url.requires_original();
        let silent = guard.silent(said, asked, archives);
        let unasked: Vec<String> = (0..archives.len())
            .filter(|&i| !guard.contains(i) && said[i].silent() && asked[i].result.is_outage())
            .map(|i| shown_archive(&archives[i]))
            .collect();
        let shown_found = |f: &Found| format!("{} ({})", f.address, f.archive);
        let claiming = |wanted: Said| guard.claiming(wanted, said, archives);
        // The Archives that may hold the IBI, claim its Original, and said what was asked
        // is not there; and the others' answers for it, which are conflicts.
        let claimers = claiming(Said::Here { original: true });
        let besides = self.answered_besides(guard);
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
        let mut conflicts = against(&claimers);
        if original && claimers.is_empty() {
            // The home claims the Original with what was asked; so do others.
            let homes: Vec<(Included, MayHold)> = claiming(Said::Holds { original: true })
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
        // Past the conflicts, what an Archive set aside answered counts for nothing.
        let weighed = |i: &usize| !guard.set_aside.contains(i);
        self.claims.retain(|(i, _)| weighed(i));
        self.asks.retain(|(i, _)| weighed(i));
        let besides: Vec<usize> = besides.into_iter().filter(weighed).collect();
        let done = |outcome: Outcome, conflicts: Vec<Seen>| (Next::Done(outcome), conflicts);
        if original {
            // The check is made only once every Archive that may hold the IBI said what
            // it holds.
            if !silent.is_empty() {
                let copies: Vec<Found> = self
                    .claims
                    .iter()
                    .filter(|(_, f)| !f.claims_original())
                    .map(|(_, f)| f.clone())
                    .collect();
                return done(
                    Outcome::Unverifiable {
                        archives: silent,
                        copies,
                    },
                    Vec::new(),
                );
            }
            if !claimers.is_empty() && !besides.is_empty() {
                // It claims the Original without what was asked; others give it.
                let mut suspects: Vec<String> =
                    claimers.iter().map(|(a, _)| shown_archive(a)).collect();
                suspects.extend(besides.iter().map(|&i| shown_archive(&archives[i])));
                return done(Outcome::Suspicion { archives: suspects }, conflicts);
            }
        }
        if original && !self.asks.is_empty() {
            // Followed only when every answer that named an IBI, and every one that gave a
            // URL, speak of the same item: else the Archives disagree on what it is.
            let named: HashSet<String> = self.asks.iter().map(|(_, a)| a.url.ibi().key()).collect();
            let agree = named.len() == 1
                && self
                    .claims
                    .iter()
                    .all(|(_, f)| f.ibi_key().is_some_and(|k| named.contains(&k)));
            if agree {
                return (Next::Ask(self.asks.swap_remove(0).1), Vec::new());
            }
            let mut suspects: Vec<String> = self
                .asks
                .iter()
                .map(|(i, _)| shown_archive(&archives[*i]))
                .collect();
            suspects.extend(self.claims.iter().map(|(_, f)| shown_found(f)));
            return done(Outcome::Suspicion { archives: suspects }, Vec::new());
        }
        if original && !self.claims.is_empty() {
            let originals: Vec<&Found> = self
                .claims
                .iter()
                .map(|(_, f)| f)
                .filter(|f| f.claims_original())
                .collect();
            let outcome = match originals.as_slice() {
                [one] => Outcome::Found((*one).clone()),
                [] => Outcome::NoOriginal {
                    copies: self.claims.into_iter().map(|(_, f)| f).collect(),
                    unasked,
                },
                many => Outcome::Suspicion {
                    archives: many.iter().map(|f| shown_found(f)).collect(),
                },
            };
            return done(outcome, conflicts);
        }
        if let (true, Some(step)) = (self.untranslated, url.relation().bare_translation_at()) {
            return (Next::Ask(own_language(url, step)), Vec::new());
        }
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
        let outcome = match (self.deleted, translation) {
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
        };
        done(outcome, conflicts)
    }
}

/// What the answer of `offers` alone gives: its best variant, else the item itself, else
/// where to ask on.
fn alone(offers: &Offers, languages: &[Lang]) -> Option<Next> {
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

/// What outlives a round whose requests are still under way.
struct Late {
    archives: Arc<[Included]>,
    url: PersistentUrl,
    healths: Vec<Arc<Health>>,
    ledger: Ledger,
    watch: Option<Watch>,
}

/// The Archives that claimed the Original of a round's IBI without what was asked, and
/// where the conflicts of late answers go.
struct Watch {
    claimers: Vec<(Included, MayHold)>,
    key: String,
    judge: Judge,
}

impl Late {
    /// Waits for every request in `tasks`, counting what each got toward its Archive's
    /// health and, with an `admission`, toward what the memory learns; then settles it.
    async fn drain(self, mut tasks: Requests, mut admission: Option<Admission>) {
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
                    ledger.failed(name, health, "failed", took);
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
                ledger.failed(name, health, "failed", took);
                said
            }
            Fetched::TimedOut => {
                ledger.failed(name, health, "timed_out", took);
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

/// An Archive as pages and the log name it: `address (service IBI)`.
fn shown_archive(a: &Included) -> String {
    format!("{} ({})", a.address, a.serviceibi)
}

/// The name of an Archive as [`shown_archive`] shows it (`address (service IBI)`): its
/// service IBI, what a reader's page names it by (its address may be one of a private
/// network, for the operator's log alone).
pub fn archive_name(shown: &str) -> &str {
    shown
        .strip_suffix(')')
        .and_then(|s| s.rsplit_once(" ("))
        .map_or(shown, |(_, name)| name)
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

/// The answer (index) that decides a round now, if one does: with an incumbent, none
/// before it is heard, then its own when it satisfied — unless the IBI's home, heard too,
/// claims the Original with what was asked (the home, which no Archive can make itself,
/// comes before what the memory says); else the first of an Archive that may hold the
/// IBI; else the first that [`Guard::allows`].
fn decide(
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

/// What the memory may learn from a round of a resolution of the IBI itself.
struct Admit {
    /// The IBI's key.
    key: String,
    /// The remembered Archive (index), when the round verifies its entry.
    holder: Option<usize>,
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
struct Admission {
    admit: Admit,
    guard: Guard,
    archives: Arc<[Included]>,
    said: Vec<Said>,
    judge: Judge,
}

impl Admission {
    fn settle(&self) {
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

    fn conflict(
        &self,
        holder: Option<(&Included, bool)>,
        claimant: &Included,
        others: &[&Included],
    ) {
        self.judge
            .conflict(&self.admit.key, holder, claimant, others);
    }
}

/// A conflict found by a round: `claimant` answered against `holder`, which may hold the
/// IBI (`home`: as its home).
#[derive(Clone, Debug)]
struct Seen {
    holder: Included,
    home: bool,
    claimant: Included,
}

/// Where conflicts go: the memory keeps them (beside its entries, for the inspection
/// view and `ibi-resolver archives`), the metrics count them, the log says them; and an
/// Archive that answers against the homes of several IBIs comes under suspicion
/// ([`crate::suspicion`]).
#[derive(Clone)]
struct Judge {
    memory: Arc<LocationMemory>,
    metrics: Arc<Metrics>,
    suspicion: Arc<Suspicion>,
    clock: Arc<dyn Clock>,
}

impl Judge {
    /// `claimant` claimed the Original of `ibi` (or answered for it while the holder
    /// claims the Original without what was asked) besides `holder` (remembered, or the
    /// home: `true`) or `others` (none remembered): counted, kept, logged the first time
    /// (and then once in a while per claimant, however many IBIs it claims).
    fn conflict(
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

/// What requests did to their Archives' health and to the metrics. Cloned into the task
/// that lets a round's requests still under way end (see [`Engine::round`]).
#[derive(Clone)]
struct Ledger {
    metrics: Arc<Metrics>,
    clock: Arc<dyn Clock>,
    dormant_after: u32,
    /// The Archive whose failure in this step is counted already: not counted again.
    counted: Option<String>,
}

impl Ledger {
    /// A request to `archive` answered after `took`.
    fn answered(&self, archive: &str, health: &Health, took: Duration) {
        self.metrics.archive_request(archive, "answered", took);
        if health.success(took, clock::millis(&*self.clock)) == health::Change::Woke {
            say(&format!("{archive} answers again: asked again"));
        }
    }

    /// A request to `archive` was answered 503 or 429 until the timeout: counted apart,
    /// and toward dormancy only when it lasts (see [`Health::overloaded`]).
    fn overloaded(&self, archive: &str, health: &Health, took: Duration) {
        self.metrics.archive_request(archive, "overloaded", took);
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
    fn failed(&self, archive: &str, health: &Health, result: &str, took: Duration) {
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

#[derive(Clone)]
enum Next {
    Done(Outcome),
    Ask(Asking),
}

impl Next {
    /// An answer that satisfied the request (a URL, or where to ask next).
    fn satisfied(&self) -> bool {
        matches!(self, Next::Done(Outcome::Found(_)) | Next::Ask(_))
    }

    /// A URL whose Archive says it holds a copy.
    fn says_copy(&self) -> bool {
        matches!(self, Next::Done(Outcome::Found(found)) if found.says_copy())
    }

    /// A URL whose Archive claims the Original.
    fn claims_original(&self) -> bool {
        matches!(self, Next::Done(Outcome::Found(found)) if found.claims_original())
    }
}

/// `url` as pages cite it, after `base`: its path, and of its query only the `ibiurl.*`
/// pairs (the reader's other pairs are the reader's own: pages do not show them).
pub fn persistent_url(base: &str, url: &PersistentUrl) -> String {
    let text = url.to_string();
    // The file path escapes `?`: the first one starts the query.
    let (path, query) = match text.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (text.as_str(), None),
    };
    let kept = query.map_or(Vec::new(), |q| {
        kept_pairs(q, |name| name.starts_with("ibiurl.")).0
    });
    if kept.is_empty() {
        format!("{base}{path}")
    } else {
        format!("{base}{path}?{}", kept.join("&"))
    }
}

/// `url` as the reader gave it, after `base`: `url.persistent` of Table 8.11 — its path,
/// and its whole query (the item's own pairs and the resolver's) but `noredirect`, which
/// asks this resolver for its inspection view and is no part of the persistent URL, and
/// a `registrationkey`, which no log of an Archive's is to hold.
pub fn as_given(base: &str, url: &PersistentUrl) -> String {
    let text = url.to_string();
    // The file path escapes `?`: the first one starts the query.
    let (path, query) = match text.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (text.as_str(), None),
    };
    let kept = query.map_or(Vec::new(), |q| {
        kept_pairs(q, |name| !matches!(name, "noredirect" | "registrationkey")).0
    });
    if kept.is_empty() {
        format!("{base}{path}")
    } else {
        format!("{base}{path}?{}", kept.join("&"))
    }
}

/// The URL a reader is sent to for `found`, an Archive's URL: with the query pairs of
/// `url` that are not the resolver's (`ibiurl.*`) after its own — pairs meant for the item
/// itself, a web service's parameters say (§8.1) — as the reader sent them, but what may
/// not stand in a Location (controls, spaces, quotes, angle brackets, backslashes,
/// backquotes, `#`) percent-encoded; before the URL's fragment, if it has one.
pub fn location(found: &str, url: &PersistentUrl) -> String {
    let Some(query) = url.query() else {
        return found.to_string();
    };
    let (kept, _) = kept_pairs(query, |name| !name.starts_with("ibiurl."));
    if kept.is_empty() {
        return found.to_string();
    }
    let (base, fragment) = match found.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (found, None),
    };
    let mut out = String::from(base);
    out.push(if base.contains('?') { '&' } else { '?' });
    for (n, pair) in kept.iter().enumerate() {
        if n > 0 {
            out.push('&');
        }
        out.extend(percent_encoding::percent_encode(
            pair.as_bytes(),
            NOT_IN_A_LOCATION,
        ));
    }
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// What [`location`] percent-encodes in a reader's query pair: what
/// [`usable_location`] refuses, and `#`, which would end the query.
const NOT_IN_A_LOCATION: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'\\')
    .add(b'`');

/// The pairs of `query` whose names (percent-decoded) `keep` accepts, as sent, and
/// whether any was left out. What is kept is shown, logged or sent on, so `;`, which
/// some clients and servers take for a separator, is one here too: a pair is kept only
/// when every part of it between `;` has a name `keep` accepts (else a registration key
/// could follow a pair that is shown, `servicesubject=inclusionRequest;registrationkey=…`).
/// A pair that holds a registration key in any other way (escaped, in a value:
/// [`ibi::logline::hide_keys`]) is never kept.
pub fn kept_pairs(query: &str, keep: impl Fn(&str) -> bool) -> (Vec<&str>, bool) {
    let mut kept = Vec::new();
    let mut left_out = false;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let accepted = pair.split(';').filter(|p| !p.is_empty()).all(|part| {
            let name = part.split('=').next().unwrap_or("");
            keep(&percent_encoding::percent_decode_str(name).decode_utf8_lossy())
        });
        if accepted && ibi::logline::hide_keys(pair) == pair {
            kept.push(pair);
        } else {
            left_out = true;
        }
    }
    (kept, left_out)
}

/// The language of the first translation step with a language, if any.
fn explicit_translation(relation: &Relation) -> Option<String> {
    relation.steps().iter().find_map(|s| match s {
        Step::Translation(Some(l)) => Some(l.to_string()),
        _ => None,
    })
}

/// `clientinformation.ipaddress`: the list of Table 8.10.
fn ip_list(ips: &[IpAddr]) -> String {
    let words: Vec<String> = ips.iter().map(|ip| ip.to_string()).collect();
    words.join(" ")
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::tests::{read, url, EXAMPLE_10_1, EXAMPLE_9_3};
    use ibi::Ibi;

    #[test]
    fn example_10_1_answer_satisfies_and_its_acknowledgment_is_table_8_11() {
        let Reading::Satisfies(found) = read(EXAMPLE_10_1, "/8JMKD3MGP8W/35MMLL8") else {
            panic!()
        };
        assert_eq!(found.url, "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf");
        assert_eq!(
            (
                found.contenttype.as_str(),
                found.state.as_ref().map(SaidState::as_str)
            ),
            ("Data", Some("Original"))
        );
        // Example 10.1's acknowledgment, with the url's own "%" escaped as Table 6.1 asks
        // (the example prints it bare), so that the Archive decodes the URL it gave.
        assert_eq!(
            acknowledgment_of(found),
            "http://mtc-m16c.sid.inpe.br/sid.inpe.br/mtc-m18@80/2008/03.17.15.17?clientinformation.ipaddress=172.16.44.200%20150.163.68.1&contenttype=Data&ibi=rep%20sid.inpe.br/mtc-m18@80/2009/07.21.14.43%20ibip%208JMKD3MGP8W/35MMLL8&servicesubject=acknowledgment&state=Original&url=http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%2520650.0-B-1.pdf&url.persistent=http://urlib.net:80/8JMKD3MGP8W/35MMLL8&urlkey=1427244889-5349022633744855"
        );
    }

    /// The acknowledgment of `found` as urlib.net would send it for Example 10.1's reader.
    fn acknowledgment_of(found: Found) -> String {
        let engine = Engine {
            publicurl_with_port: "http://urlib.net:80".into(),
            ..Engine::new(
                &crate::config::Config::parse(
                    "serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"http://urlib.net\"\n",
                    std::path::Path::new("."),
                )
                .unwrap(),
            )
        };
        let trace = Trace {
            persistent_url: "http://urlib.net:80/8JMKD3MGP8W/35MMLL8".into(),
            rounds: Vec::new(),
            outcome: Outcome::Found(found),
            location: None,
            conflicts: Vec::new(),
            ms: 0.0,
        };
        let reader = Reader {
            ips: vec![
                "172.16.44.200".parse().unwrap(),
                "150.163.68.1".parse().unwrap(),
            ],
            languages: Vec::new(),
        };
        engine.acknowledgment(&trace, &reader).unwrap()
    }

    #[test]
    fn an_answer_without_state_claims_nothing_and_is_acknowledged_without_one() {
        let answer = EXAMPLE_10_1.replace("state Original\r\n", "");
        let Reading::Satisfies(found) = read(&answer, "/8JMKD3MGP8W/35MMLL8") else {
            panic!()
        };
        assert_eq!(found.state, None);
        assert!(!found.claims_original());
        assert_eq!(
            acknowledgment_of(found),
            "http://mtc-m16c.sid.inpe.br/sid.inpe.br/mtc-m18@80/2008/03.17.15.17?clientinformation.ipaddress=172.16.44.200%20150.163.68.1&contenttype=Data&ibi=rep%20sid.inpe.br/mtc-m18@80/2009/07.21.14.43%20ibip%208JMKD3MGP8W/35MMLL8&servicesubject=acknowledgment&url=http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%2520650.0-B-1.pdf&url.persistent=http://urlib.net:80/8JMKD3MGP8W/35MMLL8&urlkey=1427244889-5349022633744855"
        );
    }

    #[test]
    fn the_persistent_url_keeps_of_the_query_only_what_the_resolver_reads() {
        let shown = |path: &str, query: Option<&str>| {
            persistent_url(
                "http://urlib.net:80",
                &PersistentUrl::parse(path, query).unwrap(),
            )
        };
        assert_eq!(
            shown(
                "/LK47B6W/362SFKH+",
                Some("registrationkey=12345678901&ibiurl.verblist=GetMetadata&session=s")
            ),
            "http://urlib.net:80/LK47B6W/362SFKH+?ibiurl.verblist=GetMetadata"
        );
        assert_eq!(
            shown("/LK47B6W/362SFKH/a%3Fb.pdf", Some("noredirect")),
            "http://urlib.net:80/LK47B6W/362SFKH/a%3Fb.pdf"
        );
        assert_eq!(
            shown("/LK47B6W/362SFKH", None),
            "http://urlib.net:80/LK47B6W/362SFKH"
        );
    }

    #[test]
    fn url_persistent_is_the_persistent_url_as_the_reader_gave_it() {
        let given = |path: &str, query: Option<&str>| {
            as_given(
                "http://urlib.net:80",
                &PersistentUrl::parse(path, query).unwrap(),
            )
        };
        // The item's own pairs and the resolver's, in the reader's order and spelling.
        assert_eq!(
            given(
                "/LK47B6W/362SFKH+",
                Some("session=s&ibiurl.verblist=GetMetadata&page=2")
            ),
            "http://urlib.net:80/LK47B6W/362SFKH+?session=s&ibiurl.verblist=GetMetadata&page=2"
        );
        // Not the inspection view's pair, nor a registration key.
        assert_eq!(
            given(
                "/LK47B6W/362SFKH/a%3Fb.pdf",
                Some("noredirect&registrationkey=12345678901&q=a%20b")
            ),
            "http://urlib.net:80/LK47B6W/362SFKH/a%3Fb.pdf?q=a%20b"
        );
        assert_eq!(
            given("/LK47B6W/362SFKH", Some("noredirect")),
            "http://urlib.net:80/LK47B6W/362SFKH"
        );
    }

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
    fn guard(members: &[usize]) -> Guard {
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

    fn archive_named(k: &str) -> Included {
        Included {
            key: format!("{k}.example/www/2020/01.01.01.01"),
            serviceibi: Ibi::parse(&format!("{k}.example/www/2020/01.01.01.01")).unwrap(),
            address: format!("{k}.example"),
            ip: None,
            recorded: Default::default(),
        }
    }

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

    #[test]
    fn the_readers_own_pairs_follow_the_url_found_encoded_where_they_must_be() {
        let at = |found: &str, path: &str| location(found, &url(path));
        assert_eq!(at("http://a/b.pdf", "/LK47B6W/362SFKH"), "http://a/b.pdf");
        assert_eq!(
            at(
                "http://a/b.pdf",
                "/LK47B6W/362SFKH?ibiurl.verblist=GetFileList"
            ),
            "http://a/b.pdf"
        );
        assert_eq!(
            at(
                "http://a/ws?op=1#top",
                "/LK47B6W/362SFKH?x=1&ibiurl.requireditemstatus=Original&y=a%20b"
            ),
            "http://a/ws?op=1&x=1&y=a%20b#top"
        );
        assert_eq!(
            at(
                "http://a/b",
                "/LK47B6W/362SFKH?q=<\"x\\y`>#&%69biurl.verblist=GetMetadata&k=\u{e9}"
            ),
            "http://a/b?q=%3C%22x%5Cy%60%3E%23&k=%C3%A9"
        );
        assert!(usable_location(&at(
            "http://a/b",
            "/LK47B6W/362SFKH?q=<\"x\\y`> #"
        )));
    }
}
