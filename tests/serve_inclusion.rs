//! Automatic inclusion and exclusion (resolution standard §7.2, Figure 7.1): `ibi-archive
//! serve` over an Archive whose `[registration]` names resolvers asks each of them to
//! include it once it listens, and to exclude it when it is stopped (SIGTERM, SIGINT),
//! before it exits. Real processes on loopback: `ibi-resolver serve` (the harness of
//! tests/common/resolver.rs), the Archive registered in each with `ibi-resolver
//! register`, and what each resolver says of it read with `ibi-resolver archives --csv`.
//!
//! Also `ibi-archive include` / `exclude` with several resolvers: each is asked, each
//! answer reported, and the exit status 1 when any failed.
//!
//! And many Archives of one network asking one resolver at once (a machine room
//! switched on after a power cut): the resolver checks their keys in turn, and every
//! one gets in with its one request.
//!
//! Needs ibi-resolver beside ibi-archive: `cargo build -p ibi-resolver` first when only
//! this package's tests are run.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::resolver::{
    archive, archive_row, register_in, registration, registration_per_resolver, Resolver,
    RESOLVER_IBI,
};
use common::{free_port, Serve, HANG_GUARD};

/// The Archive's service IBI (the sample Archive's).
const SERVICE: &str = common::resolver::SAMPLE_SERVICE;
/// The registration key, in archive.toml and in each resolver: two groups of digits
/// found nowhere else in the logs.
const KEY: &str = "2718281828-3141592653";

/// How soon after `serve` starts the Archive must be included in every resolver, and
/// how soon after the signal it must be excluded from every one: what the issue asks
/// (the requests go out at once, not after a retry).
const PROMPTLY: Duration = Duration::from_secs(2);

/// A copy of the sample Archive in `dir`/archive answering at a free port of 127.0.0.1,
/// its `[registration]` naming `resolvers` and [`KEY`]: its root and `127.0.0.1:PORT`.
fn archive_for(dir: &Path, resolvers: &[String]) -> (PathBuf, String) {
    let root = archive(dir, "archive", SERVICE, &[], &[]);
    let address = format!("127.0.0.1:{}", free_port());
    registration(&root, &address, resolvers, KEY);
    (root, address)
}

/// `ibi-archive serve` on `address`, automatic inclusion as it is by default, its stderr
/// written to `log`.
fn serve(root: &Path, address: &str, log: &Path, more: &[&str]) -> Serve {
    let mut args = vec!["--listen", address];
    args.extend_from_slice(more);
    Serve::start_including(root, File::create(log).unwrap(), &args)
}

