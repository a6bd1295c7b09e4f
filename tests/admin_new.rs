//! `ibi-archive new`: items minted and stored whole, answering through the real CGI right
//! after creation (plain, translation, next edition, metadata), parallel runs, copies,
//! and the refusals.

use std::collections::BTreeSet;
use std::path::Path;

use common::{mask_urlkey, pair_value, run_cmd, Cgi, Fixture};

const SERVICE: &str = "ibi.archiveservice {rep sid.inpe.br/mtc-m18@80/2008/03.17.15.17}";
const PLATFORM: &str = "ibi.platformsoftware {rep dpi.inpe.br/banon/1998/08.02.08.56}";

/// The sample Archive, minting at r = 0.01 s (so parallel runs do not wait a second each).
fn archive() -> Fixture {
    let f = Fixture::sample();
    let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
    assert!(toml.contains("granularity = 1\n"));
    f.write(
        "archive.toml",
        toml.replace("granularity = 1\n", "granularity = 0.01\n")
            .as_bytes(),
    );
    f
}

/// Input files, outside the Archive.
fn inputs(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// Runs `new` and returns its pairs (name → value).
fn new(root: &Path, args: &[&str]) -> Vec<(String, String)> {
    let mut all = vec!["new", "--root", root.to_str().unwrap()];
    all.extend_from_slice(args);
    common::pairs_of_run(&all)
}

/// Runs a `new` that must succeed: the rep it printed, and what it noted on stderr.
fn new_noting(args: &[&str]) -> (String, String) {
    let (code, out, err) = run_cmd(args);
    assert_eq!(code, 0, "{err}");
    let pairs = common::pairs_of(out.trim_end());
    (pair_value(&pairs, "rep").to_string(), err)
}

/// The `timestamp = …` line of an item.toml.
fn timestamp(root: &Path, rep: &str) -> String {
    let text = std::fs::read_to_string(root.join("col").join(rep).join("item.toml")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("timestamp"))
        .map(|l| l.trim_start().trim_start_matches('=').trim().to_string())
        .unwrap()
}

fn item_toml(root: &Path, rep: &str) -> String {
    std::fs::read_to_string(root.join("col").join(rep).join("item.toml")).unwrap()
}

fn url_request(root: &Path, ibi: &str, verbs: &str) -> String {
    let mut q = format!(
        "servicesubject=urlRequest&clientinformation.ipaddress=127.0.0.1&parsedibiurl.ibi={ibi}"
    );
    if !verbs.is_empty() {
        q.push_str("&parsedibiurl.verblist=");
        q.push_str(verbs);
    }
    let out = Cgi::get(root, &q).run();
    assert_eq!(out.status, 200);
    assert_eq!(out.stderr, "", "{q}");
    mask_urlkey(&out.text()).0
}

fn lines(list: &[&str]) -> String {
    list.join("\r\n")
}

/// The IBIp of a minted rep: same date, prefix of 127.0.0.1 with the implicit port 800
/// (`ibipport` left at its default), as in the standard's LK47B6W/362SFKH.
fn assert_minted(rep: &str, ibip: &str) {
    assert!(rep.starts_with("example.org/archive/"), "{rep}");
    assert!(ibip.starts_with("LK47B6W/"), "{ibip}");
    let (_, out, _) = run_cmd(&["ibi", ibip]);
    let (_, out2, _) = run_cmd(&["ibi", rep]);
    let date = |t: &str| {
        t.lines()
            .find_map(|l| l.strip_prefix("date "))
            .unwrap()
            .to_string()
    };
    assert_eq!(
        date(&out),
        date(&out2),
        "{rep} and {ibip} code different dates"
    );
}

#[test]
fn new_items_answer_through_the_service_at_once() {
    let f = archive();
    let root = f.root();
    let files = inputs(&[
        ("report.pdf", "%PDF-1.4 report"),
        ("notes.txt", "notes"),
        ("relatorio.pdf", "%PDF-1.4 relatório"),
        ("report-v2.pdf", "%PDF-1.4 second edition"),
        ("data.csv", "a,b\n1,2\n"),
    ]);
    let p = |n: &str| files.path().join(n).to_str().unwrap().to_string();

    // 1. A plain item with two files and a target.
    let plain = new(
        root,
        &[
            "--language",
            "en",
            "--target",
            "report.pdf",
            &p("report.pdf"),
            &p("notes.txt"),
        ],
    );
    let (r, ip) = (pair_value(&plain, "rep"), pair_value(&plain, "ibip"));
    assert_eq!(plain.len(), 2, "{plain:?}");
    assert_minted(r, ip);
    let ts = timestamp(root, r);
    assert_eq!(
        item_toml(root, r),
        format!("state     = \"Original\"\nibip      = \"{ip}\"\ntimestamp = {ts}\ntarget    = \"report.pdf\"\nlanguage  = \"en\"\n")
    );
    assert_eq!(
        std::fs::read(root.join("col").join(r).join("doc/notes.txt")).unwrap(),
        b"notes"
    );
    assert_eq!(
        url_request(root, ip, ""),
        lines(&[
            "archiveaddress localhost:8080",
            "contenttype Data",
            &format!("ibi {{rep {r} ibip {ip}}}"),
            SERVICE,
            PLATFORM,
            "state Original",
            &format!("timestamp {ts}"),
            &format!("url http://localhost:8080/col/{r}/doc/report.pdf"),
            "urlkey <urlkey>",
        ])
    );
    // The administrator comments the item; the translation below keeps the comment.
    let path = root.join("col").join(r).join("item.toml");
    let commented = format!("# checked by hand\n{}", item_toml(root, r));
    std::fs::write(&path, &commented).unwrap();

    // 2. Its Portuguese translation, named by the IBIp of the original.
    let tr = new(
        root,
        &[
            "--language",
            "pt",
            "--translation-of",
            ip,
            &p("relatorio.pdf"),
        ],
    );
    let (t, tp) = (pair_value(&tr, "rep"), pair_value(&tr, "ibip"));
    assert_minted(t, tp);
    let tts = timestamp(root, t);
    assert_eq!(
        item_toml(root, r),
        format!("{commented}\n[translations]\npt = \"{t}\"\n")
    );
    assert_eq!(
        item_toml(root, t),
        format!("state     = \"Original\"\nibip      = \"{tp}\"\ntimestamp = {tts}\ntarget    = \"relatorio.pdf\"\nlanguage  = \"pt\"\n\n[translations]\nen = \"{r}\"\n")
    );
    assert_eq!(
        url_request(root, ip, "GetTranslation(pt)"),
        lines(&[
            "archiveaddress localhost:8080",
            "contenttype.translation(pt) Data",
            &format!("ibi {{rep {r} ibip {ip}}}"),
            SERVICE,
            PLATFORM,
            &format!("ibi.translation(pt) {{rep {t}}}"),
            "state.translation(pt) Original",
            &format!("timestamp.translation(pt) {tts}"),
            &format!("url.translation(pt) http://localhost:8080/col/{t}/doc/relatorio.pdf"),
            "urlkey <urlkey>",
        ])
    );
    // And back: the translation's English version is the original.
    assert_eq!(
        url_request(root, t, "GetTranslation(en)"),
        lines(&[
            "archiveaddress localhost:8080",
            "contenttype.translation(en) Data",
            &format!("ibi {{rep {t} ibip {tp}}}"),
            SERVICE,
            PLATFORM,
            &format!("ibi.translation(en) {{rep {r}}}"),
            "state.translation(en) Original",
            &format!("timestamp.translation(en) {ts}"),
            &format!("url.translation(en) http://localhost:8080/col/{r}/doc/report.pdf"),
            "urlkey <urlkey>",
        ])
    );

    // 3. Its next edition, named by its rep.
    let ed = new(
        root,
        &["--language", "en", "--edition-of", r, &p("report-v2.pdf")],
    );
    let (e, ep) = (pair_value(&ed, "rep"), pair_value(&ed, "ibip"));
    assert_minted(e, ep);
    let ets = timestamp(root, e);
    assert_eq!(
        item_toml(root, r),
        format!("# checked by hand\nstate     = \"Original\"\nibip      = \"{ip}\"\ntimestamp = {ts}\ntarget    = \"report.pdf\"\nlanguage  = \"en\"\nnextedition = \"{e}\"\n\n[translations]\npt = \"{t}\"\n")
    );
    assert_eq!(
        url_request(root, r, "GetLastEdition"),
        lines(&[
            "archiveaddress localhost:8080",
            "contenttype.lastedition Data",
            &format!("ibi {{rep {r} ibip {ip}}}"),
            SERVICE,
            &format!("ibi.lastedition {{rep {e}}}"),
            &format!("ibi.nextedition {{rep {e}}}"),
            PLATFORM,
            "state.lastedition Original",
            &format!("timestamp.lastedition {ets}"),
            &format!("url.lastedition http://localhost:8080/col/{e}/doc/report-v2.pdf"),
            "urlkey <urlkey>",
        ])
    );

    // 4. An item with metadata: a second item holding oai_dc.xml and metadata.html.
    let md = new(
        root,
        &[
            "--language",
            "pt-br",
            "--title",
            "Relatório & <Final>",
            "--creator",
            "Banon, G.",
            "--dc",
            "subject=IBI",
            "--dc",
            "description=a \"quoted\" 'text'",
            "--creator",
            "Ana",
            &p("data.csv"),
        ],
    );
    let (d, dp, m, mp) = (
        pair_value(&md, "rep"),
        pair_value(&md, "ibip"),
        pair_value(&md, "metadata.rep"),
        pair_value(&md, "metadata.ibip"),
    );
    assert_minted(d, dp);
    assert_minted(m, mp);
    assert_ne!(d, m);
    let (dts, mts) = (timestamp(root, d), timestamp(root, m));
    assert_eq!(
        item_toml(root, d),
        format!("state     = \"Original\"\nibip      = \"{dp}\"\ntimestamp = {dts}\ntarget    = \"data.csv\"\nlanguage  = \"pt-BR\"\nmetadata  = \"{m}\"\n")
    );
    assert_eq!(
        item_toml(root, m),
        format!("state       = \"Original\"\nibip        = \"{mp}\"\ntimestamp   = {mts}\ncontenttype = \"Metadata\"\ntarget      = \"metadata.html\"\n\n[formats]\noai_dc = \"oai_dc.xml\"\n")
    );
    let answer = url_request(root, dp, "GetMetadata(oai_dc)");
    let url = format!("http://localhost:8080/col/{m}/doc/oai_dc.xml");
    assert_eq!(
        answer,
        lines(&[
            "archiveaddress localhost:8080",
            "contenttype.metadata(oai_dc) Metadata",
            &format!("ibi {{rep {d} ibip {dp}}}"),
            SERVICE,
            &format!("ibi.metadata(oai_dc) {{rep {m}}}"),
            PLATFORM,
            "state.metadata(oai_dc) Original",
            &format!("timestamp.metadata(oai_dc) {mts}"),
            &format!("url.metadata(oai_dc) {url}"),
            "urlkey <urlkey>",
        ])
    );
    // The file the URL points to.
    let file = root.join(url.strip_prefix("http://localhost:8080/").unwrap());
    let xml = std::fs::read_to_string(file).unwrap();
    assert_eq!(
        xml,
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
<oai_dc:dc xmlns:oai_dc=\"http://www.openarchives.org/OAI/2.0/oai_dc/\"\n           \
xmlns:dc=\"http://purl.org/dc/elements/1.1/\"\n           \
xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"\n           \
xsi:schemaLocation=\"http://www.openarchives.org/OAI/2.0/oai_dc/ http://www.openarchives.org/OAI/2.0/oai_dc.xsd\">\n  \
<dc:title>Relatório &amp; &lt;Final&gt;</dc:title>\n  \
<dc:creator>Banon, G.</dc:creator>\n  \
<dc:creator>Ana</dc:creator>\n  \
<dc:subject>IBI</dc:subject>\n  \
<dc:description>a &quot;quoted&quot; &apos;text&apos;</dc:description>\n  \
<dc:identifier>http://localhost:8090/{dp}</dc:identifier>\n  \
<dc:language>pt-BR</dc:language>\n\
</oai_dc:dc>\n"
        )
    );
    let root_element = well_formed(&xml);
    assert_eq!(root_element.0, "oai_dc:dc");
    assert!(root_element.1.contains(&(
        "xmlns:oai_dc".into(),
        "http://www.openarchives.org/OAI/2.0/oai_dc/".into()
    )));
    assert!(root_element
        .1
        .contains(&("xmlns:dc".into(), "http://purl.org/dc/elements/1.1/".into())));
    // The metadata page is the metadata item's target.
    assert_eq!(
        url_request(root, d, "GetMetadata"),
        lines(&[
            "archiveaddress localhost:8080",
            "contenttype.metadata Metadata",
            &format!("ibi {{rep {d} ibip {dp}}}"),
            SERVICE,
            &format!("ibi.metadata {{rep {m}}}"),
            PLATFORM,
            "state.metadata Original",
            &format!("timestamp.metadata {mts}"),
            &format!("url.metadata http://localhost:8080/col/{m}/doc/metadata.html"),
            "urlkey <urlkey>",
        ])
    );
    let html = std::fs::read_to_string(root.join("col").join(m).join("doc/metadata.html")).unwrap();
    assert!(
        html.contains(": Relatório &amp; &lt;Final&gt;</title>"),
        "{html}"
    );

    // Nothing temporary is left, and the tree checks clean.
    let leftovers: Vec<_> = std::fs::read_dir(root.join("col"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // var/ is theirs who ran the commands (root, or the tester): judged as root's, who
    // may use anything, it is not at fault.
    let (code, out, err) = run_cmd(&[
        "check",
        "--root",
        root.to_str().unwrap(),
        "--web-user",
        "root",
    ]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, "checked 19 items: 0 faults\n", "")
    );
}

/// A tiny XML well-formedness check: one root element, tags nested and closed, attribute
/// values quoted, only the five predefined entities or character references. Returns the
/// root element's name and attributes.
/// The persistent URL of an item is `<publicurl>/<IBIp>`, the public URL of the Archive's
/// first resolver (its base URL without the resolver service's IBI, and without the
/// default port): `new` writes it into dc:identifier, the metadata page links to it, the
/// file-list page shows it.
#[test]
fn the_persistent_url_is_the_archives_first_resolvers() {
    const SAMPLE_RESOLVER: &str = "resolver        = \"http://localhost:8090/J8LNKB5R7W/3FUQHC5\"   # resolver/demo.sh's, on this machine\n";
    let files = inputs(&[("data.csv", "a,b\n")]);
    let data = files.path().join("data.csv");
    for (resolvers, publicurl) in [
        (
            "resolvers = [\"http://r.example.org:8090/J8LNKB5R7W/3FUQHC5\", \"http://urlib.net/J8LNKB5R7W/3FUQHC5\"]\n",
            "http://r.example.org:8090",
        ),
        (
            "resolver = \"http://r.example.org:80/J8LNKB5R7W/3FUQHC5\"\n",
            "http://r.example.org",
        ),
        // None named: the standard's, http://urlib.net/J8LNKB5R7W/3FUQHC5.
        ("", "http://urlib.net"),
    ] {
        let f = archive();
        let root = f.root();
        let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
        assert!(toml.contains(SAMPLE_RESOLVER));
        f.write(
            "archive.toml",
            toml.replace(SAMPLE_RESOLVER, resolvers).as_bytes(),
        );
        let md = new(
            root,
            &["--title", "A <report>", data.to_str().unwrap()],
        );
        let (d, dp, m) = (
            pair_value(&md, "rep"),
            pair_value(&md, "ibip"),
            pair_value(&md, "metadata.rep"),
        );
        let doc = root.join("col").join(m).join("doc");
        let xml = std::fs::read_to_string(doc.join("oai_dc.xml")).unwrap();
        assert!(
            xml.contains(&format!(
                "\n  <dc:identifier>{publicurl}/{dp}</dc:identifier>\n"
            )),
            "{xml}"
        );
        assert_eq!(
            std::fs::read_to_string(doc.join("metadata.html")).unwrap(),
            format!(
                "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
                 <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
                 <title>Metadata: A &lt;report&gt;</title>\n<style>{style}</style>\n</head>\n<body>\n\
                 <header><div><span class=\"repo\">IBI Archive localhost:8080</span></div></header>\n\
                 <main>\n<h1>A &lt;report&gt;</h1>\n\
                 <p>The item described: <a href=\"{publicurl}/{dp}\">{publicurl}/{dp}</a></p>\n\
                 <h2>Metadata</h2>\n<table class=\"record\">\n<tbody>\n\
                 <tr><th scope=\"row\">Title</th><td>A &lt;report&gt;</td></tr>\n\
                 <tr><th scope=\"row\">Identifier</th><td>{publicurl}/{dp}</td></tr>\n\
                 </tbody>\n</table>\n</main>\n\
                 <footer><div><span>IBI Archive localhost:8080</span></div></footer>\n\
                 </body>\n</html>\n",
                style = ibi_archive::face::STYLE
            )
        );
        let path_info = format!("/filelist/{d}");
        let page = Cgi {
            path_info: &path_info,
            ..Cgi::get(root, "")
        }
        .run();
        assert_eq!(page.status, 200);
        // The landing page cites the item by the first resolver's persistent URL, and
        // shows the metadata item's title.
        let text = page.text();
        for part in [
            "<h1>A &lt;report&gt;</h1>\n".to_string(),
            format!("<p class=\"cite\">A &lt;report&gt;. (n.d.). {publicurl}/{dp}</p>\n"),
            format!("<link rel=\"cite-as\" href=\"{publicurl}/{dp}\">\n"),
            format!("<tr><th scope=\"row\"><a href=\"http://localhost:8080/col/{d}/doc/data.csv\" type=\"text/csv\">data.csv</a></th><td>4 bytes</td><td>text/csv</td></tr>\n"),
        ] {
            assert!(text.contains(&part), "{part}\nnot in\n{text}");
        }
    }
}

fn well_formed(xml: &str) -> (String, Vec<(String, String)>) {
    let body = xml
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        .expect("XML declaration");
    let mut stack: Vec<String> = Vec::new();
    let mut root: Option<(String, Vec<(String, String)>)> = None;
    let mut rest = body;
    let check_text = |t: &str| {
        let mut s = t;
        while let Some(i) = s.find('&') {
            let end = s[i..].find(';').expect("entity ends with ;") + i;
            let name = &s[i + 1..end];
            assert!(
                ["amp", "lt", "gt", "quot", "apos"].contains(&name)
                    || name
                        .strip_prefix('#')
                        .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())),
                "bad entity {name}"
            );
            s = &s[end + 1..];
        }
        assert!(
            !t.contains('<') && !t.contains('>'),
            "stray markup in {t:?}"
        );
    };
    while let Some(open) = rest.find('<') {
        let text = &rest[..open];
        check_text(text);
        if stack.is_empty() {
            assert!(text.trim().is_empty(), "text outside the root: {text:?}");
        }
        let close = rest[open..].find('>').expect("tag ends") + open;
        let tag = &rest[open + 1..close];
        rest = &rest[close + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(
                stack.pop().as_deref(),
                Some(name.trim()),
                "mismatched </{name}>"
            );
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let mut parts = tag.splitn(2, char::is_whitespace);
        let name = parts.next().unwrap().to_string();
        assert!(
            !name.is_empty() && !name.contains(['"', '=']),
            "bad tag {name:?}"
        );
        let mut attrs = Vec::new();
        let mut a = parts.next().unwrap_or("").trim();
        while !a.is_empty() {
            let eq = a.find('=').expect("attribute =");
            let key = a[..eq].trim().to_string();
            let v = a[eq + 1..]
                .trim_start()
                .strip_prefix('"')
                .expect("quoted value");
            let end = v.find('"').expect("closing quote");
            check_text(&v[..end]);
            attrs.push((key, v[..end].to_string()));
            a = v[end + 1..].trim_start();
        }
        if stack.is_empty() {
            assert!(root.is_none(), "two root elements");
            root = Some((name.clone(), attrs));
        }
        if !self_closing {
            stack.push(name);
        }
    }
    assert!(rest.trim().is_empty(), "text after the root: {rest:?}");
    assert!(stack.is_empty(), "unclosed {stack:?}");
    root.expect("a root element")
}

