//! The viewer's panels (egui): camera, frame statistics, view settings and
//! places on the left of the frame, the layer stack on its right.
//!
//! The key decision: the panels read a plain [`Readout`] and edit a plain
//! [`ViewControls`] and the layer stack (through [`Authoring`] and an
//! [`Editor`]), and ask for what they cannot do themselves (fly to a
//! place) as [`Request`]s. They never see the window, the renderer or
//! the session, so tests drive them headless with egui's own input events
//! (`egui::RawInput`), on a bare layer stack. Why egui: it is the
//! maintained immediate-mode UI for Rust, with a winit integration for
//! winit 0.30 (egui-winit) and an ash renderer (egui-ash-renderer, see
//! planet-render's vk/ui.rs); egui 0.36 is the newest both support.
//! Named widgets record where they landed (`Panels::rect_of`), so tests
//! click them where a person would.

mod layers;
mod readouts;
#[cfg(test)]
mod tests;

use std::collections::{HashMap, VecDeque};

use planet_render::UiFrame;
use planet_render::egui;

use crate::authoring::{Authoring, Editor};
use crate::flight::Place;

/// What the panels show about the latest frame and the camera.
#[derive(Clone, Debug, Default)]
pub struct Readout {
    /// The body below the camera (its nearest): what the place is on.
    pub body: String,
    pub lat: f64,
    pub lon: f64,
    /// Height above the ellipsoid and above the ground, metres.
    pub alt: f64,
    pub above_ground: f64,
    /// Metres per second, over the last frame.
    pub speed: f64,
    pub mode: String,
    pub clock: String,
    pub cpu_ms: f64,
    pub gpu_ms: Option<f64>,
    pub nodes_selected: usize,
    pub nodes_drawn: usize,
    pub slots: usize,
    pub uploads: usize,
    pub pending: usize,
    pub error_px: f64,
    /// The share of the picture that is ground no pack measured (drawn as
    /// no data), when the GPU has said.
    pub no_data_share: Option<f64>,
    /// Where the ray through the view's centre meets the ground (latitude,
    /// longitude), when known: where "Add here" puts a new layer (under the
    /// camera it would be out of view).
    pub aim: Option<(f64, f64)>,
    /// What the ground under the cursor is made of (measured, resampled,
    /// invented), when known.
    pub cursor: Option<String>,
    /// A message for the person (what the last action did).
    pub status: Option<String>,
}

/// The settings the view panel edits in place; the window applies them.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewControls {
    pub error_px: f64,
    pub budget: usize,
    /// The largest budget the renderer can draw.
    pub max_budget: usize,
    pub wireframe: bool,
    pub wireframe_supported: bool,
    pub frozen: bool,
    /// Index into the clock's rates, and their labels.
    pub time_rate: usize,
    pub rate_labels: Vec<String>,
    pub time_paused: bool,
}

/// What the panels ask the window to do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Request {
    /// Fly to place `k` of [`Panels::places`].
    GoTo(usize),
    /// Fly out until the whole body is in view.
    FrameBody,
}

/// The layer stack the layers panel edits.
pub struct LayerEdit<'a> {
    pub authoring: &'a mut Authoring,
    pub editor: &'a mut dyn Editor,
    /// The body's name, as scenes record it.
    pub body: &'a str,
}

/// Each side panel's width, in points, in a wide window: both together
/// leave the view three fifths of a 1280-pixel window (two 300-point panels
/// that grew with their text took 55%).
pub const PANEL_WIDTH: f32 = 240.0;

/// Each side panel's width in a window `window_width` points wide:
/// [`PANEL_WIDTH`], at most a quarter of the window, so the two leave the
/// view at least half of any window (their contents wrap to fit).
pub fn side_panel_width(window_width: f32) -> f32 {
    PANEL_WIDTH.min(0.25 * window_width)
}

/// The list of keys' width, in points: inside the strip the panels leave
/// in a 1280-point window, and wide enough that few descriptions wrap.
const KEY_LIST_WIDTH: f32 = 600.0;

/// CPU and GPU milliseconds of the frames the graph shows.
const HISTORY: usize = 120;

