//! Several bodies in one picture (#54 item 1): each body's scene draws its
//! own cut from one camera placed in the inertial frame, the far body
//! first without the sky, the near one over it with its sky, each in its
//! own range of the renderer's slots. Their depths compare, so the near
//! body hides the far one's limb and nothing else.

use std::sync::Arc;

use glam::{DMat3, DQuat, DVec3};
use planet_render::scene::{Delivery, FrameRequest, ReadBack, SceneSettings, SlotRange, TerrainScene};
use planet_render::{Compose, Renderer, RgbaImage};
use planet_terrain::camera::View;
use planet_terrain::geo::body::Body;
use planet_terrain::geo::system::Placement;
use planet_terrain::ground::{HeightSource, ProceduralSource};

use crate::support::*;

const SIZE: (u32, u32) = (200, 200);
const MOON_DISTANCE_M: f64 = 384_400e3;

/// The Earth at the origin and the Moon on +x, both unturned: a frame
/// chosen for the test, not an ephemeris.
fn placements() -> (Placement, Placement) {
    let earth = Placement { centre: DVec3::ZERO, to_body: DQuat::IDENTITY };
    let moon = Placement { centre: DVec3::new(MOON_DISTANCE_M, 0.0, 0.0), to_body: DQuat::IDENTITY };
    (earth, moon)
}

/// 30,000 km beyond the Moon, 1,800 km aside, looking back at the Earth:
/// the Earth (0.88 degree across in radius) straddles the Moon's limb
/// (3.3 degrees in radius), 3.2 degrees from the Moon's centre.
fn camera() -> View {
    let position = DVec3::new(MOON_DISTANCE_M + 30_000e3, 1_800e3, 0.0);
    let moon = DVec3::new(MOON_DISTANCE_M, 0.0, 0.0);
    let forward = ((moon - position).normalize() + (-position).normalize()).normalize();
    let up = DVec3::Z;
    let right = forward.cross(up).normalize();
    let up = right.cross(forward);
    let orientation = DQuat::from_mat3(&DMat3::from_cols(right, up, -forward)).normalize();
    View { position, orientation, vertical_fov: 12f64.to_radians(), viewport: SIZE, axis_offset_px: 0.0 }
}

/// The sun behind the camera, a little aside: both faces in view lit.
fn sun() -> DVec3 {
    DVec3::new(1.0, 0.3, 0.2).normalize()
}

fn earth_source() -> Arc<dyn HeightSource> {
    pack_source(&procedural_pack(2))
}

fn moon_source() -> Arc<dyn HeightSource> {
    Arc::new(ProceduralSource::new(Body::moon(), 3))
}

fn scene(renderer: &Renderer, source: Arc<dyn HeightSource>, slots: SlotRange) -> TerrainScene {
    let settings = SceneSettings { slots: Some(slots), ..settings(512, 2.0, 1000.0) };
    TerrainScene::new(source.body().clone(), Some(source), renderer, settings)
}

fn request(view: View, placement: &Placement, compose: Compose, read_back: ReadBack) -> FrameRequest<'static> {
    let delivery = Delivery { compose, ..Delivery::headless(read_back) };
    let view = view.in_placed_body(placement);
    FrameRequest { view, sun: placement.direction_to_body(sun()), delivery, second: None }
}

/// One body alone, cleared and without the sky: where it covers the
/// picture (the rest stays the clear colour, black).
fn alone(source: Arc<dyn HeightSource>, placement: &Placement) -> RgbaImage {
    let mut renderer = renderer(SIZE, 128);
    let mut scene = scene(&renderer, source, SlotRange { first: 0, count: 128 });
    let request = request(camera(), placement, Compose { over_previous: false, sky: false }, ReadBack::Never);
    let (report, image, _) =
        scene.render_until_resident_with(&mut renderer, &request, 40, &mut |_, _| {}).expect("a frame");
    assert!(report.complete, "{report:?}");
    assert_no_validation_messages(&renderer);
    image
}

fn black(p: [u8; 4]) -> bool {
    p[..3] == [0, 0, 0]
}

#[test]
fn the_near_body_hides_the_far_ones_limb_and_nothing_else() {
    let (earth_at, moon_at) = placements();
    let mut renderer = renderer(SIZE, 256);
    // The Moon's scene in the first 64 slots, the Earth's in the rest.
    let mut moon = scene(&renderer, moon_source(), SlotRange { first: 0, count: 64 });
    let mut earth = scene(&renderer, earth_source(), SlotRange { first: 64, count: 192 });
    let mut composed = None;
    for _ in 0..40 {
        let under = request(camera(), &earth_at, Compose { over_previous: false, sky: false }, ReadBack::Never);
        let far = earth.frame(&mut renderer, &under).expect("the Earth's frame");
        let over = request(camera(), &moon_at, Compose { over_previous: true, sky: true }, ReadBack::Always);
        let near = moon.frame(&mut renderer, &over).expect("the Moon's frame");
        renderer.finish().expect("the frames finish");
        let image = renderer.take_image().expect("read back").expect("an image");
        if far.complete && near.complete {
            composed = Some(image);
            break;
        }
    }
    let composed = composed.expect("both bodies' tiles resident within 40 frames");
    assert_no_validation_messages(&renderer);
    save_for_review("several_bodies", "composed", &composed);
    let (earth_alone, moon_alone) = (alone(earth_source(), &earth_at), alone(moon_source(), &moon_at));
    let (mut earth_seen, mut earth_hidden, mut wrong) = (0, 0, Vec::new());
    for y in 0..SIZE.1 {
        for x in 0..SIZE.0 {
            let (c, e, m) = (composed.pixel(x, y), earth_alone.pixel(x, y), moon_alone.pixel(x, y));
            let expected = if !black(m) {
                earth_hidden += usize::from(!black(e));
                m
            } else if !black(e) {
                earth_seen += 1;
                e
            } else {
                continue; // the sky: the Moon's stars
            };
            if c.iter().zip(expected).any(|(&c, e)| c.abs_diff(e) > 2) {
                wrong.push((x, y, c, expected));
            }
        }
    }
    assert!(
        earth_seen > 100 && earth_hidden > 100,
        "the Earth half behind the limb: {earth_seen} seen, {earth_hidden} hidden"
    );
    assert!(wrong.is_empty(), "{} pixels differ from the body in front there, first {:?}", wrong.len(), wrong.first());
}
