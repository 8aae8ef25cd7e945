//! Bounds and geometric error of synthesized tiles (a child of `detail`,
//! so it reads the source's private fields and helpers).
//!
//! The key decision: bounds are computed without synthesizing the tile.
//! The realized octave nodes a few levels up bound every sample as convex
//! refinements of them, the finer octaves add at most their weights, and
//! the amplitude field's largest cell scales both; selection asks for
//! thousands of bounds a frame and can afford no tile. A tile once
//! produced narrows them to its exact range. Exact bounds still read the
//! data tile's amplitude field and refine octave windows: a frame that
//! must not wait for that takes bounds from the index alone until a worker
//! has computed them ([`HeightSource::tile_bounds_unread`],
//! [`crate::warm_bounds`]).

use super::*;
use crate::BoundsAt;
use planet_packfile::codec::stored_index;

/// Cells along a side of one block of [`Peaks`].
const PEAK_BLOCK: usize = 8;
/// Blocks along a side of the stored grid's cells.
const PEAK_BLOCKS: usize = CELLS.div_ceil(PEAK_BLOCK);
/// Values in one data tile's [`Peaks`].
pub(super) const PEAK_COUNT: usize = PEAK_BLOCKS * PEAK_BLOCKS;

/// The largest amplitude in each 8 x 8 block of a data tile's cells: a
/// bound on the detail under any part of it for a few reads, kept for
/// many more data tiles than their fields (68 KB each).
pub(super) struct Peaks(Box<[f32; PEAK_BLOCKS * PEAK_BLOCKS]>);

impl DetailSource {
    pub(super) fn has_peaks(&self, tile: TileAddress) -> bool {
        self.caches.has_peaks(tile)
    }

    /// Keeps the block peaks of data tile `tile`'s amplitude `cells`.
    pub(super) fn keep_peaks(&self, tile: TileAddress, cells: &[f32]) {
        let mut blocks = Box::new([0.0f32; PEAK_BLOCKS * PEAK_BLOCKS]);
        for (j, row) in cells.chunks_exact(CELLS).enumerate() {
            for (i, &a) in row.iter().enumerate() {
                let b = &mut blocks[j / PEAK_BLOCK * PEAK_BLOCKS + i / PEAK_BLOCK];
                *b = b.max(a);
            }
        }
        self.caches.keep_peaks(tile, Peaks(blocks));
    }

    /// The largest amplitude under `tile` (deeper than its data ancestor
    /// `ancestor`) from the ancestor's peaks, if kept: the peaks of every
    /// block holding a cell the tile's samples blend.
    fn peak_amplitude(&self, tile: TileAddress, ancestor: TileAddress) -> Option<f64> {
        let peaks = self.caches.peaks(ancestor)?;
        let Peaks(blocks) = &*peaks;
        let (u0, v0, step) = DetailSource::placement(tile, ancestor);
        // Samples -1..=129 lie at o - step ..= o + 129 step; a sample at u
        // blends cells floor(u - 0.5) and the next (cell c at index c + 1),
        // clamped to the grid as `dual_bilinear` clamps.
        let span = |o: f64| {
            let first = ((o - step - 0.5).floor() + 1.0).clamp(0.0, (CELLS - 1) as f64) as usize;
            let last = ((o + 129.0 * step - 0.5).floor() + 2.0).clamp(0.0, (CELLS - 1) as f64) as usize;
            (first / PEAK_BLOCK, last / PEAK_BLOCK)
        };
        let ((i0, i1), (j0, j1)) = (span(u0), span(v0));
        let peak = (j0..=j1)
            .flat_map(|j| (i0..=i1).map(move |i| j * PEAK_BLOCKS + i))
            .map(|k| blocks[k])
            .fold(0.0f32, f32::max);
        Some(f64::from(peak) * (1.0 + 1e-6))
    }
}

