//! The window's keys: one table, [`BINDINGS`], binds each key (alone or
//! with Ctrl) to the [`Action`] it triggers and says how the help names it.
//!
//! The key decision: the table is the only place a key is named. The
//! window looks a key up here and dispatches on the action it finds;
//! `--help` and the F1 list are the table's rows ([`help_rows`]); and the
//! `--script` test hook spells a key by winit's name for it (`K`, `F12`,
//! `CTRL+Z`) or an action by its own (`UNDO`), both looked up here
//! ([`scripted_key`]). Bindings that share a line of the help (W A S D)
//! carry the same label and description, and a run of equal lines shows
//! once, so the help stays as short as a person would write it.

use winit::keyboard::KeyCode;

/// What a key does in the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    // Held: on while the key is down (the flight's controls).
    Forward,
    Back,
    Left,
    Right,
    Climb,
    Sink,
    Faster,
    // Pressed: once per press.
    SwitchMode,
    ZoomIn,
    ZoomOut,
    NextPlace,
    WholeBody,
    Panels,
    LayersPanel,
    KeyList,
    Wireframe,
    Freeze,
    ClockFaster,
    ClockSlower,
    ClockPause,
    Crater,
    Pad,
    SelectNext,
    Shrink,
    Grow,
    Move,
    DeleteLayer,
    Undo,
    Redo,
    Save,
    /// Drop a ball where the cursor meets the ground.
    Ball,
    /// Drop a crate where the cursor meets the ground.
    Crate,
    Screenshot,
    Quit,
}

impl Action {
    /// Whether the action lasts while its key is down (flying), rather than
    /// happening once per press.
    pub fn is_held(self) -> bool {
        use Action::*;
        matches!(self, Forward | Back | Left | Right | Climb | Sink | Faster)
    }

    /// The name `--script` knows the action by: its own, in capitals (`UNDO`).
    pub fn script_name(self) -> String {
        format!("{self:?}").to_uppercase()
    }
}

/// One line of the table: these keys, with Ctrl or without, do `action`.
#[derive(Clone, Copy, Debug)]
pub struct Binding {
    pub keys: &'static [KeyCode],
    pub ctrl: bool,
    pub action: Action,
    /// How the help names the keys of its line ("W A S D, arrows").
    pub label: &'static str,
    /// What the help says the line does.
    pub description: &'static str,
}

/// The keys alone.
const fn plain(keys: &'static [KeyCode], action: Action, help: (&'static str, &'static str)) -> Binding {
    Binding { keys, ctrl: false, action, label: help.0, description: help.1 }
}

/// The keys with Ctrl held.
const fn ctrl(keys: &'static [KeyCode], action: Action, help: (&'static str, &'static str)) -> Binding {
    Binding { keys, ctrl: true, action, label: help.0, description: help.1 }
}

// The help's lines that several bindings share.
const FLY: (&str, &str) = ("W A S D, arrows", "fly forward, left, back, right (free flight)");
const SINK_CLIMB: (&str, &str) = ("Q E, PgDn PgUp", "sink, climb");
const ZOOM: (&str, &str) = ("+ -", "zoom (as the wheel does)");
const CLOCK: (&str, &str) = (". , /", "run the clock faster, slower; pause it");
const DIG: (&str, &str) = ("K P", "dig a crater, flatten a pad where the cursor meets the ground");
const RESIZE: (&str, &str) = ("[ ]", "shrink, grow the selected layer");
const UNDO_REDO: (&str, &str) = ("Ctrl+Z Ctrl+Y", "undo, redo");
const DROP: (&str, &str) = ("B V", "drop a ball, a crate where the cursor meets the ground");

