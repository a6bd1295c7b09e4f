//! Automatic inclusion and exclusion (§7.2 and Figure 7.1 of the resolution standard): an
//! Archive switched on asks each resolver of its `[registration]` to include it, and
//! switched off, to exclude it; its registration stays. `ibi-archive serve` runs it (the
//! CGI program never does: a web server's Archive has the systemd unit of debian/).
//!
//! One thread per resolver, each on its own: the inclusion request (the one `include`
//! sends), and on a failure one log line and another try after a pause that doubles from
//! [`Backoff::FIRST`] up to [`Backoff::MAX`], until the resolver answers `status.archive
//! included` or the [`Switch`] is turned off. When the resolver says how long to wait
//! (`429` or `503` with `Retry-After`: many Archives of one network asking at once, or
//! its registry out of reach), the pause is that
//! ([`super::registration::MAX_RETRY_WAIT`] at most), and the backoff is left as it
//! was. Then the exclusion request, given what is left of [`EXCLUSION_BOUND`] after the
//! switch was turned off (sent again after the pause the resolver asks for, if a try
//! still fits); [`Running::finish`] waits no longer than that, so that a resolver that
//! does not answer never holds the stop. A resolver's two requests go out in that order
//! from its one thread: an inclusion still under way when the switch is turned off ends
//! before the exclusion is sent, never after it.
//!
//! Nothing here is fatal: a `[registration]` that does not check is one log line and no
//! request. Every line is written through the caller's log, one line each, with the key
//! scrubbed from whatever the resolver or the HTTP client said.

use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::registration::{
    judge, prepare, send_within, Direction, Failure, Prepared, Verdict, TIMEOUT,
};
use crate::config::Config;
use crate::httpd::Log;

/// How long after the switch is turned off the exclusions may take, in all.
pub const EXCLUSION_BOUND: Duration = Duration::from_secs(5);

/// The pause before the next try: [`Backoff::FIRST`], doubled after each failure, at most
/// [`Backoff::MAX`].
#[derive(Debug, Clone)]
pub struct Backoff {
    next: Duration,
}

impl Backoff {
    pub const FIRST: Duration = Duration::from_secs(1);
    pub const MAX: Duration = Duration::from_secs(300);

    pub fn new() -> Backoff {
        Backoff { next: Self::FIRST }
    }

    /// The pause to take now; the next one is twice as long, up to the cap.
    pub fn pause(&mut self) -> Duration {
        let now = self.next;
        self.next = (now * 2).min(Self::MAX);
        now
    }
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff::new()
    }
}

/// The pause after `failure`: the one the resolver asked for, when it did (and whether
/// it did), else the backoff's next.
fn pause_after(failure: &Failure, backoff: &mut Backoff) -> (Duration, bool) {
    match failure.pause() {
        Some(asked) => (asked, true),
        None => (backoff.pause(), false),
    }
}

/// On until turned off (by a signal's handler, or when the server stops), once; the
/// threads of [`start`] wait on it.
#[derive(Debug, Default)]
pub struct Switch {
    off_at: Mutex<Option<Instant>>,
    changed: Condvar,
}

impl Switch {
    pub fn new() -> Arc<Switch> {
        Arc::new(Switch::default())
    }

    /// Turns it off (again: nothing more), waking whoever waits.
    pub fn turn_off(&self) {
        let mut off = self.off_at.lock().unwrap_or_else(|e| e.into_inner());
        if off.is_none() {
            *off = Some(Instant::now());
            self.changed.notify_all();
        }
    }

