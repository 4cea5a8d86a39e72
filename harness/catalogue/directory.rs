//! The `directory` table: a catalogue stored as data in SQLite, one row per capability with
//! the row contract's columns. `generate -o FILE.sqlite` writes it, every loader reads it, and
//! the reference server keeps its live catalogue in it.

use super::Row;
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

/// `PRAGMA application_id` of every SQLite file toolcost writes (`tcst` in ASCII), so that a
/// file can say whose it is before anything writes to it.
pub const APPLICATION_ID: i32 = 0x7463_7374;
/// `PRAGMA user_version`: the layout of toolcost's tables in the file.
pub const USER_VERSION: i32 = 1;

/// Whose an SQLite file is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// No tables yet (a new file): toolcost may make it its own.
    Empty,
    /// Stamped with toolcost's application id.
    Ours,
    /// Unstamped, but holding a `receipts` table and otherwise only toolcost's tables: a file
    /// `serve --db` wrote before files were stamped.
    Legacy,
    /// Someone else's; the sentence says why.
    Foreign(String),
}

/// Read a file's identity without writing to it.
pub fn identity(conn: &Connection) -> Result<Identity> {
    let app: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let version: i32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if app == APPLICATION_ID {
        if version > USER_VERSION {
            return Ok(Identity::Foreign(format!(
                "written by a newer toolcost (layout {version}; this one knows {USER_VERSION})"
            )));
        }
        return Ok(Identity::Ours);
    }
    if app != 0 {
        return Ok(Identity::Foreign(format!(
            "its application_id is {app:#010x}, not toolcost's {APPLICATION_ID:#010x}"
        )));
    }
    let mut stmt = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )?;
    let tables: Vec<String> = stmt
        .query_map([], |r| r.get(0))?
        .collect::<std::result::Result<_, _>>()?;
    if tables.is_empty() {
        return Ok(Identity::Empty);
    }
    let ours = ["directory", "receipts", "outbox"];
    if tables.iter().any(|t| t == "receipts") && tables.iter().all(|t| ours.contains(&t.as_str())) {
        return Ok(Identity::Legacy);
    }
    Ok(Identity::Foreign(format!(
        "it is not stamped as toolcost's and holds the tables {}",
        tables.join(", ")
    )))
}

/// Mark a file as toolcost's.
pub fn stamp(conn: &Connection) -> Result<()> {
    conn.execute_batch(&format!(
        "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {USER_VERSION};"
    ))?;
    Ok(())
}

/// Receipts a toolcost file holds (0 when it has no `receipts` table).
pub fn receipts_held(conn: &Connection) -> Result<i64> {
    let has: i64 = conn.query_row(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'receipts'",
        [],
        |r| r.get(0),
    )?;
    if has == 0 {
        return Ok(0);
    }
    Ok(conn.query_row("SELECT COUNT(*) FROM receipts", [], |r| r.get(0))?)
}

/// Create the table if needed and insert the rows in one transaction.
pub fn write_directory<'a>(
    conn: &mut Connection,
    rows: impl IntoIterator<Item = &'a Row>,
) -> Result<()> {
    conn.execute_batch(DIRECTORY_DDL)?;
    let tx = conn.transaction()?;
    insert_rows(&tx, rows.into_iter())?;
    tx.commit()?;
    Ok(())
}

/// The same, from an owning iterator (a generator streaming rows).
pub fn write_directory_owned(conn: &mut Connection, rows: impl Iterator<Item = Row>) -> Result<()> {
    conn.execute_batch(DIRECTORY_DDL)?;
    let tx = conn.transaction()?;
    insert_rows(&tx, rows)?;
    tx.commit()?;
    Ok(())
}

fn insert_rows<R: std::borrow::Borrow<Row>>(
    tx: &rusqlite::Transaction<'_>,
    rows: impl Iterator<Item = R>,
) -> Result<()> {
    {
        let mut stmt = tx.prepare(
            "INSERT INTO directory (key, type, target, auth, content, category, planner_rank, enabled, planner_visible, input_schema)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        for r in rows {
            let r: &Row = r.borrow();
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
                r.input_schema.as_ref().map(super::RowSchema::text),
            ])?;
        }
    }
    Ok(())
}

