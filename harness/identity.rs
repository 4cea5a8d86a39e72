//! Model identity, apart from price: any id a user or a recording writes (a bare name, a dated
//! or retired id, a provider's spelling, a Bedrock or cross-region id, a Vertex `@date` id, a
//! Hugging Face repo id, an Ollama tag, or a host's prefix: OpenRouter, Groq, Together,
//! Fireworks, Vercel, LiteLLM, DeepInfra, Cloudflare) resolved to the model it names: its
//! provider, the render model its requests are billed by (Claude's tool prompt per model, the
//! OpenAI generation, the Gemini generation and API, an open family's chat template) and its
//! tokenizer. A model is counted whether or not anything prices it; a price card, where one
//! exists, adds the price and never changes the count, but for a hand card written for that very
//! id (whose rules are sourced for it).

use crate::billing::render::open::{self, Template};
use crate::billing::render::{anthropic_family, claude, gemini::Gemini};
use crate::billing::RenderModel;
use crate::error::{Error, Result};
use crate::pricing::PriceCard;
use crate::tokens::claude_exact::Family;
use crate::tokens::Tokenizer;

/// Who serves a model's family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Maker {
    Anthropic,
    Openai,
    Google,
    /// An open-weight family, by its chat template.
    Open(Template),
}

/// What an id names.
#[derive(Debug, Clone)]
pub struct Identity {
    /// The id as given.
    pub id: String,
    /// The model's own name, without host prefixes, region, date suffix or tag separators.
    pub model: String,
    /// The host a prefix or spelling names (`openrouter`, `bedrock`, `vertex_ai`, ...), if any.
    pub host: Option<String>,
    pub maker: Maker,
    /// The render model its requests are billed by.
    pub render: RenderModel,
    /// `render` as a card writes it (`anthropic:<model>`, `openai:<model>`, `open:<template>`,
    /// `gemini:<model>`, `vertex:<model>`).
    pub render_spec: String,
    pub tokenizer: Tokenizer,
    /// How the rules were chosen, for a label.
    pub note: String,
}

/// Host prefixes, longest first: a path segment that names where the model is served, not
/// the model.
const HOSTS: &[&str] = &[
    "accounts/fireworks/models",
    "openrouter",
    "groq",
    "together_ai",
    "together",
    "fireworks_ai",
    "fireworks",
    "vercel_ai_gateway",
    "vercel",
    "litellm_proxy",
    "litellm",
    "deepinfra",
    "cloudflare",
    "@cf",
    "bedrock",
    "bedrock_converse",
    "vertex_ai",
    "vertex",
    "azure",
    "azure_ai",
    "ollama",
    "ollama_chat",
    "hosted_vllm",
    "openai",
    "anthropic",
    "gemini",
    "google",
    "moonshot",
    "moonshotai",
    "deepseek",
    "deepseek-ai",
    "qwen",
    "dashscope",
    "zai",
    "zai-org",
    "thudm",
    "mistral",
    "mistralai",
    "meta-llama",
    "meta",
    "nvidia",
    "huggingface",
];

/// Bedrock's cross-region inference prefixes.
const REGIONS: &[&str] = &[
    "us.", "eu.", "apac.", "global.", "jp.", "au.", "ca.", "us-gov.",
];

/// The id without its host path, region and tag spelling, lower case; and the first host named.
fn strip(id: &str) -> (String, Option<String>) {
    let mut s = id.trim().to_string();
    let mut host = None;
    loop {
        let lower = s.to_ascii_lowercase();
        let Some(h) = HOSTS.iter().find(|h| lower.starts_with(&format!("{h}/"))) else {
            break;
        };
        host.get_or_insert_with(|| h.trim_start_matches('@').to_string());
        s = s[h.len() + 1..].to_string();
    }
    // A region or deployment segment left (`bedrock/us-east-1/...`): the model is the last one.
    let mut s = s.rsplit('/').next().unwrap_or(&s).to_ascii_lowercase();
    for r in REGIONS {
        if let Some(rest) = s.strip_prefix(r) {
            if rest.contains('.') {
                s = rest.to_string();
                host.get_or_insert_with(|| "bedrock".into());
            }
        }
    }
    for vendor in [
        "anthropic.",
        "meta.",
        "mistral.",
        "moonshotai.",
        "qwen.",
        "deepseek.",
        "openai.",
    ] {
        if let Some(rest) = s.strip_prefix(vendor) {
            s = rest.to_string();
            host.get_or_insert_with(|| "bedrock".into());
        }
    }
    // Bedrock's version (`-v1:0`), Vertex's `@date`, an Ollama tag (`gpt-oss:120b`).
    if let Some(at) = s.find('@') {
        let date = s[at + 1..].to_string();
        s = format!("{}-{date}", &s[..at]);
        host.get_or_insert_with(|| "vertex_ai".into());
    }
    if let Some((head, tag)) = s.split_once(':') {
        s = match tag {
            "0" | "1" | "2" | "latest" => head.to_string(),
            _ => format!("{head}-{tag}"),
        };
    }
    (s, host)
}

/// The model an id names, with its rules. A truly unknown model is refused with suggestions
/// from its own family where it has one.
pub fn resolve(id: &str) -> Result<Identity> {
    let shown: String = id.trim().chars().take(100).collect();
    if id.trim().is_empty() || id.len() > 200 {
        return Err(Error::input(format!("model `{shown}`: not a model id")));
    }
    identify(id).ok_or_else(|| {
        let snap = crate::pricing::litellm::Snapshot::embedded();
        let near = crate::pricing::family::closest(&strip(id).0, snap);
        Error::input(format!(
            "unknown model `{shown}`: toolcost knows no family for it (Claude, OpenAI, Gemini, Kimi, Qwen, GLM, DeepSeek, Mistral, gpt-oss, Llama); {}",
            match near.is_empty() {
                true => "`toolcost prices list` lists the models it prices".to_string(),
                false => format!("closest: {}", near.join(", ")),
            }
        ))
    })
}

