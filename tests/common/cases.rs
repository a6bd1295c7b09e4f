//! The `.case` files of tests/data/examples/ and tests/data/hostile/.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::cgi::{mask_urlkey, Cgi, CgiOutput};

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

    /// Runs `cgi` with the case's `method` and `remote` (when given) and checks the
    /// status it answers (`status`, 200 when not given) and its `header:` lines. A run
    /// that never ends fails at the hang guard. The executable is ibi-archive-cgi, the one
    /// the web servers run: these cases hold it to the answers ibi-archive gives in the
    /// other tests.
    pub fn run<'a>(&'a self, mut cgi: Cgi<'a>) -> Result<CgiOutput, String> {
        if let Some(m) = self.get("method") {
            cgi.method = m;
        }
        if let Some(r) = self.get("remote") {
            cgi.remote_addr = r;
        }
        let out = cgi.run_cgi_only();
        let want_status: u16 = self.get("status").map_or(200, |s| s.parse().unwrap());
        if out.status != want_status {
            return Err(format!(
                "status {} instead of {want_status}; body {:?}; stderr {:?}",
                out.status,
                String::from_utf8_lossy(&out.body),
                out.stderr
            ));
        }
        self.check_headers(&out)?;
        Ok(out)
    }

    /// Whether the answer carries every `header:` line of the case.
    fn check_headers(&self, out: &CgiOutput) -> Result<(), String> {
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

/// Every `*.case` file of `dir` (relative to the repository), in file-name order.
fn load_cases(dir: &str) -> Vec<Case> {
    let dir = super::repository().join(dir);
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
