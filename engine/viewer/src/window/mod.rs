//! The window: winit events in, flight and toggles out, one frame per
//! redraw, presented through the renderer's swapchain.
//!
//! The key decision: the window owns no rendering logic. It turns events
//! into `Controls` and toggles, steps the flight by the real elapsed time
//! (or, on a scripted path, by a fixed step so recordings are exact), and
//! hands the frame to `Session::draw`, the same path as headless runs. The
//! sky's clock runs the same way: by real time times a rate the keys set
//! (`,` slower, `.` faster, `/` pause), or by the path's fixed step.
//! The panels (panels.rs) see every event first; the controls get what the
//! panels do not hold (the pointer over them, keys while a text field has
//! the focus). A key does what its action in the one table of keys
//! (`crate::keys`) says (actions.rs); F12 writes the next frame as a PNG
//! (screenshot.rs).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, anyhow};
use planet_render::egui;
use planet_render::scene::Delivery;
use planet_render::{Renderer, RendererSettings, WindowHandles};
use planet_terrain::camera::Instant as UtcInstant;
use planet_terrain::geo::body::Body;
use raw_window_handle::{HasDisplayHandle, HasWindowHandle};
use winit::application::ApplicationHandler;
use winit::dpi::PhysicalSize;
use winit::event::{DeviceEvent, DeviceId, ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{KeyCode, PhysicalKey};
use winit::window::{Window, WindowId};

use crate::authoring::Authoring;
use crate::flight::{Controls, Flight, Mode, fly_to};
use crate::journey::Journey;
use crate::session::Session;

mod actions;
mod clock;
mod panels;
mod screenshot;

pub use actions::body_kind;

use clock::Clock;

/// What the window run needs besides the session's parts.
pub struct WindowRun {
    pub settings: RendererSettings,
    pub vsync: bool,
    pub flight: Flight,
    /// A scripted path flown at `fps` (fixed steps), then exit if `exit_at_end`.
    pub path: Option<(Journey, f64)>,
    /// The instant of the first frame; a path's time (times `time_rate`)
    /// adds to it.
    pub start_time: UtcInstant,
    /// Sky seconds per second at 1x (`--time-rate`).
    pub time_rate: f64,
    /// `--time` fixed the clock: a Go to keeps it rather than the local
    /// time of day.
    pub time_fixed: bool,
    /// Where G and the places panel go ([`crate::flight::places`]): moved
    /// into the panels when the window opens.
    pub places: Vec<crate::flight::Place>,
    pub exit_at_end: bool,
    pub frames: Option<PathBuf>,
    /// Show the panels (H toggles them).
    pub panels: bool,
    /// Test hook: at frame N, ask for a new window size.
    pub resize_at: Option<(usize, (u32, u32))>,
    /// Test hook: authoring input at given frames (see `parse_script`).
    pub script: Vec<Scripted>,
    /// Builds the session once the renderer exists.
    pub make_session: Box<dyn FnMut(Renderer) -> Result<Session>>,
    /// Authoring: the scene file to load (if it exists) and save to.
    pub authoring: Authoring,
}

struct Live {
    session: Session,
    // Dropped after the session (and its renderer, which holds the surface).
    window: Window,
}

struct App {
    run: WindowRun,
    live: Option<Live>,
    controls: Controls,
    dragging: bool,
    looking: bool,
    cursor: (f64, f64),
    cursor_ground: Option<String>,
    /// Where the view's centre meets the ground ("Add here"), refreshed
    /// with `cursor_ground`.
    aim: Option<(f64, f64)>,
    wireframe: bool,
    last: Option<Instant>,
    frame: usize,
    place: usize,
    travel: Option<(Journey, f64)>,
    ctrl: bool,
    /// Where the left button went down (a click selects, a drag turns).
    pressed_at: Option<(f64, f64)>,
    status: Option<(String, Instant)>,
    error: Option<anyhow::Error>,
    clock: Clock,
    /// The panels, and egui's view of the window's events.
    panels: crate::panels::Panels,
    egui: Option<egui_winit::State>,
    /// The camera's body-fixed position at the last redraw (for its speed).
    last_position: Option<glam::DVec3>,
    /// Where the next frame is written as a PNG (F12 asked for it).
    screenshot: Option<PathBuf>,
    /// Esc was pressed: the event loop ends after this event.
    quit: bool,
}

/// One scripted input: at `frame`, move the cursor to `at` and act.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scripted {
    pub frame: usize,
    pub at: Option<(f64, f64)>,
    /// The key pressed, and whether with Ctrl; `None` clicks.
    pub key: Option<(KeyCode, bool)>,
}

