//! Which charts a sweep draws, from its rows: tokens and cost per month against N for each
//! client (with its context windows and its provider's tool limit), bytes against billed
//! tokens for deferred search, bytes per definition, and the task charts.

use super::plot::{self, BytesPerDefinition, BytesVsTokens, PerSurface, Point, TaskPoint};
use super::SweepRow;
use crate::driver::TaskResult;
use crate::error::Result;
use crate::pricing::PriceCard;
use crate::surface::SurfaceKind;
use std::path::{Path, PathBuf};

/// The evidence label of a tokenizer's figures in these rows (`estimated:o200k`,
/// `calibrated:claude-est(...)`).
fn tok_label(rows: &[SweepRow], tok: &str) -> String {
    rows.iter()
        .find(|r| r.tokenizer == tok)
        .map_or_else(|| format!("estimated:{tok}"), |r| r.label.clone())
}

/// One series per surface of this client and tokenizer, N > 0; a refused row (the provider
/// answers 400) and a row without a value have no point, so a surface refused at every N has
/// no series.
fn by_surface(
    rows: &[SweepRow],
    client: &str,
    tokenizer: &str,
    value: impl Fn(&SweepRow) -> Option<f64>,
) -> Vec<(String, Vec<Point>)> {
    let mut out: Vec<(String, Vec<Point>)> = Vec::new();
    for r in rows
        .iter()
        .filter(|r| r.client == client && r.tokenizer == tokenizer && r.rows > 0)
    {
        let Some(v) = value(r).filter(|_| !r.refused) else {
            continue;
        };
        let p = (r.rows as f64, v);
        match out.iter_mut().find(|(s, _)| *s == r.surface) {
            Some((_, v)) => v.push(p),
            None => out.push((r.surface.clone(), vec![p])),
        }
    }
    out
}

/// A client as the per-N charts draw it: its price card's context window, and the tool limit
/// of its provider format.
pub struct ClientLimits {
    pub client: String,
    pub format: crate::provider::Format,
    pub card: PriceCard,
}

/// Every chart a sweep makes; returns the files written. The per-N charts are drawn for each
/// client (the first client's files carry no suffix, the others `-<client>`), with the first
/// tokenizer the sweep used.
pub fn sweep_plots(
    dir: &Path,
    rows: &[SweepRow],
    per_def: Option<&(usize, Vec<usize>)>,
    tasks: &[TaskResult],
    clients: &[ClientLimits],
    month: (u64, u64),
) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for (i, c) in clients.iter().enumerate() {
        let client = &c.client;
        // The first tokenizer this client was measured with (the Kimi estimate is only
        // measured for the Kimi card).
        let Some(tok) = rows
            .iter()
            .find(|r| r.client == *client)
            .map(|r| r.tokenizer.clone())
        else {
            continue;
        };
        let suffix = if i == 0 {
            String::new()
        } else {
            format!("-{client}")
        };
        let mut window = context_windows(&c.card);
        window.extend(price_tiers(&c.card));
        let limit = c.format.spec().tool_limit();
        let limit = (limit.tools as f64, limit.label);
        files.extend(plot::write(
            dir,
            &PerSurface {
                stem: format!("tokens-vs-n{suffix}"),
                title: format!("Input tokens per turn vs catalogue size ({client}, {tok})"),
                y_desc: format!(
                    "billed input tokens per turn ({}, log scale)",
                    tok_label(rows, &tok)
                ),
                series: by_surface(rows, client, &tok, |r| Some(r.input_tokens as f64)),
                hlines: window,
                vlines: vec![limit.clone()],
                money: false,
                note: None,
            },
        )?);
        files.extend(plot::write(
            dir,
            &PerSurface {
                stem: format!("cost-per-month{suffix}"),
                title: format!(
                    "Cost per month vs catalogue size ({client} on {}, {} turns a day x {} days)",
                    c.card.id.rsplit('/').next().unwrap_or(&c.card.id),
                    month.0,
                    month.1
                ),
                y_desc: "USD per month, warm cache (derived, log scale)".into(),
                series: by_surface(rows, client, &tok, |r| r.cost_per_month_usd),
                hlines: Vec::new(),
                vlines: vec![limit],
                money: true,
                note: (c.card.min_cacheable > 0).then(|| {
                    format!(
                        "{} caches a prompt of {} tokens or more: a shorter one pays every token, so it can cost more than a longer one",
                        c.card.id, c.card.min_cacheable
                    )
                }),
            },
        )?);
        files.extend(bytes_vs_tokens(dir, rows, client, &tok, &suffix)?);
    }
    if let Some((n, sizes)) = per_def {
        files.extend(plot::write(
            dir,
            &BytesPerDefinition {
                rows: *n,
                sizes: sizes.clone(),
            },
        )?);
    }
    // The task charts show the first client's tasks (the table in summary.md has every client's).
    let first = tasks.first().map(|t| t.client.as_str()).unwrap_or("");
    files.extend(plot::task_plots(
        dir,
        &tasks
            .iter()
            .filter(|t| t.client == first)
            .map(TaskPoint::from)
            .collect::<Vec<_>>(),
    )?);
    Ok(files)
}

