//! A generator of realistic Archives for benchmarks: N items over 20 prefixes and the years
//! 1995–2026, in the on-disk format of the product (archive.toml, col/<rep>/item.toml,
//! col/<rep>/doc/), with every rep and IBIp minted by `ibi::mint` so that
//! lookups by either form really work.
//!
//! Shared by the `gen-archive` example (bench/gen_archive.rs) and the criterion benches
//! (benches/handler.rs), which include this file as a module.
//!
//! The mix, per prefix, over dates drawn uniquely at the prefix's granularity (60 s or 1 s):
//! tombstones ~2 %, copies ~5 %, originals the rest; ~30 % of originals have a metadata
//! item (contenttype Metadata, oai_dc.xml) at the next date; among originals, edition
//! chains of 2–4 (a third of them 3+), translation groups (pt/en/es), a few restricted
//! items and a few chains that leave the Archive. IBIps on ~90 % of data items. File names
//! with spaces, Latin-1 bytes and characters that URLs escape. Everything follows from the
//! seed: the same seed and N give the same tree, whatever the number of threads.
//!
//! `Options::oai` (off by default, which leaves the tree above unchanged) makes an Archive
//! for the OAI-PMH data provider instead: every original has a metadata item, as `ibi-archive
//! new --dc` makes them, whose oai_dc.xml is a namespaced Dublin Core record; ~2 % of the
//! metadata items are tombstones (state Deleted, contenttype and formats kept, no doc/), as
//! `delete` leaves them.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use ::ibi::mint::mint_ports;
use ::ibi::{IbiDate, Ibip, Rep};

/// Bumped whenever the generated tree changes, so cached archives are rebuilt.
pub const GENERATOR_VERSION: u32 = 3;

/// First second of an IBIp (1995-08-01T00:00:00Z) and the last date generated
/// (2026-11-01T00:00:00Z).
const FIRST: i64 = 807_235_200 + 86_400;
const LAST: i64 = 1_793_491_200;

/// One prefix of the generated Archive: the server that minted its items.
pub struct Prefix {
    pub host: &'static str,
    pub port: u16,
    pub ip: &'static str,
    /// The word[.port] directory as spelled on disk when it differs from the minted one
    /// (e.g. `mtc-m18@80`, as old Archives spell it).
    pub disk_word: Option<&'static str>,
    /// Relative share of the items.
    pub weight: u32,
    /// Granularity of its dates, in seconds (60: `mm.dd.hh.mm` suffixes; 1: with seconds).
    pub granularity: i64,
    /// First year of its items.
    pub since: i32,
}

/// The 20 prefixes, over 8 subdomains; the first is the Archive's own server.
#[rustfmt::skip]
pub const PREFIXES: [Prefix; 20] = [
    p("mtc-m21.sid.inpe.br", 80, "150.163.34.248", None, 18, 1, 2008),
    p("mtc-m16c.sid.inpe.br", 80, "150.163.34.246", None, 8, 1, 2003),
    p("mtc-m18.sid.inpe.br", 80, "150.163.34.243", Some("mtc-m18@80"), 12, 60, 2000),
    p("mtc-m19.sid.inpe.br", 80, "150.163.34.24", None, 10, 1, 2005),
    p("mtc-m17.sid.inpe.br", 80, "150.163.34.245", None, 5, 60, 1999),
    p("mtc-m05.sid.inpe.br", 80, "150.163.34.205", None, 3, 60, 1995),
    p("plutao.sid.inpe.br", 80, "150.163.2.174", None, 6, 60, 1997),
    p("marte.sid.inpe.br", 80, "150.163.2.175", None, 4, 1, 2001),
    p("marte2.sid.inpe.br", 80, "150.163.2.176", None, 3, 1, 2009),
    p("md-m09.sid.inpe.br", 8080, "150.163.34.209", None, 2, 1, 2010),
    p("banon-pc3.dpi.inpe.br", 80, "150.163.2.13", None, 3, 60, 1996),
    p("lac.dpi.inpe.br", 80, "150.163.2.14", None, 2, 60, 1998),
    p("vaio.dpi.inpe.br", 80, "150.163.2.15", None, 1, 1, 2004),
    p("banon.iconet.com.br", 80, "200.178.98.3", None, 2, 60, 1999),
    p("www.urlib.net", 80, "200.160.2.12", None, 6, 1, 2011),
    p("lise.cptec.inpe.br", 80, "150.163.141.10", None, 3, 1, 2006),
    p("www.obt.inpe.br", 80, "150.163.4.20", None, 4, 60, 2002),
    p("iris.lac.inpe.br", 80, "150.163.5.30", None, 2, 1, 2012),
    p("archive.example.org", 80, "192.0.2.10", None, 3, 1, 2015),
    p("mirror.example.org", 80, "2001:db8::10", None, 3, 60, 2018),
];

