//! Authoring edits in the viewer: place a crater or a flatten pad where the
//! cursor meets the ground, resize, move, delete, undo, redo, save.
//!
//! The key decision: every action is a layer-stack mutation with an exact
//! inverse (insert <-> remove, rewrite <-> rewrite back), applied through the
//! stack's own API, so undo and redo journal their footprints like any edit
//! and the renderer re-stages exactly the tiles they touch.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use planet_terrain::geo::body::Ellipsoid;
use planet_terrain::layers::Scene;
use planet_terrain::layers::{Layer, LayerError, LayerKind, LayerStack, Target};

/// Something whose layer stack can be edited (the viewer's scene; a bare
/// stack in tests).
pub trait Editor {
    fn layers(&self) -> &LayerStack;
    fn apply(
        &mut self,
        change: &mut dyn FnMut(&mut LayerStack, &Ellipsoid) -> Result<(), LayerError>,
    ) -> Result<(), LayerError>;
}

impl Editor for planet_render::scene::TerrainScene {
    fn layers(&self) -> &LayerStack {
        planet_render::scene::TerrainScene::layers(self)
    }

    fn apply(
        &mut self,
        change: &mut dyn FnMut(&mut LayerStack, &Ellipsoid) -> Result<(), LayerError>,
    ) -> Result<(), LayerError> {
        self.edit(|stack, e| change(stack, e)).map(|_| ())
    }
}

/// One reversible change.
#[derive(Clone, Debug, PartialEq)]
enum Action {
    Insert(Layer),
    Remove(Layer),
    Rewrite {
        before: Layer,
        after: Layer,
    },
    /// Several changes as one step (a reorder, a scene loaded over the
    /// stack), undone in reverse.
    Many(Vec<Action>),
}

impl Action {
    fn inverse(&self) -> Action {
        match self {
            Action::Insert(l) => Action::Remove(l.clone()),
            Action::Remove(l) => Action::Insert(l.clone()),
            Action::Rewrite { before, after } => Action::Rewrite { before: after.clone(), after: before.clone() },
            Action::Many(actions) => Action::Many(actions.iter().rev().map(Action::inverse).collect()),
        }
    }

    fn run(&self, editor: &mut dyn Editor) -> Result<(), LayerError> {
        if let Action::Many(actions) = self {
            return actions.iter().try_for_each(|a| a.run(editor));
        }
        editor.apply(&mut |stack, e| match self {
            Action::Insert(l) => stack.insert(e, l.clone()),
            Action::Remove(l) => stack.remove(e, l.order).map(|_| ()),
            Action::Rewrite { after, .. } => stack.rewrite(e, after.clone()).map(|_| ()),
            Action::Many(_) => unreachable!("run one by one above"),
        })
    }
}

/// The authoring state: what is selected, what can be undone and redone.
#[derive(Debug, Default)]
pub struct Authoring {
    pub selected: Option<u32>,
    undo: Vec<Action>,
    redo: Vec<Action>,
    /// Where Ctrl+S writes, and the packs it names (bottom first).
    pub scene_file: Option<PathBuf>,
    pub packs: Vec<String>,
}

fn centre(kind: &LayerKind) -> Option<(f64, f64, f64)> {
    match kind {
        LayerKind::Crater { lat, lon, radius_m, .. }
        | LayerKind::Flatten { lat, lon, radius_m, .. }
        | LayerKind::Raise { lat, lon, radius_m, .. } => Some((*lat, *lon, *radius_m)),
        LayerKind::PolygonFlatten { .. } => None,
    }
}

impl Authoring {
    /// Authoring that saves to `scene_file`, naming the stack `packs` in
    /// the scene.
    pub fn for_file(scene_file: Option<PathBuf>, packs: Vec<String>) -> Authoring {
        Authoring { scene_file, packs, ..Authoring::default() }
    }

    fn next_order(editor: &dyn Editor) -> u32 {
        editor.layers().layers().map(|l| l.order).max().map_or(1, |o| o + 1)
    }

    fn perform(&mut self, editor: &mut dyn Editor, action: Action) -> Result<(), LayerError> {
        action.run(editor)?;
        self.undo.push(action);
        self.redo.clear();
        Ok(())
    }

    /// A crater `radius_m` wide at a latitude/longitude: a bowl a fifth of
    /// its radius deep with a rim a twentieth high.
    pub fn place_crater(
        &mut self,
        editor: &mut dyn Editor,
        lat: f64,
        lon: f64,
        radius_m: f64,
    ) -> Result<u32, LayerError> {
        let order = Self::next_order(editor);
        let kind = LayerKind::Crater { lat, lon, radius_m, depth_m: 0.2 * radius_m, rim_m: 0.05 * radius_m };
        self.perform(editor, Action::Insert(Layer { order, kind }))?;
        self.selected = Some(order);
        Ok(order)
    }

