//! The bake: audit the raster, sample every tile, write the pack, re-read it
//! and audit every sample, and say what was done.
//!
//! Order of work, and why:
//! 1. the landmark audit runs before a single byte is written, so a misread
//!    grid costs seconds, not hours;
//! 2. tiles are baked deepest first, depth by depth in parallel, so a tile's
//!    geometric error can include its children's (a parent never claims to be
//!    more accurate than what it stands for);
//! 3. tiles go through `PackWriter`, whose journal makes a killed bake
//!    resumable to the same bytes and whose layout does not depend on the
//!    order threads finish in;
//! 4. the finished pack is opened like any reader would and every sample is
//!    compared with the source at that sample's own latitude/longitude; a
//!    pack that fails is moved aside and the bake fails.
//!
//! Sampling: each stored sample's geodetic latitude/longitude (on the body's
//! ellipsoid, from the sample's cube-sphere direction) is read from the
//! source with the raster's bilinear filter, so samples shared by two tiles,
//! on one face or across two, read the same place and agree. Nodata policy:
//! voids are filled from the surrounding samples of the same tile (repeated
//! neighbour averaging), counted and reported, and a tile with any filled
//! sample is not marked measured. A declared tile with no data at all fails
//! the bake with its address.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use planet_terrain::geo::address::{TILE_CELLS, TILE_STORED_SAMPLE_COUNT, TILE_STORED_SAMPLES};
use planet_terrain::geo::lattice::{LATTICE_STEP, lattice_error};
use planet_terrain::ground::{locate, sample_directions};
use planet_terrain::pack::{
    Codec, Coverage, EncodedTile, IndexEntry, Pack, PackError, PackSpec, PackWriter, TileContent, partial_path,
    patch_tiles,
};
use planet_terrain::{Body, Geodetic, MAX_DEPTH, TileAddress};
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::landmarks::{Landmark, LandmarkAudit, Verdict, table};
use crate::raster::{Extent, Raster, RasterError};
use planet_terrain::layers::{Layer, LayerKind, LayerStack};

/// Lattice step of the renderer's 33 x 33 grid over a 129 x 129 tile.
#[derive(Debug, thiserror::Error)]
pub enum BakeError {
    #[error(transparent)]
    Raster(#[from] RasterError),
    #[error(transparent)]
    Pack(#[from] PackError),
    #[error("{0}")]
    Options(String),
    #[error("{path}: landmark audit refused the raster: {message}")]
    Landmarks { path: PathBuf, message: String },
    #[error(
        "{path}: tile {tile} has no data at all (a void larger than a tile); give --void-value METRES to say what voids are (e.g. 0 for a land-only DEM's oceans), or fill the raster's voids first"
    )]
    NoData { path: PathBuf, tile: TileAddress },
    #[error("accuracy audit failed: {message}; the pack was moved to {rejected}")]
    Audit { message: String, rejected: PathBuf },
}

/// A geographic box, degrees.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Region {
    pub south: f64,
    pub west: f64,
    pub north: f64,
    pub east: f64,
}

impl Region {
    /// Parses `S,W,N,E` in degrees.
    pub fn parse(text: &str) -> Result<Region, String> {
        let v: Result<Vec<f64>, _> = text.split(',').map(|p| p.trim().parse::<f64>()).collect();
        match v.as_deref() {
            Ok([s, w, n, e]) => {
                let r = Region { south: *s, west: *w, north: *n, east: *e };
                r.coverage().validate().map(|_| r).map_err(|e| format!("--region {text}: {e}"))
            }
            _ => Err(format!("--region '{text}' is not S,W,N,E in degrees")),
        }
    }

    fn coverage(&self) -> Coverage {
        Coverage { south: self.south, west: self.west, north: self.north, east: self.east }
    }
}

/// Everything a bake is told.
#[derive(Clone, Debug)]
pub struct BakeOptions {
    pub dem: PathBuf,
    pub imagery: Option<PathBuf>,
    pub classes: Option<PathBuf>,
    pub body: Body,
    pub out: PathBuf,
    pub depth: Option<u8>,
    pub tier: String,
    pub jobs: Option<usize>,
    pub resume: bool,
    pub region: Option<Region>,
    pub landmarks: Vec<Landmark>,
    pub cache_bytes: usize,
    pub compression_level: i8,
    /// Keep an existing `out` whose fingerprint says it was baked from these
    /// same inputs and parameters, instead of baking again.
    pub if_unchanged: bool,
    /// Layers (craters, pads, ...) baked into the ground, with the scene's
    /// text for the fingerprint.
    pub scene: Option<(LayerStack, String)>,
    /// The elevation every void (nodata) sample takes, instead of filling
    /// voids from the surrounding samples (e.g. 0 for the oceans of a
    /// land-only DEM). Either way the samples are counted and their tiles
    /// are not marked measured.
    pub void_value: Option<f64>,
}

/// Progress callbacks (the binary draws a bar or prints lines).
pub trait Progress: Sync {
    fn stage(&self, message: &str);
    fn tiles(&self, done: usize, total: usize);
}

