//! Hostile peers against the client half of toolcost (issue 14, items 12-20 and the minor
//! client items): an upstream that cuts, stalls, lies about usage or answers in HTML; a client
//! that walks away; MCP servers that never end a line, loop their cursor, name two tools alike,
//! leave grandchildren behind or hang their DELETE. Network: 127.0.0.1 on port 0 only; every
//! wait is bounded.

mod common;
#[path = "support/upstream.rs"]
mod upstream;

use assert_cmd::Command;
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toolcost::gateway::{self, log, Gateway, Upstream};
use upstream::{anthropic_events, End, Reply};

// ---------------------------------------------------------------- gateway

struct Gw {
    base: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn gateway_with(upstream: Upstream, timeout: Duration, max_response: usize) -> Gw {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.sqlite");
    let gw = Gateway::new(gateway::Options {
        upstream,
        api_key: None,
        log: log.clone(),
        timeout,
        max_body: gateway::DEFAULT_MAX_BODY,
        max_response,
        ca_cert: None,
        log_bodies: false,
        body_idle: gateway::BODY_IDLE,
    })
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(gateway::run(listener, gw, async move {
        let _ = rx.await;
    }));
    Gw {
        base,
        log,
        _dir: dir,
        _stop: tx,
    }
}

async fn forwarding_to(upstream_base: &str, timeout: Duration) -> Gw {
    gateway_with(
        Upstream::Url(upstream_base.to_string()),
        timeout,
        gateway::DEFAULT_MAX_RESPONSE,
    )
    .await
}

const MESSAGES: &str =
    r#"{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}"#;
const STREAMED: &str = r#"{"model":"claude-sonnet-4-5","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}"#;

async fn post(gw: &Gw, path: &str, body: &str) -> (u16, String) {
    let r = reqwest::Client::new()
        .post(format!("{}{path}", gw.base))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.text().await.unwrap_or_default())
}

