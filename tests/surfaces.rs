//! The six surfaces: what each request carries, how it grows with N, and the name list's
//! enabling rules and prefix stability.

mod common;

use serde_json::Value;
use toolcost::billing::{billed_input, RenderModel};
use toolcost::catalogue::Catalogue;
use toolcost::client::Client;
use toolcost::surface::name_list::{CallCheck, Failure, Session, MAX_EXPAND};
use toolcost::surface::{Context, SurfaceKind, DEFAULT_ENDPOINT};
use toolcost::tokens::Tokenizer;
use toolcost::wire;

fn ctx<'a>(cat: &'a Catalogue, client: &'a Client, turn: &'a str) -> Context<'a> {
    Context {
        catalogue: cat,
        client,
        turn,
        endpoint: DEFAULT_ENDPOINT,
    }
}

fn wire_bytes(surface: SurfaceKind, n: usize, client: &Client) -> usize {
    let cat = common::seed_catalogue(n);
    surface
        .build(&ctx(&cat, client, "what time is it"))
        .request
        .wire_bytes()
}

#[test]
fn per_row_bytes_grow_linearly_while_flat_surfaces_stay_flat() {
    let client = Client::named("claude-cli").unwrap();
    let ns = [0usize, 500, 1000, 2000];
    let per_row: Vec<f64> = ns
        .iter()
        .map(|&n| wire_bytes(SurfaceKind::PER_ROW_MCP, n, &client) as f64)
        .collect();
    // Linear: the slope between consecutive sizes agrees within 5%.
    let slopes: Vec<f64> = per_row
        .windows(2)
        .zip(ns.windows(2))
        .map(|(b, n)| (b[1] - b[0]) / (n[1] - n[0]) as f64)
        .collect();
    for s in &slopes {
        assert!(
            (s - slopes[0]).abs() / slopes[0] < 0.05,
            "slopes {slopes:?}"
        );
        assert!(*s > 400.0, "a definition costs hundreds of bytes, got {s}");
    }
    for flat in [
        SurfaceKind::SMALL_MCP,
        SurfaceKind::CODE_MODE,
        SurfaceKind::PROTOCOL_ONLY,
    ] {
        let sizes: Vec<usize> = ns.iter().map(|&n| wire_bytes(flat, n, &client)).collect();
        assert!(
            sizes.windows(2).all(|w| w[0] == w[1]),
            "{}: {sizes:?}",
            flat.name()
        );
    }
}

#[test]
fn per_row_renames_every_tool_and_keeps_its_schema() {
    let client = Client::named("claude-cli").unwrap();
    let cat = common::seed_catalogue(50);
    let built = SurfaceKind::PER_ROW_MCP.build(&ctx(&cat, &client, "hi"));
    let body = built.request.body_value();
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 9 + 50);
    assert_eq!(built.definitions_in_context, 50);
    assert_eq!(
        tools[9]["name"],
        format!("mcp__toolcost__{}", cat.tools[0].name)
    );
    assert_eq!(
        tools[9]["input_schema"],
        cat.tools[0].value()["inputSchema"]
    );
}

#[test]
fn deferred_definitions_are_on_the_wire_but_not_billed_until_referenced() {
    let client = Client::named("claude-cli").unwrap();
    let cat = common::seed_catalogue(300);
    let render = RenderModel::parse("anthropic:claude-4.5").unwrap();
    let deferred = SurfaceKind::parse("deferred-search").unwrap().build(&ctx(
        &cat,
        &client,
        "what time is it",
    ));
    let per_row = SurfaceKind::PER_ROW_MCP.build(&ctx(&cat, &client, "what time is it"));
    assert_eq!(deferred.definitions_on_wire, 300);
    assert!(deferred.request.wire_bytes() > per_row.request.wire_bytes());
    let body = deferred.request.body_value();
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools.iter().filter(|t| wire::is_deferred(t)).count(), 300);
    assert_eq!(tools[9]["type"], "tool_search_tool_bm25_20251119");

    let mut req = deferred.request.clone();
    let before = billed_input(&req, render, Tokenizer::O200k);
    let empty = Catalogue {
        server: "toolcost".into(),
        ..Default::default()
    };
    let base = billed_input(
        &SurfaceKind::parse("deferred-search")
            .unwrap()
            .build(&ctx(&empty, &client, "what time is it"))
            .request,
        render,
        Tokenizer::O200k,
    );
    assert_eq!(
        before.input_tokens, base.input_tokens,
        "deferred definitions must not be billed"
    );

    // A search result referencing one tool bills exactly that definition.
    req.messages_mut().push(wire::tool_call(
        wire::Format::AnthropicMessages,
        "t1",
        "tool_search_tool_bm25",
        serde_json::json!({"query": "time"}),
    ));
    let name = format!("mcp__toolcost__{}", cat.tools[0].name);
    req.messages_mut().push(wire::tool_result(
        wire::Format::AnthropicMessages,
        "t1",
        "tool",
        "",
        std::slice::from_ref(&name),
    ));
    let after = billed_input(&req, render, Tokenizer::O200k);
    assert_eq!(after.tools_billed, before.tools_billed + 1);
    assert!(after.input_tokens > before.input_tokens + 20);
}