/// What a bake did, for the report.
#[derive(Clone, Debug)]
pub struct BakeReport {
    pub json: serde_json::Value,
}

struct Inputs {
    dem: Raster,
    imagery: Option<Raster>,
    classes: Option<Raster>,
    layers: LayerStack,
    void_value: Option<f64>,
}

/// One tile's sampled content.
struct Sampled {
    heights: Vec<f64>,
    filled: Vec<bool>,
    classes: Vec<u8>,
    colour: Vec<[u8; 3]>,
}

fn codec_for(options: &BakeOptions) -> Codec {
    match (&options.imagery, &options.classes) {
        (Some(_), _) => Codec::HeightsClassesColour,
        (None, Some(_)) => Codec::HeightsClasses,
        (None, None) => Codec::Heights,
    }
}

/// The depth whose sample spacing is nearest the source's pixel size.
pub fn supported_depth(body: &Body, resolution_m: f64) -> u8 {
    let ratio = body.face_edge_arc_m() / (f64::from(TILE_CELLS) * resolution_m);
    ratio.log2().round().clamp(0.0, f64::from(MAX_DEPTH)) as u8
}

fn file_identity(path: &Path) -> String {
    let meta = std::fs::metadata(path).ok();
    let modified =
        meta.as_ref().and_then(|m| m.modified().ok()).and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    format!(
        "{}|{}|{:?}",
        path.canonicalize().unwrap_or(path.to_owned()).display(),
        meta.map_or(0, |m| m.len()),
        modified
    )
}

fn fingerprint(options: &BakeOptions, depth: u8, codec: Codec) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"planet-bake v1\n");
    for input in [Some(&options.dem), options.imagery.as_ref(), options.classes.as_ref()] {
        h.update(input.map(|p| file_identity(p)).unwrap_or_default().as_bytes());
        h.update(b"\n");
    }
    let r = options.body.ellipsoid().radii();
    h.update(
        format!(
            "{}|{:?}|{}|{depth}|{}|{}\n",
            options.body.name(),
            r,
            options.tier,
            codec.code(),
            options.compression_level
        )
        .as_bytes(),
    );
    for l in &options.landmarks {
        h.update(format!("{},{},{},{}\n", l.lat, l.lon, l.min_m, l.max_m).as_bytes());
    }
    if let Some(v) = options.void_value {
        h.update(format!("void {v}\n").as_bytes());
    }
    if let Some((_, text)) = &options.scene {
        h.update(b"scene\n");
        h.update(text.as_bytes());
    }
    h.finalize().into()
}

fn lat_lon_of(body: &Body, directions: &[glam::DVec3]) -> Vec<(f64, f64)> {
    directions
        .iter()
        .map(|&d| {
            let g = body.ellipsoid().direction_to_geodetic(d);
            (g.latitude.to_degrees(), g.longitude.to_degrees())
        })
        .collect()
}

/// Fills voids by repeated averaging of filled neighbours. Returns false if
/// there was nothing to fill from.
fn fill_voids(values: &mut [Option<f64>]) -> bool {
    let n = TILE_STORED_SAMPLES as usize;
    if values.iter().all(Option::is_none) {
        return false;
    }
    while values.iter().any(Option::is_none) {
        let snapshot = values.to_vec();
        for k in 0..values.len() {
            if snapshot[k].is_some() {
                continue;
            }
            let (r, c) = (k / n, k % n);
            let mut neighbours = Vec::with_capacity(4);
            if r > 0 {
                neighbours.push(snapshot[k - n]);
            }
            if r + 1 < n {
                neighbours.push(snapshot[k + n]);
            }
            if c > 0 {
                neighbours.push(snapshot[k - 1]);
            }
            if c + 1 < n {
                neighbours.push(snapshot[k + 1]);
            }
            let valid: Vec<f64> = neighbours.into_iter().flatten().collect();
            if !valid.is_empty() {
                values[k] = Some(valid.iter().sum::<f64>() / valid.len() as f64);
            }
        }
    }
    true
}

impl Inputs {
    fn open(options: &BakeOptions) -> Result<Inputs, BakeError> {
        let share = options.cache_bytes / if options.imagery.is_some() { 2 } else { 1 };
        let dem = Raster::open(&options.dem, share)?;
        if !dem.has_any_data(1)? {
            return Err(BakeError::Options(format!(
                "{}: the raster holds no valid elevation (all nodata or NaN)",
                options.dem.display()
            )));
        }
        let imagery = options.imagery.as_deref().map(|p| Raster::open(p, share)).transpose()?;
        if let Some(i) = &imagery
            && i.bands() < 3
        {
            return Err(BakeError::Options(format!(
                "{}: imagery needs 3 bands (R, G, B), it has {}",
                i.path().display(),
                i.bands()
            )));
        }
        let classes = options.classes.as_deref().map(|p| Raster::open(p, options.cache_bytes / 8)).transpose()?;
        let layers = options.scene.as_ref().map(|(stack, _)| stack.clone()).unwrap_or_default();
        Ok(Inputs { dem, imagery, classes, layers, void_value: options.void_value })
    }

