//! The whole resolution loop across Archives, on loopback with real processes only: three
//! `ibi-archive serve` and two `ibi-resolver serve`, one with its location memory and one
//! without, each case resolved through both.
//!
//! - A1: the sample Archive's 2009 items of 8JMKD3MGP8W/35MME4E: the Original in English,
//!   its Portuguese translation and its metadata;
//! - A2: a Copy of 8JMKD3MGP8W/35MME4E in English only, and ex.org/tr/2020/04.01.00.00, a
//!   Copy whose metadata and Spanish translation are kept in A3;
//! - A3: that metadata item (free form and oai_dc) and that translation.
//!
//! A relation an answer names without its URL starts the next round for the IBI it
//! names; a bare translation is chosen among every answer by the reader's languages; an
//! outage of an Archive that may hold the item is a 503, not a 404; the reader's own
//! query pairs reach the chosen URL.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::resolver::{
    archive, configure, get, get_with, include_at, include_peer, inclusion_request, Resolver, KEY,
};
use common::{free_port, http_get, http_request_with_body, Response, Serve};

const A1: &str = "urlib.net/www/2026/11.26.01.01";
const A2: &str = "urlib.net/www/2026/11.26.02.02";
const A3: &str = "urlib.net/www/2026/11.26.03.03";

/// The item of A2 whose relations are kept in A3.
const REPORT: &str = "ex.org/tr/2020/04.01.00.00";
const REPORT_METADATA: &str = "ex.org/tr/2020/04.01.00.09";
const REPORT_ES: &str = "ex.org/tr/2020/04.01.00.03";
/// In A3: the Spanish translation's metadata.
const REPORT_ES_METADATA: &str = "ex.org/tr/2020/04.01.00.13";
/// In A1: the Spanish translation of the report's metadata.
const REPORT_METADATA_ES: &str = "ex.org/tr/2020/04.01.00.19";

/// An Original in English only in A2, of which A1 holds a Copy with a Portuguese
/// translation: the memory remembers A2.
const GUIDE: &str = "ex.org/tr/2020/04.01.00.10";
const GUIDE_PT: &str = "ex.org/tr/2020/04.01.00.11";

/// Writes an item (item.toml and one file under doc/) below `root`'s col/.
pub(crate) fn item(root: &Path, rep: &str, toml: &str, file: &str, bytes: &str) {
    let dir = root.join("col").join(rep);
    std::fs::create_dir_all(dir.join("doc")).unwrap();
    std::fs::write(dir.join("item.toml"), toml).unwrap();
    std::fs::write(dir.join("doc").join(file), bytes).unwrap();
    common::prepare_archive(root);
}

struct Network {
    _tmp: tempfile::TempDir,
    /// With the location memory, and without.
    resolvers: [Resolver; 2],
    /// host:port → root.
    roots: BTreeMap<String, PathBuf>,
    /// A1, A2, A3, in order.
    serves: Vec<Serve>,
    a: [PathBuf; 3],
}

