//! Faults of a TOML file (archive.toml, an item.toml) as the commands, `check` and the
//! service's log lines write them: `FILE:LINE:COLUMN: message`, as compilers write theirs,
//! with the toml crate's short message and never a line of the file (which may hold the
//! registration key).

use std::fmt;

/// A place in a text file: its line and its column, both counted from 1, the column in
/// characters (as compilers count them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

impl Position {
    /// The place of byte `offset` of `text` (its end, when past it).
    pub fn of_offset(text: &str, offset: usize) -> Position {
        let before = crate::text::prefix(text, offset);
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Position {
            line: before.bytes().filter(|&b| b == b'\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// The one way a fault of a file (archive.toml, an item.toml) is written, in commands,
/// `check` and the service's log lines: `FILE:LINE:COLUMN: message` as compilers write
/// theirs when the place is known, else `FILE: message`.
pub fn located(
    file: impl fmt::Display,
    at: Option<Position>,
    message: impl fmt::Display,
) -> String {
    match at {
        Some(p) => format!("{file}:{p}: {message}"),
        None => format!("{file}: {message}"),
    }
}

/// What is wrong with the text of an archive.toml or an item.toml, and where when the
/// TOML reader says where. Shown alone (no file known) as `LINE:COLUMN: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextError {
    pub at: Option<Position>,
    /// One line, lower case; never a value of the text (a registration key could be one).
    pub message: String,
}

impl TextError {
    /// A fault found past the TOML reader: the message names the setting.
    pub fn unplaced(message: String) -> TextError {
        TextError { at: None, message }
    }

    /// A TOML error in `text`, as one line for the web server's error log, placed at the
    /// start of the error's span. The toml crate's own message has no position (its
    /// `Display` quotes the source line, which may hold the registration key: never
    /// used) and, for a duplicate key, does not name it (just "duplicate key"): the key
    /// as written is added from the span, which is then the key itself, never its value.
    pub fn toml(text: &str, e: &toml::de::Error) -> TextError {
        let mut message = e.message().trim().replace('\n', "; ");
        if message == "duplicate key" {
            if let Some(key) = e.span().and_then(|s| text.get(s)) {
                message = format!("duplicate key `{key}`");
            }
        }
        TextError {
            at: e.span().map(|s| Position::of_offset(text, s.start)),
            message,
        }
    }
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some(p) => write!(f, "{p}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_lines_and_columns_of_characters_from_one() {
        let text = "a = 1\r\nb = \"é\" x\n";
        assert_eq!(
            Position::of_offset(text, 0),
            Position { line: 1, column: 1 }
        );
        // x is the 9th character of its line (é is two bytes, one character).
        let x = text.find('x').unwrap();
        assert_eq!(
            Position::of_offset(text, x),
            Position { line: 2, column: 9 }
        );
        // Inside a character: that character's place; past the end: the end.
        assert_eq!(
            Position::of_offset(text, x - 3),
            Position { line: 2, column: 6 }
        );
        assert_eq!(
            Position::of_offset(text, 999),
            Position { line: 3, column: 1 }
        );
        assert_eq!(
            located("archive.toml", Some(Position { line: 2, column: 9 }), "bad"),
            "archive.toml:2:9: bad"
        );
        assert_eq!(located("archive.toml", None, "bad"), "archive.toml: bad");
    }
}
