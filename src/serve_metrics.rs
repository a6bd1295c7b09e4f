//! `/metrics` of `ibi-archive serve`, for whoever runs it (asked from this machine:
//! loopback only): requests by kind and outcome, the time to make their answers, the
//! acknowledgments counted, the build and the standard `process_*` figures, in the
//! Prometheus (OpenMetrics) text format the resolver's `/metrics` uses. The CGI program
//! has none (each of its processes answers one request).
//!
//! A request's kind comes from its path and query as the routes read them: a file of an
//! item (`file`), the service's `urlRequest`, `acknowledgment`,
//! `inclusionConfirmationRequest` (`url_request`, `acknowledgment`, `confirmation`), the
//! OAI-PMH provider (`oai`), anything else (`other`: the identity, pages, not found);
//! its outcome is the class of its status (`2xx` … `5xx`). Every series is there at 0
//! from the start.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use ::ibi::query::Query;

/// The Content-Type of [`Metrics::render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The kind of a request, as its counters name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    File,
    UrlRequest,
    Acknowledgment,
    Confirmation,
    Oai,
    Other,
}

impl Kind {
    /// Every kind, in the order of its counters.
    pub const ALL: [Kind; 6] = [
        Kind::File,
        Kind::UrlRequest,
        Kind::Acknowledgment,
        Kind::Confirmation,
        Kind::Oai,
        Kind::Other,
    ];

    /// Its value of the label `kind`.
    pub fn label(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::UrlRequest => "url_request",
            Kind::Acknowledgment => "acknowledgment",
            Kind::Confirmation => "confirmation",
            Kind::Oai => "oai",
            Kind::Other => "other",
        }
    }
}

/// The outcomes: the classes of the status.
pub const OUTCOMES: [&str; 4] = ["2xx", "3xx", "4xx", "5xx"];
/// The upper bounds of the latency's buckets, in seconds: 0.25 ms doubling to about 8 s,
/// as the resolver's.
const BUCKETS: usize = 16;

/// What `serve` counted since it started.
pub struct Metrics {
    requests: [[AtomicU64; OUTCOMES.len()]; Kind::ALL.len()],
    /// Requests whose answer took at most each bucket's bound (not cumulated).
    buckets: [AtomicU64; BUCKETS + 1],
    /// The time of all answers, in microseconds.
    micros: AtomicU64,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics {
            requests: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            micros: AtomicU64::new(0),
        }
    }
}

/// The bound of bucket `i`, in seconds.
fn bound(i: usize) -> f64 {
    0.000_25 * f64::from(1u32 << i)
}

/// The kind of a request for `path` (as sent, %-escaped) with `query`.
pub fn kind_of(path: &str, query: &str) -> Kind {
    if crate::layout::split_doc_url_path(path.as_bytes()).is_some() {
        return Kind::File;
    }
    let Ok(query) = Query::parse(query.as_bytes()) else {
        return Kind::Other;
    };
    match query.get("servicesubject") {
        Some(b"urlRequest") => Kind::UrlRequest,
        Some(b"acknowledgment") => Kind::Acknowledgment,
        Some(b"inclusionConfirmationRequest") => Kind::Confirmation,
        Some(_) => Kind::Other,
        None if crate::oai::is_oai(&query) => Kind::Oai,
        None => Kind::Other,
    }
}

/// The outcome of `status`.
fn outcome_of(status: u16) -> usize {
    match status {
        300..=399 => 1,
        400..=499 => 2,
        500.. => 3,
        _ => 0,
    }
}

