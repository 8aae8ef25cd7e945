//! The raster checked against the ground under it (`--base PACK`): what the
//! landmark audit is for a raster too small to hold a landmark.
//!
//! The key decision: compare shapes, not values, at the base's resolution.
//! The raster is averaged over each cell of a grid spaced as the base's
//! samples (4 x 4 reads a cell), so its finer detail does not count against
//! it, and correlated with the base's heights at the cells' centres. The
//! same is done for each simple misreading of the raster: flipped either
//! way or both, its axes swapped, shifted by up to three base samples. A
//! misreading that fits clearly better than the raster as given is named
//! and the bake refused; so is a raster whose heights follow the base's at
//! a scale no unit explains as metres (feet are 3.28 times). A raster that
//! follows no reading is not refused (the base may be the poor one there):
//! the verdict says "uncertain", with the figures. A base with too little
//! relief under the raster, or a raster too small for the grid, leaves
//! nothing to check, and the report says so.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use planet_terrain::ground::query::GroundReader;
use planet_terrain::ground::{GroundStack, HeightFunction, PackSource, StackedPack};
use planet_terrain::layers::LayerStack;
use planet_terrain::pack::{Coverage, Pack};
use planet_terrain::{Body, Geodetic};
use serde::Serialize;

use crate::error::BakeError;
use crate::stages::sampling::Inputs;

/// The most cells along a side of the grid compared.
const MAX_CELLS: usize = 48;
/// The fewest cells along a side worth a correlation: 64 cells in all.
/// With fewer, a window of the Sierra 7 ETOPO5 samples across correlated
/// 0.37 as given and 0.81 mirrored, and would have been refused.
const MIN_CELLS: usize = 8;
/// Reads of the raster along a side of a cell, averaged.
const READS: usize = 4;
/// Shifts tried, in base samples along each axis: every one near the
/// raster as given, then sparser (a shift of 13 samples still fits better
/// at 11 or 16 than as given), up to a quarter of the raster's side.
const SHIFTS: [i32; 8] = [0, 1, 2, 3, 5, 8, 13, 21];
/// Shifts within this many base samples each way are the raster as given:
/// a pack's samples lie at most 0.7 of its source's pixels apart, so two
/// of them are about a source pixel and a half, within which the base's
/// own registration is uncertain (ETOPO5's Sierra sits 1-2 samples off
/// SRTM's).
const TOLERATED_SHIFT: i32 = 2;
/// A base with less relief than this (standard deviation, metres) over
/// the raster says nothing about its shape.
const MIN_RELIEF_M: f64 = 5.0;
/// The correlation the raster as given must reach.
const MIN_CORRELATION: f64 = 0.5;
/// How much better a misreading must fit to be named: the share of the
/// base's variance it leaves unexplained (1 - r^2) at most this part of
/// what the raster as given leaves. Relative, so a misreading is seen
/// against a base of any fidelity (the Sierra shifted by 4.4 km correlated
/// 0.969 with a base of its own, and 0.9987 shifted back).
const UNEXPLAINED_RATIO: f64 = 0.5;
/// The ratio of the raster's relief to the base's that reads as metres.
/// Wide, because a base smoother than its samples (ETOPO5's 9 km pixels
/// sampled every 4.9 km) holds less relief than the raster's cell means:
/// windows of the Sierra measured 1.7 to 2.3 times the demo Earth's. Feet
/// read 3.28 times metres, so a raster in feet over the Sierra reads 3.46.
const METRES: std::ops::RangeInclusive<f64> = 0.4..=2.6;
/// Metres in a foot: a raster in feet follows the base at 1 / this.
const FOOT_M: f64 = 0.3048;

/// A way of reading the raster, as a map from a place to where the raster
/// holds its ground if it was misread so.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Reading {
    AsGiven,
    FlippedNorthSouth,
    FlippedEastWest,
    Rotated180,
    /// Rows read as columns (transposed).
    AxesSwapped,
    /// Rows read as columns, both reversed (transposed the other way).
    AxesSwappedReversed,
    Rotated90Clockwise,
    Rotated90Anticlockwise,
    /// Shifted by (north, east) base samples.
    Shifted {
        north: i32,
        east: i32,
    },
}

