//! `toolcost measure`: one row per surface x tokenizer for one user turn on one catalogue.

use crate::billing::cache::{Pricing, PromptCache};
use crate::billing::{billed_input, billed_with};
use crate::catalogue::{generate::Generator, profile::Profile, Catalogue};
use crate::client::Client;
use crate::error::Result;
use crate::pricing::PriceCard;
use crate::pricing::Usage;
use crate::report::{Column, Tabular};
use crate::surface::{Built, Context, SurfaceKind};
use crate::tokens::Tokenizer;
use crate::wire::Request;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

/// The turn measured when none is given.
pub const DEFAULT_TURN: &str = "what time is it";
/// Output tokens assumed per turn: the mean of the recorded splits' 72 and 74 (the published measurement).
pub const DEFAULT_OUTPUT_TOKENS: u64 = 73;

/// Where the catalogue comes from.
#[derive(Debug, Clone)]
pub enum CatalogueSource {
    File(PathBuf),
    Generated {
        rows: usize,
        profile: String,
        seed: u64,
    },
    /// A live MCP server's `tools/list` over Streamable HTTP.
    Server {
        url: String,
        headers: Vec<String>,
    },
}

impl CatalogueSource {
    pub fn load(&self) -> Result<Catalogue> {
        match self {
            CatalogueSource::File(path) => Catalogue::load(path),
            CatalogueSource::Server { url, headers } => {
                let target = crate::mcp::Target::Http {
                    url: url.clone(),
                    headers: headers.clone(),
                    timeout: std::time::Duration::from_secs(60),
                    opts: crate::mcp::Options::default(),
                };
                Ok(target.load()?.0)
            }
            CatalogueSource::Generated {
                rows,
                profile,
                seed,
            } => {
                let p = Profile::named(profile)?;
                let rows_v: Vec<_> = Generator::new(p, *rows, *seed, false).collect();
                Ok(Catalogue::from_rows(
                    format!("generated {profile} N={rows} seed={seed}"),
                    rows_v,
                ))
            }
        }
    }
}

/// Everything one measurement needs, validated.
#[derive(Debug, Clone)]
pub struct Config {
    pub client: Client,
    pub model: PriceCard,
    pub surfaces: Vec<SurfaceKind>,
    pub tokenizers: Vec<Tokenizer>,
    pub turn: String,
    pub output_tokens: u64,
    pub endpoint: String,
}

/// One measured surface under one tokenizer. This struct is the machine-readable contract of
/// `measure --json` and `--csv`; field names do not change without a version note.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasureRow {
    /// Surface name (`per-row-mcp`, `deferred-search`, ...).
    pub surface: String,
    pub client: String,
    /// Price-card model whose render rules and prices apply.
    pub model: String,
    /// Catalogue size N: tools in the per-row projection.
    pub rows: usize,
    /// Catalogue definitions the model sees in full (client built-ins excluded).
    pub definitions_in_context: usize,
    /// Catalogue definitions sent on the wire, deferred or not.
    pub definitions_on_wire: usize,
    /// Entries in the request's `tools` array, built-ins included.
    pub tools_in_request: usize,
    /// Bytes of the request body (exact).
    pub wire_bytes: usize,
    /// Billed input tokens of round one.
    pub input_tokens: u64,
    /// (input_tokens(N) - input_tokens(0)) / N; empty when N is 0.
    pub marginal_tokens_per_definition: Option<f64>,
    /// Input tokens read from the prompt cache on a warm turn: the turn after one with the same
    /// prefix, under the provider's cache rule and the client's mark placement (`cache`).
    pub cached_input_tokens: u64,
    /// Input tokens written to the cache on that warm turn (Anthropic bills them at the write
    /// price; automatic caches write for free).
    pub cache_write_tokens: u64,
    pub uncached_input_tokens: u64,
    /// Assumed output tokens of the turn.
    pub output_tokens: u64,
    /// Dollars for the warm turn; empty when the provider refuses the request.
    pub cost_usd: Option<f64>,
    /// Dollars for the turn with nothing cached (its marks still write); empty when refused.
    pub cost_usd_cold: Option<f64>,
    /// Evidence label of the token figures: `estimated:<tokenizer>`, or
    /// `estimated:kimi` for Kimi's own vocabulary.
    pub label: String,
    /// How the cost figures were obtained: derived from the tokens and the named price card,
    /// with any assumed constant of the card.
    pub cost_label: String,
    pub tokenizer: String,
    /// Render model that turned the request into tokens.
    pub render: String,
    /// The cache rule and where the client puts its marks.
    pub cache: String,
    /// Whether the provider refuses this request (HTTP 400): the reasons are in `warnings`.
    pub refused: bool,
    /// Provider limits this request crosses; the provider answers such a request with 400.
    pub warnings: Vec<String>,
}

