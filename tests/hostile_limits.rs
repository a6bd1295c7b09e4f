//! Hostile inputs too big or too regular to write down as case files: the limits of the
//! service (query 16 KiB, IBI 255 bytes, fractions of 240 digits, item.toml 64 KiB, an
//! edition chain of 64 hops) just below and just above each, and acknowledgments whose
//! urlkey is an issued one in another spelling. Each against the real binary as a CGI.

use std::path::Path;

use common::{log_lines, mask_urlkey, pairs_of, Cgi, CgiOutput, Fixture, LK47_ANSWER};

const IDENTITY_TAIL: &str = "ibi.archiveservice {rep sid.inpe.br/mtc-m18@80/2008/03.17.15.17}\r\nibi.platformsoftware {rep dpi.inpe.br/banon/1998/08.02.08.56}";
const LK47: &str = "servicesubject=urlRequest&parsedibiurl.ibi=LK47B6W/362SFKH";

fn get(root: &Path, query: &[u8]) -> CgiOutput {
    let mut cgi = Cgi::get(root, "");
    cgi.query = query;
    cgi.run()
}

fn assert_answer(out: &CgiOutput, status: u16, body: &str, stderr: &str) {
    let (text, _) = mask_urlkey(&out.text());
    assert_eq!(
        (out.status, text.as_str(), out.stderr.as_str()),
        (status, body, stderr)
    );
}

/// The url and urlkey of a fresh answer to the LK47 request.
fn lk47_url_and_key(f: &Fixture) -> (String, String) {
    let answer = pairs_of(&get(f.root(), LK47.as_bytes()).text());
    let value = |name: &str| answer.iter().find(|(n, _)| n == name).unwrap().1.clone();
    (value("url"), value("urlkey"))
}

fn err_line(s: &str) -> String {
    format!("ibi-archive: {s}\n")
}

#[test]
fn query_strings_at_and_past_16_kib() {
    let f = Fixture::sample();
    let head = "servicesubject=inclusionConfirmationRequest&x=";
    let at_limit = format!("{head}{}", "a".repeat(16384 - head.len()));
    assert_eq!(at_limit.len(), 16384);
    assert_answer(
        &get(f.root(), at_limit.as_bytes()),
        200,
        "confirmation yes",
        "",
    );
    let past = format!("{at_limit}a");
    assert_answer(
        &get(f.root(), past.as_bytes()),
        400,
        "error {malformed query string}",
        &err_line("query string of 16385 bytes is longer than 16384"),
    );
}

#[test]
fn deeply_repeated_parameters() {
    let f = Fixture::sample();
    // 10,000 × servicesubject= is 159,999 bytes: more than an environment variable may
    // hold (128 KiB), so that one goes to the library's handler directly.
    let ten_thousand = vec!["servicesubject="; 10_000].join("&");
    let req = ibi_archive::cgi::CgiRequest::get(f.root().to_path_buf(), ten_thousand.as_bytes());
    let a = ibi_archive::cgi::handle(&req, 1_795_341_600);
    assert_eq!(a.status, 400);
    assert_eq!(a.body, b"error {malformed query string}");
    assert_eq!(a.log, ["query string of 159999 bytes is longer than 16384"]);
    // 8,000 of them (127,999 bytes) through a process: refused as long.
    let eight_thousand = vec!["servicesubject="; 8_000].join("&");
    assert_answer(
        &get(f.root(), eight_thousand.as_bytes()),
        400,
        "error {malformed query string}",
        &err_line("query string of 127999 bytes is longer than 16384"),
    );
    // 1,000 fit: the first, empty, one wins.
    let thousand = vec!["servicesubject="; 1_000].join("&");
    assert_answer(
        &get(f.root(), thousand.as_bytes()),
        400,
        "error {unknown servicesubject}",
        &err_line("unknown servicesubject \"\""),
    );
    // 1,000 IBIs after a real one: the first wins.
    let q = format!("{LK47}{}", "&parsedibiurl.ibi=x".repeat(800));
    assert!(q.len() < 16384);
    assert_answer(&get(f.root(), q.as_bytes()), 200, LK47_ANSWER, "");
    // 5,000 empty parts, then the subject.
    let q = format!(
        "{}servicesubject=inclusionConfirmationRequest",
        "&&&".repeat(5_000)
    );
    assert_answer(&get(f.root(), q.as_bytes()), 200, "confirmation yes", "");
}

