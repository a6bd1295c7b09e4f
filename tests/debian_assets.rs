//! The Debian package's man pages and bash completions (debian/) against the executables'
//! own help: every command and every `--flag` that `ibi-archive --help`, `ibi-archive
//! COMMAND --help` (and `ibi-archive ibi mint --help`), `ibi-resolver --help` and
//! `ibi-resolver COMMAND --help` print is in the man page, and the completion, run in bash
//! as bash runs it, offers each command after the program's name and each command's flags
//! after the command. The lists come from the executables, so a command or flag added to
//! them and not to debian/ fails here. No root needed: nothing is installed.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn debian(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("debian")
        .join(file)
}

/// `bin args`: its standard output, which it must print with exit status 0.
fn help(bin: &Path, args: &[&str]) -> String {
    let out = Command::new(bin)
        .args(args)
        .env_remove("GATEWAY_INTERFACE")
        .env_remove("IBI_ARCHIVE_ROOT")
        .output()
        .unwrap();
    let name = bin.file_name().unwrap().to_string_lossy();
    assert!(
        out.status.success(),
        "`{name} {}` exited with {}: {}{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The `--[a-z][a-z-]*` tokens of `text`.
fn flags(text: &str) -> BTreeSet<String> {
    let bytes = text.as_bytes();
    let mut found = BTreeSet::new();
    let mut i = 0;
    while let Some(at) = text[i..].find("--") {
        let start = i + at;
        let before_ok =
            start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'-');
        let mut end = start + 2;
        if before_ok && end < bytes.len() && bytes[end].is_ascii_lowercase() {
            while end < bytes.len() && (bytes[end].is_ascii_lowercase() || bytes[end] == b'-') {
                end += 1;
            }
            found.insert(text[start..end].trim_end_matches('-').to_string());
        }
        i = end.max(start + 2);
    }
    found
}

/// One command of a program's `--help`, as its command list shows it.
#[derive(Debug)]
struct Listed {
    name: String,
    /// `mint` of `ibi mint`.
    sub: Option<String>,
    /// The flags its synopsis lines name.
    flags: BTreeSet<String>,
}

/// The commands of the command list of `usage` (the `--help` of `program`): lines indented
/// by two spaces that start with a lowercase word, after the program's name when the list
/// repeats it (`  ibi-archive check [--root R]   validate…`, `  archives [--csv]   every…`).
/// The synopsis ends where two spaces part it from what the command does. Also returns
/// the flags of the lines that are no command's (the program's own, or every command's).
fn command_list(program: &str, usage: &str) -> (Vec<Listed>, BTreeSet<String>) {
    let mut listed: Vec<Listed> = Vec::new();
    let mut others = BTreeSet::new();
    for line in usage.lines() {
        let Some(rest) = line.strip_prefix("  ").filter(|r| !r.starts_with(' ')) else {
            if !line.starts_with("   ") {
                others.extend(flags(line));
            }
            continue;
        };
        let rest = rest
            .strip_prefix(program)
            .and_then(|r| r.strip_prefix(' '))
            .unwrap_or(rest);
        let synopsis = rest.split("  ").next().unwrap();
        let mut words = synopsis.split_whitespace();
        let Some(first) = words
            .next()
            .filter(|w| w.starts_with(|c: char| c.is_ascii_lowercase()))
        else {
            others.extend(flags(line));
            continue;
        };
        let sub = words
            .next()
            .filter(|w| w.chars().all(|c| c.is_ascii_lowercase()))
            .map(str::to_string);
        // `include|exclude`: two commands on one line.
        for name in first.split('|') {
            listed.push(Listed {
                name: name.to_string(),
                sub: sub.clone(),
                flags: flags(synopsis),
            });
        }
    }
    (listed, others)
}

/// The man page as text: font changes dropped, `\-` a hyphen.
fn man_text(file: &str) -> String {
    let roff = fs::read_to_string(debian(file)).unwrap();
    let mut text = roff.replace("\\-", "-").replace("\\(em", "-");
    for font in ["\\fB", "\\fI", "\\fR", "\\fP"] {
        text = text.replace(font, "");
    }
    text
}

/// Whether `word` stands in `text` as a whole word (not inside `--root-dir` or `ibi-archive`).
fn has_word(text: &str, word: &str) -> bool {
    let part = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    text.match_indices(word)
        .any(|(at, _)| !text[..at].ends_with(part) && !text[at + word.len()..].starts_with(part))
}

/// What the completion function `function` (defined by `script`) offers for the words
/// `words`, the last being the one completed.
fn complete(script: &Path, function: &str, words: &[&str]) -> BTreeSet<String> {
    let quoted: Vec<String> = words
        .iter()
        .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
        .collect();
    let program = format!(
        "source '{}'\nCOMP_WORDS=({})\nCOMP_CWORD={}\nCOMP_LINE=\"${{COMP_WORDS[*]}}\"\nCOMP_POINT=${{#COMP_LINE}}\n{function}\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        quoted.join(" "),
        words.len() - 1
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

/// The function `complete -F FUNCTION program` names in `script`.
fn completion_function(script: &Path, program: &str) -> String {
    let text = fs::read_to_string(script).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("complete -F ") && l.ends_with(&format!(" {program}")))
        .unwrap_or_else(|| panic!("{} has no `complete -F … {program}`", script.display()));
    line.split_whitespace().nth(2).unwrap().to_string()
}

/// Checks debian/`program`.1 and debian/bash-completion/`program` against the help of
/// `bin`.
fn check_program(program: &str, bin: &Path) {
    let usage = help(bin, &["--help"]);
    let (listed, global) = command_list(program, &usage);
    assert!(
        listed.len() >= 3,
        "no command list found in `{program} --help`:\n{usage}"
    );
    let man = man_text(&format!("{program}.1"));
    let script = debian(&format!("bash-completion/{program}"));
    let script_text = fs::read_to_string(&script).unwrap();
    let function = completion_function(&script, program);
    let mut problems = Vec::new();

    // The program's own: its commands after its name, and --help.
    let offered = complete(&script, &function, &[program, ""]);
    let names: BTreeSet<&str> = listed.iter().map(|c| c.name.as_str()).collect();
    for name in &names {
        if !offered.contains(*name) {
            problems.push(format!("`{program} <TAB>` does not offer {name}"));
        }
        if !has_word(&man, &format!("{program} {name}")) {
            problems.push(format!("the man page has no `{program} {name}`"));
        }
        if !has_word(&script_text, name) {
            problems.push(format!("the completion file never names {name}"));
        }
    }
    let mut all_flags = flags(&usage);
    if !complete(&script, &function, &[program, "--"]).contains("--help") {
        problems.push(format!("`{program} --<TAB>` does not offer --help"));
    }

    for cmd in &listed {
        let mut words = vec![cmd.name.as_str()];
        if let Some(sub) = &cmd.sub {
            words.push(sub);
        }
        let mut args = words.clone();
        args.push("--help");
        let own = help(bin, &args);
        // A command whose --help is the program's: its flags are those its lines of the
        // command list name, and those of the lines that are no command's.
        let expected: BTreeSet<String> = if own == usage {
            cmd.flags.union(&global).cloned().collect()
        } else {
            let mut f = flags(&own);
            // The flags of a subcommand's help are the subcommand's.
            if cmd.sub.is_none() {
                for other in listed
                    .iter()
                    .filter(|o| o.name == cmd.name && o.sub.is_some())
                {
                    let sub_help = help(bin, &[&cmd.name, other.sub.as_deref().unwrap(), "--help"]);
                    for g in flags(&sub_help) {
                        if g != "--help" {
                            f.remove(&g);
                        }
                    }
                }
            }
            f
        };
        all_flags.extend(flags(&own));
        let shown = words.join(" ");
        if cmd.sub.is_some() && !has_word(&man, &format!("{program} {shown}")) {
            problems.push(format!("the man page has no `{program} {shown}`"));
        }
        if let Some(sub) = &cmd.sub {
            let offered = complete(&script, &function, &[program, &cmd.name, ""]);
            if !offered.contains(sub) {
                problems.push(format!(
                    "`{program} {} <TAB>` does not offer {sub}",
                    cmd.name
                ));
            }
        }
        let mut line = vec![program];
        line.extend(&words);
        line.push("--");
        let offered = complete(&script, &function, &line);
        for flag in &expected {
            if !offered.contains(flag) {
                problems.push(format!("`{program} {shown} --<TAB>` does not offer {flag}"));
            }
        }
        // `help [COMMAND]` completes the commands.
        if cmd.name == "help" && own.contains("COMMAND") {
            let offered = complete(&script, &function, &[program, "help", ""]);
            for name in &names {
                if !offered.contains(*name) {
                    problems.push(format!("`{program} help <TAB>` does not offer {name}"));
                }
            }
        }
    }

    for flag in &all_flags {
        if !has_word(&man, flag) {
            problems.push(format!("the man page never names {flag}"));
        }
        if !has_word(&script_text, flag) {
            problems.push(format!("the completion file never names {flag}"));
        }
    }
    assert!(
        problems.is_empty(),
        "debian/{program}.1 and debian/bash-completion/{program} against `{program} --help` and each command's --help:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn the_man_page_and_completion_of_ibi_archive_know_every_command_and_flag() {
    check_program("ibi-archive", &common::ibi_archive_bin());
}

#[test]
fn the_man_page_and_completion_of_ibi_resolver_know_every_command_and_flag() {
    check_program("ibi-resolver", &common::ibi_resolver_bin());
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

#[test]
fn flags_are_read_as_the_help_writes_them() {
    assert_eq!(
        flags("[--root R] --address HOST, --title, x--y ---z --Q"),
        ["--address", "--root", "--title"]
            .into_iter()
            .map(String::from)
            .collect()
    );
    let (listed, global) = command_list(
        "p",
        "usage: p COMMAND [--config F]\n\n  serve                run\n  register X --email E\n                       more --not-a-flag-of-it\n  p ibi mint --host H   mint\n",
    );
    let shown: Vec<(String, Option<String>, Vec<String>)> = listed
        .into_iter()
        .map(|c| (c.name, c.sub, c.flags.into_iter().collect()))
        .collect();
    assert_eq!(
        shown,
        [
            ("serve".to_string(), None, vec![]),
            ("register".to_string(), None, vec!["--email".to_string()]),
            (
                "ibi".to_string(),
                Some("mint".to_string()),
                vec!["--host".to_string()]
            ),
        ]
    );
    assert_eq!(global, ["--config".to_string()].into_iter().collect());
}
