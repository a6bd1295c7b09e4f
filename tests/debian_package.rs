//! The Debian package, built and installed for real: `cargo deb` builds it from the
//! repository (release build of both executables), `dpkg -i` installs it, and then what
//! it installed is run as an administrator would run it:
//!
//! - an Archive in /var/lib/ibi-archive ([`make_archive`]), served by Debian's own Apache
//!   (`apache2ctl start`, or `graceful` when it runs already) through the installed /etc/apache2/conf-available/ibi-archive.conf,
//!   which refuses to load until the service IBI is set, on a free port; one urlRequest
//!   answered with exactly the expected pairs, and the URL it hands out followed to the
//!   file's bytes;
//! - the installed resolver, run as its unit runs it (`runuser -u ibi-resolver --
//!   /usr/bin/ibi-resolver serve --config /etc/ibi-resolver/resolver.toml`), the Archive
//!   registered by the operator (as ibi-resolver) and included, as root, by the
//!   ExecStart of the installed ibi-archive-inclusion.service (run as systemd runs it,
//!   there being no systemd to start it), one persistent URL redirected to the file's URL
//!   under Apache; then two instances of the templated unit ibi-resolver@.service from
//!   that one resolver.toml (its ExecStart run as systemd runs it, `%i` the port: `serve
//!   --listen 127.0.0.1:PORT`), each redirecting the persistent URL on its own port; and
//!   the Archive excluded by the unit's ExecStop;
//! - `systemd-analyze verify` on the installed units, and lighttpd's check of the
//!   installed lighttpd configuration;
//! - `dpkg --purge`: the user, the registry and the configuration gone, the Archive's data
//!   kept.
//!
//! It changes the machine (a package, a system user, Apache's configuration, Apache started
//! or reloaded), so it runs as root only, and only on a machine where none of it is there
//! already (no ibi-archive package, no ibi-resolver user, none of the package's paths, and
//! port 80 free for Debian's `Listen 80` unless Apache runs); whatever happens, [`Machine`]
//! puts everything back when the test ends (Apache stopped again, or reloaded with the
//! configuration it had). Without CI=true a machine that cannot run it
//! is skipped with one line saying why; under CI=true that is a failure.
//!
//! It builds a full release (LTO) and changes the machine: ignored by a plain `cargo test`,
//! run by `cargo test -- --include-ignored` (README's test command, which CI runs).
//!
//! Building from inside `cargo test`: the outer cargo holds its build-directory lock only
//! while it compiles, and runs the test binaries after releasing it, so the `cargo deb`
//! below (which runs `cargo build --release`) takes the same lock without waiting for
//! anything; the release build shares target/ with the rest and is skipped when it is up
//! to date.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PACKAGE: &str = "ibi-archive";
/// The default Archive root, made by postinst.
const ARCHIVE_ROOT: &str = "/var/lib/ibi-archive";
const RESOLVER_STATE: &str = "/var/lib/ibi-resolver";
const RESOLVER_ETC: &str = "/etc/ibi-resolver";
const RESOLVER_TOML: &str = "/etc/ibi-resolver/resolver.toml";
const RESOLVER_USER: &str = "ibi-resolver";
const APACHE_CONF: &str = "/etc/apache2/conf-available/ibi-archive.conf";
const APACHE_CONF_ENABLED: &str = "/etc/apache2/conf-enabled/ibi-archive.conf";
const LIGHTTPD_CONF: &str = "/etc/lighttpd/conf-available/50-ibi-archive.conf";
/// logrotate(8) of the Archive's access log, and of the resolver's log outside systemd.
const LOGROTATE_ARCHIVE: &str = "/etc/logrotate.d/ibi-archive";
const LOGROTATE_RESOLVER: &str = "/etc/logrotate.d/ibi-resolver";
/// The test's own Apache configuration, for its `Listen`.
const PORT_CONF_NAME: &str = "ibi-archive-package-test";
const PORT_CONF: &str = "/etc/apache2/conf-available/ibi-archive-package-test.conf";
/// The modules the installed configuration asks for (`a2enmod cgid alias env`).
const APACHE_MODULES: &[&str] = &["cgid", "alias", "env"];
const APACHE_PID: &str = "/var/run/apache2/apache2.pid";
/// Where the package puts the unit (/lib/systemd/system is the same directory on a
/// merged-/usr system, as every Debian 12 is).
const UNIT: &str = "/usr/lib/systemd/system/ibi-resolver.service";
/// The templated unit: one instance per port, all with resolver.toml.
const TEMPLATE_UNIT: &str = "/usr/lib/systemd/system/ibi-resolver@.service";
/// The unit that includes the Archive served by Apache in its resolvers while Apache runs.
const INCLUSION_UNIT: &str = "/usr/lib/systemd/system/ibi-archive-inclusion.service";
const BINARIES: &[&str] = &["/usr/bin/ibi-archive", "/usr/bin/ibi-resolver"];
/// The CGI program the web servers' configurations name.
const CGI_BIN: &str = "/usr/lib/ibi-archive/ibi-archive-cgi";

/// The item asked for, its file, and the resolver's service IBI (resolver/resolver.toml).
const ITEM_IBIP: &str = "8JMKD3MGP8W/35MME4E";
const ITEM_REP: &str = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23";
const ITEM_FILE: &str = "CCSDS 643.0-B-1.pdf";
const RESOLVER_IBI: &str = "J8LNKB5R7W/3FUQHC5";
const ADMIN_EMAIL: &str = "archive-admin@example.org";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// `program args` (no input): whether it succeeded, and its stdout and stderr together.
fn run_said(program: &str, args: &[&str]) -> (bool, String) {
    let out = Command::new(program)
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// `program args` must succeed; returns its stdout and stderr together.
fn run(program: &str, args: &[&str]) -> String {
    let (ok, text) = run_said(program, args);
    assert!(ok, "`{program} {}` failed:\n{text}", args.join(" "));
    text
}

/// `program args`, whatever it answers (for putting things back).
fn run_quietly(program: &str, args: &[&str]) {
    let _ = Command::new(program)
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string())
}

/// The group `name` of /etc/group, with its gid.
fn group_id(name: &str) -> Option<u32> {
    fs::read_to_string("/etc/group")
        .ok()?
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() >= 3 && f[0] == name).then(|| f[2].parse().ok())?
        })
}

