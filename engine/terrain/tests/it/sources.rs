//! Height sources: seams of the procedural source, continuity of a pack
//! source past its data depth, bounds from the index, the regional inset.

use planet_terrain::ground::BoundsAt;
use std::collections::HashMap;
use std::sync::Arc;

use crate::support::{OwnedContent, analytic_height, sample_inside, spec, tiles_to_depth, write_pack};
use planet_terrain::ground::{
    HeightFunction, HeightSource, InsetSource, PackSource, ProceduralSource, Provenance, SourceTile, sample_ground,
};
use planet_terrain::layers::LayerStack;
use planet_terrain::pack::{Codec, Coverage, Pack, PackWriter};
use planet_terrain::{Body, Edge, Geodetic, TILE_CELLS, TileAddress};

/// For every edge of `tile`, pairs (this tile's sample, the neighbour's
/// sample at the same place) for the shared edge (`steps_in` 0 on both
/// sides) and for the apron (one step outside here, one step inside there).
pub(crate) fn check_edges(
    source: &dyn HeightSource,
    tile: TileAddress,
    cache: &mut HashMap<TileAddress, SourceTile>,
    tolerance: impl Fn(&SourceTile, &SourceTile) -> f32,
) {
    let mut get = |t: TileAddress| cache.entry(t).or_insert_with(|| source.tile(t).unwrap()).clone();
    let here = get(tile);
    let last = TILE_CELLS as i32;
    for edge in Edge::ALL {
        let n = tile.neighbour(edge);
        let there = get(n.address);
        let bound = tolerance(&here, &there);
        for k in 0..=last {
            let along = if n.reversed { last - k } else { k };
            let (a, b) = (sample_inside(edge, k, 0), sample_inside(n.shared_edge, along, 0));
            let (ha, hb) = (here.height(a.0, a.1), there.height(b.0, b.1));
            assert!((ha - hb).abs() <= bound, "{tile} {edge:?} edge sample {k}: {ha} vs {} {hb}", n.address);
            let apron = sample_inside(edge, k, -1);
            let b = sample_inside(n.shared_edge, along, 1);
            let (ha, hb) = (here.height(apron.0, apron.1), there.height(b.0, b.1));
            assert!((ha - hb).abs() <= bound, "{tile} {edge:?} apron sample {k}: {ha} vs {} {hb}", n.address);
        }
    }
}

#[test]
fn procedural_aprons_are_the_neighbours_samples_exactly() {
    let source = ProceduralSource::new(Body::earth(), 42);
    let mut cache = HashMap::new();
    for tile in tiles_to_depth(1).into_iter().filter(|t| t.depth() == 1) {
        check_edges(&source, tile, &mut cache, |_, _| 0.0);
    }
    // Deeper tiles at a cube corner and on a face edge.
    for tile in ["4/4/0/0", "2/4/15/7", "5/4/8/15"] {
        check_edges(&source, tile.parse().unwrap(), &mut cache, |_, _| 0.0);
    }
}

#[test]
fn procedural_ground_is_deterministic_believable_and_nested() {
    let earth = Body::earth();
    let a = ProceduralSource::new(earth.clone(), 7);
    let b = ProceduralSource::new(earth.clone(), 7);
    let c = ProceduralSource::new(earth, 8);
    let tile: TileAddress = "1/1/1/0".parse().unwrap();
    let (ta, tb, tc) = (a.tile(tile).unwrap(), b.tile(tile).unwrap(), c.tile(tile).unwrap());
    assert_eq!(ta, tb);
    assert_ne!(ta.heights, tc.heights);
    assert_eq!(ta.provenance, Provenance::Invented);
    assert_eq!(a.data_depth(), None);
    // Over the whole body: oceans and land, relief of Earth's order.
    let mut all = Vec::new();
    for root in TileAddress::roots() {
        all.extend(a.tile(root).unwrap().heights);
    }
    let (lo, hi) = all.iter().fold((f32::MAX, f32::MIN), |(lo, hi), &h| (lo.min(h), hi.max(h)));
    let land = all.iter().filter(|&&h| h > 0.0).count() as f64 / all.len() as f64;
    assert!((-12_000.0..-4_000.0).contains(&lo) && (4_000.0..12_000.0).contains(&hi), "range {lo} .. {hi}");
    assert!((0.2..0.5).contains(&land), "land fraction {land}");
    let bounds = a.tile_bounds(tile).unwrap();
    assert!(all.iter().all(|&h| f64::from(h) >= bounds.min_elevation && f64::from(h) <= bounds.max_elevation));
    // A child's samples at its parent's sample points equal the parent's.
    let child = tile.children().unwrap()[3];
    let tc = a.tile(child).unwrap();
    for k in 0..=64 {
        assert_eq!(tc.height(2 * k, 0), ta.height(64 + k, 64));
    }
}

fn write_analytic(dir: &tempfile::TempDir, codec: Codec, depth: u8) -> Arc<Pack> {
    let path = dir.path().join("analytic.planetpack");
    write_pack(&path, codec, &tiles_to_depth(depth));
    Arc::new(Pack::open(&path).unwrap())
}

