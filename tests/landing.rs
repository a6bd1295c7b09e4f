//! The landing page of an item (`…/filelist/<rep>`), the same through `ibi-archive serve`,
//! Apache and lighttpd: its Signposting `Link` header (worked out by hand) and every link
//! of it followed, answering 200 with the type it announces; its schema.org JSON-LD
//! (worked out by hand), served for `Accept: application/ld+json` and expanded by a
//! JSON-LD processor (pyld) into the schema.org IRIs; its language by Accept-Language; a
//! restricted item's page inside and outside the licensed networks; tombstones that keep
//! the citation, with and without their metadata item; an item of 10,050 files answered
//! in bounded work.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use common::{run_cmd, Response, Serve};
use serde_json::json;

const SERVICE: &str = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17";
/// An item with a metadata item and a translation.
const PLAIN: &str = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23";
/// An item with a next edition.
const EDITION: &str = "sid.inpe.br/mtc-m18@80/2009/07.21.14.43";
const RESTRICTED: &str = "sid.inpe.br/mtc-m19/2014/05.06.07.08";
/// The sample's tombstone, with a reason and no metadata item.
const TOMBSTONE: &str = "sid.inpe.br/mtc-m19/2013/02.10.11.12";
/// A tombstone whose metadata item is still there.
const GONE_WITH_METADATA: &str = "sid.inpe.br/mtc-m19/2015/07.01.00.00";
const MANY: &str = "example.org/many/2020/01.01.00.00";
/// Files of MANY: more than the 10,000 entries a listing reads.
const MANY_FILES: usize = 10_050;
const RESOLVER: &str = "http://localhost:8090";
/// An item whose metadata item has long URLs: its target nested deep in folders of long
/// names, its record's licence a long URL.
const LONG: &str = "example.org/long/2020/01.01.00.00";
const LONG_META: &str = "example.org/long/2020/01.01.00.01";
/// An item whose metadata item's record has a name stored as Latin-1 bytes, as older
/// Archives store names, and given as UTF-8 in its item.toml.
const LATIN: &str = "example.org/latin/2020/01.01.00.00";
const LATIN_META: &str = "example.org/latin/2020/01.01.00.01";
/// A folder name of 240 bytes (120 `é`), and the target of [`LONG_META`] 14 of them deep.
fn long_folder() -> String {
    "é".repeat(120)
}
/// [`LONG_META`]'s licence URL, 988 bytes long.
fn long_licence() -> String {
    format!("https://example.org/l/{}", "é".repeat(483))
}

fn inside() -> IpAddr {
    "127.0.0.1".parse().unwrap()
}

fn outside() -> IpAddr {
    "127.0.0.2".parse().unwrap()
}

