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
//! configurations. Each case below is named in a failure; every case runs,
//! so one run shows every mismatch. The harness itself is tested in
//! tests/harness.rs.

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

/// One server's answers, checked case by case; every mismatch is collected, named after
/// its case, so one run shows all of them.
struct Check<'a> {
    server: &'a Server,
    kind: ServerKind,
    /// The Archive root, as the server sees it (no symbolic link in it).
    root: PathBuf,
    /// The case under way.
    case: &'static str,
    failures: Vec<String>,
}

impl<'a> Check<'a> {
    fn new(server: &'a Server, fx: &Fixture) -> Self {
        Check {
            server,
            kind: server.kind,
            root: fx.root.canonicalize().unwrap(),
            case: "",
            failures: Vec::new(),
        }
    }

    fn fail(&mut self, what: String) {
        self.failures.push(format!("[{}] {what}", self.case));
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

    /// What the program answers, run as the file route with REQUEST_URI `uri` and
    /// PATH_INFO `path_info`.
    fn file_answer(&self, uri: &[u8], path_info: &[u8]) -> Vec<u8> {
        let mut body = b"file uri=".to_vec();
        body.extend_from_slice(uri);
        body.extend_from_slice(b" path=");
        body.extend_from_slice(path_info);
        body.extend_from_slice(format!(" root={}\n", self.root.display()).as_bytes());
        body
    }

    /// The program ran for GET `target` as the file route: REQUEST_URI is `uri`, as the
    /// client sent it, and PATH_INFO `path_info` (decoded by the server).
    fn file(&mut self, target: &str, uri: &[u8], path_info: &[u8]) {
        let body = self.file_answer(uri, path_info);
        self.get(target, 200, Some("text/plain"), Some(&body));
    }

    /// The CGI script ran for GET `target` and saw these values.
    fn cgi(&mut self, target: &str, path_info: &[u8], query: &str) {
        let mut body = b"method=GET path=".to_vec();
        body.extend_from_slice(path_info);
        body.extend_from_slice(format!(" query={query} root={}\n", self.root.display()).as_bytes());
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

/// What a request to the service's URL comes to under one server.
enum Want {
    /// The program ran with this PATH_INFO and QUERY_STRING.
    Cgi(Vec<u8>, String),
    /// 404, and the program did not run.
    NotFound,
}

/// The program ran with this PATH_INFO and QUERY_STRING under both servers.
fn both(target: String, path_info: &[u8], query: &str) -> (String, Want, Want) {
    let want = || Want::Cgi(path_info.to_vec(), query.to_string());
    (target, want(), want())
}

/// One routing case: its name, and what it checks.
type Case = (&'static str, fn(&mut Check));

/// The routing cases, in the order they run: each checks what both configurations must
/// do, and spells out where the two servers differ.
const CASES: &[Case] = &[
    (
        "the service's URL and below run the program",
        service_routes,
    ),
    ("HEAD and POST reach the program", service_methods),
    ("the CGI environment", cgi_environment),
    ("the program's stderr reaches the log", cgi_stderr_logged),
    ("the items' files run the program", file_routes),
    ("ISO-8859-1 file names", latin1_file_names),
    ("nothing else of the Archive root", nothing_else),
];

/// `/<ibi>` and below run the program, with the query string and PATH_INFO it expects;
/// nothing beside them does.
fn service_routes(c: &mut Check) {
    let q = "servicesubject=inclusionConfirmationRequest";
    let table = [
        both(format!("/{IBI}?{q}"), b"", q),
        // lighttpd (Debian's url-normalize-required) rewrites the query string:
        // %40 arrives as '@'; %20 stays.  Apache passes it byte for byte.
        (
            format!("/{IBI}?servicesubject=x&note=a%20b@c&at=%40"),
            Want::Cgi(b"".to_vec(), "servicesubject=x&note=a%20b@c&at=%40".into()),
            Want::Cgi(b"".to_vec(), "servicesubject=x&note=a%20b@c&at=@".into()),
        ),
        both(
            format!("/{IBI}/filelist/{REP1}"),
            format!("/filelist/{REP1}").as_bytes(),
            "",
        ),
        (
            format!("/{IBI}/filelist/{REP1}?servicesubject=a%20b%40c"),
            Want::Cgi(
                format!("/filelist/{REP1}").into_bytes(),
                "servicesubject=a%20b%40c".into(),
            ),
            Want::Cgi(
                format!("/filelist/{REP1}").into_bytes(),
                "servicesubject=a%20b@c".into(),
            ),
        ),
        both(format!("/{IBI}/"), b"/", ""),
        // '@' sent as %40 in the path: decoded before matching and in PATH_INFO.
        both(format!("/{IBI_AT_ENCODED}"), b"", ""),
        both(
            format!("/{IBI_AT_ENCODED}/filelist/x%40y%20z"),
            b"/filelist/x@y z",
            "",
        ),
        // PATH_INFO is decoded to raw bytes, not necessarily UTF-8.
        both(
            format!("/{IBI}/filelist/Relat%f3rio"),
            b"/filelist/Relat\xf3rio",
            "",
        ),
        // Only the IBI itself and what is below it; not a longer last segment,
        // not the IBI's parent.
        (format!("/{IBI}x"), Want::NotFound, Want::NotFound),
        (format!("/{IBI}.bak"), Want::NotFound, Want::NotFound),
        (
            "/sid.inpe.br/mtc-m18@80/2008/".to_string(),
            Want::NotFound,
            Want::NotFound,
        ),
        // An encoded slash in PATH_INFO: Apache refuses it (AllowEncodedSlashes
        // Off), lighttpd decodes it (Debian's url-path-2f-decode = enable).
        (
            format!("/{IBI}/a%2Fb"),
            Want::NotFound,
            Want::Cgi(b"/a/b".to_vec(), String::new()),
        ),
    ];
    for (target, apache2, lighttpd) in table {
        let want = match c.kind {
            ServerKind::Apache2 => apache2,
            ServerKind::Lighttpd => lighttpd,
        };
        match want {
            Want::Cgi(path_info, query) => c.cgi(&target, &path_info, &query),
            Want::NotFound => c.get(&target, 404, None, None),
        }
    }
}

/// HEAD and POST reach the program too (it answers 405 itself).
fn service_methods(c: &mut Check) {
    c.expect(
        "HEAD",
        &format!("/{IBI}?servicesubject=a%20b%40c"),
        200,
        Some("text/plain"),
        Some(b""),
    );
    let r = common::http_request_with_body(
        "POST",
        &c.server.url(&format!("/{IBI}")),
        &[("Content-Type", "application/x-www-form-urlencoded")],
        b"a=1&b=2",
    );
    let want = format!("method=POST path= query= root={}\n", c.root.display());
    if r.status != 200 || r.text() != want {
        c.fail(format!(
            "POST /{IBI}: {} {:?} instead of 200 {want:?}",
            r.status,
            r.text()
        ));
    }
}

/// The environment the program runs in.
fn cgi_environment(c: &mut Check) {
    let r = common::http_get(&c.server.url(&format!("/{IBI}/filelist/{REP1}?dumpenv")));
    let env = env_of(&r);
    let script_name = format!("/{IBI}");
    let path_info = format!("/filelist/{REP1}");
    let root_s = c.root.display().to_string();
    let port_s = c.server.port.to_string();
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
    match c.kind {
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
}

/// What the program writes to stderr reaches the server's log, verbatim.
fn cgi_stderr_logged(c: &mut Check) {
    common::http_get(&c.server.url(&format!("/{IBI}/log-line?n=1")));
    let want = "echo-cgi stderr: method=GET path=/log-line query=n=1";
    match c
        .server
        .wait_for_log_line("path=/log-line", Duration::from_secs(5))
    {
        Some(line) if line == want => {}
        other => c.fail(format!(
            "stderr line in the log: {other:?} instead of {want:?}"
        )),
    }
}

/// `/col/...` runs the program, with the request target as the client sent it in
/// REQUEST_URI and PATH_INFO decoded.
fn file_routes(c: &mut Check) {
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
        );
    }
    // '@' sent as %40: decoded in PATH_INFO, as sent in REQUEST_URI.
    let target = "/col/sid.inpe.br/mtc-m18%4080/2009/07.21.13.23/doc/ref.bib";
    c.file(
        target,
        target.as_bytes(),
        b"/sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/ref.bib",
    );
}

/// ISO-8859-1 names, escaped in either case or raw in the request line: REQUEST_URI as
/// sent, PATH_INFO with the byte.
fn latin1_file_names(c: &mut Check) {
    let d1 = format!("/col/{REP1}/doc");
    let mut latin1 = format!("/{REP1}/doc").into_bytes();
    latin1.extend_from_slice(b"/Relat\xf3rio Final.pdf");
    for spelled in ["Relat%f3rio%20Final.pdf", "Relat%F3rio%20Final.pdf"] {
        let target = format!("{d1}/{spelled}");
        c.file(&target, target.as_bytes(), &latin1);
    }
    let mut uri = format!("{d1}/Relat").into_bytes();
    uri.extend_from_slice(b"\xf3rio%20Final.pdf");
    let mut req = b"GET ".to_vec();
    req.extend_from_slice(&uri);
    req.extend_from_slice(b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    let r = common::http_raw(&c.server.authority(), &req, false);
    let want = c.file_answer(&uri, &latin1);
    if r.status != 200 || r.body != want {
        c.fail(format!(
            "raw ISO-8859-1 request line: {} {:?}",
            r.status,
            r.text()
        ));
    }
}

/// Nothing else of the Archive root is served: not archive.toml, var/, nor any file by
/// the server itself.
fn nothing_else(c: &mut Check) {
    let d1 = format!("/col/{REP1}/doc");
    for target in [
        "/archive.toml".to_string(),
        "/var/secret".to_string(),
        "/var/".to_string(),
        "/col/../archive.toml".to_string(),
        "/col/%2e%2e/archive.toml".to_string(),
        "/col/%2e%2e/var/secret".to_string(),
        "/colx/anything".to_string(),
        // Encoded slashes climbing out of /col/: Apache refuses them outright,
        // lighttpd decodes and normalises them to /archive.toml (not found).
        format!("{d1}/..%2f..%2f..%2f..%2f..%2f..%2farchive.toml"),
    ] {
        c.get(&target, 404, None, None);
    }
}

/// Starts `kind` over the fixture and runs every case of [`CASES`] against it.
fn check_routing(kind: ServerKind) {
    let fx = fixture();
    let server = match kind {
        ServerKind::Apache2 => common::start_apache2(&fx.root, &fx.script, IBI),
        ServerKind::Lighttpd => common::start_lighttpd(&fx.root, &fx.script, IBI),
    };
    let mut c = Check::new(&server, &fx);
    for (name, case) in CASES {
        c.case = name;
        case(&mut c);
    }
    c.finish();
}

#[test]
fn apache2_routes_service_and_documents() {
    if !common::apache2_available() {
        eprintln!("skipping: apache2 with mod_cgid (Debian package apache2) is not installed");
        return;
    }
    check_routing(ServerKind::Apache2);
}

#[test]
fn lighttpd_routes_service_and_documents() {
    if !common::lighttpd_available() {
        eprintln!("skipping: lighttpd with mod_cgi (Debian package lighttpd) is not installed");
        return;
    }
    check_routing(ServerKind::Lighttpd);
}
