//! Invented ground: seeded fractal noise evaluated on the unit sphere.
//!
//! The key decision: elevation is a function of the sample's unit direction
//! alone, with a fixed set of octaves, never of the tile or its depth. Two
//! tiles that share a sample compute it from bit-identical directions (see
//! `cube`), so aprons equal their neighbours' samples exactly, across face
//! edges too, and a parent's samples equal its children's where they meet.
//! The noise is improved gradient noise over a permutation shuffled from the
//! seed; relief is continents and ocean basins, ridged mountain belts, and
//! fine detail down to a ~1/5000-radius wavelength, scaled to the body.

use glam::DVec3;

use crate::{HeightSource, Provenance, SourceError, SourceTile, TileBounds, sample_directions};
use planet_geo::address::{TILE_CELLS, TileAddress};
use planet_geo::body::Body;

/// Shifts the continent field: negative means more ocean.
const CONTINENT_BIAS: f64 = -0.08;

/// Relief as a fraction of the body's mean radius (Earth: ~8.3 km).
const RELIEF: f64 = 1.3e-3;

#[derive(Clone, Copy, Debug)]
struct Octaves {
    base_frequency: f64,
    count: u32,
    gain: f64,
    weight: f64,
}

impl Octaves {
    /// Sum of the amplitudes of the octaves whose wavelength (radians) is
    /// shorter than `wavelength`.
    fn amplitude_below(&self, wavelength: f64) -> f64 {
        (0..self.count)
            .map(|o| {
                let frequency = self.base_frequency * f64::from(1u32 << o);
                let amplitude = self.weight * self.gain.powi(o as i32);
                if std::f64::consts::TAU / frequency < wavelength { amplitude } else { 0.0 }
            })
            .sum()
    }

    fn total_amplitude(&self) -> f64 {
        self.amplitude_below(f64::INFINITY)
    }
}

const CONTINENTS: Octaves = Octaves { base_frequency: 1.2, count: 6, gain: 0.5, weight: 0.55 };
const BELTS: Octaves = Octaves { base_frequency: 2.0, count: 3, gain: 0.5, weight: 1.0 };
const RIDGES: Octaves = Octaves { base_frequency: 5.0, count: 10, gain: 0.5, weight: 0.55 };
const DETAIL: Octaves = Octaves { base_frequency: 24.0, count: 11, gain: 0.5, weight: 0.06 };

/// A seeded procedural body.
#[derive(Clone)]
pub struct ProceduralSource {
    body: Body,
    seed: u64,
    permutation: [u8; 512],
    relief_m: f64,
    /// `tile_bounds` per depth, computed once: selection asks for bounds of
    /// every node it considers.
    bounds: Vec<TileBounds>,
}

impl std::fmt::Debug for ProceduralSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProceduralSource").field("body", &self.body).field("seed", &self.seed).finish()
    }
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn fade(t: f64) -> f64 {
    t * t * t * (t * (t * 6.0 - 15.0) + 10.0)
}

fn lerp(t: f64, a: f64, b: f64) -> f64 {
    a + t * (b - a)
}

fn gradient(hash: u8, x: f64, y: f64, z: f64) -> f64 {
    let h = hash & 15;
    let u = if h < 8 { x } else { y };
    let v = if h < 4 {
        y
    } else if h == 12 || h == 14 {
        x
    } else {
        z
    };
    (if h & 1 == 0 { u } else { -u }) + (if h & 2 == 0 { v } else { -v })
}

impl ProceduralSource {
    pub fn new(body: Body, seed: u64) -> ProceduralSource {
        let mut table: Vec<u8> = (0..=255).collect();
        let mut state = seed;
        for i in (1..256usize).rev() {
            let j = (splitmix(&mut state) % (i as u64 + 1)) as usize;
            table.swap(i, j);
        }
        let mut permutation = [0u8; 512];
        for (k, p) in permutation.iter_mut().enumerate() {
            *p = table[k % 256];
        }
        let radii = body.ellipsoid().radii();
        let relief_m = RELIEF * (radii.x + radii.y + radii.z) / 3.0;
        let mut source = ProceduralSource { body, seed, permutation, relief_m, bounds: Vec::new() };
        source.bounds = (0..=planet_geo::address::MAX_DEPTH).map(|d| source.bounds_at_depth(d)).collect();
        source
    }

