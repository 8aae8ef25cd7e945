//! The layers panel: every layer of the stack with its kind and order;
//! add any kind the stack knows, reorder, delete, edit parameters by value,
//! undo and redo, save and load a scene by path.
//!
//! The key decision: every change goes through `Authoring`'s reversible
//! actions, the same ones the keyboard uses, so the panel and the keys
//! share one undo history and the renderer re-stages exactly the tiles an
//! edit touched. A slider dragged over many frames is one undo step
//! (`Authoring::rewrite` with `merge`).

use std::collections::HashMap;
use std::path::PathBuf;

use planet_render::egui;
use planet_terrain::layers::{LayerKind, Target};

use super::{LayerEdit, named_slider};

/// The kinds a new layer can be.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NewKind {
    #[default]
    Crater,
    Pad,
    Raise,
    Polygon,
}

impl NewKind {
    pub const ALL: [NewKind; 4] = [NewKind::Crater, NewKind::Pad, NewKind::Raise, NewKind::Polygon];

    pub fn label(self) -> &'static str {
        match self {
            NewKind::Crater => "crater",
            NewKind::Pad => "pad",
            NewKind::Raise => "raise/lower",
            NewKind::Polygon => "polygon pad",
        }
    }

    /// A layer of this kind at a latitude/longitude, a kilometre across.
    pub fn at(self, lat: f64, lon: f64) -> LayerKind {
        match self {
            NewKind::Crater => LayerKind::Crater { lat, lon, radius_m: 1000.0, depth_m: 200.0, rim_m: 50.0 },
            NewKind::Pad => {
                LayerKind::Flatten { lat, lon, radius_m: 500.0, target: Target::FootprintMean, blend_m: 250.0 }
            }
            NewKind::Raise => LayerKind::Raise { lat, lon, radius_m: 1000.0, amount_m: 100.0 },
            NewKind::Polygon => {
                let d = 0.005;
                let vertices = vec![(lat - d, lon - d), (lat - d, lon + d), (lat + d, lon + d), (lat + d, lon - d)];
                LayerKind::PolygonFlatten { vertices, elevation_m: 0.0, blend_m: 200.0 }
            }
        }
    }
}

pub fn kind_name(kind: &LayerKind) -> &'static str {
    match kind {
        LayerKind::Crater { .. } => "crater",
        LayerKind::Flatten { .. } => "pad",
        LayerKind::Raise { amount_m, .. } if *amount_m < 0.0 => "lower",
        LayerKind::Raise { .. } => "raise",
        LayerKind::PolygonFlatten { .. } => "polygon pad",
    }
}

#[derive(Debug, Default)]
pub struct LayersState {
    pub new_kind: NewKind,
    pub path: String,
    pub message: Option<String>,
}

impl LayersState {
    pub fn show(
        &mut self,
        ui: &mut egui::Ui,
        edit: &mut LayerEdit<'_>,
        aim: (f64, f64),
        rects: &mut HashMap<&'static str, egui::Rect>,
    ) {
        if self.path.is_empty()
            && let Some(file) = &edit.authoring.scene_file
        {
            self.path = file.display().to_string();
        }
        // Rows wrap rather than run past the edge of a narrow panel.
        ui.horizontal_wrapped(|ui| {
            egui::ComboBox::from_id_salt("new kind").selected_text(self.new_kind.label()).show_ui(ui, |ui| {
                for kind in NewKind::ALL {
                    ui.selectable_value(&mut self.new_kind, kind, kind.label());
                }
            });
            let add = ui.button("Add here");
            rects.insert("layers.add", add.rect);
            if add.clicked() {
                let result = edit.authoring.add(edit.editor, self.new_kind.at(aim.0, aim.1));
                self.say(result.map(|o| format!("added layer {o}")));
            }
        });
        ui.horizontal_wrapped(|ui| {
            let undo = ui.button("Undo");
            rects.insert("layers.undo", undo.rect);
            if undo.clicked() {
                let result = edit.authoring.undo(edit.editor);
                self.say(result.map(|done| if done { "undone" } else { "nothing to undo" }.to_string()));
            }
            if ui.button("Redo").clicked() {
                let result = edit.authoring.redo(edit.editor);
                self.say(result.map(|done| if done { "redone" } else { "nothing to redo" }.to_string()));
            }
        });
        self.list(ui, edit, rects);
        match edit.authoring.selected {
            Some(order) => self.parameters(ui, edit, order, rects),
            None if !edit.editor.layers().is_empty() => {
                ui.label("select a layer (click, or N) to edit it");
            }
            None => {}
        }
        ui.separator();
        ui.horizontal(|ui| {
            ui.label("Scene");
            // The field takes what the label leaves of the panel's width.
            let field = ui.add(egui::TextEdit::singleline(&mut self.path).desired_width(ui.available_width()));
            rects.insert("layers.path", field.rect);
        });
        ui.horizontal_wrapped(|ui| {
            let path = PathBuf::from(self.path.trim());
            let save = ui.button("Save");
            rects.insert("layers.save", save.rect);
            if save.clicked() {
                let result = edit.authoring.save_to(edit.editor, &path, edit.body);
                self.message = Some(match result {
                    Ok(()) => format!("saved {}", path.display()),
                    Err(e) => format!("not saved: {e:#}"),
                });
            }
            let load = ui.button("Load");
            rects.insert("layers.load", load.rect);
            if load.clicked() {
                let result = edit.authoring.load_replacing(edit.editor, &path, edit.body);
                self.message = Some(match result {
                    Ok(n) => format!("loaded {n} layers from {}", path.display()),
                    Err(e) => format!("not loaded: {e:#}"),
                });
            }
        });
        if let Some(message) = &self.message {
            ui.label(message);
        }
    }

