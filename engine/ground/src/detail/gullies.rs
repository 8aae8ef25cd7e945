//! The octaves' node values: gullies and spurs running down the data's
//! slopes where it has them, white noise elsewhere.
//!
//! The key decision: the shape of real ground lives in the *node values*,
//! not in the lattice. Every octave keeps the refinement scheme of
//! `lattice.rs` (so a child still refines its parent bit for bit, shared
//! edges agree and every bound that takes a node as at most its coefficient
//! holds), but a new node's unit value, instead of a sign drawn from a hash
//! alone, is a one-dimensional profile *across* the slope of the data cell
//! it lies in: constant down the slope, varying along the contour. Isotropic
//! noise of the right variance drew a field of closed bumps and hollows
//! (over the Sierra's SRTM averaged by 8 and re-synthesized, 8.9 peaks and
//! pits a km² against the real ground's 2.5, docs/ground.md); profiles
//! across the fall line draw ribs and furrows that drain.
//!
//! Each of the four data cells around a node (the amplitude's dual grid)
//! gives a profile in its own frame: its contour direction, a phase hashed
//! from the cell and the level, and signs hashed at whole wavelengths,
//! blended by smoothstep. The node takes their bilinear blend, so the value
//! is continuous, at most 1 in magnitude, and a function of the node and the
//! data cells alone: every tile that computes a node computes the same bits
//! (dyadic positions, the same operations in the same order, no
//! transcendental functions). Two places get white noise instead:
//!
//! * nodes within two cells of their data tile's edge: there a node is
//!   computed by tiles of two data tiles (or two faces, each in its own
//!   frame), and only the hash is the same from both; the profile fades in
//!   over the next cell;
//! * flat cells (under [`FULL_GULLIES_SLOPE`]), where no fall line orients
//!   anything.

use planet_geo::address::{FaceSample, TILE_CELLS, TileAddress};

use super::CELLS;
use super::lattice::{mix, node_noise};

/// The slope (rise over run) from which a cell's nodes are all profile;
/// below it they blend toward white noise in proportion.
pub const FULL_GULLIES_SLOPE: f64 = 0.04;

/// White noise's share where it stands in for the profiles: their blend's
/// root mean square (a profile's is about 0.83, and four blended by
/// bilinear weights keep about two thirds of it), so the bands along data
/// tile edges are no rougher than the ground beside them. At full scale
/// they drew a row of spikes along every edge (docs/ground.md).
const NOISE_SCALE: f64 = 0.55;

/// Cells along a side of a block sharing one furrow pattern.
const BLOCK_CELLS: u64 = 4;

/// The profile's wavelength across the slope, in nodes of its level.
const WAVELENGTH_NODES: f64 = 2.0;

/// Nodes this close to their data tile's edge (in data cells) take white
/// noise alone: tiles of the tile across the edge (or on the face across
/// it) compute nodes up to a cell past it, and the surplus of a node reads
/// its coarse neighbours, up to one more cell out.
const NOISE_BAND_CELLS: f64 = 2.0;

/// What gives an octave's new nodes their unit values.
pub(super) trait NodeValues {
    /// The unit value (magnitude at most 1) of node `s`.
    fn value(&self, s: FaceSample) -> f64;
}

/// White noise: a sign hashed from the node alone.
pub(super) struct Noise(pub(super) u64);

impl NodeValues for Noise {
    fn value(&self, s: FaceSample) -> f64 {
        NOISE_SCALE * node_noise(self.0, s)
    }
}

