//! The throwaway PostgreSQL clusters the registry's tests run on (`common::pg`): a
//! cluster keeps what was committed across a stop, a restart and a crash; a primary's
//! streaming standby holds every commit the primary acknowledged and, promoted, takes
//! writes; and a cluster dropped leaves no process and no directory behind.

use common::pg::{Cluster, USER};

/// The uid of process `pid`, from /proc.
fn uid_of(pid: i32) -> u32 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().next())
        .and_then(|uid| uid.parse().ok())
        .unwrap_or_else(|| panic!("no Uid in /proc/{pid}/status"))
}

#[test]
fn a_cluster_keeps_a_table_across_stop_and_restart_and_goes_when_dropped() {
    let Some(pg) = Cluster::start() else { return };
    assert_eq!(pg.host_port(), format!("127.0.0.1:{}", pg.port()));
    assert_eq!(pg.psql("postgres", "SHOW listen_addresses"), "127.0.0.1\n");
    let pid = pg.postmaster_pid().expect("a running postmaster");
    if common::running_as_root() {
        let (nobody, _) = common::user_ids("nobody").unwrap();
        assert_eq!(uid_of(pid), nobody, "as root, the server runs as nobody");
    } else {
        assert_eq!(uid_of(pid), uid_of(std::process::id() as i32));
    }

    let uri = pg.database();
    let name = uri.rsplit('/').next().unwrap().to_string();
    assert_eq!(
        uri,
        format!("postgresql://{USER}@127.0.0.1:{}/{name}", pg.port())
    );
    assert_eq!(pg.uri(&name), uri);
    assert_ne!(pg.database(), uri, "each database is a new one");
    assert_eq!(
        pg.psql(&uri, "SELECT count(*) FROM pg_class WHERE relname = 't'"),
        "0\n"
    );

    let written = "CREATE TABLE t (k int PRIMARY KEY, v text);\n\
                   INSERT INTO t VALUES (1, 'one'), (2, 'two');";
    assert_eq!(pg.psql(&name, written), "");
    assert_eq!(
        pg.psql(&uri, "SELECT k, v FROM t ORDER BY k"),
        "1|one\n2|two\n"
    );

    pg.stop();
    let refused = pg.try_psql(&name, "SELECT 1");
    assert!(!refused.success, "a stopped cluster answered: {refused:?}");
    assert!(pg.postmaster_pid().is_none());
    pg.restart();
    assert_eq!(
        pg.psql(&name, "SELECT k, v FROM t ORDER BY k"),
        "1|one\n2|two\n"
    );

    let dir = pg.dir().to_path_buf();
    let pid = pg.postmaster_pid().expect("a running postmaster");
    assert!(dir.is_dir());
    drop(pg);
    assert!(!dir.exists(), "{} is still there", dir.display());
    assert!(
        !common::process_alive(pid as u32),
        "the postmaster {pid} still runs"
    );
}

#[test]
fn a_psql_error_names_what_failed() {
    let Some(pg) = Cluster::start() else { return };
    let failed = pg.try_psql(
        "postgres",
        "SELECT 1; SELECT * FROM missing_table; SELECT 2",
    );
    assert!(!failed.success);
    assert_eq!(
        failed.stdout, "1\n",
        "ON_ERROR_STOP: nothing after the error runs"
    );
    assert!(
        failed
            .stderr
            .contains("relation \"missing_table\" does not exist"),
        "{failed:?}"
    );
    let panic = std::panic::catch_unwind(|| pg.psql("postgres", "SELECT * FROM missing_table"))
        .expect_err("psql of a failing statement panics");
    let message = panic.downcast_ref::<String>().expect("a formatted message");
    assert!(message.contains("missing_table"), "{message}");
}

#[test]
fn a_killed_cluster_restarts_with_what_it_had_committed() {
    let Some(pg) = Cluster::start() else { return };
    let name = pg.create_database();
    pg.psql(
        &name,
        "CREATE TABLE t (v text); INSERT INTO t VALUES ('before the crash')",
    );
    let pid = pg.postmaster_pid().expect("a running postmaster");
    pg.kill();
    assert!(
        !common::process_alive(pid as u32),
        "the postmaster {pid} still runs"
    );
    assert!(
        pg.cluster_processes().is_empty(),
        "{:?}",
        pg.cluster_processes()
    );
    assert!(!pg.try_psql(&name, "SELECT 1").success);
    pg.restart();
    assert_eq!(pg.psql(&name, "SELECT v FROM t"), "before the crash\n");
    assert!(
        pg.log().contains("database system was interrupted"),
        "no crash recovery in the log:\n{}",
        pg.log()
    );
    pg.psql(&name, "INSERT INTO t VALUES ('after')");
    assert_eq!(pg.psql(&name, "SELECT count(*) FROM t"), "2\n");
}

#[test]
fn a_standby_holds_what_the_primary_committed_and_takes_writes_once_promoted() {
    let Some(primary) = Cluster::start_primary() else {
        return;
    };
    let standby = primary.standby();
    assert_ne!(standby.port(), primary.port());
    assert_eq!(
        primary.psql(
            "postgres",
            "SELECT state, sync_state FROM pg_stat_replication"
        ),
        "streaming|sync\n"
    );
    let name = primary.create_database();
    primary.psql(
        &name,
        "CREATE TABLE t (v text); INSERT INTO t VALUES ('one')",
    );
    standby.wait_for(&name, "SELECT string_agg(v, ',') FROM t", "one\n");
    let refused = standby.try_psql(&name, "INSERT INTO t VALUES ('on the standby')");
    assert!(
        refused
            .stderr
            .contains("cannot execute INSERT in a read-only transaction"),
        "{refused:?}"
    );
    assert_eq!(
        standby.psql("postgres", "SELECT pg_is_in_recovery()"),
        "t\n"
    );

    primary.stop();
    standby.promote();
    assert_eq!(
        standby.psql("postgres", "SELECT pg_is_in_recovery()"),
        "f\n"
    );
    standby.psql(&name, "INSERT INTO t VALUES ('two')");
    assert_eq!(
        standby.psql(&name, "SELECT v FROM t ORDER BY v"),
        "one\ntwo\n"
    );
}

#[test]
fn a_commit_the_primary_acknowledged_survives_its_crash() {
    let Some(primary) = Cluster::start_primary() else {
        return;
    };
    let name = primary.create_database();
    primary.psql(&name, "CREATE TABLE t (v int)");
    let standby = primary.standby();
    // Each commit acknowledged only once the standby has it.
    primary.psql(
        &name,
        "INSERT INTO t SELECT generate_series(1, 100);\n\
         INSERT INTO t VALUES (101);",
    );
    primary.kill();
    standby.promote();
    assert_eq!(
        standby.psql(&name, "SELECT count(*), max(v) FROM t"),
        "101|101\n"
    );
}

#[test]
fn without_its_standby_the_primary_does_not_acknowledge_a_commit() {
    let Some(primary) = Cluster::start_primary() else {
        return;
    };
    let standby = primary.standby();
    let name = primary.create_database();
    primary.psql(&name, "CREATE TABLE t (v int)");
    standby.stop();
    std::thread::scope(|s| {
        let insert = s.spawn(|| primary.psql(&name, "INSERT INTO t VALUES (1)"));
        // Its commit waits for the standby...
        primary.wait_for(
            "postgres",
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'",
            "1\n",
        );
        assert!(!insert.is_finished());
        // ...and is acknowledged once the standby is back and has it.
        standby.restart();
        assert_eq!(insert.join().unwrap(), "");
    });
    standby.wait_for(&name, "SELECT v FROM t", "1\n");
}
