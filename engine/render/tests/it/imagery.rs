//! The pack's imagery as the ground's colour (#55 item 1), measured on the
//! picture: the key decision is that the reference is the imagery itself,
//! read from the source under every land pixel, and the rendered colour is
//! judged by its chromaticity (the share of red, green and blue), which
//! lighting and exposure scale but do not turn: a material that paints its
//! own colours over the imagery moves it, a filter that only smooths the
//! imagery does not. Land pixels are those whose four nearest class
//! samples are all land, so no coast or lake blends into either mean.

use std::collections::HashMap;
use std::sync::Arc;

use glam::DVec3;
use planet_render::RgbaImage;
use planet_terrain::camera::View;
use planet_terrain::geo::address::{TILE_STORED_SAMPLES, TileAddress};
use planet_terrain::geo::body::Ellipsoid;
use planet_terrain::ground::{HeightSource, SourceTile, locate};

use planet_terrain::ground::GroundStack;
use planet_terrain::pack::Coverage;

use crate::box_packs::{field, write_box_pack};
use crate::inset_edge::{demo_packs, look_down, stacked};

/// The colours a picture's land takes against the imagery under it.
#[derive(Clone, Copy, Debug)]
pub struct Colours {
    /// Mean sRGB of the land pixels drawn.
    pub drawn: [f64; 3],
    /// Mean sRGB of the imagery under the same pixels.
    pub imagery: [f64; 3],
    pub land_pixels: usize,
    /// How far the drawn fields follow the imagery under them: the Pearson
    /// correlation, over blocks of 8 x 8 land pixels over green imagery
    /// (about a texel of it at 150 km, so structure finer than it does not
    /// count), of the drawn luminance with the imagery's (both linear).
    pub luminance_follows: f64,
    /// The same of the green share, g / (r + g + b): the hue that tells
    /// fields from desert.
    pub green_follows: f64,
    /// Of the pixels over green imagery (its green above its red), the
    /// share drawn green too: fields not drawn as sand.
    pub fields_green: f64,
}

/// A land pixel: its drawn sRGB and the imagery's under it.
type Pair = ([f64; 3], [f64; 3]);

/// A colour's chromaticity: its channels over their sum.
pub fn chromaticity(c: [f64; 3]) -> [f64; 3] {
    let sum = (c[0] + c[1] + c[2]).max(1e-9);
    c.map(|x| x / sum)
}

/// The distance between two colours' chromaticities.
pub fn hue_distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    let (a, b) = (chromaticity(a), chromaticity(b));
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// Sand as the earth palette's beaches paint it (sRGB).
pub const SAND: [f64; 3] = [194.0, 173.0, 128.0];

/// Where the ray through pixel `(x, y)` meets the ellipsoid (the ground is
/// within metres of it where this is used: lowlands).
fn ground_point(ellipsoid: &Ellipsoid, view: &View, x: f64, y: f64) -> Option<DVec3> {
    let radii = ellipsoid.radii();
    let (o, d) = (view.position / radii, view.pixel_ray(x, y) / radii);
    let (a, b, c) = (d.length_squared(), 2.0 * o.dot(d), o.length_squared() - 1.0);
    let disc = b * b - 4.0 * a * c;
    (b < 0.0 && disc >= 0.0).then(|| view.position + view.pixel_ray(x, y) * ((-b - disc.sqrt()) / (2.0 * a)))
}

