//! VS Code (code.visualstudio.com/docs/agents/reference/mcp-configuration, and its
//! `mcpResourceScannerService` for the type rule; read 2026-12-05): `servers` in a workspace's
//! `.vscode/mcp.json` or the user's `mcp.json`. `type` `stdio`, `http` or `sse`; with none (or
//! another) a `command` means stdio, anything else HTTP. A server runs in the workspace folder
//! (the user's config: the home folder), a relative `cwd` joined to it. Placeholders are the
//! editor's: `${env:NAME}` (unset: empty), `${workspaceFolder}`, `${userHome}`; `${input:...}`
//! is asked of the user and cannot be expanded here. A workspace whose `.vscode/settings.json`
//! turns MCP off (`chat.mcp.access: none`, or `chat.mcp.enabled: false`) starts no server.

use super::*;

pub fn servers(files: &[HostFile], cx: &Context) -> Vec<Server> {
    let mut out = Vec::new();
    for f in files {
        let user = in_home(&f.path, cx)
            || f.path.parent().and_then(|p| p.file_name()) == Some("User".as_ref());
        let folder = match user {
            true => cx.home.clone().unwrap_or_else(|| cx.cwd.clone()),
            false => project_of(&f.path),
        };
        let off = f
            .path
            .parent()
            .map(|d| d.join("settings.json"))
            .and_then(|p| crate::input::read_text(&p, crate::input::SMALL).ok())
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .is_some_and(|s| s["chat.mcp.access"] == "none" || s["chat.mcp.enabled"] == false);
        for (name, v) in entries(&f.root, "servers") {
            let t = match (
                v.get("type").and_then(Value::as_str),
                text(v, "command"),
                text(v, "url"),
            ) {
                _ if off => Transport::Off("MCP is turned off in this workspace's settings".into()),
                _ if v.get("type").is_some_and(|t| !t.is_string()) => {
                    Transport::Refused("`type` is not a string: VS Code refuses this entry".into())
                }
                (Some("stdio"), _, _) => Transport::Stdio,
                (Some("http" | "sse"), _, Some(url)) => Transport::Http(url.to_string()),
                // A typed remote entry is reached at its URL, never by its `command`.
                (Some(t @ ("http" | "sse")), _, None) => {
                    Transport::Refused(format!("`type: {t}` with no `url`"))
                }
                (_, Some(_), _) => Transport::Stdio,
                (_, None, Some(url)) => Transport::Http(url.to_string()),
                (_, None, None) => {
                    Transport::Refused("neither `command` nor a URL is configured".into())
                }
            };
            let scope = if user { "user" } else { "workspace" };
            out.push(super::super::entry::server(
                name,
                v,
                t,
                Rules {
                    honors_cwd: true,
                    ..plain(Syntax::Editor, &folder, scope)
                },
                cx,
            ));
        }
    }
    out
}
