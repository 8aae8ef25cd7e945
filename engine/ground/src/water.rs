//! The sea: a level surface at 0 m over the ground, never a colour of it.
//!
//! The key decision: water is a consumer of the ground. A source's tiles
//! keep the sea floor (so `sample`, the maps and the bake see the ground the
//! DEM measured), and every consumer that needs the surface a person or a
//! ship meets (the renderer's vertices, the cut's bounds, the camera's
//! height above the ground, physics, ray casts) asks this module for it
//! with one rule: a stored sample is *under the sea* where the body has a
//! sea, the sample lies below 0 m of the pack's vertical datum, and its
//! surface class is ocean (1) or says nothing (0). There the drawn surface
//! is the sea's, 0 m; elsewhere it is the ground. A lake (class 3) keeps
//! its stored height, which is its surface in the DEMs the bake reads;
//! land below sea level (a polder, a depression the classes call land)
//! stays dry.
//!
//! The rule is applied per stored sample before any interpolation, the
//! same in `terrain.vert` (`drawn_sample` in heights.glsl), so the drawn
//! lattice, its fragments' normals and every host query place the sea's
//! surface at the same point.
//!
//! Deep water is opaque and its floor is not drawn: a tile wholly below
//! sea level draws the sea, whose only departure from a true level
//! surface is its lattice's sag through the ellipsoid
//! ([`planet_geo::lattice::lattice_sag_m`]). That sag, not the floor's
//! relief, is the tile's geometric error ([`drawn_bounds`]): the cut spends
//! no nodes refining ground under the sea. Over a partly wet tile the
//! drawn surface departs from the finer one by no more than the floor's
//! own error does (clamping at 0 m moves two heights no further apart).

use crate::TileBounds;
use planet_geo::body::Body;
use planet_packfile::codec::stored_index;

/// The sea's surface, metres of the vertical datum the ground is stored in.
pub const SEA_LEVEL_M: f32 = 0.0;

/// The surface class the classes give the open sea.
pub const OCEAN_CLASS: u8 = 1;
/// The surface class of land: what an edit marks ground it lowered below
/// sea level ([`keep_edits_dry`]).
pub const LAND_CLASS: u8 = 2;

/// Whether `body` has a sea (the Earth; the Moon and Mars have none).
pub fn has_sea(body: &Body) -> bool {
    body.name().eq_ignore_ascii_case("earth")
}

/// Whether a stored sample of `height` metres and surface `class` (0 where
/// the ground holds no classes) lies under the sea.
pub fn under_sea(height: f32, class: u8) -> bool {
    height < SEA_LEVEL_M && (class == 0 || class == OCEAN_CLASS)
}

/// The surface drawn at a stored sample: the sea's over a sample under
/// it, the ground's elsewhere. Bodies without a sea draw the ground.
pub fn drawn_height(sea: bool, height: f32, class: u8) -> f32 {
    if sea && under_sea(height, class) { SEA_LEVEL_M } else { height }
}

/// A tile's drawn heights, in stored order: [`drawn_height`] of each sample.
pub fn drawn_heights(sea: bool, heights: &[f32], classes: Option<&[u8]>) -> Vec<f32> {
    let class = |k: usize| classes.map_or(0, |c| c[k]);
    heights.iter().enumerate().map(|(k, &h)| drawn_height(sea, h, class(k))).collect()
}

/// Marks land ([`LAND_CLASS`]) every sample an edit took from dry ground
/// (`before`) to under the sea (`after`): the sea is where the data puts
/// it, and a crater dug below 0 m into dry ground is a hole, not a bay
/// (nothing here knows whether it reaches the open sea, so it never
/// floods). Classes are made, all unclassified, only where one is needed.
pub fn keep_edits_dry(before: &[f32], after: &[f32], classes: &mut Option<Vec<u8>>) {
    for (k, (&was, &now)) in before.iter().zip(after).enumerate() {
        let class = classes.as_ref().map_or(0, |c| c[k]);
        if !under_sea(was, class) && under_sea(now, class) {
            classes.get_or_insert_with(|| vec![0; after.len()])[k] = LAND_CLASS;
        }
    }
}

/// Bounds of the surface drawn over a tile with ground bounds `ground`:
/// raised to the sea's surface where any sample may lie under it (the
/// lowest stays: a lake or a depression below sea level is drawn where it
/// lies), and, for a tile wholly below sea level, the error of the sea's
/// lattice alone (`sag_m`) in place of the floor's.
pub fn drawn_bounds(sea: bool, ground: TileBounds, sag_m: f64) -> TileBounds {
    let level = f64::from(SEA_LEVEL_M);
    if !sea || ground.min_elevation >= level {
        return ground;
    }
    let mut drawn = ground;
    drawn.max_elevation = drawn.max_elevation.max(level);
    if ground.max_elevation < level {
        drawn.geometric_error = sag_m;
    }
    drawn
}

/// The ground and the water over it at one point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Surface {
    /// The ground (the sea floor under water), metres.
    pub ground_m: f64,
    /// The water's surface, where the point is under water.
    pub water_m: Option<f64>,
}

impl Surface {
    /// What a body dropped from above meets: the water, or the ground.
    pub fn top_m(&self) -> f64 {
        self.water_m.map_or(self.ground_m, |w| w.max(self.ground_m))
    }

    /// How deep the water is (0 on dry ground).
    pub fn depth_m(&self) -> f64 {
        self.top_m() - self.ground_m
    }
}