/// The panels' own state between frames.
pub struct Panels {
    ctx: egui::Context,
    pub shown: bool,
    /// False for recorded frames (headless `--hud`): the camera and frame
    /// readouts only, in a corner box (nothing there could be clicked).
    pub interactive: bool,
    pub filter: String,
    /// The places listed ([`crate::flight::places`]); the built-in ones
    /// until the window sets its own.
    pub places: Vec<Place>,
    /// The list of keys (F1), over the view.
    pub help_shown: bool,
    /// The layers panel on the right (L hides it alone, so the view gains
    /// its strip and centres in what is left).
    pub layers_shown: bool,
    history: VecDeque<(f64, Option<f64>)>,
    layers: layers::LayersState,
    rects: HashMap<&'static str, egui::Rect>,
    /// Pixels per egui point in the last run.
    pixels_per_point: f32,
    /// Whether egui has laid the panels out once: a box (an `Area`) is
    /// measured invisibly on its first pass.
    laid_out: bool,
}

impl std::fmt::Debug for Panels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Panels").field("shown", &self.shown).field("filter", &self.filter).finish_non_exhaustive()
    }
}

/// One run of the panels: what to draw and what they asked for.
pub struct PanelOutput {
    pub ui: UiFrame,
    pub platform: egui::PlatformOutput,
    pub requests: Vec<Request>,
}

impl Panels {
    pub fn new(shown: bool) -> Panels {
        Panels {
            ctx: egui::Context::default(),
            shown,
            interactive: true,
            filter: String::new(),
            places: crate::flight::places(&[], &planet_terrain::geo::body::Body::earth(), &[]),
            help_shown: false,
            layers_shown: true,
            history: VecDeque::new(),
            layers: layers::LayersState::default(),
            rects: HashMap::new(),
            pixels_per_point: 1.0,
            laid_out: false,
        }
    }

    /// Pixels from the centre of a window `window_width_px` wide to the
    /// middle of the strip its side panels leave free, as the last run laid
    /// them out (0 with the panels hidden): where the 3D view's axis, and so
    /// a "Go to" target, belongs.
    pub fn free_strip_offset_px(&self, window_width_px: f64) -> f64 {
        match self.free_strip_px(window_width_px) {
            Some((left, right)) => 0.5 * (left + right) - 0.5 * window_width_px,
            None => 0.0,
        }
    }

    /// The strip (left and right edges, pixels) the side panels leave free
    /// in a window `window_width_px` wide, as the last run laid them out:
    /// the whole width with the panels hidden, `None` when they cover it.
    pub fn free_strip_px(&self, window_width_px: f64) -> Option<(f64, f64)> {
        let ppp = f64::from(self.pixels_per_point);
        let left = self.rects.get("panel.left").map_or(0.0, |r| f64::from(r.max.x) * ppp);
        let right = self.rects.get("panel.right").map_or(window_width_px, |r| f64::from(r.min.x) * ppp);
        (right > left).then_some((left, right))
    }

    pub fn context(&self) -> &egui::Context {
        &self.ctx
    }

    /// The renderer's copies of the panels' textures went with a lost
    /// device (the frame reported `device_lost`): the next frame sends the
    /// font atlas whole again, as egui did for the first frame, instead of
    /// the patches it sends once the atlas is up.
    pub fn textures_lost(&self) {
        let atlas = self.ctx.fonts(|fonts| fonts.image());
        let options = egui::epaint::textures::TextureOptions::LINEAR;
        self.ctx.tex_manager().write().set(egui::TextureId::default(), egui::epaint::ImageDelta::full(atlas, options));
    }

    /// Where the widget named `name` was laid out in the last run.
    #[cfg(test)]
    pub fn rect_of(&self, name: &str) -> Option<egui::Rect> {
        self.rects.get(name).copied()
    }

    /// Whether the pointer is the panels' (over them, or dragging in them).
    pub fn wants_pointer(&self) -> bool {
        self.shown && self.ctx.egui_wants_pointer_input()
    }

    /// Whether typed keys go to the panels (a text field has the focus),
    /// not to the keyboard shortcuts.
    pub fn wants_keyboard(&self) -> bool {
        // Not `egui_wants_keyboard_input`: a clicked button keeps egui's
        // focus, and the shortcuts must still work after it.
        self.shown && self.ctx.text_edit_focused()
    }

