//! SQLite storage: the `directory` table that holds a catalogue as data, the append-only
//! `receipts` of every invocation, and the `outbox` where EMAIL_SEND records what it would send.

use crate::catalogue::Row;
use crate::error::{Error, Result};
use rusqlite::{params, Connection};
use std::path::Path;

/// The `directory` table: one row per capability, the row contract's columns.
pub const DIRECTORY_DDL: &str = "CREATE TABLE IF NOT EXISTS directory (
    key TEXT PRIMARY KEY NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('fn','http','agent','flow')),
    target TEXT,
    auth TEXT,
    content TEXT NOT NULL DEFAULT '',
    category TEXT,
    planner_rank INTEGER NOT NULL DEFAULT 100,
    enabled INTEGER NOT NULL DEFAULT 1,
    planner_visible INTEGER NOT NULL DEFAULT 1,
    input_schema TEXT
)";

/// Create the table if needed and insert the rows in one transaction.
pub fn write_directory<'a>(
    conn: &mut Connection,
    rows: impl IntoIterator<Item = &'a Row>,
) -> Result<()> {
    write_directory_owned(conn, rows.into_iter().cloned())
}

/// The same, from an owning iterator (a generator streaming rows).
pub fn write_directory_owned(conn: &mut Connection, rows: impl Iterator<Item = Row>) -> Result<()> {
    conn.execute_batch(DIRECTORY_DDL)?;
    let tx = conn.transaction()?;
    {
        let mut stmt = tx.prepare(
            "INSERT INTO directory (key, type, target, auth, content, category, planner_rank, enabled, planner_visible, input_schema)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        for r in rows {
            let r = &r;
            stmt.execute(params![
                r.key,
                r.runner.as_str(),
                r.target,
                r.auth,
                r.content,
                r.category,
                r.planner_rank,
                r.enabled,
                r.planner_visible,
                r.input_schema.as_ref().map(crate::json::compact),
            ])?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// Read every row of the `directory` table in a SQLite file.
pub fn read_directory(path: &Path) -> Result<Vec<Row>> {
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let has_table: bool = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name='directory'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)?;
    if !has_table {
        return Err(Error::input(format!("{}: a SQLite file without a `directory` table; write one with `toolcost generate -o FILE.sqlite`", path.display())));
    }
    rows(&conn)
}

/// Receipts and the outbox. Triggers make receipts append-only.
pub const RECEIPTS_DDL: &str = "CREATE TABLE IF NOT EXISTS receipts (
    id TEXT PRIMARY KEY NOT NULL,
    key TEXT NOT NULL,
    args_hash TEXT NOT NULL,
    result_hash TEXT NOT NULL,
    ok INTEGER NOT NULL,
    repairs TEXT,
    created_at TEXT NOT NULL,
    args TEXT NOT NULL,
    result TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS receipts_no_update BEFORE UPDATE ON receipts
BEGIN SELECT RAISE(ABORT, 'receipts are append-only'); END;
CREATE TRIGGER IF NOT EXISTS receipts_no_delete BEFORE DELETE ON receipts
BEGIN SELECT RAISE(ABORT, 'receipts are append-only'); END;
CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    receipt_key TEXT NOT NULL,
    message TEXT NOT NULL,
    created_at TEXT NOT NULL
);";

/// One receipt.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Receipt {
    pub id: String,
    pub key: String,
    pub args_hash: String,
    pub result_hash: String,
    pub ok: bool,
    pub repairs: Option<String>,
    pub created_at: String,
    pub args: serde_json::Value,
    pub result: serde_json::Value,
}

/// Open (or create) a store with every table.
pub fn open(path: Option<&Path>) -> Result<Connection> {
    let conn = match path {
        Some(p) => Connection::open(p)?,
        None => Connection::open_in_memory()?,
    };
    conn.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")?;
    conn.execute_batch(DIRECTORY_DDL)?;
    conn.execute_batch(RECEIPTS_DDL)?;
    Ok(conn)
}

