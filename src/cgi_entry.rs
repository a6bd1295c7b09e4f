//! The CGI entry: a request is answered before `main`.
//!
//! The web server starts a new process for every request, so start-up is most of what a
//! request costs. On Linux a constructor in `.init_array`, which the C library runs ahead
//! of Rust's own start-up, answers the request and exits. The start-up it skips sets up
//! stack-overflow reporting for the main thread (glibc reads the whole of /proc/self/maps
//! to find the stack, and maps an alternate signal stack) and checks fds 0-2: together
//! about 70 µs of a ~450 µs CGI run on the reference machine, as much as the rest of the
//! service's work (BENCHMARKS.md). What a CGI run needs of that start-up is done here:
//! fds 0-2 made sure to be open (else the first file opened, the access log say, would
//! take the place of stdout and receive the answer), and SIGPIPE ignored (a closed pipe
//! gives EPIPE, not death). Elsewhere, and for the administrator's commands (no
//! `GATEWAY_INTERFACE`), `main` runs as usual and calls [`answer`] itself.

use std::io::Write;
use std::process::ExitCode;

/// Whether the web server runs this process as a CGI program.
pub fn is_cgi() -> bool {
    std::env::var_os("GATEWAY_INTERFACE").is_some()
}

#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static BEFORE_MAIN: extern "C" fn() = before_main;

/// Answers a CGI request and exits; returns at once for anything else. A panic aborts
/// the process: the release profile is built with `panic = "abort"`, and in other
/// profiles a panic cannot unwind out of this `extern "C"` function, so it aborts there.
/// The web server then answers 500 on its own.
#[cfg(target_os = "linux")]
extern "C" fn before_main() {
    if !is_cgi() {
        return;
    }
    open_standard_fds();
    // SAFETY: signal(2) with a valid signal number and SIG_IGN, as std's start-up does.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let code = if answer() == ExitCode::SUCCESS { 0 } else { 1 };
    std::process::exit(code)
}

/// Opens /dev/null on each of fds 0-2 that is closed, as std's start-up does (one
/// `poll` tells which: `POLLNVAL`). Any later open then gets a descriptor above 2.
#[cfg(target_os = "linux")]
fn open_standard_fds() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    let polled = loop {
        // SAFETY: poll(2) of three valid pollfd entries, which it only reads and writes;
        // a zero timeout: it does not wait.
        if unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) } != -1 {
            break true;
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break false;
        }
    };
    for (fd, entry) in (0..3).zip(fds) {
        let closed = if polled {
            entry.revents & libc::POLLNVAL != 0
        } else {
            // SAFETY: fcntl(2) F_GETFD on any number only reads the descriptor's flags.
            let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
            flags == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
        };
        if closed {
            // SAFETY: open(2) of a constant NUL-terminated path; it takes the lowest
            // free descriptor, which is `fd`. Nothing can be done if it fails.
            let opened = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
            if opened != fd {
                // Not even /dev/null: answer nothing rather than into a file.
                std::process::exit(1);
            }
        }
    }
}

/// One CGI request: environment in, answer out, one line per problem on stderr (the web
/// server's error log), each with its control bytes escaped and cut to a bounded length.
pub fn answer() -> ExitCode {
    // The standard output's buffer is made first, on a heap nothing has been freed into
    // yet: made later, after the small allocations of the request were freed, glibc's
    // malloc first sorts those (3 % of a whole request's instructions).
    let stdout = std::io::stdout();
    // A build of the OAI-PMH provider's index runs in a child process, detached: the
    // answer does not wait for it.
    ibi_archive::oai_build::detach_builds_with(detach_by_fork);
    let form = read_request_body();
    let mut req = ibi_archive::cgi::CgiRequest::from_env(|name| std::env::var_os(name));
    req.form = form;
    let now = ::ibi::time::SystemClock::now();
    let reply = ibi_archive::cgi::respond(&req, now);
    let mut err = std::io::stderr().lock();
    if let ibi_archive::http::Reply::Page(answer) = &reply {
        for line in &answer.log {
            let line = format!("ibi-archive: {line}");
            let _ = writeln!(err, "{}", ::ibi::logline::clean(&line));
        }
    }
    let head_only = req.method == "HEAD";
    let written = if matches!(reply, ibi_archive::http::Reply::Page(_)) {
        ibi_archive::cgi::write_reply(&mut Unbuffered(&stdout), reply, head_only, now)
    } else {
        // A file is copied from its descriptor to stdout's (io::copy: sendfile, splice).
        ibi_archive::cgi::write_reply(&mut stdout.lock(), reply, head_only, now)
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(err, "ibi-archive: cannot write the answer: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `work` in a child process detached from the web server, and returns at once: the
/// child is in a session of its own (the web server's signals to the CGI's process group
/// do not reach it) and has /dev/null on fds 0-2 (the web server reads the answer until
/// every copy of the CGI's standard output is closed, and Apache its standard error too),
/// and ends when `work` returns. Nobody waits for it: once the CGI exits, it is the
/// child of init (or of the service manager's reaper).
fn detach_by_fork(work: Box<dyn FnOnce() + Send + 'static>) -> std::io::Result<()> {
    // SAFETY: fork(2). A CGI run is one thread (it starts none), so the child may do all
    // that the parent could, allocating included.
    match unsafe { libc::fork() } {
        -1 => Err(std::io::Error::last_os_error()),
        0 => {
            // SAFETY: setsid(2), open(2) of a constant NUL-terminated path, dup2(2) and
            // close(2) of descriptors this process holds; none touches Rust's memory.
            unsafe {
                libc::setsid();
                let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
                if null >= 0 {
                    for fd in 0..3 {
                        libc::dup2(null, fd);
                    }
                    if null > 2 {
                        libc::close(null);
                    }
                }
            }
            work();
            // SAFETY: _exit(2) ends the child without running the parent's atexit
            // handlers or flushing the parent's buffers a second time.
            unsafe { libc::_exit(0) }
        }
        _ => Ok(()),
    }
}

/// The standard output without its buffer: a page, made in one buffer, leaves in one
/// write(2). (std's stdout is line-buffered: it would write up to the last newline, then
/// the rest on flush, two writes and two wake-ups of the web server.)
struct Unbuffered<'a>(&'a std::io::Stdout);

impl Write for Unbuffered<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(rustix::io::write(self.0, buf)?)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Reads a request body the server sends: the form of a POST
/// (`application/x-www-form-urlencoded`, at most [`::ibi::query::MAX_QUERY_LEN`]
/// bytes), which an OAI-PMH harvester may send its arguments in; any other is read and
/// dropped (under Apache's mod_cgid, a program that exits without reading it gets its
/// answer cut off), at most 1 MiB of it.
fn read_request_body() -> Option<Vec<u8>> {
    use std::io::Read;
    let length = std::env::var("CONTENT_LENGTH")
        .ok()
        .and_then(|l| l.trim().parse::<u64>().ok())
        .unwrap_or(0);
    if length == 0 {
        return None;
    }
    let is_form = std::env::var("REQUEST_METHOD").is_ok_and(|m| m == "POST")
        && std::env::var("CONTENT_TYPE").is_ok_and(|t| {
            t.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        });
    if is_form && length <= ::ibi::query::MAX_QUERY_LEN as u64 {
        let mut body = Vec::with_capacity(length as usize);
        let read = std::io::stdin().lock().take(length).read_to_end(&mut body);
        return (read.is_ok() && body.len() as u64 == length).then_some(body);
    }
    let _ = std::io::copy(
        &mut std::io::stdin().lock().take(length.min(1 << 20)),
        &mut std::io::sink(),
    );
    None
}
