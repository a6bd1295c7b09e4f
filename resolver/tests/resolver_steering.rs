//! Steering readers away from the Archive that holds an item, and the resolver's own
//! exposure: each test is an attack or a fault on a whole system on loopback, real
//! processes only. R is `ibi-archive serve` over a copy of the sample Archive (it holds
//! LK47B6W/362SFKH, an Original), included by `ibi-archive include`; M and the other
//! hostile Archives are small servers of `common::peer`, registered and included through
//! the resolver service as any Archive is.
//!
//! - the location memory is not taken over through a file path, an inspection or a
//!   verb, survives a restart, and is shown and forgotten by `ibi-resolver memory` and
//!   `forget`; a second claim of an Original is a conflict, not a move;
//! - a flood of misses does not make R dormant nor send R's readers to M;
//! - an answer without `state` claims no Original;
//! - the registration key never reaches a log line or a page, and wrong keys are slowed
//!   down per client network without delaying anyone else's inclusion;
//! - no resolver is included as an Archive (itself, another, or an address that is
//!   loopback in disguise);
//! - per-client bounds keep one client from starving another;
//! - HEAD sends no acknowledgment, an abandoned request is logged (499), and a repeated
//!   failure is logged once, then counted.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use common::peer::{answer_200, asked_ibi, Peer};
use common::resolver::sample;
use common::resolver::{
    archive, archive_cmd, configure, counts, get, include_peer, inclusion_request, Resolver, KEY,
    RESOLVER_IBI,
};
use common::{
    connect_from, free_port, http_get, http_get_from, http_request, http_request_with_body,
    Response, Serve, HANG_GUARD,
};

/// R's service IBI: a rep in its canonical spelling, as `memory` and the metrics write it.
const R_SERVICE: &str = "urlib.net/www/2020/02.02.02.01";
/// M's, the Archive that claims what it does not hold.
const M_SERVICE: &str = "urlib.net/www/2020/02.02.02.02";
/// The Original R holds (sample-archive/col/iconet.com.br/banon/2009/09.09.22.01).
const ITEM: &str = "LK47B6W/362SFKH";
/// Its rep, the item `ibi-archive stats` counts.
const ITEM_REP: &str = "iconet.com.br/banon/2009/09.09.22.01";
const INCLUDED: &str = "status.archive included\r\nstatus.confirmation successful\r\n";

// ---------------------------------------------------------------------------------------
// The system

/// R: `ibi-archive serve` over a copy of the sample Archive, registered and included in
/// `resolver`; its root and the server (whose request log is `<root>.log`).
fn serve_r(tmp: &Path, resolver: &Resolver) -> (PathBuf, Serve) {
    let root = archive(tmp, "r", R_SERVICE, &[], &[]);
    let address = format!("127.0.0.1:{}", free_port());
    configure(&root, &address, &resolver.service());
    let log = std::fs::File::create(root.with_extension("log")).unwrap();
    let serve = Serve::start_with(&root, log, &["--listen", &address]);
    assert_eq!(serve.address, address);
    resolver.register(R_SERVICE, KEY);
    let (code, out, err) = archive_cmd("include", &root);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "status.archive included\nstatus.confirmation successful\n"
        ),
        "{err}\n{}",
        resolver.log()
    );
    (root, serve)
}

/// M: answers every urlRequest, `delay` after it is asked, claiming the Original of the
/// IBI asked and a URL at evil.example.
fn claimant(delay: Duration) -> Peer {
    turncoat(delay, Arc::new(AtomicBool::new(true)))
}

/// M as an Archive that turns hostile: "not here" to every urlRequest while `hostile` is
/// false, then what [`claimant`] answers.
fn turncoat(delay: Duration, hostile: Arc<AtomicBool>) -> Peer {
    common::peer::archive(move |ibi, s| {
        if !hostile.load(Ordering::SeqCst) {
            answer_200(s, b"");
            return;
        }
        // The hostile Archive's own pace: part of its behaviour.
        std::thread::sleep(delay);
        let me = s.local_addr().unwrap();
        let body = format!(
            "archiveaddress {me}\r\nibi {{ibip {ibi}}}\r\nstate Original\r\nurl http://evil.example/{ibi}\r\n"
        );
        answer_200(s, body.as_bytes());
    })
}

/// Resolves the item as a reader would, until `ibi-resolver memory` names R for it (the
/// memory writes in batches); the last answer.
fn remembered_at_r(resolver: &Resolver, r_address: &str) -> String {
    let plain = format!("{}/{ITEM}", resolver.base());
    let reader = whither(&get(&plain, ""), r_address);
    watch(
        "`ibi-resolver memory` names R for the item",
        || match resolver.command(&["memory", ITEM], "") {
            (0, out, _) if out.starts_with(&format!("{ITEM}  {R_SERVICE}  used ")) => Ok(()),
            (code, out, err) => Err(format!("exit {code}: {out}{err}\n{}", resolver.log())),
        },
    );
    reader
}

/// How many urlRequests for `ibi` `peer` received.
fn asked_for(peer: &Peer, ibi: &str) -> usize {
    peer.targets()
        .iter()
        .filter(|t| asked_ibi(t) == Some(ibi))
        .count()
}

/// Waits for `event` (checked every 20 ms), failing with `state()` after [`HANG_GUARD`].
fn wait_for(what: &str, event: impl FnMut() -> bool, state: impl Fn() -> String) {
    let mut event = event;
    watch(what, || if event() { Ok(()) } else { Err(state()) });
}

