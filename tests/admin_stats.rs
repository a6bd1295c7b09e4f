//! `ibi-archive stats`: counts of the accesses the service counted (acknowledgments with a
//! key it issued, once per key), per item and month, as a table and as CSV.

use common::{run_cmd, Cgi, Fixture};

fn stats(f: &Fixture, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["stats", "--root", f.root().to_str().unwrap()];
    args.extend_from_slice(extra);
    run_cmd(&args)
}

fn pair<'a>(text: &'a str, name: &str) -> &'a str {
    text.split("\r\n")
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no {name} in {text}"))
}

/// A urlRequest; returns the url pair `url_name` and the urlkey.
fn request(f: &Fixture, ibi: &str, verbs: &str, url_name: &str) -> (String, String) {
    let out = Cgi::get(
        f.root(),
        &format!("servicesubject=urlRequest&clientinformation.ipaddress=127.0.0.1&parsedibiurl.ibi={ibi}&parsedibiurl.verblist={verbs}"),
    )
    .run()
    .text();
    (
        pair(&out, url_name).to_string(),
        pair(&out, "urlkey").to_string(),
    )
}

/// An acknowledgment as the resolver sends it (Example 8.9: the IBI asked for, the url
/// and the urlkey of the answer); answered the same always.
fn acknowledge(f: &Fixture, ibi: &str, url: &str, key: &str) {
    let out = Cgi::get(
        f.root(),
        &format!("servicesubject=acknowledgment&clientinformation.ipaddress=127.0.0.1&contenttype=Data&ibi=ibip%20{ibi}&url={url}&urlkey={key}"),
    )
    .run();
    assert_eq!(out.text(), "notice {acknowledgment received}");
}

const A: &str = "8JMKD3MGP7W/3EPGUE5";

/// The first line of the table: what it counts.
const HEADER: &str =
    "accesses counted in var/acknowledgments.log, per item and month (UTC); item * is all items";
/// The last line of a table with a row `-`.
const UNNAMED: &str = "item -: accesses whose log line names no item (written by an earlier version of the service, for acknowledgments whose item it could not tell)";
const B: &str = "LK47B6W/362SFKH";
const M: &str = "8JMKD3MGP8W/35MME4E";

#[test]
fn counts_follow_the_acknowledgments_the_service_counted() {
    let f = Fixture::sample();
    // Two accesses to the Portuguese report, one to iconet's, one to a metadata record.
    let (url_a, key_a1) = request(&f, A, "", "url");
    let (_, key_a2) = request(&f, A, "", "url");
    let (url_b, key_b) = request(&f, B, "", "url");
    let (url_m, key_m) = request(
        &f,
        "8JMKD3MGP8W/35MME4E",
        "GetMetadata(oai_dc)",
        "url.metadata(oai_dc)",
    );
    acknowledge(&f, A, &url_a, &key_a1);
    acknowledge(&f, A, &url_a, &key_a2);
    acknowledge(&f, B, &url_b, &key_b);
    acknowledge(&f, M, &url_m, &key_m);
    // Not counted: a replay, a key issued for another url, a key with a digit changed, a
    // key never issued.
    acknowledge(&f, A, &url_a, &key_a1);
    acknowledge(&f, A, &url_a, &key_b);
    let mut tampered = key_m.clone().into_bytes();
    let last = tampered.len() - 1;
    tampered[last] = if tampered[last] == b'0' { b'1' } else { b'0' };
    acknowledge(&f, M, &url_m, std::str::from_utf8(&tampered).unwrap());
    acknowledge(&f, B, &url_b, "1234567890-1234567890");

    // The month the service recorded (UTC), the same for every line.
    let log = std::fs::read_to_string(f.path("var/acknowledgments.log")).unwrap();
    let months: std::collections::BTreeSet<&str> = log.lines().map(|l| &l[..7]).collect();
    assert_eq!(months.len(), 1, "{log}");
    let m = *months.iter().next().unwrap();

    let (code, out, err) = stats(&f, &[]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        out,
        format!(
            "{HEADER}\n\
             item                                        month    count\n\
             iconet.com.br/banon/2009/09.09.22.01        {m}      1\n\
             iconet.com.br/banon/2009/09.09.22.01        total        1\n\
             sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47  {m}      1\n\
             sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47  total        1\n\
             sid.inpe.br/mtc-m19/2013/09.04.12.27.57     {m}      2\n\
             sid.inpe.br/mtc-m19/2013/09.04.12.27.57     total        2\n\
             *                                           {m}      4\n\
             *                                           total        4\n"
        )
    );
    let (code, out, err) = stats(&f, &["--csv"]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        out,
        format!(
            "item,month,count\n\
             iconet.com.br/banon/2009/09.09.22.01,{m},1\n\
             iconet.com.br/banon/2009/09.09.22.01,total,1\n\
             sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47,{m},1\n\
             sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47,total,1\n\
             sid.inpe.br/mtc-m19/2013/09.04.12.27.57,{m},2\n\
             sid.inpe.br/mtc-m19/2013/09.04.12.27.57,total,2\n\
             *,{m},4\n\
             *,total,4\n"
        )
    );
    // One item, by its IBIp.
    let (code, out, _) = stats(&f, &["--csv", "--item", "8JMKD3MGP7W/3EPGUE5"]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        format!(
            "item,month,count\n\
             sid.inpe.br/mtc-m19/2013/09.04.12.27.57,{m},2\n\
             sid.inpe.br/mtc-m19/2013/09.04.12.27.57,total,2\n\
             *,{m},2\n\
             *,total,2\n"
        )
    );
    // The landing pages show the same counts, read from var/accesses/ (one stat each),
    // the log untouched.
    for (rep, count) in [
        ("sid.inpe.br/mtc-m19/2013/09.04.12.27.57", 2),
        ("iconet.com.br/banon/2009/09.09.22.01", 1),
        ("sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47", 1),
        ("sid.inpe.br/mtc-m18@80/2009/07.21.13.23", 0),
    ] {
        let path_info = format!("/filelist/{rep}");
        let page = Cgi {
            path_info: &path_info,
            ..Cgi::get(f.root(), "")
        }
        .run();
        assert_eq!(page.status, 200, "{rep}");
        assert!(
            page.text()
                .contains(&format!("<dt>Accesses</dt><dd>{count}</dd>\n")),
            "{rep}: {}",
            page.text()
        );
    }
}

