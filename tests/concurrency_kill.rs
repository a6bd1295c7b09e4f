//! An acknowledgment is answered only once its line is in the access log: `serve`, under a
//! load of acknowledgments from 16 clients at once (each with a key of a real urlRequest
//! to the same `serve`), is killed with SIGKILL in the middle of it. Every acknowledgment
//! answered before the kill must then be in the log exactly once, no key twice, and
//! `stats` must count every line. (The lines are on stable storage before the answer too,
//! which a kill cannot show: the page cache outlives the process. acklog's group commit
//! is what orders the sync before the answer.)

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr};
use std::os::unix::process::ExitStatusExt;
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

/// One client: a urlRequest, the acknowledgment of its answer, again, until serve is gone;
/// each key whose acknowledgment was answered sent to `answered`.
fn client(n: u8, authority: &str, answered: &mpsc::Sender<String>) {
    let source = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + n));
    for i in usize::from(n).. {
        let asked = format!(
            "/{SERVICE}?servicesubject=urlRequest&clientinformation.ipaddress=150.163.2.175&parsedibiurl.ibi={}",
            IBIS[i % IBIS.len()]
        );
        let Ok(r) = get(source, authority, &asked) else {
            return;
        };
        assert_eq!(r.status, 200, "{}", r.text());
        let text = r.text();
        let (url, key) = (pair(&text, "url"), pair(&text, "urlkey"));
        let ibi = pair(&text, "ibi")
            .trim_matches(['{', '}'])
            .replace(' ', "%20");
        let ack = format!(
            "/{SERVICE}?servicesubject=acknowledgment&clientinformation.ipaddress=150.163.2.175&contenttype=Data&ibi={ibi}&url={url}&urlkey={key}"
        );
        let Ok(r) = get(source, authority, &ack) else {
            return;
        };
        assert_eq!(
            (r.status, r.text().as_str()),
            (200, "notice {acknowledgment received}")
        );
        if answered.send(key.to_string()).is_err() {
            return;
        }
    }
}

#[test]
fn acknowledgments_answered_before_a_kill_are_each_in_the_log_once() {
    let f = Fixture::sample();
    let mut serve = Serve::start(f.root(), Stdio::null());
    let authority = serve.address.clone();
    let (tx, rx) = mpsc::channel();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|n| {
            let (tx, authority) = (tx.clone(), authority.clone());
            std::thread::spawn(move || client(n, &authority, &tx))
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
}