    /// Runs the panels over one frame's input.
    #[expect(
        clippy::too_many_lines,
        reason = "one egui pass over both panels: its closure borrows the panels' fields apart, which methods on self cannot, and egui needs it twice on the first frame"
    )]
    pub fn run(
        &mut self,
        input: egui::RawInput,
        readout: &Readout,
        view: &mut ViewControls,
        edit: LayerEdit<'_>,
    ) -> PanelOutput {
        self.history.push_back((readout.cpu_ms, readout.gpu_ms));
        while self.history.len() > HISTORY {
            self.history.pop_front();
        }
        let mut requests = Vec::new();
        let mut rects = HashMap::new();
        let (shown, interactive, layers_shown) = (self.shown, self.interactive, self.layers_shown);
        let help_shown = &mut self.help_shown;
        let mut hide_layers = false;
        let (filter, history, layers, places) = (&mut self.filter, &self.history, &mut self.layers, &self.places);
        let mut edit = edit;
        let screen = input.screen_rect;
        let mut build = |ui: &mut egui::Ui| {
            if *help_shown && interactive {
                *help_shown = key_list(ui.ctx(), &mut rects);
            }
            if !shown {
                return;
            }
            if !interactive {
                // Recorded frames: the readouts in a corner, the picture free.
                egui::Area::new(egui::Id::new("readouts")).fixed_pos(egui::pos2(8.0, 8.0)).fade_in(false).show(
                    ui.ctx(),
                    |ui| {
                        egui::Frame::popup(ui.style()).show(ui, |ui| {
                            ui.set_max_width(300.0);
                            readouts::camera(ui, readout);
                            ui.separator();
                            readouts::frame(ui, readout, history);
                        });
                    },
                );
                return;
            }
            // The layers on the right, the rest on the left, the frame between:
            // each of a fixed width (a longer clock line wraps, the view does
            // not jump), each at most a quarter of the window.
            let width = side_panel_width(ui.ctx().content_rect().width());
            if layers_shown {
                let right = egui::Panel::right("layers").resizable(false).exact_size(width).show(ui, |ui| {
                    egui::ScrollArea::vertical().id_salt("layers").show(ui, |ui| {
                        ui.horizontal_wrapped(|ui| {
                            ui.heading("Layers");
                            let hide = ui.small_button("hide (L)").on_hover_text("Hide the layers panel; L shows it");
                            rects.insert("layers.hide", hide.rect);
                            hide_layers |= hide.clicked();
                        });
                        layers.show(ui, &mut edit, readout.aim.unwrap_or((readout.lat, readout.lon)), &mut rects);
                    });
                });
                rects.insert("panel.right", right.response.rect);
            }
            let left = egui::Panel::left("panels").resizable(false).exact_size(width).show(ui, |ui| {
                egui::ScrollArea::vertical().id_salt("panels").show(ui, |ui| {
                    egui::CollapsingHeader::new("Camera")
                        .default_open(true)
                        .show(ui, |ui| readouts::camera(ui, readout));
                    egui::CollapsingHeader::new("Frame")
                        .default_open(true)
                        .show(ui, |ui| readouts::frame(ui, readout, history));
                    egui::CollapsingHeader::new("View")
                        .default_open(true)
                        .show(ui, |ui| readouts::view(ui, view, &mut rects));
                    egui::CollapsingHeader::new("Places")
                        .default_open(true)
                        .show(ui, |ui| places_list(ui, places, filter, &mut requests, &mut rects));
                    if let Some(status) = &readout.status {
                        ui.separator();
                        ui.label(status);
                    }
                });
            });
            rects.insert("panel.left", left.response.rect);
        };
        let mut output = self.ctx.run_ui(input, &mut build);
        if !std::mem::replace(&mut self.laid_out, true) {
            // The first frame shows what the second pass laid out; the
            // first pass's texture changes (the font atlas) still count.
            let again = egui::RawInput { screen_rect: screen, ..egui::RawInput::default() };
            let second = self.ctx.run_ui(again, &mut build);
            output.textures_delta.append(second.textures_delta);
            output.shapes = second.shapes;
            output.pixels_per_point = second.pixels_per_point;
        }
        self.rects = rects;
        self.layers_shown &= !hide_layers;
        let pixels_per_point = output.pixels_per_point;
        self.pixels_per_point = pixels_per_point;
        let primitives = self.ctx.tessellate(output.shapes, pixels_per_point);
        PanelOutput {
            ui: UiFrame { textures: output.textures_delta, primitives, pixels_per_point },
            platform: output.platform_output,
            requests,
        }
    }
}

