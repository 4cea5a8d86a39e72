//! The code-mode sandbox: runs a model's JavaScript in an embedded QuickJS interpreter
//! (rquickjs) whose only way out is the catalogue API the execute tool describes
//! (`search`, `contract`, `dispatch`).
//!
//! QuickJS was chosen over boa because it enforces both limits the surface promises in the
//! engine itself: a memory limit on the runtime's allocator and an interrupt handler polled
//! while bytecode runs, so an endless loop stops at the deadline without a watchdog thread.
//! It also builds from bundled C in well under a minute, where boa adds several minutes of
//! Rust compile on two cores. The runtime gets no module loader, no quickjs-libc (`std`, `os`)
//! and no timers, so there is no filesystem and no network: the host functions bound here are
//! the whole world the program sees.

use rquickjs::allocator::{Allocator, RustAllocator};
use rquickjs::{CatchResultExt, CaughtError, Context, Function, Promise, Runtime};
use serde::Serialize;
use serde_json::{json, Value};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// What the program may use.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub time: Duration,
    pub memory_bytes: usize,
    /// Printed output kept; the rest is cut with a note.
    pub output_bytes: usize,
}

impl Default for Limits {
    /// The limits the execute tool's description states: 5 seconds, 64 MB.
    fn default() -> Self {
        Limits {
            time: Duration::from_secs(5),
            memory_bytes: 64 << 20,
            output_bytes: 64 << 10,
        }
    }
}

/// The catalogue functions bound into the sandbox. `op` is `search`, `contract` or
/// `dispatch`; `arg` is what the JavaScript side passed. An `Err` is thrown in the program as
/// an `Error` with that message.
pub trait Api {
    fn call(&self, op: &str, arg: &Value) -> std::result::Result<Value, String>;
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// Everything `console.log` printed, one call per line.
    pub printed: String,
    /// Why the program did not finish, if it did not: a thrown error, the time limit, the
    /// memory limit.
    pub error: Option<String>,
    /// Calls the program made through the API.
    pub api_calls: usize,
    pub wall_ms: f64,
}

impl Outcome {
    /// The text a model sees as the tool result.
    pub fn result_text(&self) -> String {
        match &self.error {
            None if self.printed.is_empty() => "(the program printed nothing)".into(),
            None => self.printed.clone(),
            Some(e) if self.printed.is_empty() => e.clone(),
            Some(e) => format!("{}\n{e}", self.printed),
        }
    }
}

/// Bindings written in JavaScript over the one host function, so the program sees the typed
/// API of the tool description: async functions that resolve to parsed JSON or throw.
const PRELUDE: &str = r#"
(() => {
  const host = globalThis.__toolcost_host;
  const print = globalThis.__toolcost_print;
  delete globalThis.__toolcost_host;
  delete globalThis.__toolcost_print;
  const call = (op, arg) => {
    const r = JSON.parse(host(op, JSON.stringify(arg)));
    if (r.error !== undefined) throw new Error(r.error);
    return r.ok;
  };
  const show = (v) => typeof v === 'string' ? v : (() => { try { return JSON.stringify(v); } catch (e) { return String(v); } })();
  const log = (...xs) => print(xs.map(show).join(' '));
  globalThis.console = Object.freeze({ log, info: log, warn: log, error: log });
  globalThis.search = async (query, limit, resolver) => call('search', { query: String(query), limit: limit === undefined ? 5 : Number(limit), ...(resolver === undefined ? {} : { resolver: String(resolver) }) });
  globalThis.contract = async (key) => call('contract', { key: String(key) });
  globalThis.dispatch = async (key, args) => call('dispatch', { key: String(key), args: args === undefined ? {} : args });
})();
"#;

/// Run `code` (a function body: top-level `await` and `return` work) against `api`.
pub fn run(code: &str, api: Rc<dyn Api>, limits: Limits) -> Outcome {
    let started = Instant::now();
    let printed = Rc::new(RefCell::new(String::new()));
    let calls = Rc::new(Cell::new(0usize));
    let error = execute(code, api, limits, started, printed.clone(), calls.clone()).err();
    let printed = printed.borrow().clone();
    let api_calls = calls.get();
    Outcome {
        printed,
        error,
        api_calls,
        wall_ms: started.elapsed().as_secs_f64() * 1000.0,
    }
}

