//! The driver: whole tasks played round by round through the gateway against the reference
//! server, summed from log rows.

mod common;

use toolcost::driver::{self, scenario::Scenario};

/// Why a scenario file of this text is refused.
fn refused(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.toml");
    std::fs::write(&p, text).unwrap();
    Scenario::read(&p).unwrap_err().to_string()
}

fn scenario(text: &str) -> Scenario {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.toml");
    std::fs::write(&p, text).unwrap();
    Scenario::read(&p).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_play_to_completion_with_the_expected_rounds() {
    let s = scenario(
        r#"name = "t"
[catalogue]
rows = [60]
[run]
surfaces = ["per-row-mcp", "deferred-search", "deferred-search-client", "protocol-only", "small-mcp", "name-list", "code-mode"]
tasks = ["turn", "now", "orders"]
orders = 5
policies = ["serial", "parallel"]
parallel_calls = 16
"#,
    );
    let all = driver::run(&s, &|_| {}).await.unwrap();
    // turn and now make at most one call, so they play once (as serial); orders plays twice.
    assert_eq!(all.len(), 28);
    let serial: Vec<_> = all
        .iter()
        .filter(|r| r.policy == "serial")
        .cloned()
        .collect();
    let parallel: Vec<_> = all
        .iter()
        .filter(|r| r.policy == "parallel(16)")
        .cloned()
        .collect();
    assert_eq!((serial.len(), parallel.len()), (21, 7));
    // Under `parallel` every surface makes the 5 lookups in one round: parallel tool calls, one
    // shell loop, one program.
    let prounds = |surface: &str| {
        parallel
            .iter()
            .find(|r| r.surface == surface && r.task == "orders")
            .map(|r| r.rounds)
            .unwrap()
    };
    assert_eq!(prounds("per-row-mcp"), 2);
    assert_eq!(prounds("small-mcp"), 4);
    assert_eq!(prounds("protocol-only"), 4);
    assert_eq!(prounds("code-mode"), 3);
    let results = serial;
    let rounds = |surface: &str, task: &str| {
        results
            .iter()
            .find(|r| r.surface == surface && r.task == task)
            .map(|r| r.rounds)
            .unwrap()
    };
    // turn: one round everywhere. now: call + answer; search adds a round; ask/search + contract add two.
    for r in results.iter().filter(|r| r.task == "turn") {
        assert_eq!(r.rounds, 1, "{r:?}");
    }
    assert_eq!(rounds("per-row-mcp", "now"), 2);
    assert_eq!(
        rounds("deferred-search", "now"),
        2,
        "the provider searches inside the round"
    );
    assert_eq!(rounds("deferred-search-client", "now"), 3);
    assert_eq!(rounds("protocol-only", "now"), 4);
    assert_eq!(rounds("small-mcp", "now"), 4);
    assert_eq!(rounds("name-list", "now"), 3);
    // orders under `serial`: one capability call per round on every surface, a shell call or
    // a program included.
    assert_eq!(rounds("per-row-mcp", "orders"), 6);
    assert_eq!(rounds("small-mcp", "orders"), 8);
    assert_eq!(rounds("protocol-only", "orders"), 8);
    // Code mode: a search program, one program per lookup, the answer.
    assert_eq!(rounds("code-mode", "now"), 3);
    assert_eq!(rounds("code-mode", "orders"), 7);
    let answer = |surface: &str| {
        results
            .iter()
            .find(|r| r.surface == surface && r.task == "orders")
            .map(|r| r.answer.clone())
            .unwrap()
    };
    assert!(
        answer("code-mode").starts_with("The 5 orders total "),
        "{}",
        answer("code-mode")
    );
    assert_eq!(
        answer("code-mode"),
        answer("per-row-mcp"),
        "the loop ran for real"
    );
    assert_eq!(answer("code-mode"), answer("protocol-only"));
    assert!(results.iter().all(|r| r.success), "{results:#?}");
    let want = format!(
        "simulated rounds, calls and success; tokens {}; cost derived",
        toolcost::tokens::Tokenizer::ClaudeV5.label()
    );
    assert!(all.iter().all(|r| r.label == want), "{want}");

    // One turn's input tokens are the per-row surface's estimate: same catalogue, same client.
    let cat = toolcost::catalogue::Catalogue::from_rows(
        "t",
        toolcost::catalogue::generate::generate(
            toolcost::catalogue::profile::Profile::named("seed-2026-07").unwrap(),
            60,
            1,
        ),
    );
    let client = toolcost::client::Client::named("claude-cli").unwrap();
    let endpoint = "unused";
    let req = toolcost::surface::SurfaceKind::PER_ROW_MCP
        .build(&toolcost::surface::Context {
            catalogue: &cat,
            client: &client,
            turn: "what time is it",
            endpoint,
        })
        .request;
    let card = toolcost::pricing::PriceCard::named(&client.model).unwrap();
    let expected =
        toolcost::billing::billed_input(&req, card.render_model(), card.tokenizer()).input_tokens;
    let turn = results
        .iter()
        .find(|r| r.surface == "per-row-mcp" && r.task == "turn")
        .unwrap();
    assert_eq!(turn.input_tokens, expected);
    // Each task starts from a cold cache: its first round reads nothing, and its second round
    // reads the whole first one (the same request as the turn task's one round).
    let now = results
        .iter()
        .find(|r| r.surface == "per-row-mcp" && r.task == "now")
        .unwrap();
    assert_eq!(now.cached_input_tokens, turn.input_tokens, "{now:?}");
    assert_eq!(turn.cached_input_tokens, 0, "{turn:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paraphrased_search_that_misses_is_reformulated_and_counted() {
    let s = scenario(
        r#"name = "p"
[catalogue]
rows = [200]
[run]
surfaces = ["deferred-search", "protocol-only", "small-mcp", "code-mode"]
tasks = ["aig"]
phrasing = "paraphrase"
"#,
    );
    let results = driver::run(&s, &|_| {}).await.unwrap();
    let literal = driver::run(
        &scenario(
            r#"name = "l"
[catalogue]
rows = [200]
[run]
surfaces = ["deferred-search", "protocol-only", "small-mcp", "code-mode"]
tasks = ["aig"]
"#,
        ),
        &|_| {},
    )
    .await
    .unwrap();
    for (p, l) in results.iter().zip(&literal) {
        // "show my LLM proxies" shares no word with AIG_LIST: one miss, one more round, then
        // the literal words find it.
        assert_eq!((p.misses, l.misses), (1, 0), "{p:?}");
        assert_eq!(p.rounds, l.rounds + 1, "{p:?}");
        assert!(p.success && p.input_tokens > l.input_tokens, "{p:?}");
    }
}

#[test]
fn bad_scenarios_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.toml");
    for (text, needle) in [
        ("name = \"x\"\n[catalogue]\nrows = [1]\n[run]\nsurfaces = [\"per-row-mcp\"]\ntasks = [\"dance\"]\n", "unknown task `dance`"),
        ("name = \"x\"\n[catalogue]\nrows = [1]\n[run]\nsurfaces = [\"telepathy\"]\ntasks = [\"now\"]\n", "unknown surface"),
        ("name = \"x\"\n[catalogue]\nrows = [1]\ncolour = 1\n[run]\nsurfaces = []\ntasks = []\n", "unknown field `colour`"),
    ] {
        std::fs::write(&p, text).unwrap();
        let out = assert_cmd::Command::cargo_bin("toolcost").unwrap().args(["run", "--scenario"]).arg(&p).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains(needle), "{}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn committed_scenarios_parse() {
    for f in std::fs::read_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios"))
        .unwrap()
    {
        let p = f.unwrap().path();
        Scenario::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    }
}

#[test]
fn a_scenario_can_use_running_servers() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("gw.sqlite");
    let server = common::serve(
        &["serve", "--rows", "40", "--token-env", "DRIVER_TEST_TOKEN"],
        &[("DRIVER_TEST_TOKEN", "t0k3n")],
    );
    let gateway = common::serve(&["gateway", "--log", log.to_str().unwrap()], &[]);
    let p = dir.path().join("s.toml");
    std::fs::write(
        &p,
        format!(
            "name = \"external\"\n[catalogue]\nrows = [999]\n[run]\nsurfaces = [\"per-row-mcp\", \"small-mcp\"]\ntasks = [\"now\"]\n[endpoints]\nserver = \"{}\"\ntoken_env = \"DRIVER_TEST_TOKEN\"\ngateway = \"{}\"\nlog = \"{}\"\n",
            server.base,
            gateway.base,
            log.display()
        ),
    )
    .unwrap();
    let out = assert_cmd::Command::cargo_bin("toolcost")
        .unwrap()
        .args(["run", "--json", "--scenario"])
        .arg(&p)
        .env("DRIVER_TEST_TOKEN", "t0k3n")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<driver::TaskResult> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(results.len(), 2);
    assert!(
        results.iter().all(|r| r.success && r.rows == 40),
        "{results:?}"
    );
    assert_eq!(results[0].rounds, 2);
    assert_eq!(results[1].rounds, 4);
}

/// A request over the model's context window is refused by the provider (400): the task fails
/// there with the provider's reason, and the run goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_request_fails_its_task_and_the_run_goes_on() {
    let s = scenario(
        r#"name = "refused"
[catalogue]
rows = [2000]
[client]
name = "claude-cli"
model = "claude-haiku-4-5"
[run]
surfaces = ["per-row-mcp", "protocol-only"]
tasks = ["now"]
"#,
    );
    let results = driver::run(&s, &|_| {}).await.unwrap();
    let per_row = results.iter().find(|r| r.surface == "per-row-mcp").unwrap();
    assert!(!per_row.success, "{per_row:?}");
    assert!(
        per_row.answer.contains("context window") || per_row.answer.contains("too long"),
        "{per_row:?}"
    );
    assert_eq!(per_row.rounds, 1);
    let protocol = results
        .iter()
        .find(|r| r.surface == "protocol-only")
        .unwrap();
    assert!(protocol.success, "{protocol:?}");
}

