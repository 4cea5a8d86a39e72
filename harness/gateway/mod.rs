//! The LLM-API gateway: speaks Anthropic Messages (`/v1/messages`, `/v1/messages/count_tokens`)
//! and OpenAI Chat Completions (`/v1/chat/completions`), streaming and not, in front of the
//! `mock` upstream or a real one, and logs one row per request (tokens, bytes, cost, where the
//! usage came from, metadata) before the answer is released.

pub mod log;
pub mod mock;

use crate::clock;
use crate::error::Result;
use crate::pricing::Usage;
use crate::provider::{Endpoint, Format, ObservedUsage};
use crate::wire::Request;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State as Extract};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use futures_util::StreamExt;
use log::LogRow;
use rusqlite::Connection;
use serde_json::Value;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Request bodies up to this size are accepted (a per-row request at N=85,600 is about 55 MB).
pub const DEFAULT_MAX_BODY: usize = 256 << 20;

/// Where requests go.
#[derive(Debug, Clone)]
pub enum Upstream {
    Mock,
    /// A provider base URL; the request path is appended.
    Url(String),
}

#[derive(Debug, Clone)]
pub struct Options {
    pub upstream: Upstream,
    /// The provider key (read from the env var the command names); never logged.
    pub api_key: Option<String>,
    pub log: PathBuf,
    pub timeout: Duration,
    pub max_body: usize,
}

pub struct Gateway {
    opts: Options,
    db: Mutex<Connection>,
    mock: mock::Mock,
    http: reqwest::Client,
}

impl Gateway {
    pub fn new(opts: Options) -> Result<Arc<Gateway>> {
        let db = log::open(&opts.log)?;
        let http = reqwest::Client::builder()
            .timeout(opts.timeout)
            .build()
            .map_err(|e| crate::Error::input(format!("http client: {e}")))?;
        Ok(Arc::new(Gateway {
            db: Mutex::new(db),
            mock: mock::Mock::default(),
            http,
            opts,
        }))
    }

    fn record(&self, row: &LogRow) {
        // A failed log write must not lose the answer silently; it is reported on stderr.
        if let Err(e) = log::insert(&crate::sync::lock(&self.db), row) {
            eprintln!("toolcost gateway: could not write the log row: {e}");
        }
    }
}

/// The router: every endpoint of every provider format.
pub fn router(gw: Arc<Gateway>) -> Router {
    let limit = gw.opts.max_body;
    let mut router = Router::new();
    for format in Format::ALL {
        for &endpoint in format.spec().endpoints() {
            router = router.route(
                endpoint.path,
                post(
                    move |Extract(gw): Shared, headers: HeaderMap, body: BodyResult| {
                        handle(gw, format, endpoint, headers, body)
                    },
                ),
            );
        }
    }
    router.with_state(gw).layer(DefaultBodyLimit::max(limit))
}

/// Serve until `shutdown` resolves.
pub async fn run(
    listener: tokio::net::TcpListener,
    gw: Arc<Gateway>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(gw))
        .with_graceful_shutdown(shutdown)
        .await
}

type Shared = Extract<Arc<Gateway>>;
type BodyResult = std::result::Result<Bytes, axum::extract::rejection::BytesRejection>;

fn json_response(status: u16, body: impl Into<Body>, content_type: &str) -> Response {
    let mut r = (
        StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY),
        body.into(),
    )
        .into_response();
    r.headers_mut()
        .insert(header::CONTENT_TYPE, content_type.parse().unwrap());
    r
}

struct Pending {
    format: Format,
    path: &'static str,
    model: String,
    request_bytes: usize,
    stream: bool,
    metadata: String,
    started: Instant,
}