fn network() -> Network {
    let tmp = common::archive_tempdir();
    let with = tmp.path().join("with-memory");
    let without = tmp.path().join("without-memory");
    std::fs::create_dir_all(&with).unwrap();
    std::fs::create_dir_all(&without).unwrap();
    let resolvers = [
        Resolver::start(&with, "20s", ""),
        Resolver::start(&without, "20s", "[memory]\nentries = 0\n"),
    ];
    let a1 = archive(
        tmp.path(),
        "a1",
        A1,
        &[
            "sid.inpe.br/mtc-m18@80/2009/07.21.13.23",
            "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47",
            "sid.inpe.br/mtc-m18@80/2009/08.25.19.43",
        ],
        &[],
    );
    let a2 = archive(
        tmp.path(),
        "a2",
        A2,
        &["sid.inpe.br/mtc-m18@80/2009/07.21.13.23"],
        &[],
    );
    // A Copy in English only.
    let copy = a2.join("col/sid.inpe.br/mtc-m18@80/2009/07.21.13.23/item.toml");
    let toml = std::fs::read_to_string(&copy).unwrap();
    let toml = toml
        .replace("\"Original\"", "\"Copy\"")
        .lines()
        .filter(|l| !l.starts_with("pt ="))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&copy, toml + "\n").unwrap();
    item(
        &a2,
        REPORT,
        &format!(
            "state = \"Copy\"\ntimestamp = 2020-04-01T00:00:00Z\ntarget = \"report.txt\"\nlanguage = \"en\"\nmetadata = \"{REPORT_METADATA}\"\n\n[translations]\nes = \"{REPORT_ES}\"\n"
        ),
        "report.txt",
        "the report\n",
    );
    item(
        &a2,
        GUIDE,
        "state = \"Original\"\ntimestamp = 2020-04-01T00:00:10Z\ntarget = \"guide.txt\"\nlanguage = \"en\"\n",
        "guide.txt",
        "the guide\n",
    );
    item(
        &a1,
        GUIDE,
        &format!("state = \"Copy\"\ntimestamp = 2020-04-01T00:00:10Z\ntarget = \"guide.txt\"\nlanguage = \"en\"\n\n[translations]\npt = \"{GUIDE_PT}\"\n"),
        "guide.txt",
        "the guide\n",
    );
    item(
        &a1,
        GUIDE_PT,
        "state = \"Original\"\ntimestamp = 2020-04-01T00:00:11Z\ntarget = \"guia.txt\"\nlanguage = \"pt\"\n",
        "guia.txt",
        "o guia\n",
    );
    let a3 = archive(tmp.path(), "a3", A3, &["urlib.net/www/2014"], &[]);
    std::fs::remove_dir_all(a3.join("col/urlib.net/www/2014")).unwrap();
    item(
        &a3,
        REPORT_METADATA,
        &format!("state = \"Original\"\ntimestamp = 2020-04-01T00:00:09Z\ncontenttype = \"Metadata\"\ntarget = \"metadata.html\"\n\n[formats]\noai_dc = \"oai_dc.xml\"\n\n[translations]\nes = \"{REPORT_METADATA_ES}\"\n"),
        "metadata.html",
        "<p>the report's metadata</p>\n",
    );
    std::fs::write(
        a3.join("col").join(REPORT_METADATA).join("doc/oai_dc.xml"),
        "<oai_dc:dc/>\n",
    )
    .unwrap();
    item(
        &a3,
        REPORT_ES,
        &format!("state = \"Original\"\ntimestamp = 2020-04-01T00:00:03Z\ntarget = \"informe.txt\"\nlanguage = \"es\"\nmetadata = \"{REPORT_ES_METADATA}\"\n"),
        "informe.txt",
        "el informe\n",
    );
    item(
        &a3,
        REPORT_ES_METADATA,
        "state = \"Original\"\ntimestamp = 2020-04-01T00:00:13Z\ncontenttype = \"Metadata\"\nlanguage = \"es\"\ntarget = \"metadatos.html\"\n\n[formats]\noai_dc = \"oai_dc.xml\"\n",
        "metadatos.html",
        "<p>los metadatos del informe</p>\n",
    );
    std::fs::write(
        a3.join("col")
            .join(REPORT_ES_METADATA)
            .join("doc/oai_dc.xml"),
        "<oai_dc:dc xml:lang=\"es\"/>\n",
    )
    .unwrap();
    item(
        &a1,
        REPORT_METADATA_ES,
        "state = \"Original\"\ntimestamp = 2020-04-01T00:00:19Z\ncontenttype = \"Metadata\"\nlanguage = \"es\"\ntarget = \"metadatos.html\"\n",
        "metadatos.html",
        "<p>metadatos (traducción)</p>\n",
    );
    let mut roots = BTreeMap::new();
    let mut serves = Vec::new();
    for (service, root) in [(A1, &a1), (A2, &a2), (A3, &a3)] {
        let address = format!("127.0.0.1:{}", free_port());
        configure(root, &address, &resolvers[0].service());
        let log = std::fs::File::create(root.with_extension("log")).unwrap();
        serves.push(Serve::start_with(root, log, &["--listen", &address]));
        roots.insert(address.clone(), root.clone());
        for resolver in &resolvers {
            include_at(resolver, &address, service);
        }
    }
    Network {
        _tmp: tmp,
        resolvers,
        roots,
        serves,
        a: [a1, a2, a3],
    }
}

