//! JSONL catalogues: one row object per line.

use super::Row;
use crate::error::{Error, Result};
use std::io::Write;

/// Parse JSONL rows; the error names the line and the problem (unknown keys included). Lines
/// are parsed on the machine's cores; the first bad line (in file order) is the one reported.
pub fn parse(text: &str) -> Result<Vec<Row>, String> {
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    crate::sync::map_on_cores(&lines, |&(i, line)| {
        serde_json::from_str::<Row>(line).map_err(|e| {
            format!("line {}: not a catalogue row ({e}); each line must be one JSON row object with at least `key` and `type`", i + 1)
        })
    })
    .into_iter()
    .collect()
}

/// Write one row as a JSONL line.
pub fn write_row(out: &mut impl Write, row: &Row) -> Result<()> {
    serde_json::to_writer(&mut *out, row).map_err(|e| Error::input(e.to_string()))?;
    out.write_all(b"\n").map_err(|e| Error::io("<output>", e))
}
