//! Downloads of an item's files as a web server serves them, with curl as the client,
//! the same through Apache, lighttpd and `ibi-archive serve`: Content-Length, a strong
//! ETag, Last-Modified and Accept-Ranges on the 200; 304 for If-None-Match and
//! If-Modified-Since; one range answered 206 with its Content-Range and its bytes, and
//! 416 past the end; If-Range; HEAD; a 50 MB file cut off halfway and resumed with
//! `curl -C -` equals the file byte for byte. Neither server ranges the program's 206
//! again; lighttpd ranges a 200 itself when the program ignored the Range (several
//! ranges, a malformed one). `serve` sends the 50 MB without growing. If-Match and
//! If-Unmodified-Since answer 412 (also for a date before 1970); Last-Modified is never later than Date; a file that
//! shrinks under a pipelined download ends its connection, never shifts the next answer
//! into the body; mod_deflate leaves files as they are. `serve` frames files on both sides
//! of the size it sends with their head in one write (16 KiB), pipelined on one
//! connection: whole, a range in the middle, the last bytes, HEAD.
//!
//! Under `CI=true` a missing apache2, lighttpd or curl fails the test.

use std::fs;
use std::io::{BufWriter, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::Serve;

const SERVICE: &str = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17";
const ITEM: &str = "iconet.com.br/banon/2009/09.09.22.01";
/// The size of the large file: 50 MiB and 7 bytes, so that no part is a round number.
const LEN: u64 = 50 * 1024 * 1024 + 7;
/// Where the first download is cut off.
const CUT: u64 = 20_000_003;

/// sample-archive/ with a 50 MB file of pseudo-random bytes in one item's doc/; the
/// path of that file.
fn archive() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = common::archive_tempdir();
    let root = tmp.path().join("archive");
    common::copy_sample(&root);
    let big = root.join("col").join(ITEM).join("doc/data.bin");
    let mut out = BufWriter::new(fs::File::create(&big).unwrap());
    // xorshift64: bytes that no offset error can leave equal.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut written = 0;
    while written < LEN {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let n = (LEN - written).min(8);
        out.write_all(&x.to_le_bytes()[..n as usize]).unwrap();
        written += n;
    }
    out.flush().unwrap();
    drop(out);
    common::prepare_archive(&root);
    (tmp, root, big)
}

/// The ETag and Last-Modified the file must be answered with, worked out from its
/// metadata: inode, size, modification and change times in nanoseconds, in hex.
fn validators(path: &Path) -> (String, String) {
    let m = fs::metadata(path).unwrap();
    let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
    let etag = format!(
        "\"{:x}-{:x}-{:x}-{:x}\"",
        m.ino(),
        m.len(),
        ns(m.mtime(), m.mtime_nsec()),
        ns(m.ctime(), m.ctime_nsec())
    );
    (etag, ::ibi::time::http_date(m.mtime()).unwrap())
}

/// What curl got: the status and headers of the (last) answer, where its body went, and
/// how many bytes of body came (`%{size_download}`).
struct Got {
    status: u16,
    headers: Vec<(String, String)>,
    body: PathBuf,
    downloaded: u64,
}

impl Got {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn bytes(&self) -> Vec<u8> {
        fs::read(&self.body).unwrap_or_default()
    }
}

/// `curl -sS -D HEAD -o BODY ARGS URL` in `dir` (the body goes to `body`, a name there);
/// it must succeed.
fn curl(dir: &Path, body: &str, args: &[&str], url: &str) -> Got {
    let head = dir.join("head.txt");
    let body = dir.join(body);
    let out = Command::new("curl")
        .args(["-sS", "-w", "%{size_download}", "-D"])
        .arg(&head)
        .arg("-o")
        .arg(&body)
        .args(args)
        .arg(url)
        .output()
        .expect("curl runs");
    assert!(
        out.status.success(),
        "curl {args:?} {url}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = fs::read_to_string(&head).unwrap();
    // The last answer's head (after any 100 Continue).
    let last = text
        .trim_end()
        .rsplit("\r\n\r\n")
        .next()
        .unwrap_or_default()
        .to_string();
    let mut lines = last.lines();
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    let downloaded = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("curl wrote {:?}", out.stdout));
    Got {
        status,
        headers,
        body,
        downloaded,
    }
}

