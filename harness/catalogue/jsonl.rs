//! JSONL catalogues: one row object per line.

use super::Row;
use crate::error::{Error, Result};
use std::io::Write;

/// Parse JSONL rows; the error names the line and the problem (unknown keys included).
pub fn parse(text: &str) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row: Row = serde_json::from_str(line).map_err(|e| {
            format!("line {}: not a catalogue row ({e}); each line must be one JSON row object with at least `key` and `type`", i + 1)
        })?;
        rows.push(row);
    }
    Ok(rows)
}

/// Write one row as a JSONL line.
pub fn write_row(out: &mut impl Write, row: &Row) -> Result<()> {
    serde_json::to_writer(&mut *out, row).map_err(|e| Error::input(e.to_string()))?;
    out.write_all(b"\n").map_err(|e| Error::io("<output>", e))
}
