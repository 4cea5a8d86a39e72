//! The terminal table: every command's rows as people read them, within the width of the
//! terminal ([`terminal_width`]: `COLUMNS`, else the width of the terminal stdout is, else
//! [`PIPED_WIDTH`] for a pipe or a file; CSV and JSON are the machine formats).
//!
//! Layout, in order: a column empty on every row is left out; a value every row shares (and
//! each [`Tabular::CONTEXT`] field they share) is printed once above the table as
//! `title: value`; a [`Tabular::GROUP`] column becomes a heading line over each run of its rows;
//! where the table is still wider than the width, the [`Tabular::NOTES`] columns go below it
//! as numbered notes, and then the widest columns are narrowed, their text wrapped at words
//! inside the cell (a word longer than the cell is broken), never cut. Headers are the fields'
//! titles ([`super::Column::title`], else the field name with spaces), wrapped the same way;
//! columns of figures are aligned right. Only a table whose columns cannot fit even at their
//! narrowest becomes one `field: value` block per row.

use super::{record, Tabular};

/// The width of a table written to a pipe or a file: readable in a pager or a review tool.
pub const PIPED_WIDTH: usize = 120;
/// A text column is not narrowed below this, nor below its longest word up to [`LONG_WORD`].
const MIN_TEXT: usize = 6;
/// Words longer than this may be broken to narrow their column.
const LONG_WORD: usize = 14;
/// Between two columns.
const GAP: usize = 2;

pub fn render<T: Tabular>(rows: &[T]) -> Vec<u8> {
    render_within(rows, Some(terminal_width().unwrap_or(PIPED_WIDTH)))
}

/// The width human output should fit: `COLUMNS` where set to a number, else the width of the
/// terminal on stdout, else `None` (a pipe or a file).
pub fn terminal_width() -> Option<usize> {
    if let Some(n) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
    {
        return Some(n);
    }
    #[cfg(unix)]
    {
        use std::io::IsTerminal;
        if std::io::stdout().is_terminal() {
            // SAFETY: TIOCGWINSZ fills a winsize on a terminal descriptor; on failure the
            // struct stays zeroed and is ignored.
            let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
            let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
            if ok && ws.ws_col > 0 {
                return Some(usize::from(ws.ws_col));
            }
        }
    }
    None
}

/// One column on its way to the terminal.
struct Col {
    title: String,
    cells: Vec<String>,
    /// Figures, aligned right; only their title wraps.
    figures: bool,
    width: usize,
    /// The narrowest it may be made with no word broken.
    soft: usize,
    /// The narrowest it may be made at all.
    hard: usize,
}

