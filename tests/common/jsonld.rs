//! JSON-LD as a JSON-LD processor reads it: pyld (Debian's python3-pyld), run as a
//! separate process, expands a document into full IRIs. Debian's package is run by
//! Debian's interpreter, whatever other `python3` comes first on PATH.

use std::process::Command;

use serde_json::Value;

/// The interpreter of Debian's python3-pyld.
const PYTHON: &str = "/usr/bin/python3";

/// The JSON-LD expanded by pyld (`None` when pyld is not installed, outside CI).
pub fn expanded(json_ld: &str) -> Option<Value> {
    let has_pyld = Command::new(PYTHON)
        .args(["-c", "import pyld"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !crate::required_under_ci(has_pyld, "python3-pyld") {
        eprintln!("skipping the JSON-LD expansion: pyld is not installed");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("item.jsonld");
    std::fs::write(&file, json_ld).unwrap();
    let out = Command::new(PYTHON)
        .args([
            "-c",
            "import json, sys\nfrom pyld import jsonld\n\
             print(json.dumps(jsonld.expand(json.load(open(sys.argv[1])))))",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}
