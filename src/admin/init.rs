//! `init`: a new Archive in an empty directory — a commented `archive.toml`, `col/` with
//! the Archive service item, `var/` with the temporal distributor primed by the service
//! item's date (so `new` never mints that date again) and the prefixes of `col/`
//! remembered (`var/col-prefixes`).
//!
//! The service item is minted as `new` mints (same distributor, same rule for the ports
//! of the two forms) from the settings written to `[minting]`, and `archive.toml` is
//! checked by the same parser the service uses before it is written. Nothing that exists
//! is overwritten: a root that already holds `archive.toml`, `col/` or `var/` is refused.
//! When a step fails, what was made is removed again.

use std::fs;
use std::net::{IpAddr, ToSocketAddrs};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use super::itemfile::Draft;
use super::new_item::{install, refresh_prefixes};
use super::{io_err, AdminError};
use crate::config::{Config, DEFAULT_RESOLVER};
use crate::item::State;
use crate::minting::distributor::{Distributor, Granularity};
use ::ibi::mint::{mint_ports, rep_prefix, IBIP_DEFAULT_PORT, REP_DEFAULT_PORT};
use ::ibi::registration::{Email, Key};
use ::ibi::time::Clock;
use ::ibi::{Ibip, Rep};

/// What to create.
#[derive(Debug, Clone)]
pub struct InitRequest {
    /// `host[:port]` by which the resolver and readers reach the Archive's web server.
    pub address: String,
    /// The fully qualified name of the host that mints (the rep's prefix); default: the
    /// host of `address`.
    pub host: Option<String>,
    /// The IP coded in IBIps; default: the host of `address`, resolved.
    pub ip: Option<IpAddr>,
    /// Where `col/` and the service are reached, when not `http://<address>`.
    pub baseurl: Option<String>,
    pub granularity: Granularity,
    /// The administrator's e-mail: with it, `[registration]` is written, with a new key.
    pub email: Option<String>,
    /// The resolvers `[registration]` names, in order (none: the standard's, urlib.net).
    pub resolvers: Vec<String>,
    /// The web server's user, given var/ when init runs as root (None: www-data).
    pub web_user: Option<String>,
}

/// What was created.
#[derive(Debug, Clone)]
pub struct Initialized {
    pub config: Config,
    /// The Archive service item.
    pub service: Rep,
    pub ibip: Option<Ibip>,
    /// The port of `--address`, the one the web server must listen on.
    pub port: u16,
    /// Whether `[registration]` was written (with a new registration key).
    pub registration: bool,
    /// Things the administrator should know.
    pub notes: Vec<String>,
}

/// The entries of a root that make it (part of) an Archive.
const ARCHIVE_ENTRIES: [&str; 3] = ["archive.toml", "col", "var"];

