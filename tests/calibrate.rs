//! Estimate beside observation, and calibration from the log (issue 13, items 4 and 5), with no
//! provider: a local HTTPS upstream (a CA made in the test, trusted with `ca_cert`) answers in
//! the provider's format, whole and streamed, with usage that is toolcost's own estimate of the
//! request times a known factor per model. The gateway logs the observed usage beside its
//! estimate; `calibrate` recovers each factor; `measure --calibration` applies it and says so.
//! Also: a log written before the estimate columns is read and migrated; request bodies are
//! stored only with `log_bodies`. Network: 127.0.0.1 on port 0 only.

#[path = "support/upstream.rs"]
mod upstream;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;
use toolcost::billing::billed_input;
use toolcost::gateway::mock::card_for;
use toolcost::gateway::{self, log, Gateway, Upstream};
use toolcost::provider::Format;
use toolcost::wire::Request;
use upstream::{End, Reply};

const CLAUDE: &str = "claude-sonnet-4-5";
const GPT: &str = "gpt-4o";

/// The factor the fake provider bills at, per model.
fn factor(model: &str) -> f64 {
    if model == CLAUDE {
        1.07
    } else {
        0.93
    }
}

fn format_of(path: &str) -> Format {
    if path.starts_with("/v1/messages") {
        Format::AnthropicMessages
    } else {
        Format::OpenaiChat
    }
}

/// toolcost's estimate of a request's input tokens, computed as the gateway does.
fn estimate(format: Format, body: &[u8]) -> u64 {
    let req = Request::parse(format, body).unwrap();
    let model = req.body["model"].as_str().unwrap().to_string();
    let card = card_for(format, &model);
    billed_input(&req, card.render_model(), card.tokenizer()).input_tokens
}

/// The fake provider: the request's estimate times the model's factor, in its own format.
fn provider(r: &upstream::Request) -> Reply {
    let format = format_of(&r.path);
    let body: Value = serde_json::from_slice(&r.body).unwrap();
    let model = body["model"].as_str().unwrap().to_string();
    let input = (estimate(format, &r.body) as f64 * factor(&model)).round() as u64;
    let stream = body["stream"].as_bool().unwrap_or(false);
    let sse = |events: Vec<String>| Reply::Stream {
        status: 200,
        content_type: "text/event-stream".into(),
        chunks: events
            .into_iter()
            .map(|e| (Duration::ZERO, e.into_bytes()))
            .collect(),
        end: End::Clean,
    };
    match (format, stream) {
        (Format::AnthropicMessages, false) => {
            Reply::json(200, &upstream::anthropic_answer(input, 9))
        }
        (Format::AnthropicMessages, true) => sse(upstream::anthropic_events(input, 9)),
        (Format::OpenaiChat, false) => Reply::json(
            200,
            &json!({"id": "chatcmpl-1", "object": "chat.completion", "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": input, "completion_tokens": 9, "total_tokens": input + 9}})
            .to_string(),
        ),
        (Format::OpenaiChat, true) => {
            let chunk = |delta: Value, finish: Value| {
                format!(
                    "data: {}\n\n",
                    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model,
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
                )
            };
            sse(vec![
                chunk(json!({"role": "assistant", "content": ""}), Value::Null),
                chunk(json!({"content": "hi"}), Value::Null),
                chunk(json!({}), json!("stop")),
                format!(
                    "data: {}\n\n",
                    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model, "choices": [],
                        "usage": {"prompt_tokens": input, "completion_tokens": 9, "total_tokens": input + 9}})
                ),
                "data: [DONE]\n\n".to_string(),
            ])
        }
        #[allow(unreachable_patterns)]
        _ => Reply::json(400, r#"{"error":{"message":"format not replayed here"}}"#),
    }
}

