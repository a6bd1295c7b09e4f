//! Every page of the resolver as a reader's browser shows it: headless Chromium on a
//! running `ibi-resolver serve` that includes a copy of the sample Archive (`ibi-archive
//! serve`) and a hostile one, each page in Portuguese and in English, at a phone's and a
//! desktop's width and in dark mode, a screenshot of each kept
//! (target/test-artefacts/screenshots/resolver-*.png), and none with a serious or
//! critical violation of axe-core's rules. Then the home page's form, filled in and sent
//! as a reader does.

use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex};

use common::browser::{self, Browser};
use common::peer::{answer_200, archive as hostile_archive, Peer};
use common::resolver::{
    archive, archive_cmd, configure, get, include_peer, Resolver, KEY, SAMPLE_SERVICE,
};
use common::{free_port, http_raw, Serve};

/// The service IBI of the hostile Archive.
const SECOND: &str = "urlib.net/www/2012/01.01.01.02";
/// Held by the sample Archive, and claimed as an original by the hostile one too: 409.
const SUSPECT: &str = "8JMKD3MGP8W/35MME4E";
/// Deleted in the sample Archive on 2014-01-02T17:23:57Z: 410.
const DELETED: &str = "sid.inpe.br/mtc-m19/2013/02.10.11.12";
/// The hostile Archive closes the connection when asked for it: 503.
const SILENT: &str = "urlib.net/www/2021/01.01.06.03";
/// The hostile Archive holds the request for it until the test lets it go.
const HELD: &str = "urlib.net/www/2021/01.01.06.04";
/// Known to no Archive: 404.
const UNKNOWN: &str = "urlib.net/www/2021/01.01.06.05";
/// A metadata item of the sample Archive, its target an HTML page.
const METADATA: &str = "sid.inpe.br/mtc-m18/2012/07.12.18.08.49";
/// The client network whose one resolution under way is [`HELD`]'s: its next one is a
/// 429 (the resolver trusts 127.0.0.1 to say who the reader is).
const BUSY_READER: &str = "198.51.100.7";

/// What the resolver of these tests needs: every Archive asked at every resolution (no
/// memory, none set aside), one resolution at a time per client network, misses enough;
/// its operator named in the header and the footer of every page.
const TABLES: &str = "trustedproxies = [\"127.0.0.1/32\"]\n[archives]\ntimeout = \"30s\"\nnetworks = [\"127.0.0.0/8\"]\ndormant_after = 0\n[memory]\nentries = 0\n[limits]\nper_client_resolutions = 1\nper_client_misses = 10000\n[site]\nname = \"Biblioteca do INPE\"\ncontact = \"https://urlib.example.org/contato\"\n";

/// The resolver, the sample Archive it includes (served by `ibi-archive serve`), and the
/// hostile Archive with the gate of [`HELD`].
struct System {
    resolver: Resolver,
    _serve: Serve,
    _peer: Peer,
    /// Set to let the request for [`HELD`] go.
    gate: Arc<(Mutex<bool>, Condvar)>,
    _tmp: tempfile::TempDir,
}

fn system(arrived: Sender<()>) -> System {
    let tmp = common::archive_tempdir();
    let resolver = Resolver::start_with(tmp.path(), TABLES);
    let root = archive(tmp.path(), "alpha", SAMPLE_SERVICE, &[], &[]);
    let address = format!("127.0.0.1:{}", free_port());
    configure(&root, &address, &resolver.service());
    let log = std::fs::File::create(root.with_extension("log")).unwrap();
    let serve = Serve::start_with(&root, log, &["--listen", &address]);
    resolver.register(SAMPLE_SERVICE, KEY);
    let (code, out, err) = archive_cmd("include", &root);
    assert_eq!(code, 0, "{out}{err}\n{}", resolver.log());
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let (g, arrived) = (gate.clone(), Mutex::new(arrived));
    let peer = hostile_archive(move |ibi, s| match ibi {
        SUSPECT => answer_200(
            s,
            b"url http://127.0.0.1:9/elsewhere.pdf\r\nstate Original\r\n",
        ),
        SILENT => {}
        HELD => {
            let _ = arrived.lock().unwrap().send(());
            let (open, opened) = &*g;
            let mut open = open.lock().unwrap();
            while !*open {
                open = opened.wait(open).unwrap();
            }
            answer_200(s, b"");
        }
        _ => answer_200(s, b""),
    });
    include_peer(&resolver, &peer, SECOND);
    System {
        resolver,
        _serve: serve,
        _peer: peer,
        gate,
        _tmp: tmp,
    }
}

