//! The beginning of a resolver (`ibi-resolver init`): its service IBI minted from its
//! public URL, its settings written (a new resolver.toml, every setting commented) or
//! completed (the Debian package's, which ships `serviceibi` and `publicurl` commented
//! out), and its registry created with the owner of the directory that holds it.
//!
//! Files are handled from a descriptor of their directory, never following a link at
//! their name ([`read_at`]); a settings file is written by `ibi::atomic`: replaced through
//! a temporary file beside it, renamed over it with the old file's owner and mode; a new
//! one linked in only where nothing has its name.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::BorrowedFd;
use std::path::Path;

use ibi::mint::{ibip_prefix, rep_prefix};
use ibi::{Ibi, IbiDate};
use rustix::fs::{self as rfs, Mode, OFlags, Stat};

use crate::config::{self, PublicUrl};
use crate::store::Database;

/// The resolver service's IBI for `url` at `seconds` (POSIX time) by the rule of the
/// generation standard for the server readers reach: a host name gives the rep of that
/// name and port (Algorithms 1–3: `resolver.example.org` gives
/// `example.org/resolver/YYYY/MM.DD.hh.mm[.ss]`, port 80 left out, any other port after
/// a `.`), an IP address the IBIp of that address and port (Algorithms 5–7, port 800
/// left out). The date is `seconds` whole, as `ibi-archive ibi mint --date` takes it.
pub fn mint_serviceibi(url: &PublicUrl, seconds: i64) -> Result<Ibi, String> {
    let date = IbiDate::new(seconds, "").map_err(|e| e.to_string())?;
    let ip = match &url.host {
        url::Host::Domain(name) => {
            let prefix = rep_prefix(name, url.port).map_err(|e| {
                format!(
                    "cannot mint the resolver's IBI from publicurl {}: {e} (a rep is made of a host name with a dot, or an IBIp of an IP address)",
                    url.plain
                )
            })?;
            return Ibi::parse(&format!("{prefix}/{}", date.rep_suffix()))
                .map_err(|e| e.to_string());
        }
        url::Host::Ipv4(a) => std::net::IpAddr::V4(*a),
        url::Host::Ipv6(a) => std::net::IpAddr::V6(*a),
    };
    let suffix = date.ibip_suffix().map_err(|e| e.to_string())?;
    Ibi::parse(&format!("{}/{suffix}", ibip_prefix(ip, url.port))).map_err(|e| e.to_string())
}

/// A new resolver.toml: `serviceibi` and `publicurl` set, every other setting written
/// with its default value (`[archives] networks`, whose absence means public addresses
/// only, commented out) and a comment saying what it does.
pub fn template(serviceibi: &str, publicurl: &str) -> String {
    format!(
        r#"# resolver.toml: the settings of ibi-resolver, written by `ibi-resolver init`. Every
# command reads it: `--config FILE` names it, else the environment variable
# IBI_RESOLVER_CONFIG, else /etc/ibi-resolver/resolver.toml. Every setting is described in
# the README of ibi-archive ("resolver.toml") and in ibi-resolver(1).

# The resolver service's IBI, minted by init from publicurl's host: its service answers at
# <publicurl>/<serviceibi>, the URL an Archive names in [registration] of its archive.toml
# (a [[registration.resolver]] table's url). Keep it: Archives know the resolver by it.
serviceibi = "{serviceibi}"
# How readers reach this resolver, http(s)://host[:port] without a path: persistent URLs
# are <publicurl>/<IBI>..., and the acknowledgments sent to Archives name it.
publicurl = "{publicurl}"

# Where `ibi-resolver serve` listens: on loopback, behind the web server that readers
# reach (resolver/deploy/apache2-ibi-resolver.conf puts Apache in front).
listen = "{listen}"

# The registry (SQLite, mode 600): a path relative to this file's directory, or absolute;
# or a PostgreSQL database several resolvers share: postgresql://USER:PASSWORD@HOST1,HOST2/DB?target_session_attrs=read-write
database = "{database}"

# X-Forwarded-For is believed only from these (the web server in front, on this machine).
trustedproxies = ["127.0.0.1/32"]

[archives]
# Each request to one Archive, connection included (1ms..30s).
timeout = "2s"
# The addresses Archives may have. Without this setting only public addresses: a
# registered Archive cannot make the resolver a client of a private network. Archives on
# this machine or a private network need them listed, e.g.:
#networks = ["127.0.0.0/8", "::1/128", "10.0.0.0/8"]
# Failures in a row after which an Archive is dormant, asked no more until it answers
# (0: never).
dormant_after = {dormant_after}
# How often a dormant Archive is asked whether it answers again (1s..3600s).
probe = "30s"
# Connections open to one Archive at most (1..1024).
connections = {per_archive}

[memory]
# IBIs whose Archive is remembered (0: none; at most 1000000, about 150 bytes each).
entries = {entries}
# A remembered Archive is verified again by every Archive after this long (1ms..365d).
expiry = "1d"

[limits]
# Resolutions under way at once; beyond, 503 with Retry-After.
resolutions = {resolutions}
# Client connections held at once; beyond, new ones are closed.
connections = {connections}
# Resolutions under way from one client network (an IPv4 /24, an IPv6 /64); beyond, 429.
per_client_resolutions = {per_client_resolutions}
# Resolutions a second that ask every Archive, per client network (bursts of 5 s' worth);
# beyond, 429.
per_client_misses = {per_client_misses}
# Connections open from one client network (not a trusted proxy's); beyond, 429 and
# closed.
per_client_connections = {per_client_connections}

[metrics]
# The readers who may see /metrics.
networks = ["127.0.0.0/8", "::1/128"]

# Who runs this resolver, named in the header and the footer of its pages (each line
# optional): a name (at most 200 characters), and a contact, an http(s) URL or an e-mail
# address.
#[site]
#name = "Biblioteca do INPE"
#contact = "urlib@inpe.br"
"#,
        listen = config::DEFAULT_LISTEN,
        database = config::DEFAULT_DATABASE,
        dormant_after = config::DEFAULT_DORMANT_AFTER,
        per_archive = crate::client::DEFAULT_PER_ARCHIVE,
        entries = config::DEFAULT_MEMORY_ENTRIES,
        resolutions = config::DEFAULT_RESOLUTIONS,
        connections = config::DEFAULT_CONNECTIONS,
        per_client_resolutions = config::DEFAULT_PER_CLIENT_RESOLUTIONS,
        per_client_misses = config::DEFAULT_PER_CLIENT_MISSES,
        per_client_connections = config::DEFAULT_PER_CLIENT_CONNECTIONS,
    )
}

