//! `include` / `exclude`: the messages "Incluir Arquivo" (2) and "Excluir Arquivo" (7) of
//! §7.2 of the resolution standard — a GET of the resolver's base URL with the eight pairs
//! of Table 7.2 — and the resolver's "status" answer (5)/(8).
//!
//! `[registration]` is checked before anything is sent: the key by rule `chave` of Table
//! 7.1, the e-mail address by rule `authority` (RFC 3986 §3.2, as Table 7.2 asks), the IP
//! as an IPv4 or IPv6 address. The key is never part of an error message, a Debug output or
//! anything printed; errors of the HTTP client (whose text may hold the URL, key and all)
//! are described by their kind only and scrubbed of the key anyway.
//!
//! A resolver that answers `429` (its line of key checks from this Archive's network
//! full, or the turn too late) or `503` (its registry out of reach) with `Retry-After`
//! asks to be asked again after that many seconds: [`send_when_asked`] does, within
//! bounds ([`MAX_RETRY_WAIT`] a pause, [`TRIES`] tries), and `serve`'s automatic
//! inclusion pauses that long instead of its own backoff.

use std::fmt;
use std::net::IpAddr;
use std::time::Duration;

use super::AdminError;
use crate::config::Config;
use ::ibi::escape::QUERY_VALUE;
use ::ibi::pairs::{PairList, Value};
use ::ibi::registration::{Email, Key};

/// How long the resolver is given to connect, and to answer.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The longest pause before a request is sent again when the resolver asks for one
/// (`429` or `503` with `Retry-After`): a longer one asked for is cut to this.
pub const MAX_RETRY_WAIT: Duration = Duration::from_secs(60);

/// How many times `include` and `exclude` send a request to one resolver while it answers
/// `429` or `503` with `Retry-After`: the first time and four more.
pub const TRIES: u32 = 5;

/// Which message is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Include,
    Exclude,
}

impl Direction {
    pub fn servicesubject(self) -> &'static str {
        match self {
            Direction::Include => "inclusionRequest",
            Direction::Exclude => "exclusionRequest",
        }
    }

    /// The `status.archive` value that means success.
    pub fn expected_status(self) -> &'static str {
        match self {
            Direction::Include => "included",
            Direction::Exclude => "excluded",
        }
    }
}

/// A checked request to one resolver, ready to send. Its Debug output hides the key.
#[derive(Clone)]
pub struct Prepared {
    /// The resolver's base URL (no pairs).
    pub resolver: String,
    pub direction: Direction,
    /// The eight pairs, values unescaped, in the order of Table 7.2.
    pub pairs: Vec<(&'static str, String)>,
    key: String,
}

impl fmt::Debug for Prepared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown: Vec<(&str, &str)> = self
            .pairs
            .iter()
            .map(|(n, v)| {
                (
                    *n,
                    if *n == "registrationkey" {
                        "<hidden>"
                    } else {
                        v.as_str()
                    },
                )
            })
            .collect();
        f.debug_struct("Prepared")
            .field("resolver", &self.resolver)
            .field("direction", &self.direction)
            .field("pairs", &shown)
            .finish()
    }
}

impl Prepared {
    /// The full request URL. It holds the key: never print it.
    pub fn url(&self) -> String {
        let mut url = self.resolver.clone();
        url.push(if url.contains('?') { '&' } else { '?' });
        for (i, (name, value)) in self.pairs.iter().enumerate() {
            if i > 0 {
                url.push('&');
            }
            url.push_str(name);
            url.push('=');
            url.extend(percent_encoding::utf8_percent_encode(value, QUERY_VALUE));
        }
        url
    }

    /// `text` with every occurrence of the key (as written, or escaped) masked.
    pub fn scrub(&self, text: &str) -> String {
        if self.key.is_empty() {
            return text.to_string();
        }
        let escaped: String =
            percent_encoding::utf8_percent_encode(&self.key, QUERY_VALUE).collect();
        text.replace(&self.key, "<key>").replace(&escaped, "<key>")
    }
}

