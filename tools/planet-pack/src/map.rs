//! `planet-pack map`: a stack's equirectangular map written as a PNG, and
//! the parsers of its `--range` and `--width`.
//!
//! The key decision: the map itself is planet-cli's (`planet_cli::map`,
//! which the bake's report picture draws too); this command only opens
//! the packs, writes the picture whole and says what it drew.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::ValueEnum;
use planet_cli::args;
use planet_cli::map::{MAX_SIDE, MapSpec};
use planet_cli::stack::PackOpener;

/// `--range MIN,MAX`: two finite heights in metres, the first the lower.
pub(crate) fn elevation_range(text: &str) -> Result<(f64, f64), String> {
    let parse = |part: &str| part.trim().parse::<f64>().ok().filter(|v| v.is_finite());
    match text.split(',').collect::<Vec<_>>()[..] {
        [lo, hi] => match (parse(lo), parse(hi)) {
            (Some(lo), Some(hi)) if lo < hi => Ok((lo, hi)),
            (Some(_), Some(_)) => Err(format!("'{text}': MIN must be below MAX")),
            _ => Err(format!("'{text}': MIN and MAX must be finite numbers of metres")),
        },
        _ => Err(format!("'{text}': give MIN,MAX in metres, e.g. 2000,4500")),
    }
}

pub(crate) fn map_width(text: &str) -> Result<u32, String> {
    Ok(args::count_in(text, 1..=u64::from(MAX_SIDE), "--width (map pixels)")? as u32)
}

pub(crate) fn draw_map(opener: &PackOpener, paths: &[PathBuf], spec: &MapSpec, out: &Path) -> Result<()> {
    let packs = opener.open_packs(paths)?;
    let started = std::time::Instant::now();
    let picture = planet_cli::map::render(&packs, spec)?;
    planet_cli::picture::write_png(out, &picture).with_context(|| format!("writing {}", out.display()))?;
    outln!(
        "wrote {} ({}x{} px with its legend, {} of {} pack(s), {:.2} s)",
        out.display(),
        picture.width,
        picture.height,
        spec.what.to_possible_value().map(|v| v.get_name().to_owned()).unwrap_or_default(),
        paths.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
