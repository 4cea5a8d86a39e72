//! `toolcost check`: the project's own gate, budgets, baselines, formats and bad input.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::json;
use std::path::{Path, PathBuf};

fn toolcost() -> Command {
    Command::cargo_bin("toolcost").unwrap()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_projects_own_gate_passes_and_its_fixture_is_generated() {
    toolcost()
        .current_dir(root())
        .arg("check")
        .assert()
        .success()
        .stdout(predicate::str::contains("within budget"));
    let made = toolcost()
        .args([
            "generate",
            "--rows",
            "856",
            "--profile",
            "seed-2026-07",
            "--seed",
            "1",
        ])
        .output()
        .unwrap()
        .stdout;
    let committed =
        std::fs::read(root().join("fixtures/catalogues/seed-2026-07-856.jsonl")).unwrap();
    assert!(
        made == committed,
        "the fixture catalogue is stale: regenerate it and run `toolcost check --update`"
    );
}

fn capture(dir: &Path, tools: &[(&str, usize)]) -> PathBuf {
    let tools: Vec<_> = tools
        .iter()
        .map(|(n, words)| json!({"name": n, "description": "word ".repeat(*words), "inputSchema": {"type": "object", "properties": {}}}))
        .collect();
    let p = dir.join("tools.json");
    std::fs::write(
        &p,
        serde_json::to_string(&json!({ "tools": tools })).unwrap(),
    )
    .unwrap();
    p
}

fn setup(budget: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("toolcost.toml"),
        format!("[source]\ncatalogue = \"tools.json\"\n\n[budget]\n{budget}"),
    )
    .unwrap();
    capture(dir.path(), &[("small", 5), ("medium", 40), ("gone", 5)]);
    toolcost()
        .current_dir(dir.path())
        .args(["check", "--update"])
        .assert()
        .success()
        .stdout(predicate::str::contains("3 tools"));
    dir
}

#[test]
fn growth_over_budget_fails_with_annotations() {
    let dir = setup("max_tokens_per_tool = 100\nmax_growth_pct = 10\n");
    toolcost()
        .current_dir(dir.path())
        .arg("check")
        .assert()
        .code(0);
    capture(dir.path(), &[("small", 5), ("medium", 150), ("added", 5)]);
    let out = toolcost()
        .current_dir(dir.path())
        .args(["check", "--format", "github"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("::error title=toolcost max_tokens_per_tool::medium is"),
        "{text}"
    );
    assert!(
        text.contains("::error title=toolcost max_growth_pct::"),
        "{text}"
    );
    assert!(
        text.contains("::warning title=toolcost grown::grown    medium"),
        "{text}"
    );
    assert!(text.contains("::warning title=toolcost added::"), "{text}");
    let md = toolcost()
        .current_dir(dir.path())
        .args(["check", "--format", "md"])
        .output()
        .unwrap();
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(
        md.starts_with("### toolcost: over budget") && md.contains("| `gone` | removed |"),
        "{md}"
    );
    let js = toolcost()
        .current_dir(dir.path())
        .args(["check", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&js.stdout).unwrap();
    assert_eq!(v["changes"].as_array().unwrap().len(), 3);
    // Accepting the change makes it the new baseline.
    toolcost()
        .current_dir(dir.path())
        .args(["check", "--update"])
        .assert()
        .success();
    let out = toolcost()
        .current_dir(dir.path())
        .arg("check")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "the per-tool budget still fails"
    );
}

#[test]
fn shrinking_passes() {
    let dir = setup("max_growth_pct = 0\n");
    capture(dir.path(), &[("small", 5), ("medium", 20), ("gone", 5)]);
    toolcost()
        .current_dir(dir.path())
        .arg("check")
        .assert()
        .code(0)
        .stdout(predicate::str::contains("1 shrunk"));
}

#[test]
fn check_a_live_stdio_server() {
    let dir = tempfile::tempdir().unwrap();
    let fake = root().join("tests/peers/fake_mcp.py");
    let args = |extra: &[&str]| {
        let mut v = vec!["check".to_string()];
        v.extend(extra.iter().map(|s| s.to_string()));
        v.extend([
            "--".into(),
            "python3".into(),
            fake.display().to_string(),
            "noisy".into(),
        ]);
        v
    };
    toolcost()
        .current_dir(dir.path())
        .args(args(&["--update"]))
        .assert()
        .success();
    toolcost()
        .current_dir(dir.path())
        .args(args(&[]))
        .assert()
        .success()
        .stdout(predicate::str::contains("3 tools"));
}

#[test]
fn bad_input_exits_2() {
    let dir = setup("");
    let run = |args: &[&str], needle: &str| {
        let out = toolcost()
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    };
    run(&["check", "--lock", "nope.json"], "toolcost check --update");
    run(&["check", "--format", "xml"], "unknown format `xml`");
    run(
        &["check", "--config", "missing.toml"],
        "no such budget file",
    );
    std::fs::write(dir.path().join("bad.toml"), "[budget]\nmax_bytes = 3\n").unwrap();
    run(
        &["check", "--config", "bad.toml"],
        "unknown field `max_bytes`",
    );
    std::fs::write(dir.path().join("toolcost.lock.json"), "{not json").unwrap();
    run(&["check"], "not a toolcost lock file");
    let empty = tempfile::tempdir().unwrap();
    let out = toolcost()
        .current_dir(empty.path())
        .arg("check")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("name what to check"));
}

