//! `toolcost replay` of a log the gateway wrote with `--log-bodies`: sessions found, each priced
//! as sent (the rows' own figures) and on each way of loading the tools, and the set worth
//! keeping loaded. Network: 127.0.0.1 on port 0 only.

mod common;

use serde_json::{json, Value};
use toolcost::gateway::Upstream;

fn tools(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            json!({"name": format!("tool_{i}"),
                   "description": format!("Tool number {i}: it looks up records of kind {i} and returns them as a table with their ids, owners and dates."),
                   "input_schema": {"type": "object", "properties": {
                       "query": {"type": "string", "description": "What to look for"},
                       "limit": {"type": "integer", "description": "How many at most"}},
                       "required": ["query"]}})
        })
        .collect()
}

/// A session of `turns` requests that calls `calls` (tool indexes) in order, one a turn.
fn session(tools: &[Value], calls: &[usize]) -> Vec<Value> {
    let mut messages = vec![
        json!({"role": "user", "content": "Find the records I need for the quarterly review."}),
    ];
    let mut bodies = vec![
        json!({"model": "claude-sonnet-4-5", "max_tokens": 64, "tools": tools, "messages": messages.clone()}),
    ];
    for (k, &t) in calls.iter().enumerate() {
        let id = format!("toolu_{k}");
        messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": format!("tool_{t}"), "input": {"query": "q"}}]}));
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "id 7, owner ana, 2026-01-02"}]}));
        bodies.push(json!({"model": "claude-sonnet-4-5", "max_tokens": 64, "tools": tools, "messages": messages.clone()}));
    }
    bodies
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logs_sessions_are_priced_as_sent_and_on_each_loading() {
    let g = common::start_gateway(Upstream::Mock, |o| o.log_bodies = true).await;
    let defs = tools(12);
    let http = reqwest::Client::new();
    // Tool 0 is called in every session, tool 1 in a few, the others never.
    let plans: Vec<Vec<usize>> = (0..8)
        .map(|s| match s % 4 {
            0 => vec![0, 1],
            _ => vec![0, 0],
        })
        .collect();
    let mut sent = 0;
    for (s, calls) in plans.iter().enumerate() {
        for body in session(&defs, calls) {
            let r = http
                .post(format!("{}/v1/messages", g.base))
                .header(
                    "x-toolcost-metadata",
                    json!({"session": format!("s{s}")}).to_string(),
                )
                .header("content-type", "application/json")
                .body(body.to_string())
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
            sent += 1;
        }
    }
    let rows = toolcost::gateway::log::read_all(&g.log).unwrap();
    assert_eq!(rows.len(), sent);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args(["replay", "--json"])
        .arg(&g.log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sessions = v["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), plans.len());
    // As sent is what the gateway logged, session by session.
    for (s, row) in sessions.iter().enumerate() {
        let logged: u64 = rows
            .iter()
            .filter(|r| r.metadata.contains(&format!("\"s{s}\"")))
            .map(|r| r.input_tokens)
            .sum();
        assert_eq!(row["as_sent_tokens"], logged, "{row}");
        assert_eq!(row["requests"], plans[s].len() + 1);
        // The log sent every definition up front: replayed so, it costs what it cost.
        assert_eq!(row["up_front_tokens"], row["as_sent_tokens"], "{row}");
    }
    let total = &v["total"];
    let (up, def, best) = (
        total["up_front_tokens"].as_u64().unwrap(),
        total["deferred_tokens"].as_u64().unwrap(),
        total["best_tokens"].as_u64().unwrap(),
    );
    assert!(best <= up && best <= def, "{total}");
    assert!(
        best < up,
        "twelve definitions, one used: deferring most pays: {total}"
    );
    let keep: Vec<&str> = v["keep_loaded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(keep.contains(&"tool_0"), "{keep:?}");
    assert!(!keep.contains(&"tool_5"), "{keep:?}");
    // The same set as Anthropic's per-tool `defer_loading`.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args(["replay", "--emit", "anthropic"])
        .arg(&g.log)
        .output()
        .unwrap();
    let emitted: Value = serde_json::from_slice(&out.stdout).unwrap();
    let deferred = emitted
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["defer_loading"] == true)
        .count();
    assert_eq!(deferred + keep.len(), 12);
}

#[test]
fn a_log_without_bodies_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args(["replay"])
        .arg(dir.path().join("none.sqlite"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--log-bodies"));
}