struct Gw {
    base: String,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn gateway_to(upstream: String, ca: PathBuf, log: PathBuf, log_bodies: bool) -> Gw {
    let gw = Gateway::new(gateway::Options {
        upstream: Upstream::Url(upstream),
        api_key: None,
        log: log.clone(),
        timeout: Duration::from_secs(30),
        max_body: gateway::DEFAULT_MAX_BODY,
        max_response: gateway::DEFAULT_MAX_RESPONSE,
        ca_cert: Some(ca),
        log_bodies,
        body_idle: gateway::BODY_IDLE,
    })
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(gateway::run(listener, gw, async move {
        let _ = rx.await;
    }));
    Gw { base, _stop: tx }
}

/// `k` tools with varied descriptions, in the format's tool shape.
fn tools(format: Format, k: usize) -> Vec<Value> {
    (0..k)
        .map(|i| {
            let name = format!("tool_{i}");
            let description = format!(
                "Look up record {i} in the {} ledger and return its fields; {}",
                ["sales", "inventory", "billing", "support"][i % 4],
                "use when the user names a record. ".repeat(1 + i % 3)
            );
            let schema = json!({"type": "object", "properties": {"id": {"type": "string", "description": "record id"}, "limit": {"type": "integer"}}, "required": ["id"]});
            match format {
                Format::AnthropicMessages => {
                    json!({"name": name, "description": description, "input_schema": schema})
                }
                Format::OpenaiChat => {
                    json!({"type": "function", "function": {"name": name, "description": description, "parameters": schema}})
                }
                #[allow(unreachable_patterns)]
                _ => unreachable!(),
            }
        })
        .collect()
}

/// Request `i` of the varied set: model, format, tools, turns, streamed or not.
fn request(i: usize) -> (&'static str, String, Option<String>) {
    let anthropic = i.is_multiple_of(2);
    let stream = (i / 2) % 2 == 1;
    let turn = format!(
        "Please find record {i} and summarise it. {}",
        "Mention every field. ".repeat(i)
    );
    let surface = ["per-row-mcp", "small-mcp", "protocol-only"][i % 3];
    let metadata = (i % 4 != 3).then(|| json!({"surface": surface, "n": 3 + i}).to_string());
    if anthropic {
        let body = json!({"model": CLAUDE, "max_tokens": 64, "stream": stream,
            "system": format!("You are a careful assistant number {i}."),
            "tools": tools(Format::AnthropicMessages, 3 + i),
            "messages": [{"role": "user", "content": turn}]});
        ("/v1/messages", body.to_string(), metadata)
    } else {
        let mut body = json!({"model": GPT, "stream": stream,
            "messages": [{"role": "system", "content": format!("You are a careful assistant number {i}.")},
                         {"role": "user", "content": turn}],
            "tools": tools(Format::OpenaiChat, 2 + i)});
        if stream {
            body["stream_options"] = json!({"include_usage": true});
        }
        ("/v1/chat/completions", body.to_string(), metadata)
    }
}

async fn send(gw: &Gw, path: &str, body: &str, metadata: Option<&str>) -> String {
    let mut rb = reqwest::Client::new()
        .post(format!("{}{path}", gw.base))
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(m) = metadata {
        rb = rb.header("x-toolcost-metadata", m);
    }
    let r = rb.send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    r.text().await.unwrap()
}

fn toolcost(args: &[&str]) -> (i32, String, String) {
    let o = std::process::Command::new(assert_cmd::cargo::cargo_bin("toolcost"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calibrate_recovers_the_factor_the_provider_bills_at() {
    let dir = tempfile::tempdir().unwrap();
    let pki = upstream::pki(&["127.0.0.1"]);
    let port = upstream::serve_tls(pki.acceptor.clone(), provider).await;
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &pki.ca_pem).unwrap();
    let log_path = dir.path().join("log.sqlite");
    let gw = gateway_to(
        format!("https://127.0.0.1:{port}"),
        ca,
        log_path.clone(),
        false,
    )
    .await;

    let requests: Vec<_> = (0..12).map(request).collect();
    for (path, body, metadata) in &requests {
        let answer = send(&gw, path, body, metadata.as_deref()).await;
        assert!(answer.contains("usage"), "{answer}");
    }

    // Every row: observed usage, and the estimate beside it.
    let rows = log::read_all(&log_path).unwrap();
    assert_eq!(rows.len(), 12);
    for (row, (path, body, _)) in rows.iter().zip(&requests) {
        let est = estimate(format_of(path), body.as_bytes());
        assert_eq!(row.usage_source, "observed", "{row:?}");
        assert_eq!(row.error, None, "{row:?}");
        assert_eq!(row.estimated_input_tokens, Some(est), "{row:?}");
        let card = card_for(format_of(path), &row.model);
        assert_eq!(
            row.estimate_label.as_deref(),
            Some(card.tokenizer().label().as_str())
        );
        assert_eq!(
            row.input_tokens,
            (est as f64 * factor(&row.model)).round() as u64
        );
        assert!(row.estimated_cached_input_tokens.is_some());
    }
    // No body is stored without --log-bodies.
    let conn = rusqlite::Connection::open(&log_path).unwrap();
    let bodies: i64 = conn
        .query_row("SELECT COUNT(*) FROM request_body", [], |r| r.get(0))
        .unwrap();
    assert_eq!(bodies, 0);
    drop(conn);

    // In process: each model's ratio and correction within 1% of its factor.
    let cal = toolcost::calibrate::calibrate(&log_path).unwrap();
    for model in [CLAUDE, GPT] {
        let all = cal
            .iter()
            .find(|r| r.model == model && r.surface == "all")
            .unwrap_or_else(|| panic!("no row for {model}: {cal:?}"));
        assert_eq!(all.n, 6);
        let f = factor(model);
        assert!((all.ratio_mean / f - 1.0).abs() < 0.01, "{all:?}");
        assert!((all.correction / f - 1.0).abs() < 0.01, "{all:?}");
        assert!(all.mape_corrected_pct < all.mape_pct, "{all:?}");
        assert!(all.ratio_min <= all.ratio_mean && all.ratio_mean <= all.ratio_max);
    }
    // Per surface where the metadata names one (rows 3, 7, 11 name none).
    let surfaces: usize = cal.iter().filter(|r| r.surface != "all").map(|r| r.n).sum();
    assert_eq!(surfaces, 9);

    // The command: the table as JSON, and the corrections file.
    let cal_file = dir.path().join("calibration.toml");
    let (code, out, err) = toolcost(&[
        "calibrate",
        "--log",
        log_path.to_str().unwrap(),
        "--json",
        "--out",
        cal_file.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let json: Vec<toolcost::calibrate::CalibrationRow> = serde_json::from_str(&out).unwrap();
    // The same rows (JSON floats read back to within an ulp or so).
    assert_eq!(json.len(), cal.len());
    for (j, c) in json.iter().zip(&cal) {
        assert_eq!((&j.model, &j.surface, j.n), (&c.model, &c.surface, c.n));
        assert!((j.correction - c.correction).abs() < 1e-12);
    }
    let file = toolcost::calibrate::Calibration::load(&cal_file).unwrap();
    assert_eq!(file.model.len(), 2);
    assert_eq!(file.log, log_path.display().to_string());
    let claude = &file.model[CLAUDE];
    assert_eq!((claude.card.as_str(), claude.n), ("claude-sonnet-4.5", 6));
    assert!((claude.correction / 1.07 - 1.0).abs() < 0.01);
    assert!(!claude.surface.is_empty());

    // measure --calibration: the rows of the card's own estimate (the earlier Claude tokenizer, counted exactly)
    // change and say so; cl100k rows do not.
    let (code, plain, err) = toolcost(&[
        "measure",
        "--rows",
        "20",
        "--model",
        "claude-sonnet-4.5",
        "--tokenizer",
        "claude-v3,cl100k",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, calibrated, err) = toolcost(&[
        "measure",
        "--rows",
        "20",
        "--model",
        "claude-sonnet-4.5",
        "--tokenizer",
        "claude-v3,cl100k",
        "--json",
        "--calibration",
        cal_file.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let plain: Vec<Value> = serde_json::from_str(&plain).unwrap();
    let calibrated: Vec<Value> = serde_json::from_str(&calibrated).unwrap();
    assert_eq!(plain.len(), calibrated.len());
    let want = format!(
        "calibrated:calibration.toml(x{:.3} ±{:.1}%, n=6)",
        claude.correction, claude.spread_pct
    );
    for (p, c) in plain.iter().zip(&calibrated) {
        if p["tokenizer"] == "claude-v3" {
            assert_eq!(c["label"], want.as_str());
            assert!(c["cost_label"].as_str().unwrap().contains(&want));
            let (pi, ci) = (
                p["input_tokens"].as_f64().unwrap(),
                c["input_tokens"].as_f64().unwrap(),
            );
            assert!(
                (ci - (pi * claude.correction).round()).abs() <= 0.5,
                "{p} {c}"
            );
            if let (Some(pc), Some(cc)) = (p["cost_usd"].as_f64(), c["cost_usd"].as_f64()) {
                assert!(cc > pc, "the input part grows with a correction over 1");
            }
        } else {
            assert_eq!(p, c, "a row the calibration does not cover is unchanged");
        }
    }
}

/// The first schema of the log table, before the estimate columns.
const OLD_DDL: &str = "CREATE TABLE log (
    id INTEGER PRIMARY KEY AUTOINCREMENT, created_at TEXT NOT NULL, provider_format TEXT NOT NULL,
    model TEXT NOT NULL, path TEXT NOT NULL, status INTEGER NOT NULL, duration_ms REAL NOT NULL,
    request_bytes INTEGER NOT NULL, response_bytes INTEGER NOT NULL, input_tokens INTEGER NOT NULL,
    cached_input_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL, cost_usd REAL NOT NULL, usage_source TEXT NOT NULL,
    stream INTEGER NOT NULL, error TEXT, metadata TEXT NOT NULL)";

fn old_log(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(OLD_DDL).unwrap();
    conn.execute(
        "INSERT INTO log (created_at, provider_format, model, path, status, duration_ms, request_bytes, response_bytes,
            input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, cost_usd, usage_source, stream, error, metadata)
         VALUES ('2026-01-01T00:00:00Z', 'anthropic-messages', 'claude-sonnet-4-5', '/v1/messages', 200, 1.0, 100, 50,
            1234, 0, 0, 7, 0.01, 'observed', 0, NULL, '{}')",
        [],
    )
    .unwrap();
}

#[test]
fn a_log_from_before_the_estimate_columns_is_read_and_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    old_log(&path);

    // Read as it is (read-only): the estimate is empty, and calibrate says why it has nothing.
    let rows = log::read_all(&path).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].input_tokens, 1234);
    assert_eq!(rows[0].estimated_input_tokens, None);
    assert_eq!(rows[0].estimate_label, None);
    let err = toolcost::calibrate::calibrate(&path)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no row has both observed usage and an estimate"),
        "{err}"
    );

    // Opened by a gateway: the columns are added, old rows kept, new rows carry estimates.
    let conn = log::open(&path).unwrap();
    log::insert(
        &conn,
        &log::LogRow {
            model: "claude-sonnet-4-5".into(),
            provider_format: "anthropic-messages".into(),
            status: 200,
            input_tokens: 1100,
            usage_source: "observed".into(),
            metadata: "{}".into(),
            ..Default::default()
        }
        .with_estimate(Some(&log::Estimate {
            input_tokens: 1000,
            label: "estimated:o200k".into(),
            ..Default::default()
        })),
    )
    .unwrap();
    drop(conn);
    // Opening again is a no-op (no column added twice).
    drop(log::open(&path).unwrap());
    let rows = log::read_all(&path).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].estimated_input_tokens, None);
    assert_eq!(rows[1].estimated_input_tokens, Some(1000));
    assert_eq!(rows[1].estimate_label.as_deref(), Some("estimated:o200k"));
    let cal = toolcost::calibrate::calibrate(&path).unwrap();
    assert_eq!(cal.len(), 1);
    assert_eq!(cal[0].n, 1);
    assert!((cal[0].correction - 1.1).abs() < 1e-9);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_bodies_are_stored_only_with_log_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let pki = upstream::pki(&["127.0.0.1"]);
    let port = upstream::serve_tls(pki.acceptor.clone(), provider).await;
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &pki.ca_pem).unwrap();
    let log_path = dir.path().join("bodies.sqlite");
    let gw = gateway_to(
        format!("https://127.0.0.1:{port}"),
        ca,
        log_path.clone(),
        true,
    )
    .await;
    let (path, body, _) = request(1);
    send(&gw, path, &body, None).await;
    let conn = rusqlite::Connection::open(&log_path).unwrap();
    let (id, stored): (i64, Vec<u8>) = conn
        .query_row(
            "SELECT log.id, request_body.body FROM log JOIN request_body ON request_body.log_id = log.id",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(id, 1);
    assert_eq!(stored, body.as_bytes());
}

