//! `toolcost calibrate`: how far toolcost's estimate of a request is from what the provider
//! observed, from a forward-mode gateway log, and the correction that closes the gap.
//!
//! A usable row is a successful request whose usage the provider reported (`observed`) and
//! beside which the gateway logged its own estimate. Per model (and per model and surface
//! where the row's metadata names one) it gives the ratio observed/estimated of total input
//! tokens (mean, sample standard deviation, min, max, n), the error of the estimate as it
//! stands (mean absolute percentage error), and a fitted correction `c`: the factor that
//! minimises the squared relative error of the corrected estimate,
//! sum(((c * est - obs) / obs)^2), which is c = sum(1/r) / sum(1/r^2) with r = obs/est.
//!
//! [`Calibration`] is the `--out` file (TOML); [`Calibration::apply`] multiplies the input-token
//! figures of `measure` rows whose card and tokenizer match an entry and labels them
//! `calibrated:<file>(x<c> ±<spread>%, n=<n>)`.

use crate::error::{Error, Result};
use crate::gateway::log::{self, LogRow};
use crate::gateway::mock::card_for;
use crate::measure::MeasureRow;
use crate::pricing::{PriceCard, Usage};
use crate::provider::Format;
use crate::report::{Column, Tabular};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The estimator of the correction, as written in reports and the calibration file.
pub const ESTIMATOR: &str =
    "least squares on relative error: c = sum(1/r) / sum(1/r^2), r = observed/estimated";

/// The surface of rows pooled over every surface.
pub const ALL_SURFACES: &str = "all";

/// One model (or model and surface): the ratio of observed to estimated input tokens. This
/// struct is the machine-readable contract of `calibrate --json` and `--csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationRow {
    /// The model as the requests named it.
    pub model: String,
    /// The surface the rows' metadata names, or `all` for every row of the model.
    pub surface: String,
    /// The price card whose render model and tokenizer made the estimate.
    pub card: String,
    /// Rows with observed usage and an estimate.
    pub n: usize,
    /// Observed / estimated total input tokens: mean, sample standard deviation, min, max.
    pub ratio_mean: f64,
    pub ratio_sd: f64,
    pub ratio_min: f64,
    pub ratio_max: f64,
    /// ratio_sd / ratio_mean, in percent.
    pub spread_pct: f64,
    /// Mean absolute percentage error of the estimate as it stands: mean(|est - obs| / obs).
    pub mape_pct: f64,
    /// The fitted correction (see [`ESTIMATOR`]).
    pub correction: f64,
    /// Mean absolute percentage error of the corrected estimate.
    pub mape_corrected_pct: f64,
    /// Evidence label of the estimate the ratio is taken to (`estimated:<tokenizer>`, ...).
    pub estimate_label: String,
}

impl Tabular for CalibrationRow {
    const COLUMNS: &'static [Column] = &[
        Column::field("ratio_mean").places(4),
        Column::field("ratio_sd").places(4),
        Column::field("ratio_min").places(4),
        Column::field("ratio_max").places(4),
        Column::field("spread_pct").places(2),
        Column::field("mape_pct").places(2),
        Column::field("correction").places(4),
        Column::field("mape_corrected_pct").places(2),
    ];
}

/// One observation: the provider's total input tokens and toolcost's estimate of them.
#[derive(Debug, Clone, Copy)]
struct Pair {
    observed: f64,
    estimated: f64,
}

/// Why a row of the log does not calibrate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unusable {
    /// A failed request, or no observed usage or no estimate on it.
    NoPair,
    /// Observed and estimated input more than [`MAX_RATIO`] apart.
    OutOfBounds,
    /// An estimate that leaves out media parts the provider billed: the gap is the media's,
    /// not the count's.
    Media,
}

/// Whether a row can calibrate: a successful request with observed usage and an estimate
/// within [`MAX_RATIO`] of each other.
fn pair(r: &LogRow) -> Result<Pair, Unusable> {
    let est = r
        .estimated_input_tokens
        .filter(|&e| e > 0)
        .ok_or(Unusable::NoPair)?;
    let both = r.usage_source == "observed"
        && (200..300).contains(&r.status)
        && r.error.is_none()
        && r.input_tokens > 0;
    if !both {
        return Err(Unusable::NoPair);
    }
    if r.estimate_label
        .as_deref()
        .is_some_and(|l| l.ends_with(crate::billing::render::MEDIA_NOT_COUNTED))
    {
        return Err(Unusable::Media);
    }
    if !plausible(r.input_tokens as f64 / est as f64) {
        return Err(Unusable::OutOfBounds);
    }
    Ok(Pair {
        observed: r.input_tokens as f64,
        estimated: est as f64,
    })
}

