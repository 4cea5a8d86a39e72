//! `summary.md` for a sweep and for a gateway log: tables with their evidence labels, the
//! plots, and a reading computed from the figures. Nothing here depends on the clock or the
//! machine, so the file is the same wherever the same inputs are swept.

use super::charts::ClientLimits;
use super::frame::{self, LogSummary};
use super::{Config, SweepRow};
use crate::driver::TaskResult;
use crate::error::Result;
use crate::provider::Format;
use crate::report::{markdown, percent, thousands, Align};
use crate::surface::SurfaceKind;
use std::fmt::Write as _;

fn ns(rows: &[SweepRow]) -> Vec<usize> {
    let mut v: Vec<usize> = rows.iter().map(|r| r.rows).collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn combos(rows: &[SweepRow]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = Vec::new();
    for r in rows {
        let k = (r.client.clone(), r.tokenizer.clone());
        if !v.contains(&k) {
            v.push(k);
        }
    }
    v
}

fn surfaces(rows: &[SweepRow]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for r in rows {
        if !v.contains(&r.surface) {
            v.push(r.surface.clone());
        }
    }
    v
}

fn find<'a>(
    rows: &'a [SweepRow],
    client: &str,
    tok: &str,
    surface: &str,
    n: usize,
) -> Option<&'a SweepRow> {
    rows.iter()
        .find(|r| r.client == client && r.tokenizer == tok && r.surface == surface && r.rows == n)
}

pub(super) fn money(x: f64) -> String {
    if x >= 100.0 {
        format!("${}", thousands(x.round() as u64))
    } else if x >= 1.0 {
        format!("${x:.2}")
    } else {
        format!("${x:.4}")
    }
}

/// Whether a client's API format lacks a surface (a provider's own mechanism).
fn lacks(client: &str, surface: &str) -> bool {
    let format = crate::client::Client::named(client).ok().map(|c| c.format);
    SurfaceKind::parse(surface)
        .ok()
        .zip(format)
        .and_then(|(k, f)| k.lacks(f))
        .is_some()
}

/// A surface x N table of one figure for one client and tokenizer.
fn grid(
    s: &mut String,
    rows: &[SweepRow],
    client: &str,
    tok: &str,
    cell: &dyn Fn(&SweepRow) -> String,
) {
    let n = ns(rows);
    let columns: Vec<(String, Align)> = std::iter::once(("surface".to_string(), Align::Left))
        .chain(
            n.iter()
                .map(|x| (format!("N={}", thousands(*x as u64)), Align::Right)),
        )
        .collect();
    // A provider's own mechanism the client's format lacks has no row: nothing could be sent.
    let body = surfaces(rows)
        .into_iter()
        .filter(|s| !lacks(client, s))
        .map(|surface| {
            let cells = n.iter().map(|x| {
                find(rows, client, tok, &surface, *x)
                    .map(cell)
                    .unwrap_or_default()
            });
            std::iter::once(surface.clone()).chain(cells).collect()
        });
    s.push_str(&markdown::table(&columns, body));
    s.push('\n');
}

