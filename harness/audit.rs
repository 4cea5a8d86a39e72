//! `toolcost audit`: the MCP servers a host is configured with, each reached as `weigh` reaches
//! one, and what a session's first request carries of them on that host: per server and per
//! tool, rendered in the host's API format and counted with its default model's tokenizer.
//!
//! The host files are read from their published formats (each host's docs, read 2026-12-04):
//! - Claude Code: `~/.claude.json` (`mcpServers`, and `projects.<path>.mcpServers`) and a
//!   project's `.mcp.json` (`mcpServers`): `type` stdio (`command`, `args`, `env`), `http` or
//!   `sse` (`url`, `headers`);
//! - Claude Desktop `claude_desktop_config.json`, Cursor `mcp.json`: `mcpServers`, `command`/
//!   `args`/`env` or `url`/`headers`;
//! - VS Code `mcp.json`: `servers`, with `type`, the same members;
//! - Windsurf `mcp_config.json`: `mcpServers`, `serverUrl` for a remote one;
//! - Codex CLI `config.toml`: `[mcp_servers.<name>]` with `command`, `args`, `env`, or `url`;
//! - Gemini CLI `settings.json`: `mcpServers`, `command`/`args`/`env`, `httpUrl` (Streamable
//!   HTTP) or `url`, `headers`, and `includeTools` / `excludeTools`, which it applies.
//!
//! Secrets stay where they are: `env` values and headers are passed to the server and never
//! printed; a server is named by its configured name and its program or URL host alone.

use crate::client::Client;
use crate::error::{Error, Result};
use crate::mcp::{Options, Target};
use crate::pricing::PriceCard;
use crate::report::{Column, Tabular};
use crate::tokens::Tokenizer;
use crate::wire;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// A host whose MCP configuration toolcost reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Host {
    ClaudeCode,
    ClaudeDesktop,
    Cursor,
    Vscode,
    Windsurf,
    Codex,
    GeminiCli,
}

impl Host {
    pub const NAMES: [&'static str; 7] = [
        "claude-code",
        "claude-desktop",
        "cursor",
        "vscode",
        "windsurf",
        "codex",
        "gemini-cli",
    ];

    pub fn parse(name: &str) -> Result<Host> {
        Ok(match name.trim() {
            "claude-code" => Host::ClaudeCode,
            "claude-desktop" => Host::ClaudeDesktop,
            "cursor" => Host::Cursor,
            "vscode" => Host::Vscode,
            "windsurf" => Host::Windsurf,
            "codex" => Host::Codex,
            "gemini-cli" => Host::GeminiCli,
            other => return Err(Error::unknown("host", other, &Self::NAMES)),
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::ClaudeDesktop => "claude-desktop",
            Host::Cursor => "cursor",
            Host::Vscode => "vscode",
            Host::Windsurf => "windsurf",
            Host::Codex => "codex",
            Host::GeminiCli => "gemini-cli",
        }
    }

    /// The host a configuration file belongs to, from its name and place.
    pub fn of_file(path: &Path) -> Option<Host> {
        let name = path.file_name()?.to_str()?;
        let parent = path
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|p| p.to_str())
            .unwrap_or("");
        Some(match (parent, name) {
            (_, ".claude.json" | ".mcp.json") => Host::ClaudeCode,
            (_, "claude_desktop_config.json") => Host::ClaudeDesktop,
            (".cursor", "mcp.json") => Host::Cursor,
            (".vscode" | "User", "mcp.json") => Host::Vscode,
            (_, "mcp_config.json") => Host::Windsurf,
            (".codex", "config.toml") => Host::Codex,
            (".gemini", "settings.json") => Host::GeminiCli,
            _ => return None,
        })
    }

