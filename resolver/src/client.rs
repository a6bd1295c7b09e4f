//! The resolver as a client of Archives: which addresses it may contact, and one bounded
//! GET of an Archive service.
//!
//! Requests go over connections of our own pool, one lane per Archive address, on hyper's
//! HTTP/1.1 client connections. The pool never has more than `per_archive` connections
//! open to one address (see [`DEFAULT_PER_ARCHIVE`]), never follows a redirect, reads at
//! most [`MAX_ANSWER`] bytes, and resolves host names keeping only the addresses inside
//! `[archives].networks` (by default: public addresses only; not loopback, private,
//! link-local, multicast and other non-public ranges, nor an IPv6 address carrying one of
//! those as an IPv4 inside it), so a name that points inside the resolver's network later
//! is refused at connection time too, not only at inclusion.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::body::{Body, Incoming};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{CONNECTION, HOST, RETRY_AFTER, USER_AGENT};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

use ibi::escape::TABLE_6_1;
use ibi::network::Network;

/// The longest answer read from an Archive: a pair list is a few hundred bytes.
pub const MAX_ANSWER: usize = 64 * 1024;
/// Requests to Archives under way at once, over every resolution and acknowledgment:
/// each holds a connection, its buffers and its task (with 1,000 Archives, 16,000 under
/// way took 200 MiB). Beyond, a request waits for one to end, at most its timeout (then
/// it is [`Fetched::Busy`], not the Archive's failure).
pub const UNDER_WAY: usize = 512;
/// Idle connections kept for the next requests, over every Archive: each Archive gets
/// its share, from 1 to [`IDLE_PER_ARCHIVE`] (a power of two, so that the share changes
/// only when the number of Archives changes much).
pub const IDLE_CONNECTIONS: usize = 512;
/// Idle connections kept open to one Archive address at most.
pub const IDLE_PER_ARCHIVE: usize = 32;
/// Connections open to one Archive address at once (idle, in use and being connected),
/// by default: the connections a default `ibi-archive serve` accepts from one client
/// address ([`ibi::CONNECTIONS_PER_CLIENT`]; `--max-per-client`), so that the resolver
/// never meets that refusal. A request that finds them all in use waits for one, at most
/// its timeout (then it is [`Fetched::Busy`]); an Archive that never answers holds no more
/// than these of the [`UNDER_WAY`] requests. Acknowledgments hold at most all but
/// [`reserved_for_resolutions`] of them (12 of 16).
pub const DEFAULT_PER_ARCHIVE: usize = ibi::CONNECTIONS_PER_CLIENT;
/// The `Via` header of every request: an Archive server (or a resolver) tells by it that
/// a resolver is asking.
pub const VIA: &str = "1.1 ibi-resolver";
/// How long a connection may have been idle and still be used again: Archive servers
/// (`ibi-archive serve`, Apache's and lighttpd's defaults) close an idle connection after
/// 5 s, and a connection is not reused just as the Archive closes it. Idle connections
/// older than this are closed.
const IDLE_REUSE: Duration = Duration::from_secs(4);
/// The first pause before asking an overloaded Archive again; it doubles at each try, up
/// to [`LAST_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(20);
const LAST_PAUSE: Duration = Duration::from_millis(320);

/// Which addresses Archives may have.
#[derive(Clone, Debug)]
pub struct Policy {
    /// `None`: public addresses only.
    networks: Option<Vec<Network>>,
}

impl Policy {
    pub fn new(networks: Option<Vec<Network>>) -> Policy {
        Policy { networks }
    }

    /// Whether an Archive may be at `ip`. Under listed networks, `ip` itself must be in
    /// the list: it is what the resolver connects to (a 6to4 relay, a NAT64 or Teredo
    /// address is reached as IPv6, wherever its IPv4 leads). The IPv4 addresses inside an
    /// IPv6 address (see `embedded_v4`) can only refuse it: each must be in the list
    /// too. An IPv4-mapped address is its IPv4 address ([`Network::contains`]): a
    /// connection to it is one to that IPv4 address.
    pub fn allows(&self, ip: IpAddr) -> bool {
        match &self.networks {
            Some(list) => {
                let inside = |ip: IpAddr| list.iter().any(|n| n.contains(ip));
                inside(ip)
                    && match ip {
                        IpAddr::V6(v6) => embedded_v4(v6)
                            .is_none_or(|v4s| v4s.into_iter().all(|v4| inside(IpAddr::V4(v4)))),
                        IpAddr::V4(_) => true,
                    }
            }
            None => is_public(ip),
        }
    }
}

/// Whether `ip` is an address of the public internet (not loopback, private, link-local,
/// multicast, shared, documentation, reserved or unspecified). An IPv6 address with IPv4
/// addresses inside it is public when every one of them is.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4s) = embedded_v4(v6) {
                return v4s.into_iter().all(is_public_v4);
            }
            let s = v6.segments();
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local
                || (s[0] & 0xffc0) == 0xfe80 // link-local
                || (s[0] & 0xffc0) == 0xfec0 // site-local
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || (s[0] == 0x3fff && (s[1] & 0xf000) == 0) // documentation (3fff::/20)
                || (s[0] == 0x0100 && s[1] == 0 && s[2] == 0 && s[3] == 0) // discard-only
                || (s[0] == 0x2001 && s[1] == 0x0002 && s[2] == 0) // benchmarking
                || (s[0] == 0x2001 && (s[1] & 0xfff0) == 0x0020) // ORCHIDv2
                || (s[0] == 0x2001 && (s[1] & 0xfff0) == 0x0010) // ORCHID (deprecated)
                || s[0] == 0x5f00 // segment routing (SRv6) SIDs, RFC 9602
                // NAT64 outside 64:ff9b::/96 (whose addresses have an IPv4 inside): the
                // local-use prefix 64:ff9b:1::/48 (RFC 8215), and the unassigned rest.
                || (s[0] == 0x0064 && s[1] == 0xff9b))
        }
    }
}

/// The IPv4 addresses inside an IPv6 address, `None` for an address without: IPv4-mapped
/// `::ffff:a.b.c.d` (`::ffff:0:0/96`), IPv4-translated `::ffff:0:a.b.c.d`
/// (`::ffff:0:0:0/96`, RFC 2765), IPv4-compatible `::a.b.c.d` (`::/96` but `::` and
/// `::1`), NAT64 `64:ff9b::a.b.c.d` (`64:ff9b::/96`), 6to4 `2002:AABB:CCDD::/16` (the
/// IPv4 in bits 16 to 47), and Teredo `2001:0::/32`: its server (bits 32 to 63) and its
/// client (the last 32 bits, inverted). A packet to such an address may reach those IPv4
/// addresses, so it is judged by them.
fn embedded_v4(v6: Ipv6Addr) -> Option<Vec<Ipv4Addr>> {
    let s = v6.segments();
    let v4 = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    let last = v4(s[6], s[7]);
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] | [0, 0, 0, 0, 0xffff, 0, _, _] => Some(vec![last]),
        [0, 0, 0, 0, 0, 0, 0, 0 | 1] => None,
        [0, 0, 0, 0, 0, 0, _, _] => Some(vec![last]),
        [0x0064, 0xff9b, 0, 0, 0, 0, _, _] => Some(vec![last]),
        [0x2002, hi, lo, ..] => Some(vec![v4(hi, lo)]),
        [0x2001, 0, hi, lo, ..] => Some(vec![v4(hi, lo), v4(!s[6], !s[7])]),
        _ => None,
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let o = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.is_unspecified()
        || ip.is_documentation()
        || o[0] == 0
        || (o[0] == 100 && (o[1] & 0xc0) == 64) // shared address space
        || (o[0] == 192 && o[1] == 0 && o[2] == 0) // IETF protocol assignments
        || (o[0] == 198 && (o[1] & 0xfe) == 18) // benchmarking
        || o[0] >= 240)
}

/// What a request is for. Acknowledgments may hold only some of the connections to an
/// Archive (see [`reserved_for_resolutions`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// A urlRequest of a resolution, or an inclusion's confirmation.
    Resolution,
    /// The acknowledgment of a URL found (Table 8.11), sent after the reader has its
    /// answer.
    Acknowledgment,
}

/// Of `per_archive` connections to one Archive, those acknowledgments never hold: a
/// quarter (4 of the default 16), at least 1; none when there is only one connection. An
/// acknowledgment waits on the Archive's disk (`ibi-archive serve` answers it once its
/// line is synced), which may take long on a busy machine while the Archive still answers
/// urlRequests at once: free to take every connection, the acknowledgments of past
/// resolutions held them all and the next resolutions' urlRequests waited behind them, up
/// to the timeout. Acknowledgments still use the others, so that many share one sync.
pub fn reserved_for_resolutions(per_archive: usize) -> usize {
    if per_archive < 2 {
        0
    } else {
        (per_archive / 4).max(1)
    }
}

