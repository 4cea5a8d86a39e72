//! `/mcp/code`: the code-mode surface served for real. Its one tool, `execute`, runs the
//! model's program in the sandbox with `search`, `contract` and `dispatch` bound to this
//! server's own resolver, contracts and invoke path, so every dispatch is validated and
//! leaves a receipt exactly as the other surfaces' calls do.

use super::http::{contract_value, search};
use super::invoke::{self, InvokeRequest};
use super::state::State;
use crate::resolve;
use crate::sandbox::{self, Api, Limits, Outcome};
use serde_json::{json, Value};
use std::rc::Rc;
use std::sync::Arc;

/// The catalogue API as the sandbox sees it, answered by one server state.
pub struct ServerApi {
    pub state: Arc<State>,
    /// The runtime that `dispatch` blocks on; the sandbox runs on a blocking thread.
    pub runtime: tokio::runtime::Handle,
}

impl Api for ServerApi {
    fn call(&self, op: &str, arg: &Value) -> Result<Value, String> {
        let st = &self.state;
        match op {
            "search" => {
                let q = arg["query"].as_str().unwrap_or("");
                let limit = arg["limit"].as_u64().unwrap_or(5).clamp(1, 12) as usize;
                Ok(Value::Array(
                    search(st, q, resolve::Kind::DEFAULT, limit)
                        .into_iter()
                        .map(|c| {
                            let args: Vec<String> = c["example"]
                                .as_object()
                                .map(|o| o.keys().cloned().collect())
                                .unwrap_or_default();
                            json!({"key": c["key"], "summary": c["summary"], "args": args})
                        })
                        .collect(),
                ))
            }
            "contract" => {
                let key = arg["key"].as_str().unwrap_or("");
                let snap = st.snapshot();
                let row = snap
                    .row(key)
                    .ok_or_else(|| format!("unknown key `{key}`; search() finds keys"))?;
                let c = contract_value(row, &st.base_url());
                Ok(
                    json!({"key": c["key"], "what": c["what"], "when": c["when_to_use"],
                          "schema": c["schema"], "example": c["example"]}),
                )
            }
            "dispatch" => {
                let key = arg["key"].as_str().unwrap_or("").to_string();
                let args = arg.get("args").cloned().unwrap_or(json!({}));
                if !args.is_object() {
                    return Err("dispatch(key, args): args must be an object".into());
                }
                let req = InvokeRequest {
                    key,
                    args,
                    shape: false,
                    repairs: None,
                };
                match self.runtime.block_on(invoke::invoke(st, req)) {
                    Ok(inv) => {
                        Ok(json!({"ok": inv.ok, "result": inv.result, "receipt": inv.receipt.id}))
                    }
                    Err(r) => Err(r.message()),
                }
            }
            other => Err(format!("no such sandbox function `{other}`")),
        }
    }
}

/// Run one `execute` call on a blocking thread, once one of the state's sandbox slots is free.
pub async fn execute(state: Arc<State>, code: String) -> Outcome {
    let fail = |e: String| Outcome {
        printed: String::new(),
        error: Some(format!("Error: {e}")),
        api_calls: 0,
        wall_ms: 0.0,
    };
    let slots = state.clone();
    let Ok(_slot) = slots.sandboxes.acquire().await else {
        return fail("the server is shutting down".into());
    };
    let runtime = tokio::runtime::Handle::current();
    let joined = tokio::task::spawn_blocking(move || {
        let api: Rc<dyn Api> = Rc::new(ServerApi { state, runtime });
        sandbox::run(&code, api, Limits::default())
    })
    .await;
    joined.unwrap_or_else(|e| fail(format!("the sandbox thread failed: {e}")))
}