impl Network {
    /// Resolves `path` through both resolvers, each time expecting a 302 to `file` (below
    /// the giving Archive's col/), followed and compared byte for byte; the Archive that
    /// gave it.
    fn redirect(&self, path: &str, accept_language: &str, file: &str) -> PathBuf {
        let headers: &[(&str, &str)] = if accept_language.is_empty() {
            &[]
        } else {
            &[("Accept-Language", accept_language)]
        };
        self.redirect_with(path, headers, file)
    }

    /// [`Network::redirect`] for a request with `headers`.
    fn redirect_with(&self, path: &str, headers: &[(&str, &str)], file: &str) -> PathBuf {
        let accept_language = headers
            .iter()
            .find(|(n, _)| *n == "Accept-Language")
            .map_or("", |(_, v)| *v);
        let mut giver = None;
        for resolver in &self.resolvers {
            let r = get_with(&format!("{}{path}", resolver.base()), headers);
            let inspect = || {
                let sep = if path.contains('?') { '&' } else { '?' };
                get(
                    &format!("{}{path}{sep}noredirect", resolver.base()),
                    accept_language,
                )
                .text()
            };
            assert_eq!(
                r.status,
                302,
                "{path}: {}\n--- inspected ---\n{}",
                r.text(),
                inspect()
            );
            let location = r.header("location").unwrap().to_string();
            let authority = location
                .strip_prefix("http://")
                .and_then(|l| l.split('/').next())
                .unwrap_or("");
            let Some(root) = self.roots.get(authority) else {
                panic!("{path} → {location}: no Archive of the test");
            };
            let followed = http_get(&location);
            assert_eq!(followed.status, 200, "{location}");
            let on_disk = std::fs::read(root.join("col").join(file)).unwrap_or_else(|e| {
                panic!(
                    "{path} → {location}: {file} is not in that Archive ({e})\n{}",
                    inspect()
                )
            });
            assert!(
                followed.body == on_disk,
                "{path} → {location}: not the bytes of {file}\n{}",
                inspect()
            );
            giver = Some(root.clone());
        }
        giver.unwrap()
    }

    fn page(&self, which: usize, path: &str, accept_language: &str) -> Response {
        get(
            &format!("{}{path}", self.resolvers[which].base()),
            accept_language,
        )
    }
}