    fn say(&mut self, result: Result<String, planet_terrain::layers::LayerError>) {
        self.message = Some(result.unwrap_or_else(|e| format!("refused: {e}")));
    }

    /// One row per layer, in the order they apply: select, move, delete.
    fn list(&mut self, ui: &mut egui::Ui, edit: &mut LayerEdit<'_>, rects: &mut HashMap<&'static str, egui::Rect>) {
        let rows: Vec<(u32, &'static str)> =
            edit.editor.layers().layers().map(|l| (l.order, kind_name(&l.kind))).collect();
        if rows.is_empty() {
            ui.label("no layers");
        }
        for (k, &(order, name)) in rows.iter().enumerate() {
            ui.horizontal_wrapped(|ui| {
                let selected = edit.authoring.selected == Some(order);
                let row = ui.selectable_label(selected, format!("{order}: {name}"));
                if k == 0 {
                    rects.insert("layers.row0", row.rect);
                }
                if row.clicked() {
                    edit.authoring.selected = Some(order);
                }
                let up = ui.add_enabled(k > 0, egui::Button::new("up"));
                let down = ui.add_enabled(k + 1 < rows.len(), egui::Button::new("down"));
                let delete = ui.button("delete");
                if k == 0 {
                    rects.insert("layers.row0.down", down.rect);
                    rects.insert("layers.row0.delete", delete.rect);
                }
                if up.clicked() {
                    let result = edit.authoring.swap(edit.editor, order, rows[k - 1].0);
                    self.say(result.map(|()| format!("layer {order} moved down the stack")));
                }
                if down.clicked() {
                    let result = edit.authoring.swap(edit.editor, order, rows[k + 1].0);
                    self.say(result.map(|()| format!("layer {order} moved up the stack")));
                }
                if delete.clicked() {
                    let result = edit.authoring.delete(edit.editor, order);
                    self.say(result.map(|()| format!("deleted layer {order}")));
                }
            });
        }
    }

    /// The selected layer's parameters, editable by value.
    fn parameters(
        &mut self,
        ui: &mut egui::Ui,
        edit: &mut LayerEdit<'_>,
        order: u32,
        rects: &mut HashMap<&'static str, egui::Rect>,
    ) {
        let Some(layer) = edit.editor.layers().get(order) else { return };
        let mut kind = layer.kind.clone();
        ui.label(format!("Layer {order}: {}", kind_name(&kind)));
        let mut responses = Vec::new();
        match &mut kind {
            LayerKind::Crater { lat, lon, radius_m, depth_m, rim_m } => {
                responses.push(ui.horizontal_wrapped(|ui| ui.add(degrees(lat)) | ui.add(degrees(lon))).inner);
                let r = named_slider(ui, "radius, m", radius(radius_m));
                rects.insert("layers.radius", r.rect);
                responses.push(r);
                responses.push(named_slider(ui, "depth, m", height(depth_m)));
                responses.push(named_slider(ui, "rim, m", height(rim_m)));
            }
            LayerKind::Flatten { lat, lon, radius_m, target, blend_m } => {
                responses.push(ui.horizontal_wrapped(|ui| ui.add(degrees(lat)) | ui.add(degrees(lon))).inner);
                let r = named_slider(ui, "radius, m", radius(radius_m));
                rects.insert("layers.radius", r.rect);
                responses.push(r);
                responses.push(named_slider(ui, "blend, m", radius(blend_m)));
                let mut mean = *target == Target::FootprintMean;
                responses.push(ui.checkbox(&mut mean, "to the mean of the ground beneath"));
                let mut elevation = match *target {
                    Target::Elevation(e) => e,
                    Target::FootprintMean => 0.0,
                };
                let elevation_slider = |ui: &mut egui::Ui| named_slider(ui, "elevation, m", height(&mut elevation));
                responses.push(ui.add_enabled_ui(!mean, elevation_slider).inner);
                *target = if mean { Target::FootprintMean } else { Target::Elevation(elevation) };
            }
            LayerKind::Raise { lat, lon, radius_m, amount_m } => {
                responses.push(ui.horizontal_wrapped(|ui| ui.add(degrees(lat)) | ui.add(degrees(lon))).inner);
                let r = named_slider(ui, "radius, m", radius(radius_m));
                rects.insert("layers.radius", r.rect);
                responses.push(r);
                responses.push(named_slider(ui, "raise (lower < 0), m", height(amount_m)));
            }
            LayerKind::PolygonFlatten { vertices, elevation_m, blend_m } => {
                for (k, (lat, lon)) in vertices.iter_mut().enumerate() {
                    let row = ui.horizontal_wrapped(|ui| {
                        ui.label(format!("{k}")) | ui.add(degrees(lat)) | ui.add(degrees(lon))
                    });
                    responses.push(row.inner);
                }
                responses.push(named_slider(ui, "elevation, m", height(elevation_m)));
                responses.push(named_slider(ui, "blend, m", radius(blend_m)));
            }
        }
        if responses.iter().any(egui::Response::changed) {
            let merge = responses.iter().any(|r| r.dragged() && !r.drag_started());
            if let Err(e) = edit.authoring.rewrite(edit.editor, order, kind, merge) {
                self.message = Some(format!("refused: {e}"));
            }
        }
    }
}

fn radius(v: &mut f64) -> egui::Slider<'_> {
    egui::Slider::new(v, 1.0..=200_000.0).logarithmic(true)
}

fn height(v: &mut f64) -> egui::Slider<'_> {
    egui::Slider::new(v, -5000.0..=5000.0)
}

fn degrees(v: &mut f64) -> egui::DragValue<'_> {
    egui::DragValue::new(v).speed(0.0005).max_decimals(5).suffix("°")
}
