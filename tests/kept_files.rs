//! What `serve` keeps of an item between requests for its files (`routes::Kept`: col/'s
//! handle, and what item.toml says of who may have the files) never answers otherwise
//! than reading it all again: after each change an administrator (or an intruder with
//! write access to part of the tree) can make — item.toml edited in place or renamed over,
//! made restricted, turned tombstone, a doc/ file replaced, removed or swapped for a link,
//! the item's directory replaced or reached through a link, col/ replaced, archive.toml's
//! networks, resolver or base URL changed — the kept answer is compared with a fresh one
//! (`routes::answer`), and with the answer the change must give.

use std::io::Read;
use std::net::IpAddr;
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::Path;
use std::time::Duration;

use common::Fixture;
use ibi_archive::http::{Headers, Reply};
use ibi_archive::routes::{self, Kept, Target};

const ITEM: &str = "col/iconet.com.br/banon/2009/09.09.22.01";
const FILE: &str = "/col/iconet.com.br/banon/2009/09.09.22.01/doc/reference.bib";

/// Inside the sample Archive's `[access] networks`, and outside them.
fn inside() -> IpAddr {
    "127.0.0.1".parse().unwrap()
}
fn outside() -> IpAddr {
    "192.0.2.1".parse().unwrap()
}

/// An answer as a client sees it: status, headers (a file's, with its ETag), body.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn seen(reply: Reply) -> Seen {
    match reply {
        Reply::Page(a) => Seen {
            status: a.status,
            headers: a.headers,
            body: a.body,
        },
        Reply::File(mut f) => {
            let mut body = Vec::new();
            if f.body().is_some() {
                f.file.read_to_end(&mut body).unwrap();
            }
            Seen {
                status: f.status(),
                headers: f
                    .headers()
                    .into_iter()
                    .map(|(n, v)| (n.to_string(), v))
                    .collect(),
                body,
            }
        }
    }
}

/// A time when every file of the fixture has settled (its change time well past), so
/// that what can be kept is kept.
fn later() -> i64 {
    ::ibi::time::SystemClock::now() + 100
}

/// GET `path` from `client`, through `kept` and afresh: the two answers must be the same.
fn get(f: &Fixture, kept: &Kept, client: IpAddr, path: &str) -> Seen {
    let headers = Headers::default();
    let req = ibi_archive::http::Request {
        method: "GET",
        query: b"",
        client: Some(client),
        root: Some(f.root()),
        headers: &headers,
        form: None,
    };
    let now = later();
    let kept_answer = seen(routes::answer_kept(&req, &Target::Path(path), now, kept));
    let fresh = seen(routes::answer(&req, &Target::Path(path), now));
    assert_eq!(kept_answer, fresh, "{path} from {client}");
    kept_answer
}

fn header<'a>(s: &'a Seen, name: &str) -> Option<&'a str> {
    s.headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn is_private(s: &Seen) -> bool {
    header(s, "Cache-Control") == Some("private") && header(s, "Vary") == Some("*")
}

