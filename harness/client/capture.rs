//! A client profile made from a request toolcost's gateway captured (`--log-bodies`): the
//! system prompt's parts, the built-in tools, where the MCP tools were and how they were
//! named, the context before the user's turn, and the turn itself, read from the body as the
//! client sent it. Measuring a catalogue with the profile then sends what that client sends.

use super::file::{FilePart, ProfileFile, VERSION};
use super::{NameListMode, Shell, ShellForm};
use crate::error::{Error, Result};
use crate::provider::CacheMark;
use crate::wire::{self, Format};
use rusqlite::OptionalExtension;
use serde_json::Value;
use std::path::Path;

/// What was found besides the profile, for the user to read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Found {
    /// The log row the body came from.
    pub log_id: i64,
    /// MCP tools left out of the profile (they are the catalogue, not the client).
    pub mcp_tools: usize,
    /// The server name the MCP tools carried, where they did.
    pub server: Option<String>,
    /// Messages of the capture the profile does not keep (all but the first user message).
    pub messages_left_out: usize,
}

/// The body of log row `id` (or the newest row with a body), its format and model.
fn body_of(log: &Path, id: Option<i64>) -> Result<(i64, Format, String, Value)> {
    let conn = crate::gateway::log::open_with_bodies(log, "capture a request")?;
    let sql = "SELECT l.id, l.provider_format, l.model, b.body FROM log l JOIN request_body b ON b.log_id = l.id";
    let row = match id {
        Some(id) => conn
            .query_row(&format!("{sql} WHERE l.id = ?1"), [id], read_row)
            .optional()?,
        None => conn
            .query_row(&format!("{sql} ORDER BY l.id DESC LIMIT 1"), [], read_row)
            .optional()?,
    };
    let (id, format, model, body) = row.ok_or_else(|| {
        Error::input(match id {
            Some(id) => format!("{}: no row {id} with a body", log.display()),
            None => format!(
                "{}: no row with a body; run the gateway with --log-bodies and capture a request",
                log.display()
            ),
        })
    })?;
    let format = Format::ALL
        .into_iter()
        .find(|f| f.name() == format)
        .ok_or_else(|| Error::input(format!("row {id}: unknown format `{format}`")))?;
    if body.len() > crate::input::SMALL as usize {
        return Err(Error::input(format!(
            "row {id}: its body is {} bytes, over the 16 MiB a profile is made from",
            body.len()
        )));
    }
    let body: Value = serde_json::from_slice(&body)
        .map_err(|e| Error::input(format!("row {id}: its body is not JSON: {e}")))?;
    Ok((id, format, model, body))
}

fn read_row(r: &rusqlite::Row) -> rusqlite::Result<(i64, String, String, Vec<u8>)> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
}

