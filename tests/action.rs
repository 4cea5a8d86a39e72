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
    std::fs::write(
        dir.join("toolcost.toml"),
        "[source]\ncatalogue = \"tools.json\"\n\n[budget]\ntokenizer = \"o200k\"\nmax_growth_pct = 2.0\n",
    )
    .unwrap();
    let update = Command::new(assert_cmd::cargo::cargo_bin("toolcost"))
        .args(["check", "--update"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(update.status.success(), "{update:?}");

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