/// The sweep's summary.md.
pub fn sweep(
    cfg: &Config,
    rows: &[SweepRow],
    tasks: &[TaskResult],
    clients: &[ClientLimits],
) -> Result<String> {
    let mut s = format!("# Sweep: {}\n\n", cfg.name);
    if !cfg.about.is_empty() {
        let _ = writeln!(s, "{}\n", cfg.about.trim());
    }
    let n = ns(rows);
    let _ = writeln!(
        s,
        "One user turn (\"{}\") measured on every surface at N = {}, with the {} profile (seed {}). \
Token figures are `estimated:<tokenizer>` (counted here, not returned by a provider; Kimi's with \
its own vocabulary and chat template), or `calibrated:<fit>` where a constant fitted to a recorded \
figure scales them; ratios, marginal tokens and dollars are `derived` from them and the client's price card. A month is {} \
turns a day for {} days, with a warm prompt cache.\n",
        crate::measure::DEFAULT_TURN,
        n.iter().map(|x| thousands(*x as u64)).collect::<Vec<_>>().join(", "),
        cfg.profile,
        cfg.seed,
        cfg.turns_per_day,
        cfg.days
    );
    s.push_str(&markdown::table(
        &[
            ("client", Align::Left),
            ("price card", Align::Left),
            ("context window", Align::Right),
            ("source", Align::Left),
        ],
        clients.iter().map(|c| {
            let card = &c.card;
            vec![
                c.client.clone(),
                card.id.clone(),
                thousands(card.context_window),
                format!("{} ({})", card.source, card.date),
            ]
        }),
    ));
    s.push('\n');
    for (client, tok) in combos(rows) {
        let label = rows
            .iter()
            .find(|r| r.tokenizer == tok)
            .map_or_else(|| format!("estimated:{tok}"), |r| r.label.clone());
        let _ = writeln!(s, "## Input tokens per turn: {client}, {label}\n");
        grid(&mut s, rows, &client, &tok, &|r| thousands(r.input_tokens));
    }
    for (client, tok) in combos(rows) {
        let _ = writeln!(s, "## Ratio to protocol-only: {client}, {tok} (derived)\n");
        grid(&mut s, rows, &client, &tok, &|r| {
            r.ratio_to_protocol_only
                .map(|x| format!("{x:.2}x"))
                .unwrap_or_default()
        });
    }
    let mut seen_clients = Vec::new();
    for (client, tok) in combos(rows) {
        if seen_clients.contains(&client) {
            continue;
        }
        seen_clients.push(client.clone());
        let _ = writeln!(
            s,
            "## Cost per month: {client}, from {tok} token counts (derived)\n"
        );
        grid(&mut s, rows, &client, &tok, &|r| {
            r.cost_per_month_usd
                .map(money)
                .unwrap_or_else(|| "refused".into())
        });
    }
    deferral_section(&mut s, rows, clients);
    growth_section(&mut s, rows)?;
    limits_section(&mut s, rows);
    tasks_section(&mut s, tasks);
    super::tool_changes::section(&mut s, tasks);
    plots_section(&mut s, cfg, tasks);
    s.push_str("\n## Reading\n\n");
    s.push_str(&reading(rows, tasks));
    Ok(s)
}

/// On the Responses API, at the largest N: deferred functions against namespaces, per-row
/// definitions and protocol-only, one row each with its labels.
fn deferral_section(s: &mut String, rows: &[SweepRow], clients: &[ClientLimits]) {
    const SURFACES: [&str; 4] = [
        "deferred-search",
        "deferred-search-namespace",
        "per-row-mcp",
        "protocol-only",
    ];
    let Some(&n) = ns(rows).last() else {
        return;
    };
    for c in clients
        .iter()
        .filter(|c| c.format == Format::OpenaiResponses)
    {
        let Some(tok) = rows
            .iter()
            .find(|r| r.client == c.client)
            .map(|r| r.tokenizer.clone())
        else {
            continue;
        };
        let at: Vec<&SweepRow> = SURFACES
            .iter()
            .filter_map(|name| {
                rows.iter().find(|r| {
                    r.client == c.client && r.tokenizer == tok && r.rows == n && r.surface == *name
                })
            })
            .collect();
        if at.len() < 2 {
            continue;
        }
        let _ = writeln!(
            s,
            "## Deferral on the Responses API: {}, N={}\n\nOne turn: loose functions with `defer_loading` (every name and description billed) against the same functions inside namespaces (only each namespace's name and description billed until a search loads a member), every definition in full, and none.\n",
            c.client,
            thousands(n as u64)
        );
        s.push_str(&markdown::table(
            &[
                ("surface", Align::Left),
                ("wire bytes", Align::Right),
                ("input tokens", Align::Right),
                ("ratio to protocol-only", Align::Right),
                ("cost per turn", Align::Right),
                ("tokens", Align::Left),
                ("cost", Align::Left),
            ],
            at.iter().map(|r| {
                vec![
                    r.surface.clone(),
                    thousands(r.wire_bytes),
                    thousands(r.input_tokens),
                    r.ratio_to_protocol_only
                        .map(|x| format!("{x:.2}x"))
                        .unwrap_or_default(),
                    r.cost_usd.map(money).unwrap_or_else(|| "refused".into()),
                    r.label.clone(),
                    r.cost_label.clone(),
                ]
            }),
        ));
        s.push('\n');
    }
}