/// Waits until `check` is `Ok` (checked every 20 ms), failing with its last `Err` after
/// [`HANG_GUARD`].
fn watch(what: &str, mut check: impl FnMut() -> Result<(), String>) {
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let last = match check() {
            Ok(()) => return,
            Err(last) => last,
        };
        assert!(
            Instant::now() < deadline,
            "{what}: not after {HANG_GUARD:?}\n{last}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Where an answer sends the reader: `302 to R`, `302 to M` (evil.example), or the
/// status and Location as they are.
fn whither(a: &Response, r_address: &str) -> String {
    let location = a.header("location").unwrap_or("");
    if a.status == 302 && location.starts_with(&format!("http://{r_address}/")) {
        "302 to R".into()
    } else if a.status == 302 && location.starts_with("http://evil.example/") {
        "302 to M".into()
    } else {
        format!("{} {location}", a.status).trim_end().to_string()
    }
}

/// How many times each word occurs.
fn tally<I: IntoIterator<Item = String>>(words: I) -> BTreeMap<String, usize> {
    let mut t = BTreeMap::new();
    for w in words {
        *t.entry(w).or_default() += 1;
    }
    t
}

/// `ibi_resolver_archive_requests_total{archive,result}`, 0 when absent.
fn archive_requests(resolver: &Resolver, archive: &str, result: &str) -> u64 {
    sample(
        &resolver.metrics(),
        &format!(
            "ibi_resolver_archive_requests_total{{archive=\"{archive}\",result=\"{result}\"}}"
        ),
    )
    .unwrap_or(0)
}

/// The field `column` of `service`'s row in `ibi-resolver archives --csv`.
fn archives_csv(resolver: &Resolver, service: &str, column: &str) -> Option<String> {
    let (code, out, err) = resolver.command(&["archives", "--csv"], "");
    assert_eq!(code, 0, "{err}");
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let i = header.iter().position(|h| *h == column)?;
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|f| f[0] == service)
        .and_then(|f| f.get(i).map(|v| v.to_string()))
}

/// The resolution of `path` shown, not followed, as JSON.
fn inspect(resolver: &Resolver, path: &str) -> serde_json::Value {
    let a = http_request_with_body(
        "GET",
        &format!("{}{path}?noredirect", resolver.base()),
        &[("Accept", "application/json")],
        b"",
    );
    assert_eq!(a.status, 200, "{}", a.text());
    serde_json::from_slice(&a.body).unwrap_or_else(|e| panic!("{e}: {}", a.text()))
}

/// Whether an inspection asked the remembered Archive in any round.
fn remembered_round(inspection: &serde_json::Value) -> bool {
    inspection["rounds"]
        .as_array()
        .is_some_and(|rounds| rounds.iter().any(|r| r["remembered"] == true))
}

/// `GET target` from `source` to the resolver on `port`: the answer, or `None` when the
/// connection is refused, reset or closed before a whole answer came (what a bound on
/// connections may do to a client beyond it).
fn attempt(source: IpAddr, port: u16, target: &str) -> Option<Response> {
    let mut s = connect_from(source, SocketAddr::from(([127, 0, 0, 1], port))).ok()?;
    s.set_read_timeout(Some(common::HTTP_TIMEOUT)).ok()?;
    s.write_all(
        format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    common::http::response_of(&raw).ok()
}

/// The lines of the resolver's log that contain `needle`.
fn log_lines(resolver: &Resolver, needle: &str) -> Vec<String> {
    resolver
        .log()
        .lines()
        .filter(|l| l.contains(needle))
        .map(str::to_string)
        .collect()
}

// ---------------------------------------------------------------------------------------
// 1–2. The location memory

/// The item is remembered at R; then M turns hostile, answering 300 ms after it is asked
/// (so that R, which holds the item, would win every race for it). A file path R does
/// not have is M's to answer, and must not move the item to M.
#[test]
fn a_file_path_or_an_inspection_does_not_move_a_remembered_item_to_another_archive() {
    let tmp = common::archive_tempdir();
    let mut resolver = Resolver::start(tmp.path(), "20s", "");
    let (_root, r) = serve_r(tmp.path(), &resolver);
    let hostile = Arc::new(AtomicBool::new(false));
    let m = turncoat(Duration::from_millis(300), hostile.clone());
    include_peer(&resolver, &m, M_SERVICE);
    let base = resolver.base();
    let plain = format!("{base}/{ITEM}");

    assert_eq!(
        remembered_at_r(&resolver, &r.address),
        "302 to R",
        "{}",
        resolver.log()
    );
    hostile.store(true, Ordering::SeqCst);
    // The file path: shown, then followed. R has no such file; M claims it.
    get(&format!("{base}/{ITEM}/nonexistent.pdf?noredirect"), "");
    get(&format!("{base}/{ITEM}/nonexistent.pdf"), "");
    let after = tally((0..10).map(|_| whither(&get(&plain, ""), &r.address)));
    assert_eq!(
        after,
        tally(vec!["302 to R".to_string(); 10]),
        "the item after its file path was asked for\n{}",
        resolver.log()
    );

    resolver.restart();
    let restarted = tally((0..10).map(|_| whither(&get(&plain, ""), &r.address)));
    assert_eq!(
        restarted,
        tally(vec!["302 to R".to_string(); 10]),
        "after a restart\n{}",
        resolver.log()
    );

    // The operator's view: written in batches by the server.
    watch(
        "`ibi-resolver memory LK47B6W/362SFKH` names R",
        || match resolver.command(&["memory", ITEM], "") {
            (0, _, _) => Ok(()),
            (code, out, err) => Err(format!("exit {code}: {out}{err}")),
        },
    );
    let (_, out, _) = resolver.command(&["memory", ITEM], "");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.starts_with(&format!("{ITEM}  {R_SERVICE}  used ")) && out.contains("  verified "),
        "{out}"
    );
    let (_, all, _) = resolver.command(&["memory"], "");
    assert!(all.lines().any(|l| l == out.trim_end()), "{all}");

    let (code, out, err) = resolver.command(&["forget", ITEM], "");
    assert_eq!(
        (code, out.as_str()),
        (0, "forgot LK47B6W/362SFKH\n"),
        "{err}"
    );
    let (code, out, _) = resolver.command(&["memory", ITEM], "");
    assert_eq!(code, 1, "{out}");
    let (code, _, _) = resolver.command(&["forget", ITEM], "");
    assert_eq!(code, 1);
    // The running server drops it within a few seconds.
    watch("the inspection shows no remembered round", || {
        let shown = inspect(&resolver, &format!("/{ITEM}"));
        if remembered_round(&shown) {
            Err(format!("{shown:#}"))
        } else {
            Ok(())
        }
    });
}

/// With every remembered location expired at once, each resolution verifies R's by
/// asking every Archive; M's claim of the same Original is a conflict, not a move.
#[test]
fn a_second_claim_of_a_remembered_original_is_a_conflict_and_readers_stay_with_the_holder() {
    let tmp = common::archive_tempdir();
    let resolver = Resolver::start(tmp.path(), "20s", "[memory]\nexpiry = \"1ms\"\n");
    let (_root, r) = serve_r(tmp.path(), &resolver);
    let hostile = Arc::new(AtomicBool::new(false));
    let m = turncoat(Duration::from_millis(300), hostile.clone());
    include_peer(&resolver, &m, M_SERVICE);
    let plain = format!("{}/{ITEM}", resolver.base());

    // Remembered at R while M says it has nothing; then M turns hostile.
    let mut readers = vec![remembered_at_r(&resolver, &r.address)];
    wait_for(
        "the first resolution asked M",
        || asked_for(&m, ITEM) == 1,
        || format!("{:?}", m.targets()),
    );
    hostile.store(true, Ordering::SeqCst);
    // Each of the next three verifies: M is asked again each time. The readers on another
    // address than M's: a reader at the address of an Archive whose answer about the IBI
    // is still under way could be that Archive relaying it (crate::loops).
    let reader = IpAddr::from([127, 0, 0, 2]);
    for n in 2..=4 {
        readers.push(whither(&http_get_from(reader, &plain), &r.address));
        wait_for(
            &format!("resolution {n} asks M"),
            || asked_for(&m, ITEM) == n,
            || format!("{:?}\n{}", m.targets(), resolver.log()),
        );
    }
    assert_eq!(tally(readers), tally(vec!["302 to R".to_string(); 4]));
    // Every one of M's four answers read.
    wait_for(
        "M's four answers read",
        || archive_requests(&resolver, M_SERVICE, "answered") >= 4,
        || resolver.metrics(),
    );
    let conflicts: Vec<String> = log_lines(&resolver, "conflict:")
        .into_iter()
        .filter(|l| l.contains(M_SERVICE))
        .collect();
    assert_eq!(conflicts.len(), 1, "{}", resolver.log());
    let counted = sample(
        &resolver.metrics(),
        &format!("ibi_resolver_conflicts_total{{archive=\"{M_SERVICE}\"}}"),
    );
    assert!(counted >= Some(1), "{}", resolver.metrics());
    let inspection = inspect(&resolver, &format!("/{ITEM}"));
    let named = inspection["conflicts"].as_array().is_some_and(|list| {
        list.iter().any(|c| {
            c["ibi"] == ITEM
                && c["holder"].as_str().is_some_and(|h| h.contains(R_SERVICE))
                && c["claimant"]
                    .as_str()
                    .is_some_and(|h| h.contains(M_SERVICE))
        })
    });
    assert!(named, "{inspection:#}");
    watch(
        "`archives --csv` counts M's conflicts",
        || match archives_csv(&resolver, M_SERVICE, "conflicts") {
            Some(c) if c.parse::<u64>().is_ok_and(|c| c > 0) => Ok(()),
            other => Err(format!("{other:?}")),
        },
    );
    assert_eq!(
        archives_csv(&resolver, R_SERVICE, "conflicts").as_deref(),
        Some("0")
    );
}

/// H claims every IBI's Original and answers at once; R, which holds the item, 30 ms
/// later. A reader follows whichever answered first (the standard's rule without
/// `requireditemstatus`), but the memory is no prize for speed: two claims of the
/// Original are a conflict, and neither Archive is remembered. Once the operator takes
/// H out (it is excluded), R alone holds the item and is remembered.
#[test]
fn answering_first_does_not_make_an_archive_remembered() {
    let tmp = common::archive_tempdir();
    let resolver = Resolver::start(tmp.path(), "20s", "");
    let (_root, r) = serve_r(tmp.path(), &resolver);
    let h = claimant(Duration::ZERO);
    include_peer(&resolver, &h, M_SERVICE);
    let plain = format!("{}/{ITEM}", resolver.base());

    let first = whither(&get(&plain, ""), &r.address);
    assert!(
        first == "302 to M" || first == "302 to R",
        "{first}\n{}",
        resolver.log()
    );
    // Both answers read: a conflict without holder, written with what the round taught
    // the memory (nothing else).
    watch(
        "`archives --csv` counts H's conflict",
        || match archives_csv(&resolver, M_SERVICE, "conflicts") {
            Some(c) if c == "1" => Ok(()),
            other => Err(format!("{other:?}\n{}", resolver.log())),
        },
    );
    assert_eq!(
        archives_csv(&resolver, R_SERVICE, "conflicts").as_deref(),
        Some("1")
    );
    let (code, out, _) = resolver.command(&["memory", ITEM], "");
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        log_lines(&resolver, "conflict:")
            .iter()
            .filter(|l| l.contains("none is remembered"))
            .count(),
        2,
        "{}",
        resolver.log()
    );

    // The operator excludes H (with its key, as its Archive would).
    let excluded = http_get(
        &inclusion_request(&resolver, &h.addr.to_string(), M_SERVICE, KEY)
            .replace("inclusionRequest", "exclusionRequest"),
    );
    assert_eq!(excluded.text(), "status.archive excluded\r\n");
    watch("the resolver reads the exclusion", || {
        match archives_csv(&resolver, M_SERVICE, "included").as_deref() {
            Some("no") => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });
    assert_eq!(remembered_at_r(&resolver, &r.address), "302 to R");
}

/// An Archive that confirms its inclusion as any other, then relays each urlRequest back
/// to the resolver as a resolution of the IBI asked (without `Via`), and answers "not
/// here" once the relay is answered: a reader's resolution costs the relay one
/// resolution, answered `508`, and the relaying Archive is asked once — not a round for
/// each relay, every round asking it again.
#[test]
fn an_archive_that_relays_each_url_request_back_is_asked_once_and_answered_508() {
    let tmp = common::archive_tempdir();
    let resolver = Resolver::start(tmp.path(), "2s", "[memory]\nentries = 0\n");
    let (_root, _r) = serve_r(tmp.path(), &resolver);
    let base = resolver.base();
    let relayed = Arc::new(Mutex::new(Vec::<u16>::new()));
    let seen = relayed.clone();
    let x = common::peer::archive(move |ibi, s| {
        let a = http_get(&format!("{base}/{ibi}"));
        seen.lock().unwrap().push(a.status);
        answer_200(s, b"");
    });
    include_peer(&resolver, &x, M_SERVICE);
    let miss = "8JMKD3MGP8W/35MME4F";
    let n = resolver.log().lines().count();
    let a = get(&format!("{}/{miss}", resolver.base()), "");
    assert_eq!(a.status, 404, "{}", a.text());
    assert_eq!(asked_for(&x, miss), 1, "{:?}", x.targets());
    assert_eq!(*relayed.lock().unwrap(), vec![508]);
    assert_eq!(
        sample(&resolver.metrics(), "ibi_resolver_loops_total"),
        Some(1)
    );
    let log = resolver.log();
    let lines: Vec<&str> = log.lines().skip(n).collect();
    assert!(
        lines.iter().any(|l| l
            .starts_with(&format!("ibi-resolver: 127.0.0.1 \"GET /{miss}\" 508 "))
            && l.ends_with("loop: a resolution asked by an Archive being asked about its IBI")),
        "{log}"
    );
    // The relaying Archive excluded, a reader at the address of an Archive asked
    // (127.0.0.1, as every process here) resolving the same IBI while it is asked is no
    // relay: ten at once, each a 404.
    let exclusion = inclusion_request(&resolver, &x.addr.to_string(), M_SERVICE, KEY)
        .replace("=inclusionRequest", "=exclusionRequest");
    assert_eq!(http_get(&exclusion).text(), "status.archive excluded\r\n");
    watch("the resolver reads the exclusion", || {
        match archives_csv(&resolver, M_SERVICE, "included").as_deref() {
            Some("no") => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });
    let url = format!("{}/{miss}", resolver.base());
    let statuses: Vec<u16> = std::thread::scope(|s| {
        let readers: Vec<_> = (0..10).map(|_| s.spawn(|| get(&url, "").status)).collect();
        readers.into_iter().map(|r| r.join().unwrap()).collect()
    });
    assert_eq!(statuses, vec![404; 10]);
}

// ---------------------------------------------------------------------------------------
// 3. A flood of misses

/// 100 clients, each from a /24 of its own, ask for IBIs only M claims; R, with the
/// default limits of `ibi-archive serve`, is asked for every one of them too. R's
/// readers must still be sent to R.
#[test]
fn a_flood_of_misses_neither_puts_the_holder_to_sleep_nor_sends_its_readers_elsewhere() {
    let tmp = common::archive_tempdir();
    let resolver = Arc::new(Resolver::start(tmp.path(), "2s", ""));
    let (_root, r) = serve_r(tmp.path(), &resolver);
    let hostile = Arc::new(AtomicBool::new(false));
    let m = turncoat(Duration::from_millis(30), hostile.clone());
    include_peer(&resolver, &m, M_SERVICE);
    let plain = format!("{}/{ITEM}", resolver.base());
    // Remembered at R; then M claims it, and every IBI of the flood.
    assert_eq!(remembered_at_r(&resolver, &r.address), "302 to R");
    hostile.store(true, Ordering::SeqCst);

    let answers = Arc::new(AtomicUsize::new(0));
    let readers_done = Arc::new(AtomicBool::new(false));
    let statuses = Arc::new(Mutex::new(Vec::<String>::new()));
    let flood: Vec<_> = (1..=100u8)
        .map(|x| {
            let (answers, done, statuses) =
                (answers.clone(), readers_done.clone(), statuses.clone());
            let port = resolver.port;
            std::thread::spawn(move || {
                let source = IpAddr::from([127, 0, x, 1]);
                let start = Instant::now();
                let mut n = 0u32;
                // At least 4 s of flood, and until the readers are done.
                while (start.elapsed() < Duration::from_secs(4) || !done.load(Ordering::SeqCst))
                    && start.elapsed() < HANG_GUARD
                {
                    n += 1;
                    let target = format!("/sid.inpe.br/flood/2020/01.01.00.00.00.{x}{n:04}");
                    let a = attempt(source, port, &target);
                    answers.fetch_add(1, Ordering::SeqCst);
                    statuses
                        .lock()
                        .unwrap()
                        .push(a.map_or("no answer".into(), |a| a.status.to_string()));
                }
            })
        })
        .collect();
    wait_for(
        "500 answers to the flood",
        || answers.load(Ordering::SeqCst) >= 500,
        || resolver.log(),
    );
    let reader = IpAddr::from([127, 0, 200, 1]);
    let plain_readers = tally((0..60).map(|_| whither(&http_get_from(reader, &plain), &r.address)));
    let original = format!("{plain}?ibiurl.requireditemstatus=Original");
    let original_readers =
        tally((0..60).map(|_| whither(&http_get_from(reader, &original), &r.address)));
    readers_done.store(true, Ordering::SeqCst);
    for t in flood {
        t.join().unwrap();
    }
    let flood_statuses = tally(statuses.lock().unwrap().clone());
    let figures = format!(
        "flood answers: {flood_statuses:?}\nplain readers: {plain_readers:?}\nOriginal readers: {original_readers:?}"
    );
    assert_eq!(
        plain_readers,
        tally(vec!["302 to R".to_string(); 60]),
        "{figures}\n{}",
        log_lines(&resolver, "dormant").join("\n")
    );
    assert_eq!(original_readers.get("302 to M"), None, "{figures}");
    assert_eq!(
        log_lines(&resolver, "dormant"),
        Vec::<String>::new(),
        "{figures}"
    );
    assert_eq!(
        archives_csv(&resolver, R_SERVICE, "dormant").as_deref(),
        Some("no")
    );
    assert_eq!(
        archive_requests(&resolver, R_SERVICE, "overloaded"),
        0,
        "{}",
        resolver.metrics()
    );
    // R's 503s are judged by the resolver's count above: `ibi-archive serve` answers a
    // connection beyond its limits with a 503 it does not log, so its request log would
    // hold none in any case.
}

// ---------------------------------------------------------------------------------------
// 4. An answer without state

#[test]
fn an_answer_without_state_claims_no_original_and_its_acknowledgment_no_state() {
    const ALONE: &str = "urlib.net/www/2021/04.04.04.04";
    const M2_SERVICE: &str = "urlib.net/www/2020/02.02.02.03";
    let tmp = common::archive_tempdir();
    let resolver = Resolver::start(tmp.path(), "20s", "");
    let m2 = common::peer::archive(|ibi, s| {
        if ibi == ALONE {
            let me = s.local_addr().unwrap();
            let body = format!(
                "archiveaddress {me}\r\nibi {{rep {ALONE}}}\r\nurl http://{me}/x.pdf\r\nurlkey 1111111111-2222222222\r\n"
            );
            answer_200(s, body.as_bytes());
        } else {
            answer_200(s, b"");
        }
    });
    include_peer(&resolver, &m2, M2_SERVICE);
    let plain = get(&format!("{}/{ALONE}", resolver.base()), "");
    assert_eq!(
        (plain.status, plain.header("location")),
        (302, Some(format!("http://{}/x.pdf", m2.addr).as_str())),
        "{}",
        plain.text()
    );
    let acks = || -> Vec<String> {
        m2.targets()
            .into_iter()
            .filter(|t| t.contains("servicesubject=acknowledgment"))
            .collect()
    };
    wait_for(
        "M2's acknowledgment",
        || acks().len() == 1,
        || resolver.log(),
    );
    let ack = acks().remove(0);
    let stated = ack
        .split_once('?')
        .map_or("", |(_, q)| q)
        .split('&')
        .any(|p| p.starts_with("state="));
    let original = get(
        &format!(
            "{}/{ALONE}?ibiurl.requireditemstatus=Original",
            resolver.base()
        ),
        "en",
    );
    assert_eq!(
        (stated, original.status),
        (false, 404),
        "acknowledgment {ack}\nrequireditemstatus=Original: {} {:?} {}",
        original.status,
        original.header("location"),
        original.text()
    );
}

// ---------------------------------------------------------------------------------------
// 5. The registration key

/// A key no test uses elsewhere.
const SECRET: &str = "98765432109876543210";

/// What the resolver does with a request that holds the key: its answer (status line,
/// headers and body as received) and the log written since `before` bytes.
fn exposure(resolver: &Resolver, request: &[u8]) -> (u16, bool, bool) {
    let before = resolver.log().len();
    let lines_before = resolver.log().lines().count();
    let a = common::http_raw(&resolver.base(), request, request.starts_with(b"HEAD"));
    let mut answer = format!("{}\n", a.status);
    for (n, v) in &a.headers {
        answer.push_str(&format!("{n}: {v}\n"));
    }
    answer.push_str(&a.text());
    wait_for(
        "the request's log line",
        || resolver.log().lines().count() > lines_before,
        || resolver.log(),
    );
    let log = resolver.log();
    (
        a.status,
        answer.contains(SECRET),
        log[before..].contains(SECRET),
    )
}

#[test]
fn the_registration_key_reaches_no_log_line_and_no_page_however_it_is_sent() {
    let tmp = tempfile::tempdir().unwrap();
    let resolver = Resolver::start(tmp.path(), "2s", "");
    let query = format!(
        "servicesubject=inclusionRequest&archiveaddress=127.0.0.1:9&archiveserviceibi=urlib.net/www/2020/03.03.03.03&archiveip=127.0.0.1&archiveprotocol=HTTP&archiveplatformversion=1&archiveadmemailaddress=x@example.org&registrationkey={SECRET}"
    );
    let request = |method: &str, path: &str, query: &str| -> Vec<u8> {
        let length = if method == "POST" || method == "PUT" {
            "Content-Length: 0\r\n"
        } else {
            ""
        };
        format!("{method} {path}?{query} HTTP/1.1\r\nHost: 127.0.0.1\r\n{length}Connection: close\r\n\r\n")
            .into_bytes()
    };
    let service = format!("/{RESOLVER_IBI}");
    let long = format!("{query}&padding={}", "x".repeat(8 * 1024));
    let cases: Vec<(&str, Vec<u8>, u16)> = vec![
        ("POST", request("POST", &service, &query), 405),
        ("PUT", request("PUT", &service, &query), 405),
        ("OPTIONS", request("OPTIONS", &service, &query), 405),
        ("DELETE", request("DELETE", &service, &query), 405),
        ("a query over 8 KiB", request("GET", &service, &long), 414),
        (
            "trailing /",
            request("GET", &format!("{service}/"), &query),
            400,
        ),
        (
            "lower case",
            request("GET", &service.to_lowercase(), &query),
            400,
        ),
        (
            "%4A for J",
            request("GET", "/%4A8LNKB5R7W/3FUQHC5", &query),
            400,
        ),
        (
            "// before",
            request("GET", &format!("/{service}"), &query),
            400,
        ),
        (
            "/. after",
            request("GET", &format!("{service}/."), &query),
            400,
        ),
        // The query sent escaped into the path: not a persistent URL, and the reason
        // given for it must not quote the path.
        (
            "%3F for ?",
            request("GET", &format!("{service}%3F{query}"), "x=y"),
            400,
        ),
        // A resolution's inspection carrying the key: the persistent URL it shows keeps
        // only the pairs the resolver reads.
        (
            "an inspection",
            request(
                "GET",
                &format!("/{ITEM}"),
                &format!("noredirect&registrationkey={SECRET}"),
            ),
            200,
        ),
        // Pairs separated by `;`, as some clients write them: the key hides behind a
        // pair the log shows.
        (
            "; between pairs",
            request("GET", &service, &query.replace('&', ";")),
            400,
        ),
        (
            "; after servicesubject",
            request(
                "GET",
                &service,
                &format!("servicesubject=inclusionRequest;registrationkey={SECRET}"),
            ),
            400,
        ),
        // The verb list refused, its value quoted on the page and in the log.
        (
            "; in an inspection",
            request(
                "GET",
                &format!("/{ITEM}"),
                &format!("noredirect&ibiurl.verblist=;registrationkey={SECRET}"),
            ),
            400,
        ),
        // The separator and `=` escaped into a pair the log shows.
        (
            "%3B and %3D",
            request(
                "GET",
                &service,
                &format!("servicesubject=inclusionRequest%3Bregistrationkey%3D{SECRET}"),
            ),
            400,
        ),
    ];
    let mut got = Vec::new();
    let mut want = Vec::new();
    for (what, bytes, status) in &cases {
        let (s, in_answer, in_log) = exposure(&resolver, bytes);
        got.push(format!(
            "{what}: {s}, key in answer {in_answer}, key in log {in_log}"
        ));
        want.push(format!(
            "{what}: {status}, key in answer false, key in log false"
        ));
    }
    assert_eq!(got, want, "{}", resolver.log());
}

/// Wrong keys of one Archive from four addresses of one /24, one after the other: each
/// waits longer before its check, whatever address of the network it comes from.
#[test]
fn wrong_keys_are_slowed_down_per_client_network_and_the_wait_is_logged() {
    const C_SERVICE: &str = "urlib.net/www/2020/04.04.04.01";
    let tmp = tempfile::tempdir().unwrap();
    let resolver = Resolver::start(tmp.path(), "2s", "");
    resolver.register(C_SERVICE, KEY);
    let mut waits = Vec::new();
    for k in 1..=4u8 {
        let source = IpAddr::from([127, 0, 1, k]);
        let a = http_get_from(
            source,
            &inclusion_request(&resolver, "127.0.0.1:9", C_SERVICE, "1234567891"),
        );
        assert_eq!(a.status, 403, "{}", a.text());
        let from = format!("ibi-resolver: {source} ");
        let mut line = None;
        wait_for(
            "the 403's log line",
            || {
                line = log_lines(&resolver, &from)
                    .into_iter()
                    .find(|l| l.contains(" 403 "));
                line.is_some()
            },
            || resolver.log(),
        );
        let line = line.unwrap();
        waits.push(
            line.rsplit_once("after waiting ")
                .map_or(format!("(no wait in {line:?})"), |(_, w)| w.to_string()),
        );
    }
    assert_eq!(waits, ["0 ms", "250 ms", "500 ms", "1000 ms"]);
}

/// Four clients of 127.0.0.0/24 keep sending wrong keys for Archive A. Their network has
/// one key check at a time, which first waits the slowdown of the wrong keys before it
/// (the others meanwhile wait in line, and are refused 429 once they have waited 5 s for
/// their turn); once five wrong keys have been checked (the next waits 4 s), B's correct
/// inclusion is sent from another network. It must be answered before every wrong-key
/// request under way when it was sent that gets its key checked (403): a wrong key's
/// wait holds no slot another network needs.
#[test]
fn a_flood_of_wrong_keys_does_not_delay_another_archives_correct_inclusion() {
    const A_SERVICE: &str = "urlib.net/www/2020/04.04.04.02";
    const B_SERVICE: &str = "urlib.net/www/2020/04.04.04.03";
    let tmp = tempfile::tempdir().unwrap();
    let resolver = Arc::new(Resolver::start(tmp.path(), "2s", ""));
    resolver.register(A_SERVICE, KEY);
    resolver.register(B_SERVICE, KEY);
    let b = common::peer::archive(|_, s| answer_200(s, b""));

    // The order in which answers came, one ticket each.
    let tickets = Arc::new(AtomicUsize::new(0));
    let checked = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    // Per client: the request under way (its number), and every request's ticket and
    // status (with whether a 429 said when to come back).
    let under_way = Arc::new(Mutex::new([None::<usize>; 4]));
    let answered = Arc::new(Mutex::new(BTreeMap::<usize, (usize, u16, bool)>::new()));
    let next_id = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..4)
        .map(|c| {
            let (tickets, checked, stop, under_way, answered, next_id, resolver) = (
                tickets.clone(),
                checked.clone(),
                stop.clone(),
                under_way.clone(),
                answered.clone(),
                next_id.clone(),
                resolver.clone(),
            );
            std::thread::spawn(move || {
                let url = inclusion_request(&resolver, "127.0.0.1:9", A_SERVICE, "1234567891");
                while !stop.load(Ordering::SeqCst) {
                    let id = next_id.fetch_add(1, Ordering::SeqCst);
                    under_way.lock().unwrap()[c] = Some(id);
                    let a = http_get_from(IpAddr::from([127, 0, 0, 2]), &url);
                    let ticket = tickets.fetch_add(1, Ordering::SeqCst);
                    let retry = a.header("retry-after").is_some();
                    answered
                        .lock()
                        .unwrap()
                        .insert(id, (ticket, a.status, retry));
                    under_way.lock().unwrap()[c] = None;
                    if a.status == 403 {
                        checked.fetch_add(1, Ordering::SeqCst);
                    }
                }
            })
        })
        .collect();
    // Sent once five wrong keys have been checked and each client has its next request
    // under way.
    let mut in_flight = Vec::new();
    wait_for(
        "5 wrong keys checked, and 4 requests under way",
        || {
            in_flight = under_way
                .lock()
                .unwrap()
                .iter()
                .flatten()
                .copied()
                .collect();
            checked.load(Ordering::SeqCst) >= 5 && in_flight.len() == 4
        },
        || resolver.log(),
    );
    let correct = {
        let a = http_get_from(
            IpAddr::from([127, 0, 1, 1]),
            &inclusion_request(&resolver, &b.addr.to_string(), B_SERVICE, KEY),
        );
        let ticket = tickets.fetch_add(1, Ordering::SeqCst);
        (ticket, a.status, a.text())
    };
    stop.store(true, Ordering::SeqCst);
    for c in clients {
        c.join().unwrap();
    }
    assert_eq!((correct.1, correct.2.as_str()), (200, INCLUDED));
    let answered = answered.lock().unwrap();
    let statuses = tally(
        answered
            .values()
            .map(|(_, s, retry)| format!("{s} {retry}")),
    );
    // Checked and refused (403), or refused unchecked when the network's turn did not
    // come in time (429, saying when to come back).
    assert!(
        statuses.keys().all(|k| k == "403 false" || k == "429 true"),
        "wrong keys answered {statuses:?}"
    );
    let checked_in_flight: Vec<usize> = in_flight
        .iter()
        .filter(|id| answered[id].1 == 403)
        .map(|id| answered[id].0)
        .collect();
    assert!(
        !checked_in_flight.is_empty()
            && checked_in_flight.iter().all(|ticket| *ticket > correct.0),
        "the correct inclusion (answer {} of {}) and the wrong keys checked that were under way when it was sent (answers {:?}); {statuses:?}",
        correct.0 + 1,
        tickets.load(Ordering::SeqCst),
        checked_in_flight.iter().map(|t| t + 1).collect::<Vec<_>>()
    );
}

/// The requests of `urls`, all sent at once, each from its address: their answers, in
/// the order of `urls`.
fn all_at_once(urls: &[(IpAddr, String)]) -> Vec<Response> {
    let start = Arc::new(std::sync::Barrier::new(urls.len()));
    let sent: Vec<_> = urls
        .iter()
        .cloned()
        .map(|(source, url)| {
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                http_get_from(source, &url)
            })
        })
        .collect();
    sent.into_iter().map(|t| t.join().unwrap()).collect()
}

