//! The octave lattices of [`super::DetailSource`]: the octaves' node values
//! (from `gullies.rs`) turned into surpluses over the coarser nodes,
//! refined level by level, and the one rule for each octave's coefficient.
//!
//! The key decision: the coefficients are products of exact literals taken
//! in one order ([`octave_coefficient`]), so every machine, every tile and
//! every bound computes the same bits for the same octave. Octaves continue
//! the data's roughness law (`gain` per level, rolled off as real ground
//! smooths: [`rolled_off_ratio`]) only down to samples of
//! [`SMOOTH_BELOW_M`]; finer ones fall at [`SMOOTH_GAIN`] per level, as a
//! smooth surface's do. A fractal continued to millimetres (`H` about 0.8)
//! is rougher in proportion the closer one looks: a node's error shrank
//! slower than the node, so 2 m above the ground no cut could meet a pixel
//! target (a node at the deepest depth still erred by centimetres). With
//! the break at 1 m the demo's Alps needed 5,000 nodes for 2 px, at 4 m
//! 4,600, at 8 m under 4,096 (docs/PERFORMANCE.md). The shading's
//! micro-relief, not the geometry, carries the finer texture.

use planet_geo::address::FaceSample;
use planet_geo::face::Face;

/// Octaves whose samples are finer than this many metres (wavelengths
/// under 32 m) fall at [`SMOOTH_GAIN`] per level instead of the data's gain.
pub const SMOOTH_BELOW_M: f64 = 8.0;

/// The per-level amplitude ratio of octaves finer than [`SMOOTH_BELOW_M`]:
/// `2^-2`, a surface whose slopes converge (an error per node that halves
/// faster than the node).
pub const SMOOTH_GAIN: f64 = 0.25;

/// How much the roughness exponent rises per window halving below the
/// data's scale, in 64ths, where the first octave's amplitude is set
/// (`roughness::continuing_amplitude`): real ground is smoother the closer
/// one looks. Windows of the Sierra's SRTM (90 m) measure `H` 0.34 at
/// 12-23 km, then 0.54, 0.69, 0.86, 1.04 and 1.29 down to 360-720 m: about
/// 0.15 a halving. A law fitted at the data's scale (windows of 16 to 256
/// data samples) and continued unbent made ground 2.8 times as rough as the
/// real in windows of 4 samples eight times finer: a field of needles
/// (docs/ground.md).
pub const CALIBRATION_ROLL_OFF_64THS: u32 = 8;

/// Windows narrower than this many metres are as smooth as a 1 m lidar
/// measures real ground there: where the calibration's roll-off reaches
/// them, its ratio is at most [`SMOOTH_WINDOW_GAIN`] a halving. The lidar's
/// windows of 4 to 64 m hold `H` 1.33-1.53; a law fitted over kilometres
/// and rolled off at the calibration's rate still had `H` 0.75 at 76 m
/// windows for a 90 m city DEM, and 300 m above it the drawn ground's
/// 99.9th percentile slope was 15 degrees steeper than the DEM's own
/// (docs/performance/ground-shape.md).
pub const SMOOTH_WINDOWS_BELOW_M: f64 = 200.0;

/// `2^-H` for `H = 90/64` (1.40625), the lidar's windows under
/// [`SMOOTH_WINDOWS_BELOW_M`].
pub const SMOOTH_WINDOW_GAIN: f64 = 0.377_291_106_898_355_7;

/// The roughness ratio the calibration (`roughness::continuing_amplitude`)
/// takes across the `halving`-th halving below the law's anchor (windows of
/// 16 data samples of `spacing_m`): [`rolled_off_ratio`] at
/// [`CALIBRATION_ROLL_OFF_64THS`] a halving, at most
/// [`SMOOTH_WINDOW_GAIN`] where the halved window is narrower than
/// [`SMOOTH_WINDOWS_BELOW_M`].
pub fn calibration_ratio(gain: f64, halving: u32, spacing_m: f64) -> f64 {
    let ratio = rolled_off_ratio(gain, halving, CALIBRATION_ROLL_OFF_64THS);
    let window_m = f64::from(16u32 >> halving.min(4)) * spacing_m;
    if window_m < SMOOTH_WINDOWS_BELOW_M { ratio.min(SMOOTH_WINDOW_GAIN) } else { ratio }
}

/// The same rise between the octaves themselves, faster than the
/// calibration's, up to `ROLLED_OFF_GAIN` within two levels: the octaves
/// past the first carry the small-scale roughness of the bilinear lattice
/// as well as their own, so each must be weaker than real ground's next
/// halving for the sum to hold its peaks and pits to the real ground's
/// (chosen by `tools/bench/detail_vs_real.sh`: at the calibration's rate
/// the Sierra drew 1.7 times the real's peaks and pits).
pub const ROLL_OFF_64THS: u32 = 20;

