//! The whole CGI program, `cgi::respond`, over a copy of sample-archive/ (made once per
//! process, with hostile additions: symlinks out of doc/, a hard link to archive.toml, a
//! symlink to the item directory, a nested file), for arbitrary method, PATH_INFO, client
//! address and query — the service, and the file route (`/col/…`).
//!
//! Input: `METHOD \n PATH_INFO \n REMOTE_ADDR \n QUERY_STRING` (the query is the rest and may
//! hold anything). A PATH_INFO starting `col:` asks the file route for the request target
//! that follows. A `{KEY}` in the query is replaced by a urlkey that this Archive really
//! issued for the query's `url`, so that acknowledgments get counted and logged too.
//!
//! Checked: no panic; the status is one of 200 301 400 403 404 405 410 412 416 500 (303
//! and 406 from a landing page alone); a text/plain body is a well-formed pair list
//! (Table 6.2), or a landing page's refusal in one line; a landing page's citations and
//! linksets are in their forms; every URL handed out (pairs `url…`, links of file-list
//! pages and their linksets) is the service's own address, a file-list page, an item.toml
//! `url`, or `<baseurl>/col/<rep>/doc/<file>` naming a regular file that, symlinks
//! resolved, lies inside that item's doc/ and that the file route serves to that client;
//! every file the file route serves is a regular file with one link inside the real doc/
//! of its item; every line of var/acknowledgments.log is a well-formed record; an OAI-PMH
//! answer (`verb=…`, over the index check writes, with a line naming an item outside col/)
//! is well-formed XML whose records are identified by persistent URLs.

#![no_main]

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use std::net::IpAddr;

use ibi_archive::acklog;
use ibi_archive::cgi::{self, CgiRequest};
use ibi_archive::config::Config;
use ibi_archive::http::{Answer, Headers, Reply};
use ::ibi::Rep;
use ::ibi::query::Query;
use ibi_archive::routes::{self, Route};
use ibi_archive::urlkey::UrlKeys;
use libfuzzer_sys::fuzz_target;

/// 2026-11-22T10:00:00Z: a fixed clock, so that every run of an input answers alike.
const NOW: i64 = 1_795_341_600;

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    config: Config,
    /// The `url` of every item.toml.
    item_urls: Vec<String>,
}

fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("archive");
        let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample-archive");
        copy_tree(&sample, &root);
        let _ = std::fs::remove_dir_all(root.join("var"));
        let doc = root.join("col/iconet.com.br/banon/2009/09.09.22.01/doc");
        std::os::unix::fs::symlink(root.join("archive.toml"), doc.join("leak.toml")).unwrap();
        std::os::unix::fs::symlink("..", doc.join("up")).unwrap();
        std::os::unix::fs::symlink("/etc", doc.join("etc")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", doc.join("passwd")).unwrap();
        std::os::unix::fs::symlink("reference.bib", doc.join("inside.bib")).unwrap();
        std::fs::hard_link(root.join("archive.toml"), doc.join("hard.txt")).unwrap();
        std::fs::create_dir_all(doc.join("sub/deeper")).unwrap();
        std::fs::write(doc.join("sub/deeper/inner file.txt"), b"inner\n").unwrap();
        std::fs::write(doc.join("sub/item.toml"), b"state = \"Original\"\n").unwrap();
        // An item whose directory is a symlink to another item, and one leading outside.
        std::os::unix::fs::symlink(
            root.join("col/iconet.com.br/banon/2009/09.09.22.01"),
            root.join("col/iconet.com.br/banon/2009/09.09.22.02"),
        )
        .unwrap();
        let outside = dir.path().join("outside-item");
        copy_tree(&root.join("col/urlib.net/www/2014/03.25.23.20"), &outside);
        std::os::unix::fs::symlink(&outside, root.join("col/urlib.net/www/2014/03.25.23.21"))
            .unwrap();
        // The OAI-PMH records' index as check writes it, and a line naming the item
        // reached through a link out of col/ (never believed: it is not loaded).
        std::fs::create_dir_all(root.join("var")).unwrap();
        ibi_archive::admin::check::check(&root, "root", &mut |_| {}, &mut |_| {});
        let mut lines = ibi_archive::oai_index::read_all(&root.join("var")).unwrap();
        lines.push(ibi_archive::oai_index::Entry {
            seconds: 1_500_000_000,
            deleted: false,
            rep: "urlib.net/www/2014/03.25.23.21".into(),
            formats: vec!["oai_dc".into()],
        });
        assert!(ibi_archive::oai_index::write(&root.join("var"), lines));
        // Its stamp believed (as if taken once col/ had settled): nothing changes col/
        // while the fuzzer runs, and the index, line above included, is answered as it
        // is rather than built again.
        let col = ibi_archive::layout::Col::open(&root).unwrap();
        let stamp = ibi_archive::oai_build::TreeStamp::take(&col);
        assert!(ibi_archive::oai_build::write_stamp(
            &root.join("var"),
            &stamp,
            stamp.newest_change + ibi_archive::oai_build::SETTLED_SECS
        ));
        assert!(ibi_archive::oai_build::is_fresh(&root.join("var"), &col));
        let config = Config::load(&root).unwrap();
        let mut item_urls = Vec::new();
        for e in walk(&root.join("col")) {
            if e.file_name().is_some_and(|n| n == "item.toml") {
                let text = std::fs::read_to_string(&e).unwrap_or_default();
                for line in text.lines() {
                    if let Some(v) = line.trim().strip_prefix("url") {
                        if let Some(v) = v.trim().strip_prefix('=') {
                            item_urls.push(v.trim().trim_matches('"').to_string());
                        }
                    }
                }
            }
        }
        Fixture {
            _dir: dir,
            root,
            config,
            item_urls,
        }
    })
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// Checks that a file the file route served lies where it may: `(dev, ino)` of a regular
/// file with one link inside the real doc/ of an item.
fn check_served(f: &Fixture, file: &std::fs::File) {
    use std::os::unix::fs::MetadataExt;
    let m = file.metadata().unwrap();
    assert!(m.is_file() && m.nlink() == 1, "served {m:?}");
    let real_col = f.root.join("col").canonicalize().unwrap();
    let found = walk(&real_col).into_iter().any(|p| {
        std::fs::symlink_metadata(&p).is_ok_and(|pm| pm.ino() == m.ino() && pm.dev() == m.dev())
            && p.components().any(|c| c.as_os_str() == "doc")
    });
    assert!(found, "served a file that is not in a doc/: {m:?}");
}

