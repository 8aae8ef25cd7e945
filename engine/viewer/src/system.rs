//! Several bodies in one session: the camera's frame follows the body it is
//! nearest, and every other body in view is drawn with its own cut first,
//! the camera's body over them (`planet_render::Compose`).
//!
//! The key decision: the session's `scene` is always the body the camera
//! is nearest, and the camera a pose on it (f64, body-fixed), so every
//! precision argument made for one body holds at each end of a flight to
//! another; the other bodies' scenes wait in `others`. Crossing to another
//! body's side swaps the two scenes and re-expresses the camera on the new
//! one through the inertial frame (`planet_geo::system`). The renderer's
//! slots are shared out: each other body keeps a small range (what a far
//! disc needs), the camera's body the rest, shared anew at each crossing.

use glam::DVec3;
use planet_render::Compose;
use planet_render::scene::{Delivery, FrameRequest, ReadBack, SlotRange, TerrainScene, sun_at};
use planet_terrain::camera::View;
use planet_terrain::geo::body::Body;
use planet_terrain::geo::system::{Placement, placement};

use crate::flight::Flight;
use crate::journey::{Stop, inertial_camera, pose_on_body};
use crate::session::Session;

/// The slots each body the camera is not at keeps: a disc's cut, with room
/// for its tiles to change as it turns (at least the fewest one scene
/// streams with, and at most an eighth of the renderer's).
pub const OTHER_BODY_SLOTS: u32 = 96;

/// How the renderer's `slots` are shared among the camera's body and
/// `others` bodies: the camera's first, then one range per other body.
pub fn share_slots(slots: u32, others: usize) -> Vec<SlotRange> {
    let others = others as u32;
    let each = other_body_slots(slots);
    let camera = slots.saturating_sub(each * others);
    let mut ranges = vec![SlotRange { first: 0, count: camera }];
    ranges.extend((0..others).map(|k| SlotRange { first: camera + k * each, count: each }));
    ranges
}

/// Gives the camera's `scene` and the `others` their ranges of the
/// renderer's `slots` ([`share_slots`]); one body keeps them all.
pub fn share_out(slots: u32, scene: &mut TerrainScene, others: &mut [TerrainScene]) {
    if others.is_empty() {
        return;
    }
    let ranges = share_slots(slots, others.len());
    scene.set_slots(ranges[0]);
    for (other, range) in others.iter_mut().zip(&ranges[1..]) {
        other.set_slots(*range);
    }
}

/// The slots each other body keeps of the renderer's `slots`.
pub fn other_body_slots(slots: u32) -> u32 {
    OTHER_BODY_SLOTS.min(slots / 8).max(crate::cli::MIN_SLOTS as u32)
}

/// The fewest slots a session of `bodies` bodies streams with: each body's
/// share at least the fewest one scene needs.
pub fn fewest_slots(bodies: usize) -> u64 {
    crate::cli::MIN_SLOTS * bodies as u64
}

/// Where `body` stands at the session's clock; a session of several
/// bodies holds only bodies the system places (checked when it starts).
pub fn placed(body: &Body, clock: planet_terrain::camera::Instant) -> Placement {
    placement(body, clock).expect("a session of several bodies holds preset bodies only")
}

/// The height of `point` (inertial) over `body`'s mean sphere.
fn height_over(body: &Body, placement: &Placement, point: DVec3) -> f64 {
    let radii = body.ellipsoid().radii();
    (point - placement.centre).length() - (radii.x + radii.y + radii.z) / 3.0
}

impl Session {
    /// Makes `others` the session's other bodies (each in its own range of
    /// slots, shadows off until the camera comes to it).
    pub fn set_other_bodies(&mut self, others: Vec<TerrainScene>) {
        self.others = others;
        for other in &mut self.others {
            other.set_shadows(planet_render::scene::ShadowMode::Off);
        }
        self.share_out_slots();
    }

    fn share_out_slots(&mut self) {
        share_out(self.renderer.settings().slots, &mut self.scene, &mut self.others);
    }

    /// The camera's pose for a stop of a journey: on the camera's body
    /// as given, or (on another body, or between two) expressed on the
    /// camera's body through the inertial frame; then on the nearest body.
    pub fn place_camera(&mut self, flight: &mut Flight, stop: Stop<'_>) -> Option<String> {
        let (position, orientation) = match stop {
            Stop::On { body, pose } if body.name() == self.body().name() => {
                flight.set_pose(pose);
                return self.follow_nearest(flight);
            }
            Stop::On { body, pose } => inertial_camera(body, pose, 0.0, &placed(body, self.clock)),
            Stop::Between { position, orientation } => (position, orientation),
        };
        let (pose, roll) = pose_on_body(self.body(), &placed(self.body(), self.clock), position, orientation);
        flight.set_pose(pose);
        flight.roll = roll;
        self.follow_nearest(flight)
    }

