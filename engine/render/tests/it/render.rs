//! Golden images and frame invariants on lavapipe with the validation layers
//! on (any message fails the test). Goldens live in tests/golden/; on a
//! mismatch the actual image and a diff land in target/golden-failures/.
//! Regenerate after a reviewed change with `PLANET_BLESS=1`.

use std::sync::Arc;

use crate::support::*;
use planet_render::scene::{Appearance, FrameRequest, Loading, ReadBack, SceneSettings, TerrainScene, sun_for};
use planet_terrain::geo::body::Body;
use planet_terrain::ground::{HeightSource, ProceduralSource};

const SIZE: (u32, u32) = (192, 120);

fn ridges() -> Arc<RidgeSource> {
    Arc::new(RidgeSource::new(45.0, 7.0))
}

/// The ridge source's ground under a point.
fn ground(source: &RidgeSource, lat: f64, lon: f64) -> f64 {
    let g = planet_terrain::geo::body::Geodetic::from_degrees(lat, lon, 0.0);
    source.elevation(source.body.ellipsoid().geodetic_to_direction(g))
}

#[test]
fn earth_from_orbit() {
    let pack = procedural_pack(2);
    let source = pack_source(&pack);
    let body = source.body().clone();
    let mut renderer = renderer(SIZE, 256);
    let view = view_at(&body, 20.0, 10.0, 15_000_000.0, 0.0, -90.0, SIZE);
    let shot = shoot(&mut renderer, body, Some(source), &view, settings(1024, 2.0, 1000.0), 30);
    assert!(shot.report.complete, "streaming settled within 30 frames");
    assert!(shot.report.statistics.covers_body && !shot.report.analytic_body, "the ellipsoid stands down");
    check_golden("earth_from_orbit", &shot.image, GOLDEN);
}

/// More slots than the device's array layers (2,048 on lavapipe) share
/// layers, four slots a layer here: the same view draws the same picture.
#[test]
fn slots_past_the_array_layers_share_layers_and_draw_the_same_picture() {
    let pack = procedural_pack(2);
    let source = pack_source(&pack);
    let body = source.body().clone();
    let view = view_at(&body, 20.0, 10.0, 600_000.0, 30.0, -40.0, SIZE);
    let mut one_a_layer = renderer(SIZE, 256);
    let mut shared = renderer(SIZE, 2052);
    assert_eq!((one_a_layer.slots_per_layer_side(), shared.slots_per_layer_side()), (1, 2));
    let settings = || settings(1024, 2.0, 1000.0);
    let alone = shoot(&mut one_a_layer, body.clone(), Some(source.clone()), &view, settings(), 30);
    let packed = shoot(&mut shared, body, Some(source), &view, settings(), 30);
    assert!(alone.report.complete && packed.report.complete, "both settled");
    let drawn = packed.report.statistics.nodes_drawn;
    assert!(drawn >= 12, "slots of several shared layers are in use: {drawn} nodes drawn");
    assert_eq!(differing_pixels(&alone.image, &packed.image), 0, "one slot a layer or four, the same picture");
}

#[test]
fn mountain_range_at_a_grazing_angle_from_2_km() {
    let source = ridges();
    let (lat, lon) = (44.8, 6.75);
    let height = ground(&source, lat, lon) + 2000.0;
    let body = source.body.clone();
    let mut renderer = renderer(SIZE, 512);
    // Looking south-east, across the ridges.
    let view = view_at(&body, lat, lon, height, 135.0, -7.0, SIZE);
    let shot = shoot(&mut renderer, body, Some(source as Arc<dyn HeightSource>), &view, settings(2048, 1.0, 20.0), 30);
    assert!(shot.report.complete);
    assert!(shot.report.statistics.nodes_drawn > 50, "a real cut, not a handful of roots");
    check_golden("mountain_range_2km", &shot.image, GOLDEN);
}

