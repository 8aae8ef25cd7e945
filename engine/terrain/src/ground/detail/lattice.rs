//! The octave lattices of [`super::DetailSource`]: white noise at the
//! nodes of the cube's sample lattices, refined level by level, and the one
//! rule for each octave's coefficient.
//!
//! The key decision: the coefficients are products of exact literals taken
//! in one order ([`octave_coefficient`]), so every machine, every tile and
//! every bound computes the same bits for the same octave. Octaves continue
//! the data's roughness law (`gain` per level) only down to samples of
//! [`SMOOTH_BELOW_M`]; finer ones fall at [`SMOOTH_GAIN`] per level, as a
//! smooth surface's do. A fractal continued to millimetres (`H` about 0.8)
//! is rougher in proportion the closer one looks: a node's error shrank
//! slower than the node, so 2 m above the ground no cut could meet a pixel
//! target (a node at the deepest depth still erred by centimetres). With
//! the break at 1 m the demo's Alps needed 5,000 nodes for 2 px, at 4 m
//! 4,600, at 8 m under 4,096 (docs/PERFORMANCE.md). The shading's
//! micro-relief, not the geometry, carries the finer texture.

use crate::geo::address::FaceSample;
use crate::geo::face::Face;

/// Octaves whose samples are finer than this many metres (wavelengths
/// under 32 m) fall at [`SMOOTH_GAIN`] per level instead of the data's gain.
pub const SMOOTH_BELOW_M: f64 = 8.0;

/// The per-level amplitude ratio of octaves finer than [`SMOOTH_BELOW_M`]:
/// `2^-2`, a surface whose slopes converge (an error per node that halves
/// faster than the node).
pub const SMOOTH_GAIN: f64 = 0.25;

/// The ratio of octave `depth`'s coefficient to octave `depth - 1`'s.
fn octave_ratio(gain: f64, smooth_from: u8, depth: u8) -> f64 {
    if depth >= smooth_from { SMOOTH_GAIN } else { gain }
}

/// The coefficient of octave `depth` (new at that depth) in the unit octave
/// sum of data at `data_depth`: 1 for the first octave, then one product of
/// [`octave_ratio`] per level, in depth order.
pub(super) fn octave_coefficient(gain: f64, smooth_from: u8, data_depth: u8, depth: u8) -> f64 {
    let mut c = 1.0;
    for e in data_depth + 2..=depth {
        c *= octave_ratio(gain, smooth_from, e);
    }
    c
}

/// Sums of the octave coefficients up to `depth` and beyond it (to
/// `MAX_DEPTH`): the worst case of the octave sum a tile holds, and of what
/// it omits.
pub(super) fn coefficient_sums(gain: f64, smooth_from: u8, data_depth: u8, depth: u8) -> (f64, f64) {
    let mut c = 1.0;
    let (mut up_to, mut beyond) = (0.0, 0.0);
    for e in data_depth + 1..=crate::geo::address::MAX_DEPTH {
        if e > data_depth + 1 {
            c *= octave_ratio(gain, smooth_from, e);
        }
        if e <= depth { up_to += c } else { beyond += c }
    }
    (up_to, beyond)
}

