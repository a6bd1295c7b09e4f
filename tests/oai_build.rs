//! The OAI-PMH data provider never walks col/ for a request: without its index (an Archive
//! filled by dropping directories into col/, before any `check`), a list answers `503`
//! with `Retry-After` at once while one build runs apart from the requests (a child
//! process of the CGI, detached; a thread of `serve`), and lists answer from the index once
//! it is there; an item dropped by hand into an Archive with an index is listed once the
//! index has been built again (col/'s stamp told it changed), the old index answered
//! meanwhile, under `serve`, the CGI, Apache and lighttpd; where var/ cannot be written, a list is a `503` with one line in the error
//! log, and a urlRequest is answered as ever, writing nothing. A format no record has is
//! `cannotDisseminateFormat`, with or without an index to begin with.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{http_get, output_or_hang, parse_cgi, run_cmd, Cgi, CgiOutput, Serve};

/// How long a build of the test's Archives may take, at most (a few seconds: col/ must
/// first settle for 2 s).
const BUILD_DEADLINE: Duration = Duration::from_secs(60);
/// Metadata items written by hand into the test Archive, besides the sample's four.
const BY_HAND: usize = 1500;
const LIST: &str = "verb=ListIdentifiers&metadataPrefix=oai_dc";
const SERVICE: &str = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17";

fn dc(title: &str) -> String {
    format!("<oai_dc:dc xmlns:oai_dc=\"http://www.openarchives.org/OAI/2.0/oai_dc/\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:title>{title}</dc:title></oai_dc:dc>\n")
}

/// A metadata item written by hand at `rep`, dated `timestamp`.
fn write_record(root: &Path, rep: &str, timestamp: &str) {
    let dir = root.join("col").join(rep);
    std::fs::create_dir_all(dir.join("doc")).unwrap();
    std::fs::write(dir.join("doc/oai_dc.xml"), dc(rep)).unwrap();
    std::fs::write(
        dir.join("item.toml"),
        format!("state = \"Original\"\ntimestamp = {timestamp}\ncontenttype = \"Metadata\"\n[formats]\noai_dc = \"oai_dc.xml\"\n"),
    )
    .unwrap();
}

/// The sample Archive with [`BY_HAND`] metadata items dropped into col/, and no index.
fn archive() -> (tempfile::TempDir, PathBuf) {
    let tmp = common::archive_tempdir();
    let root = tmp.path().join("archive");
    common::copy_sample(&root);
    for i in 0..BY_HAND {
        let rep = format!(
            "example.org/hand/{}/01.01.{:02}.{:02}",
            2001 + i / 60 / 24 % 20,
            i / 60 % 24,
            i % 60
        );
        write_record(
            &root,
            &rep,
            &format!("2020-01-01T00:{:02}:{:02}Z", i / 60 % 60, i % 60),
        );
    }
    assert!(!root.join("var/oai-records").exists());
    (tmp, root)
}

/// The `completeListSize` of a list's first page.
fn list_size(xml: &str) -> Option<usize> {
    xml.split("completeListSize=\"")
        .nth(1)?
        .split('"')
        .next()?
        .parse()
        .ok()
}

fn is_503(r: &CgiOutput) -> bool {
    r.status == 503
        && r.header("Retry-After")
            .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        && r.text()
            == format!(
                "the index of this Archive's records is being built: try again in {} s\n",
                r.header("Retry-After").unwrap()
            )
}

