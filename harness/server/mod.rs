//! The reference dispatch server: one SQLite `directory` table served as the HTTP protocol
//! (`/api/dispatch`, `/api/directory`) and as an MCP endpoint for every surface that has one
//! (`/mcp` per-row, `/mcp/min` per-row trimmed, `/mcp/small`, `/mcp/code`; the surface
//! modules say which), plus MCP over stdio. Every surface reads the same snapshot, rebuilt on
//! each change, and every invocation goes through one path that writes a receipt first.

mod accept;
pub mod answer;
pub mod batch;
pub mod code;
pub mod guard;
pub mod listing;
mod peers;
pub mod sessions;
mod stall;
pub mod stdio;
mod streams;
use streams::{change_events, event_stream, stream_permit, too_many_streams};
pub mod http;
pub mod invoke;
mod limits;
pub mod mcp;
pub mod outbound;
pub mod state;
pub mod store;

pub use accept::run;
use answer::rpc_response;
pub use limits::{Limits, ReceiptIds};

use crate::catalogue::Row;
use crate::error::Result;
use crate::surface::{Endpoint, REGISTRY};
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State as Extract};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::Router;
use mcp::Outcome;
use serde_json::Value;
use sessions::Sessions;
use state::State;
use std::path::PathBuf;
use std::sync::Arc;

/// Request bodies larger than this are refused with 413 unless `--max-body` says otherwise.
pub const DEFAULT_MAX_BODY: usize = 1 << 20;

/// How to start a server.
#[derive(Debug, Clone)]
pub struct Options {
    /// Rows to load into the directory (replacing what the database holds), or `None` to serve
    /// the database as it is.
    pub rows: Option<Vec<Row>>,
    pub db: Option<PathBuf>,
    pub token: Option<String>,
    pub allowlist: Vec<String>,
    pub max_body: usize,
}

/// Open the store, load the rows, and build the shared state, with the default limits.
pub fn state(opts: &Options) -> Result<Arc<State>> {
    state_with(opts, Limits::default())
}

/// The same with these limits.
pub fn state_with(opts: &Options, limits: Limits) -> Result<Arc<State>> {
    let (mut conn, claim) = store::open(opts.db.as_deref())?;
    if let Some(rows) = &opts.rows {
        store::replace_directory(&mut conn, rows)?;
    }
    let st = State::with_limits(conn, opts.token.clone(), &opts.allowlist, limits)?;
    finish(st, opts, claim)
}

/// [`state_with`] for a server that owns its options, so a large catalogue is not held twice
/// while the server starts. The first snapshot must be what the table gives back:
/// - In memory, the table is the one this server made, and what it gives back equals what it
///   was given (JSON numbers are written and read exactly), so the snapshot is made from the
///   rows while they are written (a test compares the two).
/// - A `--db` file may bring a table of its own making (its own column types), so the rows
///   are written, let go, and the snapshot is read back from the table.
pub fn state_from(mut opts: Options, limits: Limits) -> Result<Arc<State>> {
    let (mut conn, claim) = store::open(opts.db.as_deref())?;
    let (token, allowlist) = (opts.token.clone(), &opts.allowlist);
    let st = match opts.rows.take() {
        Some(rows) if opts.db.is_none() => {
            let (first, written) =
                state::Snapshot::new_beside(rows, |rows| store::replace_directory(&mut conn, rows));
            written?;
            State::with_snapshot(conn, first, token, allowlist, limits)?
        }
        Some(rows) => {
            store::replace_directory(&mut conn, &rows)?;
            drop(rows);
            State::with_limits(conn, token, allowlist, limits)?
        }
        None => State::with_limits(conn, token, allowlist, limits)?,
    };
    finish(st, &opts, claim)
}

/// The options a state takes after it is made, and its claim on the store file.
fn finish(mut st: State, opts: &Options, claim: Option<store::Claim>) -> Result<Arc<State>> {
    st.max_body = opts.max_body;
    st.in_memory = opts.db.is_none();
    st.claim = claim;
    Ok(Arc::new(st))
}