#[test]
fn standing_two_metres_above_the_ground() {
    let source = ridges();
    let (lat, lon) = (45.02, 7.03);
    let height = ground(&source, lat, lon) + 2.0;
    let body = source.body.clone();
    let mut renderer = renderer(SIZE, 512);
    let view = view_at(&body, lat, lon, height, 135.0, 3.0, SIZE);
    let shot = shoot(&mut renderer, body, Some(source as Arc<dyn HeightSource>), &view, settings(2048, 1.0, 0.1), 40);
    assert!(shot.report.complete);
    let deepest = shot.report.statistics.nodes_drawn;
    assert!(deepest > 50);
    check_golden("standing_2m", &shot.image, GOLDEN);
}

/// Airless and without the analytic body, any pixel the terrain misses stays
/// pure black; looking down at the ground, none may.
fn assert_no_holes(
    renderer: &mut planet_render::Renderer,
    source: Arc<dyn HeightSource>,
    view: &planet_terrain::camera::View,
    frames: u32,
    uploads: usize,
) {
    let body = source.body().clone();
    let mut scene_settings = settings(2048, 1.0, 0.1);
    scene_settings.uploads_per_frame = uploads;
    let mut scene = TerrainScene::new(body.clone(), Some(source), renderer, scene_settings);
    scene.set_appearance(Appearance { atmosphere: None, palette: 0, exposure: 1.4 });
    let sun = sun_for(&body, view);
    for frame in 0..frames {
        let report = scene.frame(renderer, &FrameRequest::headless(*view, sun, ReadBack::Always)).expect("frame");
        let image = renderer.take_image().expect("image").expect("read back");
        // take_image waited for the frame: the GPU's own count agrees.
        let counted = renderer.take_completed().last().expect("the frame completed").hole_pixels;
        assert!(counted == 0 || (report.analytic_body && frame == 0), "frame {frame}: {counted} hole pixels counted");
        let holes = fraction_matching(&image, |p| p[0] == 0 && p[1] == 0 && p[2] == 0);
        assert!(
            holes == 0.0 || (report.analytic_body && frame == 0),
            "frame {frame}: {:.3}% of pixels show through the ground ({} nodes on ancestors)",
            holes * 100.0,
            report.nodes_on_ancestors
        );
    }
    assert_no_validation_messages(renderer);
}

#[test]
fn no_holes_while_streaming_or_settled() {
    let source = ridges();
    // Above the highest ridge: a coarse ancestor standing in can lie above
    // the true ground, and a camera below the drawn surface sees nothing (a
    // known limit, docs/design/viewer-and-layers.md), which is not a hole
    // in the cover.
    let (lat, lon) = (45.0, 7.0);
    let height = 2400.0;
    let body = source.body.clone();
    let mut renderer = renderer(SIZE, 512);
    // Looking down steeply: every pixel is ground. Two uploads a frame keeps
    // ancestors standing in for many frames.
    let view = view_at(&body, lat, lon, height, 30.0, -50.0, SIZE);
    assert_no_holes(&mut renderer, source, &view, 24, 2);
}

#[test]
fn a_streaming_state_where_ancestors_stand_in() {
    let pack = procedural_pack(2);
    let source = pack_source(&pack);
    let body = source.body().clone();
    let mut renderer = renderer(SIZE, 256);
    let view = view_at(&body, -30.0, 140.0, 2_500_000.0, 0.0, -70.0, SIZE);
    let mut scene_settings = settings(1024, 1.0, 100.0);
    scene_settings.uploads_per_frame = 12;
    let mut scene = TerrainScene::new(body.clone(), Some(source), &renderer, scene_settings);
    let sun = sun_for(&body, &view);
    let mut last = None;
    for frame in 0..3 {
        let mode = if frame == 2 { ReadBack::Always } else { ReadBack::Never };
        last = Some(scene.frame(&mut renderer, &FrameRequest::headless(view, sun, mode)).expect("frame"));
    }
    let report = last.expect("three frames");
    assert!(report.nodes_on_ancestors > 0, "some nodes still draw from an ancestor's tile");
    assert!(!report.complete && report.statistics.pending_requests > 0, "streaming is still under way");
    assert_eq!(report.statistics.nodes_dropped, 0, "roots are resident, so nothing is dropped");
    let image = renderer.take_image().expect("image").expect("read back");
    assert_no_validation_messages(&renderer);
    check_golden("streaming_ancestors", &image, GOLDEN);
}

