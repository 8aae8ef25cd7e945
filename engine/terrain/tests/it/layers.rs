//! Editable ground: layer shapes, order independence, the journal, scenes,
//! and ground queries against analytic bodies.

use planet_terrain::ground::BoundsAt;
use std::sync::Arc;

use planet_terrain::ground::query::{
    GroundReader, RayHit, collision_patch, depth_for_spacing, keep_above_ground, raycast,
};
use planet_terrain::ground::{AnalyticSource, HeightFunction, HeightSource, locate, sample_directions};
use planet_terrain::layers::{Layer, LayerError, LayerKind, LayerStack, Scene, SceneError, Target};
use planet_terrain::lod::{Residency, ResidencySettings};
use planet_terrain::{Body, Geodetic, TileAddress};

/// Ground that is a plane tilted eastwards (`slope` metres per metre of
/// easting, in the tangent plane at (0, 0)), or flat with slope 0.
fn plane(slope: f64) -> AnalyticSource {
    let body = Body::earth();
    let ellipsoid = *body.ellipsoid();
    let r = slope.abs() * ellipsoid.max_radius();
    AnalyticSource::within(body, move |d| slope * ellipsoid.surface_point_from_direction(d).y, (-r, r), |_| 0.0)
}

fn flat() -> Arc<dyn HeightSource> {
    Arc::new(plane(0.0))
}

fn crater(order: u32, lat: f64, lon: f64, radius_m: f64, depth_m: f64, rim_m: f64) -> Layer {
    Layer { order, kind: LayerKind::Crater { lat, lon, radius_m, depth_m, rim_m } }
}

fn function_with(source: Arc<dyn HeightSource>, layers: &[Layer]) -> HeightFunction {
    let e = *source.body().ellipsoid();
    let mut stack = LayerStack::new();
    for l in layers {
        stack.insert(&e, l.clone()).unwrap();
    }
    HeightFunction::new(source, stack)
}

fn ground(f: &HeightFunction, lat: f64, lon: f64, spacing_m: f64) -> f64 {
    let depth = depth_for_spacing(f, spacing_m);
    GroundReader::new(f, depth).height(Geodetic::from_degrees(lat, lon, 0.0)).unwrap()
}

/// A point `metres` east of (lat, lon) on the surface, as (lat, lon).
fn east_of(lat: f64, lon: f64, metres: f64) -> (f64, f64) {
    let e = *Body::earth().ellipsoid();
    let at = Geodetic::from_degrees(lat, lon, 0.0);
    let enu = planet_terrain::geo::east_north_up(at);
    let p = e.geodetic_to_point(at) + enu.col(0) * metres;
    let g = e.point_to_geodetic(p);
    (g.latitude.to_degrees(), g.longitude.to_degrees())
}

#[test]
fn a_crater_has_its_depth_at_the_centre_and_its_rim_at_its_radius() {
    let f = function_with(flat(), &[crater(1, 46.0, 8.0, 2000.0, 150.0, 40.0)]);
    assert!((ground(&f, 46.0, 8.0, 5.0) + 150.0).abs() < 0.5, "{}", ground(&f, 46.0, 8.0, 5.0));
    let (lat, lon) = east_of(46.0, 8.0, 2000.0);
    assert!((ground(&f, lat, lon, 5.0) - 40.0).abs() < 0.5, "{}", ground(&f, lat, lon, 5.0));
    let (lat, lon) = east_of(46.0, 8.0, 4100.0);
    assert_eq!(ground(&f, lat, lon, 5.0), 0.0, "untouched beyond its footprint");
}

#[test]
fn a_flatten_pad_is_flat_inside_and_untouched_beyond_its_blend() {
    let slope: Arc<dyn HeightSource> = Arc::new(plane(0.02));
    let pad = Layer {
        order: 3,
        kind: LayerKind::Flatten {
            lat: 0.0,
            lon: 0.1,
            radius_m: 500.0,
            target: Target::Elevation(250.0),
            blend_m: 200.0,
        },
    };
    let f = function_with(slope.clone(), std::slice::from_ref(&pad));
    for metres in [-480.0, -200.0, 0.0, 300.0, 480.0] {
        let (lat, lon) = east_of(0.0, 0.1, metres);
        assert!((ground(&f, lat, lon, 2.0) - 250.0).abs() < 0.05, "{metres} m: {}", ground(&f, lat, lon, 2.0));
    }
    let bare = HeightFunction::new(slope, LayerStack::new());
    for metres in [-720.0, 750.0, 2000.0] {
        let (lat, lon) = east_of(0.0, 0.1, metres);
        assert_eq!(ground(&f, lat, lon, 2.0), ground(&bare, lat, lon, 2.0), "{metres} m is beyond the blend");
    }
    // "The footprint's mean": on a uniform slope, the height at its centre.
    let mean = Layer {
        order: 4,
        kind: LayerKind::Flatten { lat: 0.0, lon: 0.1, radius_m: 500.0, target: Target::FootprintMean, blend_m: 200.0 },
    };
    let f = function_with(Arc::new(plane(0.02)), &[mean]);
    let centre = ground(&bare, 0.0, 0.1, 2.0);
    assert!((ground(&f, 0.0, 0.1, 2.0) - centre).abs() < 1.0, "{} vs {centre}", ground(&f, 0.0, 0.1, 2.0));
}

