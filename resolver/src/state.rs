//! What the handlers share ([`AppState`]): the configuration, the resolution engine, the
//! registry (run off the async threads), the included Archives as last read, the bounds
//! of resolutions and key checks, and the client networks' counts. Its tasks are the
//! ones the server runs in the background (reading the registry again, writing the
//! Archives' health, asking dormant Archives) and the checks of the resolver service
//! (a registration key, whether an address is this resolver's own).

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

use ibi::Ibi;
use tokio::sync::Semaphore;

use crate::acknowledge::Acknowledger;
use crate::client::{Confirmation, Counted};
use crate::clients::{ClientBook, Network};
use crate::clock::{self, Clock};
use crate::config::Config;
use crate::homes::Archives;
use crate::keys::{
    retry_after, Crowd, KeyCheck, KeyLines, NoTurn, Slowdown, KEY_CHECKS, KEY_TURN_WAIT,
    MAX_KEY_CHECKS_IN_LINE, MAX_KEY_CHECKS_WAITING,
};
use crate::log::say;
use crate::memory::LocationMemory;
use crate::registry::{self, Registry, RegistryError, RegistryErrorKind};
use crate::resolve::Engine;

/// How often the list of included Archives is read again from the registry (it may be
/// changed by `register`/`unregister` from the shell), and the Archives' health written.
pub const REFRESH: Duration = Duration::from_secs(2);

/// How long a call of the registry may take before its caller takes the registry for out
/// of reach: longer than the bounds set on PostgreSQL's side (a statement 5 s), so that
/// those answer first, and short enough that an Archive asking to be included (it waits
/// 10 s) gets the answer 503.
pub const REGISTRY_WAIT: Duration = Duration::from_secs(6);

/// Everything the handlers share.
pub struct AppState {
    pub config: Config,
    pub engine: Engine,
    registry: Arc<tokio::sync::Mutex<Registry>>,
    archives: RwLock<Arc<Archives>>,
    /// Shared with the verification, which runs on to its end off the async threads.
    slowdown: Arc<Mutex<Slowdown>>,
    /// Key checks (argon2id, 19 MiB each) under way at once, their work included.
    key_checks: Arc<Semaphore>,
    /// Key checks waiting for one of `key_checks`; beyond [`MAX_KEY_CHECKS_WAITING`], 429.
    key_checks_waiting: Arc<AtomicUsize>,
    pub acknowledgments: Acknowledger,
    /// Resolutions under way; when none is left, `503`.
    pub resolutions: Semaphore,
    /// What each client network holds.
    pub clients: Arc<ClientBook>,
    /// Each client network's key checks, in line for their turn (one under way at a
    /// time each).
    key_lines: Arc<KeyLines>,
    /// The address the server listens on, once it does.
    pub local: OnceLock<SocketAddr>,
    /// The newest entry of `ibi-resolver forget` dropped from the memory.
    forgotten: AtomicI64,
    /// Whether the registry answered the last time it was read, for `/healthz`.
    reachable: Mutex<Reachable>,
    /// Whether this resolver is told of the registry's changes (PostgreSQL's
    /// notifications, [`crate::listen`]) and needs not read it every few seconds.
    pub listening: AtomicBool,
}

/// Whether the registry answered the last time it was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reachable {
    Yes,
    /// Not since `since` (ISO 8601 UTC), for `reason`.
    No {
        since: String,
        reason: String,
    },
}

impl AppState {
    /// The state of a server of `config`, by the system's clock.
    pub fn new(config: Config) -> Result<AppState, RegistryError> {
        AppState::with_clock(config, clock::system())
    }

