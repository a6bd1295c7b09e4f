//! What the registry's tests share: an SQLite registry opened by its path, and opened
//! from several threads at once.

use std::path::Path;

use super::{Registry, RegistryError};
use crate::store::Database;

/// The SQLite registry at `path`.
pub(super) fn open(path: &Path) -> Result<Registry, RegistryError> {
    Registry::open(&Database::Sqlite(path.to_path_buf()))
}

/// Opens `path` from 8 threads at once; every one must succeed.
pub(super) fn open_all_at_once(path: &Path) {
    let start = std::sync::Arc::new(std::sync::Barrier::new(8));
    let opened: Vec<_> = (0..8)
        .map(|_| {
            let (start, path) = (start.clone(), path.to_path_buf());
            std::thread::spawn(move || {
                start.wait();
                open(&path).map(|_| ()).map_err(|e| e.to_string())
            })
        })
        .collect();
    for o in opened {
        assert_eq!(o.join().unwrap(), Ok(()));
    }
}
