//! Every integration test of ibi-archive, one executable: each file of this directory is a
//! module of it, and what they share is the `common` crate (tests/common/, also used by
//! the resolver's tests). `cargo test --test integration admin_check::` runs one file's.

mod admin_check;
mod admin_delete;
mod admin_init;
mod admin_new;
mod admin_register;
mod admin_stats;
mod cli_service;
mod cli_table;
mod concurrency_acks;
mod concurrency_faults;
mod concurrency_flip;
mod concurrency_kill;
mod debian_assets;
mod debian_package;
mod deploy_access;
mod deploy_e2e;
mod deploy_smoke;
mod deploy_tls;
mod downloads;
mod filter_equivalence;
mod harness;
mod hostile_cases;
mod hostile_limits;
mod hostile_units;
mod ibi_cli;
mod ibi_distributor_procs;
mod ibi_roundtrip;
mod ibi_vectors;
mod inclusion_unit;
mod kept_files;
mod landing;
mod oai;
mod oai_build;
mod oai_records;
mod oai_review;
mod persistent_urls;
mod readme_demo;
mod readme_walkthrough;
mod serve_hostile;
mod serve_inclusion;
mod service_cases;
mod service_examples;
mod store_memo;
mod var_owner;