impl DetailSource {
    /// A range holding the unit octave sum at every stored sample of a tile
    /// past the data depth: the range of the nodes [`WINDOW_LEVELS_UP`]
    /// levels up that cover the tile (every sample is a convex refinement
    /// of them), widened by the coefficients of the finer octaves. Near the
    /// ground the realized coarse octaves, not their worst case, then bound
    /// the tile, so the camera stands outside nearby nodes. Tiles on a face
    /// edge (their aprons lie on other faces) take the worst case.
    pub(super) fn octave_range(&self, tile: TileAddress, data_depth: u8, field: &DataField) -> (f64, f64) {
        let (up_to, _) = self.coefficient_sums(data_depth, tile.depth());
        let depth = tile.depth();
        let level = data_depth.max(depth.saturating_sub(WINDOW_LEVELS_UP));
        let edge = tile.tiles_per_face_edge() - 1;
        if level + 1 >= depth || tile.x() == 0 || tile.y() == 0 || tile.x() == edge || tile.y() == edge {
            return (-up_to, up_to);
        }
        let (first_log2, sample_log2) = (data_depth + 7, depth + 7);
        let coefficient = lattice::lattice_coefficient(self.gain, self.smooth_from, data_depth, sample_log2);
        let shift = depth - level;
        let cells = u64::from(TILE_CELLS);
        let (gi0, gj0) = (u64::from(tile.x()) * cells - 1, u64::from(tile.y()) * cells - 1);
        let span = |g: u64| (g >> shift, ((g + cells + 2) >> shift) + 1);
        let ((i0, i1), (j0, j1)) = (span(gi0), span(gj0));
        let ancestor = tile.ancestor_at(data_depth).expect("deeper than the data depth");
        let nodes = self.node_values(ancestor, field);
        let w = window(&nodes, tile.face(), level + 7, (i0, i1, j0, j1), first_log2, &coefficient);
        let low = w.values.iter().copied().fold(f64::INFINITY, f64::min);
        let high = w.values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let fine: f64 = (level + 8..sample_log2).map(coefficient).sum();
        (low - fine, high + fine)
    }
}

impl DetailSource {
    /// The most the ground with detail can move at any sample of a tile at
    /// `depth` (past `data_depth`) when every data sample moves by at most
    /// `delta` metres, as a region patch's requantisation moves the
    /// samples of the tiles it rewrites outside its box: the data itself;
    /// the amplitude, as a cell's relief moves (its twist by `delta` at
    /// most, its rise by `2 sqrt(2) delta` times the share) times the
    /// octave sum's worst case; and the amplitude's most (the cap) times
    /// what the octaves' node values move as the fall lines turn
    /// (`gullies::turn_bound`, each octave at its coefficient). Infinite
    /// for a law without a cap.
    pub fn requantisation_bound(&self, data_depth: u8, depth: u8, delta: f64) -> f64 {
        let spacing = self.inner.body().sample_spacing_m(data_depth);
        let share = crate::roughness::relief_share_of_rise(spacing);
        let relief_moves = delta * 1f64.max(2.0 * std::f64::consts::SQRT_2 * share);
        let amplitude_moves = self.first * relief_moves * self.octave_sum_bound(data_depth);
        let turns: f64 = (data_depth + 1..=depth)
            .map(|e| {
                // Octave e's nodes lie on the lattice of depth e - 1.
                let levels = u32::from(e - 1 - data_depth);
                self.octave_coefficient(data_depth, e) * gullies::turn_bound(levels, delta, spacing)
            })
            .sum();
        delta + amplitude_moves + self.first * self.twist_cap * turns
    }
}

/// How a tile's bounds take the unit octave sum over it.
#[derive(Clone, Copy)]
enum Octaves {
    /// Refined a few levels up ([`DetailSource::octave_range`]).
    Windowed,
    /// The sum of the coefficients, its worst case: no window to refine.
    WorstCase,
}

/// How many levels above a synthesized tile its bounds refine the octave
/// lattice to: two leave the two finest octaves (at most 1 + 1/gain of the
/// tile's own coefficient) to their worst case, for a window of about 35 x
/// 35 nodes; five, as before, left twenty times it, a range metres wide
/// over a tile of centimetres.
const WINDOW_LEVELS_UP: u8 = 2;