#[allow(clippy::too_many_arguments)]
const fn p(
    host: &'static str,
    port: u16,
    ip: &'static str,
    disk_word: Option<&'static str>,
    weight: u32,
    granularity: i64,
    since: i32,
) -> Prefix {
    Prefix {
        host,
        port,
        ip,
        disk_word,
        weight,
        granularity,
        since,
    }
}

/// A small deterministic generator (SplitMix64): the tree must not depend on another
/// crate's algorithm choices.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(10_000) < percent * 100
    }
    /// True with probability `permille` / 1000.
    pub fn chance_permille(&mut self, permille: u64) -> bool {
        self.below(1000) < permille
    }
}

/// What the generator was asked for.
#[derive(Clone, Debug)]
pub struct Options {
    pub root: PathBuf,
    pub items: usize,
    pub seed: u64,
    pub jobs: usize,
    /// `archiveaddress` of the generated archive.toml.
    pub address: String,
    /// Print progress on stderr.
    pub progress: bool,
    /// A metadata item for every original, ~2 % of them tombstones, oai_dc.xml a namespaced
    /// record (see the module's documentation); off, the tree is the default one.
    pub oai: bool,
}

/// Requests a benchmark makes, all of them for items that exist (or surely do not).
#[derive(Clone, Debug, Default)]
pub struct Samples {
    pub items: usize,
    pub service_ibi: String,
    /// An original data item with a target file and an IBIp, asked by its rep.
    pub hit_rep: String,
    /// Another such item, asked by its IBIp.
    pub hit_ibip: String,
    /// A rep whose prefix is not in this Archive (the resolver's usual question).
    pub miss_rep: String,
    /// A rep of a local prefix at a date that holds no item.
    pub miss_rep_local: String,
    /// An IBIp of another server at a date (with seconds) that holds no item here.
    pub miss_ibip: String,
    /// Head of a chain of 3 editions whose last edition has oai_dc metadata.
    pub chain_head: String,
    /// URL path of a small static file in a doc/ folder (the servers' ceiling).
    pub doc_path: String,
}

impl Samples {
    /// `KEY=value` lines, for shells (`. file`) and for the benches.
    pub fn to_env(&self) -> String {
        let mut s = String::new();
        for (k, v) in self.pairs() {
            let _ = writeln!(s, "{k}='{v}'");
        }
        s
    }

    fn pairs(&self) -> Vec<(&'static str, String)> {
        vec![
            ("ITEMS", self.items.to_string()),
            ("SERVICE_IBI", self.service_ibi.clone()),
            ("HIT_REP", self.hit_rep.clone()),
            ("HIT_IBIP", self.hit_ibip.clone()),
            ("MISS_REP", self.miss_rep.clone()),
            ("MISS_REP_LOCAL", self.miss_rep_local.clone()),
            ("MISS_IBIP", self.miss_ibip.clone()),
            ("CHAIN_HEAD", self.chain_head.clone()),
            ("DOC_PATH", self.doc_path.clone()),
        ]
    }

