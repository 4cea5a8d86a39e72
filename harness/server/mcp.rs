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
use super::state::State;
use crate::resolve;
use crate::surface::{Calls, Endpoint};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// Protocol versions this server speaks, newest first.
pub const VERSIONS: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const UNAUTHORIZED: i64 = -32001;

/// Open sessions by id.
#[derive(Default)]
pub struct Sessions(Mutex<HashSet<String>>);

impl Sessions {
    pub fn open(&self) -> String {
        let (s, n) = crate::clock::now();
        let id = format!(
            "{:016x}{:08x}",
            crate::rng::Rng::new(s as u64 ^ (n as u64) << 20).next_u64(),
            n
        );
        crate::sync::lock(&self.0).insert(id.clone());
        id
    }
    pub fn known(&self, id: &str) -> bool {
        crate::sync::lock(&self.0).contains(id)
    }
    pub fn close(&self, id: &str) -> bool {
        crate::sync::lock(&self.0).remove(id)
    }
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
        text: String,
        session: Option<String>,
    },
    /// A notification or a client's response: nothing to send back.
    Accepted,
    /// A message that is not JSON-RPC (HTTP 400 with this body).
    Invalid(Value),
}

/// Check a message's shape and answer it. `authorised` is whether the caller may invoke.
pub async fn handle(
    st: &Arc<State>,
    sessions: &Sessions,
    endpoint: Endpoint,
    msg: &Value,
    authorised: bool,
) -> Outcome {
    let Some(obj) = msg.as_object() else {
        let text = if msg.is_array() {
            "batches are not supported; send one message per request"
        } else {
            "a message must be a JSON object"
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
    match method {
        "initialize" => {
            let asked = params.get("protocolVersion").and_then(Value::as_str);
            let version = asked
                .filter(|v| VERSIONS.contains(v))
                .unwrap_or(VERSIONS[0]);
            let result = json!({
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": list_changes(endpoint)}},
                "serverInfo": {"name": endpoint.server_name, "version": env!("CARGO_PKG_VERSION")},
                "instructions": endpoint.instructions,
            });
            reply(ok(&id, result), Some(sessions.open()))
        }
        "ping" => reply(ok(&id, json!({})), None),
        "tools/list" => Outcome::Reply {
            text: tools_list(st, endpoint, &id),
            session: None,
        },
        "tools/call" => {
            if !authorised {
                let m = if st.token.is_none() {
                    "this server has no token configured; start it with --token-env NAME"
                } else {
                    "missing or wrong token"
                };
                return reply(rpc_error(id, UNAUTHORIZED, m), None);
            }
            reply(call(st, endpoint, &id, &params).await, None)
        }
        other => reply(
            rpc_error(
                id,
                METHOD_NOT_FOUND,
                format!("method `{other}` is not supported by this server"),
            ),
            None,
        ),
    }
}

fn reply(v: Value, session: Option<String>) -> Outcome {
    Outcome::Reply {
        text: crate::json::compact(&v),
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

/// The `tools/list` answer, written from each definition's text so the bytes are the
/// surface's bytes. The `tools` array is serialised once per snapshot; only the id is new.
pub fn tools_list(st: &State, endpoint: Endpoint, id: &Value) -> String {
    let snap = st.snapshot();
    let tools = snap.tools_json(endpoint.path);
    let id = crate::json::compact(id);
    let mut out = String::with_capacity(tools.len() + id.len() + 48);
    out.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
    out.push_str(&id);
    out.push_str(",\"result\":{\"tools\":");
    out.push_str(&tools);
    out.push_str("}}");
    out
}

fn tool_result(value: &Value, is_error: bool) -> Value {
    json!({"content": [{"type": "text", "text": crate::json::compact(value)}], "structuredContent": value, "isError": is_error})
}

async fn call(st: &Arc<State>, endpoint: Endpoint, id: &Value, params: &Value) -> Value {
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
        Calls::Program => return call_program(st, id, name, &args).await,
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
        Calls::Generic => match call_generic(st, id, name, &args) {
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
        Err(Refusal::BadArgs { pointer, message }) => json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": INVALID_PARAMS, "message": format!("arguments do not match the schema at {pointer}: {message}"), "data": {"pointer": pointer}}}),
        Err(r @ (Refusal::UnknownKey { .. } | Refusal::UnknownReceipt(_))) => {
            rpc_error(id.clone(), INVALID_PARAMS, r.message())
        }
        Err(r) => ok(
            id,
            tool_result(&json!({"error": "refused", "message": r.message()}), true),
        ),
    }
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
async fn call_program(st: &Arc<State>, id: &Value, name: &str, args: &Value) -> Value {
    if name != "execute" {
        return rpc_error(
            id.clone(),
            INVALID_PARAMS,
            format!("unknown tool `{name}`; this surface has one tool, `execute`"),
        );
    }
    let Some(code) = args.get("code").and_then(Value::as_str) else {
        return rpc_error(
            id.clone(),
            INVALID_PARAMS,
            "execute needs `code` (a string)",
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
fn call_generic(st: &Arc<State>, id: &Value, name: &str, args: &Value) -> Generic {
    let answered = Generic::Answered;
    match name {
        "dispatch" => {
            let Some(key) = args.get("key").and_then(Value::as_str) else {
                return answered(rpc_error(
                    id.clone(),
                    INVALID_PARAMS,
                    "dispatch needs `key`",
                ));
            };
            Generic::Invoke(invocation(
                key.to_string(),
                args.get("body").cloned().unwrap_or(json!({})),
            ))
        }
        "search_directory" => {
            let Some(q) = args.get("query").and_then(Value::as_str) else {
                return answered(rpc_error(
                    id.clone(),
                    INVALID_PARAMS,
                    "search_directory needs `query`",
                ));
            };
            let limit = args
                .get("limit")
                .and_then(Value::as_u64)
                .unwrap_or(12)
                .clamp(1, 12) as usize;
            let found = http::search(st, q, resolve::Kind::DEFAULT, limit);
            answered(ok(
                id,
                tool_result(&json!({"query": q, "candidates": found}), false),
            ))
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
