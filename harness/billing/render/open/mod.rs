//! Open-weight models' chat templates: how Kimi, Qwen, GLM, DeepSeek, Mistral, gpt-oss and Llama
//! write a request (system text, tool declarations, messages, tool calls and results) into the
//! one text their tokenizer counts. Each family's template is a file here, written from its
//! published template (the version and source are in [`Template::source`]); the text between
//! special tokens is counted with the family's tokenizer, each special token one.
//!
//! A template is chosen per model id ([`of_model`]); the request's conversation is read from any
//! wire format into the Chat Completions shape the templates take ([`conversation`]), as the
//! gateway in front of an open model converts it.

pub mod conversation;
mod deepseek;
mod glm;
mod harmony;
mod kimi;
mod llama;
mod mistral;
pub mod pyjson;
mod qwen;
mod qwen_coder;
mod typescript;

use super::Billing;
use crate::tokens::Tokenizer;
use crate::wire::{Request, ToolRef};
use conversation::{Conversation, Role};
pub use pyjson::deep_sorted;
use serde_json::Value;

/// A chat template, by the model versions that share it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Template {
    /// Kimi K2 and K2-0905: tools as JSON (deep-sorted, `", "` separators), a default system.
    KimiK2,
    /// Kimi K2.5, K2.6, K2.7 Code: tools as TypeScript declarations.
    KimiTs,
    /// Kimi K2-Thinking: the K2.5 turns, tools as JSON, K2's default system.
    KimiK2Thinking,
    /// Kimi K2.5+ turns with the `tool_declare` turn holding the tools as Python's
    /// `json.dumps` writes them by default (spaced, `ensure_ascii`): the rendering assumed for
    /// Cloudflare's Anthropic-compatible endpoint to Workers AI.
    KimiJson,
    /// Qwen 2.5 (a default system prompt) and Qwen 3: one JSON line per tool in `<tools>`.
    Qwen { default_system: bool },
    /// Qwen 3.5 and 3.6: tools first, XML calls.
    Qwen35,
    /// Qwen3-Coder: tools as XML elements, XML calls, a default system text with tools.
    Qwen3Coder,
    /// QwQ: Qwen 2.5's tools without its default system text; thinks.
    Qwq,
    /// GLM-4.5 and 4.6 (newlines between turns) or 4.7 and 5.x (none).
    Glm { compact: bool },
    /// DeepSeek V3 and V3.1: a `<tools>` block in the system text.
    DeepseekV3,
    /// DeepSeek R1: the tools as JSON fences in the system text.
    DeepseekR1,
    /// DeepSeek V3.2 and V4: DSML declarations.
    DeepseekV4,
    /// Mistral, by tokenizer version: tekken (3, 7, 11, 13) or, with `spm`, the earlier
    /// models' SentencePiece vocabulary (1, 2, 3, 7).
    Mistral { version: u8, spm: bool },
    /// gpt-oss: the harmony format.
    Harmony,
    /// Llama 3.1 to 3.3 (`llama4` false) and Llama 4: tools as indented JSON in the first user
    /// message.
    Llama { llama4: bool },
}

