//! Resolution (§8.2, Figure 8.1): the urlRequest of Table 8.9 to every included Archive at
//! once, the analysis of their answers, new rounds for related items named elsewhere, and
//! the acknowledgment of Table 8.11.
//!
//! - Without `requireditemstatus`, the first non-empty answer that satisfies the request
//!   decides, without waiting for the others: it holds the URL asked for, or names the
//!   IBI of what was asked for (or of a step on the way: `ibi.metadata(oai_dc)`,
//!   `ibi.translation(es)`, `ibi.lastedition`, `ibi.nextedition`…) without its URL, which
//!   starts a new round for that IBI with what is left of the verb list, in every Archive
//!   (the loop of §8.2; Example 10.2 is one case). At most [`MAX_ROUNDS`] rounds, and no
//!   IBI and verb list twice.
//! - With `requireditemstatus=Original` every answer is awaited: exactly one Archive may
//!   claim the Original; two or more are under suspicion (409); only copies are named
//!   (404); and while an Archive did not answer (dormant, failed, overloaded, not asked)
//!   the check is not made (503). An answer without `state` claims nothing.
//! - A bare translation (`+`, `GetTranslation`) is chosen among the
//!   `.translation(xx[-YY])` variants of every answer by the reader's languages
//!   ([`lang::rank`]), an Original before a copy, then the first Archive: an answer decides
//!   at once only when it offers the reader's first language exactly; else the item in its
//!   own language (Example 8.3). The same answers give the same choice.
//! - Nothing found: `404` when every Archive answered, `503` ([`Outcome::Unavailable`])
//!   while one that could hold the item did not.
//! - Only an absolute `http`/`https` URL with a `//` authority, no user information and
//!   only visible ASCII is ever taken ([`usable_location`]); anything else an Archive
//!   answers counts as no URL. The reader's own query pairs follow it ([`location`]).
//!
//! The location memory ([`crate::memory`]) is a cache, never an authority: the Archive it
//! names is asked first, alone, and its answer taken when it satisfies the request; it is
//! written only by a resolution of the IBI itself (no file path, no verb), never by the
//! inspection view; an entry is replaced only when its Archive answered that the item is
//! not there (empty, or a tombstone), never because it lacked a file or a relation, nor
//! because it did not answer; once stale (older than `[memory] expiry`) it is verified by
//! asking every Archive, the remembered one's answer awaited and preferred. A second
//! Archive claiming the Original while the remembered one claims it is a conflict:
//! logged once, counted, kept beside the entry.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ibi::item::State;
use ibi::pairs::{self, PairList};
use ibi::persistent::PersistentUrl;
use ibi::relation::{Lang, Relation, Step};
use ibi::Ibi;
use serde::Serialize;
use tokio::task::JoinSet;

use crate::client::{ArchiveClient, Fetched};
use crate::clock::{self, Clock};
use crate::health::{self, Health, HealthBook};
use crate::lang;
use crate::log::{complain, say};
use crate::memory::{Conflict, LocationMemory};
use crate::metrics::Metrics;
use crate::registry::Included;

/// Rounds of urlRequests one resolution may take (each next edition is one).
pub const MAX_ROUNDS: usize = 16;

/// Requests of one round under way at once.
pub const WINDOW: usize = 128;

/// Variants of one answer read (URLs of translations, say): more than any item has.
const MAX_VARIANTS: usize = 256;

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
        }
    }
}

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
/// location memory names.
#[derive(Clone, Debug, Serialize)]
pub struct Round {
    pub ibi: String,
    pub verblist: String,
    /// Only the remembered Archive was asked.
    pub remembered: bool,
    /// Why this round was started, when it is not the first of the resolution: which
    /// Archive named the IBI, as what.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<Why>,
    pub asked: Vec<Asked>,
}

/// Why a round was asked after the first: shown in words on the pages, in English by its
/// `Display` (in the log, `resolve` and the JSON inspection view).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Why {
    /// The Archive `archive` at `address` named the IBI as the `pair` of `of`, without
    /// its URL.
    Named {
        address: String,
        archive: String,
        pair: String,
        of: String,
    },
    /// The Archive `archive` at `address` named the IBI as `ibi.nextedition` of `of`.
    NextEdition {
        address: String,
        archive: String,
        of: String,
    },
    /// No translation in the reader's languages: the item in its own language.
    OwnLanguage,
}

impl std::fmt::Display for Why {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Why::Named {
                address,
                archive,
                pair,
                of,
            } => write!(
                f,
                "{address} ({archive}) named it as {pair} of {of}, without its URL"
            ),
            Why::NextEdition {
                address,
                archive,
                of,
            } => write!(
                f,
                "{address} ({archive}) named it as ibi.nextedition of {of}"
            ),
            Why::OwnLanguage => f.write_str(
                "no translation in the reader's languages: the item in its own language",
            ),
        }
    }
}

impl Serialize for Why {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
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
    /// The answer's pairs (urlkey hidden), values as written.
    pub pairs: Vec<(String, String)>,
    pub ms: f64,
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
    /// No included Archive knows the IBI, and every one answered (or none is included).
    NotFound { asked: usize },
    /// Nothing found while these Archives (`address (service IBI)`) did not answer
    /// (dormant, failed, timed out, overloaded, not sent): one of them could hold it.
    Unavailable { archives: Vec<String>, asked: usize },
    /// `+(xx)` asked and the item is here, but without that translation.
    NoTranslation { language: String },
    /// The item was found only as a tombstone.
    Deleted { date: String },
    /// `requireditemstatus=Original` and two or more Archives claim the Original.
    Suspicion { archives: Vec<String> },
    /// `requireditemstatus=Original` and only copies answered: each copy found.
    NoOriginal { copies: Vec<Found> },
    /// `requireditemstatus=Original` while these Archives did not answer: the check
    /// cannot be made now.
    Unverifiable { archives: Vec<String> },
    /// The related items named from answer to answer loop, or go on past
    /// [`MAX_ROUNDS`].
    Chain { detail: ChainEnd },
    /// The reader's network has asked every Archive as often as it may for now.
    Throttled { retry_after: u64 },
}

/// The chosen answer.
#[derive(Clone, Debug, Serialize)]
pub struct Found {
    pub url: String,
    pub archive: String,
    pub address: String,
    pub contenttype: String,
    /// `state` as the Archive said it; none: it claims nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<SaidState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ibi: Option<String>,
    #[serde(skip)]
    pub urlkey: Option<String>,
    /// The translation chosen for a bare `+`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
}

impl Found {
    /// Whether the Archive claims to hold the Original.
    pub fn claims_original(&self) -> bool {
        self.state == Some(SaidState::Known(State::Original))
    }
}

/// `state` as an Archive said it of an item: one of Figure 5.4's (and the tombstone's),
/// or another word, kept as said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SaidState {
    Known(State),
    Other(String),
}

impl SaidState {
    /// The state `word` says.
    pub fn of(word: &str) -> SaidState {
        match State::from_word(word) {
            Some(state) => SaidState::Known(state),
            None => SaidState::Other(word.to_string()),
        }
    }

    /// The word as the Archive said it.
    pub fn as_str(&self) -> &str {
        match self {
            SaidState::Known(state) => state.as_str(),
            SaidState::Other(word) => word,
        }
    }
}

impl Serialize for SaidState {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// What one answer says about the request.
#[derive(Clone, Debug)]
enum Reading {
    Satisfies(Found),
    /// The answer names the IBI of what was asked for, without its URL: ask every
    /// Archive for it (§8.2, the loop).
    Ask(Asking),
    /// A bare translation: what the answer offers, chosen among every answer's.
    Offers(Box<Offers>),
    Deleted(String),
    /// Here, but nothing for this request.
    Here,
    Empty,
    Invalid(String),
}

/// The next round of a resolution, and why it is asked.
#[derive(Clone, Debug)]
pub struct Asking {
    url: PersistentUrl,
    why: Why,
}

/// What one variant of a bare translation gives.
#[derive(Clone, Debug)]
enum Gives {
    Url(Found),
    Ask(Asking),
}

impl Gives {
    /// Whether the Archive claims the Original of what it gives (a translation named
    /// elsewhere: not known).
    fn original(&self) -> bool {
        matches!(self, Gives::Url(found) if found.claims_original())
    }