/// Creates an Archive at `root` (made if missing; it must not hold one); the service
/// item's IBI is minted on `clock`, and the item records the time it gives once minted.
pub fn init(root: &Path, req: &InitRequest, clock: &dyn Clock) -> Result<Initialized, AdminError> {
    for name in ARCHIVE_ENTRIES {
        let path = root.join(name);
        if fs::symlink_metadata(&path).is_ok() {
            return Err(AdminError::new(format!(
                "{} exists: {} already holds an Archive (or part of one), and init overwrites nothing",
                path.display(),
                root.display()
            )));
        }
    }
    let (addr_host, port) = split_address(&req.address)?;
    let host = match &req.host {
        Some(h) => h.clone(),
        None if addr_host.parse::<IpAddr>().is_ok() || !addr_host.contains('.') => {
            return Err(AdminError::new(format!(
                "--address {}: {addr_host:?} is not a fully qualified host name, which the \
                 IBIs of this Archive are made of: give --host, e.g. --host archive.example.org",
                req.address
            )))
        }
        None => addr_host.clone(),
    };
    rep_prefix(&host, port).map_err(|e| AdminError::new(format!("--host: {e}")))?;
    let ip = match req.ip {
        Some(ip) => ip,
        None => address_ip(&addr_host, port)?,
    };
    if let Some(email) = &req.email {
        if Email::parse(email).is_err() {
            return Err(AdminError::new(format!(
                "--email {email:?} is not an e-mail address such as banon@dpi.inpe.br"
            )));
        }
    }
    let made_root = !root.exists();
    fs::create_dir_all(root).map_err(|e| io_err("cannot create", root, e))?;
    let made = Made {
        root: root.to_path_buf(),
        made_root,
        done: false,
    };
    // var/ holds the urlkey secret and the access log: the web server's user alone.
    let var = root.join("var");
    fs::DirBuilder::new()
        .mode(0o700)
        .create(&var)
        .map_err(|e| io_err("cannot create", &var, e))?;
    crate::var_owner::give_new_var(&var, req.web_user.as_deref())
        .map_err(|e| io_err("cannot give to the web server's user", &var, e))?;
    let col = root.join("col");
    fs::DirBuilder::new()
        .mode(0o755)
        .create(&col)
        .map_err(|e| io_err("cannot create", &col, e))?;

    let date = Distributor::new(var.join("minting.state"), req.granularity, clock)
        .next()
        .map_err(|e| AdminError::new(format!("cannot mint: {e}")))?;
    let now = clock.now();
    let minted = mint_ports(&host, port, Some(ip), IBIP_DEFAULT_PORT, &date)
        .map_err(|e| AdminError::new(format!("cannot mint: {e}")))?;
    let settings = Settings {
        address: &req.address,
        service: &minted.rep,
        baseurl: req.baseurl.as_deref(),
        host: &host,
        port,
        ip,
        granularity: req.granularity,
        email: req.email.as_deref(),
        keys: req
            .email
            .as_ref()
            .map(|_| (0..req.resolvers.len().max(1)).map(|_| new_key()).collect()),
        resolvers: &req.resolvers,
    };
    let text = settings.archive_toml();
    let config = Config::parse(&text)
        .and_then(|c| c.minting().map(|_| c))
        .map_err(|e| AdminError::new(format!("the archive.toml made would not be valid: {e}")))?;
    write_private(&root.join("archive.toml"), text.as_bytes())?;

    let draft = Draft {
        state: Some(State::Original),
        ibip: minted.ibip.as_ref().map(|p| p.as_str().to_string()),
        timestamp: Some(now),
        ..Draft::default()
    };
    install(&col, &minted.rep, &draft, |_| Ok(()))?;
    let mut notes = refresh_prefixes(root, clock);
    // The order trap: the persistent URLs `new` writes name the first resolver; without
    // one given, the standard's, which may not be the resolver this Archive will join.
    if req.resolvers.is_empty() {
        notes.push(format!(
            "no --resolver given: this Archive takes the resolver of the resolution standard, {}; the persistent URL of every item new describes names it ({}/<IBI>, in its metadata); to name your own resolver, give --resolver URL (or set [registration] in archive.toml) before the first new (check notes the items made before it, and check --fix rewrites them)",
            crate::config::DEFAULT_RESOLVER,
            crate::config::resolver_publicurl(crate::config::DEFAULT_RESOLVER)
        ));
    }
    made.keep();
    Ok(Initialized {
        config,
        service: minted.rep,
        ibip: minted.ibip,
        port,
        registration: req.email.is_some(),
        notes,
    })
}

/// The host and port of `host[:port]` (`[v6]:port` for an IPv6 address).
fn split_address(address: &str) -> Result<(String, u16), AdminError> {
    let bad = || {
        AdminError::new(format!(
            "--address {address:?}: expected HOST or HOST:PORT, such as archive.example.org or localhost:8081"
        ))
    };
    let (host, port) = if let Some(rest) = address.strip_prefix('[') {
        let (v6, after) = rest.split_once(']').ok_or_else(bad)?;
        (v6, after.strip_prefix(':'))
    } else {
        match address.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (address, None),
        }
    };
    let port = match port {
        None => REP_DEFAULT_PORT,
        Some(p) => p.parse::<u16>().ok().filter(|&p| p != 0).ok_or_else(bad)?,
    };
    if host.is_empty() || host.contains(['/', ' ', '?', '#', '@', ':']) && !address.starts_with('[')
    {
        return Err(bad());
    }
    Ok((host.to_string(), port))
}

