//! What a map draws over its colours: the coast, a labelled graticule, and
//! the box of each pack's last region patch.
//!
//! The key decision: the coast is drawn from the same water the colours
//! were read with (the packs' surface classes where they hold them, else
//! ground below 0 m), one pixel wide where water meets land, so the line
//! and the colours under it cannot disagree; a patch too small to outline
//! at the map's scale is marked by a square so the legend's entry can be
//! found.

use planet_terrain::ground::StackedPack;
use planet_terrain::pack::Coverage;

use crate::map::{MapSpec, lon_span};
use crate::picture::{Legend, Picture};

/// The coast: pixels where water meets land toward the next pixel right or
/// below. Water is what the packs' surface classes say it is where they
/// hold classes (so a lake above sea level is outlined and a depression
/// below it is not), else ground below 0 m (the same reads the elevation
/// map colours, so the line agrees with it).
pub const COAST: [u8; 3] = [12, 12, 16];
/// Meridians and parallels, and their labels.
pub const GRATICULE: [u8; 3] = [235, 235, 235];

pub(crate) fn draw_coast(picture: &mut Picture, wet: &[bool], width: u32) {
    let width = width as usize;
    for k in 0..wet.len() {
        let (x, y) = (k % width, k / width);
        let right = x + 1 < width && wet[k + 1] != wet[k];
        let below = k + width < wet.len() && wet[k + width] != wet[k];
        if right || below {
            picture.put(x as i64, y as i64, COAST);
        }
    }
}

/// Degrees between graticule lines for a box `span` degrees across: the
/// round step that draws at most eight lines.
pub fn graticule_step(span: f64) -> f64 {
    const STEPS: [f64; 16] =
        [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 45.0];
    STEPS.into_iter().find(|step| span / step <= 8.0).unwrap_or(90.0)
}

/// Dotted meridians and parallels every [`graticule_step`] degrees, each
/// labelled where it meets the map's left or top edge.
pub(crate) fn draw_graticule(picture: &mut Picture, spec: &MapSpec) {
    let (width, rows) = (spec.width, spec.map_height());
    let step = graticule_step(spec.lon_span().max(spec.region.north - spec.region.south));
    let label = |value: f64, positive: char, negative: char| {
        let text = format!("{}", (value.abs() * 1000.0).round() / 1000.0);
        if value == 0.0 { text } else { format!("{text}{}", if value > 0.0 { positive } else { negative }) }
    };
    let mut lat = (spec.region.south / step).ceil() * step;
    while lat <= spec.region.north {
        if let Some((_, y)) = spec.pixel_of(lat, spec.point(0, 0).1) {
            for x in (0..width).step_by(2) {
                picture.put(i64::from(x), i64::from(y), GRATICULE);
            }
            // Not where the meridians' labels run along the top.
            if y >= 12 {
                picture.text(2, i64::from(y) + 2, 1, &label(lat, 'N', 'S'), GRATICULE);
            }
        }
        lat += step;
    }
    let mut east = ((spec.region.west / step).ceil() * step - spec.region.west).rem_euclid(360.0);
    while east < spec.lon_span() {
        let lon = spec.region.west + east;
        let lon = if lon > 180.0 { lon - 360.0 } else { lon };
        if let Some((x, _)) = spec.pixel_of(spec.point(0, 0).0, lon) {
            for y in (0..rows).step_by(2) {
                picture.put(i64::from(x), i64::from(y), GRATICULE);
            }
            picture.text(i64::from(x) + 2, 2, 1, &label(lon, 'E', 'W'), GRATICULE);
        }
        east += step;
    }
}

/// The outline of a patched pack's last patch on a provenance map.
pub const PATCHED: [u8; 3] = [70, 200, 255];

/// Outlines the box of each pack's last region patch (the header keeps the
/// last one's box and the count, not every box) and names it in the
/// legend: a patched pack's provenance map shows where it was patched.
pub(crate) fn draw_last_patches(picture: &mut Picture, packs: &[StackedPack], spec: &MapSpec, legend: &mut Legend) {
    let patched: Vec<(Coverage, u32)> = packs
        .iter()
        .filter_map(|p| {
            let history = p.source.pack().header().patches;
            history.last.map(|last| (last.region, history.count))
        })
        .collect();
    let (width, rows) = (spec.width, spec.map_height());
    for (region, _) in &patched {
        let inside = |x: i64, y: i64| {
            (0..i64::from(width)).contains(&x) && (0..i64::from(rows)).contains(&y) && {
                let (lat, lon) = spec.point(x as u32, y as u32);
                region.contains(lat, lon)
            }
        };
        let mut drawn = 0usize;
        for y in 0..i64::from(rows) {
            for x in 0..i64::from(width) {
                if inside(x, y) && !(inside(x - 1, y) && inside(x + 1, y) && inside(x, y - 1) && inside(x, y + 1)) {
                    picture.put(x, y, PATCHED);
                    drawn += 1;
                }
            }
        }
        // A box a few pixels across or less (a city's patch on a world map)
        // is marked by a square seven pixels across around its centre, so
        // the patch the legend names can be found.
        let centre = spec.pixel_of(0.5 * (region.south + region.north), region.west + 0.5 * lon_span(region));
        if let Some((cx, cy)) = centre.filter(|_| drawn < 16) {
            let (cx, cy) = (i64::from(cx), i64::from(cy));
            for d in -3..=3 {
                for (x, y) in [(cx + d, cy - 3), (cx + d, cy + 3), (cx - 3, cy + d), (cx + 3, cy + d)] {
                    picture.put(x, y, PATCHED);
                }
            }
        }
    }
    if let (Legend::Swatches { items, .. }, Some(count)) = (legend, patched.iter().map(|p| p.1).max()) {
        items.push((PATCHED, format!("LAST PATCH ({count} IN ALL)")));
    }
}