    /// Moves the camera's frame to the body it is nearest, if that is not
    /// the one it is at: the scenes swap, the camera is re-expressed on the
    /// new body, the slots are shared anew and what was read of the old
    /// ground is dropped. Says so, once per crossing.
    pub fn follow_nearest(&mut self, flight: &mut Flight) -> Option<String> {
        if self.others.is_empty() {
            return None;
        }
        let here = placed(self.body(), self.clock);
        let (position, orientation) = inertial_camera(self.body(), flight.pose(), flight.roll, &here);
        let mut nearest = (height_over(self.body(), &here, position), None);
        for (k, other) in self.others.iter().enumerate() {
            let height = height_over(other.body(), &placed(other.body(), self.clock), position);
            if height < nearest.0 {
                nearest = (height, Some(k));
            }
        }
        let k = nearest.1?;
        let there = placed(self.others[k].body(), self.clock);
        // The roll keeps the picture as it was: the new body's up is not
        // the old one's.
        let (pose, roll) = pose_on_body(self.others[k].body(), &there, position, orientation);
        flight.set_pose(pose);
        flight.roll = roll;
        std::mem::swap(&mut self.scene, &mut self.others[k]);
        self.others[k].set_shadows(planet_render::scene::ShadowMode::Off);
        self.scene.set_shadows(self.shadows);
        self.share_out_slots();
        self.forget_the_ground();
        let left = self.others[k].body().name().to_string();
        let dropped = std::mem::take(&mut self.bodies).states().len();
        let bodies = if dropped > 0 { format!(" ({dropped} dropped bodies left behind)") } else { String::new() };
        Some(format!("the camera left the {left} for the {}{bodies}", self.body().name()))
    }

    /// Draws every other body the camera's `view` (on its body) sees, each
    /// over the one before, none with its sky; returns the bodies drawn.
    pub fn draw_other_bodies(
        &mut self,
        view: &View,
        near_m: f64,
        area: Option<planet_render::PixelRect>,
    ) -> anyhow::Result<Vec<String>> {
        self.renderer.set_bodies(&[]);
        let body = self.scene.body().clone();
        let drawn = draw_others(&mut self.renderer, &body, &mut self.others, view, (near_m, area), self.clock)?;
        if drawn.device_lost {
            self.scene.device_was_lost();
        }
        for other in &mut self.others {
            self.source_notices.extend(crate::session::report_failures(other));
        }
        Ok(drawn.names)
    }

    /// The device was lost and made again during the camera body's frame:
    /// the other bodies' slots are empty too.
    pub(crate) fn others_lost_the_gpu(&mut self) {
        self.others.iter_mut().for_each(TerrainScene::device_was_lost);
    }
}

/// What drawing the other bodies did.
pub struct OthersDrawn {
    /// The bodies drawn (in view), in order.
    pub names: Vec<String>,
    /// Every one drawn had its own tiles and nothing waited.
    pub complete: bool,
    /// The device was lost and made again during one of their frames
    /// (every other body was told at once; the camera's is the caller's).
    pub device_lost: bool,
}

/// Draws every body of `others` that the camera's `view` (on `camera_body`)
/// sees, each over the one before, none with its sky, at the camera body's
/// near plane (so all their depths compare) over its area of the target,
/// and at `clock`.
pub fn draw_others(
    renderer: &mut planet_render::Renderer,
    camera_body: &Body,
    others: &mut [TerrainScene],
    view: &View,
    (near_m, area): (f64, Option<planet_render::PixelRect>),
    clock: planet_terrain::camera::Instant,
) -> anyhow::Result<OthersDrawn> {
    let mut drawn = OthersDrawn { names: Vec::new(), complete: true, device_lost: false };
    if others.is_empty() {
        return Ok(drawn);
    }
    let inertial = view.from_placed_body(&placed(camera_body, clock));
    for k in 0..others.len() {
        let other = &mut others[k];
        let seen = inertial.in_placed_body(&placed(other.body(), clock));
        if !in_view(other.body(), &seen) {
            continue;
        }
        other.set_near(near_m);
        other.set_season(Some(planet_render::scene::season_at(clock)));
        let compose = Compose { over_previous: !drawn.names.is_empty(), sky: false };
        let delivery = Delivery { compose, area, ..Delivery::headless(ReadBack::Never) };
        let sun = sun_at(other.body(), clock);
        let report = other.frame(renderer, &FrameRequest { view: seen, sun, delivery, second: None })?;
        crate::session::report_lost_device(&report);
        drawn.complete &= report.complete;
        drawn.names.push(other.body().name().to_string());
        if report.device_lost.is_some() {
            // The scene that lost it made the device again and drew on it;
            // every other scene's slots are empty now, before it draws.
            drawn.device_lost = true;
            others.iter_mut().enumerate().filter(|&(j, _)| j != k).for_each(|(_, s)| s.device_was_lost());
        }
    }
    Ok(drawn)
}

