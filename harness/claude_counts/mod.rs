//! Recorded Claude token counts beside toolcost's estimate of them: the evidence behind the
//! `claude-est` estimator, and its re-fit.
//!
//! A set of recorded counts is a folder with `counts.csv` (one row per server: `server`,
//! `tools`, `model`, `claude_tools_delta`, `o200k_of_projection`, ...) and one
//! `<server>.tools.json` each (`{"tools": [...]}`, the `tools/list` that was counted). Each
//! count is what `count_tokens` said the server's tools add to a request of one "." user
//! message, with every tool projected to `{name, description, input_schema}`.
//!
//! toolcost's estimate of the same delta is what its mock gateway's `count_tokens` answers for
//! the same two bodies, so this table checks exactly what users of the mock get. Beside it:
//! the weights re-fitted on the set, the in-sample error, and the error when each server is
//! left out of the fit (leave-one-out).

use crate::error::{Error, Result};
use crate::gateway::mock::{Mock, When};
use crate::report::{Column, Tabular};
use crate::tokens::claude::{self, Features};
use crate::tokens::Tokenizer;
use crate::wire::{Format, Request};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

mod renderings;
pub mod requests;
mod text;
pub use renderings::{renderings, RenderingFit, RENDERINGS};
pub use text::{check_texts, TextRow};

/// The recorded set that ships with toolcost, which the weights are fitted to.
pub fn default_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/claude-counts")
}

/// Recorded counts of other servers, kept out of the fit: the estimate's out-of-sample check.
pub fn heldout_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/claude-counts-heldout")
}

/// The largest capture read (the largest recorded one is 123 KB).
const MAX_CAPTURE_BYTES: u64 = 64 * 1024 * 1024;
/// The largest tools delta taken as recorded: past it a row is a typo, not a count.
const MAX_DELTA: u64 = 100_000_000;
/// The most servers a set may hold.
const MAX_SERVERS: usize = 10_000;

/// One recorded server.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub server: String,
    pub model: String,
    pub recorded: u64,
    /// The projected definitions, in capture order.
    pub tools: Vec<Value>,
}

/// One row of the comparison.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CountRow {
    pub server: String,
    pub tools: usize,
    pub model: String,
    /// Claude's own count of the tools delta (recorded).
    pub recorded: u64,
    /// What toolcost's mock `count_tokens` answers for the same delta: the exact tokenizer over
    /// the tools block, plus the tool-use prompt fitted on the fit set (calibrated).
    pub estimate: u64,
    /// (estimate - recorded) / recorded, in percent (derived).
    pub error_pct: f64,
    /// The estimate with the tool-use prompt fitted without this server (leave-one-out).
    pub loo_estimate: u64,
    pub loo_error_pct: f64,
    /// What the earlier estimator answered (calibrated:claude-est, four weights over o200k).
    pub claude_est: u64,
    pub claude_est_error_pct: f64,
    /// What toolcost answered before any Claude model: o200k with the 4.6 family's 497-token
    /// tool prompt (estimated:o200k).
    pub before: u64,
    pub before_error_pct: f64,
}

impl Tabular for CountRow {
    const COLUMNS: &'static [Column] = &[
        Column::field("error_pct").places(2),
        Column::field("loo_error_pct").places(2),
        Column::field("claude_est_error_pct").places(2),
        Column::field("before_error_pct").places(1),
    ];
}

impl From<&CountRow> for HeldOutRow {
    fn from(r: &CountRow) -> HeldOutRow {
        HeldOutRow {
            server: r.server.clone(),
            tools: r.tools,
            model: r.model.clone(),
            recorded: r.recorded,
            estimate: r.estimate,
            error_pct: r.error_pct,
            claude_est: r.claude_est,
            claude_est_error_pct: r.claude_est_error_pct,
            before: r.before,
            before_error_pct: r.before_error_pct,
        }
    }
}

/// One server of a held-out set: the committed estimate beside the recorded count.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HeldOutRow {
    pub server: String,
    pub tools: usize,
    pub model: String,
    /// Claude's own count of the tools delta (recorded).
    pub recorded: u64,
    /// What toolcost's mock `count_tokens` answers (its one constant fitted on another set).
    pub estimate: u64,
    pub error_pct: f64,
    /// What the earlier estimator answered (calibrated:claude-est).
    pub claude_est: u64,
    pub claude_est_error_pct: f64,
    /// What toolcost answered before any Claude model (estimated:o200k).
    pub before: u64,
    pub before_error_pct: f64,
}

