//! The Archive's configuration, `<root>/archive.toml`: its address, the IBI of its Archive
//! service, the relation subset it offers, and the settings of the administrator's tools
//! (registration with the resolver, minting, access networks).

use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ::ibi::escape::is_plain_url;
use serde::Deserialize;

use crate::minting::distributor::Granularity;
use ::ibi::relation::Relation;
use ::ibi::toml_error::{located, Position, TextError};
use ::ibi::Ibi;

pub use ::ibi::network::Network;

mod snapshot;
pub use snapshot::NAME as SNAPSHOT;

#[derive(Deserialize)]
#[cfg_attr(test, derive(Debug, PartialEq))]
#[serde(deny_unknown_fields)]
struct RawConfig {
    archiveaddress: String,
    archiveserviceibi: String,
    platformsoftware: Option<String>,
    baseurl: Option<String>,
    relations: Option<Vec<String>>,
    registration: Option<RawRegistration>,
    minting: Option<RawMinting>,
    access: Option<RawAccess>,
    oai: Option<RawOai>,
    site: Option<RawSite>,
    acknowledgments: Option<RawAcknowledgments>,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(Debug, PartialEq))]
#[serde(deny_unknown_fields)]
struct RawSite {
    institution: Option<String>,
    contact: Option<String>,
    logo: Option<String>,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(Debug, PartialEq))]
#[serde(deny_unknown_fields)]
struct RawAcknowledgments {
    /// `"1s"`, `"500ms"`, `"0"`: read as any TOML value and checked below, so that an
    /// unquoted number is told how to write it.
    sync_interval: Option<toml::Value>,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(Debug, PartialEq))]
#[serde(deny_unknown_fields)]
struct RawOai {
    repositoryname: Option<String>,
    adminemail: Option<String>,
    page_size: Option<i64>,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(Debug, PartialEq))]
#[serde(deny_unknown_fields)]
struct RawRegistration {
    /// One resolver's URL (`resolver = "URL"`), or the resolvers each with its own key
    /// (`[[registration.resolver]]` tables of `url` and `key`): read as any TOML value and
    /// checked below, as `key` is, for the keys in the tables.
    resolver: Option<toml::Value>,
    resolvers: Option<Vec<String>>,
    adminemail: String,
    /// Read as any TOML value and checked below: a key of the wrong type (`key = 1234567890`
    /// unquoted) would otherwise fail in serde with a message that quotes the key itself,
    /// and that message goes to the web server's error log.
    key: Option<toml::Value>,
    ip: String,
    platformversion: Option<String>,
}

/// `[minting]` as read; [`Config::minting`] checks it.
#[derive(Deserialize, Debug, Clone)]
#[cfg_attr(test, derive(PartialEq))]
#[serde(deny_unknown_fields)]
struct RawMinting {
    host: String,
    port: Option<u16>,
    ibipport: Option<u16>,
    ip: Option<String>,
    granularity: Option<toml::Value>,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(Debug, PartialEq))]
#[serde(deny_unknown_fields)]
struct RawAccess {
    networks: Vec<String>,
}

/// The resolver's base URL (resolution standard, §6.1).
pub const DEFAULT_RESOLVER: &str = "http://urlib.net/J8LNKB5R7W/3FUQHC5";

/// The public URL of the resolver whose base URL is `resolver` (`http://urlib.net`
/// for [`DEFAULT_RESOLVER`]): the base URL without its last two path segments, the
/// resolver service's IBI, and spelt one way: the scheme in lower case, without the
/// default port of its scheme (`:80` for http, `:443` for https), no `/` at the end.
pub fn resolver_publicurl(resolver: &str) -> String {
    spelt_url(resolver, 2)
}

/// The public URL `url` of a resolver spelt as [`resolver_publicurl`] spells one (the
/// scheme in lower case, no default port, no `/` at the end): what a persistent URL
/// found in a record names before its IBI, to compare with `[registration]`'s.
pub fn publicurl_spelt(url: &str) -> String {
    spelt_url(url, 0)
}

/// `url` spelt one way (scheme in lower case, no default port, no query or fragment, no
/// empty path segment), without its last `drop` path segments.
fn spelt_url(url: &str, drop: usize) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
    let scheme = scheme.to_ascii_lowercase();
    let (authority, path) = match rest.find(['/', '?', '#']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    let default_port = match scheme.as_str() {
        "https" => ":443",
        _ => ":80",
    };
    // A port after the host (after `]` for an IPv6 address), when it is the default.
    let authority = match authority.strip_suffix(default_port) {
        Some(host) if !host.is_empty() && !host.ends_with(':') => host,
        _ => authority,
    };
    let mut segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    segments.truncate(segments.len().saturating_sub(drop));
    let mut out = format!("{scheme}://{authority}");
    for s in segments {
        out.push('/');
        out.push_str(s);
    }
    out
}

/// A checked `archive.toml`.
#[derive(Debug, Clone)]
pub struct Config {
    /// `hostport` by which the resolver reaches this Archive.
    pub archiveaddress: String,
    /// The IBI of this Archive's service item, as written.
    pub service: Ibi,
    /// The IBI of the platform software, if it has one (else the value `{}`).
    pub platformsoftware: Option<Ibi>,
    /// Where `col/` and the service are reached, without a trailing `/`.
    pub baseurl: String,
    /// The relation subset (§9.2); `None`: every relation of Table 9.5.
    pub relations: Option<Vec<Relation>>,
    pub registration: Option<Registration>,
    /// `[minting]`, checked by [`Config::minting`] for those who mint: the service
    /// never does, and neither pays for the check nor fails on a fault there.
    minting: Option<RawMinting>,
    /// Networks whose clients get the data of restricted items.
    pub networks: Vec<Network>,
    /// `[oai]`: what the OAI-PMH data provider says of itself, and its page size.
    pub oai: Oai,
    /// `[site]`: the face of the Archive's pages.
    pub site: Site,
    /// `[acknowledgments]`: how soon a counted access is on stable storage.
    pub acknowledgments: Acknowledgments,
}

/// `[site]`: who keeps the Archive, as its landing pages show it in their header and
/// footer (see `crate::filelist`), with `[oai] repositoryname`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Site {
    /// The institution that keeps the Archive.
    pub institution: Option<String>,
    /// How to reach its keepers: an e-mail address or an http(s) URL.
    pub contact: Option<Contact>,
    /// Its logo.
    pub logo: Option<Logo>,
}

/// `[site] contact`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Contact {
    Email(String),
    Url(String),
}

/// `[site] logo`: an http(s) URL, or the name of a file of the service item's doc/,
/// which the Archive serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Logo {
    Url(String),
    File(String),
}

/// Most characters of a name of `[site]` or `[oai]`.
const MAX_NAME: usize = 200;

