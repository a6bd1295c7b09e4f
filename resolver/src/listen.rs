//! What the other resolvers of one PostgreSQL database tell this one: each change of the
//! registered or included Archives (or of the memory by `ibi-resolver forget`), on
//! [`REGISTRY_CHANNEL`], has the included Archives read again at once; the IBIs the
//! others' memories learnt, named on [`MEMORY_CHANNEL`], are read from the memory's table
//! and taken into this one's ([`crate::memory::LocationMemory::take_shared`]). A
//! notification only names: any role that may connect to the database may send one, and
//! only the resolvers write the tables, so what is taken in is what a resolver wrote.
//!
//! One connection of its own, listening. When it breaks (PostgreSQL stopped, a failover)
//! the log says so once, and it is made again every [`RETRY`] until it works, the log
//! saying so once more; then the Archives are read again, for what changed meanwhile was
//! told to nobody. Meanwhile resolutions go on with the Archives and the memory held, and
//! the registry is read every [`crate::state::REFRESH`] instead.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_postgres::AsyncMessage;

use crate::log::say;
use crate::memory::SHARED_MAX;
use crate::state::AppState;
use crate::store::{masked, postgres_config, MEMORY_CHANNEL, REGISTRY_CHANNEL};

/// How long after a failed connection the next is tried.
pub const RETRY: Duration = Duration::from_secs(1);

/// Listens to the registry at `uri` for as long as the server runs.
pub async fn listen(state: Arc<AppState>, uri: String) {
    let mut lost = false;
    loop {
        let outcome = listen_once(&state, &uri, &mut lost).await;
        state.listening.store(false, Ordering::Relaxed);
        if !lost {
            // Whether the registry itself is out of reach, known now rather than at the
            // next reading.
            let _ = state.refresh().await;
            lost = true;
            say(&format!(
                "not told of the registry's changes ({}): {outcome}; connecting again every {RETRY:?}, reading the registry every {:?} meanwhile",
                masked(&uri),
                crate::state::REFRESH
            ));
        }
        tokio::time::sleep(RETRY).await;
    }
}

/// One connection: listens until it breaks; why it ended.
async fn listen_once(state: &Arc<AppState>, uri: &str, lost: &mut bool) -> String {
    let (config, tls) = match postgres_config(uri, "listen") {
        Ok(c) => c,
        Err(e) => return e,
    };
    let (client, mut connection) = match config.connect(tls).await {
        Ok(c) => c,
        Err(e) => return format!("cannot connect: {}", crate::store::pg_error_text(&e)),
    };
    // What the notifications asked for, merged and bounded however many arrive: the
    // Archives to read again, and at most SHARED_MAX IBIs to look up.
    let pending = Arc::new(Mutex::new(Pending::default()));
    let wake = Arc::new(Notify::new());
    // The connection is driven here, its notifications merged into `pending`; it ends
    // with the connection.
    let mut driver = {
        let (pending, wake, state) = (pending.clone(), wake.clone(), state.clone());
        tokio::spawn(async move {
            loop {
                match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                    Some(Ok(AsyncMessage::Notification(n))) => {
                        if let Ok(mut p) = pending.lock() {
                            match n.channel() {
                                REGISTRY_CHANNEL => p.registry = true,
                                MEMORY_CHANNEL if p.ibis.len() < SHARED_MAX => {
                                    let room = SHARED_MAX - p.ibis.len();
                                    let ibis = state.engine.memory.shared_ibis(n.payload());
                                    p.ibis.extend(ibis.into_iter().take(room));
                                }
                                _ => {}
                            }
                        }
                        wake.notify_one();
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => return crate::store::pg_error_text(&e),
                    None => return "the connection was closed".to_string(),
                }
            }
        })
    };
    let listening = client
        .batch_execute(&format!(
            "LISTEN {REGISTRY_CHANNEL}; LISTEN {MEMORY_CHANNEL}"
        ))
        .await;
    if let Err(e) = listening {
        driver.abort();
        return format!("cannot listen: {}", crate::store::pg_error_text(&e));
    }
    state.listening.store(true, Ordering::Relaxed);
    if std::mem::take(lost) {
        say("told of the registry's changes again");
    }
    // What changed while nobody listened.
    let _ = state.refresh().await;
    loop {
        tokio::select! {
            ended = &mut driver => {
                return ended.unwrap_or_else(|e| format!("listener stopped: {e}"));
            }
            () = wake.notified() => {}
        }
        let Pending { registry, ibis } = pending
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default();
        if !ibis.is_empty() {
            // Where they are, as the table says.
            let rows = client
                .query(
                    "SELECT ibi, archive, verified FROM locations WHERE ibi = ANY($1)",
                    &[&ibis],
                )
                .await;
            match rows {
                Ok(rows) => {
                    let entries: Vec<(String, String, i64)> = rows
                        .iter()
                        .filter_map(|r| {
                            Some((r.try_get(0).ok()?, r.try_get(1).ok()?, r.try_get(2).ok()?))
                        })
                        .collect();
                    state.engine.memory.take_shared(&entries);
                }
                Err(e) => crate::log::complain(
                    "memory not shared",
                    &format!(
                        "location memory of the other resolvers: {}",
                        crate::store::pg_error_text(&e)
                    ),
                ),
            }
        }
        if registry {
            let _ = state.refresh().await;
        }
    }
}

/// What notifications asked for since last looked at.
#[derive(Default)]
struct Pending {
    /// The Archives changed: read them again.
    registry: bool,
    /// IBIs another resolver remembered (at most [`SHARED_MAX`]).
    ibis: Vec<String>,
}
