//! Claude Desktop (`claude_desktop_config.json`; modelcontextprotocol.io's debugging guide, read
//! 2026-12-05): `mcpServers` of stdio servers (`command`, `args`, `env`), values as written (no
//! placeholders). Remote servers are added in the app as connectors, not read from this file.
//! The working folder of a server is not defined there; toolcost runs it in the home folder.

use super::*;

pub fn servers(files: &[HostFile], cx: &Context) -> Vec<Server> {
    let folder = cx.home.clone().unwrap_or_else(|| cx.cwd.clone());
    let mut out = Vec::new();
    for f in files {
        for (name, v) in entries(&f.root, "mcpServers") {
            let t = match (text(v, "command"), text(v, "url")) {
                (Some(_), _) => Transport::Stdio,
                (None, Some(_)) => Transport::Refused(
                    "Claude Desktop does not read remote servers from this file (it adds them as connectors)".into(),
                ),
                (None, None) => Transport::Refused("no `command` is configured".into()),
            };
            out.push(super::super::entry::server(
                name,
                v,
                t,
                plain(Syntax::Literal, &folder, "user"),
                cx,
            ));
        }
    }
    out
}
