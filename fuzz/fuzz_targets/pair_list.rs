//! A `PairList` built from arbitrary names and values writes text that `pairs::parse`
//! reads back to the same pairs: sorted by name (stable), CRLF between pairs, every byte
//! outside rule `caractere` of Table 6.2 written `%xx`, empty words dropped, an empty value
//! as `{}`; and the `%xx` escapes decode back to the bytes pushed.
//!
//! Input: pairs separated by 0xFE; in each, the name then its words, separated by 0xFD.

#![no_main]

use ::ibi::pairs::{self, PairList, Value};
use libfuzzer_sys::fuzz_target;

/// Table 6.2's escaping, written independently of the library.
fn escaped(bytes: &[u8]) -> String {
    let mut s = String::new();
    for &b in bytes {
        if (0x21..=0x7a).contains(&b) || b == 0x7c || b == 0x7e {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02x}"));
        }
    }
    s
}

fn unescaped(word: &str) -> Vec<u8> {
    percent_encoding::percent_decode_str(word).collect()
}

fuzz_target!(|data: &[u8]| {
    let mut list = PairList::new();
    let mut expected: Vec<(String, Vec<String>)> = Vec::new();
    let mut raw: Vec<(String, Vec<Vec<u8>>)> = Vec::new();
    for chunk in data.split(|&b| b == 0xfe) {
        let mut fields = chunk.split(|&b| b == 0xfd);
        let name = String::from_utf8_lossy(fields.next().unwrap_or_default()).into_owned();
        if name.is_empty() {
            // Names are the protocol's own words; none is empty.
            continue;
        }
        let words: Vec<Vec<u8>> = fields.map(<[u8]>::to_vec).collect();
        list.push(name.clone(), Value::words(words.clone()));
        expected.push((
            escaped(name.as_bytes()),
            words
                .iter()
                .filter(|w| !w.is_empty())
                .map(|w| escaped(w))
                .collect(),
        ));
        raw.push((name, words));
    }
    let text = list.to_text();
    assert!(text.is_ascii());
    assert_eq!(text.is_empty(), expected.is_empty());
    assert!(!text.ends_with("\r\n"));
    assert_eq!(
        text.matches("\r\n").count(),
        expected.len().saturating_sub(1)
    );
    assert_eq!(
        text.matches('\n').count(),
        text.matches("\r\n").count(),
        "bare LF"
    );
    // Stable sort by the name as pushed.
    let mut order: Vec<usize> = (0..raw.len()).collect();
    order.sort_by(|&a, &b| raw[a].0.cmp(&raw[b].0));
    let expected: Vec<(String, Vec<String>)> = order.iter().map(|&i| expected[i].clone()).collect();
    let parsed: Vec<(String, Vec<String>)> = pairs::parse(&text)
        .unwrap_or_else(|e| panic!("{e}: {text:?}"))
        .iter()
        .map(|(name, value)| {
            let words = value.as_strs().expect("a word read from text is ASCII");
            (
                name.to_string(),
                words.into_iter().map(String::from).collect(),
            )
        })
        .collect();
    assert_eq!(parsed, expected, "{text:?}");
    for (&i, (name, words)) in order.iter().zip(&parsed) {
        if !raw[i].0.contains('%') {
            assert_eq!(unescaped(name), raw[i].0.as_bytes());
        }
        let want: Vec<&Vec<u8>> = raw[i].1.iter().filter(|w| !w.is_empty()).collect();
        assert_eq!(words.len(), want.len());
        // `%` is a `caractere` and written as it is (Table 6.2 of the resolution standard), so only words without one
        // decode back unambiguously.
        for (got, want) in words.iter().zip(want) {
            if !want.contains(&b'%') {
                assert_eq!(&unescaped(got), want, "{got:?}");
            }
        }
    }
    // The text is one pair per line, `name SP value`, a value of several words in braces.
    for (line, (_, words)) in text.split("\r\n").zip(&expected) {
        let (_, value) = line.split_once(' ').expect("name SP value");
        match words.len() {
            1 => assert!(!value.starts_with('{'), "{line:?}"),
            _ => assert!(value.starts_with('{') && value.ends_with('}'), "{line:?}"),
        }
    }
});