/// Parses `FRAME:ACTION[@X,Y];...` (the hidden `--script` test hook): an
/// ACTION is `CLICK` or a key or action the table of keys knows
/// ([`crate::keys::scripted_key`]).
pub fn parse_script(text: &str) -> Result<Vec<Scripted>> {
    text.split(';')
        .filter(|item| !item.trim().is_empty())
        .map(|item| {
            let bad = || anyhow!("--script item '{item}': expected FRAME:ACTION[@X,Y]");
            let (frame, rest) = item.trim().split_once(':').ok_or_else(bad)?;
            let (action, at) = match rest.split_once('@') {
                Some((action, at)) => {
                    let (x, y) = at.split_once(',').ok_or_else(bad)?;
                    (action, Some((x.parse::<f64>().map_err(|_| bad())?, y.parse::<f64>().map_err(|_| bad())?)))
                }
                None => (rest, None),
            };
            let key = match action.trim() {
                "CLICK" => None,
                name => Some(crate::keys::scripted_key(name).ok_or_else(bad)?),
            };
            Ok(Scripted { frame: frame.parse().map_err(|_| bad())?, at, key })
        })
        .collect()
}

/// Opens the window and runs until it closes (or the path ends).
pub fn run(mut run: WindowRun) -> Result<Session> {
    let event_loop = EventLoop::new().context("opening the display (is DISPLAY set?)")?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let clock = Clock::new(run.start_time, run.time_rate);
    let mut panels = crate::panels::Panels::new(run.panels);
    // The places panel's list is the one G steps through too.
    panels.places = std::mem::take(&mut run.places);
    let mut app = App {
        run,
        live: None,
        controls: Controls::default(),
        dragging: false,
        looking: false,
        cursor: (0.0, 0.0),
        cursor_ground: None,
        aim: None,
        wireframe: false,
        last: None,
        frame: 0,
        place: 0,
        travel: None,
        ctrl: false,
        pressed_at: None,
        status: None,
        error: None,
        clock,
        panels,
        egui: None,
        last_position: None,
        screenshot: None,
        quit: false,
    };
    event_loop.run_app(&mut app).context("running the window")?;
    if let Some(error) = app.error.take() {
        return Err(error);
    }
    let live = app.live.take().ok_or_else(|| anyhow!("the window never opened"))?;
    let Live { mut session, window } = live;
    session.finish()?;
    drop(window);
    Ok(session)
}

impl App {
    fn open(&mut self, event_loop: &ActiveEventLoop) -> Result<()> {
        let (w, h) = self.run.settings.size;
        let attributes =
            Window::default_attributes().with_title("planet-view").with_inner_size(PhysicalSize::new(w, h));
        let window = event_loop.create_window(attributes).context("creating the window")?;
        let handles = WindowHandles {
            display: window.display_handle().context("the window's display")?.as_raw(),
            window: window.window_handle().context("the window's handle")?.as_raw(),
        };
        let size = window.inner_size();
        let mut settings = self.run.settings;
        settings.size = (size.width.max(1), size.height.max(1));
        let renderer = Renderer::new_windowed(settings, handles, self.run.vsync).map_err(crate::renderer_error)?;
        let session = (self.run.make_session)(renderer)?;
        let context = self.panels.context().clone();
        let scale = Some(window.scale_factor() as f32);
        self.egui = Some(egui_winit::State::new(context, egui::ViewportId::ROOT, &window, scale, None, None));
        self.live = Some(Live { session, window });
        Ok(())
    }

