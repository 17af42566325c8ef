//! What the suites' charts share: where a chart goes ([`path_for_suite`]:
//! beside the `--json` file, else in the cargo target directory) and a
//! panel of latency percentiles ([`draw_panel`]), drawn with `plotters`'
//! SVG backend (no bitmap or font stack: the SVG names a `sans-serif`
//! font and the viewer lays the text out).

use std::io;
use std::path::{Path, PathBuf};

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;

/// Where `suite`'s chart goes: `STEM-SUITE.svg` beside `json` if given, else
/// `weft-bench/SUITE.svg` in the target directory.
pub fn path_for_suite(json: Option<&Path>, suite: &str) -> PathBuf {
    match json {
        Some(json) => {
            let stem = json
                .file_stem()
                .map_or_else(|| "weft-bench".into(), |s| s.to_string_lossy().into_owned());
            json.with_file_name(format!("{stem}-{suite}.svg"))
        }
        None => target_dir().join("weft-bench").join(format!("{suite}.svg")),
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

/// A panel of latency percentiles (p50-max on x, ms on a log y axis):
/// one line per runtime of `series`, a dashed line per limit.
pub fn draw_panel<DB: DrawingBackend>(
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

pub fn to_io(err: impl std::fmt::Display) -> io::Error {
    io::Error::other(err.to_string())
}