/// Whether two files hold the same bytes, read in bounded pieces.
fn same_bytes(a: &Path, b: &Path) -> bool {
    let (mut fa, mut fb) = (fs::File::open(a).unwrap(), fs::File::open(b).unwrap());
    if fa.metadata().unwrap().len() != fb.metadata().unwrap().len() {
        return false;
    }
    let (mut ba, mut bb) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let n = fa.read(&mut ba).unwrap();
        if n == 0 {
            return true;
        }
        fb.read_exact(&mut bb[..n]).unwrap();
        if ba[..n] != bb[..n] {
            return false;
        }
    }
}

/// The bytes `start..start+len` of the file at `path`.
fn slice(path: &Path, start: u64, len: u64) -> Vec<u8> {
    use std::io::{Seek, SeekFrom};
    let mut f = fs::File::open(path).unwrap();
    f.seek(SeekFrom::Start(start)).unwrap();
    let mut buf = vec![0u8; len as usize];
    f.read_exact(&mut buf).unwrap();
    buf
}

/// Whether `program` runs; under `CI=true` it must.
fn installed(program: &str) -> bool {
    let found = Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    common::required_under_ci(found, program)
}

/// Every check, against the server at `base`; `log` says what the server logged.
/// `lighttpd`: the server ranges a 200 itself when the program ignored the Range.
fn suite(base: &str, big: &Path, work: &Path, lighttpd: bool, log: &dyn Fn() -> String) {
    let url = format!("{base}/col/{ITEM}/doc/data.bin");
    let (etag, last_modified) = validators(big);
    let len = LEN.to_string();

    // The whole file: its size, validators, and that ranges are answered.
    let r = curl(work, "whole", &[], &url);
    assert_eq!(r.status, 200, "{}", log());
    assert_eq!(r.header("Content-Length"), Some(len.as_str()));
    assert_eq!(r.header("Transfer-Encoding"), None);
    assert_eq!(r.header("ETag"), Some(etag.as_str()));
    assert_eq!(r.header("Last-Modified"), Some(last_modified.as_str()));
    assert_eq!(r.header("Accept-Ranges"), Some("bytes"));
    assert_eq!(r.header("Content-Type"), Some("application/octet-stream"));
    assert!(
        same_bytes(&r.body, big),
        "the download differs from the file"
    );
    fs::remove_file(&r.body).unwrap();

    // Cut off after CUT bytes (the client goes away), then resumed where it stopped.
    let part = work.join("part");
    let cut = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "curl -s \"$0\" | head -c {CUT} > \"$1\"; exit \"${{PIPESTATUS[1]}}\""
        ))
        .arg(&url)
        .arg(&part)
        .status()
        .unwrap();
    assert!(cut.success());
    assert_eq!(fs::metadata(&part).unwrap().len(), CUT);
    let r = curl(work, "part", &["-C", "-"], &url);
    assert_eq!(r.status, 206, "{}", log());
    assert_eq!(
        r.header("Content-Range"),
        Some(format!("bytes {CUT}-{}/{LEN}", LEN - 1).as_str())
    );
    assert_eq!(
        r.header("Content-Length"),
        Some((LEN - CUT).to_string().as_str())
    );
    assert!(same_bytes(&part, big), "the resumed download differs");
    fs::remove_file(&part).unwrap();

    // HEAD: the headers of GET, no body.
    let r = curl(work, "head", &["--head"], &url);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("Content-Length"), Some(len.as_str()));
    assert_eq!(r.header("ETag"), Some(etag.as_str()));
    assert_eq!(r.header("Last-Modified"), Some(last_modified.as_str()));
    assert_eq!(r.header("Accept-Ranges"), Some("bytes"));
    assert_eq!(r.downloaded, 0);

    // Conditional GET and HEAD: the copy the client holds is current.
    let inm = format!("If-None-Match: {etag}");
    let weak = format!("If-None-Match: W/{etag}");
    let ims = format!("If-Modified-Since: {last_modified}");
    for args in [
        vec!["-H", &inm],
        vec!["-H", &weak],
        vec!["-H", "If-None-Match: *"],
        vec!["-H", &ims],
        vec!["--head", "-H", &inm],
        // The conditions come first: no part of a current copy.
        vec!["-H", &inm, "-r", "0-9"],
    ] {
        let r = curl(work, "nm", &args, &url);
        assert_eq!(r.status, 304, "{args:?}: {}", log());
        assert_eq!(r.downloaded, 0, "{args:?}");
        assert_eq!(r.header("Content-Length"), None, "{args:?}");
        assert_eq!(r.header("ETag"), Some(etag.as_str()), "{args:?}");
        assert_eq!(
            r.header("Last-Modified"),
            Some(last_modified.as_str()),
            "{args:?}"
        );
    }
    // Not current: the whole file (If-None-Match wins over a current date).
    let earlier = format!(
        "If-Modified-Since: {}",
        ::ibi::time::http_date(fs::metadata(big).unwrap().mtime() - 1).unwrap()
    );
    for args in [
        vec!["-H", "If-None-Match: \"other\""],
        vec!["-H", "If-None-Match: \"other\"", "-H", &ims],
        vec!["-H", &earlier],
    ] {
        let r = curl(work, "changed", &[&["--head"][..], &args].concat(), &url);
        assert_eq!(r.status, 200, "{args:?}: {}", log());
        assert_eq!(r.header("Content-Length"), Some(len.as_str()));
    }

    // One range: its bytes, and neither server ranges them again.
    for (spec, start, end) in [
        ("100-199", 100, 199),
        ("0-0", 0, 0),
        (&format!("{}-", LEN - 10) as &str, LEN - 10, LEN - 1),
        ("-5", LEN - 5, LEN - 1),
        (&format!("{}-{}", LEN - 3, LEN + 100), LEN - 3, LEN - 1),
    ] {
        let r = curl(work, "range", &["-r", spec], &url);
        assert_eq!(r.status, 206, "{spec}: {}", log());
        assert_eq!(
            r.header("Content-Range"),
            Some(format!("bytes {start}-{end}/{LEN}").as_str()),
            "{spec}"
        );
        let n = end - start + 1;
        assert_eq!(
            r.header("Content-Length"),
            Some(n.to_string().as_str()),
            "{spec}"
        );
        assert_eq!(r.header("ETag"), Some(etag.as_str()), "{spec}");
        assert_eq!(r.bytes(), slice(big, start, n), "{spec}");
    }

    // If-Range: the range only while the file is the client's version.
    let r = curl(
        work,
        "ifrange",
        &["-r", "10-19", "-H", &format!("If-Range: {etag}")],
        &url,
    );
    assert_eq!(r.status, 206);
    assert_eq!(r.bytes(), slice(big, 10, 10));
    let r = curl(
        work,
        "ifrange",
        &["-r", "10-19", "-H", &format!("If-Range: {last_modified}")],
        &url,
    );
    assert_eq!(r.status, 206);
    assert_eq!(r.bytes(), slice(big, 10, 10));
    let r = curl(
        work,
        "ifrange",
        &["-r", "10-19", "-H", "If-Range: \"older\""],
        &url,
    );
    assert_eq!(r.status, 200, "{}", log());
    assert_eq!(r.downloaded, LEN);
    fs::remove_file(&r.body).unwrap();

    // If-Match (and If-Unmodified-Since): a part of the client's version, or 412.
    let r = curl(
        work,
        "ifmatch",
        &["-r", "10-19", "-H", &format!("If-Match: {etag}")],
        &url,
    );
    assert_eq!(r.status, 206, "{}", log());
    assert_eq!(r.bytes(), slice(big, 10, 10));
    let earlier_ius = format!(
        "If-Unmodified-Since: {}",
        ::ibi::time::http_date(fs::metadata(big).unwrap().mtime() - 1).unwrap()
    );
    for args in [
        vec!["-r", "10-19", "-H", "If-Match: \"older\""],
        vec!["-H", "If-Match: \"older\""],
        vec!["--head", "-H", "If-Match: \"older\""],
        vec!["-r", "10-19", "-H", &earlier_ius],
        // A date before 1970 is a date too (it was ignored: 206).
        vec![
            "-r",
            "10-19",
            "-H",
            "If-Unmodified-Since: Wed, 31 Dec 1969 23:59:59 GMT",
        ],
    ] {
        let r = curl(work, "ifmatch", &args, &url);
        assert_eq!(r.status, 412, "{args:?}: {}", log());
        assert!(r.downloaded < 100, "{args:?}");
    }

    // Past the end: 416, with the size.
    let r = curl(work, "past", &["-H", &format!("Range: bytes={LEN}-")], &url);
    assert_eq!(r.status, 416, "{}", log());
    assert_eq!(
        r.header("Content-Range"),
        Some(format!("bytes */{LEN}").as_str())
    );

    // Several ranges, or a malformed one: the program answers the whole file, which
    // lighttpd then ranges itself (a multipart answer; its own 416).
    let small = format!("{base}/col/{ITEM}/doc/reference.bib");
    let size = fs::metadata(big.with_file_name("reference.bib"))
        .unwrap()
        .len();
    let r = curl(work, "several", &["-r", "0-0,-1"], &small);
    if lighttpd {
        assert_eq!(r.status, 206, "{}", log());
        assert!(r
            .header("Content-Type")
            .is_some_and(|t| t.starts_with("multipart/byteranges")));
    } else {
        assert_eq!(r.status, 200, "{}", log());
        assert_eq!(r.downloaded, size);
    }
    // Overlapping ranges do not multiply what one request costs: no more than the file
    // (and the headers of a few parts) is sent (RFC 9110 §14.2, §15.3.7.2).
    let r = curl(work, "overlapping", &["-r", "0-,0-,0-,0-"], &url);
    assert!(
        r.downloaded <= LEN + 4096,
        "{} bytes: {}",
        r.downloaded,
        log()
    );
    fs::remove_file(&r.body).unwrap();
    let r = curl(work, "malformed", &["-H", "Range: bytes=5-1"], &small);
    assert_eq!(r.status, if lighttpd { 416 } else { 200 }, "{}", log());
    // An If-Range that does not hold: the whole file, which no server ranges again (the
    // client's part is of another version).
    for if_range in [
        "If-Range: \"older\"",
        "If-Range: Sun, 06 Nov 1994 08:49:37 GMT",
    ] {
        let r = curl(work, "ifrange", &["-r", "10-19", "-H", if_range], &small);
        assert_eq!(r.status, 200, "{if_range}: {}", log());
        assert_eq!(r.downloaded, size, "{if_range}");
    }

    // A modification time in the future (a clock set wrong, a copy that kept it) is not
    // sent as it is: Last-Modified is never later than Date (RFC 9110 §8.8.2.1).
    let future = std::time::SystemTime::now() + std::time::Duration::from_secs(86_400);
    fs::File::options()
        .write(true)
        .open(big.with_file_name("reference.bib"))
        .unwrap()
        .set_modified(future)
        .unwrap();
    let r = curl(work, "future", &["--head"], &small);
    assert_eq!(r.status, 200, "{}", log());
    let dates = r
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("Date"));
    assert_eq!(dates.count(), 1, "{:?}", r.headers);
    let date = |name: &str| {
        let text = r.header(name).unwrap_or_else(|| panic!("no {name}"));
        ::ibi::time::parse_http_date(text).unwrap_or_else(|| panic!("{name}: {text}"))
    };
    assert!(
        date("Last-Modified") <= date("Date"),
        "Last-Modified {:?} is later than Date {:?}",
        r.header("Last-Modified"),
        r.header("Date")
    );
}

