//! The reference server on 127.0.0.1:0: the HTTP protocol, the live directory, MCP per-row and
//! small over Streamable HTTP and stdio, receipts, and every kind of bad input.

mod common;

use serde_json::{json, Value};
use std::sync::Arc;
use toolcost::catalogue::{generate::Generator, profile::Profile, Catalogue, Row};
use toolcost::client::Client;
use toolcost::server;
use toolcost::surface::{Context, SurfaceKind, DEFAULT_ENDPOINT};

const TOKEN: &str = "test-token-1";

type Server = common::InProcess;

fn rows(n: usize, inactive: bool) -> Vec<Row> {
    Generator::new(Profile::named("seed-2026-07").unwrap(), n, 1, inactive).collect()
}

async fn start_with(rows: Vec<Row>, token: Option<&str>, max_body: usize) -> Server {
    let opts = server::Options {
        rows: Some(rows),
        db: None,
        token: token.map(String::from),
        allowlist: vec![],
        max_body,
    };
    let state = server::state(&opts).unwrap();
    common::serve_in_process(state, max_body, reqwest::Client::new()).await
}

async fn start(n: usize) -> Server {
    start_with(rows(n, false), Some(TOKEN), server::DEFAULT_MAX_BODY).await
}

impl Server {
    async fn get(&self, path: &str) -> (u16, Value) {
        let r = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let text = r.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    async fn post(&self, path: &str, body: &str, token: Option<&str>) -> (u16, Value) {
        let mut rb = self
            .http
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(t) = token {
            rb = rb.bearer_auth(t);
        }
        let r = rb.send().await.unwrap();
        let status = r.status().as_u16();
        let text = r.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    async fn rpc(&self, path: &str, msg: Value) -> (u16, Value) {
        self.post(path, &msg.to_string(), Some(TOKEN)).await
    }

    fn receipts(&self) -> i64 {
        self.state.receipt_count().unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_ask_contract_invoke_receipt() {
    let s = start(856).await;
    let (st, manifest) = s.get("/api/dispatch").await;
    assert_eq!(st, 200);
    assert!(manifest["verbs"]["ask"].as_str().unwrap().contains("?ask="));

    let (_, ask) = s.get("/api/dispatch?ask=what%20time%20is%20it").await;
    assert_eq!(ask["best"]["key"], "NOW");
    assert_eq!(ask["count"], 12);
    assert!(ask["best"]["invoke"]["url"]
        .as_str()
        .unwrap()
        .ends_with("/api/dispatch"));
    let (_, noisy) = s
        .get("/api/dispatch?ask=what%20time%20is%20it&resolver=substring")
        .await;
    let keys: Vec<&str> = noisy["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys[0], "NOW");
    assert!(
        keys.iter()
            .any(|k| k.starts_with("GITHUB") && k.contains("ISSUE")),
        "the published noise: {keys:?}"
    );

    let (_, c) = s.get("/api/dispatch?key=EMAIL_SEND").await;
    assert_eq!(c["auth_env"], "RESEND_API_KEY");
    assert_eq!(c["schema"]["required"], json!(["to", "subject", "body"]));
    let (st, md) = s.get("/api/dispatch?key=EMAIL_SEND&format=markdown").await;
    assert_eq!(st, 200);
    assert!(md.as_str().unwrap().starts_with("# EMAIL_SEND"));

    let before = s.receipts();
    let (st, inv) = s
        .post(
            "/api/dispatch",
            r#"{"key":"ORDER_GET","args":{"order_id":"ord_7"}}"#,
            Some(TOKEN),
        )
        .await;
    assert_eq!(st, 200, "{inv}");
    assert_eq!(inv["ok"], true);
    let (_, again) = s
        .post(
            "/api/dispatch",
            r#"{"key":"ORDER_GET","body":"{\"order_id\":\"ord_7\"}"}"#,
            Some(TOKEN),
        )
        .await;
    assert_eq!(
        inv["result"], again["result"],
        "fake orders are deterministic"
    );
    assert_eq!(s.receipts(), before + 2);
    let id = inv["proof"]["invocation_id"].as_str().unwrap();
    let (_, r) = s.get(&format!("/api/dispatch?receipt={id}")).await;
    assert_eq!(r["key"], "ORDER_GET");
    let confirm = s
        .http
        .get(format!("{}/api/dispatch?confirm={id}", s.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let confirm: Value = serde_json::from_str(&confirm).unwrap();
    assert_eq!(confirm, json!({"id": id, "confirmed": true}));
    let anonymous = s
        .http
        .get(format!("{}/api/dispatch?receipt={id}", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);

    let (_, mail) = s.post("/api/dispatch", r#"{"key":"EMAIL_SEND","args":{"to":["ops@example.com"],"subject":"Hi","body":"Hello"}}"#, Some(TOKEN)).await;
    assert_eq!(mail["result"]["sent"], false);
    let (_, shaped) = s
        .post(
            "/api/dispatch",
            r#"{"key":"SUM","args":{"numbers":[1,2,3.5]}}"#,
            Some(TOKEN),
        )
        .await;
    assert_eq!(shaped["result"]["total"], 6.5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runners_http_shape_allowlist_flow_agent() {
    let mut rs = rows(20, false);
    let http_row = |key: &str, target: &str| Row {
        key: key.into(),
        runner: toolcost::catalogue::Runner::Http,
        target: Some(target.into()),
        auth: Some("bearer:EXAMPLE_TOKEN".into()),
        content: format!("# WHAT: {key}\n"),
        category: Some("test".into()),
        planner_rank: 100,
        enabled: true,
        planner_visible: true,
        input_schema: Some(
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]})
                .into(),
        ),
    };
    rs.push(http_row(
        "THING_GET",
        "GET https://api.example.com/things/$1",
    ));
    let mut flow = http_row("FLOW_X", "flow:x");
    flow.runner = toolcost::catalogue::Runner::Flow;
    flow.content = "# WHAT: two steps\nSTEPS: ECHO -> THING_GET\n".into();
    rs.push(flow);
    let mut agent = http_row("AGENT_X", "agent:x");
    agent.runner = toolcost::catalogue::Runner::Agent;
    rs.push(agent);
    let s = start_with(rs, Some(TOKEN), server::DEFAULT_MAX_BODY).await;
    let (_, shaped) = s
        .post(
            "/api/dispatch",
            r#"{"key":"THING_GET","args":{"id":"t1"},"shape":true}"#,
            Some(TOKEN),
        )
        .await;
    assert_eq!(
        shaped["result"]["shape"],
        json!({"method": "GET", "url": "https://api.example.com/things/t1", "headers": {"authorization": "Bearer $EXAMPLE_TOKEN"}, "body": null})
    );
    let before = s.receipts();
    let (st, refused) = s
        .post(
            "/api/dispatch",
            r#"{"key":"THING_GET","args":{"id":"t1"}}"#,
            Some(TOKEN),
        )
        .await;
    assert_eq!(st, 403, "{refused}");
    assert!(refused["message"].as_str().unwrap().contains("allowlist"));
    assert_eq!(s.receipts(), before, "a refused call writes no receipt");
    let (_, f) = s
        .post(
            "/api/dispatch",
            r#"{"key":"FLOW_X","args":{"id":"t2"}}"#,
            Some(TOKEN),
        )
        .await;
    assert_eq!(f["ok"], true, "{f}");
    assert_eq!(
        f["result"]["steps"][1]["result"]["shape"]["url"],
        "https://api.example.com/things/t2"
    );
    let (_, a) = s
        .post(
            "/api/dispatch",
            r#"{"key":"AGENT_X","args":{"id":"x"}}"#,
            Some(TOKEN),
        )
        .await;
    assert_eq!(a["ok"], false);
    assert!(a["result"]["error"]
        .as_str()
        .unwrap()
        .contains("not configured"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_on_the_http_protocol() {
    let s = start_with(rows(30, false), Some(TOKEN), 4096).await;
    let before = s.receipts();
    let cases: Vec<(&str, Option<&str>, u16, &str)> = vec![
        ("{not json", Some(TOKEN), 400, "malformed_json"),
        (r#"{"key":"NO_SUCH_KEY"}"#, Some(TOKEN), 404, "unknown_key"),
        (r#"{"key":"NOW"}"#, None, 401, "unauthorized"),
        (r#"{"key":"NOW"}"#, Some("wrong"), 401, "unauthorized"),
        (
            r#"{"key":"ORDER_GET","args":{"order_id":7}}"#,
            Some(TOKEN),
            422,
            "invalid_arguments",
        ),
        (
            r#"{"key":"NOW","colour":"red"}"#,
            Some(TOKEN),
            400,
            "bad_request",
        ),
        (r#"[1,2]"#, Some(TOKEN), 400, "bad_request"),
    ];
    for (body, token, status, code) in cases {
        let (st, v) = s.post("/api/dispatch", body, token).await;
        assert_eq!(st, status, "{body}: {v}");
        assert_eq!(v["error"], code, "{body}: {v}");
    }
    let (_, v) = s
        .post(
            "/api/dispatch",
            r#"{"key":"ORDER_GET","args":{"order_id":7}}"#,
            Some(TOKEN),
        )
        .await;
    assert_eq!(v["pointer"], "/order_id");
    let (_, v) = s
        .post("/api/dispatch", r#"{"key":"NO_SUCH_KEY"}"#, Some(TOKEN))
        .await;
    assert!(v["message"].as_str().unwrap().contains("?ask="));
    let big = format!(
        r#"{{"key":"ECHO","args":{{"message":"{}"}}}}"#,
        "x".repeat(10_000)
    );
    let (st, _) = s.post("/api/dispatch", &big, Some(TOKEN)).await;
    assert_eq!(st, 413);
    assert_eq!(s.receipts(), before, "no receipt for a refused call");

    let open = start_with(rows(10, false), None, server::DEFAULT_MAX_BODY).await;
    let (st, v) = open.post("/api/dispatch", r#"{"key":"NOW"}"#, None).await;
    assert_eq!(st, 401);
    assert!(v["message"].as_str().unwrap().contains("--token-env"));
    let (st, _) = open
        .post("/api/directory", r#"{"key":"X","type":"fn"}"#, None)
        .await;
    assert_eq!(st, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_four_counts_are_separate_predicates() {
    let s = start_with(rows(832, true), Some(TOKEN), server::DEFAULT_MAX_BODY).await;
    let (_, reg) = s.get("/api/dispatch?registry=1").await;
    let (_, map) = s.get("/api/dispatch?map=1").await;
    assert_eq!(reg["count"], 877);
    assert_eq!(map["total"], 879);
    assert_eq!(reg["counts"]["rows"]["count"], 892);
    assert_eq!(reg["counts"]["projected"]["count"], 832);
    let (_, list) = s
        .rpc(
            "/mcp",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await;
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 832);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_per_row_tools_list_is_the_surface_byte_for_byte() {
    let rs = rows(300, false);
    let s = start_with(rs.clone(), Some(TOKEN), server::DEFAULT_MAX_BODY).await;
    let resp = s
        .http
        .post(format!("{}/mcp", s.base))
        .bearer_auth(TOKEN)
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap();
    let text = resp.text().await.unwrap();
    let live = toolcost::catalogue::capture::parse(&text).unwrap();
    let local = Catalogue::from_rows("local", rs);
    assert_eq!(live.len(), local.tools.len());
    for (a, b) in live.iter().zip(&local.tools) {
        assert_eq!(a.raw(), b.raw());
    }
    // And the request a client builds from the live list is the per-row surface's, byte for byte.
    let live_cat = toolcost::catalogue::capture::catalogue("live".into(), "toolcost".into(), live);
    let client = Client::named("claude-cli").unwrap();
    let build = |c: &Catalogue| {
        SurfaceKind::PER_ROW_MCP
            .build(&Context {
                catalogue: c,
                client: &client,
                turn: "hi",
                endpoint: DEFAULT_ENDPOINT,
            })
            .request
            .wire()
    };
    assert_eq!(build(&live_cat), build(&local));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_row_shows_everywhere_at_once_and_sessions_hear_of_it() {
    let s = start(40).await;
    let (_, init) = {
        let r = s.http.post(format!("{}/mcp", s.base)).bearer_auth(TOKEN)
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)
            .send().await.unwrap();
        let sid = r
            .headers()
            .get("mcp-session-id")
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        (
            sid.clone(),
            serde_json::from_str::<Value>(&r.text().await.unwrap()).unwrap(),
        )
    };
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true);
    let sid = s
        .http
        .post(format!("{}/mcp", s.base))
        .bearer_auth(TOKEN)
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
        .send()
        .await
        .unwrap()
        .headers()
        .get("mcp-session-id")
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let mut events = s
        .http
        .get(format!("{}/mcp", s.base))
        .bearer_auth(TOKEN)
        .header("mcp-session-id", &sid)
        .send()
        .await
        .unwrap();
    assert_eq!(events.headers()["content-type"], "text/event-stream");

    let row = json!({"key": "DOC_PROBE", "type": "fn", "target": "fn:echo", "category": "docs",
                     "content": "# WHAT: Probe row created to time one capability insert\n# ARGS: message\n",
                     "input_schema": {"type": "object", "properties": {"message": {"type": "string"}}}});
    let (st, added) = s
        .post("/api/directory", &row.to_string(), Some(TOKEN))
        .await;
    assert_eq!(st, 201, "{added}");
    let chunk = tokio::time::timeout(std::time::Duration::from_secs(5), events.chunk())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(String::from_utf8_lossy(&chunk).contains("notifications/tools/list_changed"));

    let (_, c) = s.get("/api/dispatch?key=DOC_PROBE").await;
    assert_eq!(c["key"], "DOC_PROBE");
    let (_, ask) = s.get("/api/dispatch?ask=probe%20capability%20insert").await;
    assert_eq!(ask["best"]["key"], "DOC_PROBE");
    let (_, list) = s
        .rpc(
            "/mcp",
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        )
        .await;
    assert!(list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "DOC_PROBE"));
    let (_, inv) = s
        .post(
            "/api/dispatch",
            r#"{"key":"DOC_PROBE","args":{"message":"hi"}}"#,
            Some(TOKEN),
        )
        .await;
    let id = inv["proof"]["invocation_id"].as_str().unwrap().to_string();
    let (st, _) = s
        .post("/api/directory", &row.to_string(), Some(TOKEN))
        .await;
    assert_eq!(st, 409);

    let del = s
        .http
        .delete(format!("{}/api/directory/DOC_PROBE", s.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(del.status(), 200);
    let (st, _) = s.get("/api/dispatch?key=DOC_PROBE").await;
    assert_eq!(st, 404);
    let (_, r) = s.get(&format!("/api/dispatch?receipt={id}")).await;
    assert_eq!(r["key"], "DOC_PROBE", "the receipt outlives the row");
    let del = s
        .http
        .delete(format!("{}/api/directory/DOC_PROBE", s.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(del.status(), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_errors_and_calls() {
    let s = start_with(rows(30, false), Some(TOKEN), 4096).await;
    let before = s.receipts();
    let raw = |body: &str, token: Option<&str>| {
        let mut rb = s
            .http
            .post(format!("{}/mcp", s.base))
            .body(body.to_string());
        if let Some(t) = token {
            rb = rb.header("x-mcp-token", t);
        }
        async move {
            let r = rb.send().await.unwrap();
            let status = r.status().as_u16();
            (
                status,
                serde_json::from_str::<Value>(&r.text().await.unwrap()).unwrap_or(Value::Null),
            )
        }
    };
    let (st, v) = raw("{oops", Some(TOKEN)).await;
    assert_eq!((st, v["error"]["code"].as_i64()), (400, Some(-32700)));
    let (st, v) = raw(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, Some(TOKEN)).await;
    assert_eq!((st, v["error"]["code"].as_i64()), (400, Some(-32600)));
    let (st, v) = raw(
        r#"{"jsonrpc":"2.0","id":1,"method":"resources/list"}"#,
        Some(TOKEN),
    )
    .await;
    assert_eq!((st, v["error"]["code"].as_i64()), (200, Some(-32601)));
    let (st, v) = raw(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"NO_SUCH"}}"#,
        Some(TOKEN),
    )
    .await;
    assert_eq!((st, v["error"]["code"].as_i64()), (200, Some(-32602)));
    let (_, v) = raw(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ORDER_GET","arguments":{"order_id":1}}}"#, Some(TOKEN)).await;
    assert_eq!(v["error"]["code"], -32602);
    assert_eq!(v["error"]["data"]["pointer"], "/order_id");
    let (_, v) = raw(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}"#,
        Some(TOKEN),
    )
    .await;
    assert_eq!(v["error"]["code"], -32602);
    // Listing is open by default (`--token-required-for calls`); calling is not.
    let (st, v) = raw(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, None).await;
    assert_eq!(st, 200);
    assert_eq!(v["result"]["tools"].as_array().unwrap().len(), 30);
    let (st, v) = raw(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"NOW"}}"#,
        None,
    )
    .await;
    assert_eq!((st, v["error"]["code"].as_i64()), (401, Some(-32001)));
    let (st, _) = raw(
        &format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
            "x".repeat(8000)
        ),
        Some(TOKEN),
    )
    .await;
    assert_eq!(st, 413);
    assert_eq!(s.receipts(), before, "no receipt for a refused call");

    let (_, v) = s.rpc("/mcp", json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "ECHO", "arguments": {"message": "hi"}}})).await;
    assert_eq!(v["result"]["isError"], false);
    assert_eq!(
        v["result"]["structuredContent"]["result"],
        json!({"message": "hi"})
    );
    assert_eq!(s.receipts(), before + 1);

    // The small surface: search, contract, dispatch, receipt.
    let (_, found) = s.rpc("/mcp/small", json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_directory", "arguments": {"query": "add a list of numbers"}}})).await;
    assert_eq!(
        found["result"]["structuredContent"]["candidates"][0]["key"],
        "SUM"
    );
    let (_, c) = s.rpc("/mcp/small", json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read_contract", "arguments": {"key": "SUM"}}})).await;
    assert_eq!(c["result"]["structuredContent"]["runner"], "fn");
    let (_, d) = s.rpc("/mcp/small", json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "dispatch", "arguments": {"key": "SUM", "body": {"numbers": [2, 3]}}}})).await;
    assert_eq!(d["result"]["structuredContent"]["result"]["total"], 5.0);
    let rid = d["result"]["structuredContent"]["receipt"]
        .as_str()
        .unwrap();
    let (_, r) = s.rpc("/mcp/small", json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "read_receipt", "arguments": {"id": rid}}})).await;
    assert_eq!(r["result"]["structuredContent"]["key"], "SUM");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_mode_runs_programs_against_the_server() {
    let s = start(40).await;
    let before = s.receipts();
    let exec = |code: &str| json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "execute", "arguments": {"code": code}}});
    let (_, listed) = s
        .rpc(
            "/mcp/code",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await;
    let tools = listed["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0]["name"], "execute");

    // Search, read a contract, then a loop of dispatches in one call; each leaves a receipt.
    let program = r#"
        const [best] = await search("add a list of numbers");
        const c = await contract(best.key);
        let total = 0;
        for (let i = 1; i <= 10; i++) total += (await dispatch(best.key, { numbers: [i] })).result.total;
        console.log(best.key, Object.keys(c.schema.properties).join(","), total);
    "#;
    let (_, v) = s.rpc("/mcp/code", exec(program)).await;
    assert_eq!(v["result"]["isError"], false, "{v}");
    assert_eq!(v["result"]["content"][0]["text"], "SUM numbers 55");
    assert_eq!(v["result"]["structuredContent"]["api_calls"], 12);
    assert_eq!(s.receipts(), before + 10);

    // A refused dispatch throws inside the program; uncaught, it is a tool error.
    let (_, v) = s
        .rpc(
            "/mcp/code",
            exec("await dispatch('SUM', { numbers: 'x' });"),
        )
        .await;
    assert_eq!(v["result"]["isError"], true);
    let text = v["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("/numbers"), "{text}");
    let (_, v) = s
        .rpc(
            "/mcp/code",
            exec("console.log('partial'); throw new Error('boom');"),
        )
        .await;
    assert_eq!(v["result"]["isError"], true);
    assert_eq!(v["result"]["content"][0]["text"], "partial\nError: boom");
    // No filesystem, no network; an endless loop is stopped.
    let (_, v) = s
        .rpc(
            "/mcp/code",
            exec("const fs = await import('fs'); fs.readFileSync('/etc/passwd');"),
        )
        .await;
    assert_eq!(v["result"]["isError"], true);
    let (_, v) = s.rpc("/mcp/code", exec("while (true) {}")).await;
    assert_eq!(v["result"]["isError"], true);
    assert!(v["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("time limit"));
    assert_eq!(s.receipts(), before + 10, "refused calls leave no receipt");

    // Protocol errors stay protocol errors.
    let (_, v) = s
        .rpc("/mcp/code", json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "execute", "arguments": {}}}))
        .await;
    assert_eq!(v["error"]["code"], -32602);
    let (_, v) = s
        .rpc("/mcp/code", json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "SUM", "arguments": {}}}))
        .await;
    assert_eq!(v["error"]["code"], -32602);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_programs_queue_for_sandbox_slots_and_all_finish() {
    let s = Arc::new(start(40).await);
    let before = s.receipts();
    let slots = s.state.sandboxes.available_permits();
    let programs = slots * 3;
    let mut handles = Vec::new();
    for p in 0..programs {
        let s = s.clone();
        handles.push(tokio::spawn(async move {
            let code = format!(
                "let t = 0; for (let i = 0; i < 20; i++) t += (await dispatch('SUM', {{numbers: [i, {p}]}})).result.total; console.log(t);"
            );
            s.rpc("/mcp/code", json!({"jsonrpc": "2.0", "id": p, "method": "tools/call", "params": {"name": "execute", "arguments": {"code": code}}}))
                .await
                .1
        }));
    }
    for (p, h) in handles.into_iter().enumerate() {
        let v = h.await.unwrap();
        assert_eq!(v["result"]["isError"], false, "{v}");
        let want = (0..20).sum::<usize>() + 20 * p;
        assert_eq!(v["result"]["content"][0]["text"], want.to_string());
    }
    assert_eq!(s.receipts(), before + programs as i64 * 20);
    assert_eq!(
        s.state.sandboxes.available_permits(),
        slots,
        "every slot is returned"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_surface_bytes_do_not_change_with_n() {
    let mut texts = Vec::new();
    for n in [10, 2000] {
        let s = start(n).await;
        let r = s
            .http
            .post(format!("{}/mcp/small", s.base))
            .bearer_auth(TOKEN)
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
            .send()
            .await
            .unwrap();
        texts.push(r.text().await.unwrap());
    }
    assert_eq!(texts[0], texts[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_invokes_leave_one_receipt_each() {
    // TOOLCOST_FULL=1 runs the issue's 10,000 at concurrency 64; the default run does 1,000.
    let total: usize = if std::env::var_os("TOOLCOST_FULL").is_some() {
        10_000
    } else {
        1_000
    };
    let s = Arc::new(start(50).await);
    let before = s.receipts();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..64 {
        let (s, next) = (s.clone(), next.clone());
        workers.push(tokio::spawn(async move {
            let mut ok = 0;
            while next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < total {
                let (st, v) = s
                    .post(
                        "/api/dispatch",
                        r#"{"key":"ECHO","args":{"message":"load"}}"#,
                        Some(TOKEN),
                    )
                    .await;
                assert_eq!(st, 200, "{v}");
                ok += 1;
            }
            ok
        }));
    }
    let mut done = 0;
    for w in workers {
        done += w.await.unwrap();
    }
    assert_eq!(done, total);
    assert_eq!(s.receipts() - before, total as i64);
}

#[test]
fn stdio_server_weighs_like_the_projection() {
    let out = assert_cmd::Command::cargo_bin("toolcost")
        .unwrap()
        .args([
            "weigh",
            "--json",
            "--",
            env!("CARGO_BIN_EXE_toolcost"),
            "serve",
            "--stdio",
            "--rows",
            "60",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tools"].as_array().unwrap().len(), 60);
    assert_eq!(
        v["total_bytes"],
        Catalogue::from_rows("x", rows(60, false)).definition_bytes()
    );
    assert_eq!(v["server"], "toolcost");
}

/// The server `serve` starts (rows handed over by value) serves what its store's table holds,
/// even where writing a schema and reading it back does not give the same number.
#[test]
fn the_first_snapshot_is_the_table_as_read_back() {
    let mut rows = rows(5, false);
    rows[0].input_schema = Some(
        json!({
            "type": "object",
            "properties": {"x": {"type": "number", "maximum": 99.92497928518063}}
        })
        .into(),
    );
    // Numbers at the edges of what JSON and f64 hold, and text that JSON escapes.
    rows[1].input_schema = Some(
        json!({
            "type": "object",
            "properties": {"y": {"type": "number", "enum": [
                5e-324, 1.7976931348623157e308, -0.0, 0.1, 1e21, 2.5e-8, 0.30000000000000004,
                18446744073709551615u64, -9223372036854775808i64, 123456789012345678u64
            ], "description": "tab\tquote\"nul\u{0}é😀\u{2028}"}}
        })
        .into(),
    );
    rows[2].content = "# WHAT: line\u{0}with a NUL and \u{feff} a BOM".into();
    let state = server::state_from(
        server::Options {
            rows: Some(rows),
            db: None,
            token: None,
            allowlist: vec![],
            max_body: server::DEFAULT_MAX_BODY,
        },
        server::Limits::default(),
    )
    .unwrap();
    let table = state.table_rows().unwrap();
    assert_eq!(state.snapshot().rows(), table.as_slice());
    // The projections too, as bytes.
    assert_eq!(state.snapshot().catalogue.tools, Catalogue::project(&table));
}

/// A tool accepts what its stored schema accepts, not what the strict form it is shown in
/// can say: an `anyOf` of a string and an integer takes both at invoke, and the contract says
/// where its strict form keeps only one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invoke_checks_the_stored_schema_and_the_contract_names_its_changes() {
    let mut rs = rows(20, false);
    let echo = rs.iter_mut().find(|r| r.key == "ECHO").expect("ECHO row");
    echo.input_schema = Some(
        json!({"type": "object", "properties": {"message": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
               "required": ["message"]})
        .into(),
    );
    let s = start_with(rs, Some(TOKEN), server::DEFAULT_MAX_BODY).await;
    for (args, status) in [
        (r#"{"message":"hi"}"#, 200),
        (r#"{"message":7}"#, 200),
        (r#"{"message":true}"#, 422),
        (r#"{}"#, 422),
    ] {
        let (st, v) = s
            .post(
                "/api/dispatch",
                &format!(r#"{{"key":"ECHO","args":{args}}}"#),
                Some(TOKEN),
            )
            .await;
        assert_eq!(st, status, "{args}: {v}");
    }
    let (_, c) = s.get("/api/dispatch?key=ECHO").await;
    assert_eq!(c["schema"]["properties"]["message"]["type"], "string");
    assert_eq!(
        c["schema_changes"][0]["pointer"], "/properties/message/anyOf",
        "{c}"
    );
    assert_eq!(c["schema_changes"][0]["effect"], "narrows");
    // A row whose schema is already strict shows no changes.
    let (_, plain) = s.get("/api/dispatch?key=EMAIL_SEND").await;
    assert!(plain.get("schema_changes").is_none(), "{plain}");
}

/// Every resolver `search-eval` scores answers `?ask=` by name with its own ranking (the
/// semantic ones on a server started without the model say how to install it); an unknown
/// name lists them all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scored_resolver_answers_by_name() {
    let s = start(856).await;
    for name in toolcost::resolve::Method::NAMES {
        let m = toolcost::resolve::Method::parse(name).unwrap();
        let (st, v) = s
            .get(&format!(
                "/api/dispatch?ask=send%20an%20email%20to%20a%20customer&resolver={name}"
            ))
            .await;
        if m.semantic() {
            assert_eq!(st, 400, "{name}: {v}");
            assert!(v.to_string().contains("pip install"), "{name}: {v}");
            continue;
        }
        assert_eq!(st, 200, "{name}: {v}");
        assert_eq!(v["resolver"], name);
        let keys: Vec<&str> = v["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["key"].as_str().unwrap())
            .collect();
        assert!(
            !keys.is_empty() && keys.len() <= m.depth(),
            "{name}: {keys:?}"
        );
        // The regex search takes the first matches in catalogue order, not the best.
        if m != toolcost::resolve::Method::Regex {
            assert!(keys.contains(&"EMAIL_SEND"), "{name}: {keys:?}");
        }
    }
    let (st, v) = s.get("/api/dispatch?ask=x&resolver=nonesuch").await;
    assert_eq!(st, 400);
    assert!(v.to_string().contains("bm25-textbook"), "{v}");

    // The small surface's search_directory and code mode's search() take the same names.
    let dir = |resolver: &str| json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_directory", "arguments": {"query": "send an email to a customer", "resolver": resolver}}});
    let keys = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|c| c["key"].as_str().unwrap().to_string())
            .collect()
    };
    let mut lists = Vec::new();
    for name in ["bm25-textbook", "substring", "bm25f"] {
        let (_, v) = s.rpc("/mcp/small", dir(name)).await;
        assert_eq!(v["result"]["isError"], false, "{name}: {v}");
        let found = keys(&v["result"]["structuredContent"]["candidates"]);
        // The same ranking `?ask=` gives with that resolver.
        let (_, asked) = s
            .get(&format!(
                "/api/dispatch?ask=send%20an%20email%20to%20a%20customer&resolver={name}"
            ))
            .await;
        assert_eq!(found, keys(&asked["candidates"]), "{name}");
        lists.push(found);
    }
    // And the resolvers rank differently, so the name is not ignored.
    assert!(lists[0] != lists[1] || lists[1] != lists[2], "{lists:?}");
    let (_, v) = s.rpc("/mcp/small", dir("nonesuch")).await;
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert!(v.to_string().contains("bm25-textbook"), "{v}");
    let (_, v) = s.rpc("/mcp/small", dir("dense")).await;
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert!(v.to_string().contains("pip install"), "{v}");
    let exec = |code: &str| json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "execute", "arguments": {"code": code}}});
    let (_, v) = s
        .rpc(
            "/mcp/code",
            exec("console.log((await search('send an email to a customer', 5, 'bm25-textbook')).map(r => r.key).join(','));"),
        )
        .await;
    assert_eq!(v["result"]["isError"], false, "{v}");
    assert!(
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("EMAIL_SEND"),
        "{v}"
    );
    let (_, v) = s
        .rpc("/mcp/code", exec("await search('x', 5, 'nonesuch');"))
        .await;
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert!(v.to_string().contains("unknown resolver"), "{v}");
}
