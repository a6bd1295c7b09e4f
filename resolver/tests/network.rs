//! A network as it is, never all up: eleven Archives on loopback in one resolver, real
//! processes only. Six `ibi-archive serve` A0…A5, healthy, each minting under a prefix of
//! its own (A3 mints `net.test/a3/…`: it is the home of those IBIs); K, an `ibi-archive
//! serve` killed without exclusion; B, an `ibi-archive serve` held at its connection cap
//! by another client; and three small servers of `common::peer`: S, which accepts and
//! never answers; G, which answers garbage; and H, hostile, which claims the Original of
//! every IBI and every file path, with a URL of its own.
//!
//! Each rule of who may hold an IBI is checked against them, in order (H is caught, then
//! set aside, on the way):
//! - a busy holder's items are not handed to H, which claims them (503 naming it), and a
//!   file path its home does not have never goes to H (404, a conflict), though H is not
//!   yet under suspicion; after three such paths H is;
//! - then an IBI whose home is live, or that no Archive's home mints, is a 404 though
//!   K, S and G do not answer (the page names them), and one whose home is down a 503
//!   naming it;
//! - the first resolution of an item at its home asks no other Archive, and the memory
//!   learns, with K and S down, an item that moved away from its home: its next
//!   resolutions ask the holder alone;
//! - `requireditemstatus=Original` decides with K, S and G silent.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::peer::{answer_200, hold, Peer};
use common::resolver::{archive, configure, get, include_at, include_peer, sample, Resolver};
use common::{free_port, Serve, HANG_GUARD};

/// The prefix each Archive mints under, and so its service IBI: `net.test/<name>/…`.
fn service(name: &str) -> String {
    format!("net.test/{name}/2020/01.01.00.00")
}

/// An item of `name`'s prefix, the `n`-th.
fn minted(name: &str, n: u32) -> String {
    format!("net.test/{name}/2021/01.01.00.{n:02}")
}

