//! Throwaway PostgreSQL clusters for the registry's tests: Debian's `postgresql` (the
//! newest version under /usr/lib/postgresql/), one server per [`Cluster`] in its own
//! temporary directory, on a free port of 127.0.0.1, stopped and deleted when dropped.
//!
//! - The server listens on 127.0.0.1 only, and on a unix socket in the cluster's directory
//!   (no system-wide directory is touched). Authentication is `trust`, on loopback and
//!   that socket only: any local user may connect as any role, which is what a throwaway
//!   cluster wants and nothing else should.
//! - The superuser is [`USER`]; a database's URI is
//!   `postgresql://postgres@127.0.0.1:PORT/NAME` ([`Cluster::database`]), several hosts'
//!   [`multi_host_uri`].
//! - As root, every PostgreSQL program (initdb, the server, pg_basebackup, psql, pg_ctl)
//!   runs as `nobody` (initdb refuses root), its home the cluster's directory, which is
//!   `nobody`'s; otherwise as the current user.
//! - For speed: `fsync = off`, 16 MB of shared buffers, 100 connections; a crash of the
//!   server ([`Cluster::kill`]) loses no commit, only one of the machine would.
//! - initdb runs once per test process into a template, which each cluster copies
//!   (`cp -a`), in /dev/shm when there is room ([`SHM_ROOM`]): a cluster starts in some
//!   0.15 s where initdb alone takes 1 to 3 s, and copying on a busy disk up to 1.5 s.
//! - The postmaster is a child of the test process, started and stopped by signals as
//!   `pg_ctl` does it, so that it is reaped as soon as it ends: a killed server left a
//!   zombie for seconds where no init reaps orphans at once, and `postmaster.pid` naming
//!   it stopped the restart.
//! - A [`Cluster::start_primary`] takes streaming standbys ([`Cluster::standby`]); from
//!   its first standby on, it acknowledges a commit only once a standby has flushed it
//!   (`synchronous_standby_names = '*'`, `synchronous_commit = on`): a commit
//!   acknowledged survives the primary's loss, the standby promoted. Flushed is not yet
//!   replayed: a read on the standby waits for it ([`Cluster::wait_for`]).
//! - Each cluster (and the template) has a watchdog, a shell waiting for the end of a pipe
//!   from the test process: when the test process ends, however it ends (a panic, a
//!   signal, `kill -9`), the server is stopped and the directory deleted. Dropping a
//!   [`Cluster`] stops the server and ends its watchdog the same way, and waits for it.
//!
//! ```ignore
//! let Some(pg) = common::pg::Cluster::start() else { return }; // skipped, said on stderr
//! let uri = pg.database(); // postgresql://postgres@127.0.0.1:PORT/ibi_test_N
//! pg.psql(&uri, "CREATE TABLE t (v text); INSERT INTO t VALUES ('one')");
//! assert_eq!(pg.psql(&uri, "SELECT v FROM t"), "one\n");
//! ```

use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::commands::output_or_hang;
use super::fsutil::{running_as_root, user_ids};
use super::server::{all_processes, free_port, required_under_ci};

/// The superuser of every cluster, the user of every URI.
pub const USER: &str = "postgres";

/// How long a wait for the server (its start, its stop, a standby streaming, a query's
/// answer in [`Cluster::wait_for`]) may take before the test fails, its log shown.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// Where Debian installs PostgreSQL: one directory a major version.
const POSTGRESQL_LIB: &str = "/usr/lib/postgresql";

/// How many free ports a cluster tries before it gives up.
const PORT_ATTEMPTS: usize = 5;

/// What every cluster's postgresql.conf ends with (after initdb's own settings).
const SETTINGS: &str = "
# A throwaway cluster of the tests (tests/common/pg.rs).
listen_addresses = '127.0.0.1'
max_connections = 100
shared_buffers = 16MB
fsync = off
synchronous_commit = on
timezone = 'UTC'
log_timezone = 'UTC'
lc_messages = 'C'
# Its port, unix socket directory, name and replication settings.
include 'cluster.conf'
";

/// Trust on loopback and the cluster's own socket, for connections and replication.
const HBA: &str = "\
# TYPE  DATABASE     USER  ADDRESS       METHOD
local   all          all                 trust
host    all          all   127.0.0.1/32  trust
local   replication  all                 trust
host    replication  all   127.0.0.1/32  trust
";

