//! Hostile input at the library level: the routes of the Archive (`routes::route`, then
//! `routes::file`, as the CGI and `ibi-archive serve` answer them) for hostile URL paths
//! over a tampered copy of the sample Archive, and the inputs that fuzzing found (fuzz/),
//! kept as regression cases.

use std::path::{Path, PathBuf};

use common::Fixture;
use ibi_archive::config::Config;
use ibi_archive::http::Reply;
use ibi_archive::routes::{self, route, Route};

/// What a client at 127.0.0.1 gets for a GET of `path`: the status and, for a file, its
/// bytes (for the service, the PATH_INFO it would get).
fn get(config: &Config, root: &Path, path: &str) -> (u16, Vec<u8>) {
    match route(config, path) {
        Route::File { rep, path } => {
            let client = Some("127.0.0.1".parse().unwrap());
            match routes::file(root, config, &rep, path.as_deref(), client) {
                Reply::File(mut f) => {
                    let mut bytes = Vec::new();
                    std::io::Read::read_to_end(&mut f.file, &mut bytes).unwrap();
                    (200, bytes)
                }
                Reply::Page(a) => (a.status, a.body),
            }
        }
        Route::Service { path_info } => (0, path_info.into_bytes()),
        Route::NotFound => (404, b"not found\n".to_vec()),
    }
}

const ITEM: &str = "col/iconet.com.br/banon/2009/09.09.22.01";
const SERVICE: &str = "/sid.inpe.br/mtc-m18@80/2008/03.17.15.17";

/// The sample Archive with symlinks and odd files in and around one item's doc/.
fn tampered() -> (Fixture, tempfile::TempDir) {
    let f = Fixture::sample();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), b"secret\n").unwrap();
    common::copy_tree(&f.path("col/urlib.net"), &outside.path().join("evil"));
    let doc = f.path(&format!("{ITEM}/doc"));
    let link =
        |target: &Path, name: &str| std::os::unix::fs::symlink(target, doc.join(name)).unwrap();
    link(Path::new("/etc/passwd"), "passwd");
    link(Path::new("/etc"), "etc");
    link(Path::new(".."), "up");
    link(&outside.path().join("secret.txt"), "secret.txt");
    link(&f.path("archive.toml"), "config.txt");
    link(Path::new("reference.bib"), "inside.bib");
    f.write(
        &format!("{ITEM}/doc/sub/item.toml"),
        b"state = \"Original\"\n",
    );
    f.write(&format!("{ITEM}/doc/sub/archive.toml"), b"x\n");
    f.write(&format!("{ITEM}/doc/sub/a b.txt"), b"x\n");
    std::os::unix::fs::symlink(outside.path().join("evil"), f.path("col/evil.org")).unwrap();
    // An item whose doc/ is a file.
    f.remove("col/urlib.net/www/2014/03.25.23.20/doc");
    f.write("col/urlib.net/www/2014/03.25.23.20/doc", b"not a folder\n");
    (f, outside)
}

