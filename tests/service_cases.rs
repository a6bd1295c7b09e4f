//! Service behaviour that needs more than one request or a modified Archive: broken
//! item.toml, acknowledgments counted once, symlinks leading out, items dropped in.

use common::{log_lines, mask_urlkey, pairs_of, Cgi, Fixture, LK47};

fn value<'a>(pairs: &'a [(String, String)], name: &str) -> &'a str {
    &pairs
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no pair {name}"))
        .1
}

#[test]
fn a_broken_item_toml_answers_as_absent_with_one_log_line() {
    let f = Fixture::sample();
    f.write(
        "col/iconet.com.br/banon/2009/09.09.22.01/item.toml",
        b"state = \"Original\nibip = [",
    );
    let out = Cgi::get(f.root(), LK47).run();
    assert_eq!(out.status, 200);
    assert_eq!(out.text(), "");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{:?}", out.stderr);
    let path = f.path("col/iconet.com.br/banon/2009/09.09.22.01/item.toml");
    assert_eq!(
        lines[0],
        format!(
            "ibi-archive: {}:2:9: unclosed array, expected `]`; item treated as absent",
            path.display()
        )
    );
}

#[test]
fn an_item_toml_with_an_unknown_state_is_named() {
    let f = Fixture::sample();
    f.write(
        "col/iconet.com.br/banon/2009/09.09.22.01/item.toml",
        b"state = \"Lost\"\n",
    );
    let out = Cgi::get(f.root(), LK47).run();
    assert_eq!(out.text(), "");
    assert!(
        out.stderr.contains("unknown variant `Lost`"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_item_dropped_into_col_answers_at_once() {
    let f = Fixture::sample();
    let q = "servicesubject=urlRequest&parsedibiurl.ibi=example.org/new/2026/11.22.10.00.01";
    assert_eq!(Cgi::get(f.root(), q).run().text(), "");
    f.write(
        "col/example.org/new/2026/11.22.10.00.01/item.toml",
        b"state = \"Original\"\ntimestamp = 2026-11-22T10:00:01Z\n",
    );
    f.write(
        "col/example.org/new/2026/11.22.10.00.01/doc/a.txt",
        b"hello\n",
    );
    let (text, _) = mask_urlkey(&Cgi::get(f.root(), q).run().text());
    assert_eq!(
        text,
        "archiveaddress localhost:8080\r\ncontenttype Data\r\nibi {rep example.org/new/2026/11.22.10.00.01}\r\n\
         ibi.archiveservice {rep sid.inpe.br/mtc-m18@80/2008/03.17.15.17}\r\n\
         ibi.platformsoftware {rep dpi.inpe.br/banon/1998/08.02.08.56}\r\nstate Original\r\n\
         timestamp 2026-11-22T10:00:01Z\r\n\
         url http://localhost:8080/col/example.org/new/2026/11.22.10.00.01/doc/a.txt\r\nurlkey <urlkey>"
    );
}

#[test]
fn symlinks_out_of_doc_or_col_give_no_url() {
    let f = Fixture::sample();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), b"secret").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        f.path("col/iconet.com.br/banon/2009/09.09.22.01/doc/leak.txt"),
    )
    .unwrap();
    let out = Cgi::get(f.root(), &format!("{LK47}&parsedibiurl.filepath=/leak.txt")).run();
    assert!(!out.text().contains("url "), "{}", out.text());
    assert!(!out.text().contains("leak"), "{}", out.text());

    // An item directory that is a symlink to outside col/ is absent.
    let elsewhere = tempfile::tempdir().unwrap();
    common::copy_tree(
        &f.path("col/iconet.com.br/banon/2009/09.09.22.01"),
        &elsewhere.path().join("item"),
    );
    f.remove("col/iconet.com.br/banon/2009/09.09.22.01");
    std::os::unix::fs::symlink(
        elsewhere.path().join("item"),
        f.path("col/iconet.com.br/banon/2009/09.09.22.01"),
    )
    .unwrap();
    let out = Cgi::get(f.root(), LK47).run();
    assert_eq!(out.text(), "");
    assert_eq!(
        out.stderr,
        format!(
            "ibi-archive: {}: item directory is reached through a symbolic link; treated as absent\n",
            f.path("col/iconet.com.br/banon/2009/09.09.22.01").display()
        )
    );
}

#[test]
fn head_gives_the_headers_of_get_without_the_body() {
    let f = Fixture::sample();
    let mut cgi = Cgi::get(f.root(), "servicesubject=inclusionConfirmationRequest");
    cgi.method = "HEAD";
    let out = cgi.run();
    assert_eq!(out.status, 200);
    assert_eq!(out.header("Content-Type"), Some("text/plain"));
    assert_eq!(out.header("Content-Length"), Some("16"));
    assert!(out.body.is_empty());
}

