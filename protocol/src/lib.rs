//! ibi: the protocol of the IBI persistent-identifier resolution system (URLib), as the
//! Archive service and the resolver both speak it. Nothing here keeps state, runs a
//! process or waits on the network.
//!
//! At the top, the identifiers as the generation standard defines them: IBIs in their
//! two forms, the uniform repository name (rep, Table 6.1, [`rep`]) and the IBIp
//! (Table 7.1, [`ibip`]), with the base-27 numbers ([`base27`]), the addresses
//! ([`ip`]) and the dates ([`date`]) they code, and their minting ([`mint`]). Then what
//! requests and answers are made of:
//! pair lists ([`pairs`]), query strings ([`query`]), relations and verb lists
//! ([`relation`]), persistent URLs ([`persistent`]), escaping ([`escape`], [`markup`]),
//! an item's state ([`item`]), the values of a registration ([`registration`]), the address blocks of access rules ([`network`]) and the
//! content negotiation of an Archive's pages ([`negotiate`]), an item's Dublin Core record
//! ([`dc`]), its citations ([`cite`]) and the schema.org pieces of its JSON-LD
//! ([`schema`]); and
//! what both servers write and read around them: log lines ([`logline`]), times
//! ([`time`]), the durations of their settings ([`duration`]), a TOML fault's place ([`toml_error`]), text cut at a character boundary
//! ([`text`]) and the open-file limit ([`process`]).

#![forbid(unsafe_code)]

pub mod atomic;
pub mod base27;
pub mod cite;
pub mod date;
pub mod dc;
pub mod dirfd;
pub mod duration;
pub mod escape;
pub mod ibip;
pub mod ip;
pub mod item;
pub mod logline;
pub mod markup;
pub mod mint;
pub mod negotiate;
pub mod network;
pub mod pairs;
pub mod persistent;
pub mod process;
pub mod query;
pub mod registration;
pub mod relation;
pub mod rep;
pub mod schema;
pub mod text;
pub mod time;
pub mod toml_error;

pub use date::IbiDate;
pub use ibip::Ibip;
pub use rep::Rep;

use std::fmt;
use std::str::FromStr;

/// An IBI in either of its two forms.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ibi {
    Rep(Rep),
    Ibip(Ibip),
}

impl Ibi {
    /// Parses a rep (three slashes) or an IBIp (one slash).
    pub fn parse(s: &str) -> Result<Ibi, IbiError> {
        if s.len() > MAX_LEN {
            return Err(IbiError::new(format!(
                "invalid IBI {}: it is longer than {MAX_LEN} bytes",
                shown(s)
            )));
        }
        match s.bytes().filter(|&b| b == b'/').count() {
            3 => Rep::parse(s).map(Ibi::Rep),
            1 => Ibip::parse(s).map(Ibi::Ibip),
            n => Err(IbiError::new(format!(
                "invalid IBI {}: it has {n} '/', expected 3 (rep) or 1 (IBIp)",
                shown(s)
            ))),
        }
    }

    /// The spelling it was parsed from.
    pub fn as_str(&self) -> &str {
        match self {
            Ibi::Rep(r) => r.as_str(),
            Ibi::Ibip(i) => i.as_str(),
        }
    }

    /// The one spelling shared by every spelling of this IBI, under which it is kept and
    /// looked up as a string (a registered Archive, a remembered location, an item loaded
    /// for a request): a rep's [`Rep::canonical`] (lower case, no port 80, `.` before any
    /// other port), an IBIp's [`Ibip::canonical`] (upper case). Two IBIs are equal exactly
    /// when their keys are; a rep's key has three `/` and an IBIp's one, so the two forms
    /// never share a key.
    pub fn key(&self) -> String {
        match self {
            Ibi::Rep(r) => r.canonical().to_string(),
            Ibi::Ibip(i) => i.canonical(),
        }
    }

    /// The date the IBI codes.
    pub fn date(&self) -> IbiDate {
        match self {
            Ibi::Rep(r) => r.date(),
            Ibi::Ibip(i) => i.date(),
        }
    }
}

impl fmt::Display for Ibi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Ibi {
    type Err = IbiError;
    fn from_str(s: &str) -> Result<Ibi, IbiError> {
        Ibi::parse(s)
    }
}

/// The longest IBI accepted, in bytes: the generation standard (§5) takes labels of at most
/// 255 characters as its example of a finite label set; the parsers face the open internet.
pub const MAX_LEN: usize = 255;

/// `s` quoted for an error message, cut short when long so a hostile input cannot flood a
/// log line, and without a registration key ([`logline::hide_keys`]): the message may
/// go on a page as well as to a log.
pub fn shown(s: &str) -> String {
    const KEEP: usize = 64;
    let s = &*logline::hide_keys(s);
    if s.len() <= KEEP {
        return format!("{s:?}");
    }
    format!("{:?}... ({} bytes)", text::prefix(s, KEEP), s.len())
}

/// Connections an Archive's own server (`ibi-archive serve`) accepts at once from one
/// client address by default; a resolver opens at most as many to one Archive, so that
/// it never meets that refusal.
pub const CONNECTIONS_PER_CLIENT: usize = 16;

/// An error of the identifier layer: why a string is not an IBI, a date, a hostname or a
/// granularity, or why minting or the distributor's state failed. The message is lower case
/// and names the input and the part at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IbiError {
    message: String,
}

impl IbiError {
    pub fn new(message: impl Into<String>) -> IbiError {
        IbiError {
            message: message.into(),
        }
    }
}

impl fmt::Display for IbiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for IbiError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> String {
        Ibi::parse(s).unwrap().key()
    }

    /// Every spelling of an IBI has one key, and two IBIs have one key exactly when they
    /// are equal.
    #[test]
    fn every_spelling_of_an_ibi_has_one_key() {
        for (spelling, want) in [
            (
                "SID.inpe.br/MTC-m18@80/2009/07.21.13.23",
                "sid.inpe.br/mtc-m18/2009/07.21.13.23",
            ),
            (
                "sid.inpe.br/mtc-m18.80/2009/07.21.13.23",
                "sid.inpe.br/mtc-m18/2009/07.21.13.23",
            ),
            (
                "sid.inpe.br/mtc-m18@8080/2009/07.21.13.23",
                "sid.inpe.br/mtc-m18.8080/2009/07.21.13.23",
            ),
            ("8jmkd3mgp8w/35mme4e", "8JMKD3MGP8W/35MME4E"),
            ("Lk47b6W/362sfkJ", "LK47B6W/362SFKJ"),
            ("LK47B6W/362SFKJ", "LK47B6W/362SFKJ"),
        ] {
            assert_eq!(key(spelling), want, "{spelling}");
        }
        let all = [
            "sid.inpe.br/mtc-m18/2009/07.21.13.23",
            "SID.inpe.br/mtc-m18@80/2009/07.21.13.23",
            "sid.inpe.br/mtc-m18.8080/2009/07.21.13.23",
            "sid.inpe.br/mtc-m18/2009/07.21.13.24",
            "8JMKD3MGP8W/35MME4E",
            "8jmkd3mgp8w/35mme4e",
            "8JMKD3MGP8W/35MME4F",
        ];
        for a in all {
            for b in all {
                let (x, y) = (Ibi::parse(a).unwrap(), Ibi::parse(b).unwrap());
                assert_eq!(x == y, x.key() == y.key(), "{a} {b}");
            }
        }
    }
}