/// The exponent the roll-off rises to, at most, as the ratio `2^-H` of
/// `H = 1.75`: a smooth surface's slopes (1.0) and more, as a 1 m lidar's
/// finest windows (1.4-1.5) and the Sierra's 90 m SRTM (2.1 across its own
/// pixels) measure.
const ROLLED_OFF_GAIN: f64 = 0.297_301_778_750_680_26;

/// `2^(-1/64)`: each 64th of exponent the roll-off adds.
const STEP_GAIN: f64 = 0.989_228_013_193_975_5;

/// The ratio of octave `depth`'s coefficient to octave `depth - 1`'s: the
/// data's `gain` rolled off ([`rolled_off_ratio`]) by the window halvings
/// from the law's anchor (windows of 16 data samples) to the octave's
/// windows (octave `e` first shows in windows of `2^(data_depth + 2 - e)`
/// data samples: three halvings for the first octave, four for the
/// second), then [`SMOOTH_GAIN`] past the smooth break.
fn octave_ratio(gain: f64, smooth_from: u8, data_depth: u8, depth: u8) -> f64 {
    if depth >= smooth_from {
        return SMOOTH_GAIN;
    }
    rolled_off_ratio(gain, u32::from(depth.saturating_sub(data_depth)) + 2, ROLL_OFF_64THS)
}

/// The roughness ratio across the `halvings`-th halving of the window below
/// the law's anchor: `gain` times `per_halving_64ths` 64ths of exponent per
/// halving, never below `ROLLED_OFF_GAIN` (nor below `gain` where the data
/// is smoother still). Products of exact literals in one order, so every
/// machine computes the same bits.
pub fn rolled_off_ratio(gain: f64, halvings: u32, per_halving_64ths: u32) -> f64 {
    let mut ratio = gain;
    for _ in 0..halvings * per_halving_64ths {
        let next = ratio * STEP_GAIN;
        if next < ROLLED_OFF_GAIN {
            break;
        }
        ratio = next;
    }
    ratio
}

/// The coefficient of octave `depth` (new at that depth) in the unit octave
/// sum of data at `data_depth`: 1 for the first octave, then one product of
/// [`octave_ratio`] per level, in depth order.
pub(super) fn octave_coefficient(gain: f64, smooth_from: u8, data_depth: u8, depth: u8) -> f64 {
    let mut c = 1.0;
    for e in data_depth + 2..=depth {
        c *= octave_ratio(gain, smooth_from, data_depth, e);
    }
    c
}

