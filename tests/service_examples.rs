//! The worked examples of the resolution standard (and the protocol's error cases), run
//! against the real binary as a CGI program over fixture Archives. The cases are data:
//! tests/data/examples/*.case, described in tests/data/examples/README.md.

use std::collections::BTreeMap;
use std::path::Path;

use common::{
    check_cases, compare_masked, mtc_m16c_toml, run_cmd, Case, Cgi, Fixture, MTC_M16D_TOML,
};

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
        // The Archive of Example 9.2 with no relation subset: every relation applies.
        let default = mtc_m16c_toml().replace(common::RELATIONS_OF_EXAMPLE_9_2, "");
        assert_ne!(default, mtc_m16c_toml());
        by_name.insert("mtc-m16c-default", Fixture::with_config(&default));
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
    check_cases("tests/data/examples", 30, |case| run_case(&fixtures, case));
}

fn run_case(fixtures: &Fixtures, case: &Case) -> Result<(), String> {
    let root = fixtures.root(case.get("archive").unwrap_or("sample"));
    if let Some(ibi) = case.get("describe") {
        let (code, stdout, stderr) = run_cmd(&["describe", "--root", root.to_str().unwrap(), ibi]);
        if code != 0 {
            return Err(format!("describe exited {code}: {stderr}"));
        }
        let body = stdout
            .strip_suffix('\n')
            .ok_or("describe output does not end with a newline")?;
        // A command's lines end with LF alone; compared in the answer's form (CRLF).
        if body.contains('\r') {
            return Err(format!("describe output has a CR: {body:?}"));
        }
        return compare_masked(&case.body_lines.join("\r\n"), &body.replace('\n', "\r\n"));
    }
    let query = case.get("query").unwrap_or("");
    let mut cgi = Cgi::get(root, query);
    if let Some(p) = case.get("path") {
        cgi.path_info = p;
    }
    let out = case.run(cgi)?;
    let want_stderr: String = case.stderr.iter().map(|l| format!("{l}\n")).collect();
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
    compare_masked(&want, &out.text())
}
