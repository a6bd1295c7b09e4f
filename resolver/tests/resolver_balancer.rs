//! Several resolvers behind a balancer, run for real: the balancer's configuration of
//! `resolver/deploy/` in front of two real `ibi-resolver serve` instances sharing one
//! registry, a real `ibi-archive serve` Archive registered there and included through the
//! balancer, and a load of resolutions during which instance 1 is killed (SIGKILL) and
//! after which it is started again.
//!
//! - `apache2-ibi-resolver-balancer.conf` in Debian's apache2 (mod_proxy, mod_proxy_http,
//!   mod_proxy_balancer, mod_lbmethod_byrequests, mod_slotmem_shm, mod_proxy_hcheck;
//!   mod_watchdog, which mod_proxy_hcheck needs, is built into Debian's apache2), included
//!   unchanged in a `<VirtualHost>` as its comment says — but for the addresses of the
//!   instances: 127.0.0.1:8090 and 8091 may be taken on a test machine, so the copy
//!   included names free ports of 127.0.0.1 instead (that substitution, and nothing
//!   else), as resolver_deploy.rs does for the one-instance configuration.
//! - `haproxy-ibi-resolver.cfg` in Debian's haproxy, after a global section that sends its
//!   log to its stderr (a file of the test): the same substitution of the instances'
//!   ports, and its `bind :8088` made `bind 127.0.0.1:<a free port>`.
//!
//! The instances share the registry [`Registry`] names (the `database` of each
//! resolver.toml): one SQLite file both open (WAL, several processes: two instances on
//! one machine), or a database of a throwaway PostgreSQL cluster (common::pg). What an
//! instance writes there another reads when told (PostgreSQL) or at its next re-read of
//! the registry (SQLite, every few seconds), which the test waits for, asking that
//! instance.
//!
//! What a balancer must do, and the test checks: every request of the load, from several
//! threads for [`LOAD`], gets the resolver's 302 to the Archive's file; instance 1 is
//! killed [`KILL_AFTER`] into the load; started again, it serves again through the
//! balancer. Apache's mod_proxy cannot send again a request whose instance dies before
//! answering it (its configuration says why): the requests sent to instance 1 before it
//! was gone may fail there, and the test allows Apache those (at most two per thread),
//! each 502 or a reader's connection closed without an answer; from HAProxy, none.
//!
//! Under `CI=true` a missing apache2 (or module), haproxy or PostgreSQL fails the tests.

use std::collections::BTreeMap;
use std::fs;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::resolver::{archive_cmd, configure, register_in, Resolver, KEY, RESOLVER_IBI};

const APACHE_CONF: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/deploy/apache2-ibi-resolver-balancer.conf"
);
const HAPROXY_CONF: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/deploy/haproxy-ibi-resolver.cfg"
);
/// The addresses of the two instances the configurations name (`listen` of each
/// resolver.toml).
const CONF_BACKENDS: [&str; 2] = ["127.0.0.1:8090", "127.0.0.1:8091"];
/// Where haproxy-ibi-resolver.cfg listens.
const HAPROXY_BIND: &str = "bind :8088\n";
/// The modules the Apache configuration needs (`a2enmod proxy proxy_http proxy_balancer
/// lbmethod_byrequests proxy_hcheck`, which enables slotmem_shm too; mod_watchdog is built
/// into Debian's apache2).
const BALANCER_MODULES: &[&str] = &[
    "mod_proxy.so",
    "mod_proxy_http.so",
    "mod_slotmem_shm.so",
    "mod_proxy_balancer.so",
    "mod_lbmethod_byrequests.so",
    "mod_proxy_hcheck.so",
];
const HAPROXY_BIN: &str = "/usr/sbin/haproxy";

/// The sample Archive's service.
const SERVICE: &str = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17";
/// The persistent URL resolved under load, and the file of the sample Archive it leads
/// to (below col/, as the Archive's URL spells it).
const TARGET: &str = "/8JMKD3MGP8W/35MME4E";
const FILE: &str = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23/doc/CCSDS%20643.0-B-1.pdf";
/// The reader's address: not a trusted proxy, so that the resolver's log shows it only if
/// the balancer passed it on in X-Forwarded-For.
const READER: &str = "127.0.0.2";