/// Checks `[registration]` and the resolvers (`given`, the `--resolver` flags, when not
/// empty; else `[registration]`'s) and builds one request per resolver, in their order,
/// each with the key of that resolver: its own (`[[registration.resolver]]`), else
/// `[registration] key`. A given URL takes the key of the table with that URL; without
/// one, the shared key, and with tables and no such table, it is an error: no resolver
/// is sent another's key. Nothing is sent.
pub fn prepare(
    config: &Config,
    direction: Direction,
    given: &[String],
) -> Result<Vec<Prepared>, AdminError> {
    let reg = config.registration.as_ref().ok_or_else(|| {
        AdminError::new("archive.toml has no [registration] section (adminemail, key, ip)")
    })?;
    if reg
        .key
        .as_deref()
        .is_some_and(|key| Key::parse(key).is_err())
    {
        return Err(AdminError::new(
            "registration.key in archive.toml does not follow rule chave of Table 7.1 (10 or more digits, optionally '-' and 10 or more digits); nothing was sent",
        ));
    }
    if Email::parse(&reg.adminemail).is_err() {
        return Err(AdminError::new(format!(
            "registration.adminemail {:?} is not an e-mail address such as banon@dpi.inpe.br",
            reg.adminemail
        )));
    }
    if reg.ip.parse::<IpAddr>().is_err() {
        return Err(AdminError::new(format!(
            "registration.ip {:?} is not an IPv4 or IPv6 address",
            reg.ip
        )));
    }
    if reg.platformversion.is_empty()
        || !reg
            .platformversion
            .bytes()
            .all(|b| b.is_ascii_graphic() || b == b' ')
    {
        return Err(AdminError::new(format!(
            "registration.platformversion {:?} is not a sequence of ASCII characters",
            reg.platformversion
        )));
    }
    // (URL, its key), in order.
    let mut resolvers: Vec<(&str, &str)> = Vec::new();
    if given.is_empty() {
        resolvers.extend(
            reg.resolvers
                .iter()
                .map(|r| (r.url.as_str(), r.key.as_str())),
        );
    } else {
        for url in given {
            let key = match reg.resolvers.iter().find(|r| r.url == *url) {
                Some(r) => &r.key,
                None => reg.key.as_ref().ok_or_else(|| {
                    AdminError::new(format!(
                        "resolver {url}: archive.toml has no key for it: each resolver's key is in its [[registration.resolver]] table, and none has this url; nothing was sent"
                    ))
                })?,
            };
            resolvers.push((url, key));
        }
    }
    for (resolver, key) in &resolvers {
        check_resolver(resolver)?;
        if reg.key.is_none() && Key::parse(key).is_err() {
            return Err(AdminError::new(format!(
                "the key of registration.resolver {resolver} in archive.toml does not follow rule chave of Table 7.1 (10 or more digits, optionally '-' and 10 or more digits); nothing was sent"
            )));
        }
    }
    Ok(resolvers
        .iter()
        .map(|(resolver, key)| request(config, reg, direction, resolver, key))
        .collect())
}

/// A resolver's base URL as this build can send to it: `http://`, visible ASCII, no
/// fragment.
pub fn check_resolver(resolver: &str) -> Result<(), AdminError> {
    if resolver.starts_with("https://") {
        return Err(AdminError::new(format!(
            "resolver {resolver}: https is not supported by this build; use the resolver's http:// address"
        )));
    }
    if !resolver.starts_with("http://")
        || resolver.len() <= "http://".len()
        || resolver.bytes().any(|b| !::ibi::escape::is_word_byte(b))
        || resolver.contains('#')
    {
        return Err(AdminError::new(format!(
            "resolver {resolver:?} is not an http:// URL"
        )));
    }
    Ok(())
}

