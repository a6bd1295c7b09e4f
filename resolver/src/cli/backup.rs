//! `ibi-resolver backup FILE`: a copy of the registry made with SQLite's online backup,
//! while the server runs and writes to it (see [`Registry::backup_to`]).

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use ibi_resolver::registry::Registry;
use rusqlite::Connection;
use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};

use super::{CliError, CliResult};

pub fn run(parser: &mut lexopt::Parser, config: PathBuf) -> CliResult {
    let Some((config, operands)) = super::config_and_operands(parser, "backup", config, 1)? else {
        return Ok(());
    };
    let file = PathBuf::from(super::one("backup", operands, "FILE")?);
    let config = super::load(&config)?;
    let shown = file.display().to_string();
    let failed = |e: &dyn std::fmt::Display| CliError::failed(format!("{shown}: {e}"));
    let (dir, name) = ibi::dirfd::open_parent(&file).map_err(|e| failed(&e))?;
    if rfs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW).is_ok() {
        return Err(CliError::failed(format!(
            "{shown} exists: a backup is written to a new file, never over another"
        )));
    }
    let Some(database) = config.database.path() else {
        return Err(CliError::failed(format!(
            "{}: the registry is in PostgreSQL: back it up with PostgreSQL's own tools (pg_dump, or the cluster's base backups and WAL archive)",
            config.database
        )));
    };
    if !database.exists() {
        return Err(CliError::failed(format!(
            "{}: no registry there to back up",
            database.display()
        )));
    }
    let registry = super::open(&config)?;

    // The copy is made under a temporary name beside FILE and linked to FILE only once
    // whole: FILE never holds a part of a backup, and is never written over.
    let tmp = ibi::atomic::temp_name(name);
    let fd = rfs::openat(
        &dir,
        tmp.as_str(),
        OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .map_err(|e| failed(&std::io::Error::from(e)))?;
    let tmp_path = file.with_file_name(&tmp);
    let made = copy(&registry, &tmp_path, &fd);
    let linked = made.and_then(|counts| {
        ibi::atomic::linked(dir.as_fd(), &tmp, name)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => {
                    format!("{shown} exists: a backup is written to a new file, never over another")
                }
                _ => format!("{shown}: {e}"),
            })
            .map(|()| counts)
    });
    // What a copy that failed left: the file, and SQLite's beside it either way.
    let _ = rfs::unlinkat(&dir, tmp.as_str(), AtFlags::empty());
    for companion in ["-wal", "-shm", "-journal"] {
        let _ = rfs::unlinkat(&dir, format!("{tmp}{companion}").as_str(), AtFlags::empty());
    }
    let (archives, locations, bytes) = linked.map_err(CliError::failed)?;
    super::print_text(&format!(
        "backed up {} to {shown}: {bytes} bytes, {archives} {}, {locations} {} remembered\n",
        config.database,
        if archives == 1 { "Archive" } else { "Archives" },
        if locations == 1 {
            "location"
        } else {
            "locations"
        },
    ))
}

/// The registry copied into the new empty file `path` (open as `fd`), checked and
/// synced: how many Archives and remembered locations it holds, and its size.
fn copy(
    registry: &Registry,
    path: &Path,
    fd: &std::os::fd::OwnedFd,
) -> Result<(i64, i64, u64), String> {
    let shown = path.display();
    // By the name just made, never through a link put there since.
    let flags = rusqlite::OpenFlags::default() | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let mut dest = Connection::open_with_flags(path, flags).map_err(|e| format!("{shown}: {e}"))?;
    registry
        .backup_to(&mut dest)
        .map_err(|e| format!("{shown}: {e}"))?;
    let query = |sql: &str| -> Result<i64, String> {
        dest.query_row(sql, [], |r| r.get(0))
            .map_err(|e| format!("{shown}: {e}"))
    };
    let check: String = dest
        .query_row("PRAGMA quick_check", [], |r| r.get(0))
        .map_err(|e| format!("{shown}: {e}"))?;
    if check != "ok" {
        return Err(format!("{shown}: the copy is damaged: {check}"));
    }
    let archives = query("SELECT count(*) FROM archives")?;
    let locations = query("SELECT count(*) FROM locations")?;
    // Closing the last connection folds its write-ahead log into the file.
    dest.close().map_err(|(_, e)| format!("{shown}: {e}"))?;
    rfs::fsync(fd).map_err(|e| format!("{shown}: {}", std::io::Error::from(e)))?;
    let bytes = rfs::fstat(fd)
        .map_err(|e| format!("{shown}: {}", std::io::Error::from(e)))?
        .st_size as u64;
    Ok((archives, locations, bytes))
}
