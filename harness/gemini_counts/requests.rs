//! Whole recorded Gemini requests: what Google billed for each (`promptTokenCount`, or a
//! `countTokens` total) beside toolcost's count of the same body, by API, generation and shape.
//! Nothing here is fitted: every rule of [`crate::billing::render::gemini`] is a rendering, and
//! the error is out of sample for each of them.
//!
//! A Gemini 3 request that sends back a `thoughtSignature` bills the thinking of the answer it
//! came from again. The request alone does not say how much; the gateway knows from the answers
//! it logged. The report does what the gateway does: where the earlier answer is in the set (the
//! same cassette, a request whose contents this one extends), its `thoughtsTokenCount` is added
//! (`thoughts_added`); where it is not, the row says how many turns it could not price.

use crate::billing::render::gemini::{self, Gemini};
use crate::billing::{billed_input, RenderModel};
use crate::error::{Error, Result};
use crate::report::{Column, Tabular};
use crate::tokens::Tokenizer;
use crate::wire::{Format, Request};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashSet;

/// The recorded set shipped with toolcost (gzip JSON lines).
pub const EMBEDDED: &[u8] = include_bytes!("../../fixtures/gemini-requests/requests.jsonl.gz");

#[derive(Debug, Clone, Deserialize)]
struct Recorded {
    id: String,
    source: String,
    cassette: String,
    interaction: usize,
    api: String,
    model: String,
    recorded: u64,
    /// The answer's `thoughtsTokenCount`.
    #[serde(default)]
    thoughts: u64,
    body: Value,
}

/// One request: Google's billed prompt beside toolcost's count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestRow {
    pub id: String,
    pub model: String,
    pub api: String,
    /// text, system, turns, tools, calls (function calls and responses in the history).
    pub shape: String,
    /// Google's count (recorded).
    pub recorded: u64,
    /// toolcost's count (estimated:gemma3), the earlier answers' thinking added where known.
    pub estimate: u64,
    pub error_pct: f64,
    /// The earlier answers' thinking billed again, as logged (recorded in the set).
    pub thoughts_added: u64,
    /// Why the row is left out of the bar (media, thinking not known): empty when it is in.
    pub left_out: String,
    pub source: String,
}

impl Tabular for RequestRow {
    const COLUMNS: &'static [Column] = &[Column::field("error_pct").places(2)];
    const BRIEF: &'static [&'static str] = &[
        "id",
        "model",
        "api",
        "shape",
        "recorded",
        "estimate",
        "error_pct",
        "left_out",
    ];
    const NOTES: &'static [&'static str] = &["left_out"];
}

/// One line of the summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub group: String,
    pub requests: usize,
    pub exact: usize,
    pub exact_pct: f64,
    pub mape_pct: f64,
}

/// Read a set: gzip or plain JSON lines.
pub fn load(bytes: &[u8]) -> Result<Vec<Value>> {
    crate::input::json_lines(bytes, "the recorded Gemini requests", 256 << 20, 100_000)
}

fn shape(b: &Value) -> &'static str {
    let text = b["contents"].to_string();
    if text.contains("\"functionCall\"") || text.contains("\"functionResponse\"") {
        "calls"
    } else if b["tools"].as_array().is_some_and(|t| !t.is_empty()) {
        "tools"
    } else if b["contents"].as_array().is_some_and(|c| c.len() > 1) {
        "turns"
    } else if b.get("systemInstruction").is_some() {
        "system"
    } else {
        "text"
    }
}

/// Media parts a request holds, which no text count sees.
fn has_media(b: &Value) -> bool {
    let text = b["contents"].to_string();
    ["\"inlineData\"", "\"fileData\""]
        .iter()
        .any(|k| text.contains(k))
}

/// Count every request of a set.
pub fn check(set: &[Value]) -> Result<(Vec<RequestRow>, Vec<Summary>)> {
    Tokenizer::Gemma3.ready()?;
    let mut recs: Vec<(Recorded, Request)> = Vec::new();
    let mut ids = HashSet::new();
    for v in set {
        let r: Recorded = serde_json::from_value(v.clone())
            .map_err(|e| Error::input(format!("a recorded Gemini request: {e}")))?;
        super::sound(&r.id, &r.model, &r.api, r.recorded)?;
        if !ids.insert(r.id.clone()) {
            return Err(Error::input(format!(
                "recorded Gemini request `{}` is on two rows",
                r.id
            )));
        }
        let bytes = serde_json::to_vec(&r.body).expect("JSON serialises");
        let req = Request::parse_routed(Format::Gemini, &bytes, Some(&r.model))
            .map_err(|e| Error::input(format!("recorded Gemini request `{}`: {e}", r.id)))?;
        recs.push((r, req));
    }
    let mut rows = Vec::new();
    for (r, req) in &recs {
        let g = Gemini::of_model(&r.model, r.api == "vertex");
        let bill = billed_input(req, RenderModel::Gemini(g), Tokenizer::Gemma3);
        // The earlier answers of this conversation: requests of the same cassette whose
        // contents this one extends by the answer (a model turn with a real signature).
        let mut added = 0;
        let mut priced = 0;
        if bill.thoughts_resent > 0 {
            let contents = req.messages();
            for (p, preq) in &recs {
                let pc = preq.messages();
                if p.cassette != r.cassette
                    || p.interaction >= r.interaction
                    || pc.len() >= contents.len()
                    || contents[..pc.len()] != *pc
                {
                    continue;
                }
                let next = std::slice::from_ref(&contents[pc.len()]);
                if !gemini::resent_thoughts(next).is_empty() {
                    added += p.thoughts;
                    priced += 1;
                }
            }
        }
        let estimate = bill.input_tokens + added;
        let mut why = Vec::new();
        if has_media(&r.body) {
            why.push("media: billed by size".to_string());
        }
        if bill.thoughts_resent > priced {
            why.push(format!(
                "thinking of {} earlier turn(s) billed again, not in the set",
                bill.thoughts_resent - priced
            ));
        }
        rows.push(RequestRow {
            id: r.id.clone(),
            model: r.model.clone(),
            api: r.api.clone(),
            shape: shape(&r.body).to_string(),
            recorded: r.recorded,
            estimate,
            error_pct: 100.0 * (estimate as f64 - r.recorded as f64) / r.recorded as f64,
            thoughts_added: added,
            left_out: why.join("; "),
            source: r.source.clone(),
        });
    }
    let summaries = summarise(&rows);
    Ok((rows, summaries))
}

fn summarise(rows: &[RequestRow]) -> Vec<Summary> {
    let mut out = Vec::new();
    for api in ["developer", "vertex"] {
        let kept: Vec<&RequestRow> = rows
            .iter()
            .filter(|r| r.api == api && r.left_out.is_empty())
            .collect();
        let mut groups: Vec<String> = vec![api.to_string()];
        for r in &kept {
            let g = format!("{api} {}", r.shape);
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
        for g in groups {
            let group: Vec<&&RequestRow> = kept
                .iter()
                .filter(|r| g == api || g == format!("{api} {}", r.shape))
                .collect();
            if group.is_empty() {
                continue;
            }
            let n = group.len();
            let exact = group.iter().filter(|r| r.estimate == r.recorded).count();
            out.push(Summary {
                group: g,
                requests: n,
                exact,
                exact_pct: 100.0 * exact as f64 / n as f64,
                mape_pct: group.iter().map(|r| r.error_pct.abs()).sum::<f64>() / n as f64,
            });
        }
    }
    out
}