struct App {
    state: Arc<State>,
    /// Open sessions, per endpoint path.
    sessions: std::collections::HashMap<&'static str, Sessions>,
    /// One permit per open event stream (`Limits::max_streams`), less the streams kept for
    /// token holders.
    streams: Arc<tokio::sync::Semaphore>,
    /// Streams only a token holder may open, so tokenless peers cannot take every slot: a
    /// quarter of `max_streams` when the server has a token (8 of the default 32), else none.
    held_streams: Arc<tokio::sync::Semaphore>,
    /// Largest request body (`--max-body`).
    max_body: usize,
}

/// Every MCP endpoint the server mounts, from the surface registry.
pub fn endpoints() -> Vec<Endpoint> {
    REGISTRY.iter().filter_map(|s| s.endpoint()).collect()
}

/// The router for a state.
pub fn router(state: Arc<State>, max_body: usize) -> Router {
    let total = state.limits.max_streams.max(1);
    let held = match state.token.is_some() {
        true => total / 4,
        false => 0,
    };
    let streams = Arc::new(tokio::sync::Semaphore::new(total - held));
    let held_streams = Arc::new(tokio::sync::Semaphore::new(held));
    let app = Arc::new(App {
        state,
        sessions: endpoints()
            .iter()
            .map(|e| (e.path, Sessions::default()))
            .collect(),
        streams,
        held_streams,
        max_body,
    });
    let dispatch = Router::new()
        .route(
            "/api/dispatch",
            get(http::dispatch_get).post(http::dispatch_post),
        )
        .route("/api/directory", post(http::directory_post))
        .route("/api/directory/{key}", delete(http::directory_delete))
        .with_state(app.state.clone())
        .route_layer(axum::middleware::from_fn_with_state(app.clone(), read_body))
        .route_layer(axum::middleware::from_fn_with_state(app.clone(), api_guard));
    let mut mcp = Router::new();
    for e in endpoints() {
        mcp = mcp.route(
            e.path,
            post(
                move |Extract(app): AppState, headers: HeaderMap, body: BodyResult| async move {
                    mcp_post(&app, e, &headers, body).await
                },
            )
            .get(
                move |Extract(app): AppState, headers: HeaderMap| async move {
                    mcp_get(&app, e, &headers)
                },
            )
            .delete(
                move |Extract(app): AppState, headers: HeaderMap| async move {
                    mcp_delete(&app, e, &headers)
                },
            ),
        );
    }
    // The guards run first and refuse from the headers alone; only then is a body read.
    let mcp = mcp
        .route_layer(axum::middleware::from_fn_with_state(app.clone(), read_body))
        .route_layer(axum::middleware::from_fn_with_state(app.clone(), mcp_guard))
        .with_state(app);
    dispatch
        .merge(mcp)
        .fallback(|| async {
            http::error(
                StatusCode::NOT_FOUND,
                "not_found",
                "no such endpoint; GET /api/dispatch lists them",
            )
        })
        .method_not_allowed_fallback(|| async {
            http::error(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "this endpoint does not take that method; GET /api/dispatch lists the verbs",
            )
        })
        .layer(DefaultBodyLimit::max(max_body))
}

