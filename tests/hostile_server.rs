//! Issue 14, the server half: hostile or careless peers cannot hang, fool or corrupt the
//! reference server, its store or the schema normaliser. Every test binds 127.0.0.1:0; waits
//! are bounded and only generous upper bounds are asserted.

mod common;
#[path = "support/upstream.rs"]
mod upstream;

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};
use toolcost::catalogue::{generate::Generator, profile::Profile, Catalogue, Row, Runner};
use toolcost::schema::{self, normalise, normalise_checked, validate};
use toolcost::server::{self, Limits};

const TOKEN: &str = "hostile-token";

type Server = common::InProcess;

fn rows(n: usize) -> Vec<Row> {
    Generator::new(Profile::named("seed-2026-07").unwrap(), n, 1, false).collect()
}

fn http_row(key: &str, target: &str) -> Row {
    Row {
        key: key.into(),
        runner: Runner::Http,
        target: Some(target.into()),
        auth: None,
        content: format!("# WHAT: {key}\n"),
        category: Some("test".into()),
        planner_rank: 100,
        enabled: true,
        planner_visible: true,
        input_schema: Some(
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]})
                .into(),
        ),
    }
}

async fn start_full(
    rows: Vec<Row>,
    allowlist: Vec<String>,
    db: Option<std::path::PathBuf>,
    max_body: usize,
    limits: Limits,
) -> Server {
    let opts = server::Options {
        rows: Some(rows),
        db,
        token: Some(TOKEN.into()),
        allowlist,
        max_body,
    };
    let state = server::state_with(&opts, limits).unwrap();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    common::serve_in_process(state, max_body, http).await
}

/// A server on the SQLite store `db`, with the default limits.
async fn start_on(rows: Vec<Row>, db: &std::path::Path) -> Server {
    start_full(
        rows,
        vec![],
        Some(db.to_path_buf()),
        server::DEFAULT_MAX_BODY,
        Limits::default(),
    )
    .await
}

async fn start(rows: Vec<Row>, allowlist: Vec<String>, limits: Limits) -> Server {
    start_full(rows, allowlist, None, server::DEFAULT_MAX_BODY, limits).await
}

impl Server {
    async fn send(&self, method: &str, path: &str, body: Option<String>) -> (u16, String, Value) {
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut rb = self
            .http
            .request(m, format!("{}{path}", self.base))
            .bearer_auth(TOKEN);
        if let Some(b) = body {
            rb = rb.header("content-type", "application/json").body(b);
        }
        let r = rb.send().await.unwrap();
        let status = r.status().as_u16();
        let ctype = r
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        let text = r.text().await.unwrap();
        (
            status,
            ctype,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let (s, _, v) = self.send("POST", path, Some(body.to_string())).await;
        (s, v)
    }

    async fn invoke(&self, key: &str, args: Value) -> (u16, Value) {
        self.post("/api/dispatch", json!({"key": key, "args": args}))
            .await
    }

    async fn program(&self, code: &str) -> Value {
        let (_, v) = self
            .post(
                "/mcp/code",
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "execute", "arguments": {"code": code}}}),
            )
            .await;
        v["result"].clone()
    }

    fn receipts(&self) -> i64 {
        self.state.receipt_count().unwrap()
    }
}

