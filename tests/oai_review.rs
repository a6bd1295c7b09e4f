//! The OAI-PMH data provider against a hostile harvester and a careless administrator:
//! forged resumption tokens, metadata files that quick-xml reads but that are not
//! well-formed XML, records left out of a page. Through `ibi-archive query`, which prints
//! the CGI's body.

use std::path::{Path, PathBuf};

use common::run_cmd;
use sha2::{Digest, Sha256};

/// The sample's first metadata item by datestamp.
const FIRST: &str = "sid.inpe.br/mtc-m19/2013/09.04.12.27.58";

fn archive(page_size: usize) -> (tempfile::TempDir, PathBuf) {
    let tmp = common::archive_tempdir();
    let root = tmp.path().join("archive");
    common::copy_sample(&root);
    std::fs::create_dir_all(root.join("var")).unwrap();
    let mut toml = std::fs::read_to_string(root.join("archive.toml")).unwrap();
    toml.push_str(&format!("\n[oai]\npage_size = {page_size}\n"));
    std::fs::write(root.join("archive.toml"), toml).unwrap();
    // var/oai-records, as check writes it.
    let (code, out, err) = run_cmd(&["check", "--root", root.to_str().unwrap()]);
    // The copy's var/ is root's, not the web server's user's: that fault only.
    assert!(code <= 1, "{out}{err}");
    assert!(root.join("var/oai-records").exists(), "{out}{err}");
    (tmp, root)
}

fn query(root: &Path, qs: &str) -> String {
    let (code, out, err) = run_cmd(&["query", "--root", root.to_str().unwrap(), qs]);
    assert_eq!(code, 0, "{qs}: {err}");
    assert!(!err.contains("panicked"), "{qs}: {err}");
    out
}

/// The error code of an answer, if it is an error.
fn error_code(xml: &str) -> Option<&str> {
    let rest = xml.split("<error code=\"").nth(1)?;
    rest.split('"').next()
}

/// A token as the provider writes them: the fields, then the first 8 hex digits of their
/// SHA-256 (a checksum anyone can compute).
fn forged(body: &str) -> String {
    let sum = Sha256::digest(body.as_bytes());
    format!(
        "{body},{:02x}{:02x}{:02x}{:02x}",
        sum[0], sum[1], sum[2], sum[3]
    )
}

#[test]
fn a_forged_token_with_the_largest_cursor_or_a_negative_size_is_refused() {
    let (_tmp, root) = archive(1);
    for (cursor, total) in [("18446744073709551615", "-"), ("1", "-1"), ("0", "-5")] {
        let token = forged(&format!(
            "1,I,oai_dc,-,-,{cursor},{total},i,1380897135,{FIRST}"
        ));
        let out = query(
            &root,
            &format!("verb=ListIdentifiers&resumptionToken={token}"),
        );
        assert_eq!(
            error_code(&out),
            Some("badResumptionToken"),
            "{token}: {out}"
        );
    }
}
