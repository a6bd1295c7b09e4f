//! The web-server configurations of `cgi-bin/` route requests as the Archive
//! service needs, under the real apache2 and lighttpd of the machine:
//!
//! * `/<archiveserviceibi>` and everything below it run the CGI program, with
//!   the query string, PATH_INFO and IBI_ARCHIVE_ROOT it expects;
//! * `/col/...` runs the same program (SCRIPT_NAME `/col`), with the request
//!   target as the client sent it in REQUEST_URI, whatever the file names:
//!   the program decides what of an item may be served (tests/deploy_e2e.rs);
//! * nothing else of the Archive is served: not archive.toml, var/, nor any
//!   file of the Archive root by the server itself.
//!
//! The service itself is replaced by a small shell script that echoes what
//! it was given, so these tests check only the configurations.

mod common;

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{os, Response, Server, ServerKind};

const IBI: &str = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17";
/// The same IBI with its '@' percent-encoded.
const IBI_AT_ENCODED: &str = "sid.inpe.br/mtc-m18%4080/2008/03.17.15.17";
const REP1: &str = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23";
const REP2: &str = "dpi.inpe.br/banon/2000/01.23.15.59.30";

const LATIN1_PDF_NAME: &[u8] = b"Relat\xf3rio Final.pdf";
const LATIN1_PDF: &[u8] = b"%PDF-1.4\n% Relat\xf3rio Final\n%%EOF\n";
const CCSDS_PDF: &[u8] = b"%PDF-1.4\n% CCSDS 643.0-B-1\n%%EOF\n";
const BIB: &[u8] = b"@TechReport{x,\n  title = {Relat\xc3\xb3rio final},\n}\n";
const INDEX_HTML: &[u8] = b"<!DOCTYPE html>\n<title>item one</title>\n";
const XML: &[u8] = b"<?xml version=\"1.0\"?>\n<metadata/>\n";
const README: &[u8] = b"readme of item two\n";
const NESTED: &[u8] = b"nested file of item two\n";
// Markers that must never appear in any response.
const ITEM_TOML: &[u8] = b"[item]\nnote = \"SECRET-ITEM-METADATA\"\n";
const ARCHIVE_TOML: &[u8] = b"[archive]\nnote = \"SECRET-ARCHIVE-CONFIG\"\n";
const VAR_SECRET: &[u8] = b"SECRET-VAR-STATE\n";
const STRAY: &[u8] = b"SECRET-STRAY-FILE\n";
const SECRETS: &[&str] = &[
    "SECRET-ITEM-METADATA",
    "SECRET-ARCHIVE-CONFIG",
    "SECRET-VAR-STATE",
    "SECRET-STRAY-FILE",
    "root:x:0:0",
];

/// Stands in for ibi-archive.  It reads the request body first, as a CGI
/// program must under mod_cgid (see cgi-bin/README.md).  No PATH under
/// lighttpd, hence the absolute paths.
const CGI_SCRIPT: &str = r#"#!/bin/sh
if [ -n "$CONTENT_LENGTH" ] && [ "$CONTENT_LENGTH" -gt 0 ]; then
    /usr/bin/head -c "$CONTENT_LENGTH" > /dev/null
fi
printf 'smoke-cgi stderr: method=%s path=%s query=%s\n' "$REQUEST_METHOD" "$PATH_INFO" "$QUERY_STRING" >&2
printf 'Content-Type: text/plain\r\n\r\n'
if [ "$SCRIPT_NAME" = /col ]; then
    printf 'file uri=%s path=%s root=%s\n' "$REQUEST_URI" "$PATH_INFO" "$IBI_ARCHIVE_ROOT"
    exit 0
fi
printf 'method=%s path=%s query=%s root=%s\n' "$REQUEST_METHOD" "$PATH_INFO" "$QUERY_STRING" "$IBI_ARCHIVE_ROOT"
if [ "$QUERY_STRING" = dumpenv ]; then
    /usr/bin/env | /usr/bin/sort