/// The resident memory high-water mark of process `pid`, in kB.
fn peak_rss_kb(pid: u32) -> u64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status")
}

#[test]
fn serve_serves_downloads() {
    if !installed("curl") {
        eprintln!("skipping: curl is not installed");
        return;
    }
    let (tmp, root, big) = archive();
    let log_path = tmp.path().join("serve.log");
    let serve = Serve::start(&root, fs::File::create(&log_path).unwrap());
    let before = peak_rss_kb(serve.pid());
    suite(&serve.base_url(), &big, tmp.path(), false, &|| {
        fs::read_to_string(&log_path).unwrap_or_default()
    });
    // Three whole downloads and a resumed one of 50 MB: sent from the descriptor, not
    // read into memory.
    let grown = peak_rss_kb(serve.pid()).saturating_sub(before);
    assert!(grown < 8 * 1024, "serve grew by {grown} kB");
}

#[test]
fn apache2_serves_downloads() {
    if !common::apache2_available() || !installed("curl") {
        eprintln!("skipping: apache2 with mod_cgid and curl are needed");
        return;
    }
    let (tmp, root, big) = archive();
    let server = common::start_apache2(&root, &common::ibi_archive_bin(), SERVICE);
    suite(&server.base_url, &big, tmp.path(), false, &|| {
        server.error_log()
    });
}