    /// Reads what [`Samples::to_env`] wrote.
    pub fn from_env(text: &str) -> Option<Samples> {
        let mut s = Samples::default();
        for line in text.lines() {
            let Some((k, v)) = line.split_once('=') else {
                continue;
            };
            let v = v.trim_matches('\'').to_string();
            match k {
                "ITEMS" => s.items = v.parse().ok()?,
                "SERVICE_IBI" => s.service_ibi = v,
                "HIT_REP" => s.hit_rep = v,
                "HIT_IBIP" => s.hit_ibip = v,
                "MISS_REP" => s.miss_rep = v,
                "MISS_REP_LOCAL" => s.miss_rep_local = v,
                "MISS_IBIP" => s.miss_ibip = v,
                "CHAIN_HEAD" => s.chain_head = v,
                "DOC_PATH" => s.doc_path = v,
                _ => {}
            }
        }
        (!s.hit_rep.is_empty() && !s.chain_head.is_empty()).then_some(s)
    }
}

/// The file beside an Archive root where its samples are kept (outside the Archive).
pub fn samples_path(root: &Path) -> PathBuf {
    let mut name = root.file_name().unwrap_or_default().to_os_string();
    name.push(".samples.env");
    root.with_file_name(name)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Service,
    Original,
    Copy,
    Deleted,
    /// The metadata item of the item at this index.
    Metadata(usize),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Files {
    /// Target named in item.toml, with spaces; maybe a second file.
    Named { bib: bool },
    /// A single file and no target: the default rule picks it.
    Single,
    /// A file named in Latin-1 on disk; the target is given in UTF-8.
    Latin1,
    /// index.html and a figure, no target.
    Index,
    /// A name holding characters that URLs escape.
    Odd,
}

/// One item to write.
struct Spec {
    seconds: i64,
    kind: Kind,
    rep: Rep,
    ibip: Option<Ibip>,
    language: Option<&'static str>,
    next: Option<String>,
    metadata: Option<usize>,
    translations: Vec<(&'static str, usize)>,
    restricted: bool,
    files: Files,
    /// A metadata item turned into a tombstone (`Options::oai` only).
    withdrawn: bool,
}

/// What one prefix contributes to the samples.
#[derive(Default)]
struct PrefixReport {
    items: usize,
    service: Option<String>,
    hit: Vec<(String, String)>,
    chain_heads: Vec<String>,
    doc_path: Option<String>,
    /// The rep prefix (as on disk) and one unused date, for a local miss.
    local_miss: Option<String>,
    used_seconds: BTreeSet<i64>,
}

/// Generates the Archive; returns the samples (also written beside the root).
pub fn generate(opts: &Options) -> io::Result<Samples> {
    if opts.root.join("col").exists() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} already holds col/", opts.root.display()),
        ));
    }
    fs::create_dir_all(opts.root.join("col"))?;
    fs::create_dir_all(opts.root.join("var"))?;
    let total_weight: u32 = PREFIXES.iter().map(|p| p.weight).sum();
    let mut counts: Vec<usize> = PREFIXES
        .iter()
        .map(|p| opts.items * p.weight as usize / total_weight as usize)
        .collect();
    let assigned: usize = counts.iter().sum();
    counts[0] += opts.items - assigned;
    counts[0] = counts[0].max(1);

    let mut order: Vec<usize> = (0..PREFIXES.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(counts[i]));
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let reports: Mutex<Vec<Option<PrefixReport>>> =
        Mutex::new((0..PREFIXES.len()).map(|_| None).collect());
    let first_error: Mutex<Option<io::Error>> = Mutex::new(None);
    let start = std::time::Instant::now();
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.max(1) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = order.get(k) else { break };
                let mut rng = Rng::new(opts.seed.wrapping_mul(1_000_003).wrapping_add(i as u64));
                match write_prefix(opts, i, counts[i], &mut rng, &done, start) {
                    Ok(r) => reports.lock().unwrap()[i] = Some(r),
                    Err(e) => {
                        first_error.lock().unwrap().get_or_insert(e);
                        break;
                    }
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().unwrap() {
        return Err(e);
    }
    let reports: Vec<PrefixReport> = reports
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every prefix written"))
        .collect();
    let samples = pick_samples(opts, &reports);
    write_archive_toml(opts, &samples.service_ibi)?;
    fs::write(samples_path(&opts.root), samples.to_env())?;
    if opts.progress {
        eprintln!(
            "gen-archive: {} items in {:.1} s",
            opts.items,
            start.elapsed().as_secs_f64()
        );
    }
    Ok(samples)
}

