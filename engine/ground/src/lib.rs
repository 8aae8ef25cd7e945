//! planet-ground: height sources, where a tile's samples come from, and the
//! editable layers over them.
//!
//! One trait, three implementations no consumer can tell apart: a baked
//! pack, a seeded procedural generator, and a higher-resolution regional
//! inset over a base. The key decision is that every source says how deep
//! its *measurement* goes ([`HeightSource::data_depth`]) and every tile says
//! where its samples came from ([`Provenance`]), so nothing downstream
//! mistakes resampled or invented ground for measured ground. Bounds come
//! without producing a tile ([`HeightSource::bounds`]), because a cull
//! tests far more nodes than it draws.

mod analytic;
mod detail;
mod function;
pub mod horizon;
mod inset;
pub mod layers;
mod pack;
mod procedural;
pub mod query;
pub mod roughness;
mod stack;
pub mod water;

pub use analytic::AnalyticSource;
pub use detail::{
    CALIBRATION_ROLL_OFF_64THS, DEFAULT_FIRST_OCTAVE, DEFAULT_OCTAVE_GAIN, DETAIL_SEED, DetailSource, LawSummary,
    ROLL_OFF_64THS, SMOOTH_BELOW_M, SMOOTH_GAIN, SMOOTH_WINDOW_GAIN, SMOOTH_WINDOWS_BELOW_M, WATER_CLASSES,
    calibration_ratio, rolled_off_ratio,
};
pub use function::HeightFunction;
pub use inset::{INVENTED_COLOUR, InsetSource, NO_DATA_TRANSITION_M, Reach, TRANSITION_M};
pub use pack::PackSource;
pub use procedural::ProceduralSource;
pub use stack::{EllipsoidSource, GroundOrigin, GroundStack, OriginMemo, StackError, StackedPack};

use planet_geo::address::{TILE_CELLS, TILE_STORED_SAMPLE_COUNT, TileAddress};
use planet_geo::body::{Body, Geodetic};
use planet_geo::cube::{direction_to_face_grid, sample_direction};
use planet_packfile::PackError;
use planet_packfile::codec::{Voids, stored_index};

/// The surface class of ground no pack measured (the bare ellipsoid, and
/// the band outside a regional pack where its edge meets it): drawn as "no
/// data", never shaded as ground. A stack's measured samples never carry
/// it.
pub const NO_DATA_CLASS: u8 = 255;

/// Where a tile's samples came from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Provenance {
    /// Measured at this tile's depth.
    Measured,
    /// Interpolated from a stored ancestor at `from_depth`.
    Resampled { from_depth: u8 },
    /// Made up (procedural).
    Invented,
}

impl Provenance {
    pub fn is_measured(self) -> bool {
        self == Provenance::Measured
    }
}

/// A source tile: 131x131 samples in stored order (see [`stored_index`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SourceTile {
    pub tile: TileAddress,
    /// Elevations in metres.
    pub heights: Vec<f32>,
    pub classes: Option<Vec<u8>>,
    pub colour: Option<Vec<[u8; 3]>>,
    pub provenance: Provenance,
    /// The samples that were voids a pack's bake filled, and how; `None`
    /// where none was. A stack shows the ground below through them.
    pub voids: Option<Voids>,
}

impl SourceTile {
    /// Elevation of stored sample `(i, j)`, `i, j` in -1..=129.
    pub fn height(&self, i: i32, j: i32) -> f32 {
        self.heights[stored_index(i, j)]
    }

    /// Whether the stored sample nearest fractional stored coordinates
    /// `u, v` was a void a bake filled.
    pub fn nearest_void(&self, u: f64, v: f64) -> bool {
        let at = |w: f64| w.round().clamp(-1.0, TILE_CELLS as f64 + 1.0) as i32;
        self.voids.as_ref().is_some_and(|voids| voids.samples[stored_index(at(u), at(v))])
    }

    /// Bilinear elevation at fractional stored coordinates (`u, v` in
    /// -1..=129, core 0..=128).
    pub fn bilinear(&self, u: f64, v: f64) -> f64 {
        bilinear(&self.heights, u, v)
    }

