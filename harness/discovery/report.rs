//! `toolcost search-eval`: evaluate at each N and write `reports/search/`.

use super::eval::{self, Method, Ranked, Score, SurfaceCost};
use super::queries::{self, Query, QueryKind};
use crate::catalogue::{profile::Profile, Catalogue, Row};
use crate::error::{Error, Result};
use crate::report::{self, markdown, percent, Align};
use crate::surface::SurfaceKind;
use crate::sweep::plot;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Where the catalogues come from.
pub enum Source {
    /// Generate each N with its query set.
    Generated {
        profile: String,
        seed: u64,
        rows: Vec<usize>,
        targets: usize,
    },
    /// A catalogue file and its query set.
    Files {
        catalogue: PathBuf,
        queries: PathBuf,
    },
    /// A folder of `tools/list` captures and a query set whose queries name their capture
    /// (`fixtures/queries/real-mcp.jsonl`): each query searches its own server's tools, and
    /// the outcomes are pooled.
    Captures { dir: PathBuf, queries: PathBuf },
    /// A task-level benchmark folder (`tools.json`, `queries.jsonl`; [`super::tasks`]), scored
    /// as the set `name`.
    Tasks { name: String, dir: PathBuf },
}

/// The query set over the ten captured servers, committed with the package.
pub const REAL_QUERIES: &str = "fixtures/queries/real-mcp.jsonl";

pub struct Config {
    pub sources: Vec<Source>,
    pub methods: Vec<Method>,
    pub out: PathBuf,
}

/// Everything written, for the caller to print.
pub struct Written {
    pub scores: Vec<Score>,
    pub costs: Vec<SurfaceCost>,
}

/// Run the evaluation and write the report directory.
pub fn run(cfg: &Config, progress: &(dyn Fn(&str) + Sync)) -> Result<Written> {
    // Overall progress: each catalogue evaluated is one step of the whole run, and every line
    // says which step it is and how long the run has taken.
    let steps: usize = cfg
        .sources
        .iter()
        .map(|s| match s {
            Source::Generated { rows, .. } => rows.len(),
            Source::Files { .. } | Source::Captures { .. } | Source::Tasks { .. } => 1,
        })
        .sum();
    let step = std::sync::atomic::AtomicUsize::new(0);
    let started = std::time::Instant::now();
    let progress = &|m: &str| {
        progress(&format!(
            "[{}/{steps}, {:.0} s] {m}",
            step.load(std::sync::atomic::Ordering::Relaxed),
            started.elapsed().as_secs_f64()
        ))
    };
    let next = || step.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::fs::create_dir_all(&cfg.out).map_err(|e| Error::io(&cfg.out, e))?;
    let mut scores = Vec::new();
    let mut costs = Vec::new();
    let mut misses = String::new();
    // Each catalogue is evaluated as soon as it exists and dropped before the next is made;
    // the tables are rewritten after each, so a stopped run leaves valid partial files.
    let mut record = |ev: eval::Evaluation| -> Result<()> {
        write_misses(&mut misses, &ev);
        scores.extend(ev.scores);
        costs.extend(ev.costs);
        report::write_csv_json(&cfg.out, "results", &scores)?;
        report::write_csv_json(&cfg.out, "surfaces", &costs)?;
        Ok(())
    };
    let methods = &cfg.methods;
    let evaluate = |set: &str, rows: Vec<Row>, q: Vec<Query>| {
        eval::evaluate(set, &rows, &q, methods, progress)
    };
    for source in &cfg.sources {
        match source {
            Source::Generated {
                profile,
                seed,
                rows,
                targets,
            } => {
                for &n in rows {
                    next();
                    progress(&format!("N={n}: generating the catalogue and its queries"));
                    let (r, q) = queries::generate(Profile::named(profile)?, n, *seed, *targets)?;
                    queries::write(&cfg.out.join(format!("queries-{n}.jsonl")), &q)?;
                    record(evaluate("generated", r, q)?)?;
                }
            }
            Source::Files {
                catalogue,
                queries: qpath,
            } => {
                next();
                let rows = Catalogue::load(catalogue)?.rows;
                let q = queries::read(qpath)?;
                if q.is_empty() {
                    return Err(Error::input(format!(
                        "{}: the query set is empty",
                        qpath.display()
                    )));
                }
                for query in &q {
                    if !rows.iter().any(|r| r.key == query.target) {
                        return Err(Error::input(format!(
                            "{}: query `{}` targets `{}`, which is not in {}",
                            qpath.display(),
                            query.text,
                            query.target,
                            catalogue.display()
                        )));
                    }
                }
                record(evaluate("file", rows, q)?)?;
            }
            Source::Captures {
                dir,
                queries: qpath,
            } => {
                next();
                progress("real-mcp: reading the captures and checking the query set");
                let caps = super::real::captures(dir)?;
                let q = super::real::read_checked(qpath, &caps)?;
                let mut parts = Vec::new();
                for (name, cat) in caps {
                    let mine: Vec<Query> = q
                        .iter()
                        .filter(|x| x.server.as_deref() == Some(name.as_str()))
                        .cloned()
                        .collect();
                    if !mine.is_empty() {
                        parts.push(evaluate("real-mcp", cat.rows, mine)?);
                    }
                }
                record(eval::pool("real-mcp", parts))?;
            }
            Source::Tasks { name, dir } => {
                next();
                progress(&format!("{name}: reading the tools and the tasks"));
                let (cat, q) = super::tasks::read(dir)?;
                record(evaluate(name, cat.rows, q)?)?;
            }
        }
    }
    report::write_atomic(&cfg.out.join("misses.md"), misses.as_bytes())?;
    write_recall_chart(&cfg.out, &scores)?;
    report::write_atomic(
        &cfg.out.join("summary.md"),
        summary(&scores, &costs).as_bytes(),
    )?;
    Ok(Written { scores, costs })
}

