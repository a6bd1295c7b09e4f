//! One rule for what an Archive serves, the same under Apache, lighttpd and `ibi-archive
//! serve`: a restricted item's files go only to clients inside `[access].networks`,
//! judged by the address of the connection (127.0.0.1 inside, 127.0.0.2 outside here);
//! a tombstone's files, hard links and links below col/ are never served — also for
//! items dropped into col/ by hand while the server runs. The URL the service hands out
//! keeps following the client IP the query names, as the standard says. Every answer
//! whose content depends on the client's network is `Cache-Control: private`.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use common::{http_get_from, Response};
use common::{run_cmd, Serve};

const SERVICE: &str = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17";
const RESTRICTED: &str = "sid.inpe.br/mtc-m19/2014/05.06.07.08";
/// A copy of RESTRICTED dropped into col/ while the server runs.
const DROPPED: &str = "sid.inpe.br/mtc-m19/2014/05.06.07.10";
const TOMBSTONE: &str = "urlib.net/www/2014/03.25.23.20";
const ITEM: &str = "iconet.com.br/banon/2009/09.09.22.01";
/// An item open to every network whose metadata item is restricted: its landing page shows
/// the record's title inside the licensed networks only.
const OPEN_DATA: &str = "example.org/private/2020/01.01.00.00";
const RESTRICTED_META: &str = "example.org/private/2020/01.01.00.01";
/// A deposited page that would read a restricted file, were it run on the Archive's origin.
const INDEX: &str = "<!DOCTYPE html>\n<script>fetch('/col/sid.inpe.br/mtc-m19/2014/05.06.07.08/doc/article.pdf')</script>\n";

fn inside() -> IpAddr {
    "127.0.0.1".parse().unwrap()
}

fn outside() -> IpAddr {
    "127.0.0.2".parse().unwrap()
}

/// sample-archive/ with only 127.0.0.1 licensed; a tombstone that kept its content
/// (`delete --keep-content`); a hard link to archive.toml and a link to another file of
/// doc/ in one item's doc/.
fn archive() -> (tempfile::TempDir, PathBuf) {
    let tmp = common::archive_tempdir();
    let root = tmp.path().join("archive");
    common::copy_sample(&root);
    let toml = std::fs::read_to_string(root.join("archive.toml")).unwrap();
    let toml = toml.replace(
        "networks = [\"150.163.0.0/16\", \"127.0.0.0/8\"]",
        "networks = [\"127.0.0.1/32\"]",
    );
    assert!(toml.contains("\"127.0.0.1/32\""));
    std::fs::write(root.join("archive.toml"), toml).unwrap();
    let (code, _, err) = run_cmd(&[
        "delete",
        "--root",
        root.to_str().unwrap(),
        "--keep-content",
        TOMBSTONE,
    ]);
    assert_eq!(code, 0, "{err}");
    let doc = root.join("col").join(ITEM).join("doc");
    std::fs::hard_link(root.join("archive.toml"), doc.join("leak.txt")).unwrap();
    std::os::unix::fs::symlink("reference.bib", doc.join("inside.bib")).unwrap();
    std::fs::create_dir_all(doc.join("site")).unwrap();
    std::fs::write(doc.join("site/index.html"), INDEX).unwrap();
    let data = root.join("col").join(OPEN_DATA);
    std::fs::create_dir_all(data.join("doc")).unwrap();
    std::fs::write(data.join("doc/x.txt"), "x\n").unwrap();
    std::fs::write(
        data.join("item.toml"),
        format!("state = \"Original\"\nmetadata = \"{RESTRICTED_META}\"\n"),
    )
    .unwrap();
    let meta = root.join("col").join(RESTRICTED_META);
    std::fs::create_dir_all(meta.join("doc")).unwrap();
    std::fs::write(
        meta.join("doc/oai_dc.xml"),
        "<oai_dc:dc xmlns:oai_dc=\"http://www.openarchives.org/OAI/2.0/oai_dc/\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:title>Licensed title</dc:title></oai_dc:dc>\n",
    )
    .unwrap();
    std::fs::write(
        meta.join("item.toml"),
        "state = \"Original\"\ncontenttype = \"Metadata\"\nrestricted = true\n[formats]\noai_dc = \"oai_dc.xml\"\n",
    )
    .unwrap();
    common::prepare_archive(&root);
    (tmp, root)
}

fn get(from: IpAddr, base: &str, path: &str) -> Response {
    let r = http_get_from(from, &format!("{base}{path}"));
    assert!(
        !r.text().contains("1234567890") && !r.text().contains("SECRET"),
        "{path} leaked a secret"
    );
    r
}

