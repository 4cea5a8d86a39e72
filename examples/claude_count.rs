//! Count texts with the Claude tokenizer: one JSON object a line on stdin with a `text`, and
//! for each line its one-message count on each family, as a JSON line on stdout.
//!
//!     cargo run --release --example claude_count < texts.jsonl

use std::io::BufRead;
use toolcost::tokens::claude_exact::Family;

fn main() {
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
        let text = v["text"].as_str().expect("a text field");
        let counts: serde_json::Map<String, serde_json::Value> = Family::ALL
            .iter()
            .map(|f| (f.name().to_string(), f.message_tokens(text).into()))
            .collect();
        println!("{}", serde_json::Value::Object(counts));
    }
}
