//! Discovery quality: labelled query sets and `toolcost search-eval`.

mod common;

use assert_cmd::Command;
use toolcost::discovery::eval::{Score, SurfaceCost};

fn toolcost() -> Command {
    Command::cargo_bin("toolcost").unwrap()
}

#[test]
fn search_eval_plots_recall_against_n() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("search");
    let run = |rows: &str| {
        toolcost()
            .args([
                "search-eval",
                "--rows",
                rows,
                "--targets",
                "10",
                "--resolver",
            ])
            .args(["bm25,bm25f-wordnet", "--out"])
            .arg(&out)
            .assert()
            .success();
    };
    // One size: no line to draw, so no chart.
    run("120");
    assert!(!out.join("recall-at-5.svg").exists());
    run("120,300");
    let svg = std::fs::read_to_string(out.join("recall-at-5.svg")).unwrap();
    for label in [
        "bm25, lexical",
        "bm25, paraphrase",
        "bm25f-wordnet, lexical",
        "bm25f-wordnet, paraphrase",
    ] {
        assert!(svg.contains(label), "{label} missing from the chart");
    }
    assert!(
        std::fs::metadata(out.join("recall-at-5.png"))
            .unwrap()
            .len()
            > 1000
    );
}

#[test]
fn search_eval_writes_readable_reports() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("search");
    toolcost()
        .args([
            "search-eval",
            "--rows",
            "300",
            "--targets",
            "40",
            "--json",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    for f in [
        "results.csv",
        "results.json",
        "surfaces.csv",
        "surfaces.json",
        "misses.md",
        "summary.md",
        "queries-300.jsonl",
    ] {
        let len = std::fs::metadata(out.join(f)).unwrap().len();
        assert!(len > 0, "{f} is empty");
    }
    let scores: Vec<Score> =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    // 16 resolvers (13 lexical, 3 semantic, left out without the model) x (all, lexical,
    // paraphrase).
    let semantic = common::encoder().is_some();
    assert_eq!(scores.len(), if semantic { 48 } else { 39 });
    assert!(scores.iter().all(|s| s.set == "generated"));
    let get = |res: &str, kind: &str| {
        scores
            .iter()
            .find(|s| s.resolver == res && s.kind == kind)
            .unwrap()
    };
    assert_eq!(get("bm25", "all").queries, 2 * (40 + 6));
    // The row's own words find it; paraphrases are harder, and never easier.
    assert!(get("bm25", "lexical").recall_at_5 > 0.9);
    assert!(get("bm25", "paraphrase").recall_at_5 < get("bm25", "lexical").recall_at_5);
    for s in &scores {
        assert!(s.recall_at_1 <= s.recall_at_5 && s.mrr <= 1.0 && s.mrr >= s.recall_at_1 * 0.999);
        // One answer a query: everything it needs is its one answer, and NDCG at most recall.
        assert_eq!(s.all_at_5, s.recall_at_5);
        assert!(s.ndcg_at_5 <= s.recall_at_5 + 1e-9);
    }
    let costs: Vec<SurfaceCost> =
        serde_json::from_slice(&std::fs::read(out.join("surfaces.json")).unwrap()).unwrap();
    let names: Vec<(&str, &str)> = costs
        .iter()
        .map(|c| (c.surface.as_str(), c.resolver.as_str()))
        .collect();
    // Each surface with its own resolver; those whose search the client or the reference server
    // runs also with the semantic ones; the provider's hosted searches only as they are.
    let names: Vec<(&str, &str)> = names
        .into_iter()
        .filter(|(_, r)| semantic || !["dense", "hybrid", "hybrid-definitions"].contains(r))
        .collect();
    let want: Vec<(&str, &str)> = [
        ("deferred-search", "bm25-definitions"),
        ("deferred-search-regex", "regex"),
        ("deferred-search-client", "bm25-tool-definitions"),
        ("deferred-search-client", "hybrid-definitions"),
        ("protocol-only", "bm25-tool"),
        ("protocol-only", "dense"),
        ("protocol-only", "hybrid"),
        ("small-mcp", "bm25-tool"),
        ("small-mcp", "dense"),
        ("small-mcp", "hybrid"),
        ("code-mode", "bm25-tool"),
        ("code-mode", "dense"),
        ("code-mode", "hybrid"),
    ]
    .into_iter()
    .filter(|(_, r)| semantic || !["dense", "hybrid", "hybrid-definitions"].contains(r))
    .collect();
    assert_eq!(names, want);
    for c in &costs {
        assert!(c.fail_rate <= c.first_miss_rate);
        assert!(
            (c.extra_input_tokens_per_task - c.first_miss_rate * c.round_input_tokens as f64).abs()
                < 1e-6
        );
    }
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("## Reading") && summary.contains("BM25 over rows finds"));
}

