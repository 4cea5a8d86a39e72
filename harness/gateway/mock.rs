//! The `mock` upstream: a model of provider accounting, not a fake result.
//!
//! It bills a request the way the provider of its format and model would (render model,
//! tool-use overhead, deferred definitions unbilled until referenced), models automatic prefix
//! caching (the longest prefix of tools, system and messages seen before is read from cache once
//! it reaches the card's minimum), executes provider-side tool search over the deferred
//! definitions in the request (BM25, or regex with `re.search` semantics), and answers with the
//! step the caller names in `x-toolcost-next` (what a competent model does next in the task's
//! trajectory), or a short final text.

use crate::billing::billed_input;
use crate::billing::cache::{Pricing, PromptCache};
use crate::pricing::{PriceCard, Usage};
use crate::tokens::Tokenizer;
use crate::wire::{self, Format, Request, ToolEntry, ToolRef};
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
    /// Tokens the scripted model thought before it answered (in `usage.output`).
    pub thoughts: u64,
}

impl Answer {
    /// The answer in the form every provider format renders.
    pub fn reply(&self) -> crate::provider::Reply<'_> {
        crate::provider::Reply {
            content: &self.content,
            stop_reason: self.stop_reason,
            usage: &self.usage,
            thoughts: self.thoughts,
        }
    }
}

/// The price card a request's model maps to, with the model's own rules: a model whose id
/// resolves ([`crate::identity`]) is rendered and counted as itself whatever card prices it (a
/// retired Claude model keeps its own tool-use prompt, an unpriced open model its template), so
/// the gateway bills a body as `count --request` does; only a hand card written for that very
/// id keeps the rules written in it.
pub fn card_for(format: Format, model: &str) -> PriceCard {
    let mut card = priced_card(format, model);
    if let Some(id) = crate::identity::identify(model) {
        if id.hand_card().is_none() {
            card.render = id.render_spec.clone();
            card.tokenizer = id.tokenizer.name().to_string();
        }
    }
    card
}

/// The card whose prices a request's model is billed at.
fn priced_card(format: Format, model: &str) -> PriceCard {
    // The model's own card: a hand card, or one made from its LiteLLM entry.
    if let Some(own) = PriceCard::lookup(model) {
        return own;
    }
    let m = model.to_lowercase();
    let id = if m.contains("kimi") {
        "kimi-k2.7-code"
    } else if m.contains("haiku") {
        "claude-haiku-4.5"
    } else if m.contains("claude") && (m.contains("sonnet-4-5") || m.contains("sonnet-4.5")) {
        "claude-sonnet-4.5"
    } else if m.contains("claude") {
        // Any other Claude model: the current default (claude-sonnet-4-5 reaches end of life
        // on 2026-11-30 per the anthropic SDK 2.14.0's deprecation list).
        "claude-sonnet-4.6"
    } else if m.contains("gpt-4.1") {
        "gpt-4.1"
    } else if m.contains("gpt-5.4") {
        "gpt-5.4"
    } else if m.contains("gpt") {
        "gpt-4o"
    } else if m.contains("gemini") && m.contains("-pro") {
        "gemini-3.1-pro-preview"
    } else if m.contains("gemini") {
        "gemini-3.5-flash"
    } else {
        format.spec().default_card()
    };
    PriceCard::all()
        .iter()
        .find(|c| c.id == id || c.id == model)
        .cloned()
        .expect("embedded card")
}

/// What to say when a model is billed at a card that is not its own: an unknown model falls
/// back to a family's or the format's default card, and the row must say so.
pub fn card_warning(format: Format, model: &str) -> Option<String> {
    // A model is its card's when the card resolves from its name (a dated id, a gateway path,
    // an entry of the price table); a name that merely contains a card's
    // (`gpt-4o-mini-clone`) is billed at a stand-in.
    if PriceCard::lookup(model).is_some() {
        return None;
    }
    let card = card_for(format, model);
    Some(format!(
        "no price card for model `{model}`: billed at the {} card's prices",
        card.id
    ))
}

