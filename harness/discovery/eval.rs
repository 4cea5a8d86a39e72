//! Scoring resolvers against a labelled query set, and what their misses cost each surface
//! that discovers through them.

use super::queries::{Query, QueryKind};
use crate::catalogue::{Catalogue, Row};
use crate::client::Client;
use crate::error::Result;
use crate::pricing::PriceCard;
use crate::report::{Column, Tabular};
use crate::surface::{Context, SurfaceKind};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::time::Instant;

pub use crate::resolve::Method;

use crate::resolve::registry::Index;

/// One query's outcome under one method.
#[derive(Debug, Clone)]
pub struct Ranked {
    pub query: Query,
    /// 1-based rank of the first relevant key, if it came back at all.
    pub rank: Option<usize>,
    pub top: Vec<String>,
}

/// Recall and MRR of one method on one kind of query at one N (a row of `results.csv`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Score {
    /// Which query set: `generated` (from the catalogue's word lists), `real-mcp` (written by
    /// hand over the ten captured servers, each query searched in its own server's tools),
    /// `livemcpbench` (a public task-level benchmark), or a set named on the command line.
    pub set: String,
    pub rows: usize,
    pub resolver: String,
    pub kind: String,
    pub queries: usize,
    /// Share of queries answered in the top 1 (a task: share of its tools there, averaged).
    pub recall_at_1: f64,
    /// The same in the top 5: for a task, the share of its tools in the top 5 (the
    /// benchmark's own recall@5).
    pub recall_at_5: f64,
    pub mrr: f64,
    /// NDCG@5 with binary relevance: for a task every relevant tool counts; for a query any
    /// one relevant key answers it, so only the first one found counts (ideal 1).
    #[serde(default)]
    pub ndcg_at_5: f64,
    /// Share of queries with everything they need in the top 5 (for a task, all its tools;
    /// otherwise the same as recall@5).
    #[serde(default)]
    pub all_at_5: f64,
    /// Mean wall time per query (observed, this machine).
    pub mean_query_ms: f64,
    pub label: String,
}

impl Tabular for Score {
    const COLUMNS: &'static [Column] = &[
        Column::field("recall_at_1").places(3),
        Column::field("recall_at_5").places(3),
        Column::field("mrr").places(3),
        Column::field("ndcg_at_5").places(3),
        Column::field("all_at_5").places(3),
        Column::field("mean_query_ms").places(3),
    ];
}

/// What misses add to a task on one surface (a row of `surfaces.csv`). The model searches
/// with a paraphrase first; after a miss it reformulates once in the row's own words; after a
/// second miss it gives up.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SurfaceCost {
    /// Which query set, as in [`Score::set`].
    pub set: String,
    pub rows: usize,
    pub surface: String,
    pub resolver: String,
    /// Candidates the surface shows the model per search.
    pub shown: usize,
    pub tasks: usize,
    /// Share of tasks whose first search missed (each costs one more round).
    pub first_miss_rate: f64,
    /// Share of tasks whose reformulated search missed too (the task fails).
    pub fail_rate: f64,
    pub extra_rounds_per_task: f64,
    /// Input tokens of one round on this surface at this N (estimated:kimi, the claude-cli
    /// profile): what each extra round costs at least.
    pub round_input_tokens: u64,
    pub extra_input_tokens_per_task: f64,
    pub label: String,
}

impl Tabular for SurfaceCost {
    const COLUMNS: &'static [Column] = &[
        Column::field("first_miss_rate").places(3),
        Column::field("fail_rate").places(3),
        Column::field("extra_rounds_per_task").places(3),
        Column::field("extra_input_tokens_per_task").places(0),
    ];
}

/// The surfaces that discover through a resolver, the method that answers their searches,
/// and how many candidates each shows: what each surface's module says.
pub fn surfaces() -> Vec<(SurfaceKind, Method, usize)> {
    crate::surface::REGISTRY
        .iter()
        .filter_map(|&s| s.discovery().map(|(m, shown)| (s, m, shown)))
        .collect()
}

/// Everything one catalogue's evaluation produced.
pub struct Evaluation {
    pub scores: Vec<Score>,
    pub costs: Vec<SurfaceCost>,
    /// Per method, every query's outcome.
    pub ranked: HashMap<Method, Vec<Ranked>>,
}

/// The largest catalogue the semantic resolvers are scored on: encoding rows costs about 31 s
/// per 1,000 on this project's two-core machine (`benches/embed.rs`), so N = 85,600 would take
/// most of an hour. Their query time at larger N is the bench's, not search-eval's.
pub const SEMANTIC_MAX_ROWS: usize = 10_000;