    /// The surface class of the stored sample nearest fractional stored
    /// coordinates `u, v`; `None` when the tile holds no classes.
    pub fn nearest_class(&self, u: f64, v: f64) -> Option<u8> {
        let at = |w: f64| w.round().clamp(-1.0, TILE_CELLS as f64 + 1.0) as i32;
        self.classes.as_ref().map(|c| c[stored_index(at(u), at(v))])
    }
}

/// What selection needs about a tile before (or instead of) reading it.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct TileBounds {
    pub min_elevation: f64,
    pub max_elevation: f64,
    /// Metres the tile's surface departs from the finest ground it stands for.
    pub geometric_error: f64,
    pub provenance: Provenance,
    /// Some samples of the tile were voids a pack's bake filled (read from
    /// the index: a stack's bounds hold the ground below there).
    pub voids: bool,
}

/// Why a source could not produce a tile.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error(transparent)]
    Pack(#[from] PackError),
    #[error("no data for tile {tile}: the source holds neither it nor any ancestor")]
    NoData { tile: TileAddress },
}

/// Whether a source may read tile samples to bound a tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// Exact bounds, reading what they need.
    Allowed,
    /// For a frame that must never wait on a read: where exact bounds need
    /// a read (detail's amplitude field of a data tile, and its octave
    /// windows), a bound that holds the exact one, the tile noted for
    /// [`warm_bounds`]. A looser bound costs finer or more nodes, never a
    /// hole.
    Never,
}

/// One implementation per kind of ground; see the module documentation.
///
/// The trait says what the ground is. What a streaming reader does with
/// it (warming bounds a frame took loose, hearing which bounds narrowed,
/// fetching tiles ahead) is not forwarded by anyone: a source that keeps
/// such state offers it through [`HeightSource::streaming`], and
/// [`warm_bounds`], [`narrowed_bounds`] and [`prefetch`] reach every such
/// source through [`HeightSource::parts`], which every source states (no
/// default), so a decorator cannot cut its inner sources off by leaving a
/// method out.
pub trait HeightSource: Send + Sync + std::fmt::Debug {
    fn body(&self) -> &Body;
    /// All 131x131 samples of a tile.
    fn tile(&self, tile: TileAddress) -> Result<SourceTile, SourceError>;
    /// Elevation range and geometric error, without producing the tile,
    /// reading tile samples only where `reads` allows.
    fn bounds(&self, tile: TileAddress, reads: Reads) -> Result<TileBounds, SourceError>;
    /// Deepest level whose heights were measured; `None` when nothing was.
    fn data_depth(&self) -> Option<u8>;
    /// Deepest level whose colour was measured; `None` when there is none.
    fn colour_data_depth(&self) -> Option<u8>;
    /// The sources this one is made of (none for a leaf).
    fn parts(&self) -> Vec<&dyn HeightSource>;
    /// What this source itself keeps for a streaming reader, if anything.
    fn streaming(&self) -> Option<&dyn Streaming> {
        None
    }
}

/// [`HeightSource::bounds`] at its two costs, for every source at once.
///
/// A blanket implementation, not provided methods of [`HeightSource`]: no
/// source can override one (coherence forbids a second implementation), so
/// no source answers differently at `tile_bounds` than at `bounds`, which
/// is the forwarding the one `bounds(tile, reads)` removed.
pub trait BoundsAt {
    /// Exact bounds: [`HeightSource::bounds`] with reads allowed.
    fn tile_bounds(&self, tile: TileAddress) -> Result<TileBounds, SourceError>;
    /// Bounds without a read: [`HeightSource::bounds`] with [`Reads::Never`].
    fn tile_bounds_unread(&self, tile: TileAddress) -> Result<TileBounds, SourceError>;
}

impl<S: HeightSource + ?Sized> BoundsAt for S {
    fn tile_bounds(&self, tile: TileAddress) -> Result<TileBounds, SourceError> {
        self.bounds(tile, Reads::Allowed)
    }

