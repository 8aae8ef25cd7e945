//! A right-triangulated irregular network over a [`GRID`] x [`GRID`] grid:
//! the square split along its diagonal, each right triangle split at the
//! midpoint of its hypotenuse while some grid sample inside it departs from
//! the flat triangle a client draws by more than the error asked for.
//!
//! The key decisions: a triangle's error is that of every sample it
//! covers, against the triangle itself (the caller says how far a sample
//! lies from a triangle: on a curved body the flat triangle passes below
//! the ground by the body's sag as well as by the heights', and a level-0
//! tile's inner triangles over a flat ocean cut 854 km into the Earth).
//! Measured only at the hypotenuse's middle against its chord, each level's
//! departure added to the last's, and 0.3-0.5% of a real DEM's samples lay
//! up to 1.6 times the error from the mesh (docs/performance/web-export.md).
//! A midpoint's error is the largest of its two triangles' and those of
//! every midpoint below it (taken level by level, finest first), so a
//! triangle split forces the splits its neighbours need to stay conforming:
//! no T-junction inside a tile. Every border midpoint counts as infinitely
//! wrong, so every border sample is a vertex: the border of a tile is the
//! same string of samples as its neighbour's, whatever either's relief.

use crate::GRID;

/// A grid point `(i, j)`: column from the west, row from the south.
pub type Point = (u32, u32);

/// Each grid point's error: how far the surface departs from a chord, at
/// the points where the network may split.
#[derive(Clone, Debug)]
pub struct Rtin {
    errors: Vec<f32>,
}

/// A triangle: the ends of its hypotenuse, then its right-angled corner.
pub type Triangle = (Point, Point, Point);

fn midpoint(a: Point, b: Point) -> Point {
    ((a.0 + b.0) / 2, (a.1 + b.1) / 2)
}

/// Whether a triangle has a grid point at its hypotenuse's middle (a unit
/// cell's diagonal has none).
fn splits((a, b, _): Triangle) -> bool {
    (a.0 + b.0) % 2 == 0 && (a.1 + b.1) % 2 == 0 && a != b
}

/// The two halves of a triangle, each right-angled at the hypotenuse's
/// middle.
fn halves((a, b, c): Triangle) -> [Triangle; 2] {
    let m = midpoint(a, b);
    [(a, c, m), (c, b, m)]
}

fn roots() -> [Triangle; 2] {
    let last = GRID as u32 - 1;
    [((0, 0), (last, last), (last, 0)), ((last, last), (0, 0), (0, last))]
}

fn index((i, j): Point) -> usize {
    j as usize * GRID + i as usize
}

fn on_border((i, j): Point) -> bool {
    let last = GRID as u32 - 1;
    i == 0 || j == 0 || i == last || j == last
}

/// The grid points of triangle `t`, its corners and edges included.
pub fn points_of(t: Triangle) -> impl Iterator<Item = Point> {
    let (a, b, c) = t;
    let corners = [a, b, c].map(|(i, j)| (i64::from(i), i64::from(j)));
    let (i0, i1) = (corners.iter().map(|p| p.0).min().unwrap(), corners.iter().map(|p| p.0).max().unwrap());
    let (j0, j1) = (corners.iter().map(|p| p.1).min().unwrap(), corners.iter().map(|p| p.1).max().unwrap());
    // Inside or on an edge: no edge function of either sign against another.
    let side = move |p: (i64, i64), q: (i64, i64), r: (i64, i64)| (q.0 - p.0) * (r.1 - p.1) - (q.1 - p.1) * (r.0 - p.0);
    (j0..=j1).flat_map(move |j| (i0..=i1).map(move |i| (i, j))).filter_map(move |r| {
        let s = [side(corners[0], corners[1], r), side(corners[1], corners[2], r), side(corners[2], corners[0], r)];
        let inside = s.iter().all(|&v| v >= 0) || s.iter().all(|&v| v <= 0);
        inside.then_some((r.0 as u32, r.1 as u32))
    })
}

