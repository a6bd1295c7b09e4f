//! What readers and machines get from the resolver beyond the standard, read by their own
//! clients (tests/readers/, installed in target/readers-venv by tests/readers/install.sh):
//! a real resolver and two real `ibi-archive serve` on loopback, holding an item of three
//! editions, the first two in A and the third in B.
//!
//! - Memento (RFC 7089): `memento-client` finds each edition by datetime through the
//!   persistent URL, its own TimeGate, and reads the TimeMap; the redirect, its links and
//!   the TimeMap are checked byte for byte here too, a file path kept in the edition
//!   chosen, a date that is none a 400;
//! - Signposting: `signposting` reads the Link headers of the redirect (cite-as, the
//!   linksets), and the linkset's link is followed to the item's landing page;
//! - a withdrawn item of A, whose metadata item A still has, keeps its identity: the 410
//!   page and its JSON-LD, field by field.

use std::path::{Path, PathBuf};
use std::process::Command;

use common::resolver::{archive, configure, get_with, include_at, Resolver, RESOLVER_IBI};
use common::{free_port, http_get, Serve};

use crate::resolver_loop::item;

const A: &str = "urlib.net/www/2026/11.29.01.01";
const B: &str = "urlib.net/www/2026/11.29.02.02";

/// The three editions, in the order of their chain and of their timestamps.
const E1: &str = "ed.org/ed/2020/01.01.00.01";
const E2: &str = "ed.org/ed/2021/06.15.12.00";
const E3: &str = "ed.org/ed/2022/03.01.08.30";

/// Their timestamps as HTTP writes them (the weekdays worked out by hand: 1 January 2020
/// was a Wednesday, 15 June 2021 and 1 March 2022 Tuesdays).
const T1: &str = "Wed, 01 Jan 2020 00:00:00 GMT";
const T2: &str = "Tue, 15 Jun 2021 12:00:00 GMT";
const T3: &str = "Tue, 01 Mar 2022 08:30:00 GMT";

/// A tombstone of A, and its metadata item, which A keeps.
const TOMB: &str = "ed.org/ed/2019/05.05.05.05";
const TOMB_META: &str = "ed.org/ed/2019/05.05.05.06";