#[test]
fn twenty_parallel_runs_make_twenty_items_and_a_clean_tree() {
    let f = archive();
    let root = f.root().to_str().unwrap().to_string();
    let files = inputs(&[("paper.pdf", "%PDF-1.4")]);
    let file = files.path().join("paper.pdf");
    let started = std::time::Instant::now();
    let children: Vec<_> = (0..20)
        .map(|_| {
            common::command(&["new", "--root", &root])
                .arg(&file)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut reps = BTreeSet::new();
    let mut ibips = BTreeSet::new();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let mut lines = text.trim_end().split('\n');
        let ibip = lines
            .next()
            .unwrap()
            .strip_prefix("ibip ")
            .unwrap()
            .to_string();
        let rep = lines
            .next()
            .unwrap()
            .strip_prefix("rep ")
            .unwrap()
            .to_string();
        assert!(f.path("col").join(&rep).join("doc/paper.pdf").is_file());
        reps.insert(rep);
        ibips.insert(ibip);
    }
    let elapsed = started.elapsed();
    eprintln!("20 parallel `ibi-archive new` runs took {elapsed:?}");
    assert_eq!(reps.len(), 20);
    assert_eq!(ibips.len(), 20);
    // var/ is theirs who ran the commands (root, or the tester): judged as root's, who
    // may use anything, it is not at fault.
    let (code, out, err) = run_cmd(&["check", "--root", &root, "--web-user", "root"]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, "checked 34 items: 0 faults\n", "")
    );
}

