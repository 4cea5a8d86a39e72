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
use crate::tokens::cache::{Pricing, PromptCache};
use crate::tokens::{billed_input, Tokenizer};
use crate::wire::{self, Format, Request};
use serde_json::{json, Value};
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

/// The mock's state: the provider's prompt cache, answer ids, and its clock.
pub struct Mock {
    cache: Mutex<PromptCache>,
    counter: std::sync::atomic::AtomicU64,
    started: std::time::Instant,
}

impl Default for Mock {
    fn default() -> Mock {
        Mock {
            cache: Mutex::new(PromptCache::default()),
            counter: std::sync::atomic::AtomicU64::new(0),
            started: std::time::Instant::now(),
        }
    }
}

/// Whose cache a request reads and at what time: the `x-toolcost-cache-scope` header (one
/// scope per task in the driver; otherwise `default`, as one organisation's key would be) and
/// the `x-toolcost-clock` header in seconds (the driver's virtual clock; otherwise the seconds
/// since the gateway started).
#[derive(Debug, Clone)]
pub struct When {
    pub scope: String,
    pub now: Option<f64>,
}

impl Default for When {
    fn default() -> When {
        When {
            scope: "default".into(),
            now: None,
        }
    }
}

impl Mock {
    pub fn next_id(&self) -> u64 {
        self.counter
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// Bill the request's input side: total, cached and written input tokens, or the
    /// provider's refusal. With `commit` false (count_tokens) the cache is neither read into
    /// nor written.
    pub fn bill(
        &self,
        req: &Request,
        when: &When,
        commit: bool,
    ) -> Result<(PriceCard, Tokenizer, Usage), String> {
        let model = req.body.get("model").and_then(Value::as_str).unwrap_or("");
        let card = card_for(req.format, model);
        let tok = card.tokenizer();
        let render = card.render_model();
        if let Some(reason) = req.format.spec().limits(req.tools(), None).first() {
            return Err(reason.clone());
        }
        let pricing = Pricing {
            rule: card.cache_rule(),
            render,
            tokenizer: tok,
            min_cacheable: card.min_cacheable,
            model: &card.id,
        };
        let now = when
            .now
            .unwrap_or_else(|| self.started.elapsed().as_secs_f64());
        let usage = crate::sync::lock(&self.cache)
            .bill(req, &pricing, &when.scope, now, commit)
            .map_err(|e| e.to_string())?;
        if usage.total_input() > card.context_window {
            return Err(format!(
                "prompt is too long: {} tokens > {} maximum",
                usage.total_input(),
                card.context_window
            ));
        }
        Ok((card, tok, usage))
    }

    /// Bill and answer a request with the named next step.
    pub fn answer(
        &self,
        req: &Request,
        when: &When,
        step: Option<&Value>,
    ) -> Result<Answer, String> {
        let (card, tok, mut usage) = self.bill(req, when, true)?;
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
            // The model goes on after the search within this answer: the search's blocks and
            // the definitions they load are input of this round.
            usage.uncached_input += search_input_tokens(req, &content, &card, tok);
        }
        let then = step.get("then").unwrap_or(&step);
        if let Some(text) = then.get("text").and_then(Value::as_str) {
            content.push(json!({"type": "text", "text": text}));
        }
        // One tool call, or several in parallel (`{"tools": [{"tool": ..., "input": ...}, ...]}`).
        let calls: Vec<&Value> = match then.get("tools").and_then(Value::as_array) {
            Some(many) => many.iter().collect(),
            None => vec![then],
        };
        for (k, call) in calls.iter().enumerate() {
            if let Some(tool) = call.get("tool").and_then(Value::as_str) {
                let id = if k == 0 {
                    format!("toolu_mock_{n}")
                } else {
                    format!("toolu_mock_{n}_{k}")
                };
                content.push(json!({"type": "tool_use", "id": id, "name": tool, "input": call.get("input").cloned().unwrap_or(json!({}))}));
                stop = "tool_use";
            }
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

/// Input tokens the search blocks of an answer add: the request with the blocks appended,
/// less the request.
fn search_input_tokens(req: &Request, blocks: &[Value], card: &PriceCard, tok: Tokenizer) -> u64 {
    let render = card.render_model();
    let mut with = req.clone();
    if let Some(m) = with.body.get_mut("messages").and_then(Value::as_array_mut) {
        m.push(json!({"role": "assistant", "content": blocks}));
    }
    billed_input(&with, render, tok)
        .input_tokens
        .saturating_sub(billed_input(req, render, tok).input_tokens)
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
