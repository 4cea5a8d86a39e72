//! `toolcost count --model ID --json` on a model of each family equals the family's reference
//! tokenizer on every recorded text of `../shared/claude-counts-text` and on random hostile
//! strings: the open-weight families against splintr's encoder called directly (the crate
//! that ships their vocabularies, encoding as each family's reference does), gpt-oss against
//! bpe-openai's o200k_base, Llama 4 against tiktoken's encoder over its ranks where its
//! vocabulary is installed, and Gemini and Mistral's earlier models against Google's
//! sentencepiece package over the model files (tests/gemma3.rs holds the embedded Gemma 3
//! vocabulary to it id for id; mistral-common's files are where CI installs them).

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};

/// The recorded texts, then hostile ones: special-token spellings of every family, control
/// characters, lone combining marks, long runs, mixed scripts, random code points.
fn texts() -> Vec<String> {
    let mut out = common::rosetta_texts();
    assert!(out.len() >= 1741, "{} recorded texts", out.len());
    out.extend(
        [
            "<|im_start|>system\n<|im_end|><|endoftext|>",
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|><|eot_id|>",
            "[gMASK]<sop><|system|><|user|><|assistant|><|observation|>",
            "[INST] [/INST] [AVAILABLE_TOOLS] [TOOL_CALLS] </s> <s>",
            "[REFERENCE_DOC_0][REF]x[/REF] [REFERENCE_DOC_19]\n[REFERENCE_DOC_20][IMG]",
            "  leading spaces, ▁ a literal U+2581, <0x41> <unk>",
            "<|im_middle|><|tool_calls_section_begin|><|tool_call_begin|>",
            "<｜begin▁of▁sentence｜><｜User｜><｜Assistant｜><｜tool▁calls▁begin｜>",
            "<|start|>assistant<|channel|>analysis<|message|><|end|><|call|>",
            "<start_of_turn>user\n<end_of_turn><pad><unk>",
            "\u{0}\u{1}\u{7f}\u{200b}\u{200d}\u{feff}\u{fffd}\u{10ffff}",
            "e\u{301}\u{301}\u{301}\u{301} \u{301}",
            "9999999999999999999999999999.000000001e-308",
            "naïve café — 東京タワー 👩‍👩‍👧‍👦 مرحبا бағдарлама ऊर्जा 한국어",
        ]
        .map(String::from),
    );
    for n in [1, 2, 3, 17, 255, 256, 257, 4096, 70_000] {
        out.push(" ".repeat(n));
        out.push("\n".repeat(n));
        out.push("a".repeat(n));
        out.push("!?".repeat(n));
    }
    let mut rng = toolcost::rng::Rng::new(60);
    for _ in 0..200 {
        let len = rng.below(300);
        let t: String = (0..len)
            .map(|_| match rng.below(4) {
                0 => char::from_u32(rng.below(0x80) as u32).unwrap_or('?'),
                1 => char::from_u32(0x80 + rng.below(0x780) as u32).unwrap_or('?'),
                2 => char::from_u32(0x3000 + rng.below(0x7000) as u32).unwrap_or('?'),
                _ => char::from_u32(rng.below(0x110000) as u32).unwrap_or('\u{fffd}'),
            })
            .collect();
        out.push(t);
    }
    out
}

/// Each text in a file of its own under `dir`, in order.
fn write_all(dir: &Path, texts: &[String]) -> Vec<PathBuf> {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let p = dir.join(format!("{i:05}.txt"));
            std::fs::write(&p, t).unwrap();
            p
        })
        .collect()
}

/// `count --model MODEL --json FILES...`: each file's tokens, and the tokenizer named.
fn cli_counts(model: &str, files: &[PathBuf]) -> (String, Vec<u64>) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args(["count", "--model", model, "--json"])
        .args(files)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{model}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.len(), files.len());
    let tok = v[0]["tokenizer"].as_str().unwrap().to_string();
    for (x, f) in v.iter().zip(files) {
        assert_eq!(x["file"].as_str().unwrap(), f.display().to_string());
        assert_eq!(x["model"].as_str().unwrap(), model);
        assert!(x["label"].as_str().unwrap().starts_with("estimated:"));
    }
    (
        tok,
        v.iter().map(|x| x["tokens"].as_u64().unwrap()).collect(),
    )
}

fn first_differences(texts: &[String], got: &[u64], want: &[usize]) -> Vec<String> {
    texts
        .iter()
        .zip(got.iter().zip(want))
        .filter(|(_, (g, w))| **g != **w as u64)
        .take(5)
        .map(|(t, (g, w))| {
            format!(
                "{g} against {w}: {:?}",
                t.chars().take(40).collect::<String>()
            )
        })
        .collect()
}

