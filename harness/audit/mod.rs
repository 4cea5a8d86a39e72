//! `toolcost audit`: the MCP servers a host is configured with, each reached as `weigh` reaches
//! one, and what a session's first request carries of them on that host: per server and per
//! tool, rendered in the host's API format and counted with its default model's tokenizer.
//!
//! Each host's files are read as that host reads them, one file per host under [`hosts`]
//! (scopes and which wins, disabled servers and tool filters, placeholders, what a relative path
//! means, how a server is reached); [`entry`] holds what they share, the environment a started
//! server gets among it (a minimal base and the entry's own `env`, never toolcost's).
//!
//! Secrets stay where they are: `env` values and headers are passed to the server and never
//! printed; a server is named by its configured name and its program or URL host alone, and any
//! text a row quotes (a server's error) has its URLs' credentials redacted.

pub mod deferral;
pub mod entry;
pub mod hosts;

use crate::client::Client;
use crate::error::{Error, Result};
use crate::mcp::{Launch, Options, Target};
use crate::pricing::PriceCard;
use crate::report::{Column, Tabular};
use crate::tokens::Tokenizer;
use crate::wire;
use entry::Context;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};
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
    /// The scope or file it comes from (`user`, `project`, `local`, `workspace`, ...).
    pub scope: String,
    /// The program or the URL's host: what the report says of where it runs.
    pub shown: String,
    pub reach: Reach,
    /// The values its entry took from the environment: never shown.
    pub secrets: Vec<String>,
    /// The tools the host keeps (only these, when set) and drops.
    pub include: Option<Vec<String>>,
    pub exclude: Vec<String>,
}

#[derive(Debug, Clone)]
pub enum Reach {
    /// A process to start: its argv, its whole environment, and its folder.
    Stdio {
        argv: Vec<String>,
        env: Vec<(String, String)>,
        cwd: PathBuf,
    },
    Http {
        url: String,
        headers: Vec<String>,
    },
    /// A server the file names but toolcost cannot reach (an SSE-only transport, an entry the
    /// host refuses, a placeholder that cannot be expanded here): why.
    Unreachable(String),
    /// A server the host does not start (disabled, not approved, not allowed): why.
    Off(String),
}

/// One configuration file, parsed.
#[derive(Debug, Clone)]
pub struct HostFile {
    pub path: PathBuf,
    pub root: Value,
    /// Named by the user with `--config` (which approves what it holds).
    pub named: bool,
}

impl HostFile {
    /// Parse a host's file.
    pub fn parse(host: Host, path: &Path, text: &str, named: bool) -> Result<HostFile> {
        let root: Value = match host {
            Host::Codex => {
                let t: toml::Value = toml::from_str(text).map_err(|e| {
                    Error::input(format!(
                        "codex config.toml: {}",
                        crate::input::toml_error(&e, text)
                    ))
                })?;
                serde_json::to_value(t).map_err(|e| Error::input(e.to_string()))?
            }
            _ => serde_json::from_str(text)
                .map_err(|e| Error::input(format!("{} config: {e}", host.name())))?,
        };
        Ok(HostFile {
            // The file's folder is where its servers run and its relative paths start: a name
            // relative to this folder (`.mcp.json`) has the empty path for its folder, which no
            // server can start in, so the name is kept absolute.
            path: std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
            root,
            named,
        })
    }
}

/// The servers a host's files configure, as that host reads them together.
pub fn servers(host: Host, files: &[HostFile], cx: &Context) -> Result<Vec<Server>> {
    let out = match host {
        Host::ClaudeCode => hosts::claude_code::servers(files, cx),
        Host::ClaudeDesktop => hosts::claude_desktop::servers(files, cx),
        Host::Cursor => hosts::cursor::servers(files, cx),
        Host::Vscode => hosts::vscode::servers(files, cx),
        Host::Windsurf => hosts::windsurf::servers(files, cx),
        Host::Codex => hosts::codex::servers(files, cx),
        Host::GeminiCli => hosts::gemini_cli::servers(files, cx),
    };
    if out.len() > MAX_SERVERS {
        return Err(Error::input(format!(
            "{} servers configured: more than toolcost audits at once ({MAX_SERVERS})",
            out.len()
        )));
    }
    Ok(out)
}

