//! `ibi-resolver backup`: the registry copied while the server resolves and the location
//! memory is written, then restored into a new resolver that resolves the same
//! persistent URLs to the same places, its Archive included as it was at the backup.

use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::resolver::{archive, archive_cmd, configure, Resolver, KEY, SAMPLE_SERVICE};

/// Every item of the sample Archive, as a persistent URL's path names it.
const ITEMS: [&str; 14] = [
    "sid.inpe.br/mtc-m18/2012/07.12.18.08",
    "sid.inpe.br/mtc-m18/2012/07.12.18.08.49",
    "sid.inpe.br/mtc-m19/2014/05.06.07.08.09",
    "sid.inpe.br/mtc-m19/2014/05.06.07.08",
    "sid.inpe.br/mtc-m19/2013/02.10.11.12",
    "sid.inpe.br/mtc-m19/2013/09.04.12.27.58",
    "sid.inpe.br/mtc-m19/2013/09.04.12.27.57",
    "sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47",
    "sid.inpe.br/mtc-m18@80/2009/07.21.14.43",
    "sid.inpe.br/mtc-m18@80/2009/07.21.13.23",
    "sid.inpe.br/mtc-m18@80/2009/08.25.19.43",
    "sid.inpe.br/mtc-m18@80/2008/03.17.15.17",
    "iconet.com.br/banon/2009/09.09.22.01",
    "urlib.net/www/2014/03.25.23.20",
];

/// What a resolver answers for `/<ibi>`: the status and the Location.
fn answer(base: &str, ibi: &str) -> (u16, Option<String>) {
    let r = common::http_get(&format!("{base}/{ibi}"));
    (r.status, r.header("location").map(str::to_string))
}

