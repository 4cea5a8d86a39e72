//! Provider render models: from a request body to the input tokens a provider bills.
//!
//! - Anthropic: system, messages and every non-deferred tool's `{name, description,
//!   input_schema}`, plus the hidden tool-use system prompt once when any tool is present
//!   (per model family and `tool_choice`, the providers' documentation). Deferred tools are unbilled until a
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

use crate::tokens::Tokenizer;
use crate::wire::{self, Request, ToolEntry, ToolRef};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;

pub mod claude;
mod definitions;
mod framed;
pub mod functions;
pub mod gemini;
pub mod open;
mod text;
pub mod turns;
use crate::tokens::claude_exact::Family;
pub use claude::{overhead_label, CLAUDE_5_TOOL_PROMPT};
pub use definitions::definition_tokens;
use definitions::{defs_tokens, fixed_defs_tokens};
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
    Openai { func_init: i64 },
    /// An open-weight model's chat template ([`open`]): Kimi, Qwen, GLM, DeepSeek, Mistral,
    /// gpt-oss, Llama.
    Open(open::Template),
    /// Gemini, by model generation and API ([`gemini::Gemini`]).
    Gemini(gemini::Gemini),
}

impl RenderModel {
    /// Parse `anthropic:<model or family>`, `openai:<model>`, `kimi`, `gemini[:<model>]` (the
    /// Developer API) or `vertex:<model>` (Gemini on Vertex AI).
    pub fn parse(spec: &str) -> Option<RenderModel> {
        let (kind, arg) = spec.split_once(':').unwrap_or((spec, ""));
        match kind {
            "anthropic" => anthropic_family(arg),
            // The cookbook's func_init: 10 for the cl100k generation (gpt-4, gpt-4-turbo,
            // gpt-3.5), 7 for gpt-4o and every model after it (gpt-4.1, gpt-5, the o-series).
            "openai" => Some(RenderModel::Openai {
                func_init: match (arg.starts_with("gpt-4")
                    && !arg.starts_with("gpt-4o")
                    && !arg.starts_with("gpt-4.1"))
                    || arg.starts_with("gpt-3.5")
                {
                    true => 10,
                    false => 7,
                },
            }),
            // Kimi's current template (K2.5 and later).
            "kimi" => Some(RenderModel::Open(open::Template::KimiTs)),
            "open" => open::Template::parse(arg).map(RenderModel::Open),
            "gemini" => Some(RenderModel::Gemini(gemini::Gemini::of_model(arg, false))),
            "vertex" => Some(RenderModel::Gemini(gemini::Gemini::of_model(arg, true))),
            _ => None,
        }
    }

    pub fn name(&self) -> String {
        match self {
            RenderModel::Anthropic { family, .. } => format!("anthropic:{family}"),
            RenderModel::Openai { func_init } => format!("openai(func_init={func_init})"),
            RenderModel::Open(t) => format!("open:{}", t.name()),
            RenderModel::Gemini(g) => format!(
                "{}:{}.{}",
                if g.vertex { "vertex" } else { "gemini" },
                g.generation / 10,
                g.generation % 10
            ),
        }
    }
}

/// The render model of an Anthropic model or family, if toolcost knows its tool-use prompt
/// ([`claude::tool_prompt`]). Counted with an estimate rather than Claude's exact tokenizer, the
/// prompt is taken with its tools block, as Anthropic's pricing page gives it (8 tokens more than
/// the table's), and no request frame (assumed, as toolcost has always billed them); the models of
/// the current tokenizer keep the `claude-est` estimator's own constants
/// ([`crate::tokens::claude::current_tool_prompt`], [`crate::tokens::claude::current_framing`]): calibrated.
pub fn anthropic_family(family: &str) -> Option<RenderModel> {
    let prompt = claude::tool_prompt(family)?;
    let current = matches!(
        Family::of_model(prompt.model),
        Some(Family::V4_7 | Family::V5)
    );
    Some(match current {
        true => {
            let auto = crate::tokens::claude::current_tool_prompt();
            RenderModel::Anthropic {
                family: prompt.model,
                auto,
                any: auto + (prompt.any - prompt.auto),
                framing: crate::tokens::claude::current_framing(),
            }
        }
        false => RenderModel::Anthropic {
            family: prompt.model,
            auto: prompt.auto + claude::BLOCK_TOKENS,
            any: prompt.any + claude::BLOCK_TOKENS,
            framing: 0.0,
        },
    })
}

