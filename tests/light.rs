//! The light and the snow over a real mountain (#51), drawn by
//! `planet-view` with the validation layers on from the SRTM of the High
//! Sierra cropped to 0.4 degrees around North Palisade (43 km, 1,300 to
//! 4,340 m) and baked as the Earth's.
//!
//! Expectations are the real place's: the range white to its valleys in
//! February and mostly bare in August, snow left on its highest ground.

use std::path::{Path, PathBuf};

use planet_system_tests::run_ok;

/// The crop's middle.
const MIDDLE: (&str, &str) = ("37.092", "-118.669");

/// The Palisade crop baked as the Earth's into `dir`.
fn palisade(dir: &Path) -> PathBuf {
    let dem = dir.join("palisade.tif");
    crate::fidelity::crop(&crate::fidelity::dem("sierra-nevada-srtmgl3.tif"), &dem, (1560, 960), (480, 480));
    let pack = dir.join("palisade.planetpack");
    let s = |p: &Path| p.to_str().expect("UTF-8").to_owned();
    run_ok("planet-bake", &["--dem", &s(&dem), "--body", "earth", "--out", &s(&pack)]);
    pack
}

/// A shot straight down from 25 km over the crop's middle (23 km square,
/// all inside it) at local noon on `date`: its RGBA pixels.
fn noon_from_above(pack: &Path, dir: &Path, date: &str) -> Vec<u8> {
    let png = dir.join(format!("{date}.png"));
    let time = format!("{date}T19:55:00Z");
    let (lat, lon) = MIDDLE;
    let pack = pack.to_str().expect("UTF-8");
    let shot = png.to_str().expect("UTF-8");
    let args = ["--lat", lat, "--lon", lon, "--alt", "25000", "--pitch", "-90", "--size", "128x128"];
    run_ok("planet-view", &[&[pack][..], &args, &["--time", &time, "--validation", "--shot", shot]].concat());
    crate::e2e::decode_png(&png).1
}

/// The share of pixels that are snow: bright and nearly grey.
fn snow_share(rgba: &[u8]) -> f64 {
    let snow = rgba.chunks_exact(4).filter(|p| p[..3].iter().all(|&c| c > 170) && p[0].abs_diff(p[2]) < 25).count();
    snow as f64 / (rgba.len() / 4) as f64
}

/// Snow knows the season (#51 item 3): the snowline followed elevation
/// and aspect alone, so the range was as white on 21 June as in February.
/// From the date's snowline (docs/ground.md, "Snow by season"): in mid
/// February nearly all of it is white, in mid August a little snow is left
/// on its highest poleward ground, and June lies between.
#[test]
fn the_high_sierra_is_white_in_february_and_mostly_bare_in_august() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = palisade(dir.path());
    let [february, june, august] =
        ["2026-02-15", "2026-06-21", "2026-08-15"].map(|date| snow_share(&noon_from_above(&pack, dir.path(), date)));
    eprintln!("snow: February {february:.2}, June {june:.2}, August {august:.2}");
    assert!(february > 0.7, "February is white: {february:.2}");
    assert!(august < 0.25 && august > 0.005, "August is mostly bare, snow left high: {august:.2}");
    assert!(february > june && june > august, "June lies between: {february:.2} {june:.2} {august:.2}");
}

/// A shot over the crop with the sun about 10 degrees up in the west
/// (17:00 local solar time on the equinox), looking north-west across the
/// range from 12 km, with `--shadows MODE`: its RGBA pixels.
fn low_sun(pack: &Path, dir: &Path, mode: &str) -> Vec<u8> {
    let png = dir.join(format!("low-sun-{mode}.png"));
    let pack = pack.to_str().expect("UTF-8");
    let shot = png.to_str().expect("UTF-8");
    let args = ["--lat", "36.93", "--lon", "-118.52", "--alt", "12000", "--heading", "300", "--pitch", "-25"];
    let look = ["--size", "192x108", "--time", "2026-03-21T00:57:00Z", "--shadows", mode];
    run_ok("planet-view", &[&[pack][..], &args, &look, &["--validation", "--shot", shot]].concat());
    crate::e2e::decode_png(&png).1
}

/// Relative luminance of an sRGB pixel, linear (the shader's encoding is
/// a 2.2 power).
fn linear_luminance(p: &[u8]) -> f64 {
    let l = |c: u8| (f64::from(c) / 255.0).powf(2.2);
    0.2126 * l(p[0]) + 0.7152 * l(p[1]) + 0.0722 * l(p[2])
}

/// Shadows that read (#51 item 2): over the pixels the shadow mask says
/// the sun does not reach, the shaded picture's luminance against the same
/// pixels with `--shadows off`. Cast shadows were computed but hardly
/// showed: 17% darker where a low sun's shadow should halve the light.
#[test]
fn a_low_suns_shadows_take_most_of_the_light() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = palisade(dir.path());
    let [on, off, mask] = ["on", "off", "mask"].map(|mode| low_sun(&pack, dir.path(), mode));
    // The mask paints terrain grey (white seen, black hidden); the sky is not grey.
    let shadowed: Vec<usize> = (0..mask.len() / 4)
        .filter(|&k| {
            let m = &mask[4 * k..4 * k + 3];
            m[0] == m[1] && m[1] == m[2] && m[0] < 64
        })
        .collect();
    let share = shadowed.len() as f64 / (mask.len() / 4) as f64;
    let sum = |image: &[u8]| shadowed.iter().map(|&k| linear_luminance(&image[4 * k..4 * k + 3])).sum::<f64>();
    let ratio = sum(&on) / sum(&off);
    eprintln!("{:.1}% of the picture in cast shadow; there, shadows on / off: {ratio:.2}", 100.0 * share);
    assert!(share > 0.03, "the low sun casts shadows here: {share:.3}");
    assert!(ratio <= 0.6, "shadowed ground at most 0.6 of the same ground lit: {ratio:.2}");
}
