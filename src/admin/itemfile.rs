//! Writing item.toml: a whole new one ([`Draft::render`]), or a change to an existing one
//! that keeps the administrator's comments and layout ([`edit`]).
//!
//! A change is made on the text, line by line (a top-level key's value replaced or added
//! before the first table; an entry replaced or added in a table, the table appended when
//! missing), then checked: the changed text must parse to exactly the old item with the
//! change. When it does not (an unusual layout, e.g. an inline `translations = {…}`
//! table), the file is rewritten from its parsed content instead, which loses its
//! comments; [`Edited::comments_kept`] tells which happened.

use std::collections::BTreeMap;
use std::path::Path;

use crate::ibi::Rep;
use crate::item::{ContentType, Item, State};
use crate::relation::Lang;
use crate::time::iso8601;

/// The content of an item.toml, field by field, as written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Draft {
    pub state: Option<State>,
    pub ibip: Option<String>,
    pub timestamp: Option<i64>,
    pub contenttype: Option<ContentType>,
    pub target: Option<String>,
    pub url: Option<String>,
    pub language: Option<String>,
    pub nextedition: Option<String>,
    pub metadata: Option<String>,
    pub restricted: Option<bool>,
    pub translations: BTreeMap<String, String>,
    pub formats: BTreeMap<String, String>,
}

impl Draft {
    /// The draft of a parsed item (defaults written out where the file left them).
    pub fn of(item: &Item) -> Draft {
        Draft {
            state: Some(item.state),
            ibip: item.ibip.as_ref().map(|p| p.as_str().to_string()),
            timestamp: item.timestamp,
            contenttype: Some(item.contenttype),
            target: item.target.clone(),
            url: item.url.clone(),
            language: item.language.as_ref().map(Lang::to_string),
            nextedition: item.nextedition.as_ref().map(|i| i.as_str().to_string()),
            metadata: item.metadata.as_ref().map(|i| i.as_str().to_string()),
            restricted: Some(item.restricted),
            translations: item
                .translations
                .iter()
                .map(|(l, i)| (l.to_string(), i.as_str().to_string()))
                .collect(),
            formats: item.formats.clone(),
        }
    }

    /// The item.toml text: top-level keys in the order of the product contract (SPEC §2),
    /// then `[translations]` and `[formats]`; `contenttype = "Data"` and
    /// `restricted = false` (the defaults) left out.
    pub fn render(&self) -> String {
        let mut top: Vec<(&str, String)> = Vec::new();
        if let Some(s) = self.state {
            top.push(("state", quoted(s.as_str())));
        }
        if let Some(p) = &self.ibip {
            top.push(("ibip", quoted(p)));
        }
        if let Some(t) = self.timestamp {
            top.push(("timestamp", iso8601(t)));
        }
        if self.contenttype == Some(ContentType::Metadata) {
            top.push(("contenttype", quoted("Metadata")));
        }
        for (key, value) in [
            ("target", &self.target),
            ("url", &self.url),
            ("language", &self.language),
            ("nextedition", &self.nextedition),
            ("metadata", &self.metadata),
        ] {
            if let Some(v) = value {
                top.push((key, quoted(v)));
            }
        }
        if self.restricted == Some(true) {
            top.push(("restricted", "true".into()));
        }
        let width = top.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        let mut out = String::new();
        for (k, v) in &top {
            out.push_str(&format!("{k:<width$} = {v}\n"));
        }
        for (name, table) in [
            ("translations", &self.translations),
            ("formats", &self.formats),
        ] {
            if table.is_empty() {
                continue;
            }
            out.push_str(&format!("\n[{name}]\n"));
            for (k, v) in table {
                out.push_str(&format!("{} = {}\n", key_text(k), quoted(v)));
            }
        }
        out
    }

    /// Whether two drafts describe the same item (defaults and explicit values alike).
    fn same_item(&self, other: &Draft) -> bool {
        let norm = |d: &Draft| {
            let mut d = d.clone();
            d.contenttype = Some(d.contenttype.unwrap_or_default());
            d.restricted = Some(d.restricted.unwrap_or(false));
            d
        };
        norm(self) == norm(other)
    }
}

/// One change to an existing item.toml.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    State(State),
    Timestamp(i64),
    NextEdition(String),
    /// An entry of `[translations]`: language and the IBI of the translation.
    Translation(Lang, String),
}