    /// The mean of the source, with the layers below `layer` applied, over a
    /// flatten pad: rings of points across the pad.
    fn mean_below(&self, body: &Body, stack: &LayerStack, layer: &Layer) -> f64 {
        let LayerKind::Flatten { lat, lon, radius_m, .. } = layer.kind else { return 0.0 };
        let e = body.ellipsoid();
        let places = planet_terrain::layers::pad_sample_points(e, lat, lon, radius_m);
        let points: Vec<glam::DVec3> = places.iter().map(|&g| e.geodetic_to_point(g)).collect();
        let geo: Vec<(f64, f64)> = places.iter().map(|g| (g.latitude.to_degrees(), g.longitude.to_degrees())).collect();
        let mut heights: Vec<f64> = self
            .heights(&geo)
            .map(|v| v.into_iter().map(|h| h.unwrap_or(0.0)).collect())
            .unwrap_or_else(|_| vec![0.0; geo.len()]);
        let below = stack.below(layer.order);
        below.apply(e, &points, &mut heights, &|l| self.mean_below(body, &below, l));
        heights.iter().sum::<f64>() / heights.len() as f64
    }

    /// Elevation at each (lat, lon), `None` outside the raster or in a void.
    fn heights(&self, points: &[(f64, f64)]) -> Result<Vec<Option<f64>>, BakeError> {
        let taps = self.dem.taps(points)?;
        Ok(self.dem.evaluate(1, &taps)?)
    }

    fn sample(&self, body: &Body, tile: TileAddress) -> Result<Sampled, BakeError> {
        let points = lat_lon_of(body, &sample_directions(tile));
        let mut values = self.heights(&points)?;
        let filled: Vec<bool> = values.iter().map(Option::is_none).collect();
        match self.void_value {
            Some(v) => values.iter_mut().filter(|x| x.is_none()).for_each(|x| *x = Some(v)),
            None if !fill_voids(&mut values) => {
                return Err(BakeError::NoData { path: self.dem.path().to_owned(), tile });
            }
            None => {}
        }
        let mut heights: Vec<f64> = values.into_iter().map(|v| v.expect("filled")).collect();
        if !self.layers.is_empty() {
            let e = body.ellipsoid();
            let surface: Vec<glam::DVec3> =
                sample_directions(tile).into_iter().map(|d| e.surface_point_from_direction(d)).collect();
            self.layers.apply(e, &surface, &mut heights, &|l| self.mean_below(body, &self.layers, l));
        }
        let classes = match &self.classes {
            Some(raster) => {
                let taps = raster.taps(&points)?;
                raster
                    .evaluate_nearest(1, &taps)?
                    .into_iter()
                    .map(|v| v.map_or(0, |v| v.round().clamp(0.0, 255.0) as u8))
                    .collect()
            }
            None => vec![0; TILE_STORED_SAMPLE_COUNT],
        };
        let colour = match &self.imagery {
            Some(raster) => {
                let taps = raster.taps(&points)?;
                let bands: Vec<Vec<Option<f64>>> =
                    (1..=3).map(|b| raster.evaluate(b, &taps)).collect::<Result<_, _>>()?;
                (0..TILE_STORED_SAMPLE_COUNT)
                    .map(|k| std::array::from_fn(|c| bands[c][k].map_or(0, |v| v.round().clamp(0.0, 255.0) as u8)))
                    .collect()
            }
            None => vec![[0; 3]; TILE_STORED_SAMPLE_COUNT],
        };
        Ok(Sampled { heights, filled, classes, colour })
    }
}

/// A tile's latitude/longitude box from its border and centre samples:
/// (south, north, and longitude intervals). A tile holding a pole spans all
/// longitudes up to that pole; one crossing the antimeridian gets two
/// intervals.
fn tile_box(body: &Body, tile: TileAddress) -> (f64, f64, Vec<(f64, f64)>) {
    let cells = TILE_CELLS as i32;
    let mut points = Vec::new();
    for k in (0..=cells).step_by(4) {
        for (i, j) in [(k, 0), (k, cells), (0, k), (cells, k), (k, cells / 2), (cells / 2, k)] {
            points.push(planet_terrain::geo::cube::sample_direction(tile.sample(i, j)));
        }
    }
    let geo: Vec<(f64, f64)> = lat_lon_of(body, &points);
    let (mut south, mut north) = geo.iter().fold((90.0f64, -90.0f64), |(s, n), p| (s.min(p.0), n.max(p.0)));
    // Curved edges bulge between border samples; widen by a sample spacing.
    let pad = (body.tile_size_m(tile.depth()) / body.ellipsoid().min_radius()).to_degrees() / 16.0;
    south -= pad;
    north += pad;
    let pole =
        [90.0, -90.0].into_iter().find(|&p| locate(body, Geodetic::from_degrees(p, 0.0, 0.0), tile.depth()).0 == tile);
    if let Some(p) = pole {
        if p > 0.0 {
            north = 90.0
        } else {
            south = -90.0
        }
        return (south.max(-90.0), north.min(90.0), vec![(-180.0, 180.0)]);
    }
    let mut lons: Vec<f64> = geo.iter().map(|p| p.1).collect();
    lons.sort_by(f64::total_cmp);
    // The widest gap between consecutive longitudes is outside the tile.
    let mut gap = (360.0 + lons[0] - lons[lons.len() - 1], lons.len() - 1);
    for k in 1..lons.len() {
        if lons[k] - lons[k - 1] > gap.0 {
            gap = (lons[k] - lons[k - 1], k - 1);
        }
    }
    let (west, east) = (lons[(gap.1 + 1) % lons.len()] - pad, lons[gap.1] + pad);
    let intervals = if west <= east { vec![(west, east)] } else { vec![(west, 180.0), (-180.0, east)] };
    (south.max(-90.0), north.min(90.0), intervals)
}

