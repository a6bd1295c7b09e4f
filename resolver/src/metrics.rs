//! `/metrics`: the resolver's counters in the Prometheus (OpenMetrics) text format, by
//! the prometheus-client crate. Resolutions by outcome and their latency, each Archive's
//! request latency and health, the location memory's hits and misses, overload refusals.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use crate::health::HealthBook;

/// The Content-Type of what [`Metrics::render`] writes.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ArchiveLabels {
    archive: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: String,
}

/// Buckets from 0.25 ms doubling to ~8 s (16 buckets).
fn latency_buckets() -> impl Iterator<Item = f64> {
    exponential_buckets(0.000_25, 2.0, 16)
}

pub struct Metrics {
    registry: Registry,
    resolutions: Family<OutcomeLabels, Counter>,
    resolution_seconds: Histogram,
    archive_seconds: Family<ArchiveLabels, Histogram>,
    archive_requests: Family<ArchiveResult, Counter>,
    archive_up: Family<ArchiveLabels, Gauge>,
    archive_failures: Family<ArchiveLabels, Gauge>,
    memory: Family<ResultLabels, Counter>,
    overloaded: Counter,
    acknowledgments: Family<ResultLabels, Counter>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ArchiveResult {
    archive: String,
    result: String,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("ibi_resolver");
        let resolutions = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "resolutions",
            "Resolutions of persistent URLs, by outcome (found, not_found, no_translation, deleted, suspicion, no_original, edition_chain, bad_request)",
            resolutions.clone(),
        );
        let resolution_seconds = Histogram::new(latency_buckets());
        registry.register(
            "resolution_seconds",
            "Time from a persistent URL's request to its answer",
            resolution_seconds.clone(),
        );
        let archive_seconds = Family::<ArchiveLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(latency_buckets())
        });
        registry.register(
            "archive_request_seconds",
            "Time of each request to an Archive that ended (answered, failed or timed out)",
            archive_seconds.clone(),
        );
        let archive_requests = Family::<ArchiveResult, Counter>::default();
        registry.register(
            "archive_requests",
            "Requests to each Archive, by result (answered, failed, timed_out)",
            archive_requests.clone(),
        );
        let archive_up = Family::<ArchiveLabels, Gauge>::default();
        registry.register(
            "archive_up",
            "1 while an included Archive is asked, 0 while it is dormant",
            archive_up.clone(),
        );
        let archive_failures = Family::<ArchiveLabels, Gauge>::default();
        registry.register(
            "archive_consecutive_failures",
            "Failures of each Archive since its last answer",
            archive_failures.clone(),
        );
        let memory = Family::<ResultLabels, Counter>::default();
        registry.register(
            "location_memory",
            "Resolutions that asked the location memory: hit (the remembered Archive satisfied it), stale (it did not: every Archive asked), miss (nothing remembered)",
            memory.clone(),
        );
        let overloaded = Counter::default();
        registry.register(
            "overloaded",
            "Requests answered 503 because as many resolutions as allowed were under way",
            overloaded.clone(),
        );
        let acknowledgments = Family::<ResultLabels, Counter>::default();
        registry.register(
            "acknowledgments",
            "Acknowledgments sent to Archives, by result (sent, failed, dropped)",
            acknowledgments.clone(),
        );
        Metrics {
            registry,
            resolutions,
            resolution_seconds,
            archive_seconds,
            archive_requests,
            archive_up,
            archive_failures,
            memory,
            overloaded,
            acknowledgments,
        }
    }

    pub fn resolution(&self, outcome: &str, took: Duration) {
        self.resolutions
            .get_or_create(&OutcomeLabels {
                outcome: outcome.to_string(),
            })
            .inc();
        self.resolution_seconds.observe(took.as_secs_f64());
    }

    /// A request to `archive` that ended with `result` (`answered`, `failed`,
    /// `timed_out`) after `took`.
    pub fn archive_request(&self, archive: &str, result: &str, took: Duration) {
        let label = ArchiveLabels {
            archive: archive.to_string(),
        };
        self.archive_seconds
            .get_or_create(&label)
            .observe(took.as_secs_f64());
        self.archive_requests
            .get_or_create(&ArchiveResult {
                archive: label.archive,
                result: result.to_string(),
            })
            .inc();
    }

    /// `hit`, `stale` or `miss`.
    pub fn memory(&self, result: &str) {
        self.memory
            .get_or_create(&ResultLabels {
                result: result.to_string(),
            })
            .inc();
    }

    pub fn overloaded(&self) {
        self.overloaded.inc();
    }

    /// `sent`, `failed` or `dropped`.
    pub fn acknowledgment(&self, result: &str) {
        self.acknowledgments
            .get_or_create(&ResultLabels {
                result: result.to_string(),
            })
            .inc();
    }

    /// The text of `/metrics`, with every included Archive's health as it is now.
    pub fn render(&self, health: &HealthBook) -> String {
        self.archive_up.clear();
        self.archive_failures.clear();
        for (archive, s) in health.all() {
            let label = ArchiveLabels { archive };
            self.archive_up
                .get_or_create(&label)
                .set(i64::from(!s.dormant));
            self.archive_failures
                .get_or_create(&label)
                .set(i64::from(s.failures));
        }
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
