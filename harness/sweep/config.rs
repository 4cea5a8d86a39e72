//! A sweep's configuration: the defaults, a scenario's `[sweep]` section, then the command
//! line, each overriding the one before.

use super::{Config, SweepSpec, DAYS, TURNS_PER_DAY};
use crate::cli::SweepArgs;
use crate::client::Client;
use crate::driver::scenario::{self, CatalogueSpec, ClientSpec, RunSpec, Scenario};
use crate::error::{Error, Result};
use crate::surface::SurfaceKind;
use crate::tokens::Tokenizer;
use std::path::PathBuf;

/// The grid the issue names: 0 to 100 times the recorded catalogue.
pub const DEFAULT_ROWS: [usize; 6] = [0, 10, 100, 856, 8_560, 85_600];
pub const DEFAULT_TOKENIZERS: [&str; 2] = ["o200k", "cl100k"];
pub const DEFAULT_CLIENTS: [&str; 2] = ["claude-cli", "openai-agent"];
/// Whole tasks are played up to this N unless --task-rows says otherwise: beyond it the
/// per-row surface's 150-round task resends more than a gigabyte of definitions.
pub const DEFAULT_TASK_MAX_ROWS: usize = 8_560;

fn surfaces(list: &[String]) -> Result<Vec<SurfaceKind>> {
    if list.iter().any(|s| s == "all") {
        return Ok(SurfaceKind::all());
    }
    list.iter().map(|s| SurfaceKind::parse(s.trim())).collect()
}

fn split(s: &str) -> Vec<String> {
    s.split(',')
        .map(|x| x.trim().to_string())
        .filter(|x| !x.is_empty())
        .collect()
}

/// Merge defaults, the scenario's `[sweep]` and the command line.
pub fn from_args(a: &SweepArgs) -> Result<Config> {
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
    let rows = if !a.rows.is_empty() {
        a.rows.clone()
    } else if let Some(r) = &spec.rows {
        r.clone()
    } else if let Some(s) = &scenario {
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
        crate::error::check_rows(n)?;
    }
    let surface_names = match &a.surface {
        Some(s) => split(s),
        None => spec.surfaces.clone().unwrap_or_else(|| vec!["all".into()]),
    };
    let tokenizer_names = match &a.tokenizer {
        Some(s) => split(s),
        None => spec
            .tokenizers
            .clone()
            .unwrap_or_else(|| DEFAULT_TOKENIZERS.iter().map(|s| s.to_string()).collect()),
    };
    let client_names = match &a.client {
        Some(s) => split(s),
        None => spec.clients.clone().unwrap_or_else(|| match &scenario {
            Some(s) => vec![s.client.name.clone()],
            None => DEFAULT_CLIENTS.iter().map(|s| s.to_string()).collect(),
        }),
    };
    let mut clients = Vec::new();
    for c in &client_names {
        let mut client = Client::named(c)?;
        if let Some(m) = scenario
            .as_ref()
            .filter(|s| s.client.name == *c)
            .and_then(|s| s.client.model.clone())
        {
            client.model = m;
        }
        clients.push(client);
    }
    let tokenizers = tokenizer_names
        .iter()
        .map(|t| Tokenizer::parse(t))
        .collect::<Result<Vec<_>>>()?;
    let surfaces = surfaces(&surface_names)?;
    if surfaces.is_empty() || tokenizers.is_empty() || clients.is_empty() {
        return Err(Error::input(
            "the sweep needs at least one surface, tokenizer and client",
        ));
    }
    let tasks = match (&a.tasks, &scenario) {
        (Some(list), _) => {
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
            Some(Scenario {
                name: name.clone(),
                about: String::new(),
                catalogue: CatalogueSpec {
                    profile: profile.clone(),
                    seed,
                    rows: task_rows,
                },
                client: ClientSpec::default(),
                run: RunSpec {
                    surfaces: surfaces.iter().map(|s| s.name().to_string()).collect(),
                    tasks,
                    orders: a.orders,
                    max_rounds: 400,
                    phrasing: scenario::Phrasing::Literal,
                },
                upstream: Default::default(),
                endpoints: Default::default(),
                sweep: None,
            })
        }
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
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports").join(&name));
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
    })
}