/// A tiny upstream on 127.0.0.1:0 answering every request with `route`.
async fn upstream(
    route: impl Fn(&str) -> (u16, Vec<(String, String)>, String) + Send + Sync + 'static,
) -> std::net::SocketAddr {
    use axum::response::IntoResponse;
    let route = Arc::new(route);
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri| {
        let route = route.clone();
        async move {
            let (status, headers, body) = route(uri.path());
            let mut resp =
                (axum::http::StatusCode::from_u16(status).unwrap(), body).into_response();
            for (k, v) in headers {
                resp.headers_mut().insert(
                    axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                    v.parse().unwrap(),
                );
            }
            resp
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// An upstream that accepts connections and never answers.
async fn silent_upstream() -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    addr
}

/// 40 definitions, each referring twice to the next: 2^40 nodes if expanded without limit.
fn ref_bomb(defs: usize) -> Value {
    let mut d = Map::new();
    for i in 0..defs {
        let next = if i + 1 < defs {
            json!({"$ref": format!("#/$defs/d{}", i + 1)})
        } else {
            json!({"type": "string"})
        };
        d.insert(
            format!("d{i}"),
            json!({"type": "object", "properties": {"a": next.clone(), "b": next}}),
        );
    }
    json!({"type": "object", "$defs": d, "properties": {"root": {"$ref": "#/$defs/d0"}}})
}

fn size(v: &Value) -> usize {
    serde_json::to_vec(v).unwrap().len()
}

// ---- 1. schema budget -------------------------------------------------------------------

#[test]
fn a_ref_bomb_normalises_within_a_budget_and_checked_mode_names_the_ref() {
    let bomb = ref_bomb(40);
    assert!(size(&bomb) < 5_000);
    let started = Instant::now();
    let n = normalise(&bomb);
    assert!(
        size(&n) < 8 * schema::MAX_EXPANDED_BYTES,
        "{} bytes",
        size(&n)
    );
    assert!(validate(&n).is_empty());
    assert_eq!(normalise(&n), n, "still a fixed point");
    let e = normalise_checked(&bomb).unwrap_err();
    assert!(e.pointer.ends_with("/$ref"), "{e}");
    let site = e.pointer.trim_end_matches("/$ref");
    assert!(bomb.pointer(site).unwrap().get("$ref").is_some(), "{e}");
    assert!(e.message.contains("bytes"), "{e}");
    // A long chain of refs is cut too.
    let mut chain = Map::new();
    for i in 0..200 {
        chain.insert(
            format!("c{i}"),
            json!({"$ref": format!("#/$defs/c{}", i + 1)}),
        );
    }
    chain.insert("c200".into(), json!({"type": "string"}));
    let chain =
        json!({"type": "object", "$defs": chain, "properties": {"x": {"$ref": "#/$defs/c0"}}});
    assert!(normalise_checked(&chain)
        .unwrap_err()
        .message
        .contains("nest"));
    assert!(validate(&normalise(&chain)).is_empty());
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[test]
fn measure_weigh_and_lint_survive_a_ref_bomb() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bomb.tools.json");
    let tools =
        json!({"tools": [{"name": "bomb", "description": "d", "inputSchema": ref_bomb(40)}]});
    std::fs::write(&file, tools.to_string()).unwrap();
    // measure and weigh --file load the catalogue through the same normaliser.
    let cat = Catalogue::load(&file).unwrap();
    assert_eq!(cat.tools.len(), 1);
    let out = dir.path().join("fixed.json");
    let assert = assert_cmd::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args([
            "lint",
            file.to_str().unwrap(),
            "--fix",
            "-o",
            out.to_str().unwrap(),
        ])
        .timeout(Duration::from_secs(120))
        .assert();
    let code = assert.get_output().status.code();
    assert!(matches!(code, Some(0 | 1)), "{:?}", assert.get_output());
    let written = std::fs::metadata(&out).unwrap().len();
    // The expansion budget bounds the compact schema at about 1 MiB; pretty-printed, its
    // 30-odd levels of indentation multiply that about 17 times. Unbounded, it is 2^40 nodes.
    assert!(written < 24 << 20, "lint --fix wrote {written} bytes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_with_a_ref_bomb_is_refused_before_it_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("store.sqlite");
    let s = start_on(rows(10), &db).await;
    let mut row = http_row("BOMB", "GET https://example.com/x");
    row.input_schema = Some(ref_bomb(40).into());
    let posted = tokio::time::timeout(
        Duration::from_secs(60),
        s.post("/api/directory", serde_json::to_value(&row).unwrap()),
    )
    .await
    .expect("the server answers");
    assert_eq!(posted.0, 422, "{}", posted.1);
    assert_eq!(posted.1["error"], "schema_too_large");
    let ptr = posted.1["pointer"].as_str().unwrap();
    assert!(
        ptr.starts_with("/input_schema/") && ptr.ends_with("/$ref"),
        "{ptr}"
    );
    assert!(s
        .state
        .table_rows()
        .unwrap()
        .iter()
        .all(|r| r.key != "BOMB"));
    drop(s);
    // Restarting on the same file is not wedged.
    let again = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::task::spawn_blocking(move || {
            // The stopped server lets its claim on the file go when its last task ends.
            let mut tries = 0;
            loop {
                let got = server::state(&server::Options {
                    rows: None,
                    db: Some(db.clone()),
                    token: None,
                    allowlist: vec![],
                    max_body: server::DEFAULT_MAX_BODY,
                })
                .map(|st| st.snapshot().rows().len());
                match got {
                    Err(e) if tries < 100 && e.to_string().contains("another toolcost server") => {
                        tries += 1;
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    other => break other,
                }
            }
        }),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(again.unwrap(), 10);
}

#[test]
fn every_real_capture_normalises_within_the_budget() {
    for (name, path) in common::real_mcp_captures() {
        let cat = Catalogue::load(&path).unwrap();
        for t in &cat.tools {
            let s = t.value().get("inputSchema").cloned().unwrap_or(json!({}));
            assert!(
                normalise_checked(&s).is_ok(),
                "{name}/{}: {:?}",
                t.name,
                normalise_checked(&s).err()
            );
        }
    }
}

// Generated schemas with `$defs` and `$ref`s between them (cycles, chains, fan-out).
fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"type": "string"})),
        Just(json!({"type": "integer", "description": "n"})),
        Just(json!({"enum": ["a", "b"]})),
        Just(json!({"anyOf": [{"type": "null"}, {"type": "number"}]})),
        Just(json!({"description": "no type"})),
    ]
}

fn node(defs: usize) -> impl Strategy<Value = Value> {
    let reference = (0..defs).prop_map(|i| json!({"$ref": format!("#/$defs/d{i}")}));
    let leafy = prop_oneof![3 => leaf(), 2 => reference, 1 => Just(json!({"$ref": "#"})), 1 => Just(json!({"$ref": "#/$defs/missing"}))];
    leafy.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            proptest::collection::btree_map("[a-z]{1,3}", inner.clone(), 0..4).prop_map(|m| {
                let req: Vec<&String> = m.keys().take(1).collect();
                json!({"type": "object", "properties": m, "required": req})
            }),
            inner
                .clone()
                .prop_map(|i| json!({"type": "array", "items": i})),
            proptest::collection::vec(inner.clone(), 1..3).prop_map(|v| json!({"allOf": v})),
            proptest::collection::vec(inner, 1..3).prop_map(|v| json!({"oneOf": v})),
        ]
    })
}

fn schema_with_refs() -> impl Strategy<Value = Value> {
    (1usize..8).prop_flat_map(|n| {
        (
            proptest::collection::vec(node(n), n),
            proptest::collection::btree_map("[a-z]{1,4}", node(n), 0..5),
            any::<bool>(),
        )
            .prop_map(move |(defs, props, fan_out)| {
                let mut d = Map::new();
                for (i, def) in defs.into_iter().enumerate() {
                    // Fan-out chains: each definition refers twice to the next.
                    let def = if fan_out && i + 1 < n {
                        let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
                        json!({"type": "object", "properties": {"x": def, "l": next.clone(), "r": next}})
                    } else {
                        def
                    };
                    d.insert(format!("d{i}"), def);
                }
                json!({"type": "object", "$defs": d, "properties": props})
            })
    })
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-z$#/]{0,6}".prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 64, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::from),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("type".to_string()),
                    Just("properties".to_string()),
                    Just("required".to_string()),
                    Just("items".to_string()),
                    Just("$ref".to_string()),
                    Just("$defs".to_string()),
                    Just("anyOf".to_string()),
                    Just("allOf".to_string()),
                    "[a-z]{1,3}"
                ],
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn normalising_generated_schemas_with_refs_is_bounded_valid_and_idempotent(s in schema_with_refs()) {
        let n = normalise(&s);
        prop_assert!(validate(&n).is_empty(), "{:?}", validate(&n));
        prop_assert_eq!(normalise(&n), n.clone());
        prop_assert!(size(&n) <= 4 * (size(&s) + schema::MAX_EXPANDED_BYTES));
        match normalise_checked(&s) {
            Ok(c) => prop_assert_eq!(c, n),
            Err(e) => {
                let site = e.pointer.trim_end_matches("/$ref");
                prop_assert!(s.pointer(site).is_some(), "{} is not in the schema", e.pointer);
            }
        }
    }

    #[test]
    fn the_validator_names_every_ref_it_can_reach(s in schema_with_refs()) {
        let v = validate(&s);
        let refs_in_props = s["properties"].as_object().unwrap().iter()
            .filter(|(_, p)| p.get("$ref").is_some())
            .count();
        let named = v.iter().filter(|x| x.kind == schema::ViolationKind::Ref
            && x.pointer.starts_with("/properties/") && x.pointer.matches('/').count() == 3).count();
        prop_assert_eq!(named, refs_in_props);
        for x in &v {
            let at = x.pointer.trim_end_matches("/$ref");
            prop_assert!(at.is_empty() || s.pointer(at).is_some()
                || x.kind != schema::ViolationKind::Ref, "{}", x.pointer);
        }
    }

    #[test]
    fn any_json_normalises_and_validates_without_panicking(v in any_json()) {
        let _ = validate(&v);
        let n = normalise(&v);
        prop_assert!(validate(&n).is_empty());
        prop_assert_eq!(normalise(&n), n);
    }
}