/// The most servers audited at once.
pub const MAX_SERVERS: usize = 1000;

/// Servers weighed at once by default.
pub const DEFAULT_JOBS: usize = 16;

/// One row of the audit: a host's total (`server` `(all)`), a server's total (`tool` empty), or
/// one of its tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRow {
    pub host: String,
    pub server: String,
    /// The scope it was configured in.
    pub scope: String,
    /// The tool as the host names it to the model; empty on a server's and a host's row.
    pub tool: String,
    /// `ok`, or why the server was not weighed.
    pub status: String,
    pub tools: usize,
    /// Compact bytes of the definitions as the host's API format writes them.
    pub bytes: usize,
    /// Tokens of those definitions with the host's default model's tokenizer.
    pub tokens: u64,
    /// What those tokens cost as uncached input on the model's card, once per session start
    /// (derived).
    pub cost_usd: f64,
    /// Tokens of the server's `instructions` as the host adds them to its system prompt every
    /// turn: Claude Code's cut at 2,048 characters (in `tokens` and `cost_usd`); 0 for a host
    /// not known to add them.
    #[serde(default)]
    pub instructions_tokens: u64,
    /// What the definitions carry when the host defers them: each tool's name, in the reminder
    /// that lists the deferred tools.
    #[serde(default)]
    pub deferred_tokens: u64,
    /// On a host's row: whether its session start sends the definitions up front or deferred,
    /// and why ([`deferral`]); empty where the host's rule is not known.
    #[serde(default)]
    pub posture: String,
    pub model: String,
    pub label: String,
}

impl Tabular for AuditRow {
    const COLUMNS: &'static [Column] = &[Column::field("cost_usd")
        .places(6)
        .title("$ per session start (uncached input)")];
    const BRIEF: &'static [&'static str] = &[
        "host", "server", "tool", "status", "tools", "bytes", "tokens", "cost_usd",
    ];
    const CONTEXT: &'static [&'static str] = &["model"];
}

/// What the terminal table's figures are, said under it: what the tokens and dollars cover,
/// and why `weigh` of the same server gives more.
pub const TABLE_NOTE: &str = "tokens: each tool's definition alone, as the host's API format \
writes it, counted with the model's tokenizer; $: those tokens as uncached input at the model's \
input price, once per session start. `toolcost weigh` of the same server gives more: it bills \
the definitions inside one request, with the provider's tool-use prompt and framing.\n";

/// What one host is weighed with.
struct Pricing {
    client: Client,
    card: PriceCard,
    tok: Tokenizer,
    label: String,
}

fn pricing(host: Host) -> Result<Pricing> {
    let (profile, model, assumed) = host.profile();
    let client = Client::named(profile)?;
    let card = PriceCard::named(model)?;
    let tok: Tokenizer = card.tokenizer();
    tok.ready()?;
    let label = format!(
        "bytes derived from the server's observed tools/list; tokens {}; client {profile}{}; dollars derived at {}'s input price, once per session start",
        tok.label(),
        match assumed {
            true => " (assumed for this host)",
            false => "",
        },
        card.id
    );
    Ok(Pricing {
        client,
        card,
        tok,
        label,
    })
}

