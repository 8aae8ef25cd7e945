//! The sea at sea level (issue #51, item 1): its surface drawn at 0 m over
//! the floor the ground keeps, where geometry puts a level sea's horizon;
//! the floor seen through shallow water and not through deep; and no
//! nodes spent on floor under the sea. Each figure is printed beside the
//! one a sea drawn on its floor gives, which the old renderer drew.

use std::sync::Arc;

use glam::DVec3;
use planet_render::RgbaImage;
use planet_render::scene::sun_for;
use planet_terrain::camera::View;
use planet_terrain::geo::body::{Body, Ellipsoid, Geodetic};
use planet_terrain::ground::{AnalyticSource, HeightSource};

use crate::support::*;

/// Open ocean: a level floor `depth_m` down, no classes (unclassified
/// ground below 0 m is sea).
fn ocean(depth_m: f64) -> AnalyticSource {
    AnalyticSource::within(Body::earth(), move |_| -depth_m, (-depth_m, -depth_m), |_| 0.0)
}

/// Rec. 709 luma of pixel `(x, y)`, 0..1.
fn luma(image: &RgbaImage, x: usize, y: usize) -> f64 {
    let p = &image.pixels[4 * (y * image.width as usize + x)..];
    (0.2126 * f64::from(p[0]) + 0.7152 * f64::from(p[1]) + 0.0722 * f64::from(p[2])) / 255.0
}

/// Whether the ray through pixel `(x, y)` of `view` meets the surface
/// `height_m` above the ellipsoid (the radii grown by it: within metres
/// of the true offset surface, a fraction of a pixel here).
fn meets(ellipsoid: &Ellipsoid, view: &View, x: f64, y: f64, height_m: f64) -> bool {
    let radii = ellipsoid.radii() + DVec3::splat(height_m);
    let (o, d) = (view.position / radii, view.pixel_ray(x, y) / radii);
    let (a, b, c) = (d.length_squared(), 2.0 * o.dot(d), o.length_squared() - 1.0);
    b < 0.0 && b * b >= 4.0 * a * c
}

/// The first row from the top, in the middle column, whose ray meets the
/// surface `height_m` up.
fn horizon_row(ellipsoid: &Ellipsoid, view: &View, height_m: f64) -> usize {
    let (w, h) = view.viewport;
    (0..h as usize).find(|&y| meets(ellipsoid, view, 0.5 * f64::from(w), y as f64, height_m)).expect("a horizon")
}

/// 100 m above open ocean 4 km deep, looking level with a 10-degree lens
/// (a row is 0.037 degrees): the sky turns to sea where the rays begin to
/// meet a surface at 0 m, within 2 rows, not where they meet the floor
/// (the old renderer's horizon, 48 rows lower here).
#[test]
fn the_horizon_over_the_open_sea_is_where_a_level_sea_puts_it() {
    let size = (320, 270);
    let body = Body::earth();
    let source: Arc<dyn HeightSource> = Arc::new(ocean(4000.0));
    let view = View::looking_from(&body, Geodetic::from_degrees(0.0, -30.0, 100.0), 0.0, 0.0, 10f64.to_radians(), size);
    let mut renderer = renderer(size, 512);
    let shot = shoot(&mut renderer, body.clone(), Some(source), &view, settings(2048, 1.0, 0.1), 40);
    save_for_review("sea", "horizon-100m", &shot.image);
    // The row where the picture darkens most from sky to sea, over the
    // middle third of the columns.
    let (w, h) = (size.0 as usize, size.1 as usize);
    let mean = |y: usize| (w / 3..2 * w / 3).map(|x| luma(&shot.image, x, y)).sum::<f64>() / (w / 3) as f64;
    let drawn = (1..h).max_by(|&a, &b| (mean(a - 1) - mean(a)).total_cmp(&(mean(b - 1) - mean(b)))).expect("rows");
    let sea = horizon_row(body.ellipsoid(), &view, 0.0);
    let floor = horizon_row(body.ellipsoid(), &view, -4000.0);
    eprintln!("horizon at 100 m: drawn at row {drawn}, a level sea's at {sea}, the floor's at {floor}");
    assert!(floor > sea + 20, "the test tells the two apart: rows {sea} and {floor}");
    assert!(drawn.abs_diff(sea) <= 2, "the sea's horizon is drawn at row {drawn}, geometry puts it at {sea}");
}

