//! The files of var/ belong to the user the service runs as, the owner of var/: made by
//! root (a command run before the first web request), they are given to that owner; a
//! user who is neither root nor var/'s owner is refused, with the chown to run.
//!
//! These tests change owners and run the service as other users: they need root (and the
//! users www-data and nobody). Otherwise they say so and pass, except under `CI=true`.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;

use common::{
    archive_tempdir, copy_sample, ibi_archive_bin, output_or_hang, parse_cgi, prepare_archive,
    run_cmd, runnable_by_others, running_as_root, user_ids, Cgi, CgiOutput,
};

const A: &str = "8JMKD3MGP7W/3EPGUE5";

/// Whether the test `what` can run here: as root, with the users it names. Otherwise it
/// says why on stderr and is skipped, except under `CI=true`, where that is a failure.
pub(crate) fn as_root_with(what: &str, users: &[&str]) -> bool {
    let missing: Vec<&str> = users
        .iter()
        .copied()
        .filter(|u| user_ids(u).is_none())
        .collect();
    let why = if !running_as_root() {
        "the tests do not run as root".to_string()
    } else if !missing.is_empty() {
        format!("no user {} here", missing.join(", "))
    } else {
        return true;
    };
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true and {why}: {what} cannot run");
    }
    eprintln!("skipped {what}: {why}");
    false
}

/// A CGI request run as `ids` (uid, gid), or as this process when `None`.
fn cgi_as(root: &Path, query: &str, ids: Option<(u32, u32)>) -> CgiOutput {
    let cgi = Cgi::get(root, query);
    let mut cmd = match ids {
        // Where that user may run it: beside the Archive, in its temporary directory.
        Some((uid, gid)) => {
            let bin = runnable_by_others(&ibi_archive_bin(), root.parent().unwrap());
            let mut cmd = cgi.command_of(&bin);
            cmd.uid(uid).gid(gid);
            cmd
        }
        None => cgi.command(),
    };
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = output_or_hang(child, "the CGI run");
    assert!(out.status.success(), "{out:?}");
    parse_cgi(
        &out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn pair<'a>(text: &'a str, name: &str) -> &'a str {
    text.split("\r\n")
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no {name} in {text}"))
}

/// A urlRequest for A and the acknowledgment of its answer, as `ids`; what each wrote on
/// stderr.
fn request_and_acknowledge(root: &Path, ids: Option<(u32, u32)>) -> (String, String) {
    let asked = cgi_as(
        root,
        &format!(
            "servicesubject=urlRequest&clientinformation.ipaddress=127.0.0.1&parsedibiurl.ibi={A}"
        ),
        ids,
    );
    let text = asked.text();
    let (url, key) = (pair(&text, "url"), pair(&text, "urlkey"));
    let acked = cgi_as(
        root,
        &format!("servicesubject=acknowledgment&clientinformation.ipaddress=127.0.0.1&contenttype=Data&ibi=ibip%20{A}&url={url}&urlkey={key}"),
        ids,
    );
    assert_eq!(acked.text(), "notice {acknowledgment received}");
    (asked.stderr, acked.stderr)
}

/// Every entry under `dir` (itself included), with its owner and group.
fn owners(dir: &Path) -> Vec<(String, u32, u32)> {
    let mut out = Vec::new();
    for e in walkdir_sorted(dir) {
        let m = fs::symlink_metadata(&e).unwrap();
        out.push((e.display().to_string(), m.uid(), m.gid()));
    }
    out
}

fn walkdir_sorted(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    if fs::symlink_metadata(dir).unwrap().is_dir() {
        let mut names: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        for n in names {
            out.extend(walkdir_sorted(&n));
        }
    }
    out
}