#[test]
fn a_missing_or_broken_archive_toml_is_a_500_without_details() {
    let f = Fixture::sample();
    f.write(
        "archive.toml",
        b"archiveaddress = \"x\"\n[registration]\nkey = \"9999999999\"\nadminemail=1\n",
    );
    let out = Cgi::get(f.root(), LK47).run();
    assert_eq!(out.status, 500);
    assert_eq!(out.text(), "error {archive configuration unavailable}");
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(!out.stderr.contains("9999999999"), "{}", out.stderr);
    f.remove("archive.toml");
    let out = Cgi::get(f.root(), LK47).run();
    assert_eq!(out.status, 500);
    assert_eq!(out.text(), "error {archive configuration unavailable}");
}

/// The service's log line for an item.toml or archive.toml that does not parse names the
/// file, line and column (never the registration key); for a missing archive.toml, it
/// says that the root is not an Archive and what to do.
#[test]
fn log_lines_locate_toml_errors_and_say_what_to_do_without_archive_toml() {
    let f = Fixture::sample();
    let root = f.root().to_str().unwrap();
    let rep = "iconet.com.br/banon/2009/09.09.22.01";
    f.write(
        &format!("col/{rep}/item.toml"),
        b"state = \"Original\"\nlanguage = en\n",
    );
    let out = Cgi::get(f.root(), LK47).run();
    assert_eq!(out.text(), "");
    assert_eq!(
        out.stderr,
        format!("ibi-archive: {root}/col/{rep}/item.toml:2:12: string values must be quoted, expected literal string; item treated as absent\n")
    );
    let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
    let key = "key             = \"1234567890\"";
    assert!(toml.contains(key));
    f.write(
        "archive.toml",
        toml.replace(key, "key             = 1234567890x")
            .as_bytes(),
    );
    let out = Cgi::get(f.root(), LK47).run();
    assert_eq!(out.status, 500);
    assert_eq!(
        out.stderr,
        format!("ibi-archive: {root}/archive.toml:11:19: string values must be quoted, expected literal string\n")
    );
    f.remove("archive.toml");
    let out = Cgi::get(f.root(), LK47).run();
    assert_eq!(out.status, 500);
    assert_eq!(
        out.stderr,
        format!("ibi-archive: {root}/archive.toml: no such file, so {root} is not an Archive root: give the Archive's root with --root DIR (or set IBI_ARCHIVE_ROOT) or create one with ibi-archive init --root DIR --address HOST[:PORT]\n")
    );
}

/// Example 8.9's round trip: the resolver takes url and urlkey from the answer and sends
/// them back in an acknowledgment.
#[test]
fn an_acknowledgment_counts_once_and_only_for_an_issued_key() {
    let f = Fixture::with_config(common::MTC_M16D_TOML);
    let q = "servicesubject=urlRequest&clientinformation.ipaddress=150.163.2.175&parsedibiurl.ibi=8JMKD3MGP7W/3EPGUE5";
    let answer = pairs_of(&Cgi::get(f.root(), q).run().text());
    let url = value(&answer, "url");
    let key = value(&answer, "urlkey");
    assert_eq!(url, "http://mtc-m16d.sid.inpe.br/col/sid.inpe.br/mtc-m19/2013/09.04.12.27.57/doc/Relat%f3rio%20Final.pdf");

    // As Example 8.9 sends it: the url's own escapes left as they are.
    let ack = format!(
        "servicesubject=acknowledgment&clientinformation.ipaddress=150.163.2.175&contenttype=Data&\
         ibi=rep%20sid.inpe.br/mtc-m19/2013/09.04.12.27.57%20ibip%208JMKD3MGP7W/3EPGUE5&url={url}&\
         url.persistent=http://urlib.net:80/8JMKD3MGP7W/3EPGUE5&urlkey={key}"
    );
    let out = Cgi::get(f.root(), &ack).run();
    assert_eq!(out.text(), "notice {acknowledgment received}");
    assert_eq!(out.stderr, "");
    let lines = log_lines(&f);
    assert_eq!(lines.len(), 1);
    let fields: Vec<&str> = lines[0].split('\t').collect();
    assert_eq!(
        &fields[1..],
        [key, "sid.inpe.br/mtc-m19/2013/09.04.12.27.57", "Data", url]
    );

    // Replayed: answered the same, not counted again.
    let out = Cgi::get(f.root(), &ack).run();
    assert_eq!(out.text(), "notice {acknowledgment received}");
    assert_eq!(
        out.stderr,
        format!("ibi-archive: acknowledgment not counted: urlkey {key} was already counted\n")
    );
    assert_eq!(log_lines(&f).len(), 1);

    // A key issued for another url does not count for this one.
    let other = pairs_of(&Cgi::get(f.root(), LK47).run().text());
    let forged = ack.replace(key, value(&other, "urlkey"));
    let out = Cgi::get(f.root(), &forged).run();
    assert_eq!(out.text(), "notice {acknowledgment received}");
    assert_eq!(
        out.stderr,
        format!("ibi-archive: acknowledgment not counted: urlkey was not issued by this Archive for that url and item ({url})\n")
    );
    // A key with a digit changed.
    let mut tampered = key.to_string().into_bytes();
    let last = tampered.len() - 1;
    tampered[last] = if tampered[last] == b'0' { b'1' } else { b'0' };
    let tampered = String::from_utf8(tampered).unwrap();
    let out = Cgi::get(f.root(), &ack.replace(key, &tampered)).run();
    assert_eq!(out.text(), "notice {acknowledgment received}");
    assert_eq!(log_lines(&f).len(), 1);

    // The same url escaped as Table 6.1 asks (% as %25) counts for a fresh key.
    let answer = pairs_of(&Cgi::get(f.root(), q).run().text());
    let key2 = value(&answer, "urlkey");
    let escaped = url.replace('%', "%25");
    let ack2 =
        format!("servicesubject=acknowledgment&contenttype=Data&url={escaped}&urlkey={key2}");
    let out = Cgi::get(f.root(), &ack2).run();
    assert_eq!(out.stderr, "");
    assert_eq!(log_lines(&f).len(), 2);
}

