//! `ibi-archive check`: the sample Archive is clean; a tree seeded with one of each fault
//! gets exactly one line per fault.

use common::{mask_urlkey, run_cmd, Cgi, Fixture, LK47, LK47_ANSWER};

const FAULTY: &str = "ibi-archive: check: the Archive has faults (listed above)\n";

fn check(root: &std::path::Path) -> (i32, String, String) {
    run_cmd(&["check", "--root", root.to_str().unwrap()])
}

/// An item directory with an item.toml and doc/ files.
fn item(f: &Fixture, rep: &str, toml: &str, files: &[&str]) {
    f.write(&format!("col/{rep}/item.toml"), toml.as_bytes());
    for file in files {
        f.write(&format!("col/{rep}/doc/{file}"), b"content");
    }
}

#[test]
fn the_sample_archive_is_clean() {
    let f = Fixture::sample();
    assert_eq!(
        check(f.root()),
        (0, "checked 14 items: 0 faults\n".to_string(), String::new())
    );
    // The repository's own copy too, read in place (check writes nothing); git keeps
    // its archive.toml readable by all, so the registration key is said to be exposed.
    // The README's first command serves it as whoever runs it, making its var/ that
    // user's: that user is its web server's.
    let me = std::process::Command::new("id")
        .arg("-un")
        .output()
        .unwrap();
    let me = String::from_utf8(me.stdout).unwrap();
    assert_eq!(
        run_cmd(&[
            "check",
            "--root",
            common::sample().to_str().unwrap(),
            "--web-user",
            me.trim(),
        ]),
        (
            0,
            "archive.toml: warning: readable by every local user, and it holds the registration key; chmod o-rwx archive.toml (the web server needs only its group's read)\nchecked 14 items: 0 faults, 1 warning\n"
                .to_string(),
            String::new()
        )
    );
}