impl Tabular for HeldOutRow {
    const COLUMNS: &'static [Column] = &[
        Column::field("error_pct").places(2),
        Column::field("claude_est_error_pct").places(2),
        Column::field("before_error_pct").places(1),
    ];
}

/// A held-out set's rows and their errors.
#[derive(Debug, Clone, Serialize)]
pub struct HeldOut {
    pub rows: Vec<HeldOutRow>,
    pub mape_pct: f64,
    pub worst_pct: f64,
}

/// The committed estimate on a set it was not fitted to.
pub fn check(set: &[Recorded]) -> Result<HeldOut> {
    let rows = set.iter().map(measure).collect::<Result<Vec<_>>>()?;
    let (mape_pct, worst_pct) = mape_worst(rows.iter().map(|r| r.error_pct));
    Ok(HeldOut {
        rows,
        mape_pct,
        worst_pct,
    })
}

/// One server's estimate through the mock's `count_tokens`, and what toolcost said before.
fn measure(r: &Recorded) -> Result<HeldOutRow> {
    let estimate = count_tokens(&r.model, Some(&r.tools))? - count_tokens(&r.model, None)?;
    let before = before_of(&r.tools);
    let est = claude_est_of(&r.tools);
    let rec = r.recorded as f64;
    Ok(HeldOutRow {
        server: r.server.clone(),
        tools: r.tools.len(),
        model: r.model.clone(),
        recorded: r.recorded,
        estimate,
        error_pct: pct(estimate as f64, rec),
        claude_est: est,
        claude_est_error_pct: pct(est as f64, rec),
        before,
        before_error_pct: pct(before as f64, rec),
    })
}

/// The mean and the largest of the errors' sizes, in percent.
pub(crate) fn mape_worst(errors: impl Iterator<Item = f64>) -> (f64, f64) {
    let v: Vec<f64> = errors.map(f64::abs).collect();
    (
        v.iter().sum::<f64>() / v.len().max(1) as f64,
        v.iter().cloned().fold(0.0, f64::max),
    )
}

impl HeldOutRow {
    /// The row's Markdown cells: server, tools, recorded, estimate, error, claude-est, error,
    /// before, error.
    fn cells(&self) -> Vec<String> {
        vec![
            self.server.clone(),
            self.tools.to_string(),
            crate::report::thousands(self.recorded),
            crate::report::thousands(self.estimate),
            format!("{:+.2}%", self.error_pct),
            crate::report::thousands(self.claude_est),
            format!("{:+.2}%", self.claude_est_error_pct),
            crate::report::thousands(self.before),
            format!("{:+.1}%", self.before_error_pct),
        ]
    }
}

/// The held-out table's columns; the fit table adds leave-one-out's two after the fifth.
const HELD_COLUMNS: [(&str, crate::report::Align); 9] = {
    use crate::report::Align::{Left, Right};
    [
        ("server", Left),
        ("tools", Right),
        ("recorded", Right),
        ("estimate", Right),
        ("error", Right),
        ("claude-est", Right),
        ("error", Right),
        ("before", Right),
        ("error", Right),
    ]
};

/// What toolcost answered for a tools delta before any Claude model: o200k definitions and the
/// 4.6 family's tool prompt.
fn before_of(tools: &[Value]) -> u64 {
    let render = crate::billing::RenderModel::parse("anthropic:claude-4.6").expect("family");
    let bill = |tools: Option<&[Value]>| {
        let mut body = json!({"model": "m", "messages": [{"role": "user", "content": "."}]});
        if let Some(t) = tools {
            body["tools"] = Value::Array(t.to_vec());
        }
        let req = Request::new(Format::AnthropicMessages, body);
        crate::billing::billed_input(&req, render, Tokenizer::O200k).input_tokens
    };
    bill(Some(tools)) - bill(None)
}

/// What the earlier estimator (`claude-est`) answers for a tools delta: its committed weights
/// over each definition's compact JSON, plus the minimal-tool probe less that tool's estimate.
fn claude_est_of(tools: &[Value]) -> u64 {
    let minimal = claude::features(claude::MINIMAL_TOOL);
    let est = claude::RECORDED_MINIMAL_TOOL
        + claude::CURRENT.tokens(&(definition_features(tools) - minimal));
    est.round().max(0.0) as u64
}

