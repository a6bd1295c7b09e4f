//! The resolver's deployment files, run for real as tests/deploy_*.rs run the Archive's.
//!
//! - `resolver/deploy/apache2-ibi-resolver.conf` in Debian's apache2 (mod_proxy,
//!   mod_proxy_http), included unchanged in a `<VirtualHost>` as its comment says — but for
//!   the address it proxies to: 127.0.0.1:8090 may be taken on a test machine, so the copy
//!   included names a free port of 127.0.0.1 instead (that substitution, and nothing else).
//!   Behind it, a real `ibi-resolver serve` listening there (trustedproxies 127.0.0.1/32)
//!   and a real `ibi-archive serve` over a copy of sample-archive/ in which only 127.0.0.1
//!   is licensed for the restricted item, so that the URL handed out shows which reader
//!   the resolver saw: 127.0.0.1 gets the data, 127.0.0.2 the metadata.
//! - `resolver/deploy/ibi-resolver.service`: `systemd-analyze verify` on a copy whose
//!   ExecStart names the executable under test; then, as there is no systemd to start it,
//!   the unit's ExecStart run as systemd would run it: as an unprivileged user (nobody,
//!   for the unit's dedicated user, when the tests run as root), with the unit's UMask,
//!   LimitNOFILE and NoNewPrivileges, the seccomp filters systemd installs for its
//!   MemoryDenyWriteExecute, RestrictAddressFamilies and RestrictNamespaces, in a state
//!   directory of the unit's StateDirectoryMode; stopped with its KillSignal.
//!
//! Under `CI=true` a missing apache2 (or module) or systemd-analyze fails the tests.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::net::IpAddr;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::{http_raw_from, Response};

const CONF: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/deploy/apache2-ibi-resolver.conf"
);
const UNIT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/ibi-resolver.service");
/// The address the Apache configuration proxies to (`listen` of resolver.toml).
const CONF_BACKEND: &str = "127.0.0.1:8090";
/// The modules the Apache configuration needs (`a2enmod proxy proxy_http`).
const PROXY_MODULES: &[&str] = &["mod_proxy.so", "mod_proxy_http.so"];
/// The paths the unit's ExecStart names.
const UNIT_BIN: &str = "/usr/bin/ibi-resolver";
const UNIT_CONFIG: &str = "/etc/ibi-resolver/resolver.toml";

const RESOLVER_IBI: &str = "J8LNKB5R7W/3FUQHC5";
/// The sample Archive's service, and its registration key (archive.toml).
const SERVICE: &str = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17";
const KEY: &str = "1234567890";
/// The sample Archive's restricted item: its data for licensed readers, else its metadata.
const RESTRICTED: &str = "sid.inpe.br/mtc-m19/2014/05.06.07.08";

/// Inside the Archive's `[access] networks` (as edited below).
fn licensed() -> IpAddr {
    "127.0.0.1".parse().unwrap()
}

/// Outside them.
fn reader() -> IpAddr {
    "127.0.0.2".parse().unwrap()
}

/// Replaces `from` (which must be there) by `to` in the file at `path`.
fn edit(path: &Path, from: &str, to: &str) {
    let text = fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} lacks {from:?}", path.display());
    fs::write(path, text.replace(from, to)).unwrap();
}

/// A copy of the sample Archive at `dir`/archive, only 127.0.0.1 licensed, served by
/// `ibi-archive serve` on 127.0.0.1, its archive.toml naming it `host:<port>`.
fn archive(dir: &Path, host: &str) -> (PathBuf, common::Serve) {
    let root = dir.join("archive");
    common::copy_sample(&root);
    edit(
        &root.join("archive.toml"),
        "networks = [\"150.163.0.0/16\", \"127.0.0.0/8\"]",
        "networks = [\"127.0.0.1/32\"]",
    );
    common::prepare_archive(&root);
    let serve = common::Serve::start(&root, fs::File::create(dir.join("archive.log")).unwrap());
    let port = serve.address.rsplit(':').next().unwrap();
    edit(
        &root.join("archive.toml"),
        "archiveaddress    = \"localhost:8080\"",
        &format!("archiveaddress    = \"{host}:{port}\""),
    );
    (root, serve)
}

/// `ibi-archive include` of the Archive at `root` with the resolver service at `service`.
fn include(root: &Path, service: &str) -> (i32, String, String) {
    common::run_cmd(&[
        "include",
        "--root",
        root.to_str().unwrap(),
        "--resolver",
        service,
    ])
}

/// A resolver.toml in `dir` for a resolver listening on 127.0.0.1:`port`, reached by
/// readers at `publicurl`, its registry at `database`.
fn resolver_toml(dir: &Path, port: u16, publicurl: &str, database: &Path) -> PathBuf {
    let path = dir.join("resolver.toml");
    fs::write(
        &path,
        format!(
            "serviceibi = \"{RESOLVER_IBI}\"\npublicurl = \"{publicurl}\"\nlisten = \"127.0.0.1:{port}\"\ndatabase = \"{}\"\ntrustedproxies = [\"127.0.0.1/32\"]\n[archives]\ntimeout = \"20s\"\nnetworks = [\"127.0.0.0/8\", \"::1/128\"]\n",
            database.display()
        ),
    )
    .unwrap();
    path
}

