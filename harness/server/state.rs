//! The server's state: the store, and a snapshot of the catalogue (rows, projection, resolver
//! indexes) rebuilt on every change, so a new row shows on every surface at once.
//!
//! Handlers reach the store only through [`State`]'s methods, which take its lock through
//! [`crate::sync`]: a handler that panics while holding it does not make every later request
//! fail.

use super::guard::Access;
use super::outbound::Outbound;
use super::store::{self, Receipt};
use super::Limits;
use crate::catalogue::{Catalogue, Row, Tool};
use crate::error::Result;
use crate::resolve::dense::Dense;
use crate::resolve::{Bm25, Bm25f, Fields, Substring};
use crate::surface::Listing;
use crate::sync;
use axum::body::Bytes;
use rusqlite::Connection;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};
use tokio::sync::broadcast;

/// Everything derived from the directory table at one moment.
/// A resolver's index built by name, or why it could not be.
pub type NamedIndex = std::result::Result<Arc<crate::resolve::registry::Index>, String>;

pub struct Snapshot {
    /// The rows (all of them, in table order) and their per-row projection (enabled,
    /// planner-visible rows).
    pub catalogue: Catalogue,
    pub by_key: HashMap<String, usize>,
    /// The default resolver's index ([`crate::resolve::Kind::DEFAULT`]), built with the
    /// snapshot.
    pub best: Bm25f,
    /// The other resolvers' indexes, built the first time a request names them: most servers
    /// never get such a request, and building them would delay start-up and every swap.
    bm25: OnceLock<Bm25>,
    substring: OnceLock<Substring>,
    /// The semantic indexes, or why they cannot be built (the model is not installed).
    dense: OnceLock<std::result::Result<Dense, String>>,
    /// The index of every other resolver a request names ([`crate::resolve::registry`]),
    /// built the first time it is named.
    named: Mutex<HashMap<crate::resolve::Method, Arc<OnceLock<NamedIndex>>>>,
    /// The tools of each MCP endpoint (by path), made from the projection the first time the
    /// endpoint is listed or called: `None` where it lists the projection itself.
    listings: HashMap<&'static str, Own>,
    /// Each endpoint's `tools` array as JSON text, written on the first `tools/list` that asks
    /// for it and then served as bytes until the next directory change replaces the snapshot.
    tools_json: HashMap<&'static str, OnceLock<Bytes>>,
}

/// An endpoint's own tools, made when first asked for.
struct Own {
    listing: Listing,
    tools: OnceLock<Option<Vec<Tool>>>,
}

impl Snapshot {
    pub fn new(rows: Vec<Row>) -> Snapshot {
        Self::new_beside(rows, |_| ()).0
    }

