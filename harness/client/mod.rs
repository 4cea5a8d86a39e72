//! Client profiles: what the calling agent adds to every request (system prompt, built-in
//! tools, how it renames MCP tools, its request format). Each lives in
//! `fixtures/clients/<name>/` and is embedded in the binary.

pub mod capture;
pub mod file;

use crate::error::{Error, Result};
use crate::provider::CacheMark;
use crate::wire::{self, Format};
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    name: String,
    about: String,
    format: Format,
    model: String,
    wire_model: String,
    max_tokens: u32,
    rename: String,
    max_tools: Option<usize>,
    /// Name-list enabling: `hidden` (defer_loading declarations, expanded by reference) or
    /// `append` (enabled definitions appended to the tools array, sorted by name).
    name_list_mode: NameListMode,
    /// Where the client puts prompt-cache marks (Anthropic `cache_control`).
    #[serde(default)]
    cache_marks: Vec<CacheMark>,
    /// The built-in tool the client reaches HTTP with, and the shape of its input.
    shell: Shell,
    /// The client's version, where the profile is made of a real version's measured parts.
    version: Option<String>,
    /// The evidence label of the profile's text, where it is not the project's own writing
    /// (`calibrated:<fit>` for text written to a real client's measured sizes).
    label: Option<String>,
    /// The client's tool search: which built-ins stay loaded when it is on.
    tool_search: Option<ToolSearchSpec>,
}

/// A client's tool search as its profile writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolSearchSpec {
    /// The search tool's name (its definition is in the profile's `tools.json`).
    tool: String,
    /// The built-ins that stay loaded; the others are deferred and named in a reminder.
    loaded: Vec<String>,
    /// Whether the client searches by default.
    default_on: bool,
    /// The reminder the client puts before the user's first message, `{names}` standing for
    /// the deferred names, one a line.
    reminder: String,
    /// Where the loaded set and the switch come from.
    source: String,
}

/// One named part of a client's system prompt or its session context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub name: String,
    pub text: String,
}

/// A client's tool search switch, and what each position sends.
#[derive(Debug, Clone)]
pub struct ToolSearch {
    /// The switch's position.
    pub on: bool,
    /// The search tool's definition, in the client's request format.
    pub tool: Value,
    pub loaded: Vec<String>,
    reminder: String,
    pub source: String,
}

/// The built-in tool a client reaches HTTP endpoints with (the protocol-only surface's only
/// way in), and how a command is written into its input.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Shell {
    /// The tool's name among the client's built-ins.
    pub tool: String,
    pub form: ShellForm,
}

/// How a shell command is written into the shell tool's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShellForm {
    /// `{"command": "<text>", "description": "<what it does>"}` (claude-cli's Bash).
    CommandText,
    /// `{"command": ["bash", "-lc", "<text>"]}` (a Codex-like `shell`).
    Argv,
    /// No shell: one `{"method", "url", "headers", "body"}` call per HTTP request, several in
    /// parallel (an `http_request` function).
    HttpRequest,
}

/// How the name-list surface makes an enabled tool callable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NameListMode {
    Hidden,
    Append,
}

