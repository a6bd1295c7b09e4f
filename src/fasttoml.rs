//! A quick reader for the small, plain TOML files read on every request (archive.toml,
//! item.toml), in front of the `toml` crate.
//!
//! The service reads archive.toml on every CGI run and an item.toml for every item an
//! answer involves; with the `toml` crate's full parser that was most of the service's
//! own work (about 80,000 instructions for archive.toml, 30,000 for an item.toml). Such
//! files use little of TOML, so [`from_str`] first tries a strict subset:
//!
//! - blank lines and `#` comments, whitespace = space and tab, `\n` line ends;
//! - `[name]` table headers with a bare name, each once, at the top level;
//! - `key = value` with a bare key, each once per table, where value is a basic string
//!   without escapes (`"…"`), a decimal integer (`0`, `42`, `-7`), `true`/`false`, an
//!   offset date-time `YYYY-MM-DDTHH:MM:SS` + `Z` or `±HH:MM`, or a one-line array of
//!   such strings.
//!
//! Anything else — an escape, a literal or multi-line string, a float, a dotted or quoted
//! key, an inline table, a date it does not check itself, `\r`, … — makes it give up, and
//! the `toml` crate reads the text as before. What the subset accepts is valid TOML that
//! the `toml` crate reads to the same values, and the value is then deserialized by the
//! same serde code; when that fails, the `toml` crate reads the text again so that the
//! error is its own. So the result — value or error message — is always the one
//! `toml::from_str` gives.

use serde::de::DeserializeOwned;
use toml::value::Datetime;
use toml::{Table, Value};

/// `toml::from_str`, quicker on plain files. Date-times are taken only as the values of
/// the top-level keys named in `datetime_keys` (fields of type `toml::value::Datetime`):
/// elsewhere the toml crate reads the file.
pub fn from_str<T: DeserializeOwned>(
    text: &str,
    datetime_keys: &[&str],
) -> Result<T, toml::de::Error> {
    if let Some(table) = parse(text).and_then(|t| datetimes_for_serde(t, datetime_keys)) {
        if let Ok(value) = Value::Table(table).try_into() {
            return Ok(value);
        }
    }
    toml::from_str(text)
}

/// The toml crate deserializes a `Value::Datetime` as a string, which a `Datetime` field
/// refuses; its document deserializer hands a date-time to serde as a one-entry map
/// under a private key instead, which `Datetime` takes. Done here for the keys that are
/// such fields; a date-time under any other key (which might be a field of type
/// `toml::Value`, and would then differ) gives up. Were the private key ever to change,
/// deserialization would fail and the toml crate would read the file: slower, not wrong.
fn datetimes_for_serde(mut table: Table, datetime_keys: &[&str]) -> Option<Table> {
    const DATETIME_FIELD: &str = "$__toml_private_datetime";
    for (key, value) in table.iter_mut() {
        match value {
            Value::Datetime(dt) if datetime_keys.contains(&key.as_str()) => {
                let mut wrapped = Table::new();
                wrapped.insert(DATETIME_FIELD.to_string(), Value::String(dt.to_string()));
                *value = Value::Table(wrapped);
            }
            Value::Datetime(_) => return None,
            Value::Table(inner) if inner.values().any(|v| matches!(v, Value::Datetime(_))) => {
                return None
            }
            _ => {}
        }
    }
    Some(table)
}

/// The table of `text` when it is written in the subset, else `None`.
pub fn parse(text: &str) -> Option<Table> {
    if text.contains('\r') || text.starts_with('\u{feff}') {
        return None;
    }
    let mut root = Table::new();
    // The name of the table being filled; `None` for the root.
    let mut current: Option<String> = None;
    let mut rest = text;
    while !rest.is_empty() {
        let end = rest.bytes().position(|b| b == b'\n').unwrap_or(rest.len());
        let line = rest[..end].trim_start_matches([' ', '\t']);
        rest = rest.get(end + 1..).unwrap_or("");
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            comment_ok(comment)?;
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let end = rest.find(']')?;
            let name = &rest[..end];
            if !is_bare_key(name) || root.contains_key(name) {
                return None;
            }
            end_of_line(&rest[end + 1..])?;
            root.insert(name.to_string(), Value::Table(Table::new()));
            current = Some(name.to_string());
            continue;
        }
        let key_end = line
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(line.len());
        let key = &line[..key_end];
        if key.is_empty() {
            return None;
        }
        let rest = line[key_end..].trim_start_matches([' ', '\t']);
        let rest = rest.strip_prefix('=')?.trim_start_matches([' ', '\t']);
        let (value, rest) = value(rest)?;
        end_of_line(rest)?;
        let table = match &current {
            None => &mut root,
            Some(name) => match root.get_mut(name) {
                Some(Value::Table(t)) => t,
                _ => return None,
            },
        };
        if table.contains_key(key) {
            return None;
        }
        table.insert(key.to_string(), value);
    }
    Some(root)
}

