//! The worked examples of the resolution standard (and the protocol's error cases), run
//! against the real binary as a CGI program over fixture Archives. The cases are data:
//! tests/data/examples/*.case, described in tests/data/examples/README.md.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{mask_urlkey, mtc_m16c_toml, run_cmd, Cgi, Fixture, MTC_M16D_TOML};

struct Case {
    name: String,
    headers: BTreeMap<String, String>,
    extra_headers: Vec<String>,
    body_lines: Vec<String>,
}

fn load_cases() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "case"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            let (head, body) = text
                .split_once("---\n")
                .unwrap_or_else(|| panic!("{}: no ---", p.display()));
            let mut headers = BTreeMap::new();
            let mut extra_headers = Vec::new();
            for line in head
                .lines()
                .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            {
                let (k, v) = line
                    .split_once(':')
                    .unwrap_or_else(|| panic!("{}: bad line {line:?}", p.display()));
                let v = v.strip_prefix(' ').unwrap_or(v).to_string();
                if k == "header" {
                    extra_headers.push(v);
                } else {
                    headers.insert(k.to_string(), v);
                }
            }
            Case {
                name: p.file_name().unwrap().to_string_lossy().into_owned(),
                headers,
                extra_headers,
                body_lines: body.lines().map(String::from).collect(),
            }
        })
        .collect()
}

/// The fixture Archives the cases name.
struct Fixtures {
    by_name: BTreeMap<&'static str, Fixture>,
}

impl Fixtures {
    fn new() -> Fixtures {
        let mut by_name = BTreeMap::new();
        by_name.insert("mtc-m16c", Fixture::with_config(&mtc_m16c_toml()));
        let alone = Fixture::with_config(&mtc_m16c_toml());
        alone.remove("col/sid.inpe.br/mtc-m18");
        by_name.insert("mtc-m16c-alone", alone);
        by_name.insert("mtc-m16d", Fixture::with_config(MTC_M16D_TOML));
        by_name.insert("sample", Fixture::sample());
        Fixtures { by_name }
    }

    fn root(&self, name: &str) -> &Path {
        self.by_name
            .get(name)
            .unwrap_or_else(|| panic!("no fixture {name:?}"))
            .root()
    }
}

#[test]
fn worked_examples_and_protocol_cases() {
    let fixtures = Fixtures::new();
    let cases = load_cases();
    assert!(cases.len() >= 30, "only {} cases found", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        if let Err(e) = run_case(&fixtures, case) {
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

fn run_case(fixtures: &Fixtures, case: &Case) -> Result<(), String> {
    let root = fixtures.root(case.headers.get("archive").map_or("sample", String::as_str));
    if let Some(ibi) = case.headers.get("describe") {
        let (code, stdout, stderr) = run_cmd(&["describe", "--root", root.to_str().unwrap(), ibi]);
        if code != 0 {
            return Err(format!("describe exited {code}: {stderr}"));
        }
        let body = stdout
            .strip_suffix('\n')
            .ok_or("describe output does not end with a newline")?;
        return compare_text(&case.body_lines.join("\r\n"), body);
    }
    let query = case.headers.get("query").map_or("", String::as_str);
    let mut cgi = Cgi::get(root, query);
    if let Some(m) = case.headers.get("method") {
        cgi.method = m;
    }
    if let Some(p) = case.headers.get("path") {
        cgi.path_info = p;
    }
    if let Some(r) = case.headers.get("remote") {
        cgi.remote_addr = r;
    }
    let out = cgi.run();
    let want_status: u16 = case
        .headers
        .get("status")
        .map_or(200, |s| s.parse().unwrap());
    if out.status != want_status {
        return Err(format!(
            "status {} instead of {want_status}; body {:?}",
            out.status,
            out.text()
        ));
    }
    for h in &case.extra_headers {
        let (name, value) = h.split_once(": ").unwrap();
        if out.header(name) != Some(value) {
            return Err(format!(
                "header {name}: {:?} instead of {value:?}",
                out.header(name)
            ));
        }
    }
    let want_stderr = case
        .headers
        .get("stderr")
        .map(|s| format!("{s}\n"))
        .unwrap_or_default();
    if out.stderr != want_stderr {
        return Err(format!(
            "stderr {:?} instead of {want_stderr:?}",
            out.stderr
        ));
    }
    let html = out
        .header("Content-Type")
        .is_some_and(|t| t.starts_with("text/html"));
    if !html && out.header("Content-Type") != Some("text/plain") {
        return Err(format!("Content-Type {:?}", out.header("Content-Type")));
    }
    let want = case.body_lines.join(if html { "\n" } else { "\r\n" });
    let want = if html { format!("{want}\n") } else { want };
    compare_text(&want, &out.text())
}

fn compare_text(want: &str, got: &str) -> Result<(), String> {
    let (got, key) = mask_urlkey(got);
    if want.contains("urlkey <urlkey>") != key.is_some() {
        return Err(format!(
            "urlkey expected: {}, present: {}",
            want.contains("<urlkey>"),
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
