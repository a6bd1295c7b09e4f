//! The resolver's real requests against a deployed Archive: Debian's apache2 (mod_cgid) and
//! lighttpd (mod_cgi) with the cgi-bin/ configurations, and `ibi-archive serve`, each over
//! a copy of sample-archive/ on 127.0.0.1. Every answer is checked byte for byte (urlkey
//! masked), then every URL the answers hand out is followed and must answer 200 with the
//! bytes on disk; item.toml, var/ and archive.toml must not be served. The web servers run
//! ibi-archive-cgi, as their configurations name it.

use std::path::{Path, PathBuf};

use common::{mask_urlkey, Serve};

const SERVICE: &str = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17";

#[test]
fn apache2_answers_the_resolver() {
    if !common::apache2_available() {
        eprintln!("skipping: apache2 with mod_cgid is not installed");
        return;
    }
    let (_tmp, root) = archive_copy();
    let server = common::start_apache2(&root, &common::ibi_archive_cgi_bin(), SERVICE);
    resolver_suite(&server.base_url, &root, &|| server.error_log());
}

#[test]
fn lighttpd_answers_the_resolver() {
    if !common::lighttpd_available() {
        eprintln!("skipping: lighttpd is not installed");
        return;
    }
    let (_tmp, root) = archive_copy();
    let server = common::start_lighttpd(&root, &common::ibi_archive_cgi_bin(), SERVICE);
    resolver_suite(&server.base_url, &root, &|| server.error_log());
}

#[test]
fn serve_answers_the_resolver_and_stops_on_ctrl_c() {
    let (_tmp, root) = archive_copy();
    let log_path = root.parent().unwrap().join("serve.log");
    let mut serve = Serve::start(&root, std::fs::File::create(&log_path).unwrap());
    resolver_suite(&serve.base_url(), &root, &|| {
        std::fs::read_to_string(&log_path).unwrap_or_default()
    });
    let status = serve.interrupt();
    assert!(status.success(), "serve exited with {status:?}");
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(log.ends_with("ibi-archive: stopped\n"), "{log}");
    // One line per request.
    let requests = log
        .lines()
        .filter(|l| l.starts_with("127.0.0.1 \""))
        .count();
    assert!(requests >= 30, "{requests} request lines in\n{log}");
}

/// A copy of sample-archive/ readable by the web servers' user.
fn archive_copy() -> (tempfile::TempDir, PathBuf) {
    let tmp = common::archive_tempdir();
    let root = tmp.path().join("archive");
    common::copy_sample(&root);
    common::prepare_archive(&root);
    (tmp, root)
}

