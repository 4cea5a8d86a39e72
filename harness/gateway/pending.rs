//! A request while it is served: what its log row will say, gathered as the request is read,
//! routed, billed and answered.

use super::{json_response, log, Gateway, LogRow, MAX_INFLIGHT_BYTES};
use crate::clock;
use crate::pricing::Usage;
use crate::provider::Format;
use crate::wire::Request;
use axum::body::Bytes;
use axum::http::header;
use axum::response::Response;
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

/// What is known of a request so far, for its row.
pub(super) struct Pending {
    pub(super) format: Format,
    /// The path (and query) the request is logged and forwarded under.
    pub(super) path: String,
    /// A key the client put in the query, forwarded only when the gateway holds none.
    pub(super) query_key: Option<String>,
    /// The upstream takes the gateway's key as a bearer token (Vertex AI).
    pub(super) bearer: bool,
    pub(super) model: String,
    pub(super) request_bytes: usize,
    pub(super) stream: bool,
    pub(super) metadata: String,
    pub(super) started: Instant,
    /// Said in the row's metadata: a model no price card names (billed at another's prices by
    /// the mock; left unpriced when forwarded).
    pub(super) price_warning: Option<String>,
    /// Said in the row's metadata apart from the price: context the request points to that the
    /// estimate cannot hold (an unknown continuation, cached content, returned thoughts).
    pub(super) flags: Vec<String>,
    /// The request's body, kept only with `--log-bodies`.
    pub(super) body: Option<Bytes>,
    /// toolcost's estimate of the request, once known (forward mode).
    pub(super) estimate: Option<log::Estimate>,
    /// The row written when a forwarded stream began, which its end completes.
    pub(super) provisional: Option<i64>,
    /// A Responses request as the provider bills it (its continued context included), whose
    /// answer's context is kept for the requests that continue it.
    pub(super) remember: Option<Arc<Request>>,
}

impl Pending {
    pub(super) fn row(
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
            // A credential in the query (Gemini's `key`, an OAuth `access_token`) is not logged.
            path: crate::secret::redact(&self.path),
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
            metadata: self.metadata(),
            ..Default::default()
        }
        .with_estimate(self.estimate.as_ref())
    }

    /// The client's metadata, with the gateway's warnings added as `toolcost_warning` (the
    /// price's first, then each flag, joined by `; `).
    pub(super) fn metadata(&self) -> String {
        let said: Vec<&str> = self
            .price_warning
            .iter()
            .chain(&self.flags)
            .map(String::as_str)
            .collect();
        if said.is_empty() {
            return self.metadata.clone();
        }
        let w = &said.join("; ");
        match serde_json::from_str::<Value>(&self.metadata) {
            Ok(Value::Object(mut m)) => {
                m.insert("toolcost_warning".into(), Value::String(w.to_string()));
                crate::json::compact(&Value::Object(m))
            }
            _ => crate::json::compact(
                &serde_json::json!({"client_metadata": self.metadata, "toolcost_warning": w}),
            ),
        }
    }

    /// Refuse for a moment: the gateway holds [`MAX_INFLIGHT_BYTES`] of `what` already (503
    /// with `Retry-After`).
    pub(super) async fn busy(&self, gw: &Gateway, what: &str) -> Response {
        let why = format!(
            "the gateway is busy with {} MB of {what}; retry in a second",
            MAX_INFLIGHT_BYTES >> 20
        );
        let mut r = self.fail(gw, 503, &why).await;
        r.headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
        // The body is not read: the answer ends the connection, so the client reads it
        // rather than meeting a reset while it is still sending.
        r.headers_mut().insert(
            header::CONNECTION,
            header::HeaderValue::from_static("close"),
        );
        r
    }

    /// Log an error and answer it in the provider's format.
    pub(super) async fn fail(&self, gw: &Gateway, status: u16, message: &str) -> Response {
        let body = crate::json::compact(&self.format.spec().error_body(status, message));
        gw.record(
            self,
            self.row(status, body.len(), None, "none", Some(message.to_string())),
        )
        .await;
        json_response(status, body, "application/json")
    }
}
