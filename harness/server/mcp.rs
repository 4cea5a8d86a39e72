//! MCP over Streamable HTTP and stdio for every surface with an endpoint of its own (the
//! surface module says which path, which tools and how calls are answered), written on the
//! JSON-RPC messages directly so that error codes are exact and `tools/list` is the surface's
//! bytes.
//!
//! Requests are answered with `application/json`; a `GET` with the session id opens an event
//! stream on which endpoints whose list follows the directory send
//! `notifications/tools/list_changed` whenever a row is added, removed, enabled or hidden.

use super::http::{self, contract_value};
use super::invoke::{self, InvokeRequest, Refusal};
use super::listing;
use super::sessions::Sessions;
use super::state::State;
use crate::surface::{Calls, Endpoint};
use serde_json::{json, Value};
use std::sync::Arc;

/// Protocol versions this server speaks, newest first. [`MODERN`] is stateless (every request
/// names its version in `_meta`); the others open a session with `initialize`.
pub const VERSIONS: [&str; 5] = [
    MODERN,
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];
/// The stateless revision: no `initialize`, no session, `server/discover`,
/// `subscriptions/listen`, `resultType` and cache hints on results.
pub const MODERN: &str = "2026-07-28";
/// The newest version `initialize` negotiates.
pub const NEWEST_LEGACY: &str = "2025-11-25";
/// What a request that names no version and has no session speaks: the transports section
/// (2025-06-18 on) tells servers to assume this when no `MCP-Protocol-Version` header came.
pub const ASSUMED: &str = "2025-03-26";
/// From this version on, arguments that fail the tool's schema are a tool result with
/// `isError: true` (SEP-1303, listed in the 2025-11-25 changelog), not a JSON-RPC error.
pub const TOOL_ERRORS_FROM: &str = "2025-11-25";
/// The `_meta` keys of a modern request and result (2026-07-28 changelog, SEP-2575).
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_SERVER: &str = "io.modelcontextprotocol/serverInfo";
pub const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";
/// Cache hints on a modern `tools/list` (2026-07-28, SEP-2549): `ttlMs` and `cacheScope`.
/// The list changes only when the directory does, and `list_changed` says so; a minute keeps
/// a polling client from asking more often than that. Assumed value, not from the spec.
pub const LIST_TTL_MS: u64 = 60_000;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const UNAUTHORIZED: i64 = -32001;
/// 2026-07-28: the `MCP-Protocol-Version` header and the body's `_meta` disagree.
pub const HEADER_MISMATCH: i64 = -32020;
/// 2026-07-28: the requested version is not one this server speaks.
pub const UNSUPPORTED_VERSION: i64 = -32022;

/// Whether a version is one this server speaks; the `&'static` copy if so.
pub fn known(version: &str) -> Option<&'static str> {
    VERSIONS.iter().copied().find(|v| *v == version)
}

/// A JSON-RPC error object.
pub fn rpc_error(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}})
}

fn ok(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// What handling one message produced.
pub enum Outcome {
    /// A response (its text), plus a new session id after `initialize`.
    Reply {
        text: super::answer::Text,
        session: Option<String>,
    },
    /// A notification or a client's response: nothing to send back.
    Accepted,
    /// A message that is not JSON-RPC, or a version the server refuses (HTTP 400 with this
    /// body).
    Invalid(Value),
    /// A method the token protects, without the token (HTTP 401 with this body). `presented`:
    /// whether a (wrong) token came.
    Unauthorised { body: Value, presented: bool },
    /// A modern request for a method this server does not have (HTTP 404, 2026-07-28).
    NoMethod(Value),
    /// A modern `subscriptions/listen`: the acknowledgement to send first, then every change
    /// tagged with `id`, on a stream that stays open.
    Listen { id: Value, ack: String },
}

/// What the transport knows about a request besides its body.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// Whether the caller holds the server's token.
    pub authorised: bool,
    /// Whether a token came with the request at all (for the 401's challenge).
    pub presented: bool,
    /// The version of the session the request belongs to, or of its `MCP-Protocol-Version`
    /// header; `None` when neither says.
    pub version: Option<&'static str>,
    /// The `MCP-Protocol-Version` header as sent, if any.
    pub header: Option<&'a str>,
    /// Whether the message is one of a JSON-RPC batch (served at [`ASSUMED`]).
    pub batch: bool,
}

