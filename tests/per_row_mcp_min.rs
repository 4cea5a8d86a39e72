//! The seventh surface, `per-row-mcp-min`, everywhere a surface appears: measure, the
//! reference server's `/mcp/min`, and whole tasks through the driver.

use serde_json::{json, Value};
use toolcost::billing::billed_input;
use toolcost::catalogue::{generate::Generator, profile::Profile, Catalogue, Row};
use toolcost::client::Client;
use toolcost::driver::{self, scenario::Scenario};
use toolcost::server;
use toolcost::surface::per_row_mcp_min::minimise;
use toolcost::surface::{Context, SurfaceKind, DEFAULT_ENDPOINT};
use toolcost::tokens::Tokenizer;

fn rows(n: usize) -> Vec<Row> {
    Generator::new(Profile::named("seed-2026-07").unwrap(), n, 1, false).collect()
}

fn ctx<'a>(cat: &'a Catalogue, client: &'a Client) -> Context<'a> {
    Context {
        catalogue: cat,
        client,
        turn: "what time is it",
        endpoint: DEFAULT_ENDPOINT,
    }
}

#[test]
fn trimmed_definitions_cost_less_and_keep_every_tool_and_argument() {
    let cat = Catalogue::from_rows("t", rows(300));
    for client in ["claude-cli", "openai-agent"] {
        let client = Client::named(client).unwrap();
        let full = SurfaceKind::PER_ROW_MCP.build(&ctx(&cat, &client));
        let min = SurfaceKind::PER_ROW_MCP_MIN.build(&ctx(&cat, &client));
        assert_eq!(min.definitions_in_context, full.definitions_in_context);
        assert_eq!(min.request.tools().len(), full.request.tools().len());
        assert!(min.request.wire_bytes() < full.request.wire_bytes());
        let card = toolcost::pricing::PriceCard::named(&client.model).unwrap();
        let bill = |b: &toolcost::surface::Built| {
            billed_input(&b.request, card.render_model(), Tokenizer::O200k).input_tokens
        };
        assert!(bill(&min) < bill(&full), "{}", client.name);
    }
    for t in &cat.tools {
        let m = minimise(t);
        assert_eq!(m.name, t.name);
        assert_eq!(m.required(), t.required());
        let props = |s: Value| -> Vec<String> {
            s["properties"]
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default()
        };
        assert_eq!(props(m.input_schema()), props(t.input_schema()));
        assert!(t
            .description()
            .starts_with(m.description().trim_end_matches('.')));
    }
}

#[test]
fn the_registry_names_every_surface_once() {
    let names = SurfaceKind::names();
    let mut seen = std::collections::HashSet::new();
    for n in &names {
        assert!(seen.insert(*n), "{n} twice");
        assert_eq!(SurfaceKind::parse(n).unwrap().name(), *n);
    }
    assert!(names.contains(&"per-row-mcp-min"));
    assert!(SurfaceKind::all().contains(&SurfaceKind::PER_ROW_MCP_MIN));
    let colours: std::collections::HashSet<[u8; 3]> = toolcost::surface::REGISTRY
        .iter()
        .map(|s| s.colour())
        .collect();
    assert_eq!(colours.len(), names.len(), "one colour per surface");
    assert!(!colours.contains(&[0, 0, 0]), "black is for unknown names");
    let paths: Vec<&str> = server::endpoints().iter().map(|e| e.path).collect();
    assert_eq!(paths, ["/mcp", "/mcp/small", "/mcp/code", "/mcp/min"]);
    assert!(SurfaceKind::parse("no-such").is_err());
}

async fn rpc(http: &reqwest::Client, url: &str, msg: Value) -> Value {
    let text = http
        .post(url)
        .bearer_auth("t")
        .body(msg.to_string())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_lists_and_calls_the_trimmed_tools_at_mcp_min() {
    let rs = rows(120);
    let state = server::state(&server::Options {
        rows: Some(rs.clone()),
        db: None,
        token: Some("t".into()),
        allowlist: vec![],
        max_body: server::DEFAULT_MAX_BODY,
    })
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server::run(
        listener,
        state,
        server::DEFAULT_MAX_BODY,
        async move {
            let _ = rx.await;
        },
    ));
    let http = reqwest::Client::new();
    let url = format!("{base}/mcp/min");
    let init = rpc(&http, &url, json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}})).await;
    assert_eq!(init["result"]["serverInfo"]["name"], "toolcost-min");
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true);
    let text = http
        .post(&url)
        .bearer_auth("t")
        .body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let live = toolcost::catalogue::capture::parse(&text).unwrap();
    let local = Catalogue::from_rows("local", rs);
    assert_eq!(live.len(), local.tools.len());
    for (a, b) in live.iter().zip(&local.tools) {
        assert_eq!(a.raw(), minimise(b).raw(), "byte for byte");
    }
    let call = rpc(&http, &url, json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "NOW", "arguments": {}}})).await;
    assert_eq!(call["result"]["isError"], false, "{call}");
    assert!(call["result"]["structuredContent"]["receipt"].is_string());
    let _ = tx.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_task_plays_to_completion_on_the_trimmed_surface() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.toml");
    std::fs::write(
        &p,
        r#"name = "min"
[catalogue]
rows = [60]
[run]
surfaces = ["per-row-mcp", "per-row-mcp-min"]
tasks = ["turn", "now", "email", "aig", "orders"]
orders = 4
"#,
    )
    .unwrap();
    let s = Scenario::read(&p).unwrap();
    let results = driver::run(&s, &|_| {}).await.unwrap();
    assert_eq!(results.len(), 10);
    for r in results.iter().filter(|r| r.surface == "per-row-mcp-min") {
        assert!(r.success, "{r:?}");
        let full = results
            .iter()
            .find(|f| f.surface == "per-row-mcp" && f.task == r.task)
            .unwrap();
        assert_eq!(r.rounds, full.rounds, "same moves as per-row: {}", r.task);
        assert_eq!(r.answer, full.answer);
        if r.task != "turn" {
            assert!(r.input_tokens < full.input_tokens, "{}", r.task);
        }
    }
}

#[test]
fn the_surface_options_name_every_surface() {
    for cmd in ["measure", "sweep"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
            .args([cmd, "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8(out.stdout).unwrap();
        for name in SurfaceKind::names() {
            assert!(help.contains(name), "`{cmd} --help` does not name {name}");
        }
    }
}
