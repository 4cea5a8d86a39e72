//! `toolcost audit`: the MCP servers a host's configuration names, weighed as the host shows
//! them to its model on a session's first request.

use super::emit;
use crate::audit::{self, Host};
use crate::error::{Error, Result};
use crate::report::{self, OutputFormat};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct AuditArgs {
    /// A host's MCP configuration file: Claude Code `~/.claude.json` or `.mcp.json`, Claude
    /// Desktop `claude_desktop_config.json`, Cursor `.cursor/mcp.json`, VS Code
    /// `.vscode/mcp.json`, Windsurf `mcp_config.json`, Codex `~/.codex/config.toml`, Gemini CLI
    /// `.gemini/settings.json`. Repeatable. Default: those of this user and folder that exist.
    #[arg(long, value_name = "FILE")]
    pub config: Vec<PathBuf>,
    /// The host a --config file belongs to, when its name does not say: claude-code,
    /// claude-desktop, cursor, vscode, windsurf, codex, gemini-cli.
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// table, json or markdown.
    #[arg(long, default_value = "table")]
    pub format: String,
    /// Exit 1 when a server could not be started or listed (its row says why).
    #[arg(long)]
    pub fail_on_error: bool,
    /// Seconds each server has to answer initialize and every tools/list page.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
    /// Write the report here instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// The host files of this user and folder that exist.
fn default_files() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut out = vec![
        PathBuf::from(".mcp.json"),
        PathBuf::from(".cursor/mcp.json"),
        PathBuf::from(".vscode/mcp.json"),
        PathBuf::from(".gemini/settings.json"),
    ];
    if let Some(h) = home {
        for p in [
            ".claude.json",
            ".config/Claude/claude_desktop_config.json",
            "Library/Application Support/Claude/claude_desktop_config.json",
            ".cursor/mcp.json",
            ".codeium/windsurf/mcp_config.json",
            ".codex/config.toml",
            ".gemini/settings.json",
        ] {
            out.push(h.join(p));
        }
    }
    out.into_iter().filter(|p| p.is_file()).collect()
}

pub(super) fn run(a: AuditArgs) -> Result<i32> {
    let format = match a.format.trim() {
        "table" => OutputFormat::Table,
        "json" => OutputFormat::Json,
        "markdown" | "md" => OutputFormat::Markdown,
        other => {
            return Err(Error::input(format!(
                "--format {other}: one of table, json, markdown"
            )))
        }
    };
    let files = match a.config.is_empty() {
        true => default_files(),
        false => a.config.clone(),
    };
    if files.is_empty() {
        return Err(Error::input(
            "no host configuration found here or in your home folder: name one with --config FILE",
        ));
    }
    let forced = a.host.as_deref().map(Host::parse).transpose()?;
    let rt = super::runtime()?;
    let mut rows = Vec::new();
    for f in &files {
        let host = forced.or_else(|| Host::of_file(f)).ok_or_else(|| {
            Error::input(format!(
                "{}: which host's file is this? name it with --host ({})",
                f.display(),
                Host::NAMES.join(", ")
            ))
        })?;
        let text = crate::input::read_text(f, 16 << 20)?;
        let servers = audit::servers(host, &text)
            .map_err(|e| Error::input(format!("{}: {e}", f.display())))?;
        eprintln!(
            "toolcost audit: {} ({}): {} server(s)",
            f.display(),
            host.name(),
            servers.len()
        );
        rows.extend(rt.block_on(audit::audit(host, &servers, Duration::from_secs(a.timeout)))?);
    }
    let failed = rows.iter().filter(|r| r.status != "ok").count();
    let bytes = report::render(format, &rows);
    let bytes = match format {
        OutputFormat::Table => {
            report::fit_to_terminal(&String::from_utf8_lossy(&bytes)).into_bytes()
        }
        OutputFormat::Json | OutputFormat::Csv | OutputFormat::Markdown => bytes,
    };
    emit(a.output.as_deref(), &bytes)?;
    if failed > 0 {
        eprintln!("toolcost audit: {failed} server(s) could not be weighed (their rows say why)");
    }
    Ok(if a.fail_on_error && failed > 0 { 1 } else { 0 })
}