/// `[acknowledgments]`: when the access log (see `crate::acklog`) is synced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Acknowledgments {
    /// How long a counted line may stay unsynced (while acknowledgments keep coming, or
    /// `serve` runs): its line is written before "counted" is answered, and synced by the
    /// first acknowledgment, or `serve`'s timer, that finds the last sync this old. Zero:
    /// each line is synced before its acknowledgment is answered.
    pub sync_interval: Duration,
}

impl Acknowledgments {
    /// `sync_interval` when archive.toml does not say: a power cut may lose the last second
    /// of counts, as an access log that no web server syncs per request would.
    pub const DEFAULT_SYNC_INTERVAL: Duration = Duration::from_secs(1);
    /// The longest `sync_interval` may be set to.
    pub const MAX_SYNC_INTERVAL: Duration = Duration::from_secs(3600);
}

impl Default for Acknowledgments {
    fn default() -> Acknowledgments {
        Acknowledgments {
            sync_interval: Acknowledgments::DEFAULT_SYNC_INTERVAL,
        }
    }
}

/// `[oai]`: the OAI-PMH data provider's settings (see `crate::oai`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oai {
    /// Identify's repositoryName; default `IBI Archive <archiveaddress>`.
    pub repositoryname: Option<String>,
    /// Identify's adminEmail; default `[registration].adminemail`.
    pub adminemail: Option<String>,
    /// Records (or headers) per page of a list.
    pub page_size: usize,
}

impl Oai {
    /// Records per page when archive.toml does not say.
    pub const DEFAULT_PAGE_SIZE: usize = 100;
    /// The most records a page may be set to hold.
    pub const MAX_PAGE_SIZE: usize = 1000;
}

impl Default for Oai {
    fn default() -> Oai {
        Oai {
            repositoryname: None,
            adminemail: None,
            page_size: Oai::DEFAULT_PAGE_SIZE,
        }
    }
}

/// `[registration]`: what inclusion and exclusion requests send (Table 7.2).
#[derive(Clone)]
pub struct Registration {
    /// The resolvers, in the order given, each with the key it is sent: the
    /// `[[registration.resolver]]` tables, each its own key; else `resolvers`, else the one
    /// `resolver`, else [`DEFAULT_RESOLVER`], each sent [`Registration::key`]. Never
    /// empty, no URL twice.
    pub resolvers: Vec<RegisteredResolver>,
    /// `[registration] key`, the one key of the forms without tables, sent to every
    /// resolver (also one given on the command line); `None` with the tables. Never
    /// printed, logged or sent but to a resolver.
    pub key: Option<String>,
    pub adminemail: String,
    pub ip: String,
    pub platformversion: String,
}

/// A resolver of `[registration]` and the registration key (Table 7.1) it is sent.
#[derive(Clone, PartialEq, Eq)]
pub struct RegisteredResolver {
    /// Its base URL.
    pub url: String,
    /// Never printed, logged or sent but to this resolver.
    pub key: String,
}

impl fmt::Debug for RegisteredResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredResolver")
            .field("url", &self.url)
            .field("key", &"<hidden>")
            .finish()
    }
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("resolvers", &self.resolvers)
            .field("key", &self.key.as_ref().map(|_| "<hidden>"))
            .field("adminemail", &self.adminemail)
            .field("ip", &self.ip)
            .field("platformversion", &self.platformversion)
            .finish()
    }
}

impl Registration {
    /// The resolvers' base URLs, in order.
    pub fn urls(&self) -> impl Iterator<Item = &str> {
        self.resolvers.iter().map(|r| r.url.as_str())
    }
}

/// `[minting]`: this Archive's identification subsystem (generation standard), checked
/// whole by [`Config::minting`]: every setting here mints.
#[derive(Debug, Clone)]
pub struct Minting {
    pub host: String,
    pub port: u16,
    /// The port coded in IBIps (Algorithm 5): 800, the standard's usual one, leaves it out.
    pub ibip_port: u16,
    pub ip: Option<IpAddr>,
    /// r of Algorithm 4, as written (`"60"`, `"1"`, `"0.1"`, …); a valid
    /// [`Granularity`].
    pub granularity: String,
}

impl Config {
    /// Reads `<root>/archive.toml`.
    pub fn load(root: &Path) -> Result<Config, ConfigError> {
        let path = root.join("archive.toml");
        let (text, _) = Config::read_text(root, &path)?;
        Config::parse_text(&text).map_err(|e| ConfigError::of(path, e))
    }

    /// [`Config::load`] for the service, which reads archive.toml on every request (a
    /// process each, under a web server): the settings come from
    /// `var/archive.toml.snapshot` while archive.toml keeps the stamp recorded there, and
    /// whoever reads archive.toml writes that snapshot for the next (see `snapshot`).
    /// The same configuration, the same errors, as [`Config::load`]; read-only Archives
    /// and missing, stale or damaged snapshots included.
    pub fn load_for_service(root: &Path) -> Result<Config, ConfigError> {
        let path = root.join("archive.toml");
        let var = root.join("var");
        // Taken before archive.toml is opened: what is read after it is at least as new.
        let before = rustix::fs::stat(&path)
            .ok()
            .map(|st| snapshot::Stamp::of(&st));
        if let Some(stamp) = &before {
            if let Some(config) =
                snapshot::read(&var, stamp).and_then(|raw| Config::check(raw).ok())
            {
                return Ok(config);
            }
        }
        let (text, read) = Config::read_text(root, &path)?;
        let raw = Config::read_raw(&text).map_err(|e| ConfigError::of(path.clone(), e))?;
        let stamp = before.filter(|b| {
            read.is_some_and(|r| r == *b)
                && b.settled(::ibi::time::SystemClock::now())
                && snapshot::writable(&var)
        });
        let bytes = stamp.and_then(|s| snapshot::encode(&s, &raw));
        let config = Config::check(raw)
            .map_err(|message| ConfigError::of(path, TextError::unplaced(message)))?;
        if let Some(bytes) = bytes {
            snapshot::write(&var, &bytes);
        }
        Ok(config)
    }