impl Metrics {
    /// A request of kind `kind` ([`kind_of`]) answered `status` in `took`.
    pub fn request(&self, kind: Kind, status: u16, took: Duration) {
        self.requests[kind as usize][outcome_of(status)].fetch_add(1, Ordering::Relaxed);
        let secs = took.as_secs_f64();
        let bucket = (0..BUCKETS).find(|&i| secs <= bound(i)).unwrap_or(BUCKETS);
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        self.micros.fetch_add(
            u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    /// The text of `/metrics` now, with `acknowledgments` counted and this process's
    /// figures.
    pub fn render(&self, acknowledgments: u64) -> String {
        let mut out = String::new();
        out.push_str("# HELP ibi_archive_requests Requests answered by serve, by kind (file, url_request, acknowledgment, confirmation, oai, other) and outcome (the class of the status).\n# TYPE ibi_archive_requests counter\n");
        for kind in Kind::ALL {
            for (o, outcome) in OUTCOMES.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "ibi_archive_requests_total{{kind=\"{}\",outcome=\"{outcome}\"}} {}",
                    kind.label(),
                    self.requests[kind as usize][o].load(Ordering::Relaxed)
                );
            }
        }
        out.push_str("# HELP ibi_archive_request_seconds Time from a request's head to its answer made (a file's bytes sent after).\n# TYPE ibi_archive_request_seconds histogram\n");
        let mut cumulated = 0;
        for i in 0..=BUCKETS {
            cumulated += self.buckets[i].load(Ordering::Relaxed);
            let le = if i == BUCKETS {
                "+Inf".to_string()
            } else {
                format!("{:?}", bound(i))
            };
            let _ = writeln!(
                out,
                "ibi_archive_request_seconds_bucket{{le=\"{le}\"}} {cumulated}"
            );
        }
        let _ = writeln!(
            out,
            "ibi_archive_request_seconds_sum {:?}\nibi_archive_request_seconds_count {cumulated}",
            self.micros.load(Ordering::Relaxed) as f64 / 1e6
        );
        let _ = writeln!(
            out,
            "# HELP ibi_archive_acknowledgments_counted Acknowledgments counted in var/acknowledgments.log by this serve.\n# TYPE ibi_archive_acknowledgments_counted counter\nibi_archive_acknowledgments_counted_total {acknowledgments}"
        );
        let _ = writeln!(
            out,
            "# HELP ibi_archive_build The Archive's version.\n# TYPE ibi_archive_build info\nibi_archive_build_info{{version=\"{}\"}} 1",
            env!("CARGO_PKG_VERSION")
        );
        if let Some(f) = ::ibi::process::figures() {
            let (name, help) = ::ibi::process::CPU_SECONDS;
            let _ = writeln!(
                out,
                "# HELP {name} {help}.\n# TYPE {name} counter\n{name}_total {:?}",
                f.cpu_seconds
            );
            for (name, help, value) in f.gauges() {
                let _ = writeln!(
                    out,
                    "# HELP {name} {help}.\n# TYPE {name} gauge\n{name} {value:?}"
                );
            }
        }
        out.push_str("# EOF\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_by_kind_outcome_and_time() {
        let m = Metrics::default();
        assert_eq!(
            kind_of("/col/a.b/c/2020/01.02.03.04/doc/x.pdf", ""),
            Kind::File
        );
        assert_eq!(
            kind_of("/a.b/c/2020/01.02.03.04", "servicesubject=urlRequest&x=1"),
            Kind::UrlRequest
        );
        assert_eq!(
            kind_of("/s", "servicesubject=acknowledgment"),
            Kind::Acknowledgment
        );
        assert_eq!(
            kind_of("/s", "servicesubject=inclusionConfirmationRequest"),
            Kind::Confirmation
        );
        assert_eq!(kind_of("/s", "verb=Identify"), Kind::Oai);
        assert_eq!(kind_of("/s", "servicesubject=nothing"), Kind::Other);
        assert_eq!(kind_of("/s", "%zz"), Kind::Other);
        m.request(Kind::File, 200, Duration::from_micros(100));
        m.request(Kind::UrlRequest, 404, Duration::from_millis(3));
        m.request(Kind::UrlRequest, 302, Duration::from_secs(20));
        let text = m.render(7);
        for line in [
            "ibi_archive_requests_total{kind=\"file\",outcome=\"2xx\"} 1\n",
            "ibi_archive_requests_total{kind=\"url_request\",outcome=\"4xx\"} 1\n",
            "ibi_archive_requests_total{kind=\"url_request\",outcome=\"3xx\"} 1\n",
            "ibi_archive_requests_total{kind=\"oai\",outcome=\"5xx\"} 0\n",
            // 0.1 ms in the first bucket; 3 ms in the one of 4 ms (0.25 × 2^4); 20 s above all.
            "ibi_archive_request_seconds_bucket{le=\"0.00025\"} 1\n",
            "ibi_archive_request_seconds_bucket{le=\"0.002\"} 1\n",
            "ibi_archive_request_seconds_bucket{le=\"0.004\"} 2\n",
            "ibi_archive_request_seconds_bucket{le=\"8.192\"} 2\n",
            "ibi_archive_request_seconds_bucket{le=\"+Inf\"} 3\n",
            "ibi_archive_request_seconds_sum 20.0031\n",
            "ibi_archive_request_seconds_count 3\n",
            "ibi_archive_acknowledgments_counted_total 7\n",
        ] {
            assert!(text.contains(line), "{line} missing from\n{text}");
        }
        assert!(text.ends_with("\n# EOF\n"), "{text}");
    }
}
