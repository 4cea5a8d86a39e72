//! `name-list`: every tool's name, a summary cut at 300 characters and up to six required
//! argument names in the system prompt, grouped by server, plus an `enable_tools` tool.
//!
//! The list's bytes never change within a conversation, so the prompt cache survives.
//! Enabling takes exact names only. In `hidden` mode (Anthropic) every definition is sent
//! with `defer_loading` and `enable_tools` answers with `tool_reference` blocks, so the tools
//! array never changes; in `append` mode enabled definitions are appended to the tools array in
//! the order they were enabled and never removed (an append, not an insert: earlier requests stay
//! a prefix of later ones, though the tools array changing still breaks a provider cache keyed on
//! tools). `@server` in the user's turn enables up to 60 of that
//! server's tools up front. Here a "server" is a catalogue category (one connector each).

use super::play::{Local, Move, Output, Phase, Player, Read, Turn};
use super::{Built, Context, Endpoint, Surface};
use crate::client::NameListMode;
use crate::resolve::Method;
use crate::wire::{self, Format, Request, ToolEntry};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Summaries are cut at this many characters (the recorded evaluation: 100 failed the task).
pub const SUMMARY_CHARS: usize = 300;
/// At most this many required argument names per entry.
pub const MAX_REQUIRED: usize = 6;
/// `@server` enables at most this many of its tools up front.
pub const MAX_EXPAND: usize = 60;
pub const ENABLE_TOOL: &str = "enable_tools";

pub struct NameList;

/// How an enabled definition reaches the model: the client profile's way (the tools array), or
/// a provider's own mechanism for changing tools mid-conversation (the `name-list-native`,
/// `additional-tools` and `allowed-tools` surfaces).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Every definition deferred in `tools`; `enable_tools` answers with `tool_reference`s.
    Hidden,
    /// Enabled definitions appended to `tools`.
    Append,
    /// Anthropic: enabled definitions arrive in a `role: "system"` message of `tool_addition`
    /// blocks after the enabling result; `tools` never changes.
    ToolAddition,
    /// OpenAI Responses: enabled definitions arrive in an `additional_tools` input item after
    /// the enabling result; `tools` never changes.
    AdditionalTools,
    /// OpenAI Responses: every definition in `tools` from the start, the callable subset named
    /// in `tool_choice: {"type": "allowed_tools", ...}`; only `tool_choice` changes.
    Allowed,
}

impl Delivery {
    /// The client profile's own name-list mode.
    pub fn of(mode: NameListMode) -> Delivery {
        match mode {
            NameListMode::Hidden => Delivery::Hidden,
            NameListMode::Append => Delivery::Append,
        }
    }
}

/// The name list with enabled definitions delivered by a provider's own mechanism, which only
/// its API has: `name-list-native`, `allowed-tools` and `additional-tools`, each a constant in
/// its own module, where its rules and their sources are.
pub struct Delivered {
    pub name: &'static str,
    pub about: &'static str,
    pub colour: [u8; 3],
    pub delivery: Delivery,
    /// The only API format that has the mechanism, and what the mechanism is called.
    pub only: Format,
    pub mechanism: &'static str,
    pub headers: &'static [(&'static str, &'static str)],
}

impl Surface for Delivered {
    fn name(&self) -> &'static str {
        self.name
    }
    fn about(&self) -> &'static str {
        self.about
    }
    fn in_all(&self) -> bool {
        true
    }
    fn lacks(&self, format: Format) -> Option<String> {
        super::only_on(self.name, self.only, self.mechanism, format)
    }
    fn headers(&self) -> &'static [(&'static str, &'static str)] {
        self.headers
    }
    fn colour(&self) -> [u8; 3] {
        self.colour
    }
    fn build(&self, ctx: &Context) -> Built {
        Session::delivering(ctx, self.delivery).request(ctx, Vec::new())
    }
    fn endpoint(&self) -> Option<Endpoint> {
        None
    }
    fn calls_at(&self) -> Option<&'static str> {
        NameList.calls_at()
    }
    fn discovery(&self) -> Option<(Method, usize)> {
        None
    }
    fn player(&self, ctx: &Context) -> Box<dyn Player> {
        Box::new(Session::delivering(ctx, self.delivery))
    }
}

