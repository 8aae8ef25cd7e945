//! A tile's bytes in quantized-mesh-1.0: the header (centre, height range,
//! bounding sphere, horizon occlusion point), the vertices as zig-zag
//! deltas of 15-bit `u`, `v` and height, the triangles' indices by
//! high-water mark (16-bit, or 32-bit past 65,536 vertices, after the
//! padding the format asks for), the four edges' vertex indices, and the
//! extensions: oct-encoded vertex normals (1), the water mask (2) and the
//! metadata (4, child availability).
//! All little-endian.

use glam::DVec3;
use planet_terrain::geo::body::{Ellipsoid, Geodetic, east_north_up};

use crate::GRID;
use crate::rtin::{Point, Rtin, points_of};
use crate::tiling::TileId;

/// Samples along a side of the grid a tile is made from: [`GRID`] and one
/// more on each side, so the normals at the border take their neighbours'
/// samples and two tiles shade their shared edge alike.
pub const SAMPLED: usize = GRID + 2;

/// The largest quantized coordinate.
const QUANTIZED_MAX: u32 = 32767;

/// What a tile is made from.
#[derive(Clone, Debug)]
pub struct TileInput<'a> {
    pub id: TileId,
    /// `SAMPLED * SAMPLED` heights (metres above the ellipsoid), row by row
    /// from one sample south of the tile to one north of it, each row from
    /// one sample west of it to one east: sample `(i, j)` of the tile's
    /// grid is at `(j + 1) * SAMPLED + i + 1`.
    pub heights: &'a [f32],
    /// The share of water at each grid sample (`GRID * GRID`), where the
    /// ground has classes.
    pub water: Option<&'a [bool]>,
    /// How far the mesh may depart from the grid (metres).
    pub max_error_m: f32,
    /// The metadata extension's JSON (`layer::child_availability`), where
    /// the tile carries one.
    pub metadata: Option<&'a str>,
}

/// A tile's mesh and bytes.
#[derive(Clone, Debug)]
pub struct Encoded {
    pub bytes: Vec<u8>,
    pub vertices: usize,
    pub triangles: usize,
    pub min_height_m: f32,
    pub max_height_m: f32,
}

/// The quantized coordinate (0..=32767) of grid sample `k` (0..GRID).
fn coordinate(k: u32) -> u32 {
    k * QUANTIZED_MAX / (GRID as u32 - 1)
}

/// The latitude and longitude (degrees) of grid sample `(i, j)` of `id`,
/// `i, j` in -1..=GRID (the margin included): where a client places the
/// sample's quantized coordinates, so the height read there is the height
/// drawn there. The last sample is the edge itself, not a sum of steps, so
/// two neighbours read their shared edge at the same place, bit for bit.
pub fn sample_position(id: TileId, i: i32, j: i32) -> (f64, f64) {
    let e = id.extent();
    let side = e.east - e.west;
    let at = |origin: f64, end: f64, k: i32| match k {
        -1 => origin - side / (GRID - 1) as f64,
        k if k == GRID as i32 - 1 => end,
        k if k == GRID as i32 => end + side / (GRID - 1) as f64,
        k => origin + f64::from(coordinate(k as u32)) / f64::from(QUANTIZED_MAX) * side,
    };
    (at(e.south, e.north, j).clamp(-90.0, 90.0), at(e.west, e.east, i))
}

fn zigzag(v: i32) -> u16 {
    ((v << 1) ^ (v >> 31)) as u16
}

/// Cesium's octahedral encoding of a unit vector in two bytes.
fn oct_encode(n: DVec3) -> [u8; 2] {
    let p = n / (n.x.abs() + n.y.abs() + n.z.abs());
    let sign = |v: f64| if v < 0.0 { -1.0 } else { 1.0 };
    let (x, y) = if p.z < 0.0 { ((1.0 - p.y.abs()) * sign(p.x), (1.0 - p.x.abs()) * sign(p.y)) } else { (p.x, p.y) };
    let byte = |v: f64| ((v.clamp(-1.0, 1.0) * 0.5 + 0.5) * 255.0).round() as u8;
    [byte(x), byte(y)]
}

/// Where a viewer must stand to see any of `points` over the ellipsoid's
/// horizon, along `direction`, in the ellipsoid-scaled frame (Cesium's
/// `EllipsoidalOccluder`); `None` where no such point exists.
fn horizon_occlusion_point(ellipsoid: &Ellipsoid, points: &[DVec3], direction: DVec3) -> Option<DVec3> {
    let scale = DVec3::ONE / ellipsoid.radii();
    let toward = (direction * scale).normalize();
    let mut farthest: f64 = 0.0;
    for &p in points {
        let scaled = p * scale;
        let magnitude_squared = scaled.length_squared().max(1.0);
        let magnitude = magnitude_squared.sqrt();
        let along = scaled.normalize();
        let cos_alpha = along.dot(toward);
        let sin_alpha = along.cross(toward).length();
        let cos_beta = 1.0 / magnitude;
        let sin_beta = (magnitude_squared - 1.0).sqrt() * cos_beta;
        let denominator = cos_alpha * cos_beta - sin_alpha * sin_beta;
        if denominator <= 0.0 {
            return None;
        }
        farthest = farthest.max(1.0 / denominator);
    }
    Some(toward * farthest)
}

