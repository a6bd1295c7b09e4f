//! var/col-prefixes, the listing of col/'s two top levels that `ibi-archive prefixes`
//! writes and an IBIp lookup believes while col/ and its subdomain directories keep their
//! stamps: the answers are those of an Archive without it, whatever is added, removed or
//! broken, and the service never writes it.
//!
//! A listing is remembered only once its directories have settled (changed two seconds
//! before, see `col_prefixes`): the memo is written in process, on a manual clock that the
//! wait for that moves, so no test sleeps; the command itself runs where it has nothing
//! to wait for.

use std::time::Duration;

use ::ibi::time::ManualClock;
use common::{Cgi, Fixture};
use ibi_archive::col_prefixes::FileState;
use ibi_archive::store::Store;

const LK47: &str = "servicesubject=urlRequest&parsedibiurl.ibi=LK47B6W/362SFKH";
const ITEM: &str = "col/iconet.com.br/banon/2009/09.09.22.01";

/// `ibi-archive prefixes` on the fixture: (exit code, stdout, stderr).
fn remember_cmd(f: &Fixture) -> (i32, String, String) {
    common::run_cmd(&["prefixes", "--root", f.root().to_str().unwrap()])
}

/// What `ibi-archive prefixes` does, in process, waiting on `clock`: what became of
/// var/col-prefixes, and the prefixes one a line as the command prints them.
fn remember(f: &Fixture, clock: &ManualClock) -> (FileState, String) {
    let (prefixes, state) = Store::remember_prefixes(f.root(), Duration::from_secs(10), clock);
    let lines = prefixes
        .iter()
        .flat_map(|(sub, wps)| wps.iter().map(move |wp| format!("{sub}/{wp}\n")))
        .collect();
    (state, lines)
}

/// A clock at the last change of col/ and of its subdomain directories (their ctime,
/// what a listing is stamped with): nothing there has settled yet.
fn clock_at_last_change(f: &Fixture) -> ManualClock {
    use std::os::unix::fs::MetadataExt;
    let col = f.path("col");
    let subdomains = std::fs::read_dir(&col).unwrap().map(|e| e.unwrap().path());
    let last = std::iter::once(col.clone())
        .chain(subdomains)
        .map(|dir| std::fs::metadata(dir).unwrap().ctime())
        .max()
        .unwrap();
    ManualClock::at(last)
}

/// The sample Archive, its col/ a link to sample-archive/col itself, whose directories
/// changed when the repository was checked out: settled for `prefixes` and the service
/// with no wait (neither writes under col/; were they not settled, `prefixes` would wait
/// for them, and answer the same).
fn settled_sample() -> Fixture {
    let f = Fixture::sample();
    f.remove("col");
    std::os::unix::fs::symlink(common::sample().join("col"), f.path("col")).unwrap();
    f
}

/// The sample Archive's prefixes, worked out from sample-archive/col/.
const PREFIXES: &str =
    "iconet.com.br/banon\nsid.inpe.br/mtc-m18\nsid.inpe.br/mtc-m18@80\nsid.inpe.br/mtc-m19\nurlib.net/www\n";

fn memo(f: &Fixture) -> Option<String> {
    std::fs::read_to_string(f.path("var/col-prefixes")).ok()
}

/// Each line of the memo without its stamp: `<name> <prefix>…` (the stamps are the
/// directories' device, inode and change time, which differ on every run).
fn names(memo: &str) -> Vec<String> {
    memo.lines()
        .skip(2)
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            [&f[..1], &f[5..]].concat().join(" ")
        })
        .collect()
}

/// The answer, with its random urlkey masked, and what went to stderr.
fn ask(f: &Fixture, query: &str) -> (String, String) {
    let out = Cgi::get(f.root(), query).run();
    assert_eq!(out.status, 200);
    (common::mask_urlkey(&out.text()).0, out.stderr)
}

/// The same request with the memo out of the way (renamed, then put back).
fn ask_without_memo(f: &Fixture, query: &str) -> (String, String) {
    let (memo, aside) = (f.path("var/col-prefixes"), f.path("var/aside"));
    let had = std::fs::rename(&memo, &aside).is_ok();
    let out = ask(f, query);
    if had {
        std::fs::rename(&aside, &memo).unwrap();
    }
    out
}

