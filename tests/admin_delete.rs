//! `ibi-archive delete`: tombstones answer `state Deleted` and their timestamp through the
//! real CGI; doc/ goes (or stays with --keep-content); refusals change nothing.

use std::path::Path;

use common::{run_cmd, Cgi, Fixture};

/// What `delete` notes of the sample's item 8JMKD3MGP7W/3EPGUE5, whose metadata item is here.
const STILL_HARVESTED: &str = "ibi-archive: note: its metadata item sid.inpe.br/mtc-m19/2013/09.04.12.27.58 is still harvested (OAI-PMH) as a live record: delete it too to withdraw the description from harvesters\n";

const IDENTITY: [&str; 3] = [
    "archiveaddress localhost:8080",
    "ibi.archiveservice {rep sid.inpe.br/mtc-m18@80/2008/03.17.15.17}",
    "ibi.platformsoftware {rep dpi.inpe.br/banon/1998/08.02.08.56}",
];

fn delete(root: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["delete", "--root", root.to_str().unwrap()];
    all.extend_from_slice(args);
    run_cmd(&all)
}

fn urlrequest(root: &Path, ibi: &str) -> String {
    let out = Cgi::get(
        root,
        &format!("servicesubject=urlRequest&clientinformation.ipaddress=127.0.0.1&parsedibiurl.ibi={ibi}"),
    )
    .run();
    assert_eq!(out.status, 200);
    out.text()
}

/// The timestamp pair of the command's output, checked to lie between `before` and now.
fn stamped(out: &str, before: i64) -> String {
    let ts = out
        .split('\n')
        .find_map(|l| l.strip_prefix("timestamp "))
        .unwrap()
        .trim_end()
        .to_string();
    let t = chrono::DateTime::parse_from_rfc3339(&ts)
        .unwrap()
        .timestamp();
    assert!(before <= t && t <= ::ibi::time::SystemClock::now(), "{ts}");
    ts
}

#[test]
fn a_tombstone_answers_deleted_with_its_timestamp() {
    let f = Fixture::sample();
    let rep = "sid.inpe.br/mtc-m19/2013/09.04.12.27.57";
    let toml = f.path(&format!("col/{rep}/item.toml"));
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, format!("# Relatório final, 2013\n{text}")).unwrap();
    let before = ::ibi::time::SystemClock::now();
    let (code, out, err) = delete(f.root(), &["8JMKD3MGP7W/3EPGUE5"]);
    assert_eq!((code, err.as_str()), (0, STILL_HARVESTED));
    let ts = stamped(&out, before);
    assert_eq!(
        out,
        format!(
            "content removed\nibip 8JMKD3MGP7W/3EPGUE5\nrep {rep}\nstate Deleted\ntimestamp {ts}\n"
        )
    );
    assert_eq!(
        std::fs::read_to_string(&toml).unwrap(),
        format!("# Relatório final, 2013\nstate     = \"Deleted\"\nibip      = \"8JMKD3MGP7W/3EPGUE5\"\ntimestamp = {ts}\nlanguage  = \"pt\"\nmetadata  = \"sid.inpe.br/mtc-m19/2013/09.04.12.27.58\"\n")
    );
    // doc/ is gone, and nothing temporary is left beside item.toml.
    let left = f.names_in(&format!("col/{rep}"));
    assert_eq!(left, ["item.toml"]);
    let want = [
        IDENTITY[0].to_string(),
        format!("ibi {{rep {rep} ibip 8JMKD3MGP7W/3EPGUE5}}"),
        IDENTITY[1].to_string(),
        IDENTITY[2].to_string(),
        "state Deleted".to_string(),
        format!("timestamp {ts}"),
    ]
    .join("\r\n");
    assert_eq!(urlrequest(f.root(), "8JMKD3MGP7W/3EPGUE5"), want);
    assert_eq!(urlrequest(f.root(), rep), want);

    // Deleting it again is refused.
    let (code, out, err) = delete(f.root(), &[rep]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            1,
            "",
            "ibi-archive: delete: sid.inpe.br/mtc-m19/2013/09.04.12.27.57 is already Deleted\n"
        )
    );
    // The tree is still sound: a tombstone needs no files.
    // var/ is theirs who ran the commands (root, or the tester): judged as root's, who
    // may use anything, it is not at fault.
    let (code, out, _) = run_cmd(&[
        "check",
        "--root",
        f.root().to_str().unwrap(),
        "--web-user",
        "root",
    ]);
    assert_eq!((code, out.as_str()), (0, "checked 14 items: 0 faults\n"));
}