fn write_archive_toml(opts: &Options, service: &str) -> io::Result<()> {
    let own = &PREFIXES[0];
    let text = format!(
        r#"# A generated Archive for benchmarks (bench/gen_archive.rs).
archiveaddress    = "{address}"
archiveserviceibi = "{service}"
platformsoftware  = "dpi.inpe.br/banon/1998/08.02.08.56"

[registration]
resolver        = "http://urlib.net/J8LNKB5R7W/3FUQHC5"
adminemail      = "archive-admin@example.org"
key             = "1234567890"
ip              = "{ip}"

[minting]
host        = "{host}"
port        = {port}
ip          = "{ip}"
granularity = 1

[access]
networks = ["150.163.0.0/16", "127.0.0.0/8"]
"#,
        address = opts.address,
        ip = own.ip,
        host = own.host,
        port = own.port,
    );
    fs::write(opts.root.join("archive.toml"), text)
}

/// Unique dates of one prefix, sorted.
fn dates(prefix: &Prefix, n: usize, rng: &mut Rng) -> Vec<i64> {
    let since = chrono::NaiveDate::from_ymd_opt(prefix.since, 1, 1)
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap()
        .and_utc()
        .timestamp()
        .max(FIRST);
    let g = prefix.granularity;
    let slots = ((LAST - since) / g) as u64;
    assert!(
        (n as u64) < slots / 2,
        "too many items for prefix {}: {n} in {slots} slots",
        prefix.host
    );
    let mut set = BTreeSet::new();
    while set.len() < n {
        set.insert(since + rng.below(slots) as i64 * g);
    }
    set.into_iter().collect()
}

const TITLES: [&str; 8] = [
    "CCSDS 643.0-B-1",
    "Relatorio Tecnico",
    "Dissertacao de Mestrado",
    "Annual Report",
    "Proceedings Paper",
    "Tese de Doutorado",
    "Manual do Usuario",
    "Atlas Solar",
];
const LANGS: [&str; 3] = ["pt", "en", "es"];

