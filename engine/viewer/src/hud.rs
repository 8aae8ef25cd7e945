//! The HUD: lines of text rasterised on the host into an RGBA overlay that
//! the renderer blends over the frame's top-left corner.
//!
//! The key decision: a built-in 5x7 bitmap font and host rasterisation, so
//! the HUD needs no font files, no text-shaping crate and no second GPU
//! pipeline layout; the overlay is a few hundred KB uploaded with the
//! frame's tiles.

use planet_render::{HUD_BYTES, HUD_SIZE};
use planet_terrain::camera::{Instant, local_solar_time_hours};
use planet_terrain::geo::body::Body;

/// Pixels per font pixel.
const SCALE: usize = 2;
const GLYPH_W: usize = 5;
const GLYPH_H: usize = 7;
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

/// Rows of a glyph, top first; bit 4 is the leftmost pixel.
fn glyph(c: char) -> [u8; GLYPH_H] {
    match c.to_ascii_uppercase() {
        'A' => [0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        'B' => [0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E],
        'C' => [0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E],
        'D' => [0x1E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1E],
        'E' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F],
        'F' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10],
        'G' => [0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F],
        'H' => [0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        'I' => [0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E],
        'J' => [0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C],
        'K' => [0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11],
        'L' => [0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F],
        'M' => [0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11],
        'N' => [0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11],
        'O' => [0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'P' => [0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10],
        'Q' => [0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D],
        'R' => [0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11],
        'S' => [0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E],
        'T' => [0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04],
        'U' => [0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'V' => [0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04],
        'W' => [0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A],
        'X' => [0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11],
        'Y' => [0x11, 0x11, 0x0A, 0x04, 0x04, 0x04, 0x04],
        'Z' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F],
        '0' => [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E],
        '1' => [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
        '2' => [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F],
        '3' => [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
        '4' => [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02],
        '5' => [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
        '6' => [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E],
        '7' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        '8' => [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E],
        '9' => [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
        '.' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C],
        ',' => [0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08],
        ':' => [0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00],
        '-' => [0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00],
        '+' => [0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00],
        '/' => [0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00],
        '%' => [0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03],
        '(' => [0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02],
        ')' => [0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08],
        '[' => [0x0E, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0E],
        ']' => [0x0E, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0E],
        '=' => [0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00],
        '>' => [0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08],
        '<' => [0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02],
        ' ' => [0; GLYPH_H],
        _ => [0x1F, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1F],
    }
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
