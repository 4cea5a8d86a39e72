//! The reference server's SQLite store: the catalogue's `directory` table beside the
//! append-only `receipts` of every invocation and the `outbox` where EMAIL_SEND records what it
//! would send. The directory functions are the catalogue's; they are re-exported so the server
//! reaches its whole store through one path.

use crate::catalogue::directory::{self, Identity, DIRECTORY_DDL};
pub use crate::catalogue::directory::{delete_row, insert_row, replace_directory, rows};
use crate::error::{Error, Result};
use rusqlite::{params, Connection};
use std::path::Path;

/// Receipts and the outbox. Triggers make receipts append-only: UPDATE and DELETE abort, and so
/// does an INSERT whose id is taken (`INSERT OR REPLACE` would otherwise delete the receipt and
/// write a new one without firing the DELETE trigger).
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
CREATE TRIGGER IF NOT EXISTS receipts_no_replace BEFORE INSERT ON receipts
WHEN EXISTS (SELECT 1 FROM receipts WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'receipts are append-only: this id is taken'); END;
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

/// An exclusive claim on a store file, held while a server serves it: a second server on the
/// same file (in this process or another) is refused rather than left to serve rows the first
/// has deleted. The claim is an advisory lock on `<db>.claim` beside the file, which holds the
/// holder's process id; the system lets it go when the holder exits, however it exits.
#[derive(Debug)]
pub struct Claim {
    _file: std::fs::File,
}

/// Claim `path` for this server ([`Claim`]), or say which process holds it.
pub fn claim(path: &Path) -> Result<Claim> {
    use std::io::{Read, Seek, Write};
    let lock_path = {
        let mut p = path.as_os_str().to_owned();
        p.push(".claim");
        std::path::PathBuf::from(p)
    };
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .map_err(|e| Error::io(&lock_path, e))?;
    match f.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = (&f).take(32).read_to_string(&mut holder);
            let holder = holder.trim();
            return Err(Error::input(format!(
                "{}: another toolcost server is serving this store ({}), so this one would not see its changes; stop it, or give another --db",
                path.display(),
                match holder.is_empty() {
                    true => "its process id is not recorded".to_string(),
                    false => format!("process {holder}"),
                }
            )));
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&lock_path, e)),
    }
    f.set_len(0).map_err(|e| Error::io(&lock_path, e))?;
    f.rewind().map_err(|e| Error::io(&lock_path, e))?;
    writeln!(f, "{}", std::process::id()).map_err(|e| Error::io(&lock_path, e))?;
    Ok(Claim { _file: f })
}

/// Open (or create) a store with every table. A file that is not toolcost's (see
/// [`directory::identity`]) is refused before anything is written to it, or beside it; a
/// file another server holds is refused before anything is written to it ([`claim`]).
pub fn open(path: Option<&Path>) -> Result<(Connection, Option<Claim>)> {
    let mut held = None;
    let conn = match path {
        Some(p) => {
            let conn = Connection::open(p)?;
            let who = directory::identity(&conn).map_err(|e| {
                Error::input(format!(
                    "{}: not an SQLite database toolcost can use: {e}",
                    p.display()
                ))
            })?;
            let who = match who {
                Identity::Legacy => match legacy_layout_fault(&conn)? {
                    None => Identity::Legacy,
                    Some(why) => Identity::Foreign(why),
                },
                other => other,
            };
            if let Identity::Foreign(why) = who {
                return Err(Error::input(format!(
                    "{}: not a toolcost database ({why}), so nothing was written to it; give a new --db path, or serve its `directory` table from memory with --catalogue {}",
                    p.display(),
                    p.display()
                )));
            }
            held = Some(claim(p)?);
            conn
        }
        None => Connection::open_in_memory()?,
    };
    conn.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")?;
    directory::stamp(&conn)?;
    conn.execute_batch(DIRECTORY_DDL)?;
    conn.execute_batch(RECEIPTS_DDL)?;
    Ok((conn, held))
}

/// Why an unstamped file with toolcost's table names is not an older toolcost store: a table
/// whose columns are not the ones toolcost writes (someone else's `receipts`, say). `None`:
/// every table it holds has toolcost's columns, in toolcost's order.
fn legacy_layout_fault(conn: &Connection) -> Result<Option<String>> {
    let columns = |c: &Connection, table: &str| -> Result<Vec<String>> {
        let mut stmt = c.prepare(&format!("PRAGMA table_info({table})"))?;
        let names = stmt
            .query_map([], |r| r.get::<_, String>(1))?
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(names)
    };
    let reference = Connection::open_in_memory()?;
    reference.execute_batch(DIRECTORY_DDL)?;
    reference.execute_batch(RECEIPTS_DDL)?;
    for table in ["directory", "receipts", "outbox"] {
        let theirs = columns(conn, table)?;
        if theirs.is_empty() {
            continue;
        }
        let ours = columns(&reference, table)?;
        if theirs != ours {
            return Ok(Some(format!(
                "its `{table}` table has the columns {}, not toolcost's {}",
                theirs.join(", "),
                ours.join(", ")
            )));
        }
    }
    Ok(None)
}

/// The sequence number the next receipt takes: one more than the last row's.
pub fn next_receipt_seq(conn: &Connection) -> Result<u64> {
    // Statements run on every call are prepared once per connection (rusqlite's cache).
    Ok(conn
        .prepare_cached("SELECT COALESCE(MAX(rowid), 0) + 1 FROM receipts")?
        .query_row([], |r| r.get::<_, i64>(0))? as u64)
}

/// Append a receipt.
pub fn insert_receipt(conn: &Connection, r: &Receipt) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO receipts (id, key, args_hash, result_hash, ok, repairs, created_at, args, result) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![r.id, r.key, r.args_hash, r.result_hash, r.ok, r.repairs, r.created_at, crate::json::compact(&r.args), crate::json::compact(&r.result)],
    )?;
    Ok(())
}

/// A receipt by id.
pub fn receipt(conn: &Connection, id: &str) -> Result<Option<Receipt>> {
    let mut stmt = conn.prepare_cached("SELECT id, key, args_hash, result_hash, ok, repairs, created_at, args, result FROM receipts WHERE id = ?1")?;
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
    conn.prepare_cached(
        "INSERT INTO outbox (receipt_key, message, created_at) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![key, crate::json::compact(message), at])?;
    Ok(conn.last_insert_rowid())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receipts_are_append_only() {
        let (conn, _) = open(None).unwrap();
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
        let forged = "INSERT OR REPLACE INTO receipts (id, key, args_hash, result_hash, ok, created_at, args, result) VALUES ('inv_1', 'NOW', 'a', 'b', 0, 'x', '{}', '{}')";
        assert!(conn.execute(forged, []).is_err());
        assert_eq!(receipt(&conn, "inv_1").unwrap().unwrap(), r);
        assert_eq!(receipt_count(&conn).unwrap(), 1);
    }
}
