//! Generate, project and count at N=856 and N=8,560: MB/s tokenized and time per surface.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use toolcost::catalogue::{generate::generate, profile::Profile, Catalogue};
use toolcost::client::Client;
use toolcost::surface::{Context, SurfaceKind, DEFAULT_ENDPOINT};
use toolcost::tokens::{billed_input, RenderModel, Tokenizer};

fn catalogue(n: usize) -> Catalogue {
    Catalogue::from_rows(
        "bench",
        generate(Profile::named("seed-2026-07").unwrap(), n, 1),
    )
}

fn bench(c: &mut Criterion) {
    let client = Client::named("claude-cli").unwrap();
    for n in [856usize, 8_560] {
        let mut g = c.benchmark_group(format!("n{n}"));
        g.sample_size(10);
        g.bench_function("generate+project", |b| b.iter(|| catalogue(n)));
        let cat = catalogue(n);
        let text: String = cat.tools.iter().map(|t| t.raw.as_str()).collect();
        g.throughput(Throughput::Bytes(text.len() as u64));
        for tok in [Tokenizer::O200k, Tokenizer::Cl100k] {
            g.bench_with_input(BenchmarkId::new("tokenize", tok.name()), &text, |b, t| {
                b.iter(|| tok.count(t))
            });
        }
        g.throughput(Throughput::Elements(1));
        let ctx = Context {
            catalogue: &cat,
            client: &client,
            turn: "what time is it",
            endpoint: DEFAULT_ENDPOINT,
        };
        for s in SurfaceKind::all() {
            g.bench_function(BenchmarkId::new("build+count", s.name()), |b| {
                b.iter(|| billed_input(&s.build(&ctx).request, RenderModel::Kimi, Tokenizer::O200k))
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