/// [`resolve`] without the refusal: `None` for an id no family claims. Cheap enough for the
/// gateway to ask on every request (the suggestions of a refusal are not looked for).
pub fn identify(id: &str) -> Option<Identity> {
    if id.trim().is_empty() || id.len() > 200 {
        return None;
    }
    let (model, host) = strip(id);
    let vertex = host.as_deref().is_some_and(|h| h.starts_with("vertex"));
    let made =
        |maker, render: RenderModel, render_spec: String, tokenizer, note: String| Identity {
            id: id.trim().to_string(),
            model: model.clone(),
            host: host.clone(),
            maker,
            render,
            render_spec,
            tokenizer,
            note,
        };
    if model.starts_with("claude") {
        let key = claude::model_key(&model);
        let family = Family::of_model(&key).unwrap_or(Family::V5);
        let (render, note) = match anthropic_family(&key) {
            Some(r) => (r, format!("{key}'s own tool-use prompt")),
            None => {
                let p = claude::tool_prompt_of_family(family);
                (
                    anthropic_family(p.model).expect("the table holds each family's newest model"),
                    format!("no tool-use prompt known for {key}: its tokenizer family's newest model's ({}, assumed)", p.model),
                )
            }
        };
        let tok = match family {
            Family::V3 => Tokenizer::ClaudeV3,
            Family::V4_7 => Tokenizer::ClaudeV4_7,
            Family::V5 => Tokenizer::ClaudeV5,
        };
        let spec = match &render {
            RenderModel::Anthropic { family, .. } => format!("anthropic:{family}"),
            other => other.name(),
        };
        return Some(made(Maker::Anthropic, render, spec, tok, note));
    }
    if model.starts_with("gemini") || model.starts_with("gemma") && model.contains("gemini") {
        let g = Gemini::of_model(&model, vertex);
        let api = if vertex { "vertex" } else { "gemini" };
        return Some(made(
            Maker::Google,
            RenderModel::Gemini(g),
            format!("{api}:{model}"),
            Tokenizer::Gemma3,
            format!(
                "Gemini {}.{} on the {}",
                g.generation / 10,
                g.generation % 10,
                if vertex {
                    "Vertex AI API"
                } else {
                    "Developer API"
                }
            ),
        ));
    }
    // gpt-oss is an open model (harmony), not an OpenAI API model.
    if let Some(t) = open::of_model(&model) {
        let (tok, own) = t.tokenizer();
        let mut note = format!("chat template {}", t.source());
        if !own {
            note.push_str(&format!("; {} stands in for its vocabulary", tok.name()));
        }
        return Some(made(
            Maker::Open(t),
            RenderModel::Open(t),
            format!("open:{}", t.name()),
            tok,
            note,
        ));
    }
    let openai = ["gpt-", "o1", "o3", "o4", "chatgpt", "codex", "computer-use"];
    if openai.iter().any(|p| model.starts_with(p)) {
        // Two generations: cl100k models with the cookbook's func_init 10, o200k ones (gpt-4o
        // and after, the o-series) with 7.
        let old = model.starts_with("gpt-4-") && !model.starts_with("gpt-4o")
            || model == "gpt-4"
            || model.starts_with("gpt-3.5");
        let (tok, func_init) = match old {
            true => (Tokenizer::Cl100k, 10),
            false => (Tokenizer::O200k, 7),
        };
        let render = RenderModel::Openai { func_init };
        let spec = format!("openai:{model}");
        return Some(made(
            Maker::Openai,
            render,
            spec,
            tok,
            format!("OpenAI {model}"),
        ));
    }
    None
}

impl Identity {
    /// The hand card written for this very id, if there is one (its rules are sourced for it).
    pub fn hand_card(&self) -> Option<&'static PriceCard> {
        PriceCard::all().iter().find(|c| c.id == self.id.trim())
    }

    /// The render model and tokenizer a request of this model is counted with: a hand card's
    /// for its own id, else the model's own.
    pub fn rules(&self) -> (RenderModel, Tokenizer, String) {
        match self.hand_card() {
            Some(c) => (c.render_model(), c.tokenizer(), c.render.clone()),
            None => (self.render, self.tokenizer, self.render_spec.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_as_written_resolve_to_their_own_model() {
        for (id, model, host) in [
            (
                "us.anthropic.claude-sonnet-4-20250514-v1:0",
                "claude-sonnet-4-20250514-v1",
                Some("bedrock"),
            ),
            (
                "claude-3-7-sonnet@20250219",
                "claude-3-7-sonnet-20250219",
                Some("vertex_ai"),
            ),
            ("gpt-oss:120b", "gpt-oss-120b", None),
            (
                "openrouter/anthropic/claude-sonnet-4.5",
                "claude-sonnet-4.5",
                Some("openrouter"),
            ),
            (
                "moonshotai/Kimi-K2-Instruct-0905",
                "kimi-k2-instruct-0905",
                Some("moonshotai"),
            ),
            (
                "accounts/fireworks/models/kimi-k2p5",
                "kimi-k2p5",
                Some("accounts/fireworks/models"),
            ),
            (
                "@cf/moonshotai/kimi-k2.7-code",
                "kimi-k2.7-code",
                Some("cf"),
            ),
        ] {
            let (m, h) = strip(id);
            assert_eq!((m.as_str(), h.as_deref()), (model, host), "{id}");
        }
    }
}
