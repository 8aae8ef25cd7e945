//! Pictures the tools write: an RGB raster, the palettes that colour the
//! ground, the legend strip drawn into the picture, and PNG output.
//!
//! The key decision: a legend is pixels in the same PNG, drawn with the
//! built-in font ([`crate::font`]), not a caption beside it, so a picture
//! pasted into an issue or a report still says what its colours mean. PNGs
//! go through [`crate::fs::write_atomic`], so a failed or killed write never
//! leaves half a picture at the path.

use std::path::Path;

use anyhow::Result;

use crate::font::{GLYPH_H, GLYPH_W, glyph};

/// The legend strip: light text on a dark ground, whatever the map's colours.
pub const LEGEND_BACKGROUND: [u8; 3] = [24, 26, 30];
const LEGEND_TEXT: [u8; 3] = [235, 240, 245];

/// An 8-bit RGB raster, rows top first.
#[derive(Clone, Debug, PartialEq)]
pub struct Picture {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

impl Picture {
    pub fn new(width: u32, height: u32, fill: [u8; 3]) -> Picture {
        Picture { width, height, rgb: fill.repeat(width as usize * height as usize) }
    }

    pub fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        let k = 3 * (y as usize * self.width as usize + x as usize);
        [self.rgb[k], self.rgb[k + 1], self.rgb[k + 2]]
    }

    /// Sets a pixel; one outside the picture is dropped, so text and bars
    /// clip at the edge of a narrow map instead of failing.
    pub fn put(&mut self, x: i64, y: i64, colour: [u8; 3]) {
        if (0..i64::from(self.width)).contains(&x) && (0..i64::from(self.height)).contains(&y) {
            let k = 3 * (y as usize * self.width as usize + x as usize);
            self.rgb[k..k + 3].copy_from_slice(&colour);
        }
    }

    fn fill(&mut self, x: i64, y: i64, w: i64, h: i64, colour: [u8; 3]) {
        for yy in y..y + h {
            for xx in x..x + w {
                self.put(xx, yy, colour);
            }
        }
    }

    /// Draws `text` with its top-left corner at (x, y), `scale` pixels per
    /// font pixel.
    pub fn text(&mut self, x: i64, y: i64, scale: i64, text: &str, colour: [u8; 3]) {
        for (n, c) in text.chars().enumerate() {
            let left = x + n as i64 * text_advance(scale);
            for (gy, bits) in glyph(c).iter().enumerate() {
                for gx in 0..GLYPH_W {
                    if bits & (0x10 >> gx) != 0 {
                        self.fill(left + gx as i64 * scale, y + gy as i64 * scale, scale, scale, colour);
                    }
                }
            }
        }
    }
}

fn text_advance(scale: i64) -> i64 {
    (GLYPH_W as i64 + 1) * scale
}

fn text_width(text: &str, scale: i64) -> i64 {
    text.chars().count() as i64 * text_advance(scale) - scale
}

/// Encodes `picture` as an 8-bit RGB PNG and writes it atomically.
pub fn write_png(path: &Path, picture: &Picture) -> Result<()> {
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, picture.width, picture.height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&picture.rgb)?;
    writer.finish()?;
    crate::fs::write_atomic(path, &bytes)
}

/// Hypsometric tints: (elevation m, colour). Everything below 0 m is a
/// shade of blue, everything above a land colour, so the coast reads at a
/// glance.
pub const ELEVATION_PALETTE: [(f64, [u8; 3]); 9] = [
    (-8000.0, [8, 24, 74]),
    (-3000.0, [24, 70, 140]),
    (-200.0, [70, 130, 190]),
    (0.0, [140, 190, 220]),
    (1.0, [70, 120, 60]),
    (500.0, [130, 160, 80]),
    (1500.0, [180, 160, 100]),
    (3000.0, [150, 120, 100]),
    (5000.0, [245, 245, 245]),
];

pub fn elevation_colour(h: f64) -> [u8; 3] {
    piecewise(&ELEVATION_PALETTE, h)
}

