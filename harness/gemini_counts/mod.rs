//! Gemini's recorded token counts beside toolcost's Gemini estimate: each recorded request
//! (fixtures/gemini-counts, gathered from Google's docs, samples and notebook outputs, with
//! their sources) is rebuilt as a Gemini body and billed as the mock bills one (the Gemini
//! render model, the Gemma 3 vocabulary). Nothing is fitted to these figures: the error is the
//! estimate's, out of sample.

pub mod requests;

use crate::billing::render::gemini::Gemini;
use crate::billing::{billed_input, RenderModel};
use crate::error::{Error, Result};
use crate::report::{Column, Tabular};
use crate::tokens::Tokenizer;
use crate::wire::{Format, Request};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The recorded set shipped with toolcost.
pub const EMBEDDED: &str = include_str!("../../fixtures/gemini-counts/recorded.json");

/// One recorded request, as the fixture writes it.
#[derive(Debug, Clone, Deserialize)]
struct Recorded {
    id: String,
    model: String,
    /// `developer` (the Gemini Developer API, which toolcost's Gemini format speaks) or
    /// `vertex` (Vertex AI, which bills no role tokens in these records).
    api: String,
    total_tokens: u64,
    system: Option<String>,
    system_role: Option<String>,
    contents: Vec<Value>,
    function_declarations: Option<Vec<Value>>,
    source: String,
}

/// A recorded count beside the estimate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub id: String,
    pub model: String,
    pub api: String,
    /// What the request carries besides text: `system`, `tools`, `turns` (several contents).
    pub carries: String,
    /// Google's count (`recorded`).
    pub recorded: u64,
    /// toolcost's estimate (`estimated:gemma3`).
    pub estimate: u64,
    /// (estimate - recorded) / recorded, in per cent (`derived`).
    pub error_pct: f64,
    pub source: String,
}

impl Tabular for Row {
    const COLUMNS: &'static [Column] = &[Column::field("error_pct").places(1)];
    const BRIEF: &'static [&'static str] = &[
        "id",
        "model",
        "api",
        "carries",
        "recorded",
        "estimate",
        "error_pct",
    ];
}

/// Summary of the requests to one API: how many, how many estimated exactly, the mean absolute
/// error and the worst, and the same error over the requests with tools.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub api: String,
    pub requests: usize,
    pub exact: usize,
    pub mape_pct: f64,
    pub worst_pct: f64,
    pub with_tools: usize,
    pub tools_mape_pct: f64,
}

/// The Gemini body of a recorded request: contents (a `null` role left out, as the SDK that
/// sent it did), the system instruction and the declarations.
fn body(r: &Recorded) -> Value {
    let contents: Vec<Value> = r
        .contents
        .iter()
        .map(|c| {
            let mut c = c.clone();
            if let Some(o) = c.as_object_mut() {
                if o.get("role").is_some_and(Value::is_null) {
                    o.remove("role");
                }
            }
            c
        })
        .collect();
    let mut b = json!({"contents": contents});
    if let Some(s) = &r.system {
        let mut si = json!({"parts": [{"text": s}]});
        if let Some(role) = &r.system_role {
            si["role"] = json!(role);
        }
        b["systemInstruction"] = si;
    }
    if let Some(d) = &r.function_declarations {
        b["tools"] = json!([{"functionDeclarations": d}]);
    }
    b
}

