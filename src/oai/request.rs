//! A request to the data provider: where it is addressed (the base URL), its verb and
//! arguments, judged as OAI-PMH 2.0 says
//! (badVerb before badArgument, the exclusive `resumptionToken`, dates of either
//! granularity), and the errors of the protocol an answer may be.

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};

use ::ibi::query::Query;
use ::ibi::shown;

/// The protocol's verbs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verb {
    Identify,
    ListMetadataFormats,
    ListSets,
    GetRecord,
    ListIdentifiers,
    ListRecords,
}

impl Verb {
    fn parse(s: &str) -> Option<Verb> {
        Some(match s {
            "Identify" => Verb::Identify,
            "ListMetadataFormats" => Verb::ListMetadataFormats,
            "ListSets" => Verb::ListSets,
            "GetRecord" => Verb::GetRecord,
            "ListIdentifiers" => Verb::ListIdentifiers,
            "ListRecords" => Verb::ListRecords,
            _ => return None,
        })
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Verb::Identify => "Identify",
            Verb::ListMetadataFormats => "ListMetadataFormats",
            Verb::ListSets => "ListSets",
            Verb::GetRecord => "GetRecord",
            Verb::ListIdentifiers => "ListIdentifiers",
            Verb::ListRecords => "ListRecords",
        }
    }

    /// The arguments it takes: (name, required).
    fn arguments(self) -> &'static [(&'static str, bool)] {
        match self {
            Verb::Identify => &[],
            Verb::ListMetadataFormats => &[("identifier", false)],
            Verb::ListSets => &[("resumptionToken", false)],
            Verb::GetRecord => &[("identifier", true), ("metadataPrefix", true)],
            Verb::ListIdentifiers | Verb::ListRecords => &[
                ("metadataPrefix", true),
                ("from", false),
                ("until", false),
                ("set", false),
                ("resumptionToken", false),
            ],
        }
    }
}

/// An error condition of the protocol: its code and what to tell the harvester.
#[derive(Debug)]
pub(super) struct OaiError {
    pub(super) code: &'static str,
    pub(super) message: String,
}

pub(super) fn error(code: &'static str, message: impl Into<String>) -> OaiError {
    OaiError {
        code,
        message: message.into(),
    }
}

/// Why a request is not answered as the protocol says: an error of the protocol, or the
/// index being built (`503`, with the seconds to wait).
#[derive(Debug)]
pub(super) enum Failure {
    Protocol(OaiError),
    Unavailable { retry_after: u64 },
}

impl From<OaiError> for Failure {
    fn from(e: OaiError) -> Failure {
        Failure::Protocol(e)
    }
}

/// The arguments of a request, checked for its verb.
#[derive(Debug, Default)]
pub(super) struct Args {
    /// Every argument as given (for the `request` element of an answer).
    pub(super) given: Vec<(String, String)>,
}

