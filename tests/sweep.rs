//! `toolcost sweep` and `toolcost report --log`: result files a machine reads back, plots that
//! exist, partial files after a kill, a summary snapshot, and the committed reference reports.

use assert_cmd::Command;
use serde_json::json;
use std::path::Path;
use toolcost::driver::TaskResult;
use toolcost::gateway::log::{self, LogRow};
use toolcost::surface::SurfaceKind;
use toolcost::sweep::frame::LogSummary;
use toolcost::sweep::SweepRow;

fn toolcost() -> Command {
    Command::cargo_bin("toolcost").unwrap()
}

fn is_png(p: &Path) -> bool {
    std::fs::read(p)
        .map(|b| b.len() > 1000 && b.starts_with(b"\x89PNG\r\n\x1a\n"))
        .unwrap_or(false)
}

fn is_svg(p: &Path) -> bool {
    std::fs::read_to_string(p)
        .map(|t| t.contains("<svg") && t.contains("</svg>") && t.contains("<text"))
        .unwrap_or(false)
}

#[test]
fn a_sweep_writes_results_tasks_and_every_plot() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    toolcost()
        .args([
            "sweep",
            "--rows",
            "0,10,100",
            "--tokenizer",
            "o200k",
            "--tasks",
            "now,orders",
            "--orders",
            "3",
            "--task-rows",
            "100",
            "--csv",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let rows: Vec<SweepRow> =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    // 3 N x every surface x 1 tokenizer x 2 clients.
    assert_eq!(rows.len(), 3 * SurfaceKind::all().len() * 2);
    for r in &rows {
        if r.surface == "protocol-only" {
            assert_eq!(r.ratio_to_protocol_only, Some(1.0));
        }
        match (r.cost_per_month_usd, r.cost_usd) {
            (Some(month), Some(turn)) => assert!((month - turn * 6000.0).abs() < 1e-9),
            (None, None) => assert!(r.refused && !r.warnings.is_empty(), "{r:?}"),
            other => panic!("month and turn costs disagree: {other:?}"),
        }
        assert_eq!(r.marginal_tokens_per_definition.is_none(), r.rows == 0);
        assert_eq!(r.label, "estimated:o200k");
    }
    let per_row = |n: usize| {
        rows.iter()
            .find(|r| r.surface == "per-row-mcp" && r.client == "claude-cli" && r.rows == n)
            .unwrap()
            .input_tokens
    };
    assert!(per_row(0) < per_row(10) && per_row(10) < per_row(100));
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), rows.len() + 1);
    let tasks: Vec<TaskResult> =
        serde_json::from_slice(&std::fs::read(out.join("tasks.json")).unwrap()).unwrap();
    // Each task on every surface with each of the grid's clients; Chat Completions refuses
    // deferral as the provider would, and that task fails with the reason.
    assert_eq!(tasks.len(), 2 * SurfaceKind::all().len() * 2);
    for t in &tasks {
        let format = toolcost::client::Client::named(&t.client).unwrap().format;
        let lacking = SurfaceKind::parse(&t.surface)
            .unwrap()
            .lacks(format)
            .is_some();
        let refused =
            lacking || t.client == "openai-agent" && t.surface.starts_with("deferred-search");
        assert_eq!(t.success, !refused, "{t:?}");
        assert_eq!(t.rows, 100);
    }
    for stem in [
        "tokens-vs-n",
        "cost-per-month",
        "deferred-bytes-vs-tokens",
        "bytes-per-definition",
        "task-rounds",
        "task-tokens",
    ] {
        assert!(is_png(&out.join(format!("{stem}.png"))), "{stem}.png");
        assert!(is_svg(&out.join(format!("{stem}.svg"))), "{stem}.svg");
    }
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("## Whole tasks") && summary.contains("## Reading"));
}

#[test]
fn the_summary_reads_the_same_every_time() {
    let dir = tempfile::tempdir().unwrap();
    toolcost()
        .args(["sweep", "--rows", "0,10,856", "--name", "snapshot", "--out"])
        .arg(dir.path())
        .assert()
        .success();
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    insta::assert_snapshot!("sweep_summary_md", summary);
}

