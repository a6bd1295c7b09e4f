//! Items and archive.toml rewritten, broken and removed while requests read them, atomically
//! (rename) and not (in place, a few bytes at a time): every answer is either the whole
//! correct answer or the answer of an absent item (or of a missing configuration) with one
//! log line; never a panic, never a torn answer.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::{mask_urlkey, Cgi, Fixture, LK47, LK47_ANSWER};

/// The item's own item.toml with its required field last: every proper prefix of it is
/// invalid, so a reader of a half-written file sees a broken item, never another item.
const VALID_ITEM: &str = "ibip      = \"LK47B6W/362SFKH\"\ntimestamp = 2009-09-09T22:01:00Z\ntarget    = \"@relatorio.pdf\"\nlanguage  = \"pt\"\nstate     = \"Original\"\n";
/// Broken from its first byte.
const BROKEN_ITEM: &str = "= broken\nstate = \"Original\"\n";

/// Writes `text` to `path` in the way `step` says: 0 atomically (rename), 1 in place a
/// few bytes at a time, 2 removed (renamed away), 3 removed (unlinked).
fn put(path: &Path, text: &str, step: usize) {
    let tmp = path.with_extension("tmp");
    match step {
        0 => {
            std::fs::write(&tmp, text).unwrap();
            std::fs::rename(&tmp, path).unwrap();
        }
        1 => {
            let mut f = std::fs::File::create(path).unwrap();
            for chunk in text.as_bytes().chunks(7) {
                f.write_all(chunk).unwrap();
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
        }
        2 => {
            let _ = std::fs::rename(path, path.with_extension("away"));
        }
        _ => {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Whether a log line starts with `ibi-archive: <path>: ` or, for a TOML error,
/// `ibi-archive: <path>:LINE:COLUMN: `.
fn names_the_file(line: &str, path: &Path) -> bool {
    let Some(rest) = line.strip_prefix(&format!("ibi-archive: {}:", path.display())) else {
        return false;
    };
    if rest.starts_with(' ') {
        return true;
    }
    let mut parts = rest.splitn(3, ':');
    let number =
        |p: Option<&str>| p.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    number(parts.next()) && number(parts.next()) && parts.next().is_some_and(|r| r.starts_with(' '))
}

/// Runs `flip` in a thread until `requests` requests (on 6 threads) are answered; returns
/// the answers as (status, masked body, stderr).
fn under_flips(
    root: &Path,
    query: &'static str,
    requests: usize,
    flip: impl Fn(usize) + Send + 'static,
) -> Vec<(u16, String, String)> {
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                flip(i);
                i += 1;
                std::thread::sleep(std::time::Duration::from_micros(300));
            }
            i
        })
    };
    let root: PathBuf = root.to_path_buf();
    let workers: Vec<_> = (0..6)
        .map(|w| {
            let root = root.clone();
            std::thread::spawn(move || {
                (w..requests)
                    .step_by(6)
                    .map(|_| {
                        let out = Cgi::get(&root, query).run();
                        let (text, _) = mask_urlkey(&out.text());
                        (out.status, text, out.stderr)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let answers: Vec<_> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    stop.store(true, Ordering::Relaxed);
    let flips = flipper.join().unwrap();
    assert!(flips > 10, "only {flips} flips");
    answers
}

#[test]
fn an_item_flipping_between_valid_broken_and_absent() {
    let f = Fixture::sample();
    let path = f.path("col/iconet.com.br/banon/2009/09.09.22.01/item.toml");
    put(&path, VALID_ITEM, 0);
    assert_eq!(
        mask_urlkey(&Cgi::get(f.root(), LK47).run().text()).0,
        LK47_ANSWER
    );
    let p = path.clone();
    let answers = under_flips(f.root(), LK47, 500, move |i| {
        // valid/broken/absent × four ways of writing.
        let step = (i / 3) % 4;
        match i % 3 {
            0 => put(&p, VALID_ITEM, step.min(1)),
            1 => put(&p, BROKEN_ITEM, step.min(1)),
            _ => put(&p, "", 2 + step % 2),
        }
    });
    let (mut whole, mut absent) = (0, 0);
    for (status, body, stderr) in &answers {
        assert_eq!(*status, 200, "{body} {stderr}");
        if body == LK47_ANSWER && stderr.is_empty() {
            whole += 1;
        } else if body.is_empty()
            && stderr.lines().count() == 1
            && names_the_file(stderr, &path)
            && stderr.ends_with("; item treated as absent\n")
        {
            absent += 1;
        } else {
            panic!("neither whole nor absent: {body:?} {stderr:?}");
        }
    }
    assert_eq!(whole + absent, 500);
    assert!(whole > 0 && absent > 0, "whole {whole}, absent {absent}");
}

/// The configuration with its required field last (every proper prefix is invalid).
const VALID_CONFIG: &str = "platformsoftware  = \"dpi.inpe.br/banon/1998/08.02.08.56\"\narchiveserviceibi = \"sid.inpe.br/mtc-m18@80/2008/03.17.15.17\"\narchiveaddress    = \"localhost:8080\"\n";
/// Broken whatever prefix is read, and holding a key.
const BROKEN_CONFIG: &str = "[registration]\nadminemail = \"a@b\"\nkey = 8765432109\nip = \"1\"\n";

#[test]
fn archive_toml_flipping_between_valid_broken_and_absent() {
    let f = Fixture::sample();
    let path = f.path("archive.toml");
    put(&path, VALID_CONFIG, 0);
    assert_eq!(
        mask_urlkey(&Cgi::get(f.root(), LK47).run().text()).0,
        LK47_ANSWER
    );
    let p = path.clone();
    let answers = under_flips(f.root(), LK47, 300, move |i| {
        let step = (i / 3) % 4;
        match i % 3 {
            0 => put(&p, VALID_CONFIG, step.min(1)),
            1 => put(&p, BROKEN_CONFIG, step.min(1)),
            _ => put(&p, "", 2 + step % 2),
        }
    });
    let (mut whole, mut refused) = (0, 0);
    for (status, body, stderr) in &answers {
        assert!(
            !stderr.contains("87654321") && !body.contains("87654321"),
            "{stderr}"
        );
        match status {
            200 if body == LK47_ANSWER && stderr.is_empty() => whole += 1,
            500 if body == "error {archive configuration unavailable}"
                && stderr.lines().count() == 1
                && names_the_file(stderr, &path) =>
            {
                refused += 1
            }
            _ => panic!("unexpected answer {status} {body:?} {stderr:?}"),
        }
    }
    assert_eq!(whole + refused, 300);
    assert!(whole > 0 && refused > 0, "whole {whole}, refused {refused}");
}
