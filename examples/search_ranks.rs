//! The names the default resolver (`bm25f-wordnet`) ranks for each query of a query set over
//! captures, best first, one JSON line per query: `{"server", "text", "top": [...]}`. It feeds
//! `benches/search_embedding_probe.py --lexical`, which fuses these ranks with a dense model's.
//!
//!     cargo run --release --example search_ranks -- [CAPTURES_DIR] [QUERIES] > ranks.jsonl
//!
//! Defaults: `../shared/real-mcp` and `fixtures/queries/real-mcp.jsonl`.

use std::io::Write;
use std::path::PathBuf;
use toolcost::resolve::{Bm25f, Fields, Resolver};

/// Names kept per query: deeper than any surface shows.
const DEPTH: usize = 100;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().unwrap_or_else(|| "../shared/real-mcp".into()));
    let queries = PathBuf::from(
        args.next()
            .unwrap_or_else(|| "fixtures/queries/real-mcp.jsonl".into()),
    );
    let caps = toolcost::discovery::real::captures(&dir)?;
    let set = toolcost::discovery::real::read_checked(&queries, &caps)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (server, cat) in &caps {
        let index = Bm25f::new(&cat.rows, Fields::EXPANDED);
        for q in set
            .iter()
            .filter(|q| q.server.as_deref() == Some(server.as_str()))
        {
            let top: Vec<&str> = index
                .resolve(&q.text, DEPTH)
                .into_iter()
                .map(|h| cat.rows[h.row].key.as_str())
                .collect();
            let line = serde_json::json!({"server": server, "text": q.text, "top": top});
            writeln!(out, "{line}")?;
        }
    }
    out.flush()?;
    Ok(())
}