/// The PostgreSQL found, and who runs it.
struct Installation {
    /// /usr/lib/postgresql/VERSION/bin of the newest version.
    bin: PathBuf,
    /// (uid, gid) of `nobody` when the tests run as root, else None (the current user).
    ids: Option<(u32, u32)>,
}

impl Installation {
    /// `program` (a PostgreSQL program of [`Self::bin`], or a system one such as `sh`)
    /// with a clean environment (no PG* variable of the test's), `home` its HOME, run as
    /// the cluster's user.
    fn command(&self, program: impl AsRef<OsStr>, home: &Path) -> Command {
        let program = program.as_ref();
        let in_bin = self.bin.join(program);
        let mut cmd = Command::new(if in_bin.is_file() {
            in_bin.into_os_string()
        } else {
            program.to_os_string()
        });
        cmd.env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", self.bin.display()))
            .env("HOME", home)
            .env("LC_ALL", "C")
            .env("PGCONNECT_TIMEOUT", "10")
            .current_dir("/")
            .stdin(Stdio::null());
        if let Some((uid, gid)) = self.ids {
            cmd.uid(uid).gid(gid);
        }
        cmd
    }

    /// Runs `cmd` to its end ([`output_or_hang`]), its output captured.
    fn run(&self, mut cmd: Command, what: &str) -> Output {
        let child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
        output_or_hang(child, what)
    }

    /// Writes (or, `append`, appends) `content` to `path` as the cluster's user, so that
    /// root writes nothing in a directory that user owns.
    fn write(&self, home: &Path, path: &Path, content: &str, append: bool) {
        let script = if append {
            r#"cat >>"$1""#
        } else {
            r#"cat >"$1""#
        };
        let mut cmd = self.command("sh", home);
        cmd.arg("-c").arg(script).arg("sh").arg(path);
        let out = self.run_with_stdin(cmd, content, &format!("writing {}", path.display()));
        assert!(
            out.status.success(),
            "writing {}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Runs `cmd` with `input` on its stdin.
    fn run_with_stdin(&self, mut cmd: Command, input: &str, what: &str) -> Output {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
        let mut stdin = child.stdin.take().unwrap();
        let input = input.as_bytes().to_vec();
        // Written aside, so that a program answering before it has read it all cannot block.
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
        let out = output_or_hang(child, what);
        let _ = writer.join();
        out
    }

    /// A temporary directory for a cluster (or the template), the cluster's user's alone.
    fn tempdir(&self, prefix: &str) -> tempfile::TempDir {
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir_in(parent_dir())
            .expect("cannot create a temporary directory");
        if let Some((uid, gid)) = self.ids {
            std::os::unix::fs::lchown(dir.path(), Some(uid), Some(gid))
                .unwrap_or_else(|e| panic!("chown {}: {e}", dir.path().display()));
        }
        dir
    }

    /// The watchdog of `dir`: a shell, the cluster's user, that waits for the end of its
    /// stdin (this process's end of the pipe closes when the [`Child`] is dropped, or when
    /// this process ends, whatever way), then runs `then` (a shell command, `"$1"`...
    /// being `args`). Signals from the terminal do not end it first.
    fn watchdog(&self, dir: &Path, then: &str, args: &[&OsStr]) -> Child {
        let mut cmd = self.command("sh", dir);
        cmd.arg("-c")
            .arg(format!("trap '' INT TERM HUP QUIT; read -r line; {then}"))
            .arg("sh")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd.spawn()
            .unwrap_or_else(|e| panic!("cannot start the watchdog of {}: {e}", dir.display()))
    }
}

/// Where clusters are made: /dev/shm when it is a directory anyone may make files in
/// (mode 1777) with [`SHM_ROOM`] free, unless `TMPDIR` is set; else the temporary
/// directory. In memory, copying the template and deleting a cluster take some 0.05 s
/// each, where on a busy disk they took up to 1.5 s.
fn parent_dir() -> &'static Path {
    static PARENT: OnceLock<PathBuf> = OnceLock::new();
    PARENT.get_or_init(|| {
        use std::os::unix::fs::PermissionsExt;
        let shm = Path::new("/dev/shm");
        let usable = std::env::var_os("TMPDIR").is_none()
            && fs::metadata(shm)
                .is_ok_and(|m| m.is_dir() && m.permissions().mode() & 0o1777 == 0o1777)
            && rustix::fs::statvfs(shm)
                .is_ok_and(|v| v.f_bavail.saturating_mul(v.f_frsize) >= SHM_ROOM);
        if usable {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        }
    })
}

/// The room /dev/shm must have free for the clusters to be made there: some 40 MB
/// each at first.
pub const SHM_ROOM: u64 = 2 << 30;

/// The newest PostgreSQL installed, if any (and, as root, the user `nobody`).
fn installation() -> Option<&'static Installation> {
    static FOUND: OnceLock<Option<Installation>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let newest = fs::read_dir(POSTGRESQL_LIB)
                .ok()?
                .flatten()
                .filter_map(|e| {
                    let version: u32 = e.file_name().to_str()?.parse().ok()?;
                    let bin = e.path().join("bin");
                    bin.join("initdb").is_file().then_some((version, bin))
                })
                .max_by_key(|(version, _)| *version)?;
            let ids = if running_as_root() {
                Some(user_ids("nobody")?)
            } else {
                None
            };
            Some(Installation { bin: newest.1, ids })
        })
        .as_ref()
}

