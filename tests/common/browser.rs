//! Pages as a reader's browser shows them: Debian's headless Chromium driven over the
//! DevTools protocol through a pipe (`--remote-debugging-pipe`: commands on its fd 3,
//! answers on its fd 4, each message JSON ended by a NUL byte), a PNG screenshot of each
//! page kept under the cargo target directory, and the accessibility check of axe-core
//! (the npm package of `tests/browser/`, `npm ci --prefix tests/browser`) run in it.
//!
//! The one call most tests need:
//!
//! ```ignore
//! if !common::browser::available() {
//!     eprintln!("skipping: {}", common::browser::MISSING);
//!     return;
//! }
//! let report = common::browser::check(&format!("{}/", r.base()), "pt-BR", "home-pt");
//! report.assert_accessible();
//! ```
//!
//! [`check`] loads the page at a phone's width (390×844, [`Viewport::PHONE`]), at a
//! desktop's (1280×800, [`Viewport::DESKTOP`]) and at a phone's in dark mode
//! ([`Viewport::PHONE_DARK`]), writes `<name>-phone.png`, `<name>-desktop.png` and
//! `<name>-phone-dark.png` to [`artefacts`] (target/test-artefacts/screenshots/), and
//! gives back every axe-core violation of each. [`Browser`] is the browser itself, for a
//! test that needs more: headers of its own, a form filled in, where it ended.

use std::io::Write;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};

/// What a test that skips says it lacks.
pub const MISSING: &str =
    "headless Chromium (chromium-headless-shell) or axe-core (npm ci --prefix tests/browser)";

/// The longest wait for one answer or event of the browser.
pub const BROWSER_TIMEOUT: Duration = Duration::from_secs(60);

/// The impacts that fail a page (axe-core's four are minor, moderate, serious, critical).
pub const FAILING_IMPACTS: [&str; 2] = ["serious", "critical"];

/// The size of the window a page is shown in, and whether the reader asks for dark mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Viewport {
    pub width: u32,
    pub height: u32,
    /// A phone's: the page's `<meta name="viewport">` is honoured, touch emulated.
    pub mobile: bool,
    pub dark: bool,
    /// Its part of a screenshot's name.
    pub name: &'static str,
}

impl Viewport {
    pub const PHONE: Viewport = Viewport {
        width: 390,
        height: 844,
        mobile: true,
        dark: false,
        name: "phone",
    };
    pub const DESKTOP: Viewport = Viewport {
        width: 1280,
        height: 800,
        mobile: false,
        dark: false,
        name: "desktop",
    };
    pub const PHONE_DARK: Viewport = Viewport {
        dark: true,
        name: "phone-dark",
        ..Viewport::PHONE
    };
    /// The views [`check`] takes of each page.
    pub const ALL: [Viewport; 3] = [Viewport::PHONE, Viewport::DESKTOP, Viewport::PHONE_DARK];
}

/// One rule of axe-core a page breaks.
#[derive(Clone, Debug)]
pub struct Violation {
    /// The view it was found in ([`Viewport::name`]).
    pub view: &'static str,
    /// The rule's id (`color-contrast`, `label`, …).
    pub id: String,
    /// minor, moderate, serious or critical.
    pub impact: String,
    pub help: String,
    /// How many elements break it.
    pub nodes: usize,
    /// The first of them: its CSS selector and its HTML.
    pub target: String,
    pub html: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let html: String = self.html.chars().take(200).collect();
        let more = if html.len() < self.html.len() {
            "…"
        } else {
            ""
        };
        write!(
            f,
            "{} ({}, {}): {}; {} element(s), the first {} {html}{more}",
            self.id, self.impact, self.view, self.help, self.nodes, self.target
        )
    }
}

/// What [`check`] saw of a page.
#[derive(Debug)]
pub struct Report {
    pub url: String,
    pub lang: String,
    /// Where the browser ended (redirects followed), and the page's title, in the first
    /// view.
    pub final_url: String,
    pub title: String,
    /// The status of the page's answer, the last of its redirects, in the first view.
    pub status: u16,
    /// The screenshots written, one per view.
    pub screenshots: Vec<PathBuf>,
    /// Every violation of every view.
    pub violations: Vec<Violation>,
}

impl Report {
    /// The violations of impact serious or critical ([`FAILING_IMPACTS`]).
    pub fn failing(&self) -> Vec<&Violation> {
        self.violations
            .iter()
            .filter(|v| FAILING_IMPACTS.contains(&v.impact.as_str()))
            .collect()
    }

