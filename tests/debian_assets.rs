//! The Debian package's man pages and bash completions (debian/) are made by the
//! executables from the definitions of their commands and flags (src/cli/definitions.rs,
//! resolver/src/cli/definitions.rs): the files committed are what `--generate` prints,
//! byte for byte. The man pages are well-formed roff, and the completions, run in bash as
//! bash runs them, offer each command its own flags. No root needed: nothing is installed.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn debian(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("debian")
        .join(file)
}

/// What `bin --generate what` prints, which it must print with exit status 0.
fn generated(bin: &Path, what: &str) -> String {
    let out = Command::new(bin)
        .args(["--generate", what])
        .env_remove("GATEWAY_INTERFACE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} --generate {what}: {}{}",
        bin.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// debian/`program`.1 and debian/bash-completion/`program` are what `bin` generates.
fn check_generated(program: &str, bin: &Path) {
    for (file, what) in [
        (format!("{program}.1"), "man"),
        (format!("bash-completion/{program}"), "complete-bash"),
    ] {
        let committed = fs::read_to_string(debian(&file)).unwrap();
        assert!(
            committed == generated(bin, what),
            "debian/{file} is not what {program} makes of its definitions; run\n  \
             cargo run -q -p {program} -- --generate {what} > debian/{file}"
        );
    }
}

#[test]
fn the_man_page_and_completion_of_ibi_archive_are_generated() {
    check_generated("ibi-archive", &common::ibi_archive_bin());
}

#[test]
fn the_man_page_and_completion_of_ibi_resolver_are_generated() {
    check_generated("ibi-resolver", &common::ibi_resolver_bin());
}

#[test]
fn the_man_pages_are_well_formed_roff() {
    // groff's own warnings (an unknown macro, a bad escape), when groff is there: man-db
    // depends on it, so a Debian machine with man pages has it.
    if !Path::new("/usr/bin/groff").is_file() {
        assert!(
            !std::env::var("CI").is_ok_and(|v| v == "true"),
            "CI=true and groff is not installed"
        );
        eprintln!("skipping: groff is not installed");
        return;
    }
    for page in ["ibi-archive.1", "ibi-resolver.1"] {
        let out = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(debian(page))
            .output()
            .unwrap();
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "groff on debian/{page}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// What the completion of `program` (debian/bash-completion/`program`) offers for the
/// words `words`, the last being the one completed.
fn complete(program: &str, words: &[&str]) -> BTreeSet<String> {
    let script = debian(&format!("bash-completion/{program}"));
    let quoted: Vec<String> = std::iter::once(program)
        .chain(words.iter().copied())
        .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
        .collect();
    let program = format!(
        "source '{}'\nCOMP_WORDS=({})\nCOMP_CWORD={}\nCOMP_LINE=\"${{COMP_WORDS[*]}}\"\nCOMP_POINT=${{#COMP_LINE}}\n_{}\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        quoted.join(" "),
        words.len(),
        program.replace('-', "_"),
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "bash completing {words:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

fn set(words: &str) -> BTreeSet<String> {
    words.split_whitespace().map(str::to_string).collect()
}

#[test]
fn the_completions_offer_each_command_its_own_flags() {
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "ibi-archive",
            &[""],
            "init new check delete prefixes include exclude stats query describe serve ibi help --help -h --version -V",
        ),
        ("ibi-archive", &["stats", "--"], "--csv --item --root --help"),
        ("ibi-archive", &["ibi", ""], "mint"),
        (
            "ibi-archive",
            &["ibi", "mint", "--"],
            "--host --port --ip --ibip-port --date --help",
        ),
        ("ibi-archive", &["ibi", "mint", "--date", ""], "now"),
        ("ibi-archive", &["new", "--date", ""], ""),
        ("ibi-archive", &["init", "--granularity", "0"], "0.1 0.01 0.001"),
        ("ibi-archive", &["help", "de"], "delete describe"),
        (
            "ibi-resolver",
            &[""],
            "init serve register unregister archives resolve memory forget backup help --config --help -h --version -V",
        ),
        ("ibi-resolver", &["init", "--"], "--publicurl --config --help"),
        ("ibi-resolver", &["--config", "x.toml", "ar"], "archives"),
        ("ibi-resolver", &["serve", "--"], "--config --help"),
        ("ibi-resolver", &["archives", "--"], "--csv --config --help"),
        (
            "ibi-resolver",
            &["register", "x", "--"],
            "--email --key-file --config --help",
        ),
        ("ibi-resolver", &["help", "re"], "register resolve"),
    ];
    for &(program, words, offered) in cases {
        assert_eq!(
            complete(program, words),
            set(offered),
            "{program} {}",
            words.join(" ")
        );
    }
}
