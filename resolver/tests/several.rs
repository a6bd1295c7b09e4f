//! Several resolvers on one PostgreSQL registry (throwaway clusters of
//! tests/common/pg.rs, PostgreSQL from Debian's package; under `CI=true` a missing
//! PostgreSQL fails these tests), each a real `ibi-resolver serve`, with a real
//! `ibi-archive serve` Archive:
//! - an Archive included through one instance is resolved by another within a second
//!   (told by PostgreSQL, not found by reading again: that happens every 30 s only), and
//!   what one instance's memory learns is in the other's;
//! - PostgreSQL stopped under a load of resolutions: none fails, remembered or asked of
//!   every Archive; inclusion answers 503 and `/healthz` says why; PostgreSQL started
//!   again, inclusion works within 5 s, the resolvers never restarted;
//! - a primary and its streaming standby, the URI naming both: the primary stopped and
//!   the standby promoted under a load, every inclusion made before is there, and the
//!   resolver writes again within 10 s;
//! - `migrate-registry` of a registry like the sample's: the same listing, the same
//!   resolutions, the same keys;
//! - PostgreSQL stopped, `/healthz` says why to this machine and a trusted proxy only.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::pg::{multi_host_uri, Cluster};
use common::resolver::{
    archive, archive_cmd, configure, register_in, Resolver, KEY, SAMPLE_SERVICE,
};

/// Items of the sample Archive its service holds (a persistent URL's path).
const ITEMS: [&str; 3] = [
    "sid.inpe.br/mtc-m18@80/2009/07.21.13.23",
    "sid.inpe.br/mtc-m18@80/2009/07.21.14.43",
    "sid.inpe.br/mtc-m18@80/2009/08.25.19.43",
];

/// `resolver.toml` at `config` made to name `database` in place of its SQLite file.
fn on_database(config: &Path, database: &str) {
    let text = std::fs::read_to_string(config).unwrap();
    let changed = text.replace(
        "database = \"registry.sqlite\"",
        &format!("database = \"{database}\""),
    );
    assert_ne!(text, changed, "{text}");
    std::fs::write(config, changed).unwrap();
}

/// A resolver in `dir` on `database`, its Archives on loopback, `more` after `[archives]`.
fn resolver_on(dir: &Path, database: &str, more: &str) -> Resolver {
    std::fs::create_dir_all(dir).unwrap();
    let (config, port) = Resolver::configure(dir, "5s", more);
    on_database(&config, database);
    Resolver::run(config, port)
}

/// The sample Archive, served on a free port of loopback, its resolver `service` (a
/// resolver service's URL): its root and the server.
fn sample_archive(tmp: &Path, service: &str) -> (PathBuf, common::Serve) {
    let root = archive(tmp, "sample", SAMPLE_SERVICE, &[], &[]);
    let address = format!("127.0.0.1:{}", common::free_port());
    configure(&root, &address, service);
    let log = std::fs::File::create(root.with_extension("log")).unwrap();
    // The resolvers under test are its only clients, under loads of several threads.
    let serve = common::Serve::start_with(
        &root,
        log,
        &["--listen", &address, "--max-per-client", "1000"],
    );
    (root, serve)
}

/// `ibi-archive include` of the Archive at `root`: its exit code and output.
fn include(root: &Path) -> (i32, String) {
    let (code, out, err) = archive_cmd("include", root);
    (code, format!("{out}{err}"))
}

const INCLUDED: &str = "status.archive included\nstatus.confirmation successful\n";

/// Has the Archive at `root` ask to be included until it is, `limit` at most after
/// `since` (what happened just before): how long that took, printed.
fn included_within(root: &Path, limit: Duration, since: &str, resolver: &Resolver) -> Duration {
    let start = Instant::now();
    assert!(
        within(limit, || include(root).0 == 0).is_some(),
        "not included within {limit:?} of {since}: {:?}\n{}",
        include(root),
        resolver.log()
    );
    let took = start.elapsed();
    eprintln!("included again {took:?} after {since}");
    took
}

/// What `base` answers for `/<ibi>`: the status and the Location.
fn answer(base: &str, ibi: &str) -> (u16, Option<String>) {
    let r = common::http_get(&format!("{base}/{ibi}"));
    (r.status, r.header("location").map(str::to_string))
}

