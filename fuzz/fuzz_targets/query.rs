//! `Query::parse` (DECODQS) never panics; it accepts exactly what a plain reference decoder
//! accepts; `get` gives the first occurrence of a name; and a well-formed query string,
//! re-encoded pair by pair (two ways), decodes to the same `Query`.

#![no_main]

use ::ibi::query::{Query, QueryError, MAX_QUERY_LEN};
use libfuzzer_sys::fuzz_target;

/// The reference reading: `&`-separated, empty parts skipped, split at the first `=`,
/// `+` a space, `%XX` a byte, anything else malformed.
fn reference(qs: &[u8]) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
    fn decode(raw: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let mut it = raw.iter().copied();
        while let Some(b) = it.next() {
            out.push(match b {
                b'+' => b' ',
                b'%' => {
                    let hi = (it.next()? as char).to_digit(16)?;
                    let lo = (it.next()? as char).to_digit(16)?;
                    (hi * 16 + lo) as u8
                }
                b => b,
            });
        }
        Some(out)
    }
    let mut pairs = Vec::new();
    for part in qs.split(|&b| b == b'&').filter(|p| !p.is_empty()) {
        let (n, v) = match part.iter().position(|&b| b == b'=') {
            Some(i) => (&part[..i], &part[i + 1..]),
            None => (part, &[][..]),
        };
        pairs.push((decode(n)?, decode(v)?));
    }
    Some(pairs)
}

/// Percent-encodes every byte but unreserved ones; spaces as `%20` or `+`.
fn encode(bytes: &[u8], plus_for_space: bool, upper: bool) -> String {
    let mut s = String::new();
    for &b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            s.push(b as char);
        } else if b == b' ' && plus_for_space {
            s.push('+');
        } else if upper {
            s.push_str(&format!("%{b:02X}"));
        } else {
            s.push_str(&format!("%{b:02x}"));
        }
    }
    s
}

fuzz_target!(|data: &[u8]| {
    let parsed = Query::parse(data);
    if data.len() > MAX_QUERY_LEN {
        assert_eq!(parsed, Err(QueryError::TooLong(data.len())));
        return;
    }
    let expected = reference(data);
    let q = match (parsed, expected) {
        (Ok(q), Some(pairs)) => (q, pairs),
        (Err(QueryError::BadEscape), None) => return,
        (got, want) => panic!("Query::parse gave {got:?}, the reference {want:?}"),
    };
    let (q, pairs) = q;
    // DECODQS: the first occurrence of a name wins.
    for (name, _) in &pairs {
        let Ok(name_str) = std::str::from_utf8(name) else {
            continue;
        };
        let first = pairs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice());
        assert_eq!(q.get(name_str), first, "get({name_str:?})");
        match q.get_str(name_str) {
            Ok(Some(s)) => assert_eq!(Some(s.as_bytes()), first),
            Ok(None) => panic!("get_str({name_str:?}) found nothing"),
            Err(e) => {
                assert!(std::str::from_utf8(first.unwrap()).is_err());
                assert_eq!(e, QueryError::NotUtf8(name_str.to_string()));
            }
        }
    }
    // Re-encoded, the same pairs come back.
    for (plus, upper) in [(false, false), (true, true)] {
        let text: Vec<String> = pairs
            .iter()
            .map(|(n, v)| format!("{}={}", encode(n, plus, upper), encode(v, plus, upper)))
            .collect();
        let text = text.join("&");
        if text.len() > MAX_QUERY_LEN {
            continue;
        }
        // An empty name with an empty value encodes as "=", which is a pair, as it was.
        let again = Query::parse(text.as_bytes()).expect("a re-encoded query parses");
        assert_eq!(again, q, "re-encoded as {text:?}");
    }
});
