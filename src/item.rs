//! One identified item on disk: `col/<rep>/item.toml` (its state and relations) beside
//! `col/<rep>/doc/` (its content).

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::Config;
use crate::layout::ItemDir;
use ::ibi::relation::Lang;
use ::ibi::toml_error::{located, Position, TextError};
use ::ibi::{Ibi, Ibip, Rep};

pub use ::ibi::item::{ContentType, State};

/// Largest item.toml we read; a bigger one is a fault, not an item.
pub const MAX_ITEM_TOML: u64 = 64 * 1024;

/// Most bytes of a tombstone's `reason` its landing page shows.
pub const MAX_REASON: usize = 500;

#[derive(Deserialize, PartialEq, Debug)]
#[serde(deny_unknown_fields)]
struct RawItem {
    state: State,
    ibip: Option<String>,
    timestamp: Option<toml::value::Datetime>,
    contenttype: Option<ContentType>,
    target: Option<String>,
    url: Option<String>,
    language: Option<String>,
    nextedition: Option<String>,
    metadata: Option<String>,
    restricted: Option<bool>,
    reason: Option<String>,
    #[serde(default)]
    translations: BTreeMap<String, String>,
    #[serde(default)]
    formats: BTreeMap<String, String>,
}

/// A checked item.toml, with the directory it was read from.
#[derive(Debug, Clone)]
pub struct Item {
    /// `col/<rep>` as found on disk.
    pub dir: PathBuf,
    /// The directory, opened, when the item was loaded from an Archive (its doc/ is
    /// reached from it; see `layout`).
    pub handle: Option<ItemDir>,
    /// The timestamp of an item.toml without one, once worked out (see
    /// `service::Archive::timestamp`).
    pub default_timestamp: OnceCell<i64>,
    /// The item's uniform repository name, spelled as its directory is.
    pub rep: Rep,
    pub state: State,
    pub ibip: Option<Ibip>,
    /// Seconds since the epoch (UTC) of the last update or removal, if recorded.
    pub timestamp: Option<i64>,
    pub contenttype: ContentType,
    pub target: Option<String>,
    pub url: Option<String>,
    pub language: Option<Lang>,
    pub nextedition: Option<Ibi>,
    pub metadata: Option<Ibi>,
    pub restricted: bool,
    /// Why a tombstone was removed, as its landing page says it (at most
    /// [`MAX_REASON`] bytes of it are shown; `ibi-archive check` reports a longer one).
    pub reason: Option<String>,
    pub translations: Vec<(Lang, Ibi)>,
    pub formats: BTreeMap<String, String>,
}

impl Item {
    /// Reads and checks the item.toml of the item directory `dir`, named `rep`.
    pub fn load(dir: &ItemDir, rep: Rep) -> Result<Item, ItemError> {
        // The place of a fault in the text, kept while the message goes through the
        // reader (which may put another message in its stead: then it has no place).
        let mut placed: Option<(Position, String)> = None;
        dir.read_item_toml(MAX_ITEM_TOML, |text| {
            Item::parse_text(text, dir.path(), rep).map_err(|e| {
                if let Some(at) = e.at {
                    placed = Some((at, e.message.clone()));
                }
                e.message
            })
        })
        .map(|item| Item {
            handle: Some(dir.clone()),
            ..item
        })
        .map_err(|message| ItemError {
            path: dir.path().join(crate::layout::ITEM_TOML),
            at: placed.and_then(|(at, m)| (m == message).then_some(at)),
            message,
        })
    }

    /// Parses the text of an item.toml; the error says what is wrong, after
    /// `LINE:COLUMN: ` when the TOML reader says where (see [`TextError`]).
    pub fn parse(text: &str, dir: &Path, rep: Rep) -> Result<Item, String> {
        Item::parse_text(text, dir, rep).map_err(|e| e.to_string())
    }

    /// [`Item::parse`], the place of the fault kept apart.
    fn parse_text(text: &str, dir: &Path, rep: Rep) -> Result<Item, TextError> {
        let raw = match scan(text) {
            Some(raw) => raw,
            None => toml::from_str(text).map_err(|e| TextError::toml(text, &e))?,
        };
        Item::check(raw, dir, rep).map_err(TextError::unplaced)
    }