/// Waits until `done` says yes, asking every 20 ms; fails naming `what`, with
/// `context()`, at `deadline`.
fn poll(
    deadline: Instant,
    what: &str,
    mut done: impl FnMut() -> bool,
    context: impl Fn() -> String,
) {
    loop {
        if done() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "not {what} by the deadline\n{}",
            context()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The logs of the Archive and of the resolvers, for a failure message.
fn logs(log: &Path, resolvers: &[&Resolver]) -> String {
    let mut text = format!(
        "--- serve:\n{}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
    for r in resolvers {
        text.push_str(&format!("--- resolver {}:\n{}", r.service(), r.log()));
    }
    text
}

/// Fails if any part of the key is in `text`.
fn assert_no_key(text: &str, what: &str) {
    for part in KEY.split('-') {
        assert!(!text.contains(part), "the key is in {what}:\n{text}");
    }
}

/// A running resolver in `dir`/`name` in which the Archive is registered.
fn resolver(dir: &Path, name: &str) -> Resolver {
    let dir = dir.join(name);
    std::fs::create_dir(&dir).unwrap();
    let r = Resolver::start(&dir, "2s", "");
    r.register(SERVICE, KEY);
    r
}

#[test]
fn serve_is_included_in_two_resolvers_when_it_starts_and_excluded_from_both_on_sigterm() {
    let tmp = common::archive_tempdir();
    let a = resolver(tmp.path(), "a");
    let b = resolver(tmp.path(), "b");
    assert_eq!(a.included(SERVICE), Some(false));
    let (root, address) = archive_for(tmp.path(), &[a.service(), b.service()]);
    let log = tmp.path().join("serve.log");
    let context = || logs(&log, &[&a, &b]);

    let started = Instant::now();
    let mut serve = serve(&root, &address, &log, &[]);
    poll(
        started + PROMPTLY,
        "included in both resolvers",
        || a.included(SERVICE) == Some(true) && b.included(SERVICE) == Some(true),
        context,
    );
    // Each resolver asked the Archive for its confirmation, at its address, and had it:
    // the listener answered when the inclusion request went out.
    for r in [&a, &b] {
        let (_, csv, _) = r.command(&["archives", "--csv"], "");
        let row = archive_row(&csv, SERVICE).unwrap();
        assert_eq!(
            (row["address"].as_str(), row["confirmation"].as_str()),
            (address.as_str(), "successful"),
            "{}",
            context()
        );
    }

    let stopping = Instant::now();
    serve.signal("TERM");
    poll(
        stopping + PROMPTLY,
        "excluded from both resolvers",
        || a.included(SERVICE) == Some(false) && b.included(SERVICE) == Some(false),
        context,
    );
    let status = serve.wait("SIGTERM");
    assert!(status.success(), "{status}\n{}", context());

    let text = std::fs::read_to_string(&log).unwrap();
    assert_no_key(&text, "serve's log");
    let lines: Vec<&str> = text.lines().collect();
    for r in [&a, &b] {
        let url = r.service();
        for expected in [
            format!("ibi-archive: inclusion in {url}: status.archive included, status.confirmation successful"),
            format!("ibi-archive: exclusion from {url}: status.archive excluded"),
        ] {
            assert_eq!(
                lines.iter().filter(|l| **l == expected).count(),
                1,
                "{expected:?} once in:\n{text}"
            );
        }
    }
    assert_eq!(lines.last(), Some(&"ibi-archive: stopped"), "{text}");
}

/// With a key of its own for each resolver (`[[registration.resolver]]`), serve is
/// included in both when it starts and excluded from both on SIGTERM, each resolver sent
/// its own key: each refuses the other's (a wrong key is a `403`). No key in any log.
#[test]
fn serve_sends_each_resolver_its_own_key() {
    const KEY_A: &str = "1618033988-7499894848";
    const KEY_B: &str = "5772156649-0153286060";
    let tmp = common::archive_tempdir();
    let start = |name: &str, key: &str| {
        let dir = tmp.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        let r = Resolver::start(&dir, "2s", "");
        r.register(SERVICE, key);
        r
    };
    let a = start("a", KEY_A);
    let b = start("b", KEY_B);
    let root = archive(tmp.path(), "archive", SERVICE, &[], &[]);
    let address = format!("127.0.0.1:{}", free_port());
    registration_per_resolver(
        &root,
        &address,
        &[(a.service(), KEY_A), (b.service(), KEY_B)],
    );
    let log = tmp.path().join("serve.log");
    let context = || logs(&log, &[&a, &b]);
    let started = Instant::now();
    let mut serve = serve(&root, &address, &log, &[]);
    poll(
        started + PROMPTLY,
        "included in both resolvers",
        || a.included(SERVICE) == Some(true) && b.included(SERVICE) == Some(true),
        context,
    );
    let stopping = Instant::now();
    serve.signal("TERM");
    poll(
        stopping + PROMPTLY,
        "excluded from both resolvers",
        || a.included(SERVICE) == Some(false) && b.included(SERVICE) == Some(false),
        context,
    );
    let status = serve.wait("SIGTERM");
    assert!(status.success(), "{status}\n{}", context());
    let all = context();
    for key in [KEY_A, KEY_B] {
        for part in key.split('-') {
            assert!(!all.contains(part), "a key is in a log:\n{all}");
        }
    }
    // Neither resolver saw a wrong key.
    assert!(!all.contains(" 403 "), "{all}");
}

#[test]
fn a_resolver_down_at_start_is_asked_again_until_it_includes_the_archive() {
    let tmp = common::archive_tempdir();
    let a = resolver(tmp.path(), "a");
    // b: configured, the Archive registered in its registry, not running yet.
    let b_dir = tmp.path().join("b");
    std::fs::create_dir(&b_dir).unwrap();
    let (b_config, b_port) = Resolver::configure(&b_dir, "2s", "");
    register_in(&b_config, SERVICE, KEY);
    let b_url = format!("http://127.0.0.1:{b_port}/{RESOLVER_IBI}");
    let (root, address) = archive_for(tmp.path(), &[a.service(), b_url.clone()]);
    let log = tmp.path().join("serve.log");
    let serve_log = || std::fs::read_to_string(&log).unwrap_or_default();

    let mut serve = serve(&root, &address, &log, &[]);
    let guard = Instant::now() + HANG_GUARD;
    poll(
        guard,
        "included in the resolver that runs",
        || a.included(SERVICE) == Some(true),
        || logs(&log, &[&a]),
    );
    // One line for the failure, saying when the next try is; serve goes on serving.
    let failed = format!("ibi-archive: inclusion in {b_url} failed: cannot reach the resolver at {b_url}: the connection failed; next try in 1 s");
    poll(
        guard,
        "a failure logged for the resolver that is down",
        || serve_log().lines().any(|l| l == failed),
        serve_log,
    );
    assert!(serve.running(), "{}", serve_log());
    let r = common::http_get(&format!(
        "http://{address}/{SERVICE}?servicesubject=inclusionConfirmationRequest"
    ));
    assert_eq!((r.status, r.text().as_str()), (200, "confirmation yes"));

    let b = Resolver::run(b_config, b_port);
    poll(
        guard,
        "included in the resolver once it is up",
        || b.included(SERVICE) == Some(true),
        || logs(&log, &[&a, &b]),
    );
    let (_, csv, _) = b.command(&["archives", "--csv"], "");
    assert_eq!(
        archive_row(&csv, SERVICE).unwrap()["confirmation"],
        "successful"
    );

    // Ctrl-C: both exclusions are answered before serve exits.
    let status = serve.interrupt();
    assert!(status.success(), "{status}\n{}", logs(&log, &[&a, &b]));
    assert_eq!(
        (a.included(SERVICE), b.included(SERVICE)),
        (Some(false), Some(false)),
        "{}",
        logs(&log, &[&a, &b])
    );
    let text = serve_log();
    assert_no_key(&text, "serve's log");
    assert!(
        text.lines().any(|l| l
            == format!("ibi-archive: inclusion in {b_url}: status.archive included, status.confirmation successful")),
        "{text}"
    );
}

#[test]
fn no_inclusion_sends_nothing_to_the_resolvers() {
    let tmp = common::archive_tempdir();
    let a = resolver(tmp.path(), "a");
    let (root, address) = archive_for(tmp.path(), &[a.service()]);
    let log = tmp.path().join("serve.log");
    let mut serve = serve(&root, &address, &log, &["--no-inclusion"]);
    let r = common::http_get(&format!(
        "http://{address}/{SERVICE}?servicesubject=inclusionConfirmationRequest"
    ));
    assert_eq!(r.status, 200);
    // Were it asking, its exclusion would be answered before it exits.
    serve.signal("TERM");
    assert!(serve.wait("SIGTERM").success(), "{}", logs(&log, &[&a]));
    assert_eq!(a.included(SERVICE), Some(false));
    let resolver_log = a.log();
    assert!(
        !resolver_log.contains("inclusionRequest") && !resolver_log.contains("exclusionRequest"),
        "{resolver_log}"
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("inclusion in"), "{text}");
}

#[test]
fn include_and_exclude_ask_every_resolver_and_fail_if_one_fails() {
    let tmp = common::archive_tempdir();
    let a = resolver(tmp.path(), "a");
    let down = format!("http://127.0.0.1:{}/{RESOLVER_IBI}", free_port());
    let (root, address) = archive_for(tmp.path(), &[a.service(), down.clone()]);
    let log = tmp.path().join("serve.log");
    let _serve = serve(&root, &address, &log, &["--no-inclusion"]);
    let root_arg = root.to_str().unwrap();
    let url = a.service();

    let (code, out, err) = common::run_cmd(&["include", "--root", root_arg]);
    assert_no_key(&(out.clone() + &err), "include's output");
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            1,
            &*format!("{url}: status.archive included\n{url}: status.confirmation successful\n"),
            &*format!("ibi-archive: include: cannot reach the resolver at {down}: the connection failed\nibi-archive: include: 1 of 2 resolvers failed\n")
        )
    );
    assert_eq!(a.included(SERVICE), Some(true));

    let (code, out, err) = common::run_cmd(&["exclude", "--root", root_arg]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            1,
            &*format!("{url}: status.archive excluded\n"),
            &*format!("ibi-archive: exclude: cannot reach the resolver at {down}: the connection failed\nibi-archive: exclude: 1 of 2 resolvers failed\n")
        )
    );
    assert_eq!(a.included(SERVICE), Some(false));

    // --resolver names the one asked: its answer alone, as with one resolver.
    let (code, out, err) = common::run_cmd(&["include", "--root", root_arg, "--resolver", &url]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            0,
            "status.archive included\nstatus.confirmation successful\n",
            ""
        )
    );
    assert_eq!(a.included(SERVICE), Some(true));

    // Both forms at once: refused, nothing sent.
    let path = root.join("archive.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace(
            "resolvers = [",
            &format!("resolver = \"{url}\"\nresolvers = ["),
        ),
    )
    .unwrap();
    let (code, out, err) = common::run_cmd(&["exclude", "--root", root_arg]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(
        err.contains("[registration] has both resolver and resolvers"),
        "{err}"
    );
    assert_eq!(a.included(SERVICE), Some(true));
}

