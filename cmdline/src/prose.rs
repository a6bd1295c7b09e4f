//! The light markup the prose of the commands and flags is written in, and its two
//! renderings: plain text for `--help` ([`plain`]) and roff for the man page ([`roff`]).
//!
//! - Blocks are parted by a blank line. A block whose lines all start with two spaces is
//!   kept as written (a table, an example): in plain text line for line, in roff between
//!   `.nf`/`.fi`, indented (`.RS`/`.RE`). Any other block is a paragraph: its lines are
//!   one text, wrapped anew (plain text: to the width asked; roff: to [`ROFF_WIDTH`]).
//! - `` `words` `` is a command or a literal: kept with its backquotes in plain text,
//!   bold in roff. `--flags` and `*` inside it are not read (but for `*NAME*`).
//! - `*NAME*` is an operand or a placeholder: `NAME` in plain text, italic in roff. A `*`
//!   that no `*` closes on the same text, or that a blank or a backquote follows, is a
//!   star as written (`` `*` ``, `a * b`).
//! - A word `--flag` (two hyphens, then a lower-case letter) is bold in roff.
//! - In roff, `\` is written `\e` and `-` `\-`, and a line that would start with `.` or
//!   `'` (which roff reads as a request) starts with `\&`. A literal, an operand or a
//!   flag that begins a word starts with `\%`: roff does not hyphenate it.

/// The width of a roff paragraph's source lines (roff fills them anew: this is only for
/// the page's source to read well).
pub const ROFF_WIDTH: usize = 80;

/// One block of prose.
enum Block<'a> {
    /// A paragraph: its lines, one text.
    Paragraph(String),
    /// Lines kept as written.
    Kept(Vec<&'a str>),
}

/// The blocks of `text`.
fn blocks(text: &str) -> Vec<Block<'_>> {
    let mut out = Vec::new();
    let mut lines: Vec<&str> = Vec::new();
    for line in text.lines().chain(std::iter::once("")) {
        if !line.trim().is_empty() {
            lines.push(line.trim_end());
        } else if lines.iter().all(|l| l.starts_with("  ")) {
            if !lines.is_empty() {
                out.push(Block::Kept(std::mem::take(&mut lines)));
            }
        } else {
            let words: Vec<&str> = lines.iter().flat_map(|l| l.split_whitespace()).collect();
            out.push(Block::Paragraph(words.join(" ")));
            lines.clear();
        }
    }
    out
}

/// What an inline text is rendered to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Plain,
    Roff,
}

/// Whether the `*` at `i` opens an operand: something not blank follows it, a letter or
/// digit is not right before it, and a `*` after something not blank closes it before the
/// text (or the literal it is in) ends.
fn opens_operand(chars: &[char], i: usize) -> bool {
    let next_ok = chars
        .get(i + 1)
        .is_some_and(|c| !c.is_whitespace() && *c != '*' && *c != '`');
    let prev_ok = i == 0 || !chars[i - 1].is_alphanumeric();
    next_ok
        && prev_ok
        && chars[i + 2..]
            .iter()
            .take_while(|c| **c != '`')
            .enumerate()
            .any(|(k, c)| *c == '*' && !chars[i + 1 + k].is_whitespace())
}

/// The length of the `--flag` at `i`, or 0.
fn flag_at(chars: &[char], i: usize) -> usize {
    let starts = chars.get(i) == Some(&'-')
        && chars.get(i + 1) == Some(&'-')
        && chars.get(i + 2).is_some_and(char::is_ascii_lowercase)
        && (i == 0 || !(chars[i - 1].is_alphanumeric() || matches!(chars[i - 1], '-' | '/')));
    if !starts {
        return 0;
    }
    let name = chars[i + 2..]
        .iter()
        .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || **c == '-')
        .count();
    let trailing = chars[i + 2..i + 2 + name]
        .iter()
        .rev()
        .take_while(|c| **c == '-')
        .count();
    2 + name - trailing
}

/// A character in roff: `\` and `-` escaped.
fn push_roff(out: &mut String, c: char) {
    match c {
        '\\' => out.push_str("\\e"),
        '-' => out.push_str("\\-"),
        c => out.push(c),
    }
}