/// The class "a baseline edited by hand is believed": a lock whose digest was deleted, or that
/// names one tool twice (JSON keeps the last silently), is refused with the reason.
#[test]
fn a_tampered_baseline_is_refused() {
    let dir = setup("");
    let lock_path = dir.path().join("toolcost.lock.json");
    let good = std::fs::read_to_string(&lock_path).unwrap();
    let refused = |text: &str, needle: &str| {
        std::fs::write(&lock_path, text).unwrap();
        let out = toolcost()
            .current_dir(dir.path())
            .arg("check")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{err}");
    };
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v.as_object_mut().unwrap().remove("digest");
    refused(&v.to_string(), "has no digest");
    // The same tool twice: the first entry shrunk, the second the real one.
    let twice = good.replacen(
        "\"gone\": {",
        "\"gone\": {\"bytes\": 1, \"tokens\": 1},\n    \"gone\": {",
        1,
    );
    assert_ne!(twice, good);
    refused(&twice, "appears twice");
    std::fs::write(&lock_path, &good).unwrap();
    toolcost()
        .current_dir(dir.path())
        .arg("check")
        .assert()
        .success();
}

/// Inputs that are not regular files are refused with their path at once: a config, lock or
/// catalogue that is a symlink to /dev/zero (which would grow without end) or a FIFO (which
/// would block forever), and a claude-counts capture that is one.
#[test]
fn inputs_that_are_not_regular_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let zero = d.join("zero.toml");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let fifo = d.join("tools.json");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let cases: [(Vec<String>, &str); 4] = [
        (
            vec![
                "check".into(),
                "--config".into(),
                zero.display().to_string(),
            ],
            "a device",
        ),
        (
            vec!["check".into(), "--lock".into(), fifo.display().to_string()],
            "a FIFO",
        ),
        (
            vec![
                "measure".into(),
                "--catalogue".into(),
                fifo.display().to_string(),
            ],
            "a FIFO",
        ),
        (vec!["lint".into(), zero.display().to_string()], "a device"),
    ];
    for (args, says) in cases {
        toolcost()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(&args)
            .timeout(std::time::Duration::from_secs(30))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
    // A recorded set whose capture is a FIFO.
    let set = d.join("set");
    std::fs::create_dir(&set).unwrap();
    std::fs::write(
        set.join("counts.csv"),
        "server,model,claude_tools_delta\nx,claude-opus-5,100\n",
    )
    .unwrap();
    let cap = set.join("x.tools.json");
    let c = std::ffi::CString::new(cap.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    toolcost()
        .args(["claude-counts", "--dir"])
        .arg(&set)
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("a FIFO"));
}

/// JSON nested deeper than toolcost reads is said to be that, not "not JSON".
#[test]
fn deep_json_is_named_as_deep() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("deep.json");
    let nested = format!(
        "{{\"tools\": [{{\"name\": \"x\", \"inputSchema\": {}{}}}]}}",
        "[".repeat(200),
        "]".repeat(200)
    );
    std::fs::write(&deep, nested).unwrap();
    toolcost()
        .args(["measure", "--catalogue"])
        .arg(&deep)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nested more than 128 levels"));
}