/// Whether a tile's box intersects `coverage`, widened by `margin_deg` (the
/// reach of the source's filter).
fn tile_touches(body: &Body, tile: TileAddress, coverage: &Coverage, margin_deg: f64) -> bool {
    let (south, north, intervals) = tile_box(body, tile);
    if north < coverage.south - margin_deg || south > coverage.north + margin_deg {
        return false;
    }
    let cover: Vec<(f64, f64)> = if coverage.west <= coverage.east {
        vec![(coverage.west - margin_deg, coverage.east + margin_deg)]
    } else {
        vec![(coverage.west - margin_deg, 180.0), (-180.0, coverage.east + margin_deg)]
    };
    let overlaps = |a: (f64, f64), b: (f64, f64)| a.0 <= b.1 && b.0 <= a.1;
    intervals.iter().any(|&t| {
        cover.iter().any(|&c| {
            overlaps(t, c) || overlaps((t.0 - 360.0, t.1 - 360.0), c) || overlaps((t.0 + 360.0, t.1 + 360.0), c)
        })
    })
}

/// Every tile down to `depth` that the pack will hold: all of them for a
/// global raster; for a regional one, the tiles whose box meets the
/// raster's coverage and whose 33 x 33 lattice meets valid data (so no
/// declared tile is empty). The walk descends through every tile whose box
/// meets the coverage, since a small raster can slip between a coarse tile's
/// lattice points and still fill its children.
fn tile_set(inputs: &Inputs, body: &Body, coverage: &Coverage, depth: u8) -> Result<Vec<TileAddress>, BakeError> {
    if coverage.is_global() {
        let mut set = Vec::new();
        let mut level = TileAddress::roots().to_vec();
        for d in 0..=depth {
            set.extend_from_slice(&level);
            if d < depth {
                level = level.iter().flat_map(|t| t.children().expect("depth < MAX_DEPTH")).collect();
            }
        }
        return Ok(set);
    }
    let has_data = |tile: TileAddress| -> Result<bool, BakeError> {
        let cells = TILE_CELLS as i32;
        let directions: Vec<glam::DVec3> = (0..=cells)
            .step_by(LATTICE_STEP as usize)
            .flat_map(|j| (0..=cells).step_by(LATTICE_STEP as usize).map(move |i| (i, j)))
            .map(|(i, j)| planet_terrain::geo::cube::sample_direction(tile.sample(i.min(cells), j.min(cells))))
            .collect();
        Ok(inputs.heights(&lat_lon_of(body, &directions))?.iter().any(Option::is_some))
    };
    let mut set = Vec::new();
    let mut level: Vec<TileAddress> =
        TileAddress::roots().into_iter().filter(|t| tile_touches(body, *t, coverage, 0.0)).collect();
    for d in 0..=depth {
        let keep: Vec<bool> = level.par_iter().map(|&t| has_data(t)).collect::<Result<_, _>>()?;
        set.extend(level.iter().zip(keep).filter(|(_, k)| *k).map(|(t, _)| *t));
        if d < depth {
            level = level
                .par_iter()
                .flat_map_iter(|t| t.children().expect("depth < MAX_DEPTH"))
                .filter(|t| tile_touches(body, *t, coverage, 0.0))
                .collect();
        }
    }
    if set.is_empty() {
        return Err(BakeError::Options(format!(
            "{}: no tile down to depth {depth} meets valid data",
            inputs.dem.path().display()
        )));
    }
    Ok(set)
}

fn coverage_of(extent: &Extent) -> Coverage {
    if extent.global_longitude && extent.south <= -89.0 && extent.north >= 89.0 {
        Coverage::GLOBAL
    } else {
        Coverage { south: extent.south, west: extent.west, north: extent.north, east: extent.east }
    }
}

fn run_landmark_audit(options: &BakeOptions, inputs: &Inputs) -> Result<LandmarkAudit, BakeError> {
    let mut landmarks = table(options.body.name());
    landmarks.extend(options.landmarks.iter().cloned());
    let audit = LandmarkAudit::run(&landmarks, |lat, lon| inputs.heights(&[(lat, lon)]).map(|v| v[0]))?;
    let path = options.dem.clone();
    let list = |audit: &LandmarkAudit| audit.disagreeing().map(|c| format!("\n  {c}")).collect::<String>();
    match &audit.verdict {
        Verdict::Accepted | Verdict::NothingToCheck => Ok(audit),
        Verdict::Misread { reading, agree_if_undone, of } => Err(BakeError::Landmarks {
            path,
            message: format!(
                "{}: {agree_if_undone} of {of} landmarks agree if that is undone; as given, these disagree:{}",
                reading.describe(),
                list(&audit)
            ),
        }),
        Verdict::Disagree => Err(BakeError::Landmarks {
            path,
            message: format!(
                "landmarks disagree and no simple misreading (reversed, flipped or shifted axes) explains them; check the units, vertical datum and georeferencing:{}",
                list(&audit)
            ),
        }),
    }
}