impl DetailSource {
    /// Once a synthesized tile has been produced its samples give its exact
    /// range, far inside the worst case of the octaves it adds (tens of
    /// metres near a summit at depth 20, where the camera stands 2 m up):
    /// its bounds narrow to it when read. Without this a camera near the
    /// ground stood inside the bounds of every node under it at any depth,
    /// so their projected error was infinite and no budget sufficed. Every
    /// drawn vertex is a convex blend of samples, so the range bounds them;
    /// the kept bounds stay as computed (a child's loose ones build on them,
    /// and its samples between its parent's are no blend of them).
    pub(super) fn tighten_bounds(&self, tile: &SourceTile) {
        let (lo, hi) = tile
            .heights
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &h| (lo.min(f64::from(h)), hi.max(f64::from(h))));
        let slack = 1e-3 + 1e-6 * lo.abs().max(hi.abs());
        let (lo, hi) = (lo - slack, hi + slack);
        self.caches.keep_range(tile.tile, (lo, hi));
    }

    /// The inner bounds (narrowed to the data under the tile where the
    /// inner source resamples its data) widened by the largest amplitude
    /// over the tile's cells times the range of the octave sum over it; the
    /// error adds the octaves the tile omits and the two its drawn lattice
    /// (every fourth sample) cannot resolve.
    pub fn synthesized_bounds(&self, tile: TileAddress) -> Result<TileBounds, SourceError> {
        Ok(self.bounds_over(tile, &|ancestor| self.amplitudes(ancestor), Octaves::Windowed)?.0)
    }

    /// [`DetailSource::synthesized_bounds`] with the data tile's field from
    /// `field` (the cache's, read or not), the octave sum bounded as
    /// `octaves` says; with the largest amplitude over the tile.
    fn bounds_over(
        &self,
        tile: TileAddress,
        field: &dyn Fn(TileAddress) -> Result<Arc<DataField>, SourceError>,
        octaves: Octaves,
    ) -> Result<(TileBounds, f64), SourceError> {
        let mut b = self.inner.tile_bounds(tile)?;
        let Some(data_depth) = self.inner.data_depth().filter(|&d| tile.depth() > d) else { return Ok((b, 0.0)) };
        let ancestor = tile.ancestor_at(data_depth).expect("deeper than the data depth");
        let read = match field(ancestor) {
            Ok(field) => Some(field),
            // A data tile that cannot be read (torn, corrupt) must not stop
            // selection, which never decoded before detail.
            Err(SourceError::Pack(_)) => None,
            Err(e) => return Err(e),
        };
        let (low_amplitude, amplitude) = match &read {
            Some(field) => {
                let (u0, v0, step) = DetailSource::placement(tile, ancestor);
                // Both fields are bilinear between grid lines (the heights'
                // at samples, the amplitudes' at cell centres), so over the
                // tile's rectangle their extremes lie where its edges and
                // the grid lines meet: its corners, its crossings of grid
                // lines and the grid nodes inside it.
                let stops = |o: f64, offset: f64| -> Vec<f64> {
                    let (lo, hi) = (o - step, o + 129.0 * step);
                    let inner = ((lo - offset).floor() as i32 + 1..=(hi - offset).ceil() as i32 - 1)
                        .map(|k| f64::from(k) + offset);
                    std::iter::once(lo).chain(inner).chain(std::iter::once(hi)).collect()
                };
                let (us_h, vs_h) = (stops(u0, 0.0), stops(v0, 0.0));
                let heights = |i: i32, j: i32| f64::from(field.heights[stored_index(i, j)]);
                let cells = |i: i32, j: i32| f64::from(field.cells[(j + 1) as usize * CELLS + (i + 1) as usize]);
                if self.resamples_data {
                    let (low, high) =
                        range_over(&us_h, &vs_h, 0.0, |u, v| crate::bilinear(&field.heights, u, v), heights);
                    // The f32 rounding of a resampled sample, with room.
                    let slack = 1e-3 + 1e-6 * low.abs().max(high.abs());
                    b.min_elevation = b.min_elevation.max(low - slack);
                    b.max_elevation = b.max_elevation.min(high + slack);
                }
                let (us, vs) = (stops(u0, 0.5), stops(v0, 0.5));
                let (low, high) = range_over(&us, &vs, 0.5, |u, v| dual_bilinear(&field.cells, u, v), cells);
                // Rounding of the blend's weights, relative.
                ((low * (1.0 - 1e-9)).max(0.0), high * (1.0 + 1e-9))
            }
            None => (0.0, self.amplitude_from_index(ancestor)?),
        };
        if amplitude == 0.0 {
            return Ok((b, 0.0));
        }
        let range = match (octaves, &read) {
            (Octaves::Windowed, Some(field)) => self.octave_range(tile, data_depth, field),
            _ => {
                let (up_to, _) = self.coefficient_sums(data_depth, tile.depth());
                (-up_to, up_to)
            }
        };
        Ok((self.widen_by_detail(b, tile, data_depth, (low_amplitude, amplitude), range), amplitude))
    }

    /// A bound on every cell of the amplitude field of data tile
    /// `ancestor` from its index range alone: a cell's relief is at most
    /// [`crate::roughness::largest_cell_relief`] of the range (half
    /// of it while relief was twist alone; since #49 a share of the rise,
    /// up to 0.88 of it), and never more than the cap. (Without the cap a
    /// mountain tile's 1,000 m of range bounded its detail by 500 m of
    /// twist where the cap allows a few: a camera coming down onto ground
    /// not yet read stood inside every new node, and the viewer's descent
    /// onto the Sierra read hundreds of pixels of error for seconds.)
    fn amplitude_from_index(&self, ancestor: TileAddress) -> Result<f64, SourceError> {
        let a = self.inner.tile_bounds(ancestor)?;
        let spacing = self.inner.body().sample_spacing_m(ancestor.depth());
        let relief = crate::roughness::largest_cell_relief(a.max_elevation - a.min_elevation, spacing);
        Ok(self.first * relief.min(self.twist_cap) * (1.0 + 1e-6))
    }

    /// Bounds of a synthesized tile that read no tile: the inner bounds
    /// widened by [`DetailSource::amplitude_from_index`] times the octave
    /// sum's worst case (what an unreadable data tile on a face edge gets).
    /// A few index lookups, where the exact bounds read the data tile and
    /// refine octave windows: what a frame gives until a worker has
    /// computed the exact ones.
    pub(super) fn loose_bounds(&self, tile: TileAddress) -> Result<TileBounds, SourceError> {
        let b = self.inner.tile_bounds(tile)?;
        let Some(data_depth) = self.inner.data_depth().filter(|&d| tile.depth() > d) else { return Ok(b) };
        let ancestor = tile.ancestor_at(data_depth).expect("deeper than the data depth");
        // A data tile already read (a tile or an exact bound under it was
        // made) gives its amplitudes over the tile for a few thousand cell
        // reads at most. The index's range only bounds a cell's twist by
        // half the tile's range: on a law-less lidar DEM (no cap), 130 m of
        // amplitude where the cells have centimetres, so a camera 100 m up
        // stood inside every new node beside it (1,000 px for a frame).
        let cached = self.caches.field(ancestor);
        let (mut loose, amplitude) = match cached {
            Some(field) => self.bounds_over(tile, &|_| Ok(field.clone()), Octaves::WorstCase)?,
            None => {
                // Both bound every cell under the tile: the smaller does.
                let from_index = self.amplitude_from_index(ancestor)?;
                let amplitude = self.peak_amplitude(tile, ancestor).map_or(from_index, |peak| peak.min(from_index));
                if amplitude == 0.0 {
                    return Ok(b);
                }
                let (up_to, _) = self.coefficient_sums(data_depth, tile.depth());
                (self.widen_by_detail(b, tile, data_depth, (0.0, amplitude), (-up_to, up_to)), amplitude)
            }
        };
        // An ancestor's exact bounds, where kept, hold the tile too but for
        // the octaves the tile adds: its data surface lies within the
        // ancestor's, its amplitudes among the ancestor's, and its unit
        // octave sum within the ancestor's range widened by each octave
        // added since. So a camera coming down onto ground it has not read
        // yet stands outside the new nodes past what it has, not inside a
        // data tile's whole range.
        let (mut below, mut added) = (tile, 0.0);
        while let Some(ancestor) = below.parent().filter(|a| a.depth() > data_depth) {
            added += self.octave_coefficient(data_depth, below.depth());
            if let Some(a) = self.caches.exact(ancestor) {
                let own = amplitude * added * (1.0 + 1e-9);
                let slack = 1e-3 + 1e-6 * a.min_elevation.abs().max(a.max_elevation.abs());
                loose.min_elevation = loose.min_elevation.max(a.min_elevation - own - slack);
                loose.max_elevation = loose.max_elevation.min(a.max_elevation + own + slack);
                break;
            }
            below = ancestor;
        }
        Ok(loose)
    }

    /// `b` widened by detail whose amplitude lies in `(low_amplitude,
    /// amplitude)` and whose unit octave sum lies in `(low, high)`, with the
    /// error of the octaves the tile omits and the two its drawn lattice
    /// cannot resolve.
    fn widen_by_detail(
        &self,
        mut b: TileBounds,
        tile: TileAddress,
        data_depth: u8,
        (low_amplitude, amplitude): (f64, f64),
        (low, high): (f64, f64),
    ) -> TileBounds {
        let (_, beyond) = self.coefficient_sums(data_depth, tile.depth());
        // The product of the two ranges: its extremes are products of their
        // ends. The f32 rounding of a sample near the extremes is the slack,
        // with room to spare.
        let ends = [low_amplitude * low, low_amplitude * high, amplitude * low, amplitude * high];
        let lowest = ends.iter().copied().fold(f64::INFINITY, f64::min);
        let highest = ends.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let slack = 1e-3 + 1e-6 * b.min_elevation.abs().max(b.max_elevation.abs());
        b.min_elevation += lowest - lowest.abs() * 1e-9 - slack;
        b.max_elevation += highest + highest.abs() * 1e-9 + slack;
        let own = self.octave_coefficient(data_depth, tile.depth());
        let previous =
            if tile.depth() > data_depth + 1 { self.octave_coefficient(data_depth, tile.depth() - 1) } else { 0.0 };
        b.geometric_error += amplitude * (beyond + own + 0.5 * previous);
        b.provenance = Provenance::Invented;
        b
    }
}

