//! Catalogue profiles: the knobs the generator is calibrated with, one TOML file each under
//! `fixtures/profiles/`, embedded in the binary.

use crate::error::{Error, Result};
use serde::Deserialize;

/// How keys are spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyStyle {
    /// `STRIPE_INVOICE_ITEMS_LIST`
    UpperSnake,
    /// `create_issue`
    Snake,
}

/// One calibrated profile.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    /// What it is calibrated to, with the source of each target.
    pub about: String,
    pub key_style: KeyStyle,
    /// Share of keys that use only the first word of a multi-word resource.
    pub short_resource_share: f64,
    /// The `# WHAT:` line grows clause by clause until it reaches a length drawn from this range.
    pub what_chars: [usize; 2],
    /// Weights of the runner types fn, http, flow, agent (assigned by quota, so exact at scale).
    pub runner_weights: [u32; 4],
    /// Argument counts: most rows draw from `props_small`, `share_medium` from `props_medium`,
    /// `share_large` from `props_large`.
    pub props_small: [usize; 2],
    pub props_medium: [usize; 2],
    pub props_large: [usize; 2],
    pub share_medium: f64,
    pub share_large: f64,
    /// Extra words appended to argument descriptions (real servers document arguments at length).
    pub arg_detail_sentences: [usize; 2],
    /// A definition larger than this (Python-spaced bytes) loses arguments until it fits.
    pub max_definition_bytes: usize,
    /// Share of rows whose stored schema carries a legacy violation the normaliser repairs.
    pub legacy_violation_share: f64,
    /// Rows added per 832 projected rows by `--inactive` (the published measurement: 13 disabled,
    /// 45 hidden, 2 test-shaped).
    pub inactive_per_832: [usize; 3],
}

const EMBEDDED: &[(&str, &str)] = &[
    (
        "seed-2026-07",
        include_str!("../../fixtures/profiles/seed-2026-07.toml"),
    ),
    (
        "real-mcp",
        include_str!("../../fixtures/profiles/real-mcp.toml"),
    ),
];

impl Profile {
    pub fn names() -> Vec<&'static str> {
        EMBEDDED.iter().map(|(n, _)| *n).collect()
    }

    /// A profile by name.
    pub fn named(name: &str) -> Result<Profile> {
        let (_, text) = EMBEDDED
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| Error::unknown("profile", name, &Self::names()))?;
        toml::from_str(text).map_err(|e| Error::input(format!("profile {name}: {e}")))
    }
}