/// [`render`] within `width` columns (`None`: no limit, nothing shared or wrapped: the whole
/// table on long lines).
pub fn render_within<T: Tabular>(rows: &[T], width: Option<usize>) -> Vec<u8> {
    let fields = record::fields::<T>();
    let titles = record::titles::<T>();
    let all: Vec<Vec<String>> = rows.iter().map(record::cells_for_people).collect();
    let at = |name: &str| fields.iter().position(|f| *f == name);
    let column = |i: usize| Col {
        title: titles[i].clone(),
        cells: all.iter().map(|r| r[i].clone()).collect(),
        figures: false,
        width: 0,
        soft: 0,
        hard: 0,
    };
    let brief = record::brief::<T>();
    let Some(limit) = width else {
        let mut cols: Vec<Col> = brief.iter().map(|&i| column(i)).collect();
        for c in &mut cols {
            size(c);
        }
        return grid(cols, &[], &[], &[], usize::MAX);
    };
    let shared = |i: usize| -> Option<&str> {
        let first = all.first()?.get(i)?;
        (rows.len() > 1 && all.iter().all(|r| r[i] == *first)).then_some(first.as_str())
    };
    let empty = |i: usize| !all.is_empty() && all.iter().all(|r| r[i].trim().is_empty());
    // Shared values above the table: the context fields first, then the brief ones. Context
    // fields that differ are columns after the first; the rest keep BRIEF's order.
    let mut above: Vec<(String, String)> = Vec::new();
    let mut context: Vec<usize> = Vec::new();
    for i in T::CONTEXT.iter().filter_map(|c| at(c)) {
        match shared(i) {
            Some(v) if !v.trim().is_empty() => above.push((titles[i].clone(), v.to_string())),
            Some(_) => {}
            None if rows.len() == 1 => above.push((titles[i].clone(), all[0][i].clone())),
            None => context.push(i),
        }
    }
    let group = (!T::GROUP.is_empty()).then(|| at(T::GROUP)).flatten();
    let mut shown: Vec<usize> = Vec::new();
    for &i in &brief {
        if context.contains(&i) || empty(i) {
            continue;
        }
        match shared(i) {
            Some(v) => above.push((titles[i].clone(), v.to_string())),
            None if Some(i) == group => {}
            None => shown.push(i),
        }
    }
    if shown.is_empty() && context.is_empty() {
        // Every row the same: the first column stays a table of its own.
        let first = brief.first().copied().unwrap_or(0);
        above.retain(|(t, _)| *t != titles[first]);
        shown.push(first);
    }
    let first_is_brief = shown.first() == brief.first();
    let at_front = usize::from(first_is_brief);
    shown.splice(at_front..at_front, context);
    let groups: Vec<String> = match group.filter(|g| shared(*g).is_none()) {
        Some(g) => all.iter().map(|r| r[g].clone()).collect(),
        None => Vec::new(),
    };
    let mut cols: Vec<Col> = shown.iter().map(|&i| column(i)).collect();
    for c in &mut cols {
        size(c);
    }
    let mut notes = Vec::new();
    if total(&cols) > limit {
        // The notes fields shown, by their place among the columns: the first named keeps the
        // numbers, the others leave; a note reads them in column order.
        let mut moved: Vec<usize> = T::NOTES
            .iter()
            .filter_map(|n| at(n))
            .filter_map(|n| shown.iter().position(|&i| i == n))
            .collect();
        if let Some(&keep) = moved.first() {
            moved.sort_unstable();
            for r in 0..rows.len() {
                let parts: Vec<String> = moved
                    .iter()
                    .filter(|&&c| !cols[c].cells[r].trim().is_empty())
                    .map(|&c| match moved.len() {
                        1 => cols[c].cells[r].clone(),
                        _ => format!("{}: {}", cols[c].title, cols[c].cells[r]),
                    })
                    .collect();
                if !parts.is_empty() {
                    notes.push(parts.join("; "));
                    cols[keep].cells[r] = format!("[{}]", notes.len());
                } else {
                    cols[keep].cells[r] = String::new();
                }
            }
            let mut i = 0;
            cols.retain(|_| {
                i += 1;
                i - 1 == keep || !moved.contains(&(i - 1))
            });
            for c in &mut cols {
                size(c);
            }
        }
    }
    if !narrow(&mut cols, limit) {
        let cols: Vec<Col> = brief.iter().map(|&i| column(i)).collect();
        return blocks(&cols, limit);
    }
    grid(cols, &above, &groups, &notes, limit)
}

/// A column's natural width and the narrowest it may become.
fn size(c: &mut Col) {
    let filled: Vec<&String> = c.cells.iter().filter(|x| !x.trim().is_empty()).collect();
    c.figures = !filled.is_empty() && filled.iter().all(|x| figure(x));
    let longest = |t: &str| {
        t.split_whitespace()
            .map(|w| w.chars().count())
            .max()
            .unwrap_or(0)
    };
    let cells = c.cells.iter().map(|x| x.chars().count()).max().unwrap_or(0);
    let title_word = longest(&c.title);
    c.width = cells.max(c.title.chars().count());
    let words = c.cells.iter().map(|x| longest(x)).max().unwrap_or(0);
    (c.soft, c.hard) = match c.figures {
        true => (cells.max(title_word), cells.max(title_word.min(LONG_WORD))),
        false => (
            words.max(title_word),
            words.max(title_word).clamp(MIN_TEXT, LONG_WORD),
        ),
    };
    c.soft = c.soft.min(c.width);
    c.hard = c.hard.min(c.soft);
}

