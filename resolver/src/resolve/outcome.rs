//! What a resolution gives and keeps of itself: its [`Trace`] (each [`Round`], each
//! Archive [`Asked`] and how the request ended, [`AskResult`]), its [`Outcome`], and what
//! one step gives the next (`Next`: done, or where to ask on).

use std::time::Duration;

use ibi::persistent::PersistentUrl;
use ibi::relation::Step;
use serde::Serialize;

use crate::answer::{Asking, Found, Why};
use crate::labels::Resolution;
use crate::memory::Conflict;
use crate::registry::Included;

/// Everything a resolution did, for the log, the inspection page and `resolve`.
#[derive(Clone, Debug, Serialize)]
pub struct Trace {
    /// The persistent URL as the reader gave it: `url.persistent` of the acknowledgment.
    pub persistent_url: String,
    pub rounds: Vec<Round>,
    pub outcome: Outcome,
    /// Where the reader is sent, when the outcome is found: the URL found, with the
    /// reader's own query pairs ([`location`](super::location)).
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
    /// [`MAX_ROUNDS`](super::MAX_ROUNDS).
    Chain { detail: ChainEnd },
    /// The reader's network has asked every Archive as often as it may for now.
    Throttled { retry_after: u64 },
}

impl Outcome {
    /// The outcome's label in the metrics and the log.
    pub fn label(&self) -> Resolution {
        match self {
            Outcome::Found(_) => Resolution::Found,
            Outcome::NotFound { .. } => Resolution::NotFound,
            Outcome::Unavailable { .. } => Resolution::Unavailable,
            Outcome::NoTranslation { .. } => Resolution::NoTranslation,
            Outcome::Deleted { .. } => Resolution::Deleted,
            Outcome::Suspicion { .. } => Resolution::Suspicion,
            Outcome::NoOriginal { .. } => Resolution::NoOriginal,
            Outcome::Unverifiable { .. } => Resolution::Unverifiable,
            Outcome::Chain { .. } => Resolution::Chain,
            Outcome::Throttled { .. } => Resolution::Throttled,
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
    pub(super) fn of(url: &PersistentUrl) -> Missing {
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

/// `outcome` of a round that left out `before` Archives asked alone before it, with
/// them counted among those asked.
pub(super) fn counting(outcome: Outcome, before: usize) -> Outcome {
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

#[derive(Clone)]
pub(super) enum Next {
    Done(Outcome),
    Ask(Asking),
}

impl Next {
    /// An answer that satisfied the request (a URL, or where to ask next).
    pub(super) fn satisfied(&self) -> bool {
        matches!(self, Next::Done(Outcome::Found(_)) | Next::Ask(_))
    }

    /// A URL whose Archive says it holds a copy.
    pub(super) fn says_copy(&self) -> bool {
        matches!(self, Next::Done(Outcome::Found(found)) if found.says_copy())
    }

    /// A URL whose Archive claims the Original.
    pub(super) fn claims_original(&self) -> bool {
        matches!(self, Next::Done(Outcome::Found(found)) if found.claims_original())
    }
}

/// An Archive as pages and the log name it: `address (service IBI)`.
pub(super) fn shown_archive(a: &Included) -> String {
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

pub(super) fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}