impl Surface for NameList {
    fn name(&self) -> &'static str {
        "name-list"
    }
    fn about(&self) -> &'static str {
        "every name with a 300-character summary in the system prompt, plus enable_tools"
    }
    fn in_all(&self) -> bool {
        true
    }
    fn lacks(&self, _format: crate::wire::Format) -> Option<String> {
        None
    }
    fn headers(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    fn colour(&self) -> [u8; 3] {
        [148, 103, 189]
    }
    fn build(&self, ctx: &Context) -> Built {
        Session::new(ctx).request(ctx, Vec::new())
    }
    fn endpoint(&self) -> Option<Endpoint> {
        None
    }
    fn calls_at(&self) -> Option<&'static str> {
        // An enabled name is the per-row tool: its calls go to the per-row endpoint.
        Some(super::per_row_mcp::ENDPOINT.path)
    }
    fn discovery(&self) -> Option<(Method, usize)> {
        None
    }
    fn player(&self, ctx: &Context) -> Box<dyn Player> {
        Box::new(Session::new(ctx))
    }
}

/// The model reads the list, enables the row's name, then calls it, one call a round.
impl Player for Session {
    fn opening(&self) -> Phase {
        Phase::Discover(0)
    }
    fn next(&mut self, phase: Phase, t: &Turn) -> Move {
        match phase {
            Phase::Discover(_) => Move::Tool {
                name: ENABLE_TOOL.into(),
                input: json!({"names": [t.tool_name(t.key)]}),
            },
            Phase::Call(i) => t.call_row(i),
            Phase::Contract | Phase::Final => t.call_row(0),
        }
    }
    fn local(&mut self, name: &str, input: &Value, t: &Turn) -> Option<Local> {
        if name != ENABLE_TOOL {
            return None;
        }
        let names: Vec<String> = input["names"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(String::from))
            .collect();
        let outcome = self.enable(&names);
        Some(Local {
            text: crate::json::compact(&outcome),
            references: self.references(&outcome),
            follow: self.additions(t.ctx, &outcome),
            read: Read::Searched {
                hit: outcome.enabled.contains(&t.tool_name(t.key)),
                next: Phase::Call(0),
            },
        })
    }
    fn refuse(&self, name: &str, t: &Turn) -> Option<String> {
        (self.check_call(name, &t.ctx.client.tools) == CallCheck::EnableFirst)
            .then(|| "enable it first: call enable_tools with this exact name".to_string())
    }
    fn read(&mut self, phase: Phase, out: Output, t: &Turn) -> Read {
        match out {
            Output::Mcp { structured, .. } => super::play::one_result(phase, structured, t),
            Output::Shell(_) => Read::Nothing,
        }
    }
    fn request(&self, ctx: &Context) -> Option<Request> {
        // Appended definitions change the tools array, the allowed subset `tool_choice`; the
        // other deliveries never change round one's request.
        match self.delivery {
            Delivery::Hidden | Delivery::ToolAddition | Delivery::AdditionalTools => None,
            Delivery::Append | Delivery::Allowed => {
                Some(Session::request(self, ctx, Vec::new()).request)
            }
        }
    }
}

/// Why a name could not be enabled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum Failure {
    Unknown {
        name: String,
    },
    NotPermitted {
        name: String,
    },
    AlreadyEnabled {
        name: String,
    },
    /// The name is a server's: these are its tools; enable the ones you need by name.
    Server {
        name: String,
        tools: Vec<String>,
    },
}

/// The answer to one `enable_tools` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnableOutcome {
    pub enabled: Vec<String>,
    pub failed: Vec<Failure>,
}

