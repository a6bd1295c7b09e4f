//! Starting Debian's apache2 and lighttpd on 127.0.0.1 with the repository's
//! `cgi-bin/` configurations (or apache2 with another configuration file of the
//! repository inside a `<VirtualHost>`: [`start_apache2_vhost`]), and stopping them again.
//!
//! Each server gets its own temporary directory (main configuration, logs,
//! pid file, cgid socket) and a free port, so tests may start servers in
//! parallel.  The main configuration is generated; it mirrors the parts of
//! Debian's stock apache2.conf / lighttpd.conf that matter here (including
//! their less careful defaults: directory listings on, symbolic links
//! followed) and then includes the `cgi-bin/` snippet unchanged, after
//! defining its three parameters.
//!
//! The server runs in the foreground as a child of the test process, in a
//! process group of its own.  Dropping the [`Server`] (also while a failing
//! test unwinds) sends SIGTERM to the main process, waits for it, and then
//! kills whatever is left in its process group (workers, the cgid daemon,
//! CGI programs), so that no server process outlives the test.
//!
//! When the tests run as root, the servers switch to www-data: the Archive
//! root and the CGI executable must then be reachable by www-data (see
//! [`super::prepare_archive`] and [`super::archive_tempdir`]).
//! An executable that www-data cannot run is copied into the server's
//! directory first.

use std::fmt::Write as _;
use std::fs;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use super::fsutil::{assert_reachable, executable_by_others, server_user};

/// How long a server may take to answer its first request.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the main process may take to exit after SIGTERM before the
/// whole process group is killed.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);

const APACHE2_BIN: &str = "/usr/sbin/apache2";
const APACHE2_MODULES: &str = "/usr/lib/apache2/modules";
const APACHE2_REQUIRED_MODULES: &[(&str, &str)] = &[
    ("mpm_event_module", "mod_mpm_event.so"),
    ("authz_core_module", "mod_authz_core.so"),
    ("authz_host_module", "mod_authz_host.so"),
    ("mime_module", "mod_mime.so"),
    ("alias_module", "mod_alias.so"),
    ("cgid_module", "mod_cgid.so"),
    ("env_module", "mod_env.so"),
    ("dir_module", "mod_dir.so"),
    // Loaded only to prove the snippet turns listings off.
    ("autoindex_module", "mod_autoindex.so"),
];
const LIGHTTPD_BIN: &str = "/usr/sbin/lighttpd";
const LIGHTTPD_MODULES: &str = "/usr/lib/lighttpd";
const LIGHTTPD_REQUIRED_MODULES: &[&str] = &["mod_cgi.so", "mod_dirlisting.so"];

/// The configurations under test, as they are in the repository.
pub const APACHE2_SNIPPET: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/cgi-bin/apache2/ibi-archive.conf"
);
pub const LIGHTTPD_SNIPPET: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/cgi-bin/lighttpd/ibi-archive.conf"
);

/// The environment the servers (and, for Apache, the CGI program) get.
const SERVER_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// True if apache2 and the modules the harness loads are installed (and,
/// when running as root, the www-data user exists).
pub fn apache2_available() -> bool {
    let found = Path::new(APACHE2_BIN).is_file()
        && APACHE2_REQUIRED_MODULES
            .iter()
            .all(|(_, so)| Path::new(APACHE2_MODULES).join(so).is_file())
        && Path::new(APACHE2_SNIPPET).is_file()
        && www_data_ok();
    required_under_ci(found, "apache2 (with mod_cgid)")
}

/// True if apache2, the modules the harness loads but mod_cgid, and `modules` (file
/// names in Debian's module directory, such as `mod_proxy.so`) are installed (and, when
/// running as root, the www-data user exists): what [`start_apache2_vhost`] needs.
pub fn apache2_available_with(modules: &[&str]) -> bool {
    let found = Path::new(APACHE2_BIN).is_file()
        && vhost_base_modules()
            .map(|(_, so)| so)
            .chain(modules.iter().copied())
            .all(|so| Path::new(APACHE2_MODULES).join(so).is_file())
        && www_data_ok();
    required_under_ci(found, &format!("apache2 (with {})", modules.join(", ")))
}

