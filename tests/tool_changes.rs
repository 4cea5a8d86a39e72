//! The providers' own ways of changing tools mid-conversation, as surfaces: Anthropic's
//! `tool_addition` blocks (`name-list-native`) and programmatic tool calling (`programmatic`),
//! OpenAI Responses' `allowed_tools` choice (`allowed-tools`) and `additional_tools` items
//! (`additional-tools`). Through the gateway's mock: which prefix each keeps cached, what each
//! bills, and the provider's refusals; through the official SDKs' request types: that every
//! body they send is one the SDK takes.

mod common;

use serde_json::{json, Value};
use toolcost::catalogue::{generate::Generator, profile::Profile, Catalogue};
use toolcost::client::Client;
use toolcost::gateway::Upstream;
use toolcost::surface::name_list::{Delivery, Session};
use toolcost::surface::{Context, SurfaceKind, DEFAULT_ENDPOINT};
use toolcost::wire::{self, Format, Request};

fn catalogue(n: usize) -> Catalogue {
    let rows: Vec<_> =
        Generator::new(Profile::named("seed-2026-07").unwrap(), n, 1, false).collect();
    Catalogue::from_rows("t", rows)
}

struct Gw {
    g: common::TestGateway,
    http: reqwest::Client,
}

impl Gw {
    async fn start() -> Gw {
        Gw {
            g: common::start_gateway(Upstream::Mock, |_| {}).await,
            http: reqwest::Client::new(),
        }
    }

    /// Post a body in a cache scope at a virtual time, with the step the mock answers.
    async fn post(&self, req: &Request, scope: &str, t: f64, step: &Value) -> (u16, Value) {
        let model = req.body["model"].as_str().unwrap_or("gemini-3.5-flash");
        let path = req.format.spec().call_path(model, false);
        let r = self
            .http
            .post(format!("{}{path}", self.g.base))
            .header("x-toolcost-cache-scope", scope)
            .header("x-toolcost-clock", t.to_string())
            .header("x-toolcost-next", step.to_string())
            .body(req.wire())
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        (
            status,
            serde_json::from_str(&r.text().await.unwrap()).unwrap(),
        )
    }
}

/// (total input, cache read) of an answer in either format.
fn usage(format: Format, answer: &Value) -> (u64, u64) {
    let u = &answer["usage"];
    let g = |p: &str| u.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    match format {
        Format::AnthropicMessages => (
            g("/input_tokens") + g("/cache_creation_input_tokens") + g("/cache_read_input_tokens"),
            g("/cache_read_input_tokens"),
        ),
        Format::OpenaiResponses => (g("/input_tokens"), g("/input_tokens_details/cached_tokens")),
        Format::OpenaiChat => (
            g("/prompt_tokens"),
            g("/prompt_tokens_details/cached_tokens"),
        ),
        Format::Gemini => {
            let m = &answer["usageMetadata"];
            let g = |k: &str| m.get(k).and_then(Value::as_u64).unwrap_or(0);
            (g("promptTokenCount"), g("cachedContentTokenCount"))
        }
    }
}

