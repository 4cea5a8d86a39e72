//! The invoke path every surface shares: look the row up, check the arguments against its
//! schema, run its runner, and write the receipt before answering.

use super::state::State;
use super::store::Receipt;
use crate::catalogue::{Row, Runner};
use crate::clock;
use crate::resolve::Resolver;
use crate::schema::{self, instance};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// A request to run one row.
#[derive(Debug, Clone)]
pub struct InvokeRequest {
    pub key: String,
    pub args: Value,
    /// For http rows: return the outbound request instead of sending it.
    pub shape: bool,
    /// The receipt id this call repairs.
    pub repairs: Option<String>,
}

/// Why a call was refused before it ran (no receipt is written).
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    UnknownKey {
        key: String,
        suggestions: Vec<String>,
    },
    BadArgs {
        pointer: String,
        message: String,
    },
    Forbidden(String),
}

impl Refusal {
    pub fn message(&self) -> String {
        match self {
            Refusal::UnknownKey { key, suggestions } => format!(
                "unknown key `{key}`: ask first (GET /api/dispatch?ask=<what you need>) and use best.key; never guess a neighbouring key{}",
                if suggestions.is_empty() { String::new() } else { format!(". Closest: {}", suggestions.join(", ")) }
            ),
            Refusal::BadArgs { pointer, message } => format!("arguments do not match the row's schema at {pointer}: {message}"),
            Refusal::Forbidden(m) => m.clone(),
        }
    }
}

/// A call that ran, successfully or not.
#[derive(Debug, Clone)]
pub struct Invocation {
    pub ok: bool,
    pub result: Value,
    pub receipt: Receipt,
}

fn hash(v: &Value) -> String {
    let digest = Sha256::digest(crate::json::compact(v).as_bytes());
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// Run a row and write its receipt.
pub async fn invoke(state: &State, req: InvokeRequest) -> Result<Invocation, Refusal> {
    let snap = state.snapshot();
    let Some(row) = snap.row(&req.key).cloned() else {
        let suggestions = snap
            .best
            .resolve(&req.key, 3)
            .into_iter()
            .map(|h| snap.rows[h.row].key.clone())
            .collect();
        return Err(Refusal::UnknownKey {
            key: req.key,
            suggestions,
        });
    };
    drop(snap);
    let args = match req.args {
        Value::Null => json!({}),
        a => a,
    };
    let schema = schema::normalise(
        row.input_schema
            .as_ref()
            .unwrap_or(&json!({"type": "object"})),
    );
    instance::check(&schema, &args).map_err(|e| Refusal::BadArgs {
        pointer: e.pointer,
        message: e.message,
    })?;
    let outcome = run(state, &row, &args, req.shape).await?;
    let (ok, result) = match outcome {
        Ok(v) => (true, v),
        Err(e) => (false, json!({"error": e})),
    };
    let (secs, nanos) = clock::now();
    // The id is a hash of what ran and the receipt's place in the store, so the same calls on
    // the same store give the same ids (and a run's token counts do not drift with them).
    // Another process appending to the same file can take the number first: then try the next.
    let receipt = state
        .write_receipt(|seq| {
            let id_src = format!("{}|{}|{seq}", row.key, crate::json::compact(&args));
            Receipt {
                id: format!("inv_{}", &hash(&Value::String(id_src))[..16]),
                key: row.key.clone(),
                args_hash: hash(&args),
                result_hash: hash(&result),
                ok,
                repairs: req.repairs.clone(),
                created_at: clock::rfc3339(secs, nanos),
                args: args.clone(),
                result: result.clone(),
            }
        })
        .map_err(Refusal::Forbidden)?;
    Ok(Invocation {
        ok,
        result,
        receipt,
    })
}

/// The runner's answer: Ok(result) or Err(message) for a call that ran and failed.
async fn run(
    state: &State,
    row: &Row,
    args: &Value,
    shape: bool,
) -> Result<Result<Value, String>, Refusal> {
    match row.runner {
        Runner::Fn => Ok(builtin(state, row, args)),
        Runner::Http => http(state, row, args, shape).await,
        Runner::Agent => Ok(Err(format!(
            "the agent runner is not configured on this server; `{}` needs an agent backend ({})",
            row.key,
            row.target.as_deref().unwrap_or("no target")
        ))),
        Runner::Flow => {
            let steps: Vec<String> = row
                .content
                .lines()
                .find_map(|l| l.strip_prefix("STEPS:"))
                .map(|s| {
                    s.split("->")
                        .map(|k| k.trim().to_string())
                        .filter(|k| !k.is_empty())
                        .collect()
                })
                .unwrap_or_default();
            if steps.is_empty() {
                return Ok(Err("this flow names no steps".into()));
            }
            let snap = state.snapshot();
            let mut results = Vec::new();
            for key in steps {
                let Some(step) = snap.row(&key).cloned() else {
                    return Ok(Err(format!("flow step `{key}` is not in the directory")));
                };
                let out = match step.runner {
                    Runner::Fn => builtin(state, &step, args),
                    Runner::Http => http(state, &step, args, true).await?,
                    _ => Err(format!(
                        "flow step `{key}` is a {} row; flows run fn and http steps",
                        step.runner.as_str()
                    )),
                };
                match out {
                    Ok(v) => results.push(json!({"key": key, "result": v})),
                    Err(e) => return Ok(Err(format!("flow step `{key}` failed: {e}"))),
                }
            }
            Ok(Ok(json!({"steps": results})))
        }
    }
}

/// The outbound request an http row describes: `METHOD URL` with `$1`, `$2`... replaced by the
/// argument values in schema order.
fn outbound(row: &Row, args: &Value) -> Result<(String, String), String> {
    let target = row.target.as_deref().ok_or("this http row has no target")?;
    let (method, url) = target
        .split_once(' ')
        .ok_or("target must be `METHOD URL`")?;
    let schema = row.input_schema.clone().unwrap_or(json!({}));
    let order: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(String::from))
        .chain(
            schema
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|m| m.keys().cloned()),
        )
        .collect();
    let mut url = url.to_string();
    for i in (1..=9).rev() {
        let slot = format!("${i}");
        if url.contains(&slot) {
            let value = order
                .get(i - 1)
                .and_then(|k| args.get(k))
                .ok_or_else(|| format!("{slot} needs argument {i}"))?;
            let text = value
                .as_str()
                .map(String::from)
                .unwrap_or_else(|| value.to_string());
            url = url.replace(&slot, &text);
        }
    }
    Ok((method.to_string(), url))
}

