//! The command line as a user meets it: outputs that parse back, and bad input that gets a
//! one-line error, exit status 2 and no partial file.

mod common;

use assert_cmd::Command;
use predicates::prelude::*;
use std::path::Path;
use toolcost::measure::MeasureRow;

fn toolcost() -> Command {
    Command::cargo_bin("toolcost").unwrap()
}

/// Exit 2, one line on stderr naming the problem, and nothing on stdout.
fn fails_cleanly(args: &[&str], needle: &str) {
    let out = toolcost().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.to_lowercase().contains(&needle.to_lowercase()),
        "{args:?}: {err}"
    );
    assert!(
        err.lines().next().unwrap().starts_with("toolcost: error:") || err.starts_with("error:"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
}

#[test]
fn measure_json_reads_back_into_the_documented_row_type() {
    let out = toolcost()
        .args(["measure", "--rows", "200", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let rows: Vec<MeasureRow> = serde_json::from_slice(&out.stdout).unwrap();
    // `all` is every surface the default client's format (Anthropic Messages) has.
    let format = toolcost::client::Client::named("claude-cli")
        .unwrap()
        .format;
    // By default only the model's own tokenizer counts: no o200k or cl100k
    // row priced on a Claude card.
    assert_eq!(
        rows.len(),
        toolcost::surface::SurfaceKind::all_for(format).len()
    );
    let per_row = rows.iter().find(|r| r.surface == "per-row-mcp").unwrap();
    assert!(
        rows.iter().all(|r| r.tokenizer.starts_with("claude")),
        "{rows:?}"
    );
    assert_eq!((per_row.rows, per_row.definitions_in_context), (200, 200));
    assert!(per_row.marginal_tokens_per_definition.unwrap() > 50.0);
    for r in &rows {
        assert!(r.label.starts_with("estimated:claude"), "{r:?}");
        assert!(r.cost_label.starts_with("derived from "), "{r:?}");
    }
}

#[test]
fn measure_csv_and_markdown_have_every_field() {
    let csv = toolcost()
        .args([
            "measure",
            "--rows",
            "20",
            "--csv",
            "--surface",
            "small-mcp",
            "--tokenizer",
            "o200k",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(csv.stdout).unwrap();
    let header = text.lines().next().unwrap();
    for f in [
        "surface",
        "rows",
        "definitions_in_context",
        "wire_bytes",
        "input_tokens",
        "marginal_tokens_per_definition",
        "cost_usd",
        "label",
        "tokenizer",
    ] {
        assert!(
            header.split(',').any(|h| h == f),
            "{f} missing from {header}"
        );
    }
    assert_eq!(text.lines().count(), 2);
    toolcost()
        .args(["measure", "--rows", "20", "--md"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("| surface |"));
}

#[test]
fn openai_over_128_tools_warns() {
    toolcost()
        .args([
            "measure",
            "--rows",
            "200",
            "--client",
            "openai-agent",
            "--surface",
            "per-row-mcp",
            "--tokenizer",
            "o200k",
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains("exceed OpenAI's limit of 128"));
}

#[test]
fn generate_to_sqlite_and_jsonl_measure_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cat.sqlite");
    let jl = dir.path().join("cat.jsonl");
    toolcost()
        .args(["generate", "--rows", "120", "-o"])
        .arg(&db)
        .assert()
        .success();
    toolcost()
        .args(["generate", "--rows", "120", "-o"])
        .arg(&jl)
        .assert()
        .success();
    let stdout = toolcost()
        .args(["generate", "--rows", "120"])
        .output()
        .unwrap()
        .stdout;
    assert_eq!(
        stdout,
        std::fs::read(&jl).unwrap(),
        "stdout and file bytes differ"
    );
    let measure = |p: &Path| {
        toolcost()
            .args([
                "measure",
                "--json",
                "--surface",
                "per-row-mcp",
                "--catalogue",
            ])
            .arg(p)
            .output()
            .unwrap()
            .stdout
    };
    let a: Vec<MeasureRow> = serde_json::from_slice(&measure(&db)).unwrap();
    let b: Vec<MeasureRow> = serde_json::from_slice(&measure(&jl)).unwrap();
    assert_eq!(a, b);
    assert_eq!(a[0].rows, 120);
}

#[test]
fn a_real_capture_measures_with_its_bytes() {
    let path = common::shared().join("real-mcp/modelcontextprotocol__server-github.tools.json");
    let out = toolcost()
        .args([
            "measure",
            "--json",
            "--surface",
            "per-row-mcp",
            "--tokenizer",
            "o200k",
            "--catalogue",
        ])
        .arg(&path)
        .output()
        .unwrap();
    let rows: Vec<MeasureRow> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows[0].rows, 26);
}

#[test]
fn lint_reports_and_fixes() {
    let gitlab = common::shared().join("real-mcp/modelcontextprotocol__server-gitlab.tools.json");
    toolcost()
        .arg("lint")
        .arg(&gitlab)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "(root): root has no `type: object`",
        ));
    let dir = tempfile::tempdir().unwrap();
    let fixed = dir.path().join("fixed.json");
    toolcost()
        .arg("lint")
        .arg(&gitlab)
        .arg("--fix")
        .arg("-o")
        .arg(&fixed)
        .assert()
        .success();
    toolcost()
        .arg("lint")
        .arg(&fixed)
        .assert()
        .success()
        .stdout(predicate::str::contains("0 of 9 tools"));
}

/// `lint --gemini` names the tools Gemini's OpenAPI-subset `parameters` refuses, and why.
#[test]
fn lint_gemini_names_what_the_subset_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tools.json");
    std::fs::write(
        &file,
        serde_json::json!({"tools": [
            {"name": "fine", "description": "d", "inputSchema": {"type": "object", "properties": {"a": {"type": "string", "enum": ["x"]}}}},
            {"name": "nullable", "description": "d", "inputSchema": {"type": "object", "properties": {"a": {"type": ["string", "null"]}}}},
            {"name": "refs", "description": "d", "inputSchema": {"type": "object", "$defs": {"A": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/A"}}}},
            {"name": "9lives", "description": "d", "inputSchema": {"type": "object"}}
        ]})
        .to_string(),
    )
    .unwrap();
    let out = toolcost()
        .args(["lint", "--gemini"])
        .arg(&file)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("3 of 4 tools"), "{text}");
    assert!(
        text.contains("nullable: parameters.properties.a.type: a list of types"),
        "{text}"
    );
    assert!(text.contains("refs: parameters: `$defs`"), "{text}");
    assert!(text.contains("9lives: the name"), "{text}");
    assert!(!text.contains("fine:"), "{text}");
}

/// `lint` names where a normal form cannot keep what a schema accepts, and `lint --fix`
/// writes the same list into the tool's `_meta`.
#[test]
fn lint_names_what_the_normal_form_changes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.tools.json");
    std::fs::write(
        &file,
        r##"{"tools": [{"name": "when", "description": "d", "inputSchema": {"type": "object",
            "$defs": {"p": {"type": "object", "properties": {"id": {"type": "string"}}}},
            "properties": {"at": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                           "page": {"$ref": "#/$defs/p", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}}}]}"##,
    )
    .unwrap();
    toolcost()
        .arg("lint")
        .arg(&file)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "/properties/at/anyOf: `anyOf` with `null`",
        ))
        .stdout(predicate::str::contains("(narrows)"));
    let fixed = dir.path().join("fixed.json");
    toolcost()
        .args(["lint", "--fix", "-o"])
        .arg(&fixed)
        .arg(&file)
        .assert()
        .success();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&fixed).unwrap()).unwrap();
    let tool = &v["tools"][0];
    let changes = tool["_meta"]["toolcost/normalised"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["pointer"], "/properties/at/anyOf");
    // The `$ref`'s sibling properties are kept beside its target's.
    let page = &tool["inputSchema"]["properties"]["page"];
    assert_eq!(page["properties"]["id"]["type"], "string");
    assert_eq!(page["properties"]["n"]["type"], "integer");
    assert_eq!(page["required"], serde_json::json!(["n"]));
}

