//! Roughness versus scale: the statistic detail synthesis is judged by.
//!
//! The key decision: roughness at a depth is the *detrended* standard
//! deviation of a tile's core heights (the least-squares plane in the tile's
//! sample grid removed), taken as the root mean square over a fixed set of
//! tiles. A tile at depth `d` spans `128` samples of that depth, so the
//! statistic is the relief within a window that halves each level; for a
//! self-affine surface it goes as `window^H`, and the exponent `H` is minus
//! the slope of `log2(roughness)` against depth. Measured depths and
//! synthesized depths are measured the same way, through the same source,
//! so the two exponents can be compared directly.

use crate::BoundsAt;
use crate::{HeightSource, SourceError, SourceTile, sample_directions};
use planet_geo::address::{TILE_CELLS, TileAddress};
use planet_packfile::Coverage;

/// The detrended standard deviation (metres) of a tile's core samples.
pub fn detrended_std(tile: &SourceTile) -> f64 {
    let n = TILE_CELLS as i32;
    let centre = f64::from(n) / 2.0;
    let (mut sum, mut sx, mut sy, mut xx) = (0.0, 0.0, 0.0, 0.0);
    let count = f64::from((n + 1) * (n + 1));
    for j in 0..=n {
        for i in 0..=n {
            let h = f64::from(tile.height(i, j));
            let (x, y) = (f64::from(i) - centre, f64::from(j) - centre);
            sum += h;
            sx += h * x;
            sy += h * y;
            xx += x * x;
        }
    }
    // On the symmetric grid the plane's coefficients separate.
    let (mean, bx, by) = (sum / count, sx / xx, sy / xx);
    let mut residual = 0.0;
    for j in 0..=n {
        for i in 0..=n {
            let r = f64::from(tile.height(i, j)) - mean - bx * (f64::from(i) - centre) - by * (f64::from(j) - centre);
            residual += r * r;
        }
    }
    (residual / count).sqrt()
}

/// Whether a unit direction of `source`'s body lies inside `coverage`.
fn within(source: &dyn HeightSource, coverage: Coverage) -> impl Fn(glam::DVec3) -> bool {
    let ellipsoid = *source.body().ellipsoid();
    move |d| {
        let g = ellipsoid.direction_to_geodetic(d);
        coverage.contains(g.latitude.to_degrees(), g.longitude.to_degrees())
    }
}

/// The tiles a depth is measured on: the seeds' ancestors at or above the
/// seeds' depth, and below it `per_side x per_side` descendants of each seed
/// spread evenly over it (fewer where the seed has fewer).
pub fn tiles_at(seeds: &[TileAddress], depth: u8, per_side: u32) -> Vec<TileAddress> {
    let mut tiles: Vec<TileAddress> = Vec::new();
    for &seed in seeds {
        if depth <= seed.depth() {
            tiles.push(seed.ancestor_at(depth).expect("not deeper than the seed"));
            continue;
        }
        let k = depth - seed.depth();
        let n = 1u32 << k;
        let g = per_side.min(n);
        for a in 0..g {
            for b in 0..g {
                let (x, y) = ((2 * a + 1) * n / (2 * g), (2 * b + 1) * n / (2 * g));
                let t = TileAddress::new(seed.face().index(), depth, (seed.x() << k) + x, (seed.y() << k) + y);
                tiles.push(t.expect("inside the seed"));
            }
        }
    }
    tiles.sort_by_key(|t| t.identity());
    tiles.dedup();
    tiles
}

/// Root mean square detrended standard deviation per depth.
pub fn roughness_by_depth(
    source: &dyn HeightSource,
    seeds: &[TileAddress],
    depths: impl IntoIterator<Item = u8>,
    per_side: u32,
) -> Result<Vec<(u8, f64)>, SourceError> {
    depths
        .into_iter()
        .map(|d| {
            let tiles = tiles_at(seeds, d, per_side);
            let mut sum = 0.0;
            for &t in &tiles {
                sum += detrended_std(&source.tile(t)?).powi(2);
            }
            Ok((d, (sum / tiles.len().max(1) as f64).sqrt()))
        })
        .collect()
}

