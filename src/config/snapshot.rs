//! `var/archive.toml.snapshot`: what the TOML reader made of archive.toml, kept so that the
//! next CGI process need not read it again.
//!
//! Every request is a new process, and reading archive.toml through the TOML reader is
//! the largest part of a miss's own work (BENCHMARKS.md, "The CGI's start"). The snapshot
//! holds the reader's output (`RawConfig`, in the compact form below) beside the stamp of
//! the archive.toml it came from: device, inode, size, modification and change times.
//! A process that finds archive.toml with that same stamp takes the settings from the
//! snapshot and checks them as it would have checked the reader's output
//! ([`Config::check`](super::Config)), so the rules of the running executable always
//! apply, whoever wrote the snapshot.
//!
//! What the snapshot may be trusted with, and no more:
//!
//! - only the stamp proves it current. It is written only once archive.toml's change
//!   time is [`SETTLED_SECS`](crate::file_stamp::SETTLED_SECS) in the past (a file
//!   written twice within one tick of the file system's clock keeps its times: until it
//!   settles, every process reads it), and
//!   only when the file read has the stamp taken before it was opened (a file replaced
//!   or written while it was read is not snapshotted). Any write to archive.toml moves
//!   its change time, which no one can set back, so a stale snapshot never matches;
//! - it is never needed: missing, stale, torn, of another build or format, a link, not a
//!   regular file, linked twice, another user's, unreadable — any of these, and
//!   archive.toml is read as before. Nothing is logged then: an Archive on a read-only
//!   mount has no snapshot and is answered as before, and should not fill the log;
//! - it is written by whoever read archive.toml through the TOML reader for the service
//!   (the CGI, `serve`), to a temporary name in var/ (from var/'s descriptor, never
//!   following a link) renamed over the snapshot, so a reader sees a whole file or none;
//!   writers racing each other write the same bytes. It is not synced: lost or torn by a
//!   crash, its checksum or stamp give it away, and it costs one reading of archive.toml;
//! - it is of one build: its header holds a tag of this program's version and of the
//!   sources of the configuration's reader and of this format, so an upgraded executable
//!   reads archive.toml again and writes its own.
//!
//! It holds the registration keys, as archive.toml does: mode 600, var/'s owner's (given
//! to var/'s owner when root writes it, refused to anyone else, as every file of var/).
//! var/ is the service's own: whoever can write there can already act as the service.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::path::Path;

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};

use super::{
    RawAccess, RawAcknowledgments, RawConfig, RawMinting, RawOai, RawRegistration, RawSite,
};

/// The snapshot's name in var/.
pub const NAME: &str = "archive.toml.snapshot";

/// Largest snapshot read: archive.toml itself is at most 1 MiB, and a real one is a few
/// hundred bytes.
const MAX_LEN: u64 = 1 << 20;

const MAGIC: &[u8; 8] = b"IBIACFG\x01";

/// The build tag: this program's version and the sources of the configuration's reader
/// and of this format (the TOML reader's version is in Cargo.lock), hashed when the
/// program is compiled.
const TAG: u64 = {
    let mut h = FNV_OFFSET;
    h = fnv(h, env!("CARGO_PKG_VERSION").as_bytes());
    h = fnv(h, include_bytes!("../config.rs"));
    h = fnv(h, include_bytes!("snapshot.rs"));
    fnv(h, include_bytes!("../../Cargo.lock"))
};

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a, 64 bits: the build tag and the payload's checksum (which catches a torn or
/// damaged file, not a forged one: see the module's notes on var/).
const fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    let mut i = 0;
    while i < bytes.len() {
        h ^= bytes[i] as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    h
}

/// What tells one archive.toml from another.
pub use crate::file_stamp::FileStamp as Stamp;

fn put_stamp(stamp: &Stamp, out: &mut Vec<u8>) {
    for v in [
        stamp.dev as i64,
        stamp.ino as i64,
        stamp.size,
        stamp.modified.0,
        stamp.modified.1,
        stamp.changed.0,
        stamp.changed.1,
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Length of the header: magic, tag, stamp (7 × 8), payload length, checksum.
const HEADER: usize = 8 + 8 + 56 + 8 + 8;

/// The snapshot's bytes for `raw`, read from the archive.toml of `stamp`; `None` when
/// `raw` holds a value this format does not keep (a date): then there is no snapshot.
pub fn encode(stamp: &Stamp, raw: &RawConfig) -> Option<Vec<u8>> {
    let mut payload = Vec::with_capacity(512);
    raw.put(&mut payload)?;
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&TAG.to_le_bytes());
    put_stamp(stamp, &mut out);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv(FNV_OFFSET, &payload).to_le_bytes());
    out.extend_from_slice(&payload);
    Some(out)
}