#[test]
fn bad_inputs_get_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let malformed = dir.path().join("bad.jsonl");
    std::fs::write(
        &malformed,
        "{\"key\": \"A\", \"type\": \"fn\"}\n{not json\n",
    )
    .unwrap();
    let unknown_key = dir.path().join("unknown.jsonl");
    std::fs::write(
        &unknown_key,
        "{\"key\": \"A\", \"type\": \"fn\", \"colour\": \"red\"}\n",
    )
    .unwrap();
    let not_tools = dir.path().join("resources.json");
    std::fs::write(
        &not_tools,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resources\":[]}}",
    )
    .unwrap();
    let binary = dir.path().join("blob.bin");
    std::fs::write(&binary, [0xff, 0xfe, 0x00, 0x01]).unwrap();
    let m = |p: &Path| {
        vec![
            "measure".to_string(),
            "--catalogue".into(),
            p.display().to_string(),
        ]
    };
    let run = |args: Vec<String>, needle: &str| {
        fails_cleanly(&args.iter().map(String::as_str).collect::<Vec<_>>(), needle)
    };
    run(m(&malformed), "line 2");
    run(m(&unknown_key), "colour");
    run(m(&not_tools), "tools/list");
    run(m(&binary), "not UTF-8");
    run(m(&dir.path().join("missing.jsonl")), "missing.jsonl");
    fails_cleanly(
        &["measure", "--rows", "10", "--surface", "telepathy"],
        "unknown surface `telepathy`",
    );
    fails_cleanly(
        &["measure", "--rows", "10", "--client", "emacs"],
        "unknown client `emacs`",
    );
    fails_cleanly(
        &["measure", "--rows", "10", "--profile", "huge"],
        "unknown profile `huge`",
    );
    fails_cleanly(
        &["measure", "--rows", "10", "--tokenizer", "p50k"],
        "unknown tokenizer `p50k`",
    );
    fails_cleanly(
        &["measure", "--rows", "10", "--model", "gpt-9"],
        "unknown model `gpt-9`",
    );
    fails_cleanly(&["measure", "--rows", "ten"], "invalid value 'ten'");
    fails_cleanly(&["generate", "--rows", "2000000"], "over the limit");
}

