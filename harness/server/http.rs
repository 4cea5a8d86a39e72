//! The HTTP protocol under `/api/dispatch` and the live directory under `/api/directory`.

use super::invoke::{self, InvokeRequest, Refusal};
use super::state::State;
use crate::catalogue::{Row, RowSchema};
use crate::resolve::{self, Resolver};
use crate::schema;
use axum::body::Bytes;
use axum::extract::{Path, Query, State as Extract};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;

type Shared = Extract<Arc<State>>;

/// A JSON answer.
pub fn answer(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        crate::json::compact(&body),
    )
        .into_response()
}

/// A JSON error: `{"error": code, "message": ...}`.
pub fn error(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    answer(status, json!({"error": code, "message": message.into()}))
}

/// The bearer token a request presents (`Authorization: Bearer` or `x-mcp-token`).
pub fn presented(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            // The scheme is case-insensitive (RFC 9110 section 11.1).
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then_some(token.trim_start())
        })
        .or_else(|| headers.get("x-mcp-token").and_then(|v| v.to_str().ok()))
}

/// `None` when authorised, else the 401 to send.
pub fn require_token(state: &State, headers: &HeaderMap) -> Option<Response> {
    if state.authorised(presented(headers)) {
        return None;
    }
    let message = if state.token.is_none() {
        "this server has no token configured, so it refuses every call that invokes or changes rows; start it with --token-env NAME"
    } else {
        "missing or wrong token: send `Authorization: Bearer <token>` or `x-mcp-token: <token>`"
    };
    Some(error(StatusCode::UNAUTHORIZED, "unauthorized", message))
}

/// `GET /api/dispatch`: manifest, ask, contract, receipt, confirm, registry, map.
pub async fn dispatch_get(
    Extract(st): Shared,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    if let Some(intent) = q.get("ask") {
        let resolver = match resolver_named(&st, q.get("resolver").map(String::as_str)) {
            Ok(r) => r,
            Err(e) => return error(StatusCode::BAD_REQUEST, "bad_request", e),
        };
        return ask(&st, intent, resolver);
    }
    if let Some(key) = q.get("key") {
        return contract(
            &st,
            key,
            q.get("format").map(String::as_str) == Some("markdown"),
        );
    }
    if let Some(id) = q.get("receipt") {
        if let Some(denied) = require_token(&st, &headers) {
            return denied;
        }
        return match st.receipt(id) {
            Ok(Some(r)) => answer(StatusCode::OK, serde_json::to_value(r).expect("serialises")),
            Ok(None) => error(
                StatusCode::NOT_FOUND,
                "unknown_receipt",
                format!("no receipt `{id}`"),
            ),
            Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, "store", e.to_string()),
        };
    }
    if let Some(id) = q.get("confirm") {
        let confirmed = matches!(st.receipt(id), Ok(Some(r)) if r.ok);
        return answer(StatusCode::OK, json!({"id": id, "confirmed": confirmed}));
    }
    if q.contains_key("registry") || q.contains_key("map") {
        return counts(&st, q.contains_key("registry"));
    }
    if !q.is_empty() {
        let keys: Vec<&String> = q.keys().collect();
        return error(
            StatusCode::BAD_REQUEST,
            "bad_request",
            format!("unknown query {keys:?}; GET /api/dispatch lists the verbs"),
        );
    }
    answer(StatusCode::OK, manifest(&st.base_url()))
}

/// The verbs and endpoint shapes; small and stable.
pub fn manifest(base: &str) -> Value {
    json!({
        "protocol": "toolcost-dispatch",
        "version": "1",
        "resolvers": resolve::Method::NAMES,
        "verbs": {
            "ask": format!("GET {base}/api/dispatch?ask=<intent>[&resolver=<one of resolvers>]"),
            "contract": format!("GET {base}/api/dispatch?key=<KEY>[&format=markdown]"),
            "invoke": format!("POST {base}/api/dispatch {{\"key\": \"<KEY>\", \"args\": {{...}}, \"shape\"?: true, \"repairs\"?: \"<receipt id>\"}} with a bearer token"),
            "receipt": format!("GET {base}/api/dispatch?receipt=<ID> with a bearer token"),
            "confirm": format!("GET {base}/api/dispatch?confirm=<ID>"),
            "registry": format!("GET {base}/api/dispatch?registry=1"),
            "map": format!("GET {base}/api/dispatch?map=1"),
            "add": format!("POST {base}/api/directory <row> with a bearer token"),
            "remove": format!("DELETE {base}/api/directory/<KEY> with a bearer token"),
        },
        "mcp": {"per_row": format!("{base}/mcp"), "small": format!("{base}/mcp/small")},
    })
}