fn landmark_json(audit: &LandmarkAudit) -> serde_json::Value {
    serde_json::json!({
        "verdict": match audit.verdict { Verdict::Accepted => "accepted", Verdict::NothingToCheck => "no landmark inside the coverage", _ => "refused" },
        "checks": audit.checks.iter().map(|c| serde_json::json!({
            "name": c.landmark.name, "lat": c.landmark.lat, "lon": c.landmark.lon,
            "min_m": c.landmark.min_m, "max_m": c.landmark.max_m, "value_m": c.value, "ok": c.ok,
        })).collect::<Vec<_>>(),
    })
}

/// Bakes `tiles` deepest first; `put` receives each encoded tile and
/// `children` gives a child's already-known entry.
#[allow(clippy::too_many_arguments)]
fn bake_tiles(
    inputs: &Inputs,
    spec: &PackSpec,
    data_depth: u8,
    tiles: &[TileAddress],
    already_done: usize,
    total: usize,
    progress: &dyn Progress,
    child_entry: &(dyn Fn(TileAddress) -> Option<IndexEntry> + Sync),
    put: &(dyn Fn(EncodedTile) -> Result<(), PackError> + Sync),
) -> Result<usize, BakeError> {
    let body = &spec.body;
    let deepest = tiles.iter().map(|t| t.depth()).max().unwrap_or(0);
    let done = AtomicUsize::new(already_done);
    let filled_total = AtomicUsize::new(0);
    for depth in (0..=deepest).rev() {
        let level: Vec<TileAddress> = tiles.iter().copied().filter(|t| t.depth() == depth).collect();
        level.par_iter().try_for_each(|&tile| -> Result<(), BakeError> {
            let sampled = inputs.sample(body, tile)?;
            let filled = sampled.filled.iter().filter(|&&f| f).count();
            filled_total.fetch_add(filled, Ordering::Relaxed);
            let children = tile.children().into_iter().flatten().filter_map(child_entry);
            let error = children.map(|e| f64::from(e.geometric_error)).fold(lattice_error(&sampled.heights), f64::max);
            let content = TileContent {
                heights: &sampled.heights,
                classes: spec.codec.has_classes().then_some(&sampled.classes[..]),
                colour: spec.codec.has_colour().then_some(&sampled.colour[..]),
                geometric_error: error,
                measured: depth <= data_depth && filled == 0,
            };
            put(spec.encode(tile, &content)?)?;
            progress.tiles(done.fetch_add(1, Ordering::Relaxed) + 1, total);
            Ok(())
        })?;
    }
    Ok(filled_total.into_inner())
}

/// Per-depth worst errors found by the accuracy audit.
#[derive(Clone, Copy, Debug, Default)]
struct DepthAudit {
    tiles: usize,
    samples: usize,
    skipped_filled: usize,
    worst_m: f64,
    worst_steps: f64,
    worst_colour: u8,
    class_mismatches: usize,
    violations: usize,
}