/// A tile's input grid, read by sample.
struct Grid<'a> {
    id: TileId,
    heights: &'a [f32],
}

impl Grid<'_> {
    /// Sample `(i, j)`, `i, j` in -1..=GRID.
    fn height(&self, i: i32, j: i32) -> f32 {
        self.heights[(j + 1) as usize * SAMPLED + (i + 1) as usize]
    }

    /// The body-fixed position of sample `(i, j)` at `h` metres.
    fn point(&self, ellipsoid: &Ellipsoid, i: i32, j: i32, h: f64) -> DVec3 {
        let (lat, lon) = sample_position(self.id, i, j);
        ellipsoid.geodetic_to_point(Geodetic::from_degrees(lat, lon, h))
    }

    /// The ground's normal at sample `(i, j)`: central differences over the
    /// grid's spacing (the margin's samples at the border), east-north-up
    /// turned into the body's frame.
    fn normal(&self, ellipsoid: &Ellipsoid, i: i32, j: i32) -> DVec3 {
        let east_m = self.point(ellipsoid, i + 1, j, 0.0).distance(self.point(ellipsoid, i - 1, j, 0.0)).max(1e-6);
        let north_m = self.point(ellipsoid, i, j + 1, 0.0).distance(self.point(ellipsoid, i, j - 1, 0.0)).max(1e-6);
        let dx = f64::from(self.height(i + 1, j) - self.height(i - 1, j)) / east_m;
        let dy = f64::from(self.height(i, j + 1) - self.height(i, j - 1)) / north_m;
        let (lat, lon) = sample_position(self.id, i, j);
        let enu = east_north_up(Geodetic::from_degrees(lat, lon, 0.0));
        (enu.col(2) - enu.col(0) * dx - enu.col(1) * dy).normalize()
    }
}

/// Indices, 16-bit or (past 65,536 vertices) 32-bit.
fn put_index(out: &mut Vec<u8>, wide: bool, k: u32) {
    if wide { out.extend_from_slice(&k.to_le_bytes()) } else { out.extend_from_slice(&(k as u16).to_le_bytes()) }
}