/// The IP of the address's host: itself when it is one, else what it resolves to (IPv4
/// first).
fn address_ip(host: &str, port: u16) -> Result<IpAddr, AdminError> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(ip);
    }
    let addrs: Vec<IpAddr> = (host, port)
        .to_socket_addrs()
        .map(|a| a.map(|s| s.ip()).collect())
        .unwrap_or_default();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| {
            AdminError::new(format!(
                "cannot find the IP address of {host:?}, which the IBIps of this Archive code: give --ip"
            ))
        })
}

/// A new registration key by rule `chave` of Table 7.1: two groups of ten digits.
fn new_key() -> String {
    let key = format!(
        "{:010}-{:010}",
        rand::random_range(0..10_000_000_000u64),
        rand::random_range(0..10_000_000_000u64)
    );
    debug_assert!(Key::parse(&key).is_ok());
    key
}

/// Creates `path` (it must not exist) with `bytes`, readable by its owner alone, whole or
/// not at all (see [`::ibi::atomic`]).
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), AdminError> {
    ::ibi::atomic::create(path, bytes, 0o600).map_err(|e| io_err("cannot create", path, e))
}

/// What `init` made, removed again unless [`Made::keep`] is called.
struct Made {
    root: PathBuf,
    made_root: bool,
    done: bool,
}

impl Made {
    fn keep(mut self) {
        self.done = true;
    }
}

impl Drop for Made {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        // Only what init made: the root held none of these before.
        let _ = fs::remove_file(self.root.join("archive.toml"));
        let _ = fs::remove_dir_all(self.root.join("col"));
        let _ = fs::remove_dir_all(self.root.join("var"));
        if self.made_root {
            let _ = fs::remove_dir(&self.root);
        }
    }
}

/// The values of a new archive.toml.
struct Settings<'a> {
    address: &'a str,
    service: &'a Rep,
    baseurl: Option<&'a str>,
    host: &'a str,
    port: u16,
    ip: IpAddr,
    granularity: Granularity,
    email: Option<&'a str>,
    /// A new key for each resolver (the default one when none is named), in order.
    keys: Option<Vec<String>>,
    resolvers: &'a [String],
}