#[cfg(test)]
mod tests {
    use planet_terrain::Geodetic;
    use planet_terrain::ground::{GroundStack, WATER_CLASSES, locate};

    use super::*;
    use crate::map::{What, read_heights, render};

    /// A pack patched three times, the last over 10..30 N, 20..50 E: its
    /// provenance map outlines that box and names it in the legend.
    #[test]
    fn a_patched_packs_provenance_map_outlines_its_last_patch() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("p.planetpack");
        planet_terrain::testing::write_procedural_pack(&path, 1).expect("a pack");
        // The header a patch leaves: its count, the last box (f32) and inputs.
        let mut bytes = std::fs::read(&path).expect("read");
        bytes[212..216].copy_from_slice(&3u32.to_le_bytes());
        for (k, v) in [10.0f32, 20.0, 30.0, 50.0].into_iter().enumerate() {
            bytes[216 + 4 * k..220 + 4 * k].copy_from_slice(&v.to_le_bytes());
        }
        bytes[232..248].fill(0xab);
        planet_terrain::testing::refresh_checksums(&mut bytes);
        std::fs::write(&path, &bytes).expect("write");
        let pack = planet_terrain::pack::Pack::open(&path).expect("a valid patched header");
        let source = planet_terrain::ground::PackSource::new(std::sync::Arc::new(pack));
        let packs = vec![StackedPack { name: "p".into(), source }];
        let spec = MapSpec { what: What::Provenance, region: Coverage::GLOBAL, width: 360, detail: false, range: None };
        let picture = render(&packs, &spec).expect("a map");
        let at = |lat: f64, lon: f64| {
            let (x, y) = spec.pixel_of(lat, lon).expect("on the map");
            picture.pixel(x, y)
        };
        assert_eq!(at(10.2, 37.3), PATCHED, "the box's south edge");
        assert_eq!(at(21.3, 49.8), PATCHED, "its east edge");
        assert_ne!(at(21.3, 37.3), PATCHED, "not its inside");
        assert_ne!(at(21.3, 60.3), PATCHED, "nor outside it");
        let legend = (spec.map_height()..picture.height).flat_map(|y| (0..360).map(move |x| (x, y)));
        assert!(legend.clone().any(|(x, y)| picture.pixel(x, y) == PATCHED), "the legend names the patch");

