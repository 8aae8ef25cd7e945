//! The HUD: lines of text rasterised on the host into an RGBA overlay that
//! the renderer blends over the frame's top-left corner.
//!
//! The key decision: a built-in 5x7 bitmap font and host rasterisation, so
//! the HUD needs no font files, no text-shaping crate and no second GPU
//! pipeline layout; the overlay is a few hundred KB uploaded with the
//! frame's tiles.

use planet_cli::font::{GLYPH_H, GLYPH_W, glyph};
use planet_render::{HUD_BYTES, HUD_SIZE};
use planet_terrain::camera::{Instant, local_solar_time_hours};
use planet_terrain::geo::body::Body;

/// Pixels per font pixel.
const SCALE: usize = 2;
const ADVANCE: usize = (GLYPH_W + 1) * SCALE;
const LINE: usize = (GLYPH_H + 2) * SCALE;
const MARGIN: usize = 6;

/// Characters per line and lines that fit the overlay.
pub const COLUMNS: usize = (HUD_SIZE.0 as usize - 2 * MARGIN) / ADVANCE;
pub const ROWS: usize = (HUD_SIZE.1 as usize - 2 * MARGIN) / LINE;
// Room for the viewer's eleven lines (nine of figures, the clock, the
// status) of up to 38 characters.
const _: () = assert!(COLUMNS >= 38 && ROWS >= 11);

/// The clock line: the instant drawn, UTC, and the local apparent solar
/// time at the point under the camera (`longitude_deg`).
pub fn clock_line(body: &Body, at: Instant, longitude_deg: f64) -> String {
    let utc = at.to_string().replace('T', " ").replace('Z', "");
    let solar = local_solar_time_hours(body, at, longitude_deg);
    let minutes = (solar * 60.0).floor() as u32 % (24 * 60);
    format!("UTC {utc}  SUN {:02}:{:02}", minutes / 60, minutes % 60)
}

/// Rasterises `lines` (at most `ROWS`, each cut to `COLUMNS`) as white
/// text on a translucent dark panel sized to the text.
pub fn overlay(lines: &[String]) -> Vec<u8> {
    let (width, height) = (HUD_SIZE.0 as usize, HUD_SIZE.1 as usize);
    let mut pixels = vec![0u8; HUD_BYTES];
    let shown: Vec<&str> = lines.iter().take(ROWS).map(|l| &l[..l.len().min(COLUMNS)]).collect();
    let longest = shown.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let panel_w = (2 * MARGIN + longest * ADVANCE).min(width);
    let panel_h = (2 * MARGIN + shown.len() * LINE).min(height);
    for y in 0..panel_h {
        for x in 0..panel_w {
            let k = 4 * (y * width + x);
            pixels[k..k + 4].copy_from_slice(&[10, 14, 20, 150]);
        }
    }
    for (row, line) in shown.iter().enumerate() {
        for (column, c) in line.chars().enumerate() {
            let rows = glyph(c);
            for (gy, bits) in rows.iter().enumerate() {
                for gx in 0..GLYPH_W {
                    if bits & (0x10 >> gx) == 0 {
                        continue;
                    }
                    for sy in 0..SCALE {
                        for sx in 0..SCALE {
                            let x = MARGIN + column * ADVANCE + gx * SCALE + sx;
                            let y = MARGIN + row * LINE + gy * SCALE + sy;
                            let k = 4 * (y * width + x);
                            pixels[k..k + 4].copy_from_slice(&[235, 240, 245, 255]);
                        }
                    }
                }
            }
        }
    }
    pixels
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(pixels: &[u8], x: usize, y: usize) -> bool {
        pixels[4 * (y * HUD_SIZE.0 as usize + x)] > 200
    }

    #[test]
    fn the_clock_line_shows_utc_and_local_solar_time() {
        let at = Instant::parse_rfc3339("2026-06-21T06:00:00Z").unwrap();
        let line = clock_line(&Body::earth(), at, 90.0);
        assert!(line.starts_with("UTC 2026-06-21 06:00:00  SUN "), "{line}");
        // Six hours east of Greenwich at 06:00 UTC: near noon (the equation
        // of time is under two minutes in late June).
        assert!(line.ends_with("SUN 11:58") || line.ends_with("SUN 11:59"), "{line}");
        assert!(line.len() <= COLUMNS, "{line}");
    }

    #[test]
    fn a_glyph_lands_where_its_bits_say() {
        let pixels = overlay(&["T".to_string()]);
        // T: the whole top row, then the middle column.
        for gx in 0..GLYPH_W {
            assert!(lit(&pixels, MARGIN + gx * SCALE, MARGIN), "top bar at {gx}");
        }
        assert!(lit(&pixels, MARGIN + 2 * SCALE, MARGIN + 6 * SCALE));
        assert!(!lit(&pixels, MARGIN, MARGIN + 6 * SCALE));
    }

    #[test]
    fn the_panel_fits_the_text_and_the_rest_stays_clear() {
        let pixels = overlay(&["AB".to_string(), "C".to_string()]);
        let alpha = |x: usize, y: usize| pixels[4 * (y * HUD_SIZE.0 as usize + x) + 3];
        assert!(alpha(1, 1) > 0);
        let right = 2 * MARGIN + 2 * ADVANCE;
        assert_eq!(alpha(right + 1, 1), 0);
        assert_eq!(alpha(1, 2 * MARGIN + 2 * LINE + 1), 0);
    }
}
