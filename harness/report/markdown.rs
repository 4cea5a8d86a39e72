//! A GitHub-flavoured Markdown table.

use super::Tabular;

pub fn render<T: Tabular>(rows: &[T]) -> Vec<u8> {
    let esc = |s: &str| s.replace('|', "\\|");
    let headers = T::headers();
    let mut out = format!(
        "| {} |\n|{}\n",
        headers.join(" | "),
        " --- |".repeat(headers.len())
    );
    for r in rows {
        let cells: Vec<String> = r.cells().iter().map(|c| esc(c)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out.into_bytes()
}