impl Rtin {
    /// The errors of `heights` (`GRID * GRID`, row by row from the south)
    /// on a flat grid: a sample's error is its height's departure from the
    /// plane through the triangle's corners.
    pub fn new(heights: &[f32]) -> Rtin {
        assert_eq!(heights.len(), GRID * GRID, "a grid of {GRID} x {GRID} heights");
        let h = |p: Point| f64::from(heights[index(p)]);
        Rtin::with_error(|t| {
            let (a, b, c) = t;
            let (fa, fb, fc) = (h(a), h(b), h(c));
            let at = |p: Point| (f64::from(p.0), f64::from(p.1));
            let (pa, pb, pc) = (at(a), at(b), at(c));
            let det = (pb.1 - pc.1) * (pa.0 - pc.0) + (pc.0 - pb.0) * (pa.1 - pc.1);
            points_of(t)
                .map(|p| {
                    let q = at(p);
                    let l0 = ((pb.1 - pc.1) * (q.0 - pc.0) + (pc.0 - pb.0) * (q.1 - pc.1)) / det;
                    let l1 = ((pc.1 - pa.1) * (q.0 - pc.0) + (pa.0 - pc.0) * (q.1 - pc.1)) / det;
                    (l0 * fa + l1 * fb + (1.0 - l0 - l1) * fc - h(p)).abs() as f32
                })
                .fold(0.0, f32::max)
        })
    }

    /// The errors where `error(t)` is the farthest any grid sample of
    /// triangle `t` (`points_of`) lies from the flat triangle a client
    /// draws between its corners.
    pub fn with_error(error: impl Fn(Triangle) -> f32) -> Rtin {
        // Every splittable triangle, by level, coarsest first.
        let mut levels: Vec<Vec<Triangle>> = vec![roots().to_vec()];
        while let Some(last) = levels.last() {
            let next: Vec<Triangle> = last.iter().filter(|t| splits(**t)).flat_map(|&t| halves(t)).collect();
            if next.iter().all(|t| !splits(*t)) {
                break;
            }
            levels.push(next);
        }
        let mut errors = vec![0f32; GRID * GRID];
        for level in levels.iter().rev() {
            for &t in level.iter().filter(|t| splits(**t)) {
                let (a, b, _) = t;
                let m = midpoint(a, b);
                let mut e = if on_border(m) { f32::INFINITY } else { error(t) };
                for half in halves(t).into_iter().filter(|h| splits(*h)) {
                    e = e.max(errors[index(midpoint(half.0, half.1))]);
                }
                errors[index(m)] = errors[index(m)].max(e);
            }
        }
        Rtin { errors }
    }

