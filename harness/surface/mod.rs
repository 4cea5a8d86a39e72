//! Surfaces: the ways of exposing a catalogue to a model, one file each. Every surface turns
//! (catalogue, client profile, user turn) into the exact request body of round one.

pub mod code_mode;
mod deferred_search;
pub mod name_list;
mod per_row_mcp;
mod protocol_only;
pub mod small_mcp;

use crate::catalogue::Catalogue;
use crate::client::Client;
use crate::error::{Error, Result};
use crate::wire::{self, Request};
use serde::Serialize;
use serde_json::{json, Value};

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

/// One surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SurfaceKind {
    PerRowMcp,
    DeferredSearch(SearchMethod, SearchSide),
    ProtocolOnly,
    SmallMcp,
    NameList,
    CodeMode,
}

impl SurfaceKind {
    /// The six surfaces `--surface all` measures (deferred search as provider-side BM25).
    pub const ALL: [SurfaceKind; 6] = [
        SurfaceKind::PerRowMcp,
        SurfaceKind::DeferredSearch(SearchMethod::Bm25, SearchSide::Provider),
        SurfaceKind::ProtocolOnly,
        SurfaceKind::SmallMcp,
        SurfaceKind::NameList,
        SurfaceKind::CodeMode,
    ];

    pub const NAMES: [&'static str; 8] = [
        "per-row-mcp",
        "deferred-search",
        "deferred-search-regex",
        "deferred-search-client",
        "protocol-only",
        "small-mcp",
        "name-list",
        "code-mode",
    ];

    pub fn name(self) -> &'static str {
        use SearchMethod::*;
        use SearchSide::*;
        match self {
            SurfaceKind::PerRowMcp => "per-row-mcp",
            SurfaceKind::DeferredSearch(Bm25, Provider) => "deferred-search",
            SurfaceKind::DeferredSearch(Regex, Provider) => "deferred-search-regex",
            SurfaceKind::DeferredSearch(Bm25, Client) => "deferred-search-client",
            SurfaceKind::DeferredSearch(Regex, Client) => "deferred-search-client-regex",
            SurfaceKind::ProtocolOnly => "protocol-only",
            SurfaceKind::SmallMcp => "small-mcp",
            SurfaceKind::NameList => "name-list",
            SurfaceKind::CodeMode => "code-mode",
        }
    }

    pub fn parse(name: &str) -> Result<SurfaceKind> {
        use SearchMethod::*;
        use SearchSide::*;
        Ok(match name.trim() {
            "per-row-mcp" => SurfaceKind::PerRowMcp,
            "deferred-search" => SurfaceKind::DeferredSearch(Bm25, Provider),
            "deferred-search-regex" => SurfaceKind::DeferredSearch(Regex, Provider),
            "deferred-search-client" => SurfaceKind::DeferredSearch(Bm25, Client),
            "deferred-search-client-regex" => SurfaceKind::DeferredSearch(Regex, Client),
            "protocol-only" => SurfaceKind::ProtocolOnly,
            "small-mcp" => SurfaceKind::SmallMcp,
            "name-list" => SurfaceKind::NameList,
            "code-mode" => SurfaceKind::CodeMode,
            other => return Err(Error::unknown("surface", other, &Self::NAMES)),
        })
    }

    /// `all`, or a comma-separated list of names.
    pub fn parse_list(list: &str) -> Result<Vec<SurfaceKind>> {
        if list.trim() == "all" {
            return Ok(Self::ALL.to_vec());
        }
        list.split(',').map(Self::parse).collect()
    }

    /// Build round one of a turn on this surface.
    pub fn build(self, ctx: &Context) -> Built {
        match self {
            SurfaceKind::PerRowMcp => per_row_mcp::build(ctx),
            SurfaceKind::DeferredSearch(m, s) => deferred_search::build(ctx, m, s),
            SurfaceKind::ProtocolOnly => protocol_only::build(ctx),
            SurfaceKind::SmallMcp => small_mcp::build(ctx),
            SurfaceKind::NameList => name_list::Session::new(ctx).request(ctx, Vec::new()),
            SurfaceKind::CodeMode => code_mode::build(ctx),
        }
    }
}

/// What a surface is built from.
pub struct Context<'a> {
    pub catalogue: &'a Catalogue,
    pub client: &'a Client,
    /// The user's message.
    pub turn: &'a str,
    /// Base URL of the dispatch endpoint, for the protocol-only instructions.
    pub endpoint: &'a str,
}

/// Default endpoint named in protocol-only instructions when no server is running.
pub const DEFAULT_ENDPOINT: &str = "http://127.0.0.1:8787/api/dispatch";

/// A built request and how many definitions it carries.
#[derive(Debug, Clone)]
pub struct Built {
    pub request: Request,
    /// Catalogue definitions the model sees in full (built-ins excluded).
    pub definitions_in_context: usize,
    /// Catalogue definitions on the wire, deferred or not.
    pub definitions_on_wire: usize,
}

impl Context<'_> {
    /// The request every surface starts from: model, system prompt (plus `extra_system`),
    /// built-in tools followed by `tools`, and the user's turn.
    pub fn request(&self, extra_system: Option<&str>, tools: Vec<Value>) -> Request {
        let c = self.client;
        let system = match extra_system {
            Some(extra) => format!("{}\n\n{extra}", c.system),
            None => c.system.clone(),
        };
        let mut all_tools = c.tools.clone();
        all_tools.extend(tools);
        let body = match c.format {
            wire::Format::AnthropicMessages => json!({
                "model": c.wire_model,
                "max_tokens": c.max_tokens,
                "tools": all_tools,
                "system": [{"type": "text", "text": system}],
                "messages": [wire::user_message(c.format, c.context.as_deref(), self.turn)],
            }),
            wire::Format::OpenaiChat => json!({
                "model": c.wire_model,
                "max_tokens": c.max_tokens,
                "tools": all_tools,
                "messages": [{"role": "system", "content": system}, wire::user_message(c.format, c.context.as_deref(), self.turn)],
            }),
        };
        Request {
            format: c.format,
            body,
        }
    }

    /// The catalogue's tools as the client presents them.
    pub fn catalogue_definitions(&self, defer: bool) -> Vec<Value> {
        self.catalogue
            .tools
            .iter()
            .map(|t| {
                let name = self.client.tool_name(&self.catalogue.server, &t.name);
                wire::tool_definition(self.client.format, &name, t, defer)
            })
            .collect()
    }
}
