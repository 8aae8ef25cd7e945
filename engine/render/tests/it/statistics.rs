//! The terrain passes' work counts (pipeline statistics, precise occlusion
//! queries) on lavapipe with validation on: present, consistent with the cut
//! that was drawn and with each other, and within the shaded pass's goal of
//! at most 1.2 fragments shaded per covered pixel; absent, and said to be,
//! when the counting queries are off. `PLANET_TEST_ANY_GPU=1` runs the same
//! checks on a real GPU, where the device's own fragment-invocation counter
//! is held to the goal too.

use std::sync::Arc;

use crate::support::*;
use planet_render::scene::{FrameRequest, ReadBack, TerrainScene, sun_for};
use planet_render::{
    CompletedFrame, GpuSettings, NODE_VERTICES, Renderer, RendererSettings, WorkCounts, lattice_indices_len,
};
use planet_terrain::ground::HeightSource;

const SIZE: (u32, u32) = (192, 120);

/// The goal of issue 16: the depth prepass leaves the shaded pass at most
/// this many fragments to shade per covered pixel.
const SHADED_FRAGMENTS_PER_PIXEL_GOAL: f64 = 1.2;

/// Triangles one node instance draws (the lattice's and the skirt's).
const NODE_TRIANGLES: u64 = 2304;

/// The counts of the newest completed frame (`finish` completes frames in
/// slot order, not age order).
fn newest_counts(renderer: &mut Renderer) -> WorkCounts {
    let completed: Vec<CompletedFrame> = renderer.take_completed();
    let newest = completed.iter().max_by_key(|c| c.frame).expect("a completed frame");
    newest.counts.expect("lavapipe has pipelineStatisticsQuery")
}

struct Case {
    name: &'static str,
    lat: f64,
    lon: f64,
    height: f64,
    heading: f64,
    pitch: f64,
    /// Whether every pixel looks at ground.
    covers_the_view: bool,
}

const CASES: [Case; 3] = [
    Case {
        name: "orbit",
        lat: 45.0,
        lon: 7.0,
        height: 9_000_000.0,
        heading: 0.0,
        pitch: -90.0,
        covers_the_view: false,
    },
    Case {
        name: "grazing 2 km",
        lat: 44.8,
        lon: 6.75,
        height: 4000.0,
        heading: 135.0,
        pitch: -7.0,
        covers_the_view: false,
    },
    Case {
        name: "looking down",
        lat: 45.0,
        lon: 7.0,
        height: 2400.0,
        heading: 30.0,
        pitch: -50.0,
        covers_the_view: true,
    },
];