/// How many times the timeout an acknowledgment is given to find a connection, and then
/// to be answered. Nobody waits for it: those of a burst wait their turn rather than be
/// lost while the Archive still takes them; and cut off while the Archive still syncs its
/// line, its connection would be closed by the resolver but still counted by the Archive
/// (`ibi-archive serve` counts it until its handler ends), which would refuse the next
/// connection, a resolution's, for it.
pub const ACKNOWLEDGMENT_PATIENCE: u32 = 10;

/// What one request to an Archive gave.
#[derive(Clone, Debug)]
pub enum Fetched {
    /// `200` and the body (at most [`MAX_ANSWER`] bytes).
    Body(String),
    /// Anything else: a short description for the trace and the log.
    Failed(String),
    /// No answer within the timeout.
    TimedOut,
    /// Not sent: [`UNDER_WAY`] requests (or `per_archive` to this Archive) stayed under
    /// way for the whole timeout. The resolver's limit, not the Archive's failure.
    Busy,
    /// The Archive answered `503` or `429` (the description says which) to every try until
    /// the timeout: it has more work than it takes, or more connections than it accepts
    /// from one client. It works, and others' load is not its failure: an Overloaded
    /// request must never count toward the Archive's dormancy.
    Overloaded(String),
    /// Not sent: the Archive's address (its name resolved) is outside the networks
    /// Archives may have. The resolver's policy, not the Archive's failure.
    Refused(String),
}

/// What an Archive answered to an `inclusionConfirmationRequest`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Confirmation {
    /// `200` and `confirmation yes`.
    Yes,
    /// A pair list naming a resolver (`ibi.resolverservice` or `resolveraddress`), as an
    /// IBI resolver answers, whatever the status (`200` or `400`): the address is a
    /// resolver's, not an Archive's.
    AsResolver,
    /// Anything else, no answer included.
    No,
}

/// The HTTP client of the resolver.
#[derive(Clone)]
pub struct ArchiveClient {
    shared: Arc<Shared>,
}

struct Shared {
    policy: Policy,
    /// Connections open to one Archive address at most.
    per_archive: usize,
    /// Idle connections kept to each Archive address (see [`IDLE_CONNECTIONS`]; more only
    /// for the requests waiting for them), never more than `per_archive`.
    idle_kept: AtomicUsize,
    under_way: Semaphore,
    /// The lane of each Archive address (`host[:port]` as in `archiveaddress`).
    lanes: Mutex<HashMap<String, Arc<Lane>>>,
    /// Whether the task closing connections idle for too long runs.
    sweeping: AtomicBool,
}

// The connections to one Archive address are at most `per_archive`, by construction:
//
// - Each socket holds one of its lane's `sockets` permits (`per_archive` of them) from
//   before its connect starts until it is closed by both sides: the connection's task
//   gives the permit back once hyper is done with the socket and the Archive closed its
//   side too (or did not within `CLOSING`). A connection dropped anywhere (a request cut
//   off by its timeout, an answer not read to its end, an idle connection given up) is
//   closed by its task a moment later, and its permit is not free before. So the sockets
//   open to the address (connecting, in use, idle or closing) are never more than
//   `per_archive`, as the Archive counts them too.
// - So that a request never waits for a socket while one sits idle: a request holds one
//   of the lane's `requests` permits (`per_archive`, first come first served) for as long
//   as it uses a connection. It takes an idle connection if one is usable, and asks for a
//   socket only when the lane's idle list is empty (checked and taken under the lane's
//   mutex); a connection it is done with goes back to the idle list before its permit is
//   released. Then open = in use + idle + closing, in use < `per_archive` while it holds
//   its own permit, and a new connection is asked for only when idle = 0: the socket it
//   waits for is one being closed. A request that finds no socket free while some
//   connections are idle (a retry, below, or one put back meanwhile) gives up the oldest
//   idle one for it.
// - Acknowledgments take one of the lane's `acknowledgments` permits (all but
//   `reserved_for_resolutions`) before they wait for a `requests` permit, and hold it as
//   long as that one: however slowly an Archive takes them, the reserved connections are
//   left to resolutions, which wait behind no more acknowledgments than those permits.
//
// An Archive server counts a connection until it sees it closed, a moment after the
// resolver closed it (or after it closed it itself, after its 100th answer say): so a
// socket's permit waits for the Archive's side to close as well (`closed_by_both`), and
// `ibi-archive serve` stops counting a connection before it closes its side. Should an
// Archive refuse a connection all the same (`503`: another client at the resolver's
// address holds some, say), that is retried (see `ArchiveClient::ask`) and never
// counted as the Archive's failure.
/// The connections to one Archive address.
struct Lane {
    requests: Semaphore,
    /// Acknowledgments under way or waiting for one of the `requests` permits.
    acknowledgments: Semaphore,
    /// Requests waiting for one of the `requests` permits.
    waiting: AtomicUsize,
    sockets: Arc<Semaphore>,
    /// Idle connections, the last one in the most recently used.
    idle: Mutex<Vec<Idle>>,
    /// The address its last connection reached (its host name resolved).
    reached: Mutex<Option<IpAddr>>,
}

struct Idle {
    send: SendRequest<Empty<Bytes>>,
    since: Instant,
}

impl Lane {
    fn new(per_archive: usize) -> Lane {
        Lane {
            requests: Semaphore::new(per_archive),
            acknowledgments: Semaphore::new(per_archive - reserved_for_resolutions(per_archive)),
            waiting: AtomicUsize::new(0),
            sockets: Arc::new(Semaphore::new(per_archive)),
            idle: Mutex::new(Vec::new()),
            reached: Mutex::new(None),
        }
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<Idle>> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The most recently used idle connection still usable; those too old or closed by
    /// the Archive are dropped (closed).
    fn take_idle(&self) -> Option<SendRequest<Empty<Bytes>>> {
        let mut idle = self.idle();
        while let Some(c) = idle.pop() {
            if c.since.elapsed() <= IDLE_REUSE && !c.send.is_closed() {
                return Some(c.send);
            }
        }
        None
    }

    /// Keeps `send` for the next request, if fewer than `kept` are idle, or fewer than
    /// the requests waiting for the lane: those take it at once. Closing it instead while
    /// they wait would only have them open another, which the Archive could refuse (it
    /// still counts the one closed for a moment).
    fn put_back(&self, send: SendRequest<Empty<Bytes>>, kept: usize) {
        let mut idle = self.idle();
        let waiting = self.waiting.load(Ordering::SeqCst);
        if idle.len() < kept.max(waiting) && !send.is_closed() {
            idle.push(Idle {
                send,
                since: Instant::now(),
            });
        }
    }

    /// Closes the idle connection unused for the longest, if any.
    fn give_up_oldest(&self) {
        let mut idle = self.idle();
        if !idle.is_empty() {
            idle.remove(0);
        }
    }

    /// Closes the idle connections too old to be used again, and the oldest ones beyond
    /// `kept` (or beyond the requests waiting for the lane, if more).
    fn sweep(&self, kept: usize) {
        let mut idle = self.idle();
        idle.retain(|c| c.since.elapsed() <= IDLE_REUSE && !c.send.is_closed());
        let waiting = self.waiting.load(Ordering::SeqCst);
        let beyond = idle.len().saturating_sub(kept.max(waiting));
        idle.drain(..beyond);
    }
}

/// One of those a counter counts (the requests waiting for a lane's permit, say), until
/// dropped.
pub struct Counted<'a> {
    counter: &'a AtomicUsize,
    /// How many are counted, this one included, when it was.
    pub count: usize,
}