/// Content negotiation on a persistent URL: `Accept` asks for the item's oai_dc record
/// (wherever its metadata item is kept) or, for JSON-LD, for its landing page, which the
/// Archive answers by the same `Accept`; a browser, anything else and every modifier get
/// what they get without it. Each redirect to the item cites the persistent URL asked.
#[test]
fn accept_asks_for_a_description_and_a_modifier_wins() {
    let n = network();
    let (a2, a3) = (n.a[1].clone(), n.a[2].clone());
    let oai_dc = format!("{REPORT_METADATA}/doc/oai_dc.xml");
    let report = format!("{REPORT}/doc/report.txt");
    let spanish = format!("{REPORT_ES}/doc/informe.txt");
    let path = format!("/{REPORT}");
    for accept in [
        "application/xml",
        "text/xml",
        "application/xml;profile=\"http://www.openarchives.org/OAI/2.0/oai_dc/\"",
        "application/xml, */*;q=0.1",
    ] {
        assert_eq!(n.redirect_with(&path, &[("Accept", accept)], &oai_dc), a3);
    }
    for accept in [
        "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
        "*/*",
        "application/pdf",
        "application/xml;q=0.5, text/plain",
    ] {
        assert_eq!(n.redirect_with(&path, &[("Accept", accept)], &report), a2);
    }
    // A modifier or a verb list wins over Accept.
    let json_ld = [("Accept", "application/ld+json")];
    for asked in [
        format!("/{REPORT}+(es)"),
        format!("/{REPORT}?ibiurl.verblist=GetTranslation(es)"),
    ] {
        assert_eq!(n.redirect_with(&asked, &json_ld, &spanish), a3);
        let xml = [("Accept", "application/xml")];
        assert_eq!(n.redirect_with(&asked, &xml, &spanish), a3);
    }
    // JSON-LD: the landing page of the item, at the Archive that holds it.
    let a2_address = n
        .roots
        .iter()
        .find(|(_, root)| **root == a2)
        .map(|(address, _)| address.clone())
        .unwrap();
    let a1_address = n
        .roots
        .iter()
        .find(|(_, root)| **root == n.a[0])
        .map(|(address, _)| address.clone())
        .unwrap();
    for resolver in &n.resolvers {
        for accept in [
            "application/ld+json",
            "application/ld+json; profile=\"https://schema.org\"",
            "application/ld+json, */*",
        ] {
            let r = get_with(&format!("{}{path}", resolver.base()), &[("Accept", accept)]);
            assert_eq!(r.status, 302, "{accept}: {}", r.text());
            assert_eq!(
                r.header("location"),
                Some(format!("http://{a2_address}/{A2}/filelist/{REPORT}").as_str()),
                "{accept}"
            );
            // Cited, and the item's linkset linked (its landing page through the
            // resolver, in both formats).
            let base = resolver.base();
            assert_eq!(
                r.header("link"),
                Some(
                    format!(
                        "<{base}/{REPORT}>; rel=\"cite-as\", \
                         <{base}/{REPORT}?format=linkset-json>; rel=\"linkset\"; type=\"application/linkset+json\", \
                         <{base}/{REPORT}?format=linkset>; rel=\"linkset\"; type=\"application/linkset\""
                    )
                    .as_str()
                )
            );
            assert!(
                r.header("vary")
                    .is_some_and(|v| v.split(',').any(|v| v.trim() == "Accept")),
                "{:?}",
                r.header("vary")
            );
        }
        // Followed as a client does, with the same Accept: the landing page of the
        // Original (in A1; A2 has a Copy without its metadata) answers its JSON-LD, which
        // a JSON-LD processor reads as schema.org.
        let r = get_with(
            &format!(
                "{}/8JMKD3MGP8W/35MME4E?ibiurl.requireditemstatus=Original",
                resolver.base()
            ),
            &json_ld,
        );
        assert_eq!(r.status, 302, "{}", r.text());
        let location = r.header("location").unwrap().to_string();
        assert_eq!(
            location,
            format!("http://{a1_address}/{A1}/filelist/sid.inpe.br/mtc-m18@80/2009/07.21.13.23")
        );
        let doc = get_with(&location, &json_ld);
        assert_eq!(doc.status, 200, "{}", doc.text());
        assert_eq!(doc.header("content-type"), Some("application/ld+json"));
        if let Some(expanded) = common::jsonld::expanded(&doc.text()) {
            // A1 cites its items on the first resolver.
            let cited = format!("{}/8JMKD3MGP8W/35MME4E", n.resolvers[0].base());
            assert_eq!(expanded[0]["@id"], cited.as_str(), "{expanded}");
            assert_eq!(
                expanded[0]["https://schema.org/name"][0]["@value"], "Space Link Identifiers",
                "{expanded}"
            );
            assert_eq!(
                expanded[0]["@type"][0], "https://schema.org/CreativeWork",
                "{expanded}"
            );
        }
        // The persistent URL cited is the one asked, its modifier and its verb list
        // included, and none of the reader's own pairs.
        let asked = format!("/{REPORT}+(es)?ibiurl.verblist=GetMetadata&x=%3C1%3E");
        let r = get(&format!("{}{asked}", resolver.base()), "");
        assert_eq!(r.status, 302, "{}", r.text());
        let base = resolver.base();
        assert_eq!(
            r.header("link"),
            Some(
                format!(
                    "<{base}/{REPORT}+(es)?ibiurl.verblist=GetMetadata>; rel=\"cite-as\", \
                     <{base}/{REPORT}?format=linkset-json>; rel=\"linkset\"; type=\"application/linkset+json\", \
                     <{base}/{REPORT}?format=linkset>; rel=\"linkset\"; type=\"application/linkset\""
                )
                .as_str()
            )
        );
        // No item, no citation.
        let r = get(
            &format!("{}/ex.org/tr/2020/04.01.00.58", resolver.base()),
            "",
        );
        assert_eq!(r.status, 404, "{}", r.text());
        assert_eq!(r.header("link"), None);
    }
}