/// Under `CI=true` every server must be there: a test that would skip fails instead.
/// Returns `found`; `what` names what is missing.
pub fn required_under_ci(found: bool, what: &str) -> bool {
    if !found && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true and {what} is not installed: .ci/run installs it");
    }
    found
}

/// True if lighttpd and its mod_cgi are installed (and, when running as
/// root, the www-data user exists).
pub fn lighttpd_available() -> bool {
    let found = Path::new(LIGHTTPD_BIN).is_file()
        && LIGHTTPD_REQUIRED_MODULES
            .iter()
            .all(|so| Path::new(LIGHTTPD_MODULES).join(so).is_file())
        && Path::new(LIGHTTPD_SNIPPET).is_file()
        && www_data_ok();
    required_under_ci(found, "lighttpd (with mod_cgi)")
}

fn www_data_ok() -> bool {
    !super::fsutil::running_as_root() || super::fsutil::www_data_ids().is_some()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerKind {
    Apache2,
    Lighttpd,
}

impl ServerKind {
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Apache2 => "apache2",
            ServerKind::Lighttpd => "lighttpd",
        }
    }
}

/// A running web server; stopped (with all its processes) when dropped.
pub struct Server {
    /// "http://127.0.0.1:<port>", without a trailing slash.
    pub base_url: String,
    pub kind: ServerKind,
    pub port: u16,
    child: Option<Child>,
    config_file: PathBuf,
    pid_file: PathBuf,
    error_log: PathBuf,
    stdio_log: PathBuf,
    // Last, so that it is deleted after the processes are gone.
    dir: tempfile::TempDir,
}

/// Starts apache2 (event MPM, mod_cgid) with `cgi-bin/apache2/ibi-archive.conf`,
/// serving the Archive at `root` and running `bin` at `/<service_ibi>`.
pub fn start_apache2(root: &Path, bin: &Path, service_ibi: &str) -> Server {
    start(ServerKind::Apache2, root, bin, service_ibi)
}

/// Starts lighttpd with `cgi-bin/lighttpd/ibi-archive.conf`, serving the
/// Archive at `root` and running `bin` at `/<service_ibi>`.
pub fn start_lighttpd(root: &Path, bin: &Path, service_ibi: &str) -> Server {
    start(ServerKind::Lighttpd, root, bin, service_ibi)
}

/// Starts apache2 (event MPM) with `conf` included, unchanged, inside the one
/// `<VirtualHost>` of its port, as a site of Debian's includes a file of its own:
///
/// ```text
/// <VirtualHost *:PORT>
///     ServerName 127.0.0.1
///     Include "CONF"
/// </VirtualHost>
/// ```
///
/// The main configuration is the one [`start_apache2`] writes, without mod_cgid and the
/// Archive's snippet, with `modules` (file names such as `mod_proxy.so`, in the order
/// given) loaded too, and with what Debian's apache2.conf and its default
/// conf-enabled/other-vhosts-access-log.conf add for logging: the LogFormats `combined`,
/// `vhost_combined`, `common`, and a server-wide
/// `CustomLog ${APACHE_LOG_DIR}/other_vhosts_access.log vhost_combined`.
/// `APACHE_LOG_DIR` (set by Debian's envvars) is the server's directory
/// ([`Server::dir`]), where the log files a configuration names can be read.
pub fn start_apache2_vhost(conf: &Path, modules: &[&str]) -> Server {
    let conf =
        fs::canonicalize(conf).unwrap_or_else(|e| panic!("configuration {}: {e}", conf.display()));
    check_writable("configuration", conf.to_str().unwrap_or("\""));
    let modules: Vec<(String, String)> = modules
        .iter()
        .map(|so| {
            let stem = so
                .strip_prefix("mod_")
                .and_then(|s| s.strip_suffix(".so"))
                .filter(|s| {
                    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                })
                .unwrap_or_else(|| panic!("{so:?} is not a module file name such as mod_proxy.so"));
            (format!("{stem}_module"), so.to_string())
        })
        .collect();
    start_site(ServerKind::Apache2, &Site::VirtualHost { conf, modules })
}

