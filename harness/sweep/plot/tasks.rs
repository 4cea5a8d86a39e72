//! The task charts: rounds and tokens per task as grouped bars, and the share lines of a
//! search evaluation.

use super::{colour, compact, decades, e, frame, legend, write, Chart, FONT};
use crate::driver::TaskResult;
use crate::error::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// Grouped bars: one group per task, one bar per surface, log y.
pub struct TaskBars {
    pub stem: String,
    pub title: String,
    pub y_desc: String,
    pub tasks: Vec<String>,
    pub surfaces: Vec<String>,
    /// values[task][surface]
    pub values: Vec<Vec<Option<f64>>>,
}

impl Chart for TaskBars {
    fn stem(&self) -> &str {
        &self.stem
    }
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> std::result::Result<(), String> {
        root.fill(&WHITE).map_err(e)?;
        let (y0, y1) = decades(self.values.iter().flatten().flatten().copied());
        // Half a decade below the smallest bar so that it shows; a decade of headroom above the
        // tallest for the legend.
        let (y0, y1) = (y0 / 2.0, y1 * 10.0);
        let groups = self.tasks.len().max(1) as f64;
        let mut chart = frame(root, &self.title)
            .build_cartesian_2d(0f64..groups, (y0..y1).log_scale())
            .map_err(e)?;
        let tasks = self.tasks.clone();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(self.tasks.len() * 2 + 1)
            .x_label_formatter(&|x| {
                let f = x.fract();
                if (f - 0.5).abs() < 0.01 {
                    tasks.get(x.floor() as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_desc("task")
            .y_desc(&self.y_desc)
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 17))
            .y_label_formatter(&|y| compact(*y))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(e)?;
        let k = self.surfaces.len().max(1) as f64;
        let width = 0.8 / k;
        for (s, surface) in self.surfaces.iter().enumerate() {
            let c = colour(surface);
            let bars: Vec<Rectangle<(f64, f64)>> = self
                .values
                .iter()
                .enumerate()
                .filter_map(|(t, row)| {
                    let v = row.get(s).copied().flatten()?;
                    let x = t as f64 + 0.1 + s as f64 * width;
                    Some(Rectangle::new(
                        [(x, y0), (x + width * 0.9, v.max(y0))],
                        c.filled(),
                    ))
                })
                .collect();
            chart
                .draw_series(bars)
                .map_err(e)?
                .label(surface.clone())
                .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], c.filled()));
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        Ok(())
    }
}

/// What the task charts need of one task run: the driver's results and a gateway log's
/// summaries both give it.
pub struct TaskPoint {
    pub surface: String,
    pub task: String,
    pub rows: usize,
    pub rounds: usize,
    pub input_tokens: u64,
    pub label: String,
}

impl From<&TaskResult> for TaskPoint {
    fn from(t: &TaskResult) -> Self {
        TaskPoint {
            surface: t.surface_shown(),
            task: t.task.clone(),
            rows: t.rows,
            rounds: t.rounds,
            input_tokens: t.input_tokens,
            label: t.label.clone(),
        }
    }
}

pub fn task_plots(dir: &Path, tasks: &[TaskPoint]) -> Result<Vec<PathBuf>> {
    let Some(n) = tasks.iter().map(|t| t.rows).max() else {
        return Ok(Vec::new());
    };
    let at: Vec<&TaskPoint> = tasks.iter().filter(|t| t.rows == n).collect();
    let mut names: Vec<String> = Vec::new();
    let mut surfaces: Vec<String> = Vec::new();
    for t in &at {
        if !names.contains(&t.task) {
            names.push(t.task.clone());
        }
        if !surfaces.contains(&t.surface) {
            surfaces.push(t.surface.clone());
        }
    }
    let grid = |f: &dyn Fn(&TaskPoint) -> f64| -> Vec<Vec<Option<f64>>> {
        names
            .iter()
            .map(|task| {
                surfaces
                    .iter()
                    .map(|s| {
                        at.iter()
                            .find(|t| t.task == *task && t.surface == *s)
                            .map(|t| f(t))
                    })
                    .collect()
            })
            .collect()
    };
    let label = at.first().map(|t| t.label.clone()).unwrap_or_default();
    let mut files = write(
        dir,
        &TaskBars {
            stem: "task-rounds".into(),
            title: format!("Rounds per task, N={}", crate::report::thousands(n as u64)),
            y_desc: "model rounds (requests through the gateway, log scale)".into(),
            tasks: names.clone(),
            surfaces: surfaces.clone(),
            values: grid(&|t| t.rounds as f64),
        },
    )?;
    let tokens = grid(&|t| t.input_tokens as f64);
    files.extend(write(
        dir,
        &TaskBars {
            stem: "task-tokens".into(),
            title: format!(
                "Input tokens per task, all rounds, N={}",
                crate::report::thousands(n as u64)
            ),
            y_desc: format!("input tokens ({label}, log scale)"),
            tasks: names.clone(),
            surfaces: surfaces.clone(),
            values: tokens,
        },
    )?);
    Ok(files)
}

/// One line of a [`Shares`] chart: label, palette index, dashed or not, and its (N, share)
/// points.
pub type ShareLine = (String, usize, bool, Vec<(f64, f64)>);

/// Shares (0 to 100%) against N on a log axis: one line per series, coloured by its palette
/// index and dashed or solid, so two properties (say, resolver and query kind) read at once.
pub struct Shares {
    pub stem: String,
    pub title: String,
    pub y_desc: String,
    pub lines: Vec<ShareLine>,
}

/// Colours for series that are not surfaces, distinct on white.
const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

impl Chart for Shares {
    fn stem(&self) -> &str {
        &self.stem
    }
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> std::result::Result<(), String> {
        root.fill(&WHITE).map_err(e)?;
        let (x0, x1) = decades(self.lines.iter().flat_map(|l| l.3.iter().map(|p| p.0)));
        let mut chart = frame(root, &self.title)
            .build_cartesian_2d((x0..x1).log_scale(), 0.0..1.0)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc("catalogue size N (rows, log scale)")
            .y_desc(&self.y_desc)
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 17))
            .x_label_formatter(&|x| compact(*x))
            .y_label_formatter(&|y| format!("{:.0}%", y * 100.0))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(e)?;
        for (label, index, dashed, points) in &self.lines {
            let c = PALETTE[index % PALETTE.len()];
            let dashed = *dashed;
            if dashed {
                chart
                    .draw_series(DashedLineSeries::new(
                        points.clone(),
                        8,
                        5,
                        c.stroke_width(2),
                    ))
                    .map_err(e)?
                    .label(label.clone())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 8, y)], c.stroke_width(3))
                    });
            } else {
                chart
                    .draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))
                    .map_err(e)?
                    .label(label.clone())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 22, y)], c.stroke_width(3))
                    });
            }
            chart
                .draw_series(points.iter().map(|p| Circle::new(*p, 4, c.filled())))
                .map_err(e)?;
        }
        legend(&mut chart, SeriesLabelPosition::LowerLeft)?;
        Ok(())
    }
}