/// Requests larger than this are counted once before the prompt cache's lock is taken (an
/// assumed bound: below it, counting takes about as long as the lock is held anyway).
const WARM_OUTSIDE_LOCK_BYTES: usize = 256 * 1024;

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
        tok.ready().map_err(|e| e.to_string())?;
        let render = card.render_model();
        // Functions an `additional_tools` item adds are seen in full, as those in `tools` are.
        let added: Vec<ToolEntry> = req
            .messages()
            .iter()
            .filter(|m| m["type"] == "additional_tools")
            .flat_map(|m| m["tools"].as_array().cloned().unwrap_or_default())
            .map(ToolEntry::Json)
            .collect();
        let limits = match added.is_empty() {
            true => req.format.spec().limits(req.tools(), None),
            false => {
                let seen: Vec<ToolEntry> = req.tools().iter().cloned().chain(added).collect();
                req.format.spec().limits(&seen, None)
            }
        };
        if let Some(reason) = limits.first() {
            return Err(reason.clone());
        }
        match req.format {
            Format::OpenaiResponses => {
                crate::provider::openai_responses::refusals(&req.body, req.tools_placed())?
            }
            Format::AnthropicMessages => {
                crate::provider::tools::check_listed(
                    &req.body,
                    req.tools(),
                    req.tools_placed().is_some(),
                )?;
                crate::provider::anthropic_messages::refusals(&req.body, req.tools_placed())?
            }
            Format::OpenaiChat => crate::provider::tools::check_listed(
                &req.body,
                req.tools(),
                req.tools_placed().is_some(),
            )?,
            Format::Gemini => crate::provider::gemini::refusals(&req.body, req.tools())?,
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
        // A large request's texts are counted before the cache's lock is taken (the counts are
        // remembered), so that billing under the lock finds them and other requests, whatever
        // their scope, do not wait on its tokenizing.
        if req.wire_bytes() > WARM_OUTSIDE_LOCK_BYTES {
            let _ = crate::billing::billed_input(req, render, tok);
        }
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
        let mut client_search = false;
        if let Some(search) = step.get("search") {
            match search_deferred(req, search)? {
                Search::Anthropic { name, found } => {
                    let id = format!("srvtoolu_mock_{n}");
                    content.push(
                        json!({"type": "server_tool_use", "id": id, "name": name, "input": search}),
                    );
                    content.push(json!({"type": "tool_search_tool_result", "tool_use_id": id, "content": {
                        "type": "tool_search_tool_search_result",
                        "tool_references": found.iter().map(|f| json!({"type": "tool_reference", "tool_name": f})).collect::<Vec<_>>()}}));
                }
                Search::OpenaiServer { loaded } => {
                    content.push(json!({"type": "tool_search_call", "id": format!("tsc_mock_{n}"), "call_id": null,
                        "execution": "server", "status": "completed", "arguments": search}));
                    content.push(json!({"type": "tool_search_output", "id": format!("tso_mock_{n}"), "call_id": null,
                        "execution": "server", "status": "completed", "tools": loaded}));
                }
                Search::OpenaiClient => {
                    // The client runs the search: the model stops at its call.
                    content.push(json!({"type": "tool_search_call", "id": format!("tsc_mock_{n}"),
                        "call_id": format!("call_mock_{n}"), "execution": "client", "status": "completed",
                        "arguments": search}));
                    client_search = true;
                }
            }
            // The model goes on after the search within this answer: the search's blocks and
            // the definitions they load are input of this round.
            usage.uncached_input += blocks_input_tokens(req, &content, &card, tok);
        }
        let none = json!({});
        let then = match client_search {
            true => &none,
            false => step.get("then").unwrap_or(&step),
        };
        // A program the code-execution tool runs: its output ends it, before the model's words.
        if let Some(stdout) = then.get("program_output").and_then(Value::as_str) {
            let (id, _) = running_program(req)?;
            let block = json!({"type": "code_execution_tool_result", "tool_use_id": id, "content": {
                "type": "code_execution_result", "stdout": stdout, "stderr": "", "return_code": 0, "content": []}});
            // The model reads the output before it answers: input of this round.
            usage.uncached_input +=
                blocks_input_tokens(req, std::slice::from_ref(&block), &card, tok);
            content.push(block);
        }
        if let Some(text) = then.get("text").and_then(Value::as_str) {
            content.push(json!({"type": "text", "text": text}));
        }
        if let Some(program) = then.get("program") {
            let (id, caller) = match program.get("code").and_then(Value::as_str) {
                Some(code) => {
                    let id = format!("srvtoolu_mock_{n}");
                    content.push(
                        json!({"type": "server_tool_use", "id": id, "name": "code_execution",
                        "input": {"code": code}}),
                    );
                    (id, code_execution_type(req)?)
                }
                None => running_program(req)?,
            };
            for (k, call) in program["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                let name = call.get("tool").and_then(Value::as_str).unwrap_or("");
                content.push(
                    json!({"type": "tool_use", "id": format!("toolu_mock_{n}_p{k}"), "name": name,
                    "input": call.get("input").cloned().unwrap_or(json!({})),
                    "caller": {"type": caller, "tool_id": id}}),
                );
                stop = "tool_use";
            }
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
            // Calls the running code makes are not the model's words.
            .filter(|b| !wire::called_from_code(b))
            .map(|b| match b["type"].as_str() {
                Some("text") => b["text"].as_str().unwrap_or("").to_string(),
                Some("tool_use") | Some("server_tool_use") => format!(
                    "{}{}",
                    b["name"].as_str().unwrap_or(""),
                    crate::json::compact(&b["input"])
                ),
                Some("tool_search_call") => crate::json::compact(&b["arguments"]),
                _ => String::new(),
            })
            .collect();
        // The step may say how long the model thought (`"thoughts": N`, simulated): billed as
        // output, as every provider bills thinking.
        let thoughts = step
            .get("thoughts")
            .and_then(Value::as_u64)
            .unwrap_or(0)
            .min(MAX_THOUGHTS);
        usage.output = (tok.count(&visible).round().max(1.0) as u64).saturating_add(thoughts);
        Ok(Answer {
            card,
            tokenizer: tok,
            usage,
            content,
            stop_reason: stop,
            thoughts,
        })
    }
}