/// The header: centre, height range, bounding sphere, horizon occlusion
/// point, all from the vertices as a client decodes them.
fn put_header(out: &mut Vec<u8>, ellipsoid: &Ellipsoid, positions: &[DVec3], (lo, hi): (f32, f32)) {
    let (min, max) = positions
        .iter()
        .fold((DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)), |(a, b), &p| (a.min(p), b.max(p)));
    let centre = 0.5 * (min + max);
    let radius = positions.iter().map(|p| p.distance(centre)).fold(0.0, f64::max);
    // A tile too large for any point (a hemisphere at level 0) gets NaN:
    // Cesium's occluder then never culls it, where any finite point would
    // cull it from cameras that still see its edges.
    let occlusion = horizon_occlusion_point(ellipsoid, positions, centre).unwrap_or(DVec3::NAN);
    for v in [centre.x, centre.y, centre.z] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&lo.to_le_bytes());
    out.extend_from_slice(&hi.to_le_bytes());
    for v in [centre.x, centre.y, centre.z, radius, occlusion.x, occlusion.y, occlusion.z] {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// The vertices: `u`, `v` and height, each as zig-zag deltas.
fn put_vertices(out: &mut Vec<u8>, channels: &[Vec<u32>; 3]) {
    out.extend_from_slice(&(channels[0].len() as u32).to_le_bytes());
    for channel in channels {
        let mut previous = 0i32;
        for &value in channel {
            out.extend_from_slice(&zigzag(value as i32 - previous).to_le_bytes());
            previous = value as i32;
        }
    }
}

/// The triangles by high-water mark, after the padding the index width asks for.
fn put_triangles(out: &mut Vec<u8>, wide: bool, triangles: &[[u32; 3]]) {
    if wide {
        while !out.len().is_multiple_of(4) {
            out.push(0);
        }
    }
    out.extend_from_slice(&(triangles.len() as u32).to_le_bytes());
    let mut highest = 0u32;
    for &k in triangles.iter().flatten() {
        put_index(out, wide, highest - k);
        if k == highest {
            highest += 1;
        }
    }
}

/// The edges' vertices: west south to north, south east to west, east
/// north to south, north west to east (the orders Cesium's skirts walk).
fn put_edges(out: &mut Vec<u8>, wide: bool, points: &[Point]) {
    let last = GRID as u32 - 1;
    let on = |keep: &dyn Fn(Point) -> bool, key: &dyn Fn(Point) -> i64| {
        let mut edge: Vec<u32> = (0..points.len() as u32).filter(|&k| keep(points[k as usize])).collect();
        edge.sort_by_key(|&k| key(points[k as usize]));
        edge
    };
    let edges = [
        on(&|p| p.0 == 0, &|p| i64::from(p.1)),
        on(&|p| p.1 == 0, &|p| -i64::from(p.0)),
        on(&|p| p.0 == last, &|p| -i64::from(p.1)),
        on(&|p| p.1 == last, &|p| i64::from(p.0)),
    ];
    for edge in &edges {
        out.extend_from_slice(&(edge.len() as u32).to_le_bytes());
        for &k in edge {
            put_index(out, wide, k);
        }
    }
}

/// Extension 2: the water mask, one byte where the tile is all land (0) or
/// all water (255), else 256 x 256 from the north-west.
fn put_water_mask(out: &mut Vec<u8>, water: &[bool]) {
    out.push(2);
    if water.iter().all(|&w| w == water[0]) {
        out.extend_from_slice(&1u32.to_le_bytes());
        out.push(if water[0] { 255 } else { 0 });
        return;
    }
    out.extend_from_slice(&(256u32 * 256).to_le_bytes());
    for row in 0..256 {
        for column in 0..256 {
            let i = (column * (GRID - 1) + 127) / 255;
            let j = GRID - 1 - (row * (GRID - 1) + 127) / 255;
            out.push(if water[j * GRID + i] { 255 } else { 0 });
        }
    }
}

/// The network of `core` (the grid's heights without the margin) within
/// `max_error_m` of the ground as a client draws it: flat triangles between
/// vertices on the curved body. A sample's error is its height's departure
/// from the triangle over it, along its own vertical.
fn triangulate(ellipsoid: &Ellipsoid, grid: &Grid<'_>, core: &[f32], max_error_m: f32) -> (Vec<Point>, Vec<[u32; 3]>) {
    let samples: Vec<(i32, i32)> = (0..GRID as i32).flat_map(|j| (0..GRID as i32).map(move |i| (i, j))).collect();
    let ground: Vec<DVec3> = samples
        .iter()
        .map(|&(i, j)| grid.point(ellipsoid, i, j, f64::from(core[j as usize * GRID + i as usize])))
        .collect();
    let up: Vec<DVec3> = samples
        .iter()
        .map(|&(i, j)| {
            let (lat, lon) = sample_position(grid.id, i, j);
            east_north_up(Geodetic::from_degrees(lat, lon, 0.0)).col(2)
        })
        .collect();
    let at = |(i, j): Point| j as usize * GRID + i as usize;
    Rtin::with_error(|t| {
        let (a, b, c) = t;
        let normal = (ground[at(b)] - ground[at(a)]).cross(ground[at(c)] - ground[at(a)]).normalize_or_zero();
        points_of(t)
            .map(|p| {
                let k = at(p);
                // Along the sample's vertical to the triangle's plane (a
                // near-vertical triangle counted at ten times its distance).
                let across = (ground[k] - ground[at(a)]).dot(normal);
                (across / up[k].dot(normal).abs().max(0.1)).abs() as f32
            })
            .fold(0.0, f32::max)
    })
    .mesh(max_error_m)
}

/// The tile's quantized-mesh bytes.
pub fn encode(ellipsoid: &Ellipsoid, input: &TileInput<'_>) -> Encoded {
    assert_eq!(input.heights.len(), SAMPLED * SAMPLED, "a {SAMPLED} x {SAMPLED} grid with its margin");
    let grid = Grid { id: input.id, heights: input.heights };
    let core: Vec<f32> =
        (0..GRID as i32).flat_map(|j| (0..GRID as i32).map(move |i| (i, j))).map(|(i, j)| grid.height(i, j)).collect();
    let (points, triangles) = triangulate(ellipsoid, &grid, &core, input.max_error_m);
    let height_of = |&(i, j): &Point| grid.height(i as i32, j as i32);
    let (lo, hi) =
        points.iter().map(height_of).fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), h| (a.min(h), b.max(h)));
    let range = (hi - lo).max(f32::EPSILON);
    let quantize = |h: f32| ((h - lo) / range * QUANTIZED_MAX as f32).round() as u32;
    let channels: [Vec<u32>; 3] = [
        points.iter().map(|p| coordinate(p.0)).collect(),
        points.iter().map(|p| coordinate(p.1)).collect(),
        points.iter().map(|p| quantize(height_of(p))).collect(),
    ];
    // Positions as a client decodes them: quantized height, exact grid.
    let positions: Vec<DVec3> = points
        .iter()
        .zip(&channels[2])
        .map(|(&(i, j), &q)| {
            let h = lo + q as f32 / QUANTIZED_MAX as f32 * range;
            grid.point(ellipsoid, i as i32, j as i32, f64::from(h))
        })
        .collect();
    let wide = points.len() > 65_536;
    let mut out = Vec::with_capacity(88 + points.len() * 8 + triangles.len() * 6);
    put_header(&mut out, ellipsoid, &positions, (lo, hi));
    put_vertices(&mut out, &channels);
    put_triangles(&mut out, wide, &triangles);
    put_edges(&mut out, wide, &points);
    // Extension 1: a normal per vertex.
    out.push(1);
    out.extend_from_slice(&(2 * points.len() as u32).to_le_bytes());
    for &(i, j) in &points {
        out.extend_from_slice(&oct_encode(grid.normal(ellipsoid, i as i32, j as i32)));
    }
    if let Some(water) = input.water {
        put_water_mask(&mut out, water);
    }
    if let Some(json) = input.metadata {
        // Extension 4: the JSON's length, then the JSON.
        out.push(4);
        out.extend_from_slice(&(4 + json.len() as u32).to_le_bytes());
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(json.as_bytes());
    }
    Encoded { bytes: out, vertices: points.len(), triangles: triangles.len(), min_height_m: lo, max_height_m: hi }
}