#[test]
fn work_counts_agree_with_the_cut_and_the_depth_prepass_meets_its_goal() {
    let source = Arc::new(RidgeSource::new(45.0, 7.0));
    let body = source.body.clone();
    let mut renderer = renderer(SIZE, 512);
    assert!(renderer.counts_work(), "lavapipe counts pipeline statistics");
    let pixels = u64::from(SIZE.0 * SIZE.1);
    for case in &CASES {
        let view = view_at(&body, case.lat, case.lon, case.height, case.heading, case.pitch, SIZE);
        let shot = shoot(
            &mut renderer,
            body.clone(),
            Some(source.clone() as Arc<dyn HeightSource>),
            &view,
            settings(2048, 1.0, 1.0),
            40,
        );
        let nodes = shot.report.statistics.nodes_drawn as u64;
        let counts = newest_counts(&mut renderer);
        let (depth, shaded) = (counts.terrain_depth, counts.terrain_shaded);
        let covered = counts.covered_pixels.expect("lavapipe has occlusionQueryPrecise");
        eprintln!("{}: {nodes} nodes, {covered} of {pixels} pixels covered, {counts:?}", case.name);
        assert!(nodes > 0, "{}: a cut was drawn", case.name);
        // Input assembly counts exactly what was drawn, in both passes.
        assert_eq!(depth.input_primitives, nodes * NODE_TRIANGLES, "{}: depth pass triangles", case.name);
        assert_eq!(shaded.input_primitives, nodes * NODE_TRIANGLES, "{}: shaded pass triangles", case.name);
        // Every distinct vertex of every instance runs at least once; never
        // more than once per index.
        for (pass, c) in [("depth", depth), ("shaded", shaded)] {
            let per_node = c.vertex_invocations as f64 / nodes as f64;
            assert!(
                (f64::from(NODE_VERTICES)..=f64::from(lattice_indices_len())).contains(&per_node),
                "{}: {pass} pass: {per_node:.0} vertex runs per node",
                case.name
            );
        }
        // Both passes draw the same triangles at the same positions.
        assert_eq!(depth.clipping_primitives, shaded.clipping_primitives, "{}: clipped triangles", case.name);
        assert!(!shot.report.analytic_body, "{}: the terrain alone covers what is covered", case.name);
        // Coverage, counted by the sky: every pixel where the view is all
        // ground, fewer with sky in it.
        if case.covers_the_view {
            assert_eq!(covered, pixels, "{}: every pixel is ground", case.name);
        } else {
            assert!(covered > 0 && covered < pixels, "{}: {covered} of {pixels}", case.name);
        }
        // The prepass at work, on any device: each covered pixel passes the
        // shaded pass's depth test (it redraws the prepass's exact depths),
        // and the overdraw does not (the goal's bound; only ties on depth
        // let a pixel through twice).
        let passed = counts.shaded_samples_passed.expect("lavapipe has occlusionQueryPrecise");
        assert!(
            passed >= covered && passed as f64 <= SHADED_FRAGMENTS_PER_PIXEL_GOAL * covered as f64,
            "{}: {passed} fragments through the shaded pass's depth test for {covered} covered pixels",
            case.name
        );
        // Each covered pixel is shaded at least once.
        assert!(shaded.fragment_invocations >= covered, "{}: {shaded:?} for {covered}", case.name);
        if depth.fragment_invocations == 0 {
            // The device counts fragment shader runs (the depth pass has
            // none): the prepass must hold the shaded pass to the goal.
            let ratio = counts.shaded_fragments_per_covered_pixel().expect("covered pixels");
            assert!(
                ratio <= SHADED_FRAGMENTS_PER_PIXEL_GOAL,
                "{}: {ratio:.3} fragment shader runs per covered pixel",
                case.name
            );
        } else {
            // The device counts rasterised fragments whether a shader runs
            // or not (llvmpipe: 16 per 4 x 4 block a triangle touches,
            // before its depth test): both passes then rasterise the same
            // triangles at the same positions and count alike.
            assert_eq!(depth.fragment_invocations, shaded.fragment_invocations, "{}", case.name);
        }
    }
    assert_no_validation_messages(&renderer);
}

#[test]
fn without_counting_queries_a_frame_reports_its_counts_unavailable() {
    use_lavapipe();
    let mut renderer = Renderer::new(RendererSettings {
        size: SIZE,
        slots: 64,
        max_nodes: 1024,
        frames_in_flight: 2,
        uploads_per_frame: 64,
        gpu: GpuSettings { validation: true, skip_work_counts: true },
    })
    .expect("lavapipe");
    assert!(!renderer.counts_work());
    let source = Arc::new(RidgeSource::new(45.0, 7.0));
    let body = source.body.clone();
    let view = view_at(&body, 45.0, 7.0, 9_000_000.0, 0.0, -90.0, SIZE);
    let mut scene =
        TerrainScene::new(body.clone(), Some(source as Arc<dyn HeightSource>), &renderer, settings(256, 2.0, 1.0));
    for _ in 0..3 {
        scene
            .frame(&mut renderer, &FrameRequest::headless(view, sun_for(&body, &view), ReadBack::Never))
            .expect("frame");
    }
    renderer.finish().expect("finish");
    let completed = renderer.take_completed();
    assert_eq!(completed.len(), 3, "every frame completed");
    assert!(completed.iter().all(|c| c.counts.is_none()), "{completed:?}");
    assert!(completed.iter().all(|c| c.gpu.is_some()), "timestamps still work");
    assert_no_validation_messages(&renderer);
}
