//! The server's state: the store, and a snapshot of the catalogue (rows, projection, resolver
//! indexes) rebuilt on every change, so a new row shows on every surface at once.

use super::store;
use crate::catalogue::{Catalogue, Row};
use crate::error::Result;
use crate::resolve::{Bm25, Substring};
use rusqlite::Connection;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::broadcast;

/// Everything derived from the directory table at one moment.
pub struct Snapshot {
    pub rows: Vec<Row>,
    /// The per-row projection (enabled, planner-visible rows).
    pub catalogue: Catalogue,
    pub by_key: HashMap<String, usize>,
    pub bm25: Bm25,
    pub substring: Substring,
}

impl Snapshot {
    pub fn new(rows: Vec<Row>) -> Snapshot {
        let catalogue = Catalogue::from_rows("directory", rows.clone());
        Snapshot {
            by_key: rows
                .iter()
                .enumerate()
                .map(|(i, r)| (r.key.clone(), i))
                .collect(),
            bm25: Bm25::new(&rows),
            substring: Substring::new(&rows),
            catalogue,
            rows,
        }
    }

    /// An enabled row by key.
    pub fn row(&self, key: &str) -> Option<&Row> {
        self.by_key
            .get(key)
            .map(|&i| &self.rows[i])
            .filter(|r| r.enabled)
    }
}

/// Shared server state.
pub struct State {
    pub db: Mutex<Connection>,
    snapshot: RwLock<Arc<Snapshot>>,
    /// The bearer token; `None` refuses every call that invokes or changes rows.
    pub token: Option<String>,
    /// Hosts the http runner may send to.
    pub allowlist: Vec<String>,
    /// Base URL clients reach this server at, for invoke URLs in answers.
    pub base_url: RwLock<String>,
    /// Fires when the projection changes (MCP sessions send list_changed).
    pub changes: broadcast::Sender<()>,
    /// Code-mode programs running at once: each may hold 64 MB for 5 seconds, so the rest wait
    /// their turn instead of taking the machine's memory.
    pub sandboxes: tokio::sync::Semaphore,
}

impl State {
    pub fn new(conn: Connection, token: Option<String>, allowlist: Vec<String>) -> Result<State> {
        let rows = store::rows(&conn)?;
        Ok(State {
            db: Mutex::new(conn),
            snapshot: RwLock::new(Arc::new(Snapshot::new(rows))),
            token,
            allowlist,
            base_url: RwLock::new("http://127.0.0.1".into()),
            changes: broadcast::channel(64).0,
            sandboxes: tokio::sync::Semaphore::new(
                std::thread::available_parallelism().map_or(2, |n| n.get() * 2),
            ),
        })
    }

    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot.read().unwrap().clone()
    }

    /// Re-read the directory after a change and tell open sessions.
    pub fn reload(&self) -> Result<()> {
        let rows = store::rows(&self.db.lock().unwrap())?;
        *self.snapshot.write().unwrap() = Arc::new(Snapshot::new(rows));
        let _ = self.changes.send(());
        Ok(())
    }

    /// Whether a presented token is the server's.
    pub fn authorised(&self, presented: Option<&str>) -> bool {
        match (&self.token, presented) {
            (Some(t), Some(p)) => constant_time_eq(t.as_bytes(), p.as_bytes()),
            _ => false,
        }
    }

    pub fn base_url(&self) -> String {
        self.base_url.read().unwrap().clone()
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