/// A power law of roughness against window, fitted as a least-squares
/// line of `log2(roughness)` against depth (each depth halves the window,
/// so the slope is minus the exponent `H`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoughnessLaw {
    pub exponent: f64,
    mean_depth: f64,
    mean_log2: f64,
}

impl RoughnessLaw {
    /// The law through `(depth, roughness)` points (depths may be any
    /// scale that halves the window per unit).
    pub fn fit(points: &[(f64, f64)]) -> RoughnessLaw {
        let n = points.len() as f64;
        let xs: Vec<f64> = points.iter().map(|&(d, _)| d).collect();
        let ys: Vec<f64> = points.iter().map(|&(_, s)| s.max(f64::MIN_POSITIVE).log2()).collect();
        let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
        let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
        let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
        RoughnessLaw { exponent: -sxy / sxx, mean_depth: mx, mean_log2: my }
    }

    /// The law's roughness (metres) at `depth`.
    pub fn at(&self, depth: f64) -> f64 {
        (self.mean_log2 - self.exponent * (depth - self.mean_depth)).exp2()
    }
}

/// The roughness exponent `H` of `(depth, roughness)` points
/// ([`RoughnessLaw::fit`]).
pub fn fit_exponent(points: &[(u8, f64)]) -> f64 {
    let points: Vec<(f64, f64)> = points.iter().map(|&(d, s)| (f64::from(d), s)).collect();
    RoughnessLaw::fit(&points).exponent
}

/// Root mean square detrended standard deviation of a tile's core heights
/// over the non-overlapping square windows of `window` cells (a power of two
/// up to 128): the roughness at a scale inside one tile, without reading a
/// deeper tile.
pub fn window_roughness(tile: &SourceTile, window: u32) -> f64 {
    window_roughness_where(tile, window, &|_, _| true).unwrap_or(0.0)
}

/// [`window_roughness`] over only the windows whose every core sample
/// `(i, j)` (0..=128) `keep` accepts: a regional pack's tiles hold samples
/// outside its box that it never measured. `None` when no window qualifies.
pub fn window_roughness_where(tile: &SourceTile, window: u32, keep: &dyn Fn(i32, i32) -> bool) -> Option<f64> {
    let w = window.clamp(2, TILE_CELLS) as i32;
    let (mut sum, mut count) = (0.0, 0.0);
    for y0 in (0..TILE_CELLS as i32).step_by(w as usize) {
        for x0 in (0..TILE_CELLS as i32).step_by(w as usize) {
            if !(0..=w).all(|j| (0..=w).all(|i| keep(x0 + i, y0 + j))) {
                continue;
            }
            let centre = f64::from(w) / 2.0;
            let (mut s, mut sx, mut sy, mut xx, mut n) = (0.0, 0.0, 0.0, 0.0, 0.0);
            for j in 0..=w {
                for i in 0..=w {
                    let h = f64::from(tile.height(x0 + i, y0 + j));
                    let (x, y) = (f64::from(i) - centre, f64::from(j) - centre);
                    (s, sx, sy, xx, n) = (s + h, sx + h * x, sy + h * y, xx + x * x, n + 1.0);
                }
            }
            let (mean, bx, by) = (s / n, sx / xx, sy / xx);
            for j in 0..=w {
                for i in 0..=w {
                    let (x, y) = (f64::from(i) - centre, f64::from(j) - centre);
                    let r = f64::from(tile.height(x0 + i, y0 + j)) - mean - bx * x - by * y;
                    sum += r * r;
                }
            }
            count += n;
        }
    }
    (count > 0.0).then(|| (sum / count).sqrt())
}

