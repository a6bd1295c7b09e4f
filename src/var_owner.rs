//! The owner of `var/`: the user the service runs as (the README has the administrator run
//! `chown -R www-data: var`). What the service uses in `var/` — the urlkey secret, the
//! access log and the marks of counted keys, the remembered prefixes — must be that
//! user's, whoever makes it first: `ibi-archive query` run as root before the first web
//! request, say.
//!
//! So a process that makes such a file or directory asks [`owner_for_new`] first: when it
//! runs as var/'s owner, what it makes is already right; when it runs as root, what it
//! makes is given to var/'s owner and group (through its descriptor, before it gets its
//! name: nobody sees it root's); any other user is refused, with the `chown` to run, as
//! what it made could not be used by the service. Reading is left as it is.
//!
//! [`User`] and [`cannot`] are what `check --web-user` judges var/ by: mode bits, owner,
//! group and the user's supplementary groups, as the kernel does (no user is switched to),
//! the users and groups read from /etc/passwd and /etc/group.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use rustix::fs::{self as rfs, Mode, OFlags};

use ::ibi::atomic::{give, Owner};

/// The web server's user when a command is not told (`--web-user`): Debian's.
pub const DEFAULT_WEB_USER: &str = "www-data";

/// The uid and login group of `name` in /etc/passwd (see [`entries`]).
pub fn owner_named(name: &str) -> Option<Owner> {
    let user = entries("/etc/passwd").into_iter().find(|f| f[0] == name)?;
    Some(Owner {
        uid: user[2].parse().ok()?,
        gid: user[3].parse().ok()?,
    })
}

/// var/, just made by an administrator's command, given to the web server's user
/// `web_user` (None: [`DEFAULT_WEB_USER`]) when this process runs as root and that user
/// exists here: the service, which runs as that user, must write in it, and what root
/// makes in it later is given to var/'s owner ([`owner_for_new`]). Run as another user,
/// or for a user this machine does not have, var/ stays its maker's.
pub fn give_new_var(var: &Path, web_user: Option<&str>) -> io::Result<()> {
    if !rustix::process::geteuid().is_root() {
        return Ok(());
    }
    let Some(owner) = owner_named(web_user.unwrap_or(DEFAULT_WEB_USER)) else {
        return Ok(());
    };
    give(open_dir(var)?.as_fd(), Some(owner))
}

/// var/ made, mode 700, where there is none, by an administrator's command, and given to
/// the web server's user as [`give_new_var`] says; one that exists is left as it is.
pub fn make_var_for(var: &Path, web_user: Option<&str>) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o700).create(var) {
        Ok(()) => give_new_var(var, web_user),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// var/ made where there is none (its parent, the Archive's root, must exist), mode 700:
/// it holds the urlkey secret and the access log, its maker's alone. Then opened, as
/// [`open_dir`] opens it.
pub fn make_and_open_var(var: &Path) -> io::Result<OwnedFd> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o700).create(var) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    open_dir(var)
}

/// Opens the directory `path` (var/, or one below it), for making files in it.
pub fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    Ok(rfs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// To whom what this process makes in `var` (var/, opened; `var_path` names it in a
/// message) must be given: nobody (`None`) when this process runs as var/'s owner, var/'s
/// owner and group when it runs as root. Any other user is refused (`PermissionDenied`),
/// with what to do.
pub fn owner_for_new(var: BorrowedFd<'_>, var_path: &Path) -> io::Result<Option<Owner>> {
    let st = rfs::fstat(var)?;
    let me = rustix::process::geteuid();
    if me.as_raw() == st.st_uid {
        Ok(None)
    } else if me.is_root() {
        Ok(Some(Owner {
            uid: st.st_uid,
            gid: st.st_gid,
        }))
    } else {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            refusal(var_path, st.st_uid, me.as_raw()),
        ))
    }
}

/// Why a user who is neither root nor var/'s owner may not make files there, and what to do.
fn refusal(var: &Path, owner: u32, me: u32) -> String {
    let var = std::path::absolute(var).unwrap_or_else(|_| var.to_path_buf());
    let var = var.display();
    let (owner_name, my_name) = (user_name(owner), user_name(me));
    format!(
        "{var} belongs to {} (uid {owner}), not to {} (uid {me}): run this as {owner_name} or as root, or, if the web server runs as {my_name}, chown -R {my_name}: {var}",
        owner_name, my_name
    )
}

/// The entries of `/etc/passwd` or `/etc/group` (`file`), their fields split at `:`.
/// The files are read, not asked of the C library: this executable is linked statically,
/// and the name services glibc would load (systemd's, LDAP's) cannot be loaded into it;
/// so only the users and groups of these files are known here.
fn entries(file: &str) -> Vec<Vec<String>> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(':').map(str::to_string).collect::<Vec<_>>())
        .filter(|f| f.len() >= 4)
        .collect()
}

/// The name of the entry of `file` whose third field (uid or gid) is `id`.
fn name_of(file: &str, id: u32) -> Option<String> {
    entries(file)
        .into_iter()
        .find(|f| f[2].parse() == Ok(id))
        .map(|mut f| f.swap_remove(0))
}

/// The name of the user `uid`, else the number.
pub fn user_name(uid: u32) -> String {
    name_of("/etc/passwd", uid).unwrap_or_else(|| uid.to_string())
}

/// The name of the group `gid`, else the number.
pub fn group_name(gid: u32) -> String {
    name_of("/etc/group", gid).unwrap_or_else(|| gid.to_string())
}

/// A user of this machine as the kernel judges its access: uid, and every group it is in.
#[derive(Clone, Debug)]
pub struct User {
    pub name: String,
    pub uid: u32,
    pub groups: Vec<u32>,
}

impl User {
    /// The user `name` of `/etc/passwd`, in its login group and the groups of
    /// `/etc/group` that list it; `None` when there is no such user.
    pub fn by_name(name: &str) -> Option<User> {
        let user = entries("/etc/passwd").into_iter().find(|f| f[0] == name)?;
        let uid = user[2].parse().ok()?;
        let mut groups: Vec<u32> = user[3].parse().ok().into_iter().collect();
        for g in entries("/etc/group") {
            if g[3].split(',').any(|member| member == name) {
                groups.extend(g[2].parse::<u32>().ok());
            }
        }
        Some(User {
            name: name.to_string(),
            uid,
            groups,
        })
    }
}

/// What a user must be able to do with a file or directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    pub read: bool,
    pub write: bool,
    /// Search (a directory's x bit).
    pub search: bool,
}

/// What of `need` the user cannot do with the file `meta` describes, in words ("read",
/// "write and search"...); `None` when it can do it all. Root may do anything.
pub fn cannot(user: &User, meta: &std::fs::Metadata, need: Access) -> Option<String> {
    if user.uid == 0 {
        return None;
    }
    let mode = meta.mode();
    let bits = if meta.uid() == user.uid {
        mode >> 6
    } else if user.groups.contains(&meta.gid()) {
        mode >> 3
    } else {
        mode
    } & 0o7;
    let missing: Vec<&str> = [
        (need.read, 0o4, "read"),
        (need.write, 0o2, "write"),
        (need.search, 0o1, "search"),
    ]
    .into_iter()
    .filter(|&(needed, bit, _)| needed && bits & bit == 0)
    .map(|(_, _, word)| word)
    .collect();
    match missing.as_slice() {
        [] => None,
        [one] => Some(one.to_string()),
        [init @ .., last] => Some(format!("{} and {last}", init.join(", "))),
    }
}