#[test]
fn a_polygon_pad_is_flat_inside_its_polygon() {
    let runway = Layer {
        order: 2,
        kind: LayerKind::PolygonFlatten {
            vertices: vec![(45.0, 7.0), (45.0, 7.03), (45.002, 7.03), (45.002, 7.0)],
            elevation_m: 320.0,
            blend_m: 50.0,
        },
    };
    let f = function_with(Arc::new(plane(0.01)), &[runway]);
    assert!((ground(&f, 45.001, 7.015, 2.0) - 320.0).abs() < 0.05);
    assert!((ground(&f, 45.001, 7.001, 2.0) - 320.0).abs() < 0.05);
    assert!((ground(&f, 45.01, 7.015, 2.0) - 320.0).abs() > 10.0, "outside the polygon the slope shows");
}

#[test]
fn the_composed_ground_is_a_function_of_the_set_of_layers() {
    let layers = vec![
        crater(5, 46.0, 8.0, 3000.0, 200.0, 50.0),
        crater(1, 46.02, 8.03, 1500.0, 80.0, 20.0),
        Layer {
            order: 9,
            kind: LayerKind::Flatten {
                lat: 46.01,
                lon: 8.0,
                radius_m: 800.0,
                target: Target::Elevation(10.0),
                blend_m: 300.0,
            },
        },
        Layer { order: 3, kind: LayerKind::Raise { lat: 45.99, lon: 8.02, radius_m: 4000.0, amount_m: 120.0 } },
        Layer {
            order: 7,
            kind: LayerKind::Flatten {
                lat: 46.0,
                lon: 8.01,
                radius_m: 600.0,
                target: Target::FootprintMean,
                blend_m: 100.0,
            },
        },
    ];
    let source: Arc<dyn HeightSource> = Arc::new(plane(0.01));
    let tile = locate(source.body(), Geodetic::from_degrees(46.0, 8.0, 0.0), 9).0;
    let reference = function_with(source.clone(), &layers).tile(tile).unwrap().heights;
    for permutation in [[4, 3, 2, 1, 0], [2, 0, 4, 1, 3], [1, 4, 0, 3, 2]] {
        let shuffled: Vec<Layer> = permutation.iter().map(|&k| layers[k].clone()).collect();
        assert!(function_with(source.clone(), &shuffled).tile(tile).unwrap().heights == reference, "{permutation:?}");
    }
    let e = *source.body().ellipsoid();
    let mut stack = LayerStack::new();
    stack.insert(&e, layers[0].clone()).unwrap();
    assert_eq!(stack.insert(&e, crater(5, 0.0, 0.0, 10.0, 1.0, 1.0)), Err(LayerError::DuplicateOrder(5)));
    assert_eq!(stack.reorder(&e, 5, 5), Ok(()));
    stack.insert(&e, layers[1].clone()).unwrap();
    assert_eq!(stack.reorder(&e, 5, 1), Err(LayerError::DuplicateOrder(1)));
}

