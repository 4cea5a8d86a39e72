//! Query time of each row resolver at N = 856, 8,560 and 85,600 (one thread): the generated
//! paraphrase queries of each catalogue, one query per iteration.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use toolcost::catalogue::profile::Profile;
use toolcost::discovery::queries::{generate, QueryKind};
use toolcost::resolve::{Bm25, Bm25f, Fields, Resolver, Substring, TOP};

fn bench(c: &mut Criterion) {
    for n in [856usize, 8_560, 85_600] {
        let (rows, queries) = generate(Profile::named("seed-2026-07").unwrap(), n, 1, 50).unwrap();
        let texts: Vec<String> = queries
            .iter()
            .filter(|q| q.kind == QueryKind::Paraphrase)
            .map(|q| q.text.clone())
            .collect();
        let mut g = c.benchmark_group(format!("resolve-n{n}"));
        g.sample_size(20);
        let resolvers: Vec<(&str, Box<dyn Resolver>)> = vec![
            ("bm25", Box::new(Bm25::new(&rows))),
            (
                "bm25f-wordnet",
                Box::new(Bm25f::new(&rows, Fields::EXPANDED)),
            ),
            ("bm25f-gaps", Box::new(Bm25f::new(&rows, Fields::GAPS))),
            ("bm25-tool", Box::new(Bm25f::new(&rows, Fields::TOOL))),
            ("bm25-textbook", Box::new(Bm25::textbook(&rows))),
            ("substring", Box::new(Substring::new(&rows))),
        ];
        for (name, r) in &resolvers {
            if *name == "substring" && n > 8_560 {
                continue;
            }
            let mut i = 0;
            g.bench_function(BenchmarkId::new(*name, n), |b| {
                b.iter(|| {
                    i = (i + 1) % texts.len();
                    r.resolve(&texts[i], TOP)
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
