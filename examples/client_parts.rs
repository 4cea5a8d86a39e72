//! Writes the text of a client profile made from a real client's measured parts.
//!
//! The text of a real client's system prompt and built-in tools is its maker's and cannot be
//! shipped; their sizes can (`fixtures/clients/<name>/parts.toml`: UTF-8 bytes and tokens under
//! Kimi's, o200k's and Claude's claude-v3 and claude-v5 tokenizers, each part counted alone, a
//! tool as its compact `{"name","description","input_schema"}` JSON). This program writes, for
//! each part, text of this project's own whose sizes equal the measured ones: sentences drawn
//! from prose the project's client profiles hold (`pool.md` and the other profiles), chosen and then adjusted word by
//! word until every count is within a tenth of the tolerance the tests hold it to (1% on Kimi
//! and o200k, 2% on the Claude families and on bytes; a part under 200 bytes, whose counts
//! cannot be a tenth of a token off, is left as soon as it is within them). Tools keep the schema written for them in
//! `schemas.json`; only their description is chosen. The result is deterministic (a fixed seed)
//! and starts from the part's current text, so a rerun changes nothing that already fits.
//!
//! Run: `cargo run --release --example client_parts -- fixtures/clients/claude-cli`

use serde::Deserialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use toolcost::rng::Rng;
use toolcost::tokens::Tokenizer;

#[derive(Debug, Clone, Deserialize)]
struct Part {
    kind: String,
    name: String,
    bytes: f64,
    kimi: f64,
    o200k: f64,
    claude_v3: f64,
    claude_v5: f64,
}

#[derive(Deserialize)]
struct Parts {
    part: Vec<Part>,
}

const TOKENIZERS: [Tokenizer; 4] = [
    Tokenizer::Kimi,
    Tokenizer::O200k,
    Tokenizer::ClaudeV3,
    Tokenizer::ClaudeV5,
];
/// The tolerance each figure is held to: bytes, Kimi, o200k, claude-v3, claude-v5.
const TOLERANCE: [f64; 5] = [0.02, 0.01, 0.01, 0.02, 0.02];

impl Part {
    fn target(&self) -> [f64; 5] {
        [
            self.bytes,
            self.kimi,
            self.o200k,
            self.claude_v3,
            self.claude_v5,
        ]
    }
}

/// A text's sizes: bytes, then each tokenizer's count.
fn sizes(text: &str) -> [f64; 5] {
    let mut s = [text.len() as f64, 0.0, 0.0, 0.0, 0.0];
    for (i, t) in TOKENIZERS.iter().enumerate() {
        s[i + 1] = t.count(text);
    }
    s
}

/// How far sizes are from a target: the largest share of its tolerance any figure is off by.
fn error(s: &[f64; 5], t: &[f64; 5]) -> f64 {
    (0..5)
        .map(|k| ((s[k] - t[k]) / t[k]).abs() / TOLERANCE[k])
        .fold(0.0, f64::max)
}

/// A smooth version of [`error`] for choosing between candidates that all miss.
fn score(s: &[f64; 5], t: &[f64; 5]) -> f64 {
    (0..5)
        .map(|k| (((s[k] - t[k]) / t[k]) / TOLERANCE[k]).powi(2))
        .sum()
}

