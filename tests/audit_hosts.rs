//! `toolcost audit` starts only what each host would start, with what the host would give it:
//! transport precedence, disabled servers and tool filters, Claude Code's scopes, relative
//! paths, the environment, this folder's files, placeholders, a bound on time, and no secret in
//! any row (the hostile round's classes, each with inputs of its own).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A home folder and a project folder in a temporary directory.
struct Place {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

fn place() -> Place {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    Place {
        home,
        project,
        _dir: dir,
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn env_server() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers/fake_mcp.py")
        .display()
        .to_string()
}

/// Run `toolcost audit --format json` with `args` in `p.project`, HOME at `p.home` and a secret
/// in toolcost's environment; the rows, and stderr.
fn audit(p: &Place, args: &[&str]) -> (Vec<Value>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args(["audit", "--format", "json", "--timeout", "10"])
        .args(args)
        .current_dir(&p.project)
        .env("HOME", &p.home)
        .env("OPENAI_API_KEY", "sk-toolcost-test-never-passed")
        .env("TOOLCOST_TEST_TOKEN", "tok-from-env")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.code() != Some(2), "{stderr}");
    let rows: Vec<Value> = match stdout.trim().is_empty() {
        true => Vec::new(),
        false => serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}")),
    };
    assert!(!stdout.contains("sk-toolcost-test") && !stderr.contains("sk-toolcost-test"));
    (rows, stderr)
}

fn server<'a>(rows: &'a [Value], name: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["server"] == name && r["tool"] == "")
        .unwrap_or_else(|| panic!("no row for {name}: {rows:?}"))
}

fn tools(rows: &[Value], name: &str) -> Vec<String> {
    rows.iter()
        .filter(|r| r["server"] == name && r["tool"] != "")
        .map(|r| r["tool"].as_str().unwrap().to_string())
        .collect()
}

/// A stdio entry of the env server, in JSON.
fn env_entry(extra: &str) -> String {
    format!(
        r#"{{"command": "python3", "args": ["{}", "env"]{extra}}}"#,
        env_server()
    )
}