        // Regression (#32): a patch under a pixel wide vanished at world
        // scale. Now a square marks it.
        for (k, v) in [45.01f32, 7.01, 45.02, 7.02].into_iter().enumerate() {
            bytes[216 + 4 * k..220 + 4 * k].copy_from_slice(&v.to_le_bytes());
        }
        planet_terrain::testing::refresh_checksums(&mut bytes);
        std::fs::write(&path, &bytes).expect("write");
        let pack = planet_terrain::pack::Pack::open(&path).expect("a valid patched header");
        let source = planet_terrain::ground::PackSource::new(std::sync::Arc::new(pack));
        let picture = render(&[StackedPack { name: "p".into(), source }], &spec).expect("a map");
        let (x, y) = spec.pixel_of(45.015, 7.015).expect("on the map");
        let marked = (-4..=4i64)
            .flat_map(|dy| (-4..=4i64).map(move |dx| (dx, dy)))
            .filter(|&(dx, dy)| picture.pixel((i64::from(x) + dx) as u32, (i64::from(y) + dy) as u32) == PATCHED)
            .count();
        assert!(marked >= 20, "a small patch is marked where it lies ({marked} pixels)");
    }

    /// A map of procedural ground with sea and land: dotted meridians and
    /// parallels every 45 degrees across the globe, and the coast drawn
    /// exactly where the water the pack's classes name meets land.
    #[test]
    fn a_map_draws_its_coast_and_a_graticule() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("p.planetpack");
        planet_terrain::testing::write_procedural_pack(&path, 2).expect("a pack");
        let pack = planet_terrain::pack::Pack::open(&path).expect("open");
        let source = planet_terrain::ground::PackSource::new(std::sync::Arc::new(pack));
        let packs = vec![StackedPack { name: "p".into(), source }];
        let spec = MapSpec { what: What::Elevation, region: Coverage::GLOBAL, width: 360, detail: false, range: None };
        assert_eq!(graticule_step(15.0), 2.0);
        assert_eq!(graticule_step(360.0), 45.0);
        let picture = render(&packs, &spec).expect("a map");
        let stack = GroundStack::of_packs(packs.clone()).expect("a stack").expect("one pack");
        let (heights, wet_by_class, _) = read_heights(&stack, &spec).expect("heights");
        let (width, rows) = (spec.width, spec.map_height());
        // A parallel and a meridian, away from their labels.
        let (_, y) = spec.pixel_of(45.0, 10.0).expect("inside");
        let (x, _) = spec.pixel_of(10.0, -90.0).expect("inside");
        assert_eq!(picture.pixel(100, y), GRATICULE, "the 45 N parallel");
        assert_eq!(picture.pixel(x, 120), GRATICULE, "the 90 W meridian");
        // The pack's classes say ocean where its stored samples are below
        // 0 m; read at the nearest sample rather than interpolated, they
        // cover the same share of the map as the heights' sign (a lone low
        // sample can be water where the interpolated height is not).
        let share = |wet: &mut dyn Iterator<Item = bool>| wet.filter(|&w| w).count() as f64 / heights.len() as f64;
        let (by_class, by_height) =
            (share(&mut wet_by_class.iter().copied()), share(&mut heights.iter().map(|&h| h < 0.0)));
        assert!((by_class - by_height).abs() < 0.01, "water: {by_class} of the map by class, {by_height} by height");
        let wet = |x: u32, y: u32| wet_by_class[(y * width + x) as usize];
        let mut coast = 0;
        for y in 0..rows {
            for x in 0..width {
                let crosses =
                    (x + 1 < width && wet(x + 1, y) != wet(x, y)) || (y + 1 < rows && wet(x, y + 1) != wet(x, y));
                let colour = picture.pixel(x, y);
                if colour != GRATICULE {
                    assert_eq!(colour == COAST, crosses, "({x}, {y})");
                }
                coast += usize::from(crosses);
            }
        }
        assert!(coast > 50, "the ground has a coast here ({coast} pixels)");
    }

    /// Regression (#32, item 3): the coast was the 0 m contour even where a
    /// pack's classes say otherwise. Here the cube face centred on 0 N 0 E
    /// is all water 100 m above sea level (a lake), every other face land
    /// at the same height: the coast runs along that face's edges only.
    #[test]
    fn the_coast_follows_the_packs_water_classes_where_it_holds_them() {
        use planet_terrain::pack::{Codec, PackSpec, PackWriter, TileContent};
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("lake.planetpack");
        let spec = PackSpec {
            body: planet_terrain::Body::earth(),
            tier: "test".into(),
            codec: Codec::HeightsClasses,
            height_data_depth: 0,
            colour_data_depth: 0,
            coverage: Coverage::GLOBAL,
            fingerprint: [1; 32],
            compression_level: 1,
        };
        let tiles: Vec<_> = (0..6u8).map(|f| planet_terrain::TileAddress::new(f, 0, 0, 0).expect("a root")).collect();
        let writer = PackWriter::create(&path, spec, tiles.iter().copied()).expect("a writer");
        let n = planet_terrain::geo::address::TILE_STORED_SAMPLE_COUNT;
        let lake = locate(&planet_terrain::Body::earth(), Geodetic::from_degrees(0.0, 0.0, 0.0), 0).0.face();
        for &tile in &tiles {
            let class = if tile.face() == lake { WATER_CLASSES[0] } else { 2 };
            let content = TileContent {
                heights: &vec![100.0; n],
                classes: Some(&vec![class; n]),
                colour: None,
                geometric_error: 0.0,
                measured: true,
                voids: None,
            };
            writer.put(tile, &content).expect("put");
        }
        writer.finish().expect("finish");
        let pack = planet_terrain::pack::Pack::open(&path).expect("open");
        let source = planet_terrain::ground::PackSource::new(std::sync::Arc::new(pack));
        let packs = vec![StackedPack { name: "lake".into(), source }];
        let spec = MapSpec { what: What::Elevation, region: Coverage::GLOBAL, width: 360, detail: false, range: None };
        let picture = render(&packs, &spec).expect("a map");
        let coast: Vec<(u32, u32)> = (0..spec.map_height())
            .flat_map(|y| (0..spec.width).map(move |x| (x, y)))
            .filter(|&(x, y)| picture.pixel(x, y) == COAST)
            .collect();
        assert!(coast.len() > 100, "the lake's shore is drawn ({} pixels)", coast.len());
        // The face spans 45 degrees each way at the equator: its shore
        // crosses the equator near 45 W and 45 E.
        let near = |lon: f64| {
            let (x, y) = spec.pixel_of(0.5, lon).expect("inside");
            coast.iter().any(|&(cx, cy)| cx.abs_diff(x) <= 1 && cy.abs_diff(y) <= 1)
        };
        assert!(near(-45.0) && near(45.0), "the shore runs along the face's edges");
        assert!(!near(135.0) && !near(-135.0), "land meets land elsewhere: no coast");
    }
}