    /// The client profile and default model a host's first request is priced on, and whether
    /// the pairing is toolcost's assumption (no profile of that host's own).
    pub fn profile(self) -> (&'static str, &'static str, bool) {
        match self {
            Host::ClaudeCode => ("claude-cli", "claude-sonnet-5-5", false),
            Host::ClaudeDesktop => ("claude-cli", "claude-sonnet-5-5", true),
            Host::GeminiCli => ("gemini-cli", "gemini-3.5-flash", false),
            Host::Codex => ("openai-responses-agent", "gpt-5.6", true),
            Host::Cursor | Host::Vscode | Host::Windsurf => ("openai-agent", "gpt-5.6", true),
        }
    }
}

/// One configured server: how to reach it and what the host keeps of its tools.
#[derive(Debug, Clone)]
pub struct Server {
    pub name: String,
    /// The program or the URL's host: what the report says of where it runs.
    pub shown: String,
    pub reach: Reach,
    /// Gemini CLI's `includeTools` (only these) and `excludeTools`.
    pub include: Option<Vec<String>>,
    pub exclude: Vec<String>,
}

#[derive(Debug, Clone)]
pub enum Reach {
    Stdio {
        argv: Vec<String>,
        env: Vec<(String, String)>,
    },
    Http {
        url: String,
        headers: Vec<String>,
    },
    /// A server the file names but toolcost cannot reach (an SSE-only transport, no command).
    Unreachable(String),
}

/// The servers of one host file.
pub fn servers(host: Host, text: &str) -> Result<Vec<Server>> {
    let root: Value = match host {
        Host::Codex => {
            let t: toml::Value = toml::from_str(text)
                .map_err(|e| Error::input(format!("codex config.toml: {e}")))?;
            serde_json::to_value(t).map_err(|e| Error::input(e.to_string()))?
        }
        _ => serde_json::from_str(text)
            .map_err(|e| Error::input(format!("{} config: {e}", host.name())))?,
    };
    let key = match host {
        Host::Vscode => "servers",
        Host::Codex => "mcp_servers",
        _ => "mcpServers",
    };
    let mut maps: Vec<&serde_json::Map<String, Value>> = root
        .get(key)
        .and_then(Value::as_object)
        .into_iter()
        .collect();
    // Claude Code keeps project servers under `projects.<path>.mcpServers` too.
    if host == Host::ClaudeCode {
        for p in root
            .get("projects")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.values())
        {
            maps.extend(p.get("mcpServers").and_then(Value::as_object));
        }
    }
    let mut out = Vec::new();
    for m in maps {
        for (name, s) in m {
            out.push(server(name, s));
        }
    }
    if out.len() > 1000 {
        return Err(Error::input(format!(
            "{} servers configured: more than toolcost audits at once (1,000)",
            out.len()
        )));
    }
    Ok(out)
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect()
}

fn server(name: &str, s: &Value) -> Server {
    let text = |k: &str| s.get(k).and_then(Value::as_str).map(String::from);
    let headers: Vec<String> = s
        .get("headers")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| v.as_str().map(|v| format!("{k}: {v}")))
        .collect();
    let kind = text("type").unwrap_or_default();
    let url = text("httpUrl")
        .or_else(|| text("serverUrl"))
        .or_else(|| text("url"));
    let reach = match (text("command"), url) {
        (Some(cmd), _) => {
            let mut argv = vec![cmd];
            argv.extend(strings(s.get("args")));
            let env = s
                .get("env")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect();
            Reach::Stdio { argv, env }
        }
        (None, Some(_)) if kind == "sse" => Reach::Unreachable(
            "an SSE-only server (the transport MCP deprecated): toolcost speaks Streamable HTTP and stdio".into(),
        ),
        (None, Some(url)) => Reach::Http { url, headers },
        (None, None) => Reach::Unreachable("neither `command` nor a URL is configured".into()),
    };
    let shown = match &reach {
        Reach::Stdio { argv, .. } => Path::new(&argv[0])
            .file_name()
            .and_then(|f| f.to_str())
            .unwrap_or(&argv[0])
            .to_string(),
        Reach::Http { url, .. } => reqwest::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(String::from))
            .unwrap_or_else(|| "(unparsable URL)".into()),
        Reach::Unreachable(_) => String::new(),
    };
    let include = s.get("includeTools").map(|v| strings(Some(v)));
    Server {
        name: name.to_string(),
        shown,
        reach,
        include,
        exclude: strings(s.get("excludeTools")),
    }
}