/// A wrong key sent from 127.0.2.0/24 at once with six right ones (six Archives of one
/// machine room switched on together) after two wrong keys of the same Archive: every
/// request is checked in its turn, none refused 429. The wrong key waits the slowdown of
/// the two before it (500 ms) and is refused 403; the right ones are all included, and
/// none of them waits for another right key before it: the one that had its turn first
/// waits for the wrong keys before it, the one after the wrong key (if any) waits for it,
/// and no other waits at all.
#[test]
fn a_wrong_key_in_line_among_right_ones_waits_and_is_refused_while_the_right_ones_get_in() {
    const WRONG: &str = "urlib.net/www/2020/04.04.05.00";
    let right: Vec<String> = (1..=6)
        .map(|n| format!("urlib.net/www/2020/04.04.05.0{n}"))
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let resolver = Resolver::start(tmp.path(), "2s", "");
    resolver.register(WRONG, KEY);
    for service in &right {
        resolver.register(service, KEY);
    }
    let source = |k: u8| IpAddr::from([127, 0, 2, k]);
    let wrong_key = inclusion_request(&resolver, "127.0.0.1:9", WRONG, "1234567891");
    for _ in 0..2 {
        let a = http_get_from(source(1), &wrong_key);
        assert_eq!(a.status, 403, "{}", a.text());
    }

    let mut urls = vec![(source(1), wrong_key)];
    for (k, service) in right.iter().enumerate() {
        urls.push((
            source(k as u8 + 2),
            inclusion_request(&resolver, "127.0.0.1:9", service, KEY),
        ));
    }
    let started = Instant::now();
    let answers = all_at_once(&urls);
    let took = started.elapsed();
    let got: Vec<(u16, String)> = answers
        .iter()
        .map(|a| (a.status, a.text().lines().next().unwrap_or("").to_string()))
        .collect();
    let mut want = vec![(
        403,
        "error {unknown Archive or wrong registration key}".to_string(),
    )];
    want.extend((0..6).map(|_| (200, "status.archive included".to_string())));
    assert_eq!(got, want, "{}", resolver.log());
    for service in &right {
        assert_eq!(resolver.included(service), Some(true), "{service}");
    }

    let log = resolver.log();
    let refusals: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(&format!("{WRONG}: refused")))
        .map(|l| l.rsplit_once("after waiting ").map_or(l, |(_, w)| w))
        .collect();
    assert_eq!(refusals, ["0 ms", "250 ms", "500 ms"], "{log}");
    let slowed: Vec<&str> = right
        .iter()
        .filter_map(|service| {
            let line = log
                .lines()
                .find(|l| l.contains(&format!("{service}: included at")))
                .unwrap_or_else(|| panic!("no inclusion of {service} logged:\n{log}"));
            line.rsplit_once(", key checked after waiting ")
                .map(|(_, w)| w)
        })
        .collect();
    assert!(
        (1..=2).contains(&slowed.len()),
        "right keys slowed down: {slowed:?}\n{log}"
    );
    // Seven checks in turn, two waits of the slowdown (a second at most each): well
    // within the 10 s an Archive gives the resolver.
    assert!(took < Duration::from_secs(5), "{took:?}\n{log}");
}