// ---- 2, 3, 4, 5. the http runner --------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_are_followed_only_to_allowlisted_hops() {
    let secret = upstream(|_| (200, vec![], "SECRET-BODY".into())).await;
    let to = format!("http://{secret}/leak");
    let allowed = upstream(move |path| match path {
        "/away" => (302, vec![("location".into(), to.clone())], String::new()),
        "/home" => (
            302,
            vec![("location".into(), "/fine".into())],
            String::new(),
        ),
        _ => (200, vec![], "{\"fine\":true}".into()),
    })
    .await;
    let mut rs = rows(5);
    rs.push(http_row("GO", &format!("GET http://{allowed}/$1")));
    let s = start(rs, vec![allowed.to_string()], Limits::default()).await;
    let (st, v) = s.invoke("GO", json!({"id": "away"})).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["ok"], false, "{v}");
    let text = v.to_string();
    assert!(!text.contains("SECRET-BODY"), "{text}");
    assert!(text.contains("not on this server's allowlist"), "{text}");
    let (_, v) = s.invoke("GO", json!({"id": "home"})).await;
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["result"]["body"]["fine"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn argument_values_are_percent_encoded_into_the_url() {
    let mut rs = rows(5);
    rs.push(http_row(
        "THING",
        "GET https://api.example.com/things/$1?v=1",
    ));
    let s = start(rs, vec![], Limits::default()).await;
    let (_, v) = s
        .post(
            "/api/dispatch",
            json!({"key": "THING", "args": {"id": "../secret?x=#"}, "shape": true}),
        )
        .await;
    assert_eq!(
        v["result"]["shape"]["url"], "https://api.example.com/things/..%2Fsecret%3Fx%3D%23?v=1",
        "{v}"
    );
    for climb in ["..", ".", "%2e%2E"] {
        let (_, v) = s
            .post(
                "/api/dispatch",
                json!({"key": "THING", "args": {"id": climb}, "shape": true}),
            )
            .await;
        let url = v["result"]["shape"]["url"].as_str().unwrap_or("");
        let parsed = reqwest::Url::parse(url).map(|u| u.path().to_string());
        assert!(
            v["ok"] == false || parsed.as_deref() != Ok("/") && parsed.as_deref() != Ok("/things/"),
            "{climb}: {v}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowlist_entries_match_host_and_port() {
    let up = upstream(|_| (200, vec![], "{\"hi\":1}".into())).await;
    let other = upstream(|_| (200, vec![], "{\"other\":1}".into())).await;
    let mut rs = rows(5);
    rs.push(http_row("UP", &format!("GET http://{up}/$1")));
    rs.push(http_row("OTHER", &format!("GET http://{other}/$1")));
    // A bare host allows only the scheme's default port.
    let s = start(rs.clone(), vec!["127.0.0.1".into()], Limits::default()).await;
    let (st, v) = s.invoke("UP", json!({"id": "x"})).await;
    assert_eq!(st, 403, "{v}");
    assert!(
        v["message"].as_str().unwrap().contains(&up.to_string()),
        "{v}"
    );
    let s = start(rs, vec![up.to_string()], Limits::default()).await;
    let (_, v) = s.invoke("UP", json!({"id": "x"})).await;
    assert_eq!(v["result"]["body"]["hi"], 1, "{v}");
    let (st, _) = s.invoke("OTHER", json!({"id": "x"})).await;
    assert_eq!(st, 403);
    let help = assert_cmd::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("host:port") && help.contains("127.0.0.1:8080"),
        "{help}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_or_huge_upstream_is_cut_off() {
    let slow = silent_upstream().await;
    let huge = upstream(|_| (200, vec![], "x".repeat(3 << 20))).await;
    let mut rs = rows(5);
    rs.push(http_row("SLOW", &format!("GET http://{slow}/$1")));
    rs.push(http_row("HUGE", &format!("GET http://{huge}/$1")));
    let limits = Limits {
        read_timeout: Duration::from_secs(1),
        total_timeout: Duration::from_secs(2),
        response_bytes: 1 << 20,
        ..Limits::default()
    };
    let s = start(rs, vec![slow.to_string(), huge.to_string()], limits).await;
    let t = Instant::now();
    let (_, v) = tokio::time::timeout(
        Duration::from_secs(30),
        s.invoke("SLOW", json!({"id": "x"})),
    )
    .await
    .expect("the outbound call times out");
    assert_eq!(v["ok"], false, "{v}");
    assert!(v.to_string().contains("timed out"), "{v}");
    assert!(t.elapsed() < Duration::from_secs(25));
    let (_, v) = s.invoke("HUGE", json!({"id": "x"})).await;
    assert_eq!(v["ok"], false, "{v}");
    assert!(v.to_string().contains("larger than 1048576 bytes"), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_deadline_covers_its_dispatches() {
    let slow = silent_upstream().await;
    let mut rs = rows(5);
    rs.push(http_row("SLOW", &format!("GET http://{slow}/$1")));
    // The outbound timeouts are longer than the program's 5 s on purpose.
    let s = start(rs, vec![slow.to_string()], Limits::default()).await;
    let before = s.receipts();
    let t = Instant::now();
    let r = tokio::time::timeout(
        Duration::from_secs(40),
        s.program("let r; try { r = await dispatch('SLOW', {id: 'x'}); } catch (e) { r = e.message; } return 'finished: ' + JSON.stringify(r);"),
    )
    .await
    .expect("the program ends near its deadline");
    assert!(t.elapsed() < Duration::from_secs(25), "{:?}", t.elapsed());
    assert_eq!(r["isError"], true, "{r}");
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("time limit"), "{text}");
    assert_eq!(s.receipts(), before);
}

// ---- 6. directory writes and the snapshot -----------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_directory_writes_leave_the_snapshot_equal_to_the_table() {
    let s = Arc::new(start(rows(300), vec![], Limits::default()).await);
    let mut tasks = Vec::new();
    for w in 0..6 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            let mut problems = Vec::new();
            for i in 0..12 {
                let key = format!("W{w}_{i}");
                let row = http_row(&key, "GET https://example.com/$1");
                let (st, _) = s
                    .post("/api/directory", serde_json::to_value(&row).unwrap())
                    .await;
                assert_eq!(st, 201);
                if s.state.snapshot().row(&key).is_none() {
                    problems.push(format!("{key} acknowledged but not served"));
                }
                if i % 2 == 0 {
                    let (st, _, _) = s
                        .send("DELETE", &format!("/api/directory/{key}"), None)
                        .await;
                    assert_eq!(st, 200);
                    if s.state.snapshot().row(&key).is_some() {
                        problems.push(format!("{key} deleted but still served"));
                    }
                }
            }
            problems
        }));
    }
    let mut problems = Vec::new();
    for t in tasks {
        problems.extend(t.await.unwrap());
    }
    assert!(problems.is_empty(), "{problems:?}");
    let table: Vec<String> = s
        .state
        .table_rows()
        .unwrap()
        .into_iter()
        .map(|r| r.key)
        .collect();
    let served: Vec<String> = s
        .state
        .snapshot()
        .rows()
        .iter()
        .map(|r| r.key.clone())
        .collect();
    assert_eq!(served, table);
    assert_eq!(table.len(), 300 + 6 * 6);
}

