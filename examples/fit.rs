use toolcost::catalogue::{generate::generate, profile::Profile, Catalogue};
use toolcost::client::Client;
use toolcost::surface::{Context, SurfaceKind, DEFAULT_ENDPOINT};
use toolcost::tokens::{billed_input, RenderModel, Tokenizer};
fn main() {
    let client = Client::named("claude-cli").unwrap();
    let render = RenderModel::Kimi;
    let count = |n: usize, s: SurfaceKind| {
        let cat =
            Catalogue::from_rows("x", generate(Profile::named("seed-2026-07").unwrap(), n, 1));
        let ctx = Context {
            catalogue: &cat,
            client: &client,
            turn: "what time is it",
            endpoint: DEFAULT_ENDPOINT,
        };
        let b = s.build(&ctx);
        (
            billed_input(&b.request, render, Tokenizer::O200k),
            b.request.wire_bytes(),
        )
    };
    let (p856, w856) = count(856, SurfaceKind::PerRowMcp);
    let (p0, _) = count(0, SurfaceKind::PerRowMcp);
    let marginal = (p856.input_tokens - p0.input_tokens) as f64 / 856.0;
    println!(
        "per-row 856 o200k {} wire {} ; at 0: {} ; marginal {:.2} ; k = {:.4}",
        p856.input_tokens,
        w856,
        p0.input_tokens,
        marginal,
        157.8 / marginal
    );
    for s in SurfaceKind::ALL {
        let (b, w) = count(856, s);
        println!(
            "{:24} o200k {:>7} sys {} msg {} tools {} wire {}",
            s.name(),
            b.input_tokens,
            b.system_tokens,
            b.message_tokens,
            b.tool_tokens,
            w
        );
    }
}