/// Round one, then one `enable_tools` call that enables three tools, then round two; returns
/// (round one's total input, round two's total input, round two's cache read) and round two's
/// request.
async fn enable_three(
    g: &Gw,
    cat: &Catalogue,
    client: &Client,
    delivery: Delivery,
) -> ((u64, u64, u64), Request) {
    let ctx = Context {
        catalogue: cat,
        client,
        turn: "what time is it",
        endpoint: DEFAULT_ENDPOINT,
    };
    let mut session = Session::delivering(&ctx, delivery);
    let scope = format!("{}-{delivery:?}", client.name);
    let mark = |mut req: Request| {
        req.place_cache_marks(&client.cache_marks);
        req
    };
    let first = mark(session.request(&ctx, Vec::new()).request);
    let (status, answer) = g.post(&first, &scope, 0.0, &json!({"text": "ok"})).await;
    assert_eq!(status, 200, "{answer}");
    let (total1, _) = usage(client.format, &answer);
    let names: Vec<String> = cat
        .tools
        .iter()
        .rev()
        .take(3)
        .map(|t| client.tool_name(&cat.server, &t.name))
        .collect();
    let outcome = session.enable(&names);
    assert_eq!(outcome.enabled.len(), 3);
    let mut history = vec![wire::tool_call(
        client.format,
        "call_1",
        "enable_tools",
        json!({ "names": names }),
    )];
    history.extend(client.format.spec().result_items(vec![wire::tool_result(
        client.format,
        "call_1",
        "tool",
        &toolcost::json::compact(&outcome),
        &session.references(&outcome),
    )]));
    history.extend(session.additions(&ctx, &outcome));
    let second = mark(session.request(&ctx, history).request);
    let (status, answer) = g.post(&second, &scope, 10.0, &json!({"text": "ok"})).await;
    assert_eq!(status, 200, "{answer}");
    let (total2, read2) = usage(client.format, &answer);
    ((total1, total2, read2), second)
}

/// Anthropic: enabling three tools with `tool_addition` blocks keeps round one's cached
/// prefix whole on the round after; rewriting `tools` (append) reads nothing on that round.
/// Both bill the three definitions alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_additions_keep_the_cached_prefix_and_a_rewritten_tools_array_loses_it() {
    let g = Gw::start().await;
    let cat = catalogue(200);
    let client = Client::named("claude-cli").unwrap();
    let ((total1, native2, native_read), req) =
        enable_three(&g, &cat, &client, Delivery::ToolAddition).await;
    let ((_, append2, append_read), _) = enable_three(&g, &cat, &client, Delivery::Append).await;
    assert_eq!(
        native_read, total1,
        "name-list-native reads all of round one on the round after enabling"
    );
    assert_eq!(
        append_read, 0,
        "the rewritten tools array misses the cache on that round"
    );
    assert!(
        native2.abs_diff(append2) < 60,
        "the added definitions bill as appended ones do: {native2} against {append2}"
    );
    // The definitions arrived in the conversation, not in `tools`.
    let last = req.messages().last().unwrap();
    assert_eq!(last["role"], "system");
    assert_eq!(last["content"].as_array().unwrap().len(), 3);
    assert_eq!(last["content"][0]["type"], "tool_addition");
    assert_eq!(req.tools().len(), client.tools.len() + 1);
}

/// OpenAI Responses: the allowed subset moves in `tool_choice` and the prefix stays cached;
/// an `additional_tools` item after the result keeps it too, and bills the definitions it
/// carries about as appending them to `tools` does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_tools_and_additional_tools_keep_the_prefix_on_the_responses_api() {
    let g = Gw::start().await;
    let cat = catalogue(100);
    let client = Client::named("openai-responses-agent").unwrap();
    let ((total1, _, allowed_read), req) = enable_three(&g, &cat, &client, Delivery::Allowed).await;
    assert!(
        allowed_read * 10 >= total1 * 9,
        "allowed-tools reads round one's prefix: {allowed_read} of {total1}"
    );
    assert_eq!(req.body["tool_choice"]["type"], "allowed_tools");
    assert_eq!(
        req.body["tool_choice"]["tools"].as_array().unwrap().len(),
        client.tools.len() + 4,
        "built-ins, enable_tools and the three enabled"
    );
    let ((total1, added2, added_read), req) =
        enable_three(&g, &cat, &client, Delivery::AdditionalTools).await;
    assert!(
        added_read * 10 >= total1 * 9,
        "additional-tools reads round one's prefix: {added_read} of {total1}"
    );
    assert_eq!(req.messages().last().unwrap()["type"], "additional_tools");
    let ((_, append2, append_read), _) = enable_three(&g, &cat, &client, Delivery::Append).await;
    assert!(append_read < added_read);
    assert!(
        added2.abs_diff(append2) < 40,
        "the item's definitions bill as appended ones: {added2} against {append2}"
    );
}

