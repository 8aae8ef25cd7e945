//! Detail synthesis past the height data depth: the ground a person stands
//! on is no longer the bilinear plane of a 9 km sample.
//!
//! The key decision: detail is a *refinement scheme on the cube's own sample
//! lattices*, not noise evaluated in tile space. Octave `e` (new at depth
//! `e`) has values at the nodes of the depth-`e-1` sample lattice that the
//! depth-`e-2` lattice lacks (so its wavelength is at least four samples of
//! depth `e`): half the surplus of a node value over the refinement of the
//! values at the coarser nodes around it (`lattice.rs`), where a node value
//! is a profile across the fall line of the data cells around the node, or
//! white noise hashed from its integer cube point on the flat and along a
//! data tile's edges (`gullies.rs`; the same integers from every face that
//! shares the node, no transcendental functions), scaled by the octave's
//! coefficient (the data's gain rolled off below the data). The sum of the
//! octaves up to depth `d` is carried as node values: each lattice level's
//! nodes are the bilinear refinement (weights 0, 1/2, 1 only) of the coarser
//! level plus that level's octave at its new nodes, and a tile's samples
//! are one more refinement of the depth-`d-1` nodes (an interpolating
//! subdivision, like midpoint displacement). Hence
//!
//! * it is a function of position alone: a node's value depends on nothing
//!   but the node and the data cells that every tile holding it stores
//!   alike (induction over levels), so tiles, faces and depths agree; along
//!   a face edge every refinement is one-dimensional (a product with an
//!   exact weight, summed commutatively), so shared edge samples are equal
//!   bit for bit;
//! * a child refines its parent and never replaces it: at the parent's
//!   samples the child's sum is the parent's plus octave `d`'s node value,
//!   which is zero at the parent's even samples; so the child's whole drawn
//!   lattice (every fourth sample) lies on the parent's samples bit for bit,
//!   and the morph's even vertices never pop;
//! * a tile costs one refinement pass per level over a window that halves
//!   each level up, about 1.4 passes over the tile in all.
//!
//! The sum is multiplied by an amplitude field continuing the data's own
//! spectrum: per data cell its relief (its twist, how far its four corners,
//! stored alike by every tile sharing the cell, depart from a plane, or
//! where more a share of its rise, `roughness::cell_relief`; capped at the
//! data's RMS relief, `roughness::twist_cap`), times the fraction of its
//! corners not water (classes 1 ocean and 3 lake) nor no data, times the amplitude per
//! metre of relief that continues the data's roughness law bent as real
//! ground smooths ([`crate::roughness::continuing_amplitude`],
//! measured per source), down to samples of [`SMOOTH_BELOW_M`]; finer
//! octaves fall as a smooth surface's (`detail/lattice.rs` says why).
//! Cell values sit at cell centres, read bilinearly (the dual grid) by
//! every sample of a deeper tile inside its data ancestor's stored grid.
//! The data depth and above are untouched. How the result compares with
//! real ground: `tools/bench/detail_vs_real.sh` and docs/ground.md.

use crate::BoundsAt;
use std::sync::Arc;

use crate::roughness::{cell_relief, relief_share_of_rise};
use crate::{HeightSource, Provenance, Reads, SourceError, SourceTile, Streaming, TileBounds};
use planet_geo::address::{FaceSample, TILE_CELLS, TILE_STORED_SAMPLES, TileAddress};
use planet_geo::body::Body;
use planet_geo::face::Face;
use planet_packfile::DetailLaw;

/// Per-octave amplitude ratio where the data gives no exponent: `2^-H` for
/// `H = 0.8`, written as a literal so no machine computes it differently.
pub const DEFAULT_OCTAVE_GAIN: f64 = 0.574_349_177_498_517_6;

/// The first octave's amplitude per metre of a data cell's relief
/// ([`crate::roughness::cell_relief`]) where the data gives no law
/// to continue ([`DetailSource::within`] measures one): 17.32 for white
/// signs, times 1.6 since the octaves' nodes became profiles across the
/// slope and their surplus (`gullies.rs`), whose root mean square is lower
/// (a 1 m lidar averaged to 8 m held its roughness with it, where 17.32
/// drew 0.6 of its peaks and pits; docs/PERFORMANCE.md).
pub const DEFAULT_FIRST_OCTAVE: f64 = 27.71;