/// The median of `v` (NaN for none).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub rows: Vec<CountRow>,
    /// The tool-use prompt fitted on the set (the median of recorded less the block's tokens).
    pub tool_prompt: f64,
    /// The committed one, which the mock bills.
    pub committed_tool_prompt: f64,
    pub mape_pct: f64,
    pub worst_pct: f64,
    pub loo_mape_pct: f64,
    pub loo_worst_pct: f64,
    pub claude_est_mape_pct: f64,
    pub before_mape_pct: f64,
    pub renderings: Vec<RenderingFit>,
}

/// Read a recorded set.
pub fn load(dir: &Path) -> Result<Vec<Recorded>> {
    let csv_path = dir.join("counts.csv");
    let text = crate::input::read_text(&csv_path, crate::input::SMALL)?;
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| Error::input(format!("{}: {e}", csv_path.display())))?
        .clone();
    let col = |name: &str| {
        headers.iter().position(|h| h == name).ok_or_else(|| {
            Error::input(format!(
                "{}: no `{name}` column (needs server, model, claude_tools_delta)",
                csv_path.display()
            ))
        })
    };
    let (c_server, c_model, c_delta) = (col("server")?, col("model")?, col("claude_tools_delta")?);
    let mut out = Vec::new();
    for (i, rec) in reader.records().enumerate() {
        let rec = rec.map_err(|e| Error::input(format!("{}: {e}", csv_path.display())))?;
        if out.len() >= MAX_SERVERS {
            return Err(Error::input(format!(
                "{}: more than {MAX_SERVERS} servers",
                csv_path.display()
            )));
        }
        let field = |c: usize| rec.get(c).unwrap_or("").trim().to_string();
        let server = field(c_server);
        if server.is_empty()
            || !server
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || "-_.".contains(ch))
            || server.starts_with('.')
        {
            return Err(Error::input(format!(
                "{} row {}: server `{server}` is not a plain file name",
                csv_path.display(),
                i + 2
            )));
        }
        let recorded: u64 = field(c_delta).parse().map_err(|_| {
            Error::input(format!(
                "{} row {}: claude_tools_delta `{}` is not a whole number",
                csv_path.display(),
                i + 2,
                field(c_delta)
            ))
        })?;
        if recorded == 0 || recorded > MAX_DELTA {
            return Err(Error::input(format!(
                "{} row {}: claude_tools_delta {recorded} is not a tools delta (1 to {MAX_DELTA})",
                csv_path.display(),
                i + 2
            )));
        }
        let model = field(c_model);
        let claude_card = crate::pricing::PriceCard::lookup(&model)
            .is_some_and(|c| c.tokenizer().claude_family().is_some());
        if !claude_card {
            return Err(Error::input(format!(
                "{} row {}: model `{model}` is not a Claude model toolcost prices (the estimate is made on the recorded model's own card)",
                csv_path.display(),
                i + 2
            )));
        }
        let path = dir.join(format!("{server}.tools.json"));
        let bytes = crate::input::read(&path, MAX_CAPTURE_BYTES)?;
        let capture: Value = serde_json::from_slice(&bytes).map_err(|e| {
            Error::input(format!(
                "{}: {}",
                path.display(),
                crate::json::why_unreadable(&e)
            ))
        })?;
        let listed = capture
            .get("tools")
            .or_else(|| capture.pointer("/result/tools"))
            .and_then(Value::as_array)
            .ok_or_else(|| Error::input(format!("{}: no `tools` array", path.display())))?;
        if out.iter().any(|r: &Recorded| r.server == server) {
            return Err(Error::input(format!(
                "{} row {}: server `{server}` is on an earlier row too: one count per server",
                csv_path.display(),
                i + 2
            )));
        }
        let tools: Vec<Value> = listed.iter().filter_map(project).collect();
        if tools.is_empty() || tools.len() < listed.len() {
            return Err(Error::input(format!(
                "{}: {} of its {} tools have a name; a tools delta of a capture without (named) tools is not a count of its tools",
                path.display(),
                tools.len(),
                listed.len()
            )));
        }
        out.push(Recorded {
            server,
            model,
            recorded,
            tools,
        });
    }
    if out.is_empty() {
        return Err(Error::input(format!(
            "{}: no servers listed",
            csv_path.display()
        )));
    }
    Ok(out)
}