/// A CGI program that stands in for ibi-archive where only a web server's configuration
/// is under test: it echoes what it was given. It reads the request body first, as a CGI
/// program must under mod_cgid (see cgi-bin/README.md); lighttpd gives it no PATH, hence
/// the absolute paths. Its answer, text/plain:
///
/// - for `SCRIPT_NAME=/col` (the items' files): `file uri=REQUEST_URI path=PATH_INFO
///   root=IBI_ARCHIVE_ROOT`;
/// - otherwise `method=REQUEST_METHOD path=PATH_INFO query=QUERY_STRING
///   root=IBI_ARCHIVE_ROOT`, then for the query `dumpenv` its whole environment (sorted
///   `NAME=value` lines), and for `slow` a second line, `second part`, half a second
///   later.
///
/// It writes `echo-cgi stderr: method=... path=... query=...` to its stderr.
pub const ECHO_CGI: &str = r#"#!/bin/sh
if [ -n "$CONTENT_LENGTH" ] && [ "$CONTENT_LENGTH" -gt 0 ]; then
    /usr/bin/head -c "$CONTENT_LENGTH" > /dev/null
fi
printf 'echo-cgi stderr: method=%s path=%s query=%s\n' "$REQUEST_METHOD" "$PATH_INFO" "$QUERY_STRING" >&2
printf 'Content-Type: text/plain\r\n\r\n'
if [ "$SCRIPT_NAME" = /col ]; then
    printf 'file uri=%s path=%s root=%s\n' "$REQUEST_URI" "$PATH_INFO" "$IBI_ARCHIVE_ROOT"
    exit 0
fi
printf 'method=%s path=%s query=%s root=%s\n' "$REQUEST_METHOD" "$PATH_INFO" "$QUERY_STRING" "$IBI_ARCHIVE_ROOT"
if [ "$QUERY_STRING" = dumpenv ]; then
    /usr/bin/env | /usr/bin/sort
fi
if [ "$QUERY_STRING" = slow ]; then
    /bin/sleep 0.5
    printf 'second part\n'
fi
"#;

/// Writes [`ECHO_CGI`] as `dir/echo-cgi` (`dir` is created), executable by everyone and
/// in a directory everyone may search; returns its path.
pub fn write_echo_cgi(dir: &Path) -> PathBuf {
    fs::create_dir_all(dir).unwrap_or_else(|e| panic!("mkdir {}: {e}", dir.display()));
    fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).unwrap();
    let script = dir.join("echo-cgi");
    fs::write(&script, ECHO_CGI).unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// What a server is started with.
enum Site<'a> {
    /// The `cgi-bin/` snippet, serving the Archive at `root` with `bin` at `/<service_ibi>`.
    Archive {
        root: PathBuf,
        bin: PathBuf,
        service_ibi: &'a str,
    },
    /// A configuration file included in a `<VirtualHost>`, with more modules (apache2 only).
    VirtualHost {
        conf: PathBuf,
        modules: Vec<(String, String)>,
    },
}

enum Startup {
    Ready,
    PortTaken,
    Failed(String),
}

/// Panics unless `value` can be written into a server configuration between double
/// quotes (and used as a path there: no glob characters).
fn check_writable(what: &str, value: &str) {
    assert!(
        !value.is_empty() && !value.contains(['"', '\\', '$', '\n', '\r', '*', '?', '[', ']']),
        "{what} {value:?} cannot be written into the server configuration"
    );
}