impl Reading {
    /// Every reading, with shifts of up to `max_shift` samples.
    fn all(max_shift: i32) -> Vec<Reading> {
        let mut all = vec![
            Reading::AsGiven,
            Reading::FlippedNorthSouth,
            Reading::FlippedEastWest,
            Reading::Rotated180,
            Reading::AxesSwapped,
            Reading::AxesSwappedReversed,
            Reading::Rotated90Clockwise,
            Reading::Rotated90Anticlockwise,
        ];
        let shifts: Vec<i32> = SHIFTS
            .iter()
            .filter(|&&s| s <= max_shift)
            .flat_map(|&s| if s == 0 { vec![0] } else { vec![-s, s] })
            .collect();
        for &north in &shifts {
            for &east in &shifts {
                if (north, east) != (0, 0) {
                    all.push(Reading::Shifted { north, east });
                }
            }
        }
        all
    }

    /// Within the base's registration of the raster as given: not a
    /// misreading.
    fn is_as_given(self) -> bool {
        match self {
            Reading::AsGiven => true,
            Reading::Shifted { north, east } => north.abs() <= TOLERATED_SHIFT && east.abs() <= TOLERATED_SHIFT,
            _ => false,
        }
    }

    fn describe(self, spacing_km: f64) -> String {
        match self {
            Reading::AsGiven => "as given".into(),
            Reading::FlippedNorthSouth => "flipped north-south (rows stored in the other order)".into(),
            Reading::FlippedEastWest => "flipped east-west (columns stored in the other order)".into(),
            Reading::Rotated180 => "rotated 180 degrees (rows and columns both reversed)".into(),
            Reading::AxesSwapped | Reading::AxesSwappedReversed => {
                "with its axes swapped (rows read as columns)".into()
            }
            Reading::Rotated90Clockwise => "rotated 90 degrees clockwise".into(),
            Reading::Rotated90Anticlockwise => "rotated 90 degrees anticlockwise".into(),
            Reading::Shifted { north, east } => format!(
                "shifted by about {:.1} km {} and {:.1} km {} against the base",
                f64::from(north.abs()) * spacing_km,
                if north >= 0 { "north" } else { "south" },
                f64::from(east.abs()) * spacing_km,
                if east >= 0 { "east" } else { "west" },
            ),
        }
    }
}

/// The grid compared: the raster's box less the shifts' margin, in cells
/// of `step` degrees of latitude and `step_lon` of longitude.
#[derive(Clone, Copy, Debug)]
struct Grid {
    /// The raster's box, longitudes unwrapped (`east > west`).
    raster: Coverage,
    south: f64,
    west: f64,
    step: f64,
    step_lon: f64,
    rows: usize,
    columns: usize,
    /// One base sample in degrees of latitude and longitude.
    sample: (f64, f64),
    /// The largest shift tried, in samples.
    max_shift: i32,
}

impl Grid {
    /// The grid over `raster` at the base's `spacing_m`, inside a margin
    /// for the shifts tried: the largest of `SHIFTS` within a quarter of
    /// the raster's shorter side that leaves `MIN_CELLS` samples along each
    /// side; `None` when not even the unshifted grid fits.
    fn over(raster: Coverage, spacing_m: f64, radius_m: f64) -> Option<Grid> {
        let mut raster = raster;
        if raster.east < raster.west {
            raster.east += 360.0;
        }
        let middle = (0.5 * (raster.south + raster.north)).to_radians().cos().max(0.01);
        let sample = ((spacing_m / radius_m).to_degrees(), (spacing_m / radius_m).to_degrees() / middle);
        let side = ((raster.north - raster.south) / sample.0).min((raster.east - raster.west) / sample.1);
        let fits = |s: i32| f64::from(s) <= side / 4.0 && side - 2.0 * f64::from(s) - 1.0 >= MIN_CELLS as f64;
        let max_shift = SHIFTS.iter().rev().copied().find(|&s| fits(s))?;
        let margin = f64::from(max_shift) + 0.5;
        let (south, north) = (raster.south + margin * sample.0, raster.north - margin * sample.0);
        let (west, east) = (raster.west + margin * sample.1, raster.east - margin * sample.1);
        let (height, width) = (north - south, east - west);
        let scale = ((height / sample.0).max(width / sample.1) / MAX_CELLS as f64).max(1.0);
        let (step, step_lon) = (sample.0 * scale, sample.1 * scale);
        let (rows, columns) = ((height / step) as usize, (width / step_lon) as usize);
        Some(Grid { raster, south, west, step, step_lon, rows, columns, sample, max_shift })
    }