/// The expected answers, for an Archive at `addr` (host:port).
fn expected(addr: &str) -> Vec<(&'static str, String, String)> {
    let id = format!(
        "archiveaddress {addr}\r\nibi.archiveservice {{rep {SERVICE}}}\r\nibi.platformsoftware {{rep dpi.inpe.br/banon/1998/08.02.08.56}}"
    );
    let base = format!("http://{addr}");
    let cases: Vec<(&str, &str, String)> = vec![
        // Example 7.4.
        ("7.4 confirmation", "servicesubject=inclusionConfirmationRequest", "confirmation yes".into()),
        ("identity", "", id.clone()),
        // Example 6.1, with its answer of Example 6.2.
        (
            "6.1 urlRequest",
            "servicesubject=urlRequest&clientinformation.ipaddress=150.163.2.175&parsedibiurl.ibi=8JMKD3MGP7W/3EPGUE5",
            format!(
                "archiveaddress {addr}\r\ncontenttype Data\r\nibi {{rep sid.inpe.br/mtc-m19/2013/09.04.12.27.57 ibip 8JMKD3MGP7W/3EPGUE5}}\r\n\
                 ibi.archiveservice {{rep {SERVICE}}}\r\nibi.platformsoftware {{rep dpi.inpe.br/banon/1998/08.02.08.56}}\r\n\
                 state Original\r\ntimestamp 2013-10-04T14:32:14Z\r\n\
                 url {base}/col/sid.inpe.br/mtc-m19/2013/09.04.12.27.57/doc/Relat%f3rio%20Final.pdf\r\nurlkey <urlkey>"
            ),
        ),
        // Example 10.1.
        (
            "10.1 urlRequest",
            "clientinformation.ipaddress=172.16.44.200%20150.163.68.1&parsedibiurl.ibi=8JMKD3MGP8W/35MMLL8&servicesubject=urlRequest",
            format!(
                "archiveaddress {addr}\r\ncontenttype Data\r\nibi {{rep sid.inpe.br/mtc-m18@80/2009/07.21.14.43 ibip 8JMKD3MGP8W/35MMLL8}}\r\n\
                 ibi.archiveservice {{rep {SERVICE}}}\r\nibi.platformsoftware {{rep dpi.inpe.br/banon/1998/08.02.08.56}}\r\n\
                 state Original\r\ntimestamp 2009-07-21T14:43:31Z\r\n\
                 url {base}/col/sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS%20650.0-B-1.pdf\r\nurlkey <urlkey>"
            ),
        ),
        // Example 10.2: both editions are here, so the chain is followed at once.
        (
            "10.2 first request",
            "clientinformation.ipaddress=172.16.44.200%20150.163.68.1&parsedibiurl.ibi=8JMKD3MGP8W/35MMLL8&parsedibiurl.verblist=GetLastEdition%20GetMetadata(oai_dc)&servicesubject=urlRequest",
            format!(
                "archiveaddress {addr}\r\ncontenttype.lastedition.metadata(oai_dc) Metadata\r\n\
                 ibi {{rep sid.inpe.br/mtc-m18@80/2009/07.21.14.43 ibip 8JMKD3MGP8W/35MMLL8}}\r\nibi.archiveservice {{rep {SERVICE}}}\r\n\
                 ibi.lastedition.metadata(oai_dc) {{rep sid.inpe.br/mtc-m18/2012/07.12.18.08.49}}\r\n\
                 ibi.nextedition {{rep sid.inpe.br/mtc-m18/2012/07.12.18.08}}\r\nibi.platformsoftware {{rep dpi.inpe.br/banon/1998/08.02.08.56}}\r\n\
                 state.lastedition.metadata(oai_dc) Original\r\ntimestamp.lastedition.metadata(oai_dc) 2014-04-04T17:36:01Z\r\n\
                 url.lastedition.metadata(oai_dc) {base}/col/sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/oai_dc.xml\r\nurlkey <urlkey>"
            ),
        ),
        (
            "10.2 second request",
            "clientinformation.ipaddress=172.16.44.200%20150.163.68.1&parsedibiurl.ibi=sid.inpe.br/mtc-m18/2012/07.12.18.08&parsedibiurl.verblist=GetLastEdition%20GetMetadata(oai_dc)&servicesubject=urlRequest",
            format!(
                "archiveaddress {addr}\r\ncontenttype.lastedition.metadata(oai_dc) Metadata\r\n\
                 ibi {{rep sid.inpe.br/mtc-m18/2012/07.12.18.08 ibip 8JMKD3MGP8W/3C9EP6P}}\r\nibi.archiveservice {{rep {SERVICE}}}\r\n\
                 ibi.lastedition.metadata(oai_dc) {{rep sid.inpe.br/mtc-m18/2012/07.12.18.08.49}}\r\nibi.platformsoftware {{rep dpi.inpe.br/banon/1998/08.02.08.56}}\r\n\
                 state.lastedition.metadata(oai_dc) Original\r\ntimestamp.lastedition.metadata(oai_dc) 2014-04-04T17:36:01Z\r\n\
                 url.lastedition.metadata(oai_dc) {base}/col/sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/oai_dc.xml\r\nurlkey <urlkey>"
            ),
        ),
        // Example 8.6 / 9.12: the file list.
        (
            "GetFileList",
            "servicesubject=urlRequest&clientinformation.ipaddress=150.163.2.175&parsedibiurl.ibi=LK47B6W/362SFKH&parsedibiurl.verblist=GetFileList",
            format!(
                "archiveaddress {addr}\r\ncontenttype Data\r\nibi {{rep iconet.com.br/banon/2009/09.09.22.01 ibip LK47B6W/362SFKH}}\r\n\
                 ibi.archiveservice {{rep {SERVICE}}}\r\nibi.platformsoftware {{rep dpi.inpe.br/banon/1998/08.02.08.56}}\r\n\
                 state Original\r\ntimestamp 2009-09-09T22:01:00Z\r\n\
                 url {base}/{SERVICE}/filelist/iconet.com.br/banon/2009/09.09.22.01\r\nurlkey <urlkey>"
            ),
        ),
        // Example 8.7 / 9.11: one file of the item.
        (
            "filepath",
            "servicesubject=urlRequest&clientinformation.ipaddress=150.163.2.175&parsedibiurl.ibi=LK47B6W/362SFKH&parsedibiurl.filepath=/reference.bib",
            format!(
                "archiveaddress {addr}\r\ncontenttype Data\r\nibi {{rep iconet.com.br/banon/2009/09.09.22.01 ibip LK47B6W/362SFKH}}\r\n\
                 ibi.archiveservice {{rep {SERVICE}}}\r\nibi.platformsoftware {{rep dpi.inpe.br/banon/1998/08.02.08.56}}\r\n\
                 state Original\r\ntimestamp 2009-09-09T22:01:00Z\r\n\
                 url {base}/col/iconet.com.br/banon/2009/09.09.22.01/doc/reference.bib\r\nurlkey <urlkey>"
            ),
        ),
        // Example 8.2: metadata in oai_dc.
        (
            "metadata(oai_dc)",
            "servicesubject=urlRequest&clientinformation.ipaddress=150.163.2.175&parsedibiurl.ibi=8JMKD3MGP8W/35MME4E&parsedibiurl.verblist=GetMetadata(oai_dc)",
            format!(
                "archiveaddress {addr}\r\ncontenttype.metadata(oai_dc) Metadata\r\n\
                 ibi {{rep sid.inpe.br/mtc-m18@80/2009/07.21.13.23 ibip 8JMKD3MGP8W/35MME4E}}\r\nibi.archiveservice {{rep {SERVICE}}}\r\n\
                 ibi.metadata(oai_dc) {{rep sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47}}\r\nibi.platformsoftware {{rep dpi.inpe.br/banon/1998/08.02.08.56}}\r\n\
                 state.metadata(oai_dc) Original\r\ntimestamp.metadata(oai_dc) 2014-04-04T17:39:54Z\r\n\
                 url.metadata(oai_dc) {base}/col/sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47/doc/oai_dc.xml\r\nurlkey <urlkey>"
            ),
        ),
        // Example 8.3: +(pt).
        (
            "translation(pt)",
            "servicesubject=urlRequest&clientinformation.ipaddress=150.163.2.175&parsedibiurl.ibi=8JMKD3MGP8W/35MME4E&parsedibiurl.verblist=GetTranslation(pt)",
            format!(
                "archiveaddress {addr}\r\ncontenttype.translation(pt) Data\r\n\
                 ibi {{rep sid.inpe.br/mtc-m18@80/2009/07.21.13.23 ibip 8JMKD3MGP8W/35MME4E}}\r\nibi.archiveservice {{rep {SERVICE}}}\r\n\
                 ibi.platformsoftware {{rep dpi.inpe.br/banon/1998/08.02.08.56}}\r\nibi.translation(pt) {{rep sid.inpe.br/mtc-m18@80/2009/08.25.19.43}}\r\n\
                 state.translation(pt) Original\r\ntimestamp.translation(pt) 2011-09-22T14:45:11Z\r\n\
                 url.translation(pt) {base}/col/sid.inpe.br/mtc-m18@80/2009/08.25.19.43/doc/RTC-07.pdf\r\nurlkey <urlkey>"
            ),
        ),
        (
            "restricted, client outside",
            "servicesubject=urlRequest&clientinformation.ipaddress=200.1.2.3&parsedibiurl.ibi=sid.inpe.br/mtc-m19/2014/05.06.07.08",
            format!(
                "archiveaddress {addr}\r\ncontenttype Metadata\r\nibi {{rep sid.inpe.br/mtc-m19/2014/05.06.07.08}}\r\n\
                 ibi.archiveservice {{rep {SERVICE}}}\r\nibi.platformsoftware {{rep dpi.inpe.br/banon/1998/08.02.08.56}}\r\n\
                 state Original\r\ntimestamp 2014-05-06T07:08:40Z\r\n\
                 url {base}/col/sid.inpe.br/mtc-m19/2014/05.06.07.08.09/doc/metadata.html\r\nurlkey <urlkey>"
            ),
        ),
        (
            "the service item",
            "servicesubject=urlRequest&parsedibiurl.ibi=sid.inpe.br/mtc-m18.80/2008/03.17.15.17",
            format!(
                "archiveaddress {addr}\r\ncontenttype Data\r\nibi {{rep {SERVICE}}}\r\nibi.archiveservice {{rep {SERVICE}}}\r\n\
                 ibi.platformsoftware {{rep dpi.inpe.br/banon/1998/08.02.08.56}}\r\nstate Original\r\ntimestamp 2008-03-17T15:17:00Z\r\n\
                 url {base}/{SERVICE}\r\nurlkey <urlkey>"
            ),
        ),
        ("not here", "servicesubject=urlRequest&parsedibiurl.ibi=8JMKD3MGP8W/34PGRBS", String::new()),
    ];
    cases
        .into_iter()
        .map(|(n, q, a)| (n, q.to_string(), a))
        .collect()
}

