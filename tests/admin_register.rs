//! `ibi-archive include` / `exclude` against a stand-in resolver on 127.0.0.1 that checks
//! the eight pairs of Table 7.2 and, like the real resolver (Example 7.4), asks the Archive
//! service for its confirmation — the real binary, served by `ibi-archive serve` (or run as
//! a CGI program: one function apart). The stand-in may also refuse its first requests as
//! a busy resolver does (`429` or `503`, with or without `Retry-After`), for the retries
//! of `include`, `exclude` and `serve`.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{run_cmd, Cgi, Fixture, Serve};

const KEY: &str = "1234567890-9876543210";
const SERVICE_IBI: &str = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17";
const EMAIL: &str = "archive-admin@example.org";
/// A version with a space and a `+`, which Table 6.1 escapes.
const VERSION: &str = "2026:11.22 build+1";

/// How the stand-in reaches the Archive service for the confirmation (message 3).
#[derive(Clone)]
enum Confirmer {
    /// `GET http://<archiveaddress>/<archiveserviceibi>?servicesubject=inclusionConfirmationRequest`
    Http,
    /// The binary run as a CGI program for the Archive at this root.
    Cgi(PathBuf),
}

impl Confirmer {
    /// Message (3) and whether the answer (4) was `confirmation yes`.
    fn confirm(&self, address: &str, service: &str) -> bool {
        let query = "servicesubject=inclusionConfirmationRequest";
        match self {
            Confirmer::Http => minreq::get(format!("http://{address}/{service}?{query}"))
                .with_timeout(5)
                .send()
                .is_ok_and(|r| r.status_code == 200 && r.as_bytes() == b"confirmation yes"),
            Confirmer::Cgi(root) => Cgi::get(root, query).run().body == b"confirmation yes",
        }
    }
}

/// What the stand-in saw.
#[derive(Default)]
struct Seen {
    /// Raw query strings received.
    requests: Vec<String>,
    /// When each was received.
    times: Vec<Instant>,
    /// Whether each confirmation asked for succeeded.
    confirmations: Vec<bool>,
}

/// The requests the stand-in refuses as a busy resolver does: `status` (429 or 503),
/// with `Retry-After: retry_after` when given, to the requests `refused` says (by their
/// number, the first 1).
#[derive(Clone, Copy)]
struct Busy {
    status: u16,
    retry_after: Option<u64>,
    refused: fn(usize) -> bool,
}

impl Busy {
    /// Never busy.
    const NEVER: Busy = Busy {
        status: 200,
        retry_after: None,
        refused: |_| false,
    };

    /// The body of its refusal.
    fn body(&self) -> &'static str {
        if self.status == 503 {
            "error {registry unavailable}"
        } else {
            "error {too many key checks from your network waiting}"
        }
    }
}