#[test]
fn a_catalogue_file_with_its_query_set() {
    let dir = tempfile::tempdir().unwrap();
    let cat = dir.path().join("c.jsonl");
    let q = dir.path().join("q.jsonl");
    toolcost()
        .args(["generate", "--rows", "120", "--targets", "10", "-o"])
        .arg(&cat)
        .arg("--queries")
        .arg(&q)
        .assert()
        .success();
    let out = dir.path().join("out");
    toolcost()
        .args(["search-eval", "--resolver", "bm25", "--csv", "--catalogue"])
        .arg(&cat)
        .arg("--queries")
        .arg(&q)
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicates::str::contains("file,120,bm25,lexical,16,"));

    // A query naming a row the catalogue lacks, a malformed line, an unknown field, an
    // unknown resolver: each a clear error that writes nothing.
    let bad = dir.path().join("bad.jsonl");
    let cases = [
        (
            r#"{"text":"x","kind":"lexical","target":"NOPE","relevant":["NOPE"],"novel_words":0}"#,
            "targets `NOPE`",
        ),
        ("{not json", "bad.jsonl:1"),
        (
            r#"{"text":"x","kind":"lexical","target":"NOW","relevant":["NOW"],"novel_words":0,"colour":1}"#,
            "unknown field `colour`",
        ),
    ];
    for (line, says) in cases {
        std::fs::write(&bad, line).unwrap();
        let fresh = dir.path().join("fresh");
        toolcost()
            .args(["search-eval", "--catalogue"])
            .arg(&cat)
            .arg("--queries")
            .arg(&bad)
            .arg("--out")
            .arg(&fresh)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
        assert!(!fresh.join("results.csv").exists());
    }
    toolcost()
        .args(["search-eval", "--rows", "10", "--resolver", "telepathy"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("unknown resolver"));
}

/// Every resolver that needs no model; the semantic ones are checked on LiveMCPBench below.
const LEXICAL: &str = "substring,bm25,bm25-textbook,bm25-stem,bm25f,bm25f-wordnet,bm25f-gaps,bm25-tool,bm25-definitions,bm25f-wordnet-definitions,bm25f-gaps-definitions,bm25-tool-definitions,regex";