fn start(kind: ServerKind, root: &Path, bin: &Path, service_ibi: &str) -> Server {
    // A root free of symbolic links: lighttpd refuses to serve through any
    // (server.follow-symlink = "disable" below /col/), and on some systems
    // the temporary directory is one.
    let root =
        fs::canonicalize(root).unwrap_or_else(|e| panic!("Archive root {}: {e}", root.display()));
    let bin = fs::canonicalize(bin).unwrap_or_else(|e| panic!("executable {}: {e}", bin.display()));
    assert_reachable(&root.join("col"), "Archive directory");
    for (what, value) in [
        ("Archive root", root.to_str().unwrap_or("\"")),
        ("executable", bin.to_str().unwrap_or("\"")),
        ("service IBI", service_ibi),
    ] {
        check_writable(what, value);
    }
    assert!(
        !service_ibi.starts_with('/'),
        "the service IBI is given without a leading slash"
    );
    start_site(
        kind,
        &Site::Archive {
            root,
            bin,
            service_ibi,
        },
    )
}

fn start_site(kind: ServerKind, site: &Site) -> Server {
    // A port that was free a moment ago can be taken by a parallel test
    // before the server binds it: then try again with another one.
    let mut last_error = String::new();
    for _attempt in 0..5 {
        let port = free_port();
        let mut server = spawn(kind, site, port);
        match server.wait_ready() {
            Startup::Ready => return server,
            Startup::PortTaken => {
                last_error = server.error_log();
                drop(server);
            }
            Startup::Failed(why) => {
                let log = server.error_log();
                let config = fs::read_to_string(&server.config_file).unwrap_or_default();
                drop(server);
                panic!(
                    "{} did not start: {why}\n--- main configuration ---\n{config}\n--- error log ---\n{log}",
                    kind.name()
                );
            }
        }
    }
    panic!(
        "{} could not bind a free port in 5 attempts; last log:\n{last_error}",
        kind.name()
    );
}

/// A port of 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("cannot bind 127.0.0.1:0");
    listener.local_addr().unwrap().port()
}

/// Waits, at most [`STARTUP_TIMEOUT`], until 127.0.0.1:`port` accepts connections: a
/// server started by hand (a daemon, or `child`, a process this test started, whose exit
/// ends the wait). Err says why it does not.
pub fn wait_for_port(port: u16, mut child: Option<&mut Child>) -> Result<(), String> {
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    loop {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(());
        }
        if let Some(child) = child.as_mut() {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!(
                    "it exited with {status} before listening on port {port}"
                ));
            }
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "nothing listened on 127.0.0.1:{port} within {STARTUP_TIMEOUT:?}"
            ));
        }
        sleep(Duration::from_millis(20));
    }
}

