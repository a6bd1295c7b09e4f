//! Text cut to a length in bytes without splitting a character: a client's input echoed
//! in a log line or a message, a header read only so far.

use std::borrow::Cow;

/// The longest start of `s` that is at most `max` bytes long and ends at a character
/// boundary (all of `s` when it is no longer).
pub fn prefix(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `s` as it is when at most `max` bytes long, else its [`prefix`] of `max` bytes and
/// `...`.
pub fn cut(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    Cow::Owned(format!("{}...", prefix(s, max)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_on_character_boundaries() {
        assert_eq!(prefix("abc", 5), "abc");
        assert_eq!(prefix("abc", 2), "ab");
        assert_eq!(prefix("aé", 2), "a");
        assert_eq!(prefix("aé", 3), "aé");
        assert_eq!(prefix("é", 0), "");
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("abcd", 3), "abc...");
        assert_eq!(cut("aéb", 2), "a...");
    }
}