    /// A pad flattened to the mean of the ground beneath it.
    pub fn place_pad(&mut self, editor: &mut dyn Editor, lat: f64, lon: f64, radius_m: f64) -> Result<u32, LayerError> {
        let order = Self::next_order(editor);
        let kind = LayerKind::Flatten { lat, lon, radius_m, target: Target::FootprintMean, blend_m: 0.5 * radius_m };
        self.perform(editor, Action::Insert(Layer { order, kind }))?;
        self.selected = Some(order);
        Ok(order)
    }

    /// Adds a layer of `kind` above every other; selects it.
    pub fn add(&mut self, editor: &mut dyn Editor, kind: LayerKind) -> Result<u32, LayerError> {
        let order = Self::next_order(editor);
        self.perform(editor, Action::Insert(Layer { order, kind }))?;
        self.selected = Some(order);
        Ok(order)
    }

    /// Replaces layer `order`'s parameters. With `merge`, a rewrite of the
    /// same layer just before (one slider drag, frame after frame) is
    /// extended instead of stacking an undo step per frame.
    pub fn rewrite(
        &mut self,
        editor: &mut dyn Editor,
        order: u32,
        kind: LayerKind,
        merge: bool,
    ) -> Result<(), LayerError> {
        let before = editor.layers().get(order).cloned().ok_or(LayerError::NoSuchOrder(order))?;
        let after = Layer { order, kind };
        Action::Rewrite { before: before.clone(), after: after.clone() }.run(editor)?;
        match self.undo.last_mut() {
            Some(Action::Rewrite { before: first, after: last }) if merge && first.order == order => *last = after,
            _ => self.undo.push(Action::Rewrite { before, after }),
        }
        self.redo.clear();
        Ok(())
    }

    /// Exchanges the orders of layers `a` and `b` (moves one past the other).
    pub fn swap(&mut self, editor: &mut dyn Editor, a: u32, b: u32) -> Result<(), LayerError> {
        let (la, lb) = match (editor.layers().get(a), editor.layers().get(b)) {
            (Some(la), Some(lb)) => (la.clone(), lb.clone()),
            (None, _) => return Err(LayerError::NoSuchOrder(a)),
            (_, None) => return Err(LayerError::NoSuchOrder(b)),
        };
        let (na, nb) = (Layer { order: b, kind: la.kind.clone() }, Layer { order: a, kind: lb.kind.clone() });
        let swap = Action::Many(vec![Action::Remove(la), Action::Remove(lb), Action::Insert(na), Action::Insert(nb)]);
        self.perform(editor, swap)?;
        if self.selected == Some(a) {
            self.selected = Some(b);
        } else if self.selected == Some(b) {
            self.selected = Some(a);
        }
        Ok(())
    }

    pub fn delete(&mut self, editor: &mut dyn Editor, order: u32) -> Result<(), LayerError> {
        let layer = editor.layers().get(order).cloned().ok_or(LayerError::NoSuchOrder(order))?;
        self.perform(editor, Action::Remove(layer))?;
        if self.selected == Some(order) {
            self.selected = None;
        }
        Ok(())
    }

    /// Replaces every layer with those of the scene at `path`, as one step
    /// that undoes; from then on the layers save there.
    pub fn load_replacing(&mut self, editor: &mut dyn Editor, path: &Path, body: &str) -> Result<usize> {
        if path.as_os_str().is_empty() {
            anyhow::bail!("no scene path: type the scene file to load in the Scene field");
        }
        let (scene, _) = planet_cli::scene::load_scene(path, body)?;
        let mut steps: Vec<Action> = editor.layers().layers().cloned().map(Action::Remove).collect();
        steps.extend(scene.layers.iter().cloned().map(Action::Insert));
        self.perform(editor, Action::Many(steps)).with_context(|| format!("scene {}", path.display()))?;
        self.selected = None;
        self.scene_file = Some(path.to_path_buf());
        if !scene.packs.is_empty() {
            self.packs = scene.packs;
        }
        Ok(scene.layers.len())
    }

    fn rewrite_selected(
        &mut self,
        editor: &mut dyn Editor,
        change: impl FnOnce(&mut LayerKind),
    ) -> Result<bool, LayerError> {
        let Some(before) = self.selected.and_then(|o| editor.layers().get(o).cloned()) else { return Ok(false) };
        let mut after = before.clone();
        change(&mut after.kind);
        self.perform(editor, Action::Rewrite { before, after })?;
        Ok(true)
    }