fi
if [ "$QUERY_STRING" = slow ]; then
    /bin/sleep 0.5
    printf 'second part\n'
fi
"#;

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    script: PathBuf,
}

fn write(path: &Path, content: &[u8]) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, content).unwrap();
}

/// A small Archive, in a temporary directory the servers' user can read.
fn fixture() -> Fixture {
    let tmp = common::archive_tempdir();
    let root = tmp.path().join("archive");
    write(&root.join("archive.toml"), ARCHIVE_TOML);
    write(&root.join("var/secret"), VAR_SECRET);

    let item1 = root.join("col").join(REP1);
    write(&item1.join("item.toml"), ITEM_TOML);
    let doc1 = item1.join("doc");
    write(&doc1.join(os(LATIN1_PDF_NAME)), LATIN1_PDF);
    write(&doc1.join("CCSDS 643.0-B-1.pdf"), CCSDS_PDF);
    write(&doc1.join("ref.bib"), BIB);
    write(&doc1.join("index.html"), INDEX_HTML);
    write(&doc1.join("metadata.xml"), XML);
    // An item.toml where it does not belong is not served either.
    write(&doc1.join("item.toml"), ITEM_TOML);
    symlink("/etc/passwd", doc1.join("passwd.txt")).unwrap();
    symlink("/etc", doc1.join("etc")).unwrap();
    // A file outside doc/ with an ISO-8859-1 name.
    write(&item1.join(os(b"notas-\xe9.txt")), STRAY);

    let item2 = root.join("col").join(REP2);
    write(&item2.join("item.toml"), ITEM_TOML);
    write(&item2.join("doc/readme.txt"), README);
    write(&item2.join("doc/sub/notes.txt"), NESTED);

    common::prepare_archive(&root);

    let script = tmp.path().join("cgi/smoke-cgi");
    write(&script, CGI_SCRIPT.as_bytes());
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(script.parent().unwrap(), fs::Permissions::from_mode(0o755)).unwrap();
    Fixture {
        _tmp: tmp,
        root,
        script,
    }
}

/// Collects every mismatch, so one run shows all of them.
struct Check<'a> {
    server: &'a Server,
    failures: Vec<String>,
}

impl<'a> Check<'a> {
    fn new(server: &'a Server) -> Self {
        Check {
            server,
            failures: Vec::new(),
        }
    }

    fn fail(&mut self, what: String) {
        self.failures.push(what);
    }

    fn no_secrets(&mut self, target: &str, r: &Response) {
        let text = r.text();
        for s in SECRETS {
            if text.contains(s) {
                self.fail(format!("GET {target}: response contains {s:?}"));
            }
        }
    }

    /// `method target` answers `status`, with this content type (if given)
    /// and exactly this body (if given).
    fn expect(
        &mut self,
        method: &str,
        target: &str,
        status: u16,
        content_type: Option<&str>,
        body: Option<&[u8]>,
    ) -> Response {
        let r = common::http_request(method, &self.server.url(target));
        self.no_secrets(target, &r);
        if r.status != status {
            self.fail(format!(
                "{method} {target}: status {} instead of {status}; body {:?}",
                r.status,
                r.text()
            ));
        }
        if let Some(ct) = content_type {
            if r.content_type() != ct {
                self.fail(format!(
                    "{method} {target}: Content-Type {:?} instead of {ct:?}",
                    r.content_type()
                ));
            }
        }
        if let Some(body) = body {
            if r.body != body {
                self.fail(format!(
                    "{method} {target}: body {:?} instead of {:?}",
                    String::from_utf8_lossy(&r.body),
                    String::from_utf8_lossy(body)
                ));
            }
        }
        r
    }

    fn get(&mut self, target: &str, status: u16, ct: Option<&str>, body: Option<&[u8]>) {
        self.expect("GET", target, status, ct, body);
    }

