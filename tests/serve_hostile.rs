//! `ibi-archive serve` under hostile clients, each a real connection on loopback: slow
//! readers of a large file, a pipelining client that never reads, hundreds of idle
//! connections, an accept loop out of descriptors, a request head of 64 MB, a slowloris
//! head, and a file swapped for a symbolic link or a named pipe between requests. Every
//! time, other clients are still answered and nothing leaves the Archive.
//!
//! No clock is read to judge the server. Where others must be answered beside hostile
//! clients, the server runs with limits of an hour ([`PATIENT`]): one that served a
//! hostile client before the others would give no answer within the client's own
//! timeout (`HTTP_TIMEOUT`), so the answer arriving at all is the proof.

use std::io::{Read, Write};
use std::net::{IpAddr, TcpStream};
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::Duration;

use common::{connect_from, http_get_from};
use common::{Fixture, Serve};

const ITEM: &str = "col/iconet.com.br/banon/2009/09.09.22.01";
/// Short limits, so that the tests need not wait long.
const LIMITS: [&str; 6] = [
    "--idle-timeout",
    "1",
    "--head-timeout",
    "2",
    "--write-timeout",
    "2",
];

/// Limits of an hour, far beyond the client's timeout: see the top of this file.
const PATIENT: [&str; 6] = [
    "--idle-timeout",
    "3600",
    "--head-timeout",
    "3600",
    "--write-timeout",
    "3600",
];

fn local(n: u8) -> IpAddr {
    IpAddr::from([127, 0, 0, n])
}

/// serve with [`LIMITS`] and `more`, its request log in the file it returns.
fn start(f: &Fixture, more: &[&str]) -> (Serve, std::path::PathBuf) {
    start_with(f, &LIMITS, more)
}

/// serve with the [`PATIENT`] limits and `more`.
fn start_patient(f: &Fixture, more: &[&str]) -> (Serve, std::path::PathBuf) {
    start_with(f, &PATIENT, more)
}

fn start_with(f: &Fixture, limits: &[&str], more: &[&str]) -> (Serve, std::path::PathBuf) {
    let log = f.root().parent().unwrap().join(format!(
        "serve-{}.log",
        f.root().file_name().unwrap().to_string_lossy()
    ));
    let mut args: Vec<&str> = limits.to_vec();
    args.extend_from_slice(more);
    let serve = Serve::start_with(f.root(), std::fs::File::create(&log).unwrap(), &args);
    (serve, log)
}

