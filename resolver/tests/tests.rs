//! Every integration test of ibi-resolver, one executable: each file of this directory is
//! a module of it, and what they share with the Archive's tests is the `common` crate
//! (tests/common/ of the workspace). The tests that run `ibi-archive` too take the debug
//! executable cargo built beside this package's: `cargo test` at the top builds both.

mod backup;
mod browser_pages;
mod cli;
mod default_serve;
mod hostile;
mod init;
mod log_time;
mod network;
mod pages;
mod pg_cluster;
mod pg_tls;
mod readers;
mod resolver_balancer;
mod resolver_deploy;
mod resolver_loop;
mod resolver_steering;
mod resolver_system;
mod same_rules;
mod several;
