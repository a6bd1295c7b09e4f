//! The whole system on loopback, real processes only: three Archives — two `ibi-archive
//! serve` and one CGI under lighttpd — included in an `ibi-resolver` by `ibi-archive
//! include`, and the standard's persistent URLs resolved through it. Every redirect is
//! followed and the bytes compared with the file on disk; every acknowledgment is counted
//! by `ibi-archive stats` of the Archive that gave the URL, and by no other.
//!
//! - alpha (serve): the sample Archive without the 2012 edition;
//! - beta (serve): only the 2012 edition of 8JMKD3MGP8W/35MMLL8 and its metadata, so the
//!   second round of Example 10.2 crosses Archives;
//! - gamma (lighttpd): a Copy of LK47B6W/362SFKH and a second Original of
//!   8JMKD3MGP7W/3EPGUE5.
//!
//! A real browser (Debian's headless Chromium) follows a persistent URL to the end.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::resolver::{
    archive, archive_cmd, archive_row, configure, counts, get, inclusion_request, Resolver, KEY,
    RESOLVER_IBI, SAMPLE_SERVICE,
};
use common::{free_port, http_get, Response};

const ALPHA: &str = SAMPLE_SERVICE;
const BETA: &str = "sid.inpe.br/mtc-m19@80/2009/08.21.17.02";
const GAMMA: &str = "urlib.net/www/2011/03.04.05.06";

/// The service IBI of an Archive included by hand (no `ibi-archive` behind it).
const BY_HAND: &str = "urlib.net/www/2012/01.01.01.01";

/// A listener that accepts connections and never answers; its address, and the number of
/// connections it has accepted.
fn silent_listener() -> (String, Arc<AtomicUsize>) {
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = silent.local_addr().unwrap().to_string();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in silent.incoming() {
            held.push(c);
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });
    (address, accepted)
}

struct System {
    _tmp: tempfile::TempDir,
    resolver: Resolver,
    alpha: PathBuf,
    beta: PathBuf,
    gamma: PathBuf,
    /// host:port → root.
    roots: BTreeMap<String, PathBuf>,
    _serves: Vec<common::Serve>,
    _lighttpd: common::Server,
}

/// The three Archives included in a resolver that gives each Archive `timeout`.
fn system(timeout: &str) -> System {
    system_with(timeout, "", |_| {})
}

/// [`system`] with `more` in the resolver's configuration ([`Resolver::start`]), and
/// `tweak` run on alpha's root before its server starts.
fn system_with(timeout: &str, more: &str, tweak: impl FnOnce(&Path)) -> System {
    let tmp = common::archive_tempdir();
    let resolver = Resolver::start(tmp.path(), timeout, more);
    let alpha = archive(
        tmp.path(),
        "alpha",
        ALPHA,
        &[],
        &["sid.inpe.br/mtc-m18/2012"],
    );
    let beta = archive(tmp.path(), "beta", BETA, &["sid.inpe.br/mtc-m18/2012"], &[]);
    let gamma = archive(
        tmp.path(),
        "gamma",
        GAMMA,
        &[
            "iconet.com.br/banon/2009/09.09.22.01",
            "sid.inpe.br/mtc-m19/2013",
        ],
        &[],
    );
    let copy = gamma.join("col/iconet.com.br/banon/2009/09.09.22.01/item.toml");
    let t = std::fs::read_to_string(&copy)
        .unwrap()
        .replace("\"Original\"", "\"Copy\"");
    std::fs::write(&copy, t).unwrap();
    tweak(&alpha);
    let mut roots = BTreeMap::new();
    let mut serves = Vec::new();
    for root in [&alpha, &beta] {
        let port = free_port();
        let address = format!("127.0.0.1:{port}");
        configure(root, &address, &resolver.service());
        let log = std::fs::File::create(root.with_extension("log")).unwrap();
        serves.push(common::Serve::start_with(
            root,
            log,
            &["--listen", &address],
        ));
        roots.insert(address, root.clone());
    }
    assert!(
        common::lighttpd_available(),
        "these tests need Debian's lighttpd (with mod_cgi): .ci/run installs it"
    );
    let lighttpd = common::start_lighttpd(&gamma, &common::ibi_archive_bin(), GAMMA);
    let address = lighttpd.authority();
    configure(&gamma, &address, &resolver.service());
    roots.insert(address, gamma.clone());
    for (service, root) in [(ALPHA, &alpha), (BETA, &beta), (GAMMA, &gamma)] {
        let (code, out, err) = resolver.command(
            &["register", service, "--email", "archive-admin@example.org"],
            &format!("{KEY}\n"),
        );
        assert_eq!(code, 0, "{out}{err}");
        let (code, out, err) = archive_cmd("include", root);
        assert_eq!(code, 0, "{out}{err}\n{}", resolver.log());
        assert_eq!(
            out, "status.archive included\nstatus.confirmation successful\n",
            "{err}"
        );
    }
    System {
        _tmp: tmp,
        resolver,
        alpha,
        beta,
        gamma,
        roots,
        _serves: serves,
        _lighttpd: lighttpd,
    }
}

