//! Generate, project and count at N=856 and N=8,560: MB/s tokenized, time per surface, a
//! request's total assembled from counted pieces beside counting it whole, a whole `measure`,
//! and a `tools/list` answer served from the snapshot's bytes.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use toolcost::billing::{billed_input, RenderModel};
use toolcost::catalogue::{generate::generate, profile::Profile, Catalogue};
use toolcost::client::Client;
use toolcost::measure;
use toolcost::pricing::PriceCard;
use toolcost::server::state::Snapshot;
use toolcost::surface::{Context, SurfaceKind, DEFAULT_ENDPOINT};
use toolcost::tokens::{counting_whole, Tokenizer};

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
        let text: String = cat.tools.iter().map(|t| t.raw()).collect();
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
                b.iter(|| {
                    billed_input(
                        &s.build(&ctx).request,
                        RenderModel::parse("kimi").unwrap(),
                        Tokenizer::Kimi,
                    )
                })
            });
        }
        // Counting each piece once: the per-row request under the Kimi rendering, assembled
        // from remembered pieces, beside the same request counted whole.
        let per_row = SurfaceKind::PER_ROW_MCP.build(&ctx).request;
        g.bench_function("per-row kimi: assembled", |b| {
            b.iter(|| {
                billed_input(
                    &per_row,
                    RenderModel::parse("kimi").unwrap(),
                    Tokenizer::Kimi,
                )
            })
        });
        g.bench_function("per-row kimi: whole", |b| {
            b.iter(|| {
                counting_whole(|| {
                    billed_input(
                        &per_row,
                        RenderModel::parse("kimi").unwrap(),
                        Tokenizer::Kimi,
                    )
                })
            })
        });
        let cfg = measure::Config {
            client: client.clone(),
            model: PriceCard::named(&client.model).unwrap(),
            surfaces: SurfaceKind::all(),
            tokenizers: vec![Tokenizer::O200k],
            turn: measure::DEFAULT_TURN.into(),
            output_tokens: measure::DEFAULT_OUTPUT_TOKENS,
            endpoint: DEFAULT_ENDPOINT.into(),
        };
        g.bench_function("measure all surfaces o200k", |b| {
            b.iter(|| measure::measure(&cat, &cfg, &|_| {}))
        });
        // Serving bytes: the first tools/list of a snapshot writes the array, later ones reuse it.
        let snap = Snapshot::new(cat.rows.clone());
        g.bench_function("tools/list bytes, cached", |b| {
            b.iter(|| snap.tools_json("/mcp").len())
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
