//! Charts, each written as PNG and SVG with plotters. Text is set in DejaVu Sans, embedded in
//! the binary (the `dejavu` crate) and registered with plotters' ab_glyph backend, so charts
//! render the same on a machine with no font packages at all.

use crate::error::{Error, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};
use std::sync::Once;

const FONT: &str = "sans-serif";
const SIZE: (u32, u32) = (1100, 700);

fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bytes are a valid TrueType font shipped by the crate; registration cannot fail.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// A chart that draws itself on any plotters backend.
pub trait Chart {
    /// File name without extension.
    fn stem(&self) -> &str;
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> std::result::Result<(), String>;
}

/// Write `chart` as `<stem>.png` and `<stem>.svg` under `dir`.
pub fn write<C: Chart>(dir: &Path, chart: &C) -> Result<Vec<PathBuf>> {
    register_fonts();
    let png = dir.join(format!("{}.png", chart.stem()));
    let svg = dir.join(format!("{}.svg", chart.stem()));
    let fail = |p: &Path, e: String| Error::input(format!("{}: {e}", p.display()));
    {
        let root = BitMapBackend::new(&png, SIZE).into_drawing_area();
        chart.draw(&root).map_err(|e| fail(&png, e))?;
        root.present().map_err(|e| fail(&png, e.to_string()))?;
    }
    {
        let root = SVGBackend::new(&svg, SIZE).into_drawing_area();
        chart.draw(&root).map_err(|e| fail(&svg, e))?;
        root.present().map_err(|e| fail(&svg, e.to_string()))?;
    }
    Ok(vec![png, svg])
}

/// The frame every chart shares: a bold title, margins and room for the axis labels.
fn frame<'a, 'b, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    title: &str,
) -> ChartBuilder<'a, 'b, DB> {
    let mut b = ChartBuilder::on(root);
    b.caption(title, (FONT, 24).into_font().style(FontStyle::Bold))
        .margin(18)
        .x_label_area_size(56)
        .y_label_area_size(90);
    b
}

/// The legend box every chart uses.
fn legend<'a, DB: DrawingBackend + 'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    at: SeriesLabelPosition,
) -> std::result::Result<(), String> {
    chart
        .configure_series_labels()
        .position(at)
        .label_font((FONT, 15))
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(160, 160, 160))
        .draw()
        .map_err(e)
}

/// One colour per surface, the same in every chart.
pub fn colour(surface: &str) -> RGBColor {
    let [r, g, b] = crate::surface::colour(surface);
    RGBColor(r, g, b)
}

/// 1, 10, 100, 1k, 10k, 100k, 1M ...
pub fn compact(x: f64) -> String {
    let a = x.abs();
    let (v, unit) = if a >= 1e9 {
        (x / 1e9, "G")
    } else if a >= 1e6 {
        (x / 1e6, "M")
    } else if a >= 1e3 {
        (x / 1e3, "k")
    } else {
        (x, "")
    };
    let s = if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else if v.abs() >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    };
    format!("{s}{unit}")
}

fn dollars(x: f64) -> String {
    if x >= 1.0 {
        format!("${}", compact(x))
    } else if x >= 0.01 {
        format!("${x:.2}")
    } else {
        format!("${x:.4}")
    }
}

fn e<T: std::fmt::Display>(x: T) -> String {
    x.to_string()
}

/// Lower and upper bounds of a log axis that hold every value, in whole decades.
fn decades(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::MAX, f64::MIN);
    for v in values.filter(|v| *v > 0.0) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi {
        return (1.0, 10.0);
    }
    (
        10f64.powf(lo.log10().floor()),
        10f64.powf(hi.log10().ceil().max(lo.log10().floor() + 1.0)),
    )
}

/// A point of a per-surface chart: (N, value). A refused request has none.
pub type Point = (f64, f64);

/// For each series, the earlier series it lies on (every point within 2% of the other's at the
/// same N, and the same Ns): drawn under or beside it at this scale, so the legend says so.
fn coinciding(series: &[(String, Vec<Point>)]) -> Vec<Option<usize>> {
    let same = |a: &[Point], b: &[Point]| {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(p, q)| p.0 == q.0 && (p.1 - q.1).abs() <= 0.02 * p.1.abs().max(q.1.abs()))
    };
    (0..series.len())
        .map(|i| (0..i).find(|&j| same(&series[i].1, &series[j].1)))
        .collect()
}

/// A log-log line chart of one value per surface against N.
pub struct PerSurface {
    pub stem: String,
    pub title: String,
    pub y_desc: String,
    /// Per surface: (N, value). A refused request (the provider answers 400) has no point, and
    /// a surface refused at every N no line.
    pub series: Vec<(String, Vec<Point>)>,
    /// Horizontal limit lines: (value, label).
    pub hlines: Vec<(f64, String)>,
    /// Vertical limit lines at N: (N, label).
    pub vlines: Vec<(f64, String)>,
    pub money: bool,
    /// A line under the plot that explains what a reader would take for a mistake (a caching
    /// minimum that makes a smaller prompt dearer).
    pub note: Option<String>,
}

