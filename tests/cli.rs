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
    assert_eq!(rows.len(), toolcost::surface::SurfaceKind::all().len() * 3);
    let per_row = rows
        .iter()
        .find(|r| r.surface == "per-row-mcp" && r.tokenizer == "o200k")
        .unwrap();
    assert_eq!((per_row.rows, per_row.definitions_in_context), (200, 200));
    assert!(per_row.marginal_tokens_per_definition.unwrap() > 50.0);
    for r in &rows {
        let expected = if r.tokenizer == "kimi-est" {
            "calibrated:kimi-est("
        } else {
            "estimated:"
        };
        assert!(r.label.starts_with(expected), "{r:?}");
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