#[test]
fn serve_routes_refuse_hostile_paths() {
    let (f, _outside) = tampered();
    let root = f.root();
    let config = Config::load(root).unwrap();
    let long = format!("/col/{}", "a/".repeat(50_000));
    let not_found = [
        // Traversal in every spelling.
        format!("/{ITEM}/doc/../item.toml"),
        format!("/{ITEM}/doc/%2e%2e/item.toml"),
        format!("/{ITEM}/doc/%2E%2E%2Fitem.toml"),
        format!("/{ITEM}/doc/%252e%252e/item.toml"),
        format!("/{ITEM}/doc/..%5c..%5carchive.toml"),
        format!("/{ITEM}/doc/%c0%ae%c0%ae/item.toml"),
        format!("/{ITEM}/doc//etc/passwd"),
        format!("/{ITEM}/doc/./reference.bib"),
        format!("/{ITEM}/doc/reference.bib/"),
        format!("/{ITEM}/doc/reference.bib%00"),
        format!("/{ITEM}/doc/reference.bib%00.pdf"),
        format!("/{ITEM}/doc/%"),
        format!("/{ITEM}/doc/%4"),
        "/col/../archive.toml".to_string(),
        "/col/%2e%2e/archive.toml".to_string(),
        "/col/%2e%2e/%2e%2e/%2e%2e/%2e%2e/doc/archive.toml".to_string(),
        "/col//etc/passwd".to_string(),
        "/col/../../../../../etc/passwd".to_string(),
        "/col/%ff/banon/2009/09.09.22.01/doc/reference.bib".to_string(),
        // Spelled otherwise than on disk.
        "/col/ICONET.com.br/banon/2009/09.09.22.01/doc/reference.bib".to_string(),
        // What is not a doc/ file (a folder without an index.html).
        format!("/{ITEM}/item.toml"),
        format!("/{ITEM}/doc/"),
        format!("/{ITEM}/doc/sub/"),
        format!("/{ITEM}/doc/sub/item.toml"),
        format!("/{ITEM}/doc/sub/archive.toml"),
        "/archive.toml".to_string(),
        "/var/urlkey.secret".to_string(),
        "/var/acknowledgments.log".to_string(),
        // Symlinks leading out of doc/ or of col/.
        format!("/{ITEM}/doc/passwd"),
        format!("/{ITEM}/doc/etc/passwd"),
        format!("/{ITEM}/doc/up/item.toml"),
        format!("/{ITEM}/doc/secret.txt"),
        format!("/{ITEM}/doc/config.txt"),
        "/col/evil.org/www/2014/03.25.23.20/doc/ibi-resolucao.pdf".to_string(),
        // doc/ is a file.
        "/col/urlib.net/www/2014/03.25.23.20/doc/x".to_string(),
        // Long paths.
        long,
        format!("/{ITEM}/doc/{}", "x".repeat(100_000)),
        // Almost the service.
        format!("{SERVICE}x"),
        format!("{SERVICE}%2"),
        format!("{SERVICE}/%ff"),
        format!("{}{SERVICE}", "/".repeat(2)),
    ];
    for path in &not_found {
        let shown: String = path.chars().take(120).collect();
        assert_eq!(
            get(&config, root, path),
            (404, b"not found\n".to_vec()),
            "{shown}"
        );
    }
    let doc = |file: &str| {
        (
            200,
            std::fs::read(f.path(&format!("{ITEM}/doc/{file}"))).unwrap(),
        )
    };
    let found: Vec<(String, (u16, Vec<u8>))> = vec![
        (format!("/{ITEM}/doc/reference.bib"), doc("reference.bib")),
        (
            format!("/{ITEM}/doc/%40relatorio.pdf"),
            doc("@relatorio.pdf"),
        ),
        (format!("/{ITEM}/doc/sub/a%20b.txt"), doc("sub/a b.txt")),
        // A folder without its slash is sent to its own URL.
        (
            format!("/{ITEM}/doc"),
            (301, b"moved to the folder's own URL\n".to_vec()),
        ),
        (
            format!("/{ITEM}/doc/sub"),
            (301, b"moved to the folder's own URL\n".to_vec()),
        ),
        // The service and whatever follows it: the CGI handler judges PATH_INFO.
        (
            format!("{SERVICE}/../../archive.toml"),
            (0, b"/../../archive.toml".to_vec()),
        ),
        (
            format!("{SERVICE}%2f..%2f..%2fvar"),
            (0, b"/../../var".to_vec()),
        ),
    ];
    for (path, want) in found {
        assert_eq!(get(&config, root, &path), want, "{path}");
    }
    // A link inside doc/, even to a file inside doc/, is not followed.
    assert_eq!(
        get(&config, root, &format!("/{ITEM}/doc/inside.bib")).0,
        404
    );
}

/// Found by fuzz/ (pair_list): a value whose words are all empty but one was written in
/// braces, which Table 6.2 keeps for two words or more.
#[test]
fn regression_one_remaining_word_is_written_bare() {
    use ::ibi::pairs::{PairList, Value};
    let mut p = PairList::new();
    p.push("x", Value::words(["", "a", ""]));
    p.push("y", Value::words([""]));
    p.push("z", Value::words(["", "b", "c"]));
    assert_eq!(p.to_text(), "x a\r\ny {}\r\nz {b c}");
}

/// Found by fuzz/ (ibi_parse): an IBIp's date with a fraction of 80 digits printed in
/// ISO 8601 could not be read back (`IbiDate::parse_iso` stopped at 64 bytes).
#[test]
fn regression_long_fractions_read_back_from_iso_8601() {
    use ::ibi::IbiDate;
    let d = IbiDate::from_ibip_suffix(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fuzz/corpus/ibi_parse/regress_iso_long_fraction"),
        )
        .unwrap(),
    )
    .unwrap();
    assert!(d.fraction().len() > 64, "{d:?}");
    assert_eq!(IbiDate::parse_iso(&d.to_iso()).unwrap(), d);
    let most = IbiDate::new(1_234_806_360, &"9".repeat(240)).unwrap();
    assert_eq!(IbiDate::parse_iso(&most.to_iso()).unwrap(), most);
    assert!(IbiDate::parse_iso(&format!("2009-02-16T17:46:00.{}Z", "9".repeat(241))).is_err());
    assert!(IbiDate::parse_iso(&"1".repeat(100_000)).is_err());
}

