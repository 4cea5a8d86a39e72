//! Provider render models: from a request body to the input tokens a provider bills.
//!
//! - Anthropic: system, messages and every non-deferred tool's `{name, description,
//!   input_schema}`, plus the hidden tool-use system prompt once when any tool is present
//!   (per model family and `tool_choice`, FACTS section 3). Deferred tools are unbilled until a
//!   `tool_reference` in the messages expands them.
//! - OpenAI: the cookbook's `num_tokens_for_tools` walk over the `namespace functions` rendering
//!   (func_init, prop_init, prop_key, enum_init, enum_item, func_end), 3 tokens per message
//!   (or Responses input item) and its role's tokens, plus 3 to prime the reply. Deferred functions keep name and
//!   description billed (func_init plus `name:description`); a namespace with deferred members
//!   is billed the same way for its own name and description only. Definitions a Responses
//!   `tool_search_output` item loads are billed where the item appears, with the same walk
//!   (they are appended at the end of the context, so the cached prefix survives).
//! - Kimi: tool declarations rendered as one compact JSON array of
//!   `{"type":"function","function":{...}}`, plus system and message text.
//! - Gemini: the function declarations as one compact JSON array of
//!   `{"name","description","parameters"}`, plus the system instruction's and the contents'
//!   text with no framing: Gemini's recorded `countTokens` of a one-line prompt, and of that
//!   prompt with a system instruction, equal the Gemma 3 tokens of their texts alone
//!   (docs/notes/gemini.md). How Gemini renders declarations is not published: the array is
//!   assumed, and its recorded error is in docs/notes/gemini.md.

use super::{Part, Tokenizer};
use crate::wire::{self, Request, ToolEntry, ToolRef};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;

mod claude;
mod framed;
pub mod functions;
use framed::Framed;
mod text;
use super::claude_exact::Family;
use claude::exact_claude;
pub use claude::{overhead_label, CLAUDE_5_TOOL_PROMPT, CLAUDE_PER_MESSAGE};
use text::{calls_from_code, message_text_beside};
pub use text::{media_parts, message_text, system_text, MEDIA_NOT_COUNTED};

/// How a provider turns a request into billed input tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum RenderModel {
    /// Tool-use system prompt tokens for `tool_choice` auto/none and any/tool, and the
    /// tokens every request adds around its messages.
    Anthropic {
        family: &'static str,
        auto: f64,
        any: f64,
        framing: f64,
    },
    /// Cookbook constants (gpt-4o, and by assumption gpt-4.1 and gpt-5: func_init 7; gpt-4 /
    /// gpt-3.5: 10).
    Openai {
        func_init: i64,
    },
    Kimi,
    Gemini,
}

impl RenderModel {
    /// Parse `anthropic:<family>`, `openai:<model>`, `kimi` or `gemini`.
    pub fn parse(spec: &str) -> Option<RenderModel> {
        let (kind, arg) = spec.split_once(':').unwrap_or((spec, ""));
        match kind {
            "anthropic" => anthropic_family(arg),
            "openai" => Some(RenderModel::Openai {
                func_init: if arg.starts_with("gpt-4o")
                    || arg.starts_with("gpt-4.1")
                    || arg.starts_with("gpt-5")
                    || arg.is_empty()
                {
                    7
                } else {
                    10
                },
            }),
            "kimi" => Some(RenderModel::Kimi),
            "gemini" => Some(RenderModel::Gemini),
            _ => None,
        }
    }

    pub fn name(&self) -> String {
        match self {
            RenderModel::Anthropic { family, .. } => format!("anthropic:{family}"),
            RenderModel::Openai { func_init } => format!("openai(func_init={func_init})"),
            RenderModel::Kimi => "kimi".into(),
            RenderModel::Gemini => "gemini".into(),
        }
    }
}

/// Anthropic tool-use system prompt tokens (auto|none, any|tool) of the families Anthropic's
/// docs list, FACTS section 3. Their request framing is not published and is taken as 0
/// (assumed), as toolcost has always billed them.
pub const ANTHROPIC_OVERHEAD: &[(&str, u32, u32)] = &[
    ("claude-4", 346, 313),
    ("claude-4.5", 496, 588),
    ("claude-4.6", 497, 589),
    ("claude-haiku-3.5", 264, 340),
];