/// A client profile.
#[derive(Debug, Clone)]
pub struct Client {
    pub name: String,
    pub about: String,
    pub format: Format,
    /// Default price-card model for this client.
    pub model: String,
    /// The `model` field the client sends.
    pub wire_model: String,
    pub max_tokens: u32,
    /// Rename rule with `{server}` and `{tool}`.
    pub rename: String,
    /// The most tools the provider accepts in one request.
    pub max_tools: Option<usize>,
    pub name_list_mode: NameListMode,
    /// Where the client puts prompt-cache marks; figures that depend on caching assume this
    /// placement.
    pub cache_marks: Vec<CacheMark>,
    /// The tool it reaches HTTP with.
    pub shell: Shell,
    /// Context the client puts in the first user message before the turn (project notes,
    /// git status), or none.
    pub context: Option<String>,
    /// The tools the client sends before any MCP tool, in its request format: every built-in,
    /// or with tool search on the loaded ones and the search tool.
    pub tools: Vec<Value>,
    /// The client's version, where it is modelled on a real one.
    pub version: Option<String>,
    /// The evidence label of the profile's own text (`None`: written here as a stand-in).
    pub label: Option<String>,
    /// The system prompt's parts, in order ([`Client::system_blocks`] adds the session parts).
    pub system_parts: Vec<Part>,
    /// The user's own session context the client puts in its system prompt (memory,
    /// environment), where the profile models it; left out with [`Client::with_session`].
    pub session_parts: Vec<Part>,
    /// Whether the session parts are sent.
    pub session: bool,
    /// Every built-in tool, whether or not tool search defers it.
    pub builtins: Vec<Value>,
    /// The client's tool search, where it has one.
    pub tool_search: Option<ToolSearch>,
    /// The context the profile puts in the first user message, before any reminder.
    base_context: Option<String>,
    /// The built-ins as their parts are measured (`{"name", "description", "input_schema"}`),
    /// for a profile of parts.
    measured_tools: Vec<Value>,
    /// The real client's parts as measured, for a profile of parts.
    measured: Vec<MeasuredPart>,
    /// The user's turn a captured profile holds: the default turn measured with it.
    pub turn: Option<String>,
}

/// A profile's files: its manifest, system prompt, tools, context and, for a profile made of a
/// real client's parts, the parts' text and the schemas of its built-ins.
struct Embedded {
    name: &'static str,
    manifest: &'static str,
    system: &'static str,
    tools: &'static str,
    context: &'static str,
    parts: Option<Parts>,
}

/// The files of a profile made of a real client's measured parts.
struct Parts {
    /// `parts.json`: each part's text, written here.
    text: &'static str,
    /// `schemas.json`: the built-ins' input schemas.
    schemas: &'static str,
    /// `parts.toml`: each part's measured size.
    sizes: &'static str,
}

/// A real client's part as it was measured: its size in bytes and on each tokenizer it was
/// counted with (each part alone; a tool as its compact `{"name", "description",
/// "input_schema"}` JSON).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasuredPart {
    /// `system`, `session` or `tool`.
    pub kind: String,
    pub name: String,
    pub bytes: u64,
    pub kimi: u64,
    pub o200k: u64,
    pub claude_v3: u64,
    pub claude_v5: u64,
}

impl MeasuredPart {
    /// The measured size under `tok`; `None` for a tokenizer it was not measured with.
    pub fn size(&self, tok: crate::tokens::Tokenizer) -> Option<u64> {
        use crate::tokens::Tokenizer as T;
        match tok {
            T::Kimi => Some(self.kimi),
            T::O200k => Some(self.o200k),
            T::ClaudeV3 => Some(self.claude_v3),
            T::ClaudeV5 => Some(self.claude_v5),
            T::Cl100k
            | T::Deepseek
            | T::Qwen
            | T::Glm
            | T::Llama3
            | T::Llama4
            | T::Mistral
            | T::MistralSpm1
            | T::MistralSpm3
            | T::MistralSpm7
            | T::ClaudeV4_7
            | T::ClaudeEst
            | T::ClaudeLegacyEst
            | T::Gemma3 => None,
        }
    }