    /// The text of archive.toml at `path` (of the Archive at `root`), and the stamp of
    /// the file read, taken once it was read (`None` when it could not be taken).
    fn read_text(
        root: &Path,
        path: &Path,
    ) -> Result<(String, Option<snapshot::Stamp>), ConfigError> {
        use std::io::Read;
        /// Far more than any configuration needs.
        const MAX_LEN: u64 = 1 << 20;
        let fail = |message: String| ConfigError {
            path: path.to_path_buf(),
            at: None,
            message,
        };
        // Read through `take`: no `stat` for a size hint (every request reads this file),
        // and a runaway file is not read whole.
        let mut text = String::with_capacity(4096);
        let stamp = std::fs::File::open(path)
            .and_then(|mut f| {
                (&mut f).take(MAX_LEN + 1).read_to_string(&mut text)?;
                Ok(rustix::fs::fstat(&f)
                    .ok()
                    .map(|st| snapshot::Stamp::of(&st)))
            })
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => {
                    fail(not_an_archive(root))
                }
                _ => fail(e.to_string()),
            })?;
        if text.len() as u64 > MAX_LEN {
            return Err(fail(format!("larger than {MAX_LEN} bytes")));
        }
        Ok((text, stamp))
    }

    /// Parses the text of an archive.toml; the error says what is wrong (never the key),
    /// after `LINE:COLUMN: ` when the TOML reader says where (see [`TextError`]).
    pub fn parse(text: &str) -> Result<Config, String> {
        Config::parse_text(text).map_err(|e| e.to_string())
    }

    /// [`Config::parse`], the place of the fault kept apart. What is checked here is
    /// checked once for every user of the configuration — the service, `check`, and the
    /// commands — except what the service never uses: [minting], which those who mint
    /// and `check` check with [`Config::minting`], and the values of [registration],
    /// which `include` and `exclude` check before sending them (`check` calls the same
    /// function). No file is opened and no name resolved: the CGI program parses
    /// archive.toml on every request.
    fn parse_text(text: &str) -> Result<Config, TextError> {
        Config::check(Config::read_raw(text)?).map_err(TextError::unplaced)
    }

    /// What the TOML reader makes of the text of an archive.toml, nothing checked yet.
    fn read_raw(text: &str) -> Result<RawConfig, TextError> {
        toml::from_str(text).map_err(|e| TextError::toml(text, &e))
    }

    /// The checks of [`Config::parse_text`] past the TOML reader, setting by setting.
    fn check(raw: RawConfig) -> Result<Config, String> {
        let archiveaddress = check_address(raw.archiveaddress)?;
        let service =
            Ibi::parse(&raw.archiveserviceibi).map_err(|e| format!("archiveserviceibi: {e}"))?;
        let platformsoftware = match raw.platformsoftware.as_deref() {
            None | Some("") => None,
            Some(s) => Some(Ibi::parse(s).map_err(|e| format!("platformsoftware: {e}"))?),
        };
        let baseurl = check_baseurl(raw.baseurl, &archiveaddress)?;
        let relations = raw
            .relations
            .map(|list| check_relations(&list))
            .transpose()?;
        let registration = raw.registration.map(Registration::check).transpose()?;
        let minting = raw.minting;
        let networks = raw
            .access
            .map(|a| a.networks)
            .unwrap_or_default()
            .iter()
            .map(|n| Network::parse(n))
            .collect::<Result<Vec<_>, _>>()?;
        let oai = raw.oai.map(check_oai).transpose()?.unwrap_or_default();
        let site = raw.site.map(check_site).transpose()?.unwrap_or_default();
        let acknowledgments = raw
            .acknowledgments
            .map(check_acknowledgments)
            .transpose()?
            .unwrap_or_default();
        Ok(Config {
            archiveaddress,
            service,
            platformsoftware,
            baseurl,
            relations,
            registration,
            minting,
            networks,
            oai,
            site,
            acknowledgments,
        })
    }

    /// `[minting]`, checked as `new` mints with it (`None`: there is none): what minting
    /// would refuse at the first item is refused here, for `new`, `init` and `check`
    /// alike.
    pub fn minting(&self) -> Result<Option<Minting>, String> {
        self.minting.clone().map(Minting::check).transpose()
    }

    /// Whether `ip` is inside one of `[access].networks`.
    pub fn client_allowed(&self, ip: Option<IpAddr>) -> bool {
        ip.is_some_and(|ip| self.networks.iter().any(|n| n.contains(ip)))
    }
}

/// `archiveaddress`, which must be a `host[:port]`.
fn check_address(archiveaddress: String) -> Result<String, String> {
    if ::ibi::registration::HostPort::check(&archiveaddress).is_err() {
        return Err(format!(
            "archiveaddress {archiveaddress:?} is not a host[:port]"
        ));
    }
    Ok(archiveaddress)
}

/// `baseurl` as given, else `http://<archiveaddress>`, without a trailing `/`: an http(s)
/// URL of word characters.
fn check_baseurl(given: Option<String>, archiveaddress: &str) -> Result<String, String> {
    // Made and trimmed in place, nothing formatted: archive.toml is checked at every CGI
    // request.
    let mut baseurl = given.unwrap_or_else(|| ["http://", archiveaddress].concat());
    baseurl.truncate(baseurl.trim_end_matches('/').len());
    if !::ibi::escape::is_http_url(&baseurl)
        || baseurl.bytes().any(|b| !::ibi::escape::is_word_byte(b))
    {
        return Err(format!("baseurl {baseurl:?} is not an http(s) URL"));
    }
    Ok(baseurl)
}

/// `relations`, the relation subset offered (§9.2): each a relation, the empty one among
/// them.
fn check_relations(list: &[String]) -> Result<Vec<Relation>, String> {
    let mut out = Vec::with_capacity(list.len());
    for r in list {
        out.push(Relation::parse(r).map_err(|e| format!("relations: {e}"))?);
    }
    if !out.contains(&Relation::itself()) {
        return Err("relations must hold the empty relation \"\"".into());
    }
    Ok(out)
}

/// A name of the table `table`: one line of 1 to [`MAX_NAME`] characters, no control
/// character (names are written into XML and pages).
fn check_name(table: &str, name: &str, v: Option<String>) -> Result<Option<String>, String> {
    match v {
        Some(v)
            if v.trim().is_empty()
                || v.chars().count() > MAX_NAME
                || v.chars().any(char::is_control) =>
        {
            Err(format!(
                "[{table}] {name} must be one line of 1 to {MAX_NAME} characters"
            ))
        }
        v => Ok(v),
    }
}

/// `[site]`, checked: the institution a name (as `[oai]`'s), the contact an e-mail
/// address or an http(s) URL, the logo an http(s) URL or the name of a file (no `/`, no
/// leading `.`) of the service item's doc/ (`check` says when it is missing).
fn check_site(raw: RawSite) -> Result<Site, String> {
    let institution = check_name("site", "institution", raw.institution)?;
    let contact = match raw.contact {
        None => None,
        Some(c) if is_plain_url(&c) => Some(Contact::Url(c)),
        Some(c) if ::ibi::registration::Email::parse(&c).is_ok() => Some(Contact::Email(c)),
        Some(c) => {
            return Err(format!(
                "[site] contact is neither an e-mail address nor an http(s) URL: {}",
                ::ibi::shown(&c)
            ))
        }
    };
    let logo = match raw.logo {
        None => None,
        Some(l) if is_plain_url(&l) => Some(Logo::Url(l)),
        Some(l)
            if !l.is_empty()
                && l.len() <= 255
                && !l.starts_with('.')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)) =>
        {
            Some(Logo::File(l))
        }
        Some(l) => {
            return Err(format!(
                "[site] logo is neither an http(s) URL nor the name of a file of the service item's doc/ (letters, digits, '.', '_', '-'): {}",
                ::ibi::shown(&l)
            ))
        }
    };
    Ok(Site {
        institution,
        contact,
        logo,
    })
}