#[test]
fn the_analytic_body_with_no_pack() {
    let body = Body::earth();
    let mut renderer = renderer(SIZE, 8);
    let view = view_at(&body, 35.0, -40.0, 12_000_000.0, 0.0, -90.0, SIZE);
    let shot = shoot(&mut renderer, body, None, &view, settings(1024, 2.0, 1000.0), 3);
    assert!(shot.report.analytic_body);
    assert_eq!(shot.report.draw_calls.terrain_depth, 0, "nothing to draw but the ellipsoid");
    check_golden("analytic_earth", &shot.image, GOLDEN);
}

/// A view whose axis is shifted (the window centres it between its panels)
/// draws the centred view's picture moved sideways by the shift: the clip
/// rows, the sky's rays and the body's all take the lens shift, and nothing
/// turns. The analytic body and the sky are drawn per pixel, so the
/// overlap matches to the golden tolerance.
#[test]
fn a_shifted_view_axis_moves_the_picture_sideways() {
    const SHIFT: usize = 24;
    let body = Body::earth();
    let mut renderer = renderer(SIZE, 8);
    let centred = view_at(&body, 35.0, -40.0, 9_000_000.0, 30.0, -70.0, SIZE);
    let shifted = centred.with_axis_offset(SHIFT as f64);
    let a = shoot(&mut renderer, body.clone(), None, &centred, settings(1024, 2.0, 1000.0), 3).image;
    let b = shoot(&mut renderer, body, None, &shifted, settings(1024, 2.0, 1000.0), 3).image;
    let (w, h) = (SIZE.0 as usize, SIZE.1 as usize);
    let (mut differing, mut total, mut moved) = (0, 0, 0);
    for y in 0..h {
        for x in 0..w - SHIFT {
            let near = |x0: usize, x1: usize| {
                let (q, r) = (&a.pixels[4 * (y * w + x0)..][..4], &b.pixels[4 * (y * w + x1)..][..4]);
                q.iter().zip(r).all(|(u, v)| u.abs_diff(*v) <= GOLDEN.channel)
            };
            differing += usize::from(!near(x, x + SHIFT));
            moved += usize::from(!near(x, x));
            total += 1;
        }
    }
    assert!((differing as f64) <= GOLDEN.pixels * total as f64, "{differing} of {total} pixels differ once shifted");
    assert!(moved > total / 20, "the picture did move: {moved} of {total} pixels differ in place");
}

#[test]
fn a_procedural_body() {
    let body = Body::mars();
    let source: Arc<dyn HeightSource> = Arc::new(ProceduralSource::new(body.clone(), 3));
    let mut renderer = renderer(SIZE, 256);
    let view = view_at(&body, 10.0, 60.0, 6_000_000.0, 0.0, -90.0, SIZE);
    let shot = shoot(&mut renderer, body, Some(source), &view, settings(1024, 1.0, 1000.0), 30);
    assert!(shot.report.complete && shot.report.statistics.covers_body);
    check_golden("procedural_mars", &shot.image, GOLDEN);
}

#[test]
fn exactly_one_terrain_draw_per_pass_whatever_the_node_count() {
    let source = ridges();
    let body = source.body.clone();
    let mut renderer = renderer(SIZE, 512);
    let mut counts = Vec::new();
    for (height, pitch) in [(8_000_000.0, -90.0), (200_000.0, -40.0), (3_000.0, -10.0)] {
        let view = view_at(&body, 45.0, 7.0, height, 30.0, pitch, SIZE);
        let shot = shoot(
            &mut renderer,
            body.clone(),
            Some(source.clone() as Arc<dyn HeightSource>),
            &view,
            settings(2048, 1.0, 1.0),
            30,
        );
        let draws = shot.report.draw_calls;
        assert_eq!((draws.terrain_depth, draws.terrain_shaded, draws.sky), (1, 1, 1), "at {height} m");
        counts.push(shot.report.statistics.nodes_drawn);
    }
    assert!(counts[2] > 10 * counts[0].max(1) / 2, "node counts differ widely: {counts:?}");
    counts.dedup();
    assert!(counts.len() == 3, "three different cuts: {counts:?}");
}

