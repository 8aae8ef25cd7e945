//! A sphere released on a uniform slope accelerates as the textbook says:
//! rolling without slipping (friction) at 5/7 g sin(theta), sliding
//! (no friction) at g sin(theta). The acceleration is a least-squares
//! quadratic fit of the distance travelled down the slope over two
//! seconds; the tolerance is 0.2 % of theory.

use glam::DVec3;
use planet_physics::{GroundWorld, LocalBasis, Settings, Shape};
use planet_terrain::geo::body::{Body, Geodetic};

use crate::support::{earth_settings, uniform_slope};

const TOLERANCE: f64 = 0.002;
const GRADE: f64 = 0.2;
const RADIUS_M: f64 = 0.5;

/// Least-squares `a` of `s = c + v t + a t^2 / 2`.
fn fitted_acceleration(samples: &[(f64, f64)]) -> f64 {
    // Normal equations of the basis (1, t, t^2).
    let mut m = [[0.0f64; 3]; 3];
    let mut b = [0.0f64; 3];
    for &(t, s) in samples {
        let basis = [1.0, t, t * t];
        for i in 0..3 {
            b[i] += basis[i] * s;
            for j in 0..3 {
                m[i][j] += basis[i] * basis[j];
            }
        }
    }
    let det = |m: &[[f64; 3]; 3]| {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    };
    let mut m2 = m;
    for i in 0..3 {
        m2[i][2] = b[i];
    }
    2.0 * det(&m2) / det(&m)
}

/// Releases a ball at rest on the slope and returns (measured, theory)
/// acceleration along the slope, and the largest departure of the ball's
/// centre from the slope's surface offset (metres).
fn release(settings: Settings) -> (f64, f64, f64) {
    let at = Geodetic::from_degrees(30.0, 10.0, 0.0);
    let body = Body::earth();
    let ground = uniform_slope(body.clone(), at, GRADE);
    let mut world = GroundWorld::new(&ground, settings, at).expect("world");
    let theta = GRADE.atan();
    let normal = DVec3::new(-theta.sin(), 0.0, theta.cos());
    let downhill = DVec3::new(-theta.cos(), 0.0, -theta.sin());
    let basis = LocalBasis::at(body.ellipsoid(), at);
    let start = normal * RADIUS_M;
    let id = world
        .add(&ground, Shape::Sphere { radius_m: RADIUS_M }, basis.to_body_fixed(start), DVec3::ZERO)
        .expect("ball");
    let mut samples = Vec::new();
    let mut off_surface = 0.0f64;
    let steps = (2.0 / settings.step_s).round() as usize;
    for k in 0..=steps {
        let local = basis.to_local(world.state(id).expect("ball").position);
        samples.push((k as f64 * settings.step_s, (local - start).dot(downhill)));
        off_surface = off_surface.max(((local - start).dot(normal)).abs());
        world.step(&ground).expect("step");
    }
    let friction = settings.friction > 0.0;
    let theory = settings.gravity_m_s2 * theta.sin() * if friction { 5.0 / 7.0 } else { 1.0 };
    (fitted_acceleration(&samples), theory, off_surface)
}

fn slope_settings(friction: f64) -> Settings {
    Settings { friction, restitution: 0.0, linear_damping: 0.0, angular_damping: 0.0, ..earth_settings() }
}

fn check(name: &str, settings: Settings) {
    let (measured, theory, off) = release(settings);
    let error = (measured - theory).abs() / theory;
    println!(
        "slope {name}: grade {GRADE}, measured {measured:.4} m/s^2, theory {theory:.4} m/s^2, \
         error {:.3} % (tolerance {:.1} %), centre off the surface offset by at most {:.2} mm",
        100.0 * error,
        100.0 * TOLERANCE,
        off * 1e3
    );
    assert!(error <= TOLERANCE, "{name}: measured {measured} m/s^2 against theory {theory} m/s^2");
    assert!(off < 0.005, "{name}: the ball left the slope by {off} m");
}

#[test]
fn a_ball_rolls_down_a_uniform_slope_at_five_sevenths_g_sin_theta() {
    check("rolling", slope_settings(0.7));
}

#[test]
fn a_frictionless_ball_slides_down_a_uniform_slope_at_g_sin_theta() {
    check("sliding", slope_settings(0.0));
}

/// The floating origin moves every half metre: the roll does not notice.
#[test]
fn the_roll_is_the_same_with_the_origin_following_the_ball() {
    check("rolling, recentred every 0.5 m", Settings { recentre_m: 0.5, ..slope_settings(0.7) });
}