    /// The program ran for GET `target` as the file route: REQUEST_URI is `uri`, as the
    /// client sent it, and PATH_INFO `path_info` (decoded by the server).
    fn file(&mut self, target: &str, uri: &[u8], path_info: &[u8], root: &Path) {
        let mut body = b"file uri=".to_vec();
        body.extend_from_slice(uri);
        body.extend_from_slice(b" path=");
        body.extend_from_slice(path_info);
        body.extend_from_slice(format!(" root={}\n", root.display()).as_bytes());
        self.get(target, 200, Some("text/plain"), Some(&body));
    }

    /// The CGI script ran for GET `target` and saw these values.
    fn cgi(&mut self, target: &str, path_info: &[u8], query: &str, root: &Path) {
        let mut body = b"method=GET path=".to_vec();
        body.extend_from_slice(path_info);
        body.extend_from_slice(format!(" query={query} root={}\n", root.display()).as_bytes());
        self.get(target, 200, Some("text/plain"), Some(&body));
    }

    fn finish(self) {
        if !self.failures.is_empty() {
            panic!(
                "{} under {}:\n  {}\n--- server log ---\n{}",
                self.failures.len(),
                self.server.kind.name(),
                self.failures.join("\n  "),
                self.server.error_log()
            );
        }
    }
}

fn env_of(r: &Response) -> Vec<(String, String)> {
    r.text()
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn env_var<'e>(env: &'e [(String, String)], name: &str) -> Option<&'e str> {
    env.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// Everything both configurations must do, plus the few places where the