/// Sums of the octave coefficients up to `depth` and beyond it (to
/// `MAX_DEPTH`): the worst case of the octave sum a tile holds, and of what
/// it omits.
pub(super) fn coefficient_sums(gain: f64, smooth_from: u8, data_depth: u8, depth: u8) -> (f64, f64) {
    let mut c = 1.0;
    let (mut up_to, mut beyond) = (0.0, 0.0);
    for e in data_depth + 1..=planet_geo::address::MAX_DEPTH {
        if e > data_depth + 1 {
            c *= octave_ratio(gain, smooth_from, data_depth, e);
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

pub(super) fn mix(mut z: u64) -> u64 {
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

use super::gullies::NodeValues;

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
    nodes: &dyn NodeValues,
    face: Face,
    cells_log2: u8,
    (i0, i1, j0, j1): (u64, u64, u64, u64),
    first_log2: u8,
    coefficient: &dyn Fn(u8) -> f64,
) -> Window {
    let width = (i1 - i0 + 1) as usize;
    let c = coefficient(cells_log2);
    let octave = (c != 0.0).then(|| octave_values(nodes, face, cells_log2, (i0, i1, j0, j1)));
    let own = |k: usize| octave.as_ref().map_or(0.0, |o| c * o[k]);
    if cells_log2 == first_log2 {
        let values = (0..width * (j1 - j0 + 1) as usize).map(own).collect();
        return Window { i0, j0, width, values };
    }
    let coarse =
        window(nodes, face, cells_log2 - 1, (i0 >> 1, (i1 + 1) >> 1, j0 >> 1, (j1 + 1) >> 1), first_log2, coefficient);
    let mut values = Vec::with_capacity(width * (j1 - j0 + 1) as usize);
    for j in j0..=j1 {
        for i in i0..=i1 {
            // Only nodes new at this level take its octave (zero at the
            // coarser level's nodes): those keep their values, so a tile's
            // samples at its parent's even samples (its whole drawn
            // lattice) are the parent's, bit for bit.
            values.push(coarse.refine(i, j) + own(values.len()));
        }
    }
    Window { i0, j0, width, values }
}

/// One octave's unit node values over a window of its lattice: at a node
/// new at this level, half its value's surplus over the refinement of the
/// value at the coarser level's nodes around it (the hierarchical surplus);
/// zero at the coarser nodes themselves.
///
/// Why a surplus, not the value: an octave zero at every other node and
/// bilinear between drew any profile longer than two nodes (a furrow down a
/// slope) as a row of beads, one peak or pit per coarse node along it; the
/// surplus leaves what the coarser nodes already carry to them, so a
/// furrow stays a furrow. Half of it is at most 1 in magnitude, as a node's
/// value is, so every bound that takes a node as at most its coefficient
/// holds.
fn octave_values(
    nodes: &dyn NodeValues,
    face: Face,
    cells_log2: u8,
    (i0, i1, j0, j1): (u64, u64, u64, u64),
) -> Vec<f64> {
    let last = 1u64 << cells_log2;
    // The coarse nodes (both indices even) around the window, as (i/2, j/2).
    let (a0, a1) = (i0.saturating_sub(1) >> 1, ((i1 + 1) >> 1).min(last >> 1));
    let (b0, b1) = (j0.saturating_sub(1) >> 1, ((j1 + 1) >> 1).min(last >> 1));
    let coarse_width = (a1 - a0 + 1) as usize;
    let mut coarse = Vec::with_capacity(coarse_width * (b1 - b0 + 1) as usize);
    for b in b0..=b1 {
        for a in a0..=a1 {
            coarse.push(nodes.value(FaceSample { face, cells_log2, i: 2 * a, j: 2 * b }));
        }
    }
    let at = |i: u64, j: u64| coarse[((j >> 1) - b0) as usize * coarse_width + ((i >> 1) - a0) as usize];
    let mut out = Vec::with_capacity(((i1 - i0 + 1) * (j1 - j0 + 1)) as usize);
    for j in j0..=j1 {
        for i in i0..=i1 {
            out.push(surplus(|s| nodes.value(s), FaceSample { face, cells_log2, i, j }, &at));
        }
    }
    out
}

/// Half the surplus of node `s`'s value over the refinement of its coarse
/// neighbours' values (`coarse(i, j)` at even `i, j`); zero at a coarse
/// node. Every node's neighbours lie on its face: an odd index is never
/// the face's first or last (those are even).
pub(super) fn surplus(value: impl Fn(FaceSample) -> f64, s: FaceSample, coarse: &dyn Fn(u64, u64) -> f64) -> f64 {
    let (i, j) = (s.i, s.j);
    let refined = match (i & 1, j & 1) {
        (0, 0) => return 0.0,
        (1, 0) => coarse(i - 1, j) * 0.5 + coarse(i + 1, j) * 0.5,
        (0, 1) => coarse(i, j - 1) * 0.5 + coarse(i, j + 1) * 0.5,
        _ => {
            let bottom = coarse(i - 1, j - 1) * 0.5 + coarse(i + 1, j - 1) * 0.5;
            let top = coarse(i - 1, j + 1) * 0.5 + coarse(i + 1, j + 1) * 0.5;
            bottom * 0.5 + top * 0.5
        }
    };
    0.5 * (value(s) - refined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smooth_window_gain_is_two_to_the_minus_90_64ths() {
        let by_steps = (0..90).fold(1.0, |g, _| g * STEP_GAIN);
        assert!((by_steps / SMOOTH_WINDOW_GAIN - 1.0).abs() < 1e-12, "{by_steps}");
    }

    /// Data of 38 m (a 90 m DEM baked at depth 11): the law's anchor is a
    /// 611 m window; the halvings to 153 m and 76 m are under 200 m and take
    /// the lidar's smoothness. Data of 305 m keeps the rolled-off law all
    /// the way (its narrowest window, 610 m, is wide).
    #[test]
    fn narrow_windows_take_the_smooth_gain_and_wide_ones_the_rolled_law() {
        let gain = 0.7711; // H 0.375
        let rolled = |k| rolled_off_ratio(gain, k, CALIBRATION_ROLL_OFF_64THS);
        let ratios = |spacing| [1, 2, 3].map(|k| calibration_ratio(gain, k, spacing));
        assert_eq!(ratios(38.2), [rolled(1), SMOOTH_WINDOW_GAIN, SMOOTH_WINDOW_GAIN]);
        assert_eq!(ratios(305.0), [rolled(1), rolled(2), rolled(3)]);
        // Smoother data than the lidar keeps its own, smaller ratio.
        let smooth = rolled_off_ratio(0.2, 3, CALIBRATION_ROLL_OFF_64THS);
        assert_eq!(calibration_ratio(0.2, 3, 1.0), smooth.min(SMOOTH_WINDOW_GAIN));
        assert!(smooth < SMOOTH_WINDOW_GAIN);
    }
}
