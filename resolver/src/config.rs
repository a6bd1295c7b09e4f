//! `resolver.toml`: who the resolver is, where it listens, where its registry lives, and
//! how it asks Archives.
//!
//! ```toml
//! serviceibi = "J8LNKB5R7W/3FUQHC5"        # IBI of the resolver service
//! publicurl  = "http://urlib.example.org"  # how readers reach this resolver
//! listen     = "127.0.0.1:8090"
//! database   = "resolver.sqlite"           # relative to this file's directory, or
//!                                          # postgresql://… (several resolvers share it)
//! trustedproxies = ["127.0.0.1/32"]        # X-Forwarded-For believed only from these
//! [archives]
//! timeout  = "2s"                          # per request to one Archive, connect included
//! networks = ["127.0.0.0/8"]               # addresses Archives may have
//! dormant_after = 5                        # failures in a row before it is asked no more
//! probe    = "30s"                         # how often a dormant Archive is asked again
//! connections = 16                         # connections open to one Archive at most
//! [memory]
//! entries  = 100000                        # IBIs whose Archive is remembered (≤ 1000000,
//!                                          # ~150 bytes each); 0: none
//! expiry   = "1d"                          # a remembered Archive is verified again after
//! [limits]
//! resolutions = 1024                       # under way at once; beyond, 503
//! connections = 10000                      # client connections held at once
//! per_client_resolutions = 64              # under way from one client network; beyond, 429
//! per_client_misses = 20                   # fan-outs a second from one client network
//! per_client_connections = 256             # connections from one client network
//! [metrics]
//! networks = ["127.0.0.0/8", "::1/128"]    # readers who may see /metrics
//! [site]                                   # who runs this resolver, on every page
//! name    = "Biblioteca do INPE"           # its header and footer (at most 200 characters)
//! contact = "mailto:urlib@inpe.br"         # an http(s) URL, or an e-mail address
//! ```

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use ibi::network::Network;
use ibi::toml_error::Position;
use ibi::Ibi;
use serde::Deserialize;

use crate::store::Database;
use toml::Spanned;

/// The resolver's settings, checked.
#[derive(Clone, Debug)]
pub struct Config {
    pub serviceibi: Ibi,
    /// `scheme://host[:port]`, no trailing slash.
    pub publicurl: String,
    /// The same with the port always written (`http://urlib.net:80`), as `url.persistent`
    /// is in Examples 8.9 and 10.1.
    pub publicurl_with_port: String,
    pub listen: SocketAddr,
    /// The registry: an SQLite file, or a PostgreSQL database several resolvers share.
    pub database: Database,
    pub trustedproxies: Vec<Network>,
    pub archives: Archives,
    /// `[memory] entries`: IBIs whose Archive is remembered (0: none).
    pub memory_entries: usize,
    /// `[memory] expiry`: how long a remembered Archive is trusted before it is verified
    /// again.
    pub memory_expiry: Duration,
    pub limits: Limits,
    /// `[metrics] networks`: the readers who may see `/metrics`.
    pub metrics_networks: Vec<Network>,
    /// `[site]`: who runs this resolver, as its pages say.
    pub site: Site,
}

/// `[site]`: the operator of the resolver, named in the header and the footer of every
/// page; each part optional.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Site {
    /// Its name (text, at most [`MAX_SITE_NAME`] characters).
    pub name: Option<String>,
    /// How to reach it: an `http(s)://` URL, or `mailto:` and an e-mail address.
    pub contact: Option<String>,
}

/// The longest `[site] name`, in characters.
pub const MAX_SITE_NAME: usize = 200;

impl Site {
    /// The name as written, when it is a name: not empty, no control character, at most
    /// [`MAX_SITE_NAME`] characters.
    fn name(text: &str) -> Result<String, String> {
        let name = text.trim();
        if name.is_empty() {
            return Err("[site] name is empty: give one, or leave the key out".into());
        }
        if name.chars().any(char::is_control) {
            return Err("[site] name holds a control character".into());
        }
        if name.chars().count() > MAX_SITE_NAME {
            return Err(format!(
                "[site] name is longer than {MAX_SITE_NAME} characters"
            ));
        }
        Ok(name.to_string())
    }

