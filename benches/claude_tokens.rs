//! The exact Claude tokenizer's speed on one core: English prose (the descriptions of the 17
//! recorded MCP servers in fixtures/claude-counts) and code (the Rosetta Code documents of
//! `../shared/claude-counts-text`, or `TOOLCOST_SHARED`), each counted cold (nothing
//! remembered) and warm (its words' segments remembered, as in a long run).
//!
//!     cargo bench --bench claude_tokens

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::io::Read;
use toolcost::tokens::claude_exact::Family;

fn prose() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/claude-counts");
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if !p.to_string_lossy().ends_with(".tools.json") {
            continue;
        }
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
            match v {
                serde_json::Value::Object(m) => {
                    for (k, x) in m {
                        match (k.as_str(), x) {
                            ("description", serde_json::Value::String(s)) => out.push(s.clone()),
                            _ => walk(x, out),
                        }
                    }
                }
                serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
                _ => {}
            }
        }
        walk(&v, &mut out);
    }
    out
}

fn code() -> Vec<String> {
    let shared = std::env::var_os("TOOLCOST_SHARED").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"),
        std::path::PathBuf::from,
    );
    let mut raw = String::new();
    let file = std::fs::File::open(shared.join("claude-counts-text/rosetta.jsonl.gz"))
        .expect("shared/claude-counts-text: set TOOLCOST_SHARED");
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut raw)
        .unwrap();
    raw.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["text"].as_str().unwrap().to_string()
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    for (name, texts) in [("prose", prose()), ("code", code())] {
        let bytes: usize = texts.iter().map(String::len).sum();
        let mut g = c.benchmark_group(format!("claude-v5 {name}"));
        g.throughput(Throughput::Bytes(bytes as u64));
        g.sample_size(10);
        let count = |texts: &[String]| -> usize {
            texts.iter().map(|t| Family::V5.content_tokens(t)).sum()
        };
        g.bench_function("cold", |b| {
            b.iter(|| {
                Family::forget_remembered();
                count(&texts)
            })
        });
        count(&texts);
        g.bench_function("warm", |b| b.iter(|| count(&texts)));
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