/// Every key of the window, in the order the help lists them.
pub const BINDINGS: &[Binding] = {
    use KeyCode::*;
    &[
        plain(&[Tab], Action::SwitchMode, ("Tab", "switch orbit (drag turns the body, wheel zooms) and free flight")),
        plain(&[KeyW, ArrowUp], Action::Forward, FLY),
        plain(&[KeyA, ArrowLeft], Action::Left, FLY),
        plain(&[KeyS, ArrowDown], Action::Back, FLY),
        plain(&[KeyD, ArrowRight], Action::Right, FLY),
        plain(&[KeyQ, PageDown], Action::Sink, SINK_CLIMB),
        plain(&[KeyE, PageUp], Action::Climb, SINK_CLIMB),
        plain(&[ShiftLeft, ShiftRight], Action::Faster, ("Shift", "faster")),
        plain(&[Equal, NumpadAdd], Action::ZoomIn, ZOOM),
        plain(&[Minus, NumpadSubtract], Action::ZoomOut, ZOOM),
        plain(&[KeyG], Action::NextPlace, ("G", "fly to the next listed place")),
        plain(&[KeyF], Action::WholeBody, ("F", "frame the whole body")),
        plain(&[KeyH], Action::Panels, ("H", "show or hide the panels")),
        plain(
            &[KeyL],
            Action::LayersPanel,
            ("L", "show or hide the layers panel (the view centres in the strip left free)"),
        ),
        plain(&[F1], Action::KeyList, ("F1", "show or hide this list of keys")),
        plain(&[KeyT], Action::Wireframe, ("T", "wireframe")),
        plain(&[KeyC], Action::Freeze, ("C", "freeze the cut (look around it)")),
        plain(&[Period], Action::ClockFaster, CLOCK),
        plain(&[Comma], Action::ClockSlower, CLOCK),
        plain(&[Slash], Action::ClockPause, CLOCK),
        plain(&[KeyK], Action::Crater, DIG),
        plain(&[KeyP], Action::Pad, DIG),
        plain(&[KeyN], Action::SelectNext, ("N, click", "select the next layer, the layer under the cursor")),
        plain(&[BracketLeft], Action::Shrink, RESIZE),
        plain(&[BracketRight], Action::Grow, RESIZE),
        plain(&[KeyM], Action::Move, ("M", "move the selected layer to the cursor")),
        plain(&[Delete, Backspace], Action::DeleteLayer, ("Delete, Backspace", "remove the selected layer")),
        ctrl(&[KeyZ], Action::Undo, UNDO_REDO),
        ctrl(&[KeyY], Action::Redo, UNDO_REDO),
        ctrl(&[KeyS], Action::Save, ("Ctrl+S", "save the scene to --scene")),
        plain(&[KeyB], Action::Ball, DROP),
        plain(&[KeyV], Action::Crate, DROP),
        plain(
            &[F12],
            Action::Screenshot,
            ("F12", "save the picture, planet-view-DATE-TIME.png, beside --scene (else here)"),
        ),
        plain(&[Escape], Action::Quit, ("Esc", "quit")),
    ]
};

/// What the pointer does, listed after the keys (it is bound by the
/// window's pointer handling, not by this table).
pub const POINTER_HELP: &[(&str, &str)] = &[("right-drag", "look around")];

/// The binding of `code` pressed with Ctrl held (`ctrl`) or not.
pub fn binding(code: KeyCode, ctrl: bool) -> Option<&'static Binding> {
    BINDINGS.iter().find(|b| b.ctrl == ctrl && b.keys.contains(&code))
}

/// The action of `code` with Ctrl held or not, if it has one.
pub fn action(code: KeyCode, ctrl: bool) -> Option<Action> {
    binding(code, ctrl).map(|b| b.action)
}

/// The help's lines, (keys, what they do): the table's, a run of bindings
/// that share a line shown once, then the pointer's.
pub fn help_rows() -> Vec<(&'static str, &'static str)> {
    let mut rows: Vec<(&str, &str)> = Vec::new();
    for b in BINDINGS {
        if rows.last() != Some(&(b.label, b.description)) {
            rows.push((b.label, b.description));
        }
    }
    rows.extend_from_slice(POINTER_HELP);
    rows
}

/// The keys as `--help` prints them: one line each, the labels in a column.
pub fn help_text() -> String {
    let rows = help_rows();
    let width = rows.iter().map(|(label, _)| label.chars().count()).max().unwrap_or(0) + 2;
    let lines: Vec<String> = rows.iter().map(|(label, what)| format!("  {label:width$}{what}")).collect();
    format!("Keys in a window:\n{}", lines.join("\n"))
}

/// winit's name for a key, less the `Key` of the letters: `K`, `F12`,
/// `Delete`, `BracketLeft`.
pub fn key_name(code: KeyCode) -> String {
    let name = format!("{code:?}");
    name.strip_prefix("Key").map_or_else(|| name.clone(), str::to_owned)
}

