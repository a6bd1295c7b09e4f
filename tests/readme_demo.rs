//! The README's first command: `resolver/demo.sh`, run on a copy of what it uses (the
//! sample Archive, the script and resolver/resolver.toml) with the executables under
//! test, prints exactly what the README shows, and its persistent URL ends on the file.

use std::collections::BTreeSet;
use std::process::Command;

#[test]
fn the_readme_first_command_prints_what_the_readme_shows() {
    let tmp = common::archive_tempdir();
    let repo = tmp.path().join("repo");
    common::copy_sample(&repo.join("sample-archive"));
    std::fs::create_dir_all(repo.join("resolver")).unwrap();
    for f in ["resolver/demo.sh", "resolver/resolver.toml"] {
        std::fs::copy(f, repo.join(f)).unwrap();
    }
    let bin_dir = common::ibi_archive_bin().parent().unwrap().to_path_buf();
    assert!(
        bin_dir.join("ibi-resolver").is_file(),
        "ibi-resolver is missing beside ibi-archive: run the tests of the whole workspace"
    );
    let out = Command::new("sh")
        .arg(repo.join("resolver/demo.sh"))
        .env("IBI_BIN_DIR", &bin_dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}\n{stdout}\n{stderr}", out.status);
    assert_eq!(
        stdout,
        common::readme_block("The first starts `ibi-archive serve`", "text"),
        "{stderr}"
    );
}

/// The Debian packages an `apt-get install -y` of `text` names (every such command, up to
/// the end of its command line or a `&&`, `||`, `;` or `}`), and the install scripts it runs
/// (`bash tests/…/install.sh`).
fn installs(text: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut packages = BTreeSet::new();
    let mut scripts = BTreeSet::new();
    // A line continued (`\` at its end) is one with the next.
    let text = text.replace("\\\n", " ");
    for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
        let mut rest = line;
        while let Some(at) = rest.find("apt-get install -y ") {
            rest = &rest[at + "apt-get install -y ".len()..];
            for word in rest.split_whitespace() {
                if ["&&", ";", "}", "||"].contains(&word) {
                    break;
                }
                packages.insert(word.trim_end_matches(';').to_string());
                if word.ends_with(';') {
                    break;
                }
            }
        }
        for (at, _) in line.match_indices("bash tests/") {
            let script = line[at + "bash ".len()..]
                .split_whitespace()
                .next()
                .unwrap();
            scripts.insert(script.to_string());
        }
    }
    (packages, scripts)
}

/// The README's second command works on a fresh machine whose package lists are empty
/// (it reads them first, as .ci/run does), and installs what .ci/run installs before it
/// runs the same tests: the same Debian packages, the same install scripts, axe-core and
/// cargo-deb.
#[test]
fn the_readme_second_command_installs_what_ci_installs() {
    let block = common::readme_block("On a fresh Debian machine with Rust", "sh");
    let second = &block[block.find("\n# 2. ").expect(&block) + 1..];
    let command = second.lines().nth(1).unwrap();
    assert!(
        command.starts_with("apt-get update && apt-get install -y "),
        "the second command: {command}"
    );
    let ci = std::fs::read_to_string(common::repository().join(".ci/run")).unwrap();
    let (readme_packages, readme_scripts) = installs(second);
    let (ci_packages, ci_scripts) = installs(&ci);
    assert!(ci_packages.contains("apache2"), "{ci_packages:?}");
    assert_eq!(readme_packages, ci_packages);
    assert!(
        ci_scripts.contains("tests/oai/install.sh"),
        "{ci_scripts:?}"
    );
    assert_eq!(readme_scripts, ci_scripts);
    for both in [
        "npm ci --prefix tests/browser",
        "cargo install cargo-deb --locked",
        "cargo install mdbook --locked",
        "mdbook build docs",
        "cargo test -- --include-ignored",
    ] {
        assert!(
            second.contains(both) && ci.contains(both),
            "{both:?} in one of them only"
        );
    }
}