/// The family of Claude's current tokenizer (the 5.x models). Its tool prompt and framing are
/// the recorded claude-opus-5 probes less the fitted estimate of what they carry
/// ([`super::claude::current_tool_prompt`], [`super::claude::current_framing`]): calibrated.
/// For `tool_choice` any/tool the prompt is taken as the auto one plus the 92 tokens by which
/// the 4.6 family's two differ (assumed: no record for 5.x).
pub const CURRENT_CLAUDE_FAMILY: &str = "claude-5";

/// The render model of an Anthropic family, if toolcost knows it.
pub fn anthropic_family(family: &str) -> Option<RenderModel> {
    if family == CURRENT_CLAUDE_FAMILY {
        let auto = super::claude::current_tool_prompt();
        return Some(RenderModel::Anthropic {
            family: CURRENT_CLAUDE_FAMILY,
            auto,
            any: auto + 92.0,
            framing: super::claude::current_framing(),
        });
    }
    ANTHROPIC_OVERHEAD
        .iter()
        .find(|(f, _, _)| *f == family)
        .map(|&(family, auto, any)| RenderModel::Anthropic {
            family,
            auto: auto as f64,
            any: any as f64,
            framing: 0.0,
        })
}

/// Tokens Gemini bills for each Content (a turn, or the system instruction) that names its
/// role: recorded, not fitted. Google's JavaScript SDK sample prints `roleTokens: 1` beside a
/// count, and the cookbook's recorded counts of a two-turn history (10) and of it with a third
/// turn (17) are the Gemma 3 tokens of their texts plus one per turn with a role
/// (fixtures/gemini-counts; a Content without a role, as the older Python SDK sent a bare
/// string, adds nothing).
pub const GEMINI_PER_ROLE: f64 = 1.0;

/// Billed input tokens of one request, and where they come from.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Billing {
    /// Total billed input tokens.
    pub input_tokens: u64,
    pub system_tokens: u64,
    pub message_tokens: u64,
    /// Tokens of the tool definitions the model sees (deferred ones excluded).
    pub tool_tokens: u64,
    /// The provider's fixed tool-use overhead.
    pub overhead_tokens: u64,
    /// Tokens of everything before the last user message: what a warm prompt cache holds.
    pub prefix_tokens: u64,
    pub tools_billed: usize,
    pub tools_deferred: usize,
    /// The tool side these figures were made with.
    #[serde(skip)]
    pub tools: ToolsBilling,
}

/// Count the billed input tokens of a request under a render model.
pub fn billed_input(req: &Request, render: RenderModel, tok: Tokenizer) -> Billing {
    billed_with(req, render, tok, &tools_billing(req, render, tok))
}

/// What the tool definitions of a request bill: those the model sees from the start, those the
/// conversation loads where it loads them, and the provider's fixed overhead. The first and
/// the last change only with the tools and `tool_choice`, so a request that differs from
/// another only in its conversation bills them the same ([`ToolsBilling::expanding`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolsBilling {
    /// Tokens of the definitions the model sees from the start (deferred ones excluded).
    seen_tokens: f64,
    seen: usize,
    deferred: usize,
    overhead: f64,
    /// Tokens of the definitions the conversation loads (billed with the messages).
    expanded_tokens: f64,
    expanded: usize,
    /// The tools' digests, for the prompt cache.
    pub(super) digests: super::prompt::ToolDigests,
}