/// Programmatic tool calling: the calls the code makes come back with a `caller`, their
/// results do not bill as input, and the program's output ends it before the model's words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_from_code_and_their_results_stay_out_of_the_bill() {
    let g = Gw::start().await;
    let cat = catalogue(40);
    let client = Client::named("claude-cli").unwrap();
    let ctx = Context {
        catalogue: &cat,
        client: &client,
        turn: "add up the orders",
        endpoint: DEFAULT_ENDPOINT,
    };
    let first = SurfaceKind::PROGRAMMATIC.build(&ctx).request;
    assert!(first
        .tool_refs()
        .any(|t| t.kind() == Some("code_execution_20260120")));
    let name = client.tool_name(&cat.server, &cat.tools[0].name);
    let step = json!({"program": {"code": "print(1)", "tools": [{"tool": name, "input": {}}]}});
    let (status, answer) = g.post(&first, "ptc", 0.0, &step).await;
    assert_eq!(status, 200, "{answer}");
    let content = answer["content"].as_array().unwrap();
    assert_eq!(content[0]["type"], "server_tool_use");
    let call = &content[1];
    assert_eq!(call["caller"]["type"], "code_execution_20260120");
    assert_eq!(call["caller"]["tool_id"], content[0]["id"]);
    assert_eq!(answer["stop_reason"], "tool_use");
    let big = "order 42 total 1999 cents; ".repeat(400);
    let round_two = |from_code: bool| {
        let mut req = first.clone();
        let mut blocks = content.clone();
        if !from_code {
            blocks[1].as_object_mut().unwrap().remove("caller");
        }
        req.messages_mut()
            .push(json!({"role": "assistant", "content": blocks}));
        req.messages_mut().push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call["id"], "content": big}]}));
        req
    };
    let done =
        json!({"text": "The total is 1999 cents.", "program_output": "{\"total_cents\":1999}"});
    let (status, coded) = g.post(&round_two(true), "ptc-a", 10.0, &done).await;
    assert_eq!(status, 200, "{coded}");
    let blocks = coded["content"].as_array().unwrap();
    assert_eq!(blocks[0]["type"], "code_execution_tool_result");
    assert_eq!(blocks[0]["tool_use_id"], content[0]["id"]);
    assert_eq!(blocks[1]["type"], "text");
    let (direct_status, direct) = g
        .post(
            &round_two(false),
            "ptc-b",
            10.0,
            &json!({"text": "The total is 1999 cents."}),
        )
        .await;
    assert_eq!(direct_status, 200, "{direct}");
    let (coded_in, _) = usage(Format::AnthropicMessages, &coded);
    let (direct_in, _) = usage(Format::AnthropicMessages, &direct);
    assert!(
        coded_in + 1_000 < direct_in,
        "a result that went to the code is not input: {coded_in} against {direct_in}"
    );
}