#[test]
fn urlkeys_differ_in_every_answer_and_the_url_request_writes_nothing_but_the_secret() {
    let f = Fixture::sample();
    let a = pairs_of(&Cgi::get(f.root(), LK47).run().text());
    let b = pairs_of(&Cgi::get(f.root(), LK47).run().text());
    assert_ne!(value(&a, "urlkey"), value(&b, "urlkey"));
    let var = f.names_in("var");
    assert_eq!(var, ["urlkey.secret"]);
}

#[test]
fn a_read_only_archive_still_answers_with_keys() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::sample();
    if running_as_root() {
        // root writes through permissions: point var/ at a file so it cannot be created.
        f.write("var", b"not a directory");
    } else {
        std::fs::set_permissions(f.root(), std::fs::Permissions::from_mode(0o555)).unwrap();
    }
    let out = Cgi::get(f.root(), LK47).run();
    std::fs::set_permissions(f.root(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let (text, key) = mask_urlkey(&out.text());
    assert!(key.is_some(), "{text}");
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("acknowledgments cannot be counted"),
        "{}",
        out.stderr
    );
}

fn running_as_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout == b"0\n")
        .unwrap_or(false)
}

/// A key binds each URL to the item it serves: an acknowledgment of the service item's
/// URL (which names no item in its path) that names another item credits nobody, and the
/// one naming the service item credits it.
#[test]
fn a_urlkey_credits_only_the_item_it_was_issued_for() {
    let f = Fixture::sample();
    let service = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17";
    let q = format!("servicesubject=urlRequest&parsedibiurl.ibi={service}");
    let answer = pairs_of(&Cgi::get(f.root(), &q).run().text());
    let (url, key) = (value(&answer, "url"), value(&answer, "urlkey"));
    assert_eq!(url, format!("http://localhost:8080/{service}"));
    let ack = |ibi: &str| {
        let q = format!(
            "servicesubject=acknowledgment&contenttype=Data&ibi=rep%20{ibi}&url={url}&urlkey={key}"
        );
        let out = Cgi::get(f.root(), &q).run();
        assert_eq!(out.text(), "notice {acknowledgment received}");
        out.stderr
    };
    assert_eq!(
        ack("iconet.com.br/banon/2009/09.09.22.01"),
        format!("ibi-archive: acknowledgment not counted: urlkey was not issued by this Archive for that url and item ({url})\n")
    );
    assert_eq!(log_lines(&f), Vec::<String>::new());
    assert_eq!(ack(service), "");
    let lines = log_lines(&f);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].split('\t').nth(2), Some(service));
}

