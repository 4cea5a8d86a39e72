//! Request totals assembled from counted pieces equal counting the whole text, token for token:
//! on generated and captured catalogues at several sizes, on every surface, under every client,
//! tokenizer and render model, for the billed total and for the prompt cache's prefixes.

mod common;

use toolcost::billing::cache::{CacheRule, Pricing, PromptCache};
use toolcost::billing::{billed_input, RenderModel};
use toolcost::catalogue::{generate::generate, profile::Profile, Catalogue};
use toolcost::client::Client;
use toolcost::surface::{Context, DEFAULT_ENDPOINT, REGISTRY};
use toolcost::tokens::{counting_whole, Tokenizer};
use toolcost::wire::Request;

const CLIENTS: [&str; 3] = ["claude-cli", "openai-agent", "openai-responses-agent"];
const TOKENIZERS: [Tokenizer; 3] = [Tokenizer::O200k, Tokenizer::Cl100k, Tokenizer::Kimi];

fn renders() -> Vec<RenderModel> {
    ["anthropic:claude-4.5", "openai:gpt-4o", "kimi"]
        .iter()
        .map(|r| RenderModel::parse(r).unwrap())
        .collect()
}

fn generated(profile: &str, n: usize) -> Catalogue {
    Catalogue::from_rows(
        format!("{profile} N={n}"),
        generate(Profile::named(profile).unwrap(), n, 7),
    )
}

/// Every assembled figure of one request against the same figure counted whole.
fn same_as_whole(req: &Request, what: &str) {
    for render in renders() {
        for tok in TOKENIZERS {
            let assembled = billed_input(req, render, tok);
            let whole = counting_whole(|| billed_input(req, render, tok));
            assert_eq!(
                assembled,
                whole,
                "{what}, {}, {}",
                render.name(),
                tok.name()
            );
            if tok != Tokenizer::O200k {
                continue;
            }
            // The cache's prefixes are counted through the same pieces (one tokenizer is enough:
            // the pieces are the same for all).
            for rule in [
                CacheRule::Marks,
                CacheRule::Automatic {
                    step: 1,
                    ttl: 300,
                    writes: false,
                },
            ] {
                let p = Pricing {
                    rule,
                    render,
                    tokenizer: tok,
                    min_cacheable: 1,
                    model: "m",
                };
                let bill = |c: &mut PromptCache| c.bill(req, &p, "s", 0.0, true).ok();
                let assembled = bill(&mut PromptCache::default());
                let whole = counting_whole(|| bill(&mut PromptCache::default()));
                assert_eq!(
                    assembled,
                    whole,
                    "{what}, {}, {}, cache",
                    render.name(),
                    tok.name()
                );
            }
        }
    }
}

fn every_surface(cat: &Catalogue) {
    for client in CLIENTS {
        let client = Client::named(client).unwrap();
        let ctx = Context {
            catalogue: cat,
            client: &client,
            turn: "what time is it",
            endpoint: DEFAULT_ENDPOINT,
        };
        for s in REGISTRY {
            let built = s.build(&ctx);
            same_as_whole(
                &built.request,
                &format!("{} on {} by {}", cat.source, s.name(), client.name),
            );
        }
    }
}

#[test]
fn generated_catalogues_count_the_same_assembled_and_whole() {
    for profile in ["seed-2026-07", "real-mcp"] {
        for n in [0, 1, 9, 60] {
            every_surface(&generated(profile, n));
        }
    }
}

#[test]
fn captured_catalogues_count_the_same_assembled_and_whole() {
    for (name, path) in common::real_mcp_captures() {
        let cat = Catalogue::load(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        every_surface(&cat);
    }
}

#[test]
fn joins_count_the_same_assembled_and_whole_whatever_the_edges() {
    // Edges that the assembly takes apart and edges that send it back to the whole text: a
    // space, a non-ASCII letter or mark before the closing run, a piece of punctuation alone,
    // an empty piece, letters at the start, numbers and contractions at the edges.
    let pieces = [
        r#"{"name":"a","description":"ends in a space ","x":1}"#,
        r#"{"name":"é","description":"café"}"#,
        "{\"d\":\"e\u{301}\"}",
        r#"{"d":"x ·"}"#,
        r#"{}"#,
        "",
        "plain words, no brackets",
        r#"{"n":12345}"#,
        r#"{"d":"it's"}"#,
        r#"{"d":"don'"}"#,
        r#"{"$schema":"x","a":[{"b":null}]}"#,
        "{\"d\":\"line\n\"}",
        r#"[{"type":"function","function":{"name":"t","parameters":{"type":"object"}}}]"#,
        "{\"d\":\"\u{4e2d}\u{6587}\"}",
    ];
    for tok in TOKENIZERS {
        for (open, sep, close) in [
            ("[", ",", "]"),
            ("", "", ""),
            ("", ",", ""),
            ("{", "},{", "}"),
        ] {
            for a in 0..pieces.len() {
                for b in 0..pieces.len() {
                    let set = [pieces[a], pieces[b], pieces[(a + b) % pieces.len()]];
                    let assembled = tok.count_joined(open, set.iter().copied(), sep, close);
                    let text = format!("{open}{}{close}", set.join(sep));
                    let whole = counting_whole(|| tok.count(&text));
                    assert_eq!(assembled, whole, "{} {text:?}", tok.name());
                }
            }
        }
    }
}