/// The line of a network's key checks is bounded in length and in time. After six wrong
/// keys of Archive W from six other networks, any check of W's key from a network that
/// never gave the right one waits 8 s. 41 such checks sent at once from 127.0.3.0/24:
/// the one that has the turn holds it 8 s and is refused 403; 32 wait behind it and are
/// answered 429 once they have waited 5 s for their turn; the 8 beyond those 32 are
/// answered 429 at once. Every 429 says when to come back: after the checks in line,
/// 8 s each at least.
#[test]
fn a_network_s_line_of_key_checks_is_bounded_in_length_and_in_time() {
    const W: &str = "urlib.net/www/2020/04.04.06.01";
    let tmp = tempfile::tempdir().unwrap();
    let resolver = Resolver::start(tmp.path(), "2s", "");
    resolver.register(W, KEY);
    let wrong_key = inclusion_request(&resolver, "127.0.0.1:9", W, "1234567891");
    let guesses: Vec<(IpAddr, String)> = (10..16)
        .map(|n| (IpAddr::from([127, 0, n, 1]), wrong_key.clone()))
        .collect();
    for a in all_at_once(&guesses) {
        assert_eq!(a.status, 403, "{}", a.text());
    }

    let flood: Vec<(IpAddr, String)> = (1..=41)
        .map(|k| (IpAddr::from([127, 0, 3, k]), wrong_key.clone()))
        .collect();
    let start = Arc::new(std::sync::Barrier::new(flood.len() + 1));
    let sent: Vec<_> = flood
        .into_iter()
        .map(|(source, url)| {
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                let sent = Instant::now();
                let a = http_get_from(source, &url);
                (a, sent.elapsed())
            })
        })
        .collect();
    start.wait();
    let answers: Vec<(Response, Duration)> = sent.into_iter().map(|t| t.join().unwrap()).collect();
    let log = resolver.log();
    let kinds = tally(answers.iter().map(|(a, took)| {
        let kind = match (a.status, a.text().as_str()) {
            (403, _) if *took >= Duration::from_secs(8) => "403 after 8 s",
            (429, "error {the key checks from your network before this one took too long}\r\n")
                if *took >= Duration::from_secs(5) =>
            {
                "429 after 5 s: turn too late"
            }
            (429, "error {too many key checks from your network waiting}\r\n")
                if *took < Duration::from_secs(5) =>
            {
                "429 at once: line full"
            }
            _ => "other",
        };
        kind.to_string()
    }));
    let want: BTreeMap<String, usize> = [
        ("403 after 8 s".to_string(), 1),
        ("429 after 5 s: turn too late".to_string(), 32),
        ("429 at once: line full".to_string(), 8),
    ]
    .into();
    assert_eq!(
        kinds,
        want,
        "{:?}\n{log}",
        answers
            .iter()
            .map(|(a, took)| format!("{} {:?} {took:?}", a.status, a.text()))
            .collect::<Vec<_>>()
    );
    for (a, _) in answers.iter().filter(|(a, _)| a.status == 429) {
        let retry: u64 = a
            .header("retry-after")
            .and_then(|r| r.parse().ok())
            .unwrap_or_else(|| panic!("a 429 without Retry-After: {:?}", a.text()));
        assert!((8..=900).contains(&retry), "Retry-After: {retry}");
    }
}