/// Growth from the smallest to the largest N, per surface, client and tokenizer.
fn growth_section(s: &mut String, rows: &[SweepRow]) -> Result<()> {
    let growth = frame::growth(rows)?;
    if let Some(g0) = growth.first() {
        let (from, to) = (thousands(g0.from_rows as u64), thousands(g0.to_rows as u64));
        let _ = writeln!(s, "## Growth from N={from} to N={to} (derived)\n");
        s.push_str(&markdown::table(
            &[
                ("surface".to_string(), Align::Left),
                ("client".to_string(), Align::Left),
                ("tokenizer".to_string(), Align::Left),
                (format!("tokens at N={from}"), Align::Right),
                (format!("tokens at N={to}"), Align::Right),
                ("growth".to_string(), Align::Right),
                (
                    "mean marginal tokens per definition".to_string(),
                    Align::Right,
                ),
            ],
            growth
                .iter()
                .filter(|g| !lacks(&g.client, &g.surface))
                .map(|g| {
                    vec![
                        g.surface.clone(),
                        g.client.clone(),
                        g.tokenizer.clone(),
                        thousands(g.from_tokens),
                        thousands(g.to_tokens),
                        format!("{:.2}x", g.factor),
                        g.mean_marginal
                            .map(|m| format!("{m:.2}"))
                            .unwrap_or_default(),
                    ]
                }),
        ));
        s.push('\n');
    }
    Ok(())
}

/// The first N at which each surface crosses each provider limit.
fn limits_section(s: &mut String, rows: &[SweepRow]) {
    s.push_str("## Provider limits crossed\n\n");
    let mut limits: Vec<String> = Vec::new();
    let mut seen: Vec<(String, String, &str)> = Vec::new();
    let mut by_n: Vec<&SweepRow> = rows.iter().filter(|r| !r.warnings.is_empty()).collect();
    by_n.sort_by_key(|r| r.rows);
    for r in by_n {
        for w in r.warnings.split("; ") {
            let kind = limit_kind(w);
            let key = (r.surface.clone(), r.client.clone(), kind);
            if !seen.contains(&key) {
                seen.push(key);
                limits.push(format!(
                    "- {} ({}), from N={}: {w}",
                    r.surface,
                    r.client,
                    thousands(r.rows as u64)
                ));
            }
        }
    }
    if limits.is_empty() {
        s.push_str("None at these sizes.\n\n");
    } else {
        s.push_str("The first N at which each surface crosses each limit:\n\n");
        for l in &limits {
            let _ = writeln!(s, "{l}");
        }
        s.push('\n');
    }
}

/// The clients tasks were played with, in the order they were played.
fn task_clients(tasks: &[TaskResult]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for t in tasks {
        if !out.contains(&t.client.as_str()) {
            out.push(&t.client);
        }
    }
    out
}