#[test]
fn failed_runs_leave_no_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    toolcost()
        .args(["measure", "--rows", "10", "--surface", "nope", "-o"])
        .arg(&out)
        .assert()
        .code(2);
    toolcost()
        .args(["generate", "--rows", "10", "--profile", "nope", "-o"])
        .arg(&out)
        .assert()
        .code(2);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn help_explains_each_command() {
    toolcost()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("evidence label"));
    for cmd in ["generate", "lint", "measure", "reproduce"] {
        toolcost().args([cmd, "--help"]).assert().success();
    }
}

/// `prices update` refreshes the LiteLLM snapshot from a newer table, keeping the whole table
/// and saying which figures moved for the models the cards and reports use; a table without
/// one of their entries, or one that is not a table, is refused and writes nothing.
#[test]
fn prices_update_refreshes_the_snapshot_and_refuses_a_table_missing_a_card() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let current: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("fixtures/litellm-prices.json")).unwrap())
            .unwrap();
    let mut table = current.as_object().unwrap().clone();
    table.remove("toolcost_snapshot");
    table["gpt-4o"]["input_cost_per_token"] = serde_json::json!(3e-06);
    table.insert(
        "some-other-model".into(),
        serde_json::json!({"input_cost_per_token": 1e-06}),
    );
    let dir = tempfile::tempdir().unwrap();
    let from = dir.path().join("table.json");
    std::fs::write(&from, serde_json::to_vec(&table).unwrap()).unwrap();
    let out = dir.path().join("snapshot.json");
    let run = toolcost()
        .args([
            "prices",
            "update",
            "--litellm-version",
            "9.9.9",
            "--date",
            "2027-01-01",
        ])
        .arg("--from")
        .arg(&from)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    // gpt-4o's cache write is priced as its input, so it moves with it.
    assert_eq!(
        stdout.trim(),
        "gpt-4o cache_write: 2.5 -> 3\ngpt-4o input: 2.5 -> 3",
        "{stdout}"
    );
    let snap: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(snap["toolcost_snapshot"]["date"], "2027-01-01");
    assert_eq!(snap["toolcost_snapshot"]["litellm_version"], "9.9.9");
    assert!(
        snap.get("some-other-model").is_some(),
        "the whole table is kept"
    );
    assert_eq!(
        snap.as_object().unwrap().len(),
        current.as_object().unwrap().len() + 1
    );

    // A price moved 3,000x reads as a unit slip: refused with each move named, and written
    // only with --accept-moves.
    let mut slipped = table.clone();
    slipped["gpt-4o"]["input_cost_per_token"] = serde_json::json!(7.5e-03);
    std::fs::write(&from, serde_json::to_vec(&slipped).unwrap()).unwrap();
    let slip = dir.path().join("slip.json");
    let slip_args = [
        "prices".to_string(),
        "update".into(),
        "--litellm-version".into(),
        "1".into(),
        "--from".into(),
        from.display().to_string(),
        "--out".into(),
        slip.display().to_string(),
    ];
    fails_cleanly(
        &slip_args.iter().map(String::as_str).collect::<Vec<_>>(),
        "gpt-4o input: 2.5 -> 7500",
    );
    assert!(!slip.exists());
    toolcost()
        .args(&slip_args)
        .arg("--accept-moves")
        .assert()
        .success();
    assert!(slip.exists());

    table.remove("gpt-4o");
    std::fs::write(&from, serde_json::to_vec(&table).unwrap()).unwrap();
    let refused = dir.path().join("refused.json");
    let args = [
        "prices".to_string(),
        "update".into(),
        "--litellm-version".into(),
        "1".into(),
        "--from".into(),
        from.display().to_string(),
        "--out".into(),
        refused.display().to_string(),
    ];
    fails_cleanly(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        "gpt-4o (no entry)",
    );
    assert!(!refused.exists());
    std::fs::write(&from, b"[1, 2]").unwrap();
    fails_cleanly(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        "not a JSON object",
    );
    let bad_date = [&args[..], &["--date".to_string(), "2027-13-01".to_string()]].concat();
    fails_cleanly(
        &bad_date.iter().map(String::as_str).collect::<Vec<_>>(),
        "not a YYYY-MM-DD",
    );
}