/// Why [`set_identity`] did not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetError {
    /// The file sets `serviceibi` or `publicurl` already (the names it sets).
    AlreadySet(Vec<&'static str>),
    /// The file is not TOML.
    NotToml(String),
}

/// `text`, a resolver.toml that sets neither `serviceibi` nor `publicurl`, with both set
/// and everything else kept byte for byte: each replaces the first line that holds it
/// commented out (`#serviceibi = ...`) before the first table, else both are added at
/// the top.
pub fn set_identity(text: &str, serviceibi: &str, publicurl: &str) -> Result<String, SetError> {
    let doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| SetError::NotToml(e.message().to_string()))?;
    let set: Vec<&'static str> = ["serviceibi", "publicurl"]
        .into_iter()
        .filter(|k| doc.contains_key(k))
        .collect();
    if !set.is_empty() {
        return Err(SetError::AlreadySet(set));
    }
    let lines = [
        ("serviceibi", format!("serviceibi = \"{serviceibi}\"")),
        ("publicurl", format!("publicurl = \"{publicurl}\"")),
    ];
    // The lines of the top-level table, each with its line ending.
    let parts: Vec<&str> = text.split_inclusive('\n').collect();
    let top = parts
        .iter()
        .position(|l| l.trim_start().starts_with('['))
        .unwrap_or(parts.len());
    let commented = |key: &str| {
        parts[..top].iter().position(|l| {
            l.strip_prefix('#')
                .map(|rest| {
                    let rest = rest.trim_start();
                    rest.strip_prefix(key)
                        .is_some_and(|r| r.trim_start().starts_with('='))
                })
                .unwrap_or(false)
        })
    };
    let places: Vec<Option<usize>> = lines.iter().map(|(k, _)| commented(k)).collect();
    let out = if let [Some(a), Some(b)] = places[..] {
        let mut new: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
        for (at, (_, line)) in [(a, &lines[0]), (b, &lines[1])] {
            let end = if parts[at].ends_with("\r\n") {
                "\r\n"
            } else if parts[at].ends_with('\n') {
                "\n"
            } else {
                ""
            };
            new[at] = format!("{line}{end}");
        }
        new.concat()
    } else {
        format!(
            "# Set by ibi-resolver init:\n{}\n{}\n\n{}",
            lines[0].1,
            lines[1].1,
            parts.concat()
        )
    };
    Ok(out)
}

/// What [`read_at`] found: the file's text and its status (owner, mode).
pub struct Found {
    pub text: String,
    pub stat: Stat,
}

