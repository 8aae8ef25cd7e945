//! The bodies pass: a ball or a crate in front of the ground is drawn, one
//! behind it (under the ground along the same ray) leaves the picture
//! exactly as it was without it, one draw per body, no validation message.

use std::sync::Arc;

use glam::DVec3;
use planet_render::scene::{TerrainScene, sun_for};
use planet_render::{BodyDraw, BodyShape, RgbaImage};
use planet_terrain::geo::body::Geodetic;
use planet_terrain::ground::HeightSource;

use crate::support::*;

const SIZE: (u32, u32) = (160, 100);

/// A body of half-size `half` metres `distance` metres down the view's
/// centre ray.
fn on_centre_ray(forward: DVec3, distance: f64, half: f64, shape: BodyShape) -> BodyDraw {
    let axis = |v: [f32; 3]| v.map(|c| c * half as f32);
    BodyDraw {
        centre_from_camera: (forward * distance).as_vec3().to_array(),
        axes: [axis([1.0, 0.0, 0.0]), axis([0.0, 1.0, 0.0]), axis([0.0, 0.0, 1.0])],
        shape,
        colour: [1.0, 0.0, 0.0],
    }
}

/// A camera 20 m over the ridge, heading 135 degrees at `pitch`, with its
/// renderer and scene.
fn over_the_ridge(pitch: f64) -> (planet_terrain::View, planet_render::Renderer, TerrainScene) {
    let source = Arc::new(RidgeSource::new(45.0, 7.0));
    let body = source.body.clone();
    let (lat, lon) = (45.02, 7.03);
    let ground = source.elevation(body.ellipsoid().geodetic_to_direction(Geodetic::from_degrees(lat, lon, 0.0)));
    let view = view_at(&body, lat, lon, ground + 20.0, 135.0, pitch, SIZE);
    let renderer = renderer(SIZE, 512);
    let scene = TerrainScene::new(body, Some(source as Arc<dyn HeightSource>), &renderer, settings(2048, 1.0, 0.5));
    (view, renderer, scene)
}

fn centre(image: &RgbaImage) -> [u8; 4] {
    image.pixel(image.width / 2, image.height / 2)
}

#[test]
fn bodies_show_in_front_of_the_ground_and_hide_behind_it() {
    // 20 m up, looking 30 degrees down: the centre ray meets the ground ~40 m out.
    let (view, mut renderer, mut scene) = over_the_ridge(-30.0);
    let sun = sun_for(scene.body(), &view);
    let mut shot = |renderer: &mut planet_render::Renderer, bodies: &[BodyDraw]| {
        renderer.set_bodies(bodies);
        let (report, image, _) = scene.render_until_resident(renderer, &view, sun, 40).expect("render");
        assert!(report.complete);
        assert_eq!(report.draw_calls.bodies as usize, bodies.len(), "one draw per body");
        image
    };
    let plain = shot(&mut renderer, &[]);
    let ball = shot(&mut renderer, &[on_centre_ray(view.forward(), 15.0, 1.5, BodyShape::Sphere)]);
    let [r, g, b, _] = centre(&ball);
    assert!(g == 0 && b == 0 && r > 0, "the ball (pure red) covers the centre: {:?}", centre(&ball));
    let crate_ = shot(&mut renderer, &[on_centre_ray(view.forward(), 15.0, 1.0, BodyShape::Box)]);
    assert_eq!(&centre(&crate_)[1..3], &[0, 0], "the crate covers the centre: {:?}", centre(&crate_));
    // 400 m down the ray is 180 m under the ground: the terrain hides it whole.
    let buried = shot(&mut renderer, &[on_centre_ray(view.forward(), 400.0, 2.0, BodyShape::Sphere)]);
    assert!(buried.pixels == plain.pixels, "a body behind the ground changes no pixel");
    assert_no_validation_messages(&renderer);
}

/// Regression: the sky was drawn after the bodies without the frame's push
/// constants pushed again (the bodies' layout had replaced them), so any
/// body in the frame turned the sky black.
#[test]
fn the_sky_after_a_body_is_the_sky_without_it() {
    // Looking 10 degrees up: the top rows are sky, the ball at the centre.
    let (view, mut renderer, mut scene) = over_the_ridge(10.0);
    let sun = sun_for(scene.body(), &view);
    let mut shot = |renderer: &mut planet_render::Renderer, bodies: &[BodyDraw]| {
        renderer.set_bodies(bodies);
        scene.render_until_resident(renderer, &view, sun, 40).expect("render").1
    };
    let plain = shot(&mut renderer, &[]);
    let ball = shot(&mut renderer, &[on_centre_ray(view.forward(), 15.0, 1.0, BodyShape::Sphere)]);
    let [r, g, b, _] = centre(&ball);
    assert!(g == 0 && b == 0 && r > 0, "the ball covers the centre: {:?}", centre(&ball));
    let top_rows = |image: &RgbaImage| image.pixels[..(image.width * 10 * 4) as usize].to_vec();
    assert!(top_rows(&plain).chunks(4).all(|p| p[2] > 40), "the top rows are sky (blue) without a body");
    assert!(top_rows(&ball) == top_rows(&plain), "the sky is the same with a body in the frame");
    assert_no_validation_messages(&renderer);
}