#[test]
fn footprints_are_continuous_across_face_edges_and_the_antimeridian() {
    for (lat, lon) in [(0.0, 45.0), (20.0, 180.0), (35.26, 45.0)] {
        let f = function_with(flat(), &[crater(1, lat, lon, 30_000.0, 500.0, 100.0)]);
        let body = Body::earth();
        let centre = locate(&body, Geodetic::from_degrees(lat, lon, 0.0), 6).0;
        let mut checked = 0;
        for edge in planet_terrain::Edge::ALL {
            let n = centre.neighbour(edge);
            let (here, there) = (f.tile(centre).unwrap(), f.tile(n.address).unwrap());
            for k in 0..=128 {
                let along = if n.reversed { 128 - k } else { k };
                let inside = |e: planet_terrain::Edge, a: i32| match e {
                    planet_terrain::Edge::MinU => (0, a),
                    planet_terrain::Edge::MaxU => (128, a),
                    planet_terrain::Edge::MinV => (a, 0),
                    planet_terrain::Edge::MaxV => (a, 128),
                };
                let (a, b) = (inside(edge, k), inside(n.shared_edge, along));
                assert_eq!(
                    here.height(a.0, a.1),
                    there.height(b.0, b.1),
                    "({lat}, {lon}) {centre} {edge:?} sample {k}"
                );
                checked += usize::from(here.height(a.0, a.1) != 0.0);
            }
        }
        assert!(checked > 20, "({lat}, {lon}): the crater reaches the edges ({checked} samples)");
    }
}

#[test]
fn bounds_follow_an_edit_below_the_data() {
    let f = function_with(flat(), &[crater(1, 10.0, 10.0, 5000.0, 900.0, 60.0)]);
    let tile = locate(f.body(), Geodetic::from_degrees(10.0, 10.0, 0.0), 8).0;
    let b = f.tile_bounds(tile).unwrap();
    assert!(b.min_elevation <= -900.0 && b.max_elevation >= 60.0, "{b:?}");
    assert!(b.geometric_error > 0.0, "an edit adds detail the lattice must resolve");
    let far = locate(f.body(), Geodetic::from_degrees(-40.0, 100.0, 0.0), 8).0;
    assert_eq!(f.tile_bounds(far).unwrap().min_elevation, 0.0);
}

#[test]
fn the_journal_re_stages_exactly_the_resident_tiles_a_footprint_touches() {
    let e = *Body::earth().ellipsoid();
    let mut stack = LayerStack::new();
    stack.insert(&e, crater(1, 46.0, 8.0, 3000.0, 200.0, 50.0)).unwrap();
    let footprints = stack.drain_journal();
    assert_eq!(footprints.len(), 1);
    assert!(stack.drain_journal().is_empty());
    // Resident: the crater's tiles at several depths, and tiles far away.
    let body = Body::earth();
    let near: Vec<TileAddress> = (0..=10).map(|d| locate(&body, Geodetic::from_degrees(46.0, 8.0, 0.0), d).0).collect();
    let far: Vec<TileAddress> =
        (3..=10).map(|d| locate(&body, Geodetic::from_degrees(-30.0, 150.0, 0.0), d).0).collect();
    let mut residency = Residency::new(ResidencySettings {
        slots: 64,
        frames_in_flight: 2,
        upload_budget_bytes: 1_000_000,
        tile_bytes: 1000,
    });
    let all: Vec<(TileAddress, f64)> = near.iter().chain(&far).map(|&t| (t, 1.0)).collect();
    let mut frame = 0;
    while residency.plan(frame, &all).bindings.iter().any(|b| b.source != b.tile) {
        frame += 1;
    }
    let touched: Vec<TileAddress> =
        all.iter().map(|&(t, _)| t).filter(|&t| footprints[0].touches(&e, t, 0.0, 0.0)).collect();
    assert_eq!(touched, near, "exactly the crater's own tiles and their ancestors");
    for &t in &touched {
        residency.request_restage(t);
    }
    let plan = residency.plan(frame + 1, &all);
    let restaged: Vec<TileAddress> = plan.uploads.iter().filter(|u| u.restage).map(|u| u.tile).collect();
    assert_eq!(restaged, near);
    assert!(plan.uploads.iter().all(|u| u.restage), "nothing else was missing");
}

