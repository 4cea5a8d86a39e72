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
