//! Resolution (§8.2, Figure 8.1): the urlRequest of Table 8.9 to every included Archive at
//! once, the analysis of their answers, new rounds for next editions, and the
//! acknowledgment of Table 8.11.
//!
//! - Without `requireditemstatus`, the first non-empty answer that satisfies the request
//!   decides, without waiting for the others: it holds the URL asked for, or (for a
//!   relation through the last edition) `ibi.nextedition`, which starts a new round for
//!   that IBI (Example 10.2). At most [`MAX_ROUNDS`] rounds, and no IBI twice.
//! - With `requireditemstatus=Original` every answer is awaited: exactly one Archive may
//!   claim the Original; two or more are under suspicion (409); and while an Archive did
//!   not answer (dormant, failed, overloaded, not asked) the check is not made (503).
//!   An answer without `state` claims nothing.
//! - A bare translation (`+`, `GetTranslation`) picks among the `.translation(xx[-YY])`
//!   URLs by the reader's languages, else the item in its own language (Example 8.3).
//! - Only an absolute `http`/`https` URL with a `//` authority, no user information and
//!   only visible ASCII is ever taken ([`usable_location`]); anything else an Archive
//!   answers counts as no URL.
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

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ibi_archive::ibi::Ibi;
use ibi_archive::pairs;
use ibi_archive::persistent::PersistentUrl;
use ibi_archive::relation::{Lang, Relation, Step};
use serde::Serialize;

use crate::client::{ArchiveClient, Fetched};
use crate::health::{self, Health, HealthBook};
use crate::lang;
use crate::log::{complain, say};
use crate::memory::{Conflict, LocationMemory};
use crate::metrics::Metrics;
use crate::registry::{ibi_key, Included};

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
    pub asked: Vec<Asked>,
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
    /// No included Archive knows the IBI (or none answered).
    NotFound { unanswered: usize, asked: usize },
    /// `+(xx)` asked and the item is here, but without that translation.
    NoTranslation { language: String },
    /// The item was found only as a tombstone.
    Deleted { date: String },
    /// `requireditemstatus=Original` and two or more Archives claim the Original.
    Suspicion { archives: Vec<String> },
    /// `requireditemstatus=Original` and only copies answered.
    NoOriginal { copies: Vec<String> },
    /// `requireditemstatus=Original` while these Archives did not answer: the check
    /// cannot be made now.
    Unverifiable { archives: Vec<String> },
    /// The next editions loop or go on past [`MAX_ROUNDS`].
    EditionChain { detail: String },
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
    pub state: Option<String>,
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
        self.state.as_deref() == Some("Original")
    }
}

