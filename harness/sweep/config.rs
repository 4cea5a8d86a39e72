//! A sweep's configuration: the defaults, a scenario's `[sweep]` section, then the command
//! line, each overriding the one before.

use super::{Config, DAYS, TURNS_PER_DAY};
use crate::catalogue::generate::check_rows;
use crate::client::Client;
use crate::driver::scenario::{self, CatalogueSpec, ClientSpec, RunSpec, Scenario, SweepSpec};
use crate::error::{Error, Result};
use crate::surface::SurfaceKind;
use crate::tokens::Tokenizer;
use std::path::PathBuf;

/// The grid the issue names: 0 to 100 times the recorded catalogue.
pub const DEFAULT_ROWS: [usize; 6] = [0, 10, 100, 856, 8_560, 85_600];
pub const DEFAULT_CLIENTS: [&str; 2] = ["claude-cli", "openai-agent"];
/// Whole tasks are played up to this N unless --task-rows says otherwise: beyond it the
/// per-row surface's 150-round task resends more than a gigabyte of definitions.
pub const DEFAULT_TASK_MAX_ROWS: usize = 8_560;

/// `all` stands for the surfaces `--surface all` measures; names beside it add variants
/// (`["all", "deferred-search-namespace"]`), each once, in the order named.
fn surfaces(list: &[String]) -> Result<Vec<SurfaceKind>> {
    let mut named: Vec<SurfaceKind> = Vec::new();
    for s in list.iter().map(|s| s.trim()) {
        let kinds = match s {
            "all" => SurfaceKind::all(),
            other => vec![SurfaceKind::parse(other)?],
        };
        for k in kinds {
            if !named.contains(&k) {
                named.push(k);
            }
        }
    }
    Ok(named)
}

fn split(s: &str) -> Vec<String> {
    s.split(',')
        .map(|x| x.trim().to_string())
        .filter(|x| !x.is_empty())
        .collect()
}

/// What the command line sets; `None` or empty leaves the scenario's value or the default.
#[derive(Debug, Clone)]
pub struct Overrides {
    /// A scenario file: its `[sweep]` section (and, with `tasks = true`, its `[run]` tasks).
    pub scenario: Option<PathBuf>,
    pub rows: Vec<usize>,
    /// `all` or a comma-separated list of surfaces.
    pub surface: Option<String>,
    /// Comma-separated tokenizers.
    pub tokenizer: Option<String>,
    /// Comma-separated client profiles.
    pub client: Option<String>,
    /// Comma-separated tasks to play through the gateway.
    pub tasks: Option<String>,
    pub task_rows: Vec<usize>,
    /// ORDER_GET lookups in the orders task.
    pub orders: usize,
    /// Calls-per-round policies the tasks are played under.
    pub policies: Vec<scenario::Policy>,
    /// Skip the scenario's tasks even when its `[sweep]` section asks for them.
    pub no_tasks: bool,
    /// Comma-separated resolvers a client's own search runs in the tasks (the scenario's
    /// `client_resolvers`, else the default).
    pub client_resolver: Option<String>,
    pub turns_per_day: Option<u64>,
    pub days: Option<u64>,
    /// Catalogue profile and seed, used without a scenario.
    pub profile: String,
    pub seed: u64,
    pub name: Option<String>,
    pub out: Option<PathBuf>,
}

