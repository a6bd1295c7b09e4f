//! The guides of docs/ are one book: mdBook builds it (`mdbook build docs`, as CI does)
//! without a warning, every guide of docs/src/ is a chapter of SUMMARY.md, each comes out
//! as its page with every section it has (its `##` headings, each an `<h2>`), and the
//! introduction is the README, included whole. Under CI=true a missing mdbook is a
//! failure.

use std::path::Path;
use std::process::Command;

/// The `##` headings of a Markdown text, outside its fenced blocks.
fn sections(markdown: &str) -> usize {
    let mut fenced = false;
    let mut n = 0;
    for line in markdown.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with("## ") {
            n += 1;
        }
    }
    n
}

#[test]
fn the_guides_build_as_one_book_with_every_section() {
    let found = Command::new("mdbook")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !common::required_under_ci(found, "mdbook (cargo install mdbook --locked)") {
        eprintln!("skipping: mdbook is not installed");
        return;
    }
    let repo = common::repository();
    let out_dir = tempfile::tempdir().unwrap();
    let built = Command::new("mdbook")
        .arg("build")
        .arg(repo.join("docs"))
        .arg("--dest-dir")
        .arg(out_dir.path())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&built.stdout),
        String::from_utf8_lossy(&built.stderr)
    );
    assert!(built.status.success(), "mdbook build docs: {said}");
    assert!(!said.contains("WARN") && !said.contains("ERROR"), "{said}");

    let src = repo.join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let mut guides = 0;
    for entry in std::fs::read_dir(&src).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some(stem) = name.strip_suffix(".md") else {
            continue;
        };
        if name == "SUMMARY.md" {
            continue;
        }
        assert!(
            summary.contains(&format!("]({name})")),
            "SUMMARY.md lacks {name}"
        );
        let page = std::fs::read_to_string(out_dir.path().join(format!("{stem}.html")))
            .unwrap_or_else(|e| panic!("{stem}.html: {e}"));
        let markdown = if stem == "introduction" {
            // {{#include ../../README.md}}
            std::fs::read_to_string(repo.join("README.md")).unwrap()
        } else {
            guides += 1;
            std::fs::read_to_string(src.join(&name)).unwrap()
        };
        assert_eq!(
            page.matches("<h2 id=").count(),
            sections(&markdown),
            "{stem}.html"
        );
        assert!(sections(&markdown) > 0, "{name}");
    }
    assert_eq!(guides, 4);
    // The book opens on the README.
    let index = std::fs::read_to_string(out_dir.path().join("index.html")).unwrap();
    assert!(index.contains("What it is") && index.contains("Where to read on"));
    assert!(Path::new(&out_dir.path().join("administrators-guide.html")).is_file());
}
