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
//! the registry is read every [`crate::server::REFRESH`] instead.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_postgres::{AsyncMessage, Notification};

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
            let _ = state.read_registry().await;
            lost = true;
            say(&format!(
                "not told of the registry's changes ({}): {outcome}; connecting again every {RETRY:?}, reading the registry every {:?} meanwhile",
                masked(&uri),
                crate::server::REFRESH
            ));
        }
        tokio::time::sleep(RETRY).await;
    }
}

/// One connection: listens until it breaks; why it ended.
async fn listen_once(state: &AppState, uri: &str, lost: &mut bool) -> String {
    let config = match postgres_config(uri) {
        Ok(c) => c,
        Err(e) => return e,
    };
    let (client, mut connection) = match config.connect(tokio_postgres::NoTls).await {
        Ok(c) => c,
        Err(e) => return format!("cannot connect: {e}"),
    };
    let (tx, mut rx) = mpsc::unbounded_channel::<Notification>();
    // The connection is driven here, its notifications handed on; it ends with the
    // connection, dropping `tx`.
    let driver = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    if tx.send(n).is_err() {
                        return "stopped".to_string();
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return e.to_string(),
                None => return "the connection was closed".to_string(),
            }
        }
    });
    let listening = client
        .batch_execute(&format!(
            "LISTEN {REGISTRY_CHANNEL}; LISTEN {MEMORY_CHANNEL}"
        ))
        .await;
    if let Err(e) = listening {
        driver.abort();
        return format!("cannot listen: {e}");
    }
    state.listening.store(true, Ordering::Relaxed);
    if std::mem::take(lost) {
        say("told of the registry's changes again");
    }
    // What changed while nobody listened.
    let _ = state.read_registry().await;
    while let Some(first) = rx.recv().await {
        let mut registry_changed = false;
        let mut shared = Vec::new();
        let mut next = Some(first);
        // Every notification already there handled at once: one reading of the
        // registry for a burst of changes.
        while let Some(n) = next {
            match n.channel() {
                REGISTRY_CHANNEL => registry_changed = true,
                MEMORY_CHANNEL => shared.extend(state.engine.memory.shared_ibis(n.payload())),
                _ => {}
            }
            next = rx.try_recv().ok();
        }
        if !shared.is_empty() {
            // Where they are, as the table says.
            shared.truncate(SHARED_MAX);
            let rows = client
                .query(
                    "SELECT ibi, archive, verified FROM locations WHERE ibi = ANY($1)",
                    &[&shared],
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
                    &format!("location memory of the other resolvers: {e}"),
                ),
            }
        }
        if registry_changed {
            let _ = state.read_registry().await;
        }
    }
    drop(client);
    driver
        .await
        .unwrap_or_else(|e| format!("listener stopped: {e}"))
}