// ---------------------------------------------------------------------------------------
// 7. Loops

/// (status, body, included in `archives --csv`) of an inclusion of `service` at `address`.
fn include_at(resolver: &Resolver, service: &str, address: &str) -> (u16, String, String) {
    resolver.register(service, KEY);
    let escaped = address.replace('[', "%5B").replace(']', "%5D");
    let a = http_get(&inclusion_request(resolver, &escaped, service, KEY));
    let included = archives_csv(resolver, service, "included").unwrap_or_default();
    (a.status, a.text(), included)
}

#[test]
fn no_resolver_is_included_as_an_archive_itself_another_or_loopback_in_disguise() {
    let tmp = tempfile::tempdir().unwrap();
    let (one, two, public) = (
        tmp.path().join("one"),
        tmp.path().join("two"),
        tmp.path().join("public"),
    );
    for d in [&one, &two, &public] {
        std::fs::create_dir(d).unwrap();
    }
    let resolver = Resolver::start(&one, "2s", "");
    let other = Resolver::start(&two, "2s", "");
    // Only public addresses may be Archives: no `networks`.
    let default_networks = Resolver::start_with(&public, "[archives]\ntimeout = \"2s\"\n");
    let port = free_port();
    let got = vec![
        include_at(
            &resolver,
            "urlib.net/www/2020/06.06.06.01",
            &format!("127.0.0.1:{}", resolver.port),
        ),
        include_at(
            &resolver,
            "urlib.net/www/2020/06.06.06.02",
            &format!("127.0.0.1:{}", other.port),
        ),
        include_at(
            &default_networks,
            "urlib.net/www/2020/06.06.06.03",
            &format!("[2002:7f00:1::]:{port}"),
        ),
        include_at(
            &default_networks,
            "urlib.net/www/2020/06.06.06.04",
            &format!("[::ffff:0:7f00:1]:{port}"),
        ),
    ];
    let refused = |why: &str| {
        (
            403,
            format!("error {{archiveaddress {why}}}\r\n"),
            "no".to_string(),
        )
    };
    assert_eq!(
        got,
        vec![
            refused("is this resolver"),
            refused("answers as a resolver"),
            refused("outside the networks this resolver asks"),
            refused("outside the networks this resolver asks"),
        ],
        "{}\n{}",
        resolver.log(),
        default_networks.log()
    );
}