/// A listed tool as Anthropic's API takes it: `{name, description, input_schema}`, with an
/// absent description as "" and an absent schema as the empty object schema; a tool without a
/// name is dropped (as the recording did).
pub fn project(t: &Value) -> Option<Value> {
    let name = t.get("name")?.as_str().filter(|n| !n.is_empty())?;
    Some(json!({
        "name": name,
        "description": t.get("description").and_then(Value::as_str).unwrap_or(""),
        "input_schema": t.get("inputSchema").cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
    }))
}

/// The mock's `count_tokens` answer for a "." message, with `tools` or without.
pub fn count_tokens(model: &str, tools: Option<&[Value]>) -> Result<u64> {
    let mut body = json!({"model": model, "messages": [{"role": "user", "content": "."}]});
    if let Some(t) = tools {
        body["tools"] = Value::Array(t.to_vec());
    }
    let req = Request::new(Format::AnthropicMessages, body);
    let (_, _, usage) = Mock::default()
        .bill(&req, &When::default(), false)
        .map_err(Error::input)?;
    Ok(usage.total_input())
}

/// The features of a server's definitions as Anthropic bills them: each definition's compact
/// JSON, summed.
fn definition_features(tools: &[Value]) -> Features {
    let mut f = Features::default();
    for t in tools {
        f += claude::features(&crate::json::compact(t));
    }
    f
}

fn pct(estimate: f64, recorded: f64) -> f64 {
    100.0 * (estimate - recorded) / recorded
}

/// Compare the estimate with every recorded count, fit the tool-use prompt, and leave each
/// server out of the fit in turn; `held` is scored with the renderings tried.
pub fn compare(set: &[Recorded], held: &[Recorded]) -> Result<Comparison> {
    let measured = set.iter().map(measure).collect::<Result<Vec<_>>>()?;
    let committed = crate::billing::render::CLAUDE_5_TOOL_PROMPT;
    // What each delta holds beyond the committed prompt is the block's tokens: recorded less
    // that is each server's own reading of the prompt.
    let own: Vec<f64> = measured
        .iter()
        .map(|m| m.recorded as f64 - (m.estimate as f64 - committed))
        .collect();
    let mut rows = Vec::new();
    for (i, m) in measured.into_iter().enumerate() {
        let rest: Vec<f64> = (0..own.len()).filter(|&j| j != i).map(|j| own[j]).collect();
        let loo = m.estimate as f64 - committed + median(rest);
        rows.push(CountRow {
            loo_estimate: loo.round().max(0.0) as u64,
            loo_error_pct: pct(loo.round(), m.recorded as f64),
            server: m.server,
            tools: m.tools,
            model: m.model,
            recorded: m.recorded,
            estimate: m.estimate,
            error_pct: m.error_pct,
            claude_est: m.claude_est,
            claude_est_error_pct: m.claude_est_error_pct,
            before: m.before,
            before_error_pct: m.before_error_pct,
        });
    }
    let stat = |f: fn(&CountRow) -> f64| mape_worst(rows.iter().map(f));
    let (mape, worst) = stat(|r| r.error_pct);
    let (loo_mape, loo_worst) = stat(|r| r.loo_error_pct);
    let (est_mape, _) = stat(|r| r.claude_est_error_pct);
    let (before_mape, _) = stat(|r| r.before_error_pct);
    Ok(Comparison {
        rows,
        tool_prompt: median(own),
        committed_tool_prompt: committed,
        mape_pct: mape,
        worst_pct: worst,
        loo_mape_pct: loo_mape,
        loo_worst_pct: loo_worst,
        claude_est_mape_pct: est_mape,
        before_mape_pct: before_mape,
        renderings: renderings(set, held),
    })
}

