//! The reference server's MCP endpoints as each protocol version asks: Host and Origin checks,
//! where the token is needed and the 401's challenge, `tools/list` pages, sessions, the
//! stateless 2026-07-28 mode, and input errors as tool results from 2025-11-25 on.

mod common;

use serde_json::{json, Value};
use toolcost::catalogue::{generate::Generator, profile::Profile, Catalogue, Row};
use toolcost::server;
use toolcost::server::guard::{Access, TokenScope};

const TOKEN: &str = "proto-token";
const MODERN: &str = "2026-07-28";

type Server = common::InProcess;

fn rows(n: usize) -> Vec<Row> {
    Generator::new(Profile::named("seed-2026-07").unwrap(), n, 1, false).collect()
}

async fn start(n: usize, page: usize, access: Access) -> Server {
    let limits = server::Limits {
        tools_page: page,
        ..server::Limits::default()
    };
    start_with(n, limits, access).await
}

async fn start_with(n: usize, limits: server::Limits, access: Access) -> Server {
    let opts = server::Options {
        rows: Some(rows(n)),
        db: None,
        token: Some(TOKEN.into()),
        allowlist: vec![],
        max_body: server::DEFAULT_MAX_BODY,
    };
    let state = server::state_with(&opts, limits).unwrap();
    state.set_access(access);
    common::serve_in_process(state, server::DEFAULT_MAX_BODY, reqwest::Client::new()).await
}

struct Answer {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: Value,
    text: String,
}

impl Server {
    /// POST a message to `path` with these extra headers.
    async fn post(&self, path: &str, msg: &Value, headers: &[(&str, &str)]) -> Answer {
        let mut rb = self
            .http
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(msg.to_string());
        for (k, v) in headers {
            rb = rb.header(*k, *v);
        }
        let r = rb.send().await.unwrap();
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let text = r.text().await.unwrap();
        Answer {
            status,
            headers,
            body: serde_json::from_str(&text).unwrap_or(Value::Null),
            text,
        }
    }

    /// initialize at `version`; the session id.
    async fn initialize(&self, path: &str, version: &str) -> String {
        let a = self
            .post(
                path,
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
                &[],
            )
            .await;
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(a.body["result"]["protocolVersion"], version);
        a.headers["mcp-session-id"].to_str().unwrap().to_string()
    }
}

fn modern(method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    });
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