/// Whole tasks, from the gateway's log rows: one table per client, each with its tokens' label.
fn tasks_section(s: &mut String, tasks: &[TaskResult]) {
    for client in task_clients(tasks) {
        let (mine, unavailable): (Vec<&TaskResult>, Vec<&TaskResult>) = tasks
            .iter()
            .filter(|t| t.client == client)
            .partition(|t| !t.answer.starts_with(crate::driver::UNAVAILABLE));
        // A refused task has no usage: the label is a played task's.
        let label = mine
            .iter()
            .find(|t| t.success)
            .or(mine.first())
            .map(|t| t.label.as_str())
            .unwrap_or("");
        let _ = writeln!(
            s,
            "## Whole tasks, {client} (gateway log rows; tokens {label}, cost derived)\n"
        );
        s.push_str(&markdown::table(
            &[
                ("N", Align::Right),
                ("surface", Align::Left),
                ("task", Align::Left),
                ("success", Align::Left),
                ("rounds", Align::Right),
                ("misses", Align::Right),
                ("input tokens", Align::Right),
                ("cached", Align::Right),
                ("output", Align::Right),
                ("cost", Align::Right),
            ],
            mine.iter().map(|t| {
                vec![
                    thousands(t.rows as u64),
                    t.surface_shown(),
                    t.task.clone(),
                    (if t.success { "yes" } else { "no" }).to_string(),
                    t.rounds.to_string(),
                    t.misses.to_string(),
                    thousands(t.input_tokens),
                    thousands(t.cached_input_tokens),
                    thousands(t.output_tokens),
                    money(t.cost_usd),
                ]
            }),
        ));
        s.push('\n');
        let mut lacking: Vec<&str> = Vec::new();
        for t in &unavailable {
            if !lacking.contains(&t.surface.as_str()) {
                lacking.push(&t.surface);
            }
        }
        if !lacking.is_empty() {
            let _ = writeln!(
                s,
                "Not played: the client's API format has no such mechanism for {}.\n",
                lacking.join(", ")
            );
        }
        let refused: Vec<String> = mine
            .iter()
            .filter(|t| t.answer.starts_with("refused by the provider"))
            .map(|t| format!("{} ({})", t.surface_shown(), t.task))
            .collect();
        if !refused.is_empty() {
            let _ = writeln!(
                s,
                "Refused by the provider, as it would answer the request (400): {}. The reason is in each task's `answer` in tasks.json.\n",
                refused.join(", ")
            );
        }
    }
}

/// Links to every plot the sweep drew.
fn plots_section(s: &mut String, cfg: &Config, tasks: &[TaskResult]) {
    s.push_str("## Plots\n\nEach as PNG and SVG; log scales skip N=0. The per-N charts are drawn for each client with the first tokenizer it was measured with.\n\n");
    let mut plots: Vec<(String, String)> = Vec::new();
    for (i, c) in cfg.clients.iter().enumerate() {
        let suffix = if i == 0 {
            String::new()
        } else {
            format!("-{}", c.name)
        };
        for (stem, what) in [
            (
                "tokens-vs-n",
                "input tokens per turn vs N, with every price card's context window and the provider's tool limit",
            ),
            ("cost-per-month", "cost per month vs N"),
            (
                "deferred-bytes-vs-tokens",
                "deferred search: wire bytes vs billed tokens",
            ),
        ] {
            plots.push((format!("{stem}{suffix}"), format!("{what} ({})", c.name)));
        }
    }
    plots.push((
        "bytes-per-definition".into(),
        "distribution of bytes per definition".into(),
    ));
    if let Some(first) = task_clients(tasks).first() {
        plots.push((
            "task-rounds".into(),
            format!("rounds per task per surface ({first})"),
        ));
        plots.push((
            "task-tokens".into(),
            format!("input tokens per task per surface ({first})"),
        ));
    }
    for (stem, what) in plots {
        let _ = writeln!(s, "- [{what}]({stem}.svg) ![{what}]({stem}.png)");
    }
}

/// Which provider limit a warning names.
fn limit_kind(w: &str) -> &'static str {
    if w.contains("context window") {
        "context"
    } else if w.contains("deferred tools") {
        "deferred"
    } else if w.contains("tools exceed") {
        "tools"
    } else {
        "other"
    }
}