#[test]
fn what_root_makes_in_var_belongs_to_the_owner_of_var() {
    if !as_root_with(
        "what_root_makes_in_var_belongs_to_the_owner_of_var",
        &["www-data"],
    ) {
        return;
    }
    let www = user_ids("www-data").unwrap();
    let dir = archive_tempdir();
    let root = dir.path();
    copy_sample(root);
    // As the README deploys it: var/ www-data's alone, archive.toml of its group.
    prepare_archive(root);
    let var = root.join("var");
    assert_eq!(fs::read_dir(&var).unwrap().count(), 0);

    // Root first: a urlkey issued, its acknowledgment counted, col/'s prefixes remembered.
    let (asked, acked) = request_and_acknowledge(root, None);
    assert_eq!((asked.as_str(), acked.as_str()), ("", ""));
    let (code, _, err) = run_cmd(&["prefixes", "--root", root.to_str().unwrap()]);
    assert_eq!((code, err.as_str()), (0, ""));

    let made = owners(&var);
    let names: Vec<String> = made
        .iter()
        .map(|(p, _, _)| p.strip_prefix(var.to_str().unwrap()).unwrap().to_string())
        .collect();
    // var/, the secret, the prefixes, the log and its synced record, the marks'
    // directory, one hour's, one mark and the file the marks of its hour are links to,
    // the directory of the items' access counts and the count of the item acknowledged;
    // and archive.toml's snapshot once archive.toml has settled (seconds after it was
    // copied: the runs may or may not have reached that), www-data's as the rest.
    let counted = names.iter().filter(|n| *n != "/archive.toml.snapshot");
    assert_eq!(counted.count(), 11, "{names:?}");
    for n in [
        "",
        "/accesses",
        "/acknowledged",
        "/acknowledgments.log",
        "/acknowledgments.synced",
        "/col-prefixes",
        "/urlkey.secret",
    ] {
        assert!(names.iter().any(|x| x == n), "{n} not in {names:?}");
    }
    for (path, uid, gid) in &made {
        assert_eq!((*uid, *gid), www, "{path} is not www-data's");
    }
    let secret = fs::metadata(var.join("urlkey.secret")).unwrap();
    assert_eq!(secret.permissions().mode() & 0o777, 0o600);

    // The service, as www-data, then uses them: the secret is read (a key issued as root
    // checks out), the second access is counted, nothing is said.
    let (asked, acked) = request_and_acknowledge(root, Some(www));
    assert_eq!((asked.as_str(), acked.as_str()), ("", ""));
    let log = fs::read_to_string(var.join("acknowledgments.log")).unwrap();
    assert_eq!(log.lines().count(), 2, "{log}");
    // The item's count, made by root, is www-data's to add to: what its landing page
    // shows is what the log holds.
    let item = log.lines().next().unwrap().split('\t').nth(2).unwrap();
    assert_eq!(ibi_archive::acklog::access_count(&var, item), 2, "{log}");
}

#[test]
fn a_user_who_does_not_own_var_is_refused_with_the_chown_to_run() {
    if !as_root_with(
        "a_user_who_does_not_own_var_is_refused_with_the_chown_to_run",
        &["www-data", "nobody"],
    ) {
        return;
    }
    let (www_uid, _) = user_ids("www-data").unwrap();
    let nobody = user_ids("nobody").unwrap();
    let dir = archive_tempdir();
    let root = dir.path();
    copy_sample(root);
    prepare_archive(root);
    // var/ www-data's, writable by nobody's group too: nobody could make files there,
    // which the service (www-data) could then not use.
    let var = root.join("var");
    std::os::unix::fs::chown(&var, Some(www_uid), Some(nobody.1)).unwrap();
    fs::set_permissions(&var, fs::Permissions::from_mode(0o770)).unwrap();
    fs::set_permissions(root.join("archive.toml"), fs::Permissions::from_mode(0o644)).unwrap();

    let (asked, acked) = request_and_acknowledge(root, Some(nobody));
    let var_shown = var.display();
    let refusal = format!(
        "{var_shown} belongs to www-data (uid {www_uid}), not to nobody (uid {}): run this as www-data or as root, or, if the web server runs as nobody, chown -R nobody: {var_shown}",
        nobody.0
    );
    assert!(
        asked.contains(&format!(
            "{var_shown}/urlkey.secret: cannot create: {refusal}; acknowledgments cannot be counted"
        )),
        "{asked}"
    );
    // The acknowledgment (of a key signed with that run's secret alone) is not counted,
    // for the same reason, and nothing was made in var/.
    assert!(acked.contains(&refusal), "{acked}");
    assert_eq!(fs::read_dir(&var).unwrap().count(), 0);

    // A valid key (issued by a run as www-data) acknowledged by nobody: the access log
    // and the marks are refused as well.
    let www = user_ids("www-data").unwrap();
    let text = cgi_as(
        root,
        &format!(
            "servicesubject=urlRequest&clientinformation.ipaddress=127.0.0.1&parsedibiurl.ibi={A}"
        ),
        Some(www),
    )
    .text();
    let (url, key) = (pair(&text, "url"), pair(&text, "urlkey"));
    fs::set_permissions(var.join("urlkey.secret"), fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::chown(var.join("urlkey.secret"), None, Some(nobody.1)).unwrap();
    let acked = cgi_as(
        root,
        &format!("servicesubject=acknowledgment&clientinformation.ipaddress=127.0.0.1&contenttype=Data&ibi=ibip%20{A}&url={url}&urlkey={key}"),
        Some(nobody),
    );
    assert!(acked.stderr.contains(&refusal), "{}", acked.stderr);
    // (archive.toml's snapshot, should the run as www-data have written it, aside.)
    let mut left: Vec<String> = fs::read_dir(&var)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != "archive.toml.snapshot")
        .collect();
    left.sort();
    assert_eq!(left, ["urlkey.secret"]);
}

