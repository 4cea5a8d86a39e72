//! `toolcost prices`: the price cards and the LiteLLM snapshot their prices come from, and the
//! snapshot's refresh from a newer LiteLLM table.

use crate::error::{Error, Result};
use crate::pricing::{self, litellm, PriceCard};
use crate::report::write_atomic;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct PricesArgs {
    #[command(subcommand)]
    pub command: PricesCommand,
}

#[derive(Subcommand, Debug)]
pub enum PricesCommand {
    /// One model's full billing (every tier, cache reads and writes, the window) and what it
    /// inherits from a hand card; without MODEL, every hand card.
    Show {
        /// A model id as a provider's API takes it (claude-sonnet-5-5, gpt-5.6) or a card name.
        model: Option<String>,
    },
    /// Every model that can be priced: the hand cards and the snapshot's chat models of the
    /// providers toolcost has render rules for.
    List {
        /// Only this LiteLLM provider's models (anthropic, openai, ...).
        #[arg(long)]
        provider: Option<String>,
        /// Instead, the price table's chat models toolcost counts but cannot price (no usable
        /// input or output price): `count` answers for them, costs are left out. Any other id
        /// toolcost resolves but nothing prices is unpriced too (`prices show ID` says).
        #[arg(long)]
        unpriced: bool,
        #[command(flatten)]
        format: super::FormatArgs,
    },
    /// Refresh the snapshot from a newer LiteLLM `model_prices_and_context_window` JSON: keep
    /// the entries the cards name, say which figures moved, write the snapshot. Rebuild toolcost
    /// to use it; committed reports then regenerate with the new prices.
    Update(UpdateArgs),
}

#[derive(Args, Debug)]
pub struct UpdateArgs {
    /// The newer LiteLLM table (from the litellm package, or its repository).
    #[arg(long, value_name = "FILE")]
    pub from: PathBuf,
    /// The LiteLLM version the table comes from (the JSON does not say).
    #[arg(long, value_name = "VERSION")]
    pub litellm_version: String,
    /// The day the table was taken, YYYY-MM-DD (default today, UTC).
    #[arg(long, value_name = "DATE")]
    pub date: Option<String>,
    /// Where the snapshot is written.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "fixtures/litellm-prices.json"
    )]
    pub out: PathBuf,
    /// Write the snapshot even though a price moved by more than 10x up or down (a unit slip
    /// in the table looks like that; a real repricing rarely does). Without it such a move
    /// refuses the update and names each one.
    #[arg(long)]
    pub accept_moves: bool,
}

/// The largest move of one price an update takes without `--accept-moves`: 10x either way (an
/// assumed bound; providers' repricings of 2024-2026 stayed within 5x, a per-token price read
/// as per-million is 1,000,000x).
const MAX_MOVE: f64 = 10.0;

/// Whether a price moved past [`MAX_MOVE`]: both figures positive and their ratio beyond it.
fn past_bound(old: Option<f64>, new: Option<f64>) -> bool {
    match (old, new) {
        // A hair over the bound, so that a move of exactly 10x (in floating point) is taken.
        (Some(a), Some(b)) if a > 0.0 && b > 0.0 => {
            let bound = MAX_MOVE * (1.0 + 1e-9);
            b / a > bound || a / b > bound
        }
        _ => false,
    }
}