/// A source that lists nothing where the baseline had tools fails the gate with the reason (it
/// is not a saving), and `--badge` writes an SVG of the total, green within budget.
#[test]
fn an_empty_source_fails_and_the_badge_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tools = json!({"tools": [{"name": "a", "description": "Do a thing.",
        "inputSchema": {"type": "object", "properties": {}}}]});
    std::fs::write(d.join("tools.json"), tools.to_string()).unwrap();
    std::fs::write(
        d.join("toolcost.toml"),
        "[source]\ncatalogue = \"tools.json\"\n\n[budget]\ntokenizer = \"o200k\"\n",
    )
    .unwrap();
    toolcost()
        .current_dir(d)
        .args(["check", "--update"])
        .assert()
        .success();
    toolcost()
        .current_dir(d)
        .args(["check", "--badge", "badge.svg"])
        .assert()
        .success();
    let svg = std::fs::read_to_string(d.join("badge.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("tool tokens") && svg.contains("#2e7d32"),
        "{svg}"
    );
    std::fs::write(d.join("tools.json"), json!({"tools": []}).to_string()).unwrap();
    toolcost()
        .current_dir(d)
        .args(["check", "--badge", "badge.svg"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "lists no tools where the baseline has 1",
        ));
    let svg = std::fs::read_to_string(d.join("badge.svg")).unwrap();
    assert!(svg.contains("#c62828"), "{svg}");
}

/// The pull-request comment and badge shown in docs/ci.md are what `check` writes for its
/// example (a tool grown past the budget, one added, one removed): regenerated and compared.
#[test]
fn the_comment_and_badge_in_the_docs_are_checks_own() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("toolcost.toml"),
        "[source]\ncatalogue = \"tools.json\"\n\n[budget]\ntokenizer = \"o200k\"\nmax_tokens_per_tool = 100\nmax_growth_pct = 10\n",
    )
    .unwrap();
    capture(
        dir.path(),
        &[("search_issues", 30), ("get_issue", 12), ("list_labels", 8)],
    );
    toolcost()
        .current_dir(dir.path())
        .args(["check", "--update"])
        .assert()
        .success();
    capture(
        dir.path(),
        &[
            ("search_issues", 120),
            ("get_issue", 12),
            ("create_issue", 20),
        ],
    );
    let out = toolcost()
        .current_dir(dir.path())
        .args(["check", "--format", "md", "--badge", "badge.svg"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let md = String::from_utf8(out.stdout).unwrap();
    let badge = std::fs::read_to_string(dir.path().join("badge.svg")).unwrap();
    let examples = root().join("docs/examples");
    if std::env::var_os("TOOLCOST_BLESS").is_some() {
        std::fs::create_dir_all(&examples).unwrap();
        std::fs::write(examples.join("check-comment.md"), &md).unwrap();
        std::fs::write(examples.join("check-badge.svg"), &badge).unwrap();
    }
    let committed = std::fs::read_to_string(examples.join("check-comment.md")).unwrap();
    assert_eq!(
        md, committed,
        "TOOLCOST_BLESS=1 cargo test --test check rewrites the examples"
    );
    assert_eq!(
        badge,
        std::fs::read_to_string(examples.join("check-badge.svg")).unwrap()
    );
    let ci = std::fs::read_to_string(root().join("docs/ci.md")).unwrap();
    assert!(
        ci.contains(md.trim_end()),
        "docs/ci.md shows the comment as check writes it"
    );
    assert!(ci.contains("examples/check-badge.svg"));
}

/// A rename to a name that reads like the old one shows in the markdown report: bidi overrides
/// and zero-width characters are escapes, and a name with characters outside ASCII (Cyrillic
/// `а` for Latin `a`) says which.
#[test]
fn look_alike_names_show_in_markdown() {
    let dir = setup("max_growth_pct = 1000\n");
    capture(
        dir.path(),
        &[
            ("sm\u{0430}ll", 5),
            ("medium\u{200B}", 40),
            ("gone\u{202E}x", 5),
            ("new\nline", 5),
            ("ls\u{2028}x", 5),
        ],
    );
    let md = toolcost()
        .current_dir(dir.path())
        .args(["check", "--format", "md"])
        .output()
        .unwrap();
    let md = String::from_utf8(md.stdout).unwrap();
    for raw in ['\u{200B}', '\u{202E}', '\u{2028}'] {
        assert!(!md.contains(raw), "{raw:?} raw in {md}");
    }
    assert!(md.contains("`medium\\u{200B}`"), "{md}");
    assert!(md.contains("`gone\\u{202E}x`"), "{md}");
    assert!(md.contains("(not ASCII: U+0430)"), "{md}");
    assert!(
        md.contains("`new\\u{000A}line` (not ASCII: U+000A)"),
        "{md}"
    );
    // The terminal table and GitHub's annotations show the same escapes, never the raw ones.
    for format in ["table", "github"] {
        let out = toolcost()
            .current_dir(dir.path())
            .args(["check", "--format", format])
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        for raw in ['\u{200B}', '\u{202E}', '\u{2028}'] {
            assert!(!text.contains(raw), "{format}: {raw:?} raw in {text}");
        }
        assert!(text.contains("gone\\u{202E}x"), "{format}: {text}");
    }
}