/// The seed of every pack's detail: one fixed value, so the same pack gives
/// the same ground everywhere.
pub const DETAIL_SEED: u64 = 0x005e_edde_7a11;

/// Surface classes that get no detail (the demo's table: 1 ocean, 3 lake).
pub const WATER_CLASSES: [u8; 2] = [1, 3];

/// Data cells along one side of a stored tile grid (samples -1..=129).
const CELLS: usize = TILE_STORED_SAMPLES as usize - 1;

/// A detail law as a person (and a report) reads it.
#[derive(Clone, Copy, PartialEq, Debug, serde::Serialize)]
pub struct LawSummary {
    /// The roughness exponent `H` recorded; null where the data gave none
    /// (the default octave gain).
    pub exponent: Option<f64>,
    pub octave_gain: f64,
    /// Metres of the first octave per metre of a cell's relief.
    pub first_octave: f64,
    /// Metres; null for no cap.
    pub twist_cap_m: Option<f64>,
}

impl LawSummary {
    pub fn of(law: &DetailLaw) -> LawSummary {
        LawSummary {
            exponent: law.exponent_64ths.map(|k| f64::from(k) / 64.0),
            octave_gain: DetailSource::gain_of_law(law),
            first_octave: f64::from(law.first_octave),
            twist_cap_m: law.twist_cap.is_finite().then_some(f64::from(law.twist_cap)),
        }
    }
}

impl std::fmt::Display for LawSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.exponent {
            Some(h) => write!(f, "H {h}")?,
            None => write!(f, "H none measured")?,
        }
        write!(f, " (octave gain {:.4}), first octave {:.3} m per m of relief", self.octave_gain, self.first_octave)?;
        match self.twist_cap_m {
            Some(cap) => write!(f, ", relief capped at {cap} m"),
            None => write!(f, ", relief uncapped"),
        }
    }
}

/// What detail keeps of one data-depth tile: its amplitude field (one value
/// per cell of the stored grid) and its heights (for bounds).
struct DataField {
    cells: Vec<f32>,
    heights: Vec<f32>,
    /// Each cell's contour direction ([`gullies::contours`]).
    contours: Vec<gullies::Contour>,
}

/// A source with detail synthesized past its height data depth.
#[derive(Clone)]
pub struct DetailSource {
    inner: Arc<dyn HeightSource>,
    seed: u64,
    gain: f64,
    first: f64,
    /// The first depth whose octave falls at [`SMOOTH_GAIN`]: the first
    /// whose samples are finer than [`SMOOTH_BELOW_M`] on this body.
    smooth_from: u8,
    /// What detail keeps between calls (`cache`): amplitude fields and
    /// peaks of data tiles, bounds computed (selection asks for the same
    /// nodes every frame), the exact ranges of tiles produced, the loose
    /// bounds a frame took from the index, and the streaming protocol's
    /// queues; one store, one budget.
    caches: cache::DetailCaches,
    /// Past the data depth the inner source is the bilinear resampling of
    /// its data-depth tiles (see [`DetailSource::resampling_its_data`]).
    resamples_data: bool,
    /// The largest relief a cell's amplitude follows (metres).
    twist_cap: f64,
}

impl std::fmt::Debug for DetailSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DetailSource")
            .field("inner", &self.inner)
            .field("seed", &self.seed)
            .field("gain", &self.gain)
            .field("first", &self.first)
            .finish()
    }
}

impl DetailSource {
    /// Detail continuing the roughness law of the inner source's own data.
    pub fn new(inner: Arc<dyn HeightSource>) -> DetailSource {
        DetailSource::within(inner, planet_packfile::Coverage::GLOBAL)
    }

    /// [`DetailSource::new`] for a source that measured only `coverage` (a
    /// regional pack): its law is fitted inside the box alone
    /// ([`DetailSource::measure_law`]; the default law where that fails).
    pub fn within(inner: Arc<dyn HeightSource>, coverage: planet_packfile::Coverage) -> DetailSource {
        let law = DetailSource::measure_law(&inner, coverage).unwrap_or_else(|_| DetailSource::default_law());
        DetailSource::with_law(inner, law)
    }