/// How long the load lasts, how many threads send it, and when instance 1 is killed.
const LOAD: Duration = Duration::from_secs(10);
const THREADS: usize = 4;
const KILL_AFTER: Duration = Duration::from_secs(3);
/// How long an instance may take to see what another wrote in the registry, or the
/// balancer to send requests to an instance started again (its health check every 2 s).
const SETTLE: Duration = Duration::from_secs(20);

/// The registry both instances share.
#[derive(Clone, Copy)]
enum Registry {
    /// A database of a throwaway PostgreSQL cluster.
    Postgresql,
    /// One SQLite file.
    Sqlite,
}

impl Registry {
    /// The `database` of the instances' resolver.toml, and the PostgreSQL cluster that
    /// holds it (to keep while they run); `None` (after saying why) when PostgreSQL is not
    /// installed and `CI` is not `true`.
    fn database(self, dir: &Path) -> Option<(String, Option<common::pg::Cluster>)> {
        match self {
            Registry::Postgresql => {
                let pg = common::pg::Cluster::start()?;
                Some((pg.database(), Some(pg)))
            }
            Registry::Sqlite => Some((
                dir.join("registry.sqlite").to_str().unwrap().to_string(),
                None,
            )),
        }
    }
}

fn reader() -> IpAddr {
    READER.parse().unwrap()
}

/// A resolver.toml in `dir` (made) for an instance listening on 127.0.0.1:`port`, reached
/// by readers at `publicurl`, its registry `database`.
fn instance_toml(dir: &Path, port: u16, publicurl: &str, database: &str) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    let path = dir.join("resolver.toml");
    fs::write(
        &path,
        format!(
            "serviceibi = \"{RESOLVER_IBI}\"\npublicurl = \"{publicurl}\"\nlisten = \"127.0.0.1:{port}\"\ndatabase = \"{database}\"\ntrustedproxies = [\"127.0.0.1/32\"]\n[archives]\ntimeout = \"20s\"\nnetworks = [\"127.0.0.0/8\"]\n"
        ),
    )
    .unwrap();
    path
}

/// `config` (a configuration of the repository) with each of [`CONF_BACKENDS`] replaced
/// by 127.0.0.1:<the port of `ports` in its place>.
fn with_ports(config: &str, ports: [u16; 2]) -> String {
    let mut text = config.to_string();
    for (backend, port) in CONF_BACKENDS.iter().zip(ports) {
        assert!(text.contains(backend), "{config}");
        text = text.replace(backend, &format!("127.0.0.1:{port}"));
    }
    text
}

/// A running haproxy, in the foreground, its log (stderr) in a file; stopped (SIGTERM,
/// then SIGKILL) when dropped.
struct Haproxy {
    child: Child,
    base_url: String,
    log: PathBuf,
}

impl Haproxy {
    /// haproxy-ibi-resolver.cfg for the instances at `ports`, listening on a free port of
    /// 127.0.0.1 (another one tried when it is taken meanwhile).
    fn start(dir: &Path, ports: [u16; 2]) -> Haproxy {
        let global = dir.join("haproxy-global.cfg");
        fs::write(&global, "global\n    log stderr format raw local0\n").unwrap();
        let conf = fs::read_to_string(HAPROXY_CONF).unwrap();
        assert!(conf.contains(HAPROXY_BIND), "{conf}");
        for _attempt in 0..5 {
            let port = common::free_port();
            let copy = dir.join("haproxy-ibi-resolver.cfg");
            fs::write(
                &copy,
                with_ports(&conf, ports).replace(HAPROXY_BIND, &format!("bind 127.0.0.1:{port}\n")),
            )
            .unwrap();
            let log = dir.join("haproxy.log");
            let mut child = Command::new(HAPROXY_BIN)
                .args(["-db", "-f"])
                .arg(&global)
                .arg("-f")
                .arg(&copy)
                .stdin(Stdio::null())
                .stdout(fs::File::create(&log).unwrap())
                .stderr(fs::File::options().append(true).open(&log).unwrap())
                .spawn()
                .unwrap();
            match common::wait_for_port(port, Some(&mut child)) {
                Ok(()) => {
                    return Haproxy {
                        child,
                        base_url: format!("http://127.0.0.1:{port}"),
                        log,
                    }
                }
                Err(why) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    let said = fs::read_to_string(&log).unwrap_or_default();
                    assert!(said.contains("cannot bind"), "haproxy: {why}\n{said}");
                }
            }
        }
        panic!("haproxy could not bind a free port in 5 attempts");
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let pid = i32::try_from(self.child.id()).unwrap();
        // SAFETY: kill(2) on the pid of a child this process has not yet waited for.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let deadline = Instant::now() + common::SHUTDOWN_TIMEOUT;
        while let Ok(None) = self.child.try_wait() {
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.wait();
    }
}

