//! The resolver as a client of Archives: which addresses it may contact, and one bounded
//! GET of an Archive service.
//!
//! Every request goes through one `reqwest` client (connection pooling) that never follows
//! a redirect, never uses a proxy from the environment, reads at most [`MAX_ANSWER`]
//! bytes, and resolves host names through `PolicyResolver`, which drops every address
//! outside `[archives].networks` (by default: loopback, private, link-local, multicast and
//! other non-public ranges), so a name that points inside the resolver's network later
//! is refused at connection time too, not only at inclusion.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use ibi_archive::config::Network;
use ibi_archive::escape::TABLE_6_1;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// The longest answer read from an Archive: a pair list is a few hundred bytes.
pub const MAX_ANSWER: usize = 64 * 1024;
/// Requests to Archives under way at once, over every resolution and acknowledgment:
/// each holds a connection, its buffers and its task (with 1,000 Archives, 16,000 under
/// way took 200 MiB). Beyond, a request waits for one to end, at most its timeout (then
/// it is [`Fetched::Busy`], not the Archive's failure).
pub const UNDER_WAY: usize = 512;
/// Idle connections kept for the next requests, over every Archive: each Archive gets
/// its share, from 1 to [`IDLE_PER_ARCHIVE`] (a power of two, so that the client is
/// rebuilt only when the number of Archives changes much).
pub const IDLE_CONNECTIONS: usize = 512;
/// Idle connections kept open to one Archive address at most.
pub const IDLE_PER_ARCHIVE: usize = 32;
/// Requests to one Archive address under way at once, of the [`UNDER_WAY`]: an Archive
/// that never answers holds each request for the whole timeout (those of resolutions
/// another Archive decided go on in the background), and must not hold them all.
pub const UNDER_WAY_PER_ARCHIVE: usize = 64;

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

    /// Whether an Archive may be at `ip`. An IPv6 address with IPv4 addresses inside it
    /// (see `embedded_v4`) is judged by those: allowed when every one of them is.
    pub fn allows(&self, ip: IpAddr) -> bool {
        match &self.networks {
            Some(list) => {
                let inside = |ip: IpAddr| list.iter().any(|n| n.contains(ip));
                match ip {
                    IpAddr::V6(v6) => match embedded_v4(v6) {
                        Some(v4s) => v4s.into_iter().all(|v4| inside(IpAddr::V4(v4))),
                        None => inside(ip),
                    },
                    IpAddr::V4(_) => inside(ip),
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

/// Resolves host names for the client, keeping only the addresses the policy allows.
struct PolicyResolver {
    policy: Policy,
}

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|a| policy.allows(a.ip()))
                .collect();
            if allowed.is_empty() {
                return Err(
                    format!("{host} has no address in the networks Archives may have").into(),
                );
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// The HTTP client of the resolver.
#[derive(Clone)]
pub struct ArchiveClient {
    /// The idle connections kept per Archive, and the client built for that.
    http: Arc<RwLock<(usize, reqwest::Client)>>,
    policy: Policy,
    under_way: Arc<Semaphore>,
    /// Of those, each Archive address's share.
    per_archive: Arc<Mutex<HashMap<String, Arc<Semaphore>>>>,
}

/// The idle connections kept to each of `archives` Archives.
fn idle_per_archive(archives: usize) -> usize {
    let share = IDLE_CONNECTIONS / archives.max(1);
    let power = if share == 0 { 1 } else { 1 << share.ilog2() };
    power.clamp(1, IDLE_PER_ARCHIVE)
}

/// What one request to an Archive gave.
#[derive(Clone, Debug)]
pub enum Fetched {
    /// `200` and the body (at most [`MAX_ANSWER`] bytes).
    Body(String),
    /// Anything else: a short description for the trace and the log.
    Failed(String),
    /// No answer within the timeout.
    TimedOut,
    /// Not sent: [`UNDER_WAY`] requests (or [`UNDER_WAY_PER_ARCHIVE`] to this Archive)
    /// stayed under way for the whole timeout. The resolver's limit, not the Archive's
    /// failure.
    Busy,
}

fn build(policy: &Policy, idle_per_archive: usize) -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .user_agent(concat!("ibi-resolver/", env!("CARGO_PKG_VERSION")))
        .dns_resolver(Arc::new(PolicyResolver {
            policy: policy.clone(),
        }))
        // Below the 5 s after which Archive servers (ibi-archive serve, Apache's and
        // lighttpd's defaults) close an idle connection: a pooled connection is not
        // reused just as the Archive closes it.
        .pool_idle_timeout(Duration::from_secs(4))
        .pool_max_idle_per_host(idle_per_archive)
        .tcp_nodelay(true)
        .build()
        .expect("a client without TLS always builds")
}

impl ArchiveClient {
    pub fn new(policy: Policy) -> ArchiveClient {
        let http = build(&policy, IDLE_PER_ARCHIVE);
        ArchiveClient {
            http: Arc::new(RwLock::new((IDLE_PER_ARCHIVE, http))),
            policy,
            under_way: Arc::new(Semaphore::new(UNDER_WAY)),
            per_archive: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// Fits the client to the Archives at `addresses`: the idle connections kept to each
    /// (see [`IDLE_CONNECTIONS`]; a new share starts a new pool, the old one closing as
    /// its requests end), and the shares of requests under way of those no longer there
    /// forgotten.
    pub fn fit(&self, addresses: &[&str]) {
        let per_archive = idle_per_archive(addresses.len());
        {
            let mut http = self.http.write().unwrap_or_else(|p| p.into_inner());
            if http.0 != per_archive {
                *http = (per_archive, build(&self.policy, per_archive));
            }
        }
        self.per_archive
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|a, _| addresses.contains(&a.as_str()));
    }

    /// The share of requests under way of the Archive `url` is sent to.
    fn share_of(&self, url: &str) -> Arc<Semaphore> {
        let rest = url.strip_prefix("http://").unwrap_or(url);
        let address = rest.split('/').next().unwrap_or(rest);
        let mut shares = self.per_archive.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(share) = shares.get(address) {
            return share.clone();
        }
        let share = Arc::new(Semaphore::new(UNDER_WAY_PER_ARCHIVE));
        shares.insert(address.to_string(), share.clone());
        share
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
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
        check_hostport(archiveaddress)?;
        if let Some(ip) = literal_ip(archiveaddress) {
            if !self.policy.allows(ip) {
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

    /// One GET, bounded in time (connect included) and in the bytes read.
    /// Whether the Archive at `archiveaddress` answers `confirmation yes` to
    /// `inclusionConfirmationRequest` (Figure 7.1, message 3) within `timeout`.
    pub async fn confirms(
        &self,
        archiveaddress: &str,
        serviceibi: &str,
        timeout: Duration,
    ) -> bool {
        let Ok(url) = self.service_url(
            archiveaddress,
            serviceibi,
            &[("servicesubject", b"inclusionConfirmationRequest")],
        ) else {
            return false;
        };
        match self.get(&url, timeout).await.0 {
            Fetched::Body(body) => ibi_archive::pairs::parse(body.trim_end_matches(['\r', '\n']))
                .map(|p| p.iter().any(|(n, w)| n == "confirmation" && w == &["yes"]))
                .unwrap_or(false),
            _ => false,
        }
    }

    pub async fn get(&self, url: &str, timeout: Duration) -> (Fetched, Duration) {
        let start = Instant::now();
        let share = self.share_of(url);
        let slots = async { (share.acquire().await, self.under_way.acquire().await) };
        let Ok((Ok(_of_archive), Ok(_of_all))) = tokio::time::timeout(timeout, slots).await else {
            return (Fetched::Busy, start.elapsed());
        };
        let fetched = match tokio::time::timeout(timeout, self.fetch(url)).await {
            Ok(f) => f,
            Err(_) => Fetched::TimedOut,
        };
        (fetched, start.elapsed())
    }

    async fn fetch(&self, url: &str) -> Fetched {
        let http = self
            .http
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .1
            .clone();
        let mut response = match http.get(url).send().await {
            Ok(r) => r,
            Err(e) => return Fetched::Failed(describe(&e)),
        };
        let status = response.status();
        if status.is_redirection() {
            return Fetched::Failed(format!("answered {status} (redirects are not followed)"));
        }
        if status != reqwest::StatusCode::OK {
            return Fetched::Failed(format!("answered {status}"));
        }
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if body.len() + chunk.len() > MAX_ANSWER {
                        return Fetched::Failed(format!("answer longer than {MAX_ANSWER} bytes"));
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(e) => return Fetched::Failed(describe(&e)),
            }
        }
        match String::from_utf8(body) {
            Ok(text) => Fetched::Body(text),
            Err(_) => Fetched::Failed("answer is not UTF-8 text".into()),
        }
    }
}

/// A client error by its kind and cause, without the URL (which may hold a key).
fn describe(e: &reqwest::Error) -> String {
    use std::error::Error;
    let mut cause = String::new();
    let mut source = e.source();
    while let Some(s) = source {
        cause = s.to_string();
        source = s.source();
    }
    let kind = if e.is_connect() {
        "cannot connect"
    } else if e.is_timeout() {
        "timed out"
    } else if e.is_body() || e.is_decode() {
        "broken answer"
    } else {
        "request failed"
    };
    if cause.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}: {cause}")
    }
}

/// `host [":" port]` of RFC 3986 as §6.1 uses it for `archiveaddress`.
pub fn check_hostport(address: &str) -> Result<(), String> {
    let bad = || format!("{address:?} is not a host[:port]");
    if address.is_empty() || address.len() > 261 || address.contains(['/', '@', '?', '#', '\\']) {
        return Err(bad());
    }
    let url = reqwest::Url::parse(&format!("http://{address}/")).map_err(|_| bad())?;
    let host = url.host_str().ok_or_else(bad)?;
    let written = match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    };
    // The URL parser normalises (case, IPv4 forms, default port); the address must
    // already be in that form, so what is checked is what is contacted.
    let same = written.eq_ignore_ascii_case(address)
        || format!("{written}:80").eq_ignore_ascii_case(address);
    if !same {
        return Err(bad());
    }
    Ok(())
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
        ] {
            assert!(p.allows(ip.parse().unwrap()), "{ip}");
        }
        let lo = Policy::new(Some(vec![Network::parse("127.0.0.0/8").unwrap()]));
        assert!(lo.allows("127.0.0.2".parse().unwrap()));
        assert!(!lo.allows("150.163.34.239".parse().unwrap()));
    }

    #[test]
    fn under_listed_networks_an_ipv6_address_is_judged_by_the_ipv4_inside_it() {
        let lo = Policy::new(Some(vec![Network::parse("127.0.0.0/8").unwrap()]));
        for ip in [
            "::ffff:127.0.0.1",
            "2002:7f00:1::",
            "::ffff:0:7f00:1",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            // Teredo, server 127.0.0.1 and client 127.0.0.1 (inverted: 80ff:fffe).
            "2001:0:7f00:1::80ff:fffe",
        ] {
            assert!(lo.allows(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "::1",
            "2002:9610:22ef::1",
            "::ffff:150.163.2.175",
            // Teredo, server 127.0.0.1 but client 8.8.8.8; and the other way round.
            "2001:0:7f00:1::f7f7:f7f7",
            "2001:0:808:808::80ff:fffe",
        ] {
            assert!(!lo.allows(ip.parse().unwrap()), "{ip}");
        }
        // An IPv6 block does not let in the IPv4 addresses carried inside it.
        let six_to_four = Policy::new(Some(vec![Network::parse("2002::/16").unwrap()]));
        assert!(!six_to_four.allows("2002:7f00:1::".parse().unwrap()));
    }

    #[test]
    fn service_urls_escape_as_table_6_1_and_refuse_what_policy_refuses() {
        let c = ArchiveClient::new(Policy::new(None));
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
        for bad in ["a b", "user@host", "host/path", "", "host:99999", "host:"] {
            assert!(check_hostport(bad).is_err(), "{bad}");
        }
        for good in [
            "mtc-m21.sid.inpe.br",
            "127.0.0.1:8080",
            "[::1]:8080",
            "localhost",
        ] {
            assert!(check_hostport(good).is_ok(), "{good}");
        }
    }
}
