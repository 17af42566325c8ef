//! The service suite's chart: the measured requests' latency percentiles
//! (p50-max) per load, one panel per load, one line per runtime, a
//! log-scale y axis in ms, the `/users` p99 target as a dashed line; the
//! mixed suite's panels (`mixed::chart`). Beside `--json` as
//! `STEM-service.svg`, else `weft-bench/service.svg` in the target
//! directory.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::Load;
use super::result::ServiceResult;
use crate::common::chart::{draw_panel, path_for_suite, to_io};
use crate::common::figure::rows::RowKind;

/// Width of one load's panel and the chart's height, px.
const PANEL_WIDTH: u32 = 480;
const HEIGHT: u32 = 440;

/// Where the chart goes.
pub fn path_for(json: Option<&Path>) -> PathBuf {
    path_for_suite(json, "service")
}

/// Writes the chart of `result` to `path` (creating its directory).
pub fn write(path: &Path, result: &ServiceResult) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    let panels = result.rows.len().max(1);
    let width = PANEL_WIDTH * u32::try_from(panels).unwrap_or(1);
    let root = SVGBackend::new(path, (width, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(to_io)?;
    let s = &result.settings;
    let title = format!(
        "service suite: weft-service on {}, {} workers; latency of the measured requests",
        s.database, s.suite.workers
    );
    let root = root.titled(&title, ("sans-serif", 18)).map_err(to_io)?;
    for (area, row) in root.split_evenly((1, panels)).iter().zip(&result.rows) {
        let series = s
            .suite
            .runtimes
            .iter()
            .filter_map(|name| {
                let latency = row.runtimes.get(name)?.ok()?.latency.as_ref()?;
                Some((name.as_str(), latency.charted()))
            })
            .collect();
        let limits = match Load::from_name(&row.name) {
            Some(Load::Seed004) => vec![("target /users p99 ≤ 5 ms".to_owned(), 5.0)],
            _ => Vec::new(),
        };
        draw_panel(area, Load::label_of(&row.name).to_owned(), series, limits)?;
    }
    root.present().map_err(to_io)
}