impl Args {
    pub(super) fn get(&self, name: &str) -> Option<&str> {
        self.given
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The verb and arguments of `query`, or the error the protocol gives (badVerb before
/// badArgument: a request whose verb is not one cannot have its arguments judged).
pub(super) fn parse_request(query: &Query) -> Result<(Verb, Args), OaiError> {
    let mut verb = None;
    let mut args = Args::default();
    let mut bad: Option<OaiError> = None;
    for (name, value) in query.pairs() {
        let name = std::str::from_utf8(name).unwrap_or("");
        let Ok(value) = std::str::from_utf8(value) else {
            bad.get_or_insert(error(
                "badArgument",
                format!("the value of {} is not UTF-8", shown(name)),
            ));
            continue;
        };
        if name == "verb" {
            if verb.is_some() {
                return Err(error("badVerb", "the verb is repeated"));
            }
            verb = Some(value);
            continue;
        }
        if args.get(name).is_some() {
            bad.get_or_insert(error(
                "badArgument",
                format!("the argument {} is repeated", shown(name)),
            ));
            continue;
        }
        args.given.push((name.to_string(), value.to_string()));
    }
    let verb = verb.unwrap_or("");
    let Some(verb) = Verb::parse(verb) else {
        return Err(error(
            "badVerb",
            format!("{} is not a verb of OAI-PMH 2.0", shown(verb)),
        ));
    };
    if let Some(e) = bad {
        return Err(e);
    }
    let allowed = verb.arguments();
    for (name, value) in &args.given {
        if !allowed.iter().any(|(n, _)| n == name) {
            return Err(error(
                "badArgument",
                format!("{} takes no argument {}", verb.name(), shown(name)),
            ));
        }
        if value.is_empty() {
            return Err(error(
                "badArgument",
                format!("the argument {name} is empty"),
            ));
        }
    }
    if args.get("resumptionToken").is_some() {
        // The exclusive argument: nothing else may come with it.
        if args.given.len() > 1 {
            return Err(error(
                "badArgument",
                "resumptionToken is an exclusive argument: no other argument may be given with it",
            ));
        }
    } else {
        for (name, required) in allowed {
            if *required && args.get(name).is_none() {
                return Err(error(
                    "badArgument",
                    format!("{} needs the argument {name}", verb.name()),
                ));
            }
        }
    }
    Ok((verb, args))
}

/// A `from` or `until` argument: `YYYY-MM-DD` or `YYYY-MM-DDThh:mm:ssZ`, as POSIX
/// seconds (a day as its first second for `from`, its last for `until`), and whether it
/// was given to the second.
pub(super) fn parse_date(s: &str, until: bool) -> Option<(i64, bool)> {
    // Digits where the forms have digits (chrono's `%Y` would take a sign or a space).
    let form = b"dddd-dd-ddTdd:dd:ddZ";
    if !(s.len() == 10 || s.len() == 20)
        || s.bytes().zip(form).any(|(b, &f)| {
            if f == b'd' {
                !b.is_ascii_digit()
            } else {
                b != f
            }
        })
    {
        return None;
    }
    if s.len() == 10 {
        let d = NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()?;
        let t = if until {
            NaiveTime::from_hms_opt(23, 59, 59)?
        } else {
            NaiveTime::MIN
        };
        return Some((d.and_time(t).and_utc().timestamp(), false));
    }
    if s.len() == 20 && s.ends_with('Z') && s.as_bytes()[10] == b'T' {
        let d = NaiveDateTime::parse_from_str(&s[..19], "%Y-%m-%dT%H:%M:%S").ok()?;
        return Some((d.and_utc().timestamp(), true));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oai::document::datestamp;

    #[test]
    fn dates_at_both_granularities() {
        assert_eq!(
            parse_date("2009-07-21", false),
            Some((1_248_134_400, false))
        );
        assert_eq!(parse_date("2009-07-21", true), Some((1_248_220_799, false)));
        assert_eq!(
            parse_date("2009-07-21T13:23:45Z", false),
            Some((1_248_182_625, true))
        );
        for bad in [
            "2009-7-21",
            "2009-07-21T13:23:45",
            "2009-07-21T13:23Z",
            "2009-02-30",
            "2009-07-21T25:00:00Z",
            "2009-07-21 13:23:45Z",
            "",
            "-999-07-21",
            "+999-07-21",
            " 999-07-21",
            "2009-07-+1",
            "+999-07-21T13:23:45Z",
            "2009-07-21T+3:23:45Z",
            "2009-07-21T13:23:+5Z",
        ] {
            assert_eq!(parse_date(bad, false), None, "{bad}");
        }
        assert_eq!(datestamp(1_248_182_625), "2009-07-21T13:23:45Z");
    }
    #[test]
    fn requests_are_judged_as_the_protocol_says() {
        let code = |qs: &str| match parse_request(&Query::parse(qs.as_bytes()).unwrap()) {
            Ok((v, _)) => v.name().to_string(),
            Err(e) => e.code.to_string(),
        };
        assert_eq!(code("verb=Identify"), "Identify");
        assert_eq!(code("verb=Nonsense"), "badVerb");
        assert_eq!(code("verb=Identify&verb=Identify"), "badVerb");
        assert_eq!(code("verb=Identify&x=1"), "badArgument");
        assert_eq!(code("verb=ListRecords"), "badArgument");
        assert_eq!(
            code("verb=ListRecords&metadataPrefix=oai_dc"),
            "ListRecords"
        );
        assert_eq!(
            code("verb=ListRecords&metadataPrefix=oai_dc&metadataPrefix=oai_dc"),
            "badArgument"
        );
        assert_eq!(code("verb=ListRecords&resumptionToken=x"), "ListRecords");
        assert_eq!(
            code("verb=ListRecords&resumptionToken=x&metadataPrefix=oai_dc"),
            "badArgument"
        );
        assert_eq!(code("verb=GetRecord&identifier=x"), "badArgument");
        assert_eq!(
            code("verb=GetRecord&identifier=x&metadataPrefix=oai_dc"),
            "GetRecord"
        );
        assert_eq!(code("verb=ListIdentifiers&metadataPrefix="), "badArgument");
        assert_eq!(code("verb=ListSets&resumptionToken=x"), "ListSets");
    }
}