#[test]
fn huge_values_are_cut_short_in_the_log() {
    let f = Fixture::sample();
    let big = "a".repeat(16_000);
    let q = format!("servicesubject=urlRequest&parsedibiurl.ibi={big}");
    assert_answer(
        &get(f.root(), q.as_bytes()),
        200,
        "",
        &err_line(&format!(
            "urlRequest for a malformed IBI: invalid IBI \"{}\"... (16000 bytes): it is longer than 255 bytes",
            &big[..64]
        )),
    );
    let q = format!("servicesubject=acknowledgment&url=http://{big}&urlkey=1-2");
    assert_answer(
        &get(f.root(), q.as_bytes()),
        200,
        "notice {acknowledgment received}",
        &err_line(&format!(
            "acknowledgment not counted: urlkey does not follow rule chave (http://{})",
            &big[..193]
        )),
    );
    // A verb list of 1,000 verbs names no relation; the log line is cut to 300 bytes.
    let verbs = vec!["GetLastEdition"; 1_000];
    let q = format!("{LK47}&parsedibiurl.verblist={}", verbs.join("+"));
    let full = format!(
        "urlRequest with a bad verb list: verb list \"{}\" names no relation",
        verbs.join(" ")
    );
    assert_answer(
        &get(f.root(), q.as_bytes()),
        200,
        "",
        &err_line(&format!("{}...", &full[..300])),
    );
    let q = format!("{LK47}&parsedibiurl.verblist={}", "X".repeat(15_000));
    let full = format!(
        "urlRequest with a bad verb list: unknown verb \"{}\"",
        "X".repeat(15_000)
    );
    assert_answer(
        &get(f.root(), q.as_bytes()),
        200,
        "",
        &err_line(&format!("{}...", &full[..300])),
    );
    // A huge filepath, and a huge client address: quietly nothing.
    let q = format!("{LK47}&parsedibiurl.filepath={}", "a/".repeat(7_000));
    assert_answer(
        &get(f.root(), q.as_bytes()),
        200,
        &format!("archiveaddress localhost:8080\r\nibi {{rep iconet.com.br/banon/2009/09.09.22.01 ibip LK47B6W/362SFKH}}\r\n{IDENTITY_TAIL}"),
        "",
    );
    let q = format!("{LK47}&clientinformation.ipaddress={}", "9".repeat(15_000));
    assert_answer(&get(f.root(), q.as_bytes()), 200, LK47_ANSWER, "");
}

#[test]
fn fractions_at_the_grammar_edge() {
    use ::ibi::{base27, IbiDate};
    let f = Fixture::sample();
    // An IBIp with a fraction of 240 digits is an IBI (not here): nothing logged.
    let digits = "1".repeat(240);
    let date = IbiDate::new(1_234_806_360, &digits).unwrap();
    let ibip = format!("8JMKD3MGP8W/{}", date.ibip_suffix().unwrap());
    assert!(ibip.len() <= 255, "{}", ibip.len());
    let q = format!("servicesubject=urlRequest&parsedibiurl.ibi={ibip}");
    assert_answer(&get(f.root(), q.as_bytes()), 200, "", "");
    // 241 digits is one too many.
    let coded = base27::from_decimal(&"1".repeat(241)).unwrap();
    let ibip = format!("8JMKD3MGP8W/34PGRBSW{coded}");
    let q = format!("servicesubject=urlRequest&parsedibiurl.ibi={ibip}");
    assert_answer(
        &get(f.root(), q.as_bytes()),
        200,
        "",
        &err_line(&format!(
            "urlRequest for a malformed IBI: invalid IBIp \"{}\"... ({} bytes): coded fraction \"{coded}\" is too long",
            &ibip[..64],
            ibip.len()
        )),
    );
    // A rep holds at most 229 fraction digits within 255 bytes.
    let rep = format!("a.b/c/2009/07.21.13.23.00.{}", "7".repeat(229));
    assert_eq!(rep.len(), 255);
    let q = format!("servicesubject=urlRequest&parsedibiurl.ibi={rep}");
    assert_answer(&get(f.root(), q.as_bytes()), 200, "", "");
    let rep = format!("{rep}7");
    let q = format!("servicesubject=urlRequest&parsedibiurl.ibi={rep}");
    assert_answer(
        &get(f.root(), q.as_bytes()),
        200,
        "",
        &err_line(&format!(
            "urlRequest for a malformed IBI: invalid IBI \"{}\"... (256 bytes): it is longer than 255 bytes",
            &rep[..64]
        )),
    );
}

