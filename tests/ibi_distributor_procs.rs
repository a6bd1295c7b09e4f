//! The temporal distributor under parallel runs: twenty real processes mint against one
//! state file at once and must get twenty distinct dates, each run having seen the date the
//! run before it wrote (so, in the order the runs completed, the dates increase).
//!
//! The processes are copies of this test executable running only [`child_mints_once`],
//! selected with `--exact`; the state file's path reaches them in an environment variable.

use ::ibi::time::SystemClock;
use ibi_archive::minting::distributor::{Distributor, Granularity, PosixTime};
use std::process::{Command, Stdio};

const STATE_ENV: &str = "IBI_ARCHIVE_TEST_MINTING_STATE";
/// Its name in the test executable (tests/tests.rs), for `--exact`.
const CHILD: &str = "ibi_distributor_procs::child_mints_once";
const CHILDREN: usize = 20;

/// The body of each child process, not a test of its own: without the environment
/// variable (as in a plain `cargo test`) it does nothing.
#[test]
fn child_mints_once() {
    let Some(state) = std::env::var_os(STATE_ENV) else {
        return;
    };
    let r = Granularity::parse("0.01").unwrap();
    let issued = Distributor::new(state, r, &SystemClock)
        .next_step()
        .unwrap();
    let previous = issued
        .previous
        .map_or_else(|| "-".to_string(), |p| p.to_string());
    println!("ISSUED {previous} {}", issued.decision.for_suffix);
}

#[test]
fn twenty_processes_get_distinct_increasing_dates() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("minting.state");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..CHILDREN)
        .map(|_| {
            Command::new(&exe)
                .args([CHILD, "--exact", "--nocapture", "--test-threads=1", "-q"])
                .env(STATE_ENV, &state)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();

    // (previous as the run found it, date-for-suffix) of every run.
    let mut runs: Vec<(Option<PosixTime>, PosixTime)> = Vec::new();
    for child in children {
        // Each run ends: none waits for the lock forever.
        let out = common::output_or_hang(child, "a minting run");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "child failed: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<&str> = stdout
            .lines()
            .filter(|l| l.starts_with("ISSUED "))
            .collect();
        assert_eq!(lines.len(), 1, "child output: {stdout}");
        let f: Vec<&str> = lines[0].split(' ').collect();
        let previous = (f[1] != "-").then(|| PosixTime::parse(f[1]).unwrap());
        runs.push((previous, PosixTime::parse(f[2]).unwrap()));
    }

    runs.sort_by_key(|&(_, date)| date);
    let dates: Vec<PosixTime> = runs.iter().map(|&(_, d)| d).collect();
    let mut distinct = dates.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), CHILDREN, "dates not distinct: {dates:?}");
    // The runs form one chain: the first found no state, each other found the date of the
    // run just before it. So the runs were serialised, no write was lost, and the order of
    // completion is the order of the dates.
    assert_eq!(runs[0].0, None, "{runs:?}");
    for w in runs.windows(2) {
        assert_eq!(
            w[1].0,
            Some(w[0].1),
            "a run did not see the date before it: {runs:?}"
        );
    }
    // Each step is at least r = 0.01 s.
    for w in dates.windows(2) {
        let gap = (w[1].secs() - w[0].secs()) as i128 * 1_000_000_000
            + i128::from(w[1].subsec_nanos())
            - i128::from(w[0].subsec_nanos());
        assert!(gap >= 10_000_000, "{} then {}", w[0], w[1]);
    }
    // The state holds the last date, and nothing else is left behind but the lock.
    let last = std::fs::read_to_string(&state).unwrap();
    assert_eq!(last, format!("{}\n", dates[CHILDREN - 1]));
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["minting.state", "minting.state.lock"]);
}