fn resolver_suite(base: &str, root: &Path, log: &dyn Fn() -> String) {
    let addr = base.trim_start_matches("http://").to_string();
    let toml = std::fs::read_to_string(root.join("archive.toml")).unwrap();
    let toml = toml.replace(
        "archiveaddress    = \"localhost:8080\"",
        &format!("archiveaddress    = \"{addr}\""),
    );
    assert!(toml.contains(&addr));
    std::fs::write(root.join("archive.toml"), toml).unwrap();
    let service_url = format!("{base}/{SERVICE}");

    let mut urls: Vec<String> = Vec::new();
    let mut first_key = None;
    for (name, query, want) in expected(&addr) {
        let url = if query.is_empty() {
            service_url.clone()
        } else {
            format!("{service_url}?{query}")
        };
        let r = common::http_get(&url);
        assert_eq!(r.status, 200, "{name}: {}\n{}", r.text(), log());
        assert_eq!(r.content_type(), "text/plain", "{name}");
        let (got, key) = mask_urlkey(&r.text());
        assert_eq!(got, want, "{name}\n{}", log());
        if name == "6.1 urlRequest" {
            first_key = key;
        }
        urls.extend(
            r.text()
                .split("\r\n")
                .filter_map(|l| l.split_once(' '))
                .filter(|(n, _)| *n == "url" || n.starts_with("url."))
                .map(|(_, u)| u.to_string()),
        );
    }

    // Example 8.9: the resolver acknowledges the URL of Example 6.1; counted once.
    let key = first_key.expect("a urlkey in the answer to Example 6.1");
    let ack = format!(
        "{service_url}?servicesubject=acknowledgment&clientinformation.ipaddress=150.163.2.175&contenttype=Data&\
         ibi=rep%20sid.inpe.br/mtc-m19/2013/09.04.12.27.57%20ibip%208JMKD3MGP7W/3EPGUE5&\
         url=http://{addr}/col/sid.inpe.br/mtc-m19/2013/09.04.12.27.57/doc/Relat%f3rio%20Final.pdf&\
         url.persistent=http://urlib.net:80/8JMKD3MGP7W/3EPGUE5&urlkey={key}"
    );
    for _ in 0..2 {
        let r = common::http_get(&ack);
        assert_eq!(
            (r.status, r.text().as_str()),
            (200, "notice {acknowledgment received}")
        );
    }
    let counted = std::fs::read_to_string(root.join("var/acknowledgments.log")).unwrap();
    assert_eq!(counted.lines().count(), 1, "{counted}");
    assert!(counted.contains(&key), "{counted}");

    // Every URL handed out answers, with the bytes on disk.
    assert!(urls.len() >= 10, "{urls:?}");
    for url in &urls {
        follow(url, base, root, log);
    }

    // Never served.
    for path in [
        "/col/iconet.com.br/banon/2009/09.09.22.01/item.toml",
        "/col/iconet.com.br/banon/2009/09.09.22.01/",
        "/col/iconet.com.br/banon/2009/09.09.22.01/doc/",
        "/col/",
        "/var/acknowledgments.log",
        "/var/urlkey.secret",
        "/archive.toml",
        "/col/iconet.com.br/banon/2009/09.09.22.01/doc/../item.toml",
        "/col/iconet.com.br/banon/2009/09.09.22.01/doc/%2e%2e/item.toml",
    ] {
        let r = common::http_get(&format!("{base}{path}"));
        assert_eq!(r.status, 404, "{path}: {}", r.text());
        assert!(
            !r.text().contains("1234567890"),
            "{path} leaked the registration key"
        );
    }
}