/// Sentences and lines of the prose the project already holds, each with the separator that
/// followed it.
fn pool(root: &Path) -> Vec<String> {
    let mut texts = Vec::new();
    if let Ok(t) = std::fs::read_to_string(root.join("fixtures/clients/claude-cli/pool.md")) {
        texts.push(t);
    }
    for client in [
        "claude-cli",
        "gemini-cli",
        "openai-agent",
        "openai-responses-agent",
    ] {
        let dir = root.join("fixtures/clients").join(client);
        for f in ["system.md", "context.md"] {
            if let Ok(t) = std::fs::read_to_string(dir.join(f)) {
                texts.push(t);
            }
        }
        if let Ok(t) = std::fs::read_to_string(dir.join("tools.json")) {
            if let Ok(Value::Array(tools)) = serde_json::from_str::<Value>(&t) {
                for tool in tools {
                    if let Some(d) = tool["description"].as_str() {
                        texts.push(d.to_string());
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for t in texts {
        for line in t.split_inclusive('\n') {
            let mut rest = line;
            // Sentences of a prose line; a line that is not prose stays whole.
            while let Some(i) = rest.find(". ") {
                out.push(rest[..i + 2].to_string());
                rest = &rest[i + 2..];
            }
            if !rest.is_empty() {
                out.push(rest.to_string());
            }
        }
    }
    out.retain(|s| !s.trim().is_empty() && s.len() < 600);
    out.sort();
    out.dedup();
    out
}

/// The words of the pool, for adjustments.
fn words(pool: &[String]) -> Vec<String> {
    let mut w: Vec<String> = pool
        .iter()
        .flat_map(|s| s.split_whitespace())
        .filter(|w| w.len() < 24)
        .map(str::to_string)
        .collect();
    w.sort();
    w.dedup();
    w
}

/// How a part's text becomes the text that is counted.
enum Shape {
    Text,
    Tool { name: String, schema: Value },
}

impl Shape {
    fn render(&self, text: &str) -> String {
        match self {
            Shape::Text => text.to_string(),
            Shape::Tool { name, schema } => serde_json::to_string(
                &json!({"name": name, "description": text, "input_schema": schema}),
            )
            .expect("json"),
        }
    }
}

/// Text for one part: sentences chosen greedily toward the target, then adjusted (a sentence
/// swapped, added or dropped, a word replaced) while that brings the counts nearer.
fn fit(
    start: &str,
    shape: &Shape,
    target: [f64; 5],
    pool: &[String],
    words: &[String],
    seed: u64,
) -> String {
    let mut rng = Rng::new(seed);
    let fixed = sizes(&shape.render(""));
    let mut segs: Vec<String> = match start.is_empty() {
        true => Vec::new(),
        false => start
            .split_inclusive(['\n', ' '])
            .map(str::to_string)
            .collect(),
    };
    let eval = |segs: &[String]| sizes(&shape.render(&segs.concat()));
    if segs.is_empty() {
        // Greedy: counts of the pieces add up closely enough to choose by.
        let counted: Vec<[f64; 5]> = pool.iter().map(|s| sizes(s)).collect();
        let mut have = fixed;
        let mut used = vec![false; pool.len()];
        while have[0] < target[0] * 0.97 {
            let progress = (have[0] + 1.0) / target[0];
            // Whole sentences first; short lines only to finish.
            let short_ok = target[0] - have[0] < 120.0;
            let best = (0..pool.len())
                .filter(|&i| !used[i] && have[0] + counted[i][0] <= target[0] * 1.01)
                .filter(|&i| short_ok || pool[i].len() >= 40)
                .min_by(|&a, &b| {
                    let s = |i: usize| {
                        let p = (have[0] + counted[i][0]) / target[0];
                        (1..5)
                            .map(|k| ((have[k] + counted[i][k]) / target[k] - p).powi(2))
                            .sum::<f64>()
                            + (p - progress).abs() * 1e-3
                    };
                    s(a).total_cmp(&s(b))
                });
            let Some(i) = best else { break };
            used[i] = true;
            for k in 0..5 {
                have[k] += counted[i][k];
            }
            segs.push(pool[i].clone());
        }
    }
    let mut now = eval(&segs);
    let mut err = score(&now, &target);
    let enough = match target[0] < 200.0 {
        true => 1.0,
        false => 0.1,
    };
    for step in 0..20_000 {
        if error(&now, &target) <= enough {
            break;
        }
        let mut next = segs.clone();
        // Sentences are swapped, added or dropped first; words only once that stops helping.
        let move_kind = match step < 8_000 {
            true => rng.below(3),
            false => rng.below(5),
        };
        match move_kind {
            0 if !next.is_empty() => {
                let i = rng.below(next.len());
                next[i] = pool[rng.below(pool.len())].clone();
            }
            1 if next.len() > 1 => {
                next.remove(rng.below(next.len()));
            }
            2 => {
                let at = rng.below(next.len() + 1);
                next.insert(at, pool[rng.below(pool.len())].clone());
            }
            _ if !next.is_empty() => {
                // One word in place of another, the separator kept.
                let i = rng.below(next.len());
                let sep: String = next[i]
                    .chars()
                    .rev()
                    .take_while(|c| c.is_whitespace())
                    .collect();
                let body = next[i].trim_end().to_string();
                let mut ws: Vec<&str> = body.split(' ').collect();
                let w = words[rng.below(words.len())].as_str();
                let j = rng.below(ws.len());
                match rng.below(3) {
                    0 => ws[j] = w,
                    1 => ws.insert(j, w),
                    _ if ws.len() > 1 => {
                        ws.remove(j);
                    }
                    _ => ws[j] = w,
                }
                next[i] = format!("{}{}", ws.join(" "), sep.chars().rev().collect::<String>());
            }
            _ => continue,
        }
        let s = eval(&next);
        let e = score(&s, &target);
        if e < err {
            segs = next;
            now = s;
            err = e;
        }
        if step % 2000 == 1999 {
            eprintln!("  step {step}: {:.3}", error(&now, &target));
        }
    }
    segs.concat()
}

fn main() {
    if let Some(text) = std::env::args()
        .nth(1)
        .and_then(|a| (a == "--count").then(|| std::env::args().nth(2)))
        .flatten()
    {
        println!("{:?}", sizes(&text).map(|x| x as u64));
        return;
    }
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "fixtures/clients/claude-cli".into()),
    );
    let root = std::env::current_dir().expect("cwd");
    let parts: Parts =
        toml::from_str(&std::fs::read_to_string(dir.join("parts.toml")).expect("parts.toml"))
            .expect("parts.toml");
    let schemas: serde_json::Map<String, Value> = serde_json::from_str(
        &std::fs::read_to_string(dir.join("schemas.json")).expect("schemas.json"),
    )
    .expect("schemas.json");
    let pool = pool(&root);
    let words = words(&pool);
    let current: Value = std::fs::read_to_string(dir.join("parts.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(json!({}));
    let mut out = serde_json::Map::new();
    for (i, p) in parts.part.iter().enumerate() {
        let key = format!("{}: {}", p.kind, p.name);
        let start = current[&key].as_str().unwrap_or("").to_string();
        let shape = match p.kind.as_str() {
            "tool" => Shape::Tool {
                name: p.name.clone(),
                schema: schemas
                    .get(&p.name)
                    .cloned()
                    .unwrap_or_else(|| panic!("no schema for {}", p.name)),
            },
            _ => Shape::Text,
        };
        eprintln!("{key}");
        let text = fit(&start, &shape, p.target(), &pool, &words, 7 + i as u64);
        let got = sizes(&shape.render(&text));
        eprintln!(
            "  {:?} against {:?}: {:.2} of the tolerance",
            got.map(|x| x as u64),
            p.target().map(|x| x as u64),
            error(&got, &p.target())
        );
        out.insert(key, Value::String(text));
    }
    let text = serde_json::to_string_pretty(&Value::Object(out)).expect("json") + "\n";
    std::fs::write(dir.join("parts.json"), text).expect("write parts.json");
}