#[test]
fn a_copy_is_stored_under_the_ibi_it_was_given() {
    let f = archive();
    let root = f.root().to_str().unwrap();
    let files = inputs(&[("book/index.html", "<p>x</p>"), ("book/img/a.png", "png")]);
    let book = files.path().join("book");
    let (code, out, err) = run_cmd(&[
        "new",
        "--root",
        root,
        "--copy",
        "--ibi",
        "8JMKD3MGP7W/3EPGUEB",
        "--ibi",
        "urlib.net/www/2013/09.04.12.28.03",
        "--target",
        "book/index.html",
        book.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "ibip 8JMKD3MGP7W/3EPGUEB\nrep urlib.net/www/2013/09.04.12.28.03\n"
    );
    let rep = "urlib.net/www/2013/09.04.12.28.03";
    let ts = timestamp(f.root(), rep);
    assert_eq!(
        item_toml(f.root(), rep),
        format!("state     = \"Copy\"\nibip      = \"8JMKD3MGP7W/3EPGUEB\"\ntimestamp = {ts}\ntarget    = \"book/index.html\"\n")
    );
    assert!(f.path("col").join(rep).join("doc/book/img/a.png").is_file());
    assert_eq!(
        url_request(f.root(), "8JMKD3MGP7W/3EPGUEB", ""),
        lines(&[
            "archiveaddress localhost:8080",
            "contenttype Data",
            &format!("ibi {{rep {rep} ibip 8JMKD3MGP7W/3EPGUEB}}"),
            SERVICE,
            PLATFORM,
            "state Copy",
            &format!("timestamp {ts}"),
            &format!("url http://localhost:8080/col/{rep}/doc/book/index.html"),
            "urlkey <urlkey>",
        ])
    );
    // The same IBI again, in another spelling of the rep: refused.
    let (code, _, err) = run_cmd(&[
        "new",
        "--root",
        root,
        "--copy",
        "--ibi",
        "URLIB.net/www@80/2013/09.04.12.28.03",
        book.to_str().unwrap(),
        "--target",
        "book/index.html",
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "ibi-archive: new: an item URLIB.net/www@80/2013/09.04.12.28.03 already exists: {}\n",
            f.path("col").join(rep).display()
        )
    );
}

#[test]
fn refusals_name_the_input_and_write_nothing() {
    let f = archive();
    let root = f.root().to_str().unwrap();
    let files = inputs(&[("a.pdf", "a"), ("b.pdf", "b")]);
    let a = files.path().join("a.pdf");
    let a = a.to_str().unwrap();
    let b = files.path().join("b.pdf");
    let b = b.to_str().unwrap();
    let cases: Vec<(Vec<&str>, i32, String)> = vec![
        (vec![], 2, "ibi-archive: new: missing FILE; usage: ibi-archive new [--root R] [OPTIONS] FILE...\n".into()),
        (vec!["--bogus", a], 2, "ibi-archive: new: unexpected argument --bogus; see ibi-archive new --help\n".into()),
        (vec![a, b], 1, "ibi-archive: new: several files and no index.html: say which is the item's default file with --target (one of: a.pdf, b.pdf)\n".into()),
        (vec!["--target", "c.pdf", a, b], 1, "ibi-archive: new: --target \"c.pdf\" is not one of the files given (in doc/ they are: a.pdf, b.pdf)\n".into()),
        (vec!["--target", "../a.pdf", a], 1, "ibi-archive: new: --target: \"../a.pdf\" is not a plain relative path inside doc/\n".into()),
        // A usage error (exit 2), found before anything is read.
        (vec!["--translation-of", "sid.inpe.br/mtc-m18@80/2009/07.21.13.23", a], 2,
            "ibi-archive: new: --translation-of needs --language, the translation's language (ll or ll-CC)\n".into()),
        (vec!["--language", "pt", "--translation-of", "8JMKD3MGP8W/35MME4E", a], 1,
            "ibi-archive: new: 8JMKD3MGP8W/35MME4E already has a translation in pt: sid.inpe.br/mtc-m18@80/2009/08.25.19.43\n".into()),
        (vec!["--language", "pt", "--translation-of", "sid.inpe.br/mtc-m18@80/2009/08.25.19.43", a], 1,
            "ibi-archive: new: sid.inpe.br/mtc-m18@80/2009/08.25.19.43 is itself in pt: a translation must be in another language\n".into()),
        (vec!["--edition-of", "sid.inpe.br/mtc-m19/2013/02.10.11.12", a], 1,
            "ibi-archive: new: sid.inpe.br/mtc-m19/2013/02.10.11.12 is Deleted: its item.toml is a tombstone and takes no new relations\n".into()),
        (vec!["--edition-of", "8JMKD3MGP8W/35MMLL8", a], 1,
            "ibi-archive: new: 8JMKD3MGP8W/35MMLL8 already has a next edition: sid.inpe.br/mtc-m18/2012/07.12.18.08\n".into()),
        (vec!["--dc", "titel=x", a], 1,
            "ibi-archive: new: \"titel\" is not a Dublin Core element (one of: title, creator, subject, description, publisher, contributor, date, type, format, identifier, source, language, relation, coverage, rights)\n".into()),
        (vec!["--restricted", a], 1,
            "ibi-archive: new: a restricted item needs a metadata item for the clients outside [access].networks: give Dublin Core fields\n".into()),
        (vec!["--ibi", "urlib.net/www/2013/09.04.12.28.03", a], 2,
            "ibi-archive: new: --ibi is for --copy; a new Original gets a minted IBI\n".into()),
        (vec!["--copy", "--ibi", "8JMKD3MGP7W/3EPGUEB", a], 2,
            "ibi-archive: new: --copy needs --ibi REP (a Copy is stored under its rep)\n".into()),
        (vec!["--copy", "--ibi", "8JMKD3MGP7W/3EPGUE5", "--ibi", "urlib.net/www/2013/09.04.12.28.03", a], 1,
            "ibi-archive: new: --ibi 8JMKD3MGP7W/3EPGUE5 codes the date 2013/09.04.12.27.57, --ibi urlib.net/www/2013/09.04.12.28.03 the date 2013/09.04.12.28.03: they are not the same item\n".into()),
        (vec!["--copy", "--ibi", "urlib.net/www/2013/09.04.12.28.03", "--ibi", "urlib.net/www/2013/09.04.12.28.04", a], 2,
            "ibi-archive: new: --ibi urlib.net/www/2013/09.04.12.28.04: give one rep and at most one IBIp\n".into()),
        (vec!["--dc", "title", a], 2,
            "ibi-archive: new: --dc \"title\" is not ELEMENT=VALUE\n".into()),
        (vec!["--language", "english", a], 2,
            "ibi-archive: new: --language: invalid language \"english\": expected ll or ll-CC\n".into()),
    ];
    let before = snapshot(f.root());
    for (args, code, want) in cases {
        let mut all = vec!["new", "--root", root];
        all.extend(args.iter());
        let (got, out, err) = run_cmd(&all);
        assert_eq!(
            (got, out.as_str(), err.as_str()),
            (code, "", want.as_str()),
            "{args:?}"
        );
    }
    assert_eq!(
        snapshot(f.root()),
        before,
        "a refused run changed the Archive"
    );

    // No [minting]: nothing to mint with.
    let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
    let cut = toml.find("[minting]").unwrap();
    let end = toml[cut..].find("\n\n").unwrap() + cut;
    f.write(
        "archive.toml",
        format!("{}{}", &toml[..cut], &toml[end + 2..]).as_bytes(),
    );
    let (code, _, err) = run_cmd(&["new", "--root", root, a]);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "ibi-archive: new: {}: no [minting] section, so no IBI can be minted\n",
            f.path("archive.toml").display()
        )
    );
}

