//! The mixed suite's chart: short-request latency percentiles (p50, p90,
//! p99, p99.9, max) per load, one panel per load, one line per runtime, a
//! log-scale y axis in ms, the latency targets as dashed lines. Drawn with
//! `plotters`' SVG backend (no bitmap or font stack: the SVG names a
//! `sans-serif` font and the viewer lays the text out).
//!
//! Where it goes ([`path_for`]): next to the `--json` file (same stem,
//! `-mixed.svg`), else `weft-bench/mixed.svg` in the cargo target
//! directory this binary was built in, else `target/weft-bench/mixed.svg`.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::Load;
use super::result::{LoadResult, MixedResult};
use super::targets::Rule;
use crate::common::chart::{draw_panel, path_for_suite, to_io};
use crate::common::figure::rows::RowKind;

/// Width of one load's panel, px.
const PANEL_WIDTH: u32 = 480;
/// Height of the chart, px.
const HEIGHT: u32 = 440;

/// Where the chart goes: beside `json` if given, else in the target
/// directory.
pub fn path_for(json: Option<&Path>) -> PathBuf {
    path_for_suite(json, "mixed")
}

/// Writes the chart of `result` to `path` (creating its directory).
pub fn write(path: &Path, result: &MixedResult) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    let panels = u32::try_from(result.loads.len().max(1)).unwrap_or(1);
    let root = SVGBackend::new(path, (PANEL_WIDTH * panels, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(to_io)?;
    let title = format!(
        "mixed suite: short-request latency ({} workers)",
        result.settings.suite.workers
    );
    let root = root.titled(&title, ("sans-serif", 18)).map_err(to_io)?;
    let areas = root.split_evenly((1, result.loads.len().max(1)));
    for (area, load) in areas.iter().zip(&result.loads) {
        panel(area, load, &result.settings.suite.runtimes)?;
    }
    root.present().map_err(to_io)
}

/// One load's panel.
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    load: &LoadResult,
    runtimes: &[String],
) -> io::Result<()> {
    let series: Vec<(&str, [(&str, f64); 5])> = runtimes
        .iter()
        .filter_map(|name| {
            let short = load.runtimes.get(name)?.ok()?.short.as_ref()?;
            Some((name.as_str(), short.charted()))
        })
        .collect();
    let known = Load::from_name(&load.name);
    let limits: Vec<(String, f64)> = known
        .map(Rule::of)
        .unwrap_or(&[])
        .iter()
        .filter_map(|rule| match *rule {
            Rule::ShortP99AtMost(ms) => Some((format!("target p99 ≤ {ms} ms"), ms)),
            Rule::ShortP999AtMost(ms) => Some((format!("target p99.9 ≤ {ms} ms"), ms)),
            _ => None,
        })
        .collect();
    let caption = Load::label_of(&load.name).to_owned();
    draw_panel(area, caption, series, limits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chart_goes_beside_the_json() {
        assert_eq!(
            path_for(Some(Path::new("/tmp/run.json"))),
            Path::new("/tmp/run-mixed.svg")
        );
        assert!(path_for(None).ends_with("weft-bench/mixed.svg"));
    }
}