/// The rows of a log that did not calibrate, by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LeftOut {
    /// Failed requests and rows without observed usage or an estimate.
    pub without_both: usize,
    /// Rows whose observed input is more than [`MAX_RATIO`] times off the estimate.
    pub out_of_bounds: usize,
    /// Rows whose request held media parts its estimate leaves out.
    pub with_media: usize,
}

impl LeftOut {
    pub fn total(&self) -> usize {
        self.without_both + self.out_of_bounds + self.with_media
    }
}

/// The widest ratio of observed to estimated input tokens a row may show and still count: a
/// provider's tokenizer and render rules move a count by well under 4x either way (Claude's
/// current tokenizer, the largest gap recorded, is 2x o200k), so a row further off is a broken
/// or hostile upstream, not a correction (an assumed bound).
pub const MAX_RATIO: f64 = 4.0;

fn plausible(ratio: f64) -> bool {
    ratio.is_finite() && (1.0 / MAX_RATIO..=MAX_RATIO).contains(&ratio)
}

/// The statistics of a group of observations.
fn row(model: &str, surface: &str, card: &str, label: &str, pairs: &[Pair]) -> CalibrationRow {
    let n = pairs.len();
    let ratios: Vec<f64> = pairs.iter().map(|p| p.observed / p.estimated).collect();
    let mean = ratios.iter().sum::<f64>() / n as f64;
    let sd = if n > 1 {
        (ratios.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let correction = ratios.iter().map(|r| 1.0 / r).sum::<f64>()
        / ratios.iter().map(|r| 1.0 / r.powi(2)).sum::<f64>();
    let mape = |c: f64| {
        100.0
            * pairs
                .iter()
                .map(|p| (c * p.estimated - p.observed).abs() / p.observed)
                .sum::<f64>()
            / n as f64
    };
    CalibrationRow {
        model: model.to_string(),
        surface: surface.to_string(),
        card: card.to_string(),
        n,
        ratio_mean: mean,
        ratio_sd: sd,
        ratio_min: ratios.iter().copied().fold(f64::INFINITY, f64::min),
        ratio_max: ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        spread_pct: 100.0 * sd / mean,
        mape_pct: mape(1.0),
        correction,
        mape_corrected_pct: mape(correction),
        estimate_label: label.to_string(),
    }
}

/// The calibration rows of a log: per model (`surface` = `all`), then per model and surface
/// where the rows' metadata names one. Models and surfaces in name order.
pub fn calibrate(log_path: &Path) -> Result<Vec<CalibrationRow>> {
    calibrate_counting(log_path).map(|(rows, _)| rows)
}

/// [`calibrate`], and how many rows of the log it left out and why.
pub fn calibrate_counting(log_path: &Path) -> Result<(Vec<CalibrationRow>, LeftOut)> {
    let rows = log::read_all(log_path)?;
    let mut left = LeftOut::default();
    // (model, estimate label) -> (format, pairs, pairs per surface)
    type Group = (String, Vec<Pair>, BTreeMap<String, Vec<Pair>>);
    let mut groups: BTreeMap<(String, String), Group> = BTreeMap::new();
    for r in &rows {
        let p = match pair(r) {
            Ok(p) => p,
            Err(Unusable::NoPair) => {
                left.without_both += 1;
                continue;
            }
            Err(Unusable::OutOfBounds) => {
                left.out_of_bounds += 1;
                continue;
            }
            Err(Unusable::Media) => {
                left.with_media += 1;
                continue;
            }
        };
        let label = r.estimate_label.clone().unwrap_or_default();
        let g = groups
            .entry((r.model.clone(), label))
            .or_insert_with(|| (r.provider_format.clone(), Vec::new(), BTreeMap::new()));
        g.1.push(p);
        let surface = serde_json::from_str::<Value>(&r.metadata)
            .ok()
            .and_then(|m| m.get("surface").and_then(Value::as_str).map(str::to_string));
        if let Some(s) = surface.filter(|s| !s.is_empty()) {
            g.2.entry(s).or_default().push(p);
        }
    }
    if groups.is_empty() && left.out_of_bounds > 0 {
        return Err(Error::input(format!(
            "{}: {} row(s) have both observed usage and an estimate, but in every one the two are \
             more than {MAX_RATIO}x apart (a broken upstream, or an estimate of another model), so \
             nothing is fitted ({} rows read)",
            log_path.display(),
            left.out_of_bounds,
            rows.len()
        )));
    }
    if groups.is_empty() && left.with_media > 0 {
        return Err(Error::input(format!(
            "{}: {} row(s) have both observed usage and an estimate, but their requests held \
             media parts (images, documents, audio) the estimate does not count, so nothing is \
             fitted ({} rows read); calibrate on requests of text and tools",
            log_path.display(),
            left.with_media,
            rows.len()
        )));
    }
    if groups.is_empty() {
        return Err(Error::input(format!(
            "{}: no row has both observed usage and an estimate ({} rows read); calibrate reads \
             the log of `toolcost gateway --upstream <provider URL>`, whose successful rows carry both",
            log_path.display(),
            rows.len()
        )));
    }
    let mut out = Vec::new();
    for ((model, label), (format, all, surfaces)) in &groups {
        let format = Format::ALL
            .into_iter()
            .find(|f| f.name() == format)
            .unwrap_or(Format::ALL[0]);
        // A model without a card of its own gets no correction: it would be filed under a
        // stand-in card and applied to another model's rows.
        let card = match crate::gateway::mock::card_warning(format, model) {
            None => card_for(format, model).id,
            Some(_) => String::new(),
        };
        out.push(row(model, ALL_SURFACES, &card, label, all));
        for (surface, pairs) in surfaces {
            out.push(row(model, surface, &card, label, pairs));
        }
    }
    Ok((out, left))
}

/// One model's correction, as the calibration file holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Correction {
    pub card: String,
    pub correction: f64,
    pub n: usize,
    pub ratio_mean: f64,
    pub ratio_sd: f64,
    pub ratio_min: f64,
    pub ratio_max: f64,
    pub spread_pct: f64,
    pub mape_pct: f64,
    pub estimate_label: String,
    /// Per surface, for reading; `measure` applies the model's correction.
    #[serde(default)]
    pub surface: BTreeMap<String, Correction>,
}

impl Correction {
    fn of(r: &CalibrationRow) -> Correction {
        Correction {
            card: r.card.clone(),
            correction: r.correction,
            n: r.n,
            ratio_mean: r.ratio_mean,
            ratio_sd: r.ratio_sd,
            ratio_min: r.ratio_min,
            ratio_max: r.ratio_max,
            spread_pct: r.spread_pct,
            mape_pct: r.mape_pct,
            estimate_label: r.estimate_label.clone(),
            surface: BTreeMap::new(),
        }
    }
}

/// A calibration file: the corrections per model, with the log they came from and when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub log: String,
    pub date: String,
    pub estimator: String,
    pub model: BTreeMap<String, Correction>,
}