fn spawn(kind: ServerKind, site: &Site, port: u16) -> Server {
    let dir = tempfile::Builder::new()
        .prefix(&format!("ibi-archive-httpd-{}-", kind.name()))
        .tempdir()
        .expect("cannot create the server's temporary directory");
    let d = dir.path().to_path_buf();
    // www-data must reach the cgid socket, the htdocs and (maybe) the copy
    // of the executable in here; nothing in it is secret.
    fs::set_permissions(&d, fs::Permissions::from_mode(0o755)).unwrap();
    let htdocs = d.join("htdocs");
    fs::create_dir(&htdocs).unwrap();
    fs::write(htdocs.join("index.html"), "ibi-archive test server\n").unwrap();
    fs::set_permissions(htdocs.join("index.html"), fs::Permissions::from_mode(0o644)).unwrap();
    fs::set_permissions(&htdocs, fs::Permissions::from_mode(0o755)).unwrap();

    // The executable itself if www-data may run it where it is, else a copy.
    let site = match site {
        Site::Archive {
            root,
            bin,
            service_ibi,
        } => Site::Archive {
            root: root.clone(),
            bin: usable_bin(bin, &d),
            service_ibi,
        },
        Site::VirtualHost { conf, modules } => Site::VirtualHost {
            conf: conf.clone(),
            modules: modules.clone(),
        },
    };
    let error_log = d.join("error.log");
    let stdio_log = d.join("stdio.log");
    let pid_file = d.join(format!("{}.pid", kind.name()));
    // lighttpd opens its error log after switching to www-data.
    fs::write(&error_log, "").unwrap();
    let uploads = d.join("uploads");
    fs::create_dir(&uploads).unwrap();
    if let Some(ids) = server_user() {
        std::os::unix::fs::chown(&error_log, Some(ids.0), Some(ids.1)).unwrap();
        std::os::unix::fs::chown(&uploads, Some(ids.0), Some(ids.1)).unwrap();
    }

    let (config_file, mut cmd) = match (kind, &site) {
        (ServerKind::Apache2, _) => {
            let conf = apache2_config(&d, &site, port, &pid_file, &error_log);
            let file = d.join("apache2.conf");
            fs::write(&file, conf).unwrap();
            let mut cmd = Command::new(APACHE2_BIN);
            cmd.arg("-f").arg(&file).arg("-DFOREGROUND");
            (file, cmd)
        }
        (
            ServerKind::Lighttpd,
            Site::Archive {
                root,
                bin,
                service_ibi,
            },
        ) => {
            let conf = lighttpd_config(&d, root, bin, service_ibi, port, &pid_file, &error_log);
            let file = d.join("lighttpd.conf");
            fs::write(&file, conf).unwrap();
            let mut cmd = Command::new(LIGHTTPD_BIN);
            cmd.arg("-D").arg("-f").arg(&file);
            (file, cmd)
        }
        (ServerKind::Lighttpd, Site::VirtualHost { .. }) => {
            panic!("only apache2 is started with a <VirtualHost>")
        }
    };
    let stdio = fs::File::create(&stdio_log).unwrap();
    cmd.current_dir(&d).env_clear();
    if let Site::VirtualHost { .. } = &site {
        // As Debian's envvars exports it.
        cmd.env("APACHE_LOG_DIR", &d);
    }
    cmd.env("PATH", SERVER_PATH)
        .env("LANG", "C")
        .stdin(Stdio::null())
        .stdout(stdio.try_clone().unwrap())
        .stderr(stdio)
        // Its own process group, so that everything it forks can be found
        // (and killed) again, and a Ctrl-C in the terminal reaches the test
        // runner only.
        .process_group(0);
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", kind.name()));
    Server {
        base_url: format!("http://127.0.0.1:{port}"),
        kind,
        port,
        child: Some(child),
        config_file,
        pid_file,
        error_log,
        stdio_log,
        dir,
    }
}

/// The executable itself if www-data may run it where it is, else a copy
/// in the server's directory.
fn usable_bin(bin: &Path, server_dir: &Path) -> PathBuf {
    if server_user().is_none() || executable_by_others(bin) {
        return bin.to_path_buf();
    }
    let copy_dir = server_dir.join("bin");
    fs::create_dir(&copy_dir).unwrap();
    fs::set_permissions(&copy_dir, fs::Permissions::from_mode(0o755)).unwrap();
    let copy = copy_dir.join(bin.file_name().unwrap());
    fs::copy(bin, &copy).unwrap_or_else(|e| panic!("copy {}: {e}", bin.display()));
    fs::set_permissions(&copy, fs::Permissions::from_mode(0o755)).unwrap();
    copy
}

/// The modules loaded for [`start_apache2_vhost`] before its own: those of the
/// Archive's server but mod_cgid.
fn vhost_base_modules() -> impl Iterator<Item = (&'static str, &'static str)> {
    APACHE2_REQUIRED_MODULES
        .iter()
        .copied()
        .filter(|(name, _)| *name != "cgid_module")
}

