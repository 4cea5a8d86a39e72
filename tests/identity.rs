//! Model identity apart from price: ids as users, hosts and recordings write them resolve to
//! their own model's tokenizer and rules, and `count` answers for each with no price.

use toolcost::identity::resolve;

/// (id, tokenizer, render): the tokenizer and render each id's model card names.
const IDS: &[(&str, &str, &str)] = &[
    // Anthropic: bare, dated, retired, Bedrock, cross-region, Vertex, hosts.
    (
        "claude-sonnet-4-20250514",
        "claude-v3",
        "anthropic:claude-sonnet-4",
    ),
    (
        "claude-sonnet-4-0",
        "claude-v3",
        "anthropic:claude-sonnet-4",
    ),
    (
        "claude-3-5-haiku",
        "claude-v3",
        "anthropic:claude-3-5-haiku",
    ),
    (
        "claude-3-5-haiku-20241022",
        "claude-v3",
        "anthropic:claude-3-5-haiku",
    ),
    (
        "claude-3-7-sonnet@20250219",
        "claude-v3",
        "anthropic:claude-3-7-sonnet",
    ),
    (
        "claude-3-7-sonnet-latest",
        "claude-v3",
        "anthropic:claude-3-7-sonnet",
    ),
    (
        "anthropic.claude-3-5-sonnet-20241022-v2:0",
        "claude-v3",
        "anthropic:claude-3-5-sonnet",
    ),
    (
        "us.anthropic.claude-sonnet-4-20250514-v1:0",
        "claude-v3",
        "anthropic:claude-sonnet-4",
    ),
    (
        "eu.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "claude-v3",
        "anthropic:claude-sonnet-4-5",
    ),
    (
        "bedrock/us-east-1/anthropic.claude-opus-4-1-20250805-v1:0",
        "claude-v3",
        "anthropic:claude-opus-4-1",
    ),
    (
        "vertex_ai/claude-opus-4-6@20260205",
        "claude-v3",
        "anthropic:claude-opus-4-6",
    ),
    (
        "openrouter/anthropic/claude-sonnet-4.5",
        "claude-v3",
        "anthropic:claude-sonnet-4-5",
    ),
    (
        "anthropic/claude-opus-4-7",
        "claude-v4.7",
        "anthropic:claude-opus-4-7",
    ),
    ("claude-opus-5", "claude-v5", "anthropic:claude-5"),
    (
        "claude-sonnet-5-5",
        "claude-v5",
        "anthropic:claude-sonnet-5-5",
    ),
    (
        "vercel_ai_gateway/anthropic/claude-sonnet-5",
        "claude-v5",
        "anthropic:claude-sonnet-5",
    ),
    // OpenAI: generations by tokenizer.
    ("gpt-4o", "o200k", "openai:gpt-4o"),
    ("gpt-4o-2024-05-13", "o200k", "openai:gpt-4o-2024-05-13"),
    ("gpt-4.1-mini", "o200k", "openai:gpt-4.1-mini"),
    ("gpt-4-turbo", "cl100k", "openai:gpt-4-turbo"),
    ("gpt-4", "cl100k", "openai:gpt-4"),
    ("gpt-3.5-turbo", "cl100k", "openai:gpt-3.5-turbo"),
    ("o3-mini", "o200k", "openai:o3-mini"),
    ("o4-mini", "o200k", "openai:o4-mini"),
    ("gpt-5", "o200k", "openai:gpt-5"),
    ("openai/gpt-5.4", "o200k", "openai:gpt-5.4"),
    ("vercel_ai_gateway/openai/gpt-5", "o200k", "openai:gpt-5"),
    (
        "openrouter/openai/gpt-4o-mini",
        "o200k",
        "openai:gpt-4o-mini",
    ),
    ("azure/gpt-4.1", "o200k", "openai:gpt-4.1"),
    // Gemini: Developer API and Vertex AI.
    (
        "gemini-3-pro-preview",
        "gemma3",
        "gemini:gemini-3-pro-preview",
    ),
    (
        "gemini/gemini-2.5-flash",
        "gemma3",
        "gemini:gemini-2.5-flash",
    ),
    ("gemini-2.0-flash", "gemma3", "gemini:gemini-2.0-flash"),
    (
        "vertex_ai/gemini-2.5-pro",
        "gemma3",
        "vertex:gemini-2.5-pro",
    ),
    (
        "openrouter/google/gemini-2.5-flash",
        "gemma3",
        "gemini:gemini-2.5-flash",
    ),
    // Open families: bare names, Hugging Face repos, Ollama tags, host prefixes.
    ("kimi-k2.5", "kimi", "open:kimi-k2.5"),
    ("kimi-k2-0905-preview", "kimi", "open:kimi-k2"),
    ("moonshotai/Kimi-K2-Instruct-0905", "kimi", "open:kimi-k2"),
    ("groq/moonshotai/kimi-k2-instruct", "kimi", "open:kimi-k2"),
    (
        "accounts/fireworks/models/kimi-k2p5",
        "kimi",
        "open:kimi-k2.5",
    ),
    ("together_ai/moonshotai/Kimi-K2.5", "kimi", "open:kimi-k2.5"),
    ("kimi-k2.7-code", "kimi", "open:kimi-k2.5"),
    (
        "cloudflare/@cf/moonshotai/kimi-k2.7-code",
        "kimi",
        "open:kimi-k2.5-json",
    ),
    ("qwen3-max", "qwen", "open:qwen3"),
    ("Qwen/Qwen3-235B-A22B", "qwen", "open:qwen3"),
    ("openrouter/qwen/qwen3-32b", "qwen", "open:qwen3"),
    ("Qwen/Qwen2.5-72B-Instruct", "qwen", "open:qwen2.5"),
    ("qwen2.5:7b", "qwen", "open:qwen2.5"),
    ("glm-4.7", "glm", "open:glm-4.7"),
    ("zai-org/GLM-4.6", "glm", "open:glm-4.5"),
    ("glm-4.5-air", "glm", "open:glm-4.5"),
    ("deepseek-chat", "deepseek", "open:deepseek-v4"),
    (
        "deepseek-ai/DeepSeek-V3-0324",
        "deepseek",
        "open:deepseek-v3",
    ),
    ("deepseek/deepseek-v3.2", "deepseek", "open:deepseek-v4"),
    ("mistral-large", "mistral", "open:mistral-v3"),
    (
        "mistral-large-2411",
        "mistral-spm-v7",
        "open:mistral-v7-spm",
    ),
    (
        "mistralai/Mistral-7B-Instruct-v0.3",
        "mistral-spm-v3",
        "open:mistral-v3-spm",
    ),
    ("mistral-small-latest", "mistral", "open:mistral-v11"),
    ("gpt-oss:120b", "o200k", "open:harmony"),
    ("openai/gpt-oss-20b", "o200k", "open:harmony"),
    ("groq/openai/gpt-oss-120b", "o200k", "open:harmony"),
    ("meta-llama/Llama-3.3-70B-Instruct", "llama3", "open:llama3"),
    ("llama3.1:8b", "llama3", "open:llama3"),
];