    /// [`MeasuredPart::size`] as a figure, NaN where it was not measured.
    pub fn tokens(&self, tok: crate::tokens::Tokenizer) -> f64 {
        self.size(tok).map_or(f64::NAN, |n| n as f64)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MeasuredParts {
    part: Vec<MeasuredPart>,
}

const EMBEDDED: &[Embedded] = &[
    Embedded {
        name: "claude-cli",
        manifest: include_str!("../../fixtures/clients/claude-cli/profile.toml"),
        system: "",
        tools: include_str!("../../fixtures/clients/claude-cli/tools.json"),
        context: include_str!("../../fixtures/clients/claude-cli/context.md"),
        parts: Some(Parts {
            text: include_str!("../../fixtures/clients/claude-cli/parts.json"),
            schemas: include_str!("../../fixtures/clients/claude-cli/schemas.json"),
            sizes: include_str!("../../fixtures/clients/claude-cli/parts.toml"),
        }),
    },
    Embedded {
        name: "gemini-cli",
        manifest: include_str!("../../fixtures/clients/gemini-cli/profile.toml"),
        system: include_str!("../../fixtures/clients/gemini-cli/system.md"),
        tools: include_str!("../../fixtures/clients/gemini-cli/tools.json"),
        context: include_str!("../../fixtures/clients/gemini-cli/context.md"),
        parts: None,
    },
    Embedded {
        name: "openai-agent",
        manifest: include_str!("../../fixtures/clients/openai-agent/profile.toml"),
        system: include_str!("../../fixtures/clients/openai-agent/system.md"),
        tools: include_str!("../../fixtures/clients/openai-agent/tools.json"),
        context: include_str!("../../fixtures/clients/openai-agent/context.md"),
        parts: None,
    },
    Embedded {
        name: "openai-responses-agent",
        manifest: include_str!("../../fixtures/clients/openai-responses-agent/profile.toml"),
        system: include_str!("../../fixtures/clients/openai-responses-agent/system.md"),
        tools: include_str!("../../fixtures/clients/openai-responses-agent/tools.json"),
        context: include_str!("../../fixtures/clients/openai-responses-agent/context.md"),
        parts: None,
    },
];

impl Client {
    pub fn names() -> Vec<&'static str> {
        EMBEDDED.iter().map(|e| e.name).collect()
    }

    /// An embedded profile by name, or a profile file (`toolcost profile --from-log`) by a path
    /// ending in `.json`.
    pub fn named(name: &str) -> Result<Client> {
        if name.trim().ends_with(".json") {
            return Client::from_file(std::path::Path::new(name.trim()));
        }
        let e = EMBEDDED
            .iter()
            .find(|e| e.name == name.trim())
            .ok_or_else(|| Error::unknown("client", name, &Self::names()))?;
        let m: Manifest = toml::from_str(e.manifest)
            .map_err(|err| Error::input(format!("client {name}: {err}")))?;
        let raw: Vec<Value> = serde_json::from_str(e.tools)
            .map_err(|err| Error::input(format!("client {name} tools: {err}")))?;
        let (system_parts, session_parts, builtins_raw) = match &e.parts {
            Some(p) => parts_of(name, p.text, p.schemas)?,
            None => (
                vec![Part {
                    name: "system".into(),
                    text: e.system.trim_end().to_string(),
                }],
                Vec::new(),
                Vec::new(),
            ),
        };
        let define = |t: &Value| {
            wire::function_definition(
                m.format,
                t["name"].as_str().unwrap_or(""),
                t["description"].as_str().unwrap_or(""),
                t["input_schema"].clone(),
                false,
            )
        };
        // A profile of parts lists its built-ins there; its tools.json holds what the client
        // adds (the search tool). Any other profile's tools.json holds its built-ins.
        let (builtins, extra): (Vec<Value>, Vec<Value>) = match e.parts {
            Some(_) => (
                builtins_raw.iter().map(define).collect(),
                raw.iter().map(define).collect(),
            ),
            None => (raw.iter().map(define).collect(), Vec::new()),
        };
        let named_in = |tools: &[Value], n: &str| {
            tools
                .iter()
                .find(|t| wire::definition_parts(t).is_some_and(|(x, _, _)| x == n))
                .cloned()
        };
        let tool_search = match &m.tool_search {
            None => None,
            Some(ts) => {
                let tool = named_in(&extra, &ts.tool).ok_or_else(|| {
                    Error::input(format!(
                        "client {name}: its search tool `{}` is not in its tools.json",
                        ts.tool
                    ))
                })?;
                if let Some(missing) = ts.loaded.iter().find(|l| named_in(&builtins, l).is_none()) {
                    return Err(Error::input(format!(
                        "client {name}: `{missing}` is kept loaded but is not one of its built-ins"
                    )));
                }
                Some(ToolSearch {
                    on: ts.default_on,
                    tool,
                    loaded: ts.loaded.clone(),
                    reminder: ts.reminder.clone(),
                    source: ts.source.clone(),
                })
            }
        };
        if named_in(&builtins, &m.shell.tool).is_none() {
            return Err(Error::input(format!(
                "client {name}: its shell tool `{}` is not one of its tools",
                m.shell.tool
            )));
        }
        let mut client = Client {
            name: m.name,
            about: m.about,
            format: m.format,
            model: m.model,
            wire_model: m.wire_model,
            max_tokens: m.max_tokens,
            rename: m.rename,
            max_tools: m.max_tools,
            name_list_mode: m.name_list_mode,
            cache_marks: m.cache_marks,
            shell: m.shell,
            context: None,
            tools: Vec::new(),
            version: m.version,
            label: m.label,
            system_parts,
            session_parts,
            session: true,
            builtins,
            tool_search,
            base_context: Some(e.context.trim_end().to_string()).filter(|c| !c.is_empty()),
            measured_tools: builtins_raw,
            measured: match &e.parts {
                Some(p) => {
                    toml::from_str::<MeasuredParts>(p.sizes)
                        .map_err(|err| Error::input(format!("client {name} parts.toml: {err}")))?
                        .part
                }
                None => Vec::new(),
            },
            turn: None,
        };
        client.assemble();
        Ok(client)
    }

    /// The system prompt's parts as the client sends them: its own, then the session parts when
    /// they are sent (one part for a profile written as one text).
    pub fn system_blocks(&self) -> Vec<String> {
        let session = match self.session {
            true => self.session_parts.as_slice(),
            false => &[],
        };
        self.system_parts
            .iter()
            .chain(session)
            .map(|p| p.text.clone())
            .collect()
    }

    /// The client with its tool search switched on or off (a client without one is returned
    /// as it is).
    pub fn with_tool_search(mut self, on: bool) -> Client {
        if let Some(ts) = &mut self.tool_search {
            ts.on = on;
        }
        self.assemble();
        self
    }

    /// The client with the user's session context (its memory, environment) sent or left out.
    pub fn with_session(mut self, on: bool) -> Client {
        self.session = on;
        self.assemble();
        self
    }

    /// Whether tool search is on (`None`: the client has none).
    pub fn tool_search_on(&self) -> Option<bool> {
        self.tool_search.as_ref().map(|t| t.on)
    }

    /// The client's name as a label: its name, version and the tool-search position.
    pub fn describe(&self) -> String {
        let mut s = self.name.clone();
        if let Some(v) = &self.version {
            s.push_str(&format!(" {v}"));
        }
        if let Some(on) = self.tool_search_on() {
            s.push_str(match on {
                true => " (tool search on)",
                false => " (tool search off)",
            });
        }
        if !self.session && !self.session_parts.is_empty() {
            s.push_str(" (no session context)");
        }
        s
    }

    /// What the measured parts this client sends count under `tok`, each alone as a part is
    /// measured: the system parts, the session parts when they are sent, and each built-in sent
    /// as its compact `{"name", "description", "input_schema"}` JSON (the search tool, not a
    /// measured part, left out). Zero for a profile that is not made of parts.
    pub fn parts_tokens(&self, tok: crate::tokens::Tokenizer) -> f64 {
        self.measured_sent()
            .map(|p| self.part_tokens(&p.kind, &p.name, tok))
            .sum()
    }

    /// The names of the tools the client sends before any MCP tool, in order.
    pub fn sent_tool_names(&self) -> Vec<&str> {
        self.tools
            .iter()
            .filter_map(|t| wire::definition_parts(t).map(|(n, _, _)| n))
            .collect()
    }

    /// The real client's measured parts this client sends as it is switched: every system
    /// part, the session parts when they are sent, and each built-in it sends (none for a
    /// profile not made of parts).
    pub fn measured_sent(&self) -> impl Iterator<Item = &MeasuredPart> {
        let sent = self.sent_tool_names();
        self.measured.iter().filter(move |p| match p.kind.as_str() {
            "tool" => sent.contains(&p.name.as_str()),
            "session" => self.session,
            _ => true,
        })
    }

    /// The real client's parts as measured (empty for a profile not made of parts).
    pub fn measured_sizes(&self) -> &[MeasuredPart] {
        &self.measured
    }

    /// What this profile's own text for one part counts under `tok` (a tool as its compact
    /// JSON); NaN for a part it does not have.
    pub fn part_tokens(&self, kind: &str, name: &str, tok: crate::tokens::Tokenizer) -> f64 {
        let text = |parts: &[Part]| {
            parts
                .iter()
                .find(|p| p.name == name)
                .map(|p| tok.count(&p.text))
        };
        match kind {
            "system" => text(&self.system_parts),
            "session" => text(&self.session_parts),
            _ => self
                .measured_tools
                .iter()
                .find(|t| t["name"] == name)
                .map(|t| tok.count(&crate::json::compact(t))),
        }
        .unwrap_or(f64::NAN)
    }

    /// The built-ins tool search defers, in the client's order (none when it is off).
    pub fn deferred_builtins(&self) -> Vec<String> {
        match &self.tool_search {
            Some(ts) if ts.on => self
                .builtins
                .iter()
                .filter_map(|t| wire::definition_parts(t).map(|(n, _, _)| n.to_string()))
                .filter(|n| !ts.loaded.contains(n))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// System text, tools and first-message context from the parts and the switches.
    fn assemble(&mut self) {
        let deferred = self.deferred_builtins();
        self.tools = match &self.tool_search {
            Some(ts) if ts.on => {
                let mut t: Vec<Value> = self
                    .builtins
                    .iter()
                    .filter(|t| {
                        wire::definition_parts(t)
                            .is_some_and(|(n, _, _)| ts.loaded.iter().any(|l| l == n))
                    })
                    .cloned()
                    .collect();
                t.push(ts.tool.clone());
                t
            }
            _ => self.builtins.clone(),
        };
        let reminder = match &self.tool_search {
            Some(ts) if ts.on && !deferred.is_empty() => {
                Some(ts.reminder.replace("{names}", &deferred.join("\n")))
            }
            _ => None,
        };
        self.context = match (&self.base_context, reminder) {
            (Some(c), Some(r)) => Some(format!("{r}\n{c}")),
            (Some(c), None) => Some(c.clone()),
            (None, r) => r,
        };
    }

    /// The cache-mark placement in words, for labels: `system, last-message`, or `none`.
    pub fn cache_placement(&self) -> String {
        if self.cache_marks.is_empty() {
            return "none".into();
        }
        self.cache_marks
            .iter()
            .map(|m| match m {
                CacheMark::Tools => "tools",
                CacheMark::System => "system",
                CacheMark::LastMessage => "last-message",
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The name the model sees for an MCP tool.
    pub fn tool_name(&self, server: &str, tool: &str) -> String {
        self.rename
            .replace("{server}", server)
            .replace("{tool}", tool)
    }
}

/// A profile's parts (`parts.json`: `"<kind>: <name>"` to text) and its built-ins' schemas
/// (`schemas.json`: tool name to input schema): the system parts, the session parts and the
/// built-in tools as `{"name", "description", "input_schema"}`, in the order written.
fn parts_of(name: &str, parts: &str, schemas: &str) -> Result<(Vec<Part>, Vec<Part>, Vec<Value>)> {
    let bad =
        |what: &str, e: &dyn std::fmt::Display| Error::input(format!("client {name} {what}: {e}"));
    let parts: serde_json::Map<String, Value> =
        serde_json::from_str(parts).map_err(|e| bad("parts.json", &e))?;
    let schemas: serde_json::Map<String, Value> =
        serde_json::from_str(schemas).map_err(|e| bad("schemas.json", &e))?;
    let (mut system, mut session, mut tools) = (Vec::new(), Vec::new(), Vec::new());
    for (key, text) in parts {
        let text = text
            .as_str()
            .ok_or_else(|| bad("parts.json", &format!("`{key}` is not a string")))?
            .to_string();
        let (kind, part) = key
            .split_once(": ")
            .ok_or_else(|| bad("parts.json", &format!("`{key}` is not `<kind>: <name>`")))?;
        match kind {
            "system" => system.push(Part {
                name: part.into(),
                text,
            }),
            "session" => session.push(Part {
                name: part.into(),
                text,
            }),
            "tool" => {
                let schema = schemas
                    .get(part)
                    .ok_or_else(|| bad("schemas.json", &format!("no schema for `{part}`")))?;
                tools.push(
                    serde_json::json!({"name": part, "description": text, "input_schema": schema}),
                );
            }
            other => {
                return Err(bad(
                    "parts.json",
                    &format!("unknown kind `{other}` in `{key}`"),
                ))
            }
        }
    }
    Ok((system, session, tools))
}
