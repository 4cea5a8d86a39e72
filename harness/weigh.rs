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
    pub o200k_tokens: u64,
    pub cl100k_tokens: u64,
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

/// The evidence label of every `ToolWeight` row.
pub const TOOL_LABEL: &str = "bytes observed; tokens estimated:o200k and estimated:cl100k";

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
    pub total_bytes: usize,
    pub total_o200k_tokens: u64,
    pub total_cl100k_tokens: u64,
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
    /// Evidence of the totals: bytes observed, tokens estimated; each marginal and surface row
    /// carries its own label.
    pub label: String,
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

/// Providers whose rendering `weigh` reports: (provider, client, model).
const PROVIDERS: [(&str, &str, &str); 3] = [
    ("anthropic", "claude-cli", "claude-sonnet-4.6"),
    ("openai", "openai-agent", "gpt-4o"),
    ("kimi", "claude-cli", "kimi-k2.7-code"),
];

fn pct(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (1000.0 * part as f64 / whole as f64).round() / 10.0
    }
}

/// Weigh a catalogue; `client` and `model` choose the surfaces' price card.
pub fn weigh(
    cat: &Catalogue,
    client: &Client,
    model: &PriceCard,
    notes: Vec<String>,
) -> Result<Weight> {
    crate::lint::unique_names(cat.tools.iter().map(|t| t.name.as_str()))?;
    let mut tools: Vec<ToolWeight> = crate::sync::map_on_cores(&cat.tools, |t| {
        let bytes = t.bytes();
        let text = t.def_text();
        let schema = declared_schema(t);
        ToolWeight {
            name: t.name.clone(),
            bytes,
            o200k_tokens: tool_tokens(t, Tokenizer::O200k) as u64,
            cl100k_tokens: tool_tokens(t, Tokenizer::Cl100k) as u64,
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
            label: TOOL_LABEL.into(),
        }
    });
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
    // The one-turn rows already hold the per-row surface for the chosen client and card (by
    // default, one of these providers): measured once, it is not measured again. Both are told
    // apart by name, as `Client::named` and `PriceCard::named` give them: a caller that changes
    // a stock client or card passes it under a name of its own. The others are measured side by
    // side, each on a thread of its own.
    let mut plan = Vec::new();
    for (provider, client_name, model_name) in PROVIDERS {
        let card = PriceCard::named(model_name)?;
        let same = |r: &&MeasureRow| {
            r.surface == SurfaceKind::PER_ROW_MCP.name()
                && r.client == client_name
                && r.model == card.id
        };
        let found = surfaces.iter().find(same).cloned();
        let cfg = match found {
            Some(_) => None,
            None => Some(config(
                Client::named(client_name)?,
                card.clone(),
                vec![SurfaceKind::PER_ROW_MCP],
            )),
        };
        plan.push((provider, card, found, cfg));
    }
    let one = |cfg: &measure::Config| measure::measure(cat, cfg, &|_| {}).remove(0);
    // A catalogue large enough to be measured one surface at a time is weighed one provider
    // at a time too (each measure is on both cores), so that one request is held at once.
    let measured: Vec<Option<MeasureRow>> = match cat.tools.len() >= measure::ONE_AT_A_TIME_FROM {
        true => plan
            .iter()
            .map(|(.., cfg)| {
                let row = cfg.as_ref().map(one);
                crate::sync::release_freed();
                row
            })
            .collect(),
        false => std::thread::scope(|s| {
            let running: Vec<_> = plan
                .iter()
                .map(|(.., cfg)| cfg.as_ref().map(|cfg| s.spawn(move || one(cfg))))
                .collect();
            running
                .into_iter()
                .map(|r| r.map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))))
                .collect()
        }),
    };
    let mut limits = Vec::new();
    let mut marginal = Vec::new();
    for ((provider, card, found, _), fresh) in plan.into_iter().zip(measured) {
        let row = found
            .or(fresh)
            .expect("each provider's row is found or measured");
        limits.extend(row.warnings.iter().map(|w| format!("{provider}: {w}")));
        marginal.push(Marginal {
            provider: provider.into(),
            model: card.id.clone(),
            tokenizer: row.tokenizer.clone(),
            tokens_per_definition: row.marginal_tokens_per_definition,
            label: row.label.clone(),
        });
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
        total_bytes: tools.iter().map(|t| t.bytes).sum(),
        total_o200k_tokens: tools.iter().map(|t| t.o200k_tokens).sum(),
        total_cl100k_tokens: tools.iter().map(|t| t.cl100k_tokens).sum(),
        tools_with_violations: tools.iter().filter(|t| !t.violations.is_empty()).count(),
        tools,
        marginal,
        surfaces,
        limits,
        notes,
        protocol: None,
        protocols: Vec::new(),
        label: TOOL_LABEL.into(),
    })
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
                "{}{} tools from {} ({}): {} compact bytes, {} o200k tokens, {} cl100k tokens; {} tool(s) with strict-schema violations\n",
                if md { "# " } else { "" },
                w.tools.len(),
                w.server,
                w.source,
                report::thousands(w.total_bytes as u64),
                report::thousands(w.total_o200k_tokens),
                report::thousands(w.total_cl100k_tokens),
                w.tools_with_violations
            ));
            for n in &w.notes {
                out.push_str(&format!("note: {n}\n"));
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
                "Tools, largest first (token counts are estimated:o200k / estimated:cl100k)",
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