/// Waits (at most [`common::HANG_GUARD`]) until `counter` reaches `at_least`.
fn wait_for(counter: &AtomicUsize, at_least: usize, what: &str) {
    let deadline = Instant::now() + common::HANG_GUARD;
    while counter.load(Ordering::SeqCst) < at_least {
        assert!(Instant::now() < deadline, "{what}: fewer than {at_least}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_backup_taken_under_load_restores_into_a_resolver_that_resolves_the_same() {
    let tmp = common::archive_tempdir();
    let (one, two) = (tmp.path().join("one"), tmp.path().join("two"));
    std::fs::create_dir(&one).unwrap();
    std::fs::create_dir(&two).unwrap();
    let mut resolver = Resolver::start(&one, "20s", "");
    let root = archive(tmp.path(), "alpha", SAMPLE_SERVICE, &[], &[]);
    let address = format!("127.0.0.1:{}", common::free_port());
    configure(&root, &address, &resolver.service());
    let log = std::fs::File::create(root.with_extension("log")).unwrap();
    let _serve = common::Serve::start_with(&root, log, &["--listen", &address]);
    resolver.register(SAMPLE_SERVICE, KEY);
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

    // What every persistent URL leads to; those found (302) are remembered.
    let base = resolver.base();
    let before: Vec<(u16, Option<String>)> = ITEMS.iter().map(|i| answer(&base, i)).collect();
    let found: Vec<&str> = ITEMS
        .iter()
        .zip(&before)
        .filter(|(_, (status, _))| *status == 302)
        .map(|(i, _)| *i)
        .collect();
    assert!(found.len() >= 8, "{before:?}\n{}", resolver.log());
    // One of them is forgotten and found again over and over while the backup is made:
    // the memory's row deleted by `forget` (another process's writes), then written
    // again by the server.
    let (cycled, kept) = (found[0], &found[1..]);

    let stop = Arc::new(AtomicBool::new(false));
    let resolutions = Arc::new(AtomicUsize::new(0));
    let forgotten = Arc::new(AtomicUsize::new(0));
    let mut load = Vec::new();
    for t in 0..4 {
        let (stop, resolutions, base) = (stop.clone(), resolutions.clone(), base.clone());
        let urls: Vec<(String, (u16, Option<String>))> = ITEMS
            .iter()
            .zip(&before)
            .filter(|(i, _)| kept.contains(i))
            .map(|(i, a)| (i.to_string(), a.clone()))
            .collect();
        load.push(std::thread::spawn(move || {
            let mut n = t;
            while !stop.load(Ordering::SeqCst) {
                let (ibi, want) = &urls[n % urls.len()];
                assert_eq!(&answer(&base, ibi), want, "{ibi}");
                resolutions.fetch_add(1, Ordering::SeqCst);
                n += 1;
            }
        }));
    }
    {
        let (stop, forgotten, base) = (stop.clone(), forgotten.clone(), base.clone());
        let config = resolver.config.clone();
        // From another client network, so that its misses are counted apart.
        let source: std::net::IpAddr = "127.0.1.1".parse().unwrap();
        load.push(std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                let (code, out, err) = common::run_with_stdin(
                    std::process::Command::new(common::ibi_resolver_bin()).args([
                        "forget",
                        cycled,
                        "--config",
                        config.to_str().unwrap(),
                    ]),
                    "",
                );
                assert!(code == 0 || code == 1, "{out}{err}");
                let r = common::http_get_from(source, &format!("{base}/{cycled}"));
                assert_eq!(r.status, 302, "{}", r.text());
                forgotten.fetch_add(1, Ordering::SeqCst);
            }
        }));
    }
    wait_for(&resolutions, 100, "resolutions before the backup");
    wait_for(&forgotten, 3, "forgets before the backup");

    let file = tmp.path().join("registry backup.sqlite");
    let (code, out, err) = resolver.command(&["backup", file.to_str().unwrap()], "");
    let (during, forgets) = (
        resolutions.load(Ordering::SeqCst),
        forgotten.load(Ordering::SeqCst),
    );
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    // The load went on after it, and nothing failed meanwhile.
    wait_for(&resolutions, during + 100, "resolutions after the backup");
    wait_for(&forgotten, forgets + 3, "forgets after the backup");
    stop.store(true, Ordering::SeqCst);
    for t in load {
        t.join().unwrap();
    }
    // Nothing but the backup beside it: no temporary file, no -wal or -shm.
    let names: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("backup"))
        .collect();
    assert_eq!(names, ["registry backup.sqlite"]);
    let size = std::fs::metadata(&file).unwrap().len();
    let remembered = {
        let db = rusqlite::Connection::open_with_flags(
            &file,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .unwrap();
        let check: String = db
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok");
        let n: i64 = db
            .query_row("SELECT count(*) FROM locations", [], |r| r.get(0))
            .unwrap();
        n
    };
    assert!(remembered as usize >= kept.len(), "{remembered}");
    assert_eq!(
        out,
        format!(
            "backed up {} to {}: {size} bytes, 1 Archive, {remembered} locations remembered\n",
            one.join("registry.sqlite").display(),
            file.display()
        )
    );
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );

    // A backup is never written over another file.
    let (code, out, err) = resolver.command(&["backup", file.to_str().unwrap()], "");
    assert_eq!(
        (code, out.as_str(), err),
        (
            1,
            "",
            format!(
                "ibi-resolver: {} exists: a backup is written to a new file, never over another\n",
                file.display()
            )
        )
    );
    assert_eq!(std::fs::metadata(&file).unwrap().len(), size);

    // Restored: the resolver stopped, a new one (another port, the same serviceibi and
    // publicurl) on a copy of the backup. The Archive is included in it as it was, and
    // every persistent URL leads where it led.
    assert!(resolver.stop().success());
    let config = std::fs::read_to_string(&resolver.config).unwrap();
    let port = common::free_port();
    let listen = format!("listen = \"127.0.0.1:{}\"", resolver.port);
    assert!(config.contains(&listen));
    let config = config.replace(&listen, &format!("listen = \"127.0.0.1:{port}\""));
    std::fs::write(two.join("resolver.toml"), &config).unwrap();
    std::fs::copy(&file, two.join("registry.sqlite")).unwrap();
    let restored = Resolver::run(two.join("resolver.toml"), port);
    assert_eq!(restored.included(SAMPLE_SERVICE), Some(true));
    let (code, memory, err) = restored.command(&["memory"], "");
    assert_eq!(code, 0, "{err}");
    for ibi in kept {
        let key = ibi::Ibi::parse(ibi).unwrap().key();
        assert!(memory.contains(&key), "{key} not remembered:\n{memory}");
    }
    let after: Vec<(u16, Option<String>)> =
        ITEMS.iter().map(|i| answer(&restored.base(), i)).collect();
    assert_eq!(after, before, "{}", restored.log());
    assert!(restored.log().starts_with(&format!(
        "ibi-resolver: listening on http://127.0.0.1:{port} (1 Archive included)\n"
    )));
}

