//! The Claude tokenizer against Claude's own recorded counts: 1,741 Rosetta Code programs, each
//! sent as one user message to `count_tokens` on one model of each family
//! (`../shared/claude-counts-text`).

mod common;

use std::collections::HashMap;
use std::io::Read;
use toolcost::tokens::claude_exact::Family;

struct Doc {
    id: String,
    text: String,
}

fn rosetta() -> (Vec<Doc>, serde_json::Value) {
    let dir = common::shared().join("claude-counts-text");
    let mut raw = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(dir.join("rosetta.jsonl.gz")).unwrap())
        .read_to_string(&mut raw)
        .unwrap();
    let docs = raw
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            Doc {
                id: v["id"].as_str().unwrap().to_string(),
                text: v["text"].as_str().unwrap().to_string(),
            }
        })
        .collect();
    let counts =
        serde_json::from_slice(&std::fs::read(dir.join("rosetta_counts.json")).unwrap()).unwrap();
    (docs, counts)
}

fn family_key(f: Family) -> &'static str {
    match f {
        Family::V3 => "v3",
        Family::V4_7 => "v4.7",
        Family::V5 => "v5",
    }
}

/// Every family counts at least 99% of the documents exactly as `count_tokens` did, on the
/// model the family was measured on.
#[test]
fn rosetta_counts_are_exact() {
    let (docs, counts) = rosetta();
    assert_eq!(docs.len(), 1741);
    for f in Family::ALL {
        let rec = &counts[family_key(f)];
        assert_eq!(rec["model"], f.measured_on());
        let mut exact = 0;
        let mut misses = Vec::new();
        for d in &docs {
            let want = rec["counts"][&d.id].as_u64().unwrap() as usize;
            let got = f.message_tokens(&d.text);
            match got == want {
                true => exact += 1,
                false => misses.push((d.id.clone(), got as i64 - want as i64)),
            }
        }
        let share = exact as f64 / docs.len() as f64;
        eprintln!(
            "{}: {exact} of {} exact; misses {misses:?}",
            f.name(),
            docs.len()
        );
        assert!(
            share >= 0.99,
            "{}: {exact} of {} exact",
            f.name(),
            docs.len()
        );
    }
}

/// The message frame is what the recorded count adds to the content's tokens: the most common
/// difference over the documents is the family's constant.
#[test]
fn the_message_frame_is_measured_from_the_records() {
    let (docs, counts) = rosetta();
    for f in Family::ALL {
        let rec = &counts[family_key(f)];
        let mut diffs: HashMap<i64, usize> = HashMap::new();
        for d in &docs {
            let want = rec["counts"][&d.id].as_i64().unwrap();
            *diffs
                .entry(want - f.content_tokens(&d.text) as i64)
                .or_default() += 1;
        }
        let (mode, _) = diffs.iter().max_by_key(|(_, n)| **n).unwrap();
        assert_eq!(*mode, f.message_frame() as i64, "{}: {diffs:?}", f.name());
    }
}

/// Every part of a Messages request is counted, and the mock's `count_tokens` and its billed
/// usage agree on the same body; each part adds what the exact tokenizer says it adds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn count_tokens_and_usage_agree_on_every_part() {
    use serde_json::{json, Value};
    let gw = common::start_gateway(toolcost::gateway::Upstream::Mock, |_| {}).await;
    let http = reqwest::Client::new();
    let post = |path: &'static str, body: Value| {
        let http = http.clone();
        let url = format!("{}{path}", gw.base);
        async move {
            let r = http.post(url).body(body.to_string()).send().await.unwrap();
            assert_eq!(r.status(), 200);
            serde_json::from_str::<Value>(&r.text().await.unwrap()).unwrap()
        }
    };
    let tool = json!({"name": "lookup", "description": "Look an order up by its id.",
        "input_schema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}});
    let full = json!({
        "model": "claude-sonnet-5-5",
        "max_tokens": 64,
        "system": [{"type": "text", "text": "You are a careful assistant."}, {"type": "text", "text": "Answer briefly."}],
        "tools": [tool],
        "tool_choice": {"type": "auto"},
        "messages": [
            {"role": "user", "content": "Where is order 42?"},
            {"role": "assistant", "content": [{"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"id": "42"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                "content": "{\"status\": \"shipped\", \"eta\": \"2026-12-05\"}"}]}
        ]
    });
    let counted = post("/v1/messages/count_tokens", full.clone()).await["input_tokens"]
        .as_u64()
        .unwrap();
    let usage = post("/v1/messages", full.clone()).await["usage"].clone();
    let billed = [
        "input_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    ]
    .iter()
    .map(|k| usage[k].as_u64().unwrap_or(0))
    .sum::<u64>();
    assert_eq!(counted, billed, "{usage}");
    // Each part moves the count: empty it and the count falls.
    type Empty = fn(&mut Value);
    let variants: [(&str, Empty); 5] = [
        ("system", |b| {
            b.as_object_mut().unwrap().remove("system");
        }),
        ("tools", |b| {
            let m = b.as_object_mut().unwrap();
            m.remove("tools");
            m.remove("tool_choice");
        }),
        ("tool_result", |b| {
            b["messages"][2]["content"][0]["content"] = json!("")
        }),
        ("tool_use input", |b| {
            b["messages"][1]["content"][1]["input"] = json!({})
        }),
        ("assistant text", |b| {
            b["messages"][1]["content"][0]["text"] = json!("")
        }),
    ];
    for (part, empty) in variants {
        let mut b = full.clone();
        empty(&mut b);
        let n = post("/v1/messages/count_tokens", b).await["input_tokens"]
            .as_u64()
            .unwrap();
        assert!(n < counted, "without the {part}: {n} against {counted}");
    }
    // A lone text message counts its exact one-message figure.
    let one = json!({"model": "claude-sonnet-5-5", "messages": [{"role": "user", "content": "Where is order 42?"}]});
    let n = post("/v1/messages/count_tokens", one).await["input_tokens"]
        .as_u64()
        .unwrap();
    assert_eq!(n as usize, Family::V5.message_tokens("Where is order 42?"));
}
