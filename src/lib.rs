//! ibi-archive: the Archive service of the IBI resolution system (URLib), and the tools an
//! Archive administrator uses around it.
//!
//! The library knows nothing of processes: the CGI handler is a function of the request
//! environment and the Archive root to a response value; `main.rs` and `cgi_entry.rs`
//! wire it to a process.

#![forbid(unsafe_code)]

pub mod acklog;
pub mod admin;
pub mod atomic;
pub mod cgi;
pub mod col_prefixes;
pub mod config;
pub mod download;
pub mod file_stamp;
pub mod filelist;
pub mod httpd;
pub mod ibi;
pub mod item;
pub mod items_lock;
pub mod layout;
pub mod oai;
pub mod oai_build;
pub mod oai_dc;
pub mod oai_index;
pub mod routes;
pub mod serve_metrics;
pub mod service;
pub mod store;
pub mod urlkey;
pub mod var_owner;

// The protocol, shared with the resolver (the `ibi` crate), where the Archive's modules
// and its users have always found it.
pub use ::ibi::{escape, logline, markup, pairs, persistent, query, relation, time, toml_error};