#[test]
fn each_seeded_fault_is_reported_once() {
    let f = Fixture::sample();
    let m19 = "sid.inpe.br/mtc-m19";

    // An item.toml that is not valid, and an item directory without one.
    item(
        &f,
        &format!("{m19}/2015/01.01.00.00"),
        "state = \"Lost\"\n",
        &["a.pdf"],
    );
    f.write(&format!("col/{m19}/2015/01.02.00.00/doc/a.pdf"), b"x");
    // Names that are not parts of a uniform repository name, one per level.
    f.write(
        "col/bad_sub.org/w/2015/01.01.00.00/item.toml",
        b"state = \"Original\"\n",
    );
    f.write(
        "col/sid.inpe.br/mtc-m19.99999/2015/01.01.00.00/item.toml",
        b"",
    );
    f.write(&format!("col/{m19}/15/01.01.00.00/item.toml"), b"");
    f.write(&format!("col/{m19}/2015/13.01.00.00/item.toml"), b"");
    // Stray entries: a file among the prefixes, a file beside item.toml and doc/.
    f.write("col/sid.inpe.br/README.txt", b"hello");
    f.write(&format!("col/{m19}/2014/05.06.07.08/notes.txt"), b"hello");
    // An ibip coding another date than its directory's (2015-02-01T00:00:01Z).
    item(
        &f,
        &format!("{m19}/2015/02.01.00.00"),
        "state = \"Original\"\nibip = \"8JMKD3MGP7W/3HS7AT3\"\n",
        &["a.pdf"],
    );
    // The IBIp of sid.inpe.br/mtc-m19/2013/09.04.12.27.57 recorded by another item too.
    item(
        &f,
        "iconet.com.br/banon/2013/09.04.12.27.57",
        "state = \"Copy\"\nibip = \"8JMKD3MGP7W/3EPGUE5\"\n",
        &["a.pdf"],
    );
    // A target that is not there; a format file that is not there; no target at all.
    item(
        &f,
        &format!("{m19}/2015/03.01.00.00"),
        "state = \"Original\"\ntarget = \"missing.pdf\"\n",
        &["other.pdf"],
    );
    item(
        &f,
        &format!("{m19}/2015/03.02.00.00"),
        "state = \"Original\"\ncontenttype = \"Metadata\"\ntarget = \"metadata.html\"\n[formats]\noai_dc = \"oai_dc.xml\"\n",
        &["metadata.html"],
    );
    item(
        &f,
        &format!("{m19}/2015/03.03.00.00"),
        "state = \"Original\"\n",
        &["a.pdf", "b.pdf"],
    );
    // Two items, each the other's next edition.
    item(
        &f,
        &format!("{m19}/2015/04.02.00.00"),
        "state = \"Original\"\nnextedition = \"sid.inpe.br/mtc-m19/2015/04.01.00.00\"\n",
        &["a.pdf"],
    );
    item(
        &f,
        &format!("{m19}/2015/04.01.00.00"),
        "state = \"Original\"\nnextedition = \"SID.inpe.br/mtc-m19@80/2015/04.02.00.00\"\n",
        &["a.pdf"],
    );
    // A Copy of an item stored here as the Original, under another spelling of its prefix.
    item(
        &f,
        "sid.inpe.br/mtc-m18/2009/08.25.19.43",
        "state = \"Copy\"\nlanguage = \"pt\"\n",
        &["RTC-07.pdf"],
    );
    // A file of doc/ that leads outside col/.
    f.write("outside.txt", b"secret");
    std::os::unix::fs::symlink(
        f.path("outside.txt"),
        f.path(&format!("col/{m19}/2014/05.06.07.08/doc/escape.pdf")),
    )
    .unwrap();
    // The Archive service item is not an Original.
    f.write(
        "col/sid.inpe.br/mtc-m18@80/2008/03.17.15.17/item.toml",
        b"state     = \"Copy\"\ntimestamp = 2008-03-17T15:17:00Z\n",
    );
    // What an interrupted `new` leaves.
    f.write("col/.ibi-tmp-new-1234-00000000deadbeef/doc/a.pdf", b"x");

    let (code, out, err) = check(f.root());
    assert_eq!(code, 1);
    assert_eq!(err, FAULTY);
    let mut got: Vec<&str> = out.lines().collect();
    let summary = got.pop().unwrap();
    got.sort();
    let mut want = vec![
        "archive.toml: archiveserviceibi sid.inpe.br/mtc-m18@80/2008/03.17.15.17 is a Copy item; the Archive service item must be the Original",
        "col/.ibi-tmp-new-1234-00000000deadbeef: temporary entry of an interrupted (or running) `ibi-archive new` or `delete`; remove it",
        "col/bad_sub.org: directory name is not part of a uniform repository name: subdomain word \"bad_sub\" holds '_', which is not a letter, digit or '-'",
        "col/sid.inpe.br/README.txt: stray file: the four levels under col/ hold only the directories of uniform repository names",
        "col/sid.inpe.br/mtc-m19.99999: directory name is not part of a uniform repository name: port 99999 is out of range",
        "col/sid.inpe.br/mtc-m19/15: directory name is not part of a uniform repository name: year \"15\" does not have 4 digits",
        "col/sid.inpe.br/mtc-m19/2015/13.01.00.00: directory name is not part of a uniform repository name: month 13 is out of range",
        "col/sid.inpe.br/mtc-m19/2015/01.01.00.00/item.toml:1:9: unknown variant `Lost`, expected one of `Original`, `Copy`, `Deleted`",
        "col/sid.inpe.br/mtc-m19/2015/01.02.00.00: no item.toml: the service treats this directory as absent",
        "col/sid.inpe.br/mtc-m19/2014/05.06.07.08/notes.txt: stray entry: an item directory holds only the file item.toml and the directory doc/",
        "col/sid.inpe.br/mtc-m19/2015/02.01.00.00/item.toml: ibip 8JMKD3MGP7W/3HS7AT3 codes the date 2015/02.01.00.00.01, not this directory's 2015/02.01.00.00; the IBIp lookup cannot find this item",
        "col/sid.inpe.br/mtc-m19/2013/09.04.12.27.57/item.toml: ibip 8JMKD3MGP7W/3EPGUE5 is also recorded by col/iconet.com.br/banon/2013/09.04.12.27.57/item.toml",
        "col/sid.inpe.br/mtc-m19/2015/03.01.00.00/item.toml: target \"missing.pdf\" is not a file in doc/",
        "col/sid.inpe.br/mtc-m19/2015/03.02.00.00/item.toml: formats.oai_dc \"oai_dc.xml\" is not a file in doc/",
        "col/sid.inpe.br/mtc-m19/2015/03.03.00.00/item.toml: no target given, and doc/ holds neither a single file nor index.html",
        "col/sid.inpe.br/mtc-m19/2015/04.01.00.00/item.toml: next editions loop: sid.inpe.br/mtc-m19/2015/04.01.00.00 -> sid.inpe.br/mtc-m19/2015/04.02.00.00 -> sid.inpe.br/mtc-m19/2015/04.01.00.00",
        "col/sid.inpe.br/mtc-m18@80/2009/08.25.19.43: the same IBI as col/sid.inpe.br/mtc-m18/2009/08.25.19.43 (Original here, Copy there)",
        "col/sid.inpe.br/mtc-m19/2014/05.06.07.08/doc/escape.pdf: symlink leads outside col/; the service treats it as absent",
    ];
    want.sort();
    assert_eq!(got, want);
    // Items: the 14 of the sample, 10 added with a valid name (bad names are not items).
    assert_eq!(summary, format!("checked 24 items: {} faults", want.len()));
}

#[test]
fn a_broken_archive_toml_and_a_missing_service_item() {
    let f = Fixture::sample();
    let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
    f.write(
        "archive.toml",
        toml.replace("\"localhost:8080\"", "\"localhost:8080/x\"")
            .as_bytes(),
    );
    assert_eq!(
        check(f.root()),
        (
            1,
            "archive.toml: archiveaddress \"localhost:8080/x\" is not a host[:port]\nchecked 14 items: 1 fault\n"
                .to_string(),
            FAULTY.to_string()
        )
    );
    let f = Fixture::sample();
    let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
    f.write(
        "archive.toml",
        toml.replace("2008/03.17.15.17", "2008/03.17.15.18")
            .as_bytes(),
    );
    f.remove("col/sid.inpe.br/mtc-m18@80/2008/03.17.15.17");
    assert_eq!(
        check(f.root()),
        (
            1,
            "archive.toml: archiveserviceibi sid.inpe.br/mtc-m18@80/2008/03.17.15.18: no such item in col/\nchecked 13 items: 1 fault\n".to_string(),
            FAULTY.to_string()
        )
    );
    let (code, _, err) = run_cmd(&["check", "--root", f.root().to_str().unwrap(), "extra"]);
    assert_eq!(
        (code, err.as_str()),
        (
            2,
            "ibi-archive: check: unexpected argument \"extra\"; see ibi-archive check --help\n"
        )
    );
}