fn apache2_config(dir: &Path, site: &Site, port: u16, pid_file: &Path, error_log: &Path) -> String {
    let d = dir.display();
    let mut c = String::new();
    writeln!(c, "# Generated by tests/common for one test server.").unwrap();
    writeln!(c, "ServerRoot \"{d}\"").unwrap();
    writeln!(c, "DefaultRuntimeDir \"{d}\"").unwrap();
    writeln!(c, "PidFile \"{}\"", pid_file.display()).unwrap();
    writeln!(c, "Mutex file:{d} default").unwrap();
    writeln!(c, "ErrorLog \"{}\"", error_log.display()).unwrap();
    writeln!(c, "LogLevel warn").unwrap();
    writeln!(c, "ServerName 127.0.0.1").unwrap();
    writeln!(c, "Listen 127.0.0.1:{port}").unwrap();
    if server_user().is_some() {
        writeln!(c, "User www-data\nGroup www-data").unwrap();
    }
    match site {
        Site::Archive { .. } => {
            for (name, so) in APACHE2_REQUIRED_MODULES {
                writeln!(c, "LoadModule {name} {APACHE2_MODULES}/{so}").unwrap();
            }
            writeln!(c, "ScriptSock \"{d}/cgisock\"").unwrap();
        }
        Site::VirtualHost { modules, .. } => {
            for (name, so) in vhost_base_modules() {
                writeln!(c, "LoadModule {name} {APACHE2_MODULES}/{so}").unwrap();
            }
            for (name, so) in modules {
                writeln!(c, "LoadModule {name} {APACHE2_MODULES}/{so}").unwrap();
            }
        }
    }
    let types = if Path::new("/etc/mime.types").is_file() {
        PathBuf::from("/etc/mime.types")
    } else {
        let empty = dir.join("mime.types");
        fs::write(&empty, "").unwrap();
        empty
    };
    c.push_str(&format!(
        r#"TypesConfig "{types}"
# Small and quick to stop.
StartServers 1
ServerLimit 2
ThreadsPerChild 8
MaxRequestWorkers 16
MinSpareThreads 8
MaxSpareThreads 16
Timeout 30
KeepAlive On
KeepAliveTimeout 5
# As in Debian's apache2.conf and mods-available/dir.conf, but with
# listings allowed everywhere: the snippet must switch them off itself.
DirectoryIndex index.html index.cgi index.pl index.php index.xhtml index.htm
<Directory />
    Options Indexes FollowSymLinks
    AllowOverride None
    Require all denied
</Directory>
DocumentRoot "{d}/htdocs"
<Directory "{d}/htdocs">
    Options Indexes FollowSymLinks
    AllowOverride None
    Require all granted
</Directory>
AccessFileName .htaccess
<FilesMatch "^\.ht">
    Require all denied
</FilesMatch>
"#,
        types = types.display(),
    ));
    match site {
        Site::Archive {
            root,
            bin,
            service_ibi,
        } => {
            c.push_str(&format!(
                r#"
# The snippet's parameters, then the snippet as it is in the repository.
Define IBI_ARCHIVE_ROOT "{root}"
Define IBI_ARCHIVE_SERVICE_IBI "{service_ibi}"
Define IBI_ARCHIVE_BIN "{bin}"
Include "{snippet}"
"#,
                root = root.display(),
                bin = bin.display(),
                snippet = APACHE2_SNIPPET,
            ));
        }
        Site::VirtualHost { conf, .. } => {
            c.push_str(&format!(
                r#"
# As in Debian's apache2.conf and conf-enabled/other-vhosts-access-log.conf.
LogFormat "%v:%p %h %l %u %t \"%r\" %>s %O \"%{{Referer}}i\" \"%{{User-Agent}}i\"" vhost_combined
LogFormat "%h %l %u %t \"%r\" %>s %O \"%{{Referer}}i\" \"%{{User-Agent}}i\"" combined
LogFormat "%h %l %u %t \"%r\" %>s %O" common
CustomLog ${{APACHE_LOG_DIR}}/other_vhosts_access.log vhost_combined

# A site of its own, which includes the configuration under test unchanged.
<VirtualHost *:{port}>
    ServerName 127.0.0.1
    Include "{conf}"
</VirtualHost>
"#,
                conf = conf.display(),
            ));
        }
    }
    c
}