impl Pending {
    fn row(
        &self,
        status: u16,
        response_bytes: usize,
        usage: Option<(Usage, f64)>,
        source: &str,
        error: Option<String>,
    ) -> LogRow {
        let (u, cost) = usage.unwrap_or_default();
        LogRow {
            id: 0,
            created_at: clock::now_rfc3339(),
            provider_format: self.format.name().into(),
            model: self.model.clone(),
            path: self.path.into(),
            status,
            duration_ms: self.started.elapsed().as_secs_f64() * 1000.0,
            request_bytes: self.request_bytes,
            response_bytes,
            input_tokens: u.total_input(),
            cached_input_tokens: u.cached_input,
            cache_write_tokens: u.cache_write,
            output_tokens: u.output,
            cost_usd: cost,
            usage_source: source.into(),
            stream: self.stream,
            error,
            metadata: self.metadata.clone(),
        }
    }

    /// Log an error and answer it in the provider's format.
    fn fail(&self, gw: &Gateway, status: u16, message: &str) -> Response {
        let body = crate::json::compact(&self.format.spec().error_body(status, message));
        gw.record(&self.row(status, body.len(), None, "none", Some(message.to_string())));
        json_response(status, body, "application/json")
    }
}

async fn handle(
    gw: Arc<Gateway>,
    format: Format,
    endpoint: Endpoint,
    headers: HeaderMap,
    body: BodyResult,
) -> Response {
    let path = endpoint.path;
    let started = Instant::now();
    let metadata = headers
        .get("x-toolcost-metadata")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("{}")
        .to_string();
    let mut p = Pending {
        format,
        path,
        model: String::new(),
        request_bytes: 0,
        stream: false,
        metadata,
        started,
    };
    let bytes = match body {
        Ok(b) => b,
        Err(rejection) => {
            return p.fail(
                &gw,
                rejection.status().as_u16(),
                &format!("request body refused: {}", rejection.body_text()),
            )
        }
    };
    p.request_bytes = bytes.len();
    let req = match Request::parse(format, &bytes) {
        Ok(r) => r,
        Err(e) => return p.fail(&gw, 400, &e.to_string()),
    };
    p.model = req
        .body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    p.stream = req
        .body
        .get("stream")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    match gw.opts.upstream.clone() {
        Upstream::Mock => mock_answer(&gw, &p, endpoint, &req, &headers),
        Upstream::Url(base) => forward(gw.clone(), p, bytes, &headers, &base).await,
    }
}

/// The cache scope and virtual time a request names (see [`mock::When`]).
fn when(headers: &HeaderMap) -> mock::When {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    mock::When {
        scope: header("x-toolcost-cache-scope")
            .unwrap_or("default")
            .to_string(),
        now: header("x-toolcost-clock")
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|t| t.is_finite()),
    }
}

fn mock_answer(
    gw: &Gateway,
    p: &Pending,
    endpoint: Endpoint,
    req: &Request,
    headers: &HeaderMap,
) -> Response {
    if endpoint.count_only {
        let (_, tok, usage) = match gw.mock.bill(req, &when(headers), false) {
            Ok(b) => b,
            Err(e) => return p.fail(gw, 400, &e),
        };
        let body = format!("{{\"input_tokens\":{}}}", usage.total_input());
        gw.record(&p.row(
            200,
            body.len(),
            Some((Usage { output: 0, ..usage }, 0.0)),
            &tok.label(),
            None,
        ));
        return json_response(200, body, "application/json");
    }
    let step = match headers.get("x-toolcost-next").map(|v| v.to_str().map(serde_json::from_str::<Value>)) {
        None => None,
        Some(Ok(Ok(v))) => Some(v),
        _ => return p.fail(gw, 400, "x-toolcost-next must be a JSON step: {\"text\": ...} or {\"tool\": ..., \"input\": {...}}"),
    };
    let answer = match gw.mock.answer(req, &when(headers), step.as_ref()) {
        Ok(a) => a,
        Err(e) => return p.fail(gw, 400, &e),
    };
    let id = gw.mock.next_id();
    let cost = answer.card.cost(&answer.usage);
    let label = answer.tokenizer.label();
    let spec = p.format.spec();
    if p.stream {
        let events = spec.events(&p.model, id, answer.reply(), &req.body);
        let size = events.iter().map(String::len).sum();
        gw.record(&p.row(200, size, Some((answer.usage, cost)), &label, None));
        let stream = futures_util::stream::iter(
            events
                .into_iter()
                .map(|e| Ok::<_, std::io::Error>(Bytes::from(e))),
        );
        let mut r = Response::new(Body::from_stream(stream));
        r.headers_mut()
            .insert(header::CONTENT_TYPE, "text/event-stream".parse().unwrap());
        return r;
    }
    let body = crate::json::compact(&spec.answer(&p.model, id, answer.reply()));
    gw.record(&p.row(200, body.len(), Some((answer.usage, cost)), &label, None));
    json_response(200, body, "application/json")
}