impl System {
    /// Resolves `path`, expects a 302, follows it, compares the bytes with `file` (below
    /// the giving Archive's col/), and returns the Archive that gave the URL.
    fn redirect(&self, path: &str, accept_language: &str, file: &str) -> PathBuf {
        let r = get(&format!("{}{path}", self.resolver.base()), accept_language);
        if r.status != 302 {
            let sep = if path.contains('?') { '&' } else { '?' };
            let inspected = get(
                &format!("{}{path}{sep}noredirect", self.resolver.base()),
                accept_language,
            );
            panic!(
                "{path}: {} {}\n--- inspected ---\n{}\n--- log ---\n{}",
                r.status,
                r.text(),
                inspected.text(),
                self.resolver.log()
            );
        }
        let location = r.header("location").unwrap().to_string();
        let authority = location
            .strip_prefix("http://")
            .unwrap()
            .split('/')
            .next()
            .unwrap();
        let root = self
            .roots
            .get(authority)
            .unwrap_or_else(|| panic!("{location}"))
            .clone();
        let followed = http_get(&location);
        assert_eq!(followed.status, 200, "{location}");
        let on_disk = std::fs::read(root.join("col").join(file)).unwrap();
        assert!(
            followed.body == on_disk,
            "{path} → {location}: bytes differ from {file}"
        );
        root
    }

    /// Registers [`BY_HAND`] and asks the resolver to include it at `address`, as its
    /// Archive would; returns the resolver's answer.
    fn include_by_hand(&self, address: &str) -> String {
        let (code, _, err) = self
            .resolver
            .command(&["register", BY_HAND, "--email", "x@example.org"], KEY);
        assert_eq!(code, 0, "{err}");
        http_get(&inclusion_request(&self.resolver, address, BY_HAND, KEY)).text()
    }

    fn page(&self, path: &str, accept_language: &str) -> Response {
        get(&format!("{}{path}", self.resolver.base()), accept_language)
    }
}

