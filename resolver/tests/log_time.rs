//! The time of the resolver's log lines: each line of `serve` starts with its time (RFC
//! 3339, UTC, milliseconds), unless its stderr is the systemd journal (`JOURNAL_STREAM`
//! naming the device and inode of that very stderr), which times lines itself. A
//! command's message is its answer, with no time.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::resolver::{split_stamp, RESOLVER_IBI};

/// Runs `serve` on `config` (listening on `port`), its stderr the file `log`, with
/// `JOURNAL_STREAM` set to `journal` (unset when `None`); once it listens, answers `GET /`
/// and is stopped, its whole log.
fn serve_once(config: &Path, port: u16, log: &Path, journal: Option<String>) -> String {
    let stderr = std::fs::File::create(log).unwrap();
    let mut cmd = Command::new(common::ibi_resolver_bin());
    cmd.args(["serve", "--config", config.to_str().unwrap()])
        .env_remove("JOURNAL_STREAM")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr);
    let journal = journal.map(|j| {
        let j = j.replace("{}", &{
            let m = std::fs::metadata(log).unwrap();
            format!("{}:{}", m.dev(), m.ino())
        });
        cmd.env("JOURNAL_STREAM", &j);
        j
    });
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + common::HANG_GUARD;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "{journal:?}: serve exited"
        );
        assert!(Instant::now() < deadline, "serve did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    let home = common::http_get(&format!("http://127.0.0.1:{port}/"));
    assert_eq!(home.status, 200);
    assert!(Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    assert!(child.wait().unwrap().success());
    std::fs::read_to_string(log).unwrap()
}

#[test]
fn log_lines_carry_their_time_except_in_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let port = common::free_port();
    let config = dir.path().join("resolver.toml");
    std::fs::write(
        &config,
        format!("serviceibi = \"{RESOLVER_IBI}\"\npublicurl = \"http://127.0.0.1:{port}\"\nlisten = \"127.0.0.1:{port}\"\ndatabase = \"registry.sqlite\"\n"),
    )
    .unwrap();
    let want = [
        format!("ibi-resolver: listening on http://127.0.0.1:{port} (0 Archives included)"),
        "ibi-resolver: 127.0.0.1 \"GET /\" 200 Tms ".to_string(),
        "ibi-resolver: stopping".to_string(),
        "ibi-resolver: stopped".to_string(),
    ];
    // The request line's duration varies: shown as T.
    let masked = |line: &str| {
        let Some((head, rest)) = line.split_once(" 200 ") else {
            return line.to_string();
        };
        let rest = rest.split_once("ms").map_or(rest, |(_, r)| r);
        format!("{head} 200 Tms{rest}")
    };

    // A file, no journal (also when JOURNAL_STREAM names another stream, as a child of a
    // service inherits it with its stderr elsewhere): every line after its time, taken
    // while the server ran.
    for (i, journal) in [None, Some("1:2".to_string())].into_iter().enumerate() {
        let before = chrono::Utc::now();
        let log = serve_once(&config, port, &dir.path().join(format!("{i}.log")), journal);
        let after = chrono::Utc::now();
        let mut lines = Vec::new();
        let mut last = before - chrono::Duration::milliseconds(1);
        for line in log.lines() {
            let (time, rest) =
                split_stamp(line).unwrap_or_else(|| panic!("no time in {line:?}:\n{log}"));
            // In order, between the start and the stop (the log's time is cut to the
            // millisecond, so it may be up to 1 ms before `before`).
            assert!(time >= last && time <= after, "{line}: {before}..{after}");
            last = time;
            lines.push(masked(rest));
        }
        assert_eq!(lines, want, "{log}");
    }

    // The journal: JOURNAL_STREAM is the device and inode of the file given as stderr,
    // and the lines are as the journal stores them, timed by it.
    let log = serve_once(
        &config,
        port,
        &dir.path().join("journal.log"),
        Some("{}".to_string()),
    );
    let lines: Vec<String> = log.lines().map(masked).collect();
    assert_eq!(lines, want, "{log}");
}

#[test]
fn a_command_s_message_has_no_time() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.toml");
    let (code, out, err) = common::run_with_stdin(
        Command::new(common::ibi_resolver_bin()).args([
            "archives",
            "--config",
            missing.to_str().unwrap(),
        ]),
        "",
    );
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.starts_with(&format!("ibi-resolver: {}: ", missing.display())),
        "{err}"
    );
}

