//! Whole recorded requests: what Claude billed for each (input, cache writes and cache reads
//! added) beside toolcost's count of the same body, by shape and tokenizer family, with the
//! leave-one-out error of the constants fitted to them (the tool-use prompts and the structured
//! output prompt, [`crate::billing::render::claude`]).
//!
//! The set shipped with toolcost (`fixtures/claude-requests`) holds 733 requests recorded by four
//! public test suites, each body exactly as it was sent. A request with server tools, media or
//! thinking bills prompts or media no offline count sees: such rows are reported, left out of
//! the summary's bar, and say why.

use crate::billing::render::claude::{self, STRUCTURED_OUTPUT_PROMPT};
use crate::billing::{billed_input, RenderModel};
use crate::error::{Error, Result};
use crate::report::{Column, Tabular};
use crate::tokens::claude_exact::Family;
use crate::tokens::Tokenizer;
use crate::wire::{Format, Request};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;

/// The recorded set shipped with toolcost (gzip JSON lines).
pub const EMBEDDED: &[u8] = include_bytes!("../../fixtures/claude-requests/requests.jsonl.gz");

/// The largest set read, unpacked.
const MAX_SET_BYTES: u64 = 256 << 20;
/// The most rows a set may hold.
const MAX_ROWS: usize = 100_000;

/// One recorded request, as the fixture writes it.
#[derive(Debug, Clone, Deserialize)]
struct Recorded {
    row: usize,
    model: String,
    /// Billed input: uncached input, cache writes and cache reads added.
    recorded: u64,
    source: String,
    notes: String,
    body: Value,
}

/// One request: the recorded billed input beside toolcost's count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestRow {
    pub row: usize,
    pub model: String,
    /// The model's Claude tokenizer family.
    pub family: String,
    /// What the request carries: one message, system, turns, tools, tool calls, structured
    /// output, deferred tools.
    pub shape: String,
    /// Claude's billed input (recorded).
    pub recorded: u64,
    /// toolcost's count (estimated:claude-v*, with the fitted prompts: calibrated).
    pub estimate: u64,
    pub error_pct: f64,
    /// The count with each fitted constant fitted without this request (leave-one-out); empty
    /// where no other request fits it.
    pub loo_estimate: Option<u64>,
    pub loo_error_pct: Option<f64>,
    /// Why the request is left out of the bar (server tools, media, thinking, ...): empty when
    /// it is in.
    pub left_out: String,
    pub source: String,
}

impl Tabular for RequestRow {
    const COLUMNS: &'static [Column] = &[
        Column::field("error_pct").places(2),
        Column::field("loo_error_pct").places(2),
    ];
    const BRIEF: &'static [&'static str] = &[
        "row",
        "model",
        "shape",
        "recorded",
        "estimate",
        "error_pct",
        "loo_error_pct",
        "left_out",
    ];
    const NOTES: &'static [&'static str] = &["left_out"];
}

/// One line of the summary: the requests of a family (or a shape) in the bar.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub group: String,
    pub requests: usize,
    pub exact: usize,
    pub exact_pct: f64,
    /// Mean absolute error, in percent.
    pub mape_pct: f64,
    pub loo_mape_pct: f64,
}

/// Read a set: gzip or plain JSON lines.
pub fn load(bytes: &[u8]) -> Result<Vec<Value>> {
    crate::input::json_lines(bytes, "the recorded requests", MAX_SET_BYTES, MAX_ROWS)
}

