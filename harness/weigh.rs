//! `toolcost weigh`: what a server's tools cost before anyone connects it. Per tool: bytes,
//! tokens, where the bytes go, strict-schema violations; then totals, the marginal tokens per
//! definition under each provider's rendering, one turn on each surface, and limits crossed.

use crate::catalogue::Catalogue;
use crate::client::Client;
use crate::error::Result;
use crate::measure::{self, MeasureRow};
use crate::pricing::PriceCard;
use crate::report::{self, Column, OutputFormat, Tabular};
use crate::schema;
use crate::surface::{SurfaceKind, DEFAULT_ENDPOINT};
use crate::tokens::Tokenizer;
use serde::{Deserialize, Serialize};

/// One tool's weight. `weigh --csv` writes these rows.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolWeight {
    pub name: String,
    /// Compact bytes of the definition as the server sent it.
    pub bytes: usize,
    /// What the definition adds to the chosen model's per-row request, as its provider renders
    /// and bills it (under the client's name for the tool; the tools block's own frame, which a
    /// block of any size has once, left out).
    pub model_tokens: u64,
    /// The definition's text as the server sent it, under o200k: the count most scripts make.
    pub o200k_tokens: u64,
    /// With `--tokenizer`: the same text under each tokenizer asked for, as `name count`.
    #[serde(default)]
    pub other_tokens: Vec<String>,
    /// Shares of the compact bytes, in percent.
    pub name_pct: f64,
    pub description_pct: f64,
    pub schema_pct: f64,
    /// Strict-schema violations, as `pointer: message`.
    pub violations: Vec<String>,
    /// Evidence: the bytes are observed (as the server sent them), the token counts estimated
    /// with the named tokenizers.
    pub label: String,
}

/// What `weigh` counts beyond the chosen model and o200k.
#[derive(Debug, Clone, Default)]
pub struct Extras {
    /// Tokenizers whose count of each tool's text is shown beside o200k (`--tokenizer`).
    pub tokenizers: Vec<Tokenizer>,
    /// Price cards whose per-row marginal is reported beside the chosen model's (`--compare`),
    /// each through the client that speaks its API ([`client_for`]).
    pub compare: Vec<PriceCard>,
}

/// The client that speaks a card's API: gemini-cli for Gemini and Vertex AI, openai-agent for
/// OpenAI, claude-cli for Anthropic and the open-weight models (as a gateway serves them).
pub fn client_for(card: &PriceCard) -> &'static str {
    match card.provider() {
        "gemini" | "vertex" => "gemini-cli",
        "openai" => "openai-agent",
        _ => "claude-cli",
    }
}

/// Tokens one more definition costs under a provider's rendering.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Marginal {
    pub provider: String,
    pub model: String,
    pub tokenizer: String,
    /// (total(N) - total(0)) / N on the per-row surface.
    pub tokens_per_definition: Option<f64>,
    pub label: String,
}

/// Everything `weigh` reports.
#[derive(Debug, Clone, Serialize)]
pub struct Weight {
    pub source: String,
    pub server: String,
    pub tools: Vec<ToolWeight>,
    /// The chosen model (price card), its tokenizer and render model: what `model_tokens` is.
    pub model: String,
    pub tokenizer: String,
    pub render: String,
    pub total_bytes: usize,
    pub total_model_tokens: u64,
    pub total_o200k_tokens: u64,
    pub tools_with_violations: usize,
    pub marginal: Vec<Marginal>,
    /// One turn on each surface at the chosen price card.
    pub surfaces: Vec<MeasureRow>,
    pub limits: Vec<String>,
    pub notes: Vec<String>,
    /// The MCP protocol version the bytes came from (`None` for a file).
    pub protocol: Option<String>,
    /// With `--each-protocol`: the same server listed at every version toolcost speaks.
    pub protocols: Vec<ProtocolRow>,
    /// The server's `instructions` and what they cost, where it gave any.
    pub instructions: Option<Instructions>,
    /// Evidence of the totals: bytes observed, tokens estimated; each marginal and surface row
    /// carries its own label.
    pub label: String,
}

