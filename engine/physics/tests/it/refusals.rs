//! What the world refuses, and that it says what and why: a setting out of
//! range names the setting, a body too big for the patches' margin names
//! both sizes, a shape of no size is refused before it reaches Rapier.

use glam::DVec3;
use planet_physics::{GroundWorld, PhysicsError, Settings, Shape};
use planet_terrain::geo::body::Geodetic;
use planet_terrain::layers::LayerStack;

use crate::support::{earth_settings, flat_earth_with};

#[test]
fn bad_settings_and_bodies_are_refused_with_what_was_wrong() {
    let ground = flat_earth_with(LayerStack::new());
    let at = Geodetic::from_degrees(0.0, 0.0, 0.0);
    let refused = GroundWorld::new(&ground, Settings { step_s: 0.0, ..earth_settings() }, at).unwrap_err();
    assert!(matches!(refused, PhysicsError::Setting { name: "step_s", .. }), "{refused}");
    assert!(refused.to_string().contains("step_s = 0"), "{refused}");
    let refused = GroundWorld::new(&ground, Settings { friction: f64::NAN, ..earth_settings() }, at).unwrap_err();
    assert!(refused.to_string().contains("friction"), "{refused}");

    let mut world = GroundWorld::new(&ground, earth_settings(), at).expect("world");
    let centre = ground_point(at);
    let too_big = world.add(&ground, Shape::Sphere { radius_m: 10.0 }, centre, DVec3::ZERO).unwrap_err();
    assert!(matches!(too_big, PhysicsError::TooLarge { .. }), "{too_big}");
    assert!(too_big.to_string().contains("margin_m"), "{too_big}");
    let flat = Shape::Box { half_extents_m: DVec3::new(1.0, 0.0, 1.0) };
    assert!(matches!(world.add(&ground, flat, centre, DVec3::ZERO), Err(PhysicsError::Shape(_))));
    assert!(world.is_empty(), "nothing refused was added");
}

fn ground_point(at: Geodetic) -> DVec3 {
    planet_terrain::geo::body::Body::earth().ellipsoid().geodetic_to_point(Geodetic { height: 2.0, ..at })
}
