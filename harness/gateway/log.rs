//! The gateway's log: one row per request, committed before the answer is released.
//!
//! Beside the usage the row reports (observed from a provider, or the mock's estimate) it keeps
//! toolcost's own estimate of the same request (`estimated_*`, `estimate_label`), which
//! `toolcost calibrate` compares with what the provider observed. Request bodies are stored only
//! when the gateway is asked to (`--log-bodies`), in the separate `request_body` table keyed by
//! the row's id. A log written before these columns existed is migrated on open (the columns
//! are added, empty) and read as it is by [`read_all`].

use crate::error::{Error, Result};
use rusqlite::{params, Connection};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const LOG_DDL: &str = "CREATE TABLE IF NOT EXISTS log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    provider_format TEXT NOT NULL,
    model TEXT NOT NULL,
    path TEXT NOT NULL,
    status INTEGER NOT NULL,
    duration_ms REAL NOT NULL,
    request_bytes INTEGER NOT NULL,
    response_bytes INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    cached_input_tokens INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    usage_source TEXT NOT NULL,
    stream INTEGER NOT NULL,
    error TEXT,
    metadata TEXT NOT NULL,
    estimated_input_tokens INTEGER,
    estimated_cached_input_tokens INTEGER,
    estimated_cache_write_tokens INTEGER,
    estimate_label TEXT
)";

/// The columns every toolcost `log` table has had since the first (later ones are added by
/// [`open`]).
const BASE_COLUMNS: [&str; 17] = [
    "id",
    "created_at",
    "provider_format",
    "model",
    "path",
    "status",
    "duration_ms",
    "request_bytes",
    "response_bytes",
    "input_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "output_tokens",
    "cost_usd",
    "usage_source",
    "stream",
    "metadata",
];

/// The request bodies, one per log row, kept only with `--log-bodies`.
pub const BODY_DDL: &str = "CREATE TABLE IF NOT EXISTS request_body (
    log_id INTEGER PRIMARY KEY REFERENCES log(id),
    body BLOB NOT NULL
)";

/// Columns added after the first schema, with their types: added to an older log on open,
/// read as empty from one opened read-only.
const ADDED_COLUMNS: [(&str, &str); 4] = [
    ("estimated_input_tokens", "INTEGER"),
    ("estimated_cached_input_tokens", "INTEGER"),
    ("estimated_cache_write_tokens", "INTEGER"),
    ("estimate_label", "TEXT"),
];

/// toolcost's own estimate of a request's input side: the render model and tokenizer of the
/// model's price card, and the cache split under its cache rule when it could be modelled.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Estimate {
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub cache_write_tokens: u64,
    /// `estimated:<tokenizer>` with the card.
    pub label: String,
}

/// One logged request. `input_tokens` is the total input: uncached, cached and cache-written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct LogRow {
    pub id: i64,
    pub created_at: String,
    /// `anthropic-messages` or `openai-chat`.
    pub provider_format: String,
    pub model: String,
    pub path: String,
    pub status: u16,
    pub duration_ms: f64,
    pub request_bytes: usize,
    pub response_bytes: usize,
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub cache_write_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    /// `observed` (from the provider's answer) or `estimated:<tokenizer>` (the mock).
    pub usage_source: String,
    pub stream: bool,
    pub error: Option<String>,
    /// JSON object from the `x-toolcost-metadata` header (scenario, surface, n, task, round).
    pub metadata: String,
    /// toolcost's estimate of the request's total input tokens (render model and tokenizer of
    /// the model's card); empty when none was made (an unparsable request, an older log).
    #[serde(default)]
    pub estimated_input_tokens: Option<u64>,
    /// The estimate's cached input tokens (the card's cache rule over the requests seen).
    #[serde(default)]
    pub estimated_cached_input_tokens: Option<u64>,
    /// The estimate's cache-write tokens.
    #[serde(default)]
    pub estimated_cache_write_tokens: Option<u64>,
    /// Evidence label of the estimate: `estimated:<tokenizer>`.
    #[serde(default)]
    pub estimate_label: Option<String>,
}

impl LogRow {
    /// The row with an estimate beside its usage.
    pub fn with_estimate(mut self, e: Option<&Estimate>) -> LogRow {
        if let Some(e) = e {
            self.estimated_input_tokens = Some(e.input_tokens);
            self.estimated_cached_input_tokens = Some(e.cached_input_tokens);
            self.estimated_cache_write_tokens = Some(e.cache_write_tokens);
            self.estimate_label = Some(e.label.clone());
        }
        self
    }
}

