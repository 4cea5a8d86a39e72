//! The renderings of `tools` tried against the recorded deltas, and how each fits.

use super::{mape_worst, median, Recorded};
use crate::tokens::claude_exact::Family;
use crate::tokens::Tokenizer;
use serde::Serialize;
use serde_json::{json, Value};

/// One rendering of `tools` tried against the recorded deltas: the constant that fits the fit
/// set best (the median of recorded less rendered), and how far the deltas are from it.
#[derive(Debug, Clone, Serialize)]
pub struct RenderingFit {
    pub rendering: &'static str,
    /// The fitted one-time constant (the tool-use prompt), tokens.
    pub constant: f64,
    /// Recorded less rendered, smallest and largest over both sets.
    pub residual_min: i64,
    pub residual_max: i64,
    /// Leave-one-out MAPE on the fit set and MAPE on the held-out set with the constant.
    pub loo_mape_pct: f64,
    pub heldout_mape_pct: f64,
}

/// The renderings tried: the tools as a JSON array (compact, spaced, indented) and as a block
/// of `<function>` elements (keys as given or sorted, compact or spaced); the last is the one
/// toolcost bills with.
pub const RENDERINGS: [&str; 6] = [
    "JSON array, compact, keys as given",
    "JSON array, spaced, keys as given",
    "JSON array, indented by 2, keys as given",
    "`<functions>` block, compact, keys sorted",
    "`<functions>` block, spaced, keys as given",
    "`<functions>` block, spaced, keys sorted",
];

/// The text of `tools` in one of [`RENDERINGS`].
fn rendered(which: usize, tools: &[Value]) -> String {
    use crate::billing::render::functions::{push_json, CLOSE, OPEN};
    let array = Value::Array(tools.to_vec());
    let function = |t: &Value, sort: bool, spaced: bool| {
        let m = json!({"description": t["description"], "name": t["name"], "parameters": t["input_schema"]});
        let mut s = String::from("<function>");
        push_json(&m, sort, spaced, &mut s);
        s + "</function>"
    };
    let block = |sort: bool, spaced: bool| {
        let body: Vec<String> = tools.iter().map(|t| function(t, sort, spaced)).collect();
        format!("{OPEN}\n{}\n{CLOSE}", body.join("\n"))
    };
    match which {
        0 => crate::json::compact(&array),
        1 => {
            let mut s = String::new();
            push_json(&array, false, true, &mut s);
            s
        }
        2 => serde_json::to_string_pretty(&array).unwrap_or_default(),
        3 => block(true, false),
        4 => block(false, true),
        _ => block(true, true),
    }
}

/// Fit and score each rendering, counted with the family of the set's model.
pub fn renderings(set: &[Recorded], held: &[Recorded]) -> Vec<RenderingFit> {
    let tok = |r: &Recorded| {
        let f = Family::of_model(&r.model).unwrap_or(Family::V5);
        Tokenizer::of_claude_family(f)
    };
    (0..RENDERINGS.len())
        .map(|which| {
            let resid = |r: &Recorded| r.recorded as f64 - tok(r).count(&rendered(which, &r.tools));
            let fit: Vec<f64> = set.iter().map(resid).collect();
            let out: Vec<f64> = held.iter().map(resid).collect();
            let constant = median(fit.clone());
            let loo = (0..fit.len()).map(|i| {
                let rest: Vec<f64> = (0..fit.len()).filter(|&j| j != i).map(|j| fit[j]).collect();
                let c = median(rest);
                100.0 * (c - fit[i]) / set[i].recorded as f64
            });
            let heldout = out
                .iter()
                .zip(held)
                .map(|(r, h)| 100.0 * (constant - r) / h.recorded as f64);
            let all = fit.iter().chain(&out);
            RenderingFit {
                rendering: RENDERINGS[which],
                constant,
                residual_min: all.clone().cloned().fold(f64::INFINITY, f64::min) as i64,
                residual_max: all.cloned().fold(f64::NEG_INFINITY, f64::max) as i64,
                loo_mape_pct: mape_worst(loo).0,
                heldout_mape_pct: mape_worst(heldout).0,
            }
        })
        .collect()
}