    fn next(self) -> Next {
        match self {
            Gives::Url(found) => Next::Done(Outcome::Found(found)),
            Gives::Ask(asking) => Next::Ask(asking),
        }
    }
}

/// One answer to a bare translation (`+`, `GetTranslation`): every language variant it
/// names (with its URL, or the IBI of the translation kept elsewhere), the item in its
/// own language when one of the variants is the item itself, and where to ask when the
/// translation's place is not reached here (the next edition, say).
#[derive(Clone, Debug)]
struct Offers {
    variants: Vec<(Lang, Gives)>,
    itself: Option<Gives>,
    onward: Option<Asking>,
}

impl Offers {
    /// The variant the reader prefers most (of equals, one with its URL, an Original
    /// first), and how much.
    fn best(&self, languages: &[Lang]) -> Option<(lang::Rank, &Gives)> {
        self.variants
            .iter()
            .filter_map(|(l, g)| lang::rank(languages, l).map(|r| (r, g)))
            .min_by_key(|(r, g)| (*r, matches!(g, Gives::Ask(_)), !g.original()))
    }

    /// What this answer alone gives: its best variant, else the item itself, else where
    /// to ask on.
    fn alone(&self, languages: &[Lang]) -> Option<Next> {
        self.best(languages)
            .map(|(_, g)| g.clone())
            .or_else(|| self.itself.clone())
            .map(Gives::next)
            .or_else(|| self.onward.clone().map(Next::Ask))
    }
}

/// What an Archive said of the item, for the location memory's rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Said {
    /// Nothing yet.
    Waiting,
    /// It holds the item and its answer satisfied the request; `original`: it said
    /// `state Original`.
    Holds { original: bool },
    /// It does not hold the item (empty), or holds its tombstone.
    Gone,
    /// It holds the item, without what was asked (a file, a relation).
    Here,
    /// No answer: failed, timed out, overloaded, dormant, not sent.
    Silent,
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
            Reading::Here => Said::Here,
            Reading::Invalid(_) => Said::Silent,
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
    /// What the memory may learn from every answer of the round.
    admit: Option<Admit>,
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
/// Archive (not only the remembered one) is one of the misses of [`crate::clients`].
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
        archives: Arc<Vec<Included>>,
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
            persistent_url: persistent_url(&self.publicurl_with_port, url),
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

    /// The acknowledgment URL of Table 8.11 for a found URL (`None` when the Archive gave
    /// no urlkey: there is nothing to acknowledge). Each pair as the Archive said it: no
    /// `state` when it said none.
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
    /// a fresh entry, else every Archive (a stale entry's Archive awaited and preferred);
    /// the memory kept by the rules of the module's header. Never the memory for
    /// `requireditemstatus=Original`, which weighs every Archive's answer. Each round
    /// that asks more than the remembered Archive is charged to `budget` first.
    async fn step(
        &self,
        archives: &[Included],
        url: &PersistentUrl,
        reader: &Reader,
        memory: MemoryUse,
        budget: &dyn Budget,
        rounds: &mut Vec<Round>,
    ) -> Next {
        let writes = memory != MemoryUse::Read;
        if url.requires_original() {
            if let Err(retry_after) = budget.fan_out() {
                return Next::Done(Outcome::Throttled { retry_after });
            }
            let ended = self.round(archives, url, reader, Ask::default()).await;
            rounds.push(ended.round);
            return ended.next;
        }
        let key = url.ibi().key();
        // Only a resolution of the IBI itself may make or change an entry.
        let may_remember = memory == MemoryUse::Learn
            && self.memory.enabled()
            && url.filepath().is_none()
            && url.verbs().is_empty();
        // The inspection view reads the memory without marking anything used.
        let recalled = if writes {
            self.memory.recall(&key)
        } else {
            self.memory.peek(&key)
        };
        let holder = recalled
            .as_ref()
            .and_then(|r| archives.iter().position(|a| *a.key == *r.archive));
        let Some((recalled, h)) = recalled.clone().zip(holder) else {
            // Nothing remembered; or its Archive is not included now (excluded for a
            // while, say): the entry stays for when it is, and nothing is learnt.
            self.metrics
                .memory(if recalled.is_some() { "stale" } else { "miss" });
            if let Err(retry_after) = budget.fan_out() {
                return Next::Done(Outcome::Throttled { retry_after });
            }
            let admit = (may_remember && recalled.is_none()).then(|| Admit {
                key: key.clone(),
                holder: None,
            });
            let ended = self
                .round(
                    archives,
                    url,
                    reader,
                    Ask {
                        admit,
                        ..Ask::default()
                    },
                )
                .await;
            rounds.push(ended.round);
            return ended.next;
        };
        let holder = &archives[h];
        if !recalled.fresh {
            // Verified by every Archive, the remembered one awaited and preferred.
            self.metrics.memory("verify");
            if let Err(retry_after) = budget.fan_out() {
                return Next::Done(Outcome::Throttled { retry_after });
            }
            let admit = may_remember.then(|| Admit {
                key: key.clone(),
                holder: Some(h),
            });
            let ended = self
                .round(
                    archives,
                    url,
                    reader,
                    Ask {
                        incumbent: Some(h),
                        admit,
                        ..Ask::default()
                    },
                )
                .await;
            rounds.push(ended.round);
            return ended.next;
        }
        let dormant = self
            .health
            .of(holder.serviceibi.as_str(), || holder.recorded.clone())
            .is_dormant();
        let mut said = Said::Silent;
        let mut result = AskResult::Dormant;
        let mut alone: Option<Next> = None;
        let mut unsettled = false;
        if !dormant {
            let mut ended = self
                .round(std::slice::from_ref(holder), url, reader, Ask::default())
                .await;
            ended.round.remembered = true;
            result = ended.round.asked[0].result;
            rounds.push(ended.round);
            if ended.next.satisfied() && ended.settled {
                self.metrics.memory("hit");
                return ended.next;
            }
            unsettled = ended.next.satisfied();
            said = ended.said[0];
            alone = Some(ended.next);
        }
        self.metrics.memory("stale");
        if said == Said::Gone && writes {
            // It answered that the item is not there: the one reason to replace an entry.
            self.memory.forget(&key, Some(&holder.key));
        }
        // The remembered Archive did not satisfy the request: every other one is asked,
        // and it again only when it failed at once (a moment of overload may be over) or
        // its translation is to be weighed against every other's: one that answered,
        // timed out or was overloaded was heard, or waited for, enough.
        let again = result == AskResult::Failed || unsettled;
        let others: Vec<Included>;
        let asked_now: &[Included] = if again {
            archives
        } else {
            others = archives
                .iter()
                .filter(|a| a.key != holder.key)
                .cloned()
                .collect();
            &others
        };
        if let Err(retry_after) = budget.fan_out() {
            return Next::Done(Outcome::Throttled { retry_after });
        }
        let admit = (may_remember && said == Said::Gone).then(|| Admit {
            key: key.clone(),
            holder: None,
        });
        let counted = (!dormant).then_some(holder.serviceibi.as_str());
        let ended = self
            .round(
                asked_now,
                url,
                reader,
                Ask {
                    counted,
                    admit,
                    ..Ask::default()
                },
            )
            .await;
        rounds.push(ended.round);
        match (ended.next, alone) {
            // Its translation, weighed against every other Archive's, stands when the
            // others gave none (though one gave a tombstone).
            (next, Some(first)) if first.satisfied() && !next.satisfied() => first,
            // Nobody else has it: what the remembered Archive said stands (a tombstone,
            // or the item without the translation asked for).
            (
                Next::Done(Outcome::NotFound { .. } | Outcome::Unavailable { .. }),
                Some(first @ Next::Done(Outcome::Deleted { .. } | Outcome::NoTranslation { .. })),
            ) => first,
            (Next::Done(outcome), _) if !again => {
                // Counted among those that did not answer only for an outage (not for an
                // address the resolver may no longer contact).
                let silent = result.is_outage().then(|| shown_archive(holder));
                Next::Done(with_one_more(outcome, silent))
            }
            (next, _) => next,
        }
    }