/// Score `methods` on `queries` over `rows`; surface costs for the surfaces whose method ran.
pub fn evaluate(
    set: &str,
    rows: &[Row],
    queries: &[Query],
    methods: &[Method],
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Evaluation> {
    let n = rows.iter().filter(|r| r.projected()).count();
    let cat = Catalogue::from_rows(format!("N={n}"), rows.to_vec());
    let mut scores = Vec::new();
    let mut ranked = HashMap::new();
    for &m in methods {
        if m.semantic() && n > SEMANTIC_MAX_ROWS {
            progress(&format!(
                "N={n}: {} not scored (more than {SEMANTIC_MAX_ROWS} rows to encode)",
                m.name()
            ));
            continue;
        }
        progress(&format!("N={n}: indexing for {}", m.name()));
        let index = Index::new(m, rows, &cat)?;
        let mut outcomes = Vec::with_capacity(queries.len());
        let started = Instant::now();
        for q in queries {
            let top = index.rank(&q.text, m.depth());
            let rank = top
                .iter()
                .position(|k| q.relevant.contains(k))
                .map(|p| p + 1);
            outcomes.push(Ranked {
                query: q.clone(),
                rank,
                top,
            });
        }
        let per_query = started.elapsed().as_secs_f64() * 1000.0 / queries.len().max(1) as f64;
        scores.extend(score(set, n, m, &outcomes, per_query));
        ranked.insert(m, outcomes);
    }
    let costs = surface_costs(set, &cat, n, &ranked, progress)?;
    Ok(Evaluation {
        scores,
        costs,
        ranked,
    })
}

/// Recall@1, recall@5 and MRR of one method's outcomes, overall and by kind.
pub fn score(set: &str, n: usize, m: Method, outcomes: &[Ranked], per_query: f64) -> Vec<Score> {
    let mut scores = Vec::new();
    // The two halves of a hand-written or generated set are always reported; tasks get their
    // own row only beside them (a set of tasks alone is its `all` row).
    let mut kinds = vec![None];
    if outcomes.iter().any(|o| o.query.kind != QueryKind::Task) {
        kinds.extend([Some(QueryKind::Lexical), Some(QueryKind::Paraphrase)]);
        if outcomes.iter().any(|o| o.query.kind == QueryKind::Task) {
            kinds.push(Some(QueryKind::Task));
        }
    }
    for kind in kinds {
        let of: Vec<&Ranked> = outcomes
            .iter()
            .filter(|o| kind.is_none_or(|k| o.query.kind == k))
            .collect();
        let count = of.len().max(1) as f64;
        let share = |k: usize| of.iter().map(|o| found_share(o, k)).sum::<f64>() / count;
        let whole =
            |k: usize| of.iter().filter(|o| found_share(o, k) >= 1.0).count() as f64 / count;
        scores.push(Score {
            set: set.into(),
            rows: n,
            resolver: m.name().into(),
            kind: kind.map(QueryKind::name).unwrap_or("all").into(),
            queries: of.len(),
            recall_at_1: share(1),
            recall_at_5: share(5),
            ndcg_at_5: of.iter().map(|o| ndcg(o, 5)).sum::<f64>() / count,
            all_at_5: whole(5),
            mrr: of
                .iter()
                .map(|o| o.rank.map(|r| 1.0 / r as f64).unwrap_or(0.0))
                .sum::<f64>()
                / count,
            mean_query_ms: per_query,
            label: "derived; mean_query_ms observed".into(),
        });
    }
    scores
}

/// What a query found in the top `k`: for a task, the share of its relevant tools there; for
/// any other query 1 if some relevant key is there (any one answers it), else 0.
fn found_share(o: &Ranked, k: usize) -> f64 {
    match o.query.kind {
        QueryKind::Task => {
            let top = &o.top[..k.min(o.top.len())];
            let found = o.query.relevant.iter().filter(|r| top.contains(r)).count();
            found as f64 / o.query.relevant.len().max(1) as f64
        }
        QueryKind::Lexical | QueryKind::Paraphrase => f64::from(o.rank.is_some_and(|r| r <= k)),
    }
}

/// NDCG@k with binary relevance ([`Score::ndcg_at_5`]).
fn ndcg(o: &Ranked, k: usize) -> f64 {
    let gain = |i: usize| 1.0 / ((i + 2) as f64).log2();
    match o.query.kind {
        QueryKind::Task => {
            let dcg: f64 = o.top[..k.min(o.top.len())]
                .iter()
                .enumerate()
                .filter(|(_, t)| o.query.relevant.contains(t))
                .map(|(i, _)| gain(i))
                .sum();
            let ideal: f64 = (0..o.query.relevant.len().min(k)).map(gain).sum();
            if ideal > 0.0 {
                dcg / ideal
            } else {
                0.0
            }
        }
        QueryKind::Lexical | QueryKind::Paraphrase => match o.rank {
            Some(r) if r <= k => gain(r - 1),
            _ => 0.0,
        },
    }
}

/// Pool the evaluations of several catalogues (one per captured server) into one set of
/// scores and surface costs: every query counts once; a surface's rates are over all tasks
/// and its round is the task-weighted mean of the servers' rounds.
pub fn pool(set: &str, parts: Vec<Evaluation>) -> Evaluation {
    let n: usize = parts
        .iter()
        .map(|e| e.scores.first().map_or(0, |s| s.rows))
        .sum();
    let mut ranked: HashMap<Method, Vec<Ranked>> = HashMap::new();
    let mut ms: HashMap<Method, (f64, usize)> = HashMap::new();
    let mut costs: Vec<SurfaceCost> = Vec::new();
    for e in parts {
        for (m, outs) in e.ranked {
            let t = e
                .scores
                .iter()
                .find(|s| s.resolver == m.name())
                .map_or(0.0, |s| s.mean_query_ms);
            let slot = ms.entry(m).or_default();
            slot.0 += t * outs.len() as f64;
            slot.1 += outs.len();
            ranked.entry(m).or_default().extend(outs);
        }
        for c in e.costs {
            match costs
                .iter_mut()
                .find(|x| x.surface == c.surface && x.resolver == c.resolver)
            {
                Some(x) => {
                    let (a, b) = (x.tasks as f64, c.tasks as f64);
                    let w = (a + b).max(1.0);
                    x.first_miss_rate = (x.first_miss_rate * a + c.first_miss_rate * b) / w;
                    x.fail_rate = (x.fail_rate * a + c.fail_rate * b) / w;
                    x.extra_rounds_per_task = x.first_miss_rate;
                    x.extra_input_tokens_per_task =
                        (x.extra_input_tokens_per_task * a + c.extra_input_tokens_per_task * b) / w;
                    x.round_input_tokens =
                        ((x.round_input_tokens as f64 * a + c.round_input_tokens as f64 * b) / w)
                            .round() as u64;
                    x.tasks += c.tasks;
                }
                None => costs.push(c),
            }
        }
    }
    let mut methods: Vec<Method> = ranked.keys().copied().collect();
    methods.sort_by_key(|m| Method::ALL.iter().position(|x| x == m));
    let mut scores = Vec::new();
    for m in methods {
        let (t, c) = ms[&m];
        scores.extend(score(set, n, m, &ranked[&m], t / c.max(1) as f64));
    }
    for c in &mut costs {
        c.rows = n;
    }
    Evaluation {
        scores,
        costs,
        ranked,
    }
}

fn surface_costs(
    set: &str,
    cat: &Catalogue,
    n: usize,
    ranked: &HashMap<Method, Vec<Ranked>>,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Vec<SurfaceCost>> {
    let client = Client::named("claude-cli")?;
    let card = PriceCard::named("kimi-k2.7-code")?;
    let mut out = Vec::new();
    // Each surface is priced with the resolver its module names, and each surface whose
    // search the client (or the reference server) runs also with the semantic ones over the
    // same kind of text (rows, or tool definitions), so that what semantic search saves on
    // that surface reads off one table. One round's input is counted once per surface.
    for (surface, own, shown) in surfaces() {
        // A provider's hosted search is its own (BM25 or regex); only a search the client
        // runs can be semantic.
        let semantic: &[Method] = match own {
            Method::Bm25Definitions | Method::Regex => &[],
            Method::Bm25fWordnetDefinitions
            | Method::Bm25fGapsDefinitions
            | Method::Bm25ToolDefinitions => &[Method::HybridDefinitions],
            _ => &[Method::Dense, Method::Hybrid],
        };
        let mut round: Option<u64> = None;
        for method in std::iter::once(own).chain(semantic.iter().copied()) {
            let Some(outcomes) = ranked.get(&method) else {
                continue;
            };
            // Pair each target's paraphrase (first try) with its lexical query (the
            // reformulation).
            let mut by_target: HashMap<&str, [Option<bool>; 2]> = HashMap::new();
            for o in outcomes {
                let hit = o.rank.is_some_and(|r| r <= shown);
                let slot = match o.query.kind {
                    QueryKind::Paraphrase => 0,
                    QueryKind::Lexical => 1,
                    // A task is not paired with a reformulation: it has no surface cost row.
                    QueryKind::Task => continue,
                };
                by_target.entry(&o.query.target).or_default()[slot] = Some(hit);
            }
            let tasks: Vec<[bool; 2]> = by_target
                .values()
                .filter_map(|[a, b]| Some([(*a)?, (*b)?]))
                .collect();
            if tasks.is_empty() {
                continue;
            }
            let round = *round.get_or_insert_with(|| {
                progress(&format!("N={n}: round cost of {}", surface.name()));
                let ctx = Context {
                    catalogue: cat,
                    client: &client,
                    turn: "what time is it",
                    endpoint: crate::surface::DEFAULT_ENDPOINT,
                };
                let req = surface.build(&ctx).request;
                crate::billing::billed_input(&req, card.render_model(), card.tokenizer())
                    .input_tokens
            });
            let count = tasks.len() as f64;
            let first_miss = tasks.iter().filter(|[a, _]| !a).count() as f64 / count;
            let fail = tasks.iter().filter(|[a, b]| !a && !b).count() as f64 / count;
            out.push(SurfaceCost {
                set: set.into(),
                rows: n,
                surface: surface.name().into(),
                resolver: method.name().into(),
                shown,
                tasks: tasks.len(),
                first_miss_rate: first_miss,
                fail_rate: fail,
                extra_rounds_per_task: first_miss,
                round_input_tokens: round,
                extra_input_tokens_per_task: first_miss * round as f64,
                label: format!("derived; tokens {}", card.tokenizer().label()),
            });
        }
    }
    Ok(out)
}