    /// When it was turned off.
    pub fn off_at(&self) -> Option<Instant> {
        *self.off_at.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until it is off, at most `timeout` (`None`: for good); whether it is off.
    fn wait_off(&self, timeout: Option<Duration>) -> bool {
        let until = timeout.map(|t| Instant::now() + t);
        let mut off = self.off_at.lock().unwrap_or_else(|e| e.into_inner());
        while off.is_none() {
            match until {
                None => off = self.changed.wait(off).unwrap_or_else(|e| e.into_inner()),
                Some(until) => {
                    let left = until.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return false;
                    }
                    off = self
                        .changed
                        .wait_timeout(off, left)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }
        }
        true
    }
}

/// The threads of [`start`], one per resolver.
pub struct Running {
    switch: Arc<Switch>,
    log: Arc<Log>,
    /// The resolvers, by index.
    resolvers: Vec<String>,
    /// The index of each thread whose exclusion is over (answered or failed).
    done: Receiver<usize>,
}

/// Starts the inclusion of the Archive of `config` in each resolver of its
/// `[registration]`, and its exclusion from each once `switch` is turned off. `None`
/// when there is no `[registration]`, or when it does not check (said in one line).
pub fn start(config: &Config, switch: Arc<Switch>, log: Arc<Log>) -> Option<Running> {
    config.registration.as_ref()?;
    let requests = prepare(config, Direction::Include, &[])
        .and_then(|inc| Ok((inc, prepare(config, Direction::Exclude, &[])?)));
    let (includes, excludes) = match requests {
        Ok(r) => r,
        Err(e) => {
            log(&format!(
                "ibi-archive: automatic inclusion: nothing sent: {}",
                e.message.trim_end_matches("; nothing was sent")
            ));
            return None;
        }
    };
    let resolvers: Vec<String> = includes.iter().map(|r| r.resolver.clone()).collect();
    let (done_tx, done) = channel();
    for (i, (include, exclude)) in includes.into_iter().zip(excludes).enumerate() {
        let (switch, thread_log, done_tx) = (switch.clone(), log.clone(), done_tx.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("inclusion-{i}"))
            .spawn(move || {
                on_and_off(&include, &exclude, &switch, &*thread_log);
                let _ = done_tx.send(i);
            });
        if let Err(e) = spawned {
            log(&format!(
                "ibi-archive: automatic inclusion in {}: cannot start its thread: {e}",
                resolvers[i]
            ));
        }
    }
    Some(Running {
        switch,
        log,
        resolvers,
        done,
    })
}

impl Running {
    /// The resolvers asked.
    pub fn resolvers(&self) -> &[String] {
        &self.resolvers
    }

