//! Bytes as the text of an answer carries them: rule `caractere` of Table 6.2 of the
//! resolution standard (the bytes a word of a pair list holds as they are), and the two
//! escapings built on it, both writing any other byte as `%` and two lower-case hex
//! digits (Example 6.2: `Relat%f3rio%20Final.pdf`):
//!
//! - a word of a pair list ([`push_word`]), which keeps `%` as it is;
//! - a path inside a URL handed out in a pair list ([`push_url_path`]), which escapes `%`,
//!   `?` and `#` too, so that a file name cannot change what the URL means.
//!
//! The `percent-encoding` crate, which decodes these escapes elsewhere, writes upper-case
//! hex digits; the escapes written here keep the standard's lower case. The values of the
//! pairs a request carries in its query string (Table 6.1: [`TABLE_6_1`],
//! [`QUERY_VALUE`]) are written by `percent-encoding` with these sets.

use percent_encoding::{AsciiSet, CONTROLS};

/// Table 6.1 of the resolution standard: the characters of a pair's value written as `%`
/// and two hex digits — space, `%`, `&`, `+`, `=`, `?` — together with the controls,
/// `#` (it would end the URL's query) and every byte beyond ASCII (`percent-encoding`
/// always escapes those).
pub const TABLE_6_1: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'%')
    .add(b'&')
    .add(b'+')
    .add(b'=')
    .add(b'?')
    .add(b'#');

/// [`TABLE_6_1`] and the bytes that the query of an http URL does not carry as they are
/// (the WHATWG URL standard's query set for special schemes): `"`, `<`, `>` and `'`. For a
/// request sent as written, by a client that does not escape the URL it is given.
pub const QUERY_VALUE: &AsciiSet = &TABLE_6_1.add(b'"').add(b'<').add(b'>').add(b'\'');

/// What a URI reference cannot hold as itself (RFC 3986 §2): the controls, space, `"`,
/// `<`, `>`, `\`, `^`, `` ` ``, `{`, `|`, `}` and every byte beyond ASCII. `%` is not in
/// it: a URL's own escapes stay as they are.
pub const URI_REFERENCE: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'<')
    .add(b'>')
    .add(b'\\')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// `url` as a URI reference ([`URI_REFERENCE`] %-escaped), for a `Location` or a `Link`
/// header, a page's links or JSON-LD: the file names of the standard may hold any byte.
pub fn uri_reference(url: &str) -> String {
    percent_encoding::utf8_percent_encode(url, URI_REFERENCE).to_string()
}

/// `url` as the target of a link in a `Link` header or a link-format document (RFC 8288,
/// RFC 6690; a linkset, a TimeMap): a [`uri_reference`] with `,` and `;` %-escaped too.
/// RFC 8288 allows them inside `<…>`, but a parser that splits the field at commas or
/// semicolons before it reads the brackets would cut the URL there; the escaped form
/// names the same file, as both programs decode a path segment before they read it.
pub fn link_target(url: &str) -> String {
    percent_encoding::utf8_percent_encode(url, LINK_TARGET).to_string()
}

/// What [`link_target`] escapes: [`URI_REFERENCE`], `,` and `;`.
const LINK_TARGET: &AsciiSet = &URI_REFERENCE.add(b',').add(b';');

/// Whether `v` is an http(s) URL (`http://` or `https://` and something after it) that
/// holds no white space or control character: what a page may link to and a link may
/// name once escaped ([`uri_reference`]). The one rule of both programs; a caller with a
/// stricter need (a header value written as it is) checks more after it.
pub fn is_http_url(v: &str) -> bool {
    v.strip_prefix("https://")
        .or_else(|| v.strip_prefix("http://"))
        .is_some_and(|rest| !rest.is_empty())
        && if v.is_ascii() {
            // The usual URL, read byte by byte (archive.toml's baseurl is checked at every
            // CGI request).
            v.bytes().all(|b| b.is_ascii_graphic())
        } else {
            !v.contains(|c: char| c.is_whitespace() || c.is_control())
        }
}

/// Rule `caractere` of Table 6.2: the bytes a word may hold as they are.
pub fn is_word_byte(b: u8) -> bool {
    matches!(b, 0x21..=0x7A | 0x7C | 0x7E)
}

/// Writes `bytes` as one word of Table 6.2, escaping every byte outside `caractere`.
pub fn push_word(out: &mut String, bytes: &[u8]) {
    push_escaped::<false>(out, bytes);
}

/// Appends a path to a URL, escaping each byte outside rule `caractere` and also `%`,
/// `?` and `#`, which would change the URL's meaning inside a file name. The URL stays
/// a word of Table 6.2.
pub fn push_url_path(url: &mut String, path: &[u8]) {
    push_escaped::<true>(url, path);
}

/// Appends `bytes`, each byte outside `caractere` (and, in a URL path, `%`, `?` and `#`)
/// as `%` and two lower-case hex digits. Which escaping is a constant, so that each
/// compiles to a loop of its own with the test inline: every byte of every answer goes
/// through one of them.
fn push_escaped<const URL_PATH: bool>(out: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for &b in bytes {
        if is_word_byte(b) && !(URL_PATH && matches!(b, b'%' | b'?' | b'#')) {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0x0f)]));
        }
    }
}

