//! Lines for the web server's error log and for a terminal: whatever they echo (an
//! item.toml's text, a file name, a client's query), they cannot forge another line,
//! move a terminal's cursor or flood the log.

use std::borrow::Cow;
use std::fmt::Write;

/// Longest line written, in bytes; a longer one is cut and ends with `...`.
pub const MAX_LINE: usize = 2048;

/// `text` as one line: every control character (C0, DEL and C1, so also CR, LF, TAB
/// and ESC) written as `\xHH` (`\u{HHHH}` beyond one byte), and cut to [`MAX_LINE`]
/// bytes.
pub fn clean(text: &str) -> Cow<'_, str> {
    if text.len() <= MAX_LINE && !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len().min(MAX_LINE) + 8);
    let mut piece = String::with_capacity(10);
    for c in text.chars() {
        piece.clear();
        match c {
            c if c.is_control() && (c as u32) < 0x100 => {
                let _ = write!(piece, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                let _ = write!(piece, "\\u{{{:04x}}}", c as u32);
            }
            c => piece.push(c),
        }
        if out.len() + piece.len() > MAX_LINE - 3 {
            out.push_str("...");
            break;
        }
        out.push_str(&piece);
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_long_lines_cut() {
        assert_eq!(clean("plain line"), "plain line");
        assert_eq!(
            clean("a\nchecked 99 items: 0 faults\r\x1b[31m\u{85}"),
            "a\\x0achecked 99 items: 0 faults\\x0d\\x1b[31m\\x85"
        );
        let long = "é".repeat(MAX_LINE);
        let cut = clean(&long);
        assert!(cut.len() <= MAX_LINE, "{}", cut.len());
        assert!(cut.ends_with("..."));
    }
}