/// sample-archive/ with only 127.0.0.1 licensed, a tombstone whose metadata item is still
/// there, and an item of [`MANY_FILES`] files.
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
    let gone = root.join("col").join(GONE_WITH_METADATA);
    std::fs::create_dir_all(&gone).unwrap();
    std::fs::write(
        gone.join("item.toml"),
        "state     = \"Deleted\"\n\
         timestamp = 2015-07-01T10:00:00Z\n\
         metadata  = \"sid.inpe.br/mtc-m18/2012/07.12.18.08.49\"\n\
         reason    = \"A copy of <b>8JMKD3MGP8W/3C9EP6P</b> & nothing more\"\n",
    )
    .unwrap();
    let many = root.join("col").join(MANY);
    std::fs::create_dir_all(many.join("doc")).unwrap();
    std::fs::write(
        many.join("item.toml"),
        "state = \"Original\"\ntarget = \"f00000.txt\"\n",
    )
    .unwrap();
    for i in 0..MANY_FILES {
        std::fs::write(many.join(format!("doc/f{i:05}.txt")), b"x").unwrap();
    }
    let dc = |title: &str, rights: &str| {
        format!("<oai_dc:dc xmlns:oai_dc=\"http://www.openarchives.org/OAI/2.0/oai_dc/\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:title>{title}</dc:title>{rights}</oai_dc:dc>\n")
    };
    for (item, meta) in [(LONG, LONG_META), (LATIN, LATIN_META)] {
        let dir = root.join("col").join(item);
        std::fs::create_dir_all(dir.join("doc")).unwrap();
        std::fs::write(dir.join("doc/x.txt"), b"x").unwrap();
        std::fs::write(
            dir.join("item.toml"),
            format!("state = \"Original\"\ntarget = \"x.txt\"\nmetadata = \"{meta}\"\n"),
        )
        .unwrap();
    }
    let long = root.join("col").join(LONG_META);
    let deep = vec![long_folder(); 14].join("/");
    std::fs::create_dir_all(long.join("doc").join(&deep)).unwrap();
    std::fs::write(long.join("doc").join(&deep).join("m.html"), "<p>m</p>\n").unwrap();
    std::fs::write(
        long.join("doc/oai_dc.xml"),
        dc(
            "Long",
            &format!("<dc:rights>{}</dc:rights>", long_licence()),
        ),
    )
    .unwrap();
    std::fs::write(
        long.join("item.toml"),
        format!("state = \"Original\"\ncontenttype = \"Metadata\"\ntarget = \"{deep}/m.html\"\n[formats]\noai_dc = \"oai_dc.xml\"\n"),
    )
    .unwrap();
    let latin = root.join("col").join(LATIN_META);
    std::fs::create_dir_all(latin.join("doc")).unwrap();
    {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::OsStr::from_bytes(b"registro-\xe9.xml");
        std::fs::write(latin.join("doc").join(name), dc("Registro em Latin-1", "")).unwrap();
    }
    std::fs::write(
        latin.join("item.toml"),
        "state = \"Original\"\ncontenttype = \"Metadata\"\ntarget = \"registro-é.xml\"\n[formats]\noai_dc = \"registro-é.xml\"\n",
    )
    .unwrap();
    let (code, out, err) = run_cmd(&["check", "--root", root.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    common::prepare_archive(&root);
    (tmp, root)
}

/// GET `path` from `from` with `headers`.
fn get(from: IpAddr, base: &str, path: &str, headers: &[(&str, &str)]) -> Response {
    let authority = base.trim_start_matches("http://");
    let mut req = format!(
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: ibi-archive-tests\r\nConnection: close\r\n"
    );
    for (name, value) in headers {
        req.push_str(&format!("{name}: {value}\r\n"));
    }
    req.push_str("\r\n");
    common::http_raw_from(Some(from), authority, req.as_bytes(), false)
}

fn landing(rep: &str) -> String {
    format!("/{SERVICE}/filelist/{rep}")
}

/// The two `rel="linkset"` links of the landing page of `rep`, as its `Link` header
/// writes them.
fn linkset_links(base: &str, rep: &str) -> String {
    let page = format!("{base}{}", landing(rep));
    format!(
        "<{page}?format=linkset-json>; rel=\"linkset\"; type=\"application/linkset+json\", \
         <{page}?format=linkset>; rel=\"linkset\"; type=\"application/linkset\""
    )
}

/// The links of a `Link` header: (target, rel, type).
fn links(header: &str) -> Vec<(String, String, Option<String>)> {
    let param = |part: &str, name: &str| {
        part.split("; ")
            .find_map(|p| p.strip_prefix(&format!("{name}=\"")))
            .map(|v| v.trim_end_matches('"').to_string())
    };
    header
        .split(", <")
        .map(|l| {
            let l = l.trim_start_matches('<');
            let (target, params) = l.split_once('>').unwrap();
            (
                target.to_string(),
                param(params, "rel").unwrap(),
                param(params, "type"),
            )
        })
        .collect()
}

/// The fields a Vary header names (Apache writes the list without spaces).
fn vary(r: &Response) -> Vec<&str> {
    r.header("vary")
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .collect()
}

/// The media type of a Content-Type, without its parameters.
fn media_type(content_type: &str) -> &str {
    content_type.split(';').next().unwrap_or("").trim()
}

/// Follows every link of `page`'s Link header that leads into this Archive (the
/// persistent URL leads to the resolver, the types are schema.org's names): each answers
/// 200 with the type announced; a file's own links are followed too. Returns the links.
fn follow_signposting(base: &str, page: &Response, log: &dyn Fn() -> String) -> usize {
    let header = page.header("link").expect("a Link header");
    let mut followed = 0;
    for (target, rel, announced) in links(header) {
        match rel.as_str() {
            "cite-as" => assert!(target.starts_with(RESOLVER), "{target}"),
            "type" => assert!(target.starts_with("https://schema.org/"), "{target}"),
            "describedby" | "item" | "collection" | "linkset" => {
                let path = target
                    .strip_prefix(base)
                    .unwrap_or_else(|| panic!("{target}"));
                let r = get(inside(), base, path, &[]);
                let announced = announced.unwrap_or_else(|| panic!("{rel} {target}: no type"));
                assert_eq!(
                    (r.status, media_type(r.content_type())),
                    (200, announced.as_str()),
                    "{rel} {target}\n{}",
                    log()
                );
                followed += 1;
                if rel == "item" {
                    followed += follow_signposting(base, &r, log);
                }
            }
            other => panic!("unexpected rel {other} in {header}"),
        }
    }
    followed
}

/// The JSON-LD block of an HTML page, its escapes undone.
fn embedded_json_ld(page: &str) -> String {
    let start = page
        .find("<script type=\"application/ld+json\">\n")
        .unwrap();
    let rest = &page[start + "<script type=\"application/ld+json\">\n".len()..];
    let json = &rest[..rest.find("\n</script>").unwrap()];
    assert!(!json.contains('<'));
    json.to_string()
}

fn suite(base: &str, root: &Path, log: &dyn Fn() -> String) {
    // The service answers for the Archive as the server reaches it.
    let addr = base.trim_start_matches("http://");
    let toml = std::fs::read_to_string(root.join("archive.toml")).unwrap();
    let toml = toml.replace("\"localhost:8080\"", &format!("\"{addr}\""));
    std::fs::write(root.join("archive.toml"), toml).unwrap();
    let html = [("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")];
    let ld = [("Accept", "application/ld+json")];
    let plain_id = format!("{RESOLVER}/8JMKD3MGP8W/35MME4E");
    let meta = format!("{base}/col/{PLAIN}.47/doc");
    let pdf = format!("{base}/col/{PLAIN}/doc/CCSDS%20643.0-B-1.pdf");

    // A plain item: its Signposting, by hand.
    let page = get(inside(), base, &landing(PLAIN), &html);
    assert_eq!(page.status, 200, "{}", log());
    let want_links = format!(
        "<{plain_id}>; rel=\"cite-as\", {}, \
         <https://schema.org/AboutPage>; rel=\"type\", \
         <https://schema.org/CreativeWork>; rel=\"type\", \
         <{meta}/oai_dc.xml>; rel=\"describedby\"; type=\"application/xml\"; profile=\"http://www.openarchives.org/OAI/2.0/oai_dc/\", \
         <{meta}/metadata.html>; rel=\"describedby\"; type=\"text/html\", \
         <{pdf}>; rel=\"item\"; type=\"application/pdf\"",
        linkset_links(base, PLAIN)
    );
    assert_eq!(page.header("link"), Some(want_links.as_str()));
    assert_eq!(vary(&page), ["Accept", "Accept-Language"]);
    for (name, value) in [
        ("content-type", "text/html; charset=utf-8"),
        ("content-language", "en"),
        (
            "content-security-policy",
            "default-src 'none'; style-src 'unsafe-inline'",
        ),
        ("x-content-type-options", "nosniff"),
    ] {
        assert_eq!(page.header(name), Some(value), "{name}");
    }
    let text = page.text();
    for part in [
        "<html lang=\"en\">\n".to_string(),
        "<h1>Space Link Identifiers</h1>\n".to_string(),
        format!("<p class=\"cite\">CCSDS. (n.d.). Space Link Identifiers. {plain_id}</p>\n"),
        format!("<link rel=\"cite-as\" href=\"{plain_id}\">\n"),
        format!("<link rel=\"describedby\" href=\"{meta}/oai_dc.xml\" type=\"application/xml\">\n"),
        format!("<link rel=\"item\" href=\"{pdf}\" type=\"application/pdf\">\n"),
        "<dt>Creators</dt><dd>CCSDS</dd>\n".to_string(),
        format!("<li>Translation (<span lang=\"pt\">pt</span>): <a href=\"{RESOLVER}/{p}\" hreflang=\"pt\">{RESOLVER}/{p}</a></li>\n", p = "sid.inpe.br/mtc-m18@80/2009/08.25.19.43"),
    ] {
        assert!(text.contains(&part), "{part}\nnot in\n{text}");
    }
    // Every link followed: the two linksets, the two formats, the file, and the file's
    // landing page and linksets.
    assert_eq!(follow_signposting(base, &page, log), 8);

    // Its JSON-LD, by hand: alone for a client that prefers it, the same in the page.
    let want_json = format!(
        r#"{{
  "@context": {{
    "@vocab": "https://schema.org/"
  }},
  "@type": "CreativeWork",
  "@id": "{plain_id}",
  "identifier": "{plain_id}",
  "url": "{plain_id}",
  "name": "Space Link Identifiers",
  "creator": [
    {{
      "@type": "Organization",
      "name": "CCSDS"
    }}
  ],
  "inLanguage": "en",
  "dateModified": "2009-07-21T13:23:45Z",
  "encoding": [
    {{
      "@type": "MediaObject",
      "name": "CCSDS 643.0-B-1.pdf",
      "contentUrl": "{pdf}",
      "encodingFormat": "application/pdf",
      "contentSize": "614 bytes"
    }}
  ],
  "workTranslation": [
    {{
      "@id": "{RESOLVER}/sid.inpe.br/mtc-m18@80/2009/08.25.19.43",
      "inLanguage": "pt"
    }}
  ]
}}
"#
    );
    for accept in [
        "application/ld+json",
        "application/ld+json; profile=\"https://schema.org\"",
        "text/html;q=0.5, application/ld+json",
    ] {
        let r = get(inside(), base, &landing(PLAIN), &[("Accept", accept)]);
        assert_eq!(
            (r.status, r.content_type(), r.text()),
            (200, "application/ld+json", want_json.clone()),
            "{accept}"
        );
        assert_eq!(r.header("link"), Some(want_links.as_str()));
        assert_eq!(vary(&r), ["Accept", "Accept-Language"]);
    }
    assert_eq!(embedded_json_ld(&text) + "\n", want_json);
    // Expanded by a JSON-LD processor: the schema.org terms by their IRIs.
    if let Some(expanded) = common::jsonld::expanded(&want_json) {
        let s = |v: &str| json!([{ "@value": v }]);
        assert_eq!(
            expanded,
            json!([{
                "@id": plain_id,
                "@type": ["https://schema.org/CreativeWork"],
                "https://schema.org/identifier": s(&plain_id),
                "https://schema.org/url": s(&plain_id),
                "https://schema.org/name": s("Space Link Identifiers"),
                "https://schema.org/creator": [{
                    "@type": ["https://schema.org/Organization"],
                    "https://schema.org/name": s("CCSDS"),
                }],
                "https://schema.org/inLanguage": s("en"),
                "https://schema.org/dateModified": s("2009-07-21T13:23:45Z"),
                "https://schema.org/encoding": [{
                    "@type": ["https://schema.org/MediaObject"],
                    "https://schema.org/name": s("CCSDS 643.0-B-1.pdf"),
                    "https://schema.org/contentUrl": s(&pdf),
                    "https://schema.org/encodingFormat": s("application/pdf"),
                    "https://schema.org/contentSize": s("614 bytes"),
                }],
                "https://schema.org/workTranslation": [{
                    "@id": format!("{RESOLVER}/sid.inpe.br/mtc-m18@80/2009/08.25.19.43"),
                    "https://schema.org/inLanguage": s("pt"),
                }],
            }])
        );
    }

    // In Portuguese for a reader who prefers it.
    let pt = get(
        inside(),
        base,
        &landing(PLAIN),
        &[("Accept-Language", "pt-BR,pt;q=0.9,en;q=0.8")],
    );
    assert_eq!(pt.header("content-language"), Some("pt-BR"));
    let text = pt.text();
    for part in [
        "<html lang=\"pt-BR\">\n",
        "<h2>Como citar</h2>\n",
        "<dt>Autoria</dt><dd>CCSDS</dd>\n",
        "<td>614 bytes</td>",
    ] {
        assert!(text.contains(part), "{part}\nnot in\n{text}");
    }

    // An item with a next edition: linked, and in its JSON-LD the next edition is based
    // on it.
    let r = get(inside(), base, &landing(EDITION), &ld);
    assert_eq!(r.status, 200, "{}", log());
    let next = format!("{RESOLVER}/sid.inpe.br/mtc-m18/2012/07.12.18.08");
    assert!(r.text().ends_with(&format!(
        "  \"@reverse\": {{\n    \"isBasedOn\": {{\n      \"@id\": \"{next}\"\n    }}\n  }}\n}}\n"
    )));
    if let Some(expanded) = common::jsonld::expanded(&r.text()) {
        assert_eq!(
            expanded[0]["@reverse"],
            json!({ "https://schema.org/isBasedOn": [{ "@id": next }] })
        );
    }
    let page = get(inside(), base, &landing(EDITION), &[]);
    assert!(page.text().contains(&format!(
        "<li>Next edition: <a href=\"{next}\">{next}</a></li>\n"
    )));
    assert_eq!(follow_signposting(base, &page, log), 6);

    // A restricted item: its files listed inside the licensed networks only; its
    // metadata and citation for every reader.
    let restricted_id = format!("{RESOLVER}/{RESTRICTED}");
    let meta = format!("{base}/col/{RESTRICTED}.09/doc");
    let described = format!(
        "<{restricted_id}>; rel=\"cite-as\", {}, \
         <https://schema.org/AboutPage>; rel=\"type\", \
         <https://schema.org/CreativeWork>; rel=\"type\", \
         <{meta}/oai_dc.xml>; rel=\"describedby\"; type=\"application/xml\"; profile=\"http://www.openarchives.org/OAI/2.0/oai_dc/\", \
         <{meta}/metadata.html>; rel=\"describedby\"; type=\"text/html\"",
        linkset_links(base, RESTRICTED)
    );
    let out = get(outside(), base, &landing(RESTRICTED), &[]);
    assert_eq!(out.status, 200, "{}", log());
    assert_eq!(out.header("link"), Some(described.as_str()));
    assert!(out.text().contains("<h1>A published article under a publisher licence</h1>\n<h2>How to cite</h2>\n<p class=\"cite\">A published article under a publisher licence. "));
    assert!(out.text().contains("<h2>Files</h2>\n<p>The files of this item are open only to the networks the Archive licenses.</p>\n"));
    assert!(!out.text().contains("article.pdf"));
    assert_eq!(follow_signposting(base, &out, log), 4);
    let inside_page = get(inside(), base, &landing(RESTRICTED), &[]);
    assert_eq!(
        inside_page.header("link"),
        Some(
            format!(
                "{described}, <{base}/col/{RESTRICTED}/doc/article.pdf>; rel=\"item\"; type=\"application/pdf\""
            )
            .as_str()
        )
    );
    assert_eq!(follow_signposting(base, &inside_page, log), 8);

    // The sample's tombstone: 410, the citation, the removal date and the reason.
    let tomb_id = format!("{RESOLVER}/{TOMBSTONE}");
    let gone = get(inside(), base, &landing(TOMBSTONE), &[]);
    assert_eq!(gone.status, 410, "{}", log());
    assert_eq!(
        gone.header("link"),
        Some(
            format!(
                "<{tomb_id}>; rel=\"cite-as\", {}, <https://schema.org/AboutPage>; rel=\"type\", <https://schema.org/CreativeWork>; rel=\"type\"",
                linkset_links(base, TOMBSTONE)
            )
            .as_str()
        )
    );
    let text = gone.text();
    for part in [
        format!("<h1>Item {TOMBSTONE}</h1>\n<p class=\"gone\">This item has been removed from the Archive. Its persistent URL still cites it.</p>\n"),
        format!("<p class=\"cite\">{TOMBSTONE}. (n.d.). {tomb_id}</p>\n"),
        "<dt>Removed on</dt><dd><time datetime=\"2014-01-02T17:23:57Z\">2014-01-02</time></dd>\n<dt>Reason</dt><dd>Withdrawn at the authors&#39; request</dd>\n<dt>Accesses</dt><dd>0</dd>\n</dl>\n</main>\n".to_string(),
    ] {
        assert!(text.contains(&part), "{part}\nnot in\n{text}");
    }
    let r = get(inside(), base, &landing(TOMBSTONE), &ld);
    let want = format!(
        r#"{{
  "@context": {{
    "@vocab": "https://schema.org/"
  }},
  "@type": "CreativeWork",
  "@id": "{tomb_id}",
  "identifier": "{tomb_id}",
  "url": "{tomb_id}",
  "dateModified": "2014-01-02T17:23:57Z",
  "creativeWorkStatus": "Deleted",
  "expires": "2014-01-02T17:23:57Z",
  "correction": {{
    "@type": "CorrectionComment",
    "text": "Withdrawn at the authors' request",
    "datePublished": "2014-01-02T17:23:57Z"
  }}
}}
"#
    );
    assert_eq!(
        (r.status, r.content_type(), r.text()),
        (410, "application/ld+json", want.clone())
    );
    if let Some(expanded) = common::jsonld::expanded(&want) {
        assert_eq!(
            expanded[0]["https://schema.org/creativeWorkStatus"],
            json!([{ "@value": "Deleted" }])
        );
        assert_eq!(
            expanded[0]["https://schema.org/correction"][0]["https://schema.org/text"],
            json!([{ "@value": "Withdrawn at the authors' request" }])
        );
    }

    // A tombstone whose metadata item is still there keeps its title and creators; its
    // reason is text.
    let gone = get(
        inside(),
        base,
        &landing(GONE_WITH_METADATA),
        &[("Accept-Language", "pt")],
    );
    assert_eq!(gone.status, 410, "{}", log());
    let text = gone.text();
    let id = format!("{RESOLVER}/{GONE_WITH_METADATA}");
    for part in [
        "<h1>Reference Model for an Open Archival Information System (OAIS)</h1>\n<p class=\"gone\">Este item foi removido do Arquivo. Sua URL persistente continua a citá-lo.</p>\n".to_string(),
        format!("<p class=\"cite\">CCSDS. (2012). Reference Model for an Open Archival Information System (OAIS). {id}</p>\n"),
        "<dt>Motivo</dt><dd>A copy of &lt;b&gt;8JMKD3MGP8W/3C9EP6P&lt;/b&gt; &amp; nothing more</dd>\n".to_string(),
        "\"text\": \"A copy of \\u003cb\\u003e8JMKD3MGP8W/3C9EP6P\\u003c/b\\u003e \\u0026 nothing more\",\n".to_string(),
    ] {
        assert!(text.contains(&part), "{part}\nnot in\n{text}");
    }
    assert!(!text.contains("<h2>Arquivos</h2>"));
    assert_eq!(follow_signposting(base, &gone, log), 4);

    // 10,050 files: 100 shown, 32 announced, what was left out said; the listing read its
    // 10,000 entries and stopped.
    let many = get(inside(), base, &landing(MANY), &[]);
    assert_eq!(many.status, 200, "{}", log());
    let text = many.text();
    assert_eq!(text.matches("<tr><th scope=\"row\">").count(), 100);
    assert!(text.contains(
        "doc/f00099.txt\" type=\"text/plain\">f00099.txt</a></th><td>1 byte</td><td>text/plain</td></tr>\n</tbody>\n</table>\n<p>… and more than 9900 entries not listed here.</p>\n"
    ));
    assert_eq!(text.matches("\"@type\": \"MediaObject\"").count(), 100);
    assert!(text.len() < 100_000, "{} bytes", text.len());
    let header = many.header("link").unwrap();
    assert!(header.len() <= 6000, "{} bytes", header.len());
    let items = links(header)
        .into_iter()
        .filter(|(_, rel, _)| rel == "item")
        .count();
    assert_eq!(items, 32);
    assert_eq!(text.matches("<link rel=\"item\"").count(), 32);

    // A metadata item's long URLs: the Link header stays under its bound all the same
    // (a web server refuses a longer header line of the program), the link that would
    // pass it left out of the header and of the page's <link> elements; the page still
    // links to it.
    let page = get(inside(), base, &landing(LONG), &html);
    assert_eq!(page.status, 200, "{}", log());
    let header = page.header("link").unwrap_or_default();
    assert!(header.len() <= 6000, "{} bytes: {header}", header.len());
    let licence = format!("https://example.org/l/{}", "%C3%A9".repeat(483));
    let long_meta = format!("{base}/col/{LONG_META}/doc");
    assert_eq!(
        links(header),
        [
            (format!("{RESOLVER}/{LONG}"), "cite-as".into(), None),
            (
                format!("{base}{}?format=linkset-json", landing(LONG)),
                "linkset".into(),
                Some("application/linkset+json".into())
            ),
            (
                format!("{base}{}?format=linkset", landing(LONG)),
                "linkset".into(),
                Some("application/linkset".into())
            ),
            ("https://schema.org/AboutPage".into(), "type".into(), None),
            (
                "https://schema.org/CreativeWork".into(),
                "type".into(),
                None
            ),
            (
                format!("{long_meta}/oai_dc.xml"),
                "describedby".into(),
                Some("application/xml".into())
            ),
            (licence.clone(), "license".into(), None),
            (
                format!("{base}/col/{LONG}/doc/x.txt"),
                "item".into(),
                Some("text/plain".into())
            ),
        ]
    );
    let text = page.text();
    assert_eq!(text.matches("<link rel=").count(), 8, "{text}");
    let folder = "%c3%a9".repeat(120);
    let target = format!("{long_meta}/{}/m.html", vec![folder; 14].join("/"));
    assert!(
        text.contains(&format!(
            "<li><a href=\"{target}\" type=\"text/html\">Metadata page</a></li>\n"
        )),
        "{text}"
    );

    // A record stored under a Latin-1 name is read as it is served.
    let page = get(inside(), base, &landing(LATIN), &html);
    assert_eq!(page.status, 200, "{}", log());
    let text = page.text();
    assert!(text.contains("<h1>Registro em Latin-1</h1>\n"), "{text}");
    assert!(
        text.contains(&format!("<link rel=\"describedby\" href=\"{base}/col/{LATIN_META}/doc/registro-%e9.xml\" type=\"application/xml\">\n")),
        "{text}"
    );
}