/// two servers differ (each difference is spelt out).
fn check_routing(server: &Server, fx: &Fixture) {
    let kind = server.kind;
    let root = fx.root.canonicalize().unwrap();
    let mut c = Check::new(server);

    // --- The service: /<ibi> and below run the program. ------------------
    let q = "servicesubject=inclusionConfirmationRequest";
    c.cgi(&format!("/{IBI}?{q}"), b"", q, &root);
    // lighttpd (Debian's url-normalize-required) rewrites the query string:
    // %40 arrives as '@'; %20 stays.  Apache passes it byte for byte.
    let q = "servicesubject=x&note=a%20b@c&at=%40";
    let q_seen = match kind {
        ServerKind::Apache2 => q,
        ServerKind::Lighttpd => "servicesubject=x&note=a%20b@c&at=@",
    };
    c.cgi(&format!("/{IBI}?{q}"), b"", q_seen, &root);
    c.cgi(
        &format!("/{IBI}/filelist/{REP1}"),
        format!("/filelist/{REP1}").as_bytes(),
        "",
        &root,
    );
    let q = "servicesubject=a%20b%40c";
    let q_seen = match kind {
        ServerKind::Apache2 => q,
        ServerKind::Lighttpd => "servicesubject=a%20b@c",
    };
    c.cgi(
        &format!("/{IBI}/filelist/{REP1}?{q}"),
        format!("/filelist/{REP1}").as_bytes(),
        q_seen,
        &root,
    );
    c.cgi(&format!("/{IBI}/"), b"/", "", &root);
    // '@' sent as %40 in the path: decoded before matching and in PATH_INFO.
    c.cgi(&format!("/{IBI_AT_ENCODED}"), b"", "", &root);
    c.cgi(
        &format!("/{IBI_AT_ENCODED}/filelist/x%40y%20z"),
        b"/filelist/x@y z",
        "",
        &root,
    );
    // PATH_INFO is decoded to raw bytes, not necessarily UTF-8.
    c.cgi(
        &format!("/{IBI}/filelist/Relat%f3rio"),
        b"/filelist/Relat\xf3rio",
        "",
        &root,
    );
    // Only the IBI itself and what is below it; not a longer last segment,
    // not the IBI's parent.
    c.get(&format!("/{IBI}x"), 404, None, None);
    c.get(&format!("/{IBI}.bak"), 404, None, None);
    c.get("/sid.inpe.br/mtc-m18@80/2008/", 404, None, None);
    // An encoded slash in PATH_INFO: Apache refuses it (AllowEncodedSlashes
    // Off), lighttpd decodes it (Debian's url-path-2f-decode = enable).
    match kind {
        ServerKind::Apache2 => c.get(&format!("/{IBI}/a%2Fb"), 404, None, None),
        ServerKind::Lighttpd => c.cgi(&format!("/{IBI}/a%2Fb"), b"/a/b", "", &root),
    }
    // HEAD and POST reach the program too (it answers 405 itself).
    c.expect(
        "HEAD",
        &format!("/{IBI}?{q}"),
        200,
        Some("text/plain"),
        Some(b""),
    );
    let r = common::http_request_with_body(
        "POST",
        &server.url(&format!("/{IBI}")),
        &[("Content-Type", "application/x-www-form-urlencoded")],
        b"a=1&b=2",
    );
    let want = format!("method=POST path= query= root={}\n", root.display());
    if r.status != 200 || r.text() != want {
        c.fail(format!(
            "POST /{IBI}: {} {:?} instead of 200 {want:?}",
            r.status,
            r.text()
        ));
    }

    // The CGI environment.
    let r = common::http_get(&server.url(&format!("/{IBI}/filelist/{REP1}?dumpenv")));
    let env = env_of(&r);
    let script_name = format!("/{IBI}");
    let path_info = format!("/filelist/{REP1}");
    let root_s = root.display().to_string();
    let port_s = server.port.to_string();
    let mut expected: Vec<(&str, Option<&str>)> = vec![
        ("GATEWAY_INTERFACE", Some("CGI/1.1")),
        ("REQUEST_METHOD", Some("GET")),
        ("SCRIPT_NAME", Some(&script_name)),
        ("PATH_INFO", Some(&path_info)),
        ("QUERY_STRING", Some("dumpenv")),
        ("REMOTE_ADDR", Some("127.0.0.1")),
        ("SERVER_NAME", Some("127.0.0.1")),
        ("SERVER_PORT", Some(&port_s)),
        ("SERVER_PROTOCOL", Some("HTTP/1.1")),
        ("IBI_ARCHIVE_ROOT", Some(&root_s)),
    ];
    match kind {
        // Apache passes its own PATH on, and no CONTENT_LENGTH without a body.
        ServerKind::Apache2 => {
            expected.push((
                "PATH",
                Some("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
            ));
            expected.push(("CONTENT_LENGTH", None));
        }
        // lighttpd passes no PATH, and CONTENT_LENGTH=0 on a GET.
        ServerKind::Lighttpd => {
            expected.push(("PATH", None));
            expected.push(("CONTENT_LENGTH", Some("0")));
        }
    }
    for (name, want) in expected {
        let got = env_var(&env, name);
        if got != want {
            c.fail(format!(
                "CGI environment: {name}={got:?} instead of {want:?}"
            ));
        }
    }

    // What the program writes to stderr reaches the server's log, verbatim.
    common::http_get(&server.url(&format!("/{IBI}/log-line?n=1")));
    let want = "smoke-cgi stderr: method=GET path=/log-line query=n=1";
    match server.wait_for_log_line("path=/log-line", Duration::from_secs(5)) {
        Some(line) if line == want => {}
        other => c.fail(format!(
            "stderr line in the log: {other:?} instead of {want:?}"
        )),
    }

    // --- The items' files: the program, with the target as sent. -----------
    let d1 = format!("/col/{REP1}/doc");
    let d2 = format!("/col/{REP2}/doc");
    let path = |t: &str| t.strip_prefix("/col").unwrap().as_bytes().to_vec();
    for target in [
        format!("{d1}/CCSDS%20643.0-B-1.pdf"),
        format!("{d1}/ref.bib"),
        format!("{d1}/"),
        format!("{d2}/sub/notes.txt"),
        // What the program refuses still reaches it: it alone decides.
        format!("/col/{REP1}/item.toml"),
        format!("{d1}/passwd.txt"),
        "/col/".to_string(),
    ] {
        let decoded = percent_encoding::percent_decode_str(&target).collect::<Vec<u8>>();
        c.file(
            &target,
            target.as_bytes(),
            &path(&String::from_utf8(decoded).unwrap()),
            &root,
        );
    }
    // ISO-8859-1 names, escaped in either case or raw in the request line: REQUEST_URI
    // as sent, PATH_INFO with the byte.
    let mut latin1 = path(&d1);
    latin1.extend_from_slice(b"/Relat\xf3rio Final.pdf");
    for spelled in ["Relat%f3rio%20Final.pdf", "Relat%F3rio%20Final.pdf"] {
        let target = format!("{d1}/{spelled}");
        c.file(&target, target.as_bytes(), &latin1, &root);
    }
    let mut req = format!("GET {d1}/Relat").into_bytes();
    req.extend_from_slice(
        b"\xf3rio%20Final.pdf HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    );
    let r = common::http_raw(&server.authority(), &req, false);
    let mut want = format!("file uri={d1}/Relat").into_bytes();
    want.extend_from_slice(b"\xf3rio%20Final.pdf path=");
    want.extend_from_slice(&latin1);
    want.extend_from_slice(format!(" root={}\n", root.display()).as_bytes());
    if r.status != 200 || r.body != want {
        c.fail(format!(
            "raw ISO-8859-1 request line: {} {:?}",
            r.status,
            r.text()
        ));
    }
    // '@' sent as %40: decoded in PATH_INFO, as sent in REQUEST_URI.
    let target = "/col/sid.inpe.br/mtc-m18%4080/2009/07.21.13.23/doc/ref.bib";
    c.file(
        target,
        target.as_bytes(),
        b"/sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/ref.bib",
        &root,
    );

    // --- Nothing else of the Archive root. ----------------------------------
    for target in [
        "/archive.toml",
        "/var/secret",
        "/var/",
        "/col/../archive.toml",
        "/col/%2e%2e/archive.toml",
        "/col/%2e%2e/var/secret",
        "/colx/anything",
    ] {
        c.get(target, 404, None, None);
    }
    // Encoded slashes climbing out of /col/: Apache refuses them outright,
    // lighttpd decodes and normalises them to /archive.toml (not found).
    c.get(
        &format!("{d1}/..%2f..%2f..%2f..%2f..%2f..%2farchive.toml"),
        404,
        None,
        None,
    );

    c.finish();
}

/// Starts `kind`, runs [`check_routing`], stops it, and checks that none of
/// its processes is left.
fn run(kind: ServerKind) {
    let fx = fixture();
    let server = match kind {
        ServerKind::Apache2 => common::start_apache2(&fx.root, &fx.script, IBI),
        ServerKind::Lighttpd => common::start_lighttpd(&fx.root, &fx.script, IBI),
    };
    let pid = server.pid();
    let dir = server.dir().display().to_string();
    assert_eq!(
        server.pid_from_pid_file(),
        Some(pid),
        "{}",
        server.error_log()
    );
    check_routing(&server, &fx);
    drop(server);
    assert_eq!(common::living_processes_in_group(pid), Vec::<u32>::new());
    assert_eq!(common::processes_with_cmdline(&dir), Vec::<u32>::new());
}

#[test]
fn apache2_routes_service_and_documents() {
    if !common::apache2_available() {
        eprintln!("skipping: apache2 with mod_cgid (Debian package apache2) is not installed");
        return;
    }
    run(ServerKind::Apache2);
}

#[test]
fn lighttpd_routes_service_and_documents() {
    if !common::lighttpd_available() {
        eprintln!("skipping: lighttpd with mod_cgi (Debian package lighttpd) is not installed");
        return;
    }
    run(ServerKind::Lighttpd);
}

fn available_kinds() -> Vec<ServerKind> {
    let mut kinds = Vec::new();
    if common::apache2_available() {
        kinds.push(ServerKind::Apache2);
    }
    if common::lighttpd_available() {
        kinds.push(ServerKind::Lighttpd);
    }
    kinds
}

fn start(kind: ServerKind, fx: &Fixture) -> Server {
    match kind {
        ServerKind::Apache2 => common::start_apache2(&fx.root, &fx.script, IBI),
        ServerKind::Lighttpd => common::start_lighttpd(&fx.root, &fx.script, IBI),
    }
}

/// Several servers at once get distinct ports and directories, and all of
/// their processes are gone once they are dropped.
#[test]
fn parallel_servers_are_independent_and_fully_stopped() {
    let kinds = available_kinds();
    if kinds.is_empty() {
        eprintln!("skipping: neither apache2 nor lighttpd is installed");
        return;
    }
    let fx = fixture();
    let servers: Vec<Server> = std::thread::scope(|s| {
        let handles: Vec<_> = kinds
            .iter()
            .chain(kinds.iter())
            .map(|&kind| {
                let fx = &fx;
                s.spawn(move || start(kind, fx))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut ports: Vec<u16> = servers.iter().map(|s| s.port).collect();
    ports.sort();
    ports.dedup();
    assert_eq!(ports.len(), servers.len(), "ports {ports:?}");
    let root = fx.root.canonicalize().unwrap();
    for server in &servers {
        let r = common::http_get(&server.url("/"));
        assert_eq!(r.status, 200);
        assert_eq!(r.text(), "ibi-archive test server\n");
        let r = common::http_get(&server.url(&format!("/{IBI}?k={}", server.port)));
        assert_eq!(
            r.text(),
            format!(
                "method=GET path= query=k={} root={}\n",
                server.port,
                root.display()
            ),
            "{}",
            server.error_log()
        );
    }
    let groups: Vec<(u32, String)> = servers
        .iter()
        .map(|s| (s.pid(), s.dir().display().to_string()))
        .collect();
    for (pid, _) in &groups {
        assert!(
            !common::living_processes_in_group(*pid).is_empty(),
            "process group {pid} should be running"
        );
    }
    drop(servers);
    for (pid, dir) in groups {
        assert_eq!(common::living_processes_in_group(pid), Vec::<u32>::new());
        assert_eq!(common::processes_with_cmdline(&dir), Vec::<u32>::new());
        assert!(!Path::new(&dir).exists(), "{dir} should have been removed");
    }
}

/// A test that panics while a server runs still stops it (Drop on unwind).
#[test]
fn servers_are_stopped_when_a_test_panics() {
    let kinds = available_kinds();
    if kinds.is_empty() {
        eprintln!("skipping: neither apache2 nor lighttpd is installed");
        return;
    }
    let fx = fixture();
    for kind in kinds {
        let mut seen = None;
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let server = start(kind, &fx);
            seen = Some((server.pid(), server.dir().display().to_string()));
            panic!("deliberate panic with {} running", kind.name());
        }));
        assert!(result.is_err());
        let (pid, dir) = seen.expect("the server was started");
        assert_eq!(common::living_processes_in_group(pid), Vec::<u32>::new());
        assert_eq!(common::processes_with_cmdline(&dir), Vec::<u32>::new());
        assert!(!common::process_alive(pid));
    }
}

/// A response on a keep-alive connection is read to its end without
/// waiting for the server to close.  When the program pauses, Apache sends
/// what it has and switches to chunked transfer coding; when the program
/// answers at once it may set a Content-Length instead.  lighttpd collects
/// small responses and sets a Content-Length.
#[test]
fn keep_alive_response_is_read_to_its_end() {
    let kinds = available_kinds();
    if kinds.is_empty() {
        eprintln!("skipping: neither apache2 nor lighttpd is installed");
        return;
    }
    let fx = fixture();
    let root = fx.root.canonicalize().unwrap();
    for kind in kinds {
        let server = start(kind, &fx);
        for (query, tail) in [("fast", ""), ("slow", "second part\n")] {
            let req = format!("GET /{IBI}?{query} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
            let started = std::time::Instant::now();
            let r = common::http_raw(&server.authority(), req.as_bytes(), false);
            assert!(
                started.elapsed() < Duration::from_secs(3),
                "{}: waited for the connection to close",
                kind.name()
            );
            assert_eq!(r.status, 200);
            assert_eq!(
                r.text(),
                format!(
                    "method=GET path= query={query} root={}\n{tail}",
                    root.display()
                )
            );
            let te = r.header("transfer-encoding");
            let cl = r.header("content-length");
            match (kind, query) {
                // mod_cgid passes the output on as it comes.
                (ServerKind::Apache2, "slow") => {
                    assert_eq!(te, Some("chunked"), "apache2: {:?}", r.headers)
                }
                // lighttpd collects a small response and sets its length.
                (ServerKind::Lighttpd, "slow") => assert_eq!(
                    (te, cl),
                    (None, Some(r.body.len().to_string().as_str())),
                    "lighttpd: {:?}",
                    r.headers
                ),
                _ => assert!(
                    te == Some("chunked") || cl.is_some(),
                    "{}: no framing: {:?}",
                    kind.name(),
                    r.headers
                ),
            }
        }
    }
}

#[test]
fn chunked_bodies_are_decoded() {
    assert_eq!(
        common::decode_chunked(
            b"4\r\nWiki\r\n6;ext=1\r\npedia \r\nE\r\nin \r\n\r\nchunks.\r\n0\r\n\r\n"
        )
        .unwrap(),
        b"Wikipedia in \r\n\r\nchunks.".to_vec()
    );
    assert_eq!(
        common::decode_chunked(b"3\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n").unwrap(),
        b"abc".to_vec()
    );
    assert_eq!(
        common::decode_chunked(b"0\r\n\r\n").unwrap(),
        Vec::<u8>::new()
    );
    assert!(
        common::decode_chunked(b"3\r\nabc\r\n").is_err(),
        "no last chunk"
    );
    assert!(
        common::decode_chunked(b"3\r\nabcd\r\n0\r\n\r\n").is_err(),
        "size mismatch"
    );
    assert!(common::decode_chunked(b"zz\r\n").is_err(), "bad size");
}

#[test]
fn copy_tree_keeps_symlinks_and_latin1_names() {
    let tmp = common::archive_tempdir();
    let src = tmp.path().join("src");
    write(&src.join("a/b").join(os(b"Relat\xf3rio.txt")), b"x\n");
    symlink("/etc/passwd", src.join("a/link")).unwrap();
    let exe = src.join("run.sh");
    write(&exe, b"#!/bin/sh\n");
    fs::set_permissions(&exe, fs::Permissions::from_mode(0o700)).unwrap();
    let dst = tmp.path().join("dst");
    common::copy_tree(&src, &dst);
    assert_eq!(
        fs::read(dst.join("a/b").join(os(b"Relat\xf3rio.txt"))).unwrap(),
        b"x\n"
    );
    assert_eq!(
        fs::read_link(dst.join("a/link")).unwrap(),
        PathBuf::from("/etc/passwd")
    );
    common::make_world_readable(&dst);
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dst.join("run.sh")), 0o755);
    assert_eq!(mode(&dst.join("a/b")), 0o755);
    assert_eq!(
        mode(&dst.join("a/b").join(os(b"Relat\xf3rio.txt"))) & 0o444,
        0o444
    );
    // The link itself was not followed: /etc/passwd is untouched, and the
    // link is still a link.
    assert!(fs::symlink_metadata(dst.join("a/link"))
        .unwrap()
        .file_type()
        .is_symlink());
}