/// Open (or create) a gateway log; a file whose `log` table is not toolcost's is refused.
pub fn open(path: &Path) -> Result<Connection> {
    let conn = Connection::open(path)?;
    // A `log` table someone else made is refused before anything is written to the file (the
    // journal mode included): its rows are theirs, and toolcost's would not fit them.
    let have = columns(&conn).map_err(|e| {
        crate::error::Error::input(format!(
            "{}: not an SQLite database toolcost can use: {e}",
            path.display()
        ))
    })?;
    if !have.is_empty() {
        let missing: Vec<&str> = BASE_COLUMNS
            .iter()
            .copied()
            .filter(|c| !have.iter().any(|h| h == c))
            .collect();
        if !missing.is_empty() {
            return Err(crate::error::Error::input(format!(
                "{}: its `log` table is not toolcost's (it has no {} column), so nothing was written to it; give another --log path",
                path.display(),
                missing.join(", ")
            )));
        }
    }
    conn.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")?;
    conn.execute_batch(LOG_DDL)?;
    let have = columns(&conn)?;
    for (name, ty) in ADDED_COLUMNS {
        if !have.iter().any(|c| c == name) {
            conn.execute_batch(&format!("ALTER TABLE log ADD COLUMN {name} {ty}"))?;
        }
    }
    conn.execute_batch(BODY_DDL)?;
    Ok(conn)
}

/// The columns of the `log` table.
fn columns(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info('log')")?;
    let names = stmt.query_map([], |r| r.get::<_, String>(0))?;
    Ok(names.collect::<std::result::Result<Vec<_>, _>>()?)
}

/// Store a request's body beside its row (only with `--log-bodies`).
pub fn insert_body(conn: &Connection, log_id: i64, body: &[u8]) -> Result<()> {
    conn.execute(
        "INSERT INTO request_body (log_id, body) VALUES (?1, ?2)",
        params![log_id, body],
    )?;
    Ok(())
}

/// Insert and commit a row; returns its id.
pub fn insert(conn: &Connection, r: &LogRow) -> Result<i64> {
    // Prepared once per connection and kept: the gateway writes one row per request.
    conn.prepare_cached(
        "INSERT INTO log (created_at, provider_format, model, path, status, duration_ms, request_bytes, response_bytes,
            input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, cost_usd, usage_source, stream, error, metadata,
            estimated_input_tokens, estimated_cached_input_tokens, estimated_cache_write_tokens, estimate_label)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
    )?
    .execute(params![
            r.created_at, r.provider_format, r.model, r.path, r.status, r.duration_ms, r.request_bytes as i64, r.response_bytes as i64,
            stored(r.input_tokens), stored(r.cached_input_tokens), stored(r.cache_write_tokens), stored(r.output_tokens), r.cost_usd,
            r.usage_source, r.stream, r.error, r.metadata,
            r.estimated_input_tokens.map(stored), r.estimated_cached_input_tokens.map(stored),
            r.estimated_cache_write_tokens.map(stored), r.estimate_label
        ])?;
    Ok(conn.last_insert_rowid())
}

/// `usage_source` of a stream's row while the stream is passed on.
pub const IN_FLIGHT: &str = "in-flight";
/// `usage_source` of a stream's row whose gateway stopped before the stream ended.
pub const INCOMPLETE: &str = "incomplete";

/// Complete a row written earlier (a stream's, when it began) with its final figures.
pub fn update(conn: &Connection, id: i64, r: &LogRow) -> Result<()> {
    conn.prepare_cached(
        "UPDATE log SET created_at = ?2, provider_format = ?3, model = ?4, path = ?5, status = ?6,
            duration_ms = ?7, request_bytes = ?8, response_bytes = ?9, input_tokens = ?10,
            cached_input_tokens = ?11, cache_write_tokens = ?12, output_tokens = ?13, cost_usd = ?14,
            usage_source = ?15, stream = ?16, error = ?17, metadata = ?18, estimated_input_tokens = ?19,
            estimated_cached_input_tokens = ?20, estimated_cache_write_tokens = ?21, estimate_label = ?22
         WHERE id = ?1",
    )?
    .execute(params![
        id, r.created_at, r.provider_format, r.model, r.path, r.status, r.duration_ms, r.request_bytes as i64,
        r.response_bytes as i64, stored(r.input_tokens), stored(r.cached_input_tokens),
        stored(r.cache_write_tokens), stored(r.output_tokens), r.cost_usd, r.usage_source, r.stream,
        r.error, r.metadata, r.estimated_input_tokens.map(stored),
        r.estimated_cached_input_tokens.map(stored), r.estimated_cache_write_tokens.map(stored),
        r.estimate_label
    ])?;
    Ok(())
}

/// The start of an in-flight row's `error`, followed by the gateway's process id and `)`.
pub const IN_FLIGHT_BY: &str = "the stream was still being passed on (gateway process ";