/// `recall-at-5.png`/`.svg`: recall@5 against N on the generated catalogues, one colour per
/// resolver, solid for queries in the row's words and dashed for paraphrases. Written only
/// when the generated set was scored at two sizes or more.
fn write_recall_chart(dir: &std::path::Path, scores: &[Score]) -> Result<()> {
    let generated: Vec<&Score> = scores.iter().filter(|r| r.set == "generated").collect();
    let mut sizes: Vec<usize> = generated.iter().map(|r| r.rows).collect();
    sizes.sort();
    sizes.dedup();
    if sizes.len() < 2 {
        return Ok(());
    }
    let mut resolvers: Vec<&str> = Vec::new();
    for r in &generated {
        if !resolvers.contains(&r.resolver.as_str()) {
            resolvers.push(&r.resolver);
        }
    }
    let mut lines = Vec::new();
    for (i, res) in resolvers.iter().enumerate() {
        for kind in [QueryKind::Lexical, QueryKind::Paraphrase] {
            let points: Vec<(f64, f64)> = generated
                .iter()
                .filter(|r| r.resolver == *res && r.kind == kind.name())
                .map(|r| (r.rows as f64, r.recall_at_5))
                .collect();
            if !points.is_empty() {
                lines.push((
                    format!("{res}, {}", kind.name()),
                    i,
                    kind == QueryKind::Paraphrase,
                    points,
                ));
            }
        }
    }
    plot::write(
        dir,
        &plot::Shares {
            stem: "recall-at-5".into(),
            title: "Recall@5 against N, generated query sets (derived)".into(),
            y_desc: "recall@5 (solid: row's words; dashed: paraphrase)".into(),
            lines,
        },
    )?;
    Ok(())
}

/// Every miss of every method, grouped, with what came back instead.
fn write_misses(out: &mut String, ev: &eval::Evaluation) {
    let mut methods: Vec<&Method> = ev.ranked.keys().collect();
    methods.sort_by_key(|m| m.name());
    for m in methods {
        let ranked = &ev.ranked[m];
        let n = ev.scores.first().map(|s| s.rows).unwrap_or(0);
        let missed: Vec<&Ranked> = ranked
            .iter()
            .filter(|r| r.rank.is_none_or(|x| x > 5))
            .collect();
        let _ = writeln!(
            out,
            "## {} at N={} — {} of {} queries not in the top 5\n",
            m.name(),
            report::thousands(n as u64),
            missed.len(),
            ranked.len()
        );
        if missed.is_empty() {
            continue;
        }
        const SHOWN: usize = 40;
        let more = missed.len().saturating_sub(SHOWN);
        out.push_str(&markdown::table(
            &[
                ("kind", Align::Left),
                ("query", Align::Left),
                ("wanted", Align::Left),
                ("rank", Align::Right),
                ("top 3 instead", Align::Left),
            ],
            missed.into_iter().take(SHOWN).map(|r| {
                vec![
                    r.query.kind.name().to_string(),
                    r.query.text.clone(),
                    r.query.target.clone(),
                    r.rank.map(|x| x.to_string()).unwrap_or_else(|| "—".into()),
                    r.top.iter().take(3).cloned().collect::<Vec<_>>().join(", "),
                ]
            }),
        ));
        if more > 0 {
            let _ = writeln!(out, "\n…and {more} more.");
        }
        out.push('\n');
    }
}