/// Forward the bytes unchanged; stream the answer back as it arrives. The log row is written
/// when the answer is complete, before its last chunk is released.
async fn forward(
    gw: Arc<Gateway>,
    p: Pending,
    bytes: Bytes,
    headers: &HeaderMap,
    base: &str,
) -> Response {
    let rb = upstream_request(&gw, &p, bytes, headers, base);
    let resp = match rb.send().await {
        Ok(r) => r,
        Err(e) if e.is_timeout() => {
            return p.fail(
                &gw,
                504,
                &format!(
                    "the upstream did not answer within {} s",
                    gw.opts.timeout.as_secs()
                ),
            )
        }
        Err(e) => return p.fail(&gw, 502, &format!("the upstream could not be reached: {e}")),
    };
    let status = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_string();
    let passed: Vec<(header::HeaderName, header::HeaderValue)> = resp
        .headers()
        .iter()
        .filter(|(n, _)| {
            !matches!(
                n.as_str(),
                "content-length"
                    | "connection"
                    | "transfer-encoding"
                    | "keep-alive"
                    | "content-type"
            )
        })
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect();
    let streamed = content_type.starts_with("text/event-stream");
    let card = mock::card_for(p.format, &p.model);
    if !streamed {
        return forward_whole(gw, p, resp, status, &content_type, passed, &card).await;
    }
    forward_stream(gw, p, resp, status, &content_type, passed)
}

/// The upstream request: the client's bytes and headers, less hop-by-hop ones, ours, and the
/// credential when the gateway holds the key (then the key goes in the format's header).
fn upstream_request(
    gw: &Gateway,
    p: &Pending,
    bytes: Bytes,
    headers: &HeaderMap,
    base: &str,
) -> reqwest::RequestBuilder {
    let url = format!("{}{}", base.trim_end_matches('/'), p.path);
    let mut rb = gw.http.post(&url).body(bytes);
    for (name, value) in headers {
        let n = name.as_str();
        let ours = n.starts_with("x-toolcost-");
        let hop = matches!(
            n,
            "host"
                | "content-length"
                | "connection"
                | "transfer-encoding"
                | "keep-alive"
                | "upgrade"
        );
        let credential = matches!(n, "authorization" | "x-api-key");
        if !(ours || hop || (credential && gw.opts.api_key.is_some())) {
            rb = rb.header(name.clone(), value.clone());
        }
    }
    if let Some(k) = &gw.opts.api_key {
        let (name, value) = p.format.spec().auth_header(k);
        rb = rb.header(name, value);
    }
    rb
}

type Passed = Vec<(header::HeaderName, header::HeaderValue)>;