fn write_prefix(
    opts: &Options,
    index: usize,
    n: usize,
    rng: &mut Rng,
    done: &AtomicUsize,
    start: std::time::Instant,
) -> io::Result<PrefixReport> {
    let prefix = &PREFIXES[index];
    let ip: IpAddr = prefix.ip.parse().expect("prefix IP");
    let seconds = dates(prefix, n, rng);
    let mut report = PrefixReport {
        items: n,
        ..PrefixReport::default()
    };

    // Pass 1: kinds, forms and files.
    let mut specs: Vec<Spec> = Vec::with_capacity(n);
    let mut i = 0;
    while i < n {
        let date = IbiDate::new(seconds[i], "").expect("date in range");
        let minted = mint_ports(prefix.host, prefix.port, Some(ip), 800, &date)
            .map_err(|e| io::Error::other(e.to_string()))?;
        let rep = on_disk(&minted.rep, prefix);
        let kind = if index == 0 && i == 0 {
            Kind::Service
        } else if specs.last().is_some_and(|s: &Spec| s.metadata == Some(i)) {
            Kind::Metadata(i - 1)
        } else {
            match rng.below(100) {
                0..=1 => Kind::Deleted,
                2..=6 => Kind::Copy,
                _ => Kind::Original,
            }
        };
        let ibip_percent = match kind {
            Kind::Metadata(_) => 40,
            Kind::Service => 100,
            _ => 90,
        };
        let ibip = rng
            .chance(ibip_percent)
            .then(|| minted.ibip.clone())
            .flatten();
        let files = match rng.below(100) {
            0..=54 => Files::Named {
                bib: rng.chance(30),
            },
            55..=69 => Files::Single,
            70..=79 => Files::Latin1,
            80..=89 => Files::Index,
            _ => Files::Odd,
        };
        let language = match rng.below(100) {
            0..=49 => Some("pt"),
            50..=89 => Some("en"),
            90..=94 => Some("es"),
            _ => None,
        };
        let mut spec = Spec {
            seconds: seconds[i],
            kind,
            rep,
            ibip,
            language,
            next: None,
            metadata: None,
            translations: Vec::new(),
            restricted: false,
            files,
            withdrawn: false,
        };
        if opts.oai {
            if let Kind::Metadata(_) = kind {
                spec.withdrawn = rng.chance(2);
            }
        }
        let metadata_percent = if opts.oai { 100 } else { 30 };
        if kind == Kind::Original && i + 1 < n && rng.chance(metadata_percent) {
            spec.metadata = Some(i + 1);
            spec.restricted = rng.chance(3);
        }
        if matches!(kind, Kind::Metadata(_)) {
            spec.language = None;
        }
        specs.push(spec);
        i += 1;
    }

    // Pass 2: edition chains and translation groups among the originals.
    let originals: Vec<usize> = (0..n)
        .filter(|&i| specs[i].kind == Kind::Original)
        .collect();
    let mut k = 0;
    while k < originals.len() {
        let roll = rng.below(1000);
        if roll < 40 {
            // A chain of 2 to 4 editions: each names the next; the spelling of the
            // reference is the rep as stored (3 in 4) or the IBIp.
            let len = match rng.below(10) {
                0..=3 => 2,
                4..=7 => 3,
                _ => 4,
            };
            if k + len > originals.len() {
                break;
            }
            let members = &originals[k..k + len];
            for w in members.windows(2) {
                let target = &specs[w[1]];
                let reference = match (&target.ibip, rng.chance(25)) {
                    (Some(p), true) => p.as_str().to_string(),
                    _ => target.rep.as_str().to_string(),
                };
                specs[w[0]].next = Some(reference);
                specs[w[0]].restricted = false;
            }
            let tail = specs[members[len - 1]].metadata;
            if len == 3 && tail.is_some() {
                if report.chain_heads.is_empty() {
                    // The benchmarks' chain has the same shape in every Archive (rep
                    // references, IBIps, one language, named files, metadata only for
                    // the last edition and without IBIp), so that its cost compares
                    // across sizes.
                    for w in members.windows(2) {
                        specs[w[0]].next = Some(specs[w[1]].rep.as_str().to_string());
                    }
                    for &m in members {
                        let date = IbiDate::new(specs[m].seconds, "").expect("date");
                        let minted = mint_ports(prefix.host, prefix.port, Some(ip), 800, &date)
                            .map_err(|e| io::Error::other(e.to_string()))?;
                        let s = &mut specs[m];
                        s.ibip = minted.ibip;
                        s.language = Some("pt");
                        s.files = Files::Named { bib: false };
                        s.restricted = false;
                    }
                    // Only the last edition has metadata (the others' metadata items
                    // stay, unreferenced).
                    for &m in &members[..2] {
                        specs[m].metadata = None;
                    }
                    if let Some(t) = tail {
                        specs[t].ibip = None;
                    }
                }
                report
                    .chain_heads
                    .push(specs[members[0]].rep.as_str().to_string());
            }
            k += len;
        } else if roll < 100 {
            // Translations of one another: pt, en and maybe es.
            let len = 2 + rng.below(2) as usize;
            if k + len > originals.len() {
                break;
            }
            let members: Vec<usize> = originals[k..k + len].to_vec();
            for (j, &m) in members.iter().enumerate() {
                specs[m].language = Some(LANGS[j]);
            }
            for (j, &m) in members.iter().enumerate() {
                specs[m].translations = members
                    .iter()
                    .enumerate()
                    .filter(|&(jj, _)| jj != j)
                    .map(|(jj, &o)| (LANGS[jj], o))
                    .collect();
            }
            k += len;
        } else if roll < 110 {
            // The next edition is in another Archive.
            let m = originals[k];
            specs[m].next = Some(format!(
                "elsewhere.example.net/repo/{}",
                IbiDate::new(specs[m].seconds + 86_400, "")
                    .expect("date")
                    .rep_suffix()
            ));
            k += 1;
        } else {
            k += 1;
        }
    }

    // Samples: hits from the middle of the prefix, all of one shape (an original with a
    // named target and an IBIp, no relations), so that their cost compares across sizes.
    let plain_hit = |s: &Spec| {
        s.kind == Kind::Original
            && matches!(s.files, Files::Named { .. })
            && s.ibip.is_some()
            && s.next.is_none()
            && s.metadata.is_none()
            && s.translations.is_empty()
            && !s.restricted
    };
    for j in (n / 2..n).chain(0..n / 2) {
        if plain_hit(&specs[j]) {
            let s = &specs[j];
            let ibip = s.ibip.as_ref().expect("checked");
            report
                .hit
                .push((s.rep.as_str().to_string(), ibip.as_str().to_string()));
            break;
        }
    }
    report.used_seconds = seconds.iter().copied().collect();
    if let Some(&last) = seconds.last() {
        // A date between two items of this prefix that holds none.
        let mut t = seconds[seconds.len() / 2] + prefix.granularity;
        while report.used_seconds.contains(&t) {
            t += prefix.granularity;
        }
        let _ = last;
        let date = IbiDate::new(t, "").expect("date");
        let m = mint_ports(prefix.host, prefix.port, None, 800, &date)
            .map_err(|e| io::Error::other(e.to_string()))?;
        report.local_miss = Some(on_disk(&m.rep, prefix).as_str().to_string());
    }

    // Pass 3: write.
    let col = opts.root.join("col");
    let mut year_dir: Option<(String, PathBuf)> = None;
    let mut buf = String::with_capacity(1024);
    for (i, s) in specs.iter().enumerate() {
        let year = s.rep.year().to_string();
        if year_dir.as_ref().is_none_or(|(y, _)| *y != year) {
            let dir = col
                .join(s.rep.subdomain())
                .join(s.rep.word_port())
                .join(&year);
            fs::create_dir_all(&dir)?;
            year_dir = Some((year, dir));
        }
        let item_dir = year_dir.as_ref().unwrap().1.join(s.rep.day_time());
        fs::create_dir(&item_dir)?;
        buf.clear();
        item_toml(&mut buf, s, &specs);
        fs::write(item_dir.join("item.toml"), &buf)?;
        if s.kind == Kind::Service {
            report.service = Some(s.rep.as_str().to_string());
        }
        if !matches!(s.kind, Kind::Deleted | Kind::Service) && !s.withdrawn {
            let doc = item_dir.join("doc");
            fs::create_dir(&doc)?;
            let first = write_doc(&doc, s, i, opts.oai)?;
            if report.doc_path.is_none() && matches!(s.files, Files::Named { .. }) {
                let mut url = format!("/col/{}/doc/", s.rep.as_str());
                ::ibi::escape::push_url_path(&mut url, &first);
                report.doc_path = Some(url);
            }
        }
        if opts.progress {
            let d = done.fetch_add(1, Ordering::Relaxed) + 1;
            if d.is_multiple_of(50_000) {
                eprintln!(
                    "gen-archive: {d}/{} items, {:.0} s",
                    opts.items,
                    start.elapsed().as_secs_f64()
                );
            }
        }
    }
    Ok(report)
}