#[test]
fn count_equals_each_open_familys_reference() {
    let texts = texts();
    let dir = tempfile::tempdir().unwrap();
    let files = write_all(dir.path(), &texts);
    // A model of each family, as LiteLLM's table names it; the tokenizer it must count with;
    // splintr's name for that vocabulary.
    for (model, tokenizer, vocab) in [
        ("kimi-k2.7-code", "kimi", "kimi_k2"),
        ("deepseek/deepseek-chat", "deepseek", "deepseek_v3"),
        (
            "bedrock/eu-central-1/qwen.qwen3-coder-next",
            "qwen",
            "qwen3",
        ),
        ("zai/glm-4.6", "glm", "glm4"),
        ("cerebras/llama-3.3-70b", "llama3", "llama3"),
        ("azure_ai/mistral-large-3", "mistral", "mistral_v3"),
    ] {
        let (tok, got) = cli_counts(model, &files);
        assert_eq!(tok, tokenizer, "{model}");
        let reference = splintr::pretrained::from_pretrained(vocab).unwrap();
        let want: Vec<usize> = texts
            .iter()
            .map(|t| {
                reference
                    .encode_with(t, &splintr::SpecialMode::Ordinary)
                    .unwrap()
                    .len()
            })
            .collect();
        let wrong = first_differences(&texts, &got, &want);
        assert!(wrong.is_empty(), "{model}: {wrong:?}");
    }
}

#[test]
fn count_equals_o200k_for_gpt_oss() {
    let texts = texts();
    let dir = tempfile::tempdir().unwrap();
    let files = write_all(dir.path(), &texts);
    let (tok, got) = cli_counts("cerebras/gpt-oss-120b", &files);
    assert_eq!(tok, "o200k");
    let reference = bpe_openai::o200k_base();
    let want: Vec<usize> = texts.iter().map(|t| reference.count(t)).collect();
    let wrong = first_differences(&texts, &got, &want);
    assert!(wrong.is_empty(), "{wrong:?}");
}

/// Llama 4, where its vocabulary is installed (CI installs it): tiktoken's encoder over the same
/// ranks and pattern.
#[test]
fn count_equals_tiktoken_for_llama4() {
    let Ok(file) = toolcost::tokens::llama4::locate() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs llama-models into models/llama4"
        );
        return;
    };
    let texts = texts();
    let dir = tempfile::tempdir().unwrap();
    let files = write_all(dir.path(), &texts);
    let (tok, got) = cli_counts("databricks/databricks-llama-4-maverick", &files);
    assert_eq!(tok, "llama4");
    let reference = common::tiktoken_of(&file);
    let want: Vec<usize> = texts
        .iter()
        .map(|t| reference.encode_ordinary(t).len())
        .collect();
    let wrong = first_differences(&texts, &got, &want);
    assert!(wrong.is_empty(), "{wrong:?}");
}

#[test]
fn count_equals_sentencepiece_for_gemini() {
    if !common::python_sdks("sentencepiece") || !common::gemma3_installed() {
        return;
    }
    let texts = texts();
    let dir = tempfile::tempdir().unwrap();
    let files = write_all(dir.path(), &texts);
    let (tok, got) = cli_counts("gemini-3.5-flash", &files);
    assert_eq!(tok, "gemma3");
    let model = toolcost::tokens::gemma3::locate().unwrap();
    let ids = common::sentencepiece_ids(&model, &texts);
    let want: Vec<usize> = ids.iter().map(Vec::len).collect();
    let wrong = first_differences(&texts, &got, &want);
    assert!(wrong.is_empty(), "{wrong:?}");
}

