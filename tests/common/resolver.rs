//! `ibi-resolver serve` as the system tests run it, and the Archives they include in it:
//! copies of the sample Archive ([`archive`]) pointed at an address and at the resolver
//! ([`configure`]), included by `ibi-archive include` ([`archive_cmd`]) or, for an
//! Archive with no `ibi-archive` behind it, by the resolver service's inclusionRequest
//! ([`inclusion_request`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use super::http::{http_get, http_raw, Response};

/// The resolver service's IBI in every resolver.toml written here.
pub const RESOLVER_IBI: &str = "J8LNKB5R7W/3FUQHC5";
/// The sample Archive's service IBI, as its archive.toml spells it.
pub const SAMPLE_SERVICE: &str = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17";
/// The registration key of the sample Archive's archive.toml.
pub const KEY: &str = "1234567890";

/// A running `ibi-resolver serve`, its stderr appended to `resolver.log` beside its
/// configuration; killed when dropped (also when the test panics).
pub struct Resolver {
    child: Child,
    pub port: u16,
    pub config: PathBuf,
    pub log: PathBuf,
}

impl Resolver {
    /// A resolver giving each Archive `timeout`, its Archives on loopback; `more` is
    /// added to `[archives]` (and may open other tables after it).
    pub fn start(dir: &Path, timeout: &str, more: &str) -> Resolver {
        Resolver::start_with(
            dir,
            &format!("[archives]\ntimeout = \"{timeout}\"\nnetworks = [\"127.0.0.0/8\"]\n{more}"),
        )
    }

    /// A resolver whose resolver.toml ends with `tables` (`[archives]` and what follows;
    /// without `networks`, only public addresses may be Archives).
    pub fn start_with(dir: &Path, tables: &str) -> Resolver {
        let (config, port) = Resolver::configure_with(dir, tables);
        Resolver::run(config, port)
    }

    /// The resolver.toml of [`Resolver::start`] written in `dir`, on a free port, and
    /// nothing started: its path and port, for [`Resolver::run`] later (what
    /// [`register_in`] registers in it meanwhile is there when it starts).
    pub fn configure(dir: &Path, timeout: &str, more: &str) -> (PathBuf, u16) {
        Resolver::configure_with(
            dir,
            &format!("[archives]\ntimeout = \"{timeout}\"\nnetworks = [\"127.0.0.0/8\"]\n{more}"),
        )
    }

    /// The resolver.toml of [`Resolver::start_with`], written and not run.
    fn configure_with(dir: &Path, tables: &str) -> (PathBuf, u16) {
        let port = super::free_port();
        let config = dir.join("resolver.toml");
        std::fs::write(
            &config,
            format!(
                "serviceibi = \"{RESOLVER_IBI}\"\npublicurl = \"http://127.0.0.1:{port}\"\nlisten = \"127.0.0.1:{port}\"\ndatabase = \"registry.sqlite\"\n{tables}"
            ),
        )
        .unwrap();
        (config, port)
    }

    /// `ibi-resolver serve` on `config` (listening on `port`); fails at once, with its
    /// log, if it exits before it listens.
    pub fn run(config: PathBuf, port: u16) -> Resolver {
        let log = config.with_file_name("resolver.log");
        let child = Command::new(super::ibi_resolver_bin())
            .args(["serve", "--config", config.to_str().unwrap()])
            .stderr(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&log)
                    .unwrap(),
            )
            .spawn()
            .unwrap();
        let mut r = Resolver {
            child,
            port,
            config,
            log,
        };
        let deadline = Instant::now() + super::HANG_GUARD;
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = r.child.try_wait().unwrap() {
                panic!(
                    "resolver exited ({status}) before it listened:\n{}",
                    r.log()
                );
            }
            assert!(
                Instant::now() < deadline,
                "resolver did not listen: {}",
                r.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        r
    }