/// What the providers refuse in these mechanisms comes back as their 400, with the reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_providers_refuse_what_they_do_not_take() {
    let g = Gw::start().await;
    let anthropic = |messages: Value, tools: Value| {
        Request::new(
            Format::AnthropicMessages,
            json!({"model": "claude-sonnet-5-5", "max_tokens": 100, "tools": tools, "messages": messages}),
        )
    };
    let tool = json!({"name": "a", "description": "d", "input_schema": {"type": "object"}});
    let add = |r: Value| json!({"type": "tool_addition", "tool": r});
    let user = json!({"role": "user", "content": "hi"});
    let cases: Vec<(Request, &str)> = vec![
        (
            anthropic(
                json!([{"role": "user", "content": [add(json!({"type": "tool_reference", "name": "a"}))]}]),
                json!([tool]),
            ),
            "only in system messages",
        ),
        (
            anthropic(
                json!([{"role": "system", "content": "be brief"}, user]),
                json!([tool]),
            ),
            "must follow a user turn",
        ),
        (
            anthropic(
                json!([user, {"role": "assistant", "content": "ok"}, {"role": "system", "content": "be brief"}]),
                json!([tool]),
            ),
            "must follow a user turn",
        ),
        (
            anthropic(
                json!([user,
                    {"role": "assistant", "content": [{"type": "server_tool_use", "id": "s1", "name": "code_execution", "input": {"code": ""}},
                        {"type": "tool_use", "id": "t1", "name": "a", "input": {}, "caller": {"type": "code_execution_20260120", "tool_id": "s1"}}]},
                    {"role": "user", "content": "here you are"}]),
                json!([{"type": "code_execution_20260120", "name": "code_execution"},
                    {"name": "a", "input_schema": {"type": "object"}, "allowed_callers": ["code_execution_20260120"]}]),
            ),
            "tool_result blocks only",
        ),
        (
            anthropic(
                json!([user, {"role": "system", "content": [add(json!({"type": "tool_reference", "name": "zz"}))]}]),
                json!([tool]),
            ),
            "tool_reference_unresolved",
        ),
        (
            Request::new(
                Format::AnthropicMessages,
                json!({"model": "claude-sonnet-5-5", "max_tokens": 100, "tools": [tool],
                    "tool_choice": {"type": "allowed_tools", "mode": "auto", "tools": []}, "messages": [user]}),
            ),
            "tool_choice.type",
        ),
        (
            anthropic(
                json!([user]),
                json!([{"name": "a", "input_schema": {"type": "object"}, "allowed_callers": ["code_execution_20260120"]}]),
            ),
            "allowed_callers",
        ),
        (
            anthropic(
                json!([user,
                    {"role": "assistant", "content": [{"type": "server_tool_use", "id": "s1", "name": "code_execution", "input": {"code": ""}},
                        {"type": "tool_use", "id": "t1", "name": "a", "input": {}, "caller": {"type": "code_execution_20260120", "tool_id": "s1"}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "1"}, {"type": "text", "text": "and?"}]}]),
                json!([{"type": "code_execution_20260120", "name": "code_execution"},
                    {"name": "a", "input_schema": {"type": "object"}, "allowed_callers": ["code_execution_20260120"]}]),
            ),
            "tool_result blocks only",
        ),
        (
            Request::new(
                Format::OpenaiResponses,
                json!({"model": "gpt-5.6", "input": "hi",
                    "tools": [{"type": "function", "name": "a", "parameters": {"type": "object"}}],
                    "tool_choice": {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "b"}]}}),
            ),
            "no function named `b`",
        ),
        (
            Request::new(
                Format::OpenaiResponses,
                json!({"model": "gpt-5.6", "input": [{"role": "user", "content": "hi"},
                    {"type": "additional_tools", "role": "user", "tools": []}]}),
            ),
            "role `developer` only",
        ),
    ];
    for (req, says) in cases {
        let (status, answer) = g.post(&req, "refusals", 0.0, &json!({"text": "ok"})).await;
        assert_eq!(status, 400, "{says}: {answer}");
        let message = answer
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or_default();
        assert!(message.contains(says), "{says}: {answer}");
    }
}

