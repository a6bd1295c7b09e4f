//! The state of a list (ListIdentifiers, ListRecords) and its resumption token: where
//! the next page starts and every argument of the list, signed with the Archive's secret,
//! so that no state is kept between requests.

use crate::config::Config;
use crate::item::is_format_name;
use crate::urlkey::UrlKeys;
use ::ibi::Rep;

/// What a list asks for: the format, the dates, where this page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ListState {
    pub(super) headers_only: bool,
    pub(super) prefix: String,
    pub(super) from: Option<i64>,
    pub(super) until: Option<i64>,
    /// Records handed out before this page.
    pub(super) cursor: u64,
    /// The size of the whole list, when known (from the index).
    pub(super) total: Option<u64>,
    /// Where the last page ended.
    pub(super) after: Option<Position>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Position {
    /// After this line of the index (datestamp, rep): a place in any index of the
    /// Archive, this one or one built since.
    Index(i64, String),
}

/// What signs and checks the resumption tokens of one Archive: its secret (the one of its
/// urlkeys, var/urlkey.secret) over its identity — its service's IBI and base URL — and
/// every field of the token, which holds every argument of its list (verb,
/// metadataPrefix, from, until, set) and where its next page starts. A token is thus
/// good only for the Archive that gave it and for its own list: one forged, altered, or
/// given by another Archive (even a copy of this one with a secret of its own) is a
/// badResumptionToken.
pub(super) struct Signer<'a> {
    keys: &'a UrlKeys,
    /// The Archive's identity, as it is signed.
    archive: String,
}

impl Signer<'_> {
    /// The domain of the tags ([`UrlKeys::tag`]).
    const DOMAIN: &'static str = "ibi-archive oai-pmh resumption token";
    /// Bytes of the HMAC kept in a token (128 bits, 32 hex digits).
    const TAG_BYTES: usize = 16;

    pub(super) fn new<'a>(keys: &'a UrlKeys, config: &Config) -> Signer<'a> {
        Signer {
            keys,
            archive: format!("{}\n{}", config.service.as_str(), config.service_url()),
        }
    }

    /// The tag of a token's fields, in hex.
    fn tag(&self, body: &str) -> String {
        let message = format!("{}\n{body}", self.archive);
        self.keys.tag(Self::DOMAIN, message.as_bytes())[..Self::TAG_BYTES]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// Whether `tag` is the tag of `body`, compared in time independent of where they
    /// differ.
    fn holds(&self, body: &str, tag: &str) -> bool {
        let want = self.tag(body);
        want.len() == tag.len()
            && want
                .bytes()
                .zip(tag.bytes())
                .fold(0u8, |d, (a, b)| d | (a ^ b))
                == 0
    }
}

impl ListState {
    /// The resumption token of the page that starts here: the fields, separated by `,`
    /// (which no rep, format or number holds), then their tag ([`Signer`]).
    pub(super) fn token(&self, signer: &Signer<'_>) -> String {
        let opt = |v: Option<i64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
        let (at_seconds, at_rep) = match &self.after {
            Some(Position::Index(s, r)) => (s.to_string(), r.as_str()),
            None => ("-".to_string(), ""),
        };
        // `set` is always `-` (this Archive has no sets), signed all the same: a token is
        // bound to every argument its list can have.
        let body = format!(
            "2,{},{},{},{},-,{},{},{},{}",
            if self.headers_only { "I" } else { "R" },
            self.prefix,
            opt(self.from),
            opt(self.until),
            self.cursor,
            self.total
                .map_or_else(|| "-".to_string(), |t| t.to_string()),
            at_seconds,
            at_rep
        );
        let tag = signer.tag(&body);
        format!("{body},{tag}")
    }