async fn http(
    state: &State,
    row: &Row,
    args: &Value,
    shape: bool,
) -> Result<Result<Value, String>, Refusal> {
    let (method, url) = match outbound(row, args) {
        Ok(x) => x,
        Err(e) => return Ok(Err(e)),
    };
    let auth = row
        .auth
        .as_deref()
        .and_then(|a| a.split_once(':'))
        .map(|(_, env)| format!("Bearer ${env}"));
    let body = if matches!(method.as_str(), "GET" | "DELETE") {
        Value::Null
    } else {
        args.clone()
    };
    if shape {
        return Ok(Ok(
            json!({"shape": {"method": method, "url": url, "headers": {"authorization": auth}, "body": body}, "sent": false}),
        ));
    }
    let host = reqwest::Url::parse(&url)
        .ok()
        .and_then(|u| u.host_str().map(String::from))
        .unwrap_or_default();
    if !state.allowlist.iter().any(|h| h == &host) {
        return Err(Refusal::Forbidden(format!(
            "`{host}` is not on this server's allowlist, so nothing was sent; pass \"shape\": true to see the request, or start the server with --allow-host {host}"
        )));
    }
    let client = reqwest::Client::new();
    let m = reqwest::Method::from_bytes(method.as_bytes())
        .map_err(|_| Refusal::Forbidden(format!("bad method {method}")))?;
    let mut rb = client.request(m, &url);
    if !body.is_null() {
        rb = rb
            .header("content-type", "application/json")
            .body(crate::json::compact(&body));
    }
    Ok(match rb.send().await {
        Ok(resp) => {
            let status = resp.status().as_u16();
            let text = resp.text().await.unwrap_or_default();
            let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
            if status < 400 {
                Ok(json!({"status": status, "body": body}))
            } else {
                Err(format!("HTTP {status}: {body}"))
            }
        }
        Err(e) => Err(format!("request failed: {e}")),
    })
}

fn seed_of(s: &str) -> u64 {
    let d = Sha256::digest(s.as_bytes());
    u64::from_le_bytes(d[..8].try_into().unwrap())
}

/// Built-in functions, named by the row's `fn:<name>` target.
fn builtin(state: &State, row: &Row, args: &Value) -> Result<Value, String> {
    let name = row
        .target
        .as_deref()
        .and_then(|t| t.strip_prefix("fn:"))
        .unwrap_or("");
    match name {
        "now" => {
            let (s, n) = clock::now();
            let tz = args.get("timezone").and_then(Value::as_str).unwrap_or("UTC");
            Ok(json!({"utc": clock::rfc3339(s, n), "unix": s, "timezone": tz,
                      "note": if tz == "UTC" { Value::Null } else { json!("this server has no time-zone database; the time is UTC") }}))
        }
        "echo" => Ok(args.clone()),
        "sum" => {
            let numbers = args.get("numbers").and_then(Value::as_array).cloned().unwrap_or_default();
            let total: f64 = numbers.iter().filter_map(Value::as_f64).sum();
            Ok(json!({"total": total, "count": numbers.len()}))
        }
        "email_send" => {
            let at = clock::now_rfc3339();
            let id = state.record_outbox(&row.key, args, &at).map_err(|e| e.to_string())?;
            Ok(json!({"recorded": true, "sent": false, "outbox_id": id, "to": args["to"], "subject": args["subject"],
                      "note": "the reference server records messages and sends nothing"}))
        }
        "order_get" => {
            let id = args.get("order_id").and_then(Value::as_str).unwrap_or("");
            let mut rng = crate::rng::Rng::new(seed_of(id));
            let items: Vec<Value> = (0..1 + rng.below(3))
                .map(|i| {
                    let qty = 1 + rng.below(4) as u64;
                    let unit = 500 + rng.below(9_500) as u64;
                    json!({"sku": format!("sku_{:04}", rng.below(10_000)), "line": i + 1, "quantity": qty, "unit_cents": unit})
                })
                .collect();
            let total: u64 = items.iter().map(|i| i["quantity"].as_u64().unwrap() * i["unit_cents"].as_u64().unwrap()).sum();
            Ok(json!({"order_id": id, "currency": "usd", "status": "paid", "items": items, "total_cents": total}))
        }
        "aig_list" => {
            let account = args.get("account_id").and_then(Value::as_str).unwrap_or("acct_demo");
            let mut rng = crate::rng::Rng::new(seed_of(account));
            let gateways: Vec<Value> = ["production", "staging", "evals"]
                .iter()
                .map(|name| json!({"id": format!("gw_{:08x}", rng.next_u64() as u32), "name": name, "cache_ttl": 300, "logging": true}))
                .collect();
            Ok(json!({"account_id": account, "gateways": gateways}))
        }
        "" => Err("this fn row names no function".into()),
        other => Err(format!("`{other}` is a catalogue entry without a built-in implementation on the reference server")),
    }
}