/// Measure one catalogue on every configured surface and tokenizer; `progress` hears each
/// finished surface. Surfaces are measured side by side on the machine's cores (each holds its
/// own request while it is measured, and at most two finished ones wait to be freed, so memory
/// grows with the largest bodies, not with the number of surfaces); a catalogue of at least
/// [`ONE_AT_A_TIME_FROM`] tools is measured one surface at a time, each surface's own work
/// still spread over the cores, so that fewer bodies are held at once. The rows come back in
/// the configured order.
pub fn measure(cat: &Catalogue, cfg: &Config, progress: &(dyn Fn(&str) + Sync)) -> Vec<MeasureRow> {
    let empty = Catalogue {
        source: "empty".into(),
        server: cat.server.clone(),
        ..Default::default()
    };
    let workers = match cat.tools.len() >= ONE_AT_A_TIME_FROM {
        true => 1,
        false => crate::sync::cores().min(cfg.surfaces.len()).max(1),
    };
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: std::sync::Mutex<Vec<(usize, Vec<MeasureRow>)>> = Default::default();
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&surface) = cfg.surfaces.get(i) else {
                    break;
                };
                let rows = measure_surface(cat, &empty, surface, cfg);
                if workers == 1 && cat.tools.len() >= ONE_AT_A_TIME_FROM {
                    // What this surface freed goes back before the next one is built.
                    crate::sync::release_freed();
                }
                progress(surface.name());
                crate::sync::lock(&done).push((i, rows));
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().flat_map(|(_, rows)| rows).collect()
}

/// The rows of one surface, one per tokenizer.
fn measure_surface(
    cat: &Catalogue,
    empty: &Catalogue,
    surface: SurfaceKind,
    cfg: &Config,
) -> Vec<MeasureRow> {
    let ctx = |c| Context {
        catalogue: c,
        client: &cfg.client,
        turn: &cfg.turn,
        endpoint: &cfg.endpoint,
    };
    let render = cfg.model.render_model();
    let mut built = surface.build(&ctx(cat));
    let base = surface.build(&ctx(empty));
    let wire_bytes = built.request.wire_bytes();
    let mut out = Vec::with_capacity(cfg.tokenizers.len());
    for &tok in &cfg.tokenizers {
        let bill = billed_input(&built.request, render, tok);
        let bill0 = billed_input(&base.request, render, tok);
        let n = cat.tools.len();
        let warnings = limits(surface, &built, bill.input_tokens, cfg);
        let refused = !warnings.is_empty();
        let (warm, cold) = cache_usage_billed(&mut built.request, cfg, tok, &bill);
        let cost = |u: &Usage| {
            (!refused).then(|| {
                cfg.model.cost(&Usage {
                    output: cfg.output_tokens,
                    ..*u
                })
            })
        };
        out.push(MeasureRow {
            surface: surface.name().into(),
            client: cfg.client.name.clone(),
            model: cfg.model.id.clone(),
            rows: n,
            definitions_in_context: built.definitions_in_context,
            definitions_on_wire: built.definitions_on_wire,
            tools_in_request: built.request.tools().len(),
            wire_bytes,
            input_tokens: bill.input_tokens,
            marginal_tokens_per_definition: (n > 0)
                .then(|| (bill.input_tokens as f64 - bill0.input_tokens as f64) / n as f64),
            cached_input_tokens: warm.cached_input,
            cache_write_tokens: warm.cache_write,
            uncached_input_tokens: warm.uncached_input,
            output_tokens: cfg.output_tokens,
            cost_usd: cost(&warm),
            cost_usd_cold: cost(&cold),
            label: match bill.overhead_tokens > 0 {
                true => crate::billing::render::overhead_label(render, tok)
                    .map_or_else(|| tok.label(), |o| format!("{}; {o}", tok.label())),
                false => tok.label(),
            },
            cost_label: cost_label(cfg, tok) + &cfg.model.tier_note(bill.input_tokens),
            tokenizer: tok.name().into(),
            render: render.name(),
            cache: format!(
                "{}; marks: {}",
                cfg.model.cache,
                cfg.client.cache_placement()
            ),
            refused,
            warnings,
        });
    }
    free_beside(built);
    out
}