/// Asks `what` every 10 ms until it is true; how long that took, or None after `within`.
fn within(within: Duration, mut what: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    loop {
        if what() {
            return Some(start.elapsed());
        }
        if start.elapsed() > within {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A load of resolutions from `threads` threads, each asking `urls` in turn and
/// expecting each one's answer; every answer counted, every unexpected one kept.
struct Load {
    stop: Arc<AtomicBool>,
    done: Arc<AtomicUsize>,
    wrong: Arc<Mutex<Vec<String>>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Load {
    fn start(threads: usize, urls: Vec<(String, (u16, Option<String>))>) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicUsize::new(0));
        let wrong = Arc::new(Mutex::new(Vec::new()));
        let threads = (0..threads)
            .map(|t| {
                let (stop, done, wrong, urls) =
                    (stop.clone(), done.clone(), wrong.clone(), urls.clone());
                std::thread::spawn(move || {
                    let mut n = t;
                    while !stop.load(Ordering::SeqCst) {
                        let (url, want) = &urls[n % urls.len()];
                        let r = common::http_get(url);
                        let got = (r.status, r.header("location").map(str::to_string));
                        if &got != want {
                            wrong
                                .lock()
                                .unwrap()
                                .push(format!("{url}: {got:?}, not {want:?}: {}", r.text()));
                        }
                        done.fetch_add(1, Ordering::SeqCst);
                        n += 1;
                    }
                })
            })
            .collect();
        Load {
            stop,
            done,
            wrong,
            threads,
        }
    }

    /// Waits until `n` more resolutions are answered.
    fn more(&self, n: usize, what: &str) {
        let from = self.done.load(Ordering::SeqCst);
        assert!(
            within(common::HANG_GUARD, || self.done.load(Ordering::SeqCst)
                >= from + n)
            .is_some(),
            "{what}: fewer than {n} resolutions answered"
        );
    }

    /// Stops it; none may have been answered otherwise than expected: how many were
    /// answered.
    fn finish(self) -> usize {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads {
            t.join().unwrap();
        }
        let wrong = self.wrong.lock().unwrap().clone();
        let answered = self.done.load(Ordering::SeqCst);
        assert!(
            wrong.is_empty(),
            "{} of {answered} failed: {wrong:#?}",
            wrong.len()
        );
        eprintln!("{answered} resolutions, none failed");
        answered
    }
}

#[test]
fn an_archive_included_through_one_instance_resolves_through_the_other_within_a_second() {
    let Some(pg) = Cluster::start() else { return };
    let uri = pg.database();
    let tmp = common::archive_tempdir();
    let one = resolver_on(&tmp.path().join("one"), &uri, "");
    let two = resolver_on(&tmp.path().join("two"), &uri, "");
    let (root, _serve) = sample_archive(tmp.path(), &one.service());
    // Registered from the shell, through the database both share.
    register_in(&one.config, SAMPLE_SERVICE, KEY);
    let (code, out) = include(&root);
    assert_eq!((code, out.as_str()), (0, INCLUDED), "{}", one.log());
    let item = ITEMS[0];
    let took = within(Duration::from_secs(1), || {
        answer(&two.base(), item).0 == 302
    });
    assert!(
        took.is_some(),
        "not resolved through the other instance within 1 s: {:?}\n{}",
        answer(&two.base(), item),
        two.log()
    );
    assert_eq!(answer(&two.base(), item), answer(&one.base(), item));

    // What one instance's memory learns, the other's holds: the other's home page shows
    // it as its example of an item resolved, though no reader asked it.
    let other = ITEMS[1];
    let (status, _) = answer(&one.base(), other);
    assert_eq!(status, 302, "{}", one.log());
    // The memory keys a rep without its port 80.
    let key = other.replace("@80", "");
    let shown = within(Duration::from_secs(1), || {
        common::http_get(&format!("{}/", two.base()))
            .text()
            .contains(&key)
    });
    assert!(
        shown.is_some(),
        "{other} not in the other instance's memory: {}",
        common::http_get(&format!("{}/", two.base())).text()
    );

    // A notification sent by another role of the database plants nothing: it names IBIs,
    // and where they are is read from the table, which only the resolvers write. One
    // shaped as an entry, with an Archive, for an IBI nobody remembers, then a real one
    // after it: once the real one is taken in, the other instance still asks every
    // Archive for the forged IBI (a miss of its memory), and finds it nowhere.
    let forged = "urlib.net/www/2099/01.01.01.01";
    pg.psql(
        &uri,
        &format!("SELECT pg_notify('ibi_memory', E'1\\n{forged}\\t{SAMPLE_SERVICE}\\t9999999999999\\n{forged}')"),
    );
    let real = ITEMS[2];
    assert_eq!(answer(&one.base(), real).0, 302);
    let key = real.replace("@80", "");
    assert!(within(Duration::from_secs(1), || {
        common::http_get(&format!("{}/", two.base()))
            .text()
            .contains(&key)
    })
    .is_some());
    let misses = |r: &Resolver| {
        common::resolver::sample(
            &r.metrics(),
            "ibi_resolver_location_memory_total{result=\"miss\"}",
        )
        .unwrap_or(0)
    };
    let before = misses(&two);
    assert_eq!(answer(&two.base(), forged).0, 404);
    assert_eq!(misses(&two), before + 1);

    // An exclusion through the first instance is seen by the other as quickly.
    let (code, out, _) = archive_cmd("exclude", &root);
    assert_eq!(code, 0, "{out}");
    let gone = within(Duration::from_secs(1), || {
        answer(&two.base(), ITEMS[2]).0 == 404
    });
    assert!(gone.is_some(), "{:?}", answer(&two.base(), ITEMS[2]));
}

#[test]
fn postgresql_stopped_under_a_load_no_resolution_fails_and_inclusion_comes_back_by_itself() {
    let Some(pg) = Cluster::start() else { return };
    let uri = pg.database();
    let tmp = common::archive_tempdir();
    // One resolver remembers; the other remembers nothing, so every resolution of it asks
    // every Archive.
    // The load comes from one client network: its bound on resolutions that ask every
    // Archive raised.
    let limits = "[limits]\nper_client_misses = 100000\n";
    let remembering = resolver_on(&tmp.path().join("one"), &uri, limits);
    let asking = resolver_on(
        &tmp.path().join("two"),
        &uri,
        &format!("[memory]\nentries = 0\n{limits}"),
    );
    let (root, _serve) = sample_archive(tmp.path(), &remembering.service());
    register_in(&remembering.config, SAMPLE_SERVICE, KEY);
    assert_eq!(include(&root), (0, INCLUDED.to_string()));
    let mut urls = Vec::new();
    for r in [&remembering, &asking] {
        assert!(
            within(Duration::from_secs(1), || answer(&r.base(), ITEMS[0]).0
                == 302)
            .is_some(),
            "{}",
            r.log()
        );
        for item in ITEMS {
            let url = format!("{}/{item}", r.base());
            let want = answer(&r.base(), item);
            assert_eq!(want.0, 302, "{item}: {}", r.log());
            urls.push((url, want));
        }
    }
    let healthz = |r: &Resolver| common::http_get(&format!("{}/healthz", r.base()));
    assert_eq!(
        (healthz(&remembering).status, healthz(&remembering).text()),
        (200, "ready: the registry answers\n".to_string())
    );

    let load = Load::start(4, urls);
    load.more(200, "before the stop");
    pg.stop();
    load.more(500, "PostgreSQL stopped");
    // Registration needs the registry: refused for now, to be asked again.
    let service = format!(
        "{}?servicesubject=inclusionRequest&archiveaddress=127.0.0.1:1&archiveserviceibi={SAMPLE_SERVICE}&archiveip=127.0.0.1&archiveprotocol=HTTP&archiveplatformversion=1&archiveadmemailaddress=x@example.org&registrationkey={KEY}",
        remembering.service()
    );
    let refused = common::http_get(&service);
    assert_eq!(
        (
            refused.status,
            refused.header("retry-after"),
            refused.text()
        ),
        (
            503,
            Some("5"),
            "error {registry unavailable}\r\n".to_string()
        ),
        "{}",
        remembering.log()
    );
    let (code, out) = include(&root);
    assert_ne!(code, 0, "{out}");
    // Still ready (it resolves with what it holds), and why it says so.
    let h = healthz(&remembering);
    assert_eq!(h.status, 200);
    assert!(
        h.text().starts_with(
            "ready: resolving with the 1 included Archive held; the registry has not answered since "
        ),
        "{}",
        h.text()
    );
    load.more(200, "with inclusion refused");

    pg.restart();
    included_within(
        &root,
        Duration::from_secs(5),
        "PostgreSQL started again",
        &remembering,
    );
    load.finish();
    for r in [&remembering, &asking] {
        assert!(
            within(Duration::from_secs(3), || healthz(r).text()
                == "ready: the registry answers\n")
            .is_some(),
            "{}",
            healthz(r).text()
        );
    }
    // Said once when it went, once when it came back; the resolvers never restarted.
    for r in [&remembering, &asking] {
        let log = r.log();
        assert_eq!(log.matches("cannot read the registry").count(), 1, "{log}");
        assert_eq!(
            log.matches("the registry answers again").count(),
            1,
            "{log}"
        );
        assert_eq!(log.matches("listening on").count(), 1, "{log}");
        // Health checks are no events.
        assert!(!log.contains("/healthz"), "{log}");
    }
}

#[test]
fn the_standby_promoted_under_a_load_holds_every_inclusion_and_takes_writes_within_10_s() {
    let Some(primary) = Cluster::start_primary() else {
        return;
    };
    let standby = primary.standby();
    let db = primary.create_database();
    primary.psql(&db, "SELECT 1");
    let uri = multi_host_uri(&[&primary, &standby], &db);
    let tmp = common::archive_tempdir();
    let resolver = resolver_on(&tmp.path().join("one"), &uri, "");
    let (root, _serve) = sample_archive(tmp.path(), &resolver.service());
    register_in(&resolver.config, SAMPLE_SERVICE, KEY);
    assert_eq!(include(&root), (0, INCLUDED.to_string()));
    // More Archives registered, each acknowledged before the failover.
    let others: Vec<String> = (0..5)
        .map(|n| format!("example.org/archive{n}/2026/11.26.10.0{n}"))
        .collect();
    for o in &others {
        register_in(&resolver.config, o, KEY);
    }
    assert!(within(Duration::from_secs(1), || answer(
        &resolver.base(),
        ITEMS[0]
    )
    .0 == 302)
    .is_some());
    let urls: Vec<_> = ITEMS
        .iter()
        .map(|i| {
            (
                format!("{}/{i}", resolver.base()),
                answer(&resolver.base(), i),
            )
        })
        .collect();
    assert!(urls.iter().all(|(_, (s, _))| *s == 302), "{urls:?}");

    let load = Load::start(4, urls);
    load.more(200, "before the failover");
    primary.stop();
    standby.promote();
    included_within(
        &root,
        Duration::from_secs(10),
        "the standby promoted",
        &resolver,
    );
    load.finish();
    let (code, listing, err) = resolver.command(&["archives", "--csv"], "");
    assert_eq!(code, 0, "{err}");
    for o in &others {
        assert!(listing.contains(o.as_str()), "{o} lost:\n{listing}");
    }
    let row = common::resolver::archive_row(&listing, SAMPLE_SERVICE).unwrap();
    assert_eq!(row["included"], "yes", "{listing}");
}

#[test]
fn migrate_registry_moves_the_sample_registry_keys_and_memory_into_postgresql() {
    let Some(pg) = Cluster::start() else { return };
    let uri = pg.database();
    let tmp = common::archive_tempdir();
    // The sample's registry: its Archive registered and included, items remembered.
    std::fs::create_dir(tmp.path().join("old")).unwrap();
    let mut old = Resolver::start(&tmp.path().join("old"), "5s", "");
    let (root, _serve) = sample_archive(tmp.path(), &old.service());
    old.register(SAMPLE_SERVICE, KEY);
    assert_eq!(include(&root), (0, INCLUDED.to_string()));
    let before: Vec<_> = ITEMS.iter().map(|i| answer(&old.base(), i)).collect();
    old.stop();
    // As it stopped: its Archives' health written.
    let (_, listed, _) = old.command(&["archives"], "");
    let (_, remembered, _) = old.command(&["memory"], "");

    let run = |args: &[&str]| {
        common::run_with_stdin(
            std::process::Command::new(common::ibi_resolver_bin())
                .args(args)
                .args(["--config", old.config.to_str().unwrap()]),
            "",
        )
    };
    let (code, out, err) = run(&["migrate-registry", "--to", &uri]);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    let locations = remembered.lines().count();
    assert_eq!(
        out,
        format!(
            "copied {} into {uri}: archives 1 new of 1, locations {locations} new of {locations}, conflicts 0 new of 0\nnow set database to that URI in the settings of every resolver that shares it, and restart them\n",
            tmp.path().join("old/registry.sqlite").display()
        )
    );
    // Again: nothing copied twice.
    let (code, again, _) = run(&["migrate-registry", "--to", &uri]);
    assert_eq!(code, 0);
    assert!(
        again.contains("archives 0 new of 1, locations 0 new of"),
        "{again}"
    );

    // The address its service answered at, which makes it the home of what is minted
    // there, copied too.
    assert_eq!(
        pg.psql(&uri, "SELECT ip, ipreached FROM archives").trim(),
        "127.0.0.1|1"
    );
    let new = resolver_on(&tmp.path().join("new"), &uri, "");
    let (_, listed_new, _) = new.command(&["archives"], "");
    assert_eq!(listed_new, listed);
    let (_, remembered_new, _) = new.command(&["memory"], "");
    assert_eq!(remembered_new, remembered);
    let after: Vec<_> = ITEMS.iter().map(|i| answer(&new.base(), i)).collect();
    assert_eq!(after, before);
    // The key still verifies: the Archive excludes and includes itself, the address of
    // its resolver now the new one's.
    configure_resolver(&root, &old.service(), &new.service());
    let (code, out, _) = archive_cmd("exclude", &root);
    assert_eq!(code, 0, "{out}{}", new.log());
    assert_eq!(include(&root), (0, INCLUDED.to_string()));
}

/// archive.toml of the Archive at `root` pointed from resolver service `from` to `to`.
fn configure_resolver(root: &Path, from: &str, to: &str) {
    let path = root.join("archive.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{text}");
    std::fs::write(&path, text.replace(from, to)).unwrap();
}

/// A PostgreSQL that hangs rather than fails (its registry backend stopped, SIGSTOP: the
/// connection stays up, keepalives answered by the kernel, no statement timeout can act):
/// resolutions go on; an inclusion answers 503 after the resolver's own bound on a call
/// of the registry (6 s), before the Archive gives up waiting (10 s), as when the
/// database is out of reach, and /healthz says so; the backend woken, inclusion works
/// again.
#[test]
fn a_postgresql_that_hangs_is_out_of_reach_after_6_s_and_resolutions_go_on() {
    let Some(pg) = Cluster::start() else { return };
    let uri = pg.database();
    let tmp = common::archive_tempdir();
    let resolver = resolver_on(&tmp.path().join("one"), &uri, "");
    let (root, _serve) = sample_archive(tmp.path(), &resolver.service());
    register_in(&resolver.config, SAMPLE_SERVICE, KEY);
    assert_eq!(include(&root), (0, INCLUDED.to_string()));
    let want = answer(&resolver.base(), ITEMS[0]);
    assert_eq!(want.0, 302);
    let backend: i32 = pg
        .psql(
            &uri,
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'ibi-resolver registry'",
        )
        .trim()
        .parse()
        .unwrap();
    let signal = |s: rustix::process::Signal| {
        rustix::process::kill_process(rustix::process::Pid::from_raw(backend).unwrap(), s).unwrap()
    };
    signal(rustix::process::Signal::STOP);
    let load = Load::start(2, vec![(format!("{}/{}", resolver.base(), ITEMS[0]), want)]);
    load.more(50, "the registry hanging");
    // `include`, as an administrator runs it: its first request is answered 503 (the
    // registry out of reach) after 6 s, and it asks again after the Retry-After.
    let asked = Instant::now();
    let mut child = common::command(&["include", "--root", root.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (lines, said) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = lines.send((line, asked.elapsed()));
        }
    });
    let (first, took) = said.recv_timeout(common::HANG_GUARD).unwrap();
    assert!(
        first.contains("answered 503") && first.contains("asking again in 5 s (try 2 of 5)"),
        "{first}"
    );
    assert!(
        took >= Duration::from_secs(6) && took < Duration::from_secs(10),
        "{took:?}"
    );
    load.more(50, "after the refusal");
    let h = common::http_get(&format!("{}/healthz", resolver.base())).text();
    assert!(
        h.contains("the registry has not answered since"),
        "{h}\n{}",
        resolver.log()
    );
    signal(rustix::process::Signal::CONT);
    // The backend woken, one of its next tries is answered: included.
    let out = common::output_or_hang(child, "include");
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).as_ref()
        ),
        (Some(0), INCLUDED),
        "{:?}\n{}",
        said.try_iter().collect::<Vec<_>>(),
        resolver.log()
    );
    load.finish();
    eprintln!(
        "refused after {took:?}, included after {:?}",
        asked.elapsed()
    );
}

