//! Aligned plain-text columns for a terminal, sized to its width.
//!
//! When the table is wider than the terminal ([`terminal_width`]: `COLUMNS`, else the width
//! of the terminal stdout is, else unbounded), the row type's notes column
//! ([`Tabular::NOTES`]) goes below the table as numbered notes, and then the widest columns are
//! cut to one shared width, each cut cell ending in `…`. The full text is in `--md`, `--json`
//! and `--csv`.

use super::{record, Tabular};

/// Narrowest a column is cut to.
const MIN_CUT: usize = 12;

pub fn render<T: Tabular>(rows: &[T]) -> Vec<u8> {
    render_within(rows, terminal_width())
}

/// The width human output should fit: `COLUMNS` where set to a number, else the width of the
/// terminal on stdout, else `None` (a pipe or a file keeps whole lines).
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

/// [`render`] within `width` columns (`None`: no limit).
pub fn render_within<T: Tabular>(rows: &[T], width: Option<usize>) -> Vec<u8> {
    let brief = record::brief::<T>();
    let keep = |v: Vec<String>| -> Vec<String> {
        brief.iter().filter_map(|&i| v.get(i).cloned()).collect()
    };
    let all_headers = record::headers::<T>();
    let notes_at = record::fields::<T>()
        .iter()
        .position(|f| !T::NOTES.is_empty() && *f == T::NOTES)
        .and_then(|i| brief.iter().position(|&b| b == i));
    let mut headers = keep(all_headers);
    let mut cells: Vec<Vec<String>> = rows.iter().map(|r| keep(record::cells(r))).collect();
    let mut widths = widths_of(&headers, &cells);
    let mut notes: Vec<String> = Vec::new();
    let Some(limit) = width else {
        return lines(&headers, &cells, &widths, &notes, None);
    };
    if total(&widths) > limit {
        if let Some(at) = notes_at {
            for row in &mut cells {
                if let Some(cell) = row.get_mut(at).filter(|c| !c.trim().is_empty()) {
                    notes.push(std::mem::take(cell));
                    *cell = format!("[{}]", notes.len());
                }
            }
            widths = widths_of(&headers, &cells);
        }
    }
    // Cut the widest columns to one cap, the largest at which the table fits (never below
    // MIN_CUT), so that the width taken is shared rather than taken from one column.
    if total(&widths) > limit {
        let widest = widths.iter().copied().max().unwrap_or(0);
        let capped = |cap: usize| total(&widths.iter().map(|w| (*w).min(cap)).collect::<Vec<_>>());
        // Too many columns to fit even cut: each row as a block of `field: value` lines.
        if capped(MIN_CUT) > limit {
            let headers = keep(record::headers::<T>());
            let full: Vec<Vec<String>> = rows.iter().map(|r| keep(record::cells(r))).collect();
            return blocks(&headers, &full, limit);
        }
        let cap = (MIN_CUT..=widest)
            .rev()
            .find(|c| capped(*c) <= limit)
            .unwrap_or(MIN_CUT);
        for (i, w) in widths.iter_mut().enumerate() {
            if *w > cap {
                *w = cap;
                cut(&mut headers[i], cap);
                for row in &mut cells {
                    if let Some(c) = row.get_mut(i) {
                        cut(c, cap);
                    }
                }
            }
        }
    }
    lines(&headers, &cells, &widths, &notes, Some(limit))
}

/// Rows as blocks, one `field: value` line each (a long value wrapped and indented), a blank
/// line between rows: what a table too wide for the terminal becomes.
fn blocks(headers: &[String], cells: &[Vec<String>], limit: usize) -> Vec<u8> {
    let mut out = String::new();
    for (i, row) in cells.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for (h, c) in headers.iter().zip(row) {
            if c.is_empty() {
                out.push_str(&format!("{h}:\n"));
                continue;
            }
            let head = format!("{h}: ");
            let room = limit.saturating_sub(head.chars().count()).max(20);
            for (j, l) in wrap(c, room).iter().enumerate() {
                match j {
                    0 => out.push_str(&head),
                    _ => out.push_str(&" ".repeat(head.chars().count())),
                }
                out.push_str(l.trim_end());
                out.push('\n');
            }
        }
    }
    out.into_bytes()
}

fn widths_of(headers: &[String], cells: &[Vec<String>]) -> Vec<usize> {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    widths
}

fn total(widths: &[usize]) -> usize {
    widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1)
}

/// Cut `s` to `to` characters, the last one `…`.
fn cut(s: &mut String, to: usize) {
    if s.chars().count() > to {
        let mut kept: String = s.chars().take(to.saturating_sub(1)).collect();
        kept.push('…');
        *s = kept;
    }
}

fn lines(
    headers: &[String],
    cells: &[Vec<String>],
    widths: &[usize],
    notes: &[String],
    limit: Option<usize>,
) -> Vec<u8> {
    let mut out = String::new();
    let line = |out: &mut String, items: Vec<&str>| {
        let parts: Vec<String> = items
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    line(&mut out, headers.iter().map(String::as_str).collect());
    let rules: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    line(&mut out, rules.iter().map(String::as_str).collect());
    for row in cells {
        line(&mut out, row.iter().map(String::as_str).collect());
    }
    if !notes.is_empty() {
        out.push('\n');
        for (i, n) in notes.iter().enumerate() {
            let mark = format!("[{}] ", i + 1);
            let width = limit
                .unwrap_or(usize::MAX)
                .saturating_sub(mark.len())
                .max(20);
            for (j, l) in wrap(n, width).iter().enumerate() {
                match j {
                    0 => out.push_str(&mark),
                    _ => out.push_str(&" ".repeat(mark.len())),
                }
                out.push_str(l);
                out.push('\n');
            }
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
        const NOTES: &'static str = "note";
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
