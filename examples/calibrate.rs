//! Calibration aid: composition, bytes and bytes per o200k token of a profile at N rows for
//! three seeds. `cargo run --release --example calibrate -- seed-2026-07 831`
use toolcost::catalogue::{generate::generate, profile::Profile, stats::Composition, Catalogue};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let profile = args.get(1).map(String::as_str).unwrap_or("seed-2026-07");
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(831);
    for seed in [1u64, 2, 3] {
        let rows = generate(Profile::named(profile).unwrap(), n, seed);
        let cat = Catalogue::from_rows("x", rows);
        let c = Composition::of(&cat);
        let text: String = cat.tools.iter().map(|t| t.raw()).collect();
        let toks = toolcost::tokens::Tokenizer::O200k.count(&text);
        println!("seed {seed}: tools {} compact {} mean {:.1} shares {:?} largest {} ({}) runners {:?} bytes/tok {:.3} names/tool {:.1}",
            c.tools, c.compact_array_bytes, c.mean_compact(), c.shares().map(|x| (x*10.0).round()/10.0), c.largest_spaced, c.largest_name, c.runners, text.len() as f64 / toks, c.name_chars as f64 / c.tools as f64);
    }
}