/// One row of the audit: a server's total (`tool` empty), or one of its tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRow {
    pub host: String,
    pub server: String,
    /// The tool as the host names it to the model; empty on the server's row.
    pub tool: String,
    /// `ok`, or why the server could not be weighed.
    pub status: String,
    pub tools: usize,
    /// Compact bytes of the definitions as the host's API format writes them.
    pub bytes: usize,
    /// Tokens of those definitions with the host's default model's tokenizer.
    pub tokens: u64,
    pub model: String,
    pub label: String,
}

impl Tabular for AuditRow {
    const COLUMNS: &'static [Column] = &[];
    const BRIEF: &'static [&'static str] = &[
        "host", "server", "tool", "status", "tools", "bytes", "tokens",
    ];
}

/// Weigh every server of one host file.
pub async fn audit(host: Host, servers: &[Server], timeout: Duration) -> Result<Vec<AuditRow>> {
    let (profile, model, assumed) = host.profile();
    let client = Client::named(profile)?;
    let card = PriceCard::named(model)?;
    let tok: Tokenizer = card.tokenizer();
    tok.ready()?;
    let label = format!(
        "bytes derived from the server's observed tools/list; tokens {}; client {profile}{}",
        tok.label(),
        match assumed {
            true => " (assumed for this host)",
            false => "",
        }
    );
    let mut out = Vec::new();
    for s in servers {
        let row = |tool: String, status: String, tools, bytes, tokens| AuditRow {
            host: host.name().into(),
            server: s.name.clone(),
            tool,
            status,
            tools,
            bytes,
            tokens,
            model: card.id.clone(),
            label: label.clone(),
        };
        let target = match &s.reach {
            Reach::Stdio { argv, env } => Target::Command {
                argv: argv.clone(),
                env: env.clone(),
                timeout,
                opts: Options::default(),
            },
            Reach::Http { url, headers } => Target::Http {
                url: url.clone(),
                headers: headers.clone(),
                timeout,
                opts: Options::default(),
            },
            Reach::Unreachable(why) => {
                out.push(row(String::new(), format!("not weighed: {why}"), 0, 0, 0));
                continue;
            }
        };
        let cat = match target.fetch().await {
            Ok((cat, _)) => cat,
            Err(e) => {
                // The error may quote what the server printed: never the env or headers.
                out.push(row(
                    String::new(),
                    format!("failed: {}", first_line(&e.to_string())),
                    0,
                    0,
                    0,
                ));
                continue;
            }
        };
        let kept: Vec<&crate::catalogue::Tool> = cat
            .tools
            .iter()
            .filter(|t| s.include.as_ref().is_none_or(|i| i.contains(&t.name)))
            .filter(|t| !s.exclude.contains(&t.name))
            .collect();
        let mut tools = Vec::new();
        for t in &kept {
            let name = client.tool_name(&s.name, &t.name);
            let def = wire::tool_definition(client.format, &name, t, false);
            let text = crate::json::compact(&def);
            let tokens = tok.count(&text).round() as u64;
            tools.push(row(name, "ok".into(), 1, text.len(), tokens));
        }
        out.push(row(
            String::new(),
            "ok".into(),
            tools.len(),
            tools.iter().map(|r| r.bytes).sum(),
            tools.iter().map(|r| r.tokens).sum(),
        ));
        out.extend(tools);
    }
    Ok(out)
}

fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    match line.chars().count() > 300 {
        true => line.chars().take(300).collect::<String>() + "…",
        false => line.to_string(),
    }
}