/// Read every row of the `directory` table in a SQLite file.
pub fn read_directory(path: &Path) -> Result<Vec<Row>> {
    crate::input::check_regular(path)?;
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

/// Rows of the `directory` table of an open store.
pub fn rows(conn: &Connection) -> Result<Vec<Row>> {
    let mut stmt = conn.prepare(
        "SELECT key, type, target, auth, content, category, planner_rank, enabled, planner_visible, input_schema FROM directory ORDER BY rowid",
    )?;
    // The table is read in order; the schemas (most of the work) are parsed afterwards on all
    // cores. The first bad row in table order is the one reported: a row that cannot be read
    // ends the reading, and is reported unless an earlier row's schema is bad.
    let mut read = Vec::new();
    let mut q = stmt.query([])?;
    let mut unread = None;
    while let Some(r) = q.next()? {
        match read_row(r) {
            Ok(row) => read.push(row),
            Err(e) => {
                unread = Some(e);
                break;
            }
        }
    }
    let rows = crate::sync::map_on_cores(&read, |(row, schema)| match schema {
        Some(s) if !s.trim().is_empty() => serde_json::from_str::<serde_json::Value>(s)
            .map(|v| Some(v.into()))
            .map_err(|e| Error::input(format!("row `{}`: input_schema is not JSON: {e}", row.key))),
        _ => Ok(None),
    })
    .into_iter()
    .zip(read)
    .map(|(schema, (row, _))| {
        Ok(Row {
            input_schema: schema?,
            ..row
        })
    })
    .collect::<Result<Vec<Row>>>()?;
    match unread {
        Some(e) => Err(e),
        None => Ok(rows),
    }
}

/// One row of the table as read, its schema still text.
fn read_row(r: &rusqlite::Row<'_>) -> Result<(Row, Option<String>)> {
    let key: String = r.get(0)?;
    let runner: String = r.get(1)?;
    let schema: Option<String> = r.get(9)?;
    let row = Row {
        runner: serde_json::from_value(serde_json::Value::String(runner.clone()))
            .map_err(|_| Error::input(format!("row `{key}`: unknown runner type `{runner}`")))?,
        target: r.get(2)?,
        auth: r.get(3)?,
        content: r.get::<_, Option<String>>(4)?.unwrap_or_default(),
        category: r.get(5)?,
        planner_rank: r.get::<_, Option<i64>>(6)?.unwrap_or(100),
        enabled: r.get::<_, Option<bool>>(7)?.unwrap_or(true),
        planner_visible: r.get::<_, Option<bool>>(8)?.unwrap_or(true),
        key,
        input_schema: None,
    };
    Ok((row, schema))
}

/// Replace the whole directory with these rows, in one transaction: a failure leaves the
/// table as it was.
pub fn replace_directory(conn: &mut Connection, rows: &[Row]) -> Result<()> {
    conn.execute_batch(DIRECTORY_DDL)?;
    let tx = conn.transaction()?;
    tx.execute("DELETE FROM directory", [])?;
    insert_rows(&tx, rows.iter())?;
    tx.commit()?;
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A table of someone else's making with bad rows: reading it reports the first bad row in
    /// table order, whether its schema or another column is what is wrong, and names the row.
    #[test]
    fn the_first_bad_row_in_table_order_is_reported() {
        let table = |rows: &[(&str, &str, &str)]| {
            let conn = Connection::open_in_memory().unwrap();
            // Its own table: the runner column without toolcost's check.
            let ddl = DIRECTORY_DDL.replace(" CHECK (type IN ('fn','http','agent','flow'))", "");
            assert_ne!(ddl, DIRECTORY_DDL);
            conn.execute_batch(&ddl).unwrap();
            for (key, runner, schema) in rows {
                conn.execute(
                    "INSERT INTO directory (key, type, content, input_schema) VALUES (?1, ?2, '# WHAT: x', ?3)",
                    rusqlite::params![key, runner, schema],
                )
                .unwrap();
            }
            rows_of(&conn)
        };
        let good = r#"{"type":"object"}"#;
        let err = table(&[
            ("a", "fn", good),
            ("b", "fn", "{not json"),
            ("c", "nope", good),
        ]);
        assert!(err.contains("row `b`: input_schema is not JSON"), "{err}");
        let err = table(&[("a", "nope", "{not json"), ("b", "fn", "{not json")]);
        assert!(err.contains("row `a`: unknown runner type `nope`"), "{err}");
        let err = table(&[("a", "fn", good), ("b", "nope", good), ("c", "fn", "{")]);
        assert!(err.contains("row `b`: unknown runner type"), "{err}");
    }

    fn rows_of(conn: &Connection) -> String {
        rows(conn)
            .map(|r| format!("{} rows", r.len()))
            .unwrap_or_else(|e| e.to_string())
    }
}
