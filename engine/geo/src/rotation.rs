//! How a body turns in an inertial frame: the one rotation the sky, the sun
//! and a camera placed in inertial space share.
//!
//! The key decision: a rotation is an angle at an epoch and a rate, so the
//! body's orientation at any instant is a pure function of the time.

use glam::DQuat;

/// How a body turns in an inertial frame whose +Z is the body's spin axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyRotation {
    /// Angle from the inertial +X axis to the prime meridian at time zero,
    /// radians, measured counter-clockwise seen from +Z.
    pub prime_meridian_at_epoch: f64,
    /// Spin rate in radians per second; positive is prograde (eastward).
    pub rate: f64,
}

impl BodyRotation {
    /// Earth: one turn per sidereal day, prograde.
    pub const EARTH: BodyRotation =
        BodyRotation { prime_meridian_at_epoch: 0.0, rate: std::f64::consts::TAU / 86_164.090_5 };

    /// The rotation taking body-fixed vectors to inertial ones at `time` s.
    pub fn body_to_inertial(&self, time: f64) -> DQuat {
        DQuat::from_rotation_z(self.prime_meridian_at_epoch + self.rate * time)
    }
}
