//! The tests' own harness (tests/common): the web servers it starts are independent and
//! leave no process behind, also when a test panics; its HTTP client reads a response to
//! its end by its framing; its tree copier keeps links and ISO-8859-1 names.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

use common::{os, Server, ServerKind};

const IBI: &str = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17";

/// An Archive root with an empty col/, and [`common::ECHO_CGI`] to run as the service, in
/// a temporary directory the servers' user can read.
struct Site {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    script: PathBuf,
}

fn site() -> Site {
    let tmp = common::archive_tempdir();
    let root = tmp.path().join("archive");
    fs::create_dir_all(root.join("col")).unwrap();
    common::prepare_archive(&root);
    let script = common::write_echo_cgi(&tmp.path().join("cgi"));
    Site {
        _tmp: tmp,
        root,
        script,
    }
}

/// The servers installed (under CI=true, both must be) and a site for them; `None`, said
/// on stderr, when neither is installed.
fn servers_and_site() -> Option<(Vec<ServerKind>, Site)> {
    let mut kinds = Vec::new();
    if common::apache2_available() {
        kinds.push(ServerKind::Apache2);
    }
    if common::lighttpd_available() {
        kinds.push(ServerKind::Lighttpd);
    }
    if kinds.is_empty() {
        eprintln!("skipping: neither apache2 nor lighttpd is installed");
        return None;
    }
    Some((kinds, site()))
}

fn start(kind: ServerKind, site: &Site) -> Server {
    match kind {
        ServerKind::Apache2 => common::start_apache2(&site.root, &site.script, IBI),
        ServerKind::Lighttpd => common::start_lighttpd(&site.root, &site.script, IBI),
    }
}

/// A server's pid file names the process the harness started, and once the server has
/// run the program and is dropped, no process of its group, nor any naming its
/// directory, is left.
#[test]
fn a_stopped_server_leaves_no_process_behind() {
    let Some((kinds, site)) = servers_and_site() else {
        return;
    };
    for kind in kinds {
        let server = start(kind, &site);
        let pid = server.pid();
        let dir = server.dir().display().to_string();
        assert_eq!(
            server.pid_from_pid_file(),
            Some(pid),
            "{}",
            server.error_log()
        );
        for query in ["fast", "slow"] {
            let r = common::http_get(&server.url(&format!("/{IBI}?{query}")));
            assert_eq!(r.status, 200, "{}", server.error_log());
        }
        drop(server);
        assert_eq!(common::living_processes_in_group(pid), Vec::<u32>::new());
        assert_eq!(common::processes_with_cmdline(&dir), Vec::<u32>::new());
    }
}

