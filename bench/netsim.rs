//! The IBI network at scale, for `bench/network.sh`: N fake Archives in one process, each on
//! its own port of 127.0.0.1 speaking the Archive protocol, and the readers that ask a
//! resolver for a Zipf-distributed mix of persistent URLs and check every answer against
//! what the simulation knows (never against what the resolver said before).
//!
//! ```text
//! netsim --resolver HOST:PORT --listed FILE --go FILE --out FILE [--archives 100]
//!        [--items 300] [--connections 16] [--duration 60] [--requests 0]
//!        [--timeout-ms 2000] [--flap-ms 3000] [--zipf 1.0] [--seed 1]
//! ```
//!
//! 1. Binds every Archive on a port below the system's ephemeral range (a flapping
//!    Archive's port, free while it is down, is then not taken as the local port of an
//!    outgoing connection), writes `SERVICEIBI 127.0.0.1:PORT ROLE` a line into --listed,
//!    and prints `ready`.
//! 2. Waits for the file --go to exist: meanwhile the script registers and includes every
//!    Archive (each answers `inclusionConfirmationRequest` with `confirmation yes`).
//! 3. Closes the down Archives (listener and open connections: connections are refused),
//!    starts the flapping ones (closed and reopened on the same port every --flap-ms), and
//!    runs --connections readers back to back for --duration seconds (or --requests).
//! 4. Waits the resolver's timeout and one second more, so that the requests still under
//!    way for the last resolutions arrive, then writes the report's body (markdown) into
//!    --out and exits.
//!
//! Each Archive k has its own prefix: service IBI `archives.test/aKKK/2020/01.01.00.00`,
//! items `archives.test/aKKK/2021/…` (the resolver's "home" of an IBI is the included
//! Archive whose service IBI codes the same host). Every reader request carries
//! `X-Forwarded-For: 10.a.b.c`, its sequence number: the resolver, trusting 127.0.0.1 as a
//! proxy, passes it on as `clientinformation.ipaddress` in every urlRequest and
//! acknowledgment it sends for that resolution, so each request an Archive receives is
//! counted against the resolution that caused it (background requests included).

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::fmt::Write as _;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HOST, LOCATION};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::watch;

const USAGE: &str = "usage: netsim --resolver HOST:PORT --listed FILE --go FILE --out FILE \
[--archives 100] [--items 300] [--connections 16] [--duration 60] [--requests 0] \
[--timeout-ms 2000] [--flap-ms 3000] [--zipf 1.0] [--seed 1]";

/// Resolutions a run may make: each has a slot of request counters.
const MAX_SEQ: usize = 1 << 22;
/// The misbehaving Archives of every network; the others are healthy.
const DOWN: usize = 5;
const FLAPPING: usize = 2;
/// The fewest Archives: the misbehaving ones (5 + 2 + hostile + slow) and three healthy.
const MIN_ARCHIVES: usize = DOWN + FLAPPING + 2 + 3;
/// IBIs nobody holds, per prefix, and prefixes of no Archive.
const UNKNOWN_PER_PREFIX: usize = 20;
const NO_HOME_PREFIXES: usize = 50;
/// The file path asked of held items, which no Archive holds.
const MISSING_PATH: &str = "/nonexistent.pdf";
/// Wrong answers shown per class and per kind of answer.
const EXAMPLES: usize = 2;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    Healthy,
    /// Included, then closed for the whole run.
    Down,
    /// Closed and reopened every --flap-ms.
    Flapping,
    /// Claims the Original of every IBI and file path, with a URL of its own.
    Hostile,
    /// Answers every urlRequest right, after 0.8 × the resolver's timeout.
    Slow,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Role::Healthy => "healthy",
            Role::Down => "down",
            Role::Flapping => "flapping",
            Role::Hostile => "hostile",
            Role::Slow => "slow",
        }
    }
}

struct Archive {
    role: Role,
    /// The word of its prefix, `aKKK`.
    word: String,
    service: String,
    port: u16,
    /// Whether it listens: watched by its listener and by every connection it accepted.
    up: watch::Sender<bool>,
    url_requests: AtomicU64,
    acknowledgments: AtomicU64,
}

impl Archive {
    fn is_up(&self) -> bool {
        *self.up.borrow()
    }
    fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kept {
    Original,
    Deleted,
}

/// An item some Archive holds (`holder`), minted at the prefix of its home (the same
/// Archive, or another for a moved item).
struct Item {
    rep: String,
    holder: usize,
    kept: Kept,
}

/// The kinds of persistent URL the readers ask, each with its expected answer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    Held,
    HeldAtSlow,
    HeldAtDown,
    HeldAtFlapping,
    Moved,
    MovedDownHome,
    UnknownLiveHome,
    UnknownDownHome,
    UnknownNoHome,
    Tombstone,
    Path,
}

const CLASSES: [Class; 11] = [
    Class::Held,
    Class::HeldAtSlow,
    Class::HeldAtDown,
    Class::HeldAtFlapping,
    Class::Moved,
    Class::MovedDownHome,
    Class::UnknownLiveHome,
    Class::UnknownDownHome,
    Class::UnknownNoHome,
    Class::Tombstone,
    Class::Path,
];

