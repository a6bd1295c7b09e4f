//! An acknowledgment is answered only once its line is in the access log: `serve`, under a
//! load of acknowledgments from 16 clients at once (each with a key of a real urlRequest
//! to the same `serve`), is killed with SIGKILL in the middle of it. Every acknowledgment
//! answered before the kill must then be in the log exactly once, no key twice, and
//! `stats` must count every line; each client also finds its line in the log as soon as
//! its answer arrives. So under each `[acknowledgments] sync_interval`: the default (the
//! log synced within a second), one longer than the test (no sync after the first: the
//! lines answered live through the kill in the page cache alone, which the synced record
//! shows), and "0" (synced before each answer, which a kill cannot show: the page cache
//! outlives the process; acklog's unit tests count those syncs).

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::mpsc;

use common::{Fixture, Serve};
use ibi_archive::acklog;

const SERVICE: &str = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17";

use common::ONE_URL_IBIS as IBIS;

/// Clients at once, each from its own loopback address (serve's per-client limit).
const CLIENTS: u8 = 16;
/// Acknowledgments answered before the kill.
const BEFORE_KILL: usize = 300;

fn pair<'a>(text: &'a str, name: &str) -> &'a str {
    text.split("\r\n")
        .find_map(|l| l.strip_prefix(name).and_then(|v| v.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no {name} in {text:?}"))
}

/// `GET target` on a connection of its own; an error once serve is gone.
fn get(source: IpAddr, authority: &str, target: &str) -> Result<common::Response, String> {
    let request = format!(
        "GET {target} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: ibi-archive-tests\r\nConnection: close\r\n\r\n"
    );
    common::try_http_raw_from(Some(source), authority, request.as_bytes(), false)
}

/// A urlRequest for the `i`th item of [`IBIS`] and the acknowledgment of its answer, from
/// `source`; its key once answered, and found in the access log `log` then. `None` once
/// serve is gone.
fn acknowledge(source: IpAddr, authority: &str, log: &Path, i: usize) -> Option<String> {
    let asked = format!(
        "/{SERVICE}?servicesubject=urlRequest&clientinformation.ipaddress=150.163.2.175&parsedibiurl.ibi={}",
        IBIS[i % IBIS.len()]
    );
    let r = get(source, authority, &asked).ok()?;
    assert_eq!(r.status, 200, "{}", r.text());
    let text = r.text();
    let (url, key) = (pair(&text, "url"), pair(&text, "urlkey"));
    let ibi = pair(&text, "ibi")
        .trim_matches(['{', '}'])
        .replace(' ', "%20");
    let ack = format!(
        "/{SERVICE}?servicesubject=acknowledgment&clientinformation.ipaddress=150.163.2.175&contenttype=Data&ibi={ibi}&url={url}&urlkey={key}"
    );
    let r = get(source, authority, &ack).ok()?;
    assert_eq!(
        (r.status, r.text().as_str()),
        (200, "notice {acknowledgment received}")
    );
    // Written before it was answered (a key is in its line between tabs).
    let text = std::fs::read_to_string(log).unwrap();
    assert!(
        text.contains(&format!("\t{key}\t")),
        "{key} answered, not in the log"
    );
    Some(key.to_string())
}

/// One client: [`acknowledge`] again and again, until serve is gone; each key answered
/// sent to `answered`.
fn client(n: u8, authority: &str, log: &Path, answered: &mpsc::Sender<String>) {
    let source = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + n));
    for i in usize::from(n).. {
        let Some(key) = acknowledge(source, authority, log, i) else {
            return;
        };
        if answered.send(key).is_err() {
            return;
        }
    }
}

#[test]
fn acknowledgments_answered_before_a_kill_are_each_in_the_log_once() {
    let f = Fixture::sample();
    killed_under_load(&f);
}

#[test]
fn acknowledgments_answered_before_a_kill_are_in_the_log_though_never_synced() {
    let f = Fixture::sample();
    with_sync_interval(&f, "1h");
    let (log, synced) = killed_under_load(&f);
    // The first lines were synced (there was no synced record yet): those written before
    // that one sync took the log's length, a few rounds of the 16 clients at most. Those
    // answered after it never were, and are in the log all the same.
    let (synced_lines, lines) = (log[..synced].lines().count(), log.lines().count());
    assert!(
        synced_lines >= 1 && synced_lines * 4 < lines,
        "{synced_lines} of {lines} lines synced"
    );
}

#[test]
fn acknowledgments_answered_before_a_kill_are_each_in_the_log_once_synced_each() {
    let f = Fixture::sample();
    with_sync_interval(&f, "0");
    let (log, synced) = killed_under_load(&f);
    // Each answer waited for a sync that covered its line: past the synced length are
    // at most the lines whose writers the kill cut off.
    let unsynced = log[synced..].lines().count();
    assert!(
        unsynced <= usize::from(CLIENTS),
        "{unsynced} of {} lines past the synced length",
        log.lines().count()
    );
}

