//! `toolcost weigh`: real captures, a real server over stdio and Streamable HTTP, and servers
//! that misbehave (noise on stdout, early exit, hanging, list_changed, pagination).

mod common;

use serde_json::Value;

use assert_cmd::Command;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use toolcost::catalogue::Catalogue;
use toolcost::client::Client;
use toolcost::pricing::PriceCard;

fn toolcost() -> Command {
    Command::cargo_bin("toolcost").unwrap()
}

fn fake() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers/fake_mcp.py")
        .display()
        .to_string()
}

/// server-everything's entry point, installed by `.ci/run` under target/npm. Outside CI a
/// missing install skips with a message; in CI it fails.
fn everything() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if p.exists() {
        return Some(p);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} is missing: .ci/run installs it with npm",
        p.display()
    );
    eprintln!("skipping: {} not installed (run .ci/run, or npm install --prefix target/npm @modelcontextprotocol/server-everything)", p.display());
    None
}

#[test]
fn every_real_capture_weighs() {
    let client = Client::named("claude-cli").unwrap();
    let model = PriceCard::named("claude-sonnet-4.5").unwrap();
    for (name, path) in common::real_mcp_captures() {
        let cat = Catalogue::load(&path).unwrap();
        let w =
            toolcost::weigh::weigh(&cat, &client, &model, &Default::default(), Vec::new()).unwrap();
        assert_eq!(w.tools.len(), cat.tools.len(), "{name}");
        assert!(
            w.tools.windows(2).all(|p| p[0].bytes >= p[1].bytes),
            "{name}: not sorted by size"
        );
        assert_eq!(w.total_bytes, cat.definition_bytes(), "{name}");
        let m = w
            .marginal
            .iter()
            .find(|m| m.provider == "anthropic")
            .unwrap();
        assert!(m.tokens_per_definition.unwrap() > 10.0, "{name}");
        if name.contains("gitlab") {
            assert_eq!(
                w.tools_with_violations,
                w.tools.len(),
                "gitlab's schemas are all broken"
            );
        }
        if name.contains("notion") {
            assert!(
                w.tools
                    .iter()
                    .any(|t| t.violations.iter().any(|v| v.contains("$ref"))),
                "notion's $ref blocks"
            );
        }
    }
}