// ---- 7, 8. the SQLite files ---------------------------------------------------------------

fn foreign_db(path: &std::path::Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE directory (key TEXT PRIMARY KEY, type TEXT, target TEXT, auth TEXT, content TEXT, category TEXT, planner_rank INTEGER, enabled INTEGER, planner_visible INTEGER, input_schema TEXT);
         INSERT INTO directory (key, type, content) VALUES ('THEIRS', 'fn', 'their row');
         CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me');",
    )
    .unwrap();
}

fn tables(path: &std::path::Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut st = conn
        .prepare("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
        .unwrap();
    st.query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

#[test]
fn serve_db_refuses_a_file_that_is_not_its_own_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("theirs.db");
    foreign_db(&file);
    let before = std::fs::read(&file).unwrap();
    for extra in [vec![], vec!["--rows", "5"]] {
        let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_toolcost"))
            .args([
                "serve",
                "--db",
                file.to_str().unwrap(),
                "--listen",
                "127.0.0.1:0",
            ])
            .args(&extra)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("not a toolcost database"), "{err}");
    }
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the file is untouched"
    );
    assert_eq!(tables(&file), vec!["directory", "notes"]);
    // The library refuses it as well.
    let err = server::state(&server::Options {
        rows: Some(rows(3)),
        db: Some(file.clone()),
        token: None,
        allowlist: vec![],
        max_body: server::DEFAULT_MAX_BODY,
    })
    .err()
    .unwrap();
    assert!(err.to_string().contains("not a toolcost database"), "{err}");
    // Its directory can still be served from memory.
    assert_eq!(Catalogue::load(&file).unwrap().rows.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generate_keeps_a_database_with_receipts_and_receipts_cannot_be_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("store.sqlite");
    let s = start_on(rows(5), &file).await;
    let (_, v) = s.invoke("NOW", json!({})).await;
    let id = v["proof"]["invocation_id"].as_str().unwrap().to_string();
    // 8: INSERT OR REPLACE cannot rewrite the receipt behind the server's back.
    let conn = rusqlite::Connection::open(&file).unwrap();
    let forged = conn.execute(
        "INSERT OR REPLACE INTO receipts (id, key, args_hash, result_hash, ok, created_at, args, result) VALUES (?1, 'EMAIL_SEND', 'x', 'y', 1, 'then', '{}', '{\"forged\":true}')",
        [&id],
    );
    assert!(forged.is_err(), "REPLACE rewrote a receipt");
    let kept = s.state.receipt(&id).unwrap().unwrap();
    assert_eq!(kept.key, "NOW");
    let app: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    assert_eq!(app, toolcost::catalogue::directory::APPLICATION_ID);
    drop(conn);
    drop(s);
    // 7: generate -o refuses to replace it, unless told what it destroys.
    let gen = |extra: &[&str]| {
        assert_cmd::Command::new(env!("CARGO_BIN_EXE_toolcost"))
            .args(["generate", "--rows", "3", "-o", file.to_str().unwrap()])
            .args(extra)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap()
    };
    let out = gen(&[]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--discard-receipts"));
    assert_eq!(
        toolcost::catalogue::directory::receipts_held(&rusqlite::Connection::open(&file).unwrap())
            .unwrap(),
        1
    );
    let out = gen(&["--discard-receipts"]);
    assert!(out.status.success(), "{out:?}");
    // What generate writes is toolcost's own, so serve --db takes it.
    let st = server::state(&server::Options {
        rows: None,
        db: Some(file.clone()),
        token: None,
        allowlist: vec![],
        max_body: server::DEFAULT_MAX_BODY,
    })
    .unwrap();
    assert_eq!(st.snapshot().rows().len(), 3);
    // A foreign SQLite file is not replaced either.
    let theirs = dir.path().join("theirs.sqlite");
    foreign_db(&theirs);
    let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args(["generate", "--rows", "3", "-o", theirs.to_str().unwrap()])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(tables(&theirs), vec!["directory", "notes"]);
}

// ---- 9. code mode --------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_mode_dispatches_obey_max_body_and_per_program_caps() {
    let limits = Limits {
        program_dispatches: 25,
        ..Limits::default()
    };
    let s = start_full(rows(10), vec![], None, 64 << 10, limits).await;
    let before = s.receipts();
    // One dispatch over --max-body is refused.
    let r = s
        .program("await dispatch('ECHO', {message: 'x'.repeat(100000)});")
        .await;
    assert_eq!(r["isError"], true);
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("--max-body"),
        "{r}"
    );
    assert_eq!(s.receipts(), before);
    // A loop of dispatches stops at the program's cap, with a message.
    let r = s
        .program("for (let i = 0; i < 100000; i++) await dispatch('ECHO', {message: 'x'.repeat(60000)});")
        .await;
    assert_eq!(r["isError"], true);
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("25 dispatches"), "{text}");
    assert_eq!(s.receipts(), before + 25);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_mode_results_and_errors_are_bounded_and_readable() {
    let s = start(rows(10), vec![], Limits::default()).await;
    let r = s.program("return 'x'.repeat(10 * 1024 * 1024);").await;
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(text.len() < 70_000, "{} bytes", text.len());
    assert!(
        text.contains("returned value cut"),
        "{}",
        &text[text.len() - 200..]
    );
    let r = s.program("return 'x'.repeat(25 * 1024 * 1024);").await;
    let text = r["content"][0]["text"].as_str().unwrap();
    assert_eq!(r["isError"], true, "{}", &text[..text.len().min(300)]);
    assert!(text.contains("memory"), "{}", &text[..text.len().min(300)]);
    let r = s.program("throw {code: 7, why: 'no'};").await;
    let text = r["content"][0]["text"].as_str().unwrap();
    assert_eq!(text, "Uncaught: {\"code\":7,\"why\":\"no\"}");
    for oom in [
        "const a = []; while (true) a.push('x'.repeat(1 << 20) + a.length);",
        "let s = 'x'; while (true) s = s + s;",
        "const a = []; while (true) a.push({a: [1,2,3], b: 'y'.repeat(1000)});",
    ] {
        let r = s.program(oom).await;
        let text = r["content"][0]["text"].as_str().unwrap();
        assert_eq!(r["isError"], true, "{oom}");
        assert!(
            !text.contains("Null") && !text.contains("0x"),
            "{oom}: {text}"
        );
        assert!(
            ["memory", "time limit", "too long"]
                .iter()
                .any(|w| text.contains(w)),
            "{oom}: {text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_queue_is_bounded_and_answers_busy() {
    let limits = Limits {
        sandbox_slots: 1,
        sandbox_queue: 1,
        ..Limits::default()
    };
    let s = Arc::new(start(rows(10), vec![], limits).await);
    let mut spinning = Vec::new();
    for _ in 0..2 {
        let s = s.clone();
        spinning.push(tokio::spawn(
            async move { s.program("while (true) {}").await },
        ));
    }
    // Wait (bounded) until both are counted: one running, one waiting.
    for _ in 0..200 {
        if s.state.programs.load(std::sync::atomic::Ordering::SeqCst) >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let t = Instant::now();
    let r = s.program("return 1;").await;
    assert!(t.elapsed() < Duration::from_secs(4), "answered at once");
    let text = r["content"][0]["text"].as_str().unwrap();
    assert_eq!(r["isError"], true, "{r}");
    assert!(text.contains("busy"), "{text}");
    for h in spinning {
        let r = h.await.unwrap();
        assert!(r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("time limit"));
    }
    let r = s.program("return 2;").await;
    assert_eq!(r["isError"], false, "{r}");
}

/// A program waiting on an outbound dispatch gives its sandbox slot back meanwhile: with one
/// slot, a second program runs and ends while the first still waits on a slow upstream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_waiting_on_a_dispatch_does_not_hold_its_slot() {
    let slow = upstream::serve(|_| upstream::Reply::Stream {
        status: 200,
        content_type: "application/json".into(),
        chunks: vec![(Duration::from_millis(2500), b"{\"ok\":true}".to_vec())],
        end: upstream::End::Clean,
    })
    .await;
    let host = slow.trim_start_matches("http://").to_string();
    let mut rs = rows(10);
    rs.push(http_row("SLOW_GET", &format!("GET {slow}/things/$1")));
    let limits = Limits {
        sandbox_slots: 1,
        sandbox_queue: 4,
        ..Limits::default()
    };
    let s = Arc::new(start(rs, vec![host], limits).await);
    let waiting = {
        let s = s.clone();
        tokio::spawn(async move {
            let r = s
                .program("const r = await dispatch('SLOW_GET', {id: 'x'}); return r.ok;")
                .await;
            (r, Instant::now())
        })
    };
    // Bounded wait until the first program is counted, then give it time to reach its call.
    for _ in 0..200 {
        if s.state.programs.load(std::sync::atomic::Ordering::SeqCst) >= 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let quick = s.program("return 2;").await;
    let quick_done = Instant::now();
    assert_eq!(quick["isError"], false, "{quick}");
    let (slow_r, slow_done) = waiting.await.unwrap();
    assert_eq!(slow_r["isError"], false, "{slow_r}");
    assert!(
        quick_done < slow_done,
        "the second program waited for the first one's dispatch"
    );
}

// ---- 10. keys are MCP tool names -----------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn directory_keys_follow_the_mcp_tool_name_rule() {
    let s = start(rows(5), vec![], Limits::default()).await;
    let long = "K".repeat(129);
    let huge = "K".repeat(100_000);
    for bad in [
        "../evil",
        "a\"b",
        "a\nb",
        "with space",
        "",
        "café",
        long.as_str(),
        huge.as_str(),
    ] {
        let row = http_row(bad, "GET https://example.com/$1");
        let (st, v) = s
            .post("/api/directory", serde_json::to_value(&row).unwrap())
            .await;
        assert_eq!(st, 422, "{bad:?}: {v}");
        assert_eq!(v["pointer"], "/key");
    }
    let ok = "Ok.key-1_A".to_string() + &"k".repeat(118);
    let row = http_row(&ok, "GET https://example.com/$1");
    let (st, v) = s
        .post("/api/directory", serde_json::to_value(&row).unwrap())
        .await;
    assert_eq!(st, 201, "{v}");
    assert_eq!(s.state.snapshot().rows().len(), 6);
}

// ---- 11. slow clients ----------------------------------------------------------------------

#[test]
fn slow_clients_are_cut_off_and_cannot_hold_every_connection() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let limits = Limits {
        header_timeout: Duration::from_secs(1),
        body_timeout: Duration::from_secs(1),
        max_connections: 8,
        ..Limits::default()
    };
    let s = rt.block_on(start(rows(5), vec![], limits));
    let addr = s.addr;
    // Silent connections, more than the cap: each is closed after the header timeout.
    let silent: Vec<std::net::TcpStream> = (0..24)
        .map(|_| std::net::TcpStream::connect(addr).unwrap())
        .collect();
    let t = Instant::now();
    let mut first = silent.into_iter().next().unwrap();
    first
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut buf = [0u8; 256];
    let n = first.read(&mut buf).unwrap_or(0);
    assert!(
        t.elapsed() < Duration::from_secs(15),
        "a silent client was not cut off"
    );
    let _ = n;
    // A trickled body is refused with 408 after the body timeout.
    let mut slow = std::net::TcpStream::connect(addr).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        slow,
        "POST /api/dispatch HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {TOKEN}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{{\"key\""
    )
    .unwrap();
    let mut answer = String::new();
    let _ = slow.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    // A normal client is still served, within the timeouts plus generous slack.
    let ok = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
        .get(format!("{}/api/dispatch", s.base))
        .send()
        .unwrap();
    assert_eq!(ok.status(), 200);
    drop(s);
    rt.shutdown_timeout(Duration::from_secs(1));
}

