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
//! it was given ([`common::ECHO_CGI`]), so these tests check only the
//! configurations. The harness itself is tested in tests/harness.rs.

mod common;

use std::fs;
use std::os::unix::fs::symlink;
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

    let script = common::write_echo_cgi(&tmp.path().join("cgi"));
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
    let want = "echo-cgi stderr: method=GET path=/log-line query=n=1";
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

/// Starts `kind` and runs [`check_routing`] against it.
fn run(kind: ServerKind) {
    let fx = fixture();
    let server = match kind {
        ServerKind::Apache2 => common::start_apache2(&fx.root, &fx.script, IBI),
        ServerKind::Lighttpd => common::start_lighttpd(&fx.root, &fx.script, IBI),
    };
    check_routing(&server, &fx);
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