/// `n` copies of the sample Archive in `dir`, each its own service IBI (returned) and
/// address on 127.0.0.1, registered in `resolver` (with [`KEY`]) and pointing at it.
fn archives_of_one_room(
    dir: &Path,
    resolver: &Resolver,
    n: usize,
) -> Vec<(PathBuf, String, String)> {
    (0..n)
        .map(|i| {
            let service = format!("urlib.net/www/2021/07.07.07.{:02}", i + 1);
            let root = archive(dir, &format!("archive-{i}"), &service, &[], &[]);
            let address = format!("127.0.0.1:{}", free_port());
            registration(&root, &address, &[resolver.service()], KEY);
            resolver.register(&service, KEY);
            (root, address, service)
        })
        .collect()
}

/// The services of `services` that `resolver` lists as included, their confirmation
/// successful.
fn confirmed(resolver: &Resolver, services: &[&str]) -> usize {
    let (code, csv, err) = resolver.command(&["archives", "--csv"], "");
    assert_eq!(code, 0, "{err}");
    services
        .iter()
        .filter(|s| {
            archive_row(&csv, s)
                .is_some_and(|row| row["included"] == "yes" && row["confirmation"] == "successful")
        })
        .count()
}

/// Ten `ibi-archive serve` started at once on 127.0.0.1, each Archive registered in one
/// resolver: each sends its one inclusion request when it listens (§7.2), and all ten
/// are included, confirmed, within 10 s, none of them told to come back later.
#[test]
fn ten_archives_switched_on_together_on_one_network_are_all_included() {
    const ARCHIVES: usize = 10;
    let tmp = common::archive_tempdir();
    let r = resolver(tmp.path(), "resolver");
    let room = archives_of_one_room(tmp.path(), &r, ARCHIVES);
    let services: Vec<&str> = room.iter().map(|(_, _, s)| s.as_str()).collect();
    let logs: Vec<PathBuf> = (0..ARCHIVES)
        .map(|i| tmp.path().join(format!("serve-{i}.log")))
        .collect();
    let every_log = || {
        let mut text = String::new();
        for log in &logs {
            text.push_str(&format!(
                "--- {}:\n{}",
                log.display(),
                std::fs::read_to_string(log).unwrap_or_default()
            ));
        }
        text + &format!("--- resolver:\n{}", r.log())
    };

    let start = std::sync::Arc::new(std::sync::Barrier::new(ARCHIVES + 1));
    let starting: Vec<_> = room
        .iter()
        .zip(&logs)
        .map(|((root, address, _), log)| {
            let (root, address, log, start) =
                (root.clone(), address.clone(), log.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                serve(&root, &address, &log, &[])
            })
        })
        .collect();
    start.wait();
    let started = Instant::now();
    let _served: Vec<Serve> = starting.into_iter().map(|t| t.join().unwrap()).collect();
    poll(
        started + Duration::from_secs(10),
        "all ten included within 10 s",
        || confirmed(&r, &services) == ARCHIVES,
        every_log,
    );
    let took = started.elapsed();
    eprintln!("{ARCHIVES} Archives switched on together: all included in {took:?}");

    // Each got in with its one request: one line saying so, no failure, no other try.
    let url = r.service();
    let included = format!(
        "ibi-archive: inclusion in {url}: status.archive included, status.confirmation successful"
    );
    for log in &logs {
        let text = std::fs::read_to_string(log).unwrap();
        assert_no_key(&text, "serve's log");
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("ibi-archive: inclusion"))
            .collect();
        assert_eq!(lines, [included.as_str()], "{}", every_log());
    }
    let inclusions = r
        .log()
        .lines()
        .filter(|l| l.contains("servicesubject=inclusionRequest"))
        .count();
    assert_eq!(inclusions, ARCHIVES, "{}", every_log());
}

