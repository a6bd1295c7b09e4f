//! `delete`: turns an item into a tombstone — state Deleted, timestamp now, the reason
//! given, its doc/ removed (or kept) — so that the service answers `state Deleted` and its timestamp
//! (Algorithm 2, lines 11–15 of the resolution standard).
//!
//! Order, so that the service never sees a half state:
//! 1. the new item.toml (the old one with `state` and `timestamp` changed, comments and
//!    every other field kept — the `ibip` keeps the tombstone findable by its IBIp) is
//!    written to a temporary file beside it and synced;
//! 2. it is renamed over item.toml: from this instant the service answers Deleted, and a
//!    Deleted item is never given a URL, whatever doc/ holds;
//! 3. doc/ is renamed to a temporary dot-name inside the item, so that no file of it is
//!    served any more (one rename: the web server sees all of doc/ or none of it);
//! 4. that directory is removed.
//!
//! Moving doc/ first would let the service, for a moment, answer state Original with no
//! URL. A crash after step 2 leaves a valid tombstone (and at worst a temporary directory,
//! which `check` reports).

use std::path::Path;

use super::itemfile::{edit, Edit};
use super::{io_err, AdminError, ItemsLock};
use crate::config::Config;
use crate::item::{State, MAX_ITEM_TOML};
use crate::layout::ITEM_TOML;
use crate::store::Store;
use ::ibi::atomic::temp_name;
use ::ibi::{Ibi, Ibip, Rep};

/// What `delete` did.
#[derive(Debug, Clone)]
pub struct Deleted {
    pub rep: Rep,
    pub ibip: Option<Ibip>,
    pub timestamp: i64,
    /// Whether doc/ was removed (false with keep_content, or when there was none).
    pub content_removed: bool,
    /// Things the administrator should know: a metadata item of the item, held here and
    /// not deleted, whose record harvesters still get.
    pub notes: Vec<String>,
}

/// Turns the item `ibi` of the Archive at `root` into a tombstone at POSIX second `now`,
/// with the `reason` given, if any.
pub fn delete(
    root: &Path,
    ibi: &Ibi,
    keep_content: bool,
    reason: Option<&str>,
    now: i64,
) -> Result<Deleted, AdminError> {
    let config = Config::load(root).map_err(|e| AdminError::new(e.to_string()))?;
    let _lock = ItemsLock::take(root)?;
    let found = Store::new(root).find(ibi);
    let Some(item) = found.item else {
        return Err(AdminError::new(match found.log.lines().first() {
            Some(w) => format!("{ibi}: {w}"),
            None => format!("no item {ibi} in this Archive"),
        }));
    };
    let is_service = match &config.service {
        Ibi::Rep(r) => *r == item.rep,
        Ibi::Ibip(p) => item.ibip.as_ref() == Some(p),
    };
    if is_service {
        return Err(AdminError::new(format!(
            "{ibi} is this Archive's service item (archiveserviceibi): it cannot be deleted"
        )));
    }
    if item.state == State::Deleted {
        return Err(AdminError::new(format!("{ibi} is already Deleted")));
    }
    let path = item.dir.join(ITEM_TOML);
    let dir = item
        .handle
        .clone()
        .ok_or_else(|| AdminError::new(format!("{}: not opened", item.dir.display())))?;
    let text = dir
        .item_toml_text(MAX_ITEM_TOML)
        .map_err(|e| AdminError::new(format!("cannot read {}: {e}", path.display())))?;
    let mut edits = vec![Edit::State(State::Deleted), Edit::Timestamp(now)];
    if let Some(r) = reason {
        edits.push(Edit::Reason(r.to_string()));
    }
    let edited = edit(&text, &item.dir, &item.rep, &edits)
        .map_err(|e| AdminError::new(format!("{}: {e}", path.display())))?;
    dir.replace_item_toml(edited.as_bytes())
        .map_err(|e| io_err("cannot write", &path, e))?;
    if let Some(mut entry) = crate::oai_index::entry_of(&item) {
        // A deleted record from now, for the OAI-PMH data provider's index.
        entry.seconds = now;
        entry.deleted = true;
        crate::oai_index::add(&root.join("var"), entry);
    }

    let mut content_removed = false;
    if !keep_content {
        let aside = temp_name("deleted-doc");
        let moved = dir.move_doc_aside(&aside).map_err(|e| {
            io_err(
                "the item is Deleted, but its doc/ could not be moved aside:",
                &item.doc(),
                e,
            )
        })?;
        if moved {
            dir.remove(&aside).map_err(|e| {
                io_err(
                    "the item is Deleted, but could not remove",
                    &item.dir.join(&aside),
                    e,
                )
            })?;
            content_removed = true;
        }
    }
    let mut notes = Vec::new();
    if let Some(meta) = &item.metadata {
        let kept = Store::new(root)
            .find(meta)
            .item
            .is_some_and(|m| m.is_record() && m.state != State::Deleted);
        if kept {
            notes.push(format!(
                "its metadata item {meta} is still harvested (OAI-PMH) as a live record: delete it too to withdraw the description from harvesters"
            ));
        }
    }
    Ok(Deleted {
        rep: item.rep.clone(),
        ibip: item.ibip.clone(),
        timestamp: now,
        content_removed,
        notes,
    })
}
