//! Hostile Archives: small `std::net::TcpListener` servers on 127.0.0.1, each answering
//! what its case needs, that the resolver's tests include in it.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The request target of [`Peer::settled_connections`]'s own connection.
const SETTLING: &str = "/.settling";

/// A listener on 127.0.0.1 that answers each connection with `answer(target, stream)`,
/// counting connections and keeping every request target.
pub struct Peer {
    pub addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    targets: Arc<Mutex<Vec<String>>>,
}

impl Peer {
    pub fn start(answer: impl Fn(&str, &mut TcpStream) + Send + Sync + 'static) -> Peer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let connections = Arc::new(AtomicUsize::new(0));
        let targets = Arc::new(Mutex::new(Vec::new()));
        let answer = Arc::new(answer);
        let (c, t) = (connections.clone(), targets.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                c.fetch_add(1, Ordering::SeqCst);
                let (c, t, answer) = (c.clone(), t.clone(), answer.clone());
                std::thread::spawn(move || {
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                    let Some(target) = read_head(&mut stream) else {
                        return;
                    };
                    if target == SETTLING {
                        c.fetch_sub(1, Ordering::SeqCst);
                        answer_200(&mut stream, b"");
                        return;
                    }
                    t.lock().unwrap().push(target.clone());
                    answer(&target, &mut stream);
                });
            }
        });
        Peer {
            addr,
            connections,
            targets,
        }
    }

    /// A listener that only counts the connections it gets.
    pub fn counting() -> Peer {
        Peer::start(|_, _| {})
    }

    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// The connections it accepted, once it has accepted every connection made to it
    /// before this call: a connection of its own, queued behind them (a listener accepts in
    /// order), is answered only once the listener has taken it (and is not counted).
    pub fn settled_connections(&self) -> usize {
        let mut s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(format!("GET {SETTLING} HTTP/1.1\r\n\r\n").as_bytes())
            .unwrap();
        let mut answer = Vec::new();
        s.read_to_end(&mut answer).unwrap();
        assert!(answer.starts_with(b"HTTP/1.1 200 "), "{answer:?}");
        self.connections()
    }

    pub fn targets(&self) -> Vec<String> {
        self.targets.lock().unwrap().clone()
    }
}

/// The request target of the head read from `s`.
fn read_head(s: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 64 * 1024 || s.read(&mut byte).ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head);
    text.split(' ').nth(1).map(str::to_string)
}

/// Holds `s` open, sending nothing more, until the other side hangs up (or 10 s, the
/// read timeout of the peer's connections).
pub fn hold(s: &mut TcpStream) {
    let mut rest = [0u8; 1024];
    while matches!(s.read(&mut rest), Ok(n) if n > 0) {}
}

/// `200` with `body`, the connection closed after it.
pub fn answer_200(s: &mut TcpStream, body: &[u8]) {
    let _ = s.write_all(
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    let _ = s.write_all(body);
}

/// `parsedibiurl.ibi` of a urlRequest target.
pub fn asked_ibi(target: &str) -> Option<&str> {
    let query = target.split_once('?')?.1;
    if !query.split('&').any(|p| p == "servicesubject=urlRequest") {
        return None;
    }
    query
        .split('&')
        .find_map(|p| p.strip_prefix("parsedibiurl.ibi="))
}

/// An Archive that confirms its inclusion, takes acknowledgments, and answers each
/// urlRequest with `url_request(ibi, stream)`.
pub fn archive(url_request: impl Fn(&str, &mut TcpStream) + Send + Sync + 'static) -> Peer {
    Peer::start(move |target, s| {
        if target.contains("servicesubject=inclusionConfirmationRequest") {
            answer_200(s, b"confirmation yes\r\n");
        } else if let Some(ibi) = asked_ibi(target) {
            url_request(ibi, s);
        } else {
            answer_200(s, b"");
        }
    })
}