#[test]
fn a_killed_sweep_leaves_valid_partial_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("k");
    let bin = assert_cmd::cargo::cargo_bin("toolcost");
    let mut child = std::process::Command::new(bin)
        .args([
            "sweep",
            "--rows",
            "0,10,85600",
            "--tokenizer",
            "o200k",
            "--out",
        ])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until N=10 is written, then kill while N=85,600 is being measured.
    let results = out.join("results.json");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let n10 = std::fs::read(&results)
            .ok()
            .and_then(|b| serde_json::from_slice::<Vec<SweepRow>>(&b).ok())
            .is_some_and(|v| v.iter().any(|r| r.rows == 10));
        if n10 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "N=10 never written");
        assert!(child.try_wait().unwrap().is_none(), "the sweep ended early");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let rows: Vec<SweepRow> = serde_json::from_slice(&std::fs::read(&results).unwrap()).unwrap();
    assert_eq!(
        rows.len(),
        2 * SurfaceKind::all().len() * 2,
        "N=0 and N=10, both clients"
    );
    let mut csv = csv::Reader::from_path(out.join("results.csv")).unwrap();
    assert_eq!(csv.records().count(), rows.len());
    let leftovers: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(leftovers.len() <= 1, "{leftovers:?}");
}

fn log_row(surface: &str, n: u64, task: &str, round: u64, tokens: u64) -> LogRow {
    LogRow {
        created_at: "2026-11-30T00:00:00Z".into(),
        provider_format: "anthropic-messages".into(),
        model: "kimi-k2.7-code".into(),
        path: "/v1/messages".into(),
        status: 200,
        duration_ms: 1.0,
        request_bytes: (tokens * 4) as usize,
        response_bytes: 100,
        input_tokens: tokens,
        cached_input_tokens: tokens / 2,
        output_tokens: 10,
        cost_usd: tokens as f64 * 1e-6,
        usage_source: "estimated:o200k".into(),
        metadata: json!({"scenario": "s", "surface": surface, "n": n, "task": task, "round": round, "run": format!("s-{surface}-{n}-{task}")}).to_string(),
        ..Default::default()
    }
}