    fn say(&mut self, message: String) {
        planet_cli::report::message(&format!("planet-view: {message}"));
        // As written: a path in it (a screenshot's, a save's) must stay true.
        self.status = Some((message, Instant::now()));
    }

    /// The ground under the cursor, for placing and moving edits.
    fn cursor_ground(&self) -> Option<(f64, f64)> {
        let live = self.live.as_ref()?;
        let view = live.session.view(&self.run.flight);
        let g = live.session.cursor_hit(
            &view,
            self.cursor.0,
            self.cursor.1,
            4.0 * crate::session::GROUND_SPACING_M,
            50_000,
        )?;
        Some((g.latitude.to_degrees(), g.longitude.to_degrees()))
    }

    /// A new edit's radius: a quarter of the height above the ground.
    fn edit_radius(&mut self) -> f64 {
        let (lat, lon, alt) = (self.run.flight.lat, self.run.flight.lon, self.run.flight.alt);
        let above = self.live.as_mut().map_or(1000.0, |l| alt - l.session.ground_height(lat, lon));
        (0.25 * above).clamp(20.0, 50_000.0)
    }

    fn click(&mut self) {
        let Some((lat, lon)) = self.cursor_ground() else { return };
        let Some(live) = &self.live else { return };
        let picked = self.run.authoring.select_near(&live.session.scene, lat, lon);
        if let Some(order) = picked {
            self.say(format!("layer {order} selected"));
        }
    }

    /// Hands a window event to egui (Tab only from a focused text field).
    fn hand_to_egui(&mut self, event: &WindowEvent) {
        let key = match event {
            WindowEvent::KeyboardInput { event, .. } => Some(event.physical_key),
            _ => None,
        };
        if let (Some(state), Some(live)) = (&mut self.egui, &self.live)
            && egui_takes_key(key, self.panels.wants_keyboard())
        {
            let _ = state.on_window_event(&live.window, event);
        }
    }

    /// The scripted input due at this frame (`--script`).
    fn run_script(&mut self) {
        let due: Vec<Scripted> = self.run.script.iter().filter(|s| s.frame == self.frame).copied().collect();
        for input in due {
            if let Some(at) = input.at {
                self.cursor = at;
            }
            match input.key {
                Some((code, ctrl)) => self.scripted_key(code, ctrl),
                None => self.click(),
            }
        }
    }

