//! `ibi-resolver init`: the service IBI minted from the public URL by the rule of the
//! generation standard, the settings written (or the packaged ones completed, comments,
//! owner and mode kept), the registry created for the user of its directory; and where
//! every command finds its settings (`--config`, `IBI_RESOLVER_CONFIG`, the package's).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use common::resolver::Resolver;

/// `ibi-resolver ARGS` with `IBI_RESOLVER_CONFIG` set to `env_config`, or unset.
fn resolver(args: &[&str], env_config: Option<&Path>) -> (i32, String, String) {
    let mut cmd = Command::new(common::ibi_resolver_bin());
    cmd.args(args).env_remove("IBI_RESOLVER_CONFIG");
    if let Some(c) = env_config {
        cmd.env("IBI_RESOLVER_CONFIG", c);
    }
    common::run_with_stdin(&mut cmd, "")
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// `n` in base 27 over Table 7.6's digits, as the generation standard writes it.
fn base27(mut n: u64) -> String {
    const DIGITS: &[u8] = b"23456789ABCDEFGHJKLMNPQRSTU";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 27) as usize]);
        n /= 27;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap()
}

/// Runs `init` with `args`, then checks that it printed the three pairs of a service IBI
/// minted between the start and the end of the run; that IBI.
fn init_minting(args: &[&str], env_config: Option<&Path>, publicurl: &str) -> (String, String) {
    let before = now();
    let (code, out, err) = resolver(args, env_config);
    let after = now();
    assert_eq!(code, 0, "{out}{err}");
    let ibi = out
        .lines()
        .find_map(|l| l.strip_prefix("serviceibi "))
        .unwrap_or_else(|| panic!("{out}"))
        .to_string();
    assert_eq!(
        out,
        format!("publicurl {publicurl}\nserviceibi {ibi}\nserviceurl {publicurl}/{ibi}\n")
    );
    let date = ibi::Ibi::parse(&ibi).unwrap().date().seconds();
    assert!((before..=after).contains(&date), "{ibi}: {before}..{after}");
    (ibi, err)
}

#[test]
fn init_writes_settings_that_serve_takes_and_mints_by_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("resolver.toml");
    let c = config.to_str().unwrap();
    // An IP address: the IBIp of 127.0.0.1, port 8090 (Algorithm 5: "127.0.0.1" read in
    // base 11, 1.0e9 or so, is LK47B6 in base 27; W for IPv4; 8090 is D4K).
    let (ibi, err) = init_minting(
        &[
            "init",
            "--publicurl",
            "http://127.0.0.1:8090",
            "--config",
            c,
        ],
        None,
        "http://127.0.0.1:8090",
    );
    let date = ibi::Ibi::parse(&ibi).unwrap().date().seconds();
    // Algorithm 6: the seconds since 1995-08-01T00:00:00Z (807235200) in base 27.
    assert_eq!(
        ibi,
        format!("LK47B6WD4K/{}", base27((date - 807_235_200) as u64))
    );
    // The same IBI as the Archive's minting command gives for that date.
    let minted = common::pairs_of_run(&[
        "ibi",
        "mint",
        "--host",
        "resolver.example.org",
        "--ip",
        "127.0.0.1",
        "--ibip-port",
        "8090",
        "--date",
        &date.to_string(),
    ]);
    assert!(
        minted.contains(&("ibip".to_string(), ibi.clone())),
        "{minted:?}"
    );
    let registry = dir.path().join("resolver.sqlite");
    assert_eq!(
        err,
        format!(
            "ibi-resolver: wrote {c}; created the registry {}.
Next steps:
  1. Register each Archive with its service IBI and the registration key its
     administrator sends you (a key for this resolver alone):
       echo KEY | ibi-resolver register SERVICEIBI --email E --config {c}
  2. Start the resolver: ibi-resolver serve --config {c}
     (installed from the Debian package: systemctl enable --now ibi-resolver)
  3. Each Archive names this resolver, with that key, in its archive.toml,
       [[registration.resolver]]
       url = \"http://127.0.0.1:8090/{ibi}\"
       key = \"KEY\"
     and joins it: ibi-archive include
",
            registry.display()
        )
    );
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.contains(&format!("\nserviceibi = \"{ibi}\"\n")),
        "{text}"
    );
    assert!(
        text.contains("\npublicurl = \"http://127.0.0.1:8090\"\n"),
        "{text}"
    );
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&config), 0o640);
    assert_eq!(mode(&registry), 0o600);
    // The registry is there, empty, with its schema.
    let (code, out, err) = resolver(&["archives", "--csv", "--config", c], None);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    assert_eq!(out.lines().count(), 1, "{out}");

    // serve takes the file as init wrote it, listen moved to a free port.
    let port = common::free_port();
    std::fs::write(
        &config,
        text.replace(
            "\nlisten = \"127.0.0.1:8090\"\n",
            &format!("\nlisten = \"127.0.0.1:{port}\"\n"),
        ),
    )
    .unwrap();
    let r = Resolver::run(config.clone(), port);
    let home = common::http_get(&format!("{}/", r.base()));
    assert_eq!(home.status, 200, "{}", r.log());

    // Twice: refused, the file unchanged.
    let written = std::fs::read(&config).unwrap();
    let (code, out, err) = resolver(
        &[
            "init",
            "--publicurl",
            "http://127.0.0.1:8090",
            "--config",
            c,
        ],
        None,
    );
    assert_eq!(
        (code, out.as_str(), err),
        (
            1,
            "",
            format!("ibi-resolver: {c} sets serviceibi and publicurl already: this resolver is initialised (its serviceibi is how Archives know it; edit the file to change it)\n")
        )
    );
    assert_eq!(std::fs::read(&config).unwrap(), written);
}