/// Read a POST's whole body, after the guards and before the handler, within a size and a time:
/// a client that trickles its body cannot hold a handler, and an over-long body gets a JSON 413
/// (a JSON-RPC error on the MCP endpoints) instead of axum's plain text. Other methods' bodies
/// are never read.
///
/// A caller with the token gets `--max-body` and `Limits::body_timeout`. One without it got
/// here only because the headers could not tell whether it needs the token (an MCP POST under
/// `calls` or `list`: only the JSON-RPC method in the body says). Refusing it outright would
/// refuse the open methods; reading its body as a token holder's would let anyone hold a
/// connection slot for the whole body timeout. What it may send without the token is small,
/// so its body gets `Limits::open_body` bytes within `Limits::open_body_timeout`.
async fn read_body(
    Extract(app): AppState,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if req.method() != axum::http::Method::POST {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let is_mcp = parts.uri.path().starts_with("/mcp");
    let limits = &app.state.limits;
    let open = !app.state.authorised(http::presented(&parts.headers));
    let (limit, timeout) = if open {
        (
            app.max_body.min(limits.open_body),
            limits.body_timeout.min(limits.open_body_timeout),
        )
    } else {
        (app.max_body, limits.body_timeout)
    };
    let whose = if open {
        " for a request without the token"
    } else {
        ""
    };
    let refuse = |status: StatusCode, code: &str, message: String| {
        if is_mcp {
            let body = mcp::rpc_error(Value::Null, mcp::INVALID_REQUEST, message);
            rpc_response(status, crate::json::compact(&body))
        } else {
            http::error(status, code, message)
        }
    };
    let too_large = || {
        refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            if open && limit < app.max_body {
                format!("the request body is larger than the {limit} bytes this server reads{whose} (only tools/call, which needs the token, takes more)")
            } else {
                format!("the request body is larger than this server's --max-body of {limit} bytes")
            },
        )
    };
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return too_large();
    }
    match tokio::time::timeout(timeout, axum::body::to_bytes(body, limit)).await {
        Err(_) => refuse(
            StatusCode::REQUEST_TIMEOUT,
            "body_timeout",
            format!(
                "the request body did not arrive within {} s{whose}",
                timeout.as_secs_f64()
            ),
        ),
        Ok(Err(e)) if error_chain(&e).contains("length limit") => too_large(),
        Ok(Err(e)) => refuse(
            StatusCode::BAD_REQUEST,
            "bad_body",
            format!("reading the request body failed: {}", error_chain(&e)),
        ),
        Ok(Ok(bytes)) => {
            next.run(axum::extract::Request::from_parts(parts, Body::from(bytes)))
                .await
        }
    }
}

/// An error and its sources, as one line.
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

type AppState = Extract<Arc<App>>;

type BodyResult = Result<Bytes, axum::extract::rejection::BytesRejection>;

fn sessions(app: &App, endpoint: Endpoint) -> &Sessions {
    &app.sessions[endpoint.path]
}

/// The 401 for a request the token protects: a JSON-RPC error body and the bearer challenge.
fn unauthorised(body: &Value, presented: bool) -> Response {
    let mut resp = rpc_response(StatusCode::UNAUTHORIZED, crate::json::compact(body));
    resp.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        guard::challenge(presented)
            .parse()
            .expect("the challenge is a valid header"),
    );
    resp
}

/// `Some(401)` when a token is configured and this request's is missing or wrong.
fn token_gate(st: &State, headers: &HeaderMap) -> Option<Response> {
    let presented = http::presented(headers);
    if st.token.is_none() || st.authorised(presented) {
        return None;
    }
    let body = mcp::rpc_error(
        Value::Null,
        mcp::UNAUTHORIZED,
        "missing or wrong token: send `Authorization: Bearer <token>` or `x-mcp-token`",
    );
    Some(unauthorised(&body, presented.is_some()))
}

/// Refuse, before anything else, a request whose `Host` or `Origin` the access policy does not
/// allow (403, a JSON-RPC error without an id), then one that needs the token whatever its
/// body says and lacks it (401), before its body is read.
async fn mcp_guard(
    Extract(app): AppState,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if let Err(why) = check_access(&app, &req) {
        let body = mcp::rpc_error(
            Value::Null,
            mcp::INVALID_REQUEST,
            format!("forbidden: {why}"),
        );
        return rpc_response(StatusCode::FORBIDDEN, crate::json::compact(&body));
    }
    let st = &app.state;
    if st.access().token_for.need_before_body(req.method()) == guard::Need::Always {
        if let Some(denied) = token_gate(st, req.headers()) {
            return denied;
        }
    }
    next.run(req).await
}