/// `[site] logo`, a file of the service item's doc/: its absence is a fault, and once it
/// is there the Archive checks clean; a logo that is neither a URL nor a file name is
/// refused as archive.toml loads.
#[test]
fn the_logo_of_the_site_is_a_file_of_the_service_item() {
    let f = Fixture::sample();
    let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
    f.write(
        "archive.toml",
        format!("{toml}\n[site]\ninstitution = \"INPE\"\nlogo = \"logo.svg\"\n").as_bytes(),
    );
    assert_eq!(
        check(f.root()),
        (
            1,
            "archive.toml: [site] logo logo.svg: no such file in the service item's doc/ (col/sid.inpe.br/mtc-m18@80/2008/03.17.15.17/doc)\nchecked 14 items: 1 fault\n".to_string(),
            FAULTY.to_string()
        )
    );
    f.write(
        "col/sid.inpe.br/mtc-m18@80/2008/03.17.15.17/doc/logo.svg",
        b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n",
    );
    let (code, out, _) = check(f.root());
    assert_eq!((code, out.as_str()), (0, "checked 14 items: 0 faults\n"));
    f.write(
        "archive.toml",
        format!("{toml}\n[site]\nlogo = \"/etc/passwd\"\n").as_bytes(),
    );
    let (code, out, _) = check(f.root());
    assert_eq!(
        (code, out.as_str()),
        (1, "archive.toml: [site] logo is neither an http(s) URL nor the name of a file of the service item's doc/ (letters, digits, '.', '_', '-'): \"/etc/passwd\"\nchecked 14 items: 1 fault\n")
    );
}

/// A larger tree: 1,500 minted items, each with its IBIp, in edition chains of two (the
/// second named by its IBIp), check clean — then one more edition closing a chain into a
/// loop is found.
#[test]
fn a_larger_tree_checks_clean() {
    use ::ibi::{mint::mint_ports, IbiDate};
    let f = Fixture::sample();
    let ip = Some("150.163.2.175".parse().unwrap());
    let minted: Vec<_> = (0..1500i64)
        .map(|i| {
            let date = IbiDate::new(1_577_836_800 + 61 * i, "").unwrap();
            mint_ports("w.bulk.example.org", 80, ip, 80, &date).unwrap()
        })
        .collect();
    for (i, m) in minted.iter().enumerate() {
        let mut toml = format!(
            "state = \"Original\"\nibip = \"{}\"\n",
            m.ibip.as_ref().unwrap()
        );
        if i % 2 == 0 {
            let next = minted[i + 1].ibip.as_ref().unwrap();
            toml.push_str(&format!("nextedition = \"{next}\"\n"));
        }
        item(&f, m.rep.as_str(), &toml, &["a.pdf"]);
    }
    let started = std::time::Instant::now();
    let (code, out, err) = check(f.root());
    eprintln!("check of 1514 items took {:?}", started.elapsed());
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, "checked 1514 items: 0 faults\n", "")
    );
    // The last item's next edition is the one before it, named by its rep: a loop.
    let (a, b) = (&minted[1498], &minted[1499]);
    f.write(
        &format!("col/{}/item.toml", b.rep),
        format!(
            "state = \"Original\"\nibip = \"{}\"\nnextedition = \"{}\"\n",
            b.ibip.as_ref().unwrap(),
            a.rep
        )
        .as_bytes(),
    );
    let (code, out, _) = check(f.root());
    assert_eq!(code, 1);
    assert_eq!(
        out,
        format!("col/{a}/item.toml: next editions loop: {a} -> {b} -> {a}\nchecked 1514 items: 1 fault\n", a = a.rep, b = b.rep)
    );
}

/// Entries of col/ the seeded test leaves out: a link that stays inside col/, a named
/// pipe and a file with two names in doc/, names that are not UTF-8 (a directory, whose
/// content is not walked, and a file, after which its siblings still are).
#[test]
fn links_odd_files_and_names_that_are_not_utf8() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let f = Fixture::sample();
    let doc = f.path("col/sid.inpe.br/mtc-m19/2014/05.06.07.08/doc");
    let first = std::fs::read_dir(&doc)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::os::unix::fs::symlink(&first, doc.join("again.pdf")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        doc.join("pipe"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    std::fs::hard_link(&first, doc.join("twice.pdf")).unwrap();
    let m19 = f.path("col/sid.inpe.br/mtc-m19");
    let not_utf8 = |name: &[u8]| m19.join(OsStr::from_bytes(name));
    std::fs::create_dir_all(not_utf8(b"2016\xff").join("01.01.00.00")).unwrap();
    std::fs::write(not_utf8(b"2016\xff/01.01.00.00/item.toml"), "").unwrap();
    std::fs::write(not_utf8(b"2017\xff"), "").unwrap();
    std::fs::create_dir_all(m19.join("3000x")).unwrap();
    let (code, out, err) = check(f.root());
    assert_eq!((code, err.as_str()), (1, FAULTY));
    let first = first.file_name().unwrap().to_str().unwrap();
    let item = "col/sid.inpe.br/mtc-m19/2014/05.06.07.08";
    // The file twice.pdf names is the item's target; the names that are not UTF-8 are
    // shown with U+FFFD for the byte 0xff.
    assert_eq!(
        out,
        format!(
            "{item}/item.toml: target \"{first}\": has 2 hard links; never served\n\
             {item}/doc/again.pdf: symlink below col/: neither the service nor the web servers follow it, so it is treated as absent\n\
             {item}/doc/{first}: has 2 hard links: never served (another link could be any file, such as archive.toml)\n\
             {item}/doc/pipe: not a regular file (a named pipe, device or socket): never served\n\
             {item}/doc/twice.pdf: has 2 hard links: never served (another link could be any file, such as archive.toml)\n\
             col/sid.inpe.br/mtc-m19/2016\u{fffd}: name is not UTF-8, so it is not part of a uniform repository name\n\
             col/sid.inpe.br/mtc-m19/2017\u{fffd}: name is not UTF-8, so it is not part of a uniform repository name\n\
             col/sid.inpe.br/mtc-m19/3000x: directory name is not part of a uniform repository name: year \"3000x\" is not a number\n\
             checked 14 items: 8 faults\n"
        )
    );
}

/// File names reach the report escaped: a directory whose name holds a line break and a
/// forged summary stays one line, and the real summary is the last line.
#[test]
fn names_are_escaped_in_the_report() {
    let f = Fixture::sample();
    f.write(
        "col/sid.inpe.br/x\nchecked 99 items: 0 faults\n\x1b[2K/2015/01.01.00.00/item.toml",
        b"state = \"Original\"\n",
    );
    let (code, out, err) = check(f.root());
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            1,
            "col/sid.inpe.br/x\\x0achecked 99 items: 0 faults\\x0a\\x1b[2K: directory name is not part of a uniform repository name: word \"x\\nchecked 99 items: 0 faults\\n\\u{1b}[2K\" holds '\\n', which is not a letter, digit or '-'\nchecked 14 items: 1 fault\n",
            FAULTY
        )
    );
}

