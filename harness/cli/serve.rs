//! `toolcost serve`: the reference dispatch server, on a socket or over stdio.

use super::{runtime, GeneratorArgs};
use crate::catalogue::generate::{check_rows, Generator};
use crate::catalogue::{profile::Profile, Catalogue, Row};
use crate::error::{env_secret, Error, Result};
use crate::server::guard::{Access, TokenScope};
use crate::server::{self, state::State};
use crate::surface::{SurfaceKind, REGISTRY};
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Load this catalogue into the directory (JSONL, SQLite or a tools/list capture).
    #[arg(long, value_name = "FILE", conflicts_with = "rows")]
    pub catalogue: Option<PathBuf>,
    /// Or generate N rows.
    #[arg(long, value_name = "N")]
    pub rows: Option<usize>,
    #[command(flatten)]
    pub generator: GeneratorArgs,
    /// Add the profile's disabled, hidden and test-shaped rows (for the four counts).
    #[arg(long)]
    pub inactive: bool,
    #[arg(long, default_value = "127.0.0.1:8787")]
    pub listen: String,
    /// SQLite file for the directory and the receipts (default: in memory, gone at exit).
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
    /// The env var holding the bearer token; without one, every call that invokes or changes
    /// rows is refused.
    #[arg(long, value_name = "NAME")]
    pub token_env: Option<String>,
    /// A host and port the http runner may send to (repeatable; none by default): `host` allows
    /// only the default port of the URL's scheme (80 for http, 443 for https), `host:port` that
    /// port (`127.0.0.1:8080`, `[::1]:8080`). Redirects are followed only to entries here.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub allow_host: Vec<String>,
    /// Largest request body in bytes.
    #[arg(long, default_value_t = crate::server::DEFAULT_MAX_BODY)]
    pub max_body: usize,
    /// Which MCP requests need the token: `calls` (tools/call only; listing and discovery stay
    /// open), `list` (also initialize, tools/list, server/discover, subscriptions/listen, the GET stream
    /// and the reads of /api/dispatch), or `all` (every MCP request). Without --token-env only `calls` makes sense.
    #[arg(long, value_name = "WHAT", default_value = "calls", value_parser = crate::server::guard::TokenScope::NAMES)]
    pub token_required_for: String,
    /// A web origin whose pages may call the MCP endpoints and /api (repeatable), as
    /// `scheme://host[:port]`, or `null`. Pages from localhost, 127.0.0.1 and [::1] are always
    /// allowed; a request with any other Origin gets 403 (DNS-rebinding protection).
    #[arg(long, value_name = "ORIGIN")]
    pub allow_origin: Vec<String>,
    /// A host name clients reach this server by, checked against the Host header of MCP and
    /// /api requests (repeatable). IP addresses of the listener and `localhost` are always
    /// accepted; any other name gets 403.
    #[arg(long, value_name = "NAME")]
    pub allow_name: Vec<String>,
    /// Tools per MCP tools/list page; the answer carries `nextCursor` while more remain
    /// (0: the whole list in one answer).
    #[arg(long, value_name = "N", default_value_t = crate::server::listing::DEFAULT_PAGE_SIZE)]
    pub page_size: usize,
    /// The resolver of `?ask=` (unless the request names one), `search_directory` and code
    /// mode's `search()`: bm25-tool (name twice, description and parameters as one document;
    /// WordNet synonyms only for words the catalogue lacks), bm25f-gaps, bm25f-wordnet, bm25,
    /// substring, or the semantic dense and hybrid (they need the
    /// all-MiniLM-L6-v2 model; the error says how to install it). A request may name any
    /// resolver `search-eval` scores.
    #[arg(long, value_name = "NAME", default_value = "bm25-tool")]
    pub resolver: String,
    /// Speak MCP over stdin/stdout instead of listening.
    #[arg(long)]
    pub stdio: bool,
    /// With --stdio: serve the small surface instead of the per-row one.
    #[arg(long, requires = "stdio", conflicts_with = "code")]
    pub small: bool,
    /// With --stdio: serve code mode (one `execute` tool running JavaScript in the sandbox).
    #[arg(long, requires = "stdio")]
    pub code: bool,
    /// With --stdio: the surface whose MCP endpoint to serve: per-row-mcp, per-row-mcp-min,
    /// small-mcp or code-mode.
    #[arg(long = "surface", requires = "stdio", value_name = "SURFACE", default_value = "per-row-mcp", conflicts_with_all = ["small", "code"])]
    pub stdio_surface: String,
}