/// Whether a request to the resolver at `url` (an http:// URL) crosses a network in
/// clear: its host is neither a loopback address nor `localhost`. The registration key
/// then goes where anyone on the way can read it, and with it include the Archive at
/// another address in that resolver.
pub fn crosses_in_clear(url: &str) -> bool {
    if !url.starts_with("http://") {
        return false;
    }
    let authority = authority(url);
    let host = ::ibi::ip::host_of(authority.rsplit_once('@').map_or(authority, |(_, h)| h));
    let loopback = match host.parse::<IpAddr>() {
        Ok(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.is_loopback(),
            None => v6.is_loopback(),
        },
        Ok(ip) => ip.is_loopback(),
        // Names under localhost. are loopback (RFC 6761 §6.3).
        Err(_) => {
            let name = host.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
    };
    !loopback
}

/// The request of `direction` to `resolver` with `key`, from checked values.
fn request(
    config: &Config,
    reg: &crate::config::Registration,
    direction: Direction,
    resolver: &str,
    key: &str,
) -> Prepared {
    Prepared {
        resolver: resolver.to_string(),
        direction,
        pairs: vec![
            ("servicesubject", direction.servicesubject().to_string()),
            ("archiveaddress", config.archiveaddress.clone()),
            ("archiveserviceibi", config.service.as_str().to_string()),
            ("archiveip", reg.ip.clone()),
            ("archiveprotocol", "HTTP".to_string()),
            ("archiveplatformversion", reg.platformversion.clone()),
            ("archiveadmemailaddress", reg.adminemail.clone()),
            ("registrationkey", key.to_string()),
        ],
        key: key.to_string(),
    }
}

/// The resolver's "status" answer, (5) or (8) of §7.2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusAnswer {
    pub status: u16,
    /// The pairs of the body, in the order sent.
    pub pairs: PairList,
}

impl StatusAnswer {
    /// The first value of `name`, words joined by a space.
    pub fn get(&self, name: &str) -> Option<String> {
        self.pairs.get(name).map(Value::joined)
    }

    /// The pairs as lines `name value` (braces around several words).
    pub fn lines(&self) -> Vec<String> {
        self.pairs
            .iter()
            .map(|(n, v)| match v.as_words() {
                [_] => format!("{n} {}", v.joined()),
                _ => format!("{n} {{{}}}", v.joined()),
            })
            .collect()
    }
}

/// A request that failed: why (never with the key), and the pause the resolver asked for
/// before it is asked again, when it answered `429` (too many requests) or `503` (its
/// registry out of reach) with `Retry-After` in seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub message: String,
    pub retry_after: Option<Duration>,
}

impl From<AdminError> for Failure {
    fn from(e: AdminError) -> Failure {
        Failure {
            message: e.message,
            retry_after: None,
        }
    }
}