impl Class {
    fn name(self) -> &'static str {
        match self {
            Class::Held => "held",
            Class::HeldAtSlow => "held-at-slow",
            Class::HeldAtDown => "held-at-down",
            Class::HeldAtFlapping => "held-at-flapping",
            Class::Moved => "moved",
            Class::MovedDownHome => "moved-down-home",
            Class::UnknownLiveHome => "unknown-live-home",
            Class::UnknownDownHome => "unknown-down-home",
            Class::UnknownNoHome => "unknown-no-home",
            Class::Tombstone => "tombstone",
            Class::Path => "path",
        }
    }

    /// Its share of the readers' requests, in per cent.
    fn weight(self) -> u32 {
        match self {
            Class::Held => 40,
            Class::HeldAtSlow => 3,
            Class::HeldAtDown => 4,
            Class::HeldAtFlapping => 4,
            Class::Moved => 9,
            Class::MovedDownHome => 3,
            Class::UnknownLiveHome => 10,
            Class::UnknownDownHome => 3,
            Class::UnknownNoHome => 6,
            Class::Tombstone => 6,
            Class::Path => 12,
        }
    }

    fn expected(self) -> Expect {
        match self {
            Class::Held | Class::HeldAtSlow | Class::Moved | Class::MovedDownHome => {
                Expect::Redirect
            }
            Class::HeldAtDown | Class::UnknownDownHome => Expect::Unavailable,
            Class::HeldAtFlapping => Expect::RedirectOrUnavailable,
            Class::UnknownLiveHome | Class::UnknownNoHome | Class::Path => Expect::NotFound,
            Class::Tombstone => Expect::Gone,
        }
    }

    fn expected_text(self) -> &'static str {
        match self {
            Class::Held | Class::HeldAtSlow | Class::MovedDownHome => "302 → holder",
            Class::Moved => "302 → holder (not its home)",
            Class::HeldAtDown | Class::UnknownDownHome => "503",
            Class::HeldAtFlapping => "302 → holder, or 503",
            Class::UnknownLiveHome | Class::UnknownNoHome | Class::Path => "404",
            Class::Tombstone => "410",
        }
    }

    /// The targets of Archive requests per resolution: (first ask, asked before).
    fn targets(self) -> (Option<f64>, Option<f64>) {
        match self {
            Class::Held | Class::HeldAtSlow => (Some(2.0), Some(1.1)),
            Class::Tombstone => (Some(2.0), None),
            _ => (None, None),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    Redirect,
    RedirectOrUnavailable,
    NotFound,
    Gone,
    Unavailable,
}

/// One persistent URL the readers may ask.
struct Target {
    /// `/IBI[/path]`.
    path: String,
    /// The Archive whose prefix the IBI has, if any.
    home: Option<usize>,
    /// The Archive holding its Original, and the URL of a redirect to it.
    holder: Option<usize>,
    url: Option<String>,
}

/// What a reader got, as the tables count it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Got {
    ToHolder,
    ToHostile,
    ToOther,
    NotFound,
    Gone,
    Unavailable,
    Throttled,
    Other(u16),
    Error,
}

impl Got {
    fn column(self) -> usize {
        match self {
            Got::ToHolder => 0,
            Got::ToHostile => 1,
            Got::ToOther => 2,
            Got::NotFound => 3,
            Got::Gone => 4,
            Got::Unavailable => 5,
            Got::Throttled => 6,
            Got::Other(_) => 7,
            Got::Error => 8,
        }
    }
}
const GOT_COLUMNS: [&str; 9] = [
    "302 → holder",
    "302 → hostile",
    "302 elsewhere",
    "404",
    "410",
    "503",
    "429",
    "other status",
    "socket error",
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Right,
    /// A redirect to the hostile Archive for an IBI whose home was down and that had not
    /// been answered while its holder was up (so not remembered): the standard's
    /// first-answer rule.
    HostileHomeDown,
    Wrong,
}

/// One resolution as a reader saw it.
struct Rec {
    seq: u32,
    class: usize,
    target: u32,
    /// No earlier request for the same URL had been answered when it was sent.
    first: bool,
    got: Got,
    verdict: Verdict,
    micros: u64,
    /// A flapping home: whether it was up when the request was sent.
    home_up: Option<bool>,
    /// For a wrong answer: the Location, or the error.
    detail: Option<String>,
}

struct Sim {
    archives: Vec<Archive>,
    items: Vec<Item>,
    by_rep: HashMap<String, usize>,
    hostile: usize,
    slow_delay: Duration,
    /// Per reader sequence number: the urlRequests and acknowledgments Archives received.
    url_by_seq: Vec<AtomicU16>,
    ack_by_seq: Vec<AtomicU16>,
    /// Requests that carried no reader's number (none expected).
    unattributed: AtomicU64,
    other_requests: AtomicU64,
}

/// splitmix64: the same seed, the same network and the same sequence of requests per
/// reader (what the resolver does to them varies).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }
}

struct Options {
    resolver: String,
    listed: PathBuf,
    go: PathBuf,
    out: PathBuf,
    archives: usize,
    items: usize,
    connections: usize,
    duration: u64,
    requests: u64,
    timeout: Duration,
    flap: Duration,
    zipf: f64,
    seed: u64,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        resolver: String::new(),
        listed: PathBuf::new(),
        go: PathBuf::new(),
        out: PathBuf::new(),
        archives: 100,
        items: 300,
        connections: 16,
        duration: 60,
        requests: 0,
        timeout: Duration::from_secs(2),
        flap: Duration::from_secs(3),
        zipf: 1.0,
        seed: 1,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().ok_or_else(|| format!("{arg} takes a value"))?;
        let number = |v: &str| {
            v.parse::<u64>()
                .map_err(|_| format!("{arg}: not a number: {v}"))
        };
        match arg.as_str() {
            "--resolver" => o.resolver = value,
            "--listed" => o.listed = value.into(),
            "--go" => o.go = value.into(),
            "--out" => o.out = value.into(),
            "--archives" => o.archives = number(&value)? as usize,
            "--items" => o.items = number(&value)? as usize,
            "--connections" => o.connections = number(&value)? as usize,
            "--duration" => o.duration = number(&value)?,
            "--requests" => o.requests = number(&value)?,
            "--timeout-ms" => o.timeout = Duration::from_millis(number(&value)?),
            "--flap-ms" => o.flap = Duration::from_millis(number(&value)?),
            "--seed" => o.seed = number(&value)?,
            "--zipf" => {
                o.zipf = value
                    .parse()
                    .map_err(|_| format!("--zipf: not a number: {value}"))?
            }
            _ => return Err(format!("unexpected argument {arg:?}")),
        }
    }
    if o.resolver.is_empty() || o.listed.as_os_str().is_empty() || o.go.as_os_str().is_empty() {
        return Err("--resolver, --listed and --go are needed".into());
    }
    if o.out.as_os_str().is_empty() {
        return Err("--out is needed".into());
    }
    if o.archives < MIN_ARCHIVES || o.archives > 999 {
        return Err(format!("--archives takes {MIN_ARCHIVES} to 999"));
    }
    if o.items < 10 || o.items > 400_000 {
        return Err("--items takes 10 to 400000".into());
    }
    if o.connections == 0 || o.timeout.is_zero() || o.flap.is_zero() {
        return Err("--connections, --timeout-ms and --flap-ms take numbers above 0".into());
    }
    Ok(o)
}

/// The suffix of the n-th minute of `year` (minutes from 1 January, 28-day months):
/// unique for n below 12 × 28 × 1440.
fn suffix(year: u32, n: usize) -> String {
    let (month, day) = (1 + n / 40_320, 1 + n / 1440 % 28);
    format!(
        "{year}/{month:02}.{day:02}.{:02}.{:02}",
        n / 60 % 24,
        n % 60
    )
}

fn item_url(port: u16, rep: &str, file: &str) -> String {
    format!("http://127.0.0.1:{port}/col/{rep}/doc/{file}")
}

/// A listening socket on 127.0.0.1:port, SO_REUSEADDR set: a flapping Archive reopens its
/// port while the connections it closed are in TIME_WAIT.
fn bind(port: u16) -> std::io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind((Ipv4Addr::LOCALHOST, port).into())?;
    socket.listen(1024)
}