// ---- 21. the in-memory store is bounded ----------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_in_memory_receipt_store_is_capped_with_a_clear_message() {
    let limits = Limits {
        memory_receipts: 3,
        ..Limits::default()
    };
    let s = start(rows(5), vec![], limits).await;
    for _ in 0..3 {
        let (st, v) = s.invoke("NOW", json!({})).await;
        assert_eq!(st, 200, "{v}");
    }
    let (st, v) = s.invoke("NOW", json!({})).await;
    assert_eq!(st, 403, "{v}");
    assert!(v["message"].as_str().unwrap().contains("--db"), "{v}");
    assert_eq!(s.receipts(), 3);
}

// ---- minor items ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn minor_items_json_errors_bearer_case_ids_repairs() {
    let s = start_full(rows(5), vec![], None, 4096, Limits::default()).await;
    // 413 and 405 are JSON.
    let (st, ctype, v) = s
        .send(
            "POST",
            "/api/dispatch",
            Some(format!(
                "{{\"key\":\"ECHO\",\"args\":{{\"message\":\"{}\"}}}}",
                "x".repeat(10_000)
            )),
        )
        .await;
    assert_eq!(st, 413);
    assert!(ctype.starts_with("application/json"), "{ctype}");
    assert_eq!(v["error"], "body_too_large");
    let (st, ctype, v) = s.send("PUT", "/api/dispatch", Some("{}".into())).await;
    assert_eq!(st, 405);
    assert!(ctype.starts_with("application/json"), "{ctype}: {v}");
    assert_eq!(v["error"], "method_not_allowed");
    let (st, ctype, _) = s.send("GET", "/mcp/small", None).await;
    assert_eq!(st, 405);
    assert!(ctype.starts_with("application/json"));
    // Lower-case `bearer` is the same scheme.
    let r = s
        .http
        .post(format!("{}/api/dispatch", s.base))
        .header("authorization", format!("bearer {TOKEN}"))
        .body(r#"{"key":"NOW"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // Receipt ids differ between two servers given the same calls.
    let other = start(rows(5), vec![], Limits::default()).await;
    let (_, a) = s.invoke("ECHO", json!({"message": "same"})).await;
    let (_, b) = other.invoke("NOW", json!({})).await;
    let (_, b2) = other.invoke("ECHO", json!({"message": "same"})).await;
    let _ = b;
    assert_ne!(a["proof"]["invocation_id"], b2["proof"]["invocation_id"]);
    // `repairs` must name a receipt the server holds.
    let (st, v) = s
        .post(
            "/api/dispatch",
            json!({"key": "NOW", "repairs": "inv_0000000000000000"}),
        )
        .await;
    assert_eq!(st, 404, "{v}");
    assert_eq!(v["error"], "unknown_receipt");
    let real = a["proof"]["invocation_id"].as_str().unwrap();
    let (st, v) = s
        .post("/api/dispatch", json!({"key": "NOW", "repairs": real}))
        .await;
    assert_eq!(st, 200, "{v}");
}

