//! Text put into HTML pages and XML documents (the file-list page, an item's Dublin
//! Core metadata, the resolver's pages): the five characters markup gives a meaning to,
//! written as references.

/// `s` escaped for HTML or XML text and attribute values, `'` written as `apostrophe`
/// (`&#39;` in HTML pages, `&apos;` in XML).
pub fn escape_markup(s: &str, apostrophe: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str(apostrophe),
            c => out.push(c),
        }
    }
    out
}

/// `s` escaped for an HTML page's text and attribute values.
pub fn escape_html(s: &str) -> String {
    escape_markup(s, "&#39;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_five_characters_become_references() {
        let s = "<a href=\"x?a=1&b='2'\">é</a>";
        assert_eq!(
            escape_html(s),
            "&lt;a href=&quot;x?a=1&amp;b=&#39;2&#39;&quot;&gt;é&lt;/a&gt;"
        );
        assert_eq!(
            escape_markup(s, "&apos;"),
            "&lt;a href=&quot;x?a=1&amp;b=&apos;2&apos;&quot;&gt;é&lt;/a&gt;"
        );
        assert_eq!(escape_html("plain"), "plain");
    }
}