fn connect(serve: &Serve, from: IpAddr) -> TcpStream {
    let s = connect_from(from, serve.address.parse().unwrap()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

/// A plain request from `from` answers 200 (within the client's timeout, or the test
/// fails).
fn answers(serve: &Serve, from: IpAddr) {
    let r = http_get_from(
        from,
        &format!("{}/{ITEM}/doc/reference.bib", serve.base_url()),
    );
    assert_eq!(r.status, 200, "{}", r.text());
}

/// A 64 MiB file (sparse) in the item's doc/.
fn large_file(f: &Fixture) -> String {
    let file = std::fs::File::create(f.path(&format!("{ITEM}/doc/large.bin"))).unwrap();
    file.set_len(64 << 20).unwrap();
    format!("/{ITEM}/doc/large.bin")
}

/// The peak resident memory of a process, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap()
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// `n` clients from 127.0.0.3 that ask for `target` and read nothing.
fn stalled_readers(serve: &Serve, target: &str, n: usize) -> Vec<TcpStream> {
    (0..n)
        .map(|_| {
            let mut s = connect(serve, local(3));
            write!(s, "GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
            s
        })
        .collect()
}

#[test]
fn slow_readers_of_a_large_file_block_only_themselves() {
    let f = Fixture::sample();
    let large = large_file(&f);
    // Eight clients ask for 64 MiB and read nothing, and the server would wait an hour
    // for each: others are answered beside them.
    let (serve, _log) = start_patient(&f, &[]);
    let mut stalled = stalled_readers(&serve, &large, 8);
    // Each is being answered (its status line came) before the others ask.
    for s in &mut stalled {
        let mut status = [0u8; 12];
        s.read_exact(&mut status).unwrap();
        assert_eq!(&status, b"HTTP/1.1 200");
    }
    for _ in 0..5 {
        answers(&serve, local(1));
    }
    drop(stalled);
    // A stalled writer is given up after the write timeout (2 s): the connection ends
    // before 64 MiB are sent.
    let (serve, _log) = start(&f, &[]);
    let stalled = stalled_readers(&serve, &large, 8);
    // The stall itself: nothing read for longer than the write timeout.
    std::thread::sleep(Duration::from_secs(3));
    let mut s = stalled.into_iter().next().unwrap();
    let mut got = 0u64;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n as u64,
        }
    }
    assert!(
        got < 64 << 20,
        "a stalled reader got the whole file ({got} bytes)"
    );
}

#[test]
fn a_pipelining_client_that_never_reads_blocks_only_itself() {
    let f = Fixture::sample();
    f.write(&format!("{ITEM}/doc/medium.bin"), &vec![b'x'; 1 << 20]);
    // The server would wait an hour for the client to read.
    let (serve, _log) = start_patient(&f, &[]);
    let mut s = connect(&serve, local(3));
    s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    let one = format!("GET /{ITEM}/doc/medium.bin HTTP/1.1\r\nHost: x\r\n\r\n");
    let many = one.repeat(2000);
    // The server stops reading once its answers back up; what is not sent is dropped.
    let writer = std::thread::spawn(move || {
        let _ = s.write_all(many.as_bytes());
        s
    });
    // A head start for the flood (the hostile client's doing, not a wait for an event):
    // the others are answered however far it got.
    std::thread::sleep(Duration::from_millis(500));
    for _ in 0..5 {
        answers(&serve, local(1));
    }
    drop(writer.join().unwrap());
    answers(&serve, local(3));
}

#[test]
fn idle_connections_are_capped_per_address_and_timed_out() {
    let f = Fixture::sample();
    // Idle connections the server would keep for an hour.
    let (serve, _log) = start_patient(&f, &["--max-per-client", "32"]);
    let mut idle: Vec<TcpStream> = (0..600).map(|_| connect(&serve, local(3))).collect();
    // The 33rd and later were told at once (read as it comes, the server closing after),
    // up to the last: every one has been taken.
    for i in [40, 599] {
        let mut refused = String::new();
        idle[i].read_to_string(&mut refused).unwrap();
        assert!(
            refused.starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
            "{refused}"
        );
    }
    // Another address is answered beside them; the server holds a bounded number of
    // descriptors.
    answers(&serve, local(1));
    let fds = open_fds(serve.pid());
    eprintln!("600 idle connections from one address: {fds} descriptors open");
    assert!(fds < 100, "{fds} descriptors open");
    drop(idle);
    // Past the idle timeout (1 s) the idle ones are closed, and their address is served
    // again.
    let (mut serve, _log) = start(&f, &["--max-per-client", "32"]);
    let idle: Vec<TcpStream> = (0..600).map(|_| connect(&serve, local(3))).collect();
    // Each is closed: past 32 open with a 503 at once, the others without a word once the
    // idle timeout has passed (they never sent a byte). More than 32 end silently: those
    // the listen queue could not hold are taken when their connection is tried again, by
    // then beside fewer than 32.
    let mut silent = 0;
    for mut s in idle {
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        match answer.is_empty() {
            true => silent += 1,
            false => assert!(answer.starts_with("HTTP/1.1 503 "), "{answer}"),
        }
    }
    assert!(silent >= 32, "{silent} closed silently");
    answers(&serve, local(3));
    assert!(serve.running());
}

#[test]
fn the_accept_loop_outlives_running_out_of_descriptors() {
    let f = Fixture::sample();
    let (mut serve, log) = start(
        &f,
        &["--max-connections", "1000", "--max-per-client", "1000"],
    );
    // 48 descriptors in all for the server process.
    let pid = rustix::process::Pid::from_raw(serve.pid() as i32).unwrap();
    let limit = rustix::process::Rlimit {
        current: Some(48),
        maximum: Some(48),
    };
    rustix::process::prlimit(Some(pid), rustix::process::Resource::Nofile, limit).unwrap();
    let held: Vec<TcpStream> = (0..100).map(|_| connect(&serve, local(3))).collect();
    let deadline = std::time::Instant::now() + common::HANG_GUARD;
    let ran_out = || {
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("cannot accept a connection: Too many open files")
    };
    while !ran_out() {
        assert!(
            std::time::Instant::now() < deadline,
            "{}",
            std::fs::read_to_string(&log).unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(serve.running());
    drop(held);
    // Once the idle ones are gone, requests are answered again (this one waits in the
    // listener's queue until the server takes it).
    answers(&serve, local(1));
}

#[test]
fn a_huge_request_head_is_refused_in_bounded_memory() {
    let f = Fixture::sample();
    let (serve, _log) = start(&f, &[]);
    let before = peak_rss_kib(serve.pid());
    let mut s = connect(&serve, local(3));
    s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut head = b"GET / HTTP/1.1\r\nX-Filler: ".to_vec();
    head.resize(1 << 20, b'a');
    // 64 MiB of one header line; the server answers 431 and closes long before.
    let mut sent = 0usize;
    while sent < 64 << 20 {
        match s.write_all(&head) {
            Ok(()) => sent += head.len(),
            Err(_) => break,
        }
        head.truncate(0);
        head.resize(1 << 20, b'a');
    }
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    if !answer.is_empty() {
        assert!(
            answer.starts_with(b"HTTP/1.1 431 "),
            "{}",
            String::from_utf8_lossy(&answer)
        );
    }
    let after = peak_rss_kib(serve.pid());
    eprintln!("{sent} bytes of head sent; peak RSS {before} KiB -> {after} KiB");
    assert!(
        after < before + 16 * 1024,
        "peak RSS {before} KiB -> {after} KiB"
    );
    answers(&serve, local(1));
}

/// A head sent one byte at a time, each well within the head timeout (2 s) of the one
/// before, is cut off once the whole head has taken longer: within 200 bytes, which take
/// 20 s at least (each waits 100 ms for an answer); a timeout that started again with
/// each byte would never cut it.
#[test]
fn a_slowloris_head_is_cut_off() {
    let f = Fixture::sample();
    let (serve, _log) = start(&f, &[]);
    let mut s = connect(&serve, local(3));
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let head = b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let mut closed = false;
    let mut sent = 0;
    let mut answer = Vec::new();
    for &b in head.iter().cycle().take(200) {
        if s.write_all(&[b]).is_err() {
            closed = true;
            break;
        }
        sent += 1;
        let mut buf = [0u8; 256];
        match s.read(&mut buf) {
            Ok(0) => {
                closed = true;
                break;
            }
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(_) => {}
        }
    }
    eprintln!("slowloris head cut after {sent} bytes");
    assert!(closed, "still open after {sent} bytes");
    assert!(
        answer.starts_with(b"HTTP/1.1 408 Request Timeout\r\n"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
}

/// Swaps `doc/swap.txt` between a regular file and `other` (made by `make` under a
/// temporary name), as fast as it can, until the returned flag is set.
fn swapper(
    doc: &Path,
    make: impl Fn(&Path) + Send + 'static,
) -> (
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    std::thread::JoinHandle<()>,
) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let (doc, flag) = (doc.to_path_buf(), stop.clone());
    let handle = std::thread::spawn(move || {
        let (file, other, name) = (doc.join(".f"), doc.join(".o"), doc.join("swap.txt"));
        while !flag.load(Ordering::Relaxed) {
            std::fs::write(&file, b"public\n").unwrap();
            std::fs::rename(&file, &name).unwrap();
            make(&other);
            std::fs::rename(&other, &name).unwrap();
        }
    });
    (stop, handle)
}

/// GETs doc/swap.txt `n` times over keep-alive-free connections; each answer's body.
fn hammer(serve: &Serve, n: usize) -> Vec<(u16, Vec<u8>)> {
    let url = format!("{}/{ITEM}/doc/swap.txt", serve.base_url());
    (0..n)
        .map(|_| {
            let r = http_get_from(local(1), &url);
            (r.status, r.body)
        })
        .collect()
}

#[test]
fn a_file_swapped_for_a_link_is_never_followed() {
    let f = Fixture::sample();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, b"SECRET OUTSIDE THE ARCHIVE\n").unwrap();
    let (serve, _log) = start(&f, &[]);
    let (stop, handle) = swapper(&f.path(&format!("{ITEM}/doc")), move |p| {
        symlink(&secret, p).unwrap()
    });
    let answers = hammer(&serve, 3000);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    handle.join().unwrap();
    let leaked = answers
        .iter()
        .filter(|(_, b)| b.windows(6).any(|w| w == b"SECRET"))
        .count();
    let served = answers.iter().filter(|(s, _)| *s == 200).count();
    eprintln!("3000 requests during link swaps: {served} served the regular file, {leaked} leaked");
    assert_eq!(leaked, 0, "{leaked} of 3000 answers held the file outside");
    assert!(served > 0, "the regular file was never served");
    assert!(answers
        .iter()
        .all(|(s, b)| (*s == 200 && b == b"public\n") || *s == 404));
}

#[test]
fn a_file_swapped_for_a_named_pipe_never_stalls_a_request() {
    let f = Fixture::sample();
    let (serve, _log) = start(&f, &[]);
    let (stop, handle) = swapper(&f.path(&format!("{ITEM}/doc")), |p| {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            p,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap()
    });
    // A request stalled on the pipe would get no answer: the client's timeout fails it.
    let answers = hammer(&serve, 1000);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    handle.join().unwrap();
    assert_eq!(answers.len(), 1000);
    eprintln!(
        "1000 requests during pipe swaps: {} served the regular file",
        answers.iter().filter(|(s, _)| *s == 200).count()
    );
    assert!(answers
        .iter()
        .all(|(s, b)| (*s == 200 && b == b"public\n") || *s == 404));
    answers_after(&serve);
}

fn answers_after(serve: &Serve) {
    answers(serve, local(1));
}

/// Sends `request` on a fresh connection and reads until the server closes it.
fn exchange(serve: &Serve, request: &[u8]) -> String {
    let mut s = connect(serve, local(1));
    s.write_all(request).unwrap();
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

/// The status lines of the answers in `text` (a body may run into the next one).
fn statuses(text: &str) -> Vec<String> {
    text.split("HTTP/1.1 ")
        .skip(1)
        .map(|rest| format!("HTTP/1.1 {}", rest.split("\r\n").next().unwrap()))
        .collect()
}

/// Request heads as RFC 9112 frames them: two Content-Length headers, or one beside
/// Transfer-Encoding, are refused (and the connection closed) rather than read two ways;
/// an HTTP/1.1 request needs one Host; lines may end with a bare LF; the absolute form
/// names the same resource.
#[test]
fn request_heads_are_framed_one_way() {
    let f = Fixture::sample();
    let (serve, _log) = start(&f, &[]);
    let service =
        "/sid.inpe.br/mtc-m18@80/2008/03.17.15.17?servicesubject=inclusionConfirmationRequest";
    let smuggled = format!(
        "GET {service} HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 44\r\n\r\nGET /{ITEM}/doc/reference.bib HTTP/1.1\r\nHost: a\r\n\r\n"
    );
    assert_eq!(
        statuses(&exchange(&serve, smuggled.as_bytes())),
        ["HTTP/1.1 400 Bad Request"]
    );
    let chunked = format!(
        "GET {service} HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    );
    assert_eq!(
        statuses(&exchange(&serve, chunked.as_bytes())),
        ["HTTP/1.1 400 Bad Request"]
    );
    let no_host = format!("GET {service} HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert_eq!(
        statuses(&exchange(&serve, no_host.as_bytes())),
        ["HTTP/1.1 400 Bad Request"]
    );
    // Bare LF, then CRLF, pipelined: both answered.
    let both = format!(
        "GET {service} HTTP/1.1\nHost: a\n\nGET {service} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    );
    let answer = exchange(&serve, both.as_bytes());
    assert_eq!(
        statuses(&answer),
        ["HTTP/1.1 200 OK", "HTTP/1.1 200 OK"],
        "{answer}"
    );
    assert_eq!(answer.matches("confirmation yes").count(), 2);
    let absolute = format!(
        "GET http://127.0.0.1/{ITEM}/doc/reference.bib HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    );
    let answer = exchange(&serve, absolute.as_bytes());
    let bib = std::fs::read_to_string(f.path(&format!("{ITEM}/doc/reference.bib"))).unwrap();
    assert!(
        answer.starts_with("HTTP/1.1 200 OK\r\n") && answer.ends_with(&bib),
        "{answer}"
    );
}

/// The first requests of a fresh Archive, 60 at once, five times over (the secret
/// removed between rounds): one urlkey secret is made each time, and every answer's key
/// can be counted (serve's threads shared one temporary name, and lost the race).
#[test]
fn the_urlkey_secret_is_made_once_under_concurrent_first_requests() {
    let f = Fixture::sample();
    let (serve, log) = start(&f, &["--max-per-client", "100"]);
    let url = format!(
        "{}/sid.inpe.br/mtc-m18@80/2008/03.17.15.17?servicesubject=urlRequest&parsedibiurl.ibi=LK47B6W/362SFKH",
        serve.base_url()
    );
    for _round in 0..5 {
        let _ = std::fs::remove_file(f.path("var/urlkey.secret"));
        let threads: Vec<_> = (0..60)
            .map(|_| {
                let url = url.clone();
                std::thread::spawn(move || http_get_from(local(1), &url).status)
            })
            .collect();
        for t in threads {
            assert_eq!(t.join().unwrap(), 200);
        }
    }
    let text = std::fs::read_to_string(log).unwrap();
    assert!(!text.contains("urlkey.secret"), "{text}");
    assert_eq!(f.names_in("var"), ["urlkey.secret"]);
}

/// A connection serves 100 requests, and the 100th answer says so (`Connection: close`):
/// a client that keeps connections for its next requests (the resolver does) must not
/// send a 101st on a connection the server is closing, where it would be lost.
#[test]
fn the_last_answer_a_connection_serves_says_it_closes() {
    let f = Fixture::sample();
    let (serve, _log) = start(&f, &[]);
    let one = "GET /sid.inpe.br/mtc-m18@80/2008/03.17.15.17?servicesubject=inclusionConfirmationRequest HTTP/1.1\r\nHost: a\r\n\r\n";
    let text = exchange(&serve, one.repeat(101).as_bytes());
    let connection: Vec<&str> = text
        .split("HTTP/1.1 ")
        .skip(1)
        .map(|answer| {
            answer
                .split("\r\n")
                .find_map(|l| l.strip_prefix("Connection: "))
                .unwrap_or("-")
        })
        .collect();
    let mut expected = vec!["keep-alive"; 99];
    expected.push("close");
    assert_eq!(connection, expected);
}

/// The answers in `bytes`, framed by their Content-Length: status, Connection, body.
fn answers_in(mut bytes: &[u8]) -> Vec<(String, String, Vec<u8>)> {
    let mut out = Vec::new();
    while let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
        let field = |name: &str| {
            head.split("\r\n")
                .find_map(|l| l.strip_prefix(name))
                .unwrap_or("")
                .to_string()
        };
        let len: usize = field("Content-Length: ").parse().unwrap_or(0);
        let body = bytes[end + 4..(end + 4 + len).min(bytes.len())].to_vec();
        let status = head.split("\r\n").next().unwrap().to_string();
        out.push((status, field("Connection: "), body));
        bytes = &bytes[(end + 4 + len).min(bytes.len())..];
    }
    out
}

/// A file is answered on the event loop, the service (and a file too large for one
/// write) on the connection's own thread from then on: one connection that asks for
/// them in turn, pipelined, gets every answer whole and in order, and its 100th answer
/// still says it closes.
#[test]
fn files_and_the_service_on_one_connection_keep_their_order_and_count() {
    let f = Fixture::sample();
    let large = vec![b'm'; 100_000];
    f.write(&format!("{ITEM}/doc/large.bin"), &large);
    let small = std::fs::read(f.path(&format!("{ITEM}/doc/reference.bib"))).unwrap();
    let (serve, _log) = start(&f, &[]);
    let get = |path: &str| format!("GET {path} HTTP/1.1\r\nHost: a\r\n\r\n");
    let service =
        get("/sid.inpe.br/mtc-m18@80/2008/03.17.15.17?servicesubject=inclusionConfirmationRequest");
    let mut request = String::new();
    let mut want: Vec<&[u8]> = Vec::new();
    for i in 0..101 {
        let (r, body): (String, &[u8]) = match i % 10 {
            4 => (service.clone(), b"confirmation yes"),
            7 => (get(&format!("/{ITEM}/doc/large.bin")), &large),
            _ => (get(&format!("/{ITEM}/doc/reference.bib")), &small),
        };
        request.push_str(&r);
        want.push(body);
    }
    let mut s = connect(&serve, local(1));
    s.write_all(request.as_bytes()).unwrap();
    let mut bytes = Vec::new();
    let _ = s.read_to_end(&mut bytes);
    let got = answers_in(&bytes);
    assert_eq!(got.len(), 100, "the 101st request is not answered");
    for (i, (status, connection, body)) in got.iter().enumerate() {
        assert_eq!(status, "HTTP/1.1 200 OK", "answer {i}");
        let last = i == 99;
        assert_eq!(
            connection,
            if last { "close" } else { "keep-alive" },
            "answer {i}"
        );
        assert!(body.starts_with(want[i]), "answer {i}");
    }
}

/// A registration key sent to the Archive — by a resolver's URL that is in fact the
/// Archive's, or by a client that separates pairs with `;` or escapes them — reaches no
/// line of serve's log: the piece of the request, or of an echo, that holds it is
/// written `…`.
#[test]
fn a_registration_key_sent_to_serve_reaches_no_log_line() {
    const SECRET: &str = "98765432109876543210";
    let f = Fixture::sample();
    let (serve, log) = start(&f, &[]);
    let service = "/sid.inpe.br/mtc-m18@80/2008/03.17.15.17";
    let unknown = "ibi-archive: unknown servicesubject";
    // The query, the line about it (if any), and its request's line but the length.
    let cases = [
        (
            format!("servicesubject=inclusionRequest&archiveaddress=a.example.org&registrationkey={SECRET}"),
            Some(format!("{unknown} \"inclusionRequest\"")),
            format!("\"GET {service}?servicesubject=inclusionRequest&archiveaddress=a.example.org&…\" 400"),
        ),
        (
            format!("servicesubject=inclusionRequest;registrationkey={SECRET}"),
            Some(format!("{unknown} \"inclusionRequest;…\"")),
            format!("\"GET {service}?servicesubject=inclusionRequest;…\" 400"),
        ),
        (
            format!("servicesubject=inclusionRequest%3Bregistrationkey%3D{SECRET}"),
            Some(format!("{unknown} \"inclusionRequest;…\"")),
            format!("\"GET {service}?…\" 400"),
        ),
        (
            format!("servicesubject=inclusionConfirmationRequest&registration%4Bey={SECRET}"),
            None,
            format!("\"GET {service}?servicesubject=inclusionConfirmationRequest&…\" 200"),
        ),
    ];
    let mut expected = Vec::new();
    // The log's lines once it holds `n` (each request's line waited for before the next
    // request, so that the lines come in order).
    let lines_once = |n: usize| {
        let deadline = std::time::Instant::now() + common::HANG_GUARD;
        loop {
            let text = std::fs::read_to_string(&log).unwrap();
            let lines: Vec<String> = text.lines().map(str::to_string).collect();
            if lines.len() >= n || std::time::Instant::now() > deadline {
                break lines;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    for (query, about, request) in cases {
        let r = http_get_from(local(1), &format!("{}{service}?{query}", serve.base_url()));
        assert!(!r.text().contains(SECRET), "{}", r.text());
        expected.extend(about);
        // The request's line ends with the length of the answer's body.
        expected.push(format!("127.0.0.1 {request} {}", r.body.len()));
        lines_once(expected.len());
    }
    assert_eq!(lines_once(expected.len()), expected);
}
