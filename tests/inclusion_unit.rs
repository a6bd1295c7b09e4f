//! `debian/ibi-archive-inclusion.service`, the systemd unit that includes an Archive served
//! by Apache (the CGI program) in its resolvers while Apache runs and excludes it when
//! Apache stops (resolution standard §7.2, Figure 7.1):
//!
//! - what ties it to Apache and what it runs, read from the file;
//! - `systemd-analyze verify` on a copy whose commands name the executable under test;
//! - then, as there is no systemd here to start it, its ExecStart and ExecStop run as
//!   systemd runs them (a clean environment: the unit's Environment=, then its
//!   EnvironmentFile=, which overrides it), for a copy of the sample Archive served by
//!   Apache (the harness of tests/common/server.rs) and registered in two real
//!   `ibi-resolver serve`: included in both, confirmed through Apache, then excluded.
//!
//! tests/debian_package.rs checks the unit as the package installs it. Under `CI=true` a
//! missing apache2 or systemd-analyze fails the tests.

use std::fs;
use std::path::Path;
use std::process::Command;

use common::resolver::{archive, archive_row, registration, Resolver, SAMPLE_SERVICE};

const UNIT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/debian/ibi-archive-inclusion.service"
);
/// The executable the unit's commands name.
const UNIT_BIN: &str = "/usr/bin/ibi-archive";
/// The environment file it reads, if there is one.
const UNIT_ENV_FILE: &str = "/etc/default/ibi-archive-inclusion";
const KEY: &str = "1618033988-7499894848";

/// The settings of a unit file: (section, key, value), in order.
fn settings(text: &str) -> Vec<(String, String, String)> {
    let mut section = String::new();
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_string();
            continue;
        }
        let (key, value) = line.split_once('=').unwrap_or_else(|| panic!("{line:?}"));
        out.push((
            section.clone(),
            key.trim().to_string(),
            value.trim().to_string(),
        ));
    }
    out
}

/// The values of `key` in `section`.
fn values<'a>(settings: &'a [(String, String, String)], section: &str, key: &str) -> Vec<&'a str> {
    settings
        .iter()
        .filter(|(s, k, _)| s == section && k == key)
        .map(|(_, _, v)| v.as_str())
        .collect()
}

/// The unit with its commands naming the executable under test, and its environment file
/// `env_file`.
fn unit_for_test(env_file: &Path) -> String {
    let text = fs::read_to_string(UNIT).unwrap();
    for needed in [
        format!("\nExecStart={UNIT_BIN} "),
        format!("\nExecStop={UNIT_BIN} "),
        format!("\nEnvironmentFile=-{UNIT_ENV_FILE}\n"),
    ] {
        assert!(text.contains(&needed), "{needed:?} in:\n{text}");
    }
    text.replace(
        &format!("={UNIT_BIN} "),
        &format!("={} ", common::ibi_archive_bin().display()),
    )
    .replace(UNIT_ENV_FILE, env_file.to_str().unwrap())
}

/// `systemd-analyze verify` of the unit text `text`, saved as
/// `dir`/ibi-archive-inclusion.service: success, and everything it printed. Its
/// Documentation= man page is the package's, not installed here (`--man=no`;
/// tests/debian_package.rs verifies the installed unit with it).
fn verify(dir: &Path, text: &str) -> (bool, String) {
    common::systemd::systemd_verify(dir, "ibi-archive-inclusion.service", text, &["--man=no"])
}