    /// One round: the urlRequest to every Archive given (but dormant ones), answers read
    /// as they come, until one decides (the incumbent's, when it satisfies, once it is
    /// in) or all are in. With `ask.admit`, every answer is read to its end (in the
    /// background, past the decision) and the memory learns from them all
    /// ([`Admission`]).
    async fn round(
        &self,
        archives: &[Included],
        url: &PersistentUrl,
        reader: &Reader,
        ask: Ask<'_>,
    ) -> Ended {
        let verblist = url.verblist_text();
        let mut hearing = Hearing::new(self, archives, ask.counted);
        let requests = self.requests(archives, url, &verblist, reader, &mut hearing);
        let mut in_flight = InFlight::start(self, requests);
        let mut tally = Tally::default();
        let decided = hearing
            .gather(
                &mut in_flight,
                &mut tally,
                archives,
                url,
                reader,
                ask.incumbent,
            )
            .await;
        let (deciding, settled) = tally.deciding(decided, url, &reader.languages);
        let Hearing {
            asked,
            said,
            healths,
            ledger,
        } = hearing;
        self.finish_in_background(
            in_flight.tasks,
            archives,
            url,
            (healths, ledger),
            ask.admit,
            &said,
        );
        let silent: Vec<String> = asked
            .iter()
            .zip(archives)
            .filter(|(a, _)| a.result.is_outage())
            .map(|(_, a)| shown_archive(a))
            .collect();
        let round = Round {
            ibi: url.ibi().as_str().to_string(),
            verblist,
            remembered: false,
            why: None,
            asked,
        };
        let next = match deciding {
            Some(next) => next,
            None => tally.outcome(url, archives, &said, silent),
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
                hearing.said[i] = Said::Silent;
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
                    // Not asked (for the Original check), but no outage either: its
                    // address is one the resolver may not contact.
                    hearing.asked[i].result = AskResult::Refused;
                    hearing.asked[i].detail = Some(e);
                    hearing.said[i] = Said::Silent;
                }
            }
        }
        requests
    }

    /// Lets the round's requests still under way end in the background, each within the
    /// timeout: cut off, their connections could not be used again, and the next
    /// resolution would open new ones. What they get counts toward their Archives'
    /// health, and toward what the memory learns (`admit`), not toward this resolution.
    /// With none under way, what the memory learns is settled at once.
    fn finish_in_background(
        &self,
        tasks: JoinSet<Heard>,
        archives: &[Included],
        url: &PersistentUrl,
        (healths, ledger): (Vec<Arc<Health>>, Ledger),
        admit: Option<Admit>,
        said: &[Said],
    ) {
        if admit.is_none() && tasks.is_empty() {
            return;
        }
        // What outlives the round shares one copy of its Archives.
        let archives: Arc<[Included]> = Arc::from(archives);
        let admission = admit.map(|admit| Admission {
            admit,
            archives: archives.clone(),
            said: said.to_vec(),
            memory: self.memory.clone(),
            metrics: self.metrics.clone(),
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
        };
        tokio::spawn(late.drain(tasks, admission));
    }
}

/// One request's end: the Archive's index, what came, and how long it took.
type Heard = (usize, Fetched, Duration);

/// A round's requests under way: at most [`WINDOW`] at once, the next one sent as each
/// ends, so that a round over thousands of Archives goes in waves, and one resolution
/// does not take every request the client allows at once (client::UNDER_WAY).
struct InFlight {
    tasks: JoinSet<Heard>,
    waiting: std::vec::IntoIter<(usize, String)>,
    client: ArchiveClient,
    timeout: Duration,
}