/// Every client plays every task on every surface in the registry: Anthropic Messages
/// (claude-cli), Chat Completions (openai-agent) and the Responses API (openai-responses-agent).
/// A surface the provider would refuse fails its task with the provider's reason and nothing
/// else does; the same calls run for real, so each client's orders answer is the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_client_plays_every_task_on_every_surface() {
    let surfaces: Vec<String> = toolcost::surface::REGISTRY
        .iter()
        .map(|s| format!("{:?}", s.name()))
        .collect();
    let s = scenario(&format!(
        r#"name = "clients"
[catalogue]
rows = [60]
[run]
clients = ["claude-cli", "openai-agent", "openai-responses-agent"]
surfaces = [{}]
tasks = ["turn", "now", "orders"]
orders = 3
policies = ["serial", "parallel"]
"#,
        surfaces.join(", ")
    ));
    let all = driver::run(&s, &|_| {}).await.unwrap();
    let n = toolcost::surface::REGISTRY.len();
    // turn and now once each, orders under both policies, for every surface and client.
    assert_eq!(all.len(), 3 * n * 4);
    let refused = |r: &driver::TaskResult| r.answer.starts_with("refused by the provider");
    let lacking = |r: &driver::TaskResult| {
        let format = toolcost::client::Client::named(&r.client).unwrap().format;
        toolcost::surface::SurfaceKind::parse(&r.surface)
            .unwrap()
            .lacks(format)
            .is_some()
    };
    for r in all.iter().filter(|r| lacking(r)) {
        // A provider's own mechanism the client's format lacks: nothing sent, and it says so.
        assert!(r.answer.starts_with(driver::UNAVAILABLE), "{r:?}");
        assert_eq!(
            (r.success, r.rounds, r.input_tokens),
            (false, 0, 0),
            "{r:?}"
        );
    }
    for r in all.iter().filter(|r| !lacking(r)) {
        let deferring = r.surface.starts_with("deferred-search");
        let expect_refused = match r.client.as_str() {
            // Chat Completions has no deferral, tool search or namespaces.
            "openai-agent" => deferring,
            // Anthropic has deferral but no namespaces.
            "claude-cli" => r.surface == "deferred-search-namespace",
            // At N=60 allowed-tools sends 60 definitions and the built-ins: under 128.
            "openai-responses-agent" => false,
            other => panic!("unexpected client {other}"),
        };
        assert_eq!(refused(r), expect_refused, "{r:?}");
        assert_eq!(r.success, !expect_refused, "{r:?}");
        if expect_refused {
            assert_eq!(r.rounds, 1, "{r:?}");
            let reason = match r.client.as_str() {
                "openai-agent" => "Chat Completions has no deferred loading",
                _ => "no `namespace` tool type",
            };
            assert!(r.answer.contains(reason), "{r:?}");
        }
        // A refused request has no usage; every other row's tokens carry the mock's label.
        let tokens = match (expect_refused, r.client.as_str()) {
            (true, _) => "tokens none",
            (false, "claude-cli") => "estimated:claude-v5",
            (false, _) => "estimated:o200k",
        };
        assert!(r.label.contains(tokens), "{r:?}");
    }
    let find = |client: &str, surface: &str, task: &str, policy: &str| {
        all.iter()
            .find(|r| {
                r.client == client && r.surface == surface && r.task == task && r.policy == policy
            })
            .unwrap_or_else(|| panic!("{client} {surface} {task} {policy}"))
    };
    // The Responses client plays as claude-cli does: the hosted search (functions or
    // namespaces) runs inside the round, the client's search costs one more.
    for (surface, rounds) in [
        ("per-row-mcp", 2),
        ("deferred-search", 2),
        ("deferred-search-namespace", 2),
        ("deferred-search-client", 3),
        ("protocol-only", 4),
        ("small-mcp", 4),
        ("name-list", 3),
        ("code-mode", 3),
    ] {
        let r = find("openai-responses-agent", surface, "now", "serial");
        assert_eq!(r.rounds, rounds, "{r:?}");
        let c = find("claude-cli", surface, "now", "serial");
        if surface != "deferred-search-namespace" {
            assert_eq!(c.rounds, rounds, "{c:?}");
        }
    }
    // The providers' own tool changes: enabling costs a round as on the name list; a program
    // makes its call from code in round one and ends with its output in round two.
    for (client, surface, rounds) in [
        ("claude-cli", "name-list-native", 3),
        ("claude-cli", "programmatic", 2),
        ("openai-responses-agent", "allowed-tools", 3),
        ("openai-responses-agent", "additional-tools", 3),
    ] {
        let r = find(client, surface, "now", "serial");
        assert!(r.success, "{r:?}");
        assert_eq!(r.rounds, rounds, "{r:?}");
    }
    // Chat Completions has no shell here: protocol-only runs one http_request per request, in
    // parallel under the parallel policy, so the orders lookups still take one round.
    let chat = find("openai-agent", "protocol-only", "orders", "parallel(16)");
    assert_eq!(chat.rounds, 4, "{chat:?}");
    // The calls ran for real: every client that played orders got the same total.
    let answer = find("claude-cli", "per-row-mcp", "orders", "serial")
        .answer
        .clone();
    for r in all.iter().filter(|r| r.task == "orders" && r.success) {
        assert_eq!(r.answer, answer, "{r:?}");
    }
    // On the Responses API one turn bills least with namespaces (only their names and
    // descriptions), then loose deferred functions (every name and description), then per-row.
    let turn =
        |surface: &str| find("openai-responses-agent", surface, "turn", "serial").input_tokens;
    assert!(
        turn("deferred-search-namespace") < turn("deferred-search"),
        "{} vs {}",
        turn("deferred-search-namespace"),
        turn("deferred-search")
    );
    assert!(turn("deferred-search") < turn("per-row-mcp"));
}