fn execute(
    code: &str,
    api: Rc<dyn Api>,
    limits: Limits,
    started: Instant,
    printed: Rc<RefCell<String>>,
    calls: Rc<Cell<usize>>,
) -> std::result::Result<(), String> {
    let engine = |e: rquickjs::Error| format!("the sandbox could not start: {e}");
    let refused = Rc::new(Cell::new(false));
    let rt = Runtime::new_with_alloc(Metered {
        used: 0,
        limit: limits.memory_bytes,
        refused: refused.clone(),
    })
    .map_err(engine)?;
    rt.set_max_stack_size(1 << 20);
    let deadline = started + limits.time;
    rt.set_interrupt_handler(Some(Box::new(move || Instant::now() >= deadline)));
    let ctx = Context::full(&rt).map_err(engine)?;
    let out_limit = limits.output_bytes;
    let timed_out = move || Instant::now() >= deadline;
    let time_msg = format!(
        "Error: the program ran past the sandbox's time limit ({} ms) and was stopped",
        limits.time.as_millis()
    );
    let mem_msg = format!(
        "Error: the program ran out of the sandbox's {} MB of memory",
        limits.memory_bytes >> 20
    );
    ctx.with(|ctx| {
        let describe = |e: CaughtError<'_>| -> String {
            if timed_out() {
                return time_msg.clone();
            }
            let text = match &e {
                CaughtError::Exception(x) => {
                    let msg = x.message().unwrap_or_default();
                    let name = x
                        .get::<_, String>("name")
                        .unwrap_or_else(|_| "Error".into());
                    format!("{name}: {msg}")
                }
                CaughtError::Value(v) => format!("Uncaught: {}", shown(v)),
                CaughtError::Error(e) => e.to_string(),
            };
            // QuickJS throws `null` when it cannot even allocate the error object; a program
            // may throw `null` too. The allocator says which.
            match (text.as_str(), refused.get()) {
                (_, true) if text == "Uncaught: null" || text.contains("out of memory") => {
                    mem_msg.clone()
                }
                ("Uncaught: null", false) => {
                    "Uncaught: null (the program threw `null`, which carries no message)".into()
                }
                _ => text,
            }
        };
        let g = ctx.globals();
        let sink = printed.clone();
        let print = Function::new(ctx.clone(), move |line: String| {
            let mut s = sink.borrow_mut();
            if s.len() >= out_limit {
                return;
            }
            if !s.is_empty() {
                s.push('\n');
            }
            if push_within(&mut s, &line, out_limit) {
                s.push_str(&format!("\n[output cut at {out_limit} bytes]"));
            }
        })
        .map_err(engine)?;
        let counter = calls.clone();
        let api = api.clone();
        let host = Function::new(ctx.clone(), move |op: String, arg: String| -> String {
            counter.set(counter.get() + 1);
            let reply = match serde_json::from_str::<Value>(&arg) {
                Ok(v) => match api.call(&op, &v) {
                    Ok(ok) => json!({ "ok": ok }),
                    Err(e) => json!({ "error": e }),
                },
                Err(e) => json!({ "error": format!("arguments are not JSON: {e}") }),
            };
            reply.to_string()
        })
        .map_err(engine)?;
        g.set("__toolcost_host", host).map_err(engine)?;
        g.set("__toolcost_print", print).map_err(engine)?;
        ctx.eval::<(), _>(PRELUDE).map_err(engine)?;
        let wrapped = format!("(async () => {{\n{code}\n}})()");
        let promise: Promise = ctx.eval(wrapped).catch(&ctx).map_err(describe)?;
        let value: rquickjs::Value = promise.finish().catch(&ctx).map_err(|e| {
            let d = describe(e);
            if d.contains("dead lock") || d.contains("WouldBlock") {
                "Error: the program waited on a promise that nothing can settle (there are no timers or I/O in the sandbox)".to_string()
            } else {
                d
            }
        })?;
        if timed_out() {
            // A dispatch that returned after the deadline must not let the program report
            // success.
            return Err(time_msg.clone());
        }
        // A returned value is printed, as a REPL would, within the same output limit.
        print_returned(&ctx, value, &printed, &limits)?;
        Ok(())
    })
}

/// The runtime's allocator: Rust's, with the memory limit kept here rather than in QuickJS, so
/// that the sandbox knows whether an allocation was refused (QuickJS then throws `null` when
/// it cannot allocate the error either, which a program can also throw).
struct Metered {
    used: usize,
    limit: usize,
    refused: Rc<Cell<bool>>,
}

impl Metered {
    /// A block just allocated (or null), counted.
    fn counted(&mut self, p: *mut u8) -> *mut u8 {
        if !p.is_null() {
            // SAFETY: `p` was just returned by `RustAllocator`, which keeps its size in a header.
            self.used += unsafe { RustAllocator::usable_size(p) };
        }
        p
    }

    fn room(&mut self, more: usize) -> bool {
        let ok = self.used.checked_add(more).is_some_and(|u| u <= self.limit);
        if !ok {
            self.refused.set(true);
        }
        ok
    }
}