/// A shelf falling from 3 m to 80 m deep across the view, seen from 300 m
/// straight down under a high sun: the floor shows through the shallow
/// water (sand, brighter and greener) and not through the deep, which is
/// the water's own colour. Drawn as a colour of the floor's depth alone
/// the two ends differed by the depth's share of 6 km: nothing.
#[test]
fn the_floor_shows_through_shallow_water_and_not_through_deep() {
    let size = (192, 108);
    let body = Body::earth();
    let (lat, lon) = (10.0, -40.0);
    let ellipsoid = *body.ellipsoid();
    // Depth rises with longitude: 3 m at the view's left, 80 m at its right.
    let shelf = move |d: DVec3| {
        let g = ellipsoid.direction_to_geodetic(d);
        let east_m = (g.longitude.to_degrees() - lon) * 109_600.0;
        -(40.5 + 79.0 * (east_m / 300.0)).clamp(3.0, 80.0)
    };
    let source: Arc<dyn HeightSource> =
        Arc::new(AnalyticSource::within(body.clone(), shelf, (-80.0, -3.0), |s| (79.0 * s / 600.0).min(79.0)));
    let view = View::looking_from(&body, Geodetic::from_degrees(lat, lon, 300.0), 0.0, -90.0, 50f64.to_radians(), size);
    let mut renderer = renderer(size, 512);
    let mut scene =
        planet_render::scene::TerrainScene::new(body.clone(), Some(source), &renderer, settings(2048, 1.0, 0.1));
    let sun = sun_for(&body, &view);
    let (_, image, _) = scene.render_until_resident(&mut renderer, &view, sun, 40).expect("render");
    assert_no_validation_messages(&renderer);
    save_for_review("sea", "shelf-300m", &image);
    let (w, h) = (size.0 as usize, size.1 as usize);
    let band = |from: usize, to: usize| {
        let n = ((to - from) * h) as f64;
        let sum = |c: usize| {
            (from..to)
                .flat_map(|x| (0..h).map(move |y| (x, y)))
                .map(|(x, y)| f64::from(image.pixels[4 * (y * w + x) + c]))
                .sum::<f64>()
                / n
        };
        [sum(0), sum(1), sum(2)]
    };
    let shallow = band(0, w / 8);
    let deep = band(w - w / 8, w);
    eprintln!("shelf: shallow water {shallow:.0?}, deep {deep:.0?} (sRGB means)");
    assert!(
        shallow[1] > deep[1] + 40.0,
        "the shallow floor shows bright through the water: {shallow:.0?} vs {deep:.0?}"
    );
    assert!(shallow[0] > deep[0] + 10.0, "sand's red survives 3 m of water, not 80 m: {shallow:.0?} vs {deep:.0?}");
}

/// Rough ground, ridges 600 m high every 3 km, 3 km below the camera
/// looking 20 degrees down: under the sea (its top 2,500 m deep) the cut
/// draws the sea's surface and spends no more nodes than over a level
/// floor; the same ground above sea level is refined as its relief needs.
#[test]
fn the_cut_spends_no_nodes_on_floor_under_the_sea() {
    let size = (192, 108);
    let body = Body::earth();
    let ellipsoid = *body.ellipsoid();
    let relief = move |base: f64| {
        move |d: DVec3| {
            let g = ellipsoid.direction_to_geodetic(d);
            let k = std::f64::consts::TAU * 111_000.0 / 3000.0;
            base + 300.0 * (g.latitude.to_degrees() * k).sin() * (g.longitude.to_degrees() * k).sin()
        }
    };
    // The ridges' largest curvature, 2 x 300 m x (2 pi / 3 km)^2, times a
    // lattice spacing squared over 8.
    let error = |s: f64| (600.0 * (std::f64::consts::TAU / 3000.0).powi(2) * s * s / 8.0).min(600.0);
    let nodes = |base: f64, ridges: bool, name: &str| {
        let source: Arc<dyn HeightSource> = if ridges {
            Arc::new(AnalyticSource::within(body.clone(), relief(base), (base - 300.0, base + 300.0), error))
        } else {
            Arc::new(ocean(-base))
        };
        let camera_m = base.max(0.0) + 3000.0;
        let view = View::looking_from(
            &body,
            Geodetic::from_degrees(5.0, -35.0, camera_m),
            30.0,
            -20.0,
            50f64.to_radians(),
            size,
        );
        let mut renderer = renderer(size, 1024);
        let shot = shoot(&mut renderer, body.clone(), Some(source), &view, settings(4096, 2.0, 0.1), 60);
        save_for_review("sea", name, &shot.image);
        shot.report.statistics.nodes_drawn
    };
    let under_sea = nodes(-2800.0, true, "ridges-under-the-sea");
    let level_floor = nodes(-2800.0, false, "level-floor");
    let on_land = nodes(1000.0, true, "ridges-on-land");
    eprintln!(
        "nodes drawn: {under_sea} over ridges under the sea, {level_floor} over a level floor, {on_land} over the ridges on land"
    );
    assert_eq!(under_sea, level_floor, "the ridges under the sea cost no more than a level floor");
    assert!(2 * under_sea < on_land, "the same ridges on land are refined: {on_land} nodes against {under_sea}");
}
