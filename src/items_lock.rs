//! `var/items.lock`: the one lock of an Archive's items, taken by the administrator's
//! commands that change an item.toml and by whoever writes `var/oai-records` whole.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// An exclusive lock on `<root>/var/items.lock`, held while an item.toml is read, changed
/// and replaced, so two commands changing the same item do not lose each other's change;
/// and while `var/oai-records` is written whole (by `check`, or by the OAI-PMH data
/// provider under the web server's user), so that no line `new` or `delete` adds is lost.
pub struct ItemsLock {
    _file: File,
}

/// Why the lock could not be taken: what failed, on which file.
#[derive(Debug)]
pub struct LockError {
    what: &'static str,
    path: PathBuf,
    source: std::io::Error,
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.what, self.path.display(), self.source)
    }
}

impl std::error::Error for LockError {}

impl ItemsLock {
    pub fn take(root: &Path) -> Result<ItemsLock, LockError> {
        let fail = |what: &'static str, path: &Path| {
            let path = path.to_path_buf();
            move |source| LockError { what, path, source }
        };
        let var = root.join("var");
        std::fs::create_dir_all(&var).map_err(fail("cannot create", &var))?;
        let path = var.join("items.lock");
        // Opened for reading (a lock needs no more): the file may be another user's, made
        // by an administrator's command before the web server's user needed it.
        let file = match OpenOptions::new().read(true).open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(&path)
                    .map_err(fail("cannot open", &path))?;
                // Made by root: var/'s owner's, as everything the service uses there.
                if let Ok(dir) = crate::var_owner::open_dir(&var) {
                    use std::os::fd::AsFd;
                    if let Ok(owner) = crate::var_owner::owner_for_new(dir.as_fd(), &var) {
                        let _ = ::ibi::atomic::give(file.as_fd(), owner);
                    }
                }
                file
            }
            Err(e) => return Err(fail("cannot open", &path)(e)),
        };
        file.lock().map_err(fail("cannot lock", &path))?;
        Ok(ItemsLock { _file: file })
    }
}
