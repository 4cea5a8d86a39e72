//! Counting speed per tokenizer family on one core, beside a reference implementation counting
//! the same texts: each family's tokens per second over the Rosetta Code documents of
//! `../shared/claude-counts-text` (or `TOOLCOST_SHARED`), then over the tool definitions of the
//! ten real MCP captures, each text counted on its own and nothing remembered (toolcost counts
//! inside `counting_whole`). The references: tiktoken-rs 0.7 for o200k_base and cl100k_base
//! (the Rust port of OpenAI's tiktoken), splintr 0.22 called directly for the open-weight
//! families and Gemma 3 (the crate that ships their vocabularies; toolcost counts with its
//! encoder, so the two differ only by what toolcost adds around it). Claude's families have no
//! reference implementation in Rust (ctok is Python): their speed is reported alone.
//!
//!     cargo run --release --example family_speed > reports/bench/families.csv
//!
//! Prints CSV: corpus, tokenizer, texts, tokens, toolcost_tokens_per_s, reference,
//! reference_tokens, reference_tokens_per_s, ratio (toolcost / reference, in texts per second,
//! so that a reference that counts other tokens is compared on the same work). Each figure is the best of `RUNS`
//! passes (default 3), which keeps a busy machine's slow pass out.

use std::io::Read;
use std::time::Instant;
use toolcost::tokens::{counting_whole, Tokenizer};

fn shared() -> std::path::PathBuf {
    std::env::var_os("TOOLCOST_SHARED").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"),
        std::path::PathBuf::from,
    )
}

fn rosetta() -> Vec<String> {
    let mut raw = String::new();
    let file = std::fs::File::open(shared().join("claude-counts-text/rosetta.jsonl.gz"))
        .expect("shared/claude-counts-text: set TOOLCOST_SHARED");
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut raw)
        .unwrap();
    raw.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            v["text"].as_str().map(String::from)
        })
        .collect()
}

fn definitions() -> Vec<String> {
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(shared().join("real-mcp"))
        .expect("shared/real-mcp: set TOOLCOST_SHARED")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    for p in files {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        let tools = v["tools"]
            .as_array()
            .or_else(|| v["result"]["tools"].as_array())
            .cloned()
            .unwrap_or_default();
        out.extend(tools.iter().map(|t| t.to_string()));
    }
    out
}

/// The best tokens per second of `runs` passes of `count` over the texts, and the tokens.
fn speed(texts: &[String], runs: usize, count: &dyn Fn(&str) -> usize) -> (usize, f64) {
    let mut best = f64::INFINITY;
    let mut tokens = 0;
    for _ in 0..runs {
        let t0 = Instant::now();
        tokens = texts.iter().map(|t| count(t)).sum();
        best = best.min(t0.elapsed().as_secs_f64());
    }
    (tokens, tokens as f64 / best)
}