#[test]
fn lighttpd_serves_downloads() {
    if !common::lighttpd_available() || !installed("curl") {
        eprintln!("skipping: lighttpd with mod_cgi and curl are needed");
        return;
    }
    let (tmp, root, big) = archive();
    let server = common::start_lighttpd(&root, &common::ibi_archive_bin(), SERVICE);
    suite(&server.base_url, &big, tmp.path(), true, &|| {
        server.error_log()
    });
}

/// A file cut short while it is sent (truncated under a client that has read only the
/// head and the first bytes) must not desynchronise the connection: the answer promised
/// `LEN` bytes, so either all of them come, each where it belongs, or the connection
/// ends after what was sent; never the answer to the next request (pipelined behind
/// it) read as the rest of the body. `address` is the server's `host:port`. Apache keeps
/// the program's Content-Length (`ap_trust_cgilike_cl`) and, unless the program's answer
/// says `Connection: close`, answers the next request right after the short body.
fn shrink_while_sent(address: &str, big: &Path) {
    use std::net::TcpStream;
    use std::time::Duration;
    let mut conn = TcpStream::connect(address).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let host = format!("Host: {address}\r\n");
    let requests = format!(
        "GET /col/{ITEM}/doc/data.bin HTTP/1.1\r\n{host}\r\n\
         GET /col/{ITEM}/doc/reference.bib HTTP/1.1\r\n{host}\r\n"
    );
    conn.write_all(requests.as_bytes()).unwrap();
    // The head of the first answer, and the first bytes of its body.
    let mut got = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let head_end = loop {
        if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = conn.read(&mut buf).unwrap();
        assert!(n > 0, "no head: {:?}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&got[..head_end]).to_string();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains(&format!("content-length: {LEN}\r\n")),
        "{head}"
    );
    // The file shrinks to 1 MB while the server has sent no more than the buffers
    // between it and this client hold (far less than 50 MB).
    fs::OpenOptions::new()
        .write(true)
        .open(big)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    // Everything else, until the server closes the connection (or the read times out,
    // which fails).
    let mut rest = got.split_off(head_end);
    loop {
        match conn.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => rest.extend_from_slice(&buf[..n]),
            Err(e) => panic!("the connection stays open after {} bytes: {e}", rest.len()),
        }
    }
    let body_len = rest.len().min(LEN as usize);
    let next = &rest[body_len..];
    // Pseudo-random bytes hold "HTTP/1." by chance once in 2^56 places.
    let stray = rest[..body_len].windows(7).position(|w| w == b"HTTP/1.");
    assert_eq!(
        stray,
        None,
        "the next answer came inside the body ({} bytes of body)",
        rest.len()
    );
    assert!(
        next.is_empty() || next.starts_with(b"HTTP/1.1 200"),
        "after the body: {:?}",
        String::from_utf8_lossy(&next[..next.len().min(200)])
    );
}

