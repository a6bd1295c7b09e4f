//! Pair lists: the text format of every answer of the Archive service.
//!
//! Grammar (resolution standard, §6.2, Table 6.2):
//!
//! ```text
//! lista-de-pares = par *(espaço par)
//! par            = nome 1*SP valor
//! valor          = palavra | ("{" lista "}")
//! lista          = palavra 1*(SP palavra)
//! espaço         = SP | CRLF
//! palavra        = 1*caractere
//! caractere      = %x21-7A | %x7C | %x7E
//! ```
//!
//! We write one pair per line, lines separated by CRLF, pairs sorted by name (as the
//! worked examples 9.2, 9.3, 10.1 and 10.2 show them). A byte of a word outside
//! `caractere` is written as `%` and two lower-case hex digits of the byte as stored
//! (Example 6.2: `Relat%f3rio%20Final.pdf`; see [`crate::escape`]). An empty value is
//! written `{}`.

use std::fmt;

use crate::escape::{self, is_word_byte};

/// The value of a pair: its words, as raw bytes (escaped only when written).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Value(Vec<Vec<u8>>);

impl Value {
    /// A value of one word.
    pub fn word(w: impl Into<Vec<u8>>) -> Value {
        Value(vec![w.into()])
    }

    /// A value of several words (written in braces when there is more than one).
    pub fn words<I, W>(words: I) -> Value
    where
        I: IntoIterator<Item = W>,
        W: Into<Vec<u8>>,
    {
        Value(words.into_iter().map(Into::into).collect())
    }

    /// The words of this value.
    pub fn as_words(&self) -> &[Vec<u8>] {
        &self.0
    }

    /// The words as text, when every one is UTF-8 (those of a list read by [`parse`]
    /// always are: they are ASCII).
    pub fn as_strs(&self) -> Option<Vec<&str>> {
        self.0.iter().map(|w| std::str::from_utf8(w).ok()).collect()
    }

    /// The words joined by a space, as text (a byte sequence that is not UTF-8 written as
    /// U+FFFD).
    pub fn joined(&self) -> String {
        String::from_utf8_lossy(&self.0.join(&b' ')).into_owned()
    }
}

/// A list of name/value pairs that writes itself per Table 6.2.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairList {
    pairs: Vec<(String, Value)>,
}

impl PairList {
    pub fn new() -> PairList {
        PairList::default()
    }

    /// Adds a pair. Names are words of the protocol's own vocabulary and are written as
    /// given (after escaping, should one ever hold a byte outside `caractere`).
    pub fn push(&mut self, name: impl Into<String>, value: Value) {
        self.pairs.push((name.into(), value));
    }

    /// Adds a pair whose value is a single word.
    pub fn push_word(&mut self, name: impl Into<String>, word: impl Into<Vec<u8>>) {
        self.push(name, Value::word(word));
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// The first value recorded under `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.pairs.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.pairs.iter().map(|(n, v)| (n.as_str(), v))
    }

    /// Keeps only the pairs whose name satisfies `keep`.
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.pairs.retain(|(n, _)| keep(n));
    }

    /// Moves every pair of `other` into this list.
    pub fn extend(&mut self, other: PairList) {
        self.pairs.extend(other.pairs);
    }

    /// The list as it goes on the wire: sorted by name, CRLF between pairs, no CRLF after
    /// the last one; an empty list is an empty string.
    pub fn to_text(&self) -> String {
        self.joined_by("\r\n")
    }

    /// The list as a command prints it on a terminal or into a pipe: the lines of
    /// [`to_text`](Self::to_text) ended by LF alone (CRLF belongs to the HTTP answers).
    pub fn to_lines(&self) -> String {
        self.joined_by("\n")
    }

    fn joined_by(&self, end_of_line: &str) -> String {
        let mut sorted: Vec<&(String, Value)> = self.pairs.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out = String::with_capacity(64 * sorted.len());
        for (i, (name, value)) in sorted.into_iter().enumerate() {
            if i > 0 {
                out.push_str(end_of_line);
            }
            escape::push_word(&mut out, name.as_bytes());
            out.push(' ');
            // Empty words are dropped before choosing the form: Table 6.2's `lista` holds
            // two or more words, so one remaining word is written bare (a value such as
            // ["", "a"] is `a`: `{a}` is not in the grammar).
            let words: Vec<&Vec<u8>> = value.0.iter().filter(|w| !w.is_empty()).collect();
            match words.as_slice() {
                [] => out.push_str("{}"),
                [w] => escape::push_word(&mut out, w),
                words => {
                    out.push('{');
                    for (j, w) in words.iter().enumerate() {
                        if j > 0 {
                            out.push(' ');
                        }
                        escape::push_word(&mut out, w);
                    }
                    out.push('}');
                }
            }
        }
        out
    }
}

impl fmt::Display for PairList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