/// The balancer under test.
enum Balancer {
    Apache(common::Server),
    Haproxy(Haproxy),
}

impl Balancer {
    fn base_url(&self) -> &str {
        match self {
            Balancer::Apache(s) => &s.base_url,
            Balancer::Haproxy(h) => &h.base_url,
        }
    }

    /// The requests it sent again to another instance, as far as its log tells: HAProxy
    /// logs each request's timers (`Tq/Tw/Tc/Tr/Tt`), then its connection counts, their
    /// last the request's retries (`1/1/0/0/+1`, `+` when redispatched); Apache sends none
    /// again.
    fn retried(&self) -> usize {
        let Balancer::Haproxy(h) = self else {
            return 0;
        };
        fs::read_to_string(&h.log)
            .unwrap_or_default()
            .lines()
            .filter(|l| {
                let mut fives = l
                    .split(' ')
                    .map(|field| field.split('/').collect::<Vec<_>>())
                    .filter(|parts| parts.len() == 5);
                let counts = fives.nth(1).unwrap_or_default();
                counts
                    .last()
                    .and_then(|r| r.trim_start_matches('+').parse::<u64>().ok())
                    .is_some_and(|n| n > 0)
            })
            .count()
    }

    /// What it logged: Apache's error log, HAProxy's log.
    fn log(&self) -> String {
        match self {
            Balancer::Apache(s) => s.error_log(),
            Balancer::Haproxy(h) => fs::read_to_string(&h.log).unwrap_or_default(),
        }
    }
}

/// The two instances behind the balancer, the Archive included through it.
struct Cluster {
    balancer: Balancer,
    instances: [Option<Resolver>; 2],
    configs: [PathBuf; 2],
    ports: [u16; 2],
    /// The URL of the file [`TARGET`] leads to.
    location: String,
    _serve: common::Serve,
    _pg: Option<common::pg::Cluster>,
    _tmp: tempfile::TempDir,
}