// ---------------------------------------------------------------------------------------
// 8. Per-client bounds

/// Client 127.0.0.2 sends 50 misses at once (each kept under way by an Archive that takes
/// a second to say it does not have the IBI) and opens 150 connections whose request head
/// never ends; client 127.0.1.1, in another network, still gets its remembered item.
#[test]
fn one_client_beyond_its_bounds_gets_429_and_does_not_starve_another() {
    const SLOW_SERVICE: &str = "urlib.net/www/2020/07.07.07.01";
    let tmp = common::archive_tempdir();
    let resolver = Resolver::start(
        tmp.path(),
        "20s",
        "[limits]\nper_client_misses = 5\nper_client_resolutions = 4\nper_client_connections = 8\n",
    );
    let (_root, r) = serve_r(tmp.path(), &resolver);
    let slow = common::peer::archive(|_, s| {
        // The slow Archive's own pace.
        std::thread::sleep(Duration::from_secs(1));
        answer_200(s, b"");
    });
    include_peer(&resolver, &slow, SLOW_SERVICE);
    let other = IpAddr::from([127, 0, 1, 1]);
    let plain = format!("{}/{ITEM}", resolver.base());
    assert_eq!(
        whither(&http_get_from(other, &plain), &r.address),
        "302 to R"
    );

    let flooder = IpAddr::from([127, 0, 0, 2]);
    let port = resolver.port;
    let misses: Vec<_> = (0..50)
        .map(|n| {
            std::thread::spawn(move || {
                attempt(
                    flooder,
                    port,
                    &format!("/sid.inpe.br/flood/2020/02.02.00.00.00.{n}"),
                )
            })
        })
        .collect();
    wait_for(
        "a miss under way",
        || {
            slow.targets()
                .iter()
                .any(|t| asked_ibi(t).is_some_and(|i| i.starts_with("sid.inpe.br/flood/")))
        },
        || resolver.log(),
    );
    let partial: Vec<TcpStream> = (0..150)
        .filter_map(|_| {
            let mut s = connect_from(flooder, SocketAddr::from(([127, 0, 0, 1], port))).ok()?;
            let _ = s.write_all(b"GET /LK47B6W/362SFKH HTTP/1.1\r\nHost: 127.0.0.1\r\n");
            Some(s)
        })
        .collect();
    let readers = tally((0..20).map(|_| whither(&http_get_from(other, &plain), &r.address)));
    drop(partial);
    let answers: Vec<Option<Response>> = misses.into_iter().map(|t| t.join().unwrap()).collect();
    let statuses = tally(answers.iter().map(|a| {
        a.as_ref()
            .map_or("no answer".into(), |a| a.status.to_string())
    }));
    assert_eq!(
        readers,
        tally(vec!["302 to R".to_string(); 20]),
        "misses: {statuses:?}\n{}",
        resolver.log()
    );
    assert!(statuses.contains_key("429"), "misses: {statuses:?}");
    for a in answers.iter().flatten().filter(|a| a.status == 429) {
        assert!(a.header("retry-after").is_some(), "{:?}", a.headers);
    }
}

