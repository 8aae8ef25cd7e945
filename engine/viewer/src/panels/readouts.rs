//! The camera, frame-statistics and view-settings panels.
//!
//! The key decision: the frame-time graph is drawn with egui's painter
//! (two polylines over a fixed scale that grows to the worst frame shown),
//! not a plotting crate: it is a hundred points, and a plot widget would be
//! a second UI dependency for one picture.

use std::collections::{HashMap, VecDeque};

use planet_render::egui;

use super::{Readout, ViewControls};

fn metres(m: f64) -> String {
    if m.abs() >= 100_000.0 { format!("{:.1} km", m / 1000.0) } else { format!("{m:.1} m") }
}

fn hemisphere(v: f64, pos: char, neg: char) -> String {
    format!("{:.5}° {}", v.abs(), if v >= 0.0 { pos } else { neg })
}

pub(super) fn camera(ui: &mut egui::Ui, r: &Readout) {
    egui::Grid::new("camera").num_columns(2).show(ui, |ui| {
        let rows = [
            ("Body", r.body.clone()),
            ("Latitude", hemisphere(r.lat, 'N', 'S')),
            ("Longitude", hemisphere(r.lon, 'E', 'W')),
            ("Above ellipsoid", metres(r.alt)),
            ("Above ground", metres(r.above_ground)),
            ("Speed", format!("{}/s", metres(r.speed))),
            ("Mode", r.mode.clone()),
            ("Clock", r.clock.clone()),
        ];
        for (name, value) in rows {
            ui.label(name);
            // Long values (the clock line) wrap inside the panel's fixed width.
            ui.add(egui::Label::new(value).wrap());
            ui.end_row();
        }
    });
}

pub(super) fn frame(ui: &mut egui::Ui, r: &Readout, history: &VecDeque<(f64, Option<f64>)>) {
    let gpu = r.gpu_ms.map_or("-".to_string(), |g| format!("{g:.1} ms"));
    ui.label(format!("CPU {:.1} ms   GPU {gpu}", r.cpu_ms));
    graph(ui, history);
    egui::Grid::new("frame").num_columns(2).show(ui, |ui| {
        let rows = [
            ("Nodes", format!("{} selected, {} drawn", r.nodes_selected, r.nodes_drawn)),
            ("Error", format!("{:.2} px", r.error_px)),
            ("Slots", r.slots.to_string()),
            ("Uploads", format!("{} ({} pending)", r.uploads, r.pending)),
            ("No data", r.no_data_share.map_or("-".to_string(), |s| format!("{:.1}% of the picture", 100.0 * s))),
            ("Under the cursor", r.cursor.clone().unwrap_or_else(|| "-".to_string()).to_lowercase()),
        ];
        for (name, value) in rows {
            ui.label(name);
            // Long values (the clock line) wrap inside the panel's fixed width.
            ui.add(egui::Label::new(value).wrap());
            ui.end_row();
        }
    });
}

const CPU_COLOUR: egui::Color32 = egui::Color32::from_rgb(120, 200, 255);
const GPU_COLOUR: egui::Color32 = egui::Color32::from_rgb(255, 170, 80);

/// CPU (blue) and GPU (orange) milliseconds per frame, newest at the right.
fn graph(ui: &mut egui::Ui, history: &VecDeque<(f64, Option<f64>)>) {
    let size = egui::vec2(ui.available_width().min(280.0), 48.0);
    let (rect, _) = ui.allocate_exact_size(size, egui::Sense::hover());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 2.0, egui::Color32::from_black_alpha(120));
    let worst = history.iter().map(|(c, g)| c.max(g.unwrap_or(0.0))).fold(16.7, f64::max);
    let point = |k: usize, ms: f64| {
        let x = rect.right() - (history.len() - 1 - k) as f32 * rect.width() / (super::HISTORY - 1) as f32;
        egui::pos2(x, rect.bottom() - (ms / worst) as f32 * rect.height())
    };
    let cpu: Vec<egui::Pos2> = history.iter().enumerate().map(|(k, (c, _))| point(k, *c)).collect();
    let gpu: Vec<egui::Pos2> = history.iter().enumerate().filter_map(|(k, (_, g))| g.map(|g| point(k, g))).collect();
    painter.add(egui::Shape::line(cpu, egui::Stroke::new(1.5, CPU_COLOUR)));
    painter.add(egui::Shape::line(gpu, egui::Stroke::new(1.5, GPU_COLOUR)));
    painter.text(
        rect.left_top() + egui::vec2(4.0, 2.0),
        egui::Align2::LEFT_TOP,
        format!("{worst:.0} ms"),
        egui::FontId::monospace(10.0),
        egui::Color32::LIGHT_GRAY,
    );
}

pub(super) fn view(ui: &mut egui::Ui, v: &mut ViewControls, rects: &mut HashMap<&'static str, egui::Rect>) {
    let error = egui::Slider::new(&mut v.error_px, 0.25..=16.0).logarithmic(true);
    let error = super::named_slider(ui, "error target, px", error);
    rects.insert("view.error", error.rect);
    let max = v.max_budget.max(6);
    let budget = super::named_slider(ui, "node budget", egui::Slider::new(&mut v.budget, 6..=max).logarithmic(true));
    rects.insert("view.budget", budget.rect);
    ui.add_enabled(v.wireframe_supported, egui::Checkbox::new(&mut v.wireframe, "wireframe [T]"));
    let freeze = ui.checkbox(&mut v.frozen, "freeze the cut [C]");
    rects.insert("view.freeze", freeze.rect);
    ui.horizontal_wrapped(|ui| {
        ui.label("time");
        let labels = v.rate_labels.clone();
        egui::ComboBox::from_id_salt("rate")
            .selected_text(labels.get(v.time_rate).cloned().unwrap_or_default())
            .show_ui(ui, |ui| {
                for (k, label) in labels.iter().enumerate() {
                    ui.selectable_value(&mut v.time_rate, k, label);
                }
            });
    });
    ui.checkbox(&mut v.time_paused, "time paused [/]");
}
