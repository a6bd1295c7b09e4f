//! ibi-archive: the Archive service of the IBI resolution system (URLib), and the tools an
//! Archive administrator uses around it.
//!
//! The library knows nothing of processes: the CGI handler is a function of the request
//! environment and the Archive root to a response value; `main.rs` and `cgi_entry.rs`
//! wire it to a process.
//!
//! The map (README, "Layout", gives every module a line), from the request down: `routes`
//! dispatches a request to `service` (the service's answers), `filelist` (landing pages)
//! and `download` (a file of `doc/`); `service` hands an OAI-PMH request to [`oai`], the
//! data provider, a folder whose `mod.rs` maps its files; the provider reads the index of
//! its records, [`oai_index`], and has it built by [`oai_build`]; below them all, the
//! Archive's data: `store` (an item found), [`item`] (an item.toml, its formats, whether
//! it is a record, its persistent URL), `config`, `layout`, `var_owner`, `items_lock`,
//! `file_stamp`. Imports run down this map: the index and its build read of the provider
//! only `oai::metadata`, the check of a metadata file, which imports nothing of them;
//! `item` imports none of the modules above it. Two circles are left, for a later change:
//! `routes`, `filelist` and `download` (the HTTP vocabulary of `routes`), and `service`
//! with `oai` (`Answer` and the per-request `Archive` of `service`).

#![forbid(unsafe_code)]

pub mod acklog;
pub mod admin;
pub mod cgi;
pub mod col_prefixes;
pub mod config;
pub mod download;
pub mod face;
pub mod file_stamp;
pub mod filelist;
pub mod httpd;
pub mod ibi;
pub mod item;
pub mod items_lock;
pub mod layout;
pub mod oai;
pub mod oai_build;
pub mod oai_index;
pub mod routes;
pub mod service;
pub mod store;
pub mod urlkey;
pub mod var_owner;

// The protocol, shared with the resolver (the `ibi` crate), where the Archive's modules
// and its users have always found it.
pub use ::ibi::{escape, logline, markup, pairs, persistent, query, relation, time, toml_error};
