//! The README's walk-through ("Your own Archive, step by step"), run as it stands with
//! Debian's Apache: `init`, the web server's configuration, Apache on port 8081, a new
//! item, the service's answer through Apache and the file it names. The one change made
//! to the block is where the executable is installed from: the one under test, not a
//! release build.
//!
//! It changes the machine as the README says (/srv/archive, /usr/local/bin/ibi-archive and
//! ibi-archive-cgi, two files of /etc/apache2/conf-available, Apache started or reloaded),
//! so it runs as root only, refuses to touch any of these that already exists, and puts
//! everything back when it ends. Under CI=true, what it needs missing is a failure.

use std::path::Path;
use std::process::Command;

use common::required_under_ci;

const ARCHIVE: &str = "/srv/archive";
const INSTALLED: &str = "/usr/local/bin/ibi-archive";
/// The CGI program the web server runs, installed beside it.
const INSTALLED_CGI: &str = "/usr/local/bin/ibi-archive-cgi";
const CONF: &str = "/etc/apache2/conf-available/ibi-archive.conf";
const PORT_CONF: &str = "/etc/apache2/conf-available/ibi-archive-port.conf";
const PORT: u16 = 8081;

fn apache_running() -> bool {
    std::fs::read_to_string("/var/run/apache2/apache2.pid")
        .ok()
        .and_then(|p| p.trim().parse::<u32>().ok())
        .is_some_and(common::process_alive)
}

/// Puts the machine back as it was.
struct Restore {
    apache_was_running: bool,
}

impl Drop for Restore {
    fn drop(&mut self) {
        let run = |args: &[&str]| {
            let _ = Command::new(args[0]).args(&args[1..]).status();
        };
        run(&["a2disconf", "-q", "ibi-archive", "ibi-archive-port"]);
        let _ = std::fs::remove_file(CONF);
        let _ = std::fs::remove_file(PORT_CONF);
        if self.apache_was_running {
            run(&["apache2ctl", "graceful"]);
        } else {
            run(&["apache2ctl", "stop"]);
        }
        let _ = std::fs::remove_dir_all(ARCHIVE);
        let _ = std::fs::remove_file(INSTALLED);
        let _ = std::fs::remove_file(INSTALLED_CGI);
        let _ = std::fs::remove_file("/tmp/hello.txt");
    }
}

#[test]
fn the_readme_walkthrough_serves_a_new_item_through_apache_on_port_8081() {
    let root = common::running_as_root();
    let tools = [
        "/usr/sbin/apache2ctl",
        "/usr/sbin/a2enconf",
        "/usr/bin/curl",
    ]
    .iter()
    .all(|t| Path::new(t).is_file());
    if !required_under_ci(
        root && tools,
        "root with apache2 and curl (the walk-through)",
    ) {
        eprintln!("skipping: the walk-through needs root, apache2 and curl");
        return;
    }
    let taken: Vec<&str> = [ARCHIVE, INSTALLED, INSTALLED_CGI, CONF, PORT_CONF]
        .into_iter()
        .filter(|p| Path::new(p).exists())
        .collect();
    let port_taken = std::net::TcpListener::bind(("127.0.0.1", PORT)).is_err();
    if !required_under_ci(
        taken.is_empty() && !port_taken,
        &format!("a machine without {taken:?} and with port {PORT} free (the walk-through)"),
    ) {
        eprintln!("skipping: {taken:?} exist or port {PORT} is taken: the walk-through would overwrite them");
        return;
    }
    let _restore = Restore {
        apache_was_running: apache_running(),
    };
    let block = common::doc_block(
        "docs/src/administrators-guide.md",
        "## Your own Archive, step by step",
        "sh",
    );
    let release = "target/x86_64-unknown-linux-gnu/release/ibi-archive";
    assert!(block.contains(release), "{block}");
    // (…/release/ibi-archive-cgi too: it is beside ibi-archive in both directories.)
    let script = block.replace(release, common::ibi_archive_bin().to_str().unwrap());
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("set -euo pipefail\n{script}"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");

    // The service's answer (after what a2enmod and apache2ctl say): the new item, its
    // file's URL on port 8081; then the file.
    let answer = &stdout[stdout
        .find("archiveaddress ")
        .unwrap_or_else(|| panic!("{stdout}"))..];
    let lines: Vec<&str> = answer.lines().map(|l| l.trim_end_matches('\r')).collect();
    let rep = lines
        .iter()
        .find_map(|l| l.strip_prefix("ibi {rep "))
        .and_then(|l| l.split(' ').next())
        .unwrap_or_else(|| panic!("no ibi pair in {stdout:?}"));
    assert!(rep.starts_with("example.org/archive.8081/"), "{rep}");
    let service = stderr
        .split("served at http://localhost:8081/")
        .nth(1)
        .and_then(|s| s.lines().next())
        .unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(lines.len(), 10, "{stdout:?}");
    let want = [
        "archiveaddress localhost:8081".to_string(),
        "contenttype Data".into(),
        format!("ibi {{rep {rep} ibip "),
        format!("ibi.archiveservice {{rep {service}}}"),
        "ibi.platformsoftware {}".into(),
        "state Original".into(),
        "timestamp ".into(),
        format!("url http://localhost:{PORT}/col/{rep}/doc/hello.txt"),
        "urlkey ".into(),
        "Hello, IBI".into(),
    ];
    for (line, start) in lines.iter().zip(&want) {
        assert!(
            line.starts_with(start.as_str()),
            "{line:?} is not {start:?}...: {stdout:?}"
        );
    }
    assert_eq!(lines[7], want[7]);
    assert_eq!(lines[9], want[9]);
    // The next steps went to stderr, naming this Archive.
    assert!(
        service.starts_with("example.org/archive.8081/")
            && stderr.contains("ibi-archive: created the Archive /srv/archive, served at"),
        "{stderr}"
    );
}
