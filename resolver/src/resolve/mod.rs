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
//!   ([`crate::lang::rank`]), an Original before a copy, then the first Archive: an answer decides
//!   at once only when it offers the reader's first language exactly; else the item in its
//!   own language (Example 8.3). The same answers give the same choice.
//! - The reader's own query pairs follow the URL found ([`location`]).
//!
//! **Who may hold it.** With a hundred Archives some are always down; one that does not
//! answer matters only when it *may hold* the IBI: the Archive the memory remembers for
//! it (fresh or stale) or its home ([`crate::homes`]) — its [`Guard`](guard::Guard). Only such an
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
//!
//! **The module's map**, one concept a file; this file keeps the [`Engine`], a
//! resolution's loop of steps ([`Engine::resolve`]) and its acknowledgment (Table 8.11),
//! and re-exports the few public types. Each file imports only those listed after it
//! (and the `Engine`, the `Reader` and the `Budget` of this one):
//! - `memento`: the next edition an IBI names, for [`crate::editions`];
//! - `step`: one step for one IBI (the memory read, the remembered Archive or the home
//!   asked alone, then every other Archive);
//! - `round`: one round (its requests built, its answers gathered, the rest left to end in
//!   the background);
//! - `hearing`: the requests under way, the answers heard, the health they count toward,
//!   the late answers;
//! - `teach`: what the location memory is taught by a round;
//! - `original`: the Original check's verdict, once no answer decided a round;
//! - `tally`: the answers counted, the one that decides, and how a round without a
//!   decision ends;
//! - `guard`: who may hold the IBI, what each Archive said, and which answer decides now;
//! - `conflict`: conflicts found, kept, counted and logged; suspicion;
//! - `outcome`: the trace, the rounds, each Archive asked, the outcome;
//! - `urls`: the persistent URL as cited and as given, the location, the pairs kept.

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ibi::persistent::PersistentUrl;
use ibi::relation::Lang;

pub use crate::answer::{usable_location, Found, SaidState, Why};

use crate::client::ArchiveClient;
use crate::clock::{self, Clock};
use crate::health::HealthBook;
use crate::homes::Archives;
use crate::loops::Underway;
use crate::memory::LocationMemory;
use crate::metrics::Metrics;
use crate::suspicion::Suspicion;

mod conflict;
mod guard;
mod hearing;
mod memento;
mod original;
mod outcome;
mod round;
mod step;
mod tally;
mod teach;
mod urls;

pub use outcome::{
    archive_name, AskResult, Asked, ChainEnd, MayHold, Missing, Outcome, Round, Trace,
};
pub use urls::{as_given, kept_pairs, location, persistent_url};

use conflict::Judge;
use outcome::{ms, Next};
use step::MemoryUse;
use urls::ip_list;

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

/// The reader's side of a resolution (Table 8.6).
#[derive(Clone, Debug)]
pub struct Reader {
    /// `clientinformation.ipaddress`: the reader, then its proxies.
    pub ips: Vec<IpAddr>,
    /// `clientinformation.languagepreference`, parsed; never sent to Archives.
    pub languages: Vec<Lang>,
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::tests::{read, EXAMPLE_10_1};
    use crate::answer::Reading;

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
}
