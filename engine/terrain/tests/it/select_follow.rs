//! The contract of `lod::Selector`, which follows last frame's cut: along
//! flights (slow, fast, teleports, target and budget changes), every frame
//! an exact balanced cover within the budget, true edge relations, nodes
//! evaluated as `select` evaluates them, and an effective error within
//! `ERROR_FACTOR` of `select`'s from nothing (or the target, where `select`
//! meets it).

use std::collections::HashMap;

use planet_terrain::camera::View;
use planet_terrain::geo::face::Edge;
use planet_terrain::ground::{HeightSource, ProceduralSource, sample_ground};
use planet_terrain::lod::follow::{ERROR_FACTOR, max_changes};
use planet_terrain::lod::{Cut, EdgeRelation, SelectionSettings, Selector, select};
use planet_terrain::testing::UnevenGround;
use planet_terrain::{Body, Geodetic, MAX_DEPTH, TileAddress};

/// Checks `cut` against the contract, `exact` being `select`'s for the
/// same view and settings.
fn check_contract(label: &str, cut: &Cut, exact: &Cut, settings: &SelectionSettings) {
    let nodes = &cut.nodes;
    assert!(nodes.len() <= settings.node_budget, "{label}: {} nodes over the budget", nodes.len());
    // Exact cover: no node inside another, and the areas add up to the six
    // faces (in units of the deepest tile, exactly).
    let at: HashMap<TileAddress, usize> = nodes.iter().enumerate().map(|(k, n)| (n.tile, k)).collect();
    assert_eq!(at.len(), nodes.len(), "{label}: a tile twice");
    let mut area = 0u128;
    for n in nodes {
        let mut up = n.tile.parent();
        while let Some(ancestor) = up {
            assert!(!at.contains_key(&ancestor), "{label}: {} inside {ancestor}", n.tile);
            up = ancestor.parent();
        }
        area += 1u128 << (2 * u32::from(MAX_DEPTH - n.tile.depth()));
    }
    assert_eq!(area, 6u128 << (2 * u32::from(MAX_DEPTH)), "{label}: the cut does not cover the body once");
    // Balance, through the relations: each says what is across the edge.
    for n in nodes {
        for edge in Edge::ALL {
            let across = n.tile.neighbour(edge);
            let relation = n.edges[edge as usize];
            match relation {
                EdgeRelation::Same => assert!(at.contains_key(&across.address), "{label}: {} {edge:?}", n.tile),
                EdgeRelation::Coarser => {
                    let parent = across.address.parent().expect("coarser than a root");
                    assert!(at.contains_key(&parent), "{label}: {} {edge:?} coarser", n.tile);
                }
                EdgeRelation::Finer => {
                    let touching: Vec<TileAddress> = (across.address.children().expect("finer than MAX_DEPTH"))
                        .into_iter()
                        .filter(|c| c.neighbour(across.shared_edge).address.parent() == Some(n.tile))
                        .collect();
                    assert_eq!(touching.len(), 2);
                    assert!(touching.iter().all(|c| at.contains_key(c)), "{label}: {} {edge:?} finer", n.tile);
                }
            }
        }
    }
    // Every node as `select` evaluates its tile.
    let exact_at: HashMap<TileAddress, usize> = exact.nodes.iter().enumerate().map(|(k, n)| (n.tile, k)).collect();
    for n in nodes {
        if let Some(&k) = exact_at.get(&n.tile) {
            let e = &exact.nodes[k];
            assert_eq!(
                (n.bounds, n.sphere, n.projected_error_px.to_bits()),
                (e.bounds, e.sphere, e.projected_error_px.to_bits()),
                "{label}: {} evaluated differently",
                n.tile
            );
        }
    }
    let effective = nodes.iter().map(|n| n.projected_error_px).fold(0.0, f64::max);
    assert_eq!(effective.to_bits(), cut.effective_screen_error_px.to_bits(), "{label}: effective error");
    if exact.stopped_by_budget {
        assert!(
            cut.effective_screen_error_px <= ERROR_FACTOR * exact.effective_screen_error_px,
            "{label}: effective {} px, select's {} px",
            cut.effective_screen_error_px,
            exact.effective_screen_error_px
        );
    } else {
        assert!(
            cut.effective_screen_error_px <= settings.target_error_px
                || nodes.iter().any(|n| n.tile.depth() == MAX_DEPTH),
            "{label}: effective {} px over the target {} px, which select meets",
            cut.effective_screen_error_px,
            settings.target_error_px
        );
    }
}