    fn redraw(&mut self, event_loop: &ActiveEventLoop) -> Result<()> {
        let Some(live) = &mut self.live else { return Ok(()) };
        let size = live.window.inner_size();
        if size.width == 0 || size.height == 0 {
            return Ok(()); // minimised: nothing to draw into
        }
        if let Some((at, (w, h))) = self.run.resize_at
            && self.frame == at
        {
            let _ = live.window.request_inner_size(PhysicalSize::new(w, h));
        }
        self.run_script();
        let Some(live) = &mut self.live else { return Ok(()) };
        let now = Instant::now();
        let (wall_dt, dt) = clock::redraw_times(self.last, now);
        self.last = Some(now);
        let session = &mut live.session;
        let mut t = 0.0;
        let mut crossing = None;
        if let Some((path, fps)) = &self.run.path {
            t = path.start() + self.frame as f64 / fps;
            self.clock.now = self.run.start_time.plus_seconds(t * self.run.time_rate);
            session.clock = self.clock.now;
            if t > path.start() + path.duration() + 0.5 / fps {
                if self.run.exit_at_end {
                    event_loop.exit();
                    return Ok(());
                }
            } else {
                crossing = session.place_camera(&mut self.run.flight, path.at(t, &placed_at(session.clock)));
            }
        } else if let Some((path, elapsed)) = &mut self.travel {
            *elapsed += dt;
            let stop = path.at(path.start() + *elapsed, &placed_at(session.clock));
            crossing = session.place_camera(&mut self.run.flight, stop);
            if *elapsed >= path.duration() {
                self.travel = None;
            }
        } else {
            let controls = std::mem::take(&mut self.controls);
            self.controls = Controls { look: (0.0, 0.0), drag: (0.0, 0.0), wheel: 0.0, ..controls };
            let fov = session.vertical_fov;
            let height = f64::from(size.height);
            let body = session.body().clone();
            self.run.flight.step(&body, &controls, dt, height, fov, |lat, lon| session.ground_height(lat, lon));
            crossing = session.follow_nearest(&mut self.run.flight);
        }
        if let Some(crossing) = crossing {
            planet_cli::report::message(&format!("planet-view: {crossing}"));
        }
        if self.run.path.is_none() {
            self.clock.advance(wall_dt);
        }
        session.clock = self.clock.now;
        // Bodies move in the viewer's time: a path's fixed step, else real time.
        let physics_dt = self.run.path.as_ref().map_or(dt, |(_, fps)| 1.0 / fps);
        session.bodies.advance(&session.scene, physics_dt)?;
        let ground = session.ground_height(self.run.flight.lat, self.run.flight.lon);
        self.run.flight.keep_above(ground);
        if self.frame.is_multiple_of(15) || self.dragging {
            (self.cursor_ground, self.aim) = grounds(session, &self.run.flight, self.cursor);
        }
        let ui = self.panel_frame(dt);
        let read_back = self.read_back();
        let Some(live) = &mut self.live else { return Ok(()) };
        let delivery =
            Delivery { wireframe: self.wireframe, ui: ui.as_ref(), present: true, ..Delivery::headless(read_back) };
        let report = live.session.draw(&self.run.flight, t, delivery)?;
        if report.device_lost.is_some() {
            self.panels.textures_lost();
        }
        self.save_frame()?;
        self.frame += 1;
        Ok(())
    }

    fn go_to_next_place(&mut self) {
        let k = self.place % self.panels.places.len().max(1);
        self.place += 1;
        self.go_to_place(k);
    }

    /// Flies to place `k` (the G key steps through them; the places panel picks one).
    fn go_to_place(&mut self, k: usize) {
        let Some(live) = &mut self.live else { return };
        let Some(place) = self.panels.places.get(k) else { return };
        let (name, lat, lon, above, heading, pitch) =
            (place.name.clone(), place.lat, place.lon, place.above, place.heading, place.pitch);
        live.window.set_title(&format!("planet-view: {}", name.to_lowercase()));
        let here = live.session.body().clone();
        if let Some(there) = place.body.clone().filter(|b| b.name() != here.name()) {
            // Another body: through space. Its ground is read once the
            // camera is at it, so the place's height over the ground is
            // taken over the highest ground a body may hold.
            let alt = above + crate::flight::FRAMING_CLEARANCE_M;
            let to = planet_terrain::camera::CameraPose { lat, lon, alt, heading, pitch };
            let journey = Journey::transfer((&here, self.run.flight.pose()), (&there, to), 8.0);
            self.travel = Some((journey, 0.0));
            return;
        }
        let ground = live.session.ground_height(lat, lon);
        let to = planet_terrain::camera::CameraPose { lat, lon, alt: ground + above, heading, pitch };
        if !self.run.time_fixed {
            let from_lon = self.run.flight.pose().lon;
            self.clock.now = clock::keeping_local_time(live.session.body(), self.clock.now, from_lon, lon);
        }
        let path = fly_to(self.run.flight.pose(), to, live.session.body(), 6.0);
        self.travel = Some((Journey::on_one_body(&here, path), 0.0));
    }

