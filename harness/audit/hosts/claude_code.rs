//! Claude Code (docs: code.claude.com/docs/en/mcp and settings, read 2026-12-05).
//!
//! - Scopes: user (`~/.claude.json` `mcpServers`), local (`~/.claude.json`
//!   `projects["<this folder>"].mcpServers`: only the current folder's entry, no other
//!   project's), project (`.mcp.json`). A name in several scopes is one server, from the scope
//!   that wins: local, then project, then user.
//! - A project server runs only when approved (`enableAllProjectMcpServers`,
//!   `enabledMcpjsonServers`, not in `disabledMcpjsonServers`, in the folder's
//!   `.claude/settings.json` or `.claude/settings.local.json`, the user's
//!   `~/.claude/settings.json`, or the project's entry in `~/.claude.json`); naming the file
//!   with `--config` approves it. Servers disabled in the folder (`disabledMcpServers`) do not
//!   run.
//! - `type`: `stdio` (or none, with a `command`), `http` (`streamable-http` too) with a `url`;
//!   `sse` is not spoken by toolcost; a `url` with no `type` is refused by Claude Code's schema.
//! - `${VAR}` and `${VAR:-default}` expand in `command`, `args`, `env`, `url` and `headers`; a
//!   variable unset with no default is a configuration Claude Code does not read.
//! - A server runs in the folder Claude Code was started in (the project).

use super::*;

/// Which scope wins: the smaller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Scope {
    Local,
    Project,
    User,
}

pub fn servers(files: &[HostFile], cx: &Context) -> Vec<Server> {
    let here = cx.cwd.display().to_string();
    let mut found: Vec<(Scope, Server)> = Vec::new();
    let mut disabled: Vec<String> = Vec::new();
    let mut approval = Approval::default();
    for f in files.iter().filter(|f| is_user_file(&f.path)) {
        let local = f.root.pointer("/projects").and_then(|p| p.get(&here));
        if let Some(p) = local {
            disabled.extend(strings(p.get("disabledMcpServers")));
            approval.read(p);
        }
    }
    for dir in [
        Some(cx.cwd.join(".claude")),
        cx.home.as_ref().map(|h| h.join(".claude")),
    ]
    .into_iter()
    .flatten()
    {
        for name in ["settings.json", "settings.local.json"] {
            if let Ok(t) = crate::input::read_text(&dir.join(name), crate::input::SMALL) {
                if let Ok(v) = serde_json::from_str::<Value>(&t) {
                    approval.read(&v);
                }
            }
        }
    }
    for f in files {
        let entry = |scope: Scope, name: &String, v: &Value, folder: &Path| {
            let label = match scope {
                Scope::Local => "local",
                Scope::Project => "project",
                Scope::User => "user",
            };
            let mut t = transport(v);
            if disabled.contains(name) {
                t = Transport::Off("disabled in this folder (`disabledMcpServers`)".into());
            } else if scope == Scope::Project && !f.named && !approval.approves(name) {
                t = Transport::Off(
                    "a project server not approved in Claude Code's settings (name the file with --config to weigh it)"
                        .into(),
                );
            }
            entry::server(name, v, t, plain(Syntax::Shell, folder, label), cx)
        };
        if is_user_file(&f.path) {
            for (name, v) in entries(&f.root, "mcpServers") {
                found.push((Scope::User, entry(Scope::User, name, v, &cx.cwd)));
            }
            if let Some(p) = f.root.pointer("/projects").and_then(|p| p.get(&here)) {
                for (name, v) in entries(p, "mcpServers") {
                    found.push((Scope::Local, entry(Scope::Local, name, v, &cx.cwd)));
                }
            }
        } else {
            let folder = project_of(&f.path);
            for (name, v) in entries(&f.root, "mcpServers") {
                found.push((Scope::Project, entry(Scope::Project, name, v, &folder)));
            }
        }
    }
    // One server per name: the winning scope's whole entry.
    found.sort_by_key(|(scope, _)| *scope);
    let mut out: Vec<Server> = Vec::new();
    for (_, s) in found {
        if !out.iter().any(|o| o.name == s.name) {
            out.push(s);
        }
    }
    out
}

use super::super::entry;

fn is_user_file(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()) == Some(".claude.json")
}

fn transport(v: &Value) -> Transport {
    if v.get("type").is_some_and(|t| !t.is_string()) {
        return Transport::Refused(
            "`type` is not a string: Claude Code's schema refuses this entry".into(),
        );
    }
    match (v.get("type").and_then(Value::as_str), text(v, "command"), text(v, "url")) {
        (Some("stdio"), _, _) | (None, Some(_), _) => Transport::Stdio,
        (Some("http" | "streamable-http"), _, Some(url)) => Transport::Http(url.to_string()),
        (Some("http" | "streamable-http"), _, None) => {
            Transport::Refused("`type: http` with no `url`".into())
        }
        (Some("sse"), _, _) => Transport::Refused(
            "an SSE server (the transport MCP deprecated): toolcost speaks Streamable HTTP and stdio".into(),
        ),
        (None, None, Some(_)) => Transport::Refused(
            "a `url` with no `type`: Claude Code's schema refuses this entry".into(),
        ),
        (Some(other), _, _) => Transport::Refused(format!("`type: {other}` is not one toolcost speaks")),
        (None, None, None) => Transport::Refused("neither `command` nor a URL is configured".into()),
    }
}

/// What Claude Code's settings say of project servers.
#[derive(Default)]
struct Approval {
    all: bool,
    enabled: Vec<String>,
    disabled: Vec<String>,
}

impl Approval {
    fn read(&mut self, v: &Value) {
        self.all |= v["enableAllProjectMcpServers"].as_bool() == Some(true);
        self.enabled.extend(strings(v.get("enabledMcpjsonServers")));
        self.disabled
            .extend(strings(v.get("disabledMcpjsonServers")));
    }

    fn approves(&self, name: &str) -> bool {
        let named = |l: &[String]| l.iter().any(|n| n == name);
        !named(&self.disabled) && (self.all || named(&self.enabled))
    }
}