impl Template {
    /// The template's name, version and source, for labels.
    pub fn source(self) -> &'static str {
        match self {
            Template::KimiK2 => "kimi-k2 (Moonshot's Kimi-K2-Instruct chat template, 2025-07; JSON tool_declare)",
            Template::KimiTs => "kimi-k2.5+ (Moonshot's Kimi-K2.5 chat template with tool_declaration_ts, 2026-01; TypeScript tool_declare)",
            Template::KimiK2Thinking => "kimi-k2-thinking (Moonshot's Kimi-K2-Thinking chat template, 2025-11)",
            Template::KimiJson => "kimi-k2.5+ turns with tool_declare as Python json.dumps defaults (spaced, ensure_ascii): assumed for Cloudflare's Anthropic-compatible endpoint to Workers AI, which documents no rendering; inferred from the recorded slope's text density, which only spaced JSON brings inside real catalogues' range, and from llama.cpp's copy of the K2 template (`tools | tojson`)",
            Template::Qwen { default_system: true } => "qwen2.5 (Qwen2.5-Instruct chat template)",
            Template::Qwen { default_system: false } => "qwen3 (Qwen3 chat template, 2025-04)",
            Template::Qwen35 => "qwen3.5 (Qwen3.5 chat template, 2026-02)",
            Template::Qwen3Coder => "qwen3-coder (Qwen3-Coder chat template, 2025-07)",
            Template::Qwq => "qwq (QwQ-32B chat template, 2025-03)",
            Template::Glm { compact: false } => "glm-4.5 (GLM-4.6 chat template)",
            Template::Glm { compact: true } => "glm-4.7 (GLM-4.7 chat template; GLM-5.x by assumption)",
            Template::DeepseekV3 => "deepseek-v3 (vLLM's DeepSeek-V3 tool template)",
            Template::DeepseekR1 => "deepseek-r1 (vLLM's DeepSeek-R1 tool template)",
            Template::DeepseekV4 => "deepseek-v4 (DeepSeek's encoding_dsv4, DSML)",
            Template::Mistral { spm: false, .. } => "mistral (mistral-common 1.13 instruct rules, tekken)",
            Template::Mistral { spm: true, .. } => "mistral (mistral-common 1.13 instruct rules, SentencePiece)",
            Template::Harmony => "harmony (openai-harmony 0.0.8)",
            Template::Llama { llama4: false } => "llama3.1 (Llama-3.1 chat template, tools in the first user message)",
            Template::Llama { llama4: true } => "llama4 (vLLM's Llama 4 JSON tool template)",
        }
    }

    /// The short name `RenderModel::parse` takes after `open:`.
    pub fn name(self) -> String {
        match self {
            Template::KimiK2 => "kimi-k2".into(),
            Template::KimiTs => "kimi-k2.5".into(),
            Template::KimiJson => "kimi-k2.5-json".into(),
            Template::KimiK2Thinking => "kimi-k2-thinking".into(),
            Template::Qwen {
                default_system: true,
            } => "qwen2.5".into(),
            Template::Qwen {
                default_system: false,
            } => "qwen3".into(),
            Template::Qwen35 => "qwen3.5".into(),
            Template::Qwen3Coder => "qwen3-coder".into(),
            Template::Qwq => "qwq".into(),
            Template::Glm { compact: false } => "glm-4.5".into(),
            Template::Glm { compact: true } => "glm-4.7".into(),
            Template::DeepseekV3 => "deepseek-v3".into(),
            Template::DeepseekR1 => "deepseek-r1".into(),
            Template::DeepseekV4 => "deepseek-v4".into(),
            Template::Mistral {
                version,
                spm: false,
            } => format!("mistral-v{version}"),
            Template::Mistral { version, spm: true } => format!("mistral-v{version}-spm"),
            Template::Harmony => "harmony".into(),
            Template::Llama { llama4: false } => "llama3".into(),
            Template::Llama { llama4: true } => "llama4".into(),
        }
    }

    /// A template by [`Template::name`].
    pub fn parse(name: &str) -> Option<Template> {
        Some(match name {
            "kimi-k2" => Template::KimiK2,
            "kimi-k2.5" | "kimi-ts" => Template::KimiTs,
            "kimi-k2.5-json" => Template::KimiJson,
            "kimi-k2-thinking" => Template::KimiK2Thinking,
            "qwen2.5" => Template::Qwen {
                default_system: true,
            },
            "qwen3" | "qwen" => Template::Qwen {
                default_system: false,
            },
            "qwen3.5" => Template::Qwen35,
            "qwen3-coder" => Template::Qwen3Coder,
            "qwq" => Template::Qwq,
            "glm-4.5" => Template::Glm { compact: false },
            "glm-4.7" | "glm" => Template::Glm { compact: true },
            "deepseek-v3" | "deepseek" => Template::DeepseekV3,
            "deepseek-v4" => Template::DeepseekV4,
            "deepseek-r1" => Template::DeepseekR1,
            "harmony" | "gpt-oss" => Template::Harmony,
            "llama3" => Template::Llama { llama4: false },
            "llama4" => Template::Llama { llama4: true },
            other => {
                let v = other.strip_prefix("mistral-v")?;
                let (v, spm) = match v.strip_suffix("-spm") {
                    Some(v) => (v, true),
                    None => (v, false),
                };
                let version: u8 = v.parse().ok()?;
                let known = match spm {
                    true => matches!(version, 1 | 2 | 3 | 7),
                    false => (3..=13).contains(&version),
                };
                known.then_some(Template::Mistral { version, spm })?
            }
        })
    }

    /// The tokenizer this template's models count with, and whether it is the model's own
    /// vocabulary (false: a stand-in, said in the label).
    pub fn tokenizer(self) -> (Tokenizer, bool) {
        match self {
            Template::KimiK2 | Template::KimiTs | Template::KimiJson | Template::KimiK2Thinking => {
                (Tokenizer::Kimi, true)
            }
            Template::Qwen { .. } | Template::Qwen3Coder | Template::Qwq => (Tokenizer::Qwen, true),
            // Qwen 3.5 has a vocabulary of its own, not bundled: Qwen 3's stands in.
            Template::Qwen35 => (Tokenizer::Qwen, false),
            Template::Glm { .. } => (Tokenizer::Glm, true),
            Template::DeepseekV3 | Template::DeepseekR1 | Template::DeepseekV4 => {
                (Tokenizer::Deepseek, true)
            }
            Template::Mistral { spm: false, .. } => (Tokenizer::Mistral, true),
            Template::Mistral { version, spm: true } => match version {
                ..=2 => (Tokenizer::MistralSpm1, true),
                3..=6 => (Tokenizer::MistralSpm3, true),
                _ => (Tokenizer::MistralSpm7, true),
            },
            Template::Harmony => (Tokenizer::O200k, true),
            Template::Llama { llama4: false } => (Tokenizer::Llama3, true),
            // Llama 4's vocabulary is read where the user installed it; without it o200k, which
            // shares its pretokenizer and most of its merges, stands in.
            Template::Llama { llama4: true } => match crate::tokens::llama4::chosen() {
                true => (Tokenizer::Llama4, true),
                false => (Tokenizer::O200k, false),
            },
        }
    }
}