/// A whole (not streamed) answer: read it, log it, pass it on.
async fn forward_whole(
    gw: Arc<Gateway>,
    p: Pending,
    resp: reqwest::Response,
    status: u16,
    content_type: &str,
    passed: Passed,
    card: &crate::pricing::PriceCard,
) -> Response {
    let body = match resp.bytes().await {
        Ok(b) => b,
        Err(e) => return p.fail(&gw, 502, &format!("the upstream's answer was cut off: {e}")),
    };
    let text = String::from_utf8_lossy(&body);
    let usage = p.format.spec().observed_usage(&text, false);
    let error = match (status, &usage) {
        (200..=299, None) if serde_json::from_str::<Value>(&text).is_err() => {
            return p.fail(&gw, 502, "the upstream answered with malformed JSON");
        }
        (200..=299, _) => None,
        _ => Some(format!("upstream HTTP {status}")),
    };
    let u = usage.map(to_usage);
    gw.record(&p.row(
        status,
        body.len(),
        u.map(|u| (u, card.cost(&u))),
        if u.is_some() { "observed" } else { "none" },
        error,
    ));
    let mut r = json_response(status, body, content_type);
    r.headers_mut().extend(passed);
    r
}

/// A streamed answer: pass chunks through, one behind, so the row is committed before the last.
fn forward_stream(
    gw: Arc<Gateway>,
    p: Pending,
    resp: reqwest::Response,
    status: u16,
    content_type: &str,
    passed: Passed,
) -> Response {
    let upstream = resp.bytes_stream();
    struct S<St> {
        upstream: St,
        held: Option<Bytes>,
        text: String,
        size: usize,
        done: bool,
        gw: Arc<Gateway>,
        p: Pending,
        status: u16,
    }
    let state = S {
        upstream,
        held: None,
        text: String::new(),
        size: 0,
        done: false,
        gw: gw.clone(),
        p,
        status,
    };
    let stream = futures_util::stream::unfold(state, move |mut s| async move {
        if s.done {
            return None;
        }
        loop {
            match s.upstream.next().await {
                Some(Ok(chunk)) => {
                    s.size += chunk.len();
                    s.text.push_str(&String::from_utf8_lossy(&chunk));
                    if let Some(prev) = s.held.replace(chunk) {
                        return Some((Ok::<Bytes, std::io::Error>(prev), s));
                    }
                }
                Some(Err(e)) => {
                    let msg = format!("the upstream's stream was cut off: {e}");
                    let card = mock::card_for(s.p.format, &s.p.model);
                    let u =
                        s.p.format
                            .spec()
                            .observed_usage(&s.text, true)
                            .map(to_usage);
                    s.gw.record(&s.p.row(
                        s.status,
                        s.size,
                        u.map(|u| (u, card.cost(&u))),
                        "observed",
                        Some(msg.clone()),
                    ));
                    let err = s.p.format.spec().error_body(502, &msg);
                    let tail = format!(
                        "{}event: error\ndata: {}\n\n",
                        s.held
                            .take()
                            .map(|b| String::from_utf8_lossy(&b).into_owned())
                            .unwrap_or_default(),
                        crate::json::compact(&err)
                    );
                    s.done = true;
                    return Some((Ok(Bytes::from(tail)), s));
                }
                None => {
                    let card = mock::card_for(s.p.format, &s.p.model);
                    let u =
                        s.p.format
                            .spec()
                            .observed_usage(&s.text, true)
                            .map(to_usage);
                    let complete = s.text.contains("message_stop") || s.text.contains("[DONE]");
                    let error = if complete {
                        None
                    } else {
                        Some("the upstream's stream ended before its final event".to_string())
                    };
                    s.gw.record(&s.p.row(
                        s.status,
                        s.size,
                        u.map(|u| (u, card.cost(&u))),
                        if u.is_some() { "observed" } else { "none" },
                        error,
                    ));
                    s.done = true;
                    return s.held.take().map(|b| (Ok(b), s));
                }
            }
        }
    });
    let mut r = Response::new(Body::from_stream(stream));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    r.headers_mut()
        .insert(header::CONTENT_TYPE, content_type.parse().unwrap());
    r.headers_mut().extend(passed);
    r
}

fn to_usage(o: ObservedUsage) -> Usage {
    Usage {
        uncached_input: o.input.saturating_sub(o.cached + o.written),
        cached_input: o.cached,
        cache_write: o.written,
        output: o.output,
    }
}