#[test]
fn a_written_log_across_two_months_with_malformed_lines() {
    let f = Fixture::sample();
    let a = "sid.inpe.br/mtc-m19/2013/09.04.12.27.57";
    let b = "iconet.com.br/banon/2009/09.09.22.01";
    let log = format!(
        "2026-01-31T23:59:59Z\t1000000001-1\t{a}\tData\thttp://x/a\n\
         2026-02-01T00:30:00+01:00\t1000000002-1\t{a}\tData\thttp://x/a\n\
         2026-02-01T00:00:00Z\t1000000003-1\t{a}\tData\thttp://x/a\n\
         garbage\n\
         2026-02-14T10:00:00Z\t1000000004-1\t{a}\tMetadata\thttp://x/a\n\
         2026-01-05T08:00:00Z\t1000000005-1\t{b}\tData\thttp://x/b\n\
         2026-02-30T00:00:00Z\t1000000006-1\t{b}\tData\thttp://x/b\n\
         2026-02-05T08:00:00Z\t1000000007-1\t-\tData\thttp://x/c\n\
         2026-02-06T08:00:00Z\t1000000008-1\t{b}\n\
         \n"
    );
    f.write("var/acknowledgments.log", log.as_bytes());
    let warning = "ibi-archive: stats: 3 malformed lines in var/acknowledgments.log skipped\n";
    let (code, out, err) = stats(&f, &[]);
    assert_eq!((code, err.as_str()), (0, warning));
    assert_eq!(
        out,
        format!(
            "{HEADER}\n\
         item                                     month    count\n\
         -                                        2026-02      1\n\
         -                                        total        1\n\
         iconet.com.br/banon/2009/09.09.22.01     2026-01      1\n\
         iconet.com.br/banon/2009/09.09.22.01     total        1\n\
         sid.inpe.br/mtc-m19/2013/09.04.12.27.57  2026-01      2\n\
         sid.inpe.br/mtc-m19/2013/09.04.12.27.57  2026-02      2\n\
         sid.inpe.br/mtc-m19/2013/09.04.12.27.57  total        4\n\
         *                                        2026-01      3\n\
         *                                        2026-02      3\n\
         *                                        total        6\n\
         {UNNAMED}\n"
        )
    );
    let (code, out, err) = stats(&f, &["--csv"]);
    assert_eq!((code, err.as_str()), (0, warning));
    assert_eq!(
        out,
        "item,month,count\n\
         -,2026-02,1\n\
         -,total,1\n\
         iconet.com.br/banon/2009/09.09.22.01,2026-01,1\n\
         iconet.com.br/banon/2009/09.09.22.01,total,1\n\
         sid.inpe.br/mtc-m19/2013/09.04.12.27.57,2026-01,2\n\
         sid.inpe.br/mtc-m19/2013/09.04.12.27.57,2026-02,2\n\
         sid.inpe.br/mtc-m19/2013/09.04.12.27.57,total,4\n\
         *,2026-01,3\n\
         *,2026-02,3\n\
         *,total,6\n"
    );
    // One item, by another spelling of its rep.
    let (code, out, _) = stats(
        &f,
        &[
            "--item",
            "SID.inpe.br/mtc-m19@80/2013/09.04.12.27.57",
            "--csv",
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "item,month,count\n\
         sid.inpe.br/mtc-m19/2013/09.04.12.27.57,2026-01,2\n\
         sid.inpe.br/mtc-m19/2013/09.04.12.27.57,2026-02,2\n\
         sid.inpe.br/mtc-m19/2013/09.04.12.27.57,total,4\n\
         *,2026-01,2\n\
         *,2026-02,2\n\
         *,total,4\n"
    );
}

#[test]
fn no_log_counts_nothing_and_bad_arguments_are_refused() {
    let f = Fixture::sample();
    assert_eq!(
        stats(&f, &[]),
        (
            0,
            format!("{HEADER}\nitem  month    count\n*     total        0\n"),
            String::new()
        )
    );
    assert_eq!(
        stats(&f, &["--csv"]),
        (
            0,
            "item,month,count\n*,total,0\n".to_string(),
            String::new()
        )
    );
    let (code, _, err) = stats(&f, &["--item", "nonsense"]);
    assert_eq!(
        (code, err.as_str()),
        (2, "ibi-archive: stats: --item: invalid IBI \"nonsense\": it has 0 '/', expected 3 (rep) or 1 (IBIp)\n")
    );
    let (code, _, err) = stats(&f, &["--json"]);
    assert_eq!(
        (code, err.as_str()),
        (
            2,
            "ibi-archive: stats: unexpected argument --json; see ibi-archive stats --help\n"
        )
    );
}

/// Runs `stats --csv` and returns its exit code, its output and the highest peak
/// resident memory (VmHWM, KiB) seen in /proc while it ran (a lower bound of its peak;
/// the high-water mark of the process image, from its exec on).
fn stats_with_peak(f: &Fixture) -> (i32, String, u64) {
    use std::io::Read;
    let mut child = common::command(&["stats", "--csv", "--root", f.root().to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        stdout.read_to_string(&mut out).unwrap();
        out
    });
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0u64;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&status_file) {
            let hwm = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok());
            peak = peak.max(hwm.unwrap_or(0));
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    (status.code().unwrap_or(-1), reader.join().unwrap(), peak)
}

