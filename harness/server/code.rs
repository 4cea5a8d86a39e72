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
use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// The catalogue API as the sandbox sees it, answered by one server state.
pub struct ServerApi {
    pub state: Arc<State>,
    /// The runtime that `dispatch` blocks on; the sandbox runs on a blocking thread.
    pub runtime: tokio::runtime::Handle,
    /// The program's deadline: a dispatch still waiting then is abandoned.
    pub deadline: Instant,
    /// Dispatches made, and bytes of arguments and results moved, so far.
    pub dispatches: Cell<usize>,
    pub bytes: Cell<usize>,
}

impl ServerApi {
    pub fn new(state: Arc<State>, runtime: tokio::runtime::Handle, deadline: Instant) -> Self {
        ServerApi {
            state,
            runtime,
            deadline,
            dispatches: Cell::new(0),
            bytes: Cell::new(0),
        }
    }

    /// Run one dispatch within the program's limits.
    fn dispatch(&self, req: InvokeRequest) -> Result<Value, String> {
        let st = &self.state;
        let limits = &st.limits;
        let made = self.dispatches.get();
        if made >= limits.program_dispatches {
            return Err(format!(
                "this program has made {made} dispatches, the sandbox's limit for one program; nothing more was run (split the work across programs)"
            ));
        }
        let arg_bytes = crate::json::compact(&req.args).len();
        if arg_bytes > st.max_body {
            return Err(format!(
                "dispatch arguments are {arg_bytes} bytes, over this server's --max-body of {} bytes; nothing was run",
                st.max_body
            ));
        }
        if self.bytes.get() + arg_bytes > limits.program_bytes {
            return Err(format!(
                "this program's dispatches would move more than {} bytes of arguments and results, the sandbox's limit for one program; nothing more was run",
                limits.program_bytes
            ));
        }
        let Some(left) = self
            .deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
        else {
            return Err("the program's time limit has passed; nothing more was run".into());
        };
        self.dispatches.set(made + 1);
        let run = tokio::time::timeout(left, invoke::invoke(st, req));
        match self.runtime.block_on(run) {
            Err(_) => Err(
                "dispatch was still waiting for its answer when the program's time limit ran out"
                    .into(),
            ),
            Ok(Ok(inv)) => {
                let moved = arg_bytes + crate::json::compact(&inv.result).len();
                self.bytes.set(self.bytes.get() + moved);
                Ok(json!({"ok": inv.ok, "result": inv.result, "receipt": inv.receipt.id}))
            }
            Ok(Err(r)) => Err(r.message()),
        }
    }
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
                self.dispatch(InvokeRequest {
                    key,
                    args,
                    shape: false,
                    repairs: None,
                })
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
    // Running and waiting programs together are bounded: past that the answer is "busy", at
    // once, rather than a queue that grows with every caller.
    let (slots, queue) = (state.limits.sandbox_slots, state.limits.sandbox_queue);
    let before = state.programs.fetch_add(1, Ordering::SeqCst);
    let _held = Held(state.clone());
    if before >= slots + queue {
        return fail(format!(
            "the server is busy: {slots} programs are running and {queue} are waiting, the most it queues; try again shortly"
        ));
    }
    let shared = state.clone();
    let Ok(_slot) = shared.sandboxes.acquire().await else {
        return fail("the server is shutting down".into());
    };
    let runtime = tokio::runtime::Handle::current();
    let joined = tokio::task::spawn_blocking(move || {
        let limits = Limits::default();
        let deadline = Instant::now() + limits.time;
        let api: Rc<dyn Api> = Rc::new(ServerApi::new(state, runtime, deadline));
        sandbox::run(&code, api, limits)
    })
    .await;
    joined.unwrap_or_else(|e| fail(format!("the sandbox thread failed: {e}")))
}

/// One program counted in `State::programs` until it ends (or is refused).
struct Held(Arc<State>);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.programs.fetch_sub(1, Ordering::SeqCst);
    }
}