#[test]
fn serve_closes_the_connection_of_a_file_that_shrinks() {
    let (tmp, root, big) = archive();
    let log_path = tmp.path().join("log");
    let serve = Serve::start(&root, fs::File::create(&log_path).unwrap());
    shrink_while_sent(&serve.address, &big);
    // Logged before the connection ends: the administrator learns why a download broke.
    let log = fs::read_to_string(&log_path).unwrap();
    let line = format!("ibi-archive: /col/{ITEM}/doc/data.bin: the file shrank while it was sent");
    assert!(log.lines().any(|l| l == line), "{log}");
}

#[test]
fn apache2_closes_the_connection_of_a_file_that_shrinks() {
    if !common::apache2_available() {
        eprintln!("skipping: apache2 with mod_cgid is needed");
        return;
    }
    let (_tmp, root, big) = archive();
    let server = common::start_apache2(&root, &common::ibi_archive_bin(), SERVICE);
    let address = server.base_url.trim_start_matches("http://").to_string();
    shrink_while_sent(&address, &big);
}

/// lighttpd (with mod_cgi's defaults) has taken all of the program's output by the time
/// the file shrinks: the client gets the whole file, then the end of the connection.
#[test]
fn lighttpd_closes_the_connection_of_a_file_that_shrinks() {
    if !common::lighttpd_available() {
        eprintln!("skipping: lighttpd with mod_cgi is needed");
        return;
    }
    let (_tmp, root, big) = archive();
    let server = common::start_lighttpd(&root, &common::ibi_archive_bin(), SERVICE);
    let address = server.base_url.trim_start_matches("http://").to_string();
    shrink_while_sent(&address, &big);
}