/// A pair list read back from text (an Archive's answer to the resolver, a resolver's to
/// the administrator's tools, tests): the pairs in the order written, each word as
/// written (escapes are not undone).
pub fn parse(text: &str) -> Result<PairList, ParseError> {
    let mut out = PairList::new();
    let mut rest = text.trim_start_matches([' ', '\r', '\n']);
    while !rest.is_empty() {
        let name_end = rest.find([' ', '\r', '\n']).unwrap_or(rest.len());
        let name = &rest[..name_end];
        check_word(name)?;
        rest = rest[name_end..].trim_start_matches(' ');
        if rest.is_empty() || rest.starts_with(['\r', '\n']) {
            return Err(ParseError(format!("pair {name:?} has no value")));
        }
        let words = if let Some(inner) = rest.strip_prefix('{') {
            let close = inner
                .find('}')
                .ok_or_else(|| ParseError(format!("value of {name:?} has no closing brace")))?;
            let list = &inner[..close];
            rest = &inner[close + 1..];
            let words: Vec<String> = list
                .split(' ')
                .filter(|w| !w.is_empty())
                .map(String::from)
                .collect();
            for w in &words {
                check_word(w)?;
            }
            words
        } else {
            let end = rest.find([' ', '\r', '\n']).unwrap_or(rest.len());
            let w = &rest[..end];
            check_word(w)?;
            rest = &rest[end..];
            vec![w.to_string()]
        };
        out.push(name, Value::words(words));
        if !(rest.is_empty() || rest.starts_with([' ', '\r'])) {
            return Err(ParseError(format!("unexpected text after pair {name:?}")));
        }
        rest = rest.trim_start_matches(' ');
        if let Some(r) = rest.strip_prefix("\r\n") {
            rest = r;
        } else if rest.starts_with('\r') || rest.starts_with('\n') {
            return Err(ParseError("a line break that is not CRLF".into()));
        }
    }
    Ok(out)
}

fn check_word(w: &str) -> Result<(), ParseError> {
    if w.is_empty() {
        return Err(ParseError("empty word".into()));
    }
    match w.bytes().find(|&b| !is_word_byte(b)) {
        Some(b) => Err(ParseError(format!(
            "byte 0x{b:02x} is not allowed in word {w:?}"
        ))),
        None => Ok(()),
    }
}

/// A pair list that does not follow Table 6.2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed pair list: {}", self.0)
    }
}

impl std::error::Error for ParseError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_6_2_escapes_latin1_and_space() {
        let mut p = PairList::new();
        p.push_word(
            "url",
            b"http://mtc-m16d.sid.inpe.br/col/sid.inpe.br/mtc-m19/2013/09.04.12.27.57/doc/Relat\xf3rio Final.pdf".to_vec(),
        );
        assert_eq!(
            p.to_text(),
            "url http://mtc-m16d.sid.inpe.br/col/sid.inpe.br/mtc-m19/2013/09.04.12.27.57/doc/Relat%f3rio%20Final.pdf"
        );
    }

    #[test]
    fn sorted_crlf_braces_and_empty_value() {
        let mut p = PairList::new();
        p.push_word("state", "Original");
        p.push("ibi.platformsoftware", Value::words(Vec::<Vec<u8>>::new()));
        p.push(
            "ibi",
            Value::words(["rep", "a/b/2009/01.02.03.04", "ibip", "LK47B6W/362SFKH"]),
        );
        p.push_word("archiveaddress", "x.y");
        assert_eq!(
            p.to_text(),
            "archiveaddress x.y\r\nibi {rep a/b/2009/01.02.03.04 ibip LK47B6W/362SFKH}\r\nibi.platformsoftware {}\r\nstate Original"
        );
    }

    #[test]
    fn braces_and_controls_in_words_are_escaped() {
        let mut p = PairList::new();
        p.push_word("notice", "a{b}c\r\n");
        assert_eq!(p.to_text(), "notice a%7bb%7dc%0d%0a");
    }

    #[test]
    fn empty_list_is_empty_text() {
        assert_eq!(PairList::new().to_text(), "");
    }

    #[test]
    fn written_lists_parse_back_to_the_same_pairs() {
        let mut p = PairList::new();
        p.push_word("url", b"a b\xff".to_vec());
        p.push("notice", Value::words(["acknowledgment", "received"]));
        let parsed = parse(&p.to_text()).unwrap();
        let mut want = PairList::new();
        want.push("notice", Value::words(["acknowledgment", "received"]));
        want.push_word("url", "a%20b%ff");
        assert_eq!(parsed, want);
        let notice = parsed.get("notice").unwrap();
        assert_eq!(notice.as_strs(), Some(vec!["acknowledgment", "received"]));
        assert_eq!(notice.joined(), "acknowledgment received");
    }

    #[test]
    fn parse_rejects_bare_lf_and_missing_values() {
        assert!(parse("a b\nc d").is_err());
        assert!(parse("a").is_err());
        assert!(parse("a {b c").is_err());
    }
}