fn is_bare_key(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A comment may hold anything but control characters (tab aside).
fn comment_ok(comment: &str) -> Option<()> {
    comment
        .bytes()
        .all(|b| b == b'\t' || (b >= b' ' && b != 0x7f))
        .then_some(())
}

/// What may follow a value or a header: whitespace, then nothing or a comment.
fn end_of_line(rest: &str) -> Option<()> {
    let rest = rest.trim_start_matches([' ', '\t']);
    match rest.strip_prefix('#') {
        Some(comment) => comment_ok(comment),
        None => rest.is_empty().then_some(()),
    }
}

/// A value at the start of `s`, and what follows it.
fn value(s: &str) -> Option<(Value, &str)> {
    let first = *s.as_bytes().first()?;
    match first {
        b'"' => {
            let (v, rest) = basic_string(s)?;
            Some((Value::String(v.to_string()), rest))
        }
        b'[' => {
            let mut rest = s[1..].trim_start_matches([' ', '\t']);
            let mut items = Vec::new();
            loop {
                if let Some(after) = rest.strip_prefix(']') {
                    return Some((Value::Array(items), after));
                }
                let (v, after) = basic_string(rest)?;
                items.push(Value::String(v.to_string()));
                rest = after.trim_start_matches([' ', '\t']);
                if let Some(after) = rest.strip_prefix(',') {
                    rest = after.trim_start_matches([' ', '\t']);
                } else if !rest.starts_with(']') {
                    return None;
                }
            }
        }
        b't' | b'f' => {
            let word_end = s
                .find(|c: char| !c.is_ascii_alphanumeric())
                .unwrap_or(s.len());
            let v = match &s[..word_end] {
                "true" => true,
                "false" => false,
                _ => return None,
            };
            Some((Value::Boolean(v), &s[word_end..]))
        }
        b'0'..=b'9' | b'-' => {
            let end = s.find([' ', '\t', '#']).unwrap_or(s.len());
            let token = &s[..end];
            let v = if token.len() > 10 && token.as_bytes()[4] == b'-' {
                Value::Datetime(datetime(token)?)
            } else {
                Value::Integer(integer(token)?)
            };
            Some((v, &s[end..]))
        }
        _ => None,
    }
}

/// `"…"` without escapes or control characters: its content and what follows.
fn basic_string(s: &str) -> Option<(&str, &str)> {
    let inner = s.strip_prefix('"')?;
    if inner.starts_with("\"\"") {
        return None; // a multi-line string
    }
    let end = inner.bytes().position(|b| b == b'"')?;
    let content = &inner[..end];
    if content
        .bytes()
        .any(|b| b == b'\\' || (b < b' ' && b != b'\t') || b == 0x7f)
    {
        return None;
    }
    Some((content, &inner[end + 1..]))
}

/// `0`, or digits without a leading zero, maybe after `-`; no `+`, `_` or other base.
fn integer(token: &str) -> Option<i64> {
    let digits = token.strip_prefix('-').unwrap_or(token);
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
    {
        return None;
    }
    token.parse().ok()
}

/// `YYYY-MM-DDTHH:MM:SS` followed by `Z` or `±HH:MM`, checked field by field (a real
/// day of that month, no leap second).
fn datetime(token: &str) -> Option<Datetime> {
    let b = token.as_bytes();
    if b.len() < 20 {
        return None;
    }
    let num = |from: usize, len: usize| -> Option<u32> {
        let part = b.get(from..from + len)?;
        part.iter()
            .all(u8::is_ascii_digit)
            .then(|| part.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
    };
    let seps = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    if seps.iter().any(|&(i, c)| b[i] != c) {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if day == 0 || day > days || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    match &b[19..] {
        b"Z" => {}
        [sign, ..] if (*sign == b'+' || *sign == b'-') && b.len() == 25 && b[22] == b':' => {
            if num(20, 2)? > 23 || num(23, 2)? > 59 {
                return None;
            }
        }
        _ => return None,
    }
    token.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The subset gives what the toml crate gives, or gives up.
    fn same(text: &str) {
        let full: Result<Table, _> = toml::from_str(text);
        if let Some(fast) = parse(text) {
            assert_eq!(Ok(&fast), full.as_ref().map_err(|_| ()), "{text:?}");
        }
    }

    #[test]
    fn plain_files_are_read_as_the_toml_crate_reads_them() {
        let text = "# c\narchiveaddress = \"localhost:8080\"  # x\n\n[registration]\nkey = \"1234567890\"\n[minting]\nport = 80\ngranularity = 1\nneg = -7\n[access]\nnetworks = [\"150.163.0.0/16\", \"127.0.0.0/8\",]\nempty = []\nflag = true\noff = false\n";
        assert!(parse(text).is_some());
        same(text);
        let item = "state = \"Original\"\nibip = \"8JMKD3MGP8W/35MME4E\"\ntimestamp = 2009-07-21T13:23:45Z\nt2 = 2009-07-21T13:23:45-03:00\ntarget = \"Relatório Final.pdf\"\n\n[translations]\npt = \"a/b/2009/08.25.19.43\"\n";
        assert!(parse(item).is_some());
        same(item);
    }

    #[test]
    fn anything_else_is_left_to_the_toml_crate() {
        for text in [
            "a = 'literal'",
            "a = \"esc\\\"aped\"",
            "a = \"\"\"multi\"\"\"",
            "a = 1.5",
            "a = 1_000",
            "a = +1",
            "a = 0x10",
            "a = 01",
            "a.b = 1",
            "\"a\" = 1",
            "a = {b = 1}",
            "[a.b]",
            "[[a]]",
            "[ a ]",
            "a = 1\na = 2",
            "a = 1\n[a]",
            "[a]\n[a]",
            "a = 1\r\n",
            "a = 2009-02-30T00:00:00Z",
            "a = 2009-07-21T13:23:60Z",
            "a = 2009-07-21 13:23:45Z",
            "a = 2009-07-21T13:23:45.5Z",
            "a = 2009-07-21T13:23:45",
            "a = 2009-07-21",
            "a = [1, 2]",
            "a = [\n\"x\"]",
            "a = \"x\" b",
            "a = \"tab\u{1}\"",
            "# \u{1}",
            "a = True",
            "a = 99999999999999999999",
            "a =",
            "= 1",
        ] {
            assert!(parse(text).is_none(), "{text:?}");
            same(text);
        }
    }

    /// Every TOML file of the sample Archive, and many one-byte edits of each: the subset
    /// reads each as the toml crate does, or gives up.
    #[test]
    fn sample_files_and_their_mutations_agree_with_the_toml_crate() {
        let mut files = Vec::new();
        let mut dirs = vec![std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/sample-archive"
        ))];
        while let Some(dir) = dirs.pop() {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "toml") {
                    files.push(std::fs::read_to_string(&p).unwrap());
                }
            }
        }
        assert!(files.len() > 10);
        let alphabet = b" \t\n\r#=[]\",.:-+_'\\0123456789TZazAZ{}\x01\x7f";
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for text in &files {
            assert!(parse(text).is_some(), "{text}");
            same(text);
            for _ in 0..400 {
                let mut bytes = text.as_bytes().to_vec();
                let at = (next() % bytes.len() as u64) as usize;
                let b = alphabet[(next() % alphabet.len() as u64) as usize];
                match next() % 3 {
                    0 => bytes[at] = b,
                    1 => bytes.insert(at, b),
                    _ => {
                        bytes.remove(at);
                    }
                }
                if let Ok(mutated) = String::from_utf8(bytes) {
                    same(&mutated);
                }
            }
        }
    }

    #[test]
    fn deserialized_values_and_errors_are_the_toml_crates() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        #[serde(deny_unknown_fields)]
        struct S {
            a: String,
            n: Option<u16>,
            t: Option<Datetime>,
            v: Option<toml::Value>,
        }
        // The quick path itself deserializes a plain file with a date-time.
        let text = "a = \"x\"\nt = 2009-07-21T13:23:45Z\nv = 1\n";
        let table = parse(text)
            .and_then(|t| datetimes_for_serde(t, &["t"]))
            .unwrap();
        let quick: S = Value::Table(table).try_into().unwrap();
        assert_eq!(quick, toml::from_str::<S>(text).unwrap());
        for text in [
            "a = \"x\"\nt = 2009-07-21T13:23:45Z\n",
            "a = \"x\"\nt = 2009-07-21T13:23:45+01:30\n",
            "a = \"x\"\nt = \"2009-07-21T13:23:45Z\"\n",
            "a = \"x\"\nv = 2009-07-21T13:23:45Z\n",
            "a = \"x\"\nv = \"s\"\n",
            "a = \"x\"\nt = 1\n",
            "a = \"x\"\nn = 80\n",
            "a = \"x\"\n",
            "a = \"x\"\nn = 70000\n",
            "a = \"x\"\nbogus = 1\n",
            "n = 1\n",
            "a = 'x'\n",
            "a = \"x\"\nn = 1\nn = 2\n",
        ] {
            let fast: Result<S, _> = from_str(text, &["t"]);
            let full: Result<S, _> = toml::from_str(text);
            assert_eq!(
                fast.as_ref().map_err(ToString::to_string),
                full.as_ref().map_err(ToString::to_string),
                "{text:?}"
            );
        }
    }
}