/// A log row of observed usage beside an estimate, for a model and format.
fn observed_row(model: &str, format: &str, observed: u64, estimated: u64) -> log::LogRow {
    log::LogRow {
        created_at: "2026-12-01T00:00:00Z".into(),
        provider_format: format.into(),
        model: model.into(),
        path: "/v1/messages".into(),
        status: 200,
        input_tokens: observed,
        output_tokens: 5,
        usage_source: "observed".into(),
        estimated_input_tokens: Some(estimated),
        estimate_label: Some("estimated:o200k".into()),
        metadata: json!({"surface": "per-row-mcp"}).to_string(),
        ..Default::default()
    }
}

/// A row whose request held `parts` media parts its estimate left out.
fn media_row(parts: usize) -> log::LogRow {
    let mut row = observed_row(GPT, "openai-chat", 3_000, 1_000);
    row.estimate_label = Some(format!(
        "estimated:o200k; {parts} {}",
        toolcost::billing::render::MEDIA_NOT_COUNTED
    ));
    row
}

/// The class "a correction filed under another model's card": a log of models without a card
/// of their own (a local model, a name that only contains a card's) yields no correction, and a
/// hand-made file that files one under another card is never applied to that card's rows.
#[test]
fn no_correction_reaches_a_model_it_was_not_measured_on() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("log.sqlite");
    let conn = log::open(&db).unwrap();
    for (model, format) in [
        ("my-local-llama", "anthropic-messages"),
        ("gpt-4o-mini-clone", "openai-chat"),
        ("claude-sonnet-4-6-finetune-x", "anthropic-messages"),
    ] {
        for i in 0..4 {
            log::insert(&conn, &observed_row(model, format, 2_000 + i, 1_000)).unwrap();
        }
    }
    drop(conn);
    let rows = toolcost::calibrate::calibrate(&db).unwrap();
    assert!(rows.iter().all(|r| r.card.is_empty()), "{rows:?}");
    let cal = toolcost::calibrate::Calibration::from_rows(&db, &rows);
    assert!(
        cal.model.is_empty(),
        "nothing is filed: {:?}",
        cal.model.keys()
    );

    // A file that says otherwise is not believed.
    let file = dir.path().join("cal.toml");
    std::fs::write(
        &file,
        "log = \"x\"\ndate = \"2026-12-01\"\nestimator = \"e\"\n\n[model.\"gpt-4o-mini-clone\"]\ncard = \"gpt-4o\"\ncorrection = 5.0\nn = 4\nratio_mean = 0.2\nratio_sd = 0.0\nratio_min = 0.2\nratio_max = 0.2\nspread_pct = 0.0\nmape_pct = 0.0\nestimate_label = \"estimated:o200k\"\n",
    )
    .unwrap();
    let cal = toolcost::calibrate::Calibration::load(&file).unwrap();
    let (code, out, err) = toolcost(&[
        "measure",
        "--rows",
        "5",
        "--model",
        "gpt-4o",
        "--tokenizer",
        "o200k",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let mut measured: Vec<toolcost::measure::MeasureRow> = serde_json::from_str(&out).unwrap();
    assert_eq!(cal.apply("cal.toml", &mut measured).unwrap(), 0);
    assert!(measured.iter().all(|r| !r.label.starts_with("calibrated")));
}

/// The class "implausible usage": rows whose observed input is absurdly far from the
/// estimate (a broken or hostile upstream) do not move the fit.
#[test]
fn implausible_rows_do_not_move_a_correction() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("log.sqlite");
    let conn = log::open(&db).unwrap();
    for _ in 0..5 {
        log::insert(&conn, &observed_row(GPT, "openai-chat", 1_100, 1_000)).unwrap();
    }
    for observed in [9_000_000_000_000_000u64, 1, 40_000] {
        log::insert(&conn, &observed_row(GPT, "openai-chat", observed, 1_000)).unwrap();
    }
    drop(conn);
    let rows = toolcost::calibrate::calibrate(&db).unwrap();
    let all = rows.iter().find(|r| r.surface == "all").unwrap();
    assert_eq!(all.n, 5, "{all:?}");
    assert!((all.correction - 1.1).abs() < 1e-9, "{all:?}");
}