/// The extremes of a field that is bilinear between grid lines over the
/// rectangle `us` x `vs` (its edges, then its crossings of grid lines at
/// `k + offset`, ascending, then its far edge): `at` evaluates the field on
/// the rectangle's edges, and inside it the extremes can only lie at grid
/// nodes, whose values `node` reads by index without a blend (the blend at
/// a node is that value exactly). A tile one level past the data depth
/// crosses 64 grid lines each way: 4,225 blends became 260.
fn range_over(
    us: &[f64],
    vs: &[f64],
    offset: f64,
    at: impl Fn(f64, f64) -> f64,
    node: impl Fn(i32, i32) -> f64,
) -> (f64, f64) {
    let (mut low, mut high) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut take = |h: f64| (low, high) = (low.min(h), high.max(h));
    let (first_v, last_v) = (vs[0], vs[vs.len() - 1]);
    for &u in us {
        take(at(u, first_v));
        take(at(u, last_v));
    }
    let (first_u, last_u) = (us[0], us[us.len() - 1]);
    let columns: Vec<i32> = us[1..us.len() - 1].iter().map(|&u| (u - offset) as i32).collect();
    for &v in &vs[1..vs.len() - 1] {
        take(at(first_u, v));
        take(at(last_u, v));
        let j = (v - offset) as i32;
        for &i in &columns {
            take(node(i, j));
        }
    }
    (low, high)
}