impl<'a> Counted<'a> {
    pub fn enter(counter: &'a AtomicUsize) -> Counted<'a> {
        let count = counter.fetch_add(1, Ordering::SeqCst) + 1;
        Counted { counter, count }
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.counter.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The idle connections kept to each of `archives` Archives.
fn idle_per_archive(archives: usize) -> usize {
    let share = IDLE_CONNECTIONS / archives.max(1);
    let power = if share == 0 { 1 } else { 1 << share.ilog2() };
    power.clamp(1, IDLE_PER_ARCHIVE)
}

/// Where a request goes, from its URL.
struct Target {
    /// `host[:port]` as written in the URL: the lane.
    address: String,
    host: url::Host<String>,
    port: u16,
    /// The `Host` header: host and port, the port left out when it is 80.
    authority: String,
    /// `path?query`.
    path_and_query: String,
    /// The `Accept` header, when a description is asked for.
    accept: Option<&'static str>,
}

/// The lane of a request URL: `host[:port]` as written after `http://`.
fn lane_of(url: &str) -> Option<&str> {
    let rest = url.strip_prefix("http://")?;
    rest.split('/').next()
}

impl Target {
    fn parse(url: &str) -> Result<Target, String> {
        let not_http = || "not an http URL".to_string();
        let address = lane_of(url).ok_or_else(not_http)?.to_string();
        let parsed = url::Url::parse(url).map_err(|_| not_http())?;
        let host = parsed.host().ok_or_else(not_http)?.to_owned();
        let host_str = parsed.host_str().ok_or_else(not_http)?;
        let authority = match parsed.port() {
            Some(p) => format!("{host_str}:{p}"),
            None => host_str.to_string(),
        };
        Ok(Target {
            address,
            host,
            port: parsed.port_or_known_default().unwrap_or(80),
            authority,
            path_and_query: parsed[url::Position::BeforePath..url::Position::AfterQuery]
                .to_string(),
            accept: None,
        })
    }

    fn request(&self) -> Result<Request<Empty<Bytes>>, String> {
        let mut request = Request::get(self.path_and_query.as_str());
        if let Some(accept) = self.accept {
            request = request.header(hyper::header::ACCEPT, accept);
        }
        request
            .header(HOST, self.authority.as_str())
            .header(
                USER_AGENT,
                concat!("ibi-resolver/", env!("CARGO_PKG_VERSION")),
            )
            .header("via", VIA)
            .body(Empty::new())
            .map_err(|e| format!("request failed: {e}"))
    }
}

/// What one exchange on a connection gave.
enum Exchange {
    /// An answer: its status, its `Retry-After` in seconds, and its body, if it was read
    /// (`Err`: why it could not be).
    Answer {
        status: StatusCode,
        retry_after: Option<Duration>,
        body: Option<Result<String, String>>,
    },
    Failed(String),
    /// Its address is outside the networks Archives may have.
    Refused(String),
    /// No socket free within the timeout.
    Busy,
}

impl ArchiveClient {
    /// A client of Archives at the addresses `policy` allows, with at most `per_archive`
    /// connections open to one Archive address (see [`DEFAULT_PER_ARCHIVE`]; 0 is taken
    /// as 1).
    pub fn new(policy: Policy, per_archive: usize) -> ArchiveClient {
        let per_archive = per_archive.max(1);
        ArchiveClient {
            shared: Arc::new(Shared {
                policy,
                per_archive,
                idle_kept: AtomicUsize::new(IDLE_PER_ARCHIVE.min(per_archive)),
                under_way: Semaphore::new(UNDER_WAY),
                lanes: Mutex::new(HashMap::new()),
                sweeping: AtomicBool::new(false),
            }),
        }
    }

    /// Fits the client to the Archives at `addresses`: the idle connections kept to each
    /// (see [`IDLE_CONNECTIONS`]; those beyond the new share are closed), and the lanes of
    /// addresses no longer there forgotten once no request uses them.
    pub fn fit(&self, addresses: &[&str]) {
        let kept = idle_per_archive(addresses.len()).min(self.shared.per_archive);
        self.shared.idle_kept.store(kept, Ordering::Relaxed);
        let mut lanes = self.shared.lanes();
        // A lane only the map holds has no request: none can get it but through the map,
        // which is locked. One still in use stays, so that an address never has two.
        lanes.retain(|a, lane| addresses.contains(&a.as_str()) || Arc::strong_count(lane) > 1);
        for lane in lanes.values() {
            lane.sweep(kept);
        }
    }

    pub fn policy(&self) -> &Policy {
        &self.shared.policy
    }

    /// The IP address the Archive a request `url` goes to is reached at: its literal
    /// address, else the one its last connection reached, if any.
    pub fn address_of(&self, url: &str) -> Option<IpAddr> {
        let address = lane_of(url)?;
        if let Some(ip) = literal_ip(address) {
            return Some(ip);
        }
        let lanes = self.shared.lanes();
        let lane = lanes.get(address)?;
        let reached = *lane.reached.lock().unwrap_or_else(|p| p.into_inner());
        reached
    }

    /// `http://<archiveaddress>/<serviceibi>?<pairs>`, the pairs escaped as Table 6.1
    /// asks and in the order given. Refuses an address that is not a `hostport` of
    /// §6.1 or whose literal IP the policy refuses.
    pub fn service_url(
        &self,
        archiveaddress: &str,
        serviceibi: &str,
        pairs: &[(&str, &[u8])],
    ) -> Result<String, String> {
        ibi::registration::HostPort::check(archiveaddress)
            .map_err(|e| format!("{archiveaddress:?} {e}"))?;
        if let Some(ip) = literal_ip(archiveaddress) {
            if !self.shared.policy.allows(ip) {
                return Err(format!(
                    "{archiveaddress} is outside the networks Archives may have"
                ));
            }
        }
        let mut url = format!("http://{archiveaddress}/{serviceibi}");
        for (i, (name, value)) in pairs.iter().enumerate() {
            url.push(if i == 0 { '?' } else { '&' });
            url.push_str(name);
            url.push('=');
            url.extend(percent_encoding::percent_encode(value, TABLE_6_1));
        }
        Ok(url)
    }

    /// What the Archive at `archiveaddress` answers to `inclusionConfirmationRequest`
    /// (Figure 7.1, message 3) within `timeout`.
    pub async fn confirm(
        &self,
        archiveaddress: &str,
        serviceibi: &str,
        timeout: Duration,
    ) -> Confirmation {
        let Ok(url) = self.service_url(
            archiveaddress,
            serviceibi,
            &[("servicesubject", b"inclusionConfirmationRequest")],
        ) else {
            return Confirmation::No;
        };
        // A resolver answers an Archive's request 400, or 508 when it sees it comes from a
        // resolver: both with its identity.
        let read = |s: StatusCode| {
            s == StatusCode::OK || s == StatusCode::BAD_REQUEST || s == StatusCode::LOOP_DETECTED
        };
        let (status, body) = match self
            .ask(Purpose::Resolution, (&url, None), timeout, read)
            .await
        {
            Ok((status, Some(Ok(body)))) => (status, body),
            _ => return Confirmation::No,
        };
        let Ok(pairs) = ibi::pairs::parse(body.trim_end_matches(['\r', '\n'])) else {
            return Confirmation::No;
        };
        if status == StatusCode::OK
            && pairs
                .iter()
                .any(|(n, v)| n == "confirmation" && v.as_words() == [b"yes"])
        {
            Confirmation::Yes
        } else if pairs
            .iter()
            .any(|(n, _)| n == "ibi.resolverservice" || n == "resolveraddress")
        {
            Confirmation::AsResolver
        } else {
            Confirmation::No
        }
    }

    /// One GET, bounded in time (connect included) and in the bytes read: the body of a
    /// `200`. An Archive that answers `503` or `429` is asked again until the timeout.
    pub async fn get(&self, url: &str, timeout: Duration) -> (Fetched, Duration) {
        self.get_for(Purpose::Resolution, url, timeout).await
    }

    /// [`ArchiveClient::get`] for `purpose`.
    pub async fn get_for(
        &self,
        purpose: Purpose,
        url: &str,
        timeout: Duration,
    ) -> (Fetched, Duration) {
        let start = Instant::now();
        let fetched = match self
            .ask(purpose, (url, None), timeout, |s| s == StatusCode::OK)
            .await
        {
            Ok((StatusCode::OK, Some(Ok(body)))) => Fetched::Body(body),
            Ok((StatusCode::OK, Some(Err(why)))) => Fetched::Failed(why),
            Ok((status, _)) if status.is_redirection() => {
                Fetched::Failed(format!("answered {status} (redirects are not followed)"))
            }
            Ok((status, _)) => Fetched::Failed(format!("answered {status}")),
            Err(other) => other,
        };
        (fetched, start.elapsed())
    }

    /// One GET of the description `accept` names (`application/ld+json`), bounded as
    /// [`ArchiveClient::get`]: the status and the body of a `200`, or of a `410` (a
    /// tombstone's landing page answers so); `Err` saying why not.
    pub async fn get_description(
        &self,
        url: &str,
        accept: &'static str,
        timeout: Duration,
    ) -> Result<(StatusCode, String), String> {
        let read = |s: StatusCode| s == StatusCode::OK || s == StatusCode::GONE;
        match self
            .ask(Purpose::Resolution, (url, Some(accept)), timeout, read)
            .await
        {
            Ok((status, Some(Ok(body)))) => Ok((status, body)),
            Ok((_, Some(Err(why)))) => Err(why),
            Ok((status, None)) => Err(format!("answered {status}")),
            Err(Fetched::TimedOut) => Err("no answer within the timeout".into()),
            Err(Fetched::Failed(why) | Fetched::Overloaded(why) | Fetched::Refused(why)) => {
                Err(why)
            }
            Err(Fetched::Busy | Fetched::Body(_)) => Err("not sent: the resolver was busy".into()),
        }
    }

    /// One GET: the status of the answer, and its body when `read(status)`; or what else
    /// came of it (never [`Fetched::Body`]). Slots are waited for at most `timeout`, then
    /// the request and its tries take at most `timeout`; for an acknowledgment, each
    /// [`ACKNOWLEDGMENT_PATIENCE`] times that.
    async fn ask(
        &self,
        purpose: Purpose,
        (url, accept): (&str, Option<&'static str>),
        timeout: Duration,
        read: fn(StatusCode) -> bool,
    ) -> Result<(StatusCode, Option<Result<String, String>>), Fetched> {
        let mut target = Target::parse(url).map_err(Fetched::Failed)?;
        target.accept = accept;
        let timeout = match purpose {
            Purpose::Acknowledgment => timeout * ACKNOWLEDGMENT_PATIENCE,
            Purpose::Resolution => timeout,
        };
        self.sweep_idle();
        let lane = self.shared.lane(&target.address);
        let slots = async {
            let of_acknowledgments = match purpose {
                Purpose::Acknowledgment => Some(lane.acknowledgments.acquire().await),
                Purpose::Resolution => None,
            };
            let waited = Counted::enter(&lane.waiting);
            let of_lane = lane.requests.acquire().await;
            drop(waited);
            (
                of_acknowledgments.transpose(),
                of_lane,
                self.shared.under_way.acquire().await,
            )
        };
        let Ok((Ok(_of_acknowledgments), Ok(_of_lane), Ok(_of_all))) =
            tokio::time::timeout(timeout, slots).await
        else {
            return Err(Fetched::Busy);
        };
        let deadline = tokio::time::Instant::now() + timeout;
        let mut pause = FIRST_PAUSE;
        loop {
            let exchanged =
                tokio::time::timeout_at(deadline, self.exchange(&lane, &target, read, deadline))
                    .await;
            match exchanged {
                Err(_) => return Err(Fetched::TimedOut),
                Ok(Exchange::Busy) => return Err(Fetched::Busy),
                Ok(Exchange::Failed(why)) => return Err(Fetched::Failed(why)),
                Ok(Exchange::Refused(why)) => return Err(Fetched::Refused(why)),
                Ok(Exchange::Answer {
                    status,
                    retry_after,
                    ..
                }) if status == StatusCode::SERVICE_UNAVAILABLE
                    || status == StatusCode::TOO_MANY_REQUESTS =>
                {
                    // Overloaded: asked again after a pause, the one the Archive asks for
                    // when there is time for it.
                    let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                    let wait = match retry_after {
                        Some(asked) if asked < left => asked.max(pause),
                        _ => pause,
                    };
                    pause = (pause * 2).min(LAST_PAUSE);
                    tokio::time::sleep(wait.min(left)).await;
                    if tokio::time::Instant::now() >= deadline {
                        return Err(Fetched::Overloaded(format!("answered {status}")));
                    }
                }
                Ok(Exchange::Answer { status, body, .. }) => return Ok((status, body)),
            }
        }
    }

    /// One request on a connection of `lane`, retried once on a new connection when a
    /// reused one turns out closed by the Archive before it answered.
    async fn exchange(
        &self,
        lane: &Lane,
        target: &Target,
        read: fn(StatusCode) -> bool,
        deadline: tokio::time::Instant,
    ) -> Exchange {
        let mut retried = false;
        loop {
            let idle = if retried { None } else { lane.take_idle() };
            let reused = idle.is_some();
            let mut send = match idle {
                Some(send) => send,
                None => match self.open(lane, target, deadline).await {
                    Ok(send) => send,
                    Err(e) => return e,
                },
            };
            if let Err(e) = send.ready().await {
                if reused {
                    continue; // closed while idle: the next one
                }
                return Exchange::Failed(describe("request failed", &e));
            }
            let request = match target.request() {
                Ok(r) => r,
                Err(why) => return Exchange::Failed(why),
            };
            let response = match send.send_request(request).await {
                Ok(r) => r,
                Err(e) if reused && !retried && closed_unanswered(&e) => {
                    // The Archive closed the idle connection just as it was used: not its
                    // failure.
                    retried = true;
                    continue;
                }
                Err(e) => return Exchange::Failed(describe("request failed", &e)),
            };
            return self.answer(lane, send, response, read).await;
        }
    }

    /// Reads `response`'s body if `read` says so, then keeps the connection for the next
    /// request if it can be used again.
    async fn answer(
        &self,
        lane: &Lane,
        send: SendRequest<Empty<Bytes>>,
        response: Response<Incoming>,
        read: fn(StatusCode) -> bool,
    ) -> Exchange {
        let status = response.status();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let closes = response
            .headers()
            .get_all(CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case("close")));
        let kept = self.shared.idle_kept.load(Ordering::Relaxed);
        let mut incoming = response.into_body();
        let body = if read(status) {
            let body = read_body(&mut incoming).await;
            if body.is_ok() && !closes {
                lane.put_back(send, kept);
            }
            Some(body)
        } else {
            // Not read: the connection can be used again only if the answer ends, as a
            // short one (a 503's few words) is read to its end for that.
            if !closes && (incoming.is_end_stream() || drained(&mut incoming).await) {
                lane.put_back(send, kept);
            }
            None
        };
        Exchange::Answer {
            status,
            retry_after,
            body,
        }
    }

    /// A new connection to `target`, once one of the lane's sockets is free.
    async fn open(
        &self,
        lane: &Lane,
        target: &Target,
        deadline: tokio::time::Instant,
    ) -> Result<SendRequest<Empty<Bytes>>, Exchange> {
        let socket = match lane.sockets.clone().try_acquire_owned() {
            Ok(socket) => socket,
            Err(_) => {
                // Every socket is taken, by connections in use, being closed, or idle: the
                // oldest idle one (if any) is given up for this one.
                lane.give_up_oldest();
                match tokio::time::timeout_at(deadline, lane.sockets.clone().acquire_owned()).await
                {
                    Ok(Ok(socket)) => socket,
                    _ => return Err(Exchange::Busy),
                }
            }
        };
        let stream = connect(&self.shared.policy, target).await?;
        let _ = stream.set_nodelay(true);
        if let Ok(peer) = stream.peer_addr() {
            *lane.reached.lock().unwrap_or_else(|p| p.into_inner()) = Some(peer.ip());
        }
        let (send, connection) = http1::Builder::new()
            .handshake(TokioIo::new(stream))
            .await
            .map_err(|e| Exchange::Failed(describe("cannot connect", &e)))?;
        tokio::spawn(async move {
            let _socket = socket;
            // Ends once the connection is done with, by either side; then the Archive is
            // let close it (see `closed_by_both`) before the permit is given back.
            if let Ok(parts) = connection.without_shutdown().await {
                closed_by_both(parts.io.into_inner()).await;
            }
        });
        Ok(send)
    }

    /// Starts, once, the task that closes connections idle for longer than
    /// [`IDLE_REUSE`], so that an Archive asked no more is not held a connection.
    fn sweep_idle(&self) {
        if self.shared.sweeping.swap(true, Ordering::Relaxed) {
            return;
        }
        let shared: Weak<Shared> = Arc::downgrade(&self.shared);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_secs(1));
            loop {
                every.tick().await;
                let Some(shared) = shared.upgrade() else {
                    return;
                };
                let kept = shared.idle_kept.load(Ordering::Relaxed);
                for lane in shared.lanes().values() {
                    lane.sweep(kept);
                }
            }
        });
    }
}

