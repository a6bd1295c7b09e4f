//! `ibi-archive init`: an Archive from nothing — init, three items, check without a fault,
//! and every item answering through the real CGI; what init refuses; the minting state it
//! primes (and `new` skipping dates taken by hand); the prefixes memory the tools keep
//! true; `IBI_ARCHIVE_ROOT` standing for --root.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use ::ibi::{IbiDate, Rep};

use common::{command, mask_urlkey, pair_value, pairs_of_run, parse_cgi, run_cmd, Cgi, CgiOutput};

/// `init` of an Archive reached at archive.example.org:8081, IBIps coded for 127.0.0.1.
fn init(root: &Path) -> Vec<(String, String)> {
    pairs_of_run(&[
        "init",
        "--root",
        root.to_str().unwrap(),
        "--address",
        "archive.example.org:8081",
        "--ip",
        "127.0.0.1",
    ])
}

/// The CGI run for a request to the service of the Archive at `root`.
fn cgi_service(root: &Path, service: &str, query: &str) -> CgiOutput {
    let out = Cgi::get(root, query)
        .command()
        .env("SCRIPT_NAME", format!("/{service}"))
        .output()
        .unwrap();
    assert!(out.status.success());
    parse_cgi(&out.stdout, String::from_utf8_lossy(&out.stderr).into())
}

/// The CGI run for a file URL's path (`/col/...`), as the web servers run it.
fn cgi_file(root: &Path, path: &str) -> CgiOutput {
    let out = Cgi::get(root, "")
        .command()
        .env("SCRIPT_NAME", "/col")
        .env("PATH_INFO", path.strip_prefix("/col").unwrap())
        .env("REQUEST_URI", path)
        .output()
        .unwrap();
    assert!(out.status.success());
    parse_cgi(&out.stdout, String::from_utf8_lossy(&out.stderr).into())
}

/// The `timestamp` of an item.toml, as written.
fn timestamp_of(root: &Path, rep: &str) -> String {
    let text = std::fs::read_to_string(root.join("col").join(rep).join("item.toml")).unwrap();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("timestamp"))
        .unwrap_or_else(|| panic!("no timestamp in {text}"));
    line.trim_start_matches([' ', '=']).trim().to_string()
}

