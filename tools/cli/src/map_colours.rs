//! What a map's pixels are coloured by, each with its legend: elevation
//! (a hypsometric ramp fitted to the packs' own heights), provenance
//! (measured, resampled, filled, invented), and the stored tiles' depth or
//! geometric error.
//!
//! The key decision: each colouring reads through the same readers as the
//! rest of the tools (heights already read by [`crate::map::render`], the
//! stack's `origin_at`, each pack's index) and returns the legend that
//! names its colours, so a colour and its legend entry are made in one
//! place.

use anyhow::{Context, Result};
use planet_terrain::Geodetic;
use planet_terrain::ground::{GroundStack, OriginMemo, Provenance, StackedPack, locate};

use crate::map::{MapSpec, What, each_pixel};
use crate::picture::{Legend, Picture, elevation_colour, metres_label, ramp_colour, sampled};

pub const MEASURED: [u8; 3] = [40, 160, 70];
pub const RESAMPLED: [u8; 3] = [235, 170, 40];
pub const INVENTED: [u8; 3] = [200, 50, 50];
/// A void of a pack's DEM its bake filled, where no pack below shows through.
pub const FILLED: [u8; 3] = [150, 90, 200];
/// Measured by a pack below, seen through a void of a pack above.
pub const THROUGH_VOID: [u8; 3] = [60, 190, 190];
/// Where no pack stores a tile (depth and error maps).
pub const NO_DATA: [u8; 3] = [70, 70, 70];

/// The hypsometric palette's metres a height is drawn with when the ramp
/// spans `lo..hi`: the sea's colours over the depths below 0 m, the land's
/// over the heights above (all of the land's for ground that never reaches
/// the sea), so a park 2,300-4,300 m up uses the whole land ramp rather
/// than a few shades of it, and the coast stays where the colours turn.
pub fn palette_metres(h: f64, (lo, hi): (f64, f64)) -> f64 {
    const DEEPEST: f64 = -8000.0;
    const HIGHEST: f64 = 5000.0;
    let t = |a: f64, b: f64| if b - a > 1e-6 { ((h - a) / (b - a)).clamp(0.0, 1.0) } else { 0.5 };
    if lo >= 0.0 {
        HIGHEST * t(lo, hi)
    } else if hi <= 0.0 {
        DEEPEST * (1.0 - t(lo, hi))
    } else if h < 0.0 {
        DEEPEST * (h / lo).min(1.0)
    } else {
        HIGHEST * (h / hi).min(1.0)
    }
}

/// The lowest and highest finite height of the pixels inside the packs'
/// coverage (of all pixels when none is inside; 0..1 m when none is finite).
fn fitted_range(heights: &[f64], covered: &dyn Fn(f64, f64) -> bool, spec: &MapSpec) -> (f64, f64) {
    let width = spec.width as usize;
    let inside: Vec<f64> = heights
        .iter()
        .enumerate()
        .filter(|&(k, _)| {
            let (lat, lon) = spec.point((k % width) as u32, (k / width) as u32);
            covered(lat, lon)
        })
        .map(|(_, &h)| h)
        .collect();
    let fitted = if inside.is_empty() { heights } else { &inside[..] };
    let finite = || fitted.iter().copied().filter(|h| h.is_finite());
    let lowest = finite().fold(f64::INFINITY, f64::min);
    let highest = finite().fold(f64::NEG_INFINITY, f64::max);
    if lowest <= highest { (lowest, highest) } else { (0.0, 1.0) }
}

