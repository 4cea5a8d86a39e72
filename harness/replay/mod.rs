//! `toolcost replay LOG`: the sessions of a gateway log written with `--log-bodies`, priced as
//! they were sent and as they would have been with the tools deferred behind a search, every
//! definition up front, or the set worth keeping loaded ([`keep`]).
//!
//! A request belongs to a session by its metadata (`x-toolcost-metadata`: `session`, or the
//! scenario, surface, catalogue size and task `toolcost run` writes), else by what every turn
//! of one conversation repeats: its format, model, system text and first user message. Within a
//! session the requests come in the log's order; a tool is called where a later request's
//! history first holds a call to it. Where a client names its MCP tools `mcp__server__tool`,
//! only those are weighed for deferral; its built-in tools are part of every request.
//!
//! Figures: as sent, each row's own input tokens and dollars (`observed`, or the mock's
//! `estimated`); the other strategies are `derived` from them, each request's input less its
//! definitions' own counts (`estimated` with the model's tokenizer and rendering), priced as
//! uncached input at the model's card. A search is assumed to find its tool the first time
//! (deferral's cost is a floor), and cache reads are not modelled.

pub mod keep;

use crate::error::Result;
use crate::report::{Column, Tabular};
use crate::wire::{Format, Request};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// What a replay is run with.
#[derive(Debug, Clone)]
pub struct Options {
    /// Tokens of the search tool's definition, billed on every request while any tool is
    /// deferred (assumed: a regex or BM25 search tool's definition is some 300 to 700 tokens).
    pub search_tokens: u64,
}

/// How Claude Code and claude-cli name an MCP server's tool: `mcp__{server}__{tool}`.
const MCP_PREFIX: &str = "mcp__";

/// A request body larger than this is skipped (said in the notes): the gateway's own bound.
const MAX_BODY: usize = 64 << 20;

/// One session, or all of them, on each strategy.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SessionRow {
    pub session: String,
    pub model: String,
    pub requests: usize,
    /// Tools the session's requests defined, and those it called.
    pub tools: usize,
    pub called: usize,
    /// As sent: the rows' own input tokens, and their dollars as logged (input, output and
    /// cache as billed).
    pub as_sent_tokens: u64,
    pub as_sent_usd: f64,
    /// The as-sent input tokens at the card's uncached input price: what the strategies'
    /// dollars below compare with.
    pub as_sent_input_usd: f64,
    /// Every definition up front (no search tool). Each strategy's dollars are its input
    /// tokens at the card's uncached input price.
    pub up_front_tokens: u64,
    pub up_front_usd: f64,
    /// Every definition deferred, loaded where first called.
    pub deferred_tokens: u64,
    pub deferred_usd: f64,
    /// The recommended set kept loaded, the rest deferred.
    pub best_tokens: u64,
    pub best_usd: f64,
    pub label: String,
}

impl Tabular for SessionRow {
    const COLUMNS: &'static [Column] = &[
        Column::field("as_sent_usd")
            .places(4)
            .title("as sent $ (logged)"),
        Column::field("as_sent_input_usd")
            .places(4)
            .title("as sent input $"),
        Column::field("up_front_usd")
            .places(4)
            .title("up front input $"),
        Column::field("deferred_usd")
            .places(4)
            .title("deferred input $"),
        Column::field("best_usd")
            .places(4)
            .title("best set input $"),
    ];
    const BRIEF: &'static [&'static str] = &[
        "session",
        "requests",
        "tools",
        "called",
        "as_sent_tokens",
        "up_front_tokens",
        "deferred_tokens",
        "best_tokens",
        "as_sent_input_usd",
        "best_usd",
    ];
    const CONTEXT: &'static [&'static str] = &["model"];
}

/// A replay: each session, all together, and the set worth keeping loaded.
#[derive(Debug, Clone, Serialize)]
pub struct Replay {
    pub sessions: Vec<SessionRow>,
    pub total: SessionRow,
    /// The tools worth keeping loaded, and those worth deferring.
    pub keep_loaded: Vec<String>,
    pub defer: Vec<String>,
    pub notes: Vec<String>,
}

/// One session as read, before it is priced.
struct Gathered {
    key: String,
    model: String,
    /// Dollars per input token on the model's card.
    price: f64,
    as_sent_tokens: u64,
    as_sent_usd: f64,
    labels: Vec<String>,
    session: keep::Session,
}

