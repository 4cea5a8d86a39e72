//! The reference dispatch server: one SQLite `directory` table served as the HTTP protocol
//! (`/api/dispatch`, `/api/directory`) and as an MCP endpoint for every surface that has one
//! (`/mcp` per-row, `/mcp/min` per-row trimmed, `/mcp/small`, `/mcp/code`; the surface
//! modules say which), plus MCP over stdio. Every surface reads the same snapshot, rebuilt on
//! each change, and every invocation goes through one path that writes a receipt first.

pub mod code;
pub mod http;
pub mod invoke;
pub mod mcp;
pub mod state;
pub mod store;

use crate::catalogue::Row;
use crate::error::{Error, Result};
use crate::surface::{Endpoint, REGISTRY};
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State as Extract};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::Router;
use mcp::{Outcome, Sessions};
use serde_json::Value;
use state::State;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

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

/// Open the store, load the rows, and build the shared state.
pub fn state(opts: &Options) -> Result<Arc<State>> {
    let mut conn = store::open(opts.db.as_deref())?;
    if let Some(rows) = &opts.rows {
        store::replace_directory(&mut conn, rows)?;
    }
    Ok(Arc::new(State::new(
        conn,
        opts.token.clone(),
        opts.allowlist.clone(),
    )?))
}

struct App {
    state: Arc<State>,
    /// Open sessions, per endpoint path.
    sessions: std::collections::HashMap<&'static str, Sessions>,
}

/// Every MCP endpoint the server mounts, from the surface registry.
pub fn endpoints() -> Vec<Endpoint> {
    REGISTRY.iter().filter_map(|s| s.endpoint()).collect()
}

/// The router for a state.
pub fn router(state: Arc<State>, max_body: usize) -> Router {
    let app = Arc::new(App {
        state,
        sessions: endpoints()
            .iter()
            .map(|e| (e.path, Sessions::default()))
            .collect(),
    });
    let dispatch = Router::new()
        .route(
            "/api/dispatch",
            get(http::dispatch_get).post(http::dispatch_post),
        )
        .route("/api/directory", post(http::directory_post))
        .route("/api/directory/{key}", delete(http::directory_delete))
        .with_state(app.state.clone());
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
    let mcp = mcp.with_state(app);
    dispatch
        .merge(mcp)
        .fallback(|| async {
            http::error(
                StatusCode::NOT_FOUND,
                "not_found",
                "no such endpoint; GET /api/dispatch lists them",
            )
        })
        .layer(DefaultBodyLimit::max(max_body))
}

/// Serve until `shutdown` resolves. Tests bind 127.0.0.1:0 and pass the listener.
pub async fn run(
    listener: tokio::net::TcpListener,
    state: Arc<State>,
    max_body: usize,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let addr = listener.local_addr()?;
    state.set_base_url(format!("http://{addr}"));
    axum::serve(listener, router(state, max_body))
        .with_graceful_shutdown(shutdown)
        .await
}

type AppState = Extract<Arc<App>>;

type BodyResult = Result<Bytes, axum::extract::rejection::BytesRejection>;

fn rpc_response(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn sessions(app: &App, endpoint: Endpoint) -> &Sessions {
    &app.sessions[endpoint.path]
}

/// 401 when a token is configured and not presented; listing without one is allowed on a
/// server that has none (calls are refused there anyway).
fn mcp_auth(st: &State, headers: &HeaderMap) -> Result<bool, Box<Response>> {
    let ok = st.authorised(http::presented(headers));
    if st.token.is_some() && !ok {
        let body = mcp::rpc_error(
            Value::Null,
            mcp::UNAUTHORIZED,
            "missing or wrong token: send `Authorization: Bearer <token>` or `x-mcp-token`",
        );
        return Err(Box::new(rpc_response(
            StatusCode::UNAUTHORIZED,
            crate::json::compact(&body),
        )));
    }
    Ok(ok)
}

fn session_header(headers: &HeaderMap) -> Option<&str> {
    headers.get("mcp-session-id").and_then(|v| v.to_str().ok())
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
    let authorised = match mcp_auth(st, headers) {
        Ok(a) => a,
        Err(r) => return *r,
    };
    if let Some(sid) = session_header(headers) {
        if !sessions(app, endpoint).known(sid) {
            let msg = mcp::rpc_error(
                Value::Null,
                mcp::INVALID_REQUEST,
                "unknown or closed session; initialize again",
            );
            return rpc_response(StatusCode::NOT_FOUND, crate::json::compact(&msg));
        }
    }
    let msg: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            let msg = mcp::rpc_error(Value::Null, mcp::PARSE_ERROR, format!("parse error: {e}"));
            return rpc_response(StatusCode::BAD_REQUEST, crate::json::compact(&msg));
        }
    };
    match mcp::handle(st, sessions(app, endpoint), endpoint, &msg, authorised).await {
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
    }
}