/// The texts of a content value: a string, or the `text` of each text block.
fn texts(content: &Value) -> Vec<String> {
    match content {
        Value::String(s) => vec![s.clone()],
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str).map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// The system prompt's parts as the body holds them.
fn system_parts(format: Format, body: &Value) -> Vec<String> {
    match format {
        Format::AnthropicMessages => body.get("system").map(texts).unwrap_or_default(),
        Format::OpenaiResponses => body.get("instructions").map(texts).unwrap_or_default(),
        Format::Gemini => body
            .pointer("/systemInstruction/parts")
            .map(texts)
            .unwrap_or_default(),
        Format::OpenaiChat => body["messages"]
            .as_array()
            .map(|m| {
                m.iter()
                    .take_while(|m| matches!(m["role"].as_str(), Some("system" | "developer")))
                    .flat_map(|m| texts(&m["content"]))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// The conversation's messages, system messages left out, and the first user message's texts.
fn first_user(format: Format, body: &Value) -> (usize, Vec<String>) {
    let key = format.spec().conversation_key();
    let messages: Vec<&Value> = body[key]
        .as_array()
        .map(|m| {
            m.iter()
                .filter(|m| !matches!(m["role"].as_str(), Some("system" | "developer")))
                .collect()
        })
        .unwrap_or_default();
    let first = messages.first().map(|m| match format {
        Format::Gemini => texts(&m["parts"]),
        Format::AnthropicMessages | Format::OpenaiChat | Format::OpenaiResponses => {
            texts(&m["content"])
        }
    });
    (messages.len(), first.unwrap_or_default())
}

/// An MCP tool's name as the client wrote it, `mcp__<server>__<tool>`: its server.
fn mcp_server(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("mcp__")?;
    let (server, tool) = rest.split_once("__")?;
    (!server.is_empty() && !tool.is_empty()).then_some(server)
}

/// The built-in a client reaches HTTP with: a tool taking a `command`, or one taking a `url`
/// and a `method`.
fn shell_of(tools: &[Value]) -> Option<Shell> {
    tools.iter().find_map(|t| {
        let (name, _, schema) = wire::definition_parts(t)?;
        let props = schema.get("properties")?;
        let form = match props.get("command").and_then(|c| c["type"].as_str()) {
            Some("string") => ShellForm::CommandText,
            Some("array") => ShellForm::Argv,
            _ if props.get("url").is_some() && props.get("method").is_some() => {
                ShellForm::HttpRequest
            }
            _ => return None,
        };
        Some(Shell {
            tool: name.to_string(),
            form,
        })
    })
}

/// Where the capture put its cache marks (Anthropic's `cache_control`).
fn cache_marks(format: Format, body: &Value) -> Vec<CacheMark> {
    if format != Format::AnthropicMessages {
        return Vec::new();
    }
    let marked = |v: Option<&Value>| {
        v.and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|b| b.get("cache_control").is_some()))
    };
    let mut out = Vec::new();
    if marked(body.get("tools")) {
        out.push(CacheMark::Tools);
    }
    if marked(body.get("system")) {
        out.push(CacheMark::System);
    }
    let last = body["messages"].as_array().and_then(|m| m.last());
    if marked(last.and_then(|m| m.get("content"))) {
        out.push(CacheMark::LastMessage);
    }
    out
}

/// A profile from the captured request of log row `id` (the newest with a body when `None`).
pub fn from_log(log: &Path, id: Option<i64>, name: Option<&str>) -> Result<(ProfileFile, Found)> {
    let (log_id, format, model, body) = body_of(log, id)?;
    let all: Vec<Value> = body
        .get("tools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    // The MCP tools are the catalogue, not the client: left out, their naming kept.
    let mut server = None;
    let mut mcp = 0;
    let mut tools = Vec::new();
    for t in all {
        // A tool's cache mark is where the client put it, not part of its definition.
        let mut t = t;
        if let Some(o) = t.as_object_mut() {
            o.remove("cache_control");
        }
        match wire::definition_parts(&t).and_then(|(n, _, _)| mcp_server(n)) {
            Some(s) => {
                mcp += 1;
                server.get_or_insert_with(|| s.to_string());
            }
            None => tools.push(t),
        }
    }
    let (messages, first) = first_user(format, &body);
    let (context, turn) = match first.split_last() {
        Some((turn, before)) if !before.is_empty() => {
            (Some(before.join("\n\n")), Some(turn.clone()))
        }
        Some((turn, _)) => (None, Some(turn.clone())),
        None => (None, None),
    };
    let max_tokens = ["max_tokens", "max_output_tokens", "max_completion_tokens"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_u64))
        .or_else(|| {
            body.pointer("/generationConfig/maxOutputTokens")
                .and_then(Value::as_u64)
        })
        .unwrap_or(4096)
        .min(u32::MAX as u64) as u32;
    let wire_model = body
        .get("model")
        .and_then(Value::as_str)
        .map_or_else(|| model.clone(), str::to_string);
    let name = name.map_or_else(|| format!("captured-{log_id}"), str::to_string);
    let profile = ProfileFile {
        toolcost_client_profile: VERSION,
        about: format!(
            "A {} client captured by toolcost's gateway (log {}, row {log_id}): its system prompt, built-in tools and first message as sent",
            format.name(),
            log.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_default()
        ),
        label: format!("observed:capture row {log_id}"),
        format,
        model,
        wire_model,
        max_tokens,
        rename: match &server {
            Some(_) => "mcp__{server}__{tool}".into(),
            None => "{tool}".into(),
        },
        max_tools: None,
        name_list_mode: NameListMode::Append,
        cache_marks: cache_marks(format, &body),
        shell: shell_of(&tools),
        system: system_parts(format, &body)
            .into_iter()
            .enumerate()
            .map(|(i, text)| FilePart {
                name: format!("system {}", i + 1),
                text,
            })
            .collect(),
        tools,
        context,
        turn,
        name,
    };
    Ok((
        profile,
        Found {
            log_id,
            mcp_tools: mcp,
            server,
            messages_left_out: messages.saturating_sub(1),
        },
    ))
}