/// Free a large request on the freeing thread, so that taking apart its tree (about 0.2 s for
/// 85,600 definitions, timed on this project's 2-core machine) overlaps the next surface's work
/// instead of delaying the result; a process that ends first leaves the rest to the system.
/// One thread frees for the whole process, and at most one request waits for it: a third
/// finished request waits here until the first is freed, so memory stays bounded.
fn free_beside(built: Built) {
    use std::sync::mpsc::{sync_channel, SyncSender};
    if built.definitions_on_wire < FREE_BESIDE_FROM {
        return;
    }
    static FREER: std::sync::OnceLock<Option<SyncSender<Built>>> = std::sync::OnceLock::new();
    let freer = FREER.get_or_init(|| {
        let (tx, rx) = sync_channel::<Built>(1);
        std::thread::Builder::new()
            .name("free".into())
            .spawn(move || rx.into_iter().for_each(drop))
            .ok()
            .map(|_| tx)
    });
    // Without the thread (it could not be started), the request is freed here.
    if let Some(tx) = freer {
        let _ = tx.send(built);
    }
}

/// Requests with at least this many definitions are freed beside the work (an assumed
/// threshold: below it handing one over costs more than freeing it).
const FREE_BESIDE_FROM: usize = 4096;

/// Catalogues at least this large are measured one surface at a time, and what each surface
/// freed is handed back before the next (an assumed threshold: at 85,600 rows, side by side
/// took 1.6-1.7 s at 467-475 MB and one at a time 2.0-2.1 s at 352-360 MB, observed on this
/// project's 2-core machine; each surface's own work is still spread over the cores).
pub const ONE_AT_A_TIME_FROM: usize = 50_000;

/// For a client made of a real client's measured parts: its base turn (no catalogue, the
/// per-row surface) with tool search on and off, billed on the card under the first tokenizer,
/// beside what the parts it sends count alone (and the real client's parts, where they were
/// measured on that tokenizer): a heading and one line a position. `None` for other clients.
pub fn base_turns(cfg: &Config) -> Option<Vec<String>> {
    let version = cfg.client.version.as_deref()?;
    let tok = *cfg.tokenizers.first()?;
    let empty = Catalogue::default();
    let mut positions = Vec::new();
    let switch: Vec<Option<bool>> = match cfg.client.tool_search_on() {
        Some(_) => vec![Some(true), Some(false)],
        None => vec![None],
    };
    for on in switch {
        let client = match on {
            Some(on) => cfg.client.clone().with_tool_search(on),
            None => cfg.client.clone(),
        };
        let ctx = Context {
            catalogue: &empty,
            client: &client,
            turn: &cfg.turn,
            endpoint: &cfg.endpoint,
        };
        let req = SurfaceKind::PER_ROW_MCP.build(&ctx).request;
        let billed = billed_input(&req, cfg.model.render_model(), tok).input_tokens;
        let parts = client.parts_tokens(tok).round() as u64;
        let what = match on {
            Some(true) => format!(
                "tool search on ({} built-ins loaded + its search tool, {} deferred)",
                client.tools.len() - 1,
                client.deferred_builtins().len()
            ),
            Some(false) => format!("tool search off ({} built-ins)", client.tools.len()),
            None => "as sent".into(),
        };
        let theirs: Option<u64> = client.measured_sent().map(|p| p.size(tok)).sum();
        let in_use = match on == cfg.client.tool_search_on() {
            true => ", measured below",
            false => "",
        };
        positions.push(format!(
            "  {what}{in_use}: {} tokens billed; the measured parts it sends {}{}",
            crate::report::thousands(billed),
            crate::report::thousands(parts),
            match theirs {
                Some(t) => format!(" (the real client's: {})", crate::report::thousands(t)),
                None => String::new(),
            }
        ));
    }
    let mut out = vec![format!(
        "client {} {version} ({}): base turn with no catalogue, {} on {}",
        cfg.client.name,
        cfg.client.label.as_deref().unwrap_or("written here"),
        tok.name(),
        cfg.model.id,
    )];
    out.extend(positions);
    Some(out)
}