/// The urlkey secret readable by every local user is said (anyone could forge keys).
#[test]
fn a_readable_urlkey_secret_is_warned_of() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::sample();
    f.write("var/urlkey.secret", &[b'a'; 64]);
    std::fs::set_permissions(
        f.path("var/urlkey.secret"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    // (The web server's user here is the one that may do anything, so that var/, made by
    // this test as whoever runs it, is usable by it.)
    assert_eq!(
        run_cmd(&["check", "--root", f.root().to_str().unwrap(), "--web-user", "root"]),
        (
            0,
            "var/urlkey.secret: warning: readable by every local user, who could then forge urlkeys; chmod 600 var/urlkey.secret\nchecked 14 items: 0 faults, 1 warning\n".to_string(),
            String::new()
        )
    );
}

/// var/ and the files of var/ that the service uses, as the web server's user needs them
/// (`--web-user`, www-data by default): a fault each, said with the chown to run.
#[test]
fn var_files_the_web_servers_user_cannot_use_are_faults() {
    use std::os::unix::fs::{chown, PermissionsExt};
    if !crate::var_owner::as_root_with(
        "var_files_the_web_servers_user_cannot_use_are_faults",
        &["www-data", "nobody"],
    ) {
        return;
    }
    let www = common::user_ids("www-data").unwrap();
    let f = Fixture::sample();
    let mode = |rel: &str, m: u32| {
        std::fs::set_permissions(f.path(rel), std::fs::Permissions::from_mode(m)).unwrap()
    };
    let r = f.root().to_str().unwrap();
    let check_as = |user: Option<&str>| match user {
        Some(u) => run_cmd(&["check", "--root", r, "--web-user", u]),
        None => check(f.root()),
    };
    // As `query` run by root before the first web request left it: var/ www-data's (as
    // the README says), the secret root's alone.
    std::fs::create_dir(f.path("var")).unwrap();
    chown(f.path("var"), Some(www.0), Some(www.1)).unwrap();
    mode("var", 0o700);
    f.write("var/urlkey.secret", &[b'a'; 64]);
    mode("var/urlkey.secret", 0o600);
    let secret_fault = "var/urlkey.secret: www-data (the web server's user) cannot read it (owner root, group root, mode 600), so the service cannot count accesses; chown -R www-data: var\n";
    assert_eq!(
        check_as(None),
        (
            1,
            format!("{secret_fault}checked 14 items: 1 fault\n"),
            FAULTY.to_string()
        )
    );
    assert_eq!(check_as(Some("www-data")), check_as(None));

    // The access log and its synced record, written by root, and the marks of counted
    // keys.
    f.write("var/acknowledgments.log", b"");
    mode("var/acknowledgments.log", 0o644);
    f.write("var/acknowledgments.synced", b"");
    mode("var/acknowledgments.synced", 0o644);
    std::fs::create_dir_all(f.path("var/acknowledged/493000")).unwrap();
    mode("var/acknowledged", 0o755);
    mode("var/acknowledged/493000", 0o755);
    chown(f.path("var/acknowledged"), Some(www.0), Some(www.1)).unwrap();
    assert_eq!(
        check_as(None),
        (
            1,
            format!("var/acknowledged/493000: www-data (the web server's user) cannot write it (owner root, group root, mode 755), so accesses are not counted; chown -R www-data: var\nvar/acknowledgments.log: www-data (the web server's user) cannot write it (owner root, group root, mode 644), so accesses are not counted; chown -R www-data: var\nvar/acknowledgments.synced: www-data (the web server's user) cannot write it (owner root, group root, mode 644), so accesses are not counted; chown -R www-data: var\n{secret_fault}checked 14 items: 4 faults\n"),
            FAULTY.to_string()
        )
    );

    // Given to www-data, as the README says: no fault.
    for rel in [
        "var/urlkey.secret",
        "var/acknowledgments.log",
        "var/acknowledgments.synced",
        "var/acknowledged/493000",
    ] {
        chown(f.path(rel), Some(www.0), Some(www.1)).unwrap();
    }
    assert_eq!(
        check_as(None),
        (0, "checked 14 items: 0 faults\n".to_string(), String::new())
    );
    // The locks the OAI-PMH data provider takes to build its index (items.lock made by
    // the first check, given to var/'s owner), made root's alone by hand.
    assert_eq!(
        std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(f.path("var/items.lock")).unwrap()),
        www.0
    );
    chown(f.path("var/items.lock"), Some(0), Some(0)).unwrap();
    mode("var/items.lock", 0o600);
    f.write("var/oai-records.lock", b"");
    mode("var/oai-records.lock", 0o644);
    assert_eq!(
        check_as(None),
        (
            1,
            "var/items.lock: www-data (the web server's user) cannot read it (owner root, group root, mode 600), so the OAI-PMH data provider cannot build its index; chown -R www-data: var\nvar/oai-records.lock: www-data (the web server's user) cannot write it (owner root, group root, mode 644), so the OAI-PMH data provider cannot build its index; chown -R www-data: var\nchecked 14 items: 2 faults\n".to_string(),
            FAULTY.to_string()
        )
    );
    for rel in ["var/items.lock", "var/oai-records.lock"] {
        chown(f.path(rel), Some(www.0), Some(www.1)).unwrap();
    }
    assert_eq!(
        check_as(None),
        (0, "checked 14 items: 0 faults\n".to_string(), String::new())
    );

    // Another web server's user: var/ is not its, and what is in it is then not looked at.
    assert_eq!(
        check_as(Some("nobody")),
        (
            1,
            "var: nobody (the web server's user) cannot write and search it (owner www-data, group www-data, mode 700), so the service can neither keep its urlkey secret nor count accesses; chown -R nobody: var\nchecked 14 items: 1 fault\n".to_string(),
            FAULTY.to_string()
        )
    );
    // Through its group, it may.
    chown(
        f.path("var"),
        None,
        Some(common::user_ids("nobody").unwrap().1),
    )
    .unwrap();
    mode("var", 0o770);
    let (code, out, _) = check_as(Some("nobody"));
    assert_eq!(code, 1);
    assert!(
        out.starts_with("var/acknowledged: nobody (the web server's user) cannot "),
        "{out}"
    );

    // A user this machine does not have: said once, and not a fault.
    assert_eq!(
        check_as(Some("no-such-user-here")),
        (
            0,
            "var: note: there is no user no-such-user-here here, so whether the web server's user can use var/ was not checked (--web-user USER names it)\nchecked 14 items: 0 faults, 1 note\n".to_string(),
            String::new()
        )
    );
}

