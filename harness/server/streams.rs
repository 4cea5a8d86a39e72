//! Event streams on the MCP endpoints (a session's GET stream and 2026-07-28's
//! `subscriptions/listen`): their own cap below the connection limit, their lifetime, and the
//! change notifications they carry.

use super::{http, App};
use axum::body::{Body, Bytes};
use axum::http::{header, StatusCode};
use axum::response::Response;
use std::sync::Arc;
use std::time::Duration;

/// A response that streams `body` as server-sent events.
pub(super) fn event_stream(body: Body) -> Response {
    let mut resp = Response::new(body);
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, "text/event-stream".parse().unwrap());
    h.insert(header::CACHE_CONTROL, "no-cache".parse().unwrap());
    h.insert("x-accel-buffering", "no".parse().unwrap());
    resp
}

/// A slot for one more event stream, or `None` when `Limits::max_streams` are open.
/// A token holder takes from the streams kept for holders first.
pub(super) fn stream_permit(app: &App, holder: bool) -> Option<tokio::sync::OwnedSemaphorePermit> {
    let held = holder
        .then(|| app.held_streams.clone().try_acquire_owned().ok())
        .flatten();
    held.or_else(|| app.streams.clone().try_acquire_owned().ok())
}

/// The 503 that refuses a stream past the cap.
pub(super) fn too_many_streams(app: &App) -> Response {
    let mut refused = http::error(
        StatusCode::SERVICE_UNAVAILABLE,
        "too_many_streams",
        format!(
            "{} event streams are open, the most this server keeps; close one or retry later",
            app.state.limits.max_streams
        ),
    );
    refused
        .headers_mut()
        .insert(header::RETRY_AFTER, "5".parse().expect("a valid header"));
    refused
}

/// The events of one change stream: `note()` after each directory change, until the client
/// goes away, `alive()` turns false (checked every second: the session was deleted or
/// dropped), or `Limits::stream_lifetime` passes. The stream holds `permit` while it lives.
pub(super) fn change_events(
    app: &App,
    permit: tokio::sync::OwnedSemaphorePermit,
    note: impl Fn() -> String + Send + Sync + 'static,
    alive: impl Fn() -> bool + Send + Sync + 'static,
) -> impl futures_util::Stream<Item = std::result::Result<Bytes, std::io::Error>> {
    let deadline = tokio::time::Instant::now() + app.state.limits.stream_lifetime;
    let rx = app.state.changes.subscribe();
    let parts = Arc::new((note, alive));
    futures_util::stream::unfold((rx, permit), move |(mut rx, permit)| {
        let parts = parts.clone();
        async move {
            use tokio::sync::broadcast::error::RecvError;
            loop {
                let tick = tokio::time::sleep(Duration::from_secs(1));
                tokio::select! {
                    got = tokio::time::timeout_at(deadline, rx.recv()) => {
                        return match got {
                            Ok(Ok(())) | Ok(Err(RecvError::Lagged(_))) if (parts.1)() => {
                                let event = format!("event: message\ndata: {}\n\n", (parts.0)());
                                Some((Ok(Bytes::from(event)), (rx, permit)))
                            }
                            _ => None,
                        };
                    }
                    _ = tick => {
                        if !(parts.1)() {
                            return None;
                        }
                    }
                }
            }
        }
    })
}