/// `count` listeners on consecutive free ports below the ephemeral range, from a place
/// the seed picks.
fn listeners(count: usize, rng: &mut Rng) -> Result<Vec<TcpListener>, String> {
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u32>().ok())
        .unwrap_or(32768);
    let (floor, ceiling) = (10_000u32, low.min(65_535));
    if ceiling < floor + count as u32 * 4 {
        return Err(format!(
            "the ephemeral ports start at {low}: too few ports below them"
        ));
    }
    let span = (ceiling - floor) as usize;
    let mut port = floor + rng.below(span - count * 3) as u32;
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        if port >= ceiling {
            return Err("no free ports left below the ephemeral range".into());
        }
        if let Ok(l) = bind(port as u16) {
            out.push(l);
        }
        port += 1;
    }
    Ok(out)
}

/// The network: roles, items, and what the readers ask (per class, in a shuffled order
/// that Zipf's ranks follow).
fn build(o: &Options, rng: &mut Rng, ports: &[u16]) -> (Sim, Vec<Vec<Target>>) {
    let n = o.archives;
    let mut order: Vec<usize> = (0..n).collect();
    rng.shuffle(&mut order);
    let mut roles = vec![Role::Healthy; n];
    for (i, &k) in order.iter().enumerate() {
        roles[k] = match i {
            i if i < DOWN => Role::Down,
            i if i < DOWN + FLAPPING => Role::Flapping,
            i if i == DOWN + FLAPPING => Role::Hostile,
            i if i == DOWN + FLAPPING + 1 => Role::Slow,
            _ => Role::Healthy,
        };
    }
    let archives: Vec<Archive> = (0..n)
        .map(|k| {
            let word = format!("a{k:03}");
            Archive {
                role: roles[k],
                service: format!("archives.test/{word}/2020/01.01.00.00"),
                word,
                port: ports[k],
                up: watch::Sender::new(true),
                url_requests: AtomicU64::new(0),
                acknowledgments: AtomicU64::new(0),
            }
        })
        .collect();
    let healthy: Vec<usize> = (0..n).filter(|&k| roles[k] == Role::Healthy).collect();
    let hostile = (0..n).find(|&k| roles[k] == Role::Hostile).unwrap_or(0);

    let mut items = Vec::new();
    let mut targets: Vec<Vec<Target>> = CLASSES.iter().map(|_| Vec::new()).collect();
    let class_index = |c: Class| CLASSES.iter().position(|&x| x == c).unwrap_or(0);
    for (k, a) in archives.iter().enumerate() {
        if a.role == Role::Hostile {
            continue;
        }
        for j in 0..o.items {
            let rep = format!("archives.test/{}/{}", a.word, suffix(2021, j));
            let roll = rng.below(100);
            let (holder, kept) = match a.role {
                Role::Healthy if roll < 3 => (k, Kept::Deleted),
                Role::Healthy if roll < 11 => {
                    let mut b = healthy[rng.below(healthy.len())];
                    while b == k {
                        b = healthy[rng.below(healthy.len())];
                    }
                    (b, Kept::Original)
                }
                Role::Down if roll < 20 => (healthy[rng.below(healthy.len())], Kept::Original),
                _ => (k, Kept::Original),
            };
            let class = match (a.role, kept, holder == k) {
                (_, Kept::Deleted, _) => Class::Tombstone,
                (Role::Healthy, _, true) => Class::Held,
                (Role::Healthy, _, false) => Class::Moved,
                (Role::Down, _, true) => Class::HeldAtDown,
                (Role::Down, _, false) => Class::MovedDownHome,
                (Role::Flapping, _, _) => Class::HeldAtFlapping,
                _ => Class::HeldAtSlow,
            };
            let url = item_url(archives[holder].port, &rep, "file.pdf");
            if class == Class::Held {
                targets[class_index(Class::Path)].push(Target {
                    path: format!("/{rep}{MISSING_PATH}"),
                    home: Some(k),
                    holder: Some(holder),
                    url: None,
                });
            }
            targets[class_index(class)].push(Target {
                path: format!("/{rep}"),
                home: Some(k),
                holder: (kept == Kept::Original).then_some(holder),
                url: (kept == Kept::Original).then_some(url),
            });
            items.push(Item { rep, holder, kept });
        }
        let unknown = match a.role {
            Role::Healthy => Some(Class::UnknownLiveHome),
            Role::Down => Some(Class::UnknownDownHome),
            _ => None,
        };
        if let Some(class) = unknown {
            for j in 0..UNKNOWN_PER_PREFIX {
                targets[class_index(class)].push(Target {
                    path: format!("/archives.test/{}/{}", a.word, suffix(2022, j)),
                    home: Some(k),
                    holder: None,
                    url: None,
                });
            }
        }
    }
    for p in 0..NO_HOME_PREFIXES {
        // Words no Archive has, in this subdomain and in another.
        let prefix = if p % 2 == 0 {
            format!("archives.test/z{p:03}")
        } else {
            format!("nowhere.test/a{p:03}")
        };
        for j in 0..UNKNOWN_PER_PREFIX {
            targets[class_index(Class::UnknownNoHome)].push(Target {
                path: format!("/{prefix}/{}", suffix(2021, j)),
                home: None,
                holder: None,
                url: None,
            });
        }
    }
    for t in &mut targets {
        rng.shuffle(t);
    }
    let by_rep = items
        .iter()
        .enumerate()
        .map(|(i, it)| (it.rep.clone(), i))
        .collect();
    let sim = Sim {
        archives,
        items,
        by_rep,
        hostile,
        slow_delay: o.timeout.mul_f64(0.8),
        url_by_seq: (0..MAX_SEQ).map(|_| AtomicU16::new(0)).collect(),
        ack_by_seq: (0..MAX_SEQ).map(|_| AtomicU16::new(0)).collect(),
        unattributed: AtomicU64::new(0),
        other_requests: AtomicU64::new(0),
    };
    (sim, targets)
}

/// Every IBI is a valid rep, and its home is the one Archive whose service IBI codes the
/// same host (what the resolver's home rule reads), or none for the homeless.
fn check(sim: &Sim, targets: &[Vec<Target>]) -> Result<(), String> {
    let mut hosts: HashMap<String, usize> = HashMap::new();
    for (k, a) in sim.archives.iter().enumerate() {
        let rep = ibi::Rep::parse(&a.service).map_err(|e| e.to_string())?;
        hosts.insert(rep.host(), k);
    }
    for t in targets.iter().flatten() {
        let ibi = t.path[1..].trim_end_matches(MISSING_PATH);
        let rep = ibi::Rep::parse(ibi).map_err(|e| e.to_string())?;
        if hosts.get(&rep.host()).copied() != t.home {
            return Err(format!("{ibi}: its home is not the Archive meant"));
        }
    }
    Ok(())
}

