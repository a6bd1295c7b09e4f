//! Hostile input to `ibi-resolver`, real processes on 127.0.0.1 only: a broken
//! resolver.toml, a damaged, read-only or earlier version's registry, malformed and oversized requests, slow
//! clients, and Archives that answer garbage, too much, too slowly, a redirect or a URL
//! that must not become a `Location`. Each gets a clear error or page and exactly one log
//! line, never a panic, a hang or unbounded memory; and the resolver is never made a client
//! of addresses outside `[archives].networks` nor a follower of an Archive's redirect.
//!
//! The hostile Archives are small `std::net::TcpListener` servers (`common::peer`), each
//! answering what its case needs.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::http::{read_response, response_of, responses_of, whole_response, Response as Answer};
use ibi_resolver::client::MAX_ANSWER;
use ibi_resolver::pages::STYLE;
use ibi_resolver::server::{HEAD_TIMEOUT, MAX_HEAD, MAX_TARGET, STOP_GRACE};

const BIN: &str = env!("CARGO_BIN_EXE_ibi-resolver");
const RESOLVER_IBI: &str = "J8LNKB5R7W/3FUQHC5";
/// The hostile Archive's service IBI and registration key.
const SERVICE: &str = "urlib.net/www/2012/01.01.01.01";
const KEY: &str = "1234567890";
/// What a command that fails or a server that starts must take at most.
const QUICKLY: Duration = Duration::from_secs(10);
/// How long a test waits for an event before it calls the process hung and fails (as
/// `HANG_GUARD` of the workspace's tests/common): a guard, no bound on speed.
const HANG_GUARD: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------------------
// Processes

/// What a command did.
struct Ran {
    code: i32,
    out: String,
    err: String,
}

/// Runs `ibi-resolver ARGS` (as the user given, from the copy it may run), `stdin` on its
/// standard input, and waits at most [`QUICKLY`] for it to exit.
fn run_as(user: Option<&User>, args: &[&str], stdin: &str) -> Ran {
    let mut cmd = Command::new(user.map_or(Path::new(BIN), |u| &u.bin));
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(u) = user {
        use std::os::unix::process::CommandExt;
        cmd.uid(u.uid).gid(u.uid);
    }
    let mut child = cmd.spawn().unwrap();
    // A command that refuses early may not read its input: a broken pipe is no failure.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stdout.read_to_end(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stderr.read_to_end(&mut s);
        s
    });
    let deadline = Instant::now() + QUICKLY;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ibi-resolver {args:?} did not exit within {QUICKLY:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let code = status.code().unwrap_or(-1);
    let err = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
    Ran {
        code,
        out: String::from_utf8_lossy(&out.join().unwrap()).into_owned(),
        // A server that failed: its lines are log lines, each after its time (checked and
        // taken off); a usage error (2) is a message, untimed.
        err: if args.first() == Some(&"serve") && code == 1 {
            common::resolver::unstamped(&err)
        } else {
            err
        },
    }
}

fn run(args: &[&str], stdin: &str) -> Ran {
    run_as(None, args, stdin)
}

/// `[limits]` of the resolvers of these tests: every reader of theirs is one client
/// network (127.0.0.0/24), so the bounds per client are set beyond what any test sends,
/// not to stand in for what it checks.
const UNBOUNDED_CLIENT: &str =
    "[limits]\nper_client_resolutions = 100000\nper_client_misses = 1000000\nper_client_connections = 1000000\n";

/// The resolver's settings: `[archives]` as given, the registry beside the file.
fn write_config(dir: &Path, archives: &str) -> PathBuf {
    let config = dir.join("resolver.toml");
    std::fs::write(
        &config,
        format!(
            "serviceibi = \"{RESOLVER_IBI}\"\npublicurl = \"http://127.0.0.1\"\nlisten = \"127.0.0.1:0\"\ndatabase = \"registry.sqlite\"\n{UNBOUNDED_CLIENT}[archives]\n{archives}"
        ),
    )
    .unwrap();
    config
}

/// `[archives]` of a resolver whose Archives live on loopback. They are never put to
/// sleep: these tests send one hostile Archive many requests in a row, each of which must
/// reach it.
const LOOPBACK: &str = "timeout = \"2s\"\nnetworks = [\"127.0.0.0/8\"]\ndormant_after = 0\n";

/// A running `ibi-resolver serve`, its stderr in a file.
struct Resolver {
    child: Child,
    port: u16,
    config: PathBuf,
    log: PathBuf,
}

impl Resolver {
    /// Starts the server on `config` and waits for it to listen (on a port it picks).
    fn start(config: &Path) -> Resolver {
        Resolver::start_as(None, config)
    }

