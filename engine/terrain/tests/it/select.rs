//! Cut selection, culling, the crossing from inertial to body-fixed axes and residency, without a GPU.

use crate::support;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use glam::DVec3;
use planet_terrain::camera::{BodyRotation, View};
use planet_terrain::geo::cube::{direction_to_face_grid, face_grid_to_direction};
use planet_terrain::geo::{BoundingSphere, TangentBox};
use planet_terrain::ground::{HeightSource, PackSource, ProceduralSource, sample_ground};
use planet_terrain::lod::cut::OUT_OF_VIEW_WEIGHT;
use planet_terrain::lod::residency::{FramePlan, Upload};
use planet_terrain::lod::{Culled, Residency, ResidencySettings, SelectionSettings, UvRect, select};
use planet_terrain::pack::{Codec, Pack};
use planet_terrain::{Body, Geodetic, MAX_DEPTH, TileAddress};
use proptest::prelude::*;

/// splitmix64, for reproducible random cameras and directions.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn direction(&mut self) -> DVec3 {
        loop {
            let v = DVec3::new(self.uniform(-1.0, 1.0), self.uniform(-1.0, 1.0), self.uniform(-1.0, 1.0));
            if (1e-6..1.0).contains(&v.length_squared()) {
                return v.normalize();
            }
        }
    }
}

/// A camera `altitude` metres above the ground at a random place, looking
/// in a random direction between straight down and the horizon.
fn camera(source: &dyn HeightSource, rng: &mut Rng, altitude: f64) -> View {
    let lat = rng.uniform(-89.0, 89.0);
    let lon = rng.uniform(-180.0, 180.0);
    let ground = sample_ground(source, Geodetic::from_degrees(lat, lon, 0.0), 12).unwrap().elevation_m;
    let at = Geodetic::from_degrees(lat, lon, ground + altitude);
    View::looking_from(
        source.body(),
        at,
        rng.uniform(0.0, 360.0),
        rng.uniform(-90.0, 0.0),
        60f64.to_radians(),
        (1920, 1080),
    )
}

/// How many nodes of a cut contain each of `count` random directions.
fn check_exact_cover(nodes: &HashSet<TileAddress>, rng: &mut Rng, count: usize) {
    let deepest = nodes.iter().map(|t| t.depth()).max().unwrap();
    for _ in 0..count {
        let d = rng.direction();
        let (face, s, t) = direction_to_face_grid(d);
        let mut containing = 0;
        for depth in 0..=deepest {
            let n = f64::from(1u32 << depth);
            let cell = |c: f64| (((c + 1.0) * 0.5 * n).floor() as u32).min((1u32 << depth) - 1);
            let tile = TileAddress::new(face.index(), depth, cell(s), cell(t)).unwrap();
            containing += usize::from(nodes.contains(&tile));
        }
        assert_eq!(containing, 1, "direction {d} lies in {containing} nodes");
    }
}

fn procedural() -> ProceduralSource {
    ProceduralSource::new(Body::earth(), 11)
}

#[test]
fn every_cut_covers_the_body_exactly_once() {
    let source = procedural();
    let mut rng = Rng(1);
    for altitude in [40_000_000.0, 400_000.0, 10_000.0, 100.0, 2.0] {
        for budget in [64, 1024, 4096] {
            let view = camera(&source, &mut rng, altitude);
            let settings = SelectionSettings { target_error_px: 1.0, node_budget: budget, near_m: 0.1 };
            let cut = select(&source, &view, &settings).unwrap();
            assert!(cut.nodes.len() <= budget, "budget {budget} exceeded: {}", cut.nodes.len());
            let set: HashSet<TileAddress> = cut.nodes.iter().map(|n| n.tile).collect();
            assert_eq!(set.len(), cut.nodes.len());
            check_exact_cover(&set, &mut rng, 100_000);
        }
    }
}

#[test]
fn the_effective_error_falls_as_the_budget_grows_and_is_honest() {
    let source = procedural();
    let mut rng = Rng(2);
    for altitude in [400_000.0, 10_000.0, 100.0] {
        let view = camera(&source, &mut rng, altitude);
        let mut previous = f64::INFINITY;
        for budget in [16, 64, 256, 1024, 4096, 16384] {
            let cut =
                select(&source, &view, &SelectionSettings { target_error_px: 0.5, node_budget: budget, near_m: 0.1 })
                    .unwrap();
            let e = cut.effective_screen_error_px;
            assert!(e <= previous, "altitude {altitude}: budget {budget} gives {e} > {previous}");
            // The effective error is the largest error left where the cut
            // is drawn; out of view a node holds a weighted share of it.
            let largest = cut.nodes.iter().filter(|n| n.culled.is_none()).map(|n| n.projected_error_px);
            assert_eq!(e, largest.fold(0.0, f64::max));
            if !cut.stopped_by_budget {
                assert!(e <= 0.5);
                for n in &cut.nodes {
                    let held = if n.culled == Some(Culled::Frustum) { 0.5 / OUT_OF_VIEW_WEIGHT } else { 0.5 };
                    assert!(n.projected_error_px <= held, "{:?} ({:?}): {} px", n.tile, n.culled, n.projected_error_px);
                }
            }
            assert_eq!(cut.statistics.nodes_selected, cut.nodes.len());
            assert_eq!(cut.statistics.nodes_drawn + cut.statistics.nodes_culled, cut.nodes.len());
            previous = e;
        }
    }
}

