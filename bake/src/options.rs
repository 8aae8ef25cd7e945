//! What a bake is told: the inputs, the body, the output and the knobs.
//! Options are plain data the caller fills in (the binary from flags, tests
//! directly); everything derived from them (the codec, the fingerprint, the
//! depth) is computed by the stage that needs it, so two callers that set the
//! same fields always get the same bake.

use std::path::PathBuf;

use planet_terrain::Body;
use planet_terrain::layers::LayerStack;
use planet_terrain::pack::{Codec, Coverage};

use crate::landmarks::Landmark;

/// The box a region patch re-bakes: a coverage box, degrees.
pub type Region = Coverage;

/// Parses `--region S,W,N,E` in degrees, by the one rule every command's
/// `--region` follows ([`planet_cli::args::region`]).
pub fn parse_region(text: &str) -> Result<Region, String> {
    planet_cli::args::region(text).map_err(|e| format!("--region {e}"))
}

/// Everything a bake is told.
#[derive(Clone, Debug)]
pub struct BakeOptions {
    /// The DEM. A region patch may leave it empty (`PathBuf::new()`) to
    /// patch colour (`imagery`) or classes alone; a full bake needs one.
    pub dem: PathBuf,
    pub imagery: Option<PathBuf>,
    pub classes: Option<PathBuf>,
    pub body: Body,
    pub out: PathBuf,
    pub depth: Option<u8>,
    pub tier: String,
    pub jobs: Option<usize>,
    pub resume: bool,
    pub region: Option<Region>,
    pub landmarks: Vec<Landmark>,
    /// The bake's memory budget in bytes (`--memory`); `None` is the
    /// default, half the machine's memory. It sizes the caches and bounds
    /// the depth; it never changes the pack's bytes.
    pub memory: Option<u64>,
    pub compression_level: i8,
    /// Keep an existing `out` whose fingerprint says it was baked from these
    /// same inputs and parameters, instead of baking again.
    pub if_unchanged: bool,
    /// Layers (craters, pads, ...) baked into the ground, with the scene's
    /// text for the fingerprint.
    pub scene: Option<(LayerStack, String)>,
    /// The elevation every void (nodata) sample takes, instead of filling
    /// voids from the surrounding samples (e.g. 0 for the oceans of a
    /// land-only DEM). Either way the samples are counted and their tiles
    /// are not marked measured.
    pub void_value: Option<f64>,
    /// Bake only this part of a sharded bake, into a shard file at `out`
    /// (`planet-bake shard`); the merge makes the pack.
    pub shard: Option<planet_cli::shard::Shard>,
    /// A digest manifest of the inputs (`--inputs-digest`, made once by
    /// `planet-bake digest`): each input is checked against it by its length
    /// and a sample of its chunks instead of being read whole.
    pub inputs_digest: Option<PathBuf>,
    /// A pack of the ground under the raster (`--base`): a raster the
    /// landmark audit cannot check (no landmark inside) is compared with its
    /// shape before anything is written (`stages::base_audit`).
    pub base: Option<PathBuf>,
}

impl BakeOptions {
    /// Whether a DEM was given (see `dem`).
    pub fn has_dem(&self) -> bool {
        !self.dem.as_os_str().is_empty()
    }

    /// The codec these inputs make: colour with imagery, classes with a
    /// class raster, heights alone otherwise.
    /// Source rasters this bake reads, and their chunk-cache weights: the
    /// DEM and imagery 4 each, classes 1 (read nearest, once a tile).
    pub(crate) fn raster_weights(&self) -> (usize, usize, usize) {
        (
            if self.has_dem() { 4 } else { 0 },
            if self.imagery.is_some() { 4 } else { 0 },
            usize::from(self.classes.is_some()),
        )
    }

    pub(crate) fn codec(&self) -> Codec {
        match (&self.imagery, &self.classes) {
            (Some(_), _) => Codec::HeightsClassesColour,
            (None, Some(_)) => Codec::HeightsClasses,
            (None, None) => Codec::Heights,
        }
    }
}

/// What a merge is told.
#[derive(Clone, Debug)]
pub struct MergeOptions {
    pub shards: Vec<PathBuf>,
    pub out: PathBuf,
    pub jobs: Option<usize>,
    pub memory: Option<u64>,
    /// Continue a killed merge's journal.
    pub resume: bool,
    /// The whole merge here, or one stage of a merge in stages.
    pub stage: MergeStage,
}

/// A merge in one process, or one of the three stages of a merge whose
/// payloads are copied by many tasks (`merge_stages`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MergeStage {
    #[default]
    Whole,
    /// Lay the pack out for this many copy tasks.
    LayOut { copy_tasks: u32 },
    /// Copy one task's range of the laid-out pack.
    Copy { task: u32 },
    /// Check the copied pack and rename it into place.
    Commit,
}

/// Progress callbacks (the binary draws a bar or prints lines).
pub trait Progress: Sync {
    fn stage(&self, message: &str);
    fn tiles(&self, done: usize, total: usize);
}