/// What happens when the model calls a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallCheck {
    Callable,
    /// Listed but not enabled: "enable it first", distinct from no such tool.
    EnableFirst,
    NoSuchTool,
}

/// One tool in the list, by the name the model sees.
#[derive(Debug, Clone)]
struct Entry {
    server: String,
    summary: Summary,
    required: Vec<String>,
    /// Index of the tool in the catalogue's projection; its definition is built per request.
    tool: usize,
}

/// A tool's summary: its description where that is already one line of single-spaced words
/// within the cut (shared with the tool, not copied: a list of a million tools holds its
/// descriptions once), or the description cut.
#[derive(Debug, Clone)]
enum Summary {
    Whole(std::sync::Arc<crate::catalogue::DefText>),
    Cut(String),
}

impl Summary {
    fn of(text: std::sync::Arc<crate::catalogue::DefText>) -> Summary {
        match is_flat(text.description(), SUMMARY_CHARS) {
            true => Summary::Whole(text),
            false => Summary::Cut(cut(text.description(), SUMMARY_CHARS)),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            Summary::Whole(t) => t.description(),
            Summary::Cut(s) => s,
        }
    }
}

/// Whether [`cut`] gives `text` back unchanged: at most `max` characters, and its only
/// whitespace single spaces between words.
fn is_flat(text: &str, max: usize) -> bool {
    let mut after_space = true;
    for (n, c) in text.chars().enumerate() {
        if n >= max {
            return false;
        }
        if c.is_whitespace() {
            if c != ' ' || after_space {
                return false;
            }
            after_space = true;
        } else {
            after_space = false;
        }
    }
    !after_space || text.is_empty()
}

/// The name-list state of one conversation.
#[derive(Debug, Clone)]
pub struct Session {
    delivery: Delivery,
    entries: BTreeMap<String, Entry>,
    servers: BTreeMap<String, Vec<String>>,
    denied: BTreeSet<String>,
    enabled: BTreeSet<String>,
    /// The same names in the order they were enabled: append mode appends in this order, so an
    /// earlier request's tools array stays a prefix of the next one's.
    order: Vec<String>,
    /// Enabled by `@server` before the first request: declared expanded for the whole turn.
    up_front: BTreeSet<String>,
    /// The system-prompt section, fixed at the start of the conversation.
    list: String,
}

impl Session {
    /// A session that delivers enabled definitions the client profile's way.
    pub fn new(ctx: &Context) -> Session {
        Session::delivering(ctx, Delivery::of(ctx.client.name_list_mode))
    }

    /// A session that delivers enabled definitions by `delivery`.
    pub fn delivering(ctx: &Context, delivery: Delivery) -> Session {
        let mut entries = BTreeMap::new();
        let mut servers: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let rows: BTreeMap<&str, &str> = ctx
            .catalogue
            .rows
            .iter()
            .map(|r| (r.key.as_str(), r.category.as_deref().unwrap_or("general")))
            .collect();
        // Each tool's entry is made on the machine's cores; the maps are filled in order.
        let indexed: Vec<(usize, &crate::catalogue::Tool)> =
            ctx.catalogue.tools.iter().enumerate().collect();
        let made = crate::sync::map_on_cores(&indexed, |&(index, tool)| {
            let name = ctx.client.tool_name(&ctx.catalogue.server, &tool.name);
            let server = rows
                .get(tool.name.as_str())
                .copied()
                .unwrap_or(&ctx.catalogue.server)
                .to_string();
            let text = tool.def_text();
            let entry = Entry {
                server,
                required: text.required().into_iter().take(MAX_REQUIRED).collect(),
                summary: Summary::of(text),
                tool: index,
            };
            (name, entry)
        });
        for (name, entry) in made {
            servers
                .entry(entry.server.clone())
                .or_default()
                .push(name.clone());
            entries.insert(name, entry);
        }
        let list = match delivery {
            // Every definition is in `tools`: the model reads them there, not in a list.
            Delivery::Allowed => ALLOWED_NOTE.to_string(),
            Delivery::Hidden
            | Delivery::Append
            | Delivery::ToolAddition
            | Delivery::AdditionalTools => render_list(&entries, &servers),
        };
        let mut s = Session {
            delivery,
            entries,
            servers,
            denied: BTreeSet::new(),
            enabled: BTreeSet::new(),
            order: Vec::new(),
            up_front: BTreeSet::new(),
            list,
        };
        for server in mentioned_servers(ctx.turn) {
            if let Some(tools) = s.servers.get(&server) {
                let up_front: Vec<String> = tools.iter().take(MAX_EXPAND).cloned().collect();
                for name in &up_front {
                    if s.enabled.insert(name.clone()) {
                        s.order.push(name.clone());
                    }
                }
                s.up_front.extend(up_front);
            }
        }
        s
    }