/// What Config::load says of a root without archive.toml, after `<path>: `.
fn not_an_archive(shown_root: &str) -> String {
    format!("no such file, so {shown_root} is not an Archive root: give the Archive's root with --root DIR (or set IBI_ARCHIVE_ROOT) or create one with ibi-archive init --root DIR --address HOST[:PORT]")
}

/// Outside an Archive (no archive.toml in the root), every command says that the directory
/// is not an Archive root and what to do, in one line.
#[test]
fn outside_an_archive_every_command_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    // check: that line alone (no col/ to complain of either: this is no Archive).
    assert_eq!(
        check(dir.path()),
        (
            1,
            format!(
                "archive.toml: {}\nchecked 0 items: 1 fault\n",
                not_an_archive(root)
            ),
            FAULTY.to_string()
        )
    );
    let paper = dir.path().join("paper.pdf");
    std::fs::write(&paper, b"%PDF").unwrap();
    let paper = paper.to_str().unwrap();
    let ibi = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23";
    for args in [
        &["stats"][..],
        &["new", paper],
        &["delete", ibi],
        &["include"],
        &["exclude"],
    ] {
        let mut full = vec![args[0], "--root", root];
        full.extend_from_slice(&args[1..]);
        assert_eq!(
            run_cmd(&full),
            (
                1,
                String::new(),
                format!(
                    "ibi-archive: {}: {root}/archive.toml: {}\n",
                    args[0],
                    not_an_archive(root)
                )
            ),
            "{args:?}"
        );
    }
    // Without --root, in the directory itself.
    let out = common::command(&["stats"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "ibi-archive: stats: ./archive.toml: {}\n",
            not_an_archive("the current directory")
        )
    );
}

/// TOML errors name the file, line and column (1-based), as compilers do, in check and in
/// the commands that read archive.toml and item.toml.
#[test]
fn toml_errors_give_the_file_line_and_column() {
    let f = Fixture::sample();
    let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
    assert!(toml.contains("\ngranularity = 1\n"));
    // Line 19: a misspelt setting under [minting].
    f.write(
        "archive.toml",
        toml.replace("\ngranularity = 1\n", "\ngranularity = 1\ngranularty = 2\n")
            .as_bytes(),
    );
    let rep = "iconet.com.br/banon/2009/09.09.22.01";
    f.write(
        &format!("col/{rep}/item.toml"),
        b"# edited by hand\nstate = \"Lost\"\n",
    );
    let unknown = "unknown field `granularty`, expected one of `host`, `port`, `ibipport`, `ip`, `granularity`";
    let lost = "unknown variant `Lost`, expected one of `Original`, `Copy`, `Deleted`";
    assert_eq!(
        check(f.root()),
        (
            1,
            format!("archive.toml:19:1: {unknown}\ncol/{rep}/item.toml:2:9: {lost}\nchecked 14 items: 2 faults\n"),
            FAULTY.to_string()
        )
    );
    let root = f.root().to_str().unwrap();
    let (code, _, err) = run_cmd(&["new", "--root", root, "--copy", "--ibi", rep, "x"]);
    assert_eq!(
        (code, err),
        (
            1,
            format!("ibi-archive: new: {root}/archive.toml:19:1: {unknown}\n")
        )
    );
    f.write("archive.toml", toml.as_bytes());
    let (code, _, err) = run_cmd(&["delete", "--root", root, rep]);
    assert_eq!(
        (code, err),
        (
            1,
            format!(
                "ibi-archive: delete: {rep}: {root}/col/{rep}/item.toml:2:9: {lost}; item treated as absent\n"
            )
        )
    );
}