/// `[oai]`, checked: a page size in 1..=1000, names and addresses of one line of at most
/// 200 characters, none of them a control character (they are written into XML).
fn check_oai(raw: RawOai) -> Result<Oai, String> {
    let text = |name: &str, v: Option<String>| check_name("oai", name, v);
    let page_size = match raw.page_size {
        None => Oai::DEFAULT_PAGE_SIZE,
        Some(n) if (1..=Oai::MAX_PAGE_SIZE as i64).contains(&n) => n as usize,
        Some(n) => {
            return Err(format!(
                "[oai] page_size must be from 1 to {}, not {n}",
                Oai::MAX_PAGE_SIZE
            ))
        }
    };
    let adminemail = text("adminemail", raw.adminemail)?;
    if let Some(a) = &adminemail {
        if ::ibi::registration::Email::parse(a).is_err() {
            return Err(format!(
                "[oai] adminemail is not an e-mail address: {}",
                ::ibi::shown(a)
            ));
        }
    }
    Ok(Oai {
        repositoryname: text("repositoryname", raw.repositoryname)?,
        adminemail,
        page_size,
    })
}

/// `[acknowledgments]`, checked: `sync_interval` a duration from 0 to
/// [`Acknowledgments::MAX_SYNC_INTERVAL`].
fn check_acknowledgments(raw: RawAcknowledgments) -> Result<Acknowledgments, String> {
    const NAME: &str = "[acknowledgments] sync_interval";
    let sync_interval = match raw.sync_interval {
        None => Acknowledgments::DEFAULT_SYNC_INTERVAL,
        Some(toml::Value::String(s)) => {
            parse_duration(&s, Acknowledgments::MAX_SYNC_INTERVAL).map_err(|e| format!("{NAME}: {e}"))?
        }
        Some(toml::Value::Integer(0)) => Duration::ZERO,
        Some(other) => {
            return Err(format!(
                "{NAME} {other} is not a duration: write it in quotes with its unit, as \"1s\" or \"500ms\" (\"0\": synced before each answer)"
            ))
        }
    };
    Ok(Acknowledgments { sync_interval })
}

/// A duration of archive.toml (`"1s"`, `"500ms"`, `"1h"`): a whole number of
/// milliseconds, seconds or hours, at most `max`; `"0"` alone is zero.
fn parse_duration(s: &str, max: Duration) -> Result<Duration, String> {
    use ::ibi::duration::{H, MS, S};
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    let d = ::ibi::duration::parse(s, &[MS, S, H], "1s")?;
    if d > max {
        return Err(format!("{s:?} is more than {}s", max.as_secs()));
    }
    Ok(d)
}

impl Config {
    /// The persistent URL of the item `ibi` (its IBIp, else its rep): `<publicurl>/<ibi>`,
    /// the public URL of this Archive's first resolver (see [`resolver_publicurl`]), the
    /// standard's when archive.toml names none. What a reader cites: it outlives the
    /// Archive's own URLs.
    pub fn persistent_url(&self, ibi: &str) -> String {
        format!("{}/{ibi}", self.first_publicurl())
    }

    /// The Archive service's own URL: `<baseurl>/<archiveserviceibi>`.
    pub fn service_url(&self) -> String {
        format!("{}/{}", self.baseurl, self.service)
    }

    /// The URL of the landing page (the file-list page) of the item `rep`:
    /// `<baseurl>/<archiveserviceibi>/filelist/<rep>`.
    pub fn landing_url(&self, rep: &str) -> String {
        let mut url = self.service_url();
        ::ibi::persistent::push_file_list_path(&mut url, rep);
        url
    }

    /// The IBI a persistent URL at this Archive's first resolver names
    /// (`<publicurl>/<IBI>`, the public URL in any case, as a harvester may write it), as
    /// written after it and read; `None` for any other URL.
    pub fn ibi_of_persistent_url<'a>(&self, url: &'a str) -> Option<(&'a str, Ibi)> {
        let prefix = self.persistent_url("");
        if !url.get(..prefix.len())?.eq_ignore_ascii_case(&prefix) {
            return None;
        }
        let written = &url[prefix.len()..];
        Some((written, Ibi::parse(written).ok()?))
    }

    /// The list of the editions of the item `ibi` at the same resolver, which walks them
    /// across Archives: `<publicurl>/timemap/html/<ibi>` (`ibi::persistent::EDITIONS_PATH`).
    pub fn editions_url(&self, ibi: &str) -> String {
        format!(
            "{}{}/{ibi}",
            self.first_publicurl(),
            ::ibi::persistent::EDITIONS_PATH
        )
    }

    /// The public URL of this Archive's first resolver (the standard's when archive.toml
    /// names none): the first of [`Config::resolver_publicurls`], the others not spelt.
    fn first_publicurl(&self) -> String {
        let first = self
            .registration
            .as_ref()
            .and_then(|r| r.resolvers.first())
            .map_or(DEFAULT_RESOLVER, |r| r.url.as_str());
        resolver_publicurl(first)
    }

    /// The public URLs of this Archive's resolvers, in `[registration]`'s order (the
    /// standard's alone when it names none): those its items' persistent URLs may name.
    pub fn resolver_publicurls(&self) -> Vec<String> {
        match self.registration.as_ref().map(|r| &r.resolvers[..]) {
            Some(resolvers) if !resolvers.is_empty() => resolvers
                .iter()
                .map(|r| resolver_publicurl(&r.url))
                .collect(),
            _ => vec![resolver_publicurl(DEFAULT_RESOLVER)],
        }
    }
}