/// Files that cannot make an item's doc/: two of one name, directories without files, a
/// named pipe given or found in a directory given.
#[test]
fn files_that_cannot_make_a_doc_are_refused() {
    let f = archive();
    let files = inputs(&[("a.pdf", "a"), ("x/a.pdf", "x")]);
    let path = |name: &str| files.path().join(name).to_str().unwrap().to_string();
    std::fs::create_dir_all(files.path().join("empty/sub")).unwrap();
    std::fs::create_dir(files.path().join("piped")).unwrap();
    for pipe in ["pipe", "piped/pipe"] {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            files.path().join(pipe),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
    }
    let before = snapshot(f.root());
    for (args, want) in [
        (
            vec![path("x"), path("x")],
            "two files would be doc/x/a.pdf: give files with distinct names".to_string(),
        ),
        (
            vec![path("a.pdf"), path("x/a.pdf")],
            "two files would be doc/a.pdf: give files with distinct names".to_string(),
        ),
        (
            vec![path("empty")],
            "the directories given hold no files: an item needs at least one file".to_string(),
        ),
        (
            vec![path("pipe")],
            format!("{} is not a regular file or a directory", path("pipe")),
        ),
        (
            vec![path("piped")],
            format!("{} is not a regular file", path("piped/pipe")),
        ),
    ] {
        let mut all = vec!["new", "--root", f.root().to_str().unwrap()];
        all.extend(args.iter().map(String::as_str));
        let (code, out, err) = run_cmd(&all);
        assert_eq!(
            (code, out.as_str(), err),
            (1, "", format!("ibi-archive: new: {want}\n")),
            "{args:?}"
        );
    }
    assert_eq!(
        snapshot(f.root()),
        before,
        "a refused run changed the Archive"
    );
}