#[test]
fn init_then_three_items_check_clean_and_answer_through_the_cgi() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("archive");
    let made = init(&root);
    let service = pair_value(&made, "rep").to_string();
    let service_ibip = pair_value(&made, "ibip").to_string();
    // The service item is minted from [minting] as `new` mints: the address's host and
    // port in the rep, 127.0.0.1 and no coded port (800) in the IBIp.
    assert!(
        service.starts_with("example.org/archive.8081/"),
        "{service}"
    );
    assert!(service_ibip.starts_with("LK47B6W/"), "{service_ibip}");
    let mode = |p: &str| {
        std::fs::metadata(root.join(p))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(
        (mode("archive.toml"), mode("col"), mode("var")),
        (0o600, 0o755, 0o700)
    );
    let toml = std::fs::read_to_string(root.join("archive.toml")).unwrap();
    assert!(toml.contains(&format!("archiveserviceibi = \"{service}\"\n")));
    assert!(toml.contains("archiveaddress    = \"archive.example.org:8081\"\n"));

    let inputs = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| {
        let p = inputs.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let (a, b, c) = (
        file("report.txt", "the report\n"),
        file("data.csv", "x,y\n1,2\n"),
        file("Relatório.txt", "relatório\n"),
    );
    let r = root.to_str().unwrap();
    let items = [
        pairs_of_run(&["new", "--root", r, &a]),
        pairs_of_run(&["new", "--root", r, &b]),
        pairs_of_run(&["new", "--root", r, "--title", "Relatório", &c]),
    ];
    // var/ is theirs who ran the commands (root, or the tester): judged as root's, who
    // may use anything, it is not at fault.
    let (code, out, err) = run_cmd(&["check", "--root", r, "--web-user", "root"]);
    // The service item, three items and the third one's metadata item.
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, "checked 5 items: 0 faults\n", "")
    );

    let names = ["report.txt", "data.csv", "Relat%c3%b3rio.txt"];
    let contents = ["the report\n", "x,y\n1,2\n", "relatório\n"];
    for ((item, name), content) in items.iter().zip(names).zip(contents) {
        let rep = pair_value(item, "rep");
        let ibip = pair_value(item, "ibip");
        for asked in [rep, ibip] {
            let answer = cgi_service(
                &root,
                &service,
                &format!(
                    "servicesubject=urlRequest&clientinformation.ipaddress=127.0.0.1&parsedibiurl.ibi={asked}"
                ),
            );
            assert_eq!(answer.status, 200, "{}", answer.stderr);
            let (masked, _) = mask_urlkey(&answer.text());
            let url = format!("http://archive.example.org:8081/col/{rep}/doc/{name}");
            let want = [
                "archiveaddress archive.example.org:8081".to_string(),
                "contenttype Data".to_string(),
                format!("ibi {{rep {rep} ibip {ibip}}}"),
                format!("ibi.archiveservice {{rep {service}}}"),
                "ibi.platformsoftware {}".to_string(),
                "state Original".to_string(),
                format!("timestamp {}", timestamp_of(&root, rep)),
                format!("url {url}"),
                "urlkey <urlkey>".to_string(),
            ]
            .join("\r\n");
            assert_eq!(masked, want, "{asked}");
            // The URL handed out answers with the file.
            let path = url.strip_prefix("http://archive.example.org:8081").unwrap();
            let file = cgi_file(&root, path);
            assert_eq!(file.status, 200, "{path}: {}", file.stderr);
            assert_eq!(file.body, content.as_bytes(), "{path}");
        }
    }
}

#[test]
fn init_overwrites_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("archive");
    init(&root);
    let toml = std::fs::read(root.join("archive.toml")).unwrap();
    let r = root.to_str().unwrap();
    let (code, out, err) = run_cmd(&["init", "--root", r, "--address", "other.example.org"]);
    assert_eq!(
        (code, out.as_str(), err),
        (
            1,
            "",
            format!(
                "ibi-archive: init: {r}/archive.toml exists: {r} already holds an Archive (or part of one), and init overwrites nothing\n"
            )
        )
    );
    assert_eq!(std::fs::read(root.join("archive.toml")).unwrap(), toml);
    // A root holding only col/ (items copied in by hand) is part of an Archive too.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(other.join("col/example.org")).unwrap();
    let o = other.to_str().unwrap();
    let (code, _, err) = run_cmd(&["init", "--root", o, "--address", "other.example.org"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(&format!("{o}/col exists")), "{err}");
    assert!(!other.join("archive.toml").exists());
    assert!(!other.join("var").exists());
}

#[test]
fn init_refusals_say_what_to_give() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("archive");
    let r = root.to_str().unwrap();
    for (args, line) in [
        (
            vec!["--address", "localhost:8081"],
            "ibi-archive: init: --address localhost:8081: \"localhost\" is not a fully qualified host name, which the IBIs of this Archive are made of: give --host, e.g. --host archive.example.org\n",
        ),
        (
            vec!["--address", "a.example.org:http"],
            "ibi-archive: init: --address \"a.example.org:http\": expected HOST or HOST:PORT, such as archive.example.org or localhost:8081\n",
        ),
        (
            vec!["--address", "a.example.org", "--ip", "1.2.3", ],
            "ibi-archive: init: --ip \"1.2.3\": expected an IPv4 or IPv6 address, such as 150.163.34.239\n",
        ),
        (
            vec!["--address", "a.example.org", "--ip", "127.0.0.1", "--email", "nobody"],
            "ibi-archive: init: --email \"nobody\" is not an e-mail address such as banon@dpi.inpe.br\n",
        ),
        (
            vec!["--address", "a.example.org", "--ip", "127.0.0.1", "--granularity", "7"],
            "ibi-archive: init: --granularity: invalid granularity \"7\": expected 60, 1, 0.1, 0.01, ... or 0.000000001 (seconds)\n",
        ),
    ] {
        let mut all = vec!["init", "--root", r];
        all.extend(&args);
        let (code, out, err) = run_cmd(&all);
        let want_code = if args.contains(&"--ip") && args.contains(&"1.2.3")
            || args.contains(&"--granularity")
        {
            2
        } else {
            1
        };
        assert_eq!((code, out.as_str(), err.as_str()), (want_code, "", line), "{args:?}");
        assert!(!root.exists(), "{args:?} left {r} behind");
    }
}