#[test]
fn bounding_spheres_hold_every_sample_of_random_tiles() {
    let mut rng = Rng(3);
    for body in [Body::earth(), Body::mars(), Body::custom("flat", [6_378_137.0, 6_300_000.0, 6_000_000.0]).unwrap()] {
        for _ in 0..300 {
            let depth = (rng.next() % 18) as u8;
            let n = 1u64 << depth;
            let tile =
                TileAddress::new((rng.next() % 6) as u8, depth, (rng.next() % n) as u32, (rng.next() % n) as u32)
                    .unwrap();
            let (min, max) = (rng.uniform(-11_000.0, 0.0), rng.uniform(0.0, 9_000.0));
            let sphere = BoundingSphere::of_tile(body.ellipsoid(), tile, min, max);
            let (s0, t0, s1, t1) = tile.grid_bounds();
            for i in 0..=16 {
                for j in 0..=16 {
                    let (s, t) = (s0 + (s1 - s0) * f64::from(i) / 16.0, t0 + (t1 - t0) * f64::from(j) / 16.0);
                    let d = face_grid_to_direction(tile.face(), s, t);
                    for h in [min, max, 0.5 * (min + max)] {
                        let p = body.ellipsoid().point_from_direction(d, h);
                        assert!(
                            (p - sphere.centre).length() <= sphere.radius,
                            "{} {tile}: a sample lies outside the sphere",
                            body.name()
                        );
                    }
                }
            }
        }
    }
}

/// The tangent box holds every sample of a tile, at the tile's extreme
/// elevations and between them, on three ellipsoids and at every depth it
/// is made for; and the distance selection takes from it is never more
/// than the distance to a sample.
#[test]
fn tangent_boxes_hold_every_sample_of_random_tiles() {
    let mut rng = Rng(5);
    let mut made = 0;
    for body in [Body::earth(), Body::mars(), Body::custom("flat", [6_378_137.0, 6_300_000.0, 6_000_000.0]).unwrap()] {
        for _ in 0..400 {
            let depth = 4 + (rng.next() % 24) as u8;
            let n = 1u64 << depth;
            let tile =
                TileAddress::new((rng.next() % 6) as u8, depth, (rng.next() % n) as u32, (rng.next() % n) as u32)
                    .unwrap();
            let (min, max) = (rng.uniform(-11_000.0, 0.0), rng.uniform(0.0, 9_000.0));
            let Some(tangent_box) = TangentBox::of_tile(body.ellipsoid(), tile, min, max) else {
                assert!(depth <= 6, "{tile}: no box at depth {depth}");
                continue;
            };
            made += 1;
            let camera = body.ellipsoid().point_from_direction(
                face_grid_to_direction(tile.face(), rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0)),
                rng.uniform(0.0, 20_000.0),
            );
            let (s0, t0, s1, t1) = tile.grid_bounds();
            for i in 0..=32 {
                for j in 0..=32 {
                    let (s, t) = (s0 + (s1 - s0) * f64::from(i) / 32.0, t0 + (t1 - t0) * f64::from(j) / 32.0);
                    let d = face_grid_to_direction(tile.face(), s, t);
                    for h in [min, max, rng.uniform(min, max)] {
                        let p = body.ellipsoid().point_from_direction(d, h);
                        assert!(tangent_box.contains(p), "{} {tile}: a sample lies outside the box", body.name());
                        assert!(tangent_box.distance(camera) <= (p - camera).length());
                    }
                }
            }
        }
    }
    assert!(made > 1000, "boxes made for {made} tiles");
}

/// True if the segment from `camera` to `p` passes through the sphere of
/// radius `r` at the origin before reaching `p`.
fn occluded(camera: DVec3, p: DVec3, r: f64) -> bool {
    let d = p - camera;
    let t = -camera.dot(d) / d.length_squared();
    t > 0.0 && t < 1.0 && (camera + d * t).length() < r
}