/// Claude Code adds each connected server's `instructions` to its system prompt, every turn,
/// cut at this many characters (claude-code issue #94832, read 2026-12-07). Other hosts keep
/// them apart or leave them out: the whole text is reported too.
pub const CLAUDE_CODE_INSTRUCTIONS_CAP: usize = 2048;

/// A server's `instructions` and their cost.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Instructions {
    /// Characters of the text the server sent.
    pub chars: usize,
    /// Tokens of the whole text on the chosen model's tokenizer, and on o200k.
    pub model_tokens: u64,
    pub o200k_tokens: u64,
    /// What Claude Code adds to its system prompt every turn: the text cut at
    /// [`CLAUDE_CODE_INSTRUCTIONS_CAP`] characters, and its tokens on the chosen model.
    pub claude_code_chars: usize,
    pub claude_code_tokens: u64,
    pub label: String,
}

/// What Claude Code keeps of a server's instructions: the first
/// [`CLAUDE_CODE_INSTRUCTIONS_CAP`] characters.
pub fn claude_code_instructions(text: &str) -> String {
    text.chars().take(CLAUDE_CODE_INSTRUCTIONS_CAP).collect()
}

/// The cost of a server's instructions on `model`.
pub fn instructions(text: &str, model: &PriceCard) -> Instructions {
    let tok = model.tokenizer();
    let chars = text.chars().count();
    let kept = claude_code_instructions(text);
    Instructions {
        chars,
        model_tokens: tok.count(text).round() as u64,
        o200k_tokens: Tokenizer::O200k.count(text).round() as u64,
        claude_code_chars: kept.chars().count(),
        claude_code_tokens: tok.count(&kept).round() as u64,
        label: format!(
            "chars observed; tokens {} and estimated:o200k; the cap is Claude Code's, as reported",
            tok.label()
        ),
    }
}

/// The same server's list at one protocol version. `weigh --each-protocol` writes these.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProtocolRow {
    /// The version asked for.
    pub requested: String,
    /// The version the server settled on (`initialize` may answer an older one), or empty
    /// when the listing failed.
    pub spoken: String,
    pub tools: usize,
    /// Compact bytes of the definitions, summed: what the per-row surface sends.
    pub definition_bytes: usize,
    /// Bytes of the `tools/list` answers as received, every page together: the definitions
    /// plus what each version adds around them (cursors, cache hints, result fields).
    pub list_bytes: usize,
    /// Why this version could not be listed, if it could not.
    pub error: String,
    pub label: String,
}

/// The evidence label of every `ProtocolRow`.
pub const PROTOCOL_LABEL: &str = "observed";

impl Tabular for ProtocolRow {
    const COLUMNS: &'static [Column] = &[];
}

/// List `target` at every version the client speaks, one row each; a version the server
/// refuses is a row with its error.
pub fn each_protocol(target: &crate::mcp::Target) -> Vec<ProtocolRow> {
    crate::mcp::VERSIONS
        .iter()
        .map(|v| match target.speaking(Some(v)).load_full() {
            Ok(f) => ProtocolRow {
                requested: v.to_string(),
                spoken: f.protocol.unwrap_or_default(),
                tools: f.catalogue.tools.len(),
                definition_bytes: f.catalogue.definition_bytes(),
                list_bytes: f.list_bytes.unwrap_or(0),
                error: String::new(),
                label: PROTOCOL_LABEL.into(),
            },
            Err(e) => ProtocolRow {
                requested: v.to_string(),
                spoken: String::new(),
                tools: 0,
                definition_bytes: 0,
                list_bytes: 0,
                error: e.to_string().chars().take(200).collect(),
                label: PROTOCOL_LABEL.into(),
            },
        })
        .collect()
}

fn pct(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (1000.0 * part as f64 / whole as f64).round() / 10.0
    }
}