/// A resolver with one registered Archive.
struct StandIn {
    server: Arc<tiny_http::Server>,
    port: u16,
    seen: Arc<Mutex<Seen>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl StandIn {
    fn start(archiveaddress: String, confirmer: Confirmer) -> StandIn {
        StandIn::start_busy(archiveaddress, confirmer, Busy::NEVER)
    }

    /// A stand-in that refuses its first requests as `busy` says.
    fn start_busy(archiveaddress: String, confirmer: Confirmer, busy: Busy) -> StandIn {
        StandIn::start_with(archiveaddress, confirmer, busy, KEY)
    }

    /// A stand-in with which the Archive registered `key`.
    fn start_keyed(archiveaddress: String, confirmer: Confirmer, key: &'static str) -> StandIn {
        StandIn::start_with(archiveaddress, confirmer, Busy::NEVER, key)
    }

    fn start_with(
        archiveaddress: String,
        confirmer: Confirmer,
        busy: Busy,
        key: &'static str,
    ) -> StandIn {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let port = server.server_addr().to_ip().unwrap().port();
        let seen = Arc::new(Mutex::new(Seen::default()));
        let thread = {
            let (server, seen) = (server.clone(), seen.clone());
            std::thread::spawn(move || {
                for req in server.incoming_requests() {
                    let url = req.url().to_string();
                    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
                    let received = {
                        let mut seen = seen.lock().unwrap();
                        seen.requests.push(query.to_string());
                        seen.times.push(Instant::now());
                        seen.requests.len()
                    };
                    let mut retry_after = None;
                    let (status, body) = if path != "/J8LNKB5R7W/3FUQHC5" {
                        (404, "error {not found}".to_string())
                    } else if (busy.refused)(received) {
                        retry_after = busy.retry_after;
                        (busy.status, busy.body().to_string())
                    } else {
                        answer(query, &archiveaddress, key, &confirmer, &seen)
                    };
                    let mut response = tiny_http::Response::from_string(body)
                        .with_status_code(status)
                        .with_header(
                            "Content-Type: text/plain"
                                .parse::<tiny_http::Header>()
                                .unwrap(),
                        );
                    if let Some(seconds) = retry_after {
                        response = response.with_header(
                            format!("Retry-After: {seconds}")
                                .parse::<tiny_http::Header>()
                                .unwrap(),
                        );
                    }
                    let _ = req.respond(response);
                }
            })
        };
        StandIn {
            server,
            port,
            seen,
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/J8LNKB5R7W/3FUQHC5", self.port)
    }

    fn requests(&self) -> Vec<String> {
        self.seen.lock().unwrap().requests.clone()
    }

    /// The time between each request received and the next.
    fn gaps(&self) -> Vec<Duration> {
        let times = self.seen.lock().unwrap().times.clone();
        times.windows(2).map(|w| w[1] - w[0]).collect()
    }

    fn confirmations(&self) -> Vec<bool> {
        self.seen.lock().unwrap().confirmations.clone()
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The resolver's side of messages (2)/(7): the eight pairs, each checked; then (3) and
/// the status (5)/(8).
fn answer(
    query: &str,
    address: &str,
    key: &str,
    confirmer: &Confirmer,
    seen: &Mutex<Seen>,
) -> (u16, String) {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for part in query.split('&') {
        let (n, v) = part.split_once('=').unwrap_or((part, ""));
        pairs.push((n.to_string(), v.to_string()));
    }
    let names: Vec<&str> = pairs.iter().map(|(n, _)| n.as_str()).collect();
    let want_names = [
        "servicesubject",
        "archiveaddress",
        "archiveserviceibi",
        "archiveip",
        "archiveprotocol",
        "archiveplatformversion",
        "archiveadmemailaddress",
        "registrationkey",
    ];
    let raw = |n: &str| pairs.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
    let subject = raw("servicesubject").unwrap_or("");
    let well_formed = names == want_names
        && ["inclusionRequest", "exclusionRequest"].contains(&subject)
        && raw("archiveaddress") == Some(address)
        && raw("archiveserviceibi") == Some(SERVICE_IBI)
        && raw("archiveip") == Some("127.0.0.1")
        && raw("archiveprotocol") == Some("HTTP")
        && raw("archiveplatformversion") == Some("2026:11.22%20build%2B1")
        && raw("archiveadmemailaddress") == Some(EMAIL);
    if !well_formed {
        return (400, "error {malformed request}".into());
    }
    if raw("registrationkey") != Some(key) {
        return (
            200,
            "error {unknown archive or wrong registration key}".into(),
        );
    }
    if subject == "exclusionRequest" {
        return (200, "status.archive excluded".into());
    }
    let ok = confirmer.confirm(address, SERVICE_IBI);
    seen.lock().unwrap().confirmations.push(ok);
    let status = if ok { "successful" } else { "unsuccessful" };
    (
        200,
        format!("status.archive included\r\nstatus.confirmation {status}"),
    )
}

/// The sample Archive registered with `key`, at `address`, with `resolver` configured.
fn archive(address: &str, key: &str, resolver: &str) -> Fixture {
    let f = Fixture::sample();
    let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
    let toml = toml
        .replace("\"localhost:8080\"", &format!("\"{address}\""))
        .replace(
            "key             = \"1234567890\"",
            &format!("key = \"{key}\""),
        )
        .replace("http://localhost:8090/J8LNKB5R7W/3FUQHC5", resolver)
        .replace(
            "ip              = \"127.0.0.1\"",
            &format!("ip = \"127.0.0.1\"\nplatformversion = \"{VERSION}\""),
        );
    assert!(toml.contains(key) && toml.contains(VERSION));
    f.write("archive.toml", toml.as_bytes());
    f
}

fn set_address(f: &Fixture, old: &str, new: &str) {
    let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
    f.write(
        "archive.toml",
        toml.replace(&format!("\"{old}\""), &format!("\"{new}\""))
            .as_bytes(),
    );
}

fn run(cmd: &str, f: &Fixture, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![cmd, "--root", f.root().to_str().unwrap()];
    args.extend_from_slice(extra);
    let (code, out, err) = run_cmd(&args);
    for part in KEY.split('-') {
        assert!(
            !out.contains(part) && !err.contains(part),
            "the key leaked: {out}{err}"
        );
    }
    (code, out, err)
}

/// A port nobody listens on.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn include_is_confirmed_by_the_served_archive_and_exclude_follows() {
    let f = archive(
        "localhost:8080",
        KEY,
        "http://unused.invalid/J8LNKB5R7W/3FUQHC5",
    );
    let served = Serve::start(f.root(), Stdio::null());
    set_address(&f, "localhost:8080", &served.address);
    let resolver = StandIn::start(served.address.clone(), Confirmer::Http);

    let (code, out, err) = run("include", &f, &["--resolver", &resolver.url()]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            0,
            "status.archive included\nstatus.confirmation successful\n",
            ""
        )
    );
    assert_eq!(resolver.confirmations(), [true]);
    let requests = resolver.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0],
        format!(
            "servicesubject=inclusionRequest&archiveaddress={}&archiveserviceibi={SERVICE_IBI}&archiveip=127.0.0.1&archiveprotocol=HTTP&archiveplatformversion=2026:11.22%20build%2B1&archiveadmemailaddress={EMAIL}&registrationkey={KEY}",
            served.address
        )
    );