/// [`TerrainScene::render_until_resident_with`] over the other bodies: each
/// try draws the others the camera sees, then the camera's `scene` over
/// them, until every one is complete or `max_frames` were drawn; returns the
/// camera scene's last report, the picture, the frames drawn and the other
/// bodies the picture shows.
#[allow(clippy::too_many_arguments, reason = "a shot's one call: its scenes, its frame, its clock and its progress")]
pub fn render_until_resident(
    renderer: &mut planet_render::Renderer,
    scene: &mut TerrainScene,
    others: &mut [TerrainScene],
    request: &FrameRequest<'_>,
    near_m: f64,
    clock: planet_terrain::camera::Instant,
    max_frames: u32,
    each_frame: &mut dyn FnMut(u32, &planet_render::scene::FrameReport),
) -> anyhow::Result<(planet_render::scene::FrameReport, planet_render::RgbaImage, u32, Vec<String>)> {
    if others.is_empty() {
        let (report, image, frames) = scene.render_until_resident_with(renderer, request, max_frames, each_frame)?;
        return Ok((report, image, frames, Vec::new()));
    }
    let body = scene.body().clone();
    for frames in 1..=max_frames {
        let drawn = draw_others(renderer, &body, others, &request.view, (near_m, request.delivery.area), clock)?;
        if drawn.device_lost {
            scene.device_was_lost();
        }
        let last = frames == max_frames;
        let compose = Compose { over_previous: !drawn.names.is_empty(), sky: true };
        let delivery = Delivery { compose, read_back: ReadBack::Always, ..request.delivery };
        let report = scene.frame(renderer, &FrameRequest { delivery, ..*request })?;
        if report.device_lost.is_some() {
            others.iter_mut().for_each(TerrainScene::device_was_lost);
        }
        if (report.complete && drawn.complete) || last {
            let gpu = renderer.finish()?;
            let image = renderer.take_image()?.expect("the frame was read back");
            let report =
                planet_render::scene::FrameReport { gpu, complete: report.complete && drawn.complete, ..report };
            return Ok((report, image, frames, drawn.names));
        }
        each_frame(frames, &report);
    }
    unreachable!("the last frame returns")
}

/// Whether any of `body` may show in `view` (its bounding sphere against
/// the view's cone, the corners' direction included).
fn in_view(body: &Body, view: &View) -> bool {
    let to_centre = -view.position;
    let distance = to_centre.length();
    let radius = body.ellipsoid().radii().max_element() * 1.01;
    if distance <= radius {
        return true;
    }
    let half_diagonal = ((0.5 * view.vertical_fov).tan() * (1.0 + view.aspect() * view.aspect()).sqrt()).atan();
    let off_axis = view.forward().angle_between(to_centre);
    off_axis <= half_diagonal + (radius / distance).asin()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_camera_body_keeps_most_slots_and_each_other_a_disc_s_share() {
        let ranges = share_slots(2048, 2);
        assert_eq!(ranges[0], SlotRange { first: 0, count: 2048 - 2 * 96 });
        assert_eq!(ranges[1], SlotRange { first: 1856, count: 96 });
        assert_eq!(ranges[2], SlotRange { first: 1952, count: 96 });
        // Few slots: each other body still streams (the fewest a scene
        // needs), the camera's body keeps the rest.
        let ranges = share_slots(64, 1);
        assert_eq!(ranges, [SlotRange { first: 0, count: 50 }, SlotRange { first: 50, count: 14 }]);
        assert_eq!(share_slots(512, 0), [SlotRange { first: 0, count: 512 }]);
    }

    #[test]
    fn a_body_behind_the_camera_is_not_in_view() {
        let moon = Body::moon();
        let at = planet_terrain::geo::body::Geodetic::from_degrees(0.0, 0.0, 10_000_000.0);
        let down = View::looking_from(&moon, at, 0.0, -90.0, 50f64.to_radians(), (320, 200));
        let up = View::looking_from(&moon, at, 0.0, 90.0, 50f64.to_radians(), (320, 200));
        assert!(in_view(&moon, &down) && !in_view(&moon, &up));
    }
}