#[test]
fn openai_deferral_keeps_name_and_description_billed() {
    let client = Client::named("openai-agent").unwrap();
    let cat = common::seed_catalogue(100);
    let render = RenderModel::parse("openai:gpt-4o").unwrap();
    let deferred = SurfaceKind::parse("deferred-search")
        .unwrap()
        .build(&ctx(&cat, &client, "hi"))
        .request;
    let full = SurfaceKind::PER_ROW_MCP
        .build(&ctx(&cat, &client, "hi"))
        .request;
    let empty = Catalogue {
        server: "toolcost".into(),
        ..Default::default()
    };
    let base = SurfaceKind::parse("deferred-search")
        .unwrap()
        .build(&ctx(&empty, &client, "hi"))
        .request;
    let t = |r| billed_input(r, render, Tokenizer::O200k).input_tokens;
    assert!(
        t(&deferred) > t(&base) + 100 * 7,
        "names and descriptions stay billed"
    );
    assert!(t(&deferred) < t(&full), "schemas are deferred");
}

#[test]
fn protocol_only_names_the_endpoint_and_sends_no_definitions() {
    let client = Client::named("claude-cli").unwrap();
    let cat = common::seed_catalogue(100);
    let built = SurfaceKind::PROTOCOL_ONLY.build(&ctx(&cat, &client, "hi"));
    assert_eq!(built.request.tools().len(), 9);
    assert!(built.request.wire().contains("?ask="));
}

fn name_list_round_two(client: &Client, cat: &Catalogue) -> (Value, Value, Session) {
    let c = ctx(cat, client, "what time is it");
    let mut session = Session::new(&c);
    let round1 = session.request(&c, Vec::new()).request;
    let target = client.tool_name("toolcost", "NOW");
    let outcome = session.enable(std::slice::from_ref(&target));
    assert_eq!(outcome.enabled, vec![target.clone()]);
    let refs = session.references(&outcome);
    let history = vec![
        wire::tool_call(
            client.format,
            "c1",
            "enable_tools",
            serde_json::json!({"names": [target]}),
        ),
        wire::tool_result(
            client.format,
            "c1",
            "tool",
            &serde_json::to_string(&outcome).unwrap(),
            &refs,
        ),
    ];
    let round2 = session.request(&c, history).request;
    (
        round1.body_value().into_owned(),
        round2.body_value().into_owned(),
        session,
    )
}

#[test]
fn enabling_a_tool_keeps_the_prefix_bytes() {
    let cat = common::seed_catalogue(200);
    // Hidden mode (Anthropic): tools and system are byte-identical, messages only grow.
    let claude = Client::named("claude-cli").unwrap();
    let (r1, r2, _) = name_list_round_two(&claude, &cat);
    let c = |v: &Value| toolcost::json::compact(v);
    assert_eq!(c(&r1["tools"]), c(&r2["tools"]));
    assert_eq!(c(&r1["system"]), c(&r2["system"]));
    assert_eq!(c(&r1["messages"][0]), c(&r2["messages"][0]));
    assert_eq!(r2["messages"].as_array().unwrap().len(), 3);
    // The expansion is billed after enabling.
    let render = RenderModel::parse("kimi").unwrap();
    let req = |b: &Value| wire::Request::new(claude.format, b.clone());
    assert_eq!(
        billed_input(&req(&r2), render, Tokenizer::O200k).tools_billed,
        billed_input(&req(&r1), render, Tokenizer::O200k).tools_billed + 1
    );

    // Append mode (OpenAI): the system message is identical; the tools array only grows at the end.
    let openai = Client::named("openai-agent").unwrap();
    let (r1, r2, _) = name_list_round_two(&openai, &cat);
    assert_eq!(c(&r1["messages"][0]), c(&r2["messages"][0]));
    let (t1, t2) = (
        r1["tools"].as_array().unwrap(),
        r2["tools"].as_array().unwrap(),
    );
    assert_eq!(t2.len(), t1.len() + 1);
    assert_eq!(
        c(&Value::Array(t1.clone())),
        c(&Value::Array(t2[..t1.len()].to_vec()))
    );
}

#[test]
fn enable_tools_takes_exact_names_and_reports_failures() {
    let client = Client::named("claude-cli").unwrap();
    let cat = common::seed_catalogue(200);
    let c = ctx(&cat, &client, "hi");
    let mut s = Session::new(&c);
    let now = client.tool_name("toolcost", "NOW");
    let mail = client.tool_name("toolcost", "EMAIL_SEND");
    s.deny(&[mail.as_str()]);
    assert_eq!(s.check_call(&now, &client.tools), CallCheck::EnableFirst);
    assert_eq!(
        s.check_call("mcp__toolcost__NO_SUCH", &client.tools),
        CallCheck::NoSuchTool
    );
    assert_eq!(s.check_call("Bash", &client.tools), CallCheck::Callable);
    let out = s.enable(&[
        now.clone(),
        now.to_lowercase(),
        mail.clone(),
        "clock".into(),
    ]);
    assert_eq!(out.enabled, vec![now.clone()]);
    assert_eq!(
        out.failed[0],
        Failure::Unknown {
            name: now.to_lowercase()
        }
    );
    assert_eq!(out.failed[1], Failure::NotPermitted { name: mail });
    assert!(
        matches!(&out.failed[2], Failure::Server { name, tools } if name == "clock" && tools.contains(&now))
    );
    assert_eq!(s.check_call(&now, &client.tools), CallCheck::Callable);
    let again = s.enable(std::slice::from_ref(&now));
    assert_eq!(again.failed, vec![Failure::AlreadyEnabled { name: now }]);
}