    /// The link a contact is, by the rule an Archive's `[site] contact` follows: an
    /// http(s) URL a page may link to as it is ([`ibi::escape::is_plain_url`]), or an
    /// e-mail address ([`ibi::registration::Email`]; `mailto:` added when not written).
    fn contact(text: &str) -> Result<String, String> {
        let text = text.trim();
        if ibi::escape::is_plain_url(text) {
            return Ok(text.to_string());
        }
        let address = text.strip_prefix("mailto:").unwrap_or(text);
        match ibi::registration::Email::parse(address) {
            Ok(email) => Ok(format!("mailto:{}", email.as_str())),
            Err(_) => Err(format!(
                "[site] contact = {:?} is neither an http(s) URL nor an e-mail address",
                ibi::text::cut(text, 64)
            )),
        }
    }
}

/// `[archives]`.
#[derive(Clone, Debug)]
pub struct Archives {
    pub timeout: Duration,
    /// `None`: public addresses only.
    pub networks: Option<Vec<Network>>,
    /// Failures in a row after which an Archive is dormant (0: never).
    pub dormant_after: u32,
    /// How often a dormant Archive is asked whether it answers again.
    pub probe: Duration,
    /// Connections open to one Archive at most.
    pub connections: usize,
}

/// `[limits]`.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Resolutions under way at once; beyond, `503` with Retry-After.
    pub resolutions: usize,
    /// Client connections held at once; beyond, new ones are closed.
    pub connections: usize,
    /// Per client network (IPv4 /24, IPv6 /64): resolutions under way at once; beyond,
    /// `429`.
    pub per_client_resolutions: usize,
    /// Per client network: resolutions a second that ask every Archive (the IBI is not
    /// remembered), in bursts of up to [`MISS_BURST_SECONDS`] of them; beyond, `429`.
    pub per_client_misses: u32,
    /// Per client network: connections open at once (a trusted proxy's are not counted);
    /// beyond, `429` and the connection closed.
    pub per_client_connections: usize,
}