    fn start_as(user: Option<&User>, config: &Path) -> Resolver {
        let log = config.with_file_name(format!(
            "serve-{}.log",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        let mut cmd = Command::new(user.map_or(Path::new(BIN), |u| &u.bin));
        cmd.args(["serve", "--config", config.to_str().unwrap()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap());
        if let Some(u) = user {
            use std::os::unix::process::CommandExt;
            cmd.uid(u.uid).gid(u.uid);
        }
        let mut child = cmd.spawn().unwrap();
        let deadline = Instant::now() + QUICKLY;
        let port = loop {
            let text =
                common::resolver::unstamped(&std::fs::read_to_string(&log).unwrap_or_default());
            if let Some(port) = text
                .lines()
                .find_map(|l| l.strip_prefix("ibi-resolver: listening on http://127.0.0.1:"))
                .and_then(|rest| rest.split(' ').next())
                .and_then(|p| p.parse().ok())
            {
                break port;
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!("serve exited ({status}) before listening:\n{text}");
            }
            assert!(Instant::now() < deadline, "serve did not listen:\n{text}");
            std::thread::sleep(Duration::from_millis(10));
        };
        Resolver {
            child,
            port,
            config: config.to_path_buf(),
            log,
        }
    }

    /// The complete lines of the log so far.
    fn lines(&self) -> Vec<String> {
        self.log().lines().map(str::to_string).collect()
    }

    /// The complete lines of the log so far, each one's time checked and taken off.
    fn log(&self) -> String {
        common::resolver::unstamped(&std::fs::read_to_string(&self.log).unwrap_or_default())
    }

    /// The one line logged since there were `before`: waits for it, then checks that no
    /// second one follows.
    fn one_line_after(&self, before: usize) -> String {
        self.lines_after(before, 1).remove(0)
    }

    /// The `count` lines logged since there were `before`: waits (at most [`QUICKLY`]) for
    /// them, then checks that no more follow.
    fn lines_after(&self, before: usize, count: usize) -> Vec<String> {
        let deadline = Instant::now() + QUICKLY;
        while self.lines().len() < before + count {
            assert!(
                Instant::now() < deadline,
                "fewer than {count} log lines:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        // A window for a line too many, not a wait for an event: no event says that
        // nothing more is coming (each request's own line is written before its answer).
        std::thread::sleep(Duration::from_millis(100));
        let lines = self.lines();
        assert_eq!(
            lines.len(),
            before + count,
            "more than {count} log lines:\n{}",
            lines[before..].join("\n")
        );
        lines[before..].to_vec()
    }

    /// The first `count` lines logged since there were `before`, once they are there
    /// (waiting at most [`QUICKLY`]), whatever follows them.
    fn first_lines_after(&self, before: usize, count: usize) -> Vec<String> {
        let deadline = Instant::now() + QUICKLY;
        loop {
            let lines = self.lines();
            if lines.len() >= before + count {
                return lines[before..before + count].to_vec();
            }
            assert!(
                Instant::now() < deadline,
                "fewer than {count} log lines:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// `ibi-resolver COMMAND … --config` of this resolver.
    fn command(&self, args: &[&str], stdin: &str) -> Ran {
        let mut all = args.to_vec();
        all.extend(["--config", self.config.to_str().unwrap()]);
        run(&all, stdin)
    }

    /// The highest resident set size the server has had, in KiB.
    fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().strip_suffix("kB"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap()
    }

    /// The server's resident set size now, in KiB.
    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().strip_suffix("kB"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap()
    }

    /// Fails when the server is no longer running or ever panicked.
    fn assert_alive(&mut self) {
        assert!(
            self.child.try_wait().unwrap().is_none(),
            "the resolver exited:\n{}",
            self.log()
        );
        assert!(!self.log().contains("panicked"), "{}", self.log());
    }

    /// Registers [`SERVICE`] and asks for its inclusion at `address`.
    fn include(&self, address: &str) -> Answer {
        let ran = self.command(
            &["register", SERVICE, "--email", "archive-admin@example.org"],
            &format!("{KEY}\n"),
        );
        assert_eq!(ran.code, 0, "{}{}", ran.out, ran.err);
        self.include_again(SERVICE, address)
    }

    /// The inclusionRequest of Table 7.2 for `service` at `address`.
    fn include_again(&self, service: &str, address: &str) -> Answer {
        let address = address
            .replace('[', "%5B")
            .replace(']', "%5D")
            .replace('@', "%40");
        get(
            self.port,
            &format!(
                "/{RESOLVER_IBI}?servicesubject=inclusionRequest&archiveaddress={address}&archiveserviceibi={service}&archiveip=127.0.0.1&archiveprotocol=HTTP&archiveplatformversion=1&archiveadmemailaddress=archive-admin@example.org&registrationkey={KEY}"
            ),
        )
    }
}

impl Drop for Resolver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The effective user id of this process.
fn euid() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        .and_then(|id| id.parse().ok())
        .unwrap()
}

/// Another user the resolver runs as, and the copy of the executable that user may run
/// (the built one may sit below a directory only its owner enters).
struct User {
    uid: u32,
    bin: PathBuf,
}

impl User {
    /// `uid` (and the group of the same number), with a copy of the executable in `dir`
    /// (a directory others may enter).
    fn new(uid: u32, dir: &Path) -> User {
        let bin = dir.join("ibi-resolver");
        std::fs::copy(BIN, &bin).unwrap();
        chmod(&bin, 0o755);
        User { uid, bin }
    }
}

/// The user (and group of the same number) the resolver runs as where permission bits
/// must hold: this process's own, or, for root (whom they do not stop), `nobody`.
fn unprivileged() -> Option<u32> {
    if euid() != 0 {
        return None;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let nobody = passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.len() > 3 && f[0] == "nobody")
        .and_then(|f| f[2].parse().ok())
        .unwrap_or(65534);
    Some(nobody)
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

// ---------------------------------------------------------------------------------------
// HTTP as a client

/// Sends `request` as is on a new connection and reads until the server closes it: one
/// well-formed answer and nothing after it.
fn exchange(port: u16, request: &[u8]) -> Answer {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    // A server that refuses a head may close before reading all of it.
    let _ = s.write_all(request);
    let mut raw = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("reading the answer: {e}"),
        }
    }
    whole_response(&raw)
}

fn get(port: u16, target: &str) -> Answer {
    get_with(port, target, "")
}

/// GET `target` with extra header lines (each ending in CRLF).
fn get_with(port: u16, target: &str, headers: &str) -> Answer {
    exchange(
        port,
        format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Connection: close\r\n\r\n")
            .as_bytes(),
    )
}

/// The resolution of `path` shown, not followed, as JSON.
fn inspect(port: u16, path: &str) -> serde_json::Value {
    let a = get_with(
        port,
        &format!("{path}?noredirect"),
        "Accept: application/json\r\n",
    );
    assert_eq!(a.status, 200, "{}", a.text());
    serde_json::from_slice(&a.body).unwrap()
}

/// The acknowledgments the resolver ended with `result` (`sent`, `failed`, `dropped`), as
/// its metrics count them.
fn acknowledgments(port: u16, result: &str) -> usize {
    let a = get(port, "/metrics");
    assert_eq!(a.status, 200, "{}", a.text());
    let name = format!("ibi_resolver_acknowledgments_total{{result=\"{result}\"}} ");
    a.text()
        .lines()
        .find_map(|l| l.strip_prefix(&name))
        .map_or(0, |n| n.parse().unwrap())
}

/// A log line with its duration (`12.3ms`) written as `Tms`.
fn untimed(line: &str) -> String {
    let mut done = false;
    line.split(' ')
        .map(|w| {
            let timed = w
                .strip_suffix("ms")
                .is_some_and(|n| !n.is_empty() && n.parse::<f64>().is_ok());
            if timed && !done {
                done = true;
                "Tms".to_string()
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

// ---------------------------------------------------------------------------------------
// Hostile Archives

use common::peer::{answer_200, archive, asked_ibi, hold, Peer};

const INCLUDED: &str = "status.archive included\r\nstatus.confirmation successful\r\n";

/// `[archives]` and `[memory]` of a resolver that asks every Archive at every
/// resolution (no memory) and, unless `dormant_after`, never sets one aside.
fn every_archive_asked(dormant_after: u32) -> String {
    format!("timeout = \"2s\"\nnetworks = [\"127.0.0.0/8\"]\ndormant_after = {dormant_after}\n[memory]\nentries = 0\n")
}

/// The service IBI of a second Archive.
const SECOND: &str = "urlib.net/www/2012/01.01.01.02";

/// Registers [`SECOND`] and has it included at `peer`.
fn include_second(r: &Resolver, peer: &Peer) {
    let ran = r.command(&["register", SECOND, "--email", "a@example.org"], KEY);
    assert_eq!(ran.code, 0, "{}", ran.err);
    assert_eq!(
        r.include_again(SECOND, &peer.addr.to_string()).text(),
        INCLUDED
    );
}

/// The English 404 page of a resolution where every Archive asked answered and none
/// knew the IBI.
fn not_found_page(ibi: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>Item not found</title><style>{STYLE}</style></head>\n<body>\n<header><a href=\"/\">IBI resolver</a></header>\n<main>\n<h1>Item not found</h1>\n<p>No Archive knows the IBI <code>{ibi}</code>.</p>\n</main>\n</body>\n</html>\n"
    )
}

/// The English 404 page of a resolution whose one Archive has the item but gave no URL
/// the resolver takes.
fn no_url_page(ibi: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>Not found</title><style>{STYLE}</style></head>\n<body>\n<header><a href=\"/\">IBI resolver</a></header>\n<main>\n<h1>Not found</h1>\n<p>An Archive has the item <code>{ibi}</code>, but gives no URL for it.</p>\n</main>\n</body>\n</html>\n"
    )
}

/// The English 503 page of a resolution that found nothing while the Archive
/// [`SERVICE`] did not answer, of `asked` Archives: named by its service IBI, not its
/// address (which the log shows, [`unavailable_line`]).
fn unavailable_page(ibi: &str, asked: usize) -> String {
    // The one that did not answer was all there was to ask, or others answered.
    let first = match asked {
        1 => format!("No Archive answered about the IBI <code>{ibi}</code>."),
        _ => format!("No Archive that answered knows the IBI <code>{ibi}</code>."),
    };
    let asked = match asked {
        1 => "1 Archive was asked.".to_string(),
        n => format!("{n} Archives were asked."),
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>Archives unavailable</title><style>{STYLE}</style></head>\n<body>\n<header><a href=\"/\">IBI resolver</a></header>\n<main>\n<h1>Archives unavailable</h1>\n<p>{first} {asked} This one did not answer:</p>\n<ul>\n<li>{SERVICE}</li>\n</ul>\n<p>It may hold the item. Try again later.</p>\n</main>\n</body>\n</html>\n"
    )
}

/// The log line of that resolution.
fn unavailable_line(path: &str, address: &str, asked: usize) -> String {
    format!(
        "ibi-resolver: 127.0.0.1 \"GET {path}\" 503 Tms not found ({asked} asked, 1 did not answer: {address} ({SERVICE}))"
    )
}

// ---------------------------------------------------------------------------------------
// 1. Configuration

#[test]
fn a_broken_configuration_stops_serve_at_once_naming_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("resolver.toml");
    let c = config.to_str().unwrap();
    let head = format!("serviceibi = \"{RESOLVER_IBI}\"\npublicurl = \"http://127.0.0.1\"\n");
    // A number that looks like a registration key, where it has no business: no message
    // may repeat it unless it is the value found wrong.
    let secret = "98765432109876";
    let cases: Vec<(String, String)> = vec![
        // Broken TOML.
        (
            format!("{head}listen = \"127.0.0.1:0\n"),
            "line 3, column 22: invalid basic string, expected `\"`".into(),
        ),
        (
            format!("{head}listen = \"127.0.0.1:0\" {secret}\n"),
            "line 3, column 24: unexpected key or value, expected newline, `#`".into(),
        ),
        (
            format!("{head}[archives]\ntimeout = \"2s\"\n[archives]\ntimeout = \"3s\"\n"),
            "line 5, column 2: duplicate key".into(),
        ),
        // Unknown fields.
        (
            format!("{head}registrationkey = \"{secret}\"\n"),
            "line 3, column 1: unknown field `registrationkey`, expected one of `serviceibi`, `publicurl`, `listen`, `database`, `trustedproxies`, `archives`, `memory`, `limits`, `metrics`, `site`".into(),
        ),
        (
            format!("{head}[archives]\nkey = \"{secret}\"\n"),
            "line 4, column 1: unknown field `key`, expected one of `timeout`, `networks`, `dormant_after`, `probe`, `connections`".into(),
        ),
        // Values of the wrong type.
        (
            format!("{head}[archives]\ntimeout = 2\n"),
            "line 4, column 11: invalid type: integer `2`, expected a string".into(),
        ),
        (
            format!("{head}[archives]\nnetworks = \"127.0.0.0/8\"\n"),
            "line 4, column 12: invalid type: string \"127.0.0.0/8\", expected a sequence".into(),
        ),
        // Bad values: where they are, and what is wrong with them.
        (
            format!("{head}[archives]\ntimeout = \"2\"\n"),
            "line 4, column 11: [archives] timeout: \"2\" has no unit; write it as \"2s\" or \"500ms\"".into(),
        ),
        (
            format!("{head}[archives]\ntimeout = \"90s\"\n"),
            "line 4, column 11: [archives] timeout: \"90s\" is outside 1ms..30s".into(),
        ),
        (
            format!("{head}[archives]\nnetworks = [\"127.0.0.0/8\", \"127.0.0.0/33\"]\n"),
            "line 4, column 28: [archives] networks: \"127.0.0.0/33\" is not an address block such as 127.0.0.0/8".into(),
        ),
        (
            format!("{head}listen = \"localhost:8090\"\n"),
            "line 3, column 10: listen = \"localhost:8090\" is not an address and port such as 127.0.0.1:8090".into(),
        ),
        (
            format!("{head}trustedproxies = [\"10.0.0.0/8\", \"proxy\"]\n"),
            "line 3, column 33: trustedproxies: \"proxy\" is not an address block such as 127.0.0.0/8".into(),
        ),
        (
            format!("serviceibi = \"{RESOLVER_IBI}\"\npublicurl = \"ftp://127.0.0.1\"\n"),
            "line 2, column 13: publicurl = \"ftp://127.0.0.1\" is not http or https; expected http://host[:port]".into(),
        ),
        (
            "serviceibi = \"J8LNKB5R7W\"\npublicurl = \"http://127.0.0.1\"\n".into(),
            "line 1, column 14: serviceibi: invalid IBI \"J8LNKB5R7W\": it has 0 '/', expected 3 (rep) or 1 (IBIp)".into(),
        ),
        (
            format!("serviceibi = \"{RESOLVER_IBI}\"\n"),
            "line 1, column 1: missing field `publicurl`".into(),
        ),
    ];
    for (text, message) in &cases {
        std::fs::write(&config, text).unwrap();
        let ran = run(&["serve", "--config", c], "");
        assert_eq!(
            (ran.code, ran.out.as_str(), ran.err.as_str()),
            (1, "", format!("ibi-resolver: {c}: {message}\n").as_str()),
            "{text}"
        );
        if !message.contains(secret) {
            assert!(!ran.err.contains(secret), "{}", ran.err);
        }
    }
    // Not a file of text, no file, a directory.
    std::fs::write(&config, b"serviceibi = \"\xff\xfe\"\n").unwrap();
    let ran = run(&["serve", "--config", c], "");
    assert_eq!(
        (ran.code, ran.err.as_str()),
        (1, format!("ibi-resolver: {c}: stream did not contain valid UTF-8 (choose the settings with --config FILE or IBI_RESOLVER_CONFIG=FILE; ibi-resolver init --publicurl URL writes them)\n").as_str())
    );
    let missing = dir.path().join("none.toml");
    let ran = run(&["serve", "--config", missing.to_str().unwrap()], "");
    assert_eq!(
        (ran.code, ran.err.as_str()),
        (1, format!("ibi-resolver: {}: No such file or directory (os error 2) (choose the settings with --config FILE or IBI_RESOLVER_CONFIG=FILE; ibi-resolver init --publicurl URL writes them)\n", missing.display()).as_str())
    );
    let d = dir.path().to_str().unwrap();
    let ran = run(&["serve", "--config", d], "");
    assert_eq!(
        (ran.code, ran.err.as_str()),
        (1, format!("ibi-resolver: {d}: Is a directory (os error 21) (choose the settings with --config FILE or IBI_RESOLVER_CONFIG=FILE; ibi-resolver init --publicurl URL writes them)\n").as_str())
    );
    // A port already taken.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    std::fs::write(&config, format!("{head}listen = \"{addr}\"\n")).unwrap();
    let ran = run(&["serve", "--config", c], "");
    assert_eq!(
        (ran.code, ran.err.as_str()),
        (
            1,
            format!(
                "ibi-resolver: cannot listen on {addr}: Address already in use (os error 98)\n"
            )
            .as_str()
        )
    );
}

#[test]
fn usage_errors_of_serve_exit_2_with_one_line_pointing_to_its_help() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), LOOPBACK);
    let c = config.to_str().unwrap();
    for (args, line) in [
        (
            vec!["serve", "extra", "--config", c],
            "ibi-resolver: serve: unexpected argument \"extra\"; see ibi-resolver serve --help",
        ),
        (
            vec!["serve", "--bogus", "--config", c],
            "ibi-resolver: serve: unexpected argument --bogus; see ibi-resolver serve --help",
        ),
        (
            vec!["serve", "--config"],
            "ibi-resolver: serve: missing argument for option '--config'; see ibi-resolver serve --help",
        ),
        (
            vec!["serve", "--config", c, "--csv=yes"],
            "ibi-resolver: serve: unexpected argument --csv; see ibi-resolver serve --help",
        ),
    ] {
        let ran = run(&args, "");
        assert_eq!(
            (ran.code, ran.out.as_str(), ran.err.as_str()),
            (2, "", format!("{line}\n").as_str()),
            "{args:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// 2. The registry file

/// Deterministic bytes that are no database.
fn noise(len: usize) -> Vec<u8> {
    common::noise(len, 0x9e37_79b9_7f4a_7c15)
}

/// A real registry with [`SERVICE`] registered, as bytes.
fn a_good_registry() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), LOOPBACK);
    let ran = run(
        &[
            "register",
            SERVICE,
            "--email",
            "a@example.org",
            "--config",
            config.to_str().unwrap(),
        ],
        KEY,
    );
    assert_eq!(ran.code, 0, "{}", ran.err);
    let bytes = std::fs::read(dir.path().join("registry.sqlite")).unwrap();
    assert_eq!(bytes.len() % 4096, 0);
    bytes
}

/// An SQLite database of another program, made with the SQLite the resolver links.
fn another_programs_database(path: &Path, user_version: i64) {
    let conn = rusqlite::Connection::open(path).unwrap();
    if user_version == 0 {
        conn.execute_batch(
            "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('mine');",
        )
        .unwrap();
    } else {
        conn.execute_batch(&format!("PRAGMA user_version = {user_version};"))
            .unwrap();
    }
}

#[test]
fn a_damaged_or_foreign_registry_is_refused_by_every_command_and_by_serve() {
    let good = a_good_registry();
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), LOOPBACK);
    let c = config.to_str().unwrap();
    let db = dir.path().join("registry.sqlite");
    let shown = db.display().to_string();
    let mut truncated_mid_page = good.clone();
    truncated_mid_page.truncate(good.len() - 1);
    let mut truncated_at_page = good.clone();
    truncated_at_page.truncate(good.len() - 4096);
    // (what, how the file is made, the message every command gives)
    type Making<'a> = Box<dyn Fn() + 'a>;
    let cases: Vec<(&str, Making, String)> = vec![
        (
            "random bytes",
            Box::new(|| std::fs::write(&db, noise(8192)).unwrap()),
            format!("{shown}: not a usable SQLite database: file is not a database"),
        ),
        (
            "a registry cut at a page boundary",
            Box::new(|| std::fs::write(&db, &truncated_at_page).unwrap()),
            format!("{shown}: not a usable SQLite database: database disk image is malformed"),
        ),
        (
            // SQLite reads the missing byte as zero and quick_check finds nothing wrong:
            // the registry would name another Archive than was registered.
            "a registry missing its last byte",
            Box::new(|| std::fs::write(&db, &truncated_mid_page).unwrap()),
            format!(
                "{shown}: database is damaged: {} bytes, not a whole number of 4096-byte pages",
                good.len() - 1
            ),
        ),
        (
            "another program's database",
            Box::new(|| another_programs_database(&db, 0)),
            format!("{shown}: holds tables but is not a resolver registry"),
        ),
        (
            "a registry of another schema version",
            Box::new(|| another_programs_database(&db, 7)),
            format!("{shown}: schema version 7; this resolver knows 4"),
        ),
    ];
    for (what, make, message) in &cases {
        let _ = std::fs::remove_file(&db);
        make();
        let before = std::fs::read(&db).unwrap();
        for args in [
            vec!["archives", "--config", c],
            vec![
                "register",
                "urlib.net/www/2012/01.01.01.02",
                "--email",
                "a@example.org",
                "--config",
                c,
            ],
            vec!["unregister", SERVICE, "--config", c],
            vec!["serve", "--config", c],
        ] {
            let ran = run(&args, KEY);
            assert_eq!(
                (ran.code, ran.out.as_str(), ran.err.as_str()),
                (1, "", format!("ibi-resolver: {message}\n").as_str()),
                "{what}: {args:?}"
            );
        }
        // Refused, and left as it was.
        assert!(std::fs::read(&db).unwrap() == before, "{what}: changed");
    }
    // Where no file can be made: the registry's directory is a file.
    std::fs::write(dir.path().join("file"), "").unwrap();
    std::fs::write(
        &config,
        format!("serviceibi = \"{RESOLVER_IBI}\"\npublicurl = \"http://127.0.0.1\"\nlisten = \"127.0.0.1:0\"\ndatabase = \"file/registry.sqlite\"\n"),
    )
    .unwrap();
    for args in [
        vec!["archives", "--config", c],
        vec!["serve", "--config", c],
    ] {
        let ran = run(&args, "");
        assert_eq!(
            (ran.code, ran.err.as_str()),
            (
                1,
                format!(
                    "ibi-resolver: {}: cannot create: Not a directory (os error 20)\n",
                    dir.path().join("file/registry.sqlite").display()
                )
                .as_str()
            ),
            "{args:?}"
        );
    }
}

/// GET `target` on a new connection: `None` when no connection could be made, else the
/// answer, or `None` when the server was gone before giving a whole one.
fn try_get(port: u16, target: &str) -> Option<Option<Answer>> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    let mut answer = || {
        s.set_read_timeout(Some(QUICKLY)).ok()?;
        s.write_all(
            format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .ok()?;
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).ok()?;
        // Cut short: the server was gone.
        response_of(&raw).ok()?;
        Some(whole_response(&raw))
    };
    Some(answer())
}

/// What the worker of [`a_kill_at_any_instant_leaves_a_whole_registry`] tells.
enum Work {
    /// A `register` was started.
    Started,
    /// An inclusion request was sent.
    Including,
    /// A registration and its inclusion request ended.
    Done,
    /// The worker stopped.
    Ended,
}

/// What the worker saw acknowledged: Archives `register` said it registered, Archives
/// the resolver said it included, and every one it tried (service IBI, e-mail).
#[derive(Default)]
struct Acknowledged {
    registered: std::collections::BTreeSet<String>,
    included: std::collections::BTreeSet<String>,
    tried: std::collections::BTreeMap<String, String>,
    /// `register` commands killed, and inclusion requests left unanswered by a kill.
    registers_killed: usize,
    inclusions_cut: usize,
}

/// `kill -9` of `ibi-resolver serve`, 30 times at random instants while Archives are
/// registered (by `ibi-resolver register`, a process of its own) and included (by the
/// server) in a loop; one time in three the `register` under way is killed too. After
/// each kill the registry opens (`archives` and the next `serve`), SQLite finds it intact
/// (`PRAGMA integrity_check`), and every row is whole: an Archive is absent, registered
/// (its e-mail and key hash, nothing of an inclusion), or included (all its inclusion's
/// fields), and every registration or inclusion that was acknowledged is there.
#[test]
fn a_kill_at_any_instant_leaves_a_whole_registry() {
    use rustix::process::{waitid, Pid, WaitId, WaitIdOptions};
    use std::sync::mpsc;
    use std::sync::Mutex;

    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), LOOPBACK);
    let db = dir.path().join("registry.sqlite");
    // An Archive that takes 5 ms to confirm its inclusion: the resolver's work on an
    // inclusion has a step outside itself for a kill to land in.
    let peer = Peer::start(|target, s| {
        if target.contains("servicesubject=inclusionConfirmationRequest") {
            std::thread::sleep(Duration::from_millis(5));
            answer_200(s, b"confirmation yes\r\n");
        }
    });
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("random seed {seed}");
    let mut random = move |bound: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % bound
    };
    let seen = Arc::new(Mutex::new(Acknowledged::default()));
    let serial = Arc::new(AtomicUsize::new(0));
    // How long the last inclusion request took to be answered, in µs.
    let inclusion_us = Arc::new(AtomicUsize::new(30_000));
    const ROUNDS: usize = 30;
    for round in 0..ROUNDS {
        let mut r = Resolver::start(&config);
        // The register command under way, not yet reaped (so its pid is still its own).
        let running: Arc<Mutex<Option<Child>>> = Arc::new(Mutex::new(None));
        let stop = Arc::new(AtomicBool::new(false));
        let (tell, told) = mpsc::channel();
        let worker = {
            let (running, stop, seen, serial, inclusion_us) = (
                running.clone(),
                stop.clone(),
                seen.clone(),
                serial.clone(),
                inclusion_us.clone(),
            );
            let (port, config, address) = (r.port, config.clone(), peer.addr.to_string());
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    let n = serial.fetch_add(1, Ordering::SeqCst);
                    let ibi = format!(
                        "urlib.net/www/2013/01.{:02}.{:02}.{:02}",
                        1 + n / 1440,
                        n % 1440 / 60,
                        n % 60
                    );
                    let email = format!("a{n}@example.org");
                    seen.lock()
                        .unwrap()
                        .tried
                        .insert(ibi.clone(), email.clone());
                    let mut child = Command::new(BIN)
                        .args(["register", &ibi, "--email", &email, "--config"])
                        .arg(&config)
                        .stdin(Stdio::piped())
                        .stdout(Stdio::piped())
                        .stderr(Stdio::null())
                        .spawn()
                        .unwrap();
                    let _ = child
                        .stdin
                        .take()
                        .unwrap()
                        .write_all(format!("{KEY}\n").as_bytes());
                    let pid = Pid::from_child(&child);
                    *running.lock().unwrap() = Some(child);
                    let _ = tell.send(Work::Started);
                    // Its end, leaving it to be reaped once taken back.
                    waitid(
                        WaitId::Pid(pid),
                        WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
                    )
                    .unwrap();
                    let out = running
                        .lock()
                        .unwrap()
                        .take()
                        .unwrap()
                        .wait_with_output()
                        .unwrap();
                    if std::os::unix::process::ExitStatusExt::signal(&out.status)
                        == Some(libc::SIGKILL)
                    {
                        seen.lock().unwrap().registers_killed += 1;
                    }
                    if out.status.success() {
                        assert_eq!(
                            String::from_utf8_lossy(&out.stdout),
                            format!("registered {ibi}\n")
                        );
                        seen.lock().unwrap().registered.insert(ibi.clone());
                    }
                    let _ = tell.send(Work::Including);
                    let sent = Instant::now();
                    let answer = try_get(
                        port,
                        &format!(
                            "/{RESOLVER_IBI}?servicesubject=inclusionRequest&archiveaddress={address}&archiveserviceibi={ibi}&archiveip=127.0.0.1&archiveprotocol=HTTP&archiveplatformversion=1&archiveadmemailaddress={email}&registrationkey={KEY}"
                        ),
                    );
                    match answer {
                        Some(Some(a)) if a.status == 200 => {
                            assert_eq!(a.text(), INCLUDED);
                            inclusion_us
                                .store(sent.elapsed().as_micros() as usize, Ordering::SeqCst);
                            seen.lock().unwrap().included.insert(ibi);
                        }
                        // Not registered: its register was killed.
                        Some(Some(a)) => assert_eq!(a.status, 403, "{}", a.text()),
                        // The server was killed while it worked on the request.
                        Some(None) => {
                            seen.lock().unwrap().inclusions_cut += 1;
                            break;
                        }
                        // The server is gone.
                        None => break,
                    }
                    let _ = tell.send(Work::Done);
                }
                let _ = tell.send(Work::Ended);
            })
        };
        // The instant: up to 40 ms into the 1st to 3rd register (when it is to be killed
        // too), or after the 1st to 3rd inclusion request was sent, within the time the
        // last one took to be answered.
        let kill_register = round % 3 == 2;
        let nth = 1 + random(3);
        let mut seen_events = 0;
        while seen_events < nth {
            match told.recv_timeout(HANG_GUARD) {
                Ok(Work::Started) if kill_register => seen_events += 1,
                Ok(Work::Including) if !kill_register => seen_events += 1,
                Ok(Work::Ended) | Err(_) => panic!("the worker stopped:\n{}", r.log()),
                Ok(_) => {}
            }
        }
        let within = if kill_register {
            40_000
        } else {
            inclusion_us.load(Ordering::SeqCst) as u64
        };
        std::thread::sleep(Duration::from_micros(random(within.max(1))));
        if kill_register {
            if let Some(child) = running.lock().unwrap().as_mut() {
                child.kill().unwrap();
            }
        }
        r.child.kill().unwrap();
        r.child.wait().unwrap();
        stop.store(true, Ordering::SeqCst);
        loop {
            match told.recv_timeout(HANG_GUARD) {
                Ok(Work::Ended) => break,
                Ok(_) => {}
                Err(e) => panic!("the worker did not stop ({e})"),
            }
        }
        worker.join().unwrap();
        // The registry, as the next command finds it.
        let listed = run(
            &["archives", "--csv", "--config", config.to_str().unwrap()],
            "",
        );
        assert_eq!(listed.code, 0, "round {round}: {}", listed.err);
        let mut lines = listed.out.lines();
        assert_eq!(
            lines.next(),
            Some("serviceibi,address,included,confirmation,lastsuccess,failures,dormant,latencyms,changed,email,conflicts,moves,movedat,movedfrom,movesrefused")
        );
        let seen = seen.lock().unwrap();
        let mut listed_ibis = std::collections::BTreeSet::new();
        let mut included_ibis = std::collections::BTreeSet::new();
        for line in lines {
            let f: Vec<&str> = line.split(',').collect();
            assert_eq!(f.len(), 15, "round {round}: {line}");
            let email = seen.tried.get(f[0]);
            assert_eq!(
                email.map(String::as_str),
                Some(f[9]),
                "round {round}: {line}"
            );
            assert_eq!(
                (f[5], f[6], f[7], f[10]),
                ("0", "no", "-", "0"),
                "round {round}: {line}"
            );
            match f[2] {
                "no" => assert_eq!(
                    (f[1], f[3], f[4], f[8]),
                    ("-", "-", "-", "-"),
                    "round {round}: {line}"
                ),
                "yes" => {
                    assert_eq!(
                        (f[1], f[3]),
                        (peer.addr.to_string().as_str(), "successful"),
                        "round {round}: {line}"
                    );
                    assert!(f[4].ends_with('Z') && f[4] == f[8], "round {round}: {line}");
                    included_ibis.insert(f[0].to_string());
                }
                other => panic!("round {round}: included {other:?}: {line}"),
            }
            listed_ibis.insert(f[0].to_string());
        }
        assert!(
            seen.registered.is_subset(&listed_ibis),
            "round {round}: registered {:?}, listed {listed_ibis:?}",
            seen.registered
        );
        assert!(
            seen.included.is_subset(&included_ibis),
            "round {round}: included {:?}, listed {included_ibis:?}",
            seen.included
        );
        // SQLite's own check, and the columns `archives` does not show.
        let conn = rusqlite::Connection::open(&db).unwrap();
        let check: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok", "round {round}");
        let mut stmt = conn
            .prepare("SELECT keyhash, registered FROM archives")
            .unwrap();
        let rows: Vec<(String, String)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rows.len(), listed_ibis.len());
        for (hash, registered) in rows {
            assert!(
                hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
                "{hash}"
            );
            assert!(registered.ends_with('Z'), "{registered}");
        }
    }
    let seen = seen.lock().unwrap();
    eprintln!(
        "{ROUNDS} kills: {} Archives tried, {} registered, {} included, {} register commands killed, {} inclusion requests cut",
        seen.tried.len(),
        seen.registered.len(),
        seen.included.len(),
        seen.registers_killed,
        seen.inclusions_cut,
    );
    // Kills did land inside both.
    assert!(seen.registers_killed > 0 && seen.inclusions_cut > 0);
}