/// The settings of `bytes`, when they are a whole snapshot of this build for the
/// archive.toml of `stamp`.
pub fn decode(bytes: &[u8], stamp: &Stamp) -> Option<RawConfig> {
    let (header, payload) = bytes.split_at_checked(HEADER)?;
    let mut expected = Vec::with_capacity(HEADER);
    expected.extend_from_slice(MAGIC);
    expected.extend_from_slice(&TAG.to_le_bytes());
    put_stamp(stamp, &mut expected);
    expected.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    expected.extend_from_slice(&fnv(FNV_OFFSET, payload).to_le_bytes());
    if header != expected.as_slice() {
        return None;
    }
    let mut r = Reader(payload);
    let raw = RawConfig::take(&mut r)?;
    r.0.is_empty().then_some(raw)
}

/// The snapshot in `var` for the archive.toml of `stamp`, if there is a good one.
///
/// One open, without following a link at the name, then everything is judged on that
/// descriptor: a regular file of one link, of a plausible size, read whole, and of a
/// user whose snapshot this process would write itself: its own or root's, and for a
/// process of root's also var/'s owner's (root gives what it writes in var/ to var/'s
/// owner; else root, running `serve` or `query` over an Archive whose var/ is
/// www-data's, would never read a snapshot and write one on every request). (var/
/// itself may be a link, as col/ may: the administrator's to make.)
pub fn read(var: &Path, stamp: &Stamp) -> Option<RawConfig> {
    let fd = rfs::open(
        var.join(NAME),
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let st = rfs::fstat(&fd).ok()?;
    let owner = st.st_uid;
    // Asked in this order, so that each question costs a system call only when needed.
    let trusted = owner == 0 || {
        let me = rustix::process::geteuid();
        owner == me.as_raw() || me.is_root() && rfs::stat(var).is_ok_and(|v| v.st_uid == owner)
    };
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile
        || st.st_nlink != 1
        || !trusted
        || st.st_size < HEADER as i64
        || st.st_size as u64 > MAX_LEN
    {
        return None;
    }
    // Its size, in one read: the header says how long the payload is, and the checksum
    // covers it, so a file that grew since (no writer here does: snapshots are renamed
    // into place) is judged by the bytes read.
    let mut bytes = vec![0; st.st_size as usize];
    File::from(fd).read_exact(&mut bytes).ok()?;
    decode(&bytes, stamp)
}

/// Whether this process may make files in `var`: one `access(2)`, so that an Archive on
/// a read-only mount, or whose var/ is another user's, pays one system call per request
/// for having no snapshot, not the attempt to write one.
pub fn writable(var: &Path) -> bool {
    rfs::accessat(rfs::CWD, var, rfs::Access::WRITE_OK, AtFlags::EACCESS).is_ok()
}

/// Writes `bytes` as the snapshot in `var`, for whoever reads next; nothing when var/
/// cannot be opened or written (a read-only Archive), or belongs to another user than
/// this process's (root's files are given to var/'s owner, as every file of var/).
pub fn write(var: &Path, bytes: &[u8]) {
    let _ = try_write(var, bytes);
}

/// Tells apart the temporary files of one process's threads (`serve`).
static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn try_write(var: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = crate::var_owner::open_dir(var)?;
    let owner = crate::var_owner::owner_for_new(dir.as_fd(), var)?;
    // The process id and a count, not `atomic::temp_name`'s random number: drawing one
    // would seed a generator (system calls and thousands of instructions) in a process
    // that needs no other. No two live processes share an id, so a file of this name is
    // a dead one's: it is removed, and the name taken once more.
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = format!(
        "{}{NAME}-{}-{n}",
        ::ibi::atomic::TEMP_PREFIX,
        std::process::id()
    );
    let create = || {
        rfs::openat(
            &dir,
            tmp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
    };
    let fd = match create() {
        Err(rustix::io::Errno::EXIST) => {
            rfs::unlinkat(&dir, tmp.as_str(), AtFlags::empty())?;
            create()?
        }
        other => other?,
    };
    let mut file = File::from(fd);
    // Not synced: see the module's notes.
    let written = ::ibi::atomic::give(file.as_fd(), owner)
        .and_then(|()| file.write_all(bytes))
        .and_then(|()| Ok(rfs::renameat(&dir, tmp.as_str(), &dir, NAME)?));
    if written.is_err() {
        let _ = rfs::unlinkat(&dir, tmp.as_str(), AtFlags::empty());
    }
    written
}

/// The payload: each setting in the order of its struct, in a form of its own type.
trait Snap: Sized {
    /// Appends the value; `None` when this format cannot keep it.
    fn put(&self, out: &mut Vec<u8>) -> Option<()>;
    fn take(r: &mut Reader<'_>) -> Option<Self>;
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn u8(&mut self) -> Option<u8> {
        Some(self.bytes(1)?[0])
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.bytes(8)?.try_into().ok()?))
    }

    /// A count of items that each take at least one byte: never more than remain.
    fn count(&mut self) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        (n <= self.0.len()).then_some(n)
    }
}