/// The template of a model id (a bare id or one with its provider's path: `moonshotai/...`,
/// `@cf/...`, `accounts/fireworks/models/...`), if it belongs to a family toolcost renders.
pub fn of_model(model: &str) -> Option<Template> {
    let m = model.to_ascii_lowercase();
    let m = m.rsplit('/').next().unwrap_or(&m);
    let m = m.strip_prefix("openrouter:").unwrap_or(m);
    let has = |s: &str| m.contains(s);
    Some(if has("kimi") || has("moonshot") {
        match has("k2.5") || has("k2p5") || has("k2.6") || has("k2.7") || has("k2-5") {
            true => Template::KimiTs,
            false if has("k3") => Template::KimiTs,
            false if has("thinking") => Template::KimiK2Thinking,
            false => Template::KimiK2,
        }
    } else if has("gpt-oss") {
        Template::Harmony
    } else if has("qwen") || has("qwq") {
        // Each model card's own template: Qwen3-Coder and QwQ have theirs.
        if has("qwen3.5") || has("qwen3.6") || has("qwen3p5") || has("qwen3p6") {
            Template::Qwen35
        } else if has("qwen3-coder") || has("qwen3coder") {
            Template::Qwen3Coder
        } else if has("qwq") {
            Template::Qwq
        } else {
            Template::Qwen {
                default_system: has("qwen2"),
            }
        }
    } else if has("glm") {
        Template::Glm {
            compact: !(has("4.5") || has("4.6") || has("4p5") || has("4p6") || has("glm-4-")),
        }
    } else if has("deepseek") {
        // DeepSeek's API names (`deepseek-chat`, `deepseek-reasoner`) serve its newest model:
        // V4 in 2026 (a recorded answer names deepseek-v4-flash for deepseek-reasoner).
        match has("v3.2")
            || has("v4")
            || has("v3p2")
            || has("deepseek-chat")
            || has("deepseek-reasoner")
        {
            true => Template::DeepseekV4,
            false if has("r1") => Template::DeepseekR1,
            false => Template::DeepseekV3,
        }
    } else if has("llama-4") || has("llama4") {
        Template::Llama { llama4: true }
    } else if has("llama") {
        Template::Llama { llama4: false }
    } else if has("mistral")
        || has("mixtral")
        || has("codestral")
        || has("devstral")
        || has("magistral")
        || has("ministral")
        || has("pixtral")
    {
        mistral_of(&has)
    } else {
        return None;
    })
}

