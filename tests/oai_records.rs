//! `var/oai-records`, the OAI-PMH data provider's index: written by `check` from its walk,
//! a line added by `new` and `delete`, the same file built by the provider itself when
//! there is none, and a token of the index good in the index built again. Through
//! `ibi-archive query`, which prints the CGI's body (and builds the index in the request).

use std::path::Path;

use common::run_cmd;

const HEADER: &str = "ibi-archive oai-records 1\nformats oai_dc\n";
/// The sample's four metadata items, by timestamp (the seconds worked out from each
/// item.toml's `timestamp`: 2013-10-04T14:32:15Z, 2014-04-04T17:36:01Z,
/// 2014-04-04T17:39:54Z, 2014-05-06T07:08:40Z).
const SAMPLE_LINES: &str = "\
1380897135 L sid.inpe.br/mtc-m19/2013/09.04.12.27.58 oai_dc
1396632961 L sid.inpe.br/mtc-m18/2012/07.12.18.08.49 oai_dc
1396633194 L sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47 oai_dc
1399360120 L sid.inpe.br/mtc-m19/2014/05.06.07.08.09 oai_dc
";

fn archive() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = common::archive_tempdir();
    let root = tmp.path().join("archive");
    common::copy_sample(&root);
    std::fs::create_dir_all(root.join("var")).unwrap();
    (tmp, root)
}

fn index(root: &Path) -> String {
    std::fs::read_to_string(root.join("var/oai-records")).unwrap()
}

fn check(root: &Path) {
    let (code, out, err) = run_cmd(&["check", "--root", root.to_str().unwrap()]);
    // The copy's var/ is root's, not the web server's user's: that fault only.
    assert!(code <= 1, "{out}{err}");
    assert!(!out.contains("item.toml"), "{out}");
}

/// The POSIX seconds of an item's `timestamp`.
fn timestamp(root: &Path, rep: &str) -> i64 {
    let text = std::fs::read_to_string(root.join("col").join(rep).join("item.toml")).unwrap();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("timestamp"))
        .unwrap();
    let value = line.trim_start().trim_start_matches('=').trim();
    chrono::DateTime::parse_from_rfc3339(value)
        .unwrap()
        .timestamp()
}

fn query(root: &Path, qs: &str) -> String {
    let (code, out, err) = run_cmd(&["query", "--root", root.to_str().unwrap(), qs]);
    assert_eq!(code, 0, "{err}");
    out
}

/// Each header of a list answer: (identifier, datestamp, deleted), and its token.
fn headers(xml: &str) -> (Vec<(String, String, bool)>, Option<String>) {
    let between = |s: &str, a: &str, b: &str| -> String {
        s.split(a)
            .nth(1)
            .unwrap()
            .split(b)
            .next()
            .unwrap()
            .to_string()
    };
    let headers = xml
        .split("<header")
        .skip(1)
        .map(|h| {
            (
                between(h, "<identifier>", "</identifier>"),
                between(h, "<datestamp>", "</datestamp>"),
                h.starts_with(" status=\"deleted\""),
            )
        })
        .collect();
    let token = xml
        .split("<resumptionToken")
        .nth(1)
        .and_then(|t| t.split_once('>'))
        .filter(|(attrs, _)| !attrs.ends_with('/'))
        .map(|(_, rest)| rest.split('<').next().unwrap().to_string());
    (headers, token)
}

/// Every header of a ListIdentifiers harvest, page by page.
fn harvest(root: &Path, first: &str) -> Vec<(String, String, bool)> {
    let mut all = Vec::new();
    let (mut page, mut token) = headers(&query(root, first));
    loop {
        all.append(&mut page);
        let Some(t) = token else { break };
        let qs = format!(
            "verb=ListIdentifiers&resumptionToken={}",
            percent_encoding::utf8_percent_encode(&t, percent_encoding::NON_ALPHANUMERIC)
        );
        (page, token) = headers(&query(root, &qs));
    }
    all
}

