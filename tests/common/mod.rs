//! Helpers shared by the integration tests: fixture Archives built from sample-archive/
//! in temporary directories, the real binary run as a CGI program, a command or
//! `ibi-archive serve`, and the `.case` files of tests/data/.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};

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
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        copy_tree(&sample(), dir.path());
        let _ = std::fs::remove_dir_all(dir.path().join("var"));
        // As the README deploys it: the registration key is not for other users.
        let toml = dir.path().join("archive.toml");
        std::fs::set_permissions(&toml, std::fs::Permissions::from_mode(0o640)).unwrap();
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

    /// The names in the fixture's directory `rel`, sorted.
    pub fn names_in(&self, rel: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(rel))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
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

    /// The binary with the environment a web server gives it (and nothing else), not yet
    /// run: for requests that must run in parallel.
    pub fn command(&self) -> Command {
        use std::os::unix::ffi::OsStrExt;
        let mut cmd = Command::new(bin());
        cmd.env_clear()
            .env("GATEWAY_INTERFACE", "CGI/1.1")
            .env("SERVER_PROTOCOL", "HTTP/1.1")
            .env("REQUEST_METHOD", self.method)
            .env("QUERY_STRING", std::ffi::OsStr::from_bytes(self.query))
            .env("PATH_INFO", self.path_info)
            .env("SCRIPT_NAME", "/sid.inpe.br/mtc-m18@80/2008/03.17.15.17")
            .env("REMOTE_ADDR", self.remote_addr)
            .env("IBI_ARCHIVE_ROOT", self.root)
            .stdin(Stdio::null());
        cmd
    }

    /// Runs the binary as a web server would, with a clean environment.
    pub fn run(&self) -> CgiOutput {
        let out = self.command().output().expect("run ibi-archive");
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

/// An administrator's command (the binary with `args`, outside CGI), not yet run: for
/// commands that must run in parallel.
pub fn command(args: &[&str]) -> Command {
    let mut cmd = Command::new(bin());
    // Neither a CGI run nor an Archive root from the environment the tests run in.
    cmd.args(args)
        .env_remove("GATEWAY_INTERFACE")
        .env_remove("IBI_ARCHIVE_ROOT");
    cmd
}

/// Runs an administrator's command; returns (exit code, stdout, stderr).
pub fn run_cmd(args: &[&str]) -> (i32, String, String) {
    let out = command(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs an administrator's command that must succeed and prints pairs (`new`, `init`):
/// its pairs, `(name, value)`, in order.
pub fn pairs_of_run(args: &[&str]) -> Vec<(String, String)> {
    let (code, out, err) = run_cmd(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    assert!(out.ends_with('\n'), "{out:?}");
    pairs_of(out.trim_end())
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

/// `ibi-archive serve` over the Archive at a root, on a free port of 127.0.0.1; killed
/// when dropped (also when the test panics).
pub struct Serve {
    child: Child,
    /// `127.0.0.1:<port>`, where it listens.
    pub address: String,
}

impl Serve {
    /// Starts it, its stderr (the request log) going to `stderr`, and returns once it
    /// listens: its first line on stdout, which gives the address, comes after the bind.
    pub fn start(root: &Path, stderr: impl Into<Stdio>) -> Serve {
        Serve::start_with(root, stderr, &[])
    }

    /// [`Serve::start`] with more arguments (limits).
    pub fn start_with(root: &Path, stderr: impl Into<Stdio>, more: &[&str]) -> Serve {
        let mut args = vec![
            "serve",
            "--root",
            root.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ];
        args.extend_from_slice(more);
        let mut child = command(&args)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // "ibi-archive: serving the Archive at <root> on http://127.0.0.1:PORT/ (Ctrl-C stops)"
        let address = line
            .split(" on http://")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .unwrap_or_else(|| panic!("serve said {line:?}"))
            .to_string();
        Serve { child, address }
    }

    /// `http://127.0.0.1:<port>`, without a trailing slash.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it still runs.
    pub fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Ctrl-C (SIGINT), and the exit status; fails if it has not stopped within 5 s.
    pub fn interrupt(&mut self) -> ExitStatus {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success());
        for _ in 0..100 {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("serve did not stop within 5 s of SIGINT");
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One `.case` file of tests/data/examples/ or tests/data/hostile/ (their README.md say
/// what each field means to the test that runs them).
///
/// The format, the same in both directories:
///
/// ```text
/// # a comment
/// name: value
/// name: value
/// ---
/// body line
/// body line
/// ```
///
/// - The head is everything before the first `---` followed by LF (the `---` line); the
///   body is everything after it, kept as its lines ([`str::lines`]: without their line
///   breaks, and a final line break adds no empty line). The runners join them again with
///   CRLF (text/plain) or LF (text/html).
/// - In the head, lines starting with `#` and blank (or all-white-space) lines are
///   skipped; every other line is `name:value`, split at its first `:`, with one space
///   after the `:` dropped if there is one. A line without `:` fails the load.
/// - `setup`, `stderr` and `header` may be given any number of times: their values are
///   kept in order (the examples give `stderr` at most once). Any other name may be given
///   once (twice fails the load); its value is in [`Case::fields`].
#[derive(Debug)]
pub struct Case {
    /// The file name, `<name>.case`.
    pub name: String,
    /// The fields given once, by name (`archive`, `query`, `status`, …).
    pub fields: BTreeMap<String, String>,
    /// The `setup:` lines, in order.
    pub setup: Vec<String>,
    /// The `stderr:` lines, in order.
    pub stderr: Vec<String>,
    /// The `header:` lines (`Name: value`), in order.
    pub headers: Vec<String>,
    /// The body's lines.
    pub body_lines: Vec<String>,
}

impl Case {
    /// The value of a field given once.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }

    /// Whether the answer carries every `header:` line of the case.
    pub fn check_headers(&self, out: &CgiOutput) -> Result<(), String> {
        for h in &self.headers {
            let (name, value) = h.split_once(": ").unwrap();
            if out.header(name) != Some(value) {
                return Err(format!(
                    "header {name}: {:?} instead of {value:?}",
                    out.header(name)
                ));
            }
        }
        Ok(())
    }

    /// Parses the text of the file `name`.
    pub fn parse(name: &str, text: &str) -> Case {
        let (head, body) = text
            .split_once("---\n")
            .unwrap_or_else(|| panic!("{name}: no ---"));
        let mut case = Case {
            name: name.to_string(),
            fields: BTreeMap::new(),
            setup: Vec::new(),
            stderr: Vec::new(),
            headers: Vec::new(),
            body_lines: body.lines().map(String::from).collect(),
        };
        for line in head
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        {
            let (k, v) = line
                .split_once(':')
                .unwrap_or_else(|| panic!("{name}: bad line {line:?}"));
            let v = v.strip_prefix(' ').unwrap_or(v).to_string();
            match k {
                "setup" => case.setup.push(v),
                "stderr" => case.stderr.push(v),
                "header" => case.headers.push(v),
                _ => {
                    let old = case.fields.insert(k.to_string(), v);
                    assert!(old.is_none(), "{name}: {k} given twice");
                }
            }
        }
        case
    }
}

/// Every `*.case` file of `dir` (relative to the crate), in file-name order.
pub fn load_cases(dir: &str) -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "case"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            Case::parse(&p.file_name().unwrap().to_string_lossy(), &text)
        })
        .collect()
}

/// Loads the cases of `dir` (at least `at_least` of them) and checks each with `check`;
/// then fails once, naming every case that failed and why.
pub fn check_cases(dir: &str, at_least: usize, mut check: impl FnMut(&Case) -> Result<(), String>) {
    let cases = load_cases(dir);
    assert!(cases.len() >= at_least, "only {} cases found", cases.len());
    println!("{}: {} cases", dir, cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        if let Err(e) = check(case) {
            failures.push(format!("== {}\n{e}", case.name));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Compares an answer with the expected text, the `urlkey` value masked as `<urlkey>`
/// (after checking it against rule chave): it must be there exactly when `want` has
/// `urlkey <urlkey>`.
pub fn compare_masked(want: &str, got: &str) -> Result<(), String> {
    let (got, key) = mask_urlkey(got);
    if want.contains("urlkey <urlkey>") != key.is_some() {
        return Err(format!(
            "urlkey expected: {}, present: {}",
            want.contains("urlkey <urlkey>"),
            key.is_some()
        ));
    }
    if got != want {
        return Err(format!(
            "body differs.\n--- want\n{want}\n--- got\n{got}\n---"
        ));
    }
    Ok(())
}

/// The sample Archive's item LK47B6W/362SFKH asked by IBIp, as the resolver asks.
pub const LK47: &str = "servicesubject=urlRequest&clientinformation.ipaddress=150.163.2.175&parsedibiurl.ibi=LK47B6W/362SFKH";

/// Its answer, urlkey masked as `mask_urlkey` does.
pub const LK47_ANSWER: &str = "archiveaddress localhost:8080\r\ncontenttype Data\r\n\
     ibi {rep iconet.com.br/banon/2009/09.09.22.01 ibip LK47B6W/362SFKH}\r\n\
     ibi.archiveservice {rep sid.inpe.br/mtc-m18@80/2008/03.17.15.17}\r\n\
     ibi.platformsoftware {rep dpi.inpe.br/banon/1998/08.02.08.56}\r\nstate Original\r\n\
     timestamp 2009-09-09T22:01:00Z\r\n\
     url http://localhost:8080/col/iconet.com.br/banon/2009/09.09.22.01/doc/@relatorio.pdf\r\n\
     urlkey <urlkey>";

/// The first fenced block of README.md (opened by ` ```<fence>`) after the first place
/// that holds `after`.
pub fn readme_block(after: &str, fence: &str) -> String {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let at = readme
        .find(after)
        .unwrap_or_else(|| panic!("README.md has no {after:?}"));
    let rest = &readme[at..];
    let open = format!("```{fence}\n");
    let start = rest
        .find(&open)
        .unwrap_or_else(|| panic!("no ```{fence} block after {after:?}"))
        + open.len();
    let end = start + rest[start..].find("```").unwrap();
    rest[start..end].to_string()
}

/// The pairs of a text answer, `(name, value)`, in order.
pub fn pairs_of(text: &str) -> Vec<(String, String)> {
    text.split("\r\n")
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (n, v) = l.split_once(' ').unwrap();
            (n.to_string(), v.to_string())
        })
        .collect()
}

/// The lines of the Archive's var/acknowledgments.log (none when it does not exist).
pub fn log_lines(f: &Fixture) -> Vec<String> {
    std::fs::read_to_string(f.path("var/acknowledgments.log"))
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}