fn lighttpd_config(
    dir: &Path,
    root: &Path,
    bin: &Path,
    service_ibi: &str,
    port: u16,
    pid_file: &Path,
    error_log: &Path,
) -> String {
    let d = dir.display();
    let user = if server_user().is_some() {
        "server.username = \"www-data\"\nserver.groupname = \"www-data\"\n"
    } else {
        ""
    };
    format!(
        r#"# Generated by tests/common for one test server.
server.document-root = "{d}/htdocs"
server.bind = "127.0.0.1"
server.port = {port}
server.errorlog = "{error_log}"
server.pid-file = "{pid_file}"
server.upload-dirs = ( "{d}/uploads" )
{user}
# As in Debian's lighttpd.conf: these modules first, the snippet's (from
# conf-enabled/) next, mod_dirlisting and mod_staticfile last.
server.modules = ( "mod_indexfile", "mod_access", "mod_alias", "mod_redirect" )
server.http-parseopts = (
    "header-strict"            => "enable",
    "host-strict"              => "enable",
    "host-normalize"           => "enable",
    "url-normalize-unreserved" => "enable",
    "url-normalize-required"   => "enable",
    "url-ctrls-reject"         => "enable",
    "url-path-2f-decode"       => "enable",
    "url-path-dotseg-remove"   => "enable",
)
index-file.names = ( "index.php", "index.html" )
url.access-deny = ( "~", ".inc" )
static-file.exclude-extensions = ( ".php", ".pl", ".fcgi" )
mimetype.assign = ( ".html" => "text/html", ".txt" => "text/plain" )
# Less careful than Debian's defaults on purpose: the snippet must switch
# listings off and stop following symbolic links itself.
dir-listing.activate = "enable"
server.follow-symlink = "enable"

# The snippet's parameters, then the snippet as it is in the repository.
var.ibi_archive_root = "{root}"
var.ibi_archive_service_ibi = "{service_ibi}"
var.ibi_archive_bin = "{bin}"
include "{snippet}"

server.modules += ( "mod_dirlisting", "mod_staticfile" )
"#,
        error_log = error_log.display(),
        pid_file = pid_file.display(),
        root = root.display(),
        bin = bin.display(),
        snippet = LIGHTTPD_SNIPPET,
    )
}

impl Server {
    /// `base_url` followed by `path_and_query` (which starts with '/').
    pub fn url(&self, path_and_query: &str) -> String {
        format!("{}{}", self.base_url, path_and_query)
    }