#[test]
fn a_relation_kept_in_another_archive_is_followed_there() {
    let n = network();
    let a3 = n.a[2].clone();
    let metadata = format!("{REPORT_METADATA}/doc/metadata.html");
    let oai_dc = format!("{REPORT_METADATA}/doc/oai_dc.xml");
    let spanish = format!("{REPORT_ES}/doc/informe.txt");
    // The item itself, in A2.
    assert_eq!(
        n.redirect(
            &format!("/{REPORT}"),
            "",
            &format!("{REPORT}/doc/report.txt")
        ),
        n.a[1]
    );
    // Its metadata, free form and oai_dc; its Spanish translation asked for by name and
    // by the reader's language; the metadata of its last edition (itself) in oai_dc.
    assert_eq!(n.redirect(&format!("/{REPORT}:"), "", &metadata), a3);
    assert_eq!(n.redirect(&format!("/{REPORT}:(oai_dc)"), "", &oai_dc), a3);
    assert_eq!(n.redirect(&format!("/{REPORT}+(es)"), "", &spanish), a3);
    assert_eq!(n.redirect(&format!("/{REPORT}+"), "es", &spanish), a3);
    assert_eq!(
        n.redirect(&format!("/{REPORT}+"), "es-AR,en;q=0.5", &spanish),
        a3
    );
    assert_eq!(n.redirect(&format!("/{REPORT}!:(oai_dc)"), "", &oai_dc), a3);
    assert_eq!(
        n.redirect(
            &format!("/{REPORT}?ibiurl.verblist=GetMetadata(oai_dc)"),
            "",
            &oai_dc
        ),
        a3
    );
    // Compositions: the metadata (oai_dc) of the Spanish translation, both in A3; the
    // Spanish translation of the metadata, kept in A1 (three rounds, three Archives),
    // by name and by the reader's language.
    assert_eq!(
        n.redirect(
            &format!("/{REPORT}+(es):(oai_dc)"),
            "",
            &format!("{REPORT_ES_METADATA}/doc/oai_dc.xml")
        ),
        a3
    );
    let metadatos = format!("{REPORT_METADATA_ES}/doc/metadatos.html");
    assert_eq!(
        n.redirect(&format!("/{REPORT}:+(es)"), "", &metadatos),
        n.a[0]
    );
    assert_eq!(
        n.redirect(&format!("/{REPORT}:+"), "es", &metadatos),
        n.a[0]
    );
    // A reader with no Spanish gets the report in its own language.
    assert_eq!(
        n.redirect(
            &format!("/{REPORT}+"),
            "fr",
            &format!("{REPORT}/doc/report.txt")
        ),
        n.a[1]
    );
    // The inspection view says why each round was started.
    let url = format!("{}/{REPORT}:(oai_dc)?noredirect", n.resolvers[1].base());
    let r = http_request_with_body("GET", &url, &[("Accept", "application/json")], b"");
    assert_eq!(r.status, 200, "{}", r.text());
    let trace: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    let rounds: Vec<(String, String, String)> = trace["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["ibi"].as_str().unwrap().to_string(),
                r["verblist"].as_str().unwrap().to_string(),
                r["why"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(
        rounds,
        [
            (
                REPORT.to_string(),
                "GetMetadata(oai_dc)".to_string(),
                String::new()
            ),
            (
                REPORT_METADATA.to_string(),
                "GetMetadata(oai_dc)".to_string(),
                format!(
                    "{} ({A2}) named it as ibi.metadata(oai_dc) of {REPORT}, without its URL",
                    n.serves[1].address
                ),
            ),
        ],
        "{}",
        r.text()
    );
}

#[test]
fn resolve_from_the_shell_shows_each_round_and_why_it_was_asked() {
    let n = network();
    let (code, out, err) = n.resolvers[1].command(
        &[
            "resolve",
            &format!("http://urlib.net/{REPORT}+"),
            "--lang",
            "es",
        ],
        "",
    );
    assert_eq!(code, 0, "{out}{err}");
    let rounds: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("round ") || l.starts_with("  asked because"))
        .collect();
    assert_eq!(
        rounds,
        [
            format!("round 1: parsedibiurl.ibi={REPORT} parsedibiurl.verblist=GetTranslation"),
            format!("round 2: parsedibiurl.ibi={REPORT_ES} parsedibiurl.verblist=-"),
            format!(
                "  asked because {} ({A2}) named it as ibi.translation(es) of {REPORT}, without its URL",
                n.serves[1].address
            ),
        ],
        "{out}"
    );
    let last = out.lines().last().unwrap_or("");
    assert!(
        last.starts_with(&format!(
            "found {}/col/{REPORT_ES}/doc/informe.txt at {} in ",
            n.serves[2].base_url(),
            n.serves[2].address
        )),
        "{out}"
    );
}

#[test]
fn a_bare_translation_is_the_readers_language_wherever_it_is() {
    let n = network();
    let portuguese = "sid.inpe.br/mtc-m18@80/2009/08.25.19.43/doc/RTC-07.pdf";
    for _ in 0..20 {
        assert_eq!(
            n.redirect(
                "/8JMKD3MGP8W/35MME4E+",
                "pt-BR,pt;q=0.9,en;q=0.5",
                portuguese
            ),
            n.a[0]
        );
    }
}

#[test]
fn the_remembered_archive_does_not_decide_a_bare_translation_it_lacks_the_readers_language_for() {
    let n = network();
    let memory = &n.resolvers[0];
    // A plain resolution teaches the memory where the Original is: A2.
    n.redirect(&format!("/{GUIDE}"), "", &format!("{GUIDE}/doc/guide.txt"));
    let deadline = std::time::Instant::now() + common::HANG_GUARD;
    loop {
        let (code, out, err) = memory.command(&["memory", GUIDE], "");
        if code == 0 && out.starts_with(&format!("{GUIDE}  {A2}  used ")) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not remembered: {out}{err}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // A2 alone answers in English; the Portuguese translation is in A1's copy.
    for _ in 0..20 {
        assert_eq!(
            n.redirect(
                &format!("/{GUIDE}+"),
                "pt-BR,pt;q=0.9,en;q=0.5",
                &format!("{GUIDE_PT}/doc/guia.txt")
            ),
            n.a[0]
        );
    }
    // The remembered Archive was asked first, and alone, then every Archive.
    let url = format!("{}/{GUIDE}+?noredirect", memory.base());
    let r = http_request_with_body(
        "GET",
        &url,
        &[
            ("Accept", "application/json"),
            ("Accept-Language", "pt-BR,pt;q=0.9,en;q=0.5"),
        ],
        b"",
    );
    let trace: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    let rounds: Vec<(bool, usize)> = trace["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["remembered"] == true,
                r["asked"].as_array().unwrap().len(),
            )
        })
        .collect();
    assert_eq!(rounds, [(true, 1), (false, 3)], "{}", r.text());
    // A reader who reads English is answered by the remembered Archive alone.
    let url = format!("{}/{GUIDE}+?noredirect", memory.base());
    let r = http_request_with_body(
        "GET",
        &url,
        &[("Accept", "application/json"), ("Accept-Language", "en")],
        b"",
    );
    let trace: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(trace["rounds"].as_array().unwrap().len(), 1, "{}", r.text());
    assert_eq!(trace["outcome"]["archive"], A2, "{}", r.text());
}