    /// Stops it as an operator would (SIGTERM) and waits for it to exit.
    pub fn stop(&mut self) -> ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = Instant::now() + super::HANG_GUARD;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the resolver had not stopped {:?} after SIGTERM",
                super::HANG_GUARD
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops it (SIGTERM), then starts it again on the same configuration.
    pub fn restart(&mut self) {
        let stopped = self.stop();
        assert!(stopped.success(), "{stopped}: {}", self.log());
        let again = Resolver::run(self.config.clone(), self.port);
        let mut old = std::mem::replace(self, again);
        // Already reaped; Drop's kill and wait do nothing.
        let _ = old.child.try_wait();
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The resolver service's URL.
    pub fn service(&self) -> String {
        format!("{}/{RESOLVER_IBI}", self.base())
    }

    /// Its log (stderr) so far, each line's time checked and taken off ([`unstamped`]).
    pub fn log(&self) -> String {
        unstamped(&std::fs::read_to_string(&self.log).unwrap_or_default())
    }

    /// `ibi-resolver COMMAND … --config` of this resolver, `stdin` (a key, say) on its
    /// standard input.
    pub fn command(&self, args: &[&str], stdin: &str) -> (i32, String, String) {
        super::run_with_stdin(
            Command::new(super::ibi_resolver_bin())
                .args(args)
                .args(["--config", self.config.to_str().unwrap()]),
            stdin,
        )
    }

    /// Registers `service` with `key` (`ibi-resolver register`).
    pub fn register(&self, service: &str, key: &str) {
        register_in(&self.config, service, key);
    }

    /// Whether `ibi-resolver archives --csv` lists `service` as included (`None`: it
    /// does not list it).
    pub fn included(&self, service: &str) -> Option<bool> {
        let (code, out, err) = self.command(&["archives", "--csv"], "");
        assert_eq!(code, 0, "{out}{err}");
        archive_row(&out, service).map(|row| row["included"] == "yes")
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `/metrics`, asked from 127.0.0.1.
    pub fn metrics(&self) -> String {
        let r = http_get(&format!("{}/metrics", self.base()));
        assert_eq!(r.status, 200, "{}", r.text());
        r.text()
    }
}

/// The value of the /metrics sample that starts with `series` (name and labels), if any.
pub fn sample(metrics: &str, series: &str) -> Option<u64> {
    metrics.lines().find_map(|l| {
        l.strip_prefix(series)
            .and_then(|rest| rest.strip_prefix(' '))
            .map(|v| v.trim().parse::<f64>().unwrap() as u64)
    })
}

/// The time that starts a line of the resolver's log, and the rest of the line: `None`
/// unless the line starts with an RFC 3339 time in UTC to the millisecond
/// (`2026-11-26T15:09:43.123Z`, always 24 bytes) and a space.
pub fn split_stamp(line: &str) -> Option<(chrono::DateTime<chrono::Utc>, &str)> {
    let (stamp, rest) = (line.get(..24)?, line.get(24..)?);
    let rest = rest.strip_prefix(' ')?;
    let time = chrono::DateTime::parse_from_rfc3339(stamp).ok()?;
    // Exactly that form: milliseconds, `Z`, no other offset or precision.
    let again = time
        .with_timezone(&chrono::Utc)
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    (again == stamp).then(|| (time.with_timezone(&chrono::Utc), rest))
}

/// The complete lines of a resolver's log `text` with their times taken off, each time
/// checked ([`split_stamp`]; a line without one fails the test). A last line not yet
/// ended is left out: it is still being written.
pub fn unstamped(text: &str) -> String {
    let complete = text.rfind('\n').map_or("", |i| &text[..=i]);
    complete
        .lines()
        .map(|line| match split_stamp(line) {
            Some((_, rest)) => format!("{rest}\n"),
            None => panic!("a log line without its time: {line:?} in\n{text}"),
        })
        .collect()
}

/// Registers `service` with `key` in the registry of the resolver whose configuration is
/// `config` (`ibi-resolver register`), whether that resolver runs or not.
pub fn register_in(config: &Path, service: &str, key: &str) {
    let (code, out, err) = super::run_with_stdin(
        Command::new(super::ibi_resolver_bin()).args([
            "register",
            service,
            "--email",
            "archive-admin@example.org",
            "--config",
            config.to_str().unwrap(),
        ]),
        &format!("{key}\n"),
    );
    assert_eq!(code, 0, "{out}{err}");
}

/// The row of `service` in the output of `ibi-resolver archives --csv`, by column name
/// (the rep as the registry spells it: port 80 left out).
pub fn archive_row(csv: &str, service: &str) -> Option<BTreeMap<String, String>> {
    let wanted = service.replace("@80/", "/");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next()?.split(',').collect();
    lines.find_map(|line| {
        let fields: Vec<&str> = line.split(',').collect();
        (fields.first() == Some(&wanted.as_str())).then(|| {
            header
                .iter()
                .zip(fields)
                .map(|(h, f)| (h.to_string(), f.to_string()))
                .collect()
        })
    })
}

impl Drop for Resolver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A copy of the sample Archive as `name` under `tmp`, its service IBI `service`, keeping
/// only the items under `keep` (paths below col/; all when empty) and dropping those
/// under `drop`.
pub fn archive(tmp: &Path, name: &str, service: &str, keep: &[&str], drop: &[&str]) -> PathBuf {
    let root = tmp.join(name);
    super::copy_sample(&root);
    for d in drop {
        std::fs::remove_dir_all(root.join("col").join(d)).unwrap();
    }
    if !keep.is_empty() {
        let col = root.join("col");
        let kept = tmp.join(format!("{name}-kept"));
        for k in keep {
            let to = kept.join(k);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::rename(col.join(k), &to).unwrap();
        }
        std::fs::remove_dir_all(&col).unwrap();
        std::fs::rename(&kept, &col).unwrap();
    }
    let toml = std::fs::read_to_string(root.join("archive.toml"))
        .unwrap()
        .replace(SAMPLE_SERVICE, service);
    std::fs::write(root.join("archive.toml"), toml).unwrap();
    super::prepare_archive(&root);
    root
}

/// Points archive.toml at `address` and at the resolver service `resolver`.
pub fn configure(root: &Path, address: &str, resolver: &str) {
    let path = root.join("archive.toml");
    let toml = std::fs::read_to_string(&path)
        .unwrap()
        .replace(
            "archiveaddress    = \"localhost:8080\"",
            &format!("archiveaddress    = \"{address}\""),
        )
        .replace("http://localhost:8090/J8LNKB5R7W/3FUQHC5", resolver);
    assert!(toml.contains(address), "{toml}");
    std::fs::write(&path, toml).unwrap();
}

/// Rewrites archive.toml of the Archive at `root` (in place: its owner and mode kept)
/// for an Archive answering at `address`, registered with `key` in `resolvers`: the
/// one-resolver form `resolver = "URL"` for one, else the list `resolvers = [...]`.
pub fn registration(root: &Path, address: &str, resolvers: &[String], key: &str) {
    let path = root.join("archive.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let quoted: Vec<String> = resolvers.iter().map(|r| format!("\"{r}\"")).collect();
    let resolvers_line = match quoted.as_slice() {
        [one] => format!("resolver = {one}"),
        all => format!("resolvers = [{}]", all.join(", ")),
    };
    let mut out = String::new();
    let mut seen = (false, false, false);
    for line in text.lines() {
        let name = line.split('=').next().unwrap_or("").trim();
        let line = match name {
            "archiveaddress" => {
                seen.0 = true;
                format!("archiveaddress = \"{address}\"")
            }
            "resolver" | "resolvers" => {
                seen.1 = true;
                resolvers_line.clone()
            }
            "key" => {
                seen.2 = true;
                format!("key = \"{key}\"")
            }
            _ => line.to_string(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    assert_eq!(seen, (true, true, true), "{text}");
    std::fs::write(&path, out).unwrap();
}

/// Rewrites archive.toml of the Archive at `root` (in place: its owner and mode kept)
/// for an Archive answering at `address`, registered in each resolver of `resolvers`
/// with the key beside it: a `[[registration.resolver]]` table each, in that order, in
/// place of the one key and the one resolver (or the list).
pub fn registration_per_resolver(root: &Path, address: &str, resolvers: &[(String, &str)]) {
    let path = root.join("archive.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut out = String::new();
    let mut seen = (false, false, false);
    for line in text.lines() {
        match line.split('=').next().unwrap_or("").trim() {
            "archiveaddress" => {
                seen.0 = true;
                out.push_str(&format!("archiveaddress = \"{address}\"\n"));
            }
            "resolver" | "resolvers" => seen.1 = true,
            "key" => seen.2 = true,
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    assert_eq!(seen, (true, true, true), "{text}");
    for (url, key) in resolvers {
        out.push_str(&format!(
            "\n[[registration.resolver]]\nurl = \"{url}\"\nkey = \"{key}\"\n"
        ));
    }
    std::fs::write(&path, out).unwrap();
}

/// `ibi-archive include|exclude --root R`.
pub fn archive_cmd(cmd: &str, root: &Path) -> (i32, String, String) {
    super::run_cmd(&[cmd, "--root", root.to_str().unwrap()])
}

/// Per item, the acknowledgments `ibi-archive stats` counted.
pub fn counts(root: &Path) -> BTreeMap<String, u64> {
    let (code, out, err) = super::run_cmd(&["stats", "--root", root.to_str().unwrap(), "--csv"]);
    assert_eq!(code, 0, "{err}");
    out.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f.len() == 3 && f[0] != "*" && f[1] == "total")
                .then(|| (f[0].to_string(), f[2].parse().unwrap()))
        })
        .collect()
}

/// The resolver service's inclusionRequest (Table 7.2) for an Archive at `address`.
pub fn inclusion_request(resolver: &Resolver, address: &str, service: &str, key: &str) -> String {
    format!(
        "{}?servicesubject=inclusionRequest&archiveaddress={address}&archiveserviceibi={service}&archiveip=127.0.0.1&archiveprotocol=HTTP&archiveplatformversion=1&archiveadmemailaddress=x@example.org&registrationkey={key}",
        resolver.service()
    )
}

/// Registers `service` and has it included at `peer` (a server of [`super::peer`]), as an
/// Archive would ask.
pub fn include_peer(resolver: &Resolver, peer: &super::peer::Peer, service: &str) {
    include_at(resolver, &peer.addr.to_string(), service);
}

/// Registers `service` and has it included at `address`, as an Archive would ask; its
/// confirmation must succeed.
pub fn include_at(resolver: &Resolver, address: &str, service: &str) {
    resolver.register(service, KEY);
    let a = super::http_get(&inclusion_request(resolver, address, service, KEY));
    assert_eq!(
        (a.status, a.text().as_str()),
        (
            200,
            "status.archive included\r\nstatus.confirmation successful\r\n"
        ),
        "{}",
        resolver.log()
    );
}

/// `GET url` with `Connection: close` and, unless empty, an Accept-Language header.
pub fn get(url: &str, accept_language: &str) -> Response {
    let headers: &[(&str, &str)] = if accept_language.is_empty() {
        &[]
    } else {
        &[("Accept-Language", accept_language)]
    };
    get_with(url, headers)
}

/// `GET url` with `Connection: close` and `headers`.
pub fn get_with(url: &str, headers: &[(&str, &str)]) -> Response {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, target) = rest.split_at(rest.find('/').unwrap());
    let mut request =
        format!("GET {target} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    http_raw(authority, request.as_bytes(), false)
}
