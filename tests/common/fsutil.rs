//! File-system helpers: copying an Archive, and giving the web server's user
//! (www-data when the tests run as root) access to it.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::{lchown, symlink, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Copies `src` into `dst` recursively (`dst` is created if needed): regular
/// files with their permission bits, directories, and symbolic links as
/// links (their targets are copied verbatim, not followed).  File names are
/// handled as bytes, so ISO-8859-1 names survive.
pub fn copy_tree(src: &Path, dst: &Path) {
    let meta = fs::symlink_metadata(src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    let ft = meta.file_type();
    if ft.is_symlink() {
        let target = fs::read_link(src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
        symlink(&target, dst).unwrap_or_else(|e| panic!("symlink {}: {e}", dst.display()));
    } else if ft.is_dir() {
        fs::create_dir_all(dst).unwrap_or_else(|e| panic!("mkdir {}: {e}", dst.display()));
        let mut entries: Vec<_> = fs::read_dir(src)
            .unwrap_or_else(|e| panic!("{}: {e}", src.display()))
            .map(|e| e.unwrap().file_name())
            .collect();
        entries.sort();
        for name in entries {
            copy_tree(&src.join(&name), &dst.join(&name));
        }
        fs::set_permissions(dst, fs::Permissions::from_mode(meta.mode() & 0o7777)).unwrap();
    } else if ft.is_file() {
        fs::copy(src, dst)
            .unwrap_or_else(|e| panic!("copy {} -> {}: {e}", src.display(), dst.display()));
    } else {
        panic!("{}: neither file, directory nor symlink", src.display());
    }
}

/// Makes `path` and everything below it readable by everyone: directories
/// get a+rx, files a+r (and a+x if the owner may execute them).  Symbolic
/// links are left alone and not followed.
pub fn make_world_readable(path: &Path) {
    let meta = fs::symlink_metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let ft = meta.file_type();
    if ft.is_symlink() {
        return;
    }
    let mode = meta.mode() & 0o7777;
    let new_mode = if ft.is_dir() {
        mode | 0o755
    } else if mode & 0o100 != 0 {
        mode | 0o555
    } else {
        mode | 0o444
    };
    if new_mode != mode {
        fs::set_permissions(path, fs::Permissions::from_mode(new_mode))
            .unwrap_or_else(|e| panic!("chmod {}: {e}", path.display()));
    }
    if ft.is_dir() {
        for entry in fs::read_dir(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())) {
            make_world_readable(&entry.unwrap().path());
        }
    }
}

/// True when this process runs with effective user id 0.
pub fn running_as_root() -> bool {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1).map(|euid| euid == "0"))
        .unwrap_or(false)
}

/// The (uid, gid) of www-data, from /etc/passwd.
pub(crate) fn www_data_ids() -> Option<(u32, u32)> {
    user_ids("www-data")
}

/// The (uid, primary gid) of the user `name`, from /etc/passwd.
pub fn user_ids(name: &str) -> Option<(u32, u32)> {
    let passwd = fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let f: Vec<&str> = line.split(':').collect();
        if f.len() >= 4 && f[0] == name {
            Some((f[2].parse().ok()?, f[3].parse().ok()?))
        } else {
            None
        }
    })
}

/// When running as root, the servers run their workers and the CGI program
/// as www-data; otherwise everything runs as the current user.
pub(crate) fn server_user() -> Option<(u32, u32)> {
    if running_as_root() {
        Some(www_data_ids().expect("running as root but there is no www-data user"))
    } else {
        None
    }
}

/// Gives `path` and everything below it to `ids` (without following links).
pub(crate) fn chown_tree(path: &Path, ids: (u32, u32)) {
    lchown(path, Some(ids.0), Some(ids.1))
        .unwrap_or_else(|e| panic!("chown {}: {e}", path.display()));
    let meta = fs::symlink_metadata(path).unwrap();
    if meta.is_dir() {
        for entry in fs::read_dir(path).unwrap() {
            chown_tree(&entry.unwrap().path(), ids);
        }
    }
}