/// The log's rows once there are `n` of them (bounded wait: rows are written as answers end).
async fn rows(gw: &Gw, n: usize) -> Vec<log::LogRow> {
    for _ in 0..200 {
        let rows = log::read_all(&gw.log).unwrap_or_default();
        // A stream's row is written when it begins and completed at its end.
        if rows.len() >= n && rows.iter().all(|r| r.usage_source != log::IN_FLIGHT) {
            return rows;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    log::read_all(&gw.log).unwrap_or_default()
}

fn stream_of(events: &[String], pause: Duration, end: End) -> Reply {
    Reply::Stream {
        status: 200,
        content_type: "text/event-stream".into(),
        chunks: events
            .iter()
            .map(|e| (pause, e.as_bytes().to_vec()))
            .collect(),
        end,
    }
}

/// Item 12: a client that goes away mid-stream still leaves a row (499, with the usage seen).
#[tokio::test]
async fn a_client_gone_mid_stream_leaves_a_499_row() {
    let up = upstream::serve(|_| {
        let mut events = anthropic_events(1234, 5);
        let delta = events[2].clone();
        events.truncate(2);
        events.extend(std::iter::repeat_n(delta, 200));
        stream_of(&events, Duration::from_millis(40), End::Clean)
    })
    .await;
    let gw = forwarding_to(&up, Duration::from_secs(30)).await;
    let mut resp = reqwest::Client::new()
        .post(format!("{}/v1/messages", gw.base))
        .body(STREAMED)
        .send()
        .await
        .unwrap();
    let first = resp.chunk().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("message_start"));
    drop(resp);
    let rows = rows(&gw, 1).await;
    assert_eq!(rows.len(), 1, "one row for the call the client abandoned");
    assert_eq!(rows[0].status, 499);
    assert_eq!(rows[0].input_tokens, 1234, "the usage seen so far is kept");
    assert!(rows[0]
        .error
        .as_deref()
        .unwrap()
        .contains("client went away"));
}

/// Item 13: a stream that ends early but cleanly reaches the client with an error event.
#[tokio::test]
async fn a_stream_that_ends_early_gets_an_error_event() {
    let up = upstream::serve(|_| {
        let events = anthropic_events(10, 2);
        stream_of(&events[..3], Duration::ZERO, End::Clean)
    })
    .await;
    let gw = forwarding_to(&up, Duration::from_secs(30)).await;
    let (status, body) = post(&gw, "/v1/messages", STREAMED).await;
    assert_eq!(status, 200);
    assert!(body.contains("text_delta"), "what came is passed: {body}");
    assert!(
        body.ends_with("\n\n") && body.contains("\n\nevent: error\ndata: {"),
        "an error event ends it: {body}"
    );
    let rows = rows(&gw, 1).await;
    assert!(rows[0]
        .error
        .as_deref()
        .unwrap()
        .contains("before its final event"));
}

/// Item 13: an error event after a cut chunk starts on an event boundary, not inside the
/// half-sent event.
#[tokio::test]
async fn an_error_after_a_cut_chunk_is_not_glued_to_it() {
    let up = upstream::serve(|_| {
        let events = anthropic_events(10, 2);
        let half = "event: content_block_delta\ndata: {\"type\":\"content_blo".to_string();
        let chunks = vec![events[0].clone(), events[1].clone(), half];
        stream_of(&chunks, Duration::ZERO, End::Cut)
    })
    .await;
    let gw = forwarding_to(&up, Duration::from_secs(30)).await;
    let (_, body) = post(&gw, "/v1/messages", STREAMED).await;
    assert!(!body.contains("content_blo\""), "no half event: {body}");
    assert!(!body.contains("content_bloevent"), "nothing glued: {body}");
    let events: Vec<&str> = body.split("\n\n").filter(|e| !e.is_empty()).collect();
    let last = events.last().unwrap();
    assert!(last.starts_with("event: error\ndata: "), "{body}");
    let data: serde_json::Value =
        serde_json::from_str(last.trim_start_matches("event: error\ndata: ")).unwrap();
    assert_eq!(data["type"], "error");
    for e in &events {
        let d = e.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
        serde_json::from_str::<serde_json::Value>(d).expect("every event is whole JSON");
    }
}

/// Item 13: `--timeout` is an idle timeout: a stream longer than it that keeps sending is
/// passed whole.
#[tokio::test]
async fn the_timeout_is_idle_not_a_cap_on_a_long_stream() {
    let up = upstream::serve(|_| {
        let mut events = anthropic_events(10, 2);
        let delta = events[2].clone();
        let tail = events.split_off(3);
        events.extend(std::iter::repeat_n(delta, 25));
        events.extend(tail);
        stream_of(&events, Duration::from_millis(60), End::Clean)
    })
    .await;
    // The whole stream takes about 2 s; the upstream is never silent for 0.8 s.
    let gw = forwarding_to(&up, Duration::from_millis(800)).await;
    let (status, body) = post(&gw, "/v1/messages", STREAMED).await;
    assert_eq!(status, 200);
    assert!(body.contains("message_stop"), "passed whole: {body}");
    assert!(!body.contains("event: error"), "{body}");
    let rows = rows(&gw, 1).await;
    assert_eq!(rows[0].error, None);
    assert_eq!(rows[0].output_tokens, 2);
}

/// Item 13: a stream that stalls past the idle timeout is cut with an error event.
#[tokio::test]
async fn a_stalled_stream_is_cut_with_an_error_event() {
    let up = upstream::serve(|_| {
        let events = anthropic_events(10, 2);
        let mut chunks: Vec<(Duration, Vec<u8>)> = events[..2]
            .iter()
            .map(|e| (Duration::ZERO, e.as_bytes().to_vec()))
            .collect();
        chunks.push((Duration::from_secs(20), events[2].as_bytes().to_vec()));
        Reply::Stream {
            status: 200,
            content_type: "text/event-stream".into(),
            chunks,
            end: End::Clean,
        }
    })
    .await;
    let gw = forwarding_to(&up, Duration::from_millis(500)).await;
    let (_, body) = post(&gw, "/v1/messages", STREAMED).await;
    assert!(body.contains("event: error"), "{body}");
    assert!(body.contains("stalled"), "{body}");
}

/// Item 14: an upstream error in HTML is answered in the provider's own error format, for
/// each format.
#[tokio::test]
async fn an_html_500_is_answered_in_the_provider_format() {
    let up = upstream::serve(|_| Reply::Whole {
        status: 500,
        content_type: "text/html".into(),
        headers: Vec::new(),
        body: b"<html><body>Internal Server Error</body></html>".to_vec(),
    })
    .await;
    let gw = forwarding_to(&up, Duration::from_secs(30)).await;
    let (status, body) = post(&gw, "/v1/messages", MESSAGES).await;
    assert_eq!(status, 500);
    let v: serde_json::Value = serde_json::from_str(&body).expect("JSON, not HTML");
    assert_eq!(v["type"], "error");
    assert_eq!(v["error"]["type"], "api_error");
    assert!(v["error"]["message"].as_str().unwrap().contains("HTTP 500"));
    let chat = r#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}"#;
    let (status, body) = post(&gw, "/v1/chat/completions", chat).await;
    assert_eq!(status, 500);
    let v: serde_json::Value = serde_json::from_str(&body).expect("JSON, not HTML");
    assert!(v["error"]["message"].is_string(), "{v}");
    let rows = rows(&gw, 2).await;
    assert!(rows.iter().all(|r| r.status == 500 && r.error.is_some()));
}

/// Item 15: usage near u64::MAX is flagged, never logged as a wrapped number.
#[tokio::test]
async fn wrapped_usage_is_flagged_not_logged() {
    let up = upstream::serve(|r| {
        if r.path.contains("chat") {
            Reply::json(200, r#"{"id":"c","object":"chat.completion","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":18446744073709551615}}}"#)
        } else {
            Reply::json(200, r#"{"id":"m","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":18446744073709551615,"cache_read_input_tokens":18446744073709551615,"output_tokens":18446744073709551615}}"#)
        }
    })
    .await;
    let gw = forwarding_to(&up, Duration::from_secs(30)).await;
    let (s1, _) = post(&gw, "/v1/messages", MESSAGES).await;
    let chat = r#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}"#;
    let (s2, _) = post(&gw, "/v1/chat/completions", chat).await;
    assert_eq!((s1, s2), (200, 200), "the answer still passes");
    let rows = rows(&gw, 2).await;
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(
            (
                r.input_tokens,
                r.cached_input_tokens,
                r.output_tokens,
                r.cost_usd
            ),
            (0, 0, 0, 0.0),
            "{r:?}"
        );
        assert!(r.error.as_deref().unwrap().contains("implausible usage"));
    }
}

/// Usage whose members are not counts of tokens (a string, a negative number, a fraction) is
/// flagged, never logged as observed zeros; `null` members and whole numbers written as `12.0`
/// are read as what they are.
#[tokio::test]
async fn usage_that_is_not_a_count_is_flagged_not_logged() {
    let up = upstream::serve(|r| {
        if r.path.contains("chat") {
            Reply::json(200, r#"{"id":"c","object":"chat.completion","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":"12","completion_tokens":1}}"#)
        } else if r.path.contains("responses") {
            Reply::json(200, r#"{"id":"r","object":"response","model":"gpt-4o","output":[],"usage":{"input_tokens":12.0,"output_tokens":1,"input_tokens_details":{"cached_tokens":null}}}"#)
        } else {
            Reply::json(200, r#"{"id":"m","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":7,"output_tokens":-1}}"#)
        }
    })
    .await;
    let gw = forwarding_to(&up, Duration::from_secs(30)).await;
    let (s1, _) = post(&gw, "/v1/messages", MESSAGES).await;
    let chat = r#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}"#;
    let (s2, _) = post(&gw, "/v1/chat/completions", chat).await;
    let responses = r#"{"model":"gpt-4o","input":"hi"}"#;
    let (s3, _) = post(&gw, "/v1/responses", responses).await;
    assert_eq!((s1, s2, s3), (200, 200, 200), "the answers still pass");
    let rows = rows(&gw, 3).await;
    assert_eq!(rows.len(), 3);
    for r in &rows {
        match r.path.contains("responses") {
            // 12.0 is twelve tokens, and a null cache member is none.
            true => {
                assert_eq!((r.input_tokens, r.output_tokens), (12, 1), "{r:?}");
                assert!(r.error.is_none(), "{r:?}");
            }
            false => {
                assert_eq!(
                    (r.input_tokens, r.output_tokens, r.cost_usd),
                    (0, 0, 0.0),
                    "{r:?}"
                );
                assert!(
                    r.error
                        .as_deref()
                        .unwrap()
                        .contains("not a count of tokens"),
                    "{r:?}"
                );
            }
        }
    }
}

/// Item 15: a log holding wrapped numbers (an older gateway's) is read flagged, not repeated.
#[test]
fn report_does_not_repeat_wrapped_figures() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.sqlite");
    let conn = log::open(&path).unwrap();
    log::insert(
        &conn,
        &log::LogRow {
            model: "m".into(),
            status: 200,
            input_tokens: 4,
            ..Default::default()
        },
    )
    .unwrap();
    conn.execute(
        "UPDATE log SET cached_input_tokens = -1, cost_usd = 2.8e14 * -1",
        [],
    )
    .unwrap();
    drop(conn);
    let rows = log::read_all(&path).unwrap();
    assert_eq!(rows[0].cached_input_tokens, 0);
    assert_eq!(rows[0].input_tokens, 0);
    assert_eq!(rows[0].cost_usd, 0.0);
    assert!(rows[0].error.as_deref().unwrap().contains("implausible"));
    let out = Command::cargo_bin("toolcost")
        .unwrap()
        .args(["report", "--log"])
        .arg(&path)
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("18446744073709551615"), "{text}");
    assert!(
        !text.contains("2.8e14") && !text.contains("280000000000000"),
        "{text}"
    );
}

/// Item 15: an answer past the cap is refused in the provider's format, whole or streamed.
#[tokio::test]
async fn an_answer_past_the_cap_is_refused() {
    let up = upstream::serve(|r| {
        if r.body.windows(6).any(|w| w == b"stream") {
            let events = vec!["data: {\"x\":1}\n\n".repeat(1000); 200];
            stream_of(&events, Duration::ZERO, End::Clean)
        } else {
            Reply::Whole {
                status: 200,
                content_type: "application/json".into(),
                headers: Vec::new(),
                body: vec![b' '; 5 << 20],
            }
        }
    })
    .await;
    let gw = gateway_with(Upstream::Url(up), Duration::from_secs(30), 1 << 20).await;
    let (status, body) = post(&gw, "/v1/messages", MESSAGES).await;
    assert_eq!(status, 502);
    assert!(body.contains("cap of 1048576 bytes"), "{body}");
    let (_, body) = post(&gw, "/v1/messages", STREAMED).await;
    assert!(body.len() < 2 << 20, "cut near the cap: {}", body.len());
    assert!(body.contains("event: error") && body.contains("cap"));
}

/// Minor: the mock bills an unknown model at another card's prices and says so in the row.
#[tokio::test]
async fn the_mock_says_when_a_model_has_no_price_card() {
    let gw = gateway_with(Upstream::Mock, Duration::from_secs(30), 1 << 20).await;
    let unknown = r#"{"model":"mystery-model-9","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}"#;
    let (status, _) = post(&gw, "/v1/messages", unknown).await;
    assert_eq!(status, 200);
    let (status, _) = post(&gw, "/v1/messages", MESSAGES).await;
    assert_eq!(status, 200);
    let rows = rows(&gw, 2).await;
    let meta: serde_json::Value = serde_json::from_str(&rows[0].metadata).unwrap();
    let warning = meta["toolcost_warning"].as_str().unwrap();
    assert!(
        warning.contains("mystery-model-9") && warning.contains("claude-sonnet-4.6"),
        "{warning}"
    );
    assert!(
        !rows[1].metadata.contains("toolcost_warning"),
        "a model with its own card: {}",
        rows[1].metadata
    );
}

/// Minor: the start banner does not print `user:pass@` of the upstream URL.
#[test]
fn the_banner_hides_upstream_credentials() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("toolcost"))
        .args([
            "gateway",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "http://alice:s3cret@127.0.0.1:9/base",
            "--log",
        ])
        .arg(dir.path().join("log.sqlite"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(stderr).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(Duration::from_secs(60)).unwrap_or_default();
    let _ = child.kill();
    let _ = child.wait();
    assert!(line.contains("http://127.0.0.1:9/base"), "{line}");
    assert!(
        !line.contains("s3cret") && !line.contains("alice"),
        "{line}"
    );
}

// ---------------------------------------------------------------- weigh and check

fn toolcost() -> Command {
    Command::cargo_bin("toolcost").unwrap()
}

fn peer() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers/hostile_mcp.py")
        .display()
        .to_string()
}

fn weigh_stdio(mode: &str, extra: &[&str]) -> std::process::Output {
    toolcost()
        .arg("weigh")
        .args(extra)
        .args(["--timeout", "60", "--json", "--", "python3", &peer(), mode])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Item 18: invalid UTF-8 on the server's stdout is a banner line, not the end of the run.
#[test]
fn invalid_utf8_on_stdout_is_a_banner_line() {
    let o = weigh_stdio("badutf8", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let w: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(w["tools"].as_array().unwrap().len(), 2);
    let notes = w["notes"].to_string();
    assert!(
        notes.contains("not JSON-RPC") && notes.contains("not UTF-8"),
        "{notes}"
    );
}

/// Item 18: a line without an end is bounded by --max-line.
#[test]
fn a_line_without_an_end_is_bounded() {
    let o = weigh_stdio("longline", &["--max-line", "100000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("longer than 100000 bytes"),
        "{}",
        stderr(&o)
    );
}

/// Item 18: more tools than --max-tools is an error, not unbounded memory.
#[test]
fn too_many_tools_is_an_error() {
    let o = weigh_stdio("many", &["--max-tools", "100"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("more than 100 tools"), "{}", stderr(&o));
}

/// Item 18: a repeated cursor is an error (not the same tools counted 1,000 times).
#[test]
fn a_repeated_cursor_is_an_error() {
    let o = weigh_stdio("repeat", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("repeated the cursor"), "{}", stderr(&o));
}

/// Item 18: endless pagination is an error, not a silent cut with exit 0.
#[test]
fn endless_pagination_is_an_error() {
    let o = weigh_stdio("endless", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("did not end after"), "{}", stderr(&o));
}

fn alive(pid: i32) -> bool {
    // A zombie (killed, not yet reaped by whoever adopted it) counts as gone.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn wait_gone(pid: i32) -> bool {
    for _ in 0..100 {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

fn pids(file: &Path) -> Vec<i32> {
    for _ in 0..400 {
        if let Ok(t) = std::fs::read_to_string(file) {
            return t.split_whitespace().map(|p| p.parse().unwrap()).collect();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the peer never wrote {}", file.display());
}

fn kill(pid: i32) {
    // SAFETY: kill(2) on a pid this test's peer started.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
}

/// Weigh the hostile peer in `mode`, which starts a grandchild and exits unanswered; whether
/// the grandchild outlived weigh (it is killed here either way).
fn grandchild_survives(mode: &str) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pids");
    let o = toolcost()
        .args(["weigh", "--timeout", "60", "--", "python3", &peer(), mode])
        .arg(&file)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let p = pids(&file);
    let gone = wait_gone(p[1]);
    kill(p[1]);
    !gone
}

/// Item 16: the group is killed at the end even when the child already exited and was
/// reaped: a grandchild that ignores SIGTERM does not survive.
#[test]
fn a_grandchild_ignoring_sigterm_does_not_survive() {
    assert!(
        !grandchild_survives("grandchild"),
        "the grandchild survived weigh"
    );
}

/// A grandchild that left the server's process group and session (`setsid`) does not
/// survive weigh either, though its parent exited before weigh closed the session.
#[test]
fn a_grandchild_in_its_own_session_does_not_survive() {
    assert!(
        !grandchild_survives("setsid"),
        "the setsid grandchild survived weigh"
    );
}

/// Item 16: SIGINT, SIGTERM and SIGHUP to weigh reach the server's process group.
#[test]
fn signals_to_weigh_reach_the_server_group() {
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pids");
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("toolcost"))
            .args([
                "weigh",
                "--timeout",
                "120",
                "--",
                "python3",
                &peer(),
                "hang",
            ])
            .arg(&file)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let p = pids(&file);
        // SAFETY: signalling the weigh process this test started.
        unsafe {
            libc::kill(child.id() as i32, sig);
        }
        let mut exited = false;
        for _ in 0..200 {
            if child.try_wait().unwrap().is_some() {
                exited = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        let gone: Vec<bool> = p.iter().map(|&pid| wait_gone(pid)).collect();
        for &pid in &p {
            kill(pid);
        }
        assert!(exited, "weigh did not end on signal {sig}");
        assert_eq!(
            gone,
            vec![true, true],
            "signal {sig}: server group {p:?} outlived weigh"
        );
    }
}

/// Item 17: every request has a timeout, the session DELETE included.
#[tokio::test]
async fn a_hung_session_delete_does_not_hold_weigh() {
    let base = upstream::serve(|r| {
        if r.method == "DELETE" {
            return Reply::Hang;
        }
        let msg: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
        let result = match msg["method"].as_str() {
            Some("initialize") => serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "slowdelete"}}),
            Some("tools/list") => serde_json::json!({"tools": [{"name": "a", "description": "d", "inputSchema": {"type": "object"}}]}),
            _ => {
                return Reply::Whole {
                    status: 202,
                    content_type: "application/json".into(),
                    headers: vec![("mcp-session-id".into(), "s1".into())],
                    body: Vec::new(),
                }
            }
        };
        Reply::Whole {
            status: 200,
            content_type: "application/json".into(),
            headers: vec![("mcp-session-id".into(), "s1".into())],
            body: serde_json::to_vec(&serde_json::json!({"jsonrpc": "2.0", "id": msg["id"], "result": result})).unwrap(),
        }
    })
    .await;
    let mut child = tokio::process::Command::new(assert_cmd::cargo::cargo_bin("toolcost"))
        .args(["weigh", "--timeout", "2", "--json", "--url"])
        .arg(format!("{base}/mcp"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(60), child.wait()).await;
    let status = status.expect("weigh hung on the DELETE").unwrap();
    assert_eq!(status.code(), Some(0));
}

fn capture(dir: &Path, name: &str, tools: &[(&str, usize)]) -> PathBuf {
    let tools: Vec<serde_json::Value> = tools
        .iter()
        .map(|(n, size)| {
            serde_json::json!({"name": n, "description": "word ".repeat(*size), "inputSchema": {"type": "object", "properties": {}}})
        })
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, serde_json::json!({ "tools": tools }).to_string()).unwrap();
    path
}

/// Item 19: two tools with one name are an error in lint, weigh and check.
#[test]
fn duplicate_names_are_an_error_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let file = capture(
        dir.path(),
        "dupes.tools.json",
        &[("big", 5000), ("x", 3), ("big", 2)],
    );
    for args in [
        vec!["lint".to_string(), file.display().to_string()],
        vec!["weigh".into(), "--file".into(), file.display().to_string()],
        vec![
            "check".into(),
            "--catalogue".into(),
            file.display().to_string(),
            "--update".into(),
            "--lock".into(),
            dir.path().join("lock.json").display().to_string(),
        ],
    ] {
        let o = toolcost().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("`big` (tools 1, 3)"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    let o = weigh_stdio("dupes", &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("`same`"));
}

fn check_dir(budget: &str, before: &[(&str, usize)], after: &[(&str, usize)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("toolcost.toml"),
        format!("[budget]\n{budget}"),
    )
    .unwrap();
    capture(dir.path(), "tools.json", before);
    toolcost()
        .current_dir(dir.path())
        .args(["check", "--catalogue", "tools.json", "--update"])
        .assert()
        .success();
    capture(dir.path(), "tools.json", after);
    dir
}

fn check_in(dir: &Path, format: &str) -> std::process::Output {
    toolcost()
        .current_dir(dir)
        .args(["check", "--catalogue", "tools.json", "--format", format])
        .output()
        .unwrap()
}

/// Item 19: budgets are validated (no NaN, no negatives).
#[test]
fn budgets_are_validated() {
    for bad in [
        "max_growth_pct = nan",
        "max_growth_pct = -5.0",
        "max_tool_growth_pct = nan",
    ] {
        let dir = check_dir("", &[("a", 10)], &[("a", 10)]);
        std::fs::write(
            dir.path().join("toolcost.toml"),
            format!("[budget]\n{bad}\n"),
        )
        .unwrap();
        let o = check_in(dir.path(), "table");
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(
            stderr(&o).contains("expected a percentage"),
            "{bad}: {}",
            stderr(&o)
        );
    }
}

/// Item 19: a lock whose totals do not add up, or whose digest does not match, is refused.
#[test]
fn a_lock_that_does_not_add_up_is_refused() {
    let dir = check_dir("", &[("a", 10), ("b", 20)], &[("a", 10), ("b", 20)]);
    let path = dir.path().join("toolcost.lock.json");
    let good = std::fs::read_to_string(&path).unwrap();
    let mut lock: serde_json::Value = serde_json::from_str(&good).unwrap();
    assert!(lock["digest"].as_str().unwrap().starts_with("sha256:"));
    lock["total_tokens"] = serde_json::json!(1);
    std::fs::write(&path, lock.to_string()).unwrap();
    let o = check_in(dir.path(), "table");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not the sum"), "{}", stderr(&o));
    // Consistent totals but edited tools: the digest says so.
    let mut lock: serde_json::Value = serde_json::from_str(&good).unwrap();
    let t = lock["tools"]["a"]["tokens"].as_u64().unwrap();
    lock["tools"]["a"]["tokens"] = serde_json::json!(t + 100);
    lock["total_tokens"] = serde_json::json!(lock["total_tokens"].as_u64().unwrap() + 100);
    std::fs::write(&path, lock.to_string()).unwrap();
    let o = check_in(dir.path(), "table");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("digest"), "{}", stderr(&o));
}

/// Item 20: one definition growing 10x fails by default, named in the annotation, even when
/// the total grows by a few percent.
#[test]
fn one_definition_growing_fails_by_default() {
    let before = [("small", 50), ("huge", 20000)];
    let after = [("small", 500), ("huge", 20000)];
    let dir = check_dir("", &before, &after);
    let o = check_in(dir.path(), "github");
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("::error title=toolcost max_tool_growth_pct::small grew from"),
        "{out}"
    );
    // Within 25% and 200 tokens: passes.
    let dir = check_dir(
        "",
        &[("small", 100), ("huge", 20000)],
        &[("small", 110), ("huge", 20000)],
    );
    assert_eq!(check_in(dir.path(), "table").status.code(), Some(0));
    // Past 200 tokens though under 25%: the token limit.
    let dir = check_dir(
        "",
        &[("small", 100), ("huge", 20000)],
        &[("small", 100), ("huge", 21000)],
    );
    let o = check_in(dir.path(), "github");
    assert!(String::from_utf8_lossy(&o.stdout).contains("max_tool_growth_tokens::huge grew"));
    // The gate can be raised.
    let dir = check_dir(
        "max_tool_growth_pct = 2000\nmax_tool_growth_tokens = 100000\n",
        &before,
        &after,
    );
    assert_eq!(check_in(dir.path(), "table").status.code(), Some(0));
}

/// Minor: `check --format github` annotates removed tools.
#[test]
fn github_format_annotates_removed_tools() {
    let dir = check_dir("", &[("a", 10), ("gone", 10)], &[("a", 10)]);
    let o = check_in(dir.path(), "github");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("::warning title=toolcost removed::removed  gone"),
        "{out}"
    );
}

/// Minor: `weigh ... | head` ends quietly on a closed stdout.
#[test]
fn weigh_into_a_closed_pipe_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..300).map(|i| format!("tool_{i}")).collect();
    let tools: Vec<(&str, usize)> = names.iter().map(|n| (n.as_str(), 40)).collect();
    let file = capture(dir.path(), "many.tools.json", &tools);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("toolcost"))
        .args(["weigh", "--file"])
        .arg(&file)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("Broken pipe"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}

// ---------------------------------------------------------------- parsers on random bytes

fn read_all_lines(bytes: &[u8], max: usize) -> (Vec<toolcost::mcp::Line>, bool) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut reader = tokio::io::BufReader::with_capacity(7, bytes);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            match toolcost::mcp::read_line(&mut reader, &mut buf, max).await {
                Ok(true) => {
                    assert!(buf.len() <= max);
                    out.push(toolcost::mcp::Line::parse(&buf));
                }
                Ok(false) => return (out, false),
                Err(_) => return (out, true),
            }
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The JSON-RPC line reader never panics on any bytes, never holds a line past its bound,
    /// and reads exactly the lines there are.
    #[test]
    fn jsonrpc_lines_on_random_bytes(
        bytes in proptest::collection::vec(any::<u8>(), 0..400),
        max in 1usize..64,
    ) {
        let (lines, too_long) = read_all_lines(&bytes, max);
        let parts: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
        let expected = parts.len() - usize::from(parts.last().is_some_and(|l| l.is_empty()));
        let longest = parts.iter().map(|p| p.len()).max().unwrap_or(0);
        prop_assert_eq!(too_long, longest > max);
        if !too_long {
            prop_assert_eq!(lines.len(), expected);
        }
    }

    /// Valid messages among random noise are all found.
    #[test]
    fn jsonrpc_messages_survive_noise(
        noise in proptest::collection::vec(proptest::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 0..40), 0..8),
    ) {
        let mut bytes = Vec::new();
        for (i, n) in noise.iter().enumerate() {
            bytes.extend_from_slice(n);
            bytes.push(b'\n');
            bytes.extend_from_slice(format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"result\":{{}}}}\n").as_bytes());
        }
        let (lines, too_long) = read_all_lines(&bytes, 1 << 16);
        prop_assert!(!too_long);
        let ids: Vec<i64> = lines.iter().filter_map(|l| match l {
            toolcost::mcp::Line::Message(m) => m.value["id"].as_i64(),
            _ => None,
        }).collect();
        let want: Vec<i64> = (0..noise.len() as i64).collect();
        prop_assert_eq!(ids, want);
    }

    /// The SSE splitter keeps every byte in order, never holds an event past its bound, and
    /// ends each event at a blank line, however the bytes are chunked.
    #[test]
    fn sse_splitter_on_random_bytes(
        bytes in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'\r'), Just(b'd'), Just(b':'), any::<u8>()], 0..500),
        cuts in proptest::collection::vec(1usize..50, 1..20),
        max in 1usize..200,
    ) {
        let mut s = toolcost::sse::Splitter::new(max);
        let mut out: Vec<u8> = Vec::new();
        let mut rest: &[u8] = &bytes;
        let mut failed = false;
        for c in cuts.iter().cycle() {
            if rest.is_empty() { break; }
            let (now, later) = rest.split_at((*c).min(rest.len()));
            rest = later;
            match s.push(now) {
                Ok(events) => {
                    for e in events {
                        prop_assert!(e.ends_with(b"\n\n") || e.ends_with(b"\n\r\n"));
                        let _ = toolcost::sse::data(&e);
                        out.extend_from_slice(&e);
                    }
                    prop_assert!(s.pending().len() <= max);
                }
                Err(_) => { failed = true; break; }
            }
        }
        if !failed {
            out.extend_from_slice(s.pending());
            prop_assert_eq!(out, bytes);
        }
    }
}