#[test]
fn the_standards_examples_resolve_across_three_archives() {
    // Not a test of timeouts: a loaded machine must not turn a slow answer into none.
    let s = system("20s");
    let mut expected: BTreeMap<(PathBuf, String), u64> = BTreeMap::new();
    let mut expect =
        |root: PathBuf, item: &str| *expected.entry((root, item.to_string())).or_default() += 1;

    // Example 10.1 (Example 8.1's second URL).
    let r = s.redirect(
        "/8JMKD3MGP8W/35MMLL8",
        "",
        "sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS 650.0-B-1.pdf",
    );
    assert_eq!(r, s.alpha);
    expect(r, "sid.inpe.br/mtc-m18@80/2009/07.21.14.43");
    // Example 10.2: alpha answers ibi.nextedition, beta the metadata of the last edition.
    let r = s.redirect(
        "/8JMKD3MGP8W/35MMLL8!:(oai_dc)",
        "",
        "sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/oai_dc.xml",
    );
    assert_eq!(r, s.beta);
    expect(r, "sid.inpe.br/mtc-m18/2012/07.12.18.08.49");
    // Example 8.5: the same through the verb list.
    let r = s.redirect(
        "/8JMKD3MGP8W/35MMLL8?ibiurl.verblist=GetLastEdition+GetMetadata(oai_dc)",
        "",
        "sid.inpe.br/mtc-m18/2012/07.12.18.08.49/doc/oai_dc.xml",
    );
    assert_eq!(r, s.beta);
    expect(r, "sid.inpe.br/mtc-m18/2012/07.12.18.08.49");
    // Example 8.4: the last edition itself, also in beta.
    let r = s.redirect(
        "/8JMKD3MGP8W/35MMLL8!",
        "",
        "sid.inpe.br/mtc-m18/2012/07.12.18.08/doc/CCSDS 650.0-M-2.pdf",
    );
    assert_eq!(r, s.beta);
    expect(r, "sid.inpe.br/mtc-m18/2012/07.12.18.08");
    // Example 8.2: metadata in free form and in oai_dc.
    let r = s.redirect(
        "/8JMKD3MGP8W/35MME4E:",
        "",
        "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47/doc/metadata.html",
    );
    expect(r, "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47");
    let r = s.redirect(
        "/8JMKD3MGP8W/35MME4E:(oai_dc)",
        "",
        "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47/doc/oai_dc.xml",
    );
    expect(r, "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47");
    // Example 8.3: a bare + by Accept-Language, +(pt), and the item itself in English.
    let r = s.redirect(
        "/8JMKD3MGP8W/35MME4E+",
        "pt-BR,fr;q=0.8,en;q=0.5,pt;q=0.3",
        "sid.inpe.br/mtc-m18@80/2009/08.25.19.43/doc/RTC-07.pdf",
    );
    expect(r, "sid.inpe.br/mtc-m18@80/2009/08.25.19.43");
    let r = s.redirect(
        "/8JMKD3MGP8W/35MME4E+",
        "en",
        "sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS 643.0-B-1.pdf",
    );
    expect(r, "sid.inpe.br/mtc-m18@80/2009/07.21.13.23");
    let r = s.redirect(
        "/8JMKD3MGP8W/35MME4E+(pt)",
        "en",
        "sid.inpe.br/mtc-m18@80/2009/08.25.19.43/doc/RTC-07.pdf",
    );
    expect(r, "sid.inpe.br/mtc-m18@80/2009/08.25.19.43");
    // Example 8.7: a file of the item (held by alpha, and by gamma as a copy).
    let r = s.redirect(
        "/LK47B6W/362SFKH/reference.bib",
        "",
        "iconet.com.br/banon/2009/09.09.22.01/doc/reference.bib",
    );
    expect(r, "iconet.com.br/banon/2009/09.09.22.01");
    // The Original, not the copy, under requireditemstatus.
    let r = s.redirect(
        "/LK47B6W/362SFKH?ibiurl.requireditemstatus=Original",
        "",
        "iconet.com.br/banon/2009/09.09.22.01/doc/@relatorio.pdf",
    );
    assert_eq!(r, s.alpha);
    expect(r, "iconet.com.br/banon/2009/09.09.22.01");

    // Example 8.6: the file list, a page of the Archive.
    let r = s.page("/LK47B6W/362SFKH?ibiurl.verblist=GetFileList", "");
    assert_eq!(r.status, 302, "{}", r.text());
    let list = http_get(r.header("location").unwrap());
    assert_eq!(list.status, 200);
    assert!(list.text().contains("reference.bib"), "{}", list.text());
    let giver = r
        .header("location")
        .unwrap()
        .strip_prefix("http://")
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_string();
    expect(
        s.roots[&giver].clone(),
        "iconet.com.br/banon/2009/09.09.22.01",
    );

    // Two Originals: the suspicion alert names both Archives.
    let r = s.page(
        "/8JMKD3MGP7W/3EPGUE5?ibiurl.requireditemstatus=Original",
        "en",
    );
    assert_eq!(r.status, 409, "{}", r.text());
    for service in [ALPHA, GAMMA] {
        assert!(r.text().contains(service), "{}", r.text());
    }
    // +(fr): the item is here, without that translation.
    let r = s.page("/8JMKD3MGP8W/35MME4E+(fr)", "pt-BR");
    assert_eq!(r.status, 404);
    assert!(
        r.text().contains("Tradução inexistente") && r.text().contains("<code>fr</code>"),
        "{}",
        r.text()
    );
    // A tombstone.
    let r = s.page("/sid.inpe.br/mtc-m19/2013/02.10.11.12", "en");
    assert_eq!(r.status, 410, "{}", r.text());
    assert!(
        r.text().contains("was removed on 2014-01-02T17:23:57Z"),
        "{}",
        r.text()
    );
    // Unknown, and malformed.
    let r = s.page("/8JMKD3MGP8W/35MME4F", "en");
    assert_eq!(r.status, 404);
    assert!(
        r.text().contains("No Archive knows the IBI"),
        "{}",
        r.text()
    );
    let r = s.page("/8JMKD3MGP8W/35MME4E!!", "en");
    assert_eq!(r.status, 400);
    assert!(
        r.text()
            .contains("is not one of the compositions of Table 8.2"),
        "{}",
        r.text()
    );
    // A language outside ISO 639-1 (Appendix B, Table B.1): no Archive is asked.
    let r = s.page("/8JMKD3MGP8W/35MME4E+(xx)", "en");
    assert_eq!(r.status, 400);
    assert!(
        r.text()
            .contains("<p>Modifier &quot;+(xx)&quot;: xx is not a language code of ISO 639-1.</p>"),
        "{}",
        r.text()
    );

    // Every acknowledgment counted once, by the Archive that gave the URL.
    let want: BTreeMap<PathBuf, BTreeMap<String, u64>> =
        expected
            .iter()
            .fold(BTreeMap::new(), |mut m, ((root, item), n)| {
                m.entry(root.clone()).or_default().insert(item.clone(), *n);
                m
            });
    let deadline = Instant::now() + common::HANG_GUARD;
    loop {
        let got: BTreeMap<PathBuf, BTreeMap<String, u64>> = [&s.alpha, &s.beta, &s.gamma]
            .iter()
            .map(|r| ((*r).clone(), counts(r)))
            .filter(|(_, c)| !c.is_empty())
            .collect();
        if got == want {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "counted {got:#?}\nexpected {want:#?}\n{}",
            s.resolver.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn inclusion_exclusion_and_refusals() {
    let s = system("20s");
    // The inspection view lists every Archive asked.
    let asked = |sys: &System| -> String {
        let r = get(
            &format!("{}/8JMKD3MGP8W/35MME4F?noredirect", sys.resolver.base()),
            "",
        );
        assert_eq!(r.status, 200);
        r.text()
    };
    assert!(asked(&s).contains(GAMMA));
    // Wrong key and unregistered Archive: the same 403.
    let wrong = http_get(&inclusion_request(
        &s.resolver,
        "127.0.0.1:9",
        GAMMA,
        "1234567891",
    ));
    let unknown = http_get(&inclusion_request(
        &s.resolver,
        "127.0.0.1:9",
        "urlib.net/www/2020/01.01.01.01",
        KEY,
    ));
    assert_eq!((wrong.status, unknown.status), (403, 403));
    assert_eq!(wrong.text(), unknown.text());
    assert_eq!(
        wrong.text(),
        "error {unknown Archive or wrong registration key}\r\n"
    );
    assert!(!s.resolver.log().contains("1234567891") && !s.resolver.log().contains(KEY));
    // A missing pair is named.
    let r = http_get(&format!(
        "{}?servicesubject=inclusionRequest",
        s.resolver.service()
    ));
    assert_eq!(
        (r.status, r.text().as_str()),
        (400, "error {missing archiveaddress}\r\n")
    );
    // An Archive whose service cannot be reached is included without confirmation.
    let closed = free_port();
    let gamma_address = s
        .roots
        .iter()
        .find(|(_, r)| **r == s.gamma)
        .unwrap()
        .0
        .clone();
    std::fs::write(
        s.gamma.join("archive.toml"),
        std::fs::read_to_string(s.gamma.join("archive.toml"))
            .unwrap()
            .replace(&gamma_address, &format!("127.0.0.1:{closed}")),
    )
    .unwrap();
    // While it still answers at the address it was included at, that is no move.
    let (code, out, err) = archive_cmd("include", &s.gamma);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            1,
            "",
            &*format!("ibi-archive: include: the resolver at {} answered 409 Conflict: error {{the Archive still answers at its old address {gamma_address}: switch it off or exclude it first}}\n", s.resolver.service())
        )
    );
    let (code, out, err) = archive_cmd("exclude", &s.gamma);
    assert_eq!(
        (code, out.as_str()),
        (0, "status.archive excluded\n"),
        "{err}"
    );
    let (code, out, _) = archive_cmd("include", &s.gamma);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "status.archive included\nstatus.confirmation unsuccessful\n"
        )
    );
    // Exclusion: excluded, and asked no more.
    let (code, out, err) = archive_cmd("exclude", &s.gamma);
    assert_eq!(
        (code, out.as_str()),
        (0, "status.archive excluded\n"),
        "{err}"
    );
    assert!(!asked(&s).contains(GAMMA), "{}", asked(&s));
    let (_, listing, _) = s.resolver.command(&["archives", "--csv"], "");
    assert!(
        listing.contains(&format!("{GAMMA},127.0.0.1:{closed},no,unsuccessful")),
        "{listing}"
    );
}