/// var/ made by the service where there was none (the first request of an Archive whose
/// var/ was not made by init, as the repository's sample) is its maker's alone, mode 700:
/// it holds the urlkey secret and the access log.
#[test]
fn a_var_made_by_the_service_is_its_makers_alone() {
    let dir = archive_tempdir();
    let root = dir.path().join("archive");
    copy_sample(&root);
    assert!(!root.join("var").exists());
    let (code, out, err) = run_cmd(&[
        "query",
        "--root",
        root.to_str().unwrap(),
        &format!(
            "servicesubject=urlRequest&clientinformation.ipaddress=127.0.0.1&parsedibiurl.ibi={A}"
        ),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let mode = |p: &str| fs::metadata(root.join(p)).unwrap().mode() & 0o7777;
    assert_eq!((mode("var"), mode("var/urlkey.secret")), (0o700, 0o600));
}

/// `init` then `new` run as root, as the README's administrator runs them: var/ is the
/// web server's user's from the start (www-data by default, `--web-user` another), so
/// the next `check`, judging var/ as that user, finds no fault; `new` on an Archive
/// whose var/ is gone makes it for that user too.
#[test]
fn init_and_new_as_root_give_var_to_the_web_servers_user() {
    if !as_root_with(
        "init_and_new_as_root_give_var_to_the_web_servers_user",
        &["www-data", "nobody"],
    ) {
        return;
    }
    let dir = archive_tempdir();
    let file = dir.path().join("hello.txt");
    fs::write(&file, "Hello\n").unwrap();
    for (web_user, flag) in [("www-data", None), ("nobody", Some("nobody"))] {
        let root = dir.path().join(web_user);
        let r = root.to_str().unwrap();
        let mut init = vec![
            "init",
            "--root",
            r,
            "--address",
            "localhost:8080",
            "--host",
            "archive.example.org",
            "--ip",
            "127.0.0.1",
        ];
        let mut new = vec!["new", "--root", r, "--title", "Hello"];
        if let Some(user) = flag {
            init.extend(["--web-user", user]);
            new.extend(["--web-user", user]);
        }
        new.push(file.to_str().unwrap());
        let (code, _, err) = run_cmd(&init);
        assert_eq!(code, 0, "{err}");
        let ids = user_ids(web_user).unwrap();
        let var = fs::metadata(root.join("var")).unwrap();
        assert_eq!(
            (var.uid(), var.gid(), var.permissions().mode() & 0o777),
            (ids.0, ids.1, 0o700),
            "var/ after init"
        );
        let (code, _, err) = run_cmd(&new);
        assert_eq!(code, 0, "{err}");
        let (code, out, err) = run_cmd(&["check", "--root", r, "--web-user", web_user]);
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (0, "checked 3 items: 0 faults\n", ""),
            "check after init and new, as root, for {web_user}"
        );

        // var/ gone: new makes it again, for the same user.
        fs::remove_dir_all(root.join("var")).unwrap();
        let (code, _, err) = run_cmd(&new);
        assert_eq!(code, 0, "{err}");
        let var = fs::metadata(root.join("var")).unwrap();
        assert_eq!((var.uid(), var.gid()), ids, "var/ made by new");
    }
}
