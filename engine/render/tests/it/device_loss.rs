//! A lost device survived (#54 item 3): the renderer is made again, the
//! scene uploads what its cut needs from empty slots, and the frames after
//! match those of a sequence that never lost it, with the validation
//! layers on across both devices.

use planet_render::scene::{FrameRequest, ReadBack, TerrainScene, sun_for};

use crate::support::*;

const SIZE: (u32, u32) = (160, 100);

/// Eight frames of one descent; with `lose_at`, the device is lost at that
/// frame. Returns each frame's picture and report.
fn descend(lose_at: Option<u64>) -> Vec<(planet_render::RgbaImage, planet_render::scene::FrameReport)> {
    let pack = procedural_pack(2);
    let source = pack_source(&pack);
    let body = source.body().clone();
    let mut renderer = renderer(SIZE, 256);
    if let Some(frame) = lose_at {
        renderer.lose_device_at(frame);
    }
    let mut scene = TerrainScene::new(body.clone(), Some(source), &renderer, settings(1024, 2.0, 1000.0));
    let mut frames = Vec::new();
    for k in 0..8 {
        let view = view_at(&body, -30.0, 140.0, 3_000_000.0 - 200_000.0 * k as f64, 10.0, -70.0, SIZE);
        let request = FrameRequest::headless(view, sun_for(&body, &view), ReadBack::Always);
        let report = scene.frame(&mut renderer, &request).expect("a frame, the lost device made again");
        renderer.finish().expect("the frame finishes");
        let image = renderer
            .take_image()
            .unwrap_or_else(|e| panic!("frame {k} (lose at {lose_at:?}): {e}"))
            .expect("read back");
        frames.push((image, report));
    }
    assert_no_validation_messages(&renderer);
    frames
}

#[test]
fn a_lost_device_is_made_again_and_the_frames_after_match() {
    let steady = descend(None);
    let lost = descend(Some(3));
    let reported: Vec<usize> =
        lost.iter().enumerate().filter(|(_, (_, r))| r.device_lost.is_some()).map(|(k, _)| k).collect();
    assert_eq!(reported, [3], "the frame that lost the device says so, and no other");
    assert!(steady.iter().all(|(_, r)| r.device_lost.is_none()));
    // The frame on the new device starts from empty slots: it uploads what
    // its cut needs and draws ancestors or the ellipsoid meanwhile.
    assert!(lost[3].1.statistics.uploads > 0, "the new device is given the cut's tiles");
    for k in (0..3).chain(5..8) {
        let differing = differing_pixels(&steady[k].0, &lost[k].0);
        assert_eq!(differing, 0, "frame {k}: {differing} pixels differ from the sequence that kept its device");
        assert_eq!(steady[k].1.complete, lost[k].1.complete, "frame {k}");
    }
}