#[test]
fn keep_content_keeps_doc() {
    let f = Fixture::sample();
    let rep = "iconet.com.br/banon/2009/09.09.22.01";
    let before = ::ibi::time::SystemClock::now();
    let (code, out, err) = delete(f.root(), &["--keep-content", "LK47B6W/362SFKH"]);
    assert_eq!((code, err.as_str()), (0, ""));
    let ts = stamped(&out, before);
    assert_eq!(
        out,
        format!("content kept\nibip LK47B6W/362SFKH\nrep {rep}\nstate Deleted\ntimestamp {ts}\n")
    );
    assert!(f.path(&format!("col/{rep}/doc/@relatorio.pdf")).is_file());
    assert!(f.path(&format!("col/{rep}/doc/reference.bib")).is_file());
    assert_eq!(
        urlrequest(f.root(), rep),
        [
            IDENTITY[0].to_string(),
            format!("ibi {{rep {rep} ibip LK47B6W/362SFKH}}"),
            IDENTITY[1].to_string(),
            IDENTITY[2].to_string(),
            "state Deleted".to_string(),
            format!("timestamp {ts}"),
        ]
        .join("\r\n")
    );
}

#[test]
fn refusals_change_nothing() {
    let f = Fixture::sample();
    let snapshot = || {
        let mut v: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(f.path("col"))
            .into_iter()
            .map(|e| e.unwrap())
            .map(|e| {
                let bytes = if e.file_type().is_file() {
                    std::fs::read(e.path()).unwrap()
                } else {
                    Vec::new()
                };
                (e.path().display().to_string(), bytes)
            })
            .collect();
        v.sort();
        v
    };
    let before = snapshot();
    for (args, code, want) in [
        (
            vec!["sid.inpe.br/mtc-m19/2099/01.01.00.00"],
            1,
            "ibi-archive: delete: no item sid.inpe.br/mtc-m19/2099/01.01.00.00 in this Archive\n",
        ),
        (
            vec!["sid.inpe.br/mtc-m19/2013/02.10.11.12"],
            1,
            "ibi-archive: delete: sid.inpe.br/mtc-m19/2013/02.10.11.12 is already Deleted\n",
        ),
        (
            vec!["sid.inpe.br/mtc-m18.80/2008/03.17.15.17"],
            1,
            "ibi-archive: delete: sid.inpe.br/mtc-m18.80/2008/03.17.15.17 is this Archive's service item (archiveserviceibi): it cannot be deleted\n",
        ),
        (
            vec!["not-an-ibi"],
            2,
            "ibi-archive: delete: invalid IBI \"not-an-ibi\": it has 0 '/', expected 3 (rep) or 1 (IBIp)\n",
        ),
        (vec![], 2, "ibi-archive: delete: missing IBI; usage: ibi-archive delete [--root R] [--keep-content] [--reason TEXT] IBI\n"),
        (
            vec!["--force", "LK47B6W/362SFKH"],
            2,
            "ibi-archive: delete: unexpected argument --force; see ibi-archive delete --help\n",
        ),
    ] {
        let (got, out, err) = delete(f.root(), &args);
        assert_eq!((got, out.as_str(), err.as_str()), (code, "", want), "{args:?}");
    }
    // A broken item.toml: the error names it.
    let toml = f.path("col/sid.inpe.br/mtc-m19/2014/05.06.07.08/item.toml");
    std::fs::write(&toml, "state = \"Lost\"\n").unwrap();
    let (code, _, err) = delete(f.root(), &["sid.inpe.br/mtc-m19/2014/05.06.07.08"]);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!("ibi-archive: delete: sid.inpe.br/mtc-m19/2014/05.06.07.08: {}:1:9: unknown variant `Lost`, expected one of `Original`, `Copy`, `Deleted`; item treated as absent\n", toml.display())
    );
    std::fs::write(
        &toml,
        "state      = \"Original\"\ntimestamp  = 2014-05-06T07:08:30Z\ntarget     = \"article.pdf\"\nrestricted = true\nmetadata   = \"sid.inpe.br/mtc-m19/2014/05.06.07.08.09\"\n",
    )
    .unwrap();
    assert_eq!(snapshot(), before);
}

