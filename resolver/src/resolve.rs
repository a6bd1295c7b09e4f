//! Resolution (§8.2, Figure 8.1): the urlRequest of Table 8.9 to every included Archive at
//! once, the analysis of their answers, new rounds for next editions, and the
//! acknowledgment of Table 8.11.
//!
//! - Without `requireditemstatus`, the first non-empty answer that satisfies the request
//!   decides, without waiting for the others: it holds the URL asked for, or (for a
//!   relation through the last edition) `ibi.nextedition`, which starts a new round for
//!   that IBI (Example 10.2). At most [`MAX_ROUNDS`] rounds, and no IBI twice.
//! - With `requireditemstatus=Original` every answer is awaited: exactly one Archive may
//!   claim the Original; two or more are under suspicion (409).
//! - A bare translation (`+`, `GetTranslation`) picks among the `.translation(xx[-YY])`
//!   URLs by the reader's languages, else the item in its own language (Example 8.3).
//! - Only an `http`/`https` URL with a host and no control bytes, spaces or quotes is
//!   ever taken; anything else an Archive answers counts as no URL.

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
use crate::memory::LocationMemory;
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
                crate::client::DEFAULT_PER_ARCHIVE,
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
    /// `answered`, `empty`, `failed`, `timed out`, `refused`, `dormant` (not asked: it
    /// failed too often) or `not awaited`.
    pub result: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The answer's pairs (urlkey hidden), values as written.
    pub pairs: Vec<(String, String)>,
    pub ms: f64,
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
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ibi: Option<String>,
    #[serde(skip)]
    pub urlkey: Option<String>,
    /// The translation chosen for a bare `+`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
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