/// The most thinking a scripted step may ask for: a model's largest output.
const MAX_THOUGHTS: u64 = 1 << 20;

/// The program a request's code-execution tool is running: the id of the last `server_tool_use`
/// of `code_execution` with no result yet, and the tool's type (the callers' `type`).
fn running_program(req: &Request) -> Result<(String, String), String> {
    let mut open: Option<String> = None;
    for m in req.messages() {
        for b in m["content"].as_array().into_iter().flatten() {
            match b["type"].as_str() {
                Some("server_tool_use") if b["name"] == "code_execution" => {
                    open = b["id"].as_str().map(String::from)
                }
                Some("code_execution_tool_result") => open = None,
                _ => {}
            }
        }
    }
    let id =
        open.ok_or("the step goes on with a program, but none is running in this conversation")?;
    Ok((id, code_execution_type(req)?))
}

/// The code-execution tool type in a request's `tools`.
fn code_execution_type(req: &Request) -> Result<String, String> {
    req.tool_refs()
        .filter_map(ToolRef::kind)
        .find(|t| crate::provider::anthropic_messages::CODE_EXECUTION.contains(t))
        .map(String::from)
        .ok_or_else(|| "the step runs a program, but the request has no code execution tool".into())
}

/// Input tokens that blocks of an answer the model reads before it goes on add (a search's
/// results, a program's output): the request with the blocks appended, less the request.
fn blocks_input_tokens(req: &Request, blocks: &[Value], card: &PriceCard, tok: Tokenizer) -> u64 {
    let render = card.render_model();
    let mut with = req.clone();
    let key = req.format.spec().conversation_key();
    if let Some(m) = with.body.get_mut(key).and_then(Value::as_array_mut) {
        match blocks
            .first()
            .is_some_and(|b| b["type"] == "tool_search_call")
        {
            // Responses items stand alone in `input`.
            true => m.extend(blocks.iter().cloned()),
            false => m.push(json!({"role": "assistant", "content": blocks})),
        }
    }
    billed_input(&with, render, tok)
        .input_tokens
        .saturating_sub(billed_input(req, render, tok).input_tokens)
}

/// What a provider-side tool search found.
enum Search {
    /// Anthropic's tool-search tool: the names it returns as `tool_reference` blocks.
    Anthropic { name: String, found: Vec<String> },
    /// OpenAI's hosted `tool_search`: the loaded definitions (members of a namespace inside
    /// that namespace), as its `tool_search_output` carries them.
    OpenaiServer { loaded: Vec<Value> },
    /// OpenAI's `tool_search` with client execution: the client searches.
    OpenaiClient,
}

/// Run a provider-side tool search over the request's deferred definitions: 3 to 5 results.
fn search_deferred(req: &Request, search: &Value) -> Result<Search, String> {
    let tools = req.tools();
    let anthropic = req
        .tool_refs()
        .find_map(|t| t.kind().filter(|ty| ty.starts_with("tool_search_tool_")));
    let openai = req.tool_refs().find(|t| t.kind() == Some("tool_search"));
    let deferred: Vec<(String, String)> = wire::deferred_definitions(tools)
        .into_iter()
        .filter_map(|t| {
            t.parts()
                .map(|p| (p.name.to_string(), p.description.to_string()))
        })
        .collect();
    if let Some(tool) = anthropic {
        let regex = tool.contains("regex");
        let name = if regex {
            "tool_search_tool_regex"
        } else {
            "tool_search_tool_bm25"
        };
        let found = crate::resolve::search_definitions(&deferred, search, regex)?;
        return Ok(Search::Anthropic {
            name: name.to_string(),
            found,
        });
    }
    let tool = openai.ok_or("the step searches, but the request has no tool-search tool")?;
    if tool.get("execution").as_deref() == Some(&json!("client")) {
        return Ok(Search::OpenaiClient);
    }
    // The hosted search takes a query; a `pattern` is matched as a regex.
    let regex = search.get("pattern").is_some();
    let found = crate::resolve::search_definitions(&deferred, search, regex)?;
    let mut loaded: Vec<Value> = Vec::new();
    for name in &found {
        let Some(def) = wire::deferred_definitions(tools)
            .into_iter()
            .find(|d| d.parts().is_some_and(|p| p.name == name))
        else {
            continue;
        };
        let def = def.value().into_owned();
        match crate::provider::namespace_of(tools, name) {
            Some(ns) => {
                let ns_name = ns
                    .get("name")
                    .map(|n| n.into_owned())
                    .unwrap_or(Value::Null);
                match loaded
                    .iter_mut()
                    .find(|l| l["type"] == "namespace" && l["name"] == ns_name)
                {
                    Some(group) => group["tools"]
                        .as_array_mut()
                        .expect("tools")
                        .push(def),
                    None => loaded.push(json!({"type": "namespace", "name": ns_name,
                        "description": ns.get("description").map(|d| d.into_owned()).unwrap_or(Value::Null),
                        "tools": [def]})),
                }
            }
            None => loaded.push(def),
        }
    }
    Ok(Search::OpenaiServer { loaded })
}