#[test]
fn scenes_round_trip_and_refuse_what_they_cannot_hold() {
    let mut scene = Scene::new("earth");
    scene.packs = vec!["packs/earth.planetpack".into()];
    scene.layers = vec![
        crater(1, 27.988_1, 86.925_3, 0.1 + 0.2, 12.5, 3.25),
        Layer {
            order: 2,
            kind: LayerKind::Flatten {
                lat: -33.9,
                lon: 18.4,
                radius_m: 120.0,
                target: Target::Elevation(15.0),
                blend_m: 30.0,
            },
        },
        Layer {
            order: 7,
            kind: LayerKind::Flatten { lat: 1.0, lon: 2.0, radius_m: 3.0, target: Target::FootprintMean, blend_m: 4.0 },
        },
        Layer { order: 4, kind: LayerKind::Raise { lat: 0.5, lon: -179.9, radius_m: 1e4, amount_m: -33.3 } },
        Layer {
            order: 9,
            kind: LayerKind::PolygonFlatten {
                vertices: vec![(1.0, 2.0), (1.0, 2.1), (1.1, 2.05)],
                elevation_m: 5.0,
                blend_m: 2.0,
            },
        },
    ];
    let text = scene.to_json();
    assert_eq!(Scene::from_json(&text, "earth").unwrap(), scene, "lossless, 0.1 + 0.2 included");
    assert!(text.contains("\"pack\": \"packs/earth.planetpack\""), "one pack is written as it always was");
    // A stack is recorded whole, bottom first (#32: only its first pack was).
    let stacked = Scene { packs: vec!["earth.planetpack".into(), "sierra.planetpack".into()], ..scene.clone() };
    let text = stacked.to_json();
    assert_eq!(Scene::from_json(&text, "earth").unwrap(), stacked);
    let both = text.replacen("\"packs\"", "\"pack\": \"x\", \"packs\"", 1);
    assert!(Scene::from_json(&both, "earth").is_err(), "'pack' and 'packs' together are refused");
    let not_strings = text.replacen("\"earth.planetpack\"", "7", 1);
    assert!(Scene::from_json(&not_strings, "earth").is_err(), "'packs' must hold strings");
    let minimal = r#"{"version": 1, "body": "earth", "layers": [
        {"kind": "crater", "order": 1, "lat": 10, "lon": 20, "radius_m": 100, "depth_m": 10, "rim_m": 2},
        {"kind": "flatten", "order": 2, "lat": 10, "lon": 20, "radius_m": 50, "elevation_m": 5, "blend_m": 10}]}"#;
    assert_eq!(Scene::from_json(minimal, "Earth").unwrap().layers.len(), 2);
    assert!(matches!(Scene::from_json(minimal, "mars"), Err(SceneError::WrongBody { .. })));
    let unknown = minimal.replace("\"crater\"", "\"volcano\"");
    assert!(matches!(Scene::from_json(&unknown, "earth"), Err(SceneError::UnknownKind { index: 0, .. })));
    let duplicate = minimal.replace("\"order\": 2", "\"order\": 1");
    assert!(matches!(
        Scene::from_json(&duplicate, "earth"),
        Err(SceneError::DuplicateOrder { index: 1, order: 1, first: 0 })
    ));
    assert!(matches!(
        Scene::from_json(&minimal.replace("\"version\": 1", "\"version\": 2"), "earth"),
        Err(SceneError::Version { .. })
    ));
    let stray = minimal.replace("\"rim_m\": 2", "\"rim_m\": 2, \"colour\": 1");
    assert!(Scene::from_json(&stray, "earth").unwrap_err().to_string().contains("unknown field 'colour'"));
    assert!(Scene::from_json(&minimal.replace("\"radius_m\": 100", "\"radius_m\": -1"), "earth").is_err());
    assert!(matches!(Scene::from_json("{nope", "earth"), Err(SceneError::Json(_))));
}

#[test]
fn ray_casts_hit_where_the_analytic_ground_is() {
    let e = *Body::earth().ellipsoid();
    let layers = [
        Layer {
            order: 1,
            kind: LayerKind::Flatten {
                lat: 0.0,
                lon: 0.0,
                radius_m: 300.0,
                target: Target::Elevation(50.0),
                blend_m: 100.0,
            },
        },
        crater(2, 0.0, 0.01, 400.0, 80.0, 20.0),
    ];
    let f = function_with(flat(), &layers);
    let depth = depth_for_spacing(&f, 2.0);
    let down = |lat: f64, lon: f64| {
        let at = Geodetic::from_degrees(lat, lon, 1000.0);
        (e.geodetic_to_point(at), -at.normal())
    };
    let cases = [((0.0, 0.0), 950.0), ((0.0, 0.01), 1080.0), ((0.05, 0.05), 1000.0)];
    for ((lat, lon), expected) in cases {
        let (origin, direction) = down(lat, lon);
        match raycast(&f, origin, direction, 5000.0, depth, 100_000).unwrap() {
            RayHit::Hit { distance, .. } => {
                assert!((distance - expected).abs() < 0.5, "({lat}, {lon}): {distance} vs {expected}")
            }
            other => panic!("({lat}, {lon}): {other:?}"),
        }
    }
    let (origin, direction) = down(0.0, 0.0);
    assert!(matches!(raycast(&f, origin, direction, 5000.0, depth, 3).unwrap(), RayHit::Incomplete { .. }));
    // Straight up: nothing to hit, and it says so only after checking.
    assert_eq!(raycast(&f, origin, -direction, 2000.0, depth, 100_000).unwrap(), RayHit::Miss);
}