    /// Conservative: the whole body's elevation bound, and as geometric error
    /// the amplitude of every octave too short for the tile's drawn lattice
    /// (every fourth sample, 33 x 33) to resolve: wavelength under eight
    /// lattice spacings.
    fn bounds_at_depth(&self, depth: u8) -> TileBounds {
        let bound = self.elevation_bound();
        let lattice_spacing = 4.0 * std::f64::consts::FRAC_PI_2 / (f64::from(TILE_CELLS) * f64::from(1u32 << depth));
        let unresolved = 8.0 * lattice_spacing;
        let error = 1.2 * CONTINENTS.amplitude_below(unresolved)
            + 0.75 * RIDGES.amplitude_below(unresolved)
            + DETAIL.amplitude_below(unresolved);
        TileBounds {
            min_elevation: -bound,
            max_elevation: bound,
            geometric_error: self.relief_m * error * 1.1,
            provenance: Provenance::Invented,
            voids: false,
        }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Improved gradient noise in about [-1, 1].
    fn noise(&self, p: DVec3) -> f64 {
        let p_ = &self.permutation;
        let (fx, fy, fz) = (p.x.floor(), p.y.floor(), p.z.floor());
        let (xi, yi, zi) = ((fx as i64 & 255) as usize, (fy as i64 & 255) as usize, (fz as i64 & 255) as usize);
        let (x, y, z) = (p.x - fx, p.y - fy, p.z - fz);
        let (u, v, w) = (fade(x), fade(y), fade(z));
        let a = p_[xi] as usize + yi;
        let (aa, ab) = (p_[a] as usize + zi, p_[a + 1] as usize + zi);
        let b = p_[xi + 1] as usize + yi;
        let (ba, bb) = (p_[b] as usize + zi, p_[b + 1] as usize + zi);
        lerp(
            w,
            lerp(
                v,
                lerp(u, gradient(p_[aa], x, y, z), gradient(p_[ba], x - 1.0, y, z)),
                lerp(u, gradient(p_[ab], x, y - 1.0, z), gradient(p_[bb], x - 1.0, y - 1.0, z)),
            ),
            lerp(
                v,
                lerp(u, gradient(p_[aa + 1], x, y, z - 1.0), gradient(p_[ba + 1], x - 1.0, y, z - 1.0)),
                lerp(u, gradient(p_[ab + 1], x, y - 1.0, z - 1.0), gradient(p_[bb + 1], x - 1.0, y - 1.0, z - 1.0)),
            ),
        )
    }

    fn fbm(&self, d: DVec3, o: Octaves, offset: f64) -> f64 {
        let mut sum = 0.0;
        for k in 0..o.count {
            let frequency = o.base_frequency * f64::from(1u32 << k);
            sum += o.weight
                * o.gain.powi(k as i32)
                * self.noise(d * frequency + DVec3::splat(offset + 17.0 * f64::from(k)));
        }
        sum
    }

    fn ridged(&self, d: DVec3, o: Octaves) -> f64 {
        let mut sum = 0.0;
        for k in 0..o.count {
            let frequency = o.base_frequency * f64::from(1u32 << k);
            let n = 1.0 - self.noise(d * frequency + DVec3::splat(101.0 + 31.0 * f64::from(k))).abs();
            sum += o.weight * o.gain.powi(k as i32) * n * n;
        }
        sum
    }

    /// Elevation (metres) at a unit direction.
    pub fn elevation(&self, d: DVec3) -> f64 {
        let continent = self.fbm(d, CONTINENTS, 0.0) + CONTINENT_BIAS;
        let land = smoothstep(-0.02, 0.12, continent);
        let belt = smoothstep(0.05, 0.45, self.fbm(d, BELTS, 57.0));
        let ridges = self.ridged(d, RIDGES);
        let detail = self.fbm(d, DETAIL, 211.0);
        // Continental shelves rise gently; ocean basins fall away steeply.
        let shape = 0.4 * continent + 0.8 * continent.min(0.0) + land * (0.04 + 0.75 * belt * ridges) + detail;
        self.relief_m * shape
    }

    /// A bound on |elevation| from the octave amplitudes (noise magnitude <= 1.1).
    fn elevation_bound(&self) -> f64 {
        let noise = 1.1;
        let continent = CONTINENTS.total_amplitude() * noise + CONTINENT_BIAS.abs();
        let shape = 1.2 * continent + 0.04 + 0.75 * RIDGES.total_amplitude() + DETAIL.total_amplitude() * noise;
        self.relief_m * shape
    }
}

fn smoothstep(e0: f64, e1: f64, x: f64) -> f64 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

impl HeightSource for ProceduralSource {
    fn parts(&self) -> Vec<&dyn HeightSource> {
        Vec::new()
    }
    fn body(&self) -> &Body {
        &self.body
    }

    fn tile(&self, tile: TileAddress) -> Result<SourceTile, SourceError> {
        let heights = sample_directions(tile).into_iter().map(|d| self.elevation(d) as f32).collect();
        Ok(SourceTile { tile, heights, classes: None, colour: None, provenance: Provenance::Invented, voids: None })
    }

    fn bounds(&self, tile: TileAddress, _reads: crate::Reads) -> Result<TileBounds, SourceError> {
        Ok(self.bounds[usize::from(tile.depth())])
    }

    fn data_depth(&self) -> Option<u8> {
        None
    }

    fn colour_data_depth(&self) -> Option<u8> {
        None
    }
}