/// The Markdown summary: tables with their labels, and a reading computed from the figures.
/// What each query set is, for the heading of its section.
fn set_intro(set: &str) -> &'static str {
    match set {
        "generated" => {
            "Each catalogue is generated with a labelled query set: for an even sample of rows, \
one query in the row's own words (lexical) and one paraphrase that avoids them (synonyms for the \
verb and the resource; the service named as a user names it). Any row generated from the same \
verb, resource and service counts as a hit. These queries come from the generator's own word \
lists, so they flatter any resolver tuned to it; the real set below does not."
        }
        "real-mcp" => {
            "Queries written by hand from tasks over the captured `tools/list` results of ten \
published MCP servers (`fixtures/queries/real-mcp.jsonl`), half of them sharing no content word \
with any tool that answers them. Each query searches its own server's tools and the outcomes are \
pooled, so N is the sum of the ten catalogues, not the size any one query searched."
        }
        LIVEMCPBENCH => {
            "LiveMCPBench (Mo et al., arXiv:2508.01780, Apache-2.0): 95 tasks over 527 tools of 70 real MCP servers, each task its whole question as the benchmark states it (long, several steps) with the tools its annotators used (3.0 a task). Recall@K is the share of a task's tools in the top K, as the benchmark counts it; all@5 is the share of tasks with every tool in the top 5. Nobody on this project wrote these queries or these tools."
        }
        "metatool" => {
            "MetaTool (Huang et al., ICLR 2024, arXiv:2310.03128, MIT), as committed under \
`fixtures/retrieval/metatool` (its README says how it was cut): 1,372 short user queries over \
199 tools (ChatGPT plugins and grouped tools), each with the one or two tools its labels name. \
Nobody on this project wrote these queries or tools; the default resolver's form was chosen with this set among the others (docs/discovery.md)."
        }
        "bfcl" => {
            "BFCL, the Berkeley Function Calling Leaderboard (Patil et al., ICML 2025, Apache-2.0), \
as committed under `fixtures/retrieval/bfcl` (its README says how it was cut): 2,221 questions \
whose candidate functions are pooled into one catalogue of 1,287, each question with the one to \
five functions its ground truth calls. Nobody on this project wrote these questions or functions, \
and the set was converted after the default resolver was chosen: it is the held-out set \
(docs/discovery.md). Labels name only the function a question was offered, so near-duplicates \
under other names count as misses."
        }
        _ => "A catalogue and query set given on the command line, or a published set committed \
under `fixtures/retrieval` (its README there says where it comes from).",
    }
}

/// The name of the LiveMCPBench set in the report.
pub const LIVEMCPBENCH: &str = "livemcpbench";

/// The query sets present, generated first, then real, then any other, each once.
fn sets<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for n in names {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    let rank = |s: &str| match s {
        "generated" => 0,
        "real-mcp" => 1,
        LIVEMCPBENCH => 2,
        _ => 3,
    };
    out.sort_by_key(|s| rank(s));
    out
}