/// The class "a killed gateway loses rows": a forward gateway killed with -9 while streams are
/// mid-answer has already written a row for each (before the first byte went out), and the
/// next gateway on the log marks them incomplete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_cut_by_a_killed_gateway_keep_their_rows() {
    let up = upstream::serve(|_| upstream::Reply::Stream {
        status: 200,
        content_type: "text/event-stream".into(),
        chunks: (0..60)
            .map(|i| {
                (
                    std::time::Duration::from_millis(if i == 0 { 0 } else { 500 }),
                    format!("event: ping\ndata: {{\"type\": \"ping\", \"n\": {i}}}\n\n")
                        .into_bytes(),
                )
            })
            .collect(),
        end: upstream::End::Clean,
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("log.sqlite");
    let gateway = || {
        common::serve(
            &[
                "gateway",
                "--upstream",
                &up,
                "--log",
                log_path.to_str().unwrap(),
            ],
            &[],
        )
    };
    let gw = gateway();
    let body = serde_json::json!({"model": "claude-sonnet-5-5", "max_tokens": 10, "stream": true,
        "messages": [{"role": "user", "content": "hi"}]});
    let mut readers = Vec::new();
    for _ in 0..3 {
        let url = format!("{}/v1/messages", gw.base);
        let body = body.to_string();
        readers.push(tokio::spawn(async move {
            let r = reqwest::Client::new()
                .post(url)
                .body(body)
                .send()
                .await
                .unwrap();
            let mut r = r;
            // The first bytes arrive; then the gateway dies under the stream.
            let first = r.chunk().await.ok().flatten();
            assert!(first.is_some_and(|c| !c.is_empty()));
            while let Ok(Some(_)) = r.chunk().await {}
        }));
    }
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    gw.kill();
    for r in readers {
        let _ = r.await;
    }
    let rows = toolcost::gateway::log::read_all(&log_path).unwrap();
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(
        rows.iter().all(|r| r.usage_source == "in-flight"),
        "{rows:?}"
    );
    // The next gateway on the log says what became of them.
    let next = gateway();
    drop(next);
    let rows = toolcost::gateway::log::read_all(&log_path).unwrap();
    assert_eq!(rows.len(), 3);
    for r in &rows {
        assert_eq!(r.usage_source, "incomplete", "{r:?}");
        assert!(
            r.error.as_deref().unwrap_or("").contains("stopped"),
            "{r:?}"
        );
    }
}

/// A server at `--url` whose answer to `initialize` is `body` (as `content_type`, with
/// `headers`): what `weigh` says about it.
async fn weigh_answer(body: Vec<u8>, content_type: &str, headers: Vec<(String, String)>) -> String {
    let content_type = content_type.to_string();
    let base = upstream::serve(move |_| Reply::Whole {
        status: 200,
        content_type: content_type.clone(),
        headers: headers.clone(),
        body: body.clone(),
    })
    .await;
    let out = tokio::process::Command::new(assert_cmd::cargo::cargo_bin("toolcost"))
        .args(["weigh", "--timeout", "10", "--json", "--url"])
        .arg(format!("{base}/mcp"))
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), out)
        .await
        .expect("weigh hung")
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Each kind of answer that is not a JSON-RPC response is named for what it is, not lumped
/// into "carried no response".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weigh_says_what_an_unreadable_answer_held() {
    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    let wrong_id =
        r#"{"jsonrpc":"2.0","id":999,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}"#;
    let gzip_header = vec![("content-encoding".to_string(), "gzip".to_string())];
    type Headers = Vec<(String, String)>;
    let cases: Vec<(Vec<u8>, &str, Headers, &str)> = vec![
        (
            b"{not json".to_vec(),
            "application/json",
            vec![],
            "was not JSON (",
        ),
        (
            b"<html><body>Sign in</body></html>".to_vec(),
            "text/html",
            vec![],
            "an HTML page",
        ),
        (
            br#"{"jsonrpc":"2.0","id":1,"result":NaN}"#.to_vec(),
            "application/json",
            vec![],
            "was not JSON (",
        ),
        (
            deep.into_bytes(),
            "application/json",
            vec![],
            "nested more than 128 levels",
        ),
        (
            wrong_id.as_bytes().to_vec(),
            "application/json",
            vec![],
            "answered request id 999",
        ),
        (
            vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff],
            "application/json",
            gzip_header,
            "encoded as `gzip`",
        ),
        (Vec::new(), "application/json", vec![], "was an empty body"),
        // A batch inside a batch is no JSON-RPC message: an item is never read as a batch again
        // (each level would build the whole tree once more).
        (
            br#"[[{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}]]"#
                .to_vec(),
            "application/json",
            vec![],
            "not a JSON-RPC message",
        ),
        // More tiny nodes than toolcost builds a tree of (some 50 times the text's size).
        (
            format!("[{}0]", "0,".repeat(toolcost::json::MAX_NODES)).into_bytes(),
            "application/json",
            vec![],
            "holds more than 16777216 JSON values",
        ),
    ];
    for (body, ct, headers, want) in cases {
        let err = weigh_answer(body, ct, headers).await;
        assert!(err.contains(want), "expected `{want}` in: {err}");
        assert!(!err.contains("carried no response"), "{err}");
    }
}