/// The land pixels of `image` (drawn from `view` over `source`) and the
/// imagery under them, read from the source's tiles at its colour depth.
pub fn colours(source: &dyn HeightSource, view: &View, image: &RgbaImage) -> Colours {
    let ellipsoid = *source.body().ellipsoid();
    let depth = source.colour_data_depth().expect("a source with imagery");
    let mut tiles: HashMap<TileAddress, SourceTile> = HashMap::new();
    let n = TILE_STORED_SAMPLES as usize;
    let (w, h) = (image.width as usize, image.height as usize);
    // Per pixel: the drawn sRGB and the imagery's, where it is land.
    let mut land: Vec<Option<Pair>> = vec![None; w * h];
    for (k, pixel) in land.iter_mut().enumerate() {
        let Some(p) = ground_point(&ellipsoid, view, (k % w) as f64, (k / w) as f64) else { continue };
        let (tile, u, v) = locate(source.body(), ellipsoid.point_to_geodetic(p), depth);
        let t = tiles.entry(tile).or_insert_with(|| source.tile(tile).expect("a tile"));
        let (Some(classes), Some(colour)) = (t.classes.as_ref(), t.colour.as_ref()) else { continue };
        let (i, j, fu, fv) = (u.floor() as usize + 1, v.floor() as usize + 1, u - u.floor(), v - v.floor());
        let corners = [
            (i, j, (1.0 - fu) * (1.0 - fv)),
            (i + 1, j, fu * (1.0 - fv)),
            (i, j + 1, (1.0 - fu) * fv),
            (i + 1, j + 1, fu * fv),
        ];
        if corners.iter().all(|&(a, b, _)| classes[b * n + a] == 2) {
            let drawn = [0, 1, 2].map(|c| f64::from(image.pixels[4 * k + c]));
            let under = [0, 1, 2].map(|c| corners.iter().map(|&(a, b, w)| w * f64::from(colour[b * n + a][c])).sum());
            *pixel = Some((drawn, under));
        }
    }
    let found: Vec<_> = land.iter().flatten().collect();
    let mean = |f: &dyn Fn(&Pair) -> [f64; 3]| {
        found.iter().fold([0.0; 3], |s, p| [0, 1, 2].map(|c| s[c] + f(p)[c] / found.len().max(1) as f64))
    };
    let (drawn, imagery) = (mean(&|p| p.0), mean(&|p| p.1));
    let (luminance_follows, green_follows) = follows(&land, w, h);
    let fields: Vec<_> = found.iter().filter(|p| p.1[1] > p.1[0]).collect();
    let fields_green = fields.iter().filter(|p| p.0[1] > p.0[0]).count() as f64 / fields.len().max(1) as f64;
    Colours { drawn, imagery, land_pixels: found.len(), luminance_follows, green_follows, fields_green }
}

/// The correlations of [`Colours`] over blocks of 8 x 8 pixels that are
/// all land over green imagery (fields): of the luminance and of the green
/// share, drawn against the imagery (sRGB to linear by its 2.2 power).
fn follows(land: &[Option<Pair>], w: usize, h: usize) -> (f64, f64) {
    const B: usize = 8;
    let linear = |c: [f64; 3]| c.map(|x| (x / 255.0).powf(2.2));
    let luminance = |c: [f64; 3]| 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
    let green = |c: [f64; 3]| c[1] / (c[0] + c[1] + c[2]).max(1e-9);
    let (mut lum, mut hue) = (Vec::new(), Vec::new());
    for by in 0..h / B {
        for bx in 0..w / B {
            let block: Vec<_> = (0..B * B).filter_map(|k| land[(by * B + k / B) * w + bx * B + k % B]).collect();
            if block.len() < B * B {
                continue;
            }
            let sum =
                |f: &dyn Fn(&Pair) -> [f64; 3]| block.iter().fold([0.0; 3], |s, p| [0, 1, 2].map(|c| s[c] + f(p)[c]));
            let (d, i) = (sum(&|p| linear(p.0)), sum(&|p| linear(p.1)));
            // Fields only: across a delta's edge into desert any picture
            // that keeps the two apart correlates.
            if i[1] <= i[0] {
                continue;
            }
            lum.push((luminance(d), luminance(i)));
            hue.push((green(d), green(i)));
        }
    }
    (correlation(&lum), correlation(&hue))
}

/// Pearson's correlation of the pairs.
fn correlation(pairs: &[(f64, f64)]) -> f64 {
    let n = pairs.len().max(1) as f64;
    let (ma, mb) = (pairs.iter().map(|p| p.0).sum::<f64>() / n, pairs.iter().map(|p| p.1).sum::<f64>() / n);
    let cov: f64 = pairs.iter().map(|p| (p.0 - ma) * (p.1 - mb)).sum();
    let (va, vb): (f64, f64) =
        (pairs.iter().map(|p| (p.0 - ma).powi(2)).sum(), pairs.iter().map(|p| (p.1 - mb).powi(2)).sum());
    cov / (va * vb).sqrt().max(1e-12)
}

/// `source` from 150 km over (lat, lon): its land's colours against the
/// imagery's, printed.
fn from_150_km(name: &str, source: Arc<dyn HeightSource>, lat: f64, lon: f64) -> Colours {
    let (view, image) = look_down("imagery", name, source.clone(), (lat, lon), 150_000.0);
    let c = colours(source.as_ref(), &view, &image);
    eprintln!(
        "{name}: {} land px drawn {:.0?} (chromaticity {:.3?}) over imagery {:.0?} ({:.3?}), {:.3} from sand's; \
         follows the imagery's luminance {:.2}, its green {:.2}; {:.3} of its fields drawn green",
        c.land_pixels,
        c.drawn,
        chromaticity(c.drawn),
        c.imagery,
        chromaticity(c.imagery),
        hue_distance(c.drawn, SAND),
        c.luminance_follows,
        c.green_follows,
        c.fields_green
    );
    c
}

