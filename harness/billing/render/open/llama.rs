//! Llama's JSON tool format, tools in the first user message (the default of Meta's Llama 3.1
//! to 3.3 template, `tools_in_user_message`, and of vLLM's Llama 4 JSON template): each tool's
//! whole entry as JSON indented four spaces, after an instruction to answer with a JSON call;
//! a call is `{"name": ..., "parameters": ...}`, a result an `ipython` turn (its text as a JSON string).
//!
//! - Llama 3.x: `<|begin_of_text|>`, headers `<|start_header_id|>{role}<|end_header_id|>\n\n`,
//!   turns closed by `<|eot_id|>`; a system turn always, with "Environment: ipython" when tools
//!   are declared and the knowledge and (assumed) date lines; a string result is written as a
//!   JSON string (the template's `tojson` of an iterable).
//! - Llama 4: headers `<|header_start|>{role}<|header_end|>\n\n`, turns closed by `<|eot|>`, a
//!   result by `<|eom|>`; the system turn only with a system text or tools. Providers add their
//!   own prompt (Together billed 616 for one small tool where this writes about 130): an
//!   estimate, on o200k for want of Llama 4's vocabulary.

use super::conversation::{Conversation, Role};
use super::{pyjson, Prompt};
use serde_json::Value;

const SPECIALS: &[&str] = &[
    "<|begin_of_text|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|header_start|>",
    "<|header_end|>",
    "<|eot|>",
    "<|eom|>",
];

const INSTRUCTION: &str = "Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\nRespond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its value}.Do not use variables.\n\n";

pub fn render(c: &Conversation, tools: &[Value], llama4: bool, p: &mut Prompt) {
    let header = |role: &str| match llama4 {
        true => format!("<|header_start|>{role}<|header_end|>\n\n"),
        false => format!("<|start_header_id|>{role}<|end_header_id|>\n\n"),
    };
    let eot = if llama4 { "<|eot|>" } else { "<|eot_id|>" };
    p.spelled("<|begin_of_text|>", SPECIALS);
    if !llama4 || !tools.is_empty() || !c.system.is_empty() {
        p.spelled(&header("system"), SPECIALS);
        if !tools.is_empty() {
            p.frame("Environment: ipython\n");
        }
        if !llama4 {
            p.frame("Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n");
        }
        p.system(c.system.trim());
        p.spelled(eot, SPECIALS);
    }
    let first_user = c.messages.iter().position(|m| m.role == Role::User);
    for (i, m) in c.messages.iter().enumerate() {
        p.message_starts(c, i);
        match m.role {
            Role::User | Role::System => {
                let role = if m.role == Role::User {
                    "user"
                } else {
                    "system"
                };
                p.spelled(&header(role), SPECIALS);
                if Some(i) == first_user && !tools.is_empty() {
                    p.frame(INSTRUCTION);
                    for t in tools {
                        let style = pyjson::Style {
                            indent: Some(4),
                            ..pyjson::SPACED
                        };
                        p.tools(&pyjson::dumps(t, style));
                        p.frame("\n\n");
                    }
                }
                p.message(m.text.trim());
                p.spelled(eot, SPECIALS);
            }
            Role::Assistant => {
                p.spelled(&header("assistant"), SPECIALS);
                match m.calls.first() {
                    Some(call) => {
                        p.frame("{\"name\": \"");
                        p.message(&call.name);
                        p.frame("\", \"parameters\": ");
                        p.message(&pyjson::dumps(&call.arguments, pyjson::SPACED));
                        p.frame("}");
                    }
                    None => p.message(m.text.trim()),
                }
                p.spelled(eot, SPECIALS);
            }
            Role::Tool => {
                p.spelled(&header("ipython"), SPECIALS);
                // A string is iterable to Jinja: both templates write it as a JSON string.
                p.message(&pyjson::dumps(
                    &Value::String(m.text.clone()),
                    pyjson::SPACED,
                ));
                p.spelled(if llama4 { "<|eom|>" } else { eot }, SPECIALS);
            }
        }
    }
    p.spelled(&header("assistant"), SPECIALS);
}
