//! Writing item.toml: a whole new one ([`Draft::render`]), or a change to an existing one
//! that keeps the administrator's comments and layout ([`edit`]).
//!
//! A change is made on the file as `toml_edit` reads it, every comment, blank line, key
//! spelling and spacing kept: a value is replaced where it stands (its trailing comment
//! kept); a new top-level key goes after the last one, its `=` in the column of the
//! first one's; a new `[translations]` entry goes after the last one, however the table
//! is written (a `[translations]` table, an inline table, dotted keys), and the table is
//! appended when missing. The changed text is then checked: it must parse to exactly the
//! old item with the change, and be no larger than the service reads.

use std::collections::BTreeMap;
use std::path::Path;

use toml_edit::{Datetime, Decor, DocumentMut, InlineTable, Key, RawString, Table, Value};

use crate::item::{ContentType, Item, State, MAX_ITEM_TOML};
use ::ibi::relation::Lang;
use ::ibi::time::iso8601;
use ::ibi::Rep;

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
    pub reason: Option<String>,
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
            reason: item.reason.clone(),
            translations: item
                .translations
                .iter()
                .map(|(l, i)| (l.to_string(), i.as_str().to_string()))
                .collect(),
            formats: item.formats.clone(),
        }
    }

    /// The item.toml text: top-level keys in the order the README's description of item.toml
    /// gives them,
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
        if let Some(r) = &self.reason {
            top.push(("reason", quoted(r)));
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
    /// Why a tombstone was removed.
    Reason(String),
}

impl Edit {
    /// The change, made to the fields of an item.
    fn apply(&self, d: &mut Draft) {
        match self {
            Edit::State(s) => d.state = Some(*s),
            Edit::Timestamp(t) => d.timestamp = Some(*t),
            Edit::NextEdition(i) => d.nextedition = Some(i.clone()),
            Edit::Translation(l, i) => {
                d.translations.insert(l.to_string(), i.clone());
            }
            Edit::Reason(r) => d.reason = Some(r.clone()),
        }
    }

    /// The change, made to the document; refused for a time TOML cannot write (years
    /// 0000 to 9999 only).
    fn apply_to(&self, doc: &mut DocumentMut) -> Result<(), String> {
        match self {
            Edit::State(s) => set_top_key(doc, "state", Value::from(s.as_str())),
            Edit::Timestamp(t) => {
                let at: Datetime = iso8601(*t)
                    .parse()
                    .map_err(|_| format!("timestamp {t} is outside the years TOML can write"))?;
                set_top_key(doc, "timestamp", Value::from(at));
            }
            Edit::NextEdition(i) => set_top_key(doc, "nextedition", Value::from(i.as_str())),
            Edit::Translation(l, i) => set_translation(doc, l, Value::from(i.as_str())),
            Edit::Reason(r) => set_top_key(doc, "reason", Value::from(r.as_str())),
        }
        Ok(())
    }
}

/// Applies `edits` to the text of the item.toml of the item `rep` stored in `dir`: the new
/// text, with the old one's comments and layout.
pub fn edit(text: &str, dir: &Path, rep: &Rep, edits: &[Edit]) -> Result<String, String> {
    let item = Item::parse(text, dir, rep.clone())?;
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| format!("cannot be edited: {}", e.message().trim()))?;
    let mut want = Draft::of(&item);
    for e in edits {
        e.apply(&mut want);
        e.apply_to(&mut doc)?;
    }
    let changed = doc.to_string();
    let got = Item::parse(&changed, dir, rep.clone())
        .map_err(|e| format!("the changed item.toml would not be valid: {e}"))?;
    if !Draft::of(&got).same_item(&want) {
        return Err("the changed item.toml would not hold the change".into());
    }
    if changed.len() as u64 > MAX_ITEM_TOML {
        return Err(format!(
            "the changed item.toml would be larger than {MAX_ITEM_TOML} bytes, which the service does not read"
        ));
    }
    Ok(changed)
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

/// Puts `value` in `slot`, with the spacing and comment around the value there.
fn replace_value(slot: &mut toml_edit::Item, mut value: Value) {
    if let Some(old) = slot.as_value() {
        *value.decor_mut() = old.decor().clone();
    }
    *slot = toml_edit::Item::Value(value);
}

/// Replaces the value of top-level `key`, or adds `key = value` after the last top-level
/// key, its `=` in the column of the first one's (an aligned block stays aligned).
fn set_top_key(doc: &mut DocumentMut, key: &str, value: Value) {
    let root = doc.as_table_mut();
    if let Some(slot) = root.get_mut(key) {
        replace_value(slot, value);
        return;
    }
    let column = root
        .iter()
        .find(|(_, item)| item.is_value())
        .and_then(|(k, _)| root.key(k))
        .map_or(0, equals_column);
    let gap = column.saturating_sub(key.len()).max(1);
    let key = Key::new(key).with_leaf_decor(Decor::new("", " ".repeat(gap)));
    root.insert_formatted(&key, toml_edit::Item::Value(value));
}

