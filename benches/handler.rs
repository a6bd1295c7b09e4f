//! In-process benchmarks of the Archive service: `ibi_archive::cgi::handle` on a request
//! built in memory (what one CGI run does after the process has started, archive.toml
//! included), over generated Archives of 1,000 and 100,000 items (and 1,000,000 when
//! `IBI_BENCH_ITEMS` asks: `IBI_BENCH_ITEMS=1000,100000,1000000 cargo bench`).
//!
//! The Archives are generated once (bench/archive_gen.rs) into
//! `$CARGO_TARGET_DIR/bench-archives/` (default `target/bench-archives/`) and reused.
//! Medians are in `<target>/criterion/handler_<N>/<case>/new/estimates.json`;
//! bench/run.sh collects them. See BENCHMARKS.md.

#[path = "../bench/archive_gen.rs"]
mod archive_gen;

use std::path::{Path, PathBuf};
use std::time::Duration;

use ::ibi::Ibi;
use criterion::{criterion_group, criterion_main, Criterion};
use ibi_archive::archive::Archive;
use ibi_archive::cgi::{handle, CgiRequest};
use ibi_archive::config::Config;

/// Where generated Archives are kept between runs.
pub fn cache_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let target = if target.is_absolute() {
        target
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(target)
    };
    target.join("bench-archives")
}

fn sizes() -> Vec<usize> {
    let spec = std::env::var("IBI_BENCH_ITEMS").unwrap_or_else(|_| "1000,100000".into());
    spec.split(',')
        .filter_map(|s| s.trim().replace('_', "").parse().ok())
        .filter(|&n| n > 0)
        .collect()
}

fn url_request(root: &Path, ibi: &str, verbs: Option<&str>) -> CgiRequest {
    let mut q = format!(
        "servicesubject=urlRequest&clientinformation.ipaddress=127.0.0.1&parsedibiurl.ibi={ibi}"
    );
    if let Some(v) = verbs {
        q.push_str("&parsedibiurl.verblist=");
        q.push_str(&v.replace(' ', "+"));
    }
    let mut req = CgiRequest::get(root.to_path_buf(), q.as_bytes());
    req.remote_addr = Some([127, 0, 0, 1].into());
    req
}

fn handler(c: &mut Criterion) {
    let now = ::ibi::time::SystemClock::now();
    for n in sizes() {
        let (root, s) = archive_gen::cached(&cache_dir(), n, 1)
            .unwrap_or_else(|e| panic!("cannot generate the Archive of {n} items: {e}"));
        let cases: [(&str, CgiRequest, Option<usize>); 6] = [
            ("hit_rep", url_request(&root, &s.hit_rep, None), Some(200)),
            ("hit_ibip", url_request(&root, &s.hit_ibip, None), Some(200)),
            ("miss_rep", url_request(&root, &s.miss_rep, None), None),
            (
                "miss_rep_local",
                url_request(&root, &s.miss_rep_local, None),
                None,
            ),
            ("miss_ibip", url_request(&root, &s.miss_ibip, None), None),
            (
                "filtered_chain",
                url_request(
                    &root,
                    &s.chain_head,
                    Some("GetLastEdition GetMetadata(oai_dc)"),
                ),
                Some(200),
            ),
        ];
        let mut group = c.benchmark_group(format!("handler_{n}"));
        for (name, req, hit) in &cases {
            // Each answer must be what the case says before it is timed.
            let a = handle(req, now);
            assert_eq!(a.status, 200, "{name}: {a:?}");
            assert!(a.log.is_empty(), "{name}: {:?}", a.log);
            match hit {
                Some(_) => assert!(
                    a.body.windows(3).any(|w| w == b"url"),
                    "{name}: no url in {}",
                    String::from_utf8_lossy(&a.body)
                ),
                None => assert!(a.body.is_empty(), "{name}: not a miss"),
            }
            group.bench_function(*name, |b| b.iter(|| handle(req, now)));
        }
        // The unfiltered list (Example 9.2) over the Archive's whole relation subset, as
        // `ibi-archive describe` makes it: archive.toml read, then MONTARLISTADEURL.
        let head = Ibi::parse(&s.chain_head).expect("chain head parses");
        group.bench_function("describe", |b| {
            b.iter(|| {
                let config = Config::load(&root).expect("archive.toml");
                Archive::new(&root, config).url_list(&head, None, now)
            })
        });
        group.finish();
    }
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(50)
        .configure_from_args()
}

criterion_group! {
    name = benches;
    config = config();
    targets = handler
}
criterion_main!(benches);