fn suite(base: &str, root: &Path, log: &dyn Fn() -> String) {
    // The service answers for the Archive as the server reaches it.
    let addr = base.trim_start_matches("http://");
    let toml = std::fs::read_to_string(root.join("archive.toml")).unwrap();
    let toml = toml.replace("\"localhost:8080\"", &format!("\"{addr}\""));
    std::fs::write(root.join("archive.toml"), toml).unwrap();

    let pdf = format!("/col/{RESTRICTED}/doc/article.pdf");
    let bytes = std::fs::read(root.join("col").join(RESTRICTED).join("doc/article.pdf")).unwrap();
    let r = get(inside(), base, &pdf);
    assert_eq!((r.status, &r.body), (200, &bytes), "{}", log());
    let r = get(outside(), base, &pdf);
    assert_eq!(r.status, 403, "{}\n{}", r.text(), log());
    assert_ne!(r.body, bytes);

    // An item dropped into col/ by hand: the same rule at once, no rebuild.
    common::copy_tree(
        &root.join("col").join(RESTRICTED),
        &root.join("col").join(DROPPED),
    );
    common::make_world_readable(&root.join("col").join(DROPPED));
    let dropped = format!("/col/{DROPPED}/doc/article.pdf");
    assert_eq!(get(inside(), base, &dropped).status, 200, "{}", log());
    assert_eq!(get(outside(), base, &dropped).status, 403, "{}", log());

    // The URL handed out follows the client IP the query names (here the resolver,
    // at 127.0.0.2, asks for a reader at 127.0.0.1: the data URL)...
    let ask = |client: &str| {
        let q = format!(
            "/{SERVICE}?servicesubject=urlRequest&clientinformation.ipaddress={client}&parsedibiurl.ibi={RESTRICTED}"
        );
        let text = get(outside(), base, &q).text();
        text.split("\r\n")
            .find_map(|l| l.strip_prefix("url "))
            .unwrap_or_else(|| panic!("no url in {text:?}"))
            .to_string()
    };
    assert_eq!(ask("127.0.0.1"), format!("{base}{pdf}"));
    assert_eq!(
        ask("127.0.0.2"),
        format!("{base}/col/{RESTRICTED}.09/doc/metadata.html")
    );
    // ... and the metadata it gives outside answers there.
    let meta = format!("/col/{RESTRICTED}.09/doc/metadata.html");
    assert_eq!(get(outside(), base, &meta).status, 200, "{}", log());

    // The landing page of a restricted item, by the connection's address too: its files
    // listed inside; outside, its metadata and citation, its files withheld.
    let list = format!("/{SERVICE}/filelist/{RESTRICTED}");
    let inside_page = get(inside(), base, &list);
    assert_eq!(inside_page.status, 200, "{}", log());
    assert!(inside_page
        .text()
        .contains(&format!("href=\"{base}{pdf}\"")));
    let outside_page = get(outside(), base, &list);
    assert_eq!(outside_page.status, 200, "{}", log());
    let text = outside_page.text();
    assert!(!text.contains(&pdf), "{text}");
    assert!(text.contains(
        "<p>The files of this item are open only to the networks the Archive licenses.</p>"
    ));

    private_where_the_network_decides(base, log);

    // A tombstone keeps its doc/, which is never served again.
    let gone = format!("/col/{TOMBSTONE}/doc/ibi-resolucao.pdf");
    assert!(root
        .join("col")
        .join(TOMBSTONE)
        .join("doc/ibi-resolucao.pdf")
        .is_file());
    for from in [inside(), outside()] {
        assert_eq!(get(from, base, &gone).status, 410, "{}", log());
    }

    // A hard link (to archive.toml) and a link inside col/: not served to anyone.
    for path in [
        format!("/col/{ITEM}/doc/leak.txt"),
        format!("/col/{ITEM}/doc/inside.bib"),
    ] {
        for from in [inside(), outside()] {
            assert_eq!(get(from, base, &path).status, 404, "{path}\n{}", log());
        }
    }
    // While the file itself is.
    let r = get(outside(), base, &format!("/col/{ITEM}/doc/reference.bib"));
    assert_eq!(r.status, 200, "{}", log());
    assert_eq!(r.header("content-security-policy"), None);

    // Any method but GET and HEAD is refused with one answer, whichever route the path
    // takes: the service, its file list or a file.
    for path in [
        format!("/{SERVICE}"),
        format!("/{SERVICE}/filelist/{ITEM}"),
        format!("/col/{ITEM}/doc/reference.bib"),
    ] {
        let r = common::http_request("POST", &format!("{base}{path}"));
        assert_eq!(
            (r.status, r.header("allow"), r.text().as_str()),
            (405, Some("GET, HEAD"), "error {method not allowed}"),
            "POST {path}\n{}",
            log()
        );
    }

    // A deposited page runs sandboxed, with an origin of its own (its scripts cannot read
    // the Archive's other files through a licensed reader's browser); a folder's index
    // page is a page.
    let sandbox = Some("sandbox allow-scripts allow-forms allow-popups allow-downloads");
    for path in [
        format!("/col/{ITEM}/doc/site/index.html"),
        format!("/col/{ITEM}/doc/site/"),
    ] {
        let r = get(inside(), base, &path);
        assert_eq!(
            (r.status, r.content_type(), r.text().as_str()),
            (200, "text/html", INDEX),
            "{path}\n{}",
            log()
        );
        assert_eq!(r.header("content-security-policy"), sandbox, "{path}");
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    }
}

