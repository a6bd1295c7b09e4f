//! What a long-running server (`ibi-archive serve`, the resolver) asks of its process:
//! as many open files as it is allowed.

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// Raises the soft limit of open files towards the hard one, to at most `at_most`, when
/// both limits are finite (never lowers it); returns the soft limit now (`None`:
/// unlimited).
pub fn raise_open_files(at_most: u64) -> Option<u64> {
    let mut limit = getrlimit(Resource::Nofile);
    if let (Some(current), Some(maximum)) = (limit.current, limit.maximum) {
        let wanted = maximum.min(at_most);
        if current < wanted {
            let raised = Rlimit {
                current: Some(wanted),
                maximum: Some(maximum),
            };
            if setrlimit(Resource::Nofile, raised).is_ok() {
                limit = raised;
            }
        }
    }
    limit.current
}
