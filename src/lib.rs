//! ibi-archive: the Archive service of the IBI resolution system (URLib), and the tools an
//! Archive administrator uses around it.
//!
//! The library knows nothing of processes: the CGI handler is a function of the request
//! environment and the Archive root to a response value; `main.rs` and `cgi_entry.rs`
//! wire it to a process.
//!
//! The map (docs/src/code.md, "Layout of the code", gives every module a line), from the request down: `routes`
//! dispatches a request to `service` (the service's answers), `filelist` (landing pages)
//! and `download` (a file of `doc/`); `service` hands an OAI-PMH request to [`oai`], the
//! data provider, a folder whose `mod.rs` maps its files; the provider reads the index of
//! its records, [`oai_index`], and has it built by [`oai_build`]; below them all, the
//! Archive's data: `store` (an item found), [`item`] (an item.toml, its formats, whether
//! it is a record, its persistent URL), `config`, `layout`, `var_owner`, `items_lock`,
//! `file_stamp`. Imports run down this map: the index and its build read of the provider
//! only `oai::metadata`, the check of a metadata file, which imports nothing of them;
//! `item` imports none of the modules above it. Two leaves serve the answering modules:
//! [`http`] (the HTTP vocabulary) and [`archive`] (the per-request `Archive`). No module
//! imports one that imports it back (`tests/structure.rs`).

#![forbid(unsafe_code)]

pub mod acklog;
pub mod admin;
pub mod archive;
pub mod cgi;
pub mod col_prefixes;
pub mod config;
mod download;
pub mod face;
mod file_stamp;
mod filelist;
pub mod http;
pub mod httpd;
pub mod item;
mod items_lock;
pub mod layout;
pub mod minting;
mod oai;
pub mod oai_build;
pub mod oai_index;
pub mod routes;
pub mod serve_metrics;
pub mod service;
pub mod store;
pub mod urlkey;
mod var_owner;