/// Debian enables mod_deflate for text types by default. It leaves a part alone (a
/// `Content-Range`), but would compress a whole text file on the way: no Content-Length
/// once it is large, and an ETag with `-gzip` added, which the program never finds its
/// own, so never a 304. `/col` turns it off (`no-gzip`): files go as they are.
#[test]
fn apache2_with_mod_deflate_sends_files_as_they_are() {
    if !common::apache2_available() || !installed("curl") {
        eprintln!("skipping: apache2 with mod_cgid and curl are needed");
        return;
    }
    let (tmp, root, big) = archive();
    let text = big.with_file_name("notes.txt");
    let body: String = (0..2000)
        .map(|i| format!("line {i} of the notes\n"))
        .collect();
    fs::write(&text, &body).unwrap();
    let server = common::start_apache2_with(
        &root,
        &common::ibi_archive_bin(),
        SERVICE,
        &["mod_filter.so", "mod_deflate.so"],
        0,
        &|_| "AddOutputFilterByType DEFLATE text/html text/plain\n".to_string(),
    );
    let url = format!("{}/col/{ITEM}/doc/notes.txt", server.base_url);
    let work = tmp.path();
    let r = curl(
        work,
        "gz",
        &["-H", "Accept-Encoding: gzip", "-r", "100-199"],
        &url,
    );
    assert_eq!(r.status, 206, "{}", server.error_log());
    assert_eq!(
        r.header("Content-Range"),
        Some(format!("bytes 100-199/{}", body.len()).as_str())
    );
    assert_eq!(r.header("Content-Encoding"), None);
    assert_eq!(r.bytes(), &body.as_bytes()[100..200]);
    // The file as it is: its size, and the ETag the program answers If-None-Match by.
    let (etag, _) = validators(&text);
    let r = curl(work, "gz", &["--compressed"], &url);
    assert_eq!(r.status, 200, "{}", server.error_log());
    assert_eq!(r.header("Content-Encoding"), None);
    assert_eq!(
        r.header("Content-Length"),
        Some(body.len().to_string().as_str())
    );
    assert_eq!(r.header("ETag"), Some(etag.as_str()));
    assert_eq!(r.bytes(), body.as_bytes());
    let r = curl(
        work,
        "gz",
        &["--compressed", "-H", &format!("If-None-Match: {etag}")],
        &url,
    );
    assert_eq!(r.status, 304, "{}", server.error_log());
}