/// A client network may spend this many seconds' worth of misses at once.
pub const MISS_BURST_SECONDS: u32 = 5;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    serviceibi: Spanned<String>,
    publicurl: Spanned<String>,
    listen: Option<Spanned<String>>,
    database: Option<Spanned<String>>,
    #[serde(default)]
    trustedproxies: Vec<Spanned<String>>,
    #[serde(default)]
    archives: RawArchives,
    #[serde(default)]
    memory: RawMemory,
    #[serde(default)]
    limits: RawLimits,
    #[serde(default)]
    metrics: RawMetrics,
    #[serde(default)]
    site: RawSite,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSite {
    name: Option<Spanned<String>>,
    contact: Option<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawArchives {
    timeout: Option<Spanned<String>>,
    networks: Option<Vec<Spanned<String>>>,
    dormant_after: Option<Spanned<i64>>,
    probe: Option<Spanned<String>>,
    connections: Option<Spanned<i64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawMemory {
    entries: Option<Spanned<i64>>,
    expiry: Option<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    resolutions: Option<Spanned<i64>>,
    connections: Option<Spanned<i64>>,
    per_client_resolutions: Option<Spanned<i64>>,
    per_client_misses: Option<Spanned<i64>>,
    per_client_connections: Option<Spanned<i64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawMetrics {
    networks: Option<Vec<Spanned<String>>>,
}

/// Where the settings are read from when neither `--config` nor [`CONFIG_ENV`] names
/// them: the Debian package's file.
pub const DEFAULT_PATH: &str = "/etc/ibi-resolver/resolver.toml";
/// The environment variable that stands in for `--config`.
pub const CONFIG_ENV: &str = "IBI_RESOLVER_CONFIG";
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8090";
pub const DEFAULT_DATABASE: &str = "resolver.sqlite";
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);
/// The longest per-Archive timeout accepted: a reader waits at most this long per round.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_DORMANT_AFTER: u32 = 5;
pub const DEFAULT_PROBE: Duration = Duration::from_secs(30);
pub const DEFAULT_MEMORY_ENTRIES: usize = 100_000;
pub const DEFAULT_MEMORY_EXPIRY: Duration = Duration::from_secs(86_400);
/// The longest `[memory] expiry` accepted.
pub const MAX_MEMORY_EXPIRY: Duration = Duration::from_secs(365 * 86_400);
pub const DEFAULT_PER_CLIENT_RESOLUTIONS: usize = 64;
pub const DEFAULT_PER_CLIENT_MISSES: u32 = 20;
pub const DEFAULT_PER_CLIENT_CONNECTIONS: usize = 256;
pub const DEFAULT_RESOLUTIONS: usize = 1024;
pub const DEFAULT_CONNECTIONS: usize = 10_000;
pub const DEFAULT_METRICS_NETWORKS: [&str; 2] = ["127.0.0.0/8", "::1/128"];

/// The settings file when `--config` is not given: the one [`CONFIG_ENV`] names (when
/// set and not empty), else [`DEFAULT_PATH`].
pub fn default_path() -> PathBuf {
    match std::env::var_os(CONFIG_ENV) {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => PathBuf::from(DEFAULT_PATH),
    }
}

impl Config {
    /// Reads and checks the file; errors name the file and what is wrong.
    pub fn load(path: &Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!(
                "{}: {e} (choose the settings with --config FILE or {CONFIG_ENV}=FILE; ibi-resolver init --publicurl URL writes them)",
                path.display()
            )
        })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Config::parse(&text, dir).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses the text of a resolver.toml whose relative paths are taken from `dir`.
    /// A wrong value is shown with its line and column, as a TOML error is.
    pub fn parse(text: &str, dir: &Path) -> Result<Config, ConfigError> {
        let raw: Raw = toml::from_str(text).map_err(|e| ConfigError::toml(text, &e))?;
        let read = Reading { text };
        let serviceibi = Ibi::parse(raw.serviceibi.get_ref())
            .map_err(|e| read.at(&raw.serviceibi, format!("serviceibi: {e}")))?;
        let PublicUrl {
            plain: publicurl,
            with_port: publicurl_with_port,
            ..
        } = PublicUrl::parse(raw.publicurl.get_ref()).map_err(|e| read.at(&raw.publicurl, e))?;
        let listen: SocketAddr = match &raw.listen {
            None => DEFAULT_LISTEN.parse().expect("a valid default"),
            Some(l) => l.get_ref().parse().map_err(|_| {
                read.at(
                    l,
                    format!(
                        "listen = {:?} is not an address and port such as 127.0.0.1:8090",
                        l.get_ref()
                    ),
                )
            })?,
        };
        let database = match &raw.database {
            None => Database::Sqlite(dir.join(DEFAULT_DATABASE)),
            Some(d) => Database::parse(d.get_ref(), dir)
                .map_err(|e| read.at(d, format!("database: {e}")))?,
        };
        let trustedproxies = read.networks("trustedproxies", &raw.trustedproxies)?;
        let archives = read.archives(&raw.archives)?;
        let (memory_entries, memory_expiry) = read.memory(&raw.memory)?;
        let limits = read.limits(&raw.limits)?;
        let metrics_networks = read.metrics(&raw.metrics)?;
        let site = read.site(&raw.site)?;
        Ok(Config {
            serviceibi,
            publicurl,
            publicurl_with_port,
            listen,
            database,
            trustedproxies,
            archives,
            memory_entries,
            memory_expiry,
            limits,
            metrics_networks,
            site,
        })
    }

    /// Whether the reader at `ip` may see `/metrics`.
    pub fn may_see_metrics(&self, ip: IpAddr) -> bool {
        self.metrics_networks.iter().any(|n| n.contains(ip))
    }

    /// Whether a connection from `ip` may speak for others with X-Forwarded-For.
    pub fn is_trusted_proxy(&self, ip: IpAddr) -> bool {
        self.trustedproxies.iter().any(|n| n.contains(ip))
    }
}

/// The values of a resolver.toml read, each fault placed in its `text`.
struct Reading<'a> {
    text: &'a str,
}

