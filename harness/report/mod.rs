//! Writing results: one file per export format behind the [`Tabular`] trait, and atomic file
//! writes so that an error or a kill never leaves a partial report behind.
//!
//! A row type is defined once, as a serde struct: JSON is its serde form, and CSV, Markdown
//! and the terminal table take their headers from its field names and their cells from its
//! serialised values ([`record`]), written as its [`Column`]s declare. Markdown tables
//! anywhere in the reports go through [`markdown::table`].

mod csv;
mod json;
pub mod markdown;
mod record;
mod table;

pub use table::{fit_to_terminal, fit_within, render_within as table_within, terminal_width, wrap};

pub use markdown::Align;
pub use record::{check_columns, Column};

use crate::error::{Error, Result};
use serde::{de::DeserializeOwned, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A result row that can be shown as a table: a struct whose fields are the columns.
pub trait Tabular: Serialize + DeserializeOwned {
    /// Fields whose cells are not written plainly (decimal places, a header other than the
    /// field name, ...). The JSON form is unaffected.
    const COLUMNS: &'static [Column] = &[];
    /// The fields the terminal table shows, in order (all when empty).
    const BRIEF: &'static [&'static str] = &[];
    /// Fields of long text that, where the table is wider than the terminal, go below it as
    /// one numbered note per row, the first field's column keeping the note's number (none
    /// when empty).
    const NOTES: &'static [&'static str] = &[];
    /// Fields that say what the whole table is about (the model, the client): printed once
    /// above the terminal table where every row shares them, else a column after the first.
    const CONTEXT: &'static [&'static str] = &[];
    /// A field that sorts the rows into sections: in the terminal table, a heading line over
    /// each run of rows that share it instead of a column (none when empty).
    const GROUP: &'static str = "";
}

/// Output formats shared by every command that prints results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// Aligned columns for people.
    Table,
    Json,
    Csv,
    Markdown,
}

/// Render rows in a format.
pub fn render<T: Tabular>(format: OutputFormat, rows: &[T]) -> Vec<u8> {
    match format {
        OutputFormat::Table => table::render(rows),
        OutputFormat::Json => json::render(rows),
        OutputFormat::Csv => csv::render(rows),
        OutputFormat::Markdown => markdown::render(rows),
    }
}

/// Write a file by writing a temporary sibling and renaming it into place.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let tmp = path.with_file_name(format!(
        ".{}.tmp-{}",
        path.file_name().and_then(|f| f.to_str()).unwrap_or("out"),
        std::process::id()
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

/// Write `rows` as `<stem>.csv` and `<stem>.json` in `dir`, each atomically; returns both paths.
pub fn write_csv_json<T: Tabular>(dir: &Path, stem: &str, rows: &[T]) -> Result<[PathBuf; 2]> {
    let csv = dir.join(format!("{stem}.csv"));
    let json = dir.join(format!("{stem}.json"));
    write_atomic(&csv, &render(OutputFormat::Csv, rows))?;
    write_atomic(&json, &render(OutputFormat::Json, rows))?;
    Ok([csv, json])
}

/// A share as a percentage with one decimal: 0.485 -> "48.5%".
pub fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

/// Format a number with thousands separators.
///
/// ```
/// assert_eq!(toolcost::report::thousands(149187), "149,187");
/// assert_eq!(toolcost::report::thousands(856), "856");
/// ```
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