/// GETs a URL handed out by the service: 200, and for files the exact bytes on disk; for
/// file-list pages, every link on the page is followed too.
fn follow(url: &str, base: &str, root: &Path, log: &dyn Fn() -> String) {
    assert!(
        url.starts_with(base),
        "{url} is not in this Archive ({base})"
    );
    let r = common::http_get(url);
    assert_eq!(r.status, 200, "{url}\n{}", log());
    let path = &url[base.len()..];
    if let Some(file) = path.strip_prefix("/col/") {
        let bytes: Vec<u8> = percent_encoding::percent_decode(file.as_bytes()).collect();
        let on_disk = std::fs::read(root.join("col").join(common::os(&bytes))).unwrap();
        assert_eq!(r.body, on_disk, "{url}");
        if url.ends_with(".xml") {
            assert!(
                r.content_type().contains("xml"),
                "{url}: {}",
                r.content_type()
            );
        }
        if url.ends_with(".pdf") {
            assert_eq!(r.content_type(), "application/pdf", "{url}");
        }
    } else if path.contains("/filelist/") && path.contains('?') {
        // A representation of the landing page a link asks by its query (a citation, the
        // linkset): its own media type, not the page again.
        assert!(!r.content_type().starts_with("text/html"), "{url}");
        assert!(!r.body.is_empty(), "{url}");
    } else if path.contains("/filelist/") {
        assert!(r.content_type().starts_with("text/html"), "{url}");
        let page = r.text();
        let mut links: Vec<&str> = page
            .split("href=\"")
            .skip(1)
            .filter_map(|s| s.split('"').next())
            .filter(|l| !l.starts_with("https://schema.org/"))
            .collect();
        links.sort();
        links.dedup();
        // Persistent URLs (the item's, its editions' and translations') lead to the
        // sample's resolver (http://localhost:8090), not into this Archive, and the
        // schema.org types of its Signposting are names: the links not followed here.
        let (persistent, files): (Vec<&str>, Vec<&str>) = links
            .into_iter()
            .partition(|l| l.starts_with("http://localhost:8090/"));
        assert!(!persistent.is_empty(), "{page}");
        assert!(!files.is_empty(), "{page}");
        for link in files {
            let link = link.replace("&amp;", "&");
            // A link of the page to itself by a query alone (`?format=bibtex`).
            let link = match link.strip_prefix('?') {
                Some(query) => format!("{}?{query}", url.split('?').next().unwrap_or(url)),
                None => link,
            };
            follow(&link, base, root, log);
        }
    } else {
        assert_eq!(path, format!("/{SERVICE}"), "{url}");
        assert!(
            r.text().starts_with("archiveaddress "),
            "{url}: {}",
            r.text()
        );
    }
}