/// The column of the `=` after `key`, counted from 0 on its line.
fn equals_column(key: &Key) -> usize {
    let decor = key.leaf_decor();
    let indent = raw_text(decor.prefix()).rsplit('\n').next().unwrap_or("");
    indent.chars().count()
        + key.display_repr().chars().count()
        + raw_text(decor.suffix()).chars().count()
}

/// The text of a part of the layout as read ("" where there is none).
fn raw_text(raw: Option<&RawString>) -> &str {
    raw.and_then(RawString::as_str).unwrap_or("")
}

/// Replaces the `[translations]` entry of language `lang` (whatever the case of its key),
/// or adds one after the last entry; appends the table when there is none.
fn set_translation(doc: &mut DocumentMut, lang: &Lang, value: Value) {
    let key = lang.to_string();
    let Some(slot) = doc.as_table_mut().get_mut("translations") else {
        append_table(doc, "translations", &key, value);
        return;
    };
    let Some(table) = slot.as_table_like_mut() else {
        // Not a table (no parsed item has one): the check of the result refuses the edit.
        return;
    };
    let same = table
        .iter()
        .map(|(k, _)| k)
        .find(|k| Lang::parse(k).is_ok_and(|l| l == *lang))
        .map(str::to_string);
    if let Some(k) = same {
        replace_value(table.get_mut(&k).expect("found above"), value);
        return;
    }
    if let Some(inline) = slot.as_inline_table_mut() {
        append_inline(inline, &key, value);
    } else if let Some(table) = slot.as_table_like_mut() {
        table.insert(&key, toml_edit::Item::Value(value));
    }
}

/// Adds `key = value` at the end of an inline table, spaced as the last entry (on a
/// line of its own when that one is). What followed the last entry's value (a space, a
/// comment before the closing brace) follows the new one; after a trailing comma, what
/// ends the last entry's line (a comment) stays on that line.
fn append_inline(table: &mut InlineTable, key: &str, mut value: Value) {
    let mut key = Key::new(key);
    let Some(last) = table.iter().last().map(|(k, _)| k.to_string()) else {
        table.insert_formatted(&key, value);
        return;
    };
    // The last key's spacing, without the comment lines above it.
    let before = table
        .key(&last)
        .map_or("", |k| raw_text(k.leaf_decor().prefix()));
    let mut spacing = match before.rsplit_once('\n') {
        Some((_, indent)) => format!("\n{indent}"),
        None => before.to_string(),
    };
    if let Some(k) = table.key(&last) {
        key.leaf_decor_mut()
            .set_suffix(raw_text(k.leaf_decor().suffix()).to_string());
    }
    if let Some(v) = table.get_mut(&last) {
        *value.decor_mut() = v.decor().clone();
        v.decor_mut().set_suffix("");
    }
    if table.trailing_comma() {
        let trailing = raw_text(Some(table.trailing())).to_string();
        if let Some((line_end, rest)) = trailing.split_once('\n') {
            spacing = format!("{line_end}\n{}", spacing.trim_start_matches('\n'));
            table.set_trailing(format!("\n{rest}"));
        }
    }
    key.leaf_decor_mut().set_prefix(spacing);
    table.insert_formatted(&key, value);
}

/// Appends `[name]` holding `key = value` at the end of the document, after a blank line:
/// the comments that end the document stay above it.
fn append_table(doc: &mut DocumentMut, name: &str, key: &str, value: Value) {
    let mut table = Table::new();
    table.insert(key, toml_edit::Item::Value(value));
    let end = raw_text(Some(doc.trailing())).trim_end().to_string();
    let prefix = if end.is_empty() {
        "\n".to_string()
    } else {
        format!("{end}\n\n")
    };
    table.decor_mut().set_prefix(prefix);
    table.set_position(Some(last_position(doc.as_table()) + 1));
    doc.set_trailing("");
    doc.as_table_mut()
        .insert(name, toml_edit::Item::Table(table));
}