/// Up to `count` data-depth tiles of high ground to measure roughness on:
/// from the roots down, at each depth the children with the highest
/// maximum elevation (index bounds only, no decode), preferring at the data
/// depth tiles that lie above -200 m (land).
pub fn high_ground_seeds(source: &dyn HeightSource, count: usize) -> Vec<TileAddress> {
    let Some(data) = source.data_depth() else { return Vec::new() };
    let score = |t: &TileAddress| source.tile_bounds(*t).map_or(f64::NEG_INFINITY, |b| b.max_elevation);
    let mut kept: Vec<TileAddress> = TileAddress::roots().to_vec();
    for _ in 0..data {
        let mut next: Vec<(f64, TileAddress)> =
            kept.iter().flat_map(|t| t.children().expect("above the data depth")).map(|c| (score(&c), c)).collect();
        next.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.identity().cmp(&b.1.identity())));
        kept = next.into_iter().take(4 * count).map(|(_, t)| t).collect();
    }
    let land: Vec<TileAddress> =
        kept.iter().copied().filter(|t| source.tile_bounds(*t).is_ok_and(|b| b.min_elevation > -200.0)).collect();
    let mut seeds = if land.is_empty() { kept } else { land };
    seeds.truncate(count);
    seeds
}

/// The roughness exponent of the measured data: fitted over windows of 256
/// (the seeds' parents) down to 16 samples of the data depth, inside
/// high-ground seed tiles.
/// `None` where the source measured nothing or the data is flat.
pub fn measured_exponent(source: &dyn HeightSource, seeds: usize) -> Result<Option<f64>, SourceError> {
    measured_exponent_within(source, seeds, Coverage::GLOBAL)
}

/// [`measured_exponent`] from the windows inside `coverage` only (where a
/// regional pack measured); scales no window fits are left out of the fit,
/// which needs two. Seeds are the high-ground tiles whose centre lies
/// inside.
pub fn measured_exponent_within(
    source: &dyn HeightSource,
    seeds: usize,
    coverage: Coverage,
) -> Result<Option<f64>, SourceError> {
    Ok(measured_law_within(source, seeds, coverage)?.map(|law| law.exponent))
}

/// The data's roughness law where it measured: the exponent `H` and the
/// law's root mean square roughness at windows of 16 data samples (its
/// fitted line there), over the seed tiles it was measured on.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasuredLaw {
    pub exponent: f64,
    /// Metres, the fitted law at windows of 16 data-depth samples.
    pub roughness_16: f64,
    pub seeds: Vec<TileAddress>,
}

