//! Forward mode: the client's bytes go to the provider unchanged and its answer comes back as
//! it arrives, whole or event by event, within the idle timeout and the size cap; every call
//! leaves exactly one log row with the provider's usage beside toolcost's estimate.

use super::{json_response, log, mock, Gateway, Pending, UpstreamUrl};
use crate::pricing::Usage;
use crate::provider::ObservedUsage;
use crate::wire::Format;
use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use futures_util::StreamExt;
use log::LogRow;
use std::sync::Arc;

/// toolcost's estimate of a forwarded request: still being made, or made.
enum EstimateSlot {
    Running(tokio::task::JoinHandle<Option<log::Estimate>>),
    Done(Option<log::Estimate>),
}

/// How the estimate of a request about to be forwarded is made.
pub(super) enum Estimating {
    /// Here, on the request's own task, while the request goes out: for a small request,
    /// whose estimate takes less than handing it to another thread would.
    Here(Box<dyn FnOnce() -> Option<log::Estimate> + Send>),
    /// On a blocking thread, while the upstream answers: the row waits for it only if the
    /// answer comes first.
    Beside(tokio::task::JoinHandle<Option<log::Estimate>>),
}

/// A forwarded request in flight. Whatever becomes of it (answered, failed, cut, or dropped
/// because the client went away) it leaves exactly one log row: [`Drop`] writes the row of a
/// request nobody finished, with status 499 and the usage seen so far.
struct Flight {
    gw: Arc<Gateway>,
    p: Pending,
    logged: bool,
    /// Bytes of the answer received so far.
    size: usize,
    /// `data:` lines of the events that carried usage: the first and the latest few.
    usage_docs: Vec<String>,
    /// A Gemini stream's events that carry a thought signature (at most [`SIGNED`]), for
    /// [`super::thoughts`].
    signed: Vec<serde_json::Value>,
    estimate: EstimateSlot,
}

/// Usage-bearing events kept per stream: the first (Anthropic's `message_start`) and this
/// many of the latest.
const USAGE_DOCS: usize = 8;

/// Signed events kept per stream: an answer bills one turn's signature.
const SIGNED: usize = 8;

impl Flight {
    fn new(gw: Arc<Gateway>, p: Pending, estimate: EstimateSlot) -> Flight {
        Flight {
            gw,
            p,
            logged: false,
            size: 0,
            usage_docs: Vec::new(),
            signed: Vec::new(),
            estimate,
        }
    }

    /// Wait for the estimate (called before a row with the provider's usage is written).
    async fn settle(&mut self) {
        if let EstimateSlot::Running(handle) = &mut self.estimate {
            self.estimate = EstimateSlot::Done(handle.await.ok().flatten());
        }
    }

    /// Put the estimate on the pending row if it is made; a row written without waiting
    /// (an error, a client gone) has it only if it was ready.
    fn take_estimate(&mut self) {
        use futures_util::FutureExt;
        if let EstimateSlot::Running(handle) = &mut self.estimate {
            if handle.is_finished() {
                self.estimate =
                    EstimateSlot::Done(handle.now_or_never().and_then(|r| r.ok()).flatten());
            }
        }
        if let EstimateSlot::Done(e) = &self.estimate {
            self.p.estimate = e.clone();
        }
    }

    /// Note an event's data if it carries usage.
    fn observe(&mut self, data: &str) {
        if self.p.format == Format::Gemini
            && self.signed.len() < SIGNED
            && data.contains("thoughtSignature")
        {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(data) {
                self.signed.push(v);
            }
        }
        if !data.contains("usage") {
            return;
        }
        if self.usage_docs.len() > USAGE_DOCS {
            self.usage_docs.remove(1);
        }
        self.usage_docs.push(format!("data: {data}\n"));
    }

    /// Write the row from the usage found in `text` (a whole body, or the kept events); it is
    /// committed when this returns.
    async fn log(&mut self, status: u16, text: &str, streamed: bool, error: Option<String>) {
        let observed = self.p.format.spec().observed_usage(text, streamed);
        self.log_observed(status, observed, error).await;
    }

