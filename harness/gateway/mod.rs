//! The LLM-API gateway: speaks Anthropic Messages (`/v1/messages`, `/v1/messages/count_tokens`),
//! OpenAI Chat Completions (`/v1/chat/completions`) and Responses (`/v1/responses`), streaming
//! and not, in front of the
//! `mock` upstream or a real one, and logs one row per request (tokens, bytes, cost, where the
//! usage came from, metadata) before the answer is released. In forward mode the row also
//! carries toolcost's own estimate of the request ([`log::Estimate`]), computed on a blocking
//! thread while the upstream answers, so that `toolcost calibrate` can compare the two.

mod body;
mod continuation;
mod forward;
pub mod log;
pub mod mock;
mod pending;
mod thoughts;
mod writer;

use crate::error::Result;
use crate::pricing::Usage;
use crate::provider::{Endpoint, Format};
use crate::wire::Request;
use axum::body::{Body, Bytes};
use axum::extract::State as Extract;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use log::LogRow;
use serde_json::Value;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Request bodies up to this size are accepted (a per-row request at N=85,600 is about 55 MB).
pub const DEFAULT_MAX_BODY: usize = 256 << 20;

/// Upstream answers up to this size are passed on (a whole answer is read into memory to log
/// its usage; a stream is passed event by event but is cut past it too).
pub const DEFAULT_MAX_RESPONSE: usize = 64 << 20;

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
    /// Idle timeout: the longest the upstream may be silent (before its headers or between
    /// two chunks of a stream). A healthy long stream is never cut by it.
    pub timeout: Duration,
    pub max_body: usize,
    /// The largest upstream answer passed on; see [`DEFAULT_MAX_RESPONSE`].
    pub max_response: usize,
    /// Extra root certificates (PEM) for a private upstream.
    pub ca_cert: Option<PathBuf>,
    /// Store each request's body in the log's `request_body` table (off by default: bodies
    /// may hold anything the client sent).
    pub log_bodies: bool,
    /// The longest a request body may stop arriving, and the grace before its average rate
    /// must reach [`MIN_BODY_RATE`]: a stalled or dripping upload is answered 408 and closed.
    pub body_idle: Duration,
}

pub use body::MAX_INFLIGHT_BYTES;
use body::{read_body, BodyRefusal};
use pending::Pending;

/// The default [`Options::body_idle`] (an assumed bound: a client that has started a body
/// and sends nothing for 15 seconds has stalled).
pub const BODY_IDLE: Duration = Duration::from_secs(15);

/// The slowest average a request body may arrive at once [`Options::body_idle`] has passed,
/// in bytes a second (an assumed bound, far below any real client on any link toolcost serves).
pub const MIN_BODY_RATE: u64 = 16 * 1024;

pub struct Gateway {
    opts: Options,
    /// The log's writer (rows are committed in groups on a thread of its own).
    log: writer::Writer,
    /// Requests being served now (the log writer groups about as many rows in a commit).
    inflight: Arc<std::sync::atomic::AtomicUsize>,
    /// Bytes of the request bodies being served now ([`MAX_INFLIGHT_BYTES`]).
    inflight_bytes: std::sync::atomic::AtomicUsize,
    mock: mock::Mock,
    /// The contexts of the Responses answers served or forwarded, for continuations.
    continuations: continuation::Continuations,
    /// The thinking of the Gemini and Responses answers served or forwarded, for requests that
    /// send it back.
    thoughts: thoughts::Thoughts,
    http: reqwest::Client,
    /// Upstream URLs by base and path, parsed once.
    urls: Mutex<std::collections::HashMap<(String, String), reqwest::Url>>,
}

impl Gateway {
    pub fn new(opts: Options) -> Result<Arc<Gateway>> {
        let db = log::open(&opts.log)?;
        // Rows of streams a gateway began and never finished (it was killed, or crashed).
        let left = log::close_in_flight(&db)?;
        if left > 0 {
            eprintln!(
                "toolcost gateway: {left} stream(s) of an earlier run were cut off when it stopped; their rows are marked incomplete"
            );
        }
        let http = crate::net::client(
            &crate::net::Options::idle(opts.timeout).with_ca_cert(opts.ca_cert.as_deref()),
        )?;
        let inflight = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        Ok(Arc::new(Gateway {
            log: writer::Writer::new(db, inflight.clone())?,
            inflight,
            mock: mock::Mock::default(),
            continuations: continuation::Continuations::default(),
            thoughts: thoughts::Thoughts::default(),
            inflight_bytes: std::sync::atomic::AtomicUsize::new(0),
            http,
            urls: Mutex::default(),
            opts,
        }))
    }