/// `serve --config config` that cannot start: its exit code and its log, each line's time
/// checked and taken off.
fn serve_fails(config: &Path) -> (Option<i32>, String) {
    let out = Command::new(common::ibi_resolver_bin())
        .args(["serve", "--config", config.to_str().unwrap()])
        .env_remove("JOURNAL_STREAM")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    (
        out.status.code(),
        common::resolver::unstamped(&String::from_utf8_lossy(&out.stderr)),
    )
}

/// Why `serve` could not start is its last log line, timed as the others, and a database
/// out of reach is said with the cause the driver holds (its own words are only "error
/// connecting to server"): here the connection refused, by a port nobody listens on.
#[test]
fn a_serve_that_cannot_start_says_why_in_a_timed_line_with_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.toml");
    let (code, log) = serve_fails(&missing);
    assert_eq!(code, Some(1));
    assert_eq!(
        log,
        format!(
            "ibi-resolver: {}: No such file or directory (os error 2) (choose the settings with --config FILE or IBI_RESOLVER_CONFIG=FILE; ibi-resolver init --publicurl URL writes them)\n",
            missing.display()
        )
    );

    // A port of loopback that was free a moment ago: nothing listens there.
    let closed = common::free_port();
    let port = common::free_port();
    let config = dir.path().join("resolver.toml");
    std::fs::write(
        &config,
        format!("serviceibi = \"{RESOLVER_IBI}\"\npublicurl = \"http://127.0.0.1:{port}\"\nlisten = \"127.0.0.1:{port}\"\ndatabase = \"postgresql://ibi_resolver:secret@127.0.0.1:{closed}/ibi_registry\"\n"),
    )
    .unwrap();
    let (code, log) = serve_fails(&config);
    assert_eq!(code, Some(1));
    assert_eq!(
        log,
        format!("ibi-resolver: postgresql://ibi_resolver:***@127.0.0.1:{closed}/ibi_registry: cannot connect: error connecting to server: Connection refused (os error 111)\n")
    );
}

/// `serve --listen` puts the server on its own address in place of the settings' listen
/// (here a port another socket holds, where the server could not start): two instances
/// can share one settings file.
#[test]
fn serve_listens_where_listen_says_in_place_of_the_settings() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let held = taken.local_addr().unwrap();
    let config = dir.path().join("resolver.toml");
    std::fs::write(
        &config,
        format!("serviceibi = \"{RESOLVER_IBI}\"\npublicurl = \"http://127.0.0.1:8090\"\nlisten = \"{held}\"\ndatabase = \"registry.sqlite\"\n"),
    )
    .unwrap();
    let mut ports = Vec::new();
    for flag in ["127.0.0.1:{}", "{}"] {
        let port = common::free_port();
        let log = dir.path().join(format!("{port}.log"));
        let mut child = Command::new(common::ibi_resolver_bin())
            .args(["serve", "--listen", &flag.replace("{}", &port.to_string())])
            .args(["--config", config.to_str().unwrap()])
            .env_remove("JOURNAL_STREAM")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let waited = common::wait_for_port(port, Some(&mut child));
        let said = common::resolver::unstamped(&std::fs::read_to_string(&log).unwrap());
        assert!(waited.is_ok(), "{waited:?}\n{said}");
        assert_eq!(
            said,
            format!("ibi-resolver: listening on http://127.0.0.1:{port} (0 Archives included)\n")
        );
        ports.push((port, child));
    }
    // Both at once, on one settings file and one registry.
    for (port, mut child) in ports {
        let home = common::http_get(&format!("http://127.0.0.1:{port}/"));
        assert_eq!(home.status, 200);
        let _ = child.kill();
        let _ = child.wait();
    }
    let (code, _, err) = common::run_with_stdin(
        Command::new(common::ibi_resolver_bin()).args(["serve", "--listen", "localhost:1"]),
        "",
    );
    assert_eq!(
        (code, err.as_str()),
        (2, "ibi-resolver: serve: --listen \"localhost:1\": expected ADDRESS:PORT (127.0.0.1:8080, [::1]:8080) or a PORT\n")
    );
}