/// Merge defaults, the scenario's `[sweep]` and the command line.
pub fn resolve(a: &Overrides) -> Result<Config> {
    let scenario = match &a.scenario {
        Some(p) => Some(Scenario::read(p)?),
        None => None,
    };
    let spec: SweepSpec = scenario
        .as_ref()
        .and_then(|s| s.sweep.clone())
        .unwrap_or_default();
    let name = a
        .name
        .clone()
        .or_else(|| scenario.as_ref().map(|s| s.name.clone()))
        .unwrap_or_else(|| "sweep".into());
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        return Err(Error::input(format!(
            "report name `{name}` must be a plain directory name"
        )));
    }
    let (profile, seed) = match &scenario {
        Some(s) => (s.catalogue.profile.clone(), s.catalogue.seed),
        None => (a.profile.clone(), a.seed),
    };
    let rows = rows(a, &spec, scenario.as_ref())?;
    let (surfaces, tokenizers, clients) = grid(a, &spec, scenario.as_ref())?;
    let tasks = match (&a.tasks, &scenario) {
        (Some(list), _) => Some(task_scenario(
            a,
            list,
            &rows,
            &surfaces,
            &clients,
            (&name, &profile, seed),
        )?),
        (None, Some(s)) if spec.tasks && !a.no_tasks => {
            let mut s = s.clone();
            if !a.task_rows.is_empty() {
                s.catalogue.rows = a.task_rows.clone();
            } else if let Some(r) = &spec.task_rows {
                s.catalogue.rows = r.clone();
            }
            s.sweep = None;
            Some(s)
        }
        _ => None,
    };
    let tasks = match (tasks, &a.client_resolver) {
        (Some(mut s), Some(list)) => {
            s.run.client_resolvers = split(list);
            s.client_resolvers()?;
            Some(s)
        }
        (None, Some(_)) => {
            return Err(Error::input(
                "--client-resolver applies to the tasks a sweep plays; give --tasks or a \
                 scenario whose [sweep] plays them",
            ))
        }
        (tasks, None) => tasks,
    };
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports").join(&name));
    let ignored = scenario
        .as_ref()
        .map(|s| ignored(&s.endpoints, tasks.is_some()))
        .unwrap_or_default();
    Ok(Config {
        name,
        about: scenario
            .as_ref()
            .map(|s| s.about.clone())
            .unwrap_or_default(),
        profile,
        seed,
        rows,
        surfaces,
        tokenizers,
        clients,
        turns_per_day: a
            .turns_per_day
            .or(spec.turns_per_day)
            .unwrap_or(TURNS_PER_DAY),
        days: a.days.or(spec.days).unwrap_or(DAYS),
        tasks,
        out,
        ignored,
    })
}

/// What a scenario's `[endpoints]` asks that the sweep does not do: its grid measures
/// generated catalogues offline, and only its tasks (when it plays them) reach running servers.
fn ignored(e: &crate::driver::scenario::Endpoints, plays_tasks: bool) -> Vec<String> {
    let named: Vec<&str> = [
        ("server", e.server.is_some()),
        ("gateway", e.gateway.is_some()),
    ]
    .into_iter()
    .filter_map(|(n, set)| set.then_some(n))
    .collect();
    if named.is_empty() {
        return Vec::new();
    }
    let which = named.join(" and ");
    vec![match plays_tasks {
        true => format!(
            "[endpoints] {which}: only the tasks use them; the grid's rows measure generated \
             catalogues offline"
        ),
        false => format!(
            "[endpoints] {which}: the sweep's grid measures generated catalogues offline and \
             plays no tasks, so they are not used (give --tasks, or [sweep] tasks = true)"
        ),
    }]
}

/// The catalogue sizes: the command line's, the `[sweep]` section's, the `[catalogue]`'s, or
/// the default grid.
fn rows(a: &Overrides, spec: &SweepSpec, scenario: Option<&Scenario>) -> Result<Vec<usize>> {
    let rows = if !a.rows.is_empty() {
        a.rows.clone()
    } else if let Some(r) = &spec.rows {
        r.clone()
    } else if let Some(s) = scenario {
        s.catalogue.rows.clone()
    } else {
        DEFAULT_ROWS.to_vec()
    };
    if rows.is_empty() {
        return Err(Error::input(
            "the sweep has no catalogue sizes; give --rows",
        ));
    }
    for &n in &rows {
        check_rows(n)?;
    }
    Ok(rows)
}