    /// Scales the selected layer's radius (and, for a crater, its depth and
    /// rim, so its shape holds).
    pub fn resize_selected(&mut self, editor: &mut dyn Editor, factor: f64) -> Result<bool, LayerError> {
        self.rewrite_selected(editor, |kind| match kind {
            LayerKind::Crater { radius_m, depth_m, rim_m, .. } => {
                *radius_m *= factor;
                *depth_m *= factor;
                *rim_m *= factor;
            }
            LayerKind::Flatten { radius_m, blend_m, .. } => {
                *radius_m *= factor;
                *blend_m *= factor;
            }
            LayerKind::Raise { radius_m, .. } => *radius_m *= factor,
            LayerKind::PolygonFlatten { blend_m, .. } => *blend_m *= factor,
        })
    }

    pub fn move_selected(&mut self, editor: &mut dyn Editor, to_lat: f64, to_lon: f64) -> Result<bool, LayerError> {
        self.rewrite_selected(editor, |kind| match kind {
            LayerKind::Crater { lat, lon, .. }
            | LayerKind::Flatten { lat, lon, .. }
            | LayerKind::Raise { lat, lon, .. } => {
                *lat = to_lat;
                *lon = to_lon;
            }
            LayerKind::PolygonFlatten { vertices, .. } => {
                let n = vertices.len().max(1) as f64;
                let (clat, clon) = vertices.iter().fold((0.0, 0.0), |(a, b), v| (a + v.0 / n, b + v.1 / n));
                for v in vertices.iter_mut() {
                    *v = (v.0 - clat + to_lat, v.1 - clon + to_lon);
                }
            }
        })
    }

    pub fn delete_selected(&mut self, editor: &mut dyn Editor) -> Result<bool, LayerError> {
        let Some(layer) = self.selected.and_then(|o| editor.layers().get(o).cloned()) else { return Ok(false) };
        self.perform(editor, Action::Remove(layer))?;
        self.selected = None;
        Ok(true)
    }

    /// Selects the layer nearest a point, within three of its radii.
    pub fn select_near(&mut self, editor: &dyn Editor, lat: f64, lon: f64) -> Option<u32> {
        let distance = |a: (f64, f64), b: (f64, f64)| {
            let (p, q) = (a.0.to_radians(), b.0.to_radians());
            let h = ((q - p) / 2.0).sin().powi(2) + p.cos() * q.cos() * ((b.1 - a.1).to_radians() / 2.0).sin().powi(2);
            2.0 * 6_371_000.0 * h.sqrt().asin()
        };
        self.selected = editor
            .layers()
            .layers()
            .filter_map(|l| centre(&l.kind).map(|(a, b, r)| (l.order, distance((a, b), (lat, lon)), r)))
            .filter(|&(_, d, r)| d <= 3.0 * r)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(order, _, _)| order);
        self.selected
    }

    /// Selects the next layer in order (wrapping), for keyboard selection.
    pub fn select_next(&mut self, editor: &dyn Editor) -> Option<u32> {
        let orders: Vec<u32> = editor.layers().layers().map(|l| l.order).collect();
        self.selected = match self.selected {
            Some(s) => orders.iter().copied().find(|&o| o > s).or(orders.first().copied()),
            None => orders.first().copied(),
        };
        self.selected
    }

    pub fn undo(&mut self, editor: &mut dyn Editor) -> Result<bool, LayerError> {
        let Some(action) = self.undo.pop() else { return Ok(false) };
        action.inverse().run(editor)?;
        self.redo.push(action);
        self.selected = None;
        Ok(true)
    }

    pub fn redo(&mut self, editor: &mut dyn Editor) -> Result<bool, LayerError> {
        let Some(action) = self.redo.pop() else { return Ok(false) };
        action.run(editor)?;
        self.undo.push(action);
        Ok(true)
    }

    /// Loads a scene's layers into the editor (not undoable: it is the start).
    pub fn load(&mut self, editor: &mut dyn Editor, path: &Path, body: &str) -> Result<()> {
        let (scene, _) = planet_cli::scene::load_scene(path, body)?;
        editor
            .apply(&mut |stack, e| {
                for layer in &scene.layers {
                    stack.insert(e, layer.clone())?;
                }
                Ok(())
            })
            .with_context(|| format!("scene {}", path.display()))?;
        if self.packs.is_empty() {
            self.packs = scene.packs;
        }
        Ok(())
    }

    /// Writes the layers as a scene (temporary file, then rename).
    pub fn save(&self, editor: &dyn Editor, body: &str) -> Result<PathBuf> {
        let path = self.scene_file.clone().unwrap_or_else(|| PathBuf::from("scene.json"));
        self.save_to(editor, &path, body)?;
        Ok(path)
    }

    /// Writes the layers as a scene at `path`.
    pub fn save_to(&self, editor: &dyn Editor, path: &Path, body: &str) -> Result<()> {
        // An empty field said "writing : No such file or directory".
        if path.as_os_str().is_empty() {
            anyhow::bail!("no scene path: type one in the Scene field (e.g. scene.json), or start with --scene FILE");
        }
        if let Some(problem) = planet_cli::fs::unwritable_destination("the scene path", path) {
            anyhow::bail!(problem);
        }
        let mut scene = Scene::new(body);
        scene.packs = self.packs.clone();
        scene.layers = editor.layers().layers().cloned().collect();
        planet_cli::fs::write_atomic(path, scene.to_json().as_bytes())?;
        Ok(())
    }

    /// One status line about the selection (the panels show it).
    pub fn describe(&self, editor: &dyn Editor) -> String {
        let count = editor.layers().len();
        match self.selected.and_then(|o| editor.layers().get(o)) {
            Some(layer) => {
                let (name, radius) = match &layer.kind {
                    LayerKind::Crater { radius_m, .. } => ("CRATER", *radius_m),
                    LayerKind::Flatten { radius_m, .. } => ("PAD", *radius_m),
                    LayerKind::Raise { radius_m, .. } => ("RAISE", *radius_m),
                    LayerKind::PolygonFlatten { blend_m, .. } => ("POLYGON", *blend_m),
                };
                format!("LAYER {} {name} R {radius:.0} M ({count})", layer.order)
            }
            None => format!("LAYERS {count}  [K] CRATER [P] PAD"),
        }
    }
}