/// The urlkey secret is the service's alone: created with mode 0600.
#[test]
fn the_urlkey_secret_is_created_for_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::sample();
    Cgi::get(f.root(), LK47).run();
    let mode = std::fs::metadata(f.path("var/urlkey.secret"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
}

/// A server that starts the program with its standard output closed: the program opens
/// /dev/null there first, so no file it opens takes fd 1 (the access log would, and the
/// answer would be written into it). Seen while the program waits for the log's lock.
#[test]
fn a_closed_standard_output_is_not_taken_by_a_file() {
    let f = Fixture::sample();
    let answer = pairs_of(&Cgi::get(f.root(), LK47).run().text());
    let (url, key) = (value(&answer, "url"), value(&answer, "urlkey"));
    let q = format!("servicesubject=acknowledgment&contenttype=Data&url={url}&urlkey={key}");
    let log = f.path("var/acknowledgments.log");
    let held = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .unwrap();
    held.lock().unwrap();
    let cmd = Cgi::get(f.root(), &q).command();
    // Run through sh, which closes fd 1 before it execs the program.
    let mut sh = std::process::Command::new("/bin/sh");
    sh.arg("-c").arg("exec \"$0\" >&-").arg(cmd.get_program());
    sh.env_clear();
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            sh.env(k, v);
        }
    }
    let mut child = sh.stderr(std::process::Stdio::piped()).spawn().unwrap();
    let fds = format!("/proc/{}/fd", child.id());
    let opened = |target: &std::path::Path| {
        std::fs::read_dir(&fds).ok().and_then(|d| {
            d.filter_map(Result::ok)
                .find(|e| std::fs::read_link(e.path()).is_ok_and(|t| t == target))
                .map(|e| e.file_name().into_string().unwrap())
        })
    };
    // The run waits for the lock once it has opened the log: one that ends first never
    // opened it; one that does neither is stopped by the hang guard.
    let started = std::time::Instant::now();
    let log_fd = loop {
        if let Some(fd) = opened(&log) {
            break fd;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended ({status}) without opening the log");
        }
        if started.elapsed() > common::HANG_GUARD {
            let _ = child.kill();
            panic!("the run neither opened the log nor ended");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let stdout = std::fs::read_link(format!("{fds}/1")).unwrap();
    held.unlock().unwrap();
    let out = child.wait_with_output().unwrap();
    assert_ne!(log_fd, "1", "the access log took the place of stdout");
    assert_eq!(stdout, std::path::Path::new("/dev/null"));
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).as_ref()
        ),
        (Some(0), "")
    );
    let lines = log_lines(&f);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(ibi_archive::acklog::Record::parse_line(&lines[0]).is_some());
}

/// Control characters an item.toml holds (a quoted key with ESC and CR) reach the error
/// log escaped: they cannot rewrite the administrator's terminal or forge a line.
#[test]
fn control_characters_from_an_item_toml_are_escaped_in_the_log() {
    let f = Fixture::sample();
    f.write(
        "col/iconet.com.br/banon/2009/09.09.22.01/item.toml",
        b"state = \"Original\"\n\"\\u001b[2J\\rforged\" = 1\n",
    );
    let out = Cgi::get(f.root(), LK47).run();
    assert_eq!(out.text(), "");
    assert_eq!(out.stderr.lines().count(), 1, "{:?}", out.stderr);
    assert!(
        !out.stderr.contains('\x1b') && !out.stderr.trim_end().contains('\r'),
        "{:?}",
        out.stderr
    );
    assert!(
        out.stderr.contains("\\x1b[2J\\x0dforged"),
        "{:?}",
        out.stderr
    );
}

/// A web server may pass the request target in absolute form (`http://host/path`): the
/// file route reads it as `serve` does.
#[test]
fn the_file_route_takes_an_absolute_request_target() {
    let f = Fixture::sample();
    let path = "/col/iconet.com.br/banon/2009/09.09.22.01/doc/reference.bib";
    let out = Cgi::get(f.root(), "")
        .command()
        .env("SCRIPT_NAME", "/col")
        .env("PATH_INFO", path.strip_prefix("/col").unwrap())
        .env("REQUEST_URI", format!("http://127.0.0.1{path}"))
        .output()
        .unwrap();
    let out = common::parse_cgi(&out.stdout, String::from_utf8_lossy(&out.stderr).into());
    assert_eq!(out.status, 200, "{}", out.stderr);
    assert_eq!(out.body, std::fs::read(f.path(&path[1..])).unwrap());
}

/// A col/ that is there but cannot be opened (here a link to itself) is not an absence:
/// the service answers 503 and the log says why, where it answered "not here".
#[test]
fn a_col_that_cannot_be_opened_is_not_an_absence() {
    let f = Fixture::sample();
    f.remove("col");
    std::os::unix::fs::symlink("col", f.path("col")).unwrap();
    let out = Cgi::get(f.root(), LK47).run();
    assert_eq!(
        (out.status, out.text().as_str()),
        (503, "error {archive unavailable}")
    );
    assert_eq!(
        out.stderr,
        format!(
            "ibi-archive: {}/col: Too many levels of symbolic links (os error 40)\n",
            f.root().display()
        )
    );
}
