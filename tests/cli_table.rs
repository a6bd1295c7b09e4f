//! The command line, every command alike: `--help` and `-h` print its usage and exit 0
//! (and `help COMMAND` prints the same), a misspelt command or flag exits 2 naming the
//! nearest one, and a missing argument exits 2 showing the expected form. Expected lines
//! are written out by hand.

use common::run_cmd;

/// Every command: its name, the first line of its --help, an invocation missing what it
/// needs, and the first line of stderr that invocation gets.
const COMMANDS: &[(&str, &str, &[&str], &str)] = &[
    (
        "init",
        "usage: ibi-archive init [--root R] --address HOST[:PORT] [OPTIONS]",
        &["init"],
        "ibi-archive: init: missing --address; usage: ibi-archive init [--root R] --address HOST[:PORT] [OPTIONS]",
    ),
    (
        "new",
        "usage: ibi-archive new [--root R] [OPTIONS] FILE...",
        &["new"],
        "ibi-archive: new: missing FILE; usage: ibi-archive new [--root R] [OPTIONS] FILE...",
    ),
    (
        "check",
        "usage: ibi-archive check [--root R] [--web-user USER] [--fix]",
        &["check", "--root"],
        "ibi-archive: check: missing argument for option '--root'; see ibi-archive check --help",
    ),
    (
        "delete",
        "usage: ibi-archive delete [--root R] [--keep-content] [--reason TEXT] IBI",
        &["delete"],
        "ibi-archive: delete: missing IBI; usage: ibi-archive delete [--root R] [--keep-content] [--reason TEXT] IBI",
    ),
    (
        "prefixes",
        "usage: ibi-archive prefixes [--root R]",
        &["prefixes", "--root"],
        "ibi-archive: prefixes: missing argument for option '--root'; see ibi-archive prefixes --help",
    ),
    (
        "include",
        "usage: ibi-archive include [--root R] [--resolver URL]...",
        &["include", "--resolver"],
        "ibi-archive: include: missing argument for option '--resolver'; see ibi-archive include --help",
    ),
    (
        "exclude",
        "usage: ibi-archive exclude [--root R] [--resolver URL]...",
        &["exclude", "--root"],
        "ibi-archive: exclude: missing argument for option '--root'; see ibi-archive exclude --help",
    ),
    (
        "stats",
        "usage: ibi-archive stats [--root R] [--csv] [--item IBI]",
        &["stats", "--item"],
        "ibi-archive: stats: missing argument for option '--item'; see ibi-archive stats --help",
    ),
    (
        "query",
        "usage: ibi-archive query [--root R] QUERYSTRING",
        &["query"],
        "ibi-archive: query: missing QUERYSTRING; usage: ibi-archive query [--root R] QUERYSTRING",
    ),
    (
        "describe",
        "usage: ibi-archive describe [--root R] IBI",
        &["describe"],
        "ibi-archive: describe: missing IBI; usage: ibi-archive describe [--root R] IBI",
    ),
    (
        "serve",
        "usage: ibi-archive serve [--root R] [--listen [ADDRESS:]PORT] [--no-inclusion] [LIMITS]",
        &["serve", "--listen", "8080x"],
        "ibi-archive: serve: --listen \"8080x\": expected ADDRESS:PORT (127.0.0.1:8080, [::1]:8080) or a PORT",
    ),
    (
        "ibi",
        "usage: ibi-archive ibi IBI",
        &["ibi"],
        "ibi-archive: ibi: missing IBI; usage: ibi-archive ibi IBI",
    ),
    (
        "help",
        "usage: ibi-archive help [COMMAND]",
        &["help", "nope"],
        "ibi-archive: help: unknown command \"nope\"; see ibi-archive --help",
    ),
];

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

#[test]
fn help_lists_every_command_of_the_table() {
    let (code, out, err) = run_cmd(&["help"]);
    assert_eq!((code, err.as_str()), (0, ""));
    let (code2, out2, _) = run_cmd(&["--help"]);
    assert_eq!((code2, &out2), (0, &out));
    let mut listed: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("  ibi-archive "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    listed.dedup();
    let table: Vec<&str> = COMMANDS.iter().map(|c| c.0).collect();
    assert_eq!(listed, table);
}

#[test]
fn every_command_has_help_with_both_spellings_and_through_help() {
    for &(cmd, usage, _, _) in COMMANDS {
        let mut texts = Vec::new();
        for args in [vec![cmd, "--help"], vec![cmd, "-h"], vec!["help", cmd]] {
            let (code, out, err) = run_cmd(&args);
            assert_eq!(
                (code, first_line(&out), err.as_str()),
                (0, usage, ""),
                "{args:?}"
            );
            texts.push(out);
        }
        assert!(texts.iter().all(|t| *t == texts[0]), "{cmd}");
    }
}

#[test]
fn a_misspelt_command_names_the_nearest() {
    for (typo, meant) in [
        ("qeury", "query"),
        ("inti", "init"),
        ("chekc", "check"),
        ("deleet", "delete"),
        ("prefix", "prefixes"),
        ("stat", "stats"),
        ("serv", "serve"),
        ("descirbe", "describe"),
    ] {
        let (code, out, err) = run_cmd(&[typo]);
        assert_eq!(
            (code, out.as_str(), err),
            (
                2,
                "",
                format!(
                    "ibi-archive: unknown command \"{typo}\" (did you mean {meant}?); see ibi-archive --help\n"
                )
            )
        );
    }
    // Nothing near: no guess.
    let (code, _, err) = run_cmd(&["frobnicate"]);
    assert_eq!(
        (code, err.as_str()),
        (
            2,
            "ibi-archive: unknown command \"frobnicate\"; see ibi-archive --help\n"
        )
    );
}

#[test]
fn a_misspelt_flag_names_the_nearest() {
    for &(cmd, ..) in COMMANDS {
        let (code, out, err) = run_cmd(&[cmd, "--rot", "x"]);
        let hint = if ["ibi", "help"].contains(&cmd) {
            // No --root there: nothing near enough to guess.
            String::new()
        } else {
            " (did you mean --root?)".to_string()
        };
        assert_eq!(
            (code, out.as_str(), err),
            (
                2,
                "",
                format!(
                    "ibi-archive: {cmd}: unexpected argument --rot{hint}; see ibi-archive {cmd} --help\n"
                )
            ),
            "{cmd}"
        );
    }
    for (args, line) in [
        (
            &["new", "--titel", "T", "f"][..],
            "ibi-archive: new: unexpected argument --titel (did you mean --title?); see ibi-archive new --help",
        ),
        (
            &["stats", "--cvs"],
            "ibi-archive: stats: unexpected argument --cvs (did you mean --csv?); see ibi-archive stats --help",
        ),
        (
            &["init", "--adress", "a.b.org"],
            "ibi-archive: init: unexpected argument --adress (did you mean --address?); see ibi-archive init --help",
        ),
        (
            &["ibi", "mint", "--hots", "a.b.org"],
            "ibi-archive: ibi mint: unexpected argument --hots (did you mean --host?); see ibi-archive ibi mint --help",
        ),
    ] {
        let (code, _, err) = run_cmd(args);
        assert_eq!((code, first_line(&err)), (2, line), "{args:?}");
    }
}

#[test]
fn a_missing_argument_shows_the_expected_form() {
    for &(_, _, args, line) in COMMANDS {
        let (code, out, err) = run_cmd(args);
        assert_eq!(
            (code, out.as_str(), first_line(&err)),
            (2, "", line),
            "{args:?}"
        );
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}