/// Why a request is left out of the bar, if it is.
fn left_out(r: &Recorded) -> Option<String> {
    let b = &r.body;
    if r.notes.contains("LENGTH CHECK FAILED") {
        return Some("stored body shorter than sent".into());
    }
    if r.notes.contains("DUPLICATE") {
        return Some("duplicate of another row".into());
    }
    if b.get("messages").is_none() {
        return Some("not a Messages body (Bedrock Converse)".into());
    }
    let tools = b["tools"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if tools
        .iter()
        .any(|t| t["type"].as_str().is_some_and(|ty| ty != "custom"))
    {
        return Some("server tools: their hidden prompts are not counted".into());
    }
    if b.get("thinking").is_some_and(|t| t["type"] != "disabled") {
        return Some("thinking: its hidden prompt is not counted".into());
    }
    let text = b["messages"].to_string();
    for (needle, why) in [
        ("\"image\"", "media: billed by size"),
        ("\"document\"", "media: billed by size"),
        ("\"search_result\"", "search results: not modelled"),
        ("\"container_upload\"", "code execution container"),
        ("\"thinking\"", "thinking blocks"),
        ("\"redacted_thinking\"", "thinking blocks"),
        ("\"compaction\"", "compaction: not modelled"),
    ] {
        if text.contains(&format!("\"type\":{needle}")) {
            return Some(why.into());
        }
    }
    for (key, why) in [
        ("mcp_servers", "MCP connector: server-side tools"),
        ("container", "code execution container"),
        ("context_management", "context management: not modelled"),
    ] {
        if b.get(key).is_some() {
            return Some(why.into());
        }
    }
    if b.pointer("/output_config/task_budget").is_some() {
        return Some("task budget: its hidden prompt is not counted".into());
    }
    None
}

/// The shape of a request, most telling first.
fn shape(b: &Value) -> &'static str {
    let text = b["messages"].to_string();
    let tools = b["tools"].as_array().is_some_and(|t| !t.is_empty());
    if text.contains("\"type\":\"tool_use\"") || text.contains("\"type\":\"tool_result\"") {
        "tool calls"
    } else if crate::billing::render::structured_output(b).is_some() {
        "structured output"
    } else if tools && b["tools"].to_string().contains("\"defer_loading\":true") {
        "deferred tools"
    } else if tools {
        "tools"
    } else if b["messages"].as_array().is_some_and(|m| m.len() > 1) {
        "turns"
    } else if b.get("system").is_some() {
        "system"
    } else {
        "one message"
    }
}

/// The tool-use prompt constant a request's count carries, and the group it is fitted in.
fn prompt_used(model: &str, f: Family, b: &Value) -> Option<(String, f64)> {
    b["tools"].as_array().filter(|t| !t.is_empty())?;
    let p = claude::tool_prompt(model).unwrap_or_else(|| claude::tool_prompt_of_family(f));
    let choice = b.pointer("/tool_choice/type").and_then(Value::as_str);
    let (name, c) = match choice {
        Some("any") => ("any", p.any),
        Some("tool") => ("tool", p.tool),
        _ => ("auto", p.auto),
    };
    Some((format!("{} {name}", p.model), c))
}

/// Count every request of a set, fit the constants, and leave each request out of their fit.
pub fn check(set: &[Value]) -> Result<(Vec<RequestRow>, Vec<Summary>)> {
    let mut rows = Vec::new();
    // Each fitted constant's group: the request's reading of the constant (recorded less its
    // count without it).
    let mut groups: HashMap<String, Vec<(usize, f64)>> = HashMap::new();
    let mut used: Vec<Vec<(String, f64)>> = Vec::new();
    for v in set {
        let r: Recorded = serde_json::from_value(v.clone())
            .map_err(|e| Error::input(format!("a recorded request: {e}")))?;
        if r.recorded == 0 || r.recorded > 100_000_000 {
            return Err(Error::input(format!(
                "recorded request {}: {} tokens is not a count",
                r.row, r.recorded
            )));
        }
        let Some(f) = Family::of_model(&r.model) else {
            return Err(Error::input(format!(
                "recorded request {}: `{}` is not a Claude model",
                r.row, r.model
            )));
        };
        let why = left_out(&r);
        let estimate = match why.is_some() && r.body.get("messages").is_none() {
            true => 0,
            false => {
                // The model's own rules, as the gateway and `count --request` take them.
                let (render, tok) = match crate::identity::identify(&r.model) {
                    Some(m) => {
                        let (render, tok, _) = m.rules();
                        (render, tok)
                    }
                    None => (
                        RenderModel::parse("anthropic:claude-5").expect("a Claude render model"),
                        Tokenizer::of_claude_family(f),
                    ),
                };
                let req = Request::new(Format::AnthropicMessages, r.body.clone());
                billed_input(&req, render, tok).input_tokens
            }
        };
        let mut consts = Vec::new();
        if why.is_none() {
            if let Some((g, c)) = prompt_used(&r.model, f, &r.body) {
                consts.push((g, c));
            }
            if crate::billing::render::structured_output(&r.body).is_some() {
                consts.push(("structured output".to_string(), STRUCTURED_OUTPUT_PROMPT));
            }
            for (g, c) in &consts {
                let reading = r.recorded as f64 - estimate as f64 + c;
                groups
                    .entry(g.clone())
                    .or_default()
                    .push((rows.len(), reading));
            }
        }
        used.push(consts);
        rows.push(RequestRow {
            row: r.row,
            model: r.model.clone(),
            family: f.name().to_string(),
            shape: shape(&r.body).to_string(),
            recorded: r.recorded,
            estimate,
            error_pct: pct(estimate, r.recorded),
            loo_estimate: None,
            loo_error_pct: None,
            left_out: why.unwrap_or_default(),
            source: r.source.clone(),
        });
    }
    for (i, row) in rows.iter_mut().enumerate() {
        if !row.left_out.is_empty() {
            continue;
        }
        let mut loo = row.estimate as f64;
        let mut known = true;
        for (g, c) in &used[i] {
            let others: Vec<f64> = groups[g]
                .iter()
                .filter(|(j, _)| *j != i)
                .map(|(_, x)| *x)
                .collect();
            match mode(&others) {
                Some(m) => loo += m - c,
                None => known = false,
            }
        }
        if known {
            let e = loo.round().max(0.0) as u64;
            row.loo_estimate = Some(e);
            row.loo_error_pct = Some(pct(e, row.recorded));
        }
    }
    let summaries = summarise(&rows);
    Ok((rows, summaries))
}

