//! Gemini CLI (google-gemini/gemini-cli `mcp-client.ts`, `settingsSchema.ts`,
//! `mcpServerEnablement.ts`, `envVarResolver.ts`; read 2026-12-05): `mcpServers` in
//! `~/.gemini/settings.json` and the workspace's `.gemini/settings.json`, one server per name
//! (the workspace's whole entry wins). A URL wins over `command`: `httpUrl` is Streamable HTTP,
//! `url` with `type: sse` is SSE, `url` otherwise Streamable HTTP (the CLI tries SSE when that
//! fails). `mcp.allowed` (when not empty) and `mcp.excluded` name servers, without case;
//! `~/.gemini/mcp-server-enablement.json` holds servers switched off with `gemini mcp disable`.
//! `includeTools` keeps only those tools, `excludeTools` drops some and wins. `$VAR` and
//! `${VAR}` expand everywhere; an unset one stays as written. A server runs in the CLI's folder.

use super::*;

pub fn servers(files: &[HostFile], cx: &Context) -> Vec<Server> {
    let mut ordered: Vec<&HostFile> = files.iter().collect();
    // The workspace's file first, so that its entry wins a name.
    ordered.sort_by_key(|f| in_home(&f.path, cx));
    let lower = |l: Vec<String>| {
        l.into_iter()
            .map(|s| s.trim().to_lowercase())
            .collect::<Vec<_>>()
    };
    let mut allowed: Option<Vec<String>> = None;
    let mut excluded: Vec<String> = Vec::new();
    for f in &ordered {
        if allowed.is_none() {
            allowed = f
                .root
                .pointer("/mcp/allowed")
                .map(|a| lower(strings(Some(a))));
        }
        excluded.extend(lower(strings(f.root.pointer("/mcp/excluded"))));
    }
    let switched_off: Vec<String> = cx
        .home
        .as_ref()
        .map(|h| h.join(".gemini/mcp-server-enablement.json"))
        .and_then(|p| crate::input::read_text(&p, crate::input::SMALL).ok())
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v.as_object().cloned())
        .map(|m| {
            m.into_iter()
                .filter(|(_, e)| e["enabled"] == false)
                .map(|(k, _)| k.trim().to_lowercase())
                .collect()
        })
        .unwrap_or_default();
    let mut out: Vec<Server> = Vec::new();
    for f in ordered {
        let scope = if in_home(&f.path, cx) {
            "user"
        } else {
            "workspace"
        };
        for (name, v) in entries(&f.root, "mcpServers") {
            if out.iter().any(|s| &s.name == name) {
                continue;
            }
            let key = name.trim().to_lowercase();
            let kind = v.get("type").and_then(Value::as_str);
            let t = match (text(v, "httpUrl"), text(v, "url"), text(v, "command")) {
                _ if allowed
                    .as_ref()
                    .is_some_and(|a| !a.is_empty() && !a.contains(&key)) =>
                {
                    Transport::Off("not in Gemini CLI's `mcp.allowed`".into())
                }
                _ if excluded.contains(&key) => {
                    Transport::Off("in Gemini CLI's `mcp.excluded`".into())
                }
                _ if switched_off.contains(&key) => {
                    Transport::Off("switched off with `gemini mcp disable`".into())
                }
                (Some(url), _, _) => Transport::Http(url.to_string()),
                (None, Some(_), _) if kind == Some("sse") => Transport::Refused(
                    "an SSE server (`type: sse`): toolcost speaks Streamable HTTP and stdio".into(),
                ),
                (None, Some(url), _) => Transport::Http(url.to_string()),
                (None, None, Some(_)) => Transport::Stdio,
                (None, None, None) => {
                    Transport::Refused("neither `command` nor a URL is configured".into())
                }
            };
            let mut rules = plain(Syntax::ShellKeep, &cx.cwd, scope);
            rules.honors_cwd = true;
            rules.include = v.get("includeTools").map(|l| strings(Some(l)));
            rules.exclude = strings(v.get("excludeTools"));
            out.push(super::super::entry::server(name, v, t, rules, cx));
        }
    }
    out
}