/// Weigh every server of every host, `jobs` at a time: a host that cannot be priced (its
/// tokenizer missing, say) has rows that say so, and the others are weighed as ever. Rows come
/// in the order given: per host its total, then per server its total and its tools.
pub async fn audit(
    hosts: &[(Host, Vec<Server>)],
    postures: &[Option<deferral::Posture>],
    timeout: Duration,
    jobs: usize,
) -> Vec<AuditRow> {
    let priced: Vec<std::result::Result<Pricing, String>> = hosts
        .iter()
        .map(|(h, _)| pricing(*h).map_err(|e| e.to_string()))
        .collect();
    let work: Vec<(usize, &Server)> = hosts
        .iter()
        .enumerate()
        .flat_map(|(i, (_, servers))| servers.iter().map(move |s| (i, s)))
        .collect();
    let weighed: Vec<Vec<AuditRow>> = futures_util::stream::iter(work.iter().map(|(i, s)| {
        let (host, _) = &hosts[*i];
        weigh(*host, &priced[*i], s, timeout)
    }))
    .buffered(jobs.max(1))
    .collect()
    .await;
    let mut out = Vec::new();
    let mut rows = weighed.into_iter();
    for (i, (host, servers)) in hosts.iter().enumerate() {
        let mine: Vec<AuditRow> = rows.by_ref().take(servers.len()).flatten().collect();
        let (model, label) = match &priced[i] {
            Ok(p) => (p.card.id.clone(), p.label.clone()),
            Err(why) => (String::new(), format!("not priced: {why}")),
        };
        let totals: Vec<&AuditRow> = mine.iter().filter(|r| r.tool.is_empty()).collect();
        let up_front: u64 = totals.iter().map(|r| r.tokens).sum();
        let instructions: u64 = totals.iter().map(|r| r.instructions_tokens).sum();
        let deferred: u64 = totals.iter().map(|r| r.deferred_tokens).sum();
        let window = priced[i].as_ref().map_or(0, |p| p.card.context_window);
        let definitions = up_front.saturating_sub(instructions);
        // The session start as the host's rule sends it: definitions deferred leave their
        // names; the instructions stay either way.
        let (tokens, posture) = match postures.get(i).and_then(Option::as_ref) {
            Some(p) if p.defers(definitions, window) => (
                deferred + instructions,
                format!(
                    "deferred ({}): the names {} tokens, up front {} tokens",
                    p.why(),
                    deferred,
                    definitions
                ),
            ),
            Some(p) => (
                up_front,
                format!(
                    "up front ({}): deferred would be {} tokens",
                    p.why(),
                    deferred
                ),
            ),
            None => (up_front, String::new()),
        };
        let cost_usd = match &priced[i] {
            Ok(p) => tokens as f64 * p.card.input / 1e6,
            Err(_) => 0.0,
        };
        out.push(AuditRow {
            host: host.name().into(),
            server: "(all)".into(),
            scope: String::new(),
            tool: String::new(),
            status: format!(
                "{} of {} server(s) weighed",
                totals.iter().filter(|r| r.status == "ok").count(),
                totals.len()
            ),
            tools: totals.iter().map(|r| r.tools).sum(),
            bytes: totals.iter().map(|r| r.bytes).sum(),
            tokens,
            cost_usd,
            instructions_tokens: instructions,
            deferred_tokens: deferred,
            posture,
            model,
            label,
        });
        out.extend(mine);
    }
    out
}