    /// [`Flight::log`] with the usage already read from the answer.
    async fn log_observed(
        &mut self,
        status: u16,
        observed: Option<ObservedUsage>,
        error: Option<String>,
    ) {
        let row = self.row(status, observed, error);
        self.gw.record(&self.p, row).await;
    }

    /// The row of the usage the answer carried; the flight counts as logged from here.
    fn row(
        &mut self,
        status: u16,
        observed: Option<ObservedUsage>,
        error: Option<String>,
    ) -> LogRow {
        self.logged = true;
        self.take_estimate();
        let row = match observed.map(to_usage) {
            None => self.p.row(status, self.size, None, "none", error),
            Some(Ok(u)) => {
                // The provider's tokens are observed; the dollars are derived from the model's
                // own card, or left at zero (with the row's warning) when no card is its own:
                // never another model's price.
                let card = mock::card_for(self.p.format, &self.p.model);
                let cost = match &self.p.price_warning {
                    None => card.cost(&u),
                    Some(_) => 0.0,
                };
                if self.p.price_warning.is_some() {
                    self.p.price_warning = Some(format!(
                        "no price card for model `{}`: no cost computed (0 logged)",
                        self.p.model
                    ));
                }
                self.p
                    .row(status, self.size, Some((u, cost)), "observed", error)
            }
            Some(Err(why)) => {
                let error = Some(match error {
                    Some(e) => format!("{e}; {why}"),
                    None => why,
                });
                self.p.row(status, self.size, None, "observed", error)
            }
        };
        row
    }

    async fn log_stream(&mut self, status: u16, error: Option<String>) {
        // A Responses stream's last event holds the whole response: its context is kept.
        let docs = || {
            self.usage_docs.iter().filter_map(|d| {
                let data = d.trim().strip_prefix("data:")?;
                serde_json::from_str::<serde_json::Value>(data.trim()).ok()
            })
        };
        if self.p.remember.is_some() {
            let done = docs().rfind(|v| v["type"] == "response.completed");
            if let Some(v) = done {
                self.gw.remember(&self.p, &v["response"]);
            }
        }
        // A Gemini stream's signed events, with the usage its last events carry.
        if self.p.format == Format::Gemini && !self.signed.is_empty() {
            let mut events = std::mem::take(&mut self.signed);
            events.extend(docs().filter(|v| v["usageMetadata"].is_object()));
            self.gw.thoughts.remember(Format::Gemini, &events);
        }
        let text = self.usage_docs.concat();
        self.log(status, &text, true, error).await;
    }

    /// Log an error and answer it in the provider's format.
    async fn fail(&mut self, status: u16, message: &str) -> Response {
        self.logged = true;
        self.take_estimate();
        self.p.fail(&self.gw, status, message).await
    }
}

impl Drop for Flight {
    fn drop(&mut self) {
        if !self.logged {
            let text = self.usage_docs.concat();
            let observed = self.p.format.spec().observed_usage(&text, true);
            let row = self.row(
                499,
                observed,
                Some("the client went away before the answer was complete".into()),
            );
            self.gw.record_blocking(&self.p, row);
        }
    }
}