/// Every setting `new` (the [minting] section) or include/exclude (the [registration]
/// section) would refuse, check refuses too, with the same message.
#[test]
fn check_refuses_what_new_and_include_refuse() {
    let chave = "registration.key in archive.toml does not follow rule chave of Table 7.1 (10 or more digits, optionally '-' and 10 or more digits)";
    let long_host = format!("a.{}.org", vec!["b".repeat(60); 4].join("."));
    for (from, to, message, refused_by) in [
        (
            "granularity = 1\n",
            "granularity = 7\n".to_string(),
            "minting.granularity: invalid granularity \"7\": expected 60, 1, 0.1, 0.01, ... or 0.000000001 (seconds)".to_string(),
            "new",
        ),
        (
            "granularity = 1\n",
            "granularity = 0.5\n".to_string(),
            "minting.granularity: invalid granularity \"0.5\": expected 60, 1, 0.1, 0.01, ... or 0.000000001 (seconds)".to_string(),
            "new",
        ),
        (
            "\"archive.example.org\"",
            "\"localhost\"".to_string(),
            "minting.host: invalid hostname \"localhost\": it has no dot, so it cannot be split into a word and a subdomain".to_string(),
            "new",
        ),
        (
            "\"archive.example.org\"",
            format!("\"{long_host}\""),
            "minting.host: the reps minted under it would be up to 269 bytes long (at granularity 1), more than the 255 an IBI may have".to_string(),
            "new",
        ),
        (
            "port        = 80\n",
            "port        = 0\n".to_string(),
            "minting.port 0 is not a port (1 to 65535)".to_string(),
            "new",
        ),
        (
            "port        = 80\n",
            "port        = 80\nibipport    = 0\n".to_string(),
            "minting.ibipport 0 is not a port (1 to 65535)".to_string(),
            "new",
        ),
        (
            "ip          = \"127.0.0.1\"",
            "ip          = \"127.0.0.300\"".to_string(),
            "minting.ip \"127.0.0.300\" is not an IP address".to_string(),
            "new",
        ),
        (
            "key             = \"1234567890\"",
            "key             = \"12345\"".to_string(),
            chave.to_string(),
            "include",
        ),
        (
            "ip              = \"127.0.0.1\"",
            "ip              = \"localhost\"".to_string(),
            "registration.ip \"localhost\" is not an IPv4 or IPv6 address".to_string(),
            "exclude",
        ),
        (
            "\"http://localhost:8090/J8LNKB5R7W/3FUQHC5\"",
            "\"https://localhost:8090/J8LNKB5R7W/3FUQHC5\"".to_string(),
            "resolver https://localhost:8090/J8LNKB5R7W/3FUQHC5: https is not supported by this build; use the resolver's http:// address".to_string(),
            "include",
        ),
    ] {
        let f = Fixture::sample();
        let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
        assert!(toml.contains(from), "{from}");
        f.write("archive.toml", toml.replacen(from, &to, 1).as_bytes());
        assert_eq!(
            check(f.root()),
            (
                1,
                format!("archive.toml: {message}\nchecked 14 items: 1 fault\n"),
                FAULTY.to_string()
            ),
            "{to}"
        );
        let root = f.root().to_str().unwrap();
        let (code, out, err) = match refused_by {
            "new" => {
                f.write("paper.txt", b"x");
                run_cmd(&["new", "--root", root, f.path("paper.txt").to_str().unwrap()])
            }
            cmd => run_cmd(&[cmd, "--root", root]),
        };
        assert_eq!((code, out.as_str()), (1, ""), "{to}");
        assert!(err.starts_with(&format!("ibi-archive: {refused_by}: ")), "{err}");
        assert!(err.contains(&message), "{to}: {err}");
        assert!(!err.contains("12345\""), "{err}");
    }
}

/// `[acknowledgments] sync_interval`: a duration ("1s", "500ms", at most "1h") or zero;
/// any other value is a fault check names, as the service, which reads it, would.
#[test]
fn a_bad_sync_interval_is_a_fault() {
    let f = Fixture::sample();
    let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
    let bad = "[acknowledgments] sync_interval";
    for (value, fault) in [
        ("\"1s\"", None),
        ("\"250ms\"", None),
        ("\"0\"", None),
        ("0", None),
        (
            "\"fast\"",
            Some(format!("{bad}: \"fast\" has no unit; write it as \"1s\" or \"500ms\"")),
        ),
        (
            "\"2h\"",
            Some(format!("{bad}: \"2h\" is more than 3600s")),
        ),
        (
            "1",
            Some(format!("{bad} 1 is not a duration: write it in quotes with its unit, as \"1s\" or \"500ms\" (\"0\": synced before each answer)")),
        ),
    ] {
        f.write(
            "archive.toml",
            format!("{toml}\n[acknowledgments]\nsync_interval = {value}\n").as_bytes(),
        );
        let expected = match fault {
            None => (0, "checked 14 items: 0 faults\n".to_string(), String::new()),
            Some(m) => (
                1,
                format!("archive.toml: {m}\nchecked 14 items: 1 fault\n"),
                FAULTY.to_string(),
            ),
        };
        assert_eq!(check(f.root()), expected, "{value}");
    }
}