/// A cell that is a figure: digits with at most a sign, separators, a unit or a currency.
fn figure(s: &str) -> bool {
    let s = s.trim();
    s == "-"
        || (s.chars().any(|c| c.is_ascii_digit())
            && s.chars().count() <= 16
            && s.chars()
                .all(|c| c.is_ascii_digit() || ".,+-%x$~".contains(c)))
}

fn total(cols: &[Col]) -> usize {
    cols.iter().map(|c| c.width).sum::<usize>() + GAP * cols.len().saturating_sub(1)
}

/// Narrow the widest columns one character at a time until the table fits `limit`: first the
/// titles of figures, then text at its spaces, then text through its long words; false where it
/// cannot fit with every column at its narrowest.
fn narrow(cols: &mut [Col], limit: usize) -> bool {
    let passes: [fn(&Col) -> usize; 3] = [
        |c| if c.figures { c.soft } else { c.width },
        |c| c.soft,
        |c| c.hard,
    ];
    for floor in passes {
        while total(cols) > limit {
            let Some(c) = cols
                .iter_mut()
                .filter(|c| c.width > floor(c))
                .max_by_key(|c| c.width)
            else {
                break;
            };
            c.width -= 1;
        }
    }
    total(cols) <= limit
}

fn grid(
    cols: Vec<Col>,
    above: &[(String, String)],
    groups: &[String],
    notes: &[String],
    limit: usize,
) -> Vec<u8> {
    let mut out = String::new();
    for (title, value) in above {
        out.push_str(&hanging(&format!("{title}: "), value, limit));
    }
    if !above.is_empty() {
        out.push('\n');
    }
    let block = |out: &mut String, parts: Vec<Vec<String>>, cols: &[Col]| {
        let height = parts.iter().map(Vec::len).max().unwrap_or(1).max(1);
        for l in 0..height {
            let line: Vec<String> = parts
                .iter()
                .zip(cols)
                .map(|(p, c)| {
                    let t = p.get(l).map_or("", String::as_str);
                    match c.figures {
                        true => format!("{t:>w$}", w = c.width),
                        false => format!("{t:<w$}", w = c.width),
                    }
                })
                .collect();
            out.push_str(line.join(&" ".repeat(GAP)).trim_end());
            out.push('\n');
        }
    };
    let cell = |t: &str, w: usize| -> Vec<String> {
        match t.chars().count() <= w {
            true => vec![t.to_string()],
            false => wrap(t, w),
        }
    };
    block(
        &mut out,
        cols.iter().map(|c| cell(&c.title, c.width)).collect(),
        &cols,
    );
    let rules: Vec<Vec<String>> = cols.iter().map(|c| vec!["-".repeat(c.width)]).collect();
    block(&mut out, rules, &cols);
    let rows = cols.first().map_or(0, |c| c.cells.len());
    for r in 0..rows {
        if let Some(g) = groups.get(r) {
            if r == 0 || groups[r - 1] != *g {
                if r > 0 {
                    out.push('\n');
                }
                out.push_str(&hanging("", &format!("{g}:"), limit));
            }
        }
        block(
            &mut out,
            cols.iter().map(|c| cell(&c.cells[r], c.width)).collect(),
            &cols,
        );
    }
    if !notes.is_empty() {
        out.push('\n');
        for (i, n) in notes.iter().enumerate() {
            out.push_str(&hanging(&format!("[{}] ", i + 1), n, limit));
        }
    }
    out.into_bytes()
}

/// `head` then `text` wrapped within `limit`, continuation lines indented under the text.
fn hanging(head: &str, text: &str, limit: usize) -> String {
    let indent = head.chars().count();
    let room = limit.saturating_sub(indent).max(20);
    let mut out = String::new();
    let lines = match text.chars().count() <= room {
        true => vec![text.to_string()],
        false => wrap(text, room),
    };
    for (j, l) in lines.iter().enumerate() {
        match j {
            0 => out.push_str(head),
            _ => out.push_str(&" ".repeat(indent)),
        }
        out.push_str(l.trim_end());
        out.push('\n');
    }
    if lines.is_empty() {
        out.push_str(head.trim_end());
        out.push('\n');
    }
    out
}