/// Wire bytes against billed tokens for deferred search and per-row MCP, one client.
fn bytes_vs_tokens(
    dir: &Path,
    rows: &[SweepRow],
    client: &str,
    tok: &str,
    suffix: &str,
) -> Result<Vec<PathBuf>> {
    let mut series = Vec::new();
    for surface in [
        SurfaceKind::DEFERRED_SEARCH.name(),
        SurfaceKind::PER_ROW_MCP.name(),
    ] {
        let pts: Vec<(f64, f64, usize)> = rows
            .iter()
            .filter(|r| {
                r.client == client && r.tokenizer == tok && r.surface == surface && r.rows > 0
            })
            .map(|r| (r.wire_bytes as f64, r.input_tokens as f64, r.rows))
            .collect();
        if !pts.is_empty() {
            series.push((surface.to_string(), pts));
        }
    }
    if series.is_empty() {
        return Ok(Vec::new());
    }
    plot::write(
        dir,
        &BytesVsTokens {
            stem: format!("deferred-bytes-vs-tokens{suffix}"),
            title: format!(
                "Bytes sent vs tokens billed ({client}): deferred search against per-row MCP"
            ),
            series,
            token_label: tok_label(rows, tok),
        },
    )
}

/// Where the client's card bills at another tier: a line at each threshold of input tokens,
/// with the factor its input rate changes by.
fn price_tiers(own: &PriceCard) -> Vec<(f64, String)> {
    own.tiers
        .iter()
        .map(|t| {
            (
                t.above as f64,
                format!(
                    "price tier above {}: {} bills the whole request at {:.2}x input",
                    plot::compact(t.above as f64),
                    own.id,
                    t.input / own.input
                ),
            )
        })
        .collect()
}

/// Every price card's context window, cards with the same window on one line; the client's
/// own card is marked.
fn context_windows(own: &PriceCard) -> Vec<(f64, String)> {
    let mut by_size: Vec<(u64, Vec<String>)> = Vec::new();
    let own_listed = PriceCard::all().iter().any(|c| c.id == own.id);
    let extra = (!own_listed).then_some(own);
    for card in PriceCard::all().iter().chain(extra) {
        let id = if card.id == own.id {
            format!("{} (this client)", card.id)
        } else {
            card.id.clone()
        };
        match by_size.iter_mut().find(|(w, _)| *w == card.context_window) {
            Some((_, ids)) => ids.push(id),
            None => by_size.push((card.context_window, vec![id])),
        }
    }
    by_size
        .into_iter()
        .map(|(w, ids)| {
            (
                w as f64,
                format!(
                    "context window {}: {}",
                    plot::compact(w as f64),
                    ids.join(", ")
                ),
            )
        })
        .collect()
}
