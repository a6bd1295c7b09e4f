//! `ibi-archive query` and `ibi-archive describe` from a shell: exact output, exit codes
//! and the one stderr line of bad input.

use common::{run_cmd, Fixture};

#[test]
fn query_prints_exactly_the_cgi_body() {
    let f = Fixture::sample();
    let root = f.root().to_str().unwrap();
    let (code, out, err) = run_cmd(&[
        "query",
        "--root",
        root,
        "servicesubject=inclusionConfirmationRequest",
    ]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, "confirmation yes", "")
    );
    let (code, out, err) = run_cmd(&[
        "query",
        "--root",
        root,
        "servicesubject=urlRequest&parsedibiurl.ibi=LK47B6W/362SFKH",
    ]);
    assert_eq!((code, err.as_str()), (0, ""));
    let (masked, _) = common::mask_urlkey(&out);
    assert_eq!(
        masked,
        "archiveaddress localhost:8080\r\ncontenttype Data\r\nibi {rep iconet.com.br/banon/2009/09.09.22.01 ibip LK47B6W/362SFKH}\r\n\
         ibi.archiveservice {rep sid.inpe.br/mtc-m18@80/2008/03.17.15.17}\r\nibi.platformsoftware {rep dpi.inpe.br/banon/1998/08.02.08.56}\r\n\
         state Original\r\ntimestamp 2009-09-09T22:01:00Z\r\n\
         url http://localhost:8080/col/iconet.com.br/banon/2009/09.09.22.01/doc/@relatorio.pdf\r\nurlkey <urlkey>"
    );
}

#[test]
fn query_reports_error_statuses_with_exit_code_1() {
    let f = Fixture::sample();
    let root = f.root().to_str().unwrap();
    let (code, out, err) = run_cmd(&["query", "--root", root, "servicesubject=nothing"]);
    assert_eq!(code, 1);
    assert_eq!(out, "error {unknown servicesubject}");
    assert_eq!(
        err,
        "ibi-archive: unknown servicesubject \"nothing\"\nibi-archive: query: status 400 Bad Request\n"
    );
}

#[test]
fn describe_refuses_bad_and_unknown_ibis() {
    let f = Fixture::sample();
    let root = f.root().to_str().unwrap();
    let (code, out, err) = run_cmd(&[
        "describe",
        "--root",
        root,
        "sid.inpe.br/mtc-m18/2009/07.21.13.24",
    ]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert_eq!(
        err,
        format!(
            "ibi-archive: describe: sid.inpe.br/mtc-m18/2009/07.21.13.24: no such item in {root}\n"
        )
    );
    let (code, _, err) = run_cmd(&["describe", "--root", root, "not an ibi"]);
    assert_eq!(code, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    let (code, _, err) = run_cmd(&["describe", "--root", root]);
    assert_eq!(
        (code, err.as_str()),
        (
            2,
            "ibi-archive: describe: missing IBI; usage: ibi-archive describe [--root R] IBI\n"
        )
    );
    let (code, _, err) = run_cmd(&["describe", "--bogus"]);
    assert_eq!(
        (code, err.as_str()),
        (
            2,
            "ibi-archive: describe: unexpected argument --bogus; see ibi-archive describe --help\n"
        )
    );
}

#[test]
fn unknown_commands_and_no_command_exit_2() {
    let (code, _, err) = run_cmd(&["frobnicate"]);
    assert_eq!(
        (code, err.as_str()),
        (
            2,
            "ibi-archive: unknown command \"frobnicate\"; see ibi-archive --help\n"
        )
    );
    let (code, _, err) = run_cmd(&[]);
    assert_eq!(
        (code, err.as_str()),
        (2, "ibi-archive: no command given; see ibi-archive --help\n")
    );
    let (code, out, _) = run_cmd(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("ibi-archive: the Archive service"), "{out}");
}

/// The warnings `query` and `describe` print echo item.toml text and file names: a
/// target that is a link whose name holds ESC and a line break reaches the terminal
/// escaped, on one line.
#[test]
fn warnings_reach_the_terminal_escaped() {
    let f = Fixture::sample();
    let item = "col/iconet.com.br/banon/2009/09.09.22.01";
    let name = "x\u{1b}[2J\nibi-archive: all fine";
    std::os::unix::fs::symlink("reference.bib", f.path(&format!("{item}/doc/{name}"))).unwrap();
    f.write(
        &format!("{item}/item.toml"),
        b"state = \"Original\"\nibip = \"LK47B6W/362SFKH\"\ntimestamp = 2009-09-09T22:01:00Z\ntarget = \"x\\u001b[2J\\nibi-archive: all fine\"\n",
    );
    let root = f.root().to_str().unwrap();
    let want = format!(
        "ibi-archive: {}/{item}/doc/x\\x1b[2J\\x0aibi-archive: all fine: reached through a symbolic link; never served\n",
        f.root().display()
    );
    let (_, _, err) = run_cmd(&[
        "query",
        "--root",
        root,
        "servicesubject=urlRequest&parsedibiurl.ibi=LK47B6W/362SFKH",
    ]);
    assert_eq!(err, want);
    let (_, _, err) = run_cmd(&["describe", "--root", root, "LK47B6W/362SFKH"]);
    assert_eq!(err, want);
}

/// ibi-archive-cgi is the service alone: from a shell (no `GATEWAY_INTERFACE`) it says so
/// and where the commands are, and exits 2 with nothing on stdout.
#[test]
fn the_cgi_program_from_a_shell_names_the_commands_executable() {
    let out = std::process::Command::new(common::ibi_archive_cgi_bin())
        .arg("--help")
        .env_remove("GATEWAY_INTERFACE")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "ibi-archive-cgi: the Archive service, run by a web server as a CGI program (GATEWAY_INTERFACE is not set); the administrator's commands are ibi-archive's\n"
    );
}