/// Read a log's sessions and price them.
pub fn replay(log: &Path, opts: &Options) -> Result<Replay> {
    let conn = crate::gateway::log::open_with_bodies(log, "replay its sessions")?;
    let mut stmt = conn.prepare(
        "SELECT l.id, l.provider_format, l.model, l.status, l.input_tokens, l.cost_usd,
                l.usage_source, l.metadata, b.body
         FROM log l LEFT JOIN request_body b ON b.log_id = l.id ORDER BY l.id",
    )?;
    let mut rows = stmt.query([])?;
    let mut tools: Vec<(String, u64)> = Vec::new();
    let mut tool_index: HashMap<String, usize> = HashMap::new();
    // A definition's tokens, by model and its compact text.
    let mut memo: HashMap<(String, String), u64> = HashMap::new();
    type Rules = Option<(
        crate::billing::RenderModel,
        crate::tokens::Tokenizer,
        crate::pricing::PriceCard,
    )>;
    let mut cards: HashMap<(&str, String), Rules> = HashMap::new();
    let mut sessions: Vec<Gathered> = Vec::new();
    let mut by_key: HashMap<String, usize> = HashMap::new();
    let (mut no_body, mut unread, mut failed) = (0usize, 0usize, 0usize);
    while let Some(r) = rows.next()? {
        let status: i64 = r.get(3)?;
        if !(200..300).contains(&status) {
            failed += 1;
            continue;
        }
        let body: Option<Vec<u8>> = r.get(8)?;
        let Some(body) = body.filter(|b| b.len() <= MAX_BODY) else {
            no_body += 1;
            continue;
        };
        let format_name: String = r.get(1)?;
        let model: String = r.get(2)?;
        let Some(format) = Format::ALL.into_iter().find(|f| f.name() == format_name) else {
            unread += 1;
            continue;
        };
        let routed = model
            .strip_prefix("vertex_ai/")
            .unwrap_or(&model)
            .to_string();
        let Ok(req) = Request::parse_routed(format, &body, Some(&routed)) else {
            unread += 1;
            continue;
        };
        let input = u64::try_from(r.get::<_, i64>(4)?).unwrap_or(0);
        let cost: f64 = r.get(5)?;
        let source: String = r.get(6)?;
        let metadata: String = r.get(7)?;
        // Each model's rules, looked up once per model of the log.
        let rules = cards
            .entry((format.name(), model.clone()))
            .or_insert_with(|| {
                let card = crate::gateway::mock::card_for(format, &model);
                let tok = card.tokenizer();
                tok.ready().ok().map(|_| (card.render_model(), tok, card))
            });
        let Some((render, tok, card)) = rules.as_ref() else {
            unread += 1;
            continue;
        };
        let (render, tok) = (*render, *tok);
        // The definitions the model saw, each with its tokens. Where the client names MCP tools
        // `mcp__server__tool` (Claude Code, claude-cli), those are the ones a configuration
        // can defer; its built-in tools stay in every request's base.
        let mcp_named = req
            .tool_refs()
            .any(|d| d.name().is_some_and(|n| n.starts_with(MCP_PREFIX)));
        let mut present: Vec<(usize, u64)> = Vec::new();
        for d in req
            .tool_refs()
            .filter(|d| !d.is_deferred())
            .filter(|d| !mcp_named || d.name().is_some_and(|n| n.starts_with(MCP_PREFIX)))
        {
            let Some(parts) = d.parts() else { continue };
            let name = parts.name;
            let key = (
                card.id.clone(),
                format!(
                    "{name}\u{0}{}\u{0}{}",
                    parts.description,
                    crate::json::compact(&parts.schema.value())
                ),
            );
            let n = match memo.get(&key) {
                Some(n) => *n,
                None => {
                    let n = crate::billing::definition_tokens(&[d], render, tok)
                        .first()
                        .copied()
                        .unwrap_or(0.0)
                        .max(0.0)
                        .round() as u64;
                    memo.insert(key, n);
                    n
                }
            };
            let t = *tool_index.entry(name.to_string()).or_insert_with(|| {
                tools.push((name.to_string(), n));
                tools.len() - 1
            });
            present.push((t, n));
        }
        let key = session_key(format, &model, &req, &metadata);
        let at = *by_key.entry(key.clone()).or_insert_with(|| {
            sessions.push(Gathered {
                key,
                model: card.id.clone(),
                price: card.input / 1e6,
                as_sent_tokens: 0,
                as_sent_usd: 0.0,
                labels: Vec::new(),
                session: keep::Session::default(),
            });
            sessions.len() - 1
        });
        let g = &mut sessions[at];
        let index = g.session.base.len();
        g.as_sent_tokens += input;
        g.as_sent_usd += cost;
        if !g.labels.contains(&source) {
            g.labels.push(source);
        }
        let defs: u64 = present.iter().map(|(_, n)| n).sum();
        g.session.base.push(input.saturating_sub(defs));
        for (t, _) in present {
            if !g.session.defined.contains(&t) {
                g.session.defined.push(t);
            }
        }
        // A call in this request's history was made by an earlier answer.
        let conversation = crate::billing::render::open::conversation::read(&req);
        for call in conversation.messages.iter().flat_map(|m| &m.calls) {
            if let Some(&t) = tool_index.get(&call.name) {
                g.session
                    .first_call
                    .entry(t)
                    .or_insert(index.saturating_sub(1));
            }
        }
    }
    let mut notes = Vec::new();
    if no_body > 0 {
        notes.push(format!(
            "{no_body} answered row(s) without a body (or over {} MiB): not replayed",
            MAX_BODY >> 20
        ));
    }
    if unread > 0 {
        notes.push(format!(
            "{unread} row(s) whose body or model could not be read: not replayed"
        ));
    }
    if failed > 0 {
        notes.push(format!(
            "{failed} row(s) the provider did not answer with 2xx: not replayed"
        ));
    }
    notes.push("deferred and best-set figures assume each search finds its tool at once (a floor) and no cache reads; as-sent figures are the rows' own".into());
    Ok(price(tools, sessions, opts, notes))
}

