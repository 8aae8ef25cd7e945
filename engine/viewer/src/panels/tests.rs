//! The panels driven headless: egui's own input events (pointer moves,
//! presses, typed text) at the places the widgets were laid out, on a bare
//! layer stack, with the resulting state checked.

use planet_render::egui::{self, Event, Modifiers, PointerButton, Pos2, RawInput, Rect};
use planet_terrain::layers::LayerKind;

use super::*;
use crate::authoring::bare::{Stack, snapshot, stack};

struct Rig {
    /// The window, in points.
    screen: egui::Vec2,
    panels: Panels,
    readout: Readout,
    view: ViewControls,
    authoring: Authoring,
    stack: Stack,
}

impl Rig {
    /// A tall screen, so every panel lays out open.
    fn new() -> Rig {
        Rig::sized(1024.0, 2000.0)
    }

    fn sized(width: f32, height: f32) -> Rig {
        let view = ViewControls {
            error_px: 2.0,
            budget: 2048,
            max_budget: 8192,
            wireframe: false,
            wireframe_supported: true,
            frozen: false,
            time_rate: 0,
            rate_labels: vec!["x1".into(), "x10".into()],
            time_paused: false,
        };
        let readout = Readout { lat: 46.0, lon: 8.0, mode: "orbit".into(), ..Readout::default() };
        let screen = egui::vec2(width, height);
        Rig { screen, panels: Panels::new(true), readout, view, authoring: Authoring::default(), stack: stack() }
    }

    /// One frame with `events`.
    fn frame(&mut self, events: Vec<Event>) -> PanelOutput {
        let input =
            RawInput { screen_rect: Some(Rect::from_min_size(Pos2::ZERO, self.screen)), events, ..RawInput::default() };
        let edit = LayerEdit { authoring: &mut self.authoring, editor: &mut self.stack, body: "earth" };
        self.panels.run(input, &self.readout, &mut self.view, edit)
    }

    fn at(&self, name: &str) -> Pos2 {
        self.panels.rect_of(name).unwrap_or_else(|| panic!("{name} was laid out")).center()
    }

    fn press(pos: Pos2, pressed: bool) -> Event {
        Event::PointerButton { pos, button: PointerButton::Primary, pressed, modifiers: Modifiers::default() }
    }

    /// Moves to the widget, presses and releases: what a click is.
    fn click(&mut self, name: &str) -> Vec<Request> {
        let pos = self.at(name);
        let mut requests = self.frame(vec![Event::PointerMoved(pos)]).requests;
        requests.extend(self.frame(vec![Rig::press(pos, true)]).requests);
        requests.extend(self.frame(vec![Rig::press(pos, false)]).requests);
        requests.extend(self.frame(vec![]).requests);
        requests
    }

    /// Presses on the widget, moves by `dx` points over a few frames, releases.
    fn drag(&mut self, name: &str, dx: f32) {
        let from = self.at(name);
        self.frame(vec![Event::PointerMoved(from)]);
        self.frame(vec![Rig::press(from, true)]);
        for step in 1..=4 {
            self.frame(vec![Event::PointerMoved(from + egui::vec2(dx * step as f32 / 4.0, 0.0))]);
        }
        self.frame(vec![Rig::press(from + egui::vec2(dx, 0.0), false)]);
        self.frame(vec![]);
    }

    fn kinds(&self) -> Vec<&'static str> {
        self.stack.layers.layers().map(|l| layers::kind_name(&l.kind)).collect()
    }
}

#[test]
fn typing_a_filter_narrows_the_places_and_go_to_asks_for_the_first() {
    let mut rig = Rig::new();
    rig.frame(vec![]);
    rig.click("places.filter");
    assert!(rig.panels.wants_keyboard(), "the filter has the keyboard: shortcuts stay quiet while typing");
    rig.frame(vec![Event::Text("canyon".into())]);
    assert_eq!(rig.panels.filter, "canyon");
    let requests = rig.click("places.first");
    let places = &rig.panels.places;
    let canyon = places.iter().position(|p| p.name == "GRAND CANYON").expect("a place");
    assert_eq!(requests, vec![Request::GoTo(canyon)]);
    assert_eq!(matching_places(places, "zzz"), Vec::<usize>::new());
    assert_eq!(matching_places(places, "").len(), places.len());
}