#[test]
fn a_scenario_naming_an_unknown_client_is_refused() {
    let e = refused(
        "name = \"x\"\n[catalogue]\nrows = [1]\n[run]\nclients = [\"mistral-cli\"]\nsurfaces = [\"per-row-mcp\"]\ntasks = [\"now\"]\n",
    );
    assert!(e.contains("mistral-cli"), "{e}");
}

/// The committed round-trips report plays allowed-tools where OpenAI takes the request (N=100)
/// and says why it refuses it at N=856.
#[test]
fn the_round_trips_report_has_allowed_tools_where_it_plays() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("reports/round-trips/round-trips.csv");
    let mut rd = csv::Reader::from_path(&path).unwrap();
    let headers = rd.headers().unwrap().clone();
    let col = |n: &str| headers.iter().position(|h| h == n).unwrap();
    let (surface, rows, client, success) =
        (col("surface"), col("rows"), col("client"), col("success"));
    let played: Vec<csv::StringRecord> = rd
        .records()
        .map(Result::unwrap)
        .filter(|r| &r[surface] == "allowed-tools" && &r[client] == "openai-responses-agent")
        .collect();
    assert!(
        played
            .iter()
            .any(|r| &r[rows] == "100" && &r[success] == "true"),
        "{played:?}"
    );
    assert!(
        played
            .iter()
            .any(|r| &r[rows] == "856" && &r[success] == "false"),
        "{played:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_own_search_is_played_with_each_resolver_named() {
    let s = scenario(
        r#"name = "r"
[catalogue]
rows = [120]
[run]
surfaces = ["deferred-search-client", "protocol-only", "per-row-mcp"]
tasks = ["email"]
phrasing = "paraphrase"
client_resolvers = ["bm25-textbook", "substring", "bm25-textbook"]
"#,
    );
    let all = driver::run(&s, &|_| {}).await.unwrap();
    let by = |surface: &str| -> Vec<&str> {
        all.iter()
            .filter(|r| r.surface == surface)
            .map(|r| r.resolver.as_str())
            .collect()
    };
    // Named twice, played once; each row says which resolver decided its searches.
    assert_eq!(by("deferred-search-client"), ["bm25-textbook", "substring"]);
    assert_eq!(by("protocol-only"), ["bm25-tool"]);
    assert_eq!(by("per-row-mcp"), [""]);
    let csv = toolcost::report::render(toolcost::report::OutputFormat::Csv, &all);
    assert!(String::from_utf8_lossy(&csv).contains(",substring,"));
    // The resolver named is the one that searches: "show my LLM proxies" shares no word with
    // AIG_LIST, so the lexical default misses it once, while the semantic one finds it first
    // time (and a name and its -definitions form are one search, played once).
    if common::encoder().is_none() {
        return;
    }
    let s = scenario(
        r#"name = "r"
[catalogue]
rows = [120]
[run]
surfaces = ["deferred-search-client"]
tasks = ["aig"]
phrasing = "paraphrase"
client_resolvers = ["bm25-tool", "hybrid-definitions", "bm25-tool-definitions"]
"#,
    );
    let all = driver::run(&s, &|_| {}).await.unwrap();
    let misses: Vec<(&str, usize)> = all
        .iter()
        .map(|r| (r.resolver.as_str(), r.misses))
        .collect();
    assert_eq!(misses, [("bm25-tool", 1), ("hybrid-definitions", 0)]);
    assert_eq!(
        all[1].surface_shown(),
        "deferred-search-client (hybrid-definitions)"
    );
    assert_eq!(all[0].surface_shown(), "deferred-search-client");
}