#[test]
fn a_read_only_registry_is_read_but_never_written() {
    // Permission bits do not stop root: as root the resolver runs as nobody here, on
    // files that are nobody's, as a deployment runs it under its own user.
    let uid = unprivileged();
    let dir = tempfile::tempdir().unwrap();
    chmod(dir.path(), 0o755);
    let user = uid.map(|uid| User::new(uid, dir.path()));
    let user = user.as_ref();
    let home = dir.path().join("resolver");
    std::fs::create_dir(&home).unwrap();
    if let Some(uid) = uid {
        std::os::unix::fs::chown(&home, Some(uid), Some(uid)).unwrap();
    }
    let config = write_config(&home, LOOPBACK);
    chmod(&config, 0o644);
    let c = config.to_str().unwrap();
    let db = home.join("registry.sqlite");
    let register = |service: &str| {
        run_as(
            user,
            &[
                "register",
                service,
                "--email",
                "a@example.org",
                "--config",
                c,
            ],
            KEY,
        )
    };
    assert_eq!(register(SERVICE).code, 0);

    // The file read-only: listed, never changed; serve starts and answers an inclusion
    // with a clean 503.
    chmod(&db, 0o400);
    let before = std::fs::read(&db).unwrap();
    let listed = run_as(user, &["archives", "--csv", "--config", c], "");
    assert_eq!(listed.code, 0, "{}", listed.err);
    assert_eq!(
        listed.out.lines().nth(1),
        Some(format!("{SERVICE},-,no,-,-,0,no,-,-,a@example.org,0,0,-,-,0").as_str())
    );
    for ran in [
        register("urlib.net/www/2012/01.01.01.02"),
        run_as(user, &["unregister", SERVICE, "--config", c], ""),
    ] {
        assert_eq!(
            (ran.code, ran.err.as_str()),
            (
                1,
                "ibi-resolver: registry: attempt to write a readonly database (the registry, its -wal and -shm files and its directory must be writable by this user)\n"
            )
        );
    }
    let peer = archive(|_, s| answer_200(s, b""));
    let mut resolver = Resolver::start_as(user, &config);
    let n = resolver.lines().len();
    let a = resolver.include_again(SERVICE, &peer.addr.to_string());
    assert_eq!(
        (a.status, a.text().as_str()),
        (503, "error {registry unavailable}\r\n")
    );
    assert_eq!(
        untimed(&resolver.one_line_after(n)),
        format!("ibi-resolver: 127.0.0.1 \"GET /{RESOLVER_IBI}?servicesubject=inclusionRequest&…\" 503 Tms {SERVICE}: registry: attempt to write a readonly database (the registry, its -wal and -shm files and its directory must be writable by this user)")
    );
    assert!(!resolver.log().contains(KEY));
    resolver.assert_alive();
    drop(resolver);
    assert!(
        std::fs::read(&db).unwrap() == before,
        "the registry changed"
    );

    // A registry of the resolver's first schema, read-only: its upgrade needs to write,
    // and the commands say so; writable again, the first command upgrades it.
    chmod(&db, 0o600);
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "ALTER TABLE archives DROP COLUMN dormant; DROP TABLE locations; DROP TABLE forgotten; DROP TABLE conflicts; PRAGMA user_version = 1;",
        )
        .unwrap();
    }
    for f in ["registry.sqlite-wal", "registry.sqlite-shm"] {
        let _ = std::fs::remove_file(home.join(f));
    }
    chmod(&db, 0o400);
    let old = run_as(user, &["archives", "--config", c], "");
    assert_eq!(
        (old.code, old.err),
        (
            1,
            format!(
                "ibi-resolver: {}: schema version 1 must be upgraded to 4, which needs to write: attempt to write a readonly database (the registry, its -wal and -shm files and its directory must be writable by this user)\n",
                db.display()
            )
        )
    );
    // As the message says: the registry's files beside it, made read-only with it, too.
    for f in [
        "registry.sqlite",
        "registry.sqlite-wal",
        "registry.sqlite-shm",
    ] {
        chmod(&home.join(f), 0o600);
    }
    let upgraded = run_as(user, &["archives", "--csv", "--config", c], "");
    assert_eq!(
        (upgraded.code, upgraded.out.lines().nth(1)),
        (0, listed.out.lines().nth(1)),
        "{}",
        upgraded.err
    );

    // The directory read-only (the registry cannot have its journal beside it): every
    // command and serve refuse, saying so.
    for f in ["registry.sqlite-wal", "registry.sqlite-shm"] {
        let _ = std::fs::remove_file(home.join(f));
    }
    chmod(&db, 0o600);
    chmod(&home, 0o555);
    let refused = format!(
        "ibi-resolver: {}: cannot be opened for writing: attempt to write a readonly database (the registry, its -wal and -shm files and its directory must be writable by this user)\n",
        db.display()
    );
    for args in [
        vec!["archives", "--config", c],
        vec!["unregister", SERVICE, "--config", c],
        vec!["serve", "--config", c],
    ] {
        let ran = run_as(user, &args, "");
        assert_eq!(
            (ran.code, ran.err.as_str()),
            (1, refused.as_str()),
            "{args:?}"
        );
    }
    // No registry yet, and nowhere to make one.
    chmod(&home, 0o755);
    std::fs::remove_file(&db).unwrap();
    chmod(&home, 0o555);
    for args in [
        vec!["archives", "--config", c],
        vec!["serve", "--config", c],
    ] {
        let ran = run_as(user, &args, "");
        assert_eq!(
            (ran.code, ran.err.as_str()),
            (
                1,
                format!(
                    "ibi-resolver: {}: cannot create: Permission denied (os error 13)\n",
                    db.display()
                )
                .as_str()
            ),
            "{args:?}"
        );
    }
    chmod(&home, 0o755);
}

/// A registry an earlier resolver left at schema version 3, its Archive kept as
/// `lk47b6w/32nsfrp` (before version 3 an IBIp was kept as written; version 3 looked it
/// up in upper case): `serve` upgrades it, and the Archive's inclusion request, under
/// either case of its service IBI, is answered as the registered Archive's, not 403.
#[test]
fn a_registry_of_version_3_is_upgraded_and_its_archive_included_under_either_case() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), LOOPBACK);
    let ran = run(
        &[
            "register",
            "LK47B6W/32NSFRP",
            "--email",
            "a@example.org",
            "--config",
            config.to_str().unwrap(),
        ],
        KEY,
    );
    assert_eq!(ran.code, 0, "{}", ran.err);
    {
        // As the earlier resolver left it (version 4 adds no table to version 3's).
        let conn = rusqlite::Connection::open(dir.path().join("registry.sqlite")).unwrap();
        conn.execute_batch(
            "UPDATE archives SET serviceibi = 'lk47b6w/32nsfrp'; PRAGMA user_version = 3;",
        )
        .unwrap();
    }
    let peer = archive(|_, s| answer_200(s, b""));
    let resolver = Resolver::start(&config);
    for spelling in ["LK47B6W/32NSFRP", "lk47b6w/32nsfrp"] {
        let a = resolver.include_again(spelling, &peer.addr.to_string());
        assert_eq!(
            (a.status, a.text().as_str()),
            (200, INCLUDED),
            "{spelling}\n{}",
            resolver.log()
        );
    }
    let listed = resolver.command(&["archives", "--csv"], "");
    let rows: Vec<&str> = listed.out.lines().skip(1).collect();
    assert_eq!(rows.len(), 1, "{}", listed.out);
    assert!(
        rows[0].starts_with(&format!("LK47B6W/32NSFRP,{},yes,successful,", peer.addr)),
        "{}",
        listed.out
    );
}

// ---------------------------------------------------------------------------------------
// 3. Hostile requests