/// The readers' Python, or None (a skip outside CI) when target/readers-venv lacks them.
fn readers_python() -> Option<PathBuf> {
    let python = common::repository().join("target/readers-venv/bin/python");
    let found = Command::new(&python)
        .args(["-c", "import memento_client, signposting"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !common::required_under_ci(
        found,
        "the readers' virtualenv target/readers-venv (bash tests/readers/install.sh)",
    ) {
        eprintln!(
            "skipping: no readers in target/readers-venv (bash tests/readers/install.sh installs them)"
        );
        return None;
    }
    Some(python)
}

/// The resolver, and the two Archives' addresses (A's, B's), serving.
struct Editions {
    _tmp: tempfile::TempDir,
    resolver: Resolver,
    a: String,
    b: String,
    _serves: Vec<Serve>,
}

/// An edition `rep` in `root`: `paper.txt` (its target) and `notes.txt`, each saying
/// which edition it is, its timestamp and its next edition.
fn edition(root: &Path, rep: &str, timestamp: &str, next: Option<&str>) {
    let next = next.map_or(String::new(), |n| format!("nextedition = \"{n}\"\n"));
    item(
        root,
        rep,
        &format!("state = \"Original\"\ntimestamp = {timestamp}\ntarget = \"paper.txt\"\n{next}"),
        "paper.txt",
        &format!("the paper, edition {rep}\n"),
    );
    std::fs::write(
        root.join("col").join(rep).join("doc/notes.txt"),
        format!("the notes, edition {rep}\n"),
    )
    .unwrap();
}

fn editions() -> Editions {
    let tmp = common::archive_tempdir();
    let dir = tmp.path().join("resolver");
    std::fs::create_dir_all(&dir).unwrap();
    // Each TimeGate walks the editions, one fan-out an edition until the memory knows
    // them: more than a reader's usual share of misses.
    // Its operator named on its pages.
    let resolver = Resolver::start(
        &dir,
        "10s",
        "[limits]\nper_client_misses = 1000\n[site]\nname = \"Biblioteca & Arquivo\"\ncontact = \"urlib@ed.example.org\"\n",
    );
    let mut roots = Vec::new();
    for (name, service) in [("a", A), ("b", B)] {
        let root = archive(tmp.path(), name, service, &["urlib.net/www/2014"], &[]);
        std::fs::remove_dir_all(root.join("col/urlib.net/www/2014")).unwrap();
        roots.push(root);
    }
    edition(&roots[0], E1, "2020-01-01T00:00:00Z", Some(E2));
    edition(&roots[0], E2, "2021-06-15T12:00:00Z", Some(E3));
    edition(&roots[1], E3, "2022-03-01T08:30:00Z", None);
    item(
        &roots[0],
        TOMB,
        &format!("state = \"Deleted\"\ntimestamp = 2023-04-05T06:07:08Z\nreason = \"Withdrawn: the data & \\\"figures\\\" were wrong\"\nmetadata = \"{TOMB_META}\"\n"),
        "gone.txt",
        "gone\n",
    );
    item(
        &roots[0],
        TOMB_META,
        "state = \"Original\"\ntimestamp = 2019-05-05T05:05:06Z\ncontenttype = \"Metadata\"\ntarget = \"oai_dc.xml\"\n\n[formats]\noai_dc = \"oai_dc.xml\"\n",
        "oai_dc.xml",
        concat!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
            "<oai_dc:dc xmlns:oai_dc=\"http://www.openarchives.org/OAI/2.0/oai_dc/\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\">\n",
            "  <dc:title>Ação &amp; \"reação\" &lt;em&gt;</dc:title>\n",
            "  <dc:creator>Souza, João</dc:creator>\n",
            "  <dc:creator>Lee, Ann</dc:creator>\n",
            "  <dc:date>2019</dc:date>\n",
            "</oai_dc:dc>\n",
        ),
    );
    let mut addresses = Vec::new();
    let mut serves = Vec::new();
    for (root, service) in roots.iter().zip([A, B]) {
        let address = format!("127.0.0.1:{}", free_port());
        configure(root, &address, &resolver.service());
        let log = std::fs::File::create(root.with_extension("log")).unwrap();
        serves.push(Serve::start_with(root, log, &["--listen", &address]));
        include_at(&resolver, &address, service);
        addresses.push(address);
    }
    let b = addresses.pop().unwrap();
    let a = addresses.pop().unwrap();
    Editions {
        _tmp: tmp,
        resolver,
        a,
        b,
        _serves: serves,
    }
}

/// The link-format TimeMap of `first`'s editions `later` (with their datetimes), for
/// the resolver at `base`, as worked out by hand from RFC 7089 §5.1.1.
fn timemap(base: &str, path: &str, editions: &[(&str, &str)]) -> String {
    let (first, from) = editions[0];
    let until = editions[editions.len() - 1].1;
    let mut lines = vec![
        format!("<{base}/{first}{path}>; rel=\"original\""),
        format!("<{base}/timemap/link/{first}{path}>; rel=\"self\"; type=\"application/link-format\"; from=\"{from}\"; until=\"{until}\""),
        format!("<{base}/{first}{path}>; rel=\"timegate\""),
    ];
    for (i, (ibi, datetime)) in editions.iter().enumerate() {
        let rel = match (i == 0, i + 1 == editions.len()) {
            (true, true) => "first last memento",
            (true, false) => "first memento",
            (false, true) => "last memento",
            (false, false) => "memento",
        };
        lines.push(format!(
            "<{base}/{ibi}{path}>; rel=\"{rel}\"; datetime=\"{datetime}\""
        ));
    }
    lines.join(",\n") + "\n"
}

/// The TimeGate and the TimeMap, byte for byte: the edition current at each instant,
/// its file path kept, its links; the TimeMap of the first edition and of the second;
/// a date that is none, a 400.
#[test]
fn the_persistent_url_is_a_timegate_and_the_timemap_lists_every_edition() {
    let n = editions();
    let base = n.resolver.base();
    let (a, b) = (&n.a, &n.b);
    let at = |path: &str, datetime: &str| {
        get_with(&format!("{base}{path}"), &[("Accept-Datetime", datetime)])
    };
    // Each instant's edition, the file asked for in it, followed to its bytes.
    for (datetime, edition, archive) in [
        ("Sat, 01 Jun 2019 00:00:00 GMT", E1, a),
        (T1, E1, a),
        ("Tue, 15 Jun 2021 11:59:59 GMT", E1, a),
        (T2, E2, a),
        ("Wed, 01 Dec 2021 00:00:00 GMT", E2, a),
        ("Tue, 01 Mar 2022 08:29:59 GMT", E2, a),
        (T3, E3, b),
        ("Fri, 01 Jan 2100 00:00:00 GMT", E3, b),
    ] {
        let r = at(&format!("/{E1}/notes.txt"), datetime);
        assert_eq!(r.status, 302, "{datetime}: {}", r.text());
        let location = format!("http://{archive}/col/{edition}/doc/notes.txt");
        assert_eq!(r.header("location"), Some(location.as_str()), "{datetime}");
        let followed = http_get(&location);
        assert_eq!(
            String::from_utf8_lossy(&followed.body),
            format!("the notes, edition {edition}\n")
        );
        assert_eq!(
            r.header("vary"),
            Some("Accept-Language, Accept, Accept-Datetime")
        );
        // RFC 7089 §4.1.1: the TimeGate's redirect carries no Memento-Datetime.
        assert_eq!(r.header("memento-datetime"), None);
        let chosen = match edition {
            E1 => T1,
            E2 => T2,
            _ => T3,
        };
        assert_eq!(
            r.header("link"),
            Some(
                format!(
                    "<{base}/{E1}/notes.txt>; rel=\"cite-as\", \
                     <{base}/{E1}?format=linkset-json>; rel=\"linkset\"; type=\"application/linkset+json\", \
                     <{base}/{E1}?format=linkset>; rel=\"linkset\"; type=\"application/linkset\", \
                     <{base}/{E1}/notes.txt>; rel=\"original timegate\", \
                     <{base}/timemap/link/{E1}/notes.txt>; rel=\"timemap\"; type=\"application/link-format\"; from=\"{T1}\"; until=\"{T3}\", \
                     <{base}/{E1}/notes.txt>; rel=\"first memento\"; datetime=\"{T1}\", \
                     <{base}/{E3}/notes.txt>; rel=\"last memento\"; datetime=\"{T3}\", \
                     <{location}>; rel=\"memento\"; datetime=\"{chosen}\""
                )
                .as_str()
            ),
            "{datetime}"
        );
    }
    // From the second edition on, the first is not among its editions (an edition names
    // its next, never its previous one).
    let r = at(&format!("/{E2}"), "Sat, 01 Jun 2019 00:00:00 GMT");
    assert_eq!(
        r.header("location"),
        Some(format!("http://{a}/col/{E2}/doc/paper.txt").as_str())
    );
    // Without Accept-Datetime, the item itself, as ever: a TimeGate all the same.
    let r = get_with(&format!("{base}/{E1}"), &[]);
    assert_eq!(
        r.header("location"),
        Some(format!("http://{a}/col/{E1}/doc/paper.txt").as_str())
    );
    assert_eq!(
        r.header("vary"),
        Some("Accept-Language, Accept, Accept-Datetime")
    );
    assert_eq!(
        r.header("link"),
        Some(
            format!(
                "<{base}/{E1}>; rel=\"cite-as\", \
                 <{base}/{E1}?format=linkset-json>; rel=\"linkset\"; type=\"application/linkset+json\", \
                 <{base}/{E1}?format=linkset>; rel=\"linkset\"; type=\"application/linkset\", \
                 <{base}/{E1}>; rel=\"original timegate\", \
                 <{base}/timemap/link/{E1}>; rel=\"timemap\"; type=\"application/link-format\""
            )
            .as_str()
        )
    );
    // A modifier asks for something else, and wins over Accept-Datetime.
    let r = at(&format!("/{E1}!"), "Sat, 01 Jun 2019 00:00:00 GMT");
    assert_eq!(
        r.header("location"),
        Some(format!("http://{b}/col/{E3}/doc/paper.txt").as_str())
    );
    // A date that is none: 400, saying so, in the reader's language.
    for bad in [
        "yesterday",
        "2021-12-01T00:00:00Z",
        "Thu, 01 Dec 2021 00:00:00 GMT",
    ] {
        let r = at(&format!("/{E1}"), bad);
        assert_eq!(r.status, 400, "{bad}");
        let text = r.text();
        assert!(
            text.contains(&format!(
                "The Accept-Datetime header <code>&quot;{bad}&quot;</code>, asked of <code>/{E1}</code>, is not an HTTP date"
            )),
            "{text}"
        );
    }
    // The TimeMaps, byte for byte.
    for (path, editions) in [
        ("", vec![(E1, T1), (E2, T2), (E3, T3)]),
        ("/notes.txt", vec![(E1, T1), (E2, T2), (E3, T3)]),
    ] {
        let r = get_with(&format!("{base}/timemap/link/{E1}{path}"), &[]);
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.header("content-type"), Some("application/link-format"));
        assert_eq!(r.text(), timemap(&base, path, &editions));
    }
    let r = get_with(&format!("{base}/timemap/link/{E2}"), &[]);
    assert_eq!(r.text(), timemap(&base, "", &[(E2, T2), (E3, T3)]));
    let r = get_with(&format!("{base}/timemap/link/{E3}"), &[]);
    assert_eq!(r.text(), timemap(&base, "", &[(E3, T3)]));
    // No item, no TimeMap; a modifier has none.
    let r = get_with(
        &format!("{base}/timemap/link/ed.org/ed/2019/01.01.00.00"),
        &[],
    );
    assert_eq!(r.status, 404, "{}", r.text());
    let r = get_with(&format!("{base}/timemap/link/{E1}!"), &[]);
    assert_eq!(r.status, 400, "{}", r.text());
    let r = get_with(&format!("{base}/timemap/link/{RESOLVER_IBI}"), &[]);
    assert_eq!(r.status, 400, "{}", r.text());
}