/// The CGI answering `qs` until it answers 200 (each answer before a 503 of the build),
/// within [`BUILD_DEADLINE`].
fn cgi_until_built(root: &Path, qs: &str) -> CgiOutput {
    let deadline = Instant::now() + BUILD_DEADLINE;
    loop {
        let r = Cgi::get(root, qs).run();
        if r.status == 200 {
            return r;
        }
        assert!(is_503(&r), "{} {:?}\n{}", r.status, r.headers, r.text());
        assert!(
            Instant::now() < deadline,
            "the index was not built within {BUILD_DEADLINE:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Six harvesters at once on an Archive without an index: each is answered `503` with
/// `Retry-After` (none walks col/), one of them begins the one build (one line in the
/// log, the others none), and once it is done the lists are those of every record, the
/// hand-made ones too.
#[test]
fn without_the_index_lists_answer_503_at_once_while_one_build_runs_apart() {
    let (_tmp, root) = archive();
    let children: Vec<_> = (0..6)
        .map(|_| {
            Cgi::get(&root, LIST)
                .command()
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let answers: Vec<CgiOutput> = children
        .into_iter()
        .map(|c| {
            let out = output_or_hang(c, "a CGI run");
            parse_cgi(
                &out.stdout,
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        })
        .collect();
    for r in &answers {
        assert!(
            is_503(r),
            "{} {:?}\n{}{}",
            r.status,
            r.headers,
            r.text(),
            r.stderr
        );
    }
    let begun: Vec<&str> = answers.iter().flat_map(|r| r.stderr.lines()).collect();
    assert_eq!(begun.len(), 1, "{begun:?}");
    assert!(
        begun[0].ends_with("/var/oai-records: absent or unreadable: it is built apart from the request, and lists answer 503 meanwhile"),
        "{begun:?}"
    );
    let r = cgi_until_built(&root, LIST);
    assert_eq!(list_size(&r.text()), Some(4 + BY_HAND), "{}", r.text());
    // The index the provider wrote is the one check writes.
    let built = std::fs::read_to_string(root.join("var/oai-records")).unwrap();
    let (code, out, err) = run_cmd(&["check", "--root", root.to_str().unwrap()]);
    assert!(code <= 1, "{out}{err}");
    assert_eq!(
        std::fs::read_to_string(root.join("var/oai-records")).unwrap(),
        built
    );
}

/// How a test asks the Archive: a query string in, the status and body out.
type Ask<'a> = &'a dyn Fn(&str) -> (u16, String);

/// The Archive of [`archive`] with the index `check` writes.
fn checked_archive() -> (tempfile::TempDir, PathBuf) {
    let (tmp, root) = archive();
    std::fs::create_dir(root.join("var")).unwrap();
    let (code, out, err) = run_cmd(&["check", "--root", root.to_str().unwrap()]);
    assert!(code <= 1, "{out}{err}");
    assert!(root.join("var/oai-records").is_file());
    (tmp, root)
}

/// Items dropped by hand into the Archive at `root`, whose index `check` wrote, asked
/// through `ask`: listed once the provider has built the index again, apart from the
/// requests, every answer meanwhile a list from the index as it was (200, never 503,
/// never a walk).
fn dropped_items_are_listed(root: &Path, ask: Ask<'_>, log: &dyn Fn() -> String) {
    // A new year of a new prefix, and one more item in a year already there.
    let dropped = [
        "example.net/dropped/2024/05.06.07.08",
        "example.org/hand/2001/02.02.00.00",
    ];
    for rep in dropped {
        write_record(root, rep, "2024-05-06T07:08:00Z");
    }
    common::make_world_readable(&root.join("col"));
    let since = format!("{LIST}&from=2024-01-01");
    let deadline = Instant::now() + BUILD_DEADLINE;
    loop {
        let (status, text) = ask(&since);
        assert_eq!(status, 200, "{text}\n{}", log());
        if dropped.iter().all(|rep| text.contains(rep)) {
            break;
        }
        assert!(text.contains("<error code=\"noRecordsMatch\">"), "{text}");
        assert!(
            Instant::now() < deadline,
            "not listed within {BUILD_DEADLINE:?}\n{}",
            log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (_, all) = ask(LIST);
    assert_eq!(list_size(&all), Some(4 + BY_HAND + 2), "{all}");
}

/// [`dropped_items_are_listed`] under `serve` (the build on a thread).
#[test]
fn serve_lists_an_item_dropped_by_hand_once_the_index_is_built_again() {
    let (_tmp, root) = checked_archive();
    let log_path = root.parent().unwrap().join("serve.log");
    let serve = Serve::start(&root, std::fs::File::create(&log_path).unwrap());
    let ask = |qs: &str| {
        let r = http_get(&format!("{}/{SERVICE}?{qs}", serve.base_url()));
        (r.status, r.text())
    };
    dropped_items_are_listed(&root, &ask, &|| {
        std::fs::read_to_string(&log_path).unwrap_or_default()
    });
}

/// [`dropped_items_are_listed`] by the CGI (the build in a child process).
#[test]
fn the_cgi_lists_an_item_dropped_by_hand_once_the_index_is_built_again() {
    let (_tmp, root) = checked_archive();
    let ask = |qs: &str| {
        let r = Cgi::get(&root, qs).run();
        (r.status, r.text())
    };
    dropped_items_are_listed(&root, &ask, &String::new);
}

/// [`dropped_items_are_listed`] under Apache and lighttpd, as the cgi-bin configurations
/// run the program (as www-data when the tests run as root), var/ www-data's as the
/// README says but var/items.lock left root's (mode 644) by an administrator's command.
fn under_a_web_server(apache: bool) {
    let (_tmp, root) = checked_archive();
    common::prepare_archive(&root);
    if common::running_as_root() {
        std::os::unix::fs::chown(root.join("var/items.lock"), Some(0), Some(0)).unwrap();
    }
    let bin = common::ibi_archive_bin();
    let server = if apache {
        common::start_apache2(&root, &bin, SERVICE)
    } else {
        common::start_lighttpd(&root, &bin, SERVICE)
    };
    let ask = |qs: &str| {
        let r = http_get(&server.url(&format!("/{SERVICE}?{qs}")));
        (r.status, r.text())
    };
    dropped_items_are_listed(&root, &ask, &|| server.error_log());
}

#[test]
fn apache2_lists_an_item_dropped_by_hand_once_the_index_is_built_again() {
    if !common::apache2_available() {
        eprintln!("skipping: apache2 with mod_cgid is not installed");
        return;
    }
    under_a_web_server(true);
}

#[test]
fn lighttpd_lists_an_item_dropped_by_hand_once_the_index_is_built_again() {
    if !common::lighttpd_available() {
        eprintln!("skipping: lighttpd is not installed");
        return;
    }
    under_a_web_server(false);
}

/// Where var/ cannot be written (here its lock file cannot be opened: a directory holds
/// its name), no index can be built: a list is a `503` with one line in the error log
/// saying why, and a urlRequest is answered as ever, and writes nothing.
#[test]
fn where_no_index_can_be_built_a_list_is_a_503_and_a_url_request_is_unaffected() {
    let tmp = common::archive_tempdir();
    let root = tmp.path().join("archive");
    common::copy_sample(&root);
    std::fs::create_dir_all(root.join("var/oai-records.lock")).unwrap();
    let url = "servicesubject=urlRequest&clientinformation.ipaddress=127.0.0.1&parsedibiurl.ibi=iconet.com.br/banon/2009/09.09.22.01";
    // archive.toml's snapshot aside: it is written once archive.toml has settled, seconds
    // after the copy, whichever request comes then (and its own tests are elsewhere).
    let listing = |var: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(var)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "archive.toml.snapshot")
            .collect();
        names.sort();
        names
    };
    // The urlkey secret, made by the first answer with a URL.
    let first = Cgi::get(&root, url).run();
    assert_eq!(first.status, 200, "{}", first.stderr);
    let before = listing(&root.join("var"));
    for _ in 0..2 {
        let r = Cgi::get(&root, LIST).run();
        assert_eq!(
            (r.status, r.header("Retry-After")),
            (503, Some("3600")),
            "{}",
            r.text()
        );
        let lines: Vec<&str> = r.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("/var/oai-records: absent, and it cannot be built here: ")
                && lines[0].contains("/var/oai-records.lock: Is a directory")
                && lines[0].ends_with(
                    "lists answer 503 until ibi-archive check writes it where var/ can be written"
                ),
            "{lines:?}"
        );
        let r = Cgi::get(&root, url).run();
        assert_eq!(r.status, 200);
        assert!(
            r.text().contains(
                "\r\nurl http://localhost:8080/col/iconet.com.br/banon/2009/09.09.22.01/doc/"
            ),
            "{}",
            r.text()
        );
        assert_eq!(r.stderr, "");
    }
    assert_eq!(listing(&root.join("var")), before);
    // Bad arguments and tokens are told as ever: they need no index.
    for (qs, code) in [
        (format!("{LIST}&from=yesterday"), "badArgument"),
        (format!("{LIST}&set=x"), "noSetHierarchy"),
        (
            "verb=ListIdentifiers&resumptionToken=2,I,oai_dc,-,-,-,1,5,1380897135,a.b/c/2013/01.01.00.00,00".to_string(),
            "badResumptionToken",
        ),
    ] {
        let r = Cgi::get(&root, &qs).run();
        assert_eq!(r.status, 200, "{qs}");
        assert!(r.text().contains(&format!("<error code=\"{code}\">")), "{qs}: {}", r.text());
    }
    // Identify and GetRecord need no index.
    let r = Cgi::get(&root, "verb=GetRecord&metadataPrefix=oai_dc&identifier=http://localhost:8090/sid.inpe.br/mtc-m19/2013/09.04.12.27.58").run();
    assert_eq!(r.status, 200);
    assert!(r.text().contains("<GetRecord>"), "{}", r.text());
}

/// A format no record of the Archive has is `cannotDisseminateFormat` (the protocol's
/// answer for a format the repository does not support), not `noRecordsMatch`: also
/// when there was no index to begin with (`query` builds it in the request).
#[test]
fn a_format_no_record_has_is_cannot_disseminate_format() {
    let tmp = common::archive_tempdir();
    let root = tmp.path().join("archive");
    common::copy_sample(&root);
    for qs in [
        "verb=ListRecords&metadataPrefix=marc21",
        "verb=ListIdentifiers&metadataPrefix=marc21",
        "verb=ListRecords&metadataPrefix=marc21&from=2000-01-01&until=2030-01-01",
    ] {
        let (code, out, err) = run_cmd(&["query", "--root", root.to_str().unwrap(), qs]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("<error code=\"cannotDisseminateFormat\">\"marc21\" is not a metadata format of this record or Archive</error>"),
            "{qs}: {out}"
        );
    }
    // A format the Archive has, in dates none of its records has: no record matches.
    let (_, out, _) = run_cmd(&[
        "query",
        "--root",
        root.to_str().unwrap(),
        "verb=ListRecords&metadataPrefix=oai_dc&until=2000-01-01",
    ]);
    assert!(out.contains("<error code=\"noRecordsMatch\">"), "{out}");
}