/// The Claude family and tool-use prompt of an Anthropic request counted with Claude's exact
/// tokenizer; None for any other tokenizer or provider, whose constants are the render model's
/// own. A model the prompt table does not name takes its family's newest model's.
fn claude_exact(
    render: RenderModel,
    tok: Tokenizer,
) -> Option<(Family, &'static claude::ToolPrompt)> {
    let RenderModel::Anthropic { family, .. } = render else {
        return None;
    };
    let f = tok.claude_family()?;
    let prompt = claude::tool_prompt(family).unwrap_or_else(|| claude::tool_prompt_of_family(f));
    Some((f, prompt))
}

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
    /// Earlier model turns whose thinking this request bills again (a Gemini 3 `thoughtSignature`
    /// sent back, a Responses reasoning item in the current tool chain), not in `input_tokens`:
    /// how much each bills is in the answer it came from, which a count of the request alone
    /// cannot see.
    pub thoughts_resent: usize,
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
    let overhead = match render {
        RenderModel::Anthropic { auto, any, .. } if !tools.is_empty() => {
            let choice = req
                .body
                .pointer("/tool_choice/type")
                .and_then(Value::as_str)
                .unwrap_or("auto");
            match claude_exact(render, tok) {
                // The model's own prompt for the choice (a named tool's name is in it), the
                // tools block's open and close when a definition is seen, and on the v5 family
                // the prompt deferred tools add.
                Some((f, prompt)) => {
                    let block = match seen.is_empty() {
                        true => 0.0,
                        false => {
                            tok.count_inline(functions::OPEN)
                                + tok.count_inline(functions::BETWEEN)
                                + tok.count_inline(functions::CLOSE)
                        }
                    };
                    let chosen = match choice {
                        "any" => prompt.any,
                        "tool" => {
                            let name = req.body.pointer("/tool_choice/name");
                            prompt.tool
                                + tok.count_inline(name.and_then(Value::as_str).unwrap_or(""))
                        }
                        _ => prompt.auto,
                    };
                    let deferred_prompt = match (f, deferred > 0) {
                        (Family::V5, true) => claude::V5_DEFERRED_PROMPT,
                        _ => 0.0,
                    };
                    block + chosen + deferred_prompt
                }
                None => match matches!(choice, "any" | "tool") {
                    true => any,
                    false => auto,
                },
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
        // Claude counted exactly writes what a tool result loads into the result's own text
        // ([`turns`]): those definitions are counted there, not here.
        let mut in_results = 0;
        let claude = claude_exact(render, tok).is_some();
        for m in messages {
            for block in m
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let in_text = claude && block["type"] != "tool_addition";
                for r in references(block) {
                    match (deferred.get(r.as_str()), in_text) {
                        (Some(_), true) => in_results += 1,
                        (Some(d), false) => expanded.push(*d),
                        (None, _) => {}
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
            expanded: expanded.len() + in_results,
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
    if let Some((f, _)) = claude_exact(render, tok) {
        return claude_billed(req, f, tok, tools);
    }
    if let RenderModel::Gemini(g) = render {
        return gemini_billed(req, g, tok, tools);
    }
    if let RenderModel::Open(t) = render {
        return open::billed(req, t, tok, tools);
    }
    let system = system_text(&req.body);
    let openai = matches!(render, RenderModel::Openai { .. });
    // OpenAI frames every message with 3 tokens and its role (the cookbook's
    // `num_tokens_from_messages`: tokens_per_message 3, and each value of the message, the
    // role's included, counted), and primes the reply with 3.
    let frame = |role: &str| match openai {
        true => 3.0 + tok.count(role),
        false => 0.0,
    };
    let message_frame = frame;
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
    let system_tokens = tok.count(&system) + system_messages as f64 * frame("system");
    let mut message_tokens = 0.0;
    let mut last_user = 0.0;
    // Calls made from running code, and their results, are not in the model's context.
    let from_code = calls_from_code(req.messages());
    // Responses reasoning items sent back: OpenAI drops those before the last user message;
    // those after it (the current tool chain) are billed at the length of the reasoning they
    // stand for, which the request does not hold (an encrypted blob or an id): counted apart.
    let responses = req.format == wire::Format::OpenaiResponses;
    let chain_from = responses
        .then(|| req.messages().iter().rposition(|m| m["role"] == "user"))
        .flatten();
    let mut reasoning_resent = 0;
    for (i, m) in req
        .messages()
        .iter()
        .enumerate()
        .filter(|(_, m)| top_system || m["role"] != "system")
    {
        if responses && m["type"] == "reasoning" {
            if chain_from.is_none_or(|u| i > u) {
                reasoning_resent += 1;
            }
            continue;
        }
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
        message_tokens += match tok {
            // The earlier tokenizer's estimate frames a request as that tokenizer's own
            // one-message requests measure (7 on claude-opus-4-5), not with nothing.
            Tokenizer::ClaudeLegacyEst => Family::V3.message_frame() as f64,
            _ => framing,
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
        thoughts_resent: reasoning_resent,
        tools: tools.clone(),
    }
}

/// [`billed_with`] for an Anthropic request counted with Claude's exact tokenizer: the prompt as
/// Claude reads it ([`turns`], [`claude`]). The system text is followed by the tool-use prompt
/// (one token joins them when both are there); the conversation is its turns, each after the
/// first with its role's marker, the last assistant turn being the frame's own.
fn claude_billed(req: &Request, f: Family, tok: Tokenizer, tools: &ToolsBilling) -> Billing {
    let system = system_text(&req.body);
    let join = match !system.is_empty() && tools.seen > 0 {
        true => 1.0,
        false => 0.0,
    };
    let system_tokens = tok.count(&system) + join;
    let from_code = calls_from_code(req.messages());
    let deferred = match req.messages().is_empty() || tools.deferred == 0 {
        true => HashMap::new(),
        false => deferred_by_name(req.tools()),
    };
    let cx = turns::Context {
        deferred: &deferred,
        from_code: &from_code,
        ascii: f == Family::V3,
    };
    let turns = turns::turns(req.messages(), &cx);
    let mut message_tokens = f.message_frame() as f64 + tools.expanded_tokens;
    let mut last_user = 0.0;
    let mut calls = 0;
    for (i, t) in turns.iter().enumerate() {
        let marker = match i {
            0 => 0.0,
            _ => claude::turn_tokens(f, t.speaker == turns::Speaker::System),
        };
        let n = marker + tok.count(&t.text);
        message_tokens += n;
        calls += t.calls;
        last_user = match t.speaker {
            turns::Speaker::User => n,
            turns::Speaker::System => last_user + n,
            turns::Speaker::Assistant => 0.0,
        };
    }
    // A last assistant turn (a prefill, or calls and their results) is the frame's own.
    if turns.len() > 1
        && turns
            .last()
            .is_some_and(|t| t.speaker == turns::Speaker::Assistant)
    {
        message_tokens -= claude::turn_tokens(f, false);
    }
    if matches!(f, Family::V5 | Family::V4_7) {
        message_tokens += claude::V5_CALL_ADJUST * calls as f64;
    }
    let structured = structured_output(&req.body).map_or(0.0, |schema| {
        let text = serde_json::to_string_pretty(schema).unwrap_or_default();
        claude::STRUCTURED_OUTPUT_PROMPT
            + tok.count_inline(&text)
            + if tools.seen > 0 { 1.0 } else { 0.0 }
    });
    let overhead = tools.overhead + structured;
    let total = system_tokens + message_tokens + tools.seen_tokens + overhead;
    Billing {
        input_tokens: total.round().max(0.0) as u64,
        system_tokens: system_tokens.round() as u64,
        message_tokens: message_tokens.round().max(0.0) as u64,
        tool_tokens: tools.seen_tokens.round() as u64,
        overhead_tokens: overhead.round() as u64,
        prefix_tokens: (total - last_user).round().max(0.0) as u64,
        tools_billed: tools.seen + tools.expanded,
        tools_deferred: tools.deferred,
        thoughts_resent: 0,
        tools: tools.clone(),
    }
}

/// [`billed_with`] for a Gemini request ([`gemini`]): the system instruction and each Content
/// with its role's token where the generation and API bill one, text parts counted as one text
/// and, from 2.5 on, calls and results as the template writes them.
fn gemini_billed(
    req: &Request,
    g: gemini::Gemini,
    tok: Tokenizer,
    tools: &ToolsBilling,
) -> Billing {
    let role = |c: &Value| match c["role"].as_str() {
        Some(r) if !r.is_empty() => g.role_tokens(),
        _ => 0.0,
    };
    let system_tokens = req
        .body
        .get("systemInstruction")
        .map_or(0.0, |si| role(si) + tok.count(&system_text(&req.body)));
    let mut message_tokens = tools.expanded_tokens;
    let mut last_user = 0.0;
    for c in req.messages() {
        let mut text = String::new();
        let mut marked = 0.0;
        for p in c["parts"].as_array().into_iter().flatten() {
            if let Some(t) = p["text"].as_str() {
                text.push_str(t);
            }
            match (g.templated(), gemini::call_or_result(p)) {
                (true, Some(m)) => marked += marked_tokens(&m, tok),
                (false, Some(_)) => {
                    for (key, payload) in
                        [("functionCall", "args"), ("functionResponse", "response")]
                    {
                        if let Some(v) = p.get(key) {
                            text.push_str(v["name"].as_str().unwrap_or(""));
                            text.push_str(&crate::json::compact(&v[payload]));
                        }
                    }
                }
                (_, None) => {}
            }
        }
        let n = role(c) + marked + tok.count(&text);
        message_tokens += n;
        last_user = match c["role"].as_str() {
            Some("model") => 0.0,
            _ => n,
        };
    }
    let resent = match g.resends_thoughts() {
        true => gemini::resent_thoughts(req.messages()).len(),
        false => 0,
    };
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
        thoughts_resent: resent,
        tools: tools.clone(),
    }
}

/// Tokens of text between template marks: each mark one, each piece counted on its own.
fn marked_tokens(m: &gemini::Marked, tok: Tokenizer) -> f64 {
    m.marks as f64 + m.texts.iter().map(|t| tok.count(t)).sum::<f64>()
}

/// The JSON schema of an Anthropic request's structured output (`output_format`, or the
/// newer `output_config.format`), which Claude's hidden prompt carries.
pub fn structured_output(body: &Value) -> Option<&Value> {
    body.pointer("/output_format/schema")
        .or_else(|| body.pointer("/output_config/format/schema"))
        .filter(|s| !s.is_null())
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