/// Paging that never ends over HTTP, ended by `--timeout`, is reported as paging, not as a
/// server slow to start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_http_paging_is_not_blamed_on_a_slow_start() {
    let page = std::sync::atomic::AtomicUsize::new(0);
    let base = upstream::serve(move |r| {
        let msg: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
        let result = match msg["method"].as_str() {
            Some("initialize") => serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "pager"}}),
            Some("tools/list") => {
                let n = page.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                serde_json::json!({"tools": [], "nextCursor": format!("c{n}")})
            }
            _ => return Reply::json(202, ""),
        };
        let body = serde_json::to_vec(&serde_json::json!({"jsonrpc": "2.0", "id": msg["id"], "result": result})).unwrap();
        Reply::Stream {
            status: 200,
            content_type: "application/json".into(),
            chunks: vec![(Duration::from_millis(40), body)],
            end: End::Clean,
        }
    })
    .await;
    let out = tokio::process::Command::new(assert_cmd::cargo::cargo_bin("toolcost"))
        .args(["weigh", "--timeout", "2", "--json", "--url"])
        .arg(format!("{base}/mcp"))
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), out)
        .await
        .expect("weigh hung")
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("still paging tools/list"), "{err}");
    assert!(!err.contains("slow to start"), "{err}");
}

