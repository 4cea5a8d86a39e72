//! A loopback load generator for the reference server and MCP peers: N POSTs of one body at a
//! fixed concurrency, reporting requests per second and latency percentiles.
//!
//! `cargo run --release --example load -- URL BODY [--init] [--header 'K: V'] [-c 32] [-n 5000]`
//! `--init` opens an MCP session first (initialize, initialized) and sends its id. `--timeout S`
//! (default 30) bounds each request: a peer that stops answering shows as errors, not a hang.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (url, body) = (args[0].clone(), args[1].clone());
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .map(|i| args[i + 1].clone())
    };
    let concurrency: usize = flag("-c").map(|v| v.parse().unwrap()).unwrap_or(32);
    let total: usize = flag("-n").map(|v| v.parse().unwrap()).unwrap_or(5000);
    let timeout: f64 = flag("--timeout")
        .map(|v| v.parse().unwrap())
        .unwrap_or(30.0);
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs_f64(timeout))
        .build()
        .unwrap();
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("content-type", "application/json".parse().unwrap());
    headers.insert(
        "accept",
        "application/json, text/event-stream".parse().unwrap(),
    );
    if let Some(h) = flag("--header") {
        let (k, v) = h.split_once(':').unwrap();
        headers.insert(
            reqwest::header::HeaderName::from_bytes(k.trim().as_bytes()).unwrap(),
            v.trim().parse().unwrap(),
        );
    }
    if args.iter().any(|a| a == "--init") {
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}"#;
        let r = client
            .post(&url)
            .headers(headers.clone())
            .body(init)
            .send()
            .await
            .unwrap();
        if let Some(sid) = r.headers().get("mcp-session-id").cloned() {
            headers.insert("mcp-session-id", sid);
        }
        let _ = r.text().await;
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let _ = client
            .post(&url)
            .headers(headers.clone())
            .body(note)
            .send()
            .await
            .unwrap()
            .text()
            .await;
    }
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let (client, headers, url, body, next) = (
            client.clone(),
            headers.clone(),
            url.clone(),
            body.clone(),
            next.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let mut errors = 0usize;
            let mut bytes = 0usize;
            while next.fetch_add(1, Ordering::Relaxed) < total {
                let t = Instant::now();
                match client
                    .post(&url)
                    .headers(headers.clone())
                    .body(body.clone())
                    .send()
                    .await
                {
                    Ok(r) if r.status().is_success() => {
                        bytes += r.bytes().await.map(|b| b.len()).unwrap_or(0)
                    }
                    _ => errors += 1,
                }
                lat.push(t.elapsed());
            }
            (lat, errors, bytes)
        }));
    }
    let mut lat: Vec<Duration> = Vec::new();
    let (mut errors, mut bytes) = (0, 0);
    for t in tasks {
        let (l, e, b) = t.await.unwrap();
        lat.extend(l);
        errors += e;
        bytes += b;
    }
    let elapsed = started.elapsed();
    lat.sort();
    let pct =
        |p: f64| lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)].as_secs_f64() * 1000.0;
    println!(
        "{total} requests, c={concurrency}, {errors} errors, {:.2} s, {:.0} req/s, p50 {:.2} ms, p99 {:.2} ms, mean answer {} bytes",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64(),
        pct(0.50),
        pct(0.99),
        bytes / total.max(1)
    );
}