impl Snap for String {
    fn put(&self, out: &mut Vec<u8>) -> Option<()> {
        out.extend_from_slice(&(self.len() as u64).to_le_bytes());
        out.extend_from_slice(self.as_bytes());
        Some(())
    }

    fn take(r: &mut Reader<'_>) -> Option<Self> {
        let n = r.count()?;
        String::from_utf8(r.bytes(n)?.to_vec()).ok()
    }
}

impl Snap for i64 {
    fn put(&self, out: &mut Vec<u8>) -> Option<()> {
        out.extend_from_slice(&self.to_le_bytes());
        Some(())
    }

    fn take(r: &mut Reader<'_>) -> Option<Self> {
        Some(r.u64()? as i64)
    }
}

impl Snap for u16 {
    fn put(&self, out: &mut Vec<u8>) -> Option<()> {
        out.extend_from_slice(&self.to_le_bytes());
        Some(())
    }

    fn take(r: &mut Reader<'_>) -> Option<Self> {
        Some(u16::from_le_bytes(r.bytes(2)?.try_into().ok()?))
    }
}

impl<T: Snap> Snap for Option<T> {
    fn put(&self, out: &mut Vec<u8>) -> Option<()> {
        match self {
            None => {
                out.push(0);
                Some(())
            }
            Some(v) => {
                out.push(1);
                v.put(out)
            }
        }
    }

    fn take(r: &mut Reader<'_>) -> Option<Self> {
        match r.u8()? {
            0 => Some(None),
            1 => Some(Some(T::take(r)?)),
            _ => None,
        }
    }
}

impl<T: Snap> Snap for Vec<T> {
    fn put(&self, out: &mut Vec<u8>) -> Option<()> {
        out.extend_from_slice(&(self.len() as u64).to_le_bytes());
        self.iter().try_for_each(|v| v.put(out))
    }

    fn take(r: &mut Reader<'_>) -> Option<Self> {
        let n = r.count()?;
        (0..n).map(|_| T::take(r)).collect()
    }
}

/// Any TOML value but a date (which no setting read as a value holds when it is valid).
impl Snap for toml::Value {
    fn put(&self, out: &mut Vec<u8>) -> Option<()> {
        match self {
            toml::Value::String(s) => {
                out.push(1);
                s.put(out)
            }
            toml::Value::Integer(i) => {
                out.push(2);
                i.put(out)
            }
            toml::Value::Float(f) => {
                out.push(3);
                out.extend_from_slice(&f.to_bits().to_le_bytes());
                Some(())
            }
            toml::Value::Boolean(b) => {
                out.push(4);
                out.push(u8::from(*b));
                Some(())
            }
            toml::Value::Array(list) => {
                out.push(5);
                list.put(out)
            }
            toml::Value::Table(table) => {
                out.push(6);
                out.extend_from_slice(&(table.len() as u64).to_le_bytes());
                for (k, v) in table {
                    k.put(out)?;
                    v.put(out)?;
                }
                Some(())
            }
            toml::Value::Datetime(_) => None,
        }
    }