/// An http(s) URL a page may link to and a header may name as it is: printable ASCII, no
/// space, quote, angle bracket, backslash, comma or semicolon (which would end it in a
/// `Link` header or a Content-Security-Policy), at most 1,000 bytes. The contact and the
/// logo of an Archive's `[site]`, and the contact of a resolver's, are such URLs.
pub fn is_plain_url(v: &str) -> bool {
    is_http_url(v)
        && v.len() <= 1000
        && v.bytes()
            .all(|b| b.is_ascii_graphic() && !b"\"<>\\,;'`{}|^".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_urls_are_http_urls_a_page_and_a_header_hold_as_they_are() {
        for url in [
            "http://r.example",
            "https://r.example/contato?x=1&y=2#f",
            "http://[::1]:8080/",
        ] {
            assert!(is_plain_url(url), "{url}");
        }
        let long = format!("https://r.example/{}", "a".repeat(1000));
        for url in [
            "https://",
            "ftp://r.example/",
            "javascript:alert(1)",
            "HTTP://r.example/",
            "http://r.example/a b",
            "http://r.example/\"x\"",
            "http://r.example/<x>",
            "http://r.example/a,b",
            "http://r.example/a;b",
            "http://r.example/é",
            long.as_str(),
        ] {
            assert!(!is_plain_url(url), "{url}");
        }
    }

    #[test]
    fn uri_references() {
        assert_eq!(
            uri_reference("http://h/col/a/doc/<b>&\"'.txt"),
            "http://h/col/a/doc/%3Cb%3E&%22'.txt"
        );
        assert_eq!(uri_reference("http://h/a%20b@c"), "http://h/a%20b@c");
        assert_eq!(uri_reference("a b\\c^{|}`"), "a%20b%5Cc%5E%7B%7C%7D%60");
        assert_eq!(uri_reference("r\r\n\u{7f}é"), "r%0D%0A%7F%C3%A9");
        assert_eq!(uri_reference("http://h/a,b;c"), "http://h/a,b;c");
    }

    #[test]
    fn link_targets_escape_commas_and_semicolons_too() {
        assert_eq!(
            link_target("http://h/col/a/doc/a,b;<c> é.txt?x=1&y=2"),
            "http://h/col/a/doc/a%2Cb%3B%3Cc%3E%20%C3%A9.txt?x=1&y=2"
        );
        assert_eq!(link_target("http://h/a%2Cb"), "http://h/a%2Cb");
    }

    #[test]
    fn http_urls() {
        for yes in ["http://a", "https://example.org/l/é?x=1", "http://h/a,b;c'"] {
            assert!(is_http_url(yes), "{yes}");
        }
        for no in [
            "http://",
            "https://",
            "ftp://a.org/x",
            "HTTP://a.org",
            "http://a.org/a b",
            "https://a.org/\u{85}",
            "http://a.org/\t",
            " http://a.org",
            "mailto:a@b.org",
            "",
        ] {
            assert!(!is_http_url(no), "{no:?}");
        }
    }

    /// A value sent in a request's query: Table 6.1's characters and the bytes an http
    /// URL's query does not carry as they are, nothing else.
    #[test]
    fn query_values_escape_table_6_1_and_what_a_query_cannot_carry() {
        let written: String =
            percent_encoding::utf8_percent_encode("a b%c&d+e=f?g#h\"i<j>k'l/m:n@o~p", QUERY_VALUE)
                .collect();
        assert_eq!(
            written,
            "a%20b%25c%26d%2Be%3Df%3Fg%23h%22i%3Cj%3Ek%27l/m:n@o~p"
        );
    }

    fn word(bytes: &[u8]) -> String {
        let mut out = String::new();
        push_word(&mut out, bytes);
        out
    }

    fn url_path(bytes: &[u8]) -> String {
        let mut out = String::new();
        push_url_path(&mut out, bytes);
        out
    }

    #[test]
    fn caractere_is_0x21_to_0x7a_and_the_bar_and_the_tilde() {
        let kept: Vec<u8> = (0..=255u8).filter(|&b| is_word_byte(b)).collect();
        let mut want: Vec<u8> = (b'!'..=b'z').collect();
        want.extend([b'|', b'~']);
        assert_eq!(kept, want);
    }

    #[test]
    fn words_escape_in_lower_case_hex_as_example_6_2() {
        assert_eq!(
            word(b"doc/Relat\xf3rio Final.pdf"),
            "doc/Relat%f3rio%20Final.pdf"
        );
        assert_eq!(word(b"a{b}c\r\n\x7f\xff"), "a%7bb%7dc%0d%0a%7f%ff");
        // `%`, `?` and `#` are word bytes.
        assert_eq!(word(b"100%?#"), "100%?#");
    }

    #[test]
    fn url_paths_also_escape_what_would_change_the_url() {
        assert_eq!(
            url_path(b"Dados #1 (100% final)?.txt"),
            "Dados%20%231%20(100%25%20final)%3f.txt"
        );
        assert_eq!(
            url_path(b"Relat\xf3rio Final.pdf"),
            "Relat%f3rio%20Final.pdf"
        );
        assert_eq!(url_path(b"sub/a.pdf"), "sub/a.pdf");
    }

    #[test]
    fn every_byte_of_a_url_path_decodes_back_and_stays_a_word() {
        let all: Vec<u8> = (0..=255u8).collect();
        let escaped = url_path(&all);
        assert!(escaped.bytes().all(is_word_byte), "{escaped}");
        let decoded: Vec<u8> = percent_encoding::percent_decode(escaped.as_bytes()).collect();
        assert_eq!(decoded, all);
        // A word escapes the same bytes but `%`, `?` and `#`, which it keeps.
        for b in 0..=255u8 {
            match b {
                b'%' | b'?' | b'#' => {
                    assert_eq!(word(&[b]), char::from(b).to_string());
                    assert_eq!(url_path(&[b]), format!("%{b:02x}"));
                }
                _ => assert_eq!(word(&[b]), url_path(&[b]), "byte {b:#04x}"),
            }
        }
    }
}