/// Re-reads `tiles` from the pack at `path` and compares every sample with
/// the source. Returns per-depth results and the first violation.
fn accuracy_audit(
    inputs: &Inputs,
    path: &Path,
    tiles: &[TileAddress],
) -> Result<(Vec<DepthAudit>, Option<String>), BakeError> {
    let pack = Pack::open(path)?;
    let body = pack.header().body.clone();
    let codec = pack.header().codec;
    let depths = usize::from(pack.header().max_depth) + 1;
    let results: Vec<(u8, DepthAudit, Option<String>)> = tiles
        .par_iter()
        .map(|&tile| -> Result<(u8, DepthAudit, Option<String>), BakeError> {
            let decoded = pack.read_tile(tile)?;
            let source = inputs.sample(&body, tile)?;
            let step = decoded.quantisation_step();
            let mut a = DepthAudit { tiles: 1, ..Default::default() };
            let mut first = None;
            for (k, (&q, &want)) in decoded.quantised.iter().zip(&source.heights).enumerate() {
                if source.filled[k] {
                    a.skipped_filled += 1;
                    continue;
                }
                let got = decoded.dequantise(q);
                let error = (got - want).abs();
                // Half a step of quantisation, plus the f32 rounding of the
                // stored range and of the decode (the filter is the same on
                // both sides, so it contributes nothing).
                let bound = 0.5 * step + 1e-6 * (1.0 + want.abs());
                a.samples += 1;
                a.worst_m = a.worst_m.max(error);
                if step > 0.0 {
                    a.worst_steps = a.worst_steps.max(error / step);
                }
                if error > bound {
                    a.violations += 1;
                    first.get_or_insert_with(|| {
                        let n = TILE_STORED_SAMPLES as usize;
                        format!(
                            "tile {tile} sample ({}, {}): pack {got:.3} m, source {want:.3} m, bound {bound:.4} m",
                            k % n - 1,
                            k / n - 1
                        )
                    });
                }
                if codec.has_colour() {
                    let c = decoded.colour.as_ref().expect("codec 2")[k];
                    let w = source.colour[k];
                    let d = (0..3).map(|i| c[i].abs_diff(w[i])).max().unwrap_or(0);
                    a.worst_colour = a.worst_colour.max(d);
                    if d > 0 {
                        a.violations += 1;
                        first.get_or_insert_with(|| format!("tile {tile}: colour {c:?} vs source {w:?}"));
                    }
                }
                if codec.has_classes() && decoded.classes.as_ref().expect("codec >= 1")[k] != source.classes[k] {
                    a.class_mismatches += 1;
                    a.violations += 1;
                    first.get_or_insert_with(|| format!("tile {tile}: surface class differs from the source"));
                }
            }
            Ok((tile.depth(), a, first))
        })
        .collect::<Result<_, _>>()?;
    let mut per_depth = vec![DepthAudit::default(); depths];
    let mut first = None;
    for (depth, a, f) in results {
        let d = &mut per_depth[usize::from(depth)];
        d.tiles += a.tiles;
        d.samples += a.samples;
        d.skipped_filled += a.skipped_filled;
        d.worst_m = d.worst_m.max(a.worst_m);
        d.worst_steps = d.worst_steps.max(a.worst_steps);
        d.worst_colour = d.worst_colour.max(a.worst_colour);
        d.class_mismatches += a.class_mismatches;
        d.violations += a.violations;
        if first.is_none() {
            first = f;
        }
    }
    Ok((per_depth, first))
}

/// Moves a pack that failed the accuracy audit aside (`.rejected`), so
/// nothing at the output path looks like a good pack, and says why.
fn reject(out: &Path, message: String) -> BakeError {
    let rejected = out.with_extension("rejected");
    match std::fs::rename(out, &rejected) {
        Ok(()) => BakeError::Audit { message, rejected },
        Err(e) => {
            BakeError::Options(format!("{message}; and moving the failed pack {} aside failed: {e}", out.display()))
        }
    }
}

fn audit_json(per_depth: &[DepthAudit]) -> serde_json::Value {
    serde_json::Value::Array(
        per_depth
            .iter()
            .enumerate()
            .filter(|(_, a)| a.tiles > 0)
            .map(|(depth, a)| {
                serde_json::json!({
                    "depth": depth, "tiles": a.tiles, "samples_compared": a.samples,
                    "samples_filled_not_compared": a.skipped_filled,
                    "worst_height_error_m": a.worst_m, "worst_height_error_steps": a.worst_steps,
                    "worst_colour_error": a.worst_colour, "class_mismatches": a.class_mismatches,
                    "violations": a.violations,
                })
            })
            .collect(),
    )
}

/// Bakes (or, with a region, patches) a pack as `options` say.
pub fn bake(options: &BakeOptions, progress: &dyn Progress) -> Result<BakeReport, BakeError> {
    let started = Instant::now();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.jobs.unwrap_or(0))
        .build()
        .map_err(|e| BakeError::Options(format!("cannot start {} worker threads: {e}", options.jobs.unwrap_or(0))))?;
    pool.install(|| match options.region {
        Some(region) => patch_region(options, region, progress, started),
        None => bake_full(options, progress, started),
    })
}

fn prepare(options: &BakeOptions, progress: &dyn Progress) -> Result<(Inputs, u8, LandmarkAudit, Extent), BakeError> {
    progress.stage(&format!("opening {}", options.dem.display()));
    let inputs = Inputs::open(options)?;
    let radius = options.body.ellipsoid().max_radius();
    let data_depth = supported_depth(&options.body, inputs.dem.resolution_m(radius));
    progress.stage("auditing the grid convention against landmarks");
    let audit = run_landmark_audit(options, &inputs)?;
    if audit.verdict == Verdict::NothingToCheck {
        progress.stage("no landmark lies inside this raster; pass --landmark LAT,LON,MIN,MAX to have it checked");
    }
    let extent = inputs.dem.extent()?;
    Ok((inputs, data_depth, audit, extent))
}