/// An item of this fixture: state Original, a fixed timestamp, doc/a.txt.
fn add_item(f: &Fixture, rep: &str, extra: &str) {
    f.write(
        &format!("col/{rep}/item.toml"),
        format!(
            "state = \"Original\"\ntimestamp = 2020-01-01T00:00:00Z\ntarget = \"a.txt\"\n{extra}"
        )
        .as_bytes(),
    );
    f.write(&format!("col/{rep}/doc/a.txt"), b"a\n");
}

#[test]
fn items_at_the_grammar_edges_are_found() {
    let f = Fixture::sample();
    // The last second of year 9999.
    let rep = "example.org/edge/9999/12.31.23.59.59";
    add_item(&f, rep, "");
    let q = format!("servicesubject=urlRequest&parsedibiurl.ibi={rep}");
    assert_answer(
        &get(f.root(), q.as_bytes()),
        200,
        &format!(
            "archiveaddress localhost:8080\r\ncontenttype Data\r\nibi {{rep {rep}}}\r\n{IDENTITY_TAIL}\r\n\
             state Original\r\ntimestamp 2020-01-01T00:00:00Z\r\nurl http://localhost:8080/col/{rep}/doc/a.txt\r\nurlkey <urlkey>"
        ),
        "",
    );
    // An item with an IPv6 IBIp (generation standard, Table 7.2), asked in lower case.
    let rep = "example.org/v6/2009/02.16.17.46";
    add_item(&f, rep, "ibip = \"7URMDHLL9SSN2D89MX/34PGRBS\"\n");
    let q = "servicesubject=urlRequest&parsedibiurl.ibi=7urmdhll9ssn2d89mx/34pgrbs";
    assert_answer(
        &get(f.root(), q.as_bytes()),
        200,
        &format!(
            "archiveaddress localhost:8080\r\ncontenttype Data\r\nibi {{rep {rep} ibip 7URMDHLL9SSN2D89MX/34PGRBS}}\r\n{IDENTITY_TAIL}\r\n\
             state Original\r\ntimestamp 2020-01-01T00:00:00Z\r\nurl http://localhost:8080/col/{rep}/doc/a.txt\r\nurlkey <urlkey>"
        ),
        "",
    );
}

/// The rep of edition `i` of a chain.
fn edition(i: usize) -> String {
    format!("example.org/chain/2020/01.01.{:02}.{:02}", i / 60, i % 60)
}

/// A chain of `n` local editions, each the next edition of the one before.
fn chain(n: usize) -> Fixture {
    let f = Fixture::sample();
    for i in 0..n {
        let next = if i + 1 < n {
            format!("nextedition = \"{}\"\n", edition(i + 1))
        } else {
            String::new()
        };
        add_item(&f, &edition(i), &next);
    }
    f
}