    /// Detail of the law a pack recorded when it was baked (or any law
    /// [`DetailSource::measure_law`] gave).
    pub fn with_law(inner: Arc<dyn HeightSource>, law: DetailLaw) -> DetailSource {
        DetailSource::with_parameters(inner, DETAIL_SEED, DetailSource::gain_of_law(&law), f64::from(law.first_octave))
            .with_twist_cap(f64::from(law.twist_cap))
    }

    /// The octave gain `2^-H` of a law: exact literal products for its
    /// recorded `H`, or [`DEFAULT_OCTAVE_GAIN`].
    pub fn gain_of_law(law: &DetailLaw) -> f64 {
        law.exponent_64ths.map_or(DEFAULT_OCTAVE_GAIN, crate::roughness::gain_of_64ths)
    }

    /// The law that continues the roughness of `inner`'s own data inside
    /// `coverage` (over its whole tiles: a regional pack's fill outside the
    /// box set its `H`), rounded to what a pack header records, each part
    /// measured with the parts before it as rounded: the exponent
    /// ([`DetailSource::exponent_within`]), the twist cap
    /// ([`crate::roughness::twist_cap`]) and the first octave's
    /// amplitude ([`crate::roughness::continuing_amplitude`]). A
    /// source that measures no law (flat, or too small) gets the default
    /// parts; a source that fails to read is an error, so a bake never
    /// records a law it did not measure.
    pub fn measure_law(
        inner: &Arc<dyn HeightSource>,
        coverage: planet_packfile::Coverage,
    ) -> Result<DetailLaw, SourceError> {
        use crate::roughness::{continuing_amplitude, exponent_64ths, gain_of_64ths, measured_law_within, twist_cap};
        let Some(law) = measured_law_within(&**inner, 16, coverage)? else { return Ok(DetailSource::default_law()) };
        let exponent = exponent_64ths(law.exponent);
        let gain = exponent.map_or(DEFAULT_OCTAVE_GAIN, gain_of_64ths);
        let cap = f64::from(DetailLaw::recorded_cap(twist_cap(&**inner, &law.seeds)?));
        let first = continuing_amplitude(inner, &law, gain, Some(cap), DETAIL_SEED)?;
        let first = first.filter(|&a| a.is_finite() && (a as f32) > 0.0).unwrap_or(DEFAULT_FIRST_OCTAVE);
        let law = DetailLaw::rounded(exponent, first, cap);
        debug_assert!(law.check().is_ok(), "{law:?}");
        Ok(law)
    }

    /// The law of data that gives none: the default gain and first octave,
    /// no twist cap.
    pub fn default_law() -> DetailLaw {
        DetailLaw::rounded(None, DEFAULT_FIRST_OCTAVE, f64::INFINITY)
    }

    /// The same detail with each cell's relief taken at most `cap` metres.
    pub fn with_twist_cap(mut self, cap: f64) -> DetailSource {
        self.twist_cap = cap;
        self
    }

    /// The data's roughness exponent `H` (fitted over windows of 256 down to
    /// 16 data samples in up to 16 high-ground tiles), rounded to a multiple
    /// of 1/64 inside 0.3..=1.0, and its octave gain `2^-H` as a product of
    /// exact literals, so every machine that measures the same `H` uses the
    /// same gain bits. `None` when the source measured nothing or is flat.
    pub fn exponent_of(inner: &dyn HeightSource) -> Option<(f64, f64)> {
        DetailSource::exponent_within(inner, planet_packfile::Coverage::GLOBAL)
    }

    /// [`DetailSource::exponent_of`] from what `inner` measured inside `coverage`.
    pub fn exponent_within(inner: &dyn HeightSource, coverage: planet_packfile::Coverage) -> Option<(f64, f64)> {
        use crate::roughness::{measured_exponent_within, rounded_gain};
        rounded_gain(measured_exponent_within(inner, 16, coverage).ok().flatten()?)
    }