    /// Write a request's row, and its body when `--log-bodies` asked for it (`p.body`); a
    /// stream's row written when it began is completed instead.
    /// The row is committed when this returns; a failed write is said on stderr (it must not
    /// lose the answer silently).
    async fn record(&self, p: &Pending, row: LogRow) {
        let written = match p.provisional {
            Some(id) => self.log.update(id, row).await,
            None => self.log.insert(row, p.body.clone()).await.map(|_| ()),
        };
        if let Err(e) = written {
            eprintln!("toolcost gateway: could not write the log row: {e}");
        }
    }

    /// [`Gateway::record`] for a caller that cannot wait on a task (a request dropped before
    /// its answer was complete): blocks until the row is committed.
    fn record_blocking(&self, p: &Pending, row: LogRow) {
        if let Err(e) = self.log.write_now(p.provisional, row, p.body.clone()) {
            eprintln!("toolcost gateway: could not write the log row: {e}");
        }
    }

    /// Write the row of a stream that is about to be passed on, before its first byte: marked
    /// `in-flight` until its end completes it, and `incomplete` by the next gateway on this
    /// log if this one dies first. `None` when it could not be written (said on stderr).
    /// Written at once, on this thread: a task cancelled while its first row waited in the
    /// queue would otherwise leave that row and, from its drop, another.
    fn begin(&self, p: &Pending, status: u16) -> Option<i64> {
        let row = p
            .row(
                status,
                0,
                None,
                log::IN_FLIGHT,
                Some(format!("{}{})", log::IN_FLIGHT_BY, std::process::id())),
            )
            .with_estimate(p.estimate.as_ref());
        match self.log.write_now(None, row, p.body.clone()) {
            Ok(id) => Some(id),
            Err(e) => {
                eprintln!("toolcost gateway: could not write the stream's first row: {e}");
                None
            }
        }
    }

    /// The upstream URL of a path (the base and the path joined, as the client named it),
    /// parsed the first time. A base whose join does not parse is joined as it is and left to
    /// the client to refuse, as before.
    fn upstream_url(&self, base: &str, path: &str) -> UpstreamUrl {
        let key = (base.to_string(), path.to_string());
        if let Some(u) = crate::sync::lock(&self.urls).get(&key) {
            return UpstreamUrl::Parsed(u.clone());
        }
        let text = format!("{}{}", base.trim_end_matches('/'), path);
        match reqwest::Url::parse(&text) {
            Ok(u) => {
                let mut urls = crate::sync::lock(&self.urls);
                // One entry per endpoint of the one base (and per model where the path names
                // it): bounded, later paths are parsed each time.
                if urls.len() < 64 {
                    urls.insert(key, u.clone());
                }
                UpstreamUrl::Parsed(u)
            }
            Err(_) => UpstreamUrl::Text(text),
        }
    }

    /// Keep what later requests may carry back of an answer: a Responses answer's context, for
    /// the requests that continue it; a Gemini answer's thought signatures and thoughts.
    fn remember(&self, p: &Pending, answer: &Value) {
        if let Some(req) = &p.remember {
            self.continuations.remember(req, answer);
        }
        self.thoughts
            .remember(p.format, std::slice::from_ref(answer));
    }

    /// toolcost's estimate of a request's input side: what the mock would bill for it (the
    /// render model and tokenizer of the model's card, the cache split under the card's rule
    /// over the requests this gateway has seen), or the total alone when the mock refuses it.
    fn estimate(&self, req: &Request, when: &mock::When, commit: bool) -> Option<log::Estimate> {
        let label = |tok| estimate_label(req, tok);
        match self.mock.bill(req, when, commit) {
            Ok((_, tok, u)) => Some(log::Estimate {
                input_tokens: u.total_input(),
                cached_input_tokens: u.cached_input,
                cache_write_tokens: u.cache_write,
                label: label(tok),
            }),
            Err(_) => {
                let model = req.body.get("model").and_then(Value::as_str).unwrap_or("");
                let card = mock::card_for(req.format, model);
                let tok = card.tokenizer();
                // A tokenizer installed apart and missing here (Llama 4's): the request is
                // forwarded and logged without an estimate.
                tok.ready().ok()?;
                Some(log::Estimate {
                    input_tokens: crate::billing::billed_input(req, card.render_model(), tok)
                        .input_tokens,
                    label: label(tok),
                    ..Default::default()
                })
            }
        }
    }
}