impl Settings<'_> {
    /// The text of archive.toml, every setting explained.
    fn archive_toml(&self) -> String {
        let q = |s: &str| toml::Value::String(s.to_string()).to_string();
        let baseurl = match self.baseurl {
            Some(u) => format!("baseurl           = {}", q(u)),
            None => format!(
                "#baseurl          = \"https://{}\"",
                self.address.split(':').next().unwrap_or(self.address)
            ),
        };
        let registration = match (self.email, &self.keys) {
            (Some(email), Some(keys)) => {
                let default = [DEFAULT_RESOLVER.to_string()];
                let urls = if self.resolvers.is_empty() {
                    &default[..]
                } else {
                    self.resolvers
                };
                let tables: String = urls
                    .iter()
                    .zip(keys)
                    .map(|(url, key)| {
                        format!(
                            "\n[[registration.resolver]]\nurl = {}\nkey = {}\n",
                            q(url),
                            q(key)
                        )
                    })
                    .collect();
                format!(
                    "[registration]\n\
                     adminemail = {}\n\
                     ip         = {}\n\
                     # Each resolver, and the key registered with it: a key of its own, never\n\
                     # printed, logged or sent but to that resolver (whoever holds a key can\n\
                     # include this Archive at another address in each resolver that takes it).\n\
                     {tables}",
                    q(email),
                    q(&self.ip.to_string()),
                )
            }
            _ => format!(
                "#[registration]\n\
                 #adminemail = \"admin@example.org\"\n\
                 #ip         = {}\n\
                 # Each resolver and its own key (rule chave: 10 or more digits, optionally - and\n\
                 # 10 more); a table like this one for each.\n\
                 #[[registration.resolver]]\n\
                 #url = {}\n\
                 #key = \"1234567890-1234567890\"\n",
                q(&self.ip.to_string()),
                q(DEFAULT_RESOLVER),
            ),
        };
        format!(
            "# The configuration of this Archive (made by ibi-archive init). The web server's user\n\
             # reads it (it may hold the registration key: keep it from other users, e.g. mode 640\n\
             # and the web server's group); ibi-archive check tells what is wrong in it.\n\
             \n\
             # host[:port] by which the resolver and readers reach this Archive's web server. Every\n\
             # URL the service hands out starts with http://<archiveaddress> (or baseurl): serving\n\
             # the Archive on another port (Apache's Listen, lighttpd's server.port) means\n\
             # writing that port here too.\n\
             archiveaddress    = {address}\n\
             # The Archive service item, col/<this IBI>/: the web server maps the service at\n\
             # /<this IBI> (IBI_ARCHIVE_SERVICE_IBI in the web server's configuration: the Debian\n\
             # package's /etc/apache2/conf-available/ibi-archive.conf).\n\
             archiveserviceibi = {service}\n\
             # Where col/ and the service are reached, when not http://<archiveaddress>: e.g.\n\
             # https://<host> behind TLS (the administrator's guide, \"TLS\"), while the resolvers keep asking at\n\
             # archiveaddress.\n\
             {baseurl}\n\
             # The IBI of the platform software (absent: the answers give the value {{}}).\n\
             #platformsoftware = \"dpi.inpe.br/banon/1998/08.02.08.56\"\n\
             # The relations offered (default: all).\n\
             #relations        = [\"\", \".lastedition\", \".metadata\", \".translation\"]\n\
             \n\
             # How ibi-archive new mints IBIs. Every IBI is made of these settings and of the date:\n\
             # change none of them once items exist.\n\
             [minting]\n\
             host        = {host}   # the fully qualified name that begins every rep\n\
             port        = {port}   # the port in the rep (80 is left out)\n\
             ibipport    = {ibipport}   # the port coded in the IBIp (800 is left out)\n\
             ip          = {ip}   # the IP address coded in the IBIp\n\
             granularity = {granularity}   # seconds between two IBIs: 60, 1, 0.1, 0.01, ...\n\
             \n\
             # Joining resolvers (ibi-archive include / exclude): send each resolver's operator the\n\
             # archiveserviceibi above and the key of that resolver below, then run\n\
             # ibi-archive include.\n\
             {registration}\
             \n\
             # Clients in these networks get the data of restricted items; others their metadata.\n\
             #[access]\n\
             #networks = [\"150.163.0.0/16\"]\n",
            address = q(self.address),
            service = q(self.service.as_str()),
            host = q(self.host),
            port = self.port,
            ibipport = IBIP_DEFAULT_PORT,
            ip = q(&self.ip.to_string()),
            granularity = q(&self.granularity.to_string()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        let ok = |a: &str| split_address(a).unwrap();
        assert_eq!(
            ok("archive.example.org"),
            ("archive.example.org".into(), 80)
        );
        assert_eq!(ok("localhost:8081"), ("localhost".into(), 8081));
        assert_eq!(ok("[::1]:8081"), ("::1".into(), 8081));
        for bad in [
            "",
            ":80",
            "a.org:0",
            "a.org:x",
            "a.org:70000",
            "a/b",
            "[::1",
        ] {
            assert!(split_address(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn keys_follow_rule_chave() {
        for _ in 0..100 {
            let k = new_key();
            assert!(Key::parse(&k).is_ok(), "{k}");
            assert_eq!(k.len(), 21);
        }
    }
}