impl Reading<'_> {
    /// `message` about `value`, placed where it is written.
    fn at<T>(&self, value: &Spanned<T>, message: String) -> ConfigError {
        ConfigError {
            kind: ConfigErrorKind::Value,
            at: Some(Position::of_offset(self.text, value.span().start)),
            message,
        }
    }

    /// A list of address blocks, `what` naming it.
    fn networks(&self, what: &str, list: &[Spanned<String>]) -> Result<Vec<Network>, ConfigError> {
        list.iter()
            .map(|n| {
                Network::parse(n.get_ref()).map_err(|_| {
                    self.at(
                        n,
                        format!(
                            "{what}: {:?} is not an address block such as 127.0.0.0/8",
                            n.get_ref()
                        ),
                    )
                })
            })
            .collect()
    }

    /// A whole number within `range`, `default` when not given.
    fn number(
        &self,
        what: &str,
        v: &Option<Spanned<i64>>,
        default: usize,
        range: (i64, i64),
    ) -> Result<usize, ConfigError> {
        match v {
            None => Ok(default),
            Some(n) if (range.0..=range.1).contains(n.get_ref()) => Ok(*n.get_ref() as usize),
            Some(n) => Err(self.at(
                n,
                format!(
                    "{what} = {} is outside {}..{}",
                    n.get_ref(),
                    range.0,
                    range.1
                ),
            )),
        }
    }

    /// A duration within `min..=max` ([`parse_duration_in`]), `default` when not given.
    fn duration(
        &self,
        what: &str,
        v: &Option<Spanned<String>>,
        default: Duration,
        (min, max): (Duration, Duration),
    ) -> Result<Duration, ConfigError> {
        match v {
            None => Ok(default),
            Some(t) => parse_duration_in(t.get_ref(), min, max)
                .map_err(|e| self.at(t, format!("{what}: {e}"))),
        }
    }

    /// `[archives]`.
    fn archives(&self, raw: &RawArchives) -> Result<Archives, ConfigError> {
        let timeout = self.duration(
            "[archives] timeout",
            &raw.timeout,
            DEFAULT_TIMEOUT,
            (Duration::from_millis(1), MAX_TIMEOUT),
        )?;
        let networks = match &raw.networks {
            None => None,
            Some(list) => Some(self.networks("[archives] networks", list)?),
        };
        let dormant_after = self.number(
            "[archives] dormant_after",
            &raw.dormant_after,
            DEFAULT_DORMANT_AFTER as usize,
            (0, 1000),
        )? as u32;
        let probe = self.duration(
            "[archives] probe",
            &raw.probe,
            DEFAULT_PROBE,
            (Duration::from_secs(1), Duration::from_secs(3600)),
        )?;
        let connections = self.number(
            "[archives] connections",
            &raw.connections,
            crate::client::DEFAULT_PER_ARCHIVE,
            (1, 1024),
        )?;
        Ok(Archives {
            timeout,
            networks,
            dormant_after,
            probe,
            connections,
        })
    }

    /// `[memory]`: its entries and their expiry.
    fn memory(&self, raw: &RawMemory) -> Result<(usize, Duration), ConfigError> {
        let entries = self.number(
            "[memory] entries",
            &raw.entries,
            DEFAULT_MEMORY_ENTRIES,
            (0, 1_000_000),
        )?;
        let expiry = self.duration(
            "[memory] expiry",
            &raw.expiry,
            DEFAULT_MEMORY_EXPIRY,
            (Duration::from_millis(1), MAX_MEMORY_EXPIRY),
        )?;
        Ok((entries, expiry))
    }

    /// `[limits]`.
    fn limits(&self, raw: &RawLimits) -> Result<Limits, ConfigError> {
        Ok(Limits {
            resolutions: self.number(
                "[limits] resolutions",
                &raw.resolutions,
                DEFAULT_RESOLUTIONS,
                (1, 100_000),
            )?,
            connections: self.number(
                "[limits] connections",
                &raw.connections,
                DEFAULT_CONNECTIONS,
                (1, 1_000_000),
            )?,
            per_client_resolutions: self.number(
                "[limits] per_client_resolutions",
                &raw.per_client_resolutions,
                DEFAULT_PER_CLIENT_RESOLUTIONS,
                (1, 100_000),
            )?,
            per_client_misses: self.number(
                "[limits] per_client_misses",
                &raw.per_client_misses,
                DEFAULT_PER_CLIENT_MISSES as usize,
                (1, 1_000_000),
            )? as u32,
            per_client_connections: self.number(
                "[limits] per_client_connections",
                &raw.per_client_connections,
                DEFAULT_PER_CLIENT_CONNECTIONS,
                (1, 1_000_000),
            )?,
        })
    }

    /// `[site]`: its name and contact, each checked ([`Site`]).
    fn site(&self, raw: &RawSite) -> Result<Site, ConfigError> {
        let check = |v: &Option<Spanned<String>>, f: fn(&str) -> Result<String, String>| {
            v.as_ref()
                .map(|v| f(v.get_ref()).map_err(|e| self.at(v, e)))
                .transpose()
        };
        Ok(Site {
            name: check(&raw.name, Site::name)?,
            contact: check(&raw.contact, Site::contact)?,
        })
    }

    /// `[metrics]`: the networks that may see `/metrics`.
    fn metrics(&self, raw: &RawMetrics) -> Result<Vec<Network>, ConfigError> {
        match &raw.networks {
            None => Ok(DEFAULT_METRICS_NETWORKS
                .iter()
                .map(|n| Network::parse(n).expect("valid defaults"))
                .collect()),
            Some(list) => self.networks("[metrics] networks", list),
        }
    }
}

