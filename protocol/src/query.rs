//! Query-string decoding: routine DECODQS of the resolution standard (§9.2, Example 9.1).
//!
//! A query string is a list of `name=value` pairs separated by `&` (§6.1); values carry
//! the escapes of Table 6.1 (`%20`, `%25`, `%26`, `%2B`, `%3D`, `%3F`), and, as in HTML
//! forms, `+` stands for a space. The first occurrence of a name wins.

use std::fmt;

/// Longest query string we decode. Apache and lighttpd refuse request lines of about
/// 8 KiB; anything longer did not come from a resolver.
pub const MAX_QUERY_LEN: usize = 16 * 1024;

/// A decoded query string: names and values as bytes (a value such as the `url` of an
/// acknowledgment may hold Latin-1 bytes, Example 8.9).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Query {
    pairs: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Query {
    /// Decodes a whole query string; any malformed escape makes the whole string bad
    /// input (a resolver never sends one).
    pub fn parse(qs: &[u8]) -> Result<Query, QueryError> {
        if qs.len() > MAX_QUERY_LEN {
            return Err(QueryError::TooLong(qs.len()));
        }
        let mut pairs = Vec::new();
        for part in qs.split(|&b| b == b'&') {
            if part.is_empty() {
                continue;
            }
            let (name, value) = match part.iter().position(|&b| b == b'=') {
                Some(i) => (&part[..i], &part[i + 1..]),
                None => (part, &b""[..]),
            };
            pairs.push((decode_component(name)?, decode_component(value)?));
        }
        Ok(Query { pairs })
    }

    /// Every pair, in the order given (repeated names too).
    pub fn pairs(&self) -> &[(Vec<u8>, Vec<u8>)] {
        &self.pairs
    }

    /// DECODQS(qs, name): the value of the first pair called `name`.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.pairs
            .iter()
            .find(|(n, _)| n == name.as_bytes())
            .map(|(_, v)| v.as_slice())
    }

    /// The value of `name` as text; a value that is not UTF-8 is bad input.
    pub fn get_str(&self, name: &str) -> Result<Option<&str>, QueryError> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => std::str::from_utf8(v)
                .map(Some)
                .map_err(|_| QueryError::NotUtf8(name.to_string())),
        }
    }
}

/// Decodes one name or value: `+` is a space, `%XX` a byte.
fn decode_component(raw: &[u8]) -> Result<Vec<u8>, QueryError> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = raw.get(i + 1..i + 3).ok_or(QueryError::BadEscape)?;
                let hi = hex_value(hex[0]).ok_or(QueryError::BadEscape)?;
                let lo = hex_value(hex[1]).ok_or(QueryError::BadEscape)?;
                out.push(hi << 4 | lo);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    Ok(out)
}

fn hex_value(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// A query string that is not a well-formed list of pairs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryError {
    TooLong(usize),
    BadEscape,
    NotUtf8(String),
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueryError::TooLong(n) => {
                write!(
                    f,
                    "query string of {n} bytes is longer than {MAX_QUERY_LEN}"
                )
            }
            QueryError::BadEscape => f.write_str("query string has a malformed %-escape"),
            QueryError::NotUtf8(name) => write!(f, "value of {name} is not UTF-8"),
        }
    }
}

impl std::error::Error for QueryError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_9_1() {
        let q = Query::parse(
            b"servicesubject=urlRequest&clientinformation.ipaddress=150.163.2.175&parsedibiurl.ibi=8JMKD3MGP7W/3EPGUE5",
        )
        .unwrap();
        assert_eq!(q.get("servicesubject"), Some(&b"urlRequest"[..]));
        assert_eq!(q.get("parsedibiurl.ibi"), Some(&b"8JMKD3MGP7W/3EPGUE5"[..]));
        assert_eq!(q.get("parsedibiurl.verblist"), None);
    }

    #[test]
    fn escapes_of_table_6_1_and_plus() {
        let q = Query::parse(b"a=%20%25%26%2B%3D%3F&b=x+y&c=1997-07-16T19:20%2B01:00").unwrap();
        assert_eq!(q.get("a"), Some(&b" %&+=?"[..]));
        assert_eq!(q.get("b"), Some(&b"x y"[..]));
        assert_eq!(q.get("c"), Some(&b"1997-07-16T19:20+01:00"[..]));
    }

    #[test]
    fn first_occurrence_wins_and_empty_parts_are_skipped() {
        let q = Query::parse(b"&&x=1&x=2&y&=z").unwrap();
        assert_eq!(q.get("x"), Some(&b"1"[..]));
        assert_eq!(q.get("y"), Some(&b""[..]));
        assert_eq!(q.get(""), Some(&b"z"[..]));
    }

    #[test]
    fn latin1_bytes_survive_and_utf8_is_checked_on_request() {
        let q = Query::parse(b"url=Relat%f3rio%20Final.pdf").unwrap();
        assert_eq!(q.get("url"), Some(&b"Relat\xf3rio Final.pdf"[..]));
        assert_eq!(q.get_str("url"), Err(QueryError::NotUtf8("url".into())));
    }

    #[test]
    fn malformed_escapes_and_huge_strings_are_rejected() {
        for bad in [&b"a=%"[..], b"a=%4", b"a=%zz", b"%g0=1", b"a=%%41"] {
            assert_eq!(Query::parse(bad), Err(QueryError::BadEscape), "{bad:?}");
        }
        let huge = vec![b'a'; MAX_QUERY_LEN + 1];
        assert_eq!(
            Query::parse(&huge),
            Err(QueryError::TooLong(MAX_QUERY_LEN + 1))
        );
    }
}
