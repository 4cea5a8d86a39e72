//! `deferred-search`: every per-row definition on the wire with `defer_loading`, plus a search
//! tool. None is billed until a search returns it (for OpenAI, name and description stay
//! billed and only the schema is deferred; the render model applies that rule).
//!
//! Four variants: the search runs at the provider (its tool-search tool types, BM25 or regex)
//! or at the client (a `tool_search` tool whose result carries `tool_reference` blocks).

use super::play::{self, Local, Move, Output, Phase, Player, Read, Turn};
use super::{Built, Context, Endpoint, Surface};
use crate::resolve::{self, Method};
use crate::wire::{self, Format};
use serde::Serialize;
use serde_json::{json, Value};

/// Anthropic's provider-side tool-search tool types (the providers' documentation).
pub const ANTHROPIC_REGEX: &str = "tool_search_tool_regex_20251119";
pub const ANTHROPIC_BM25: &str = "tool_search_tool_bm25_20251119";
/// The client-side search tool's name.
pub const CLIENT_TOOL: &str = "tool_search";

/// How a deferred-search surface searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SearchMethod {
    Regex,
    Bm25,
}

/// Who runs the search: the provider (its tool-search tool types) or the client (a search tool
/// whose result carries `tool_reference` blocks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SearchSide {
    Provider,
    Client,
}

/// One variant.
pub struct DeferredSearch {
    pub method: SearchMethod,
    pub side: SearchSide,
}

pub const BM25_PROVIDER: DeferredSearch = DeferredSearch {
    method: SearchMethod::Bm25,
    side: SearchSide::Provider,
};
pub const REGEX_PROVIDER: DeferredSearch = DeferredSearch {
    method: SearchMethod::Regex,
    side: SearchSide::Provider,
};
pub const BM25_CLIENT: DeferredSearch = DeferredSearch {
    method: SearchMethod::Bm25,
    side: SearchSide::Client,
};
pub const REGEX_CLIENT: DeferredSearch = DeferredSearch {
    method: SearchMethod::Regex,
    side: SearchSide::Client,
};

impl Surface for DeferredSearch {
    fn name(&self) -> &'static str {
        match (self.method, self.side) {
            (SearchMethod::Bm25, SearchSide::Provider) => "deferred-search",
            (SearchMethod::Regex, SearchSide::Provider) => "deferred-search-regex",
            (SearchMethod::Bm25, SearchSide::Client) => "deferred-search-client",
            (SearchMethod::Regex, SearchSide::Client) => "deferred-search-client-regex",
        }
    }
    fn about(&self) -> &'static str {
        match self.side {
            SearchSide::Provider => {
                "every definition deferred, plus the provider's tool-search tool"
            }
            SearchSide::Client => "every definition deferred, plus a client-side tool_search tool",
        }
    }
    fn in_all(&self) -> bool {
        (self.method, self.side) == (SearchMethod::Bm25, SearchSide::Provider)
    }
    fn lacks(&self, format: crate::wire::Format) -> Option<String> {
        // Every definition is sent deferred: an API without deferred loading cannot carry it.
        match format {
            Format::Gemini => Some(format!(
                "{}: Gemini has no deferred loading (every declaration is sent in full)",
                self.name()
            )),
            Format::AnthropicMessages | Format::OpenaiChat | Format::OpenaiResponses => None,
        }
    }
    fn headers(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    fn colour(&self) -> [u8; 3] {
        match (self.method, self.side) {
            (SearchMethod::Bm25, SearchSide::Provider) => [255, 127, 14],
            (SearchMethod::Regex, SearchSide::Provider) => [127, 127, 127],
            (SearchMethod::Bm25, SearchSide::Client) => [140, 86, 75],
            (SearchMethod::Regex, SearchSide::Client) => [188, 189, 34],
        }
    }
    fn build(&self, ctx: &Context) -> Built {
        let mut tools = vec![search_tool(ctx.client.format, self.method, self.side).into()];
        let defs = ctx.catalogue_definitions(true);
        let n = defs.len();
        tools.extend(defs);
        Built {
            request: ctx.request(None, tools),
            definitions_in_context: 0,
            definitions_on_wire: n,
        }
    }
    fn endpoint(&self) -> Option<Endpoint> {
        None
    }
    fn calls_at(&self) -> Option<&'static str> {
        // A found definition is the per-row tool: its calls go to the per-row endpoint.
        Some(super::per_row_mcp::ENDPOINT.path)
    }
    fn discovery(&self) -> Option<(Method, usize)> {
        // The provider's BM25 tool is modelled with plain BM25; a client's own keyword tool
        // uses the default resolver over the same definitions. Both regex variants run the
        // same regex: search-eval scores the provider-side one.
        match (self.side, self.method) {
            (SearchSide::Provider, SearchMethod::Bm25) => Some((Method::Bm25Definitions, 5)),
            (SearchSide::Provider, SearchMethod::Regex) => Some((Method::Regex, 5)),
            (SearchSide::Client, SearchMethod::Bm25) => Some((Method::Bm25ToolDefinitions, 5)),
            (SearchSide::Client, SearchMethod::Regex) => None,
        }
    }
    fn player(&self, _ctx: &Context) -> Box<dyn Player> {
        Box::new(Searcher {
            method: self.method,
            side: self.side,
        })
    }
}