    /// The checks of [`Item::parse_text`] past the TOML reader.
    fn check(raw: RawItem, dir: &Path, rep: Rep) -> Result<Item, String> {
        let ibip = match raw.ibip {
            None => None,
            Some(s) => Some(Ibip::parse(&s).map_err(|e| format!("ibip: {e}"))?),
        };
        let timestamp = match raw.timestamp {
            None => None,
            Some(dt) => Some(datetime_seconds(&dt).ok_or_else(|| {
                format!(
                    "timestamp {dt} is not a full UTC date and time such as 2009-07-21T13:23:45Z"
                )
            })?),
        };
        let language = match raw.language {
            None => None,
            Some(s) => Some(Lang::parse(&s).map_err(|e| format!("language: {e}"))?),
        };
        let nextedition = match raw.nextedition {
            None => None,
            Some(s) => Some(Ibi::parse(&s).map_err(|e| format!("nextedition: {e}"))?),
        };
        let metadata = match raw.metadata {
            None => None,
            Some(s) => Some(Ibi::parse(&s).map_err(|e| format!("metadata: {e}"))?),
        };
        let mut translations = Vec::with_capacity(raw.translations.len());
        for (lang, ibi) in raw.translations {
            let lang = Lang::parse(&lang).map_err(|e| format!("translations: {e}"))?;
            let ibi = Ibi::parse(&ibi).map_err(|e| format!("translations.{lang}: {e}"))?;
            translations.push((lang, ibi));
        }
        if let Some(t) = &raw.target {
            check_relative_file(t).map_err(|e| format!("target: {e}"))?;
        }
        for (format, file) in &raw.formats {
            check_relative_file(file).map_err(|e| format!("formats.{format}: {e}"))?;
        }
        // Any format a harvester can ask for by name (OAI-PMH's metadataPrefix): the
        // resolution standard's relations name oai_dc only, the data provider every one.
        for f in raw.formats.keys() {
            if !is_format_name(f) {
                return Err(format!(
                    "formats: {f:?} is not a format name (letters, digits and -_.!~*'(), at most 64)"
                ));
            }
        }
        if let Some(url) = &raw.url {
            if !(url.starts_with("http://") || url.starts_with("https://"))
                || url.bytes().any(|b| !::ibi::escape::is_word_byte(b))
            {
                return Err(format!("url {url:?} is not an http(s) URL without spaces"));
            }
        }
        Ok(Item {
            dir: dir.to_path_buf(),
            handle: None,
            default_timestamp: OnceCell::new(),
            rep,
            state: raw.state,
            ibip,
            timestamp,
            contenttype: raw.contenttype.unwrap_or_default(),
            target: raw.target,
            url: raw.url,
            language,
            nextedition,
            metadata,
            restricted: raw.restricted.unwrap_or(false),
            reason: raw.reason,
            translations,
            formats: raw.formats,
        })
    }

    /// The item's `doc/` folder.
    pub fn doc(&self) -> PathBuf {
        self.dir.join(crate::layout::DOC)
    }

    /// Whether what the item gives depends on the client's network ([`Item::access`]
    /// may answer differently from one client to another): a restricted item that is
    /// not a tombstone. Every answer made of such an item is private to its client (see
    /// [`crate::http::PRIVATE`]).
    pub fn depends_on_network(&self) -> bool {
        self.rule().depends_on_network()
    }

    /// The rule for every file of the item and every URL to one: a tombstone is never
    /// served; a restricted item only to clients inside `[access].networks` (§9.2 of
    /// the resolution standard). The client is the address of the connection when a
    /// file is fetched, and `clientinformation.ipaddress` when the service hands out a
    /// URL.
    pub fn access(&self, config: &Config, client: Option<IpAddr>) -> Access {
        self.rule().access(config, client)
    }

