//! Client profiles: what the calling agent adds to every request (system prompt, built-in
//! tools, how it renames MCP tools, its request format). Each lives in
//! `fixtures/clients/<name>/` and is embedded in the binary.

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
}

/// The built-in tool a client reaches HTTP endpoints with (the protocol-only surface's only
/// way in), and how a command is written into its input.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shell {
    /// The tool's name among the client's built-ins.
    pub tool: String,
    pub form: ShellForm,
}

/// How a shell command is written into the shell tool's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
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
    pub system: String,
    /// Context the client puts in the first user message before the turn (project notes,
    /// git status), or none.
    pub context: Option<String>,
    /// Built-in tool definitions, in the client's request format.
    pub tools: Vec<Value>,
}

const EMBEDDED: &[(&str, &str, &str, &str, &str)] = &[
    (
        "claude-cli",
        include_str!("../fixtures/clients/claude-cli/profile.toml"),
        include_str!("../fixtures/clients/claude-cli/system.md"),
        include_str!("../fixtures/clients/claude-cli/tools.json"),
        include_str!("../fixtures/clients/claude-cli/context.md"),
    ),
    (
        "gemini-cli",
        include_str!("../fixtures/clients/gemini-cli/profile.toml"),
        include_str!("../fixtures/clients/gemini-cli/system.md"),
        include_str!("../fixtures/clients/gemini-cli/tools.json"),
        include_str!("../fixtures/clients/gemini-cli/context.md"),
    ),
    (
        "openai-agent",
        include_str!("../fixtures/clients/openai-agent/profile.toml"),
        include_str!("../fixtures/clients/openai-agent/system.md"),
        include_str!("../fixtures/clients/openai-agent/tools.json"),
        include_str!("../fixtures/clients/openai-agent/context.md"),
    ),
    (
        "openai-responses-agent",
        include_str!("../fixtures/clients/openai-responses-agent/profile.toml"),
        include_str!("../fixtures/clients/openai-responses-agent/system.md"),
        include_str!("../fixtures/clients/openai-responses-agent/tools.json"),
        include_str!("../fixtures/clients/openai-responses-agent/context.md"),
    ),
];

impl Client {
    pub fn names() -> Vec<&'static str> {
        EMBEDDED.iter().map(|e| e.0).collect()
    }

    pub fn named(name: &str) -> Result<Client> {
        let (_, manifest, system, tools, context) = EMBEDDED
            .iter()
            .find(|e| e.0 == name.trim())
            .ok_or_else(|| Error::unknown("client", name, &Self::names()))?;
        let m: Manifest =
            toml::from_str(manifest).map_err(|e| Error::input(format!("client {name}: {e}")))?;
        let raw: Vec<Value> = serde_json::from_str(tools)
            .map_err(|e| Error::input(format!("client {name} tools: {e}")))?;
        let tools: Vec<Value> = raw
            .iter()
            .map(|t| {
                let schema = t["input_schema"].clone();
                wire::function_definition(
                    m.format,
                    t["name"].as_str().unwrap_or(""),
                    t["description"].as_str().unwrap_or(""),
                    schema,
                    false,
                )
            })
            .collect();
        if !tools
            .iter()
            .any(|t: &Value| wire::definition_parts(t).is_some_and(|(n, _, _)| n == m.shell.tool))
        {
            return Err(Error::input(format!(
                "client {name}: its shell tool `{}` is not one of its tools",
                m.shell.tool
            )));
        }
        Ok(Client {
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
            system: system.trim_end().to_string(),
            context: Some(context.trim_end().to_string()).filter(|c| !c.is_empty()),
            tools,
        })
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