/// Prepares an Archive root (normally a temporary copy) for a server started
/// by this harness as the README deploys one: col/ world-readable;
/// archive.toml (the registration key) mode 640, of www-data's group; and
/// `<root>/var/` (created if missing) www-data's alone (mode 700), since the
/// service writes its logs and secret there.  When not running as root,
/// everything is the current user's.  Do not call this on files checked into
/// the repository: copy them first with [`copy_tree`].
pub fn prepare_archive(root: &Path) {
    let var = root.join("var");
    fs::create_dir_all(&var).unwrap_or_else(|e| panic!("mkdir {}: {e}", var.display()));
    make_world_readable(root);
    let toml = root.join("archive.toml");
    if toml.is_file() {
        fs::set_permissions(&toml, fs::Permissions::from_mode(0o640)).unwrap();
    }
    if let Some(ids) = server_user() {
        if toml.is_file() {
            lchown(&toml, None, Some(ids.1)).unwrap();
        }
        chown_tree(&var, ids);
        fs::set_permissions(&var, fs::Permissions::from_mode(0o700)).unwrap();
    }
}

/// A temporary directory for an Archive copy, searchable by the server's
/// user (tempfile creates directories with mode 0700).  Deleted on drop.
pub fn archive_tempdir() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("ibi-archive-test-")
        .tempdir()
        .expect("cannot create a temporary directory");
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// Panics with an explanation unless the server's user can reach `path`:
/// every directory from / down to it must be searchable by others when the
/// server drops privileges to www-data.  No-op when not running as root.
pub(crate) fn assert_reachable(path: &Path, what: &str) {
    if server_user().is_none() {
        return;
    }
    let mut p = PathBuf::new();
    for comp in path.components() {
        p.push(comp);
        let meta = fs::metadata(&p).unwrap_or_else(|e| panic!("{what} {}: {e}", p.display()));
        let needed = if meta.is_dir() { 0o001 } else { 0o004 };
        if meta.mode() & needed == 0 {
            panic!(
                "{what} {} is not reachable by www-data: {} has mode {:o}; \
                 use common::archive_tempdir() / common::prepare_archive()",
                path.display(),
                p.display(),
                meta.mode() & 0o7777
            );
        }
    }
}

/// `bin` itself when every user may run it where it is, else its copy in `dir`/bin (both
/// mode 755; made once, then reused): for a program run as another user than this one
/// (the web server's, the resolver's), which cannot run one inside a directory only its
/// owner enters, as a fresh clone under a private temporary directory is.
pub fn runnable_by_others(bin: &Path, dir: &Path) -> PathBuf {
    if executable_by_others(bin) {
        return bin.to_path_buf();
    }
    let copy_dir = dir.join("bin");
    fs::create_dir_all(&copy_dir).unwrap();
    fs::set_permissions(&copy_dir, fs::Permissions::from_mode(0o755)).unwrap();
    let copy = copy_dir.join(bin.file_name().unwrap());
    if !copy.exists() {
        fs::copy(bin, &copy).unwrap_or_else(|e| panic!("copy {}: {e}", bin.display()));
        fs::set_permissions(&copy, fs::Permissions::from_mode(0o755)).unwrap();
    }
    copy
}

/// Whether `path` (a file) and its directories are executable by others.
pub fn executable_by_others(path: &Path) -> bool {
    let mut p = PathBuf::new();
    for comp in path.components() {
        p.push(comp);
        match fs::metadata(&p) {
            Ok(m) if m.mode() & 0o001 != 0 => {}
            _ => return false,
        }
    }
    true
}

/// Bytes of an OS string, for building paths with ISO-8859-1 names.
pub fn os(bytes: &[u8]) -> &OsStr {
    use std::os::unix::ffi::OsStrExt;
    OsStr::from_bytes(bytes)
}

/// Pseudo-random bytes (xorshift64 from `seed`): deterministic, with no run of equal
/// bytes that an offset error would leave unchanged, and no file format's signature.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}