#[test]
fn view_settings_follow_the_slider_and_the_checkbox() {
    let mut rig = Rig::new();
    rig.frame(vec![]);
    rig.drag("view.error", 60.0);
    assert!(rig.view.error_px > 2.0, "dragging right raised the error target: {}", rig.view.error_px);
    rig.click("view.freeze");
    assert!(rig.view.frozen);
    rig.click("view.freeze");
    assert!(!rig.view.frozen);
}

#[test]
fn layers_are_added_edited_reordered_deleted_undone_saved_and_loaded() {
    let mut rig = Rig::new();
    rig.frame(vec![]);
    rig.click("layers.add");
    assert_eq!(rig.kinds(), vec!["crater"]);
    let crater = snapshot(&rig.stack);
    assert!(matches!(crater[0].kind, LayerKind::Crater { lat, lon, .. } if lat == 46.0 && lon == 8.0));
    // Every kind the stack knows can be added.
    for kind in [layers::NewKind::Pad, layers::NewKind::Raise, layers::NewKind::Polygon] {
        rig.panels.layers.new_kind = kind;
        rig.click("layers.add");
    }
    assert_eq!(rig.kinds(), vec!["crater", "pad", "raise", "polygon pad"]);
    // Where the view's centre meets the ground, when known, not under the
    // camera (#32: the crater landed out of view).
    rig.readout.aim = Some((45.5, 8.25));
    rig.panels.layers.new_kind = layers::NewKind::Raise;
    rig.click("layers.add");
    let raised = snapshot(&rig.stack).last().cloned().expect("added");
    assert!(matches!(raised.kind, LayerKind::Raise { lat, lon, .. } if lat == 45.5 && lon == 8.25), "{raised:?}");
    rig.click("layers.undo");
    rig.readout.aim = None;
    // Select the crater and widen it.
    rig.click("layers.row0");
    assert_eq!(rig.authoring.selected, Some(1));
    rig.drag("layers.radius", 40.0);
    let LayerKind::Crater { radius_m, .. } = rig.stack.layers.get(1).expect("crater").kind else { panic!("crater") };
    assert!(radius_m > 1000.0, "the slider widened the crater: {radius_m} m");
    // One drag is one undo step.
    rig.click("layers.undo");
    assert_eq!(snapshot(&rig.stack)[0], crater[0]);
    // Move the crater one up the stack: it now applies after the pad.
    rig.click("layers.row0.down");
    assert_eq!(rig.kinds(), vec!["pad", "crater", "raise", "polygon pad"]);
    rig.click("layers.row0.delete");
    assert_eq!(rig.kinds(), vec!["crater", "raise", "polygon pad"]);
    rig.click("layers.undo");
    assert_eq!(rig.kinds(), vec!["pad", "crater", "raise", "polygon pad"]);
    // Save by path, change the stack, load it back.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("panel-scene.json");
    let saved = snapshot(&rig.stack);
    rig.click("layers.path");
    rig.frame(vec![Event::Text(path.display().to_string())]);
    rig.click("layers.save");
    assert!(path.exists(), "{:?}", rig.panels.layers.message);
    rig.click("layers.row0.delete");
    rig.click("layers.row0.delete");
    assert_eq!(rig.stack.layers.len(), 2);
    rig.click("layers.load");
    assert_eq!(snapshot(&rig.stack), saved, "{:?}", rig.panels.layers.message);
    rig.click("layers.undo");
    assert_eq!(rig.stack.layers.len(), 2, "a load undoes as one step");
}

