//! Kimi's chat templates (Moonshot AI). Every turn is `<|im_system|>` / `<|im_user|>` /
//! `<|im_assistant|>`, its name, `<|im_middle|>`, its text, `<|im_end|>`; tools are declared first
//! in a `tool_declare` turn; calls sit in `<|tool_calls_section_begin|>` ... `_end|>` with a
//! `<|tool_call_begin|>` id `<|tool_call_argument_begin|>` arguments `<|tool_call_end|>` each; a
//! result is a system turn `## Return of {id}\n{content}`.
//!
//! - K2 (Kimi-K2-Instruct, 2025-07 and 0905): tools as JSON, deep-sorted with Python's spaced
//!   separators (the form Groq's kimi-k2-instruct bills: 170 predicted against 171 recorded on
//!   a request with two tools), the default system turn when the request has none, call ids
//!   `functions.{name}:{index}`.
//! - K2-Thinking: the K2.5 turns below, with the tools as JSON (spaced, as sent) and K2's
//!   default system turn.
//! - K2.5, K2.6, K2.7 Code: tools as TypeScript ([`super::typescript::kimi`], compact JSON where
//!   the writer refuses a schema), no default system turn, ids as sent, `<think></think>` before
//!   an earlier assistant turn's text and `<think>{reasoning}</think>` after the last plain
//!   assistant turn. The generation prompt is written without its `<think>` prefill: Moonshot's
//!   API counted 20 for a request the template with it writes in 21 (recorded by an open-source
//!   suite, 2026).
//!
//! Special tokens: each `<|...|>` above and `<think>`, `</think>` are one token each.

use super::conversation::{Conversation, Role};
use super::{pyjson, typescript, Prompt};
use serde_json::Value;

const SPECIALS: &[&str] = &[
    "<|im_system|>",
    "<|im_user|>",
    "<|im_assistant|>",
    "<|im_middle|>",
    "<|im_end|>",
    "<|tool_calls_section_begin|>",
    "<|tool_calls_section_end|>",
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
    "<think>",
    "</think>",
];

const DEFAULT_SYSTEM: &str = "You are Kimi, an AI assistant created by Moonshot AI.";

/// A turn's opening: its role marker, its name, `<|im_middle|>`.
fn open(p: &mut Prompt, role: &str, name: &str) {
    let marker = match role {
        "user" => "<|im_user|>",
        "assistant" => "<|im_assistant|>",
        _ => "<|im_system|>",
    };
    p.spelled(marker, SPECIALS);
    p.frame(name);
    p.spelled("<|im_middle|>", SPECIALS);
}

fn end(p: &mut Prompt) {
    p.spelled("<|im_end|>", SPECIALS);
}

pub fn k2(c: &Conversation, tools: &[Value], p: &mut Prompt) {
    let sorted: Vec<Value> = tools.iter().map(pyjson::deep_sorted).collect();
    declared_with_default_system(c, &sorted, p);
    messages(c, p, false);
}

/// K2's opening, which K2-Thinking shares: the tools as spaced JSON in a `tool_declare` turn,
/// then the request's system text or Moonshot's default.
fn declared_with_default_system(c: &Conversation, tools: &[Value], p: &mut Prompt) {
    if !tools.is_empty() {
        open(p, "system", "tool_declare");
        p.tools(&pyjson::dumps(
            &Value::Array(tools.to_vec()),
            pyjson::SPACED,
        ));
        end(p);
    }
    open(p, "system", "system");
    match c.system.is_empty() {
        true => p.frame(DEFAULT_SYSTEM),
        false => p.system(&c.system),
    }
    end(p);
}

/// K2-Thinking: the K2.5 turns (names, think blocks, ids as sent) with the tools as the
/// template's `tojson` writes them (spaced, unsorted, not ASCII-escaped) and K2's default system
/// turn when the request has none.
pub fn k2_thinking(c: &Conversation, tools: &[Value], p: &mut Prompt) {
    declared_with_default_system(c, tools, p);
    messages(c, p, true);
}

/// How the K2.5+ turns' `tool_declare` turn writes the tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Declare {
    /// The template's TypeScript declarations (compact, deep-sorted JSON where the writer
    /// refuses a schema), as Moonshot's API and vLLM or SGLang serving write them.
    TypeScript,
    /// The tools as sent, through Python's `json.dumps` with its defaults (`", "` and `": "`,
    /// `ensure_ascii`): what a route that hands the template plain JSON text writes.
    PythonJson,
}

pub fn ts(c: &Conversation, tools: &[Value], declare: Declare, p: &mut Prompt) {
    if !tools.is_empty() {
        open(p, "system", "tool_declare");
        let text = match declare {
            Declare::TypeScript => typescript::kimi(tools).unwrap_or_else(|| {
                let sorted: Vec<Value> = tools.iter().map(pyjson::deep_sorted).collect();
                pyjson::dumps(&Value::Array(sorted), pyjson::COMPACT)
            }),
            Declare::PythonJson => {
                pyjson::dumps(&Value::Array(tools.to_vec()), pyjson::PYTHON_DEFAULT)
            }
        };
        p.tools(&text);
        end(p);
    }
    if !c.system.is_empty() {
        open(p, "system", "system");
        p.system(&c.system);
        end(p);
    }
    messages(c, p, true);
}

fn messages(c: &Conversation, p: &mut Prompt, thinking: bool) {
    // K2.5+: the turns after the last assistant turn without calls keep their reasoning.
    let last_plain = c
        .messages
        .iter()
        .rposition(|m| m.role == Role::Assistant && m.calls.is_empty());
    for (i, m) in c.messages.iter().enumerate() {
        p.message_starts(c, i);
        let role = match m.role {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
            Role::Tool => "tool",
        };
        let name = if thinking && !m.name.is_empty() {
            m.name.as_str()
        } else {
            role
        };
        open(p, role, name);
        match m.role {
            Role::Assistant => {
                if thinking {
                    p.spelled("<think>", SPECIALS);
                    if last_plain.is_none_or(|l| i > l) {
                        p.message(&m.reasoning);
                    }
                    p.spelled("</think>", SPECIALS);
                }
                p.message(&m.text);
                if !m.calls.is_empty() {
                    p.spelled("<|tool_calls_section_begin|>", SPECIALS);
                    for (k, call) in m.calls.iter().enumerate() {
                        p.spelled("<|tool_call_begin|>", SPECIALS);
                        match thinking {
                            true => p.frame(&call.id),
                            false => p.frame(&format!("functions.{}:{k}", call.name)),
                        }
                        p.spelled("<|tool_call_argument_begin|>", SPECIALS);
                        p.message(&call.arguments_json());
                        p.spelled("<|tool_call_end|>", SPECIALS);
                    }
                    p.spelled("<|tool_calls_section_end|>", SPECIALS);
                }
            }
            Role::Tool => {
                p.frame(&format!("## Return of {}\n", m.call_id));
                p.message(&m.text);
            }
            Role::User | Role::System => p.message(&m.text),
        }
        end(p);
    }
    // The generation prompt.
    open(p, "assistant", "assistant");
}
