//! The invoke path every surface shares: look the row up, check the arguments against its
//! schema, run its runner, and write the receipt before answering.

use super::state::State;
use super::store::Receipt;
use crate::catalogue::{Row, RowSchema, Runner};
use crate::clock;
use crate::resolve::Resolver;
use crate::schema::instance;
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
    /// `repairs` names a receipt this store does not hold.
    UnknownReceipt(String),
    /// The store could not be read or written just now (busy, locked by another process, a
    /// full disk): no receipt was written, and the same call may succeed later.
    Unavailable(String),
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
            Refusal::Unavailable(m) => format!(
                "the receipt store is unavailable (another process holds it, or it cannot be written): {m}. No receipt was written; the call itself may have run, so look before retrying a call with side effects"
            ),
            Refusal::UnknownReceipt(id) => format!("`repairs` names receipt `{id}`, which this server does not hold; give the id of the receipt this call repairs"),
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
            .map(|h| snap.rows()[h.row].key.clone())
            .collect();
        return Err(Refusal::UnknownKey {
            key: req.key,
            suggestions,
        });
    };
    drop(snap);
    if let Some(id) = &req.repairs {
        match state.receipt(id) {
            Ok(Some(_)) => {}
            Ok(None) => return Err(Refusal::UnknownReceipt(id.clone())),
            Err(e) => {
                return Err(Refusal::Unavailable(format!(
                    "could not read receipts: {e}"
                )))
            }
        }
    }
    let args = match req.args {
        Value::Null => json!({}),
        a => a,
    };
    // Arguments are checked against the schema as stored, not its normal form: the normal
    // form may accept less or more (where strict rules cannot say what the schema says), and
    // what a tool accepts is what its author wrote.
    let schema = row
        .input_schema
        .as_ref()
        .map_or_else(|| json!({"type": "object"}), RowSchema::value);
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
    // The id is a hash of what ran and the receipt's place in the store, keyed with the
    // server's secret unless reproducible ids were asked for (then the same calls on the same
    // store give the same ids, and a measured run's token counts do not drift with them).
    // Another process appending to the same file can take the number first: then try the next.
    let key_prefix = match state.limits.receipt_ids {
        super::ReceiptIds::Reproducible => String::new(),
        super::ReceiptIds::Unguessable => format!("{}|", state.id_secret),
    };
    let receipt = state.write_receipt(|seq| {
        let id_src = format!(
            "{key_prefix}{}|{}|{seq}",
            row.key,
            crate::json::compact(&args)
        );
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
    })?;
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
    let schema = row
        .input_schema
        .as_ref()
        .map_or_else(|| json!({}), RowSchema::value);
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
    // Each value is percent-encoded where it lands (all but unreserved characters), so an
    // argument stays one path segment or one query value: `../x?y#` cannot climb the path,
    // start a query or cut the URL.
    let mut out = String::with_capacity(url.len());
    let mut rest = url;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let digit = after.chars().next().filter(|c| ('1'..='9').contains(c));
        let Some(d) = digit else {
            out.push('$');
            rest = after;
            continue;
        };
        let i = d as usize - '0' as usize;
        let value = order
            .get(i - 1)
            .and_then(|k| args.get(k))
            .ok_or_else(|| format!("${i} needs argument {i}"))?;
        let text = value
            .as_str()
            .map(String::from)
            .unwrap_or_else(|| value.to_string());
        out.push_str(&encode_component(&text));
        rest = &after[1..];
    }
    out.push_str(rest);
    let path_end = out.find(['?', '#']).unwrap_or(out.len());
    let path = out[..path_end].split_once("://").map_or("", |(_, p)| p);
    let dot_segment = path.split('/').skip(1).any(|seg| {
        let seg = seg.to_ascii_lowercase().replace("%2e", ".");
        seg == "." || seg == ".."
    });
    if dot_segment {
        return Err("an argument would make a `.` or `..` path segment, which climbs the URL's path; nothing was sent".into());
    }
    Ok((method.to_string(), out))
}

/// Percent-encode everything but RFC 3986's unreserved characters.
fn encode_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
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
    let Ok(parsed) = reqwest::Url::parse(&url) else {
        return Ok(Err(format!("`{url}` is not a URL")));
    };
    if !state.outbound.allows(&parsed) {
        let at = super::outbound::host_port(&parsed);
        return Err(Refusal::Forbidden(format!(
            "`{at}` is not on this server's allowlist, so nothing was sent; pass \"shape\": true to see the request, or start the server with --allow-host {at}"
        )));
    }
    let m = reqwest::Method::from_bytes(method.as_bytes())
        .map_err(|_| Refusal::Forbidden(format!("bad method {method}")))?;
    let json_body = (!body.is_null()).then(|| crate::json::compact(&body));
    Ok(match state.outbound.send(m, parsed, json_body).await {
        Ok((status, text)) => {
            let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
            if status < 400 {
                Ok(json!({"status": status, "body": body}))
            } else {
                Err(format!("HTTP {status}: {body}"))
            }
        }
        Err(e) => Err(e),
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