/// `stats` reads the log as a stream: 64 MiB of log lines cost it no more memory than a
/// few (it held the whole log, and a record per line, in memory).
#[test]
fn stats_reads_a_large_log_in_bounded_memory() {
    let f = Fixture::sample();
    let items = [
        "iconet.com.br/banon/2009/09.09.22.01",
        "sid.inpe.br/mtc-m19/2013/09.04.12.27.57",
    ];
    let months = [
        ("2026-01", 1_767_225_600i64),
        ("2026-02", 1_769_904_000),
        ("2026-03", 1_772_323_200),
    ];
    let url = format!("http://localhost:8080/col/x/doc/{}", "a".repeat(200));
    let mut log = String::with_capacity(70 << 20);
    let mut n = 0u64;
    while log.len() < 64 << 20 {
        let (item, (_, start)) = (items[(n % 2) as usize], months[((n / 2) % 3) as usize]);
        let time = chrono::DateTime::from_timestamp(start + (n % 86_400) as i64, 0).unwrap();
        log.push_str(&format!(
            "{}\t{:010}-{:016}\t{item}\tData\t{url}\n",
            time.format("%Y-%m-%dT%H:%M:%SZ"),
            start,
            n
        ));
        n += 1;
    }
    f.write("var/acknowledgments.log", log.as_bytes());
    drop(log);
    // Worked out from how the lines were made: line k is item k % 2, month (k / 2) % 3.
    let mut count = [[0u64; 3]; 2];
    for k in 0..n {
        count[(k % 2) as usize][((k / 2) % 3) as usize] += 1;
    }
    let mut want = String::from("item,month,count\n");
    for (i, item) in items.iter().enumerate() {
        for (m, (month, _)) in months.iter().enumerate() {
            want.push_str(&format!("{item},{month},{}\n", count[i][m]));
        }
        want.push_str(&format!("{item},total,{}\n", count[i].iter().sum::<u64>()));
    }
    for (m, (month, _)) in months.iter().enumerate() {
        want.push_str(&format!("*,{month},{}\n", count[0][m] + count[1][m]));
    }
    want.push_str(&format!("*,total,{n}\n"));
    let (code, out, peak) = stats_with_peak(&f);
    assert_eq!((code, out), (0, want));
    assert!(peak < 32 * 1024, "peak RSS {peak} KiB for a 64 MiB log");
}

