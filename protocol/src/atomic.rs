//! Files written whole or not at all, for the Archive (item.toml, var/) and the resolver
//! (resolver.toml, its backups) alike: a reader sees the old content or the new, never a
//! part, and a crash leaves one or the other. The new content goes to a temporary file
//! beside the target (named by [`temp_name`], a dot-name the service never reads), is
//! synced, then renamed over the target — or linked to its name, where an existing file
//! must be kept — and the directory is synced, so that the new name survives a crash too.
//!
//! What a process running as root makes is given to its [`Owner`] (the Archive's var/'s
//! owner, the resolver's settings file's) through its descriptor before it gets its name ([`give`],
//! [`make_dir_at`]): nobody sees it root's.
//!
//! Everything is done from a descriptor of the directory (which may be an `O_PATH` one,
//! as `layout` holds an item's), and no link is followed at the temporary name: a name
//! swapped on the way is never written through.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::{self as rfs, AtFlags, Mode, OFlags, RenameFlags};
use rustix::io::Errno;

/// Prefix of every temporary file or directory made inside an Archive.
pub const TEMP_PREFIX: &str = ".ibi-tmp-";

/// A fresh temporary name, `.ibi-tmp-<kind>-<pid>-<random>`: of this process and this
/// call, so that writers in several processes or threads never share one.
pub fn temp_name(kind: &str) -> String {
    let mut random = [0u8; 8];
    // getrandom(2) without waiting: a name needs no more than the pid and a clock when
    // it fails, as O_EXCL refuses a name already taken.
    let drawn = rustix::rand::getrandom(&mut random, rustix::rand::GetRandomFlags::NONBLOCK);
    let number = match drawn {
        Ok(8) => u64::from_ne_bytes(random),
        _ => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    };
    format!("{TEMP_PREFIX}{kind}-{}-{number:016x}", std::process::id())
}

/// Replaces `name` in the directory `dir` with a file holding `bytes` (created with
/// `mode`, less the umask), or creates it.
pub fn write_at(dir: BorrowedFd<'_>, name: &str, bytes: &[u8], mode: u32) -> io::Result<()> {
    write_owned_at(dir, name, bytes, mode, None)
}

/// [`write_at`], the file given to `owner` before it takes the name.
pub fn write_owned_at(
    dir: BorrowedFd<'_>,
    name: &str,
    bytes: &[u8],
    mode: u32,
    owner: Option<Owner>,
) -> io::Result<()> {
    let tmp = write_temp(dir, name, bytes, Perm::LessUmask(mode), owner)?;
    renamed(dir, &tmp, name)
}

/// Creates `name` in the directory `dir` holding `bytes` (with `mode`, less the umask),
/// given to `owner` before it takes the name, unless something has that name: then the
/// error is of kind `AlreadyExists`, and what is there is left as it is (another process
/// may have just written it).
pub fn create_owned_at(
    dir: BorrowedFd<'_>,
    name: &str,
    bytes: &[u8],
    mode: u32,
    owner: Option<Owner>,
) -> io::Result<()> {
    let tmp = write_temp(dir, name, bytes, Perm::LessUmask(mode), owner)?;
    linked(dir, &tmp, name)
}

/// [`write_at`] for the file `path`, in a directory named by the caller (a link to it
/// is followed); the directory must exist.
pub fn write(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let (dir, name) = crate::dirfd::open_parent(path)?;
    write_at(dir.as_fd(), name, bytes, mode)
}

/// Creates the file `path` holding `bytes` (with `mode`, less the umask), in a directory
/// named by the caller, unless something has that name: then the error is of kind
/// `AlreadyExists`, and what is there is left as it is.
pub fn create(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let (dir, name) = crate::dirfd::open_parent(path)?;
    create_owned_at(dir.as_fd(), name, bytes, mode, None)
}