#[test]
fn a_json_file_with_a_byte_order_mark_loads() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tools.json");
    let body =
        json!({"tools": [{"name": "a", "description": "d", "inputSchema": {"type": "object"}}]});
    let mut bytes = vec![0xEF, 0xBB, 0xBF];
    bytes.extend(body.to_string().bytes());
    std::fs::write(&file, &bytes).unwrap();
    assert_eq!(Catalogue::load(&file).unwrap().tools.len(), 1);
    let jsonl = dir.path().join("rows.jsonl");
    let mut bytes = vec![0xEF, 0xBB, 0xBF];
    bytes.extend(serde_json::to_string(&rows(2)[0]).unwrap().bytes());
    std::fs::File::create(&jsonl)
        .unwrap()
        .write_all(&bytes)
        .unwrap();
    assert_eq!(Catalogue::load(&jsonl).unwrap().rows.len(), 1);
}

/// `serve --stdio`: a line that is not UTF-8, a line that is not JSON and a line over the size
/// limit each get a parse error, and the server goes on answering (item 18, server side).
#[test]
fn stdio_survives_bytes_that_are_not_utf8_and_lines_over_the_limit() {
    let mut input: Vec<u8> = Vec::new();
    input.extend_from_slice(b"\xff\xfe not utf-8\n");
    input.extend_from_slice(b"not json\n");
    input.extend(std::iter::repeat_n(b'x', (1 << 20) + 10));
    input.push(b'\n');
    input.extend_from_slice(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#);
    input.push(b'\n');
    let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args([
            "serve",
            "--stdio",
            "--rows",
            "12",
            "--surface",
            "per-row-mcp-min",
        ])
        .write_stdin(input)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 4, "{answers:?}");
    for a in &answers[..3] {
        assert_eq!(a["error"]["code"], -32700, "{a}");
    }
    assert!(answers[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("UTF-8"));
    assert!(answers[2]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("limit"));
    assert_eq!(answers[3]["id"], 7);
    assert_eq!(answers[3]["result"]["tools"].as_array().unwrap().len(), 12);
}

// ---- hostile17: the token before the body ---------------------------------------------------

/// A server whose token is required for `scope`, with these limits.
async fn start_scoped(scope: server::guard::TokenScope, limits: Limits) -> Server {
    let opts = server::Options {
        rows: Some(rows(5)),
        db: None,
        token: Some(TOKEN.into()),
        allowlist: vec![],
        max_body: server::DEFAULT_MAX_BODY,
    };
    let state = server::state_with(&opts, limits).unwrap();
    state.set_access(server::guard::Access {
        token_for: scope,
        ..Default::default()
    });
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    common::serve_in_process(state, server::DEFAULT_MAX_BODY, http).await
}

/// Send `head` (and `body`, maybe less than it announces) on a fresh connection; the first
/// line of the answer and how long it took to come (an empty line if none came in 20 s).
fn first_line(addr: std::net::SocketAddr, head: &str, body: &str) -> (String, Duration) {
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let t = Instant::now();
    c.write_all(format!("{head}\r\nhost: 127.0.0.1\r\n\r\n{body}").as_bytes())
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 512];
    while !got.windows(2).any(|w| w == b"\r\n") {
        match c.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&got);
    (text.lines().next().unwrap_or("").to_string(), t.elapsed())
}

