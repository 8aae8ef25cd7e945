//! The window's side of the panels: winit events into egui (egui-winit),
//! the session's figures out to them, their settings and requests back.
//!
//! The key decision: the panels run once per redraw, before the frame is
//! drawn, and their settings are applied at once, so a slider moved in a
//! frame governs that frame. Whatever egui produced is always handed to
//! the frame, even with the panels hidden: its texture changes (the font
//! atlas) are applied only there.

use planet_render::UiFrame;
use planet_render::egui;

use super::App;
use crate::flight::Mode;
use crate::panels::{LayerEdit, Request, ViewControls};

impl App {
    /// Runs the panels over this redraw's input and applies what they
    /// changed; `dt` is the wall time since the last redraw.
    pub(super) fn panel_frame(&mut self, dt: f64) -> Option<UiFrame> {
        let live = self.live.as_mut()?;
        let input = match &mut self.egui {
            Some(state) => state.take_egui_input(&live.window),
            None => egui::RawInput::default(),
        };
        let mode = match (self.run.path.is_some() || self.travel.is_some(), self.run.flight.mode) {
            (true, _) => "path",
            (false, Mode::Orbit) => "orbit [Tab] free",
            (false, Mode::Free) => "free [Tab] orbit",
        };
        let session = &mut live.session;
        let mut readout = session.readout(&self.run.flight, mode, self.cursor_ground.as_deref());
        readout.clock = format!("{}  {}", readout.clock, self.clock.label());
        readout.aim = self.aim;
        let position = session.body().ellipsoid().geodetic_to_point(planet_terrain::geo::body::Geodetic::from_degrees(
            self.run.flight.lat,
            self.run.flight.lon,
            self.run.flight.alt,
        ));
        if let Some(last) = self.last_position.replace(position)
            && dt > 0.0
        {
            readout.speed = (position - last).length() / dt;
        }
        readout.status = Some(match self.status.as_ref().filter(|(_, when)| when.elapsed().as_secs_f64() < 4.0) {
            Some((message, _)) => message.clone(),
            None => self.run.authoring.describe(&session.scene),
        });
        let (error_px, budget) = session.scene.selection();
        let mut view = ViewControls {
            error_px,
            budget,
            // The records hold every view's cut: each view's budget is a share.
            max_budget: session.renderer.settings().max_nodes / (1 + usize::from(session.second.is_some())),
            wireframe: self.wireframe,
            wireframe_supported: session.renderer.supports_wireframe(),
            frozen: session.scene.is_frozen(),
            time_rate: self.clock.rate,
            rate_labels: self.clock.labels(),
            time_paused: self.clock.paused,
        };
        let body = session.body().name().to_string();
        let edit = LayerEdit { authoring: &mut self.run.authoring, editor: &mut session.scene, body: &body };
        let output = self.panels.run(input, &readout, &mut view, edit);
        let width = f64::from(session.renderer.settings().size.0);
        session.axis_offset_px = self.panels.free_strip_offset_px(width);
        if let Some(second) = &mut session.second {
            // The inset sits in the strip the panels leave free.
            second.free_strip_px = self.panels.free_strip_px(width);
        }
        if let Some(state) = &mut self.egui {
            state.handle_platform_output(&live.window, output.platform);
        }
        if (view.error_px, view.budget) != (error_px, budget) {
            session.scene.set_selection(view.error_px, view.budget.clamp(6, view.max_budget));
        }
        if view.frozen != session.scene.is_frozen() {
            session.scene.set_frozen(view.frozen);
        }
        self.wireframe = view.wireframe && view.wireframe_supported;
        self.clock.rate = view.time_rate;
        self.clock.paused = view.time_paused;
        for request in output.requests {
            match request {
                Request::GoTo(k) => self.go_to_place(k),
                Request::FrameBody => self.frame_body(),
            }
        }
        Some(output.ui)
    }
}