/// `/healthz` says why the registry does not answer (the driver's text, which may name
/// the database's host, port and user) only to this machine and to a trusted proxy
/// asking for itself; every other client, also one inside `[metrics] networks` and one
/// behind a proxy (trusted or not), gets the bare `ready`.
#[test]
fn healthz_tells_why_the_registry_does_not_answer_only_to_this_machine_and_its_proxies() {
    let Some(pg) = Cluster::start() else { return };
    let uri = pg.database();
    let tmp = common::archive_tempdir();
    // Metrics for every network: they do not open the reason.
    let everyone = "[metrics]\nnetworks = [\"0.0.0.0/0\", \"::/0\"]\n";
    let direct = resolver_on(&tmp.path().join("direct"), &uri, everyone);
    let behind = tmp.path().join("behind");
    std::fs::create_dir_all(&behind).unwrap();
    let (config, port) = Resolver::configure(&behind, "5s", everyone);
    on_database(&config, &uri);
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replacen(
            "[archives]",
            "trustedproxies = [\"127.0.0.1/32\"]\n[archives]",
            1,
        ),
    )
    .unwrap();
    let proxied = Resolver::run(config, port);
    let healthz = |r: &Resolver, headers: &[(&str, &str)]| {
        let got = common::resolver::get_with(&format!("{}/healthz", r.base()), headers);
        (got.status, got.text())
    };
    let registry_up =
        |r: &Resolver| common::resolver::sample(&r.metrics(), "ibi_resolver_registry_up");
    for r in [&direct, &proxied] {
        assert_eq!(
            healthz(r, &[]),
            (200, "ready: the registry answers\n".to_string())
        );
        assert_eq!(registry_up(r), Some(1));
    }
    pg.stop();
    let down =
        "ready: resolving with the 0 included Archives held; the registry has not answered since ";
    for r in [&direct, &proxied] {
        assert!(
            within(common::HANG_GUARD, || healthz(r, &[]).1.starts_with(down)).is_some(),
            "{:?}\n{}",
            healthz(r, &[]),
            r.log()
        );
        // The gauge an alert watches says the same.
        assert_eq!(registry_up(r), Some(0), "{}", r.metrics());
    }
    // This machine, and the trusted proxy asking for itself: the reason after the time.
    for r in [&direct, &proxied] {
        let (status, text) = healthz(r, &[]);
        assert_eq!(status, 200);
        let reason = text[down.len()..].split_once(": ").map(|(_, r)| r);
        assert!(
            reason.is_some_and(|r| r.starts_with("registry unreachable: ")),
            "{text}"
        );
    }
    // A reader behind the trusted proxy, and a client of a proxy this resolver does not
    // trust (X-Forwarded-For from an address no one vouches for): the bare status.
    let forwarded = [("X-Forwarded-For", "203.0.113.9")];
    for r in [&direct, &proxied] {
        assert_eq!(
            healthz(r, &forwarded),
            (200, "ready\n".to_string()),
            "{}",
            r.log()
        );
    }
}