#[test]
fn edition_chains_up_to_64_hops_are_followed() {
    let q = format!(
        "servicesubject=urlRequest&parsedibiurl.ibi={}&parsedibiurl.verblist=GetLastEdition",
        edition(0)
    );
    // 64 hops: the last edition is the 65th item.
    let f = chain(65);
    assert_answer(
        &get(f.root(), q.as_bytes()),
        200,
        &format!(
            "archiveaddress localhost:8080\r\ncontenttype.lastedition Data\r\nibi {{rep {e0}}}\r\n\
             ibi.archiveservice {{rep sid.inpe.br/mtc-m18@80/2008/03.17.15.17}}\r\n\
             ibi.lastedition {{rep {last}}}\r\nibi.nextedition {{rep {e1}}}\r\n\
             ibi.platformsoftware {{rep dpi.inpe.br/banon/1998/08.02.08.56}}\r\n\
             state.lastedition Original\r\ntimestamp.lastedition 2020-01-01T00:00:00Z\r\n\
             url.lastedition http://localhost:8080/col/{last}/doc/a.txt\r\nurlkey <urlkey>",
            e0 = edition(0),
            e1 = edition(1),
            last = edition(64)
        ),
        "",
    );
    // 65 hops, and 99: the last edition is unknown; one log line.
    for n in [66, 100] {
        let f = chain(n);
        let out = get(f.root(), q.as_bytes());
        assert_answer(
            &out,
            200,
            &format!(
                "archiveaddress localhost:8080\r\nibi {{rep {}}}\r\n\
                 ibi.archiveservice {{rep sid.inpe.br/mtc-m18@80/2008/03.17.15.17}}\r\n\
                 ibi.nextedition {{rep {}}}\r\n\
                 ibi.platformsoftware {{rep dpi.inpe.br/banon/1998/08.02.08.56}}",
                edition(0),
                edition(1)
            ),
            &err_line(&format!(
                "{}: chain of next editions loops or exceeds 64; last edition unknown",
                f.path(&format!("col/{}/item.toml", edition(0))).display()
            )),
        );
    }
}

#[test]
fn item_toml_size_limit() {
    let f = Fixture::sample();
    let rel = "col/iconet.com.br/banon/2009/09.09.22.01/item.toml";
    let original = std::fs::read_to_string(f.path(rel)).unwrap();
    let padded = |len: usize| {
        let mut t = format!("{original}#");
        t.push_str(&"x".repeat(len - t.len() - 1));
        t.push('\n');
        assert_eq!(t.len(), len);
        t
    };
    f.write(rel, padded(65_536).as_bytes());
    assert_answer(&get(f.root(), LK47.as_bytes()), 200, LK47_ANSWER, "");
    let too_big = err_line(&format!(
        "{}: larger than 65536 bytes; item treated as absent",
        f.path(rel).display()
    ));
    f.write(rel, padded(65_537).as_bytes());
    assert_answer(&get(f.root(), LK47.as_bytes()), 200, "", &too_big);
    f.write(rel, padded(1 << 20).as_bytes());
    assert_answer(&get(f.root(), LK47.as_bytes()), 200, "", &too_big);
}