#[test]
fn a_collision_patch_lies_on_the_height_function() {
    let f = function_with(Arc::new(plane(0.03)), &[crater(1, 30.0, 30.0, 200.0, 30.0, 5.0)]);
    let depth = depth_for_spacing(&f, 5.0);
    let patch = collision_patch(&f, Geodetic::from_degrees(30.0, 30.0, 0.0), 300.0, depth).unwrap();
    assert!(patch.triangles.len() > 100);
    let e = *f.body().ellipsoid();
    let mut reader = GroundReader::new(&f, depth);
    for v in &patch.vertices {
        let g = e.point_to_geodetic(*v);
        let h = reader.height(Geodetic { height: 0.0, ..g }).unwrap();
        assert!((g.height - h).abs() < 1e-6, "vertex {} m above the ground", g.height - h);
    }
    // Against the bare slope, the crater's bowl shows in the patch.
    let bare = HeightFunction::new(Arc::new(plane(0.03)), LayerStack::new());
    let mut bare_reader = GroundReader::new(&bare, depth);
    let deepest = patch
        .vertices
        .iter()
        .map(|v| {
            let g = e.point_to_geodetic(*v);
            g.height - bare_reader.height(Geodetic { height: 0.0, ..g }).unwrap()
        })
        .fold(f64::INFINITY, f64::min);
    assert!(deepest < -20.0, "the crater's bowl is in the patch: {deepest}");
}

#[test]
fn the_camera_is_kept_above_the_ground_it_flies_over() {
    let f = function_with(flat(), &[crater(1, 5.0, 5.0, 800.0, 120.0, 30.0)]);
    let e = *f.body().ellipsoid();
    let mut reader = GroundReader::new(&f, depth_for_spacing(&f, 1.0));
    // On the crater's rim, 10 m below the rim's top: lifted to 2 m above it.
    let (lat, lon) = east_of(5.0, 5.0, 800.0);
    let below = e.geodetic_to_point(Geodetic::from_degrees(lat, lon, 20.0));
    let lifted = keep_above_ground(&mut reader, below, 2.0).unwrap();
    let h = e.point_to_geodetic(lifted).height;
    assert!((h - 32.0).abs() < 0.05, "lifted to {h} m");
    // Already clear: untouched.
    let high = e.geodetic_to_point(Geodetic::from_degrees(5.0, 5.0, 500.0));
    assert_eq!(keep_above_ground(&mut reader, high, 2.0).unwrap(), high);
}

/// A layer changes nothing outside its footprint, bit for bit: in a tile
/// the footprint never reaches and in the samples of a tile it only partly
/// covers, the height function's samples are the source's exact bits.
#[test]
fn a_layer_changes_nothing_outside_its_footprint_bit_for_bit() {
    let source: Arc<dyn HeightSource> = Arc::new(plane(0.013));
    let layers = [
        crater(1, 10.0, 20.0, 30_000.0, 400.0, 60.0),
        Layer {
            order: 2,
            kind: LayerKind::Flatten {
                lat: 10.3,
                lon: 20.2,
                radius_m: 8_000.0,
                blend_m: 3_000.0,
                target: Target::FootprintMean,
            },
        },
    ];
    let function = function_with(source.clone(), &layers);
    let ellipsoid = *function.body().ellipsoid();
    for depth in [4, 7] {
        let (tile, _, _) = locate(function.body(), Geodetic::from_degrees(10.0, 20.0, 0.0), depth);
        let (edited, bare) = (function.tile(tile).unwrap(), source.tile(tile).unwrap());
        let (mut touched, mut kept) = (0, 0);
        for (k, d) in sample_directions(tile).into_iter().enumerate() {
            let p = ellipsoid.surface_point_from_direction(d);
            let inside = layers.iter().any(|l| {
                let f = l.footprint(&ellipsoid);
                (p - f.centre).length() <= f.radius
            });
            if inside {
                touched += 1;
            } else {
                kept += 1;
                assert_eq!(edited.heights[k].to_bits(), bare.heights[k].to_bits(), "depth {depth} sample {k}");
            }
        }
        assert!(touched > 0 && kept > 0, "depth {depth}: the tile is partly covered ({touched} in, {kept} out)");
    }
    let (far, _, _) = locate(function.body(), Geodetic::from_degrees(-40.0, -100.0, 0.0), 6);
    assert_eq!(function.tile(far).unwrap(), source.tile(far).unwrap());
}
