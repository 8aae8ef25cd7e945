//! A right-triangulated irregular network over a [`GRID`] x [`GRID`] grid:
//! the square split along its diagonal, each right triangle split at the
//! midpoint of its hypotenuse while the surface there departs from the
//! hypotenuse's chord by more than the error asked for. The chord is the
//! straight line a client draws: on a curved body it passes below the
//! ground by the body's sag between its ends as well as by the heights'
//! departure (a level-0 tile's inner triangles over a flat ocean cut 854 km
//! into the Earth, and Cesium drew the globe's limb as a polygon).
//!
//! The key decision: a midpoint's error is the largest of its own and those
//! of every midpoint below it (taken level by level, finest first), so a
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
type Triangle = (Point, Point, Point);

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

impl Rtin {
    /// The errors of `heights` (`GRID * GRID`, row by row from the south)
    /// on a flat grid.
    pub fn new(heights: &[f32]) -> Rtin {
        Rtin::with_sag(heights, |_, _| 0.0)
    }

    /// The errors of `heights` where the straight chord between grid points
    /// `a` and `b` passes `sag(a, b)` metres below the surface of zero
    /// height at their middle.
    pub fn with_sag(heights: &[f32], sag: impl Fn(Point, Point) -> f32) -> Rtin {
        assert_eq!(heights.len(), GRID * GRID, "a grid of {GRID} x {GRID} heights");
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
                // Where a client draws the middle of the hypotenuse.
                let chord = 0.5 * (heights[index(a)] + heights[index(b)]) - sag(a, b);
                let mut e = (heights[index(m)] - chord).abs();
                if on_border(m) {
                    e = f32::INFINITY;
                }
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