/// `--reason` writes why the item was removed into the tombstone's item.toml, for its
/// landing page; an empty one or one longer than the page shows is refused, and nothing
/// changes.
#[test]
fn a_reason_given_is_kept_in_the_tombstone() {
    let f = Fixture::sample();
    let rep = "sid.inpe.br/mtc-m19/2013/09.04.12.27.57";
    let toml = f.path(&format!("col/{rep}/item.toml"));
    let text = std::fs::read_to_string(&toml).unwrap();
    let long = "x".repeat(ibi_archive::item::MAX_REASON + 1);
    for (reason, why) in [
        (
            "",
            "ibi-archive: delete: --reason is empty: give one, or leave the flag out\n",
        ),
        (
            long.as_str(),
            "ibi-archive: delete: --reason is 501 bytes long: the landing page shows at most 500\n",
        ),
    ] {
        let (code, out, err) = delete(f.root(), &["--reason", reason, "8JMKD3MGP7W/3EPGUE5"]);
        assert_eq!((code, out.as_str(), err.as_str()), (2, "", why));
        assert_eq!(std::fs::read_to_string(&toml).unwrap(), text);
    }
    let before = ::ibi::time::SystemClock::now();
    let (code, out, err) = delete(
        f.root(),
        &[
            "--reason",
            "Withdrawn: a \"duplicate\" of 8JMKD3MGP7W/3EPGUE6",
            "8JMKD3MGP7W/3EPGUE5",
        ],
    );
    assert_eq!((code, err.as_str()), (0, STILL_HARVESTED));
    let ts = stamped(&out, before);
    assert_eq!(
        std::fs::read_to_string(&toml).unwrap(),
        format!("state     = \"Deleted\"\nibip      = \"8JMKD3MGP7W/3EPGUE5\"\ntimestamp = {ts}\nlanguage  = \"pt\"\nmetadata  = \"sid.inpe.br/mtc-m19/2013/09.04.12.27.58\"\nreason    = 'Withdrawn: a \"duplicate\" of 8JMKD3MGP7W/3EPGUE6'\n")
    );
    // `check` accepts the tombstone (var/ is the test's user's, as its web server's).
    let me = std::process::Command::new("id")
        .arg("-un")
        .output()
        .unwrap();
    let user = String::from_utf8(me.stdout).unwrap().trim().to_string();
    let (code, out, err) = run_cmd(&[
        "check",
        "--root",
        f.root().to_str().unwrap(),
        "--web-user",
        &user,
    ]);
    assert_eq!(code, 0, "{out}{err}");
}

/// Deleting a data item whose metadata item is here and live says that harvesters still
/// get the description; deleting one without, or the metadata item itself, says nothing.
#[test]
fn deleting_a_described_item_notes_its_metadata_item_is_still_harvested() {
    let fx = Fixture::sample();
    let root = fx.root();
    let (code, _, err) = delete(root, &["sid.inpe.br/mtc-m18@80/2009/07.21.13.23"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err,
        "ibi-archive: note: its metadata item sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47 is still harvested (OAI-PMH) as a live record: delete it too to withdraw the description from harvesters\n"
    );
    let (code, _, err) = delete(root, &["sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47"]);
    assert_eq!((code, err.as_str()), (0, ""));
    let (code, _, err) = delete(root, &["sid.inpe.br/mtc-m18@80/2009/08.25.19.43"]);
    assert_eq!((code, err.as_str()), (0, ""));
}