pub(super) fn run(a: PricesArgs) -> Result<i32> {
    match a.command {
        PricesCommand::Show { model: None } => {
            let mut out = String::new();
            for c in PriceCard::all() {
                out.push_str(&format!(
                    "{}: input {} / cached {} / cache write {} / output {} USD per million, window {} tokens, prices of {}\n  {}\n",
                    c.id, c.input, c.cached_input, c.cache_write, c.output, c.context_window, c.date, c.source
                ));
            }
            super::print_bytes(out.as_bytes())?;
            Ok(0)
        }
        PricesCommand::Show { model: Some(m) } => {
            let c = match PriceCard::named(&m) {
                Ok(c) => c,
                // A model toolcost counts but nothing prices: said, with the rules it is
                // counted by.
                Err(e) => match crate::identity::resolve(&m) {
                    Ok(id) => {
                        let (_, tok, render) = id.rules();
                        // A refusal with a reason of its own (a per-seat subscription) says it.
                        let why = match e.to_string() {
                            w if w.contains("subscription") => w,
                            _ => "no price card or LiteLLM entry prices it".into(),
                        };
                        let out = format!(
                            "{}\n  unpriced: {why}, so no cost is given; counts need no price\n  counted as {} ({}), tokenizer {}\n",
                            id.id,
                            render,
                            id.note,
                            tok.name()
                        );
                        super::print_bytes(crate::report::fit_to_terminal(&out).as_bytes())?;
                        return Ok(0);
                    }
                    Err(_) => return Err(e),
                },
            };
            super::print_bytes(crate::report::fit_to_terminal(&billing(&c)).as_bytes())?;
            Ok(0)
        }
        PricesCommand::List {
            provider,
            unpriced,
            format,
        } => {
            let rows = match unpriced {
                false => priced_rows(provider.as_deref()),
                true => unpriced_rows(provider.as_deref()),
            };
            // An empty list is an answer (no model of that provider is unpriced, say), said on
            // stderr with where the providers' names are.
            if rows.is_empty() {
                if let Some(p) = &provider {
                    eprintln!("toolcost prices: no model of the provider `{p}` here; `toolcost prices list` names the providers in its `provider` column");
                }
            }
            super::print_bytes(&crate::report::render(format.format(), &rows))?;
            let said = format!(
                "toolcost prices: {} model(s){}; USD per million tokens, LiteLLM snapshot of {}\n",
                rows.len(),
                match unpriced {
                    true => " counted but not priced",
                    false => "",
                },
                litellm::Snapshot::embedded().date
            );
            eprint!("{}", crate::report::fit_to_terminal(&said));
            Ok(0)
        }
        PricesCommand::Update(u) => update(u),
    }
}

/// One line of `prices list`: a model, where its price comes from, and its prices (USD per
/// million tokens; empty where the table gives none).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ListedPrice {
    pub model: String,
    /// `card` (a hand card, sourced for that id) or `table` (a LiteLLM entry).
    pub source: String,
    pub provider: String,
    pub input: Option<f64>,
    pub cached_input: Option<f64>,
    pub output: Option<f64>,
    pub context_window: Option<u64>,
    /// How toolcost counts it (its render rules), or why it is not priced.
    pub note: String,
}

impl crate::report::Tabular for ListedPrice {
    const COLUMNS: &'static [crate::report::Column] = &[
        crate::report::Column::field("input").missing("-"),
        crate::report::Column::field("cached_input")
            .title("cached")
            .missing("-"),
        crate::report::Column::field("output").missing("-"),
        crate::report::Column::field("context_window")
            .title("window")
            .missing("-"),
    ];
    const NOTES: &'static [&'static str] = &["note"];
}

/// The hand cards, then the table's chat models that toolcost prices, of `provider` if given.
fn priced_rows(provider: Option<&str>) -> Vec<ListedPrice> {
    let snap = litellm::Snapshot::embedded();
    let mut rows = Vec::new();
    for c in PriceCard::all() {
        // A card belongs to the provider of the table entry it is priced from.
        let of = c
            .litellm
            .as_deref()
            .and_then(|k| snap.entry(k))
            .and_then(|e| e.provider)
            .unwrap_or_default();
        if provider.is_some_and(|want| want != of) {
            continue;
        }
        rows.push(ListedPrice {
            model: c.id.clone(),
            source: "card".into(),
            provider: of,
            input: Some(c.input),
            cached_input: Some(c.cached_input),
            output: Some(c.output),
            context_window: Some(c.context_window),
            note: format!("render {}, tokenizer {}", c.render, c.tokenizer().name()),
        });
    }
    for k in snap.keys() {
        let Some(e) = snap.entry(k).filter(|_| snap.is_chat(k)) else {
            continue;
        };
        let p = e.provider.clone().unwrap_or_default();
        if provider.is_some_and(|want| want != p) || PriceCard::lookup(k).is_none() {
            continue;
        }
        rows.push(ListedPrice {
            model: k.to_string(),
            source: "table".into(),
            provider: p,
            input: e.input,
            cached_input: e.cached_input,
            output: e.output,
            context_window: e.context_window,
            note: String::new(),
        });
    }
    rows
}

