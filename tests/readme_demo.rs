//! The README's first command: `resolver/demo.sh`, run on a copy of what it uses (the
//! sample Archive, the script and resolver/resolver.toml) with the executables under
//! test, prints exactly what the README shows, and its persistent URL ends on the file.

mod common;
mod support;

use std::process::Command;

#[test]
fn the_readme_first_command_prints_what_the_readme_shows() {
    let tmp = support::archive_tempdir();
    let repo = tmp.path().join("repo");
    support::copy_tree(&common::sample(), &repo.join("sample-archive"));
    let _ = std::fs::remove_dir_all(repo.join("sample-archive/var"));
    std::fs::create_dir_all(repo.join("resolver")).unwrap();
    for f in ["resolver/demo.sh", "resolver/resolver.toml"] {
        std::fs::copy(f, repo.join(f)).unwrap();
    }
    let bin_dir = support::ibi_archive_bin().parent().unwrap().to_path_buf();
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