/// A bare stack for tests: the real `LayerStack`, without a renderer.
#[cfg(test)]
pub(crate) mod bare {
    use super::*;
    use planet_terrain::geo::body::Body;

    pub(crate) struct Stack {
        pub(crate) layers: LayerStack,
        pub(crate) ellipsoid: Ellipsoid,
        pub(crate) journaled: usize,
    }

    impl Editor for Stack {
        fn layers(&self) -> &LayerStack {
            &self.layers
        }

        fn apply(
            &mut self,
            change: &mut dyn FnMut(&mut LayerStack, &Ellipsoid) -> Result<(), LayerError>,
        ) -> Result<(), LayerError> {
            change(&mut self.layers, &self.ellipsoid)?;
            self.journaled += self.layers.drain_journal().len();
            Ok(())
        }
    }

    pub(crate) fn stack() -> Stack {
        Stack { layers: LayerStack::new(), ellipsoid: *Body::earth().ellipsoid(), journaled: 0 }
    }

    pub(crate) fn snapshot(s: &Stack) -> Vec<Layer> {
        s.layers.layers().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::bare::{snapshot, stack};
    use super::*;

    #[test]
    fn every_action_undoes_and_redoes_exactly() {
        let mut s = stack();
        let mut a = Authoring::default();
        let empty = snapshot(&s);
        a.place_crater(&mut s, 46.0, 8.0, 2000.0).unwrap();
        let one = snapshot(&s);
        a.place_pad(&mut s, 46.1, 8.1, 500.0).unwrap();
        let two = snapshot(&s);
        a.resize_selected(&mut s, 2.0).unwrap();
        let resized = snapshot(&s);
        a.move_selected(&mut s, 46.2, 8.2).unwrap();
        let moved = snapshot(&s);
        a.delete_selected(&mut s).unwrap();
        let deleted = snapshot(&s);
        assert_eq!(deleted, one);
        for expected in [&moved, &resized, &two, &one, &empty] {
            assert!(a.undo(&mut s).unwrap());
            assert_eq!(&snapshot(&s), expected);
        }
        assert!(!a.undo(&mut s).unwrap(), "nothing left to undo");
        for expected in [&one, &two, &resized, &moved, &deleted] {
            assert!(a.redo(&mut s).unwrap());
            assert_eq!(&snapshot(&s), expected);
        }
        // Every mutation, undo and redo journaled at least one footprint.
        assert!(s.journaled >= 15, "{} footprints", s.journaled);
    }

    /// Issue #32: saving with an empty scene path said "not saved: writing
    /// : No such file or directory".
    #[test]
    fn a_scene_path_that_cannot_be_written_says_what_to_do() {
        let s = stack();
        let a = Authoring::default();
        let empty = a.save_to(&s, Path::new(""), "earth").unwrap_err().to_string();
        assert!(empty.contains("type one in the Scene field"), "{empty}");
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-such-dir").join("scene.json");
        let missing = a.save_to(&s, &missing, "earth").unwrap_err().to_string();
        assert!(missing.contains("does not exist; create it first"), "{missing}");
        let mut s = stack();
        let mut a = Authoring::default();
        let empty = a.load_replacing(&mut s, Path::new(""), "earth").unwrap_err().to_string();
        assert!(empty.contains("type the scene file to load"), "{empty}");
    }

    #[test]
    fn swap_delete_rewrite_and_load_each_undo_as_one_step() {
        let mut s = stack();
        let mut a = Authoring::default();
        let crater = a.place_crater(&mut s, 1.0, 1.0, 100.0).unwrap();
        let pad = a.place_pad(&mut s, 1.1, 1.0, 100.0).unwrap();
        let two = snapshot(&s);
        a.swap(&mut s, crater, pad).unwrap();
        assert!(matches!(s.layers.get(pad).unwrap().kind, LayerKind::Crater { .. }), "the crater now applies last");
        assert_eq!(a.selected, Some(crater), "the selection follows the pad to its new order");
        let raise = LayerKind::Raise { lat: 1.0, lon: 1.0, radius_m: 50.0, amount_m: -5.0 };
        a.rewrite(&mut s, pad, raise.clone(), false).unwrap();
        let first = LayerKind::Raise { lat: 1.0, lon: 1.0, radius_m: 60.0, amount_m: -5.0 };
        a.rewrite(&mut s, pad, first, true).unwrap();
        a.delete(&mut s, crater).unwrap();
        assert_eq!(s.layers.len(), 1);
        a.undo(&mut s).unwrap();
        a.undo(&mut s).unwrap();
        assert!(matches!(s.layers.get(pad).unwrap().kind, LayerKind::Crater { .. }), "one undo for a merged drag");
        a.undo(&mut s).unwrap();
        assert_eq!(snapshot(&s), two);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.json");
        let mut other = stack();
        Authoring::default().add(&mut other, raise).unwrap();
        Authoring::default().save_to(&other, &path, "earth").unwrap();
        assert_eq!(a.load_replacing(&mut s, &path, "earth").unwrap(), 1);
        assert_eq!(snapshot(&s), snapshot(&other));
        a.undo(&mut s).unwrap();
        assert_eq!(snapshot(&s), two, "loading undoes as one step");
    }

    #[test]
    fn a_new_action_clears_redo_and_orders_stay_unique() {
        let mut s = stack();
        let mut a = Authoring::default();
        a.place_crater(&mut s, 0.0, 0.0, 100.0).unwrap();
        a.place_crater(&mut s, 0.0, 0.1, 100.0).unwrap();
        a.undo(&mut s).unwrap();
        a.place_pad(&mut s, 0.0, 0.2, 100.0).unwrap();
        assert!(!a.redo(&mut s).unwrap(), "redo is gone once something new happened");
        let orders: Vec<u32> = s.layers.layers().map(|l| l.order).collect();
        assert_eq!(orders, vec![1, 2]);
    }

    #[test]
    fn selection_finds_the_nearest_layer_and_saving_round_trips() {
        let mut s = stack();
        let mut a = Authoring::default();
        a.place_crater(&mut s, 10.0, 10.0, 1000.0).unwrap();
        a.place_pad(&mut s, 10.05, 10.0, 1000.0).unwrap();
        assert_eq!(a.select_near(&s, 10.001, 10.0), Some(1));
        assert_eq!(a.select_near(&s, 10.049, 10.0), Some(2));
        assert_eq!(a.select_near(&s, 30.0, 10.0), None, "nothing within reach");
        let dir = tempfile::tempdir().unwrap();
        a.scene_file = Some(dir.path().join("scene.json"));
        a.packs = vec!["packs/earth.planetpack".into(), "packs/sierra.planetpack".into()];
        let saved = a.save(&s, "earth").unwrap();
        let mut t = stack();
        let mut b = Authoring::default();
        b.load(&mut t, &saved, "earth").unwrap();
        assert_eq!(snapshot(&t), snapshot(&s));
        assert_eq!(b.packs, ["packs/earth.planetpack", "packs/sierra.planetpack"], "the whole stack");
        let wrong = Authoring::default().load(&mut stack(), &saved, "mars").unwrap_err();
        assert!(format!("{wrong:#}").contains("not 'mars'"), "{wrong:#}");
    }
}