#[test]
fn weigh_file_formats() {
    let path = common::shared().join("real-mcp/playwright__mcp.tools.json");
    let out = toolcost()
        .args(["weigh", "--json", "--file"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tools"].as_array().unwrap().len(), 25);
    let csv = toolcost()
        .args(["weigh", "--csv", "--file"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(csv.stdout).unwrap().lines().count(), 26);
    let table = toolcost()
        .args(["weigh", "--file"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(
        text.contains("Marginal input tokens per definition")
            && text.contains("One turn on each surface")
    );
}

#[test]
fn noisy_paged_server_with_list_changed() {
    let out = toolcost()
        .args(["weigh", "--json", "--", "python3", &fake(), "noisy"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["gamma", "alpha", "beta"]);
    let notes = v["notes"].to_string();
    assert!(notes.contains("2 page(s)"), "{notes}");
    assert!(notes.contains("skipped 3 line(s)"), "{notes}");
    assert!(notes.contains("list_changed 1 time"), "{notes}");
    assert!(v["tools"][0]["violations"].to_string().contains("missing"));
}

#[test]
fn early_exit_is_a_clear_error() {
    let out = toolcost()
        .args(["weigh", "--", "python3", &fake(), "exit"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("stopped before answering initialize")
            && err.contains("config file not found"),
        "{err}"
    );
    let out = toolcost()
        .args(["weigh", "--", "no-such-program-xyz"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("could not start `no-such-program-xyz`"));
}

#[test]
fn a_hanging_server_times_out_and_every_process_stops() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let started = Instant::now();
    let out = toolcost()
        .args(["weigh", "--timeout", "2", "--", "python3", &fake(), "hang"])
        .arg(&pids)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("within 2 s"));
    assert!(started.elapsed() < Duration::from_secs(20));
    let text = std::fs::read_to_string(&pids).unwrap();
    for pid in text.split_whitespace() {
        let alive = |p: &str| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .map(|s| !s.contains(") Z "))
                .unwrap_or(false)
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(!alive(pid), "process {pid} outlived weigh");
    }
}

#[test]
fn server_everything_over_stdio_and_http_agree() {
    let Some(entry) = everything() else { return };
    let stdio = toolcost()
        .args(["weigh", "--json", "--", "node"])
        .arg(&entry)
        .arg("stdio")
        .output()
        .unwrap();
    assert!(
        stdio.status.success(),
        "{}",
        String::from_utf8_lossy(&stdio.stderr)
    );

    let (mut server, port) = common::spawn_peer(|port| {
        let mut c = std::process::Command::new("node");
        c.arg(&entry)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        c
    });
    let url = format!("http://127.0.0.1:{port}/mcp");
    let http = toolcost()
        .args(["weigh", "--json", "--each-protocol", "--url", &url])
        .output()
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        http.status.success(),
        "{}",
        String::from_utf8_lossy(&http.stderr)
    );
    let a: serde_json::Value = serde_json::from_slice(&stdio.stdout).unwrap();
    let b: serde_json::Value = serde_json::from_slice(&http.stdout).unwrap();
    assert!(a["tools"].as_array().unwrap().len() >= 10);
    assert_eq!(
        a["tools"], b["tools"],
        "the same tools and bytes over both transports"
    );
    assert_eq!(a["total_bytes"], b["total_bytes"]);
    // At each version: server-everything initializes (it has no server/discover), settles on
    // the versions it speaks, and lists the same definitions at all of them.
    assert_eq!(a["protocol"], "2025-11-25", "stdio initializes");
    let rows = b["protocols"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    assert!(rows[0]["error"].as_str().unwrap() != "", "{}", rows[0]);
    let spoken: Vec<&Value> = rows.iter().filter(|r| r["error"] == "").collect();
    assert!(spoken.len() >= 3, "{rows:?}");
    for r in spoken {
        assert_eq!(r["spoken"], r["requested"], "{r}");
        assert_eq!(r["definition_bytes"], b["total_bytes"], "{r}");
    }
}

#[test]
fn http_errors_are_clear() {
    // Port 1 (tcpmux) has no listener on a test machine: the connection is refused.
    let out = toolcost()
        .args(["weigh", "--url", "http://127.0.0.1:1/mcp"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("POST http://127.0.0.1"));
    let out = toolcost()
        .args(["weigh", "--url", "ftp://127.0.0.1/mcp"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // https is supported (tests/tls.rs); other schemes are refused by name.
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected an http:// or https:// URL"));
}

/// A server that fails at once is reported by what it said, every time: its stderr and exit
/// status, whether the request meets its closed stdin or its end first (the race a write into a
/// dead pipe used to lose, 20 of 20 times for a server this quick).
#[test]
fn a_server_that_fails_at_once_is_quoted_every_time() {
    for i in 0..20 {
        let line = format!("fatal-toolcost-{i}: no config here");
        let out = toolcost()
            .args(["weigh", "--timeout", "10", "--", "sh", "-c"])
            .arg(format!("echo '{line}' >&2; exit 3"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(&line), "run {i}: {err}");
    }
}

/// A server's `instructions` are reported with what they cost: the whole text, and what Claude
/// Code adds to its system prompt every turn (cut at 2,048 characters).
#[test]
fn a_servers_instructions_are_weighed_with_claude_codes_cap() {
    let run = |n: &str, json: bool| {
        let mut c = toolcost();
        c.arg("weigh");
        if json {
            c.arg("--json");
        }
        let out = c
            .args(["--", "python3", &fake(), "instructions", n])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let v: serde_json::Value = serde_json::from_str(&run("3000", true)).unwrap();
    let i = &v["instructions"];
    assert_eq!(i["chars"], 3000, "{i}");
    assert_eq!(i["claude_code_chars"], 2048, "{i}");
    let (whole, kept) = (
        i["model_tokens"].as_u64().unwrap(),
        i["claude_code_tokens"].as_u64().unwrap(),
    );
    assert!(kept < whole && kept > whole / 2, "{i}");
    let text = run("3000", false);
    assert!(
        text.contains("server instructions: 3,000 characters"),
        "{text}"
    );
    assert!(text.contains("cut at 2,048 characters"), "{text}");
    // Short instructions are kept whole.
    let v: serde_json::Value = serde_json::from_str(&run("100", true)).unwrap();
    assert_eq!(v["instructions"]["claude_code_chars"], 100);
    assert_eq!(
        v["instructions"]["claude_code_tokens"],
        v["instructions"]["model_tokens"]
    );
}