/// Text in roff: `\` and `-` escaped ([`push_roff`] each character).
pub(crate) fn escape_roff(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_roff(&mut out, c);
    }
    out
}

/// One line or paragraph's text with its marks rendered for `to`.
fn inline(text: &str, to: Target) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut literal = false;
    let mut operand = false;
    let roff = to == Target::Roff;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        // roff: a literal, an operand or a flag that begins a word is never hyphenated.
        let nohyphen = if i == 0 || chars[i - 1].is_whitespace() {
            "\\%"
        } else {
            ""
        };
        if c == '`' {
            literal = !literal;
            operand = false;
            match (to, literal) {
                (Target::Plain, _) => out.push('`'),
                (Target::Roff, true) => {
                    out.push_str("\\fB");
                    out.push_str(nohyphen);
                }
                (Target::Roff, false) => out.push_str("\\fR"),
            }
        } else if c == '*' && operand {
            operand = false;
            if roff {
                out.push_str(if literal { "\\fB" } else { "\\fR" });
            }
        } else if c == '*' && opens_operand(&chars, i) {
            operand = true;
            if roff {
                out.push_str("\\fI");
                out.push_str(nohyphen);
            }
        } else if !literal && !operand && flag_at(&chars, i) > 0 {
            let n = flag_at(&chars, i);
            if roff {
                out.push_str("\\fB");
                out.push_str(nohyphen);
                chars[i..i + n].iter().for_each(|c| push_roff(&mut out, *c));
                out.push_str("\\fR");
            } else {
                out.extend(&chars[i..i + n]);
            }
            i += n;
            continue;
        } else if roff {
            push_roff(&mut out, c);
        } else {
            out.push(c);
        }
        i += 1;
    }
    if roff && (literal || operand) {
        out.push_str("\\fR");
    }
    out
}

/// `text` wrapped to lines of at most `width` characters (a longer word alone on its
/// line), parted at blanks.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut len = 0;
    for word in text.split_whitespace() {
        let n = word.chars().count();
        if len > 0 && len + 1 + n > width {
            lines.push(std::mem::take(&mut line));
            len = 0;
        }
        if len > 0 {
            line.push(' ');
            len += 1;
        }
        line.push_str(word);
        len += n;
    }
    if len > 0 {
        lines.push(line);
    }
    lines
}

/// `text` in plain text, paragraphs wrapped to `width`: its lines, a blank one between
/// two blocks.
pub fn plain_lines(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    for (i, block) in blocks(text).into_iter().enumerate() {
        if i > 0 {
            out.push(String::new());
        }
        match block {
            Block::Paragraph(p) => out.extend(wrap(&inline(&p, Target::Plain), width)),
            Block::Kept(lines) => out.extend(lines.iter().map(|l| inline(l, Target::Plain))),
        }
    }
    out
}

/// `text` in plain text, paragraphs wrapped to `width`, each line ended.
pub fn plain(text: &str, width: usize) -> String {
    plain_lines(text, width)
        .iter()
        .map(|l| format!("{l}\n"))
        .collect()
}

/// A line of roff that starts with `.` or `'` made text: `\&` before it.
fn protected(line: &str) -> String {
    if line.starts_with(['.', '\'']) {
        format!("\\&{line}")
    } else {
        line.to_string()
    }
}

/// `text` in roff, its blocks parted by `between` (`.PP` in a section, `.IP` in a
/// flag's paragraph), each line ended.
pub fn roff_with(text: &str, between: &str) -> String {
    let mut out = String::new();
    for (i, block) in blocks(text).into_iter().enumerate() {
        if i > 0 {
            out.push_str(between);
            out.push('\n');
        }
        match block {
            Block::Paragraph(p) => {
                for line in wrap(&inline(&p, Target::Roff), ROFF_WIDTH) {
                    out.push_str(&protected(&line));
                    out.push('\n');
                }
            }
            Block::Kept(lines) => {
                out.push_str(".nf\n.RS\n");
                for line in lines {
                    out.push_str(&protected(&inline(&line[2..], Target::Roff)));
                    out.push('\n');
                }
                out.push_str(".RE\n.fi\n");
            }
        }
    }
    out
}