#[test]
fn the_service_date_is_never_minted_again_and_taken_dates_are_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("archive");
    let service = pair_value(&init(&root), "rep").to_string();
    let state = std::fs::read_to_string(root.join("var/minting.state")).unwrap();
    // The distributor holds the service item's date: the next date is after it.
    let service_date = service.rsplit_once('/').unwrap().1;
    let secs: i64 = state.trim().parse().unwrap();
    // The name leaves out the seconds when they are 00 (as at a minute boundary).
    let date = IbiDate::new(secs, "").unwrap().rep_suffix();
    assert_eq!(date.split_once('/').unwrap().1, service_date);

    // Items made by hand at each of the next 4 seconds after a state of now: `new` moves
    // past every one of them instead of failing.
    let now = ::ibi::time::SystemClock::now();
    std::fs::write(root.join("var/minting.state"), format!("{now}\n")).unwrap();
    let prefix = root.join("col/example.org/archive.8081");
    let mut taken = Vec::new();
    for s in 1..=4 {
        // Named as `new` names them: a date on a minute has no seconds in its name.
        let rel = IbiDate::new(now + s, "").unwrap().rep_suffix();
        std::fs::create_dir_all(prefix.join(&rel).join("doc")).unwrap();
        std::fs::write(
            prefix.join(&rel).join("item.toml"),
            "state = \"Original\"\ntimestamp = 2026-01-01T00:00:00Z\n",
        )
        .unwrap();
        taken.push(format!("example.org/archive.8081/{rel}"));
    }
    let inputs = tempfile::tempdir().unwrap();
    let f = inputs.path().join("a.txt");
    std::fs::write(&f, "a\n").unwrap();
    let made = pairs_of_run(&["new", "--root", root.to_str().unwrap(), f.to_str().unwrap()]);
    let rep = pair_value(&made, "rep");
    assert!(!taken.iter().any(|t| t == rep), "{rep} was taken");
    // Compared as dates: as text, a name on a minute (`…21.52`) sorts before the names of
    // that minute's seconds (`…21.52.01`).
    let date_of = |r: &str| Rep::parse(r).unwrap().date();
    assert!(
        date_of(rep) > date_of(taken.last().unwrap()),
        "{rep} after {taken:?}"
    );
    for t in &taken {
        let text = std::fs::read_to_string(root.join("col").join(t).join("item.toml")).unwrap();
        assert!(
            text.ends_with("timestamp = 2026-01-01T00:00:00Z\n"),
            "{t} changed"
        );
    }
}

#[test]
fn the_tools_keep_the_prefixes_memory_true() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("archive");
    init(&root);
    let memo = root.join("var/col-prefixes");
    let r = root.to_str().unwrap();
    let inputs = tempfile::tempdir().unwrap();
    let f = inputs.path().join("a.txt");
    std::fs::write(&f, "a\n").unwrap();
    let rep = pair_value(
        &pairs_of_run(&["new", "--root", r, f.to_str().unwrap()]),
        "rep",
    )
    .to_string();
    let (code, _, err) = run_cmd(&["delete", "--root", r, &rep]);
    assert_eq!(code, 0, "{err}");
    // `prefixes` rewrites the file only when a directory it names changed since: after
    // init, new and delete, it finds nothing to list.
    let before = std::fs::read(&memo).unwrap();
    let ino = |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
    let before_ino = ino(&memo);
    let (code, out, err) = run_cmd(&["prefixes", "--root", r]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, "example.org/archive.8081\n", "")
    );
    assert_eq!(std::fs::read(&memo).unwrap(), before);
    assert_eq!(
        ino(&memo),
        before_ino,
        "var/col-prefixes was rewritten: it was stale"
    );
}