/// The surfaces, tokenizers and clients of the grid, each at least one.
fn grid(
    a: &Overrides,
    spec: &SweepSpec,
    scenario: Option<&Scenario>,
) -> Result<(Vec<SurfaceKind>, Vec<Tokenizer>, Vec<Client>)> {
    let surface_names = match &a.surface {
        Some(s) => split(s),
        None => spec.surfaces.clone().unwrap_or_else(|| vec!["all".into()]),
    };
    // No tokenizer named: each client's model counts with its own (an empty list).
    let tokenizer_names = match &a.tokenizer {
        Some(s) => split(s),
        None => spec.tokenizers.clone().unwrap_or_default(),
    };
    let client_names = match &a.client {
        Some(s) => split(s),
        None => spec.clients.clone().unwrap_or_else(|| match scenario {
            Some(s) => vec![s.client.name.clone()],
            None => DEFAULT_CLIENTS.iter().map(|s| s.to_string()).collect(),
        }),
    };
    let mut clients = Vec::new();
    for c in &client_names {
        let client = Client::named(c)?;
        clients.push(match scenario.filter(|s| s.client.name == *c) {
            Some(s) => s.client.apply(client),
            None => client,
        });
    }
    let tokenizers = tokenizer_names
        .iter()
        .map(|t| Tokenizer::parse(t))
        .collect::<Result<Vec<_>>>()?;
    let surfaces = surfaces(&surface_names)?;
    if surfaces.is_empty() || clients.is_empty() || (tokenizers.is_empty() && a.tokenizer.is_some())
    {
        return Err(Error::input(
            "the sweep needs at least one surface, tokenizer and client",
        ));
    }
    Ok((surfaces, tokenizers, clients))
}

/// The scenario `--tasks` plays: the named tasks on the grid's surfaces, at `--task-rows` or
/// the sweep's sizes from 1 to [`DEFAULT_TASK_MAX_ROWS`], with the sweep's name, profile and seed.
fn task_scenario(
    a: &Overrides,
    list: &str,
    rows: &[usize],
    surfaces: &[SurfaceKind],
    clients: &[Client],
    (name, profile, seed): (&str, &str, u64),
) -> Result<Scenario> {
    let tasks = split(list);
    for t in &tasks {
        if !crate::driver::tasks::NAMES.contains(&t.as_str()) && t != "turn" {
            return Err(Error::unknown("task", t, &crate::driver::tasks::NAMES));
        }
    }
    let task_rows: Vec<usize> = if a.task_rows.is_empty() {
        rows.iter()
            .copied()
            .filter(|n| *n > 0 && *n <= DEFAULT_TASK_MAX_ROWS)
            .collect()
    } else {
        a.task_rows.clone()
    };
    if task_rows.is_empty() {
        return Err(Error::input(
            "--tasks needs a catalogue size to play at; give --task-rows",
        ));
    }
    Ok(Scenario {
        name: name.to_string(),
        about: String::new(),
        catalogue: CatalogueSpec {
            profile: profile.to_string(),
            seed,
            rows: task_rows,
        },
        client: ClientSpec::default(),
        run: RunSpec {
            surfaces: surfaces.iter().map(|s| s.name().to_string()).collect(),
            clients: clients.iter().map(|c| c.name.clone()).collect(),
            tasks,
            orders: a.orders,
            max_rounds: 400,
            phrasing: scenario::Phrasing::Literal,
            policies: a.policies.clone(),
            parallel_calls: 16,
            client_resolvers: Vec::new(),
            log_dir: None,
        },
        upstream: Default::default(),
        endpoints: Default::default(),
        sweep: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scenario's running endpoints that the sweep does not use are said, and nothing is
    /// said when it names none.
    #[test]
    fn unused_endpoints_are_said() {
        let none = crate::driver::scenario::Endpoints::default();
        assert!(ignored(&none, false).is_empty());
        let server = crate::driver::scenario::Endpoints {
            server: Some("http://127.0.0.1:8787".into()),
            ..Default::default()
        };
        let said = ignored(&server, false);
        assert_eq!(said.len(), 1);
        assert!(
            said[0].contains("server") && said[0].contains("not used"),
            "{said:?}"
        );
        assert!(ignored(&server, true)[0].contains("only the tasks"));
    }
}
