//! The Archive and the resolver accept exactly the same registration values: an
//! administrator's e-mail address (rule `authority`), a registration key (rule `chave`)
//! and an Archive's address (`host[:port]`). Each value of a table, good and bad, is put
//! in a copy of the sample Archive's archive.toml and `ibi-archive include` run against a
//! real resolver: the Archive either refuses it before sending anything, or sends it; and
//! the same value is sent to the resolver's service directly, which either answers
//! `malformed <pair>` or reads it. Refused by one ⇔ refused by the other.

use common::resolver::{archive, registration, Resolver, KEY, SAMPLE_SERVICE};
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};

/// A value of one pair of the inclusion request (Table 7.2).
struct Case {
    pair: &'static str,
    value: String,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let mut add = |pair: &'static str, values: &[&str]| {
        for v in values {
            out.push(Case {
                pair,
                value: v.to_string(),
            });
        }
    };
    add(
        "archiveadmemailaddress",
        &[
            "banon@dpi.inpe.br",
            "banon@localhost",
            "x@host:8080",
            "a.b+c@[::1]",
            "banon",
            "ba non@dpi.inpe.br",
            "a@b@c.org",
            "a@999.1.1.1",
            "@dpi.inpe.br",
            "é@dpi.inpe.br",
        ],
    );
    let (longest, too_long) = ("9".repeat(64), "9".repeat(65));
    add(
        "registrationkey",
        &[
            KEY,
            "1234567890-1234567890",
            &longest,
            &too_long,
            "123456789",
            "12345678a0",
            "1234567890-",
        ],
    );
    add(
        "archiveaddress",
        &[
            "localhost:8080",
            "127.0.0.1:8080",
            "[::1]:8080",
            "archive.example.org",
            "host:99999",
            "127.1",
            "[0:0::1]:80",
            "a_b-c.example.org:1",
        ],
    );
    out
}

#[test]
fn the_archive_and_the_resolver_refuse_the_same_values() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("resolver");
    std::fs::create_dir(&dir).unwrap();
    let resolver = Resolver::start(&dir, "2s", "");
    // Registered with the key the cases use, so that a value read goes on to a right key
    // (wrong keys are answered slower and slower).
    resolver.register(SAMPLE_SERVICE, KEY);
    let mut disagreements = Vec::new();
    for (i, case) in cases().iter().enumerate() {
        // The resolver, asked directly: every other pair good.
        let mut pairs = vec![
            ("servicesubject", "inclusionRequest".to_string()),
            ("archiveaddress", "127.0.0.1:9".to_string()),
            ("archiveserviceibi", SAMPLE_SERVICE.to_string()),
            ("archiveip", "127.0.0.1".to_string()),
            ("archiveprotocol", "HTTP".to_string()),
            ("archiveplatformversion", "1".to_string()),
            ("archiveadmemailaddress", "x@example.org".to_string()),
            ("registrationkey", KEY.to_string()),
        ];
        for p in &mut pairs {
            if p.0 == case.pair {
                p.1 = case.value.clone();
            }
        }
        let query: Vec<String> = pairs
            .iter()
            .map(|(n, v)| format!("{n}={}", utf8_percent_encode(v, NON_ALPHANUMERIC)))
            .collect();
        let answer = common::http_get(&format!("{}?{}", resolver.service(), query.join("&")));
        let resolver_refused = answer.status == 400
            && answer.text().contains("malformed")
            && answer.text().contains(case.pair);

        // The Archive: the value in its archive.toml, `include` run.
        let root = archive(tmp.path(), &format!("a{i}"), SAMPLE_SERVICE, &[], &[]);
        let (address, key) = match case.pair {
            "archiveaddress" => (case.value.as_str(), KEY),
            "registrationkey" => ("127.0.0.1:9", case.value.as_str()),
            _ => ("127.0.0.1:9", KEY),
        };
        // TOML's basic strings: the values hold no quote or backslash.
        registration(&root, address, &[resolver.service()], key);
        if case.pair == "archiveadmemailaddress" {
            let path = root.join("archive.toml");
            let text = std::fs::read_to_string(&path).unwrap();
            let changed = text.replace(
                "\"archive-admin@example.org\"",
                &format!("\"{}\"", case.value),
            );
            assert_ne!(text, changed);
            std::fs::write(&path, changed).unwrap();
        }
        let before = requests_seen(&resolver);
        let (_, out, err) = common::resolver::archive_cmd("include", &root);
        let archive_sent = requests_seen(&resolver) > before;
        if archive_sent {
            assert!(
                !format!("{out}{err}").contains("malformed"),
                "{} {:?}: the Archive sent it and the resolver found it malformed:\n{out}{err}",
                case.pair,
                case.value
            );
        }
        if archive_sent == resolver_refused {
            disagreements.push(format!(
                "{} {:?}: the Archive {}, the resolver {} ({} {})\n{out}{err}",
                case.pair,
                case.value,
                if archive_sent {
                    "sent it"
                } else {
                    "refused it"
                },
                if resolver_refused {
                    "refused it"
                } else {
                    "read it"
                },
                answer.status,
                answer.text().trim(),
            ));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

/// How many inclusion requests the resolver's log shows.
fn requests_seen(resolver: &Resolver) -> usize {
    resolver
        .log()
        .lines()
        .filter(|l| l.contains("inclusionRequest"))
        .count()
}