    fn centres(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        (0..self.rows).flat_map(move |r| {
            (0..self.columns)
                .map(move |c| (self.south + (r as f64 + 0.5) * self.step, self.west + (c as f64 + 0.5) * self.step_lon))
        })
    }

    /// Where the raster holds the ground at `(lat, lon)` if it was misread
    /// as `reading`.
    fn read_at(&self, reading: Reading, (lat, lon): (f64, f64)) -> (f64, f64) {
        let r = &self.raster;
        let (u, v) = ((lon - r.west) / (r.east - r.west), (lat - r.south) / (r.north - r.south));
        let at = |u: f64, v: f64| (r.south + v * (r.north - r.south), r.west + u * (r.east - r.west));
        match reading {
            Reading::AsGiven => (lat, lon),
            Reading::FlippedNorthSouth => at(u, 1.0 - v),
            Reading::FlippedEastWest => at(1.0 - u, v),
            Reading::Rotated180 => at(1.0 - u, 1.0 - v),
            Reading::AxesSwapped => at(v, u),
            Reading::AxesSwappedReversed => at(1.0 - v, 1.0 - u),
            Reading::Rotated90Clockwise => at(v, 1.0 - u),
            Reading::Rotated90Anticlockwise => at(1.0 - v, u),
            Reading::Shifted { north, east } => {
                (lat + f64::from(north) * self.sample.0, lon + f64::from(east) * self.sample.1)
            }
        }
    }
}

/// What the comparison with the base found.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct BaseAudit {
    pub(crate) base: String,
    /// "agrees", or "nothing to check" with the reason.
    pub(crate) verdict: String,
    /// Cells compared.
    pub(crate) cells: usize,
    /// The base's sample spacing, metres: the resolution compared at.
    pub(crate) base_spacing_m: f64,
    /// The base's relief under the raster (standard deviation), metres.
    pub(crate) base_relief_m: f64,
    /// The raster's correlation with the base as given.
    pub(crate) correlation: Option<f64>,
    /// The raster's relief over the base's.
    pub(crate) relief_ratio: Option<f64>,
    /// The best misreading tried and its correlation.
    pub(crate) best_misreading: Option<(Reading, f64)>,
}

impl BaseAudit {
    /// One line for the progress log.
    pub(crate) fn summary(&self) -> String {
        match (self.correlation, self.relief_ratio) {
            (Some(r), Some(ratio)) if self.verdict == "agrees" => format!(
                "the raster agrees with the base over {} cells of {:.0} m (correlation {r:.2}, relief {ratio:.2} times the base's)",
                self.cells, self.base_spacing_m
            ),
            _ if self.verdict.starts_with("uncertain") => format!("warning: {}", self.verdict),
            _ => self.verdict.clone(),
        }
    }
}