/// A3 down: its silence stands in the way only where it may hold the item. The resolver
/// with the memory remembers A3 for the metadata item (one resolution while it is up):
/// a 503 naming it; the one without memory, for which A3 is neither remembered nor the
/// item's home (A3's service IBI is of another prefix), answers 404 and names A3 among
/// the Archives that could not be asked.
#[test]
fn an_outage_is_a_503_where_the_archive_may_hold_the_item_and_a_404_elsewhere() {
    let mut n = network();
    let a3_address = n.serves[2].address.clone();
    // Remembered at A3 by the resolver with the memory.
    let r = n.page(0, &format!("/{REPORT_METADATA}"), "en");
    assert_eq!(r.status, 302, "{}", r.text());
    let deadline = std::time::Instant::now() + common::HANG_GUARD;
    loop {
        let (code, out, err) = n.resolvers[0].command(&["memory", REPORT_METADATA], "");
        if code == 0 && out.starts_with(&format!("{REPORT_METADATA}  {A3}  used ")) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not remembered: {out}{err}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    n.serves[2].interrupt();
    // Named by its service IBI: its address is the operator's to see, in the log.
    let silent = format!("<li>{A3}</li>");
    let r = n.page(0, &format!("/{REPORT_METADATA}"), "en");
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(r.header("retry-after").is_some(), "{:?}", r.headers);
    assert!(
        r.text().contains(&format!(
            "This one did not answer:</p>\n<ul>\n{silent}\n</ul>\n<p>It may hold the item. Try again later.</p>"
        )),
        "{}",
        r.text()
    );
    assert!(
        n.resolvers[0]
            .metrics()
            .contains("ibi_resolver_resolutions_total{outcome=\"unavailable\"} 1\n"),
        "{}",
        n.resolvers[0].metrics()
    );
    let r = n.page(1, &format!("/{REPORT_METADATA}"), "en");
    assert_eq!(r.status, 404, "{}", r.text());
    assert!(
        r.text().contains(&format!(
            "<p>No Archive that answered knows the IBI <code>{REPORT_METADATA}</code>.</p>\n<p>This Archive could not be asked; it is neither where the IBI was minted nor the Archive remembered for it:</p>\n<ul>\n{silent}\n</ul>\n"
        )),
        "{}",
        r.text()
    );
    // A related item kept in A3: the page says which item could not be found.
    let related = format!(
        "<p>The last IBI asked for was <code>{REPORT_METADATA}</code>, named by an Archive for <code>{REPORT}</code>.</p>"
    );
    for (which, status) in [(0, 503), (1, 404)] {
        let r = n.page(which, &format!("/{REPORT}:"), "en");
        assert_eq!(r.status, status, "{}", r.text());
        assert!(r.text().contains(&related), "{}", r.text());
    }
    // A3 leaves the resolvers: every included Archive answers, and the IBI is unknown.
    for resolver in &n.resolvers {
        let exclusion = inclusion_request(resolver, &a3_address, A3, KEY)
            .replace("=inclusionRequest", "=exclusionRequest");
        let a = http_get(&exclusion);
        assert_eq!(
            (a.status, a.text().as_str()),
            (200, "status.archive excluded\r\n"),
            "{}",
            resolver.log()
        );
    }
    for which in [0, 1] {
        let r = n.page(which, &format!("/{REPORT_METADATA}"), "en");
        assert_eq!(r.status, 404, "{}", r.text());
        assert!(
            r.text().contains(&format!(
                "<p>No Archive knows the IBI <code>{REPORT_METADATA}</code>.</p>\n</main>"
            )),
            "{}",
            r.text()
        );
    }
}

#[test]
fn copies_only_under_requireditemstatus_names_the_copies() {
    let n = network();
    for which in [0, 1] {
        let r = n.page(
            which,
            &format!("/{REPORT}?ibiurl.requireditemstatus=Original"),
            "en",
        );
        assert_eq!(r.status, 404, "{}", r.text());
        let copy = format!(
            "<p>No Archive claims to hold the original of <code>{REPORT}</code>; every Archive answered, and this one has the item:</p>\n<ul>\n<li>{} ({A2}): <a href=\"http://{0}/col/{REPORT}/doc/report.txt\">http://{0}/col/{REPORT}/doc/report.txt</a> — a copy</li>\n</ul>\n",
            n.serves[1].address
        );
        assert!(r.text().contains(&copy), "{copy}\n{}", r.text());
    }
}

#[test]
fn under_the_original_check_an_ibi_named_is_followed_only_when_every_answer_agrees() {
    let n = network();
    let oai_dc = format!("{REPORT_METADATA}/doc/oai_dc.xml");
    // A2 (a Copy of the report) names its metadata; A3 holds its Original.
    assert_eq!(
        n.redirect(
            &format!("/{REPORT}:(oai_dc)?ibiurl.requireditemstatus=Original"),
            "",
            &oai_dc
        ),
        n.a[2]
    );
    // M, a hostile Archive, names another metadata item, whose Original it claims, and
    // answers first.
    let evil = "ex.org/tr/2020/04.01.00.59";
    let m = common::peer::archive(move |ibi, s| {
        let body = if ibi == REPORT {
            format!("archiveaddress m\r\nibi {{rep {REPORT}}}\r\nibi.metadata(oai_dc) {{rep {evil}}}\r\n")
        } else if ibi == evil {
            format!("archiveaddress m\r\nibi {{rep {evil}}}\r\nstate.metadata(oai_dc) Original\r\nurl.metadata(oai_dc) http://evil.example/m.xml\r\nibi.metadata(oai_dc) {{rep {evil}}}\r\n")
        } else {
            String::new()
        };
        common::peer::answer_200(s, body.as_bytes());
    });
    let m_service = "urlib.net/www/2026/11.26.06.06";
    include_peer(&n.resolvers[1], &m, m_service);
    let r = n.page(
        1,
        &format!("/{REPORT}:(oai_dc)?ibiurl.requireditemstatus=Original"),
        "en",
    );
    assert_eq!(
        r.status,
        409,
        "{}\n{}",
        r.text(),
        n.page(
            1,
            &format!("/{REPORT}:(oai_dc)?ibiurl.requireditemstatus=Original&noredirect"),
            "en"
        )
        .text()
    );
    for suspect in [format!("<li>{A2}</li>"), format!("<li>{m_service}</li>")] {
        assert!(r.text().contains(&suspect), "{suspect}\n{}", r.text());
    }
    assert!(r.header("location").is_none());
    // Without the check, the first answer holding a URL or naming where it is: never
    // M's bare name over A2's, whichever came first, and never evil.example when the
    // honest holder gives a URL.
    let r = n.page(1, &format!("/{REPORT_METADATA}:(oai_dc)"), "");
    assert_eq!(r.status, 302, "{}", r.text());
    assert!(
        r.header("location")
            .is_some_and(|l| l.starts_with(&n.serves[2].base_url())),
        "{:?}",
        r.header("location")
    );
}

#[test]
fn the_readers_own_query_pairs_reach_the_chosen_url() {
    let n = network();
    for resolver in &n.resolvers {
        for (path, location) in [
            (
                format!("/{REPORT}?x=1&y=a%20b"),
                format!(
                    "{}/col/{REPORT}/doc/report.txt?x=1&y=a%20b",
                    n.serves[1].base_url()
                ),
            ),
            (
                "/8JMKD3MGP8W/35MME4E?ibiurl.requireditemstatus=Original&x=1".to_string(),
                format!(
                    "{}/col/sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS%20643.0-B-1.pdf?x=1",
                    n.serves[0].base_url()
                ),
            ),
            (
                format!("/{REPORT}?x=%3Cb%3E&ibiurl.verblist=GetMetadata&z&w='"),
                format!(
                    "{}/col/{REPORT_METADATA}/doc/metadata.html?x=%3Cb%3E&z&w='",
                    n.serves[2].base_url()
                ),
            ),
        ] {
            let r = get(&format!("{}{path}", resolver.base()), "");
            assert_eq!(r.status, 302, "{path}: {}", r.text());
            assert_eq!(r.header("location"), Some(location.as_str()), "{path}");
        }
    }
}

/// A tombstone still cites its persistent URL (Signposting `cite-as` on the 410).
#[test]
fn a_tombstone_still_cites_its_persistent_url() {
    const DELETED: &str = "urlib.net/www/2021/01.01.06.01";
    let dir = tempfile::tempdir().unwrap();
    let r = Resolver::start(dir.path(), "5s", "");
    let peer = common::peer::archive(|ibi, s| match ibi {
        DELETED => {
            common::peer::answer_200(s, b"state Deleted\r\ntimestamp 2021-01-02T03:04:05Z\r\n")
        }
        _ => common::peer::answer_200(s, b""),
    });
    include_peer(&r, &peer, common::resolver::SAMPLE_SERVICE);
    let gone = get(&format!("{}/{DELETED}", r.base()), "");
    assert_eq!(gone.status, 410, "{}", gone.text());
    // Its linkset is its landing page's at the Archive that keeps it; its persistent
    // URL is its own TimeGate, with a TimeMap.
    let (base, at) = (r.base(), peer.addr);
    let service = common::resolver::SAMPLE_SERVICE;
    assert_eq!(
        gone.header("link"),
        Some(
            format!(
                "<{base}/{DELETED}>; rel=\"cite-as\", \
                 <http://{at}/{service}/filelist/{DELETED}?format=linkset-json>; rel=\"linkset\"; type=\"application/linkset+json\", \
                 <http://{at}/{service}/filelist/{DELETED}?format=linkset>; rel=\"linkset\"; type=\"application/linkset\", \
                 <{base}/{DELETED}>; rel=\"original timegate\", \
                 <{base}/timemap/link/{DELETED}>; rel=\"timemap\"; type=\"application/link-format\""
            )
            .as_str()
        )
    );
    assert_eq!(
        gone.header("vary"),
        Some("Accept-Language, Accept, Accept-Datetime")
    );
}
