//! gpt-oss's harmony format (openai-harmony 0.0.8): `<|start|>{role}<|message|>{text}<|end|>`
//! messages; a system message naming the model, its knowledge cutoff, the date, the reasoning
//! effort and the channels; the request's system text and the tools in a developer message
//! ("# Instructions", then the tools as a TypeScript namespace, [`super::typescript::harmony`]);
//! a call `<|start|>assistant to=functions.{name}<|channel|>commentary <|constrain|>json
//! <|message|>{arguments}<|call|>`, its result `<|start|>functions.{name} to=assistant
//! <|channel|>commentary<|message|>{content}<|end|>`; the generation prompt
//! `<|start|>assistant`. An assistant turn's reasoning sent back is an analysis message before
//! its text and calls, kept only where no final message follows it (harmony drops reasoning
//! before the last final answer, and keeps it in a tool loop: checked against openai-harmony).
//!
//! The date and reasoning effort are assumed ("medium", a date of the same shape as any).
//! Groq's gpt-oss-120b billed 12 tokens more than this on the recorded request of an
//! open-source suite (159 against 147): a provider's own prompt, not in this estimate.

use super::conversation::{Conversation, Role};
use super::{typescript, Prompt};
use serde_json::Value;

const SPECIALS: &[&str] = &[
    "<|start|>",
    "<|end|>",
    "<|message|>",
    "<|channel|>",
    "<|constrain|>",
    "<|call|>",
    "<|return|>",
];

const SYSTEM: &str = "You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06\nCurrent date: 2026-01-01\n\nReasoning: medium\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message.";

pub fn render(c: &Conversation, tools: &[Value], p: &mut Prompt) {
    p.spelled("<|start|>system<|message|>", SPECIALS);
    p.frame(SYSTEM);
    if !tools.is_empty() {
        p.frame("\nCalls to these tools must go to the commentary channel: 'functions'.");
    }
    p.spelled("<|end|>", SPECIALS);
    if !c.system.is_empty() || !tools.is_empty() {
        p.spelled("<|start|>developer<|message|>", SPECIALS);
        if !c.system.is_empty() {
            p.frame("# Instructions\n\n");
            p.system(&c.system);
            if !tools.is_empty() {
                p.frame("\n\n");
            }
        }
        if !tools.is_empty() {
            p.tools(&typescript::harmony(tools));
        }
        p.spelled("<|end|>", SPECIALS);
    }
    // The last assistant turn with text: a final message, before which reasoning is dropped.
    let last_final = c
        .messages
        .iter()
        .rposition(|m| m.role == Role::Assistant && !m.text.is_empty());
    for (i, m) in c.messages.iter().enumerate() {
        p.message_starts(c, i);
        match m.role {
            Role::User | Role::System => {
                let role = if m.role == Role::User {
                    "user"
                } else {
                    "developer"
                };
                p.spelled(&format!("<|start|>{role}<|message|>"), SPECIALS);
                p.message(&m.text);
                p.spelled("<|end|>", SPECIALS);
            }
            Role::Assistant => {
                if !m.reasoning.is_empty() && last_final.is_none_or(|f| f < i) {
                    p.spelled("<|start|>assistant<|channel|>analysis<|message|>", SPECIALS);
                    p.message(&m.reasoning);
                    p.spelled("<|end|>", SPECIALS);
                }
                if !m.text.is_empty() {
                    p.spelled("<|start|>assistant<|channel|>final<|message|>", SPECIALS);
                    p.message(&m.text);
                    p.spelled("<|end|>", SPECIALS);
                }
                for call in &m.calls {
                    p.spelled("<|start|>assistant to=functions.", SPECIALS);
                    p.message(&call.name);
                    p.spelled(
                        "<|channel|>commentary <|constrain|>json<|message|>",
                        SPECIALS,
                    );
                    p.message(&call.arguments_json());
                    p.spelled("<|call|>", SPECIALS);
                }
            }
            Role::Tool => {
                p.spelled("<|start|>functions.", SPECIALS);
                p.message(&m.tool);
                p.spelled(" to=assistant<|channel|>commentary<|message|>", SPECIALS);
                p.message(&m.text);
                p.spelled("<|end|>", SPECIALS);
            }
        }
    }
    p.spelled("<|start|>assistant", SPECIALS);
}