/// What a slider's value box and the space before it take, in points.
const SLIDER_VALUE_WIDTH: f32 = 64.0;

/// A slider with its name on the line above, as wide as the panel leaves
/// it: a name beside the slider ran past the edge of a narrow panel.
fn named_slider(ui: &mut egui::Ui, name: &str, slider: egui::Slider<'_>) -> egui::Response {
    ui.add(egui::Label::new(name).wrap());
    ui.spacing_mut().slider_width = (ui.available_width() - SLIDER_VALUE_WIDTH).max(40.0);
    ui.add(slider)
}

/// The list of keys (F1) over the view, the lines `--help` prints
/// ([`crate::keys::help_rows`]) in two columns: the keys, and what they do
/// (a long description wraps in its own column). Scrolls in a window too
/// short for it. Returns whether it stays open (its close button).
fn key_list(ctx: &egui::Context, rects: &mut HashMap<&'static str, egui::Rect>) -> bool {
    let mut open = true;
    let screen = ctx.content_rect();
    // As wide as the list reads best, less in a narrow window.
    let width = KEY_LIST_WIDTH.min(screen.width() - 32.0);
    let (mut keys, mut descriptions) = (egui::Rect::NOTHING, egui::Rect::NOTHING);
    let window = egui::Window::new("Keys (F1)")
        .open(&mut open)
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_CENTER, egui::vec2(0.0, 0.0))
        .min_width(width)
        .max_width(width)
        // egui's 420-point default would scroll a list the window has room for.
        .default_height(screen.height() - 40.0)
        .show(ctx, |ui| {
            egui::ScrollArea::vertical().id_salt("keys").max_height(screen.height() - 96.0).show(ui, |ui| {
                egui::Grid::new("keys").num_columns(2).striped(true).show(ui, |ui| {
                    for (label, description) in crate::keys::help_rows() {
                        let label = egui::RichText::new(label).monospace().strong();
                        keys = keys.union(ui.add(egui::Label::new(label).extend()).rect);
                        descriptions = descriptions.union(ui.add(egui::Label::new(description).wrap()).rect);
                        ui.end_row();
                    }
                });
            });
        });
    if let Some(window) = window {
        rects.insert("help", window.response.rect);
        rects.insert("help.keys", keys);
        rects.insert("help.descriptions", descriptions);
    }
    open
}

/// Places whose name holds `filter` (any case), with their index.
pub fn matching_places(places: &[Place], filter: &str) -> Vec<usize> {
    let needle = filter.trim().to_uppercase();
    (0..places.len()).filter(|&k| places[k].name.contains(&needle)).collect()
}

fn places_list(
    ui: &mut egui::Ui,
    places: &[Place],
    filter: &mut String,
    requests: &mut Vec<Request>,
    rects: &mut HashMap<&'static str, egui::Rect>,
) {
    ui.horizontal(|ui| {
        ui.label("Filter");
        // The field takes what the label leaves of the panel's width.
        let field = ui.add(egui::TextEdit::singleline(filter).desired_width(ui.available_width()));
        rects.insert("places.filter", field.rect);
    });
    let shown = matching_places(places, filter);
    if shown.is_empty() {
        ui.label("no place matches");
    }
    egui::ScrollArea::vertical().id_salt("places").max_height(150.0).show(ui, |ui| {
        for (row, k) in shown.into_iter().enumerate() {
            let Place { name, lat, lon, .. } = &places[k];
            let button = ui.button(format!("Go to {}", title_case(name))).on_hover_text(format!("{lat:.2}, {lon:.2}"));
            if row == 0 {
                rects.insert("places.first", button.rect);
            }
            if button.clicked() {
                requests.push(Request::GoTo(k));
            }
        }
    });
    if ui.button("Whole body").clicked() {
        requests.push(Request::FrameBody);
    }
}

/// "MOUNT EVEREST" as "Mount Everest".
fn title_case(name: &str) -> String {
    name.split(' ')
        .map(|w| {
            let mut chars = w.chars();
            chars.next().map_or(String::new(), |c| c.to_string() + &chars.as_str().to_lowercase())
        })
        .collect::<Vec<_>>()
        .join(" ")
}
