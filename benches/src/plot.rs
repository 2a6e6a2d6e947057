//! SVG plots (plotters): time per frame of every backend/thread configuration.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};
use plotters::prelude::*;

use crate::report::RunRecord;

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

/// Draws `runs` (all of one scene, query and target) as query time and update time per frame
/// into `dir/<scene>__<query>__<target>.svg`; returns the file written.
pub fn frame_times(dir: &Path, runs: &[&RunRecord]) -> Result<PathBuf> {
    let first = runs.first().ok_or_else(|| anyhow!("no runs to plot"))?;
    let safe = |s: &str| s.replace(['|', '/', ' '], "_");
    let path = dir.join(format!(
        "{}__{}__{}.svg",
        safe(&first.scene),
        safe(&first.query),
        safe(&first.target)
    ));
    let frames = runs
        .iter()
        .flat_map(|r| r.frames.iter().map(|f| f.frame))
        .max()
        .unwrap_or(0);
    let top = runs
        .iter()
        .flat_map(|r| r.frames.iter().map(|f| f.query_ms.max(f.update_ms)))
        .fold(0.0f64, f64::max)
        * 1.1;
    draw(&path, runs, frames, top)?;
    Ok(path)
}

fn draw(path: &Path, runs: &[&RunRecord], frames: usize, top: f64) -> Result<()> {
    let first = runs.first().ok_or_else(|| anyhow!("no runs to plot"))?;
    let root = SVGBackend::new(path, (900, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{} — {} ({})", first.scene, first.query, first.target),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..(frames.max(1) as f64), 0f64..top.max(1e-3))
        .map_err(|e| anyhow!("{e}"))?;
    chart
        .configure_mesh()
        .x_desc("frame")
        .y_desc("ms")
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    for (k, r) in runs.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        let label = format!("{} x{} query", r.backend, r.threads);
        chart
            .draw_series(LineSeries::new(
                r.frames.iter().map(|f| (f.frame as f64, f.query_ms)),
                color.stroke_width(2),
            ))
            .map_err(|e| anyhow!("{e}"))?
            .label(label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
            });
        if r.frames.iter().any(|f| f.update_ms > 0.0) {
            chart
                .draw_series(LineSeries::new(
                    r.frames.iter().map(|f| (f.frame as f64, f.update_ms)),
                    color.mix(0.5).stroke_width(1),
                ))
                .map_err(|e| anyhow!("{e}"))?
                .label(format!("{} x{} update", r.backend, r.threads))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.mix(0.5)));
        }
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    root.present().map_err(|e| anyhow!("{e}"))?;
    Ok(())
}
