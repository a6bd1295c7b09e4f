//! Faults of the service's own state when an acknowledgment arrives: var/ unwritable (for
//! root, who writes through permissions: the log a directory, var/ a file) and the disk
//! full (a tiny tmpfs mounted on var/; skipped when mounting is not allowed). The answer
//! always goes out, the error log gets exactly one line, and the access log keeps whole
//! lines only.

use std::path::{Path, PathBuf};

use common::{Cgi, Fixture, LK47};
use ibi_archive::acklog::Record;

const NOTICE: &str = "notice {acknowledgment received}";

fn pair<'a>(text: &'a str, name: &str) -> &'a str {
    text.split("\r\n")
        .find_map(|l| l.strip_prefix(name).and_then(|v| v.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no {name} in {text:?}"))
}

/// A (url, key) pair issued by the Archive at `root`.
fn issued(root: &Path) -> (String, String) {
    let text = Cgi::get(root, LK47).run().text();
    (
        pair(&text, "url").to_string(),
        pair(&text, "urlkey").to_string(),
    )
}

fn ack(root: &Path, (url, key): &(String, String)) -> common::CgiOutput {
    let out = Cgi::get(
        root,
        &format!("servicesubject=acknowledgment&contenttype=Data&url={url}&urlkey={key}"),
    )
    .run();
    assert_eq!((out.status, out.text().as_str()), (200, NOTICE));
    out
}

#[test]
fn the_access_log_is_a_directory() {
    let f = Fixture::sample();
    let k = issued(f.root());
    std::fs::create_dir_all(f.path("var/acknowledgments.log")).unwrap();
    let out = ack(f.root(), &k);
    assert_eq!(
        out.stderr,
        format!(
            "ibi-archive: acknowledgment not counted: cannot write {}: Is a directory (os error 21)\n",
            f.path("var/acknowledgments.log").display()
        )
    );
}

#[test]
fn var_is_a_file() {
    let f = Fixture::sample();
    let k = issued(f.root());
    f.remove("var");
    f.write("var", b"not a directory\n");
    let out = ack(f.root(), &k);
    assert_eq!(
        out.stderr,
        format!(
            "ibi-archive: {}: Not a directory (os error 20); acknowledgments cannot be counted\n",
            f.path("var/urlkey.secret").display()
        )
    );
    assert_eq!(
        std::fs::read(f.path("var")).unwrap(),
        b"not a directory\n",
        "var/ (a file) was written"
    );
}

#[test]
fn the_urlkey_secret_is_garbage() {
    let f = Fixture::sample();
    let k = issued(f.root());
    f.write("var/urlkey.secret", b"not hex\n");
    let out = ack(f.root(), &k);
    assert_eq!(
        out.stderr,
        format!(
            "ibi-archive: {}: not 64 hex digits; acknowledgments cannot be counted\n",
            f.path("var/urlkey.secret").display()
        )
    );
    assert!(!f.path("var/acknowledgments.log").exists());
}

/// A tmpfs mounted on a directory, unmounted when dropped.
struct Mount(PathBuf);

impl Mount {
    fn tmpfs(dir: &Path, size: &str) -> Option<Mount> {
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Mount(dir.to_path_buf()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// Fills the file system of `dir` with `dir/fill`, until no byte more fits.
fn fill(dir: &Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(dir.join("fill")).unwrap();
    let block = vec![b'x'; 4096];
    while f.write_all(&block).is_ok() {}
    for _ in 0..4096 {
        if f.write_all(b"x").is_err() {
            break;
        }
    }
    let _ = f.sync_all();
}

#[test]
fn the_disk_is_full() {
    let f = Fixture::sample();
    std::fs::create_dir_all(f.path("var")).unwrap();
    let Some(_mount) = Mount::tmpfs(&f.path("var"), "64k") else {
        eprintln!(
            "skipping the_disk_is_full: cannot mount a tmpfs here (not root, or no CAP_SYS_ADMIN)"
        );
        return;
    };
    let log = f.path("var/acknowledgments.log");
    let keys: Vec<(String, String)> = (0..3).map(|_| issued(f.root())).collect();
    assert_eq!(ack(f.root(), &keys[0]).stderr, "");
    // A long record that leaves 20 bytes free in the log's last page: the next record
    // only partly fits once the file system is full.
    let len = std::fs::metadata(&log).unwrap().len() as usize;
    let head = "2026-01-01T00:00:00Z\tfiller\t-\t-\t";
    let target = (len / 4096 + 1) * 4096 - 20;
    let filler = format!("{head}{}\n", "x".repeat(target - len - head.len() - 1));
    {
        use std::io::Write;
        let mut w = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        w.write_all(filler.as_bytes()).unwrap();
    }
    let before = std::fs::read(&log).unwrap();
    assert_eq!(before.len(), target);
    fill(&f.path("var"));

    let out = ack(f.root(), &keys[1]);
    assert_eq!(
        out.stderr,
        format!(
            "ibi-archive: acknowledgment not counted: cannot write {}: No space left on device (os error 28)\n",
            log.display()
        )
    );
    let now = std::fs::read(&log).unwrap();
    assert!(
        now == before,
        "the access log changed on a failed write: {} bytes instead of {}, ending {:?}",
        now.len(),
        before.len(),
        String::from_utf8_lossy(&now[now.len().saturating_sub(40)..])
    );

    // Room again: the same acknowledgment now counts, on a line of its own.
    std::fs::remove_file(f.path("var/fill")).unwrap();
    assert_eq!(ack(f.root(), &keys[1]).stderr, "");
    assert_eq!(ack(f.root(), &keys[2]).stderr, "");
    let after = std::fs::read_to_string(&log).unwrap();
    assert!(after.as_bytes().starts_with(&before));
    assert!(after.ends_with('\n'));
    let records: Vec<Record> = after
        .lines()
        .map(|l| Record::parse_line(l).unwrap_or_else(|| panic!("torn line {l:?}")))
        .collect();
    let counted: Vec<&str> = records
        .iter()
        .map(|r| r.key.as_str())
        .filter(|k| *k != "filler")
        .collect();
    assert_eq!(counted, [&keys[0].1, &keys[1].1, &keys[2].1]);
}