/// The label of a row's dollar figures.
pub fn cost_label(cfg: &Config, tok: Tokenizer) -> String {
    format!(
        "derived from {} tokens at {} ({}){}",
        tok.label(),
        cfg.model.id,
        cfg.model.date,
        cfg.model.assumed_note()
    )
}

/// Input-side usage of the request on a warm turn (the turn after one that differs only in its
/// newest text) and on a cold one (nothing cached yet), under the card's cache rule.
pub fn cache_usage(req: &Request, cfg: &Config, tok: Tokenizer) -> (Usage, Usage) {
    let full = billed_input(req, cfg.model.render_model(), tok);
    cache_usage_billed(&mut req.clone(), cfg, tok, &full)
}

/// The card's cache rule and rendering under `tok`, as the prompt cache bills with them.
fn pricing(cfg: &Config, tok: Tokenizer) -> Pricing<'_> {
    Pricing {
        rule: cfg.model.cache_rule(),
        render: cfg.model.render_model(),
        tokenizer: tok,
        min_cacheable: cfg.model.min_cacheable,
        model: &cfg.model.id,
    }
}

/// Input-side usage of a session's first turn when an earlier session left the same system
/// prompt and tools in the cache: the request is billed after one that differs in its first
/// message (so nothing of the messages is read), under the card's cache rule.
pub fn first_turn_usage(req: &Request, cfg: &Config, tok: Tokenizer) -> Usage {
    let pricing = pricing(cfg, tok);
    let full = billed_input(req, pricing.render, tok);
    let mut earlier = req.clone();
    if let Some(first) = earlier
        .body
        .get_mut("messages")
        .and_then(Value::as_array_mut)
        .and_then(|m| m.first_mut())
    {
        first["content"] = Value::from("(an earlier session's first message)");
    }
    let mut cache = PromptCache::default();
    let before = billed_input(&earlier, pricing.render, tok);
    let _ = cache.bill_billed(&earlier, &pricing, "measure", 0.0, true, &before);
    cache
        .bill_billed(req, &pricing, "measure", 1.0, true, &full)
        .unwrap_or(Usage {
            uncached_input: full.input_tokens,
            ..Usage::default()
        })
}

/// [`cache_usage`] for a request whose billing (`full`) is already counted, so only the text
/// of the turn before is counted anew: that turn differs in its newest text alone, which loads
/// no definition, so its tools bill the same. The request may change for a moment: the turn
/// before is the same body with its newest text swapped, then swapped back, so no copy of the
/// body is made.
fn cache_usage_billed(
    req: &mut Request,
    cfg: &Config,
    tok: Tokenizer,
    full: &crate::billing::Billing,
) -> (Usage, Usage) {
    let pricing = pricing(cfg, tok);
    let bill =
        |cache: &mut PromptCache, r: &Request, now: f64, billed: &crate::billing::Billing| {
            cache
                .bill_billed(r, &pricing, "measure", now, true, billed)
                .unwrap_or(Usage {
                    uncached_input: billed.input_tokens,
                    ..Usage::default()
                })
        };
    let cold = bill(&mut PromptCache::default(), req, 0.0, full);
    let mut cache = PromptCache::default();
    let newest = swap_newest_text(req, Some(Value::from("(the turn before)")));
    let before = billed_with(req, pricing.render, tok, &full.tools);
    bill(&mut cache, req, 0.0, &before);
    swap_newest_text(req, newest);
    let warm = bill(&mut cache, req, 1.0, full);
    (warm, cold)
}

/// Put `text` in place of the newest text block of the conversation (or its newest message's
/// whole content when that is a string), or take the block's text away when `text` is `None`;
/// what was there comes back, so a second call restores the body byte for byte.
fn swap_newest_text(req: &mut Request, text: Option<Value>) -> Option<Value> {
    let last = req
        .body
        .get_mut("messages")
        .and_then(Value::as_array_mut)
        .and_then(|m| m.last_mut())?;
    match last.get_mut("content") {
        Some(Value::Array(blocks)) => {
            let Some(Value::Object(b)) = blocks.last_mut() else {
                return None;
            };
            match text {
                // The text key was added last, so removing it leaves the order as it was.
                None => b.remove("text"),
                Some(t) => b.insert("text".into(), t),
            }
        }
        Some(c) => text.map(|t| std::mem::replace(c, t)),
        None => None,
    }
}

