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
    let headers: Vec<String> = columns.iter().map(|(h, _)| cell(h.as_ref())).collect();
    let mut out = format!("| {} |\n|", headers.join(" | "));
    for (_, a) in columns {
        out.push_str(a.rule());
    }
    out.push('\n');
    for cells in rows {
        let cells: Vec<String> = cells.iter().map(|c| cell(c)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

/// A table cell's text, safe in a row: `|` escaped (unless it already is) and line breaks
/// written as spaces, so no text can end a cell, a row or the table.
pub fn cell(s: &str) -> String {
    if !s.contains(['|', '\n', '\r']) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut prev = '\0';
    for c in s.chars() {
        match c {
            '|' if prev != '\\' => out.push_str("\\|"),
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
        prev = c;
    }
    out
}

/// Whether a character changes how text around it reads without showing itself: bidi controls
/// (which can make `delete_all` display as `lla_eteled`), zero-width and joiner characters,
/// line and paragraph separators, fillers and blanks that render empty (Hangul fillers, the
/// blank Braille pattern), tags and variation selectors. Outside text shows each as an
/// escape ([`visible`]), so a renamed tool cannot display as the name it replaced.
pub fn invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2028}' | '\u{2029}' | '\u{2060}'..='\u{206F}' | '\u{2800}' | '\u{3164}'
        | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
        | '\u{FFA0}' | '\u{FFF9}'..='\u{FFFB}' | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E0FFF}')
}

/// A character as an escape a reader sees: `\u{202E}`.
pub fn escape(c: char) -> String {
    format!("\\u{{{:04X}}}", c as u32)
}

/// The text with each [`invisible`] character written as its escape.
pub fn visible(s: &str) -> std::borrow::Cow<'_, str> {
    match s.chars().any(invisible) {
        false => std::borrow::Cow::Borrowed(s),
        true => s
            .chars()
            .map(|c| match invisible(c) {
                true => escape(c),
                false => c.to_string(),
            })
            .collect::<String>()
            .into(),
    }
}

/// The characters of a name outside printable ASCII, as `U+0430` (at most four): a tool name
/// that holds one can look like another (Cyrillic `а` beside Latin `a`, a line break beside a
/// space), which a report should say.
pub fn confusable(name: &str) -> Option<String> {
    let mut seen: Vec<char> = Vec::new();
    for c in name
        .chars()
        .filter(|c| !c.is_ascii() || c.is_ascii_control())
    {
        if !seen.contains(&c) {
            seen.push(c);
        }
    }
    if seen.is_empty() {
        return None;
    }
    let mut list: Vec<String> = seen
        .iter()
        .take(4)
        .map(|c| format!("U+{:04X}", *c as u32))
        .collect();
    if seen.len() > 4 {
        list.push(format!("and {} more", seen.len() - 4));
    }
    Some(list.join(", "))
}

/// Text from outside (a tool's name, a server's message) for a Markdown line or cell: what
/// Markdown or HTML would read as markup is escaped, line breaks are spaces, and invisible
/// characters are escapes ([`visible`]).
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            c if invisible(c) => out.push_str(&escape(c).replace('\\', "\\\\")),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\n' | '\r' => out.push(' '),
            '\\' | '`' | '*' | '[' | ']' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text from outside as a code span: nothing in it is markup, so `@user`, `@org/team`, `#1` and
/// a bare domain neither notify nor link. The fence is one backtick longer than the longest run
/// inside; `|` is escaped for a table cell, line breaks are spaces and invisible characters are
/// escapes ([`visible`]).
pub fn code(s: &str) -> String {
    let s: String = visible(s)
        .chars()
        .map(|c| match c {
            '\n' | '\r' => ' ',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect();
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = match s.starts_with('`') || s.ends_with('`') || s.is_empty() {
        true => " ",
        false => "",
    };
    format!("{fence}{pad}{}{pad}{fence}", s.replace('|', "\\|"))
}

/// Result rows as a table (cells escaped by [`table`]).
pub fn render<T: Tabular>(rows: &[T]) -> Vec<u8> {
    let columns: Vec<(String, Align)> = record::headers::<T>()
        .into_iter()
        .map(|h| (h, Align::Spaced))
        .collect();
    // Row values may come from outside (a server's tool names, its error): HTML and Markdown in
    // them are text; a backtick is left as it is (a code span makes what it holds inert, and
    // toolcost's own notes quote commands in them).
    table(
        &columns,
        rows.iter().map(|r| {
            record::cells_for_people(r)
                .iter()
                .map(|c| text(c).replace("\\`", "`"))
                .collect()
        }),
    )
    .into_bytes()
}