    /// What of item.toml decides who may have the item's files ([`Item::access`]), apart
    /// from the rest of it: what a process answering many requests keeps of an item.
    pub fn rule(&self) -> Rule {
        Rule {
            deleted: self.state == State::Deleted,
            restricted: self.restricted,
        }
    }

    /// The IBI the item is cited by: its IBIp, else its rep.
    pub fn cited_as(&self) -> &str {
        self.ibip.as_ref().map_or(self.rep.as_str(), |p| p.as_str())
    }

    /// The item's persistent URL ([`Config::persistent_url`]): by its IBIp, else its
    /// rep. What its landing page shows and cites, and the identifier of its record in
    /// the OAI-PMH data provider.
    pub fn persistent_url(&self, config: &Config) -> String {
        config.persistent_url(self.cited_as())
    }

    /// Whether the item is a record of the OAI-PMH data provider: a metadata item, not
    /// restricted (the metadata of a restricted metadata item is for the licensed
    /// networks only, and a harvester's list is the same for every client).
    pub fn is_record(&self) -> bool {
        self.contenttype == ContentType::Metadata && !self.restricted
    }
}

/// Whether `name` can be an OAI-PMH metadataPrefix (the protocol's schema:
/// `[A-Za-z0-9\-_\.!~\*'\(\)]+`), and so a format this file and the provider know.
pub fn is_format_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b))
}

/// Who may have an item's files, as its item.toml says ([`Item::rule`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The item is a tombstone.
    pub deleted: bool,
    /// `restricted = true`.
    pub restricted: bool,
}

impl Rule {
    /// [`Item::depends_on_network`].
    pub fn depends_on_network(&self) -> bool {
        self.restricted && !self.deleted
    }

    /// [`Item::access`].
    pub fn access(&self, config: &Config, client: Option<IpAddr>) -> Access {
        if self.deleted {
            Access::Deleted
        } else if self.restricted && !config.client_allowed(client) {
            Access::Restricted
        } else {
            Access::Granted
        }
    }
}

/// Whether a client may have the data of an item ([`Item::access`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Granted,
    /// The item is restricted and the client is outside `[access].networks`.
    Restricted,
    /// The item is a tombstone: its files are never served, whatever doc/ still holds.
    Deleted,
}

