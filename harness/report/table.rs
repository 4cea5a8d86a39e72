//! Aligned plain-text columns for a terminal.

use super::{record, Tabular};

pub fn render<T: Tabular>(rows: &[T]) -> Vec<u8> {
    let brief = record::brief::<T>();
    let keep = |v: Vec<String>| -> Vec<String> {
        brief.iter().filter_map(|&i| v.get(i).cloned()).collect()
    };
    let headers = keep(record::headers::<T>());
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    let cells: Vec<Vec<String>> = rows.iter().map(|r| keep(record::cells(r))).collect();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, items: Vec<&str>| {
        let parts: Vec<String> = items
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    line(&mut out, headers.clone());
    line(
        &mut out,
        widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str)
            .collect(),
    );
    for row in &cells {
        line(&mut out, row.iter().map(String::as_str).collect());
    }
    out.into_bytes()
}