/// A Mistral model's template: its tokenizer version, and whether it is one of the earlier
/// models that count with SentencePiece. The SentencePiece models are those mistral-common
/// 1.13.1 maps to its SentencePiece files (its table of API model names, read 2026-12-06) and
/// the open-weight releases whose model cards ship those files (Mistral 7B v0.1 to v0.3, Mixtral
/// 8x7B and 8x22B, Codestral 22B); the tekken versions of the others are assumed from Mistral's
/// release notes.
fn mistral_of(has: &dyn Fn(&str) -> bool) -> Template {
    let any = |names: &[&str]| names.iter().any(|n| has(n));
    let spm = |version| Template::Mistral { version, spm: true };
    let tekken = |version| Template::Mistral {
        version,
        spm: false,
    };
    if any(&["large-2411", "large@2411", "pixtral-large"]) {
        spm(7)
    } else if any(&[
        "8x22b",
        "2404",
        "large-2407",
        "large@2407",
        "mistral-large2",
        "tiny-2407",
        "codestral-2405",
        "codestral@2405",
        "codestral-22b",
        "codestral-mamba",
        "mamba-codestral",
        "7b-instruct-v3",
        "v0.3",
        "v0:3",
        "v0p3",
    ]) {
        spm(3)
    } else if any(&["2402", "small-2312", "tiny-2312"]) || (has("tiny") && !has("2407")) {
        spm(2)
    } else if any(&["medium-2312", "mistral-7b", "mixtral-8x7b"]) {
        spm(1)
    } else if any(&[
        "ministral-3",
        "2512",
        "medium-3",
        "large-3",
        "medium-latest",
        "large-latest",
    ]) {
        tekken(13)
    } else if any(&["devstral", "magistral", "small-3.2", "2506", "small-latest"]) {
        tekken(11)
    } else if any(&["small-3", "2501", "2503", "medium"]) {
        tekken(7)
    } else {
        tekken(3)
    }
}

/// Which part of the request a piece of the prompt belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    System,
    Tools,
    /// The template's own text and markers.
    Frame,
    Messages,
}

#[derive(Debug, Clone)]
enum Piece {
    /// A special token (one token), as the template spells it.
    Mark(&'static str),
    Text(Section, String),
}

/// A rendered prompt: text between special tokens.
#[derive(Debug, Clone, Default)]
pub struct Prompt {
    /// Whether the server counts added tokens spelled in the text as one each
    /// ([`Tokenizer::count_served`]): a Hugging Face tokenizer does; mistral-common and harmony
    /// encode text as text.
    served: bool,
    pieces: Vec<Piece>,
    /// Where the last user message begins (what a prompt cache holds is before it).
    last_user_at: Option<usize>,
}

impl Prompt {
    fn mark(&mut self, spelling: &'static str) {
        self.pieces.push(Piece::Mark(spelling));
    }
    fn push(&mut self, section: Section, s: &str) {
        if s.is_empty() {
            return;
        }
        match self.pieces.last_mut() {
            Some(Piece::Text(sec, t)) if *sec == section => t.push_str(s),
            _ => self.pieces.push(Piece::Text(section, s.to_string())),
        }
    }
    /// Template text with its special tokens spelled out: each of `specials` found in it is
    /// a mark, the rest frame text.
    fn spelled(&mut self, s: &str, specials: &[&'static str]) {
        let mut rest = s;
        while !rest.is_empty() {
            let next = specials
                .iter()
                .filter_map(|sp| rest.find(sp).map(|i| (i, *sp)))
                .min_by_key(|&(i, sp)| (i, std::cmp::Reverse(sp.len())));
            match next {
                Some((i, sp)) => {
                    self.frame(&rest[..i]);
                    self.mark(sp);
                    rest = &rest[i + sp.len()..];
                }
                None => {
                    self.frame(rest);
                    break;
                }
            }
        }
    }
    fn frame(&mut self, s: &str) {
        self.push(Section::Frame, s);
    }
    fn system(&mut self, s: &str) {
        self.push(Section::System, s);
    }
    fn tools(&mut self, s: &str) {
        self.push(Section::Tools, s);
    }
    fn message(&mut self, s: &str) {
        self.push(Section::Messages, s);
    }
    /// Message `i` of `c` begins here (what a prompt cache holds ends where the last user
    /// message begins).
    fn message_starts(&mut self, c: &Conversation, i: usize) {
        if c.last_user == Some(i) {
            self.last_user_at = Some(self.pieces.len());
        }
    }

    /// The whole text, special tokens spelled as the template spells them.
    pub fn text(&self) -> String {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Mark(s) => *s,
                Piece::Text(_, t) => t.as_str(),
            })
            .collect()
    }