pub fn summary(scores: &[Score], costs: &[SurfaceCost]) -> String {
    let mut s = String::from("# Discovery quality\n\n");
    s.push_str(
        "Recall and MRR are `derived` (counted over the query set); query times are `observed` on \
the machine that wrote this file. Each query set has its own section: a resolver is judged on \
the real set, since the generated one shares its words with the catalogue.\n",
    );
    let semantic = |r: &&Score| Method::parse(&r.resolver).is_ok_and(Method::semantic);
    if scores.iter().any(|r| semantic(&r)) {
        let _ = write!(
            s,
            "\nThe semantic resolvers (dense, hybrid, hybrid-definitions: all-MiniLM-L6-v2) are scored \
on catalogues of up to {} rows; encoding a larger one's rows would take most of an hour on two \
cores. Their ms/query includes encoding the query on one core.\n",
            report::thousands(eval::SEMANTIC_MAX_ROWS as u64)
        );
    }
    for set in sets(scores.iter().map(|r| r.set.as_str())) {
        let _ = write!(
            s,
            "\n## Recall and MRR: {set} queries\n\n{}\n\n",
            set_intro(set)
        );
        s.push_str(&markdown::table(
            &[
                ("N", Align::Right),
                ("resolver", Align::Left),
                ("queries", Align::Left),
                ("kind", Align::Left),
                ("recall@1", Align::Right),
                ("recall@5", Align::Right),
                ("MRR", Align::Right),
                ("NDCG@5", Align::Right),
                ("all@5", Align::Right),
                ("ms/query", Align::Right),
            ],
            scores.iter().filter(|r| r.set == set).map(|r| {
                vec![
                    report::thousands(r.rows as u64),
                    r.resolver.clone(),
                    r.queries.to_string(),
                    r.kind.clone(),
                    percent(r.recall_at_1),
                    percent(r.recall_at_5),
                    format!("{:.3}", r.mrr),
                    percent(r.ndcg_at_5),
                    percent(r.all_at_5),
                    format!("{:.3}", r.mean_query_ms),
                ]
            }),
        ));
    }
    s.push_str("\n## What misses add to a task\n\nThe model searches with the paraphrase first; after a miss it reformulates once in the row's words (one more round); after a second miss the task fails. Extra tokens are the extra rounds times one round's input on that surface (`estimated:kimi`, claude-cli profile), a lower bound since later rounds also resend the history.\n\n");
    s.push_str(&markdown::table(
        &[
            ("set", Align::Left),
            ("N", Align::Right),
            ("surface", Align::Left),
            ("resolver", Align::Left),
            ("shown", Align::Right),
            ("first miss", Align::Right),
            ("fails", Align::Right),
            ("extra rounds/task", Align::Right),
            ("tokens/round", Align::Right),
            ("extra tokens/task", Align::Right),
        ],
        costs.iter().map(|c| {
            vec![
                c.set.clone(),
                report::thousands(c.rows as u64),
                c.surface.clone(),
                c.resolver.clone(),
                c.shown.to_string(),
                percent(c.first_miss_rate),
                percent(c.fail_rate),
                format!("{:.3}", c.extra_rounds_per_task),
                report::thousands(c.round_input_tokens),
                report::thousands(c.extra_input_tokens_per_task.round() as u64),
            ]
        }),
    ));
    s.push_str("\n## Reading\n\n");
    let generated: Vec<Score> = scores
        .iter()
        .filter(|r| r.set == "generated")
        .cloned()
        .collect();
    s.push_str(&reading(&generated));
    s.push_str(&reading_real(scores));
    s.push_str(&reading_baseline(scores));
    s.push_str(&reading_costs(
        &costs
            .iter()
            .filter(|c| c.set == "generated")
            .cloned()
            .collect::<Vec<_>>(),
    ));
    s
}

/// The best resolver on the real set, by recall@5 over all its queries, and what it reaches
/// on each half.
fn reading_real(scores: &[Score]) -> String {
    let real: Vec<&Score> = scores.iter().filter(|r| r.set == "real-mcp").collect();
    let best = real
        .iter()
        .filter(|r| r.kind == "all")
        .max_by(|a, b| a.recall_at_5.total_cmp(&b.recall_at_5));
    let Some(best) = best else {
        return String::new();
    };
    let kind = |k: QueryKind| {
        real.iter()
            .find(|r| r.resolver == best.resolver && r.kind == k.name())
            .map_or("n/a".to_string(), |r| percent(r.recall_at_5))
    };
    format!(
        "\nOn the real set the best resolver is {}: recall@5 {} over all {} queries, {} on those \
in the tool's own words and {} on the paraphrased half. ",
        best.resolver,
        percent(best.recall_at_5),
        best.queries,
        kind(QueryKind::Lexical),
        kind(QueryKind::Paraphrase)
    )
}

