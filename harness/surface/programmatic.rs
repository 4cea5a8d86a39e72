//! `programmatic`: Anthropic's programmatic tool calling, the code-mode analogue the provider
//! runs. `tools` holds the client's built-ins, the code-execution tool and every catalogue
//! definition marked `allowed_callers: ["code_execution_20260120"]`, so the model sees every
//! definition in full but calls them only from the code it writes. The provider runs the code;
//! each tool call it makes comes back to the client as a `tool_use` block with a `caller`, the
//! client answers with `tool_result` blocks only, and the code goes on. The results go to the
//! code, not into the model's context: only the program's output does.
//!
//! Rules (Anthropic's programmatic tool calling docs, read 2026-12-02 through the stored docs
//! corpus and a 2025-11 copy of the page; anthropic-sdk-python 2.14.0 `BetaToolParam`,
//! `BetaToolUseBlock.caller`): while calls from code are pending the reply holds `tool_result`
//! blocks only; tools with `strict`, a forced `tool_choice` and `disable_parallel_tool_use`
//! do not combine with it. Billing as the mock models it: the calls made from code and their
//! results are not input or output tokens (the docs: they do not enter Claude's context); the
//! code the model writes is output; the program's output is input of the round that reads it;
//! a round that only carries results back to the running code bills the rest of the request as
//! any request (assumed: the docs do not say what such a round bills). Code execution's own
//! charge (container hours: 1,550 free a month, then $0.05 an hour, a 5-minute minimum, from
//! third-party copies of the pricing page) is not added: assumed within the free hours. The
//! code-execution tool is billed as its definition's JSON (assumed: its system prompt is not
//! published). Anthropic Messages only.

use super::play::{self, Local, Move, Output, Phase, Player, Read, Turn};
use super::{Built, Context, Endpoint, Surface};
use crate::resolve::Method;
use crate::wire::Format;
use serde_json::{json, Value};

/// The code-execution tool version whose code calls the tools (REPL state kept across requests
/// that reuse the container).
pub const CODE_EXECUTION: &str = "code_execution_20260120";

pub struct Programmatic;

impl Surface for Programmatic {
    fn name(&self) -> &'static str {
        "programmatic"
    }
    fn about(&self) -> &'static str {
        "every definition callable only from the provider's code-execution tool; results stay out of the context (Anthropic Messages only)"
    }
    fn in_all(&self) -> bool {
        true
    }
    fn lacks(&self, format: Format) -> Option<String> {
        super::only_on(
            self.name(),
            Format::AnthropicMessages,
            "allowed_callers with the code execution tool",
            format,
        )
    }
    fn headers(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    fn colour(&self) -> [u8; 3] {
        [128, 0, 0]
    }
    fn build(&self, ctx: &Context) -> Built {
        let mut tools = vec![json!({"type": CODE_EXECUTION, "name": "code_execution"}).into()];
        let defs = ctx.catalogue_definitions(false);
        let n = defs.len();
        tools.extend(defs.into_iter().map(|mut d| {
            d.set("allowed_callers", json!([CODE_EXECUTION]));
            d
        }));
        Built {
            request: ctx.request(None, tools),
            definitions_in_context: n,
            definitions_on_wire: n,
        }
    }
    fn endpoint(&self) -> Option<Endpoint> {
        None
    }
    fn calls_at(&self) -> Option<&'static str> {
        // A call from code is a call of the per-row tool: it goes to the per-row endpoint.
        Some(super::per_row_mcp::ENDPOINT.path)
    }
    fn discovery(&self) -> Option<(Method, usize)> {
        None
    }
    fn player(&self, _ctx: &Context) -> Box<dyn Player> {
        Box::new(FromCode { started: false })
    }
}

/// The model writes one program that makes every call of the task; the provider runs it and
/// the client answers each round's calls until it ends.
struct FromCode {
    started: bool,
}

impl Player for FromCode {
    fn opening(&self) -> Phase {
        Phase::Call(0)
    }
    fn next(&mut self, phase: Phase, t: &Turn) -> Move {
        let from = match phase {
            Phase::Call(i) => i,
            Phase::Discover(_) | Phase::Contract | Phase::Final => 0,
        };
        // A loop calls one at a time; `gather` (the parallel policy) makes every remaining
        // call at once, so the provider pauses the program once for all of them.
        let range = match t.batch {
            0 | 1 => t.round_calls(from),
            _ => from.min(t.calls.len())..t.calls.len(),
        };
        let calls = range
            .map(|j| Move::Tool {
                name: t.tool_name(t.key),
                input: t.calls[j].clone(),
            })
            .collect();
        let code = (!std::mem::replace(&mut self.started, true)).then(|| program(t));
        Move::Program { code, calls }
    }
    fn local(&mut self, _name: &str, _input: &Value, _t: &Turn) -> Option<Local> {
        None
    }
    fn refuse(&self, _name: &str, _t: &Turn) -> Option<String> {
        None
    }
    fn read(&mut self, phase: Phase, out: Output, t: &Turn) -> Read {
        match out {
            Output::Mcp { structured, .. } => play::one_result(phase, structured, t),
            Output::Shell(_) => Read::Nothing,
        }
    }
    fn closing(&self, results: &[Value]) -> Option<Value> {
        self.started
            .then(|| json!({"program_output": program_output(results)}))
    }
}

/// The program a model writes for the task: each call of the row's tool (in a loop, or all at
/// once when the model calls in parallel), and what it needs printed. A tool called from code
/// returns its result as text, which the program parses.
fn program(t: &Turn) -> String {
    let tool = t.tool_name(t.key);
    let args = crate::json::compact(&Value::Array(t.calls.to_vec()));
    let calls = match t.batch {
        0 | 1 => format!(
            "results = []\nfor a in args:\n    results.append(json.loads(await {tool}(**a)))"
        ),
        _ => format!(
            "results = [json.loads(r) for r in await asyncio.gather(*[{tool}(**a) for a in args])]"
        ),
    };
    format!(
        "import asyncio, json\nargs = json.loads(r\'\'\'{args}\'\'\')\n{calls}\ntotal = sum(r.get('total_cents', 0) for r in results if isinstance(r, dict))\nprint(json.dumps({{'calls': len(results), 'total_cents': total, 'last': results[-1]}}))"
    )
}

/// What the program prints: how many calls it made, the sum of any totals, and the last result.
fn program_output(results: &[Value]) -> String {
    let total: u64 = results
        .iter()
        .filter_map(|r| {
            r["result"]["total_cents"]
                .as_u64()
                .or_else(|| r["total_cents"].as_u64())
        })
        .sum();
    crate::json::compact(&json!({"calls": results.len(), "total_cents": total,
        "last": results.last().cloned().unwrap_or(Value::Null)}))
}