#[test]
fn ibi_archive_root_stands_for_root() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("archive");
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let in_env = |args: &[&str]| -> (i32, String, String) {
        let out = command(args)
            .env("IBI_ARCHIVE_ROOT", &root)
            .current_dir(&elsewhere)
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stdout).into(),
            String::from_utf8_lossy(&out.stderr).into(),
        )
    };
    let (code, out, err) = in_env(&[
        "init",
        "--address",
        "archive.example.org:8081",
        "--ip",
        "127.0.0.1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(root.join("archive.toml").is_file());
    let service = out
        .lines()
        .find_map(|l| l.strip_prefix("rep "))
        .unwrap()
        .to_string();
    // var/ is theirs who ran the commands (root, or the tester): judged as root's, who
    // may use anything, it is not at fault.
    let (code, out, err) = in_env(&["check", "--web-user", "root"]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, "checked 1 item: 0 faults\n", "")
    );
    let (code, out, _) = in_env(&["describe", &service]);
    assert_eq!(code, 0);
    assert!(out.contains("state Original"), "{out}");
    // --root wins over the variable.
    let (code, out, _) = in_env(&["check", "--root", elsewhere.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(out.starts_with("archive.toml: "), "{out}");
    assert!(out.ends_with("checked 0 items: 1 fault\n"), "{out}");
}

/// `--resolver URL`, given once or more with `--email`, names the resolvers of
/// `[registration]`, each in a `[[registration.resolver]]` table with a new key of its
/// own, in the order given (none: the standard's resolver); without `--email` there is
/// no registration to put them in; a URL that is not http:// is refused.
#[test]
fn init_names_the_resolvers_to_join() {
    let tmp = tempfile::tempdir().unwrap();
    // The exit status, the outputs, and the resolvers' tables: each url, and whether its
    // key follows rule chave and is no other table's.
    let registration = |name: &str, extra: &[&str]| -> (i32, String, String, String) {
        let root = tmp.path().join(name);
        let mut args = vec![
            "init",
            "--root",
            root.to_str().unwrap(),
            "--address",
            "archive.example.org:8081",
            "--ip",
            "127.0.0.1",
        ];
        args.extend(extra);
        let (code, out, err) = run_cmd(&args);
        let toml = std::fs::read_to_string(root.join("archive.toml")).unwrap_or_default();
        let mut keys: Vec<&str> = Vec::new();
        let mut lines = Vec::new();
        for line in toml.lines().skip_while(|l| *l != "[registration]") {
            if line == "[[registration.resolver]]" || line.starts_with("url = ") {
                lines.push(line.to_string());
            } else if let Some(key) = line.strip_prefix("key = ") {
                let key = key.trim_matches('"');
                let own = ibi::registration::Key::parse(key).is_ok() && !keys.contains(&key);
                lines.push(format!(
                    "key: {}",
                    if own { "its own" } else { "shared or bad" }
                ));
                keys.push(key);
            } else if line.starts_with("key") || line.starts_with("resolver") {
                lines.push(line.to_string());
            }
        }
        (code, out, err, lines.join("\n"))
    };
    let (code, _, err, lines) = registration(
        "one",
        &[
            "--email",
            "a@example.org",
            "--resolver",
            "http://localhost:8090/J8LNKB5R7W/3FUQHC5",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines,
        "[[registration.resolver]]\nurl = \"http://localhost:8090/J8LNKB5R7W/3FUQHC5\"\nkey: its own"
    );
    let (code, _, err, lines) = registration(
        "two",
        &[
            "--email",
            "a@example.org",
            "--resolver",
            "http://b.example.org/J8LNKB5R7W/3FUQHC5",
            "--resolver",
            "http://a.example.org:8090/J8LNKB5R7W/3FUQHC5",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines,
        "[[registration.resolver]]\nurl = \"http://b.example.org/J8LNKB5R7W/3FUQHC5\"\nkey: its own\n[[registration.resolver]]\nurl = \"http://a.example.org:8090/J8LNKB5R7W/3FUQHC5\"\nkey: its own"
    );
    let (code, _, err, lines) = registration("default", &["--email", "a@example.org"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines,
        "[[registration.resolver]]\nurl = \"http://urlib.net/J8LNKB5R7W/3FUQHC5\"\nkey: its own"
    );
    assert_eq!(
        registration("none", &[]).3,
        "",
        "no [registration] without --email"
    );
    let (code, out, err, _) = registration(
        "noemail",
        &["--resolver", "http://localhost:8090/J8LNKB5R7W/3FUQHC5"],
    );
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            2,
            "",
            "ibi-archive: init: --resolver needs --email: the resolvers are joined through [registration], which --email writes\n"
        )
    );
    assert!(!tmp.path().join("noemail").exists());
    let (code, out, err, _) = registration(
        "https",
        &[
            "--email",
            "a@example.org",
            "--resolver",
            "ftp://r.example.org/X/Y",
        ],
    );
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            2,
            "",
            "ibi-archive: init: --resolver \"ftp://r.example.org/X/Y\" is not an http:// URL\n"
        )
    );
    assert!(!tmp.path().join("https").exists());
}

/// What `init` says to do next names what an installed system has (the Debian package's
/// Apache configuration and README), never a file of the source tree that the package does
/// not install, and reloads Apache as the README and the man page do.
#[test]
fn the_next_steps_name_the_installed_files() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("archive");
    let (code, out, err) = common::run_cmd(&[
        "init",
        "--root",
        root.to_str().unwrap(),
        "--address",
        "archive.example.org:8081",
        "--ip",
        "127.0.0.1",
    ]);
    assert_eq!(code, 0, "{err}");
    let service = out
        .lines()
        .find_map(|l| l.strip_prefix("rep "))
        .unwrap()
        .to_string();
    let r = std::fs::canonicalize(&root).unwrap();
    let r = r.to_str().unwrap();
    let serve_it = format!(
        "  2. Serve it. With the Debian package, in /etc/apache2/conf-available/ibi-archive.conf set\n\
         \x20      Define IBI_ARCHIVE_SERVICE_IBI {service}\n\
         \x20      Define IBI_ARCHIVE_ROOT {r}\n\
         \x20    then run\n\
         \x20      a2enmod cgid alias env && a2enconf ibi-archive\n\
         \x20      apache2ctl configtest && apache2ctl graceful\n\
         \x20    and make Apache listen on the port of archive.example.org:8081. lighttpd, or a\n\
         \x20    build from the source: the administrator's guide\n\
         \x20    (/usr/share/doc/ibi-archive/administrators-guide.md),\n\
         \x20    \"Deploying under Apache or lighttpd\". Or try it at once with\n\
         \x20      ibi-archive serve --root {r} --listen 8081\n\
         \x20 3. Add items:"
    );
    assert!(err.contains(&serve_it), "{err}");
    assert!(!err.contains("cgi-bin"), "{err}");
    assert!(!err.contains("systemctl reload"), "{err}");
    // So do the comments of the archive.toml it writes.
    let toml = std::fs::read_to_string(root.join("archive.toml")).unwrap();
    assert!(
        toml.contains(
            "# /<this IBI> (IBI_ARCHIVE_SERVICE_IBI in the web server's configuration: the Debian\n\
             # package's /etc/apache2/conf-available/ibi-archive.conf).\n"
        ),
        "{toml}"
    );
    assert!(!toml.contains("cgi-bin"), "{toml}");
}
