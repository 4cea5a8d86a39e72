//! Cursor (cursor.com/docs/mcp, read 2026-12-05): `~/.cursor/mcp.json` (the user's) and a
//! project's `.cursor/mcp.json`, `mcpServers` of `command`/`args`/`env` or `url`/`headers`.
//! Placeholders `${env:NAME}`, `${userHome}`, `${workspaceFolder}` (the folder holding
//! `.cursor`), `${workspaceFolderBasename}`, `${pathSeparator}` and `${/}`. A same name in both
//! files: the project's (assumed, as the more specific; Cursor does not say).

use super::*;

pub fn servers(files: &[HostFile], cx: &Context) -> Vec<Server> {
    let mut out: Vec<Server> = Vec::new();
    // The project's file first, so that its entry wins a name.
    let mut ordered: Vec<&HostFile> = files.iter().collect();
    ordered.sort_by_key(|f| in_home(&f.path, cx));
    for f in ordered {
        let user = in_home(&f.path, cx);
        let folder = match user {
            true => cx.home.clone().unwrap_or_else(|| cx.cwd.clone()),
            false => project_of(&f.path),
        };
        for (name, v) in entries(&f.root, "mcpServers") {
            if out.iter().any(|s| &s.name == name) {
                continue;
            }
            let t = match (text(v, "command"), text(v, "url")) {
                (Some(_), _) => Transport::Stdio,
                (None, Some(url)) => Transport::Http(url.to_string()),
                (None, None) => {
                    Transport::Refused("neither `command` nor a URL is configured".into())
                }
            };
            let scope = if user { "user" } else { "project" };
            out.push(super::super::entry::server(
                name,
                v,
                t,
                plain(Syntax::Editor, &folder, scope),
                cx,
            ));
        }
    }
    out
}