#[test]
fn check_writes_the_index_and_new_and_delete_add_their_lines() {
    let (_tmp, root) = archive();
    let r = root.to_str().unwrap();
    assert!(!root.join("var/oai-records").exists());
    check(&root);
    assert_eq!(index(&root), format!("{HEADER}{SAMPLE_LINES}"));

    // A new item with Dublin Core: its metadata item's line, appended.
    let file = root.join("report.txt");
    std::fs::write(&file, "report\n").unwrap();
    let pairs = common::pairs_of_run(&[
        "new",
        "--root",
        r,
        "--title",
        "A report",
        file.to_str().unwrap(),
    ]);
    let meta = pairs
        .iter()
        .find(|(n, _)| n == "metadata.rep")
        .map(|(_, v)| v.clone())
        .unwrap();
    let made = timestamp(&root, &meta);
    let added = format!("{made} L {meta} oai_dc\n");
    assert_eq!(index(&root), format!("{HEADER}{SAMPLE_LINES}{added}"));

    // Its metadata item deleted: a deleted record from then, appended.
    let (code, _, err) = run_cmd(&["delete", "--root", r, &meta]);
    assert_eq!(code, 0, "{err}");
    let removed = timestamp(&root, &meta);
    let deleted = format!("{removed} D {meta} oai_dc\n");
    assert_eq!(
        index(&root),
        format!("{HEADER}{SAMPLE_LINES}{added}{deleted}")
    );

    // The line before the deletion no longer says what the item says: skipped; the record
    // is answered once, deleted.
    let all = harvest(&root, "verb=ListIdentifiers&metadataPrefix=oai_dc");
    let ours: Vec<_> = all
        .iter()
        .filter(|(id, _, _)| id.ends_with(&meta) || id.contains(&ibip_of(&root, &meta)))
        .collect();
    assert_eq!(ours.len(), 1, "{all:?}");
    assert!(ours[0].2);
    assert_eq!(all.len(), 5);

    // check writes it again: one line per item.
    check(&root);
    assert_eq!(index(&root), format!("{HEADER}{SAMPLE_LINES}{deleted}"));
}

fn ibip_of(root: &Path, rep: &str) -> String {
    let text = std::fs::read_to_string(root.join("col").join(rep).join("item.toml")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("ibip"))
        .map(|v| {
            v.trim_start()
                .trim_start_matches('=')
                .trim()
                .trim_matches('"')
                .to_string()
        })
        .unwrap_or_else(|| rep.to_string())
}

/// Without the index (an Archive filled by hand, before any `check`), the provider builds
/// it itself (`query` builds in the request; a web server apart from it): the file
/// `check` writes, the hand-made item in it, the lists in its order with the size of the
/// list. A token names a place in any index of the Archive: once the index is gone and
/// built again, the harvest goes on from there.
#[test]
fn without_the_index_the_provider_builds_the_one_check_writes() {
    let (_tmp, root) = archive();
    let mut toml = std::fs::read_to_string(root.join("archive.toml")).unwrap();
    toml.push_str("\n[oai]\npage_size = 2\n");
    std::fs::write(root.join("archive.toml"), toml).unwrap();
    // A metadata item written by hand, before any index.
    let hand = root.join("col/example.org/hand/2020/01.01.00.00");
    std::fs::create_dir_all(hand.join("doc")).unwrap();
    std::fs::write(
        hand.join("doc/oai_dc.xml"),
        "<oai_dc:dc xmlns:oai_dc=\"http://www.openarchives.org/OAI/2.0/oai_dc/\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:title>By hand</dc:title></oai_dc:dc>\n",
    )
    .unwrap();
    std::fs::write(
        hand.join("item.toml"),
        "state = \"Original\"\ntimestamp = 2020-01-01T00:00:00Z\ncontenttype = \"Metadata\"\n[formats]\noai_dc = \"oai_dc.xml\"\n",
    )
    .unwrap();
    let list = "verb=ListIdentifiers&metadataPrefix=oai_dc";
    assert!(!root.join("var/oai-records").exists());

    // Built by the provider: by datestamp, with the size of the list.
    let first = query(&root, list);
    assert!(
        first.contains("<resumptionToken completeListSize=\"5\" cursor=\"0\">"),
        "{first}"
    );
    let built = index(&root);
    assert_eq!(
        built,
        format!("{HEADER}{SAMPLE_LINES}1577836800 L example.org/hand/2020/01.01.00.00 oai_dc\n")
    );
    let listed = harvest(&root, list);
    let dates: Vec<&str> = listed.iter().map(|(_, d, _)| d.as_str()).collect();
    assert_eq!(
        dates,
        [
            "2013-10-04T14:32:15Z",
            "2014-04-04T17:36:01Z",
            "2014-04-04T17:39:54Z",
            "2014-05-06T07:08:40Z",
            "2020-01-01T00:00:00Z",
        ]
    );
    assert_eq!(
        listed[4].0,
        "http://localhost:8090/example.org/hand/2020/01.01.00.00"
    );
    // check writes the same file.
    check(&root);
    assert_eq!(index(&root), built);
    // From a date: a binary search in the index, the two last records.
    let from = harvest(&root, &format!("{list}&from=2014-05-01"));
    assert_eq!(from.len(), 2, "{from:?}");

    // A token of the index, once the index is gone: the index built again, the harvest
    // goes on after the token's place.
    let (_, token) = headers(&first);
    std::fs::remove_file(root.join("var/oai-records")).unwrap();
    let qs = format!(
        "verb=ListIdentifiers&resumptionToken={}",
        percent_encoding::utf8_percent_encode(&token.unwrap(), percent_encoding::NON_ALPHANUMERIC)
    );
    let (next, _) = headers(&query(&root, &qs));
    assert_eq!(next, listed[2..4]);
}