/// The demo's Earth (tools/demo.sh), with detail, or `None` (saying so)
/// where it was not made.
fn demo_earth() -> Option<Arc<dyn HeightSource>> {
    let Some((earth, _)) = demo_packs() else {
        eprintln!("skipped: packs/earth.planetpack is the demo's (tools/demo.sh)");
        return None;
    };
    let stack = GroundStack::of_packs(vec![stacked(&earth)]).expect("one body").expect("a pack");
    Some(Arc::new(stack.with_detail(true)))
}

/// A delta like the Nile's in a desert, as the demo's Blue Marble holds
/// it: a box pack (26..35 N, 26..36 E) measured to depth 4 (samples about
/// 5 km apart), a sea north of 31.4 N, green fields in a V opening to it
/// from 29.8 N, sand around; their hue and brightness varied by smooth
/// random fields of 8 km features, so the imagery has structure at its
/// texels' scale.
fn delta() -> (tempfile::TempDir, Arc<dyn HeightSource>) {
    let coverage = Coverage { south: 26.0, west: 26.0, north: 35.0, east: 36.0 };
    let (scratch, path) = write_box_pack("delta", coverage, 4, true, |lat, lon, _| {
        let vary = |c: [f64; 3], k: f64| c.map(|x| (x * (1.0 + k * field(lat, lon, 0.08, 1))).clamp(0.0, 255.0) as u8);
        if lat > 31.4 {
            (-20.0, 1, [20, 40, 80])
        } else if (lon - 31.0).abs() < 0.8 * (lat - 29.8) {
            // Crops from dark to pale green, and their brightness, each
            // varied by its own field.
            let crop = 0.5 + 0.5 * field(lat, lon, 0.08, 3);
            let green = [45.0 + 65.0 * crop, 80.0 + 40.0 * crop, 30.0 + 30.0 * crop];
            (2.0 + 8.0 * (31.4 - lat), 2, vary(green, 0.3))
        } else {
            (30.0 + 40.0 * field(lat, lon, 0.3, 2), 2, vary([200.0, 175.0, 125.0], 0.12))
        }
    });
    let stack = GroundStack::of_packs(vec![stacked(&path)]).expect("one body").expect("a pack");
    (scratch, Arc::new(stack.with_detail(true)))
}

/// What a lowland's colours must be from 150 km: its imagery's luminance
/// and green share followed block by block (correlations at least
/// `follows`), and its fields drawn green, not as sand.
fn assert_its_imagerys(name: &str, c: &Colours, luminance: f64, green: f64) {
    assert!(c.land_pixels > 5000, "{name}: land in view ({} px)", c.land_pixels);
    assert!(c.luminance_follows >= luminance, "{name}: the imagery's luminance is not followed: {c:?}");
    assert!(c.green_follows >= green, "{name}: the imagery's hue is not followed: {c:?}");
    assert!(c.fields_green >= 0.95, "{name}: fields drawn as something else (sand): {c:?}");
}

/// A delta in a desert (a box pack made here, so CI has it) from 150 km:
/// the fields and the sand around them are the imagery's, smoothly.
#[test]
fn a_delta_from_150_km_takes_its_imagerys_colour() {
    let (_scratch, delta) = delta();
    let c = from_150_km("delta-150km", delta, 30.8, 31.0);
    assert_its_imagerys("delta-150km", &c, 0.96, 0.7);
}

/// The Netherlands from 150 km (the demo's Earth; skipped without it).
#[test]
fn the_netherlands_from_150_km_take_their_imagerys_colour() {
    let Some(earth) = demo_earth() else { return };
    let c = from_150_km("netherlands-150km", earth, 52.3, 5.3);
    // Blue Marble's Netherlands is one green: little hue to follow.
    assert_its_imagerys("netherlands-150km", &c, 0.93, 0.45);
}

/// The Nile delta from 150 km (the demo's Earth; skipped without it).
#[test]
fn the_nile_delta_from_150_km_takes_its_imagerys_colour() {
    let Some(earth) = demo_earth() else { return };
    let c = from_150_km("nile-delta-150km", earth, 30.8, 31.0);
    assert_its_imagerys("nile-delta-150km", &c, 0.93, 0.9);
}
