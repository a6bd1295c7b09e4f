//! Files opened from the descriptor of their directory (the `*at` calls), so that a name
//! is looked up in the directory that was opened and checked, never through a path walked
//! again: the one step both executables take first.

use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{self as rfs, Mode, OFlags};

/// The directory of `path` opened (the current one for a bare name), and the file's name
/// in it. A path that ends in no file name (`/`, `..`) or whose name is not UTF-8 is
/// refused.
pub fn open_parent(path: &Path) -> io::Result<(OwnedFd, &str)> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let fd = rfs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    Ok((fd, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_is_opened_and_the_name_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("resolver.toml");
        let (fd, name) = open_parent(&path).unwrap();
        assert_eq!(name, "resolver.toml");
        let opened = rfs::fstat(&fd).unwrap();
        let there = rfs::stat(dir.path()).unwrap();
        assert_eq!((opened.st_dev, opened.st_ino), (there.st_dev, there.st_ino));
        assert_eq!(open_parent(Path::new("x")).unwrap().1, "x");
        for bad in ["/", ".."] {
            let e = open_parent(Path::new(bad)).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{bad}");
        }
        let e = open_parent(&dir.path().join("missing/x")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }
}