#[test]
fn culling_removes_only_what_cannot_be_seen() {
    let source = procedural();
    let mut rng = Rng(4);
    let mut culled_total = 0;
    for altitude in [2_000_000.0, 400_000.0, 10_000.0, 100.0] {
        for _ in 0..4 {
            let view = camera(&source, &mut rng, altitude);
            let cut = select(&source, &view, &SelectionSettings::default()).unwrap();
            let lowest = cut.nodes.iter().map(|n| n.bounds.min_elevation).fold(0.0, f64::min);
            let occluder = source.body().ellipsoid().min_radius() + lowest;
            for node in cut.nodes.iter().filter(|n| n.culled.is_some()) {
                culled_total += 1;
                let (s0, t0, s1, t1) = node.tile.grid_bounds();
                for i in 0..=4 {
                    for j in 0..=4 {
                        let d = face_grid_to_direction(
                            node.tile.face(),
                            s0 + (s1 - s0) * f64::from(i) / 4.0,
                            t0 + (t1 - t0) * f64::from(j) / 4.0,
                        );
                        for h in [node.bounds.min_elevation, node.bounds.max_elevation] {
                            let p = source.body().ellipsoid().point_from_direction(d, h);
                            match node.culled {
                                Some(Culled::Frustum) => {
                                    if let Some((x, y)) = view.project(p) {
                                        let inside = (0.0..=1920.0).contains(&x) && (0.0..=1080.0).contains(&y);
                                        assert!(!inside, "{} frustum-culled but projects to ({x}, {y})", node.tile);
                                    }
                                }
                                Some(Culled::Horizon) => assert!(
                                    occluded(view.position, p, occluder),
                                    "{} horizon-culled but visible",
                                    node.tile
                                ),
                                None => unreachable!(),
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(culled_total > 100, "the views cull something: {culled_total}");
}

#[test]
fn a_camera_over_a_landmark_looking_down_sees_it_at_the_centre() {
    let earth = Body::earth();
    for (lat, lon) in [(27.988, 86.925), (-33.9, 18.4), (0.0, 0.0), (0.0, 180.0), (89.5, -45.0), (-78.0, 166.7)] {
        for heading in [0.0, 37.0, 270.0] {
            let view = View::looking_from(
                &earth,
                Geodetic::from_degrees(lat, lon, 1_000_000.0),
                heading,
                -90.0,
                1.0,
                (800, 600),
            );
            let target = earth.ellipsoid().geodetic_to_point(Geodetic::from_degrees(lat, lon, 0.0));
            let (x, y) = view.project(target).unwrap();
            assert!(
                (x - 400.0).abs() < 1e-6 && (y - 300.0).abs() < 1e-6,
                "({lat}, {lon}) heading {heading}: at ({x}, {y})"
            );
        }
    }
    // Heading 0 looks north: a point north of the camera is above centre.
    let view = View::looking_from(&earth, Geodetic::from_degrees(10.0, 20.0, 100.0), 0.0, 0.0, 1.0, (800, 600));
    let north = earth.ellipsoid().geodetic_to_point(Geodetic::from_degrees(10.1, 20.0, 100.0));
    let (x, _) = view.project(north).unwrap();
    assert!((x - 400.0).abs() < 1.0, "north is straight ahead: {x}");
    let east = earth.ellipsoid().geodetic_to_point(Geodetic::from_degrees(10.0, 20.1, 100.0));
    assert!(view.project(east).unwrap().0 > 400.0, "east is to the right");
}

#[test]
fn the_body_turns_east_under_an_inertial_camera() {
    let earth = Body::earth();
    let rotation = BodyRotation::EARTH;
    let above_zero = earth.ellipsoid().geodetic_to_point(Geodetic::from_degrees(0.0, 0.0, 1_000_000.0));
    let down = glam::DQuat::from_rotation_arc(glam::DVec3::NEG_Z, -above_zero.normalize());
    let at = |t: f64| {
        let view = View::in_body_axes(&rotation, t, above_zero, down, 1.0, (100, 100));
        earth.ellipsoid().point_to_geodetic(view.position)
    };
    assert!(at(0.0).longitude.abs() < 1e-12, "longitude 0 faces inertial +X at the epoch");
    // A quarter turn later the ground below has moved east, so the camera
    // hangs over 90 W.
    let quarter = at(86_164.090_5 / 4.0);
    assert!((quarter.longitude.to_degrees() + 90.0).abs() < 1e-6, "{}", quarter.longitude.to_degrees());
}

#[test]
fn uv_rectangles_map_a_node_into_its_ancestor() {
    let tile: TileAddress = "2/5/13/22".parse().unwrap();
    let ancestor = tile.ancestor_at(3).unwrap();
    let uv = UvRect::within(tile, ancestor);
    assert_eq!(uv.scale, 0.25);
    assert_eq!(uv.offset, [0.25, 0.5]);
    assert_eq!(UvRect::within(tile, tile), UvRect::FULL);
}

/// One frame's checks; `held` is the slot table as the test last saw it.
fn check_frame(
    frame: u64,
    settings: &ResidencySettings,
    residency: &Residency,
    nodes: &[(TileAddress, f64)],
    plan: &FramePlan,
    held: &mut HashMap<usize, (TileAddress, Option<u64>)>,
) {
    assert!(plan.upload_bytes <= settings.upload_budget_bytes);
    assert_eq!(plan.upload_bytes, plan.uploads.len() * settings.tile_bytes);
    assert_eq!(plan.covers_body, plan.dropped.is_empty());
    assert_eq!(plan.bindings.len() + plan.dropped.len(), nodes.len());
    for b in &plan.bindings {
        assert!(b.source.contains(b.tile), "{} bound to {} which is not an ancestor", b.tile, b.source);
        let (held_tile, _) = held[&b.slot];
        assert_eq!(held_tile, b.source, "bound slot {} holds {held_tile}", b.slot);
        assert_eq!(b.uv, UvRect::within(b.tile, b.source));
    }
    for d in &plan.dropped {
        assert!(
            (0..=d.depth()).all(|k| !held.values().any(|(t, _)| *t == d.ancestor_at(k).unwrap())),
            "{d} dropped with an ancestor resident"
        );
    }
    for b in &plan.bindings {
        held.get_mut(&b.slot).unwrap().1 = Some(frame);
    }
    for Upload { tile, slot, restage } in &plan.uploads {
        if *restage {
            assert_eq!(held[slot].0, *tile, "re-staging goes into the slot the tile holds");
            continue;
        }
        if let Some((old, last_bound)) = held.get(slot) {
            assert_ne!(old.depth(), 0, "a pinned root was evicted");
            if let Some(f) = last_bound {
                assert!(f + settings.frames_in_flight <= frame, "slot {slot} bound at frame {f} evicted at {frame}");
            }
        }
        held.insert(*slot, (*tile, None));
    }
    assert_eq!(residency.resident(), held.len());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn residency_keeps_its_promises(frames in prop::collection::vec(prop::collection::vec((0u8..6, 0u8..6, any::<u32>(), any::<u32>(), 0.0..100.0f64), 1..40), 1..40),
                                     slots in 6usize..40, budget_tiles in 1usize..6, in_flight in 1u64..4, restages in prop::collection::vec(any::<u32>(), 0..10)) {
        let settings = ResidencySettings { slots, frames_in_flight: in_flight, upload_budget_bytes: budget_tiles * 1000, tile_bytes: 1000 };
        let mut residency = Residency::new(settings);
        let mut held = HashMap::new();
        for (frame, nodes) in frames.iter().enumerate() {
            let frame = frame as u64;
            let nodes: Vec<(TileAddress, f64)> = nodes
                .iter()
                .map(|&(f, d, x, y, e)| (TileAddress::new(f, d, x % (1 << d), y % (1 << d)).unwrap(), e))
                .collect();
            if let Some(&r) = restages.get(frame as usize) {
                let resident: Vec<TileAddress> = held.values().map(|(t, _)| *t).collect();
                if !resident.is_empty() {
                    residency.request_restage(resident[r as usize % resident.len()]);
                }
            }
            let plan = residency.plan(frame, &nodes);
            check_frame(frame, &settings, &residency, &nodes, &plan, &mut held);
            // Re-staging is served before any miss.
            let first_miss = plan.uploads.iter().position(|u| !u.restage).unwrap_or(plan.uploads.len());
            prop_assert!(plan.uploads[first_miss..].iter().all(|u| !u.restage));
            // A slot is written at most once per frame (regression: a slot
            // filled earlier in the same plan was evicted again by the next
            // miss, and the renderer saw two writes to one layer).
            let mut written = std::collections::HashSet::new();
            prop_assert!(plan.uploads.iter().all(|u| written.insert(u.slot)), "{:?}", plan.uploads);
        }
    }
}

#[test]
fn a_streaming_body_is_covered_once_its_roots_arrive() {
    let settings = ResidencySettings { slots: 64, frames_in_flight: 2, upload_budget_bytes: 3000, tile_bytes: 1000 };
    let mut residency = Residency::new(settings);
    let nodes: Vec<(TileAddress, f64)> =
        TileAddress::roots().iter().flat_map(|r| r.children().unwrap()).map(|t| (t, 5.0)).collect();
    let first = residency.plan(0, &nodes);
    assert!(!first.covers_body && first.dropped.len() == 24);
    assert_eq!(first.uploads.len(), 3, "the budget allows three uploads, roots first");
    assert!(first.uploads.iter().all(|u| u.tile.depth() == 0));
    let second = residency.plan(1, &nodes);
    assert!(!second.covers_body);
    let third = residency.plan(2, &nodes);
    assert!(third.covers_body, "all six roots resident: every node binds its root");
    assert!(third.bindings.iter().all(|b| b.source.depth() == 0 && b.uv.scale == 0.5));
    // Later frames bring the nodes' own tiles.
    let mut frame = 3;
    while residency.plan(frame, &nodes).bindings.iter().any(|b| b.source != b.tile) {
        frame += 1;
        assert!(frame < 20);
    }
}

#[test]
fn selection_over_a_pack_stops_refining_resampled_ground() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.planetpack");
    support::write_pack(&path, Codec::Heights, &support::tiles_to_depth(2));
    let source = PackSource::new(Arc::new(Pack::open(&path).unwrap()));
    let mut rng = Rng(5);
    let view = camera(&source, &mut rng, 100.0);
    let cut =
        select(&source, &view, &SelectionSettings { target_error_px: 1.0, node_budget: 1 << 20, near_m: 0.1 }).unwrap();
    assert!(!cut.stopped_by_budget, "resampled ground's error decays, so the target is met");
    assert!(cut.nodes.iter().all(|n| n.tile.depth() < MAX_DEPTH));
    assert!(cut.nodes.len() < 20_000, "{}", cut.nodes.len());
}

// ---- Balance and seams -------------------------------------------------------

use planet_terrain::Edge;
use planet_terrain::geo::cube::sample_direction;
use planet_terrain::ground::{AnalyticSource, Provenance, SourceError, SourceTile, TileBounds};
use planet_terrain::lod::EdgeRelation;
use planet_terrain::lod::record::edge_index;

/// Smooth analytic ground with Earth-like relief and a geometric error that
/// shrinks with depth, cheap enough to evaluate per sample.
fn analytic() -> AnalyticSource {
    AnalyticSource::new(
        Body::earth(),
        |d| f64::from(analytic_height(d)),
        |tile| TileBounds::invented(-3900.0, 3900.0, 4000.0 / 4f64.powi(i32::from(tile.depth()))),
    )
}

fn analytic_height(d: DVec3) -> f32 {
    (3000.0 * (5.0 * d.x).sin() * (4.0 * d.y).cos() + 800.0 * (40.0 * d.z).sin() + 30.0 * (900.0 * d.x).sin()) as f32
}

/// A tile's stored heights with only the border rows and columns filled
/// (all an edge vertex reads); the interior is finite and unused.
fn border_heights(tile: TileAddress) -> Vec<f32> {
    let n = 131usize;
    let mut h = vec![0.0f32; n * n];
    for k in 0..=128i32 {
        for (i, j) in [(k, 0), (k, 128), (0, k), (128, k)] {
            h[(j as usize + 1) * n + (i as usize + 1)] = analytic_height(sample_direction(tile.sample(i, j)));
        }
    }
    h
}

#[test]
fn neighbours_differ_by_at_most_one_level_and_know_it() {
    let source = analytic();
    let mut rng = Rng(6);
    for altitude in [20_000_000.0, 400_000.0, 10_000.0, 100.0, 2.0] {
        for budget in [200, 2000] {
            let view = camera(&source, &mut rng, altitude);
            let cut =
                select(&source, &view, &SelectionSettings { target_error_px: 1.0, node_budget: budget, near_m: 0.1 })
                    .unwrap();
            assert!(cut.nodes.len() <= budget);
            let set: HashMap<TileAddress, usize> = cut.nodes.iter().enumerate().map(|(k, n)| (n.tile, k)).collect();
            check_exact_cover(&set.keys().copied().collect(), &mut rng, 20_000);
            for node in &cut.nodes {
                for edge in Edge::ALL {
                    let t = node.tile.neighbour(edge).address;
                    let expected = if set.contains_key(&t) {
                        EdgeRelation::Same
                    } else if t.parent().is_some_and(|p| set.contains_key(&p)) {
                        EdgeRelation::Coarser
                    } else {
                        // The two children of t along the shared edge are leaves.
                        let shared = node.tile.neighbour(edge).shared_edge;
                        let along_edge = t
                            .children()
                            .unwrap()
                            .into_iter()
                            .filter(|c| c.neighbour(shared).address.parent() != Some(t))
                            .count();
                        let touching = t
                            .children()
                            .unwrap()
                            .into_iter()
                            .filter(|c| c.neighbour(shared).address.parent() != Some(t) && set.contains_key(c))
                            .count();
                        assert_eq!(
                            (along_edge, touching),
                            (2, 2),
                            "{} across {edge:?}: neighbours more than one level apart",
                            node.tile
                        );
                        EdgeRelation::Finer
                    };
                    assert_eq!(node.edges[edge_index(edge)], expected, "{} across {edge:?}", node.tile);
                }
            }
        }
    }
}

#[test]
fn seams_close_from_orbit_to_two_metres() {
    let source = analytic();
    let mut rng = Rng(7);
    let views: Vec<View> = (0..240)
        .map(|_| {
            let altitude = 10f64.powf(rng.uniform(0.3, 7.3)); // 2 m .. 20,000 km
            camera(&source, &mut rng, altitude)
        })
        .collect();
    let figures = crate::seams::seam_gaps(&source, &border_heights, &views, 1024);
    println!("{figures:?}");
    assert!(figures.coarse_fine > 2000, "the cameras produce level changes: {}", figures.coarse_fine);
    assert!(figures.worst_px < 0.01, "worst gap {} px", figures.worst_px);
    assert!(figures.worst_near_m < 1e-3, "worst gap within 1 km {} m", figures.worst_near_m);
}

// ---- The cut, bit for bit, against the reference algorithm -------------------

use crate::select_reference::select_reference;
// The exact frame-to-frame selector (`Selector` follows the last cut instead).
use planet_terrain::lod::{Cut, FreshSplitLimit, SelectedNode, Selector};

/// Ground whose bounds and errors vary from tile to tile (a hash of the
/// address), with measured colour to depth 9: every branch of the error and
/// the heap's tie-breaking gets exercised, which the procedural ground (one
/// bound per depth) does not. With a spike, only the spike's ancestors have
/// error (a large one), so refinement runs down to `MAX_DEPTH` there.
#[derive(Debug)]
struct Patchy {
    body: Body,
    spike: Option<TileAddress>,
}

impl HeightSource for Patchy {
    fn parts(&self) -> Vec<&dyn HeightSource> {
        Vec::new()
    }
    fn body(&self) -> &Body {
        &self.body
    }
    fn tile(&self, _tile: TileAddress) -> Result<SourceTile, SourceError> {
        unreachable!("selection reads bounds only")
    }
    fn bounds(&self, tile: TileAddress, _reads: planet_terrain::ground::Reads) -> Result<TileBounds, SourceError> {
        let mut rng = Rng(tile.identity());
        let (a, b) = (rng.uniform(-4000.0, 500.0), rng.uniform(0.0, 5000.0));
        let depth = i32::from(tile.depth());
        let error = match self.spike {
            Some(spike) => f64::from(u8::from(tile.contains(spike))) * 1000.0,
            // Some tiles are flat (no error at all): ties at zero.
            None if rng.next().is_multiple_of(7) => 0.0,
            None => rng.uniform(0.2, 1.0) * 3000.0 / 2f64.powi(depth),
        };
        Ok(TileBounds {
            min_elevation: a,
            max_elevation: a + b,
            geometric_error: error,
            provenance: Provenance::Invented,
            voids: false,
        })
    }
    fn data_depth(&self) -> Option<u8> {
        Some(9)
    }
    fn colour_data_depth(&self) -> Option<u8> {
        Some(9)
    }
}

/// Every field of two cuts, floats by their bits; the selection time aside.
fn assert_same_cut(label: &str, got: &Cut, want: &Cut) {
    let node_bits = |n: &SelectedNode| {
        let b = n.bounds;
        let s = n.sphere;
        (
            n.tile,
            [b.min_elevation, b.max_elevation, b.geometric_error].map(f64::to_bits),
            b.provenance,
            [s.centre.x, s.centre.y, s.centre.z, s.radius].map(f64::to_bits),
            n.projected_error_px.to_bits(),
            n.culled,
            n.edges,
        )
    };
    assert_eq!(got.nodes.len(), want.nodes.len(), "{label}: node count");
    for (k, (g, w)) in got.nodes.iter().zip(&want.nodes).enumerate() {
        assert_eq!(node_bits(g), node_bits(w), "{label}: node {k}");
    }
    assert_eq!(got.effective_screen_error_px.to_bits(), want.effective_screen_error_px.to_bits(), "{label}: effective");
    assert_eq!(got.stopped_by_budget, want.stopped_by_budget, "{label}: stopped by budget");
    let stats = |s: &planet_terrain::lod::SelectionStatistics| {
        (s.nodes_selected, s.nodes_culled, s.nodes_drawn, s.nodes_evaluated, s.effective_screen_error_pixels.to_bits())
    };
    assert_eq!(stats(&got.statistics), stats(&want.statistics), "{label}: statistics");
}

/// A camera `altitude` metres above the ground at `lat`/`lon` (above the
/// ellipsoid where the source has no tiles to sample).
fn view_over(source: &dyn HeightSource, lat: f64, lon: f64, altitude: f64, heading: f64, pitch: f64) -> View {
    let ground = match source.data_depth() {
        Some(_) => 0.0,
        None => sample_ground(source, Geodetic::from_degrees(lat, lon, 0.0), 14).unwrap().elevation_m,
    };
    View::looking_from(
        source.body(),
        Geodetic::from_degrees(lat, lon, ground.max(0.0) + altitude),
        heading,
        pitch,
        60f64.to_radians(),
        (1920, 1080),
    )
}

#[test]
fn the_cut_matches_the_reference_bit_for_bit() {
    let bench = ProceduralSource::new(Body::earth(), 2026);
    let patchy = Patchy { body: Body::earth(), spike: None };
    let (face, s, t) = direction_to_face_grid(Geodetic::from_degrees(1.0, 2.0, 0.0).normal());
    let cell = |c: f64| ((c + 1.0) * 0.5 * f64::from(1u32 << MAX_DEPTH)) as u32;
    let spike = TileAddress::new(face.index(), MAX_DEPTH, cell(s), cell(t)).unwrap();
    let endless = Patchy { body: Body::mars(), spike: Some(spike) };
    let corner = DVec3::ONE.normalize();
    let corner_lat = corner.z.asin().to_degrees();
    let mut views: Vec<(String, &dyn HeightSource, View)> = Vec::new();
    // The select bench's views.
    for altitude in [400_000.0, 10_000.0, 100.0, 2.0] {
        views.push((format!("bench {altitude} m"), &bench, view_over(&bench, 46.5, 8.0, altitude, 30.0, -30.0)));
    }
    // A cube corner and a face edge, looking down and along.
    views.push(("corner".into(), &bench, view_over(&bench, corner_lat, 45.0, 1_000.0, 10.0, -60.0)));
    views.push(("face edge".into(), &bench, view_over(&bench, 0.0, 45.0, 300.0, 90.0, -10.0)));
    // Culling: level at the ground (frustum and horizon) and the far side
    // of the body from high orbit.
    views.push(("level".into(), &bench, view_over(&bench, -20.0, 130.0, 2_000.0, 200.0, 0.0)));
    views.push(("orbit".into(), &bench, view_over(&bench, 60.0, -100.0, 30_000_000.0, 0.0, -90.0)));
    views.push(("patchy corner".into(), &patchy, view_over(&patchy, corner_lat, 45.0, 50.0, 135.0, -20.0)));
    views.push(("patchy level".into(), &patchy, view_over(&patchy, 10.0, 10.0, 5_000.0, 0.0, 0.0)));
    // Error that never decays under the camera: refinement reaches MAX_DEPTH.
    views.push(("spike".into(), &endless, view_over(&endless, 1.0, 2.0, 6_000.0, 0.0, -90.0)));
    let mut saw = (false, false, false);
    // One selector through every view, source, body and budget, so its
    // reuse of the last tree meets all of them (and changed bounds).
    let mut selector = Selector::new();
    for (label, source, view) in &views {
        // A tiny budget between others: a selector's last tree is then only
        // the roots. Each view ends on a deep cut, the next one's start.
        for (target, budget) in [(1.0, 1024usize), (0.5, 7), (1.0, 4096), (0.05, 1024), (0.05, 4096), (0.02, 16384)] {
            let settings = SelectionSettings { target_error_px: target, node_budget: budget, near_m: 0.1 };
            let want = select_reference(*source, view, &settings).unwrap();
            let label = format!("{label}, {target} px, budget {budget}");
            assert_same_cut(&label, &select(*source, view, &settings).unwrap(), &want);
            assert_same_cut(&format!("{label}, selector"), &selector.select(*source, view, &settings).unwrap(), &want);
            // Again: everything of this view is in the last tree now.
            assert_same_cut(&format!("{label}, again"), &selector.select(*source, view, &settings).unwrap(), &want);
            saw.0 |= want.nodes.iter().any(|n| n.culled == Some(Culled::Horizon));
            saw.1 |= want.nodes.iter().any(|n| n.tile.depth() == MAX_DEPTH);
            saw.2 |= want.nodes.len() > 3500;
        }
    }
    assert_eq!(saw, (true, true, true), "horizon culling, MAX_DEPTH and a 4k-node cut are all exercised");
}

#[test]
fn a_selector_follows_a_moving_camera_with_the_reference_cut() {
    // A descent from orbit to the ground over a face edge, turning, frame
    // by frame: each frame's cut is the one selection from nothing gives.
    let source = ProceduralSource::new(Body::earth(), 2026);
    let mut selector = Selector::new();
    for budget in [1024, 4096] {
        let settings = SelectionSettings { target_error_px: 0.05, node_budget: budget, near_m: 0.1 };
        for frame in 0..60 {
            let f = f64::from(frame);
            let altitude = 400_000.0 * 0.85f64.powf(f);
            let view = view_over(&source, 0.5 + 0.01 * f, 44.7 + 0.01 * f, altitude, 3.0 * f, -30.0 + 0.3 * f);
            let want = select_reference(&source, &view, &settings).unwrap();
            assert_same_cut(
                &format!("frame {frame}, budget {budget}"),
                &selector.select(&source, &view, &settings).unwrap(),
                &want,
            );
        }
    }
}

/// A selector told to make at most 40 fresh splits a selection: a camera
/// dropped 2 m above the ground gets coarser complete cuts, marked
/// deferred and honest in their error, each deeper than the last, until
/// the cut is `select`'s bit for bit; then, the camera moving on, each
/// frame's cut is deferred or `select`'s.
#[test]
fn a_fresh_split_limit_defers_refinement_and_reaches_the_cut_in_frames() {
    let source = ProceduralSource::new(Body::earth(), 2026);
    let settings = SelectionSettings { target_error_px: 1.0, node_budget: 4096, near_m: 0.1 };
    let view = view_over(&source, 46.5, 8.0, 2.0, 30.0, -10.0);
    let want = select(&source, &view, &settings).unwrap();
    let mut selector = Selector::new();
    selector.set_fresh_split_limit(Some(FreshSplitLimit::Count(40)));
    let mut frames = 0;
    let mut last_error = f64::INFINITY;
    loop {
        frames += 1;
        let got = selector.select(&source, &view, &settings).unwrap();
        if !got.deferred {
            assert_same_cut(&format!("settled after {frames} selections"), &got, &want);
            break;
        }
        assert!(!got.stopped_by_budget, "deferred, not stopped by the budget");
        assert!(got.effective_screen_error_px > want.effective_screen_error_px, "a coarser cut says so");
        assert!(got.effective_screen_error_px <= last_error, "each selection at least as fine as the last");
        last_error = got.effective_screen_error_px;
        assert!(frames < 100, "reaches the cut");
    }
    let splits = (want.statistics.nodes_selected - 6) / 3;
    assert!(frames >= splits / 40, "{frames} selections for {splits} splits at 40 a selection");
    let mut deferred = 0;
    for frame in 0..30 {
        let f = f64::from(frame);
        let view = view_over(&source, 46.5 + 1e-4 * f, 8.0 + 1e-4 * f, 2.0 + 3.0 * f, 30.0 + f, -10.0);
        let got = selector.select(&source, &view, &settings).unwrap();
        if got.deferred {
            deferred += 1;
        } else {
            assert_same_cut(&format!("moving, frame {frame}"), &got, &select(&source, &view, &settings).unwrap());
        }
    }
    assert!(deferred < 30, "the moving camera's cuts settle at times ({deferred} of 30 deferred)");
}

/// A node drawn from its ancestor's tile while its own loads can leave a
/// gap at its edges as wide as the span of what that tile holds and its
/// own ground; the skirts of every node beside it reach that far, and
/// nodes away from it keep their own (regression: sky through the ground
/// 600 m over the Sierra with 1,500 tiles pending, where the skirts were
/// twice each node's own error).
#[test]
fn skirts_beside_a_stand_in_reach_across_its_gap() {
    use planet_terrain::lod::{Binding, build_records};
    let source = procedural();
    let mut rng = Rng(9);
    let view = camera(&source, &mut rng, 20_000.0);
    let settings = SelectionSettings { target_error_px: 1.0, node_budget: 600, near_m: 0.1 };
    let cut = select(&source, &view, &settings).unwrap();
    let drawn: Vec<usize> = (0..cut.nodes.len()).filter(|&k| cut.nodes[k].culled.is_none()).collect();
    let stand_in = *drawn.iter().find(|&&k| cut.nodes[k].tile.depth() >= 3).expect("a drawn node below the roots");
    let bindings: Vec<Option<Binding>> = cut
        .nodes
        .iter()
        .enumerate()
        .map(|(k, n)| {
            let source = if k == stand_in { n.tile.parent().unwrap() } else { n.tile };
            Some(Binding { tile: n.tile, source, slot: 0, uv: UvRect::within(n.tile, source) })
        })
        .collect();
    let held = |b: &Binding| (b.source != b.tile).then_some((-20_000.0, 20_000.0));
    let records = build_records(source.body().ellipsoid(), &view, &cut, &bindings, held);
    assert_eq!(records.len(), drawn.len());
    let tile = cut.nodes[stand_in].tile;
    // Across an edge of `other`: the stand-in, its parent's tile, or (for a
    // coarser `other`) one of the tiles along that edge.
    let touches = |other: TileAddress, coarser_too: bool| {
        Edge::ALL.iter().any(|&e| {
            let across = other.neighbour(e).address;
            let along = across.children().is_some_and(|c| c.contains(&tile));
            across == tile || across.parent() == Some(tile) || (coarser_too && along)
        }) || Edge::ALL.iter().any(|&e| tile.neighbour(e).address.parent() == Some(other))
    };
    let (mut near, mut far) = (0, 0);
    for (record, &k) in records.iter().zip(&drawn) {
        let other = cut.nodes[k].tile;
        if k == stand_in || touches(other, false) {
            assert!(record.skirt_m >= 40_000.0, "{other} beside the stand-in {tile}: skirt {} m", record.skirt_m);
            near += 1;
        } else if !touches(other, true) {
            assert!(record.skirt_m < 40_000.0, "{other}, away from the stand-in {tile}: skirt {} m", record.skirt_m);
            far += 1;
        }
    }
    assert!(near >= 3 && far > 0, "{near} nodes beside the stand-in, {far} away");
}