/// Compares the raster `inputs` reads with the base pack at `base`, over
/// the raster's box `extent`; refuses the bake (naming the raster, the
/// misreading and the figures) when the raster reads better misread, or
/// at a scale metres do not explain.
pub(crate) fn run_base_audit(
    dem: &Path,
    base: &Path,
    body: &Body,
    inputs: &Inputs,
    extent: Coverage,
) -> Result<BaseAudit, BakeError> {
    let refuse = |message: String| BakeError::Base { path: dem.to_owned(), base: base.to_owned(), message };
    let heights = base_heights(base, body)?;
    let spacing_m = heights.spacing_m;
    let mut audit = BaseAudit {
        base: base.display().to_string(),
        verdict: String::new(),
        cells: 0,
        base_spacing_m: spacing_m,
        base_relief_m: 0.0,
        correlation: None,
        relief_ratio: None,
        best_misreading: None,
    };
    let Some(grid) = Grid::over(extent, spacing_m, body.ellipsoid().max_radius()) else {
        audit.verdict = format!(
            "nothing to check: the raster spans fewer than {} of the base's {:.0} m samples along a side",
            MIN_CELLS + 1,
            spacing_m
        );
        return Ok(audit);
    };
    let centres: Vec<(f64, f64)> = grid.centres().collect();
    let base_values = heights.at(&centres, &refuse)?;
    let mut results = Vec::new();
    for reading in Reading::all(grid.max_shift) {
        let raster = cell_means(inputs, &grid, reading, &centres)?;
        results.push((reading, raster));
    }
    let as_given = &results[0].1;
    if base_values.iter().all(Option::is_none) {
        return Err(BakeError::BaseUnusable {
            base: base.to_owned(),
            message: format!(
                "it does not cover the raster's box ({:.4}..{:.4} N, {:.4}..{:.4} E): give the pack of the ground under it",
                extent.south, extent.north, extent.west, extent.east
            ),
        });
    }
    let pairs: Vec<(f64, f64)> = base_values.iter().zip(as_given).filter_map(|(b, r)| Some(((*b)?, (*r)?))).collect();
    audit.cells = pairs.len();
    audit.base_relief_m = deviation(pairs.iter().map(|p| p.0));
    if pairs.len() < MIN_CELLS * MIN_CELLS {
        audit.verdict = format!("nothing to check: only {} cells hold both the raster and the base", pairs.len());
        return Ok(audit);
    }
    if audit.base_relief_m < MIN_RELIEF_M {
        audit.verdict = format!(
            "nothing to check: the base's relief under the raster is {:.1} m, too flat to show the raster's shape",
            audit.base_relief_m
        );
        return Ok(audit);
    }
    let correlations: Vec<(Reading, f64)> =
        results.iter().map(|(reading, raster)| (*reading, correlation(&base_values, raster))).collect();
    let ratio = deviation(pairs.iter().map(|p| p.1)) / audit.base_relief_m;
    judge(audit, &correlations, ratio).map_err(refuse)
}

/// The verdict on the raster from each reading's correlation with the
/// base and its relief over the base's: the audit, agreed, or why the
/// raster is refused.
fn judge(mut audit: BaseAudit, correlations: &[(Reading, f64)], ratio: f64) -> Result<BaseAudit, String> {
    let best_of = |as_given: bool| {
        correlations.iter().copied().filter(|c| c.0.is_as_given() == as_given).max_by(|a, b| a.1.total_cmp(&b.1))
    };
    let given = best_of(true).map_or(f64::NEG_INFINITY, |c| c.1);
    let best = best_of(false);
    (audit.correlation, audit.relief_ratio, audit.best_misreading) = (Some(given), Some(ratio), best);
    let spacing_km = audit.base_spacing_m / 1000.0;
    let figures = format!(
        "over {} cells of {:.1} km, the raster as given (within {TOLERATED_SHIFT} base samples) correlates {given:.2} with the base ({:.0} m of relief)",
        audit.cells, spacing_km, audit.base_relief_m
    );
    let unexplained = |r: f64| 1.0 - r.clamp(0.0, 1.0).powi(2);
    let clearly_better = |fit: f64| fit > given && unexplained(fit) < UNEXPLAINED_RATIO * unexplained(given);
    if let Some((reading, fit)) = best.filter(|&(_, fit)| clearly_better(fit) && fit >= MIN_CORRELATION) {
        return Err(format!(
            "it fits the base better {}: read so, it correlates {fit:.2} with the base; {figures}",
            reading.describe(spacing_km)
        ));
    }
    if given < MIN_CORRELATION {
        // Not refused: a base can be poor where the raster is not (ETOPO5
        // correlates 0.44 with SRTM over 44 x 55 km east of the Sierra's
        // crest). The progress line says so, with the figures.
        audit.verdict = format!(
            "uncertain: the raster does not follow the base's shape and no simple misreading explains it ({figures}); check it if the base is good here"
        );
        return Ok(audit);
    }
    if !METRES.contains(&ratio) {
        let feet = (ratio * FOOT_M - 1.0).abs() < 0.3;
        return Err(format!(
            "its relief is {ratio:.2} times the base's{}; {figures}",
            if feet {
                ", as heights in feet would be (3.28 times metres): convert them to metres"
            } else {
                ": check the heights' unit and scale"
            }
        ));
    }
    audit.verdict = "agrees".into();
    Ok(audit)
}

/// The base pack's heights, read at its data depth with no detail.
struct BaseHeights {
    function: HeightFunction,
    coverage: Coverage,
    depth: u8,
    spacing_m: f64,
    path: PathBuf,
}