/// Forward mode prices observed usage from the model's own card whatever else it flags: a
/// request that points at context the gateway cannot see (an unknown `previous_response_id`, a
/// stored prompt, a conversation it has not seen, Gemini's returned thought signatures) keeps
/// its cost and says what is missing, and no flag reads as a missing price card.
#[tokio::test]
async fn unseen_context_is_flagged_and_still_priced() {
    let up = upstream::serve(|r| {
        if r.path.contains("generateContent") {
            Reply::json(200, r#"{"candidates":[],"usageMetadata":{"promptTokenCount":1200,"candidatesTokenCount":10,"totalTokenCount":1210}}"#)
        } else {
            Reply::json(200, r#"{"id":"resp_new","object":"response","model":"gpt-5.4","output":[],"usage":{"input_tokens":1500,"output_tokens":20,"input_tokens_details":{"cached_tokens":0}}}"#)
        }
    })
    .await;
    let gw = forwarding_to(&up, Duration::from_secs(30)).await;
    let bodies = [
        (
            "/v1/responses",
            r#"{"model":"gpt-5.4","input":"go on","previous_response_id":"resp_never_seen"}"#,
            "did not serve",
        ),
        (
            "/v1/responses",
            r#"{"model":"gpt-5.4","input":"go on","prompt":{"id":"pmpt_1"}}"#,
            "stored prompt",
        ),
        (
            "/v1/responses",
            r#"{"model":"gpt-5.4","input":"go on","conversation":"conv_elsewhere"}"#,
            "has not seen",
        ),
        (
            "/v1beta/models/gemini-3.5-flash:generateContent",
            r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"f","args":{}},"thoughtSignature":"c2ln"}]},{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}]}"#,
            "thought signatures",
        ),
    ];
    for (path, body, _) in bodies {
        let (status, text) = post(&gw, path, body).await;
        assert_eq!(status, 200, "{text}");
    }
    let rows = rows(&gw, bodies.len()).await;
    assert_eq!(rows.len(), bodies.len());
    for (r, (_, _, says)) in rows.iter().zip(bodies) {
        let meta: serde_json::Value = serde_json::from_str(&r.metadata).unwrap();
        let warning = meta["toolcost_warning"].as_str().unwrap_or("");
        assert!(warning.contains(says), "{says}: {warning}");
        assert!(!warning.contains("price card"), "{warning}");
        assert!(r.cost_usd > 0.0, "observed usage is priced: {r:?}");
        assert_eq!(r.usage_source, "observed", "{r:?}");
    }
}