/// The rep as the prefix's directory spells it.
fn on_disk(rep: &Rep, prefix: &Prefix) -> Rep {
    match prefix.disk_word {
        None => rep.clone(),
        Some(word) => Rep::parse(&format!("{}/{word}/{}", rep.subdomain(), rep.suffix()))
            .expect("on-disk spelling parses"),
    }
}

fn item_toml(out: &mut String, s: &Spec, specs: &[Spec]) {
    let state = match s.kind {
        Kind::Copy => "Copy",
        Kind::Deleted => "Deleted",
        _ if s.withdrawn => "Deleted",
        _ => "Original",
    };
    let _ = writeln!(out, "state = \"{state}\"");
    if let Some(p) = &s.ibip {
        let _ = writeln!(out, "ibip = \"{}\"", p.as_str());
    }
    // Updated a while after the IBI was minted.
    let updated = s.seconds + (s.seconds % 7_777) * 60;
    let ts = IbiDate::new(updated, "").expect("date").to_iso();
    let _ = writeln!(out, "timestamp = {ts}");
    if matches!(s.kind, Kind::Deleted | Kind::Service) {
        return;
    }
    if let Kind::Metadata(_) = s.kind {
        out.push_str("contenttype = \"Metadata\"\ntarget = \"metadata.html\"\n\n[formats]\noai_dc = \"oai_dc.xml\"\n");
        return;
    }
    match s.files {
        Files::Named { .. } => {
            let _ = writeln!(out, "target = \"{}\"", named_file(s));
        }
        Files::Latin1 => {
            let _ = writeln!(out, "target = \"Relatório Final {}.pdf\"", s.rep.day_time());
        }
        Files::Odd => {
            let _ = writeln!(out, "target = \"{}\"", odd_file(s));
        }
        Files::Single | Files::Index => {}
    }
    if let Some(l) = s.language {
        let _ = writeln!(out, "language = \"{l}\"");
    }
    if let Some(next) = &s.next {
        let _ = writeln!(out, "nextedition = \"{next}\"");
    }
    if let Some(m) = s.metadata {
        let _ = writeln!(out, "metadata = \"{}\"", specs[m].rep.as_str());
        if s.restricted {
            out.push_str("restricted = true\n");
        }
    }
    if !s.translations.is_empty() {
        out.push_str("\n[translations]\n");
        for (lang, j) in &s.translations {
            let _ = writeln!(out, "{lang} = \"{}\"", specs[*j].rep.as_str());
        }
    }
}

