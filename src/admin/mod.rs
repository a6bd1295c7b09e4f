//! The administrator's tools: creating items (`new`), checking the tree (`check`), turning
//! items into tombstones (`delete`), registering with the resolvers (`include`/`exclude`,
//! and `auto_inclusion`, which `serve` runs) and access statistics (`stats`).
//!
//! Everything here is a function of paths and values that returns a typed result; nothing
//! prints or exits (the commands in `src/cli/` do). Error messages are lower case and name
//! the input at fault; none ever holds the registration key.
//!
//! Writes follow one rule: the Archive service must never see a half-made state. A new
//! item is built whole in a temporary directory and renamed into place; an item.toml is
//! rewritten by writing a temporary file and renaming it over the old one (see
//! [`::ibi::atomic`]). Temporary names start with [`::ibi::atomic::TEMP_PREFIX`], a
//! dot-name the service never looks at (the store skips dot-names at the two levels it
//! lists, and the two levels below are dates, which never start with a dot; inside an item
//! only `item.toml` and `doc/` are read).

pub mod auto_inclusion;
pub mod check;
pub mod delete;
pub mod dublin_core;
pub mod init;
pub mod itemfile;
pub mod new_item;
pub mod registration;
pub mod stats;

use std::fmt;
use std::path::{Path, PathBuf};

use ::ibi::Rep;

/// Why an administrator's command could not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminError {
    pub message: String,
}

impl AdminError {
    pub fn new(message: impl Into<String>) -> AdminError {
        AdminError {
            message: message.into(),
        }
    }
}

impl fmt::Display for AdminError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AdminError {}

/// An I/O error as `<what> <path>: <error>`.
pub(crate) fn io_err(what: &str, path: &Path, e: std::io::Error) -> AdminError {
    AdminError::new(format!("{what} {}: {e}", path.display()))
}

pub use crate::items_lock::ItemsLock;

impl From<crate::items_lock::LockError> for AdminError {
    fn from(e: crate::items_lock::LockError) -> AdminError {
        AdminError::new(e.to_string())
    }
}

/// Every directory under `col` that names the same IBI as `rep` (in the standard's sense:
/// case, `@`/`.` before the port, port 80), whatever it holds. Lists only the two top
/// levels of `col/`.
pub fn rep_dirs(col: &Path, rep: &Rep) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for sub in dir_names(col) {
        if !sub.eq_ignore_ascii_case(rep.subdomain()) {
            continue;
        }
        for wp in dir_names(&col.join(&sub)) {
            let Ok(found) = Rep::parse(&format!("{sub}/{wp}/{}", rep.suffix())) else {
                continue;
            };
            if found != *rep {
                continue;
            }
            let dir = col
                .join(&sub)
                .join(&wp)
                .join(rep.year())
                .join(rep.day_time());
            if std::fs::symlink_metadata(&dir).is_ok() {
                out.push(dir);
            }
        }
    }
    out.sort();
    out
}

/// Names (UTF-8, not dot-names) of the entries of `dir`, sorted; none if unreadable.
fn dir_names(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// `path` relative to `root` for messages (as given when it is not under `root`).
pub fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}