/// Every recorded request of `text` (the fixture's JSON) beside the estimate.
pub fn check(text: &str) -> Result<Vec<Row>> {
    Tokenizer::Gemma3.ready()?;
    let set: Vec<Recorded> = serde_json::from_str(text)
        .map_err(|e| Error::input(format!("recorded Gemini counts: {e}")))?;
    let mut ids = std::collections::HashSet::new();
    for r in &set {
        sound(&r.id, &r.model, &r.api, r.total_tokens)?;
        if !ids.insert(r.id.as_str()) {
            return Err(Error::input(format!(
                "recorded Gemini counts: the id `{}` is on two rows",
                r.id
            )));
        }
    }
    set.iter()
        .map(|r| {
            let bytes = serde_json::to_vec(&body(r)).expect("JSON serialises");
            let req = Request::parse_routed(Format::Gemini, &bytes, Some(&r.model))
                .map_err(|e| Error::input(format!("{}: {e}", r.id)))?;
            let render = RenderModel::Gemini(Gemini::of_model(&r.model, r.api == "vertex"));
            let estimate = billed_input(&req, render, Tokenizer::Gemma3).input_tokens;
            let mut carries = Vec::new();
            if r.system.is_some() {
                carries.push("system");
            }
            if r.function_declarations.is_some() {
                carries.push("tools");
            }
            if r.contents.len() > 1 {
                carries.push("turns");
            }
            Ok(Row {
                id: r.id.clone(),
                model: r.model.clone(),
                api: r.api.clone(),
                carries: match carries.is_empty() {
                    true => "text".into(),
                    false => carries.join("+"),
                },
                recorded: r.total_tokens,
                estimate,
                error_pct: (estimate as f64 - r.total_tokens as f64) / r.total_tokens as f64
                    * 100.0,
                source: r.source.clone(),
            })
        })
        .collect()
}

/// Refuse a recorded row that is not a count of a Gemini request: a count of zero or past any
/// request's size, a model that is not Gemini's, an API other than the two.
pub(crate) fn sound(id: &str, model: &str, api: &str, tokens: u64) -> Result<()> {
    let what = |why: String| Err(Error::input(format!("recorded Gemini count `{id}`: {why}")));
    if tokens == 0 || tokens > 100_000_000 {
        return what(format!("{tokens} tokens is not a count of a request"));
    }
    let bare = model.rsplit('/').next().unwrap_or(model);
    if !(bare.starts_with("gemini-") || bare.starts_with("gemma-")) {
        return what(format!("`{model}` is not a Gemini model"));
    }
    if !matches!(api, "developer" | "vertex") {
        return what(format!(
            "the API `{api}` is neither `developer` (the Gemini Developer API) nor `vertex`"
        ));
    }
    Ok(())
}

/// The summary of the rows of one API.
pub fn summary(rows: &[Row], api: &str) -> Summary {
    let mape = |rs: &[&Row]| match rs.is_empty() {
        true => 0.0,
        false => rs.iter().map(|r| r.error_pct.abs()).sum::<f64>() / rs.len() as f64,
    };
    let all: Vec<&Row> = rows.iter().filter(|r| r.api == api).collect();
    let tools: Vec<&Row> = all
        .iter()
        .copied()
        .filter(|r| r.carries.contains("tools"))
        .collect();
    Summary {
        api: api.to_string(),
        requests: all.len(),
        exact: all.iter().filter(|r| r.recorded == r.estimate).count(),
        mape_pct: mape(&all),
        worst_pct: all.iter().map(|r| r.error_pct.abs()).fold(0.0, f64::max),
        with_tools: tools.len(),
        tools_mape_pct: mape(&tools),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row that is not a count of a Gemini request is refused, not averaged in.
    #[test]
    fn wrong_rows_are_refused() {
        assert!(sound("a", "gemini-2.5-flash", "developer", 12).is_ok());
        for (model, api, tokens, why) in [
            ("gemini-2.5-flash", "developer", 0, "not a count"),
            (
                "gemini-2.5-flash",
                "developer",
                1_000_000_000,
                "not a count",
            ),
            ("gpt-4o", "developer", 5, "not a Gemini model"),
            ("gemini-2.5-flash", "bedrock", 5, "neither"),
        ] {
            let e = sound("a", model, api, tokens).unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
        let dup = r#"[{"id": "x", "model": "gemini-2.5-flash", "api": "developer", "total_tokens": 3,
            "system": null, "system_role": null, "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "function_declarations": null, "source": "s"}]"#;
        let twice = format!("[{}, {}]", &dup[1..dup.len() - 1], &dup[1..dup.len() - 1]);
        if Tokenizer::Gemma3.ready().is_ok() {
            assert!(check(&twice).unwrap_err().to_string().contains("two rows"));
        }
    }
}