/// item.toml as `ibi-archive new` and the generators write it, read without the TOML
/// reader: every item an answer involves is one item.toml, and the TOML reader is most
/// of the cost of loading one (BENCHMARKS.md, "The CGI's start"). It takes only what it
/// is sure of, and says `None` for anything else, which the TOML reader then reads and
/// judges, errors included: lines of `key = value` with bare keys, each of the settings
/// of [`RawItem`] once, as a basic string without escapes (`state` and `contenttype`
/// one of their names, `restricted` `true` or `false`, `timestamp` a date and time of
/// the form `2009-07-21T13:23:45Z`); `[translations]` and `[formats]` once each, of keys
/// and basic strings; blank lines, comments, `\n` or `\r\n` line ends. What it gives is
/// what the TOML reader gives for the same text (`scanner_agrees`; a test and the
/// `item_toml` fuzz target hold it to that).
fn scan(text: &str) -> Option<RawItem> {
    #[derive(Clone, Copy, PartialEq)]
    enum Table {
        Top,
        Translations,
        Formats,
    }
    let mut table = Table::Top;
    let mut seen_tables = (false, false);
    let mut state = None;
    let mut raw = RawItem {
        state: State::Original,
        ibip: None,
        timestamp: None,
        contenttype: None,
        target: None,
        url: None,
        language: None,
        nextedition: None,
        metadata: None,
        restricted: None,
        reason: None,
        translations: BTreeMap::new(),
        formats: BTreeMap::new(),
    };
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let line = line.trim_start_matches([' ', '\t']);
        if line.is_empty() || line.starts_with('#') {
            comment_ok(line)?;
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let (name, rest) = rest.split_once(']')?;
            let rest = rest.trim_start_matches([' ', '\t']);
            if !(rest.is_empty() || rest.starts_with('#')) {
                return None;
            }
            comment_ok(rest)?;
            table = match name {
                "translations" if !seen_tables.0 => {
                    seen_tables.0 = true;
                    Table::Translations
                }
                "formats" if !seen_tables.1 => {
                    seen_tables.1 = true;
                    Table::Formats
                }
                _ => return None,
            };
            continue;
        }
        let key_len = line
            .bytes()
            .position(|b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'-'))?;
        let (key, rest) = line.split_at(key_len);
        let rest = rest.trim_start_matches([' ', '\t']).strip_prefix('=')?;
        let rest = rest.trim_start_matches([' ', '\t']);
        if key.is_empty() {
            return None;
        }
        let (value, rest) = if let Some(quoted) = rest.strip_prefix('"') {
            let (s, rest) = quoted.split_once('"')?;
            if s.chars()
                .any(|c| c == '\\' || (c.is_control() && c != '\t'))
            {
                return None;
            }
            (Value::Str(s), rest)
        } else if let Some(rest) = rest.strip_prefix("true") {
            (Value::Bool(true), rest)
        } else if let Some(rest) = rest.strip_prefix("false") {
            (Value::Bool(false), rest)
        } else {
            let (token, rest) = rest.split_at_checked(20)?;
            let b = token.as_bytes();
            let shape = b.iter().enumerate().all(|(i, &c)| match i {
                4 | 7 => c == b'-',
                10 => c == b'T',
                13 | 16 => c == b':',
                19 => c == b'Z',
                _ => c.is_ascii_digit(),
            });
            if !shape {
                return None;
            }
            (Value::Datetime(token.parse().ok()?), rest)
        };
        // Only blanks and a comment after the value: `x = "a" "b"` is the reader's.
        let rest = rest.trim_start_matches([' ', '\t']);
        if !(rest.is_empty() || rest.starts_with('#')) {
            return None;
        }
        comment_ok(rest)?;
        let once = |slot: &mut Option<String>, v: Value<'_>| match (slot.is_none(), v) {
            (true, Value::Str(s)) => {
                *slot = Some(s.to_string());
                Some(())
            }
            _ => None,
        };
        match table {
            Table::Translations | Table::Formats => {
                let Value::Str(s) = value else { return None };
                let map = if table == Table::Formats {
                    &mut raw.formats
                } else {
                    &mut raw.translations
                };
                if map.insert(key.to_string(), s.to_string()).is_some() {
                    return None;
                }
            }
            Table::Top => match (key, value) {
                ("state", Value::Str(s)) if state.is_none() => {
                    state = Some(match s {
                        "Original" => State::Original,
                        "Copy" => State::Copy,
                        "Deleted" => State::Deleted,
                        _ => return None,
                    })
                }
                ("contenttype", Value::Str(s)) if raw.contenttype.is_none() => {
                    raw.contenttype = Some(match s {
                        "Data" => ContentType::Data,
                        "Metadata" => ContentType::Metadata,
                        _ => return None,
                    })
                }
                ("restricted", Value::Bool(b)) if raw.restricted.is_none() => {
                    raw.restricted = Some(b)
                }
                ("timestamp", Value::Datetime(dt)) if raw.timestamp.is_none() => {
                    raw.timestamp = Some(dt)
                }
                ("ibip", v) => once(&mut raw.ibip, v)?,
                ("target", v) => once(&mut raw.target, v)?,
                ("url", v) => once(&mut raw.url, v)?,
                ("language", v) => once(&mut raw.language, v)?,
                ("nextedition", v) => once(&mut raw.nextedition, v)?,
                ("metadata", v) => once(&mut raw.metadata, v)?,
                ("reason", v) => once(&mut raw.reason, v)?,
                _ => return None,
            },
        }
    }
    raw.state = state?;
    Some(raw)
}

/// A value [`scan`] reads.
enum Value<'a> {
    Str(&'a str),
    Bool(bool),
    Datetime(toml::value::Datetime),
}

/// `Some` when `rest` is nothing or a comment of characters TOML allows in one (no
/// control character but tab).
fn comment_ok(rest: &str) -> Option<()> {
    (!rest.chars().any(|c| c.is_control() && c != '\t')).then_some(())
}