fn base_heights(base: &Path, body: &Body) -> Result<BaseHeights, BakeError> {
    let unusable = |message: String| BakeError::BaseUnusable { base: base.to_owned(), message };
    let pack = Pack::open(base).map_err(|e| unusable(format!("opening it: {e}")))?;
    let header = pack.header().clone();
    if header.body.name() != body.name() {
        return Err(unusable(format!("it is a pack of {}, the bake is of {}", header.body.name(), body.name())));
    }
    let packs = vec![StackedPack { name: base.display().to_string(), source: PackSource::new(Arc::new(pack)) }];
    let stack = GroundStack::of_packs(packs)
        .map_err(|e| unusable(format!("reading it: {e}")))?
        .expect("one pack")
        .with_detail(false);
    let depth = header.height_data_depth;
    Ok(BaseHeights {
        function: HeightFunction::new(Arc::new(stack), LayerStack::new()),
        coverage: header.coverage,
        depth,
        spacing_m: body.sample_spacing_m(depth),
        path: base.to_owned(),
    })
}

impl BaseHeights {
    /// The base's height at each (lat, lon); `None` outside its coverage.
    fn at(&self, places: &[(f64, f64)], refuse: &impl Fn(String) -> BakeError) -> Result<Vec<Option<f64>>, BakeError> {
        let mut reader = GroundReader::new(&self.function, self.depth);
        places
            .iter()
            .map(|&(lat, lon)| {
                if !self.coverage.contains(lat, lon) {
                    return Ok(None);
                }
                let surface = reader.surface(Geodetic::from_degrees(lat, lon, 0.0)).map_err(|e| {
                    refuse(format!("reading the base {} at {lat:.4}, {lon:.4}: {e}", self.path.display()))
                })?;
                Ok(Some(surface.ground_m))
            })
            .collect()
    }
}

/// The raster's mean over each cell around `centres` (READS x READS reads,
/// voids left out; `None` where half or more are voids or outside), read as
/// `reading`.
fn cell_means(
    inputs: &Inputs,
    grid: &Grid,
    reading: Reading,
    centres: &[(f64, f64)],
) -> Result<Vec<Option<f64>>, BakeError> {
    let mut places = Vec::with_capacity(centres.len() * READS * READS);
    for &(lat, lon) in centres {
        for i in 0..READS {
            for j in 0..READS {
                let at = (
                    lat + ((i as f64 + 0.5) / READS as f64 - 0.5) * grid.step,
                    lon + ((j as f64 + 0.5) / READS as f64 - 0.5) * grid.step_lon,
                );
                let (lat, lon) = grid.read_at(reading, at);
                places.push((lat, if lon > 180.0 { lon - 360.0 } else { lon }));
            }
        }
    }
    let heights = inputs.heights(&places)?;
    Ok(heights
        .chunks_exact(READS * READS)
        .map(|cell| {
            let valid: Vec<f64> = cell.iter().flatten().copied().collect();
            (valid.len() * 2 > cell.len()).then(|| valid.iter().sum::<f64>() / valid.len() as f64)
        })
        .collect())
}

fn deviation(values: impl Iterator<Item = f64> + Clone) -> f64 {
    let n = values.clone().count() as f64;
    let mean = values.clone().sum::<f64>() / n;
    (values.map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt()
}

/// Pearson's correlation over the cells where both hold a value.
fn correlation(a: &[Option<f64>], b: &[Option<f64>]) -> f64 {
    let pairs: Vec<(f64, f64)> = a.iter().zip(b).filter_map(|(x, y)| Some(((*x)?, (*y)?))).collect();
    if pairs.len() < MIN_CELLS * MIN_CELLS {
        return f64::NEG_INFINITY;
    }
    let n = pairs.len() as f64;
    let (ma, mb) = (pairs.iter().map(|p| p.0).sum::<f64>() / n, pairs.iter().map(|p| p.1).sum::<f64>() / n);
    let (mut ab, mut aa, mut bb) = (0.0, 0.0, 0.0);
    for (x, y) in pairs {
        (ab, aa, bb) = (ab + (x - ma) * (y - mb), aa + (x - ma).powi(2), bb + (y - mb).powi(2));
    }
    if aa <= 0.0 || bb <= 0.0 { 0.0 } else { ab / (aa * bb).sqrt() }
}