    /// Refuse these names (the user has no permission for them).
    pub fn deny(&mut self, names: &[&str]) {
        self.denied.extend(names.iter().map(|s| s.to_string()));
    }

    pub fn enabled(&self) -> Vec<String> {
        self.enabled.iter().cloned().collect()
    }

    /// Enable exact names. Everything that is not enabled comes back in `failed`.
    pub fn enable(&mut self, names: &[String]) -> EnableOutcome {
        let mut out = EnableOutcome {
            enabled: Vec::new(),
            failed: Vec::new(),
        };
        for name in names {
            if self.entries.contains_key(name) {
                if self.denied.contains(name) {
                    out.failed
                        .push(Failure::NotPermitted { name: name.clone() });
                } else if !self.enabled.insert(name.clone()) {
                    out.failed
                        .push(Failure::AlreadyEnabled { name: name.clone() });
                } else {
                    self.order.push(name.clone());
                    out.enabled.push(name.clone());
                }
            } else if let Some((_, tools)) = self
                .servers
                .iter()
                .find(|(s, _)| s.eq_ignore_ascii_case(name))
            {
                out.failed.push(Failure::Server {
                    name: name.clone(),
                    tools: tools.clone(),
                });
            } else {
                out.failed.push(Failure::Unknown { name: name.clone() });
            }
        }
        out
    }

    /// Whether a call to `name` would run.
    pub fn check_call(&self, name: &str, builtins: &[Value]) -> CallCheck {
        let builtin = name == ENABLE_TOOL
            || builtins
                .iter()
                .any(|d| wire::definition_parts(d).is_some_and(|(n, _, _)| n == name));
        if builtin || self.enabled.contains(name) {
            CallCheck::Callable
        } else if self.entries.contains_key(name) {
            CallCheck::EnableFirst
        } else {
            CallCheck::NoSuchTool
        }
    }

    /// The references an `enable_tools` result carries in hidden mode.
    pub fn references(&self, outcome: &EnableOutcome) -> Vec<String> {
        match self.delivery {
            Delivery::Hidden => outcome.enabled.clone(),
            Delivery::Append
            | Delivery::ToolAddition
            | Delivery::AdditionalTools
            | Delivery::Allowed => Vec::new(),
        }
    }

    /// The conversation items that follow an `enable_tools` result: the newly enabled
    /// definitions as a provider's mid-conversation tool change, where the delivery is one.
    pub fn additions(&self, ctx: &Context, outcome: &EnableOutcome) -> Vec<Value> {
        let definitions = || -> Vec<Value> {
            outcome
                .enabled
                .iter()
                .map(|name| self.definition(ctx, name, false))
                .collect()
        };
        if outcome.enabled.is_empty() {
            return Vec::new();
        }
        match self.delivery {
            Delivery::Hidden | Delivery::Append | Delivery::Allowed => Vec::new(),
            Delivery::ToolAddition => vec![wire::tool_addition_message(definitions())],
            Delivery::AdditionalTools => vec![wire::additional_tools_item(definitions())],
        }
    }