/// Every card's prices and window come from the committed LiteLLM snapshot (by hand only where
/// the entry lacks a figure), and every cost label names the snapshot's date.
#[test]
fn price_cards_read_the_litellm_snapshot_and_costs_name_its_date() {
    use toolcost::pricing::{litellm::Snapshot, PriceCard};
    let snap = Snapshot::embedded();
    for c in PriceCard::all() {
        let key = c
            .litellm
            .as_deref()
            .expect("every card names its LiteLLM entry");
        let e = snap.entry(key).unwrap();
        assert_eq!(e.input, Some(c.input), "{}", c.id);
        assert_eq!(e.output, Some(c.output), "{}", c.id);
        assert_eq!(e.cached_input, Some(c.cached_input), "{}", c.id);
        assert_eq!(e.context_window, Some(c.context_window), "{}", c.id);
        if let Some(w) = e.cache_write {
            assert_eq!(w, c.cache_write, "{}", c.id);
        } else {
            assert!(
                c.source.contains("by hand (cache_write)"),
                "{}: {}",
                c.id,
                c.source
            );
        }
        assert_eq!(c.date, snap.date);
    }
    let out = toolcost()
        .args(["measure", "--rows", "10", "--json"])
        .output()
        .unwrap();
    let rows: Vec<MeasureRow> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(rows
        .iter()
        .all(|r| r.cost_label.contains(&format!("({})", snap.date))));
}

/// `prices update` checks the whole snapshot against every card before it writes anything:
/// a card's entry that lost its prices, turned all zero, got a 1-token window, a cache write
/// cheaper than its read, or stopped being a chat model is refused, and a move of a tier's or a
/// long cache write's price alone is reported.
#[test]
fn prices_update_refuses_a_snapshot_the_cards_cannot_use_and_reports_every_move() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let current: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("fixtures/litellm-prices.json")).unwrap())
            .unwrap();
    let mut base = current.as_object().unwrap().clone();
    base.remove("toolcost_snapshot");
    let dir = tempfile::tempdir().unwrap();
    let from = dir.path().join("table.json");
    let out = dir.path().join("snapshot.json");
    let run = |table: &serde_json::Map<String, serde_json::Value>| {
        std::fs::write(&from, serde_json::to_vec(table).unwrap()).unwrap();
        let _ = std::fs::remove_file(&out);
        toolcost()
            .args([
                "prices",
                "update",
                "--litellm-version",
                "1",
                "--date",
                "2027-01-01",
            ])
            .arg("--from")
            .arg(&from)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap()
    };
    type Edit = fn(&mut serde_json::Map<String, serde_json::Value>);
    let refusals: [(Edit, &str); 5] = [
        (
            |t| {
                for f in [
                    "input_cost_per_token",
                    "output_cost_per_token",
                    "cache_read_input_token_cost",
                    "cache_creation_input_token_cost",
                    "cache_creation_input_token_cost_above_1hr",
                ] {
                    t["claude-opus-5"][f] = serde_json::json!(0.0);
                }
            },
            "every price is zero",
        ),
        (
            |t| t["claude-opus-5"]["max_input_tokens"] = serde_json::json!(1),
            "context window of 1 tokens",
        ),
        (
            |t| t["claude-opus-5"]["cache_creation_input_token_cost"] = serde_json::json!(1e-9),
            "costs less than a cache read",
        ),
        (
            |t| t["claude-opus-5"]["mode"] = serde_json::json!("embedding"),
            "no longer a chat model",
        ),
        (
            |t| {
                t["claude-opus-5"]
                    .as_object_mut()
                    .unwrap()
                    .remove("input_cost_per_token");
            },
            "claude-opus-5",
        ),
    ];
    for (edit, says) in refusals {
        let mut t = base.clone();
        edit(&mut t);
        let r = run(&t);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{says}: {err}");
        assert!(err.contains(says), "{says}: {err}");
        assert!(!out.exists(), "{says}: nothing written");
    }
    // A tier's price alone moving (x10) is reported.
    // gpt-5.6 is the default model of the Responses client profile, so its card is built.
    {
        let k = "gpt-5.6".to_string();
        let mut t = base.clone();
        let field = t[&k]
            .as_object()
            .unwrap()
            .keys()
            .find(|f| f.starts_with("input_cost_per_token_above_"))
            .cloned()
            .unwrap();
        let v = t[&k][&field].as_f64().unwrap();
        t[&k][&field] = serde_json::json!(v * 10.0);
        let r = run(&t);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let stdout = String::from_utf8_lossy(&r.stdout);
        assert!(stdout.contains("input_above_"), "{k} {field}: {stdout}");
    }
    // A long cache write alone moving (x9, within the bound on moves) is reported.
    let mut t = base.clone();
    let f = "cache_creation_input_token_cost_above_1hr";
    let v = t["claude-opus-5"][f].as_f64().expect("the 1h write price");
    t["claude-opus-5"][f] = serde_json::json!(v * 9.0);
    let r = run(&t);
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert!(stdout.contains("claude-opus-5 cache_write_1h"), "{stdout}");
}