    /// The state of a server of `config` whose time of day (the Archives' health, the
    /// memory's entries, the registry's dates) is read from `clock`.
    pub fn with_clock(config: Config, clock: Arc<dyn Clock>) -> Result<AppState, RegistryError> {
        let config_resolutions = config.limits.resolutions;
        let mut registry = Registry::open(&config.database)?.with_clock(clock.clone());
        let archives = registry.included()?;
        let forgotten = registry.last_forgotten()?;
        let memory = LocationMemory::open(
            &config.database,
            config.memory_entries,
            config.memory_expiry,
        )?;
        let engine = Engine {
            memory: Arc::new(memory.with_clock(clock.clone())),
            clock,
            ..Engine::new(&config)
        };
        engine.client.fit(
            &archives
                .iter()
                .map(|a| a.address.as_str())
                .collect::<Vec<_>>(),
        );
        let acknowledgments = Acknowledger::new(
            engine.client.clone(),
            engine.timeout,
            engine.metrics.clone(),
        );
        Ok(AppState {
            clients: ClientBook::new(&config.limits),
            key_lines: KeyLines::new(),
            key_checks_waiting: Arc::new(AtomicUsize::new(0)),
            local: OnceLock::new(),
            forgotten: AtomicI64::new(forgotten),
            reachable: Mutex::new(Reachable::Yes),
            listening: AtomicBool::new(false),
            config,
            engine,
            registry: Arc::new(tokio::sync::Mutex::new(registry)),
            archives: RwLock::new(Arc::new(Archives::new(archives))),
            slowdown: Arc::new(Mutex::new(Slowdown::new())),
            // argon2id works in 19 MiB per check.
            key_checks: Arc::new(Semaphore::new(KEY_CHECKS)),
            acknowledgments,
            resolutions: Semaphore::new(config_resolutions),
        })
    }

    /// The included Archives now.
    pub fn archives(&self) -> Arc<Archives> {
        self.archives.read().map(|a| a.clone()).unwrap_or_default()
    }

    /// Whether the registry answered the last time it was read.
    pub fn reachable(&self) -> Reachable {
        self.reachable
            .lock()
            .map(|r| r.clone())
            .unwrap_or(Reachable::Yes)
    }

    /// Notes whether the registry answered a call (any fault but one of reach is an
    /// answer), saying so once when it stops answering (resolutions then go on with the
    /// Archives and the memory held) and once when it answers again.
    fn note_reachable<T>(&self, done: &Result<T, RegistryError>) {
        let Ok(mut r) = self.reachable.lock() else {
            return;
        };
        match (done, &*r) {
            (Err(e), Reachable::Yes) if e.kind() == RegistryErrorKind::Unreachable => {
                say(&format!(
                    "cannot read the registry: {e}; resolving with the Archives and the memory held, tried again every {:?}",
                    REFRESH
                ));
                *r = Reachable::No {
                    since: ibi::time::iso8601(self.engine.clock.now()),
                    reason: e.to_string(),
                };
                self.engine.metrics.registry_reachable(false);
            }
            (Err(e), Reachable::No { .. }) if e.kind() == RegistryErrorKind::Unreachable => {}
            (_, Reachable::No { .. }) => {
                say("the registry answers again");
                *r = Reachable::Yes;
                self.engine.metrics.registry_reachable(true);
            }
            _ => {}
        }
    }

    /// Reads the included Archives from the registry again (whether the registry
    /// answers is noted by every call of it, [`AppState::with_registry`]).
    pub async fn refresh(&self) -> Result<(), RegistryError> {
        let list = self.with_registry(|r| r.included()).await?;
        let names: Vec<&str> = list.iter().map(|a| a.serviceibi.as_str()).collect();
        self.engine.health.retain(&names);
        self.engine
            .client
            .fit(&list.iter().map(|a| a.address.as_str()).collect::<Vec<_>>());
        self.acknowledgments.retain(&names);
        if let Ok(mut a) = self.archives.write() {
            *a = Arc::new(Archives::new(list));
        }
        // What `ibi-resolver forget` removed from the table leaves the memory too.
        let since = self.forgotten.load(Ordering::Relaxed);
        let (ibis, last) = self
            .with_registry(move |r| r.forgotten_after(since))
            .await?;
        self.engine.memory.drop_entries(&ibis);
        self.forgotten.store(last, Ordering::Relaxed);
        self.clients.sweep();
        Ok(())
    }

    /// Writes to the registry what resolutions learnt of the Archives' health.
    pub async fn record_health(&self) -> Result<(), RegistryError> {
        let changed = Arc::new(self.engine.health.take_changed());
        if changed.is_empty() {
            return Ok(());
        }
        let writing = changed.clone();
        let written = self.with_registry(move |r| r.record_health(&writing)).await;
        if written.is_err() {
            self.engine.health.changed_again(&changed);
        }
        written
    }