    fn take(r: &mut Reader<'_>) -> Option<Self> {
        Some(match r.u8()? {
            1 => toml::Value::String(String::take(r)?),
            2 => toml::Value::Integer(i64::take(r)?),
            3 => toml::Value::Float(f64::from_bits(r.u64()?)),
            4 => match r.u8()? {
                0 => toml::Value::Boolean(false),
                1 => toml::Value::Boolean(true),
                _ => return None,
            },
            5 => toml::Value::Array(Vec::take(r)?),
            6 => {
                let n = r.count()?;
                let mut table = toml::Table::new();
                for _ in 0..n {
                    let k = String::take(r)?;
                    let v = toml::Value::take(r)?;
                    // Each key once, as the reader gives them.
                    if table.insert(k, v).is_some() {
                        return None;
                    }
                }
                toml::Value::Table(table)
            }
            _ => return None,
        })
    }
}

impl Snap for RawConfig {
    fn put(&self, out: &mut Vec<u8>) -> Option<()> {
        self.archiveaddress.put(out)?;
        self.archiveserviceibi.put(out)?;
        self.platformsoftware.put(out)?;
        self.baseurl.put(out)?;
        self.relations.put(out)?;
        self.registration.put(out)?;
        self.minting.put(out)?;
        self.access.put(out)?;
        self.oai.put(out)?;
        self.site.put(out)?;
        self.acknowledgments.put(out)
    }

    fn take(r: &mut Reader<'_>) -> Option<Self> {
        Some(RawConfig {
            archiveaddress: Snap::take(r)?,
            archiveserviceibi: Snap::take(r)?,
            platformsoftware: Snap::take(r)?,
            baseurl: Snap::take(r)?,
            relations: Snap::take(r)?,
            registration: Snap::take(r)?,
            minting: Snap::take(r)?,
            access: Snap::take(r)?,
            oai: Snap::take(r)?,
            site: Snap::take(r)?,
            acknowledgments: Snap::take(r)?,
        })
    }
}

impl Snap for RawAcknowledgments {
    fn put(&self, out: &mut Vec<u8>) -> Option<()> {
        self.sync_interval.put(out)
    }

    fn take(r: &mut Reader<'_>) -> Option<Self> {
        Some(RawAcknowledgments {
            sync_interval: Snap::take(r)?,
        })
    }
}

impl Snap for RawRegistration {
    fn put(&self, out: &mut Vec<u8>) -> Option<()> {
        self.resolver.put(out)?;
        self.resolvers.put(out)?;
        self.adminemail.put(out)?;
        self.key.put(out)?;
        self.ip.put(out)?;
        self.platformversion.put(out)
    }

    fn take(r: &mut Reader<'_>) -> Option<Self> {
        Some(RawRegistration {
            resolver: Snap::take(r)?,
            resolvers: Snap::take(r)?,
            adminemail: Snap::take(r)?,
            key: Snap::take(r)?,
            ip: Snap::take(r)?,
            platformversion: Snap::take(r)?,
        })
    }
}

impl Snap for RawMinting {
    fn put(&self, out: &mut Vec<u8>) -> Option<()> {
        self.host.put(out)?;
        self.port.put(out)?;
        self.ibipport.put(out)?;
        self.ip.put(out)?;
        self.granularity.put(out)
    }

    fn take(r: &mut Reader<'_>) -> Option<Self> {
        Some(RawMinting {
            host: Snap::take(r)?,
            port: Snap::take(r)?,
            ibipport: Snap::take(r)?,
            ip: Snap::take(r)?,
            granularity: Snap::take(r)?,
        })
    }
}

impl Snap for RawAccess {
    fn put(&self, out: &mut Vec<u8>) -> Option<()> {
        self.networks.put(out)
    }

    fn take(r: &mut Reader<'_>) -> Option<Self> {
        Some(RawAccess {
            networks: Snap::take(r)?,
        })
    }
}

impl Snap for RawOai {
    fn put(&self, out: &mut Vec<u8>) -> Option<()> {
        self.repositoryname.put(out)?;
        self.adminemail.put(out)?;
        self.page_size.put(out)
    }

    fn take(r: &mut Reader<'_>) -> Option<Self> {
        Some(RawOai {
            repositoryname: Snap::take(r)?,
            adminemail: Snap::take(r)?,
            page_size: Snap::take(r)?,
        })
    }
}

impl Snap for RawSite {
    fn put(&self, out: &mut Vec<u8>) -> Option<()> {
        self.institution.put(out)?;
        self.contact.put(out)?;
        self.logo.put(out)
    }