impl Cluster {
    /// The balancer `start` makes for the instances' ports in front of two instances
    /// sharing `registry`; the sample Archive, served by `ibi-archive serve`, registered
    /// and included through the balancer, resolved by both instances. `None` as
    /// [`Registry::database`].
    fn start(
        registry: Registry,
        start: impl FnOnce(&Path, [u16; 2]) -> Balancer,
    ) -> Option<Cluster> {
        let tmp = common::archive_tempdir();
        let (database, pg) = registry.database(tmp.path())?;
        let ports = [common::free_port(), common::free_port()];
        assert_ne!(ports[0], ports[1]);
        let balancer = start(tmp.path(), ports);
        let configs = [0, 1].map(|i| {
            instance_toml(
                &tmp.path().join(format!("instance{}", i + 1)),
                ports[i],
                balancer.base_url(),
                &database,
            )
        });
        let root = common::resolver::archive(tmp.path(), "archive", SERVICE, &[], &[]);
        // Both instances ask it from 127.0.0.1, under load more at once than the 16
        // connections serve allows one client by default.
        let serve = common::Serve::start_with(
            &root,
            fs::File::create(tmp.path().join("archive.log")).unwrap(),
            &["--max-per-client", "256"],
        );
        configure(
            &root,
            &serve.address,
            &format!("{}/{RESOLVER_IBI}", balancer.base_url()),
        );
        register_in(&configs[0], SERVICE, KEY);
        let instances = [0, 1].map(|i| Some(Resolver::run(configs[i].clone(), ports[i])));
        let cluster = Cluster {
            balancer,
            instances,
            configs,
            ports,
            location: format!("{}/col/{FILE}", serve.base_url()),
            _serve: serve,
            _pg: pg,
            _tmp: tmp,
        };
        // Once the balancer has found an instance up (its checks find them down until
        // they listen, and take a check or two to find them up again)...
        let deadline = std::time::Instant::now() + common::HANG_GUARD;
        while common::http_get(&format!("{}/healthz", cluster.balancer.base_url())).status != 200 {
            assert!(
                std::time::Instant::now() < deadline,
                "the balancer never found an instance up\n{}",
                cluster.logs()
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        // ... included through it: by one instance or the other.
        let (code, out, err) = archive_cmd("include", &root);
        assert_eq!(
            (code, out.as_str()),
            (
                0,
                "status.archive included\nstatus.confirmation successful\n"
            ),
            "{err}\n{}",
            cluster.logs()
        );
        // Each instance resolves it once it has read the inclusion in the registry.
        for i in 0..2 {
            cluster.wait_until_resolves(i);
        }
        Some(cluster)
    }

    fn instance(&self, i: usize) -> &Resolver {
        self.instances[i].as_ref().expect("instance running")
    }

    /// The balancer's log and the instances'.
    fn logs(&self) -> String {
        let mut all = format!("--- balancer ---\n{}", self.balancer.log());
        for (i, r) in self.instances.iter().enumerate() {
            if let Some(r) = r {
                all.push_str(&format!("--- instance {} ---\n{}", i + 1, r.log()));
            }
        }
        all
    }

    /// [`TARGET`] asked of the balancer by [`READER`].
    fn through_balancer(&self) -> Result<common::Response, String> {
        resolve(self.balancer.base_url())
    }

    /// Waits, at most [`SETTLE`], until instance `i`, asked directly, resolves [`TARGET`].
    fn wait_until_resolves(&self, i: usize) {
        let deadline = Instant::now() + SETTLE;
        loop {
            let r = resolve(&self.instance(i).base()).unwrap();
            if r.status == 302 {
                assert_eq!(r.header("location"), Some(self.location.as_str()));
                return;
            }
            assert!(
                Instant::now() < deadline,
                "instance {} still answers {} after {SETTLE:?}: {}\n{}",
                i + 1,
                r.status,
                r.text(),
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The lines instance `i` logged for [`TARGET`] asked by [`READER`] through the
    /// balancer (`ibi-resolver: 127.0.0.2 "GET /8JMKD3MGP8W/35MME4E" 302 …`).
    fn resolutions(&self, i: usize) -> usize {
        let want = format!("ibi-resolver: {READER} \"GET {TARGET}\" 302 ");
        self.instance(i)
            .log()
            .lines()
            .filter(|l| l.starts_with(&want))
            .count()
    }
}

/// [`TARGET`] asked of the server at `base` from [`READER`], on a connection of its own.
fn resolve(base: &str) -> Result<common::Response, String> {
    let authority = base.strip_prefix("http://").unwrap();
    let request =
        format!("GET {TARGET} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
    common::try_http_raw_from(Some(reader()), authority, request.as_bytes(), false)
}

/// What a load counted: every outcome (`302` for the expected answer, else the status and
/// what came with it, or the error) with its count, and when each request ended
/// relative to the start.
#[derive(Default)]
struct Counts {
    outcomes: BTreeMap<String, u64>,
    /// (when the request ended, whether it got the expected answer)
    ends: Vec<(Duration, bool)>,
    /// When instance 1 was killed.
    killed_at: Duration,
}

impl Counts {
    fn requests(&self) -> u64 {
        self.outcomes.values().sum()
    }

    fn failures(&self) -> u64 {
        self.requests() - self.outcomes.get("302").copied().unwrap_or(0)
    }

    fn failures_listed(&self) -> String {
        self.outcomes
            .iter()
            .filter(|(k, _)| k.as_str() != "302")
            .map(|(k, n)| format!("  {n} × {k}\n"))
            .collect()
    }
}

/// Sends [`TARGET`] to the balancer from [`THREADS`] threads for [`LOAD`], each request on
/// a connection of its own, and kills instance 1 (SIGKILL) [`KILL_AFTER`] into it; returns
/// what was counted, and how many of the load's requests instance 1 had logged by the kill.
fn load_with_kill(cluster: &mut Cluster) -> (Counts, usize) {
    let counts = Arc::new(Mutex::new(Counts::default()));
    let start = Instant::now();
    let base = cluster.balancer.base_url().to_string();
    let location = cluster.location.clone();
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let (counts, base, location) = (counts.clone(), base.clone(), location.clone());
            std::thread::spawn(move || {
                while start.elapsed() < LOAD {
                    let outcome = match resolve(&base) {
                        Ok(r) if r.status == 302 && r.header("location") == Some(&location) => {
                            "302".to_string()
                        }
                        Ok(r) => format!(
                            "{} (Location: {:?}) {:?}",
                            r.status,
                            r.header("location"),
                            r.text().chars().take(200).collect::<String>()
                        ),
                        Err(e) => format!("error: {}", e.lines().next().unwrap_or("")),
                    };
                    let mut c = counts.lock().unwrap();
                    c.ends.push((start.elapsed(), outcome == "302"));
                    *c.outcomes.entry(outcome).or_default() += 1;
                }
            })
        })
        .collect();
    // The load is paced by its own threads; the kill comes at its time.
    std::thread::sleep(KILL_AFTER.saturating_sub(start.elapsed()));
    let killed_at = start.elapsed();
    let served_by_1 = cluster.resolutions(0);
    // Dropping a Resolver kills it with SIGKILL (Child::kill) and reaps it.
    let killed = cluster.instances[0].take();
    drop(killed);
    for t in threads {
        t.join().unwrap();
    }
    let mut counts = Arc::try_unwrap(counts).ok().unwrap().into_inner().unwrap();
    counts.killed_at = killed_at;
    (counts, served_by_1)
}

/// The load with instance 1 killed, then instance 1 started again; returns the counts.
fn kill_during_load_then_restart(mut cluster: Cluster, name: &str) -> Counts {
    let before = [cluster.resolutions(0), cluster.resolutions(1)];
    let (counts, served_by_1) = load_with_kill(&mut cluster);
    let killed_at = counts.killed_at;
    let after_kill: Vec<_> = counts
        .ends
        .iter()
        .filter(|(t, _)| *t >= killed_at)
        .collect();
    let failed_after_kill = after_kill.iter().filter(|(_, ok)| !ok).count();
    eprintln!(
        "{name}: {} requests in {LOAD:?} from {THREADS} threads ({:.0}/s), {} failed; instance 1 killed at {killed_at:?}, {} requests after it, {failed_after_kill} failed\n{}",
        counts.requests(),
        counts.requests() as f64 / LOAD.as_secs_f64(),
        counts.failures(),
        after_kill.len(),
        counts.failures_listed()
    );
    // Both instances took their share: instance 1 before the kill, instance 2 all along.
    let served = [served_by_1 - before[0], cluster.resolutions(1) - before[1]];
    eprintln!(
        "{name}: instance 1 answered {}, instance 2 {}; {} sent again to another instance",
        served[0],
        served[1],
        cluster.balancer.retried()
    );
    assert!(
        served[0] > 0 && served[1] > 0,
        "{served:?}\n{}",
        cluster.logs()
    );
    assert!(after_kill.len() > THREADS, "{}", cluster.logs());

    // Started again, instance 1 answers at its port, then gets requests through the
    // balancer again (after its health check), each of them answered.
    let restarted = Resolver::run(cluster.configs[0].clone(), cluster.ports[0]);
    cluster.instances[0] = Some(restarted);
    cluster.wait_until_resolves(0);
    let mark = cluster.resolutions(0);
    let deadline = Instant::now() + SETTLE;
    while cluster.resolutions(0) == mark {
        let r = cluster.through_balancer().unwrap();
        assert_eq!(
            (r.status, r.header("location")),
            (302, Some(cluster.location.as_str())),
            "{}\n{}",
            r.text(),
            cluster.logs()
        );
        assert!(
            Instant::now() < deadline,
            "instance 1 got no request through the balancer within {SETTLE:?} of its restart\n{}",
            cluster.logs()
        );
    }
    counts
}

/// Apache in front of instances sharing `registry`, or `None` (after saying why) when
/// apache2 or the modules (or PostgreSQL) are not installed and `CI` is not `true`.
fn apache(registry: Registry) -> Option<Cluster> {
    if !common::apache2_available_with(BALANCER_MODULES) {
        eprintln!(
            "skipping: apache2 with mod_proxy_balancer and mod_proxy_hcheck is not installed"
        );
        return None;
    }
    Cluster::start(registry, |dir, ports| {
        let conf = fs::read_to_string(APACHE_CONF).unwrap();
        for backend in CONF_BACKENDS {
            assert!(conf.contains(&format!("\"http://{backend}\"")), "{conf}");
        }
        let copy = dir.join("apache2-ibi-resolver-balancer.conf");
        fs::write(&copy, with_ports(&conf, ports)).unwrap();
        Balancer::Apache(common::start_apache2_vhost(&copy, BALANCER_MODULES))
    })
}

/// HAProxy in front of instances sharing `registry`, or `None` (after saying why) when
/// haproxy (or PostgreSQL) is not installed and `CI` is not `true`.
fn haproxy(registry: Registry) -> Option<Cluster> {
    if !common::required_under_ci(Path::new(HAPROXY_BIN).is_file(), "haproxy") {
        eprintln!("skipping: haproxy is not installed");
        return None;
    }
    Cluster::start(registry, |dir, ports| {
        Balancer::Haproxy(Haproxy::start(dir, ports))
    })
}

/// HAProxy in front of instances sharing `registry`: no request fails.
fn haproxy_loses_no_request(registry: Registry, name: &str) {
    let Some(cluster) = haproxy(registry) else {
        return;
    };
    let counts = kill_during_load_then_restart(cluster, name);
    assert_eq!(
        counts.failures(),
        0,
        "of {} requests:\n{}",
        counts.requests(),
        counts.failures_listed()
    );
}

#[test]
fn haproxy_on_postgresql_loses_no_request_when_an_instance_is_killed_and_takes_it_back() {
    haproxy_loses_no_request(Registry::Postgresql, "haproxy, PostgreSQL");
}

#[test]
fn haproxy_on_sqlite_loses_no_request_when_an_instance_is_killed_and_takes_it_back() {
    haproxy_loses_no_request(Registry::Sqlite, "haproxy, SQLite");
}

#[test]
fn apache_on_postgresql_fails_over_when_an_instance_is_killed_and_takes_it_back() {
    let Some(cluster) = apache(Registry::Postgresql) else {
        return;
    };
    let counts = kill_during_load_then_restart(cluster, "apache2, PostgreSQL");
    // Only what was sent to instance 1 before it was gone may fail (ended after the
    // kill): per thread, the request under way in it, and at most one more, on a
    // connection its dying listener had accepted; and only as mod_proxy_http fails them:
    // 502, or the connection closed without an answer. A request that finds instance 1's
    // port closed goes to instance 2.
    let failures = counts.failures();
    assert!(
        failures <= 2 * THREADS as u64
            && counts
                .ends
                .iter()
                .all(|(end, ok)| *ok || *end >= counts.killed_at)
            && counts.outcomes.keys().all(|k| k == "302"
                || k.starts_with("502 ")
                || k.starts_with("error: bad HTTP response")),
        "of {} requests:\n{}",
        counts.requests(),
        counts.failures_listed()
    );
}

/// The port of `addr` (HOST:PORT, or :PORT).
fn port_of(addr: &str) -> u16 {
    addr.rsplit(':').next().unwrap().parse().unwrap()
}

/// The examples agree on which port is whose, on the README's one machine: Apache's 80
/// (the Archive), `ibi-archive serve`'s 8080, the instances' 8090 and 8091 (the first is
/// the package's `listen`), and HAProxy's readers on a port none of them takes. The
/// README names HAProxy's port with its configuration.
#[test]
fn the_balancers_examples_take_no_port_of_the_walkthrough() {
    let conf = fs::read_to_string(HAPROXY_CONF).unwrap();
    let binds: Vec<&str> = conf
        .lines()
        .filter_map(|l| l.trim().strip_prefix("bind "))
        .collect();
    assert_eq!(binds, [HAPROXY_BIND.trim().strip_prefix("bind ").unwrap()]);
    let haproxy = port_of(binds[0]);
    let servers: Vec<&str> = conf
        .lines()
        .filter_map(|l| l.trim().strip_prefix("server "))
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(servers, CONF_BACKENDS);
    let package =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../debian/resolver.toml"))
            .unwrap();
    assert!(
        package.contains(&format!("\nlisten = \"{}\"\n", CONF_BACKENDS[0])),
        "{package}"
    );
    let taken: Vec<u16> = [80, 8080]
        .into_iter()
        .chain(CONF_BACKENDS.iter().map(|b| port_of(b)))
        .collect();
    assert!(
        !taken.contains(&haproxy),
        "HAProxy binds {haproxy}, one of {taken:?}"
    );
    let readme =
        fs::read_to_string(common::repository().join("docs/src/resolver-guide.md")).unwrap();
    let said = &readme[readme.find("- **HAProxy** (").unwrap()..];
    let said = &said[..said.find("\n\n").unwrap()];
    assert!(said.contains(&format!("port {haproxy}")), "{said}");
}