#[cfg(test)]
mod tests {
    use super::*;
    use planet_terrain::geo::body::Body;

    #[test]
    fn zigzag_and_oct_encoding_match_the_format() {
        assert_eq!([zigzag(0), zigzag(-1), zigzag(1), zigzag(-2), zigzag(32767)], [0, 1, 2, 3, 65534]);
        assert_eq!(oct_encode(DVec3::Z), [128, 128]);
        assert_eq!(oct_encode(DVec3::X), [255, 128]);
        assert_eq!(oct_encode(-DVec3::Z), [255, 255]);
    }

    #[test]
    fn a_tile_decodes_to_its_header_and_its_edges_lie_on_its_border() {
        let body = Body::earth();
        let id = TileId { z: 5, x: 11, y: 20 };
        let heights: Vec<f32> = (0..SAMPLED * SAMPLED).map(|k| 100.0 + (k % 7) as f32 * 3.0).collect();
        let t = encode(
            body.ellipsoid(),
            &TileInput { id, heights: &heights, water: None, max_error_m: 1.0, metadata: None },
        );
        let b = &t.bytes;
        let f32_at = |at: usize| f32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        let u32_at = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        assert_eq!((f32_at(24), f32_at(28)), (t.min_height_m, t.max_height_m));
        assert_eq!(u32_at(88) as usize, t.vertices);
        let indices_at = 92 + 6 * t.vertices;
        assert_eq!(u32_at(indices_at) as usize, t.triangles);
        let west_at = indices_at + 4 + 6 * t.triangles;
        assert_eq!(u32_at(west_at), GRID as u32, "every western sample is a vertex");
    }

    /// A level-0 hemisphere of flat sea on a sphere: every triangle's
    /// hypotenuse (a right triangle's deepest chord) stays within the
    /// level's 77 km of the surface. Taking heights alone, the tile's inner
    /// triangles cut 854 km into the body, and CesiumJS drew the limb as a
    /// polygon.
    #[test]
    fn flat_triangles_on_a_curved_body_stay_within_the_error() {
        let radius = 6_371_000.0;
        let sphere = Ellipsoid::new(radius, radius, radius).unwrap();
        let id = TileId { z: 0, x: 0, y: 0 };
        let heights = vec![0f32; SAMPLED * SAMPLED];
        let grid = Grid { id, heights: &heights };
        let core = vec![0f32; GRID * GRID];
        let max_error = crate::tiling::level_error_m(radius, 0) as f32;
        let (points, triangles) = triangulate(&sphere, &grid, &core, max_error);
        let at = |k: u32| {
            let (i, j) = points[k as usize];
            grid.point(&sphere, i as i32, j as i32, 0.0)
        };
        let mut deepest = 0f64;
        for t in &triangles {
            let corners = t.map(at);
            // The hypotenuse: the longest side.
            let sides = [(0, 1), (1, 2), (2, 0)].map(|(a, b)| (corners[a], corners[b]));
            let (a, b) = sides.into_iter().max_by(|x, y| x.0.distance(x.1).total_cmp(&y.0.distance(y.1))).unwrap();
            deepest = deepest.max(radius - (0.5 * (a + b)).length());
        }
        assert!(deepest <= f64::from(max_error) * 1.001, "a chord {deepest:.0} m deep; {max_error} m allowed");
        assert!(points.len() > 4 * (GRID - 1), "curvature keeps inner vertices: {}", points.len());
    }
}