#[test]
fn the_hole_counter_counts_ground_left_undrawn() {
    // Looking straight down with the ellipsoid off and no terrain: every
    // pixel's ray meets the body, so every pixel is a hole.
    let body = Body::earth();
    let mut renderer = renderer(SIZE, 8);
    let view = view_at(&body, 10.0, 10.0, 500_000.0, 0.0, -90.0, SIZE);
    let scene = TerrainScene::new(body.clone(), None, &renderer, settings(64, 1.0, 1.0));
    let constants = scene.constants(&view, sun_for(&body, &view), false);
    let input = planet_render::FrameInput {
        constants,
        records: &[],
        uploads: &[],
        encoded: &[],
        staging_limit: None,
        data_depths: Default::default(),
        read_back: false,
        wireframe: false,
        ui: None,
        horizon: None,
        present: false,
        main_area: None,
        compose: Default::default(),
        second: None,
    };
    renderer.render(&input).expect("frame");
    renderer.finish().expect("finish");
    let completed = renderer.take_completed();
    let holes = completed.last().expect("one frame").hole_pixels;
    assert_eq!(holes, SIZE.0 * SIZE.1, "every pixel looks at undrawn ground");
    // The same frame with the analytic body drawn has none.
    let input = planet_render::FrameInput { constants: scene.constants(&view, sun_for(&body, &view), true), ..input };
    renderer.render(&input).expect("frame");
    renderer.finish().expect("finish");
    assert_eq!(renderer.take_completed().last().expect("a frame").hole_pixels, 0);
    assert_no_validation_messages(&renderer);
}

/// A 5 km crater and a flatten pad beside it, dug into the procedural pack.
fn crater_and_pad(lat: f64, lon: f64) -> Vec<planet_terrain::layers::Layer> {
    use planet_terrain::layers::{Layer, LayerKind, Target};
    vec![
        Layer { order: 1, kind: LayerKind::Crater { lat, lon, radius_m: 2500.0, depth_m: 500.0, rim_m: 120.0 } },
        Layer {
            order: 2,
            kind: LayerKind::Flatten {
                lat: lat - 0.03,
                lon: lon + 0.05,
                radius_m: 1500.0,
                target: Target::Elevation(2350.0),
                blend_m: 600.0,
            },
        },
    ]
}

/// The procedural pack to depth 2, the edit tests' crater site in its
/// mountains, and a view looking down at it from 14 km.
fn crater_site() -> (Arc<dyn HeightSource>, Body, (f64, f64), planet_terrain::camera::View) {
    let source = pack_source(&procedural_pack(2));
    let body = source.body().clone();
    let (lat, lon) = (-47.0, 39.0);
    let view = view_at(&body, lat - 0.12, lon - 0.05, 14_000.0, 25.0, -35.0, SIZE);
    (source, body, (lat, lon), view)
}

/// Inserts the crater and the pad at a place; returns the resident tiles
/// queued for re-staging.
fn dig_crater_and_pad(scene: &mut TerrainScene, lat: f64, lon: f64) -> usize {
    let (_, restaged) = scene
        .edit(|stack, e| {
            for layer in crater_and_pad(lat, lon) {
                stack.insert(e, layer)?;
            }
            Ok(())
        })
        .expect("edit");
    restaged
}