impl Calibration {
    /// The calibration of these rows (from [`calibrate`]) of the log at `log_path`.
    pub fn from_rows(log_path: &Path, rows: &[CalibrationRow]) -> Calibration {
        let mut model: BTreeMap<String, Correction> = BTreeMap::new();
        for r in rows
            .iter()
            .filter(|r| r.surface == ALL_SURFACES && !r.card.is_empty())
        {
            model.insert(r.model.clone(), Correction::of(r));
        }
        for r in rows.iter().filter(|r| r.surface != ALL_SURFACES) {
            if let Some(m) = model.get_mut(&r.model) {
                m.surface.insert(r.surface.clone(), Correction::of(r));
            }
        }
        Calibration {
            log: log_path.display().to_string(),
            date: crate::clock::now_rfc3339(),
            estimator: ESTIMATOR.to_string(),
            model,
        }
    }

    /// The file's TOML (written by hand: the toml crate is built here to parse only).
    pub fn to_toml(&self) -> String {
        let q = |s: &str| serde_json::to_string(s).expect("a string serialises");
        let mut out = String::from(
            "# toolcost calibration: observed / estimated input tokens per model, from a gateway log.\n",
        );
        out.push_str(&format!(
            "log = {}\ndate = {}\nestimator = {}\n",
            q(&self.log),
            q(&self.date),
            q(&self.estimator)
        ));
        let fields = |c: &Correction| {
            format!(
                "card = {}\ncorrection = {:?}\nn = {}\nratio_mean = {:?}\nratio_sd = {:?}\nratio_min = {:?}\nratio_max = {:?}\nspread_pct = {:?}\nmape_pct = {:?}\nestimate_label = {}\n",
                q(&c.card), c.correction, c.n, c.ratio_mean, c.ratio_sd, c.ratio_min, c.ratio_max, c.spread_pct, c.mape_pct, q(&c.estimate_label)
            )
        };
        for (name, c) in &self.model {
            out.push_str(&format!("\n[model.{}]\n{}", q(name), fields(c)));
            for (surface, s) in &c.surface {
                out.push_str(&format!(
                    "\n[model.{}.surface.{}]\n{}",
                    q(name),
                    q(surface),
                    fields(s)
                ));
            }
        }
        out
    }

