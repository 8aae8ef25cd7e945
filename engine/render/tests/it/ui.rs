//! The UI pass: egui's meshes drawn over a finished frame, under
//! validation, landing where egui put them and nowhere else.
//!
//! The key decision: the panel is painted with egui itself (a filled
//! rectangle and a label, so the font atlas goes through the pass's texture
//! upload), and judged against the same frame drawn without it.

use planet_render::egui;
use planet_render::scene::{Delivery, FrameRequest, ReadBack, TerrainScene, sun_for};
use planet_render::{RgbaImage, UiFrame};
use planet_terrain::geo::body::Body;

use crate::support::{assert_no_validation_messages, renderer, settings, view_at};

const SIZE: (u32, u32) = (160, 100);
/// The panel's width, points (one pixel each).
const PANEL: f32 = 40.0;

/// egui's output for one frame: a red strip down the left with a label on it.
fn panel(context: &egui::Context) -> UiFrame {
    let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(SIZE.0 as f32, SIZE.1 as f32));
    let input = egui::RawInput { screen_rect: Some(screen), ..egui::RawInput::default() };
    let output = context.run_ui(input, |ui| {
        let strip = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(PANEL, SIZE.1 as f32));
        ui.painter().rect_filled(strip, 0.0, egui::Color32::from_rgb(255, 0, 0));
        ui.put(egui::Rect::from_min_size(egui::pos2(2.0, 40.0), egui::vec2(36.0, 20.0)), egui::Label::new("ok"));
    });
    let primitives = context.tessellate(output.shapes, output.pixels_per_point);
    UiFrame { textures: output.textures_delta, primitives, pixels_per_point: output.pixels_per_point }
}

#[test]
fn panels_land_over_the_frame_and_nowhere_else() {
    let body = Body::earth();
    let mut renderer = renderer(SIZE, 8);
    let view = view_at(&body, 35.0, -40.0, 12_000_000.0, 0.0, -90.0, SIZE);
    let mut scene = TerrainScene::new(body.clone(), None, &renderer, settings(1024, 2.0, 1000.0));
    let sun = sun_for(&body, &view);
    let context = egui::Context::default();
    let mut draw = |ui: Option<&UiFrame>| -> (RgbaImage, u32) {
        let delivery = Delivery { ui, ..Delivery::headless(ReadBack::Always) };
        let report = scene.frame(&mut renderer, &FrameRequest { view, sun, delivery, second: None }).expect("a frame");
        renderer.finish().expect("finish");
        (renderer.take_image().expect("read back").expect("an image"), report.draw_calls.ui)
    };
    let (bare, draws) = draw(None);
    assert_eq!(draws, 0, "no UI, no UI pass");
    let first = panel(&context);
    assert!(!first.textures.set.is_empty(), "the first frame brings the font atlas");
    let (with_panel, draws) = draw(Some(&first));
    assert_eq!(draws, 1);
    // Again, with the atlas already uploaded.
    let (again, _) = draw(Some(&panel(&context)));
    assert_eq!(again.pixels, with_panel.pixels, "the same panel, the same pixels");
    for y in 0..SIZE.1 {
        assert_eq!(with_panel.pixel(2, y), [255, 0, 0, 255], "the strip at (2, {y})");
        for x in PANEL as u32 + 1..SIZE.0 {
            assert_eq!(with_panel.pixel(x, y), bare.pixel(x, y), "the frame beside the panel at ({x}, {y})");
        }
    }
    let label = (0..36).flat_map(|x| (40..60).map(move |y| (x, y))).filter(|&(x, y)| with_panel.pixel(x, y)[1] > 100);
    assert!(label.count() > 5, "the label's glyphs show on the strip");
    assert_no_validation_messages(&renderer);
}