fn reading(rows: &[SweepRow], tasks: &[TaskResult]) -> String {
    let Some((client, tok)) = combos(rows).into_iter().next() else {
        return "No results.\n".into();
    };
    let positive: Vec<usize> = ns(rows).into_iter().filter(|n| *n > 0).collect();
    let (Some(&lo), Some(&hi)) = (positive.first(), positive.last()) else {
        return "The sweep has no catalogue larger than zero rows.\n".into();
    };
    let at = |surface: &str, n: usize| find(rows, &client, &tok, surface, n);
    // A surface the provider refuses says nothing about growth: it is not sent.
    let sent = |surface: &str, n: usize| at(surface, n).filter(|r| !r.refused);
    let mut out = format!("With {client} and {tok}: ");
    if let (Some(a), Some(b)) = (
        at(SurfaceKind::PER_ROW_MCP.name(), lo),
        at(SurfaceKind::PER_ROW_MCP.name(), hi),
    ) {
        let _ = write!(
            out,
            "per-row MCP bills {} input tokens per turn at N={} and {} at N={} ({:.0}x for {:.0}x the rows, about {} tokens per definition)",
            thousands(a.input_tokens),
            thousands(lo as u64),
            thousands(b.input_tokens),
            thousands(hi as u64),
            b.input_tokens as f64 / a.input_tokens.max(1) as f64,
            hi as f64 / lo as f64,
            b.marginal_tokens_per_definition.map(|m| format!("{m:.0}")).unwrap_or_default()
        );
        if let Some(r) = b.ratio_to_protocol_only {
            let _ = write!(out, ", {r:.1}x protocol-only at the largest N");
        }
        out.push_str(". ");
    }
    let flat: Vec<String> = surfaces(rows)
        .into_iter()
        .filter(|s| s != SurfaceKind::PER_ROW_MCP.name() && s != SurfaceKind::NAME_LIST.name())
        .filter_map(|s| {
            let (a, b) = (sent(&s, lo)?, sent(&s, hi)?);
            let change = b.input_tokens as f64 / a.input_tokens.max(1) as f64 - 1.0;
            (change.abs() < 0.05).then(|| format!("{s} ({})", percent(change)))
        })
        .collect();
    if !flat.is_empty() {
        let _ = write!(
            out,
            "These stay within 5% from N={} to N={}: {}. ",
            thousands(lo as u64),
            thousands(hi as u64),
            flat.join(", ")
        );
    }
    if let (Some(a), Some(b)) = (
        sent(SurfaceKind::DEFERRED_SEARCH.name(), lo),
        sent(SurfaceKind::DEFERRED_SEARCH.name(), hi),
    ) {
        let _ = write!(
            out,
            "Deferred search sends {} bytes at N={} but {} at N={} while billing {} and {} tokens: the definitions travel on every request without being billed. ",
            thousands(a.wire_bytes),
            thousands(lo as u64),
            thousands(b.wire_bytes),
            thousands(hi as u64),
            thousands(a.input_tokens),
            thousands(b.input_tokens)
        );
    }
    crossings(&mut out, rows);
    orders_reading(&mut out, tasks);
    out.trim_end().to_string() + "\n"
}

/// Where per-row MCP and deferred search first cross a provider limit.
fn crossings(out: &mut String, rows: &[SweepRow]) {
    let first_crossing = |surface: &str, what: &str| {
        rows.iter()
            .filter(|r| r.surface == surface && r.warnings.contains(what))
            .map(|r| (r.rows, r.client.clone()))
            .min()
    };
    if let Some((n, c)) = first_crossing(SurfaceKind::PER_ROW_MCP.name(), "context window") {
        let _ = write!(
            out,
            "Per-row MCP no longer fits {c}'s context window from N={}. ",
            thousands(n as u64)
        );
    }
    if let Some((n, c)) = first_crossing(SurfaceKind::PER_ROW_MCP.name(), "OpenAI's limit") {
        let _ = write!(
            out,
            "For {c}, per-row MCP exceeds OpenAI's 128 tools per request from N={}. ",
            thousands(n as u64)
        );
    }
    if let Some((n, c)) = first_crossing(SurfaceKind::PER_ROW_MCP.name(), "Gemini's limit") {
        let _ = write!(
            out,
            "For {c}, per-row MCP exceeds Gemini's 512 function declarations per request from N={}. ",
            thousands(n as u64)
        );
    }
    if let Some((n, _)) =
        first_crossing(SurfaceKind::DEFERRED_SEARCH.name(), "deferred tools exceed")
    {
        let _ = write!(
            out,
            "Deferred search passes Anthropic's 10,000 deferred tools at N={}. ",
            thousands(n as u64)
        );
    }
}