#[test]
fn an_edit_is_drawn_the_next_frame_and_removing_it_restores_the_picture() {
    let (source, body, (lat, lon), view) = crater_site();
    let mut renderer = renderer(SIZE, 512);
    let mut scene = TerrainScene::new(body.clone(), Some(source), &renderer, settings(2048, 1.0, 10.0));
    let sun = sun_for(&body, &view);
    let (_, before, _) = scene.render_until_resident(&mut renderer, &view, sun, 40).expect("resident");

    let restaged = dig_crater_and_pad(&mut scene, lat, lon);
    assert!(restaged > 0, "resident tiles under the edit are queued");
    // The very next frame draws the edit.
    let report = scene.frame(&mut renderer, &FrameRequest::headless(view, sun, ReadBack::Always)).expect("frame");
    let next = renderer.take_image().expect("image").expect("read back");
    assert!(report.statistics.uploads >= restaged, "the re-stage went out in this frame");
    let changed = differing_pixels(&before, &next);
    assert!(changed > 200, "the crater and the pad show in the next frame ({changed} pixels changed)");
    let (_, settled, _) = scene.render_until_resident(&mut renderer, &view, sun, 40).expect("resident");
    check_golden("crater_and_pad", &settled, GOLDEN);

    scene
        .edit(|stack, e| {
            stack.remove(e, 1)?;
            stack.remove(e, 2)
        })
        .expect("remove");
    let (_, after, _) = scene.render_until_resident(&mut renderer, &view, sun, 40).expect("resident");
    assert_eq!(differing_pixels(&before, &after), 0, "removing the layers restores the original picture");
    assert_no_validation_messages(&renderer);
}

/// A flat tile of `height` metres on a root (what it covers does not matter
/// to a slot write).
fn flat_tile(height: f32, colour: bool) -> planet_terrain::ground::SourceTile {
    let samples = (planet_terrain::geo::address::TILE_STORED_SAMPLES as usize).pow(2);
    planet_terrain::ground::SourceTile {
        tile: planet_terrain::geo::address::TileAddress::roots()[0],
        heights: (0..samples).map(|k| height + (k % 7) as f32).collect(),
        classes: Some(vec![1; samples]),
        colour: colour.then(|| vec![[10, 20, 30]; samples]),
        provenance: planet_terrain::ground::Provenance::Invented,
        voids: None,
    }
}

#[test]
fn a_slot_written_twice_in_one_frame_keeps_the_last_write_without_validation_messages() {
    let body = Body::earth();
    let mut renderer = renderer(SIZE, 8);
    let scene = TerrainScene::new(body.clone(), None, &renderer, settings(64, 1.0, 1.0));
    let view = view_at(&body, 10.0, 10.0, 500_000.0, 0.0, -90.0, SIZE);
    let (first, second, other) = (flat_tile(100.0, true), flat_tile(2000.0, false), flat_tile(-50.0, true));
    let uploads = [(3, &first), (5, &other), (3, &second)];
    let input = planet_render::FrameInput {
        constants: scene.constants(&view, sun_for(&body, &view), true),
        records: &[],
        uploads: &uploads,
        encoded: &[],
        staging_limit: None,
        data_depths: Default::default(),
        read_back: true,
        wireframe: false,
        ui: None,
        horizon: None,
        present: false,
        main_area: None,
        compose: Default::default(),
        second: None,
    };
    // Twice: the second frame writes the same layers again, from SHADER_READ.
    for _ in 0..2 {
        renderer.render(&input).expect("frame");
    }
    renderer.finish().expect("finish");
    assert_no_validation_messages(&renderer);
    let held = renderer.slot_content(3);
    assert_eq!(held.height_base, 2000.0, "the last write wins");
    assert_eq!(held.flags & planet_terrain::abi::SLOT_HAS_COLOUR, 0, "the last write had no colour");
    assert_eq!(renderer.slot_content(5).height_base, -50.0);
}

#[test]
fn a_flight_over_a_coarse_pack_with_a_small_slot_budget_reports_no_validation_messages() {
    // Ten slots, six of them pinned roots: a slot filled this frame is the
    // least recently bound, so residency hands it out again in the same
    // frame, and the renderer sees two writes to one slot.
    let pack = procedural_pack(2);
    let source = pack_source(&pack);
    let body = source.body().clone();
    let mut renderer = renderer(SIZE, 10);
    let mut scene_settings = settings(1024, 1.0, 100.0);
    scene_settings.uploads_per_frame = 8;
    let mut scene = TerrainScene::new(body.clone(), Some(source), &renderer, scene_settings);
    for step in 0..12 {
        let t = f64::from(step) / 11.0;
        let height = 8_000_000.0 * (1.0 - t) + 60_000.0 * t;
        let view = view_at(&body, -30.0 + 20.0 * t, 140.0 + 15.0 * t, height, 30.0, -60.0, SIZE);
        let mode = if step % 4 == 3 { ReadBack::Always } else { ReadBack::Never };
        scene.frame(&mut renderer, &FrameRequest::headless(view, sun_for(&body, &view), mode)).expect("frame");
    }
    renderer.finish().expect("finish");
    assert_no_validation_messages(&renderer);
}