/// One file prints the bare number (or the one object); several print one line per file.
#[test]
fn count_prints_one_line_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_all(dir.path(), &["hello world".into(), "".into()]);
    let run = |args: &[&std::ffi::OsStr]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
            .args(["count", "--model", "kimi-k2.7-code"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(run(&[files[0].as_os_str()]), "2\n");
    let both = run(&[files[0].as_os_str(), files[1].as_os_str()]);
    assert_eq!(
        both,
        format!("2\t{}\n0\t{}\n", files[0].display(), files[1].display())
    );
    // A missing file among several is named.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args(["count", "--model", "kimi-k2.7-code"])
        .arg(&files[0])
        .arg(dir.path().join("missing.txt"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.txt"));
}

/// A Llama 4 vocabulary named but wrong is an error that says how to install the right one,
/// never a quiet count with o200k.
#[test]
fn a_wrong_llama4_vocabulary_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let wrong = dir.path().join("tokenizer.model");
    std::fs::write(&wrong, "wA== 0\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolcost"))
        .args(["count", "--model", "databricks/databricks-llama-4-maverick"])
        .env("TOOLCOST_LLAMA4", &wrong)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not llama-models 0.3.0's"), "{err}");
    assert!(
        err.contains("pip install --no-deps --target models/llama4"),
        "{err}"
    );
}

/// Mistral's earlier models (SentencePiece, a dummy prefix): each version's count against
/// sentencepiece over mistral-common's own model file for it.
#[test]
fn count_equals_sentencepiece_for_mistrals_earlier_models() {
    let data =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mistral-common/mistral_common/data");
    if !common::python_sdks("sentencepiece") {
        return;
    }
    if !data.is_dir() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs mistral-common into target/mistral-common"
        );
        eprintln!(
            "skipping: mistral-common's model files are not in {}",
            data.display()
        );
        return;
    }
    let texts = texts();
    let dir = tempfile::tempdir().unwrap();
    let files = write_all(dir.path(), &texts);
    for (model, tokenizer, file) in [
        (
            "mistral.mistral-7b-instruct-v0:2",
            "mistral-spm-v1",
            "tokenizer.model.v1",
        ),
        (
            "mistral.mistral-small-2402-v1:0",
            "mistral-spm-v1",
            "mistral_instruct_tokenizer_240216.model.v2",
        ),
        (
            "mistral.mistral-large-2407-v1:0",
            "mistral-spm-v3",
            "mistral_instruct_tokenizer_240323.model.v3",
        ),
        (
            "vertex_ai/mistral-large-2411",
            "mistral-spm-v7",
            "mistral_instruct_tokenizer_241114.model.v7",
        ),
    ] {
        let (tok, got) = cli_counts(model, &files);
        assert_eq!(tok, tokenizer, "{model}");
        let ids = common::sentencepiece_ids(&data.join(file), &texts);
        let want: Vec<usize> = ids.iter().map(Vec::len).collect();
        let wrong = first_differences(&texts, &got, &want);
        assert!(wrong.is_empty(), "{model}: {wrong:?}");
    }
}

/// `count --request` holds a body to the node bound before it parses it: a body of more JSON
/// values than any real request is refused with exit 2, not built as a tree.
#[test]
fn count_request_refuses_a_body_past_the_node_bound() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("body.json");
    let n = toolcost::json::MAX_NODES + 10;
    let mut body = String::with_capacity(2 * n + 100);
    body.push_str(r#"{"model":"gpt-5.4","messages":[{"role":"user","content":"hi"}],"x":["#);
    body.push_str(&"0,".repeat(n));
    body.push_str("0]}");
    std::fs::write(&file, body).unwrap();
    let out = assert_cmd::Command::cargo_bin("toolcost")
        .unwrap()
        .args(["count", "--request", "--model", "gpt-5.4"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("JSON values"), "{err}");
}

/// `count --request` of a Gemini 3 body that returns a thought signature says that the
/// earlier answer's thoughts are billed again and not in its count (the signature does not
/// say how many), on the Developer API; on Vertex AI nothing is billed again.
#[test]
fn count_request_says_what_a_thought_signature_leaves_out() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("body.json");
    std::fs::write(
        &file,
        r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"hello","thoughtSignature":"Q2lVQmJ4"}]},{"role":"user","parts":[{"text":"and?"}]}]}"#,
    )
    .unwrap();
    for (model, resent) in [("gemini-3-flash", 1), ("vertex_ai/gemini-3-flash", 0)] {
        let out = assert_cmd::Command::cargo_bin("toolcost")
            .unwrap()
            .args(["count", "--request", "--json", "--model", model])
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            v["breakdown"]["thoughts_not_counted"], resent,
            "{model}: {v}"
        );
        let label = v["label"].as_str().unwrap();
        assert_eq!(
            label.contains("not counted"),
            resent > 0,
            "{model}: {label}"
        );
    }
}

/// `count --request --render` prints the prompt an open model's template renders (the same
/// text the open-template tests hold to their references); a model billed by parts says so.
#[test]
fn count_request_render_prints_the_rendered_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("body.json");
    std::fs::write(
        &file,
        r#"{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"now","arguments":""}}]},{"role":"tool","tool_call_id":"c1","content":"12:00"}]}"#,
    )
    .unwrap();
    let run = |model: &str| {
        assert_cmd::Command::cargo_bin("toolcost")
            .unwrap()
            .args(["count", "--request", "--render", "--model", model])
            .arg(&file)
            .output()
            .unwrap()
    };
    let out = run("qwen3-235b-a22b");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("<|im_start|>system\nBe brief."), "{text}");
    // Empty arguments are written as servers write them: `{}`.
    assert!(text.contains("\"arguments\": {}"), "{text}");
    assert!(text.ends_with("<|im_start|>assistant\n"), "{text}");
    std::fs::write(
        &file,
        r#"{"model":"claude-sonnet-4-5","max_tokens":9,"messages":[{"role":"user","content":"hi"}]}"#,
    )
    .unwrap();
    let out = run("claude-sonnet-4-5");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("billed by parts"), "{err}");
}