/// A fixture whose var/ exists and whose memo has been written, and the clock it was
/// written by (col/ has settled by it).
fn settled_fixture() -> (Fixture, ManualClock) {
    let f = Fixture::sample();
    std::fs::create_dir(f.path("var")).unwrap();
    ask(&f, LK47);
    assert_eq!(memo(&f), None, "the service wrote var/col-prefixes");
    // Just copied: `prefixes` waits for col/ to settle, then writes.
    let clock = clock_at_last_change(&f);
    assert_eq!(
        remember(&f, &clock),
        (FileState::Held, PREFIXES.to_string())
    );
    assert!(clock.slept() >= Duration::from_secs(1));
    let m = memo(&f).expect("var/col-prefixes written");
    assert!(m.starts_with("ibi-archive col-prefixes 1\n. "), "{m}");
    // The sample Archive's two top levels, worked out from sample-archive/col/.
    assert_eq!(
        names(&m),
        [
            "iconet.com.br banon",
            "sid.inpe.br mtc-m18 mtc-m18@80 mtc-m19",
            "urlib.net www",
        ]
    );
    // The command prints what is remembered (unchanged: nothing to list or wait for).
    assert_eq!(remember_cmd(&f), (0, PREFIXES.to_string(), String::new()));
    assert_eq!(memo(&f).as_ref(), Some(&m));
    (f, clock)
}

fn move_item(f: &Fixture, to: &str) {
    std::fs::create_dir_all(f.path(to).parent().unwrap()).unwrap();
    std::fs::rename(f.path(ITEM), f.path(to)).unwrap();
}

#[test]
fn an_item_moved_to_a_new_subdomain_is_found_at_once() {
    let (f, _) = settled_fixture();
    let before = ask(&f, LK47);
    move_item(&f, "col/example.org/banon/2009/09.09.22.01");
    let after = ask(&f, LK47);
    assert_eq!(after, ask_without_memo(&f, LK47));
    assert_ne!(after, before);
    assert!(
        after
            .0
            .contains("ibi {rep example.org/banon/2009/09.09.22.01 ibip LK47B6W/362SFKH}"),
        "{}",
        after.0
    );
    assert_eq!(after.1, "");
}

#[test]
fn an_item_moved_to_a_new_prefix_of_a_known_subdomain_is_found_at_once() {
    let (f, _) = settled_fixture();
    move_item(&f, "col/sid.inpe.br/banon/2009/09.09.22.01");
    let after = ask(&f, LK47);
    assert_eq!(after, ask_without_memo(&f, LK47));
    assert!(
        after
            .0
            .contains("ibi {rep sid.inpe.br/banon/2009/09.09.22.01 ibip LK47B6W/362SFKH}"),
        "{}",
        after.0
    );
}

#[test]
fn a_rep_finds_other_spellings_made_after_the_memo_at_once() {
    let (f, _) = settled_fixture();
    let asked = "servicesubject=urlRequest&parsedibiurl.ibi=iconet.com.br/banon/2009/09.09.22.01";
    let written = memo(&f);
    let before = ask(&f, asked);
    assert!(
        before
            .0
            .contains("ibi {rep iconet.com.br/banon/2009/09.09.22.01"),
        "{}",
        before.0
    );
    // The prefix renamed in its subdomain (iconet.com.br's stamp changes), then the
    // subdomain renamed in col/ (col/'s stamp changes): found at once each time, spelled
    // as on disk, as without the memo.
    let steps = [
        (
            "col/iconet.com.br/banon",
            "col/iconet.com.br/BANON@80",
            "iconet.com.br/BANON@80",
        ),
        (
            "col/iconet.com.br",
            "col/Iconet.COM.br",
            "Iconet.COM.br/BANON@80",
        ),
    ];
    for (from, to, spelled) in steps {
        std::fs::rename(f.path(from), f.path(to)).unwrap();
        let found = ask(&f, asked);
        assert_eq!(found, ask_without_memo(&f, asked));
        let wanted = format!("ibi {{rep {spelled}/2009/09.09.22.01 ibip LK47B6W/362SFKH}}");
        assert!(found.0.contains(&wanted), "{wanted} not in {}", found.0);
        assert_eq!(found.1, "");
    }
    // Another port is another prefix: not this item.
    std::fs::rename(
        f.path("col/Iconet.COM.br/BANON@80"),
        f.path("col/Iconet.COM.br/banon.8080"),
    )
    .unwrap();
    assert_eq!(ask(&f, asked), ("".to_string(), "".to_string()));
    assert_eq!(memo(&f), written, "the service wrote var/col-prefixes");
}