impl From<Failure> for AdminError {
    fn from(f: Failure) -> AdminError {
        AdminError::new(f.message)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl Failure {
    /// The pause to take before asking again, when the resolver asked for one: what it
    /// asked, a second at least and [`MAX_RETRY_WAIT`] at most.
    pub fn pause(&self) -> Option<Duration> {
        self.retry_after
            .map(|asked| asked.clamp(Duration::from_secs(1), MAX_RETRY_WAIT))
    }
}

/// The most of the resolver's answer that is read: a pair list of the status messages is a
/// few hundred bytes; anything beyond is cut off and then fails to parse.
const MAX_ANSWER: u64 = 1 << 20;

/// Sends the request and reads the answer: a pair list. Anything else is an
/// error whose message says what happened, never with the key. Redirects are not
/// followed (the resolver's base URL is the one it was registered under), and the whole
/// exchange, connecting included, is bounded by [`TIMEOUT`].
pub fn send(req: &Prepared) -> Result<StatusAnswer, Failure> {
    send_within(req, TIMEOUT)
}

/// [`send`], sent again while the resolver answers `429` or `503` with `Retry-After`,
/// after the pause it asks for ([`Failure::pause`]), [`TRIES`] times in all. Before each
/// pause, `pausing` is told why, how long, and the number of the try that follows.
pub fn send_when_asked(
    req: &Prepared,
    pausing: &mut dyn FnMut(&Failure, Duration, u32),
) -> Result<StatusAnswer, Failure> {
    let mut tries = 1;
    loop {
        let failure = match send(req) {
            Ok(answer) => return Ok(answer),
            Err(failure) => failure,
        };
        match failure.pause() {
            Some(pause) if tries < TRIES => {
                tries += 1;
                pausing(&failure, pause, tries);
                std::thread::sleep(pause);
            }
            Some(_) => {
                return Err(Failure {
                    message: format!("{}; given up after {TRIES} tries", failure.message),
                    retry_after: failure.retry_after,
                })
            }
            None => return Err(failure),
        }
    }
}

/// [`send`], the resolver given `timeout` (whole seconds, one at least) to connect and
/// to answer. The name of its host is looked up first, which the timeout does not bound.
pub fn send_within(req: &Prepared, timeout: Duration) -> Result<StatusAnswer, Failure> {
    let base = &req.resolver;
    let unreachable = |why: &str| {
        AdminError::new(req.scrub(&format!("cannot reach the resolver at {base}: {why}")))
    };
    // The name is looked up first, as the client would, so that a name that does not
    // resolve is said to be one (the client reports it as any other I/O failure).
    if !authority_resolves(base) {
        return Err(unreachable("its host name does not resolve").into());
    }
    let mut resp = minreq::get(req.url())
        .with_header(
            "User-Agent",
            concat!("ibi-archive/", env!("CARGO_PKG_VERSION")),
        )
        .with_timeout(timeout.as_secs().max(1))
        .with_follow_redirects(false)
        .send_lazy()
        .map_err(|e| unreachable(&transport_failure(&e)))?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut resp, MAX_ANSWER), &mut bytes)
        .map_err(|e| {
            AdminError::new(req.scrub(&format!(
                "the resolver at {base} answered, but its answer could not be read: {}",
                e.kind()
            )))
        })?;
    let status = resp.status_code;
    let body = String::from_utf8(bytes).map_err(|_| {
        AdminError::new(req.scrub(&format!(
            "the resolver at {base} answered, but its answer could not be read: {}",
            std::io::ErrorKind::InvalidData
        )))
    })?;
    // A status below 400 is an answer to read as a pair list (a redirect is not followed,
    // and its body then fails to parse); 400 and above are the resolver's refusals.
    if status >= 400 {
        let said = summary(&body);
        let message = req.scrub(&format!(
            "the resolver at {base} answered {status} {}{}",
            summary(&resp.reason_phrase),
            if said.is_empty() {
                String::new()
            } else {
                format!(": {said}")
            }
        ));
        // Too many requests, or the registry out of reach: to be asked again later.
        let retry_after = if status == 429 || status == 503 {
            retry_after(&resp.headers)
        } else {
            None
        };
        return Err(Failure {
            message,
            retry_after,
        });
    }
    let pairs = ::ibi::pairs::parse(body.trim_end_matches(['\r', '\n'])).map_err(|e| {
        AdminError::new(req.scrub(&format!(
            "the resolver at {base} answered {status}, but not with a pair list ({e}): {}",
            summary(&body)
        )))
    })?;
    Ok(StatusAnswer { status, pairs })
}

/// The pause a `Retry-After` among `headers` asks for, when it gives seconds (the
/// resolver's form; a date is not read).
fn retry_after(headers: &[(String, String)]) -> Option<Duration> {
    headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("retry-after"))
        .and_then(|(_, value)| value.trim().parse::<u64>().ok())
        .map(Duration::from_secs)
}

/// What an answer means for `direction`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Included (with the confirmation received) or excluded.
    Done,
    /// Included, but the resolver could not reach the Archive service (status.confirmation
    /// unsuccessful): the Archive is registered, yet unreachable at archiveaddress.
    IncludedUnconfirmed,
}