/// A key issued by this Archive counts once, whatever spelling of it comes back: padded
/// with more digit groups, its groups reordered, its time with a leading zero.
#[test]
fn an_issued_key_in_another_spelling_is_the_same_key() {
    let f = Fixture::sample();
    // Several URLs in one answer: the key has one group of 10 digits per URL.
    let q = "servicesubject=urlRequest&clientinformation.ipaddress=150.163.2.175&parsedibiurl.ibi=8JMKD3MGP8W/35MME4E&parsedibiurl.verblist=GetTranslation";
    let answer = pairs_of(&get(f.root(), q.as_bytes()).text());
    let key = answer
        .iter()
        .find(|(n, _)| n == "urlkey")
        .unwrap()
        .1
        .clone();
    let mut urls: Vec<&String> = answer
        .iter()
        .filter(|(n, _)| n.starts_with("url."))
        .map(|(_, v)| v)
        .collect();
    urls.sort();
    urls.dedup();
    assert_eq!(urls.len(), 2, "{answer:?}");
    assert_eq!(key.len(), 11 + 12 + 20, "{key}");
    let url = urls[0];
    let ack = |k: &str| {
        get(
            f.root(),
            format!("servicesubject=acknowledgment&url={url}&urlkey={k}").as_bytes(),
        )
    };
    let out = ack(&key);
    assert_answer(&out, 200, "notice {acknowledgment received}", "");
    let lines = log_lines(&f);
    assert_eq!(lines.len(), 1);
    let counted = lines[0].split('\t').nth(1).unwrap().to_string();
    // Recorded in the spelling for this url alone: time, nonce, this url's 10 digits.
    assert_eq!(counted.len(), 11 + 12 + 10);
    assert!(key.starts_with(&counted[..23]), "{key} {counted}");
    assert!(key[23..].contains(&counted[23..]), "{key} {counted}");
    let (time, rest) = key.split_once('-').unwrap();
    let (nonce, macs) = rest.split_at(12);
    let (m1, m2) = macs.split_at(10);
    for variant in [
        format!("{key}0000000000"),
        format!("{key}{m1}"),
        format!("{time}-{nonce}{m2}{m1}"),
        format!("0{key}"),
        format!("{time}-{nonce}{}", &counted[23..]),
    ] {
        let out = ack(&variant);
        assert_answer(
            &out,
            200,
            "notice {acknowledgment received}",
            // The log names the key in its one spelling: however long the variant,
            // the line stays short.
            &err_line(&format!(
                "acknowledgment not counted: urlkey {counted} was already counted"
            )),
        );
    }
    assert_eq!(log_lines(&f).len(), 1);
    // The other URL of the same answer was not acknowledged yet: it counts once.
    let other = urls[1];
    let out = get(
        f.root(),
        format!("servicesubject=acknowledgment&url={other}&urlkey={key}").as_bytes(),
    );
    assert_eq!(out.stderr, "");
    assert_eq!(log_lines(&f).len(), 2);
}

/// A counted acknowledgment whose other fields are hostile: tabs and line breaks in
/// `contenttype`, a junk `ibi`. The access log keeps one well-formed line, the item taken
/// from the URL the Archive issued, and a contenttype that is neither `Data` nor
/// `Metadata` written `-`.
#[test]
fn hostile_fields_of_a_counted_acknowledgment_stay_on_one_line() {
    let f = Fixture::sample();
    let (url, key) = lk47_url_and_key(&f);
    let q = format!(
        "servicesubject=acknowledgment&contenttype=Da%09ta%0d%0aX&ibi=rep%20..%2f..%0a&url={url}&urlkey={key}"
    );
    assert_answer(
        &get(f.root(), q.as_bytes()),
        200,
        "notice {acknowledgment received}",
        "",
    );
    let lines = log_lines(&f);
    assert_eq!(lines.len(), 1);
    let r = ibi_archive::acklog::Record::parse_line(&lines[0]).unwrap();
    assert_eq!(
        (
            r.key.as_str(),
            r.item.as_str(),
            r.contenttype.as_str(),
            r.url.as_str()
        ),
        (
            key.as_str(),
            "iconet.com.br/banon/2009/09.09.22.01",
            "-",
            url.as_str()
        )
    );
}

/// Sets the modification time of `path` (a file or a directory).
fn set_mtime(path: &Path, secs: u64) {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
    std::fs::File::open(path).unwrap().set_modified(t).unwrap();
}

/// An item without `timestamp` (its default is worked out from its directory) whose
/// target is `target` in doc/.
fn add_untimed_item(f: &Fixture, rep: &str, target: &str) {
    f.write(
        &format!("col/{rep}/item.toml"),
        format!("state = \"Original\"\ntarget = \"{target}\"\n").as_bytes(),
    );
    f.write(&format!("col/{rep}/doc/{target}"), b"a\n");
}

/// A bare GetTranslation for `y`, answered in process: the answer and what it cost.
fn translations_in_process(
    f: &Fixture,
    y: &str,
) -> (ibi_archive::http::Answer, ibi_archive::archive::Work) {
    use ::ibi::query::Query;
    use ibi_archive::archive::Archive;
    use ibi_archive::config::Config;
    let archive = Archive::new(f.root(), Config::load(f.root()).unwrap());
    let q = format!(
        "servicesubject=urlRequest&parsedibiurl.ibi={y}&parsedibiurl.verblist=GetTranslation"
    );
    let answer = archive.respond(&Query::parse(q.as_bytes()).unwrap(), 1_795_341_600);
    (answer, archive.work())
}