/// Narrows worst-case bounds to a produced tile's exact range (kept or
/// computed afresh after the cache's wipe: one rule for both).
pub(super) fn narrow(b: &mut TileBounds, (lo, hi): (f64, f64)) {
    b.min_elevation = b.min_elevation.max(lo);
    b.max_elevation = b.max_elevation.min(hi);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reading grid nodes by index gives exactly the extremes the blend at
    /// every stop gave, for both fields' grids and rectangles that start
    /// on, between and before grid lines.
    #[test]
    fn the_range_over_a_rectangle_reads_inner_nodes_without_blending() {
        let heights: Vec<f32> =
            (0..TILE_STORED_SAMPLES * TILE_STORED_SAMPLES).map(|k| ((k * 7919) % 1013) as f32 - 500.0).collect();
        let cells: Vec<f32> = (0..CELLS * CELLS).map(|k| ((k * 104_729) % 997) as f32 * 0.01).collect();
        // Where tiles one, two, three and seven levels down lie in a data
        // tile (`DetailSource::placement`: the apron starts a step before).
        for (o, step) in
            [(0.0f64, 0.5f64), (64.5, 0.5), (32.25, 0.25), (96.75, 0.25), (48.375, 0.125), (127.0, 1.0 / 128.0)]
        {
            for offset in [0.0f64, 0.5] {
                let (lo, hi) = (o - step, o + 129.0 * step);
                let inner =
                    ((lo - offset).floor() as i32 + 1..=(hi - offset).ceil() as i32 - 1).map(|k| f64::from(k) + offset);
                let stops: Vec<f64> = std::iter::once(lo).chain(inner).chain(std::iter::once(hi)).collect();
                let blend = |u: f64, v: f64| {
                    if offset == 0.0 { crate::bilinear(&heights, u, v) } else { dual_bilinear(&cells, u, v) }
                };
                let node = |i: i32, j: i32| {
                    if offset == 0.0 {
                        f64::from(heights[stored_index(i, j)])
                    } else {
                        f64::from(cells[(j + 1) as usize * CELLS + (i + 1) as usize])
                    }
                };
                let mut every = (f64::INFINITY, f64::NEG_INFINITY);
                for &v in &stops {
                    for &u in &stops {
                        let h = blend(u, v);
                        every = (every.0.min(h), every.1.max(h));
                    }
                }
                assert_eq!(
                    range_over(&stops, &stops, offset, blend, node),
                    every,
                    "o {o}, step {step}, offset {offset}"
                );
            }
        }
    }
}