#[test]
fn hostile_requests_get_well_formed_answers_and_one_clean_log_line_each() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Resolver::start(&write_config(dir.path(), LOOPBACK));
    let get_line = |target: &str| {
        format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            .into_bytes()
    };
    let long_path = format!("/{}", "a".repeat(MAX_TARGET + 808));
    let long_query = format!("/8JMKD3MGP8W/35MME4E?{}", "x".repeat(MAX_TARGET + 808));
    let many_pairs = format!("/8JMKD3MGP8W/35MME4E?{}", "a=b&".repeat(1500));
    let cut = |s: &str| format!("{}...", &s[..1024]);
    let not_found = "not found (0 asked, 0 did not answer)";
    let mut big_head = get_line("/8JMKD3MGP8W/35MME4E");
    big_head.splice(
        big_head.len() - 2..big_head.len() - 2,
        format!("X-Big: {}\r\n", "a".repeat(MAX_HEAD)).into_bytes(),
    );
    let mut many_headers = get_line("/8JMKD3MGP8W/35MME4E");
    many_headers.splice(
        many_headers.len() - 2..many_headers.len() - 2,
        (0..150)
            .flat_map(|i| format!("X-{i}: y\r\n").into_bytes())
            .collect::<Vec<u8>>(),
    );
    let mut large_head = get_line("/8JMKD3MGP8W/35MME4E");
    large_head.splice(
        large_head.len() - 2..large_head.len() - 2,
        format!("Cookie: {}\r\n", "c".repeat(MAX_HEAD - 2048)).into_bytes(),
    );
    // (request, status, the log line without its duration)
    let cases: Vec<(Vec<u8>, u16, String)> = vec![
        (
            get_line(&long_path),
            414,
            format!("127.0.0.1 \"GET {}\" 414 Tms too long", cut(&long_path)),
        ),
        (
            get_line(&long_query),
            414,
            // The query is never shown but for the pairs the resolver reads.
            "127.0.0.1 \"GET /8JMKD3MGP8W/35MME4E?…\" 414 Tms too long".into(),
        ),
        (
            get_line(&many_pairs),
            404,
            format!("127.0.0.1 \"GET /8JMKD3MGP8W/35MME4E?…\" 404 Tms {not_found}"),
        ),
        (
            get_line("/../etc/passwd"),
            400,
            "127.0.0.1 \"GET /../etc/passwd\" 400 Tms no IBI at the start of the path: a uniform repository name has four segments (3 found)".into(),
        ),
        (
            get_line("/8JMKD3MGP8W/../../etc/passwd"),
            400,
            "127.0.0.1 \"GET /8JMKD3MGP8W/../../etc/passwd\" 400 Tms no IBI at the start of the path: invalid IBIp \"8JMKD3MGP8W/..\": suffix \"..\" holds '.', not a base-27 digit".into(),
        ),
        (
            get_line("/8JMKD3MGP8W/35MME4E/../../etc/passwd"),
            400,
            "127.0.0.1 \"GET /8JMKD3MGP8W/35MME4E/../../etc/passwd\" 400 Tms the file path has a . or .. segment".into(),
        ),
        (
            get_line("/8JMKD3MGP8W/35MME4E/%2E%2E/x"),
            400,
            "127.0.0.1 \"GET /8JMKD3MGP8W/35MME4E/%2E%2E/x\" 400 Tms the file path has a . or .. segment".into(),
        ),
        (
            get_line("/8JMKD3MGP8W%00/35MME4E"),
            400,
            "127.0.0.1 \"GET /8JMKD3MGP8W%00/35MME4E\" 400 Tms the IBI part \"8JMKD3MGP8W%00\" holds an encoded / or a control character".into(),
        ),
        (
            get_line("/8JMKD3MGP8W/35MME4E/a%00b"),
            400,
            "127.0.0.1 \"GET /8JMKD3MGP8W/35MME4E/a%00b\" 400 Tms the file path holds a control character or an encoded /".into(),
        ),
        (
            get_line("/8JMKD3MGP8W%2F35MME4E"),
            400,
            "127.0.0.1 \"GET /8JMKD3MGP8W%2F35MME4E\" 400 Tms no IBI at the start of the path: \"8JMKD3MGP8W%2F35MME4E\" is one segment; an IBIp has two, a uniform repository name four".into(),
        ),
        (
            get_line("/8JMKD3MGP8W/35MME4E/a%2Fb"),
            400,
            "127.0.0.1 \"GET /8JMKD3MGP8W/35MME4E/a%2Fb\" 400 Tms the file path holds a control character or an encoded /".into(),
        ),
        (
            get_line("/8JMKD3MGP8W/35MM%ff"),
            400,
            "127.0.0.1 \"GET /8JMKD3MGP8W/35MM%ff\" 400 Tms the IBI part \"35MM%ff\" is not UTF-8 once decoded".into(),
        ),
        // A file name need not be UTF-8 (Example 6.2): this one is asked for.
        (
            get_line("/8JMKD3MGP8W/35MME4E/%ff%fe"),
            404,
            format!("127.0.0.1 \"GET /8JMKD3MGP8W/35MME4E/%ff%fe\" 404 Tms {not_found}"),
        ),
        // Line breaks, escaped or decoded, never break the log line.
        (
            get_line("/8JMKD3MGP8W/35MME4E%0A%0Dibi-resolver:%20forged"),
            400,
            "127.0.0.1 \"GET /8JMKD3MGP8W/35MME4E%0A%0Dibi-resolver:%20forged\" 400 Tms the IBI part \"35MME4E%0A%0Dibi-resolver:%20forged\" holds an encoded / or a control character".into(),
        ),
        (
            get_line("/8JMKD3MGP8W/35MME4E?ibiurl.verblist=%0D%0Aibi-resolver:%20forged"),
            400,
            "127.0.0.1 \"GET /8JMKD3MGP8W/35MME4E?ibiurl.verblist=%0D%0Aibi-resolver:%20forged\" 400 Tms ibiurl.verblist: \"\\r\\nibi-resolver:\" is not a verb of Table 8.4 (GetLastEdition, GetTranslation[(ll[-CC])], GetMetadata[(oai_dc)], GetFileList)".into(),
        ),
        (
            get_line(&format!("/{RESOLVER_IBI}?servicesubject=x%0D%0Aibi-resolver:%20forged%1b%5b2J")),
            400,
            format!("127.0.0.1 \"GET /{RESOLVER_IBI}?servicesubject=x%0D%0Aibi-resolver:%20forged%1b%5b2J\" 400 Tms unknown servicesubject"),
        ),
        // Escaping cannot push the status out of the line.
        (
            get_line(&format!("/{RESOLVER_IBI}?servicesubject={}", "%0A".repeat(600))),
            400,
            format!(
                "127.0.0.1 \"GET {}\" 400 Tms unknown servicesubject",
                cut(&format!("/{RESOLVER_IBI}?servicesubject={}", "%0A".repeat(600)))
            ),
        ),
        (
            get_line(&format!("/{RESOLVER_IBI}?servicesubject=%zz")),
            400,
            format!("127.0.0.1 \"GET /{RESOLVER_IBI}?servicesubject=%zz\" 400 Tms query string has a malformed %-escape"),
        ),
        // Raw bytes and line breaks in the request line: hyper refuses the head.
        (
            b"GET /a\x01b HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".to_vec(),
            400,
            "127.0.0.1 \"-\" 400 Tms invalid URI".into(),
        ),
        (
            b"GET /a\xffb HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".to_vec(),
            400,
            "127.0.0.1 \"-\" 400 Tms invalid URI".into(),
        ),
        (
            b"GET /a\nibi-resolver: forged HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".to_vec(),
            400,
            "127.0.0.1 \"-\" 400 Tms invalid URI".into(),
        ),
        // Heads too large: one header, or too many.
        (
            big_head,
            431,
            "127.0.0.1 \"-\" 431 Tms message head is too large".into(),
        ),
        (
            many_headers,
            431,
            "127.0.0.1 \"-\" 431 Tms message head is too large".into(),
        ),
        // A large head within the bound is read.
        (
            large_head,
            404,
            format!("127.0.0.1 \"GET /8JMKD3MGP8W/35MME4E\" 404 Tms {not_found}"),
        ),
        // The resolver is no proxy: an absolute target is only its path.
        (
            get_line("http://127.0.0.9:9/8JMKD3MGP8W/35MME4E"),
            404,
            format!("127.0.0.1 \"GET /8JMKD3MGP8W/35MME4E\" 404 Tms {not_found}"),
        ),
        (
            b"CONNECT 127.0.0.9:9 HTTP/1.1\r\nHost: 127.0.0.9:9\r\nConnection: close\r\n\r\n".to_vec(),
            405,
            "127.0.0.1 \"CONNECT \" 405 Tms ".into(),
        ),
        (
            b"POST /8JMKD3MGP8W/35MME4E HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc".to_vec(),
            405,
            "127.0.0.1 \"POST /8JMKD3MGP8W/35MME4E\" 405 Tms ".into(),
        ),
        // X-Forwarded-For from a connection that is no trusted proxy is not believed.
        (
            b"GET /8JMKD3MGP8W/35MME4E HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: 203.0.113.7\r\nAccept-Language: \xff\xfe\r\nConnection: close\r\n\r\n".to_vec(),
            404,
            format!("127.0.0.1 \"GET /8JMKD3MGP8W/35MME4E\" 404 Tms {not_found}"),
        ),
    ];
    for (request, status, line) in &cases {
        let shown = String::from_utf8_lossy(&request[..request.len().min(120)]).into_owned();
        let n = r.lines().len();
        let a = exchange(r.port, request);
        assert_eq!(a.status, status.to_owned(), "{shown:?}\n{}", a.text());
        if *status >= 400 && !a.body.is_empty() {
            // The resolver's own pages, not hyper's empty answers, say what is wrong.
            assert!(a.header("content-type").is_some(), "{shown:?}");
        }
        assert_eq!(
            untimed(&r.one_line_after(n)),
            format!("ibi-resolver: {line}"),
            "{shown:?}"
        );
    }
    // The log: one line per request, each a line of the resolver, no byte that could
    // forge another.
    let log = r.log();
    assert!(!log.contains('\r') && !log.contains('\x1b'), "{log}");
    assert!(
        log.lines()
            .all(|l| l.starts_with("ibi-resolver: ") && !l.starts_with("ibi-resolver: forged")),
        "{log}"
    );
    assert_eq!(log.lines().count(), cases.len() + 1, "{log}");
    r.assert_alive();
}

/// Sends `request` as is on a new connection and reads every answer until the server
/// closes it (at most 30 s: the hang guard of a server waiting for more).
fn answers_to(port: u16, request: &[u8]) -> Vec<Answer> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    // All at once: the server reads the whole of it before it answers or refuses.
    let _ = s.write_all(request);
    let mut raw = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!(
                "reading the answers: {e}\n{}",
                String::from_utf8_lossy(&raw)
            ),
        }
    }
    responses_of(&raw)
}

/// Bytes that one reading of HTTP/1.1 takes for one request and another reading for two
/// (a front end and the resolver disagreeing on where a request ends), and heads spelt to
/// make them disagree: each is refused (400, the connection closed) or answered as one
/// request, and the request hidden inside is never answered nor logged. A last request
/// on the same connection (`Connection: close`) shows where the resolver thinks the
/// hostile one ended: answered, it proves the connection was read as two requests in the
/// right places; unanswered, that the connection was closed after the first.
#[test]
fn request_smuggling_is_refused_or_read_as_one_request() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Resolver::start(&write_config(dir.path(), LOOPBACK));
    let hidden = b"GET /8JMKD3MGP8W/SMUGGLED HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".to_vec();
    let n = hidden.len();
    let head = |lines: &str| {
        format!("GET /8JMKD3MGP8W/35MME4E HTTP/1.1\r\nHost: 127.0.0.1\r\n{lines}\r\n").into_bytes()
    };
    let cat = |parts: &[&[u8]]| parts.concat();
    // The hidden request as the one chunk of a chunked body.
    let chunked = cat(&[format!("{n:x}\r\n").as_bytes(), &hidden, b"\r\n0\r\n\r\n"]);
    let end_then_hidden = cat(&[b"0\r\n\r\n", &hidden]);
    let last = b"GET /LK47B6W/362SFKH HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    let answered =
        "127.0.0.1 \"GET /8JMKD3MGP8W/35MME4E\" 404 Tms not found (0 asked, 0 did not answer)";
    let last_answered =
        "127.0.0.1 \"GET /LK47B6W/362SFKH\" 404 Tms not found (0 asked, 0 did not answer)";
    let refused = |why: &str| format!("127.0.0.1 \"-\" 400 Tms {why}");
    let bad_length = refused("invalid content-length parsed");
    let bad_te = refused("invalid transfer-encoding parsed");
    let bad_header = refused("invalid HTTP header parsed");
    // (what, request, the log lines of the connection: one per answer)
    let cases: Vec<(&str, Vec<u8>, Vec<String>)> = vec![
        // Content-Length against Content-Length.
        (
            "two lengths",
            cat(&[&head(&format!("Content-Length: 0\r\nContent-Length: {n}\r\n")), &hidden]),
            vec![bad_length.clone()],
        ),
        (
            "two lengths in one line",
            cat(&[&head(&format!("Content-Length: 0, {n}\r\n")), &hidden]),
            vec![bad_length.clone()],
        ),
        (
            "the same length in one line twice",
            cat(&[&head(&format!("Content-Length: {n}, {n}\r\n")), &hidden]),
            vec![bad_length.clone()],
        ),
        (
            "the same length twice: one body",
            cat(&[&head(&format!("Content-Length: {n}\r\nContent-Length: {n}\r\n")), &hidden, last]),
            vec![answered.into(), last_answered.into()],
        ),
        ("a negative length", cat(&[&head("Content-Length: -1\r\n"), &hidden]), vec![bad_length.clone()]),
        ("a signed length", cat(&[&head(&format!("Content-Length: +{n}\r\n")), &hidden]), vec![bad_length.clone()]),
        ("a hexadecimal length", cat(&[&head(&format!("Content-Length: 0x{n:x}\r\n")), &hidden]), vec![bad_length.clone()]),
        // Content-Length against Transfer-Encoding, in either order: read as chunked,
        // and the connection closed after the answer.
        (
            "CL.TE",
            cat(&[
                &head(&format!("Content-Length: {}\r\nTransfer-Encoding: chunked\r\n", end_then_hidden.len())),
                &end_then_hidden,
                last,
            ]),
            vec![answered.into()],
        ),
        (
            "TE.CL",
            cat(&[
                &head(&format!("Transfer-Encoding: chunked\r\nContent-Length: {}\r\n", end_then_hidden.len())),
                &end_then_hidden,
                last,
            ]),
            vec![answered.into()],
        ),
        (
            "a short length beside chunked",
            cat(&[&head("Content-Length: 4\r\nTransfer-Encoding: chunked\r\n"), &chunked, last]),
            vec![answered.into()],
        ),
        // A body on a GET is the request's, never another request.
        (
            "a chunked body on a GET",
            cat(&[&head("Transfer-Encoding: chunked\r\n"), &chunked, last]),
            vec![answered.into(), last_answered.into()],
        ),
        (
            "chunked in capitals",
            cat(&[&head("Transfer-Encoding: CHUNKED\r\n"), &chunked, last]),
            vec![answered.into(), last_answered.into()],
        ),
        (
            "a body of a given length on a GET",
            cat(&[&head(&format!("Content-Length: {n}\r\n")), &hidden, last]),
            vec![answered.into(), last_answered.into()],
        ),
        (
            "a chunk size beyond 64 bits",
            cat(&[&head("Transfer-Encoding: chunked\r\n"), b"fffffffffffffffffff\r\n", &hidden, last]),
            vec![answered.into()],
        ),
        (
            "a chunk extension holding a line break",
            cat(&[
                &head("Transfer-Encoding: chunked\r\n"),
                format!("{n:x};x=\"a\r\n\"\r\n").as_bytes(),
                &hidden,
                b"\r\n0\r\n\r\n",
                last,
            ]),
            vec![answered.into()],
        ),
        // Transfer-Encoding spelt so that one reading takes it and another does not.
        ("not chunked", cat(&[&head("Transfer-Encoding: xchunked\r\n"), &chunked]), vec![bad_te.clone()]),
        ("chunked, then another coding", cat(&[&head("Transfer-Encoding: chunked, identity\r\n"), &chunked]), vec![bad_te.clone()]),
        (
            "chunked, then another coding on a second line",
            cat(&[&head("Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n"), &chunked]),
            vec![bad_te.clone()],
        ),
        ("a space before the colon", cat(&[&head("Transfer-Encoding : chunked\r\n"), &chunked]), vec![bad_header.clone()]),
        ("a vertical tab before the value", cat(&[&head("Transfer-Encoding:\x0bchunked\r\n"), &chunked]), vec![bad_header.clone()]),
        (
            "chunked in HTTP/1.0",
            cat(&[
                b"GET /8JMKD3MGP8W/35MME4E HTTP/1.0\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                &chunked,
            ]),
            vec![refused("unexpected transfer-encoding parsed")],
        ),
        // Folded lines (obs-fold).
        ("a folded header", head("X-A: a\r\n b\r\n"), vec![bad_header.clone()]),
        (
            "a folded length",
            cat(&[&head(&format!("Content-Length: 0\r\n {n}\r\n")), &hidden]),
            vec![bad_header.clone()],
        ),
        ("a folded Transfer-Encoding", cat(&[&head(" Transfer-Encoding: chunked\r\n"), &chunked]), vec![bad_header.clone()]),
        // Bare line breaks: LF ends a line as CRLF does; a bare CR is refused.
        (
            "lines ending in LF",
            cat(&[b"GET /8JMKD3MGP8W/35MME4E HTTP/1.1\nHost: 127.0.0.1\n\n", last]),
            vec![answered.into(), last_answered.into()],
        ),
        (
            "a length after a bare LF",
            cat(&[&head(&format!("X-A: a\nContent-Length: {n}\r\n")), &hidden, last]),
            vec![answered.into(), last_answered.into()],
        ),
        (
            "a length after a bare CR",
            cat(&[&head(&format!("X-A: a\rContent-Length: {n}\r\n")), &hidden, last]),
            vec![bad_header.clone()],
        ),
        ("a NUL in a header", head("X-A: a\0b\r\n"), vec![bad_header.clone()]),
        // Targets of a proxy: only the path counts, or the path is refused.
        (
            "an absolute target",
            cat(&[b"GET http://evil.example/8JMKD3MGP8W/35MME4E HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", last]),
            vec![answered.into(), last_answered.into()],
        ),
        (
            "an absolute https target with a port",
            cat(&[b"GET https://evil.example:443/8JMKD3MGP8W/35MME4E HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", last]),
            vec![answered.into(), last_answered.into()],
        ),
        (
            "an authority target",
            cat(&[b"GET 127.0.0.1:80 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", last]),
            vec![
                "127.0.0.1 \"GET \" 400 Tms the path does not start with /".into(),
                last_answered.into(),
            ],
        ),
        (
            "an asterisk target",
            cat(&[b"GET * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", last]),
            vec![
                "127.0.0.1 \"GET *\" 400 Tms the path does not start with /".into(),
                last_answered.into(),
            ],
        ),
        // Host conflicts: the resolver reads no Host, so each is the plain request.
        (
            "two Hosts",
            cat(&[b"GET /8JMKD3MGP8W/35MME4E HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n", last]),
            vec![answered.into(), last_answered.into()],
        ),
        (
            "another Host",
            cat(&[b"GET /8JMKD3MGP8W/35MME4E HTTP/1.1\r\nHost: evil.example\r\n\r\n", last]),
            vec![answered.into(), last_answered.into()],
        ),
        (
            "no Host",
            cat(&[b"GET /8JMKD3MGP8W/35MME4E HTTP/1.1\r\n\r\n", last]),
            vec![answered.into(), last_answered.into()],
        ),
        (
            "an absolute target against the Host",
            cat(&[b"GET http://evil.example/8JMKD3MGP8W/35MME4E HTTP/1.1\r\nHost: other.example\r\n\r\n", last]),
            vec![answered.into(), last_answered.into()],
        ),
    ];
    let plain = get(r.port, "/8JMKD3MGP8W/35MME4E");
    assert_eq!(plain.status, 404);
    let first = r.lines().len();
    let mut n = first;
    for (what, request, lines) in &cases {
        let answers = answers_to(r.port, request);
        // A line more than expected (a hidden request answered, or refused after the
        // connection's end) shows as the wrong line of the next case, or in the count
        // at the end.
        let logged: Vec<String> = r
            .first_lines_after(n, lines.len())
            .iter()
            .map(|l| untimed(l))
            .collect();
        let expected: Vec<String> = lines.iter().map(|l| format!("ibi-resolver: {l}")).collect();
        assert_eq!(logged, expected, "{what}");
        let statuses: Vec<u16> = answers.iter().map(|a| a.status).collect();
        let wanted: Vec<u16> = lines
            .iter()
            .map(|l| if l.contains(" 404 ") { 404 } else { 400 })
            .collect();
        assert_eq!(statuses, wanted, "{what}");
        // The hostile request's answer, when it got one, is the plain request's.
        if wanted[0] == 404 {
            assert_eq!(answers[0].body, plain.body, "{what}");
        }
        n += lines.len();
    }
    r.lines_after(first, n - first);
    assert!(!r.log().contains("SMUGGLED"), "{}", r.log());
    r.assert_alive();
}