impl System {
    fn open_gate(&self) {
        let (open, opened) = &*self.gate;
        *open.lock().unwrap() = true;
        opened.notify_all();
    }
}

impl Drop for System {
    fn drop(&mut self) {
        self.open_gate();
    }
}

/// The pages checked: a name, the target, the status a plain client gets, and the title
/// in Portuguese and in English.
fn pages() -> [(&'static str, String, u16, &'static str, &'static str); 8] {
    // Two Archives claim the original only where the reader requires it.
    let original = "?ibiurl.requireditemstatus=Original";
    [
        ("home", "/".into(), 200, "Resolvedor de IBI", "IBI resolver"),
        (
            "404",
            format!("/{UNKNOWN}"),
            404,
            "Item não encontrado",
            "Item not found",
        ),
        (
            "410",
            format!("/{DELETED}"),
            410,
            "Item removido",
            "Item removed",
        ),
        (
            "409",
            format!("/{SUSPECT}{original}"),
            409,
            "Alerta: mais de um original",
            "Alert: more than one original",
        ),
        (
            "503",
            format!("/{SILENT}"),
            503,
            "Arquivos indisponíveis",
            "Archives unavailable",
        ),
        (
            "400",
            "/x".into(),
            400,
            "URL persistente inválida",
            "Invalid persistent URL",
        ),
        (
            "400-form",
            "/?ibi=%3Cx%3E".into(),
            400,
            "IBI inválido",
            "Invalid IBI",
        ),
        (
            "inspection",
            format!("/{SUSPECT}{original}&noredirect"),
            200,
            "Inspeção da resolução",
            "Resolution inspected",
        ),
    ]
}

#[test]
fn every_page_of_the_resolver_in_a_browser_is_accessible_in_both_languages() {
    if !browser::available() {
        eprintln!("skipping: {}", browser::MISSING);
        return;
    }
    let (arrived, held) = channel();
    let s = system(arrived);
    let base = s.resolver.base();
    let mut checked = Vec::new();
    let pages = pages();
    for (name, target, status, title_pt, title_en) in &pages {
        let url = format!("{base}{target}");
        // What a plain client gets, first.
        assert_eq!(
            get(&url, "").status,
            *status,
            "{target}\n{}",
            s.resolver.log()
        );
        for (lang, title) in [("pt-BR", *title_pt), ("en", *title_en)] {
            let report = browser::check(&url, lang, &format!("resolver-{name}-{lang}"));
            assert_eq!(report.title, title, "{target} ({lang})");
            assert_eq!(report.status, *status, "{target} ({lang})");
            assert_eq!(report.final_url, url);
            assert_eq!(report.screenshots.len(), 3);
            report.assert_accessible();
            checked.push(report);
        }
    }
    // 429: a reader's network with a resolution under way (the one of HELD, which the
    // hostile Archive holds) asks for another.
    let authority = format!("127.0.0.1:{}", s.resolver.port);
    let held_request = std::thread::spawn(move || {
        let request = format!("GET /{HELD} HTTP/1.1\r\nHost: {authority}\r\nX-Forwarded-For: {BUSY_READER}\r\nConnection: close\r\n\r\n");
        http_raw(&authority, request.as_bytes(), false).status
    });
    held.recv().unwrap();
    let url = format!("{base}/{UNKNOWN}");
    for (lang, title) in [("pt-BR", "Pedidos demais"), ("en", "Too many requests")] {
        let report = browser::check_with(
            &url,
            lang,
            &format!("resolver-429-{lang}"),
            &[("X-Forwarded-For", BUSY_READER)],
        );
        assert_eq!(report.title, title, "{}", s.resolver.log());
        assert_eq!(report.status, 429);
        report.assert_accessible();
        checked.push(report);
    }
    s.open_gate();
    assert_eq!(held_request.join().unwrap(), 404);
    for report in &checked {
        for shot in &report.screenshots {
            let png = std::fs::read(shot).unwrap();
            assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{}", shot.display());
        }
    }
    assert_eq!(checked.len(), (pages.len() + 1) * 2);
}

/// The home page's form as a reader uses it: an IBI typed (spaces around it) and sent
/// ends, through the resolver's 303 and 302, on the page the Archive serves for it;
/// something else typed, on the 400 page, with the form again holding it.
#[test]
fn the_home_page_form_in_a_browser_leads_to_the_item() {
    if !browser::available() {
        eprintln!("skipping: {}", browser::MISSING);
        return;
    }
    let (arrived, _held) = channel();
    let s = system(arrived);
    let base = s.resolver.base();
    // Where a plain client is sent: the persistent URL, then the Archive's page.
    let see_other = get(&format!("{base}/?ibi={METADATA}"), "");
    assert_eq!(see_other.status, 303);
    assert_eq!(
        see_other.header("location"),
        Some(format!("{base}/{METADATA}").as_str())
    );
    let found = get(&format!("{base}/{METADATA}"), "");
    assert_eq!(found.status, 302, "{}", s.resolver.log());
    let location = found.header("location").unwrap().to_string();
    assert!(
        location.ends_with(&format!("/col/{METADATA}/doc/metadata.html")),
        "{location}"
    );
    let fill = |value: &str| {
        format!(
            "document.getElementById('ibi').value = {}; document.querySelector('form').requestSubmit(); true",
            serde_json::Value::from(value)
        )
    };
    for lang in ["pt-BR", "en"] {
        let mut b = Browser::launch(lang);
        b.open(&format!("{base}/"));
        b.navigate_by(&fill(&format!("  {METADATA} ")));
        assert_eq!(b.location(), location, "{}", s.resolver.log());
        assert_eq!(b.status(), 200);
        // Something that is no IBI: the 400 page, the form holding it.
        b.open(&format!("{base}/"));
        b.navigate_by(&fill("<b>no IBI</b>"));
        assert_eq!(b.location(), format!("{base}/?ibi=%3Cb%3Eno+IBI%3C%2Fb%3E"));
        assert_eq!(b.status(), 400);
        assert_eq!(
            b.title(),
            if lang == "en" {
                "Invalid IBI"
            } else {
                "IBI inválido"
            }
        );
        assert_eq!(
            b.evaluate("document.getElementById('ibi').value"),
            "<b>no IBI</b>"
        );
        b.screenshot(&format!("resolver-form-refused-{lang}"));
        assert_eq!(b.evaluate("document.querySelectorAll('b').length"), 0);
        // A persistent URL of this resolver pasted: the same item.
        b.navigate_by(&fill(&format!("{base}/{METADATA}")));
        assert_eq!(b.location(), location);
    }
}

/// A page with what the check must find: no language, an image without text, a field
/// without a label, faint text; served with the resolver's Content-Security-Policy, which
/// does not keep axe-core out. Each is found with its impact, and the page fails.
#[test]
fn the_accessibility_check_finds_what_a_page_lacks() {
    if !browser::available() {
        eprintln!("skipping: {}", browser::MISSING);
        return;
    }
    const FAULTY: &str = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Faulty</title></head><body><main><h1>Faulty</h1><img src=\"x.png\"><p style=\"color:#c8c8c8;background:#fff\">faint text</p><input type=\"text\" name=\"q\"></main></body></html>\n";
    let peer = Peer::start(|_, s| {
        let _ = std::io::Write::write_all(
            s,
            format!("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Security-Policy: default-src 'none'; style-src 'unsafe-inline'\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{FAULTY}", FAULTY.len()).as_bytes(),
        );
    });
    let url = format!("http://{}/faulty", peer.addr);
    let report = browser::check(&url, "en", "faulty-page");
    assert_eq!(report.title, "Faulty");
    let mut found: Vec<(&str, &str, &str)> = report
        .failing()
        .iter()
        .filter(|v| v.view == "phone")
        .map(|v| (v.id.as_str(), v.impact.as_str(), v.target.as_str()))
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("color-contrast", "serious", "p"),
            ("html-has-lang", "serious", "html"),
            ("image-alt", "critical", "img"),
            ("label", "critical", "input"),
        ],
        "{:#?}",
        report.violations
    );
    // The same in every view.
    assert_eq!(report.failing().len(), 3 * found.len());
    let failed = std::panic::catch_unwind(|| report.assert_accessible()).unwrap_err();
    let message = failed.downcast_ref::<String>().unwrap();
    assert!(
        message.contains("- image-alt (critical, phone): "),
        "{message}"
    );
    assert!(
        message.contains("the first img <img src=\"x.png\">"),
        "{message}"
    );
    for shot in &report.screenshots {
        assert!(std::fs::read(shot)
            .unwrap()
            .starts_with(b"\x89PNG\r\n\x1a\n"));
    }
}