/// The version a message speaks: its own `_meta` (modern), else what the transport knows,
/// else [`ASSUMED`]. `Err` is the 400 to send.
fn version_of(id: &Value, params: &Value, ctx: &Context) -> Result<&'static str, Outcome> {
    let asked = params.pointer("/_meta").and_then(|m| m.get(META_VERSION));
    let Some(asked) = asked else {
        if ctx.header == Some(MODERN) {
            return Err(Outcome::Invalid(rpc_error(
                id.clone(),
                INVALID_REQUEST,
                format!("a {MODERN} request carries `_meta.{META_VERSION}`"),
            )));
        }
        return Ok(ctx.version.unwrap_or(ASSUMED));
    };
    if ctx.batch {
        return Err(Outcome::Invalid(rpc_error(
            id.clone(),
            INVALID_REQUEST,
            format!("a batch is served at protocol {ASSUMED}; a request naming its version in `_meta.{META_VERSION}` cannot be batched"),
        )));
    }
    let Some(asked) = asked.as_str() else {
        return Err(Outcome::Invalid(rpc_error(
            id.clone(),
            INVALID_PARAMS,
            format!("`_meta.{META_VERSION}` must be a string"),
        )));
    };
    if ctx.header.is_some_and(|h| h != asked) {
        return Err(Outcome::Invalid(rpc_error(
            id.clone(),
            HEADER_MISMATCH,
            "the MCP-Protocol-Version header and `_meta` name different versions",
        )));
    }
    match known(asked) {
        Some(MODERN) => Ok(MODERN),
        _ => {
            let mut e = rpc_error(
                id.clone(),
                UNSUPPORTED_VERSION,
                "Unsupported protocol version",
            );
            e["error"]["data"] = json!({"supported": [MODERN], "requested": asked,
                "note": format!("versions up to {NEWEST_LEGACY} open a session with initialize")});
            Err(Outcome::Invalid(e))
        }
    }
}