/// Weigh a catalogue; `client` and `model` choose the model whose tokens come first and the
/// surfaces' price card; `extras` adds tokenizers and models to compare.
pub fn weigh(
    cat: &Catalogue,
    client: &Client,
    model: &PriceCard,
    extras: &Extras,
    notes: Vec<String>,
) -> Result<Weight> {
    crate::lint::unique_names(cat.tools.iter().map(|t| t.name.as_str()))?;
    let tok = model.tokenizer();
    let render = model.render_model();
    let own = model_tokens(cat, client, model);
    let label = format!(
        "bytes observed; model_tokens {} as {} renders it; o200k_tokens estimated:o200k{}",
        tok.label(),
        render.name(),
        extras
            .tokenizers
            .iter()
            .map(|t| format!("; {}", t.label()))
            .collect::<String>()
    );
    let mut tools: Vec<ToolWeight> = crate::sync::map_on_cores(&cat.tools, |t| {
        let bytes = t.bytes();
        let text = t.def_text();
        let schema = declared_schema(t);
        ToolWeight {
            name: t.name.clone(),
            bytes,
            model_tokens: 0,
            o200k_tokens: tool_tokens(t, Tokenizer::O200k) as u64,
            other_tokens: extras
                .tokenizers
                .iter()
                .map(|&x| format!("{} {}", x.name(), tool_tokens(t, x) as u64))
                .collect(),
            name_pct: pct(t.name.len(), bytes),
            description_pct: pct(text.description().len(), bytes),
            // The shared text is the schema's compact JSON; a tool that declares none has none.
            schema_pct: pct(schema.as_ref().map_or(0, |_| text.schema().len()), bytes),
            violations: schema::validate(
                schema.as_ref().unwrap_or(&crate::catalogue::empty_schema()),
            )
            .iter()
            .map(ToString::to_string)
            .collect(),
            label: label.clone(),
        }
    });
    // Both are in catalogue order until sorted.
    for (t, n) in tools.iter_mut().zip(own) {
        t.model_tokens = n.max(0.0).round() as u64;
    }
    tools.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));

    crate::sync::release_freed();
    let surfaces = measure::measure(
        cat,
        &config(
            client.clone(),
            model.clone(),
            SurfaceKind::all_for(client.format),
        ),
        &|_| {},
    );
    let mut limits = Vec::new();
    let mut marginal = Vec::new();
    // The chosen model's marginal is its own per-row row, measured with the surfaces.
    if let Some(row) = surfaces
        .iter()
        .find(|r| r.surface == SurfaceKind::PER_ROW_MCP.name())
    {
        marginal.push(marginal_of(model, row));
    }
    // Each model compared is measured on the per-row surface alone, one after another (each
    // measure is on both cores), so that one request is held at once.
    for card in &extras.compare {
        let cfg = config(
            Client::named(client_for(card))?,
            card.clone(),
            vec![SurfaceKind::PER_ROW_MCP],
        );
        let row = measure::measure(cat, &cfg, &|_| {}).remove(0);
        crate::sync::release_freed();
        let provider = card.provider();
        limits.extend(row.warnings.iter().map(|w| format!("{provider}: {w}")));
        marginal.push(marginal_of(card, &row));
    }
    for r in &surfaces {
        for w in &r.warnings {
            let line = format!("{}: {w}", r.surface);
            if !limits.contains(&line) {
                limits.push(line);
            }
        }
    }
    Ok(Weight {
        source: cat.source.clone(),
        server: cat.server.clone(),
        model: model.id.clone(),
        tokenizer: tok.name().into(),
        render: render.name(),
        total_bytes: tools.iter().map(|t| t.bytes).sum(),
        total_model_tokens: tools.iter().map(|t| t.model_tokens).sum(),
        total_o200k_tokens: tools.iter().map(|t| t.o200k_tokens).sum(),
        tools_with_violations: tools.iter().filter(|t| !t.violations.is_empty()).count(),
        tools,
        marginal,
        surfaces,
        limits,
        notes,
        protocol: None,
        protocols: Vec::new(),
        instructions: None,
        label,
    })
}

fn marginal_of(card: &PriceCard, row: &MeasureRow) -> Marginal {
    Marginal {
        provider: card.provider().into(),
        model: card.id.clone(),
        tokenizer: row.tokenizer.clone(),
        tokens_per_definition: row.marginal_tokens_per_definition,
        label: row.label.clone(),
    }
}