/// Rows of the `directory` table of an open store.
pub fn rows(conn: &Connection) -> Result<Vec<Row>> {
    let mut stmt = conn.prepare(
        "SELECT key, type, target, auth, content, category, planner_rank, enabled, planner_visible, input_schema FROM directory ORDER BY rowid",
    )?;
    let mut out = Vec::new();
    let mut q = stmt.query([])?;
    while let Some(r) = q.next()? {
        let key: String = r.get(0)?;
        let runner: String = r.get(1)?;
        let schema: Option<String> = r.get(9)?;
        out.push(Row {
            runner: serde_json::from_value(serde_json::Value::String(runner.clone())).map_err(
                |_| Error::input(format!("row `{key}`: unknown runner type `{runner}`")),
            )?,
            target: r.get(2)?,
            auth: r.get(3)?,
            content: r.get::<_, Option<String>>(4)?.unwrap_or_default(),
            category: r.get(5)?,
            planner_rank: r.get::<_, Option<i64>>(6)?.unwrap_or(100),
            enabled: r.get::<_, Option<bool>>(7)?.unwrap_or(true),
            planner_visible: r.get::<_, Option<bool>>(8)?.unwrap_or(true),
            key,
            input_schema: match schema {
                Some(s) if !s.trim().is_empty() => Some(
                    serde_json::from_str(&s)
                        .map_err(|e| Error::input(format!("input_schema is not JSON: {e}")))?,
                ),
                _ => None,
            },
        });
    }
    Ok(out)
}

/// Replace the whole directory with these rows.
pub fn replace_directory(conn: &mut Connection, rows: &[Row]) -> Result<()> {
    conn.execute("DELETE FROM directory", [])?;
    write_directory(conn, rows)
}

/// Insert one row; false when the key exists.
pub fn insert_row(conn: &mut Connection, row: &Row) -> Result<bool> {
    let exists: i64 = conn.query_row(
        "SELECT COUNT(*) FROM directory WHERE key = ?1",
        [&row.key],
        |r| r.get(0),
    )?;
    if exists > 0 {
        return Ok(false);
    }
    write_directory(conn, std::iter::once(row))?;
    Ok(true)
}

/// Delete one row; false when there was none.
pub fn delete_row(conn: &Connection, key: &str) -> Result<bool> {
    Ok(conn.execute("DELETE FROM directory WHERE key = ?1", [key])? > 0)
}

/// The sequence number the next receipt takes: one more than the last row's.
pub fn next_receipt_seq(conn: &Connection) -> Result<u64> {
    Ok(conn.query_row(
        "SELECT COALESCE(MAX(rowid), 0) + 1 FROM receipts",
        [],
        |r| r.get::<_, i64>(0),
    )? as u64)
}

/// Append a receipt.
pub fn insert_receipt(conn: &Connection, r: &Receipt) -> Result<()> {
    conn.execute(
        "INSERT INTO receipts (id, key, args_hash, result_hash, ok, repairs, created_at, args, result) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![r.id, r.key, r.args_hash, r.result_hash, r.ok, r.repairs, r.created_at, crate::json::compact(&r.args), crate::json::compact(&r.result)],
    )?;
    Ok(())
}

/// A receipt by id.
pub fn receipt(conn: &Connection, id: &str) -> Result<Option<Receipt>> {
    let mut stmt = conn.prepare("SELECT id, key, args_hash, result_hash, ok, repairs, created_at, args, result FROM receipts WHERE id = ?1")?;
    let mut q = stmt.query([id])?;
    let Some(r) = q.next()? else { return Ok(None) };
    let parse = |s: String| serde_json::from_str(&s).unwrap_or(serde_json::Value::String(s));
    Ok(Some(Receipt {
        id: r.get(0)?,
        key: r.get(1)?,
        args_hash: r.get(2)?,
        result_hash: r.get(3)?,
        ok: r.get(4)?,
        repairs: r.get(5)?,
        created_at: r.get(6)?,
        args: parse(r.get(7)?),
        result: parse(r.get(8)?),
    }))
}

/// How many receipts the store holds.
pub fn receipt_count(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("SELECT COUNT(*) FROM receipts", [], |r| r.get(0))?)
}

/// Record a message EMAIL_SEND would have sent.
pub fn record_outbox(
    conn: &Connection,
    key: &str,
    message: &serde_json::Value,
    at: &str,
) -> Result<i64> {
    conn.execute(
        "INSERT INTO outbox (receipt_key, message, created_at) VALUES (?1, ?2, ?3)",
        params![key, crate::json::compact(message), at],
    )?;
    Ok(conn.last_insert_rowid())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receipts_are_append_only() {
        let conn = open(None).unwrap();
        let r = Receipt {
            id: "inv_1".into(),
            key: "NOW".into(),
            args_hash: "a".into(),
            result_hash: "b".into(),
            ok: true,
            repairs: None,
            created_at: "2026-07-25T00:00:00Z".into(),
            args: serde_json::json!({}),
            result: serde_json::json!({"utc": "x"}),
        };
        insert_receipt(&conn, &r).unwrap();
        assert_eq!(receipt(&conn, "inv_1").unwrap().unwrap(), r);
        assert!(conn.execute("UPDATE receipts SET ok = 0", []).is_err());
        assert!(conn.execute("DELETE FROM receipts", []).is_err());
        assert_eq!(receipt_count(&conn).unwrap(), 1);
    }
}