/// Rows as blocks, one `title: value` line each (a long value wrapped and indented), a blank
/// line between rows: a table with too many columns to fit even at their narrowest.
fn blocks(cols: &[Col], limit: usize) -> Vec<u8> {
    let mut out = String::new();
    let rows = cols.first().map_or(0, |c| c.cells.len());
    for r in 0..rows {
        if r > 0 {
            out.push('\n');
        }
        for c in cols.iter().filter(|c| !c.cells[r].is_empty()) {
            out.push_str(&hanging(&format!("{}: ", c.title), &c.cells[r], limit));
        }
    }
    out.into_bytes()
}

/// Human text (summaries, notes, `prices show`) fitted to the terminal ([`terminal_width`]):
/// each longer line wrapped at words, its continuation lines indented two more than it. Lines
/// that fit, and all text when there is no width (a pipe or a file), are left as they are.
pub fn fit_to_terminal(text: &str) -> String {
    match terminal_width() {
        Some(w) => fit_within(text, w),
        None => text.to_string(),
    }
}

/// [`fit_to_terminal`] within `width` characters.
pub fn fit_within(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        if body.chars().count() <= width {
            out.push_str(line);
            continue;
        }
        let indent = body.len() - body.trim_start_matches(' ').len();
        let rest = indent + 2;
        let first_room = width.saturating_sub(indent).max(20);
        let words = body.trim_start_matches(' ');
        let head = wrap(words, first_room);
        let (first, tail) = head
            .split_first()
            .map_or(("", &[][..]), |(f, t)| (f.as_str(), t));
        out.push_str(&" ".repeat(indent));
        out.push_str(first);
        out.push('\n');
        let tail_text = tail.join(" ");
        if !tail_text.is_empty() {
            for l in wrap(&tail_text, width.saturating_sub(rest).max(20)) {
                out.push_str(&" ".repeat(rest));
                out.push_str(&l);
                out.push('\n');
            }
        }
        if nl.is_empty() && out.ends_with('\n') {
            out.pop();
        }
    }
    out
}

/// Words of `text` in lines of at most `width` characters (a longer word is broken).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        while word.len() > width {
            if !cur.is_empty() {
                lines.push(std::mem::take(&mut cur));
            }
            lines.push(word.drain(..width).collect());
        }
        let word: String = word.into_iter().collect();
        let need = cur.chars().count() + usize::from(!cur.is_empty()) + word.chars().count();
        if need > width && !cur.is_empty() {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(&word);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize)]
    struct R {
        name: String,
        value: String,
        note: String,
    }
    impl Tabular for R {
        const NOTES: &'static [&'static str] = &["note"];
    }

    fn rows() -> Vec<R> {
        vec![
            R {
                name: "short".into(),
                value: "1".into(),
                note: "a long explanation ".repeat(20),
            },
            R {
                name: "a name far longer than the others, with more words in it".into(),
                value: "2".into(),
                note: String::new(),
            },
        ]
    }

    #[test]
    fn a_wide_table_fits_the_width_with_its_notes_below() {
        for width in [100, 60, 40] {
            let text = String::from_utf8(render_within(&rows(), Some(width))).unwrap();
            for l in text.lines() {
                assert!(l.chars().count() <= width, "{width}: {l:?}\n{text}");
            }
            assert!(text.contains("[1]"), "{text}");
            // Every word of the note is still there, below the table.
            let below: String = text.split("\n\n").nth(1).unwrap().replace('\n', " ");
            assert_eq!(
                below
                    .split_whitespace()
                    .filter(|w| *w == "explanation")
                    .count(),
                20
            );
        }
        // Unbounded, the table is as it always was: the note in its cell.
        let whole = String::from_utf8(render_within(&rows(), None)).unwrap();
        assert!(!whole.contains("[1]"));
        assert!(whole
            .lines()
            .nth(2)
            .unwrap()
            .contains("a long explanation a long"));
    }

    #[test]
    fn wrap_keeps_every_word_within_the_width() {
        let t = "one two three fourfivesixseveneight nine";
        let l = wrap(t, 8);
        assert!(l.iter().all(|x| x.chars().count() <= 8), "{l:?}");
        assert_eq!(l.join(" ").replace(' ', ""), t.replace(' ', ""));
    }
}