/// An answer an MCP SDK host refuses is refused here too, at once and saying why: `jsonrpc`
/// "1.0", a result beside an error, and a tools/list answer that is not valid JSON (not a
/// timeout after the whole wait).
#[test]
fn answers_an_sdk_refuses_are_refused_at_once() {
    for (mode, says) in [
        ("rpc10", "`jsonrpc` is \"1.0\""),
        ("both", "both `result` and `error`"),
        ("brokenlist", "not valid JSON"),
    ] {
        let o = weigh_stdio(mode, &[]);
        assert_eq!(o.status.code(), Some(2), "{mode}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{mode}: {}", stderr(&o));
    }
}

/// Vertex AI is a route of its own: Gemini's methods and Claude's `rawPredict` under a project
/// and a location, counted by Vertex AI's rules (the logged model is `vertex_ai/...`, and the
/// mock bills what `count --request` of the same body says for that model); forwarded with the
/// path as it came and the gateway's key as a bearer token.
#[tokio::test]
async fn vertex_ai_paths_are_served_counted_and_forwarded() {
    let gw = gateway_with(Upstream::Mock, Duration::from_secs(30), 1 << 20).await;
    let v = "/v1/projects/p1/locations/us-central1/publishers";
    let gemini = r#"{"contents":[{"role":"user","parts":[{"text":"What is the weather in Paris today?"}]}],"tools":[{"functionDeclarations":[{"name":"get_weather","description":"Get the weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]}]}"#;
    let claude = r#"{"anthropic_version":"vertex-2023-10-16","max_tokens":50,"messages":[{"role":"user","content":"What is the weather in Paris today?"}]}"#;
    let sent = [
        (
            format!("{v}/google/models/gemini-2.5-flash:generateContent"),
            gemini,
            "vertex_ai/gemini-2.5-flash",
        ),
        (
            format!("{v}/google/models/gemini-2.5-flash:countTokens"),
            gemini,
            "vertex_ai/gemini-2.5-flash",
        ),
        (
            format!("{v}/anthropic/models/claude-sonnet-4-5@20250929:rawPredict"),
            claude,
            "vertex_ai/claude-sonnet-4-5@20250929",
        ),
    ];
    for (path, body, _) in &sent {
        let (status, text) = post(&gw, path, body).await;
        assert_eq!(status, 200, "{path}: {text}");
    }
    let (status, text) = post(&gw, &format!("{v}/meta/models/llama:rawPredict"), "{}").await;
    assert_eq!(status, 404, "{text}");
    // Read by Google's SDKs (`code`, `status`) and Anthropic's (`type`) alike.
    let err: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(err["error"]["status"], "NOT_FOUND", "{text}");
    assert_eq!(err["error"]["type"], "not_found_error", "{text}");
    let rows = rows(&gw, sent.len()).await;
    for ((_, body, model), row) in sent.iter().zip(&rows) {
        assert_eq!(row.model, *model, "{row:?}");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("body.json");
        std::fs::write(&file, body).unwrap();
        let out = toolcost()
            .args(["count", "--request", "--json", "--model", model])
            .arg(&file)
            .output()
            .unwrap();
        let counted: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let counted = counted["tokens"].as_u64().unwrap();
        assert_eq!(row.input_tokens, counted, "{model}: one bill per body");
    }

    // Forwarded: the path as it came, the key as a bearer token, no Gemini key header.
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let up = upstream::serve(move |r| {
        log.lock().unwrap().push((r.path.clone(), r.headers.clone()));
        Reply::json(200, r#"{"candidates":[],"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":1,"totalTokenCount":13}}"#)
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let gw = Gateway::new(gateway::Options {
        upstream: Upstream::Url(up),
        api_key: Some("ya29.vertex-token".into()),
        log: dir.path().join("log.sqlite"),
        timeout: Duration::from_secs(30),
        max_body: gateway::DEFAULT_MAX_BODY,
        max_response: gateway::DEFAULT_MAX_RESPONSE,
        ca_cert: None,
        log_bodies: false,
        body_idle: gateway::BODY_IDLE,
    })
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (_tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(gateway::run(listener, gw, async move {
        let _ = rx.await;
    }));
    let path = format!("{v}/google/models/gemini-2.5-flash:generateContent");
    let r = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .header("content-type", "application/json")
        .body(gemini)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let seen = seen.lock().unwrap();
    let (got_path, headers) = &seen[0];
    assert_eq!(got_path, &path);
    let header = |n: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(n))
            .map(|(_, v)| v.clone())
    };
    assert_eq!(
        header("authorization").as_deref(),
        Some("Bearer ya29.vertex-token")
    );
    assert_eq!(header("x-goog-api-key"), None);
}

/// A Responses answer forwarded as a stream is kept as one forwarded whole is: a request that
/// continues it is counted with its context, not flagged as continuing an unknown response.
#[tokio::test]
async fn a_streamed_responses_answer_can_be_continued() {
    let up = upstream::serve(|r| {
        let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
        if body["stream"] != true {
            return Reply::json(200, r#"{"id":"resp_2","object":"response","model":"gpt-5.4","output":[],"usage":{"input_tokens":900,"output_tokens":5,"input_tokens_details":{"cached_tokens":0}}}"#);
        }
        let done = r#"{"type":"response.completed","response":{"id":"resp_streamed","object":"response","model":"gpt-5.4","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a long answer about the weather"}]}],"usage":{"input_tokens":40,"output_tokens":9,"input_tokens_details":{"cached_tokens":0}}}}"#;
        stream_of(
            &[
                "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_streamed\"}}\n\n".to_string(),
                format!("event: response.completed\ndata: {done}\n\n"),
            ],
            Duration::ZERO,
            End::Clean,
        )
    })
    .await;
    let gw = forwarding_to(&up, Duration::from_secs(30)).await;
    let (status, text) = post(
        &gw,
        "/v1/responses",
        r#"{"model":"gpt-5.4","input":"what is the weather","stream":true}"#,
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let (status, text) = post(
        &gw,
        "/v1/responses",
        r#"{"model":"gpt-5.4","input":"and tomorrow?","previous_response_id":"resp_streamed"}"#,
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let rows = rows(&gw, 2).await;
    let meta: serde_json::Value = serde_json::from_str(&rows[1].metadata).unwrap();
    assert!(meta.get("toolcost_warning").is_none(), "{meta}");
    let alone = toolcost::billing::billed_input(
        &toolcost::wire::Request::new(
            toolcost::wire::Format::OpenaiResponses,
            serde_json::json!({"model":"gpt-5.4","input":"and tomorrow?"}),
        ),
        toolcost::billing::RenderModel::parse("openai").unwrap(),
        toolcost::tokens::Tokenizer::O200k,
    )
    .input_tokens;
    assert!(
        rows[1].estimated_input_tokens.unwrap_or(0) > alone + 5,
        "the context is counted: {:?} vs {alone}",
        rows[1]
    );
}
