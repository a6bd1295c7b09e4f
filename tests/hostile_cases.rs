//! Hostile requests to the real binary as a CGI program, table-driven: each
//! tests/data/hostile/*.case is one request, the Archive it goes to (possibly tampered
//! with first) and the exact answer and error-log lines expected. The format is described
//! in tests/data/hostile/README.md.

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::{check_cases, compare_masked, mtc_m16c_toml, Case, Cgi, Fixture, MTC_M16D_TOML};

/// `\n`, `\r`, `\t`, `\\` and `\xHH` as in Rust strings.
fn unescape(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            match b[i + 1] {
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b't' => out.push(b'\t'),
                b'\\' => out.push(b'\\'),
                b'x' => {
                    let hex = std::str::from_utf8(&b[i + 2..i + 4]).unwrap();
                    out.push(u8::from_str_radix(hex, 16).unwrap());
                    i += 2;
                }
                other => panic!("unknown escape \\{}", other as char),
            }
            i += 2;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// A fixture Archive for one case, and a directory outside it.
struct Env {
    fixture: Fixture,
    outside: tempfile::TempDir,
}

impl Env {
    fn new(archive: &str) -> Env {
        let fixture = match archive {
            "sample" => Fixture::sample(),
            "mtc-m16c" => Fixture::with_config(&mtc_m16c_toml()),
            "mtc-m16d" => Fixture::with_config(MTC_M16D_TOML),
            other => panic!("no fixture {other:?}"),
        };
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), b"outside secret\n").unwrap();
        Env { fixture, outside }
    }

    fn expand(&self, s: &str) -> String {
        s.replace("{root}", &self.fixture.root().display().to_string())
            .replace("{outside}", &self.outside.path().display().to_string())
    }

    /// A path of a setup line: absolute after expansion, else relative to the root.
    fn path(&self, s: &str) -> PathBuf {
        let e = self.expand(s);
        if e.starts_with('/') {
            PathBuf::from(e)
        } else {
            self.fixture.path(&e)
        }
    }

    fn apply(&self, line: &str) {
        let (verb, rest) = line.split_once(' ').unwrap_or((line, ""));
        let (a, b) = match rest.split_once(" | ") {
            Some((a, b)) => (a, Some(b)),
            None => (rest, None),
        };
        match verb {
            "write" | "write-escaped" => {
                let p = self.path(a);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                let text = b.expect("write PATH | TEXT");
                let bytes = if verb == "write" {
                    text.replace("\\n", "\n").into_bytes()
                } else {
                    unescape(text)
                };
                std::fs::write(p, bytes).unwrap();
            }
            "symlink" => {
                let link = self.path(b.expect("symlink TARGET | LINK"));
                std::fs::create_dir_all(link.parent().unwrap()).unwrap();
                std::os::unix::fs::symlink(self.expand(a), link).unwrap();
            }
            "copy" => common::copy_tree(&self.path(a), &self.path(b.expect("copy FROM | TO"))),
            "remove" => self.fixture.remove(a),
            "mkdir" => std::fs::create_dir_all(self.path(a)).unwrap(),
            "mkfifo" => {
                let ok = std::process::Command::new("mkfifo")
                    .arg(self.path(a))
                    .status()
                    .unwrap();
                assert!(ok.success(), "mkfifo {a}");
            }
            other => panic!("unknown setup {other:?}"),
        }
    }
}

#[test]
fn hostile_requests_get_exact_answers() {
    // Cases that do not touch the Archive share one fixture per kind.
    let mut shared: BTreeMap<String, Env> = BTreeMap::new();
    check_cases("tests/data/hostile", 100, |case| {
        let archive = case.get("archive").unwrap_or("sample");
        if case.setup.is_empty() {
            let env = shared
                .entry(archive.to_string())
                .or_insert_with(|| Env::new(archive));
            run_case(env, case)
        } else {
            let own = Env::new(archive);
            for line in &case.setup {
                own.apply(line);
            }
            run_case(&own, case)
        }
    });
}

fn run_case(env: &Env, case: &Case) -> Result<(), String> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .to_string();
    let query: Vec<u8> = match (case.get("query"), case.get("query-escaped")) {
        (Some(q), None) => q.replace("{NOW}", &now).into_bytes(),
        (None, Some(q)) => unescape(q),
        (None, None) => Vec::new(),
        _ => return Err("both query and query-escaped".into()),
    };
    let path_info = match (case.get("path"), case.get("path-escaped")) {
        (Some(p), None) => p.to_string(),
        (None, Some(p)) => String::from_utf8(unescape(p)).unwrap(),
        (None, None) => String::new(),
        _ => return Err("both path and path-escaped".into()),
    };
    let root = env.fixture.root();
    let mut cgi = Cgi::get(root, "");
    cgi.query = &query;
    cgi.path_info = &path_info;
    // A run that never ends (a named pipe opened for reading, say) fails at the hang guard.
    let out = case.run(cgi)?;
    if let Some(prefix) = case.get("stderr-one-line") {
        let prefix = env.expand(prefix);
        if out.stderr.lines().count() != 1 || !out.stderr.starts_with(&prefix) {
            return Err(format!(
                "stderr {:?}: not one line starting {prefix:?}",
                out.stderr
            ));
        }
    } else {
        let want: String = case
            .stderr
            .iter()
            .map(|l| format!("{}\n", env.expand(l)))
            .collect();
        if out.stderr != want {
            return Err(format!("stderr {:?} instead of {want:?}", out.stderr));
        }
    }
    if let Some(secret) = case.get("no-secret") {
        if out.stderr.contains(secret) || String::from_utf8_lossy(&out.body).contains(secret) {
            return Err(format!("the answer or the log shows {secret:?}"));
        }
    }
    let html = out
        .header("Content-Type")
        .is_some_and(|t| t.starts_with("text/html"));
    if !html && out.header("Content-Type") != Some("text/plain") {
        return Err(format!("Content-Type {:?}", out.header("Content-Type")));
    }
    let want = case
        .body_lines
        .iter()
        .map(|l| env.expand(l))
        .collect::<Vec<_>>()
        .join(if html { "\n" } else { "\r\n" });
    let want = if html && !want.is_empty() {
        format!("{want}\n")
    } else {
        want
    };
    let got = String::from_utf8(out.body.clone()).map_err(|_| "body is not UTF-8")?;
    compare_masked(&want, &got)?;
    if !html {
        // The answer, urlkey masked, is `want`.
        ::ibi::pairs::parse(&want.replace("<urlkey>", "0000000000-0000000000000000"))
            .map_err(|e| format!("{e}"))?;
    }
    Ok(())
}
