//! The GPU's terrain vertex shader against the CPU reference
//! (`planet_terrain::lod::reference_vertex`): the same node records and
//! the same slot contents, positions read back from the shader's capture
//! variant, at depths 0 to 24, with every edge relation and a mid-morph band;
//! and the horizon map's shadow mask against CPU ray casts toward the sun.

use planet_terrain::ground::BoundsAt;
use std::sync::Arc;

use crate::support::*;
use glam::Vec3;
use planet_render::scene::TerrainScene;
use planet_render::{NODE_VERTICES, filled_record, quantise};
use planet_terrain::camera::View;
use planet_terrain::geo::BoundingSphere;
use planet_terrain::geo::address::TileAddress;
use planet_terrain::geo::body::{Body, Geodetic};
use planet_terrain::ground::{HeightSource, ProceduralSource, SourceTile};
use planet_terrain::lod::{
    Binding, EdgeRelation, SelectedNode, UvRect, centre_height_within, node_record, reference_vertex,
};

/// A node at `depth` under a mid-latitude point, with the camera a
/// node-width above the ground there, looking down.
fn case(body: &Body, source: &ProceduralSource, depth: u8) -> (TileAddress, View) {
    let at = Geodetic::from_degrees(46.5, 8.0, 0.0);
    let ground = source.elevation(body.ellipsoid().geodetic_to_direction(at));
    let (tile, _, _) = planet_terrain::ground::locate(body, at, depth);
    let size = body.tile_size_m(depth);
    let camera = Geodetic::from_degrees(46.5, 8.0, ground + size);
    (tile, View::looking_from(body, camera, 0.0, -90.0, 1.0, (64, 64)))
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one conformance sweep: a render, its read-back and every depth's comparison against the CPU reference, reported together"
)]
fn gpu_vertices_match_the_cpu_reference_at_depths_0_to_24() {
    let body = Body::earth();
    let source = ProceduralSource::new(body.clone(), 11);
    let mut renderer = renderer((64, 64), 16);
    let relations = [EdgeRelation::Same, EdgeRelation::Coarser, EdgeRelation::Finer, EdgeRelation::Same];
    let mut records = Vec::new();
    let mut tiles: Vec<SourceTile> = Vec::new();
    let mut views = Vec::new();
    for (k, depth) in [0u8, 4, 8, 12, 16, 20, 24].into_iter().enumerate() {
        let (tile, view) = case(&body, &source, depth);
        // Every node reads an ancestor two levels up (a scaled UV rectangle,
        // fractional texel coordinates), except depth 0 which reads itself.
        let source_tile = tile.ancestor_at(depth.saturating_sub(2)).expect("an ancestor");
        let bounds = source.tile_bounds(tile).expect("bounds");
        let node = SelectedNode {
            tile,
            bounds,
            sphere: BoundingSphere::of_tile(body.ellipsoid(), tile, bounds.min_elevation, bounds.max_elevation),
            projected_error_px: 1.0,
            culled: None,
            edges: [relations[k % 4], relations[(k + 1) % 4], relations[(k + 2) % 4], relations[(k + 3) % 4]],
        };
        let binding = Binding { tile, source: source_tile, slot: k, uv: UvRect::within(tile, source_tile) };
        // A morph band that the node's vertices straddle.
        let centre_distance = node.sphere.distance(view.position) + node.sphere.radius;
        let source_data = source.tile(source_tile).expect("tile");
        let (lo, hi) = source_data.heights.iter().fold((f32::MAX, f32::MIN), |(a, b), &h| (a.min(h), b.max(h)));
        let centre_height = centre_height_within(&node, Some((f64::from(lo), f64::from(hi))));
        let record = node_record(body.ellipsoid(), &view, &node, &binding, centre_distance * 1.1, centre_height);
        records.push(record);
        tiles.push(source_data);
        views.push(view);
    }
    // Records are camera-relative to their own views; one capture pass per
    // record set is enough because the shader reads only the record.
    let uploads: Vec<(u32, &SourceTile)> = tiles.iter().enumerate().map(|(k, t)| (k as u32, t)).collect();
    // The body's sea on: the shader draws the sea's surface over samples
    // under it, and the reference is given the same drawn samples.
    let constants = planet_terrain::abi::PushConstants {
        flags: planet_terrain::abi::FLAG_SEA,
        ..planet_terrain::abi::PushConstants::default()
    };
    let captured = renderer.capture_vertices(constants, &records, &uploads).expect("capture");
    let Some(captured) = captured else {
        panic!("the device cannot store from vertex shaders (vertexPipelineStoresAndAtomics); lavapipe can");
    };
    assert_no_validation_messages(&renderer);

    let mut under_sea = 0;
    for (k, record) in records.iter().enumerate() {
        let mut worst_relative = 0.0f64;
        let mut worst_absolute = 0.0f64;
        let content = renderer.slot_content(k as u32);
        let filled = filled_record(record, content);
        let q = quantise(&tiles[k].heights, content.height_base, content.height_step);
        let decoded: Vec<f32> = q.iter().map(|&q| content.decode(q)).collect();
        let decoded_ground = decoded.clone();
        let decoded = planet_terrain::ground::water::drawn_heights(true, &decoded, tiles[k].classes.as_deref());
        under_sea += decoded.iter().zip(&decoded_ground).filter(|(d, g)| d != g).count();
        for j in 0..33u32 {
            for i in 0..33u32 {
                let cpu = reference_vertex(&filled, &decoded, i, j);
                let gpu = Vec3::from_array(captured[k * NODE_VERTICES as usize + (j * 33 + i) as usize]);
                let error = f64::from((gpu - cpu).length());
                let scale = f64::from(cpu.length()).max(1e-3);
                // Stated tolerance: 8 f32 ulps of the camera distance, plus 10 um.
                let allowed = 8.0 * scale * f64::from(f32::EPSILON) + 1e-5;
                assert!(
                    error <= allowed,
                    "depth {} vertex ({i}, {j}): GPU {gpu:?} vs CPU {cpu:?}, {error:e} m > {allowed:e} m",
                    record.depth
                );
                worst_relative = worst_relative.max(error / scale);
                worst_absolute = worst_absolute.max(error);
            }
        }
        // Skirt vertices hang below their edge vertex by the skirt depth.
        let skirt = filled.skirt_m;
        for e in 0..4u32 {
            for along in 0..33u32 {
                let (i, j) = match e {
                    0 => (0, along),
                    1 => (32, along),
                    2 => (along, 0),
                    _ => (along, 32),
                };
                let top = Vec3::from_array(captured[k * NODE_VERTICES as usize + (j * 33 + i) as usize]);
                let bottom = Vec3::from_array(captured[k * NODE_VERTICES as usize + (1089 + e * 33 + along) as usize]);
                let drop = f64::from((top - bottom).length());
                assert!((drop - f64::from(skirt)).abs() <= 1e-3 * f64::from(skirt) + 1e-3, "skirt {drop} vs {skirt}");
            }
        }
        eprintln!(
            "conformance depth {:2}: worst {worst_absolute:.3e} m, {worst_relative:.3e} of the camera distance",
            record.depth
        );
    }
    assert!(under_sea > 0, "some samples lie under the sea: the drawn surface is tested, not the ground alone");
}