/// Runs the command of `key` (ExecStart, ExecStop) of the unit `text` as systemd does:
/// no shell, a clean environment with the unit's Environment= and then the assignments
/// of its EnvironmentFile= (`-`: a file that may be missing). (exit code, stdout, stderr)
fn run_as_the_unit(text: &str, key: &str) -> (i32, String, String) {
    let s = settings(text);
    let [command] = values(&s, "Service", key)[..] else {
        panic!("one {key} in:\n{text}")
    };
    let mut env: Vec<(String, String)> = Vec::new();
    for assignment in values(&s, "Service", "Environment") {
        let (k, v) = assignment.split_once('=').unwrap();
        env.push((k.to_string(), v.to_string()));
    }
    for file in values(&s, "Service", "EnvironmentFile") {
        let (optional, path) = match file.strip_prefix('-') {
            Some(p) => (true, p),
            None => (false, file),
        };
        let Ok(contents) = fs::read_to_string(path) else {
            assert!(optional, "EnvironmentFile={file} is missing");
            continue;
        };
        for line in contents.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (k, v) = line.split_once('=').unwrap();
            env.push((k.to_string(), v.to_string()));
        }
    }
    let argv: Vec<&str> = command.split_whitespace().collect();
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .env_clear()
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .envs(env)
        .current_dir("/")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_unit_goes_with_apache_and_runs_include_then_exclude() {
    let s = settings(&fs::read_to_string(UNIT).unwrap());
    assert_eq!(values(&s, "Unit", "PartOf"), ["apache2.service"]);
    assert!(values(&s, "Unit", "After")
        .iter()
        .any(|a| a.split_whitespace().any(|u| u == "apache2.service")));
    assert_eq!(values(&s, "Install", "WantedBy"), ["apache2.service"]);
    for (key, value) in [
        ("Type", "oneshot"),
        ("RemainAfterExit", "yes"),
        ("ExecStart", "/usr/bin/ibi-archive include"),
        ("ExecStop", "/usr/bin/ibi-archive exclude"),
        ("Environment", "IBI_ARCHIVE_ROOT=/var/lib/ibi-archive"),
    ] {
        assert_eq!(values(&s, "Service", key), [value], "{key}");
    }
}

#[test]
fn systemd_analyze_verifies_the_unit() {
    if !common::systemd::systemd_analyze_available() {
        eprintln!("skipping: systemd-analyze is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let text = unit_for_test(Path::new(UNIT_ENV_FILE));
    // Not a word: no unknown directive, no bad value, executables that exist.
    assert_eq!(verify(tmp.path(), &text), (true, String::new()));
    // While here it does speak up, about a value it cannot read.
    let (_, said) = verify(
        tmp.path(),
        &text.replace("RemainAfterExit=yes", "RemainAfterExit=maybe"),
    );
    assert!(
        said.contains("Failed to parse boolean value, ignoring: maybe"),
        "{said}"
    );
}

#[test]
fn the_units_commands_include_the_archive_served_by_apache_and_exclude_it() {
    if !common::apache2_available() {
        eprintln!("skipping: apache2 (with mod_cgid) is not installed");
        return;
    }
    let tmp = common::archive_tempdir();
    let mut resolvers = Vec::new();
    for name in ["a", "b"] {
        let dir = tmp.path().join(name);
        fs::create_dir(&dir).unwrap();
        let r = Resolver::start(&dir, "2s", "");
        r.register(SAMPLE_SERVICE, KEY);
        resolvers.push(r);
    }
    let urls: Vec<String> = resolvers.iter().map(Resolver::service).collect();
    let root = archive(tmp.path(), "archive", SAMPLE_SERVICE, &[], &[]);
    let apache = common::start_apache2(&root, &common::ibi_archive_bin(), SAMPLE_SERVICE);
    let address = apache.authority();
    registration(&root, &address, &urls, KEY);
    // The Archive root as the administrator names it: in the environment file.
    let env_file = tmp.path().join("ibi-archive-inclusion");
    fs::write(&env_file, format!("IBI_ARCHIVE_ROOT={}\n", root.display())).unwrap();
    let unit = unit_for_test(&env_file);
    let context = |said: &str| {
        let mut text = format!("{said}\n--- apache:\n{}", apache.error_log());
        for r in &resolvers {
            text.push_str(&format!("--- resolver {}:\n{}", r.service(), r.log()));
        }
        text
    };

    let (code, out, err) = run_as_the_unit(&unit, "ExecStart");
    let expected: String = urls
        .iter()
        .map(|u| format!("{u}: status.archive included\n{u}: status.confirmation successful\n"))
        .collect();
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, expected.as_str(), ""),
        "{}",
        context("")
    );
    for r in &resolvers {
        let (_, csv, _) = r.command(&["archives", "--csv"], "");
        let row = archive_row(&csv, SAMPLE_SERVICE).unwrap();
        assert_eq!(
            (
                row["included"].as_str(),
                row["address"].as_str(),
                row["confirmation"].as_str()
            ),
            ("yes", address.as_str(), "successful"),
            "{}",
            context(&csv)
        );
    }

    let (code, out, err) = run_as_the_unit(&unit, "ExecStop");
    let expected: String = urls
        .iter()
        .map(|u| format!("{u}: status.archive excluded\n"))
        .collect();
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, expected.as_str(), ""),
        "{}",
        context("")
    );
    for r in &resolvers {
        assert_eq!(r.included(SAMPLE_SERVICE), Some(false), "{}", context(""));
    }
}