#[test]
fn a_slow_client_is_cut_off_by_the_head_timeout_without_delaying_others() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Resolver::start(&write_config(dir.path(), LOOPBACK));
    let n = r.lines().len();
    let start = Instant::now();
    // One byte per second: the head would take 54 s.
    const HEAD: &[u8] = b"GET /8JMKD3MGP8W/35MME4E HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    let slow = TcpStream::connect(("127.0.0.1", r.port)).unwrap();
    let mut writer = slow.try_clone().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicUsize::new(0));
    let (stopped, dripped) = (stop.clone(), sent.clone());
    let dripping = std::thread::spawn(move || {
        for b in HEAD {
            if stopped.load(Ordering::SeqCst) || writer.write_all(&[*b]).is_err() {
                return;
            }
            dripped.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    // A connection that sends nothing at all, and one kept alive after its request:
    // closed too, and nothing more to log.
    let mut silent = TcpStream::connect(("127.0.0.1", r.port)).unwrap();
    let mut idle = TcpStream::connect(("127.0.0.1", r.port)).unwrap();
    idle.write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    assert_eq!(read_response(&idle).status, 200);
    // Meanwhile other readers are answered, each while the slow one still holds its
    // connection: a server that served the slow client first would answer them only once
    // it had cut it off.
    let mut others = 1;
    for _ in 0..5 {
        let a = get(r.port, "/");
        assert_eq!(a.status, 200);
        assert!(
            still_open(&slow),
            "a reader was answered only after the slow client was cut off:\n{}",
            r.log()
        );
        others += 1;
        // The readers' pace, spread over the slow client's first seconds (no event
        // awaited).
        std::thread::sleep(Duration::from_millis(500));
    }
    // The slow one is closed, unanswered, once the head timeout has passed and while it is
    // still sending its head: the timeout counts from the connection, not from its last byte.
    let mut reader = slow;
    reader
        .set_read_timeout(Some(HEAD_TIMEOUT + Duration::from_secs(10)))
        .unwrap();
    let mut got = Vec::new();
    let closed = reader.read_to_end(&mut got);
    let cut_off = start.elapsed();
    let head_sent = sent.load(Ordering::SeqCst);
    stop.store(true, Ordering::SeqCst);
    assert!(got.is_empty(), "{:?}", String::from_utf8_lossy(&got));
    // Closed: an end of file, or a reset when a byte of the head came in as the resolver
    // closed (a socket closed with bytes unread resets the connection); not a timeout.
    assert!(
        matches!(&closed, Ok(0))
            || matches!(&closed, Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset),
        "the slow client was not cut off: {closed:?}"
    );
    assert!(
        head_sent < HEAD.len(),
        "cut off only after its whole head ({head_sent} bytes)"
    );
    assert!(
        cut_off >= HEAD_TIMEOUT - Duration::from_millis(500),
        "cut off after {cut_off:?}, before the head timeout"
    );
    for s in [&mut silent, &mut idle] {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut nothing = Vec::new();
        assert!(s.read_to_end(&mut nothing).is_ok(), "not closed");
        assert!(nothing.is_empty());
    }
    dripping.join().unwrap();
    // One line per request, and one for the slow client.
    let new: Vec<String> = r
        .lines_after(n, others + 1)
        .iter()
        .map(|l| untimed(l))
        .collect();
    assert_eq!(
        new.iter()
            .filter(|l| *l == "ibi-resolver: 127.0.0.1 \"GET /\" 200 Tms ")
            .count(),
        others
    );
    assert_eq!(
        new.last().unwrap(),
        "ibi-resolver: 127.0.0.1 \"-\" - Tms read header from client timeout"
    );
    r.assert_alive();
}

/// Whether the server still holds `s` open: nothing to read, and no end of stream. A read
/// timeout, not a non-blocking socket, so that a clone of `s` writing meanwhile still blocks.
fn still_open(s: &TcpStream) -> bool {
    s.set_read_timeout(Some(Duration::from_millis(1))).unwrap();
    let peeked = s.peek(&mut [0u8; 1]);
    s.set_read_timeout(None).unwrap();
    matches!(peeked, Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut))
}

// ---------------------------------------------------------------------------------------
// 4. Hostile Archives

/// Reps asked of the hostile Archives, one per behaviour.
const GARBAGE: &str = "urlib.net/www/2021/01.01.01.01";
const BINARY: &str = "urlib.net/www/2021/01.01.01.02";
const NOT_PAIRS: &str = "urlib.net/www/2021/01.01.01.03";
const DRIP: &str = "urlib.net/www/2021/01.01.01.04";

#[test]
fn archives_answering_garbage_or_dripping_end_in_a_clean_503() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Resolver::start(&write_config(dir.path(), LOOPBACK));
    // Whether a drip ran to the end of its answer.
    let drip_ended = Arc::new(AtomicBool::new(false));
    let ended = drip_ended.clone();
    // After garbage, nothing more: the connection is held until the resolver hangs up, so a
    // resolver waiting for more would time out, and its trace would say so.
    let peer = archive(move |ibi, s| match ibi {
        GARBAGE => {
            let _ =
                s.write_all(b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03garbage\r\n\r\n\0\0\0");
            hold(s);
        }
        BINARY => {
            answer_200(s, &noise(3000));
            hold(s);
        }
        NOT_PAIRS => {
            answer_200(s, b"{\"url\": \"http://127.0.0.1/x\"}\r\n");
            hold(s);
        }
        DRIP => {
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nurl");
            for _ in 0..60 {
                std::thread::sleep(Duration::from_secs(1));
                if s.write_all(b" ").is_err() {
                    return;
                }
            }
            ended.store(true, Ordering::SeqCst);
        }
        _ => answer_200(s, b""),
    });
    let a = r.include(&peer.addr.to_string());
    assert_eq!((a.status, a.text().as_str()), (200, INCLUDED));
    for (ibi, detail) in [
        (GARBAGE, "request failed: invalid HTTP version parsed"),
        (BINARY, "answer is not UTF-8 text"),
        (
            NOT_PAIRS,
            "not a pair list: malformed pair list: byte 0x7b is not allowed in word \"{\\\"url\\\":\"",
        ),
    ] {
        let n = r.lines().len();
        let a = get(r.port, &format!("/{ibi}"));
        let address = peer.addr.to_string();
        assert_eq!(
            (a.status, a.text()),
            (503, unavailable_page(ibi, 1)),
            "{ibi}"
        );
        assert_eq!(
            untimed(&r.one_line_after(n)),
            unavailable_line(&format!("/{ibi}"), &address, 1)
        );
        let trace = inspect(r.port, &format!("/{ibi}"));
        let asked = &trace["rounds"][0]["asked"][0];
        assert_eq!(
            (asked["result"].as_str(), asked["detail"].as_str()),
            (Some("failed"), Some(detail)),
            "{trace}"
        );
    }
    // A byte a second: given up at the timeout (2 s), not before it, and not at the end of
    // the answer (60 s): the answer comes while the Archive is still dripping, and the
    // trace says the Archive timed out.
    let n = r.lines().len();
    let t = Instant::now();
    let a = get(r.port, &format!("/{DRIP}"));
    let took = t.elapsed();
    assert!(
        !drip_ended.load(Ordering::SeqCst),
        "answered only once the Archive had sent all it would"
    );
    let address = peer.addr.to_string();
    assert_eq!((a.status, a.text()), (503, unavailable_page(DRIP, 1)));
    assert!(took >= Duration::from_secs(2), "{took:?}");
    assert_eq!(
        untimed(&r.one_line_after(n)),
        unavailable_line(&format!("/{DRIP}"), &address, 1)
    );
    let trace = inspect(r.port, &format!("/{DRIP}"));
    assert_eq!(
        trace["rounds"][0]["asked"][0]["result"].as_str(),
        Some("timed out"),
        "{trace}"
    );
    r.assert_alive();
}

const HUGE_LENGTH: &str = "urlib.net/www/2021/01.01.02.01";
const HUGE_CLOSE: &str = "urlib.net/www/2021/01.01.02.02";
const HUNDRED_MB: usize = 100 * 1024 * 1024;
/// The bound on the resolver's peak resident memory.
const PEAK_RSS_BOUND_KIB: u64 = 64 * 1024;

#[test]
fn an_archive_answering_100_mb_is_read_64_kib_far_and_costs_no_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Resolver::start(&write_config(dir.path(), LOOPBACK));
    let sent = Arc::new(AtomicUsize::new(0));
    let finished = Arc::new(AtomicUsize::new(0));
    let (sent2, finished2) = (sent.clone(), finished.clone());
    let peer = archive(move |ibi, s| {
        let head = match ibi {
            HUGE_LENGTH => format!("HTTP/1.1 200 OK\r\nContent-Length: {HUNDRED_MB}\r\n\r\n"),
            HUGE_CLOSE => "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_string(),
            _ => return answer_200(s, b""),
        };
        let _ = s.write_all(head.as_bytes());
        // A pair list as long as it goes: `url` then spaces.
        let mut chunk = vec![b' '; 64 * 1024];
        chunk[..24].copy_from_slice(b"url http://127.0.0.1/x  ");
        let mut written = 0;
        while written < HUNDRED_MB {
            match s.write(&chunk) {
                Ok(n) => written += n,
                Err(_) => break,
            }
            chunk[..24].fill(b' ');
        }
        sent2.fetch_add(written, Ordering::SeqCst);
        finished2.fetch_add(1, Ordering::SeqCst);
    });
    let a = r.include(&peer.addr.to_string());
    assert_eq!((a.status, a.text().as_str()), (200, INCLUDED));
    let before = r.peak_rss_kib();
    // The Archive's writes fail once the resolver has hung up.
    let hung_up = |requests: usize| {
        let deadline = Instant::now() + Duration::from_secs(10);
        while finished.load(Ordering::SeqCst) < requests {
            assert!(Instant::now() < deadline, "the Archive is still writing");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    for (i, ibi) in [HUGE_LENGTH, HUGE_CLOSE].into_iter().enumerate() {
        let n = r.lines().len();
        let a = get(r.port, &format!("/{ibi}"));
        let address = peer.addr.to_string();
        assert_eq!((a.status, a.text()), (503, unavailable_page(ibi, 1)));
        assert_eq!(
            untimed(&r.one_line_after(n)),
            unavailable_line(&format!("/{ibi}"), &address, 1)
        );
        hung_up(2 * i + 1);
        // Given up on the length: a resolver that stopped reading but kept the connection
        // would time out, and the trace would say so.
        let trace = inspect(r.port, &format!("/{ibi}"));
        assert_eq!(
            trace["rounds"][0]["asked"][0]["detail"].as_str(),
            Some(format!("answer longer than {MAX_ANSWER} bytes").as_str()),
            "{ibi}: {trace}"
        );
        hung_up(2 * i + 2);
    }
    let peak = r.peak_rss_kib();
    let sent = sent.load(Ordering::SeqCst);
    eprintln!(
        "peak RSS of the resolver: {before} KiB before, {peak} KiB after; the Archive wrote {sent} of the {} bytes it offered before the resolver hung up",
        4 * HUNDRED_MB
    );
    assert!(peak < PEAK_RSS_BOUND_KIB, "peak RSS {peak} KiB");
    // Nor did the answers raise it by more than a few buffers.
    assert!(peak - before < 16 * 1024, "peak RSS {before} → {peak} KiB");
    // Far less than the 400 MB offered was ever taken off the wire.
    assert!(sent < HUNDRED_MB, "{sent}");
    r.assert_alive();
}

const REDIRECT_301: &str = "urlib.net/www/2021/01.01.03.01";
const REDIRECT_302: &str = "urlib.net/www/2021/01.01.03.02";
const REDIRECT_307: &str = "urlib.net/www/2021/01.01.03.07";
const REDIRECT_308: &str = "urlib.net/www/2021/01.01.03.08";

#[test]
fn redirects_from_archives_are_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Resolver::start(&write_config(dir.path(), LOOPBACK));
    let elsewhere = Peer::counting();
    let to = format!("http://{}/x", elsewhere.addr);
    let peer = Peer::start(move |target, s| {
        let status = if target.contains("inclusionConfirmationRequest") {
            "302 Found"
        } else {
            match asked_ibi(target) {
                Some(REDIRECT_301) => "301 Moved Permanently",
                Some(REDIRECT_302) => "302 Found",
                Some(REDIRECT_307) => "307 Temporary Redirect",
                Some(REDIRECT_308) => "308 Permanent Redirect",
                _ => return answer_200(s, b""),
            }
        };
        let _ = s.write_all(
            format!("HTTP/1.1 {status}\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        );
    });
    // The confirmation was a redirect: included, unconfirmed.
    let a = r.include(&peer.addr.to_string());
    assert_eq!(
        (a.status, a.text().as_str()),
        (
            200,
            "status.archive included\r\nstatus.confirmation unsuccessful\r\n"
        )
    );
    for (ibi, status) in [
        (REDIRECT_301, "301 Moved Permanently"),
        (REDIRECT_302, "302 Found"),
        (REDIRECT_307, "307 Temporary Redirect"),
        (REDIRECT_308, "308 Permanent Redirect"),
    ] {
        let n = r.lines().len();
        let a = get(r.port, &format!("/{ibi}"));
        let address = peer.addr.to_string();
        assert_eq!((a.status, a.text()), (503, unavailable_page(ibi, 1)));
        assert_eq!(a.header("location"), None);
        assert_eq!(
            untimed(&r.one_line_after(n)),
            unavailable_line(&format!("/{ibi}"), &address, 1)
        );
        let trace = inspect(r.port, &format!("/{ibi}"));
        assert_eq!(
            trace["rounds"][0]["asked"][0]["detail"].as_str(),
            Some(format!("answered {status} (redirects are not followed)").as_str()),
            "{trace}"
        );
    }
    assert_eq!(elsewhere.settled_connections(), 0);
    // The confirmation and two urlRequests per case.
    assert_eq!(peer.settled_connections(), 9);
    r.assert_alive();
}

/// Values hostile to HTML that an Archive may answer (words of a pair list: visible
/// ASCII, no brace) and a reader may send (percent-encoded in the path or query, as they
/// are in a header).
const HOSTILE_WORDS: [&str; 40] = [
    "<script>alert(1)</script>",
    "\"><script>alert(1)</script>",
    "'><script>alert(1)</script>",
    "<img/src=x/onerror=alert(1)>",
    "\"onmouseover=\"alert(1)",
    "'onmouseover='alert(1)",
    "javascript:alert(1)",
    "</code><script>alert(1)</script><code>",
    "</title><script>alert(1)</script>",
    "</pre></td></tr></table><script>alert(1)</script>",
    "</li></ul><script>alert(1)</script>",
    "</p><h1>forged</h1><p>",
    "<!--",
    "-->",
    "<![CDATA[<script>alert(1)</script>]]>",
    "<svg/onload=alert(1)>",
    "<iframe/src=\"javascript:alert(1)\"></iframe>",
    "<a/href=\"javascript:alert(1)\">x</a>",
    "<meta/http-equiv=\"refresh\"/content=\"0;url=javascript:alert(1)\">",
    "<base/href=\"//evil.example/\">",
    "<style>@import'//evil.example/x.css';</style>",
    "<form/action=//evil.example/><button>x</button></form>",
    "<body/onload=alert(1)>",
    "<script/src=//evil.example/x.js></script>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "&#60;script&#62;",
    "&#x3C;script&#x3E;",
    "&quot;&#39;&amp;",
    "%3Cscript%3Ealert(1)%3C/script%3E",
    "\\u003cscript\\u003e",
    "`alert(1)`",
    "<<script>>",
    "<scr<script>ipt>alert(1)</script>",
    "'\"--></style></script><script>alert(1)</script>",
    "x\"y'z<w>&v",
    "<",
    ">",
    "\"",
    "'",
    "&",
];

/// `s` escaped as the resolver's pages escape text (`ibi::markup::escape_html`).
fn escape_html(s: &str) -> String {
    ibi::markup::escape_html(s)
}

/// The tags of an HTML page, in order, and its text between them.
fn tags_and_text(html: &str) -> (Vec<String>, String) {
    let (mut tags, mut text) = (Vec::new(), String::new());
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        let close = rest[open..].find('>').map_or(rest.len(), |c| open + c + 1);
        tags.push(rest[open..close].to_string());
        rest = &rest[close..];
    }
    text.push_str(rest);
    (tags, text)
}

/// The tags the resolver's pages are made of (the links' URLs aside).
const PAGE_TAGS: [&str; 43] = [
    "<!DOCTYPE html>",
    "<style>",
    "</style>",
    "<header>",
    "</header>",
    "<a href=\"/\">",
    "<main>",
    "</main>",
    "<html lang=\"en\">",
    "<html lang=\"pt-BR\">",
    "</html>",
    "<head>",
    "</head>",
    "<meta charset=\"utf-8\">",
    "<meta name=\"viewport\" content=\"width=device-width\">",
    "<title>",
    "</title>",
    "<body>",
    "</body>",
    "<h1>",
    "</h1>",
    "<h2>",
    "</h2>",
    "<p>",
    "</p>",
    "<code>",
    "</code>",
    "<pre>",
    "</pre>",
    "<table>",
    "</table>",
    "<tr>",
    "</tr>",
    "<th>",
    "</th>",
    "<td>",
    "</td>",
    "<br>",
    "<ul>",
    "</ul>",
    "<li>",
    "</li>",
    "</a>",
];

/// Fails unless `page` is made only of the resolver's own tags (as `like`, a page of the
/// same kind with a plain value, is, when given), and its text holds no `<`, `>`, `"` or
/// `'`: whatever was put in it stayed text.
fn assert_inert(page: &Answer, like: Option<&Answer>, what: &str) {
    let body = page.text();
    let (tags, text) = tags_and_text(&body);
    for tag in &tags {
        // A tombstone links its persistent URL and its page at its Archive (both on
        // loopback here), each URL escaped.
        let link = tag.starts_with("<a href=\"http://127.0.0.1")
            && !tag[1..tag.len() - 1].contains(['<', '>', '\'']);
        assert!(
            PAGE_TAGS.contains(&tag.as_str()) || link,
            "{what}: {tag:?} in\n{body}"
        );
    }
    assert!(!text.contains(['<', '>', '"', '\'']), "{what}:\n{body}");
    if let Some(like) = like {
        assert_eq!(page.status, like.status, "{what}:\n{body}");
        assert_eq!(tags, tags_and_text(&like.text()).0, "{what}:\n{body}");
    }
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8"),
        "{what}"
    );
    assert_eq!(
        page.header("content-security-policy"),
        Some("default-src 'none'; style-src 'unsafe-inline'"),
        "{what}"
    );
}

/// The inspection view with the times it shows (`resolved in 1.2 ms`, the column of
/// milliseconds) written `T`.
fn untimed_page(html: &str) -> String {
    let mut page = html.to_string();
    for (before, after) in [
        (" resolved in ", " ms</p>"),
        ("</td><td>", "</td><td><pre>"),
    ] {
        let mut out = String::new();
        let mut rest = page.as_str();
        while let Some(i) = rest.find(before) {
            let start = i + before.len();
            out.push_str(&rest[..start]);
            rest = &rest[start..];
            let n = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            if n > 0 && rest[n..].starts_with(after) {
                out.push('T');
                rest = &rest[n..];
            }
        }
        out.push_str(rest);
        page = out;
    }
    page
}

/// A request target made with a value.
type Target = fn(&str) -> String;

const DELETED_ITEM: &str = "urlib.net/www/2021/01.01.06.01";
const GARBLED_ITEM: &str = "urlib.net/www/2021/01.01.06.02";

/// Hostile values where the resolver shows what a reader or an Archive gave: the reader's
/// path (decoded into the 400 page's explanation), query and Accept-Language, the file
/// path in the inspection view; an Archive's pairs in the inspection view, its tombstone's
/// date on the 410 page, its garbled answer in the inspection view's detail. Every page
/// keeps its own markup and nothing else, and where the value is shown as it was given,
/// the page is byte for byte the plain one with the value escaped.
#[test]
fn hostile_values_from_readers_and_archives_stay_text_on_every_page() {
    use std::sync::Mutex;
    const MARK: &str = "MARKED_VALUE";
    let dir = tempfile::tempdir().unwrap();
    let mut r = Resolver::start(&write_config(dir.path(), &every_archive_asked(0)));
    // What the hostile Archive says now.
    let value = Arc::new(Mutex::new(MARK.to_string()));
    let said = value.clone();
    let peer = archive(move |ibi, s| {
        let v = said.lock().unwrap().clone();
        match ibi {
            DELETED_ITEM => answer_200(
                s,
                format!("state Deleted\r\ntimestamp {v}\r\n{v} {v}\r\n").as_bytes(),
            ),
            GARBLED_ITEM => answer_200(s, format!("state {v} {{\r\n").as_bytes()),
            _ => answer_200(s, b""),
        }
    });
    assert_eq!(r.include(&peer.addr.to_string()).text(), INCLUDED);
    let port = r.port;
    let page = |target: &str, headers: &str| get_with(port, target, headers);
    let home_en = page("/", "");
    let home_pt = page("/", "Accept-Language: pt-BR\r\n");
    assert_ne!(home_en.body, home_pt.body);
    // Reader's slots: the target with the value in it.
    let reader_slots: [(&str, Target); 7] = [
        ("IBIp", |v| format!("/8JMKD3MGP8W/{v}")),
        ("rep", |v| format!("/a.b/{v}/2020/01.01.01.01")),
        ("language", |v| format!("/8JMKD3MGP8W/35MME4E+({v})")),
        ("verb", |v| {
            format!("/8JMKD3MGP8W/35MME4E?ibiurl.verblist={v}")
        }),
        ("status", |v| {
            format!("/8JMKD3MGP8W/35MME4E?ibiurl.requireditemstatus={v}")
        }),
        ("file path", |v| {
            format!("/8JMKD3MGP8W/35MME4E/{v}?noredirect")
        }),
        ("not found", |v| format!("/8JMKD3MGP8W/35MME4E?x={v}")),
    ];
    let plain: Vec<Answer> = reader_slots
        .iter()
        .map(|(_, target)| page(&target(MARK), ""))
        .collect();
    let mut checked = 0;
    for v in HOSTILE_WORDS {
        let encoded = query_value(v);
        for ((slot, target), like) in reader_slots.iter().zip(&plain) {
            let what = format!("{slot} {v:?}");
            let a = page(&target(&encoded), "");
            // A file name may hold what no IBI may: some are refused (400) rather than
            // asked for.
            let like = (a.status == like.status).then_some(like);
            assert_inert(&a, like, &what);
            checked += 1;
        }
        // Accept-Language picks a language and is never shown.
        let header = format!("Accept-Language: {v}\r\n");
        let a = page(&format!("/?{encoded}"), &header);
        assert!(a.body == home_en.body || a.body == home_pt.body, "{v:?}");
        let a = page("/8JMKD3MGP8W/35MME4E", &header);
        assert_inert(&a, Some(&plain[6]), &format!("Accept-Language {v:?}"));
        checked += 2;
    }
    // The Archive's slots: the same page with the value and with a plain one.
    let set = |v: &str| *value.lock().unwrap() = v.to_string();
    set(MARK);
    let tombstone = page(&format!("/{DELETED_ITEM}"), "");
    assert_eq!(tombstone.status, 410);
    assert!(tombstone.text().contains(MARK));
    let inspected = page(&format!("/{DELETED_ITEM}?noredirect"), "");
    let inspected_plain = untimed_page(&inspected.text());
    assert_eq!(
        inspected_plain.matches(MARK).count(),
        4,
        "{inspected_plain}"
    );
    let garbled = page(&format!("/{GARBLED_ITEM}?noredirect"), "");
    for v in HOSTILE_WORDS {
        set(v);
        let a = page(&format!("/{DELETED_ITEM}"), "");
        assert_eq!(
            (a.status, a.text()),
            (410, tombstone.text().replace(MARK, &escape_html(v))),
            "{v:?}"
        );
        assert_inert(&a, Some(&tombstone), &format!("410 {v:?}"));
        // Shown in the pairs and in the outcome as given.
        let a = page(&format!("/{DELETED_ITEM}?noredirect"), "");
        assert_eq!(
            untimed_page(&a.text()),
            inspected_plain.replace(MARK, &escape_html(v)),
            "{v:?}"
        );
        assert_inert(&a, Some(&inspected), &format!("inspection {v:?}"));
        let a = page(&format!("/{GARBLED_ITEM}?noredirect"), "");
        assert_inert(&a, Some(&garbled), &format!("garbled {v:?}"));
        checked += 3;
    }
    assert_eq!(checked, HOSTILE_WORDS.len() * (reader_slots.len() + 5));
    r.assert_alive();
}

/// What an Archive answers, and what the reader gets.
struct LocationCase {
    ibi: &'static str,
    url: String,
    /// `Some(location)`: a 302 to it; `None`: a 404, no URL taken.
    location: Option<String>,
    /// The Archive's answer was no pair list (counted as not answering).
    failed: bool,
}

#[test]
fn only_http_urls_from_archives_become_locations_and_nothing_is_injected() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Resolver::start(&write_config(dir.path(), LOOPBACK));
    let elsewhere = Peer::counting();
    let other_host = format!("http://{}/phish?x=1", elsewhere.addr);
    let long = format!("http://127.0.0.1/{}", "l".repeat(8 * 1024));
    let cases = vec![
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.04.01",
            // The pair list ends at CRLF: what follows is another pair, not a header.
            url: "http://127.0.0.1/ok\r\nSet-Cookie: injected=1".into(),
            location: Some("http://127.0.0.1/ok".into()),
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.04.02",
            url: "http://127.0.0.1/a\nSet-Cookie: injected=1".into(),
            location: None,
            failed: true,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.04.03",
            url: "http://127.0.0.1/a\rSet-Cookie: injected=1".into(),
            location: None,
            failed: true,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.04.04",
            url: "http://127.0.0.1/a\x01b".into(),
            location: None,
            failed: true,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.04.05",
            url: "javascript:alert(1)".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.04.06",
            url: "file:///etc/passwd".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.04.07",
            url: "data:text/html,<script>alert(1)</script>".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.04.08",
            url: "//127.0.0.1/x".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.04.09",
            url: "http://127.0.0.1/\"><script>alert(1)</script>".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.04.10",
            url: long.clone(),
            location: None,
            failed: false,
        },
        // Escaped line breaks stay escaped: one Location, as written.
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.04.11",
            url: "http://127.0.0.1/a%0d%0aSet-Cookie:%20injected=1".into(),
            location: Some("http://127.0.0.1/a%0d%0aSet-Cookie:%20injected=1".into()),
            failed: false,
        },
        // An Archive says where its items are, on any host: the reader is sent there,
        // the resolver itself never goes.
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.04.12",
            url: other_host.clone(),
            location: Some(other_host.clone()),
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.04.13",
            url: "https://mirror.example/a%20b.pdf".into(),
            location: Some("https://mirror.example/a%20b.pdf".into()),
            failed: false,
        },
        // What a browser reads as http://evil.example/x, written otherwise than an
        // absolute URL with an authority of host and port only: never a Location.
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.04.14",
            url: "http:/evil.example/x".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.04.15",
            url: "http:evil.example/x".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.04.16",
            url: "https:evil.example/x".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.04.17",
            url: "http:///evil.example/x".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.04.18",
            url: "http://user:pass@evil.example/x".into(),
            location: None,
            failed: false,
        },
        // User information.
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.01",
            url: "http://user@evil.example/x".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.02",
            url: "http://@evil.example/x".into(),
            location: None,
            failed: false,
        },
        // Backslashes.
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.03",
            url: "http:\\\\evil.example/x".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.04",
            url: "http://evil.example\\@127.0.0.1/x".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.05",
            url: "http://127.0.0.1/a\\b".into(),
            location: None,
            failed: false,
        },
        // A backtick, quotes, angle brackets.
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.06",
            url: "http://127.0.0.1/`x`".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.07",
            url: "http://127.0.0.1/x'\"><svg/onload=alert(1)>".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.08",
            url: "http://127.0.0.1/<script>alert(1)</script>".into(),
            location: None,
            failed: false,
        },
        // Other schemes.
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.09",
            url: "JaVaScRiPt:alert(1)".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.10",
            url: "vbscript:msgbox(1)".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.11",
            url: "ftp://127.0.0.1/x".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.12",
            url: "ws://127.0.0.1/x".into(),
            location: None,
            failed: false,
        },
        // Relative.
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.13",
            url: "/x/y".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.14",
            url: "../x".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.15",
            url: "?x=1".into(),
            location: None,
            failed: false,
        },
        // No host, or not a URL.
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.16",
            url: "http://".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.17",
            url: "http://[::1/x".into(),
            location: None,
            failed: false,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.18",
            url: "http://127.0.0.1:99999/x".into(),
            location: None,
            failed: false,
        },
        // A space, a tab, a DEL, text not ASCII: no pair list.
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.19",
            url: "http://127.0.0.1/a b".into(),
            location: None,
            failed: true,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.20",
            url: "http://127.0.0.1/a\tb".into(),
            location: None,
            failed: true,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.21",
            url: "http://127.0.0.1/a\x7fb".into(),
            location: None,
            failed: true,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.22",
            url: "http://ex\u{e4}mple.org/x".into(),
            location: None,
            failed: true,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.23",
            url: "http://127.0.0.1/\u{e9}".into(),
            location: None,
            failed: true,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.24",
            url: "http://127.0.0.1/\u{202e}fdp.exe".into(),
            location: None,
            failed: true,
        },
        LocationCase {
            ibi: "urlib.net/www/2021/01.01.05.25",
            url: "".into(),
            location: None,
            failed: true,
        },
    ];
    let answers: Vec<(String, String)> = cases
        .iter()
        .map(|c| {
            (
                c.ibi.to_string(),
                format!(
                    "state Original\r\nurl {}\r\nurlkey 1111111111-2222222222\r\n",
                    c.url
                ),
            )
        })
        .collect();
    let peer = archive(move |ibi, s| match answers.iter().find(|(i, _)| i == ibi) {
        Some((_, body)) => answer_200(s, body.as_bytes()),
        None => answer_200(s, b""),
    });
    let a = r.include(&peer.addr.to_string());
    assert_eq!((a.status, a.text().as_str()), (200, INCLUDED));
    let allowed_headers = [
        "content-type",
        "content-security-policy",
        "x-content-type-options",
        "cache-control",
        "vary",
        "location",
        // A 503 (an Archive that did not answer) says when to come back.
        "retry-after",
        // Signposting: the persistent URL asked, cited (checked below).
        "link",
        "content-length",
        "connection",
        "date",
    ];
    let mut found = 0;
    let n = r.lines().len();
    let mut answers = Vec::new();
    for c in &cases {
        answers.push(get(r.port, &format!("/{}", c.ibi)));
    }
    // One log line per request, in the order sent (each written before its answer).
    let lines = r.lines_after(n, cases.len());
    for ((c, a), line) in cases.iter().zip(&answers).zip(&lines) {
        let names: Vec<String> = a
            .headers
            .iter()
            .map(|(n, _)| n.to_ascii_lowercase())
            .collect();
        assert!(
            names.iter().all(|n| allowed_headers.contains(&n.as_str())),
            "{:?}: {}",
            c.url,
            a.head
        );
        let line = untimed(line);
        match &c.location {
            Some(location) => {
                found += 1;
                assert_eq!(a.status, 302, "{:?}: {}", c.url, a.text());
                assert_eq!(a.header("location"), Some(location.as_str()));
                assert_eq!(
                    names.iter().filter(|n| *n == "location").count(),
                    1,
                    "{}",
                    a.head
                );
                // Nothing the Archive said reaches the citation.
                let ibi = c.ibi;
                assert_eq!(
                    a.header("link"),
                    Some(
                        format!(
                            "<http://127.0.0.1/{ibi}>; rel=\"cite-as\", \
                             <http://127.0.0.1/{ibi}?format=linkset-json>; rel=\"linkset\"; type=\"application/linkset+json\", \
                             <http://127.0.0.1/{ibi}?format=linkset>; rel=\"linkset\"; type=\"application/linkset\", \
                             <http://127.0.0.1/{ibi}>; rel=\"original timegate\", \
                             <http://127.0.0.1/timemap/link/{ibi}>; rel=\"timemap\"; type=\"application/link-format\""
                        )
                        .as_str()
                    ),
                    "{}",
                    a.head
                );
                assert_eq!(
                    line,
                    format!(
                        "ibi-resolver: 127.0.0.1 \"GET /{}\" 302 Tms found at {} in 1 round(s)",
                        c.ibi, peer.addr
                    )
                );
            }
            None => {
                let address = peer.addr.to_string();
                let (page, logged) = if c.failed {
                    (
                        (503, unavailable_page(c.ibi, 1)),
                        unavailable_line(&format!("/{}", c.ibi), &address, 1),
                    )
                } else {
                    // It answered for the item (`state Original`), with no URL taken.
                    (
                        (404, no_url_page(c.ibi)),
                        format!(
                            "ibi-resolver: 127.0.0.1 \"GET /{}\" 404 Tms not found (1 asked, 0 did not answer); an Archive has the item, without a URL for it",
                            c.ibi
                        ),
                    )
                };
                assert_eq!((a.status, a.text()), page, "{:?}", c.url);
                assert_eq!(a.header("location"), None);
                assert_eq!(line, logged);
            }
        }
    }
    // Each redirect is acknowledged to the Archive that gave the URL, at its own
    // address, once: when the resolver has ended as many acknowledgments as there were
    // redirects, each sent, the Archive has had that many; the host in the URL is never
    // contacted by the resolver.
    let deadline = Instant::now() + Duration::from_secs(10);
    let ended = || {
        ["sent", "failed", "dropped"]
            .map(|result| acknowledgments(r.port, result))
            .iter()
            .sum::<usize>()
    };
    while ended() < found {
        assert!(Instant::now() < deadline, "{:?}", peer.targets());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(acknowledgments(r.port, "sent"), found);
    let acknowledged = peer
        .targets()
        .iter()
        .filter(|t| t.contains("servicesubject=acknowledgment"))
        .count();
    assert_eq!(acknowledged, found);
    assert_eq!(elsewhere.settled_connections(), 0);
    r.assert_alive();
}