type Reference = (&'static str, Box<dyn Fn(&str) -> usize>);

/// tiktoken-rs over a tiktoken rank file with o200k's pattern (Llama 4's, in llama-models'
/// `llama4/tokenizer.py`).
fn tiktoken_of(file: &std::path::Path) -> tiktoken_rs::CoreBPE {
    use base64::Engine;
    const PATTERN: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";
    let text = std::fs::read_to_string(file).expect("the Llama 4 vocabulary");
    let ranks = text.lines().filter(|l| !l.is_empty()).map(|l| {
        let (b64, rank) = l.split_once(' ').expect("a rank line");
        (
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .expect("base64"),
            rank.parse::<u32>().expect("a rank"),
        )
    });
    tiktoken_rs::CoreBPE::new(ranks.collect(), Default::default(), PATTERN).expect("the encoder")
}

fn splintr_reference(vocab: &'static str) -> Reference {
    let tok = splintr::pretrained::from_pretrained(vocab).expect("a bundled vocabulary");
    (
        "splintr 0.22",
        Box::new(move |t: &str| {
            tok.encode_with(t, &splintr::SpecialMode::Ordinary)
                .map(|ids| ids.len())
                .unwrap_or(0)
        }),
    )
}

fn reference(t: Tokenizer) -> Option<Reference> {
    match t {
        Tokenizer::O200k => {
            let bpe = tiktoken_rs::o200k_base().unwrap();
            Some((
                "tiktoken-rs 0.7",
                Box::new(move |s: &str| bpe.encode_ordinary(s).len()),
            ))
        }
        Tokenizer::Cl100k => {
            let bpe = tiktoken_rs::cl100k_base().unwrap();
            Some((
                "tiktoken-rs 0.7",
                Box::new(move |s: &str| bpe.encode_ordinary(s).len()),
            ))
        }
        Tokenizer::Kimi => Some(splintr_reference("kimi_k2")),
        Tokenizer::Deepseek => Some(splintr_reference("deepseek_v3")),
        Tokenizer::Qwen => Some(splintr_reference("qwen3")),
        Tokenizer::Glm => Some(splintr_reference("glm4")),
        Tokenizer::Llama3 => Some(splintr_reference("llama3")),
        Tokenizer::Llama4 => {
            let file = toolcost::tokens::llama4::locate().ok()?;
            let bpe = tiktoken_of(&file);
            Some((
                "tiktoken-rs 0.7",
                Box::new(move |s: &str| bpe.encode_ordinary(s).len()),
            ))
        }
        Tokenizer::Mistral => Some(splintr_reference("mistral_v3")),
        // splintr's encoder over the same SentencePiece vocabulary (version 1's pieces).
        Tokenizer::MistralSpm1 | Tokenizer::MistralSpm3 | Tokenizer::MistralSpm7 => {
            Some(splintr_reference("mistral"))
        }
        Tokenizer::Gemma3 => Some(splintr_reference("gemma3")),
        Tokenizer::ClaudeV5
        | Tokenizer::ClaudeV4_7
        | Tokenizer::ClaudeV3
        | Tokenizer::ClaudeEst
        | Tokenizer::ClaudeLegacyEst => None,
    }
}

fn main() {
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let corpora = [("rosetta", rosetta()), ("real-mcp", definitions())];
    println!("corpus,tokenizer,texts,tokens,toolcost_tokens_per_s,reference,reference_tokens,reference_tokens_per_s,ratio");
    for t in Tokenizer::ALL {
        if matches!(t, Tokenizer::ClaudeEst | Tokenizer::ClaudeLegacyEst) {
            continue;
        }
        // A vocabulary installed apart (Llama 4's) is measured where it is installed.
        if t.ready().is_err() {
            continue;
        }
        let reference = reference(t);
        for (name, texts) in &corpora {
            // Loaded before the clock starts.
            t.count("warm up");
            let ours = |s: &str| counting_whole(|| t.count(s)) as usize;
            let (tokens, ours_speed) = speed(texts, runs, &ours);
            let (ref_name, ref_tokens, ref_speed) = match &reference {
                Some((n, f)) => {
                    f("warm up");
                    let (ref_tokens, s) = speed(texts, runs, f.as_ref());
                    (*n, Some(ref_tokens), Some(s))
                }
                None => ("none", None, None),
            };
            // The same texts in the same time: the ratio of texts per second.
            let ratio = match (ref_tokens, ref_speed) {
                (Some(n), Some(s)) if n > 0 && tokens > 0 => {
                    Some((ours_speed / tokens as f64) / (s / n as f64))
                }
                _ => None,
            };
            println!(
                "{name},{},{},{tokens},{:.0},{ref_name},{},{},{}",
                t.name(),
                texts.len(),
                ours_speed,
                ref_tokens.map_or(String::new(), |n| n.to_string()),
                ref_speed.map_or(String::new(), |s| format!("{s:.0}")),
                ratio.map_or(String::new(), |r| format!("{r:.2}")),
            );
        }
    }
}