#[test]
fn at_server_expands_up_to_sixty_tools_up_front() {
    let client = Client::named("claude-cli").unwrap();
    let cat = common::seed_catalogue(3000);
    let biggest = {
        let mut counts = std::collections::BTreeMap::new();
        for r in &cat.rows {
            *counts.entry(r.category.clone().unwrap()).or_insert(0) += 1;
        }
        counts.into_iter().max_by_key(|(_, n)| *n).unwrap()
    };
    assert!(biggest.1 > MAX_EXPAND);
    let turn = format!("use @{} to find it", biggest.0);
    let c = ctx(&cat, &client, &turn);
    let s = Session::new(&c);
    assert_eq!(s.enabled().len(), MAX_EXPAND);
    let built = s.request(&c, Vec::new());
    let body = built.request.body_value();
    let expanded = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t.get("input_schema").is_some() && !wire::is_deferred(t))
        .count();
    assert_eq!(expanded, 9 + 1 + MAX_EXPAND);
}

#[test]
fn name_list_cuts_summaries_at_300_characters() {
    let client = Client::named("claude-cli").unwrap();
    let mut rows = toolcost::catalogue::generate::generate(
        toolcost::catalogue::profile::Profile::named("seed-2026-07").unwrap(),
        5,
        1,
    );
    rows[4].content = format!("# WHAT: {}\n", "word ".repeat(200));
    let cat = Catalogue::from_rows("t", rows);
    let built = SurfaceKind::NAME_LIST.build(&ctx(&cat, &client, "hi"));
    // The name list is in the system prompt: in one of its parts (claude-cli sends several).
    let system: String = built.request.body["system"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let line = system
        .lines()
        .find(|l| l.contains(&cat.rows[4].key))
        .unwrap();
    let summary = line.split_once(": ").unwrap().1;
    assert_eq!(summary.chars().count(), 300);
    assert!(summary.ends_with('…'));
}

/// Namespaces on the Responses API: every definition on the wire inside one namespace per
/// category, none billed in full; the model sees only the namespaces' names and descriptions,
/// so one turn bills less than loose deferred functions. Anthropic and Chat Completions have no
/// namespaces, and their limits refuse the request.
#[test]
fn namespaces_bill_only_their_headers_and_exist_only_in_responses() {
    let cat = common::seed_catalogue(300);
    let ns = SurfaceKind::DEFERRED_SEARCH_NAMESPACE;
    let client = Client::named("openai-responses-agent").unwrap();
    let built = ns.build(&ctx(&cat, &client, "hi"));
    assert_eq!(
        (built.definitions_in_context, built.definitions_on_wire),
        (0, 300)
    );
    let body = built.request.body_value();
    let tools = body["tools"].as_array().unwrap();
    let builtins = client.tools.len();
    assert_eq!(
        tools[builtins]["type"], "tool_search",
        "after the client's built-ins"
    );
    let namespaces: Vec<&Value> = tools.iter().filter(|t| wire::is_namespace(t)).collect();
    assert!(namespaces.len() > 1, "one per category");
    assert_eq!(wire::deferred_definitions(built.request.tools()).len(), 300);
    assert!(namespaces
        .iter()
        .all(|n| wire::namespace_members(n).iter().all(wire::is_deferred)));
    assert!(wire::Format::OpenaiResponses
        .spec()
        .limits(built.request.tools(), client.max_tools)
        .is_empty());
    let render = RenderModel::parse("openai:gpt-5.4").unwrap();
    let t = |r: &wire::Request| billed_input(r, render, Tokenizer::O200k).input_tokens;
    let loose = SurfaceKind::DEFERRED_SEARCH
        .build(&ctx(&cat, &client, "hi"))
        .request;
    let protocol = SurfaceKind::PROTOCOL_ONLY
        .build(&ctx(&cat, &client, "hi"))
        .request;
    assert!(
        t(&built.request) < t(&loose),
        "{} vs {}",
        t(&built.request),
        t(&loose)
    );
    assert!(t(&built.request) > t(&protocol));
    for (name, reason) in [
        ("claude-cli", "no `namespace` tool type"),
        ("openai-agent", "Chat Completions has no deferred loading"),
    ] {
        let c = Client::named(name).unwrap();
        let r = ns.build(&ctx(&cat, &c, "hi")).request;
        let limits = c.format.spec().limits(r.tools(), c.max_tools);
        assert!(
            limits.iter().any(|l| l.contains(reason)),
            "{name}: {limits:?}"
        );
    }
}
