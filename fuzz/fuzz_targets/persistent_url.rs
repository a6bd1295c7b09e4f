//! `PersistentUrl::parse` never panics on any path and query; what it accepts, written back
//! with `Display`, parses to the same value (parse → display → parse).

#![no_main]

use ::ibi::persistent::PersistentUrl;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (path, query) = match text.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (text, None),
    };
    let Ok(parsed) = PersistentUrl::parse(path, query) else {
        return;
    };
    let shown = parsed.to_string();
    let (path2, query2) = match shown.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (shown.as_str(), None),
    };
    match PersistentUrl::parse(path2, query2) {
        Ok(again) => assert_eq!(again, parsed, "{text:?} displayed as {shown:?}"),
        Err(e) => panic!("{text:?} displayed as {shown:?}, which does not parse: {e}"),
    }
});
