//! The GitHub Action's steps (action/check.sh), run here on a fixture repository: a grown tool
//! fails the job with a summary that names it; an unchanged one passes.

use std::path::Path;
use std::process::Command;

fn write_tools(dir: &Path, search_description: &str) {
    let tools = serde_json::json!({"tools": [
        {"name": "search_issues", "description": search_description,
         "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}},
        {"name": "get_issue", "description": "Read one issue by its number.",
         "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
    ]});
    std::fs::write(dir.join("tools.json"), tools.to_string()).unwrap();
}

/// Write the budget and take the current tools as the baseline.
fn baseline(dir: &Path, toml: &str) {
    std::fs::write(dir.join("toolcost.toml"), toml).unwrap();
    let update = Command::new(assert_cmd::cargo::cargo_bin("toolcost"))
        .args(["check", "--update"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(update.status.success(), "{update:?}");
}

fn run_action(repo: &Path, summary: &Path) -> (i32, String) {
    let out = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("action/check.sh"))
        .current_dir(repo)
        .env("TOOLCOST_BIN", assert_cmd::cargo::cargo_bin("toolcost"))
        .env("GITHUB_STEP_SUMMARY", summary)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn the_action_fails_a_grown_tool_and_passes_an_unchanged_one() {
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    write_tools(dir, "Search issues by text.");
    baseline(dir, "[source]\ncatalogue = \"tools.json\"\n\n[budget]\ntokenizer = \"o200k\"\nmax_growth_pct = 2.0\n");

    let summary = dir.join("summary.md");
    let (code, text) = run_action(dir, &summary);
    assert_eq!(code, 0, "{text}");
    assert!(std::fs::read_to_string(&summary)
        .unwrap()
        .starts_with("## toolcost check"));

    write_tools(
        dir,
        &"Search issues by text, labels, authors, states and dates, with ranking. ".repeat(8),
    );
    std::fs::remove_file(&summary).unwrap();
    let (code, text) = run_action(dir, &summary);
    assert_eq!(code, 1, "{text}");
    let written = std::fs::read_to_string(&summary).unwrap();
    assert!(written.contains("search_issues"), "{written}");
    assert!(!written.contains("get_issue") || written.contains("search_issues"));
    // The annotations name the tool too.
    assert!(
        text.contains("::error") && text.contains("search_issues"),
        "{text}"
    );

    // No baseline: an error that says what to do, exit 2.
    std::fs::remove_file(dir.join("toolcost.lock.json")).unwrap();
    let (code, text) = run_action(dir, &summary);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("check --update"), "{text}");
}

/// Tool names are the server's to choose: a name with a line break and `::` cannot forge or
/// silence a workflow command in the log, and a `|` or markup cannot break the summary's table.
#[test]
fn hostile_tool_names_stay_text() {
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    let names = [
        "evil\n::error::forged",
        "pipe|name",
        "<img src=x onerror=alert(1)>",
    ];
    let write = |desc: &str| {
        let tools: Vec<serde_json::Value> = names
            .iter()
            .map(|n| {
                serde_json::json!({"name": n, "description": desc,
                    "inputSchema": {"type": "object", "properties": {}}})
            })
            .collect();
        std::fs::write(
            dir.join("tools.json"),
            serde_json::json!({ "tools": tools }).to_string(),
        )
        .unwrap();
    };
    write("Short.");
    baseline(dir, "[source]\ncatalogue = \"tools.json\"\n\n[budget]\ntokenizer = \"o200k\"\nmax_growth_pct = 2.0\n");
    write(&"A much longer description than before, grown past the budget. ".repeat(6));
    let summary = dir.join("summary.md");
    let (code, text) = run_action(dir, &summary);
    assert_eq!(code, 1, "{text}");
    // Every line the log could read as a command is one the action wrote itself.
    let stop = text
        .lines()
        .find_map(|l| l.strip_prefix("::stop-commands::"))
        .expect("the report is read between stop-commands markers");
    let (before, rest) = text
        .split_once(&format!("::stop-commands::{stop}"))
        .unwrap();
    let (report, after) = rest.split_once(&format!("::{stop}::")).unwrap();
    assert!(!before.lines().any(|l| l.contains("forged")), "{before}");
    assert!(report.contains("forged"), "{report}");
    for l in after.lines().filter(|l| l.starts_with("::")) {
        assert!(!l.starts_with("::error::forged"), "{l}");
    }
    // The summary's table rows each have their four cells.
    let written = std::fs::read_to_string(&summary).unwrap();
    for row in written
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains("grown"))
    {
        let bars = row.matches('|').count() - row.matches("\\|").count();
        assert_eq!(bars, 5, "{row}");
        assert!(!row.contains("<img"), "{row}");
    }
    assert!(written.matches("grown").count() >= 3, "{written}");
}

/// A job summary that cannot be written is not a verdict: the gate still exits as `check` did.
#[test]
fn an_unwritable_summary_does_not_change_the_verdict() {
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    write_tools(dir, "Search issues by text.");
    baseline(
        dir,
        "[source]\ncatalogue = \"tools.json\"\n\n[budget]\ntokenizer = \"o200k\"\n",
    );
    let (code, text) = run_action(dir, &dir.join("no/such/dir/summary.md"));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("could not write the job summary"), "{text}");
}