/// Outside an Archive, stats fails and says what to do (it printed an empty table).
#[test]
fn outside_an_archive_stats_fails_and_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    assert_eq!(
        run_cmd(&["stats", "--root", root, "--csv"]),
        (
            1,
            String::new(),
            format!("ibi-archive: stats: {root}/archive.toml: no such file, so {root} is not an Archive root: give the Archive's root with --root DIR (or set IBI_ARCHIVE_ROOT) or create one with ibi-archive init --root DIR --address HOST[:PORT]\n")
        )
    );
}

/// --help says what is counted, what each column holds, and what the rows `*` and `-`
/// are.
#[test]
fn the_help_explains_every_column_and_the_rows_star_and_dash() {
    let (code, out, err) = run_cmd(&["stats", "--help"]);
    assert_eq!((code, err.as_str()), (0, ""));
    for words in [
        "  item ",
        "  month ",
        "  count ",
        "`*` adds up every item",
        "`-` counts log lines that name no item",
        "item,month,count",
    ] {
        assert!(out.contains(words), "{words:?} not in\n{out}");
    }
}

/// The logs logrotate keeps of var/acknowledgments.log are counted with it: `.1` as it
/// is and `.2.gz` compressed (by gzip, as logrotate's `compress` does), oldest first; a
/// `.3` whose `.3.gz` gzip is still writing is read once, plain; names that are no
/// rotation of the log are not read.
#[test]
fn the_logs_logrotate_kept_are_counted_too() {
    let f = Fixture::sample();
    let a = "sid.inpe.br/mtc-m19/2013/09.04.12.27.57";
    let line = |month: &str, n: u32| {
        format!("2026-{month}-10T10:00:00Z\t10000000{n:02}-1\t{a}\tData\thttp://x/a\n")
    };
    f.write("var/acknowledgments.log.3", line("01", 1).as_bytes());
    f.write(
        "var/acknowledgments.log.3.gz",
        b"not yet gzip's whole output",
    );
    f.write(
        "var/acknowledgments.log.2",
        format!("{}{}", line("02", 2), line("02", 3)).as_bytes(),
    );
    let gzip = std::process::Command::new("gzip")
        .arg(f.path("var/acknowledgments.log.2"))
        .status()
        .unwrap();
    assert!(gzip.success());
    assert!(f.path("var/acknowledgments.log.2.gz").is_file());
    f.write("var/acknowledgments.log.1", line("03", 4).as_bytes());
    f.write("var/acknowledgments.log", line("03", 5).as_bytes());
    // Not rotations of the log.
    for other in [
        "acknowledgments.log.old",
        "acknowledgments.log.1.bak",
        "acknowledgments.log.",
    ] {
        f.write(&format!("var/{other}"), line("04", 9).as_bytes());
    }
    let (code, out, err) = stats(&f, &["--csv"]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        out,
        format!(
            "item,month,count\n\
             {a},2026-01,1\n\
             {a},2026-02,2\n\
             {a},2026-03,2\n\
             {a},total,5\n\
             *,2026-01,1\n\
             *,2026-02,2\n\
             *,2026-03,2\n\
             *,total,5\n"
        )
    );
}