/// Several servers at once get distinct ports and directories, and all of
/// their processes are gone once they are dropped.
#[test]
fn parallel_servers_are_independent_and_fully_stopped() {
    let Some((kinds, site)) = servers_and_site() else {
        return;
    };
    let servers: Vec<Server> = std::thread::scope(|s| {
        let handles: Vec<_> = kinds
            .iter()
            .chain(kinds.iter())
            .map(|&kind| {
                let site = &site;
                s.spawn(move || start(kind, site))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut ports: Vec<u16> = servers.iter().map(|s| s.port).collect();
    ports.sort();
    ports.dedup();
    assert_eq!(ports.len(), servers.len(), "ports {ports:?}");
    let root = site.root.canonicalize().unwrap();
    for server in &servers {
        let r = common::http_get(&server.url("/"));
        assert_eq!(r.status, 200);
        assert_eq!(r.text(), "ibi-archive test server\n");
        let r = common::http_get(&server.url(&format!("/{IBI}?k={}", server.port)));
        assert_eq!(
            r.text(),
            format!(
                "method=GET path= query=k={} root={}\n",
                server.port,
                root.display()
            ),
            "{}",
            server.error_log()
        );
    }
    let groups: Vec<(u32, String)> = servers
        .iter()
        .map(|s| (s.pid(), s.dir().display().to_string()))
        .collect();
    for (pid, _) in &groups {
        assert!(
            !common::living_processes_in_group(*pid).is_empty(),
            "process group {pid} should be running"
        );
    }
    drop(servers);
    for (pid, dir) in groups {
        assert_eq!(common::living_processes_in_group(pid), Vec::<u32>::new());
        assert_eq!(common::processes_with_cmdline(&dir), Vec::<u32>::new());
        assert!(!Path::new(&dir).exists(), "{dir} should have been removed");
    }
}

/// A test that panics while a server runs still stops it (Drop on unwind).
#[test]
fn servers_are_stopped_when_a_test_panics() {
    let Some((kinds, site)) = servers_and_site() else {
        return;
    };
    for kind in kinds {
        let mut seen = None;
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let server = start(kind, &site);
            seen = Some((server.pid(), server.dir().display().to_string()));
            panic!("deliberate panic with {} running", kind.name());
        }));
        assert!(result.is_err());
        let (pid, dir) = seen.expect("the server was started");
        assert_eq!(common::living_processes_in_group(pid), Vec::<u32>::new());
        assert_eq!(common::processes_with_cmdline(&dir), Vec::<u32>::new());
        assert!(!common::process_alive(pid));
    }
}

/// A response on a keep-alive connection is read to its end without
/// waiting for the server to close: the next request goes out on the same
/// connection and is answered there.  When the program pauses, Apache sends
/// what it has and switches to chunked transfer coding; when the program
/// answers at once it may set a Content-Length instead.  lighttpd collects
/// small responses and sets a Content-Length.
#[test]
fn keep_alive_response_is_read_to_its_end() {
    let Some((kinds, site)) = servers_and_site() else {
        return;
    };
    let root = site.root.canonicalize().unwrap();
    for kind in kinds {
        let server = start(kind, &site);
        let mut connection = common::Connection::open(&server.authority());
        let request = |query: &str| {
            format!("GET /{IBI}?{query} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").into_bytes()
        };
        for (query, tail) in [("fast", ""), ("slow", "second part\n")] {
            let r = connection.exchange(&request(query), false);
            assert_eq!(r.status, 200);
            assert_eq!(
                r.text(),
                format!(
                    "method=GET path= query={query} root={}\n{tail}",
                    root.display()
                )
            );
            let te = r.header("transfer-encoding");
            let cl = r.header("content-length");
            match (kind, query) {
                // mod_cgid passes the output on as it comes.
                (ServerKind::Apache2, "slow") => {
                    assert_eq!(te, Some("chunked"), "apache2: {:?}", r.headers)
                }
                // lighttpd collects a small response and sets its length.
                (ServerKind::Lighttpd, "slow") => assert_eq!(
                    (te, cl),
                    (None, Some(r.body.len().to_string().as_str())),
                    "lighttpd: {:?}",
                    r.headers
                ),
                _ => assert!(
                    te == Some("chunked") || cl.is_some(),
                    "{}: no framing: {:?}",
                    kind.name(),
                    r.headers
                ),
            }
        }
        // The connection outlived both responses: neither was read to its close.
        let r = connection.exchange(&request("last"), false);
        assert_eq!(
            (r.status, r.text()),
            (
                200,
                format!("method=GET path= query=last root={}\n", root.display())
            ),
            "{}: the connection did not stay open",
            kind.name()
        );
    }
}

#[test]
fn chunked_bodies_are_decoded() {
    assert_eq!(
        common::decode_chunked(
            b"4\r\nWiki\r\n6;ext=1\r\npedia \r\nE\r\nin \r\n\r\nchunks.\r\n0\r\n\r\n"
        )
        .unwrap(),
        b"Wikipedia in \r\n\r\nchunks.".to_vec()
    );
    assert_eq!(
        common::decode_chunked(b"3\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n").unwrap(),
        b"abc".to_vec()
    );
    assert_eq!(
        common::decode_chunked(b"0\r\n\r\n").unwrap(),
        Vec::<u8>::new()
    );
    assert!(
        common::decode_chunked(b"3\r\nabc\r\n").is_err(),
        "no last chunk"
    );
    assert!(
        common::decode_chunked(b"3\r\nabcd\r\n0\r\n\r\n").is_err(),
        "size mismatch"
    );
    assert!(common::decode_chunked(b"zz\r\n").is_err(), "bad size");
}

fn write(path: &Path, content: &[u8]) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, content).unwrap();
}

#[test]
fn copy_tree_keeps_symlinks_and_latin1_names() {
    let tmp = common::archive_tempdir();
    let src = tmp.path().join("src");
    write(&src.join("a/b").join(os(b"Relat\xf3rio.txt")), b"x\n");
    symlink("/etc/passwd", src.join("a/link")).unwrap();
    let exe = src.join("run.sh");
    write(&exe, b"#!/bin/sh\n");
    fs::set_permissions(&exe, fs::Permissions::from_mode(0o700)).unwrap();
    let dst = tmp.path().join("dst");
    common::copy_tree(&src, &dst);
    assert_eq!(
        fs::read(dst.join("a/b").join(os(b"Relat\xf3rio.txt"))).unwrap(),
        b"x\n"
    );
    assert_eq!(
        fs::read_link(dst.join("a/link")).unwrap(),
        PathBuf::from("/etc/passwd")
    );
    common::make_world_readable(&dst);
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dst.join("run.sh")), 0o755);
    assert_eq!(mode(&dst.join("a/b")), 0o755);
    assert_eq!(
        mode(&dst.join("a/b").join(os(b"Relat\xf3rio.txt"))) & 0o444,
        0o444
    );
    // The link itself was not followed: /etc/passwd is untouched, and the
    // link is still a link.
    assert!(fs::symlink_metadata(dst.join("a/link"))
        .unwrap()
        .file_type()
        .is_symlink());
}

/// A connection the harness opens is not inherited by the processes a test starts: a web
/// server started by one test while another holds a hundred connections would otherwise
/// hold them too, open after that test has closed its end, and count them against its
/// own descriptors.
#[test]
fn connections_are_not_inherited_by_started_processes() {
    use std::os::fd::AsRawFd;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let stream = common::connect_from([127, 0, 0, 1].into(), addr).unwrap();
    let fd = stream.as_raw_fd();
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("test -e /proc/self/fd/{fd}"))
        .status()
        .unwrap();
    assert!(!status.success(), "descriptor {fd} was inherited");
}