/// Forward the bytes unchanged; stream the answer back as it arrives. The log row is written
/// when the answer is complete, before its last event is released.
pub(super) async fn forward(
    gw: Arc<Gateway>,
    p: Pending,
    estimate: Estimating,
    bytes: Bytes,
    headers: &HeaderMap,
    base: &str,
) -> Response {
    // The client's own key goes back where it put it, byte for byte, when the gateway holds
    // none (with one, the gateway's goes in the format's header instead).
    let path = match (&gw.opts.api_key, &p.query_key) {
        (None, Some(k)) => {
            let sep = if p.path.contains('?') { '&' } else { '?' };
            format!("{}{sep}key={k}", p.path)
        }
        _ => p.path.clone(),
    };
    let url = gw.upstream_url(base, &path);
    let rb = upstream_request(&gw, &p, bytes, headers, url.clone());
    // The flight exists before the request goes out: a client that leaves while the upstream
    // is still silent drops it, and its row (499) is written, as the upstream may bill it.
    let mut flight = Flight::new(gw.clone(), p, EstimateSlot::Done(None));
    let sent = match estimate {
        // The request is polled first (`biased`), so its bytes are on their way while the
        // estimate is made.
        Estimating::Here(make) => {
            let (sent, made) = tokio::join!(biased; rb.send(), async move { make() });
            flight.estimate = EstimateSlot::Done(made);
            sent
        }
        Estimating::Beside(handle) => {
            flight.estimate = EstimateSlot::Running(handle);
            rb.send().await
        }
    };
    let resp = match sent {
        Ok(r) => r,
        Err(e) if e.is_timeout() => {
            return flight
                .fail(
                    504,
                    &format!(
                        "the upstream sent nothing for {} s: {}",
                        gw.opts.timeout.as_secs_f64(),
                        crate::net::describe(&e, url.as_str())
                    ),
                )
                .await
        }
        Err(e) => {
            return flight
                .fail(
                    502,
                    &format!(
                        "the upstream could not be reached: {}",
                        crate::net::describe(&e, url.as_str())
                    ),
                )
                .await
        }
    };
    let status = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_string();
    let passed: Passed = resp
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
    if !streamed || !(200..300).contains(&status) {
        return forward_whole(flight, resp, status, &content_type, passed).await;
    }
    forward_stream(flight, resp, status, &content_type, passed).await
}

/// The upstream request: the client's bytes and headers, less hop-by-hop ones, ours, and the
/// credential when the gateway holds the key (then the key goes in the format's header).
fn upstream_request(
    gw: &Gateway,
    p: &Pending,
    bytes: Bytes,
    headers: &HeaderMap,
    url: UpstreamUrl,
) -> reqwest::RequestBuilder {
    let rb = match url {
        UpstreamUrl::Parsed(u) => gw.http.post(u),
        UpstreamUrl::Text(t) => gw.http.post(t),
    };
    let mut rb = rb.body(bytes);
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
                | "accept-encoding"
        );
        let credential = matches!(n, "authorization" | "x-api-key" | "x-goog-api-key");
        if !(ours || hop || (credential && gw.opts.api_key.is_some())) {
            rb = rb.header(name.clone(), value.clone());
        }
    }
    if let Some(k) = &gw.opts.api_key {
        let (name, value) = match p.bearer {
            true => ("authorization", format!("Bearer {k}")),
            false => p.format.spec().auth_header(k),
        };
        rb = rb.header(name, value);
    }
    rb
}

type Passed = Vec<(header::HeaderName, header::HeaderValue)>;

/// A whole (not streamed) answer, or any error answer: read it (up to the cap), log it, pass
/// it on. An error whose body is not the provider's own error JSON is answered in the
/// provider's format, with the upstream's status.
async fn forward_whole(
    mut flight: Flight,
    resp: reqwest::Response,
    status: u16,
    content_type: &str,
    passed: Passed,
) -> Response {
    let cap = flight.gw.opts.max_response;
    let body = match crate::net::read_capped(resp, cap).await {
        Ok(b) => b,
        Err(crate::net::ReadError::TooLarge(max)) => {
            return flight.fail(
                502,
                &format!("the upstream's answer is larger than the gateway's cap of {max} bytes (--max-response)"),
            )
            .await
        }
        Err(crate::net::ReadError::Http(e)) if e.is_timeout() => {
            return flight.fail(
                504,
                &format!(
                    "the upstream's answer stalled: nothing for {} s",
                    flight.gw.opts.timeout.as_secs_f64()
                ),
            )
            .await
        }
        Err(crate::net::ReadError::Http(e)) => {
            return flight.fail(502, &format!("the upstream's answer was cut off: {}", crate::net::scrubbed(&e)))
            .await
        }
    };
    flight.size = body.len();
    // An answer too large to build as a tree (a hostile or broken upstream) is refused
    // before anything parses it.
    if let Err(why) = crate::json::check_nodes(&body, "the upstream's answer") {
        return flight.fail(502, &why).await;
    }
    let text = String::from_utf8_lossy(&body).into_owned();
    if !(200..300).contains(&status) {
        /// The provider's own error JSON: an object with an `error` member, whatever it holds
        /// (`null` included), read without building the rest.
        #[derive(serde::Deserialize)]
        struct Own {
            #[serde(default, deserialize_with = "present")]
            error: bool,
        }
        fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
            <serde::de::IgnoredAny as serde::Deserialize>::deserialize(d).map(|_| true)
        }
        // Serde would read the struct from an array too; the error JSON is an object.
        let own = text.trim_start().starts_with('{')
            && serde_json::from_str::<Own>(&text).is_ok_and(|o| o.error);
        if !own {
            let snippet: String = text.chars().filter(|c| !c.is_control()).take(200).collect();
            return flight
                .fail(
                    status,
                    &format!("the upstream answered HTTP {status} ({content_type}): {snippet}"),
                )
                .await;
        }
        flight
            .log(
                status,
                &text,
                false,
                Some(format!("upstream HTTP {status}")),
            )
            .await;
        let mut r = json_response(status, body, "application/json");
        r.headers_mut().extend(passed);
        return r;
    }
    let observed = flight.p.format.spec().observed_usage(&text, false);
    if observed.is_none() && serde_json::from_str::<serde::de::IgnoredAny>(&text).is_err() {
        return flight
            .fail(502, "the upstream answered with malformed JSON")
            .await;
    }
    flight.settle().await;
    if flight.p.remember.is_some() || flight.p.format == Format::Gemini {
        if let Ok(answer) = serde_json::from_str::<serde_json::Value>(&text) {
            flight.gw.remember(&flight.p, &answer);
        }
    }
    flight.log_observed(status, observed, None).await;
    let mut r = json_response(status, body, content_type);
    r.headers_mut().extend(passed);
    r
}