/// On each set scored with the textbook baseline: the default resolver and the best one against
/// it, by recall@5 over all queries at the set's smallest N.
fn reading_baseline(scores: &[Score]) -> String {
    let default = crate::resolve::Kind::DEFAULT.method().name();
    let mut out = String::new();
    for set in sets(scores.iter().map(|r| r.set.as_str())) {
        let Some(n) = scores.iter().filter(|r| r.set == set).map(|r| r.rows).min() else {
            continue;
        };
        let all: Vec<&Score> = scores
            .iter()
            .filter(|r| r.set == set && r.rows == n && r.kind == "all")
            .collect();
        let at = |res: &str| all.iter().find(|r| r.resolver == res);
        let (Some(base), Some(def)) = (at(Method::Bm25Textbook.name()), at(default)) else {
            continue;
        };
        let Some(best) = all
            .iter()
            .max_by(|a, b| a.recall_at_5.total_cmp(&b.recall_at_5))
        else {
            continue;
        };
        let points = |x: f64| format!("{:+.1} points", (x - base.recall_at_5) * 100.0);
        let _ = write!(
            out,
            "\nOn the {set} set (N={}), the textbook BM25 reaches recall@5 {}; the default \
{default} {} ({})",
            report::thousands(n as u64),
            percent(base.recall_at_5),
            percent(def.recall_at_5),
            points(def.recall_at_5),
        );
        match best.resolver == def.resolver || best.recall_at_5 <= def.recall_at_5 {
            true => out.push_str(", the best of those scored."),
            false => {
                let _ = write!(
                    out,
                    ", and the best, {}, {} ({}).",
                    best.resolver,
                    percent(best.recall_at_5),
                    points(best.recall_at_5)
                );
            }
        }
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

fn reading_costs(costs: &[SurfaceCost]) -> String {
    let Some(n) = costs.iter().map(|c| c.rows).min() else {
        return String::new();
    };
    let at = |surface: &str| costs.iter().find(|c| c.rows == n && c.surface == surface);
    let (Some(wide), Some(narrow)) = (
        at(SurfaceKind::PROTOCOL_ONLY.name()),
        at(SurfaceKind::CODE_MODE.name()),
    ) else {
        return String::new();
    };
    format!(
        "\nShowing more candidates is the cheapest fix the surfaces have: at N={} a first search \
that shows {} (ask, search_directory) misses for {} of tasks, against {} when it shows {} (code \
mode's `search(q, 5)`, deferred search), each miss one more round of about {} input tokens.\n",
        report::thousands(n as u64),
        wide.shown,
        percent(wide.first_miss_rate),
        percent(narrow.first_miss_rate),
        narrow.shown,
        report::thousands(narrow.round_input_tokens)
    )
}

fn reading(scores: &[Score]) -> String {
    let find = |res: &str, kind: QueryKind, n: usize| {
        scores
            .iter()
            .find(|r| r.resolver == res && r.kind == kind.name() && r.rows == n)
    };
    let mut ns: Vec<usize> = scores.iter().map(|r| r.rows).collect();
    ns.sort();
    ns.dedup();
    let (Some(&small), Some(&large)) = (ns.first(), ns.last()) else {
        return "No results.\n".into();
    };
    let mut out = String::new();
    if let (Some(a), Some(b), Some(c)) = (
        find("bm25", QueryKind::Lexical, small),
        find("bm25", QueryKind::Paraphrase, small),
        find("bm25", QueryKind::Paraphrase, large),
    ) {
        let _ = write!(
            out,
            "BM25 over rows finds the row in its top 5 for {} of lexical queries at N={} but for {} \
of paraphrases; at N={} paraphrase recall@5 is {}. ",
            percent(a.recall_at_5),
            report::thousands(small as u64),
            percent(b.recall_at_5),
            report::thousands(large as u64),
            percent(c.recall_at_5)
        );
    }
    if let (Some(a), Some(b)) = (
        find("regex", QueryKind::Paraphrase, small),
        find("bm25-definitions", QueryKind::Paraphrase, small),
    ) {
        let _ = write!(
            out,
            "Over tool definitions, a regex of the paraphrase's words reaches {} and BM25 {} at \
N={}. ",
            percent(a.recall_at_5),
            percent(b.recall_at_5),
            report::thousands(small as u64)
        );
    }
    out.push_str(
        "Words a row never uses cannot match it lexically; misses.md lists each miss with what \
came back instead.\n",
    );
    out
}