    let (code, out, err) = run("exclude", &f, &["--resolver", &resolver.url()]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, "status.archive excluded\n", "")
    );
    assert_eq!(resolver.requests().len(), 2);
    assert!(resolver.requests()[1].starts_with("servicesubject=exclusionRequest&"));
    // Excluding asks for no confirmation.
    assert_eq!(resolver.confirmations(), [true]);

    // With the service down, the resolver includes the Archive unconfirmed: exit 0, and a
    // warning that the Archive is not reachable.
    drop(served);
    let (code, out, err) = run("include", &f, &["--resolver", &resolver.url()]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "status.archive included\nstatus.confirmation unsuccessful\n"
    );
    let address = resolver.requests()[0]
        .split("archiveaddress=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap()
        .to_string();
    assert_eq!(
        err,
        format!("ibi-archive: include: included, but the resolver at {} could not confirm the Archive service at http://{address}/{SERVICE_IBI} (status.confirmation unsuccessful): is the Archive reachable at archiveaddress?\n", resolver.url())
    );
    assert_eq!(resolver.confirmations(), [true, false]);
}

#[test]
fn include_through_the_configured_resolver_with_a_cgi_confirmation() {
    let port = closed_port();
    let address = format!("127.0.0.1:{port}");
    // The resolver's URL is only known once it runs: write it into archive.toml then.
    let f = archive(
        &address,
        KEY,
        "http://placeholder.invalid/J8LNKB5R7W/3FUQHC5",
    );
    let resolver = StandIn::start(address, Confirmer::Cgi(f.root().to_path_buf()));
    let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
    f.write(
        "archive.toml",
        toml.replace(
            "http://placeholder.invalid/J8LNKB5R7W/3FUQHC5",
            &resolver.url(),
        )
        .as_bytes(),
    );
    let (code, out, err) = run("include", &f, &[]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            0,
            "status.archive included\nstatus.confirmation successful\n",
            ""
        )
    );
    assert_eq!(resolver.confirmations(), [true]);
}