/// Every path under col/ with its size: what a refused run must leave as it was.
fn snapshot(root: &Path) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = walkdir::WalkDir::new(root.join("col"))
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| {
            (
                e.path()
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                e.metadata()
                    .map(|m| if m.is_file() { m.len() } else { 0 })
                    .unwrap_or(0),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn links_that_cannot_be_made_here_are_noted() {
    let f = archive();
    let root = f.root().to_str().unwrap();
    let files = inputs(&[("a.pdf", "a")]);
    let a = files.path().join("a.pdf");
    let a = a.to_str().unwrap();
    // Another Archive's item: nothing to change here, no link back (its language is
    // unknown).
    let (rep, err) = new_noting(&[
        "new",
        "--root",
        root,
        "--language",
        "pt",
        "--translation-of",
        "other.org/archive/2020/01.02.03.04",
        a,
    ]);
    assert_eq!(
        err,
        "ibi-archive: note: other.org/archive/2020/01.02.03.04 is not in this Archive: record the translation in its item.toml where it is stored\n"
    );
    assert!(!item_toml(f.root(), &rep).contains("[translations]"));
    // A local item without a language: linked, but no way back.
    let x = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47";
    let (rep, err) = new_noting(&[
        "new",
        "--root",
        root,
        "--language",
        "pt",
        "--translation-of",
        x,
        a,
    ]);
    assert_eq!(
        err,
        format!("ibi-archive: note: {x} has no language: the new item has no [translations] entry back to it\n")
    );
    assert!(item_toml(f.root(), x).ends_with(&format!("\n[translations]\npt = \"{rep}\"\n")));
    // var/ is theirs who ran the commands (root, or the tester): judged as root's, who
    // may use anything, it is not at fault.
    let (code, out, _) = run_cmd(&["check", "--root", root, "--web-user", "root"]);
    assert_eq!((code, out.as_str()), (0, "checked 16 items: 0 faults\n"));
}

/// Both items `create` stores are minted and stamped on the clock its caller gives: their
/// IBIs are dated in the second their timestamps give.
#[test]
fn the_items_are_stamped_with_the_time_given() {
    let f = archive();
    let files = inputs(&[("a.pdf", "a")]);
    let req = ibi_archive::admin::new_item::NewItem {
        files: vec![files.path().join("a.pdf")],
        dc: vec![("title".into(), "A".into())],
        ..Default::default()
    };
    let clock = ::ibi::time::ManualClock::at(1_234_567_890);
    let created = ibi_archive::admin::new_item::create(f.root(), &req, &clock).unwrap();
    let (meta, _) = created.metadata.unwrap();
    for rep in [created.rep.as_str(), meta.as_str()] {
        assert_eq!(timestamp(f.root(), rep), "2009-02-13T23:31:30Z", "{rep}");
        let date = ::ibi::Rep::parse(rep).unwrap().date();
        assert_eq!(date.seconds(), 1_234_567_890, "{rep}");
    }
}

/// The item a new translation links from keeps its comments and layout whatever way its
/// `[translations]` is written: here an inline table with a comment after it.
#[test]
fn a_linked_item_keeps_its_comments_and_layout() {
    let f = archive();
    let root = f.root().to_str().unwrap();
    let files = inputs(&[("a.pdf", "a")]);
    let a = files.path().join("a.pdf");
    let x = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23";
    let text = item_toml(f.root(), x);
    let cut = text.find("\n[translations]\n").unwrap();
    let commented = format!(
        "# Checked by hand.\n{}translations = {{ en = \"{x}\", pt = \"sid.inpe.br/mtc-m18@80/2009/08.25.19.43\" }}  # both versions\n",
        &text[..cut]
    );
    f.write(&format!("col/{x}/item.toml"), commented.as_bytes());
    let (code, out, err) = run_cmd(&[
        "new",
        "--root",
        root,
        "--language",
        "es",
        "--translation-of",
        x,
        a.to_str().unwrap(),
    ]);
    assert_eq!((code, err.as_str()), (0, ""));
    let rep = common::pairs_of(out.trim_end())
        .into_iter()
        .find(|(n, _)| n == "rep")
        .unwrap()
        .1;
    assert_eq!(
        item_toml(f.root(), x),
        commented.replace(" }  #", &format!(", es = \"{rep}\" }}  #"))
    );
    // var/ is theirs who ran the commands (root, or the tester): judged as root's, who
    // may use anything, it is not at fault.
    let (code, out, _) = run_cmd(&["check", "--root", root, "--web-user", "root"]);
    assert_eq!((code, out.as_str()), (0, "checked 15 items: 0 faults\n"));
}

/// `new DIR` copies the files below DIR, never what a link there leads to (a link to
/// /etc/shadow or to archive.toml, or a second name of it, would land in a public doc/):
/// it refuses, naming every symbolic and hard link, and writes nothing.
#[test]
fn links_inside_a_directory_given_are_refused() {
    let f = archive();
    let root = f.root().to_str().unwrap();
    let files = inputs(&[
        ("paper/index.html", "<p>paper</p>"),
        ("paper/fig/a.png", "png"),
    ]);
    let paper = files.path().join("paper");
    std::os::unix::fs::symlink("/etc/shadow", paper.join("shadow.txt")).unwrap();
    std::os::unix::fs::symlink(f.path("archive.toml"), paper.join("fig/config.txt")).unwrap();
    std::fs::write(files.path().join("elsewhere.txt"), "x").unwrap();
    std::fs::hard_link(
        files.path().join("elsewhere.txt"),
        paper.join("fig/hard.txt"),
    )
    .unwrap();
    let before = snapshot(f.root());
    let (code, out, err) = run_cmd(&["new", "--root", root, paper.to_str().unwrap()]);
    assert_eq!(
        (code, out.as_str(), err),
        (
            1,
            "",
            format!(
                "ibi-archive: new: {p} holds links, which are never copied into an item (a link could lead to any file, such as archive.toml); replace them with the files: {p}/fig/config.txt, {p}/fig/hard.txt (hard link), {p}/shadow.txt\n",
                p = paper.display()
            )
        )
    );
    assert_eq!(
        snapshot(f.root()),
        before,
        "a refused run changed the Archive"
    );
    // Without the links, the directory makes an item.
    std::fs::remove_file(paper.join("shadow.txt")).unwrap();
    std::fs::remove_file(paper.join("fig/config.txt")).unwrap();
    std::fs::remove_file(paper.join("fig/hard.txt")).unwrap();
    let made = new(
        f.root(),
        &["--target", "paper/index.html", paper.to_str().unwrap()],
    );
    let rep = pair_value(&made, "rep");
    let mut names: Vec<String> = walkdir::WalkDir::new(f.path(&format!("col/{rep}/doc")))
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["a.png", "index.html"]);
}

/// What `new` prints goes through a pipe as a user writes it (`sed -n 's/^ibip //p'`),
/// and the IBI read there is handed to the next commands: `describe` finds the item,
/// `delete` removes it. Lines end with LF alone on a pipe (CRLF is the HTTP answers').
#[test]
fn the_output_of_one_command_feeds_the_next_through_a_pipe() {
    let f = archive();
    let files = inputs(&[("paper.pdf", "%PDF-1.4")]);
    let script = r#"set -eu
exe=$1 root=$2 file=$3
ibip=$("$exe" new --root "$root" "$file" | sed -n 's/^ibip //p')
rep=$("$exe" describe --root "$root" "$ibip" | sed -n 's/^ibi {rep \([^ ]*\) .*/\1/p')
"$exe" describe --root "$root" "$rep" | sed -n 's/^state //p'
"$exe" delete --root "$root" "$ibip" | sed -n 's/^state //p'
printf '%s\n' "$ibip" "$rep"
"#;
    let out = std::process::Command::new("sh")
        .args(["-c", script, "sh"])
        .arg(common::ibi_archive_bin())
        .arg(f.root())
        .arg(files.path().join("paper.pdf"))
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.contains('\r'), "{stdout:?}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(&lines[..2], ["Original", "Deleted"], "{stdout:?}");
    let (ibip, rep) = (lines[2], lines[3]);
    assert!(::ibi::Ibi::parse(ibip).is_ok(), "{ibip:?}");
    assert!(
        f.path("col").join(rep).join("item.toml").is_file(),
        "{rep:?}"
    );
}