    fn tile_bounds_unread(&self, tile: TileAddress) -> Result<TileBounds, SourceError> {
        self.bounds(tile, Reads::Never)
    }
}

/// The state a source keeps for streaming readers (its own, not its
/// parts': [`warm_bounds`] and the others walk the parts).
pub trait Streaming {
    /// Computes the exact bounds [`Reads::Never`] gave loose ones for (a
    /// worker thread's job); returns how many tiles it bounded.
    fn warm_bounds(&self) -> usize {
        0
    }
    /// Appends the tiles whose bounds narrowed since the last call; false
    /// when more narrowed than were noted (forget every kept bound).
    fn narrowed_bounds(&self, into: &mut Vec<TileAddress>) -> bool {
        let _ = into;
        true
    }
    /// A hint that these tiles will be produced soon (a remote pack fetches
    /// their bytes together). Errors are reported when a tile is produced.
    fn prefetch(&self, tiles: &[TileAddress]) {
        let _ = tiles;
    }
}

/// Calls `each` with the streaming state of `source` and of every source
/// it is made of.
fn each_streaming(source: &dyn HeightSource, each: &mut dyn FnMut(&dyn Streaming)) {
    if let Some(s) = source.streaming() {
        each(s);
    }
    for part in source.parts() {
        each_streaming(part, each);
    }
}

/// Computes the exact bounds of every tile a frame took loose bounds for,
/// anywhere in `source`; returns how many tiles were bounded.
pub fn warm_bounds(source: &dyn HeightSource) -> usize {
    let mut warmed = 0;
    each_streaming(source, &mut |s| warmed += s.warm_bounds());
    warmed
}

/// Appends the tiles whose bounds narrowed anywhere in `source` since the
/// last call, for the one caller that keeps bounds across frames; false
/// when more narrowed than were noted (forget every kept bound). Bounds
/// only ever narrow, so a kept bound not yet forgotten is looser than the
/// source's, never wrong.
pub fn narrowed_bounds(source: &dyn HeightSource, into: &mut Vec<TileAddress>) -> bool {
    let mut noted_all = true;
    each_streaming(source, &mut |s| noted_all &= s.narrowed_bounds(into));
    noted_all
}

/// Tells every source in `source` that these tiles will be produced soon.
pub fn prefetch(source: &dyn HeightSource, tiles: &[TileAddress]) {
    each_streaming(source, &mut |s| s.prefetch(tiles));
}

/// Bilinear interpolation over a 131x131 stored grid.
pub(crate) fn bilinear<T: Copy + Into<f64>>(grid: &[T], u: f64, v: f64) -> f64 {
    debug_assert_eq!(grid.len(), TILE_STORED_SAMPLE_COUNT);
    let last = TILE_CELLS as f64; // 128: the last cell starts at 128 (apron on the far side).
    let u0 = u.floor().clamp(-1.0, last);
    let v0 = v.floor().clamp(-1.0, last);
    let (fu, fv) = (u - u0, v - v0);
    let at = |i: f64, j: f64| -> f64 { grid[stored_index(i as i32, j as i32)].into() };
    let bottom = at(u0, v0) * (1.0 - fu) + at(u0 + 1.0, v0) * fu;
    let top = at(u0, v0 + 1.0) * (1.0 - fu) + at(u0 + 1.0, v0 + 1.0) * fu;
    bottom * (1.0 - fv) + top * fv
}

/// Where the uniform cubic B-spline over a stored axis takes its four
/// samples at core coordinate `u` (0..=128; past it, on the apron, it
/// extrapolates the end cell): the stored index of the first and their
/// weights, which are positive inside and sum to one.
pub(crate) fn bspline_taps(u: f64) -> (usize, [f64; 4]) {
    let cell = u.floor().clamp(0.0, TILE_CELLS as f64 - 1.0);
    let (f, g) = (u - cell, 1.0 - (u - cell));
    let k = [g * g * g, 3.0 * f * f * f - 6.0 * f * f + 4.0, 3.0 * g * g * g - 6.0 * g * g + 4.0, f * f * f];
    // The first tap, core sample `cell - 1`, is stored at index `cell`.
    (cell as usize, k.map(|x| x / 6.0))
}

