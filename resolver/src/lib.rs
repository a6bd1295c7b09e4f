//! ibi-resolver: the resolver of the IBI resolution system (URLib). It registers Archives,
//! includes and excludes them at their request (§7 of the resolution standard), and turns
//! persistent URLs into the URL an Archive hands out by asking every included Archive
//! (§8), then redirects the reader.
//!
//! Identifiers, pair lists, relations, query decoding and persistent URLs come from the
//! `ibi-archive` library; this crate adds the server (tokio, hyper), the client of
//! Archives (hyper) and the registry (SQLite, or PostgreSQL shared by several resolvers).
//!
//! One module a concept; docs/src/code.md, "Layout of the code", maps them all and the
//! way imports run, from the server down. Two are folders, seen from outside through the few types
//! their `mod.rs` re-exports: the registry ([`registry`]: the Archives, the location
//! memory's table, the keys' hashes, the SQLite file and its upgrades, the migrations,
//! PostgreSQL) and resolution ([`resolve`]: the engine, one step, one round, the answers
//! heard and tallied, the Original check, who may hold an IBI, what the memory is taught,
//! conflicts, the outcome, the URLs, the next edition for Memento).
//!
//! A module is public only where something outside the library needs it: the command's
//! `cli` (the settings, the registry and its store, an Archive's health, `setup`,
//! resolution for `resolve`, the client's bounds, the server, the logs, the process and
//! the memory's clock) and the tests (the pages' style); the rest are private to the
//! crate.

mod acknowledge;
mod answer;
pub mod client;
mod clients;
mod clock;
pub mod config;
mod editions;
pub mod health;
mod homes;
mod keys;
mod labels;
pub mod lang;
mod linkset;
mod listen;
pub mod log;
mod loops;
pub mod memory;
mod metrics;
pub mod pages;
mod pg_tls;
pub mod process;
pub mod registry;
pub mod resolve;
mod router;
pub mod server;
mod service;
pub mod setup;
mod state;
pub mod store;
mod suspicion;
mod tombstone;
