//! `Item::parse` never panics on arbitrary text, its scanner of the usual item.toml reads
//! what the TOML reader reads wherever it reads anything, and what it accepts keeps its
//! promises:
//! file names stay inside doc/, format names are OAI-PMH metadataPrefixes, a `url` is an
//! http(s) URL of pair-list word bytes. The same text is also read as an archive.toml
//! (`Config::parse`), which must not panic either and whose error messages never carry
//! the registration key.

#![no_main]

use std::path::Path;

use ibi_archive::config::Config;
use ::ibi::Rep;
use ibi_archive::item::{check_relative_file, Item};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let rep = Rep::parse("sid.inpe.br/mtc-m19/2013/09.04.12.27.57").unwrap();
    let dir = Path::new("/nonexistent/col/sid.inpe.br/mtc-m19/2013/09.04.12.27.57");
    assert!(ibi_archive::item::scanner_agrees(&text), "{text:?}");
    let parsed = Item::parse(&text, dir, rep);
    if let Ok(item) = parsed {
        if let Some(t) = &item.target {
            assert!(check_relative_file(t).is_ok(), "target {t:?}");
            assert!(
                !t.split('/').any(|c| c == ".." || c.is_empty()),
                "target {t:?}"
            );
        }
        for (format, file) in &item.formats {
            // A name a harvester can ask for (OAI-PMH's metadataPrefix).
            assert!(
                !format.is_empty()
                    && format.len() <= 64
                    && format
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b)),
                "format {format:?}"
            );
            assert!(
                check_relative_file(file).is_ok(),
                "formats.{format} {file:?}"
            );
        }
        if let Some(url) = &item.url {
            assert!(url.starts_with("http://") || url.starts_with("https://"));
            assert!(
                url.bytes().all(::ibi::escape::is_word_byte),
                "url {url:?}"
            );
        }
        assert_eq!(item.doc(), dir.join("doc"));
    }
    match Config::parse(&text) {
        Ok(c) => {
            assert!(c.baseurl.starts_with("http://") || c.baseurl.starts_with("https://"));
            assert!(!c.baseurl.ends_with('/'));
            assert!(c.baseurl.bytes().all(::ibi::escape::is_word_byte));
            if let Some(r) = &c.registration {
                // Neither the one key nor a resolver's own is in the Debug output.
                let shown = format!("{c:?}");
                for key in r.resolvers.iter().map(|each| &each.key).chain(&r.key) {
                    assert!(!shown.contains(&format!("key: {key:?}")), "{shown}");
                    assert!(!shown.contains(&format!("key: Some({key:?})")), "{shown}");
                }
            }
        }
        Err(message) => {
            // The key, when the text holds a recognisable one, is never in the message.
            if let Some(key) = registration_key(&text) {
                assert!(
                    !message.contains(&key),
                    "message {message:?} shows the key {key:?}"
                );
            }
        }
    }
});

/// The value of `key = ...` in a `[registration]` table or a `[[registration.resolver]]`
/// one (the last such key), when it is long enough to be a real key (Table 7.1: 10
/// digits) and does not also appear in other settings.
fn registration_key(text: &str) -> Option<String> {
    let mut in_registration = false;
    let mut key = None;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_registration = line == "[registration]" || line == "[[registration.resolver]]";
            continue;
        }
        if let Some(rest) = line.strip_prefix("key") {
            if in_registration {
                let v = rest.trim_start().strip_prefix('=')?.trim();
                let v = v.trim_matches('"');
                if v.len() >= 10 && v.bytes().all(|b| b.is_ascii_digit()) {
                    key = Some(v.to_string());
                }
            }
        }
    }
    let key = key?;
    // Only when the key appears once: elsewhere it could be another field's own value.
    (text.matches(key.as_str()).count() == 1).then_some(key)
}