/// Terminal output fits `COLUMNS`: every line of each command's human output (stdout and
/// stderr) at 80 and at 100 columns; tables too wide become cut columns or `field: value`
/// blocks, prose is wrapped.
#[test]
fn terminal_output_fits_the_columns() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = std::env::var_os("TOOLCOST_SHARED")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("../shared"));
    let capture = shared.join("real-mcp/cloudflare__mcp-server-cloudflare.tools.json");
    let capture = capture.to_str().unwrap().to_string();
    let commands: Vec<Vec<&str>> = vec![
        vec!["reproduce"],
        vec!["measure", "--rows", "50", "--surface", "all"],
        vec!["weigh", "--file", &capture],
        vec!["lint", &capture],
        vec!["prices", "show", "claude-sonnet-5-5"],
        vec!["prices", "list"],
        vec!["check"],
        vec!["claude-counts"],
    ];
    for columns in [80, 100] {
        for args in &commands {
            let out = toolcost()
                .current_dir(root)
                .env("COLUMNS", columns.to_string())
                .env("TOOLCOST_SHARED", &shared)
                .args(args)
                .output()
                .unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            for line in text.lines() {
                assert!(
                    line.chars().count() <= columns,
                    "{args:?} at {columns}: {} characters: {line}",
                    line.chars().count()
                );
            }
        }
    }
}

/// `prices list` has a header and each model's prices, as JSON too; `--unpriced` lists the
/// table's chat models that toolcost counts but nothing prices, each of which `count` answers
/// for and `prices show` calls unpriced.
#[test]
fn prices_list_shows_prices_and_the_unpriced() {
    let out = toolcost().args(["prices", "list"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let header = text.lines().next().unwrap();
    for column in ["model", "source", "provider", "input", "output", "window"] {
        assert!(header.contains(column), "{header}");
    }
    let out = toolcost()
        .args(["prices", "list", "--json"])
        .output()
        .unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let gpt = rows.iter().find(|r| r["model"] == "gpt-4o").unwrap();
    assert_eq!(gpt["input"], 2.5);
    assert!(rows
        .iter()
        .all(|r| r["input"].is_number() && r["output"].is_number()));
    let out = toolcost()
        .args(["prices", "list", "--unpriced", "--json"])
        .output()
        .unwrap();
    let unpriced: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!unpriced.is_empty());
    assert!(unpriced
        .iter()
        .all(|r| r["note"].as_str().unwrap().starts_with("unpriced: ")));
    let no_price = unpriced
        .iter()
        .filter(|r| r["input"].is_null() || r["output"].is_null());
    for r in no_price.take(3) {
        let model = r["model"].as_str().unwrap();
        let shown = toolcost().args(["prices", "show", model]).output().unwrap();
        let shown = String::from_utf8_lossy(&shown.stdout);
        assert!(shown.contains("unpriced"), "{model}: {shown}");
        toolcost()
            .args(["count", "--model", model])
            .write_stdin("hello world")
            .assert()
            .success();
    }
}