    pub fn gain(&self) -> f64 {
        self.gain
    }

    /// The first octave's amplitude per metre of a data cell's twist.
    pub fn first_octave(&self) -> f64 {
        self.first
    }

    /// `gain` is the amplitude ratio between successive octaves (`2^-H`),
    /// `first` the first octave's amplitude per metre of local height change.
    pub fn with_parameters(inner: Arc<dyn HeightSource>, seed: u64, gain: f64, first: f64) -> DetailSource {
        let smooth_from = (0..=planet_geo::address::MAX_DEPTH)
            .find(|&d| inner.body().sample_spacing_m(d) < SMOOTH_BELOW_M)
            .unwrap_or(u8::MAX);
        DetailSource {
            inner,
            seed,
            gain,
            first,
            smooth_from,
            caches: cache::DetailCaches::default(),
            resamples_data: false,
            twist_cap: f64::INFINITY,
        }
    }

    /// States that past the data depth the inner source is the bilinear
    /// resampling of its data-depth tiles (a pack stored no deeper than its
    /// height data depth), so a deeper tile's ground lies within the range
    /// of the data samples under it: its bounds then come from those
    /// samples, not from the whole data tile's range (near the ground, the
    /// whole range would put the camera inside every nearby node's bounds).
    pub fn resampling_its_data(mut self, yes: bool) -> DetailSource {
        self.resamples_data = yes;
        self
    }

    pub fn inner(&self) -> &Arc<dyn HeightSource> {
        &self.inner
    }

    /// The coefficient of octave `depth` (new at that depth) in the unit
    /// octave sum: `gain^(depth - data_depth - 1)` down to samples of
    /// [`SMOOTH_BELOW_M`], [`SMOOTH_GAIN`] per level past them, by repeated
    /// products.
    pub fn octave_coefficient(&self, data_depth: u8, depth: u8) -> f64 {
        lattice::octave_coefficient(self.gain, self.smooth_from, data_depth, depth)
    }

    /// The most the unit octave sum can be at any depth past `data_depth`
    /// (every octave at its full coefficient): what a change of one metre
    /// of amplitude moves synthesized ground by, at most.
    pub fn octave_sum_bound(&self, data_depth: u8) -> f64 {
        let (up_to, beyond) = self.coefficient_sums(data_depth, data_depth);
        up_to + beyond
    }

    /// The first depth whose octave falls at [`SMOOTH_GAIN`].
    pub fn smooth_from(&self) -> u8 {
        self.smooth_from
    }

    /// The amplitude field (metres per unit of octave sum) at stored sample
    /// `(i, j)` of a tile deeper than the data depth.
    pub fn amplitude_at(&self, tile: TileAddress, i: i32, j: i32) -> Result<f64, SourceError> {
        let Some(data_depth) = self.inner.data_depth().filter(|&d| tile.depth() > d) else { return Ok(0.0) };
        let ancestor = tile.ancestor_at(data_depth).expect("deeper than the data depth");
        let field = self.amplitudes(ancestor)?;
        let (u0, v0, step) = DetailSource::placement(tile, ancestor);
        Ok(dual_bilinear(&field.cells, u0 + f64::from(i) * step, v0 + f64::from(j) * step))
    }

    /// The value of octave `depth`'s node at a sample of depth `depth - 1`
    /// (unscaled, at most 1 in magnitude; zero at the samples depth
    /// `depth - 2` has too): what a child adds to its parent's sum at the
    /// parent's samples. `tile` is any tile past the data depth holding the
    /// sample (its data ancestor orients the node: `detail/gullies.rs`).
    /// Zero where no octave adds a node: at or above the data depth, and
    /// for a sample coarser than the data's lattice.
    pub fn octave_node(&self, tile: TileAddress, sample: FaceSample) -> Result<f64, SourceError> {
        let Some(data_depth) = self.inner.data_depth().filter(|&d| tile.depth() > d) else { return Ok(0.0) };
        if (sample.i | sample.j) & 1 == 0 || sample.cells_log2 < data_depth + 7 {
            return Ok(0.0);
        }
        let ancestor = tile.ancestor_at(data_depth).expect("deeper than the data depth");
        let field = self.amplitudes(ancestor)?;
        let nodes = self.node_values(ancestor, &field);
        let coarse = |i: u64, j: u64| nodes.value(FaceSample { i, j, ..sample });
        Ok(lattice::surplus(|s| nodes.value(s), sample, &coarse))
    }

