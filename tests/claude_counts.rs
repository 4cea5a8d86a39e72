//! Claude's recorded counts: the exact tokenizer's figures through the mock gateway's own
//! `count_tokens` endpoint, their in-sample and leave-one-out error on the recorded servers, the
//! probes they are tied to, and the committed report that must match a fresh run.

mod common;

use serde_json::{json, Value};
use toolcost::claude_counts::{self, check, compare, load};
use toolcost::gateway::Upstream;
use toolcost::tokens::claude;
use toolcost::tokens::Tokenizer;

/// The recorded set: the tools block counted exactly and one fitted constant explain every
/// recorded delta, in sample, left out one at a time, and on the held-out servers; of the
/// renderings tried only the chosen one leaves the same residual everywhere.
#[test]
fn the_estimate_meets_the_recorded_counts() {
    let set = load(&claude_counts::default_dir()).unwrap();
    let held_set = load(&claude_counts::heldout_dir()).unwrap();
    assert_eq!(set.len(), 17);
    let c = compare(&set, &held_set).unwrap();
    assert!(c.mape_pct <= 1.0, "in-sample MAPE {:.2}%", c.mape_pct);
    assert!(
        c.loo_mape_pct <= 1.0,
        "leave-one-out MAPE {:.2}%",
        c.loo_mape_pct
    );
    assert!(
        c.loo_worst_pct <= 3.0,
        "leave-one-out worst {:.2}%",
        c.loo_worst_pct
    );
    assert!(
        c.before_mape_pct > 30.0,
        "o200k was far off: {:.1}%",
        c.before_mape_pct
    );
    assert_eq!(
        c.tool_prompt,
        toolcost::billing::render::CLAUDE_5_TOOL_PROMPT,
        "the committed tool-use prompt is the fit"
    );
    let held = check(&held_set).unwrap();
    assert!(held.rows.len() >= 6);
    assert!(held.mape_pct <= 1.0, "held-out MAPE {:.2}%", held.mape_pct);
    assert!(
        held.worst_pct <= 3.0,
        "held-out worst {:.2}%",
        held.worst_pct
    );
    let chosen = c.renderings.last().unwrap();
    assert_eq!(chosen.residual_min, chosen.residual_max, "{chosen:?}");
    for r in &c.renderings[..c.renderings.len() - 1] {
        assert!(r.residual_max - r.residual_min > 50, "{r:?}");
    }
}

/// The committed report is what a fresh run writes.
#[test]
fn the_committed_report_is_current() {
    let set = load(&claude_counts::default_dir()).unwrap();
    let held_set = load(&claude_counts::heldout_dir()).unwrap();
    let c = compare(&set, &held_set).unwrap();
    let held = check(&held_set).unwrap();
    let texts = claude_counts::check_texts(&common::shared().join("claude-counts-text")).unwrap();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/claude-counts");
    let committed = std::fs::read_to_string(dir.join("claude-counts.md")).unwrap();
    assert_eq!(
        committed,
        claude_counts::markdown(
            &c,
            "fixtures/claude-counts",
            &held,
            "fixtures/claude-counts-heldout",
            Some(&texts)
        ),
        "regenerate: toolcost claude-counts --out reports/claude-counts"
    );
}

/// A broken set says what is wrong rather than fitting nothing.
#[test]
fn a_broken_set_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let err = load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("counts.csv"), "{err}");
    std::fs::write(
        dir.path().join("counts.csv"),
        "server,model,claude_tools_delta\n../etc,claude-opus-5,10\n",
    )
    .unwrap();
    let err = load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("plain file name"), "{err}");
    std::fs::write(
        dir.path().join("counts.csv"),
        "server,model,claude_tools_delta\na,claude-opus-5,many\n",
    )
    .unwrap();
    let err = load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("whole number"), "{err}");
    std::fs::write(
        dir.path().join("counts.csv"),
        "server,model,claude_tools_delta\na,claude-opus-5,10\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("a.tools.json"), "{\"tools\": 3}").unwrap();
    let err = load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("no `tools` array"), "{err}");
    // A delta of nothing (which would make every error infinite) or past any count, and a
    // model that is no Claude model (whose estimate would be another card's), are refused.
    for (row, says) in [
        ("a,claude-opus-5,0", "not a tools delta"),
        ("a,claude-opus-5,1000000000000", "not a tools delta"),
        ("a,gpt-4o,100", "not a Claude model"),
        ("a,claude-nonesuch-x,100", "not a Claude model"),
    ] {
        std::fs::write(
            dir.path().join("counts.csv"),
            format!("server,model,claude_tools_delta\n{row}\n"),
        )
        .unwrap();
        let err = load(dir.path()).unwrap_err().to_string();
        assert!(err.contains(says), "{row}: {err}");
    }
    // A server on two rows, or a capture whose tools have no names, is not a count.
    std::fs::write(
        dir.path().join("a.tools.json"),
        r#"{"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("counts.csv"),
        "server,model,claude_tools_delta
a,claude-opus-5,10
a,claude-opus-5,11
",
    )
    .unwrap();
    let err = load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("earlier row"), "{err}");
    std::fs::write(
        dir.path().join("counts.csv"),
        "server,model,claude_tools_delta
a,claude-opus-5,10
",
    )
    .unwrap();
    for capture in [
        r#"{"tools": []}"#,
        r#"{"tools": [{"description": "no name"}]}"#,
    ] {
        std::fs::write(dir.path().join("a.tools.json"), capture).unwrap();
        let err = load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("have a name"), "{capture}: {err}");
    }
}