/// The tool side of [`billed_input`].
pub fn tools_billing(req: &Request, render: RenderModel, tok: Tokenizer) -> ToolsBilling {
    let tools = req.tools();
    let mut seen_tokens = 0.0;
    let mut seen: Vec<ToolRef> = Vec::new();
    for d in tools.iter().map(ToolEntry::as_ref) {
        if d.is_namespace() {
            // A namespace with searchable members shows only its own name and description
            // (OpenAI tool search); members that are not deferred are seen in full.
            let members = d.members();
            if members.iter().any(|m| m.is_deferred()) {
                if let RenderModel::Openai { func_init } = render {
                    let name = d.name().unwrap_or("");
                    let desc = d.get("description");
                    let desc = desc.as_deref().and_then(Value::as_str).unwrap_or("");
                    seen_tokens += func_init as f64
                        + tok.count(&format!("{name}:{}", desc.trim_end_matches('.')));
                }
            }
            seen.extend(members.into_iter().filter(|m| !m.is_deferred()));
            continue;
        }
        if d.is_deferred() {
            if let RenderModel::Openai { func_init } = render {
                // Name and description stay visible; the schema is deferred.
                if let Some(p) = d.parts() {
                    seen_tokens += func_init as f64
                        + tok.count(&format!(
                            "{}:{}",
                            p.name,
                            p.description.trim_end_matches('.')
                        ));
                }
            }
            continue;
        }
        seen.push(d);
    }
    // Deferred definitions that can be loaded, counted once by name (members of namespaces
    // included).
    let deferred = deferred_by_name(tools).len();
    seen_tokens += defs_tokens(&seen, render, tok);
    let exact = exact_claude(render, tok);
    let overhead = match render {
        RenderModel::Anthropic { auto, any, .. } if !tools.is_empty() => {
            // The exact tokenizer's prompt, and the tools block's open and close.
            let (auto, any, block) = match exact {
                Some((_, auto, any)) => (
                    auto,
                    any,
                    tok.count_inline(functions::OPEN)
                        + tok.count_inline(functions::BETWEEN)
                        + tok.count_inline(functions::CLOSE),
                ),
                None => (auto, any, 0.0),
            };
            let choice = req
                .body
                .pointer("/tool_choice/type")
                .and_then(Value::as_str)
                .unwrap_or("auto");
            block
                + if matches!(choice, "any" | "tool") {
                    any
                } else {
                    auto
                }
        }
        _ => 0.0,
    };
    ToolsBilling {
        seen_tokens,
        seen: seen.len(),
        deferred,
        overhead,
        ..Default::default()
    }
    .expanding(tools, req.messages(), render, tok)
}

impl ToolsBilling {
    /// The same definitions, loaded where `messages` load them: tool_reference blocks
    /// (Anthropic) and tool_search_output items (OpenAI Responses) bring in deferred
    /// definitions from `tools` where they appear.
    pub fn expanding(
        self,
        tools: &[ToolEntry],
        messages: &[Value],
        render: RenderModel,
        tok: Tokenizer,
    ) -> ToolsBilling {
        // The deferred definitions by name, looked up only when some message loads one (a
        // tool_search_output item can also carry definitions in full).
        let loads = |m: &Value| {
            loads_definitions(m)
                || m.get("content")
                    .and_then(Value::as_array)
                    .is_some_and(|blocks| blocks.iter().any(|b| !references(b).is_empty()))
        };
        let deferred: HashMap<&str, ToolRef> = match self.deferred > 0 && messages.iter().any(loads)
        {
            false => HashMap::new(),
            true => deferred_by_name(tools),
        };
        let mut expanded: Vec<ToolRef> = Vec::new();
        for m in messages {
            for block in m
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                for r in references(block) {
                    if let Some(d) = deferred.get(r.as_str()) {
                        expanded.push(*d);
                    }
                }
                // An Anthropic `tool_addition` that carries its definition by value bills it
                // where it appears (one by reference is a `references` name above).
                if block["type"] == "tool_addition" && block["tool"]["type"] == "tool_definition" {
                    expanded.push(ToolRef::Json(&block["tool"]["definition"]));
                }
            }
            expanded.extend(loaded(m, &deferred));
        }
        let expanded_tokens = defs_tokens(&expanded, render, tok)
            - if expanded.is_empty() {
                0.0
            } else {
                fixed_defs_tokens(render)
            };
        ToolsBilling {
            expanded_tokens,
            expanded: expanded.len(),
            ..self
        }
    }
}