// --- the Archives ---------------------------------------------------------------------

fn decode(v: &str) -> String {
    let v = v.replace('+', " ");
    percent_encoding::percent_decode_str(&v)
        .decode_utf8_lossy()
        .into_owned()
}

/// The reader's sequence number in `clientinformation.ipaddress` (`10.a.b.c …`).
fn seq_of(ips: &str) -> Option<usize> {
    let ip: Ipv4Addr = ips.split(' ').next()?.parse().ok()?;
    let [ten, a, b, c] = ip.octets();
    (ten == 10).then_some((a as usize) << 16 | (b as usize) << 8 | c as usize)
}

fn count(slots: &[AtomicU16], seq: Option<usize>, unattributed: &AtomicU64) {
    match seq.and_then(|s| slots.get(s)) {
        Some(slot) => {
            slot.fetch_add(1, Ordering::Relaxed);
        }
        None => {
            unattributed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A pair list as Archives write it: sorted by name (the callers give them so), CRLF
/// between lines.
fn pairs(list: &[(&str, &str)]) -> String {
    let lines: Vec<String> = list.iter().map(|(n, v)| format!("{n} {v}")).collect();
    lines.join("\r\n")
}

const TIMESTAMP: &str = "2021-06-01T00:00:00Z";

/// Archive k's answer to a urlRequest for `ibi` (and `filepath`).
fn url_answer(sim: &Sim, k: usize, ibi: &str, filepath: Option<&str>) -> String {
    let a = &sim.archives[k];
    let address = a.address();
    let service = format!("{{rep {}}}", a.service);
    if a.role == Role::Hostile {
        let file = filepath.map_or("file.pdf", |p| p.trim_start_matches('/'));
        return pairs(&[
            ("archiveaddress", &address),
            ("contenttype", "Data"),
            ("ibi", &format!("{{rep {ibi}}}")),
            ("ibi.archiveservice", &service),
            ("ibi.platformsoftware", "{}"),
            ("state", "Original"),
            ("timestamp", TIMESTAMP),
            ("url", &item_url(a.port, ibi, file)),
            ("urlkey", "1234567890-6666666666"),
        ]);
    }
    let Some(&i) = sim.by_rep.get(ibi) else {
        return String::new();
    };
    let item = &sim.items[i];
    if item.holder != k {
        return String::new();
    }
    let id = format!("{{rep {}}}", item.rep);
    match (item.kept, filepath) {
        (Kept::Deleted, _) => pairs(&[
            ("archiveaddress", &address),
            ("ibi", &id),
            ("ibi.archiveservice", &service),
            ("ibi.platformsoftware", "{}"),
            ("state", "Deleted"),
            ("timestamp", TIMESTAMP),
        ]),
        // The item is here, not the file asked for: who it is, and no URL.
        (Kept::Original, Some(path)) if path != "/file.pdf" => pairs(&[
            ("archiveaddress", &address),
            ("ibi", &id),
            ("ibi.archiveservice", &service),
            ("ibi.platformsoftware", "{}"),
            ("state", "Original"),
        ]),
        (Kept::Original, _) => pairs(&[
            ("archiveaddress", &address),
            ("contenttype", "Data"),
            ("ibi", &id),
            ("ibi.archiveservice", &service),
            ("ibi.platformsoftware", "{}"),
            ("state", "Original"),
            ("timestamp", TIMESTAMP),
            ("url", &item_url(a.port, &item.rep, "file.pdf")),
            ("urlkey", &format!("1234567890-{i:010}")),
        ]),
    }
}

async fn answer(sim: &Sim, k: usize, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let query = req.uri().query().unwrap_or("");
    let (mut subject, mut ibi, mut filepath, mut ips) = (None, None, None, None);
    for pair in query.split('&') {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        match name {
            "servicesubject" => subject = Some(decode(value)),
            "parsedibiurl.ibi" => ibi = Some(decode(value)),
            "parsedibiurl.filepath" => filepath = Some(decode(value)),
            "clientinformation.ipaddress" => ips = Some(decode(value)),
            _ => {}
        }
    }
    let seq = ips.as_deref().and_then(seq_of);
    let a = &sim.archives[k];
    let body = match subject.as_deref() {
        Some("urlRequest") => {
            a.url_requests.fetch_add(1, Ordering::Relaxed);
            count(&sim.url_by_seq, seq, &sim.unattributed);
            if a.role == Role::Slow {
                tokio::time::sleep(sim.slow_delay).await;
            }
            url_answer(sim, k, ibi.as_deref().unwrap_or(""), filepath.as_deref())
        }
        Some("acknowledgment") => {
            a.acknowledgments.fetch_add(1, Ordering::Relaxed);
            count(&sim.ack_by_seq, seq, &sim.unattributed);
            "notice {acknowledgment received}".to_string()
        }
        Some("inclusionConfirmationRequest") => "confirmation yes".to_string(),
        _ => {
            sim.other_requests.fetch_add(1, Ordering::Relaxed);
            String::new()
        }
    };
    let mut r = Response::new(Full::new(Bytes::from(body)));
    r.headers_mut()
        .insert(CONTENT_TYPE, "text/plain".parse().expect("a header value"));
    r
}

/// Until the Archive's state is `want`.
async fn until(rx: &mut watch::Receiver<bool>, want: bool) {
    loop {
        if *rx.borrow_and_update() == want {
            return;
        }
        if rx.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Archive k: accepts while up; going down closes its listener and every connection it
/// accepted (so that the resolver meets refusals, not a half-open server); coming up
/// opens the same port again.
async fn serve_archive(sim: Arc<Sim>, k: usize, first: TcpListener) {
    let port = sim.archives[k].port;
    let mut up = sim.archives[k].up.subscribe();
    let mut listener = Some(first);
    loop {
        let l = match listener.take() {
            Some(l) => l,
            None => {
                until(&mut up, true).await;
                reopen(port).await
            }
        };
        loop {
            tokio::select! {
                accepted = l.accept() => {
                    if let Ok((stream, _)) = accepted {
                        tokio::spawn(serve_connection(sim.clone(), k, stream));
                    }
                }
                _ = until(&mut up, false) => break,
            }
        }
        drop(l);
    }
}

async fn reopen(port: u16) -> TcpListener {
    let mut tries = 0u32;
    loop {
        match bind(port) {
            Ok(l) => return l,
            Err(e) => {
                tries += 1;
                if tries == 20 {
                    eprintln!("netsim: port {port} cannot be opened again yet: {e}");
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

async fn serve_connection(sim: Arc<Sim>, k: usize, stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let mut up = sim.archives[k].up.subscribe();
    let service = hyper::service::service_fn(move |req| {
        let sim = sim.clone();
        async move { Ok::<_, Infallible>(answer(&sim, k, req).await) }
    });
    let connection =
        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        _ = connection => {}
        _ = until(&mut up, false) => {}
    }
}

/// A flapping Archive: up for `period`, down for `period`, …, from `phase` on.
async fn flap(sim: Arc<Sim>, k: usize, period: Duration, phase: Duration) {
    tokio::time::sleep(phase).await;
    loop {
        sim.archives[k].up.send_replace(false);
        tokio::time::sleep(period).await;
        sim.archives[k].up.send_replace(true);
        tokio::time::sleep(period).await;
    }
}

// --- the readers ----------------------------------------------------------------------

/// What the readers share.
struct Plan {
    resolver: String,
    targets: Vec<Vec<Target>>,
    /// Per class, Zipf's cumulative weights over its targets.
    zipf: Vec<Vec<f64>>,
    /// Per class and target: whether a request for it has been answered.
    answered: Vec<Vec<AtomicBool>>,
    /// Per class and target: whether a request for it was answered while its holder was
    /// up, so that a resolver could have remembered where it is. Never for an IBI nobody
    /// holds, nor for one whose holder has been down all along.
    rememberable: Vec<Vec<AtomicBool>>,
    /// Cumulative class weights.
    classes: Vec<u32>,
    next_seq: AtomicU32,
    deadline: Instant,
    requests: u64,
    hostile_prefix: String,
}

impl Plan {
    fn pick(&self, rng: &mut Rng) -> (usize, usize) {
        let total = *self.classes.last().unwrap_or(&1);
        let roll = rng.below(total as usize) as u32;
        let class = self.classes.partition_point(|&c| c <= roll);
        let cum = &self.zipf[class];
        let u = rng.unit() * cum.last().copied().unwrap_or(0.0);
        let target = cum.partition_point(|&c| c <= u).min(cum.len() - 1);
        (class, target)
    }
}

type Sender = hyper::client::conn::http1::SendRequest<Empty<Bytes>>;

async fn connect(resolver: &str) -> Result<Sender, String> {
    let stream = TcpStream::connect(resolver)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let _ = stream.set_nodelay(true);
    let (send, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(send)
}

async fn ask(
    send: &mut Sender,
    resolver: &str,
    path: &str,
    seq: u32,
) -> Result<(u16, Option<String>), String> {
    let ip = Ipv4Addr::new(10, (seq >> 16) as u8, (seq >> 8) as u8, seq as u8);
    let req = Request::get(path)
        .header(HOST, resolver)
        .header("x-forwarded-for", ip.to_string())
        .body(Empty::<Bytes>::new())
        .map_err(|e| e.to_string())?;
    send.ready().await.map_err(|e| e.to_string())?;
    let res = send.send_request(req).await.map_err(|e| e.to_string())?;
    let status = res.status().as_u16();
    let location = res
        .headers()
        .get(LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    res.into_body()
        .collect()
        .await
        .map_err(|e| format!("body: {e}"))?;
    Ok((status, location))
}

fn home_down(sim: &Sim, home: Option<usize>) -> bool {
    home.is_some_and(|h| !sim.archives[h].is_up())
}

async fn reader(sim: Arc<Sim>, plan: Arc<Plan>, seed: u64) -> Vec<Rec> {
    let mut rng = Rng(seed);
    let mut recs = Vec::new();
    let mut send: Option<Sender> = None;
    while Instant::now() < plan.deadline {
        let seq = plan.next_seq.fetch_add(1, Ordering::Relaxed);
        if seq as usize >= MAX_SEQ || (plan.requests > 0 && u64::from(seq) > plan.requests) {
            break;
        }
        let (class, t) = plan.pick(&mut rng);
        let target = &plan.targets[class][t];
        let first = !plan.answered[class][t].load(Ordering::Relaxed);
        let remembered = plan.rememberable[class][t].load(Ordering::Relaxed);
        let holder_up = target.holder.is_some_and(|h| sim.archives[h].is_up());
        let flapping = target
            .home
            .filter(|&h| sim.archives[h].role == Role::Flapping);
        let home_up = flapping.map(|h| sim.archives[h].is_up());
        let down_before = home_down(&sim, target.home);
        let start = Instant::now();
        if send.as_ref().is_none_or(|s| s.is_closed()) {
            send = connect(&plan.resolver).await.ok();
        }
        let result = match send.as_mut() {
            Some(s) => ask(s, &plan.resolver, &target.path, seq).await,
            None => Err("cannot connect to the resolver".into()),
        };
        let micros = start.elapsed().as_micros() as u64;
        plan.answered[class][t].store(true, Ordering::Relaxed);
        if holder_up && target.holder.is_some_and(|h| sim.archives[h].is_up()) {
            plan.rememberable[class][t].store(true, Ordering::Relaxed);
        }
        let down = down_before || home_down(&sim, target.home);
        let (got, location) = match result {
            Ok((status, location)) => {
                let got = match status {
                    301..=303 | 307 | 308 => match location.as_deref() {
                        Some(l) if l.starts_with(&plan.hostile_prefix) => Got::ToHostile,
                        Some(l) if Some(l) == target.url.as_deref() => Got::ToHolder,
                        _ => Got::ToOther,
                    },
                    404 => Got::NotFound,
                    410 => Got::Gone,
                    503 => Got::Unavailable,
                    429 => Got::Throttled,
                    s => Got::Other(s),
                };
                (got, location.or_else(|| Some(format!("status {status}"))))
            }
            Err(e) => {
                // A resolver that is gone: not a loop of failures as fast as the CPU goes.
                send = None;
                tokio::time::sleep(Duration::from_millis(20)).await;
                (Got::Error, Some(e))
            }
        };
        let right = matches!(
            (CLASSES[class].expected(), got),
            (Expect::Redirect, Got::ToHolder)
                | (
                    Expect::RedirectOrUnavailable,
                    Got::ToHolder | Got::Unavailable
                )
                | (Expect::NotFound, Got::NotFound)
                | (Expect::Gone, Got::Gone)
                | (Expect::Unavailable, Got::Unavailable)
        );
        let verdict = if right {
            Verdict::Right
        } else if got == Got::ToHostile && down && !remembered && CLASSES[class] != Class::Path {
            Verdict::HostileHomeDown
        } else {
            Verdict::Wrong
        };
        recs.push(Rec {
            seq,
            class,
            target: t as u32,
            first,
            got,
            verdict,
            micros,
            home_up,
            detail: (verdict == Verdict::Wrong).then_some(location).flatten(),
        });
    }
    recs
}

// --- the report -----------------------------------------------------------------------

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1] as f64 / 1000.0
}

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "—".into()
    } else {
        format!("{:.1} %", part as f64 * 100.0 / whole as f64)
    }
}

fn ratio(part: u64, whole: u64) -> String {
    if whole == 0 {
        "—".into()
    } else {
        format!("{:.2}", part as f64 / whole as f64)
    }
}

/// Per class, what the tables show.
#[derive(Default)]
struct Tally {
    n: u64,
    right: u64,
    tolerated: u64,
    wrong: u64,
    got: [u64; 9],
    micros: Vec<u64>,
    /// (resolutions, right, urlRequests, acknowledgments) for first asks and the others.
    first: [u64; 4],
    again: [u64; 4],
    /// A flapping home: [up when sent, down when sent] × [302 holder, 503, 302 hostile,
    /// other].
    flap: [[u64; 4]; 2],
    examples: Vec<String>,
    example_kinds: HashMap<(usize, bool), usize>,
    /// The targets shown already: one example each.
    example_targets: HashSet<u32>,
}

fn describe_location(sim: &Sim, location: &str) -> String {
    for (k, a) in sim.archives.iter().enumerate() {
        if location.starts_with(&format!("http://127.0.0.1:{}/", a.port)) {
            let what = if k == sim.hostile {
                "the hostile".to_string()
            } else {
                format!("{}, {}", a.word, a.role.as_str())
            };
            return format!("302 → `{location}` ({what})");
        }
    }
    if location.starts_with("status ") {
        location.to_string()
    } else {
        format!("302 → `{location}`")
    }
}

fn report(
    sim: &Sim,
    plan: &Plan,
    o: &Options,
    mut recs: Vec<Rec>,
    elapsed: Duration,
    cpu: Option<f64>,
) -> String {
    recs.sort_by_key(|r| r.seq);
    let mut tallies: Vec<Tally> = CLASSES.iter().map(|_| Tally::default()).collect();
    let (mut url_all, mut ack_all) = (0u64, 0u64);
    for r in &recs {
        let t = &mut tallies[r.class];
        let urls = u64::from(sim.url_by_seq[r.seq as usize].load(Ordering::Relaxed));
        let acks = u64::from(sim.ack_by_seq[r.seq as usize].load(Ordering::Relaxed));
        url_all += urls;
        ack_all += acks;
        t.n += 1;
        match r.verdict {
            Verdict::Right => t.right += 1,
            Verdict::HostileHomeDown => t.tolerated += 1,
            Verdict::Wrong => t.wrong += 1,
        }
        t.got[r.got.column()] += 1;
        t.micros.push(r.micros);
        let split = if r.first { &mut t.first } else { &mut t.again };
        split[0] += 1;
        split[1] += u64::from(r.verdict == Verdict::Right);
        split[2] += urls;
        split[3] += acks;
        if let Some(up) = r.home_up {
            let col = match r.got {
                Got::ToHolder => 0,
                Got::Unavailable => 1,
                Got::ToHostile => 2,
                _ => 3,
            };
            t.flap[usize::from(!up)][col] += 1;
        }
        if r.verdict == Verdict::Wrong {
            let seen = t
                .example_kinds
                .entry((r.got.column(), r.first))
                .or_insert(0);
            if *seen < EXAMPLES && t.example_targets.insert(r.target) {
                *seen += 1;
                let target = &plan.targets[r.class][r.target as usize];
                let got = match r.got {
                    Got::Error => format!("socket error: {}", r.detail.as_deref().unwrap_or("")),
                    _ => describe_location(sim, r.detail.as_deref().unwrap_or("")),
                };
                let expected = match &target.url {
                    Some(u) if CLASSES[r.class].expected() != Expect::Unavailable => {
                        format!("{} (`{u}`)", CLASSES[r.class].expected_text())
                    }
                    _ => CLASSES[r.class].expected_text().to_string(),
                };
                let home = match target.home {
                    Some(h) => {
                        let a = &sim.archives[h];
                        format!("home {} ({})", a.word, a.role.as_str())
                    }
                    None => "no home".into(),
                };
                t.examples.push(format!(
                    "- `GET {}` ({}, {home}): {got}; expected {expected}",
                    target.path,
                    if r.first { "first ask" } else { "asked before" }
                ));
            }
        }
    }
    for t in &mut tallies {
        t.micros.sort_unstable();
    }

    let n = sim.archives.len();
    let role_count = |role: Role| sim.archives.iter().filter(|a| a.role == role).count();
    let words = |role: Role| {
        let w: Vec<&str> = sim
            .archives
            .iter()
            .filter(|a| a.role == role)
            .map(|a| a.word.as_str())
            .collect();
        w.join(", ")
    };
    let held = sim.items.len();
    let deleted = sim.items.iter().filter(|i| i.kept == Kept::Deleted).count();
    let moved = CLASSES
        .iter()
        .zip(&plan.targets)
        .filter(|(c, _)| matches!(c, Class::Moved | Class::MovedDownHome))
        .map(|(_, t)| t.len())
        .sum::<usize>();
    let total: u64 = tallies.iter().map(|t| t.n).sum();
    let mut s = String::new();
    let _ = writeln!(s, "## The network\n");
    let _ = writeln!(
        s,
        "- {n} Archives on 127.0.0.1, one process (`bench/netsim.rs`), each with its own prefix \
         (service IBI `archives.test/aKKK/2020/01.01.00.00`, items `archives.test/aKKK/2021/…`): \
         {} healthy; {DOWN} down, included then closed (connections refused): {}; {FLAPPING} \
         flapping, closed and reopened on the same port every {:.1} s, out of phase: {}; 1 \
         hostile, claiming the Original of every IBI and file path with a URL of its own: {}; \
         1 slow, answering right after {} ms (0.8 × the resolver's timeout of {} ms): {}.",
        role_count(Role::Healthy),
        words(Role::Down),
        o.flap.as_secs_f64(),
        words(Role::Flapping),
        words(Role::Hostile),
        sim.slow_delay.as_millis(),
        o.timeout.as_millis(),
        words(Role::Slow),
    );
    let _ = writeln!(
        s,
        "- {} items minted per Archive (not the hostile): {held} held in all, {deleted} of them \
         tombstones (`state Deleted`), {moved} moved (minted at one Archive's prefix, held only \
         by another healthy one); {UNKNOWN_PER_PREFIX} unknown IBIs per prefix of a healthy or \
         down Archive, and {} of {NO_HOME_PREFIXES} prefixes no Archive has.",
        o.items,
        NO_HOME_PREFIXES * UNKNOWN_PER_PREFIX
    );
    let weights: Vec<String> = CLASSES
        .iter()
        .map(|c| format!("{} {}", c.name(), c.weight()))
        .collect();
    let _ = writeln!(
        s,
        "- readers: {} connections back to back for {:.1} s{}, each request \
         `X-Forwarded-For: 10.a.b.c` (its number, which the resolver passes on to the \
         Archives as `clientinformation.ipaddress`: each Archive request is counted against \
         the resolution that made it); a class drawn by weight ({}; per cent), then an IBI \
         of the class by Zipf's law (s = {}) over the class's IBIs in a shuffled order; seed {}.",
        o.connections,
        elapsed.as_secs_f64(),
        if o.requests > 0 {
            format!(" (at most {} requests)", o.requests)
        } else {
            String::new()
        },
        weights.join(", "),
        o.zipf,
        o.seed
    );
    let _ = writeln!(
        s,
        "- expected answers follow from what the simulation holds and whether an Archive is \
         up, never from the resolver's answers. *Right*: the expected answer. *Hostile wins, \
         home down*: a redirect to the hostile for an IBI whose home was down (when the \
         request was sent or answered) and that no resolver could have remembered (no \
         earlier request for it was answered while its holder was up: always so for an IBI \
         nobody holds or whose holder is down), the standard's first-answer rule: counted \
         apart, neither right nor wrong. *First ask*: no earlier \
         request for the same URL had been answered when it was sent; *asked before*: the \
         others. Archive requests: the urlRequests the fake Archives received carrying the \
         resolution's number, background ones included, ÷ resolutions."
    );

    let _ = writeln!(s, "\n## Answers by class\n");
    let _ = writeln!(
        s,
        "| class | expected | resolutions | right | right % | hostile wins, home down | wrong | wrong % | p50 ms | p99 ms |"
    );
    let _ = writeln!(s, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|");
    let mut all_micros: Vec<u64> = Vec::new();
    let (mut right, mut tolerated, mut wrong) = (0, 0, 0);
    for (c, t) in CLASSES.iter().zip(&tallies) {
        right += t.right;
        tolerated += t.tolerated;
        wrong += t.wrong;
        all_micros.extend(&t.micros);
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {:.1} |",
            c.name(),
            c.expected_text(),
            t.n,
            t.right,
            pct(t.right, t.n),
            t.tolerated,
            t.wrong,
            pct(t.wrong, t.n),
            percentile(&t.micros, 50.0),
            percentile(&t.micros, 99.0),
        );
    }
    all_micros.sort_unstable();
    let _ = writeln!(
        s,
        "| **total** | | {total} | {right} | {} | {tolerated} | {wrong} | {} | {:.1} | {:.1} |",
        pct(right, total),
        pct(wrong, total),
        percentile(&all_micros, 50.0),
        percentile(&all_micros, 99.0),
    );

    let _ = writeln!(s, "\n## Archive requests per resolution\n");
    let _ = writeln!(
        s,
        "urlRequests the Archives received per resolution (acknowledgments apart). Targets: \
         ≤ 2 for an item's first ask at its home, ≤ 1.1 for a popular held item asked before \
         (remembered).\n"
    );
    let _ = writeln!(
        s,
        "| class | all | first asks | urlRequests / first ask | right % (first) | asked before | urlRequests / ask before | right % (before) | acks / resolution | target (first, before) | met |"
    );
    let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|---|");
    for (c, t) in CLASSES.iter().zip(&tallies) {
        let (tf, ta) = c.targets();
        let mut met = Vec::new();
        let check = |target: Option<f64>, split: &[u64; 4], met: &mut Vec<&str>| {
            if let Some(limit) = target {
                if split[0] > 0 {
                    met.push(if split[2] as f64 / split[0] as f64 <= limit {
                        "yes"
                    } else {
                        "no"
                    });
                } else {
                    met.push("—");
                }
            }
        };
        check(tf, &t.first, &mut met);
        check(ta, &t.again, &mut met);
        let target = match (tf, ta) {
            (Some(f), Some(a)) => format!("≤ {f}, ≤ {a}"),
            (Some(f), None) => format!("≤ {f}, —"),
            _ => "—".into(),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            c.name(),
            ratio(t.first[2] + t.again[2], t.n),
            t.first[0],
            ratio(t.first[2], t.first[0]),
            pct(t.first[1], t.first[0]),
            t.again[0],
            ratio(t.again[2], t.again[0]),
            pct(t.again[1], t.again[0]),
            ratio(t.first[3] + t.again[3], t.n),
            target,
            if met.is_empty() {
                "—".into()
            } else {
                met.join(", ")
            },
        );
    }

    let _ = writeln!(s, "\n## What each class got\n");
    let _ = writeln!(s, "| class | expected | {} |", GOT_COLUMNS.join(" | "));
    let _ = writeln!(s, "|---|---|{}", "--:|".repeat(GOT_COLUMNS.len()));
    for (c, t) in CLASSES.iter().zip(&tallies) {
        let cells: Vec<String> = t.got.iter().map(|g| g.to_string()).collect();
        let _ = writeln!(
            s,
            "| {} | {} | {} |",
            c.name(),
            c.expected_text(),
            cells.join(" | ")
        );
    }

    let _ = writeln!(s, "\n## Flapping homes\n");
    let _ = writeln!(
        s,
        "The resolutions of IBIs whose home flaps, by the home's state when the request was sent \
         (302 → holder and 503 are both right for the items it holds).\n"
    );
    let _ = writeln!(
        s,
        "| class | sent while up: 302 → holder | 503 | 302 → hostile | other | sent while down: 302 → holder | 503 | 302 → hostile | other |"
    );
    let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|--:|--:|");
    for (c, t) in CLASSES.iter().zip(&tallies) {
        if t.flap.iter().flatten().sum::<u64>() > 0 {
            let cells: Vec<String> = t.flap.iter().flatten().map(|n| n.to_string()).collect();
            let _ = writeln!(s, "| {} | {} |", c.name(), cells.join(" | "));
        }
    }

    let _ = writeln!(s, "\n## Wrong answers, examples\n");
    let _ = writeln!(
        s,
        "At most {EXAMPLES} per class, kind of answer and first ask or not, the earliest.\n"
    );
    for (c, t) in CLASSES.iter().zip(&tallies) {
        if t.examples.is_empty() {
            continue;
        }
        let _ = writeln!(s, "**{}** ({} wrong of {}):\n", c.name(), t.wrong, t.n);
        for e in &t.examples {
            let _ = writeln!(s, "{e}");
        }
        let _ = writeln!(s);
    }
    if tallies.iter().all(|t| t.examples.is_empty()) {
        let _ = writeln!(s, "None.\n");
    }

    let by_role = |role: Role, f: fn(&Archive) -> &AtomicU64| -> u64 {
        sim.archives
            .iter()
            .filter(|a| a.role == role)
            .map(|a| f(a).load(Ordering::Relaxed))
            .sum()
    };
    let roles = [
        Role::Healthy,
        Role::Slow,
        Role::Flapping,
        Role::Down,
        Role::Hostile,
    ];
    let urls_by_role: Vec<String> = roles
        .iter()
        .map(|&r| format!("{} {}", r.as_str(), by_role(r, |a| &a.url_requests)))
        .collect();
    let acks_by_role: Vec<String> = roles
        .iter()
        .map(|&r| format!("{} {}", r.as_str(), by_role(r, |a| &a.acknowledgments)))
        .collect();
    let errors: u64 = tallies.iter().map(|t| t.got[Got::Error.column()]).sum();
    let _ = writeln!(s, "## Totals\n");
    let _ = writeln!(
        s,
        "- {total} resolutions in {:.1} s: {:.0} a second; right {} ({right}), hostile wins \
         with the home down {tolerated}, wrong {} ({wrong}); socket errors {errors}; p50 {:.1} ms, \
         p99 {:.1} ms",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64(),
        pct(right, total),
        pct(wrong, total),
        percentile(&all_micros, 50.0),
        percentile(&all_micros, 99.0),
    );
    let _ = writeln!(
        s,
        "- urlRequests the Archives received for the readers' resolutions: {url_all} ({} per \
         resolution); all the Archives received, by role: {}",
        ratio(url_all, total),
        urls_by_role.join(", ")
    );
    let _ = writeln!(
        s,
        "- acknowledgments received: {ack_all} ({} per resolution); by role: {}",
        ratio(ack_all, total),
        acks_by_role.join(", ")
    );
    if let Some(cpu) = cpu {
        let _ = writeln!(
            s,
            "- CPU time of this process (the {n} Archives and the readers) while the readers \
             ran: {cpu:.1} s, {:.0} % of one CPU",
            cpu * 100.0 / elapsed.as_secs_f64()
        );
    }
    let _ = writeln!(
        s,
        "- requests without a reader's number: {}; other requests: {}",
        sim.unattributed.load(Ordering::Relaxed),
        sim.other_requests.load(Ordering::Relaxed)
    );
    s
}

/// The CPU time this process has used (user and system), from /proc/self/stat: to show
/// that the fakes leave the CPUs to the resolver they measure.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name (which may hold spaces): state is the first.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    // SAFETY: sysconf reads a constant of the system; no memory is touched.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (per_second > 0).then(|| ticks / per_second as f64)
}

fn main() -> ExitCode {
    let o = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("netsim: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // Two workers: the fake Archives and the readers share the machine with the resolver
    // they measure; one process's event loops spend less of it than many processes would.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("netsim: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(o)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("netsim: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(o: Options) -> Result<(), String> {
    let mut rng = Rng(o.seed);
    let listeners = listeners(o.archives, &mut rng)?;
    let ports: Vec<u16> = listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.port()))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let (sim, targets) = build(&o, &mut rng, &ports);
    check(&sim, &targets)?;
    let sim = Arc::new(sim);
    for (k, l) in listeners.into_iter().enumerate() {
        tokio::spawn(serve_archive(sim.clone(), k, l));
    }
    let mut listed = String::new();
    for a in &sim.archives {
        let _ = writeln!(listed, "{} {} {}", a.service, a.address(), a.role.as_str());
    }
    std::fs::write(&o.listed, listed).map_err(|e| format!("{}: {e}", o.listed.display()))?;
    println!("ready");

    // The script registers and includes every Archive, then makes the file --go.
    let waiting = Instant::now();
    while !o.go.exists() {
        if waiting.elapsed() > Duration::from_secs(600) {
            return Err(format!(
                "{} did not appear within 10 minutes",
                o.go.display()
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    for (k, a) in sim.archives.iter().enumerate() {
        if a.role == Role::Down {
            sim.archives[k].up.send_replace(false);
        }
    }
    let flappers: Vec<usize> = (0..sim.archives.len())
        .filter(|&k| sim.archives[k].role == Role::Flapping)
        .collect();
    for (i, &k) in flappers.iter().enumerate() {
        // Out of phase: never both down, nor both coming up, at once.
        let phase = o.flap.mul_f64((i + 1) as f64 / (flappers.len() + 1) as f64);
        tokio::spawn(flap(sim.clone(), k, o.flap, phase));
    }

    let zipf = targets
        .iter()
        .map(|t| {
            let mut sum = 0.0;
            (0..t.len())
                .map(|r| {
                    sum += 1.0 / ((r + 1) as f64).powf(o.zipf);
                    sum
                })
                .collect()
        })
        .collect();
    let flags = || -> Vec<Vec<AtomicBool>> {
        targets
            .iter()
            .map(|t| t.iter().map(|_| AtomicBool::new(false)).collect())
            .collect()
    };
    let (answered, rememberable) = (flags(), flags());
    let mut classes = Vec::new();
    let mut sum = 0;
    for (c, t) in CLASSES.iter().zip(&targets) {
        // A class with no IBI (a tiny network) is never drawn.
        sum += if t.is_empty() { 0 } else { c.weight() };
        classes.push(sum);
    }
    let start = Instant::now();
    let cpu_start = cpu_seconds();
    let plan = Arc::new(Plan {
        resolver: o.resolver.clone(),
        targets,
        zipf,
        answered,
        rememberable,
        classes,
        next_seq: AtomicU32::new(1),
        deadline: start + Duration::from_secs(o.duration),
        requests: o.requests,
        hostile_prefix: format!("http://127.0.0.1:{}/", sim.archives[sim.hostile].port),
    });
    let readers: Vec<_> = (0..o.connections)
        .map(|i| {
            tokio::spawn(reader(
                sim.clone(),
                plan.clone(),
                o.seed.wrapping_mul(1000).wrapping_add(i as u64),
            ))
        })
        .collect();
    let mut recs = Vec::new();
    for r in readers {
        recs.extend(r.await.map_err(|e| e.to_string())?);
    }
    let elapsed = start.elapsed();
    let cpu = cpu_seconds().zip(cpu_start).map(|(end, start)| end - start);
    // The requests the last resolutions left under way (to the slow Archive, say) arrive.
    tokio::time::sleep(o.timeout + Duration::from_secs(1)).await;
    let body = report(&sim, &plan, &o, recs, elapsed, cpu);
    std::fs::write(&o.out, body).map_err(|e| format!("{}: {e}", o.out.display()))?;
    Ok(())
}