/// A perceptually even ramp (viridis' stops) for ordered quantities: depth
/// and geometric error.
const RAMP: [(f64, [u8; 3]); 5] =
    [(0.0, [68, 1, 84]), (0.25, [59, 82, 139]), (0.5, [33, 145, 140]), (0.75, [94, 201, 98]), (1.0, [253, 231, 37])];

pub fn ramp_colour(t: f64) -> [u8; 3] {
    piecewise(&RAMP, t)
}

fn piecewise(stops: &[(f64, [u8; 3])], x: f64) -> [u8; 3] {
    if x.is_nan() || x <= stops[0].0 {
        return stops[0].1;
    }
    for pair in stops.windows(2) {
        let ((x0, c0), (x1, c1)) = (pair[0], pair[1]);
        if x <= x1 {
            let t = (x - x0) / (x1 - x0);
            return std::array::from_fn(|k| {
                (f64::from(c0[k]) + t * (f64::from(c1[k]) - f64::from(c0[k]))).round() as u8
            });
        }
    }
    stops[stops.len() - 1].1
}

/// What a legend says.
#[derive(Clone, Debug, PartialEq)]
pub enum Legend {
    /// A continuous colour bar: `colours` sampled evenly from its left end
    /// to its right, and labels at their fraction of the way along.
    Bar { title: String, colours: Vec<[u8; 3]>, ticks: Vec<(f64, String)> },
    /// Named colours.
    Swatches { title: String, items: Vec<([u8; 3], String)> },
}

/// Font scale for a picture this wide: legible on a wide map, still
/// fitting a narrow one.
fn legend_scale(width: u32) -> i64 {
    if width >= 480 { 2 } else { 1 }
}

/// Height of the legend strip under a map `width` pixels wide.
pub fn legend_height(width: u32) -> u32 {
    let s = legend_scale(width);
    // pad, title, gap, bar, gap, tick labels, pad
    (4 * s + GLYPH_H as i64 * s + 3 * s + 8 * s + 3 * s + GLYPH_H as i64 * s + 4 * s) as u32
}

/// Draws `legend` into the strip of `picture` that starts at row `top`.
pub fn draw_legend(picture: &mut Picture, top: u32, legend: &Legend) {
    let s = legend_scale(picture.width);
    let (w, top) = (i64::from(picture.width), i64::from(top));
    picture.fill(0, top, w, i64::from(legend_height(picture.width)), LEGEND_BACKGROUND);
    let pad = 4 * s;
    let title_y = top + pad;
    let bar_y = title_y + GLYPH_H as i64 * s + 3 * s;
    let bar_h = 8 * s;
    let label_y = bar_y + bar_h + 3 * s;
    match legend {
        Legend::Bar { title, colours, ticks } => {
            picture.text(pad, title_y, s, title, LEGEND_TEXT);
            let (left, right) = (pad, (w - pad).max(pad + 1));
            for x in left..right {
                let t = (x - left) as f64 / ((right - left - 1).max(1)) as f64;
                let k = (t * (colours.len().max(1) - 1) as f64).round() as usize;
                picture.fill(x, bar_y, 1, bar_h, colours.get(k).copied().unwrap_or(LEGEND_BACKGROUND));
            }
            for (t, label) in ticks {
                let x = left + (t.clamp(0.0, 1.0) * (right - left - 1) as f64).round() as i64;
                picture.fill(x, bar_y + bar_h - 2 * s, 1, 2 * s + s, LEGEND_TEXT);
                let lw = text_width(label, s);
                let lx = (x - lw / 2).clamp(0, (w - lw).max(0));
                picture.text(lx, label_y, s, label, LEGEND_TEXT);
            }
        }
        Legend::Swatches { title, items } => {
            picture.text(pad, title_y, s, title, LEGEND_TEXT);
            // Swatches run along the bar's row, then wrap to the tick
            // labels' row (a narrow map cut "LAST PATCH (1 IN ALL)" short).
            let rows = [(bar_y, bar_h), (label_y, GLYPH_H as i64 * s)];
            let (mut x, mut row) = (pad, 0);
            for (colour, name) in items {
                let needs = GLYPH_H as i64 * s + 2 * s + text_width(name, s);
                if x > pad && x + needs > w - pad && row + 1 < rows.len() {
                    (x, row) = (pad, row + 1);
                }
                let (y, h) = rows[row];
                picture.fill(x, y, h, h, *colour);
                x += h + 2 * s;
                picture.text(x, y + (h - GLYPH_H as i64 * s) / 2, s, name, LEGEND_TEXT);
                x += text_width(name, s) + 6 * s;
            }
        }
    }
}