// SAFETY: every call goes to `RustAllocator`, which keeps each block's size in a header that
// `usable_size` reads; this type only counts those sizes and refuses a block past the limit
// (a null pointer, which QuickJS handles as allocation failure).
unsafe impl Allocator for Metered {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if !self.room(size) {
            return std::ptr::null_mut();
        }
        let p = RustAllocator.alloc(size);
        self.counted(p)
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        let Some(total) = count.checked_mul(size) else {
            self.refused.set(true);
            return std::ptr::null_mut();
        };
        if !self.room(total) {
            return std::ptr::null_mut();
        }
        let p = RustAllocator.calloc(count, size);
        self.counted(p)
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        self.used = self
            .used
            .saturating_sub(unsafe { RustAllocator::usable_size(ptr) });
        unsafe { RustAllocator.dealloc(ptr) }
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        if ptr.is_null() {
            return self.alloc(new_size);
        }
        if new_size == 0 {
            unsafe { self.dealloc(ptr) };
            return std::ptr::null_mut();
        }
        let old = unsafe { RustAllocator::usable_size(ptr) };
        if new_size > old && !self.room(new_size - old) {
            return std::ptr::null_mut();
        }
        let p = unsafe { RustAllocator.realloc(ptr, new_size) };
        if !p.is_null() {
            self.used = self.used.saturating_sub(old) + unsafe { RustAllocator::usable_size(p) };
        }
        p
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        unsafe { RustAllocator::usable_size(ptr) }
    }
}

/// Push as much of `text` as fits under `limit` bytes, cut on a character boundary; whether
/// it was cut.
fn push_within(out: &mut String, text: &str, limit: usize) -> bool {
    let room = limit.saturating_sub(out.len());
    if text.len() <= room {
        out.push_str(text);
        return false;
    }
    let mut cut = room;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    out.push_str(&text[..cut]);
    true
}

/// A program's returned value, printed after its output as JSON within the output limit.
fn print_returned<'js>(
    ctx: &rquickjs::Ctx<'js>,
    value: rquickjs::Value<'js>,
    printed: &RefCell<String>,
    limits: &Limits,
) -> std::result::Result<(), String> {
    if value.is_undefined() {
        return Ok(());
    }
    let out_limit = limits.output_bytes;
    let shown: Option<String> = match ctx.json_stringify(value) {
        Ok(s) => s.and_then(|s| s.to_string().ok()),
        Err(_) => {
            // What JSON.stringify threw: a cycle and a BigInt are TypeErrors that say so.
            let why = ctx
                .catch()
                .into_exception()
                .and_then(|x| x.message())
                .unwrap_or_default();
            let lower = why.to_ascii_lowercase();
            return Err(if lower.contains("circular") || lower.contains("cycle") {
                "Error: the program's returned value refers to itself (a cycle), so it cannot be written as JSON; return a copy without the cycle".to_string()
            } else if lower.contains("bigint") {
                "Error: the program's returned value holds a BigInt, which JSON cannot write; return it as a string (String(n)) or a Number".to_string()
            } else if lower.contains("memory") || why.is_empty() {
                format!(
                    "Error: the program's returned value could not be written out within the sandbox's {} MB of memory",
                    limits.memory_bytes >> 20
                )
            } else {
                format!("Error: the program's returned value cannot be written as JSON: {why}")
            });
        }
    };
    if let Some(s) = shown {
        let mut p = printed.borrow_mut();
        if !p.is_empty() {
            p.push('\n');
        }
        if push_within(&mut p, &s, out_limit) {
            p.push_str(&format!(
                "\n[returned value cut: {} bytes, output is kept to {out_limit}]",
                s.len()
            ));
        }
    }
    Ok(())
}

