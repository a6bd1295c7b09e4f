//! The resolver's time of day: the Archive's [`Clock`] (the system's in the executable; a
//! `ManualClock` in tests), injected into the engine ([`crate::resolve::Engine::clock`]),
//! the location memory and the registry, and read in milliseconds where they keep times.
//! Durations (a request's latency, a timeout) are measured with `Instant` instead.

use std::sync::Arc;

pub use ibi::time::{Clock, SystemClock};

/// Milliseconds since the epoch by `clock`.
pub fn millis(clock: &dyn Clock) -> i64 {
    clock.now_nanos().div_euclid(1_000_000) as i64
}

/// The system's clock, to share.
pub fn system() -> Arc<dyn Clock> {
    Arc::new(SystemClock)
}