fn bake_full(options: &BakeOptions, progress: &dyn Progress, started: Instant) -> Result<BakeReport, BakeError> {
    let (inputs, data_depth, audit, extent) = prepare(options, progress)?;
    let depth = options.depth.unwrap_or(data_depth);
    if depth > MAX_DEPTH {
        return Err(BakeError::Options(format!(
            "--depth {depth} is deeper than the deepest addressable level {MAX_DEPTH}"
        )));
    }
    let codec = codec_for(options);
    let coverage = coverage_of(&extent);
    let spec = PackSpec {
        body: options.body.clone(),
        tier: options.tier.clone(),
        codec,
        height_data_depth: data_depth.min(depth),
        colour_data_depth: match &inputs.imagery {
            Some(i) => supported_depth(&options.body, i.resolution_m(options.body.ellipsoid().max_radius())).min(depth),
            None => 0,
        },
        coverage,
        fingerprint: fingerprint(options, depth, codec),
        compression_level: options.compression_level,
    };
    if options.if_unchanged && !options.resume {
        let current = Pack::open(&options.out).ok().filter(|p| p.header().fingerprint == spec.fingerprint);
        if let Some(pack) = current {
            progress.stage(&format!(
                "{} is up to date (same inputs and parameters); not baking again",
                options.out.display()
            ));
            let json = serde_json::json!({
                "mode": "up to date",
                "out": options.out.display().to_string(),
                "tiles": pack.entries().len(),
                "landmarks": landmark_json(&audit),
            });
            return Ok(BakeReport { json });
        }
    }
    progress.stage(&format!("choosing tiles to depth {depth} (the data supports depth {data_depth})"));
    let tiles = tile_set(&inputs, &options.body, &coverage, depth)?;
    if options.out.exists() && !options.resume && !partial_path(&options.out).exists() {
        progress.stage(&format!("replacing {}", options.out.display()));
    }
    let writer = if options.resume {
        PackWriter::resume(&options.out, spec.clone(), tiles.iter().copied())?
    } else {
        PackWriter::create(&options.out, spec.clone(), tiles.iter().copied())?
    };
    let pending = writer.pending();
    let resumed = tiles.len() - pending.len();
    if resumed > 0 {
        progress.stage(&format!("resuming: {resumed} of {} tiles already baked", tiles.len()));
    }
    progress.stage(&format!("baking {} tiles", pending.len()));
    let bake_start = Instant::now();
    let filled = bake_tiles(
        &inputs,
        &spec,
        data_depth,
        &pending,
        resumed,
        tiles.len(),
        progress,
        &|t| writer.staged_entry(t),
        &|encoded| writer.put_encoded(&encoded),
    )?;
    let summary = writer.finish()?;
    let bake_seconds = bake_start.elapsed().as_secs_f64();

    progress.stage("accuracy audit: re-reading every tile and comparing every sample with the source");
    let audit_start = Instant::now();
    let (per_depth, violation) = accuracy_audit(&inputs, &options.out, &tiles)?;
    if let Some(message) = violation {
        return Err(reject(&options.out, message));
    }
    let samples = tiles.len() * TILE_STORED_SAMPLE_COUNT;
    let mut per_depth_counts = vec![0usize; usize::from(depth) + 1];
    for t in &tiles {
        per_depth_counts[usize::from(t.depth())] += 1;
    }
    let json = serde_json::json!({
        "mode": "bake",
        "inputs": {
            "dem": options.dem.display().to_string(),
            "imagery": options.imagery.as_ref().map(|p| p.display().to_string()),
            "classes": options.classes.as_ref().map(|p| p.display().to_string()),
            "dem_size": inputs.dem.size(),
            "dem_projected": inputs.dem.is_projected(),
        },
        "out": options.out.display().to_string(),
        "body": options.body.name(),
        "radii_m": options.body.ellipsoid().radii().to_array(),
        "tier": options.tier,
        "codec": codec.code(),
        "coverage": {"south": coverage.south, "west": coverage.west, "north": coverage.north, "east": coverage.east, "global": coverage.is_global()},
        "depth": depth,
        "data_depth": data_depth,
        "height_data_depth": spec.height_data_depth,
        "colour_data_depth": spec.colour_data_depth,
        "tiles": tiles.len(),
        "tiles_per_depth": per_depth_counts,
        "tiles_resumed": resumed,
        "samples": samples,
        "nodata_policy": match options.void_value {
            Some(v) => format!("voids take {v} m (--void-value); tiles with void samples are not marked measured"),
            None => "fill voids from surrounding samples of the tile; tiles with filled samples are not marked measured".to_owned(),
        },
        "samples_filled": filled,
        "bytes": {"file": summary.file_length, "payload": summary.payload_bytes},
        "landmarks": landmark_json(&audit),
        "accuracy_audit": {"passed": true, "per_depth": audit_json(&per_depth)},
        "timings_s": {
            "bake": bake_seconds,
            "audit": audit_start.elapsed().as_secs_f64(),
            "total": started.elapsed().as_secs_f64(),
        },
        "output_samples_per_second": (samples - resumed * TILE_STORED_SAMPLE_COUNT) as f64 / bake_seconds.max(1e-9),
        "jobs": rayon::current_num_threads(),
    });
    Ok(BakeReport { json })
}

