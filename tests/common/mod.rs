//! Helpers shared by the integration tests: fixture Archives built from sample-archive/
//! in temporary directories, and the real binary run as a CGI program or a command.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ibi-archive"))
}

/// The repository's sample Archive.
pub fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-archive")
}

/// Copies a tree, keeping symlinks as symlinks.
pub fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), &to).unwrap();
        } else if kind.is_dir() {
            copy_tree(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
}

/// The relation subset of Example 9.2 of the resolution standard.
pub const RELATIONS_OF_EXAMPLE_9_2: &str = r#"relations = ["", ".lastedition", ".lastedition.metadata", ".lastedition.metadata(oai_dc)", ".metadata", ".metadata(oai_dc)", ".metadata.translation", ".translation(en)", ".translation(pt)"]"#;

/// The Archive of Examples 9.2, 9.3, 10.1 and 10.2: mtc-m16c.sid.inpe.br.
pub fn mtc_m16c_toml() -> String {
    format!(
        "archiveaddress = \"mtc-m16c.sid.inpe.br\"\narchiveserviceibi = \"sid.inpe.br/mtc-m18@80/2008/03.17.15.17\"\nplatformsoftware = \"dpi.inpe.br/banon/1998/08.02.08.56\"\n{RELATIONS_OF_EXAMPLE_9_2}\n"
    )
}

/// The Archive of Examples 6.1, 6.2 and 9.4–9.12: mtc-m16d.sid.inpe.br.
pub const MTC_M16D_TOML: &str = "archiveaddress = \"mtc-m16d.sid.inpe.br\"\narchiveserviceibi = \"sid.inpe.br/mtc-m19@80/2009/08.21.17.02\"\nplatformsoftware = \"dpi.inpe.br/banon/1998/08.02.08.56\"\n\n[access]\nnetworks = [\"150.163.0.0/16\"]\n";

/// A copy of sample-archive/ in a temporary directory.
pub struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    /// The sample Archive as it is.
    pub fn sample() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(&sample(), dir.path());
        let _ = std::fs::remove_dir_all(dir.path().join("var"));
        Fixture { dir }
    }

    /// The sample Archive's items under another archive.toml.
    pub fn with_config(archive_toml: &str) -> Fixture {
        let f = Fixture::sample();
        f.write("archive.toml", archive_toml.as_bytes());
        f
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, bytes: &[u8]) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }

    pub fn remove(&self, rel: &str) {
        let p = self.path(rel);
        if p.is_dir() {
            std::fs::remove_dir_all(p).unwrap();
        } else {
            std::fs::remove_file(p).unwrap();
        }
    }
}

/// What a CGI run printed.
#[derive(Debug)]
pub struct CgiOutput {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub stderr: String,
}

impl CgiOutput {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).expect("answer is ASCII")
    }
}

/// A CGI request to the binary.
pub struct Cgi<'a> {
    pub root: &'a Path,
    pub method: &'a str,
    pub query: &'a [u8],
    pub path_info: &'a str,
    pub remote_addr: &'a str,
}

impl<'a> Cgi<'a> {
    pub fn get(root: &'a Path, query: &'a str) -> Cgi<'a> {
        Cgi {
            root,
            method: "GET",
            query: query.as_bytes(),
            path_info: "",
            remote_addr: "127.0.0.1",
        }
    }

    /// Runs the binary as a web server would, with a clean environment.
    pub fn run(&self) -> CgiOutput {
        use std::os::unix::ffi::OsStrExt;
        let out = Command::new(bin())
            .env_clear()
            .env("GATEWAY_INTERFACE", "CGI/1.1")
            .env("SERVER_PROTOCOL", "HTTP/1.1")
            .env("REQUEST_METHOD", self.method)
            .env("QUERY_STRING", std::ffi::OsStr::from_bytes(self.query))
            .env("PATH_INFO", self.path_info)
            .env("SCRIPT_NAME", "/sid.inpe.br/mtc-m18@80/2008/03.17.15.17")
            .env("REMOTE_ADDR", self.remote_addr)
            .env("IBI_ARCHIVE_ROOT", self.root)
            .stdin(Stdio::null())
            .output()
            .expect("run ibi-archive");
        assert!(
            out.status.success(),
            "CGI exited with {:?}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        parse_cgi(
            &out.stdout,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// Splits CGI output into status, headers and body.
pub fn parse_cgi(stdout: &[u8], stderr: String) -> CgiOutput {
    let split = stdout
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| {
            panic!(
                "no end of CGI headers in {:?}",
                String::from_utf8_lossy(stdout)
            )
        });
    let head = std::str::from_utf8(&stdout[..split]).unwrap();
    let mut status = 200;
    let mut headers = Vec::new();
    for line in head.split("\r\n") {
        let (name, value) = line
            .split_once(": ")
            .unwrap_or_else(|| panic!("bad header line {line:?}"));
        if name == "Status" {
            status = value[..3].parse().unwrap();
        } else {
            headers.push((name.to_string(), value.to_string()));
        }
    }
    CgiOutput {
        status,
        headers,
        body: stdout[split + 4..].to_vec(),
        stderr,
    }
}

/// Runs an administrator's command; returns (exit code, stdout, stderr).
pub fn run_cmd(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin())
        .args(args)
        .env_remove("GATEWAY_INTERFACE")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Rule `chave` of Table 7.1 of the resolution standard: `número ["-" número]`, each
/// number of 10 or more digits.
pub fn is_chave(key: &str) -> bool {
    let number = |n: &str| n.len() >= 10 && n.bytes().all(|b| b.is_ascii_digit());
    match key.split_once('-') {
        Some((a, b)) => number(a) && number(b),
        None => number(key),
    }
}

/// Replaces the value of the `urlkey` pair by `<urlkey>` after checking its grammar;
/// returns the text and the key.
pub fn mask_urlkey(text: &str) -> (String, Option<String>) {
    let mut key = None;
    let masked: Vec<String> = text
        .split("\r\n")
        .map(|line| match line.strip_prefix("urlkey ") {
            Some(k) => {
                assert!(is_chave(k), "urlkey {k:?} does not follow rule chave");
                key = Some(k.to_string());
                "urlkey <urlkey>".to_string()
            }
            None => line.to_string(),
        })
        .collect();
    (masked.join("\r\n"), key)
}
