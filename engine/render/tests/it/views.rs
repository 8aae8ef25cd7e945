//! A second view in the same frame (#54 item 2): each view draws what it
//! would alone, beside the other or as an inset over it, and under a slot
//! budget smaller than either cut both fall back on ancestors, never on
//! holes.

use planet_render::scene::{FrameReport, FrameRequest, ReadBack, SecondView, ShadowMode, TerrainScene, sun_for};
use planet_render::{PixelRect, RgbaImage};
use planet_terrain::camera::View;
use planet_terrain::geo::body::Body;

use crate::support::*;

const SIZE: (u32, u32) = (160, 100);

/// Scene settings whose pictures do not depend on where the horizon map
/// was built (it follows the main camera): shadows off.
fn unshadowed() -> planet_render::scene::SceneSettings {
    planet_render::scene::SceneSettings { shadows: ShadowMode::Off, ..settings(1024, 2.0, 1000.0) }
}

fn main_view(body: &Body, size: (u32, u32)) -> View {
    view_at(body, -30.0, 140.0, 1_500_000.0, 10.0, -70.0, size)
}

fn other_view(body: &Body, size: (u32, u32)) -> View {
    view_at(body, -24.0, 152.0, 700_000.0, 230.0, -35.0, size)
}

/// `view` alone on a target of its size, lit as the two-view frames are.
fn alone(view: &View, body: &Body, sun: glam::DVec3) -> RgbaImage {
    let source = pack_source(&procedural_pack(2));
    let mut renderer = renderer(view.viewport, 512);
    let mut scene = TerrainScene::new(body.clone(), Some(source), &renderer, unshadowed());
    let (report, image, _) = scene.render_until_resident(&mut renderer, view, sun, 40).expect("a frame");
    assert!(report.complete, "{report:?}");
    assert_no_validation_messages(&renderer);
    image
}

/// The two views in one frame on a `target`, the second over `area`.
fn together(target: (u32, u32), main_area: Option<PixelRect>, area: PixelRect) -> (FrameReport, RgbaImage) {
    let source = pack_source(&procedural_pack(2));
    let body = source.body().clone();
    let mut renderer = renderer(target, 512);
    let mut scene = TerrainScene::new(body.clone(), Some(source), &renderer, unshadowed());
    let main_size = main_area.map_or(target, |a| (a.width, a.height));
    let main = main_view(&body, main_size);
    let second =
        SecondView { view: other_view(&body, (area.width, area.height)), target_error_px: 2.0, near_m: 1000.0, area };
    let mut request =
        FrameRequest { second: Some(second), ..FrameRequest::headless(main, sun_for(&body, &main), ReadBack::Never) };
    request.delivery.area = main_area;
    let (report, image, _) =
        scene.render_until_resident_with(&mut renderer, &request, 40, &mut |_, _| {}).expect("a frame");
    assert_no_validation_messages(&renderer);
    (report, image)
}

/// `image`'s pixels inside `area`, as an image of their own.
fn crop(image: &RgbaImage, area: PixelRect) -> RgbaImage {
    let mut pixels = Vec::with_capacity((4 * area.width * area.height) as usize);
    for y in area.y..area.y + area.height {
        for x in area.x..area.x + area.width {
            pixels.extend_from_slice(&image.pixel(x, y));
        }
    }
    RgbaImage { width: area.width, height: area.height, pixels }
}

/// Pixels of `a` and `b` (one size) differing by more than 2 in a channel,
/// those where `skip` holds aside.
fn differing(a: &RgbaImage, b: &RgbaImage, skip: impl Fn(u32, u32) -> bool) -> usize {
    let mut count = 0;
    for y in 0..a.height {
        for x in 0..a.width {
            let (p, q) = (a.pixel(x, y), b.pixel(x, y));
            if !skip(x, y) && p.iter().zip(q).any(|(&p, q)| p.abs_diff(q) > 2) {
                count += 1;
            }
        }
    }
    count
}

#[test]
fn a_second_view_beside_the_first_draws_what_each_would_alone() {
    let main_area = PixelRect { x: 0, y: 0, width: SIZE.0, height: SIZE.1 };
    let area = PixelRect { x: SIZE.0, ..main_area };
    let (report, image) = together((2 * SIZE.0, SIZE.1), Some(main_area), area);
    assert!(report.complete, "both views' tiles resident: {report:?}");
    let second = report.second.expect("the second view reports");
    assert!(second.statistics.nodes_drawn > 0 && second.statistics.effective_screen_error_pixels <= 2.0, "{second:?}");
    save_for_review("views", "beside", &image);
    let body = pack_source(&procedural_pack(2)).body().clone();
    let sun = sun_for(&body, &main_view(&body, SIZE));
    for (name, view, area) in [("main", main_view(&body, SIZE), main_area), ("second", other_view(&body, SIZE), area)] {
        let differ = differing(&crop(&image, area), &alone(&view, &body, sun), |_, _| false);
        assert_eq!(differ, 0, "the {name} view: {differ} pixels differ from it drawn alone");
    }
}