/// One server's rows: its total, then its tools.
async fn weigh(
    host: Host,
    priced: &std::result::Result<Pricing, String>,
    s: &Server,
    timeout: Duration,
) -> Vec<AuditRow> {
    let row = |tool: String, status: String, tools, bytes, tokens: u64| AuditRow {
        host: host.name().into(),
        server: s.name.clone(),
        scope: s.scope.clone(),
        tool,
        status: shown_status(&status, s),
        tools,
        bytes,
        tokens,
        cost_usd: match priced {
            Ok(p) => tokens as f64 * p.card.input / 1e6,
            Err(_) => 0.0,
        },
        instructions_tokens: 0,
        deferred_tokens: 0,
        posture: String::new(),
        model: priced
            .as_ref()
            .map(|p| p.card.id.clone())
            .unwrap_or_default(),
        label: priced.as_ref().map(|p| p.label.clone()).unwrap_or_default(),
    };
    let p = match priced {
        Ok(p) => p,
        Err(why) => return vec![row(String::new(), format!("not weighed: {why}"), 0, 0, 0)],
    };
    let target = match &s.reach {
        Reach::Stdio { argv, env, cwd } => Target::Command {
            argv: argv.clone(),
            launch: Launch {
                env: env.clone(),
                clean: true,
                cwd: Some(cwd.clone()),
            },
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
            return vec![row(String::new(), format!("not weighed: {why}"), 0, 0, 0)]
        }
        Reach::Off(why) => return vec![row(String::new(), format!("not started: {why}"), 0, 0, 0)],
    };
    let (cat, instructions) = match target.fetch_full().await {
        Ok(f) => (f.catalogue, f.instructions),
        // The error may quote what the server printed: never the env or headers.
        Err(e) => {
            return vec![row(
                String::new(),
                // Cut to one line after the secrets are redacted (shown_status), never before:
                // a cut can leave the first characters of a secret no value matches.
                format!("failed: {}", e.to_string().replace(['\n', '\r'], " ")),
                0,
                0,
                0,
            )];
        }
    };
    let kept: Vec<&crate::catalogue::Tool> = cat
        .tools
        .iter()
        .filter(|t| {
            s.include.as_ref().is_none_or(|i| {
                i.iter().any(|n| {
                    *n == t.name
                        || n.strip_prefix(t.name.as_str())
                            .is_some_and(|r| r.starts_with('('))
                })
            })
        })
        .filter(|t| !s.exclude.contains(&t.name))
        .collect();
    let mut tools: Vec<AuditRow> = Vec::new();
    for t in &kept {
        let name = p.client.tool_name(&s.name, &t.name);
        let def = wire::tool_definition(p.client.format, &name, t, false);
        let text = crate::json::compact(&def);
        let tokens = p.tok.count(&text).round() as u64;
        tools.push(row(name, "ok".into(), 1, text.len(), tokens));
    }
    // The dearest tools first, then by name.
    tools.sort_by(|a, b| b.tokens.cmp(&a.tokens).then_with(|| a.tool.cmp(&b.tool)));
    // Claude Code adds a server's instructions to its system prompt every turn, cut.
    let instructions_tokens = match (host, instructions.as_deref()) {
        (Host::ClaudeCode, Some(text)) => {
            let kept = crate::weigh::claude_code_instructions(text);
            p.tok.count(&kept).round() as u64
        }
        _ => 0,
    };
    // Deferred, a tool is its name on a line of the reminder that lists them.
    let names: String = tools.iter().map(|r| format!("{}\n", r.tool)).collect();
    let definitions: u64 = tools.iter().map(|r| r.tokens).sum();
    let mut total = row(
        String::new(),
        "ok".into(),
        tools.len(),
        tools.iter().map(|r| r.bytes).sum(),
        definitions + instructions_tokens,
    );
    total.instructions_tokens = instructions_tokens;
    total.deferred_tokens = p.tok.count(&names).round() as u64;
    let mut out = vec![total];
    out.extend(tools);
    out
}

/// A row's status as a report may show it. A server's URL is named by its scheme, host and
/// port alone (its path, query and fragment can carry a token); then every value toolcost
/// hands the server or took from the environment for it is redacted, and what is left goes
/// through [`crate::secret::redact`].
fn shown_status(status: &str, s: &Server) -> String {
    let mut status = status.to_string();
    if let Reach::Http { url, .. } = &s.reach {
        let origin = origin(url);
        // The URL as written and as the HTTP client writes it back (normalised).
        let parsed = reqwest::Url::parse(url).ok().map(String::from);
        for form in std::iter::once(url.as_str()).chain(parsed.as_deref()) {
            if form.len() > origin.len() && status.contains(form) {
                status = status.replace(form, &origin);
            }
        }
    }
    let values = passed_values(s);
    first_line(&crate::secret::redact_values(
        &status,
        values.iter().map(String::as_str),
    ))
}

/// `scheme://host:port` of a URL, or `(the server's URL)` when it does not parse.
fn origin(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(u) => match (u.host_str(), u.port_or_known_default()) {
            (Some(h), Some(p)) => format!("{}://{h}:{p}", u.scheme()),
            (Some(h), None) => format!("{}://{h}", u.scheme()),
            _ => "(the server's URL)".into(),
        },
        Err(_) => "(the server's URL)".into(),
    }
}

