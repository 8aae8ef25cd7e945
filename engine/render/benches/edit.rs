//! Edit-to-pixels: from inserting a 5 km crater over fully resident ground
//! to the frame that shows it, at orbit and at 100 m. Prints frames and
//! milliseconds (the edit itself, then each frame until the picture changes,
//! host and GPU together: every frame is read back).
//!
//! `cargo bench -p planet-render --bench edit` (on a machine without a GPU,
//! with `VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json`).

use std::sync::Arc;
use std::time::Instant;

use planet_render::scene::{FrameRequest, ReadBack, SceneSettings, TerrainScene, sun_for};
use planet_render::{GpuSettings, Renderer, RendererSettings};
use planet_terrain::camera::View;
use planet_terrain::geo::body::Geodetic;
use planet_terrain::ground::query::{GroundReader, depth_for_spacing};
use planet_terrain::ground::{HeightSource, PackSource};
use planet_terrain::layers::{Layer, LayerKind};
use planet_terrain::lod::SelectionSettings;
use planet_terrain::pack::Pack;

const SIZE: (u32, u32) = (1280, 720);

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bench.planetpack");
    planet_terrain::testing::write_procedural_pack(&path, 2).expect("pack");
    let source: Arc<dyn HeightSource> = Arc::new(PackSource::new(Arc::new(Pack::open(&path).expect("open"))));
    let body = source.body().clone();
    let (lat, lon) = (-47.0, 39.0);
    let ground = {
        let depth = depth_for_spacing(source.as_ref(), 5.0);
        GroundReader::new(source.as_ref(), depth).height(Geodetic::from_degrees(lat, lon, 0.0)).expect("ground")
    };
    println!("edit-to-pixels, {}x{}, 5 km crater (depth 500 m) under the view centre", SIZE.0, SIZE.1);
    println!(
        "{:<8} {:>8} {:>7} {:>9} {:>10} {:>10}",
        "view", "restaged", "frames", "edit_ms", "frame_ms", "changed_px"
    );
    for (name, height, pitch) in
        [("orbit", 20_000_000.0, -90.0), ("400 km", 400_000.0, -90.0), ("100 m", ground + 100.0, -60.0)]
    {
        let mut renderer = Renderer::new(RendererSettings {
            size: SIZE,
            slots: 1024,
            max_nodes: 4096,
            frames_in_flight: 2,
            uploads_per_frame: 128,
            gpu: GpuSettings::default(),
        })
        .expect("a Vulkan device");
        let settings = SceneSettings {
            selection: SelectionSettings { target_error_px: 1.0, node_budget: 2048, near_m: 1.0 },
            uploads_per_frame: 128,
            ..SceneSettings::default()
        };
        let mut scene = TerrainScene::new(body.clone(), Some(source.clone()), &renderer, settings);
        // Looking at the crater site from a little to the side.
        let view = View::looking_from(
            &body,
            Geodetic::from_degrees(lat - 0.0008, lon, height),
            0.0,
            pitch,
            50f64.to_radians(),
            SIZE,
        );
        let sun = sun_for(&body, &view);
        let (_, before, _) = scene.render_until_resident(&mut renderer, &view, sun, 200).expect("resident");
        let started = Instant::now();
        let (_, restaged) = scene
            .edit(|stack, e| {
                stack.insert(
                    e,
                    Layer {
                        order: 1,
                        kind: LayerKind::Crater { lat, lon, radius_m: 2500.0, depth_m: 500.0, rim_m: 120.0 },
                    },
                )
            })
            .expect("edit");
        let edit_ms = started.elapsed().as_secs_f64() * 1e3;
        let mut frames = 0;
        let mut changed = 0;
        let mut frame_ms = 0.0;
        while frames < 10 {
            let started = Instant::now();
            scene.frame(&mut renderer, &FrameRequest::headless(view, sun, ReadBack::Always)).expect("frame");
            let image = renderer.take_image().expect("image").expect("read back");
            frame_ms += started.elapsed().as_secs_f64() * 1e3;
            frames += 1;
            changed = image.pixels.chunks_exact(4).zip(before.pixels.chunks_exact(4)).filter(|(a, b)| a != b).count();
            if changed > 0 {
                break;
            }
        }
        let frames_text = if changed > 0 { frames.to_string() } else { format!(">{frames}") };
        println!("{name:<8} {restaged:>8} {frames_text:>7} {edit_ms:>9.2} {frame_ms:>10.1} {changed:>10}");
    }
}
