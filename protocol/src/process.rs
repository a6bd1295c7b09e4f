//! What a long-running server (`ibi-archive serve`, the resolver) asks of its process:
//! as many open files as it is allowed; and what its metrics say of it ([`figures`]).

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// Raises the soft limit of open files towards the hard one, to at most `at_most`, when
/// both limits are finite (never lowers it); returns the soft limit now (`None`:
/// unlimited).
pub fn raise_open_files(at_most: u64) -> Option<u64> {
    let mut limit = getrlimit(Resource::Nofile);
    if let (Some(current), Some(maximum)) = (limit.current, limit.maximum) {
        let wanted = maximum.min(at_most);
        if current < wanted {
            let raised = Rlimit {
                current: Some(wanted),
                maximum: Some(maximum),
            };
            if setrlimit(Resource::Nofile, raised).is_ok() {
                limit = raised;
            }
        }
    }
    limit.current
}

/// What the standard `process_*` metrics say of this process, read from /proc/self (the
/// names and units of Prometheus' client libraries, so that dashboards made for them
/// read ours).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    /// User and system CPU time, in seconds.
    pub cpu_seconds: f64,
    /// Resident memory, in bytes.
    pub resident_bytes: u64,
    /// Virtual memory, in bytes.
    pub virtual_bytes: u64,
    /// Open file descriptors.
    pub open_fds: u64,
    /// The soft limit of open file descriptors.
    pub max_fds: u64,
    /// When the process started, in seconds since the Unix epoch.
    pub start_time_seconds: f64,
}

/// The name and help of the standard counter of CPU time ([`Figures::cpu_seconds`]).
pub const CPU_SECONDS: (&str, &str) = (
    "process_cpu_seconds",
    "Total user and system CPU time spent in seconds",
);

impl Figures {
    /// The standard `process_*` gauges, each its name, its help and its value (the CPU
    /// time, a counter, is [`CPU_SECONDS`]): what both servers' `/metrics` show.
    pub fn gauges(&self) -> [(&'static str, &'static str, f64); 5] {
        [
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes",
                self.resident_bytes as f64,
            ),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes",
                self.virtual_bytes as f64,
            ),
            (
                "process_open_fds",
                "Number of open file descriptors",
                self.open_fds as f64,
            ),
            (
                "process_max_fds",
                "Maximum number of open file descriptors",
                self.max_fds as f64,
            ),
            (
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds",
                self.start_time_seconds,
            ),
        ]
    }
}

/// This process's [`Figures`], or `None` where /proc cannot be read (another system, or
/// /proc not mounted).
pub fn figures() -> Option<Figures> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let boot = std::fs::read_to_string("/proc/stat").ok()?;
    let boot_time: f64 = boot
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    let ticks = rustix::param::clock_ticks_per_second();
    let page = rustix::param::page_size();
    if ticks == 0 || page == 0 {
        return None;
    }
    let open_fds = std::fs::read_dir("/proc/self/fd").ok()?.count() as u64;
    let max_fds = getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX);
    from_stat(&stat, boot_time, ticks as f64, page as u64).map(|f| Figures {
        open_fds,
        max_fds,
        ..f
    })
}

/// The figures of a line of /proc/PID/stat (its descriptors left at 0): fields 14 and 15
/// (utime, stime, in clock ticks), 22 (starttime, ticks since boot), 23 (vsize, bytes)
/// and 24 (rss, pages), counted after the command's name, which is in parentheses and
/// may hold spaces and parentheses itself.
fn from_stat(stat: &str, boot_time: f64, ticks: f64, page: u64) -> Option<Figures> {
    let after = &stat[stat.rfind(')')? + 1..];
    // Field 3 (the state) is the first after the name.
    let fields: Vec<&str> = after.split_whitespace().collect();
    let field = |n: usize| -> Option<u64> { fields.get(n - 3)?.parse().ok() };
    Some(Figures {
        cpu_seconds: (field(14)? + field(15)?) as f64 / ticks,
        resident_bytes: field(24)? * page,
        virtual_bytes: field(23)?,
        open_fds: 0,
        max_fds: 0,
        start_time_seconds: boot_time + field(22)? as f64 / ticks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_whose_name_holds_parentheses_and_spaces_is_read_by_its_fields() {
        // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt
        // cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime
        // vsize rss ...
        let line = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 12345 104857600 2560 18446744073709551615";
        assert_eq!(
            from_stat(line, 1_700_000_000.0, 100.0, 4096),
            Some(Figures {
                cpu_seconds: 3.0,
                resident_bytes: 2560 * 4096,
                virtual_bytes: 104_857_600,
                open_fds: 0,
                max_fds: 0,
                start_time_seconds: 1_700_000_123.45,
            })
        );
        assert_eq!(from_stat("4242 (short) S 1 2", 0.0, 100.0, 4096), None);
    }

    #[test]
    fn this_process_has_figures() {
        let f = figures().expect("/proc/self");
        assert!(f.open_fds >= 3 && f.open_fds <= f.max_fds, "{f:?}");
        assert!(
            f.resident_bytes > 0 && f.virtual_bytes >= f.resident_bytes,
            "{f:?}"
        );
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        assert!(
            f.start_time_seconds <= now + 1.0 && f.start_time_seconds > now - 3600.0,
            "{f:?}"
        );
    }
}
