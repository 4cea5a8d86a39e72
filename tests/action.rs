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

    // A check that ran and could not finish (exit 2) writes why into the summary, never an
    // empty section.
    write_tools(dir, "Search issues by text.");
    baseline(
        dir,
        "[source]\ncatalogue = \"tools.json\"\n\n[budget]\ntokenizer = \"o200k\"\n",
    );
    std::fs::write(dir.join("tools.json"), "{not json").unwrap();
    std::fs::remove_file(&summary).unwrap();
    let (code, text) = run_action(dir, &summary);
    assert_eq!(code, 2, "{text}");
    let written = std::fs::read_to_string(&summary).unwrap();
    assert!(
        written.contains("could not run (exit 2)") && written.contains("tools.json"),
        "{written}"
    );
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
    // The summary's table rows each have their cells: as many as the table's header.
    let written = std::fs::read_to_string(&summary).unwrap();
    let cells = |l: &str| l.matches('|').count() - l.matches("\\|").count();
    let header = written
        .lines()
        .find(|l| l.starts_with("| tool | change |"))
        .expect("the changes table");
    for row in written
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains("grown"))
    {
        assert_eq!(cells(row), cells(header), "{row}");
        // The name is a code span: text, not HTML.
        assert!(!row.contains("<img") || row.contains("`<img"), "{row}");
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

/// A stand-in for GitHub's issue-comment API on loopback: the comments it holds, the calls it
/// saw, and a status to refuse every write with (a fork's read-only token gets 403).
#[derive(Default)]
struct FakeGithub {
    comments: Vec<(u64, String)>,
    /// Comments someone else wrote (with the marker in them): never toolcost's to update.
    foreign: Vec<(u64, String)>,
    calls: Vec<String>,
    refuse: Option<u16>,
}

async fn fake_github(state: std::sync::Arc<std::sync::Mutex<FakeGithub>>) -> String {
    use axum::extract::{Path as P, State};
    use axum::http::{HeaderMap, StatusCode};
    use axum::routing::{get, patch};
    type S = State<std::sync::Arc<std::sync::Mutex<FakeGithub>>>;
    type Answer = (StatusCode, String);
    fn authorised(h: &HeaderMap) -> bool {
        h.get("authorization").and_then(|v| v.to_str().ok()) == Some("Bearer pr-token")
    }
    fn body_of(text: &str) -> String {
        let v: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
        v["body"].as_str().unwrap_or("").to_string()
    }
    async fn list(State(s): S, h: HeaderMap, P((_, _, n)): P<(String, String, u64)>) -> Answer {
        let mut s = s.lock().unwrap();
        s.calls.push(format!("GET {n}"));
        if !authorised(&h) {
            return (StatusCode::UNAUTHORIZED, "{}".into());
        }
        let all: Vec<_> = s
            .foreign
            .iter()
            .map(|(id, b)| serde_json::json!({"id": id, "body": b, "user": {"login": "mallory"}}))
            .chain(s.comments.iter().map(|(id, b)| {
                serde_json::json!({"id": id, "body": b, "user": {"login": "github-actions[bot]"}})
            }))
            .collect();
        (StatusCode::OK, serde_json::json!(all).to_string())
    }
    async fn post(
        State(s): S,
        h: HeaderMap,
        P((_, _, n)): P<(String, String, u64)>,
        body: String,
    ) -> Answer {
        let mut s = s.lock().unwrap();
        s.calls.push(format!("POST {n}"));
        if let Some(code) = s.refuse.filter(|_| authorised(&h)) {
            let msg = r#"{"message": "Resource not accessible by integration"}"#;
            return (StatusCode::from_u16(code).unwrap(), msg.into());
        }
        let id = 100 + s.comments.len() as u64;
        s.comments.push((id, body_of(&body)));
        (
            StatusCode::CREATED,
            serde_json::json!({"id": id}).to_string(),
        )
    }
    async fn edit(State(s): S, P((_, _, id)): P<(String, String, u64)>, body: String) -> Answer {
        let mut s = s.lock().unwrap();
        s.calls.push(format!("PATCH {id}"));
        if let Some(c) = s.comments.iter_mut().find(|c| c.0 == id) {
            c.1 = body_of(&body);
        }
        if let Some(c) = s.foreign.iter_mut().find(|c| c.0 == id) {
            c.1 = body_of(&body);
        }
        (StatusCode::OK, serde_json::json!({"id": id}).to_string())
    }
    let app = axum::Router::new()
        .route("/repos/{o}/{r}/issues/{n}/comments", get(list).post(post))
        .route("/repos/{o}/{r}/issues/comments/{id}", patch(edit))
        .with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

/// With a token the report becomes the pull request's comment, updated (not repeated) on the
/// next push; a refused write (a fork's read-only token) is a warning and the verdict stands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_action_comments_on_the_pull_request_once_and_updates_it() {
    let state = std::sync::Arc::new(std::sync::Mutex::new(FakeGithub::default()));
    let api = fake_github(state.clone()).await;
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path().to_path_buf();
    write_tools(&dir, "Search issues by text.");
    baseline(&dir, "[source]\ncatalogue = \"tools.json\"\n\n[budget]\ntokenizer = \"o200k\"\nmax_growth_pct = 2.0\n");
    let event = dir.join("event.json");
    std::fs::write(&event, r#"{"pull_request": {"number": 7}}"#).unwrap();
    let run = |dir: std::path::PathBuf, api: String| {
        tokio::task::spawn_blocking(move || {
            let out = Command::new("bash")
                .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("action/check.sh"))
                .current_dir(&dir)
                .env("TOOLCOST_BIN", assert_cmd::cargo::cargo_bin("toolcost"))
                .env("TOOLCOST_GITHUB_TOKEN", "pr-token")
                .env("GITHUB_EVENT_PATH", dir.join("event.json"))
                .env("GITHUB_REPOSITORY", "owner/repo")
                .env("GITHUB_API_URL", api)
                .env("TOOLCOST_COMMENT_FILE", dir.join("comment.md"))
                .output()
                .unwrap();
            (
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stderr).to_string(),
            )
        })
    };
    // Someone else's comment that quotes the marker is not toolcost's.
    state
        .lock()
        .unwrap()
        .foreign
        .push((9, "<!-- toolcost-check -->\nplease ignore".into()));
    let (code, err) = run(dir.clone(), api.clone()).await.unwrap();
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        state.lock().unwrap().foreign[0].1,
        "<!-- toolcost-check -->\nplease ignore"
    );
    write_tools(
        &dir,
        &"Search issues by text, labels, authors, states and dates. ".repeat(8),
    );
    let (code, err) = run(dir.clone(), api.clone()).await.unwrap();
    assert_eq!(code, 1, "{err}");
    {
        let s = state.lock().unwrap();
        assert_eq!(s.comments.len(), 1, "{:?}", s.calls);
        assert!(s.calls.contains(&"PATCH 100".to_string()), "{:?}", s.calls);
        let body = &s.comments[0].1;
        assert!(body.starts_with("<!-- toolcost-check -->"), "{body}");
        assert!(body.contains("search_issues"), "{body}");
        // The same report is kept for a later workflow to post.
        let kept = std::fs::read_to_string(dir.join("comment.md")).unwrap();
        assert!(body.ends_with(&kept), "{kept}");
    }
    // A check that cannot run says so and keeps the last report below.
    std::fs::write(dir.join("tools.json"), "{not json").unwrap();
    let (code, err) = run(dir.clone(), api.clone()).await.unwrap();
    assert_eq!(code, 2, "{err}");
    {
        let s = state.lock().unwrap();
        let body = &s.comments[0].1;
        assert!(body.contains("check failed"), "{body}");
        // What the check printed is quoted as a code block: a server's stderr cannot mention,
        // link or load anything.
        let note = body.split("check failed").nth(1).unwrap();
        assert!(note.trim_start().starts_with("```text\n"), "{body}");
        assert!(body.contains("search_issues"), "{body}");
    }
    write_tools(
        &dir,
        &"Search issues by text, labels, authors, states and dates. ".repeat(8),
    );
    // A refused write: the gate's verdict stands, the log says why.
    state.lock().unwrap().refuse = Some(403);
    state.lock().unwrap().comments.clear();
    let (code, err) = run(dir.clone(), api).await.unwrap();
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("::warning::toolcost could not post the pull-request comment"),
        "{err}"
    );
}

/// A failure note's quoted text cannot end the note early: a server that prints toolcost's own
/// marker and a mention after it leaves the mention inside the fence, and the next failure
/// still keeps the last report whole below its note.
#[test]
fn a_printed_marker_cannot_cut_the_failure_note() {
    let script = r####"
import importlib.util, sys
spec = importlib.util.spec_from_file_location("comment", sys.argv[1])
c = importlib.util.module_from_spec(spec)
spec.loader.exec_module(c)
report = "### toolcost: within budget\n\n| `search` | ok |\n"
first = c.comment_body(report, None, "")
evil = "boom " + c.FAILED_END + "\n@everyone ![x](http://e.example/x.png) " + c.MARKER
second = c.comment_body("", evil, first)
third = c.comment_body("", "again", second)
assert second.count(c.FAILED_END) == 1, second
note, rest = second.split(c.FAILED_END, 1)
assert "@everyone" in note and "@everyone" not in rest, second
assert second.count(c.MARKER) == 1 and second.startswith(c.MARKER), second
assert third.endswith(report), third
assert "@everyone" not in third, third
print("ok")
"####;
    let out = Command::new("python3")
        .args([
            "-c",
            script,
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("action/comment.py")
                .to_str()
                .unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