#[test]
fn a_caller_without_the_token_is_refused_before_its_body_is_read() {
    use server::guard::TokenScope;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // The in-process server and its client are dropped inside the runtime.
    let entered = rt.enter();
    // A token holder's body may take 30 s; one without the token gets 1 s.
    let limits = Limits {
        body_timeout: Duration::from_secs(30),
        open_body_timeout: Duration::from_secs(1),
        ..Limits::default()
    };
    let quick = Duration::from_secs(10);
    let big = "content-type: application/json\r\ncontent-length: 100000";
    let cases = [
        // Needed whatever the body says: 401 from the headers, the body never read.
        (TokenScope::All, "POST /mcp HTTP/1.1", "", "401"),
        (
            TokenScope::All,
            "POST /mcp/small HTTP/1.1",
            "authorization: Bearer wrong\r\n",
            "401",
        ),
        (TokenScope::All, "DELETE /mcp HTTP/1.1", "", "401"),
        (TokenScope::List, "GET /mcp HTTP/1.1", "", "401"),
        (TokenScope::Calls, "POST /api/dispatch HTTP/1.1", "", "401"),
        (
            TokenScope::Calls,
            "POST /api/directory HTTP/1.1",
            "x-mcp-token: wrong\r\n",
            "401",
        ),
        // Only the body can tell: a tokenless body is held to the small, quick budget.
        (TokenScope::Calls, "POST /mcp HTTP/1.1", "", "413"),
        (TokenScope::List, "POST /mcp HTTP/1.1", "", "413"),
    ];
    for (scope, line, auth, want) in cases {
        let s = rt.block_on(start_scoped(scope, limits.clone()));
        let (got, took) = first_line(s.addr, &format!("{line}\r\n{auth}{big}"), "{\"jsonrpc\"");
        assert!(got.contains(want), "{scope:?} {line}: {got:?}");
        assert!(took < quick, "{scope:?} {line}: {took:?}");
        drop(s);
    }
    // A trickled tokenless body under `calls` is cut off after the short timeout.
    let s = rt.block_on(start_scoped(TokenScope::Calls, limits.clone()));
    let (got, took) = first_line(
        s.addr,
        "POST /mcp HTTP/1.1\r\ncontent-type: application/json\r\ncontent-length: 1000",
        "{\"jsonrpc\"",
    );
    assert!(got.contains("408"), "{got:?}");
    assert!(took < quick, "{took:?}");
    // With the token, the same endpoint takes a body over the tokenless budget.
    let message = "m".repeat(100_000);
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ECHO", "arguments": {"message": message}}});
    let (status, v) = rt.block_on(s.post("/mcp", call.clone()));
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["result"]["isError"], false, "{v}");
    // Without it, the 413 says why.
    let r = rt
        .block_on(
            s.http
                .post(format!("{}/mcp", s.base))
                .header("content-type", "application/json")
                .body(call.to_string())
                .send(),
        )
        .unwrap();
    assert_eq!(r.status(), 413);
    let text = rt.block_on(r.text()).unwrap();
    assert!(text.contains("without the token"), "{text}");
    drop(s);
    drop(entered);
    rt.shutdown_timeout(Duration::from_secs(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn head_is_guarded_like_get() {
    use server::guard::TokenScope;
    let s = start_scoped(TokenScope::List, Limits::default()).await;
    for path in ["/mcp", "/api/dispatch"] {
        let r = s
            .http
            .head(format!("{}{path}", s.base))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401, "{path}");
    }
    let s = start_scoped(TokenScope::Calls, Limits::default()).await;
    let r = s
        .http
        .head(format!("{}/api/dispatch", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "a read stays open under calls");
}

#[test]
fn peers_that_stop_reading_large_answers_cannot_hold_every_connection() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let entered = rt.enter();
    let limits = Limits {
        max_connections: 4,
        write_stall: Duration::from_secs(1),
        tools_page: 0,
        batch_bytes: 64 << 20,
        ..Limits::default()
    };
    let s = rt.block_on(start(rows(200), vec![], limits));
    // Every slot asks for a batch of whole lists (megabytes, past the socket buffers) and
    // reads none of it.
    let batch = Value::Array(
        (0..100)
            .map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "tools/list"}))
            .collect(),
    )
    .to_string();
    let stalled: Vec<std::net::TcpStream> = (0..4)
        .map(|_| {
            let mut c = std::net::TcpStream::connect(s.addr).unwrap();
            write!(
                c,
                "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {TOKEN}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{batch}",
                batch.len()
            )
            .unwrap();
            c
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    // A reading client still gets in once the stalled writes time out.
    let t = Instant::now();
    let ok = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
        .get(format!("{}/api/dispatch", s.base))
        .send();
    assert!(
        ok.as_ref().is_ok_and(|r| r.status() == 200),
        "{ok:?} after {:?}",
        t.elapsed()
    );
    drop(stalled);
    drop(s);
    drop(entered);
    rt.shutdown_timeout(Duration::from_secs(1));
}

#[test]
fn a_body_left_unread_is_never_taken_for_the_next_request() {
    use server::guard::TokenScope;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let entered = rt.enter();
    let s = rt.block_on(start_scoped(TokenScope::All, Limits::default()));
    let key = s.state.snapshot().rows()[0].key.clone();
    // The refused request's body is a whole request carrying the token.
    let inner = format!(
        "DELETE /api/directory/{key} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {TOKEN}\r\ncontent-length: 0\r\n\r\n"
    );
    let mut c = std::net::TcpStream::connect(s.addr).unwrap();
    // A second answer would follow the first at once; 2 s of silence says there is none.
    c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    write!(
        c,
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {}\r\n\r\n{inner}",
        inner.len()
    )
    .unwrap();
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    let text = String::from_utf8_lossy(&got);
    assert_eq!(text.matches("HTTP/1.1 ").count(), 1, "{text}");
    assert!(text.starts_with("HTTP/1.1 401"), "{text}");
    assert!(
        s.state.snapshot().row(&key).is_some(),
        "the smuggled DELETE did not run"
    );
    drop(s);
    drop(entered);
    rt.shutdown_timeout(Duration::from_secs(1));
}

// ---- second hostile round: lost or corrupted data, starved peers ---------------------------

/// The class "a file toolcost did not create is changed": a foreign SQLite file whose only
/// table is named `receipts` is refused, and its table is left as it was (no triggers, no new
/// tables); a second server on one store is refused and names the process that holds it.
#[test]
fn foreign_and_shared_stores_are_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let foreign = dir.path().join("theirs.sqlite");
    {
        let c = rusqlite::Connection::open(&foreign).unwrap();
        c.execute_batch("CREATE TABLE receipts (n INTEGER); INSERT INTO receipts VALUES (1);")
            .unwrap();
    }
    let opts = |db: &std::path::Path| server::Options {
        rows: Some(rows(3)),
        db: Some(db.to_path_buf()),
        token: Some(TOKEN.into()),
        allowlist: vec![],
        max_body: server::DEFAULT_MAX_BODY,
    };
    let e = server::state_with(&opts(&foreign), Limits::default())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("not a toolcost database"), "{e}");
    let c = rusqlite::Connection::open(&foreign).unwrap();
    let objects: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(objects, vec!["receipts".to_string()], "nothing was added");
    assert!(
        !dir.path().join("theirs.sqlite.claim").exists(),
        "nothing is written beside it either"
    );
    c.execute("UPDATE receipts SET n = 2", []).unwrap();

    let ours = dir.path().join("ours.sqlite");
    let first = server::state_with(&opts(&ours), Limits::default()).unwrap();
    let e = server::state_with(&opts(&ours), Limits::default())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("another toolcost server"), "{e}");
    assert!(e.contains(&std::process::id().to_string()), "{e}");
    drop(first);
    assert!(
        server::state_with(&opts(&ours), Limits::default()).is_ok(),
        "the claim goes with the server"
    );
}