/// A candidate as `ask` and the small surface's search return it.
pub fn candidate(row: &Row, base: &str, score: f64) -> Value {
    let example = row
        .doc("EX")
        .and_then(|ex| ex.split_once(']').map(|(_, rest)| rest))
        .and_then(|rest| rest.rsplit_once("[/").map(|(args, _)| args))
        .and_then(|args| serde_json::from_str::<Value>(args).ok())
        .unwrap_or_else(|| json!({}));
    json!({
        "key": row.key,
        "summary": row.summary(),
        "score": (score * 1000.0).round() / 1000.0,
        "example": example,
        "invoke": {"method": "POST", "url": format!("{base}/api/dispatch"), "body": {"key": row.key, "args": example}},
    })
}

/// The resolver a search names (any that `search-eval` scores), else the server's own; an
/// unknown name is an error that lists them all. `?ask=`, `search_directory` and code mode's
/// `search()` read it alike.
pub fn resolver_named(st: &State, name: Option<&str>) -> Result<resolve::Method, String> {
    match name {
        Some(name) => resolve::Method::parse(name).map_err(|e| e.to_string()),
        None => Ok(st.limits.resolver.method()),
    }
}

/// Rank rows for an intent; an error (a semantic resolver whose model is not installed) says
/// what to do.
pub fn search(
    st: &State,
    intent: &str,
    resolver: resolve::Method,
    limit: usize,
) -> Result<Vec<Value>, String> {
    use resolve::Method;
    // Encoding a catalogue takes tens of seconds per thousand rows: a server encodes its rows
    // before it listens when started with a semantic resolver, and refuses one otherwise, so
    // that no request can make it encode the whole directory.
    if resolver.semantic() && !st.limits.resolver.semantic() {
        return Err(format!(
            "the {} resolver is served only by a server started with `--resolver dense` or \
             `--resolver hybrid` (the model installs with: {})",
            resolver.name(),
            crate::embed::INSTALL
        ));
    }
    let snap = st.snapshot();
    let base = st.base_url();
    // A resolver never answers more than it is scored on (five for the searches over tool
    // definitions).
    let limit = limit.min(resolver.depth());
    let hits = match resolver {
        Method::Bm25 => snap.bm25().resolve(intent, limit),
        Method::Substring => snap.substring().resolve(intent, limit),
        Method::Bm25Tool => snap.best.resolve(intent, limit),
        Method::Dense => snap.dense()?.resolve(intent, limit),
        Method::Hybrid => resolve::dense::fuse(snap.dense()?, &snap.best, intent, limit),
        // The others, built by name the first time they are asked for.
        Method::Bm25Textbook
        | Method::Bm25fWordnet
        | Method::Bm25fGaps
        | Method::Bm25fGapsDefinitions
        | Method::Bm25ToolDefinitions
        | Method::Bm25Stem
        | Method::Bm25f
        | Method::Bm25Definitions
        | Method::Bm25fWordnetDefinitions
        | Method::Regex
        | Method::HybridDefinitions => snap
            .named(resolver)?
            .ranked(intent, limit)
            .into_iter()
            .filter_map(|(key, score)| {
                snap.by_key
                    .get(&key)
                    .map(|&row| resolve::Hit { row, score })
            })
            .collect(),
    };
    Ok(hits
        .iter()
        .map(|h| candidate(&snap.rows()[h.row], &base, h.score))
        .collect())
}

fn ask(st: &State, intent: &str, resolver: resolve::Method) -> Response {
    let candidates = match search(st, intent, resolver, resolve::TOP) {
        Ok(c) => c,
        Err(e) => return error(StatusCode::BAD_REQUEST, "resolver_unavailable", e),
    };
    let best = candidates.first().cloned().map(|mut b| {
        b["do"] = json!("POST the invoke body, with your own arguments where the example has them");
        b
    });
    answer(
        StatusCode::OK,
        json!({"protocol": "toolcost-dispatch", "kind": "ask", "question": intent, "resolver": resolver.name(),
               "count": candidates.len(), "best": best, "candidates": candidates}),
    )
}

/// A row's contract, as JSON or Markdown.
pub fn contract_value(row: &Row, base: &str) -> Value {
    let reported = schema::normalise_reported(
        &row.input_schema
            .as_ref()
            .map_or_else(|| json!({"type": "object"}), RowSchema::value),
    );
    let schema = reported.schema;
    let mut c = json!({
        "key": row.key,
        "what": row.doc("WHAT"),
        "when_to_use": row.doc("WHEN_TO_USE"),
        "args": row.doc("ARGS"),
        "example": row.doc("EX"),
        "runner": row.runner.as_str(),
        "category": row.category,
        "auth_env": row.auth.as_deref().map(|a| a.split_once(':').map(|(_, e)| e).unwrap_or(a)),
        "schema": schema,
        "invoke": {"method": "POST", "url": format!("{base}/api/dispatch"), "body": {"key": row.key, "args": {}}},
    });
    // Where the strict form shown cannot say what the stored schema accepts (invoke checks
    // the stored one), the contract says where and how.
    if !reported.changes.is_empty() {
        c["schema_changes"] = json!(reported.changes);
    }
    c
}