/// [`measured_exponent_within`], with the roughness at the finest window
/// and the seeds.
pub fn measured_law_within(
    source: &dyn HeightSource,
    seeds: usize,
    coverage: Coverage,
) -> Result<Option<MeasuredLaw>, SourceError> {
    let global = coverage.is_global();
    let inside = within(source, coverage);
    let tiles: Vec<TileAddress> = if global {
        high_ground_seeds(source, seeds)
    } else {
        high_ground_seeds(source, 4 * seeds)
            .into_iter()
            .filter(|&t| inside(planet_geo::cube::sample_direction(t.sample(64, 64))))
            .take(seeds)
            .collect()
    };
    // Per scale, from windows of 256 data samples (the seeds' parents) down
    // to 16: the sum of the tiles' mean squares, and how many tiles had a
    // window. The parents' scale belongs in the fit: fitted over 128..16
    // samples alone, the 250 m Sierra's detail fell at H 0.55 against its
    // law's 0.43 over windows of 10 pixels and more, and its synthesized
    // roughness drifted to half the law 76 m windows down.
    let mut sums = [(0.0f64, 0usize); 5];
    let mut add = |tile: &SourceTile, t: TileAddress, windows: std::ops::Range<usize>| {
        let mask: Vec<bool> = if global { Vec::new() } else { sample_directions(t).into_iter().map(&inside).collect() };
        let keep = |i: i32, j: i32| global || mask[((j + 1) * (TILE_CELLS as i32 + 3) + i + 1) as usize];
        for k in windows {
            if let Some(r) = window_roughness_where(tile, TILE_CELLS >> k.saturating_sub(1), &keep) {
                sums[k] = (sums[k].0 + r.powi(2), sums[k].1 + 1);
            }
        }
    };
    for &t in &tiles {
        add(&source.tile(t)?, t, 1..5);
    }
    let mut parents: Vec<TileAddress> = tiles.iter().filter_map(|t| t.parent()).collect();
    parents.sort_by_key(|t| t.identity());
    parents.dedup();
    for p in parents {
        // A small regional pack stores no parent over its box; its law is
        // then fitted on the data depth's windows alone. Any other failure
        // (a server's) fails the fit as a seed's does, rather than fitting
        // a different law.
        match source.tile(p) {
            Ok(tile) => add(&tile, p, 0..1),
            Err(SourceError::NoData { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    let points: Vec<(f64, f64)> = sums
        .iter()
        .enumerate()
        .filter(|(_, s)| s.1 > 0)
        .map(|(k, &(s, n))| (k as f64, (s / n as f64).sqrt()))
        .collect();
    if points.len() < 2 || points.iter().any(|&(_, s)| s <= 0.0) {
        return Ok(None);
    }
    // The law's line at windows of 16 samples (index 4), not the window's
    // own value: a DEM smooths its finest few pixels (SRTM's 16-sample
    // windows held 0.64 of its line), and the octaves continue the law,
    // not the smoothing.
    let law = RoughnessLaw::fit(&points);
    Ok(Some(MeasuredLaw { exponent: law.exponent, roughness_16: law.at(4.0), seeds: tiles }))
}

/// The first octave's amplitude per metre of detrended relief (see
/// [`crate::DetailSource`]) that continues `law` past the data
/// depth: detail of unit amplitude is synthesized on the seeds' tiles six
/// levels below the data depth (windows of two data samples), and scaled
/// so its roughness there is the law's, continued from windows of 16 data
/// samples by `gain` per level. How a tile's roughness follows from the
/// octave amplitudes depends on the gain and on the DEM's own smoothing at
/// its pixel scale; measured, not modelled, it held real DEMs of 90 m and
/// 250 m to their laws where one constant left them 2x apart (see
/// docs/PERFORMANCE.md). `None` when the detail adds no roughness there.
pub fn continuing_amplitude(
    inner: &std::sync::Arc<dyn HeightSource>,
    law: &MeasuredLaw,
    gain: f64,
    twist_cap: Option<f64>,
    seed: u64,
) -> Result<Option<f64>, SourceError> {
    let Some(data) = inner.data_depth() else { return Ok(None) };
    if law.roughness_16 <= 0.0 || data + 6 > planet_geo::address::MAX_DEPTH {
        return Ok(None);
    }
    let unit = crate::DetailSource::with_parameters(inner.clone(), seed, gain, 1.0)
        .with_twist_cap(twist_cap.unwrap_or(f64::INFINITY));
    let probe = data + 6;
    let (mut sum, mut count) = (0.0, 0usize);
    // Sixteen probes a seed: one (a single window of two data samples)
    // left a small regional DEM's lone seed with no measurable detail, and
    // its law with the default amplitude, 3.5 times the real roughness.
    for t in tiles_at(&law.seeds, probe, 4) {
        let (on, off) = (detrended_std(&unit.tile(t)?), detrended_std(&inner.tile(t)?));
        sum += (on * on - off * off).max(0.0);
        count += 1;
    }
    let synthesized = (sum / count.max(1) as f64).sqrt();
    // Three halvings from windows of 16 samples (depth data + 3's tiles),
    // each rolled off as real ground smooths.
    let spacing = inner.body().sample_spacing_m(data);
    let wanted = law.roughness_16 * (1..=3).fold(1.0, |r, k| r * crate::calibration_ratio(gain, k, spacing));
    Ok((synthesized > 0.0).then(|| (wanted / synthesized).min(MAX_CONTINUING_AMPLITUDE)))
}

/// The most [`continuing_amplitude`] gives: real DEMs measured 18 to 46
/// (a 90 m UTM city, SRTM of the Sierra, the Prealps, the Baltoro), and a
/// smooth synthetic DEM, whose law is the shape of its craters rather than
/// roughness, asked for 18,685 and grew kilometres of detail on its rims.
pub const MAX_CONTINUING_AMPLITUDE: f64 = 120.0;

/// The root mean square twist of the data cells of `seeds` (a cell's
/// twist: `|h00 - h10 - h01 + h11| / 4`): the most a cell's detail follows.
/// Twist is heavy-tailed on real DEMs; uncapped, the few cells of largest
/// twist grew needles while the law held on average. And the cut's error
/// for synthesized ground is its worst case, the largest amplitude over a
/// node, while the law holds the mean: at twice the RMS the worst case was
/// 2.2 times the typical amplitude, at the RMS 1.4, so the same roughness
/// costs a third fewer nodes (over the Sierra, 2 px within 4,096 nodes
/// where twice the RMS stopped at 2.7-3.2 px; docs/PERFORMANCE.md).
pub fn twist_cap(source: &dyn HeightSource, seeds: &[TileAddress]) -> Result<f64, SourceError> {
    let n = planet_geo::address::TILE_STORED_SAMPLES as usize;
    let (mut sum, mut count) = (0.0, 0usize);
    for &t in seeds {
        let tile = source.tile(t)?;
        let h = |i: usize, j: usize| f64::from(tile.heights[j * n + i]);
        let share = relief_share_of_rise(source.body().sample_spacing_m(t.depth()));
        for j in 1..n - 2 {
            for i in 1..n - 2 {
                let relief = cell_relief([h(i, j), h(i + 1, j), h(i, j + 1), h(i + 1, j + 1)], share);
                (sum, count) = (sum + relief * relief, count + 1);
            }
        }
    }
    Ok((sum / count.max(1) as f64).sqrt())
}

/// The relief a data cell's detail follows (metres), from its corners
/// `[h00, h10, h01, h11]`: its twist (how far the corners
/// depart from a plane) or, where more, its rise times
/// [`relief_share_of_rise`]. Twist alone left a steep even slope smooth and
/// a coastal city's gentle hills with a fifth of their relief (the
/// benchmark's Olinda at 720 m); real slopes are rough in proportion to
/// their steepness.
///
/// `share` is [`relief_share_of_rise`] of the cell's size, taken once per
/// tile by the caller.
pub fn cell_relief(corners: [f64; 4], share: f64) -> f64 {
    let [h00, h10, h01, h11] = corners;
    let twist = 0.25 * (h00 - h10 - h01 + h11).abs();
    let [gx, gy] = cell_gradient(corners);
    twist.max(share * (gx * gx + gy * gy).sqrt())
}

/// A data cell's mean gradient (metres per cell along `i` and `j`) from its
/// corners `[h00, h10, h01, h11]`: the one rise the relief and the fall
/// lines (`detail/gullies.rs`) both read.
pub fn cell_gradient([h00, h10, h01, h11]: [f64; 4]) -> [f64; 2] {
    [0.5 * ((h10 - h00) + (h11 - h01)), 0.5 * ((h01 - h00) + (h11 - h10))]
}

/// The share of a cell's rise that real ground carries as relief finer
/// than the cell: 0.625 for cells of 300 m and more, falling as the
/// 41/64th (0.64) power of the cell below (hillslopes are smooth at metres,
/// cut by gullies at hundreds of metres): 0.045 at 5 m. Fitted by the
/// benchmark to a 90 m city DEM averaged to 720 m and a 1 m lidar averaged
/// to 8 m. The power is taken by square roots alone (`x^(1/2 + 1/8 +
/// 1/64)`), correctly rounded everywhere, so every machine computes the
/// same amplitudes (`powf` is not).
pub fn relief_share_of_rise(spacing_m: f64) -> f64 {
    let x = (spacing_m / 300.0).min(1.0);
    let r2 = x.sqrt();
    let r8 = r2.sqrt().sqrt();
    let r64 = r8.sqrt().sqrt().sqrt();
    0.625 * (r2 * r8 * r64)
}

/// The most [`cell_relief`] can be in a data tile of depth `spacing_m`
/// samples whose heights span `range` metres: its twist is at most half
/// the range, its rise (both components at most the range) `sqrt(2)` times
/// it.
pub fn largest_cell_relief(range: f64, spacing_m: f64) -> f64 {
    range * 0.5f64.max(std::f64::consts::SQRT_2 * relief_share_of_rise(spacing_m))
}

/// `2^(-1/64)`: the octave gain is a power of it.
const STEP_GAIN: f64 = 0.989_228_013_193_975_5;

/// `H` rounded to a multiple of 1/64 inside 0.3..=1.0 and its gain `2^-H`
/// as a product of exact literals; `None` for a non-finite `H`.
pub(crate) fn rounded_gain(h: f64) -> Option<(f64, f64)> {
    let steps = exponent_64ths(h)?;
    Some((f64::from(steps) / 64.0, gain_of_64ths(steps)))
}

/// `H` rounded to 64ths inside 19/64..=1, as [`rounded_gain`] rounds it
/// (and a pack header records it); `None` for a non-finite `H`.
pub(crate) fn exponent_64ths(h: f64) -> Option<u8> {
    h.is_finite().then(|| (h * 64.0).round().clamp(19.0, 64.0) as u8)
}

/// The octave gain `2^-H` of `H = steps / 64`, as [`rounded_gain`] gives it.
pub(crate) fn gain_of_64ths(steps: u8) -> f64 {
    (0..steps).fold(1.0, |g, _| g * STEP_GAIN)
}

/// The data-depth tiles wholly inside `coverage` (their corners and centre)
/// whose index relief is at least `min_relief` metres and that lie above
/// -200 m: the places a law is fitted and judged on, so no window holds a
/// regional pack's fill outside its box. Found by walking the box on a grid
/// finer than a tile, not by listing the depth's every tile.
pub fn relief_seeds(source: &dyn HeightSource, coverage: Coverage, min_relief: f64) -> Vec<TileAddress> {
    let Some(data) = source.data_depth() else { return Vec::new() };
    let body = source.body();
    let within = within(source, coverage);
    let inside = |t: TileAddress, i: i32, j: i32| within(planet_geo::cube::sample_direction(t.sample(i, j)));
    let step_deg = (body.tile_size_m(data) / 8.0 / 111_000.0).min(1.0);
    let rows = ((coverage.north - coverage.south) / step_deg).ceil() as usize;
    let columns = ((coverage.east - coverage.west) / step_deg).ceil() as usize;
    let mut tiles: Vec<TileAddress> = Vec::new();
    for r in 0..=rows {
        let lat = (coverage.south + r as f64 * step_deg).min(coverage.north);
        let columns = ((columns as f64) * lat.to_radians().cos().max(0.01)).ceil() as usize;
        let step = (coverage.east - coverage.west) / columns.max(1) as f64;
        for c in 0..=columns {
            let at = planet_geo::body::Geodetic::from_degrees(lat, coverage.west + c as f64 * step, 0.0);
            tiles.push(crate::locate(body, at, data).0);
        }
    }
    tiles.sort_by_key(|t| t.identity());
    tiles.dedup();
    let n = TILE_CELLS as i32;
    tiles.retain(|&t| {
        [(0, 0), (n, 0), (0, n), (n, n), (n / 2, n / 2)].iter().all(|&(i, j)| inside(t, i, j))
            && source
                .tile_bounds(t)
                .is_ok_and(|b| b.max_elevation - b.min_elevation >= min_relief && b.min_elevation > -200.0)
    });
    tiles
}

/// The windows judged against the data's law: at least this many metres.
/// Past [`crate::SMOOTH_BELOW_M`] the geometry's octaves fall as a
/// smooth surface's (the last kilometre's error contract), and a window's
/// detrended roughness is set by octaves much coarser than its samples: on
/// the 250 m Sierra, turning the smooth fall off moved windows of 76 m by
/// 13%, of 38 m by 29%, of 19 m by 60% (docs/PERFORMANCE.md). Windows of
/// four times the break and more keep over two thirds of the law's
/// roughness; finer ones are held only to fall level by level.
pub const JUDGED_FROM_M: f64 = 4.0 * crate::SMOOTH_BELOW_M;

/// One depth of [`judge_against_law`].
#[derive(Clone, Debug, PartialEq)]
pub struct LawRow {
    pub depth: u8,
    /// The tile's edge, the window the roughness is taken over (metres).
    pub window_m: f64,
    /// The data's law continued to this window (metres).
    pub law_m: f64,
    /// The source's roughness there, detail included (metres).
    pub synthesized_m: f64,
    /// Below the depth above (or the first row).
    pub falls: bool,
    /// At least [`JUDGED_FROM_M`]: held to 0.4..=1.5 of the law.
    pub judged: bool,
}

impl LawRow {
    pub fn ratio(&self) -> f64 {
        self.synthesized_m / self.law_m
    }

    pub fn holds(&self) -> bool {
        self.falls && (!self.judged || (0.4..=1.5).contains(&self.ratio()))
    }
}

/// Synthesized roughness against the data's own law (issue #27, item 5).
#[derive(Clone, Debug, PartialEq)]
pub struct LawJudgement {
    /// The law's exponent: `roughness = a * window^H` fitted over the
    /// windows of at least ten DEM pixels, detail off.
    pub law_exponent: f64,
    /// The depths past the data depth, down to `data + 14`.
    pub rows: Vec<LawRow>,
}

impl LawJudgement {
    /// Every depth falls below the one above, and every judged window lies
    /// within 0.4..=1.5 of the law continued.
    pub fn holds(&self) -> bool {
        self.rows.iter().all(LawRow::holds)
    }
}

/// Fits the law of `measured` (the data with detail off) over the seeds'
/// tiles from the data depth's parents down, windows of ten `pixel_m` and
/// more, and measures `synthesized` (the same data with detail on) on the
/// seeds' descendants past the data depth, `per_side` squared per seed and
/// depth. `None` where fewer than two windows are ten pixels wide.
pub fn judge_against_law(
    measured: &dyn HeightSource,
    synthesized: &dyn HeightSource,
    seeds: &[TileAddress],
    pixel_m: f64,
    per_side: u32,
) -> Result<Option<LawJudgement>, SourceError> {
    let Some(data) = measured.data_depth() else { return Ok(None) };
    let window = |d: u8| measured.body().tile_size_m(d);
    let off = roughness_by_depth(measured, seeds, data.saturating_sub(1)..=data + 3, per_side)?;
    let points: Vec<(f64, f64)> =
        off.iter().filter(|&&(d, s)| window(d) >= 10.0 * pixel_m && s > 0.0).map(|&(d, s)| (f64::from(d), s)).collect();
    if points.len() < 2 {
        return Ok(None);
    }
    let law = RoughnessLaw::fit(&points);
    let on = roughness_by_depth(synthesized, seeds, data + 1..=data + 14, per_side)?;
    let mut previous = f64::INFINITY;
    let rows = on
        .into_iter()
        .map(|(depth, synthesized_m)| {
            let row = LawRow {
                depth,
                window_m: window(depth),
                law_m: law.at(f64::from(depth)),
                synthesized_m,
                falls: synthesized_m < previous,
                judged: window(depth) >= JUDGED_FROM_M,
            };
            previous = synthesized_m;
            row
        })
        .collect();
    Ok(Some(LawJudgement { law_exponent: law.exponent, rows }))
}
