//! FILTRARLISTADEURL is computed directly from the verb list (only the relations asked are
//! followed). This checks, for every item of the sample Archive and every verb list of up
//! to three verbs, that the result equals the full list of MONTARLISTADEURL filtered by
//! the rule of §9.2 (Example 9.3): identity pairs, the pairs of the relation asked (every
//! language variant for a bare GetTranslation), ibi.nextedition when the last edition is
//! asked, and urlkey when a url remains.

use ::ibi::pairs;
use ::ibi::relation::{Relation, Step, VerbList};
use ::ibi::Ibi;
use ibi_archive::archive::Archive;
use ibi_archive::config::Config;
use ibi_archive::service::UrlRequest;

const PREFIXES: [&str; 5] = ["contenttype", "ibi", "state", "timestamp", "url"];
const IDENTITY: [&str; 4] = [
    "archiveaddress",
    "ibi",
    "ibi.archiveservice",
    "ibi.platformsoftware",
];

fn verbs() -> Vec<String> {
    let one = [
        "GetLastEdition",
        "GetTranslation",
        "GetTranslation(pt)",
        "GetTranslation(en)",
        "GetTranslation(pt-BR)",
        "GetTranslation(fr)",
        "GetMetadata",
        "GetMetadata(oai_dc)",
    ];
    let mut out = vec![String::new()];
    for a in one {
        out.push(a.to_string());
        for b in one {
            out.push(format!("{a} {b}"));
            for c in one {
                out.push(format!("{a} {b} {c}"));
            }
        }
    }
    out
}

/// The relation named by a pair name, if it has one of the relation prefixes.
fn relation_of(name: &str) -> Option<Relation> {
    PREFIXES.iter().find_map(|p| {
        let rest = name.strip_prefix(p)?;
        (rest.is_empty() || rest.starts_with('.'))
            .then(|| Relation::parse(rest).ok())
            .flatten()
    })
}

fn filter(
    full: &[(String, Vec<String>)],
    asked: &Relation,
    deleted: bool,
) -> Vec<(String, Vec<String>)> {
    if deleted {
        return full.to_vec();
    }
    let variant = |r: &Relation| -> bool {
        if r == asked {
            return true;
        }
        // For a bare translation at i: r differs from asked only by the language at i.
        match asked.bare_translation_at() {
            Some(i) => {
                r.steps().len() == asked.steps().len()
                    && matches!(r.steps()[i], Step::Translation(_))
                    && asked.with_step(i, r.steps()[i].clone()) == *r
            }
            None => false,
        }
    };
    let mut out: Vec<(String, Vec<String>)> = full
        .iter()
        .filter(|(n, _)| {
            IDENTITY.contains(&n.as_str())
                || (n == "ibi.nextedition" && asked.involves_last_edition())
                || relation_of(n).is_some_and(|r| variant(&r))
        })
        .cloned()
        .collect();
    if out.iter().any(|(n, _)| n.starts_with("url")) {
        out.push(("urlkey".into(), vec!["<key>".into()]));
    }
    out
}

/// The pairs of a pair list's text, `(name, words)` in the order written.
fn parse(text: &str) -> Vec<(String, Vec<String>)> {
    pairs::parse(text)
        .unwrap()
        .iter()
        .map(|(n, v)| {
            let words = v.as_strs().unwrap();
            (n.to_string(), words.into_iter().map(String::from).collect())
        })
        .collect()
}

fn without_key(list: Vec<(String, Vec<String>)>) -> Vec<(String, Vec<String>)> {
    list.into_iter()
        .map(|(n, v)| {
            if n == "urlkey" {
                (n, vec!["<key>".into()])
            } else {
                (n, v)
            }
        })
        .collect()
}

#[test]
fn filtered_answers_equal_the_full_list_filtered() {
    let f = common::Fixture::sample();
    // An explicit subset: every relation over the languages the verb lists use.
    let langs: Vec<_> = ["en", "pt", "pt-BR", "fr"]
        .iter()
        .map(|l| ::ibi::relation::Lang::parse(l).unwrap())
        .collect();
    let relations: Vec<String> = Relation::all_over(&langs)
        .iter()
        .map(|r| format!("\"{r}\""))
        .collect();
    let toml = std::fs::read_to_string(f.path("archive.toml")).unwrap();
    let toml = toml.replacen(
        "[registration]",
        &format!("relations = [{}]\n\n[registration]", relations.join(", ")),
        1,
    );
    f.write("archive.toml", toml.as_bytes());
    let config = Config::load(f.root()).unwrap();

    let mut items = Vec::new();
    for e in walkdir::WalkDir::new(f.path("col"))
        .min_depth(4)
        .max_depth(4)
    {
        let e = e.unwrap();
        items.push(
            e.path()
                .strip_prefix(f.path("col"))
                .unwrap()
                .to_str()
                .unwrap()
                .to_string(),
        );
    }
    items.extend([
        "8JMKD3MGP8W/35MME4E".into(),
        "8JMKD3MGP8W/35MMLL8".into(),
        "LK47B6W/362SFKH".into(),
    ]);
    assert!(items.len() >= 15);

    let mut checked = 0;
    for item in &items {
        let ibi = Ibi::parse(item).unwrap();
        let archive = Archive::new(f.root(), config.clone());
        let full = parse(&archive.url_list(&ibi, None, 1_800_000_000).pairs.to_text());
        let deleted = full.iter().any(|(n, v)| n == "state" && v == &["Deleted"]);
        for v in verbs() {
            let Ok(verbs) = VerbList::parse(&v) else {
                continue;
            };
            let req = UrlRequest {
                client: None,
                filepath: None,
                verbs: verbs.clone(),
            };
            let archive = Archive::new(f.root(), config.clone());
            let got = parse(
                &archive
                    .url_list(&ibi, Some(&req), 1_800_000_000)
                    .pairs
                    .to_text(),
            );
            let mut want = filter(&full, verbs.relation(), deleted);
            want.sort();
            let mut got = without_key(got);
            got.sort();
            assert_eq!(got, want, "item {item}, verbs {v:?}");
            checked += 1;
        }
    }
    assert!(checked > 2000, "{checked}");
}