    /// The network within `max_error` metres of the grid: its vertices (grid
    /// points, numbered in the order the triangles first name them) and its
    /// triangles, counter-clockwise seen from above.
    pub fn mesh(&self, max_error: f32) -> (Vec<Point>, Vec<[u32; 3]>) {
        let mut numbers = vec![u32::MAX; GRID * GRID];
        let mut vertices = Vec::new();
        let mut triangles = Vec::new();
        let mut stack: Vec<Triangle> = roots().into_iter().rev().collect();
        while let Some(t) = stack.pop() {
            if splits(t) && self.errors[index(midpoint(t.0, t.1))] > max_error {
                let [first, second] = halves(t);
                stack.push(second);
                stack.push(first);
                continue;
            }
            let (a, b, c) = t;
            // Counter-clockwise with i east and j north.
            let cross = (i64::from(b.0) - i64::from(a.0)) * (i64::from(c.1) - i64::from(a.1))
                - (i64::from(b.1) - i64::from(a.1)) * (i64::from(c.0) - i64::from(a.0));
            let corners = if cross > 0 { [a, b, c] } else { [a, c, b] };
            triangles.push(corners.map(|p| {
                let k = index(p);
                if numbers[k] == u32::MAX {
                    numbers[k] = vertices.len() as u32;
                    vertices.push(p);
                }
                numbers[k]
            }));
        }
        (vertices, triangles)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(f: impl Fn(f32, f32) -> f32) -> Vec<f32> {
        (0..GRID).flat_map(|j| (0..GRID).map(move |i| (i as f32, j as f32))).map(|(i, j)| f(i, j)).collect()
    }

    /// The height the mesh draws at every grid point, by barycentric
    /// interpolation in the triangle holding it.
    fn drawn(points: &[Point], triangles: &[[u32; 3]], at: (f32, f32), heights: &[f32]) -> Option<f32> {
        triangles.iter().find_map(|t| {
            let p = t.map(|k| (points[k as usize].0 as f32, points[k as usize].1 as f32));
            let det = (p[1].1 - p[2].1) * (p[0].0 - p[2].0) + (p[2].0 - p[1].0) * (p[0].1 - p[2].1);
            let l0 = ((p[1].1 - p[2].1) * (at.0 - p[2].0) + (p[2].0 - p[1].0) * (at.1 - p[2].1)) / det;
            let l1 = ((p[2].1 - p[0].1) * (at.0 - p[2].0) + (p[0].0 - p[2].0) * (at.1 - p[2].1)) / det;
            let l2 = 1.0 - l0 - l1;
            let h = t.map(|k| heights[index(points[k as usize])]);
            (l0 >= -1e-6 && l1 >= -1e-6 && l2 >= -1e-6).then_some(l0 * h[0] + l1 * h[1] + l2 * h[2])
        })
    }

    /// Ground rough at several scales (bilinear value noise of 16, 8, 4
    /// and 2-sample cells, 12, 6, 3 and 1.5 m): every sample lies within the
    /// error of the triangle drawn over it. Measured only at the
    /// hypotenuses' middles against their chords, each level's departure
    /// added to the last's and samples strayed past the error.
    #[test]
    fn every_sample_of_rough_ground_lies_within_the_error() {
        let lattice = |i: i64, j: i64, seed: u32| {
            let k = (i as u32).wrapping_mul(73_856_093)
                ^ (j as u32).wrapping_mul(19_349_663)
                ^ seed.wrapping_mul(83_492_791);
            (k.wrapping_mul(2_654_435_761) >> 16) as f32 / 65_535.0 * 2.0 - 1.0
        };
        let noise = |x: f32, y: f32, cell: f32, seed: u32| {
            let (u, v) = (x / cell, y / cell);
            let (i, j) = (u.floor() as i64, v.floor() as i64);
            let (fu, fv) = (u - u.floor(), v - v.floor());
            let row = |j| lattice(i, j, seed) * (1.0 - fu) + lattice(i + 1, j, seed) * fu;
            row(j) * (1.0 - fv) + row(j + 1) * fv
        };
        let rough = grid(|i, j| {
            [(16.0, 12.0), (8.0, 6.0), (4.0, 3.0), (2.0, 1.5)]
                .iter()
                .enumerate()
                .map(|(k, &(cell, amplitude))| amplitude * noise(i, j, cell, k as u32))
                .sum()
        });
        for max_error in [1.0f32, 3.0, 8.0] {
            let (points, triangles) = Rtin::new(&rough).mesh(max_error);
            let worst = (0..GRID * GRID)
                .map(|k| {
                    let at = ((k % GRID) as f32, (k / GRID) as f32);
                    (drawn(&points, &triangles, at, &rough).expect("covered") - rough[k]).abs()
                })
                .fold(0.0, f32::max);
            assert!(worst <= max_error + 1e-3, "a sample {worst} m from the mesh; {max_error} m allowed");
        }
    }

    #[test]
    fn a_plane_takes_only_its_border_and_a_bump_keeps_its_error() {
        let plane = grid(|i, j| 3.0 * i - 2.0 * j);
        let (points, triangles) = Rtin::new(&plane).mesh(0.5);
        let border = points.iter().filter(|&&p| on_border(p)).count();
        assert_eq!(border, 4 * (GRID - 1), "every border sample is a vertex");
        // Inside, only the band that grades the border's full resolution
        // down to the plane's two triangles (589 of the grid's 4,225).
        assert!(points.len() < GRID * GRID / 6, "a plane needs few inner vertices: {}", points.len());
        let bump = grid(|i, j| 200.0 * (-((i - 30.0).powi(2) + (j - 20.0).powi(2)) / 60.0).exp());
        let (points, triangles_bump) = Rtin::new(&bump).mesh(2.0);
        let worst = (0..GRID * GRID)
            .map(|k| {
                let at = ((k % GRID) as f32, (k / GRID) as f32);
                (drawn(&points, &triangles_bump, at, &bump).expect("covered") - bump[k]).abs()
            })
            .fold(0.0, f32::max);
        assert!(worst <= 2.0 + 1e-3, "within the error asked: {worst}");
        assert!(triangles_bump.len() > triangles.len(), "the bump is refined");
        // Every triangle counter-clockwise, every vertex numbered as first named.
        for t in &triangles_bump {
            let p = t.map(|k| points[k as usize]);
            let cross = (i64::from(p[1].0) - i64::from(p[0].0)) * (i64::from(p[2].1) - i64::from(p[0].1))
                - (i64::from(p[1].1) - i64::from(p[0].1)) * (i64::from(p[2].0) - i64::from(p[0].0));
            assert!(cross > 0);
        }
        let mut highest = 0;
        for &k in triangles_bump.iter().flatten() {
            assert!(k <= highest);
            if k == highest {
                highest += 1;
            }
        }
    }
}