    pub(super) fn from_token(
        token: &str,
        headers_only: bool,
        signer: &Signer<'_>,
    ) -> Option<ListState> {
        let (body, tag) = token.rsplit_once(',')?;
        if !signer.holds(body, tag) {
            return None;
        }
        let f: Vec<&str> = body.split(',').collect();
        let [version, verb, prefix, from, until, set, cursor, total, at_seconds, at_rep] =
            f.as_slice()
        else {
            return None;
        };
        let opt = |s: &str| -> Option<Option<i64>> {
            if s == "-" {
                Some(None)
            } else {
                s.parse().ok().map(Some)
            }
        };
        if *version != "2" || *verb != if headers_only { "I" } else { "R" } || *set != "-" {
            return None;
        }
        if !is_format_name(prefix) {
            return None;
        }
        let after = Some(Position::Index(at_seconds.parse().ok()?, rep_of(at_rep)?));
        // Signed by this Archive, but still judged: counts no list reaches past, never
        // negative, a cursor within its size.
        let count = |s: &str| -> Option<u64> { u64::try_from(s.parse::<i64>().ok()?).ok() };
        let cursor = count(cursor)?;
        let total = match *total {
            "-" => None,
            t => Some(count(t)?),
        };
        if total.is_some_and(|t| cursor > t) {
            return None;
        }
        Some(ListState {
            headers_only,
            prefix: prefix.to_string(),
            from: opt(from)?,
            until: opt(until)?,
            cursor,
            total,
            after,
        })
    }
}

fn rep_of(s: &str) -> Option<String> {
    Rep::parse(s).ok().map(|_| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signer_of(keys: &UrlKeys) -> Signer<'_> {
        Signer {
            keys,
            archive: "sid.inpe.br/mtc-m18@80/2008/03.17.15.17\nhttp://localhost:8080/sid.inpe.br/mtc-m18@80/2008/03.17.15.17".into(),
        }
    }

    #[test]
    fn tokens_read_back_and_altered_ones_do_not() {
        let keys = UrlKeys::from_secret([7; 32]);
        let signer = signer_of(&keys);
        let state = ListState {
            headers_only: false,
            prefix: "oai_dc".into(),
            from: Some(1000),
            until: None,
            cursor: 100,
            total: Some(250),
            after: Some(Position::Index(
                1234,
                "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47".into(),
            )),
        };
        let token = state.token(&signer);
        let (body, tag) = token.rsplit_once(',').unwrap();
        assert_eq!(
            body,
            "2,R,oai_dc,1000,-,-,100,250,1234,sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47"
        );
        assert_eq!(tag.len(), 32);
        assert_eq!(
            ListState::from_token(&token, false, &signer),
            Some(state.clone())
        );
        // For the other list verb, not.
        assert_eq!(ListState::from_token(&token, true, &signer), None);
        let altered = token.replacen(",100,", ",200,", 1);
        assert_ne!(altered, token);
        assert_eq!(ListState::from_token(&altered, false, &signer), None);
        assert_eq!(
            ListState::from_token(&token[..token.len() - 1], false, &signer),
            None
        );
        assert_eq!(ListState::from_token("garbage", false, &signer), None);
        // Another secret, or another Archive with this secret: not this Archive's.
        let other_keys = UrlKeys::from_secret([8; 32]);
        let other = signer_of(&other_keys);
        assert_eq!(ListState::from_token(&token, false, &other), None);
        let elsewhere = Signer {
            keys: &keys,
            archive: "sid.inpe.br/mtc-m18@80/2008/03.17.15.17\nhttp://other.example.org/sid.inpe.br/mtc-m18@80/2008/03.17.15.17".into(),
        };
        assert_eq!(ListState::from_token(&token, false, &elsewhere), None);
        // Signed, and still judged: a cursor or size past any list, or past its size.
        for (cursor, total) in [(u64::MAX, None), (1 << 63, None), (300, Some(250))] {
            let odd = ListState {
                cursor,
                total,
                ..state.clone()
            };
            assert_eq!(
                ListState::from_token(&odd.token(&signer), false, &signer),
                None
            );
        }
        // A set other than none, signed.
        let with_set = body.replacen(",-,-,100,", ",-,s,100,", 1);
        let with_set = format!("{with_set},{}", signer.tag(&with_set));
        assert_eq!(ListState::from_token(&with_set, false, &signer), None);
    }
}