impl Registration {
    /// `[registration]` with its defaults: the resolver of the resolution standard
    /// (§6.1), this program's version. The resolvers are given in one of three forms:
    /// `[[registration.resolver]]` tables, each a `url` and the `key` that resolver is
    /// sent; or one `key` and the URL of one resolver (`resolver = "URL"`) or a list of
    /// them (`resolvers = [...]`), or none (the standard's). Two forms at once is an
    /// error, and so are an empty list, a URL listed twice, a table without its url or
    /// key, and two tables with one key (a key shared is a key every resolver that takes
    /// it may use at the others: each gets its own). Errors name the setting, never a key.
    /// Its values are checked by `include` and `exclude` before sending them.
    fn check(r: RawRegistration) -> Result<Registration, String> {
        let shared = match r.key {
            None => None,
            Some(toml::Value::String(k)) => Some(k),
            // Never show the value: it may be the key, merely unquoted.
            Some(_) => return Err("registration.key is not a string (write it in quotes)".into()),
        };
        let tables = match &r.resolver {
            Some(toml::Value::Array(list)) => Some(list.as_slice()),
            _ => None,
        };
        let resolvers = if let Some(tables) = tables {
            if r.resolvers.is_some() {
                return Err("[registration] has both [[registration.resolver]] tables and resolvers: name each resolver in a table of its own, with its key".into());
            }
            if shared.is_some() {
                return Err("[registration] has both key and [[registration.resolver]] tables: each resolver's key goes in its table (key = \"...\" after its url); remove key from [registration]".into());
            }
            resolver_tables(tables)?
        } else {
            let one = match r.resolver {
                None => None,
                Some(toml::Value::String(url)) => Some(url),
                Some(_) => return Err("registration.resolver is neither a URL (resolver = \"URL\") nor tables [[registration.resolver]] with url and key".into()),
            };
            let key = shared.clone().ok_or(
                "[registration] has no key: give key = \"...\", or each resolver its own key in [[registration.resolver]] tables (url and key)",
            )?;
            let urls = match (one, r.resolvers) {
                (Some(_), Some(_)) => {
                    return Err("[registration] has both resolver and resolvers: give one resolver = \"URL\" or a list resolvers = [\"URL\", ...], not both".into())
                }
                (Some(one), None) => vec![one],
                (None, Some(list)) => {
                    if list.is_empty() {
                        return Err("registration.resolvers is empty: name at least one resolver (or leave it out for the default)".into());
                    }
                    if let Some((i, twice)) = list
                        .iter()
                        .enumerate()
                        .find(|(i, url)| list[..*i].contains(url))
                    {
                        return Err(format!(
                            "registration.resolvers names {twice:?} twice (entries {} and {})",
                            list.iter().position(|u| u == twice).unwrap_or(0) + 1,
                            i + 1
                        ));
                    }
                    list
                }
                (None, None) => vec![DEFAULT_RESOLVER.to_string()],
            };
            urls.into_iter()
                .map(|url| RegisteredResolver {
                    url,
                    key: key.clone(),
                })
                .collect()
        };
        Ok(Registration {
            resolvers,
            key: shared,
            adminemail: r.adminemail,
            ip: r.ip,
            platformversion: r
                .platformversion
                .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_string()),
        })
    }
}

/// The `[[registration.resolver]]` tables, each checked: a table of a string `url` and a
/// string `key` and nothing else; at least one table, no URL and no key twice. Tables
/// are named by their number (from 1) and URL, never by a key.
fn resolver_tables(tables: &[toml::Value]) -> Result<Vec<RegisteredResolver>, String> {
    if tables.is_empty() {
        return Err("registration.resolver is empty: name at least one resolver, [[registration.resolver]] with its url and key".into());
    }
    let mut out: Vec<RegisteredResolver> = Vec::with_capacity(tables.len());
    for (i, value) in tables.iter().enumerate() {
        let n = i + 1;
        let toml::Value::Table(table) = value else {
            return Err(format!(
                "registration.resolver {n} is not a table of url and key"
            ));
        };
        if let Some(other) = table.keys().find(|k| *k != "url" && *k != "key") {
            return Err(format!(
                "registration.resolver {n} has an unknown field {other:?}: a resolver's table holds url and key"
            ));
        }
        let url = match table.get("url") {
            Some(toml::Value::String(u)) => u.clone(),
            Some(_) => return Err(format!("registration.resolver {n}: url is not a string")),
            None => return Err(format!("registration.resolver {n} has no url")),
        };
        let key = match table.get("key") {
            Some(toml::Value::String(k)) => k.clone(),
            // Never show the value: it may be the key, merely unquoted.
            Some(_) => {
                return Err(format!(
                    "registration.resolver {n} ({url}): key is not a string (write it in quotes)"
                ))
            }
            None => {
                return Err(format!(
                    "registration.resolver {n} ({url}) has no key: each resolver's table holds the key that resolver's operator registered"
                ))
            }
        };
        if let Some(j) = out.iter().position(|r| r.url == url) {
            return Err(format!(
                "registration.resolver names {url:?} twice (tables {} and {n})",
                j + 1
            ));
        }
        if let Some(j) = out.iter().position(|r| r.key == key) {
            return Err(format!(
                "registration.resolver {} ({}) and {n} ({url}) have the same key: give each resolver a key of its own, so that none of them can include this Archive at another address in the others",
                j + 1,
                out[j].url
            ));
        }
        out.push(RegisteredResolver { url, key });
    }
    Ok(out)
}

impl Minting {
    /// Checks `[minting]` as `new` uses it (see [`Config::minting`]).
    fn check(m: RawMinting) -> Result<Minting, String> {
        let port = m.port.unwrap_or(::ibi::mint::REP_DEFAULT_PORT);
        let ibip_port = m.ibipport.unwrap_or(::ibi::mint::IBIP_DEFAULT_PORT);
        for (name, p) in [("port", port), ("ibipport", ibip_port)] {
            if p == 0 {
                return Err(format!("minting.{name} 0 is not a port (1 to 65535)"));
            }
        }
        let ip = match m.ip {
            None => None,
            Some(s) => Some(
                s.parse()
                    .map_err(|_| format!("minting.ip {s:?} is not an IP address"))?,
            ),
        };
        let granularity = match m.granularity {
            None => "1".to_string(),
            Some(toml::Value::Integer(i)) => i.to_string(),
            Some(toml::Value::Float(f)) => f.to_string(),
            Some(toml::Value::String(s)) => s,
            Some(other) => return Err(format!("minting.granularity {other} is not a number")),
        };
        let r =
            Granularity::parse(&granularity).map_err(|e| format!("minting.granularity: {e}"))?;
        crate::minting::check_rep_settings(&m.host, port, r)
            .map_err(|e| format!("minting.host: {e}"))?;
        Ok(Minting {
            host: m.host,
            port,
            ibip_port,
            ip,
            granularity,
        })
    }
}

/// Why a root without archive.toml is not an Archive, and what to do (one line: it goes
/// to the web server's error log too).
fn not_an_archive(root: &Path) -> String {
    let shown = if root.as_os_str().is_empty() || root == Path::new(".") {
        "the current directory".to_string()
    } else {
        root.display().to_string()
    };
    format!(
        "no such file, so {shown} is not an Archive root: give the Archive's root with \
         --root DIR (or set IBI_ARCHIVE_ROOT) or create one with \
         ibi-archive init --root DIR --address HOST[:PORT]"
    )
}