/// An Archive whose service IBI is an IBIp is one Archive under every case of it: one
/// registered as LK47B6W/32NSFRP whose archive.toml spells it lk47b6w/32nsfrp (then the
/// reverse) is included, listed, excluded and unregistered, and its items resolve, not
/// refused as unknown. (LK47B6W/32NSFRP codes 127.0.0.1 and the service item's date.)
#[test]
fn an_archive_is_one_archive_under_every_case_of_its_service_ibip() {
    let tmp = common::archive_tempdir();
    let resolver = Resolver::start(tmp.path(), "20s", "");
    let root = archive(tmp.path(), "alpha", "lk47b6w/32nsfrp", &[], &[]);
    let service_item = root.join("col/sid.inpe.br/mtc-m18@80/2008/03.17.15.17/item.toml");
    let toml = std::fs::read_to_string(&service_item).unwrap();
    std::fs::write(&service_item, format!("ibip = \"LK47B6W/32NSFRP\"\n{toml}")).unwrap();
    let address = format!("127.0.0.1:{}", free_port());
    configure(&root, &address, &resolver.service());
    let log = std::fs::File::create(root.with_extension("log")).unwrap();
    let _serve = common::Serve::start_with(&root, log, &["--listen", &address]);
    let (code, out, err) = common::run_cmd(&["check", "--root", root.to_str().unwrap()]);
    assert_eq!(
        (code, out.as_str()),
        (0, "checked 14 items: 0 faults\n"),
        "{err}"
    );

    for (registered, spelt) in [
        ("LK47B6W/32NSFRP", "lk47b6w/32nsfrp"),
        ("lk47b6w/32nsfrp", "LK47B6W/32NSFRP"),
    ] {
        let toml = std::fs::read_to_string(root.join("archive.toml")).unwrap();
        let toml = toml.replace(
            "archiveserviceibi = \"LK47B6W/32NSFRP\"",
            "archiveserviceibi = \"lk47b6w/32nsfrp\"",
        );
        let toml = toml.replace(
            "archiveserviceibi = \"lk47b6w/32nsfrp\"",
            &format!("archiveserviceibi = \"{spelt}\""),
        );
        std::fs::write(root.join("archive.toml"), toml).unwrap();
        let (code, out, err) = resolver.command(
            &[
                "register",
                registered,
                "--email",
                "archive-admin@example.org",
            ],
            &format!("{KEY}\n"),
        );
        assert_eq!(
            (code, out.as_str()),
            (0, "registered LK47B6W/32NSFRP\n"),
            "{err}"
        );
        let (code, out, err) = archive_cmd("include", &root);
        assert_eq!(
            (code, out.as_str()),
            (
                0,
                "status.archive included\nstatus.confirmation successful\n"
            ),
            "{registered} included as {spelt}: {err}\n{}",
            resolver.log()
        );
        let (_, listing, _) = resolver.command(&["archives", "--csv"], "");
        let rows: Vec<&str> = listing.lines().skip(1).collect();
        assert_eq!(rows.len(), 1, "{listing}");
        assert!(
            rows[0].starts_with(&format!("LK47B6W/32NSFRP,{address},yes,successful,")),
            "{listing}"
        );
        // Asked at the spelling it included itself under, it gives the item's URL.
        let r = get(&format!("{}/LK47B6W/362SFKH", resolver.base()), "");
        assert_eq!(r.status, 302, "{}\n{}", r.text(), resolver.log());
        assert!(
            r.header("location")
                .unwrap()
                .starts_with(&format!("http://{address}/")),
            "{:?}",
            r.header("location")
        );
        let (code, out, err) = archive_cmd("exclude", &root);
        assert_eq!(
            (code, out.as_str()),
            (0, "status.archive excluded\n"),
            "{err}"
        );
        let (code, out, err) = resolver.command(&["unregister", spelt], "");
        assert_eq!(
            (code, out.as_str()),
            (0, "unregistered LK47B6W/32NSFRP\n"),
            "{err}"
        );
    }
}

/// How many requests to `archive` ended with `result` (answered, failed, timed_out), as
/// the resolver's /metrics count them.
fn archive_requests(s: &System, archive: &str, result: &str) -> u64 {
    let line = format!(
        "ibi_resolver_archive_requests_total{{archive=\"{archive}\",result=\"{result}\"}} "
    );
    metrics(s)
        .lines()
        .find_map(|l| l.strip_prefix(&line))
        .map_or(0, |n| n.parse().unwrap())
}

/// The requests to [`BY_HAND`] that ended, by result: (answered, failed, timed out).
fn by_hand_requests(s: &System) -> (u64, u64, u64) {
    (
        archive_requests(s, BY_HAND, "answered"),
        archive_requests(s, BY_HAND, "failed"),
        archive_requests(s, BY_HAND, "timed_out"),
    )
}