#[test]
fn an_unknown_client_resolver_is_refused_with_the_names() {
    let err = refused(
        "name = \"x\"\n[catalogue]\nrows = [5]\n[run]\nsurfaces = [\"deferred-search-client\"]\ntasks = [\"now\"]\nclient_resolvers = [\"telepathy\"]\n",
    );
    assert!(
        err.contains("telepathy") && err.contains("bm25-textbook"),
        "{err}"
    );
    // The regex tool is a surface of its own, not a resolver of the keyword search.
    let err = refused(
        "name = \"x\"\n[catalogue]\nrows = [5]\n[run]\nsurfaces = [\"deferred-search-client\"]\ntasks = [\"now\"]\nclient_resolvers = [\"regex\"]\n",
    );
    assert!(err.contains("deferred-search-client-regex"), "{err}");
    // The flag is checked the same way.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.toml");
    std::fs::write(
        &p,
        "name = \"x\"\n[catalogue]\nrows = [5]\n[run]\nsurfaces = [\"deferred-search-client\"]\ntasks = [\"now\"]\n",
    )
    .unwrap();
    let out = assert_cmd::Command::cargo_bin("toolcost")
        .unwrap()
        .args(["run", "--client-resolver", "bm25,nope", "--scenario"])
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown resolver `nope`"));
}

/// A scenario that names a resolver needing the optional embedding model still runs where the
/// model is not installed: that resolver is left out with a note, the others play.
#[test]
fn a_resolver_whose_model_is_missing_is_left_out_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.toml");
    std::fs::write(
        &p,
        "name = \"x\"\n[catalogue]\nrows = [5]\n[run]\nsurfaces = [\"deferred-search-client\"]\ntasks = [\"now\"]\nclient_resolvers = [\"bm25-tool\", \"hybrid-definitions\"]\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args(["run", "--scenario"])
        .arg(&p)
        .arg("--csv")
        .env("TOOLCOST_MINILM", dir.path().join("no-model-here"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("leaving out the client resolver(s) hybrid-definitions"),
        "{stderr}"
    );
    assert!(stdout.contains("bm25-tool"), "{stdout}");
    assert!(!stdout.contains("hybrid-definitions"), "{stdout}");
}