/// A fault in [minting], which `new` and `check` refuse, is no fault of the service, which
/// never mints: it answers as before (and does not pay for checking [minting]).
#[test]
fn a_minting_fault_leaves_the_service_answering() {
    let f = Fixture::sample();
    let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
    assert!(toml.contains("granularity = 1\n"));
    f.write(
        "archive.toml",
        toml.replace("granularity = 1\n", "granularity = 7\n")
            .as_bytes(),
    );
    let out = Cgi::get(f.root(), LK47).run();
    assert_eq!((out.status, out.stderr.as_str()), (200, ""));
    assert_eq!(mask_urlkey(&out.text()).0, LK47_ANSWER);
}

/// With archive.toml broken, check reports that and nothing false: the checks that need
/// it are skipped, and one line says so.
#[test]
fn a_broken_archive_toml_skips_what_depends_on_it() {
    let skipped = "archive.toml: note: it did not load, so check skipped what depends on it: the Archive service item; the target and format files of items (any could be the service item, whose URL is no file)";
    let key = "; whether other users can read its registration key";
    let f = Fixture::sample();
    let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
    f.write(
        "archive.toml",
        toml.replace("\ngranularity = 1\n", "\ngranularity = 1 2\n")
            .as_bytes(),
    );
    assert_eq!(
        check(f.root()),
        (
            1,
            format!("archive.toml:18:15: string values must be quoted, expected literal string\n{skipped}{key}\nchecked 14 items: 1 fault, 1 note\n"),
            FAULTY.to_string()
        )
    );
    // No archive.toml at all, beside a col/.
    f.remove("archive.toml");
    let root = f.root().to_str().unwrap();
    assert_eq!(
        check(f.root()),
        (
            1,
            format!(
                "archive.toml: {}\n{skipped}\nchecked 14 items: 1 fault, 1 note\n",
                not_an_archive(root)
            ),
            FAULTY.to_string()
        )
    );
}

/// item.toml allows a relation to an IBI "here or elsewhere": one this Archive does not
/// hold (a rep of a prefix here or of another, an IBIp) is a note, not a fault, and check
/// exits 0; the relations to items held here (by rep or IBIp) are not mentioned.
#[test]
fn relations_to_other_archives_are_notes() {
    let f = Fixture::sample();
    let rel = "col/sid.inpe.br/mtc-m19/2015/05.01.00.00/item.toml";
    item(
        &f,
        "sid.inpe.br/mtc-m19/2015/05.01.00.00",
        "state = \"Original\"\n\
         nextedition = \"8JMKD3MGP7W/3HS7AT3\"\n\
         metadata = \"sid.inpe.br/mtc-m19/2015/09.09.09.09\"\n\
         [translations]\n\
         en = \"SID.inpe.br/mtc-m18.80/2009/07.21.13.23\"\n\
         es = \"other.org/x/2015/09.09.09.09\"\n\
         fr = \"8JMKD3MGP8W/35MME4E\"\n",
        &["a.pdf"],
    );
    let elsewhere = "not in this Archive, so the resolver looks for it in the other Archives";
    assert_eq!(
        check(f.root()),
        (
            0,
            format!(
                "{rel}: note: nextedition 8JMKD3MGP7W/3HS7AT3: {elsewhere}\n\
                 {rel}: note: metadata sid.inpe.br/mtc-m19/2015/09.09.09.09: {elsewhere}\n\
                 {rel}: note: translations.es other.org/x/2015/09.09.09.09: {elsewhere}\n\
                 checked 15 items: 0 faults, 3 notes\n"
            ),
            String::new()
        )
    );
}

/// A tombstone's `reason` is shown on its landing page: a reason on an item that is no
/// tombstone, one longer than the page shows, and an empty one are faults.
#[test]
fn a_reason_is_a_tombstones_and_bounded() {
    let f = Fixture::sample();
    let m19 = "sid.inpe.br/mtc-m19/2015";
    item(
        &f,
        &format!("{m19}/06.01.00.00"),
        "state = \"Original\"\nreason = \"withdrawn\"\n",
        &["a.pdf"],
    );
    item(
        &f,
        &format!("{m19}/06.02.00.00"),
        &format!("state = \"Deleted\"\nreason = \"{}\"\n", "é".repeat(251)),
        &[],
    );
    item(
        &f,
        &format!("{m19}/06.03.00.00"),
        "state = \"Deleted\"\nreason = \" \"\n",
        &[],
    );
    // Within the bound, on a tombstone: clean.
    item(
        &f,
        &format!("{m19}/06.04.00.00"),
        &format!("state = \"Deleted\"\nreason = \"{}\"\n", "é".repeat(250)),
        &[],
    );
    assert_eq!(
        check(f.root()),
        (
            1,
            format!(
                "col/{m19}/06.01.00.00/item.toml: reason is for tombstones (state = \"Deleted\"), not an item in state Original: no page shows it\n\
                 col/{m19}/06.02.00.00/item.toml: reason is 502 bytes long: the landing page shows only its first 500\n\
                 col/{m19}/06.03.00.00/item.toml: reason is empty: give one, or leave the key out\n\
                 checked 18 items: 3 faults\n"
            ),
            FAULTY.to_string()
        )
    );
}