/// A program of the cluster `pg` (pg_dump, dropdb, createdb, pg_restore) with `args`,
/// as the cluster's superuser on its address; it must succeed.
fn pg_tool(pg: &common::pg::Cluster, program: &str, args: &[&str]) {
    let port = pg.port().to_string();
    let out = pg
        .command(program)
        .args(["-h", "127.0.0.1", "-p", &port, "-U", common::pg::USER])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        pg.log()
    );
}

/// The README's restore of a registry in PostgreSQL: `pg_dump -Fc` while the resolver
/// serves, the resolver stopped, the database dropped and made again, `pg_restore
/// --no-owner`; a resolver started on it finds the Archive included, its key hash kept
/// (it includes itself again with its key), and resolves every persistent URL as before.
#[test]
fn a_registry_in_postgresql_dumped_and_restored_resolves_the_same() {
    let Some(pg) = common::pg::Cluster::start() else {
        return;
    };
    let tmp = common::archive_tempdir();
    let dir = tmp.path().join("resolver");
    std::fs::create_dir(&dir).unwrap();
    let name = pg.create_database();
    let uri = pg.uri(&name);
    let (config, port) = common::resolver::Resolver::configure(&dir, "20s", "");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace(
            "database = \"registry.sqlite\"",
            &format!("database = \"{uri}\""),
        ),
    )
    .unwrap();
    let mut resolver = Resolver::run(config.clone(), port);
    let root = archive(tmp.path(), "alpha", SAMPLE_SERVICE, &[], &[]);
    let address = format!("127.0.0.1:{}", common::free_port());
    configure(&root, &address, &resolver.service());
    let log = std::fs::File::create(root.with_extension("log")).unwrap();
    let _serve = common::Serve::start_with(&root, log, &["--listen", &address]);
    resolver.register(SAMPLE_SERVICE, KEY);
    let included = "status.archive included\nstatus.confirmation successful\n";
    let (code, out, err) = archive_cmd("include", &root);
    assert_eq!(
        (code, out.as_str()),
        (0, included),
        "{err}\n{}",
        resolver.log()
    );
    let base = resolver.base();
    let before: Vec<(u16, Option<String>)> = ITEMS.iter().map(|i| answer(&base, i)).collect();
    assert!(
        before.iter().filter(|(s, _)| *s == 302).count() >= 8,
        "{before:?}"
    );

    let dump = pg.dir().join("ibi_registry.dump");
    let dump = dump.to_str().unwrap();
    pg_tool(&pg, "pg_dump", &["-Fc", "-f", dump, &name]);
    resolver.stop();
    pg_tool(&pg, "dropdb", &[&name]);
    pg_tool(&pg, "createdb", &["-O", common::pg::USER, &name]);
    pg_tool(&pg, "pg_restore", &["--no-owner", "-d", &name, dump]);

    let restored = Resolver::run(config, port);
    let csv = restored.command(&["archives", "--csv"], "");
    let row =
        common::resolver::archive_row(&csv.1, SAMPLE_SERVICE).unwrap_or_else(|| panic!("{csv:?}"));
    assert_eq!(row["address"], address, "{row:?}");
    let after: Vec<(u16, Option<String>)> = ITEMS.iter().map(|i| answer(&base, i)).collect();
    assert_eq!(after, before, "{}", restored.log());
    // The key's hash came back: the Archive's own key includes it again.
    let (code, out, err) = archive_cmd("include", &root);
    assert_eq!(
        (code, out.as_str()),
        (0, included),
        "{err}\n{}",
        restored.log()
    );
}
