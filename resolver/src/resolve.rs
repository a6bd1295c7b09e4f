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
use crate::log::say;
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
enum Heard {
    /// Nothing yet.
    Waiting,
    /// Its answer satisfied the request.
    Satisfied,
    /// It does not hold the item (empty), or holds its tombstone.
    Gone,
    /// It holds the item, without what was asked (a file, a relation).
    Here,
    /// No answer: failed, timed out, overloaded, dormant, not sent.
    Silent,
}

/// How a round is to be run besides its Archives.
#[derive(Clone, Default)]
struct Ask<'a> {
    /// An Archive whose failure is already counted in this step: not counted again.
    counted: Option<&'a str>,
    /// The Archive (index) whose answer is awaited before any decides, and preferred
    /// when it satisfies: the remembered one, being verified.
    incumbent: Option<usize>,
    /// The IBI's key when conflicts with the deciding answer are to be recorded.
    watch: Option<String>,
}

/// What a round gave.
struct Ended {
    round: Round,
    next: Next,
    /// The Archive (index) whose answer decided, if one did.
    decider: Option<usize>,
    /// What each Archive said of the item.
    heard: Vec<Heard>,
}

impl Engine {
    /// Resolves `url` for `reader` over `archives`. `writes`: whether the location memory
    /// may learn from it (not for the inspection view).
    pub async fn resolve(
        &self,
        archives: Arc<Vec<Included>>,
        url: &PersistentUrl,
        reader: &Reader,
        writes: bool,
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
                .step(&archives, &current, reader, writes, &mut rounds)
                .await;
            match next {
                Next::Done(outcome) => break outcome,
                Next::Edition(ibi) => current = current.with_ibi(ibi),
                Next::Untranslated(i) => current = current.without_translation_at(i),
            }
        };
        Trace {
            persistent_url: format!("{}{}", self.publicurl_with_port, url),
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
    /// then the memory kept by the rules of the module's header. Never the memory for
    /// `requireditemstatus=Original`, which weighs every Archive's answer.
    async fn step(
        &self,
        archives: &[Included],
        url: &PersistentUrl,
        reader: &Reader,
        writes: bool,
        rounds: &mut Vec<Round>,
    ) -> Next {
        if url.requires_original() {
            let ended = self.round(archives, url, reader, Ask::default()).await;
            rounds.push(ended.round);
            return ended.next;
        }
        let key = ibi_key(url.ibi());
        // Only a resolution of the IBI itself may make or replace an entry.
        let may_remember = writes && url.filepath().is_none() && url.verbs().is_empty();
        let watch = may_remember.then(|| key.clone());
        // The inspection view reads the memory without marking anything used.
        let recalled = if writes {
            self.memory.recall(&key)
        } else {
            self.memory.peek(&key)
        };
        let holder = recalled
            .as_ref()
            .and_then(|r| archives.iter().position(|a| *a.serviceibi == *r.archive));
        let Some((recalled, h)) = recalled.clone().zip(holder) else {
            if let (Some(r), true) = (&recalled, writes) {
                // Its Archive is no longer included: the entry is of no use.
                self.memory.forget(&key, Some(&r.archive));
            }
            self.metrics
                .memory(if recalled.is_some() { "stale" } else { "miss" });
            let ended = self
                .round(
                    archives,
                    url,
                    reader,
                    Ask {
                        watch,
                        ..Ask::default()
                    },
                )
                .await;
            rounds.push(ended.round);
            if may_remember {
                self.remember_decider(&key, archives, &ended.next, ended.decider);
            }
            return ended.next;
        };
        let holder = &archives[h];
        if !recalled.fresh {
            // Verified by every Archive, the remembered one awaited and preferred.
            self.metrics.memory("verify");
            let ended = self
                .round(
                    archives,
                    url,
                    reader,
                    Ask {
                        incumbent: Some(h),
                        watch,
                        ..Ask::default()
                    },
                )
                .await;
            rounds.push(ended.round);
            if may_remember {
                match ended.heard[h] {
                    Heard::Satisfied if ended.decider == Some(h) => {
                        self.memory.verified(&key, &holder.serviceibi)
                    }
                    Heard::Gone => {
                        self.memory.forget(&key, Some(&holder.serviceibi));
                        self.remember_decider(&key, archives, &ended.next, ended.decider);
                    }
                    // It did not answer, or holds the item without satisfying this
                    // request: the entry stays, stale, verified again next time.
                    _ => {}
                }
            }
            return ended.next;
        }
        let dormant = self
            .health
            .of(&holder.serviceibi, || holder.recorded.clone())
            .is_dormant();
        let mut heard = Heard::Silent;
        if !dormant {
            let mut ended = self
                .round(std::slice::from_ref(holder), url, reader, Ask::default())
                .await;
            ended.round.remembered = true;
            rounds.push(ended.round);
            if ended.next.satisfied() {
                self.metrics.memory("hit");
                return ended.next;
            }
            heard = ended.heard[0];
        }
        self.metrics.memory("stale");
        // The remembered Archive did not satisfy the request: every other one is asked
        // (it too when it did not answer: this may have been a moment of overload). The
        // entry is replaced only when it said the item is not there.
        let answered = matches!(heard, Heard::Gone | Heard::Here);
        let others: Vec<Included>;
        let asked_now: &[Included] = if answered {
            others = archives
                .iter()
                .filter(|a| a.serviceibi != holder.serviceibi)
                .cloned()
                .collect();
            &others
        } else {
            archives
        };
        let counted = (!dormant).then_some(holder.serviceibi.as_str());
        let mut ended = self
            .round(
                asked_now,
                url,
                reader,
                Ask {
                    counted,
                    ..Ask::default()
                },
            )
            .await;
        rounds.push(ended.round);
        if let (true, Next::Done(Outcome::NotFound { asked, .. })) = (answered, &mut ended.next) {
            *asked += 1;
        }
        if heard == Heard::Gone && writes {
            self.memory.forget(&key, Some(&holder.serviceibi));
            if may_remember {
                self.remember_decider(&key, asked_now, &ended.next, ended.decider);
            }
        }
        ended.next
    }

    /// Remembers the Archive whose answer decided, when it found the item.
    fn remember_decider(
        &self,
        key: &str,
        archives: &[Included],
        next: &Next,
        decider: Option<usize>,
    ) {
        if let (Next::Done(Outcome::Found(_)), Some(i)) = (next, decider) {
            self.memory.remember(key, &archives[i].serviceibi);
        }
    }

    /// One round: the urlRequest to every Archive given (but dormant ones), answers read
    /// as they come, until one decides (the incumbent's, when it satisfies, once it is
    /// in) or all are in.
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
        let mut heard = vec![Heard::Waiting; archives.len()];
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
                heard[i] = Heard::Silent;
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
                    heard[i] = Heard::Silent;
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
            heard[i] = Heard::Silent;
            let reading = match fetched {
                Fetched::Busy => {
                    a.result = AskResult::Busy;
                    unanswered += 1;
                    self.metrics.archive_request(archive, "not_sent", took);
                    None
                }
                Fetched::Overloaded(why) => {
                    // The Archive works; it has more to do than it takes: never toward
                    // its dormancy.
                    a.result = AskResult::Overloaded;
                    a.detail = Some(why);
                    unanswered += 1;
                    self.metrics.archive_request(archive, "overloaded", took);
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
            if let Some(reading) = reading {
                a.result = AskResult::Answered;
                heard[i] = Heard::Here;
                let decides = match reading {
                    Reading::Satisfies(found) if original => {
                        heard[i] = Heard::Satisfied;
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
                        heard[i] = Heard::Gone;
                        deleted.get_or_insert(date);
                        None
                    }
                    Reading::Here => {
                        here = true;
                        None
                    }
                    Reading::Empty => {
                        a.result = AskResult::Empty;
                        heard[i] = Heard::Gone;
                        None
                    }
                    Reading::Invalid(why) => {
                        a.result = AskResult::Failed;
                        a.detail = Some(why);
                        heard[i] = Heard::Silent;
                        unanswered += 1;
                        None
                    }
                };
                if let Some(next) = decides {
                    heard[i] = Heard::Satisfied;
                    candidates.push((i, next));
                }
            }
            if !original {
                decided = decide(&candidates, &heard, ask.incumbent);
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
        // The holder a later or earlier claim of the Original contradicts.
        let watch = match (&ask.watch, &deciding) {
            (Some(key), Some((d, Next::Done(Outcome::Found(f)))))
                if f.claims_original() && self.memory.enabled() =>
            {
                Some(Watch {
                    key: key.clone(),
                    holder: archives[*d].clone(),
                    memory: self.memory.clone(),
                    metrics: self.metrics.clone(),
                })
            }
            _ => None,
        };
        if let Some(w) = &watch {
            for (c, next) in &candidates {
                if let Next::Done(Outcome::Found(f)) = next {
                    w.claim(&archives[*c], f);
                }
            }
        }
        // The requests still under way end in the background, each within the timeout:
        // cut off, their connections could not be used again, and the next resolution
        // would open new ones. What they get counts toward their Archives' health (and
        // toward conflicts), not toward this resolution.
        if !tasks.is_empty() {
            let archives: Vec<(Included, Arc<Health>)> =
                archives.iter().cloned().zip(healths).collect();
            let (url, languages) = (url.clone(), reader.languages.clone());
            tokio::spawn(async move {
                while let Some(joined) = tasks.join_next().await {
                    let Ok((i, fetched, took)) = joined else {
                        continue;
                    };
                    let (archive, health) = &archives[i];
                    let name = &archive.serviceibi;
                    match fetched {
                        Fetched::Body(body) if is_answer(&body) => {
                            ledger.answered(name, health, took);
                            if let Some(w) = &watch {
                                if let (Reading::Satisfies(f), _) =
                                    read_answer(&body, &url, &languages, archive)
                                {
                                    w.claim(archive, &f);
                                }
                            }
                        }
                        Fetched::Body(_) | Fetched::Failed(_) => {
                            ledger.failed(name, health, "failed", took)
                        }
                        Fetched::TimedOut => ledger.failed(name, health, "timed_out", took),
                        Fetched::Overloaded(_) => {
                            ledger.metrics.archive_request(name, "overloaded", took)
                        }
                        Fetched::Busy => {}
                    }
                }
            });
        }
        let round = Round {
            ibi: url.ibi().as_str().to_string(),
            verblist,
            remembered: false,
            asked,
        };
        let ended = |next: Next, decider: Option<usize>, heard: Vec<Heard>| Ended {
            round,
            next,
            decider,
            heard,
        };
        if let Some((d, next)) = deciding {
            return ended(next, Some(d), heard);
        }
        if original {
            // The check is made only once every included Archive said what it holds.
            let silent: Vec<String> = heard
                .iter()
                .zip(archives)
                .filter(|(h, _)| matches!(h, Heard::Silent | Heard::Waiting))
                .map(|(_, a)| format!("{} ({})", a.address, a.serviceibi))
                .collect();
            if !silent.is_empty() {
                return ended(
                    Next::Done(Outcome::Unverifiable { archives: silent }),
                    None,
                    heard,
                );
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
            return ended(Next::Done(next), None, heard);
        }
        if let Some(ibi) = next_edition {
            return ended(Next::Edition(ibi), None, heard);
        }
        if let Some(step) = untranslated {
            return ended(Next::Untranslated(step), None, heard);
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
        ended(Next::Done(outcome), None, heard)
    }
}

/// The answer (index) that decides a round now, if one does: without an incumbent, the
/// first that satisfied; with one, none before it is heard, then its own when it
/// satisfied, else the first.
fn decide(
    candidates: &[(usize, Next)],
    heard: &[Heard],
    incumbent: Option<usize>,
) -> Option<usize> {
    match incumbent {
        Some(inc) if heard[inc] == Heard::Waiting => None,
        Some(inc) => candidates
            .iter()
            .find(|(i, _)| *i == inc)
            .or(candidates.first())
            .map(|(i, _)| *i),
        None => candidates.first().map(|(i, _)| *i),
    }
}

/// Claims of the Original that contradict the Archive whose answer decided (remembered,
/// or about to be): each a conflict, counted, the first of each logged. The holder keeps
/// the entry.
struct Watch {
    key: String,
    holder: Included,
    memory: Arc<LocationMemory>,
    metrics: Arc<Metrics>,
}

impl Watch {
    fn claim(&self, claimant: &Included, found: &Found) {
        if claimant.serviceibi == self.holder.serviceibi || !found.claims_original() {
            return;
        }
        self.metrics.conflict(&claimant.serviceibi);
        let conflict = Conflict {
            ibi: self.key.clone(),
            holder: self.holder.serviceibi.clone(),
            claimant: claimant.serviceibi.clone(),
        };
        if self.memory.conflict(conflict) {
            say(&format!(
                "conflict: {} ({}) claims the Original of {}, which {} ({}) holds: {} keeps it",
                claimant.serviceibi,
                claimant.address,
                self.key,
                self.holder.serviceibi,
                self.holder.address,
                self.holder.serviceibi
            ));
        }
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
    fn the_incumbent_is_awaited_and_preferred() {
        let found = |i: usize| {
            (
                i,
                Next::Edition(Ibi::parse(&format!("x.y/z/2010/01.02.03.0{i}")).unwrap()),
            )
        };
        use Heard::*;
        // Without an incumbent: the first that satisfied.
        assert_eq!(
            decide(
                &[found(2), found(0)],
                &[Satisfied, Waiting, Satisfied],
                None
            ),
            Some(2)
        );
        assert_eq!(decide(&[], &[Waiting, Here], None), None);
        // With one: nothing before it is heard, however many others satisfied.
        assert_eq!(
            decide(&[found(2)], &[Waiting, Here, Satisfied], Some(0)),
            None
        );
        // Its own answer once it satisfied, even when it came last.
        assert_eq!(
            decide(
                &[found(2), found(0)],
                &[Satisfied, Here, Satisfied],
                Some(0)
            ),
            Some(0)
        );
        // Heard without satisfying (gone, silent): the first other.
        assert_eq!(
            decide(&[found(2)], &[Gone, Here, Satisfied], Some(0)),
            Some(2)
        );
        assert_eq!(
            decide(&[found(2)], &[Silent, Here, Satisfied], Some(0)),
            Some(2)
        );
    }

    #[test]
    fn example_10_2_first_answer_names_the_next_edition() {
        let first = "archiveaddress mtc-m16c.sid.inpe.br\r\nibi {rep sid.inpe.br/mtc-m18@80/2009/07.21.14.43 ibip 8JMKD3MGP8W/35MMLL8}\r\nibi.archiveservice {rep sid.inpe.br/mtc-m18@80/2008/03.17.15.17}\r\nibi.nextedition {rep sid.inpe.br/mtc-m18/2012/07.12.18.08}\r\nibi.platformsoftware {rep dpi.inpe.br/banon/1998/08.02.08.56}";
        match read(first, "/8JMKD3MGP8W/35MMLL8!:(oai_dc)", "") {
            Reading::NextEdition(ibi) => {
                assert_eq!(ibi.as_str(), "sid.inpe.br/mtc-m18/2012/07.12.18.08")
            }
            other => panic!("{other:?}"),
        }
        // Without a last-edition step the next edition is not followed.
        assert!(matches!(
            read(first, "/8JMKD3MGP8W/35MMLL8+(fr)", ""),
            Reading::Here
        ));
        let second = "archiveaddress mtc-m16c.sid.inpe.br\r\ncontenttype.lastedition.metadata(oai_dc) Metadata\r\nibi {rep sid.inpe.br/mtc-m18/2012/07.12.18.08 ibip 8JMKD3MGP8W/3C9EP6P}\r\nibi.lastedition.metadata(oai_dc) {rep sid.inpe.br/mtc-m18/2012/07.12.18.08.49}\r\nstate.lastedition.metadata(oai_dc) Original\r\nurl.lastedition.metadata(oai_dc) http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/metadata.cgi?choice=oai_dc\r\nurlkey 1426286454-36108967764060357";
        match read(
            second,
            "/sid.inpe.br/mtc-m18/2012/07.12.18.08!:(oai_dc)",
            "",
        ) {
            Reading::Satisfies(f) => {
                assert_eq!(f.url, "http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/metadata.cgi?choice=oai_dc");
                assert_eq!(f.contenttype, "Metadata");
                assert_eq!(
                    f.ibi.as_deref(),
                    Some("rep sid.inpe.br/mtc-m18/2012/07.12.18.08.49")
                );
            }
            other => panic!("{other:?}"),
        }
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