/// `/metrics` of `ibi-archive serve`, asked from this machine: every series at 0 before
/// the first request, then each request counted by kind and outcome, its time in the
/// histogram, and the one acknowledgment counted of two sent with the same key (the
/// second already counted); `/metrics` itself is not counted.
#[test]
fn serve_counts_its_requests_by_kind_and_outcome_in_its_metrics() {
    let (_tmp, root) = archive_copy();
    let log_path = root.parent().unwrap().join("serve.log");
    let mut serve = Serve::start(&root, std::fs::File::create(&log_path).unwrap());
    let base = serve.base_url();
    let addr = base.trim_start_matches("http://").to_string();
    // The Archive at the address it is served on, as resolver_suite has it.
    let toml = std::fs::read_to_string(root.join("archive.toml")).unwrap();
    std::fs::write(
        root.join("archive.toml"),
        toml.replace(
            "archiveaddress    = \"localhost:8080\"",
            &format!("archiveaddress    = \"{addr}\""),
        ),
    )
    .unwrap();
    let metrics = || {
        let r = common::http_get(&format!("{base}/metrics"));
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(
            r.content_type(),
            "application/openmetrics-text; version=1.0.0; charset=utf-8"
        );
        r.text()
    };
    let kinds = [
        "file",
        "url_request",
        "acknowledgment",
        "confirmation",
        "oai",
        "other",
    ];
    let series = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| {
                l.starts_with("ibi_archive_requests_total")
                    || l.starts_with("ibi_archive_request_seconds_count")
                    || l.starts_with("ibi_archive_acknowledgments_counted_total")
            })
            .map(String::from)
            .collect()
    };
    let expected = |counts: &[(&str, &str, u64)], all: u64, acks: u64| -> Vec<String> {
        let mut lines = Vec::new();
        for kind in kinds {
            for outcome in ["2xx", "3xx", "4xx", "5xx"] {
                let n = counts
                    .iter()
                    .find(|(k, o, _)| *k == kind && *o == outcome)
                    .map_or(0, |c| c.2);
                lines.push(format!(
                    "ibi_archive_requests_total{{kind=\"{kind}\",outcome=\"{outcome}\"}} {n}"
                ));
            }
        }
        lines.push(format!("ibi_archive_request_seconds_count {all}"));
        lines.push(format!("ibi_archive_acknowledgments_counted_total {acks}"));
        lines
    };
    let first = metrics();
    assert_eq!(series(&first), expected(&[], 0, 0), "{first}");
    assert!(
        first.contains(&format!(
            "\nibi_archive_build_info{{version=\"{}\"}} 1\n",
            env!("CARGO_PKG_VERSION")
        )),
        "{first}"
    );
    assert!(first.contains("\nprocess_open_fds "), "{first}");
    assert!(first.ends_with("\n# EOF\n"), "{first}");

    let service_url = format!("{base}/{SERVICE}");
    let get = |url: &str| common::http_get(url).status;
    let r = common::http_get(&format!(
        "{service_url}?servicesubject=urlRequest&clientinformation.ipaddress=150.163.2.175&parsedibiurl.ibi=8JMKD3MGP7W/3EPGUE5"
    ));
    assert_eq!(r.status, 200, "{}", r.text());
    let (_, key) = mask_urlkey(&r.text());
    let key = key.expect("a urlkey");
    let file =
        format!("{base}/col/sid.inpe.br/mtc-m19/2013/09.04.12.27.57/doc/Relat%f3rio%20Final.pdf");
    assert_eq!(get(&file), 200);
    assert_eq!(
        get(&format!(
            "{base}/col/sid.inpe.br/mtc-m19/2013/09.04.12.27.57/doc/none.pdf"
        )),
        404
    );
    let ack = format!(
        "{service_url}?servicesubject=acknowledgment&clientinformation.ipaddress=150.163.2.175&contenttype=Data&\
         ibi=rep%20sid.inpe.br/mtc-m19/2013/09.04.12.27.57%20ibip%208JMKD3MGP7W/3EPGUE5&\
         url=http://{addr}/col/sid.inpe.br/mtc-m19/2013/09.04.12.27.57/doc/Relat%f3rio%20Final.pdf&\
         url.persistent=http://urlib.net:80/8JMKD3MGP7W/3EPGUE5&urlkey={key}"
    );
    assert_eq!(get(&ack), 200);
    assert_eq!(get(&ack), 200);
    assert_eq!(
        get(&format!(
            "{service_url}?servicesubject=inclusionConfirmationRequest"
        )),
        200
    );
    assert_eq!(get(&format!("{service_url}?verb=Identify")), 200);
    assert_eq!(get(&format!("{service_url}?servicesubject=nothing")), 400);
    assert_eq!(get(&format!("{base}/nowhere")), 404);

    let after = metrics();
    assert_eq!(
        series(&after),
        expected(
            &[
                ("url_request", "2xx", 1),
                ("file", "2xx", 1),
                ("file", "4xx", 1),
                ("acknowledgment", "2xx", 2),
                ("confirmation", "2xx", 1),
                ("oai", "2xx", 1),
                ("other", "4xx", 2),
            ],
            9,
            1
        ),
        "{after}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("var/acknowledgments.log"))
            .unwrap()
            .lines()
            .count(),
        1
    );
    assert!(serve.interrupt().success());
}