#[test]
fn init_mints_a_rep_from_a_host_name_and_refuses_what_is_not_a_public_url() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("r.toml");
    let c = config.to_str().unwrap();
    // :443 is https's own port, left out of the URL; Algorithm 1 codes every port but 80.
    let (ibi, _) = init_minting(
        &[
            "init",
            "--publicurl",
            "https://Resolver.Example.org:443",
            "--config",
            c,
        ],
        None,
        "https://resolver.example.org",
    );
    let date = ibi::Ibi::parse(&ibi).unwrap().date();
    assert_eq!(
        ibi,
        format!("example.org/resolver.443/{}", date.rep_suffix())
    );
    let (ibi, _) = init_minting(
        &[
            "init",
            "--publicurl",
            "http://resolver.example.org:80",
            "--config",
            dir.path().join("s.toml").to_str().unwrap(),
        ],
        None,
        "http://resolver.example.org",
    );
    assert!(ibi.starts_with("example.org/resolver/"), "{ibi}");
    for (url, message) in [
        ("http://localhost:8090", "init: cannot mint the resolver's IBI from publicurl http://localhost:8090: invalid hostname \"localhost\": it has no dot, so it cannot be split into a word and a subdomain (a rep is made of a host name with a dot, or an IBIp of an IP address)"),
        ("http://r.example.org/x", "init: publicurl = \"http://r.example.org/x\" has a path, query or fragment; expected http://host[:port]"),
        ("ftp://r.example.org", "init: publicurl = \"ftp://r.example.org\" is not http or https; expected http://host[:port]"),
    ] {
        let t = dir.path().join("t.toml");
        let (code, out, err) =
            resolver(&["init", "--publicurl", url, "--config", t.to_str().unwrap()], None);
        assert_eq!(
            (code, out.as_str(), err),
            (2, "", format!("ibi-resolver: {message}\n"))
        );
        assert!(!t.exists());
    }
    let nowhere = dir.path().join("none/resolver.toml");
    let (code, out, err) = resolver(
        &[
            "init",
            "--publicurl",
            "http://resolver.example.org",
            "--config",
            nowhere.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(
        (code, out.as_str(), err),
        (
            1,
            "",
            format!("ibi-resolver: {}: cannot open its directory: No such file or directory (os error 2) (create it, or name another file with --config FILE)\n", nowhere.display())
        )
    );
    let (code, _, err) = resolver(&["init", "--config", c], None);
    assert_eq!(
        (code, err.as_str()),
        (
            2,
            "ibi-resolver: init: missing --publicurl URL; usage: ibi-resolver init --publicurl URL [--config FILE]\n"
        )
    );
}

/// The package's resolver.toml completed: the two commented lines replaced, every other
/// line kept byte for byte, the file's owner and mode kept; the registry given to the
/// owner of its directory when init runs as root.
#[test]
fn init_completes_the_packaged_settings_and_keeps_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let database = state.join("resolver.sqlite");
    let packaged =
        std::fs::read_to_string(common::repository().join("debian/resolver.toml")).unwrap();
    let old_database = "database = \"/var/lib/ibi-resolver/resolver.sqlite\"\n";
    assert!(packaged.contains(old_database));
    let packaged = packaged.replace(
        old_database,
        &format!("database = \"{}\"\n", database.display()),
    );
    let config = dir.path().join("resolver.toml");
    std::fs::write(&config, &packaged).unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o640)).unwrap();
    // As the package has them: root:ibi-resolver for the file, the state directory the
    // service user's (here uid and gid 65534), mode 700.
    let root = common::running_as_root();
    if root {
        std::os::unix::fs::chown(&config, Some(0), Some(65534)).unwrap();
        std::os::unix::fs::chown(&state, Some(65534), Some(65534)).unwrap();
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let c = config.to_str().unwrap();
    let (ibi, err) = init_minting(
        &[
            "init",
            "--publicurl",
            "http://resolver.example.org",
            "--config",
            c,
        ],
        None,
        "http://resolver.example.org",
    );
    let text = std::fs::read_to_string(&config).unwrap();
    let (old, new): (Vec<&str>, Vec<&str>) = (packaged.lines().collect(), text.lines().collect());
    assert_eq!(old.len(), new.len(), "{text}");
    for (a, b) in old.iter().zip(&new) {
        match *a {
            "#serviceibi = \"J8LNKB5R7W/3FUQHC5\"" => {
                assert_eq!(*b, format!("serviceibi = \"{ibi}\""))
            }
            "#publicurl = \"http://resolver.example.org\"" => {
                assert_eq!(*b, "publicurl = \"http://resolver.example.org\"")
            }
            _ => assert_eq!(a, b),
        }
    }
    assert!(text.ends_with('\n'));
    let meta = std::fs::metadata(&config).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o640);
    let registry = std::fs::metadata(&database).unwrap();
    assert_eq!(registry.permissions().mode() & 0o777, 0o600);
    if root {
        assert_eq!((meta.uid(), meta.gid()), (0, 65534));
        assert_eq!((registry.uid(), registry.gid()), (65534, 65534));
        // Nothing else SQLite made beside it is left to root.
        for entry in std::fs::read_dir(&state).unwrap() {
            let m = entry.unwrap().metadata().unwrap();
            assert_eq!((m.uid(), m.gid()), (65534, 65534));
        }
        assert_eq!(
            err.lines().next().unwrap(),
            format!(
                "ibi-resolver: set serviceibi and publicurl in {c}; created the registry {} (owner: user 65534, the owner of its directory).",
                database.display()
            )
        );
    } else {
        eprintln!("not root: the owners of the file and the registry are not checked");
    }
    // Twice: refused.
    let (code, _, err) = resolver(
        &[
            "init",
            "--publicurl",
            "http://resolver.example.org",
            "--config",
            c,
        ],
        None,
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), text);
}