impl Chart for PerSurface {
    fn stem(&self) -> &str {
        &self.stem
    }
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> std::result::Result<(), String> {
        root.fill(&WHITE).map_err(e)?;
        let xs = self.series.iter().flat_map(|(_, p)| p.iter().map(|p| p.0));
        let (x0, x1) = decades(xs);
        let ys = self
            .series
            .iter()
            .flat_map(|(_, p)| p.iter().map(|p| p.1))
            .chain(self.hlines.iter().map(|h| h.0));
        let (y0, y1) = decades(ys);
        let mut chart = frame(root, &self.title)
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
            .map_err(e)?;
        let money = self.money;
        chart
            .configure_mesh()
            .x_desc("catalogue size N (rows, log scale)")
            .y_desc(&self.y_desc)
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 17))
            .x_label_formatter(&|x| compact(*x))
            .y_label_formatter(&|y| if money { dollars(*y) } else { compact(*y) })
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(e)?;
        let grey = RGBColor(90, 90, 90);
        // Lines close to each other (1M and 1,048,576; 200k and 262k on a wide scale) share one
        // label, above the highest of them, at the right (the legend holds the upper left), so
        // no two labels overprint.
        let mut lines: Vec<&(f64, String)> = self
            .hlines
            .iter()
            .filter(|(v, _)| *v >= y0 && *v <= y1)
            .collect();
        lines.sort_by(|a, b| a.0.total_cmp(&b.0));
        // Each group: its lines' values (ascending) and their labels.
        let mut groups: Vec<(Vec<f64>, Vec<String>)> = Vec::new();
        // Two labels collide when their lines are closer than a label's height: 18 of the
        // plot's some 560 pixels, on this chart's log scale.
        let near = (y1 / y0).powf(18.0 / 560.0).max(1.2);
        for (v, label) in lines {
            match groups.last_mut() {
                Some((values, labels)) if values.last().is_some_and(|h| *v / *h < near) => {
                    values.push(*v);
                    labels.push(label.clone());
                }
                _ => groups.push((vec![*v], vec![label.clone()])),
            }
        }
        for (values, labels) in &groups {
            let high = *values.last().expect("a group holds a line");
            for &v in values {
                chart
                    .draw_series(DashedLineSeries::new(
                        vec![(x0, v), (x1, v)],
                        6,
                        4,
                        grey.stroke_width(1),
                    ))
                    .map_err(e)?;
            }
            // A long shared label names the first line and counts the rest.
            let text = match labels.join("; ") {
                t if t.chars().count() <= 80 || labels.len() == 1 => t,
                _ => format!(
                    "{} (+{} more line(s) just above)",
                    labels[0],
                    labels.len() - 1
                ),
            };
            chart
                .draw_series(std::iter::once(Text::new(
                    text,
                    (x1 / 1.05, high * 1.08),
                    (FONT, 13)
                        .into_font()
                        .color(&grey)
                        .pos(Pos::new(HPos::Right, VPos::Bottom)),
                )))
                .map_err(e)?;
        }
        for (n, label) in &self.vlines {
            if *n < x0 || *n > x1 {
                continue;
            }
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(*n, y0), (*n, y1)],
                    6,
                    4,
                    grey.stroke_width(1),
                ))
                .map_err(e)?;
            // Right of the line, or left of it when the line is in the right half.
            let right_half = n.ln() > (x0.ln() + x1.ln()) / 2.0;
            let (x, anchor) = if right_half {
                (*n / 1.08, HPos::Right)
            } else {
                (*n * 1.08, HPos::Left)
            };
            chart
                .draw_series(std::iter::once(Text::new(
                    label.clone(),
                    (x, y1 / 1.6),
                    (FONT, 13)
                        .into_font()
                        .color(&grey)
                        .pos(Pos::new(anchor, VPos::Top)),
                )))
                .map_err(e)?;
        }
        let under = coinciding(&self.series);
        for (i, (surface, points)) in self.series.iter().enumerate() {
            let c = colour(surface);
            // A series that lies on an earlier one says so in the legend, and its marks differ
            // in shape, so both can be seen.
            let label = match under[i] {
                Some(j) => format!("{surface} (≈ {})", self.series[j].0),
                None => surface.clone(),
            };
            chart
                .draw_series(LineSeries::new(points.iter().copied(), c.stroke_width(2)))
                .map_err(e)?
                .label(label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 22, y)], c.stroke_width(3))
                });
            let shape = i % 3;
            chart
                .draw_series(points.iter().map(move |&(x, y)| -> DynElement<_, _> {
                    match shape {
                        0 => Circle::new((x, y), 4, c.filled()).into_dyn(),
                        1 => TriangleMarker::new((x, y), 6, c.stroke_width(2)).into_dyn(),
                        _ => Cross::new((x, y), 5, c.stroke_width(2)).into_dyn(),
                    }
                }))
                .map_err(e)?;
        }
        if let Some(note) = &self.note {
            chart
                .draw_series(std::iter::once(Text::new(
                    note.clone(),
                    (x1 / 1.05, y0 * 1.12),
                    (FONT, 13)
                        .into_font()
                        .color(&grey)
                        .pos(Pos::new(HPos::Right, VPos::Bottom)),
                )))
                .map_err(e)?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        Ok(())
    }
}