#[test]
fn a_server_gets_a_minimal_environment_its_env_and_its_folder() {
    let p = place();
    let cfg = p.home.join(".codeium/windsurf/mcp_config.json");
    write(
        &cfg,
        &format!(
            r#"{{"mcpServers": {{"envs": {}}}}}"#,
            env_entry(r#", "env": {"GIVEN": "${env:TOOLCOST_TEST_TOKEN}"}"#)
        ),
    );
    let (rows, err) = audit(&p, &[]);
    assert_eq!(server(&rows, "envs")["status"], "ok", "{err}");
    let names = tools(&rows, "envs");
    let has = |n: &str| names.iter().any(|t| t.ends_with(n));
    assert!(
        has("ENV_PATH") && has("ENV_HOME") && has("ENV_GIVEN"),
        "{names:?}"
    );
    assert!(
        !has("ENV_OPENAI_API_KEY") && !has("ENV_TOOLCOST_TEST_TOKEN"),
        "{names:?}"
    );
    // A user's configuration runs its server in the home folder.
    assert!(has("CWD_home"), "{names:?}");
}

#[test]
fn a_url_with_type_http_is_reached_over_http_and_codex_refuses_both() {
    let p = place();
    // Claude Code: `type: http` wins over a `command` the entry also names (the command would
    // run a program; it must not).
    let marker = p.project.join("ran");
    write(
        &p.home.join(".claude.json"),
        &format!(
            r#"{{"mcpServers": {{"remote": {{"type": "http", "url": "http://127.0.0.1:9/mcp", "command": "touch", "args": ["{}"]}}}}}}"#,
            marker.display()
        ),
    );
    write(
        &p.home.join(".codex/config.toml"),
        &format!(
            "[mcp_servers.both]\ncommand = \"touch\"\nargs = [\"{}\"]\nurl = \"http://127.0.0.1:9/mcp\"\n",
            marker.display()
        ),
    );
    let (rows, _) = audit(&p, &[]);
    assert!(!marker.exists(), "a command ran: {rows:?}");
    let remote = server(&rows, "remote");
    assert!(
        remote["status"].as_str().unwrap().starts_with("failed"),
        "{remote}"
    );
    let both = server(&rows, "both");
    assert!(
        both["status"].as_str().unwrap().contains("Codex refuses"),
        "{both}"
    );
}

#[test]
fn disabled_servers_do_not_start_and_tool_filters_apply() {
    let p = place();
    let marker = p.project.join("ran");
    let touch = format!(r#""command": "touch", "args": ["{}"]"#, marker.display());
    write(
        &p.home.join(".codeium/windsurf/mcp_config.json"),
        &format!(
            r#"{{"mcpServers": {{"off": {{{touch}, "disabled": true}}, "some": {}}}}}"#,
            env_entry(r#", "disabledTools": ["ENV_PATH"]"#)
        ),
    );
    write(
        &p.home.join(".codex/config.toml"),
        &format!(
            "[mcp_servers.off2]\ncommand = \"touch\"\nargs = [\"{m}\"]\nenabled = false\n\n[mcp_servers.only]\ncommand = \"python3\"\nargs = [\"{s}\", \"env\"]\nenabled_tools = [\"ENV_PATH\", \"ENV_HOME\"]\ndisabled_tools = [\"ENV_HOME\"]\n",
            m = marker.display(),
            s = env_server()
        ),
    );
    write(
        &p.home.join(".claude.json"),
        &format!(
            r#"{{"projects": {{"{}": {{"disabledMcpServers": ["mine"], "mcpServers": {{"mine": {{{touch}}}}}}}}}}}"#,
            p.project.canonicalize().unwrap().display()
        ),
    );
    let (rows, _) = audit(&p, &[]);
    assert!(!marker.exists(), "a disabled server ran: {rows:?}");
    for name in ["off", "off2", "mine"] {
        let r = server(&rows, name);
        assert!(
            r["status"].as_str().unwrap().starts_with("not started"),
            "{r}"
        );
    }
    assert!(!tools(&rows, "some").iter().any(|t| t.ends_with("ENV_PATH")));
    let only = tools(&rows, "only");
    assert_eq!(only.len(), 1, "{only:?}");
    assert!(only[0].ends_with("ENV_PATH"));
}

#[test]
fn claude_code_reads_this_folders_project_only_and_one_server_per_name() {
    let p = place();
    let here = p.project.canonicalize().unwrap();
    write(
        &p.home.join(".claude.json"),
        &format!(
            r#"{{"mcpServers": {{"dup": {{"command": "toolcost-user-scope-loses"}}}},
               "projects": {{"{}": {{"mcpServers": {{"dup": {}}}}},
                             "/somewhere/else": {{"mcpServers": {{"other": {{"command": "toolcost-other"}}}}}}}}}}"#,
            here.display(),
            env_entry("")
        ),
    );
    let (rows, _) = audit(&p, &[]);
    assert!(!rows.iter().any(|r| r["server"] == "other"), "{rows:?}");
    let dups: Vec<&Value> = rows
        .iter()
        .filter(|r| r["server"] == "dup" && r["tool"] == "")
        .collect();
    assert_eq!(dups.len(), 1);
    assert_eq!(dups[0]["status"], "ok", "{:?}", dups[0]);
    assert_eq!(dups[0]["scope"], "local");
}

#[test]
fn this_folders_configs_are_listed_not_started_unless_asked() {
    let p = place();
    let marker = p.project.join("ran");
    write(
        &p.project.join(".mcp.json"),
        &format!(
            r#"{{"mcpServers": {{"cloned": {{"command": "touch", "args": ["{}"]}}}}}}"#,
            marker.display()
        ),
    );
    write(
        &p.project.join(".vscode/mcp.json"),
        &format!(
            r#"{{"servers": {{"cloned2": {{"command": "touch", "args": ["{}"]}}}}}}"#,
            marker.display()
        ),
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args(["audit", "--format", "json"])
        .current_dir(&p.project)
        .env("HOME", &p.home)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!marker.exists());
    assert!(
        err.contains(".mcp.json") && err.contains("--include-folder"),
        "{err}"
    );
    // Named with --config, a project .mcp.json is the user's choice and runs (here: relative
    // to its own folder).
    write(&p.project.join("bin/tool.sh"), "#!/bin/sh\ntouch ran\n");
    write(
        &p.project.join(".mcp.json"),
        r#"{"mcpServers": {"rel": {"command": "./bin/tool.sh"}}}"#,
    );
    std::process::Command::new("chmod")
        .args(["+x"])
        .arg(p.project.join("bin/tool.sh"))
        .status()
        .unwrap();
    let elsewhere = p.home.clone();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args(["audit", "--format", "json", "--timeout", "5", "--config"])
        .arg(p.project.join(".mcp.json"))
        .current_dir(&elsewhere)
        .env("HOME", &p.home)
        .output()
        .unwrap();
    let _ = out;
    assert!(
        marker.exists(),
        "the relative command did not run against its config's folder"
    );
    assert!(!elsewhere.join("ran").exists());
}

#[test]
fn placeholders_expand_as_each_host_expands_them() {
    let p = place();
    write(
        &p.project.join(".vscode/mcp.json"),
        r#"{"inputs": [{"id": "key", "type": "promptString"}],
            "servers": {"asks": {"command": "python3", "args": ["x"], "env": {"K": "${input:key}"}}}}"#,
    );
    write(
        &p.home.join(".claude.json"),
        r#"{"mcpServers": {"unset": {"command": "${TOOLCOST_NO_SUCH_VAR}/srv"}}}"#,
    );
    let (rows, _) = audit(&p, &["--include-folder"]);
    let asks = server(&rows, "asks");
    assert!(
        asks["status"].as_str().unwrap().contains("input:key"),
        "{asks}"
    );
    let unset = server(&rows, "unset");
    assert!(
        unset["status"]
            .as_str()
            .unwrap()
            .contains("TOOLCOST_NO_SUCH_VAR"),
        "{unset}"
    );
}