    /// "127.0.0.1:<port>", for [`super::http_raw`].
    pub fn authority(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// PID of the main server process, which is also its process group.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    /// The server's own temporary directory (configuration, logs).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The generated main configuration.
    pub fn main_config(&self) -> String {
        fs::read_to_string(&self.config_file).unwrap_or_default()
    }

    /// The PID recorded in the server's pid file, if any.
    pub fn pid_from_pid_file(&self) -> Option<u32> {
        fs::read_to_string(&self.pid_file).ok()?.trim().parse().ok()
    }

    /// Everything the server logged: its error log, followed by what it (and
    /// its CGI programs) wrote to stdout/stderr.  Apache writes the CGI
    /// program's stderr lines into its error log verbatim (mod_cgid: no
    /// prefix); lighttpd run with -D (as systemd does) leaves them on its own
    /// stderr, which the harness captures.
    pub fn error_log(&self) -> String {
        let mut log =
            String::from_utf8_lossy(&fs::read(&self.error_log).unwrap_or_default()).into_owned();
        let stdio = fs::read(&self.stdio_log).unwrap_or_default();
        if !stdio.is_empty() {
            log.push_str(&String::from_utf8_lossy(&stdio));
        }
        log
    }

    /// Waits (up to `timeout`) until a line of [`Server::error_log`] contains
    /// `needle`, and returns that line.  CGI stderr may reach the log a
    /// little after the response.
    pub fn wait_for_log_line(&self, needle: &str, timeout: Duration) -> Option<String> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(line) = self.error_log().lines().find(|l| l.contains(needle)) {
                return Some(line.to_string());
            }
            if Instant::now() >= deadline {
                return None;
            }
            sleep(Duration::from_millis(25));
        }
    }

    /// Stops the server now (what dropping it does).
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn wait_ready(&mut self) -> Startup {
        let addr: SocketAddr = ([127, 0, 0, 1], self.port).into();
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    let log = self.error_log();
                    return if log.contains("Address already in use") {
                        Startup::PortTaken
                    } else {
                        Startup::Failed(format!("it exited with {status}"))
                    };
                }
            }
            if answers_http(addr) {
                return Startup::Ready;
            }
            if Instant::now() >= deadline {
                return Startup::Failed(format!(
                    "no HTTP answer on {addr} within {STARTUP_TIMEOUT:?}"
                ));
            }
            sleep(Duration::from_millis(50));
        }
    }

    fn shutdown(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pid = child.id();
        if let Ok(None) = child.try_wait() {
            signal("TERM", &pid.to_string());
            let deadline = Instant::now() + SHUTDOWN_TIMEOUT;
            while let Ok(None) = child.try_wait() {
                if Instant::now() >= deadline {
                    eprintln!(
                        "{} (pid {pid}) ignored SIGTERM for {SHUTDOWN_TIMEOUT:?}; killing its process group",
                        self.kind.name()
                    );
                    signal("KILL", &format!("-{pid}"));
                    let _ = child.wait();
                    break;
                }
                sleep(Duration::from_millis(20));
            }
        }
        let _ = child.wait();
        // Workers, the cgid daemon or CGI programs still in the group get a
        // short grace period (Apache's parent stops its children itself),
        // then SIGKILL.  The pid file names the main process; check it too.
        let recorded = self.pid_from_pid_file().filter(|&p| p != pid);
        let grace = Instant::now() + Duration::from_secs(2);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let mut left = living_processes_in_group(pid);
            if let Some(p) = recorded {
                if process_alive(p) && !left.contains(&p) {
                    left.push(p);
                }
            }
            if left.is_empty() {
                return;
            }
            if Instant::now() >= deadline {
                eprintln!(
                    "warning: {} processes still alive after stopping the server: {left:?}",
                    self.kind.name()
                );
                return;
            }
            if Instant::now() >= grace {
                signal("KILL", &format!("-{pid}"));
                if let Some(p) = recorded {
                    if left.contains(&p) {
                        signal("KILL", &p.to_string());
                    }
                }
            }
            sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn answers_http(addr: SocketAddr) -> bool {
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(250)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = s.set_write_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut buf = [0u8; 5];
    s.read_exact(&mut buf).is_ok() && &buf == b"HTTP/"
}

/// `kill -s SIG -- TARGET` (a PID, or -PGID for a process group); errors
/// such as "no such process" are ignored.
fn signal(sig: &str, target: &str) {
    let _ = Command::new("kill")
        .args(["-s", sig, "--", target])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// (pid, state, process group) of every process, from /proc.
fn all_processes() -> Vec<(u32, char, u32)> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir("/proc") else {
        return out;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid pgrp ...": comm may contain anything.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.len() < 3 {
            continue;
        }
        let state = fields[0].chars().next().unwrap_or('?');
        if let Ok(pgrp) = fields[2].parse() {
            out.push((pid, state, pgrp));
        }
    }
    out
}

/// PIDs of the processes of group `pgid` that are still running (zombies,
/// already dead and waiting for their parent, are not counted).
pub fn living_processes_in_group(pgid: u32) -> Vec<u32> {
    all_processes()
        .into_iter()
        .filter(|&(_, state, pgrp)| pgrp == pgid && state != 'Z')
        .map(|(pid, _, _)| pid)
        .collect()
}

/// Whether process `pid` exists and is not a zombie.
pub fn process_alive(pid: u32) -> bool {
    all_processes()
        .into_iter()
        .any(|(p, state, _)| p == pid && state != 'Z')
}

/// PIDs of living processes whose command line contains `needle` (e.g. a
/// server's directory, which appears in its `-f` argument).
pub fn processes_with_cmdline(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for (pid, state, _) in all_processes() {
        if state == 'Z' || pid == std::process::id() {
            continue;
        }
        if let Ok(cmdline) = fs::read(format!("/proc/{pid}/cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(needle) {
                out.push(pid);
            }
        }
    }
    out
}