    /// A snapshot of `rows`, with `beside` run on them while it is made (the first snapshot
    /// is made while the rows are written to the store).
    pub fn new_beside<T: Send>(
        rows: Vec<Row>,
        beside: impl FnOnce(&[Row]) -> T + Send,
    ) -> (Snapshot, T) {
        // The projection and the default index are independent: built side by side.
        let (tools, best, beside) = std::thread::scope(|s| {
            let best = s.spawn(|| Bm25f::new(&rows, Fields::TOOL));
            let beside = s.spawn(|| beside(&rows));
            let tools = Catalogue::project(&rows);
            (
                tools,
                best.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                beside
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e)),
            )
        });
        let endpoints = || crate::surface::REGISTRY.iter().filter_map(|s| s.endpoint());
        let listings = endpoints()
            .map(|e| {
                let own = Own {
                    listing: e.tools,
                    tools: OnceLock::new(),
                };
                (e.path, own)
            })
            .collect();
        let tools_json = endpoints().map(|e| (e.path, OnceLock::new())).collect();
        let snapshot = Snapshot {
            listings,
            tools_json,
            by_key: rows
                .iter()
                .enumerate()
                .map(|(i, r)| (r.key.clone(), i))
                .collect(),
            catalogue: Catalogue::with_projection("directory", rows, tools),
            best,
            bm25: OnceLock::new(),
            substring: OnceLock::new(),
            dense: OnceLock::new(),
            named: Mutex::default(),
        };
        (snapshot, beside)
    }

    /// Every row of the directory, in table order.
    pub fn rows(&self) -> &[Row] {
        &self.catalogue.rows
    }

    /// The tools an MCP endpoint lists.
    pub fn listing(&self, path: &str) -> &[Tool] {
        let projection = &self.catalogue.tools;
        let own = self.listings.get(path).and_then(|own| {
            own.tools
                .get_or_init(|| {
                    // The first list after a directory change makes the listing here, on the
                    // request's worker (once per snapshot).
                    match own.listing {
                        Listing::Projection => None,
                        Listing::Fixed(make) => Some(make()),
                        Listing::Derived(make) => Some(make(projection)),
                    }
                })
                .as_deref()
        });
        own.unwrap_or(projection)
    }

    /// The `tools` array an MCP endpoint lists, as the JSON text `tools/list` answers with: each
    /// definition's own bytes, comma-joined. Made once per snapshot and endpoint.
    pub fn tools_json(&self, path: &str) -> Bytes {
        let write = || {
            let tools = self.listing(path);
            let mut out =
                String::with_capacity(2 + tools.iter().map(|t| t.bytes() + 1).sum::<usize>());
            out.push('[');
            for (i, t) in tools.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(t.raw());
            }
            out.push(']');
            Bytes::from(out)
        };
        match self.tools_json.get(path) {
            // Shared, not copied: each answer holds a reference to these bytes.
            Some(cell) => cell.get_or_init(write).clone(),
            // A path no surface serves lists the projection; nothing to keep for it.
            None => write(),
        }
    }

    /// The plain BM25 index, built on first use.
    pub fn bm25(&self) -> &Bm25 {
        self.bm25.get_or_init(|| Bm25::new(self.rows()))
    }

    /// The substring scorer's index, built on first use.
    pub fn substring(&self) -> &Substring {
        self.substring.get_or_init(|| Substring::new(self.rows()))
    }

    /// The sentence-vector index, built on first use. Vectors come from the process's memo
    /// and the on-disk cache where these rows were encoded before, so after a directory change
    /// only the rows it changed are encoded.
    pub fn dense(&self) -> std::result::Result<&Dense, String> {
        self.dense
            .get_or_init(|| Dense::new(self.rows()).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The index of a resolver by name, built the first time it is asked for (the lexical
    /// ones over a catalogue take well under a second per thousand rows). Requests that name
    /// it while it is being built wait for that one build instead of starting their own.
    pub fn named(&self, method: crate::resolve::Method) -> NamedIndex {
        let cell = crate::sync::lock(&self.named)
            .entry(method)
            .or_default()
            .clone();
        cell.get_or_init(|| {
            crate::resolve::registry::Index::new(method, self.rows(), &self.catalogue)
                .map(Arc::new)
                .map_err(|e| e.to_string())
        })
        .clone()
    }

    /// An enabled row by key.
    pub fn row(&self, key: &str) -> Option<&Row> {
        self.by_key
            .get(key)
            .map(|&i| &self.rows()[i])
            .filter(|r| r.enabled)
    }
}

/// Shared server state.
pub struct State {
    db: Mutex<Connection>,
    /// The exclusive claim on the `--db` file, held for the state's life.
    pub(crate) claim: Option<super::store::Claim>,
    /// Held across a directory change, the re-read and the snapshot swap, so writers take
    /// turns and the served snapshot is always the table after the last acknowledged write.
    writer: Mutex<()>,
    snapshot: RwLock<Arc<Snapshot>>,
    /// How many times the snapshot was replaced; bumped under its write lock, so a reader
    /// holding the read lock sees the pair as one (`tools/list` cursors name it).
    generation: AtomicU64,
    /// The bearer token; `None` refuses every call that invokes or changes rows.
    pub token: Option<String>,
    /// The token's digest, which presented tokens are compared with.
    token_digest: Option<[u8; 32]>,
    /// Hosts the http runner may send to.
    pub allowlist: Vec<String>,
    /// The http runner's client, which obeys the allowlist and the limits.
    pub outbound: Outbound,
    pub limits: Limits,
    /// Largest request body, and so largest arguments a code-mode dispatch may send.
    pub max_body: usize,
    /// Whether receipts live in memory (no `--db`), where they are capped.
    pub in_memory: bool,
    /// Keys unguessable receipt ids.
    pub id_secret: String,
    /// Code-mode programs running or waiting for a slot.
    pub programs: AtomicUsize,
    /// Base URL clients reach this server at, for invoke URLs in answers.
    base_url: RwLock<String>,
    /// Who may reach the MCP endpoints over HTTP (Host, Origin, where the token is needed).
    access: RwLock<Arc<Access>>,
    /// Fires when the projection changes (MCP sessions send list_changed).
    pub changes: broadcast::Sender<()>,
    /// Code-mode programs running at once: each may hold 64 MB for 5 seconds, so the rest wait
    /// their turn instead of taking the machine's memory.
    pub sandboxes: tokio::sync::Semaphore,
}

impl State {
    pub fn new(conn: Connection, token: Option<String>, allowlist: Vec<String>) -> Result<State> {
        State::with_limits(conn, token, &allowlist, Limits::default())
    }

    /// A state on the store's table as it is.
    pub fn with_limits(
        conn: Connection,
        token: Option<String>,
        allowlist: &[String],
        limits: Limits,
    ) -> Result<State> {
        let first = Snapshot::new(store::rows(&conn)?);
        State::with_snapshot(conn, first, token, allowlist, limits)
    }

    /// A state whose first snapshot is `first`, which must be the store's table.
    pub fn with_snapshot(
        conn: Connection,
        first: Snapshot,
        token: Option<String>,
        allowlist: &[String],
        limits: Limits,
    ) -> Result<State> {
        Ok(State {
            db: Mutex::new(conn),
            claim: None,
            writer: Mutex::new(()),
            snapshot: RwLock::new(Arc::new(first)),
            generation: AtomicU64::new(0),
            token_digest: token.as_deref().map(super::guard::token_digest),
            token,
            allowlist: allowlist.to_vec(),
            outbound: Outbound::new(allowlist, &limits)?,
            base_url: RwLock::new("http://127.0.0.1".into()),
            access: RwLock::new(Arc::new(Access::default())),
            changes: broadcast::channel(64).0,
            sandboxes: tokio::sync::Semaphore::new(limits.sandbox_slots.max(1)),
            max_body: super::DEFAULT_MAX_BODY,
            in_memory: true,
            id_secret: random_hex(),
            programs: AtomicUsize::new(0),
            limits,
        })
    }

    pub fn snapshot(&self) -> Arc<Snapshot> {
        sync::read(&self.snapshot).clone()
    }

    /// The snapshot and its generation (how many times the snapshot was replaced before it).
    pub fn snapshot_at(&self) -> (Arc<Snapshot>, u64) {
        let snap = sync::read(&self.snapshot);
        (snap.clone(), self.generation.load(Ordering::Relaxed))
    }

    /// The store, locked. Private: handlers go through the methods below.
    fn db(&self) -> MutexGuard<'_, Connection> {
        sync::lock(&self.db)
    }

    /// Re-read the directory after a change and tell open sessions.
    pub fn reload(&self) -> Result<()> {
        let _turn = sync::lock(&self.writer);
        self.reload_held()
    }

    /// Re-read and swap; the caller holds `writer`.
    fn reload_held(&self) -> Result<()> {
        let rows = store::rows(&self.db())?;
        let snap = Arc::new(Snapshot::new(rows));
        {
            let mut slot = sync::write(&self.snapshot);
            *slot = snap;
            self.generation.fetch_add(1, Ordering::Relaxed);
        }
        let _ = self.changes.send(());
        Ok(())
    }

    /// Add a row to the directory and reload; false (nothing changed) when the key is taken.
    pub fn add_row(&self, row: &Row) -> Result<bool> {
        let _turn = sync::lock(&self.writer);
        if !store::insert_row(&mut self.db(), row)? {
            return Ok(false);
        }
        self.reload_held()?;
        Ok(true)
    }

    /// Remove a row from the directory and reload; false when there was none.
    pub fn remove_row(&self, key: &str) -> Result<bool> {
        let _turn = sync::lock(&self.writer);
        if !store::delete_row(&self.db(), key)? {
            return Ok(false);
        }
        self.reload_held()?;
        Ok(true)
    }

    /// The `directory` table as it is now (what the snapshot must equal).
    pub fn table_rows(&self) -> Result<Vec<Row>> {
        store::rows(&self.db())
    }

    /// A receipt by id.
    pub fn receipt(&self, id: &str) -> Result<Option<Receipt>> {
        store::receipt(&self.db(), id)
    }

    /// How many receipts the store holds.
    pub fn receipt_count(&self) -> Result<i64> {
        store::receipt_count(&self.db())
    }

    /// Number a receipt and write it: `make` builds it from its sequence number. Another
    /// process appending to the same file can take the number first: then the next is tried,
    /// up to five times. The error is the sentence to refuse the call with.
    pub fn write_receipt(
        &self,
        make: impl Fn(u64) -> Receipt,
    ) -> std::result::Result<Receipt, super::invoke::Refusal> {
        use super::invoke::Refusal;
        let db = self.db();
        let mut attempt = 0;
        loop {
            let seq = store::next_receipt_seq(&db)
                .map_err(|e| Refusal::Unavailable(format!("could not number the receipt: {e}")))?;
            let cap = self.limits.memory_receipts;
            if self.in_memory && seq > cap {
                return Err(Refusal::Forbidden(format!(
                    "this server keeps receipts in memory and holds {cap}, its limit, so the call was not run; restart it with --db FILE to keep receipts on disk"
                )));
            }
            let receipt = make(seq);
            match store::insert_receipt(&db, &receipt) {
                Ok(()) => return Ok(receipt),
                Err(e)
                    if attempt < 5
                        && (e.to_string().contains("UNIQUE")
                            || e.to_string().contains("id is taken")) =>
                {
                    attempt += 1
                }
                Err(e) => {
                    return Err(Refusal::Unavailable(format!(
                        "could not write the receipt: {e}"
                    )))
                }
            }
        }
    }

    /// Record an outgoing message in the outbox (nothing is sent); returns its id.
    pub fn record_outbox(&self, key: &str, message: &Value, at: &str) -> Result<i64> {
        store::record_outbox(&self.db(), key, message, at)
    }

    /// Whether a presented token is the server's.
    pub fn authorised(&self, presented: Option<&str>) -> bool {
        match (&self.token_digest, presented) {
            (Some(d), Some(p)) => super::guard::token_matches(d, p),
            _ => false,
        }
    }

    pub fn base_url(&self) -> String {
        sync::read(&self.base_url).clone()
    }

    /// Set the base URL once the listener's address is known.
    pub fn set_base_url(&self, url: String) {
        *sync::write(&self.base_url) = url;
    }

    /// The MCP endpoints' access policy.
    pub fn access(&self) -> Arc<Access> {
        sync::read(&self.access).clone()
    }

    /// Replace the access policy (`serve` sets it from its options before it listens).
    pub fn set_access(&self, access: Access) {
        *sync::write(&self.access) = Arc::new(access);
    }

    /// Record the address the listener bound, which the Host check accepts.
    pub fn set_bound(&self, addr: std::net::SocketAddr) {
        let mut a = (*self.access()).clone();
        a.bound = Some(addr);
        self.set_access(a);
    }
}

/// 32 random bytes as hex, from the OS (std's hasher keys when /dev/urandom is missing).
pub(crate) fn random_hex() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        use std::hash::{BuildHasher, Hasher};
        for chunk in bytes.chunks_mut(8) {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u128(
                std::time::SystemTime::now()
                    .elapsed()
                    .map_or(0, |d| d.as_nanos()),
            );
            chunk.copy_from_slice(&h.finish().to_le_bytes());
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::{generate::Generator, profile::Profile};

    fn state() -> Arc<State> {
        let rows: Vec<Row> =
            Generator::new(Profile::named("seed-2026-07").unwrap(), 5, 1, false).collect();
        let (mut conn, _) = store::open(None).unwrap();
        store::replace_directory(&mut conn, &rows).unwrap();
        Arc::new(State::new(conn, Some("t".into()), vec![]).unwrap())
    }

    #[test]
    fn a_panic_holding_the_store_does_not_refuse_later_requests() {
        let st = state();
        let held = st.clone();
        let panicked = std::thread::spawn(move || {
            let _db = held.db();
            panic!("a handler fails while holding the store");
        })
        .join();
        assert!(panicked.is_err());
        assert!(st.db.is_poisoned(), "the panic poisoned the lock");
        assert_eq!(st.receipt_count().unwrap(), 0);
        assert!(st.receipt("inv_none").unwrap().is_none());
        let key = st.snapshot().rows()[0].key.clone();
        assert!(st.remove_row(&key).unwrap());
        assert_eq!(st.snapshot().rows().len(), 4);
        let at = "2026-01-01T00:00:00Z";
        assert_eq!(st.record_outbox(&key, &Value::Null, at).unwrap(), 1);
    }
}