/// Whether [`scan`] gives what the TOML reader gives for `text`, where it gives anything
/// (the `item_toml` fuzz target asks it of every input).
#[doc(hidden)]
pub fn scanner_agrees(text: &str) -> bool {
    match scan(text) {
        None => true,
        Some(raw) => toml::from_str::<RawItem>(text).is_ok_and(|r| r == raw),
    }
}

/// A file name given in item.toml must stay inside doc/: relative, no `..`, no NUL.
pub fn check_relative_file(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("empty file name".into());
    }
    if name.starts_with('/') || name.contains('\0') || name.contains('\\') {
        return Err(format!("{name:?} is not a relative path inside doc/"));
    }
    if name
        .split('/')
        .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return Err(format!("{name:?} is not a plain relative path inside doc/"));
    }
    Ok(())
}

/// Seconds since the epoch of a TOML offset date-time (or a local one, read as UTC; seconds
/// left out, as TOML 1.1 allows, are zero).
fn datetime_seconds(dt: &toml::value::Datetime) -> Option<i64> {
    let date = dt.date?;
    let time = dt.time?;
    let naive = chrono::NaiveDate::from_ymd_opt(
        i32::from(date.year),
        u32::from(date.month),
        u32::from(date.day),
    )?
    .and_hms_opt(
        u32::from(time.hour),
        u32::from(time.minute),
        u32::from(time.second.unwrap_or(0)),
    )?;
    let offset_minutes = match dt.offset {
        None | Some(toml::value::Offset::Z) => 0,
        Some(toml::value::Offset::Custom { minutes }) => i64::from(minutes),
    };
    Some(naive.and_utc().timestamp() - offset_minutes * 60)
}

/// An item.toml that cannot be read or is not valid. Shown as [`located`] writes it:
/// `<path>:LINE:COLUMN: <message>` or `<path>: <message>`.
#[derive(Debug, Clone)]
pub struct ItemError {
    pub path: PathBuf,
    /// Where in the file, when the TOML reader said.
    pub at: Option<Position>,
    pub message: String,
}

impl fmt::Display for ItemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&located(self.path.display(), self.at, &self.message))
    }
}

impl std::error::Error for ItemError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Item, String> {
        let rep = Rep::parse("a.b/c/2020/01.01.00.00").unwrap();
        Item::parse(text, Path::new("col/a.b/c/2020/01.01.00.00"), rep)
    }

    #[test]
    fn formats_are_any_a_harvester_can_name() {
        let item = parse(
            "state = \"Original\"\ncontenttype = \"Metadata\"\n[formats]\noai_dc = \"oai_dc.xml\"\nmods = \"mods.xml\"\n",
        )
        .unwrap();
        assert_eq!(item.formats.keys().collect::<Vec<_>>(), ["mods", "oai_dc"]);
        let bad = parse("state = \"Original\"\n[formats]\n\"mo ds\" = \"mods.xml\"\n").unwrap_err();
        assert!(bad.contains("\"mo ds\" is not a format name"), "{bad}");
        let outside = parse("state = \"Original\"\n[formats]\nmods = \"../x.xml\"\n").unwrap_err();
        assert!(outside.starts_with("formats.mods: "), "{outside}");
    }
}

#[cfg(test)]
mod scanner_tests {
    use super::*;

