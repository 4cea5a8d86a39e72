//! One file per host: how it reads its MCP configuration (scopes, precedence, disabled servers,
//! tool filters, placeholder syntax, what a relative path means, how a server is reached). A new
//! host is one file here and a variant of [`super::Host`].

pub mod claude_code;
pub mod claude_desktop;
pub mod codex;
pub mod cursor;
pub mod gemini_cli;
pub mod vscode;
pub mod windsurf;

use super::entry::{strings, text, Context, Rules, Syntax, Transport};
use super::{HostFile, Server};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The entries of a map member (`mcpServers`, `servers`), in order.
fn entries<'a>(root: &'a Value, key: &str) -> Vec<(&'a String, &'a Value)> {
    root.get(key)
        .and_then(Value::as_object)
        .map(|m: &Map<String, Value>| m.iter().collect())
        .unwrap_or_default()
}

/// The folder that holds a dot-folder's config (`proj` for `proj/.cursor/mcp.json`), or the
/// config's own folder.
fn project_of(file: &Path) -> PathBuf {
    let dir = file.parent().unwrap_or(Path::new("."));
    match dir.file_name().and_then(|n| n.to_str()) {
        Some(n) if n.starts_with('.') => dir.parent().unwrap_or(Path::new(".")).to_path_buf(),
        _ => dir.to_path_buf(),
    }
}

/// Whether a config is the user's own (under the home folder's dot-folders), not a project's.
fn in_home(file: &Path, cx: &Context) -> bool {
    cx.home
        .as_ref()
        .is_some_and(|h| project_of(file) == *h || file.parent() == Some(h.as_path()))
}

/// The rules most hosts share: the syntax, the folder, the scope's name, no filters, and an
/// entry's `cwd` ignored (only VS Code, Codex and Gemini CLI document one).
fn plain<'a>(syntax: Syntax, folder: &'a Path, scope: &'a str) -> Rules<'a> {
    Rules {
        syntax,
        folder,
        scope,
        include: None,
        exclude: Vec::new(),
        env_vars: Vec::new(),
        honors_cwd: false,
    }
}