/// The coefficient of the new nodes of the lattice of `cells_log2` (its
/// depth plus 7) in a tile whose samples lie on `sample_log2`: the octave
/// one deeper than the lattice's, and none on the sample lattice itself.
pub(super) fn lattice_coefficient(gain: f64, smooth_from: u8, data_depth: u8, sample_log2: u8) -> impl Fn(u8) -> f64 {
    move |log2: u8| {
        if log2 >= sample_log2 { 0.0 } else { octave_coefficient(gain, smooth_from, data_depth, log2 - 6) }
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The node's integer cube point: the same integers from every face that
/// holds the node (the integer twin of `cube::cube_point`).
fn cube_integers(s: FaceSample) -> [i64; 3] {
    let n = 1i64 << s.cells_log2;
    let (a, b) = (2 * s.i as i64 - n, 2 * s.j as i64 - n);
    match s.face.index() {
        0 => [n, a, b],
        1 => [-a, n, b],
        2 => [-n, -a, b],
        3 => [a, -n, b],
        4 => [-b, a, n],
        _ => [b, a, -n],
    }
}

/// White noise at a lattice node: -1 or +1, each with probability one half.
///
/// Why signs, not a uniform value: the error the cut reads for synthesized
/// ground is the octaves' worst case, and a sign's worst case is its root
/// mean square, where a uniform value in [-1, 1) is a root mean square of
/// 1/sqrt(3) under the same worst case of 1. The amplitude is set so the
/// roughness (a root mean square) continues the data's law, so with signs
/// the same roughness carries a worst case sqrt(3) times smaller: nodes
/// over real mountains erred 1.7 times less and the cut over the Sierra
/// met its target within the default budget (docs/PERFORMANCE.md). Summed
/// over the octaves the refinement blends, the ground is no less varied.
pub(super) fn node_noise(seed: u64, s: FaceSample) -> f64 {
    let [x, y, z] = cube_integers(s);
    let mut h = mix(seed ^ u64::from(s.cells_log2).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    for c in [x, y, z] {
        h = mix(h ^ (c as u64).wrapping_add(0x632b_e59b_d9b4_e019));
    }
    if h >> 63 == 1 { 1.0 } else { -1.0 }
}

/// Node values of one face's lattice at one level over an index window.
pub(super) struct Window {
    i0: u64,
    j0: u64,
    width: usize,
    pub(super) values: Vec<f64>,
}

impl Window {
    pub(super) fn at(&self, i: u64, j: u64) -> f64 {
        self.values[(j - self.j0) as usize * self.width + (i - self.i0) as usize]
    }

    /// The refinement of this (coarser) window at a finer node: weights 0,
    /// 1/2, 1 only, one-dimensional wherever one index is even.
    pub(super) fn refine(&self, i: u64, j: u64) -> f64 {
        let (ci, cj) = (i >> 1, j >> 1);
        match (i & 1, j & 1) {
            (0, 0) => self.at(ci, cj),
            (1, 0) => self.at(ci, cj) * 0.5 + self.at(ci + 1, cj) * 0.5,
            (0, 1) => self.at(ci, cj) * 0.5 + self.at(ci, cj + 1) * 0.5,
            _ => {
                let bottom = self.at(ci, cj) * 0.5 + self.at(ci + 1, cj) * 0.5;
                let top = self.at(ci, cj + 1) * 0.5 + self.at(ci + 1, cj + 1) * 0.5;
                bottom * 0.5 + top * 0.5
            }
        }
    }
}

/// The octave sum's node values on `face`'s lattice of `cells_log2`
/// (depth + 7) over nodes `i0..=i1, j0..=j1`. Octaves start on the data
/// depth's lattice; `coefficient(level)` is the octave coefficient of the
/// nodes of that lattice (0 on the sample level itself).
pub(super) fn window(
    seed: u64,
    face: Face,
    cells_log2: u8,
    (i0, i1, j0, j1): (u64, u64, u64, u64),
    first_log2: u8,
    coefficient: &dyn Fn(u8) -> f64,
) -> Window {
    let width = (i1 - i0 + 1) as usize;
    let mut values = Vec::with_capacity(width * (j1 - j0 + 1) as usize);
    let c = coefficient(cells_log2);
    if cells_log2 == first_log2 {
        for j in j0..=j1 {
            for i in i0..=i1 {
                let new = (i | j) & 1 == 1;
                values.push(if new { c * node_noise(seed, FaceSample { face, cells_log2, i, j }) } else { 0.0 });
            }
        }
        return Window { i0, j0, width, values };
    }
    let coarse =
        window(seed, face, cells_log2 - 1, (i0 >> 1, (i1 + 1) >> 1, j0 >> 1, (j1 + 1) >> 1), first_log2, coefficient);
    for j in j0..=j1 {
        for i in i0..=i1 {
            let mut v = coarse.refine(i, j);
            // Only nodes new at this level take its octave: the coarser
            // level's nodes keep their values, so a tile's samples at its
            // parent's even samples (its whole drawn lattice) are the
            // parent's, bit for bit.
            if c != 0.0 && (i | j) & 1 == 1 {
                v += c * node_noise(seed, FaceSample { face, cells_log2, i, j });
            }
            values.push(v);
        }
    }
    Window { i0, j0, width, values }
}
