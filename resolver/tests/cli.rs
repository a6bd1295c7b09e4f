//! The operator's commands as a shell runs them. (Being an integration test of this
//! package, it also has cargo build the `ibi-resolver` executable, which the whole-system
//! tests of the workspace run.)

use std::io::Write;
use std::process::{Command, Stdio};

fn run(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ibi-resolver"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn help_usage_errors_and_a_missing_configuration() {
    let (code, out, _) = run(&["--help"], "");
    assert_eq!(code, 0);
    assert!(out.starts_with("usage: ibi-resolver COMMAND"), "{out}");
    let (code, _, err) = run(&["resovle"], "");
    assert_eq!(code, 2);
    assert!(
        err.starts_with("ibi-resolver: unknown command \"resovle\" (did you mean resolve?)"),
        "{err}"
    );
    let (code, _, err) = run(&["archives", "--config", "/nonexistent/resolver.toml"], "");
    assert_eq!(code, 1);
    assert!(
        err.starts_with("ibi-resolver: /nonexistent/resolver.toml: No such file or directory"),
        "{err}"
    );
}

#[test]
fn register_reads_the_key_from_stdin_and_never_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("resolver.toml");
    std::fs::write(
        &config,
        "serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"http://127.0.0.1:8090\"\n",
    )
    .unwrap();
    let c = config.to_str().unwrap();
    let ibi = "sid.inpe.br/mtc-m21/2012/06.05.15.34.39";
    let (code, _, err) = run(
        &[
            "register",
            ibi,
            "--email",
            "banon@dpi.inpe.br",
            "--config",
            c,
        ],
        "12345\n",
    );
    assert_eq!(code, 2, "{err}");
    assert!(!err.contains("12345"), "{err}");
    let (code, out, err) = run(
        &[
            "register",
            ibi,
            "--email",
            "banon@dpi.inpe.br",
            "--config",
            c,
        ],
        "1234567890\n",
    );
    assert_eq!(
        (code, out.as_str()),
        (0, "registered sid.inpe.br/mtc-m21/2012/06.05.15.34.39\n"),
        "{err}"
    );
    let (code, out, _) = run(&["archives", "--csv", "--config", c], "");
    assert_eq!(code, 0);
    assert_eq!(
        out.lines().nth(1).unwrap(),
        "sid.inpe.br/mtc-m21/2012/06.05.15.34.39,-,no,-,-,0,no,-,-,banon@dpi.inpe.br,0,0,-,-,0"
    );
    assert!(!out.contains("1234567890"));
    let db = std::fs::read(dir.path().join("resolver.sqlite")).unwrap();
    assert!(
        !db.windows(10).any(|w| w == b"1234567890"),
        "the key is stored in clear"
    );
    let (code, out, _) = run(&["unregister", ibi, "--config", c], "");
    assert_eq!(
        (code, out.as_str()),
        (0, "unregistered sid.inpe.br/mtc-m21/2012/06.05.15.34.39\n")
    );
    let (code, _, err) = run(&["unregister", ibi, "--config", c], "");
    assert_eq!(code, 1);
    assert!(err.contains("is not registered"), "{err}");
}

/// A registry of schema version 3 whose Archive was registered by an earlier resolver as
/// `lk47b6w/32nsfrp` (before version 3 an IBIp was kept as written; version 3 looked it
/// up in upper case and did not find it) is found by this resolver under every spelling.
#[test]
fn a_version_3_registry_with_a_lower_case_ibip_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("resolver.toml");
    std::fs::write(
        &config,
        "serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"http://127.0.0.1:8090\"\n",
    )
    .unwrap();
    let c = config.to_str().unwrap();
    let (code, out, err) = run(
        &[
            "register",
            "LK47B6W/32NSFRP",
            "--email",
            "a@example.org",
            "--config",
            c,
        ],
        "1234567890\n",
    );
    assert_eq!(
        (code, out.as_str()),
        (0, "registered LK47B6W/32NSFRP\n"),
        "{err}"
    );
    // As an earlier resolver left it: version 4 adds no table to version 3's.
    {
        let conn = rusqlite::Connection::open(dir.path().join("resolver.sqlite")).unwrap();
        conn.execute_batch(
            "UPDATE archives SET serviceibi = 'lk47b6w/32nsfrp'; PRAGMA user_version = 3;",
        )
        .unwrap();
    }
    let (code, out, err) = run(&["archives", "--csv", "--config", c], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.lines().nth(1).unwrap(),
        "LK47B6W/32NSFRP,-,no,-,-,0,no,-,-,a@example.org,0,0,-,-,0"
    );
    for spelling in ["Lk47b6w/32nsfrp", "LK47B6W/32NSFRP"] {
        let (code, _, err) = run(
            &[
                "register",
                spelling,
                "--email",
                "b@example.org",
                "--config",
                c,
            ],
            "1234567890\n",
        );
        assert_eq!(
            (code, err.as_str()),
            (
                1,
                "ibi-resolver: LK47B6W/32NSFRP is already registered (unregister it first to change its key)\n"
            )
        );
    }
    let (code, out, err) = run(&["unregister", "lk47b6w/32nsfrp", "--config", c], "");
    assert_eq!(
        (code, out.as_str()),
        (0, "unregistered LK47B6W/32NSFRP\n"),
        "{err}"
    );
}