/// The value most readings agree on (the smallest of the most common), if any.
fn mode(xs: &[f64]) -> Option<f64> {
    let mut counts: Vec<(i64, usize)> = Vec::new();
    for x in xs {
        let k = x.round() as i64;
        match counts.iter_mut().find(|(v, _)| *v == k) {
            Some((_, n)) => *n += 1,
            None => counts.push((k, 1)),
        }
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(v, _)| v as f64)
}

fn pct(estimate: u64, recorded: u64) -> f64 {
    100.0 * (estimate as f64 - recorded as f64) / recorded.max(1) as f64
}

/// The bar's lines: each family, each shape, and all, over the requests in the bar.
fn summarise(rows: &[RequestRow]) -> Vec<Summary> {
    let kept: Vec<&RequestRow> = rows.iter().filter(|r| r.left_out.is_empty()).collect();
    let mut keys: Vec<String> = Vec::new();
    for f in Family::ALL {
        keys.push(f.name().to_string());
    }
    for r in &kept {
        if !keys.contains(&r.shape) {
            keys.push(r.shape.clone());
        }
    }
    keys.push("all".into());
    keys.into_iter()
        .filter_map(|k| {
            let group: Vec<&&RequestRow> = kept
                .iter()
                .filter(|r| k == "all" || r.family == k || r.shape == k)
                .collect();
            if group.is_empty() {
                return None;
            }
            let n = group.len();
            let exact = group.iter().filter(|r| r.estimate == r.recorded).count();
            let mape = group.iter().map(|r| r.error_pct.abs()).sum::<f64>() / n as f64;
            let loo = group
                .iter()
                .map(|r| r.loo_error_pct.unwrap_or(r.error_pct).abs())
                .sum::<f64>()
                / n as f64;
            Some(Summary {
                group: k,
                requests: n,
                exact,
                exact_pct: 100.0 * exact as f64 / n as f64,
                mape_pct: mape,
                loo_mape_pct: loo,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_is_the_most_common_reading() {
        assert_eq!(mode(&[489.0, 489.0, 493.0]), Some(489.0));
        assert_eq!(mode(&[2.0, 1.0]), Some(1.0));
        assert_eq!(mode(&[]), None);
    }

    #[test]
    fn a_row_that_is_not_a_count_is_refused() {
        let set = load(
            br#"{"row":1,"model":"claude-sonnet-4-5","recorded":0,"source":"s","notes":"","body":{"messages":[]}}"#,
        )
        .unwrap();
        assert!(check(&set).is_err());
        let set = load(
            br#"{"row":1,"model":"gpt-4o","recorded":5,"source":"s","notes":"","body":{"messages":[]}}"#,
        )
        .unwrap();
        assert!(check(&set)
            .unwrap_err()
            .to_string()
            .contains("not a Claude model"));
    }
}