/// What a restricted item answers depends on the connection's network: every such answer
/// (its files, 200, 304 or 403, and its landing page, HTML or JSON-LD, inside and outside)
/// says `Cache-Control: private` and `Vary: *` (RFC 9110 §12.5.5: the client's network
/// address may play a role), so that no shared cache in front of the Archive keeps a
/// licensed reader's copy for a reader outside. An item open to every network stays
/// cacheable.
fn private_where_the_network_decides(base: &str, log: &dyn Fn() -> String) {
    let private = |r: &Response, what: &str| {
        assert_eq!(
            (r.header("cache-control"), r.header("vary")),
            (Some("private"), Some("*")),
            "{what}: {}\n{}",
            r.head,
            log()
        );
    };
    let pdf = format!("/col/{RESTRICTED}/doc/article.pdf");
    let list = format!("/{SERVICE}/filelist/{RESTRICTED}");
    for from in [inside(), outside()] {
        for path in [&pdf, &list, &format!("/col/{DROPPED}/doc/article.pdf")] {
            let r = get(from, base, path);
            assert_eq!(
                r.status,
                if from == inside() || *path == list {
                    200
                } else {
                    403
                }
            );
            private(&r, &format!("{path} from {from}"));
        }
        let authority = base.trim_start_matches("http://");
        let json = format!(
            "GET {list} HTTP/1.1\r\nHost: {authority}\r\nAccept: application/ld+json\r\nConnection: close\r\n\r\n"
        );
        let r = common::http_raw_from(Some(from), base, json.as_bytes(), false);
        assert_eq!((r.status, r.content_type()), (200, "application/ld+json"));
        private(&r, &format!("the JSON-LD of {list} from {from}"));
    }
    // A page open to all whose metadata item is restricted: its record's title inside.
    let open_page = format!("/{SERVICE}/filelist/{OPEN_DATA}");
    for from in [inside(), outside()] {
        let r = get(from, base, &open_page);
        assert_eq!(r.status, 200, "{}", log());
        assert_eq!(r.text().contains("Licensed title"), from == inside());
        private(&r, &format!("{open_page} from {from}"));
    }
    // A licensed reader's copy, revalidated: the 304 says the same.
    let etag = get(inside(), base, &pdf)
        .header("etag")
        .unwrap()
        .to_string();
    let authority = base.trim_start_matches("http://");
    let again = format!(
        "GET {pdf} HTTP/1.1\r\nHost: {authority}\r\nIf-None-Match: {etag}\r\nConnection: close\r\n\r\n"
    );
    let r = common::http_raw_from(Some(inside()), base, again.as_bytes(), false);
    assert_eq!(r.status, 304, "{}", log());
    private(&r, "a 304 of a restricted file");
    // The same answer for every network: left to caches.
    let open = get(outside(), base, &format!("/col/{ITEM}/doc/reference.bib"));
    assert_eq!(open.status, 200);
    assert_eq!(open.header("cache-control"), None, "{}", open.head);
    let page = get(outside(), base, &format!("/{SERVICE}/filelist/{ITEM}"));
    assert_eq!(page.header("cache-control"), None, "{}", page.head);
}

#[test]
fn serve_applies_the_rule() {
    let (_tmp, root) = archive();
    let log_path = root.parent().unwrap().join("serve.log");
    let serve = Serve::start(&root, std::fs::File::create(&log_path).unwrap());
    suite(&serve.base_url(), &root, &|| {
        std::fs::read_to_string(&log_path).unwrap_or_default()
    });
}

#[test]
fn apache2_applies_the_rule() {
    if !common::apache2_available() {
        eprintln!("skipping: apache2 with mod_cgid is not installed");
        return;
    }
    let (_tmp, root) = archive();
    let server = common::start_apache2(&root, &common::ibi_archive_bin(), SERVICE);
    suite(&server.base_url, &root, &|| server.error_log());
}

#[test]
fn lighttpd_applies_the_rule() {
    if !common::lighttpd_available() {
        eprintln!("skipping: lighttpd is not installed");
        return;
    }
    let (_tmp, root) = archive();
    let server = common::start_lighttpd(&root, &common::ibi_archive_bin(), SERVICE);
    suite(&server.base_url, &root, &|| server.error_log());
}