#[test]
fn report_reads_any_gateway_log() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gw.sqlite");
    let conn = log::open(&db).unwrap();
    for r in [
        log_row("per-row-mcp", 856, "now", 1, 150_000),
        log_row("per-row-mcp", 856, "now", 2, 151_000),
        log_row("protocol-only", 856, "now", 1, 14_000),
        log_row("protocol-only", 856, "now", 2, 14_500),
        log_row("protocol-only", 856, "now", 3, 15_000),
    ] {
        log::insert(&conn, &r).unwrap();
    }
    // A request from a client that sent no metadata is still counted.
    log::insert(
        &conn,
        &LogRow {
            metadata: "{}".into(),
            ..log_row("x", 0, "", 1, 500)
        },
    )
    .unwrap();
    drop(conn);
    let out = dir.path().join("rep");
    toolcost()
        .args(["report", "--log"])
        .arg(&db)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let rows: Vec<LogSummary> =
        serde_json::from_slice(&std::fs::read(out.join("log.json")).unwrap()).unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(
        (
            rows[0].surface.as_str(),
            rows[0].requests,
            rows[0].input_tokens
        ),
        ("per-row-mcp", 2, 301_000)
    );
    assert_eq!(
        (
            rows[1].surface.as_str(),
            rows[1].requests,
            rows[1].input_tokens
        ),
        ("protocol-only", 3, 43_500)
    );
    assert_eq!(rows[2].surface, "model:kimi-k2.7-code");
    for stem in ["task-rounds", "task-tokens", "log-bytes-vs-tokens"] {
        assert!(is_png(&out.join(format!("{stem}.png"))), "{stem}");
        assert!(is_svg(&out.join(format!("{stem}.svg"))), "{stem}");
    }

    // A missing log, and a file that is not one: clear errors.
    toolcost()
        .args(["report", "--log"])
        .arg(dir.path().join("nope.sqlite"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no such gateway log"));
    let junk = dir.path().join("junk.sqlite");
    std::fs::write(&junk, "not a database").unwrap();
    toolcost()
        .args(["report", "--log"])
        .arg(&junk)
        .arg("--out")
        .arg(dir.path().join("junk"))
        .assert()
        .code(2);
}

#[test]
fn bad_sweeps_are_clear_errors() {
    for (args, says) in [
        (
            vec!["sweep", "--rows", "5", "--surface", "telepathy"],
            "unknown surface",
        ),
        (
            vec!["sweep", "--rows", "5", "--tokenizer", "gpt2"],
            "unknown tokenizer",
        ),
        (vec!["sweep", "--rows", "5", "--client", "nobody"], "nobody"),
        (vec!["sweep", "--rows", "2000000"], "at most a million rows"),
        (
            vec!["sweep", "--rows", "5", "--name", "../up"],
            "plain directory name",
        ),
        (
            vec!["sweep", "--rows", "0", "--tasks", "now"],
            "--task-rows",
        ),
        (
            vec!["sweep", "--rows", "5", "--tasks", "dance"],
            "unknown task",
        ),
    ] {
        toolcost()
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
    }
}

/// The committed reference reports were made by this code: regenerate and compare the
/// numbers (task wall times are the machine's and are left out). scale-10x's whole tasks at
/// N=8,560 take minutes in a debug build, so the default run compares its measured grid only;
/// TOOLCOST_FULL=1 compares everything.
#[test]
fn committed_reference_reports_regenerate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let full = std::env::var_os("TOOLCOST_FULL").is_some();
    for name in ["reproduce-seed", "scale-10x"] {
        let dir = tempfile::tempdir().unwrap();
        let grid_only = name == "scale-10x" && !full;
        let mut cmd = toolcost();
        cmd.current_dir(root)
            .args(["sweep", "--scenario"])
            .arg(format!("scenarios/{name}.toml"))
            .arg("--out")
            .arg(dir.path());
        if grid_only {
            cmd.arg("--no-tasks");
        }
        cmd.assert().success();
        let committed = root.join("reports").join(name);
        let read = |d: &Path| -> Vec<SweepRow> {
            serde_json::from_slice(&std::fs::read(d.join("results.json")).unwrap()).unwrap()
        };
        assert_eq!(read(&committed), read(dir.path()), "{name}: results.json");
        if grid_only {
            continue;
        }
        let tasks = |d: &Path| -> Vec<TaskResult> {
            std::fs::read(d.join("tasks.json"))
                .map(|b| serde_json::from_slice::<Vec<TaskResult>>(&b).unwrap())
                .unwrap_or_default()
                .into_iter()
                .map(|mut t| {
                    t.wall_ms = 0.0;
                    t
                })
                .collect()
        };
        assert_eq!(tasks(&committed), tasks(dir.path()), "{name}: tasks.json");
        assert_eq!(
            std::fs::read_to_string(committed.join("summary.md")).unwrap(),
            std::fs::read_to_string(dir.path().join("summary.md")).unwrap(),
            "{name}: summary.md"
        );
    }
}

/// A refused cell reads as refused in the text table (with its reason as a note), and CSV and
/// JSON keep `refused` as a boolean; without --tokenizer each model counts with its own.
#[test]
fn refused_rows_read_as_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("toolcost")
        .unwrap()
        .env("COLUMNS", "220")
        .args([
            "sweep",
            "--rows",
            "10,856",
            "--surface",
            "per-row-mcp",
            "--client",
            "openai-agent",
        ])
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    let refused: Vec<&str> = table.lines().filter(|l| l.contains("REFUSED")).collect();
    assert_eq!(refused.len(), 1, "{table}");
    assert!(refused[0].contains("856"), "{table}");
    assert!(table.contains("128"), "the reason is in the notes: {table}");
    assert!(
        table.contains("model: gpt-5.6") || table.contains("gpt-5.6"),
        "{table}"
    );
    let csv = std::fs::read_to_string(dir.path().join("results.csv")).unwrap();
    assert!(csv.lines().skip(1).any(|l| l.contains(",true,")), "{csv}");
    let rows: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(dir.path().join("results.json")).unwrap()).unwrap();
    assert!(
        rows.iter().all(|r| r["tokenizer"] == "o200k"),
        "gpt-5.6's own tokenizer"
    );
    assert_eq!(rows.iter().filter(|r| r["refused"] == true).count(), 1);
}