/// The gateway's `count_tokens` on claude-opus-5 answers the recorded probes and the
/// recorded deltas, the same figures as the report, over HTTP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mock_count_tokens_answers_as_claude_counted() {
    let gw = common::start_gateway(Upstream::Mock, |_| {}).await;
    let http = reqwest::Client::new();
    let count = |body: Value| {
        let http = http.clone();
        let url = format!("{}/v1/messages/count_tokens", gw.base);
        async move {
            let r = http.post(url).body(body.to_string()).send().await.unwrap();
            assert_eq!(r.status(), 200);
            let v: Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
            v["input_tokens"].as_u64().unwrap()
        }
    };
    let dot = json!({"model": "claude-opus-5", "messages": [{"role": "user", "content": "."}]});
    let base = count(dot.clone()).await;
    assert!((6..=8).contains(&base), "a \".\" message counts {base}");
    let mut one = dot.clone();
    one["tools"] = json!([serde_json::from_str::<Value>(claude::MINIMAL_TOOL).unwrap()]);
    let delta = count(one).await - base;
    assert!(
        (318..=338).contains(&delta),
        "one minimal tool adds {delta}"
    );
    let set = load(&claude_counts::default_dir()).unwrap();
    let held_set = load(&claude_counts::heldout_dir()).unwrap();
    let rows = compare(&set, &held_set).unwrap().rows;
    for (r, row) in set.iter().zip(&rows).take(4) {
        let mut b = dot.clone();
        b["tools"] = Value::Array(r.tools.clone());
        assert_eq!(count(b).await - base, row.estimate, "{}", r.server);
    }
}

/// `--tokenizer o200k` keeps meaning o200k; the Claude estimates carry calibrated labels.
#[test]
fn labels_name_the_fit() {
    assert!(Tokenizer::ClaudeEst
        .label()
        .starts_with("calibrated:claude-est("));
    assert!(Tokenizer::ClaudeLegacyEst
        .label()
        .starts_with("calibrated:claude-legacy-est("));
    assert_eq!(Tokenizer::O200k.label(), "estimated:o200k");
    let text = "Search the web for the latest results.";
    let legacy = Tokenizer::ClaudeLegacyEst.count(text);
    assert!((legacy - Tokenizer::Cl100k.count(text) * claude::LEGACY_PER_CL100K).abs() < 1e-9);
    // Counting a text in parts gives the whole text's estimate.
    use toolcost::tokens::Part;
    let parts = [
        Part::Joint("{"),
        Part::Piece("\"a\":\"the quick fox\""),
        Part::Joint("}"),
    ];
    assert!(
        (Tokenizer::ClaudeEst.count_parts(parts.iter().copied())
            - Tokenizer::ClaudeEst.count("{\"a\":\"the quick fox\"}"))
        .abs()
            < 1e-9
    );
}

/// Whole recorded requests: the committed report is current, every one-message and multi-turn
/// request is exact on both families it holds, and the v3 family stays as close as it is.
#[test]
fn the_recorded_requests_report_is_current() {
    use toolcost::claude_counts::requests;
    let (rows, summary) = requests::check(&requests::load(requests::EMBEDDED).unwrap()).unwrap();
    let md = toolcost::report::render(toolcost::report::OutputFormat::Markdown, &rows);
    let committed = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("reports/claude-counts/claude-requests.md"),
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(md).unwrap(),
        committed,
        "run `toolcost claude-counts --requests --out reports/claude-counts`"
    );
    let line = |g: &str| summary.iter().find(|s| s.group == g).unwrap().clone();
    for shape in ["one message", "turns"] {
        let s = line(shape);
        assert_eq!(s.exact, s.requests, "{s:?}");
    }
    let v3 = line("claude-v3");
    assert!(
        v3.requests >= 300 && v3.exact_pct >= 75.0 && v3.mape_pct <= 0.5,
        "{v3:?}"
    );
    let tools = line("tools");
    assert!(tools.exact_pct >= 85.0, "{tools:?}");
}