    fn take(r: &mut Reader<'_>) -> Option<Self> {
        Some(RawSite {
            institution: Snap::take(r)?,
            contact: Snap::take(r)?,
            logo: Snap::take(r)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Config, RawConfig};
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// Every setting archive.toml may hold, each resolver with its key, a float and a
    /// table among the values read as values.
    const FULL: &str = r#"archiveaddress = "localhost:8080"
archiveserviceibi = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17"
platformsoftware = "dpi.inpe.br/banon/1998/08.02.08.56"
baseurl = "http://localhost:8080/"
relations = ["", ".lastedition", ".metadata"]

[registration]
adminemail = "admin@example.org"
ip = "150.163.34.239"
platformversion = "0.1.0"

[[registration.resolver]]
url = "http://urlib.net/J8LNKB5R7W/3FUQHC5"
key = "1234567890-0987654321"

[[registration.resolver]]
url = "http://resolver.example.org/J8LNKB5R7W/3FUQHC5"
key = "5555555555-6666666666"

[minting]
host = "archive.example.org"
port = 80
ibipport = 800
ip = "150.163.34.239"
granularity = 0.1

[access]
networks = ["150.163.0.0/16", "::1/128"]

[oai]
repositoryname = "INPE Library"
adminemail = "library@example.org"
page_size = 100

[site]
institution = "Instituto Nacional de Pesquisas Espaciais"
contact = "biblioteca@example.org"
logo = "logo.png"

[acknowledgments]
sync_interval = "500ms"
"#;

    fn raw(text: &str) -> RawConfig {
        toml::from_str(text).unwrap()
    }

    fn stamp() -> Stamp {
        Stamp {
            dev: 2049,
            ino: 1234,
            size: FULL.len() as i64,
            modified: (1_700_000_000, 5),
            changed: (1_700_000_000, 7),
        }
    }

    /// What the reader made of the text comes back as it was, for every form of the
    /// settings; a date, which no valid setting holds, is not kept.
    #[test]
    fn the_settings_come_back_as_the_reader_gave_them() {
        let minimal = "archiveaddress = \"a.b\"\narchiveserviceibi = \"sid.inpe.br/mtc-m18@80/2008/03.17.15.17\"\n";
        let shared = format!("{minimal}[registration]\nadminemail = \"a@b.org\"\nip = \"1.2.3.4\"\nkey = \"1\"\nresolvers = [\"http://a.org/X\", \"http://b.org/X\"]\n[minting]\nhost = \"a.b.org\"\ngranularity = \"0.01\"\n");
        let one = format!("{minimal}[registration]\nadminemail = \"a@b.org\"\nip = \"1.2.3.4\"\nkey = \"1\"\nresolver = \"http://a.org/X\"\n[minting]\nhost = \"a.b.org\"\ngranularity = 60\n[access]\nnetworks = []\n");
        for text in [FULL, minimal, &shared, &one] {
            let bytes = encode(&stamp(), &raw(text)).unwrap();
            assert_eq!(decode(&bytes, &stamp()), Some(raw(text)), "{text}");
        }
        let dated =
            format!("{minimal}[minting]\nhost = \"a.b.org\"\ngranularity = 2009-07-21T13:23:45Z\n");
        assert_eq!(encode(&stamp(), &raw(&dated)), None);
    }

    /// Another stamp, another build's tag, a byte changed, a file cut short or grown:
    /// nothing is taken from it.
    #[test]
    fn a_snapshot_is_believed_only_whole_and_for_its_stamp() {
        let bytes = encode(&stamp(), &raw(FULL)).unwrap();
        for other in [
            Stamp {
                ino: 1235,
                ..stamp()
            },
            Stamp {
                dev: 2050,
                ..stamp()
            },
            Stamp { size: 1, ..stamp() },
            Stamp {
                modified: (1_700_000_000, 6),
                ..stamp()
            },
            Stamp {
                changed: (1_700_000_001, 7),
                ..stamp()
            },
        ] {
            assert_eq!(decode(&bytes, &other), None, "{other:?}");
        }
        for cut in [0, 1, HEADER - 1, HEADER, bytes.len() - 1] {
            assert_eq!(decode(&bytes[..cut], &stamp()), None, "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode(&longer, &stamp()), None);
        for at in [0, 8, 16, HEADER - 9, HEADER, bytes.len() - 1] {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x20;
            assert_eq!(decode(&damaged, &stamp()), None, "byte {at}");
        }
        // A payload of the right checksum that is not settings (another format, say).
        let payload = b"\x05\x00\x00\x00\x00\x00\x00\x00junk!".to_vec();
        let mut forged = bytes[..HEADER - 16].to_vec();
        forged.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        forged.extend_from_slice(&fnv(FNV_OFFSET, &payload).to_le_bytes());
        forged.extend_from_slice(&payload);
        assert_eq!(decode(&forged, &stamp()), None);
    }

    /// An Archive root whose archive.toml settled long ago (its times set back, which
    /// moves its change time to now: the test then waits the seconds out once).
    struct Archive {
        _tmp: tempfile::TempDir,
        root: std::path::PathBuf,
    }

    impl Archive {
        fn new(text: &str) -> Archive {
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path().join("archive");
            std::fs::create_dir_all(root.join("var")).unwrap();
            std::fs::write(root.join("archive.toml"), text).unwrap();
            Archive { _tmp: tmp, root }
        }

        fn var(&self) -> std::path::PathBuf {
            self.root.join("var")
        }

        fn snapshot(&self) -> std::path::PathBuf {
            self.var().join(NAME)
        }

        fn stamp(&self) -> Stamp {
            Stamp::of(&rfs::stat(self.root.join("archive.toml")).unwrap())
        }

        /// Waits until archive.toml has settled.
        fn settle(&self) {
            while !self.stamp().settled(::ibi::time::SystemClock::now()) {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }

        fn load(&self) -> String {
            match Config::load_for_service(&self.root) {
                Ok(c) => format!("{c:?}"),
                Err(e) => format!("error {e}"),
            }
        }

        fn load_plain(&self) -> String {
            match Config::load(&self.root) {
                Ok(c) => format!("{c:?}"),
                Err(e) => format!("error {e}"),
            }
        }
    }

    /// The service's configuration is the one archive.toml gives, whether the snapshot
    /// is there or not; written once archive.toml has settled, not before; replaced when
    /// archive.toml changes; private to var/'s owner.
    #[test]
    fn the_snapshot_follows_archive_toml() {
        let a = Archive::new(FULL);
        // Just written: not settled, so no snapshot.
        assert_eq!(a.load(), a.load_plain());
        assert!(!a.snapshot().exists());
        a.settle();
        assert_eq!(a.load(), a.load_plain());
        let meta = std::fs::symlink_metadata(a.snapshot()).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        // Read from the snapshot: the settings it holds, checked as always.
        assert!(read(&a.var(), &a.stamp()).is_some());
        assert_eq!(a.load(), a.load_plain());
        // Its own content, told from archive.toml's: a snapshot of other settings for
        // this stamp is what the service then answers by (the stamp is all it believes).
        let other = FULL.replace("localhost:8080", "elsewhere:8080");
        std::fs::write(a.snapshot(), encode(&a.stamp(), &raw(&other)).unwrap()).unwrap();
        assert!(a.load().contains("elsewhere:8080"));
        // archive.toml changed (the same size, written in place): its change time moved,
        // the snapshot is stale, archive.toml is read.
        let changed = FULL.replace("localhost:8080", "localhost:8081");
        std::fs::write(a.root.join("archive.toml"), &changed).unwrap();
        assert!(a.load().contains("localhost:8081"));
        assert_eq!(a.load(), a.load_plain());
        a.settle();
        assert_eq!(a.load(), a.load_plain());
        assert_eq!(read(&a.var(), &a.stamp()), Some(raw(&changed)));
        // A fault in archive.toml: the same error as without a snapshot, and the old
        // snapshot is not believed.
        std::fs::write(a.root.join("archive.toml"), format!("{FULL}bogus = 1\n")).unwrap();
        a.settle();
        assert!(a.load().starts_with("error "), "{}", a.load());
        assert_eq!(a.load(), a.load_plain());
    }

    /// Neither a link at the snapshot's name, nor a file with a second link, nor a
    /// directory, nor a torn file is read; each is written over (the link replaced, not
    /// followed) by the next reader of archive.toml.
    #[test]
    fn links_and_strange_files_are_not_read() {
        let a = Archive::new(FULL);
        a.settle();
        assert_eq!(a.load(), a.load_plain());
        let good = std::fs::read(a.snapshot()).unwrap();
        // A link to a good snapshot elsewhere.
        let elsewhere = a.root.join("elsewhere");
        std::fs::write(&elsewhere, &good).unwrap();
        std::fs::remove_file(a.snapshot()).unwrap();
        std::os::unix::fs::symlink(&elsewhere, a.snapshot()).unwrap();
        assert_eq!(read(&a.var(), &a.stamp()), None);
        assert_eq!(a.load(), a.load_plain());
        assert!(!std::fs::symlink_metadata(a.snapshot())
            .unwrap()
            .is_symlink());
        assert_eq!(std::fs::read(&elsewhere).unwrap(), good);
        // A second link.
        std::fs::hard_link(a.snapshot(), a.root.join("second")).unwrap();
        assert_eq!(read(&a.var(), &a.stamp()), None);
        std::fs::remove_file(a.root.join("second")).unwrap();
        assert!(read(&a.var(), &a.stamp()).is_some());
        // Torn: cut short.
        std::fs::write(a.snapshot(), &good[..good.len() - 3]).unwrap();
        assert_eq!(read(&a.var(), &a.stamp()), None);
        assert_eq!(a.load(), a.load_plain());
        assert!(read(&a.var(), &a.stamp()).is_some());
        // A directory, a named pipe (never opened for long: O_NONBLOCK).
        std::fs::remove_file(a.snapshot()).unwrap();
        std::fs::create_dir(a.snapshot()).unwrap();
        assert_eq!(a.load(), a.load_plain());
        std::fs::remove_dir(a.snapshot()).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            a.snapshot(),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert_eq!(read(&a.var(), &a.stamp()), None);
        assert_eq!(a.load(), a.load_plain());
        assert!(read(&a.var(), &a.stamp()).is_some());
        // Another user's: not read, unless (for root) that user owns var/, as www-data
        // does where the README's chown is done. (Ownership is given by root alone.)
        if rustix::process::geteuid().is_root() {
            let nobody = Some(65534);
            std::os::unix::fs::chown(a.snapshot(), nobody, None).unwrap();
            assert_eq!(read(&a.var(), &a.stamp()), None);
            std::os::unix::fs::chown(a.var(), nobody, None).unwrap();
            assert!(read(&a.var(), &a.stamp()).is_some());
            std::os::unix::fs::chown(a.var(), Some(0), None).unwrap();
            assert_eq!(a.load(), a.load_plain());
            assert!(read(&a.var(), &a.stamp()).is_some());
        }
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(a.var())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, [NAME]);
    }

    /// An Archive whose var/ cannot be written (a read-only mount, or a var/ of another
    /// user's), or that has no var/: the service reads archive.toml and answers as
    /// before, and leaves nothing.
    #[test]
    fn without_a_writable_var_the_service_reads_archive_toml() {
        let a = Archive::new(FULL);
        a.settle();
        std::fs::remove_dir(a.var()).unwrap();
        assert_eq!(a.load(), a.load_plain());
        assert!(!a.var().exists());
        std::fs::create_dir(a.var()).unwrap();
        std::fs::set_permissions(a.var(), std::fs::Permissions::from_mode(0o500)).unwrap();
        assert_eq!(a.load(), a.load_plain());
        // (root writes through the mode bits: then the snapshot is there, and read.)
        if !rustix::process::geteuid().is_root() {
            assert!(!a.snapshot().exists());
        }
        assert_eq!(a.load(), a.load_plain());
        std::fs::set_permissions(a.var(), std::fs::Permissions::from_mode(0o700)).unwrap();
    }

    /// Processes that read archive.toml at once each write the snapshot: readers meanwhile
    /// see a whole snapshot or none, and what is left is whole.
    #[test]
    fn concurrent_writers_leave_a_whole_snapshot() {
        let a = Archive::new(FULL);
        a.settle();
        let want = a.load_plain();
        let bytes = encode(&a.stamp(), &raw(FULL)).unwrap();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..50 {
                        write(&a.var(), &bytes);
                    }
                });
            }
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..50 {
                        assert_eq!(a.load(), want);
                        if let Ok(seen) = std::fs::read(a.snapshot()) {
                            assert_eq!(seen, bytes);
                        }
                    }
                });
            }
        });
        assert_eq!(std::fs::read(a.snapshot()).unwrap(), bytes);
        assert_eq!(std::fs::read_dir(a.var()).unwrap().count(), 1);
    }
}