/// Judges the resolver's answer to `req`: success only with `status.archive included` /
/// `excluded`. The error names the resolver, never the key.
pub fn judge(req: &Prepared, answer: &StatusAnswer) -> Result<Verdict, AdminError> {
    let direction = req.direction;
    let got = answer.get("status.archive");
    if got.as_deref() != Some(direction.expected_status()) {
        let said = answer.lines().join(" ");
        return Err(AdminError::new(req.scrub(&format!(
            "the resolver at {} did not answer status.archive {} (it answered: {})",
            req.resolver,
            direction.expected_status(),
            if said.is_empty() {
                "nothing".to_string()
            } else {
                said
            }
        ))));
    }
    if direction == Direction::Include
        && answer.get("status.confirmation").as_deref() != Some("successful")
    {
        return Ok(Verdict::IncludedUnconfirmed);
    }
    Ok(Verdict::Done)
}

/// The authority of the http:// URL `url` (`[user@]host[:port]`).
fn authority(url: &str) -> &str {
    let rest = url.strip_prefix("http://").unwrap_or(url);
    rest.split(['/', '?', '#']).next().unwrap_or_default()
}

/// Whether the host of the http:// URL `url` resolves to an address (port 80 when the
/// URL gives none).
fn authority_resolves(url: &str) -> bool {
    use std::net::ToSocketAddrs;
    let authority = authority(url);
    let with_port = match authority.rsplit_once(':') {
        Some((_, port)) if !port.is_empty() && !port.contains(']') => authority.to_string(),
        _ => format!("{authority}:80"),
    };
    with_port
        .to_socket_addrs()
        .is_ok_and(|mut addrs| addrs.next().is_some())
}

/// What kept the request from being answered, by kind only: the client's own text may
/// hold the URL, and with it the key.
fn transport_failure(e: &minreq::Error) -> String {
    match e {
        minreq::Error::AddressNotFound => "its host name does not resolve".to_string(),
        minreq::Error::IoError(io)
            if matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionRefused
                    | std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::HostUnreachable
                    | std::io::ErrorKind::NetworkUnreachable
            ) =>
        {
            "the connection failed".to_string()
        }
        minreq::Error::IoError(_) => "the connection broke or timed out".to_string(),
        _ => "its answer was not HTTP".to_string(),
    }
}

