//! The `mock` upstream: a model of provider accounting, not a fake result.
//!
//! It bills a request the way the provider of its format and model would (render model,
//! tool-use overhead, deferred definitions unbilled until referenced), models automatic prefix
//! caching (the longest prefix of tools, system and messages seen before is read from cache once
//! it reaches the card's minimum), executes provider-side tool search over the deferred
//! definitions in the request (BM25, or regex with `re.search` semantics), and answers with the
//! step the caller names in `x-toolcost-next` (what a competent model does next in the task's
//! trajectory), or a short final text.

use crate::pricing::{PriceCard, Usage};
use crate::tokens::{billed_input, Tokenizer};
use crate::wire::{self, Format, Request};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// What the mock decided for one request.
#[derive(Debug, Clone)]
pub struct Answer {
    pub card: PriceCard,
    pub tokenizer: Tokenizer,
    pub usage: Usage,
    /// Content blocks in Anthropic form (converted for OpenAI answers).
    pub content: Vec<Value>,
    pub stop_reason: &'static str,
}

impl Answer {
    /// The answer in the form every provider format renders.
    pub fn reply(&self) -> crate::provider::Reply<'_> {
        crate::provider::Reply {
            content: &self.content,
            stop_reason: self.stop_reason,
            usage: &self.usage,
        }
    }
}

/// The price card a request's model maps to.
pub fn card_for(format: Format, model: &str) -> PriceCard {
    let m = model.to_lowercase();
    let id = if m.contains("kimi") {
        "kimi-k2.7-code"
    } else if m.contains("haiku") {
        "claude-haiku-4.5"
    } else if m.contains("claude") {
        "claude-sonnet-4.5"
    } else if m.contains("gpt-4.1") {
        "gpt-4.1"
    } else if m.contains("gpt") {
        "gpt-4o"
    } else {
        format.spec().default_card()
    };
    PriceCard::all()
        .into_iter()
        .find(|c| c.id == id || c.id == model)
        .expect("embedded card")
}

/// What to say when a model is billed at a card that is not its own: an unknown model falls
/// back to a family's or the format's default card, and the row must say so.
pub fn card_warning(format: Format, model: &str) -> Option<String> {
    let card = card_for(format, model);
    let norm = |s: &str| s.to_lowercase().replace('.', "-");
    let (m, id) = (norm(model), norm(&card.id));
    // The card's own name inside the model's (`claude-sonnet-4-5-20250929`,
    // `@cf/moonshotai/kimi-k2.7-code`) is the card's model; anything else is a stand-in.
    let own = m.contains(&id);
    (!own).then(|| {
        format!(
            "no price card for model `{model}`: billed at the {} card's prices",
            card.id
        )
    })
}

/// Prefix chains seen per model: the cache's contents.
#[derive(Default)]
pub struct Mock {
    seen: Mutex<HashMap<String, HashSet<[u8; 32]>>>,
    counter: std::sync::atomic::AtomicU64,
}

fn chain(req: &Request) -> Vec<[u8; 32]> {
    let body = &req.body;
    let head = json!([
        body.get("tools"),
        body.get("system"),
        body.get("tool_choice")
    ]);
    let mut h: [u8; 32] = Sha256::digest(crate::json::compact(&head).as_bytes()).into();
    let mut out = vec![h];
    for m in body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let mut d = Sha256::new();
        d.update(h);
        d.update(crate::json::compact(m).as_bytes());
        h = d.finalize().into();
        out.push(h);
    }
    out
}

fn truncated(req: &Request, messages: usize) -> Request {
    let mut body = req.body.clone();
    if let Some(m) = body.get_mut("messages").and_then(Value::as_array_mut) {
        m.truncate(messages);
    }
    Request {
        format: req.format,
        body,
    }
}