/// The Host and Origin checks of [`guard::Access`] on one request. An absolute-form request
/// target (and HTTP/2's `:authority`) names the host, and a `Host` header beside it is
/// ignored (RFC 9112, section 3.2.2); two `Host` headers are refused (section 3.2).
fn check_access(app: &App, req: &axum::extract::Request) -> std::result::Result<(), String> {
    let get = |name: header::HeaderName| {
        req.headers()
            .get(name)
            .map(|v| v.to_str().unwrap_or("\u{fffd}"))
    };
    if req.headers().get_all(header::HOST).iter().count() > 1 {
        return Err("the request has more than one Host header".into());
    }
    let host = req
        .uri()
        .authority()
        .map(|a| a.as_str())
        .or(get(header::HOST));
    app.state.access().check(host, get(header::ORIGIN))
}

/// The same Host and Origin checks on the HTTP dispatch API, and its reads (manifest, ask,
/// contracts, registry) behind the token when `--token-required-for` is `list` or `all`:
/// they reveal the catalogue as `tools/list` does. Its writes (invoke, add and remove rows)
/// always need the token: refused here, before their bodies are read.
async fn api_guard(
    Extract(app): AppState,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if let Err(why) = check_access(&app, &req) {
        return http::error(StatusCode::FORBIDDEN, "forbidden", why);
    }
    let reads = matches!(
        *req.method(),
        axum::http::Method::GET | axum::http::Method::HEAD
    );
    if !reads || app.state.access().token_for != guard::TokenScope::Calls {
        if let Some(denied) = http::require_token(&app.state, req.headers()) {
            return denied;
        }
    }
    next.run(req).await
}

fn session_header(headers: &HeaderMap) -> Option<&str> {
    headers.get("mcp-session-id").and_then(|v| v.to_str().ok())
}

fn protocol_header(headers: &HeaderMap) -> Option<&str> {
    headers
        .get("mcp-protocol-version")
        .map(|v| v.to_str().unwrap_or("\u{fffd}"))
}

fn bad_request(message: String) -> Response {
    let msg = mcp::rpc_error(Value::Null, mcp::INVALID_REQUEST, message);
    rpc_response(StatusCode::BAD_REQUEST, crate::json::compact(&msg))
}