#[test]
fn pack_source_past_its_data_depth_is_continuous_across_tile_and_face_edges() {
    let dir = tempfile::tempdir().unwrap();
    let source = PackSource::new(write_analytic(&dir, Codec::HeightsClassesColour, 1));
    // The quantisation step of the stored ancestor a resampled tile comes from.
    let step = |t: &SourceTile| {
        let b = source.tile_bounds(t.tile).unwrap();
        ((b.max_elevation - b.min_elevation) / 65535.0) as f32
    };
    let mut cache = HashMap::new();
    // Depth 3 is two levels past the stored depth; these tiles sit on face
    // edges, at a cube corner, and across ancestors' edges.
    for tile in ["0/3/7/3", "0/3/0/0", "4/3/0/7", "2/3/3/4", "5/3/7/7", "1/3/4/0"] {
        let tile: TileAddress = tile.parse().unwrap();
        assert_eq!(source.tile(tile).unwrap().provenance, Provenance::Resampled { from_depth: 1 });
        // Different ancestors quantise the same edge samples independently:
        // they agree to within half a step of each.
        check_edges(&source, tile, &mut cache, |a, b| 0.5 * (step(a) + step(b)) + 1e-3);
    }
}

#[test]
fn pack_source_bounds_come_from_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let pack = write_analytic(&dir, Codec::Heights, 1);
    let source = PackSource::new(pack.clone());
    let stored: TileAddress = "3/1/0/1".parse().unwrap();
    let entry = pack.entry(stored).unwrap().unwrap();
    let bounds = source.tile_bounds(stored).unwrap();
    assert_eq!(bounds.min_elevation, f64::from(entry.min_elevation));
    assert_eq!(bounds.max_elevation, f64::from(entry.max_elevation));
    assert_eq!(bounds.provenance, Provenance::Measured);
    let deeper = "3/4/3/9".parse().unwrap();
    let resampled = source.tile_bounds(deeper).unwrap();
    assert_eq!(resampled.max_elevation, bounds.max_elevation, "a resampled tile is bounded by its ancestor");
    let tile = source.tile(deeper).unwrap();
    assert!(tile.heights.iter().all(|&h| f64::from(h) >= resampled.min_elevation - 1e-3));
    assert_eq!(source.data_depth(), Some(1));
}

#[test]
fn sampling_a_pack_gives_the_ground_where_a_person_stands() {
    let dir = tempfile::tempdir().unwrap();
    let source = PackSource::new(write_analytic(&dir, Codec::Heights, 2));
    let earth = Body::earth();
    for (lat, lon) in [(27.99, 86.93), (-33.9, 18.4), (0.0, 0.0), (89.9, 10.0), (-45.0, -179.99), (10.0, 180.0)] {
        let at = Geodetic::from_degrees(lat, lon, 0.0);
        let direction = earth.ellipsoid().geodetic_to_direction(at);
        let expected = analytic_height(direction);
        // The pack stores depths 0..=2 but measured only to depth 1.
        for (depth, measured) in [(1, true), (2, false), (6, false)] {
            let got = sample_ground(&source, at, depth).unwrap();
            assert!(
                (got.elevation_m - expected).abs() < 2.0,
                "({lat}, {lon}) depth {depth}: {} vs {expected}",
                got.elevation_m
            );
            assert_eq!(got.provenance.is_measured(), measured, "({lat}, {lon}) depth {depth}");
        }
    }
}

#[test]
fn a_regional_inset_wins_inside_its_box_and_blends_at_its_border() {
    let earth = Body::earth();
    let base: Arc<dyn HeightSource> = Arc::new(ProceduralSource::new(earth.clone(), 3));
    // A regional pack over the Alps, depth 0..=3, holding a flat 1234 m.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("alps.planetpack");
    let coverage = Coverage { south: 44.0, west: 5.0, north: 48.0, east: 12.0 };
    let mut s = spec(Codec::Heights);
    s.coverage = coverage;
    s.height_data_depth = 3;
    let centre = Geodetic::from_degrees(46.0, 8.5, 0.0);
    let tiles: Vec<TileAddress> = (0..=3).map(|d| planet_terrain::ground::locate(&earth, centre, d).0).collect();
    let writer = PackWriter::create(&path, s, tiles.iter().copied()).unwrap();
    for &t in &tiles {
        writer.put(t, &OwnedContent::of(t, |_| 1234.0).as_content(Codec::Heights)).unwrap();
    }
    writer.finish().unwrap();
    let inset = InsetSource::new(base.clone(), PackSource::new(Arc::new(Pack::open(&path).unwrap())));
    assert!(inset.covers(46.0, 8.5) && !inset.covers(43.0, 8.5));
    // Measured samples are the inset's up to its edge: no blend band.
    assert!(inset.covers(44.0, 8.5) && !inset.covers(43.9999, 8.5));

    let function = HeightFunction::new(Arc::new(inset), LayerStack::new());
    let inside = sample_ground(&function, centre, 3).unwrap();
    assert!((inside.elevation_m - 1234.0).abs() < 1e-3, "{inside:?}");
    let outside = Geodetic::from_degrees(30.0, -40.0, 0.0);
    assert_eq!(sample_ground(&function, outside, 3).unwrap(), sample_ground(base.as_ref(), outside, 3).unwrap());
    assert_eq!(function.data_depth(), Some(3));
}