#[test]
fn serve_answers_landing_pages() {
    let (_tmp, root) = archive();
    let log_path = root.parent().unwrap().join("serve.log");
    let serve = Serve::start(&root, std::fs::File::create(&log_path).unwrap());
    suite(&serve.base_url(), &root, &|| {
        std::fs::read_to_string(&log_path).unwrap_or_default()
    });
}

#[test]
fn apache2_answers_landing_pages() {
    if !common::apache2_available() {
        eprintln!("skipping: apache2 with mod_cgid is not installed");
        return;
    }
    let (_tmp, root) = archive();
    let server = common::start_apache2(&root, &common::ibi_archive_bin(), SERVICE);
    suite(&server.base_url, &root, &|| server.error_log());
}

#[test]
fn lighttpd_answers_landing_pages() {
    if !common::lighttpd_available() {
        eprintln!("skipping: lighttpd is not installed");
        return;
    }
    let (_tmp, root) = archive();
    let server = common::start_lighttpd(&root, &common::ibi_archive_bin(), SERVICE);
    suite(&server.base_url, &root, &|| server.error_log());
}

/// The landing pages as a reader's browser shows them, in Portuguese and in English, at a
/// phone's and a desktop's width (the screenshots are kept among the test artefacts): an
/// item, one with a next edition, the restricted item (from a licensed network) and both
/// tombstones; none with a serious or critical accessibility fault.
#[test]
fn landing_pages_in_a_browser_are_accessible_in_both_languages() {
    if !common::browser::available() {
        eprintln!("skipping: {}", common::browser::MISSING);
        return;
    }
    let (_tmp, root) = archive();
    // The repository's face: its name, institution, contact and logo (a file of the
    // service item), and a work with an abstract, a publisher, a licence and a language,
    // whose metadata pages `new` writes in Portuguese and in English.
    let toml = std::fs::read_to_string(root.join("archive.toml")).unwrap();
    std::fs::write(
        root.join("archive.toml"),
        format!(
            "{toml}\n[oai]\nrepositoryname = \"Biblioteca Digital <URLib> & Co\"\n\
             [site]\ninstitution = \"Instituto Nacional de Pesquisas Espaciais\"\n\
             contact = \"biblioteca@inpe.example.org\"\nlogo = \"logo.svg\"\n"
        ),
    )
    .unwrap();
    let service_doc = root.join("col").join(SERVICE).join("doc");
    std::fs::create_dir_all(&service_doc).unwrap();
    std::fs::write(
        service_doc.join("logo.svg"),
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"96\" height=\"48\"><rect width=\"96\" height=\"48\" rx=\"8\" fill=\"#fff\"/><text x=\"48\" y=\"32\" font-size=\"22\" text-anchor=\"middle\" fill=\"#0b3d91\">INPE</text></svg>\n",
    )
    .unwrap();
    let paper = root.parent().unwrap().join("paper.txt");
    std::fs::write(&paper, "The paper.\n").unwrap();
    let mut works = Vec::new();
    for (lang, title) in [
        ("pt-BR", "Análise de \"dados\" & {chaves} do satélite"),
        ("en", "Analysis of satellite \"data\" & {keys}"),
    ] {
        let pairs = common::pairs_of_run(&[
            "new",
            "--root",
            root.to_str().unwrap(),
            "--title",
            title,
            "--creator",
            "Müller, José",
            "--creator",
            "D'Ávila, Ana",
            "--description",
            "Um resumo com <marcas> & linhas.\nSegunda linha do resumo.",
            "--publisher",
            "INPE",
            "--type",
            "Text",
            "--date",
            "2021-03-04",
            "--rights",
            "https://creativecommons.org/licenses/by/4.0/",
            "--language",
            lang,
            paper.to_str().unwrap(),
        ]);
        let value = |name: &str| {
            pairs
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
                .unwrap()
        };
        works.push((lang, title, value("rep"), value("metadata.rep")));
    }
    let log_path = root.parent().unwrap().join("serve.log");
    let serve = Serve::start(&root, std::fs::File::create(&log_path).unwrap());
    let toml = std::fs::read_to_string(root.join("archive.toml")).unwrap();
    std::fs::write(
        root.join("archive.toml"),
        toml.replace("\"localhost:8080\"", &format!("\"{}\"", serve.address)),
    )
    .unwrap();
    // The metadata pages, each in the language `new` wrote it in.
    for (lang, title, _, meta) in &works {
        let url = format!("{}/col/{meta}/doc/metadata.html", serve.base_url());
        let name = format!("metadata-page-{lang}");
        let report = common::browser::check(&url, lang, &name);
        assert_eq!(report.status, 200, "{url}");
        let heading = match *lang {
            "pt-BR" => "Metadados",
            _ => "Metadata",
        };
        assert_eq!(report.title, format!("{heading}: {title}"));
        report.assert_accessible();
    }
    let work = works[0].2.clone();
    let mut pages = vec![(work.as_str(), "work", 200, works[0].1)];
    pages.extend([
        (PLAIN, "item", 200, "Space Link Identifiers"),
        (EDITION, "edition", 200, "Item 8JMKD3MGP8W/35MMLL8"),
        (
            RESTRICTED,
            "restricted",
            200,
            "A published article under a publisher licence",
        ),
        (
            TOMBSTONE,
            "tombstone",
            410,
            "Item sid.inpe.br/mtc-m19/2013/02.10.11.12",
        ),
        (
            GONE_WITH_METADATA,
            "tombstone-cited",
            410,
            "Reference Model for an Open Archival Information System (OAIS)",
        ),
    ]);
    for (rep, name, status, title) in pages {
        let url = format!("{}{}", serve.base_url(), landing(rep));
        for lang in ["pt-BR", "en"] {
            let report = common::browser::check(&url, lang, &format!("landing-{name}-{lang}"));
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            assert_eq!(report.status, status, "{url} ({lang})\n{log}");
            assert_eq!(report.title, title, "{url} ({lang})");
            assert_eq!(report.final_url, url);
            assert_eq!(report.screenshots.len(), 3);
            report.assert_accessible();
        }
    }
}