/// Writes an Original item (item.toml and `file.txt`) below `root`'s col/.
fn item(root: &Path, rep: &str) {
    let dir = root.join("col").join(rep);
    std::fs::create_dir_all(dir.join("doc")).unwrap();
    std::fs::write(
        dir.join("item.toml"),
        "state = \"Original\"\ntimestamp = 2021-01-01T00:00:00Z\ntarget = \"file.txt\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("doc/file.txt"), format!("{rep}\n")).unwrap();
    common::prepare_archive(root);
}

/// An Archive of its own, `name`, holding `items` only, served on a free port and
/// included in `resolver`; its root and server (`--no-inclusion` and `more`).
fn serve(
    tmp: &Path,
    resolver: &Resolver,
    name: &str,
    items: &[String],
    more: &[&str],
) -> (PathBuf, Serve) {
    let root = archive(tmp, name, &service(name), &["urlib.net/www/2014"], &[]);
    std::fs::remove_dir_all(root.join("col/urlib.net/www/2014")).unwrap();
    for rep in items {
        item(&root, rep);
    }
    let address = format!("127.0.0.1:{}", free_port());
    configure(&root, &address, &resolver.service());
    let log = std::fs::File::create(root.with_extension("log")).unwrap();
    let mut args = vec!["--listen", address.as_str()];
    args.extend_from_slice(more);
    let serve = Serve::start_with(&root, log, &args);
    include_at(resolver, &address, &service(name));
    (root, serve)
}

/// Requests to the Archive `name` that ended with `result`, as the resolver counts them.
fn asked(resolver: &Resolver, name: &str, result: &str) -> u64 {
    common::resolver::sample(
        &resolver.metrics(),
        &format!(
            "ibi_resolver_archive_requests_total{{archive=\"{}\",result=\"{result}\"}}",
            service(name)
        ),
    )
    .unwrap_or(0)
}

/// Every request to each Archive the resolver counts, by result.
fn all_asked(resolver: &Resolver) -> Vec<(String, u64)> {
    let metrics = resolver.metrics();
    metrics
        .lines()
        .filter(|l| l.starts_with("ibi_resolver_archive_requests_total{"))
        .map(|l| {
            let (series, n) = l.rsplit_once(' ').unwrap();
            (series.to_string(), n.parse::<f64>().unwrap() as u64)
        })
        .collect()
}

/// The requests the resolver counted between `before` and `after`, per series, where
/// they differ.
fn grown(before: &[(String, u64)], after: &[(String, u64)]) -> Vec<(String, u64)> {
    after
        .iter()
        .filter_map(|(series, n)| {
            let was = before
                .iter()
                .find(|(s, _)| s == series)
                .map_or(0, |(_, n)| *n);
            (*n > was).then(|| (series.clone(), n - was))
        })
        .collect()
}

/// The series of the requests to `name` answered.
fn answered_by(name: &str) -> String {
    format!(
        "ibi_resolver_archive_requests_total{{archive=\"{}\",result=\"answered\"}}",
        service(name)
    )
}

/// `cap` connections to the Archive at `address`, each answered once (so each is one
/// the Archive counts), held open.
fn hold_cap(address: &str, cap: usize) -> Vec<TcpStream> {
    let deadline = Instant::now() + HANG_GUARD;
    let mut held = Vec::new();
    while held.len() < cap {
        assert!(Instant::now() < deadline, "{address} never let {cap} in");
        let mut s = TcpStream::connect(address).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(b"GET /robots.txt HTTP/1.1\r\nHost: b\r\n\r\n")
            .unwrap();
        let mut head = [0u8; 12];
        s.read_exact(&mut head).unwrap();
        if &head == b"HTTP/1.1 503" {
            // The resolver's own connection still counted: in a moment it is closed.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        // What is left of the answer, so that the connection idles.
        let mut rest = [0u8; 4096];
        let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
        let _ = s.read(&mut rest);
        held.push(s);
    }
    held
}

/// Where the answer sends the reader, or its status.
fn whither(r: &common::Response) -> String {
    match (r.status, r.header("location")) {
        (302, Some(l)) => format!("302 {l}"),
        (s, _) => s.to_string(),
    }
}

#[test]
fn a_network_never_all_up_answers_about_its_live_archives_as_if_all_were_up() {
    let tmp = common::archive_tempdir();
    let resolver = Resolver::start(
        tmp.path(),
        "1s",
        "[limits]\nper_client_misses = 1000000\nper_client_resolutions = 100000\n",
    );
    let names = ["a0", "a1", "a2", "a3", "a4", "a5"];
    let mut serves = Vec::new();
    for name in names {
        let mut items: Vec<String> = (1..=6).map(|n| minted(name, n)).collect();
        if name == "a4" {
            // Moved away from A5, its home: A5 holds it no longer.
            items.push(minted("a5", 40));
        }
        serves.push(serve(tmp.path(), &resolver, name, &items, &[]));
    }
    let a = |n: usize| serves[n].1.address.clone();
    // K, down without exclusion.
    let (_, mut k) = serve(tmp.path(), &resolver, "k", &[minted("k", 1)], &[]);
    let k_address = k.address.clone();
    k.kill();
    // B, at its cap of two connections: another client holds them.
    let (_, b) = serve(
        tmp.path(),
        &resolver,
        "b",
        &[minted("b", 1)],
        &["--max-connections", "2", "--idle-timeout", "600"],
    );
    let held = hold_cap(&b.address, 2);
    // S, G and H.
    let s = Peer::start(|target, stream| {
        if target.contains("servicesubject=inclusionConfirmationRequest") {
            answer_200(stream, b"confirmation yes\r\n");
        } else {
            hold(stream);
        }
    });
    include_peer(&resolver, &s, &service("s"));
    let g = common::peer::archive(|_, stream| answer_200(stream, b"<html>garbage</html>\n"));
    include_peer(&resolver, &g, &service("g"));
    let h = common::peer::archive(|ibi, stream| {
        let me = stream.local_addr().unwrap();
        let body = format!(
            "archiveaddress {me}\r\nibi {{rep {ibi}}}\r\nstate Original\r\nurl http://{me}/col/{ibi}/doc/file.txt\r\n"
        );
        answer_200(stream, body.as_bytes());
    });
    include_peer(&resolver, &h, &service("h"));
    let base = resolver.base();
    let page = |path: &str| get(&format!("{base}{path}"), "en");

    // 1. B is busy, not down: H's claim of B's item does not win; a 503 names B.
    let r = page(&format!("/{}", minted("b", 1)));
    assert_eq!(r.status, 503, "{}\n{}", r.text(), resolver.log());
    assert!(r.text().contains(&format!("<li>{}</li>", service("b"))));
    assert!(r.header("retry-after").is_some());
    // Released, it answers for its item.
    drop(held);
    let r = page(&format!("/{}", minted("b", 1)));
    assert_eq!(
        whither(&r),
        format!(
            "302 http://{}/col/{}/doc/file.txt",
            b.address,
            minted("b", 1)
        ),
        "{}",
        resolver.log()
    );

    // 2. File paths A0 does not have, though H answers every one: a 404 saying what is
    // missing, never a redirect to H; each a conflict; at the third H is under suspicion.
    for n in 1..=3 {
        let r = page(&format!("/{}/nonexistent.pdf", minted("a0", n)));
        assert_eq!(r.status, 404, "{}", r.text());
        assert!(
            r.text().contains(&format!(
                "<h1>File not found</h1>\n<p>An Archive has the item <code>{}</code>, but not the file <code>/nonexistent.pdf</code>.</p>",
                minted("a0", n)
            )),
            "{}",
            r.text()
        );
    }
    let suspected = format!(
        "ibi-resolver: {} (127.0.0.1:{}) is under suspicion: it answered against the homes of 3 IBIs",
        service("h"),
        h.addr.port()
    );
    let deadline = Instant::now() + HANG_GUARD;
    while !resolver.log().contains(&suspected) {
        assert!(Instant::now() < deadline, "{}", resolver.log());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        sample(
            &resolver.metrics(),
            &format!(
                "ibi_resolver_suspected_total{{archive=\"{}\"}}",
                service("h")
            )
        ),
        Some(1)
    );

    // 3. IBIs nobody holds: at a live home, and where no Archive's home is: 404, naming
    // the Archives that could not be asked (K, S, G) though none of them may hold them.
    for path in [
        format!("/{}", minted("a1", 59)),
        "/nowhere.test/x/2021/01.01.00.01".into(),
    ] {
        let r = page(&path);
        assert_eq!(r.status, 404, "{path}: {}\n{}", r.text(), resolver.log());
        assert!(r.header("retry-after").is_none());
        assert!(
            r.text().contains("could not be asked")
                && r.text().contains(&format!("<li>{}</li>", service("k"))),
            "{path}: {}",
            r.text()
        );
        assert!(!r.text().contains(&h.addr.to_string()), "{}", r.text());
    }
    // The IBI whose home, K, is down: a 503 naming it, not H's redirect.
    let r = page(&format!("/{}", minted("k", 1)));
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(
        r.text().contains(&format!("<li>{}</li>", service("k"))),
        "{}",
        r.text()
    );
    // Named by its service IBI; its address is for the operator's log alone.
    assert!(!r.text().contains(&k_address), "{}", r.text());

    // 4. Five first resolutions of items at their home A3 ask A3 alone.
    let before = all_asked(&resolver);
    for n in 1..=5 {
        let r = page(&format!("/{}", minted("a3", n)));
        assert_eq!(
            whither(&r),
            format!("302 http://{}/col/{}/doc/file.txt", a(3), minted("a3", n))
        );
    }
    assert_eq!(
        grown(&before, &all_asked(&resolver)),
        vec![(answered_by("a3"), 5)]
    );
    // An item that moved from A5 to A4, resolved while K and S are down: the first
    // resolution asks A5 (its home), then every other Archive; the memory learns A4, and
    // the next twenty ask A4 alone.
    let moved = minted("a5", 40);
    let to_a4 = format!("302 http://{}/col/{moved}/doc/file.txt", a(4));
    assert_eq!(
        whither(&page(&format!("/{moved}"))),
        to_a4,
        "{}",
        resolver.log()
    );
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let (code, out, _) = resolver.command(&["memory", &moved], "");
        if code == 0 && out.starts_with(&format!("{moved}  {}  ", service("a4"))) {
            break;
        }
        assert!(Instant::now() < deadline, "{out}\n{}", resolver.log());
        std::thread::sleep(Duration::from_millis(20));
    }
    let before = all_asked(&resolver);
    for _ in 0..20 {
        assert_eq!(whither(&page(&format!("/{moved}"))), to_a4);
    }
    assert_eq!(
        grown(&before, &all_asked(&resolver)),
        vec![(answered_by("a4"), 20)]
    );

    // 5. The Original check decides while K, S and G are silent: H, under suspicion, is
    // set aside.
    let r = page(&format!(
        "/{}?ibiurl.requireditemstatus=Original",
        minted("a2", 1)
    ));
    assert_eq!(
        whither(&r),
        format!("302 http://{}/col/{}/doc/file.txt", a(2), minted("a2", 1)),
        "{}",
        r.text()
    );
    // The live Archives' answers about their items, each as it would be with every
    // Archive up.
    for (n, name) in names.iter().enumerate() {
        let r = page(&format!("/{}", minted(name, 6)));
        assert_eq!(
            whither(&r),
            format!("302 http://{}/col/{}/doc/file.txt", a(n), minted(name, 6))
        );
    }
    assert!(asked(&resolver, "s", "timed_out") > 0);
    assert!(asked(&resolver, "g", "failed") > 0);
}