/// The value of the pair `name` in `ibi-archive new`'s output.
fn pair_of(out: &str, name: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no {name} in {out}"))
        .to_string()
}

/// The order trap: an Archive made before its resolver existed (init without
/// --resolver) takes the standard's, and says so; an item described then carries
/// `http://urlib.net/<IBIp>` as its persistent URL; once [registration] names the
/// Archive's own resolver, check notes it, and check --fix rewrites the record and the
/// page to name that resolver, after which check has nothing to say of them; whether the
/// page is written in English or, for a record in Portuguese, in Portuguese.
#[test]
fn items_described_before_the_resolver_was_named_are_noted_and_fixed() {
    order_trap(None);
    order_trap(Some("pt-BR"));
}

/// [`items_described_before_the_resolver_was_named_are_noted_and_fixed`] for an item of
/// the content language `language`.
fn order_trap(language: Option<&str>) {
    // var/ judged as root sees it (var/'s owner when init runs as root:
    // tests/var_owner.rs).
    let check_as_root = |root: &std::path::Path| {
        run_cmd(&[
            "check",
            "--root",
            root.to_str().unwrap(),
            "--web-user",
            "root",
        ])
    };
    let tmp = common::archive_tempdir();
    let root = tmp.path().join("archive");
    let r = root.to_str().unwrap();
    let (code, _, err) = run_cmd(&[
        "init",
        "--root",
        r,
        "--address",
        "localhost:8080",
        "--host",
        "archive.example.org",
        "--ip",
        "127.0.0.1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err.lines().next(),
        Some("ibi-archive: note: no --resolver given: this Archive takes the resolver of the resolution standard, http://urlib.net/J8LNKB5R7W/3FUQHC5; the persistent URL of every item new describes names it (http://urlib.net/<IBI>, in its metadata); to name your own resolver, give --resolver URL (or set [registration] in archive.toml) before the first new (check notes the items made before it, and check --fix rewrites them)"),
        "{err}"
    );
    let file = tmp.path().join("hello.txt");
    std::fs::write(&file, "Hello\n").unwrap();
    let mut args = vec!["new", "--root", r, "--title", "Hello"];
    if let Some(l) = language {
        args.extend(["--language", l]);
    }
    args.push(file.to_str().unwrap());
    let (code, out, err) = run_cmd(&args);
    assert_eq!(code, 0, "{err}");
    let (ibip, meta) = (pair_of(&out, "ibip"), pair_of(&out, "metadata.rep"));
    let doc = root.join("col").join(&meta).join("doc");
    let (record, page) = (
        std::fs::read_to_string(doc.join("oai_dc.xml")).unwrap(),
        std::fs::read_to_string(doc.join("metadata.html")).unwrap(),
    );
    let old = format!("http://urlib.net/{ibip}");
    assert!(
        record.contains(&format!("<dc:identifier>{old}</dc:identifier>")),
        "{record}"
    );
    assert!(
        page.contains(&format!("<a href=\"{old}\">{old}</a>")),
        "{page}"
    );
    let lang = if language.is_some() { "pt-BR" } else { "en" };
    assert!(page.contains(&format!("<html lang=\"{lang}\">")), "{page}");
    // As the standard's resolver, the Archive's own: nothing to say.
    let (code, out, _) = check_as_root(&root);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains(" note: "), "{out}");

    // The Archive joins its own resolver.
    let toml = root.join("archive.toml");
    let mut text = std::fs::read_to_string(&toml).unwrap();
    text.push_str("\n[registration]\nadminemail = \"a@example.org\"\nip = \"127.0.0.1\"\n\n[[registration.resolver]]\nurl = \"http://127.0.0.1:8090/J8LNKB5R7W/3FUQHC5\"\nkey = \"1234567890\"\n");
    std::fs::write(&toml, text).unwrap();
    let new = format!("http://127.0.0.1:8090/{ibip}");
    let record_rel = format!("col/{meta}/doc/oai_dc.xml");
    let (code, out, err) = check_as_root(&root);
    assert_eq!(code, 0, "{out}{err}");
    let noted: Vec<&str> = out.lines().filter(|l| l.contains(" note: ")).collect();
    assert_eq!(
        noted,
        [format!("{record_rel}: note: dc:identifier {old} names the resolver http://urlib.net, which [registration] of archive.toml does not name: ibi-archive check --fix rewrites it to {new}")],
        "{out}"
    );
    // Nothing changed by a check without --fix.
    assert_eq!(
        std::fs::read_to_string(doc.join("oai_dc.xml")).unwrap(),
        record
    );

    let (code, out, err) = run_cmd(&["check", "--root", r, "--web-user", "root", "--fix"]);
    assert_eq!(code, 0, "{out}{err}");
    let noted: Vec<&str> = out.lines().filter(|l| l.contains(" note: ")).collect();
    assert_eq!(
        noted,
        [format!("{record_rel}: note: dc:identifier {old} names the resolver http://urlib.net, which [registration] of archive.toml does not name: rewritten to {new} in oai_dc.xml and metadata.html")],
        "{out}"
    );
    // The files as new writes them for that resolver: the same but for the URL.
    assert_eq!(
        std::fs::read_to_string(doc.join("oai_dc.xml")).unwrap(),
        record.replace(&old, &new)
    );
    assert_eq!(
        std::fs::read_to_string(doc.join("metadata.html")).unwrap(),
        page.replace(&old, &new)
    );
    let (code, out, _) = check_as_root(&root);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains(" note: "), "{out}");
}