impl Engine {
    /// Resolves `url` for `reader` over `archives`.
    pub async fn resolve(
        &self,
        archives: Arc<Vec<Included>>,
        url: &PersistentUrl,
        reader: &Reader,
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
            let next = self.step(&archives, &current, reader, &mut rounds).await;
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
            ms: ms(start.elapsed()),
        }
    }

    /// The acknowledgment URL of Table 8.11 for a found URL (`None` when the Archive gave
    /// no urlkey: there is nothing to acknowledge).
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
        pairs.extend([
            ("servicesubject", &b"acknowledgment"[..]),
            ("state", found.state.as_bytes()),
            ("url", found.url.as_bytes()),
            ("url.persistent", trace.persistent_url.as_bytes()),
            ("urlkey", urlkey.as_bytes()),
        ]);
        self.client
            .service_url(&found.address, &found.archive, &pairs)
            .ok()
    }

    /// One step of a resolution: the remembered Archive alone when there is one and it
    /// satisfies the request, else every Archive; the memory corrected from what they
    /// answered. Never the memory for `requireditemstatus=Original`, which weighs every
    /// Archive's answer.
    async fn step(
        &self,
        archives: &[Included],
        url: &PersistentUrl,
        reader: &Reader,
        rounds: &mut Vec<Round>,
    ) -> Next {
        let remembering = !url.requires_original();
        let key = ibi_key(url.ibi());
        // The remembered Archive, after it answered that the item is not there: not
        // asked again. After it failed: asked again (the failure may be a moment of
        // overload), but a second failure in this step is not counted against it.
        let mut empty: Option<&Included> = None;
        let mut failed: Option<&str> = None;
        if remembering {
            let remembered = self.memory.recall(&key);
            let archive = remembered.as_deref().and_then(|r| {
                archives.iter().find(|a| {
                    a.serviceibi == r
                        && !self
                            .health
                            .of(&a.serviceibi, || a.recorded.clone())
                            .is_dormant()
                })
            });
            match archive {
                Some(a) => {
                    let (mut round, next, _) =
                        self.round(std::slice::from_ref(a), url, reader, None).await;
                    round.remembered = true;
                    let result = round.asked[0].result.clone();
                    rounds.push(round);
                    if next.satisfied() {
                        self.metrics.memory("hit");
                        return next;
                    }
                    self.metrics.memory("stale");
                    match result.as_str() {
                        "empty" => empty = Some(a),
                        "failed" | "timed out" => failed = Some(&a.serviceibi),
                        _ => {}
                    }
                }
                None if remembered.is_some() => self.metrics.memory("stale"),
                None => self.metrics.memory("miss"),
            }
        }
        let others: Vec<Included>;
        let asked_now: &[Included] = match empty {
            Some(done) => {
                others = archives
                    .iter()
                    .filter(|a| a.serviceibi != done.serviceibi)
                    .cloned()
                    .collect();
                &others
            }
            None => archives,
        };
        let (round, mut next, decider) = self.round(asked_now, url, reader, failed).await;
        rounds.push(round);
        if let (Some(_), Next::Done(Outcome::NotFound { asked, .. })) = (empty, &mut next) {
            *asked += 1;
        }
        if remembering {
            match (&next, decider) {
                (n, Some(i)) if n.satisfied() => {
                    self.memory.remember(&key, &asked_now[i].serviceibi)
                }
                // Forgotten only when every Archive said it is not there: one that did not
                // answer may still hold it.
                (Next::Done(Outcome::NotFound { unanswered: 0, .. }), _)
                | (Next::Done(Outcome::Deleted { .. }), _) => self.memory.forget(&key),
                _ => {}
            }
        }
        next
    }

    /// One round: the urlRequest to every Archive given (but dormant ones), answers read
    /// as they come. Also gives the Archive whose answer decided, if one did.
    /// A failure of `counted` (already counted in this step) is not counted again.
    async fn round(
        &self,
        archives: &[Included],
        url: &PersistentUrl,
        reader: &Reader,
        counted: Option<&str>,
    ) -> (Round, Next, Option<usize>) {
        let verblist = url.verblist_text();
        let ips = ip_list(&reader.ips);
        let mut asked: Vec<Asked> = archives
            .iter()
            .map(|a| Asked {
                archive: a.serviceibi.clone(),
                address: a.address.clone(),
                result: "not awaited".into(),
                detail: None,
                pairs: Vec::new(),
                ms: 0.0,
            })
            .collect();
        let healths: Vec<Arc<Health>> = archives
            .iter()
            .map(|a| self.health.of(&a.serviceibi, || a.recorded.clone()))
            .collect();
        let ledger = Ledger {
            metrics: self.metrics.clone(),
            dormant_after: self.dormant_after,
            counted: counted.map(str::to_string),
        };
        let mut unanswered = 0;
        let mut requests: Vec<(usize, String)> = Vec::with_capacity(archives.len());
        for (i, a) in archives.iter().enumerate() {
            if healths[i].is_dormant() {
                asked[i].result = "dormant".into();
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
                    asked[i].result = "refused".into();
                    asked[i].detail = Some(e);
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
        let mut decided: Option<Next> = None;
        let mut decider = None;
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
            let reading = match fetched {
                Fetched::Busy => {
                    a.result = "not sent (the resolver was busy)".into();
                    unanswered += 1;
                    self.metrics.archive_request(archive, "not_sent", took);
                    continue;
                }
                Fetched::Overloaded(why) => {
                    // The Archive works; it has more to do than it takes: never toward
                    // its dormancy.
                    a.result = "overloaded".into();
                    a.detail = Some(why);
                    unanswered += 1;
                    self.metrics.archive_request(archive, "overloaded", took);
                    continue;
                }
                Fetched::TimedOut => {
                    a.result = "timed out".into();
                    unanswered += 1;
                    ledger.failed(archive, &healths[i], "timed_out", took);
                    continue;
                }
                Fetched::Failed(why) => {
                    a.result = "failed".into();
                    a.detail = Some(why);
                    unanswered += 1;
                    ledger.failed(archive, &healths[i], "failed", took);
                    continue;
                }
                Fetched::Body(body) => {
                    let (reading, shown) = read_answer(&body, url, &reader.languages, &archives[i]);
                    a.pairs = shown;
                    reading
                }
            };
            if let Reading::Invalid(_) = reading {
                ledger.failed(archive, &healths[i], "failed", took);
            } else {
                ledger.answered(archive, &healths[i], took);
            }
            a.result = "answered".into();
            match reading {
                Reading::Satisfies(found) => {
                    if original {
                        claims.push(found);
                    } else {
                        decided = Some(Next::Done(Outcome::Found(found)));
                    }
                }
                Reading::NextEdition(ibi) => {
                    if original {
                        next_edition.get_or_insert(ibi);
                    } else {
                        decided = Some(Next::Edition(ibi));
                    }
                }
                Reading::OwnLanguage(step) => {
                    if original {
                        untranslated.get_or_insert(step);
                    } else {
                        decided = Some(Next::Untranslated(step));
                    }
                }
                Reading::Deleted(date) => {
                    deleted.get_or_insert(date);
                }
                Reading::Here => here = true,
                Reading::Empty => a.result = "empty".into(),
                Reading::Invalid(why) => {
                    a.result = "failed".into();
                    a.detail = Some(why);
                    unanswered += 1;
                }
            }
            if decided.is_some() {
                decider = Some(i);
                break;
            }
        }
        // The requests still under way end in the background, each within the timeout:
        // cut off, their connections could not be used again, and the next resolution
        // would open new ones. What they get counts toward their Archives' health, not
        // toward this resolution.
        if !tasks.is_empty() {
            let archives: Vec<(String, Arc<Health>)> = archives
                .iter()
                .map(|a| a.serviceibi.clone())
                .zip(healths)
                .collect();
            tokio::spawn(async move {
                while let Some(joined) = tasks.join_next().await {
                    let Ok((i, fetched, took)) = joined else {
                        continue;
                    };
                    let (archive, health) = &archives[i];
                    match fetched {
                        Fetched::Body(body) if is_answer(&body) => {
                            ledger.answered(archive, health, took)
                        }
                        Fetched::Body(_) | Fetched::Failed(_) => {
                            ledger.failed(archive, health, "failed", took)
                        }
                        Fetched::TimedOut => ledger.failed(archive, health, "timed_out", took),
                        Fetched::Overloaded(_) => {
                            ledger.metrics.archive_request(archive, "overloaded", took)
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
        if let Some(next) = decided {
            return (round, next, decider);
        }
        if original && !claims.is_empty() {
            let originals: Vec<&Found> = claims.iter().filter(|f| f.state == "Original").collect();
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
            return (round, Next::Done(next), None);
        }
        if let Some(ibi) = next_edition {
            return (round, Next::Edition(ibi), None);
        }
        if let Some(step) = untranslated {
            return (round, Next::Untranslated(step), None);
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
        (round, Next::Done(outcome), None)
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
            crate::server::say(&format!("{archive} answers again: asked again"));
        }
    }

    /// A request to `archive` failed (`result`: `failed`, `timed_out`).
    fn failed(&self, archive: &str, health: &Health, result: &str, took: Duration) {
        self.metrics.archive_request(archive, result, took);
        if self.counted.as_deref() == Some(archive) {
            return;
        }
        if health.failure(self.dormant_after) == health::Change::FellDormant {
            crate::server::say(&format!(
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
                state: word("state").unwrap_or_else(|| "Original".into()),
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

/// Whether an Archive's URL may become a `Location`: `http` or `https` with a host, and
/// only visible ASCII without quotes, backslashes or angle brackets.
pub fn usable_location(url: &str) -> bool {
    if url.len() > 8 * 1024
        || !url
            .bytes()
            .all(|b| (0x21..0x7f).contains(&b) && !matches!(b, b'"' | b'<' | b'>' | b'\\' | b'`'))
    {
        return false;
    }
    match reqwest::Url::parse(url) {
        Ok(u) => {
            matches!(u.scheme(), "http" | "https") && u.host_str().is_some_and(|h| !h.is_empty())
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
            (found.contenttype.as_str(), found.state.as_str()),
            ("Data", "Original")
        );
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
            ms: 0.0,
        };
        let reader = Reader {
            ips: vec![
                "172.16.44.200".parse().unwrap(),
                "150.163.68.1".parse().unwrap(),
            ],
            languages: Vec::new(),
        };
        // Example 10.1's acknowledgment, with the url's own "%" escaped as Table 6.1 asks
        // (the example prints it bare), so that the Archive decodes the URL it gave.
        assert_eq!(
            engine.acknowledgment(&trace, &reader).unwrap(),
            "http://mtc-m16c.sid.inpe.br/sid.inpe.br/mtc-m18@80/2008/03.17.15.17?clientinformation.ipaddress=172.16.44.200%20150.163.68.1&contenttype=Data&ibi=rep%20sid.inpe.br/mtc-m18@80/2009/07.21.14.43%20ibip%208JMKD3MGP8W/35MMLL8&servicesubject=acknowledgment&state=Original&url=http://mtc-m16c.sid.inpe.br/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%2520650.0-B-1.pdf&url.persistent=http://urlib.net:80/8JMKD3MGP8W/35MMLL8&urlkey=1427244889-5349022633744855"
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
        ] {
            assert!(!usable_location(bad), "{bad:?}");
        }
        assert!(usable_location(
            "https://mtc-m16c.sid.inpe.br/col/x/doc/a%20b.pdf"
        ));
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