/// The oai_dc.xml of a metadata item under `Options::oai`: a Dublin Core record with its
/// namespaces and schema location, as `ibi-archive new --dc` writes one.
fn oai_dc_record(s: &Spec) -> String {
    let title = TITLES[(s.seconds as usize / 60) % TITLES.len()];
    let date = IbiDate::new(s.seconds, "").expect("date").to_iso();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <oai_dc:dc xmlns:oai_dc=\"http://www.openarchives.org/OAI/2.0/oai_dc/\" \
         xmlns:dc=\"http://purl.org/dc/elements/1.1/\" \
         xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" \
         xsi:schemaLocation=\"http://www.openarchives.org/OAI/2.0/oai_dc/ \
         http://www.openarchives.org/OAI/2.0/oai_dc.xsd\">\n\
         \x20 <dc:title>{title} &amp; notes</dc:title>\n\
         \x20 <dc:creator>Silva, João</dc:creator>\n\
         \x20 <dc:date>{}</dc:date>\n\
         \x20 <dc:type>Text</dc:type>\n\
         \x20 <dc:identifier>{}</dc:identifier>\n\
         </oai_dc:dc>\n",
        &date[..10],
        s.rep.as_str()
    )
}

fn named_file(s: &Spec) -> String {
    let title = TITLES[(s.seconds as usize / 60) % TITLES.len()];
    format!("{title} {}.pdf", s.rep.day_time())
}

fn odd_file(s: &Spec) -> String {
    format!("Dados #{} (100% final).txt", s.rep.day_time())
}