impl Shared {
    fn lanes(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Lane>>> {
        self.lanes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The lane of `address`.
    fn lane(&self, address: &str) -> Arc<Lane> {
        let mut lanes = self.lanes();
        if let Some(lane) = lanes.get(address) {
            return lane.clone();
        }
        let lane = Arc::new(Lane::new(self.per_archive));
        lanes.insert(address.to_string(), lane.clone());
        lane
    }
}

/// A TCP connection to `target`, its host name resolved and every address kept only if
/// the policy allows it, tried in order; [`Exchange::Refused`] when it allows none.
async fn connect(policy: &Policy, target: &Target) -> Result<TcpStream, Exchange> {
    let addresses: Vec<SocketAddr> = match &target.host {
        url::Host::Domain(name) => {
            let found = tokio::net::lookup_host((name.as_str(), target.port))
                .await
                .map_err(|e| Exchange::Failed(format!("cannot connect: {e}")))?;
            let allowed: Vec<SocketAddr> = found.filter(|a| policy.allows(a.ip())).collect();
            if allowed.is_empty() {
                return Err(Exchange::Refused(format!(
                    "cannot connect: {name} has no address in the networks Archives may have"
                )));
            }
            allowed
        }
        url::Host::Ipv4(ip) => literal(policy, IpAddr::V4(*ip), target)?,
        url::Host::Ipv6(ip) => literal(policy, IpAddr::V6(*ip), target)?,
    };
    let mut last = None;
    for address in addresses {
        match TcpStream::connect(address).await {
            Ok(stream) => return Ok(stream),
            Err(e) => last = Some(e),
        }
    }
    Err(Exchange::Failed(match last {
        Some(e) => format!("cannot connect: {e}"),
        None => "cannot connect".to_string(),
    }))
}

/// The address of a host written as an IP, if the policy allows it.
fn literal(policy: &Policy, ip: IpAddr, target: &Target) -> Result<Vec<SocketAddr>, Exchange> {
    if !policy.allows(ip) {
        return Err(Exchange::Refused(format!(
            "cannot connect: {} is outside the networks Archives may have",
            target.address
        )));
    }
    Ok(vec![SocketAddr::new(ip, target.port)])
}

/// Closes a connection done with, once the Archive has closed it too, waiting at most
/// [`CLOSING`] and reading (and dropping) at most [`MAX_ANSWER`] bytes meanwhile. An
/// Archive counts a connection among its client's until it sees it closed
/// (`ibi-archive serve` counts at most [`ibi::CONNECTIONS_PER_CLIENT`]): its socket's
/// permit given back only then, a new connection to it never finds this one still
/// counted, and is not refused for it.
async fn closed_by_both(mut stream: TcpStream) {
    use tokio::io::AsyncWrite;
    let mut pinned = std::pin::Pin::new(&mut stream);
    if std::future::poll_fn(|cx| pinned.as_mut().poll_shutdown(cx))
        .await
        .is_err()
    {
        return;
    }
    let until_closed = async {
        let mut chunk = [0u8; 4096];
        let mut read = 0;
        while read <= MAX_ANSWER {
            if stream.readable().await.is_err() {
                return;
            }
            match stream.try_read(&mut chunk) {
                Ok(0) => return,
                Ok(n) => read += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => return,
            }
        }
    };
    let _ = tokio::time::timeout(CLOSING, until_closed).await;
}

/// How long a connection done with waits at most for the Archive to close it too.
const CLOSING: Duration = Duration::from_secs(1);

/// The body of an answer, at most [`MAX_ANSWER`] bytes of UTF-8.
async fn read_body(incoming: &mut Incoming) -> Result<String, String> {
    let too_long = || format!("answer longer than {MAX_ANSWER} bytes");
    if incoming.size_hint().lower() > MAX_ANSWER as u64 {
        return Err(too_long());
    }
    let mut body = Vec::new();
    while let Some(frame) = incoming.frame().await {
        let frame = frame.map_err(|e| describe("broken answer", &e))?;
        if let Ok(chunk) = frame.into_data() {
            if body.len() + chunk.len() > MAX_ANSWER {
                return Err(too_long());
            }
            body.extend_from_slice(&chunk);
        }
    }
    String::from_utf8(body).map_err(|_| "answer is not UTF-8 text".to_string())
}

/// A body not read beyond [`DRAINED`] bytes: whether it ended within them, so that its
/// connection may be used again (rather than closed and opened anew, which an Archive
/// counts among its client's connections for a while).
async fn drained(incoming: &mut Incoming) -> bool {
    if incoming.size_hint().lower() > DRAINED as u64 {
        return false;
    }
    let mut read = 0;
    while let Some(frame) = incoming.frame().await {
        let Ok(frame) = frame else {
            return false;
        };
        if let Ok(chunk) = frame.into_data() {
            read += chunk.len();
            if read > DRAINED {
                return false;
            }
        }
    }
    true
}

/// The most of an answer's body read only to use its connection again.
const DRAINED: usize = 4096;

/// Whether a request failed because its connection was closed before any answer came:
/// the connection was not ready, or closed (cleanly or reset) before an answer began.
fn closed_unanswered(e: &hyper::Error) -> bool {
    use std::io::ErrorKind;
    if e.is_canceled() || e.is_incomplete_message() || e.is_closed() {
        return true;
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return matches!(
                io.kind(),
                ErrorKind::ConnectionReset
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::BrokenPipe
                    | ErrorKind::UnexpectedEof
            );
        }
        source = s.source();
    }
    false
}

/// A client error as `kind` and its deepest cause (the URL, which may hold a key, is in
/// none of them).
fn describe(kind: &str, e: &hyper::Error) -> String {
    let mut cause = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        cause = s.to_string();
        source = s.source();
    }
    format!("{kind}: {cause}")
}