/// Judged by the order of events the resolver counts in /metrics, not by a clock: a hit
/// is answered while its request to an Archive that never answers is still under way (it
/// times out later, in the background), and a miss once its request to that Archive, the
/// only one, has timed out.
#[test]
fn an_archive_that_never_answers_does_not_stop_hits_and_misses_end_in_time() {
    let s = system_with("3s", "[metrics]\nnetworks = [\"127.0.0.1/32\"]\n", |_| {});
    // A listener that accepts and never answers, included by hand (its confirmation
    // times out: included, unsuccessful).
    let (address, _) = silent_listener();
    assert_eq!(
        s.include_by_hand(&address),
        "status.archive included\r\nstatus.confirmation unsuccessful\r\n"
    );
    // Only resolutions count requests to an Archive (not its confirmation).
    let before = by_hand_requests(&s);
    s.redirect(
        "/8JMKD3MGP8W/35MMLL8",
        "",
        "sid.inpe.br/mtc-m18@80/2009/07.21.14.43/doc/CCSDS 650.0-B-1.pdf",
    );
    assert_eq!(
        by_hand_requests(&s),
        before,
        "the hit was answered after its request to the silent Archive ended"
    );
    // That request times out (3 s) in the background; the hang guard only bounds the wait.
    let deadline = Instant::now() + common::HANG_GUARD;
    while by_hand_requests(&s) == before {
        assert!(Instant::now() < deadline, "{}", metrics(&s));
        std::thread::sleep(Duration::from_millis(100));
    }
    let (answered, failed, timed_out) = before;
    let before = (answered, failed, timed_out + 1);
    assert_eq!(by_hand_requests(&s), before, "{}", metrics(&s));
    // Nothing found while an Archive that may not hold the IBI (neither where it was
    // minted nor remembered for it) did not answer: a 404, naming it.
    let r = s.page("/8JMKD3MGP8W/35MME4F", "en");
    assert_eq!(r.status, 404, "{}", r.text());
    assert!(r.header("retry-after").is_none());
    assert!(
        r.text().contains(&format!(
            "<p>No Archive that answered knows the IBI <code>8JMKD3MGP8W/35MME4F</code>.</p>\n<p>This Archive could not be asked; it is neither where the IBI was minted nor the Archive remembered for it:</p>\n<ul>\n<li>{BY_HAND}</li>\n</ul>\n"
        )),
        "{}",
        r.text()
    );
    // The miss was answered once its one request to the silent Archive had timed out.
    assert_eq!(
        by_hand_requests(&s),
        (answered, failed, timed_out + 2),
        "{}",
        metrics(&s)
    );
}

/// The DOM Chromium holds once `url` has loaded (every redirect followed), asking for
/// `lang` as a reader whose browser speaks it would.
fn browse(url: &str, lang: &str, profile: &Path) -> String {
    let chromium = common::browser::chromium().expect(
        "this test needs Debian's chromium-headless-shell (or chromium): .ci/run installs it",
    );
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        // --lang sets the interface language; the headless shell sends Accept-Language
        // only from --accept-lang.
        .arg(format!("--lang={lang}"))
        .arg(format!("--accept-lang={lang}"))
        .args(["--dump-dom", url])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut out).map(|_| out)
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish loading {url} in 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "chromium on {url}: {status}");
    String::from_utf8(reader.join().unwrap().unwrap()).unwrap()
}

/// The Portuguese translation of 8JMKD3MGP8W/35MME4E as a page, written as Chromium
/// serializes a document, so that what the browser holds is the file byte for byte (no
/// final newline: one after `</html>` is text of the body).
const PORTUGUESE_PAGE: &str = "<!DOCTYPE html>\n<html lang=\"pt\"><head><meta charset=\"utf-8\"><title>Relatório Técnico</title></head><body><h1>Recomendação para um modelo de referência</h1><p>Tradução para o português do documento CCSDS 643.0-B-1.</p></body></html>";

#[test]
fn a_browser_follows_a_persistent_url_to_the_portuguese_document() {
    const TRANSLATION: &str = "col/sid.inpe.br/mtc-m18@80/2009/08.25.19.43";
    let s = system_with("20s", "", |alpha| {
        let item = alpha.join(TRANSLATION).join("item.toml");
        let toml = std::fs::read_to_string(&item)
            .unwrap()
            .replace("target    = \"RTC-07.pdf\"", "target    = \"RTC-07.html\"");
        assert!(toml.contains("RTC-07.html"), "{toml}");
        std::fs::write(&item, toml).unwrap();
        let page = alpha.join(TRANSLATION).join("doc/RTC-07.html");
        std::fs::write(&page, PORTUGUESE_PAGE).unwrap();
        common::make_world_readable(&page);
    });
    let profile = s._tmp.path().join("chromium-profile");
    let base = s.resolver.base();

    // --dump-dom ends what it prints with a newline of its own.
    let dom = browse(&format!("{base}/8JMKD3MGP8W/35MME4E+"), "pt-BR", &profile);
    let on_disk = std::fs::read(s.alpha.join(TRANSLATION).join("doc/RTC-07.html")).unwrap();
    assert_eq!(
        dom.strip_suffix('\n').map(str::as_bytes),
        Some(on_disk.as_slice()),
        "{}",
        s.resolver.log()
    );

    let dom = browse(&format!("{base}/8JMKD3MGP8W/35MME4F"), "pt-BR", &profile);
    assert!(
        dom.contains("<p>Nenhum Arquivo conhece o IBI <code>8JMKD3MGP8W/35MME4F</code>.</p>"),
        "{dom}"
    );
    // The page follows the reader's language: the same miss asked in English.
    let dom = browse(&format!("{base}/8JMKD3MGP8W/35MME4F"), "en", &profile);
    assert!(
        dom.contains("<p>No Archive knows the IBI <code>8JMKD3MGP8W/35MME4F</code>.</p>"),
        "{dom}"
    );
}

/// urlRequests for `ibi` in the request log of an `ibi-archive serve` (its stderr).
fn url_requests(root: &Path, ibi: &str) -> usize {
    let log = std::fs::read_to_string(root.with_extension("log")).unwrap_or_default();
    let asked = format!("parsedibiurl.ibi={ibi}");
    log.lines()
        .filter(|l| l.contains("servicesubject=urlRequest") && l.contains(&asked))
        .count()
}