#[test]
fn the_settings_are_found_through_the_environment_or_at_the_package_s_place() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("elsewhere.toml");
    // init writes the file the variable names.
    let (ibi, err) = init_minting(
        &["init", "--publicurl", "http://127.0.0.1:8090"],
        Some(&config),
        "http://127.0.0.1:8090",
    );
    assert!(
        err.contains(&format!("--config {}", config.display())),
        "{err}"
    );
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.contains(&ibi));
    let (code, out, err) = resolver(&["archives", "--csv"], Some(&config));
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(out.starts_with("serviceibi,"), "{out}");
    // --config wins over the variable.
    let (code, _, err) = resolver(
        &["archives", "--config", "/nonexistent/resolver.toml"],
        Some(&config),
    );
    assert_eq!(code, 1);
    assert!(
        err.starts_with("ibi-resolver: /nonexistent/resolver.toml: "),
        "{err}"
    );
    // Neither: the package's file, named with how to choose another.
    let packaged = Path::new("/etc/ibi-resolver/resolver.toml");
    if packaged.exists() {
        eprintln!("skipping the default: {} exists here", packaged.display());
        return;
    }
    let (code, out, err) = resolver(&["archives"], None);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            1,
            "",
            "ibi-resolver: /etc/ibi-resolver/resolver.toml: No such file or directory (os error 2) (choose the settings with --config FILE or IBI_RESOLVER_CONFIG=FILE; ibi-resolver init --publicurl URL writes them)\n"
        )
    );
}

