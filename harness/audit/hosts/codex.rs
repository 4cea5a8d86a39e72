//! Codex CLI (developers.openai.com/codex/config-reference and openai/codex's `mcp_types.rs`,
//! read 2026-12-05): `[mcp_servers.<name>]` in `~/.codex/config.toml` and, in a trusted project
//! (`[projects."<path>"] trust_level = "trusted"` in the user's file), the project's
//! `.codex/config.toml`, merged key by key (the project's wins). `enabled = false` starts
//! nothing; `enabled_tools` keeps only those tools, then `disabled_tools` drops some. A
//! `command` is stdio, a `url` Streamable HTTP, both a configuration Codex refuses. Values are
//! literal; `env_vars` names variables copied from Codex's environment, `bearer_token_env_var`
//! one whose value is the bearer token. A server runs in Codex's folder (a relative `cwd` is
//! taken from it).

use super::*;

pub fn servers(files: &[HostFile], cx: &Context) -> Vec<Server> {
    let here = cx.cwd.display().to_string();
    let mut merged = Value::Object(Map::new());
    // The user's file first, then the project's over it where the user trusts the project.
    let mut ordered: Vec<&HostFile> = files.iter().collect();
    ordered.sort_by_key(|f| !in_home(&f.path, cx));
    let trusted = ordered.iter().any(|f| {
        in_home(&f.path, cx)
            && f.root
                .pointer("/projects")
                .and_then(|p| p.get(&here))
                .is_some_and(|p| p["trust_level"] == "trusted")
    });
    for f in ordered {
        if !in_home(&f.path, cx) && !trusted && !f.named {
            continue;
        }
        merge(&mut merged, &f.root);
    }
    let mut out = Vec::new();
    for (name, v) in entries(&merged, "mcp_servers") {
        let t = match (v["enabled"].as_bool(), text(v, "command"), text(v, "url")) {
            (Some(false), _, _) => Transport::Off("disabled in Codex (`enabled = false`)".into()),
            (None, _, _) if v.get("enabled").is_some() => Transport::Refused(
                "`enabled` is not true or false: Codex refuses this configuration".into(),
            ),
            (_, Some(_), Some(_)) => {
                Transport::Refused("both `command` and `url`: Codex refuses this entry".into())
            }
            (_, Some(_), None) => Transport::Stdio,
            (_, None, Some(url)) => match bearer(v, cx) {
                Ok(_) => Transport::Http(url.to_string()),
                Err(why) => Transport::Refused(why),
            },
            (_, None, None) => {
                Transport::Refused("Codex: neither `command` nor `url` (invalid transport)".into())
            }
        };
        let mut rules = plain(Syntax::Literal, &cx.cwd, "codex");
        rules.honors_cwd = true;
        rules.include = v.get("enabled_tools").map(|l| strings(Some(l)));
        rules.exclude = strings(v.get("disabled_tools"));
        rules.env_vars = v["env_vars"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e.as_str().or_else(|| e["name"].as_str()))
            .map(String::from)
            .collect();
        let mut server = super::super::entry::server(name, v, t, rules, cx);
        if let (super::super::Reach::Http { headers, .. }, Ok(Some(token))) =
            (&mut server.reach, bearer(v, cx))
        {
            headers.push(format!("Authorization: Bearer {token}"));
        }
        out.push(server);
    }
    out
}

/// The bearer token an entry names, if it names one; an error where its variable is unset.
fn bearer(v: &Value, cx: &Context) -> Result<Option<String>, String> {
    match text(v, "bearer_token_env_var") {
        None => Ok(None),
        Some(var) => match cx.vars.get(var).filter(|t| !t.is_empty()) {
            Some(t) => Ok(Some(t.clone())),
            None => Err(format!(
                "`bearer_token_env_var` {var} is not set: Codex does not start this server"
            )),
        },
    }
}

/// `over` merged into `base`, table by table (the overlay's leaf wins).
fn merge(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(k) {
                    Some(existing) if existing.is_object() && v.is_object() => merge(existing, v),
                    _ => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (b, o) => *b = o.clone(),
    }
}