/// The file `name` of `dir` (no link followed), or `None` when nothing has that name.
pub fn read_at(dir: BorrowedFd<'_>, name: &str) -> io::Result<Option<Found>> {
    let fd = match rfs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(None),
        Err(rustix::io::Errno::LOOP) => {
            return Err(io::Error::other(
                "is a symbolic link (name the file it points to)",
            ))
        }
        Err(e) => return Err(e.into()),
    };
    let stat = rfs::fstat(&fd)?;
    if rfs::FileType::from_raw_mode(stat.st_mode) != rfs::FileType::RegularFile {
        return Err(io::Error::other("is not a regular file"));
    }
    let mut text = String::new();
    File::from(fd).read_to_string(&mut text)?;
    Ok(Some(Found { text, stat }))
}

/// What [`create_registry`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Created {
    /// A new registry, owned by this user.
    New,
    /// A new registry, given to the owner (uid, gid) of its directory.
    GivenTo(u32, u32),
    /// A registry was there already: opened (and upgraded when older), kept.
    Kept,
    /// The registry in PostgreSQL: its schema made or brought up to date.
    InPostgres,
}

/// Creates the registry `path` (mode 0600) with its schema, or opens the one there. When
/// this runs as root and the directory belongs to another user (the package's
/// /var/lib/ibi-resolver is the ibi-resolver user's), the new file is given to that user
/// from its descriptor, before SQLite opens it (SQLite running as root gives the files
/// it makes beside it the same owner), and so is any of those files still there after.
/// Another user than root may create it only in a directory of its own.
pub fn create_registry(database: &Database) -> Result<Created, String> {
    let path = match database {
        Database::Sqlite(path) => path,
        Database::Postgres(_) => {
            crate::registry::Registry::open(database).map_err(|e| e.to_string())?;
            return Ok(Created::InPostgres);
        }
    };
    let shown = path.display();
    let (dir, name) = ibi::dirfd::open_parent(path).map_err(|e| {
        format!(
            "{}: cannot open the registry's directory: {e}",
            path.parent().unwrap_or(Path::new(".")).display()
        )
    })?;
    let dir_stat = rfs::fstat(&dir).map_err(|e| format!("{shown}: {e}"))?;
    let me = rustix::process::geteuid().as_raw();
    let give = (me == 0 && dir_stat.st_uid != 0).then_some((dir_stat.st_uid, dir_stat.st_gid));
    if me != 0 && dir_stat.st_uid != me {
        let dir_shown = path
            .parent()
            .unwrap_or(Path::new("."))
            .display()
            .to_string();
        return Err(format!(
            "{shown}: the registry's directory {dir_shown} belongs to user {} and you are user {me}: run ibi-resolver init as root (it gives the registry to the directory's owner) or as that user",
            dir_stat.st_uid
        ));
    }
    let created = match rfs::openat(
        &dir,
        name,
        OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    ) {
        Ok(fd) => {
            if let Some((uid, gid)) = give {
                rfs::fchown(
                    &fd,
                    Some(rfs::Uid::from_raw(uid)),
                    Some(rfs::Gid::from_raw(gid)),
                )
                .map_err(|e| format!("{shown}: cannot give it to user {uid}: {e}"))?;
            }
            rfs::fchmod(&fd, Mode::from_raw_mode(0o600)).map_err(|e| format!("{shown}: {e}"))?;
            match give {
                Some((uid, gid)) => Created::GivenTo(uid, gid),
                None => Created::New,
            }
        }
        Err(rustix::io::Errno::EXIST) => Created::Kept,
        Err(e) => return Err(format!("{shown}: cannot create: {}", io::Error::from(e))),
    };
    let registry = crate::registry::Registry::open(database).map_err(|e| e.to_string())?;
    drop(registry);
    if let Some((uid, gid)) = give {
        for companion in ["-wal", "-shm", "-journal"] {
            let companion = format!("{name}{companion}");
            match rfs::openat(
                &dir,
                companion.as_str(),
                OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
                Mode::empty(),
            ) {
                Ok(fd) => rfs::fchown(
                    &fd,
                    Some(rfs::Uid::from_raw(uid)),
                    Some(rfs::Gid::from_raw(gid)),
                )
                .map_err(|e| format!("{}: cannot give it to user {uid}: {e}", companion))?,
                Err(rustix::io::Errno::NOENT) => {}
                Err(e) => return Err(format!("{companion}: {}", io::Error::from(e))),
            }
        }
    }
    Ok(created)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_template_sets_every_setting_to_its_default() {
        let text = template(
            "example.org/resolver/2026/11.26.15.09",
            "http://resolver.example.org",
        );
        let c = crate::config::Config::parse(&text, Path::new("/srv")).unwrap();
        assert_eq!(
            c.serviceibi.as_str(),
            "example.org/resolver/2026/11.26.15.09"
        );
        assert_eq!(c.publicurl, "http://resolver.example.org");
        assert_eq!(c.database.path(), Some(Path::new("/srv/resolver.sqlite")));
        assert!(c.archives.networks.is_none());
        let defaults = crate::config::Config::parse(
            "serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"http://a.example\"\n",
            Path::new("/srv"),
        )
        .unwrap();
        assert_eq!(format!("{:?}", c.limits), format!("{:?}", defaults.limits));
        assert_eq!(
            format!("{:?}", c.archives),
            format!("{:?}", defaults.archives)
        );
        assert_eq!(
            (c.listen, c.memory_entries, c.memory_expiry),
            (
                defaults.listen,
                defaults.memory_entries,
                defaults.memory_expiry
            )
        );
        assert_eq!(
            format!("{:?}", c.metrics_networks),
            format!("{:?}", defaults.metrics_networks)
        );
        // The one setting not at its default (none): the web server in front, on this
        // machine, as resolver/deploy/ has it.
        assert!(c.is_trusted_proxy("127.0.0.1".parse().unwrap()));
        assert!(!c.is_trusted_proxy("127.0.0.2".parse().unwrap()));
        // Every setting a resolver.toml may hold is written, each after a comment.
        let lines: Vec<&str> = text.lines().collect();
        for key in [
            "serviceibi",
            "publicurl",
            "listen",
            "database",
            "trustedproxies",
            "timeout",
            "#networks",
            "dormant_after",
            "probe",
            "connections",
            "entries",
            "expiry",
            "resolutions",
            "per_client_resolutions",
            "per_client_misses",
            "per_client_connections",
            "networks",
        ] {
            let at = lines
                .iter()
                .position(|l| l.starts_with(&format!("{key} = ")))
                .unwrap_or_else(|| panic!("{key} missing"));
            assert!(lines[at - 1].starts_with('#'), "{key}");
        }
    }

    #[test]
    fn minted_by_the_rule_of_the_generation_standard() {
        let url = |s: &str| PublicUrl::parse(s).unwrap();
        // 2009-02-16T17:46:00Z, the date of Examples 1 and 2.
        let at = 1_234_806_360;
        for (publicurl, want) in [
            (
                "http://mtc-m18.sid.inpe.br",
                "sid.inpe.br/mtc-m18/2009/02.16.17.46",
            ),
            (
                "http://MTC-M18.sid.inpe.br:80",
                "sid.inpe.br/mtc-m18/2009/02.16.17.46",
            ),
            (
                "http://mtc-m18.sid.inpe.br:8090",
                "sid.inpe.br/mtc-m18.8090/2009/02.16.17.46",
            ),
            (
                "https://mtc-m18.sid.inpe.br",
                "sid.inpe.br/mtc-m18.443/2009/02.16.17.46",
            ),
            ("http://150.163.34.243:800", "8JMKD3MGP8W/34PGRBS"),
            ("http://150.163.34.243", "8JMKD3MGP8W4U/34PGRBS"),
        ] {
            assert_eq!(
                mint_serviceibi(&url(publicurl), at).unwrap().as_str(),
                want,
                "{publicurl}"
            );
        }
        assert_eq!(
            mint_serviceibi(&url("http://localhost:8090"), at).unwrap_err(),
            "cannot mint the resolver's IBI from publicurl http://localhost:8090: invalid hostname \"localhost\": it has no dot, so it cannot be split into a word and a subdomain (a rep is made of a host name with a dot, or an IBIp of an IP address)"
        );
    }

    #[test]
    fn identity_set_in_place_of_the_commented_lines_or_at_the_top() {
        let packaged = "# head\n\n# what\n#serviceibi = \"J8LNKB5R7W/3FUQHC5\"\n# how\n#publicurl = \"http://resolver.example.org\"\n\nlisten = \"127.0.0.1:8090\"\n[archives]\n#serviceibi = \"x\"\n";
        assert_eq!(
            set_identity(packaged, "A.B/C/2026/11.26.15.09", "http://c.a.b").unwrap(),
            "# head\n\n# what\nserviceibi = \"A.B/C/2026/11.26.15.09\"\n# how\npublicurl = \"http://c.a.b\"\n\nlisten = \"127.0.0.1:8090\"\n[archives]\n#serviceibi = \"x\"\n"
        );
        let bare = "listen = \"127.0.0.1:8090\"\n";
        assert_eq!(
            set_identity(bare, "I/J", "http://c.a.b").unwrap(),
            "# Set by ibi-resolver init:\nserviceibi = \"I/J\"\npublicurl = \"http://c.a.b\"\n\nlisten = \"127.0.0.1:8090\"\n"
        );
        assert_eq!(
            set_identity("publicurl = \"http://a.b\"\n", "I/J", "http://c.a.b"),
            Err(SetError::AlreadySet(vec!["publicurl"]))
        );
        assert!(matches!(
            set_identity("x = [\n", "I/J", "http://c.a.b"),
            Err(SetError::NotToml(_))
        ));
    }
}