/// What is wrong with a resolver.toml: its kind, where (when known), and what. Shown as
/// `line L, column C: message`, or the message alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    kind: ConfigErrorKind,
    at: Option<Position>,
    message: String,
}

/// The kinds of [`ConfigError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigErrorKind {
    /// The text is not TOML of a resolver.toml (syntax, an unknown or missing setting, a
    /// value of the wrong type).
    Toml,
    /// A setting's value is wrong.
    Value,
}

impl ConfigError {
    pub fn kind(&self) -> ConfigErrorKind {
        self.kind
    }

    /// Where in the file, when known.
    pub fn position(&self) -> Option<Position> {
        self.at
    }

    /// A TOML error of `text`, placed at the start of its span; the toml crate's short
    /// message (its `Display` quotes the line, which could hold a secret).
    fn toml(text: &str, e: &toml::de::Error) -> ConfigError {
        ConfigError {
            kind: ConfigErrorKind::Toml,
            at: e.span().map(|span| Position::of_offset(text, span.start)),
            message: e.message().to_string(),
        }
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.at {
            Some(Position { line, column }) => {
                write!(f, "line {line}, column {column}: {}", self.message)
            }
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

/// `publicurl`: an http or https URL of a host, without path, query or user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicUrl {
    /// `scheme://host[:port]`, the port written only when it is not the scheme's (80,
    /// 443), the host in lower case.
    pub plain: String,
    /// The same with the port always written.
    pub with_port: String,
    /// The host: a name or an IP address.
    pub host: url::Host<String>,
    /// The port readers reach, written or the scheme's.
    pub port: u16,
}

impl PublicUrl {
    /// Reads `s`; the error says what is wrong with it and the form expected.
    pub fn parse(s: &str) -> Result<PublicUrl, String> {
        let bad = |why: &str| format!("publicurl = {s:?} {why}; expected http://host[:port]");
        let url = url::Url::parse(s).map_err(|_| bad("is not a URL"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad("is not http or https"));
        }
        if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
            return Err(bad("has a path, query or fragment"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(bad("holds a user name"));
        }
        let host = url.host_str().ok_or_else(|| bad("has no host"))?;
        let port = url
            .port_or_known_default()
            .ok_or_else(|| bad("has no port"))?;
        let plain = match url.port() {
            Some(p) => format!("{}://{host}:{p}", url.scheme()),
            None => format!("{}://{host}", url.scheme()),
        };
        Ok(PublicUrl {
            with_port: format!("{}://{host}:{port}", url.scheme()),
            plain,
            host: url.host().ok_or_else(|| bad("has no host"))?.to_owned(),
            port,
        })
    }
}

/// `"2s"`, `"500ms"`: a whole number of seconds or milliseconds, from 1 ms to 30 s.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    parse_duration_in(s, Duration::from_millis(1), MAX_TIMEOUT)
}

/// A duration as [`parse_duration`] reads it, within `min..=max`: a whole number of
/// milliseconds (`ms`), seconds (`s`), hours (`h`) or days (`d`).
pub fn parse_duration_in(s: &str, min: Duration, max: Duration) -> Result<Duration, String> {
    use ibi::duration::{D, H, MS, S};
    let d = ibi::duration::parse(s, &[MS, S, H, D], "2s")?;
    if d < min || d > max {
        return Err(format!("{s:?} is outside {}..{}", shown(min), shown(max)));
    }
    Ok(d)
}

/// `1ms`, `30s`, `365d`: a bound as a duration is written.
fn shown(d: Duration) -> String {
    if d.subsec_millis() != 0 || d.as_secs() == 0 {
        format!("{}ms", d.as_millis())
    } else if d.as_secs().is_multiple_of(86_400) {
        format!("{}d", d.as_secs() / 86_400)
    } else {
        format!("{}s", d.as_secs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOCUMENTED_EXAMPLE: &str = r#"
serviceibi = "J8LNKB5R7W/3FUQHC5"
publicurl  = "http://urlib.example.org"
listen     = "127.0.0.1:8090"
database   = "resolver.sqlite"
trustedproxies = ["127.0.0.1/32"]
[archives]
timeout = "2s"
networks = ["127.0.0.0/8"]
"#;

    #[test]
    fn the_documented_example_reads() {
        let c = Config::parse(DOCUMENTED_EXAMPLE, Path::new("/etc/ibi")).unwrap();
        assert_eq!(c.serviceibi.as_str(), "J8LNKB5R7W/3FUQHC5");
        assert_eq!(c.publicurl, "http://urlib.example.org");
        assert_eq!(c.publicurl_with_port, "http://urlib.example.org:80");
        assert_eq!(c.listen, "127.0.0.1:8090".parse().unwrap());
        assert_eq!(
            c.database.path(),
            Some(Path::new("/etc/ibi/resolver.sqlite"))
        );
        assert!(c.is_trusted_proxy("127.0.0.1".parse().unwrap()));
        assert!(!c.is_trusted_proxy("127.0.0.2".parse().unwrap()));
        assert_eq!(c.archives.timeout, Duration::from_secs(2));
        assert_eq!(c.archives.networks.as_ref().unwrap().len(), 1);
    }

    #[test]
    fn defaults_and_errors() {
        let c = Config::parse(
            "serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"https://r.example:8443\"\n",
            Path::new("."),
        )
        .unwrap();
        assert_eq!(c.publicurl_with_port, "https://r.example:8443");
        assert_eq!(c.listen, DEFAULT_LISTEN.parse().unwrap());
        assert!(c.archives.networks.is_none());
        for (text, message) in [
            ("serviceibi = \"x\"\npublicurl = \"http://a\"\n", "line 1, column 14: serviceibi: invalid IBI \"x\": it has 0 '/', expected 3 (rep) or 1 (IBIp)"),
            ("serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"http://a/b\"\n", "line 2, column 13: publicurl = \"http://a/b\" has a path, query or fragment; expected http://host[:port]"),
            ("serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"ftp://a\"\n", "line 2, column 13: publicurl = \"ftp://a\" is not http or https; expected http://host[:port]"),
            ("serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"http://a\"\nlisten = \"8090\"\n", "line 3, column 10: listen = \"8090\" is not an address and port such as 127.0.0.1:8090"),
            ("serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"http://a\"\n[archives]\ntimeout = \"2\"\n", "line 4, column 11: [archives] timeout: \"2\" has no unit; write it as \"2s\" or \"500ms\""),
            ("serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"http://a\"\n[archives]\ntimeout = \"90s\"\n", "line 4, column 11: [archives] timeout: \"90s\" is outside 1ms..30s"),
            ("serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"http://a\"\ntrustedproxies = [\"x\"]\n", "line 3, column 19: trustedproxies: \"x\" is not an address block such as 127.0.0.0/8"),
            ("serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"http://a\"\nport = 1\n", "line 3, column 1: unknown field `port`, expected one of `serviceibi`, `publicurl`, `listen`, `database`, `trustedproxies`, `archives`, `memory`, `limits`, `metrics`, `site`"),
            ("serviceibi = [\n", "line 1, column 15: unclosed array, expected `]`"),
        ] {
            assert_eq!(Config::parse(text, Path::new(".")).unwrap_err().to_string(), message, "{text}");
        }
    }

    #[test]
    fn bounds_per_archive_and_per_client_and_the_memory_expiry() {
        let head = "serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"http://a\"\n";
        let c = Config::parse(head, Path::new(".")).unwrap();
        assert_eq!(c.archives.connections, crate::client::DEFAULT_PER_ARCHIVE);
        assert_eq!(c.memory_expiry, Duration::from_secs(86_400));
        assert_eq!(
            (
                c.limits.per_client_resolutions,
                c.limits.per_client_misses,
                c.limits.per_client_connections
            ),
            (64, 20, 256)
        );
        let c = Config::parse(
            &format!("{head}[archives]\nconnections = 4\n[memory]\nexpiry = \"12h\"\n[limits]\nper_client_resolutions = 8\nper_client_misses = 2\nper_client_connections = 16\n"),
            Path::new("."),
        )
        .unwrap();
        assert_eq!(c.archives.connections, 4);
        assert_eq!(c.memory_expiry, Duration::from_secs(12 * 3600));
        assert_eq!(
            (
                c.limits.per_client_resolutions,
                c.limits.per_client_misses,
                c.limits.per_client_connections
            ),
            (8, 2, 16)
        );
        for (more, message) in [
            ("[memory]\nexpiry = \"0s\"\n", "line 4, column 10: [memory] expiry: \"0s\" is outside 1ms..365d"),
            ("[memory]\nexpiry = \"400d\"\n", "line 4, column 10: [memory] expiry: \"400d\" is outside 1ms..365d"),
            ("[memory]\nexpiry = \"1w\"\n", "line 4, column 10: [memory] expiry: \"1w\" has no unit; write it as \"2s\" or \"500ms\""),
            ("[archives]\nconnections = 0\n", "line 4, column 15: [archives] connections = 0 is outside 1..1024"),
            ("[limits]\nper_client_misses = 0\n", "line 4, column 21: [limits] per_client_misses = 0 is outside 1..1000000"),
        ] {
            assert_eq!(
                Config::parse(&format!("{head}{more}"), Path::new("."))
                    .unwrap_err()
                    .to_string(),
                message
            );
        }
    }

    #[test]
    fn the_site_is_a_name_and_a_link_each_checked() {
        let head = "serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"http://a\"\n";
        let site = |table: &str| Config::parse(&format!("{head}[site]\n{table}"), Path::new("."));
        assert_eq!(
            Config::parse(head, Path::new(".")).unwrap().site,
            Site::default()
        );
        for (table, name, contact) in [
            (
                "name = \" Biblioteca do INPE \"\ncontact = \"urlib@inpe.br\"\n",
                Some("Biblioteca do INPE"),
                Some("mailto:urlib@inpe.br"),
            ),
            (
                "contact = \"mailto:a.b+c@x-y.example.org\"\n",
                None,
                Some("mailto:a.b+c@x-y.example.org"),
            ),
            (
                "name = \"A & <B>\"\ncontact = \"https://r.example/contact?x=1\"\n",
                Some("A & <B>"),
                Some("https://r.example/contact?x=1"),
            ),
        ] {
            assert_eq!(
                site(table).unwrap().site,
                Site {
                    name: name.map(str::to_string),
                    contact: contact.map(str::to_string),
                },
                "{table}"
            );
        }
        for (table, message) in [
            ("name = \"  \"\n", "line 4, column 8: [site] name is empty: give one, or leave the key out"),
            ("name = \"a\\u0007b\"\n", "line 4, column 8: [site] name holds a control character"),
            (&format!("name = \"{}\"\n", "é".repeat(201)), "line 4, column 8: [site] name is longer than 200 characters"),
            ("contact = \"javascript:alert(1)\"\n", "line 4, column 11: [site] contact = \"javascript:alert(1)\" is neither an http(s) URL nor an e-mail address"),
            ("contact = \"http://r.example/a b\"\n", "line 4, column 11: [site] contact = \"http://r.example/a b\" is neither an http(s) URL nor an e-mail address"),
            ("contact = \"a b@c.d\"\n", "line 4, column 11: [site] contact = \"a b@c.d\" is neither an http(s) URL nor an e-mail address"),
            ("contact = \"a@\"\n", "line 4, column 11: [site] contact = \"a@\" is neither an http(s) URL nor an e-mail address"),
            ("contact = \"\\\"x\\\"@c.d\"\n", "line 4, column 11: [site] contact = \"\\\"x\\\"@c.d\" is neither an http(s) URL nor an e-mail address"),
            ("logo = \"x\"\n", "line 4, column 1: unknown field `logo`, expected `name` or `contact`"),
        ] {
            assert_eq!(site(table).unwrap_err().to_string(), message, "{table}");
        }
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        // "ação" is 4 characters in 6 bytes: the stray 1 is the 17th character of its
        // line (its 19th byte).
        let text =
            "serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"http://a\"\nlisten = \"ação\" 1\n";
        assert_eq!(
            Config::parse(text, Path::new(".")).unwrap_err().to_string(),
            "line 3, column 17: unexpected key or value, expected newline, `#`"
        );
    }
}