const Y2001: u64 = 978_307_200;
const Y2020: u64 = 1_577_836_800;

/// An item without `timestamp` gets its newest modification, looked for over at most
/// 4,096 entries; with more, item.toml's own modification time, and one log line saying
/// to record a timestamp (a tree of 300,000 files cost a second per request).
#[test]
fn a_default_timestamp_looks_at_a_bounded_number_of_entries() {
    let f = Fixture::sample();
    let rep = "example.org/big/2020/01.01.00.00";
    add_untimed_item(&f, rep, "a.txt");
    let dir = f.path(&format!("col/{rep}"));
    let settle = || {
        for p in [dir.join("item.toml"), dir.join("doc"), dir.clone()] {
            set_mtime(&p, Y2001);
        }
    };
    set_mtime(&dir.join("doc/a.txt"), Y2020);
    settle();
    let q = format!("servicesubject=urlRequest&parsedibiurl.ibi={rep}");
    let answer = |stderr: &str, timestamp: &str| {
        assert_answer(
            &get(f.root(), q.as_bytes()),
            200,
            &format!(
                "archiveaddress localhost:8080\r\ncontenttype Data\r\nibi {{rep {rep}}}\r\n{IDENTITY_TAIL}\r\n\
                 state Original\r\ntimestamp {timestamp}\r\nurl http://localhost:8080/col/{rep}/doc/a.txt\r\nurlkey <urlkey>"
            ),
            stderr,
        )
    };
    answer("", "2020-01-01T00:00:00Z");
    for i in 0..5000 {
        let p = dir.join(format!("doc/f{i}.txt"));
        std::fs::write(&p, b"x").unwrap();
        set_mtime(&p, Y2001);
    }
    settle();
    answer(
        &err_line(&format!(
            "{}/item.toml: no timestamp, and more than 4096 entries in the item to look at for this answer; its item.toml's modification time is given (record a timestamp)",
            dir.display()
        )),
        "2001-01-01T00:00:00Z",
    );
}

/// 676 two-letter language codes, `aa` to `zz`.
fn languages() -> Vec<String> {
    let letters = b'a'..=b'z';
    letters
        .clone()
        .flat_map(|a| {
            letters
                .clone()
                .map(move |b| String::from_utf8(vec![a, b]).unwrap())
        })
        .collect()
}

/// Fifty translations pointing at one item without a timestamp: that item is looked up
/// once and its directory walked once for the whole answer (each walked it again:
/// 47 s for one request over 300,000 files).
#[test]
fn one_answer_works_out_an_items_default_timestamp_once() {
    let f = Fixture::sample();
    let x = "example.org/x/2020/01.01.00.00";
    add_untimed_item(&f, x, "a.txt");
    let y = "example.org/y/2020/01.01.00.01";
    let mut toml = "state = \"Original\"\ntimestamp = 2020-01-01T00:00:00Z\ntarget = \"a.txt\"\nlanguage = \"zz\"\n[translations]\n".to_string();
    for lang in &languages()[..50] {
        toml.push_str(&format!("{lang} = \"{x}\"\n"));
    }
    f.write(&format!("col/{y}/item.toml"), toml.as_bytes());
    f.write(&format!("col/{y}/doc/a.txt"), b"a\n");
    let (answer, work) = translations_in_process(&f, y);
    let text = String::from_utf8(answer.body).unwrap();
    let stamps: Vec<&str> = text
        .split("\r\n")
        .filter(|l| l.starts_with("timestamp.translation("))
        .map(|l| l.split_once(' ').unwrap().1)
        .collect();
    assert_eq!(stamps.len(), 51, "{text}");
    assert_eq!(
        (work.items_looked_up, work.timestamps_walked),
        (2, 1),
        "{work:?}"
    );
}

