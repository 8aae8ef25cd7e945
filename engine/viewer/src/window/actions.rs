//! What each key does in the window: a key is looked up in the one table
//! (`crate::keys`) and the [`Action`] found is done here.
//!
//! The key decision: the window matches on actions, never on keys, so a
//! key is named once (in the table) and the help can never say one key
//! while the window obeys another. Held actions follow the key down and up
//! (a release ends one whatever the modifiers are by then, so a key let go
//! with Ctrl down does not stay down); the rest happen once per press.

use winit::keyboard::KeyCode;

use super::App;
use crate::bodies::Kind;
use crate::keys::{self, Action};

impl App {
    /// A key went down (`pressed`) or up.
    pub(super) fn key(&mut self, code: KeyCode, pressed: bool) {
        let Some(action) = keys::action(code, self.ctrl && pressed) else { return };
        if action.is_held() {
            self.hold(action, pressed);
        } else if pressed {
            self.act(action);
        }
    }

    /// A scripted press (the `--script` hook): down and up, with Ctrl or without.
    pub(super) fn scripted_key(&mut self, code: KeyCode, ctrl: bool) {
        let held = std::mem::replace(&mut self.ctrl, ctrl);
        self.key(code, true);
        self.key(code, false);
        self.ctrl = held;
    }

    fn hold(&mut self, action: Action, down: bool) {
        let c = &mut self.controls;
        match action {
            Action::Forward => c.forward = down,
            Action::Back => c.back = down,
            Action::Left => c.left = down,
            Action::Right => c.right = down,
            Action::Climb => c.up = down,
            Action::Sink => c.down = down,
            Action::Faster => c.fast = down,
            _ => {}
        }
    }

    fn act(&mut self, action: Action) {
        match action {
            Action::SwitchMode => self.run.flight.toggle_mode(),
            Action::ZoomIn => self.controls.wheel += 1.0,
            Action::ZoomOut => self.controls.wheel -= 1.0,
            Action::NextPlace => self.go_to_next_place(),
            Action::WholeBody => self.frame_body(),
            Action::Panels => self.panels.shown = !self.panels.shown,
            Action::LayersPanel => self.panels.layers_shown = !self.panels.layers_shown,
            Action::KeyList => self.panels.help_shown = !self.panels.help_shown,
            Action::Wireframe => self.toggle_wireframe(),
            Action::Freeze => {
                if let Some(live) = &mut self.live {
                    let frozen = live.session.scene.is_frozen();
                    live.session.scene.set_frozen(!frozen);
                }
            }
            Action::ClockFaster => self.clock.faster(),
            Action::ClockSlower => self.clock.slower(),
            Action::ClockPause => self.clock.paused = !self.clock.paused,
            Action::Ball => self.drop_body(Kind::Ball),
            Action::Crate => self.drop_body(Kind::Crate),
            Action::Screenshot => self.ask_for_screenshot(),
            Action::Quit => self.quit = true,
            Action::Crater
            | Action::Pad
            | Action::SelectNext
            | Action::Shrink
            | Action::Grow
            | Action::Move
            | Action::DeleteLayer
            | Action::Undo
            | Action::Redo
            | Action::Save => self.author(action),
            // Held actions follow their key down and up (`hold`).
            Action::Forward
            | Action::Back
            | Action::Left
            | Action::Right
            | Action::Climb
            | Action::Sink
            | Action::Faster => {}
        }
    }

    fn toggle_wireframe(&mut self) {
        let supported = self.live.as_ref().is_some_and(|l| l.session.renderer.supports_wireframe());
        if supported {
            self.wireframe = !self.wireframe;
        } else {
            self.say("wireframe needs the device's fillModeNonSolid, which it lacks".into());
        }
    }

    /// The authoring actions: dig, flatten, select, resize, move, delete,
    /// undo, redo, save.
    fn author(&mut self, action: Action) {
        let at = match action {
            Action::Crater | Action::Pad | Action::Move => self.cursor_ground(),
            _ => None,
        };
        let radius = self.edit_radius();
        let Some(live) = &mut self.live else { return };
        let scene = &mut live.session.scene;
        let authoring = &mut self.run.authoring;
        let no_ground = || Ok(Some("no ground under the cursor".to_string()));
        let result: Result<Option<String>, planet_terrain::layers::LayerError> = match (action, at) {
            (Action::Undo, _) => authoring.undo(scene).map(|done| done.then(|| "undone".to_string())),
            (Action::Redo, _) => authoring.redo(scene).map(|done| done.then(|| "redone".to_string())),
            (Action::Save, _) => {
                let body = scene.body().name().to_string();
                Ok(Some(match authoring.save(scene, &body) {
                    Ok(path) => format!("saved {}", path.display()),
                    Err(e) => format!("not saved: {e:#}"),
                }))
            }
            (Action::Crater, Some((lat, lon))) => {
                authoring.place_crater(scene, lat, lon, radius).map(|o| Some(format!("crater {o}")))
            }
            (Action::Pad, Some((lat, lon))) => {
                authoring.place_pad(scene, lat, lon, radius).map(|o| Some(format!("pad {o}")))
            }
            (Action::Move, Some((lat, lon))) => authoring.move_selected(scene, lat, lon).map(|_| None),
            (Action::Crater | Action::Pad | Action::Move, None) => no_ground(),
            (Action::Grow, _) => authoring.resize_selected(scene, 1.25).map(|_| None),
            (Action::Shrink, _) => authoring.resize_selected(scene, 0.8).map(|_| None),
            (Action::SelectNext, _) => Ok(authoring.select_next(scene).map(|o| format!("layer {o} selected"))),
            (Action::DeleteLayer, _) => authoring.delete_selected(scene).map(|_| None),
            _ => return,
        };
        match result {
            Ok(Some(message)) => self.say(message),
            Ok(None) => {}
            Err(e) => self.say(format!("edit refused: {e}")),
        }
    }

    /// Drops a ball or a crate where the cursor meets the ground.
    fn drop_body(&mut self, kind: Kind) {
        let Some(live) = &mut self.live else { return };
        let message = match live.session.drop_at_pixel(&self.run.flight, kind, self.cursor.0, self.cursor.1) {
            Ok(message) => message,
            Err(e) => format!("nothing dropped: {e:#}"),
        };
        self.say(message);
    }
}

/// What a key drops (B a ball, V a crate; nothing with Ctrl held): the
/// headless `--script` path drops bodies and nothing else.
pub fn body_kind(code: KeyCode, ctrl: bool) -> Option<Kind> {
    match keys::action(code, ctrl)? {
        Action::Ball => Some(Kind::Ball),
        Action::Crate => Some(Kind::Crate),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn b_and_v_drop_bodies_and_nothing_else_does() {
        let expected = [
            (KeyCode::KeyB, false, Some(Kind::Ball)),
            (KeyCode::KeyV, false, Some(Kind::Crate)),
            (KeyCode::KeyB, true, None),
            (KeyCode::KeyK, false, None),
        ];
        for (code, ctrl, kind) in expected {
            assert_eq!(body_kind(code, ctrl), kind, "{code:?} ctrl {ctrl}");
        }
    }
}