#[test]
fn failures_say_what_happened_without_the_key() {
    let resolver = StandIn::start("localhost:8080".into(), Confirmer::Http);

    // A key the resolver does not know.
    let f = archive("localhost:8080", "1234567890-1111111111", &resolver.url());
    let (code, out, err) = run("include", &f, &[]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            1,
            "error {unknown archive or wrong registration key}\n",
            &*format!("ibi-archive: include: the resolver at {} did not answer status.archive included (it answered: error {{unknown archive or wrong registration key}})\n", resolver.url())
        )
    );
    assert!(!err.contains("1111111111"));
    assert_eq!(resolver.requests().len(), 1);

    // A request the resolver refuses (an address it does not expect): not 200.
    let f = archive("localhost:9090", KEY, &resolver.url());
    let (code, out, err) = run("exclude", &f, &[]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            1,
            "",
            &*format!("ibi-archive: exclude: the resolver at {} answered 400 Bad Request: error {{malformed request}}\n", resolver.url())
        )
    );
    assert_eq!(resolver.requests().len(), 2);

    // No resolver at all.
    let nowhere = format!("http://127.0.0.1:{}/J8LNKB5R7W/3FUQHC5", closed_port());
    let f = archive("localhost:8080", KEY, &nowhere);
    let (code, out, err) = run("include", &f, &[]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            1,
            "",
            &*format!("ibi-archive: include: cannot reach the resolver at {nowhere}: the connection failed\n")
        )
    );

    // A resolver whose host name does not resolve (.invalid never does, RFC 6761); its
    // key would cross a network in clear, which include says first.
    let unnamed = "http://no-such-host.invalid/J8LNKB5R7W/3FUQHC5";
    let f = archive("localhost:8080", KEY, unnamed);
    let (code, out, err) = run("include", &f, &[]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            1,
            "",
            &*format!("ibi-archive: include: warning: the registration key for {unnamed} crosses the network in clear (http): whoever reads it on the way can include this Archive at another address there; reach that resolver through a TLS tunnel (the administrator's guide, \"Joining resolvers\")\nibi-archive: include: cannot reach the resolver at {unnamed}: its host name does not resolve\n")
        )
    );
    // exclude sends it the same way, without saying so again.
    let (code, out, err) = run("exclude", &f, &[]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            1,
            "",
            &*format!("ibi-archive: exclude: cannot reach the resolver at {unnamed}: its host name does not resolve\n")
        )
    );

    // A key that breaks rule chave: refused before anything is sent.
    for bad in ["12345-abc", "123456789", "1234567890-", "1234567890 "] {
        let f = archive("localhost:8080", bad, &resolver.url());
        let (code, out, err) = run("include", &f, &[]);
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (
                1,
                "",
                "ibi-archive: include: registration.key in archive.toml does not follow rule chave of Table 7.1 (10 or more digits, optionally '-' and 10 or more digits); nothing was sent\n"
            ),
            "{bad}"
        );
        assert!(!err.contains(bad.trim()), "{err}");
    }
    // Other fields of [registration], checked too.
    let f = archive("localhost:8080", KEY, &resolver.url());
    let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
    f.write(
        "archive.toml",
        toml.replace(EMAIL, "archive-admin").as_bytes(),
    );
    let (code, _, err) = run("include", &f, &[]);
    assert_eq!(
        (code, err.as_str()),
        (1, "ibi-archive: include: registration.adminemail \"archive-admin\" is not an e-mail address such as banon@dpi.inpe.br\n")
    );
    f.write(
        "archive.toml",
        toml.replace("ip = \"127.0.0.1\"", "ip = \"localhost\"")
            .as_bytes(),
    );
    let (code, _, err) = run("include", &f, &[]);
    assert_eq!(
        (code, err.as_str()),
        (
            1,
            "ibi-archive: include: registration.ip \"localhost\" is not an IPv4 or IPv6 address\n"
        )
    );
    f.write("archive.toml", toml.as_bytes());
    let (code, _, err) = run(
        "include",
        &f,
        &["--resolver", "https://urlib.net/J8LNKB5R7W/3FUQHC5"],
    );
    assert_eq!(
        (code, err.as_str()),
        (1, "ibi-archive: include: resolver https://urlib.net/J8LNKB5R7W/3FUQHC5: https is not supported by this build; use the resolver's http:// address\n")
    );
    let (code, _, err) = run("include", &f, &["--bogus"]);
    assert_eq!(
        (code, err.as_str()),
        (
            2,
            "ibi-archive: include: unexpected argument --bogus; see ibi-archive include --help\n"
        )
    );
    // Nothing of the refused runs reached the resolver.
    assert_eq!(resolver.requests().len(), 2);
}

