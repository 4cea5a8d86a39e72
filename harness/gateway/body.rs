//! Request bodies: read as they arrive, each holding its share of the bytes the gateway serves
//! at once, and refused when too large, too slow or past that bound.

use super::MIN_BODY_RATE;
use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap};
use std::time::Duration;

/// The most bytes of request bodies served at once (a body alone may be larger, up to
/// `--max-body`): 64 MB of bodies is about 3.5 GB once parsed (an assumed bound, from the
/// observed 55 times).
pub const MAX_INFLIGHT_BYTES: usize = 64 << 20;

/// A body's share of [`MAX_INFLIGHT_BYTES`], given back when the request is done.
pub(super) struct Reserved<'a> {
    count: &'a std::sync::atomic::AtomicUsize,
    pub(super) bytes: usize,
}

impl<'a> Reserved<'a> {
    /// Take `bytes` if they fit beside what is in flight, or if nothing is.
    pub(super) fn take(
        count: &'a std::sync::atomic::AtomicUsize,
        bytes: usize,
    ) -> Option<Reserved<'a>> {
        use std::sync::atomic::Ordering::SeqCst;
        count
            .fetch_update(SeqCst, SeqCst, |now| {
                (now == 0 || now.saturating_add(bytes) <= MAX_INFLIGHT_BYTES).then(|| now + bytes)
            })
            .ok()
            .map(|_| Reserved { count, bytes })
    }
}

impl Reserved<'_> {
    /// Take `more` bytes on top of this share, if they fit beside what else is in flight, or
    /// if nothing else is.
    pub(super) fn grow(&mut self, more: usize) -> bool {
        use std::sync::atomic::Ordering::SeqCst;
        let mine = self.bytes;
        let grown = self
            .count
            .fetch_update(SeqCst, SeqCst, |now| {
                (now == mine || now.saturating_add(more) <= MAX_INFLIGHT_BYTES).then(|| now + more)
            })
            .is_ok();
        if grown {
            self.bytes += more;
        }
        grown
    }
}

/// Why a request body was not read.
pub(super) enum BodyRefusal {
    /// Past `--max-body`.
    TooLarge,
    /// The body stopped arriving, or arrives slower than [`MIN_BODY_RATE`].
    Stalled,
    /// Past [`MAX_INFLIGHT_BYTES`] beside the bodies in flight.
    Busy,
    /// The client's stream failed.
    Broken(String),
}

/// Read a request body of at most `limit` bytes, holding its share of the in-flight bound as
/// the bytes arrive (what a body announces is never reserved: a client that announces 64 MB
/// and sends 1 KB holds 1 KB). A body that stops arriving for `idle`, or whose average rate
/// after `idle` is below [`MIN_BODY_RATE`], is refused. Nothing past the bound is buffered.
pub(super) async fn read_body<'a>(
    count: &'a std::sync::atomic::AtomicUsize,
    headers: &HeaderMap,
    body: Body,
    limit: usize,
    idle: Duration,
) -> std::result::Result<(Bytes, Reserved<'a>), BodyRefusal> {
    use futures_util::StreamExt;
    let announced = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<usize>().ok());
    if announced.is_some_and(|n| n > limit) {
        return Err(BodyRefusal::TooLarge);
    }
    let mut reserved = Reserved::take(count, 0).ok_or(BodyRefusal::Busy)?;
    let mut buf = Vec::with_capacity(announced.unwrap_or(0).min(64 << 10));
    let mut stream = body.into_data_stream();
    let started = tokio::time::Instant::now();
    loop {
        let next = tokio::time::timeout(idle, stream.next())
            .await
            .map_err(|_| BodyRefusal::Stalled)?;
        let Some(part) = next else { break };
        let part = part.map_err(|e| BodyRefusal::Broken(e.to_string()))?;
        let elapsed = started.elapsed();
        if elapsed > idle
            && ((buf.len() + part.len()) as f64) < MIN_BODY_RATE as f64 * elapsed.as_secs_f64()
        {
            return Err(BodyRefusal::Stalled);
        }
        if buf.len() + part.len() > limit {
            return Err(BodyRefusal::TooLarge);
        }
        let past = (buf.len() + part.len()).saturating_sub(reserved.bytes);
        if past > 0 && !reserved.grow(past) {
            return Err(BodyRefusal::Busy);
        }
        buf.extend_from_slice(&part);
    }
    Ok((Bytes::from(buf), reserved))
}

impl Drop for Reserved<'_> {
    fn drop(&mut self) {
        self.count
            .fetch_sub(self.bytes, std::sync::atomic::Ordering::SeqCst);
    }
}
