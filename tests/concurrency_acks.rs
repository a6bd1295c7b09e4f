//! 200 acknowledgments at once, each in its own process as a web server would run them:
//! 150 with keys this Archive issued, 30 replays of some of those, 20 forged. The access
//! log must end with exactly the 150, each whole and each key once.

use std::collections::BTreeSet;
use std::process::{Child, Stdio};

use common::{Cgi, Fixture};
use ibi_archive::acklog::Record;

use common::ONE_URL_IBIS as IBIS;

fn pair<'a>(text: &'a str, name: &str) -> &'a str {
    text.split("\r\n")
        .find_map(|l| l.strip_prefix(name).and_then(|v| v.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no {name} in {text:?}"))
}

fn spawn_ack(root: &std::path::Path, query: &str) -> Child {
    Cgi::get(root, query)
        .command()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ibi-archive")
}

#[test]
fn two_hundred_parallel_acknowledgments_count_each_issued_key_once() {
    let f = Fixture::sample();
    // 150 keys, each for the one URL of its answer, with the item's IBI the answer gave
    // (sent back in the acknowledgment's `ibi` pair, Table 8.11).
    let mut valid: Vec<(String, String)> = Vec::new();
    let mut ibi_of: std::collections::BTreeMap<String, String> = Default::default();
    for i in 0..150 {
        let q = format!(
            "servicesubject=urlRequest&clientinformation.ipaddress=150.163.2.175&parsedibiurl.ibi={}",
            IBIS[i % IBIS.len()]
        );
        let text = Cgi::get(f.root(), &q).run().text();
        let ibi = pair(&text, "ibi")
            .trim_matches(['{', '}'])
            .replace(' ', "%20");
        ibi_of.insert(pair(&text, "urlkey").to_string(), ibi);
        valid.push((
            pair(&text, "url").to_string(),
            pair(&text, "urlkey").to_string(),
        ));
    }
    let keys: BTreeSet<&str> = valid.iter().map(|(_, k)| k.as_str()).collect();
    assert_eq!(keys.len(), 150, "keys repeat");
    let ack = |url: &str, key: &str, ibi: &str| {
        format!(
            "servicesubject=acknowledgment&clientinformation.ipaddress=150.163.2.175&contenttype=Data&ibi={ibi}&url={url}&urlkey={key}"
        )
    };
    let mut requests: Vec<(&str, String)> = Vec::new();
    for (url, key) in &valid {
        requests.push(("valid", ack(url, key, &ibi_of[key])));
    }
    for (url, key) in valid.iter().step_by(5) {
        requests.push(("replay", ack(url, key, &ibi_of[key])));
    }
    for (url, key) in valid.iter().skip(2).step_by(7).take(20) {
        // One digit of the key's last group changed: not issued.
        let mut forged = key.clone().into_bytes();
        let last = forged.len() - 1;
        forged[last] = b'0' + (forged[last] - b'0' + 1) % 10;
        requests.push((
            "forged",
            ack(url, &String::from_utf8(forged).unwrap(), &ibi_of[key]),
        ));
    }
    assert_eq!(requests.len(), 200);
    // Shuffled (xorshift, fixed seed).
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    for i in (1..requests.len()).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        requests.swap(i, (seed % (i as u64 + 1)) as usize);
    }
    let children: Vec<(&str, Child)> = requests
        .iter()
        .map(|(kind, q)| (*kind, spawn_ack(f.root(), q)))
        .collect();
    let mut counted = 0;
    let mut replayed = 0;
    let mut forged = 0;
    for (kind, child) in children {
        // Each acknowledgment ends: none waits for another's lock forever.
        let out = common::output_or_hang(child, &format!("a {kind} acknowledgment"));
        assert!(out.status.success(), "{:?}", out);
        let o = common::parse_cgi(&out.stdout, String::from_utf8_lossy(&out.stderr).into());
        assert_eq!(o.status, 200);
        assert_eq!(o.text(), "notice {acknowledgment received}");
        match (kind, o.stderr.as_str()) {
            ("valid" | "replay", "") => counted += 1,
            ("valid" | "replay", e)
                if e.starts_with("ibi-archive: acknowledgment not counted: urlkey ")
                    && e.ends_with(" was already counted\n")
                    && e.lines().count() == 1 =>
            {
                replayed += 1
            }
            ("forged", e)
                if e.starts_with("ibi-archive: acknowledgment not counted: urlkey was not issued by this Archive for that url and item (")
                    && e.lines().count() == 1 =>
            {
                forged += 1
            }
            (kind, e) => panic!("{kind}: stderr {e:?}"),
        }
    }
    assert_eq!((counted, replayed, forged), (150, 30, 20));
    let log = std::fs::read_to_string(f.path("var/acknowledgments.log")).unwrap();
    assert!(log.ends_with('\n'));
    let records: Vec<Record> = log
        .lines()
        .map(|l| Record::parse_line(l).unwrap_or_else(|| panic!("torn line {l:?}")))
        .collect();
    assert_eq!(records.len(), 150);
    let logged: BTreeSet<&str> = records.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(logged, keys, "each issued key exactly once");
    for r in &records {
        let (url, _) = valid.iter().find(|(_, k)| *k == r.key).unwrap();
        assert_eq!(&r.url, url);
        assert_eq!(r.contenttype, "Data");
        assert_ne!(r.item, "-");
    }
}