/// One answer read off a connection: its status line, its header fields, and the body
/// its Content-Length frames (none for a HEAD).
fn read_answer(
    conn: &mut std::io::BufReader<std::net::TcpStream>,
    head_only: bool,
) -> (String, Vec<(String, String)>, Vec<u8>) {
    use std::io::BufRead;
    let mut status = String::new();
    conn.read_line(&mut status).unwrap();
    let mut fields = Vec::new();
    loop {
        let mut line = String::new();
        conn.read_line(&mut line).unwrap();
        assert!(!line.is_empty(), "the connection ended inside a head");
        if line == "\r\n" {
            break;
        }
        let (name, value) = line.split_once(':').unwrap();
        fields.push((name.to_ascii_lowercase(), value.trim().to_string()));
    }
    let len: usize = fields
        .iter()
        .find(|(n, _)| n == "content-length")
        .map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0u8; if head_only { 0 } else { len }];
    conn.read_exact(&mut body).unwrap();
    (status.trim_end().to_string(), fields, body)
}

/// `serve` sends a file of at most 16 KiB in one write with its head, read from the
/// descriptor it checked, and a larger one by sendfile(2): files on both sides of that
/// size (0, 1 and 614 bytes, 16 KiB less one, 16 KiB, 16 KiB and one, 300,001 bytes), each
/// asked whole, for a range in its middle, for its last 10 bytes, and by HEAD, all of it
/// pipelined on one connection: every answer has the status, Content-Length,
/// Content-Range and bytes worked out from the file, and ends where the next begins.
#[test]
fn serve_frames_small_and_large_files_on_one_connection() {
    use std::io::BufReader;
    use std::net::TcpStream;
    use std::time::Duration;
    let tmp = common::archive_tempdir();
    let root = tmp.path().join("archive");
    common::copy_sample(&root);
    let doc = root.join("col").join(ITEM).join("doc");
    let sizes = [
        0usize,
        1,
        614,
        16 * 1024 - 1,
        16 * 1024,
        16 * 1024 + 1,
        300_001,
    ];
    let files: Vec<(String, Vec<u8>)> = sizes
        .iter()
        .map(|&len| {
            let bytes = common::noise(len, len as u64 + 7);
            let name = format!("size-{len}.bin");
            fs::write(doc.join(&name), &bytes).unwrap();
            (name, bytes)
        })
        .collect();
    common::prepare_archive(&root);
    let log_path = tmp.path().join("serve.log");
    let serve = Serve::start(&root, fs::File::create(&log_path).unwrap());
    // (method, file, Range, expected status, expected part as (start, len)).
    let mut asked = Vec::new();
    for (name, bytes) in &files {
        let len = bytes.len();
        asked.push(("GET", name, None, 200, (0, len)));
        if len >= 3 {
            let (first, last) = (len / 3, 2 * len / 3);
            let range = format!("bytes={first}-{last}");
            asked.push(("GET", name, Some(range), 206, (first, last - first + 1)));
        }
        if len >= 10 {
            asked.push(("GET", name, Some("bytes=-10".into()), 206, (len - 10, 10)));
        }
        asked.push(("HEAD", name, None, 200, (0, len)));
    }
    let mut requests = String::new();
    for (method, name, range, _, _) in &asked {
        requests.push_str(&format!(
            "{method} /col/{ITEM}/doc/{name} HTTP/1.1\r\nHost: x\r\n"
        ));
        if let Some(r) = range {
            requests.push_str(&format!("Range: {r}\r\n"));
        }
        requests.push_str("\r\n");
    }
    let mut conn = TcpStream::connect(&serve.address).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    conn.write_all(requests.as_bytes()).unwrap();
    let mut conn = BufReader::new(conn);
    for (method, name, range, status, (start, len)) in &asked {
        let what = format!("{method} {name} {range:?}");
        let (line, fields, body) = read_answer(&mut conn, *method == "HEAD");
        let field = |n: &str| fields.iter().find(|(f, _)| f == n).map(|(_, v)| v.as_str());
        assert!(
            line.starts_with(&format!("HTTP/1.1 {status} ")),
            "{what}: {line}"
        );
        assert_eq!(
            field("content-length"),
            Some(len.to_string().as_str()),
            "{what}"
        );
        let whole = &files.iter().find(|(n, _)| n == *name).unwrap().1;
        if *status == 206 {
            let range = format!("bytes {start}-{}/{}", start + len - 1, whole.len());
            assert_eq!(field("content-range"), Some(range.as_str()), "{what}");
        }
        if *method == "GET" {
            assert!(body == whole[*start..*start + *len], "{what}: other bytes");
        }
    }
    // Nothing more than the answers asked for came.
    let mut rest = Vec::new();
    conn.get_mut().shutdown(std::net::Shutdown::Write).unwrap();
    conn.read_to_end(&mut rest).unwrap();
    assert!(
        rest.is_empty(),
        "after the answers: {:?}",
        String::from_utf8_lossy(&rest[..rest.len().min(200)])
    );
}