    fn frame_body(&mut self) {
        let Some(live) = &self.live else { return };
        let radius = live.session.body().ellipsoid().radii().x;
        let from = self.run.flight.pose();
        let to = planet_terrain::camera::CameraPose { alt: 2.5 * radius, heading: 0.0, pitch: -90.0, ..from };
        let path = fly_to(from, to, live.session.body(), 3.0);
        self.travel = Some((Journey::on_one_body(live.session.body(), path), 0.0));
    }
}

/// Where each body stands at `clock` (a journey's places; every body of a
/// session of several is a preset one).
fn placed_at(clock: planet_terrain::camera::Instant) -> impl Fn(&Body, f64) -> planet_terrain::geo::system::Placement {
    move |body, _| crate::system::placed(body, clock)
}

/// What lies under the cursor, and where the view's centre meets the
/// ground ("Add here"): coarse ray casts, made every 15 frames or while
/// dragging.
fn grounds(
    session: &crate::session::Session,
    flight: &crate::flight::Flight,
    cursor: (f64, f64),
) -> (Option<String>, Option<(f64, f64)>) {
    let view = session.view(flight);
    let under_cursor = session.ground_under(&view, cursor.0, cursor.1);
    // cursor_hit takes a pixel's index and aims through its centre.
    let centre = view.axis_pixel();
    let aim = session
        .cursor_hit(&view, centre.0 - 0.5, centre.1 - 0.5, 100.0, 2000)
        .map(|g| (g.latitude.to_degrees(), g.longitude.to_degrees()));
    (under_cursor, aim)
}

