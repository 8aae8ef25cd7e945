//! The accuracy audit checks coarse tiles for real: a bake whose depth-0
//! tile strays from the filter of the level below by more than half a
//! quantisation step in one sample is refused, naming the filter, and the
//! same bake untouched passes.

use gdal::DriverManager;
use gdal::raster::Buffer;
use planet_terrain::pack::codec::decode_tile;
use planet_terrain::pack::{Codec, Coverage, EncodedTile, IndexEntry, PackError, PackSpec, PackWriter, TileContent};
use planet_terrain::{Body, TileAddress};

use super::*;
use crate::stages::pipeline::{TileBake, TileSink};

struct Quiet;
impl crate::Progress for Quiet {
    fn stage(&self, _: &str) {}
    fn tiles(&self, _: usize, _: usize) {}
}

/// Passes tiles on, moving one sample of `victim` by `by` metres first.
struct Tamper<'a> {
    writer: &'a PackWriter,
    victim: TileAddress,
    by: f64,
}

impl TileSink for Tamper<'_> {
    fn child_entry(&self, tile: TileAddress) -> Result<Option<IndexEntry>, PackError> {
        self.writer.staged_entry(tile)
    }
    fn stored(&self, tile: TileAddress) -> Result<Option<DecodedTile>, PackError> {
        self.writer.staged_tile(tile)
    }
    fn put(&self, tile: EncodedTile) -> Result<(), PackError> {
        if tile.tile != self.victim {
            return self.writer.put_encoded(&tile);
        }
        let decoded = decode_tile(&tile.entry_at(0), Codec::Heights, &tile.payload, 0)?;
        let mut heights = decoded.heights();
        heights[planet_terrain::pack::stored_index(40, 70)] += self.by;
        let content = TileContent {
            heights: &heights,
            classes: None,
            colour: None,
            geometric_error: f64::from(tile.geometric_error),
            measured: tile.measured,
            voids: None,
        };
        self.writer.put(tile.tile, &content)
    }
}

/// Bakes depths 0 and 1 of a 1-degree raster (data depth 1), moving one
/// sample of tile 2/0/0/0 by `by` metres; returns the audit's first
/// violation, if any.
fn audit_after_tampering(dir: &std::path::Path, by: f64) -> Option<String> {
    let dem = dir.join("dem.tif");
    let (w, h) = (360, 180);
    let values: Vec<f32> =
        (0..w * h).map(|k| (300.0 * ((k % w) as f64 * 0.07).sin() + 2.0 * (k / w) as f64) as f32).collect();
    let mut ds =
        DriverManager::get_driver_by_name("GTiff").unwrap().create_with_band_type::<f32, _>(&dem, w, h, 1).unwrap();
    ds.set_geo_transform(&[-180.0, 1.0, 0.0, 90.0, 0.0, -1.0]).unwrap();
    ds.set_spatial_ref(&gdal::spatial_ref::SpatialRef::from_epsg(4326).unwrap()).unwrap();
    ds.rasterband(1).unwrap().write((0, 0), (w, h), &mut Buffer::new((w, h), values)).unwrap();
    drop(ds);
    let body = Body::custom("tamper", [6_371_000.0; 3]).unwrap();
    let out = dir.join(format!("t{by}.planetpack"));
    let options = crate::BakeOptions {
        dem,
        imagery: None,
        classes: None,
        body: body.clone(),
        out: out.clone(),
        depth: Some(1),
        tier: "test".into(),
        jobs: Some(1),
        resume: false,
        region: None,
        landmarks: Vec::new(),
        memory: Some(512 << 20),
        compression_level: 1,
        if_unchanged: false,
        scene: None,
        void_value: None,
        shard: None,
        inputs_digest: None,
        base: None,
    };
    let memory = crate::limits::MemoryPlan::new(options.memory, 1, 1).unwrap();
    let inputs = Inputs::open(&options, &memory).unwrap();
    let spec = PackSpec {
        body,
        tier: "test".into(),
        codec: Codec::Heights,
        height_data_depth: 1,
        colour_data_depth: 0,
        coverage: Coverage::GLOBAL,
        fingerprint: [7; 32],
        compression_level: 1,
    };
    let tiles: Vec<TileAddress> =
        TileAddress::roots().into_iter().flat_map(|r| std::iter::once(r).chain(r.children().unwrap())).collect();
    let writer = PackWriter::create(&out, spec.clone(), tiles.iter().copied()).unwrap();
    let victim = TileAddress::new(2, 0, 0, 0).unwrap();
    let bake = TileBake {
        source: &inputs,
        spec: &spec,
        data_depth: 1,
        progress: &Quiet,
        already_done: 0,
        total: 30,
        held_level_tiles: memory.held_level_tiles(),
    };
    bake.run(&tiles, &Tamper { writer: &writer, victim, by }).unwrap();
    let assembled = writer.assemble().unwrap();
    accuracy_audit(&inputs, assembled.path(), 0..u8::MAX, memory.held_level_tiles(), &Quiet).unwrap().violation
}

#[test]
fn a_coarse_tile_off_the_filter_of_its_level_below_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(audit_after_tampering(dir.path(), 0.0), None);
    let message = audit_after_tampering(dir.path(), 5.0).expect("the audit saw the moved sample");
    assert!(message.contains("2/0/0/0 sample (40, 70)") && message.contains("filter of the level below"), "{message}");
}
