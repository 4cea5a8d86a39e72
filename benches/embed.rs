//! The semantic resolvers' cost: query time of `dense` and `hybrid` at N = 856 and 8,560 (one
//! thread: one query is encoded on one core), and indexing time of 100 generated rows (the
//! encoder on every core; the README quotes it per 1,000). Needs the model (`embed::INSTALL`);
//! the row vectors of the query benches come from the on-disk cache after the first run.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use toolcost::catalogue::profile::Profile;
use toolcost::discovery::queries::{generate, QueryKind};
use toolcost::embed::Encoder;
use toolcost::resolve::dense::{self, Dense, Hybrid};
use toolcost::resolve::{Resolver, TOP};

fn bench(c: &mut Criterion) {
    let encoder = Encoder::shared().unwrap_or_else(|e| panic!("{e}"));
    let (rows, _) = generate(Profile::named("seed-2026-07").unwrap(), 856, 2, 10).unwrap();
    let texts: Vec<String> = rows.iter().take(100).map(dense::text).collect();
    let mut g = c.benchmark_group("index");
    g.sample_size(10);
    g.bench_function(BenchmarkId::new("encode-rows", 100), |b| {
        b.iter(|| encoder.encode_all(&texts))
    });
    g.finish();
    for n in [856usize, 8_560] {
        let (rows, queries) = generate(Profile::named("seed-2026-07").unwrap(), n, 1, 50).unwrap();
        let texts: Vec<String> = queries
            .iter()
            .filter(|q| q.kind == QueryKind::Paraphrase)
            .map(|q| q.text.clone())
            .collect();
        eprintln!("N={n}: encoding or reading the row vectors");
        let resolvers: Vec<(&str, Box<dyn Resolver>)> = vec![
            ("dense", Box::new(Dense::new(&rows).unwrap())),
            ("hybrid", Box::new(Hybrid::new(&rows).unwrap())),
        ];
        let mut g = c.benchmark_group(format!("semantic-n{n}"));
        g.sample_size(30);
        for (name, r) in &resolvers {
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