async fn mcp_post(
    app: &App,
    endpoint: Endpoint,
    headers: &HeaderMap,
    body: BodyResult,
) -> Response {
    let st = &app.state;
    let body = match body {
        Ok(b) => b,
        Err(rejection) => {
            let status = rejection.status();
            let msg = mcp::rpc_error(
                Value::Null,
                mcp::INVALID_REQUEST,
                format!("request body refused: {}", rejection.body_text()),
            );
            return rpc_response(status, crate::json::compact(&msg));
        }
    };
    let header = protocol_header(headers);
    let header_version = match header {
        None => None,
        Some(h) => match mcp::known(h) {
            Some(v) => Some(v),
            None => {
                return bad_request(format!(
                    "unsupported MCP-Protocol-Version `{}`; this server speaks {}",
                    h.chars().take(40).collect::<String>(),
                    mcp::VERSIONS.join(", ")
                ))
            }
        },
    };
    let session = session_header(headers);
    let session_version = match session {
        None => None,
        Some(sid) => match sessions(app, endpoint).version(sid) {
            Some(v) => Some(v),
            None => {
                let msg = mcp::rpc_error(
                    Value::Null,
                    mcp::INVALID_REQUEST,
                    "unknown or closed session; initialize again",
                );
                return rpc_response(StatusCode::NOT_FOUND, crate::json::compact(&msg));
            }
        },
    };
    // A body too large to build as a tree (`--max-body` raised past 16 MB) is refused unparsed.
    if let Err(why) = crate::json::check_nodes(&body, "the body") {
        let msg = mcp::rpc_error(Value::Null, mcp::PARSE_ERROR, why);
        return rpc_response(StatusCode::PAYLOAD_TOO_LARGE, crate::json::compact(&msg));
    }
    let msg: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            let msg = mcp::rpc_error(Value::Null, mcp::PARSE_ERROR, format!("parse error: {e}"));
            return rpc_response(StatusCode::BAD_REQUEST, crate::json::compact(&msg));
        }
    };
    if let Value::Array(items) = &msg {
        let version = session_version.or(header_version);
        return mcp_batch(app, endpoint, headers, items, version, session.is_some()).await;
    }
    let method = msg.get("method").and_then(Value::as_str);
    // 2026-07-28 mirrors the method into `Mcp-Method`; a header that names another is refused
    // (HeaderMismatch). Its absence is tolerated (assumed: older clients never send it).
    if let (Some(h), Some(m)) = (headers.get("mcp-method"), method) {
        if h.to_str().ok() != Some(m) {
            let e = mcp::rpc_error(
                msg.get("id").cloned().unwrap_or(Value::Null),
                mcp::HEADER_MISMATCH,
                "the Mcp-Method header and the body's `method` differ",
            );
            return rpc_response(StatusCode::BAD_REQUEST, crate::json::compact(&e));
        }
    }
    // A client that names a version with sessions has initialized and must send the session
    // id it was given (transports, "Session Management": 400 without it). A request naming
    // no version and no session is served as a sessionless 2025-03-26 call, as curl and
    // scripts send it (assumed: the spec says SHOULD, and such callers predate the header).
    let stateless = msg
        .pointer("/params/_meta")
        .is_some_and(|m| m.get(mcp::META_VERSION).is_some());
    if let (Some(v), None, false) = (header_version, session, stateless) {
        if v != mcp::MODERN && method.is_some_and(|m| m != "initialize") {
            return bad_request(format!(
                "this request names protocol version {v}, which has sessions: send the Mcp-Session-Id that initialize returned"
            ));
        }
    }
    // A header naming another known version than the session's is served at the session's
    // version: the spec says the header SHOULD be the negotiated one, not MUST (the official
    // conformance suite sends 2025-03-26 inside a 2025-11-25 session).
    let presented = http::presented(headers);
    let ctx = mcp::Context {
        authorised: st.authorised(presented),
        presented: presented.is_some(),
        version: session_version.or(header_version.filter(|v| *v != mcp::MODERN)),
        header,
        batch: false,
    };
    match mcp::handle(st, sessions(app, endpoint), endpoint, &msg, &ctx).await {
        Outcome::Reply { text, session } => {
            let mut resp = rpc_response(StatusCode::OK, text);
            if let Some(s) = session {
                resp.headers_mut()
                    .insert("mcp-session-id", s.parse().expect("hex is a valid header"));
            }
            resp
        }
        Outcome::Accepted => StatusCode::ACCEPTED.into_response(),
        Outcome::Invalid(v) => rpc_response(StatusCode::BAD_REQUEST, crate::json::compact(&v)),
        Outcome::Unauthorised { body, presented } => unauthorised(&body, presented),
        Outcome::NoMethod(v) => rpc_response(StatusCode::NOT_FOUND, crate::json::compact(&v)),
        Outcome::Listen { id, ack } => {
            let first = futures_util::stream::once(async move {
                Ok::<_, std::io::Error>(Bytes::from(format!("event: message\ndata: {ack}\n\n")))
            });
            if id.is_null() {
                return event_stream(Body::from_stream(first));
            }
            let Some(permit) = stream_permit(app, ctx.authorised && st.token.is_some()) else {
                return too_many_streams(app);
            };
            let note = mcp::list_changed_for(&id);
            let changes = change_events(app, permit, move || note.clone(), || true);
            event_stream(Body::from_stream(futures_util::StreamExt::chain(
                first, changes,
            )))
        }
    }
}