/// The provider limits a request crosses.
fn limits(surface: SurfaceKind, built: &Built, input_tokens: u64, cfg: &Config) -> Vec<String> {
    let format = built.request.format;
    // A surface the format lacks is refused before any limit: it cannot be sent at all.
    let mut w: Vec<String> = surface.lacks(format).into_iter().collect();
    w.extend(
        format
            .spec()
            .limits(built.request.tools(), cfg.client.max_tools),
    );
    if input_tokens > cfg.model.context_window {
        w.push(format!(
            "{input_tokens} input tokens exceed {}'s context window of {}",
            cfg.model.id, cfg.model.context_window
        ));
    }
    w
}

impl Tabular for MeasureRow {
    // `warnings` is written plainly: its items joined with `; `.
    const COLUMNS: &'static [Column] = &[
        Column::field("model").title("model (price card)"),
        Column::field("definitions_in_context").title("defs in context"),
        Column::field("marginal_tokens_per_definition")
            .places(2)
            .title("tokens per def"),
        Column::field("cost_usd").places(8).title("$ warm turn"),
        Column::field("cost_usd_cold")
            .places(8)
            .title("$ cold turn"),
    ];
    const BRIEF: &'static [&'static str] = &[
        "surface",
        "rows",
        "definitions_in_context",
        "wire_bytes",
        "input_tokens",
        "marginal_tokens_per_definition",
        "cost_usd",
        "cost_usd_cold",
        "label",
        "warnings",
    ];
    const CONTEXT: &'static [&'static str] = &["model", "client"];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::generate::generate;

    /// The turn before a turn is billed with the turn's own tool side: on every surface and
    /// client that gives the count of the turn before counted from scratch.
    #[test]
    fn the_turn_before_bills_its_tools_as_the_turn_does() {
        let cat = Catalogue::from_rows(
            "t",
            generate(Profile::named("seed-2026-07").unwrap(), 40, 3),
        );
        for client in ["claude-cli", "openai-agent", "openai-responses-agent"] {
            let client = Client::named(client).unwrap();
            let render = PriceCard::named(&client.model).unwrap().render_model();
            for surface in crate::surface::REGISTRY {
                let ctx = Context {
                    catalogue: &cat,
                    client: &client,
                    turn: DEFAULT_TURN,
                    endpoint: crate::surface::DEFAULT_ENDPOINT,
                };
                check(surface.build(&ctx).request, render);
            }
        }
        // A conversation that has loaded deferred definitions before its newest text.
        let def = |n: &str| {
            serde_json::json!({"name": n, "description": "reads the day's ledger",
                "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
                "defer_loading": true})
        };
        let req = Request::new(
            crate::provider::Format::AnthropicMessages,
            serde_json::json!({"model": "m", "tools": [def("a"), def("b")],
                "system": "Be brief.",
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "find the ledger"}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "1",
                        "content": [{"type": "tool_reference", "tool_name": "b"}]}]},
                    {"role": "user", "content": [{"type": "text", "text": "now read it"}]}]}),
        );
        for render in ["anthropic:claude-4.6", "kimi"] {
            check(
                req.clone(),
                crate::billing::RenderModel::parse(render).unwrap(),
            );
        }
    }

    /// The turn before `req`, billed with `req`'s tool side, is billed as if counted afresh,
    /// under o200k and the Kimi estimate (whose counts are fractional until rounded).
    fn check(mut req: Request, render: crate::billing::RenderModel) {
        for tok in [Tokenizer::O200k, Tokenizer::Kimi] {
            let full = billed_input(&req, render, tok);
            let newest = swap_newest_text(&mut req, Some(Value::from("(the turn before)")));
            assert_eq!(
                billed_with(&req, render, tok, &full.tools),
                billed_input(&req, render, tok),
                "{render:?} {tok:?}: {}",
                req.body
            );
            swap_newest_text(&mut req, newest);
        }
    }
}