/// `GET`: the event stream on which list_changed arrives (endpoints whose list follows the
/// directory).
fn mcp_get(app: &App, endpoint: Endpoint, headers: &HeaderMap) -> Response {
    if let Err(r) = mcp_auth(&app.state, headers) {
        return *r;
    }
    if !mcp::list_changes(endpoint) {
        return (
            StatusCode::METHOD_NOT_ALLOWED,
            "this surface's tools never change, so it sends no notifications",
        )
            .into_response();
    }
    match session_header(headers) {
        Some(sid) if sessions(app, endpoint).known(sid) => {}
        _ => {
            return http::error(
                StatusCode::BAD_REQUEST,
                "no_session",
                "GET needs the mcp-session-id of an initialized session",
            )
        }
    }
    let rx = app.state.changes.subscribe();
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        match rx.recv().await {
            Ok(()) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                let event = format!("event: message\ndata: {}\n\n", mcp::LIST_CHANGED);
                Some((Ok::<_, std::io::Error>(Bytes::from(event)), rx))
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => None,
        }
    });
    let mut resp = Response::new(Body::from_stream(stream));
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, "text/event-stream".parse().unwrap());
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, "no-cache".parse().unwrap());
    resp
}

fn mcp_delete(app: &App, endpoint: Endpoint, headers: &HeaderMap) -> Response {
    if let Err(r) = mcp_auth(&app.state, headers) {
        return *r;
    }
    match session_header(headers) {
        Some(sid) if sessions(app, endpoint).close(sid) => StatusCode::OK.into_response(),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// MCP over stdio: one message per line on stdin, answers and notifications on stdout.
/// Calls are allowed when the server has a token configured (whoever can start the process
/// holds the environment).
pub async fn run_stdio(state: Arc<State>, endpoint: Endpoint) -> Result<()> {
    let sessions = Sessions::default();
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut out = tokio::io::stdout();
    let mut changes = state.changes.subscribe();
    let authorised = state.token.is_some();
    loop {
        tokio::select! {
            line = lines.next_line() => {
                let line = line.map_err(|e| Error::input(format!("reading stdin: {e}")))?;
                let Some(line) = line else { return Ok(()) };
                if line.trim().is_empty() {
                    continue;
                }
                let text = match serde_json::from_str::<Value>(&line) {
                    Err(e) => Some(crate::json::compact(&mcp::rpc_error(Value::Null, mcp::PARSE_ERROR, format!("parse error: {e}")))),
                    Ok(msg) => match mcp::handle(&state, &sessions, endpoint, &msg, authorised).await {
                        Outcome::Reply { text, .. } => Some(text),
                        Outcome::Accepted => None,
                        Outcome::Invalid(v) => Some(crate::json::compact(&v)),
                    },
                };
                if let Some(t) = text {
                    out.write_all(format!("{t}\n").as_bytes()).await.map_err(|e| Error::input(format!("writing stdout: {e}")))?;
                    out.flush().await.map_err(|e| Error::input(format!("writing stdout: {e}")))?;
                }
            }
            Ok(()) = changes.recv(), if mcp::list_changes(endpoint) => {
                out.write_all(format!("{}\n", mcp::LIST_CHANGED).as_bytes()).await.map_err(|e| Error::input(e.to_string()))?;
                out.flush().await.map_err(|e| Error::input(e.to_string()))?;
            }
        }
    }
}