/// `serve` keeps archive.toml between requests, yet answers by the file as it is: an
/// edit in place that keeps its size (another archiveaddress, hence another baseurl in a
/// file's `Link`), a new file renamed over it, and its removal each show in the next
/// answer.
#[test]
fn serve_answers_by_archive_toml_as_it_is_now() {
    let tmp = common::archive_tempdir();
    let root = tmp.path().join("archive");
    common::copy_sample(&root);
    common::prepare_archive(&root);
    let serve = Serve::start(&root, fs::File::create(tmp.path().join("log")).unwrap());
    let url = format!("{}/col/{ITEM}/doc/reference.bib", serve.base_url());
    let collection = || {
        let r = common::http_get(&url);
        assert_eq!(r.status, 200, "{}", r.text());
        let link = r.header("Link").unwrap_or_default().to_string();
        link.split(", ")
            .find(|l| l.ends_with("rel=\"collection\"; type=\"text/html\""))
            .and_then(|l| l.strip_prefix("<http://"))
            .and_then(|l| l.split('/').next())
            .unwrap_or_else(|| panic!("Link: {link}"))
            .to_string()
    };
    let toml = root.join("archive.toml");
    let text = fs::read_to_string(&toml).unwrap();
    assert_eq!(collection(), "localhost:8080");
    assert_eq!(collection(), "localhost:8080");
    // Rewritten in place, the same size: the same inode.
    let edited = text.replace("\"localhost:8080\"", "\"localhost:8081\"");
    assert_eq!(edited.len(), text.len());
    let inode = fs::metadata(&toml).unwrap().ino();
    fs::OpenOptions::new()
        .write(true)
        .open(&toml)
        .unwrap()
        .write_all(edited.as_bytes())
        .unwrap();
    assert_eq!(fs::metadata(&toml).unwrap().ino(), inode);
    assert_eq!(collection(), "localhost:8081");
    // Another file renamed over it.
    let new = root.join("archive.toml.new");
    fs::write(&new, text.replace("\"localhost:8080\"", "\"127.0.0.1:9\"")).unwrap();
    fs::rename(&new, &toml).unwrap();
    assert_eq!(collection(), "127.0.0.1:9");
    // Gone: what a missing archive.toml answers.
    fs::remove_file(&toml).unwrap();
    let r = common::http_get(&url);
    assert_eq!(r.status, 500, "{}", r.text());
}