fn contract(st: &State, key: &str, markdown: bool) -> Response {
    let snap = st.snapshot();
    let Some(row) = snap.row(key) else {
        let refusal = Refusal::UnknownKey {
            key: key.into(),
            suggestions: Vec::new(),
        };
        return error(StatusCode::NOT_FOUND, "unknown_key", refusal.message());
    };
    let c = contract_value(row, &st.base_url());
    if !markdown {
        return answer(StatusCode::OK, c);
    }
    let text = format!(
        "# {}\n\n**What:** {}\n\n**When to use:** {}\n\n**Arguments:** {}\n\n**Example:** `{}`\n\n**Runner:** {} · **Auth env var:** {}\n\n## Schema\n\n```json\n{}\n```\n\n## Invoke\n\n`POST {}` with `{{\"key\": \"{}\", \"args\": {{...}}}}` and a bearer token.\n",
        row.key,
        c["what"].as_str().unwrap_or("-"),
        c["when_to_use"].as_str().unwrap_or("-"),
        c["args"].as_str().unwrap_or("none"),
        c["example"].as_str().unwrap_or("-"),
        row.runner.as_str(),
        c["auth_env"].as_str().unwrap_or("none"),
        serde_json::to_string_pretty(&c["schema"]).expect("serialises"),
        c["invoke"]["url"].as_str().unwrap_or(""),
        row.key
    );
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/markdown; charset=utf-8")],
        text,
    )
        .into_response()
}

fn counts(st: &State, registry: bool) -> Response {
    let snap = st.snapshot();
    let rows = snap.rows().len();
    let enabled = snap.rows().iter().filter(|r| r.enabled).count();
    let not_test = snap
        .rows()
        .iter()
        .filter(|r| r.enabled && !r.key.starts_with("TEST_"))
        .count();
    let projected = snap.catalogue.tools.len();
    let counts = json!({
        "rows": {"count": rows, "predicate": "every row"},
        "enabled": {"count": enabled, "predicate": "enabled"},
        "enabled_not_test": {"count": not_test, "predicate": "enabled, minus test-shaped keys (TEST_*)"},
        "projected": {"count": projected, "predicate": "enabled and planner-visible (the per-row MCP projection)"},
    });
    if registry {
        answer(
            StatusCode::OK,
            json!({"kind": "registry", "count": not_test, "counts": counts}),
        )
    } else {
        answer(
            StatusCode::OK,
            json!({"kind": "map", "total": enabled, "counts": counts}),
        )
    }
}

/// `POST /api/dispatch`: invoke.
pub async fn dispatch_post(Extract(st): Shared, headers: HeaderMap, body: Bytes) -> Response {
    if let Some(denied) = require_token(&st, &headers) {
        return denied;
    }
    if let Err(why) = crate::json::check_nodes(&body, "the body") {
        return error(StatusCode::PAYLOAD_TOO_LARGE, "too_many_nodes", why);
    }
    let v: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                "malformed_json",
                format!("the body: {}", crate::json::why_unreadable(&e)),
            )
        }
    };
    let req = match parse_invoke(&v) {
        Ok(r) => r,
        Err(m) => return error(StatusCode::BAD_REQUEST, "bad_request", m),
    };
    match invoke::invoke(&st, req).await {
        Ok(inv) => answer(
            StatusCode::OK,
            json!({"ok": inv.ok, "ran": true, "key": inv.receipt.key, "result": inv.result,
                   "proof": {"ok": inv.ok, "invocation_id": inv.receipt.id,
                             "receipt": format!("{}/api/dispatch?receipt={}", st.base_url(), inv.receipt.id),
                             "confirm": format!("{}/api/dispatch?confirm={}", st.base_url(), inv.receipt.id)}}),
        ),
        Err(r) => refusal(r),
    }
}

/// The HTTP status and body of a refusal.
pub fn refusal(r: Refusal) -> Response {
    match &r {
        Refusal::UnknownKey { suggestions, .. } => answer(
            StatusCode::NOT_FOUND,
            json!({"error": "unknown_key", "message": r.message(), "hint": "GET /api/dispatch?ask=<intent>", "closest": suggestions}),
        ),
        Refusal::BadArgs { pointer, .. } => answer(
            StatusCode::UNPROCESSABLE_ENTITY,
            json!({"error": "invalid_arguments", "pointer": pointer, "message": r.message()}),
        ),
        Refusal::Forbidden(_) => error(StatusCode::FORBIDDEN, "forbidden", r.message()),
        Refusal::UnknownReceipt(_) => error(StatusCode::NOT_FOUND, "unknown_receipt", r.message()),
        Refusal::Unavailable(_) => {
            let mut resp = error(
                StatusCode::SERVICE_UNAVAILABLE,
                "store_unavailable",
                r.message(),
            );
            resp.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from_static("1"),
            );
            resp
        }
    }
}