/// A thrown value as a reader wants it: a string as it is, anything else as JSON (cut at
/// 1,000 bytes), never an engine's debug form with heap addresses.
fn shown(v: &rquickjs::Value<'_>) -> String {
    let ctx = v.ctx();
    if let Some(s) = v.as_string().and_then(|s| s.to_string().ok()) {
        return s;
    }
    if v.is_null() {
        return "null".into();
    }
    if v.is_undefined() {
        return "undefined".into();
    }
    let json = ctx
        .json_stringify(v.clone())
        .ok()
        .flatten()
        .and_then(|s| s.to_string().ok());
    match json {
        Some(mut j) => {
            if j.len() > 1_000 {
                let mut cut = 1_000;
                while !j.is_char_boundary(cut) {
                    cut -= 1;
                }
                j.truncate(cut);
                j.push_str("...");
            }
            j
        }
        None => format!("a thrown {}", v.type_name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo;
    impl Api for Echo {
        fn call(&self, op: &str, arg: &Value) -> std::result::Result<Value, String> {
            match op {
                "dispatch" if arg["key"] == "FAIL" => Err("refused: unknown key FAIL".into()),
                _ => Ok(json!({ "op": op, "arg": arg })),
            }
        }
    }

    fn quick() -> Limits {
        Limits {
            time: Duration::from_millis(500),
            ..Limits::default()
        }
    }

    #[test]
    fn prints_and_calls_the_api() {
        let o = run(
            "let t = 0; for (let i = 0; i < 3; i++) { const r = await dispatch('SUM', {i}); t += r.arg.args.i; } console.log('total', t);",
            Rc::new(Echo),
            quick(),
        );
        assert_eq!(o.error, None);
        assert_eq!(o.printed, "total 3");
        assert_eq!(o.api_calls, 3);
    }

    #[test]
    fn a_refused_call_throws_in_the_program() {
        let o = run(
            "try { await dispatch('FAIL'); } catch (e) { console.log('caught', e.message); }",
            Rc::new(Echo),
            quick(),
        );
        assert_eq!(o.printed, "caught refused: unknown key FAIL");
        let o = run("await dispatch('FAIL');", Rc::new(Echo), quick());
        assert_eq!(o.error.as_deref(), Some("Error: refused: unknown key FAIL"));
    }

    #[test]
    fn an_endless_loop_stops_at_the_time_limit() {
        let o = run(
            "console.log('before'); while (true) {}",
            Rc::new(Echo),
            quick(),
        );
        assert!(o.error.as_deref().unwrap().contains("time limit"), "{o:?}");
        assert_eq!(o.printed, "before");
        assert!(o.wall_ms < 5_000.0);
    }

    #[test]
    fn there_is_no_filesystem_or_network() {
        let probe = "console.log([typeof require, typeof fetch, typeof XMLHttpRequest, typeof std, typeof os, typeof process, typeof setTimeout, typeof WebSocket].join(','));";
        let o = run(probe, Rc::new(Echo), quick());
        assert_eq!(o.error, None, "{o:?}");
        assert_eq!(
            o.printed,
            "undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined"
        );
        for attempt in [
            "const fs = await import('fs'); console.log(fs.readFileSync('/etc/passwd'));",
            "const os = await import('os'); console.log(os.exec(['ls']));",
            "const m = await import('http://127.0.0.1:1/x.js'); console.log(m);",
        ] {
            let o = run(attempt, Rc::new(Echo), quick());
            assert!(o.error.is_some(), "{attempt} ran: {o:?}");
            assert_eq!(o.printed, "", "{attempt}");
        }
    }

    #[test]
    fn memory_is_capped() {
        let limits = Limits {
            memory_bytes: 16 << 20,
            ..quick()
        };
        let o = run(
            "const a = []; while (true) a.push('x'.repeat(1 << 20) + a.length);",
            Rc::new(Echo),
            limits,
        );
        let e = o.error.expect("the program cannot finish");
        assert!(e.contains("16 MB of memory"), "{e}");
    }

    /// What went wrong is said as it happened: a thrown `null` is not running out of memory
    /// (many small objects exhaust it too, where QuickJS itself throws `null`), and a value
    /// JSON cannot write is not "too large".
    #[test]
    fn each_failure_says_what_happened() {
        let limits = Limits {
            memory_bytes: 16 << 20,
            ..quick()
        };
        for (code, want) in [
            ("throw null;", "the program threw `null`"),
            (
                "try { throw null } catch (e) { throw e }",
                "the program threw `null`",
            ),
            (
                "const a = []; while (true) a.push({n: a.length});",
                "16 MB of memory",
            ),
            (
                "const a = []; while (true) a.push('x'.repeat(1 << 20) + a.length);",
                "16 MB of memory",
            ),
            (
                "throw new Error('out of memory, said the program');",
                "out of memory, said the program",
            ),
            (
                "const o = {}; o.self = o; return o;",
                "refers to itself (a cycle)",
            ),
            ("return {n: 10n};", "holds a BigInt"),
        ] {
            let o = run(code, Rc::new(Echo), limits);
            let e = o.error.unwrap_or_default();
            assert!(e.contains(want), "{code}: {e}");
        }
        // The limit is the sandbox's: a program well under it runs.
        let o = run(
            "const a = []; for (let i = 0; i < 8; i++) a.push('x'.repeat(1 << 20)); return a.length;",
            Rc::new(Echo),
            limits,
        );
        assert_eq!(o.error, None);
        assert_eq!(o.printed, "8");
    }

    #[test]
    fn a_never_settled_promise_is_an_error_not_a_hang() {
        let o = run("await new Promise(() => {});", Rc::new(Echo), quick());
        assert!(
            o.error.as_deref().unwrap().contains("nothing can settle"),
            "{o:?}"
        );
    }

    #[test]
    fn a_returned_value_is_printed() {
        let o = run("return {a: 1};", Rc::new(Echo), quick());
        assert_eq!(o.printed, "{\"a\":1}");
    }
}
