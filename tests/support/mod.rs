//! Shared harness for integration tests that need a real web server.
//!
//! Use it from any file in `tests/` with `mod support;`.  It starts Debian's
//! apache2 (event MPM + mod_cgid) or lighttpd on 127.0.0.1, on a free port,
//! with the configuration snippets of `cgi-bin/` included unchanged, and
//! stops them (every process of theirs) when the [`Server`] is dropped --
//! also when the test panics.
//!
//! ```ignore
//! mod support;
//!
//! #[test]
//! fn confirms_inclusion_under_apache() {
//!     if !support::apache2_available() {
//!         eprintln!("skipping: apache2 (with mod_cgid) is not installed");
//!         return;
//!     }
//!     let tmp = support::archive_tempdir();
//!     let root = tmp.path().join("archive");
//!     support::copy_tree(std::path::Path::new("tests/data/archive"), &root);
//!     support::prepare_archive(&root); // readable by www-data, var/ writable
//!     let ibi = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17";
//!     let server = support::start_apache2(&root, &support::ibi_archive_bin(), ibi);
//!     let r = support::http_get(
//!         &server.url(&format!("/{ibi}?servicesubject=inclusionConfirmationRequest")),
//!     );
//!     assert_eq!(r.status, 200, "{}", server.error_log());
//!     assert_eq!(r.text(), "confirmation yes");
//! }
//! ```
//!
//! Tests that need a server should skip (return early after an
//! `eprintln!("skipping: ...")`) when [`apache2_available`] or
//! [`lighttpd_available`] says no; CI installs both, and under `CI=true` a
//! missing server panics instead, so that a run without them cannot pass.  When the tests run as
//! root the servers' workers and the CGI program run as www-data.
//!
//! [`start_apache2_vhost`] starts apache2 with another configuration file of the
//! repository (the resolver's, say) inside a `<VirtualHost>`; [`apache2_available_with`]
//! says whether the modules it needs are installed.

// Each test crate uses only part of the harness.
#![allow(dead_code, unused_imports)]

mod fsutil;
mod http;
mod server;

pub(crate) use fsutil::executable_by_others;
pub use fsutil::{
    archive_tempdir, copy_tree, make_world_readable, os, prepare_archive, running_as_root,
    user_ids, www_data_ids,
};
pub use http::{
    connect_from, decode_chunked, http_get, http_get_from, http_raw, http_raw_from, http_request,
    http_request_with_body, Response, HTTP_TIMEOUT,
};
pub use server::{
    apache2_available, apache2_available_with, free_port, ibi_archive_bin, ibi_resolver_bin,
    lighttpd_available, living_processes_in_group, process_alive, processes_with_cmdline,
    required_under_ci, run_with_stdin, start_apache2, start_apache2_vhost, start_lighttpd,
    wait_for_port, Server, ServerKind, APACHE2_SNIPPET, LIGHTTPD_SNIPPET, SHUTDOWN_TIMEOUT,
    STARTUP_TIMEOUT,
};