/// The class "a busy store answered as a refusal": an invoke while another process holds the
/// store's write lock is a 503 with Retry-After, and records nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_store_is_unavailable_not_forbidden() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("store.sqlite");
    let s = start_on(rows(5), &db).await;
    let (st, v) = s.invoke("NOW", json!({})).await;
    assert_eq!(st, 200, "{v}");
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE;").unwrap();
    let r = s
        .http
        .post(format!("{}/api/dispatch", s.base))
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .body(json!({"key": "NOW", "args": {}}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 503);
    assert_eq!(r.headers()["retry-after"], "1");
    let v: Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
    assert_eq!(v["error"], "store_unavailable", "{v}");
    holder.execute_batch("ROLLBACK;").unwrap();
    let (st, _) = s.invoke("NOW", json!({})).await;
    assert_eq!(st, 200);
    assert_eq!(s.receipts(), 2);
}

/// The class "one peer starves the rest": an address that opens connection after connection
/// and sends nothing holds only its share, and requests from other addresses are answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_cannot_hold_every_connection() {
    let limits = Limits {
        header_timeout: Duration::from_secs(2),
        ..Limits::default()
    };
    let s = start(rows(5), vec![], limits).await;
    let addr = s.addr;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut floods = Vec::new();
    for _ in 0..250 {
        let stop = stop.clone();
        floods.push(tokio::spawn(async move {
            let deadline = Instant::now() + Duration::from_secs(8);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && Instant::now() < deadline {
                let sock = tokio::net::TcpSocket::new_v4().unwrap();
                if sock.bind("127.0.0.2:0".parse().unwrap()).is_err() {
                    return;
                }
                let Ok(mut c) = sock.connect(addr).await else {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                };
                let mut buf = [0u8; 64];
                // Hold it until the server closes it, then open another.
                let _ = tokio::time::timeout(
                    Duration::from_secs(5),
                    tokio::io::AsyncReadExt::read(&mut c, &mut buf),
                )
                .await;
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut answered = 0;
    for _ in 0..8 {
        let r = s
            .http
            .get(format!("{}/api/dispatch", s.base))
            .timeout(Duration::from_secs(5))
            .send()
            .await;
        if r.is_ok_and(|r| r.status() == 200) {
            answered += 1;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for f in floods {
        let _ = f.await;
    }
    assert_eq!(answered, 8, "legitimate requests were starved");
}

/// The class "a tokenless peer pushes out an authenticated one": tokenless `initialize` floods
/// forget only tokenless sessions, and tokenless event streams leave slots for token holders.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokenless_peers_do_not_push_out_token_holders() {
    let s = start(rows(5), vec![], Limits::default()).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let r = s
        .http
        .post(format!("{}/mcp", s.base))
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(init.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    let plain = reqwest::Client::new();
    for _ in 0..server::sessions::MAX_SESSIONS + 10 {
        let r = plain
            .post(format!("{}/mcp", s.base))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(init.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    let r = s
        .http
        .post(format!("{}/mcp", s.base))
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-06-18")
        .body(ping.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "the token holder's session survived");
}

/// With `--max-body` raised past 16 MB, a body of more tiny JSON nodes than toolcost builds a
/// tree of (some 50 times its size) is refused unparsed on the MCP endpoint and the HTTP API,
/// and the server goes on serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_of_too_many_json_nodes_are_refused_unparsed() {
    let s = start_full(rows(10), vec![], None, 64 << 20, Limits::default()).await;
    let mut fan = String::from("[0");
    fan.push_str(&",0".repeat(toolcost::json::MAX_NODES));
    fan.push(']');
    for path in ["/mcp", "/api/dispatch", "/api/directory"] {
        let r = s
            .http
            .post(format!("{}{path}", s.base))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", format!("Bearer {TOKEN}"))
            .body(fan.clone())
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let text = r.text().await.unwrap();
        assert_eq!(status, 413, "{path}: {text}");
        assert!(
            text.contains("more than 16777216 JSON values"),
            "{path}: {text}"
        );
    }
    let r = s
        .http
        .get(format!("{}/api/dispatch", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200, "the server keeps serving");
}
