//! Fixtures shared by the pack and source tests: an analytic ground that is
//! continuous over the whole sphere, and packs written from it.
#![allow(dead_code)]

use std::path::Path;

use glam::DVec3;
use planet_terrain::ground::sample_directions;
use planet_terrain::pack::{Codec, Coverage, PackSpec, PackWriter, PatchStamp, TileContent, WriteSummary};
use planet_terrain::{Body, Edge, TILE_CELLS, TileAddress};

/// Smooth elevation (metres) of a unit direction: continuous everywhere, so
/// tiles that share samples agree up to quantisation.
pub fn analytic_height(d: DVec3) -> f64 {
    3000.0 * (3.0 * d.x).sin() * (2.0 * d.y).cos() + 1500.0 * d.z - 800.0 * (5.0 * d.y * d.z).sin()
}

pub fn analytic_class(d: DVec3) -> u8 {
    if analytic_height(d) < 0.0 { 1 } else { 2 + (d.z.abs() * 3.0) as u8 }
}

pub fn analytic_colour(d: DVec3) -> [u8; 3] {
    let c = |v: f64| ((v * 0.5 + 0.5) * 255.0).round() as u8;
    [c(d.x), c(d.y), c(d.z)]
}

/// Owned samples of one tile.
#[derive(Clone, Debug)]
pub struct OwnedContent {
    pub heights: Vec<f64>,
    pub classes: Vec<u8>,
    pub colour: Vec<[u8; 3]>,
    pub geometric_error: f64,
}

impl OwnedContent {
    pub fn of(tile: TileAddress, height: impl Fn(DVec3) -> f64) -> OwnedContent {
        let directions = sample_directions(tile);
        OwnedContent {
            heights: directions.iter().map(|&d| height(d)).collect(),
            classes: directions.iter().map(|&d| analytic_class(d)).collect(),
            colour: directions.iter().map(|&d| analytic_colour(d)).collect(),
            geometric_error: 100.0 / f64::from(1u32 << tile.depth()),
        }
    }

    pub fn analytic(tile: TileAddress) -> OwnedContent {
        OwnedContent::of(tile, analytic_height)
    }

    pub fn as_content(&self, codec: Codec) -> TileContent<'_> {
        TileContent {
            heights: &self.heights,
            classes: codec.has_classes().then_some(&self.classes[..]),
            colour: codec.has_colour().then_some(&self.colour[..]),
            geometric_error: self.geometric_error,
            measured: true,
            voids: None,
        }
    }
}

pub fn spec(codec: Codec) -> PackSpec {
    PackSpec {
        body: Body::earth(),
        tier: "test".into(),
        codec,
        height_data_depth: 1,
        colour_data_depth: if codec.has_colour() { 1 } else { 0 },
        coverage: Coverage::GLOBAL,
        fingerprint: [7; 32],
        compression_level: 3,
    }
}

pub fn tiles_to_depth(max_depth: u8) -> Vec<TileAddress> {
    (0..=max_depth)
        .flat_map(|depth| {
            let n = 1u32 << depth;
            (0..6u8).flat_map(move |f| {
                (0..n).flat_map(move |x| (0..n).map(move |y| TileAddress::new(f, depth, x, y).unwrap()))
            })
        })
        .collect()
}

/// The test spec with data depths no deeper than the tile set.
pub fn spec_for(codec: Codec, tiles: &[TileAddress]) -> PackSpec {
    let deepest = tiles.iter().map(|t| t.depth()).max().unwrap_or(0);
    let mut s = spec(codec);
    s.height_data_depth = s.height_data_depth.min(deepest);
    s.colour_data_depth = s.colour_data_depth.min(deepest);
    s
}

/// Writes the analytic ground for `tiles` in the given order, on one thread.
pub fn write_pack(path: &Path, codec: Codec, tiles: &[TileAddress]) -> WriteSummary {
    let writer = PackWriter::create(path, spec_for(codec, tiles), tiles.iter().copied()).unwrap();
    for &tile in tiles {
        writer.put(tile, &OwnedContent::analytic(tile).as_content(codec)).unwrap();
    }
    writer.finish().unwrap()
}

/// Stored sample index `steps_in` samples inside `edge`, `along` samples
/// along it (`steps_in` -1 is the apron).
pub fn sample_inside(edge: Edge, along: i32, steps_in: i32) -> (i32, i32) {
    let last = TILE_CELLS as i32;
    match edge {
        Edge::MinU => (steps_in, along),
        Edge::MaxU => (last - steps_in, along),
        Edge::MinV => (along, steps_in),
        Edge::MaxV => (along, last - steps_in),
    }
}

/// A patch stamp for tests: `fingerprint` bytes all `byte`, a fixed box and
/// inputs digest (the header records them; tests check them back).
pub fn stamp(byte: u8) -> PatchStamp {
    PatchStamp {
        fingerprint: [byte; 32],
        region: Coverage { south: 1.0, west: 2.0, north: 3.0, east: 4.0 },
        inputs: [5; 16],
        detail: None,
    }
}