    /// Every item.toml of the sample Archive, and each of the fuzz corpus: what the scanner
    /// reads, the TOML reader reads the same; and the sample's items (as `new` writes
    /// them) are all read by the scanner.
    #[test]
    fn the_scanner_reads_what_the_toml_reader_reads() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut scanned = 0;
        for entry in walkdir::WalkDir::new(repo.join("sample-archive/col")) {
            let entry = entry.unwrap();
            if entry.file_name() == "item.toml" {
                let text = std::fs::read_to_string(entry.path()).unwrap();
                assert!(scanner_agrees(&text), "{}", entry.path().display());
                assert!(scan(&text).is_some(), "{}", entry.path().display());
                scanned += 1;
            }
        }
        assert!(scanned >= 10, "{scanned}");
        for entry in std::fs::read_dir(repo.join("fuzz/corpus/item_toml")).unwrap() {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            assert!(scanner_agrees(&String::from_utf8_lossy(&bytes)));
        }
    }

    /// Texts at the edges of what the scanner takes: each is either the TOML reader's to
    /// judge (`None`) or read alike; the TOML reader's errors stay its own.
    #[test]
    fn the_scanner_leaves_anything_unusual_to_the_toml_reader() {
        let ok = "state = \"Original\"\n";
        let taken = [
            ok.to_string(),
            "state=\"Copy\"".into(),
            "  state = \"Deleted\" # gone\r\nreason = \"withdrawn\"\r\n".into(),
            "# a comment\n\nstate = \"Original\"\ntimestamp = 2009-07-21T13:23:45Z\nrestricted = true\ncontenttype = \"Metadata\"\n[formats]\noai_dc = \"oai_dc.xml\"\n[translations]\npt-BR = \"sid.inpe.br/mtc-m18@80/2009/07.21.13.23\"\n".into(),
            "state = \"Original\"\ntarget = \"Relatório Final.pdf\"\nlanguage = \"\"\n".into(),
        ];
        for text in &taken {
            assert!(scan(text).is_some(), "{text:?}");
            assert!(scanner_agrees(text), "{text:?}");
        }
        let left = [
            "",
            "ibip = \"x\"\n",
            "state = \"original\"\n",
            "state = \"Original\"\nstate = \"Copy\"\n",
            "state = \"Original\"\nibip = \"a\"\nibip = \"b\"\n",
            "state = \"Original\"\nbogus = \"x\"\n",
            "state = \"Original\"\ntarget = \"a\\\"b\"\n",
            "state = \"Original\"\ntarget = 'a'\n",
            "state = \"Original\"\ntarget = \"\"\"a\"\"\"\n",
            "state = \"Original\"\ntarget = \"a\" \"b\"\n",
            "state = \"Original\"\ntarget = \"a\tb\u{7}\"\n",
            "state = \"Original\"\n# bell \u{7}\n",
            "state = \"Original\"\r\r\n",
            "state = \"Original\"\nrestricted = \"true\"\n",
            "state = \"Original\"\nrestricted = truest\n",
            "state = \"Original\"\ntimestamp = \"2009-07-21T13:23:45Z\"\n",
            "state = \"Original\"\ntimestamp = 2009-07-21 13:23:45Z\n",
            "state = \"Original\"\ntimestamp = 2009-07-21T13:23:45+01:00\n",
            "state = \"Original\"\ntimestamp = 2009-07-21T13:23:45.5Z\n",
            "state = \"Original\"\ntimestamp = 2009-13-21T13:23:45Z\n",
            "state = \"Original\"\n[formats]\n[formats]\n",
            "state = \"Original\"\n[formats]x\n",
            "state = \"Original\"\n[ formats ]\n",
            "state = \"Original\"\n[formats]\noai_dc = 1\n",
            "state = \"Original\"\n[formats]\noai_dc = \"a\"\noai_dc = \"b\"\n",
            "state = \"Original\"\n[[formats]]\n",
            "state = \"Original\"\n[other]\n",
            "\u{feff}state = \"Original\"\n",
            "\"state\" = \"Original\"\n",
            "item.state = \"Original\"\n",
            "state = \"Original\"\nurl = \"http://a\"\nurl\n",
        ];
        for text in left {
            assert!(scan(text).is_none(), "{text:?}");
            assert!(scanner_agrees(text), "{text:?}");
        }
        // The errors of items the scanner leaves are the TOML reader's, placed.
        let rep = Rep::parse("a.b/c/2020/01.01.00.00").unwrap();
        let err = Item::parse(
            "state = \"Original\"\nstate = \"Copy\"\n",
            Path::new("d"),
            rep,
        )
        .unwrap_err();
        assert!(err.starts_with("2:1: "), "{err}");
    }
}