#[test]
fn every_id_resolves_to_its_models_tokenizer_and_rules() {
    let mut wrong = Vec::new();
    for (id, tok, render) in IDS {
        match resolve(id) {
            Ok(m) => {
                let (_, t, r) = m.rules();
                if t.name() != *tok || r != *render {
                    wrong.push(format!("{id}: {} {r}, expected {tok} {render}", t.name()));
                }
            }
            Err(e) => wrong.push(format!("{id}: {e}")),
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert!(IDS.len() >= 60);
}

/// An unknown model is refused, and its suggestions come from its own family where one of its
/// words names one (never the very id refused).
#[test]
fn unknown_models_are_refused_with_their_familys_names() {
    let e = resolve("nosuch-model-7b").unwrap_err().to_string();
    assert!(e.contains("unknown model `nosuch-model-7b`"), "{e}");
    for (id, family) in [
        ("qwen-nonesuch", "qwen"),
        ("mistral-nonesuch", "mistral"),
        ("glm-nonesuch", "glm"),
    ] {
        // These resolve by family (their template) even unpriced; the suggestions of the
        // pricing error name the family's models.
        let near = toolcost::pricing::family::closest(
            id,
            toolcost::pricing::litellm::Snapshot::embedded(),
        );
        assert!(
            !near.is_empty() && near.iter().all(|n| n.to_lowercase().contains(family)),
            "{id}: {near:?}"
        );
        assert!(!near.iter().any(|n| n == id));
    }
}

/// `count` needs no price: each id of the issue that was refused answers, and `prices show`
/// says where a model is unpriced.
#[test]
fn count_answers_for_ids_nothing_prices() {
    for id in [
        "claude-sonnet-4-20250514",
        "us.anthropic.claude-sonnet-4-20250514-v1:0",
        "qwen3-max",
        "kimi-k2.5",
        "kimi-k2-0905-preview",
        "glm-4.7",
        "mistral-large",
        "gpt-oss:120b",
        "gemini-3-pro-preview",
        "moonshotai/Kimi-K2-Instruct-0905",
        "openrouter/anthropic/claude-sonnet-4.5",
        "vercel_ai_gateway/openai/gpt-5",
    ] {
        let out = assert_cmd::Command::cargo_bin("toolcost")
            .unwrap()
            .args(["count", "--model", id, "--json"])
            .write_stdin("hello world")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{id}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(v["tokens"].as_u64().unwrap() >= 2, "{id}: {v}");
    }
    let out = assert_cmd::Command::cargo_bin("toolcost")
        .unwrap()
        .args(["prices", "show", "qwen3-max"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("unpriced"));
}

/// A Gemini body names its model in the URL: `count --request` takes it with --model.
#[test]
fn count_takes_a_gemini_body_with_the_model_from_the_command_line() {
    let body = r#"{"contents":[{"role":"user","parts":[{"text":"hello world"}]}]}"#;
    for model in ["gemini-2.5-flash", "vertex_ai/gemini-2.5-flash"] {
        let out = assert_cmd::Command::cargo_bin("toolcost")
            .unwrap()
            .args(["count", "--model", model, "--request", "--json"])
            .write_stdin(body)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{model}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// One bill per body: on every recorded request the repository holds, the gateway's mock, `count
/// --request` (the model's identity) and the `claude-counts` report choose the same rules and
/// give the same figure.
#[test]
fn the_gateway_count_and_the_report_bill_each_recorded_claude_request_alike() {
    use toolcost::billing::billed_input;
    use toolcost::wire::{Format, Request};
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/claude-requests/requests.jsonl.gz"
    );
    let set = toolcost::claude_counts::requests::load(&std::fs::read(path).unwrap()).unwrap();
    let (rows, _) = toolcost::claude_counts::requests::check(&set).unwrap();
    assert_eq!(rows.len(), set.len());
    let mut compared = 0;
    for (v, row) in set.iter().zip(&rows) {
        if v["body"].get("messages").is_none() {
            continue;
        }
        let model = v["model"].as_str().unwrap();
        let req = Request::new(Format::AnthropicMessages, v["body"].clone());
        let card = toolcost::gateway::mock::card_for(Format::AnthropicMessages, model);
        let gateway = billed_input(&req, card.render_model(), card.tokenizer()).input_tokens;
        let (render, tok, _) = resolve(model).unwrap().rules();
        let count = billed_input(&req, render, tok).input_tokens;
        assert_eq!(gateway, count, "row {}: {model}", row.row);
        assert_eq!(count, row.estimate, "row {}: {model}", row.row);
        compared += 1;
    }
    assert!(compared > 100, "{compared}");
}

/// `--tokenizer claude` is Claude's current tokenizer counted exactly, and `claude-legacy` the
/// earlier family counted exactly; the estimates keep their own names.
#[test]
fn the_claude_tokenizer_names_are_the_exact_ones() {
    use toolcost::tokens::Tokenizer;
    assert_eq!(Tokenizer::parse("claude").unwrap(), Tokenizer::ClaudeV5);
    assert_eq!(
        Tokenizer::parse("claude-legacy").unwrap(),
        Tokenizer::ClaudeV3
    );
    assert_eq!(
        Tokenizer::parse("claude-est").unwrap(),
        Tokenizer::ClaudeEst
    );
    assert_eq!(
        Tokenizer::parse("claude-legacy-est").unwrap(),
        Tokenizer::ClaudeLegacyEst
    );
}

/// `measure --model` takes the client that speaks the model's own API unless one is named.
#[test]
fn measure_takes_the_models_own_client() {
    for (model, client) in [
        ("gpt-5.4", "openai-responses-agent"),
        ("gemini-3.5-flash", "gemini-cli"),
        ("claude-sonnet-5-5", "claude-cli"),
    ] {
        let out = assert_cmd::Command::cargo_bin("toolcost")
            .unwrap()
            .args([
                "measure",
                "--rows",
                "5",
                "--surface",
                "per-row-mcp",
                "--json",
                "--model",
                model,
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{model}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(rows[0]["client"], client, "{model}");
    }
}