/// A streamed answer, passed on as whole events, one event behind, so that the row is
/// committed before the last event is released and an error event never lands inside a
/// half-sent one. A stream that is cut, stalls past the idle timeout, passes the size cap or
/// ends without its final event gets an error event in the provider's format.
async fn forward_stream(
    mut flight: Flight,
    resp: reqwest::Response,
    status: u16,
    content_type: &str,
    passed: Passed,
) -> Response {
    // The row is written before the first byte goes out, so a gateway killed mid-stream
    // leaves a row for it (marked incomplete when the log is next opened), with the request's
    // own estimate: a stream whose usage comes only at its end (OpenAI Chat's) keeps it.
    flight.settle().await;
    flight.take_estimate();
    flight.p.provisional = flight.gw.begin(&flight.p, status);
    let cap = flight.gw.opts.max_response;
    let state = StreamState {
        upstream: Box::pin(resp.bytes_stream()),
        splitter: crate::sse::Splitter::new(cap),
        held: None,
        complete: false,
        done: false,
        flight,
        status,
        noted: false,
    };
    let stream = futures_util::stream::unfold(state, |mut s| async move {
        if s.done {
            return None;
        }
        loop {
            match s.upstream.next().await {
                Some(Ok(chunk)) => {
                    s.flight.size += chunk.len();
                    if s.flight.size > s.flight.gw.opts.max_response {
                        let msg = format!(
                            "the upstream's stream passed the gateway's cap of {} bytes (--max-response)",
                            s.flight.gw.opts.max_response
                        );
                        return Some((Ok(s.cut(msg).await), s));
                    }
                    let events = match s.splitter.push(&chunk) {
                        Ok(ev) => ev,
                        Err(e) => {
                            let msg = format!("the upstream's stream is malformed: {e}");
                            return Some((Ok(s.cut(msg).await), s));
                        }
                    };
                    if let Some(out) = s.take_events(events) {
                        return Some((Ok::<Bytes, std::io::Error>(out), s));
                    }
                }
                Some(Err(e)) => {
                    let msg = if e.is_timeout() {
                        format!(
                            "the upstream's stream stalled: nothing for {} s",
                            s.flight.gw.opts.timeout.as_secs_f64()
                        )
                    } else {
                        format!(
                            "the upstream's stream was cut off: {}",
                            crate::net::scrubbed(&e)
                        )
                    };
                    return Some((Ok(s.cut(msg).await), s));
                }
                None => {
                    if !s.complete || !s.splitter.pending().iter().all(u8::is_ascii_whitespace) {
                        let msg = "the upstream's stream ended before its final event".to_string();
                        return Some((Ok(s.cut(msg).await), s));
                    }
                    s.flight.settle().await;
                    s.flight.log_stream(s.status, None).await;
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

type Upstreaming =
    std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<Bytes>> + Send>>;

struct StreamState {
    upstream: Upstreaming,
    splitter: crate::sse::Splitter,
    /// The last whole event, held until the next one (or the end) arrives.
    held: Option<Bytes>,
    /// Whether the provider's final event (`message_stop`, `[DONE]`, `response.completed`)
    /// went by.
    complete: bool,
    done: bool,
    flight: Flight,
    status: u16,
    /// Whether the in-flight row already holds the usage the stream's first usage event
    /// carried.
    noted: bool,
}

impl StreamState {
    /// Write the usage the stream has shown so far (Anthropic's `message_start` carries the
    /// input tokens) into the in-flight row, committed before that event is passed on, so a
    /// gateway killed later leaves a row with the tokens the client already saw. Once a stream.
    fn note_usage(&mut self) {
        self.noted = true;
        let Some(id) = self.flight.p.provisional else {
            return;
        };
        let text = self.flight.usage_docs.concat();
        let Some(Ok(u)) = self
            .flight
            .p
            .format
            .spec()
            .observed_usage(&text, true)
            .map(to_usage)
        else {
            return;
        };
        if u.total_input() == 0 {
            return;
        }
        let cost = match &self.flight.p.price_warning {
            None => mock::card_for(self.flight.p.format, &self.flight.p.model).cost(&u),
            Some(_) => 0.0,
        };
        let row = self
            .flight
            .p
            .row(
                self.status,
                self.flight.size,
                Some((u, cost)),
                log::IN_FLIGHT,
                Some(format!("{}{})", log::IN_FLIGHT_BY, std::process::id())),
            )
            .with_estimate(self.flight.p.estimate.as_ref());
        if let Err(e) = self.flight.gw.log.write_now(Some(id), row, None) {
            eprintln!("toolcost gateway: could not note the stream's usage: {e}");
        }
    }

    /// Note whole events; return what may be released now (all but the last).
    fn take_events(&mut self, events: Vec<Vec<u8>>) -> Option<Bytes> {
        let mut out: Vec<u8> = Vec::new();
        for e in events {
            if let Some(data) = crate::sse::data(&e) {
                if self.flight.p.format.spec().stream_complete(&data) {
                    self.complete = true;
                }
                self.flight.observe(&data);
                if !self.noted && data.contains("usage") {
                    self.note_usage();
                }
            }
            if let Some(prev) = self.held.replace(Bytes::from(e)) {
                out.extend_from_slice(&prev);
            }
        }
        (!out.is_empty()).then(|| Bytes::from(out))
    }

    /// End the stream with an error: log it, release the whole events held, drop any half
    /// event, and add an error event in the provider's format.
    async fn cut(&mut self, msg: String) -> Bytes {
        self.flight.log_stream(self.status, Some(msg.clone())).await;
        self.done = true;
        let err = self.flight.p.format.spec().error_body(502, &msg);
        let mut out = self.held.take().map(|b| b.to_vec()).unwrap_or_default();
        out.extend_from_slice(
            format!("event: error\ndata: {}\n\n", crate::json::compact(&err)).as_bytes(),
        );
        Bytes::from(out)
    }
}

/// Usage counts past this are not believed (2^53: exact in f64 and i64, far above any real
/// request); a row with one is flagged, never logged with a wrapped number.
pub const MAX_USAGE: u64 = 1 << 53;

fn to_usage(o: ObservedUsage) -> std::result::Result<Usage, String> {
    if o.unreadable {
        return Err("the upstream reported usage that is not a count of tokens (text, a negative number or a fraction); its figures are not logged".into());
    }
    if [o.input, o.cached, o.written, o.output]
        .iter()
        .any(|&n| n > MAX_USAGE)
    {
        return Err(format!(
            "the upstream reported implausible usage (input {}, cached {}, cache write {}, output {}); its figures are not logged",
            o.input, o.cached, o.written, o.output
        ));
    }
    Ok(Usage {
        uncached_input: o.input.saturating_sub(o.cached + o.written),
        cached_input: o.cached,
        cache_write: o.written,
        output: o.output,
    })
}