/// Writes the item's files; returns the name of the first (the target), as bytes.
fn write_doc(doc: &Path, s: &Spec, i: usize, oai: bool) -> io::Result<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    let body = format!("item {i}\n");
    if let Kind::Metadata(_) = s.kind {
        fs::write(
            doc.join("metadata.html"),
            "<html><body>metadata</body></html>\n",
        )?;
        fs::write(
            doc.join("oai_dc.xml"),
            if oai {
                oai_dc_record(s)
            } else {
                "<oai_dc:dc><dc:title>t</dc:title></oai_dc:dc>\n".to_string()
            },
        )?;
        return Ok(b"metadata.html".to_vec());
    }
    let first: Vec<u8> = match s.files {
        Files::Named { bib } => {
            if bib {
                fs::write(doc.join("reference.bib"), "@misc{x}\n")?;
            }
            named_file(s).into_bytes()
        }
        Files::Single => b"article.pdf".to_vec(),
        Files::Latin1 => {
            let mut name = b"Relat\xf3rio Final ".to_vec();
            name.extend_from_slice(s.rep.day_time().as_bytes());
            name.extend_from_slice(b".pdf");
            name
        }
        Files::Index => {
            fs::write(doc.join("figure.png"), "png\n")?;
            b"index.html".to_vec()
        }
        Files::Odd => odd_file(s).into_bytes(),
    };
    fs::write(doc.join(std::ffi::OsStr::from_bytes(&first)), body)?;
    Ok(first)
}

fn pick_samples(opts: &Options, reports: &[PrefixReport]) -> Samples {
    // A hit by rep in the Archive's own prefix, a hit by IBIp in the next biggest.
    let hit_rep = reports[0]
        .hit
        .first()
        .map(|h| h.0.clone())
        .unwrap_or_default();
    let hit_ibip = reports[1]
        .hit
        .first()
        .map(|h| h.1.clone())
        .unwrap_or_default();
    let chain_head = reports
        .iter()
        .flat_map(|r| r.chain_heads.iter())
        .next()
        .cloned()
        .unwrap_or_default();
    // A date (with seconds) that no prefix uses, coded for another server.
    let mut t: i64 = 1_381_000_000 + 17;
    while reports.iter().any(|r| r.used_seconds.contains(&t)) {
        t += 1;
    }
    let date = IbiDate::new(t, "").expect("date");
    let foreign: IpAddr = "198.51.100.7".parse().unwrap();
    let miss_ibip = mint_ports("www.example.net", 80, Some(foreign), 800, &date)
        .expect("mint")
        .ibip
        .expect("ibip")
        .as_str()
        .to_string();
    let miss_rep = format!("nowhere.example.net/repo/{}", date.rep_suffix());
    Samples {
        items: opts.items,
        service_ibi: reports[0].service.clone().unwrap_or_default(),
        hit_rep,
        hit_ibip,
        miss_rep,
        miss_rep_local: reports[0].local_miss.clone().unwrap_or_default(),
        miss_ibip,
        chain_head,
        doc_path: reports[0].doc_path.clone().unwrap_or_default(),
    }
}

/// The cached Archive of `items` items under `dir` (generated on first use), and its
/// samples.
pub fn cached(dir: &Path, items: usize, seed: u64) -> io::Result<(PathBuf, Samples)> {
    let root = dir.join(format!("archive-v{GENERATOR_VERSION}-n{items}-s{seed}"));
    // var/col-prefixes up to date, as `ibi-archive prefixes` leaves it: lookups by IBIp
    // are measured as an administrator's Archive answers them.
    let remember = |root: &Path| {
        ibi_archive::store::Store::remember_prefixes(
            root,
            std::time::Duration::from_secs(10),
            &::ibi::time::SystemClock,
        )
    };
    if let Ok(text) = fs::read_to_string(samples_path(&root)) {
        if let Some(s) = Samples::from_env(&text) {
            remember(&root);
            return Ok((root, s));
        }
    }
    if root.exists() {
        fs::remove_dir_all(&root)?;
    }
    let opts = Options {
        root: root.clone(),
        items,
        seed,
        jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
        address: "127.0.0.1:8080".into(),
        progress: true,
        oai: false,
    };
    let samples = generate(&opts)?;
    remember(&root);
    Ok((root, samples))
}