/// A resolver answering `429` (its line of key checks from the Archive's network full)
/// or `503` (its registry out of reach) with `Retry-After` is asked again after the time
/// it asks, one line on stderr each time, 5 times in all; without `Retry-After`, the
/// failure is the command's at once.
#[test]
fn include_asks_again_after_the_time_a_busy_resolver_asks_and_gives_up_after_five_tries() {
    let served_at = |busy: Busy| {
        let f = archive(
            "localhost:8080",
            KEY,
            "http://unused.invalid/J8LNKB5R7W/3FUQHC5",
        );
        let served = Serve::start(f.root(), Stdio::null());
        set_address(&f, "localhost:8080", &served.address);
        let resolver = StandIn::start_busy(served.address.clone(), Confirmer::Http, busy);
        (f, served, resolver)
    };
    let retried = |url: &str, body: &str, status: &str, seconds: u64, next: u32| {
        format!("ibi-archive: include: the resolver at {url} answered {status}: {body}; asking again in {seconds} s (try {next} of 5)\n")
    };

    // Two 429s asking for 2 s, then the inclusion.
    let busy = Busy {
        status: 429,
        retry_after: Some(2),
        refused: |n| n <= 2,
    };
    let (f, _served, resolver) = served_at(busy);
    let (code, out, err) = run("include", &f, &["--resolver", &resolver.url()]);
    let url = resolver.url();
    let too_many = "429 Too Many Requests";
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            0,
            "status.archive included\nstatus.confirmation successful\n",
            &*format!(
                "{}{}",
                retried(&url, busy.body(), too_many, 2, 2),
                retried(&url, busy.body(), too_many, 2, 3)
            )
        )
    );
    assert_eq!(resolver.requests().len(), 3);
    assert_eq!(resolver.confirmations(), [true]);
    let gaps = resolver.gaps();
    assert!(
        gaps.iter().all(|g| *g >= Duration::from_secs(2)),
        "{gaps:?}"
    );

    // A 503 asking for 1 s, then the exclusion.
    let busy = Busy {
        status: 503,
        retry_after: Some(1),
        refused: |n| n == 1,
    };
    let (f, _served, resolver) = served_at(busy);
    let url = resolver.url();
    let (code, out, err) = run("exclude", &f, &["--resolver", &url]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            0,
            "status.archive excluded\n",
            &*format!("ibi-archive: exclude: the resolver at {url} answered 503 Service Unavailable: {}; asking again in 1 s (try 2 of 5)\n", busy.body())
        )
    );
    assert_eq!(resolver.requests().len(), 2);

    // Busy for good (asking for 0 s: a second): five tries, then the command gives up.
    let busy = Busy {
        status: 429,
        retry_after: Some(0),
        refused: |_| true,
    };
    let (f, _served, resolver) = served_at(busy);
    let url = resolver.url();
    let (code, out, err) = run("include", &f, &["--resolver", &url]);
    let mut want: String = (2..=5)
        .map(|next| retried(&url, busy.body(), too_many, 1, next))
        .collect();
    want.push_str(&format!(
        "ibi-archive: include: the resolver at {url} answered {too_many}: {}; given up after 5 tries\n",
        busy.body()
    ));
    assert_eq!((code, out.as_str(), err.as_str()), (1, "", want.as_str()));
    assert_eq!(resolver.requests().len(), 5);
    assert!(resolver.confirmations().is_empty());

    // A 429 that does not say when to come back: not asked again.
    let busy = Busy {
        status: 429,
        retry_after: None,
        refused: |_| true,
    };
    let (f, _served, resolver) = served_at(busy);
    let url = resolver.url();
    let (code, out, err) = run("include", &f, &["--resolver", &url]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            1,
            "",
            &*format!(
                "ibi-archive: include: the resolver at {url} answered {too_many}: {}\n",
                busy.body()
            )
        )
    );
    assert_eq!(resolver.requests().len(), 1);
}