/// Tiles produced on worker threads: a frame never waits for them, yet the
/// settled picture is the one tiles produced on the frame give, pixel for
/// pixel, and an edit still shows in the very next frame.
#[test]
fn background_loading_settles_on_the_same_picture_and_edits_show_the_next_frame() {
    let (source, body, (lat, lon), view) = crater_site();
    let mut renderer = renderer(SIZE, 512);
    let sun = sun_for(&body, &view);
    let on_frame = settings(2048, 1.0, 10.0);
    let background = SceneSettings { loading: Loading::Background { threads: 2 }, ..on_frame };

    let mut scene = TerrainScene::new(body.clone(), Some(source.clone()), &renderer, on_frame);
    let (_, expected, _) = scene.render_until_resident(&mut renderer, &view, sun, 40).expect("resident");
    let mut scene = TerrainScene::new(body.clone(), Some(source), &renderer, background);
    let first = scene.frame(&mut renderer, &FrameRequest::headless(view, sun, ReadBack::Never)).expect("frame");
    assert_eq!(first.statistics.uploads, 0, "the first frame waits for no tile");
    assert!(first.statistics.pending_requests > 0, "it asks for them: {:?}", first.statistics);
    let (report, settled, _) = scene.render_until_resident(&mut renderer, &view, sun, 200).expect("resident");
    assert!(report.complete, "streaming settles: {:?}", report.statistics);
    assert_eq!(differing_pixels(&expected, &settled), 0, "the same picture as tiles made on the frame");

    let restaged = dig_crater_and_pad(&mut scene, lat, lon);
    assert!(restaged > 0);
    let report = scene.frame(&mut renderer, &FrameRequest::headless(view, sun, ReadBack::Always)).expect("frame");
    let next = renderer.take_image().expect("image").expect("read back");
    assert!(report.statistics.uploads >= restaged, "re-staged on the frame, not queued behind the workers");
    assert!(differing_pixels(&settled, &next) > 200, "the edit shows in the next frame");
    assert_no_validation_messages(&renderer);
}

/// The brightest pixel of `image` and its value (the sum of its channels).
fn brightest(image: &planet_render::RgbaImage) -> ((u32, u32), u32) {
    let sum = |p: &[u8]| u32::from(p[0]) + u32::from(p[1]) + u32::from(p[2]);
    let (k, best) = image.pixels.chunks_exact(4).enumerate().max_by_key(|(_, p)| sum(p)).expect("pixels");
    ((k as u32 % image.width, k as u32 / image.width), sum(best))
}

