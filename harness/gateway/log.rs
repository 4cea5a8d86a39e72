//! The gateway's log: one row per request, committed before the answer is released.

use crate::error::Result;
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
    metadata TEXT NOT NULL
)";

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
}

pub fn open(path: &Path) -> Result<Connection> {
    let conn = Connection::open(path)?;
    conn.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")?;
    conn.execute_batch(LOG_DDL)?;
    Ok(conn)
}

/// Insert and commit a row; returns its id.
pub fn insert(conn: &Connection, r: &LogRow) -> Result<i64> {
    conn.execute(
        "INSERT INTO log (created_at, provider_format, model, path, status, duration_ms, request_bytes, response_bytes,
            input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, cost_usd, usage_source, stream, error, metadata)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        params![
            r.created_at, r.provider_format, r.model, r.path, r.status, r.duration_ms, r.request_bytes as i64, r.response_bytes as i64,
            stored(r.input_tokens), stored(r.cached_input_tokens), stored(r.cache_write_tokens), stored(r.output_tokens), r.cost_usd,
            r.usage_source, r.stream, r.error, r.metadata
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

/// A count as SQLite stores it; past i64 it is stored as -1, which reading flags.
fn stored(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(-1)
}

/// Every row, oldest first.
pub fn read_all(path: &Path) -> Result<Vec<LogRow>> {
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut stmt = conn.prepare(
        "SELECT id, created_at, provider_format, model, path, status, duration_ms, request_bytes, response_bytes, input_tokens,
                cached_input_tokens, cache_write_tokens, output_tokens, cost_usd, usage_source, stream, error, metadata FROM log ORDER BY id",
    )?;
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
        })
    })?;
    Ok(rows.collect::<std::result::Result<Vec<_>, _>>()?)
}
