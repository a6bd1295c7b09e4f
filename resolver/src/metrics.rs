//! `/metrics`: the resolver's counters in the Prometheus (OpenMetrics) text format, by
//! the prometheus-client crate. Resolutions by outcome and their latency, each Archive's
//! request latency and health, the location memory's hits and misses, overload refusals;
//! whether the registry answers, the build, and the standard `process_*` figures.
//!
//! A counter of a fixed set of labels (outcomes, results, bounds) is there at 0 for each
//! from the start, so that an alert on its rate sees it before its first event; only
//! those labelled by Archive appear with their Archive.

use std::sync::Arc;
use std::time::Duration;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Registry;

use crate::labels::{Acknowledgment, Limit, MemoryUse, Move, Request, Resolution};

use crate::health::HealthBook;

/// The Content-Type of what [`Metrics::render`] writes.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: Resolution,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ArchiveLabels {
    archive: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MemoryLabels {
    result: MemoryUse,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AcknowledgmentLabels {
    result: Acknowledgment,
}

/// Buckets from 0.25 ms doubling to ~8 s (16 buckets).
fn latency_buckets() -> impl Iterator<Item = f64> {
    exponential_buckets(0.000_25, 2.0, 16)
}

pub struct Metrics {
    registry: Registry,
    registry_up: Gauge,
    resolutions: Family<OutcomeLabels, Counter>,
    resolution_seconds: Histogram,
    archive_seconds: Family<ArchiveLabels, Histogram>,
    archive_requests: Family<ArchiveResult, Counter>,
    memory: Family<MemoryLabels, Counter>,
    overloaded: Counter,
    acknowledgments: Family<AcknowledgmentLabels, Counter>,
    conflicts: Family<ArchiveLabels, Counter>,
    suspected: Family<ArchiveLabels, Counter>,
    throttled: Family<LimitLabels, Counter>,
    abandoned: Counter,
    relayed: Counter,
    moves: Family<MoveLabels, Counter>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LimitLabels {
    limit: Limit,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ArchiveResult {
    archive: String,
    result: Request,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MoveLabels {
    archive: String,
    result: Move,
}

/// Each Archive's health, read from the book at each scrape (so that scrapes at the same
/// time never see each other's half-written gauges, and an excluded Archive is gone).
#[derive(Debug)]
struct HealthGauges(Arc<HealthBook>);

/// A gauge's value from an Archive's health.
type GaugeOf = fn(&crate::health::Snapshot) -> i64;

impl Collector for HealthGauges {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let all = self.0.all();
        let gauges: [(&str, &str, GaugeOf); 2] = [
            (
                "archive_up",
                "1 while an included Archive is asked, 0 while it is dormant",
                |s| s.state.up(),
            ),
            (
                "archive_consecutive_failures",
                "Failures of each Archive since its last answer",
                |s| i64::from(s.failures),
            ),
        ];
        for (name, help, value) in gauges {
            let mut family =
                encoder.encode_descriptor(name, help, None, ConstGauge::new(0i64).metric_type())?;
            for (archive, snapshot) in &all {
                let label = ArchiveLabels {
                    archive: archive.clone(),
                };
                ConstGauge::new(value(snapshot)).encode(family.encode_family(&label)?)?;
            }
        }
        Ok(())
    }
}

/// The standard `process_*` metrics, read from /proc at each scrape ([`ibi::process`]).
#[derive(Debug)]
struct ProcessFigures;

impl Collector for ProcessFigures {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(f) = ibi::process::figures() else {
            return Ok(());
        };
        let counter = ConstCounter::new(f.cpu_seconds);
        let (name, help) = ibi::process::CPU_SECONDS;
        counter.encode(encoder.encode_descriptor(name, help, None, counter.metric_type())?)?;
        for (name, help, value) in f.gauges() {
            let gauge = ConstGauge::new(value);
            gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)?;
        }
        Ok(())
    }
}

/// A family with a series at 0 for each of `labels`.
fn at_zero<V: Copy, L: EncodeLabelSet + Clone + std::hash::Hash + Eq + std::fmt::Debug>(
    values: &[V],
    label: impl Fn(V) -> L,
) -> Family<L, Counter> {
    let family = Family::<L, Counter>::default();
    for v in values {
        let _ = family.get_or_create(&label(*v));
    }
    family
}

impl Metrics {
    /// The resolver's metrics, each Archive's health read from `health`.
    pub fn new(health: Arc<HealthBook>) -> Metrics {
        // The process's figures under their standard names; the resolver's own under its
        // prefix.
        let mut root = Registry::default();
        root.register_collector(Box::new(ProcessFigures));
        let registry = root.sub_registry_with_prefix("ibi_resolver");
        registry.register(
            "build",
            "The resolver's version",
            Info::new(vec![("version", env!("CARGO_PKG_VERSION"))]),
        );
        let registry_up = Gauge::default();
        registry_up.set(1);
        registry.register(
            "registry_up",
            "1 while the registry answered its last call, 0 while it is out of reach (resolutions then go on with the Archives and the memory held)",
            registry_up.clone(),
        );
        let resolutions = at_zero(Resolution::ALL, |outcome| OutcomeLabels { outcome });
        registry.register(
            "resolutions",
            "Resolutions of persistent URLs, by outcome (found, not_found, unavailable: nothing found while an Archive did not answer, no_translation, deleted, suspicion, no_original, unverifiable, chain, bad_request, timed_out: beyond the longest a resolution may take)",
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
            "Requests to each Archive, by result (answered, failed, timed_out: failures; overloaded: 503 or 429 until the timeout, never a failure; not_sent: the resolver's own limit; refused: its address outside the networks Archives may have)",
            archive_requests.clone(),
        );
        registry.register_collector(Box::new(HealthGauges(health)));
        let memory = at_zero(MemoryUse::ALL, |result| MemoryLabels { result });
        registry.register(
            "location_memory",
            "Resolutions that asked the location memory: hit (the remembered Archive satisfied it), stale (it did not: every Archive asked), verify (remembered past its expiry: every Archive asked, the remembered one preferred), home (nothing remembered; the IBI's home, asked alone, satisfied it), home_miss (it did not: every other Archive asked), miss (nothing remembered, no home)",
            memory.clone(),
        );
        let overloaded = Counter::default();
        registry.register(
            "overloaded",
            "Requests answered 503 because as many resolutions as allowed were under way",
            overloaded.clone(),
        );
        let acknowledgments = at_zero(Acknowledgment::ALL, |result| AcknowledgmentLabels {
            result,
        });
        registry.register(
            "acknowledgments",
            "Acknowledgments sent to Archives, by result (sent, failed, dropped)",
            acknowledgments.clone(),
        );
        let conflicts = Family::<ArchiveLabels, Counter>::default();
        registry.register(
            "conflicts",
            "Claims of an IBI against the Archive that holds it, by the Archive that made them: the Original of an IBI remembered at another Archive, or whose home claims it too; or a file or relation the remembered or home Archive, claiming the Original, says it does not have",
            conflicts.clone(),
        );
        let suspected = Family::<ArchiveLabels, Counter>::default();
        registry.register(
            "suspected",
            "Times an Archive came under suspicion, for answering against the homes of several IBIs (its answers then decide nothing for IBIs it may not hold)",
            suspected.clone(),
        );
        let throttled = at_zero(Limit::ALL, |limit| LimitLabels { limit });
        registry.register(
            "throttled",
            "Requests answered 429 because their client network was beyond a [limits] per_client_ bound, by bound (resolutions, misses, connections)",
            throttled.clone(),
        );
        let relayed = Counter::default();
        registry.register(
            "loops",
            "Resolutions asked by an Archive while this resolver was asking it about the same IBI, answered 508",
            relayed.clone(),
        );
        let abandoned = Counter::default();
        registry.register(
            "abandoned",
            "Requests whose client closed the connection before the answer (logged with status 499)",
            abandoned.clone(),
        );
        let moves = Family::<MoveLabels, Counter>::default();
        registry.register(
            "archive_moves",
            "Inclusions of an Archive at another address than the one recorded, by Archive and result (moved; refused: it was included and still answered at the address recorded)",
            moves.clone(),
        );
        Metrics {
            registry: root,
            registry_up,
            resolutions,
            resolution_seconds,
            archive_seconds,
            archive_requests,
            memory,
            overloaded,
            acknowledgments,
            conflicts,
            suspected,
            throttled,
            abandoned,
            relayed,
            moves,
        }
    }

    /// Whether the registry answered its last call.
    pub fn registry_reachable(&self, yes: bool) {
        self.registry_up.set(i64::from(yes));
    }

    /// An inclusion of `archive` at another address: `moved` or `refused`.
    pub fn archive_move(&self, archive: &str, result: Move) {
        self.moves
            .get_or_create(&MoveLabels {
                archive: archive.to_string(),
                result,
            })
            .inc();
    }

    /// `archive` claimed the Original of an IBI remembered at another Archive.
    pub fn conflict(&self, archive: &str) {
        self.conflicts
            .get_or_create(&ArchiveLabels {
                archive: archive.to_string(),
            })
            .inc();
    }

    /// A resolution asked by an Archive being asked about its IBI ([`crate::loops`]).
    pub fn relayed(&self) {
        self.relayed.inc();
    }

    /// `archive` came under suspicion ([`crate::suspicion`]).
    pub fn suspected(&self, archive: &str) {
        self.suspected
            .get_or_create(&ArchiveLabels {
                archive: archive.to_string(),
            })
            .inc();
    }

    /// A request refused by a per-client bound (`resolutions`, `misses`, `connections`).
    pub fn throttled(&self, limit: Limit) {
        self.throttled.get_or_create(&LimitLabels { limit }).inc();
    }

    pub fn abandoned(&self) {
        self.abandoned.inc();
    }

    pub fn resolution(&self, outcome: Resolution, took: Duration) {
        self.resolutions
            .get_or_create(&OutcomeLabels { outcome })
            .inc();
        self.resolution_seconds.observe(took.as_secs_f64());
    }

    /// A request to `archive` that ended with `result` (`answered`, `failed`,
    /// `timed_out`, `overloaded`, `not_sent`, `refused`) after `took`.
    pub fn archive_request(&self, archive: &str, result: Request, took: Duration) {
        let label = ArchiveLabels {
            archive: archive.to_string(),
        };
        self.archive_seconds
            .get_or_create(&label)
            .observe(took.as_secs_f64());
        self.archive_requests
            .get_or_create(&ArchiveResult {
                archive: label.archive,
                result,
            })
            .inc();
    }

    /// `hit`, `stale`, `verify` or `miss`.
    pub fn memory(&self, result: MemoryUse) {
        self.memory.get_or_create(&MemoryLabels { result }).inc();
    }

    pub fn overloaded(&self) {
        self.overloaded.inc();
    }

    /// `sent`, `failed` or `dropped`.
    pub fn acknowledgment(&self, result: Acknowledgment) {
        self.acknowledgments
            .get_or_create(&AcknowledgmentLabels { result })
            .inc();
    }

    /// The text of `/metrics`, with every included Archive's health as it is now.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrapes_at_the_same_time_each_show_every_archive() {
        let book = Arc::new(HealthBook::default());
        let metrics = Arc::new(Metrics::new(book.clone()));
        for a in ["a", "b", "c"] {
            book.of(a, crate::health::Snapshot::default);
        }
        let scrapers: Vec<_> = (0..4)
            .map(|_| {
                let metrics = metrics.clone();
                std::thread::spawn(move || {
                    for _ in 0..300 {
                        let text = metrics.render();
                        for a in ["a", "b", "c"] {
                            let up = format!("ibi_resolver_archive_up{{archive=\"{a}\"}} 1\n");
                            assert!(text.contains(&up), "{up} missing from:\n{text}");
                        }
                    }
                })
            })
            .collect();
        for s in scrapers {
            s.join().unwrap();
        }
    }
}