#[test]
fn hidden_panels_draw_nothing_and_take_no_input() {
    let mut rig = Rig::new();
    rig.panels.shown = false;
    let output = rig.frame(vec![Event::PointerMoved(Pos2::new(20.0, 20.0))]);
    assert!(output.ui.primitives.is_empty());
    assert!(!rig.panels.wants_pointer());
    rig.panels.shown = true;
    let output = rig.frame(vec![Event::PointerMoved(Pos2::new(20.0, 20.0))]);
    assert!(!output.ui.primitives.is_empty());
    assert!(rig.panels.wants_pointer(), "the pointer is over the panel");
}

#[test]
fn recorded_frames_show_the_readouts_and_no_controls() {
    let mut rig = Rig::new();
    rig.panels.interactive = false;
    rig.frame(vec![]);
    for control in ["view.error", "places.filter", "layers.add"] {
        assert!(rig.panels.rect_of(control).is_none(), "{control} is not drawn");
    }
    rig.panels.interactive = true;
    rig.frame(vec![]);
    assert!(rig.panels.rect_of("layers.add").is_some());
}

/// Regression (#32): the panels took 696 of 1,280 pixels and the left one
/// widened with its clock line, moving the view. Each is now of one fixed
/// width, whatever its text.
#[test]
fn the_panels_keep_their_width_and_leave_the_view_most_of_the_window() {
    let mut rig = Rig::new();
    rig.frame(vec![]);
    let width = |rig: &Rig, name: &str| rig.panels.rect_of(name).unwrap_or_else(|| panic!("{name}")).width();
    let (left, right) = (width(&rig, "panel.left"), width(&rig, "panel.right"));
    assert!(left + right <= 0.4 * 1280.0, "panels {left} + {right} points");
    rig.readout.clock = "2026-03-20 10:00 UTC, 10:00 local solar, TIME X21600 (a long clock line)".into();
    rig.frame(vec![]);
    rig.frame(vec![]);
    assert_eq!(width(&rig, "panel.left"), left, "the clock line does not widen its panel");
}

/// F1's list of keys is the one `--help` prints, shown over the view and
/// closed by its own button as well as by F1.
#[test]
fn the_help_panel_lists_the_keys_help_prints() {
    let mut rig = Rig::new();
    rig.frame(vec![]);
    assert!(rig.panels.rect_of("help").is_none(), "hidden until F1");
    rig.panels.help_shown = true;
    rig.frame(vec![]);
    rig.frame(vec![]);
    let help = rig.panels.rect_of("help").expect("the keys are shown");
    let (left, right) =
        (rig.panels.rect_of("panel.left").expect("left"), rig.panels.rect_of("panel.right").expect("right"));
    assert!(help.center().x > left.right() && help.center().x < right.left(), "over the view, between the panels");
    assert!(crate::keys::help_rows().iter().any(|(keys, _)| *keys == "F1"), "the list names its own key");
}

/// The list of keys reads in two columns at the default window size
/// (1280x720) and a narrow one: every key left of every description (none
/// wraps under the keys), the whole list inside the window.
#[test]
fn the_key_list_reads_in_two_columns() {
    for (width, height) in [(1280.0, 720.0), (800.0, 600.0)] {
        let mut rig = Rig::sized(width, height);
        rig.panels.help_shown = true;
        let output = rig.frame(vec![]);
        let rect = |name: &str| rig.panels.rect_of(name).unwrap_or_else(|| panic!("{name} at {width}x{height}"));
        let (keys, descriptions, window) = (rect("help.keys"), rect("help.descriptions"), rect("help"));
        assert!(keys.right() < descriptions.left(), "two columns at {width}x{height}: {keys:?} {descriptions:?}");
        let screen = Rect::from_min_size(Pos2::ZERO, rig.screen);
        assert!(screen.contains_rect(window), "the list inside {width}x{height}: {window:?}");
        assert!(window.contains_rect(keys.union(descriptions)), "every line shows at {width}x{height}, unscrolled");
        assert_eq!(clipped_sideways(&output), Vec::<String>::new(), "at {width}x{height}");
    }
}

