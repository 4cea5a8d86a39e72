//! TLS everywhere toolcost connects out (issue 13, item 1): a local HTTPS upstream with a CA
//! made in the test, trusted with `--ca-cert` (or `SSL_CERT_FILE`); and the three failures
//! (unknown issuer, name mismatch, a plain-http server on an https URL) each named, with the
//! host. Network: 127.0.0.1 on port 0 only.

#[path = "support/upstream.rs"]
mod upstream;

use std::path::PathBuf;
use std::time::Duration;
use toolcost::gateway::{self, log, Gateway, Upstream};
use upstream::Reply;

struct Gw {
    base: String,
    log: PathBuf,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn gateway_to(upstream: String, ca_cert: Option<PathBuf>, dir: &std::path::Path) -> Gw {
    let log = dir.join("log.sqlite");
    let gw = Gateway::new(gateway::Options {
        upstream: Upstream::Url(upstream),
        api_key: None,
        log: log.clone(),
        timeout: Duration::from_secs(30),
        max_body: gateway::DEFAULT_MAX_BODY,
        max_response: gateway::DEFAULT_MAX_RESPONSE,
        ca_cert,
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
        _stop: tx,
    }
}

const MESSAGES: &str =
    r#"{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}"#;

async fn ask(gw: &Gw) -> (u16, String) {
    let r = reqwest::Client::new()
        .post(format!("{}/v1/messages", gw.base))
        .body(MESSAGES)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

fn answer() -> Reply {
    Reply::json(200, &upstream::anthropic_answer(4321, 7))
}

fn ca_file(dir: &std::path::Path, pem: &str) -> PathBuf {
    let path = dir.join("ca.pem");
    std::fs::write(&path, pem).unwrap();
    path
}

#[tokio::test]
async fn the_gateway_forwards_to_a_tls_upstream_with_ca_cert() {
    let dir = tempfile::tempdir().unwrap();
    let pki = upstream::pki(&["127.0.0.1", "localhost"]);
    let port = upstream::serve_tls(pki.acceptor.clone(), |_| answer()).await;
    let ca = ca_file(dir.path(), &pki.ca_pem);
    let gw = gateway_to(format!("https://127.0.0.1:{port}"), Some(ca), dir.path()).await;
    let (status, body) = ask(&gw).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, upstream::anthropic_answer(4321, 7), "bytes unchanged");
    let rows = log::read_all(&gw.log).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].usage_source, "observed");
    assert_eq!((rows[0].input_tokens, rows[0].output_tokens), (4321, 7));
}

/// The three failures, each named with the host.
#[tokio::test]
async fn tls_failures_say_what_failed_and_name_the_host() {
    let dir = tempfile::tempdir().unwrap();
    // Unknown issuer: no --ca-cert for a private CA.
    let pki = upstream::pki(&["127.0.0.1"]);
    let port = upstream::serve_tls(pki.acceptor.clone(), |_| answer()).await;
    let gw = gateway_to(format!("https://127.0.0.1:{port}"), None, dir.path()).await;
    let (status, body) = ask(&gw).await;
    assert_eq!(status, 502);
    assert!(
        body.contains(&format!("TLS with 127.0.0.1:{port} failed: unknown issuer")),
        "{body}"
    );
    assert!(body.contains("--ca-cert"), "{body}");

    // Name mismatch: the certificate is for another name.
    let dir2 = tempfile::tempdir().unwrap();
    let other = upstream::pki(&["other.example"]);
    let port = upstream::serve_tls(other.acceptor.clone(), |_| answer()).await;
    let ca = ca_file(dir2.path(), &other.ca_pem);
    let gw = gateway_to(format!("https://127.0.0.1:{port}"), Some(ca), dir2.path()).await;
    let (status, body) = ask(&gw).await;
    assert_eq!(status, 502);
    assert!(
        body.contains(&format!("TLS with 127.0.0.1:{port} failed: name mismatch")),
        "{body}"
    );

    // A plain-http server on an https URL.
    let dir3 = tempfile::tempdir().unwrap();
    let plain = upstream::serve(|_| answer()).await;
    let port = plain.rsplit(':').next().unwrap().to_string();
    let gw = gateway_to(format!("https://127.0.0.1:{port}"), None, dir3.path()).await;
    let (status, body) = ask(&gw).await;
    assert_eq!(status, 502);
    assert!(
        body.contains(&format!(
            "TLS with 127.0.0.1:{port} failed: handshake failed: the server did not answer in TLS"
        )),
        "{body}"
    );
}

/// `weigh --url https://...` with `--ca-cert`, and with `SSL_CERT_FILE`; a wrong CA names the
/// failure.
#[tokio::test]
async fn weigh_lists_tools_over_https() {
    let dir = tempfile::tempdir().unwrap();
    let pki = upstream::pki(&["127.0.0.1"]);
    let port = upstream::serve_tls(pki.acceptor.clone(), |r| {
        let msg: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
        let result = match msg["method"].as_str() {
            Some("initialize") => serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "tls"}}),
            Some("tools/list") => serde_json::json!({"tools": [{"name": "secure_tool", "description": "d", "inputSchema": {"type": "object"}}]}),
            _ => return Reply::json(202, ""),
        };
        Reply::json(
            200,
            &serde_json::json!({"jsonrpc": "2.0", "id": msg["id"], "result": result}).to_string(),
        )
    })
    .await;
    let ca = ca_file(dir.path(), &pki.ca_pem);
    let url = format!("https://127.0.0.1:{port}/mcp");
    let bin = assert_cmd::cargo::cargo_bin("toolcost");
    let run = |args: Vec<String>, env: Option<&PathBuf>| {
        let mut c = tokio::process::Command::new(&bin);
        c.args(args).env_remove("SSL_CERT_FILE").kill_on_drop(true);
        if let Some(e) = env {
            c.env("SSL_CERT_FILE", e);
        }
        async move {
            tokio::time::timeout(Duration::from_secs(120), c.output())
                .await
                .expect("weigh finished")
                .unwrap()
        }
    };
    let base: Vec<String> = ["weigh", "--json", "--timeout", "20", "--url", &url]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut with_ca = base.clone();
    with_ca.extend(["--ca-cert".to_string(), ca.display().to_string()]);
    let o = run(with_ca, None).await;
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("secure_tool"));

    let o = run(base.clone(), Some(&ca)).await;
    assert_eq!(
        o.status.code(),
        Some(0),
        "SSL_CERT_FILE: {}",
        String::from_utf8_lossy(&o.stderr)
    );

    let o = run(base, None).await;
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("TLS with 127.0.0.1:{port} failed: unknown issuer")),
        "{err}"
    );
}

#[test]
fn a_ca_file_without_certificates_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.pem");
    std::fs::write(&bad, "not a certificate").unwrap();
    let opts = toolcost::net::Options::default().with_ca_cert(Some(&bad));
    let err = toolcost::net::client(&opts).unwrap_err().to_string();
    assert!(
        err.contains("--ca-cert") && err.contains("no PEM certificate"),
        "{err}"
    );
}