/// The committed reports/search were made by this code: N=856 regenerates to the same figures.
#[test]
fn committed_search_report_regenerates_at_856() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let committed: Vec<Score> =
        serde_json::from_slice(&std::fs::read(root.join("reports/search/results.json")).unwrap())
            .unwrap();
    let dir = tempfile::tempdir().unwrap();
    toolcost()
        .args([
            "search-eval",
            "--rows",
            "856",
            "--resolver",
            LEXICAL,
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .success();
    let fresh: Vec<Score> =
        serde_json::from_slice(&std::fs::read(dir.path().join("results.json")).unwrap()).unwrap();
    let strip = |v: &[Score]| -> Vec<(String, String, usize, String, String, String)> {
        v.iter()
            .filter(|s| s.rows == 856 && s.set == "generated")
            .filter(|s| LEXICAL.split(',').any(|r| r == s.resolver))
            .map(|s| {
                (
                    s.resolver.clone(),
                    s.kind.clone(),
                    s.queries,
                    format!("{:.6}", s.recall_at_1),
                    format!("{:.6}", s.recall_at_5),
                    format!("{:.6}", s.mrr),
                )
            })
            .collect()
    };
    assert!(!strip(&committed).is_empty());
    // The committed report is whole: a run over fewer sizes, or without the real captures,
    // writes to the same folder by default and once replaced it unnoticed.
    for n in [856, 8560, 85600] {
        assert!(
            committed
                .iter()
                .any(|s| s.rows == n && s.set == "generated"),
            "reports/search lacks N={n}: regenerate it with `toolcost search-eval` (no arguments)"
        );
    }
    assert!(
        committed.iter().any(|s| s.set == "real-mcp"),
        "reports/search lacks the real-mcp set: regenerate it beside ../shared/real-mcp"
    );
    assert!(
        committed.iter().any(|s| s.set == "livemcpbench"),
        "reports/search lacks the livemcpbench set: regenerate it beside ../shared/livemcpbench"
    );
    assert_eq!(strip(&committed), strip(&fresh));
    assert_eq!(
        std::fs::read(root.join("reports/search/queries-856.jsonl")).unwrap(),
        std::fs::read(dir.path().join("queries-856.jsonl")).unwrap()
    );
}

#[test]
fn the_real_query_set_is_labelled_honestly() {
    use toolcost::discovery::{queries::QueryKind, real};
    let caps = real::captures(&common::shared().join("real-mcp")).unwrap();
    assert_eq!(caps.len(), 10);
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/queries/real-mcp.jsonl");
    let mut q = toolcost::discovery::queries::read(&path).unwrap();
    let problems = real::check(&mut q, &caps);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let para = q.iter().filter(|x| x.kind == QueryKind::Paraphrase).count();
    assert!(q.len() >= 300, "{}", q.len());
    assert!(2 * para >= q.len(), "{para} of {} are paraphrases", q.len());
    // search-eval scores it over the folder of captures, apart from the generated sets.
    let dir = tempfile::tempdir().unwrap();
    toolcost()
        .args([
            "search-eval",
            "--resolver",
            "bm25,bm25f-wordnet",
            "--catalogue",
        ])
        .arg(common::shared().join("real-mcp"))
        .arg("--queries")
        .arg(&path)
        .arg("--out")
        .arg(dir.path())
        .assert()
        .success();
    let scores: Vec<Score> =
        serde_json::from_slice(&std::fs::read(dir.path().join("results.json")).unwrap()).unwrap();
    assert_eq!(scores.len(), 6);
    assert!(scores.iter().all(|s| s.set == "real-mcp" && s.rows == 448));
    // The summary gives the real set its own section and names its best resolver.
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(
        summary.contains("## Recall and MRR: real-mcp queries"),
        "{summary}"
    );
    assert!(
        !summary.contains("## Recall and MRR: generated"),
        "{summary}"
    );
    assert!(
        summary.contains("On the real set the best resolver is"),
        "{summary}"
    );
    let r5 = |res: &str| {
        scores
            .iter()
            .find(|s| s.resolver == res && s.kind == "all")
            .unwrap()
            .recall_at_5
    };
    assert!(r5("bm25f-wordnet") > r5("bm25"));
    // Every capture has queries.
    for (name, _) in &caps {
        assert!(
            q.iter().any(|x| x.server.as_deref() == Some(name)),
            "{name}"
        );
    }
}

/// Recall@5 over all queries of `resolver` on a search-eval run's results.
fn recall5(dir: &std::path::Path, resolver: &str) -> f64 {
    let scores: Vec<Score> =
        serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
    scores
        .iter()
        .find(|s| s.resolver == resolver && s.kind == "all")
        .unwrap_or_else(|| panic!("no {resolver} row"))
        .recall_at_5
}

/// On other people's benchmarks the default resolver never ranks below the textbook BM25:
/// LiveMCPBench's long task-level questions, MetaTool's short requests, the hand-written
/// intents over real servers, and BFCL's function-calling questions, a set the default was not
/// chosen on, where it leads by at least two points of recall@5.
#[test]
fn the_default_resolver_is_never_below_textbook_bm25() {
    let default = toolcost::resolve::Kind::DEFAULT.method().name();
    let sets: [(&str, Vec<std::ffi::OsString>); 4] = [
        (
            "bfcl",
            vec!["--tasks".into(), "fixtures/retrieval/bfcl".into()],
        ),
        (
            "metatool",
            vec!["--tasks".into(), "fixtures/retrieval/metatool".into()],
        ),
        (
            "livemcpbench",
            vec![
                "--tasks".into(),
                common::shared().join("livemcpbench").into(),
            ],
        ),
        (
            "real-mcp",
            vec![
                "--catalogue".into(),
                common::shared().join("real-mcp").into(),
                "--queries".into(),
                "fixtures/queries/real-mcp.jsonl".into(),
            ],
        ),
    ];
    for (name, args) in sets {
        let dir = tempfile::tempdir().unwrap();
        toolcost()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .arg("search-eval")
            .args(&args)
            .args(["--resolver", &format!("bm25-textbook,{default}"), "--out"])
            .arg(dir.path())
            .assert()
            .success();
        let (base, ours) = (
            recall5(dir.path(), "bm25-textbook"),
            recall5(dir.path(), default),
        );
        assert!(ours >= base, "{name}: {ours} < textbook {base}");
        // The held-out set: the lead the issue asks for, out of sample.
        if name == "bfcl" {
            assert!(ours >= base + 0.02, "bfcl: {ours} < textbook {base} + 0.02");
        }
    }
}

/// A task's recall is the share of its tools found, all@5 whether every one is, and NDCG
/// counts each relevant tool where it ranks; a one-answer query counts its first hit only.
#[test]
fn task_metrics_count_every_tool_a_task_needs() {
    use toolcost::discovery::eval::{score, Method, Ranked};
    use toolcost::discovery::queries::{Query, QueryKind};
    let ranked = |kind: QueryKind, relevant: &[&str], top: &[&str]| {
        let relevant: Vec<String> = relevant.iter().map(|s| s.to_string()).collect();
        let top: Vec<String> = top.iter().map(|s| s.to_string()).collect();
        let rank = top.iter().position(|t| relevant.contains(t)).map(|p| p + 1);
        Ranked {
            query: Query {
                text: "q".into(),
                kind,
                target: relevant[0].clone(),
                relevant,
                novel_words: 0.0,
                server: None,
            },
            rank,
            top,
        }
    };
    // Two of a task's four tools in the top 5, at ranks 1 and 3.
    let task = ranked(
        QueryKind::Task,
        &["a", "b", "c", "d"],
        &["a", "x", "b", "y", "z", "c"],
    );
    let s = &score("t", 10, Method::Bm25, std::slice::from_ref(&task), 0.0)[0];
    assert_eq!(s.kind, "all");
    assert!((s.recall_at_5 - 0.5).abs() < 1e-9, "{s:?}");
    assert!((s.recall_at_1 - 0.25).abs() < 1e-9);
    assert_eq!(s.all_at_5, 0.0);
    let gain = |i: usize| 1.0 / ((i + 2) as f64).log2();
    let ideal: f64 = (0..4).map(gain).sum();
    assert!(
        (s.ndcg_at_5 - (gain(0) + gain(2)) / ideal).abs() < 1e-9,
        "{s:?}"
    );
    // Any one of two alternatives answers a query: found at rank 2 it is whole.
    let one = ranked(QueryKind::Paraphrase, &["a", "b"], &["x", "b"]);
    let s = &score("t", 10, Method::Bm25, std::slice::from_ref(&one), 0.0)[0];
    assert_eq!((s.recall_at_5, s.all_at_5), (1.0, 1.0));
    assert!((s.ndcg_at_5 - gain(1)).abs() < 1e-9);
}

/// A task set that names a tool the catalogue lacks, has a bad line or no tasks is refused
/// with the reason.
#[test]
fn a_broken_task_set_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tools.json"),
        r#"{"tools": [{"name": "a", "description": "d", "inputSchema": {"type": "object"}}]}"#,
    )
    .unwrap();
    for (lines, says) in [
        (
            "{\"query\": \"q\", \"relevant\": [\"zz\"]}\n",
            "relevant tool `zz`",
        ),
        (
            "{\"query\": \"q\", \"relevant\": []}\n",
            "names no relevant tool",
        ),
        ("{\"query\": \"q\"}\n", "line 1"),
        (
            "{\"query\": \"q\", \"relevant\": [\"a\"]}\nnot json\n",
            "line 2",
        ),
        ("\n", "no tasks"),
    ] {
        std::fs::write(dir.path().join("queries.jsonl"), lines).unwrap();
        toolcost()
            .args(["search-eval", "--tasks"])
            .arg(dir.path())
            .args(["--out"])
            .arg(dir.path().join("out"))
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
    }
}