impl Edit {
    fn apply(&self, d: &mut Draft) {
        match self {
            Edit::State(s) => d.state = Some(*s),
            Edit::Timestamp(t) => d.timestamp = Some(*t),
            Edit::NextEdition(i) => d.nextedition = Some(i.clone()),
            Edit::Translation(l, i) => {
                d.translations.insert(l.to_string(), i.clone());
            }
        }
    }

    fn apply_text(&self, text: &str) -> String {
        match self {
            Edit::State(s) => set_top_key(text, "state", &quoted(s.as_str())),
            Edit::Timestamp(t) => set_top_key(text, "timestamp", &iso8601(*t)),
            Edit::NextEdition(i) => set_top_key(text, "nextedition", &quoted(i)),
            Edit::Translation(l, i) => {
                set_table_entry(text, "translations", &l.to_string(), &quoted(i))
            }
        }
    }
}

/// The new text of an item.toml after [`edit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    pub text: String,
    /// false: the file had to be rewritten from its content; its comments are gone.
    pub comments_kept: bool,
}

/// Applies `edits` to the text of the item.toml of the item `rep` stored in `dir`.
pub fn edit(text: &str, dir: &Path, rep: &Rep, edits: &[Edit]) -> Result<Edited, String> {
    let item = Item::parse(text, dir, rep.clone())?;
    let mut want = Draft::of(&item);
    for e in edits {
        e.apply(&mut want);
    }
    let mut changed = text.to_string();
    for e in edits {
        changed = e.apply_text(&changed);
    }
    let same = Item::parse(&changed, dir, rep.clone())
        .map(|i| Draft::of(&i).same_item(&want))
        .unwrap_or(false);
    if same {
        return Ok(Edited {
            text: changed,
            comments_kept: true,
        });
    }
    let text = want.render();
    Item::parse(&text, dir, rep.clone()).map_err(|e| format!("rewritten item.toml: {e}"))?;
    Ok(Edited {
        text,
        comments_kept: false,
    })
}

/// A TOML basic string.
pub fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A key as TOML writes it: bare when it can be.
fn key_text(k: &str) -> String {
    if !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        k.to_string()
    } else {
        quoted(k)
    }
}

fn is_header(line: &str) -> bool {
    line.trim_start().starts_with('[')
}

/// Whether `line` assigns bare key `key` (`key = …`, any spacing).
fn assigns(line: &str, key: &str) -> Option<usize> {
    let t = line.trim_start();
    let rest = t.strip_prefix(key)?;
    let after = rest.trim_start();
    after.starts_with('=').then(|| line.len() - after.len())
}

/// `line` (an assignment whose `=` is at `eq`) with its value replaced by `value`, its
/// trailing comment kept.
fn replaced(line: &str, eq: usize, value: &str) -> String {
    let rest = &line[eq + 1..];
    let comment = rest
        .match_indices('#')
        .map(|(i, _)| i)
        .find(|&i| toml::from_str::<toml::Table>(&format!("v = {}", &rest[..i])).is_ok())
        .map(|i| {
            let before = &rest[..i];
            let gap = &before[before.trim_end().len()..];
            format!("{}{}", if gap.is_empty() { " " } else { gap }, &rest[i..])
        })
        .unwrap_or_default();
    format!("{}= {value}{comment}", &line[..eq])
}

fn split_lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

fn join_lines(lines: &[String]) -> String {
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// Replaces the value of top-level `key`, or adds `key = value` after the last top-level
/// assignment (aligned like the others).
fn set_top_key(text: &str, key: &str, value: &str) -> String {
    let mut lines = split_lines(text);
    let end = lines
        .iter()
        .position(|l| is_header(l))
        .unwrap_or(lines.len());
    for line in lines.iter_mut().take(end) {
        if let Some(eq) = assigns(line, key) {
            *line = replaced(line, eq, value);
            return join_lines(&lines);
        }
    }
    // The column of `=` of the first assignment, to keep an aligned block aligned.
    let pad = lines[..end]
        .iter()
        .find_map(|l| {
            let t = l.trim_start();
            if t.is_empty() || t.starts_with('#') {
                return None;
            }
            l.find('=').map(|i| i.saturating_sub(1))
        })
        .unwrap_or(0)
        .max(key.len());
    let new = format!("{key:<pad$} = {value}");
    let at = lines[..end]
        .iter()
        .rposition(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('#')
        })
        .map_or(0, |i| i + 1);
    lines.insert(at, new);
    join_lines(&lines)
}