/// Rows left out are counted and said, and a log whose every row is out of bounds says that,
/// not that no row has both figures.
#[test]
fn rows_left_out_are_counted_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("log.sqlite");
    let conn = log::open(&db).unwrap();
    for observed in [9_000_000u64, 1] {
        log::insert(&conn, &observed_row(GPT, "openai-chat", observed, 1_000)).unwrap();
    }
    drop(conn);
    let err = toolcost::calibrate::calibrate(&db).unwrap_err().to_string();
    assert!(
        err.contains("2 row(s) have both") && err.contains("4x apart"),
        "{err}"
    );
    let conn = log::open(&db).unwrap();
    log::insert(&conn, &observed_row(GPT, "openai-chat", 1_100, 1_000)).unwrap();
    let mut failed = observed_row(GPT, "openai-chat", 1_100, 1_000);
    failed.status = 500;
    log::insert(&conn, &failed).unwrap();
    // A request whose images the estimate left out: its gap is the images', not the count's.
    log::insert(&conn, &media_row(2)).unwrap();
    drop(conn);
    let (rows, left) = toolcost::calibrate::calibrate_counting(&db).unwrap();
    assert_eq!(rows.iter().find(|r| r.surface == "all").unwrap().n, 1);
    assert!(
        rows.iter().all(|r| !r.estimate_label.contains("media")),
        "{rows:?}"
    );
    assert_eq!(
        (left.without_both, left.out_of_bounds, left.with_media),
        (1, 2, 1)
    );
    let (code, _, err) = toolcost(&["calibrate", "--log", db.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("left out 4 row(s)"), "{err}");
    assert!(err.contains("1 whose request held media parts"), "{err}");
}

/// A log whose every pair held media parts the estimate does not count says so, not that no
/// row has both figures.
#[test]
fn a_log_of_media_requests_alone_says_why_nothing_is_fitted() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("log.sqlite");
    let conn = log::open(&db).unwrap();
    log::insert(&conn, &media_row(1)).unwrap();
    drop(conn);
    let err = toolcost::calibrate::calibrate(&db).unwrap_err().to_string();
    assert!(err.contains("held media parts"), "{err}");
}