/// Another user than root may not create the registry in a directory that is not its
/// own (the service user could not use it, nor could it be given to that user): refused,
/// saying how, and nothing written.
#[test]
fn init_by_another_user_than_root_refuses_a_directory_not_its_own() {
    if !common::running_as_root() {
        eprintln!("skipping: needs root to run init as another user");
        return;
    }
    let (uid, gid) = common::user_ids("nobody").expect("no user nobody");
    let tmp = common::archive_tempdir();
    // The settings' directory the user's; the registry's root's, as /var/lib is.
    let etc = tmp.path().join("etc");
    let state = tmp.path().join("state");
    std::fs::create_dir(&etc).unwrap();
    std::fs::create_dir(&state).unwrap();
    std::os::unix::fs::chown(&etc, Some(uid), Some(gid)).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = etc.join("resolver.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:8090\"\ndatabase = \"{}\"\n",
            state.join("resolver.sqlite").display()
        ),
    )
    .unwrap();
    std::os::unix::fs::chown(&config, Some(uid), Some(gid)).unwrap();
    let bin = common::runnable_by_others(&common::ibi_resolver_bin(), tmp.path());
    let before = std::fs::read(&config).unwrap();
    let (code, out, err) = {
        use std::os::unix::process::CommandExt;
        common::run_with_stdin(
            Command::new(&bin)
                .args([
                    "init",
                    "--publicurl",
                    "http://resolver.example.org",
                    "--config",
                    config.to_str().unwrap(),
                ])
                .env_remove("IBI_RESOLVER_CONFIG")
                .uid(uid)
                .gid(gid),
            "",
        )
    };
    assert_eq!(
        (code, out.as_str(), err),
        (
            1,
            "",
            format!(
                "ibi-resolver: {}: the registry's directory {} belongs to user 0 and you are user {uid}: run ibi-resolver init as root (it gives the registry to the directory's owner) or as that user\n",
                state.join("resolver.sqlite").display(),
                state.display()
            )
        )
    );
    assert_eq!(std::fs::read(&config).unwrap(), before);
    assert_eq!(std::fs::read_dir(&state).unwrap().count(), 0);
}

/// init run as root makes the registry in the directory of the service's user, who may put
/// links there: a link named as SQLite's write-ahead log, leading to a file only root may
/// write, is not written through (SQLite refuses to open a database whose journal or
/// log is such a link: init fails, and says the registry cannot be opened).
#[test]
fn init_as_root_writes_through_no_link_the_service_user_put_beside_the_registry() {
    if !common::running_as_root() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true: this test runs init as root"
        );
        eprintln!("skipping: needs root");
        return;
    }
    let (uid, gid) = common::user_ids("nobody").expect("no user nobody");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::os::unix::fs::chown(&state, Some(uid), Some(gid)).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    // Root's alone, in a directory only root enters.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "root's own\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    for companion in ["-wal", "-journal", "-shm"] {
        let link = state.join(format!("resolver.sqlite{companion}"));
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        std::os::unix::fs::lchown(&link, Some(uid), Some(gid)).unwrap();
    }
    let config = dir.path().join("resolver.toml");
    std::fs::write(
        &config,
        format!(
            "database = \"{}\"\n",
            state.join("resolver.sqlite").display()
        ),
    )
    .unwrap();
    let (code, out, err) = resolver(
        &[
            "init",
            "--publicurl",
            "http://resolver.example.org",
            "--config",
            config.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "root's own\n",
        "init wrote through a link: exit {code}\n{out}{err}"
    );
    let m = std::fs::metadata(&victim).unwrap();
    assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (0, 0, 0o600));
}