/// Check a message's shape and answer it.
pub async fn handle(
    st: &Arc<State>,
    sessions: &Sessions,
    endpoint: Endpoint,
    msg: &Value,
    ctx: &Context<'_>,
) -> Outcome {
    let Some(obj) = msg.as_object() else {
        let text = match (msg.is_array(), ctx.batch) {
            (true, true) => "a batch cannot hold another batch",
            (true, false) => "batches are not supported here; send one message per request",
            (false, _) => "a message must be a JSON object",
        };
        return Outcome::Invalid(rpc_error(Value::Null, INVALID_REQUEST, text));
    };
    let id = obj.get("id").cloned();
    if obj.get("jsonrpc") != Some(&json!("2.0")) {
        return Outcome::Invalid(rpc_error(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "`jsonrpc` must be \"2.0\"",
        ));
    }
    if let Some(id) = &id {
        if !(id.is_string() || id.is_i64() || id.is_u64()) {
            return Outcome::Invalid(rpc_error(
                Value::Null,
                INVALID_REQUEST,
                "`id` must be a string or an integer",
            ));
        }
    }
    let Some(method) = obj.get("method") else {
        if obj.contains_key("result") || obj.contains_key("error") {
            return Outcome::Accepted; // a response to something we asked
        }
        return Outcome::Invalid(rpc_error(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "no `method`",
        ));
    };
    let Some(method) = method.as_str() else {
        return Outcome::Invalid(rpc_error(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "`method` must be a string",
        ));
    };
    let scope = st.access().token_for;
    if scope.covers(Some(method)) && !ctx.authorised && st.token.is_some() {
        return Outcome::Unauthorised {
            body: rpc_error(
                id.unwrap_or(Value::Null),
                UNAUTHORIZED,
                format!(
                    "missing or wrong token: `{method}` needs `Authorization: Bearer <token>` (this server requires it for {})",
                    scope.name()
                ),
            ),
            presented: ctx.presented,
        };
    }
    let Some(id) = id else {
        return Outcome::Accepted; // notifications: initialized, cancelled, ...
    };
    let params = obj.get("params").cloned().unwrap_or(json!({}));
    if !params.is_object() {
        return reply(
            rpc_error(id, INVALID_PARAMS, "`params` must be an object"),
            None,
        );
    }
    let version = match version_of(&id, &params, ctx) {
        Ok(v) => v,
        Err(refused) => return refused,
    };
    let modern = version == MODERN;
    let server_info = json!({"name": endpoint.server_name, "version": env!("CARGO_PKG_VERSION")});
    let complete = |mut result: Value| {
        if modern {
            result["resultType"] = json!("complete");
            result["_meta"] = json!({META_SERVER: server_info});
        }
        result
    };
    match method {
        "initialize" if !modern => {
            let asked = params.get("protocolVersion").and_then(Value::as_str);
            let version = asked
                .and_then(known)
                .filter(|v| *v != MODERN)
                .unwrap_or(NEWEST_LEGACY);
            let result = json!({
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": list_changes(endpoint)}},
                "serverInfo": server_info.clone(),
                "instructions": endpoint.instructions,
            });
            let holder = ctx.authorised && st.token.is_some();
            reply(ok(&id, result), Some(sessions.open(version, holder)))
        }
        "ping" if !modern => reply(ok(&id, json!({})), None),
        "server/discover" => reply(
            ok(
                &id,
                complete(json!({
                    "supportedVersions": VERSIONS,
                    "capabilities": {"tools": {"listChanged": list_changes(endpoint)}},
                    "serverInfo": server_info.clone(),
                    "instructions": endpoint.instructions,
                })),
            ),
            None,
        ),
        "subscriptions/listen" if modern => listen(endpoint, &id, &params),
        "tools/list" => {
            let cursor = match params.get("cursor") {
                None | Some(Value::Null) => None,
                Some(Value::String(c)) => Some(c.as_str()),
                Some(_) => {
                    return reply(
                        rpc_error(id, INVALID_PARAMS, "`cursor` must be a string"),
                        None,
                    )
                }
            };
            match listing::tools_list(st, endpoint, &id, cursor, modern.then_some(&server_info)) {
                Ok(text) => Outcome::Reply {
                    text,
                    session: None,
                },
                Err(m) => reply(rpc_error(id, INVALID_PARAMS, m), None),
            }
        }
        "tools/call" => {
            if !ctx.authorised {
                let m = if st.token.is_none() {
                    "this server has no token configured; start it with --token-env NAME"
                } else {
                    "missing or wrong token"
                };
                return reply(rpc_error(id, UNAUTHORIZED, m), None);
            }
            let mut answer = call(st, endpoint, &id, &params, version).await;
            if let Some(result) = answer.get_mut("result") {
                *result = complete(result.take());
            }
            reply(answer, None)
        }
        other => {
            let e = rpc_error(
                id,
                METHOD_NOT_FOUND,
                format!("method `{other}` is not supported by this server at protocol version {version}"),
            );
            if modern {
                // 2026-07-28 transports: an unknown method is 404 with -32601.
                return Outcome::NoMethod(e);
            }
            reply(e, None)
        }
    }
}

/// A modern `subscriptions/listen`: acknowledge the notification types this endpoint sends.
fn listen(endpoint: Endpoint, id: &Value, params: &Value) -> Outcome {
    let Some(wanted) = params.get("notifications").and_then(Value::as_object) else {
        return reply(
            rpc_error(
                id.clone(),
                INVALID_PARAMS,
                "subscriptions/listen needs `notifications` (an object such as {\"toolsListChanged\": true})",
            ),
            None,
        );
    };
    // Only what was asked for and this endpoint can send.
    let tools = wanted.get("toolsListChanged") == Some(&json!(true)) && list_changes(endpoint);
    let mut granted = serde_json::Map::new();
    if tools {
        granted.insert("toolsListChanged".into(), json!(true));
    }
    let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                     "params": {"_meta": {META_SUBSCRIPTION: id}, "notifications": granted}});
    Outcome::Listen {
        id: if tools { id.clone() } else { Value::Null },
        ack: crate::json::compact(&ack),
    }
}