#[test]
fn the_location_memory_asks_one_archive_corrects_itself_and_outlives_a_restart() {
    const ITEM: &str = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23";
    const FILE: &str = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS 643.0-B-1.pdf";
    let mut s = system("20s");
    let path = format!("/{ITEM}");
    // An Archive logs a request after answering it: counts are read once they hold
    // still for 200 ms.
    let asked = |s: &System| {
        let count = || (url_requests(&s.alpha, ITEM), url_requests(&s.beta, ITEM));
        let mut last = count();
        loop {
            std::thread::sleep(Duration::from_millis(200));
            let now = count();
            if now == last {
                return now;
            }
            last = now;
        }
    };
    // The first resolution asks the item's home alone (alpha: its service IBI is of the
    // item's prefix), which holds it: no other Archive is asked.
    assert_eq!(s.redirect(&path, "", FILE), s.alpha);
    assert_eq!(asked(&s), (1, 0));
    // The next ones ask alpha alone.
    let before = asked(&s);
    assert_eq!(s.redirect(&path, "", FILE), s.alpha);
    assert_eq!(s.redirect(&path, "", FILE), s.alpha);
    assert_eq!(asked(&s), (before.0 + 2, before.1));
    let inspected = s.page(&format!("{path}?noredirect"), "en").text();
    assert!(
        inspected.contains(
            "Round 1: <code>sid.inpe.br/mtc-m18@80/2009/07.21.13.23</code> (remembered Archive)"
        ) && !inspected.contains("Round 2"),
        "{inspected}"
    );
    // Never for requireditemstatus=Original: every Archive is weighed.
    let weighed = s
        .page(
            &format!("{path}?ibiurl.requireditemstatus=Original&noredirect"),
            "en",
        )
        .text();
    // (The remembered Archive may hold the item all the same: the page says so.)
    assert!(
        !weighed.contains("(remembered Archive)")
            && !weighed.contains("Round 2")
            && weighed.contains("remembered: may hold it"),
        "{weighed}"
    );

    // The item moves to beta: alpha, asked first, answers nothing; every Archive is
    // asked, beta is remembered.
    let to = s.beta.join("col").join(ITEM);
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::rename(s.alpha.join("col").join(ITEM), &to).unwrap();
    let before = asked(&s);
    assert_eq!(s.redirect(&path, "", FILE), s.beta);
    // alpha, asked first, is not asked again by the fan-out.
    assert_eq!(asked(&s), (before.0 + 1, before.1 + 1));
    let before = asked(&s);
    assert_eq!(s.redirect(&path, "", FILE), s.beta);
    assert_eq!(asked(&s), (before.0, before.1 + 1));

    // A restart keeps what was learnt.
    s.resolver.restart();
    let before = asked(&s);
    assert_eq!(s.redirect(&path, "", FILE), s.beta);
    assert_eq!(asked(&s), (before.0, before.1 + 1), "{}", s.resolver.log());
}

/// `/metrics` of the resolver, asked from 127.0.0.1.
fn metrics(s: &System) -> String {
    s.resolver.metrics()
}