// ---------------------------------------------------------------------------------------
// 9–11. HEAD, abandoned requests, repeated failures

#[test]
fn head_gets_the_redirect_and_sends_no_acknowledgment() {
    let tmp = common::archive_tempdir();
    let resolver = Resolver::start(tmp.path(), "20s", "");
    let (root, r) = serve_r(tmp.path(), &resolver);
    let plain = format!("{}/{ITEM}", resolver.base());
    let heads = tally((0..3).map(|_| whither(&http_request("HEAD", &plain), &r.address)));
    assert_eq!(heads, tally(vec!["302 to R".to_string(); 3]));
    assert_eq!(whither(&get(&plain, ""), &r.address), "302 to R");
    // The acknowledgments are sent in the background: once the resolver has counted as
    // many sent as R has counted, every one sent so far has been counted.
    let sent = || {
        sample(
            &resolver.metrics(),
            "ibi_resolver_acknowledgments_total{result=\"sent\"}",
        )
        .unwrap_or(0)
    };
    let counted = || counts(&root).get(ITEM_REP).copied().unwrap_or(0);
    wait_for(
        "the GET's acknowledgment counted",
        || {
            let c = counted();
            c >= 1 && sent() == c
        },
        || format!("{:?}\n{}", counts(&root), resolver.metrics()),
    );
    assert_eq!(
        (counted(), sent()),
        (1, 1),
        "acknowledgments counted by R, sent by the resolver, after 3 HEADs and 1 GET"
    );
}