#[test]
fn an_inset_covers_its_corner_and_nothing_else() {
    let area = PixelRect { x: 100, y: 60, width: 53, height: 33 };
    let (report, image) = together(SIZE, None, area);
    assert!(report.complete, "{report:?}");
    save_for_review("views", "inset", &image);
    let body = pack_source(&procedural_pack(2)).body().clone();
    let sun = sun_for(&body, &main_view(&body, SIZE));
    let inside =
        |x: u32, y: u32| (area.x..area.x + area.width).contains(&x) && (area.y..area.y + area.height).contains(&y);
    // Around the inset, the main view as it is alone: the inset's depth
    // and colour stayed inside its area.
    let differ = differing(&image, &alone(&main_view(&body, SIZE), &body, sun), inside);
    assert_eq!(differ, 0, "{differ} pixels outside the inset differ from the main view alone");
    // Inside, the second view as it is alone at the inset's size: the
    // main view's depth under the corner hid none of it.
    let second_alone = alone(&other_view(&body, (area.width, area.height)), &body, sun);
    let differ = differing(&crop(&image, area), &second_alone, |_, _| false);
    assert_eq!(differ, 0, "{differ} pixels of the inset differ from the second view alone");
}

#[test]
fn two_views_under_a_small_slot_budget_draw_ancestors_never_holes() {
    // Twenty slots: fewer than either view's cut draws, let alone their
    // union. Residency keeps the six roots and the most wanted tiles of
    // both; every other node draws its nearest resident ancestor.
    let source = pack_source(&procedural_pack(2));
    let body = source.body().clone();
    let target = (2 * SIZE.0, SIZE.1);
    let mut renderer = renderer(target, 20);
    let mut scene = TerrainScene::new(body.clone(), Some(source), &renderer, settings(256, 1.0, 1000.0));
    let main_area = PixelRect { x: 0, y: 0, width: SIZE.0, height: SIZE.1 };
    let area = PixelRect { x: SIZE.0, ..main_area };
    let second = SecondView { view: other_view(&body, SIZE), target_error_px: 1.0, near_m: 1000.0, area };
    let (mut on_ancestors, mut second_on_ancestors) = (0, 0);
    for k in 0..10 {
        let main = view_at(&body, -30.0, 140.0, 2_500_000.0 - 200_000.0 * k as f64, 10.0, -70.0, SIZE);
        let mut request = FrameRequest {
            second: Some(second),
            ..FrameRequest::headless(main, sun_for(&body, &main), ReadBack::Always)
        };
        request.delivery.area = Some(main_area);
        let report = scene.frame(&mut renderer, &request).expect("a frame");
        renderer.finish().expect("the frame finishes");
        let completed = renderer.take_completed();
        let holes = completed.last().expect("the frame completed").hole_pixels;
        let image = renderer.take_image().expect("read back").expect("an image");
        save_for_review("views", &format!("small-slots-{k}"), &image);
        let second_report = report.second.expect("the second view reports");
        assert_eq!(holes, 0, "frame {k}: {holes} hole pixels");
        // The first frame uploads the roots (the ellipsoid stands in for
        // them); from the next, every node of either view draws a tile.
        if k > 0 {
            assert_eq!(report.statistics.nodes_dropped, 0, "frame {k}: main view");
            assert_eq!(second_report.statistics.nodes_dropped, 0, "frame {k}: second view");
            assert!(!report.analytic_body, "frame {k}: the roots are resident");
        }
        for s in [report.statistics, second_report.statistics] {
            assert!(s.effective_screen_error_pixels.is_finite() && s.effective_screen_error_pixels > 0.0, "{s:?}");
        }
        on_ancestors += report.nodes_on_ancestors;
        second_on_ancestors += second_report.nodes_on_ancestors;
        assert!(!report.complete, "frame {k}: twenty slots cannot hold both cuts");
    }
    // The budget bit: both views drew ancestors where their tiles did not fit.
    assert!(on_ancestors > 0 && second_on_ancestors > 0, "{on_ancestors} {second_on_ancestors}");
    assert_no_validation_messages(&renderer);
}