/// The most a node value of the octave on the lattice `levels` finer than
/// the data's can change when every data sample moves by at most `delta`
/// metres (`spacing_m` apart): a cell's mean gradient moves by at most
/// `2 sqrt(2) delta`, so how fully it is followed moves by that over the
/// full-gully slope's rise, and its fall line turns by at most twice that
/// over its rise, which moves a profile (slope at most 3 a wavelength) at
/// most `3 |d| turn / wavelength` at a node `|d|` cells (at most 4.25)
/// from its block's centre; never more than 2 (a value is at most 1).
/// What a patch's requantisation can move the furrows by (`patch`
/// tests).
pub(super) fn turn_bound(levels: u32, delta: f64, spacing_m: f64) -> f64 {
    let gradient = 2.0 * std::f64::consts::SQRT_2 * delta;
    let full_rise = spacing_m * FULL_GULLIES_SLOPE;
    let follow = gradient / full_rise * (1.0 + NOISE_SCALE);
    let wavelength = WAVELENGTH_NODES / (1u64 << levels.min(60)) as f64;
    let farthest = BLOCK_CELLS as f64 / 2.0 * std::f64::consts::SQRT_2 + std::f64::consts::SQRT_2;
    let turn = 3.0 * farthest * (2.0 * gradient / full_rise) / wavelength;
    (follow + turn).min(2.0)
}

/// A data cell's fall line, as its nodes follow it.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Contour {
    /// The contour direction: a unit vector in face-index axes,
    /// perpendicular to the cell's mean gradient.
    along: [f32; 2],
    /// How fully the cell's nodes follow it: 0 on the flat, 1 from
    /// [`FULL_GULLIES_SLOPE`].
    follow: f32,
}

/// Each cell's [`Contour`] over a stored grid of heights at `spacing_m`.
pub(super) fn contours(heights: &[f32], spacing_m: f64) -> Vec<Contour> {
    let n = CELLS + 1;
    let mut out = Vec::with_capacity(CELLS * CELLS);
    for cj in 0..CELLS {
        for ci in 0..CELLS {
            let h = |di: usize, dj: usize| f64::from(heights[(cj + dj) * n + ci + di]);
            let [gx, gy] = crate::roughness::cell_gradient([h(0, 0), h(1, 0), h(0, 1), h(1, 1)]);
            let rise = (gx * gx + gy * gy).sqrt();
            if rise == 0.0 || !rise.is_finite() {
                out.push(Contour::default());
                continue;
            }
            let follow = (rise / spacing_m / FULL_GULLIES_SLOPE).min(1.0);
            out.push(Contour { along: [(-gy / rise) as f32, (gx / rise) as f32], follow: follow as f32 });
        }
    }
    out
}

/// `x.floor()` for `|x| < 2^52` by a conversion, not a call: the same
/// value (an integer below 2^53 is exact both ways), and the profiles take
/// several a node.
fn floor(x: f64) -> f64 {
    let whole = x as i64 as f64;
    if whole > x { whole - 1.0 } else { whole }
}

/// A block of cells at one level: its key and its centre (data tile cell
/// units).
type Block = (u64, (f64, f64));

/// Gully profiles over one data tile's cells.
pub(super) struct Gullies<'a> {
    seed: u64,
    /// The data-depth tile whose cells orient the nodes.
    data_tile: TileAddress,
    /// [`contours`] of its stored grid.
    contours: &'a [Contour],
    /// The hash of the seed, the data tile's face and depth: each block's
    /// key is one mix of it with the block and the level.
    base: u64,
    /// The data tile's first cell on its face, along `i` and `j`.
    origin: (u64, u64),
}

