//! A tile as a picture: hillshade over the pack's colour, or over a palette
//! by surface class or elevation when the pack has no colour. North-west
//! light at 45 degrees, the cartographer's convention, so relief reads the
//! same way as on a printed map. Up in the picture is +v on the face.

use planet_cli::picture::{Picture, elevation_colour};
use planet_terrain::TILE_STORED_SAMPLES;
use planet_terrain::pack::DecodedTile;

fn class_colour(class: u8) -> [u8; 3] {
    match class {
        0 => [128, 128, 128],
        1 => [40, 90, 160],
        2 => [90, 140, 70],
        3 => [200, 190, 140],
        4 => [240, 240, 245],
        _ => [160, 120, 160],
    }
}

pub fn hillshade(tile: &DecodedTile, spacing_m: f64, scale: u32) -> Picture {
    let n = TILE_STORED_SAMPLES as i32;
    let heights = tile.heights();
    let at = |i: i32, j: i32| heights[((j.clamp(0, n - 1)) * n + i.clamp(0, n - 1)) as usize];
    let light = {
        let (x, y, z) = (-1.0f64, 1.0, std::f64::consts::SQRT_2);
        let l = (x * x + y * y + z * z).sqrt();
        (x / l, y / l, z / l)
    };
    let size = (n as u32) * scale;
    let mut rgb = vec![0u8; (size * size * 3) as usize];
    for row in 0..size {
        let j = n - 1 - (row / scale) as i32;
        for col in 0..size {
            let i = (col / scale) as i32;
            let dx = (at(i + 1, j) - at(i - 1, j)) / (2.0 * spacing_m);
            let dy = (at(i, j + 1) - at(i, j - 1)) / (2.0 * spacing_m);
            let len = (dx * dx + dy * dy + 1.0).sqrt();
            let shade = ((-dx * light.0 - dy * light.1 + light.2) / len).clamp(0.0, 1.0);
            let k = (j * n + i) as usize;
            let base = match (&tile.colour, &tile.classes) {
                (Some(colour), _) => colour[k],
                (None, Some(classes)) => class_colour(classes[k]),
                _ => elevation_colour(heights[k]),
            };
            let lit = 0.35 + 0.65 * shade;
            let p = ((row * size + col) * 3) as usize;
            for c in 0..3 {
                rgb[p + c] = (f64::from(base[c]) * lit).round().clamp(0.0, 255.0) as u8;
            }
        }
    }
    Picture { width: size, height: size, rgb }
}