/// Issue #29: looking toward a sun 12 degrees up, the sky showed no sun
/// (its brightest pixel 72 of 255 where the sun stood). Its disc is now
/// drawn white where the sun's direction projects, and its glow brightens
/// the sky around it.
#[test]
fn the_sun_stands_in_the_sky_where_its_direction_projects() {
    let source = ridges();
    let (lat, lon) = (44.6, 6.5);
    let body = source.body.clone();
    let view = view_at(&body, lat, lon, ground(&source, lat, lon) + 3000.0, 100.0, 10.0, SIZE);
    // A sun 12 degrees up, 8 degrees right of straight ahead.
    let up = body.ellipsoid().geodetic_to_direction(planet_terrain::geo::body::Geodetic::from_degrees(lat, lon, 0.0));
    let level = (view.forward() - up * view.forward().dot(up)).normalize();
    let right = (view.right() - up * view.right().dot(up)).normalize();
    let (e, a) = (12f64.to_radians(), 8f64.to_radians());
    let sun = (level * (e.cos() * a.cos()) + right * (e.cos() * a.sin()) + up * e.sin()).normalize();
    let (x, y) = view.project(view.position + sun * 1e9).expect("the sun is ahead");
    assert!(x > 96.0 && y > 0.0 && y < 60.0, "the sun is in the upper right of the frame: {x:.1}, {y:.1}");
    let mut renderer = renderer(SIZE, 512);
    let mut scene =
        TerrainScene::new(body, Some(source as Arc<dyn HeightSource>), &renderer, settings(1024, 2.0, 20.0));
    let (_, image, _) = scene.render_until_resident(&mut renderer, &view, sun, 30).expect("render");
    assert_no_validation_messages(&renderer);
    let ((bx, by), value) = brightest(&image);
    assert!(value >= 3 * 250, "the disc is white: {value}");
    let off = ((f64::from(bx) + 0.5 - x).powi(2) + (f64::from(by) + 0.5 - y).powi(2)).sqrt();
    // Within the disc (0.27 degrees, under a pixel here) and its antialiased rim.
    assert!(off <= 2.5, "the brightest pixel {bx},{by} is the sun's {x:.1},{y:.1}");
    // The glow: the sky 10 pixels from the sun is brighter than 60 away, at the same height.
    let at = |px: f64| {
        let k = 4 * (y as usize * image.width as usize + px.clamp(0.0, f64::from(SIZE.0) - 1.0) as usize);
        u32::from(image.pixels[k]) + u32::from(image.pixels[k + 1]) + u32::from(image.pixels[k + 2])
    };
    assert!(at(x - 10.0) > at(x - 60.0) + 30, "glow: {} near the sun, {} away", at(x - 10.0), at(x - 60.0));
}

/// Issue #29: the night side rendered pure black (mean 0.001 of 255) against
/// a black sky. Now its ground is dark but not void, the sky beyond the
/// limb holds stars, and the day side is as it was.
#[test]
fn the_night_side_is_dark_ground_against_the_stars() {
    let pack = procedural_pack(2);
    let source = pack_source(&pack);
    let body = source.body().clone();
    let view = view_at(&body, 0.0, 0.0, 15_000_000.0, 0.0, -90.0, SIZE);
    // The sun behind the body: every ground pixel in view is night.
    let sun = -body.ellipsoid().geodetic_to_direction(planet_terrain::geo::body::Geodetic::from_degrees(0.0, 0.0, 0.0));
    let mut renderer = renderer(SIZE, 256);
    let mut scene = TerrainScene::new(body.clone(), Some(source), &renderer, settings(1024, 2.0, 1000.0));
    let (_, image, _) = scene.render_until_resident(&mut renderer, &view, sun, 30).expect("render");
    assert_no_validation_messages(&renderer);
    let (cx, cy) = (SIZE.0 as usize / 2, SIZE.1 as usize / 2);
    let pixel = |x: usize, y: usize| {
        let k = 4 * (y * SIZE.0 as usize + x);
        (f64::from(image.pixels[k]) + f64::from(image.pixels[k + 1]) + f64::from(image.pixels[k + 2])) / 3.0
    };
    // The disc's middle third: ground.
    let ground: Vec<f64> =
        (cy - 10..cy + 10).flat_map(|y| (cx - 10..cx + 10).map(move |x| (x, y))).map(|(x, y)| pixel(x, y)).collect();
    let mean = ground.iter().sum::<f64>() / ground.len() as f64;
    assert!((0.5..6.0).contains(&mean), "night ground mean {mean:.2} of 255: dark, not void");
    // The corners are space: some star there, most of it black.
    let corner: Vec<f64> = (0..30).flat_map(|y| (0..60).map(move |x| (x, y))).map(|(x, y)| pixel(x, y)).collect();
    let lit = corner.iter().filter(|&&v| v > 20.0).count();
    assert!(lit >= 1 && lit * 20 < corner.len(), "{lit} of {} corner pixels are stars", corner.len());
}
