//! The persistent-URL parser against every persistent URL printed in §8 of the resolution
//! standard, every composition of Table 8.2, and a table of rejected ones with their
//! messages (tests/data/persistent/).

use ::ibi::persistent::PersistentUrl;

fn table(name: &str) -> Vec<Vec<String>> {
    let path = format!(
        "{}/tests/data/persistent/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split(" | ").map(|f| f.trim().to_string()).collect())
        .collect()
}

fn split(url: &str) -> (&str, Option<&str>) {
    match url.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (url, None),
    }
}

fn dash(s: &str) -> &str {
    if s == "-" {
        ""
    } else {
        s
    }
}

#[test]
fn every_accepted_persistent_url_parses_to_its_pieces() {
    let cases = table("accepted.txt");
    assert!(cases.len() >= 50, "{} cases", cases.len());
    for c in &cases {
        assert_eq!(c.len(), 6, "{c:?}");
        let (path, query) = split(&c[0]);
        let p = match PersistentUrl::parse(path, query) {
            Ok(p) => p,
            Err(e) => panic!("{}: {e}", c[0]),
        };
        assert_eq!(p.ibi().as_str(), c[1], "{}", c[0]);
        assert_eq!(p.verblist_text(), dash(&c[2]), "{}", c[0]);
        let filepath = p.filepath().map(|f| {
            // Shown with bytes beyond ASCII as %xx, as the table writes them.
            f.iter()
                .map(|&b| {
                    if b.is_ascii() {
                        (b as char).to_string()
                    } else {
                        format!("%{b:02x}")
                    }
                })
                .collect::<String>()
        });
        assert_eq!(filepath.as_deref().unwrap_or(""), dash(&c[3]), "{}", c[0]);
        assert_eq!(p.requires_original(), c[4] == "yes", "{}", c[0]);
        assert_eq!(p.relation().to_string(), dash(&c[5]), "{}", c[0]);
        assert_eq!(
            p.wants_file_list(),
            c[2].contains("GetFileList"),
            "{}",
            c[0]
        );
    }
}

#[test]
fn display_parses_back_to_the_same_value() {
    for c in table("accepted.txt") {
        let (path, query) = split(&c[0]);
        let p = PersistentUrl::parse(path, query).unwrap();
        let shown = p.to_string();
        let (path2, query2) = split(&shown);
        let again = PersistentUrl::parse(path2, query2)
            .unwrap_or_else(|e| panic!("{} displayed as {shown}: {e}", c[0]));
        assert_eq!(again, p, "{} displayed as {shown}", c[0]);
    }
}

#[test]
fn rejected_paths_answer_with_what_is_wrong() {
    let cases = table("rejected.txt");
    assert!(cases.len() >= 25, "{} cases", cases.len());
    let mut wrong = Vec::new();
    for c in &cases {
        let (raw, message) = match c.len() {
            2 => (c[0].as_str(), c[1].as_str()),
            // "| message": an empty path.
            _ => ("", c[0].trim_start_matches("| ")),
        };
        let (path, query) = split(raw);
        match PersistentUrl::parse(path, query) {
            Ok(p) => wrong.push(format!("{raw:?} was accepted as {p:?}")),
            Err(e) if e.to_string() != message => {
                wrong.push(format!("{raw:?}\n  said:     {e}\n  expected: {message}"))
            }
            Err(_) => {}
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_long_path_is_refused_before_it_is_read() {
    let path = format!("/LK47B6W/362SFKH/{}", "a".repeat(5000));
    let e = PersistentUrl::parse(&path, None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the path is 5017 bytes long; at most 4096 are read"
    );
}

#[test]
fn the_next_edition_keeps_the_modifier_and_the_query() {
    let p = PersistentUrl::parse(
        "/8JMKD3MGP8W/35MMLL8!:(oai_dc)",
        Some("ibiurl.verblist=GetFileList"),
    )
    .unwrap();
    let next = p.with_ibi(::ibi::Ibi::parse("sid.inpe.br/mtc-m18/2012/07.12.18.08").unwrap());
    assert_eq!(
        next.to_string(),
        "/sid.inpe.br/mtc-m18/2012/07.12.18.08!:(oai_dc)?ibiurl.verblist=GetFileList"
    );
    assert_eq!(
        next.verblist_text(),
        "GetLastEdition GetMetadata(oai_dc) GetFileList"
    );
    let p = PersistentUrl::parse("/8JMKD3MGP8W/35MME4E!+:", None).unwrap();
    let own = p.without_translation_at(1);
    assert_eq!(own.relation().to_string(), ".lastedition.metadata");
    assert_eq!(own.verblist_text(), "GetLastEdition GetMetadata");
}