/// What one answer says about the request.
#[derive(Clone, Debug)]
enum Reading {
    Satisfies(Found),
    NextEdition(Ibi),
    /// A bare translation with no variant the reader prefers and none in the item's own
    /// language: ask again without the translation step.
    OwnLanguage(usize),
    Deleted(String),
    /// Here, but nothing for this request.
    Here,
    Empty,
    Invalid(String),
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
            Reading::NextEdition(_) | Reading::OwnLanguage(_) => Said::Holds { original: false },
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

/// What a round gave.
struct Ended {
    round: Round,
    next: Next,
    /// What each Archive said of the item, by the time the round decided.
    said: Vec<Said>,
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
        let mut rounds = Vec::new();
        let mut current = url.clone();
        let mut seen = HashSet::new();
        let outcome = loop {
            if seen.len() == MAX_ROUNDS {
                break Outcome::EditionChain {
                    detail: format!("more than {MAX_ROUNDS} rounds"),
                };
            }
            if !seen.insert((ibi_key(current.ibi()), current.verblist_text())) {
                break Outcome::EditionChain {
                    detail: format!("{} comes back in its own edition chain", current.ibi()),
                };
            }
            let next = self
                .step(&archives, &current, reader, writes, budget, &mut rounds)
                .await;
            match next {
                Next::Done(outcome) => break outcome,
                Next::Edition(ibi) => current = current.with_ibi(ibi),
                Next::Untranslated(i) => current = current.without_translation_at(i),
            }
        };
        Trace {
            persistent_url: persistent_url(&self.publicurl_with_port, url),
            rounds,
            outcome,
            conflicts: self.memory.conflicts_of(&ibi_key(url.ibi())),
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
            pairs.push(("state", state.as_bytes()));
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
        writes: bool,
        budget: &dyn Budget,
        rounds: &mut Vec<Round>,
    ) -> Next {
        if url.requires_original() {
            if let Err(retry_after) = budget.fan_out() {
                return Next::Done(Outcome::Throttled { retry_after });
            }
            let ended = self.round(archives, url, reader, Ask::default()).await;
            rounds.push(ended.round);
            return ended.next;
        }
        let key = ibi_key(url.ibi());
        // Only a resolution of the IBI itself may make or change an entry.
        let may_remember =
            writes && self.memory.enabled() && url.filepath().is_none() && url.verbs().is_empty();
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
            .of(&holder.serviceibi, || holder.recorded.clone())
            .is_dormant();
        let mut said = Said::Silent;
        let mut result = AskResult::Dormant;
        let mut alone: Option<Next> = None;
        if !dormant {
            let mut ended = self
                .round(std::slice::from_ref(holder), url, reader, Ask::default())
                .await;
            ended.round.remembered = true;
            result = ended.round.asked[0].result;
            rounds.push(ended.round);
            if ended.next.satisfied() {
                self.metrics.memory("hit");
                return ended.next;
            }
            said = ended.said[0];
            alone = Some(ended.next);
        }
        self.metrics.memory("stale");
        if said == Said::Gone && writes {
            // It answered that the item is not there: the one reason to replace an entry.
            self.memory.forget(&key, Some(&holder.key));
        }
        // The remembered Archive did not satisfy the request: every other one is asked,
        // and it again only when it failed at once (a moment of overload may be over): one
        // that answered, timed out or was overloaded was heard, or waited for, enough.
        let again = result == AskResult::Failed;
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
            // Nobody else has it: what the remembered Archive said stands (a tombstone,
            // or the item without the translation asked for).
            (
                Next::Done(Outcome::NotFound { .. }),
                Some(Next::Done(first @ (Outcome::Deleted { .. } | Outcome::NoTranslation { .. }))),
            ) => Next::Done(first),
            (Next::Done(Outcome::NotFound { unanswered, asked }), _) if !again => {
                Next::Done(Outcome::NotFound {
                    unanswered: unanswered + usize::from(said == Said::Silent),
                    asked: asked + 1,
                })
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
        let ips = ip_list(&reader.ips);
        let mut asked: Vec<Asked> = archives
            .iter()
            .map(|a| Asked {
                archive: a.serviceibi.clone(),
                address: a.address.clone(),
                result: AskResult::NotAwaited,
                detail: None,
                pairs: Vec::new(),
                ms: 0.0,
            })
            .collect();
        let mut said = vec![Said::Waiting; archives.len()];
        let healths: Vec<Arc<Health>> = archives
            .iter()
            .map(|a| self.health.of(&a.serviceibi, || a.recorded.clone()))
            .collect();
        let ledger = Ledger {
            metrics: self.metrics.clone(),
            dormant_after: self.dormant_after,
            counted: ask.counted.map(str::to_string),
        };
        let mut unanswered = 0;
        let mut requests: Vec<(usize, String)> = Vec::with_capacity(archives.len());
        for (i, a) in archives.iter().enumerate() {
            if healths[i].is_dormant() {
                asked[i].result = AskResult::Dormant;
                said[i] = Said::Silent;
                unanswered += 1;
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
            match self.client.service_url(&a.address, &a.serviceibi, &pairs) {
                Ok(request) => requests.push((i, request)),
                Err(e) => {
                    // Not asked (for the Original check), but no outage either: its
                    // address is one the resolver may not contact.
                    asked[i].result = AskResult::Refused;
                    asked[i].detail = Some(e);
                    said[i] = Said::Silent;
                }
            }
        }
        // At most WINDOW of the round's requests under way at once, the next one sent as
        // each ends: a round over thousands of Archives goes in waves, and one resolution
        // does not take every request the client allows at once (client::UNDER_WAY).
        let mut tasks = tokio::task::JoinSet::new();
        let send = |tasks: &mut tokio::task::JoinSet<_>, (i, request): (usize, String)| {
            let client = self.client.clone();
            let timeout = self.timeout;
            tasks.spawn(async move {
                let (fetched, took) = client.get(&request, timeout).await;
                (i, fetched, took)
            });
        };
        let mut requests = requests.into_iter();
        for request in requests.by_ref().take(WINDOW) {
            send(&mut tasks, request);
        }
        let original = url.requires_original();
        let mut claims: Vec<Found> = Vec::new();
        let mut next_edition: Option<Ibi> = None;
        let mut untranslated: Option<usize> = None;
        let mut deleted: Option<String> = None;
        let mut here = false;
        // Answers that would decide, in the order they came.
        let mut candidates: Vec<(usize, Next)> = Vec::new();
        let mut decided: Option<usize> = None;
        while let Some(joined) = tasks.join_next().await {
            if let Some(request) = requests.next() {
                send(&mut tasks, request);
            }
            let Ok((i, fetched, took)) = joined else {
                continue;
            };
            let a = &mut asked[i];
            a.ms = ms(took);
            let archive = &archives[i].serviceibi;
            said[i] = Said::Silent;
            let reading = match fetched {
                Fetched::Busy => {
                    a.result = AskResult::Busy;
                    unanswered += 1;
                    self.metrics.archive_request(archive, "not_sent", took);
                    None
                }
                Fetched::Overloaded(why) => {
                    // The Archive works; it has more to do than it takes: not toward its
                    // dormancy (but see Health::overloaded).
                    a.result = AskResult::Overloaded;
                    a.detail = Some(why);
                    unanswered += 1;
                    ledger.overloaded(archive, &healths[i], took);
                    None
                }
                Fetched::TimedOut => {
                    a.result = AskResult::TimedOut;
                    unanswered += 1;
                    ledger.failed(archive, &healths[i], "timed_out", took);
                    None
                }
                Fetched::Failed(why) => {
                    a.result = AskResult::Failed;
                    a.detail = Some(why);
                    unanswered += 1;
                    ledger.failed(archive, &healths[i], "failed", took);
                    None
                }
                Fetched::Body(body) => {
                    let (reading, shown) = read_answer(&body, url, &reader.languages, &archives[i]);
                    a.pairs = shown;
                    if let Reading::Invalid(_) = reading {
                        ledger.failed(archive, &healths[i], "failed", took);
                    } else {
                        ledger.answered(archive, &healths[i], took);
                    }
                    Some(reading)
                }
            };
            let Some(reading) = reading else {
                if !original {
                    decided = decide(&candidates, &said, ask.incumbent);
                    if decided.is_some() {
                        break;
                    }
                }
                continue;
            };
            a.result = AskResult::Answered;
            said[i] = reading.said();
            let decides = match reading {
                Reading::Satisfies(found) if original => {
                    claims.push(found);
                    None
                }
                Reading::Satisfies(found) => Some(Next::Done(Outcome::Found(found))),
                Reading::NextEdition(ibi) if original => {
                    next_edition.get_or_insert(ibi);
                    None
                }
                Reading::NextEdition(ibi) => Some(Next::Edition(ibi)),
                Reading::OwnLanguage(step) if original => {
                    untranslated.get_or_insert(step);
                    None
                }
                Reading::OwnLanguage(step) => Some(Next::Untranslated(step)),
                Reading::Deleted(date) => {
                    deleted.get_or_insert(date);
                    None
                }
                Reading::Here => {
                    here = true;
                    None
                }
                Reading::Empty => {
                    a.result = AskResult::Empty;
                    None
                }
                Reading::Invalid(why) => {
                    a.result = AskResult::Failed;
                    a.detail = Some(why);
                    unanswered += 1;
                    None
                }
            };
            if let Some(next) = decides {
                candidates.push((i, next));
            }
            if !original {
                decided = decide(&candidates, &said, ask.incumbent);
                if decided.is_some() {
                    break;
                }
            }
        }
        if !original && decided.is_none() {
            // Every answer is in and the incumbent did not satisfy: the first that did.
            decided = candidates.first().map(|(i, _)| *i);
        }
        let deciding: Option<(usize, Next)> = decided.and_then(|d| {
            let at = candidates.iter().position(|(i, _)| *i == d)?;
            Some(candidates.swap_remove(at))
        });
        // What outlives the round (the requests still under way, the admission) shares
        // one copy of its Archives.
        let owned: Option<Arc<[Included]>> =
            (ask.admit.is_some() || !tasks.is_empty()).then(|| Arc::from(archives));
        let admission = ask
            .admit
            .zip(owned.clone())
            .map(|(admit, archives)| Admission {
                admit,
                archives,
                said: said.clone(),
                memory: self.memory.clone(),
                metrics: self.metrics.clone(),
            });
        // The requests still under way end in the background, each within the timeout:
        // cut off, their connections could not be used again, and the next resolution
        // would open new ones. What they get counts toward their Archives' health, and
        // toward what the memory learns, not toward this resolution.
        match (owned, admission) {
            (Some(archives), mut admission) if !tasks.is_empty() => {
                let (url, languages) = (url.clone(), reader.languages.clone());
                tokio::spawn(async move {
                    while let Some(joined) = tasks.join_next().await {
                        let Ok((i, fetched, took)) = joined else {
                            continue;
                        };
                        let (archive, health) = (&archives[i], &healths[i]);
                        let name = &archive.serviceibi;
                        let heard = match fetched {
                            Fetched::Body(body) => {
                                // Read whole only when the memory is to learn from it.
                                let heard = match &admission {
                                    Some(_) => {
                                        read_answer(&body, &url, &languages, archive).0.said()
                                    }
                                    None if is_answer(&body) => Said::Here,
                                    None => Said::Silent,
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
                            Fetched::Busy => Said::Silent,
                        };
                        if let Some(a) = &mut admission {
                            a.said[i] = heard;
                        }
                    }
                    if let Some(admission) = admission {
                        admission.settle();
                    }
                });
            }
            (_, Some(admission)) => admission.settle(),
            _ => {}
        }
        let round = Round {
            ibi: url.ibi().as_str().to_string(),
            verblist,
            remembered: false,
            asked,
        };
        let ended = |next: Next, said: Vec<Said>| Ended { round, next, said };
        if let Some((_, next)) = deciding {
            return ended(next, said);
        }
        if original {
            // The check is made only once every included Archive said what it holds.
            let silent: Vec<String> = said
                .iter()
                .zip(archives)
                .filter(|(s, _)| matches!(s, Said::Silent | Said::Waiting))
                .map(|(_, a)| format!("{} ({})", a.address, a.serviceibi))
                .collect();
            if !silent.is_empty() {
                return ended(Next::Done(Outcome::Unverifiable { archives: silent }), said);
            }
        }
        if original && !claims.is_empty() {
            let originals: Vec<&Found> = claims.iter().filter(|f| f.claims_original()).collect();
            let next = match originals.as_slice() {
                [one] => Outcome::Found((*one).clone()),
                [] => Outcome::NoOriginal {
                    copies: claims.iter().map(|f| f.address.clone()).collect(),
                },
                many => Outcome::Suspicion {
                    archives: many
                        .iter()
                        .map(|f| format!("{} ({})", f.address, f.archive))
                        .collect(),
                },
            };
            return ended(Next::Done(next), said);
        }
        if let Some(ibi) = next_edition {
            return ended(Next::Edition(ibi), said);
        }
        if let Some(step) = untranslated {
            return ended(Next::Untranslated(step), said);
        }
        let outcome = if let Some(date) = deleted {
            Outcome::Deleted { date }
        } else if let (true, Some(language)) = (here, explicit_translation(url.relation())) {
            Outcome::NoTranslation { language }
        } else {
            Outcome::NotFound {
                unanswered,
                asked: archives.len(),
            }
        };
        ended(Next::Done(outcome), said)
    }
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
        self.metrics.conflict(&claimant.serviceibi);
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
    dormant_after: u32,
    /// The Archive whose failure in this step is counted already: not counted again.
    counted: Option<String>,
}

impl Ledger {
    /// A request to `archive` answered after `took`.
    fn answered(&self, archive: &str, health: &Health, took: Duration) {
        self.metrics.archive_request(archive, "answered", took);
        if health.success(took) == health::Change::Woke {
            say(&format!("{archive} answers again: asked again"));
        }
    }

    /// A request to `archive` was answered 503 or 429 until the timeout: counted apart,
    /// and toward dormancy only when it lasts (see [`Health::overloaded`]).
    fn overloaded(&self, archive: &str, health: &Health, took: Duration) {
        self.metrics.archive_request(archive, "overloaded", took);
        if health.overloaded(self.dormant_after) == health::Change::FellDormant {
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
    Edition(Ibi),
    Untranslated(usize),
}

impl Next {
    /// An answer that satisfied the request (a URL, or where to ask next).
    fn satisfied(&self) -> bool {
        matches!(
            self,
            Next::Done(Outcome::Found(_)) | Next::Edition(_) | Next::Untranslated(_)
        )
    }
}

/// `url` as the resolver read it, after `base`: its path, and of its query only the
/// `ibiurl.*` pairs (the reader's other pairs are the reader's: they reach neither the
/// Archives' acknowledgments nor the pages).
fn persistent_url(base: &str, url: &PersistentUrl) -> String {
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
    languages: &[Lang],
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
        .map(|(n, w)| {
            let v = if n == "urlkey" {
                "(hidden)".to_string()
            } else {
                w.join(" ")
            };
            (n.clone(), v)
        })
        .collect();
    (read_pairs(&list, url, languages, archive), shown)
}

fn read_pairs(
    list: &[(String, Vec<String>)],
    url: &PersistentUrl,
    languages: &[Lang],
    archive: &Included,
) -> Reading {
    let get = |name: &str| list.iter().find(|(n, _)| n == name).map(|(_, w)| w);
    let wanted = url.relation().steps();
    // Every `url<relation>` pair that answers the request: exact, or with a language at
    // a bare translation's place.
    let mut candidates: Vec<(Option<Lang>, String, &str)> = Vec::new();
    for (name, words) in list {
        let Some(rest) = name.strip_prefix("url") else {
            continue;
        };
        if rest.starts_with('.') || rest.is_empty() {
            let Ok(rel) = Relation::parse(rest) else {
                continue;
            };
            if let (Some(lang), [value]) = (matches(wanted, rel.steps()), words.as_slice()) {
                candidates.push((lang, rest.to_string(), value.as_str()));
            }
        }
    }
    let bare = url.relation().bare_translation_at();
    let chosen = match bare {
        None => candidates.first(),
        Some(step) if !candidates.is_empty() => {
            let by_lang: Vec<(Lang, usize)> = candidates
                .iter()
                .enumerate()
                .filter_map(|(i, (l, _, _))| l.clone().map(|l| (l, i)))
                .collect();
            match lang::choose(languages, &by_lang) {
                Some((_, i)) => candidates.get(*i),
                None => {
                    // The item's own language: the variant that is the item itself.
                    let own_rep = get("ibi").and_then(|w| rep_of(w));
                    let own = candidates.iter().find(|(_, suffix, _)| {
                        own_rep.is_some()
                            && get(&format!("ibi{suffix}")).and_then(|w| rep_of(w)) == own_rep
                    });
                    match own {
                        Some(c) => Some(c),
                        None => return Reading::OwnLanguage(step),
                    }
                }
            }
        }
        Some(_) => None,
    };
    if let Some((lang, suffix, value)) = chosen {
        if usable_location(value) {
            let word = |n: &str| {
                get(&format!("{n}{suffix}"))
                    .and_then(|w| w.first())
                    .cloned()
            };
            let metadata = url
                .relation()
                .steps()
                .iter()
                .any(|s| matches!(s, Step::Metadata { .. }));
            return Reading::Satisfies(Found {
                url: value.to_string(),
                archive: archive.serviceibi.clone(),
                address: archive.address.clone(),
                contenttype: word("contenttype")
                    .unwrap_or_else(|| if metadata { "Metadata" } else { "Data" }.into()),
                state: word("state"),
                ibi: get(&format!("ibi{suffix}")).map(|w| w.join(" ")),
                urlkey: get("urlkey").and_then(|w| w.first()).cloned(),
                language: lang.as_ref().map(|l| l.to_string()),
            });
        }
    }
    if url.relation().involves_last_edition() {
        if let Some(next) = get("ibi.nextedition").and_then(|w| ibi_of(w)) {
            return Reading::NextEdition(next);
        }
    }
    if get("state").and_then(|w| w.first()).map(String::as_str) == Some("Deleted") {
        let date = get("timestamp")
            .and_then(|w| w.first())
            .cloned()
            .unwrap_or_default();
        return Reading::Deleted(date);
    }
    Reading::Here
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
fn rep_of(words: &[String]) -> Option<&str> {
    words
        .windows(2)
        .find(|w| w[0] == "rep")
        .map(|w| w[1].as_str())
}

/// The IBI of a value of the `formas-de-ibi` rule: the rep when given, else the IBIp.
fn ibi_of(words: &[String]) -> Option<Ibi> {
    let form = |tag: &str| {
        words
            .windows(2)
            .find(|w| w[0] == tag)
            .and_then(|w| Ibi::parse(&w[1]).ok())
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
            serviceibi: "sid.inpe.br/mtc-m18@80/2008/03.17.15.17".into(),
            address: "mtc-m16c.sid.inpe.br".into(),
            recorded: Default::default(),
        }
    }

    fn read(answer: &str, path: &str, accept: &str) -> Reading {
        let (p, q) = match path.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (path, None),
        };
        let url = PersistentUrl::parse(p, q).unwrap();
        let list = pairs::parse(answer).unwrap();
        read_pairs(&list, &url, &lang::preferences(Some(accept)), &archive())
    }

    /// The first answer of Example 10.1.
    const EXAMPLE_10_1: &str = "archiveaddress mtc-m16c.sid.inpe.br\r\ncontenttype Data\r\nibi {rep sid.inpe.br/mtc-m18@80/2009/07.21.14.43 ibip 8JMKD3MGP8W/35MMLL8}\r\nibi.archiveservice {rep sid.inpe.br/mtc-m18@80/2008/03.17.15.17}\r\nibi.platformsoftware {rep dpi.inpe.br/banon/1998/08.02.08.56}\r\nstate Original\r\ntimestamp 2009-07-21T14:43:31Z\r\nurl http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf\r\nurlkey 1427244889-5349022633744855";

    #[test]
    fn example_10_1_answer_satisfies_and_its_acknowledgment_is_table_8_11() {
        let Reading::Satisfies(found) = read(EXAMPLE_10_1, "/8JMKD3MGP8W/35MMLL8", "") else {
            panic!()
        };
        assert_eq!(found.url, "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf");
        assert_eq!(
            (found.contenttype.as_str(), found.state.as_deref()),
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
        let Reading::Satisfies(found) = read(&answer, "/8JMKD3MGP8W/35MMLL8", "") else {
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
        let found = |i: usize| {
            (
                i,
                Next::Edition(Ibi::parse(&format!("x.y/z/2010/01.02.03.0{i}")).unwrap()),
            )
        };
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
        let path = dir.join("r.sqlite");
        crate::registry::Registry::open(&path).unwrap();
        let memory = Arc::new(LocationMemory::open(&path, 10, Duration::from_secs(60)).unwrap());
        if let Some(archive) = remembered {
            memory.remember("ibi", archive);
        }
        let archives = ["a", "b", "c"]
            .iter()
            .map(|k| Included {
                key: format!("{k}.example/www/2020/01.01.01.01"),
                serviceibi: format!("{k}.example/www/2020/01.01.01.01"),
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
        let pick = |accept: &str| match read(EXAMPLE_9_3, "/8JMKD3MGP8W/35MME4E+", accept) {
            Reading::Satisfies(f) => f.language.unwrap(),
            other => panic!("{other:?}"),
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
            read(&answer, "/8JMKD3MGP8W/35MMLL8", ""),
            Reading::Here
        ));
    }

    #[test]
    fn a_tombstone_reads_as_deleted_with_its_date() {
        let answer = "archiveaddress a\r\nibi {rep x.y/z/2010/01.02.03.04}\r\nstate Deleted\r\ntimestamp 2020-05-06T07:08:09Z";
        match read(answer, "/x.y/z/2010/01.02.03.04", "") {
            Reading::Deleted(d) => assert_eq!(d, "2020-05-06T07:08:09Z"),
            other => panic!("{other:?}"),
        }
    }
}