/// The largest place in the document of `table` and the tables under it.
fn last_position(table: &Table) -> isize {
    let mut last = table.position().unwrap_or(0);
    for (_, item) in table.iter() {
        match item {
            toml_edit::Item::Table(t) => last = last.max(last_position(t)),
            toml_edit::Item::ArrayOfTables(a) => {
                for t in a.iter() {
                    last = last.max(last_position(t));
                }
            }
            _ => {}
        }
    }
    last
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
        assert_eq!(
            out,
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
        assert_eq!(out, "state = \"Original\"\n\n[translations]\nen = \"a.b/c/2020/01.02.03.04\"\npt-BR = \"a.b/c/2020/01.02.03.05\"\n\n[formats]\noai_dc = \"x.xml\"\n");
    }

    /// A time past the year 9999, which TOML cannot write, is refused, not a panic.
    #[test]
    fn a_timestamp_toml_cannot_write_is_refused() {
        let year_10000 = 253_402_300_800;
        assert_eq!(
            edit(
                "state = \"Original\"\n",
                Path::new("/x"),
                &rep(),
                &[Edit::Timestamp(year_10000)]
            ),
            Err(format!(
                "timestamp {year_10000} is outside the years TOML can write"
            ))
        );
    }

    /// The text `edits` make of `text`, which must keep the comments.
    fn edited(text: &str, edits: &[Edit]) -> String {
        edit(text, Path::new("/x"), &rep(), edits).unwrap()
    }

    const EN: &str = "a.b/c/2020/01.02.03.04";
    const PT: &str = "a.b/c/2020/01.02.03.05";

    fn pt() -> Edit {
        Edit::Translation(Lang::parse("pt").unwrap(), PT.into())
    }

    #[test]
    fn an_inline_table_keeps_its_comments_and_layout() {
        let text = format!(
            "# kept\nstate = \"Original\"\ntranslations = {{ en = \"{EN}\" }}  # by language\n"
        );
        assert_eq!(
            edited(&text, &[pt()]),
            format!("# kept\nstate = \"Original\"\ntranslations = {{ en = \"{EN}\", pt = \"{PT}\" }}  # by language\n")
        );
    }

    /// TOML 1.1 lets an inline table span lines and end with a comma.
    #[test]
    fn an_inline_table_over_lines_gets_a_line_of_its_own() {
        let text =
            format!("state = \"Original\"\ntranslations = {{\n  en = \"{EN}\",  # the first\n}}\n");
        assert_eq!(
            edited(&text, &[pt()]),
            format!("state = \"Original\"\ntranslations = {{\n  en = \"{EN}\",  # the first\n  pt = \"{PT}\",\n}}\n")
        );
    }

    #[test]
    fn dotted_keys_keep_their_comments_and_layout() {
        let text = format!(
            "state = \"Original\"  # kept\ntranslations.en = \"{EN}\"\nlanguage = \"de\"\n"
        );
        assert_eq!(
            edited(&text, &[pt(), Edit::NextEdition(EN.into())]),
            format!("state = \"Original\"  # kept\ntranslations.en = \"{EN}\"\ntranslations.pt = \"{PT}\"\nlanguage = \"de\"\nnextedition = \"{EN}\"\n")
        );
    }

    #[test]
    fn quoted_keys_and_a_commented_header_keep_their_comments() {
        let text = format!("\"state\" = \"Original\"  # as received\ntimestamp = 2009-07-21T13:23:45Z\n\n[translations]  # by language\nen = \"{EN}\"\n");
        assert_eq!(
            edited(&text, &[Edit::State(State::Deleted), Edit::Timestamp(1_234_567_890), pt()]),
            format!("\"state\" = \"Deleted\"  # as received\ntimestamp = 2009-02-13T23:31:30Z\n\n[translations]  # by language\nen = \"{EN}\"\npt = \"{PT}\"\n")
        );
    }

    #[test]
    fn a_language_spelt_otherwise_is_replaced_where_it_stands() {
        let text =
            format!("state = \"Original\"\n\n[translations]\npt-br = \"{EN}\"  # the first\n");
        let edit = Edit::Translation(Lang::parse("pt-BR").unwrap(), PT.into());
        assert_eq!(
            edited(&text, &[edit]),
            format!("state = \"Original\"\n\n[translations]\npt-br = \"{PT}\"  # the first\n")
        );
    }

    #[test]
    fn a_new_table_goes_after_the_last_comment_and_a_blank_line() {
        let text = "state = \"Original\"\n\n[formats]\noai_dc = \"x.xml\"\n# the end\n\n\n";
        assert_eq!(
            edited(text, &[pt()]),
            format!("state = \"Original\"\n\n[formats]\noai_dc = \"x.xml\"\n# the end\n\n[translations]\npt = \"{PT}\"\n")
        );
    }

    #[test]
    fn a_change_past_what_the_service_reads_is_refused() {
        let comment = "#".repeat(MAX_ITEM_TOML as usize - 40);
        let text = format!("{comment}\nstate = \"Original\"\n");
        assert_eq!(
            edit(&text, Path::new("/x"), &rep(), &[Edit::NextEdition(EN.into())]).err(),
            Some(format!("the changed item.toml would be larger than {MAX_ITEM_TOML} bytes, which the service does not read"))
        );
        assert!(edit(&text, Path::new("/x"), &rep(), &[Edit::State(State::Copy)]).is_ok());
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