impl InFlight {
    fn start(engine: &Engine, requests: Vec<(usize, String)>) -> InFlight {
        let mut in_flight = InFlight {
            tasks: JoinSet::new(),
            waiting: requests.into_iter(),
            client: engine.client.clone(),
            timeout: engine.timeout,
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
        self.tasks.spawn(async move {
            let (fetched, took) = client.get(&request, timeout).await;
            (i, fetched, took)
        });
    }

    /// The next request to end (`None` when none is left), the next one waiting sent.
    async fn next(&mut self) -> Option<Result<Heard, tokio::task::JoinError>> {
        let joined = self.tasks.join_next().await?;
        if let Some(request) = self.waiting.next() {
            self.send(request);
        }
        Some(joined)
    }
}

/// What a round heard of each of its Archives, and their health as it counts.
struct Hearing {
    asked: Vec<Asked>,
    said: Vec<Said>,
    healths: Vec<Arc<Health>>,
    ledger: Ledger,
}

impl Hearing {
    fn new(engine: &Engine, archives: &[Included], counted: Option<&str>) -> Hearing {
        Hearing {
            asked: archives
                .iter()
                .map(|a| Asked {
                    archive: a.serviceibi.to_string(),
                    address: a.address.clone(),
                    result: AskResult::NotAwaited,
                    detail: None,
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
    /// Original check: the incumbent's, when it satisfies, once it is in), or all are
    /// in. The index of the deciding answer, if one decided before the last came.
    async fn gather(
        &mut self,
        in_flight: &mut InFlight,
        tally: &mut Tally,
        archives: &[Included],
        url: &PersistentUrl,
        reader: &Reader,
        incumbent: Option<usize>,
    ) -> Option<usize> {
        let original = url.requires_original();
        while let Some(joined) = in_flight.next().await {
            let Ok((i, fetched, took)) = joined else {
                continue;
            };
            if let Some(reading) = self.hear(i, fetched, took, &archives[i], url) {
                self.asked[i].result = AskResult::Answered;
                self.said[i] = reading.said();
                let languages = &reader.languages;
                if let Some(next) = tally.add(i, reading, original, languages, &mut self.asked[i]) {
                    tally.candidates.push((i, next));
                }
            }
            if !original {
                let decided = decide(&tally.candidates, &self.said, incumbent);
                if decided.is_some() {
                    return decided;
                }
            }
        }
        None
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
        self.said[i] = Said::Silent;
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
    /// With the Original check: the answers that satisfied, each a claim.
    claims: Vec<Found>,
    /// Answers naming where to ask next, in the order they came: without the Original
    /// check, taken only when no answer holds the URL; with it, followed only when
    /// every answer agrees on the IBI.
    asks: Vec<(usize, Asking)>,
    /// With the Original check: an answer offered no translation the reader takes.
    untranslated: bool,
    /// A bare translation: every answer's variants, chosen among once all are in,
    /// unless one offers the reader's first language (then it decides at once).
    offers: Vec<(usize, Box<Offers>)>,
    /// The date of the first tombstone.
    deleted: Option<String>,
    /// An Archive holds the item, without what was asked.
    here: bool,
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
                self.claims.push(found);
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
                match o.alone(languages) {
                    Some(Next::Done(Outcome::Found(found))) => self.claims.push(found),
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
                    .map(|(_, gives)| gives.clone().next());
                self.offers.push((i, o));
                first_language
            }
            Reading::Deleted(date) => {
                self.deleted.get_or_insert(date);
                None
            }
            Reading::Here => {
                self.here = true;
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
    /// among these answers without the reader's first language).
    fn deciding(
        &mut self,
        mut decided: Option<usize>,
        url: &PersistentUrl,
        languages: &[Lang],
    ) -> (Option<Next>, bool) {
        let mut settled = true;
        if !url.requires_original() {
            if self.candidates.is_empty() && !self.offers.is_empty() {
                // A bare translation without the reader's first language: the best of
                // every answer's variants, the same whichever answered first.
                settled = false;
                self.candidates
                    .extend(choose_translation(&self.offers, languages, url));
            }
            if self.candidates.is_empty() {
                // No answer held the URL: the first that named where it is.
                if let Some((i, asking)) = self.asks.first() {
                    self.candidates.push((*i, Next::Ask(asking.clone())));
                }
            }
            if decided.is_none() {
                // Every answer is in and the incumbent did not satisfy: the first that
                // did.
                decided = self.candidates.first().map(|(i, _)| *i);
            }
        }
        let deciding = decided.and_then(|d| {
            let at = self.candidates.iter().position(|(i, _)| *i == d)?;
            Some(self.candidates.swap_remove(at).1)
        });
        (deciding, settled)
    }

    /// What a round that no answer decided gives: the Original check's verdict, the
    /// item in its own language, or how it ended (deleted, no translation, not found,
    /// unavailable while the `silent` Archives did not answer).
    fn outcome(
        mut self,
        url: &PersistentUrl,
        archives: &[Included],
        said: &[Said],
        silent: Vec<String>,
    ) -> Next {
        let original = url.requires_original();
        if original {
            // The check is made only once every included Archive said what it holds.
            let silent: Vec<String> = said
                .iter()
                .zip(archives)
                .filter(|(s, _)| matches!(s, Said::Silent | Said::Waiting))
                .map(|(_, a)| shown_archive(a))
                .collect();
            if !silent.is_empty() {
                return Next::Done(Outcome::Unverifiable { archives: silent });
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
                    .all(|f| found_ibi_key(f).is_some_and(|k| named.contains(&k)));
            if agree {
                return Next::Ask(self.asks.swap_remove(0).1);
            }
            let mut suspects: Vec<String> = self
                .asks
                .iter()
                .map(|(i, _)| shown_archive(&archives[*i]))
                .collect();
            suspects.extend(
                self.claims
                    .iter()
                    .map(|f| format!("{} ({})", f.address, f.archive)),
            );
            return Next::Done(Outcome::Suspicion { archives: suspects });
        }
        if original && !self.claims.is_empty() {
            let originals: Vec<&Found> =
                self.claims.iter().filter(|f| f.claims_original()).collect();
            let next = match originals.as_slice() {
                [one] => Outcome::Found((*one).clone()),
                [] => Outcome::NoOriginal {
                    copies: self.claims.clone(),
                },
                many => Outcome::Suspicion {
                    archives: many
                        .iter()
                        .map(|f| format!("{} ({})", f.address, f.archive))
                        .collect(),
                },
            };
            return Next::Done(next);
        }
        if let (true, Some(step)) = (self.untranslated, url.relation().bare_translation_at()) {
            return Next::Ask(own_language(url, step));
        }
        let outcome = if let Some(date) = self.deleted {
            Outcome::Deleted { date }
        } else if let (true, Some(language)) = (self.here, explicit_translation(url.relation())) {
            Outcome::NoTranslation { language }
        } else if silent.is_empty() {
            Outcome::NotFound {
                asked: archives.len(),
            }
        } else {
            Outcome::Unavailable {
                archives: silent,
                asked: archives.len(),
            }
        };
        Next::Done(outcome)
    }
}

/// What outlives a round whose requests are still under way.
struct Late {
    archives: Arc<[Included]>,
    url: PersistentUrl,
    healths: Vec<Arc<Health>>,
    ledger: Ledger,
}

impl Late {
    /// Waits for every request in `tasks`, counting what each got toward its Archive's
    /// health and, with an `admission`, toward what the memory learns; then settles it.
    async fn drain(self, mut tasks: JoinSet<Heard>, mut admission: Option<Admission>) {
        while let Some(joined) = tasks.join_next().await {
            let Ok((i, fetched, took)) = joined else {
                continue;
            };
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
        match fetched {
            Fetched::Body(body) => {
                let heard = if learning {
                    read_answer(&body, &self.url, archive).0.said()
                } else if is_answer(&body) {
                    Said::Here
                } else {
                    Said::Silent
                };
                if heard == Said::Silent {
                    ledger.failed(name, health, "failed", took);
                } else {
                    ledger.answered(name, health, took);
                }
                heard
            }
            Fetched::Failed(_) => {
                ledger.failed(name, health, "failed", took);
                Said::Silent
            }
            Fetched::TimedOut => {
                ledger.failed(name, health, "timed_out", took);
                Said::Silent
            }
            Fetched::Overloaded(_) => {
                ledger.overloaded(name, health, took);
                Said::Silent
            }
            Fetched::Busy | Fetched::Refused(_) => Said::Silent,
        }
    }
}

/// The key of the item a [`Found`] is the URL of, when its answer named it.
fn found_ibi_key(found: &Found) -> Option<String> {
    let words: Vec<&str> = found.ibi.as_deref()?.split_whitespace().collect();
    ibi_of(&words).map(|ibi| ibi.key())
}

/// An Archive as pages and the log name it: `address (service IBI)`.
fn shown_archive(a: &Included) -> String {
    format!("{} ({})", a.address, a.serviceibi)
}

/// `outcome` of a round that left out one Archive asked before it (the remembered one),
/// with that Archive counted: among those that did not answer when `silent` names it.
fn with_one_more(outcome: Outcome, silent: Option<String>) -> Outcome {
    match (outcome, silent) {
        (Outcome::NotFound { asked }, None) => Outcome::NotFound { asked: asked + 1 },
        (Outcome::NotFound { asked }, Some(one)) => Outcome::Unavailable {
            archives: vec![one],
            asked: asked + 1,
        },
        (
            Outcome::Unavailable {
                mut archives,
                asked,
            },
            silent,
        ) => {
            archives.extend(silent);
            Outcome::Unavailable {
                archives,
                asked: asked + 1,
            }
        }
        (other, _) => other,
    }
}

/// The next round when no answer offers a translation in the reader's languages and
/// none of them is the item itself: the item in its own language (Example 8.3).
fn own_language(url: &PersistentUrl, step: usize) -> Asking {
    Asking {
        url: url.without_translation_at(step),
        why: Why::OwnLanguage,
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
        .map(|((_, _, _, i), g)| (i, g.clone().next()));
    let itself = || {
        offers
            .iter()
            .filter_map(|(i, o)| o.itself.as_ref().map(|g| ((!g.original(), *i), g)))
            .min_by_key(|(k, _)| *k)
            .map(|((_, i), g)| (i, g.clone().next()))
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

/// The answer (index) that decides a round now, if one does: without an incumbent, the
/// first that satisfied; with one, none before it is heard, then its own when it
/// satisfied, else the first.
fn decide(candidates: &[(usize, Next)], said: &[Said], incumbent: Option<usize>) -> Option<usize> {
    match incumbent {
        Some(inc) if said[inc] == Said::Waiting => None,
        Some(inc) => candidates
            .iter()
            .find(|(i, _)| *i == inc)
            .or(candidates.first())
            .map(|(i, _)| *i),
        None => candidates.first().map(|(i, _)| *i),
    }
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
///   Archive claiming the Original while it does is a conflict, and it keeps the entry),
///   or said it is not there (forgotten, and the rest admitted as below), or did not
///   answer (the entry stays, stale).
/// - Nothing remembered: an entry is made only when every Archive answered, and exactly
///   one claims the Original (or, none claiming it, exactly one holds the item). Two or
///   more claiming the Original is a conflict, and none is remembered.
struct Admission {
    admit: Admit,
    archives: Arc<[Included]>,
    said: Vec<Said>,
    memory: Arc<LocationMemory>,
    metrics: Arc<Metrics>,
}

impl Admission {
    fn settle(&self) {
        let key = &self.admit.key;
        let Some(h) = self.admit.holder else {
            self.admit_one(None);
            return;
        };
        let holder = &self.archives[h];
        match self.said[h] {
            Said::Holds { original } => {
                self.memory.verified(key, &holder.key);
                if original {
                    for (i, s) in self.said.iter().enumerate() {
                        if i != h && *s == (Said::Holds { original: true }) {
                            self.conflict(Some(holder), &self.archives[i], &[]);
                        }
                    }
                }
            }
            Said::Gone => {
                self.memory.forget(key, Some(&holder.key));
                self.admit_one(Some(h));
            }
            _ => {}
        }
    }

    /// Remembers the one Archive that holds the item without doubt, if there is one
    /// (`but`: an Archive heard already, left out).
    fn admit_one(&self, but: Option<usize>) {
        let heard: Vec<(usize, Said)> = self
            .said
            .iter()
            .copied()
            .enumerate()
            .filter(|(i, _)| Some(*i) != but)
            .collect();
        if heard
            .iter()
            .any(|(_, s)| matches!(s, Said::Silent | Said::Waiting))
        {
            return;
        }
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
        match (originals.as_slice(), holders.as_slice()) {
            ([one], _) | ([], [one]) => self
                .memory
                .remember(&self.admit.key, &self.archives[*one].key),
            ([_, _, ..], _) => {
                for &i in &originals {
                    let others: Vec<&Included> = originals
                        .iter()
                        .filter(|&&o| o != i)
                        .map(|&o| &self.archives[o])
                        .collect();
                    self.conflict(None, &self.archives[i], &others);
                }
            }
            _ => {}
        }
    }

    /// `claimant` claimed the Original of the IBI besides `holder` (remembered) or
    /// `others` (none remembered): counted, kept, logged the first time (and then once
    /// in a while per claimant, however many IBIs it claims).
    fn conflict(&self, holder: Option<&Included>, claimant: &Included, others: &[&Included]) {
        self.metrics.conflict(claimant.serviceibi.as_str());
        let conflict = Conflict {
            ibi: self.admit.key.clone(),
            holder: holder.map(|h| h.key.clone()),
            claimant: claimant.key.clone(),
        };
        if !self.memory.conflict(conflict) {
            return;
        }
        let line = match holder {
            Some(h) => format!(
                "conflict: {} ({}) claims the Original of {}, which {} ({}) holds: {} keeps it",
                claimant.key, claimant.address, self.admit.key, h.key, h.address, h.key
            ),
            None => format!(
                "conflict: {} ({}) claims the Original of {}, as {} do: none is remembered",
                claimant.key,
                claimant.address,
                self.admit.key,
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

enum Next {
    Done(Outcome),
    Ask(Asking),
}

impl Next {
    /// An answer that satisfied the request (a URL, or where to ask next).
    fn satisfied(&self) -> bool {
        matches!(self, Next::Done(Outcome::Found(_)) | Next::Ask(_))
    }
}

/// `url` as the resolver read it, after `base`: its path, and of its query only the
/// `ibiurl.*` pairs (the reader's other pairs are the reader's: they reach neither the
/// Archives' acknowledgments nor the pages).
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
/// whether any was left out.
pub fn kept_pairs(query: &str, keep: impl Fn(&str) -> bool) -> (Vec<&str>, bool) {
    let mut kept = Vec::new();
    let mut left_out = false;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let name = pair.split('=').next().unwrap_or("");
        if keep(&percent_encoding::percent_decode_str(name).decode_utf8_lossy()) {
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

/// Reads one answer against the request. Also gives the pairs to show (urlkey hidden).
/// Whether `body` is an answer at all: empty ("not here") or a pair list.
fn is_answer(body: &str) -> bool {
    let text = body.trim_end_matches(['\r', '\n']);
    text.trim().is_empty() || pairs::parse(text).is_ok()
}

fn read_answer(
    body: &str,
    url: &PersistentUrl,
    archive: &Included,
) -> (Reading, Vec<(String, String)>) {
    let text = body.trim_end_matches(['\r', '\n']);
    if text.trim().is_empty() {
        return (Reading::Empty, Vec::new());
    }
    let list = match pairs::parse(text) {
        Ok(list) => list,
        Err(e) => {
            return (
                Reading::Invalid(format!("not a pair list: {e}")),
                Vec::new(),
            )
        }
    };
    let shown = list
        .iter()
        .map(|(n, v)| {
            let v = if n == "urlkey" {
                "(hidden)".to_string()
            } else {
                v.joined()
            };
            (n.to_string(), v)
        })
        .collect();
    (read_pairs(&list, url, archive), shown)
}

fn read_pairs(list: &PairList, url: &PersistentUrl, archive: &Included) -> Reading {
    // The words as text (those of a list read from text are ASCII).
    let list: Vec<(&str, Vec<&str>)> = list
        .iter()
        .map(|(name, value)| (name, value.as_strs().unwrap_or_default()))
        .collect();
    // Each name's first pair, looked up once per name: an answer of thousands of pairs
    // costs as many steps, not their square.
    let mut index: HashMap<&str, &[&str]> = HashMap::with_capacity(list.len());
    for (name, words) in &list {
        index.entry(name).or_insert(words.as_slice());
    }
    let get = |name: &str| index.get(name).copied();
    let wanted = url.relation().steps();
    let bare = url.relation().bare_translation_at();
    // Every `url<relation>` pair that answers the request, taken when its URL may become
    // a Location: exact, or with a language at a bare translation's place.
    let mut urls: Vec<(Option<Lang>, String, Found)> = Vec::new();
    // Every `ibi<relation>` pair naming what the request asks for, or a part of the way
    // to it, whose URL is not given: the IBI, how many steps of the relation it went,
    // the language at the bare place, and the pair's name.
    let mut named: Vec<(Ibi, usize, Option<Lang>, String)> = Vec::new();
    for (name, words) in &list {
        let Some(rest) = name.strip_prefix("url") else {
            continue;
        };
        let Ok(rel) = Relation::parse(rest) else {
            continue;
        };
        if let (Some(lang), [value]) = (matches(wanted, rel.steps()), words.as_slice()) {
            if usable_location(value) {
                let found = found_at(&index, rest, value, url, archive, lang.as_ref());
                urls.push((lang, rest.to_string(), found));
                if urls.len() == MAX_VARIANTS {
                    break;
                }
            }
        }
    }
    let with_url: HashSet<&str> = urls.iter().map(|(_, suffix, _)| suffix.as_str()).collect();
    for (name, words) in &list {
        let Some(rest) = name.strip_prefix("ibi").filter(|r| r.starts_with('.')) else {
            continue;
        };
        let Ok(rel) = Relation::parse(rest) else {
            continue;
        };
        let steps = rel.steps();
        if steps.len() > wanted.len() || with_url.contains(rest) || named.len() == MAX_VARIANTS {
            continue;
        }
        let (Some(lang), Some(ibi)) = (matches(&wanted[..steps.len()], steps), ibi_of(words))
        else {
            continue;
        };
        // A translation without a language at the end was not taken (an Archive passes
        // it through an item it does not hold): the way stops before it.
        let mut went = steps.len();
        while went > 0 && steps[went - 1] == Step::Translation(None) {
            went -= 1;
        }
        if went > 0 {
            named.push((ibi, went, lang, name.to_string()));
        }
    }
    // The next round for what `named` names: its IBI, asked for what is left of the
    // relation (its last edition stays asked, and so does a metadata format, which is
    // the metadata item's own); none when it would ask again what was just asked.
    let asking = |(ibi, went, _, pair): &(Ibi, usize, Option<Lang>, String)| -> Option<Asking> {
        let (walked, left) = wanted.split_at(*went);
        let mut rest: Vec<Step> = Vec::new();
        if walked.last() == Some(&Step::LastEdition) {
            rest.push(Step::LastEdition);
        }
        // The format applies to where the relation ends: asked of the metadata item
        // named, or of its translation, until a metadata step of what is left.
        let format = Step::Metadata { oai_dc: true };
        if walked.contains(&format) && !left.iter().any(|s| matches!(s, Step::Metadata { .. })) {
            rest.push(format);
        }
        rest.extend(left.iter().cloned());
        let relation = Relation::from_steps(rest).ok()?;
        let next = url.for_related(ibi.clone(), &relation);
        if ibi.key() == url.ibi().key() && next.verblist_text() == url.verblist_text() {
            return None;
        }
        Some(Asking {
            url: next,
            why: Why::Named {
                address: archive.address.clone(),
                archive: archive.serviceibi.to_string(),
                pair: pair.clone(),
                of: url.ibi().to_string(),
            },
        })
    };
    let next_edition = || {
        let next = get("ibi.nextedition").and_then(ibi_of)?;
        url.relation().involves_last_edition().then(|| Asking {
            url: url.with_ibi(next),
            why: Why::NextEdition {
                address: archive.address.clone(),
                archive: archive.serviceibi.to_string(),
                of: url.ibi().to_string(),
            },
        })
    };
    if let Some(step) = bare {
        // Past the bare place: a language variant; short of it: where to ask on.
        let mut variants: Vec<(Lang, Gives)> = Vec::new();
        for (lang, _, found) in &urls {
            if let Some(lang) = lang {
                variants.push((lang.clone(), Gives::Url(found.clone())));
            }
        }
        for n in &named {
            if let (Some(lang), true) = (&n.2, n.1 > step) {
                if !variants.iter().any(|(l, _)| l == lang) {
                    if let Some(a) = asking(n) {
                        variants.push((lang.clone(), Gives::Ask(a)));
                    }
                }
            }
        }
        // The variant that is the item itself: its own language.
        let own_rep = get("ibi").and_then(|w| rep_of(w));
        let itself = urls
            .iter()
            .find(|(_, suffix, _)| {
                own_rep.is_some() && get(&format!("ibi{suffix}")).and_then(|w| rep_of(w)) == own_rep
            })
            .map(|(_, _, found)| Gives::Url(found.clone()));
        let onward = named
            .iter()
            .filter(|n| n.1 <= step)
            .max_by_key(|n| n.1)
            .and_then(asking)
            .or_else(next_edition);
        if !variants.is_empty() || itself.is_some() || onward.is_some() {
            return Reading::Offers(Box::new(Offers {
                variants,
                itself,
                onward,
            }));
        }
    } else {
        if let Some((_, _, found)) = urls.into_iter().next() {
            return Reading::Satisfies(found);
        }
        // The longest way an answer went toward what was asked, the first of equals.
        let farthest = named.iter().map(|n| n.1).max();
        if let Some(a) = named
            .iter()
            .filter(|n| Some(n.1) == farthest)
            .find_map(asking)
        {
            return Reading::Ask(a);
        }
        if let Some(a) = next_edition() {
            return Reading::Ask(a);
        }
    }
    let state = get("state")
        .and_then(|w| w.first())
        .map(|w| SaidState::of(w));
    if state == Some(SaidState::Known(State::Deleted)) {
        let date = get("timestamp")
            .and_then(|w| w.first())
            .map(|w| w.to_string())
            .unwrap_or_default();
        return Reading::Deleted(date);
    }
    Reading::Here
}

/// The [`Found`] of the pair `url<suffix>` (its `value`): the pairs of the same relation
/// say its content type, state and IBI.
fn found_at(
    index: &HashMap<&str, &[&str]>,
    suffix: &str,
    value: &str,
    url: &PersistentUrl,
    archive: &Included,
    lang: Option<&Lang>,
) -> Found {
    let get = |name: &str| index.get(name).copied();
    let word = |n: &str| {
        get(&format!("{n}{suffix}"))
            .and_then(|w| w.first())
            .map(|w| w.to_string())
    };
    let metadata = url
        .relation()
        .steps()
        .iter()
        .any(|s| matches!(s, Step::Metadata { .. }));
    Found {
        url: value.to_string(),
        archive: archive.serviceibi.to_string(),
        address: archive.address.clone(),
        contenttype: word("contenttype")
            .unwrap_or_else(|| if metadata { "Metadata" } else { "Data" }.into()),
        state: word("state").as_deref().map(SaidState::of),
        ibi: get(&format!("ibi{suffix}")).map(|w| w.join(" ")),
        urlkey: get("urlkey").and_then(|w| w.first()).map(|w| w.to_string()),
        language: lang.map(|l| l.to_string()),
    }
}

/// `Some(language at the first bare place)` when `got` answers `wanted`.
fn matches(wanted: &[Step], got: &[Step]) -> Option<Option<Lang>> {
    if wanted.len() != got.len() {
        return None;
    }
    let mut lang = None;
    for (w, g) in wanted.iter().zip(got) {
        match (w, g) {
            (Step::Translation(None), Step::Translation(Some(l))) => {
                lang.get_or_insert_with(|| l.clone());
            }
            _ if w == g => {}
            _ => return None,
        }
    }
    Some(lang)
}

/// The rep of a value of the `formas-de-ibi` rule (`rep X ibip Y`).
fn rep_of<'a>(words: &[&'a str]) -> Option<&'a str> {
    words.windows(2).find(|w| w[0] == "rep").map(|w| w[1])
}

/// The IBI of a value of the `formas-de-ibi` rule: the rep when given, else the IBIp.
fn ibi_of(words: &[&str]) -> Option<Ibi> {
    let form = |tag: &str| {
        words
            .windows(2)
            .find(|w| w[0] == tag)
            .and_then(|w| Ibi::parse(w[1]).ok())
    };
    form("rep")
        .or_else(|| form("ibip"))
        .or_else(|| match words {
            [one] => Ibi::parse(one).ok(),
            _ => None,
        })
}

/// Whether an Archive's URL may become a `Location`: an absolute `http` or `https` URL
/// written with its `//` authority (`http:/x`, `http:x` and `http:///x` are not, though
/// URL parsers make something of them), a host, no user information, and only visible
/// ASCII without quotes, backslashes or angle brackets.
pub fn usable_location(url: &str) -> bool {
    if url.len() > 8 * 1024
        || !url
            .bytes()
            .all(|b| (0x21..0x7f).contains(&b) && !matches!(b, b'"' | b'<' | b'>' | b'\\' | b'`'))
    {
        return false;
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        return false;
    };
    if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
        return false;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.is_empty() || authority.contains('@') {
        return false;
    }
    match url::Url::parse(url) {
        Ok(u) => {
            u.host_str().is_some_and(|h| !h.is_empty())
                && u.username().is_empty()
                && u.password().is_none()
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archive() -> Included {
        Included {
            key: "sid.inpe.br/mtc-m18/2008/03.17.15.17".into(),
            serviceibi: Ibi::parse("sid.inpe.br/mtc-m18@80/2008/03.17.15.17").unwrap(),
            address: "mtc-m16c.sid.inpe.br".into(),
            recorded: Default::default(),
        }
    }

    fn url(path: &str) -> PersistentUrl {
        let (p, q) = match path.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (path, None),
        };
        PersistentUrl::parse(p, q).unwrap()
    }

    fn read(answer: &str, path: &str) -> Reading {
        read_pairs(&pairs::parse(answer).unwrap(), &url(path), &archive())
    }

    /// The first answer of Example 10.1.
    const EXAMPLE_10_1: &str = "archiveaddress mtc-m16c.sid.inpe.br\r\ncontenttype Data\r\nibi {rep sid.inpe.br/mtc-m18@80/2009/07.21.14.43 ibip 8JMKD3MGP8W/35MMLL8}\r\nibi.archiveservice {rep sid.inpe.br/mtc-m18@80/2008/03.17.15.17}\r\nibi.platformsoftware {rep dpi.inpe.br/banon/1998/08.02.08.56}\r\nstate Original\r\ntimestamp 2009-07-21T14:43:31Z\r\nurl http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf\r\nurlkey 1427244889-5349022633744855";

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
    fn the_incumbent_is_awaited_and_preferred() {
        let found = |i: usize| (i, Next::Done(Outcome::NotFound { asked: i }));
        let holds = Said::Holds { original: true };
        use Said::{Gone, Here, Silent, Waiting};
        // Without an incumbent: the first that satisfied.
        assert_eq!(
            decide(&[found(2), found(0)], &[holds, Waiting, holds], None),
            Some(2)
        );
        assert_eq!(decide(&[], &[Waiting, Here], None), None);
        // With one: nothing before it is heard, however many others satisfied.
        assert_eq!(decide(&[found(2)], &[Waiting, Here, holds], Some(0)), None);
        // Its own answer once it satisfied, even when it came last.
        assert_eq!(
            decide(&[found(2), found(0)], &[holds, Here, holds], Some(0)),
            Some(0)
        );
        // Heard without satisfying (gone, silent): the first other.
        assert_eq!(decide(&[found(2)], &[Gone, Here, holds], Some(0)), Some(2));
        assert_eq!(
            decide(&[found(2)], &[Silent, Here, holds], Some(0)),
            Some(2)
        );
    }

    /// An Admission over Archives a, b, c whose answers said `said`, on a memory of
    /// its own (which holds `remembered`: (IBI, Archive key, fresh)).
    fn admission(
        dir: &std::path::Path,
        holder: Option<usize>,
        said: [Said; 3],
        remembered: Option<&str>,
    ) -> Admission {
        let path = crate::store::Database::Sqlite(dir.join("r.sqlite"));
        crate::registry::Registry::open(&path).unwrap();
        let memory = Arc::new(LocationMemory::open(&path, 10, Duration::from_secs(60)).unwrap());
        if let Some(archive) = remembered {
            memory.remember("ibi", archive);
        }
        let archives = ["a", "b", "c"]
            .iter()
            .map(|k| Included {
                key: format!("{k}.example/www/2020/01.01.01.01"),
                serviceibi: Ibi::parse(&format!("{k}.example/www/2020/01.01.01.01")).unwrap(),
                address: format!("{k}.example"),
                recorded: Default::default(),
            })
            .collect();
        let health = Arc::new(HealthBook::default());
        Admission {
            admit: Admit {
                key: "ibi".into(),
                holder,
            },
            archives,
            said: said.to_vec(),
            memory,
            metrics: Arc::new(Metrics::new(health)),
        }
    }

    const A: &str = "a.example/www/2020/01.01.01.01";
    const B: &str = "b.example/www/2020/01.01.01.01";
    const C: &str = "c.example/www/2020/01.01.01.01";
    const ORIGINAL: Said = Said::Holds { original: true };
    const NO_CLAIM: Said = Said::Holds { original: false };

    fn remembered(a: &Admission) -> Option<(String, bool)> {
        a.memory
            .peek("ibi")
            .map(|r| (r.archive.to_string(), r.fresh))
    }

    #[test]
    fn only_an_undoubted_holder_is_remembered() {
        let dir = tempfile::tempdir().unwrap();
        // The one Original, though another answered first without claiming anything.
        let a = admission(dir.path(), None, [NO_CLAIM, ORIGINAL, Said::Gone], None);
        a.settle();
        assert_eq!(remembered(&a), Some((B.to_string(), true)));
        // One Archive not heard: it may hold the Original.
        let dir = tempfile::tempdir().unwrap();
        let a = admission(dir.path(), None, [ORIGINAL, Said::Gone, Said::Silent], None);
        a.settle();
        assert_eq!(remembered(&a), None);
        // Nobody claims the Original, one holds the item: it.
        let dir = tempfile::tempdir().unwrap();
        let a = admission(dir.path(), None, [Said::Gone, Said::Here, NO_CLAIM], None);
        a.settle();
        assert_eq!(remembered(&a), Some((C.to_string(), true)));
        // Two hold it, neither claims the Original: neither.
        let dir = tempfile::tempdir().unwrap();
        let a = admission(dir.path(), None, [NO_CLAIM, NO_CLAIM, Said::Gone], None);
        a.settle();
        assert_eq!(remembered(&a), None);
    }

    #[test]
    fn two_claims_of_the_original_are_a_conflict_and_neither_is_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let a = admission(dir.path(), None, [ORIGINAL, Said::Gone, ORIGINAL], None);
        a.settle();
        assert_eq!(remembered(&a), None);
        let claimants: Vec<(Option<String>, String)> = a
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
        );
        a.settle();
        assert_eq!(remembered(&a), Some((A.to_string(), true)));
        assert_eq!(
            a.memory.conflicts_of("ibi"),
            vec![Conflict {
                ibi: "ibi".into(),
                holder: Some(A.into()),
                claimant: B.into(),
            }]
        );
    }

    #[test]
    fn a_holder_that_says_the_item_left_is_replaced_and_a_silent_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let a = admission(
            dir.path(),
            Some(0),
            [Said::Gone, ORIGINAL, Said::Gone],
            Some(A),
        );
        a.settle();
        assert_eq!(remembered(&a), Some((B.to_string(), true)));
        // Silent: the entry stays as it was (here fresh, as made by `admission`).
        let dir = tempfile::tempdir().unwrap();
        let a = admission(
            dir.path(),
            Some(0),
            [Said::Silent, ORIGINAL, Said::Gone],
            Some(A),
        );
        a.settle();
        assert_eq!(remembered(&a), Some((A.to_string(), true)));
        assert!(a.memory.conflicts_of("ibi").is_empty());
    }

    /// Example 9.3's answer to a bare GetTranslation.
    const EXAMPLE_9_3: &str = "archiveaddress mtc-m16c.sid.inpe.br\r\ncontenttype.translation(en) Data\r\ncontenttype.translation(pt) Data\r\nibi {rep sid.inpe.br/mtc-m18@80/2009/07.21.13.23 ibip 8JMKD3MGP8W/35MME4E}\r\nibi.translation(en) {rep sid.inpe.br/mtc-m18@80/2009/07.21.13.23}\r\nibi.translation(pt) {rep sid.inpe.br/mtc-m18@80/2009/08.25.19.43}\r\nurl.translation(en) http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS%20643.0-B-1.pdf\r\nurl.translation(pt) http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/08.25.19.43/doc/RTC-07.pdf\r\nurlkey 1";

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
    fn only_http_urls_become_locations() {
        for bad in [
            "javascript:alert(1)",
            "data:text/html,x",
            "http://a b",
            "http://a\r\nSet-Cookie: x=1",
            "ftp://x/y",
            "http://",
            "//evil.example/x",
            "http://x/\"><script>",
            // Not absolute with an authority, though URL parsers make something of them.
            "http:/evil.example/x",
            "http:evil.example/x",
            "https:evil.example/x",
            "http:///evil.example/x",
            "http:\\\\evil.example/x",
            // User information.
            "http://user:pass@evil.example/x",
            "http://user@evil.example/x",
            "http://@evil.example/x",
            "http://evil.example\\@good.example/x",
            // Other schemes, however spelt.
            "JaVaScRiPt:alert(1)",
            "javascript://%0aalert(1)",
            "vbscript:msgbox(1)",
            "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
            "file:///etc/passwd",
            "ws://evil.example/x",
            // Relative.
            "",
            "/x/y",
            "x/y",
            "../x",
            "?x=1",
            "#x",
            // Line breaks, controls, spaces.
            "http://a/x\nSet-Cookie: x=1",
            "http://a/x\rSet-Cookie: x=1",
            "http://a/x\tb",
            "http://a/x\0b",
            "http://a/x\x7fb",
            " http://a/x",
            "http://a/x ",
            "http:// evil.example/x",
            // Quotes, angle brackets, backslashes, backticks.
            "http://a/x\"onmouseover=\"alert(1)",
            "http://a/<script>alert(1)</script>",
            "http://a/x\\y",
            "http://a/`x`",
            // Not ASCII: the host, the path, a right-to-left override.
            "http://ex\u{e4}mple.org/x",
            "http://a/\u{e9}",
            "http://a/\u{202e}fdp.exe",
            // Not a URL.
            "http://[::1/x",
            "http://a:99999/x",
        ] {
            assert!(!usable_location(bad), "{bad:?}");
        }
        for good in [
            "https://mtc-m16c.sid.inpe.br/col/x/doc/a%20b.pdf",
            "HTTP://mtc-m16c.sid.inpe.br:8080/col/x/doc/a.pdf?x=1#y",
            "http://[2001:db8::1]/x",
            "http://mtc-m16c.sid.inpe.br/col/x@y/doc/a.pdf",
        ] {
            assert!(usable_location(good), "{good:?}");
        }
        // Over-long: 8 KiB at most.
        let at_most = format!("http://a/{}", "l".repeat(8 * 1024 - 9));
        assert_eq!(at_most.len(), 8 * 1024);
        assert!(usable_location(&at_most));
        assert!(!usable_location(&format!("{at_most}l")));
        let answer = EXAMPLE_10_1.replace(
            "url http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf",
            "url javascript:alert(1)",
        );
        assert!(matches!(
            read(&answer, "/8JMKD3MGP8W/35MMLL8"),
            Reading::Here
        ));
    }

    #[test]
    fn a_tombstone_reads_as_deleted_with_its_date() {
        let answer = "archiveaddress a\r\nibi {rep x.y/z/2010/01.02.03.04}\r\nstate Deleted\r\ntimestamp 2020-05-06T07:08:09Z";
        match read(answer, "/x.y/z/2010/01.02.03.04") {
            Reading::Deleted(d) => assert_eq!(d, "2020-05-06T07:08:09Z"),
            other => panic!("{other:?}"),
        }
    }

    /// Where an answer sends the next round: its IBI and verb list, and why.
    fn next_round(answer: &str, path: &str) -> Option<(String, String, String)> {
        match read(answer, path) {
            Reading::Ask(a) => Some((
                a.url.ibi().as_str().to_string(),
                a.url.verblist_text(),
                a.why.to_string(),
            )),
            _ => None,
        }
    }

    #[test]
    fn a_relation_named_without_its_url_is_asked_of_every_archive_for_what_is_left() {
        let head = "archiveaddress a\r\nibi {rep x.y/z/2020/01.01.01.00}\r\nstate Copy\r\n";
        let why = |pair: &str| {
            format!("mtc-m16c.sid.inpe.br (sid.inpe.br/mtc-m18@80/2008/03.17.15.17) named it as {pair} of x.y/z/2020/01.01.01.00, without its URL")
        };
        let cases: [(&str, &str, (&str, &str, String)); 7] = [
            // The metadata: the metadata item itself; in a format: its own format.
            (
                "ibi.metadata {rep x.y/z/2020/01.01.01.09}",
                ":",
                ("x.y/z/2020/01.01.01.09", "", why("ibi.metadata")),
            ),
            (
                "ibi.metadata(oai_dc) {rep x.y/z/2020/01.01.01.09}",
                ":(oai_dc)",
                (
                    "x.y/z/2020/01.01.01.09",
                    "GetMetadata(oai_dc)",
                    why("ibi.metadata(oai_dc)"),
                ),
            ),
            // A translation: the translated item itself, and what follows it.
            (
                "ibi.translation(es) {rep x.y/z/2020/01.01.01.03}",
                "+(es):",
                (
                    "x.y/z/2020/01.01.01.03",
                    "GetMetadata",
                    why("ibi.translation(es)"),
                ),
            ),
            // The last edition stays asked of the edition named.
            (
                "ibi.lastedition {rep x.y/z/2020/01.01.01.05}",
                "!:(oai_dc)",
                (
                    "x.y/z/2020/01.01.01.05",
                    "GetLastEdition GetMetadata(oai_dc)",
                    why("ibi.lastedition"),
                ),
            ),
            // Composed: the whole way named at once.
            (
                "ibi.lastedition.metadata(oai_dc) {rep x.y/z/2020/01.01.01.09}",
                "!:(oai_dc)",
                (
                    "x.y/z/2020/01.01.01.09",
                    "GetMetadata(oai_dc)",
                    why("ibi.lastedition.metadata(oai_dc)"),
                ),
            ),
            // The format stays asked of a translation of the metadata named.
            (
                "ibi.metadata(oai_dc).translation(es) {rep x.y/z/2020/01.01.01.13}",
                ":(oai_dc)+(es)",
                (
                    "x.y/z/2020/01.01.01.13",
                    "GetMetadata(oai_dc)",
                    why("ibi.metadata(oai_dc).translation(es)"),
                ),
            ),
            // A bare translation passed through an item held elsewhere is still to be
            // chosen there.
            (
                "ibi.metadata.translation {rep x.y/z/2020/01.01.01.09}",
                ":+",
                (
                    "x.y/z/2020/01.01.01.09",
                    "GetTranslation",
                    why("ibi.metadata.translation"),
                ),
            ),
        ];
        for (pair, mdf, (ibi, verbs, why)) in cases {
            let answer = format!("{head}{pair}");
            let path = format!("/x.y/z/2020/01.01.01.00{mdf}");
            let got = match read(&answer, &path) {
                Reading::Ask(a) => (
                    a.url.ibi().as_str().to_string(),
                    a.url.verblist_text(),
                    a.why.to_string(),
                ),
                Reading::Offers(o) => match o.onward {
                    Some(a) => (
                        a.url.ibi().as_str().to_string(),
                        a.url.verblist_text(),
                        a.why.to_string(),
                    ),
                    None => panic!("{pair}: {o:?}"),
                },
                other => panic!("{pair}: {other:?}"),
            };
            assert_eq!(got, (ibi.to_string(), verbs.to_string(), why), "{pair}");
        }
        // A URL given wins over the IBI; an unusable one counts as none.
        let with_url = format!(
            "{head}ibi.metadata {{rep x.y/z/2020/01.01.01.09}}\r\nurl.metadata http://a/m.html"
        );
        assert!(matches!(
            read(&with_url, "/x.y/z/2020/01.01.01.00:"),
            Reading::Satisfies(_)
        ));
        let bad_url = with_url.replace("http://a/m.html", "javascript:x");
        assert_eq!(
            next_round(&bad_url, "/x.y/z/2020/01.01.01.00:").map(|n| n.0),
            Some("x.y/z/2020/01.01.01.09".to_string())
        );
        // Naming the same request again, or another relation, starts no round.
        let itself = format!("{head}ibi.metadata(oai_dc) {{rep x.y/z/2020/01.01.01.00}}");
        assert!(matches!(
            read(&itself, "/x.y/z/2020/01.01.01.00:(oai_dc)"),
            Reading::Here
        ));
        let other = format!("{head}ibi.metadata {{rep x.y/z/2020/01.01.01.09}}");
        assert!(matches!(
            read(&other, "/x.y/z/2020/01.01.01.00:(oai_dc)"),
            Reading::Here
        ));
        // The file path, GetFileList and the query stay with the next round.
        let files = format!("{head}ibi.translation(es) {{rep x.y/z/2020/01.01.01.03}}");
        let Reading::Ask(a) = read(
            &files,
            "/x.y/z/2020/01.01.01.00+(es)/a/b.pdf?ibiurl.verblist=GetFileList&x=1",
        ) else {
            panic!("no next round");
        };
        assert_eq!(
            a.url.to_string(),
            "/x.y/z/2020/01.01.01.03/a/b.pdf?ibiurl.verblist=GetFileList&x=1"
        );
        assert_eq!(a.url.verblist_text(), "GetFileList");
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
    fn an_answer_offering_thousands_of_translations_is_read_as_far_as_any_item_has() {
        let mut answer = "archiveaddress a\r\nibi {rep x.y/z/2020/01.01.01.00}\r\n".to_string();
        let mut n = 0;
        for a in b'a'..=b'z' {
            for b in b'a'..=b'z' {
                for c in [b'A', b'B', b'C'] {
                    let lang = format!("{}{}-{}{}", a as char, b as char, c as char, c as char);
                    answer.push_str(&format!("url.translation({lang}) http://a/{n}\r\n"));
                    n += 1;
                }
            }
        }
        assert!(n > MAX_VARIANTS * 7, "{n}");
        let Reading::Offers(o) = read(&answer, "/x.y/z/2020/01.01.01.00+") else {
            panic!("not offers");
        };
        assert_eq!(o.variants.len(), MAX_VARIANTS);
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