/// memento-client finds each edition by datetime through the persistent URL and reads the
/// TimeMap; signposting reads the redirect's Link headers.
#[test]
fn memento_client_and_signposting_read_the_editions_and_their_links() {
    let Some(python) = readers_python() else {
        return;
    };
    let n = editions();
    let base = n.resolver.base();
    let (a, b) = (&n.a, &n.b);
    let uri_r = format!("{base}/{E1}");
    let instants = [
        ("2019-06-01T00:00:00", E1, a, "2020-01-01T00:00:00"),
        ("2020-01-01T00:00:00", E1, a, "2020-01-01T00:00:00"),
        ("2021-06-15T11:59:59", E1, a, "2020-01-01T00:00:00"),
        ("2021-06-15T12:00:00", E2, a, "2021-06-15T12:00:00"),
        ("2022-03-01T08:29:59", E2, a, "2021-06-15T12:00:00"),
        ("2022-03-01T08:30:00", E3, b, "2022-03-01T08:30:00"),
        ("2030-01-01T00:00:00", E3, b, "2022-03-01T08:30:00"),
    ];
    let mut args = vec![
        common::repository()
            .join("tests/readers/editions.py")
            .display()
            .to_string(),
        uri_r.clone(),
        format!("{base}/timemap/link/{E1}"),
        format!("http://{a}/{A}/filelist/{E1}"),
    ];
    args.extend(instants.iter().map(|i| i.0.to_string()));
    let out = Command::new(&python).args(&args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let first =
        serde_json::json!({"uri": format!("{base}/{E1}"), "datetime": "2020-01-01T00:00:00"});
    let last =
        serde_json::json!({"uri": format!("{base}/{E3}"), "datetime": "2022-03-01T08:30:00"});
    for (i, (at, edition, archive, datetime)) in instants.iter().enumerate() {
        assert_eq!(
            read["mementos"][i],
            serde_json::json!({
                "at": at,
                "is_timegate": true,
                "timegate_uri": uri_r,
                "original_uri": uri_r,
                "closest": {
                    "uri": format!("http://{archive}/col/{edition}/doc/paper.txt"),
                    "datetime": datetime,
                },
                "status": 200,
                "first": first,
                "last": last,
            }),
            "{at}"
        );
    }
    // The TimeMap as memento-client parses it: each URI with its relations and datetime.
    let tm = format!("{base}/timemap/link/{E1}");
    assert_eq!(
        read["timemap"],
        serde_json::json!({
            "status": 200,
            "content_type": "application/link-format",
            "links": {
                uri_r.clone(): {
                    "rel": ["original", "timegate", "first", "memento"],
                    "datetime": [T1],
                },
                tm: {
                    "rel": ["self"],
                    "type": ["application/link-format"],
                    "from": [T1],
                    "until": [T3],
                },
                format!("{base}/{E2}"): {"rel": ["memento"], "datetime": [T2]},
                format!("{base}/{E3}"): {"rel": ["last", "memento"], "datetime": [T3]},
            },
        })
    );
    // The redirect's Signposting, as the FAIR Signposting reader takes it.
    let linkset = serde_json::json!({
        "cite_as": uri_r,
        "items": [
            format!("http://{a}/col/{E1}/doc/notes.txt"),
            format!("http://{a}/col/{E1}/doc/paper.txt"),
        ],
    });
    assert_eq!(
        read["signposting"],
        serde_json::json!({
            "status": 302,
            "cite_as": uri_r,
            "linksets": [
                [format!("{base}/{E1}?format=linkset"), "application/linkset"],
                [format!("{base}/{E1}?format=linkset-json"), "application/linkset+json"],
            ],
            // Each linkset, followed through the resolver to the landing page: the item's
            // citation and its files.
            "read": {
                "application/linkset": linkset.clone(),
                "application/linkset+json": linkset,
            },
        })
    );
    // The linkset's link is a persistent URL: the item's landing page, with the format
    // asked, which the landing page answers.
    for (name, media) in [
        ("linkset-json", "application/linkset+json"),
        ("linkset", "application/linkset"),
    ] {
        let r = get_with(&format!("{base}/{E1}?format={name}"), &[]);
        assert_eq!(r.status, 302, "{}", r.text());
        assert_eq!(
            r.header("location"),
            Some(format!("http://{a}/{A}/filelist/{E1}?format={name}").as_str()),
            "{media}"
        );
        // The same by Accept: the landing page, which answers by the same Accept.
        let r = get_with(&format!("{base}/{E1}"), &[("Accept", media)]);
        assert_eq!(r.status, 302, "{}", r.text());
        assert_eq!(
            r.header("location"),
            Some(format!("http://{a}/{A}/filelist/{E1}").as_str()),
            "{media}"
        );
        assert_eq!(
            r.header("vary"),
            Some("Accept-Language, Accept, Accept-Datetime")
        );
        let followed = get_with(r.header("location").unwrap(), &[("Accept", media)]);
        assert_eq!(followed.status, 200, "{media}: {}", followed.text());
        assert_eq!(followed.header("content-type"), Some(media));
    }
    // A citation asked of the persistent URL, by Accept or by format=: the landing page,
    // which answers it (BibTeX here) when followed with the same.
    let r = get_with(
        &format!("{base}/{E1}"),
        &[("Accept", "application/x-bibtex")],
    );
    let landing = format!("http://{a}/{A}/filelist/{E1}");
    assert_eq!(r.header("location"), Some(landing.as_str()));
    let bibtex = get_with(&landing, &[("Accept", "application/x-bibtex")]);
    assert_eq!(bibtex.status, 200);
    assert!(bibtex.text().starts_with('@'), "{}", bibtex.text());
    assert!(bibtex.text().contains(&uri_r), "{}", bibtex.text());
    let r = get_with(&format!("{base}/{E1}?format=bibtex"), &[]);
    assert_eq!(
        r.header("location"),
        Some(format!("{landing}?format=bibtex").as_str())
    );
    let by_query = http_get(r.header("location").unwrap());
    assert_eq!(by_query.body, bibtex.body);
}

/// A withdrawn item keeps its identity through the resolver: its 410 page says what its
/// tombstone at its Archive says (title, authors, removal date, reason), how to cite it
/// and where its Archive describes it, in each language; `Accept: application/ld+json`
/// gets its JSON-LD with the same 410, written again from the fields read.
#[test]
fn a_withdrawn_item_keeps_its_identity_on_the_410_and_in_its_json_ld() {
    let n = editions();
    let base = n.resolver.base();
    let a = &n.a;
    let landing = format!("http://{a}/{A}/filelist/{TOMB}");
    let title = "Ação &amp; &quot;reação&quot; &lt;em&gt;";
    for (lang, texts) in [
        (
            "en",
            [
                "The item <code>{TOMB}</code> was removed on 2023-04-05T06:07:08Z.",
                "Authors",
                "Why it was removed",
                "How to cite",
                "Persistent URL: ",
                "The page of the item at the Archive that keeps it: ",
            ],
        ),
        (
            "pt-BR",
            [
                "O item <code>{TOMB}</code> foi removido em 2023-04-05T06:07:08Z.",
                "Autores",
                "Motivo da remoção",
                "Como citar",
                "URL persistente: ",
                "A página do item no Arquivo que o guarda: ",
            ],
        ),
    ] {
        let r = get_with(&format!("{base}/{TOMB}"), &[("Accept-Language", lang)]);
        assert_eq!(r.status, 410, "{}", r.text());
        assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
        let [removed, authors, why, cite, persistent, kept] = texts;
        let main = format!(
            "<main>\n<h1>{title}</h1>\n\
             <p>{}</p>\n\
             <h2>{authors}</h2>\n<ul>\n<li>Souza, João</li>\n<li>Lee, Ann</li>\n</ul>\n\
             <h2>{why}</h2>\n<p>Withdrawn: the data &amp; &quot;figures&quot; were wrong</p>\n\
             <h2>{cite}</h2>\n<p>Souza, J., &amp; Lee, A. (2019). {title}. {base}/{TOMB}</p>\n\
             <p>{persistent}<a href=\"{base}/{TOMB}\">{base}/{TOMB}</a></p>\n\
             <p>{kept}<a href=\"{landing}\">{landing}</a></p>\n\
             </main>",
            removed.replace("{TOMB}", TOMB)
        );
        let text = r.text();
        assert!(text.contains(&main), "{lang}: {text}");
        assert!(text.contains(&format!("<title>{title}</title>")), "{text}");
        // Its operator, in the header and the footer.
        let (run_by, footer) = match lang {
            "en" => (
                "run by",
                "This resolver is run by Biblioteca &amp; Arquivo. Contact: ",
            ),
            _ => (
                "mantido por",
                "Este resolvedor é mantido por Biblioteca &amp; Arquivo. Contato: ",
            ),
        };
        assert!(
            text.contains(&format!(
                "</a> <span class=\"site\">{run_by} Biblioteca &amp; Arquivo</span></header>\n"
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "</main>\n<footer><p>{footer}<a href=\"mailto:urlib@ed.example.org\">urlib@ed.example.org</a></p></footer>\n</body>"
            )),
            "{text}"
        );
        // In a browser, on a phone and a desktop: no serious or critical violation.
        if common::browser::available() {
            let url = format!("{base}/{TOMB}");
            let report = common::browser::check(&url, lang, &format!("resolver-tombstone-{lang}"));
            assert_eq!(report.status, 410);
            assert_eq!(report.title, "Ação & \"reação\" <em>");
            assert_eq!(report.screenshots.len(), 3);
            report.assert_accessible();
        } else {
            eprintln!("skipping the browser: {}", common::browser::MISSING);
        }
    }
    let r = get_with(
        &format!("{base}/{TOMB}"),
        &[("Accept", "application/ld+json")],
    );
    assert_eq!(r.status, 410, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/ld+json"));
    let persistent = format!("{base}/{TOMB}");
    let doc: serde_json::Value = serde_json::from_str(&r.text()).unwrap();
    assert_eq!(
        doc,
        serde_json::json!({
            "@context": "https://schema.org/",
            "@type": "CreativeWork",
            "@id": persistent,
            "identifier": persistent,
            "url": persistent,
            "subjectOf": landing,
            "name": "Ação & \"reação\" <em>",
            "creator": [
                {"@type": "Person", "name": "Souza, João"},
                {"@type": "Person", "name": "Lee, Ann"},
            ],
            "datePublished": "2019",
            "creativeWorkStatus": "Deleted",
            "expires": "2023-04-05T06:07:08Z",
            "correction": {
                "@type": "CorrectionComment",
                "text": "Withdrawn: the data & \"figures\" were wrong",
            },
        })
    );
    // Its Signposting: the citation, and the linkset of its page at its Archive.
    assert_eq!(
        r.header("link"),
        Some(
            format!(
                "<{persistent}>; rel=\"cite-as\", \
                 <{landing}?format=linkset-json>; rel=\"linkset\"; type=\"application/linkset+json\", \
                 <{landing}?format=linkset>; rel=\"linkset\"; type=\"application/linkset\""
            )
            .as_str()
        )
    );
}

/// The list of an item's editions for readers, `/timemap/html/<IBI>`: the TimeMap's
/// editions, each with its date in the reader's language, its persistent URL and where
/// its Archive holds it, then the original and the TimeMap; every field worked out by
/// hand, in each language, and the page in a browser. A file, a modifier, no item: what
/// the TimeMap answers them.
#[test]
fn the_editions_are_listed_for_readers_in_their_language() {
    let n = editions();
    let base = n.resolver.base();
    let (a, b) = (&n.a, &n.b);
    let list = format!("{base}/timemap/html/{E1}");
    for (lang, title, intro, dates, [persistent, now], [original, same]) in [
        (
            "en",
            "Editions of the item",
            format!("The resolver found 3 editions of the item <code>{E1}</code> at its Archives, from the oldest to the latest."),
            [
                "1 January 2020, 00:00:00 UTC",
                "15 June 2021, 12:00:00 UTC",
                "1 March 2022, 08:30:00 UTC",
            ],
            ["Persistent URL: ", "Where it is now: "],
            [
                "The original, whose persistent URL leads to the edition of a date asked with Accept-Datetime: ",
                "The same list for Memento clients (TimeMap, <code>application/link-format</code>): ",
            ],
        ),
        (
            "pt-BR",
            "Edições do item",
            format!("O resolvedor encontrou 3 edições do item <code>{E1}</code> nos seus Arquivos, da mais antiga à mais recente."),
            [
                "1 de janeiro de 2020, 00:00:00 UTC",
                "15 de junho de 2021, 12:00:00 UTC",
                "1 de março de 2022, 08:30:00 UTC",
            ],
            ["URL persistente: ", "Onde está agora: "],
            [
                "O original, cuja URL persistente leva à edição de uma data pedida com Accept-Datetime: ",
                "A mesma lista para clientes Memento (TimeMap, <code>application/link-format</code>): ",
            ],
        ),
    ] {
        let r = get_with(&list, &[("Accept-Language", lang)]);
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
        assert_eq!(
            r.header("link"),
            Some(
                format!(
                    "<{base}/{E1}>; rel=\"original timegate\", \
                     <{base}/timemap/link/{E1}>; rel=\"timemap\"; type=\"application/link-format\"; from=\"{T1}\"; until=\"{T3}\""
                )
                .as_str()
            )
        );
        let mut items = String::new();
        for ((edition, archive, iso), date) in [
            (E1, a, "2020-01-01T00:00:00Z"),
            (E2, a, "2021-06-15T12:00:00Z"),
            (E3, b, "2022-03-01T08:30:00Z"),
        ]
        .into_iter()
        .zip(dates)
        {
            items.push_str(&format!(
                "<li><p><time datetime=\"{iso}\">{date}</time>: <code>{edition}</code></p>\n<ul>\n\
                 <li>{persistent}<a href=\"{base}/{edition}\">{base}/{edition}</a></li>\n\
                 <li>{now}<a href=\"http://{archive}/col/{edition}/doc/paper.txt\">http://{archive}/col/{edition}/doc/paper.txt</a></li>\n\
                 </ul></li>\n"
            ));
        }
        let main = format!(
            "<main>\n<h1>{title}</h1>\n<p>{intro}</p>\n<ol>\n{items}</ol>\n\
             <p>{original}<a href=\"{base}/{E1}\" rel=\"original\">{base}/{E1}</a></p>\n\
             <p>{same}<a href=\"{base}/timemap/link/{E1}\" rel=\"timemap\" type=\"application/link-format\">{base}/timemap/link/{E1}</a></p>\n\
             </main>\n<footer>"
        );
        let text = r.text();
        assert!(text.contains(&main), "{lang}: {text}");
        assert!(
            text.contains(&format!("<html lang=\"{lang}\">")),
            "{lang}: {text}"
        );
        assert!(text.contains(&format!("<title>{title}</title>")), "{text}");
        // In a browser, on a phone and a desktop: no serious or critical violation.
        if common::browser::available() {
            let report = common::browser::check(&list, lang, &format!("resolver-editions-{lang}"));
            assert_eq!(report.status, 200);
            assert_eq!(report.title, title);
            assert_eq!(report.screenshots.len(), 3);
            report.assert_accessible();
        } else {
            eprintln!("skipping the browser: {}", common::browser::MISSING);
        }
    }
    // The last edition alone; the TimeMap of the same editions, as it was.
    let r = get_with(&format!("{base}/timemap/html/{E3}"), &[]);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        r.text().contains(&format!(
            "<p>The resolver found one edition of the item <code>{E3}</code> at its Archives.</p>\n<ol>\n<li><p><time datetime=\"2022-03-01T08:30:00Z\">1 March 2022, 08:30:00 UTC</time>: <code>{E3}</code></p>\n"
        )),
        "{}",
        r.text()
    );
    let r = get_with(&format!("{base}/timemap/link/{E1}"), &[]);
    assert_eq!(
        r.text(),
        timemap(&base, "", &[(E1, T1), (E2, T2), (E3, T3)])
    );
    // A file has its TimeMap, and no list; a modifier, the resolver service, neither; no
    // item, its page.
    for (path, status) in [
        (format!("/{E1}/notes.txt"), 400),
        (format!("/{E1}!"), 400),
        (format!("/{RESOLVER_IBI}"), 400),
        ("/ed.org/ed/2019/01.01.00.00".to_string(), 404),
    ] {
        let r = get_with(&format!("{base}/timemap/html{path}"), &[]);
        assert_eq!(r.status, status, "{path}: {}", r.text());
        assert_eq!(r.header("location"), None, "{path}");
        assert_eq!(r.header("link"), None, "{path}");
    }
}

/// The Archive's landing page links the list of editions at its resolver for an item
/// with a next edition, and only then; the link followed is the list.
#[test]
fn the_landing_page_links_all_editions_when_the_item_has_a_next_one() {
    let n = editions();
    let base = n.resolver.base();
    let (a, b) = (&n.a, &n.b);
    for (lang, related, next, latest, all) in [
        (
            "en",
            "Related items",
            "Next edition",
            "Latest edition",
            "All editions",
        ),
        (
            "pt-BR",
            "Itens relacionados",
            "Próxima edição",
            "Edição mais recente",
            "Todas as edições",
        ),
    ] {
        for (archive, service, edition, following) in [(a, A, E1, E2), (a, A, E2, E3)] {
            let landing = format!("http://{archive}/{service}/filelist/{edition}");
            let r = get_with(&landing, &[("Accept-Language", lang)]);
            assert_eq!(r.status, 200, "{}", r.text());
            let list = format!("{base}/timemap/html/{edition}");
            let section = format!(
                "<h2>{related}</h2>\n<ul>\n\
                 <li>{next}: <a href=\"{base}/{following}\">{base}/{following}</a></li>\n\
                 <li>{latest}: <a href=\"{base}/{edition}!\">{base}/{edition}!</a></li>\n\
                 <li>{all}: <a href=\"{list}\">{list}</a></li>\n\
                 </ul>\n"
            );
            assert!(r.text().contains(&section), "{lang}: {}", r.text());
            // Followed, the list of the editions from this one on.
            let followed = get_with(&list, &[("Accept-Language", lang)]);
            assert_eq!(followed.status, 200, "{}", followed.text());
            assert!(
                followed
                    .text()
                    .contains(&format!("<a href=\"{base}/{E3}\">{base}/{E3}</a>")),
                "{}",
                followed.text()
            );
            assert_eq!(
                followed.text().contains(&format!("<code>{E1}</code>")),
                edition == E1
            );
        }
        // The last edition has no next: no list linked, nor any related item.
        let r = get_with(
            &format!("http://{b}/{B}/filelist/{E3}"),
            &[("Accept-Language", lang)],
        );
        assert_eq!(r.status, 200, "{}", r.text());
        let text = r.text();
        assert!(!text.contains(all), "{lang}: {text}");
        assert!(!text.contains("/timemap/html/"), "{lang}: {text}");
        assert!(!text.contains(related), "{lang}: {text}");
    }
}