/// Five `ibi-archive include` run at once from one address, each for its own Archive:
/// all five succeed at their first request (exit 0, included and confirmed, nothing on
/// stderr).
#[test]
fn five_includes_at_once_from_one_address_all_succeed() {
    const ARCHIVES: usize = 5;
    let tmp = common::archive_tempdir();
    let r = resolver(tmp.path(), "resolver");
    let room = archives_of_one_room(tmp.path(), &r, ARCHIVES);
    let _served: Vec<Serve> = room
        .iter()
        .enumerate()
        .map(|(i, (root, address, _))| {
            let log = tmp.path().join(format!("serve-{i}.log"));
            serve(root, address, &log, &["--no-inclusion"])
        })
        .collect();

    let start = std::sync::Arc::new(std::sync::Barrier::new(ARCHIVES));
    let runs: Vec<_> = room
        .iter()
        .map(|(root, _, _)| {
            let (root, start) = (root.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                common::run_cmd(&["include", "--root", root.to_str().unwrap()])
            })
        })
        .collect();
    let got: Vec<(i32, String, String)> = runs.into_iter().map(|t| t.join().unwrap()).collect();
    for (_, out, err) in &got {
        assert_no_key(&(out.clone() + err), "include's output");
    }
    let want = (
        0,
        "status.archive included\nstatus.confirmation successful\n".to_string(),
        String::new(),
    );
    assert_eq!(got, vec![want; ARCHIVES], "{}", r.log());
    let services: Vec<&str> = room.iter().map(|(_, _, s)| s.as_str()).collect();
    assert_eq!(confirmed(&r, &services), ARCHIVES, "{}", r.log());
}