#[test]
fn many_hanging_servers_are_weighed_side_by_side() {
    let p = place();
    let hang: Vec<String> = (0..24)
        .map(|i| format!(r#""h{i}": {{"command": "sleep", "args": ["30"]}}"#))
        .collect();
    write(
        &p.home.join(".codeium/windsurf/mcp_config.json"),
        &format!(r#"{{"mcpServers": {{{}}}}}"#, hang.join(",")),
    );
    let started = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args([
            "audit",
            "--format",
            "json",
            "--timeout",
            "1",
            "--jobs",
            "24",
        ])
        .current_dir(&p.project)
        .env("HOME", &p.home)
        .output()
        .unwrap();
    // One at a time this would be 24 timeouts; side by side it is about one.
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        rows.iter()
            .filter(|r| r["tool"] == "" && r["server"] != "(all)")
            .count(),
        24
    );
}

#[test]
fn secrets_in_urls_never_reach_a_row() {
    let p = place();
    write(
        &p.home.join(".cursor/mcp.json"),
        r#"{"mcpServers": {"leaky": {"url": "http://user:hunter2@127.0.0.1:9/mcp?api_key=topsecret&access_token=ya29tok"}}}"#,
    );
    let (rows, err) = audit(&p, &[]);
    let text = serde_json::to_string(&rows).unwrap() + &err;
    assert!(
        !text.contains("hunter2") && !text.contains("topsecret") && !text.contains("ya29tok"),
        "{text}"
    );
    assert!(server(&rows, "leaky")["status"]
        .as_str()
        .unwrap()
        .starts_with("failed"));
}

#[test]
fn markdown_output_escapes_what_a_config_names() {
    let p = place();
    write(
        &p.home.join(".codeium/windsurf/mcp_config.json"),
        r#"{"mcpServers": {"<img src=x onerror=alert(1)>|*x*": {"url": "ftp://nowhere"}}}"#,
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args(["audit", "--format", "markdown", "--timeout", "2"])
        .current_dir(&p.project)
        .env("HOME", &p.home)
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(!md.contains("<img") && md.contains("&lt;img"), "{md}");
    let row = md.lines().find(|l| l.contains("&lt;img")).unwrap();
    let header = md.lines().next().unwrap();
    let cells = |l: &str| l.matches('|').count() - l.matches("\\|").count();
    assert_eq!(cells(row), cells(header), "{row}");
}

/// Entries a host would refuse or never start: VS Code's typed remote entry with a `command`
/// and no `url`, Claude Code's `type` that is not a string, Codex's `enabled` that is not a
/// boolean. None of their commands runs.
#[test]
fn entries_the_host_refuses_start_nothing() {
    let p = place();
    let marker = p.project.join("ran");
    let touch = format!(r#""command": "touch", "args": ["{}"]"#, marker.display());
    write(
        &p.home.join(".config/Code/User/mcp.json"),
        &format!(
            r#"{{"servers": {{"h": {{"type": "http", {touch}}}, "s": {{"type": "sse", {touch}}}}}}}"#
        ),
    );
    write(
        &p.home.join(".claude.json"),
        &format!(
            r#"{{"mcpServers": {{"nulltype": {{"type": null, {touch}}}, "numtype": {{"type": 5, {touch}}}}}}}"#
        ),
    );
    write(
        &p.home.join(".codex/config.toml"),
        &format!(
            "[mcp_servers.str]\ncommand = \"touch\"\nargs = [\"{}\"]\nenabled = \"false\"\n",
            marker.display()
        ),
    );
    let (rows, _) = audit(&p, &[]);
    assert!(!marker.exists(), "a command ran: {rows:?}");
    for name in ["h", "s", "nulltype", "numtype", "str"] {
        let r = server(&rows, name);
        assert!(
            r["status"].as_str().unwrap().starts_with("not weighed"),
            "{r}"
        );
    }
}

/// What a failing server prints is quoted with the values toolcost passed it (its `env`)
/// redacted, and any URL's password; a broken host file is named without its text, and the
/// other hosts are still audited; Claude Code's ignored `cwd` is ignored.
#[test]
fn a_failing_servers_words_keep_no_secret_and_a_broken_file_loses_no_host() {
    let p = place();
    write(
        &p.home.join(".claude.json"),
        &format!(
            r#"{{"mcpServers": {{"leak": {{"command": "sh", "args": ["-c", "echo \"auth failed with token $MY_TOKEN at postgres://admin:pgpass@db/app\" >&2; exit 1"], "env": {{"MY_TOKEN": "tok-ENVSECRET-777"}}}}, "here": {}}}}}"#,
            env_entry(r#", "cwd": "/""#)
        ),
    );
    write(
        &p.home.join(".codex/config.toml"),
        "[mcp_servers.a]\ncommand = \"touch\"\nenv = { API_KEY = \"sk-TOMLSECRET-1\", OTHER = }\n",
    );
    let (rows, err) = audit(&p, &[]);
    let leak = server(&rows, "leak")["status"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        leak.starts_with("failed") && leak.contains("auth failed"),
        "{leak}"
    );
    let all = serde_json::to_string(&rows).unwrap() + &err;
    for secret in ["tok-ENVSECRET-777", "pgpass", "sk-TOMLSECRET-1"] {
        assert!(!all.contains(secret), "{secret} in {all}");
    }
    assert!(
        err.contains("config.toml") && err.contains("line 3"),
        "{err}"
    );
    // Claude Code starts a server in its own folder, whatever `cwd` says.
    let here = tools(&rows, "here");
    assert!(here.iter().any(|t| t.ends_with("CWD_project")), "{here:?}");
}

/// Secrets planted where audit itself puts them never reach any output: a value expanded from
/// the environment into a URL's path, a token in a path segment, a fragment, and a failing
/// program's arguments (a spawn that fails and one that prints its argv); every format.
#[test]
fn planted_secrets_reach_no_output_in_any_format() {
    let p = place();
    write(
        &p.home.join(".claude.json"),
        r#"{"mcpServers": {
            "expanded": {"type": "http", "url": "http://127.0.0.1:9/u/${TOOLCOST_TEST_TOKEN}/mcp"},
            "pathtok": {"type": "http", "url": "http://127.0.0.1:9/s/9fK2xQ7LmN4pR8sT1vW3/mcp#frag-SECRET-fragment"},
            "nospawn": {"command": "/nonexistent/prog-x", "args": ["--api-key", "sk-ARGV-SPAWN-1"]},
            "echoes": {"command": "sh", "args": ["-c", "echo \"bad args: $0 $1\" >&2; exit 1", "prog", "sk-ARGV-PRINTED-2"]}
        }}"#,
    );
    let planted = [
        "tok-from-env",
        "9fK2xQ7LmN4pR8sT1vW3",
        "frag-SECRET-fragment",
        "sk-ARGV-SPAWN-1",
        "sk-ARGV-PRINTED-2",
    ];
    let (rows, err) = audit(&p, &[]);
    for name in ["expanded", "pathtok", "nospawn", "echoes"] {
        assert!(
            server(&rows, name)["status"]
                .as_str()
                .unwrap()
                .starts_with("failed"),
            "{name}: {rows:?}"
        );
    }
    let mut all = serde_json::to_string(&rows).unwrap() + &err;
    for format in ["table", "markdown"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
            .args(["audit", "--format", format, "--timeout", "10"])
            .current_dir(&p.project)
            .env("HOME", &p.home)
            .env("TOOLCOST_TEST_TOKEN", "tok-from-env")
            .output()
            .unwrap();
        all.push_str(&String::from_utf8_lossy(&out.stdout));
        all.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    for secret in planted {
        assert!(!all.contains(secret), "{secret} in {all}");
    }
    // The failing HTTP server is still named by where it runs.
    assert!(all.contains("127.0.0.1:9"), "{all}");
}

/// A server whose folder is missing is said to be missing its folder, not its program.
#[test]
fn a_missing_folder_is_named_as_the_folder() {
    let p = place();
    write(
        &p.home.join(".codex/config.toml"),
        "[mcp_servers.lost]\ncommand = \"python3\"\ncwd = \"/nonexistent/toolcost-folder\"\n",
    );
    let (rows, _) = audit(&p, &[]);
    let status = server(&rows, "lost")["status"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        status.contains("/nonexistent/toolcost-folder") && status.contains("does not exist"),
        "{status}"
    );
    assert!(!status.contains("on PATH"), "{status}");
}

/// `toolcost audit` in `p.project` with HOME at `p.home` and these variables set.
fn audit_with(p: &Place, vars: &[(&str, &str)]) -> Vec<Value> {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"));
    c.args(["audit", "--format", "json", "--timeout", "20"])
        .current_dir(&p.project)
        .env("HOME", &p.home)
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("ENABLE_TOOL_SEARCH");
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.code() != Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Claude Code's session start as its rule sends it: with `ANTHROPIC_BASE_URL` at a gateway
/// and no `ENABLE_TOOL_SEARCH`, every definition up front; with `ENABLE_TOOL_SEARCH=true`,
/// deferred (the tools' names alone). A server's instructions are added either way, cut at
/// 2,048 characters.
#[test]
fn claude_codes_session_start_follows_its_tool_search_rule() {
    let p = place();
    write(
        &p.home.join(".claude.json"),
        &format!(
            r#"{{"mcpServers": {{"guide": {{"command": "python3", "args": ["{}", "instructions", "3000"]}}}}}}"#,
            env_server()
        ),
    );
    let host = |rows: &[Value]| {
        rows.iter()
            .find(|r| r["host"] == "claude-code" && r["server"] == "(all)")
            .cloned()
            .unwrap_or_else(|| panic!("{rows:?}"))
    };
    let gateway = audit_with(&p, &[("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")]);
    let up = host(&gateway);
    let posture = up["posture"].as_str().unwrap();
    assert!(
        posture.starts_with("up front") && posture.contains("127.0.0.1"),
        "{posture}"
    );
    let server = server(&gateway, "guide");
    let instructions = server["instructions_tokens"].as_u64().unwrap();
    assert!(instructions > 300 && instructions < 700, "{server}");
    assert_eq!(up["tokens"], server["tokens"]);
    let forced = audit_with(
        &p,
        &[
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
            ("ENABLE_TOOL_SEARCH", "true"),
        ],
    );
    let deferred = host(&forced);
    assert!(
        deferred["posture"]
            .as_str()
            .unwrap()
            .starts_with("deferred"),
        "{deferred}"
    );
    let names = deferred["deferred_tokens"].as_u64().unwrap();
    assert_eq!(deferred["tokens"].as_u64().unwrap(), names + instructions);
    assert!(
        deferred["tokens"].as_u64() < up["tokens"].as_u64(),
        "{deferred} {up}"
    );
    assert!(deferred["cost_usd"].as_f64() < up["cost_usd"].as_f64());
}