/// Price every session on each strategy, and choose the set worth keeping loaded.
fn price(
    tools: Vec<(String, u64)>,
    gathered: Vec<Gathered>,
    opts: &Options,
    notes: Vec<String>,
) -> Replay {
    let plan = keep::Plan {
        tools,
        sessions: gathered.iter().map(|g| g.session.clone()).collect(),
        search_tokens: opts.search_tokens,
    };
    let n = plan.tools.len();
    let best = plan.best();
    let (all, none) = (vec![true; n], vec![false; n]);
    let mut rows = Vec::new();
    let mut total = SessionRow {
        session: "(all)".into(),
        ..Default::default()
    };
    for (g, s) in gathered.iter().zip(&plan.sessions) {
        let cost = |kept: &[bool]| plan.session_cost(s, kept);
        let (up, def, b) = (cost(&all), cost(&none), cost(&best));
        let row = SessionRow {
            session: g.key.clone(),
            model: g.model.clone(),
            requests: s.base.len(),
            tools: s.defined.len(),
            called: s.first_call.len(),
            as_sent_tokens: g.as_sent_tokens,
            as_sent_usd: g.as_sent_usd,
            as_sent_input_usd: g.as_sent_tokens as f64 * g.price,
            up_front_tokens: up,
            up_front_usd: up as f64 * g.price,
            deferred_tokens: def,
            deferred_usd: def as f64 * g.price,
            best_tokens: b,
            best_usd: b as f64 * g.price,
            label: format!(
                "as sent {}; the others derived (definitions estimated with the model's tokenizer, uncached input price)",
                g.labels.join(", ")
            ),
        };
        total.requests += row.requests;
        total.called += row.called;
        total.as_sent_tokens += row.as_sent_tokens;
        total.as_sent_usd += row.as_sent_usd;
        total.as_sent_input_usd += row.as_sent_input_usd;
        total.up_front_tokens += up;
        total.up_front_usd += row.up_front_usd;
        total.deferred_tokens += def;
        total.deferred_usd += row.deferred_usd;
        total.best_tokens += b;
        total.best_usd += row.best_usd;
        rows.push(row);
    }
    total.tools = n;
    total.label = "derived: the sum of the sessions".into();
    let names = |want: bool| -> Vec<String> {
        plan.tools
            .iter()
            .zip(&best)
            .filter(|(_, k)| **k == want)
            .map(|((name, _), _)| name.clone())
            .collect()
    };
    Replay {
        keep_loaded: names(true),
        defer: names(false),
        sessions: rows,
        total,
        notes,
    }
}

/// The session a request belongs to.
fn session_key(format: Format, model: &str, req: &Request, metadata: &str) -> String {
    let meta: Value = serde_json::from_str(metadata).unwrap_or(Value::Null);
    if let Some(s) = meta.get("session").and_then(Value::as_str) {
        return s.chars().take(120).collect();
    }
    let parts: Vec<String> = ["scenario", "surface", "n", "task"]
        .iter()
        .filter_map(|k| meta.get(*k))
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    if parts.len() == 4 {
        return parts.join("/").chars().take(120).collect();
    }
    // The parts every turn of one conversation repeats, as a short digest.
    use std::hash::Hasher;
    let system = crate::billing::render::system_text(&req.body);
    let first = req
        .messages()
        .iter()
        .find(|m| m["role"] == "user")
        .map(crate::billing::render::message_text)
        .unwrap_or_default();
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for part in [format.name(), model, &system, &first] {
        h.write(part.as_bytes());
        h.write_u8(0);
    }
    format!("{model} {:016x}", h.digest())
}

/// The recommendation as a host's configuration: Anthropic's `defer_loading` per tool.
pub fn emit_anthropic(r: &Replay) -> Value {
    let entry =
        |name: &String, defer: bool| serde_json::json!({"name": name, "defer_loading": defer});
    Value::Array(
        r.keep_loaded
            .iter()
            .map(|n| entry(n, false))
            .chain(r.defer.iter().map(|n| entry(n, true)))
            .collect(),
    )
}