/// The first line of a body, cut short, bytes outside printable ASCII written `%xx`.
fn summary(body: &str) -> String {
    let line = body.lines().next().unwrap_or("").trim();
    let mut out = String::new();
    for c in line.chars().take(200) {
        if c == ' ' || c.is_ascii_graphic() {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02x}"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::ibi::escape::TABLE_6_1;

    const TOML: &str = "archiveaddress = \"mtc-m21.sid.inpe.br\"\narchiveserviceibi = \"sid.inpe.br/mtc-m21/2012/06.05.15.34.39\"\n[registration]\nresolver = \"http://www.urlib.net/J8LNKB5R7W/3FUQHC5\"\nadminemail = \"banon@dpi.inpe.br\"\nkey = \"1234567890\"\nip = \"150.163.34.239\"\nplatformversion = \"2014:11.09.02.16.15\"\n";

    #[test]
    fn example_7_2_and_7_3() {
        let c = Config::parse(TOML).unwrap();
        let [inc] = &prepare(&c, Direction::Include, &[]).unwrap()[..] else {
            panic!("one resolver, one request")
        };
        assert_eq!(inc.url(), "http://www.urlib.net/J8LNKB5R7W/3FUQHC5?servicesubject=inclusionRequest&archiveaddress=mtc-m21.sid.inpe.br&archiveserviceibi=sid.inpe.br/mtc-m21/2012/06.05.15.34.39&archiveip=150.163.34.239&archiveprotocol=HTTP&archiveplatformversion=2014:11.09.02.16.15&archiveadmemailaddress=banon@dpi.inpe.br&registrationkey=1234567890");
        let exc = prepare(&c, Direction::Exclude, &[]).unwrap();
        assert_eq!(
            exc[0].url(),
            inc.url().replace("inclusionRequest", "exclusionRequest")
        );
        assert!(!format!("{inc:?}").contains("1234567890"));
    }

    #[test]
    fn one_request_per_resolver_each_checked() {
        let several = TOML.replace(
            "resolver = \"http://www.urlib.net/J8LNKB5R7W/3FUQHC5\"",
            "resolvers = [\"http://a.example.org/X\", \"http://b.example.org:8090/X\"]",
        );
        let c = Config::parse(&several).unwrap();
        let reqs = prepare(&c, Direction::Exclude, &[]).unwrap();
        let urls: Vec<String> = reqs.iter().map(Prepared::url).collect();
        let query = "?servicesubject=exclusionRequest&archiveaddress=mtc-m21.sid.inpe.br&archiveserviceibi=sid.inpe.br/mtc-m21/2012/06.05.15.34.39&archiveip=150.163.34.239&archiveprotocol=HTTP&archiveplatformversion=2014:11.09.02.16.15&archiveadmemailaddress=banon@dpi.inpe.br&registrationkey=1234567890";
        assert_eq!(
            urls,
            [
                format!("http://a.example.org/X{query}"),
                format!("http://b.example.org:8090/X{query}")
            ]
        );
        // Given resolvers stand for the configured ones.
        let given = ["http://c.example.org/X".to_string()];
        let reqs = prepare(&c, Direction::Include, &given).unwrap();
        assert_eq!(
            reqs.iter().map(|r| r.resolver.as_str()).collect::<Vec<_>>(),
            ["http://c.example.org/X"]
        );
        // One bad URL among them: nothing is prepared.
        let bad = several.replace("http://b.example.org:8090/X", "https://b.example.org/X");
        let err = prepare(&Config::parse(&bad).unwrap(), Direction::Include, &[]).unwrap_err();
        assert_eq!(err.message, "resolver https://b.example.org/X: https is not supported by this build; use the resolver's http:// address");
    }

    #[test]
    fn each_resolver_is_sent_its_own_key_and_no_other() {
        let head = "archiveaddress = \"mtc-m21.sid.inpe.br\"\narchiveserviceibi = \"sid.inpe.br/mtc-m21/2012/06.05.15.34.39\"\n[registration]\nadminemail = \"banon@dpi.inpe.br\"\nip = \"150.163.34.239\"\n";
        let tables = "[[registration.resolver]]\nurl = \"http://a.example.org/X\"\nkey = \"1111111111\"\n[[registration.resolver]]\nurl = \"http://b.example.org/X\"\nkey = \"2222222222-3333333333\"\n";
        let c = Config::parse(&format!("{head}{tables}")).unwrap();
        let sent = |reqs: &[Prepared]| -> Vec<(String, String)> {
            reqs.iter()
                .map(|r| {
                    let url = r.url();
                    let key = url.rsplit_once("registrationkey=").unwrap().1.to_string();
                    (r.resolver.clone(), key)
                })
                .collect()
        };
        let pair = |u: &str, k: &str| (u.to_string(), k.to_string());
        for direction in [Direction::Include, Direction::Exclude] {
            assert_eq!(
                sent(&prepare(&c, direction, &[]).unwrap()),
                [
                    pair("http://a.example.org/X", "1111111111"),
                    pair("http://b.example.org/X", "2222222222-3333333333")
                ]
            );
        }
        // A given URL takes the key of its table, in the order given.
        let given = [
            "http://b.example.org/X".to_string(),
            "http://a.example.org/X".to_string(),
        ];
        assert_eq!(
            sent(&prepare(&c, Direction::Include, &given).unwrap()),
            [
                pair("http://b.example.org/X", "2222222222-3333333333"),
                pair("http://a.example.org/X", "1111111111")
            ]
        );
        // One without a table gets no other's key.
        let other = ["http://c.example.org/X".to_string()];
        assert_eq!(
            prepare(&c, Direction::Include, &other).unwrap_err().message,
            "resolver http://c.example.org/X: archive.toml has no key for it: each resolver's key is in its [[registration.resolver]] table, and none has this url; nothing was sent"
        );
        // Each request scrubs its own key, and hides it from Debug.
        let reqs = prepare(&c, Direction::Include, &[]).unwrap();
        assert_eq!(reqs[1].scrub("a 2222222222-3333333333 b"), "a <key> b");
        assert!(!format!("{:?}", reqs[1]).contains("2222222222"));
        // A table's key that breaks rule chave: named by its resolver, nothing prepared.
        let bad = tables.replace("2222222222-3333333333", "22222");
        let err = prepare(
            &Config::parse(&format!("{head}{bad}")).unwrap(),
            Direction::Include,
            &[],
        )
        .unwrap_err();
        assert_eq!(err.message, "the key of registration.resolver http://b.example.org/X in archive.toml does not follow rule chave of Table 7.1 (10 or more digits, optionally '-' and 10 or more digits); nothing was sent");
        // The one-key form: every resolver, a given one too, gets that key.
        let one = Config::parse(TOML).unwrap();
        assert_eq!(
            sent(&prepare(&one, Direction::Include, &other).unwrap()),
            [pair("http://c.example.org/X", "1234567890")]
        );
    }

    #[test]
    fn a_key_crosses_in_clear_over_http_beyond_loopback() {
        for clear in [
            "http://urlib.net/J8LNKB5R7W/3FUQHC5",
            "http://150.163.34.239:8090/X/Y",
            "http://[2001:db8::1]:8090/X/Y",
            "http://localhost.example.org/X",
        ] {
            assert!(crosses_in_clear(clear), "{clear}");
        }
        for local in [
            "http://127.0.0.1:8090/J8LNKB5R7W/3FUQHC5",
            "http://127.1.2.3/X",
            "http://[::1]:8090/X",
            "http://[::ffff:127.0.0.1]:8090/X",
            "http://localhost:8090/X",
            "http://LOCALHOST./X",
            "http://resolver.localhost/X",
        ] {
            assert!(!crosses_in_clear(local), "{local}");
        }
    }

    #[test]
    fn a_retry_after_in_seconds_is_read_and_its_pause_bounded() {
        let headers = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect()
        };
        let secs = Duration::from_secs;
        assert_eq!(
            retry_after(&headers(&[("Retry-After", "4")])),
            Some(secs(4))
        );
        assert_eq!(
            retry_after(&headers(&[
                ("content-type", "text/plain"),
                ("retry-after", " 12 ")
            ])),
            Some(secs(12))
        );
        for unread in ["Wed, 21 Oct 2026 07:28:00 GMT", "-1", "", "1.5"] {
            assert_eq!(
                retry_after(&headers(&[("Retry-After", unread)])),
                None,
                "{unread}"
            );
        }
        assert_eq!(retry_after(&headers(&[])), None);
        let pause = |asked: Option<u64>| {
            Failure {
                message: String::new(),
                retry_after: asked.map(secs),
            }
            .pause()
        };
        assert_eq!(pause(None), None);
        assert_eq!(pause(Some(0)), Some(secs(1)));
        assert_eq!(pause(Some(7)), Some(secs(7)));
        assert_eq!(pause(Some(3600)), Some(MAX_RETRY_WAIT));
    }

    #[test]
    fn table_6_1_escapes() {
        let s: String =
            percent_encoding::utf8_percent_encode("a b%c&d+e=f?g#h/i:j@k~ó", TABLE_6_1).collect();
        assert_eq!(s, "a%20b%25c%26d%2Be%3Df%3Fg%23h/i:j@k~%C3%B3");
    }

    #[test]
    fn a_faulty_key_is_never_shown() {
        let text = TOML.replace("1234567890", "12345");
        let err = prepare(&Config::parse(&text).unwrap(), Direction::Include, &[]).unwrap_err();
        assert!(!err.message.contains("12345"), "{err}");
    }
}