/// Each catalogue tool's tokens in the model's per-row request, in catalogue order: the
/// definitions as the client presents them (its name for each tool), rendered and counted as
/// the model's provider bills them.
fn model_tokens(cat: &Catalogue, client: &Client, model: &PriceCard) -> Vec<f64> {
    let ctx = crate::surface::Context {
        catalogue: cat,
        client,
        turn: measure::DEFAULT_TURN,
        endpoint: DEFAULT_ENDPOINT,
    };
    let defs = ctx.catalogue_definitions(false);
    let refs: Vec<crate::wire::ToolRef> = defs.iter().map(crate::wire::ToolEntry::as_ref).collect();
    crate::billing::definition_tokens(&refs, model.render_model(), model.tokenizer())
}

/// Tokens of a tool's text as the server sent it. Where the text is the plain
/// `{"name","description","inputSchema"}` of its name and shared text (every generated tool,
/// many real ones: [`crate::catalogue::Tool::is_composed`]), it is counted from the pieces its
/// renderings share (the schema, the description's prose), which are then counted once for all
/// of them, and never written out; otherwise whole.
fn tool_tokens(t: &crate::catalogue::Tool, tok: Tokenizer) -> f64 {
    use crate::tokens::Part;
    let text = t.def_text();
    if !t.is_composed() {
        return tok.count(t.raw());
    }
    let description = serde_json::to_string(text.description()).expect("a string serialises");
    let [first, prose, last] = crate::tokens::clean_cuts(&description);
    let head = format!(
        "{{\"name\":{},\"description\":{first}",
        serde_json::to_string(&t.name).expect("a string serialises")
    );
    let neck = format!("{last},\"inputSchema\":");
    let schema = text.schema();
    let schema = match schema.bytes().all(|b| b.is_ascii_punctuation()) {
        true => Part::Joint(schema),
        false => Part::Piece(schema),
    };
    let parts = [
        Part::Piece(&head),
        Part::Piece(prose),
        Part::Piece(&neck),
        schema,
        Part::Joint("}"),
    ];
    tok.count_parts(
        parts
            .into_iter()
            .filter(|p| !matches!(p, Part::Piece(t) if t.is_empty())),
    )
}

/// The input schema a tool declares, if it declares one, read from its text without building
/// its other members (a text that names it twice, whose tree keeps the last, is read whole).
fn declared_schema(t: &crate::catalogue::Tool) -> Option<serde_json::Value> {
    if t.is_composed() {
        // Its text declares exactly the shared schema.
        return Some(
            serde_json::from_str(t.def_text().schema()).unwrap_or(serde_json::Value::Null),
        );
    }
    #[derive(Deserialize)]
    struct Declared {
        #[serde(default, rename = "inputSchema")]
        input_schema: Option<Present>,
    }
    /// A member that is there, whatever its value, `null` included.
    struct Present(serde_json::Value);
    impl<'de> Deserialize<'de> for Present {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
            serde_json::Value::deserialize(d).map(Present)
        }
    }
    // Serde would read a struct from an array too; a tool's text is an object.
    if t.raw().starts_with('{') {
        if let Ok(d) = serde_json::from_str::<Declared>(t.raw()) {
            return d.input_schema.map(|p| p.0);
        }
    }
    t.parsed().get("inputSchema").cloned()
}

fn config(client: Client, model: PriceCard, surfaces: Vec<SurfaceKind>) -> measure::Config {
    measure::Config {
        tokenizers: vec![model.tokenizer()],
        client,
        model,
        surfaces,
        turn: measure::DEFAULT_TURN.into(),
        output_tokens: measure::DEFAULT_OUTPUT_TOKENS,
        endpoint: DEFAULT_ENDPOINT.into(),
    }
}

impl Tabular for ToolWeight {
    const COLUMNS: &'static [Column] = &[
        Column::field("model_tokens").title("model tokens"),
        Column::field("o200k_tokens").title("o200k tokens"),
        Column::field("other_tokens").title("other tokens"),
        Column::field("name_pct").places(1),
        Column::field("description_pct").places(1),
        Column::field("schema_pct").places(1),
        Column::field("violations").count(),
    ];
}

