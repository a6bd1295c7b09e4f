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
pub mod escape;
pub mod filelist;
pub mod httpd;
pub mod ibi;
pub mod item;
pub mod layout;
pub mod logline;
pub mod markup;
pub mod pairs;
pub mod persistent;
pub mod query;
pub mod relation;
pub mod routes;
pub mod service;
pub mod store;
pub mod time;
pub mod toml_error;
pub mod urlkey;