/// The table's chat models (by mode) that toolcost resolves and counts but cannot price.
fn unpriced_rows(provider: Option<&str>) -> Vec<ListedPrice> {
    let snap = litellm::Snapshot::embedded();
    let mut rows = Vec::new();
    for k in snap.keys() {
        let Some(e) = snap.entry(k) else { continue };
        let chat = matches!(e.mode.as_deref(), Some("chat" | "responses"));
        let p = e.provider.clone().unwrap_or_default();
        if !chat || provider.is_some_and(|want| want != p) {
            continue;
        }
        let refusal = match PriceCard::named(k) {
            Ok(_) => continue,
            Err(e) => e.to_string(),
        };
        let Some(id) = crate::identity::identify(k) else {
            continue;
        };
        let why = match (e.input, e.output) {
            (None, _) | (_, None) => "the table gives no input or output price".to_string(),
            // Why the card is refused (a per-seat subscription's entry, say).
            _ => refusal,
        };
        rows.push(ListedPrice {
            model: k.to_string(),
            source: "table".into(),
            provider: p,
            input: e.input,
            cached_input: e.cached_input,
            output: e.output,
            context_window: e.context_window,
            note: format!(
                "unpriced: {why}; counted as {} ({})",
                id.render_spec,
                id.tokenizer.name()
            ),
        });
    }
    rows
}

fn update(u: UpdateArgs) -> Result<i32> {
    let date = match u.date {
        Some(d) => d,
        None => crate::clock::now_rfc3339().chars().take(10).collect(),
    };
    if !valid_date(&date) {
        return Err(Error::input(format!(
            "--date `{date}` is not a YYYY-MM-DD date"
        )));
    }
    // Bounded and refused unless a regular file (crate::input).
    let bytes = crate::input::read(&u.from, litellm::MAX_TABLE_BYTES)?;
    // The entries the hand cards read and those of the client profiles' default models: the
    // prices the committed reports use.
    let mut keys = pricing::litellm_keys();
    for name in crate::client::Client::names() {
        let model = crate::client::Client::named(name)?.model;
        if let Some(k) = PriceCard::lookup(&model).and_then(|c| c.litellm) {
            keys.push(k);
        }
    }
    keys.sort();
    keys.dedup();
    let meta = litellm::Meta {
        source: format!(
            "{} (litellm {})",
            u.from
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            u.litellm_version
        ),
        litellm_version: u.litellm_version,
        date,
        filter: "every entry, each kept whole, except those whose prices are unusable (a price that is not a non-negative number below 0.01 USD per token, cache reads dearer than input, a context window that is not positive)".into(),
    };
    let up = litellm::update(litellm::Snapshot::embedded(), &bytes, &keys, meta)?;
    let text = up.text;
    // The whole snapshot is checked against every card before anything is written: a snapshot
    // the cards cannot be built from would break every pricing command on the next build.
    let next = litellm::Snapshot::parse(text.as_bytes())?;
    let models: Vec<String> = crate::client::Client::names()
        .iter()
        .map(|n| crate::client::Client::named(n).map(|c| c.model))
        .collect::<Result<_>>()?;
    let new_cards = pricing::cards_of_snapshot(&next, &models)?;
    // Every figure that moved, card by card: base rates, tiers, long cache writes, windows.
    let mut changes: Vec<(String, String, Option<f64>, Option<f64>)> = Vec::new();
    for new in &new_cards {
        let old = PriceCard::named(&new.id).ok();
        let before = old.as_ref().map(pricing::card_figures).unwrap_or_default();
        let after = pricing::card_figures(new);
        let mut fields: Vec<&String> = before.iter().chain(&after).map(|(f, _)| f).collect();
        fields.sort();
        fields.dedup();
        for f in fields {
            let get = |v: &[(String, f64)]| v.iter().find(|(g, _)| g == f).map(|(_, x)| *x);
            let (a, b) = (get(&before), get(&after));
            if a != b {
                changes.push((new.id.clone(), f.clone(), a, b));
            }
        }
    }
    // A price that moved past the bound is a slip until the user says it is not.
    let f = |v: Option<f64>| v.map_or("none".to_string(), |x| x.to_string());
    let mut wild: Vec<String> = changes
        .iter()
        .filter(|(_, field, ..)| field != "context_window")
        .filter(|(_, _, a, b)| past_bound(*a, *b))
        .map(|(card, field, a, b)| format!("card {card} {field}: {} -> {}", f(*a), f(*b)))
        .collect();
    wild.extend(
        up.changes
            .iter()
            .filter(|c| c.field.contains("cost"))
            .filter(|c| past_bound(c.old, c.new))
            .map(|c| format!("entry {} {}: {} -> {}", c.key, c.field, f(c.old), f(c.new))),
    );
    if !wild.is_empty() && !u.accept_moves {
        let shown: Vec<&str> = wild.iter().take(20).map(String::as_str).collect();
        return Err(Error::input(format!(
            "{} price(s) moved by more than {MAX_MOVE}x, which looks like a unit slip: {}{}. The snapshot is left as it was; check the table, or pass --accept-moves if the moves are real",
            wild.len(),
            shown.join("; "),
            if wild.len() > 20 { "; ..." } else { "" }
        )));
    }
    write_atomic(&u.out, text.as_bytes())?;
    for (k, why) in up.left_out.iter().take(20) {
        eprintln!("toolcost prices: left out {k}: {why}");
    }
    if up.left_out.len() > 20 {
        eprintln!(
            "toolcost prices: ... and {} more left out",
            up.left_out.len() - 20
        );
    }
    let moved: String = changes
        .iter()
        .map(|(card, field, old, new)| format!("{card} {field}: {} -> {}\n", f(*old), f(*new)))
        .collect();
    super::print_bytes(moved.as_bytes())?;
    // Every entry that moved, cards or not (the first 50 by name; the count says how many).
    let entry_moves: Vec<String> = up
        .changes
        .iter()
        .map(|c| format!("entry {} {}: {} -> {}", c.key, c.field, f(c.old), f(c.new)))
        .collect();
    for line in entry_moves.iter().take(50) {
        eprintln!("toolcost prices: {line}");
    }
    if entry_moves.len() > 50 {
        eprintln!(
            "toolcost prices: ... and {} more entry figures moved",
            entry_moves.len() - 50
        );
    }
    eprintln!(
        "toolcost prices: {} figures moved across the table's entries",
        entry_moves.len()
    );
    eprintln!(
        "toolcost prices: wrote {} entries to {} ({} left out); {} figures moved on the {} cards the commands and reports use. Rebuild, then regenerate the committed reports.",
        next.keys().len(),
        u.out.display(),
        up.left_out.len(),
        changes.len(),
        new_cards.len()
    );
    Ok(0)
}