/// A POST whose body is a JSON array: a JSON-RPC batch, served where protocol 2025-03-26
/// (which has batches) is spoken: a session at that version, or a request naming no version
/// and no session (served as it). `version`: the session's, else the header's.
async fn mcp_batch(
    app: &App,
    endpoint: Endpoint,
    headers: &HeaderMap,
    items: &[Value],
    version: Option<&'static str>,
    in_session: bool,
) -> Response {
    let served = version.unwrap_or(mcp::ASSUMED);
    if served != mcp::ASSUMED {
        return bad_request(format!(
            "JSON-RPC batches belong to protocol {} (2025-06-18 removed them) and this request is served at {served}: send one message per request",
            mcp::ASSUMED
        ));
    }
    if !in_session && version.is_some() {
        return bad_request(format!(
            "this request names protocol version {served}, which has sessions: send the Mcp-Session-Id that initialize returned"
        ));
    }
    // Mcp-Method (a 2026-07-28 header) names one method; on a batch it must name every one.
    if let Some(h) = headers.get("mcp-method") {
        if items.iter().any(|i| {
            i.get("method")
                .and_then(Value::as_str)
                .is_some_and(|m| h.to_str().ok() != Some(m))
        }) {
            let e = mcp::rpc_error(
                Value::Null,
                mcp::HEADER_MISMATCH,
                "the Mcp-Method header and a batched message's `method` differ",
            );
            return rpc_response(StatusCode::BAD_REQUEST, crate::json::compact(&e));
        }
    }
    let st = &app.state;
    let presented = http::presented(headers);
    let ctx = mcp::Context {
        authorised: st.authorised(presented),
        presented: presented.is_some(),
        version,
        header: protocol_header(headers),
        batch: true,
    };
    match batch::handle(st, sessions(app, endpoint), endpoint, items, &ctx).await {
        batch::Batch::Answers(text) => rpc_response(StatusCode::OK, text),
        batch::Batch::Accepted => StatusCode::ACCEPTED.into_response(),
        batch::Batch::Refused(v) => rpc_response(StatusCode::BAD_REQUEST, crate::json::compact(&v)),
        batch::Batch::Unauthorised { body, presented } => unauthorised(&body, presented),
    }
}

/// `GET`: the event stream on which list_changed arrives (endpoints whose list follows the
/// directory), for sessions of the versions that have one.
/// The token, where the scope asks for it here, was checked by [`mcp_guard`].
fn mcp_get(app: &Arc<App>, endpoint: Endpoint, headers: &HeaderMap) -> Response {
    if !mcp::list_changes(endpoint) {
        return http::error(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "this surface's tools never change, so it sends no notifications",
        );
    }
    let sid = match session_header(headers) {
        Some(sid) if sessions(app, endpoint).known(sid) => sid.to_string(),
        _ => {
            return http::error(
                StatusCode::BAD_REQUEST,
                "no_session",
                "GET needs the mcp-session-id of an initialized session (at 2026-07-28, POST subscriptions/listen instead)",
            )
        }
    };
    let holder = app.state.token.is_some() && app.state.authorised(http::presented(headers));
    let Some(permit) = stream_permit(app, holder) else {
        return too_many_streams(app);
    };
    // The stream belongs to its session: it ends when the session is deleted or dropped.
    let app2 = app.clone();
    let alive = move || sessions(&app2, endpoint).known(&sid);
    event_stream(Body::from_stream(change_events(
        app,
        permit,
        || mcp::LIST_CHANGED.to_string(),
        alive,
    )))
}

/// The token, where the scope asks for it here, was checked by [`mcp_guard`].
fn mcp_delete(app: &App, endpoint: Endpoint, headers: &HeaderMap) -> Response {
    match session_header(headers) {
        Some(sid) if sessions(app, endpoint).close(sid) => StatusCode::OK.into_response(),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}
