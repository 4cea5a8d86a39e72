//! Surfaces: the ways of exposing a catalogue to a model, one file each. A surface owns
//! everything about itself: its name, the request body of each round, how the driver's scripted
//! model plays a task on it ([`play`]), what the reference server serves for it, the resolver it
//! searches with, and its colour in reports. [`REGISTRY`] lists them; adding a surface is one
//! file, one entry there, and the methods of [`Surface`] the compiler asks for.

pub mod additional_tools;
pub mod allowed_tools;
pub mod code_mode;
pub mod deferred_search;
pub mod deferred_search_namespace;
pub mod name_list;
pub mod name_list_native;
pub mod per_row_mcp;
pub mod per_row_mcp_min;
pub mod play;
pub mod programmatic;
pub mod protocol_only;
pub mod small_mcp;

use crate::catalogue::{Catalogue, Tool};
use crate::client::Client;
use crate::error::{Error, Result};
use crate::provider::RequestParts;
use crate::resolve::Method;
use crate::wire::{self, Format, Request, ToolEntry};

/// What a surface is, whatever it is called.
pub trait Surface: Sync {
    /// The name in the CLI, scenario files and every report.
    fn name(&self) -> &'static str;
    /// One line on what the request carries, for `--help` and reports.
    fn about(&self) -> &'static str;
    /// Whether `--surface all` measures it (variants of another surface do not).
    fn in_all(&self) -> bool;
    /// Why a client speaking `format` cannot use it, where the format has no such mechanism
    /// (a provider's own way of changing tools mid-conversation); `None` where it can.
    fn lacks(&self, format: Format) -> Option<String>;
    /// Headers its requests need beside the client's own (a provider's beta flag).
    fn headers(&self) -> &'static [(&'static str, &'static str)];
    /// Its colour in every chart.
    fn colour(&self) -> [u8; 3];
    /// Round one of a turn.
    fn build(&self, ctx: &Context) -> Built;
    /// The endpoint the reference server serves for this surface, if it has its own.
    fn endpoint(&self) -> Option<Endpoint>;
    /// The MCP endpoint path (on the reference server) the model's tool calls go to.
    fn calls_at(&self) -> Option<&'static str>;
    /// The resolver its searches go through and how many candidates the model sees, if it
    /// searches (scored by `search-eval`).
    fn discovery(&self) -> Option<(Method, usize)>;
    /// A fresh player for one task: the driver's scripted model on this surface.
    fn player(&self, ctx: &Context) -> Box<dyn play::Player>;
}

/// A surface, by reference to its registry entry. Cheap to copy; compares by name.
#[derive(Clone, Copy)]
pub struct SurfaceKind(&'static dyn Surface);

impl std::ops::Deref for SurfaceKind {
    type Target = dyn Surface;
    fn deref(&self) -> &Self::Target {
        self.0
    }
}

impl PartialEq for SurfaceKind {
    fn eq(&self, other: &Self) -> bool {
        self.0.name() == other.0.name()
    }
}
impl Eq for SurfaceKind {}

impl std::fmt::Debug for SurfaceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name())
    }
}

/// Every surface, in report order.
pub const REGISTRY: &[SurfaceKind] = &[
    SurfaceKind::PER_ROW_MCP,
    SurfaceKind::DEFERRED_SEARCH,
    SurfaceKind::DEFERRED_SEARCH_REGEX,
    SurfaceKind::DEFERRED_SEARCH_CLIENT,
    SurfaceKind::DEFERRED_SEARCH_CLIENT_REGEX,
    SurfaceKind::DEFERRED_SEARCH_NAMESPACE,
    SurfaceKind::PROTOCOL_ONLY,
    SurfaceKind::SMALL_MCP,
    SurfaceKind::NAME_LIST,
    SurfaceKind::CODE_MODE,
    SurfaceKind::PER_ROW_MCP_MIN,
    SurfaceKind::NAME_LIST_NATIVE,
    SurfaceKind::ALLOWED_TOOLS,
    SurfaceKind::ADDITIONAL_TOOLS,
    SurfaceKind::PROGRAMMATIC,
];