// ---------------------------------------------------------------------------------------
// 5. Addresses outside [archives].networks

/// A listener counting the connections it accepts, each closed at once.
struct Counting {
    addr: std::net::SocketAddr,
    count: Arc<AtomicUsize>,
}

impl Counting {
    /// Listening on `ip` and `port`.
    fn on(ip: &str, port: u16) -> std::io::Result<Counting> {
        let listener = TcpListener::bind((ip, port))?;
        let addr = listener.local_addr()?;
        let count = Arc::new(AtomicUsize::new(0));
        let counted = count.clone();
        std::thread::spawn(move || {
            for c in listener.incoming() {
                counted.fetch_add(1, Ordering::SeqCst);
                drop(c);
            }
        });
        Ok(Counting { addr, count })
    }

    /// The connections it accepted, once it has accepted every connection made to it
    /// before this call: a connection of its own, queued behind them (a listener accepts
    /// in order), is closed only once the listener has taken it (and is not counted).
    fn settled(&self) -> usize {
        let mut own = TcpStream::connect(self.addr).unwrap();
        own.set_read_timeout(Some(QUICKLY)).unwrap();
        let closed = own.read_to_end(&mut Vec::new());
        assert!(
            closed.is_ok(),
            "{} did not take a connection: {closed:?}",
            self.addr
        );
        self.count.fetch_sub(1, Ordering::SeqCst) - 1
    }
}