/// An item naming 300 translations, each another item here: at most 128 items are looked
/// up for one answer (each holds its directory's descriptor; a chain of 64 editions
/// needs 65), and the log says so once.
#[test]
fn an_answer_looks_up_at_most_128_items() {
    let f = Fixture::sample();
    let y = "example.org/y/2020/01.01.00.01";
    let mut toml = "state = \"Original\"\ntimestamp = 2020-01-01T00:00:00Z\ntarget = \"a.txt\"\n[translations]\n".to_string();
    for (i, lang) in languages()[..300].iter().enumerate() {
        let rep = format!("example.org/t/2020/01.01.{:02}.{:02}", i / 60, i % 60);
        add_item(&f, &rep, "");
        toml.push_str(&format!("{lang} = \"{rep}\"\n"));
    }
    f.write(&format!("col/{y}/item.toml"), toml.as_bytes());
    f.write(&format!("col/{y}/doc/a.txt"), b"a\n");
    let q = format!(
        "servicesubject=urlRequest&parsedibiurl.ibi={y}&parsedibiurl.verblist=GetTranslation"
    );
    let out = get(f.root(), q.as_bytes());
    let urls = out
        .text()
        .split("\r\n")
        .filter(|l| l.starts_with("url.translation("))
        .count();
    assert_eq!(urls, 127, "{}", out.text());
    assert_eq!(
        out.stderr,
        err_line("more than 128 items to look up for one answer; the others are treated as absent")
    );
}

/// Five translations without a timestamp, 4,000 files each: the walks of one answer
/// look at 16,384 entries in all, and the item past that gets its item.toml's time and
/// one log line.
#[test]
fn the_timestamp_walks_of_one_answer_are_bounded_together() {
    let f = Fixture::sample();
    let y = "example.org/y/2020/01.01.00.01";
    let mut toml = "state = \"Original\"\ntimestamp = 2020-01-01T00:00:00Z\ntarget = \"a.txt\"\n[translations]\n".to_string();
    for (i, lang) in languages()[..5].iter().enumerate() {
        let rep = format!("example.org/t/2020/01.01.00.{i:02}");
        add_untimed_item(&f, &rep, "f0.txt");
        for k in 0..4000 {
            f.write(&format!("col/{rep}/doc/f{k}.txt"), b"x");
        }
        toml.push_str(&format!("{lang} = \"{rep}\"\n"));
    }
    f.write(&format!("col/{y}/item.toml"), toml.as_bytes());
    f.write(&format!("col/{y}/doc/a.txt"), b"a\n");
    let (answer, work) = translations_in_process(&f, y);
    // Four walks of 4,002 entries (item.toml, doc/ and its 4,000 files), then 376 left.
    assert_eq!(
        (work.timestamps_walked, work.entries_walked),
        (5, 16_384),
        "{work:?}"
    );
    assert_eq!(
        answer.log,
        [format!(
            "{}/col/example.org/t/2020/01.01.00.04/item.toml: no timestamp, and more than 376 entries in the item to look at for this answer; its item.toml's modification time is given (record a timestamp)",
            f.root().display()
        )]
    );
}

/// The landing page of an item of 1,201 files shows 100 and says how many entries it left
/// out (read, never looked at).
#[test]
fn the_file_list_page_is_capped() {
    let f = Fixture::sample();
    let rep = "example.org/many/2020/01.01.00.00";
    add_item(&f, rep, "");
    for i in 0..1200 {
        f.write(&format!("col/{rep}/doc/f{i:04}.txt"), b"x");
    }
    let mut cgi = Cgi::get(f.root(), "");
    let path = format!("/filelist/{rep}");
    cgi.path_info = &path;
    let out = cgi.run();
    assert_eq!(out.status, 200);
    let page = out.text();
    assert_eq!(page.matches("<tr><th scope=\"row\">").count(), 100);
    assert!(page.contains("<tbody>\n<tr><th scope=\"row\"><a href=\"http://localhost:8080/col/example.org/many/2020/01.01.00.00/doc/a.txt\" type=\"text/plain\">a.txt</a></th><td>2 bytes</td><td>text/plain</td></tr>\n<tr><th scope=\"row\"><a href=\"http://localhost:8080/col/example.org/many/2020/01.01.00.00/doc/f0000.txt\""));
    assert!(
        page.contains("doc/f0098.txt\" type=\"text/plain\">f0098.txt</a></th><td>1 byte</td><td>text/plain</td></tr>\n</tbody>\n</table>\n<p>… and 1101 more entries not listed here.</p>\n"),
        "{page}"
    );
}