    /// Asks every dormant Archive whether it answers again (inclusionConfirmationRequest).
    pub async fn probe_dormant(&self) {
        let archives = self.archives();
        let mut probes = tokio::task::JoinSet::new();
        for a in archives.iter() {
            let health = self
                .engine
                .health
                .of(a.serviceibi.as_str(), || a.recorded.clone());
            match health.state() {
                crate::health::State::Dormant => {}
                crate::health::State::Awake => continue,
            }
            let client = self.engine.client.clone();
            let clock = self.engine.clock.clone();
            let timeout = self.engine.timeout;
            let (address, archive) = (a.address.clone(), a.serviceibi.to_string());
            probes.spawn(async move {
                let start = Instant::now();
                if client.confirm(&address, &archive, timeout).await == Confirmation::Yes
                    && health.success(start.elapsed(), clock::millis(&*clock))
                        == crate::health::Change::Woke
                {
                    say(&format!("{archive} answers again: asked again"));
                }
            });
        }
        while probes.join_next().await.is_some() {}
    }

    /// Runs `work` on the registry off the async threads (SQLite and PostgreSQL's client
    /// block), one at a time. A registry that does not answer within [`REGISTRY_WAIT`]
    /// (a database that hangs rather than fails) is out of reach for the caller, which
    /// neither waits longer nor holds a thread to wait: the work under way ends when the
    /// database answers or its connection is found dead.
    async fn with_registry<T, F>(&self, work: F) -> Result<T, RegistryError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Registry) -> Result<T, RegistryError> + Send + 'static,
    {
        let silent = || {
            RegistryError::new(
                RegistryErrorKind::Unreachable,
                format!(
                    "registry unreachable: no answer within {} s",
                    REGISTRY_WAIT.as_secs()
                ),
            )
        };
        let done =
            match tokio::time::timeout(REGISTRY_WAIT, self.registry.clone().lock_owned()).await {
                Err(_) => Err(silent()),
                Ok(mut registry) => {
                    let task = tokio::task::spawn_blocking(move || work(&mut registry));
                    match tokio::time::timeout(REGISTRY_WAIT, task).await {
                        Ok(Ok(done)) => done,
                        Ok(Err(e)) => Err(RegistryError::new(
                            RegistryErrorKind::Database,
                            format!("registry task: {e}"),
                        )),
                        Err(_) => Err(silent()),
                    }
                }
            };
        self.note_reachable(&done);
        done
    }

    /// Runs one change of the registry (a transaction) off the async threads, then
    /// reads the included Archives again.
    pub async fn write<T, F>(&self, change: F) -> Result<T, RegistryError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Registry) -> Result<T, RegistryError> + Send + 'static,
    {
        let done = self.with_registry(change).await?;
        self.refresh().await?;
        Ok(done)
    }

    /// Reads the registry ([`AppState::with_registry`]'s bounds), changing nothing.
    pub async fn read<T, F>(&self, work: F) -> Result<T, RegistryError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Registry) -> Result<T, RegistryError> + Send + 'static,
    {
        self.with_registry(work).await
    }

    /// Whether `key` is the registered key of `serviceibi`. The checks from one client
    /// network wait in line and are made in turn, one at a time, in the order they came:
    /// Archives switched on together on one network all get in, one after the other.
    /// The line is bounded, in length ([`MAX_KEY_CHECKS_IN_LINE`] behind the check under
    /// way) and in time ([`KEY_TURN_WAIT`]); beyond either, the check is not made and the
    /// answer says when to come back ([`KeyCheck::Busy`], from the checks before it and
    /// what each takes). Once it has its turn, a check waits the slowdown of the wrong
    /// keys ([`Slowdown`]) from its network and for its Archive, reckoned then: after the
    /// checks before it in line were counted, so that right keys in line are not slowed
    /// down by one another, while every wrong key slows down the checks after it. That
    /// wait holds its network's turn but none of the slots of the key checks themselves,
    /// so wrong keys from one network delay a check from another by one key check at
    /// most. A check is counted as a failure before it is made (and the count cleared
    /// when the key is right, before the next in line has its turn), and its work holds
    /// its slot and its network's turn to its end, so a client that goes away escapes
    /// neither the slowdown nor the bound.
    pub async fn check_key(&self, serviceibi: &Ibi, key: &str, client: IpAddr) -> KeyCheck {
        let network = Network::of(client);
        let archive = serviceibi.key();
        let slowed = |now| match self.slowdown.lock() {
            Ok(s) => s.wait(network, &archive, now),
            Err(_) => Duration::from_secs(1),
        };
        let mut turn = match self
            .key_lines
            .take(network, KEY_TURN_WAIT, MAX_KEY_CHECKS_IN_LINE)
            .await
        {
            Ok(turn) => turn,
            Err(no) => {
                // The checks in line before a new one, each its wait and its work.
                let each = slowed(Instant::now()) + self.key_lines.work();
                return KeyCheck::Busy {
                    crowd: match no {
                        NoTurn::Full => Crowd::NetworkLine,
                        NoTurn::Late => Crowd::NetworkTurn,
                    },
                    retry_after: retry_after(self.key_lines.len(network), each),
                };
            }
        };
        let wait = slowed(Instant::now());
        tokio::time::sleep(wait).await;
        turn.working();
        let waiting = Counted::enter(&self.key_checks_waiting);
        if waiting.count > MAX_KEY_CHECKS_WAITING {
            return KeyCheck::Busy {
                crowd: Crowd::Everyone,
                retry_after: retry_after(waiting.count / KEY_CHECKS, self.key_lines.work()),
            };
        }
        let Ok(permit) = self.key_checks.clone().acquire_owned().await else {
            return KeyCheck::Wrong { waited: wait };
        };
        drop(waiting);
        // The stored hash is read under the registry's lock; the key is verified outside
        // it, the slot and the turn held until the work ends, whoever waits for it.
        let ibi = serviceibi.clone();
        let hash = match self.with_registry(move |r| r.key_hash(&ibi)).await {
            Ok(hash) => hash,
            // Nothing to check against while the registry cannot be read: no key is
            // refused for that, the request is to be made again.
            Err(e) => {
                drop((permit, turn));
                return KeyCheck::Unavailable {
                    reason: e.to_string(),
                };
            }
        };
        // From here the check is made, whether its client waits for it or not.
        if let Ok(mut s) = self.slowdown.lock() {
            s.failed(network, &archive, Instant::now());
        }
        let key = key.to_string();
        let slowdown = self.slowdown.clone();
        // An unreadable registry verifies against no hash: a refusal after the same work.
        let right = tokio::task::spawn_blocking(move || {
            let right = registry::verify_key(&key, hash.as_deref());
            if right {
                if let Ok(mut s) = slowdown.lock() {
                    s.succeeded(network, &archive);
                }
            }
            drop(permit);
            turn.done();
            right
        })
        .await
        .unwrap_or(false);
        if right {
            KeyCheck::Right { waited: wait }
        } else {
            KeyCheck::Wrong { waited: wait }
        }
    }

    /// Whether an Archive at `address` (`host[:port]`) would be this resolver itself: its
    /// public URL's host and port, or an address the name resolves to that is the one it
    /// listens on (any local address, when it listens on all).
    pub async fn is_own_address(&self, address: &str) -> bool {
        let Ok(url) = url::Url::parse(&format!("http://{address}/")) else {
            return false;
        };
        let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
            return false;
        };
        if let Ok(public) = url::Url::parse(&self.config.publicurl) {
            if public
                .host_str()
                .is_some_and(|h| h.eq_ignore_ascii_case(host))
                && public.port_or_known_default() == Some(port)
            {
                return true;
            }
        }
        let listening = self.local.get().copied().unwrap_or(self.config.listen);
        if port != listening.port() {
            return false;
        }
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let lookup = tokio::time::timeout(
            Duration::from_secs(5),
            tokio::net::lookup_host((host, port)),
        )
        .await;
        let Ok(Ok(found)) = lookup else {
            return false;
        };
        found.into_iter().any(|a| {
            let ip = a.ip().to_canonical();
            ip == listening.ip()
                || (listening.ip().is_unspecified()
                    && (ip.is_loopback() || std::net::UdpSocket::bind((ip, 0)).is_ok()))
        })
    }
}