/// `{"key", "args" | "body", "shape"?, "repairs"?}`; `body` may be an object or JSON text.
pub fn parse_invoke(v: &Value) -> Result<InvokeRequest, String> {
    let obj = v
        .as_object()
        .ok_or("the body must be a JSON object: {\"key\": \"<KEY>\", \"args\": {...}}")?;
    for k in obj.keys() {
        if !matches!(k.as_str(), "key" | "args" | "body" | "shape" | "repairs") {
            return Err(format!(
                "unknown field `{k}`; expected key, args or body, shape, repairs"
            ));
        }
    }
    let key = obj
        .get("key")
        .and_then(Value::as_str)
        .ok_or("`key` (a string) is required")?
        .to_string();
    let args = match (obj.get("args"), obj.get("body")) {
        (Some(a), _) => a.clone(),
        (None, Some(Value::String(s))) if s.trim().is_empty() => json!({}),
        (None, Some(Value::String(s))) => {
            serde_json::from_str(s).map_err(|_| "`body` text must be a JSON object of arguments")?
        }
        (None, Some(b)) => b.clone(),
        (None, None) => json!({}),
    };
    Ok(InvokeRequest {
        key,
        args,
        shape: obj.get("shape").and_then(Value::as_bool).unwrap_or(false),
        repairs: obj.get("repairs").and_then(Value::as_str).map(String::from),
    })
}

/// `POST /api/directory`: add a row.
pub async fn directory_post(Extract(st): Shared, headers: HeaderMap, body: Bytes) -> Response {
    if let Some(denied) = require_token(&st, &headers) {
        return denied;
    }
    if let Err(why) = crate::json::check_nodes(&body, "the body") {
        return error(StatusCode::PAYLOAD_TOO_LARGE, "too_many_nodes", why);
    }
    let row: Row = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                "bad_row",
                format!("not a directory row: {e}"),
            )
        }
    };
    // Everything is checked before the row is stored: a row that cannot be served must not
    // reach the table, where it would be read again at every restart of `serve --db`.
    if let Err(why) = check_key(&row.key) {
        return answer(
            StatusCode::UNPROCESSABLE_ENTITY,
            json!({"error": "bad_key", "pointer": "/key", "message": why}),
        );
    }
    if let Some(s) = &row.input_schema {
        if let Err(e) = schema::normalise_checked(&s.value()) {
            return answer(
                StatusCode::UNPROCESSABLE_ENTITY,
                json!({"error": "schema_too_large", "pointer": format!("/input_schema{}", e.pointer), "message": e.message}),
            );
        }
    }
    match st.add_row(&row) {
        Ok(true) => {}
        Ok(false) => {
            return error(
                StatusCode::CONFLICT,
                "exists",
                format!("`{}` is already in the directory; DELETE it first", row.key),
            )
        }
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, "store", e.to_string()),
    }
    answer(
        StatusCode::CREATED,
        json!({"ok": true, "key": row.key, "updated_at": crate::clock::now_rfc3339()}),
    )
}

/// A directory key becomes an MCP tool name, so it follows the MCP specification's tool-name
/// rule (2025-11-25 revision, server/tools, "Tool names"): 1 to 128 characters, each an ASCII
/// letter, digit, `_`, `-` or `.`. A name outside it makes strict clients refuse the whole
/// `tools/list`.
pub fn check_key(key: &str) -> Result<(), String> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if key.is_empty() || key.len() > 128 {
        return Err(format!(
            "`key` is {} characters; an MCP tool name has 1 to 128",
            key.chars().count()
        ));
    }
    if let Some(c) = key.chars().find(|c| !ok_char(*c)) {
        return Err(format!(
            "`key` holds {c:?}; an MCP tool name uses only A-Z, a-z, 0-9, `_`, `-` and `.`"
        ));
    }
    Ok(())
}

/// `DELETE /api/directory/KEY`: remove a row.
pub async fn directory_delete(
    Extract(st): Shared,
    headers: HeaderMap,
    Path(key): Path<String>,
) -> Response {
    if let Some(denied) = require_token(&st, &headers) {
        return denied;
    }
    match st.remove_row(&key) {
        Ok(true) => {}
        Ok(false) => {
            return error(
                StatusCode::NOT_FOUND,
                "unknown_key",
                format!("no row `{key}`"),
            )
        }
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, "store", e.to_string()),
    }
    answer(StatusCode::OK, json!({"ok": true, "deleted": 1}))
}