/// `measure --surface all` lists the mechanisms a client's format has and no other; one named
/// for a format that lacks it is a refused row that says why.
#[test]
fn measure_all_lists_the_mechanisms_of_the_clients_format() {
    let surfaces = |client: &str, surface: &str| -> Vec<Value> {
        let out = assert_cmd::Command::cargo_bin("toolcost")
            .unwrap()
            .args(["measure", "--rows", "20", "--tokenizer", "o200k", "--json"])
            .args(["--client", client, "--surface", surface])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let names = |rows: &[Value]| -> Vec<String> {
        rows.iter()
            .map(|r| r["surface"].as_str().unwrap().to_string())
            .collect()
    };
    let claude = names(&surfaces("claude-cli", "all"));
    let responses = names(&surfaces("openai-responses-agent", "all"));
    for (list, has, lacks) in [
        (
            &claude,
            ["name-list-native", "programmatic"],
            ["allowed-tools", "additional-tools"],
        ),
        (
            &responses,
            ["allowed-tools", "additional-tools"],
            ["name-list-native", "programmatic"],
        ),
    ] {
        for s in has {
            assert!(list.iter().any(|x| x == s), "{s} in {list:?}");
        }
        for s in lacks {
            assert!(!list.iter().any(|x| x == s), "{s} not in {list:?}");
        }
    }
    let refused = surfaces("openai-agent", "programmatic");
    assert_eq!(refused[0]["refused"], true);
    assert!(refused[0]["warnings"][0]
        .as_str()
        .unwrap()
        .contains("Anthropic Messages only"));
}

/// The bodies these surfaces send are ones the official SDKs' own request types take: each is
/// validated against the anthropic SDK's beta `MessageCreateParams` or the openai SDK's
/// `ResponseCreateParams` with every TypedDict closed to unknown keys (skipped outside CI when
/// the packages are missing; `.ci/run` installs them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_sdks_take_every_body_these_surfaces_send() {
    if !common::python_sdks("anthropic, openai, pydantic") {
        return;
    }
    let g = Gw::start().await;
    let mut bodies = Vec::new();
    for (client, n, delivery, name) in [
        ("claude-cli", 60, Delivery::ToolAddition, "name-list-native"),
        (
            "openai-responses-agent",
            60,
            Delivery::Allowed,
            "allowed-tools",
        ),
        (
            "openai-responses-agent",
            60,
            Delivery::AdditionalTools,
            "additional-tools",
        ),
    ] {
        let client = Client::named(client).unwrap();
        let (_, req) = enable_three(&g, &catalogue(n), &client, delivery).await;
        bodies.push(
            json!({"name": name, "format": req.format, "body": req.body_value().into_owned()}),
        );
    }
    // A programmatic conversation: round one, the call from code, and its result.
    let cat = catalogue(30);
    let client = Client::named("claude-cli").unwrap();
    let ctx = Context {
        catalogue: &cat,
        client: &client,
        turn: "add up the orders",
        endpoint: DEFAULT_ENDPOINT,
    };
    let mut req = SurfaceKind::PROGRAMMATIC.build(&ctx).request;
    let name = client.tool_name(&cat.server, &cat.tools[0].name);
    let step = json!({"program": {"code": "print(1)", "tools": [{"tool": name, "input": {}}]}});
    let (_, answer) = g.post(&req, "sdk-ptc", 0.0, &step).await;
    let read = Format::AnthropicMessages
        .spec()
        .read_answer(&answer)
        .unwrap();
    req.messages_mut().extend(read.items);
    req.messages_mut()
        .extend(
            Format::AnthropicMessages
                .spec()
                .result_items(vec![wire::tool_result(
                    Format::AnthropicMessages,
                    &read.calls[0].id,
                    "tool",
                    "{\"total_cents\": 5}",
                    &[],
                )]),
        );
    req.place_cache_marks(&client.cache_marks);
    bodies.push(json!({"name": "programmatic", "format": req.format, "body": req.body_value().into_owned()}));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bodies.json");
    std::fs::write(&file, serde_json::to_vec(&bodies).unwrap()).unwrap();
    let v = common::python_peer("sdk_request_types.py", file.to_str().unwrap()).await;
    let results = v.as_array().unwrap();
    assert_eq!(results.len(), bodies.len(), "{v}");
    for r in results {
        assert_eq!(r["ok"], true, "{r}");
        assert_eq!(r["control_refused"], true, "the check can fail: {r}");
        assert_eq!(
            r["inner_refused"], true,
            "it checks the mechanism's own fields: {r}"
        );
    }
}