pub(super) fn search_tool(format: Format, method: SearchMethod, side: SearchSide) -> Value {
    match (format, side) {
        (Format::AnthropicMessages, SearchSide::Provider) => match method {
            SearchMethod::Regex => {
                json!({"type": ANTHROPIC_REGEX, "name": "tool_search_tool_regex"})
            }
            SearchMethod::Bm25 => json!({"type": ANTHROPIC_BM25, "name": "tool_search_tool_bm25"}),
        },
        // OpenAI's hosted tool search (Responses only; Chat Completions refuses it). Its search
        // method is not chosen by the caller: both variants send the same tool.
        // Gemini has no hosted tool search either: the request is refused by its limits.
        (Format::OpenaiChat | Format::OpenaiResponses | Format::Gemini, SearchSide::Provider) => {
            json!({"type": "tool_search"})
        }
        (
            Format::AnthropicMessages
            | Format::OpenaiChat
            | Format::OpenaiResponses
            | Format::Gemini,
            SearchSide::Client,
        ) => {
            let (desc, schema) = client_tool(method);
            match format {
                // Responses has a client-executed tool search of its own: the model answers
                // with a `tool_search_call` and the client with a `tool_search_output`.
                Format::OpenaiResponses => json!({"type": "tool_search", "execution": "client",
                    "description": desc, "parameters": schema}),
                Format::AnthropicMessages | Format::OpenaiChat | Format::Gemini => {
                    wire::function_definition(format, CLIENT_TOOL, desc, schema, false)
                }
            }
        }
    }
}

/// The client-side search tool's description and schema.
fn client_tool(method: SearchMethod) -> (&'static str, Value) {
    match method {
                SearchMethod::Regex => (
                    "Search the deferred tools by regular expression over their names and descriptions. Returns references to at most five matching tools, which become callable in the next step. Use this before calling any tool you have not seen in full.",
                    json!({"type": "object", "properties": {"pattern": {"type": "string", "description": "Regular expression, at most 200 characters, matched case-insensitively"}}, "required": ["pattern"]}),
                ),
                SearchMethod::Bm25 => (
                    "Search the deferred tools with keywords. Returns references to at most five matching tools, which become callable in the next step. Use this before calling any tool you have not seen in full.",
                    json!({"type": "object", "properties": {"query": {"type": "string", "description": "Keywords describing the capability you need"}, "max_results": {"type": "integer", "description": "How many tools to return, 1 to 5"}}, "required": ["query"]}),
                ),
            }
}

/// The search's input for a query.
fn search_input(method: SearchMethod, query: &str) -> Value {
    match method {
        SearchMethod::Bm25 => json!({"query": query}),
        SearchMethod::Regex => json!({"pattern": resolve::regex_for(query)}),
    }
}

/// The model searches the deferred definitions, then calls what the search returned.
pub(super) struct Searcher {
    pub(super) method: SearchMethod,
    pub(super) side: SearchSide,
}

impl Player for Searcher {
    fn opening(&self) -> Phase {
        Phase::Discover(0)
    }
    fn next(&mut self, phase: Phase, t: &Turn) -> Move {
        match (phase, self.side) {
            (Phase::Discover(_), SearchSide::Provider) => {
                let search = search_input(self.method, t.query);
                let found = resolve::search_definitions(
                    &t.deferred(),
                    &search,
                    self.method == SearchMethod::Regex,
                )
                .unwrap_or_default();
                let hit = found.contains(&t.tool_name(t.key));
                let then = if hit {
                    t.call_row(0)
                } else {
                    Move::Text("That search did not find it.".into())
                };
                Move::ProviderSearch {
                    search,
                    hit,
                    then: Box::new(then),
                }
            }
            (Phase::Discover(_), SearchSide::Client) => Move::Tool {
                name: CLIENT_TOOL.into(),
                input: search_input(self.method, t.query),
            },
            (Phase::Call(i), _) => t.call_row(i),
            (Phase::Contract | Phase::Final, _) => t.call_row(0),
        }
    }
    fn local(&mut self, name: &str, input: &Value, t: &Turn) -> Option<Local> {
        if self.side != SearchSide::Client || name != CLIENT_TOOL {
            return None;
        }
        let regex = input.get("pattern").is_some();
        let found = resolve::search_definitions_with(&t.deferred(), input, regex, t.resolver)
            .unwrap_or_default();
        Some(Local {
            text: format!("{} tool(s) found", found.len()),
            read: Read::Searched {
                hit: found.contains(&t.tool_name(t.key)),
                next: Phase::Call(0),
            },
            references: found,
            follow: Vec::new(),
        })
    }
    fn refuse(&self, _name: &str, _t: &Turn) -> Option<String> {
        None
    }
    fn read(&mut self, phase: Phase, out: Output, t: &Turn) -> Read {
        match out {
            Output::Mcp { structured, .. } => play::one_result(phase, structured, t),
            Output::Shell(_) => Read::Nothing,
        }
    }
}
