//! One identified item on disk: `col/<rep>/item.toml` (its state and relations) beside
//! `col/<rep>/doc/` (its content).

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::Config;
use crate::ibi::{Ibi, Ibip, Rep};
use crate::layout::ItemDir;
use crate::relation::Lang;
use crate::toml_error::{located, Position, TextError};

pub use ::ibi::item::{ContentType, State};

/// Largest item.toml we read; a bigger one is a fault, not an item.
pub const MAX_ITEM_TOML: u64 = 64 * 1024;

/// Most bytes of a tombstone's `reason` its landing page shows.
pub const MAX_REASON: usize = 500;

#[derive(Deserialize)]
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
        let raw: RawItem = toml::from_str(text).map_err(|e| TextError::toml(text, &e))?;
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
            if !crate::oai_index::is_format_name(f) {
                return Err(format!(
                    "formats: {f:?} is not a format name (letters, digits and -_.!~*'(), at most 64)"
                ));
            }
        }
        if let Some(url) = &raw.url {
            if !(url.starts_with("http://") || url.starts_with("https://"))
                || url.bytes().any(|b| !crate::escape::is_word_byte(b))
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
    /// [`crate::routes::PRIVATE`]).
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
