//! GitHub-flavoured Markdown tables: [`table`] writes every Markdown table in the reports, and
//! [`render`] writes result rows through it.

use super::{record, Tabular};

/// The rule cell under a column's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// ` --- `: unaligned, spaced (row exports and `check`).
    Spaced,
    /// `---`: unaligned (the reports' prose tables).
    Left,
    /// `---:`: right-aligned, for figures.
    Right,
}

impl Align {
    fn rule(self) -> &'static str {
        match self {
            Align::Spaced => " --- |",
            Align::Left => "---|",
            Align::Right => "---:|",
        }
    }
}

/// A table of `columns` (header, alignment) and `rows` of cells, written as they are: the
/// caller escapes what needs escaping.
///
/// ```
/// use toolcost::report::{markdown::table, Align};
/// let t = table(&[("N", Align::Right), ("surface", Align::Left)], [vec!["10".into(), "x".into()]]);
/// assert_eq!(t, "| N | surface |\n|---:|---|\n| 10 | x |\n");
/// ```
pub fn table<H: AsRef<str>>(
    columns: &[(H, Align)],
    rows: impl IntoIterator<Item = Vec<String>>,
) -> String {
    let headers: Vec<&str> = columns.iter().map(|(h, _)| h.as_ref()).collect();
    let mut out = format!("| {} |\n|", headers.join(" | "));
    for (_, a) in columns {
        out.push_str(a.rule());
    }
    out.push('\n');
    for cells in rows {
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

/// Result rows as a table, `|` in cells escaped.
pub fn render<T: Tabular>(rows: &[T]) -> Vec<u8> {
    let columns: Vec<(String, Align)> = record::headers::<T>()
        .into_iter()
        .map(|h| (h, Align::Spaced))
        .collect();
    let esc = |s: String| s.replace('|', "\\|");
    table(
        &columns,
        rows.iter()
            .map(|r| record::cells(r).into_iter().map(esc).collect()),
    )
    .into_bytes()
}