    /// What gives the octaves' new nodes their values under data tile
    /// `ancestor`, whose field is `field`.
    fn node_values<'a>(&self, ancestor: TileAddress, field: &'a DataField) -> gullies::Gullies<'a> {
        gullies::Gullies::new(self.seed, ancestor, &field.contours)
    }

    /// The amplitude field of the data-depth tile `tile` (metres of octave
    /// sum per unit), one value per cell of its stored grid, cached.
    fn amplitudes(&self, tile: TileAddress) -> Result<Arc<DataField>, SourceError> {
        if let Some(a) = self.caches.field(tile) {
            return Ok(a);
        }
        let data = self.inner.tile(tile)?;
        let cells = self.amplitude_cells(tile, &data);
        self.keep_peaks(tile, &cells);
        let contours = gullies::contours(&data.heights, self.inner.body().sample_spacing_m(tile.depth()));
        let cells = Arc::new(DataField { cells, heights: data.heights, contours });
        self.caches.keep_field(tile, cells.clone());
        Ok(cells)
    }

    /// The amplitude of every cell of data-depth tile `tile`'s stored grid,
    /// from its samples `data`.
    fn amplitude_cells(&self, tile: TileAddress, data: &SourceTile) -> Vec<f32> {
        let n = TILE_STORED_SAMPLES as usize;
        let share = relief_share_of_rise(self.inner.body().sample_spacing_m(tile.depth()));
        let mut cells = Vec::with_capacity(CELLS * CELLS);
        for cj in 0..CELLS {
            for ci in 0..CELLS {
                let at = |di: usize, dj: usize| (cj + dj) * n + ci + di;
                let h = |di, dj| f64::from(data.heights[at(di, dj)]);
                // The cell's relief: its twist or a share of its rise.
                let twist = cell_relief([h(0, 0), h(1, 0), h(0, 1), h(1, 1)], share).min(self.twist_cap);
                let land = match &data.classes {
                    Some(c) => [at(0, 0), at(1, 0), at(0, 1), at(1, 1)]
                        .iter()
                        .filter(|&&k| !WATER_CLASSES.contains(&c[k]) && c[k] != crate::NO_DATA_CLASS)
                        .count(),
                    None => 4,
                };
                cells.push((twist * self.first * land as f64 * 0.25) as f32);
            }
        }
        // Three cells meet at a cube corner, not four: the stored grid's
        // corner cell there (its corner apron sample repeats the corner) is
        // fictitious. It takes the largest of the three real ones, a value
        // every face that shares the corner computes alike.
        let last = CELLS - 1; // array index of cell 128; cell c is at c + 1
        let n = tile.tiles_per_face_edge() - 1;
        for (ax, ay) in [(0, 0), (last, 0), (0, last), (last, last)] {
            let at_face_corner = tile.x() == if ax == 0 { 0 } else { n } && tile.y() == if ay == 0 { 0 } else { n };
            if !at_face_corner {
                continue;
            }
            let (bx, by) = (if ax == 0 { 1 } else { last - 1 }, if ay == 0 { 1 } else { last - 1 });
            let at = |i: usize, j: usize| cells[j * CELLS + i];
            cells[ay * CELLS + ax] = at(bx, ay).max(at(ax, by)).max(at(bx, by));
        }
        cells
    }

    /// Keeps `b`, the exact bounds of `tile` (as computed: a child's loose
    /// bounds build on them), and returns them narrowed to its produced
    /// range where it has one.
    fn keep_bounds(&self, tile: TileAddress, b: TileBounds) -> TileBounds {
        self.caches.keep_exact(tile, b);
        self.narrowed(tile, b)
    }

    /// `b` narrowed to `tile`'s produced range, if it was produced.
    fn narrowed(&self, tile: TileAddress, mut b: TileBounds) -> TileBounds {
        if let Some(range) = self.caches.range(tile) {
            bounds::narrow(&mut b, range);
        }
        b
    }

    /// Where a tile's stored samples lie in its data ancestor's stored grid:
    /// (origin u, origin v, step).
    fn placement(tile: TileAddress, ancestor: TileAddress) -> (f64, f64, f64) {
        let k = tile.depth() - ancestor.depth();
        let scale = 1.0 / f64::from(1u32 << k);
        let cells = f64::from(TILE_CELLS);
        let u = f64::from(tile.x() - (ancestor.x() << k)) * cells * scale;
        let v = f64::from(tile.y() - (ancestor.y() << k)) * cells * scale;
        (u, v, scale)
    }

    /// Sum of the octave coefficients up to `depth` and beyond it (for
    /// bounds and error).
    fn coefficient_sums(&self, data_depth: u8, depth: u8) -> (f64, f64) {
        lattice::coefficient_sums(self.gain, self.smooth_from, data_depth, depth)
    }
}