impl<'a> Gullies<'a> {
    pub(super) fn new(seed: u64, data_tile: TileAddress, contours: &'a [Contour]) -> Gullies<'a> {
        let mut base = mix(seed ^ 0x6a09_e667_f3bc_c908);
        for k in [u64::from(data_tile.face().index()), u64::from(data_tile.depth())] {
            base = mix(base ^ k.wrapping_add(0x9e37_79b9_7f4a_7c15));
        }
        let cells = u64::from(TILE_CELLS);
        let origin = (u64::from(data_tile.x()) * cells, u64::from(data_tile.y()) * cells);
        Gullies { seed, data_tile, contours, base, origin }
    }
}

impl NodeValues for Gullies<'_> {
    fn value(&self, s: FaceSample) -> f64 {
        let noise = || NOISE_SCALE * node_noise(self.seed, s);
        if s.face != self.data_tile.face() {
            return noise();
        }
        // The node in the data tile's cell units: dyadic, so exact.
        let shift = s.cells_log2 - self.data_tile.depth() - 7;
        let scale = 1.0 / (1u64 << shift) as f64;
        let cells = f64::from(TILE_CELLS);
        let (u, v) = (s.i as f64 * scale - self.origin.0 as f64, s.j as f64 * scale - self.origin.1 as f64);
        let inside = u.min(cells - u).min(v).min(cells - v);
        let fade = (inside - NOISE_BAND_CELLS).clamp(0.0, 1.0);
        if fade == 0.0 {
            return noise();
        }
        // The four cells whose centres surround the node (cell c's centre at
        // c + 0.5, at index c + 1), bilinear weights.
        let (cu, cv) = (u - 0.5, v - 0.5);
        let (c0, r0) = (floor(cu), floor(cv));
        let (fu, fv) = (cu - c0, cv - r0);
        let per_wavelength = 1.0 / (WAVELENGTH_NODES * scale);
        let (mut profile, mut follow) = (0.0, 0.0);
        // Neighbouring cells mostly share a block: its key is made once.
        let mut last: Option<((u64, u64), Block)> = None;
        for (dc, dr, weight) in [
            (0.0, 0.0, (1.0 - fu) * (1.0 - fv)),
            (1.0, 0.0, fu * (1.0 - fv)),
            (0.0, 1.0, (1.0 - fu) * fv),
            (1.0, 1.0, fu * fv),
        ] {
            let (c, r) = (c0 + dc, r0 + dr);
            let Contour { along: [tx, ty], follow: strength } =
                self.contours[(r + 1.0) as usize * CELLS + (c + 1.0) as usize];
            if strength == 0.0 {
                continue;
            }
            let (tx, ty, strength) = (f64::from(tx), f64::from(ty), f64::from(strength));
            let place = self.block_of(c, r);
            let (key, (au, av)) = match last {
                Some((p, block)) if p == place => block,
                _ => {
                    let block = self.block(place, s.cells_log2);
                    last = Some((place, block));
                    block
                }
            };
            let across = ((u - au) * tx + (v - av) * ty) * per_wavelength;
            profile += weight * strength * cross_profile(key, across);
            follow += weight * strength;
        }
        let follow = follow * fade;
        if follow >= 1.0 { profile * fade } else { profile * fade + noise() * (1.0 - follow) }
    }
}

impl Gullies<'_> {
    /// The block (on the face) holding cell `(c, r)` of the data tile.
    fn block_of(&self, c: f64, r: f64) -> (u64, u64) {
        let (x, y) = self.origin;
        ((x + c as u64) / BLOCK_CELLS, (y + r as u64) / BLOCK_CELLS)
    }

    /// Block `(bx, by)` at one level: its key (from the block's place on its
    /// face and the level, so no two blocks or levels share their phases
    /// and signs) and its centre in the data tile's cell units, the origin
    /// every cell of it measures its profile from. A block's cells share
    /// one furrow pattern, each turned to its own fall line, so a furrow
    /// runs on across cells instead of breaking at each.
    fn block(&self, (bx, by): (u64, u64), cells_log2: u8) -> Block {
        let (x, y) = self.origin;
        let centre = |b: u64, origin: u64| (b * BLOCK_CELLS) as f64 + 0.5 * BLOCK_CELLS as f64 - origin as f64;
        let place = bx.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ by.wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
        let key = mix(self.base ^ place ^ u64::from(cells_log2).wrapping_mul(0x1656_67b1_9e37_79f9));
        (key, (centre(bx, x), centre(by, y)))
    }
}

/// A cell's profile at `across` wavelengths from its centre: signs hashed
/// at whole wavelengths (offset by a hashed phase), blended by smoothstep;
/// within [-1, 1].
fn cross_profile(cell: u64, across: f64) -> f64 {
    let phase = (cell >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
    let at = across + phase;
    let whole = floor(at);
    let f = at - whole;
    // One multiply and shift a sign: the key is already well mixed.
    let sign = |k: f64| {
        let z = (cell ^ (k as i64 as u64).wrapping_mul(0xd1b5_4a32_d192_ed03)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        if (z ^ (z >> 29)) >> 63 == 1 { 1.0 } else { -1.0 }
    };
    let (a, b) = (sign(whole), sign(whole + 1.0));
    a + (b - a) * (f * f * (3.0 - 2.0 * f))
}