/// A running `ibi-resolver serve`, its stderr (the request log) in a file; killed when
/// dropped.
struct Resolver {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Resolver {
    /// Runs `cmd` (an `ibi-resolver serve` listening on 127.0.0.1:`port`), its stderr to
    /// `log`, and returns once it accepts connections.
    fn spawn(mut cmd: Command, port: u16, log: &Path) -> Resolver {
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(fs::File::create(log).unwrap())
            .spawn()
            .unwrap();
        let mut r = Resolver {
            child,
            port,
            log: log.to_path_buf(),
        };
        let deadline = Instant::now() + common::STARTUP_TIMEOUT;
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = r.child.try_wait().unwrap() {
                panic!("the resolver exited with {status}:\n{}", r.log());
            }
            assert!(
                Instant::now() < deadline,
                "the resolver did not listen on port {port}:\n{}",
                r.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        r
    }

    /// `ibi-resolver serve --config CONFIG`, as the tests' own user.
    fn start(config: &Path, port: u16, log: &Path) -> Resolver {
        let mut cmd = Command::new(common::ibi_resolver_bin());
        cmd.args(["serve", "--config", config.to_str().unwrap()]);
        Resolver::spawn(cmd, port, log)
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The complete lines of its log so far, each one's time checked and taken off.
    fn log(&self) -> String {
        common::resolver::unstamped(&fs::read_to_string(&self.log).unwrap_or_default())
    }

    /// How much it has logged: a mark for [`Resolver::requests_since`].
    fn mark(&self) -> usize {
        self.log().len()
    }

    /// The request lines (`ibi-resolver: <client> "<method> <target>" <status> …`) logged
    /// since `mark`. Each is written before its response is sent.
    fn requests_since(&self, mark: usize) -> Vec<String> {
        self.log()[mark..]
            .lines()
            .filter(|l| {
                l.strip_prefix("ibi-resolver: ")
                    .and_then(|rest| rest.split_once(" \""))
                    .is_some_and(|(client, _)| client.parse::<IpAddr>().is_ok())
            })
            .map(str::to_string)
            .collect()
    }

    /// Sends `signal` and waits (at most `within`) for the exit.
    fn stop(&mut self, signal: i32, within: Duration) -> ExitStatus {
        let pid = i32::try_from(self.child.id()).unwrap();
        // SAFETY: kill(2) on the pid of a child this process has not yet waited for.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the resolver did not exit within {within:?} of signal {signal}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Resolver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `ibi-resolver ARGS --config CONFIG` with `stdin`, adjusted by `prepare` (the service's
/// user and sandbox); returns (exit code, stdout, stderr).
fn resolver_cmd(
    bin: &Path,
    args: &[&str],
    config: &Path,
    stdin: &str,
    prepare: impl FnOnce(&mut Command),
) -> (i32, String, String) {
    let mut cmd = Command::new(bin);
    cmd.args(args).args(["--config", config.to_str().unwrap()]);
    prepare(&mut cmd);
    common::run_with_stdin(&mut cmd, stdin)
}

/// `GET target` of the server at `base` ("http://host:port") from the local address
/// `from`, with more header lines.
fn get(from: IpAddr, base: &str, target: &str, headers: &[(&str, &str)]) -> Response {
    let authority = base.strip_prefix("http://").unwrap();
    let mut request =
        format!("GET {target} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    http_raw_from(Some(from), authority, request.as_bytes(), false)
}

// ------------------------------------------------------------------------------------
// Apache in front of the resolver
// ------------------------------------------------------------------------------------

/// The Archive, the resolver and Apache in front of it, the Archive registered and
/// included through Apache.
struct Proxied {
    resolver: Resolver,
    apache: common::Server,
    /// The resolver's settings and log, to start it again.
    config: PathBuf,
    log: PathBuf,
    root: PathBuf,
    /// `http://127.0.0.1:<port>` of the Archive.
    archive: String,
    _serve: common::Serve,
    _tmp: tempfile::TempDir,
}

/// [`Proxied`], or `None` (after saying why) when apache2 or its proxy modules are not
/// installed and `CI` is not `true`.
fn proxied() -> Option<Proxied> {
    if !common::apache2_available_with(PROXY_MODULES) {
        eprintln!("skipping: apache2 with mod_proxy and mod_proxy_http is not installed");
        return None;
    }
    let tmp = common::archive_tempdir();
    let port = common::free_port();
    // The configuration as it is in the repository, but for the port it proxies to.
    let conf = fs::read_to_string(CONF).unwrap();
    assert!(
        conf.contains(&format!("\"http://{CONF_BACKEND}/\"")),
        "{conf}"
    );
    let copy = tmp.path().join("apache2-ibi-resolver.conf");
    fs::write(
        &copy,
        conf.replace(CONF_BACKEND, &format!("127.0.0.1:{port}")),
    )
    .unwrap();
    let apache = common::start_apache2_vhost(&copy, PROXY_MODULES);
    let (root, serve) = archive(tmp.path(), "127.0.0.1");
    let archive = serve.base_url();
    let config = resolver_toml(
        tmp.path(),
        port,
        &apache.base_url,
        &tmp.path().join("registry.sqlite"),
    );
    let log = tmp.path().join("resolver.log");
    let resolver = Resolver::start(&config, port, &log);
    let (code, out, err) = resolver_cmd(
        &common::ibi_resolver_bin(),
        &["register", SERVICE, "--email", "archive-admin@example.org"],
        &config,
        &format!("{KEY}\n"),
        |_| {},
    );
    assert_eq!(code, 0, "{out}{err}");
    // Through Apache, as an Archive reaches the resolver at its publicurl.
    let (code, out, err) = include(&root, &format!("{}/{RESOLVER_IBI}", apache.base_url));
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "status.archive included\nstatus.confirmation successful\n"
        ),
        "{err}\n{}\n{}",
        resolver.log(),
        apache.error_log()
    );
    Some(Proxied {
        resolver,
        apache,
        config,
        log,
        root,
        archive,
        _serve: serve,
        _tmp: tmp,
    })
}

impl Proxied {
    /// `target` asked through Apache from `from`: checks that the resolver got exactly
    /// one request, `target` as sent, seen from `seen` and answered with the status Apache
    /// passed on.
    fn through_apache(
        &self,
        from: IpAddr,
        target: &str,
        headers: &[(&str, &str)],
        seen: IpAddr,
    ) -> Response {
        let mark = self.resolver.mark();
        let r = get(from, &self.apache.base_url, target, headers);
        let lines = self.resolver.requests_since(mark);
        let want = format!("ibi-resolver: {seen} \"GET {target}\" {} ", r.status);
        assert!(
            lines.len() == 1 && lines[0].starts_with(&want),
            "through Apache, {target} from {from}: {} — the resolver logged {lines:#?}, not {want:?}\n{}",
            r.status,
            self.apache.error_log()
        );
        r
    }

    /// `target` asked of the resolver itself, from `from`.
    fn direct(&self, from: IpAddr, target: &str, headers: &[(&str, &str)]) -> Response {
        get(from, &self.resolver.base(), target, headers)
    }

    /// The file `file` (below col/) of the Archive, and its URL as handed out.
    fn file(&self, file: &str) -> (String, Vec<u8>) {
        (
            format!("{}/col/{}", self.archive, file.replace(' ', "%20")),
            fs::read(self.root.join("col").join(file)).unwrap(),
        )
    }

    /// A log file Apache writes (in its `${APACHE_LOG_DIR}`).
    fn apache_log(&self, name: &str) -> String {
        fs::read_to_string(self.apache.dir().join(name)).unwrap_or_default()
    }

    /// The line of Apache's log file `name` that starts with `start` and holds `request`,
    /// waited for: Apache logs a request after answering it.
    fn wait_for_apache_line(&self, name: &str, start: &str, request: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let log = self.apache_log(name);
            if let Some(line) = log
                .lines()
                .find(|l| l.starts_with(start) && l.contains(request))
            {
                return line.to_string();
            }
            assert!(
                Instant::now() < deadline,
                "{name} has no line {start}…{request}:\n{log}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A persistent URL through Apache from `from`: a 302 to the URL the resolver gives when
/// asked directly, which is the URL of `file`, and whose bytes are the file's.
fn check_redirect(s: &Proxied, from: IpAddr, target: &str, lang: &str, file: &str) {
    let language = [("Accept-Language", lang)];
    let headers: &[(&str, &str)] = if lang.is_empty() { &[] } else { &language };
    let via = s.through_apache(from, target, headers, from);
    let direct = s.direct(from, target, headers);
    let (url, bytes) = s.file(file);
    assert_eq!(
        (via.status, via.header("location")),
        (302, Some(url.as_str())),
        "{target}: {}",
        via.text()
    );
    assert_eq!(
        (direct.status, direct.header("location")),
        (302, Some(url.as_str())),
        "{target} asked directly"
    );
    let followed = get(from, &s.archive, &url[s.archive.len()..], &[]);
    assert_eq!(followed.status, 200, "{url}");
    assert!(
        followed.body == bytes,
        "{target} → {url}: not the bytes of {file}"
    );
}

#[test]
fn persistent_urls_pass_through_apache_as_sent() {
    let Some(s) = proxied() else { return };
    // Modifiers, a file path, encoded characters: each reaches the resolver as sent (the
    // log line shows the target), gets the same 302 as asked directly, and is followed.
    for (target, lang, file) in [
        (
            "/8JMKD3MGP8W/35MME4E+",
            "pt-BR",
            "sid.inpe.br/mtc-m18@80/2009/08.25.19.43/doc/RTC-07.pdf",
        ),
        (
            "/8JMKD3MGP8W/35MME4E%2B",
            "pt-BR",
            "sid.inpe.br/mtc-m18@80/2009/08.25.19.43/doc/RTC-07.pdf",
        ),
        (
            "/8JMKD3MGP8W/35MME4E:(oai_dc)",
            "",
            "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47/doc/oai_dc.xml",
        ),
        (
            "/8JMKD3MGP8W/35MMLL8%21:%28oai_dc%29",
            "",
            "sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/oai_dc.xml",
        ),
        (
            "/LK47B6W/362SFKH/reference.bib",
            "",
            "iconet.com.br/banon/2009/09.09.22.01/doc/reference.bib",
        ),
        (
            "/LK47B6W/362SFKH/%40relatorio.pdf",
            "",
            "iconet.com.br/banon/2009/09.09.22.01/doc/@relatorio.pdf",
        ),
        (
            "/8JMKD3MGP8W/35MMLL8/CCSDS%20650.0-B-1.pdf",
            "",
            "sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS 650.0-B-1.pdf",
        ),
    ] {
        check_redirect(&s, reader(), target, lang, file);
    }

    // The resolver's own pages come back through Apache with their status, headers and
    // bytes: a miss, a tombstone, a missing translation, and malformed URLs — %2F
    // included, which Apache would refuse with a 404 of its own.
    for (target, status, phrase) in [
        (
            "/8JMKD3MGP8W/35MME4F",
            404,
            "<p>No Archive knows the IBI <code>8JMKD3MGP8W/35MME4F</code>.</p>",
        ),
        (
            "/sid.inpe.br/mtc-m19/2013/02.10.11.12",
            410,
            "was removed on 2014-01-02T17:23:57Z",
        ),
        (
            "/8JMKD3MGP8W/35MME4E+(fr)",
            404,
            "has no translation in <code>fr</code>",
        ),
        (
            "/8JMKD3MGP8W/35MME4E!!",
            400,
            "is not one of the compositions of Table 8.2",
        ),
        (
            "/LK47B6W/362SFKH/a%2Fb",
            400,
            "The file path holds a control character or an encoded /.",
        ),
        (
            "/8JMKD3MGP8W%2F35MME4E",
            400,
            "&quot;8JMKD3MGP8W%2F35MME4E&quot; is one segment",
        ),
    ] {
        let headers = [("Accept-Language", "en")];
        let via = s.through_apache(reader(), target, &headers, reader());
        let direct = s.direct(reader(), target, &headers);
        assert_eq!(via.status, status, "{target}: {}", via.text());
        assert!(via.text().contains(phrase), "{target}: {}", via.text());
        assert!(via.body == direct.body, "{target}: bodies differ");
        for name in ["content-type", "content-security-policy", "cache-control"] {
            assert_eq!(via.header(name), direct.header(name), "{target}: {name}");
        }
        assert_eq!(via.content_type(), "text/html; charset=utf-8");
    }
}

#[test]
fn the_resolver_sees_the_reader_behind_apache_and_no_forged_address() {
    let Some(s) = proxied() else { return };
    let target = format!("/{RESTRICTED}");
    let data = format!("{RESTRICTED}/doc/article.pdf");
    let metadata = format!("{RESTRICTED}.09/doc/metadata.html");

    // A licensed reader gets the data, one outside the metadata: the resolver passed on
    // the reader's address, not Apache's (which is licensed).
    check_redirect(&s, licensed(), &target, "", &data);
    check_redirect(&s, reader(), &target, "", &metadata);

    // An X-Forwarded-For the reader sends through Apache is passed on as what it is, the
    // address a proxy says its reader has, first (Example 10.1: the reader, then its
    // proxies): the Archive chooses by it, but serves the restricted file only to the
    // address that connects to it, and the resolver's log and bounds go by the address
    // Apache saw.
    let forged = [("X-Forwarded-For", "127.0.0.1")];
    let mark = s.resolver.mark();
    let r = s.through_apache(reader(), &target, &forged, reader());
    let (data_url, _) = s.file(&data);
    assert_eq!(r.header("location"), Some(data_url.as_str()));
    let followed = get(reader(), &s.archive, &data_url[s.archive.len()..], &[]);
    assert_eq!(followed.status, 403, "{}", followed.text());
    let lines = s.resolver.requests_since(mark);
    assert!(
        lines.len() == 1
            && lines[0].starts_with(&format!("ibi-resolver: 127.0.0.2 \"GET {target}\" 302 ")),
        "{lines:#?}"
    );
    // Sent to the resolver directly, from an address that is no proxy of it, it is not
    // read at all.
    let mark = s.resolver.mark();
    let r = s.direct(reader(), &target, &forged);
    assert_eq!(r.header("location"), Some(s.file(&metadata).0.as_str()));
    let lines = s.resolver.requests_since(mark);
    assert!(
        lines.len() == 1
            && lines[0].starts_with(&format!("ibi-resolver: 127.0.0.2 \"GET {target}\" 302 ")),
        "{lines:#?}"
    );

    // The inspection view, in JSON through Apache: the choice made for 127.0.0.2.
    let r = s.through_apache(
        reader(),
        &format!("{target}?noredirect"),
        &[("Accept", "application/json")],
        reader(),
    );
    assert_eq!((r.status, r.content_type()), (200, "application/json"));
    let chosen = format!("\"url\": \"{}\"", s.file(&metadata).0);
    assert!(r.text().contains(&chosen), "{}", r.text());
    assert!(!r.text().contains(&s.file(&data).0), "{}", r.text());
}

#[test]
fn apache_keeps_the_registration_key_out_of_its_logs_and_asks_a_restarted_resolver_at_once() {
    let Some(mut s) = proxied() else { return };
    // The inclusion request came through Apache (from `ibi-archive include` at 127.0.0.1);
    // Apache logged it without its query.
    assert!(
        s.resolver.log().contains(&format!(
            "ibi-resolver: 127.0.0.1 \"GET /{RESOLVER_IBI}?servicesubject=inclusionRequest&…\" 200 "
        )),
        "{}",
        s.resolver.log()
    );
    s.through_apache(reader(), "/8JMKD3MGP8W/35MME4E?noredirect", &[], reader());
    let name = "ibi-resolver-access.log";
    let inclusion = s.wait_for_apache_line(
        name,
        "127.0.0.1 - - [",
        &format!("] \"GET /{RESOLVER_IBI}?[hidden] HTTP/1.1\" 200 "),
    );
    assert!(
        inclusion.ends_with(concat!(
            "\"-\" \"ibi-archive/",
            env!("CARGO_PKG_VERSION"),
            "\""
        )),
        "{inclusion}"
    );
    s.wait_for_apache_line(
        name,
        "127.0.0.2 - - [",
        "] \"GET /8JMKD3MGP8W/35MME4E?noredirect HTTP/1.1\" 200 ",
    );
    let access = s.apache_log(name);
    for (name, log) in [
        ("ibi-resolver-access.log", access.clone()),
        (
            "other_vhosts_access.log",
            s.apache_log("other_vhosts_access.log"),
        ),
        ("the error log", s.apache.error_log()),
        ("the resolver's log", s.resolver.log()),
    ] {
        assert!(
            !log.contains(KEY) && !log.contains("registrationkey"),
            "{name} holds the key:\n{log}"
        );
    }

    // The resolver stops (SIGTERM: exit 0); Apache answers 503 meanwhile, and asks the
    // resolver started again at once. (retry=0 makes sure of that where Apache rests a
    // worker whose connection failed for 60 s; 2.4.71 does not rest a lone ProxyPass
    // worker at all.)
    let status = s.resolver.stop(libc::SIGTERM, Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "{}", s.resolver.log());
    let r = get(reader(), &s.apache.base_url, "/8JMKD3MGP8W/35MME4E", &[]);
    assert_eq!(r.status, 503, "{}", r.text());
    let port = s.resolver.port;
    s.resolver = Resolver::start(&s.config, port, &s.log);
    check_redirect(
        &s,
        reader(),
        "/8JMKD3MGP8W/35MME4E",
        "",
        "sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS 643.0-B-1.pdf",
    );
}

// ------------------------------------------------------------------------------------
// The systemd unit
// ------------------------------------------------------------------------------------

/// The unit's settings: (section, key) → value, the last assignment winning.
fn unit_settings(text: &str) -> BTreeMap<(String, String), String> {
    let mut settings = BTreeMap::new();
    let mut section = String::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        assert!(!line.ends_with('\\'), "a continued line: {line}");
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_string();
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("not a setting: {line}"));
        settings.insert(
            (section.clone(), key.trim().to_string()),
            value.trim().to_string(),
        );
    }
    settings
}

/// The value of `[Service] key`.
fn service<'a>(settings: &'a BTreeMap<(String, String), String>, key: &str) -> &'a str {
    settings
        .get(&("Service".to_string(), key.to_string()))
        .unwrap_or_else(|| panic!("the unit has no {key}="))
}

/// The unit's ExecStart with `bin` for the installed executable and `config` for the
/// installed resolver.toml, split into words (it holds no quotes).
fn exec_start(
    settings: &BTreeMap<(String, String), String>,
    bin: &Path,
    config: &Path,
) -> Vec<String> {
    let line = service(settings, "ExecStart");
    assert!(
        line.starts_with(UNIT_BIN) && line.contains(UNIT_CONFIG) && !line.contains(['"', '\'']),
        "ExecStart={line}"
    );
    line.replace(UNIT_BIN, bin.to_str().unwrap())
        .replace(UNIT_CONFIG, config.to_str().unwrap())
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// `systemd-analyze verify` of the unit text `text`, saved as `dir`/ibi-resolver.service:
/// success, and everything it printed.
fn verify(dir: &Path, text: &str) -> (bool, String) {
    common::systemd::systemd_verify(dir, "ibi-resolver.service", text, &[])
}

#[test]
fn systemd_analyze_verifies_the_unit() {
    if !common::systemd::systemd_analyze_available() {
        eprintln!("skipping: systemd-analyze is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let text = fs::read_to_string(UNIT).unwrap();
    let bin = common::ibi_resolver_bin();
    assert!(text.contains(&format!("\nExecStart={UNIT_BIN} ")), "{text}");
    let text = text.replace(
        &format!("ExecStart={UNIT_BIN} "),
        &format!("ExecStart={} ", bin.display()),
    );
    // Not a word: no unknown directive, no bad value, an executable that exists.
    assert_eq!(verify(tmp.path(), &text), (true, String::new()));
    // While here it does speak up, about what this version of systemd does not know.
    let (_, said) = verify(
        tmp.path(),
        &text.replace("[Service]\n", "[Service]\nProtectClockk=true\n"),
    );
    assert!(
        said.contains("Unknown key name 'ProtectClockk' in section 'Service', ignoring.")
            || said.contains("Unknown key 'ProtectClockk' in section [Service], ignoring."),
        "{said}"
    );
}

/// What systemd does between fork and exec for the unit, done by hand: its limits, umask,
/// user, no-new-privileges and seccomp filters.
struct Sandbox {
    /// (uid, gid) to switch to, when running as root.
    ids: Option<(u32, u32)>,
    umask: u32,
    nofile: u64,
    no_new_privileges: bool,
    filter: Vec<libc::sock_filter>,
}

impl Sandbox {
    fn from_unit(
        settings: &BTreeMap<(String, String), String>,
        ids: Option<(u32, u32)>,
    ) -> Sandbox {
        let flag = |key: &str| match service(settings, key) {
            "true" | "yes" => true,
            "false" | "no" => false,
            other => panic!("{key}={other}"),
        };
        let families: Vec<u32> = service(settings, "RestrictAddressFamilies")
            .split_whitespace()
            .map(|f| match f {
                "AF_UNIX" => libc::AF_UNIX as u32,
                "AF_INET" => libc::AF_INET as u32,
                "AF_INET6" => libc::AF_INET6 as u32,
                "AF_NETLINK" => libc::AF_NETLINK as u32,
                other => panic!("RestrictAddressFamilies: {other} is not known here"),
            })
            .collect();
        Sandbox {
            ids,
            umask: u32::from_str_radix(service(settings, "UMask"), 8).unwrap(),
            nofile: service(settings, "LimitNOFILE").parse().unwrap(),
            no_new_privileges: flag("NoNewPrivileges"),
            filter: seccomp::filter(
                flag("MemoryDenyWriteExecute"),
                &families,
                flag("RestrictNamespaces"),
            ),
        }
    }

    /// Makes `cmd` run as the service runs.
    fn apply(&self, cmd: &mut Command) {
        let (ids, umask, nofile, nnp) = (self.ids, self.umask, self.nofile, self.no_new_privileges);
        let filter = self.filter.clone();
        // SAFETY: only system calls between fork and exec; `filter` was allocated before.
        unsafe {
            cmd.pre_exec(move || {
                let check = |r: libc::c_int| {
                    if r == 0 {
                        Ok(())
                    } else {
                        Err(std::io::Error::last_os_error())
                    }
                };
                // LimitNOFILE: systemd (PID 1) may raise the hard limit; without
                // CAP_SYS_RESOURCE the soft one goes as far as the hard one allows.
                let want = libc::rlimit {
                    rlim_cur: nofile,
                    rlim_max: nofile,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &want) != 0 {
                    let mut now = libc::rlimit {
                        rlim_cur: 0,
                        rlim_max: 0,
                    };
                    check(libc::getrlimit(libc::RLIMIT_NOFILE, &mut now))?;
                    now.rlim_cur = nofile.min(now.rlim_max);
                    check(libc::setrlimit(libc::RLIMIT_NOFILE, &now))?;
                }
                libc::umask(umask as libc::mode_t);
                if let Some((uid, gid)) = ids {
                    check(libc::setgroups(0, std::ptr::null()))?;
                    check(libc::setgid(gid))?;
                    check(libc::setuid(uid))?;
                }
                if nnp {
                    let (one, zero): (libc::c_ulong, libc::c_ulong) = (1, 0);
                    check(libc::prctl(
                        libc::PR_SET_NO_NEW_PRIVS,
                        one,
                        zero,
                        zero,
                        zero,
                    ))?;
                }
                let program = libc::sock_fprog {
                    len: filter.len() as u16,
                    filter: filter.as_ptr() as *mut libc::sock_filter,
                };
                check(libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::c_ulong::from(libc::SECCOMP_MODE_FILTER),
                    &program as *const libc::sock_fprog,
                ))
            });
        }
    }
}

/// The seccomp filters systemd 252 installs for MemoryDenyWriteExecute=,
/// RestrictAddressFamilies= (an allow list) and RestrictNamespaces=true, as one classic BPF
/// program: refused calls fail with the errno systemd gives them.
mod seccomp {
    use libc::sock_filter;

    #[cfg(target_arch = "x86_64")]
    const AUDIT_ARCH_NATIVE: u32 = 0xC000_003E;
    #[cfg(target_arch = "aarch64")]
    const AUDIT_ARCH_NATIVE: u32 = 0xC000_00B7;

    /// Offsets in `struct seccomp_data`: the call, the architecture, the low half of an
    /// argument (little-endian).
    const NR: u32 = 0;
    const ARCH: u32 = 4;
    const fn arg(i: u32) -> u32 {
        16 + 8 * i
    }

    /// An instruction, jumping to labels ("" is the next instruction).
    enum I {
        Label(&'static str),
        Load(u32),
        And(u32),
        JumpEq(u32, &'static str, &'static str),
        JumpSet(u32, &'static str, &'static str),
        Return(u32),
    }

    fn errno(e: i32) -> u32 {
        libc::SECCOMP_RET_ERRNO | e as u32
    }

    fn nr(call: libc::c_long) -> u32 {
        u32::try_from(call).unwrap()
    }

    pub fn filter(
        deny_write_execute: bool,
        families: &[u32],
        namespaces: bool,
    ) -> Vec<sock_filter> {
        use I::*;
        let mut p = vec![
            Load(ARCH),
            // Other architectures' calls are SystemCallArchitectures=native's business.
            JumpEq(AUDIT_ARCH_NATIVE, "", "allow"),
            Load(NR),
        ];
        if deny_write_execute {
            p.push(JumpEq(nr(libc::SYS_mmap), "mmap", ""));
            p.push(JumpEq(nr(libc::SYS_mprotect), "mprotect", ""));
            p.push(JumpEq(nr(libc::SYS_pkey_mprotect), "mprotect", ""));
            p.push(JumpEq(nr(libc::SYS_shmat), "shmat", ""));
        }
        if !families.is_empty() {
            p.push(JumpEq(nr(libc::SYS_socket), "socket", ""));
        }
        if namespaces {
            // clone3's flags cannot be read by a filter: systemd makes it ENOSYS, and the
            // C library falls back to clone.
            p.push(JumpEq(nr(libc::SYS_clone3), "enosys", ""));
            p.push(JumpEq(nr(libc::SYS_clone), "nsflags", ""));
            p.push(JumpEq(nr(libc::SYS_unshare), "nsflags", ""));
            p.push(JumpEq(nr(libc::SYS_setns), "eperm", ""));
        }
        p.push(Return(libc::SECCOMP_RET_ALLOW));
        let (w, x) = (libc::PROT_WRITE as u32, libc::PROT_EXEC as u32);
        p.extend([
            Label("mmap"),
            Load(arg(2)),
            And(w | x),
            JumpEq(w | x, "eperm", "allow"),
            Label("mprotect"),
            Load(arg(2)),
            JumpSet(x, "eperm", "allow"),
            Label("shmat"),
            Load(arg(2)),
            JumpSet(libc::SHM_EXEC as u32, "eperm", "allow"),
            Label("socket"),
            Load(arg(0)),
        ]);
        for &f in families {
            p.push(JumpEq(f, "allow", ""));
        }
        let ns = [
            libc::CLONE_NEWNS,
            libc::CLONE_NEWCGROUP,
            libc::CLONE_NEWUTS,
            libc::CLONE_NEWIPC,
            libc::CLONE_NEWUSER,
            libc::CLONE_NEWPID,
            libc::CLONE_NEWNET,
        ]
        .iter()
        .fold(0u32, |all, f| all | *f as u32);
        p.extend([
            Return(errno(libc::EAFNOSUPPORT)),
            Label("nsflags"),
            Load(arg(0)),
            JumpSet(ns, "eperm", "allow"),
            Label("enosys"),
            Return(errno(libc::ENOSYS)),
            Label("eperm"),
            Return(errno(libc::EPERM)),
            Label("allow"),
            Return(libc::SECCOMP_RET_ALLOW),
        ]);
        assemble(&p)
    }

    fn assemble(program: &[I]) -> Vec<sock_filter> {
        let mut at = std::collections::HashMap::new();
        let mut n = 0usize;
        for i in program {
            match i {
                I::Label(l) => {
                    at.insert(*l, n);
                }
                _ => n += 1,
            }
        }
        let mut out: Vec<sock_filter> = Vec::new();
        for i in program {
            let pc = out.len();
            let to = |label: &str| -> u8 {
                if label.is_empty() {
                    0
                } else {
                    u8::try_from(at[label] - pc - 1).expect("a jump of 255 or fewer")
                }
            };
            let (code, jt, jf, k) = match i {
                I::Label(_) => continue,
                I::Load(k) => (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0, 0, *k),
                I::And(k) => (libc::BPF_ALU | libc::BPF_AND | libc::BPF_K, 0, 0, *k),
                I::JumpEq(k, t, f) => (
                    libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K,
                    to(t),
                    to(f),
                    *k,
                ),
                I::JumpSet(k, t, f) => (
                    libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K,
                    to(t),
                    to(f),
                    *k,
                ),
                I::Return(k) => (libc::BPF_RET | libc::BPF_K, 0, 0, *k),
            };
            out.push(sock_filter {
                code: code as u16,
                jt,
                jf,
                k,
            });
        }
        out
    }
}

/// The errors of what the filter refuses, tried in a child under it: a writable and
/// executable mapping, a mapping made executable, a netlink socket, clone3 and a new user
/// namespace — `None` for a call that went through.
fn refused_under(sandbox: &Sandbox) -> Vec<Option<i32>> {
    let (read, write) = std::io::pipe().unwrap();
    let mut cmd = Command::new("/bin/true");
    sandbox.apply(&mut cmd);
    let fd = {
        use std::os::fd::AsRawFd;
        write.as_raw_fd()
    };
    // SAFETY: only system calls between fork and exec, results written to a pipe.
    unsafe {
        cmd.pre_exec(move || {
            let errno = |failed: bool| -> u8 {
                if failed {
                    std::io::Error::last_os_error().raw_os_error().unwrap_or(0) as u8
                } else {
                    0
                }
            };
            let (rw, wx) = (
                libc::PROT_READ | libc::PROT_WRITE,
                libc::PROT_WRITE | libc::PROT_EXEC,
            );
            let anon = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
            let mut results = [0u8; 5];
            let p = libc::mmap(std::ptr::null_mut(), 4096, wx, anon, -1, 0);
            results[0] = errno(p == libc::MAP_FAILED);
            let page = libc::mmap(std::ptr::null_mut(), 4096, rw, anon, -1, 0);
            results[1] = errno(libc::mprotect(page, 4096, libc::PROT_READ | libc::PROT_EXEC) != 0);
            let s = libc::socket(libc::AF_NETLINK, libc::SOCK_RAW, 0);
            results[2] = errno(s < 0);
            results[3] = errno(libc::syscall(libc::SYS_clone3, std::ptr::null::<u8>(), 0usize) < 0);
            results[4] = errno(libc::unshare(libc::CLONE_NEWUSER) != 0);
            libc::write(fd, results.as_ptr().cast(), results.len());
            Ok(())
        });
    }
    let status = cmd.status().unwrap();
    assert!(status.success());
    drop(write);
    let mut bytes = Vec::new();
    (&read).read_to_end(&mut bytes).unwrap();
    bytes
        .iter()
        .map(|&e| (e != 0).then_some(i32::from(e)))
        .collect()
}

#[test]
fn the_emulated_sandbox_refuses_what_systemd_refuses() {
    // The filter the service runs under below, as the unit asks for it, gives the errno
    // systemd's own filters give (MemoryDenyWriteExecute: EPERM;
    // RestrictAddressFamilies: EAFNOSUPPORT; RestrictNamespaces: ENOSYS for clone3, EPERM
    // for a namespace). Without the filter, the first three go through (clone3 and
    // unshare depend on the machine: a container's own filter may refuse them).
    let settings = unit_settings(&fs::read_to_string(UNIT).unwrap());
    let sandbox = Sandbox::from_unit(&settings, None);
    let unfiltered = Sandbox {
        filter: seccomp::filter(false, &[], false),
        ..Sandbox::from_unit(&settings, None)
    };
    assert_eq!(refused_under(&unfiltered)[..3], [None, None, None]);
    assert_eq!(
        refused_under(&sandbox),
        [
            Some(libc::EPERM),
            Some(libc::EPERM),
            Some(libc::EAFNOSUPPORT),
            Some(libc::ENOSYS),
            Some(libc::EPERM)
        ]
    );
}

/// The password-file entry of `name`: (home, shell).
fn passwd_entry(name: &str) -> (String, String) {
    let passwd = fs::read_to_string("/etc/passwd").unwrap();
    passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.len() >= 7 && f[0] == name)
        .map(|f| (f[5].to_string(), f[6].to_string()))
        .unwrap_or_else(|| panic!("no {name} in /etc/passwd"))
}

#[test]
fn the_units_exec_start_runs_as_systemd_would_run_it() {
    let settings = unit_settings(&fs::read_to_string(UNIT).unwrap());
    let user = service(&settings, "User");
    assert!(!user.is_empty() && user != "root", "User={user}");
    assert_eq!(service(&settings, "Group"), user);
    // The service's user: nobody stands for the unit's own when the tests run as root.
    let (name, ids) = if common::running_as_root() {
        (
            "nobody",
            Some(common::user_ids("nobody").expect("no user nobody")),
        )
    } else {
        ("", None)
    };
    // systemd sets LimitNOFILE as PID 1: only fs.nr_open bounds it.
    let nr_open: u64 = fs::read_to_string("/proc/sys/fs/nr_open")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let sandbox = Sandbox::from_unit(&settings, ids);
    assert!(sandbox.nofile <= nr_open, "LimitNOFILE={}", sandbox.nofile);
    // The registry holds the key hashes: what the service makes is its own alone.
    assert_eq!(sandbox.umask, 0o077, "UMask");
    assert_eq!(service(&settings, "StateDirectoryMode"), "0700");

    // /var/lib/<StateDirectory> as systemd makes it: the service's, StateDirectoryMode;
    // /etc/ibi-resolver/resolver.toml as the unit's comment installs it: root's, readable
    // by the service's group.
    let tmp = common::archive_tempdir();
    let state_mode = u32::from_str_radix(service(&settings, "StateDirectoryMode"), 8).unwrap();
    let state = tmp
        .path()
        .join("var/lib")
        .join(service(&settings, "StateDirectory"));
    fs::create_dir_all(&state).unwrap();
    for dir in [tmp.path().join("var"), tmp.path().join("var/lib")] {
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    }
    fs::set_permissions(&state, fs::Permissions::from_mode(state_mode)).unwrap();
    let etc = tmp.path().join("etc/ibi-resolver");
    fs::create_dir_all(&etc).unwrap();
    fs::set_permissions(tmp.path().join("etc"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(&etc, fs::Permissions::from_mode(0o755)).unwrap();
    let port = common::free_port();
    let config = resolver_toml(
        &etc,
        port,
        &format!("http://127.0.0.1:{port}"),
        &state.join("resolver.sqlite"),
    );
    fs::set_permissions(&config, fs::Permissions::from_mode(0o640)).unwrap();
    if let Some((uid, gid)) = ids {
        std::os::unix::fs::chown(&state, Some(uid), Some(gid)).unwrap();
        std::os::unix::fs::chown(&config, None, Some(gid)).unwrap();
    }
    // The executable where the service's user may run it.
    let mut bin = common::ibi_resolver_bin();
    if ids.is_some() {
        bin = common::runnable_by_others(&bin, tmp.path());
    }

    // The unit's ExecStart, in the environment systemd gives a system service.
    let argv = exec_start(&settings, &bin, &config);
    assert_eq!(
        argv,
        [
            bin.to_str().unwrap(),
            "serve",
            "--config",
            config.to_str().unwrap()
        ]
    );
    let environment = |cmd: &mut Command| {
        cmd.env_clear()
            .current_dir("/")
            .env("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin")
            .env("STATE_DIRECTORY", &state);
        if ids.is_some() {
            let (home, shell) = passwd_entry(name);
            cmd.env("HOME", home)
                .env("USER", name)
                .env("LOGNAME", name)
                .env("SHELL", shell);
        }
        sandbox.apply(cmd);
    };
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    environment(&mut cmd);
    let log = tmp.path().join("resolver.log");
    let mut resolver = Resolver::spawn(cmd, port, &log);
    // It runs as the unit says: the service's user and umask, no new privileges, a seccomp
    // filter.
    let status = fs::read_to_string(format!("/proc/{}/status", resolver.child.id())).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|| panic!("no {name} in\n{status}"))
    };
    assert_eq!(field("Umask:"), format!("{:04o}", sandbox.umask));
    assert_eq!(field("NoNewPrivs:"), "1");
    assert_eq!(field("Seccomp:"), "2");
    if let Some((uid, gid)) = ids {
        assert_eq!(field("Uid:"), format!("{uid} {uid} {uid} {uid}"));
        assert_eq!(field("Gid:"), format!("{gid} {gid} {gid} {gid}"));
    }
    let home = get(licensed(), &resolver.base(), "/", &[]);
    assert_eq!(home.status, 200, "{}", resolver.log());
    assert!(
        home.text().contains("No Archive included."),
        "{}",
        home.text()
    );

    // The operator registers an Archive as the service's user; the Archive, named by
    // host name (resolved through the C library's name service), is included and a
    // persistent URL leads to its file.
    let (code, out, err) = resolver_cmd(
        &bin,
        &["register", SERVICE, "--email", "archive-admin@example.org"],
        &config,
        &format!("{KEY}\n"),
        environment,
    );
    assert_eq!(code, 0, "{out}{err}");
    let (root, serve) = archive(tmp.path(), "localhost");
    let (code, out, err) = include(&root, &format!("{}/{RESOLVER_IBI}", resolver.base()));
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "status.archive included\nstatus.confirmation successful\n"
        ),
        "{err}\n{}",
        resolver.log()
    );
    let r = get(licensed(), &resolver.base(), "/8JMKD3MGP8W/35MME4E", &[]);
    let file = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS 643.0-B-1.pdf";
    let port_of_archive = serve.address.rsplit(':').next().unwrap();
    let path = format!("/col/{}", file.replace(' ', "%20"));
    assert_eq!(
        (r.status, r.header("location")),
        (
            302,
            Some(format!("http://localhost:{port_of_archive}{path}").as_str())
        ),
        "{}",
        resolver.log()
    );
    let followed = get(licensed(), &serve.base_url(), &path, &[]);
    assert_eq!(followed.status, 200);
    assert!(followed.body == fs::read(root.join("col").join(file)).unwrap());

    // Only the service's files in the state directory, private to it; the registry 0600.
    let registry = fs::metadata(state.join("resolver.sqlite")).unwrap();
    assert_eq!(registry.mode() & 0o777, 0o600);
    assert_eq!(fs::metadata(&state).unwrap().mode() & 0o777, state_mode);
    for entry in fs::read_dir(&state).unwrap() {
        let meta = entry.as_ref().unwrap().metadata().unwrap();
        let name = entry.unwrap().file_name();
        assert_eq!(meta.mode() & 0o077, 0, "{name:?}: mode {:o}", meta.mode());
        if let Some((uid, _)) = ids {
            assert_eq!(meta.uid(), uid, "{name:?}");
        }
    }

    // KillSignal stops it within TimeoutStopSec, exit status 0 (a clean stop for systemd),
    // also with a connection left open (as a proxy in front keeps one).
    let mut idle = common::connect_from(licensed(), ([127, 0, 0, 1], port).into()).unwrap();
    idle.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    idle.set_read_timeout(Some(common::HTTP_TIMEOUT)).unwrap();
    let mut first = [0u8; 12];
    idle.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    let signal = match service(&settings, "KillSignal") {
        "SIGTERM" => libc::SIGTERM,
        "SIGINT" => libc::SIGINT,
        other => panic!("KillSignal={other} is not known here"),
    };
    let stop = Duration::from_secs(
        service(&settings, "TimeoutStopSec")
            .trim_end_matches('s')
            .parse()
            .unwrap(),
    );
    let status = resolver.stop(signal, stop);
    assert_eq!(status.code(), Some(0), "{}", resolver.log());
    assert!(
        resolver
            .log()
            .ends_with("ibi-resolver: stopping\nibi-resolver: stopped\n"),
        "{}",
        resolver.log()
    );
}