/// `text` in roff, its blocks parted by `.PP`.
pub fn roff(text: &str) -> String {
    roff_with(text, ".PP")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paragraph_in_plain_text_is_wrapped_and_loses_its_stars() {
        let text = "Creates an Archive in *R* (made if\nmissing), as `ibi-archive new` mints;\nsee --email.\n";
        assert_eq!(
            plain(text, 30),
            "Creates an Archive in R (made\nif missing), as `ibi-archive\nnew` mints; see --email.\n"
        );
    }

    #[test]
    fn a_paragraph_in_roff_is_bold_italic_and_escaped() {
        let text = "Creates an Archive in *R* (made if\nmissing), as `ibi-archive new` mints;\nsee --email.\n";
        assert_eq!(
            roff(text),
            "Creates an Archive in \\fI\\%R\\fR (made if missing), as \\fB\\%ibi\\-archive new\\fR\nmints; see \\fB\\%\\-\\-email\\fR.\n"
        );
    }

    #[test]
    fn blocks_are_parted_by_a_blank_line_and_indented_ones_kept() {
        let text = "One.\n\n  item    a `*` row\n  month   *YYYY*-MM\n\nTwo.\n";
        assert_eq!(
            plain(text, 80),
            "One.\n\n  item    a `*` row\n  month   YYYY-MM\n\nTwo.\n"
        );
        assert_eq!(
            roff(text),
            "One.\n.PP\n.nf\n.RS\nitem    a \\fB\\%*\\fR row\nmonth   \\fI\\%YYYY\\fR\\-MM\n.RE\n.fi\n.PP\nTwo.\n"
        );
        assert_eq!(roff_with("One.\n\nTwo.", ".IP"), "One.\n.IP\nTwo.\n");
    }

    #[test]
    fn roff_escapes_backslashes_hyphens_and_a_leading_dot_or_quote() {
        assert_eq!(
            roff("a\\b c-d --e-f -g\n"),
            "a\\eb c\\-d \\fB\\%\\-\\-e\\-f\\fR \\-g\n"
        );
        // A wrapped line starting with a dot or a quote.
        let words = "word ".repeat(14);
        let long = format!("{words}.profile 'x'");
        assert_eq!(roff(&long), format!("{words}.profile\n\\&'x'\n"));
        let long = format!("{words}xyz .profile");
        assert_eq!(roff(&long), format!("{words}xyz\n\\&.profile\n"));
        assert_eq!(roff(".TH x\n"), "\\&.TH x\n");
        assert_eq!(roff("  .nf\n"), ".nf\n.RS\n\\&.nf\n.RE\n.fi\n");
    }

    #[test]
    fn operands_inside_literals_and_stars_as_written() {
        assert_eq!(
            roff("`ibi-archive *COMMAND* --help`, *FILE*s, `*`, a * b, x*y*z\n"),
            "\\fB\\%ibi\\-archive \\fI\\%COMMAND\\fB \\-\\-help\\fR, \\fI\\%FILE\\fRs, \\fB\\%*\\fR, a * b,\nx*y*z\n"
        );
        assert_eq!(
            roff("*-*, *a b*, * a*\n"),
            "\\fI\\%\\-\\fR, \\fI\\%a b\\fR, * a*\n"
        );
        assert_eq!(
            plain(
                "`ibi-archive *COMMAND* --help`, *FILE*s, `*`, a * b, x*y*z\n",
                80
            ),
            "`ibi-archive COMMAND --help`, FILEs, `*`, a * b, x*y*z\n"
        );
    }

    #[test]
    fn a_flag_is_two_hyphens_and_a_lower_case_letter() {
        assert_eq!(
            roff("--csv, --ip-, http://a--b, --A, -- x, (--to)\n"),
            "\\fB\\%\\-\\-csv\\fR, \\fB\\%\\-\\-ip\\fR\\-, http://a\\-\\-b, \\-\\-A, \\-\\- x, (\\fB\\-\\-to\\fR)\n"
        );
    }

    #[test]
    fn wrapping_keeps_a_long_word_whole() {
        assert_eq!(wrap("a bb ccccccc d", 4), vec!["a bb", "ccccccc", "d"]);
        assert_eq!(wrap("", 4), Vec::<String>::new());
    }
}
