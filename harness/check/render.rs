//! What `check` prints: the table, GitHub annotations, the pull-request comment and the badge.

use super::{Change, Format, Outcome, ToolChange, Weight};
use crate::report::{markdown, Align};

/// An SVG badge of a check: the total tokens of the tools, green within budget and red over it
/// (the label and the figure are escaped; nothing in it comes from a tool's name).
pub fn badge(o: &Outcome) -> String {
    let label = "tool tokens";
    let value = format!(
        "{} {}",
        crate::report::thousands(o.total_tokens),
        o.tokenizer
    );
    let colour = if o.passed() { "#2e7d32" } else { "#c62828" };
    // About 6.5 px a character at 11 px, plus 10 px of padding each side of each half.
    let w = |s: &str| 10 + (s.chars().count() as f64 * 6.5).ceil() as usize + 10;
    let (lw, vw) = (w(label), w(&value));
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    let (label, value) = (esc(label), esc(&value));
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" aria-label="{label}: {value}">
<title>{label}: {value}</title>
<rect width="{lw}" height="20" fill="#555"/>
<rect x="{lw}" width="{vw}" height="20" fill="{colour}"/>
<g fill="#fff" text-anchor="middle" font-family="DejaVu Sans,Verdana,Geneva,sans-serif" font-size="11">
<text x="{lx}" y="14">{label}</text>
<text x="{vx}" y="14">{value}</text>
</g>
</svg>
"##,
        total = lw + vw,
        lx = lw / 2,
        vx = lw + vw / 2,
    )
}

fn change_line(c: &ToolChange, tok: &str) -> String {
    let w = |x: &Option<Weight>| {
        x.map(|w| format!("{} bytes / {} {tok}", w.bytes, w.tokens))
            .unwrap_or_else(|| "-".into())
    };
    format!(
        "{:<8} {}: {} -> {}",
        format!("{:?}", c.change).to_lowercase(),
        shown(&c.name),
        w(&c.before),
        w(&c.after)
    )
}

/// Text from a server (a tool's name, a message that quotes it) for a terminal or an
/// annotation: invisible and control characters as `\u{...}` escapes, so a name can neither
/// hide a bidi override nor send a terminal escape.
fn shown(s: &str) -> String {
    s.chars()
        .map(|c| match c.is_control() || markdown::invisible(c) {
            true => markdown::escape(c),
            false => c.to_string(),
        })
        .collect()
}

/// GitHub's workflow commands need `%`, CR and LF escaped in messages.
fn gh_escape(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value: also `:` and `,` escaped.
fn gh_property(s: &str) -> String {
    gh_escape(s).replace(':', "%3A").replace(',', "%2C")
}

/// Render the outcome; `label` names what was checked.
pub fn render(o: &Outcome, label: &str, format: Format) -> String {
    let tok = &o.tokenizer;
    // The source may be a URL with a credential in it.
    let label = crate::secret::redact(label);
    // In a comment the source is a code span: a domain in it does not link.
    let label = match format {
        Format::Markdown => markdown::code(&label),
        Format::Json | Format::Table | Format::Github => label,
    };
    let summary = format!(
        "{label}: {} tools, {} bytes, {} {tok} tokens ({} against the baseline's {}); {} added, {} removed, {} grown, {} shrunk; {}",
        o.tools,
        o.total_bytes,
        o.total_tokens,
        match o.growth_pct.is_finite() {
            true => format!("{:+.2}%", o.growth_pct),
            false => "all new".to_string(),
        },
        o.baseline_total_tokens,
        o.changes.iter().filter(|c| c.change == Change::Added).count(),
        o.changes.iter().filter(|c| c.change == Change::Removed).count(),
        o.changes.iter().filter(|c| c.change == Change::Grown).count(),
        o.changes.iter().filter(|c| c.change == Change::Shrunk).count(),
        if o.passed() { "within budget".to_string() } else { format!("{} budget violation(s)", o.violations.len()) }
    );
    match format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(o).expect("serialises");
            s.push('\n');
            s
        }
        Format::Table => {
            let mut out = format!("{summary}\n");
            for c in &o.changes {
                out.push_str(&format!("  {}\n", change_line(c, tok)));
            }
            for v in &o.violations {
                out.push_str(&format!("over budget: {}\n", shown(&v.message)));
            }
            out
        }
        Format::Github => github(o, tok, &summary),
        Format::Markdown => markdown_comment(o, tok, &summary),
    }
}