/// The IP of an address whose host is an IP literal.
pub fn literal_ip(address: &str) -> Option<IpAddr> {
    if let Some(rest) = address.strip_prefix('[') {
        let end = rest.find(']')?;
        return rest[..end].parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    let host = address.rsplit_once(':').map_or(address, |(h, _)| h);
    host.parse::<Ipv4Addr>().ok().map(IpAddr::V4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_archive_gets_its_share_of_the_idle_connections() {
        // IDLE_CONNECTIONS (512) over K, down to a power of two, from 1 to 32.
        for (archives, share) in [
            (0, 32),
            (1, 32),
            (10, 32),
            (16, 32),
            (17, 16),
            (100, 4),
            (300, 1),
            (1000, 1),
            (5000, 1),
        ] {
            assert_eq!(idle_per_archive(archives), share, "{archives} Archives");
        }
    }

    #[test]
    fn public_addresses_only_by_default() {
        let p = Policy::new(None);
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "fd12::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "3fff::1",
            "3fff:fff::1",
            "100::1",
            "2001:2::1",
            "2001:20::1",
            "2001:10::1",
            "5f00::1",
            // 6to4 of 127.0.0.1, IPv4-translated, IPv4-compatible.
            "2002:7f00:1::",
            "::ffff:0:7f00:1",
            "::127.0.0.1",
            // Teredo: server 10.0.0.1, client 8.8.8.8 (inverted: f7f7:f7f7); server
            // 150.163.34.239, client 192.168.1.1 (3f57:fefe).
            "2001:0:a00:1::f7f7:f7f7",
            "2001:0:96a3:22ef::3f57:fefe",
            // Local-use NAT64 (RFC 8215), whatever the IPv4 in it.
            "64:ff9b:1::1",
            "64:ff9b:1::96a3:22ef",
            "2001:db8::1",
            "198.18.0.1",
        ] {
            assert!(!p.allows(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "150.163.34.239",
            "8.8.8.8",
            "2001:4860:4860::8888",
            "::ffff:150.163.2.175",
            // 6to4 of 150.16.34.239; NAT64 and IPv4-translated 150.163.34.239; Teredo,
            // server 150.163.34.239 and client 8.8.8.8.
            "2002:9610:22ef::1",
            "64:ff9b::96a3:22ef",
            "::ffff:0:96a3:22ef",
            "2001:0:96a3:22ef::f7f7:f7f7",
            // Beside the special blocks above: WIDE's 2001:200::/23, 3ff0::/12 outside
            // 3fff::/20, 2001:30:: past ORCHIDv2, 2001:2:1:: past benchmarking.
            "2001:200::1",
            "3ff0::1",
            "3fff:1000::1",
            "2001:30::1",
            "2001:2:1::1",
        ] {
            assert!(p.allows(ip.parse().unwrap()), "{ip}");
        }
        let lo = Policy::new(Some(vec![Network::parse("127.0.0.0/8").unwrap()]));
        assert!(lo.allows("127.0.0.2".parse().unwrap()));
        assert!(!lo.allows("150.163.34.239".parse().unwrap()));
    }

    #[test]
    fn under_listed_networks_the_address_connected_to_is_itself_in_the_list() {
        let nets = |list: &[&str]| {
            Policy::new(Some(
                list.iter().map(|n| Network::parse(n).unwrap()).collect(),
            ))
        };
        let lo = nets(&["127.0.0.0/8"]);
        // IPv4-mapped: a connection to it is one to the IPv4 address itself.
        for ip in ["127.0.0.1", "::ffff:127.0.0.1"] {
            assert!(lo.allows(ip.parse().unwrap()), "{ip}");
        }
        // Packets to these go to the IPv6 address (a relay, a translator), which is not
        // in the list, whatever IPv4 address is inside it.
        for ip in [
            "::1",
            "2002:7f00:1::",
            "::ffff:0:7f00:1",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            // Teredo, server 127.0.0.1 and client 127.0.0.1 (inverted: 80ff:fffe).
            "2001:0:7f00:1::80ff:fffe",
        ] {
            assert!(!lo.allows(ip.parse().unwrap()), "{ip}");
        }
        // Refused before any packet: no URL is made for them.
        let client = ArchiveClient::new(lo, DEFAULT_PER_ARCHIVE);
        for address in ["[2002:7f00:1::]:8080", "[64:ff9b::7f00:1]:8080"] {
            assert_eq!(
                client.service_url(address, "x/y", &[]),
                Err(format!(
                    "{address} is outside the networks Archives may have"
                ))
            );
        }
        // Listed, an IPv6 address is let in only when every IPv4 address inside it is
        // listed too: the IPv4 inside can only refuse.
        let six_to_four = nets(&["2002::/16"]);
        assert!(!six_to_four.allows("2002:7f00:1::".parse().unwrap()));
        let both = nets(&["2002::/16", "127.0.0.0/8"]);
        assert!(both.allows("2002:7f00:1::".parse().unwrap()));
        assert!(!both.allows("2002:9610:22ef::1".parse().unwrap()));
        let nat64 = nets(&["64:ff9b::/96", "10.0.0.0/8"]);
        assert!(nat64.allows("64:ff9b::a00:1".parse().unwrap()));
        assert!(!nat64.allows("64:ff9b::7f00:1".parse().unwrap()));
        // Teredo: its server and its client (inverted) both judged.
        let teredo = nets(&["2001::/32", "127.0.0.0/8"]);
        assert!(teredo.allows("2001:0:7f00:1::80ff:fffe".parse().unwrap()));
        assert!(!teredo.allows("2001:0:7f00:1::f7f7:f7f7".parse().unwrap()));
        assert!(!teredo.allows("2001:0:808:808::80ff:fffe".parse().unwrap()));
        let translated = nets(&["::ffff:0:0:0/96", "127.0.0.0/8"]);
        assert!(translated.allows("::ffff:0:7f00:1".parse().unwrap()));
        // An address without an IPv4 inside is judged by the list alone.
        let v6 = nets(&["2001:4860::/32"]);
        assert!(v6.allows("2001:4860:4860::8888".parse().unwrap()));
        assert!(!v6.allows("2001:4861::1".parse().unwrap()));
    }

    #[test]
    fn service_urls_escape_as_table_6_1_and_refuse_what_policy_refuses() {
        let c = ArchiveClient::new(Policy::new(None), DEFAULT_PER_ARCHIVE);
        // Example 10.1's urlRequest.
        let url = c
            .service_url(
                "mtc-m16c.sid.inpe.br",
                "sid.inpe.br/mtc-m18@80/2008/03.17.15.17",
                &[
                    ("clientinformation.ipaddress", b"172.16.44.200 150.163.68.1"),
                    ("parsedibiurl.ibi", b"8JMKD3MGP8W/35MMLL8"),
                    ("servicesubject", b"urlRequest"),
                ],
            )
            .unwrap();
        assert_eq!(url, "http://mtc-m16c.sid.inpe.br/sid.inpe.br/mtc-m18@80/2008/03.17.15.17?clientinformation.ipaddress=172.16.44.200%20150.163.68.1&parsedibiurl.ibi=8JMKD3MGP8W/35MMLL8&servicesubject=urlRequest");
        assert_eq!(
            c.service_url("127.0.0.1:8080", "x/y", &[]).unwrap_err(),
            "127.0.0.1:8080 is outside the networks Archives may have"
        );
        assert!(c.service_url("[::1]:80", "x/y", &[]).is_err());
        assert_eq!(
            c.service_url("host:99999", "x/y", &[]).unwrap_err(),
            "\"host:99999\" is not a host[:port]"
        );
    }

    // -----------------------------------------------------------------------------------
    // The pool, against Archives on 127.0.0.1.

    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use tokio::sync::mpsc;

    /// What the test Archive does with a request.
    enum Reply {
        /// Writes this answer and waits for the next request.
        Answer(String),
        /// Writes this answer and closes the connection (without saying so in the answer).
        AnswerThenClose(String),
        /// Writes this answer, and closes the connection after this pause (counting it
        /// among those open until then).
        AnswerThenCloseAfter(String, Duration),
        /// Closes the connection without answering.
        Close,
    }

    /// A test Archive: a thread per connection, reading request heads and doing what
    /// `reply(n, k)` says with the `n`th request it reads (from 0, over all connections),
    /// the `k`th on its connection.
    struct TestArchive {
        address: String,
        /// Connections accepted.
        accepted: Arc<AtomicUsize>,
        /// Connections open at once, at most (counted from the accept until the resolver
        /// closes its side, or the Archive its own).
        peak: Arc<AtomicUsize>,
        /// Request heads read, in order.
        heads: Arc<Mutex<Vec<String>>>,
        /// A message each time a connection ends.
        closed: mpsc::UnboundedReceiver<()>,
    }

    fn test_archive(reply: impl Fn(usize, usize) -> Reply + Send + Sync + 'static) -> TestArchive {
        test_archive_by_head(move |n, k, _| reply(n, k))
    }

    /// [`test_archive`] whose `reply(n, k, head)` is given the request's head too.
    fn test_archive_by_head(
        reply: impl Fn(usize, usize, &str) -> Reply + Send + Sync + 'static,
    ) -> TestArchive {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let accepted = Arc::new(AtomicUsize::new(0));
        let (open, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let heads = Arc::new(Mutex::new(Vec::new()));
        let (ended, closed) = mpsc::unbounded_channel();
        let reply = Arc::new(reply);
        let (a, p, h) = (accepted.clone(), peak.clone(), heads.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                a.fetch_add(1, Ordering::SeqCst);
                let now = open.fetch_add(1, Ordering::SeqCst) + 1;
                p.fetch_max(now, Ordering::SeqCst);
                let (open, heads, ended, reply) =
                    (open.clone(), h.clone(), ended.clone(), reply.clone());
                std::thread::spawn(move || {
                    let mut stream = BufReader::new(stream);
                    for k in 0.. {
                        let mut head = String::new();
                        loop {
                            let mut line = String::new();
                            match stream.read_line(&mut line) {
                                Ok(n) if n > 0 => {}
                                _ => break,
                            }
                            head.push_str(&line);
                            if line == "\r\n" {
                                break;
                            }
                        }
                        if !head.ends_with("\r\n\r\n") {
                            break; // the resolver closed the connection
                        }
                        let n = {
                            let mut heads = heads.lock().unwrap();
                            heads.push(head.clone());
                            heads.len() - 1
                        };
                        match reply(n, k, &head) {
                            Reply::Answer(a) => {
                                if stream.get_mut().write_all(a.as_bytes()).is_err() {
                                    break;
                                }
                            }
                            Reply::AnswerThenClose(a) => {
                                let _ = stream.get_mut().write_all(a.as_bytes());
                                break;
                            }
                            Reply::AnswerThenCloseAfter(a, pause) => {
                                let _ = stream.get_mut().write_all(a.as_bytes());
                                std::thread::sleep(pause);
                                break;
                            }
                            Reply::Close => break,
                        }
                    }
                    open.fetch_sub(1, Ordering::SeqCst);
                    let _ = ended.send(());
                });
            }
        });
        TestArchive {
            address,
            accepted,
            peak,
            heads,
            closed,
        }
    }

    impl TestArchive {
        fn url(&self) -> String {
            format!("http://{}/x/y?servicesubject=urlRequest", self.address)
        }

        fn accepted(&self) -> usize {
            self.accepted.load(Ordering::SeqCst)
        }

        fn requests(&self) -> usize {
            self.heads.lock().unwrap().len()
        }
    }

    /// An answer of `status` with `body`.
    fn answer(status: &str, body: &str) -> String {
        format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    }

    fn ok(body: &str) -> String {
        answer("200 OK", body)
    }

    /// An answer of `status` with `headers` (each ending with CRLF) and no body.
    fn empty(status: &str, headers: &str) -> String {
        format!("HTTP/1.1 {status}\r\n{headers}Content-Length: 0\r\n\r\n")
    }

    fn loopback(per_archive: usize) -> ArchiveClient {
        ArchiveClient::new(
            Policy::new(Some(vec![Network::parse("127.0.0.0/8").unwrap()])),
            per_archive,
        )
    }

    const ANSWER: &str = "url http://127.0.0.1/a\r\n";
    /// Longer than any of these tests takes, unless something hangs.
    const PATIENCE: Duration = Duration::from_secs(20);

    fn is_answer(fetched: &Fetched) -> bool {
        matches!(fetched, Fetched::Body(b) if b == ANSWER)
    }

    #[tokio::test]
    async fn connections_to_one_archive_never_exceed_per_archive() {
        // 400 requests at once to an Archive that takes 5 ms over each: they queue for
        // the lane's 4 connections, and the Archive never has more than 4 open. (reqwest's
        // pool started a connection for each request that found none idle, and kept it.)
        let archive = test_archive(|_, _| {
            std::thread::sleep(Duration::from_millis(5));
            Reply::Answer(ok(ANSWER))
        });
        let client = loopback(4);
        let mut requests = tokio::task::JoinSet::new();
        for _ in 0..400 {
            let (client, url) = (client.clone(), archive.url());
            requests.spawn(async move { client.get(&url, PATIENCE).await.0 });
        }
        let mut answered = 0;
        while let Some(fetched) = requests.join_next().await {
            let fetched = fetched.unwrap();
            assert!(is_answer(&fetched), "{fetched:?}");
            answered += 1;
        }
        let peak = archive.peak.load(Ordering::SeqCst);
        eprintln!(
            "{answered} answered; {} connections, at most {peak} open at once",
            archive.accepted()
        );
        assert_eq!(answered, 400);
        assert_eq!(archive.requests(), 400);
        assert!((2..=4).contains(&peak), "{peak} open at once");
        // No connection was closed (4 are kept idle): no more were ever opened.
        assert!(archive.accepted() <= 4, "{}", archive.accepted());
    }

    #[tokio::test]
    async fn acknowledgments_never_hold_the_connections_kept_for_resolutions() {
        // Of 4 connections to an Archive, 1 is kept for resolutions. It holds every
        // acknowledgment until it is let go (a disk slow to sync) and answers urlRequests
        // at once. 10 acknowledgments, then 20 urlRequests: the acknowledgments take 3
        // connections and the others wait for those; the urlRequests go through the
        // fourth, every one answered while the acknowledgments are still held. (Sharing
        // the 4, the acknowledgments held them all and the urlRequests waited out their
        // timeout.) The Archive never has more than 4 open.
        let release = Arc::new(AtomicBool::new(false));
        let r = release.clone();
        let archive = test_archive_by_head(move |_, _, head| {
            if head.contains("servicesubject=acknowledgment") {
                while !r.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            Reply::Answer(ok(ANSWER))
        });
        let acknowledgments_heard = || {
            let heads = archive.heads.lock().unwrap();
            heads
                .iter()
                .filter(|h| h.contains("servicesubject=acknowledgment"))
                .count()
        };
        let client = loopback(4);
        assert_eq!(reserved_for_resolutions(4), 1);
        let acknowledgment = format!(
            "http://{}/x/y?servicesubject=acknowledgment",
            archive.address
        );
        let mut acknowledgments = tokio::task::JoinSet::new();
        for _ in 0..10 {
            let (client, url) = (client.clone(), acknowledgment.clone());
            acknowledgments.spawn(async move {
                client
                    .get_for(Purpose::Acknowledgment, &url, PATIENCE)
                    .await
                    .0
            });
        }
        let deadline = Instant::now() + PATIENCE;
        while acknowledgments_heard() < 3 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let mut url_requests = tokio::task::JoinSet::new();
        for _ in 0..20 {
            let (client, url) = (client.clone(), archive.url());
            url_requests.spawn(async move { client.get(&url, PATIENCE).await.0 });
        }
        while let Some(fetched) = url_requests.join_next().await {
            let fetched = fetched.unwrap();
            assert!(is_answer(&fetched), "{fetched:?}");
        }
        assert_eq!(acknowledgments_heard(), 3);
        release.store(true, Ordering::SeqCst);
        while let Some(fetched) = acknowledgments.join_next().await {
            let fetched = fetched.unwrap();
            assert!(is_answer(&fetched), "{fetched:?}");
        }
        assert_eq!(acknowledgments_heard(), 10);
        let peak = archive.peak.load(Ordering::SeqCst);
        assert!(peak <= 4, "{peak} open at once");
    }

    #[tokio::test]
    async fn an_acknowledgment_the_archive_holds_past_the_timeout_is_not_cut_off() {
        // The Archive holds every request until it is let go. 3 acknowledgments, then a
        // urlRequest with the same timeout, through the connection kept for resolutions:
        // it times out, while the acknowledgments, sent before it, are still held. Let
        // go then, each acknowledgment is answered: not cut off at the timeout while the
        // Archive still works on it (it would still count the connection the resolver
        // closed).
        let release = Arc::new(AtomicBool::new(false));
        let r = release.clone();
        let archive = test_archive(move |_, _| {
            while !r.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
            }
            Reply::Answer(ok(ANSWER))
        });
        let client = loopback(4);
        let timeout = Duration::from_millis(300);
        let url = format!(
            "http://{}/x/y?servicesubject=acknowledgment",
            archive.address
        );
        let mut held = tokio::task::JoinSet::new();
        for _ in 0..3 {
            let (client, url) = (client.clone(), url.clone());
            held.spawn(async move {
                client
                    .get_for(Purpose::Acknowledgment, &url, timeout)
                    .await
                    .0
            });
        }
        let deadline = Instant::now() + PATIENCE;
        while archive.requests() < 3 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let (fetched, _) = client.get(&archive.url(), timeout).await;
        assert!(matches!(fetched, Fetched::TimedOut), "{fetched:?}");
        release.store(true, Ordering::SeqCst);
        while let Some(fetched) = held.join_next().await {
            let fetched = fetched.unwrap();
            assert!(is_answer(&fetched), "{fetched:?}");
        }
    }

    #[tokio::test]
    async fn a_burst_keeps_its_connections_though_fewer_are_kept_idle() {
        // With 301 Archives each keeps one idle connection; a burst of 100 requests to one
        // of them still goes over the 4 connections it opened first: one a request is done
        // with goes to the next request waiting, not closed (the Archive would still count
        // it for a moment while the next request opened a new one).
        let archive = test_archive(|_, _| {
            std::thread::sleep(Duration::from_millis(5));
            Reply::Answer(ok(ANSWER))
        });
        let client = loopback(4);
        let others: Vec<String> = (0..300)
            .map(|i| format!("archive{i}.example.org"))
            .collect();
        let mut addresses: Vec<&str> = others.iter().map(String::as_str).collect();
        addresses.push(&archive.address);
        client.fit(&addresses);
        assert_eq!(client.shared.idle_kept.load(Ordering::Relaxed), 1);
        let mut requests = tokio::task::JoinSet::new();
        for _ in 0..100 {
            let (client, url) = (client.clone(), archive.url());
            requests.spawn(async move { client.get(&url, PATIENCE).await.0 });
        }
        while let Some(fetched) = requests.join_next().await {
            let fetched = fetched.unwrap();
            assert!(is_answer(&fetched), "{fetched:?}");
        }
        assert_eq!(archive.requests(), 100);
        assert_eq!(archive.accepted(), 4);
    }

    #[tokio::test]
    async fn sequential_requests_reuse_one_connection() {
        let archive = test_archive(|_, _| Reply::Answer(ok(ANSWER)));
        let client = loopback(DEFAULT_PER_ARCHIVE);
        for i in 0..50 {
            let (fetched, _) = client.get(&archive.url(), PATIENCE).await;
            assert!(is_answer(&fetched), "{i}: {fetched:?}");
        }
        assert_eq!((archive.requests(), archive.accepted()), (50, 1));
    }

    #[tokio::test]
    async fn a_connection_the_archive_closed_after_answering_is_not_a_failure() {
        // The Archive closes each connection right after its answer, which does not say
        // so: the next request finds it closed (or sends on it as it closes, and is sent
        // again on a new one).
        let archive = test_archive(|_, _| Reply::AnswerThenClose(ok(ANSWER)));
        let client = loopback(DEFAULT_PER_ARCHIVE);
        for i in 0..20 {
            let (fetched, _) = client.get(&archive.url(), PATIENCE).await;
            assert!(is_answer(&fetched), "{i}: {fetched:?}");
        }
        assert_eq!((archive.requests(), archive.accepted()), (20, 20));
    }

    #[tokio::test]
    async fn a_connection_counts_until_the_archive_has_closed_it_too() {
        // The Archive closes each connection 50 ms after its answer, which says so (as
        // `ibi-archive serve` does after its 100th answer on a connection), and counts it
        // among those open until then: the next connection waits for it to be closed, and
        // the Archive never counts more than 2 open at once.
        let closing = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 24\r\n\r\nurl http://127.0.0.1/a\r\n";
        let archive = test_archive(move |_, _| {
            Reply::AnswerThenCloseAfter(closing.into(), Duration::from_millis(50))
        });
        let client = loopback(2);
        let mut requests = tokio::task::JoinSet::new();
        for _ in 0..20 {
            let (client, url) = (client.clone(), archive.url());
            requests.spawn(async move { client.get(&url, PATIENCE).await.0 });
        }
        while let Some(fetched) = requests.join_next().await {
            let fetched = fetched.unwrap();
            assert!(is_answer(&fetched), "{fetched:?}");
        }
        assert_eq!((archive.requests(), archive.accepted()), (20, 20));
        let peak = archive.peak.load(Ordering::SeqCst);
        assert!(peak <= 2, "{peak} open at once");
    }

    #[tokio::test]
    async fn a_reused_connection_closed_unanswered_is_tried_again_once_on_a_new_one() {
        // The second request on each connection is read and not answered: the second
        // get, sent on the connection of the first, goes again on a new connection.
        let archive = test_archive(|_, k| match k {
            0 => Reply::Answer(ok(ANSWER)),
            _ => Reply::Close,
        });
        let client = loopback(DEFAULT_PER_ARCHIVE);
        for i in 0..2 {
            let (fetched, _) = client.get(&archive.url(), PATIENCE).await;
            assert!(is_answer(&fetched), "{i}: {fetched:?}");
        }
        assert_eq!((archive.requests(), archive.accepted()), (3, 2));
    }

    #[tokio::test]
    async fn a_new_connection_closed_unanswered_is_the_archives_failure() {
        let archive = test_archive(|_, _| Reply::Close);
        let client = loopback(DEFAULT_PER_ARCHIVE);
        let (fetched, _) = client.get(&archive.url(), PATIENCE).await;
        assert!(
            matches!(&fetched, Fetched::Failed(why) if why == "request failed: connection closed before message completed"),
            "{fetched:?}"
        );
        assert_eq!((archive.requests(), archive.accepted()), (1, 1));
    }

    #[tokio::test]
    async fn an_idle_connection_is_closed_after_4_seconds() {
        let mut archive = test_archive(|_, _| Reply::Answer(ok(ANSWER)));
        let client = loopback(DEFAULT_PER_ARCHIVE);
        let (fetched, _) = client.get(&archive.url(), PATIENCE).await;
        assert!(is_answer(&fetched), "{fetched:?}");
        let answered = Instant::now();
        tokio::time::timeout(PATIENCE, archive.closed.recv())
            .await
            .expect("the idle connection is still open")
            .unwrap();
        // Swept once it is 4 s old (by the sweep of the second after: not sooner).
        let idle = answered.elapsed();
        assert!(idle >= IDLE_REUSE, "{idle:?}");
        assert_eq!(archive.accepted(), 1);
    }

    #[tokio::test]
    async fn an_archive_overloaded_for_a_moment_is_asked_again() {
        for status in ["503 Service Unavailable", "429 Too Many Requests"] {
            let archive = test_archive(move |n, _| match n {
                0 | 1 => Reply::Answer(empty(status, "")),
                _ => Reply::Answer(ok(ANSWER)),
            });
            let (fetched, _) = loopback(DEFAULT_PER_ARCHIVE)
                .get(&archive.url(), PATIENCE)
                .await;
            assert!(is_answer(&fetched), "{status}: {fetched:?}");
            assert_eq!(archive.requests(), 3, "{status}");
        }
    }

    #[tokio::test]
    async fn a_short_overloaded_answer_is_read_and_its_connection_used_again() {
        // A 503 with a few words: read to its end, so the next try goes on the same
        // connection rather than a new one the Archive would count among this client's.
        let archive = test_archive(|n, _| match n {
            0 | 1 => Reply::Answer(
                "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 11\r\n\r\ntoo busy.\r\n"
                    .into(),
            ),
            _ => Reply::Answer(ok(ANSWER)),
        });
        let (fetched, _) = loopback(DEFAULT_PER_ARCHIVE)
            .get(&archive.url(), PATIENCE)
            .await;
        assert!(is_answer(&fetched), "{fetched:?}");
        assert_eq!(
            (archive.requests(), archive.accepted.load(Ordering::SeqCst)),
            (3, 1)
        );
    }

    #[tokio::test]
    async fn an_archive_overloaded_until_the_timeout_is_overloaded_not_failed() {
        // Asked at 0, 20, 60 and 140 ms (pauses of 20, 40 and 80 ms); the next pause
        // (160 ms) reaches the timeout (300 ms). A Retry-After longer than the time left
        // changes nothing.
        for (status, headers) in [
            ("503 Service Unavailable", ""),
            ("429 Too Many Requests", ""),
            ("503 Service Unavailable", "Retry-After: 1\r\n"),
        ] {
            let archive = test_archive(move |_, _| Reply::Answer(empty(status, headers)));
            let client = loopback(DEFAULT_PER_ARCHIVE);
            let (fetched, took) = client.get(&archive.url(), Duration::from_millis(300)).await;
            assert!(
                matches!(&fetched, Fetched::Overloaded(why) if *why == format!("answered {status}")),
                "{status}: {fetched:?}"
            );
            // Not given up before the timeout; and no more tries than the pauses allow
            // (at 0, 20, 60 and 140 ms at best: fewer on a slow machine).
            assert!(
                took >= Duration::from_millis(300),
                "{status} {headers:?}: {took:?}"
            );
            assert!(
                (1..=4).contains(&archive.requests()),
                "{status} {headers:?}: {}",
                archive.requests()
            );
        }
    }

    #[tokio::test]
    async fn a_retry_after_shorter_than_the_time_left_is_waited() {
        let archive = test_archive(|n, _| match n {
            0 => Reply::Answer(empty("503 Service Unavailable", "Retry-After: 1\r\n")),
            _ => Reply::Answer(ok(ANSWER)),
        });
        let client = loopback(DEFAULT_PER_ARCHIVE);
        let (fetched, took) = client.get(&archive.url(), Duration::from_secs(3)).await;
        assert!(is_answer(&fetched), "{fetched:?}");
        assert!(took >= Duration::from_secs(1), "{took:?}");
        assert_eq!(archive.requests(), 2);
    }

    #[tokio::test]
    async fn requests_say_host_user_agent_and_via() {
        let archive = test_archive(|_, _| Reply::Answer(ok(ANSWER)));
        let (fetched, _) = loopback(DEFAULT_PER_ARCHIVE)
            .get(&archive.url(), PATIENCE)
            .await;
        assert!(is_answer(&fetched), "{fetched:?}");
        let head = archive.heads.lock().unwrap()[0].to_ascii_lowercase();
        let lines: Vec<&str> = head.split("\r\n").collect();
        assert_eq!(lines[0], "get /x/y?servicesubject=urlrequest http/1.1");
        for line in [
            format!("host: {}", archive.address),
            format!("user-agent: ibi-resolver/{}", env!("CARGO_PKG_VERSION")),
            "via: 1.1 ibi-resolver".to_string(),
        ] {
            assert!(lines.contains(&line.as_str()), "{line:?} in {head:?}");
        }
    }

    #[tokio::test]
    async fn a_confirmation_tells_an_archive_from_a_resolver() {
        let archive = test_archive(|n, _| match n {
            0 => Reply::Answer(answer(
                "400 Bad Request",
                "ibi.resolverservice {ibip J8LNKB5R7W/3FUQHC5}\r\n",
            )),
            1 => Reply::Answer(ok("confirmation yes\r\n")),
            2 => Reply::Answer(ok("")),
            _ => Reply::Answer(ok("resolveraddress mtc-m21.sid.inpe.br\r\n")),
        });
        let client = loopback(DEFAULT_PER_ARCHIVE);
        let confirm = || client.confirm(&archive.address, "x/y", PATIENCE);
        assert_eq!(confirm().await, Confirmation::AsResolver);
        assert_eq!(confirm().await, Confirmation::Yes);
        assert_eq!(confirm().await, Confirmation::No);
        assert_eq!(confirm().await, Confirmation::AsResolver);
        assert!(archive.heads.lock().unwrap()[0]
            .starts_with("GET /x/y?servicesubject=inclusionConfirmationRequest HTTP/1.1\r\n"));
    }

    #[tokio::test]
    async fn a_get_takes_no_answer_but_200() {
        let archive = test_archive(|n, _| match n {
            0 => Reply::Answer(empty("400 Bad Request", "")),
            _ => Reply::Answer(empty("302 Found", "Location: http://127.0.0.1/\r\n")),
        });
        let client = loopback(DEFAULT_PER_ARCHIVE);
        for expected in [
            "answered 400 Bad Request",
            "answered 302 Found (redirects are not followed)",
        ] {
            let (fetched, _) = client.get(&archive.url(), PATIENCE).await;
            assert!(
                matches!(&fetched, Fetched::Failed(why) if why == expected),
                "{fetched:?}"
            );
        }
    }
}