/// The elevation map. The ramp is fitted to the heights inside the packs'
/// coverage (`covered`): the ellipsoid's 0 m that stands in around a
/// regional pack is not ground it holds (the Sierra's ramp started at 0 m).
pub(crate) fn elevation(
    heights: &[f64],
    covered: &dyn Fn(f64, f64) -> bool,
    depth: u8,
    spec: &MapSpec,
    picture: &mut Picture,
) -> Result<Legend> {
    let range = spec.range.unwrap_or_else(|| fitted_range(heights, covered, spec));
    for (k, &h) in heights.iter().enumerate() {
        let colour = elevation_colour(palette_metres(h, range));
        picture.put(k as i64 % i64::from(spec.width), k as i64 / i64::from(spec.width), colour);
    }
    let (lo, hi) = range;
    let mut marks = vec![lo, hi];
    if lo < 0.0 && hi > 0.0 {
        marks.insert(1, 0.0);
    }
    let span = (hi - lo).max(1e-6);
    let ticks = marks.into_iter().map(|m| ((m - lo) / span, metres_label(m))).collect();
    let how = if spec.range.is_some() { "RAMP AS GIVEN" } else { "RAMP FITTED" };
    Ok(Legend::Bar {
        title: format!("ELEVATION M (DEPTH {depth}, {how})"),
        colours: sampled(256, |t| elevation_colour(palette_metres(lo + t * span, range))),
        ticks,
    })
}

pub(crate) fn provenance(stack: &GroundStack, spec: &MapSpec, picture: &mut Picture) -> Result<Legend> {
    // Every pixel is an independent point query of the shared stack, so
    // bands of rows are drawn on every core: the bake's report waits on
    // this picture after the pool has gone idle.
    let (width, rows) = (spec.width, spec.map_height());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, rows.max(1) as usize) as u32;
    let band_rows = rows.div_ceil(threads);
    let bands: Vec<Result<Vec<[u8; 3]>>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|band| {
                scope.spawn(move || {
                    let mut colours = Vec::with_capacity((band_rows * width) as usize);
                    // Neighbouring pixels nearly always share their tiles.
                    let mut memo = OriginMemo::default();
                    for y in band * band_rows..((band + 1) * band_rows).min(rows) {
                        for x in 0..width {
                            let (lat, lon) = spec.point(x, y);
                            let at = Geodetic::from_degrees(lat, lon, 0.0);
                            let origin =
                                stack.origin_at_with(at, &mut memo).context("reading where the ground comes from")?;
                            colours.push(match (origin.filled, origin.provenance) {
                                (Some(_), _) => FILLED,
                                (None, Provenance::Measured) if origin.through_void_of.is_some() => THROUGH_VOID,
                                (None, Provenance::Measured) => MEASURED,
                                (None, Provenance::Resampled { .. }) => RESAMPLED,
                                (None, Provenance::Invented) => INVENTED,
                            });
                        }
                    }
                    Ok(colours)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("a provenance band panicked")).collect()
    });
    for (band, colours) in (0u32..).zip(bands) {
        for (i, colour) in (0u32..).zip(colours?) {
            picture.put(i64::from(i % width), i64::from(band * band_rows + i / width), colour);
        }
    }
    Ok(provenance_legend())
}

pub fn provenance_legend() -> Legend {
    Legend::Swatches {
        title: "PROVENANCE".into(),
        items: vec![
            (MEASURED, "MEASURED".into()),
            (THROUGH_VOID, "MEASURED BELOW, THROUGH A VOID ABOVE".into()),
            (RESAMPLED, "RESAMPLED".into()),
            (FILLED, "VOID FILLED BY THE BAKE".into()),
            (INVENTED, "INVENTED (NO PACK)".into()),
        ],
    }
}

/// The deepest stored tile over a point among the packs whose box holds it
/// (the topmost on a tie): its depth and geometric error.
fn deepest_stored(packs: &[StackedPack], at: Geodetic, lat: f64, lon: f64) -> Result<Option<(u8, f64)>> {
    let mut best: Option<(u8, f64)> = None;
    for pack in packs.iter().rev() {
        let pack = pack.source.pack();
        let header = pack.header();
        if !header.coverage.contains(lat, lon) {
            continue;
        }
        let (tile, _, _) = locate(&header.body, at, header.max_depth);
        if let Some(entry) = pack.deepest_stored_ancestor(tile)? {
            let depth = entry.tile().depth();
            if best.is_none_or(|(d, _)| depth > d) {
                best = Some((depth, f64::from(entry.geometric_error)));
            }
        }
    }
    Ok(best)
}