/// The cheapest and dearest surface for the orders task at the largest N played, per client
/// (refused tasks left out: they have no cost).
fn orders_reading(out: &mut String, tasks: &[TaskResult]) {
    let Some(n) = tasks.iter().map(|t| t.rows).max() else {
        return;
    };
    for (i, client) in task_clients(tasks).into_iter().enumerate() {
        let orders: Vec<&TaskResult> = tasks
            .iter()
            .filter(|t| t.rows == n && t.task == "orders" && t.client == client && t.success)
            .collect();
        if let (Some(cheap), Some(dear)) = (
            orders
                .iter()
                .min_by(|a, b| a.cost_usd.total_cmp(&b.cost_usd)),
            orders
                .iter()
                .max_by(|a, b| a.cost_usd.total_cmp(&b.cost_usd)),
        ) {
            let lead = match i {
                0 => format!("Whole tasks at N={}: with", thousands(n as u64)),
                _ => " With".to_string(),
            };
            let _ = write!(
                out,
                "{lead} {client}, the orders task costs {} in {} rounds on {} against {} in {} rounds on {}.",
                money(cheap.cost_usd),
                cheap.rounds,
                cheap.surface_shown(),
                money(dear.cost_usd),
                dear.rounds,
                dear.surface_shown()
            );
        }
    }
}

/// summary.md for a gateway log.
pub fn log(source: &str, rows: &[LogSummary]) -> String {
    let mut s = format!(
        "# Gateway log: {source}\n\nOne row per run (scenario, surface, N and task from each request's metadata; requests without a surface are grouped by model). Token figures carry the log's usage source: `observed` when a provider returned them, `estimated:<tokenizer>` from the mock upstream. Costs are `derived` from the price card the gateway used.\n\n"
    );
    s.push_str(&markdown::table(
        &[
            ("scenario", Align::Left),
            ("surface", Align::Left),
            ("N", Align::Right),
            ("task", Align::Left),
            ("requests", Align::Right),
            ("errors", Align::Right),
            ("input tokens", Align::Right),
            ("cached", Align::Right),
            ("output", Align::Right),
            ("request bytes", Align::Right),
            ("cost", Align::Right),
            ("label", Align::Left),
        ],
        rows.iter().map(|r| {
            vec![
                r.scenario.clone(),
                r.surface.clone(),
                thousands(r.rows as u64),
                r.task.clone(),
                r.requests.to_string(),
                r.errors.to_string(),
                thousands(r.input_tokens),
                thousands(r.cached_input_tokens),
                thousands(r.output_tokens),
                thousands(r.request_bytes),
                money(r.cost_usd),
                r.label.clone(),
            ]
        }),
    ));
    let total: f64 = rows.iter().map(|r| r.cost_usd).sum();
    let requests: usize = rows.iter().map(|r| r.requests).sum();
    let _ = writeln!(
        s,
        "\n{} requests in all, {} (derived).\n\n## Plots\n\n- [rounds per task per surface](task-rounds.svg) ![rounds](task-rounds.png)\n- [input tokens per task per surface](task-tokens.svg) ![tokens](task-tokens.png)\n- [request bytes vs billed tokens](log-bytes-vs-tokens.svg) ![bytes vs tokens](log-bytes-vs-tokens.png)",
        thousands(requests as u64),
        money(total)
    );
    s
}