impl SurfaceKind {
    pub const PER_ROW_MCP: SurfaceKind = SurfaceKind(&per_row_mcp::PerRowMcp);
    pub const DEFERRED_SEARCH: SurfaceKind = SurfaceKind(&deferred_search::BM25_PROVIDER);
    pub const DEFERRED_SEARCH_REGEX: SurfaceKind = SurfaceKind(&deferred_search::REGEX_PROVIDER);
    pub const DEFERRED_SEARCH_CLIENT: SurfaceKind = SurfaceKind(&deferred_search::BM25_CLIENT);
    pub const DEFERRED_SEARCH_CLIENT_REGEX: SurfaceKind =
        SurfaceKind(&deferred_search::REGEX_CLIENT);
    pub const DEFERRED_SEARCH_NAMESPACE: SurfaceKind =
        SurfaceKind(&deferred_search_namespace::DeferredSearchNamespace);
    pub const PROTOCOL_ONLY: SurfaceKind = SurfaceKind(&protocol_only::ProtocolOnly);
    pub const SMALL_MCP: SurfaceKind = SurfaceKind(&small_mcp::SmallMcp);
    pub const NAME_LIST: SurfaceKind = SurfaceKind(&name_list::NameList);
    pub const CODE_MODE: SurfaceKind = SurfaceKind(&code_mode::CodeMode);
    pub const PER_ROW_MCP_MIN: SurfaceKind = SurfaceKind(&per_row_mcp_min::PerRowMcpMin);
    pub const NAME_LIST_NATIVE: SurfaceKind = SurfaceKind(&name_list_native::NAME_LIST_NATIVE);
    pub const ALLOWED_TOOLS: SurfaceKind = SurfaceKind(&allowed_tools::ALLOWED_TOOLS);
    pub const ADDITIONAL_TOOLS: SurfaceKind = SurfaceKind(&additional_tools::ADDITIONAL_TOOLS);
    pub const PROGRAMMATIC: SurfaceKind = SurfaceKind(&programmatic::Programmatic);

    /// The surfaces `--surface all` measures.
    pub fn all() -> Vec<SurfaceKind> {
        REGISTRY.iter().copied().filter(|s| s.in_all()).collect()
    }

    /// The surfaces `--surface all` measures for a client speaking `format`: those the format
    /// has.
    pub fn all_for(format: Format) -> Vec<SurfaceKind> {
        Self::all()
            .into_iter()
            .filter(|s| s.lacks(format).is_none())
            .collect()
    }

    /// Whether it is a provider's own mechanism: one API format alone has it.
    pub fn provider_own(&self) -> bool {
        Format::ALL
            .iter()
            .filter(|&&f| self.lacks(f).is_none())
            .count()
            == 1
    }

    /// Every name the CLI accepts.
    pub fn names() -> Vec<&'static str> {
        REGISTRY.iter().map(|s| s.name()).collect()
    }

    pub fn parse(name: &str) -> Result<SurfaceKind> {
        REGISTRY
            .iter()
            .copied()
            .find(|s| s.name() == name.trim())
            .ok_or_else(|| Error::unknown("surface", name, &Self::names()))
    }

    /// `all`, or a comma-separated list of names.
    pub fn parse_list(list: &str) -> Result<Vec<SurfaceKind>> {
        if list.trim() == "all" {
            return Ok(Self::all());
        }
        list.split(',').map(Self::parse).collect()
    }
}