pub(crate) fn stored(packs: &[StackedPack], spec: &MapSpec, picture: &mut Picture) -> Result<Legend> {
    let mut cells = Vec::with_capacity(spec.width as usize * spec.map_height() as usize);
    each_pixel(spec, |_, _, at| {
        let (lat, lon) = (at.latitude.to_degrees(), at.longitude.to_degrees());
        cells.push(deepest_stored(packs, at, lat, lon)?);
        Ok(())
    })?;
    let found = || cells.iter().flatten();
    let uncovered = cells.iter().any(Option::is_none);
    match spec.what {
        What::Depth => {
            let lo = found().map(|c| c.0).min().unwrap_or(0);
            let hi = found().map(|c| c.0).max().unwrap_or(0);
            let colour = move |d: u8| ramp_colour(if hi > lo { f64::from(d - lo) / f64::from(hi - lo) } else { 0.5 });
            for (k, cell) in cells.iter().enumerate() {
                let c = cell.map_or(NO_DATA, |(d, _)| colour(d));
                picture.put(k as i64 % i64::from(spec.width), k as i64 / i64::from(spec.width), c);
            }
            let mut items: Vec<([u8; 3], String)> = (lo..=hi).map(|d| (colour(d), d.to_string())).collect();
            if uncovered {
                items.push((NO_DATA, "NONE".into()));
            }
            Ok(Legend::Swatches { title: "STORED DEPTH".into(), items })
        }
        _ => {
            // Errors span decades (0 m for measured leaves to kilometres at
            // the roots), so the scale is logarithmic from the smallest
            // positive error; a zero error takes the scale's low end.
            let positive = || found().map(|c| c.1).filter(|e| *e > 0.0);
            let lo = positive().fold(f64::INFINITY, f64::min);
            let lo = if lo.is_finite() { lo } else { 0.01 };
            let hi = positive().fold(lo * 10.0, f64::max);
            let (l0, l1) = (lo.log10(), hi.log10());
            let t = move |e: f64| ((e.max(lo).log10() - l0) / (l1 - l0)).clamp(0.0, 1.0);
            for (k, cell) in cells.iter().enumerate() {
                let c = cell.map_or(NO_DATA, |(_, e)| ramp_colour(t(e)));
                picture.put(k as i64 % i64::from(spec.width), k as i64 / i64::from(spec.width), c);
            }
            let mid = 10f64.powf(0.5 * (l0 + l1));
            let ticks = vec![(0.0, metres_label(lo)), (t(mid), metres_label(mid)), (1.0, metres_label(hi))];
            let title = if uncovered { "GEOMETRIC ERROR M, LOG (GREY: NONE)" } else { "GEOMETRIC ERROR M, LOG" };
            Ok(Legend::Bar { title: title.into(), colours: sampled(256, ramp_colour), ticks })
        }
    }
}

#[cfg(test)]
mod tests {
    use planet_terrain::pack::Coverage;

    use super::*;

    /// Regression (#32): a regional pack's ramp was fitted over the map's
    /// margin too, where the ellipsoid's 0 m stands in, so a park 2,300 to
    /// 4,300 m up started its ramp at 0 m.
    #[test]
    fn the_ramp_fits_the_heights_inside_the_packs_coverage() {
        let region = Coverage { south: 0.0, west: 0.0, north: 10.0, east: 10.0 };
        let spec = MapSpec { what: What::Elevation, region, width: 10, detail: false, range: None };
        let park = Coverage { south: 2.0, west: 2.0, north: 8.0, east: 8.0 };
        let heights: Vec<f64> = (0..spec.map_height())
            .flat_map(|y| (0..10).map(move |x| (x, y)))
            .map(|(x, y)| {
                let (lat, lon) = spec.point(x, y);
                if park.contains(lat, lon) { 2300.0 + 200.0 * lon.floor() } else { 0.0 }
            })
            .collect();
        let covered = |lat: f64, lon: f64| park.contains(lat, lon);
        let (lo, hi) = fitted_range(&heights, &covered, &spec);
        assert!(lo >= 2300.0 && hi > lo, "fitted to the park, not its margin: {lo}..{hi}");
        assert_eq!(fitted_range(&heights, &|_, _| true, &spec).0, 0.0, "a global pack's ramp takes every pixel");
    }
}