/// [`billed_input`] for a request whose tool side is `tools` ([`tools_billing`] of this request,
/// or of one with the same tools, `tool_choice` and loads): only its text is counted, and its
/// `tools` are not read.
pub fn billed_with(
    req: &Request,
    render: RenderModel,
    tok: Tokenizer,
    tools: &ToolsBilling,
) -> Billing {
    let system = system_text(&req.body);
    let openai = matches!(render, RenderModel::Openai { .. });
    let exact = exact_claude(render, tok);
    // OpenAI frames every message with 3 tokens and its role (the cookbook's
    // `num_tokens_from_messages`: tokens_per_message 3, and each value of the message, the
    // role's included, counted), and primes the reply with 3.
    let frame = |role: &str| match openai {
        true => 3.0 + tok.count(role),
        false => 0.0,
    };
    // Claude's exact count frames each message with its role's marker; Gemini bills one token
    // for each Content that names a role ([`GEMINI_PER_ROLE`]).
    let gemini = matches!(render, RenderModel::Gemini);
    let message_frame = |role: &str| match exact {
        Some(_) => CLAUDE_PER_MESSAGE,
        None if gemini => match role.is_empty() {
            true => 0.0,
            false => GEMINI_PER_ROLE,
        },
        None => frame(role),
    };
    // With a top-level system prompt (Anthropic `system`, Responses `instructions`), system
    // messages in the conversation are billed where they appear (Anthropic's mid-conversation
    // system messages); without one they are the system text (Chat Completions).
    let top_system = req
        .body
        .get("system")
        .or_else(|| req.body.get("instructions"))
        .or_else(|| req.body.get("systemInstruction"))
        .is_some();
    let system_messages = match top_system {
        true => usize::from(!system.is_empty()),
        false => req
            .messages()
            .iter()
            .filter(|m| m["role"] == "system")
            .count()
            .max(usize::from(!system.is_empty())),
    };
    let system_tokens = tok.count(&system)
        + match gemini {
            true => match req.body.pointer("/systemInstruction/role") {
                Some(Value::String(r)) if !r.is_empty() => GEMINI_PER_ROLE,
                _ => 0.0,
            },
            false => system_messages as f64 * frame("system"),
        };
    let mut message_tokens = 0.0;
    let mut last_user = 0.0;
    // Calls made from running code, and their results, are not in the model's context.
    let from_code = calls_from_code(req.messages());
    for m in req
        .messages()
        .iter()
        .filter(|m| top_system || m["role"] != "system")
    {
        let text = match from_code.is_empty() {
            true => message_text(m),
            false => message_text_beside(m, &from_code),
        };
        let t = message_frame(m["role"].as_str().unwrap_or("")) + tok.count(&text);
        message_tokens += t;
        // A system message after the last user turn belongs with it.
        last_user = match m["role"].as_str() {
            Some("user") => t,
            Some("system") => last_user + t,
            _ => 0.0,
        };
    }
    message_tokens += tools.expanded_tokens;
    if openai {
        message_tokens += 3.0; // the reply primer
    }
    if let RenderModel::Anthropic { framing, .. } = render {
        // The exact tokenizer's request frame is measured: one message bills the family's frame.
        message_tokens += match (exact, tok) {
            (Some((f, _, _)), _) => f.message_frame() as f64 - CLAUDE_PER_MESSAGE,
            // The earlier tokenizer's estimate frames a request as that tokenizer's own
            // one-message requests measure (7 on claude-opus-4-5), not with nothing.
            (None, Tokenizer::ClaudeLegacyEst) => Family::V3.message_frame() as f64,
            (None, _) => framing,
        };
    }
    let total = system_tokens + message_tokens + tools.seen_tokens + tools.overhead;
    Billing {
        input_tokens: total.round() as u64,
        system_tokens: system_tokens.round() as u64,
        message_tokens: message_tokens.round() as u64,
        tool_tokens: tools.seen_tokens.round() as u64,
        overhead_tokens: tools.overhead.round() as u64,
        prefix_tokens: (total - last_user).round().max(0.0) as u64,
        tools_billed: tools.seen + tools.expanded,
        tools_deferred: tools.deferred,
        tools: tools.clone(),
    }
}

/// The deferred definitions that can be loaded, by name (namespaces' members included).
fn deferred_by_name(tools: &[ToolEntry]) -> HashMap<&str, ToolRef<'_>> {
    wire::deferred_definitions(tools)
        .into_iter()
        .filter_map(|d| d.parts().map(|p| (p.name, d)))
        .collect()
}