#[test]
fn a_prefix_removed_or_replaced_is_not_believed() {
    let (f, _) = settled_fixture();
    std::fs::remove_dir_all(f.path("col/iconet.com.br/banon")).unwrap();
    let gone = ask(&f, LK47);
    assert_eq!(gone, ("".to_string(), "".to_string()));
    // The subdomain directory replaced by another holding the item again.
    let other = f.path("col/iconet.com.br.new/banon/2009");
    std::fs::create_dir_all(&other).unwrap();
    common::copy_tree(&common::sample().join(ITEM), &other.join("09.09.22.01"));
    std::fs::remove_dir_all(f.path("col/iconet.com.br")).unwrap();
    std::fs::rename(f.path("col/iconet.com.br.new"), f.path("col/iconet.com.br")).unwrap();
    let back = ask(&f, LK47);
    assert_eq!(back, ask_without_memo(&f, LK47));
    assert!(back
        .0
        .contains("ibi {rep iconet.com.br/banon/2009/09.09.22.01"));
}

#[test]
fn a_memo_that_does_not_parse_is_ignored_and_rewritten() {
    let (f, clock) = settled_fixture();
    let good = memo(&f).unwrap();
    let expected = ask_without_memo(&f, LK47);
    for bad in [
        String::new(),
        "garbage\n".to_string(),
        good.replace("banon", "../../etc"),
        good.replace(" 1\n", " 2\n"),
        good[..good.len() - 1].to_string(),
        "\u{0}".repeat(300_000),
    ] {
        std::fs::write(f.path("var/col-prefixes"), &bad).unwrap();
        assert_eq!(
            ask(&f, LK47),
            expected,
            "with {:?}",
            &bad[..bad.len().min(60)]
        );
        assert_eq!(memo(&f).unwrap(), bad, "the service wrote var/col-prefixes");
        assert_eq!(
            remember(&f, &clock),
            (FileState::Held, PREFIXES.to_string())
        );
        assert_eq!(names(&memo(&f).unwrap()), names(&good));
    }
}

#[test]
fn a_memo_with_other_stamps_is_not_believed() {
    let (f, clock) = settled_fixture();
    let good = memo(&f).unwrap();
    // col/'s inode changed, a subdomain that is not there, and iconet.com.br with another
    // inode and an invented prefix: all listed again.
    let mut lines: Vec<String> = good.lines().map(str::to_string).collect();
    let restamp = |line: &str, at: usize| {
        let mut f: Vec<String> = line.split(' ').map(str::to_string).collect();
        f[at] = "1".to_string();
        f.join(" ")
    };
    lines[1] = restamp(&lines[1], 2);
    lines[2] = restamp(&lines[2], 2).replace(" banon", " banon zzz");
    let invented = lines[2].replace("iconet.com.br", "aaa.example");
    lines.insert(2, invented);
    let lying = lines.join("\n") + "\n";
    std::fs::write(f.path("var/col-prefixes"), &lying).unwrap();
    assert_eq!(ask(&f, LK47), ask_without_memo(&f, LK47));
    assert_eq!(
        memo(&f).unwrap(),
        lying,
        "the service wrote var/col-prefixes"
    );
    assert_eq!(
        remember(&f, &clock),
        (FileState::Held, PREFIXES.to_string())
    );
    assert_eq!(memo(&f).unwrap(), good);
}

#[test]
fn without_a_var_directory_nothing_is_written_and_the_answer_is_the_same() {
    let f = settled_sample();
    let first = ask(
        &f,
        "servicesubject=urlRequest&parsedibiurl.ibi=8JMKD3MGP8W/35MME4E",
    );
    assert_eq!(first.1, "");
    assert!(first.0.contains("ibip 8JMKD3MGP8W/35MME4E"), "{}", first.0);
    // The urlkey secret made var/; the memo was not (var/ did not exist when looked for).
    let var = f.names_in("var");
    assert_eq!(var, ["urlkey.secret"]);
}

#[test]
fn prefixes_refuses_what_it_cannot_do() {
    let f = settled_sample();
    // No var/ (the fixture has none until a hit makes the urlkey secret).
    let root = f.root().to_str().unwrap().to_string();
    assert_eq!(
        remember_cmd(&f),
        (
            1,
            String::new(),
            format!(
                "ibi-archive: prefixes: cannot write {root}/var/col-prefixes: var/ is missing \
                 or not writable, or belongs to another user than you (run this as var/'s \
                 owner or as root), or a name under col/ holds a space or a control character\n"
            )
        )
    );
    std::fs::remove_file(f.path("col")).unwrap();
    assert_eq!(
        remember_cmd(&f),
        (
            1,
            String::new(),
            format!("ibi-archive: prefixes: {root}: no col/ directory\n")
        )
    );
    assert_eq!(
        common::run_cmd(&["prefixes", "--bogus"]),
        (
            2,
            String::new(),
            "ibi-archive: prefixes: unexpected argument --bogus; see ibi-archive prefixes --help\n"
                .to_string()
        )
    );
}