/// A camera `altitude` metres over the ellipsoid plus `ground`.
fn view(source: &dyn HeightSource, lat: f64, lon: f64, altitude: f64, heading: f64, pitch: f64) -> View {
    View::looking_from(
        source.body(),
        Geodetic::from_degrees(lat, lon, altitude),
        heading,
        pitch,
        60f64.to_radians(),
        (1920, 1080),
    )
}

/// Flies `views` through one selector with `settings_at(frame)`, checking
/// every frame; returns how many frames were followed and the worst ratio
/// of effective errors (followed / `select`'s) where the budget bound.
fn fly(
    label: &str,
    source: &dyn HeightSource,
    views: &[View],
    settings_at: impl Fn(usize) -> SelectionSettings,
) -> (usize, f64) {
    let mut selector = Selector::new();
    let (mut followed, mut worst, mut differ) = (0, 0.0f64, 0);
    for (frame, view) in views.iter().enumerate() {
        let settings = settings_at(frame);
        let cut = selector.select(source, view, &settings).unwrap();
        let exact = select(source, view, &settings).unwrap();
        let label = format!("{label}, frame {frame}");
        check_contract(&label, &cut, &exact, &settings);
        if selector.followed_last_frame() {
            followed += 1;
            let tiles = |cut: &Cut| {
                let mut tiles: Vec<TileAddress> = cut.nodes.iter().map(|n| n.tile).collect();
                tiles.sort_by_key(|t| (t.face(), t.depth(), t.identity()));
                tiles
            };
            differ += usize::from(tiles(&cut) != tiles(&exact));
            if exact.stopped_by_budget {
                worst = worst.max(cut.effective_screen_error_px / exact.effective_screen_error_px);
            }
        } else {
            // Not followed: exactly `select`'s cut.
            assert_eq!(cut.nodes, exact.nodes, "{label}: a frame not followed is select's");
            assert_eq!(cut.effective_screen_error_px.to_bits(), exact.effective_screen_error_px.to_bits());
        }
    }
    println!(
        "{label}: {followed} of {} frames followed ({differ} of them not select's cut), worst error ratio {worst:.3}",
        views.len()
    );
    (followed, worst)
}

#[test]
fn a_slow_flight_is_followed_within_the_contract() {
    // The select bench's flight: 1% of the altitude forward and 0.1 degrees
    // of turn per frame, over the Alps, at the bench's altitudes.
    let source = ProceduralSource::new(Body::earth(), 2026);
    let ground = sample_ground(&source, Geodetic::from_degrees(46.5, 8.0, 0.0), 14).unwrap().elevation_m.max(0.0);
    for altitude in [400_000.0, 10_000.0, 100.0, 2.0] {
        let views: Vec<View> = (0..40)
            .map(|frame| {
                let step = (0.01 * altitude / 6_371_000.0 * f64::from(frame)).to_degrees();
                let (lat, lon) = (46.5 + step * 0.866, 8.0 + step * 0.5 / 46.5f64.to_radians().cos());
                view(&source, lat, lon, ground + altitude, 30.0 + 0.1 * f64::from(frame), -30.0)
            })
            .collect();
        for (target, budget) in [(1.0, 1024), (0.05, 1024), (0.02, 4096)] {
            let settings = SelectionSettings { target_error_px: target, node_budget: budget, near_m: 0.1 };
            let label = format!("slow at {altitude} m, {target} px, budget {budget}");
            let (followed, _) = fly(&label, &source, &views, |_| settings);
            assert_eq!(followed, views.len() - 1, "{label}: every frame after the first is followed");
        }
    }
}