/// Text cut off sideways: glyphs (the textured vertices; fills and lines
/// use the font atlas's white texel) past the left or right of their clip
/// rectangle. A vertical scroll area clips legitimately, sideways nothing
/// should; a panel's own fill runs past its edge by design, so fills are
/// left to the widgets' rectangles.
fn clipped_sideways(output: &PanelOutput) -> Vec<String> {
    let mut clipped = Vec::new();
    for primitive in &output.ui.primitives {
        let egui::epaint::Primitive::Mesh(mesh) = &primitive.primitive else { continue };
        let clip = primitive.clip_rect;
        let glyphs = mesh.vertices.iter().filter(|v| v.uv != egui::epaint::WHITE_UV);
        for v in glyphs.filter(|v| v.pos.x < clip.left() - 0.5 || v.pos.x > clip.right() + 0.5) {
            clipped.push(format!("a glyph at {:?}, clipped to {clip:?}", v.pos));
        }
    }
    clipped
}

/// Issue #55: each side panel takes at most a quarter of the window, the
/// two leave the view at least half, and nothing in them is cut off at
/// their edges (labels wrap, fields fit), at the default window size and a
/// narrow one, with a layer selected so its parameters show.
#[test]
fn each_panel_takes_at_most_a_quarter_of_the_window_and_clips_nothing() {
    for (width, height) in [(1280.0, 720.0), (800.0, 600.0)] {
        let mut rig = Rig::sized(width, height);
        rig.frame(vec![]);
        rig.click("layers.add");
        rig.click("layers.row0");
        let output = rig.frame(vec![]);
        let rect = |name: &str| rig.panels.rect_of(name).unwrap_or_else(|| panic!("{name} at {width}x{height}"));
        let (left, right) = (rect("panel.left"), rect("panel.right"));
        for panel in [left, right] {
            assert!(panel.width() <= 0.25 * width + 0.5, "{} of {width} points", panel.width());
        }
        assert!(right.left() - left.right() >= 0.5 * width, "the view keeps half of {width}: {left:?} {right:?}");
        let left_controls = ["view.error", "view.budget", "view.freeze", "places.filter", "places.first"];
        let right_controls = ["layers.hide", "layers.add", "layers.undo", "layers.row0", "layers.row0.delete"];
        let more_right = ["layers.radius", "layers.path", "layers.save", "layers.load"];
        for (panel, control) in left_controls
            .map(|c| (left, c))
            .into_iter()
            .chain(right_controls.map(|c| (right, c)))
            .chain(more_right.map(|c| (right, c)))
        {
            let at = rect(control);
            assert!(
                at.left() >= panel.left() && at.right() <= panel.right(),
                "{control} {at:?} inside its panel {panel:?} at {width}x{height}"
            );
        }
        assert_eq!(clipped_sideways(&output), Vec::<String>::new(), "at {width}x{height}");
    }
}

/// Regression (#32): the globe was centred on the whole window, not on the
/// strip the panels leave. With both panels (of one width) the strip is
/// centred; with the layers panel hidden (its button, or L) the view's axis
/// moves to the middle of what is left.
#[test]
fn the_view_centres_in_the_strip_the_panels_leave_free() {
    let mut rig = Rig::new();
    rig.frame(vec![]);
    let width = 1024.0;
    assert!(
        rig.panels.free_strip_offset_px(width).abs() < 1.0,
        "both panels: {}",
        rig.panels.free_strip_offset_px(width)
    );
    rig.click("layers.hide");
    assert!(!rig.panels.layers_shown);
    rig.frame(vec![]);
    assert!(rig.panels.rect_of("panel.right").is_none(), "the layers panel is gone");
    let left = rig.panels.rect_of("panel.left").unwrap().max.x as f64;
    let expected = 0.5 * (left + width) - 0.5 * width;
    assert!((rig.panels.free_strip_offset_px(width) - expected).abs() < 1e-6 && expected > 100.0, "{expected}");
    rig.panels.shown = false;
    rig.frame(vec![]);
    assert_eq!(rig.panels.free_strip_offset_px(width), 0.0, "no panels, a centred view");
}