/// The [`Surface`] at fractional stored coordinates `u, v` of a tile's
/// `heights` and `classes`: the ground bilinear, the drawn surface bilinear
/// over the drawn samples (as the renderer blends them), under water where
/// the nearest sample is under the sea.
pub fn surface_at(sea: bool, heights: &[f32], classes: Option<&[u8]>, u: f64, v: f64) -> Surface {
    let ground_m = crate::bilinear(heights, u, v);
    if !sea {
        return Surface { ground_m, water_m: None };
    }
    let class_at = |i: i32, j: i32| classes.map_or(0, |c| c[stored_index(i, j)]);
    let drawn_at = |i: i32, j: i32| drawn_height(sea, heights[stored_index(i, j)], class_at(i, j));
    let last = planet_geo::address::TILE_CELLS as f64;
    let (u0, v0) = (u.floor().clamp(-1.0, last), v.floor().clamp(-1.0, last));
    let (fu, fv) = (u - u0, v - v0);
    let (i, j) = (u0 as i32, v0 as i32);
    let bottom = f64::from(drawn_at(i, j)) * (1.0 - fu) + f64::from(drawn_at(i + 1, j)) * fu;
    let top = f64::from(drawn_at(i, j + 1)) * (1.0 - fu) + f64::from(drawn_at(i + 1, j + 1)) * fu;
    let drawn = bottom * (1.0 - fv) + top * fv;
    let nearest = |w: f64| w.round().clamp(-1.0, last + 1.0) as i32;
    let (ni, nj) = (nearest(u), nearest(v));
    let wet = under_sea(heights[stored_index(ni, nj)], class_at(ni, nj));
    Surface { ground_m, water_m: wet.then_some(drawn.max(ground_m)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Provenance;
    use planet_geo::address::TILE_STORED_SAMPLE_COUNT;

    fn bounds(min: f64, max: f64, error: f64) -> TileBounds {
        TileBounds {
            min_elevation: min,
            max_elevation: max,
            geometric_error: error,
            provenance: Provenance::Measured,
            voids: false,
        }
    }

    #[test]
    fn the_sea_covers_ocean_and_unclassified_ground_below_sea_level_only() {
        let cases: [(f32, u8, f32); 7] = [
            (-4000.0, 0, 0.0), // unclassified sea floor
            (-4000.0, 1, 0.0), // the classes' ocean
            (-28.0, 3, -28.0), // a lake below sea level keeps its surface
            (-5.0, 2, -5.0),   // a polder stays dry
            (12.0, 1, 12.0),   // ocean class above 0 m: the stored height
            (0.0, 0, 0.0),     // the shore
            (350.0, 0, 350.0), // land
        ];
        for (height, class, drawn) in cases {
            assert_eq!(drawn_height(true, height, class), drawn, "{height} m, class {class}");
            assert_eq!(drawn_height(false, height, class), height, "no sea: {height} m, class {class}");
        }
    }

    #[test]
    fn a_tile_wholly_under_the_sea_costs_only_the_sea_lattice_sag() {
        let deep = drawn_bounds(true, bounds(-5200.0, -3100.0, 480.0), 0.25);
        assert_eq!((deep.min_elevation, deep.max_elevation, deep.geometric_error), (-5200.0, 0.0, 0.25));
        let coast = drawn_bounds(true, bounds(-300.0, 900.0, 40.0), 0.25);
        assert_eq!((coast.min_elevation, coast.max_elevation, coast.geometric_error), (-300.0, 900.0, 40.0));
        let land = bounds(100.0, 900.0, 40.0);
        assert_eq!(drawn_bounds(true, land, 0.25), land);
        let moon = bounds(-5200.0, -3100.0, 480.0);
        assert_eq!(drawn_bounds(false, moon, 0.25), moon);
    }

    #[test]
    fn an_edit_digs_holes_in_dry_ground_and_leaves_the_sea_where_it_was() {
        let before = [5.0f32, 0.0, -30.0, -30.0, 12.0];
        let after = [5.0f32, -4.0, -34.0, 3.0, 12.0];
        let mut classes = None;
        keep_edits_dry(&before, &after, &mut classes);
        // The dug shore stays dry; the deepened sea floor and the new
        // island need no class.
        assert_eq!(classes, Some(vec![0, LAND_CLASS, 0, 0, 0]));
        let mut untouched = None;
        keep_edits_dry(&before, &before, &mut untouched);
        assert_eq!(untouched, None, "no classes made where no edit crossed sea level");
    }

    #[test]
    fn a_point_over_the_sea_has_its_floor_its_surface_and_its_depth() {
        let mut heights = vec![-40.0f32; TILE_STORED_SAMPLE_COUNT];
        // Land from column 64 on: a beach rising 1 m a sample.
        for j in -1..=129 {
            for i in 64..=129 {
                heights[stored_index(i, j)] = (i - 64) as f32;
            }
        }
        let open = surface_at(true, &heights, None, 20.25, 30.5);
        assert_eq!(open, Surface { ground_m: -40.0, water_m: Some(0.0) });
        assert_eq!((open.top_m(), open.depth_m()), (0.0, 40.0));
        let dry = surface_at(true, &heights, None, 70.0, 30.0);
        assert_eq!((dry.water_m, dry.top_m(), dry.depth_m()), (None, 6.0, 0.0));
        // Between the last wet sample (-40 m, drawn at 0 m) and the shore
        // (0 m) the drawn surface is level; the floor is their blend.
        let shore = surface_at(true, &heights, None, 63.4, 30.0);
        assert_eq!(shore.water_m, Some(0.0));
        assert!((shore.ground_m - -24.0).abs() < 1e-4, "{shore:?}");
        let moon = surface_at(false, &heights, None, 20.25, 30.5);
        assert_eq!((moon.water_m, moon.top_m()), (None, -40.0));
        let lake = surface_at(true, &heights, Some(&vec![3u8; TILE_STORED_SAMPLE_COUNT]), 20.0, 30.0);
        assert_eq!(lake.water_m, None, "a lake's surface is its stored height");
    }
}