/// Whether egui sees a window event whose key (if any) is `key`. Tab is the
/// flight-mode switch: egui sees it only while a text field has the focus
/// (to leave the field), never to walk its focus into the panels' fields.
fn egui_takes_key(key: Option<PhysicalKey>, text_field_focused: bool) -> bool {
    key != Some(PhysicalKey::Code(KeyCode::Tab)) || text_field_focused
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.live.is_none()
            && let Err(e) = self.open(event_loop)
        {
            self.error = Some(e);
            event_loop.exit();
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        self.hand_to_egui(&event);
        // Keys go to a focused text field, not to the shortcuts; the
        // pointer over the panels is theirs (a release always ends a drag).
        let keys_taken = self.panels.wants_keyboard();
        let pointer_taken = self.panels.wants_pointer();
        let result = match event {
            WindowEvent::CloseRequested => {
                event_loop.exit();
                Ok(())
            }
            WindowEvent::Resized(size) => match &mut self.live {
                Some(live) if size.width > 0 && size.height > 0 => {
                    live.session.renderer.resize((size.width, size.height)).context("resizing")
                }
                _ => Ok(()),
            },
            // Releases still reach the controls: a key held when a field
            // took the focus must not stay down.
            WindowEvent::KeyboardInput { ref event, .. } if keys_taken && event.state == ElementState::Pressed => {
                Ok(())
            }
            WindowEvent::KeyboardInput { event, .. } => {
                if let PhysicalKey::Code(code) = event.physical_key {
                    self.key(code, event.state == ElementState::Pressed);
                }
                Ok(())
            }
            WindowEvent::MouseInput { state: ElementState::Pressed, .. } if pointer_taken => Ok(()),
            WindowEvent::MouseWheel { .. } if pointer_taken => Ok(()),
            WindowEvent::MouseInput { state, button, .. } => {
                let down = state == ElementState::Pressed;
                match button {
                    MouseButton::Left => {
                        self.dragging = down;
                        if down {
                            self.pressed_at = Some(self.cursor);
                        } else if let Some((x, y)) = self.pressed_at.take()
                            && (x - self.cursor.0).abs() + (y - self.cursor.1).abs() < 4.0
                        {
                            self.click();
                        }
                    }
                    MouseButton::Right => self.looking = down,
                    _ => {}
                }
                Ok(())
            }
            WindowEvent::ModifiersChanged(modifiers) => {
                self.ctrl = modifiers.state().control_key();
                Ok(())
            }
            WindowEvent::CursorMoved { position, .. } => {
                self.cursor = (position.x, position.y);
                Ok(())
            }
            WindowEvent::MouseWheel { delta, .. } => {
                self.controls.wheel += match delta {
                    MouseScrollDelta::LineDelta(_, y) => f64::from(y),
                    MouseScrollDelta::PixelDelta(p) => p.y / 40.0,
                };
                Ok(())
            }
            WindowEvent::RedrawRequested => self.redraw(event_loop),
            _ => Ok(()),
        };
        if let Err(e) = result {
            self.error = Some(e);
            event_loop.exit();
        }
        if self.quit {
            event_loop.exit();
        }
    }

    fn device_event(&mut self, _event_loop: &ActiveEventLoop, _id: DeviceId, event: DeviceEvent) {
        if let DeviceEvent::MouseMotion { delta } = event {
            if self.dragging {
                self.controls.drag.0 += delta.0;
                self.controls.drag.1 += delta.1;
            }
            if self.looking || (self.dragging && self.run.flight.mode == Mode::Free) {
                self.controls.look.0 += delta.0;
                self.controls.look.1 += delta.1;
            }
        }
    }

    fn about_to_wait(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(live) = &self.live {
            live.window.request_redraw();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (#32): Tab both switched the flight mode and walked
    /// egui's focus into the Layers panel's text fields.
    #[test]
    fn tab_reaches_egui_only_from_a_focused_text_field() {
        let tab = Some(PhysicalKey::Code(KeyCode::Tab));
        assert!(!egui_takes_key(tab, false), "Tab switches the flight mode, not the focus");
        assert!(egui_takes_key(tab, true), "Tab leaves a focused text field");
        assert!(egui_takes_key(Some(PhysicalKey::Code(KeyCode::KeyW)), false));
        assert!(egui_takes_key(None, false), "pointer and window events always reach egui");
    }

    /// The scripts the window and flight tests run press the keys they
    /// pressed before the table of keys; SCREENSHOT and F12 are new.
    #[test]
    fn scripts_name_keys_and_actions_through_the_table() {
        let scripted = |frame, at, key| Scripted { frame, at, key };
        let expected = [
            (
                "8:K@64,44;11:UNDO;13:REDO;15:SAVE",
                vec![
                    scripted(8, Some((64.0, 44.0)), Some((KeyCode::KeyK, false))),
                    scripted(11, None, Some((KeyCode::KeyZ, true))),
                    scripted(13, None, Some((KeyCode::KeyY, true))),
                    scripted(15, None, Some((KeyCode::KeyS, true))),
                ],
            ),
            (
                "2:BALL;4:CRATE@90,70",
                vec![
                    scripted(2, None, Some((KeyCode::KeyB, false))),
                    scripted(4, Some((90.0, 70.0)), Some((KeyCode::KeyV, false))),
                ],
            ),
            ("0:N", vec![scripted(0, None, Some((KeyCode::KeyN, false)))]),
            ("5:CLICK@3,4;", vec![scripted(5, Some((3.0, 4.0)), None)]),
            (
                "6:SCREENSHOT;7:F12;9:DELETE",
                vec![
                    scripted(6, None, Some((KeyCode::F12, false))),
                    scripted(7, None, Some((KeyCode::F12, false))),
                    scripted(9, None, Some((KeyCode::Delete, false))),
                ],
            ),
        ];
        for (text, inputs) in expected {
            assert_eq!(parse_script(text).expect(text), inputs, "{text}");
        }
        for bad in ["1:X", "1:K@5", "K", "x:K", "1:CTRL+K"] {
            assert!(parse_script(bad).is_err(), "{bad} is refused");
        }
    }
}