/// `serve`'s automatic inclusion pauses as long as a `429` asks (3 s), not its own first
/// pause (1 s), and says so in its log; so does its exclusion, when a try still fits in
/// the 5 s it has after the signal.
#[test]
fn serve_pauses_as_long_as_the_resolver_asks_before_it_asks_again() {
    let address = format!("127.0.0.1:{}", closed_port());
    let f = archive(
        &address,
        KEY,
        "http://placeholder.invalid/J8LNKB5R7W/3FUQHC5",
    );
    // The first inclusion request and the first exclusion request refused.
    let busy = Busy {
        status: 429,
        retry_after: Some(3),
        refused: |n| n == 1 || n == 3,
    };
    let resolver = StandIn::start_busy(address.clone(), Confirmer::Http, busy);
    let url = resolver.url();
    let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
    f.write(
        "archive.toml",
        toml.replace("http://placeholder.invalid/J8LNKB5R7W/3FUQHC5", &url)
            .as_bytes(),
    );
    let log = f.root().with_extension("log");
    let mut serve = Serve::start_including(
        f.root(),
        std::fs::File::create(&log).unwrap(),
        &["--listen", &address],
    );
    let included = format!(
        "ibi-archive: inclusion in {url}: status.archive included, status.confirmation successful"
    );
    let text = || std::fs::read_to_string(&log).unwrap_or_default();
    let deadline = Instant::now() + common::HANG_GUARD;
    while !text().lines().any(|l| l == included) {
        assert!(Instant::now() < deadline, "not included:\n{}", text());
        std::thread::sleep(Duration::from_millis(20));
    }
    serve.signal("TERM");
    let status = serve.wait("SIGTERM");
    assert!(status.success(), "{status}\n{}", text());
    let lines: Vec<String> = text()
        .lines()
        .filter(|l| {
            l.starts_with("ibi-archive: inclusion") || l.starts_with("ibi-archive: exclusion")
        })
        .map(str::to_string)
        .collect();
    let refused = format!(
        "failed: the resolver at {url} answered 429 Too Many Requests: {}; next try in 3 s, as the resolver asked",
        busy.body()
    );
    assert_eq!(
        lines,
        [
            format!("ibi-archive: inclusion in {url} {refused}"),
            included,
            format!("ibi-archive: exclusion from {url} {refused}"),
            format!("ibi-archive: exclusion from {url}: status.archive excluded"),
        ]
    );
    let requests = resolver.requests();
    assert_eq!(requests.len(), 4);
    assert!(requests[2].starts_with("servicesubject=exclusionRequest&"));
    let gaps = resolver.gaps();
    assert!(
        gaps[0] >= Duration::from_secs(3) && gaps[2] >= Duration::from_secs(3),
        "{gaps:?}"
    );
    for part in KEY.split('-') {
        assert!(!text().contains(part), "the key is in the log:\n{}", text());
    }
}