#[test]
fn a_dead_archive_falls_dormant_is_probed_and_wakes_when_it_answers() {
    let s = system_with(
        "20s",
        "dormant_after = 2\nprobe = \"1s\"\n[metrics]\nnetworks = [\"127.0.0.1/32\"]\n",
        |_| {},
    );
    // An Archive whose port is closed: included, unconfirmed.
    let port = free_port();
    let address = format!("127.0.0.1:{port}");
    assert_eq!(
        s.include_by_hand(&address),
        "status.archive included\r\nstatus.confirmation unsuccessful\r\n"
    );
    let service = BY_HAND;
    let up = |s: &System, v: u8| {
        metrics(s).contains(&format!(
            "ibi_resolver_archive_up{{archive=\"{service}\"}} {v}\n"
        ))
    };
    // An IBI minted where it was (its prefix is its service IBI's, urlib.net/www), and
    // one minted elsewhere (8JMKD3MGP8W, 150.163.34.243).
    let (at_home, elsewhere) = ("/urlib.net/www/2099/01.01.00.00", "/8JMKD3MGP8W/35MME4F");
    let named = format!("<li>{service}</li>");
    // Two misses fail on it; then it is dormant, and no longer asked. Its silence is a
    // 503 for an IBI it may hold, its home's; a 404 naming it for the other.
    for path in [at_home, elsewhere] {
        let r = s.page(path, "en");
        let status = if path == at_home { 503 } else { 404 };
        assert_eq!(r.status, status, "{path}: {}", r.text());
        assert!(r.text().contains(&named), "{}", r.text());
    }
    // Dormant, it is still one that could hold the item: misses of IBIs minted there
    // stay 503.
    let r = s.page(at_home, "en");
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(r.text().contains(&named), "{}", r.text());
    let r = s.page(elsewhere, "en");
    assert_eq!(r.status, 404, "{}", r.text());
    assert!(
        s.resolver.log().contains(&format!(
            "ibi-resolver: {service} failed 2 times in a row: dormant, asked no more until it answers\n"
        )),
        "{}",
        s.resolver.log()
    );
    let inspected = s.page("/8JMKD3MGP8W/35MME4F?noredirect", "en").text();
    assert!(
        inspected.contains(&format!(
            "<tr><td>{address}<br><code>{service}</code></td><td>dormant</td>"
        )),
        "{inspected}"
    );
    assert!(up(&s, 0), "{}", metrics(&s));
    // The operator sees it (written within the registry's refresh, 2 s).
    let deadline = Instant::now() + common::HANG_GUARD;
    loop {
        let (_, listing, _) = s.resolver.command(&["archives"], "");
        if listing.contains(&format!("{service}  {address}  included, dormant  ")) {
            break;
        }
        assert!(Instant::now() < deadline, "{listing}");
        std::thread::sleep(Duration::from_millis(100));
    }
    // /metrics only for the networks allowed.
    let other = common::http_get_from(
        "127.0.0.2".parse().unwrap(),
        &format!("{}/metrics", s.resolver.base()),
    );
    assert_eq!(other.status, 404);

    // The Archive comes up on its port: the next probe (every second) wakes it.
    let tmp = common::archive_tempdir();
    let delta = archive(
        tmp.path(),
        "delta",
        service,
        &["sid.inpe.br/mtc-m19/2013"],
        &[],
    );
    configure(&delta, &address, &s.resolver.service());
    let _serve = common::Serve::start_with(
        &delta,
        std::fs::File::create(delta.with_extension("log")).unwrap(),
        &["--listen", &address],
    );
    let deadline = Instant::now() + common::HANG_GUARD;
    while !up(&s, 1) {
        assert!(
            Instant::now() < deadline,
            "{}\n{}",
            metrics(&s),
            s.resolver.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(s.resolver.log().contains(&format!(
        "ibi-resolver: {service} answers again: asked again\n"
    )));
    for path in [at_home, elsewhere] {
        let r = s.page(path, "en");
        assert_eq!(r.status, 404, "{path}: {}", r.text());
        assert!(!r.text().contains("not answer"), "{}", r.text());
        assert!(!r.text().contains("could not be asked"), "{}", r.text());
    }
}

#[test]
fn beyond_its_resolutions_the_resolver_answers_503_with_retry_after() {
    let s = system_with("2s", "[limits]\nresolutions = 1\n", |_| {});
    // An Archive that accepts and never answers keeps a miss under way for 2 s.
    let (address, accepted) = silent_listener();
    s.include_by_hand(&address);
    let base = s.resolver.base();
    let confirmed = accepted.load(Ordering::SeqCst);
    let first = std::thread::spawn(move || get(&format!("{base}/8JMKD3MGP8W/35MME4F"), "en"));
    // Under way once the silent Archive has been asked.
    let deadline = Instant::now() + common::HANG_GUARD;
    while accepted.load(Ordering::SeqCst) == confirmed {
        assert!(
            Instant::now() < deadline,
            "the silent Archive was never asked"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let r = s.page("/8JMKD3MGP8W/35MME4E", "en");
    assert_eq!(r.status, 503, "{}", r.text());
    assert_eq!(r.header("retry-after"), Some("1"));
    assert!(r
        .text()
        .contains("The resolver is answering as many requests as it takes."));
    // The silent Archive may not hold the IBI: a 404 once it timed out.
    assert_eq!(first.join().unwrap().status, 404);
    // Once it ended, resolutions are taken again.
    s.redirect(
        "/8JMKD3MGP8W/35MME4E",
        "en",
        "sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS 643.0-B-1.pdf",
    );
    let m = metrics(&s);
    for line in [
        "ibi_resolver_overloaded_total 1\n",
        "ibi_resolver_resolutions_total{outcome=\"not_found\"} 1\n",
        "ibi_resolver_resolutions_total{outcome=\"found\"} 1\n",
    ] {
        assert!(m.contains(line), "{line} in\n{m}");
    }
}

/// An Archive included at one address that asks to be included at another (whoever
/// holds its key may ask) is refused, `409`, while it still answers at the old one, the
/// refusal counted; once the old one is off, or excluded, it moves: one log line naming
/// both addresses, counted in `/metrics` and in the registry, listed by `ibi-resolver
/// archives`. One Archive, a copy of it served at each address.
#[test]
fn an_archive_moves_only_once_its_old_address_no_longer_answers_and_every_move_is_told() {
    let tmp = common::archive_tempdir();
    let resolver = Resolver::start(tmp.path(), "2s", "");
    resolver.register(ALPHA, KEY);
    let id = ALPHA.replace("@80/", "/");
    let place = |name: &str| {
        let root = archive(tmp.path(), name, ALPHA, &[], &[]);
        let address = format!("127.0.0.1:{}", free_port());
        configure(&root, &address, &resolver.service());
        (root, address)
    };
    let serve_at = |root: &Path, address: &str| {
        let log = std::fs::File::create(root.with_extension("log")).unwrap();
        common::Serve::start_with(root, log, &["--listen", address])
    };
    let (old_root, old) = place("old");
    let (new_root, new) = place("new");
    let mut old_serve = serve_at(&old_root, &old);
    let _new_serve = serve_at(&new_root, &new);
    let included = (
        0,
        "status.archive included\nstatus.confirmation successful\n".to_string(),
    );
    let include = |root: &Path| {
        let (code, out, err) = archive_cmd("include", root);
        assert!(!err.contains(KEY), "{err}");
        (code, format!("{out}{err}"))
    };
    assert_eq!(include(&old_root), included, "{}", resolver.log());
    // Moves of the listing: (address, moves, movedfrom, whether movedat, movesrefused).
    let moves = || {
        let (code, csv, err) = resolver.command(&["archives", "--csv"], "");
        assert_eq!(code, 0, "{err}");
        let row = archive_row(&csv, ALPHA).unwrap();
        (
            row["address"].clone(),
            row["moves"].clone(),
            row["movedfrom"].clone(),
            row["movedat"] != "-",
            row["movesrefused"].clone(),
        )
    };
    let listed = |address: &str, moves: &str, from: &str, refused: &str| {
        (
            address.to_string(),
            moves.to_string(),
            from.to_string(),
            from != "-",
            refused.to_string(),
        )
    };
    let counted = |result: &str| {
        common::resolver::sample(
            &resolver.metrics(),
            &format!("ibi_resolver_archive_moves_total{{archive=\"{id}\",result=\"{result}\"}}"),
        )
    };
    // The log line of the last request that `note` ends.
    let logged = |status: u16, note: &str| {
        resolver.log().lines().any(|l| {
            l.starts_with(&format!(
                "ibi-resolver: 127.0.0.1 \"GET /{RESOLVER_IBI}?servicesubject=inclusionRequest&…\" {status} "
            )) && l.ends_with(note)
        })
    };
    assert_eq!(moves(), listed(&old, "0", "-", "0"));

    // The new address while the old one answers: refused, and said why.
    assert_eq!(
        include(&new_root),
        (
            1,
            format!("ibi-archive: include: the resolver at {} answered 409 Conflict: error {{the Archive still answers at its old address {old}: switch it off or exclude it first}}\n", resolver.service())
        )
    );
    assert_eq!(moves(), listed(&old, "0", "-", "1"));
    assert!(
        logged(
            409,
            &format!("{id}: move from {old} to {new} refused: the Archive still answers at {old}")
        ),
        "{}",
        resolver.log()
    );
    assert_eq!(counted("refused"), Some(1));

    // The old one switched off: moved, in one line naming both addresses.
    old_serve.kill();
    assert_eq!(include(&new_root), included, "{}", resolver.log());
    assert_eq!(moves(), listed(&new, "1", &old, "1"));
    assert!(
        logged(
            200,
            &format!("{id}: included at {new}, moved from {old}, confirmation successful")
        ),
        "{}",
        resolver.log()
    );
    assert_eq!(counted("moved"), Some(1));

    // Back to the old address while the new one still runs, but excluded first.
    let _old_again = serve_at(&old_root, &old);
    let (code, out, err) = archive_cmd("exclude", &new_root);
    assert_eq!(
        (code, out.as_str()),
        (0, "status.archive excluded\n"),
        "{err}"
    );
    assert_eq!(include(&old_root), included, "{}", resolver.log());
    assert_eq!(moves(), listed(&old, "2", &new, "1"));
    assert_eq!(counted("moved"), Some(2));
    // The listing for a person says it too.
    let (_, text, _) = resolver.command(&["archives"], "");
    assert!(
        text.contains(&format!(
            " from {new}  moves refused 1 (it answered at its address)\n"
        )) && text.contains("  moved 2 times, last "),
        "{text}"
    );
    // And its items are resolved at the old address again.
    let r = http_get(&format!(
        "{}/sid.inpe.br/mtc-m18@80/2009/07.21.13.23",
        resolver.base()
    ));
    assert_eq!(r.status, 302, "{}", resolver.log());
    assert!(
        r.header("location")
            .is_some_and(|l| l.starts_with(&format!("http://{old}/"))),
        "{:?}",
        r.header("location")
    );
}

/// A resolver just started, before any request: `/metrics` holds every counter of a fixed
/// set of labels at 0 (so an alert on a rate sees it from the start), the build's
/// version, the registry answering, and the process's standard figures.
#[test]
fn a_fresh_resolvers_metrics_hold_its_counters_at_zero_its_build_and_its_process() {
    let dir = tempfile::tempdir().unwrap();
    let resolver = Resolver::start(
        dir.path(),
        "5s",
        "[metrics]\nnetworks = [\"127.0.0.1/32\"]\n",
    );
    let m = resolver.metrics();
    let zero = |series: String| {
        assert_eq!(
            common::resolver::sample(&m, &series),
            Some(0),
            "{series} in\n{m}"
        );
    };
    for outcome in [
        "found",
        "not_found",
        "unavailable",
        "no_translation",
        "deleted",
        "suspicion",
        "no_original",
        "unverifiable",
        "chain",
        "throttled",
        "bad_request",
        "timed_out",
    ] {
        zero(format!(
            "ibi_resolver_resolutions_total{{outcome=\"{outcome}\"}}"
        ));
    }
    for result in ["hit", "stale", "verify", "home", "home_miss", "miss"] {
        zero(format!(
            "ibi_resolver_location_memory_total{{result=\"{result}\"}}"
        ));
    }
    for result in ["sent", "failed", "dropped"] {
        zero(format!(
            "ibi_resolver_acknowledgments_total{{result=\"{result}\"}}"
        ));
    }
    for limit in ["resolutions", "misses", "connections"] {
        zero(format!("ibi_resolver_throttled_total{{limit=\"{limit}\"}}"));
    }
    for counter in ["overloaded", "abandoned", "loops"] {
        zero(format!("ibi_resolver_{counter}_total"));
    }
    assert!(
        m.contains(&format!(
            "\nibi_resolver_build_info{{version=\"{}\"}} 1\n",
            env!("CARGO_PKG_VERSION")
        )),
        "{m}"
    );
    assert_eq!(
        common::resolver::sample(&m, "ibi_resolver_registry_up"),
        Some(1)
    );
    // The process's figures: this very process, by its pid's /proc.
    let pid = resolver.pid();
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count() as u64;
    let open = common::resolver::sample(&m, "process_open_fds").unwrap();
    assert!(open.abs_diff(fds) <= 4, "{open} open, {fds} now\n{m}");
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let max: u64 = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(common::resolver::sample(&m, "process_max_fds"), Some(max));
    let rss = common::resolver::sample(&m, "process_resident_memory_bytes").unwrap();
    assert!(rss > 1 << 20 && rss < 1 << 30, "{rss}");
    let start = common::resolver::sample(&m, "process_start_time_seconds").unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(start <= now && start + 60 > now, "{start} {now}");
    assert!(m.contains("\n# TYPE process_cpu_seconds counter\n"), "{m}");
}
