//! `/mcp/code`: the code-mode surface served for real. Its one tool, `execute`, runs the
//! model's program in the sandbox with `search`, `contract` and `dispatch` bound to this
//! server's own resolver, contracts and invoke path, so every dispatch is validated and
//! leaves a receipt exactly as the other surfaces' calls do.

use super::http::{contract_value, resolver_named, search};
use super::invoke::{self, InvokeRequest};
use super::state::State;
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
    /// The sandbox slot this program runs in, given back while a dispatch waits on its
    /// answer (an outbound call may take seconds and uses no CPU here) and taken again after.
    pub slot: Option<Slot>,
}

/// One of the state's sandbox slots, held by a running program: a permit taken out of the
/// semaphore, put back when the program waits on a dispatch or ends.
pub struct Slot {
    state: Arc<State>,
    held: Cell<bool>,
}

impl Slot {
    /// Wait for a free slot.
    pub async fn take(state: Arc<State>) -> Option<Slot> {
        state.sandboxes.acquire().await.ok()?.forget();
        Some(Slot {
            state,
            held: Cell::new(true),
        })
    }

    fn give_back(&self) {
        if self.held.replace(false) {
            self.state.sandboxes.add_permits(1);
        }
    }

    /// Take a slot again, waiting at most `left`; whether one was free in time.
    fn retake(&self, runtime: &tokio::runtime::Handle, left: std::time::Duration) -> bool {
        let got = runtime.block_on(tokio::time::timeout(left, self.state.sandboxes.acquire()));
        match got {
            Ok(Ok(permit)) => {
                permit.forget();
                self.held.set(true);
                true
            }
            _ => false,
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.give_back();
    }
}

impl ServerApi {
    pub fn new(state: Arc<State>, runtime: tokio::runtime::Handle, deadline: Instant) -> Self {
        ServerApi {
            state,
            runtime,
            deadline,
            dispatches: Cell::new(0),
            bytes: Cell::new(0),
            slot: None,
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
        if let Some(slot) = &self.slot {
            slot.give_back();
        }
        let answer = self.runtime.block_on(run);
        if let Some(slot) = &self.slot {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if !slot.retake(&self.runtime, left) {
                return Err(
                    "the program's time limit ran out while it waited for a sandbox slot after its dispatch"
                        .into(),
                );
            }
        }
        match answer {
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
                let resolver = resolver_named(st, arg["resolver"].as_str())?;
                Ok(Value::Array(
                    search(st, q, resolver, limit)?
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
    let Some(slot) = Slot::take(state.clone()).await else {
        return fail("the server is shutting down".into());
    };
    let runtime = tokio::runtime::Handle::current();
    let joined = tokio::task::spawn_blocking(move || {
        let limits = Limits::default();
        let deadline = Instant::now() + limits.time;
        let mut api = ServerApi::new(state, runtime, deadline);
        api.slot = Some(slot);
        let api: Rc<dyn Api> = Rc::new(api);
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