fn patch_region(
    options: &BakeOptions,
    region: Region,
    progress: &dyn Progress,
    started: Instant,
) -> Result<BakeReport, BakeError> {
    let existing = Pack::open(&options.out)?;
    let header = existing.header().clone();
    let codec = codec_for(options);
    let refuse = |what: String| BakeError::Options(format!("{}: cannot patch: {what}", options.out.display()));
    if header.body.ellipsoid().radii() != options.body.ellipsoid().radii() || header.body.name() != options.body.name()
    {
        return Err(refuse(format!("the pack is of {} and this bake is of {}", header.body, options.body)));
    }
    if header.codec != codec {
        return Err(refuse(format!(
            "the pack has codec {} and these inputs make codec {}",
            header.codec.code(),
            codec.code()
        )));
    }
    if header.tier != options.tier {
        return Err(refuse(format!("the pack is tier '{}' and this bake is tier '{}'", header.tier, options.tier)));
    }
    if options.depth.is_some_and(|d| d != header.max_depth) {
        return Err(refuse(format!(
            "the pack is baked to depth {} and --depth asks for {}",
            header.max_depth,
            options.depth.unwrap_or(0)
        )));
    }
    let (inputs, data_depth, audit, _) = prepare(options, progress)?;
    let coverage = region.coverage();
    // A change inside the box reaches one source pixel beyond it through the
    // bilinear filter.
    let margin = (inputs.dem.resolution_m(options.body.ellipsoid().max_radius())
        / options.body.ellipsoid().min_radius())
    .to_degrees();
    let tiles: Vec<TileAddress> = existing
        .entries()
        .iter()
        .map(IndexEntry::tile)
        .filter(|&t| tile_touches(&options.body, t, &coverage, margin))
        .collect();
    progress.stage(&format!("re-baking {} tiles the region touches", tiles.len()));
    let spec = PackSpec {
        body: header.body.clone(),
        tier: header.tier.clone(),
        codec: header.codec,
        height_data_depth: header.height_data_depth,
        colour_data_depth: header.colour_data_depth,
        coverage: header.coverage,
        fingerprint: header.fingerprint,
        compression_level: header.compression_level,
    };
    let fresh: std::sync::Mutex<Vec<EncodedTile>> = std::sync::Mutex::new(Vec::new());
    let entries = existing.entries().to_vec();
    drop(existing);
    let bake_start = Instant::now();
    let filled = bake_tiles(
        &inputs,
        &spec,
        data_depth.min(header.height_data_depth),
        &tiles,
        0,
        tiles.len(),
        progress,
        &|t| {
            let patched = fresh.lock().expect("lock").iter().find(|e| e.tile == t).map(|e| e.geometric_error);
            let old = entries.binary_search_by_key(&t.key(), |e| e.key).ok().map(|i| entries[i]);
            old.map(|e| IndexEntry { geometric_error: patched.unwrap_or(e.geometric_error), ..e })
        },
        &|encoded| {
            fresh.lock().expect("lock").push(encoded);
            Ok(())
        },
    )?;
    let fresh = fresh.into_inner().expect("lock");
    let summary = patch_tiles(&options.out, &fresh)?;
    let bake_seconds = bake_start.elapsed().as_secs_f64();
    progress.stage("accuracy audit of the patched tiles");
    let (per_depth, violation) = accuracy_audit(&inputs, &options.out, &tiles)?;
    if let Some(message) = violation {
        return Err(reject(&options.out, message));
    }
    let json = serde_json::json!({
        "mode": "region patch",
        "out": options.out.display().to_string(),
        "region": {"south": region.south, "west": region.west, "north": region.north, "east": region.east},
        "body": options.body.name(),
        "tiles_patched": summary.tiles,
        "patched": tiles.iter().map(|t| t.to_string()).collect::<Vec<_>>(),
        "rewritten_in_place": summary.rewritten_in_place,
        "appended": summary.appended,
        "samples_filled": filled,
        "landmarks": landmark_json(&audit),
        "accuracy_audit": {"passed": true, "per_depth": audit_json(&per_depth)},
        "timings_s": {"bake": bake_seconds, "total": started.elapsed().as_secs_f64()},
    });
    Ok(BakeReport { json })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn voids_fill_from_their_neighbours() {
        let n = TILE_STORED_SAMPLE_COUNT;
        let mut values: Vec<Option<f64>> = (0..n).map(|k| if k % 7 == 0 { None } else { Some(100.0) }).collect();
        assert!(fill_voids(&mut values));
        assert!(values.iter().all(|v| *v == Some(100.0)));
        let mut empty = vec![None; n];
        assert!(!fill_voids(&mut empty));
    }

    #[test]
    fn supported_depth_follows_the_pixel_size() {
        let earth = Body::earth();
        // ETOPO5: 5 arc-minutes, ~9.3 km; depth 3 samples every 9.8 km.
        assert_eq!(supported_depth(&earth, 9_266.0), 3);
        // SRTM-3: ~92 m; depth 10 samples every 76 m.
        assert_eq!(supported_depth(&earth, 92.0), 10);
    }

    #[test]
    fn a_flat_tile_has_no_lattice_error_and_a_spike_has_its_height() {
        let mut h = vec![5.0; TILE_STORED_SAMPLE_COUNT];
        assert_eq!(lattice_error(&h), 0.0);
        let n = TILE_STORED_SAMPLES as usize;
        h[(63 + 1) * n + (62 + 1)] = 25.0; // between lattice vertices
        assert_eq!(lattice_error(&h), 20.0);
    }
}
