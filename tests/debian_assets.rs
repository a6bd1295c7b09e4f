//! The Debian package's man pages and bash completions (debian/) are made by the
//! executables from the definitions of their commands and flags (src/cli/definitions.rs,
//! resolver/src/cli/definitions.rs): the files committed are what `--generate` prints,
//! byte for byte. The man pages are well-formed roff and name, under each command, the
//! flags its `--help` names (both are rendered from one text of each command and flag),
//! and the completions, run in bash as bash runs them, offer each command its own flags.
//! No root needed: nothing is installed.

use std::collections::{BTreeMap, BTreeSet};
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
            "init serve register unregister archives resolve memory forget backup migrate-registry help --config --help -h --version -V",
        ),
        ("ibi-resolver", &["migrate-registry", "--"], "--to --config --help"),
        ("ibi-resolver", &["init", "--"], "--publicurl --config --help"),
        ("ibi-resolver", &["--config", "x.toml", "ar"], "archives"),
        ("ibi-resolver", &["serve", "--"], "--listen --config --help"),
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

/// The `--flags` `text` names (roff's `\-\-name` read as `--name`), but `--help` and
/// `--version`, which every command takes.
fn flags_named(text: &str) -> BTreeSet<String> {
    let text = ["\\fB", "\\fI", "\\fR", "\\fP"]
        .iter()
        .fold(text.replace("\\-", "-"), |t, font| t.replace(font, " "));
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter_map(|w| w.strip_prefix("--"))
        .filter(|f| f.starts_with(|c: char| c.is_ascii_lowercase()))
        .filter(|f| !matches!(*f, "help" | "version"))
        .map(String::from)
        .collect()
}

/// The man page's section of each command: the text of its `.SS` subsections (their
/// titles, `PROGRAM COMMAND …`, included), by command.
fn man_sections(page: &str, program: &str) -> BTreeMap<String, String> {
    let mut sections = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in page.lines() {
        if let Some(title) = line.strip_prefix(".SS \"") {
            let rest = title
                .strip_prefix(program)
                .unwrap_or_else(|| panic!("{program}(1): {line}"));
            // roff writes a hyphen of a name `\-` (migrate\-registry).
            current = Some(
                rest.trim_start()
                    .split([' ', '"'])
                    .next()
                    .unwrap()
                    .replace("\\-", "-"),
            );
        } else if line.starts_with(".SH") {
            current = None;
        }
        if let Some(command) = &current {
            let text: &mut String = sections.entry(command.clone()).or_default();
            text.push_str(line);
            text.push('\n');
        }
    }
    sections
}

/// Each command's part of the man page names the flags its `--help` names, no more and no
/// fewer, and the rest of the page none that no command takes: both are rendered from the
/// same texts (src/cli/definitions.rs), and this keeps the renderings, and the page's own
/// sections written in roff, in step with them.
fn check_man_and_help_agree(program: &str, bin: &Path) {
    let page = fs::read_to_string(debian(&format!("{program}.1"))).unwrap();
    let sections = man_sections(&page, program);
    assert!(sections.len() > 3, "{program}(1): {sections:?}");
    let mut disagreements = Vec::new();
    let mut every = BTreeSet::new();
    for (command, section) in &sections {
        let out = Command::new(bin)
            .args([command.as_str(), "--help"])
            .env_remove("GATEWAY_INTERFACE")
            .output()
            .unwrap();
        assert!(out.status.success(), "{program} {command} --help: {out:?}");
        let help = flags_named(&String::from_utf8(out.stdout).unwrap());
        let man = flags_named(section);
        every.extend(help.iter().cloned());
        for f in man.difference(&help) {
            disagreements.push(format!(
                "{program}(1) names --{f} under {command}, {command} --help does not"
            ));
        }
        for f in help.difference(&man) {
            disagreements.push(format!(
                "{program} {command} --help names --{f}, {program}(1) does not under {command}"
            ));
        }
    }
    // The page's own text (description, files, examples) names no flag that no command
    // takes, but in roff comments and in the commands of systemctl.
    let own: String = page
        .lines()
        .filter(|l| !l.starts_with(".\\\"") && !l.contains("systemctl"))
        .map(|l| format!("{l}\n"))
        .collect();
    for f in flags_named(&own).difference(&every) {
        disagreements.push(format!("{program}(1) names --{f}, which no command takes"));
    }
    assert_eq!(disagreements, Vec::<String>::new());
}

#[test]
fn the_man_page_of_ibi_archive_names_the_flags_of_its_help() {
    check_man_and_help_agree("ibi-archive", &common::ibi_archive_bin());
}

#[test]
fn the_man_page_of_ibi_resolver_names_the_flags_of_its_help() {
    check_man_and_help_agree("ibi-resolver", &common::ibi_resolver_bin());
}