/// Runs the CGI for `query` on the Archive at `root` under a shell that then prints what
/// the run read and wrote, in bytes (rchar and wchar of the shell's /proc/PID/io, which
/// count a child once it is waited for). The run must succeed, and end (a hang guard).
fn read_and_written(root: &Path, query: &str) -> (u64, u64) {
    let cgi = Cgi::get(root, query).command();
    let mut sh = std::process::Command::new("/bin/sh");
    sh.arg("-c")
        .arg(
            r#""$0" >/dev/null || exit
            while read -r name value; do
                case "$name" in rchar: | wchar:) printf '%s ' "$value" ;; esac
            done </proc/$$/io"#,
        )
        .arg(cgi.get_program())
        .env_clear();
    for (name, value) in cgi.get_envs() {
        if let Some(value) = value {
            sh.env(name, value);
        }
    }
    let child = sh
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = common::output_or_hang(child, "the acknowledgment");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}: {said} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let counts: Vec<u64> = said
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    assert_eq!(counts.len(), 2, "{said}");
    (counts[0], counts[1])
}

/// Whether a key was counted is known without reading the access log: an acknowledgment
/// reads and writes as many bytes on a log of 256 MiB with no line break in it (zeros,
/// as a crash can leave) as on an empty one, give or take a block.
#[test]
fn an_acknowledgment_does_not_read_the_log() {
    let ack =
        |url: &str, key: &str| format!("servicesubject=acknowledgment&url={url}&urlkey={key}");
    let empty = Fixture::sample();
    let (url, key) = lk47_url_and_key(&empty);
    let (read_empty, written_empty) = read_and_written(empty.root(), &ack(&url, &key));
    let f = Fixture::sample();
    let (url, key) = lk47_url_and_key(&f);
    let log = f.path("var/acknowledgments.log");
    std::fs::File::create(&log)
        .unwrap()
        .set_len(256 << 20)
        .unwrap();
    let (read, written) = read_and_written(f.root(), &ack(&url, &key));
    eprintln!(
        "acknowledgment on an empty log: {read_empty} bytes read, {written_empty} written; \
         on 256 MiB of zeros: {read} read, {written} written"
    );
    assert!(
        read <= read_empty + 4096 && written <= written_empty + 4096,
        "on 256 MiB of zeros: {read} bytes read, {written} written; \
         on an empty log: {read_empty} and {written_empty}"
    );
    // The torn stretch was closed and the access counted after it.
    let text = std::fs::read(&log).unwrap();
    assert_eq!(text[256 << 20], b'\n');
    let last = std::str::from_utf8(&text[(256 << 20) + 1..]).unwrap();
    let r = ibi_archive::acklog::Record::parse_line(last.trim_end()).unwrap();
    assert_eq!(r.item, "iconet.com.br/banon/2009/09.09.22.01");
}

/// An urlkey of 15 KB (a valid one padded with digit groups) is not echoed whole: the
/// log line stays short.
#[test]
fn a_long_urlkey_is_not_echoed_whole() {
    let f = Fixture::sample();
    let (url, key) = lk47_url_and_key(&f);
    let padded = format!("{key}{}", "0".repeat(15_000));
    let q = format!("servicesubject=acknowledgment&url={url}&urlkey={padded}");
    let out = get(f.root(), q.as_bytes());
    assert_answer(
        &out,
        200,
        "notice {acknowledgment received}",
        &err_line(&format!(
            "acknowledgment not counted: urlkey does not follow rule chave ({url})"
        )),
    );
}
