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
    /// `.gemini/settings.json`. Repeatable; a file named here is trusted (its servers are
    /// started). Default: the user's files that exist (this folder's with --include-folder).
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
    /// Servers weighed at once.
    #[arg(long, default_value_t = audit::DEFAULT_JOBS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=256))]
    pub jobs: usize,
    /// Also start the servers of this folder's configurations (`.mcp.json`, `.cursor/`,
    /// `.vscode/`, `.gemini/`, `.codex/`). Without it they are listed and not started: a
    /// cloned repository's configuration may name any program.
    #[arg(long)]
    pub include_folder: bool,
    /// Write the report here instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Where a configuration file was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// The user's own (under the home folder).
    User,
    /// In the current folder: a cloned repository's may name any program.
    Folder,
}

/// The host files of this user and folder that exist, and where each was found.
fn default_files() -> Vec<(PathBuf, Found)> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut out: Vec<(PathBuf, Found)> = [
        ".mcp.json",
        ".cursor/mcp.json",
        ".vscode/mcp.json",
        ".gemini/settings.json",
        ".codex/config.toml",
    ]
    .into_iter()
    .map(|p| (PathBuf::from(p), Found::Folder))
    .collect();
    if let Some(h) = home {
        for p in [
            ".claude.json",
            ".config/Claude/claude_desktop_config.json",
            "Library/Application Support/Claude/claude_desktop_config.json",
            ".cursor/mcp.json",
            ".codeium/windsurf/mcp_config.json",
            ".codex/config.toml",
            ".gemini/settings.json",
            ".config/Code/User/mcp.json",
        ] {
            out.push((h.join(p), Found::User));
        }
    }
    // The home folder's own files are the user's even when toolcost runs there.
    let mut seen = std::collections::HashSet::new();
    out.sort_by_key(|(_, f)| *f == Found::Folder);
    out.into_iter()
        .filter(|(p, _)| p.is_file())
        .filter(|(p, _)| seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())))
        .collect()
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
    let files: Vec<(PathBuf, bool)> = match a.config.is_empty() {
        true => {
            let found = default_files();
            for (f, _) in found
                .iter()
                .filter(|(_, w)| *w == Found::Folder && !a.include_folder)
            {
                eprintln!(
                    "toolcost audit: {}: found in this folder, not started (a cloned repository's configuration may name any program): pass --include-folder, or name it with --config",
                    f.display()
                );
            }
            found
                .into_iter()
                .filter(|(_, w)| *w == Found::User || a.include_folder)
                .map(|(f, _)| (f, false))
                .collect()
        }
        false => a.config.iter().map(|f| (f.clone(), true)).collect(),
    };
    if files.is_empty() {
        return Err(Error::input(
            "no host configuration to audit here or in your home folder: name one with --config FILE (or --include-folder for this folder's)",
        ));
    }
    let forced = a.host.as_deref().map(Host::parse).transpose()?;
    let cx = audit::entry::Context::here();
    let mut by_host: Vec<(Host, Vec<audit::HostFile>)> = Vec::new();
    let mut unread = 0;
    for (f, named) in &files {
        // A file named with --config that is not there is said first: no host to guess.
        if *named && !f.exists() {
            return Err(Error::input(format!(
                "{}: no such file (--config names a host's MCP configuration file)",
                f.display()
            )));
        }
        let host = forced.or_else(|| Host::of_file(f)).ok_or_else(|| {
            Error::input(format!(
                "{}: which host's file is this? name it with --host ({})",
                f.display(),
                Host::NAMES.join(", ")
            ))
        })?;
        // A file that cannot be read is said and skipped: the other hosts are still audited.
        let parsed = crate::input::read_text(f, 16 << 20)
            .and_then(|text| audit::HostFile::parse(host, f, &text, *named));
        let parsed = match parsed {
            Ok(p) => p,
            Err(e) => {
                eprintln!("toolcost audit: {}: not read: {e}", f.display());
                unread += 1;
                continue;
            }
        };
        match by_host.iter_mut().find(|(h, _)| *h == host) {
            Some((_, list)) => list.push(parsed),
            None => by_host.push((host, vec![parsed])),
        }
    }
    if by_host.is_empty() {
        return Err(Error::input(format!(
            "none of the {unread} host configuration(s) could be read (see above)"
        )));
    }
    let mut hosts = Vec::new();
    for (host, list) in &by_host {
        let servers = audit::servers(*host, list, &cx)?;
        eprintln!(
            "toolcost audit: {} ({} file(s)): {} server(s)",
            host.name(),
            list.len(),
            servers.len()
        );
        hosts.push((*host, servers));
    }
    let rt = super::runtime()?;
    let postures: Vec<_> = hosts
        .iter()
        .map(|(h, _)| audit::deferral::of_host(*h, &cx))
        .collect();
    let rows = rt.block_on(audit::audit(
        &hosts,
        &postures,
        Duration::from_secs(a.timeout),
        a.jobs,
    ));
    let failed = rows
        .iter()
        .filter(|r| r.tool.is_empty() && r.server != "(all)" && r.status.starts_with("failed"))
        .count();
    let bytes = report::render(format, &rows);
    let bytes = match format {
        OutputFormat::Table => report::fit_to_terminal(&format!(
            "{}\n{}",
            String::from_utf8_lossy(&bytes),
            audit::TABLE_NOTE
        ))
        .into_bytes(),
        OutputFormat::Json | OutputFormat::Csv | OutputFormat::Markdown => bytes,
    };
    emit(a.output.as_deref(), &bytes)?;
    if failed > 0 {
        eprintln!("toolcost audit: {failed} server(s) could not be weighed (their rows say why)");
    }
    Ok(if a.fail_on_error && (failed > 0 || unread > 0) {
        1
    } else {
        0
    })
}