/// curl's status line and body for a POST of `form` to `url`.
fn post(url: &str, form: &str) -> (u16, String) {
    let out = std::process::Command::new("curl")
        .args([
            "-s",
            "-o",
            "-",
            "-w",
            "\n%{http_code}",
            "--data-binary",
            "@-",
        ])
        .args(["-H", "Content-Type: application/x-www-form-urlencoded", url])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(form.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let (body, status) = text.rsplit_once('\n').unwrap();
    (status.parse().unwrap(), body.to_string())
}

/// OAI-PMH lets a harvester POST its arguments as a form: answered as the same GET,
/// through `serve`, Apache and lighttpd; any other POST is still refused.
#[test]
fn a_harvester_may_post_its_arguments() {
    let (_tmp, root) = archive();
    const SERVICE: &str = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17";
    let record = "verb=GetRecord&metadataPrefix=oai_dc&identifier=http%3A%2F%2Flocalhost%3A8090%2Fsid.inpe.br%2Fmtc-m18%4080%2F2009%2F07.21.13.23.47";
    let get = query(&root, record);
    let response_date = |s: &str| s.split("<responseDate>").nth(1).unwrap()[..20].to_string();
    let serve = common::Serve::start(&root, std::process::Stdio::null());
    let mut bases = vec![("serve", serve.base_url())];
    let apache = common::apache2_available()
        .then(|| common::start_apache2(&root, &common::ibi_archive_bin(), SERVICE));
    let lighttpd = common::lighttpd_available()
        .then(|| common::start_lighttpd(&root, &common::ibi_archive_bin(), SERVICE));
    for (name, server) in [("apache2", &apache), ("lighttpd", &lighttpd)] {
        match server {
            Some(s) => bases.push((name, s.base_url.clone())),
            None => eprintln!("skipping {name}: not installed"),
        }
    }
    assert_eq!(bases.len(), 3, "serve, apache2 and lighttpd");
    for (name, base) in &bases {
        let url = format!("{base}/{SERVICE}");
        let (status, body) = post(&url, record);
        assert_eq!(status, 200, "{name}: {body}");
        // The same answer as the GET's, but for the time it was made.
        assert_eq!(
            body.replace(&response_date(&body), "T"),
            get.replace(&response_date(&get), "T"),
            "{name}"
        );
        let (status, _) = post(
            &url,
            "servicesubject=urlRequest&parsedibiurl.ibi=8JMKD3MGP8W/35MME4E",
        );
        assert_eq!(status, 405, "{name}: a urlRequest is not POSTed");
        let (status, _) = post(
            &format!("{url}/filelist/sid.inpe.br/mtc-m18@80/2009/07.21.13.23"),
            "verb=Identify",
        );
        assert_eq!(status, 405, "{name}: a page is not POSTed");
        // A form longer than any query string: refused (413 by serve, which reads no
        // more; 405 by the CGI, which reads and drops it).
        let (status, _) = post(&url, &format!("verb=Identify&x={}", "a".repeat(20_000)));
        assert!(status == 413 || status == 405, "{name}: {status}");
    }
}

/// A page in the middle of a list whose every record is left out (its file broken since
/// check wrote the index) gives way to the next page: every answer holds a record.
#[test]
fn a_page_whose_records_are_all_left_out_gives_way_to_the_next() {
    let (_tmp, root) = archive();
    let mut toml = std::fs::read_to_string(root.join("archive.toml")).unwrap();
    toml.push_str("\n[oai]\npage_size = 1\n");
    std::fs::write(root.join("archive.toml"), toml).unwrap();
    check(&root);
    // The second record by datestamp.
    std::fs::write(
        root.join("col/sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/oai_dc.xml"),
        "<broken>",
    )
    .unwrap();
    let list = "verb=ListRecords&metadataPrefix=oai_dc";
    let mut ids = Vec::new();
    let mut answer = query(&root, list);
    loop {
        let (page, token) = headers(&answer);
        assert_eq!(page.len(), 1, "{answer}");
        ids.extend(page.into_iter().map(|(id, _, _)| id));
        let Some(t) = token else { break };
        answer = query(
            &root,
            &format!(
                "verb=ListRecords&resumptionToken={}",
                percent_encoding::utf8_percent_encode(&t, percent_encoding::NON_ALPHANUMERIC)
            ),
        );
    }
    assert_eq!(
        ids,
        [
            "http://localhost:8090/sid.inpe.br/mtc-m19/2013/09.04.12.27.58",
            "http://localhost:8090/sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47",
            "http://localhost:8090/sid.inpe.br/mtc-m19/2014/05.06.07.08.09",
        ]
    );
}