/// Mark the rows of streams that were still in flight when their gateway stopped; returns how
/// many. Their upstream was called and their client had bytes, but their usage was not seen.
/// A row whose gateway still runs (another gateway on the same log, or this process) is left
/// to it; where a process cannot be looked up (outside Linux), every in-flight row is marked.
pub fn close_in_flight(conn: &Connection) -> Result<usize> {
    let mut stmt = conn.prepare("SELECT id, error FROM log WHERE usage_source = ?1")?;
    let open: Vec<(i64, Option<String>)> = stmt
        .query_map([IN_FLIGHT], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<std::result::Result<_, _>>()?;
    let mut closed = 0;
    for (id, error) in open {
        let pid = error
            .as_deref()
            .and_then(|e| e.strip_prefix(IN_FLIGHT_BY))
            .and_then(|rest| rest.strip_suffix(')'))
            .and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(running) {
            continue;
        }
        closed += conn.execute(
            "UPDATE log SET usage_source = ?1, error = ?2 WHERE id = ?3 AND usage_source = ?4",
            params![
                INCOMPLETE,
                "the gateway stopped (killed or crashed) while this stream was passed on: the upstream was called and the client had part of the answer, but its usage was not seen",
                id,
                IN_FLIGHT
            ],
        )?;
    }
    Ok(closed)
}

/// Whether a process still runs.
fn running(pid: u32) -> bool {
    pid == std::process::id()
        || (cfg!(target_os = "linux") && Path::new(&format!("/proc/{pid}")).exists())
}

/// A count as SQLite stores it; past i64 it is stored as -1, which reading flags.
fn stored(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(-1)
}

/// A gateway log opened read-only for its request bodies: a clear error when the file is not
/// there, is not a toolcost log, or keeps no bodies (`what` says what a body is wanted for).
pub fn open_with_bodies(log: &Path, what: &str) -> Result<Connection> {
    if !log.is_file() {
        return Err(Error::input(format!(
            "{}: no such log file (the gateway writes one with --log FILE --log-bodies)",
            log.display()
        )));
    }
    let conn = Connection::open_with_flags(log, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| Error::input(format!("{}: {e}", log.display())))?;
    let has_bodies: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'request_body'",
            [],
            |r| r.get(0),
        )
        .map_err(|e| {
            Error::input(format!(
                "{}: not a toolcost gateway log: {e}",
                log.display()
            ))
        })?;
    if has_bodies == 0 {
        return Err(Error::input(format!(
            "{}: the log keeps no request bodies; run the gateway with --log-bodies and {what}",
            log.display()
        )));
    }
    Ok(conn)
}

/// Every row, oldest first. A log from before the estimate columns reads them as empty.
pub fn read_all(path: &Path) -> Result<Vec<LogRow>> {
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let have = columns(&conn)?;
    let added: Vec<String> = ADDED_COLUMNS
        .iter()
        .map(|(name, _)| {
            if have.iter().any(|c| c == name) {
                name.to_string()
            } else {
                format!("NULL AS {name}")
            }
        })
        .collect();
    let mut stmt = conn.prepare(&format!(
        "SELECT id, created_at, provider_format, model, path, status, duration_ms, request_bytes, response_bytes, input_tokens,
                cached_input_tokens, cache_write_tokens, output_tokens, cost_usd, usage_source, stream, error, metadata, {}
         FROM log ORDER BY id",
        added.join(", ")
    ))?;
    let rows = stmt.query_map([], |r| {
        // Counts are stored as i64: a negative one (a wrapped number written by an older
        // gateway) or a cost that is not a finite amount is not repeated; the row is flagged.
        let count = |i: usize| -> rusqlite::Result<Option<u64>> {
            Ok(u64::try_from(r.get::<_, i64>(i)?).ok())
        };
        let counts = [count(9)?, count(10)?, count(11)?, count(12)?];
        let cost: f64 = r.get(13)?;
        let plausible = counts.iter().all(Option::is_some) && cost.is_finite() && cost >= 0.0;
        let mut error: Option<String> = r.get(16)?;
        if !plausible {
            let note = "implausible figures in this log row (a negative count or cost, a wrapped number): not counted";
            error = Some(match error {
                Some(e) => format!("{e}; {note}"),
                None => note.to_string(),
            });
        }
        let fig = |i: usize| if plausible { counts[i].unwrap_or(0) } else { 0 };
        // An estimate that is not a plausible count (negative, wrapped) is left out.
        let estimate = |i: usize| -> rusqlite::Result<Option<u64>> {
            Ok(r.get::<_, Option<i64>>(i)?.and_then(|n| u64::try_from(n).ok()))
        };
        Ok(LogRow {
            id: r.get(0)?,
            created_at: r.get(1)?,
            provider_format: r.get(2)?,
            model: r.get(3)?,
            path: r.get(4)?,
            status: r.get(5)?,
            duration_ms: r.get(6)?,
            request_bytes: r.get::<_, i64>(7)? as usize,
            response_bytes: r.get::<_, i64>(8)? as usize,
            input_tokens: fig(0),
            cached_input_tokens: fig(1),
            cache_write_tokens: fig(2),
            output_tokens: fig(3),
            cost_usd: if plausible { cost } else { 0.0 },
            usage_source: r.get(14)?,
            stream: r.get(15)?,
            error,
            metadata: r.get(17)?,
            estimated_input_tokens: estimate(18)?,
            estimated_cached_input_tokens: estimate(19)?,
            estimated_cache_write_tokens: estimate(20)?,
            estimate_label: r.get(21)?,
        })
    })?;
    Ok(rows.collect::<std::result::Result<Vec<_>, _>>()?)
}