/// `notifications/tools/list_changed` on a modern subscription's stream.
pub fn list_changed_for(subscription: &Value) -> String {
    crate::json::compact(
        &json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
        "params": {"_meta": {META_SUBSCRIPTION: subscription}}}),
    )
}

fn reply(v: Value, session: Option<String>) -> Outcome {
    Outcome::Reply {
        text: crate::json::compact(&v).into(),
        session,
    }
}

/// Whether an endpoint's list follows the directory (and so sends `list_changed`).
pub fn list_changes(endpoint: Endpoint) -> bool {
    match endpoint.calls {
        Calls::ByKey => true,
        Calls::Generic | Calls::Program => false,
    }
}

fn tool_result(value: &Value, is_error: bool) -> Value {
    json!({"content": [{"type": "text", "text": crate::json::compact(value)}], "structuredContent": value, "isError": is_error})
}

async fn call(
    st: &Arc<State>,
    endpoint: Endpoint,
    id: &Value,
    params: &Value,
    version: &str,
) -> Value {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return rpc_error(
            id.clone(),
            INVALID_PARAMS,
            "tools/call needs `name` (a string)",
        );
    };
    let args = params.get("arguments").cloned().unwrap_or(json!({}));
    if !args.is_object() {
        return rpc_error(id.clone(), INVALID_PARAMS, "`arguments` must be an object");
    }
    let request = match endpoint.calls {
        Calls::Program => return call_program(st, id, name, &args, version).await,
        Calls::ByKey => {
            if !st.snapshot().row(name).is_some_and(|r| r.projected()) {
                return rpc_error(
                    id.clone(),
                    INVALID_PARAMS,
                    format!("unknown tool `{name}`; tools/list names them"),
                );
            }
            invocation(name.to_string(), args)
        }
        Calls::Generic => match call_generic(st, id, name, &args, version) {
            Generic::Answered(v) => return v,
            Generic::Invoke(r) => r,
        },
    };
    match invoke::invoke(st, request).await {
        Ok(inv) => ok(
            id,
            tool_result(
                &json!({"ok": inv.ok, "result": inv.result, "receipt": inv.receipt.id}),
                !inv.ok,
            ),
        ),
        Err(Refusal::BadArgs { pointer, message }) => bad_args(
            id,
            version,
            &pointer,
            &format!("arguments do not match the schema at {pointer}: {message}"),
            true,
        ),
        Err(r @ (Refusal::UnknownKey { .. } | Refusal::UnknownReceipt(_))) => {
            rpc_error(id.clone(), INVALID_PARAMS, r.message())
        }
        Err(r) => ok(
            id,
            tool_result(&json!({"error": "refused", "message": r.message()}), true),
        ),
    }
}

/// Arguments that fail the tool's input rules: a tool result with `isError` from
/// [`TOOL_ERRORS_FROM`] on (SEP-1303: the model sees what was wrong and can call again), a
/// JSON-RPC -32602 before.
/// `pointer_in_error`: whether the older -32602 carries `data.pointer` (schema failures do;
/// the generic tools' missing-field errors never did, and their bytes stay as they were).
fn bad_args(
    id: &Value,
    version: &str,
    pointer: &str,
    message: &str,
    pointer_in_error: bool,
) -> Value {
    if version >= TOOL_ERRORS_FROM {
        return ok(
            id,
            tool_result(
                &json!({"error": "invalid_arguments", "pointer": pointer, "message": message}),
                true,
            ),
        );
    }
    let mut e = rpc_error(id.clone(), INVALID_PARAMS, message);
    if pointer_in_error {
        e["error"]["data"] = json!({"pointer": pointer});
    }
    e
}

fn invocation(key: String, args: Value) -> InvokeRequest {
    InvokeRequest {
        key,
        args,
        shape: false,
        repairs: None,
    }
}