/// Parallel ridges 1.8 km high under a sun 18 degrees up from the
/// north-west, across them, seen from 2 km up looking along them: the horizon map's
/// shadow mask as the GPU paints it against a CPU ray cast of the same
/// ground toward the same sun, pixel by pixel. The map's finest texel here
/// is 128 m and the ground is drawn at the cut's depth, so the two differ
/// along the shadows' edges: they must agree with an intersection over
/// union of at least 0.9.
#[test]
fn the_gpu_shadow_mask_agrees_with_ray_casts_toward_the_sun() {
    use planet_terrain::geo::east_north_up;
    use planet_terrain::ground::query::{RayHit, depth_for_spacing, raycast};
    let source = Arc::new(RidgeSource::new(46.5, 8.0));
    let body = source.body.clone();
    let e = *body.ellipsoid();
    let size = (128u32, 96u32);
    // Over a valley floor (300 m), looking north-east along the ridges.
    let view = view_at(&body, 46.5, 8.0, 2300.0, 45.0, -25.0, size);
    let enu = east_north_up(Geodetic::from_degrees(46.5, 8.0, 0.0));
    let (elevation, azimuth) = (18f64.to_radians(), 315f64.to_radians());
    let sun = (enu.col(2) * elevation.sin()
        + (enu.col(0) * azimuth.sin() + enu.col(1) * azimuth.cos()) * elevation.cos())
    .normalize();

    let mut renderer = renderer(size, 1024);
    let ground: Arc<dyn HeightSource> = source.clone();
    let mut scene = TerrainScene::new(body.clone(), Some(ground), &renderer, settings(1024, 2.0, 1.0));
    scene.set_shadows(planet_render::scene::ShadowMode::Mask);
    let (_, mask, _) = scene.render_until_resident(&mut renderer, &view, sun, 40).expect("render");
    assert_no_validation_messages(&renderer);
    let (map, (builds, _)) = scene.horizon_map();
    let map = map.expect("a frame that produces its own tiles builds its horizon map");
    assert_eq!((builds, map.plan.finest_extent_m), (1, 32_768.0), "one map, 128 m texels");

    // The ground a pixel shows, then whether the sun is seen from it.
    let depth = depth_for_spacing(&*source, 60.0);
    let focal = 1.0 / (0.5 * view.vertical_fov).tan();
    let (mut both, mut either, mut points) = (0, 0, 0);
    for y in (1..size.1).step_by(4) {
        for x in (1..size.0).step_by(4) {
            let ndc_x = (f64::from(x) + 0.5) / f64::from(size.0) * 2.0 - 1.0;
            let ndc_y = 1.0 - (f64::from(y) + 0.5) / f64::from(size.1) * 2.0;
            let ray = view.forward() + view.right() * (ndc_x * view.aspect() / focal) + view.up() * (ndc_y / focal);
            let RayHit::Hit { point, .. } =
                raycast(&*source, view.position, ray, 80_000.0, depth, 1 << 20).expect("cast")
            else {
                continue;
            };
            let up = e.point_to_geodetic(point).normal();
            let toward_sun = raycast(&*source, point + up * 2.0, sun, 15_000.0, depth, 1 << 20).expect("cast");
            assert!(!matches!(toward_sun, RayHit::Incomplete { .. }), "the cast finished");
            let cast = matches!(toward_sun, RayHit::Hit { .. });
            let painted = mask.pixel(x, y)[0] < 128;
            both += usize::from(cast && painted);
            either += usize::from(cast || painted);
            points += 1;
        }
    }
    let iou = both as f64 / either.max(1) as f64;
    eprintln!("shadowed by both {both}, by either {either}, of {points} ground pixels: IoU {iou:.3}");
    assert!(points >= 500, "the view shows ground ({points} pixels)");
    assert!(either * 5 >= points && either * 5 <= points * 4, "lit and shadowed ground ({either} of {points})");
    assert!(iou >= 0.9, "intersection over union {iou:.3} ({both} of {either})");
}
