//! What tells one version of a file from another without reading it, and when a stamp can
//! be trusted to do so.
//!
//! A file's device, inode, size and modification and change times (seconds and
//! nanoseconds) change with any write to it, any rename over it and any replacement —
//! except a write made within the same tick of the file system's clock as the stamp was
//! taken, which can leave every time as it was. A stamp is therefore trusted only once
//! the file's change time lies [`SETTLED_SECS`] in the past: a later change then gives the
//! file another change time, which no one can set back. Whatever keeps something read from
//! a file (archive.toml's snapshot, `serve`'s kept configuration and items, the lists of
//! `col/`'s prefixes, the OAI-PMH index) keeps it only for a settled stamp.

/// Seconds a file's change time must lie in the past for its stamp to tell it apart from
/// any later version of it (file systems stamp times in ticks of up to a second or so).
pub const SETTLED_SECS: i64 = 2;

/// Device, inode, size, and modification and change times (seconds, nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    pub dev: u64,
    pub ino: u64,
    pub size: i64,
    pub modified: (i64, i64),
    pub changed: (i64, i64),
}

impl FileStamp {
    pub fn of(st: &rustix::fs::Stat) -> FileStamp {
        FileStamp {
            dev: st.st_dev,
            ino: st.st_ino,
            size: st.st_size,
            modified: (st.st_mtime, st.st_mtime_nsec as i64),
            changed: (st.st_ctime, st.st_ctime_nsec as i64),
        }
    }

    /// Whether the file's change time lies [`SETTLED_SECS`] before POSIX second `now`.
    pub fn settled(&self, now: i64) -> bool {
        settled(self.changed.0, now)
    }
}

/// Whether a change time of `changed` (POSIX seconds) lies [`SETTLED_SECS`] before `now`.
pub fn settled(changed: i64, now: i64) -> bool {
    changed <= now.saturating_sub(SETTLED_SECS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_settles_two_seconds_after_its_change() {
        let stamp = FileStamp {
            dev: 1,
            ino: 2,
            size: 3,
            modified: (100, 0),
            changed: (100, 999_999_999),
        };
        assert!(!stamp.settled(100));
        assert!(!stamp.settled(101));
        assert!(stamp.settled(102));
        assert!(!settled(i64::MIN + 1, i64::MIN));
        assert!(settled(0, i64::MAX));
    }
}