    /// Turns the switch off (if it is not yet) and waits for the exclusions until
    /// [`EXCLUSION_BOUND`] after it was turned off; each resolver that had not answered by
    /// then is said in one line.
    pub fn finish(self) {
        self.switch.turn_off();
        let deadline = self.switch.off_at().unwrap_or_else(Instant::now) + EXCLUSION_BOUND;
        let mut over = vec![false; self.resolvers.len()];
        while over.iter().any(|o| !o) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.done.recv_timeout(left) {
                Ok(i) => over[i] = true,
                Err(RecvTimeoutError::Timeout) => break,
                // Every thread is gone (or none started): nothing more will come.
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        for (url, _) in self.resolvers.iter().zip(&over).filter(|(_, o)| !**o) {
            (self.log)(&format!(
                "ibi-archive: exclusion from {url}: no answer within {} s; the Archive may still be included there",
                EXCLUSION_BOUND.as_secs()
            ));
        }
    }
}

/// One resolver's thread: included until the switch is turned off, then excluded.
fn on_and_off(include: &Prepared, exclude: &Prepared, switch: &Switch, log: &Log) {
    let url = &include.resolver;
    let mut backoff = Backoff::new();
    while switch.off_at().is_none() {
        match ask(include, TIMEOUT) {
            Ok(said) => {
                log(&format!("ibi-archive: inclusion in {url}: {said}"));
                break;
            }
            Err(failure) => {
                let (pause, asked) = pause_after(&failure, &mut backoff);
                log(&format!(
                    "ibi-archive: inclusion in {url} failed: {failure}; next try in {} s{}",
                    pause.as_secs(),
                    if asked { ", as the resolver asked" } else { "" }
                ));
                if switch.wait_off(Some(pause)) {
                    break;
                }
            }
        }
    }
    switch.wait_off(None);
    // Whatever is left of the bound (the resolver gets a second at least: the client
    // counts whole seconds); past the bound, `finish` no longer waits.
    let left = || {
        switch.off_at().map_or(EXCLUSION_BOUND, |at| {
            (at + EXCLUSION_BOUND).saturating_duration_since(Instant::now())
        })
    };
    loop {
        match ask(exclude, left()) {
            Ok(said) => log(&format!("ibi-archive: exclusion from {url}: {said}")),
            // Asked again after the pause the resolver asks for, if a try still fits in
            // the bound after it.
            Err(failure)
                if failure
                    .pause()
                    .is_some_and(|p| p + Duration::from_secs(1) <= left()) =>
            {
                let pause = failure.pause().unwrap_or_default();
                log(&format!(
                    "ibi-archive: exclusion from {url} failed: {failure}; next try in {} s, as the resolver asked",
                    pause.as_secs()
                ));
                // The switch is off: nothing else to wait for.
                std::thread::sleep(pause);
                continue;
            }
            Err(failure) => log(&format!(
                "ibi-archive: exclusion from {url} failed: {failure}"
            )),
        }
        break;
    }
}

/// Sends `req` and judges the answer: its pairs on one line (`name value, …`), or why it
/// failed; never the key.
fn ask(req: &Prepared, timeout: Duration) -> Result<String, Failure> {
    let answer = send_within(req, timeout)?;
    let verdict = judge(req, &answer)?;
    let mut said = req.scrub(&answer.lines().join(", "));
    if verdict == Verdict::IncludedUnconfirmed {
        said.push_str(
            " (the resolver could not reach the Archive service: is archiveaddress the address it is reached at?)",
        );
    }
    Ok(said)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pause_doubles_from_one_second_up_to_five_minutes() {
        let mut b = Backoff::new();
        let pauses: Vec<u64> = (0..12).map(|_| b.pause().as_secs()).collect();
        assert_eq!(pauses, [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300]);
    }

    #[test]
    fn a_pause_the_resolver_asks_for_stands_for_the_backoff_and_leaves_it_as_it_was() {
        let failure = |retry_after: Option<u64>| Failure {
            message: "the resolver at http://r.example.org/X answered 429 Too Many Requests"
                .to_string(),
            retry_after: retry_after.map(Duration::from_secs),
        };
        let mut b = Backoff::new();
        let got: Vec<(u64, bool)> = [None, None, Some(3), Some(0), Some(600), None]
            .into_iter()
            .map(|r| {
                let (pause, asked) = pause_after(&failure(r), &mut b);
                (pause.as_secs(), asked)
            })
            .collect();
        // Asked: 3 s; 0 s is a second; 600 s is cut to the longest pause. The backoff
        // goes on from where the failures without Retry-After left it.
        assert_eq!(
            got,
            [
                (1, false),
                (2, false),
                (3, true),
                (1, true),
                (crate::admin::registration::MAX_RETRY_WAIT.as_secs(), true),
                (4, false)
            ]
        );
    }

    #[test]
    fn the_switch_wakes_who_waits_and_stays_off() {
        let switch = Switch::new();
        assert!(!switch.wait_off(Some(Duration::from_millis(1))));
        let waiter = {
            let switch = switch.clone();
            std::thread::spawn(move || switch.wait_off(None))
        };
        switch.turn_off();
        assert!(waiter.join().unwrap());
        let first = switch.off_at().unwrap();
        switch.turn_off();
        assert_eq!(switch.off_at(), Some(first));
        assert!(switch.wait_off(Some(Duration::ZERO)));
    }

    #[test]
    fn a_registration_that_does_not_check_is_one_line_and_nothing_sent() {
        let text = "archiveaddress = \"a.example.org\"\narchiveserviceibi = \"sid.inpe.br/mtc-m21/2012/06.05.15.34.39\"\n[registration]\nresolvers = [\"http://a.example.org/X\", \"ftp://b.example.org/X\"]\nadminemail = \"banon@dpi.inpe.br\"\nkey = \"9876543210\"\nip = \"150.163.34.239\"\n";
        let config = Config::parse(text).unwrap();
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let log: Arc<Log> = {
            let lines = lines.clone();
            Arc::new(move |l: &str| lines.lock().unwrap().push(l.to_string()))
        };
        assert!(start(&config, Switch::new(), log.clone()).is_none());
        assert_eq!(
            *lines.lock().unwrap(),
            ["ibi-archive: automatic inclusion: nothing sent: resolver \"ftp://b.example.org/X\" is not an http:// URL"]
        );
        // No [registration]: nothing at all.
        let bare = Config::parse(text.split("[registration]").next().unwrap()).unwrap();
        assert!(start(&bare, Switch::new(), log).is_none());
        assert_eq!(lines.lock().unwrap().len(), 1);
    }
}