    /// The definition of a listed tool, by the name the model sees.
    fn definition(&self, ctx: &Context, name: &str, defer: bool) -> Value {
        let tool = &ctx.catalogue.tools[self.entries[name].tool];
        wire::tool_definition(ctx.client.format, name, tool, defer)
    }

    /// [`Session::definition`] as an entry of `tools`, sharing the tool's text.
    fn entry(&self, ctx: &Context, name: &str, defer: bool) -> ToolEntry {
        ctx.definition(name, &ctx.catalogue.tools[self.entries[name].tool], defer)
    }

    /// The request for the current state, with `history` appended after the user's turn.
    /// `ctx` must be the context the session was made from.
    pub fn request(&self, ctx: &Context, history: Vec<Value>) -> Built {
        let mut tools = vec![ToolEntry::Json(enable_tool(ctx))];
        let definition = |name: &str, defer: bool| self.entry(ctx, name, defer);
        match self.delivery {
            Delivery::Hidden => {
                // Definitions in name order; enabled ones by reference, except those enabled
                // up front (`@server`), which are declared expanded from the first request.
                let names: Vec<&String> = self.entries.keys().collect();
                tools.extend(crate::sync::map_on_cores(&names, |name| {
                    definition(name, !self.up_front.contains(*name))
                }));
            }
            Delivery::Append => {
                for name in &self.order {
                    tools.push(definition(name, false));
                }
            }
            // Only those enabled up front (`@server`) are in `tools`; the rest arrive in the
            // conversation.
            Delivery::ToolAddition | Delivery::AdditionalTools => {
                for name in self.order.iter().filter(|n| self.up_front.contains(*n)) {
                    tools.push(definition(name, false));
                }
            }
            Delivery::Allowed => {
                let names: Vec<&String> = self.entries.keys().collect();
                tools.extend(crate::sync::map_on_cores(&names, |name| {
                    definition(name, false)
                }));
            }
        }
        let (in_context, on_wire) = match self.delivery {
            Delivery::Hidden => (self.enabled.len(), self.entries.len()),
            Delivery::Append | Delivery::ToolAddition | Delivery::AdditionalTools => {
                (self.enabled.len(), self.enabled.len())
            }
            Delivery::Allowed => (self.entries.len(), self.entries.len()),
        };
        let mut request: Request = ctx.request(Some(&self.list), tools);
        if self.delivery == Delivery::Allowed {
            request.body["tool_choice"] = self.allowed_choice(ctx);
        }
        request.messages_mut().extend(history);
        Built {
            request,
            definitions_in_context: in_context,
            definitions_on_wire: on_wire,
        }
    }

    /// `tool_choice` naming what is callable now: the client's built-in tools, `enable_tools`
    /// and the enabled tools in the order they were enabled.
    fn allowed_choice(&self, ctx: &Context) -> Value {
        let builtins = ctx
            .client
            .tools
            .iter()
            .map(|d| match wire::definition_parts(d) {
                Some((name, _, _)) => json!({"type": "function", "name": name}),
                // A hosted tool (`web_search`, `tool_search`) is named by its type, and by its
                // name where it has one (`custom`).
                None => match d.get("name") {
                    Some(name) => json!({"type": d["type"], "name": name}),
                    None => json!({"type": d["type"]}),
                },
            });
        let named = std::iter::once(ENABLE_TOOL)
            .chain(self.order.iter().map(String::as_str))
            .map(|name| json!({"type": "function", "name": name}));
        json!({"type": "allowed_tools", "mode": "auto", "tools": builtins.chain(named).collect::<Vec<_>>()})
    }
}

fn enable_tool(ctx: &Context) -> Value {
    wire::function_definition(
        ctx.client.format,
        ENABLE_TOOL,
        "Make tools from the tool list callable. Pass exact names from the list; enable the tool that does the work and any tool that supplies its required arguments in one call. A tool that is already callable needs no enabling: call it. Unknown, unpermitted and already-enabled names come back in `failed`; a server's name returns that server's tool names.",
        json!({"type": "object", "properties": {"names": {"type": "array", "items": {"type": "string"}, "description": "Exact tool names from the list"}}, "required": ["names"]}),
        false,
    )
}