/// Each command takes its own flags only: another command's flag is a usage error (exit
/// 2, nothing on stdout) that names the nearest flag or command, and points to the
/// command's --help.
#[test]
fn a_command_refuses_the_flags_of_another() {
    for (args, line) in [
        (
            &["serve", "--csv"][..],
            "ibi-resolver: serve: unexpected argument --csv; see ibi-resolver serve --help\n",
        ),
        (
            &["archives", "--cvs"],
            "ibi-resolver: archives: unexpected argument --cvs (did you mean --csv?); see ibi-resolver archives --help\n",
        ),
        (
            &["register", "--emial", "a@example.org"],
            "ibi-resolver: register: unexpected argument --emial (did you mean --email?); see ibi-resolver register --help\n",
        ),
        (
            &["resolve", "--email", "a@example.org", "/x"],
            "ibi-resolver: resolve: unexpected argument --email; see ibi-resolver resolve --help\n",
        ),
        (
            &["resovle", "/x"],
            "ibi-resolver: unknown command \"resovle\" (did you mean resolve?); see ibi-resolver --help\n",
        ),
    ] {
        let (code, out, err) = run(args, "");
        assert_eq!((code, out.as_str(), err.as_str()), (2, "", line), "{args:?}");
    }
}

/// `COMMAND --help`, `COMMAND -h` and `help COMMAND` print that command's help (its usage
/// first), not the program's.
#[test]
fn every_command_has_its_own_help() {
    for (cmd, usage) in [
        ("serve", "usage: ibi-resolver serve [--listen [ADDRESS:]PORT] [--config FILE]"),
        (
            "register",
            "usage: ibi-resolver register SERVICEIBI --email E [--key-file F] [--config FILE]",
        ),
        ("unregister", "usage: ibi-resolver unregister SERVICEIBI [--config FILE]"),
        ("archives", "usage: ibi-resolver archives [--csv] [--config FILE]"),
        (
            "resolve",
            "usage: ibi-resolver resolve PERSISTENT-URL [--lang L] [--ip IP] [--acknowledge] [--config FILE]",
        ),
        ("memory", "usage: ibi-resolver memory [IBI] [--config FILE]"),
        ("forget", "usage: ibi-resolver forget IBI [--config FILE]"),
        ("help", "usage: ibi-resolver help [COMMAND]"),
    ] {
        let mut texts = Vec::new();
        for args in [[cmd, "--help"], [cmd, "-h"], ["help", cmd]] {
            let (code, out, err) = run(&args, "");
            assert_eq!(
                (code, out.lines().next(), err.as_str()),
                (0, Some(usage), ""),
                "{args:?}"
            );
            texts.push(out);
        }
        assert!(texts.iter().all(|t| *t == texts[0]), "{cmd}");
    }
}

/// `resolve` names the persistent URL as the pages and readers spell it: the public URL
/// without the default port of its scheme.
#[test]
fn resolve_spells_the_persistent_url_as_readers_do() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("resolver.toml");
    std::fs::write(
        &config,
        "serviceibi = \"J8LNKB5R7W/3FUQHC5\"\npublicurl = \"http://resolver.example\"\n",
    )
    .unwrap();
    let (code, out, err) = run(
        &[
            "resolve",
            "--config",
            config.to_str().unwrap(),
            "8JMKD3MGP8W/35MME4E!:(oai_dc)",
        ],
        "",
    );
    // No Archive is included: not found, exit 1.
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(
        out.lines().next(),
        Some("persistent URL http://resolver.example/8JMKD3MGP8W/35MME4E!:(oai_dc)"),
        "{out}"
    );
}