/// One card's billing, every rate and rule, in lines a person reads.
fn billing(c: &PriceCard) -> String {
    let mut out = format!(
        "{}\n  prices of {} (USD per million tokens)\n  input {} / cache read {} / cache write {} / output {}\n",
        c.id, c.date, c.input, c.cached_input, c.cache_write, c.output
    );
    if c.input > 0.0 {
        out.push_str(&format!(
            "  cache read {:.3}x input, cache write {:.3}x input\n",
            c.cached_input / c.input,
            c.cache_write / c.input
        ));
    }
    if let Some((ttl, p)) = &c.cache_write_long {
        out.push_str(&format!("  cache write held {ttl}: {p}\n"));
    }
    for t in &c.tiers {
        out.push_str(&format!(
            "  above {} input tokens, the whole request: input {} / cache read {} / cache write {} / output {}\n",
            t.above, t.input, t.cached_input, t.cache_write, t.output
        ));
    }
    out.push_str(&format!(
        "  context window {} tokens\n  render {}, tokenizer {}, cache {} (minimum {} tokens)\n  cache rule: {}\n  source: {}\n",
        c.context_window, c.render, c.tokenizer, c.cache, c.min_cacheable, c.cache_source, c.source
    ));
    if let Some(p) = &c.inherits {
        out.push_str(&format!(
            "  inherits from the {p} card what the price table does not say\n"
        ));
    }
    if !c.assumed.is_empty() {
        out.push_str(&format!("  assumed: {}\n", c.assumed.join("; ")));
    }
    out
}

/// `YYYY-MM-DD` with plausible month and day.
fn valid_date(d: &str) -> bool {
    let b = d.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |s: &str| s.parse::<u32>().ok();
    matches!(
        (num(&d[0..4]), num(&d[5..7]), num(&d[8..10])),
        (Some(_), Some(1..=12), Some(1..=31))
    )
}