/// The values a report must not show: what the entry took from the environment, its own
/// `env` values (the base variables are the user's own paths and names), its arguments (a
/// program's argv can carry a key), and for an HTTP server its header values, its URL's user
/// and password (and the Basic credential the HTTP client makes of them), each path segment of
/// eight characters or more, every query value and the fragment.
fn passed_values(s: &Server) -> Vec<String> {
    let mut out: Vec<String> = s.secrets.clone();
    match &s.reach {
        Reach::Stdio { env, argv, .. } => {
            out.extend(
                env.iter()
                    .filter(|(k, _)| !entry::BASE_ENV.contains(&k.as_str()))
                    .map(|(_, v)| v.clone()),
            );
            out.extend(argv.iter().skip(1).cloned());
        }
        Reach::Http { headers, url } => {
            for h in headers {
                if let Some((_, v)) = h.split_once(':') {
                    let v = v.trim();
                    out.push(v.to_string());
                    out.push(v.rsplit(' ').next().unwrap_or(v).to_string());
                }
            }
            if let Ok(u) = reqwest::Url::parse(url) {
                let decode = crate::secret::percent_decoded;
                let (user, pass) = (decode(u.username()), u.password().map(decode));
                if !user.is_empty() || pass.is_some() {
                    use base64::Engine;
                    let pair = format!("{user}:{}", pass.clone().unwrap_or_default());
                    out.push(base64::engine::general_purpose::STANDARD.encode(pair));
                    out.push(u.username().to_string());
                    out.push(user);
                    out.extend(u.password().map(String::from));
                    out.extend(pass);
                }
                out.extend(
                    u.path_segments()
                        .into_iter()
                        .flatten()
                        .filter(|p| p.len() >= 8)
                        .flat_map(|p| [p.to_string(), decode(p)]),
                );
                out.extend(u.query_pairs().map(|(_, v)| v.into_owned()));
                out.extend(u.query().into_iter().flat_map(|q| {
                    q.split(['&', ';'])
                        .filter_map(|p| p.split_once('=').map(|(_, v)| v.to_string()))
                        .collect::<Vec<_>>()
                }));
                out.extend(u.fragment().map(String::from));
            }
        }
        Reach::Unreachable(_) | Reach::Off(_) => {}
    }
    out
}

/// A status as one line a table shows: its first line, and past 300 characters its first and
/// last 150 with `…` between (what a server printed last is often what says why it failed).
fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    let n = line.chars().count();
    match n > 300 {
        true => {
            let head: String = line.chars().take(150).collect();
            let tail: String = line.chars().skip(n - 150).collect();
            format!("{head}…{tail}")
        }
        false => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(reach: Reach) -> Server {
        Server {
            name: "s".into(),
            scope: "user".into(),
            shown: String::new(),
            reach,
            secrets: vec!["tok-FROM-ENV-1".into()],
            include: None,
            exclude: Vec::new(),
        }
    }

    /// What a failing server echoes back keeps none of what toolcost sent it: the URL's user
    /// and password (and their Basic form), token-like path segments, every query value
    /// whatever its name, the fragment, values from the environment; and a status cut for the
    /// table is cut after redaction, so no secret's first characters survive the cut.
    #[test]
    fn echoed_secrets_are_redacted_before_the_cut() {
        use base64::Engine;
        let url = "http://user:pw-USERINFO99@127.0.0.1:9/s/9fK2xQ7LmN4pR8sT1vW3/mcp?token=QTOKEN2&password=PWV1&q=tok-FROM-ENV-1#frag-SECRET";
        let basic = base64::engine::general_purpose::STANDARD.encode("user:pw-USERINFO99");
        let s = server(Reach::Http {
            url: url.into(),
            headers: vec!["Authorization: Bearer hdr-SECRET-77".into()],
        });
        let status = format!(
            "failed: 401 path=/s/9fK2xQ7LmN4pR8sT1vW3/mcp?token=QTOKEN2&password=PWV1 \
             authorization: Basic {basic} bearer hdr-SECRET-77 at {url}"
        );
        let shown = shown_status(&status, &s);
        for secret in [
            "pw-USERINFO99",
            basic.as_str(),
            "9fK2xQ7LmN4pR8sT1vW3",
            "QTOKEN2",
            "PWV1",
            "tok-FROM-ENV-1",
            "frag-SECRET",
            "hdr-SECRET-77",
        ] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        let s = server(Reach::Stdio {
            argv: vec!["sh".into(), "cutsecret-ABCDEFGHIJKLMNOPQRSTUV".into()],
            env: Vec::new(),
            cwd: std::path::PathBuf::from("/"),
        });
        let status = format!(
            "failed: stderr ended with: {}cutsecret-ABCDEFGHIJKLMNOPQRSTUV and more",
            "B".repeat(190)
        );
        let shown = shown_status(&status, &s);
        assert!(!shown.contains("cutsecret"), "{shown}");
        assert!(shown.ends_with("and more"), "the end is kept: {shown}");
    }
}