impl Mock {
    pub fn next_id(&self) -> u64 {
        self.counter
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// Bill the request (input side only): total, cached and written input tokens.
    pub fn bill(&self, req: &Request) -> (PriceCard, Tokenizer, Usage) {
        let model = req.body.get("model").and_then(Value::as_str).unwrap_or("");
        let card = card_for(req.format, model);
        let tok = card.tokenizer();
        let render = card.render_model();
        let total = billed_input(req, render, tok).input_tokens;
        let links = chain(req);
        let mut seen = crate::sync::lock(&self.seen);
        let known = seen.entry(card.id.clone()).or_default();
        // The longest prefix (tools+system, then whole messages) sent before.
        let hit = (0..links.len()).rev().find(|&i| known.contains(&links[i]));
        known.extend(links.iter().copied());
        drop(seen);
        let cached = match hit {
            Some(i) => {
                let prefix = billed_input(&truncated(req, i), render, tok).input_tokens;
                if prefix >= card.min_cacheable.max(1) {
                    prefix.min(total)
                } else {
                    0
                }
            }
            None => 0,
        };
        let marks = crate::json::compact(&req.body).contains("\"cache_control\"");
        let written = if req.format.spec().cache_marks() && marks {
            let messages = req
                .body
                .get("messages")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            let prefix =
                billed_input(&truncated(req, messages.saturating_sub(1)), render, tok).input_tokens;
            prefix.saturating_sub(cached)
        } else {
            0
        };
        let usage = Usage {
            uncached_input: total - cached - written.min(total - cached),
            cached_input: cached,
            cache_write: written.min(total - cached),
            output: 0,
        };
        (card, tok, usage)
    }

    /// Bill and answer a request with the named next step.
    pub fn answer(&self, req: &Request, step: Option<&Value>) -> Result<Answer, String> {
        let (card, tok, mut usage) = self.bill(req);
        let n = self.next_id();
        let mut content = Vec::new();
        let mut stop = "end_turn";
        let step = step.cloned().unwrap_or_else(|| json!({"text": "Done."}));
        if let Some(search) = step.get("search") {
            let (name, found) = search_deferred(req, search)?;
            let id = format!("srvtoolu_mock_{n}");
            content
                .push(json!({"type": "server_tool_use", "id": id, "name": name, "input": search}));
            content.push(json!({"type": "tool_search_tool_result", "tool_use_id": id, "content": {
                "type": "tool_search_tool_search_result",
                "tool_references": found.iter().map(|f| json!({"type": "tool_reference", "tool_name": f})).collect::<Vec<_>>()}}));
        }
        let then = step.get("then").unwrap_or(&step);
        if let Some(text) = then.get("text").and_then(Value::as_str) {
            content.push(json!({"type": "text", "text": text}));
        }
        if let Some(tool) = then.get("tool").and_then(Value::as_str) {
            content.push(json!({"type": "tool_use", "id": format!("toolu_mock_{n}"), "name": tool, "input": then.get("input").cloned().unwrap_or(json!({}))}));
            stop = "tool_use";
        }
        let visible: String = content
            .iter()
            .map(|b| match b["type"].as_str() {
                Some("text") => b["text"].as_str().unwrap_or("").to_string(),
                Some("tool_use") | Some("server_tool_use") => format!(
                    "{}{}",
                    b["name"].as_str().unwrap_or(""),
                    crate::json::compact(&b["input"])
                ),
                _ => String::new(),
            })
            .collect();
        usage.output = tok.count(&visible).round().max(1.0) as u64;
        Ok(Answer {
            card,
            tokenizer: tok,
            usage,
            content,
            stop_reason: stop,
        })
    }
}

/// Run a provider-side tool search over the request's deferred definitions: 3 to 5 results.
fn search_deferred(req: &Request, search: &Value) -> Result<(String, Vec<String>), String> {
    let tool = req
        .tools()
        .iter()
        .find_map(|t| {
            t.get("type")
                .and_then(Value::as_str)
                .filter(|ty| ty.starts_with("tool_search_tool_"))
        })
        .ok_or("the step searches, but the request has no tool-search tool")?
        .to_string();
    let deferred: Vec<(String, String)> = req
        .tools()
        .iter()
        .filter(|t| wire::is_deferred(t))
        .filter_map(|t| wire::definition_parts(t).map(|(n, d, _)| (n.to_string(), d.to_string())))
        .collect();
    let name = if tool.contains("regex") {
        "tool_search_tool_regex"
    } else {
        "tool_search_tool_bm25"
    };
    let found = crate::resolve::search_definitions(&deferred, search, tool.contains("regex"))?;
    Ok((name.to_string(), found))
}