/// Keys of two resolvers, each registered with the Archive under a key of its own.
const KEY_A: &str = "1111111111-2222222222";
const KEY_B: &str = "3333333333-4444444444";

/// With `[[registration.resolver]]` tables, `include` and `exclude` send each resolver
/// its own key and no other's (a resolver that took the other's key would refuse it);
/// `--resolver` takes the key of that URL's table, and a URL without one is refused
/// before anything is sent. Neither key is printed.
#[test]
fn each_resolver_is_sent_its_own_key() {
    let served_root = archive(
        "localhost:8080",
        KEY,
        "http://unused.invalid/J8LNKB5R7W/3FUQHC5",
    );
    let served = Serve::start(served_root.root(), Stdio::null());
    let a = StandIn::start_keyed(served.address.clone(), Confirmer::Http, KEY_A);
    let b = StandIn::start_keyed(served.address.clone(), Confirmer::Http, KEY_B);
    let f = archive(&served.address, KEY, &a.url());
    // The one key and the one resolver become a table for each resolver.
    let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
    let toml = toml
        .replace(&format!("key = \"{KEY}\"\n"), "")
        .replace(&format!("resolver        = \"{}\"", a.url()), "")
        + &format!(
            "\n[[registration.resolver]]\nurl = \"{}\"\nkey = \"{KEY_A}\"\n\n[[registration.resolver]]\nurl = \"{}\"\nkey = \"{KEY_B}\"\n",
            a.url(),
            b.url()
        );
    assert!(!toml.contains(KEY), "{toml}");
    f.write("archive.toml", toml.as_bytes());
    let run_keyed = |cmd: &str, extra: &[&str]| {
        let (code, out, err) = run(cmd, &f, extra);
        for key in [KEY_A, KEY_B] {
            for part in key.split('-') {
                assert!(
                    !out.contains(part) && !err.contains(part),
                    "a key leaked: {out}{err}"
                );
            }
        }
        (code, out, err)
    };
    let (code, out, err) = run_keyed("include", &[]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            0,
            &*format!(
                "{a}: status.archive included\n{a}: status.confirmation successful\n{b}: status.archive included\n{b}: status.confirmation successful\n",
                a = a.url(),
                b = b.url()
            ),
            ""
        )
    );
    let (code, out, _) = run_keyed("exclude", &[]);
    assert_eq!(code, 0, "{out}");
    let (code, out, _) = run_keyed("include", &["--resolver", &b.url()]);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "status.archive included\nstatus.confirmation successful\n"
        )
    );
    let key_sent = |requests: Vec<String>| -> Vec<String> {
        requests
            .iter()
            .map(|q| q.rsplit_once("registrationkey=").unwrap().1.to_string())
            .collect()
    };
    assert_eq!(key_sent(a.requests()), [KEY_A, KEY_A]);
    assert_eq!(key_sent(b.requests()), [KEY_B, KEY_B, KEY_B]);
    // A resolver without a table of its own is sent neither key.
    let other = format!("http://127.0.0.1:{}/J8LNKB5R7W/3FUQHC5", closed_port());
    let (code, out, err) = run_keyed("include", &["--resolver", &other]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            1,
            "",
            &*format!("ibi-archive: include: resolver {other}: archive.toml has no key for it: each resolver's key is in its [[registration.resolver]] table, and none has this url; nothing was sent\n")
        )
    );
    assert_eq!((a.requests().len(), b.requests().len()), (2, 3));
}