/// The /etc/passwd line of `name`, split.
fn passwd(name: &str) -> Option<Vec<String>> {
    fs::read_to_string("/etc/passwd")
        .ok()?
        .lines()
        .map(|l| l.split(':').map(str::to_string).collect::<Vec<_>>())
        .find(|f| f.len() == 7 && f[0] == name)
}

/// dpkg's status of the package: `None` when dpkg knows nothing of it.
fn package_status() -> Option<String> {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", PACKAGE])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let status = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !status.is_empty() && status != "unknown ok not-installed")
        .then_some(status)
}

fn apache_running() -> bool {
    apache_pid().is_some_and(common::process_alive)
}

fn apache_pid() -> Option<u32> {
    fs::read_to_string(APACHE_PID).ok()?.trim().parse().ok()
}

/// The names in `dir`, sorted (for comparing Apache's enabled modules and configurations
/// before and after).
fn names(dir: &str) -> BTreeSet<String> {
    fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Why this machine cannot run the test, if it cannot.
fn not_ready() -> Option<String> {
    if !common::running_as_root() {
        return Some("the Debian package test installs a package: it needs root".into());
    }
    let cargo_deb = Command::new(cargo())
        .args(["deb", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !cargo_deb {
        return Some("cargo-deb is not installed (cargo install cargo-deb --locked)".into());
    }
    if !common::apache2_available() {
        return Some("apache2 (with mod_cgid) is not installed".into());
    }
    for tool in [
        "/usr/bin/dpkg",
        "/usr/sbin/apache2ctl",
        "/usr/sbin/a2enmod",
        "/usr/sbin/a2enconf",
        "/usr/sbin/adduser",
        "/usr/sbin/runuser",
        "/usr/bin/systemd-analyze",
        "/usr/sbin/lighttpd",
        "/usr/sbin/logrotate",
    ] {
        if !Path::new(tool).is_file() {
            return Some(format!("{tool} is not installed"));
        }
    }
    if let Some(status) = package_status() {
        return Some(format!(
            "the package {PACKAGE} is on this machine already ({status})"
        ));
    }
    if passwd(RESOLVER_USER).is_some() || group_id(RESOLVER_USER).is_some() {
        return Some(format!("the user or group {RESOLVER_USER} exists already"));
    }
    let mut paths = vec![
        ARCHIVE_ROOT,
        RESOLVER_STATE,
        RESOLVER_ETC,
        APACHE_CONF,
        APACHE_CONF_ENABLED,
        LIGHTTPD_CONF,
        LOGROTATE_ARCHIVE,
        LOGROTATE_RESOLVER,
        PORT_CONF,
        UNIT,
        "/lib/systemd/system/ibi-resolver.service",
        TEMPLATE_UNIT,
        "/lib/systemd/system/ibi-resolver@.service",
        INCLUSION_UNIT,
        "/lib/systemd/system/ibi-archive-inclusion.service",
        "/etc/default/ibi-archive-inclusion",
        "/usr/share/ibi-archive",
    ];
    paths.extend(BINARIES);
    paths.push(CGI_BIN);
    if let Some(p) = paths.iter().find(|p| Path::new(p).exists()) {
        return Some(format!("{p} exists already"));
    }
    if !apache_running() && std::net::TcpListener::bind(("0.0.0.0", 80)).is_err() {
        return Some("port 80 (Listen 80 of Debian's ports.conf) is taken".into());
    }
    None
}

/// The machine is one: the tests of this file take it in turn.
static MACHINE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// What the test changed, put back when dropped (also when the test fails): the resolver
/// stopped, Apache's modules and configurations as they were, the package purged,
/// /var/lib/ibi-archive (made by the package, filled by the test) removed, and Apache
/// stopped if the test started it, else reloaded.
struct Machine {
    resolver: Option<Child>,
    /// Instances of the templated unit, each in its own process group.
    instances: Vec<Child>,
    /// Files the test made outside the package's paths (the instances' logs), removed.
    files: Vec<PathBuf>,
    /// Whether Apache ran before the test, and whether the test started or reloaded it.
    apache_was_running: bool,
    apache_changed: bool,
    modules_enabled: Vec<&'static str>,
    installed: bool,
    archive: bool,
}

impl Machine {
    fn stop_resolver(&mut self) {
        // A resolver the README's script started in the background: every process of
        // the user, so that the purge can remove the user.
        if passwd(RESOLVER_USER).is_some() {
            run_quietly("pkill", &["-KILL", "-u", RESOLVER_USER]);
            let deadline = Instant::now() + Duration::from_secs(10);
            while Command::new("pgrep")
                .args(["-u", RESOLVER_USER])
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
                && Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        for mut child in self
            .resolver
            .take()
            .into_iter()
            .chain(self.instances.drain(..))
        {
            // Its own process group: runuser and the resolver under it.
            let group = format!("-{}", child.id());
            run_quietly("kill", &["-s", "TERM", "--", &group]);
            let deadline = Instant::now() + Duration::from_secs(10);
            while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            run_quietly("kill", &["-s", "KILL", "--", &group]);
            let _ = child.wait();
        }
    }

    /// Stops Apache if the test started it.
    fn stop_apache(&mut self) {
        if self.apache_was_running || !std::mem::take(&mut self.apache_changed) {
            return;
        }
        let pid = apache_pid();
        run_quietly("apache2ctl", &["stop"]);
        let deadline = Instant::now() + common::SHUTDOWN_TIMEOUT;
        while pid.is_some_and(common::process_alive) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Apache's configuration as it was, the package purged, the Archive removed.
    fn restore(&mut self) {
        self.stop_resolver();
        self.stop_apache();
        if Path::new(PORT_CONF).exists() {
            run_quietly("a2disconf", &["-q", PORT_CONF_NAME]);
            let _ = fs::remove_file(PORT_CONF);
        }
        for module in std::mem::take(&mut self.modules_enabled) {
            run_quietly("a2dismod", &["-q", "-f", module]);
        }
        if std::mem::take(&mut self.installed) {
            run_quietly("a2disconf", &["-q", "ibi-archive"]);
            run_quietly("dpkg", &["--purge", PACKAGE]);
        }
        if std::mem::take(&mut self.archive) {
            let _ = fs::remove_dir_all(ARCHIVE_ROOT);
        }
        for file in std::mem::take(&mut self.files) {
            let _ = fs::remove_file(file);
        }
        // An Apache that ran before runs on, with the configuration it had.
        if std::mem::take(&mut self.apache_changed) {
            run_quietly("apache2ctl", &["graceful"]);
        }
    }
}

impl Drop for Machine {
    fn drop(&mut self) {
        self.restore();
    }
}

/// `cargo deb` in the repository, for the machine's own target (the triple of
/// `rustc --print host-tuple`, where .cargo/config.toml's `build.target` puts the release
/// build): the path of the .deb it made.
fn build_package() -> PathBuf {
    let host = run("rustc", &["--print", "host-tuple"]).trim().to_string();
    let out = Command::new(cargo())
        .args(["deb", "--target", &host])
        .current_dir(repo())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "cargo deb --target {host}: {}\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // It prints the path of the package it made, last.
    let deb = PathBuf::from(stdout.trim().lines().last().unwrap_or_default());
    assert!(
        deb.extension().is_some_and(|e| e == "deb") && deb.is_file(),
        "cargo deb printed {stdout:?}"
    );
    deb
}

/// The files of the package (what `dpkg-deb -c` lists, directories left out).
fn package_files(deb: &Path) -> BTreeSet<String> {
    run("dpkg-deb", &["-c", deb.to_str().unwrap()])
        .lines()
        .filter(|l| !l.starts_with('d'))
        .map(|l| {
            let path = l.split_whitespace().last().unwrap();
            path.trim_start_matches('.').to_string()
        })
        .collect()
}

/// The Archive the web server serves, in `root` (which exists, empty, as the package
/// makes it), answering at `address` (HOST:PORT): a copy of the repository's sample
/// Archive, whose answer for the standard's worked example is known byte for byte (an
/// Archive from `init` is tested in tests/admin_init.rs and tests/readme_walkthrough.rs),
/// its archiveaddress rewritten to `address`, with the ownership and modes the README
/// prescribes (archive.toml root:www-data 640, var/ www-data's 700, col/ a+rX).
fn make_archive(root: &Path, address: &str) {
    common::copy_sample(root);
    let toml = root.join("archive.toml");
    let text = fs::read_to_string(&toml).unwrap();
    let from = "archiveaddress    = \"localhost:8080\"";
    assert!(text.contains(from), "sample-archive/archive.toml: {text}");
    fs::write(
        &toml,
        text.replace(from, &format!("archiveaddress    = \"{address}\"")),
    )
    .unwrap();
    common::prepare_archive(root);
}

/// The value of `key` in table `table` (or at the top, for "") of a TOML file.
fn toml_value(path: &Path, table: &str, key: &str) -> String {
    let doc: toml::Table = fs::read_to_string(path).unwrap().parse().unwrap();
    let t = if table.is_empty() {
        &doc
    } else {
        doc[table].as_table().unwrap()
    };
    t[key].as_str().unwrap().to_string()
}

/// Replaces `from` (which must be there) by `to` in the file at `path`, in place (same
/// inode, owner and mode).
fn edit(path: &str, from: &str, to: &str) {
    let text = fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{path} lacks {from:?}:\n{text}");
    fs::write(path, text.replace(from, to)).unwrap();
}

fn mode(path: &str) -> (u32, u32, u32) {
    let m = fs::metadata(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    (m.uid(), m.gid(), m.mode() & 0o7777)
}

fn gunzip(path: &str) -> Vec<u8> {
    let out = Command::new("gzip").args(["-dc", path]).output().unwrap();
    assert!(out.status.success(), "gzip -dc {path}");
    out.stdout
}

/// `apache2ctl configtest`: success, and what it said.
fn configtest() -> (bool, String) {
    run_said("apache2ctl", &["configtest"])
}

/// The end of Apache's error log, for failure messages.
fn apache_log() -> String {
    let log = fs::read_to_string("/var/log/apache2/error.log").unwrap_or_default();
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// The command of `key` (ExecStart, ExecStop) of the installed unit `unit`, run as systemd
/// runs it: no shell, a clean environment holding PATH and the unit's Environment=
/// assignments (its EnvironmentFile=, optional, is not there: the test made sure).
/// (exit code, stdout, stderr)
fn run_unit_command(unit: &str, key: &str) -> (i32, String, String) {
    let text = fs::read_to_string(unit).unwrap();
    let setting = |name: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.strip_prefix(&format!("{name}=")))
            .map(str::to_string)
            .collect()
    };
    for file in setting("EnvironmentFile") {
        let path = file.strip_prefix('-').expect("an optional EnvironmentFile");
        assert!(!Path::new(path).exists(), "{path}");
    }
    let command = setting(key);
    assert_eq!(command.len(), 1, "one {key} in {unit}:\n{text}");
    let argv: Vec<&str> = command[0].split_whitespace().collect();
    let mut cmd = Command::new(argv[0]);
    cmd.args(&argv[1..])
        .env_clear()
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .current_dir("/");
    for assignment in setting("Environment") {
        let (k, v) = assignment.split_once('=').unwrap();
        cmd.env(k, v);
    }
    common::run_with_stdin(&mut cmd, "")
}

/// The instance `instance` of the installed templated unit `unit`, started as systemd
/// starts it: its ExecStart with `%i` made `instance`, as its User=, in a clean
/// environment (PATH alone), its stderr into `log`, in a process group of its own.
fn spawn_unit_instance(unit: &str, instance: &str, log: &Path) -> Child {
    let text = fs::read_to_string(unit).unwrap();
    let setting = |name: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.strip_prefix(&format!("{name}=")))
            .map(|v| v.replace("%i", instance))
            .collect()
    };
    let (start, user) = (setting("ExecStart"), setting("User"));
    assert_eq!((start.len(), user.len()), (1, 1), "{unit}:\n{text}");
    let argv: Vec<&str> = start[0].split_whitespace().collect();
    Command::new("runuser")
        .args(["-u", &user[0], "--"])
        .args(&argv)
        .env_clear()
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        // As `2>>log` opens it.
        .stderr(
            fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
                .unwrap(),
        )
        .process_group(0)
        .spawn()
        .unwrap()
}

/// `ibi-resolver ARGS --config /etc/ibi-resolver/resolver.toml` as the operator runs it:
/// as the user ibi-resolver, `stdin` on its standard input.
fn resolver_command(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut cmd = Command::new("runuser");
    cmd.args(["-u", RESOLVER_USER, "--", "/usr/bin/ibi-resolver"])
        .args(args)
        .args(["--config", RESOLVER_TOML]);
    common::run_with_stdin(&mut cmd, stdin)
}

#[test]
#[ignore = "builds a release and installs a package: cargo test -- --include-ignored"]
fn the_debian_package_installs_serves_an_archive_under_apache_resolves_and_purges() {
    let _machine = MACHINE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(why) = not_ready() {
        assert!(!under_ci(), "CI=true and {why}");
        eprintln!("skipping: {why}");
        return;
    }
    let before = (
        names("/etc/apache2/mods-enabled"),
        names("/etc/apache2/conf-enabled"),
    );
    let deb = build_package();
    let mut machine = Machine {
        resolver: None,
        instances: Vec::new(),
        files: Vec::new(),
        apache_was_running: apache_running(),
        apache_changed: false,
        modules_enabled: Vec::new(),
        installed: false,
        archive: false,
    };

    // What the package holds, exactly.
    let expected: BTreeSet<String> = [
        "/usr/bin/ibi-archive",
        "/usr/bin/ibi-resolver",
        CGI_BIN,
        "/usr/share/man/man1/ibi-archive.1.gz",
        "/usr/share/man/man1/ibi-resolver.1.gz",
        "/usr/share/bash-completion/completions/ibi-archive",
        "/usr/share/bash-completion/completions/ibi-resolver",
        "/usr/share/ibi-archive/apache2/ibi-archive.conf",
        "/usr/share/ibi-archive/lighttpd/ibi-archive.conf",
        "/etc/apache2/conf-available/ibi-archive.conf",
        "/etc/lighttpd/conf-available/50-ibi-archive.conf",
        LOGROTATE_ARCHIVE,
        LOGROTATE_RESOLVER,
        "/etc/ibi-resolver/resolver.toml",
        UNIT,
        TEMPLATE_UNIT,
        INCLUSION_UNIT,
        "/usr/share/doc/ibi-archive/README.md",
        "/usr/share/doc/ibi-archive/administrators-guide.md",
        "/usr/share/doc/ibi-archive/resolver-guide.md",
        "/usr/share/doc/ibi-archive/protocol.md",
        "/usr/share/doc/ibi-archive/code.md",
        "/usr/share/doc/ibi-archive/copyright",
        "/usr/share/doc/ibi-archive/examples/apache2-ibi-archive-tls.conf",
        "/usr/share/doc/ibi-archive/examples/apache2-ibi-resolver.conf",
        "/usr/share/doc/ibi-archive/examples/apache2-ibi-resolver-tls.conf",
        "/usr/share/doc/ibi-archive/examples/apache2-ibi-resolver-balancer.conf",
        "/usr/share/doc/ibi-archive/examples/haproxy-ibi-resolver.cfg",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(package_files(&deb), expected);
    // The backup chapter's rsync, which apt installs with the package unless told not to.
    assert_eq!(
        run("dpkg-deb", &["-f", deb.to_str().unwrap(), "Recommends"]),
        "rsync\n"
    );

    machine.installed = true;
    machine.archive = true;
    run("dpkg", &["-i", deb.to_str().unwrap()]);
    assert_eq!(package_status().as_deref(), Some("install ok installed"));
    let conffiles = run("dpkg-query", &["-W", "-f=${Conffiles}", PACKAGE]);
    let conffiles: BTreeSet<&str> = conffiles
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        conffiles,
        [
            APACHE_CONF,
            LIGHTTPD_CONF,
            LOGROTATE_ARCHIVE,
            LOGROTATE_RESOLVER,
            RESOLVER_TOML
        ]
        .into_iter()
        .collect()
    );

    // Installed as in the repository: the routes, the unit, the pages and completions.
    let same = [
        (
            "/usr/share/ibi-archive/apache2/ibi-archive.conf",
            "cgi-bin/apache2/ibi-archive.conf",
        ),
        (
            "/usr/share/ibi-archive/lighttpd/ibi-archive.conf",
            "cgi-bin/lighttpd/ibi-archive.conf",
        ),
        (UNIT, "resolver/deploy/ibi-resolver.service"),
        (TEMPLATE_UNIT, "resolver/deploy/ibi-resolver@.service"),
        (
            "/usr/share/doc/ibi-archive/examples/apache2-ibi-resolver.conf",
            "resolver/deploy/apache2-ibi-resolver.conf",
        ),
        (
            "/usr/share/doc/ibi-archive/examples/apache2-ibi-resolver-tls.conf",
            "resolver/deploy/apache2-ibi-resolver-tls.conf",
        ),
        (
            "/usr/share/doc/ibi-archive/examples/apache2-ibi-resolver-balancer.conf",
            "resolver/deploy/apache2-ibi-resolver-balancer.conf",
        ),
        (
            "/usr/share/doc/ibi-archive/examples/haproxy-ibi-resolver.cfg",
            "resolver/deploy/haproxy-ibi-resolver.cfg",
        ),
        (
            "/usr/share/doc/ibi-archive/examples/apache2-ibi-archive-tls.conf",
            "cgi-bin/apache2/ibi-archive-tls.conf",
        ),
        (INCLUSION_UNIT, "debian/ibi-archive-inclusion.service"),
        (APACHE_CONF, "debian/apache2/ibi-archive.conf"),
        (LIGHTTPD_CONF, "debian/lighttpd/50-ibi-archive.conf"),
        (RESOLVER_TOML, "debian/resolver.toml"),
        (
            "/usr/share/doc/ibi-archive/administrators-guide.md",
            "docs/src/administrators-guide.md",
        ),
        (
            "/usr/share/doc/ibi-archive/resolver-guide.md",
            "docs/src/resolver-guide.md",
        ),
        (
            "/usr/share/doc/ibi-archive/protocol.md",
            "docs/src/protocol.md",
        ),
        ("/usr/share/doc/ibi-archive/code.md", "docs/src/code.md"),
        (LOGROTATE_ARCHIVE, "debian/logrotate/ibi-archive"),
        (LOGROTATE_RESOLVER, "debian/logrotate/ibi-resolver"),
        (
            "/usr/share/bash-completion/completions/ibi-archive",
            "debian/bash-completion/ibi-archive",
        ),
        (
            "/usr/share/bash-completion/completions/ibi-resolver",
            "debian/bash-completion/ibi-resolver",
        ),
    ];
    for (installed, source) in same {
        assert!(
            fs::read(installed).unwrap() == fs::read(repo().join(source)).unwrap(),
            "{installed} is not {source}"
        );
    }
    for page in ["ibi-archive.1", "ibi-resolver.1"] {
        assert!(
            gunzip(&format!("/usr/share/man/man1/{page}.gz"))
                == fs::read(repo().join("debian").join(page)).unwrap(),
            "{page}.gz is not debian/{page}"
        );
    }
    for bin in BINARIES {
        let name = Path::new(bin).file_name().unwrap().to_str().unwrap();
        assert_eq!(
            run(bin, &["--version"]),
            format!("{name} {}\n", env!("CARGO_PKG_VERSION"))
        );
    }

    // postinst: the resolver's user and directories, the default Archive root.
    let user = passwd(RESOLVER_USER).expect("postinst made the user ibi-resolver");
    let (uid, gid) = (
        user[2].parse::<u32>().unwrap(),
        user[3].parse::<u32>().unwrap(),
    );
    assert!(uid < 1000, "a system user: {user:?}");
    assert_eq!(group_id(RESOLVER_USER), Some(gid));
    assert_eq!(
        (user[5].as_str(), user[6].as_str()),
        (RESOLVER_STATE, "/usr/sbin/nologin")
    );
    assert_eq!(mode(RESOLVER_STATE), (uid, gid, 0o700));
    assert_eq!(mode(RESOLVER_TOML), (0, gid, 0o640));
    assert_eq!(mode(ARCHIVE_ROOT), (0, 0, 0o755));
    assert_eq!(fs::read_dir(ARCHIVE_ROOT).unwrap().count(), 0);
    // Nothing enabled: no web server configuration, no unit.
    assert!(!Path::new(APACHE_CONF_ENABLED).exists());
    assert!(!Path::new("/etc/lighttpd/conf-enabled/50-ibi-archive.conf").exists());
    assert!(
        !Path::new("/etc/systemd/system/multi-user.target.wants/ibi-resolver.service").exists()
    );
    assert!(
        !Path::new("/etc/systemd/system/apache2.service.wants/ibi-archive-inclusion.service")
            .exists()
    );

    // The units, as systemd would read them (the inclusion unit's man page installed).
    for unit in [UNIT, TEMPLATE_UNIT, INCLUSION_UNIT] {
        let out = Command::new("systemd-analyze")
            .args(["verify", unit])
            .env("SYSTEMD_LOG_COLOR", "0")
            .output()
            .unwrap();
        assert!(
            out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
            "systemd-analyze verify {unit}: {}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // ---------------------------------------------------------------------------------
    // The Archive under Apache
    // ---------------------------------------------------------------------------------
    let port = common::free_port();
    let address = format!("127.0.0.1:{port}");
    make_archive(Path::new(ARCHIVE_ROOT), &address);
    let sample_toml = common::sample().join("archive.toml");
    let service = toml_value(&sample_toml, "", "archiveserviceibi");
    let key = toml_value(&sample_toml, "registration", "key");

    for module in APACHE_MODULES {
        if !Path::new(&format!("/etc/apache2/mods-enabled/{module}.load")).exists() {
            machine.modules_enabled.push(module);
        }
    }
    let mut a2enmod = vec!["-q"];
    a2enmod.extend(APACHE_MODULES);
    run("a2enmod", &a2enmod);
    fs::write(PORT_CONF, format!("Listen {address}\n")).unwrap();
    run("a2enconf", &["-q", "ibi-archive", PORT_CONF_NAME]);
    // Enabled with the service IBI unset: Apache refuses its configuration, saying why.
    let (ok, said) = configtest();
    assert!(
        !ok && said.contains(
            "ibi-archive: IBI_ARCHIVE_SERVICE_IBI is not set: uncomment its Define in /etc/apache2/conf-available/ibi-archive.conf"
        ),
        "apache2ctl configtest with the service IBI unset: {said}"
    );
    edit(
        APACHE_CONF,
        "#Define IBI_ARCHIVE_SERVICE_IBI <archiveserviceibi>",
        &format!("Define IBI_ARCHIVE_SERVICE_IBI {service}"),
    );
    let (ok, said) = configtest();
    assert!(
        ok && said.contains("Syntax OK"),
        "apache2ctl configtest: {said}"
    );
    machine.apache_changed = true;
    if machine.apache_was_running {
        run("apache2ctl", &["graceful"]);
    } else {
        run("apache2ctl", &["start"]);
    }
    if let Err(why) = common::wait_for_port(port, None) {
        panic!("Apache: {why}\n{}", apache_log());
    }

    let base = format!("http://{address}");
    let file_url = format!(
        "{base}/col/{ITEM_REP}/doc/{}",
        ITEM_FILE.replace(' ', "%20")
    );
    let file_bytes = fs::read(
        Path::new(ARCHIVE_ROOT)
            .join("col")
            .join(ITEM_REP)
            .join("doc")
            .join(ITEM_FILE),
    )
    .unwrap();
    assert_eq!(
        file_bytes,
        fs::read(
            common::sample()
                .join("col")
                .join(ITEM_REP)
                .join("doc")
                .join(ITEM_FILE)
        )
        .unwrap()
    );
    let r = common::http_get(&format!(
        "{base}/{service}?servicesubject=urlRequest&clientinformation.ipaddress=127.0.0.1&parsedibiurl.ibi={ITEM_IBIP}"
    ));
    assert_eq!(r.status, 200, "{}\n{}", r.text(), apache_log());
    assert_eq!(r.content_type(), "text/plain");
    let (answer, urlkey) = common::mask_urlkey(&r.text());
    assert!(urlkey.is_some(), "{answer}");
    assert_eq!(
        answer,
        [
            format!("archiveaddress {address}"),
            "contenttype Data".to_string(),
            format!("ibi {{rep {ITEM_REP} ibip {ITEM_IBIP}}}"),
            format!("ibi.archiveservice {{rep {service}}}"),
            "ibi.platformsoftware {rep dpi.inpe.br/banon/1998/08.02.08.56}".to_string(),
            "state Original".to_string(),
            "timestamp 2009-07-21T13:23:45Z".to_string(),
            format!("url {file_url}"),
            "urlkey <urlkey>".to_string(),
        ]
        .join("\r\n")
    );
    let r = common::http_get(&file_url);
    assert_eq!(r.status, 200, "{}", apache_log());
    assert!(r.body == file_bytes, "{file_url} is not the file");

    // ---------------------------------------------------------------------------------
    // The access log rotated by the installed logrotate configuration, run by hand (its
    // state in a directory of the test), and `stats` counting every log it kept
    // ---------------------------------------------------------------------------------
    let rotation = tempfile::tempdir().unwrap();
    let state = rotation.path().join("state");
    let rotate = |config: &str| {
        run("logrotate", &["-f", "-s", state.to_str().unwrap(), config]);
    };
    // An access as the resolver counts it: a urlRequest, then its acknowledgment.
    let acknowledge = || {
        let r = common::http_get(&format!(
            "{base}/{service}?servicesubject=urlRequest&clientinformation.ipaddress=127.0.0.1&parsedibiurl.ibi={ITEM_IBIP}"
        ));
        let (_, urlkey) = common::mask_urlkey(&r.text());
        let r = common::http_get(&format!(
            "{base}/{service}?servicesubject=acknowledgment&clientinformation.ipaddress=127.0.0.1&contenttype=Data&ibi=rep%20{ITEM_REP}&url={}&urlkey={}",
            file_url.replace(' ', "%20"),
            urlkey.expect("a urlkey")
        ));
        assert_eq!(
            (r.status, r.text()),
            (200, "notice {acknowledgment received}".to_string()),
            "{}",
            apache_log()
        );
    };
    let var = Path::new(ARCHIVE_ROOT).join("var");
    let log_of = |name: &str| var.join(name);
    acknowledge();
    rotate(LOGROTATE_ARCHIVE);
    acknowledge();
    rotate(LOGROTATE_ARCHIVE);
    acknowledge();
    // Renamed, the older compressed (delaycompress: not the newest), the log made anew
    // by the service as var/'s owner.
    let kept = [
        String::from_utf8(gunzip(log_of("acknowledgments.log.2.gz").to_str().unwrap())).unwrap(),
        fs::read_to_string(log_of("acknowledgments.log.1")).unwrap(),
        fs::read_to_string(log_of("acknowledgments.log")).unwrap(),
    ];
    for log in &kept {
        assert_eq!(log.lines().count(), 1, "{kept:?}");
    }
    let www = fs::metadata(&var).unwrap();
    let current = fs::metadata(log_of("acknowledgments.log")).unwrap();
    assert_eq!((current.uid(), current.gid()), (www.uid(), www.gid()));
    let (code, out, err) = {
        let mut cmd = Command::new("/usr/bin/ibi-archive");
        cmd.args(["stats", "--root", ARCHIVE_ROOT, "--csv"]);
        common::run_with_stdin(&mut cmd, "")
    };
    let month = |log: &str| log[..7].to_string();
    let months: BTreeSet<String> = kept.iter().map(|l| month(l)).collect();
    let mut want = String::from("item,month,count\n");
    for (item, lines) in [(ITEM_REP, &kept), ("*", &kept)] {
        for m in &months {
            let n = lines.iter().filter(|l| month(l) == *m).count();
            want.push_str(&format!("{item},{m},{n}\n"));
        }
        want.push_str(&format!("{item},total,3\n"));
    }
    assert_eq!((code, out, err), (0, want, String::new()));

    // ---------------------------------------------------------------------------------
    // The resolver, as the unit runs it, in front of the Archive
    // ---------------------------------------------------------------------------------
    let rport = common::free_port();
    edit(
        RESOLVER_TOML,
        "#serviceibi = \"J8LNKB5R7W/3FUQHC5\"",
        &format!("serviceibi = \"{RESOLVER_IBI}\""),
    );
    edit(
        RESOLVER_TOML,
        "#publicurl = \"http://resolver.example.org\"",
        &format!("publicurl = \"http://127.0.0.1:{rport}\""),
    );
    edit(
        RESOLVER_TOML,
        "listen = \"127.0.0.1:8090\"",
        &format!("listen = \"127.0.0.1:{rport}\""),
    );
    // The Archive is on loopback: not a public address.
    edit(
        RESOLVER_TOML,
        "#networks = [\"127.0.0.0/8\", \"10.0.0.0/8\"]",
        "networks = [\"127.0.0.0/8\"]",
    );
    assert_eq!(mode(RESOLVER_TOML), (0, gid, 0o640));
    let logs = tempfile::tempdir().unwrap();
    let log_path = logs.path().join("resolver.log");
    let child = Command::new("runuser")
        .args([
            "-u",
            RESOLVER_USER,
            "--",
            "/usr/bin/ibi-resolver",
            "serve",
            "--config",
            RESOLVER_TOML,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs::File::create(&log_path).unwrap())
        .process_group(0)
        .spawn()
        .unwrap();
    let resolver_log = || fs::read_to_string(&log_path).unwrap_or_default();
    let child = machine.resolver.insert(child);
    if let Err(why) = common::wait_for_port(rport, Some(child)) {
        panic!("the resolver: {why}\n{}", resolver_log());
    }

    let (code, out, err) = resolver_command(
        &["register", &service, "--email", ADMIN_EMAIL],
        &format!("{key}\n"),
    );
    assert_eq!(
        (code, out.as_str()),
        (0, "registered sid.inpe.br/mtc-m18/2008/03.17.15.17\n"),
        "{err}"
    );
    assert_eq!(
        mode(&format!("{RESOLVER_STATE}/resolver.sqlite")),
        (uid, gid, 0o600)
    );
    // The administrator names the resolver in [registration]; the inclusion unit's
    // ExecStart includes the Archive (of /var/lib/ibi-archive, the unit's default).
    edit(
        &format!("{ARCHIVE_ROOT}/archive.toml"),
        "\"http://localhost:8090/J8LNKB5R7W/3FUQHC5\"",
        &format!("\"http://127.0.0.1:{rport}/{RESOLVER_IBI}\""),
    );
    let (code, out, err) = run_unit_command(INCLUSION_UNIT, "ExecStart");
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "status.archive included\nstatus.confirmation successful\n"
        ),
        "{err}\n{}\n{}",
        resolver_log(),
        apache_log()
    );
    let (code, out, err) = resolver_command(&["archives", "--csv"], "");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&address), "{out}");

    let r = common::http_get(&format!("http://127.0.0.1:{rport}/{ITEM_IBIP}"));
    assert_eq!(
        (r.status, r.header("location")),
        (302, Some(file_url.as_str())),
        "{}\n{}",
        r.text(),
        resolver_log()
    );
    let r = common::http_get(&file_url);
    assert!(
        r.status == 200 && r.body == file_bytes,
        "{file_url}: {}",
        r.status
    );

    // -------------------------------------------------------------------------------
    // Two instances of the templated unit, from the one resolver.toml: the first on the
    // port the Archive names, the second on another; both resolve, each on its own port
    // (`serve --listen`), sharing the registry.
    // -------------------------------------------------------------------------------
    machine.stop_resolver();
    let second = common::free_port();
    // The first's log in the test's directory; the second's where the installed logrotate
    // configuration looks for an instance's log outside systemd.
    let instance_logs = [
        logs.path().join(format!("{rport}.log")),
        PathBuf::from(format!("/var/log/ibi-resolver@{second}.log")),
    ];
    assert!(!instance_logs[1].exists(), "{}", instance_logs[1].display());
    machine.files.extend([
        instance_logs[1].clone(),
        instance_logs[1].with_extension("log.1"),
    ]);
    for (port, log) in [rport, second].into_iter().zip(&instance_logs) {
        machine
            .instances
            .push(spawn_unit_instance(TEMPLATE_UNIT, &port.to_string(), log));
        let child = machine.instances.last_mut().unwrap();
        if let Err(why) = common::wait_for_port(port, Some(child)) {
            panic!(
                "ibi-resolver@{port}: {why}\n{}",
                fs::read_to_string(log).unwrap_or_default()
            );
        }
    }
    for (port, log) in [rport, second].into_iter().zip(&instance_logs) {
        let r = common::http_get(&format!("http://127.0.0.1:{port}/{ITEM_IBIP}"));
        // (each line is written before its answer)
        let said = || fs::read_to_string(log).unwrap_or_default();
        assert_eq!(
            (r.status, r.header("location")),
            (302, Some(file_url.as_str())),
            "ibi-resolver@{port}: {}\n{}",
            r.text(),
            said()
        );
        // Its own line, under its own address.
        assert!(
            said().contains(&format!(
                "listening on http://127.0.0.1:{port} (1 Archive included)"
            )),
            "{}",
            said()
        );
    }

    // The second's log rotated as the installed configuration says (copytruncate: the
    // resolver keeps writing to the stderr it was given, opened for appending): its
    // lines kept whole in .1, the log emptied, and the next line at its start.
    let logged = fs::read_to_string(&instance_logs[1]).unwrap();
    rotate(LOGROTATE_RESOLVER);
    assert_eq!(
        fs::read_to_string(instance_logs[1].with_extension("log.1")).unwrap(),
        logged
    );
    let r = common::http_get(&format!("http://127.0.0.1:{second}/{ITEM_IBIP}"));
    assert_eq!(r.status, 302);
    let after = common::resolver::unstamped(&fs::read_to_string(&instance_logs[1]).unwrap());
    assert!(
        after.starts_with(&format!(
            "ibi-resolver: 127.0.0.1 \"GET /{ITEM_IBIP}\" 302 "
        )) && after.lines().count() == 1,
        "{after:?}"
    );

    // The unit's ExecStop (Apache stopping) excludes the Archive; it stays registered.
    let (code, out, err) = run_unit_command(INCLUSION_UNIT, "ExecStop");
    assert_eq!(
        (code, out.as_str()),
        (0, "status.archive excluded\n"),
        "{err}\n{}",
        resolver_log()
    );
    let (code, out, err) = resolver_command(&["archives", "--csv"], "");
    assert_eq!(code, 0, "{err}");
    // serviceibi,address,included,…
    let fields: Vec<&str> = out
        .lines()
        .find(|l| l.starts_with("sid.inpe.br/mtc-m18/2008/03.17.15.17,"))
        .unwrap_or_else(|| panic!("{out}"))
        .split(',')
        .collect();
    assert_eq!(fields[1..3], [address.as_str(), "no"], "{out}");

    // ---------------------------------------------------------------------------------
    // lighttpd's configuration: refused until its service IBI is set, then accepted
    // ---------------------------------------------------------------------------------
    let lighttpd_main = logs.path().join("lighttpd.conf");
    let lighttpd_test = |defines: &str| {
        fs::write(
            &lighttpd_main,
            format!(
                "server.document-root = \"{}\"\nserver.port = {}\n{defines}include \"{LIGHTTPD_CONF}\"\n",
                logs.path().display(),
                common::free_port()
            ),
        )
        .unwrap();
        run_said("lighttpd", &["-tt", "-f", lighttpd_main.to_str().unwrap()])
    };
    let (ok, said) = lighttpd_test("");
    assert!(
        !ok && said.contains("Undefined config variable: var.ibi_archive_service_ibi"),
        "{said}"
    );
    let (ok, said) = lighttpd_test(&format!("var.ibi_archive_service_ibi = \"{service}\"\n"));
    assert!(ok, "lighttpd -tt with the installed configuration: {said}");

    // ---------------------------------------------------------------------------------
    // Purge: everything of the package's gone but the Archive
    // ---------------------------------------------------------------------------------
    machine.stop_resolver();
    machine.stop_apache();
    run("a2disconf", &["-q", PORT_CONF_NAME]);
    fs::remove_file(PORT_CONF).unwrap();
    for module in std::mem::take(&mut machine.modules_enabled) {
        run("a2dismod", &["-q", "-f", module]);
    }
    let archive_toml = fs::read(Path::new(ARCHIVE_ROOT).join("archive.toml")).unwrap();
    // ibi-archive.conf is still enabled: the purge disables it.
    assert!(Path::new(APACHE_CONF_ENABLED).exists());
    run("dpkg", &["--purge", PACKAGE]);
    machine.installed = false;
    assert_eq!(package_status(), None);
    assert!(passwd(RESOLVER_USER).is_none() && group_id(RESOLVER_USER).is_none());
    for gone in [
        RESOLVER_STATE,
        RESOLVER_ETC,
        APACHE_CONF,
        APACHE_CONF_ENABLED,
        LIGHTTPD_CONF,
        UNIT,
        TEMPLATE_UNIT,
        INCLUSION_UNIT,
        "/usr/share/ibi-archive",
        BINARIES[0],
        BINARIES[1],
        CGI_BIN,
    ] {
        assert!(
            !Path::new(gone).exists(),
            "{gone} is still there after the purge"
        );
    }
    // The Archive's data stays.
    assert_eq!(
        fs::read(Path::new(ARCHIVE_ROOT).join("archive.toml")).unwrap(),
        archive_toml
    );
    machine.restore();
    assert!(!Path::new(ARCHIVE_ROOT).exists());
    assert_eq!(
        (
            names("/etc/apache2/mods-enabled"),
            names("/etc/apache2/conf-enabled")
        ),
        before
    );
}

/// The README's "From the package to a persistent URL, on one machine", run as it stands
/// by `sh -e` as root in the repository, from a machine without the package: it installs
/// the package `cargo deb` made, makes the resolver (`ibi-resolver init`) and the Archive
/// (`ibi-archive init --resolver`), serves the Archive with Debian's Apache on port 80,
/// adds an item, registers the Archive, starts the resolver (in the background, there
/// being no systemd here, as the script does then), includes the Archive and follows the
/// item's persistent URL. Its output ends with what the README says it ends with.
#[test]
#[ignore = "builds a release and installs a package: cargo test -- --include-ignored"]
fn the_readmes_administrator_script_runs_from_a_clean_machine() {
    let _machine = MACHINE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(why) = not_ready() {
        assert!(!under_ci(), "CI=true and {why}");
        eprintln!("skipping: {why}");
        return;
    }
    for path in [HELLO, RESOLVER_LOG] {
        assert!(
            !Path::new(path).exists(),
            "{path} exists already: the README's script would overwrite it"
        );
    }
    let deb = build_package();
    let script = common::doc_block(
        "docs/src/administrators-guide.md",
        "\n### From the package to a persistent URL, on one machine\n",
        "sh",
    );
    // The package it installs is the one just built.
    let installs = "dpkg -i target/debian/ibi-archive_0.1.0-1_amd64.deb\n";
    assert!(script.starts_with(installs), "{script}");
    assert_eq!(
        fs::read(repo().join(installs.trim_end().rsplit(' ').next().unwrap())).unwrap(),
        fs::read(&deb).unwrap(),
        "the README's .deb is not the one cargo deb made"
    );

    let mut machine = Machine {
        resolver: None,
        instances: Vec::new(),
        files: Vec::new(),
        apache_was_running: apache_running(),
        apache_changed: true,
        modules_enabled: APACHE_MODULES
            .iter()
            .copied()
            .filter(|m| !Path::new(&format!("/etc/apache2/mods-enabled/{m}.load")).exists())
            .collect(),
        installed: true,
        archive: true,
    };
    let _files = Remove(&[HELLO, RESOLVER_LOG]);
    let out_dir = tempfile::tempdir().unwrap();
    let (stdout_path, stderr_path) = (out_dir.path().join("out"), out_dir.path().join("err"));
    // Files, not pipes: the resolver the script leaves running keeps what it inherited.
    let status = Command::new("sh")
        .args(["-e", "-c", &script])
        .current_dir(repo())
        .stdin(Stdio::null())
        .stdout(fs::File::create(&stdout_path).unwrap())
        .stderr(fs::File::create(&stderr_path).unwrap())
        .status()
        .unwrap();
    let stdout = fs::read_to_string(&stdout_path).unwrap();
    let stderr = fs::read_to_string(&stderr_path).unwrap();
    let resolver_log = fs::read_to_string(RESOLVER_LOG).unwrap_or_default();
    assert!(
        status.success(),
        "the README's script: {status}\n--- stdout\n{stdout}\n--- stderr\n{stderr}\n--- resolver\n{resolver_log}\n--- Apache\n{}",
        apache_log()
    );

    // The Archive it made: its service item and the one item of hello.txt.
    let root = Path::new(ARCHIVE_ROOT);
    let service = toml_value(&root.join("archive.toml"), "", "archiveserviceibi");
    let resolver_ibi = toml_value(Path::new(RESOLVER_TOML), "", "serviceibi");
    // The one resolver, in a [[registration.resolver]] table with the key registered there.
    let archive: toml::Table = fs::read_to_string(root.join("archive.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let resolvers = archive["registration"]["resolver"].as_array().unwrap();
    assert_eq!(resolvers.len(), 1, "{resolvers:?}");
    assert_eq!(
        resolvers[0]["url"].as_str(),
        Some(format!("http://127.0.0.1:8090/{resolver_ibi}").as_str())
    );
    assert!(resolvers[0]["key"].as_str().is_some_and(|k| !k.is_empty()));
    // The reps of host archive.example.org, port 80: example.org/archive/<year>/<stamp>.
    let mut reps = Vec::new();
    for year in fs::read_dir(root.join("col/example.org/archive")).unwrap() {
        let year = year.unwrap();
        for stamp in fs::read_dir(year.path()).unwrap() {
            let rep = format!(
                "example.org/archive/{}/{}",
                year.file_name().to_str().unwrap(),
                stamp.unwrap().file_name().to_str().unwrap()
            );
            if rep != service {
                reps.push(rep);
            }
        }
    }
    assert_eq!(reps.len(), 1, "{reps:?}");
    let rep = &reps[0];
    assert_eq!(
        fs::read_to_string(root.join("col").join(rep).join("doc/hello.txt")).unwrap(),
        "Hello, IBI\n"
    );
    let tail: Vec<&str> = stdout.lines().rev().take(5).collect::<Vec<_>>();
    assert_eq!(
        tail.into_iter().rev().collect::<Vec<_>>(),
        [
            format!("registered {service}"),
            "status.archive included".to_string(),
            "status.confirmation successful".to_string(),
            format!("location: http://localhost/col/{rep}/doc/hello.txt"),
            "Hello, IBI".to_string(),
        ],
        "the README's script printed:\n{stdout}\n--- stderr\n{stderr}"
    );
    // The registry and the settings stayed the resolver's, as the package made them.
    let user = passwd(RESOLVER_USER).unwrap();
    let (uid, gid) = (
        user[2].parse::<u32>().unwrap(),
        user[3].parse::<u32>().unwrap(),
    );
    assert_eq!(mode(RESOLVER_TOML), (0, gid, 0o640));
    assert_eq!(
        mode(&format!("{RESOLVER_STATE}/resolver.sqlite")),
        (uid, gid, 0o600)
    );
    machine.restore();
}

/// What the README's script writes outside the package's paths.
const HELLO: &str = "/tmp/hello.txt";
const RESOLVER_LOG: &str = "/var/log/ibi-resolver.log";

/// Removes the files when dropped.
struct Remove(&'static [&'static str]);

impl Drop for Remove {
    fn drop(&mut self) {
        for path in self.0 {
            let _ = fs::remove_file(path);
        }
    }
}