/// A TOML error message of several lines is one log line.
#[test]
fn regression_multi_line_toml_messages_are_one_line() {
    let err = Config::parse("archiveaddress = \"x\"\nwhen = 1987-65-43T21:09:00Z\n").unwrap_err();
    assert!(!err.contains('\n'), "{err:?}");
    let rep = ::ibi::Rep::parse("a.b/c/2009/01.02.03.04").unwrap();
    let err = ibi_archive::item::Item::parse(
        "state = \"Original\"\ntimestamp = 1987-65-43T21:09:00Z\n",
        Path::new("/x"),
        rep,
    )
    .unwrap_err();
    assert!(!err.contains('\n'), "{err:?}");
}

/// Found by fuzz/ (item_toml): a registration key written without quotes made the error
/// message (and so the web server's error log) quote the key.
#[test]
fn regression_a_key_of_the_wrong_type_is_not_quoted() {
    let base = "archiveaddress = \"x\"\narchiveserviceibi = \"a.b/c/2009/01.02.03.04\"\n[registration]\nadminemail = \"a@b\"\nip = \"1\"\n";
    for key in [
        "9876543210",
        "9876543210.5",
        "[9876543210]",
        "{ k = 9876543210 }",
        "1987-06-05T21:09:00Z",
    ] {
        let err = Config::parse(&format!("{base}key = {key}\n")).unwrap_err();
        assert_eq!(
            err, "registration.key is not a string (write it in quotes)",
            "{key}"
        );
    }
}

/// Found by reading the loop check: a restricted item that names itself (or another
/// restricted data item) as its metadata gave its data URL to clients outside the
/// networks.
#[test]
fn regression_restricted_metadata_loop() {
    let f = Fixture::sample();
    let a = "example.org/r/2020/01.01.00.00";
    let b = "example.org/r/2020/01.01.00.01";
    for (rep, meta) in [(a, b), (b, a)] {
        f.write(
            &format!("col/{rep}/item.toml"),
            format!("state = \"Original\"\ntarget = \"a.txt\"\nrestricted = true\nmetadata = \"{meta}\"\n").as_bytes(),
        );
        f.write(&format!("col/{rep}/doc/a.txt"), b"a\n");
    }
    let out = common::Cgi::get(
        f.root(),
        &format!(
            "servicesubject=urlRequest&clientinformation.ipaddress=8.8.8.8&parsedibiurl.ibi={a}"
        ),
    )
    .run();
    assert!(!out.text().contains("url "), "{}", out.text());
    assert!(!out.text().contains("a.txt"), "{}", out.text());
    assert_eq!(out.stderr, "");
}

#[test]
fn the_fuzz_corpora_are_committed() {
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    for target in [
        "query",
        "ibi_parse",
        "item_toml",
        "pair_list",
        "cgi_handler",
    ] {
        let n = std::fs::read_dir(corpus.join(target))
            .map(|d| d.count())
            .unwrap_or(0);
        assert!(n >= 20, "fuzz/corpus/{target}: {n} seeds");
    }
}

/// item.toml and archive.toml are TOML 1.1 (the toml crate's reading): a date-time without
/// seconds is second 0; a duplicated key is named with its line and column, never its
/// value.
#[test]
fn toml_1_1_date_times_and_duplicate_keys() {
    let rep = ::ibi::Rep::parse("a.b/c/2009/01.02.03.04").unwrap();
    let item = ibi_archive::item::Item::parse(
        "state = \"Original\"\ntimestamp = 2009-07-21T13:23Z\n",
        Path::new("/x"),
        rep,
    )
    .unwrap();
    // 2009-07-21T13:23:00Z, worked out: 14446 days after 1970-01-01 is 2009-07-21.
    assert_eq!(item.timestamp, Some(14446 * 86400 + 13 * 3600 + 23 * 60));
    let err = Config::parse(
        "archiveaddress = \"x\"\n[registration]\nkey = \"9876543210\"\nkey = \"9876543211\"\n",
    )
    .unwrap_err();
    assert_eq!(err, "4:1: duplicate key `key`");
}