/// The uniform cubic B-spline through a 131x131 stored grid at core
/// coordinates `u, v`: the 4 x 4 samples around, the apron supplying those
/// past the core's edge, so tiles that share those samples (neighbours,
/// across face edges too) meet with the same value and slope. Smooth where
/// a bilinear blend is faceted; it does not pass through the samples.
pub(crate) fn bspline(grid: &[f32], u: f64, v: f64) -> f64 {
    debug_assert_eq!(grid.len(), TILE_STORED_SAMPLE_COUNT);
    let ((x0, wx), (y0, wy)) = (bspline_taps(u), bspline_taps(v));
    let n = planet_geo::address::TILE_STORED_SAMPLES as usize;
    let row = |j: usize| (0..4).map(|i| wx[i] * f64::from(grid[(y0 + j) * n + x0 + i])).sum::<f64>();
    (0..4).map(|j| wy[j] * row(j)).sum()
}

/// An elevation where a person would stand.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct GroundSample {
    pub elevation_m: f64,
    /// Depth of the tile the sample came from.
    pub depth: u8,
    pub provenance: Provenance,
}

/// The tile at `depth` containing a latitude/longitude, and the point's
/// fractional stored coordinates in it.
pub fn locate(body: &Body, at: Geodetic, depth: u8) -> (TileAddress, f64, f64) {
    let direction = body.ellipsoid().geodetic_to_direction(at);
    let (face, s, t) = direction_to_face_grid(direction);
    let size = f64::from(1u32 << depth);
    let to_cell = |c: f64| ((c + 1.0) * 0.5 * size).clamp(0.0, size);
    let (gx, gy) = (to_cell(s), to_cell(t));
    let x = (gx.floor() as u32).min((1u32 << depth) - 1);
    let y = (gy.floor() as u32).min((1u32 << depth) - 1);
    let tile = TileAddress::new(face.index(), depth, x, y).expect("in range by construction");
    let cells = f64::from(TILE_CELLS);
    (tile, (gx - f64::from(x)) * cells, (gy - f64::from(y)) * cells)
}

/// Elevation at a latitude/longitude, from the tile at `depth` that holds it.
pub fn sample_ground(source: &dyn HeightSource, at: Geodetic, depth: u8) -> Result<GroundSample, SourceError> {
    let (tile, u, v) = locate(source.body(), at, depth);
    let samples = source.tile(tile)?;
    Ok(GroundSample { elevation_m: samples.bilinear(u, v), depth, provenance: samples.provenance })
}

/// The unit directions of all 131x131 stored samples of a tile, in stored
/// order. Core samples share one warp per row and per column (the same
/// function of the same grid coordinate, so the same bits as
/// [`sample_direction`]); apron samples, which may lie on another face, go
/// through [`TileAddress::sample`].
pub fn sample_directions(tile: TileAddress) -> Vec<glam::DVec3> {
    let cells = TILE_CELLS as i32;
    let warped: Vec<(f64, f64)> = (0..=cells)
        .map(|k| {
            let (s, t) = tile.sample(k, k).grid_coordinates();
            (planet_geo::cube::warp(s), planet_geo::cube::warp(t))
        })
        .collect();
    let mut directions = Vec::with_capacity(TILE_STORED_SAMPLE_COUNT);
    for j in -1..=cells + 1 {
        for i in -1..=cells + 1 {
            let core = (0..=cells).contains(&i) && (0..=cells).contains(&j);
            directions.push(if core {
                let p = planet_geo::cube::cube_point(tile.face(), warped[i as usize].0, warped[j as usize].1);
                planet_geo::cube::normalize_exactly_ordered(p)
            } else {
                sample_direction(tile.sample(i, j))
            });
        }
    }
    directions
}