/// The router: every endpoint of every provider format.
pub fn router(gw: Arc<Gateway>) -> Router {
    let mut router = Router::new();
    for format in Format::ALL {
        for &endpoint in format.spec().endpoints() {
            router = router.route(
                endpoint.path,
                post(
                    move |Extract(gw): Shared,
                          uri: axum::http::Uri,
                          headers: HeaderMap,
                          body: Body| {
                        handle(gw, format, endpoint, uri, headers, body)
                    },
                )
                .fallback(|method: axum::http::Method| async move {
                    unserved(405, &format!("{method} is not served here: send POST"))
                }),
            );
        }
    }
    router
        .fallback(|uri: axum::http::Uri| async move {
            unserved(404, &format!("no endpoint at {}", uri.path()))
        })
        .with_state(gw)
}

/// What a path or method the gateway does not serve is answered with: JSON an SDK of any of
/// its formats reads (`error.message`, Anthropic's `type`, Google's `code` and `status`),
/// naming what is served, never a bare 404 or 405.
fn unserved(status: u16, why: &str) -> Response {
    let served: Vec<&str> = Format::ALL
        .iter()
        .flat_map(|f| f.spec().endpoints().iter().map(|e| e.path))
        .collect();
    let kind = match status {
        404 => "not_found_error",
        _ => "invalid_request_error",
    };
    // Anthropic's `type`s and Google's `code` and `status` side by side: each SDK reads its own.
    let status_name = match status {
        404 => "NOT_FOUND",
        _ => "INVALID_ARGUMENT",
    };
    let body = serde_json::json!({
        "type": "error",
        "error": {
            "type": kind,
            "code": status,
            "status": status_name,
            "message": format!("{why}; this gateway serves POST {}", served.join(", ")),
        }
    });
    json_response(status, body.to_string(), "application/json")
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

/// A request counted in flight while it is served.
struct Serving(Arc<std::sync::atomic::AtomicUsize>);

impl Serving {
    fn new(count: &Arc<std::sync::atomic::AtomicUsize>) -> Serving {
        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Serving(count.clone())
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// An upstream URL: parsed, or text that does not parse (the client then refuses it with its
/// own error, which the row reports).
#[derive(Clone)]
enum UpstreamUrl {
    Parsed(reqwest::Url),
    Text(String),
}

impl UpstreamUrl {
    fn as_str(&self) -> &str {
        match self {
            UpstreamUrl::Parsed(u) => u.as_str(),
            UpstreamUrl::Text(t) => t,
        }
    }
}

/// Serve one request: read its body within the bounds, route it, bill it (the mock) or forward
/// it, and log its row before the answer goes out.
async fn handle(
    gw: Arc<Gateway>,
    format: Format,
    endpoint: Endpoint,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let _serving = Serving::new(&gw.inflight);
    let started = Instant::now();
    let route = format.spec().route(endpoint, uri.path(), uri.query());
    let path = match &route {
        Ok(r) => r.path.clone(),
        Err(_) => uri.path().to_string(),
    };
    let metadata = headers
        .get("x-toolcost-metadata")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("{}")
        .to_string();
    let mut p = Pending {
        format,
        path,
        query_key: None,
        bearer: false,
        model: String::new(),
        request_bytes: 0,
        stream: false,
        metadata,
        started,
        price_warning: None,
        flags: Vec::new(),
        body: None,
        estimate: None,
        provisional: None,
        remember: None,
    };
    // A body costs some 55 times its size once parsed: the bodies served at once are bounded
    // together, and one more is refused for a moment rather than grown into. The share is
    // taken as each part arrives, never for what a body only announces.
    let (bytes, mut reserved) = match read_body(
        &gw.inflight_bytes,
        &headers,
        body,
        gw.opts.max_body,
        gw.opts.body_idle,
    )
    .await
    {
        Ok(read) => read,
        Err(BodyRefusal::Stalled) => {
            let mut r = p
                    .fail(
                        &gw,
                        408,
                        &format!(
                            "request body refused: it stopped arriving, or arrived slower than {} KB/s after {} s",
                            MIN_BODY_RATE >> 10,
                            gw.opts.body_idle.as_secs()
                        ),
                    )
                    .await;
            // The rest of the body is not read: the connection ends with the answer.
            r.headers_mut().insert(
                header::CONNECTION,
                header::HeaderValue::from_static("close"),
            );
            return r;
        }
        Err(BodyRefusal::TooLarge) => {
            return p
                .fail(
                    &gw,
                    413,
                    &format!(
                        "request body refused: larger than {} bytes, the gateway's body limit",
                        gw.opts.max_body
                    ),
                )
                .await
        }
        Err(BodyRefusal::Broken(why)) => {
            return p
                .fail(&gw, 400, &format!("request body refused: {why}"))
                .await
        }
        Err(BodyRefusal::Busy) => {
            return p.busy(&gw, "request bodies").await;
        }
    };
    p.request_bytes = bytes.len();
    if gw.opts.log_bodies {
        p.body = Some(bytes.clone());
    }
    let route = match route {
        Ok(r) => r,
        Err(e) => return p.fail(&gw, 404, &e).await,
    };
    p.query_key = route.query_key.clone();
    p.bearer = route.bearer;
    let endpoint = Endpoint {
        count_only: route.count_only,
        ..endpoint
    };
    let req = match Request::parse_routed(format, &bytes, route.model.as_deref()) {
        Ok(r) => r,
        Err(e) => return p.fail(&gw, 400, &e.to_string()).await,
    };
    p.model = req
        .body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    p.price_warning = mock::card_warning(format, &p.model);
    // A request that continues an earlier one is counted whole; one whose earlier context the
    // gateway does not have is flagged and not estimated (the mock, like the API, refuses a
    // response id it does not know).
    let mut unknown_context = false;
    let req = match gw.continuations.read(&req) {
        continuation::Read::Alone => req,
        continuation::Read::Continued(whole, context) => {
            if !reserved.grow(context) {
                return p.busy(&gw, "request bodies and continued contexts").await;
            }
            whole
        }
        continuation::Read::Unknown(why) => {
            if matches!(gw.opts.upstream, Upstream::Mock)
                && req.body.get("previous_response_id").is_some()
            {
                let id = req.body["previous_response_id"].as_str().unwrap_or("");
                let id: String = id.chars().take(80).collect();
                return p
                    .fail(
                        &gw,
                        400,
                        &format!("Previous response with id '{id}' not found."),
                    )
                    .await;
            }
            unknown_context = true;
            p.flags.push(format!("request {why}"));
            req
        }
        continuation::Read::UnseenConversation(why) => match gw.opts.upstream {
            // The mock is the provider: a conversation it has not seen starts here.
            Upstream::Mock => req,
            // The provider may hold items in it: flagged and not estimated, never counted as
            // if it were empty.
            Upstream::Url(_) => {
                unknown_context = true;
                p.flags.push(format!("request {why}"));
                req
            }
        },
    };
    // Earlier answers' thinking a request sends back, billed again where the provider does.
    // Only Gemini and Responses bodies carry thinking back: the others skip the card lookup.
    let resent = match format {
        Format::Gemini | Format::OpenaiResponses => gw
            .thoughts
            .read(&req, mock::card_for(format, &p.model).render_model()),
        Format::AnthropicMessages | Format::OpenaiChat => thoughts::Resent::Nothing,
    };
    if let thoughts::Resent::Unseen(why) = &resent {
        unknown_context = true;
        p.flags.push(format!("request {why}"));
    }
    if format == Format::OpenaiResponses && !endpoint.count_only {
        p.remember = Some(Arc::new(req.clone()));
    }
    p.stream = route.stream.unwrap_or_else(|| {
        req.body
            .get("stream")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    });
    match gw.opts.upstream.clone() {
        Upstream::Mock => mock_answer(&gw, &p, endpoint, &req, &headers, &resent).await,
        Upstream::Url(base) => {
            let (est_gw, when, commit) = (gw.clone(), when(&headers), !endpoint.count_only);
            let make = move || match unknown_context {
                true => None,
                false => est_gw.estimate(&req, &when, commit).map(|mut e| {
                    e.input_tokens = e.input_tokens.saturating_add(resent.tokens());
                    e.label = resent.label(e.label);
                    e
                }),
            };
            let estimate = match bytes.len() <= ESTIMATE_HERE_BYTES {
                true => forward::Estimating::Here(Box::new(make)),
                false => forward::Estimating::Beside(tokio::task::spawn_blocking(make)),
            };
            forward::forward(gw.clone(), p, estimate, bytes, &headers, &base).await
        }
    }
}

/// Request bodies up to this size have their estimate made on their own task: counting a few
/// KB takes microseconds, less than waking a blocking thread and waiting for it (an assumed
/// bound; at concurrency 32 the hand-over's futex waits and context switches were a seventh
/// of a forwarding gateway's samples under perf, observed on this project's 2-core machine).
const ESTIMATE_HERE_BYTES: usize = 16 * 1024;

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

/// The evidence label of toolcost's count of a request under `tok`. Media parts are billed by
/// their size, which no text count sees: the label says how many the count leaves out.
fn estimate_label(req: &Request, tok: crate::tokens::Tokenizer) -> String {
    match crate::billing::render::media_parts(req.messages()) {
        0 => tok.label(),
        n => format!(
            "{}; {n} {}",
            tok.label(),
            crate::billing::render::MEDIA_NOT_COUNTED
        ),
    }
}

async fn mock_answer(
    gw: &Gateway,
    p: &Pending,
    endpoint: Endpoint,
    req: &Request,
    headers: &HeaderMap,
    resent: &thoughts::Resent,
) -> Response {
    // A vocabulary the gateway lacks is its own fault, not the request's.
    if let Err(e) = mock::card_for(p.format, &p.model).tokenizer().ready() {
        return p.fail(gw, 500, &e.to_string()).await;
    }
    if endpoint.count_only {
        let (_, tok, mut usage) = match gw.mock.bill(req, &when(headers), false) {
            Ok(b) => b,
            Err(e) => return p.fail(gw, 400, &e).await,
        };
        usage.uncached_input = usage.uncached_input.saturating_add(resent.tokens());
        let body = crate::json::compact(&p.format.spec().count_answer(usage.total_input()));
        let label = resent.label(estimate_label(req, tok));
        let row = p.row(
            200,
            body.len(),
            Some((Usage { output: 0, ..usage }, 0.0)),
            &label,
            None,
        );
        gw.record(p, row.with_estimate(Some(&mock_estimate(&usage, &label))))
            .await;
        return json_response(200, body, "application/json");
    }
    let step = match headers.get("x-toolcost-next").map(|v| v.to_str().map(serde_json::from_str::<Value>)) {
        None => None,
        Some(Ok(Ok(v))) => Some(v),
        _ => return p.fail(gw, 400, "x-toolcost-next must be a JSON step: {\"text\": ...} or {\"tool\": ..., \"input\": {...}}").await,
    };
    let mut answer = match gw.mock.answer(req, &when(headers), step.as_ref()) {
        Ok(a) => a,
        Err(e) => return p.fail(gw, 400, &e).await,
    };
    // Thinking sent back is input the cache model does not hold (assumed uncached: it is not
    // in the request's text).
    answer.usage.uncached_input = answer.usage.uncached_input.saturating_add(resent.tokens());
    let id = gw.mock.next_id();
    let cost = answer.card.cost(&answer.usage);
    let label = resent.label(estimate_label(req, answer.tokenizer));
    let spec = p.format.spec();
    if p.stream {
        gw.remember(p, &spec.answer(&p.model, id, answer.reply()));
        let (events, content_type) =
            spec.stream_answer(&p.model, id, answer.reply(), &req.body, &p.path);
        let size = events.iter().map(String::len).sum();
        let row = p.row(200, size, Some((answer.usage, cost)), &label, None);
        gw.record(
            p,
            row.with_estimate(Some(&mock_estimate(&answer.usage, &label))),
        )
        .await;
        let stream = futures_util::stream::iter(
            events
                .into_iter()
                .map(|e| Ok::<_, std::io::Error>(Bytes::from(e))),
        );
        let mut r = Response::new(Body::from_stream(stream));
        r.headers_mut()
            .insert(header::CONTENT_TYPE, content_type.parse().unwrap());
        return r;
    }
    let answered = spec.answer(&p.model, id, answer.reply());
    gw.remember(p, &answered);
    let body = crate::json::compact(&answered);
    let row = p.row(200, body.len(), Some((answer.usage, cost)), &label, None);
    gw.record(
        p,
        row.with_estimate(Some(&mock_estimate(&answer.usage, &label))),
    )
    .await;
    json_response(200, body, "application/json")
}

/// The mock's figures are its estimate: the row says so in both places.
fn mock_estimate(u: &Usage, label: &str) -> log::Estimate {
    log::Estimate {
        input_tokens: u.total_input(),
        cached_input_tokens: u.cached_input,
        cache_write_tokens: u.cache_write,
        label: label.to_string(),
    }
}

pub use forward::MAX_USAGE;

#[cfg(test)]
mod tests;