impl Tabular for Marginal {
    const COLUMNS: &'static [Column] = &[Column::field("tokens_per_definition")
        .places(1)
        .missing("-")];
}

/// Render the report in a format.
pub fn render(w: &Weight, format: OutputFormat) -> Vec<u8> {
    match format {
        OutputFormat::Json => {
            let mut v = serde_json::to_vec_pretty(w).expect("serialises");
            v.push(b'\n');
            v
        }
        OutputFormat::Csv => report::render(OutputFormat::Csv, &w.tools),
        OutputFormat::Table | OutputFormat::Markdown => {
            let md = format == OutputFormat::Markdown;
            let table = |bytes: Vec<u8>| String::from_utf8(bytes).expect("utf-8");
            let mut out = String::new();
            let h = |out: &mut String, title: &str| {
                if md {
                    out.push_str(&format!("\n## {title}\n\n"));
                } else {
                    out.push_str(&format!("\n{title}\n"));
                }
            };
            out.push_str(&format!(
                "{}{} tools from {} ({}): {} compact bytes, {} tokens on {} ({}, as {} bills them), {} o200k tokens; {} tool(s) with strict-schema violations\n",
                if md { "# " } else { "" },
                w.tools.len(),
                w.server,
                w.source,
                report::thousands(w.total_bytes as u64),
                report::thousands(w.total_model_tokens),
                w.model,
                w.tokenizer,
                w.render,
                report::thousands(w.total_o200k_tokens),
                w.tools_with_violations
            ));
            for n in &w.notes {
                out.push_str(&format!("note: {n}\n"));
            }
            if let Some(i) = &w.instructions {
                out.push_str(&format!(
                    "server instructions: {} characters, {} tokens on {} ({} o200k); Claude Code adds them to its system prompt every turn, cut at {} characters: {} characters, {} tokens a turn\n",
                    report::thousands(i.chars as u64),
                    report::thousands(i.model_tokens),
                    w.model,
                    report::thousands(i.o200k_tokens),
                    report::thousands(CLAUDE_CODE_INSTRUCTIONS_CAP as u64),
                    report::thousands(i.claude_code_chars as u64),
                    report::thousands(i.claude_code_tokens),
                ));
            }
            if !w.protocols.is_empty() {
                h(
                    &mut out,
                    "The same server at each protocol version (bytes observed)",
                );
                out.push_str(&table(report::render(
                    if md {
                        OutputFormat::Markdown
                    } else {
                        OutputFormat::Table
                    },
                    &w.protocols,
                )));
            }
            h(
                &mut out,
                &format!(
                    "Tools, largest first (model tokens: {} on {}; o200k tokens: the text as sent)",
                    w.tokenizer, w.model
                ),
            );
            out.push_str(&table(report::render(
                if md {
                    OutputFormat::Markdown
                } else {
                    OutputFormat::Table
                },
                &w.tools,
            )));
            h(
                &mut out,
                "Marginal input tokens per definition, per-row surface",
            );
            out.push_str(&table(report::render(
                if md {
                    OutputFormat::Markdown
                } else {
                    OutputFormat::Table
                },
                &w.marginal,
            )));
            h(&mut out, "One turn on each surface");
            out.push_str(&table(report::render(
                if md {
                    OutputFormat::Markdown
                } else {
                    OutputFormat::Table
                },
                &w.surfaces,
            )));
            if !w.limits.is_empty() {
                h(&mut out, "Provider limits crossed");
                for l in &w.limits {
                    out.push_str(&format!("- {l}\n"));
                }
            }
            let violations: Vec<&ToolWeight> = w
                .tools
                .iter()
                .filter(|t| !t.violations.is_empty())
                .collect();
            if !violations.is_empty() {
                h(&mut out, "Strict-schema violations");
                for t in violations {
                    for v in &t.violations {
                        out.push_str(&format!("- {}: {v}\n", t.name));
                    }
                }
            }
            out.into_bytes()
        }
    }
}