/// One surface's points: (bytes, tokens, N).
pub type BytesSeries = (String, Vec<(f64, f64, usize)>);

/// Wire bytes against billed tokens, one point per N, for the surfaces given.
pub struct BytesVsTokens {
    pub stem: String,
    pub title: String,
    pub series: Vec<BytesSeries>,
    /// The evidence label of the token axis.
    pub token_label: String,
}

impl Chart for BytesVsTokens {
    fn stem(&self) -> &str {
        &self.stem
    }
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> std::result::Result<(), String> {
        root.fill(&WHITE).map_err(e)?;
        let (x0, x1) = decades(self.series.iter().flat_map(|(_, p)| p.iter().map(|p| p.0)));
        let (y0, y1) = decades(self.series.iter().flat_map(|(_, p)| p.iter().map(|p| p.1)));
        let mut chart = frame(root, &self.title)
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc("request body, bytes (log scale)")
            .y_desc(format!(
                "billed input tokens per turn ({}, log scale)",
                self.token_label
            ))
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 17))
            .x_label_formatter(&|x| format!("{}B", compact(*x)))
            .y_label_formatter(&|y| compact(*y))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(e)?;
        for (surface, points) in &self.series {
            let c = colour(surface);
            let xy: Vec<(f64, f64)> = points.iter().map(|p| (p.0, p.1)).collect();
            chart
                .draw_series(LineSeries::new(xy.clone(), c.stroke_width(2)))
                .map_err(e)?
                .label(surface.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 22, y)], c.stroke_width(3))
                });
            chart
                .draw_series(xy.iter().map(|p| Circle::new(*p, 4, c.filled())))
                .map_err(e)?;
            chart
                .draw_series(points.iter().map(|p| {
                    Text::new(
                        format!("N={}", compact(p.2 as f64)),
                        (p.0 * 1.1, p.1 * 1.15),
                        (FONT, 13).into_font().color(&c),
                    )
                }))
                .map_err(e)?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        Ok(())
    }
}

/// Histogram of compact bytes per tool definition.
pub struct BytesPerDefinition {
    pub rows: usize,
    pub sizes: Vec<usize>,
}

impl Chart for BytesPerDefinition {
    fn stem(&self) -> &str {
        "bytes-per-definition"
    }
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> std::result::Result<(), String> {
        root.fill(&WHITE).map_err(e)?;
        let mut sorted = self.sizes.clone();
        sorted.sort_unstable();
        let bin = 100usize;
        // Bins up to the 99th percentile; the tail goes in the last bin, labelled as such.
        let p99 = sorted
            .get(sorted.len().saturating_sub(1) * 99 / 100)
            .copied()
            .unwrap_or(bin);
        let top = (p99 / bin + 1) * bin;
        let mut counts = vec![0usize; top / bin + 1];
        for &s in &sorted {
            counts[(s.min(top)) / bin] += 1;
        }
        let mean = sorted.iter().sum::<usize>() as f64 / sorted.len().max(1) as f64;
        let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0);
        let ymax = counts.iter().copied().max().unwrap_or(1) as f64 * 1.15;
        let mut chart = frame(
            root,
            &format!(
                "Bytes per tool definition, N={} (compact JSON)",
                crate::report::thousands(self.rows as u64)
            ),
        )
        .build_cartesian_2d(0f64..(top + bin) as f64, 0f64..ymax)
        .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc(format!(
                "bytes per definition ({bin}-byte bins; the last bin holds everything above {top})"
            ))
            .y_desc("definitions")
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 17))
            .x_label_formatter(&|x| compact(*x))
            .y_label_formatter(&|y| compact(*y))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(e)?;
        let c = RGBColor(31, 119, 180);
        chart
            .draw_series(counts.iter().enumerate().map(|(i, &n)| {
                let x = (i * bin) as f64;
                Rectangle::new(
                    [(x, 0.0), (x + bin as f64 * 0.92, n as f64)],
                    c.mix(0.8).filled(),
                )
            }))
            .map_err(e)?
            .label(format!(
                "{} definitions, mean {:.0} B, median {} B",
                crate::report::thousands(sorted.len() as u64),
                mean,
                median
            ))
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], c.filled()));
        let red = RGBColor(214, 39, 40);
        chart
            .draw_series(DashedLineSeries::new(
                vec![(mean, 0.0), (mean, ymax)],
                6,
                4,
                red.stroke_width(2),
            ))
            .map_err(e)?
            .label("mean")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], red.stroke_width(2)));
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    }
}

mod tasks;
pub use tasks::{task_plots, ShareLine, Shares, TaskBars, TaskPoint};