    /// Read a calibration file.
    pub fn load(path: &Path) -> Result<Calibration> {
        let text = crate::input::read_text(path, crate::input::SMALL)?;
        let cal: Calibration = toml::from_str(&text).map_err(|e| {
            Error::input(format!("{}: not a calibration file: {e}", path.display()))
        })?;
        for (name, c) in &cal.model {
            if !(c.correction.is_finite() && c.correction > 0.0) {
                return Err(Error::input(format!(
                    "{}: model {name}: the correction must be a positive number, not {}",
                    path.display(),
                    c.correction
                )));
            }
        }
        Ok(cal)
    }

    /// The entry for a card and estimate label; an error when several models of the file
    /// share them (the file must say which one applies).
    fn entry(&self, card: &str, label: &str) -> Result<Option<(&str, &Correction)>> {
        let found: Vec<(&str, &Correction)> = self
            .model
            .iter()
            .filter(|(_, c)| c.card == card && c.estimate_label == label)
            // Only a model's own card: an entry filed under another card (a hand-edited file,
            // or one written before this rule) is never applied to that card's rows.
            .filter(|(m, _)| PriceCard::lookup(m).is_some_and(|own| own.id == card))
            .map(|(m, c)| (m.as_str(), c))
            .collect();
        match found.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(*one)),
            many => Err(Error::input(format!(
                "the calibration has several models for card {card} ({}): keep the one to apply",
                many.iter().map(|(m, _)| *m).collect::<Vec<_>>().join(", ")
            ))),
        }
    }

    /// Multiply the input-token figures of the rows this calibration covers (the same card and
    /// the same estimate: tokenizer and render model) by their model's correction, rederive
    /// their dollars, and label them `calibrated:<name>(x<c> ±<spread>%, n=<n>)`. Returns how
    /// many rows changed; the others are left as they are.
    pub fn apply(&self, name: &str, rows: &mut [MeasureRow]) -> Result<usize> {
        let mut changed = 0;
        for r in rows.iter_mut() {
            // The estimate's own label: a row may add where its tool-use prompt comes from.
            let estimate = r
                .label
                .split("; tool-use prompt")
                .next()
                .unwrap_or("")
                .to_string();
            let estimate = estimate.as_str();
            let Some((_, c)) = self.entry(&r.model, estimate)? else {
                continue;
            };
            let f = c.correction;
            let scale = |n: u64| (n as f64 * f).round() as u64;
            let old_input = r.input_tokens;
            let input = scale(r.input_tokens);
            let cached = scale(r.cached_input_tokens).min(input);
            let written = scale(r.cache_write_tokens).min(input - cached);
            r.input_tokens = input;
            r.cached_input_tokens = cached;
            r.cache_write_tokens = written;
            r.uncached_input_tokens = input - cached - written;
            r.marginal_tokens_per_definition = r.marginal_tokens_per_definition.map(|m| m * f);
            // The warm dollars are the card's for the scaled usage, at the tier the scaled input
            // falls in; the cold turn's split is not in the row, so its input part scales with
            // the correction and with the change of tier, and its output is priced anew.
            if let Ok(card) = PriceCard::named(&r.model) {
                let warm = Usage {
                    uncached_input: r.uncached_input_tokens,
                    cached_input: r.cached_input_tokens,
                    cache_write: r.cache_write_tokens,
                    output: r.output_tokens,
                };
                r.cost_usd = r.cost_usd.map(|_| card.cost(&warm));
                let (before, after) = (card.rates(old_input), card.rates(input));
                let out = |rate: f64| r.output_tokens as f64 * rate / 1e6;
                let k = match before.input > 0.0 {
                    true => after.input / before.input,
                    false => 1.0,
                };
                r.cost_usd_cold = r
                    .cost_usd_cold
                    .map(|cold| out(after.output) + (cold - out(before.output)) * f * k);
                let (old_note, new_note) = (card.tier_note(old_input), card.tier_note(input));
                if old_note != new_note {
                    if !old_note.is_empty() {
                        r.cost_label = r.cost_label.replacen(&old_note, "", 1);
                    }
                    r.cost_label.push_str(&new_note);
                }
            }
            let label = format!(
                "calibrated:{name}(x{f:.3} ±{:.1}%, n={})",
                c.spread_pct, c.n
            );
            r.cost_label = r.cost_label.replacen(estimate, &label, 1);
            r.label = label;
            changed += 1;
        }
        Ok(changed)
    }
}