/// The key (and whether Ctrl goes with it) a `--script` item names, in any
/// case: a bound key by its name, `CTRL+` first for a Ctrl binding (`K`,
/// `DELETE`, `CTRL+Z`), or an action by its name (`UNDO`, `BALL`,
/// `SCREENSHOT`), which presses the first key bound to it.
pub fn scripted_key(name: &str) -> Option<(KeyCode, bool)> {
    let name = name.trim().to_uppercase();
    let (ctrl, key) = match name.strip_prefix("CTRL+") {
        Some(key) => (true, key),
        None => (false, name.as_str()),
    };
    let by_key = BINDINGS
        .iter()
        .filter(|b| b.ctrl == ctrl)
        .find_map(|b| b.keys.iter().find(|&&code| key_name(code).to_uppercase() == key))
        .map(|&code| (code, ctrl));
    let by_action = || BINDINGS.iter().find(|b| !ctrl && b.action.script_name() == key).map(|b| (b.keys[0], b.ctrl));
    by_key.or_else(by_action)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_key_is_bound_twice() {
        let mut seen = std::collections::HashSet::new();
        for b in BINDINGS {
            for &code in b.keys {
                assert!(seen.insert((code, b.ctrl)), "{code:?} (ctrl {}) is bound twice", b.ctrl);
            }
        }
    }

    #[test]
    fn every_action_has_a_key_and_a_line_of_help() {
        let help = help_text();
        for b in BINDINGS {
            assert!(!b.keys.is_empty(), "{:?} has a key", b.action);
            assert!(help.contains(&format!("  {}", b.label)), "--help lists {:?} as {:?}", b.action, b.label);
            assert!(help.contains(b.description), "--help says what {:?} does", b.action);
            assert!(help_rows().contains(&(b.label, b.description)), "the F1 list shows {:?}", b.action);
        }
        // A line shown once: no two separated runs share a label.
        let rows = help_rows();
        let labels: std::collections::HashSet<_> = rows.iter().map(|(label, _)| label).collect();
        assert_eq!(labels.len(), rows.len(), "{rows:?}");
    }

    #[test]
    fn every_action_is_bound_once() {
        let actions: Vec<Action> = BINDINGS.iter().map(|b| b.action).collect();
        for (k, action) in actions.iter().enumerate() {
            assert!(!actions[k + 1..].contains(action), "{action:?} has two lines: give it both keys on one");
        }
    }

    /// The names the window and flight tests' `--script`s use, and the
    /// keys they pressed before the table.
    #[test]
    fn script_names_keep_their_keys() {
        let expected = [
            ("K", Some((KeyCode::KeyK, false))),
            ("P", Some((KeyCode::KeyP, false))),
            ("N", Some((KeyCode::KeyN, false))),
            ("M", Some((KeyCode::KeyM, false))),
            ("DELETE", Some((KeyCode::Delete, false))),
            ("UNDO", Some((KeyCode::KeyZ, true))),
            ("REDO", Some((KeyCode::KeyY, true))),
            ("SAVE", Some((KeyCode::KeyS, true))),
            ("BALL", Some((KeyCode::KeyB, false))),
            ("CRATE", Some((KeyCode::KeyV, false))),
            ("ctrl+z", Some((KeyCode::KeyZ, true))),
            ("F12", Some((KeyCode::F12, false))),
            ("SCREENSHOT", Some((KeyCode::F12, false))),
            ("S", Some((KeyCode::KeyS, false))),
            ("CTRL+K", None),
            ("CTRL+UNDO", None),
            ("X", None),
            ("CLICK", None),
        ];
        for (name, key) in expected {
            assert_eq!(scripted_key(name), key, "{name}");
        }
    }

    #[test]
    fn lookups_tell_ctrl_apart() {
        assert_eq!(action(KeyCode::KeyS, false), Some(Action::Back));
        assert_eq!(action(KeyCode::KeyS, true), Some(Action::Save));
        assert_eq!(action(KeyCode::KeyW, true), None, "Ctrl+W flies nowhere");
        assert_eq!(action(KeyCode::Backspace, false), Some(Action::DeleteLayer));
        assert!(Action::Faster.is_held() && !Action::Screenshot.is_held());
    }

    #[test]
    fn help_lines_up_its_columns() {
        let text = help_text();
        let columns: Vec<usize> = text
            .lines()
            .skip(1)
            .map(|line| {
                let label = help_rows().into_iter().find(|(l, _)| line.starts_with(&format!("  {l} "))).expect(line);
                line.find(label.1).expect("the description")
            })
            .collect();
        assert!(columns.windows(2).all(|w| w[0] == w[1]), "{text}");
        assert!(text.starts_with("Keys in a window:\n  Tab "), "{text}");
    }
}