/// GitHub Actions annotations: an error per violation, a warning per notable change.
fn github(o: &Outcome, tok: &str, summary: &str) -> String {
    let mut out = String::new();
    for v in &o.violations {
        // The message names the tool (each per-tool rule's message starts with it).
        let title = format!("toolcost {}", v.rule);
        out.push_str(&format!(
            "::error title={}::{}\n",
            gh_property(&title),
            gh_escape(&shown(&v.message))
        ));
    }
    for c in o
        .changes
        .iter()
        .filter(|c| matches!(c.change, Change::Grown | Change::Added | Change::Removed))
    {
        out.push_str(&format!(
            "::warning title=toolcost {}::{}\n",
            format!("{:?}", c.change).to_lowercase(),
            gh_escape(&change_line(c, tok))
        ));
    }
    out.push_str(&format!(
        "::notice title=toolcost::{}\n",
        gh_escape(summary)
    ));
    out
}

/// A tool's name for a table: a code span with invisible and control characters escaped, and
/// any character outside printable ASCII named, so a rename to a look-alike (Cyrillic `а` for
/// Latin `a`) shows.
fn name_cell(name: &str) -> String {
    // Control characters as escapes too: `new\nline` must not read as `new line`.
    let mut cell = markdown::code(&shown(name));
    if let Some(list) = markdown::confusable(name) {
        cell.push_str(&format!(" (not ASCII: {list})"));
    }
    cell
}

/// A pull-request comment: the verdict, the violations and the changes as tables.
fn markdown_comment(o: &Outcome, tok: &str, summary: &str) -> String {
    // The summary is toolcost's words and numbers around the source's code span.
    let mut out = format!(
        "### toolcost: {}\n\n{summary}\n\n",
        if o.passed() {
            "within budget"
        } else {
            "over budget"
        }
    );
    if !o.violations.is_empty() {
        out.push_str(&markdown::table(
            &[
                ("rule", Align::Spaced),
                ("tool", Align::Spaced),
                ("problem", Align::Spaced),
            ],
            o.violations.iter().map(|v| {
                vec![
                    markdown::code(&v.rule),
                    match v.tool.is_empty() {
                        true => "(all)".to_string(),
                        false => name_cell(&v.tool),
                    },
                    // The message quotes the tool's name: the whole of it as code.
                    markdown::code(&v.message),
                ]
            }),
        ));
        out.push('\n');
    }
    if !o.changes.is_empty() {
        let mut columns = vec![
            ("tool".to_string(), Align::Spaced),
            ("change".to_string(), Align::Spaced),
            ("bytes".to_string(), Align::Spaced),
            (format!("{tok} tokens"), Align::Spaced),
        ];
        // Each provider's tokens, where the lock and the current tools have them.
        // A provider whose tokenizer is the budget's has its column already.
        let shown: Vec<_> = crate::check::PROVIDER_TOKENIZERS
            .into_iter()
            .filter(|(_, t, _)| t.name() != tok)
            .filter(|(_, _, get)| {
                o.changes.iter().any(|c| {
                    c.before
                        .as_ref()
                        .or(c.after.as_ref())
                        .and_then(get)
                        .is_some()
                })
            })
            .collect();
        for (name, t, _) in &shown {
            columns.push((format!("{name} tokens ({})", t.name()), Align::Spaced));
        }
        out.push_str(&markdown::table(
            &columns,
            o.changes.iter().map(|c| {
                let fmt = |f: &dyn Fn(&Weight) -> Option<String>| {
                    format!(
                        "{} -> {}",
                        c.before.as_ref().and_then(f).unwrap_or_else(|| "-".into()),
                        c.after.as_ref().and_then(f).unwrap_or_else(|| "-".into())
                    )
                };
                let mut row = vec![
                    name_cell(&c.name),
                    format!("{:?}", c.change).to_lowercase(),
                    fmt(&|w| Some(w.bytes.to_string())),
                    fmt(&|w| Some(w.tokens.to_string())),
                ];
                for (_, _, get) in &shown {
                    row.push(fmt(&|w| get(w).map(|n| n.to_string())));
                }
                row
            }),
        ));
    }
    out
}