#[test]
fn fast_flights_and_uneven_ground_keep_the_contract() {
    // A descent from orbit to the ground across a face edge, 15% of the
    // altitude per frame and turning 3 degrees, over both grounds.
    let procedural = ProceduralSource::new(Body::earth(), 2026);
    let uneven = UnevenGround(Body::earth());
    let views: Vec<View> = (0..60)
        .map(|frame| {
            let f = f64::from(frame);
            view(&procedural, 0.5 + 0.01 * f, 44.7 + 0.01 * f, 400_000.0 * 0.85f64.powf(f), 3.0 * f, -30.0 + 0.3 * f)
        })
        .collect();
    for (name, source) in [("procedural", &procedural as &dyn HeightSource), ("uneven", &uneven)] {
        for budget in [1024, 4096] {
            let settings = SelectionSettings { target_error_px: 0.05, node_budget: budget, near_m: 0.1 };
            let label = format!("descent over {name} ground, budget {budget}");
            let (followed, _) = fly(&label, source, &views, |_| settings);
            assert!(followed > views.len() / 2, "{label}: most frames are followed ({followed})");
        }
    }
}

#[test]
fn teleports_and_changed_settings_keep_the_contract() {
    // Cameras far apart in turn with small moves between: a jump needs more
    // changes than a frame may make, so it is selected from nothing, and
    // the small moves after it are followed.
    let source = UnevenGround(Body::earth());
    let mut views = Vec::new();
    for (k, (lat, lon, altitude)) in
        [(10.0, 20.0, 5_000.0), (-60.0, 170.0, 50.0), (35.26, 45.0, 300_000.0), (80.0, -90.0, 2.0)]
            .into_iter()
            .enumerate()
    {
        for frame in 0..6 {
            let f = f64::from(frame);
            views.push(view(&source, lat + 1e-4 * f, lon, altitude * (1.0 + 0.02 * f), 40.0 * k as f64 + f, -20.0));
        }
    }
    let settings =
        |target: f64, budget: usize| SelectionSettings { target_error_px: target, node_budget: budget, near_m: 0.1 };
    let (followed, _) = fly("teleports", &source, &views, |_| settings(0.02, 2048));
    assert!(followed >= 12, "the moves between jumps are followed ({followed})");
    // The budget and the target changing under a slow camera: a change
    // selects from nothing (the budget never exceeded, not even once).
    let steady: Vec<View> =
        (0..12).map(|f| view(&source, 12.0, 20.0 + 1e-4 * f as f64, 4_000.0, 10.0, -25.0)).collect();
    let budgets = [4096, 4096, 600, 600, 600, 2048, 2048, 7, 7, 4096, 4096, 4096];
    let targets = [0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 1.0, 1.0, 1.0, 0.02, 0.02];
    let (followed, _) = fly("settings", &source, &steady, |frame| settings(targets[frame], budgets[frame]));
    assert_eq!(followed, 5, "each frame whose settings are last frame's is followed");
    assert!(max_changes(&settings(1.0, 4096)) >= 64);
}

#[test]
fn a_wandering_camera_over_uneven_ground_stays_within_the_error_factor() {
    // A random walk, now creeping, now darting and turning, over ground
    // (above its highest point: inside a sphere every error is infinite)
    // whose errors do not fall with depth: the followed cut drifts from
    // select's most here, with the budget binding every frame.
    let source = UnevenGround(Body::earth());
    let mut state = 0x5eed_u64;
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let (mut lat, mut lon, mut altitude, mut heading, mut pitch) = (30.0, 60.0, 10_000.0, 0.0, -30.0);
    let mut views = Vec::new();
    for frame in 0..200 {
        let speed = if frame % 50 < 10 { 20.0 } else { 1.0 };
        lat += speed * 1e-3 * (next() - 0.5);
        lon += speed * 1e-3 * (next() - 0.5);
        altitude = (altitude * (1.0 + speed * 0.02 * (next() - 0.5))).clamp(5_000.0, 80_000.0);
        heading += speed * 2.0 * (next() - 0.5);
        pitch = (pitch + speed * (next() - 0.5)).clamp(-89.0, 0.0);
        views.push(view(&source, lat, lon, altitude, heading, pitch));
    }
    let mut worst = 0.0f64;
    for (target, budget) in [(0.05, 1024), (0.02, 4096)] {
        let settings = SelectionSettings { target_error_px: target, node_budget: budget, near_m: 0.1 };
        let (followed, ratio) = fly(&format!("wandering, budget {budget}"), &source, &views, |_| settings);
        assert!(followed > views.len() / 2, "most frames are followed ({followed})");
        worst = worst.max(ratio);
    }
    assert!(worst > 1.0, "the walk makes the followed cut differ from select's");
}