/// Replaces or adds `key = value` in `[table]`, appending the table when it is missing.
fn set_table_entry(text: &str, table: &str, key: &str, value: &str) -> String {
    let mut lines = split_lines(text);
    let header = lines.iter().position(|l| {
        let t = l.trim();
        t.strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            .is_some_and(|name| name.trim() == table)
    });
    let key = key_text(key);
    let Some(h) = header else {
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
        }
        lines.push(String::new());
        lines.push(format!("[{table}]"));
        lines.push(format!("{key} = {value}"));
        return join_lines(&lines);
    };
    let end = lines[h + 1..]
        .iter()
        .position(|l| is_header(l))
        .map_or(lines.len(), |i| h + 1 + i);
    for line in lines.iter_mut().take(end).skip(h + 1) {
        if let Some(eq) = assigns(line, &key) {
            *line = replaced(line, eq, value);
            return join_lines(&lines);
        }
    }
    let at = lines[h + 1..end]
        .iter()
        .rposition(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('#')
        })
        .map_or(h + 1, |i| h + 2 + i);
    lines.insert(at, format!("{key} = {value}"));
    join_lines(&lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep() -> Rep {
        Rep::parse("example.org/archive/2026/01.02.03.04").unwrap()
    }

    #[test]
    fn edits_keep_comments_and_alignment() {
        let text = "# the first report\nstate     = \"Original\"  # ours\ntimestamp = 2009-07-21T13:23:45Z\nlanguage  = \"en\"\n\n[formats]\n";
        let text = text.replace("[formats]\n", "");
        let out = edit(
            &text,
            Path::new("/x"),
            &rep(),
            &[
                Edit::NextEdition("a.b/c/2020/01.02.03.04".into()),
                Edit::Translation(Lang::parse("pt").unwrap(), "a.b/c/2020/01.02.03.05".into()),
                Edit::State(State::Deleted),
            ],
        )
        .unwrap();
        assert!(out.comments_kept);
        assert_eq!(
            out.text,
            "# the first report\nstate     = \"Deleted\"  # ours\ntimestamp = 2009-07-21T13:23:45Z\nlanguage  = \"en\"\nnextedition = \"a.b/c/2020/01.02.03.04\"\n\n[translations]\npt = \"a.b/c/2020/01.02.03.05\"\n"
        );
    }

    #[test]
    fn entries_go_into_an_existing_table_before_the_next_one() {
        let text = "state = \"Original\"\n\n[translations]\nen = \"a.b/c/2020/01.02.03.04\"\n\n[formats]\noai_dc = \"x.xml\"\n";
        let out = edit(
            text,
            Path::new("/x"),
            &rep(),
            &[Edit::Translation(
                Lang::parse("pt-br").unwrap(),
                "a.b/c/2020/01.02.03.05".into(),
            )],
        )
        .unwrap();
        assert!(out.comments_kept);
        assert_eq!(out.text, "state = \"Original\"\n\n[translations]\nen = \"a.b/c/2020/01.02.03.04\"\npt-BR = \"a.b/c/2020/01.02.03.05\"\n\n[formats]\noai_dc = \"x.xml\"\n");
    }

    #[test]
    fn an_inline_table_is_rewritten_without_comments() {
        let text =
            "# gone\nstate = \"Original\"\ntranslations = { en = \"a.b/c/2020/01.02.03.04\" }\n";
        let out = edit(
            text,
            Path::new("/x"),
            &rep(),
            &[Edit::Translation(
                Lang::parse("pt").unwrap(),
                "a.b/c/2020/01.02.03.05".into(),
            )],
        )
        .unwrap();
        assert!(!out.comments_kept);
        assert_eq!(out.text, "state = \"Original\"\n\n[translations]\nen = \"a.b/c/2020/01.02.03.04\"\npt = \"a.b/c/2020/01.02.03.05\"\n");
    }

    #[test]
    fn render_parses_back() {
        let d = Draft {
            state: Some(State::Copy),
            ibip: Some("LK47B6W/362SFKH".into()),
            timestamp: Some(1_234_567_890),
            contenttype: Some(ContentType::Metadata),
            target: Some("a \"b\".html".into()),
            formats: [("oai_dc".to_string(), "oai_dc.xml".to_string())].into(),
            ..Draft::default()
        };
        let text = d.render();
        let item = Item::parse(&text, Path::new("/x"), rep()).unwrap();
        assert!(Draft::of(&item).same_item(&d), "{text}");
    }
}
