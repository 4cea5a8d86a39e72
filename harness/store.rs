//! SQLite storage: the `directory` table that holds a catalogue as data.

use crate::catalogue::{Row, Runner};
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
    let mut stmt = conn.prepare(
        "SELECT key, type, target, auth, content, category, planner_rank, enabled, planner_visible, input_schema FROM directory ORDER BY rowid",
    )?;
    let rows = stmt.query_map([], |r| {
        let runner: String = r.get(1)?;
        let schema: Option<String> = r.get(9)?;
        Ok((
            Row {
                key: r.get(0)?,
                runner: Runner::Fn,
                target: r.get(2)?,
                auth: r.get(3)?,
                content: r.get::<_, Option<String>>(4)?.unwrap_or_default(),
                category: r.get(5)?,
                planner_rank: r.get::<_, Option<i64>>(6)?.unwrap_or(100),
                enabled: r.get::<_, Option<bool>>(7)?.unwrap_or(true),
                planner_visible: r.get::<_, Option<bool>>(8)?.unwrap_or(true),
                input_schema: None,
            },
            runner,
            schema,
        ))
    })?;
    let mut out = Vec::new();
    for item in rows {
        let (mut row, runner, schema) = item?;
        row.runner =
            serde_json::from_value(serde_json::Value::String(runner.clone())).map_err(|_| {
                Error::input(format!("row `{}`: unknown runner type `{runner}`", row.key))
            })?;
        row.input_schema = match schema {
            Some(s) if !s.trim().is_empty() => Some(serde_json::from_str(&s).map_err(|e| {
                Error::input(format!("row `{}`: input_schema is not JSON ({e})", row.key))
            })?),
            _ => None,
        };
        out.push(row);
    }
    Ok(out)
}