impl ServeArgs {
    /// The rows to load: a file, N generated, or none to keep what `--db` holds.
    fn rows(&self) -> Result<Option<Vec<Row>>> {
        Ok(match (&self.catalogue, self.rows) {
            (Some(path), _) => Some(Catalogue::load_rows(path)?),
            (None, Some(n)) => Some(
                Generator::new(
                    Profile::named(&self.generator.profile)?,
                    check_rows(n)?,
                    self.generator.seed,
                    self.inactive,
                )
                .collect(),
            ),
            (None, None) if self.db.as_ref().is_some_and(|p| p.exists()) => None,
            (None, None) => {
                return Err(Error::input(
                    "give --catalogue FILE, --rows N, or --db FILE holding a directory",
                ))
            }
        })
    }

    fn options(&self) -> Result<server::Options> {
        let rows = self.rows()?;
        let token = match &self.token_env {
            Some(name) => Some(env_secret("--token-env", name)?),
            None => None,
        };
        Ok(server::Options {
            rows,
            db: self.db.clone(),
            token,
            allowlist: self.allow_host.clone(),
            max_body: self.max_body,
        })
    }

    /// The MCP endpoints' access policy.
    fn access(&self) -> Result<Access> {
        let token_for = TokenScope::parse(&self.token_required_for).map_err(Error::input)?;
        if token_for != TokenScope::Calls && self.token_env.is_none() {
            return Err(Error::input(format!(
                "--token-required-for {} needs --token-env NAME: without a token nobody could list",
                token_for.name()
            )));
        }
        Access {
            token_for,
            ..Access::default()
        }
        .with_origins(&self.allow_origin)
        .and_then(|a| a.with_names(&self.allow_name))
        .map_err(Error::input)
    }
}

pub(super) fn run(a: ServeArgs) -> Result<i32> {
    let access = a.access()?;
    let resolver = crate::resolve::Kind::parse(&a.resolver)?;
    let limits = server::Limits {
        tools_page: a.page_size,
        resolver,
        ..server::Limits::default()
    };
    let state = server::state_from(a.options()?, limits)?;
    if resolver.semantic() {
        // Built before the first request, so a missing model stops the start with the way to
        // install it and the first search does not wait on encoding the rows.
        eprintln!("toolcost serve: encoding the rows for the {} resolver (kept on disk for the next start)", resolver.name());
        state.snapshot().dense().map_err(Error::input)?;
        // And the definitions' vectors, so that no request naming `hybrid-definitions` makes
        // the server encode the catalogue (a directory change re-encodes only what it changed).
        state
            .snapshot()
            .named(crate::resolve::Method::HybridDefinitions)
            .map_err(Error::input)?;
    }
    // Loading freed more than the server keeps (the file's text, parse trees).
    super::release_freed();
    state.set_access(access);
    runtime()?.block_on(async move {
        if a.stdio {
            return server::stdio::run_stdio(state, stdio_endpoint(&a)?).await;
        }
        listen(&a, state).await
    })?;
    Ok(0)
}

/// The MCP endpoint `--stdio` serves: `--small`, `--code`, or `--surface NAME`.
fn stdio_endpoint(a: &ServeArgs) -> Result<crate::surface::Endpoint> {
    let name = match (a.small, a.code) {
        (true, _) => "small-mcp",
        (_, true) => "code-mode",
        _ => a.stdio_surface.as_str(),
    };
    SurfaceKind::parse(name)?.endpoint().ok_or_else(|| {
        let served: Vec<&str> = REGISTRY
            .iter()
            .filter(|s| s.endpoint().is_some())
            .map(|s| s.name())
            .collect();
        Error::input(format!(
            "--surface {name}: this surface has no MCP endpoint of its own; serve one of {}",
            served.join(", ")
        ))
    })
}

async fn listen(a: &ServeArgs, state: Arc<State>) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(&a.listen)
        .await
        .map_err(|e| Error::input(format!("--listen {}: {e}", a.listen)))?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error::input(e.to_string()))?;
    let snap = state.snapshot();
    eprintln!(
        "toolcost serve: {} rows ({} projected) on http://{addr}: /api/dispatch, {}; store {}; {}",
        snap.rows().len(),
        snap.catalogue.tools.len(),
        server::endpoints()
            .iter()
            .map(|e| e.path)
            .collect::<Vec<_>>()
            .join(", "),
        a.db.as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "in memory".into()),
        if state.token.is_some() {
            format!("token required for {}", state.access().token_for.name())
        } else {
            "no token: calls and changes are refused".to_string()
        }
    );
    drop(snap);
    state.set_bound(addr);
    if let Some(what) = state.access().describe() {
        eprintln!("toolcost serve: {what}");
    }
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
        eprintln!("toolcost serve: shutting down");
    };
    server::run(listener, state, a.max_body, shutdown)
        .await
        .map_err(|e| Error::input(format!("server: {e}")))
}