fn list() -> Value {
    serde_json::from_str(LIST).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_host_and_origin_get_403_and_loopback_passes() {
    let s = start(
        5,
        0,
        Access::default()
            .with_origins(&["https://app.example.com".into()])
            .unwrap()
            .with_names(&["mcp.example.com".into()])
            .unwrap(),
    )
    .await;
    let port = s.base.rsplit(':').next().unwrap().to_string();
    for path in ["/mcp", "/mcp/small", "/mcp/code", "/mcp/min"] {
        for (host, origin, want) in [
            ("evil.example.com", None, 403),
            ("evil.example.com:80", None, 403),
            ("localhost.evil.example.com", None, 403),
            ("127.0.0.1", Some("https://evil.example.com"), 403),
            ("127.0.0.1", Some("null"), 403),
            ("127.0.0.1", None, 200),
            ("localhost", Some("http://localhost:5173"), 200),
            ("mcp.example.com", Some("https://app.example.com"), 200),
            ("[::1]", None, 200),
        ] {
            let host = if host.contains(':') || host.starts_with('[') {
                host.to_string()
            } else {
                format!("{host}:{port}")
            };
            let mut h = vec![("host", host.as_str())];
            if let Some(o) = origin {
                h.push(("origin", o));
            }
            let a = s.post(path, &list(), &h).await;
            assert_eq!(
                a.status, want,
                "{path} host {host} origin {origin:?}: {}",
                a.text
            );
            if want == 403 {
                assert_eq!(a.body["error"]["code"], -32600);
                assert!(a.body["id"].is_null());
            }
        }
        // GET and DELETE are checked too.
        let r = s
            .http
            .get(format!("{}{path}", s.base))
            .header("host", "evil.example.com")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403, "{path} GET");
    }
    // The HTTP dispatch API reveals the same catalogue, so it gets the same checks.
    let r = s
        .http
        .get(format!("{}/api/dispatch", s.base))
        .header("host", "evil.example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_guards_what_the_scope_names_with_a_bearer_challenge() {
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ECHO", "arguments": {"message": "x"}}});
    let init = json!({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let bearer = format!("Bearer {TOKEN}");
    for (scope, list_open, init_open) in [
        (TokenScope::Calls, true, true),
        (TokenScope::List, false, false),
        (TokenScope::All, false, false),
    ] {
        let s = start(
            20,
            0,
            Access {
                token_for: scope,
                ..Access::default()
            },
        )
        .await;
        let a = s.post("/mcp", &list(), &[]).await;
        assert_eq!(a.status == 200, list_open, "{scope:?} list: {}", a.text);
        let a = s.post("/mcp", &init, &[]).await;
        assert_eq!(a.status == 200, init_open, "{scope:?} init: {}", a.text);
        let before = s.state.receipt_count().unwrap();
        let a = s.post("/mcp", &call, &[]).await;
        assert_eq!(a.status, 401, "{scope:?} call: {}", a.text);
        assert_eq!(a.body["error"]["code"], -32001);
        assert_eq!(a.headers["www-authenticate"], r#"Bearer realm="toolcost""#);
        let a = s
            .post("/mcp", &call, &[("authorization", "Bearer wrong")])
            .await;
        assert_eq!(a.status, 401);
        assert!(a.headers["www-authenticate"]
            .to_str()
            .unwrap()
            .contains(r#"error="invalid_token""#));
        assert_eq!(s.state.receipt_count().unwrap(), before, "nothing ran");
        let a = s
            .post("/mcp", &call, &[("authorization", bearer.as_str())])
            .await;
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(a.body["result"]["isError"], false);
        let a = s
            .post("/mcp", &list(), &[("authorization", bearer.as_str())])
            .await;
        assert_eq!(a.status, 200);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_pages_add_up_to_the_whole_list_and_bad_cursors_are_refused() {
    let n = 57;
    let s = start(n, 10, Access::default()).await;
    let local = Catalogue::from_rows("local", rows(n));
    let mut raws = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut msg = list();
        if let Some(c) = &cursor {
            msg["params"] = json!({"cursor": c});
        }
        let a = s.post("/mcp", &msg, &[]).await;
        pages += 1;
        raws.extend(
            toolcost::catalogue::capture::parse(&a.text)
                .unwrap()
                .into_iter()
                .map(|t| t.raw().to_string()),
        );
        cursor = a.body["result"]["nextCursor"].as_str().map(String::from);
        if cursor.is_none() {
            break;
        }
        assert!(pages < 20, "the pages do not end");
    }
    assert_eq!(pages, 6);
    let whole: Vec<String> = local.tools.iter().map(|t| t.raw().to_string()).collect();
    assert_eq!(raws, whole, "the pages are the list, byte for byte");
    for bad in [
        json!("garbage"),
        json!("t7"),
        json!("t990"),
        json!("t"),
        json!(5),
        json!("t00000000000000000010"),
    ] {
        let mut msg = list();
        msg["params"] = json!({"cursor": bad});
        let a = s.post("/mcp", &msg, &[]).await;
        assert_eq!(a.status, 200);
        assert_eq!(a.body["error"]["code"], -32602, "cursor {bad}: {}", a.text);
    }
    // weigh's client follows the cursors to the same bytes.
    let target = toolcost::mcp::Target::Http {
        url: format!("{}/mcp", s.base),
        headers: vec![],
        timeout: std::time::Duration::from_secs(30),
        opts: toolcost::mcp::Options::default(),
    };
    let (cat, notes) = target.fetch().await.unwrap();
    assert!(notes.iter().any(|n| n.contains("6 page(s)")), "{notes:?}");
    assert_eq!(cat.definition_bytes(), local.definition_bytes());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_sessions_and_input_errors() {
    let s = start(30, 0, Access::default()).await;
    let bearer = format!("Bearer {TOKEN}");
    let bad = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "ORDER_GET", "arguments": {"order_id": 1}}});
    // No version and no session: a sessionless 2025-03-26 call, as before.
    let a = s
        .post("/mcp", &bad, &[("authorization", bearer.as_str())])
        .await;
    assert_eq!(a.body["error"]["code"], -32602, "{}", a.text);
    assert_eq!(a.body["error"]["data"]["pointer"], "/order_id");
    // initialize asking for an unknown version gets the newest with a session.
    let sid = {
        let a = s
            .post(
                "/mcp",
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "1999-01-01"}}),
                &[],
            )
            .await;
        assert_eq!(a.body["result"]["protocolVersion"], "2025-11-25");
        a.headers["mcp-session-id"].to_str().unwrap().to_string()
    };
    for (version, tool_error) in [("2025-11-25", true), ("2025-06-18", false)] {
        let sid = s.initialize("/mcp", version).await;
        let h = [
            ("authorization", bearer.as_str()),
            ("mcp-session-id", sid.as_str()),
            ("mcp-protocol-version", version),
        ];
        let a = s.post("/mcp", &bad, &h).await;
        if tool_error {
            assert_eq!(a.body["result"]["isError"], true, "{}", a.text);
            assert_eq!(
                a.body["result"]["structuredContent"]["pointer"],
                "/order_id"
            );
        } else {
            assert_eq!(a.body["error"]["code"], -32602, "{}", a.text);
        }
        // The small surface's missing argument follows the same rule.
        let small_sid = s.initialize("/mcp/small", version).await;
        let a = s
            .post(
                "/mcp/small",
                &json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "dispatch", "arguments": {}}}),
                &[
                    ("authorization", bearer.as_str()),
                    ("mcp-session-id", small_sid.as_str()),
                    ("mcp-protocol-version", version),
                ],
            )
            .await;
        assert_eq!(
            a.body["result"]["isError"] == true,
            tool_error,
            "{}",
            a.text
        );
        // A request naming a session version without the session id is refused.
        let a = s
            .post("/mcp", &list(), &[("mcp-protocol-version", version)])
            .await;
        assert_eq!(a.status, 400, "{}", a.text);
        // Another known version in the header is served at the session's version.
        let a = s
            .post(
                "/mcp",
                &bad,
                &[
                    ("authorization", bearer.as_str()),
                    ("mcp-session-id", sid.as_str()),
                    ("mcp-protocol-version", "2024-11-05"),
                ],
            )
            .await;
        assert_eq!(
            a.body["result"]["isError"] == true,
            tool_error,
            "{}",
            a.text
        );
    }
    let a = s
        .post("/mcp", &list(), &[("mcp-protocol-version", "1999-01-01")])
        .await;
    assert_eq!(a.status, 400);
    let a = s.post("/mcp", &list(), &[("mcp-session-id", "nope")]).await;
    assert_eq!(a.status, 404);
    let a = s
        .post("/mcp", &list(), &[("mcp-session-id", sid.as_str())])
        .await;
    assert_eq!(a.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stateless_revision_lists_calls_discovers_and_listens() {
    let s = start(40, 0, Access::default()).await;
    let bearer = format!("Bearer {TOKEN}");
    let h = [
        ("mcp-protocol-version", MODERN),
        ("authorization", bearer.as_str()),
    ];
    let d = s
        .post("/mcp", &modern("server/discover", json!({})), &h)
        .await;
    assert_eq!(d.status, 200, "{}", d.text);
    assert_eq!(d.body["result"]["supportedVersions"][0], MODERN);
    assert!(d.body["result"]["supportedVersions"]
        .as_array()
        .unwrap()
        .contains(&json!("2025-11-25")));
    assert_eq!(d.body["result"]["resultType"], "complete");
    assert!(d.headers.get("mcp-session-id").is_none());

    // The list: the same definitions, then the revision's result fields.
    let legacy = s.post("/mcp", &list(), &[]).await;
    let now = s.post("/mcp", &modern("tools/list", json!({})), &h).await;
    assert_eq!(now.status, 200, "{}", now.text);
    let defs = |text: &str| {
        toolcost::catalogue::capture::parse(text)
            .unwrap()
            .into_iter()
            .map(|t| t.raw().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(defs(&now.text), defs(&legacy.text));
    assert_eq!(now.body["result"]["ttlMs"], 60_000);
    assert_eq!(now.body["result"]["cacheScope"], "public");
    assert_eq!(now.body["result"]["resultType"], "complete");
    assert!(now.text.len() > legacy.text.len());

    // Input errors are tool results; a good call works without any session.
    let a = s
        .post(
            "/mcp",
            &modern(
                "tools/call",
                json!({"name": "ORDER_GET", "arguments": {"order_id": 1}}),
            ),
            &h,
        )
        .await;
    assert_eq!(a.body["result"]["isError"], true, "{}", a.text);
    let a = s
        .post(
            "/mcp",
            &modern(
                "tools/call",
                json!({"name": "ECHO", "arguments": {"message": "hi"}}),
            ),
            &h,
        )
        .await;
    assert_eq!(a.body["result"]["isError"], false, "{}", a.text);
    assert_eq!(a.body["result"]["resultType"], "complete");

    // Version errors: unsupported, header mismatch, removed methods.
    let mut old = modern("tools/list", json!({}));
    old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let a = s
        .post("/mcp", &old, &[("mcp-protocol-version", "2025-11-25")])
        .await;
    assert_eq!(a.status, 400);
    assert_eq!(a.body["error"]["code"], -32022);
    assert_eq!(a.body["error"]["data"]["supported"][0], MODERN);
    let a = s
        .post(
            "/mcp",
            &modern("tools/list", json!({})),
            &[("mcp-protocol-version", "2025-06-18")],
        )
        .await;
    assert_eq!(a.status, 400);
    assert_eq!(a.body["error"]["code"], -32020);
    let a = s
        .post(
            "/mcp",
            &modern("tools/list", json!({})),
            &[
                ("mcp-protocol-version", MODERN),
                ("mcp-method", "tools/call"),
            ],
        )
        .await;
    assert_eq!(
        (a.status, a.body["error"]["code"].as_i64()),
        (400, Some(-32020))
    );
    let a = s.post("/mcp", &modern("ping", json!({})), &h).await;
    assert_eq!(a.status, 404);
    assert_eq!(a.body["error"]["code"], -32601);

    // subscriptions/listen: an acknowledgement, then list_changed tagged with the id.
    let mut listen = s
        .http
        .post(format!("{}/mcp", s.base))
        .header("mcp-protocol-version", MODERN)
        .header("accept", "application/json, text/event-stream")
        .body(
            modern(
                "subscriptions/listen",
                json!({"notifications": {"toolsListChanged": true, "promptsListChanged": true}}),
            )
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(listen.headers()["content-type"], "text/event-stream");
    let mut seen = String::new();
    while !seen.contains("acknowledged") {
        seen.push_str(&String::from_utf8_lossy(&next(&mut listen).await));
    }
    assert!(
        seen.contains(r#""notifications":{"toolsListChanged":true}"#),
        "{seen}"
    );
    let row = json!({"key": "LISTEN_PROBE", "type": "fn", "target": "fn:echo", "category": "docs",
                     "content": "# WHAT: Probe\n", "input_schema": {"type": "object"}});
    let r = s
        .http
        .post(format!("{}/api/directory", s.base))
        .bearer_auth(TOKEN)
        .body(row.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let mut seen = String::new();
    while !seen.contains("list_changed") {
        seen.push_str(&String::from_utf8_lossy(&next(&mut listen).await));
    }
    assert!(
        seen.contains(r#""io.modelcontextprotocol/subscriptionId":1"#),
        "{seen}"
    );
}

/// The next chunk of an event stream, within five seconds.
async fn next(r: &mut reqwest::Response) -> Vec<u8> {
    tokio::time::timeout(std::time::Duration::from_secs(5), r.chunk())
        .await
        .unwrap()
        .unwrap()
        .unwrap()
        .to_vec()
}

#[test]
fn serve_says_what_it_accepts_beyond_loopback_and_checks_its_options() {
    let bin = env!("CARGO_BIN_EXE_toolcost");
    let out = std::process::Command::new(bin)
        .args(["serve", "--rows", "3", "--token-required-for", "list"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--token-env"));
    let out = std::process::Command::new(bin)
        .args(["serve", "--rows", "3", "--allow-origin", "example.com"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("scheme://host"));

    use std::io::{BufRead, BufReader};
    let mut child = std::process::Command::new(bin)
        .args(["serve", "--rows", "3", "--listen", "0.0.0.0:0"])
        .args(["--allow-origin", "https://app.example.com"])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let second = lines.next().unwrap().unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(first.contains("http://0.0.0.0:"), "{first}");
    assert!(
        second.contains("any IP address")
            && second.contains("https://app.example.com")
            && second.contains("403"),
        "{second}"
    );
}

#[test]
fn over_stdio_every_version_lists_the_same_definitions() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args(["weigh", "--json", "--each-protocol", "--"])
        .arg(env!("CARGO_BIN_EXE_toolcost"))
        .args(["serve", "--stdio", "--rows", "25", "--page-size", "10"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["protocol"], "2025-11-25", "stdio initializes by default");
    let bytes = Catalogue::from_rows("x", rows(25)).definition_bytes();
    assert_eq!(v["total_bytes"], bytes);
    let protocols = v["protocols"].as_array().unwrap();
    assert_eq!(protocols.len(), 5);
    for r in protocols {
        assert_eq!(r["error"], "", "{r}");
        assert_eq!(r["spoken"], r["requested"], "{r}");
        assert_eq!(r["tools"], 25, "{r}");
        assert_eq!(r["definition_bytes"], bytes, "{r}");
    }
    // The stateless revision's three pages each carry its result fields.
    let list = |i: usize| protocols[i]["list_bytes"].as_u64().unwrap();
    assert!(list(0) > list(1) + 3 * 100, "{protocols:?}");
    assert_eq!(list(1), list(2));
}

/// Open a 2026-07-28 `subscriptions/listen` stream on `/mcp`.
async fn listen(s: &Server) -> reqwest::Response {
    listen_as(s, None).await
}

/// [`listen`] presenting a token, or none.
async fn listen_as(s: &Server, token: Option<&str>) -> reqwest::Response {
    let mut rb = s.http.post(format!("{}/mcp", s.base));
    if let Some(t) = token {
        rb = rb.bearer_auth(t);
    }
    rb.header("mcp-protocol-version", MODERN)
        .header("accept", "application/json, text/event-stream")
        .body(
            modern(
                "subscriptions/listen",
                json!({"notifications": {"toolsListChanged": true}}),
            )
            .to_string(),
        )
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_streams_have_their_own_cap_and_an_end() {
    // Streams need no token under the default scope; however many a peer opens, the server
    // keeps answering requests, refuses the stream past its cap with 503, and ends each stream
    // after its lifetime, which frees its slot.
    let limits = server::Limits {
        max_streams: 2,
        stream_lifetime: std::time::Duration::from_millis(1500),
        ..server::Limits::default()
    };
    let s = start_with(20, limits, Access::default()).await;
    let mut a = listen(&s).await;
    let mut b = listen(&s).await;
    assert_eq!(a.status(), 200);
    assert_eq!(b.status(), 200);
    let _ = next(&mut a).await;
    let _ = next(&mut b).await;
    let refused = listen(&s).await;
    assert_eq!(refused.status(), 503);
    assert!(refused.headers().contains_key("retry-after"));
    assert!(refused.text().await.unwrap().contains("too_many_streams"));
    // A GET stream of a 2025-11-25 session shares the cap.
    let sid = s.initialize("/mcp", "2025-11-25").await;
    let get = s
        .http
        .get(format!("{}/mcp", s.base))
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-11-25")
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), 503);
    // Requests are still served.
    let l = s.post("/mcp", &list(), &[]).await;
    assert_eq!(l.status, 200, "{}", l.text);
    assert_eq!(l.body["result"]["tools"].as_array().unwrap().len(), 20);
    // Both streams end at their lifetime, and a new one is admitted.
    for r in [&mut a, &mut b] {
        let end = tokio::time::timeout(std::time::Duration::from_secs(10), async {
            while let Ok(Some(_)) = r.chunk().await {}
        })
        .await;
        assert!(end.is_ok(), "a stream outlived its lifetime");
    }
    let mut again = listen(&s).await;
    assert_eq!(again.status(), 200);
    let _ = next(&mut again).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dispatch_api_checks_host_origin_and_the_listing_scope() {
    let access = Access {
        token_for: TokenScope::List,
        ..Access::default()
    };
    let s = start(10, 0, access).await;
    let get = |path: &str, headers: Vec<(&'static str, &'static str)>| {
        let mut rb = s.http.get(format!("{}{path}", s.base));
        for (k, v) in headers {
            rb = rb.header(k, v);
        }
        rb.send()
    };
    // A rebinding page's Host or a foreign Origin: 403 before anything is read.
    for h in [
        ("host", "evil.example.com"),
        ("origin", "http://evil.example.com"),
    ] {
        let r = get("/api/dispatch?key=NOW", vec![h]).await.unwrap();
        assert_eq!(r.status(), 403, "{h:?}");
    }
    // Under `list`, reads that reveal the catalogue need the token.
    for path in [
        "/api/dispatch",
        "/api/dispatch?key=NOW",
        "/api/dispatch?ask=time",
    ] {
        let r = get(path, vec![]).await.unwrap();
        assert_eq!(r.status(), 401, "{path}");
        let r = s
            .http
            .get(format!("{}{path}", s.base))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{path}");
    }
}

#[test]
fn two_host_headers_or_a_foreign_absolute_target_are_refused() {
    use std::io::{Read, Write};
    let rt = tokio::runtime::Runtime::new().unwrap();
    let s = rt.block_on(start(3, 0, Access::default()));
    let addr = s.base.trim_start_matches("http://").to_string();
    let send = |head: String| {
        let mut c = std::net::TcpStream::connect(&addr).unwrap();
        c.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let body = LIST;
        c.write_all(
            format!(
                "{head}content-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
        .unwrap();
        let mut out = String::new();
        let _ = c.read_to_string(&mut out);
        out
    };
    let twice = send(format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\nhost: evil.example.com\r\n"
    ));
    assert!(
        twice.starts_with("HTTP/1.1 400") || twice.starts_with("HTTP/1.1 403"),
        "{twice}"
    );
    let absolute = send("POST http://evil.example.com/mcp HTTP/1.1\r\nhost: localhost\r\n".into());
    assert!(absolute.starts_with("HTTP/1.1 403"), "{absolute}");
    let fine = send(format!("POST /mcp HTTP/1.1\r\nhost: {addr}\r\n"));
    assert!(fine.starts_with("HTTP/1.1 200"), "{fine}");
    drop(s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_stream_ends_with_its_session() {
    let s = start(5, 0, Access::default()).await;
    let sid = s.initialize("/mcp", "2025-11-25").await;
    let mut get = s
        .http
        .get(format!("{}/mcp", s.base))
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-11-25")
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), 200);
    let r = s
        .http
        .delete(format!("{}/mcp", s.base))
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let ended = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while let Ok(Some(_)) = get.chunk().await {}
    })
    .await;
    assert!(ended.is_ok(), "the stream outlived its session");
}

/// A `tools/list` at `path` with this cursor: (status, body).
async fn list_at(s: &Server, path: &str, cursor: Option<&str>) -> Answer {
    let mut msg = list();
    if let Some(c) = cursor {
        msg["params"] = json!({"cursor": c});
    }
    s.post(path, &msg, &[]).await
}

fn names(a: &Answer) -> Vec<String> {
    a.body["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {}", a.text))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cursors_are_bound_to_their_endpoint_snapshot_and_server() {
    let s = start(25, 10, Access::default()).await;
    let first = list_at(&s, "/mcp", None).await;
    let page1 = names(&first);
    let c1 = first.body["result"]["nextCursor"]
        .as_str()
        .unwrap()
        .to_string();
    // The cursor works where it was issued, and nowhere else.
    let again = list_at(&s, "/mcp", Some(&c1)).await;
    assert_eq!(names(&again).len(), 10, "{}", again.text);
    assert!(names(&again).iter().all(|n| !page1.contains(n)));
    let min = list_at(&s, "/mcp/min", Some(&c1)).await;
    assert_eq!(min.body["error"]["code"], -32602, "{}", min.text);
    assert!(min.text.contains("first page"), "{}", min.text);
    // Forged, edited and old-style cursors.
    let mut edited = c1.clone().into_bytes();
    edited[0] = if edited[0] == b'1' { b'2' } else { b'1' };
    let edited = String::from_utf8(edited).unwrap();
    let long = "a".repeat(10_000);
    for bad in ["t10", "t20", "", &edited, &c1[..c1.len() - 2], &long] {
        let a = list_at(&s, "/mcp", Some(bad)).await;
        assert_eq!(a.status, 200);
        assert_eq!(a.body["error"]["code"], -32602, "{bad:.40}: {}", a.text);
    }
    // A cursor from another run of the server (another secret) is not one of this server's.
    let other = start(25, 10, Access::default()).await;
    let a = list_at(&other, "/mcp", Some(&c1)).await;
    assert_eq!(a.body["error"]["code"], -32602, "{}", a.text);
    // A row removed between pages: the old cursor is refused as stale, where an offset would
    // have skipped the tool that moved onto page 1.
    let victim = &page1[0];
    let r = s
        .http
        .delete(format!("{}/api/directory/{victim}", s.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let stale = list_at(&s, "/mcp", Some(&c1)).await;
    assert_eq!(stale.body["error"]["code"], -32602, "{}", stale.text);
    assert!(
        stale.text.contains("changed") && stale.text.contains("first page"),
        "{}",
        stale.text
    );
    // Listing again from the start sees every tool once.
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..10 {
        let a = list_at(&s, "/mcp", cursor.as_deref()).await;
        seen.extend(names(&a));
        cursor = a.body["result"]["nextCursor"].as_str().map(String::from);
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(seen.len(), 24);
    assert!(!seen.contains(victim));
    let unique: std::collections::HashSet<_> = seen.iter().collect();
    assert_eq!(unique.len(), 24);
    // The stateless revision pages with the same cursors.
    let h = [("mcp-protocol-version", MODERN)];
    let a = s.post("/mcp", &modern("tools/list", json!({})), &h).await;
    let c = a.body["result"]["nextCursor"].as_str().unwrap().to_string();
    let b = s
        .post("/mcp", &modern("tools/list", json!({"cursor": c})), &h)
        .await;
    assert_eq!(b.body["result"]["tools"].as_array().unwrap().len(), 10);
    // The small surface's list does not follow the directory: its cursors outlive a change.
    let s = start(5, 1, Access::default()).await;
    let small = list_at(&s, "/mcp/small", None).await;
    let c_small = small.body["result"]["nextCursor"]
        .as_str()
        .unwrap()
        .to_string();
    let per_row = list_at(&s, "/mcp", None).await;
    let c_row = per_row.body["result"]["nextCursor"]
        .as_str()
        .unwrap()
        .to_string();
    let key = names(&per_row)[0].clone();
    let r = s
        .http
        .delete(format!("{}/api/directory/{key}", s.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let a = list_at(&s, "/mcp/small", Some(&c_small)).await;
    assert_eq!(names(&a).len(), 1, "{}", a.text);
    let a = list_at(&s, "/mcp", Some(&c_row)).await;
    assert_eq!(a.body["error"]["code"], -32602, "{}", a.text);
}

fn req(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn ids(a: &Answer) -> Vec<Value> {
    a.body
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {}", a.text))
        .iter()
        .map(|r| r["id"].clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_are_answered_at_2025_03_26_and_refused_elsewhere() {
    let s = start(12, 0, Access::default()).await;
    let bearer = format!("Bearer {TOKEN}");
    let auth = [("authorization", bearer.as_str())];
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let call = req(
        3,
        "tools/call",
        json!({"name": "ECHO", "arguments": {"message": "x"}}),
    );
    // Sessionless (served as 2025-03-26): each request answered, in order; notifications not.
    let batch = json!([
        req(1, "tools/list", json!({})),
        note,
        req(2, "ping", json!({})),
        call
    ]);
    let a = s.post("/mcp", &batch, &auth).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(ids(&a), vec![json!(1), json!(2), json!(3)]);
    assert_eq!(a.body[0]["result"]["tools"].as_array().unwrap().len(), 12);
    assert_eq!(a.body[2]["result"]["isError"], false, "{}", a.text);
    // Each answer is what the request alone gets.
    let alone = s.post("/mcp", &req(1, "tools/list", json!({})), &[]).await;
    assert_eq!(a.body[0], alone.body);
    // Only notifications, or only responses: 202 and no body.
    for quiet in [
        json!([note, note]),
        json!([{"jsonrpc": "2.0", "id": 9, "result": {}}]),
    ] {
        let a = s.post("/mcp", &quiet, &[]).await;
        assert_eq!(a.status, 202, "{}", a.text);
        assert!(a.text.is_empty());
    }
    // In a 2025-03-26 session too.
    let sid = s.initialize("/mcp", "2025-03-26").await;
    let in_session = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-03-26"),
    ];
    let a = s
        .post("/mcp", &json!([req(4, "ping", json!({}))]), &in_session)
        .await;
    assert_eq!(ids(&a), vec![json!(4)], "{}", a.text);
    // Other versions keep a clear error.
    for version in ["2025-06-18", "2025-11-25"] {
        let sid = s.initialize("/mcp", version).await;
        let h = [
            ("mcp-session-id", sid.as_str()),
            ("mcp-protocol-version", version),
        ];
        let a = s
            .post("/mcp", &json!([req(5, "ping", json!({}))]), &h)
            .await;
        assert_eq!(a.status, 400, "{}", a.text);
        assert_eq!(a.body["error"]["code"], -32600);
        assert!(a.text.contains("removed"), "{}", a.text);
    }
    let modern_header = [("mcp-protocol-version", MODERN)];
    let a = s
        .post("/mcp", &json!([req(5, "ping", json!({}))]), &modern_header)
        .await;
    assert_eq!(a.status, 400, "{}", a.text);
    // Naming 2025-03-26 without its session is refused as a single request is.
    let a = s
        .post(
            "/mcp",
            &json!([req(5, "ping", json!({}))]),
            &[("mcp-protocol-version", "2025-03-26")],
        )
        .await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert!(a.text.contains("Mcp-Session-Id"), "{}", a.text);
    // Refused whole: empty, too long, with initialize.
    let init = req(
        0,
        "initialize",
        json!({"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let pings = |n: i64| Value::Array((0..n).map(|i| req(i, "ping", json!({}))).collect());
    for (bad, says) in [
        (json!([]), "empty"),
        (pings(101), "100"),
        (json!([req(1, "ping", json!({})), init]), "initialize"),
    ] {
        let a = s.post("/mcp", &bad, &[]).await;
        assert_eq!(a.status, 400, "{}", a.text);
        assert_eq!(a.body["error"]["code"], -32600);
        assert!(a.body["id"].is_null());
        assert!(a.text.contains(says), "{says}: {}", a.text);
    }
    let a = s.post("/mcp", &pings(100), &[]).await;
    assert_eq!(a.body.as_array().unwrap().len(), 100, "{}", a.text);
    // Bad messages inside get their own errors, in place.
    let mixed = json!([
        1,
        req(5, "no/such", json!({})),
        [],
        modern("ping", json!({})),
        {"jsonrpc": "2.0", "id": 6.5, "method": "ping"}
    ]);
    let a = s.post("/mcp", &mixed, &[]).await;
    assert_eq!(a.status, 200, "{}", a.text);
    let codes: Vec<_> = a
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["error"]["code"].clone())
        .collect();
    assert_eq!(
        codes,
        vec![
            json!(-32600),
            json!(-32601),
            json!(-32600),
            json!(-32600),
            json!(-32600)
        ],
        "{}",
        a.text
    );
    assert_eq!(a.body[1]["id"], 5);
    // Mcp-Method on a batch must name every message's method.
    let a = s
        .post(
            "/mcp",
            &json!([req(1, "ping", json!({})), req(2, "tools/list", json!({}))]),
            &[("mcp-method", "ping")],
        )
        .await;
    assert_eq!(a.body["error"]["code"], -32020, "{}", a.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batched_requests_get_the_token_checks_of_single_ones() {
    let call = req(
        2,
        "tools/call",
        json!({"name": "ECHO", "arguments": {"message": "x"}}),
    );
    let bearer = format!("Bearer {TOKEN}");
    for scope in [TokenScope::Calls, TokenScope::List, TokenScope::All] {
        let s = start(
            8,
            0,
            Access {
                token_for: scope,
                ..Access::default()
            },
        )
        .await;
        let before = s.state.receipt_count().unwrap();
        for wrong in [None, Some("Bearer wrong")] {
            let h: Vec<(&str, &str)> = wrong.map(|w| ("authorization", w)).into_iter().collect();
            let a = s
                .post("/mcp", &json!([req(1, "ping", json!({})), call]), &h)
                .await;
            assert_eq!(a.status, 401, "{scope:?}: {}", a.text);
            assert_eq!(a.body["error"]["code"], -32001);
            assert!(a.headers.contains_key("www-authenticate"));
            let a = s
                .post("/mcp", &json!([req(1, "tools/list", json!({}))]), &h)
                .await;
            assert_eq!(
                a.status == 200,
                scope == TokenScope::Calls,
                "{scope:?} list: {}",
                a.text
            );
            let a = s
                .post("/mcp", &json!([req(1, "ping", json!({}))]), &h)
                .await;
            assert_eq!(
                a.status == 200,
                scope != TokenScope::All,
                "{scope:?} ping: {}",
                a.text
            );
        }
        assert_eq!(s.state.receipt_count().unwrap(), before, "nothing ran");
        let a = s
            .post(
                "/mcp",
                &json!([call]),
                &[("authorization", bearer.as_str())],
            )
            .await;
        assert_eq!(a.body[0]["result"]["isError"], false, "{}", a.text);
        assert_eq!(s.state.receipt_count().unwrap(), before + 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_stops_running_when_its_budget_is_spent() {
    let bearer = format!("Bearer {TOKEN}");
    let auth = [("authorization", bearer.as_str())];
    let call = |id: i64| {
        req(
            id,
            "tools/call",
            json!({"name": "ECHO", "arguments": {"message": "x"}}),
        )
    };
    // Bytes: the first whole list fills the budget, the rest are answered "not run".
    let limits = server::Limits {
        tools_page: 0,
        batch_bytes: 1_000,
        ..server::Limits::default()
    };
    let s = start_with(30, limits, Access::default()).await;
    let lists = Value::Array((0..100).map(|i| req(i, "tools/list", json!({}))).collect());
    let a = s.post("/mcp", &lists, &auth).await;
    let answers = a.body.as_array().unwrap();
    assert_eq!(answers.len(), 100);
    assert!(answers[0]["result"]["tools"].is_array());
    assert!(answers[1..].iter().all(|r| r["error"]["code"] == -32000));
    assert!(
        a.text.len() < 2 * answers[0].to_string().len() + 100 * 200,
        "the answer stays near the budget"
    );
    assert!(answers[1]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("not run"));
    // Without the token the budget is the smaller open one, whatever the limit says: a few
    // hundred bytes of batch cannot make the server hold megabytes for a caller who then
    // stops reading.
    let limits = server::Limits {
        tools_page: 0,
        ..server::Limits::default()
    };
    let s = start_with(856, limits, Access::default()).await;
    let a = s.post("/mcp", &lists, &[]).await;
    let answers = a.body.as_array().unwrap();
    let ran = answers.iter().filter(|r| r["result"].is_object()).count();
    let whole = answers[0].to_string().len();
    assert!(whole > 200_000, "a whole list of 856 rows: {whole} bytes");
    assert_eq!(
        ran,
        server::Limits::default().open_batch_bytes.div_ceil(whole),
        "{}",
        answers[ran]["error"]["message"]
    );
    assert!(answers[ran]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("callers with the token get a larger budget"));
    let a = s.post("/mcp", &lists, &auth).await;
    let ran_with_token = a
        .body
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["result"].is_object())
        .count();
    assert!(
        ran_with_token > ran,
        "{ran_with_token} with the token, {ran} without"
    );
    // Time: a spent budget runs nothing more; notifications left are dropped.
    let limits = server::Limits {
        batch_time: std::time::Duration::ZERO,
        ..server::Limits::default()
    };
    let s = start_with(8, limits, Access::default()).await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let a = s
        .post("/mcp", &json!([call(1), note, call(2)]), &auth)
        .await;
    assert_eq!(ids(&a), vec![json!(1), json!(2)], "{}", a.text);
    assert!(a
        .body
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["error"]["code"] == -32000));
    assert_eq!(s.state.receipt_count().unwrap(), 0, "nothing ran");
}

#[test]
fn over_stdio_a_batch_line_is_answered_at_2025_03_26_only() {
    use std::io::Write;
    let run = |lines: &[Value]| -> Vec<Value> {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
            .args(["serve", "--stdio", "--rows", "5"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        for l in lines {
            writeln!(stdin, "{l}").unwrap();
        }
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let init = |v: &str| {
        req(
            0,
            "initialize",
            json!({"protocolVersion": v, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        )
    };
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let batch = json!([
        req(1, "ping", json!({})),
        note,
        req(2, "tools/list", json!({}))
    ]);
    let out = run(&[init("2025-03-26"), batch.clone(), json!([note])]);
    assert_eq!(out.len(), 2, "{out:?}");
    let answers = out[1].as_array().unwrap();
    assert_eq!(answers[0]["id"], 1);
    assert_eq!(answers[1]["result"]["tools"].as_array().unwrap().len(), 5);
    let out = run(&[init("2025-06-18"), batch]);
    assert_eq!(out[1]["error"]["code"], -32600, "{out:?}");
}

/// The class "tokenless peers take every stream slot": with a token set, tokenless listens
/// get three quarters of the slots, and a token holder still opens one past them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokenless_streams_leave_slots_for_token_holders() {
    let limits = server::Limits {
        max_streams: 8,
        ..server::Limits::default()
    };
    let s = start_with(20, limits, Access::default()).await;
    let mut open = Vec::new();
    for _ in 0..6 {
        let r = listen(&s).await;
        assert_eq!(r.status(), 200);
        open.push(r);
    }
    assert_eq!(
        listen(&s).await.status(),
        503,
        "tokenless peers hold their share"
    );
    let held = listen_as(&s, Some(TOKEN)).await;
    assert_eq!(held.status(), 200, "a token holder still gets a stream");
    drop(open);
}