/// Why a client speaking `format` cannot use `surface`, a mechanism of `only`'s API alone
/// (`mechanism` names it); `None` for a client that speaks `only`.
pub fn only_on(surface: &str, only: Format, mechanism: &str, format: Format) -> Option<String> {
    (format != only).then(|| {
        format!(
            "{surface}: {} only ({mechanism}); {} has no such mechanism",
            match only {
                Format::AnthropicMessages => "Anthropic Messages",
                Format::OpenaiChat => "OpenAI Chat Completions",
                Format::OpenaiResponses => "OpenAI Responses",
                Format::Gemini => "Gemini",
            },
            format.name()
        )
    })
}

/// The colour of a surface by name; black for a name no surface has (a foreign log's).
pub fn colour(name: &str) -> [u8; 3] {
    // A surface shown with its resolver (`deferred-search-client (hybrid)`) keeps its colour.
    let name = name.split(" (").next().unwrap_or(name);
    REGISTRY
        .iter()
        .find(|s| s.name() == name)
        .map_or([0, 0, 0], |s| s.colour())
}

/// What the reference server serves for a surface with an endpoint of its own.
#[derive(Debug, Clone, Copy)]
pub struct Endpoint {
    /// The MCP path (`/mcp`, `/mcp/small`, ...).
    pub path: &'static str,
    /// `serverInfo.name` in the initialize result.
    pub server_name: &'static str,
    /// `instructions` in the initialize result.
    pub instructions: &'static str,
    /// How the server answers `tools/call` on it.
    pub calls: Calls,
    /// The tools it lists.
    pub tools: Listing,
}

/// How an endpoint's `tools/call` is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calls {
    /// The tool name is a row's key; its arguments are the row's (per-row projections). Its
    /// list follows the directory, so sessions hear `list_changed`.
    ByKey,
    /// The small surface's generic tools: dispatch, search_directory, read_contract,
    /// read_receipt. The list never changes.
    Generic,
    /// Code mode's one `execute` tool. The list never changes.
    Program,
}

/// The tools an endpoint lists.
#[derive(Debug, Clone, Copy)]
pub enum Listing {
    /// The per-row projection itself.
    Projection,
    /// Tools of its own, whatever the catalogue holds.
    Fixed(fn() -> Vec<Tool>),
    /// Tools made from the per-row projection.
    Derived(fn(&[Tool]) -> Vec<Tool>),
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
    pub fn request(&self, extra_system: Option<&str>, tools: Vec<ToolEntry>) -> Request {
        let c = self.client;
        // The client's system parts as it sends them, then the surface's own text: in the
        // last part (a client of one part, as before) or, for a client of several parts, in a
        // part of its own.
        let mut system = c.system_blocks();
        if let Some(extra) = extra_system {
            match (system.len(), system.last_mut()) {
                (1, Some(last)) => *last = format!("{last}\n\n{extra}"),
                _ => system.push(extra.to_string()),
            }
        }
        let mut all_tools: Vec<ToolEntry> = c.tools.iter().cloned().map(ToolEntry::Json).collect();
        all_tools.extend(tools);
        let mut body = c.format.spec().request(RequestParts {
            model: &c.wire_model,
            max_tokens: c.max_tokens,
            system,
            user: wire::user_message(c.format, c.context.as_deref(), self.turn),
        });
        c.format
            .spec()
            .place_cache_marks(&mut body, &mut all_tools, &c.cache_marks);
        Request::with_tools(c.format, body, all_tools)
    }

    /// The catalogue's tools as the client presents them.
    pub fn catalogue_definitions(&self, defer: bool) -> Vec<ToolEntry> {
        crate::sync::map_on_cores(&self.catalogue.tools, |t| {
            let name = self.client.tool_name(&self.catalogue.server, &t.name);
            self.definition(&name, t, defer)
        })
    }

    /// One catalogue tool as the client presents it, under `name`.
    pub fn definition(&self, name: &str, tool: &Tool, defer: bool) -> ToolEntry {
        ToolEntry::Shared(wire::Definition::new(
            self.client.format,
            name,
            tool.def_text(),
            defer,
        ))
    }
}