/// Makes the entries of the directory `dir` durable (a no-op where directories cannot
/// be synced).
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// [`sync_dir`] for a directory's descriptor (an `O_PATH` one cannot be synced itself:
/// the directory is opened from it).
pub fn sync_dir_at(dir: BorrowedFd<'_>) {
    if let Ok(fd) = rfs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        let _ = rfs::fsync(fd);
    }
}

/// Creates `name` in `dir` holding `bytes` with exactly `mode` (the umask aside), unless
/// something has that name (an error of kind `AlreadyExists`, what is there left as it
/// is): a settings file made for its reader.
pub fn create_exact_at(dir: BorrowedFd<'_>, name: &str, bytes: &[u8], mode: u32) -> io::Result<()> {
    let tmp = write_temp(dir, name, bytes, Perm::Exact(mode), None)?;
    linked(dir, &tmp, name)
}

/// Replaces `name` in `dir` with a file holding `bytes`, of the owner, group and mode of
/// `old` (the status of the file replaced): a settings file rewritten as it was.
pub fn replace_like_at(
    dir: BorrowedFd<'_>,
    name: &str,
    bytes: &[u8],
    old: &rfs::Stat,
) -> io::Result<()> {
    let owner = Owner {
        uid: old.st_uid,
        gid: old.st_gid,
    };
    let tmp = write_temp(
        dir,
        name,
        bytes,
        Perm::Exact(old.st_mode & 0o7777),
        Some(owner),
    )?;
    renamed(dir, &tmp, name)
}

/// The temporary file `tmp` of `dir` renamed over `name` (removed when it cannot be), the
/// directory synced.
fn renamed(dir: BorrowedFd<'_>, tmp: &str, name: &str) -> io::Result<()> {
    if let Err(e) = rfs::renameat(dir, tmp, dir, name) {
        let _ = rfs::unlinkat(dir, tmp, AtFlags::empty());
        return Err(e.into());
    }
    sync_dir_at(dir);
    Ok(())
}

/// The temporary file `tmp` of `dir` linked to `name` unless something has that name (an
/// error of kind `AlreadyExists`), then removed; the directory synced. For a file made
/// whole beside its name by its own writer (a backup) as for those of this module.
pub fn linked(dir: BorrowedFd<'_>, tmp: &str, name: &str) -> io::Result<()> {
    let linked = rfs::linkat(dir, tmp, dir, name, AtFlags::empty());
    let _ = rfs::unlinkat(dir, tmp, AtFlags::empty());
    linked?;
    sync_dir_at(dir);
    Ok(())
}

/// The permissions of a new file.
#[derive(Clone, Copy)]
enum Perm {
    /// These, less the umask (as open(2) makes them).
    LessUmask(u32),
    /// Exactly these: made 0600, then set.
    Exact(u32),
}

/// A new temporary file beside `name` holding `bytes`, given to `owner`, synced; its name.
/// Nothing is left behind when it cannot be written.
fn write_temp(
    dir: BorrowedFd<'_>,
    name: &str,
    bytes: &[u8],
    perm: Perm,
    owner: Option<Owner>,
) -> io::Result<String> {
    let tmp = temp_name(name);
    let created = match perm {
        Perm::LessUmask(mode) => mode,
        Perm::Exact(_) => 0o600,
    };
    let fd = rfs::openat(
        dir,
        tmp.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(created),
    )?;
    let mut file = File::from(fd);
    let exact = |file: &File| match perm {
        Perm::Exact(mode) => rfs::fchmod(file, Mode::from_raw_mode(mode)).map_err(io::Error::from),
        Perm::LessUmask(_) => Ok(()),
    };
    match give(file.as_fd(), owner)
        .and_then(|()| exact(&file))
        .and_then(|()| file.write_all(bytes))
        .and_then(|()| file.sync_all())
    {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = rfs::unlinkat(dir, tmp.as_str(), AtFlags::empty());
            Err(e)
        }
    }
}

/// A user and group to give new files to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    pub uid: u32,
    pub gid: u32,
}