/// The system-prompt section of the allowed-tools delivery: every definition is in `tools`.
const ALLOWED_NOTE: &str = "# Tools\nEvery tool is defined below, but only enabled tools are callable. To use one, call enable_tools with its exact name (and the names of tools that supply its required arguments); it becomes callable in the next step and stays callable for the rest of the conversation. If a tool is already callable, call it; do not enable it again.";

/// Cut at `max` characters on a character boundary, marking the cut.
fn cut(text: &str, max: usize) -> String {
    // Words are joined only until the text is known to be too long.
    let (mut flat, mut chars) = (String::new(), 0);
    for (i, word) in text.split_whitespace().enumerate() {
        if i > 0 {
            flat.push(' ');
            chars += 1;
        }
        flat.push_str(word);
        chars += word.chars().count();
        if chars > max {
            let mut s: String = flat.chars().take(max - 1).collect();
            s.push('…');
            return s;
        }
    }
    flat
}

fn render_list(
    entries: &BTreeMap<String, Entry>,
    servers: &BTreeMap<String, Vec<String>>,
) -> String {
    use std::fmt::Write;
    const HEAD: &str = "# Tool list\nThese tools exist but are not callable yet. To use one, call enable_tools with its exact name \
(and the names of tools that supply its required arguments); it becomes callable in the next step and stays \
callable for the rest of the conversation. If a tool is already callable, call it; do not enable it again.\n";
    // Each name's entry found once, by hash: a search of the ordered map for every line of a
    // large list costs more than writing it.
    let by_name: std::collections::HashMap<&str, &Entry, foldhash::fast::RandomState> =
        entries.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let entry = |name: &str| by_name[name];
    // Sized before it is written: a list of a million tools is hundreds of megabytes, and
    // growing it by doubling would hold two copies at once.
    let lines: usize = servers
        .iter()
        .map(|(server, names)| {
            server.len()
                + 32
                + names
                    .iter()
                    .map(|name| {
                        let e = entry(name);
                        let required: usize = e.required.iter().map(|r| r.len() + 2).sum();
                        name.len() + e.summary.as_str().len() + required + 18
                    })
                    .sum::<usize>()
        })
        .sum();
    let mut out = String::with_capacity(HEAD.len() + lines);
    out.push_str(HEAD);
    for (server, names) in servers {
        let _ = write!(out, "\n## {server} ({} tools)\n", names.len());
        for name in names {
            let e = entry(name);
            debug_assert_eq!(&e.server, server);
            for piece in ["- ", name, ": ", e.summary.as_str()] {
                out.push_str(piece);
            }
            if !e.required.is_empty() {
                out.push_str(" (requires: ");
                for (i, r) in e.required.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(r);
                }
                out.push(')');
            }
            out.push('\n');
        }
    }
    out
}

/// `@name` mentions in the user's turn.
fn mentioned_servers(turn: &str) -> Vec<String> {
    turn.split_whitespace()
        .filter_map(|w| w.strip_prefix('@'))
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '_')
                .to_string()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{cut, is_flat};

    /// A text said to be flat is what cutting it gives back; one that is not differs from its cut.
    #[test]
    fn flat_texts_are_their_own_cut() {
        let alphabet = [
            "a", "b", " ", "  ", "\n", "\t", "é", "\u{a0}", "\u{2028}", "xyz", ".",
        ];
        let mut rng = crate::rng::Rng::new(9);
        for _ in 0..20_000 {
            let n = rng.below(12);
            let text: String = (0..n).map(|_| *rng.pick(&alphabet)).collect();
            for max in [1, 3, 8, 300] {
                assert_eq!(
                    is_flat(&text, max),
                    cut(&text, max) == text,
                    "{text:?} at {max}"
                );
            }
        }
    }
}
