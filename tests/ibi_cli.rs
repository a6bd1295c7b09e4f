//! `ibi-archive ibi` end to end: the real binary, exact stdout, stderr and exit code.

use common::run_cmd;

/// Exit code, stdout and stderr, with everything shown on failure.
fn check(args: &[&str], code: i32, stdout: &str, stderr: &str) {
    assert_eq!(
        run_cmd(args),
        (code, stdout.to_string(), stderr.to_string()),
        "ibi-archive {args:?}"
    );
}

#[test]
fn reads_a_rep() {
    check(
        &["ibi", "sid.INPE.br/mtc-m18@80/2009/07.21.13.23.47.5"],
        0,
        "date 2009-07-21T13:23:47.5Z\n\
         form rep\n\
         host mtc-m18.sid.INPE.br\n\
         port 80\n\
         prefix sid.INPE.br/mtc-m18@80\n\
         suffix 2009/07.21.13.23.47.5\n",
        "",
    );
    check(
        &["ibi", "iconet.com.br/banon/2009/09.09.22.01"],
        0,
        "date 2009-09-09T22:01:00Z\nform rep\nhost banon.iconet.com.br\nport 80\n\
         prefix iconet.com.br/banon\nsuffix 2009/09.09.22.01\n",
        "",
    );
}

#[test]
fn reads_an_ibip() {
    check(
        &["ibi", "8JMKD3MGP7W/3EPGUE5"],
        0,
        "date 2013-09-04T12:27:57Z\n\
         form ibip\n\
         ip 150.163.34.242\n\
         port 800\n\
         prefix 8JMKD3MGP7W\n\
         suffix 3EPGUE5\n",
        "",
    );
    check(
        &["ibi", "7urmdhll9ssn2d89mx4u/34pgrbsw27"],
        0,
        "date 2009-02-16T17:46:00.05Z\nform ibip\nip 2001:252:0:1::2008:6\nport 80\n\
         prefix 7urmdhll9ssn2d89mx4u\nsuffix 34pgrbsw27\n",
        "",
    );
}

#[test]
fn mints_both_forms() {
    check(
        &[
            "ibi",
            "mint",
            "--host",
            "mtc-m18.sid.inpe.br",
            "--port",
            "80",
            "--ip",
            "150.163.34.243",
            "--ibip-port",
            "800",
            "--date",
            "2009-02-16T17:46:00Z",
        ],
        0,
        "ibip 8JMKD3MGP8W/34PGRBS\nrep sid.inpe.br/mtc-m18/2009/02.16.17.46\n",
        "",
    );
    check(
        &[
            "ibi",
            "mint",
            "--host=LK.iconet.com.br",
            "--port=8080",
            "--date=1234806360",
        ],
        0,
        "rep iconet.com.br/lk.8080/2009/02.16.17.46\n",
        "",
    );
    check(
        &[
            "ibi",
            "mint",
            "--date",
            "2009-02-16T17:46Z",
            "--port",
            "800",
            "--ip",
            "127.0.0.1",
            "--host",
            "a.b.org",
        ],
        0,
        "ibip LK47B6W/34PGRBS\nrep b.org/a.800/2009/02.16.17.46\n",
        "",
    );
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, line) in [
        (&["ibi", "8JMKD3MGP8W/34PGRBO"][..], "ibi-archive: ibi: invalid IBIp \"8JMKD3MGP8W/34PGRBO\": suffix \"34PGRBO\" holds 'O', not a base-27 digit\n"),
        (&["ibi", "sid.inpe.br/mtc-m18/2009/04.31.17.46"], "ibi-archive: ibi: invalid rep \"sid.inpe.br/mtc-m18/2009/04.31.17.46\": day 31 is out of range for 2009-04\n"),
        (&["ibi", "not-an-ibi"], "ibi-archive: ibi: invalid IBI \"not-an-ibi\": it has 0 '/', expected 3 (rep) or 1 (IBIp)\n"),
        (&["ibi"], "ibi-archive: ibi: missing IBI; usage: ibi-archive ibi IBI\n"),
        (&["ibi", "8JMKD3MGP8W/34PGRBS", "extra"], "ibi-archive: ibi: unexpected argument \"extra\"; see ibi-archive ibi --help\n"),
        (&["ibi", "--bogus"], "ibi-archive: ibi: unexpected argument --bogus; see ibi-archive ibi --help\n"),
        (&["ibi", "mint", "--host", "localhost", "--port", "80", "--date", "2009-02-16T17:46Z"], "ibi-archive: ibi mint: invalid hostname \"localhost\": it has no dot, so it cannot be split into a word and a subdomain\n"),
        (&["ibi", "mint", "--host", "a.b.org", "--port", "80"], "ibi-archive: ibi mint: missing --date; usage: ibi-archive ibi mint --host H [--port P] [--ip IP [--ibip-port P]] --date T|now\n"),
        (&["ibi", "mint", "--port", "80", "--date", "0"], "ibi-archive: ibi mint: missing --host; usage: ibi-archive ibi mint --host H [--port P] [--ip IP [--ibip-port P]] --date T|now\n"),
        (&["ibi", "mint", "--host", "a.b.org", "--port", "0", "--date", "0"], "ibi-archive: ibi mint: invalid port \"0\": expected 1 to 65535\n"),
        (&["ibi", "mint", "--host", "a.b.org", "--port", "80", "--date", "2009-02-16T17:46"], "ibi-archive: ibi mint: --date: invalid date \"2009-02-16T17:46\": no 'Z': only UTC dates are accepted (expected ISO 8601 UTC, POSIX seconds or now)\n"),
        (&["ibi", "mint", "--host", "a.b.org", "--port", "80", "--ip", "1.2.3", "--date", "0"], "ibi-archive: ibi mint: invalid IP \"1.2.3\": expected an IPv4 or IPv6 address\n"),
        (&["ibi", "mint", "--host", "a.b.org", "--port", "80", "--ip", "1.2.3.4", "--date", "0"], "ibi-archive: ibi mint: date 1970-01-01T00:00:00Z is before 1995-08-01T00:00:00Z and has no IBIp suffix\n"),
        (&["ibi", "mint", "--host", "a.b.org", "--port", "80", "--ibip-port", "800", "--date", "0"], "ibi-archive: ibi mint: --ibip-port needs --ip\n"),
        (&["ibi", "mint", "--host"], "ibi-archive: ibi: missing argument for option '--host'; see ibi-archive ibi --help\n"),
        (&["ibi", "mint", "--colour", "x"], "ibi-archive: ibi mint: unexpected argument --colour; see ibi-archive ibi mint --help\n"),
        (&["ibi", "mint", "--hots", "a.b.org"], "ibi-archive: ibi mint: unexpected argument --hots (did you mean --host?); see ibi-archive ibi mint --help\n"),
    ] {
        check(args, 2, "", line);
    }
}

#[test]
fn help_goes_to_stdout() {
    for args in [
        &["ibi", "--help"][..],
        &["ibi", "-h"],
        &["ibi", "mint", "--help"],
    ] {
        let (code, text, err) = run_cmd(args);
        assert_eq!(code, 0, "{args:?}");
        assert!(err.is_empty(), "{args:?}");
        assert!(text.starts_with("usage: ibi-archive ibi "), "{text}");
    }
}