/// Dual-grid (cell-centre) bilinear interpolation of a cell field at stored
/// coordinates `u, v` (samples -1..=129; any stored sample of a deeper tile
/// lies in -0.5..=128.5).
fn dual_bilinear(cells: &[f32], u: f64, v: f64) -> f64 {
    let last = (CELLS - 3) as f64; // cell 127: its right neighbour is the last cell, 128
    let (cu, cv) = (u - 0.5, v - 0.5);
    let (u0, v0) = (cu.floor().clamp(-1.0, last), cv.floor().clamp(-1.0, last));
    let (fu, fv) = (cu - u0, cv - v0);
    let at = |i: f64, j: f64| f64::from(cells[(j + 1.0) as usize * CELLS + (i + 1.0) as usize]);
    let bottom = at(u0, v0) * (1.0 - fu) + at(u0 + 1.0, v0) * fu;
    let top = at(u0, v0 + 1.0) * (1.0 - fu) + at(u0 + 1.0, v0 + 1.0) * fu;
    bottom * (1.0 - fv) + top * fv
}

impl DetailSource {
    /// The unit octave sum (before the amplitude field) at every stored
    /// sample of a tile at depth past `data_depth`, in stored order.
    pub fn octave_sum(&self, tile: TileAddress, data_depth: u8) -> Result<Vec<f64>, SourceError> {
        let ancestor = tile.ancestor_at(data_depth).expect("deeper than the data depth");
        let field = self.amplitudes(ancestor)?;
        Ok(self.octave_sum_over(tile, data_depth, &self.node_values(ancestor, &field)))
    }