/// True if PostgreSQL is installed (initdb in /usr/lib/postgresql/*/bin/, and when the
/// tests run as root, the user `nobody`); under `CI=true` a missing one panics
/// ([`required_under_ci`]).
pub fn available() -> bool {
    required_under_ci(
        installation().is_some(),
        "PostgreSQL (initdb in /usr/lib/postgresql/*/bin/, package postgresql)",
    )
}

/// The data directory initdb made once for this process, which every cluster copies.
struct Template {
    data: PathBuf,
    /// Deletes the template when this process ends (never dropped before).
    _watchdog: Child,
}

/// The template, made on first use; Err says why initdb failed.
fn template(inst: &'static Installation) -> &'static Result<Template, String> {
    static TEMPLATE: OnceLock<Result<Template, String>> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let dir = inst.tempdir("ibi-pg-template-").keep();
        let mut watchdog = inst.watchdog(&dir, r#"rm -rf -- "$1""#, &[dir.as_os_str()]);
        let data = dir.join("data");
        let mut initdb = inst.command("initdb", &dir);
        initdb.arg("-D").arg(&data).args([
            "-U",
            USER,
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C",
            "-N",
        ]);
        let out = inst.run(initdb, "initdb");
        if !out.status.success() {
            // The template deleted now.
            drop(watchdog.stdin.take());
            let _ = watchdog.wait();
            return Err(format!(
                "initdb failed ({}):\n{}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        inst.write(&dir, &data.join("postgresql.conf"), SETTINGS, true);
        inst.write(&dir, &data.join("pg_hba.conf"), HBA, false);
        Ok(Template {
            data,
            _watchdog: watchdog,
        })
    })
}

/// What [`Cluster::try_psql`] got from psql.
#[derive(Debug)]
pub struct PsqlOutput {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// One PostgreSQL server in a temporary directory (its data in `data/`, its log
/// `postgresql.log`, its unix socket), running from [`Cluster::start`],
/// [`Cluster::start_primary`] or [`Cluster::standby`] on until dropped. Dropping it stops
/// the server (as `pg_ctl stop -m immediate` does) and deletes the directory.
pub struct Cluster {
    inst: &'static Installation,
    /// Deletes what the watchdog left, if anything.
    _dir: tempfile::TempDir,
    /// The directory's canonical path (the server's working directory is `data/` in it).
    base: PathBuf,
    port: u16,
    /// Its `cluster_name`, and a standby's `application_name` on its primary.
    name: String,
    /// wal_level = replica and WAL senders: it may have standbys.
    replication: bool,
    standbys: AtomicU32,
    /// The postmaster while it runs, a child of this process.
    postmaster: Mutex<Option<Child>>,
    watchdog: Option<Child>,
}

/// Unique names of databases in this process, whatever cluster (a promoted standby
/// holds its primary's).
static DATABASES: AtomicU32 = AtomicU32::new(0);

impl Cluster {
    /// A cluster, started (initdb'd from the template). None when PostgreSQL is not
    /// installed (a note on stderr), unless `CI=true`: then a missing PostgreSQL panics.
    pub fn start() -> Option<Cluster> {
        Self::start_as(false)
    }

    /// A cluster that takes streaming standbys ([`Cluster::standby`]): `wal_level =
    /// replica`, WAL senders and slots, a replication line in pg_hba.conf (trust on
    /// loopback for the superuser). Once it has a standby it is synchronous
    /// (`synchronous_standby_names = '*'`, `synchronous_commit = on`): a commit returns
    /// once a standby has flushed it, and waits while no standby is connected. None as
    /// [`Cluster::start`].
    pub fn start_primary() -> Option<Cluster> {
        Self::start_as(true)
    }

    fn start_as(replication: bool) -> Option<Cluster> {
        if !available() {
            eprintln!("skipping: PostgreSQL is not installed (no {POSTGRESQL_LIB}/*/bin/initdb)");
            return None;
        }
        let inst = installation().expect("available");
        let template = template(inst)
            .as_ref()
            .unwrap_or_else(|e| panic!("the template cluster: {e}"));
        let mut cluster = Cluster::new(inst, replication);
        let mut cp = inst.command("cp", &cluster.base);
        cp.arg("-a").arg(&template.data).arg(cluster.data());
        let out = inst.run(cp, "cp -a (the template)");
        assert!(
            out.status.success(),
            "copying the template cluster: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        cluster.start_on_a_free_port();
        Some(cluster)
    }

    /// A directory and its watchdog; nothing in `data/` yet.
    fn new(inst: &'static Installation, replication: bool) -> Cluster {
        let dir = inst.tempdir("ibi-pg-");
        let base = fs::canonicalize(dir.path()).expect("the cluster's directory");
        assert!(
            !base.to_string_lossy().contains(['\'', '\\']),
            "{}: a directory that postgresql.conf cannot quote as it is",
            base.display()
        );
        let name = base
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_lowercase()
            .replace('-', "_");
        let pg_ctl = inst.bin.join("pg_ctl");
        let data = base.join("data");
        let watchdog = inst.watchdog(
            &base,
            r#""$1" stop -D "$2" -m immediate -w -t 30 >/dev/null 2>&1; rm -rf -- "$3""#,
            &[pg_ctl.as_os_str(), data.as_os_str(), base.as_os_str()],
        );
        Cluster {
            inst,
            _dir: dir,
            base,
            port: 0,
            name,
            replication,
            standbys: AtomicU32::new(0),
            postmaster: Mutex::new(None),
            watchdog: Some(watchdog),
        }
    }

    /// A streaming standby of this primary (`pg_basebackup -R` through a replication slot,
    /// its own directory and port), started, streaming, and the synchronous one (or a
    /// potential one, when the primary has one already). Panics when this cluster was not
    /// started by [`Cluster::start_primary`] (or as a standby).
    pub fn standby(&self) -> Cluster {
        assert!(
            self.replication,
            "standby(): this cluster takes no standby (start it with Cluster::start_primary)"
        );
        let n = self.standbys.fetch_add(1, Ordering::SeqCst) + 1;
        let mut standby = Cluster::new(self.inst, true);
        let mut backup = self.command("pg_basebackup");
        backup
            .arg("-D")
            .arg(standby.data())
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", USER])
            .args(["-R", "-X", "stream", "-c", "fast", "-N", "-C", "-S"])
            .arg(format!("standby_{n}"));
        let out = self.inst.run(backup, "pg_basebackup");
        if !out.status.success() {
            self.fail("pg_basebackup", &out);
        }
        standby.start_on_a_free_port();
        let state = |sql: &str| {
            format!(
                "SELECT {sql} FROM pg_stat_replication WHERE application_name = '{}'",
                standby.name
            )
        };
        self.wait_for_both(&standby, "postgres", &state("state"), "streaming\n");
        self.configure(self.port, true);
        self.reload();
        self.wait_for_both(
            &standby,
            "postgres",
            &state("sync_state IN ('sync', 'potential')"),
            "t\n",
        );
        standby
    }

    /// [`Cluster::wait_for`] on this cluster, the standby's log too in the message.
    fn wait_for_both(&self, standby: &Cluster, db: &str, sql: &str, expected: &str) {
        if let Err(last) = self.poll(db, sql, expected) {
            panic!(
                "the standby on port {} is not there within {DEADLINE:?}: {sql} gave {last:?}, \
                 not {expected:?}\n--- primary's log:\n{}\n--- standby's log:\n{}",
                standby.port,
                self.log(),
                standby.log()
            );
        }
    }

    /// Writes cluster.conf: the port, the socket directory, the name, replication.
    fn configure(&self, port: u16, synchronous: bool) {
        let mut conf = format!(
            "port = {port}\nunix_socket_directories = '{}'\ncluster_name = '{}'\n",
            self.base.display(),
            self.name
        );
        conf += if self.replication {
            "wal_level = replica\nmax_wal_senders = 10\nmax_replication_slots = 10\n"
        } else {
            "wal_level = minimal\nmax_wal_senders = 0\n"
        };
        if synchronous {
            conf += "synchronous_standby_names = '*'\n";
        }
        self.inst
            .write(&self.base, &self.data().join("cluster.conf"), &conf, false);
    }

    /// Starts the server on a free port, another one if that was taken meanwhile.
    fn start_on_a_free_port(&mut self) {
        for attempt in 1..=PORT_ATTEMPTS {
            self.port = free_port();
            self.configure(self.port, false);
            let before = self.log().len();
            let Err(why) = self.spawn_postmaster() else {
                return;
            };
            let log = self.log();
            if attempt == PORT_ATTEMPTS || !log[before.min(log.len())..].contains("could not bind")
            {
                self.fail_with(&format!("the server did not start: {why}"));
            }
        }
    }

    /// Starts the postmaster, a child of this process (so that it is reaped as soon as it
    /// ends: a zombie would still hold `postmaster.pid`, and a restart would take it for a
    /// server running), its output appended to the log; returns once it accepts
    /// connections (`postmaster.pid` says "ready", or "standby" for a hot standby, as
    /// `pg_ctl -w` waits). Err says why not, when it ended first or took [`DEADLINE`].
    fn spawn_postmaster(&self) -> Result<(), String> {
        let mut slot = self.postmaster.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(mut old) = slot.take() {
            // Reaped, whatever ended it (it is not running: the caller stopped it).
            let _ = old.kill();
            let _ = old.wait();
        }
        let mut cmd = self.command("sh");
        cmd.arg("-c")
            .arg(r#"exec "$0" -D "$1" >>"$2" 2>&1 </dev/null"#)
            .arg(self.inst.bin.join("postgres"))
            .arg(self.data())
            .arg(self.log_path());
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot run postgres: {e}"))?;
        let pid = child.id();
        let deadline = Instant::now() + DEADLINE;
        let result = loop {
            if let Ok(Some(status)) = child.try_wait() {
                break Err(format!("postgres ended ({status})"));
            }
            if pid_file_status(&self.data(), pid).is_some_and(|s| s == "ready" || s == "standby") {
                break Ok(());
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                break Err(format!("not ready within {DEADLINE:?}, killed"));
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        if result.is_ok() {
            *slot = Some(child);
        }
        result
    }

    /// Sends `signal` to the postmaster (SIGINT: the fast shutdown, SIGQUIT: the immediate
    /// one, as `pg_ctl stop -m` does) and reaps it; Err when it has not ended within
    /// [`DEADLINE`] (it is killed then). Ok when it was not running.
    fn shut_down(&self, signal: rustix::process::Signal) -> Result<(), String> {
        use rustix::process::{kill_process, Pid};
        let mut slot = self.postmaster.lock().unwrap_or_else(|e| e.into_inner());
        let Some(mut child) = slot.take() else {
            return Ok(());
        };
        if let Ok(None) = child.try_wait() {
            let pid = Pid::from_raw(child.id() as i32).expect("a child's pid");
            // Not reaped yet, so the PID is still this child's.
            let _ = kill_process(pid, signal);
        }
        let deadline = Instant::now() + DEADLINE;
        while let Ok(None) = child.try_wait() {
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("the server had not stopped after {DEADLINE:?}"));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    }

    /// Runs `pg_ctl ACTION -D DATA ARGS`; panics with the log when it fails.
    fn pg_ctl(&self, action: &str, args: &[&str]) {
        let mut cmd = self.command("pg_ctl");
        cmd.arg(action).arg("-D").arg(self.data()).args(args);
        let out = self.inst.run(cmd, &format!("pg_ctl {action}"));
        if !out.status.success() {
            self.fail(&format!("pg_ctl {action}"), &out);
        }
    }

    fn reload(&self) {
        self.pg_ctl("reload", &[]);
    }

    /// Panics with what `what` said and the server's log.
    fn fail(&self, what: &str, out: &Output) -> ! {
        self.fail_with(&format!(
            "{what} ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        ))
    }

    /// Panics with `message` and the server's log.
    fn fail_with(&self, message: &str) -> ! {
        panic!(
            "the cluster on port {}: {message}\n--- its log ({}):\n{}",
            self.port,
            self.log_path().display(),
            self.log()
        )
    }

    /// A PostgreSQL program (pgbench, pg_dump...) or a system one, as the cluster's user,
    /// HOME its directory, with no PG* variable of the test's environment.
    pub fn command(&self, program: &str) -> Command {
        self.inst.command(program, &self.base)
    }

    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:PORT`.
    pub fn host_port(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The cluster's directory (data in `data/`, the log, the unix socket).
    pub fn dir(&self) -> &Path {
        &self.base
    }

    /// The data directory.
    pub fn data(&self) -> PathBuf {
        self.base.join("data")
    }

    fn log_path(&self) -> PathBuf {
        self.base.join("postgresql.log")
    }

    /// The server's log so far (every start appends to it).
    pub fn log(&self) -> String {
        fs::read(self.log_path())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    /// A new empty database: its name (unique in this test process).
    pub fn create_database(&self) -> String {
        let name = format!("ibi_test_{}", DATABASES.fetch_add(1, Ordering::SeqCst) + 1);
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        name
    }

    /// A new empty database ([`Cluster::create_database`]): its URI,
    /// `postgresql://postgres@127.0.0.1:PORT/NAME` (no password: trust on loopback).
    pub fn database(&self) -> String {
        self.uri(&self.create_database())
    }

    /// The URI of database `db` of this cluster.
    pub fn uri(&self, db: &str) -> String {
        format!("postgresql://{USER}@127.0.0.1:{}/{db}", self.port)
    }

    /// Runs `sql` (statements separated by `;`, each its own transaction unless it says
    /// otherwise) with `psql -XAtq -v ON_ERROR_STOP=1` on `db` (a name of this cluster,
    /// or a URI); its output (unaligned, tuples only: `a|b` a row, a line each). Panics with
    /// psql's stderr and the log when psql fails.
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let out = self.try_psql(db, sql);
        if !out.success {
            panic!(
                "psql on {db} failed: {sql}\n{}{}\n--- the log ({}):\n{}",
                out.stdout,
                out.stderr,
                self.log_path().display(),
                self.log()
            );
        }
        out.stdout
    }

    /// [`Cluster::psql`] that tells, rather than panics, how psql failed.
    pub fn try_psql(&self, db: &str, sql: &str) -> PsqlOutput {
        let mut cmd = self.command("psql");
        cmd.args(["-XAtq", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1"])
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                USER,
                "-d",
                db,
                "-f",
                "-",
            ]);
        let out = self.inst.run_with_stdin(cmd, sql, "psql");
        PsqlOutput {
            success: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Runs `sql` on `db` again and again until it answers `expected` (a standby's replay,
    /// say); panics with the last answer and the log after [`DEADLINE`].
    pub fn wait_for(&self, db: &str, sql: &str, expected: &str) {
        if let Err(last) = self.poll(db, sql, expected) {
            panic!(
                "{sql} on {db} (port {}) did not give {expected:?} within {DEADLINE:?}; \
                 last: {last:?}\n--- the log:\n{}",
                self.port,
                self.log()
            );
        }
    }

    /// Err(the last output) when `sql` has not answered `expected` within [`DEADLINE`].
    fn poll(&self, db: &str, sql: &str, expected: &str) -> Result<(), PsqlOutput> {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let out = self.try_psql(db, sql);
            if out.success && out.stdout == expected {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(out);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops the server as `pg_ctl stop -m fast` does (sessions ended, a checkpoint), and
    /// waits until it has. Panics when it was not running.
    pub fn stop(&self) {
        assert!(
            self.postmaster_pid().is_some(),
            "stop(): the server is not running\n{}",
            self.log()
        );
        if let Err(why) = self.shut_down(rustix::process::Signal::INT) {
            self.fail_with(&why);
        }
    }

    /// Starts the server again on the same port and data (after [`Cluster::stop`] or
    /// [`Cluster::kill`]), waiting until it accepts connections.
    pub fn restart(&self) {
        if let Err(why) = self.spawn_postmaster() {
            self.fail_with(&format!("the server did not start again: {why}"));
        }
    }

    /// Promotes a standby (`pg_ctl promote -w`): it returns once the cluster takes writes.
    pub fn promote(&self) {
        self.pg_ctl("promote", &["-w", "-t", &DEADLINE.as_secs().to_string()]);
    }

    /// Kills the postmaster (SIGKILL), as a crash does; the processes it started notice
    /// and end, and those still there after 5 s are killed too. Returns once none is left;
    /// [`Cluster::restart`] then recovers the cluster.
    pub fn kill(&self) {
        use rustix::process::{kill_process, Pid, Signal};
        {
            let mut slot = self.postmaster.lock().unwrap_or_else(|e| e.into_inner());
            let mut child = slot
                .take()
                .unwrap_or_else(|| self.fail_with("kill(): the server is not running"));
            let _ = child.kill();
            let _ = child.wait();
        }
        let start = Instant::now();
        loop {
            let left = self.cluster_processes();
            if left.is_empty() {
                return;
            }
            let waited = start.elapsed();
            if waited >= DEADLINE {
                self.fail_with(&format!(
                    "processes {left:?} of the killed server still run after {waited:?}"
                ));
            }
            if waited > Duration::from_secs(5) {
                for pid in left {
                    if let Some(pid) = Pid::from_raw(pid as i32) {
                        let _ = kill_process(pid, Signal::KILL);
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The postmaster's PID while it runs, else None.
    pub fn postmaster_pid(&self) -> Option<i32> {
        let mut slot = self.postmaster.lock().unwrap_or_else(|e| e.into_inner());
        let child = slot.as_mut()?;
        matches!(child.try_wait(), Ok(None)).then(|| child.id() as i32)
    }

    /// The living processes of the server: those whose working directory is the data
    /// directory (the postmaster and every process it started).
    pub fn cluster_processes(&self) -> Vec<u32> {
        let data = self.data();
        all_processes()
            .into_iter()
            .filter(|&(pid, state, _)| {
                state != 'Z'
                    && fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == data)
            })
            .map(|(pid, _, _)| pid)
            .collect()
    }
}

impl Drop for Cluster {
    /// Stops the server as `pg_ctl stop -m immediate` does, then ends the watchdog's wait
    /// and waits for it: its `pg_ctl stop -m immediate` finds nothing to stop, and it
    /// deletes the directory (the [`tempfile::TempDir`] deletes whatever it left).
    fn drop(&mut self) {
        let _ = self.shut_down(rustix::process::Signal::QUIT);
        if let Some(mut watchdog) = self.watchdog.take() {
            drop(watchdog.stdin.take());
            let _ = watchdog.wait();
        }
    }
}

/// The status `postmaster.pid` in `data` gives (its 8th line: "starting", "ready",
/// "standby", "stopping"), if it is the file of the postmaster `pid`.
fn pid_file_status(data: &Path, pid: u32) -> Option<String> {
    let file = fs::read_to_string(data.join("postmaster.pid")).ok()?;
    let lines: Vec<&str> = file.lines().collect();
    (lines.first()?.trim() == pid.to_string())
        .then(|| lines.get(7).map(|s| s.trim().to_string()))?
}

/// The URI of database `db` on several clusters (a primary and its standbys), the
/// read-write one chosen: `postgresql://postgres@127.0.0.1:P1,127.0.0.1:P2/DB?
/// target_session_attrs=read-write`.
pub fn multi_host_uri(clusters: &[&Cluster], db: &str) -> String {
    let hosts: Vec<String> = clusters.iter().map(|c| c.host_port()).collect();
    format!(
        "postgresql://{USER}@{}/{db}?target_session_attrs=read-write",
        hosts.join(",")
    )
}
