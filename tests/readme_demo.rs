//! The README's first command: `resolver/demo.sh`, run on a copy of what it uses (the
//! sample Archive, the script and resolver/resolver.toml) with the executables under
//! test, prints exactly what the README shows, and its persistent URL ends on the file.

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