/// Waits until a change made now gives a file another change time than `path` has (file
/// systems keep times in ticks, some as coarse as a second), so that a change after a
/// judgement was kept is one the stamp can tell — as it is on a live Archive, where a
/// judgement is kept only once item.toml's change time is 2 s old.
fn tick_past(path: &Path) {
    let before = std::fs::symlink_metadata(path).unwrap();
    let probe = path.with_file_name(".tick");
    for _ in 0..300 {
        std::fs::write(&probe, b"").unwrap();
        let m = std::fs::metadata(&probe).unwrap();
        std::fs::remove_file(&probe).unwrap();
        if (m.ctime(), m.ctime_nsec()) > (before.ctime(), before.ctime_nsec()) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the file system's clock did not move in 3 s");
}

/// A fixture, its item's file answered once (and its judgement kept).
fn kept_fixture() -> (Fixture, Kept, Seen) {
    let f = Fixture::sample();
    let kept = Kept::default();
    let first = get(&f, &kept, outside(), FILE);
    assert_eq!(first.status, 200);
    assert_eq!(
        first.body,
        std::fs::read(f.path(&format!("{ITEM}/doc/reference.bib"))).unwrap()
    );
    assert!(!is_private(&first));
    assert_eq!(kept.items_kept(), 1, "the judgement is kept");
    // Kept, and answered the same again.
    assert_eq!(get(&f, &kept, outside(), FILE), first);
    tick_past(&f.path(&format!("{ITEM}/item.toml")));
    (f, kept, first)
}

fn item_toml(f: &Fixture) -> String {
    std::fs::read_to_string(f.path(&format!("{ITEM}/item.toml"))).unwrap()
}

#[test]
fn item_toml_edited_in_place_to_restrict_the_item() {
    let (f, kept, _) = kept_fixture();
    let path = f.path(&format!("{ITEM}/item.toml"));
    let before = std::fs::metadata(&path).unwrap();
    // The same size, the same inode, and the modification time set back: only the
    // change time tells (`language  = "pt"` and `restricted= true` are 16 bytes each).
    let text = item_toml(&f).replace("language  = \"pt\"", "restricted= true");
    assert_eq!(text.len() as u64, before.len());
    std::fs::write(&path, &text).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_modified(before.modified().unwrap()).unwrap();
    drop(file);
    let after = std::fs::metadata(&path).unwrap();
    assert_eq!((after.ino(), after.len()), (before.ino(), before.len()));
    assert_eq!(after.mtime_nsec(), before.mtime_nsec());

    let refused = get(&f, &kept, outside(), FILE);
    assert_eq!(refused.status, 403);
    assert!(is_private(&refused));
    let served = get(&f, &kept, inside(), FILE);
    assert_eq!(served.status, 200);
    assert!(is_private(&served));
}

#[test]
fn item_toml_renamed_over_to_turn_the_item_into_a_tombstone() {
    let (f, kept, _) = kept_fixture();
    let text = item_toml(&f).replace("\"Original\"", "\"Deleted\"");
    f.write(&format!("{ITEM}/item.toml.new"), text.as_bytes());
    std::fs::rename(
        f.path(&format!("{ITEM}/item.toml.new")),
        f.path(&format!("{ITEM}/item.toml")),
    )
    .unwrap();
    for client in [inside(), outside()] {
        assert_eq!(get(&f, &kept, client, FILE).status, 410);
    }
}

#[test]
fn item_toml_broken_removed_or_swapped_for_a_link() {
    let (f, kept, _) = kept_fixture();
    let toml = format!("{ITEM}/item.toml");
    let good = item_toml(&f);
    // Broken: the item is absent, and nothing of it stays kept.
    f.write(&toml, b"state = [\n");
    assert_eq!(get(&f, &kept, inside(), FILE).status, 404);
    assert_eq!(kept.items_kept(), 0);
    f.write(&toml, good.as_bytes());
    assert_eq!(get(&f, &kept, inside(), FILE).status, 200);
    // Removed.
    f.remove(&toml);
    assert_eq!(get(&f, &kept, inside(), FILE).status, 404);
    // A link to a copy of the same text: never read through.
    f.write("elsewhere.toml", good.as_bytes());
    symlink(f.path("elsewhere.toml"), f.path(&toml)).unwrap();
    assert_eq!(get(&f, &kept, inside(), FILE).status, 404);
}

#[test]
fn a_doc_file_replaced_removed_or_swapped_for_a_link() {
    let (f, kept, first) = kept_fixture();
    let rel = format!("{ITEM}/doc/reference.bib");
    // Replaced (renamed over): its new bytes and another ETag.
    f.write(&format!("{ITEM}/doc/new.tmp"), b"@misc{new}\n");
    std::fs::rename(f.path(&format!("{ITEM}/doc/new.tmp")), f.path(&rel)).unwrap();
    let replaced = get(&f, &kept, outside(), FILE);
    assert_eq!(replaced.status, 200);
    assert_eq!(replaced.body, b"@misc{new}\n");
    assert_ne!(header(&replaced, "ETag"), header(&first, "ETag"));
    // Rewritten in place.
    f.write(&rel, b"@misc{again}\n");
    assert_eq!(get(&f, &kept, outside(), FILE).body, b"@misc{again}\n");
    // A second link to it (it could be anywhere, archive.toml say): never served.
    std::fs::hard_link(f.path(&rel), f.path("hard.bib")).unwrap();
    assert_eq!(get(&f, &kept, outside(), FILE).status, 404);
    std::fs::remove_file(f.path("hard.bib")).unwrap();
    assert_eq!(get(&f, &kept, outside(), FILE).status, 200);
    // Swapped for a link (to archive.toml): never followed.
    f.remove(&rel);
    assert_eq!(get(&f, &kept, outside(), FILE).status, 404);
    symlink(f.path("archive.toml"), f.path(&rel)).unwrap();
    let linked = get(&f, &kept, outside(), FILE);
    assert_eq!(linked.status, 404);
    assert!(!String::from_utf8_lossy(&linked.body).contains("archiveaddress"));
    // doc/ itself swapped for a link to a copy of it.
    f.remove(&rel);
    std::fs::rename(f.path(&format!("{ITEM}/doc")), f.path("doc-aside")).unwrap();
    f.write("doc-aside/reference.bib", b"@misc{aside}\n");
    symlink(f.path("doc-aside"), f.path(&format!("{ITEM}/doc"))).unwrap();
    assert_eq!(get(&f, &kept, outside(), FILE).status, 404);
}

#[test]
fn the_item_directory_replaced_or_reached_through_a_link() {
    let (f, kept, _) = kept_fixture();
    // Replaced by a restricted item with other files: its own judgement.
    let dir = f.path(ITEM);
    std::fs::rename(&dir, f.path("old-item")).unwrap();
    let text = std::fs::read_to_string(f.path("old-item/item.toml"))
        .unwrap()
        .replace("language  = \"pt\"", "restricted = true");
    f.write(&format!("{ITEM}/item.toml"), text.as_bytes());
    f.write(&format!("{ITEM}/doc/reference.bib"), b"@misc{restricted}\n");
    let refused = get(&f, &kept, outside(), FILE);
    assert_eq!(refused.status, 403);
    assert!(is_private(&refused));
    let served = get(&f, &kept, inside(), FILE);
    assert_eq!(served.body, b"@misc{restricted}\n");
    assert!(is_private(&served));
    // Replaced by a link to the old one, whose item.toml is the very file kept before:
    // an item reached through a link is absent.
    f.remove(ITEM);
    symlink(f.path("old-item"), &dir).unwrap();
    assert_eq!(get(&f, &kept, inside(), FILE).status, 404);
    // The same with a link higher up: the year swapped for a link to itself moved aside.
    std::fs::remove_file(&dir).unwrap();
    std::fs::rename(f.path("old-item"), &dir).unwrap();
    assert_eq!(get(&f, &kept, outside(), FILE).status, 200);
    let year = f.path("col/iconet.com.br/banon/2009");
    std::fs::rename(&year, f.path("col/iconet.com.br/banon/2009-aside")).unwrap();
    symlink("2009-aside", &year).unwrap();
    assert_eq!(get(&f, &kept, outside(), FILE).status, 404);
    // Removed.
    std::fs::remove_file(&year).unwrap();
    assert_eq!(get(&f, &kept, outside(), FILE).status, 404);
}

#[test]
fn col_replaced_or_its_link_turned_elsewhere() {
    let (f, kept, _) = kept_fixture();
    // col/ moved aside and another one in its place, without this item: 404.
    std::fs::rename(f.path("col"), f.path("col-old")).unwrap();
    std::fs::create_dir(f.path("col")).unwrap();
    assert_eq!(get(&f, &kept, outside(), FILE).status, 404);
    // col/ a link (which is allowed) to a tree holding the item restricted.
    std::fs::remove_dir(f.path("col")).unwrap();
    let toml = "col-old/iconet.com.br/banon/2009/09.09.22.01/item.toml";
    let text = std::fs::read_to_string(f.path(toml))
        .unwrap()
        .replace("language  = \"pt\"", "restricted = true");
    f.write(toml, text.as_bytes());
    symlink("col-old", f.path("col")).unwrap();
    assert_eq!(get(&f, &kept, outside(), FILE).status, 403);
    // The link turned to another tree, where the item is open.
    common::copy_tree(&f.path("col-old"), &f.path("col-new"));
    let toml = "col-new/iconet.com.br/banon/2009/09.09.22.01/item.toml";
    let text = std::fs::read_to_string(f.path(toml))
        .unwrap()
        .replace("restricted = true", "language = \"pt\"");
    f.write(toml, text.as_bytes());
    std::fs::remove_file(f.path("col")).unwrap();
    symlink("col-new", f.path("col")).unwrap();
    assert_eq!(get(&f, &kept, outside(), FILE).status, 200);
    // No col/ at all.
    std::fs::remove_file(f.path("col")).unwrap();
    assert_eq!(get(&f, &kept, outside(), FILE).status, 404);
}

#[test]
fn a_kept_restricted_item_follows_archive_toml_networks() {
    let f = Fixture::sample();
    let kept = Kept::default();
    let toml = format!("{ITEM}/item.toml");
    let text = item_toml(&f).replace("language  = \"pt\"", "restricted = true");
    f.write(&toml, text.as_bytes());
    assert_eq!(get(&f, &kept, inside(), FILE).status, 200);
    assert_eq!(kept.items_kept(), 1);
    // The same item.toml, kept; 127.0.0.1 no longer licensed.
    let config = std::fs::read_to_string(f.path("archive.toml"))
        .unwrap()
        .replace(", \"127.0.0.0/8\"", "");
    f.write("archive.toml.new", config.as_bytes());
    std::fs::rename(f.path("archive.toml.new"), f.path("archive.toml")).unwrap();
    let refused = get(&f, &kept, inside(), FILE);
    assert_eq!(refused.status, 403);
    assert!(is_private(&refused));
    assert_eq!(kept.items_kept(), 1);
}

#[test]
fn an_item_toml_just_written_is_not_kept() {
    let f = Fixture::sample();
    let kept = Kept::default();
    f.write(&format!("{ITEM}/item.toml"), item_toml(&f).as_bytes());
    let headers = Headers::default();
    let req = ibi_archive::http::Request {
        method: "GET",
        query: b"",
        client: Some(outside()),
        root: Some(f.root()),
        headers: &headers,
        form: None,
    };
    // Its change time is now: a second write within the same tick of the file system's
    // clock would leave its stamp as it is, so it is read again until it has settled.
    let now = ::ibi::time::SystemClock::now();
    let reply = routes::answer_kept(&req, &Target::Path(FILE), now, &kept);
    assert_eq!(seen(reply).status, 200);
    assert_eq!(kept.items_kept(), 0);
    let reply = routes::answer_kept(&req, &Target::Path(FILE), now + 100, &kept);
    assert_eq!(seen(reply).status, 200);
    assert_eq!(kept.items_kept(), 1);
}

#[test]
fn a_kept_items_links_follow_archive_toml() {
    let (f, kept, first) = kept_fixture();
    let cite = |s: &Seen| header(s, "Link").unwrap_or("").to_string();
    assert!(cite(&first).contains("localhost:8090"), "{}", cite(&first));
    // Another resolver, so another persistent URL; another base URL, so another landing
    // page: the same item.toml, kept, and links written anew.
    let config = std::fs::read_to_string(f.path("archive.toml"))
        .unwrap()
        .replace("localhost:8090", "resolver.example.org")
        .replace(
            "archiveaddress    = \"localhost:8080\"",
            "archiveaddress    = \"localhost:8080\"\nbaseurl = \"https://archive.example.org\"",
        );
    f.write("archive.toml.new", config.as_bytes());
    std::fs::rename(f.path("archive.toml.new"), f.path("archive.toml")).unwrap();
    let again = get(&f, &kept, outside(), FILE);
    assert_eq!(again.status, 200);
    assert!(
        cite(&again).contains("resolver.example.org"),
        "{}",
        cite(&again)
    );
    assert!(
        cite(&again).contains("https://archive.example.org/"),
        "{}",
        cite(&again)
    );
    assert_eq!(kept.items_kept(), 1);
}