    /// [`DetailSource::octave_sum`] with the node values `nodes`.
    fn octave_sum_over(&self, tile: TileAddress, data_depth: u8, nodes: &gullies::Gullies<'_>) -> Vec<f64> {
        let first_log2 = data_depth + 7;
        let sample_log2 = tile.depth() + 7;
        let coefficient = lattice::lattice_coefficient(self.gain, self.smooth_from, data_depth, sample_log2);
        let n = TILE_STORED_SAMPLES as i64;
        let mut out = vec![0.0; (n * n) as usize];
        // The samples on the tile's own face (all but aprons past a face
        // edge): one refinement of the level above, straight into place.
        let last = 1i64 << sample_log2;
        let (gi0, gj0) =
            (i64::from(tile.x()) * i64::from(TILE_CELLS) - 1, i64::from(tile.y()) * i64::from(TILE_CELLS) - 1);
        let (i0, i1) = (gi0.max(0) as u64, (gi0 + n - 1).min(last) as u64);
        let (j0, j1) = (gj0.max(0) as u64, (gj0 + n - 1).min(last) as u64);
        let face = tile.face();
        let coarse = window(
            nodes,
            face,
            sample_log2 - 1,
            (i0 >> 1, (i1 + 1) >> 1, j0 >> 1, (j1 + 1) >> 1),
            first_log2,
            &coefficient,
        );
        for gj in j0..=j1 {
            let row = (gj as i64 - gj0) * n - gi0;
            for gi in i0..=i1 {
                out[(row + gi as i64) as usize] = coarse.refine(gi, gj);
            }
        }
        // Aprons past a face edge: the neighbouring face's own samples.
        let outside: Vec<(usize, FaceSample)> = (-1..n as i32 - 1)
            .flat_map(|j| (-1..n as i32 - 1).map(move |i| (i, j)))
            .enumerate()
            .filter(|&(_, (i, j))| {
                let (gi, gj) = (gi0 + 1 + i64::from(i), gj0 + 1 + i64::from(j));
                !(0..=last).contains(&gi) || !(0..=last).contains(&gj)
            })
            .map(|(k, (i, j))| (k, tile.sample(i, j)))
            .collect();
        let mut faces: Vec<Face> = outside.iter().map(|(_, s)| s.face).collect();
        faces.sort();
        faces.dedup();
        for face in faces {
            let on = || outside.iter().filter(|(_, s)| s.face == face).map(|(_, s)| s);
            let range = (
                on().map(|s| s.i).min().unwrap_or(0),
                on().map(|s| s.i).max().unwrap_or(0),
                on().map(|s| s.j).min().unwrap_or(0),
                on().map(|s| s.j).max().unwrap_or(0),
            );
            // Another face's nodes near its edge: white noise, as the
            // gullies give them on their own face (`gullies` says why).
            let w = window(&gullies::Noise(self.seed), face, sample_log2, range, first_log2, &coefficient);
            for (k, s) in outside.iter().filter(|(_, s)| s.face == face) {
                out[*k] = w.at(s.i, s.j);
            }
        }
        out
    }
}

/// Where the samples of one stored row (or column) fall in the data
/// ancestor's cell-centre grid: the lower cell and the fraction, computed as
/// [`dual_bilinear`] computes them.
fn dual_axis(origin: f64, step: f64) -> Vec<(usize, f64)> {
    let last = (CELLS - 3) as f64;
    (-1..TILE_STORED_SAMPLES as i32 - 1)
        .map(|i| {
            let c = origin + f64::from(i) * step - 0.5;
            let c0 = c.floor().clamp(-1.0, last);
            ((c0 + 1.0) as usize, c - c0)
        })
        .collect()
}

impl HeightSource for DetailSource {
    fn body(&self) -> &Body {
        self.inner.body()
    }

    fn tile(&self, tile: TileAddress) -> Result<SourceTile, SourceError> {
        let mut t = self.inner.tile(tile)?;
        let Some(data_depth) = self.inner.data_depth().filter(|&d| tile.depth() > d) else {
            // A data tile drawn is ground a camera may come down onto: its
            // amplitudes' peaks bound the detail under it before any tile
            // there is read (`bounds::Peaks`).
            if self.inner.data_depth() == Some(tile.depth()) && !self.has_peaks(tile) {
                self.keep_peaks(tile, &self.amplitude_cells(tile, &t));
            }
            return Ok(t);
        };
        let ancestor = tile.ancestor_at(data_depth).expect("deeper than the data depth");
        let field = self.amplitudes(ancestor)?;
        let cells = &field.cells;
        let (u0, v0, step) = DetailSource::placement(tile, ancestor);
        let sum = self.octave_sum_over(tile, data_depth, &self.node_values(ancestor, &field));
        let n = TILE_STORED_SAMPLES as usize;
        let (columns, rows) = (dual_axis(u0, step), dual_axis(v0, step));
        let mut contributed = false;
        for (j, &(v, fv)) in rows.iter().enumerate() {
            let (below, above) = (&cells[v * CELLS..], &cells[(v + 1) * CELLS..]);
            for (i, &(u, fu)) in columns.iter().enumerate() {
                let k = j * n + i;
                let bottom = f64::from(below[u]) * (1.0 - fu) + f64::from(below[u + 1]) * fu;
                let top = f64::from(above[u]) * (1.0 - fu) + f64::from(above[u + 1]) * fu;
                let amplitude = bottom * (1.0 - fv) + top * fv;
                let detail = amplitude * sum[k];
                if detail != 0.0 {
                    contributed = true;
                    t.heights[k] = (f64::from(t.heights[k]) + detail) as f32;
                }
            }
        }
        if contributed {
            t.provenance = Provenance::Invented;
            self.tighten_bounds(&t);
        }
        Ok(t)
    }

