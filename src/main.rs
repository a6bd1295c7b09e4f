//! The `ibi-archive` executable: a CGI program when a web server runs it
//! (`GATEWAY_INTERFACE` set), the administrator's tool otherwise.

use std::io::Write;
use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    if std::env::var_os("GATEWAY_INTERFACE").is_some() {
        return cgi_main();
    }
    let mut parser = lexopt::Parser::from_env();
    let result = match parser.next() {
        Ok(Some(lexopt::Arg::Value(cmd))) => match cmd.to_str() {
            Some("ibi") => cli::ibi::run(&mut parser),
            Some("query") => cli::service::query(&mut parser),
            Some("describe") => cli::service::describe(&mut parser),
            Some("serve") => cli::serve::run(&mut parser),
            Some("new") => cli::new::run(&mut parser),
            Some("check") => cli::check::run(&mut parser),
            Some("prefixes") => cli::prefixes::run(&mut parser),
            Some("delete") => cli::delete::run(&mut parser),
            Some("include") => cli::register::run(&mut parser, cli::register::Direction::Include),
            Some("exclude") => cli::register::run(&mut parser, cli::register::Direction::Exclude),
            Some("stats") => cli::stats::run(&mut parser),
            Some(other) => Err(cli::CliError::usage(format!(
                "unknown command {other:?}; see ibi-archive --help"
            ))),
            None => Err(cli::CliError::usage(format!("unknown command {cmd:?}"))),
        },
        Ok(Some(lexopt::Arg::Long("help") | lexopt::Arg::Short('h'))) => {
            print!("{}", cli::USAGE);
            Ok(())
        }
        Ok(Some(lexopt::Arg::Long("version"))) => {
            println!("ibi-archive {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        Ok(Some(arg)) => Err(cli::CliError::usage(format!(
            "unexpected argument {}",
            cli::shown(arg)
        ))),
        Ok(None) => Err(cli::CliError::usage(
            "no command given; see ibi-archive --help",
        )),
        Err(e) => Err(e.into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ibi-archive: {e}");
            ExitCode::from(e.code)
        }
    }
}

/// A CGI request is answered before `main`, from a constructor that the C library runs
/// ahead of Rust's own start-up, and the process then exits. The start-up it skips sets
/// up stack-overflow reporting for the main thread (glibc reads the whole of
/// /proc/self/maps to find the stack, and an alternate signal stack is mapped) and
/// checks fds 0-2: together about 70 µs of a ~450 µs CGI run on the reference machine,
/// as much as the rest of the service's work. What a CGI run needs of it, SIGPIPE ignored
/// (a closed pipe gives EPIPE, not death), is done here too. The administrator's
/// commands (no `GATEWAY_INTERFACE`) go through `main` as usual. See BENCHMARKS.md.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static CGI_BEFORE_MAIN: extern "C" fn() = cgi_before_main;

#[cfg(target_os = "linux")]
extern "C" fn cgi_before_main() {
    if std::env::var_os("GATEWAY_INTERFACE").is_none() {
        return;
    }
    extern "C" {
        fn signal(signum: std::ffi::c_int, handler: usize) -> usize;
    }
    const SIGPIPE: std::ffi::c_int = 13;
    const SIG_IGN: usize = 1;
    // SAFETY: signal(2) with a valid signal number and SIG_IGN, as std's start-up does.
    unsafe {
        signal(SIGPIPE, SIG_IGN);
    }
    // A panic exits as it would from main: status 101 (with panic = "abort", an abort).
    let code = match std::panic::catch_unwind(cgi_main) {
        Ok(code) if code == ExitCode::SUCCESS => 0,
        Ok(_) => 1,
        Err(_) => 101,
    };
    std::process::exit(code)
}

/// One CGI request: environment in, answer out, one line per problem on stderr (the web
/// server's error log).
fn cgi_main() -> ExitCode {
    discard_request_body();
    let req = ibi_archive::cgi::Request::from_env(|name| std::env::var_os(name));
    let now = chrono::Utc::now().timestamp();
    let answer = ibi_archive::cgi::handle(&req, now);
    let mut err = std::io::stderr().lock();
    for line in &answer.log {
        let _ = writeln!(err, "ibi-archive: {line}");
    }
    let mut out = std::io::stdout().lock();
    match ibi_archive::cgi::write(&mut out, &answer, req.method == "HEAD") {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(err, "ibi-archive: cannot write the answer: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Reads (and drops) a request body the server sends: under Apache's mod_cgid, a program
/// that exits without reading it gets its answer cut off. Bodies are never used, so at
/// most 1 MiB is read.
fn discard_request_body() {
    use std::io::Read;
    let length = std::env::var("CONTENT_LENGTH")
        .ok()
        .and_then(|l| l.trim().parse::<u64>().ok())
        .unwrap_or(0);
    if length > 0 {
        let _ = std::io::copy(
            &mut std::io::stdin().lock().take(length.min(1 << 20)),
            &mut std::io::sink(),
        );
    }
}
