//! The mixed lane's chart: short-request latency percentiles (p50, p90,
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

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;

use super::Load;
use super::result::{LoadResult, MixedResult};
use super::targets::Rule;
use crate::common::figure::lane::RowKind;

/// Width of one load's panel, px.
const PANEL_WIDTH: u32 = 480;
/// Height of the chart, px.
const HEIGHT: u32 = 440;

/// Where the chart goes: beside `json` if given, else in the target
/// directory.
pub fn path_for(json: Option<&Path>) -> PathBuf {
    path_for_lane(json, "mixed")
}

/// Where `lane`'s chart goes: `STEM-LANE.svg` beside `json` if given, else
/// `weft-bench/LANE.svg` in the target directory.
pub fn path_for_lane(json: Option<&Path>, lane: &str) -> PathBuf {
    match json {
        Some(json) => {
            let stem = json
                .file_stem()
                .map_or_else(|| "weft-bench".into(), |s| s.to_string_lossy().into_owned());
            json.with_file_name(format!("{stem}-{lane}.svg"))
        }
        None => target_dir().join("weft-bench").join(format!("{lane}.svg")),
    }
}

/// The cargo target directory this executable lives in (`<target>/release`
/// or `<target>/debug`, marked by cargo's `CACHEDIR.TAG`), so the chart
/// lands beside the build whatever `CARGO_TARGET_DIR` says; `target`
/// (relative to the current directory) otherwise.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().ok();
    let target = exe.as_deref().and_then(Path::parent).and_then(Path::parent);
    match target {
        Some(dir) if dir.join("CACHEDIR.TAG").is_file() => dir.to_path_buf(),
        _ => PathBuf::from("target"),
    }
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
        "mixed lane: short-request latency ({} workers)",
        result.settings.lane.workers
    );
    let root = root.titled(&title, ("sans-serif", 18)).map_err(to_io)?;
    let areas = root.split_evenly((1, result.loads.len().max(1)));
    for (area, load) in areas.iter().zip(&result.loads) {
        panel(area, load, &result.settings.lane.runtimes)?;
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

/// A panel of latency percentiles (p50-max on x, ms on a log y axis):
/// one line per runtime of `series`, a dashed line per limit.
pub(crate) fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    caption: String,
    series: Vec<(&str, [(&str, f64); 5])>,
    limits: Vec<(String, f64)>,
) -> io::Result<()> {
    let values = series
        .iter()
        .flat_map(|(_, points)| points.iter().map(|p| p.1))
        .chain(limits.iter().map(|l| l.1))
        .filter(|v| *v > 0.0);
    let (low, high) = values.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (low, high) = if low <= high {
        (low / 2.0, high * 2.0)
    } else {
        (0.1, 1_000.0)
    };
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(56)
        .build_cartesian_2d((0..4).into_segmented(), (low..high).log_scale())
        .map_err(to_io)?;
    let labels = ["p50", "p90", "p99", "p99.9", "max"];
    chart
        .configure_mesh()
        .disable_x_mesh()
        // No light lines: on a log axis they crowd out the target lines.
        .light_line_style(TRANSPARENT)
        .x_labels(5)
        .x_label_formatter(&|x| match x {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => usize::try_from(*i)
                .ok()
                .and_then(|i| labels.get(i))
                .map_or(String::new(), |l| (*l).to_owned()),
            SegmentValue::Last => String::new(),
        })
        .y_desc("ms")
        .y_label_formatter(&|v| crate::common::table::ms(*v))
        .draw()
        .map_err(to_io)?;
    let at = |index: usize| SegmentValue::CenterOf(i32::try_from(index).unwrap_or(0));
    for (label, ms) in limits {
        let style = BLACK.stroke_width(1);
        chart
            .draw_series(DashedLineSeries::new(
                [(SegmentValue::Exact(0), ms), (SegmentValue::Last, ms)],
                6,
                4,
                style,
            ))
            .map_err(to_io)?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
    }
    for (name, points) in series {
        let color = color(name);
        let line = points.iter().enumerate().map(|(i, p)| (at(i), p.1));
        chart
            .draw_series(LineSeries::new(line, color.stroke_width(2)))
            .map_err(to_io)?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
            });
        let dots = points
            .iter()
            .enumerate()
            .map(|(i, p)| Circle::new((at(i), p.1), 3, color.filled()));
        chart.draw_series(dots).map_err(to_io)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 12))
        .draw()
        .map_err(to_io)
}

/// A fixed color per runtime, so every chart reads the same way: weft in
/// reds and purples, its peers in blue and green.
fn color(runtime: &str) -> RGBColor {
    match runtime {
        "weft" => RGBColor(210, 40, 40),
        "weft-no-stall-monitor" => RGBColor(240, 140, 30),
        "weft-no-demote" => RGBColor(150, 60, 170),
        "tokio" => RGBColor(40, 90, 200),
        "smol" => RGBColor(40, 150, 70),
        _ => RGBColor(90, 90, 90),
    }
}

pub(crate) fn to_io(err: impl std::fmt::Display) -> io::Error {
    io::Error::other(err.to_string())
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
