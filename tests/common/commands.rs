//! The executables under test, run as the administrator runs them, and `ibi-archive serve`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;

use super::cgi::pairs_of;

/// The ibi-archive executable cargo built for this test run (`cargo test` at the top, or of
/// ibi-archive; `cargo test -p ibi-resolver` does not build it: `cargo build -p
/// ibi-archive` first).
pub fn ibi_archive_bin() -> PathBuf {
    executable("ibi-archive")
}

/// The ibi-archive-cgi executable (the Archive service alone, which the web servers'
/// configurations name), built beside ibi-archive.
pub fn ibi_archive_cgi_bin() -> PathBuf {
    executable_of("ibi-archive-cgi", "ibi-archive")
}

/// The ibi-resolver executable cargo built for this test run (`cargo test` at the top, or
/// of ibi-resolver; `cargo test -p ibi-archive` does not build it: `cargo build -p
/// ibi-resolver` first).
pub fn ibi_resolver_bin() -> PathBuf {
    executable("ibi-resolver")
}

/// The workspace's executable `name` (its package's name too), where cargo puts it: in
/// the directory above `deps/`, which holds the running test executable (where cargo's
/// `CARGO_BIN_EXE_<name>` of the package's own executable points as well). Fails, saying
/// how to build it, when it is not there.
fn executable(name: &str) -> PathBuf {
    executable_of(name, name)
}

/// [`executable`] `name` of the package `package`.
fn executable_of(name: &str, package: &str) -> PathBuf {
    let test = std::env::current_exe().expect("the test executable's path");
    let bin = test
        .parent()
        .and_then(Path::parent)
        .expect("a test executable in target/.../deps/")
        .join(name);
    assert!(
        bin.is_file(),
        "{} is missing: run `cargo build -p {package}` (or the tests of the whole workspace)",
        bin.display()
    );
    bin
}

/// How long a test waits for a process it started before it calls the process hung,
/// kills it and fails: a guard against a test that never ends, far beyond what any run
/// takes on a loaded machine, and no bound on speed.
pub const HANG_GUARD: Duration = Duration::from_secs(120);

/// [`Child::wait_with_output`], except that a child still running after [`HANG_GUARD`]
/// is killed, and the test fails naming `what`.
pub fn output_or_hang(child: Child, what: &str) -> Output {
    use rustix::process::{pidfd_open, pidfd_send_signal, Pid, PidfdFlags};
    let pid = Pid::from_raw(child.id() as i32).expect("a child's pid");
    // Through a pidfd, the signal reaches this child or nobody, even once it is reaped.
    let pidfd = pidfd_open(pid, PidfdFlags::empty()).expect("pidfd_open");
    let (ended, watch) = channel::<()>();
    let watchdog = std::thread::spawn(move || {
        let hung = watch.recv_timeout(HANG_GUARD) == Err(RecvTimeoutError::Timeout);
        if hung {
            let _ = pidfd_send_signal(&pidfd, rustix::process::Signal::KILL);
        }
        hung
    });
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let _ = ended.send(());
    if watchdog.join().unwrap() {
        panic!(
            "{what} had not ended after {HANG_GUARD:?}, and was killed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

/// An administrator's command (the binary with `args`, outside CGI), not yet run: for
/// commands that must run in parallel.
pub fn command(args: &[&str]) -> Command {
    let mut cmd = Command::new(ibi_archive_bin());
    // Neither a CGI run nor an Archive root from the environment the tests run in.
    cmd.args(args)
        .env_remove("GATEWAY_INTERFACE")
        .env_remove("IBI_ARCHIVE_ROOT");
    cmd
}

/// Runs an administrator's command; returns (exit code, stdout, stderr).
pub fn run_cmd(args: &[&str]) -> (i32, String, String) {
    let out = command(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs an administrator's command that must succeed and prints pairs (`new`, `init`):
/// its pairs, `(name, value)`, in order.
pub fn pairs_of_run(args: &[&str]) -> Vec<(String, String)> {
    let (code, out, err) = run_cmd(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    assert!(out.ends_with('\n'), "{out:?}");
    pairs_of(out.trim_end())
}

/// Runs `cmd` with `stdin` on its standard input; returns (exit code, stdout, stderr).
pub fn run_with_stdin(cmd: &mut Command, stdin: &str) -> (i32, String, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A command that refuses early may not read its input: a broken pipe is no failure.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `ibi-archive serve` over the Archive at a root, on a free port of 127.0.0.1 (unless
/// `--listen` says otherwise), without automatic inclusion unless started with
/// [`Serve::start_including`]; killed when dropped (also when the test panics).
pub struct Serve {
    child: Child,
    /// `127.0.0.1:<port>`, where it listens.
    pub address: String,
}

impl Serve {
    /// Starts it, its stderr (the request log) going to `stderr`, and returns once it
    /// listens: its first line on stdout, which gives the address, comes after the bind.
    pub fn start(root: &Path, stderr: impl Into<Stdio>) -> Serve {
        Serve::start_with(root, stderr, &[])
    }

    /// [`Serve::start`] with more arguments (limits). With `--no-inclusion`: the tests
    /// that run it include the Archive themselves (`ibi-archive include`), when they do,
    /// and the sample Archive's `[registration]` names a resolver of the Internet.
    pub fn start_with(root: &Path, stderr: impl Into<Stdio>, more: &[&str]) -> Serve {
        let mut args = vec!["--no-inclusion"];
        args.extend_from_slice(more);
        Serve::start_including(root, stderr, &args)
    }

    /// [`Serve::start_with`] without `--no-inclusion`: the Archive included in the
    /// resolvers of its `[registration]` as `serve` does by default
    /// (tests/serve_inclusion.rs).
    pub fn start_including(root: &Path, stderr: impl Into<Stdio>, more: &[&str]) -> Serve {
        let mut args = vec![
            "serve",
            "--root",
            root.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ];
        args.extend_from_slice(more);
        let mut child = command(&args)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // "ibi-archive: serving the Archive at <root> on http://127.0.0.1:PORT/ (Ctrl-C stops)"
        let address = line
            .split(" on http://")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .unwrap_or_else(|| panic!("serve said {line:?}"))
            .to_string();
        Serve { child, address }
    }

    /// `http://127.0.0.1:<port>`, without a trailing slash.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it still runs.
    pub fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Ctrl-C (SIGINT), and the exit status; fails if it does not stop (a hang guard).
    pub fn interrupt(&mut self) -> ExitStatus {
        self.signal("INT");
        self.wait("SIGINT")
    }

    /// SIGKILL, and the exit status once it is reaped (waited for, not polled).
    pub fn kill(&mut self) -> ExitStatus {
        self.child.kill().unwrap();
        self.child.wait().unwrap()
    }

    /// Sends the signal `name` (`TERM`, `INT`) and returns at once.
    pub fn signal(&self, name: &str) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args([&format!("-{name}"), &pid])
            .status()
            .unwrap()
            .success());
    }

    /// Its exit status, once it exits; fails if it has not exited after [`HANG_GUARD`]
    /// (`after` says what should have stopped it).
    pub fn wait(&mut self, after: &str) -> ExitStatus {
        let deadline = std::time::Instant::now() + HANG_GUARD;
        while std::time::Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("serve had not stopped {HANG_GUARD:?} after {after}");
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