/// On LiveMCPBench the best resolver beats the textbook BM25 by at least 3 points of recall@5
/// (the semantic ones need the model), and the committed report's semantic figures regenerate.
/// Vectors can differ in the last bits across CPUs (the matrix kernels are picked at run time),
/// which can move a near tie: the committed figures are matched within two tasks' share.
#[test]
fn a_semantic_resolver_beats_textbook_bm25_on_livemcpbench() {
    if common::encoder().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let semantic = ["dense", "hybrid", "hybrid-definitions"];
    toolcost()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["search-eval", "--tasks"])
        .arg(common::shared().join("livemcpbench"))
        .args([
            "--resolver",
            "bm25-textbook,dense,hybrid,hybrid-definitions",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .success();
    let base = recall5(dir.path(), "bm25-textbook");
    let best = semantic
        .iter()
        .map(|r| recall5(dir.path(), r))
        .fold(0.0, f64::max);
    assert!(best >= base + 0.03, "best {best} against textbook {base}");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let committed: Vec<Score> =
        serde_json::from_slice(&std::fs::read(root.join("reports/search/results.json")).unwrap())
            .unwrap();
    for r in semantic {
        let c = committed
            .iter()
            .find(|s| s.set == "livemcpbench" && s.resolver == r && s.kind == "all")
            .unwrap_or_else(|| panic!("reports/search lacks {r} on livemcpbench"));
        let fresh = recall5(dir.path(), r);
        assert!(
            (c.recall_at_5 - fresh).abs() < 0.022,
            "{r}: committed {} fresh {fresh}",
            c.recall_at_5
        );
    }
}