#[test]
fn a_request_its_client_abandons_is_logged_once_with_499() {
    const SLOW: &str = "urlib.net/www/2021/05.05.05.05";
    let tmp = tempfile::tempdir().unwrap();
    let resolver = Resolver::start(tmp.path(), "20s", "");
    let (asked_tx, asked) = mpsc::channel::<()>();
    let (ended_tx, ended) = mpsc::channel::<()>();
    let (asked_tx, ended_tx) = (Mutex::new(asked_tx), Mutex::new(ended_tx));
    let slow = common::peer::archive(move |_, s| {
        let _ = asked_tx.lock().unwrap().send(());
        // Takes 3 s to say it does not have the IBI, unless the resolver hangs up first.
        let _ = s.set_read_timeout(Some(Duration::from_secs(3)));
        let mut byte = [0u8; 1];
        if !matches!(s.read(&mut byte), Ok(0)) {
            answer_200(s, b"");
        }
        let _ = ended_tx.lock().unwrap().send(());
    });
    include_peer(&resolver, &slow, "urlib.net/www/2020/08.08.08.01");
    let mut client = TcpStream::connect(("127.0.0.1", resolver.port)).unwrap();
    client
        .write_all(format!("GET /{SLOW} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").as_bytes())
        .unwrap();
    asked
        .recv_timeout(HANG_GUARD)
        .expect("the slow Archive was never asked");
    drop(client);
    ended
        .recv_timeout(HANG_GUARD)
        .expect("the slow Archive's request never ended");
    // A request after it: its line comes once the abandoned one's has.
    let after = http_get(&format!("{}/robots.txt", resolver.base()));
    assert_eq!(after.status, 404);
    wait_for(
        "the next request's log line",
        || !log_lines(&resolver, "\"GET /robots.txt\"").is_empty(),
        || resolver.log(),
    );
    let lines = log_lines(&resolver, &format!("\"GET /{SLOW}\""));
    assert_eq!(lines.len(), 1, "{}", resolver.log());
    assert!(
        lines[0].contains(&format!("\"GET /{SLOW}\" 499 ")),
        "{}",
        lines[0]
    );
}

/// 50 resolutions whose acknowledgments all fail: one line, then a count at the stop.
#[test]
fn a_repeated_acknowledgment_failure_is_logged_once_then_counted() {
    const HELD: &str = "urlib.net/www/2021/06.06.06.06";
    let tmp = tempfile::tempdir().unwrap();
    let mut resolver = Resolver::start(tmp.path(), "20s", "");
    let a = Peer::start(|target, s| {
        if target.contains("servicesubject=inclusionConfirmationRequest") {
            answer_200(s, b"confirmation yes\r\n");
        } else if asked_ibi(target) == Some(HELD) {
            let me = s.local_addr().unwrap();
            let body = format!(
                "archiveaddress {me}\r\nibi {{rep {HELD}}}\r\nstate Original\r\nurl http://{me}/x.pdf\r\nurlkey 1111111111-2222222222\r\n"
            );
            answer_200(s, body.as_bytes());
        } else if asked_ibi(target).is_some() {
            answer_200(s, b"");
        }
        // An acknowledgment: the connection is closed without an answer.
    });
    include_peer(&resolver, &a, "urlib.net/www/2020/09.09.09.01");
    let plain = format!("{}/{HELD}", resolver.base());
    for _ in 0..50 {
        let r = get(&plain, "");
        assert_eq!(r.status, 302, "{}", r.text());
    }
    let failed = || {
        sample(
            &resolver.metrics(),
            "ibi_resolver_acknowledgments_total{result=\"failed\"}",
        )
        .unwrap_or(0)
    };
    wait_for(
        "50 acknowledgments failed",
        || failed() >= 50,
        || resolver.metrics(),
    );
    let said = format!("acknowledgment to {} failed", a.addr);
    let once = log_lines(&resolver, &said).len();
    let stopped = resolver.stop();
    assert!(stopped.success(), "{stopped}");
    let more = log_lines(&resolver, "49 more times");
    assert_eq!(
        (once, more.len()),
        (1, 1),
        "lines with {said:?}, then lines with \"49 more times\" at the stop\n{}",
        resolver.log()
    );
}