/// The definitions a Responses `tool_search_output` or `additional_tools` item loads: those it
/// carries in full (namespaces' members included), and those it only names, taken from the
/// request's deferred definitions.
fn loaded<'a>(item: &'a Value, deferred: &HashMap<&str, ToolRef<'a>>) -> Vec<ToolRef<'a>> {
    if !loads_definitions(item) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for t in item["tools"].as_array().into_iter().flatten() {
        let functions: Vec<&Value> = match wire::is_namespace(t) {
            true => wire::namespace_members(t).iter().collect(),
            false => vec![t],
        };
        for f in functions {
            if wire::definition_parts(f).is_some() {
                out.push(ToolRef::Json(f));
            } else if let Some(d) = f["name"].as_str().and_then(|n| deferred.get(n)) {
                out.push(*d);
            }
        }
    }
    out
}

/// Whether a Responses item brings definitions into the context where it appears.
pub fn loads_definitions(item: &Value) -> bool {
    matches!(
        item["type"].as_str(),
        Some("tool_search_output" | "additional_tools")
    )
}

/// Names referenced by a content block (`tool_reference`, possibly nested in a tool_result, or
/// the tool of an Anthropic `tool_addition`).
fn references(block: &Value) -> Vec<String> {
    match block["type"].as_str() {
        Some("tool_reference") => block["tool_name"]
            .as_str()
            .map(|s| vec![s.to_string()])
            .unwrap_or_default(),
        Some("tool_addition") if block["tool"]["type"] == "tool_reference" => block["tool"]["name"]
            .as_str()
            .map(|s| vec![s.to_string()])
            .unwrap_or_default(),
        Some("tool_result") | Some("tool_search_tool_result") => block["content"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(references)
            .chain(
                block
                    .pointer("/content/tool_references")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .flat_map(references),
            )
            .collect(),
        _ => Vec::new(),
    }
}

/// Tokens of a set of definitions, including the per-set constant of the render model. Each
/// definition is counted in parts (its head and its schema), each part once per tokenizer
/// however many requests and renderings carry it, and the Kimi array is assembled from its
/// members with every join counted exactly ([`Tokenizer::count_parts`]).
fn defs_tokens(defs: &[ToolRef], render: RenderModel, tok: Tokenizer) -> f64 {
    if defs.is_empty() {
        return 0.0;
    }
    match render {
        // Claude counted exactly: each definition as the tools block renders it, and the
        // newline before it.
        RenderModel::Anthropic { .. } if tok.claude_family().is_some() => {
            let between = tok.count_inline(functions::BETWEEN);
            super::tokenizer::on_cores(defs, |d| {
                kept(*d, Rendering::ClaudeFunctions, tok, || {
                    tok.count_inline(&functions::function(*d))
                })
            })
            .into_iter()
            .map(|n| n + between)
            .sum()
        }
        RenderModel::Anthropic { .. } => super::tokenizer::on_cores(defs, |d| {
            kept(*d, Rendering::AnthropicJson, tok, || {
                tok.count_parts(Framed::anthropic(*d).parts())
            })
        })
        .into_iter()
        .sum(),
        RenderModel::Kimi | RenderModel::Gemini => {
            let frame = match render {
                RenderModel::Gemini => Framed::gemini,
                _ => Framed::kimi,
            };
            let framed: Vec<Framed> = crate::sync::map_on_cores(defs, |d| frame(*d));
            let members = framed.iter().enumerate().flat_map(|(i, f)| {
                let comma = (i > 0).then_some(Part::Joint(","));
                comma.into_iter().chain(f.parts())
            });
            let parts = std::iter::once(Part::Joint("["))
                .chain(members)
                .chain(std::iter::once(Part::Joint("]")));
            tok.count_parts(parts)
        }
        RenderModel::Openai { func_init } => {
            let n: f64 = super::tokenizer::on_cores(defs, |d| {
                kept(*d, Rendering::OpenaiWalk(func_init), tok, || {
                    openai_function_tokens(*d, func_init, tok)
                })
            })
            .into_iter()
            .sum();
            n + 12.0 // func_end
        }
    }
}

/// How one definition is counted on its own, where a request's count is the sum of its
/// definitions' ([`defs_tokens`]): each rendering's count is kept beside the definition's shared
/// text ([`crate::catalogue::DefText::counted`]), so a surface, request or round that carries
/// the same definition under the same name adds its count instead of rendering and counting it
/// again. Renderings whose definitions are counted together (the Kimi and Gemini arrays, whose
/// joins and whole-text tokenizers do not split by definition) are not kept here.
#[derive(Debug, Clone, Copy)]
enum Rendering {
    /// Claude's tools block, counted exactly ([`functions::function`]).
    ClaudeFunctions,
    /// Anthropic's compact JSON, counted with an estimate ([`Framed::anthropic`]).
    AnthropicJson,
    /// The OpenAI cookbook walk with its per-function constant ([`openai_function_tokens`]).
    OpenaiWalk(i64),
}

/// `count()` of a definition under `rendering` and `tok`, kept beside a shared definition's text
/// under a key of the rendering, the tokenizer and the name the request gives it; a definition
/// that is not shared (a tree), or a count made whole ([`super::counting_whole`]), is counted
/// as it is.
fn kept(d: ToolRef, rendering: Rendering, tok: Tokenizer, count: impl FnOnce() -> f64) -> f64 {
    match d {
        ToolRef::Shared(def) if !super::tokenizer::counting_whole_now() => {
            let mut h = xxhash_rust::xxh3::Xxh3::with_seed(super::process_seed());
            let (tag, constant) = match rendering {
                Rendering::ClaudeFunctions => (0u8, 0),
                Rendering::AnthropicJson => (1, 0),
                Rendering::OpenaiWalk(func_init) => (2, func_init),
            };
            h.update(&[tag]);
            h.update(&constant.to_le_bytes());
            h.update(tok.name().as_bytes());
            h.update(&[0]);
            h.update(def.name().as_bytes());
            def.shared_text().counted(h.digest(), count)
        }
        ToolRef::Shared(_) | ToolRef::Json(_) | ToolRef::Namespace(_) => count(),
    }
}

fn fixed_defs_tokens(render: RenderModel) -> f64 {
    match render {
        RenderModel::Anthropic { .. } | RenderModel::Kimi | RenderModel::Gemini => 0.0,
        RenderModel::Openai { .. } => 12.0,
    }
}

/// A definition's compact JSON as a provider renders it, in three parts: everything before the
/// schema, the schema, and what closes the definition. The schema (most of a definition's
/// text) is a part of its own, so it is counted once per tokenizer whatever name and wrapper
/// Tokens of the walk's `name:description` (the description without its final periods), its
/// prose counted as a piece of its own ([`super::clean_cuts`]), so the prose several renderings
/// of a definition share is counted once.
fn name_and_description(tok: Tokenizer, name: &str, desc: &str) -> f64 {
    let [first, prose, last] = super::clean_cuts(desc.trim_end_matches('.'));
    let head = format!("{name}:{first}");
    let parts = [head.as_str(), prose, last];
    tok.count_parts(parts.into_iter().filter(|p| !p.is_empty()).map(Part::Piece))
}

/// The cookbook walk for one function (gpt-4o constants; enum_init is -3).
fn openai_function_tokens(d: ToolRef, func_init: i64, tok: Tokenizer) -> f64 {
    let Some(p) = d.parts() else {
        return tok.count(&d.text());
    };
    let (name, desc) = (p.name, p.description);
    let schema = p.schema.value();
    let mut n = func_init as f64 + name_and_description(tok, name, desc);
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        if !props.is_empty() {
            n += 3.0; // prop_init
            for (key, p) in props {
                n += 3.0; // prop_key
                if let Some(values) = p.get("enum").and_then(Value::as_array) {
                    n -= 3.0; // enum_init
                    for v in values {
                        n += 3.0
                            + tok.count(
                                &v.as_str()
                                    .map(String::from)
                                    .unwrap_or_else(|| v.to_string()),
                            );
                    }
                }
                let ty = p.get("type").and_then(Value::as_str).unwrap_or("");
                let pd = p
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .trim_end_matches('.');
                n += tok.count(&format!("{key}:{ty}:{pd}"));
            }
        }
    }
    n
}