/// Gives the file or directory `fd` to `owner` (nothing when `None`).
pub fn give(fd: BorrowedFd<'_>, owner: Option<Owner>) -> io::Result<()> {
    if let Some(o) = owner {
        rfs::fchown(
            fd,
            Some(rfs::Uid::from_raw(o.uid)),
            Some(rfs::Gid::from_raw(o.gid)),
        )?;
    }
    Ok(())
}

/// The directory `name` in `dir`, opened (no link followed), made first when it is not
/// there: made under a temporary name, given to `owner`, then renamed to `name` unless
/// another process made it meanwhile.
pub fn make_dir_at(dir: BorrowedFd<'_>, name: &str, owner: Option<Owner>) -> io::Result<OwnedFd> {
    let open = |n: &str| {
        rfs::openat(
            dir,
            n,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
    };
    match open(name) {
        Ok(fd) => return Ok(fd),
        Err(Errno::NOENT) => {}
        Err(e) => return Err(e.into()),
    }
    let made = match owner {
        None => rfs::mkdirat(dir, name, Mode::from_raw_mode(0o777)),
        Some(o) => {
            let tmp = temp_name(name);
            rfs::mkdirat(dir, tmp.as_str(), Mode::from_raw_mode(0o777))?;
            let placed = open(&tmp)
                .and_then(|fd| {
                    rfs::fchown(
                        &fd,
                        Some(rfs::Uid::from_raw(o.uid)),
                        Some(rfs::Gid::from_raw(o.gid)),
                    )
                })
                .and_then(|()| {
                    rfs::renameat_with(dir, tmp.as_str(), dir, name, RenameFlags::NOREPLACE)
                });
            if placed.is_err() {
                let _ = rfs::unlinkat(dir, tmp.as_str(), AtFlags::REMOVEDIR);
            }
            placed
        }
    };
    match made {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(e) => return Err(e.into()),
    }
    Ok(open(name)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_write_replaces_the_file_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        write(&path, b"one\n", 0o600).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"one\n");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        write(&path, b"two\n", 0o600).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two\n");
        assert_eq!(names(dir.path()), ["state"]);
        // A directory that is not there: nothing is made.
        let missing = dir.path().join("var/state");
        assert_eq!(
            write(&missing, b"x", 0o600).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        assert_eq!(names(dir.path()), ["state"]);
    }

    #[test]
    fn a_create_keeps_what_is_there() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        create(&path, b"first\n", 0o600).unwrap();
        let again = create(&path, b"second\n", 0o600).unwrap_err();
        assert_eq!(again.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&path).unwrap(), b"first\n");
        assert_eq!(names(dir.path()), ["secret"]);
    }

    #[test]
    fn a_link_at_the_name_is_replaced_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::write(&outside, b"kept\n").unwrap();
        let path = dir.path().join("item.toml");
        std::os::unix::fs::symlink(&outside, &path).unwrap();
        write(&path, b"new\n", 0o644).unwrap();
        assert_eq!(std::fs::read(&outside).unwrap(), b"kept\n");
        assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
        assert_eq!(std::fs::read(&path).unwrap(), b"new\n");
    }

    #[test]
    fn settings_made_and_replaced_with_their_exact_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("resolver.toml");
        let (fd, _) = crate::dirfd::open_parent(&path).unwrap();
        create_exact_at(fd.as_fd(), "resolver.toml", b"a\n", 0o640).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&path), 0o640);
        let again = create_exact_at(fd.as_fd(), "resolver.toml", b"b\n", 0o640);
        assert_eq!(again.unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o604)).unwrap();
        let old = rfs::stat(&path).unwrap();
        replace_like_at(fd.as_fd(), "resolver.toml", b"c\n", &old).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"c\n");
        assert_eq!(mode(&path), 0o604);
        assert_eq!(names(dir.path()), ["resolver.toml"]);
    }

    #[test]
    fn temporary_names_are_dot_names_of_their_own() {
        let (a, b) = (temp_name("item.toml"), temp_name("item.toml"));
        assert!(a.starts_with(".ibi-tmp-item.toml-"), "{a}");
        assert_ne!(a, b);
    }
}