/// Checks one URL the Archive handed out to a client at `client`.
/// An OAI-PMH answer read whole by quick-xml and by xml-rs: well-formed, its root `OAI-PMH`, no
/// character XML cannot hold, each `identifier` on the Archive's resolver.
fn check_oai_xml(text: &str) {
    use quick_xml::events::Event;
    assert!(
        !text
            .chars()
            .any(|c| (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{fffe}' || c == '\u{ffff}'),
        "{text:?}"
    );
    let mut reader = quick_xml::Reader::from_str(text);
    let mut depth = 0usize;
    let mut roots = 0;
    let mut in_identifier = false;
    loop {
        match reader.read_event() {
            Ok(Event::Eof) => break,
            Ok(Event::Start(e)) => {
                if depth == 0 {
                    roots += 1;
                    assert_eq!(e.name().as_ref(), b"OAI-PMH");
                }
                in_identifier = e.name().as_ref() == b"identifier";
                depth += 1;
            }
            Ok(Event::End(_)) => {
                depth -= 1;
                in_identifier = false;
            }
            Ok(Event::Text(t)) if in_identifier => {
                let id = t.decode().unwrap();
                assert!(id.starts_with("http://localhost:8090/"), "{id:?}");
            }
            Ok(_) => {}
            Err(e) => panic!("not well-formed: {e}: {text:?}"),
        }
    }
    assert_eq!((roots, depth), (1, 0), "{text:?}");
    // And by xml-rs, which judges names, attribute values, comments and namespaces.
    for event in xml::EventReader::new(text.as_bytes()) {
        if let Err(e) = event {
            panic!("not well-formed XML with namespaces: {e}: {text:?}");
        }
    }
}

fn check_url(f: &Fixture, url: &str, client: Option<IpAddr>) {
    let base = &f.config.baseurl;
    let service = format!("{base}/{}", f.config.service);
    if url == service || f.item_urls.iter().any(|u| u == url) {
        return;
    }
    if let Some(rep) = url.strip_prefix(&format!("{service}/filelist/")) {
        assert!(!rep.is_empty(), "empty file list URL {url}");
        return;
    }
    // An item's persistent URL (the file-list and metadata pages cite it): at the
    // Archive's first resolver, not in the Archive; an IBI after it, in URL words.
    if let Some(ibi) = url.strip_prefix(&f.config.persistent_url("")) {
        assert!(
            !ibi.is_empty() && ibi.bytes().all(::ibi::escape::is_word_byte),
            "persistent URL {url:?}"
        );
        return;
    }
    // A landing page's Signposting `type` links: schema.org's name of what it is.
    if let Some(name) = url.strip_prefix("https://schema.org/") {
        assert!(
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric()),
            "schema.org type {url:?}"
        );
        return;
    }
    // A landing page's link to itself by a query alone (a citation, its linkset): a
    // representation the page answers.
    if let Some(query) = url.strip_prefix('?') {
        assert!(
            ::ibi::negotiate::Wanted::from_query(query.as_bytes()).is_some(),
            "a link to the page by a query it does not answer: {url:?}"
        );
        return;
    }
    // A licence or a contact (the metadata's, archive.toml's [site]): outside the Archive.
    if !url.starts_with(base.as_str())
        && (::ibi::escape::is_http_url(url) || url.starts_with("mailto:"))
    {
        return;
    }
    let path = url
        .strip_prefix(base.as_str())
        .unwrap_or_else(|| panic!("URL {url:?} is not under {base}"));
    assert!(
        path.starts_with("/col/"),
        "URL {url:?} is neither /col/ nor a file list"
    );
    // What the file route serves for it, to that client.
    match routes::route(&f.config, path) {
        Route::File { rep, path } => {
            match routes::file(&f.root, &f.config, &rep, path.as_deref(), client) {
                Reply::File(served) => check_served(f, &served.file),
                Reply::Page(a) => panic!("URL {url:?} answers {} {:?}", a.status, a.body),
            }
        }
        other => panic!("URL {url:?} routes to {other:?}"),
    }
    // And independently: decoded, it is a regular file whose real path is inside the
    // real doc/ of the item the URL names.
    let decoded: Vec<u8> = percent_encoding::percent_decode_str(&path[1..]).collect();
    let parts: Vec<&[u8]> = decoded.splitn(7, |&b| b == b'/').collect();
    assert!(
        parts.len() == 7 && parts[5] == b"doc",
        "URL {url:?} is not col/<rep>/doc/<file>"
    );
    let item_dir = f.root.join(std::ffi::OsStr::from_bytes(
        &decoded[..decoded.len() - parts[6].len() - 5],
    ));
    assert!(item_dir.join("item.toml").is_file(), "{url}: no item.toml");
    let real_doc = item_dir.join("doc").canonicalize().unwrap();
    let real_col = f.root.join("col").canonicalize().unwrap();
    assert!(real_doc.starts_with(&real_col), "{url}: doc/ outside col/");
    let real = f
        .root
        .join(std::ffi::OsStr::from_bytes(&decoded))
        .canonicalize()
        .unwrap();
    assert!(
        real.starts_with(&real_doc),
        "{url}: {} leaves doc/",
        real.display()
    );
    assert!(std::fs::metadata(&real).unwrap().is_file());
    // Never an item.toml or archive.toml, not even one inside doc/ (web servers refuse those).
    let name = decoded.rsplit(|&b| b == b'/').next().unwrap();
    assert!(name != b"item.toml" && name != b"archive.toml", "{url}");
}

/// A landing page's refusal (a query that does not decode, a format or style it does not
/// know) or its 303 to the metadata item's persistent URL: one line of text, not a pair
/// list (the page's other refusals, no such item, are the service's `error` pairs).
fn check_landing_refusal(f: &Fixture, answer: &Answer) {
    let text = std::str::from_utf8(&answer.body).expect("a refusal is UTF-8");
    assert!(
        [303, 400, 406].contains(&answer.status),
        "status {} with {text:?}",
        answer.status
    );
    assert!(
        text.ends_with('\n') && text.matches('\n').count() == 1 && !text.contains('\r'),
        "not one line: {text:?}"
    );
    let location = answer
        .headers
        .iter()
        .find(|(n, _)| n == "Location")
        .map(|(_, v)| v.as_str());
    if answer.status == 303 {
        let location = location.expect("a 303 without Location");
        assert_eq!(text, format!("See {location}\n"));
        assert!(
            location.starts_with(&f.config.persistent_url("")),
            "a 303 elsewhere than a persistent URL: {location:?}"
        );
    } else {
        assert_eq!(location, None, "{text:?}");
    }
}

/// A landing page's other representation: a citation in one of its four forms, a
/// linkset in either of its two; every URL a linkset holds is one the
/// Archive hands out for that client.
fn check_landing_representation(f: &Fixture, answer: &Answer, client: Option<IpAddr>) {
    let text = std::str::from_utf8(&answer.body).expect("a representation is UTF-8");
    assert!(
        [200, 410].contains(&answer.status),
        "status {} with {:?}",
        answer.status,
        answer.content_type
    );
    match answer.content_type {
        "application/x-bibtex; charset=utf-8" => assert!(text.starts_with('@'), "{text:?}"),
        "application/x-research-info-systems; charset=utf-8" => {
            assert!(
                text.starts_with("TY  - ") && text.trim_end().ends_with("ER  -"),
                "{text:?}"
            )
        }
        "application/vnd.citationstyles.csl+json; charset=utf-8" => {
            let v: serde_json::Value = serde_json::from_str(text).expect("CSL-JSON is JSON");
            assert!(v.is_array() || v.is_object(), "{text:?}");
        }
        "text/x-bibliography; charset=utf-8" => {
            assert!(!text.trim().is_empty() && !text.contains('\r'), "{text:?}")
        }
        "application/linkset+json" => {
            let v: serde_json::Value = serde_json::from_str(text).expect("a linkset is JSON");
            let sets = v["linkset"].as_array().expect("a linkset array");
            assert!(!sets.is_empty(), "{text:?}");
            for set in sets {
                let set = set.as_object().expect("a context object");
                for (name, value) in set {
                    if name == "anchor" {
                        check_url(f, value.as_str().expect("an anchor string"), client);
                        continue;
                    }
                    for target in value.as_array().expect("targets in an array") {
                        let href = target["href"].as_str().expect("a target's href");
                        check_url(f, href, client);
                    }
                }
            }
        }
        "application/linkset" => {
            for piece in text.split('<').skip(1) {
                check_url(f, piece.split('>').next().unwrap(), client);
            }
            for piece in text.split("anchor=\"").skip(1) {
                check_url(f, piece.split('"').next().unwrap(), client);
            }
        }
        other => panic!("a landing page answers {other:?}"),
    }
}

fn html_unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

fuzz_target!(|data: &[u8]| {
    let f = fixture();
    let mut parts = data.splitn(4, |&b| b == b'\n');
    // The first line: the method, then any request headers after `|` (`GET|Range: bytes=0-9`).
    let first = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let mut fields = first.split('|');
    let method = fields.next().unwrap_or_default().to_string();
    let mut headers = Headers::default();
    for field in fields {
        if let Some((name, value)) = field.split_once(':') {
            headers.add(name.trim(), value.trim());
        }
    }
    let path_info = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let remote = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let mut query = parts.next().unwrap_or_default().to_vec();
    if let Some(at) = query.windows(5).position(|w| w == b"{KEY}") {
        let url = Query::parse(&query)
            .ok()
            .and_then(|q| q.get("url").map(<[u8]>::to_vec))
            .unwrap_or_default();
        // The item the url points into, as the service binds a key to it.
        let item = url
            .strip_prefix(format!("{}/col/", f.config.baseurl).as_bytes())
            .and_then(|rest| {
                let rep: Vec<&[u8]> = rest.splitn(5, |&b| b == b'/').take(4).collect();
                Rep::parse(std::str::from_utf8(&rep.join(&b'/')).ok()?).ok()
            })
            .map(|r| r.canonical().to_string())
            .unwrap_or_default();
        let (keys, _) = UrlKeys::load_or_create(&f.root.join("var"));
        let key = keys.issue(NOW - 10, &[(&item, &url)]);
        query.splice(at..at + 5, key.into_bytes());
    }
    let (script_name, request_uri) = match path_info.strip_prefix("col:") {
        Some(target) => ("/col".to_string(), Some(target.to_string())),
        None => (String::new(), None),
    };
    // A POST sends the query as its form (OAI-PMH's POST), a GET in the URL.
    let form = (method == "POST").then(|| query.clone());
    let req = CgiRequest {
        form,
        method,
        query,
        path_info_bytes: path_info.as_bytes().to_vec(),
        path_info,
        script_name,
        request_uri,
        remote_addr: remote.parse().ok(),
        root: Some(f.root.clone()),
        headers,
    };
    let answer = match cgi::respond(&req, NOW) {
        Reply::Page(a) => a,
        Reply::File(served) => {
            check_served(f, &served.file);
            return;
        }
    };
    assert!(
        [200, 301, 303, 400, 403, 404, 405, 406, 410, 412, 416, 500].contains(&answer.status),
        "status {}",
        answer.status
    );
    // A landing page answers a citation, a linkset or its JSON-LD as well as the page
    // (by `Accept` or `format=`), and refuses with a line of text what it cannot give.
    let landing = req.script_name.is_empty() && req.path_info.starts_with("/filelist/");
    assert!(
        landing || ![303, 406].contains(&answer.status),
        "status {} outside a landing page",
        answer.status
    );
    assert_ne!(
        answer.status, 500,
        "the fixture Archive is sound: {:?}",
        answer.log
    );
    // The registration key of sample-archive/archive.toml, unless the input itself holds it.
    let decoded: Vec<u8> = percent_encoding::percent_decode(&req.query).collect();
    let key_in_input = [data, &decoded[..]]
        .iter()
        .any(|b| b.windows(10).any(|w| w == b"1234567890"));
    for line in &answer.log {
        assert!(
            !line.contains('\n') && !line.contains('\r'),
            "log line {line:?}"
        );
        assert!(
            key_in_input || !line.contains("1234567890"),
            "log line shows the key: {line:?}"
        );
    }
    let body = &answer.body;
    if !req.script_name.is_empty() {
        // The file route's refusals are short plain-text lines, not pair lists.
        assert!(body.len() < 200 && !body.contains(&b'\r'), "{body:?}");
    } else if landing
        && answer.content_type == "text/plain"
        && std::str::from_utf8(body).map_or(true, |t| ::ibi::pairs::parse(t).is_err())
    {
        check_landing_refusal(f, &answer);
    } else if landing
        && !["text/plain", "text/html; charset=utf-8", "application/ld+json"]
            .contains(&answer.content_type)
    {
        check_landing_representation(f, &answer, req.remote_addr);
    } else if answer.content_type == "text/plain" {
        let text = std::str::from_utf8(body).expect("a pair list is ASCII");
        let pairs = ::ibi::pairs::parse(text).unwrap_or_else(|e| panic!("{e}: {text:?}"));
        assert!(
            key_in_input || !text.contains("1234567890"),
            "the body shows the key"
        );
        // URLs are handed out for the client the query names.
        let client = Query::parse(&req.query)
            .ok()
            .and_then(|q| q.get("clientinformation.ipaddress").map(<[u8]>::to_vec))
            .and_then(|v| {
                let v = String::from_utf8(v).ok()?;
                v.split([' ', ',']).find(|s| !s.is_empty())?.parse().ok()
            });
        for (name, value) in pairs.iter() {
            if name == "url" || name.starts_with("url.") {
                let words = value.as_strs().expect("a word read from text is ASCII");
                assert_eq!(words.len(), 1, "{name}");
                check_url(f, words[0], client);
            }
        }
        if pairs
            .iter()
            .any(|(n, _)| n == "url" || n.starts_with("url."))
        {
            assert!(
                pairs.iter().any(|(n, _)| n == "urlkey"),
                "URLs without a urlkey"
            );
        }
    } else if answer.content_type == "text/xml; charset=utf-8" {
        // An OAI-PMH answer: well-formed UTF-8 XML, one OAI-PMH element, every record's
        // identifier a persistent URL.
        let text = std::str::from_utf8(body).expect("XML in UTF-8");
        check_oai_xml(text);
    } else if answer.content_type == "application/ld+json" {
        // A landing page's JSON-LD alone: every file URL in it is served as the page's.
        let text = std::str::from_utf8(body).expect("JSON-LD is UTF-8");
        assert!(text.starts_with('{') && text.contains("\"@context\""), "{text:?}");
        for piece in text.split("\"contentUrl\": \"").skip(1) {
            check_url(f, piece.split('"').next().unwrap(), req.remote_addr);
        }
    } else {
        assert_eq!(answer.content_type, "text/html; charset=utf-8");
        let text = std::str::from_utf8(body).expect("a page is UTF-8");
        for piece in text.split("href=\"").skip(1) {
            let url = html_unescape(piece.split('"').next().unwrap());
            check_url(f, &url, req.remote_addr);
        }
    }
    // The acknowledgment log stays a list of whole records; emptied for the next input.
    let log = acklog::log_path(&f.root.join("var"));
    if let Ok(text) = std::fs::read(&log) {
        let text = String::from_utf8(text).expect("the log is UTF-8");
        assert!(text.ends_with('\n'), "{text:?}");
        for line in text.lines() {
            assert!(
                acklog::Record::parse_line(line).is_some(),
                "log line {line:?}"
            );
        }
        std::fs::remove_file(&log).unwrap();
    }
    let _ = std::fs::remove_dir_all(f.root.join("var").join(acklog::MARKS_DIR));
});
