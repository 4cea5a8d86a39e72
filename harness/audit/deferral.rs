//! Whether a host sends its MCP servers' definitions up front or defers them behind a tool
//! search, as it decides at session start. Only Claude Code's rule is known (its MCP docs and
//! environment variables, read 2026-12-07): tool search is on automatically when the MCP
//! definitions pass a share of the context window (10% unless `ENABLE_TOOL_SEARCH=auto:N`
//! says otherwise), forced on with `ENABLE_TOOL_SEARCH=true` and off with `false`; with
//! `ANTHROPIC_BASE_URL` pointing anywhere but Anthropic's API (a gateway) it is off unless
//! `ENABLE_TOOL_SEARCH` is set. The variables are read from the settings files' `env` (the
//! project's local, the project's, the user's) and then the process's environment.
//!
//! Deferred, a session start carries each deferred tool's name (in the reminder that lists
//! them) instead of its definition; the tool search tool itself is part of the client profile.

use super::entry::Context;
use super::Host;
use serde_json::Value;

/// The share of the context window past which Claude Code defers by itself, in percent.
pub const AUTO_PERCENT: u32 = 10;

/// What a host does with the MCP definitions at session start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Posture {
    /// Every definition up front; why.
    UpFront(String),
    /// Every MCP definition deferred; why.
    Deferred(String),
    /// Deferred when the definitions pass this share of the context window (percent); why.
    Auto(u32, String),
}

impl Posture {
    /// Whether definitions of `tokens` in all are deferred under a `window`-token context.
    pub fn defers(&self, tokens: u64, window: u64) -> bool {
        match self {
            Posture::UpFront(_) => false,
            Posture::Deferred(_) => true,
            Posture::Auto(pct, _) => {
                tokens.saturating_mul(100) > window.saturating_mul(*pct as u64)
            }
        }
    }

    pub fn why(&self) -> &str {
        match self {
            Posture::UpFront(w) | Posture::Deferred(w) | Posture::Auto(_, w) => w,
        }
    }
}

/// A host's posture, where its rule is known (Claude Code's alone).
pub fn of_host(host: Host, cx: &Context) -> Option<Posture> {
    match host {
        Host::ClaudeCode => Some(claude_code(&|name| variable(cx, name))),
        Host::ClaudeDesktop
        | Host::Cursor
        | Host::Vscode
        | Host::Windsurf
        | Host::Codex
        | Host::GeminiCli => None,
    }
}

/// Claude Code's rule, given how to read a variable.
pub fn claude_code(var: &dyn Fn(&str) -> Option<String>) -> Posture {
    if let Some(v) = var("ENABLE_TOOL_SEARCH") {
        let v = v.trim().to_ascii_lowercase();
        let said = format!("ENABLE_TOOL_SEARCH={v}");
        return match v.as_str() {
            "true" | "1" | "on" => Posture::Deferred(said),
            "false" | "0" | "off" => Posture::UpFront(said),
            _ => match v.strip_prefix("auto") {
                Some(rest) => {
                    let pct = rest
                        .strip_prefix(':')
                        .and_then(|n| n.trim_end_matches('%').parse::<u32>().ok())
                        .filter(|n| *n <= 100)
                        .unwrap_or(AUTO_PERCENT);
                    Posture::Auto(pct, said)
                }
                None => Posture::Auto(
                    AUTO_PERCENT,
                    format!("{said} (not a value Claude Code documents: its default assumed)"),
                ),
            },
        };
    }
    if let Some(url) = var("ANTHROPIC_BASE_URL").filter(|u| !u.trim().is_empty()) {
        let host = reqwest::Url::parse(url.trim())
            .ok()
            .and_then(|u| u.host_str().map(String::from))
            .unwrap_or_default();
        if host != "api.anthropic.com" {
            let shown = match host.is_empty() {
                true => "an address that does not parse".to_string(),
                false => host,
            };
            return Posture::UpFront(format!(
                "ANTHROPIC_BASE_URL points at {shown}, not Anthropic's API: tool search is off unless ENABLE_TOOL_SEARCH is set"
            ));
        }
    }
    Posture::Auto(
        AUTO_PERCENT,
        format!("the default: deferred when the MCP definitions pass {AUTO_PERCENT}% of the context window"),
    )
}

/// A variable as Claude Code sees it: the settings files' `env` first (local, project, user),
/// then the process's environment.
fn variable(cx: &Context, name: &str) -> Option<String> {
    let files = [
        Some(cx.cwd.join(".claude/settings.local.json")),
        Some(cx.cwd.join(".claude/settings.json")),
        cx.home.as_ref().map(|h| h.join(".claude/settings.json")),
    ];
    for f in files.into_iter().flatten() {
        let Ok(text) = crate::input::read_text(&f, crate::input::SMALL) else {
            continue;
        };
        if let Ok(v) = serde_json::from_str::<Value>(&text) {
            if let Some(s) = v.pointer(&format!("/env/{name}")).and_then(Value::as_str) {
                return Some(s.to_string());
            }
        }
    }
    cx.vars.get(name).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn posture(vars: &[(&str, &str)]) -> Posture {
        let vars: std::collections::HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        claude_code(&|n| vars.get(n).cloned())
    }

    #[test]
    fn claude_codes_rule() {
        assert!(matches!(posture(&[]), Posture::Auto(10, _)));
        let gw = posture(&[("ANTHROPIC_BASE_URL", "http://127.0.0.1:8080")]);
        assert!(
            matches!(&gw, Posture::UpFront(w) if w.contains("127.0.0.1")),
            "{gw:?}"
        );
        assert!(matches!(
            posture(&[("ANTHROPIC_BASE_URL", "https://api.anthropic.com")]),
            Posture::Auto(10, _)
        ));
        assert!(matches!(
            posture(&[
                ("ANTHROPIC_BASE_URL", "http://gw"),
                ("ENABLE_TOOL_SEARCH", "true")
            ]),
            Posture::Deferred(_)
        ));
        assert!(matches!(
            posture(&[("ENABLE_TOOL_SEARCH", "false")]),
            Posture::UpFront(_)
        ));
        assert!(matches!(
            posture(&[("ENABLE_TOOL_SEARCH", "auto:5")]),
            Posture::Auto(5, _)
        ));
        let auto = Posture::Auto(10, String::new());
        assert!(!auto.defers(20_000, 200_000) && auto.defers(20_001, 200_000));
    }
}
