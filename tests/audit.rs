//! `toolcost audit` on a sample of each host's configuration file: the server that starts is
//! weighed per tool as the host names and renders it, the one that cannot start is a row that
//! says why and fails `--fail-on-error`, and the secret in a server's `env` is never printed.

mod common;

use std::path::{Path, PathBuf};

/// Every sample, copied under `dir` at the same relative path, with the toolcost binary where
/// the file says `toolcost`.
fn samples(dir: &Path) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/hosts");
    let bin = env!("CARGO_BIN_EXE_toolcost").replace('\\', "\\\\");
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().unwrap() != "README.md" {
                let text = std::fs::read_to_string(&p)
                    .unwrap()
                    .replace("\"toolcost\"", &format!("\"{bin}\""));
                let to = dir.join(p.strip_prefix(&root).unwrap());
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::write(&to, text).unwrap();
                out.push(to);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_hosts_file_is_weighed_and_a_failing_server_is_a_row() {
    let dir = tempfile::tempdir().unwrap();
    let files = samples(dir.path());
    assert_eq!(files.len(), 8);
    for f in &files {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
            .args([
                "audit",
                "--format",
                "json",
                "--fail-on-error",
                "--timeout",
                "20",
                "--config",
            ])
            .arg(f)
            .env(
                "TOOLCOST_GEMMA3",
                std::env::var_os("TOOLCOST_GEMMA3").unwrap_or_default(),
            )
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{}: {stderr}", f.display());
        assert!(
            !stdout.contains("s3cret") && !stderr.contains("s3cret"),
            "{}",
            f.display()
        );
        let rows: Vec<toolcost::audit::AuditRow> = serde_json::from_str(&stdout).unwrap();
        let server = |name: &str| {
            rows.iter()
                .find(|r| r.server == name && r.tool.is_empty())
                .unwrap_or_else(|| panic!("{}: no row for {name}: {stdout}", f.display()))
        };
        assert!(
            !rows.iter().any(|r| r.server == "stranger"),
            "another project's server is read: {stdout}"
        );
        let broken = server("broken");
        assert!(
            broken.status.starts_with("failed: could not start"),
            "{}",
            broken.status
        );
        let ok = server("catalogue");
        assert_eq!(ok.status, "ok");
        let tools: Vec<&toolcost::audit::AuditRow> = rows
            .iter()
            .filter(|r| r.server == "catalogue" && !r.tool.is_empty())
            .collect();
        let gemini = ok.host == "gemini-cli";
        // Gemini CLI's excludeTools is applied.
        assert_eq!(ok.tools, if gemini { 2 } else { 3 }, "{}", f.display());
        assert_eq!(tools.len(), ok.tools);
        // The server's total is its tools' and, on Claude Code, its instructions'.
        assert_eq!(
            tools.iter().map(|t| t.tokens).sum::<u64>() + ok.instructions_tokens,
            ok.tokens
        );
        assert_eq!(ok.instructions_tokens > 0, ok.host == "claude-code");
        assert!(ok.tokens > 0 && ok.bytes > 0);
        // Each host names the tool as it shows it to the model.
        let now = tools.iter().find(|t| t.tool.ends_with("NOW")).unwrap();
        let host = toolcost::audit::Host::parse(&ok.host).unwrap();
        let client = toolcost::client::Client::named(host.profile().0).unwrap();
        assert_eq!(
            now.tool,
            client.tool_name("catalogue", "NOW"),
            "{}",
            f.display()
        );
        if matches!(host, toolcost::audit::Host::ClaudeCode) {
            assert_eq!(now.tool, "mcp__catalogue__NOW");
        }
        if gemini {
            assert_eq!(now.tool, "mcp_catalogue_NOW");
        }
    }
}

#[test]
fn audit_speaks_markdown_and_refuses_unknown_files_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let files = samples(dir.path());
    let desktop = files
        .iter()
        .find(|f| f.ends_with("claude_desktop_config.json"))
        .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args(["audit", "--format", "markdown", "--config"])
        .arg(desktop)
        .output()
        .unwrap();
    // Without --fail-on-error a failing server is reported, not fatal.
    assert!(out.status.success());
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.starts_with("| host | server | scope | tool |"), "{md}");
    assert!(md.contains("| claude-desktop | broken |"), "{md}");
    let odd = dir.path().join("servers.json");
    std::fs::write(&odd, "{}").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args(["audit", "--config"])
        .arg(&odd)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--host"));
}

/// A configuration named relative to the folder toolcost runs in (`--config .mcp.json`, the
/// way a person names the file in front of them): its server starts in that folder, and a
/// server that fails at once is quoted. Before, the folder of such a name was the empty path,
/// and every server in it failed with "could not start" whatever it was.
#[cfg(unix)]
#[test]
fn a_config_named_relative_to_this_folder_starts_its_servers_there() {
    let dir = tempfile::tempdir().unwrap();
    let line = format!("relative-config-{}", std::process::id());
    let config = serde_json::json!({"mcpServers": {"quick": {
        "command": "/bin/sh",
        "args": ["-c", format!("echo {line} >&2; exit 3")],
    }}});
    std::fs::write(dir.path().join(".mcp.json"), config.to_string()).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args(["audit", "--format", "json", "--config", ".mcp.json"])
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<toolcost::audit::AuditRow> = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout} {}", String::from_utf8_lossy(&out.stderr)));
    let quick = rows.iter().find(|r| r.server == "quick").unwrap();
    assert!(
        quick.status.contains(&line) && quick.status.contains("exit status: 3"),
        "{}",
        quick.status
    );
}