/// The report's Markdown: the texts, the tools deltas, the renderings tried, the held-out set.
pub fn markdown(
    c: &Comparison,
    set_name: &str,
    held: &HeldOut,
    held_name: &str,
    texts: Option<&[TextRow]>,
) -> String {
    use crate::report::Align::{Left, Right};
    let mut out = String::new();
    out.push_str("# Claude's recorded token counts beside toolcost's\n\n");
    out.push_str(
        "toolcost counts Claude's tokens with an exact offline tokenizer per family (claude-v3, \
claude-v4.7, claude-v5; the vocabulary of ctok 1.3.0, the rules written here). Figures it counts \
are labelled `estimated:claude-<family>`; the one fitted constant, the tool-use prompt, is marked \
below where a figure depends on it.\n\n## Plain text\n\n",
    );
    match texts {
        Some(rows) => {
            out.push_str(
                "Each document sent alone as one user message to `count_tokens` on the model named \
(recorded) against toolcost's count of the same request (estimated: the tokenizer, and the message \
frame measured on these records); `before` is the estimator toolcost had before (claude-est, or \
cl100k x 1.2319 on v3).\n\n",
            );
            let cols = [
                ("set", Left),
                ("model", Left),
                ("tokenizer", Left),
                ("documents", Right),
                ("exact", Right),
                ("mean error", Right),
                ("worst", Right),
                ("before", Right),
            ];
            out.push_str(&crate::report::markdown::table(
                &cols,
                rows.iter().map(|r| {
                    vec![
                        r.set.clone(),
                        r.model.clone(),
                        r.tokenizer.clone(),
                        r.documents.to_string(),
                        format!("{} ({:.2}%)", r.exact, r.exact_pct),
                        format!("{:.3}%", r.mape_pct),
                        format!("{} tokens", r.worst_tokens),
                        format!("{:.2}%", r.before_mape_pct),
                    ]
                }),
            ));
        }
        None => out.push_str("No recorded text set was found (`--texts DIR`).\n"),
    }
    out.push_str(&format!(
        "\n## Tool definitions\n\nRecorded set: `{set_name}`. Each row is what Claude's own \
`count_tokens` said a server's tools add to a request of one \".\" user message (recorded), and \
what toolcost's mock `count_tokens` answers for the same two bodies: the tools block counted \
exactly, plus a tool-use prompt of {:.0} tokens (calibrated: fitted to this set, so the in-sample \
column agrees with it by construction; leave-one-out fits it without each server in turn). \
`claude-est` is the four-weight estimator toolcost billed Claude with before (calibrated to this \
set); `before` is o200k with the 4.6 family's tool prompt (estimated:o200k).\n\n",
        c.committed_tool_prompt
    ));
    let mut columns = HELD_COLUMNS.to_vec();
    columns.splice(5..5, [("leave-one-out", Right), ("error", Right)]);
    let body = c.rows.iter().map(|r| {
        let mut cells = HeldOutRow::from(r).cells();
        cells.splice(
            5..5,
            [
                crate::report::thousands(r.loo_estimate),
                format!("{:+.2}%", r.loo_error_pct),
            ],
        );
        cells
    });
    out.push_str(&crate::report::markdown::table(&columns, body));
    out.push_str(&format!(
        "\nIn sample: MAPE {:.2}%, worst {:.2}%. Leave-one-out: MAPE {:.2}%, worst {:.2}%. \
claude-est: MAPE {:.2}%. Before: MAPE {:.1}% (derived). The prompt fitted on this set: {:.1} \
(committed: {:.0}).\n",
        c.mape_pct,
        c.worst_pct,
        c.loo_mape_pct,
        c.loo_worst_pct,
        c.claude_est_mape_pct,
        c.before_mape_pct,
        c.tool_prompt,
        c.committed_tool_prompt
    ));
    out.push_str(
        "\n## The renderings tried\n\nAnthropic does not publish how `tools` enter the prompt. \
Each candidate below is the whole tool list rendered one way and counted with the exact tokenizer; \
its one constant is the median over the fit set of recorded less rendered. A rendering that is \
right leaves the same residual on every server.\n\n",
    );
    let cols = [
        ("rendering", Left),
        ("constant", Right),
        ("residuals", Right),
        ("leave-one-out MAPE", Right),
        ("held-out MAPE", Right),
    ];
    out.push_str(&crate::report::markdown::table(
        &cols,
        c.renderings.iter().map(|r| {
            vec![
                r.rendering.to_string(),
                format!("{:.0}", r.constant),
                format!("{} to {}", r.residual_min, r.residual_max),
                format!("{:.2}%", r.loo_mape_pct),
                format!("{:.2}%", r.heldout_mape_pct),
            ]
        }),
    ));
    out.push_str(&format!(
        "\n## Held out: `{held_name}`\n\nServers whose counts were recorded the same way \
(claude-opus-5, 2026-09-05) and kept out of the fit of the tool-use prompt.\n\n"
    ));
    out.push_str(&crate::report::markdown::table(
        &HELD_COLUMNS,
        held.rows.iter().map(HeldOutRow::cells),
    ));
    out.push_str(&format!(
        "\nOut of sample: MAPE {:.2}%, worst {:.2}%.\n",
        held.mape_pct, held.worst_pct
    ));
    out
}