    /// Fails the test, listing them, if the page has a serious or critical violation.
    pub fn assert_accessible(&self) {
        let failing = self.failing();
        assert!(
            failing.is_empty(),
            "{} ({}): {} serious or critical accessibility violation(s):\n{}\n(screenshots: {})",
            self.url,
            self.lang,
            failing.len(),
            failing
                .iter()
                .map(|v| format!("- {v}"))
                .collect::<Vec<_>>()
                .join("\n"),
            self.screenshots
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

/// Loads `url` as a reader whose browser speaks `lang` (`pt-BR`, `en`) would, in each
/// view of [`Viewport::ALL`]: a screenshot of each written as `<name>-<view>.png` in
/// [`artefacts`], and axe-core's violations of each. Panics when the browser or axe-core
/// is missing ([`available`] tells first) or does not answer.
pub fn check(url: &str, lang: &str, name: &str) -> Report {
    check_with(url, lang, name, &[])
}

/// [`check`], every request of the browser carrying `headers` too.
pub fn check_with(url: &str, lang: &str, name: &str, headers: &[(&str, &str)]) -> Report {
    let mut browser = Browser::launch(lang);
    browser.headers(headers);
    let mut report = Report {
        url: url.to_string(),
        lang: lang.to_string(),
        final_url: String::new(),
        title: String::new(),
        status: 0,
        screenshots: Vec::new(),
        violations: Vec::new(),
    };
    for view in Viewport::ALL {
        browser.view(view);
        browser.open(url);
        if report.final_url.is_empty() {
            report.final_url = browser.location();
            report.title = browser.title();
            report.status = browser.status();
        }
        report
            .screenshots
            .push(browser.screenshot(&format!("{name}-{}", view.name)));
        report.violations.extend(browser.axe(view.name));
    }
    report
}

/// Whether headless Chromium and axe-core are there; under `CI=true`, a panic when not
/// ([`crate::required_under_ci`]).
pub fn available() -> bool {
    crate::required_under_ci(chromium().is_some() && axe_source().is_file(), MISSING)
}

/// Debian's headless Chromium, the program itself rather than the shell script in
/// /usr/bin that starts it (which would outlive a kill): /usr/lib/chromium/, else what
/// `PATH` finds.
pub fn chromium() -> Option<PathBuf> {
    let real = [
        "/usr/lib/chromium/chromium-headless-shell",
        "/usr/lib/chromium/chromium",
    ];
    real.iter()
        .map(PathBuf::from)
        .chain(
            ["chromium-headless-shell", "chromium"]
                .iter()
                .flat_map(|name| {
                    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                        .map(move |dir| dir.join(name))
                        .collect::<Vec<_>>()
                }),
        )
        .find(|p| p.is_file())
}

/// axe-core's script, as `npm ci --prefix tests/browser` installs it.
pub fn axe_source() -> PathBuf {
    crate::repository().join("tests/browser/node_modules/axe-core/axe.min.js")
}

/// Where the screenshots are kept: `test-artefacts/screenshots/` in cargo's target
/// directory (the outermost directory tagged `CACHEDIR.TAG` above the test executable),
/// made if need be.
pub fn artefacts() -> PathBuf {
    let test = std::env::current_exe().expect("the test executable's path");
    let target = test
        .ancestors()
        // deps/, the profile's, the target triple's (both tagged), the target directory.
        .take(5)
        .filter(|d| d.join("CACHEDIR.TAG").is_file())
        .last()
        .or_else(|| test.parent().and_then(Path::parent))
        .expect("a test executable in target/.../deps/")
        .to_path_buf();
    let dir = target.join("test-artefacts").join("screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A headless Chromium of its own (its profile in a temporary directory), one tab,
/// driven over the DevTools protocol; closed (Browser.close), then killed with every
/// process of its group, when dropped.
pub struct Browser {
    child: Child,
    commands: std::io::PipeWriter,
    messages: Receiver<Value>,
    /// Events read while waiting for an answer, for a later wait.
    events: Vec<Value>,
    next_id: u64,
    session: String,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Chromium started, speaking `lang` (its `--lang`, and `Accept-Language` on every
    /// request), with a blank tab at a phone's width.
    pub fn launch(lang: &str) -> Browser {
        let program = chromium().expect(MISSING);
        let profile = tempfile::tempdir().unwrap();
        let (commands_in, commands) = std::io::pipe().unwrap();
        let (answers, answers_out) = std::io::pipe().unwrap();
        let (fd3, fd4): (OwnedFd, OwnedFd) = (commands_in.into(), answers_out.into());
        let mut command = Command::new(&program);
        command
            .args([
                "--headless",
                "--remote-debugging-pipe",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--disable-quic",
                "--hide-scrollbars",
                "--mute-audio",
                "--force-color-profile=srgb",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(format!("--lang={lang}"))
            .arg(format!("--accept-lang={lang}"))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own process group, so that every process it starts goes with it.
            .process_group(0);
        // SAFETY: between fork and exec only dup and dup2 run (no allocation, no lock):
        // the two ends are first moved above 3 and 4, then put there, without
        // close-on-exec.
        unsafe {
            command.pre_exec(move || {
                let high3 = rustix::io::fcntl_dupfd_cloexec(fd3.as_fd(), 10)?;
                let high4 = rustix::io::fcntl_dupfd_cloexec(fd4.as_fd(), 10)?;
                let mut three = OwnedFd::from_raw_fd(3);
                let mut four = OwnedFd::from_raw_fd(4);
                let done = rustix::io::dup2(&high3, &mut three)
                    .and_then(|()| rustix::io::dup2(&high4, &mut four));
                std::mem::forget(three);
                std::mem::forget(four);
                done.map_err(std::io::Error::from)
            });
        }
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
        // The child's ends, closed here, so that its exit ends the reading.
        drop(command);
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            let mut answers = std::io::BufReader::new(answers);
            loop {
                let mut message = Vec::new();
                match std::io::BufRead::read_until(&mut answers, 0, &mut message) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                if message.last() == Some(&0) {
                    message.pop();
                }
                let Ok(value) = serde_json::from_slice::<Value>(&message) else {
                    continue;
                };
                if sender.send(value).is_err() {
                    return;
                }
            }
        });
        let mut browser = Browser {
            child,
            commands,
            messages,
            events: Vec::new(),
            next_id: 0,
            session: String::new(),
            _profile: profile,
        };
        let target = browser.call("Target.createTarget", json!({"url": "about:blank"}));
        let target_id = target["targetId"].as_str().unwrap().to_string();
        let attached = browser.call(
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
        );
        browser.session = attached["sessionId"].as_str().unwrap().to_string();
        browser.send("Page.enable", json!({}));
        browser.send("Network.enable", json!({}));
        browser.headers(&[]);
        browser.lang(lang);
        browser.view(Viewport::PHONE);
        browser
    }

    /// `Accept-Language: lang` on every request, as `--accept-lang` asks too.
    fn lang(&mut self, lang: &str) {
        let agent = self.evaluate("navigator.userAgent");
        self.send(
            "Network.setUserAgentOverride",
            json!({"userAgent": agent, "acceptLanguage": lang}),
        );
    }

    /// `headers` sent with every request from now on (instead of those set before).
    pub fn headers(&mut self, headers: &[(&str, &str)]) {
        let headers: serde_json::Map<String, Value> = headers
            .iter()
            .map(|(n, v)| (n.to_string(), Value::from(*v)))
            .collect();
        self.send("Network.setExtraHTTPHeaders", json!({"headers": headers}));
    }

    /// Shows the pages in `view` from now on.
    pub fn view(&mut self, view: Viewport) {
        self.send(
            "Emulation.setDeviceMetricsOverride",
            json!({
                "width": view.width,
                "height": view.height,
                "deviceScaleFactor": 1,
                "mobile": view.mobile,
            }),
        );
        self.send(
            "Emulation.setEmulatedMedia",
            json!({"features": [{"name": "prefers-color-scheme", "value": if view.dark { "dark" } else { "light" }}]}),
        );
    }

    /// Goes to `url` and waits for its page (once every redirect is followed) to have
    /// loaded.
    pub fn open(&mut self, url: &str) {
        self.events.clear();
        let r = self.call("Page.navigate", json!({"url": url}));
        if let Some(e) = r.get("errorText").and_then(Value::as_str) {
            panic!("the browser could not load {url}: {e}");
        }
        self.wait_load();
    }

    /// Runs `script` (which navigates: a form submitted, a link followed) and waits for
    /// the page it leads to to have loaded.
    pub fn navigate_by(&mut self, script: &str) {
        self.events.clear();
        self.evaluate(script);
        self.wait_load();
    }

    /// Waits for the next `Page.loadEventFired` of the tab.
    fn wait_load(&mut self) {
        self.wait_event("Page.loadEventFired");
    }

    /// The value of the JavaScript expression `expression` in the page (a promise
    /// awaited).
    pub fn evaluate(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "awaitPromise": true, "returnByValue": true}),
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!("{expression:.200}: {e}");
        }
        r["result"]["value"].clone()
    }

    /// The page's address (`location.href`).
    pub fn location(&mut self) -> String {
        self.evaluate("location.href")
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The page's title (`document.title`).
    pub fn title(&mut self) -> String {
        self.evaluate("document.title")
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The status of the answer the page was read from (the last of its redirects).
    pub fn status(&mut self) -> u16 {
        let status = self.evaluate("performance.getEntriesByType('navigation')[0].responseStatus");
        status
            .as_u64()
            .and_then(|s| u16::try_from(s).ok())
            .unwrap_or(0)
    }

    /// A PNG of the whole page written as `<name>.png` in [`artefacts`]; its path.
    pub fn screenshot(&mut self, name: &str) -> PathBuf {
        let size = self.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]",
        );
        let (width, height) = (size[0].as_f64().unwrap(), size[1].as_f64().unwrap());
        let shot = self.call(
            "Page.captureScreenshot",
            json!({
                "format": "png",
                "captureBeyondViewport": true,
                "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
            }),
        );
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap();
        let path = artefacts().join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        path
    }

    /// axe-core run on the page: every violation, found in `view`.
    pub fn axe(&mut self, view: &'static str) -> Vec<Violation> {
        let source = std::fs::read_to_string(axe_source()).expect(MISSING);
        self.evaluate(&format!("{source}\n;true"));
        let found = self.evaluate(
            "axe.run(document, {resultTypes: ['violations']}).then(r => r.violations.map(v => ({id: v.id, impact: v.impact || '', help: v.help, nodes: v.nodes.length, target: v.nodes.length ? v.nodes[0].target.join(' ') : '', html: v.nodes.length ? v.nodes[0].html : ''})))",
        );
        found
            .as_array()
            .expect("axe.run's violations")
            .iter()
            .map(|v| Violation {
                view,
                id: v["id"].as_str().unwrap_or_default().to_string(),
                impact: v["impact"].as_str().unwrap_or_default().to_string(),
                help: v["help"].as_str().unwrap_or_default().to_string(),
                nodes: v["nodes"].as_u64().unwrap_or_default() as usize,
                target: v["target"].as_str().unwrap_or_default().to_string(),
                html: v["html"].as_str().unwrap_or_default().to_string(),
            })
            .collect()
    }

    /// Sends `method` to the tab and waits for its answer (its `result`).
    fn send(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.exchange(method, params, Some(session).filter(|s| !s.is_empty()))
    }

    /// Sends `method` to the browser itself (no session) and waits for its answer.
    fn call(&mut self, method: &str, params: Value) -> Value {
        if method.starts_with("Target.") {
            self.exchange(method, params, None)
        } else {
            self.send(method, params)
        }
    }

    fn exchange(&mut self, method: &str, params: Value, session: Option<String>) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            message["sessionId"] = Value::from(s);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.commands
            .write_all(&bytes)
            .unwrap_or_else(|e| panic!("the browser went away before {method}: {e}"));
        loop {
            let m = self.next_message(method);
            if m.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(e) = m.get("error") {
                    panic!("{method}: {e}");
                }
                return m["result"].clone();
            }
            if m.get("method").is_some() {
                self.events.push(m);
            }
        }
    }

    /// Waits for the event `method` of the tab (one read already counts).
    fn wait_event(&mut self, method: &str) -> Value {
        let mine = |m: &Value, session: &str| {
            m["method"] == method && m["sessionId"].as_str().unwrap_or_default() == session
        };
        if let Some(i) = self.events.iter().position(|m| mine(m, &self.session)) {
            return self.events.remove(i);
        }
        loop {
            let m = self.next_message(method);
            if mine(&m, &self.session) {
                return m;
            }
        }
    }

    fn next_message(&mut self, waiting_for: &str) -> Value {
        let deadline = Instant::now() + BROWSER_TIMEOUT;
        match self
            .messages
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => {
                panic!("the browser did not answer {waiting_for} in {BROWSER_TIMEOUT:?}")
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.child.try_wait();
                panic!("the browser exited ({status:?}) while {waiting_for} was awaited")
            }
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let mut bytes = serde_json::to_vec(&json!({"id": 0, "method": "Browser.close"})).unwrap();
        bytes.push(0);
        let _ = self.commands.write_all(&bytes);
        // It exits on its own after Browser.close, and its answers end then: waited for
        // a while, then killed, its whole group with it.
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            match self.messages.recv_timeout(Duration::from_millis(200)) {
                Ok(_) | Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        if let Some(pid) = rustix::process::Pid::from_raw(self.child.id() as i32) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