    /// Exact: [`DetailSource::synthesized_bounds`], kept per tile past
    /// the data depth. At or above it the inner source's, untouched and
    /// unnoted: a note per call told the viewer's kept bounds that 10,000
    /// tiles narrowed every frame, so it asked for them all again.
    ///
    /// Unread: the kept bounds, or else bounds from the index alone (the
    /// tile is noted for [`crate::warm_bounds`]). Exact bounds are
    /// the workers' to compute, never the frame's: up to 128 a frame from
    /// data fields already cached (a window refinement each) once kept a
    /// camera coming down fast outside the new nodes, while index bounds
    /// took a cell's twist as half its tile's range; capped by the RMS
    /// twist they do that alone, and the frames' selection took 5.5 ms at
    /// the median of a 1080p descent onto the Sierra where it takes 2.2
    /// now, every frame at 2 px either way (docs/PERFORMANCE.md).
    fn bounds(&self, tile: TileAddress, reads: Reads) -> Result<TileBounds, SourceError> {
        if self.inner.data_depth().is_none_or(|d| tile.depth() <= d) {
            return self.inner.bounds(tile, reads);
        }
        if let Some(b) = self.caches.exact(tile) {
            return Ok(self.narrowed(tile, b));
        }
        match reads {
            Reads::Allowed => {
                let b = self.synthesized_bounds(tile)?;
                Ok(self.keep_bounds(tile, b))
            }
            Reads::Never => self.loose_noted(tile),
        }
    }

    fn data_depth(&self) -> Option<u8> {
        self.inner.data_depth()
    }

    fn colour_data_depth(&self) -> Option<u8> {
        self.inner.colour_data_depth()
    }

    fn parts(&self) -> Vec<&dyn HeightSource> {
        vec![&*self.inner]
    }

    fn streaming(&self) -> Option<&dyn Streaming> {
        Some(self)
    }
}

impl DetailSource {
    /// Loose bounds from the index alone, kept and noted for warming.
    fn loose_noted(&self, tile: TileAddress) -> Result<TileBounds, SourceError> {
        if let Some(b) = self.caches.loose(tile) {
            return Ok(b);
        }
        let b = self.narrowed(tile, self.loose_bounds(tile)?);
        self.caches.keep_loose(tile, b);
        Ok(b)
    }
}

impl Streaming for DetailSource {
    /// Computes (and keeps) the exact bounds of the tiles unread bounds
    /// were loose for: shallowest first (they decide which deeper ones a
    /// frame asks for), the data tiles they read fetched in one go.
    fn warm_bounds(&self) -> usize {
        let mut wanted = self.caches.take_wanted();
        let Some(data_depth) = self.inner.data_depth() else { return 0 };
        let ancestor = |t: &TileAddress| t.ancestor_at(data_depth).expect("deeper than the data depth");
        wanted.sort_by_key(|t| (t.depth(), ancestor(t)));
        let mut fields: Vec<TileAddress> = wanted.iter().map(ancestor).collect();
        fields.sort();
        fields.dedup();
        fields.retain(|&t| !self.caches.has_field(t));
        crate::prefetch(&*self.inner, &fields);
        for &tile in &wanted {
            // An error here is the frame's to report, when it asks again.
            let _ = self.tile_bounds(tile);
        }
        self.caches.forget_loose(&wanted);
        wanted.len()
    }

    fn narrowed_bounds(&self, into: &mut Vec<TileAddress>) -> bool {
        self.caches.take_narrowed(into)
    }
}

mod bounds;
mod cache;
mod gullies;
mod lattice;

use gullies::NodeValues;
use lattice::window;
pub use lattice::{
    CALIBRATION_ROLL_OFF_64THS, ROLL_OFF_64THS, SMOOTH_BELOW_M, SMOOTH_GAIN, SMOOTH_WINDOW_GAIN,
    SMOOTH_WINDOWS_BELOW_M, calibration_ratio, rolled_off_ratio,
};