    /// The special tokens in it.
    pub fn marks(&self) -> usize {
        self.pieces
            .iter()
            .filter(|p| matches!(p, Piece::Mark(_)))
            .count()
    }

    /// Tokens under `tok`: each mark one, each run of text between marks counted whole (so the
    /// total is exact), its sections' shares counted on their own and the difference of the
    /// joins given to the frame.
    fn count(&self, tok: Tokenizer) -> Counted {
        let mut c = Counted::default();
        let mut i = 0;
        while i < self.pieces.len() {
            if let Piece::Mark(_) = self.pieces[i] {
                c.frame += 1.0;
                if self.last_user_at.is_some_and(|at| i < at) {
                    c.prefix += 1.0;
                }
                i += 1;
                continue;
            }
            let start = i;
            while i < self.pieces.len() && matches!(self.pieces[i], Piece::Text(..)) {
                i += 1;
            }
            let run = &self.pieces[start..i];
            let texts: Vec<(Section, &str)> = run
                .iter()
                .filter_map(|p| match p {
                    Piece::Text(s, t) => Some((*s, t.as_str())),
                    Piece::Mark(_) => None,
                })
                .collect();
            let count = |t: &str| match self.served {
                true => tok.count_served(t),
                false => tok.count(t),
            };
            let whole = match texts.len() {
                1 => count(texts[0].1),
                _ => count(&texts.iter().map(|(_, t)| *t).collect::<String>()),
            };
            let mut parts = 0.0;
            for (k, (s, t)) in texts.iter().enumerate() {
                let n = match texts.len() {
                    1 => whole,
                    _ => count(t),
                };
                parts += n;
                *c.section(*s) += n;
                if self.last_user_at.is_some_and(|at| start + k < at) {
                    c.prefix += n;
                }
            }
            c.frame += whole - parts;
        }
        if self.last_user_at.is_none() {
            c.prefix = c.total();
        }
        c
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Counted {
    system: f64,
    tools: f64,
    frame: f64,
    messages: f64,
    prefix: f64,
}

impl Counted {
    fn section(&mut self, s: Section) -> &mut f64 {
        match s {
            Section::System => &mut self.system,
            Section::Tools => &mut self.tools,
            Section::Frame => &mut self.frame,
            Section::Messages => &mut self.messages,
        }
    }
    fn total(&self) -> f64 {
        self.system + self.tools + self.frame + self.messages
    }
}

/// The function tools of a request in the OpenAI Chat shape the templates take
/// (`{"type": "function", "function": {"name", "description", "parameters"}}`), in order;
/// a provider's server tools, which no template renders, are left out.
pub fn function_tools(req: &Request) -> Vec<Value> {
    req.tool_refs()
        .filter(|d| !d.is_deferred())
        .flat_map(|d| match d.is_namespace() {
            true => d.members(),
            false => vec![d],
        })
        .filter_map(function_tool)
        .collect()
}

/// One definition as a Chat Completions function tool.
fn function_tool(d: ToolRef) -> Option<Value> {
    let p = d.parts()?;
    let mut f = serde_json::Map::new();
    f.insert("name".into(), p.name.into());
    f.insert("description".into(), p.description.into());
    f.insert("parameters".into(), p.schema.value().into_owned());
    Some(serde_json::json!({"type": "function", "function": Value::Object(f)}))
}

/// Render a request with a template.
pub fn render(req: &Request, t: Template) -> Prompt {
    render_parts(&conversation::read(req), &function_tools(req), t)
}

/// The tokens of a set of definitions as the template declares them (the tools section alone,
/// its fixed text not included).
pub fn defs_tokens(defs: &[ToolRef], t: Template, tok: Tokenizer) -> f64 {
    let tools: Vec<Value> = defs.iter().filter_map(|d| function_tool(*d)).collect();
    render_parts(&Conversation::default(), &tools, t)
        .count(tok)
        .tools
}

/// Render a conversation and tools with a template.
pub fn render_parts(c: &Conversation, tools: &[Value], t: Template) -> Prompt {
    let mut p = Prompt {
        served: !matches!(t, Template::Mistral { .. } | Template::Harmony),
        ..Prompt::default()
    };
    match t {
        Template::KimiK2 => kimi::k2(c, tools, &mut p),
        Template::KimiTs => kimi::ts(c, tools, kimi::Declare::TypeScript, &mut p),
        Template::KimiJson => kimi::ts(c, tools, kimi::Declare::PythonJson, &mut p),
        Template::KimiK2Thinking => kimi::k2_thinking(c, tools, &mut p),
        Template::Qwen { default_system } => qwen::qwen3(c, tools, default_system, &mut p),
        Template::Qwen35 => qwen::qwen35(c, tools, &mut p),
        Template::Qwen3Coder => qwen_coder::coder(c, tools, &mut p),
        Template::Qwq => qwen::qwq(c, tools, &mut p),
        Template::Glm { compact } => glm::render(c, tools, compact, &mut p),
        Template::DeepseekV3 => deepseek::v3(c, tools, &mut p),
        Template::DeepseekR1 => deepseek::r1(c, tools, &mut p),
        Template::DeepseekV4 => deepseek::v4(c, tools, &mut p),
        Template::Mistral { version, .. } => mistral::render(c, tools, version, &mut p),
        Template::Harmony => harmony::render(c, tools, &mut p),
        Template::Llama { llama4 } => llama::render(c, tools, llama4, &mut p),
    }
    p
}

/// Why a template refuses a request, as the server that renders it would (a 400), if it does:
/// Llama's templates with tools and no message, or (3.x) parallel calls; Qwen 3.5's with a
/// system message after the first; mistral-common's validation. Checked against the templates' own errors
/// (`fixtures/open-templates`).
pub fn refusal(req: &Request, t: Template) -> Option<String> {
    let c = conversation::read(req);
    match t {
        Template::Llama { llama4 } => llama::refusal(&c, &function_tools(req), llama4),
        Template::Qwen35 => c
            .messages
            .iter()
            .any(|m| m.role == Role::System)
            .then(|| "System message must be at the beginning.".into()),
        Template::Mistral { version, .. } => mistral::refusal(&c, version),
        Template::KimiK2
        | Template::KimiTs
        | Template::KimiJson
        | Template::KimiK2Thinking
        | Template::Qwen { .. }
        | Template::Qwen3Coder
        | Template::Qwq
        | Template::Glm { .. }
        | Template::DeepseekV3
        | Template::DeepseekR1
        | Template::DeepseekV4
        | Template::Harmony => None,
    }
}

/// What a request bills under a template and tokenizer.
pub fn billed(req: &Request, t: Template, tok: Tokenizer, tools: &super::ToolsBilling) -> Billing {
    let functions = function_tools(req);
    let mut c = render_parts(&conversation::read(req), &functions, t).count(tok);
    // Deferred definitions a result loads (a tool search's references) are billed where they
    // are loaded, as the template declares them ([`super::tools_billing`]).
    c.messages += tools.expanded_tokens;
    Billing {
        input_tokens: c.total().round() as u64,
        system_tokens: c.system.round() as u64,
        message_tokens: c.messages.round() as u64,
        tool_tokens: c.tools.round() as u64,
        overhead_tokens: c.frame.round() as u64,
        prefix_tokens: c.prefix.round() as u64,
        tools_billed: functions.len() + tools.expanded,
        tools_deferred: req.tool_refs().filter(|d| d.is_deferred()).count(),
        thoughts_resent: 0,
        tools: tools.clone(),
    }
}

/// Whether the conversation has a message of this role after the last user message (a
/// template's "history" rules differ before and after it).
fn after_last_user(c: &Conversation, i: usize) -> bool {
    c.last_user.is_some_and(|u| i > u)
}

#[cfg(test)]
mod tests;