/// `colour(t)` at `n` even steps of t over 0..=1, for a [`Legend::Bar`].
pub fn sampled(n: usize, colour: impl Fn(f64) -> [u8; 3]) -> Vec<[u8; 3]> {
    (0..n).map(|k| colour(k as f64 / (n.max(2) - 1) as f64)).collect()
}

/// Metres as a legend writes them: whole metres from 10 m, then two
/// decimals, then scientific (the font has no room for long decimals).
pub fn metres_label(m: f64) -> String {
    if m.abs() >= 10.0 || m == 0.0 {
        format!("{m:.0}")
    } else if m.abs() >= 0.01 {
        format!("{m:.2}")
    } else {
        format!("{m:.1e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (#32): the provenance legend's fourth swatch and its words
    /// ran off a 720-pixel map. Swatches that do not fit wrap to a second row.
    #[test]
    fn swatches_that_do_not_fit_wrap_to_a_second_row() {
        // At this width the four do not fit along one row.
        let width = 240;
        let mut picture = Picture::new(width, legend_height(width), [0, 0, 0]);
        let colours = [[200, 10, 10], [10, 200, 10], [10, 10, 200], [200, 200, 10]];
        let items = colours.iter().zip(["MEASURED", "RESAMPLED", "INVENTED", "LAST PATCH (1 IN ALL)"]);
        let legend =
            Legend::Swatches { title: "PROVENANCE".into(), items: items.map(|(c, n)| (*c, n.to_string())).collect() };
        draw_legend(&mut picture, 0, &legend);
        let rows_with = |colour: [u8; 3]| -> Vec<u32> {
            (0..picture.height).filter(|&y| (0..width).any(|x| picture.pixel(x, y) == colour)).collect()
        };
        let first = rows_with(colours[0]);
        let last = rows_with(colours[3]);
        assert!(!first.is_empty() && !last.is_empty(), "every swatch is drawn");
        assert!(last[0] > *first.last().expect("rows"), "the last one on a row of its own, below the first");
    }

    #[test]
    fn sea_is_blue_and_land_is_not() {
        for h in [-8000.0, -3000.0, -10.0] {
            let [r, g, b] = elevation_colour(h);
            assert!(b > r && b > g, "{h} m: {r},{g},{b}");
        }
        for h in [1.0, 500.0, 2000.0] {
            let [r, g, b] = elevation_colour(h);
            assert!(b < r.max(g), "{h} m: {r},{g},{b}");
        }
    }

    #[test]
    fn text_clips_at_the_edge_and_a_legend_marks_its_strip() {
        let mut picture = Picture::new(40, 60, [0, 0, 0]);
        picture.text(30, 55, 2, "WIDE TEXT", [255, 255, 255]);
        let legend = Legend::Swatches { title: "T".into(), items: vec![([255, 0, 0], "RED".into())] };
        draw_legend(&mut picture, 60 - legend_height(40), &legend);
        let strip = 60 - legend_height(40);
        assert_eq!(picture.pixel(0, strip), LEGEND_BACKGROUND);
        assert!((strip..60).any(|y| (0..40).any(|x| picture.pixel(x, y) == [255, 0, 0])));
        assert_eq!(metres_label(1234.4), "1234");
        assert_eq!(metres_label(0.5), "0.50");
    }
}
