//! What the integration tests of both packages share: the dev-dependency `common` of
//! ibi-archive (tests/tests.rs) and of ibi-resolver (resolver/tests/tests.rs).
//!
//! - [`fixture`]: the sample Archive (`sample-archive/`) copied into a temporary
//!   directory ([`Fixture`], [`copy_sample`]), and the README's blocks.
//! - [`fsutil`]: copying a tree ([`copy_tree`]: links as links, ISO-8859-1 names kept) and
//!   giving the web server's user (www-data when the tests run as root) access to a copy
//!   ([`archive_tempdir`], [`prepare_archive`]).
//! - [`commands`]: the executables under test ([`ibi_archive_bin`], [`ibi_resolver_bin`]),
//!   run as the administrator runs them ([`run_cmd`]), and `ibi-archive serve` ([`Serve`]).
//! - [`cgi`]: the executable run as a CGI program with a web server's environment
//!   ([`Cgi`]) and what the tests read in its answers ([`mask_urlkey`], [`pairs_of`]).
//! - [`cases`]: the `.case` files of `tests/data/examples/` and `tests/data/hostile/`.
//! - [`http`]: the tests' one HTTP/1.1 client: the request target sent as given, the
//!   answer checked to be well-formed where a test asks ([`http::whole_response`]).
//! - [`resolver`]: `ibi-resolver serve` on loopback ([`resolver::Resolver`]) and the
//!   copies of the sample Archive the system tests include in it.
//! - [`peer`]: hostile Archives, small `TcpListener` servers answering what a case needs
//!   (the resolver's tests use them most).
//! - [`pg`]: throwaway PostgreSQL clusters ([`pg::Cluster`]): initdb'd as an unprivileged
//!   user in a temporary directory, on a free port of 127.0.0.1, a primary with streaming
//!   standbys, stopped, killed, restarted and promoted at will, deleted when dropped.
//! - [`server`]: Debian's apache2 (event MPM + mod_cgid) or lighttpd on 127.0.0.1, on a
//!   free port, with the configuration files of `cgi-bin/` included unchanged, stopped
//!   (every process of theirs) when the [`Server`] is dropped, also when the test panics.
//!
//! A test of the Archive under a web server:
//!
//! ```ignore
//! #[test]
//! fn confirms_inclusion_under_apache() {
//!     if !common::apache2_available() {
//!         eprintln!("skipping: apache2 (with mod_cgid) is not installed");
//!         return;
//!     }
//!     let tmp = common::archive_tempdir();
//!     let root = tmp.path().join("archive");
//!     common::copy_sample(&root);
//!     common::prepare_archive(&root); // readable by www-data, var/ www-data's
//!     let ibi = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17";
//!     let server = common::start_apache2(&root, &common::ibi_archive_bin(), ibi);
//!     let r = common::http_get(
//!         &server.url(&format!("/{ibi}?servicesubject=inclusionConfirmationRequest")),
//!     );
//!     assert_eq!(r.status, 200, "{}", server.error_log());
//!     assert_eq!(r.text(), "confirmation yes");
//! }
//! ```
//!
//! Tests that need a server skip (return early after an `eprintln!("skipping: ...")`)
//! when [`apache2_available`] or [`lighttpd_available`] says no; CI installs both, and
//! under `CI=true` a missing server panics instead ([`required_under_ci`]), so that a run
//! without them cannot pass. When the tests run as root the servers' workers and the CGI
//! program run as www-data.
//!
//! [`start_apache2_vhost`] starts apache2 with another configuration file of the
//! repository (the resolver's, say) inside a `<VirtualHost>`; [`apache2_available_with`]
//! says whether the modules it needs are installed. [`start_apache2_with`] adds modules and
//! configuration for more ports after the Archive's snippet (an https site, say);
//! [`apache2_available_with_archive`] says whether they are installed.

pub mod browser;
pub mod cases;
pub mod cgi;
pub mod commands;
pub mod fixture;
pub mod fsutil;
pub mod http;
pub mod jsonld;
pub mod peer;
pub mod pg;
pub mod resolver;
pub mod server;
pub mod systemd;

pub use cases::{check_cases, compare_masked, Case};
pub use cgi::{
    mask_urlkey, pair_value, pairs_of, parse_cgi, Cgi, CgiOutput, LK47, LK47_ANSWER, ONE_URL_IBIS,
};
pub use commands::{
    command, ibi_archive_bin, ibi_archive_cgi_bin, ibi_resolver_bin, output_or_hang, pairs_of_run,
    run_cmd, run_with_stdin, Serve, HANG_GUARD,
};
pub use fixture::{
    copy_sample, doc_block, log_lines, mtc_m16c_toml, readme_block, sample, Fixture, MTC_M16D_TOML,
    RELATIONS_OF_EXAMPLE_9_2,
};
pub use fsutil::{
    archive_tempdir, copy_tree, executable_by_others, make_world_readable, noise, os,
    prepare_archive, runnable_by_others, running_as_root, user_ids,
};
pub use http::{
    connect_from, decode_chunked, http_get, http_get_from, http_raw, http_raw_from, http_request,
    http_request_with_body, try_http_raw_from, Connection, Response, HTTP_TIMEOUT,
};
pub use server::{
    apache2_available, apache2_available_with, apache2_available_with_archive, free_port,
    lighttpd_available, living_processes_in_group, process_alive, processes_with_cmdline,
    required_under_ci, start_apache2, start_apache2_vhost, start_apache2_with, start_lighttpd,
    wait_for_port, write_echo_cgi, MoreConfig, Server, ServerKind, ECHO_CGI, SHUTDOWN_TIMEOUT,
    STARTUP_TIMEOUT,
};

/// The repository's top directory (this crate is its tests/common/).
pub fn repository() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(std::path::Path::parent)
        .expect("tests/common/ of the repository")
}