/// An archive.toml that cannot be read or does not hold a valid configuration. Shown as
/// [`located`] writes it: `<path>:LINE:COLUMN: <message>` or `<path>: <message>`.
#[derive(Debug, Clone)]
pub struct ConfigError {
    pub path: PathBuf,
    /// Where in the file, when the TOML reader said.
    pub at: Option<Position>,
    pub message: String,
}

impl ConfigError {
    /// The fault `e` of the archive.toml at `path`.
    fn of(path: PathBuf, e: TextError) -> ConfigError {
        ConfigError {
            path,
            at: e.at,
            message: e.message,
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&located(self.path.display(), self.at, &self.message))
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
archiveaddress = "mtc-m16c.sid.inpe.br"
archiveserviceibi = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17"
"#;

    #[test]
    fn minimal_config_takes_defaults() {
        let c = Config::parse(MINIMAL).unwrap();
        assert_eq!(c.baseurl, "http://mtc-m16c.sid.inpe.br");
        assert!(c.platformsoftware.is_none());
        assert!(c.relations.is_none());
        assert!(!c.client_allowed(Some("150.163.2.175".parse().unwrap())));
    }

    #[test]
    fn each_setting_is_checked_and_named() {
        let with = |line: &str| Config::parse(&format!("{MINIMAL}{line}\n"));
        let c = with("baseurl = \"https://a.b/x/\"\n[registration]\nadminemail = \"a@b\"\nkey = \"1\"\nip = \"1.2.3.4\"").unwrap();
        assert_eq!(c.baseurl, "https://a.b/x");
        let r = c.registration.unwrap();
        assert_eq!(
            (r.urls().collect::<Vec<_>>(), r.platformversion.as_str()),
            (vec![DEFAULT_RESOLVER], env!("CARGO_PKG_VERSION"))
        );
        let c = with("relations = [\"\", \".metadata\"]\n[access]\nnetworks = [\"10.0.0.0/8\"]")
            .unwrap();
        assert_eq!(c.relations.as_ref().map(Vec::len), Some(2));
        assert!(c.client_allowed(Some("10.1.2.3".parse().unwrap())));
        let err = |text: &str| Config::parse(text).unwrap_err();
        assert_eq!(
            err("archiveaddress = \"a/b\"\narchiveserviceibi = \"x\"\n"),
            "archiveaddress \"a/b\" is not a host[:port]"
        );
        assert!(err("archiveaddress = \"a.b\"\narchiveserviceibi = \"x\"\n")
            .starts_with("archiveserviceibi: "));
        assert!(with("platformsoftware = \"x\"")
            .unwrap_err()
            .starts_with("platformsoftware: "));
        assert_eq!(
            with("baseurl = \"ftp://a.b\"").unwrap_err(),
            "baseurl \"ftp://a.b\" is not an http(s) URL"
        );
        assert_eq!(
            with("baseurl = \"https://a.b//\"").map(|c| c.baseurl),
            Ok("https://a.b".to_string())
        );
        assert_eq!(
            with("baseurl = \"http:///\"").unwrap_err(),
            "baseurl \"http:\" is not an http(s) URL"
        );
        assert_eq!(
            err("archiveaddress = \"a.b:x y\"\narchiveserviceibi = \"x\"\n"),
            "archiveaddress \"a.b:x y\" is not a host[:port]"
        );
        assert!(with("relations = [\"\", \"bogus\"]")
            .unwrap_err()
            .starts_with("relations: "));
        assert_eq!(
            with("[access]\nnetworks = [\"10.0.0.0/8\", \"ten\"]").unwrap_err(),
            "access network \"ten\" is not an address block such as 150.163.0.0/16"
        );
    }

    #[test]
    fn the_sync_interval_of_acknowledgments() {
        let with = |line: &str| Config::parse(&format!("{MINIMAL}[acknowledgments]\n{line}\n"));
        let interval = |line: &str| with(line).unwrap().acknowledgments.sync_interval;
        assert_eq!(
            Config::parse(MINIMAL)
                .unwrap()
                .acknowledgments
                .sync_interval,
            Duration::from_secs(1)
        );
        assert_eq!(interval(""), Duration::from_secs(1));
        assert_eq!(interval("sync_interval = \"1s\""), Duration::from_secs(1));
        assert_eq!(
            interval("sync_interval = \"250ms\""),
            Duration::from_millis(250)
        );
        assert_eq!(
            interval("sync_interval = \"1h\""),
            Duration::from_secs(3600)
        );
        for zero in ["\"0\"", "\"0s\"", "\"0ms\"", "0"] {
            assert_eq!(
                interval(&format!("sync_interval = {zero}")),
                Duration::ZERO,
                "{zero}"
            );
        }
        for (value, message) in [
            ("\"1\"", "[acknowledgments] sync_interval: \"1\" has no unit; write it as \"1s\" or \"500ms\""),
            ("\"fast\"", "[acknowledgments] sync_interval: \"fast\" has no unit; write it as \"1s\" or \"500ms\""),
            ("\"-1s\"", "[acknowledgments] sync_interval: \"-1s\" is not a whole number of ms, s or h"),
            ("\"+1s\"", "[acknowledgments] sync_interval: \"+1s\" is not a whole number of ms, s or h"),
            ("\"1.5s\"", "[acknowledgments] sync_interval: \"1.5s\" is not a whole number of ms, s or h"),
            ("\"2h\"", "[acknowledgments] sync_interval: \"2h\" is more than 3600s"),
            ("1", "[acknowledgments] sync_interval 1 is not a duration: write it in quotes with its unit, as \"1s\" or \"500ms\" (\"0\": synced before each answer)"),
        ] {
            assert_eq!(with(&format!("sync_interval = {value}")).unwrap_err(), message, "{value}");
        }
        assert!(with("sync = \"1s\"")
            .unwrap_err()
            .contains("unknown field `sync`"));
    }

    #[test]
    fn the_public_url_of_a_resolver_is_spelt_one_way() {
        for (base, public) in [
            (DEFAULT_RESOLVER, "http://urlib.net"),
            (
                "http://r.example.org:8090/J8LNKB5R7W/3FUQHC5",
                "http://r.example.org:8090",
            ),
            (
                "http://r.example.org:80/J8LNKB5R7W/3FUQHC5",
                "http://r.example.org",
            ),
            (
                "HTTPS://r.example.org:443/J8LNKB5R7W/3FUQHC5/",
                "https://r.example.org",
            ),
            ("https://r.example.org:80/X/Y", "https://r.example.org:80"),
            ("http://[::1]:80/X/Y", "http://[::1]"),
            ("http://[::1]:8080/X/Y", "http://[::1]:8080"),
            ("http://a.org/ibi/J8LNKB5R7W/3FUQHC5", "http://a.org/ibi"),
            ("http://a.org", "http://a.org"),
        ] {
            assert_eq!(resolver_publicurl(base), public, "{base}");
        }
        let with = |registration: &str| {
            Config::parse(&format!("{MINIMAL}\n{registration}"))
                .unwrap()
                .persistent_url("8JMKD3MGP7W/3EPGUE5")
        };
        assert_eq!(with(""), "http://urlib.net/8JMKD3MGP7W/3EPGUE5");
        let reg = "[registration]\nadminemail = \"a@b\"\nkey = \"1\"\nip = \"1.2.3.4\"\n";
        assert_eq!(with(reg), "http://urlib.net/8JMKD3MGP7W/3EPGUE5");
        assert_eq!(
            with(&format!("{reg}resolvers = [\"http://r.example.org:80/J8LNKB5R7W/3FUQHC5\", \"http://urlib.net/J8LNKB5R7W/3FUQHC5\"]\n")),
            "http://r.example.org/8JMKD3MGP7W/3EPGUE5"
        );
    }

    #[test]
    fn one_resolver_or_a_list_of_them() {
        let resolvers = |lines: &str| {
            Config::parse(&format!(
                "{MINIMAL}[registration]\nadminemail = \"a@b.org\"\nkey = \"1234567890\"\nip = \"1.2.3.4\"\n{lines}"
            ))
            .map(|c| {
                let r = c.registration.unwrap();
                // The one key of these forms goes to each of them.
                assert!(r.resolvers.iter().all(|each| each.key == "1234567890"));
                r.urls().map(str::to_string).collect::<Vec<_>>()
            })
        };
        let urls = |list: &[&str]| list.iter().map(|u| u.to_string()).collect::<Vec<_>>();
        // Neither: the standard's resolver.
        assert_eq!(resolvers(""), Ok(urls(&[DEFAULT_RESOLVER])));
        // The one-resolver form.
        assert_eq!(
            resolvers("resolver = \"http://a.org/J8LNKB5R7W/3FUQHC5\"\n"),
            Ok(urls(&["http://a.org/J8LNKB5R7W/3FUQHC5"]))
        );
        // A list, in its order.
        assert_eq!(
            resolvers("resolvers = [\"http://b.org/X\", \"http://a.org/X\"]\n"),
            Ok(urls(&["http://b.org/X", "http://a.org/X"]))
        );
        assert_eq!(
            resolvers("resolvers = [\"http://a.org/X\"]\n"),
            Ok(urls(&["http://a.org/X"]))
        );
        // Both: an error that says which to keep.
        assert_eq!(
            resolvers("resolver = \"http://a.org/X\"\nresolvers = [\"http://b.org/X\"]\n"),
            Err("[registration] has both resolver and resolvers: give one resolver = \"URL\" or a list resolvers = [\"URL\", ...], not both".into())
        );
        assert_eq!(
            resolvers("resolvers = []\n"),
            Err("registration.resolvers is empty: name at least one resolver (or leave it out for the default)".into())
        );
        assert_eq!(
            resolvers("resolvers = [\"http://a.org/X\", \"http://b.org/X\", \"http://a.org/X\"]\n"),
            Err("registration.resolvers names \"http://a.org/X\" twice (entries 1 and 3)".into())
        );
        // Not a list of strings: placed by the TOML reader.
        assert!(resolvers("resolvers = \"http://a.org/X\"\n")
            .unwrap_err()
            .starts_with("8:13: invalid type: string"));
    }

    #[test]
    fn each_resolver_with_its_own_key_in_a_table() {
        let head = format!("{MINIMAL}[registration]\nadminemail = \"a@b.org\"\nip = \"1.2.3.4\"\n");
        let table = |url: &str, key: &str| {
            format!("[[registration.resolver]]\nurl = \"{url}\"\nkey = \"{key}\"\n")
        };
        let parse = |text: String| Config::parse(&text).map(|c| c.registration.unwrap());
        let r = parse(format!(
            "{head}{}{}",
            table("http://b.org/X", "1111111111"),
            table("http://a.org/X", "2222222222-3333333333")
        ))
        .unwrap();
        assert_eq!(
            r.resolvers
                .iter()
                .map(|r| (r.url.as_str(), r.key.as_str()))
                .collect::<Vec<_>>(),
            [
                ("http://b.org/X", "1111111111"),
                ("http://a.org/X", "2222222222-3333333333")
            ]
        );
        assert_eq!(r.key, None);
        // Neither Debug output shows a key.
        let shown = format!("{r:?}");
        assert!(
            !shown.contains("1111111111") && !shown.contains("2222222222"),
            "{shown}"
        );
        // Inline tables are the same tables.
        let inline = parse(format!(
            "{head}resolver = [{{ url = \"http://a.org/X\", key = \"1111111111\" }}]\n"
        ))
        .unwrap();
        assert_eq!(inline.urls().collect::<Vec<_>>(), ["http://a.org/X"]);
        let err = |text: String| parse(text).unwrap_err();
        for (text, message) in [
            (
                format!("{head}key = \"9999999999\"\n{}", table("http://a.org/X", "1111111111")),
                "[registration] has both key and [[registration.resolver]] tables: each resolver's key goes in its table (key = \"...\" after its url); remove key from [registration]".to_string(),
            ),
            (
                format!("{head}resolvers = [\"http://c.org/X\"]\n{}", table("http://a.org/X", "1111111111")),
                "[registration] has both [[registration.resolver]] tables and resolvers: name each resolver in a table of its own, with its key".to_string(),
            ),
            (
                format!("{head}{}{}", table("http://a.org/X", "1111111111"), table("http://b.org/X", "1111111111")),
                "registration.resolver 1 (http://a.org/X) and 2 (http://b.org/X) have the same key: give each resolver a key of its own, so that none of them can include this Archive at another address in the others".to_string(),
            ),
            (
                format!("{head}{}{}", table("http://a.org/X", "1111111111"), table("http://a.org/X", "2222222222")),
                "registration.resolver names \"http://a.org/X\" twice (tables 1 and 2)".to_string(),
            ),
            (
                format!("{head}[[registration.resolver]]\nurl = \"http://a.org/X\"\n"),
                "registration.resolver 1 (http://a.org/X) has no key: each resolver's table holds the key that resolver's operator registered".to_string(),
            ),
            (
                format!("{head}[[registration.resolver]]\nkey = \"1111111111\"\n"),
                "registration.resolver 1 has no url".to_string(),
            ),
            (
                format!("{head}[[registration.resolver]]\nurl = \"http://a.org/X\"\nkey = 9876543210\n"),
                "registration.resolver 1 (http://a.org/X): key is not a string (write it in quotes)".to_string(),
            ),
            (
                format!("{head}[[registration.resolver]]\nurl = \"http://a.org/X\"\nkey = \"1111111111\"\nkye = \"9876543210\"\n"),
                "registration.resolver 1 has an unknown field \"kye\": a resolver's table holds url and key".to_string(),
            ),
            (
                format!("{head}resolver = []\n"),
                "registration.resolver is empty: name at least one resolver, [[registration.resolver]] with its url and key".to_string(),
            ),
            (
                format!("{head}resolver = \"http://a.org/X\"\n"),
                "[registration] has no key: give key = \"...\", or each resolver its own key in [[registration.resolver]] tables (url and key)".to_string(),
            ),
            (
                format!("{head}resolver = 7\n"),
                "registration.resolver is neither a URL (resolver = \"URL\") nor tables [[registration.resolver]] with url and key".to_string(),
            ),
        ] {
            let got = err(text.clone());
            assert_eq!(got, message, "{text}");
            assert!(!got.contains("9876543210"), "{got}");
        }
    }

    #[test]
    fn toml_errors_are_placed_and_never_show_the_key() {
        let err = Config::parse(&format!(
            "{MINIMAL}[registration]\nadminemail = \"a@b\"\nkey = 9876543210abc\nip = \"1\"\n"
        ))
        .unwrap_err();
        assert_eq!(
            err,
            "6:7: string values must be quoted, expected literal string"
        );
        let err = Config::parse(&format!(
            "{MINIMAL}[minting]\nhost = \"a.b.org\"\nport = 70000\n"
        ))
        .unwrap_err();
        assert_eq!(err, "6:8: invalid value: integer `70000`, expected u16");
        // A fault past the TOML reader has no place, but names the setting.
        let err = Config::parse(&format!("{MINIMAL}[minting]\nhost = \"localhost\"\n"))
            .unwrap()
            .minting()
            .unwrap_err();
        assert!(err.starts_with("minting.host: "), "{err}");
    }

    #[test]
    fn minting_is_checked_as_new_mints() {
        let minting = |lines: &str| {
            Config::parse(&format!("{MINIMAL}[minting]\n{lines}\n"))
                .unwrap()
                .minting()
                .map(Option::unwrap)
        };
        let m = minting("host = \"archive.example.org\"").unwrap();
        assert_eq!(
            (m.port, m.ibip_port, m.granularity.as_str()),
            (80, 800, "1")
        );
        for (given, kept) in [
            ("60", "60"),
            ("60.0", "60"),
            ("0.01", "0.01"),
            ("1e-3", "0.001"),
            ("\"0.10\"", "0.10"),
        ] {
            let m = minting(&format!("host = \"a.b.org\"\ngranularity = {given}")).unwrap();
            assert_eq!(m.granularity, kept, "{given}");
        }
        let bad_r = |r: &str| {
            format!("minting.granularity: invalid granularity \"{r}\": expected 60, 1, 0.1, 0.01, ... or 0.000000001 (seconds)")
        };
        for (lines, want) in [
            ("host = \"a.b.org\"\ngranularity = 7", bad_r("7")),
            ("host = \"a.b.org\"\ngranularity = 0.5", bad_r("0.5")),
            ("host = \"a.b.org\"\ngranularity = -1", bad_r("-1")),
            ("host = \"a.b.org\"\ngranularity = \"fast\"", bad_r("fast")),
            (
                "host = \"a.b.org\"\ngranularity = true",
                "minting.granularity true is not a number".to_string(),
            ),
            (
                "host = \"localhost\"",
                "minting.host: invalid hostname \"localhost\": it has no dot, so it cannot be split into a word and a subdomain".to_string(),
            ),
            (
                "host = \"a_b.org\"",
                "minting.host: invalid hostname \"a_b.org\": word \"a_b\" holds '_', which is not a letter, digit or '-'".to_string(),
            ),
            (
                "host = \"a.b.org\"\nport = 0",
                "minting.port 0 is not a port (1 to 65535)".to_string(),
            ),
            (
                "host = \"a.b.org\"\nibipport = 0",
                "minting.ibipport 0 is not a port (1 to 65535)".to_string(),
            ),
            (
                "host = \"a.b.org\"\nip = \"a.b.org\"",
                "minting.ip \"a.b.org\" is not an IP address".to_string(),
            ),
        ] {
            assert_eq!(minting(lines).unwrap_err(), want, "{lines}");
        }
    }

    #[test]
    fn a_root_without_archive_toml_is_said_to_be_no_archive() {
        let dir = tempfile::tempdir().unwrap();
        let err = Config::load(dir.path()).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}/archive.toml: no such file, so {} is not an Archive root: give the Archive's root with --root DIR (or set IBI_ARCHIVE_ROOT) or create one with ibi-archive init --root DIR --address HOST[:PORT]",
                dir.path().display(),
                dir.path().display()
            )
        );
        let err = Config::load(Path::new(".")).map(|_| ()).unwrap_err();
        assert!(err.to_string().starts_with(
            "./archive.toml: no such file, so the current directory is not an Archive root: "
        ));
        // A file where the root should be a directory.
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        let err = Config::load(&file).unwrap_err();
        assert!(err.message.starts_with("no such file, so "), "{err}");
        // A TOML error: placed.
        std::fs::write(dir.path().join("archive.toml"), format!("{MINIMAL}x = 1\n")).unwrap();
        let err = Config::load(dir.path()).unwrap_err();
        assert!(
            err.to_string().starts_with(&format!(
                "{}/archive.toml:4:1: unknown field `x`",
                dir.path().display()
            )),
            "{err}"
        );
    }

    #[test]
    fn errors_name_the_field_and_never_the_key() {
        let text = format!("{MINIMAL}relations = [\".metadata\"]\n");
        assert_eq!(
            Config::parse(&text).unwrap_err(),
            "relations must hold the empty relation \"\""
        );
        let text = format!("{MINIMAL}[registration]\nadminemail = \"a@b\"\nkey = \"9876543210\"\nip = \"127.0.0.1\"\nbogus = 1\n");
        let err = Config::parse(&text).unwrap_err();
        assert!(err.contains("bogus"), "{err}");
        assert!(!err.contains("9876543210"), "{err}");
        let text = format!("{MINIMAL}[registration]\nadminemail = \"a@b\"\nkey = \"9876543210\"\nip = \"127.0.0.1\"\n");
        let dbg = format!("{:?}", Config::parse(&text).unwrap());
        assert!(!dbg.contains("9876543210"), "{dbg}");
    }
}
