//! Windsurf (docs.windsurf.com/windsurf/cascade/mcp, read 2026-12-05):
//! `~/.codeium/windsurf/mcp_config.json`, `mcpServers` of `command`/`args`/`env` or `serverUrl`
//! (`url`)/`headers`; `${env:VAR}` placeholders (unset: empty). A server switched off in the
//! app is written `"disabled": true`, and its switched-off tools `"disabledTools"` (as the app
//! writes the file; Windsurf's docs do not describe these members).

use super::*;

pub fn servers(files: &[HostFile], cx: &Context) -> Vec<Server> {
    let folder = cx.home.clone().unwrap_or_else(|| cx.cwd.clone());
    let mut out = Vec::new();
    for f in files {
        for (name, v) in entries(&f.root, "mcpServers") {
            let url = text(v, "serverUrl").or_else(|| text(v, "url"));
            let t = match (v["disabled"].as_bool(), text(v, "command"), url) {
                (Some(true), _, _) => {
                    Transport::Off("disabled in Windsurf (`disabled: true`)".into())
                }
                (_, Some(_), _) => Transport::Stdio,
                (_, None, Some(url)) => Transport::Http(url.to_string()),
                (_, None, None) => {
                    Transport::Refused("neither `command` nor a URL is configured".into())
                }
            };
            let mut rules = plain(Syntax::Editor, &folder, "user");
            rules.exclude = strings(v.get("disabledTools"));
            out.push(super::super::entry::server(name, v, t, rules, cx));
        }
    }
    out
}