/// Code mode's `execute`: run the program in the sandbox.
async fn call_program(
    st: &Arc<State>,
    id: &Value,
    name: &str,
    args: &Value,
    version: &str,
) -> Value {
    if name != "execute" {
        return rpc_error(
            id.clone(),
            INVALID_PARAMS,
            format!("unknown tool `{name}`; this surface has one tool, `execute`"),
        );
    }
    let Some(code) = args.get("code").and_then(Value::as_str) else {
        return bad_args(
            id,
            version,
            "/code",
            "execute needs `code` (a string)",
            false,
        );
    };
    let outcome = super::code::execute(st.clone(), code.to_string()).await;
    let text = outcome.result_text();
    ok(
        id,
        json!({"content": [{"type": "text", "text": text}],
               "structuredContent": outcome, "isError": outcome.error.is_some()}),
    )
}

/// A generic tool's call: answered here, or an invocation to run.
enum Generic {
    Answered(Value),
    Invoke(InvokeRequest),
}

/// The small surface's tools: dispatch, search_directory, read_contract, read_receipt.
fn call_generic(st: &Arc<State>, id: &Value, name: &str, args: &Value, version: &str) -> Generic {
    let answered = Generic::Answered;
    match name {
        "dispatch" => {
            let Some(key) = args.get("key").and_then(Value::as_str) else {
                return answered(bad_args(id, version, "/key", "dispatch needs `key`", false));
            };
            Generic::Invoke(invocation(
                key.to_string(),
                args.get("body").cloned().unwrap_or(json!({})),
            ))
        }
        "search_directory" => {
            let Some(q) = args.get("query").and_then(Value::as_str) else {
                return answered(bad_args(
                    id,
                    version,
                    "/query",
                    "search_directory needs `query`",
                    false,
                ));
            };
            let limit = args
                .get("limit")
                .and_then(Value::as_u64)
                .unwrap_or(12)
                .clamp(1, 12) as usize;
            let resolver =
                match http::resolver_named(st, args.get("resolver").and_then(Value::as_str)) {
                    Ok(m) => m,
                    Err(e) => return answered(ok(id, tool_result(&json!({"error": e}), true))),
                };
            answered(match http::search(st, q, resolver, limit) {
                Ok(found) => ok(
                    id,
                    tool_result(&json!({"query": q, "candidates": found}), false),
                ),
                Err(e) => ok(id, tool_result(&json!({"error": e}), true)),
            })
        }
        "read_contract" => {
            let key = args.get("key").and_then(Value::as_str).unwrap_or("");
            let snap = st.snapshot();
            answered(match snap.row(key) {
                Some(row) => ok(id, tool_result(&contract_value(row, &st.base_url()), false)),
                None => {
                    let r = Refusal::UnknownKey {
                        key: key.into(),
                        suggestions: Vec::new(),
                    };
                    ok(
                        id,
                        tool_result(
                            &json!({"error": "unknown_key", "message": r.message()}),
                            true,
                        ),
                    )
                }
            })
        }
        "read_receipt" => {
            let rid = args.get("id").and_then(Value::as_str).unwrap_or("");
            let r = st.receipt(rid);
            answered(match r {
                Ok(Some(r)) => ok(
                    id,
                    tool_result(&serde_json::to_value(r).expect("serialises"), false),
                ),
                _ => ok(
                    id,
                    tool_result(
                        &json!({"error": "unknown_receipt", "message": format!("no receipt `{rid}`")}),
                        true,
                    ),
                ),
            })
        }
        other => answered(rpc_error(
            id.clone(),
            INVALID_PARAMS,
            format!("unknown tool `{other}`"),
        )),
    }
}

/// The list_changed notification.
pub const LIST_CHANGED: &str = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_known_newest_first() {
        assert_eq!(VERSIONS[0], MODERN);
        assert!(VERSIONS.windows(2).all(|w| w[0] > w[1]));
        assert_eq!(known("2025-11-25"), Some("2025-11-25"));
        assert_eq!(known("2025-11-26"), None);
        assert!(TOOL_ERRORS_FROM > ASSUMED && NEWEST_LEGACY >= TOOL_ERRORS_FROM);
    }
}