/// When no acknowledgment comes after the last ones to sync them, serve's own thread
/// does: here, with an interval longer than the test, when serve is stopped (SIGINT),
/// before it exits.
#[test]
fn serve_syncs_the_lines_left_unsynced_when_it_stops() {
    let f = Fixture::sample();
    with_sync_interval(&f, "1h");
    let log = f.path("var/acknowledgments.log");
    let mut serve = Serve::start(f.root(), Stdio::null());
    let source = IpAddr::V4(Ipv4Addr::LOCALHOST);
    for i in 0..3 {
        acknowledge(source, &serve.address, &log, i).expect("serve answers");
    }
    // The first line synced (there was no synced record yet), the two after it not.
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.lines().count(), 3);
    let first = text.find('\n').unwrap() + 1;
    assert_eq!(synced_length(&f), first as u64);
    assert!(serve.interrupt().success());
    assert_eq!(synced_length(&f), text.len() as u64);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), text);
}

/// Adds `[acknowledgments] sync_interval = "<value>"` to the Archive's archive.toml.
fn with_sync_interval(f: &Fixture, value: &str) {
    let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
    f.write(
        "archive.toml",
        format!("{toml}\n[acknowledgments]\nsync_interval = \"{value}\"\n").as_bytes(),
    );
}

/// The length of the access log that var/acknowledgments.synced says is synced (its
/// second field: the log's inode, that length, the time of the sync, a check).
fn synced_length(f: &Fixture) -> u64 {
    let record = std::fs::read_to_string(f.path("var/acknowledgments.synced")).unwrap();
    record.split(' ').nth(1).unwrap().parse().unwrap()
}

/// 16 clients acknowledging, `serve` killed after [`BEFORE_KILL`] answers; then every key
/// answered is in the log once and `stats` counts every line, after syncing the log. The
/// log as the kill left it, and the length the synced record said was synced then.
fn killed_under_load(f: &Fixture) -> (String, usize) {
    let log = f.path("var/acknowledgments.log");
    let mut serve = Serve::start(f.root(), Stdio::null());
    let authority = serve.address.clone();
    let (tx, rx) = mpsc::channel();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|n| {
            let (tx, authority, log) = (tx.clone(), authority.clone(), log.clone());
            std::thread::spawn(move || client(n, &authority, &log, &tx))
        })
        .collect();
    drop(tx);
    // Every key received here was answered before serve died: its answer was read whole.
    let mut answered = BTreeSet::new();
    let mut killed = None;
    for key in rx {
        assert!(answered.insert(key), "a key issued twice");
        if answered.len() == BEFORE_KILL {
            killed = Some(serve.kill());
        }
    }
    for c in clients {
        c.join().expect("a client failed");
    }
    let status = killed.unwrap_or_else(|| panic!("serve died early: {answered:?}"));
    assert_eq!(status.signal(), Some(9), "{status:?}");
    let text = std::fs::read_to_string(&log).unwrap();
    let synced = synced_length(f) as usize;
    assert!(synced <= text.len() && text.is_char_boundary(synced));

    let mut logged: BTreeMap<String, usize> = BTreeMap::new();
    let mut lines = 0;
    let malformed = acklog::for_each(&f.path("var"), |r| {
        assert_eq!(r.contenttype, "Data");
        *logged.entry(r.key).or_default() += 1;
        lines += 1;
    })
    .unwrap();
    // At most the line being written at the kill is torn (not answered: its writer died).
    assert!(malformed <= 1, "{malformed} malformed lines");
    let missing: Vec<&String> = answered
        .iter()
        .filter(|k| !logged.contains_key(*k))
        .collect();
    assert!(
        missing.is_empty(),
        "{} of {} answered acknowledgments are not in the log: {missing:?}",
        missing.len(),
        answered.len()
    );
    let twice: Vec<(&String, &usize)> = logged.iter().filter(|(_, n)| **n != 1).collect();
    assert!(twice.is_empty(), "keys logged more than once: {twice:?}");
    // Lines written whose answer the kill cut off are counted too (their keys were
    // valid), but no more than the clients had in flight.
    assert!(
        (answered.len()..=answered.len() + usize::from(CLIENTS)).contains(&lines),
        "{lines} lines for {} answered",
        answered.len()
    );

    let (code, out, err) =
        common::run_cmd(&["stats", "--root", f.root().to_str().unwrap(), "--csv"]);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    let total: usize = out
        .lines()
        .find_map(|l| l.strip_prefix("*,total,"))
        .unwrap_or_else(|| panic!("no total in {out}"))
        .parse()
        .unwrap();
    assert_eq!(total, lines, "{out}");
    // What stats counted was synced first, whatever the kill left unsynced.
    assert_eq!(synced_length(f), text.len() as u64);
    (text, synced)
}
