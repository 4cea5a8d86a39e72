//! The official SDKs against toolcost, as a user would run them: the Python `mcp` 2.x client
//! (stateless 2026-07-28) and the TypeScript 1.32 client (2025-11-25) list and call on every
//! MCP endpoint of the reference server, and `weigh` lists a server built on the Python SDK at
//! each protocol version it speaks.

mod common;

use serde_json::Value;
use std::path::PathBuf;

const TOKEN: &str = "interop-token";

fn peers() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

/// (path, tool, arguments, tools listed) for each endpoint, at `n` rows.
fn endpoints(n: usize) -> [(&'static str, &'static str, &'static str, usize); 4] {
    [
        ("/mcp", "ECHO", r#"{"message":"from the sdk"}"#, n),
        (
            "/mcp/small",
            "dispatch",
            r#"{"key":"ECHO","body":{"message":"from the sdk"}}"#,
            4,
        ),
        (
            "/mcp/code",
            "execute",
            r#"{"code":"console.log(JSON.stringify(await dispatch('ECHO', {message: 'from the sdk'})))"}"#,
            1,
        ),
        ("/mcp/min", "ECHO", r#"{"message":"from the sdk"}"#, n),
    ]
}

/// The receipt id in a tool result's text (every endpoint's call leaves one).
fn receipt(result: &Value) -> String {
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    let v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    v["receipt"]
        .as_str()
        .or(v["result"]["receipt"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[test]
fn the_python_sdk_client_speaks_the_stateless_revision_on_every_endpoint() {
    if !common::python_sdks("mcp.client.streamable_http") {
        return;
    }
    let s = common::serve(
        &[
            "serve",
            "--rows",
            "856",
            "--page-size",
            "300",
            "--token-env",
            "IOP_TOKEN",
        ],
        &[("IOP_TOKEN", TOKEN)],
    );
    for (path, tool, args, count) in endpoints(856) {
        let out = std::process::Command::new(common::python())
            .arg(peers().join("sdk_py_client.py"))
            .arg(format!("{}{path}", s.base))
            .args([TOKEN, "auto", tool, args])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{path}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["protocol"], "2026-07-28", "{path}");
        assert_eq!(v["tools"].as_array().unwrap().len(), count, "{path}");
        if count > 300 {
            assert_eq!(v["pages"], 3, "{path}: 856 tools in pages of 300");
        }
        assert_eq!(v["result"]["isError"], false, "{path}: {v}");
        assert!(!receipt(&v["result"]).is_empty(), "{path}: {v}");
    }
}

#[test]
fn the_typescript_sdk_client_speaks_2025_11_25_on_every_endpoint() {
    let sdk = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/npm/node_modules/@modelcontextprotocol/sdk");
    if !sdk.join("dist/esm/client/index.js").exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "the TypeScript SDK is missing: .ci/run installs it"
        );
        eprintln!("skipping: the TypeScript MCP SDK is not installed under target/npm");
        return;
    }
    let s = common::serve(
        &["serve", "--rows", "120", "--token-env", "IOP_TOKEN"],
        &[("IOP_TOKEN", TOKEN)],
    );
    for (path, tool, args, count) in endpoints(120) {
        let out = std::process::Command::new("node")
            .arg(peers().join("sdk_client.mjs"))
            .arg(&sdk)
            .arg(format!("{}{path}", s.base))
            .args([TOKEN, tool, args])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{path}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["protocol"], "2025-11-25", "{path}");
        assert_eq!(v["tools"].as_array().unwrap().len(), count, "{path}");
        assert_eq!(v["result"]["isError"], false, "{path}: {v}");
        assert!(!receipt(&v["result"]).is_empty(), "{path}: {v}");
    }
}

#[test]
fn weigh_lists_a_python_sdk_server_at_each_version_it_speaks() {
    if !common::python_sdks("mcp.server.mcpserver") {
        return;
    }
    let out = assert_cmd::Command::cargo_bin("toolcost")
        .unwrap()
        .args(["weigh", "--json", "--each-protocol", "--"])
        .arg(common::python())
        .arg(peers().join("sdk_py_server.py"))
        .arg("stdio")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tools"].as_array().unwrap().len(), 3);
    let rows = v["protocols"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    let modern = &rows[0];
    assert_eq!(modern["requested"], "2026-07-28");
    assert_eq!(modern["spoken"], "2026-07-28", "{modern}");
    let legacy = &rows[1];
    assert_eq!(legacy["spoken"], "2025-11-25", "{legacy}");
    for r in rows.iter().filter(|r| r["error"] == "") {
        assert_eq!(r["tools"], 3, "{r}");
        assert_eq!(r["definition_bytes"], v["total_bytes"], "{r}");
        assert!(r["list_bytes"].as_u64().unwrap() > r["definition_bytes"].as_u64().unwrap());
    }
    eprintln!("{}", serde_json::to_string_pretty(rows).unwrap());
}