/// Listeners on one port of 127.0.0.1, 127.0.0.2, 127.255.255.254 and ::1: every
/// loopback address a spelling below may reach (0.0.0.0 reaches 127.0.0.1, `::` reaches
/// ::1). The port, and their counters.
fn loopback_listeners() -> (u16, Vec<Counting>) {
    for _ in 0..20 {
        let first = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = first.local_addr().unwrap().port();
        drop(first);
        let all: std::io::Result<Vec<_>> = ["127.0.0.1", "127.0.0.2", "127.255.255.254", "::1"]
            .iter()
            .map(|ip| Counting::on(ip, port))
            .collect();
        if let Ok(all) = all {
            return (port, all);
        }
    }
    panic!("no port free on every loopback address");
}

/// `s` with every byte but letters, digits and `-._~:` percent-encoded, as a query value.
fn query_value(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~:".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Under the default (no `networks`: public addresses only), every spelling of a
/// loopback, private, link-local, shared, reserved or metadata address — as an IP, an IP
/// inside an IPv6 address (IPv4-mapped, IPv4-translated, IPv4-compatible, NAT64, 6to4,
/// Teredo), a name resolving to one, or an unusual form of one (decimal, octal, hex, short,
/// percent-encoded, full-width, with user information) — is refused at inclusion, and no
/// connection is ever made to it.
#[test]
fn archive_addresses_outside_the_networks_are_refused_and_never_contacted() {
    let dir = tempfile::tempdir().unwrap();
    // Without networks: public addresses only.
    let mut r = Resolver::start(&write_config(dir.path(), "timeout = \"2s\"\n"));
    let (port, listeners) = loopback_listeners();
    let ran = r.command(
        &["register", SERVICE, "--email", "archive-admin@example.org"],
        KEY,
    );
    assert_eq!(ran.code, 0, "{}", ran.err);
    let outside = "error {archiveaddress outside the networks this resolver asks}\r\n";
    let malformed = "error {malformed archiveaddress}\r\n";
    // Refused for what they are (403).
    let outside_ips = [
        // Loopback, the unspecified address (which reaches it), and IPv6 forms of them.
        format!("127.0.0.1:{port}"),
        format!("127.0.0.2:{port}"),
        format!("127.255.255.254:{port}"),
        format!("0.0.0.0:{port}"),
        format!("[::1]:{port}"),
        format!("[::]:{port}"),
        format!("[::ffff:7f00:1]:{port}"),
        format!("[::ffff:0:7f00:1]:{port}"),
        format!("[::7f00:1]:{port}"),
        format!("[64:ff9b::7f00:1]:{port}"),
        format!("[64:ff9b:1::7f00:1]:{port}"),
        format!("[2002:7f00:1::]:{port}"),
        format!("[2001:0:7f00:1::80ff:fffe]:{port}"),
        // Private, shared, link-local, benchmarking, reserved, multicast, broadcast.
        format!("10.1.2.3:{port}"),
        format!("172.16.0.1:{port}"),
        format!("192.168.1.1:{port}"),
        format!("100.64.0.1:{port}"),
        format!("169.254.0.1:{port}"),
        format!("192.0.0.170:{port}"),
        format!("198.18.0.1:{port}"),
        format!("240.0.0.1:{port}"),
        format!("224.0.0.1:{port}"),
        format!("255.255.255.255:{port}"),
        format!("[fe80::1]:{port}"),
        format!("[fc00::1]:{port}"),
        format!("[fec0::1]:{port}"),
        format!("[ff02::1]:{port}"),
        format!("[2001:db8::1]:{port}"),
        format!("[2001:0:a00:1::f7f7:f7f7]:{port}"),
        // The cloud metadata services, as IPv4 and inside IPv6.
        "169.254.169.254".to_string(),
        "169.254.169.254:80".to_string(),
        "[fd00:ec2::254]".to_string(),
        "[::ffff:a9fe:a9fe]".to_string(),
        "[64:ff9b::a9fe:a9fe]".to_string(),
        "[2002:a9fe:a9fe::1]".to_string(),
        "[2001:0:a9fe:a9fe::f7f7:f7f7]".to_string(),
    ];
    // Names that resolve to loopback.
    let outside_names = [
        format!("localhost:{port}"),
        format!("LOCALHOST:{port}"),
        "localhost".to_string(),
    ];
    // Spellings the URL parser would read as another address: not in the one form
    // checked and contacted, so malformed (400).
    let unusual = [
        format!("127.1:{port}"),
        format!("0x7f.0.0.1:{port}"),
        format!("0x7f000001:{port}"),
        format!("0x7f.1:{port}"),
        format!("2130706433:{port}"),
        format!("0177.0.0.1:{port}"),
        format!("017700000001:{port}"),
        format!("127.0.0.01:{port}"),
        format!("127.000.000.001:{port}"),
        format!("127.0.0.1.:{port}"),
        format!("0:{port}"),
        format!("0251.0376.0251.0376:{port}"),
        format!("0xa9fea9fe:{port}"),
        format!("2852039166:{port}"),
        format!("%31%32%37.0.0.1:{port}"),
        format!("\u{ff11}\u{ff12}\u{ff17}.\u{ff10}.\u{ff10}.\u{ff11}:{port}"),
        format!("127\u{3002}0\u{3002}0\u{3002}1:{port}"),
        format!("[::ffff:127.0.0.1]:{port}"),
        format!("[::127.0.0.1]:{port}"),
        format!("[0:0:0:0:0:0:0:1]:{port}"),
        format!("[0::1]:{port}"),
        format!("[::1%lo]:{port}"),
        format!("127.0.0.1:0{port}"),
        format!("public.example@127.0.0.1:{port}"),
        format!("127.0.0.1:{port}/x"),
        format!("127.0.0.1:{port}#x"),
        format!("127.0.0.1:{port}?x"),
        format!("127.0.0.1:{port}\\x"),
    ];
    let cases: Vec<(&String, u16, &str)> = outside_ips
        .iter()
        .chain(&outside_names)
        .map(|a| (a, 403, outside))
        .chain(unusual.iter().map(|a| (a, 400, malformed)))
        .collect();
    assert_eq!(cases.len(), 67);
    let n = r.lines().len();
    for (address, status, body) in &cases {
        let a = r.include_again(SERVICE, &query_value(address));
        assert_eq!((a.status, a.text().as_str()), (*status, *body), "{address}");
    }
    // One line each, saying why.
    let logged = r.lines_after(n, cases.len());
    for ((address, status, _), line) in cases.iter().zip(&logged) {
        let note = if *status == 400 {
            "malformed archiveaddress".to_string()
        } else if outside_names.contains(address) {
            format!("{SERVICE}: {address} resolves to 127.0.0.1, outside [archives] networks")
        } else {
            format!("{SERVICE}: {address} is outside [archives] networks")
        };
        let expected = format!("ibi-resolver: 127.0.0.1 \"GET /{RESOLVER_IBI}?servicesubject=inclusionRequest&…\" {status} Tms {note}");
        // localhost may resolve to ::1 first.
        let also = expected.replace("resolves to 127.0.0.1", "resolves to ::1");
        let line = untimed(line);
        assert!(line == expected || line == also, "{line}\n{expected}");
    }
    assert!(!r.log().contains(KEY));
    let listed = r.command(&["archives", "--csv"], "");
    assert_eq!(
        listed.out.lines().nth(1),
        Some(format!("{SERVICE},-,no,-,-,0,no,-,-,archive-admin@example.org,0,0,-,-,0").as_str())
    );
    // A later resolution asks no one.
    let a = get(r.port, "/8JMKD3MGP8W/35MME4E");
    assert_eq!(a.status, 404);
    assert!(
        a.text()
            .contains("<p>No Archive is included in this resolver.</p>"),
        "{}",
        a.text()
    );
    let contacted: Vec<usize> = listeners.iter().map(Counting::settled).collect();
    assert_eq!(contacted, [0, 0, 0, 0]);
    r.assert_alive();
}

#[test]
fn archives_included_under_wider_networks_are_not_contacted_once_they_are_narrowed() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        "timeout = \"2s\"\nnetworks = [\"127.0.0.0/8\", \"::1/128\"]\n",
    );
    let by_ip = archive(|_, s| answer_200(s, b"url http://127.0.0.1/a\r\n"));
    let by_name = archive(|_, s| answer_200(s, b"url http://127.0.0.1/b\r\n"));
    let second = "urlib.net/www/2012/01.01.01.02";
    {
        let r = Resolver::start(&config);
        let a = r.include(&by_ip.addr.to_string());
        assert_eq!((a.status, a.text().as_str()), (200, INCLUDED));
        let ran = r.command(
            &["register", second, "--email", "archive-admin@example.org"],
            KEY,
        );
        assert_eq!(ran.code, 0, "{}", ran.err);
        let a = r.include_again(second, &format!("localhost:{}", by_name.addr.port()));
        assert_eq!((a.status, a.text().as_str()), (200, INCLUDED));
    }
    let (ip_seen, name_seen) = (by_ip.settled_connections(), by_name.settled_connections());
    assert!(ip_seen >= 1 && name_seen >= 1);
    // The same registry under the default: public addresses only.
    write_config(dir.path(), "timeout = \"2s\"\n");
    let mut r = Resolver::start(&config);
    let n = r.lines().len();
    let a = get(r.port, "/8JMKD3MGP8W/35MME4E");
    // Neither may be contacted any more: no outage, a plain 404 (nor a failure toward
    // dormancy, for the one whose name resolves outside the networks).
    assert_eq!(
        (a.status, a.text()),
        (404, not_found_page("8JMKD3MGP8W/35MME4E"))
    );
    assert_eq!(
        untimed(&r.one_line_after(n)),
        "ibi-resolver: 127.0.0.1 \"GET /8JMKD3MGP8W/35MME4E\" 404 Tms not found (2 asked, 0 did not answer)"
    );
    let trace = inspect(r.port, "/8JMKD3MGP8W/35MME4E");
    let asked: Vec<(String, String, String)> = trace["rounds"][0]["asked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["address"].as_str().unwrap().to_string(),
                a["result"].as_str().unwrap().to_string(),
                a["detail"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(
        asked,
        vec![
            (
                by_ip.addr.to_string(),
                "refused".to_string(),
                format!("{} is outside the networks Archives may have", by_ip.addr)
            ),
            (
                format!("localhost:{}", by_name.addr.port()),
                "refused".to_string(),
                "cannot connect: localhost has no address in the networks Archives may have"
                    .to_string()
            ),
        ]
    );
    assert_eq!(
        (by_ip.settled_connections(), by_name.settled_connections()),
        (ip_seen, name_seen)
    );
    r.assert_alive();
}

// ---------------------------------------------------------------------------------------
// 6. Stopping

/// SIGTERM to the server.
fn terminate(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_stop_refuses_new_connections_closes_idle_ones_and_lets_a_resolution_end() {
    let tmp = tempfile::tempdir().unwrap();
    // The Archives' timeout is far longer than the stop's grace period: a resolution under
    // way ends with its Archive's answer or not at all.
    let mut r = Resolver::start(&write_config(
        tmp.path(),
        "timeout = \"30s\"\nnetworks = [\"127.0.0.0/8\"]\ndormant_after = 0\n",
    ));
    // An Archive that answers a urlRequest once it is let go (or after 20 s).
    let asked = Arc::new(AtomicBool::new(false));
    let go = Arc::new(AtomicBool::new(false));
    let (asked2, go2) = (asked.clone(), go.clone());
    let slow = archive(move |_, s| {
        asked2.store(true, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(20);
        while !go2.load(Ordering::SeqCst) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        answer_200(s, b"");
    });
    assert_eq!(r.include(&slow.addr.to_string()).text(), INCLUDED);
    // An idle keep-alive connection, as a proxy in front keeps them.
    let mut idle = TcpStream::connect(("127.0.0.1", r.port)).unwrap();
    idle.write_all(b"GET / HTTP/1.1\r\nHost: r\r\n\r\n")
        .unwrap();
    assert_eq!(read_response(&idle).status, 200);
    // A resolution under way when the stop comes.
    let port = r.port;
    let under_way = std::thread::spawn(move || get(port, "/8JMKD3MGP8W/35MME4F"));
    let deadline = Instant::now() + QUICKLY;
    while !asked.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "the Archive was not asked");
        std::thread::sleep(Duration::from_millis(10));
    }
    terminate(&r.child);
    // The idle connection is closed while the resolution is still under way (its Archive
    // answers only after this), not held for the grace period: were it held, the grace
    // period would run out first and the resolution end unanswered. The guard is four
    // times the grace period.
    idle.set_read_timeout(Some(4 * STOP_GRACE)).unwrap();
    let mut rest = Vec::new();
    let closed = idle.read_to_end(&mut rest);
    assert!(
        matches!(closed, Ok(0)),
        "the idle connection was not closed: {closed:?}"
    );
    // No new connection is taken (the listener is closed before the idle connections).
    let refused = TcpStream::connect(("127.0.0.1", r.port));
    assert!(
        refused.is_err(),
        "a connection was accepted after the stop:\n{}",
        r.log()
    );
    go.store(true, Ordering::SeqCst);
    // The resolution under way ends with its answer: the Archive's, which knows nothing.
    let answer = under_way
        .join()
        .expect("the resolution under way ended unanswered");
    assert_eq!(answer.status, 404, "{}", r.log());
    assert_eq!(
        answer.text(),
        not_found_page("8JMKD3MGP8W/35MME4F"),
        "{}",
        r.log()
    );
    let status = r.child.wait().unwrap();
    assert!(status.success(), "{status}:\n{}", r.log());
    assert!(r.log().ends_with("ibi-resolver: stopped\n"), "{}", r.log());
}

// ---------------------------------------------------------------------------------------
// 7. The remembered Archive failing

#[test]
fn a_remembered_archive_that_fails_is_asked_again_counted_once_and_still_remembered() {
    let tmp = tempfile::tempdir().unwrap();
    let r = Resolver::start(&write_config(
        tmp.path(),
        "timeout = \"2s\"\nnetworks = [\"127.0.0.0/8\"]\ndormant_after = 2\n",
    ));
    // How many of the next urlRequests fail with a 500.
    let failures = Arc::new(AtomicUsize::new(0));
    let f = failures.clone();
    let peer = archive(move |_, s| {
        let failing = f
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if failing {
            let _ = s.write_all(
                b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        } else {
            answer_200(s, b"url http://127.0.0.1/a\r\n");
        }
    });
    assert_eq!(r.include(&peer.addr.to_string()).text(), INCLUDED);
    let asked = || {
        peer.targets()
            .iter()
            .filter(|t| asked_ibi(t).is_some())
            .count()
    };
    // Found, and remembered.
    assert_eq!(get(r.port, "/8JMKD3MGP8W/35MME4E").status, 302);
    assert_eq!(asked(), 1);
    // It fails once (a moment of overload): the fan-out that follows asks it again and
    // the item is found.
    failures.store(1, Ordering::SeqCst);
    let found = get(r.port, "/8JMKD3MGP8W/35MME4E");
    assert_eq!(found.status, 302, "{}", r.log());
    assert_eq!(asked(), 3);
    // It fails twice in the same resolution: the reader is told, and the two failures
    // count as one (dormant_after = 2 is not reached).
    failures.store(2, Ordering::SeqCst);
    let miss = get(r.port, "/8JMKD3MGP8W/35MME4E");
    assert_eq!(miss.status, 503);
    assert_eq!(miss.text(), unavailable_page("8JMKD3MGP8W/35MME4E", 1));
    assert_eq!(asked(), 5);
    assert!(!r.log().contains("dormant"), "{}", r.log());
    // It answers again: still remembered (a failure is no proof the item left).
    let inspected = get(r.port, "/8JMKD3MGP8W/35MME4E?noredirect").text();
    assert!(
        inspected.contains("(remembered Archive)") && !inspected.contains("Round 2"),
        "{inspected}"
    );
    assert_eq!(asked(), 6);
}

/// How long the slow Archive below takes over each acknowledgment.
const SLOW_ACKNOWLEDGMENT: Duration = Duration::from_millis(300);

#[test]
fn an_archive_slow_to_take_acknowledgments_gets_every_one_of_them() {
    // A burst of resolutions finds the item at an Archive that answers urlRequests at
    // once but takes 300 ms over each acknowledgment: the acknowledgments pile up faster
    // than the Archive takes them. Each one is part of the Archive's access statistics:
    // none may be lost while the Archive still takes them. They wait in the background
    // (the readers have their redirects at once), within their bound and their time.
    let tmp = tempfile::tempdir().unwrap();
    let r = Resolver::start(&write_config(tmp.path(), LOOPBACK));
    let taken = Arc::new(AtomicUsize::new(0));
    let t = taken.clone();
    let peer = Peer::start(move |target, s| {
        if target.contains("servicesubject=inclusionConfirmationRequest") {
            answer_200(s, b"confirmation yes\r\n");
        } else if asked_ibi(target).is_some() {
            answer_200(
                s,
                b"state Original\r\nurl http://127.0.0.1/a\r\nurlkey 1111111111-2222222222\r\n",
            );
        } else if target.contains("servicesubject=acknowledgment") {
            std::thread::sleep(SLOW_ACKNOWLEDGMENT);
            answer_200(s, b"");
            t.fetch_add(1, Ordering::SeqCst);
        } else {
            answer_200(s, b"");
        }
    });
    assert_eq!(r.include(&peer.addr.to_string()).text(), INCLUDED);
    const READERS: usize = 20;
    const EACH: usize = 20;
    let readers: Vec<_> = (0..READERS)
        .map(|_| {
            let port = r.port;
            std::thread::spawn(move || {
                (0..EACH)
                    .map(|_| get(port, "/8JMKD3MGP8W/35MME4E").status)
                    .collect::<Vec<u16>>()
            })
        })
        .collect();
    for reader in readers {
        assert_eq!(reader.join().unwrap(), vec![302; EACH]);
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while taken.load(Ordering::SeqCst) < READERS * EACH && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(taken.load(Ordering::SeqCst), READERS * EACH, "{}", r.log());
    assert!(!r.log().contains("dropped"), "{}", r.log());
}

#[test]
fn a_request_still_under_way_when_another_archive_answered_ends_and_counts() {
    // Two Archives, the memory off so that every resolution asks both: one holds the item
    // and answers at once, the other fails 300 ms later. Its request is not cut off when
    // the first answer decides (cutting it closes a connection the next resolution would
    // reuse); it ends in the background, and its failures count: after two, it is dormant
    // though no resolution waited for it.
    let tmp = tempfile::tempdir().unwrap();
    let r = Resolver::start(&write_config(tmp.path(), &every_archive_asked(2)));
    let holder = archive(|_, s| answer_200(s, b"url http://127.0.0.1/a\r\n"));
    let failing = archive(|_, s| {
        std::thread::sleep(Duration::from_millis(300));
        let _ = s.write_all(
            b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
    });
    assert_eq!(r.include(&holder.addr.to_string()).text(), INCLUDED);
    include_second(&r, &failing);
    for _ in 0..2 {
        assert_eq!(get(r.port, "/8JMKD3MGP8W/35MME4E").status, 302);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while !r
        .log()
        .contains(&format!("{SECOND} failed 2 times in a row: dormant"))
    {
        assert!(Instant::now() < deadline, "not dormant:\n{}", r.log());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        failing
            .targets()
            .iter()
            .filter(|t| asked_ibi(t).is_some())
            .count(),
        2
    );
}

/// An inclusion or exclusion request for an Archive that is not registered and one with a
/// wrong key get the same answer: status, headers (but the date) and body, byte for
/// byte. Each comes from its own client network (through a trusted proxy), so that none
/// waits for another's wrong keys.
#[test]
fn an_unknown_archive_and_a_wrong_key_get_the_same_403() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("resolver.toml");
    std::fs::write(
        &config,
        format!(
            "serviceibi = \"{RESOLVER_IBI}\"\npublicurl = \"http://127.0.0.1\"\nlisten = \"127.0.0.1:0\"\ndatabase = \"registry.sqlite\"\ntrustedproxies = [\"127.0.0.1/32\"]\n{UNBOUNDED_CLIENT}[archives]\n{LOOPBACK}"
        ),
    )
    .unwrap();
    let mut r = Resolver::start(&config);
    let peer = archive(|_, s| answer_200(s, b""));
    let ran = r.command(
        &["register", SERVICE, "--email", "archive-admin@example.org"],
        KEY,
    );
    assert_eq!(ran.code, 0, "{}", ran.err);
    const WRONG: &str = "9999999999";
    // (subject, service IBI, key, the reader's network)
    let requests = [
        ("inclusionRequest", SERVICE, WRONG, "203.0.113.7"),
        (
            "inclusionRequest",
            "urlib.net/www/2012/01.01.01.09",
            KEY,
            "198.51.100.7",
        ),
        (
            "inclusionRequest",
            "urlib.net/www/2012/01.01.01.10",
            WRONG,
            "192.0.2.7",
        ),
        ("exclusionRequest", SERVICE, WRONG, "100.64.1.7"),
        (
            "exclusionRequest",
            "urlib.net/www/2012/01.01.01.11",
            KEY,
            "100.64.2.7",
        ),
        (
            "exclusionRequest",
            "urlib.net/www/2012/01.01.01.12",
            WRONG,
            "100.64.3.7",
        ),
    ];
    let n = r.lines().len();
    let answers: Vec<Answer> = requests
        .iter()
        .map(|(subject, service, key, reader)| {
            get_with(
                r.port,
                &format!(
                    "/{RESOLVER_IBI}?servicesubject={subject}&archiveaddress={}&archiveserviceibi={service}&archiveip=127.0.0.1&archiveprotocol=HTTP&archiveplatformversion=1&archiveadmemailaddress=archive-admin@example.org&registrationkey={key}",
                    peer.addr
                ),
                &format!("X-Forwarded-For: {reader}\r\n"),
            )
        })
        .collect();
    let undated = |a: &Answer| -> String {
        a.head
            .split("\r\n")
            .filter(|l| !l.to_ascii_lowercase().starts_with("date: "))
            .collect::<Vec<_>>()
            .join("\r\n")
    };
    for (a, request) in answers.iter().zip(&requests) {
        assert_eq!(
            undated(a),
            "HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: 51\r\nconnection: close",
            "{request:?}"
        );
        assert!(a.header("date").is_some());
        assert_eq!(
            a.body, b"error {unknown Archive or wrong registration key}\r\n",
            "{request:?}"
        );
    }
    // The log tells the operator no more: the same note for each.
    for (line, (_, service, _, reader)) in r.lines_after(n, requests.len()).iter().zip(&requests) {
        let id = service.to_string();
        let prefix = format!("ibi-resolver: {reader} \"GET /{RESOLVER_IBI}?servicesubject=");
        let note = format!("403 Tms {id}: refused (unregistered or wrong key) after waiting ");
        let line = untimed(line);
        assert!(
            line.starts_with(&prefix) && line.contains(&note) && line.ends_with(" ms"),
            "{line}"
        );
    }
    // SERVICE is registered and was not included; no Archive was asked to confirm.
    let listed = r.command(&["archives", "--csv"], "");
    assert_eq!(
        listed.out.lines().skip(1).collect::<Vec<_>>(),
        [format!("{SERVICE},-,no,-,-,0,no,-,-,archive-admin@example.org,0,0,-,-,0").as_str()]
    );
    assert_eq!(peer.connections(), 0);
    r.assert_alive();
}

#[test]
fn key_checks_give_their_memory_back() {
    // Each registration key is checked with argon2id, which works in 19 MiB. Inclusion
    // requests with a wrong key — anyone may send them — must not leave the resolver
    // larger: that memory is returned once the check ends.
    // From 8 client networks (behind the trusted proxy 127.0.0.1): each has its key
    // checked at once, one check at a time being a network's share.
    let tmp = tempfile::tempdir().unwrap();
    let config = write_config(tmp.path(), LOOPBACK);
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!("trustedproxies = [\"127.0.0.1/32\"]\n{text}"),
    )
    .unwrap();
    let r = Resolver::start(&config);
    let peer = archive(|_, s| answer_200(s, b""));
    assert_eq!(r.include(&peer.addr.to_string()).text(), INCLUDED);
    let before = r.rss_kib();
    let checks: Vec<_> = (0..8)
        .map(|n| {
            let (port, address) = (r.port, peer.addr.to_string());
            std::thread::spawn(move || {
                get_with(
                    port,
                    &format!(
                        "/{RESOLVER_IBI}?servicesubject=inclusionRequest&archiveaddress={address}&archiveserviceibi={SERVICE}&archiveip=127.0.0.1&archiveprotocol=HTTP&archiveplatformversion=1&archiveadmemailaddress=a@example.org&registrationkey=9999999999"
                    ),
                    &format!("X-Forwarded-For: 10.0.{n}.1\r\n"),
                )
                .status
            })
        })
        .collect();
    for c in checks {
        assert_eq!(c.join().unwrap(), 403);
    }
    // Each check ended before its answer: what it took is given back by now.
    let after = r.rss_kib();
    assert!(
        after < before + 8 * 1024,
        "resident {before} KiB before 8 wrong keys, {after} KiB after"
    );
}

#[test]
fn an_open_file_limit_too_low_for_the_connections_lowers_them_saying_so() {
    // Under a hard limit of 64 open files, 10,000 client connections (the default) would
    // leave no descriptor for the Archives: half the files go to readers, and the log
    // says so before the server listens.
    let tmp = tempfile::tempdir().unwrap();
    let config = write_config(tmp.path(), LOOPBACK);
    let log = tmp.path().join("serve.log");
    let mut child = Command::new("prlimit")
        .args(["--nofile=64:64", BIN, "serve", "--config"])
        .arg(&config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + QUICKLY;
    let text = loop {
        let text = common::resolver::unstamped(&std::fs::read_to_string(&log).unwrap_or_default());
        if text.contains("listening on") {
            break text;
        }
        assert!(child.try_wait().unwrap().is_none(), "serve exited:\n{text}");
        assert!(Instant::now() < deadline, "serve did not listen:\n{text}");
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        text.lines().next(),
        Some("ibi-resolver: the open-file limit is 64: at most 32 client connections ([limits] connections is 10000)"),
        "{text}"
    );
}

#[test]
fn a_round_over_many_archives_has_at_most_a_window_of_requests_under_way() {
    // WINDOW + 8 Archives (each under its own service IBI, at as many addresses as it
    // takes for none to have more Archives than the connections the resolver opens to one
    // address, so that none reaches its share) that each answer "not here" once WINDOW
    // requests have been under way at once (however slowly the resolver opens them): a
    // miss asks every one, never more than WINDOW at once, and the memory of requests
    // under way stays bounded however many Archives there are.
    use ibi_resolver::client::DEFAULT_PER_ARCHIVE;
    use ibi_resolver::resolve::WINDOW;
    let tmp = tempfile::tempdir().unwrap();
    let r = Resolver::start(&write_config(tmp.path(), LOOPBACK));
    let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let full = Arc::new(AtomicBool::new(false));
    let peers: Vec<Peer> = (0..(WINDOW + 8).div_ceil(DEFAULT_PER_ARCHIVE))
        .map(|_| {
            let (n, m, full) = (now.clone(), most.clone(), full.clone());
            archive(move |_, s| {
                let under_way = n.fetch_add(1, Ordering::SeqCst) + 1;
                m.fetch_max(under_way, Ordering::SeqCst);
                if under_way >= WINDOW {
                    full.store(true, Ordering::SeqCst);
                }
                // Held until the window has been full once: never, and the round ends
                // on the Archives' timeout (a 503, not the 404 expected).
                let deadline = Instant::now() + QUICKLY;
                while !full.load(Ordering::SeqCst) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(10));
                }
                n.fetch_sub(1, Ordering::SeqCst);
                answer_200(s, b"");
            })
        })
        .collect();
    let services: Vec<String> = (0..WINDOW + 8)
        .map(|i| format!("urlib.net/www/2013/01.01.{:02}.{:02}", i / 60, i % 60))
        .collect();
    let chunks: Vec<Vec<String>> = services
        .chunks(services.len().div_ceil(4))
        .map(<[String]>::to_vec)
        .collect();
    let config = r.config.clone();
    let registering: Vec<_> = chunks
        .into_iter()
        .map(|chunk| {
            let config = config.clone();
            std::thread::spawn(move || {
                for s in chunk {
                    let ran = run(
                        &[
                            "register",
                            &s,
                            "--email",
                            "a@example.org",
                            "--config",
                            config.to_str().unwrap(),
                        ],
                        KEY,
                    );
                    assert_eq!(ran.code, 0, "{}", ran.err);
                }
            })
        })
        .collect();
    for t in registering {
        t.join().unwrap();
    }
    for (i, s) in services.iter().enumerate() {
        let peer = &peers[i % peers.len()];
        assert_eq!(r.include_again(s, &peer.addr.to_string()).text(), INCLUDED);
    }
    let miss = get(r.port, "/8JMKD3MGP8W/35MME4F");
    assert_eq!(miss.status, 404);
    let asked: usize = peers
        .iter()
        .map(|p| {
            p.targets()
                .iter()
                .filter(|t| asked_ibi(t).is_some())
                .count()
        })
        .sum();
    assert_eq!(asked, WINDOW + 8);
    assert_eq!(most.load(Ordering::SeqCst), WINDOW);
}

#[test]
fn an_archive_that_never_answers_holds_no_more_than_its_share_of_requests() {
    // Memory off and never dormant: every resolution asks both Archives, the holder
    // answers at once and decides it, and the request to the silent one goes on in the
    // background until the timeout. 200 resolutions in a burst: the silent Archive holds
    // at most its share of the requests under way, and every reader gets the redirect.
    use ibi_resolver::client::DEFAULT_PER_ARCHIVE;
    let tmp = tempfile::tempdir().unwrap();
    let r = Resolver::start(&write_config(tmp.path(), &every_archive_asked(0)));
    let holder = archive(|_, s| answer_200(s, b"url http://127.0.0.1/a\r\n"));
    let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (n, m) = (now.clone(), most.clone());
    let silent = archive(move |_, _| {
        let held = n.fetch_add(1, Ordering::SeqCst) + 1;
        m.fetch_max(held, Ordering::SeqCst);
        std::thread::sleep(Duration::from_secs(3));
        n.fetch_sub(1, Ordering::SeqCst);
    });
    assert_eq!(r.include(&holder.addr.to_string()).text(), INCLUDED);
    include_second(&r, &silent);
    // The readers on another address than the Archives': a reader at the address of an
    // Archive asked about the same IBI, whose request does not end, could be that
    // Archive relaying it (crate::loops).
    let url = format!("http://127.0.0.1:{}/8JMKD3MGP8W/35MME4E", r.port);
    let readers: Vec<_> = (0..8)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || {
                (0..25)
                    .map(|_| common::http_get_from("127.0.0.2".parse().unwrap(), &url).status)
                    .collect::<Vec<u16>>()
            })
        })
        .collect();
    for reader in readers {
        assert_eq!(reader.join().unwrap(), vec![302; 25]);
    }
    assert_eq!(most.load(Ordering::SeqCst), DEFAULT_PER_ARCHIVE);
}
