//! How a bake fails. One enum for every stage, so the binary prints one
//! cause chain; each variant names the file or tile at fault and, where
//! there is one, the flag that fixes it, because a bake that fails after an
//! hour must say exactly what to change.

use std::path::PathBuf;

use planet_terrain::TileAddress;
use planet_terrain::pack::PackError;

use crate::stages::raster::RasterError;

#[derive(Debug, thiserror::Error)]
pub enum BakeError {
    #[error(transparent)]
    Raster(#[from] RasterError),
    #[error(transparent)]
    Pack(#[from] PackError),
    /// A flag, or a combination of flags, that cannot be run as given.
    #[error("{0}")]
    Options(String),
    /// A file the bake reads or writes besides the rasters and the pack
    /// failed at the operating system (`cause`: its words).
    #[error("{path}: {doing}: {cause}")]
    Io { path: PathBuf, doing: &'static str, cause: String },
    /// The tile set's scratch files, beside the output, failed.
    #[error("the tile set's scratch file beside the output: {0}")]
    Scratch(std::io::Error),
    /// An `--inputs-digest` manifest that cannot be used, or an input that
    /// does not match it.
    #[error("{path}: {reason}")]
    Manifest { path: PathBuf, reason: String },
    /// A digest given up because something else failed first (never the
    /// error a bake reports).
    #[error("{path}: digest abandoned")]
    DigestAbandoned { path: PathBuf },
    /// The shard files given to a merge do not make one bake.
    #[error("{0}")]
    ShardSet(String),
    /// A region patch that this pack cannot take.
    #[error("{pack}: cannot patch: {reason}")]
    Patch { pack: PathBuf, reason: String },
    /// The worker pool could not be started.
    #[error("cannot start {jobs} worker threads: {cause}")]
    Threads { jobs: usize, cause: rayon::ThreadPoolBuildError },
    /// This executable could not be read to identify its build.
    #[error("identifying this build of planet-bake: {0}")]
    BuildId(String),
    #[error("{path}: landmark audit refused the raster: {message}")]
    Landmarks { path: PathBuf, message: String },
    /// The raster does not fit the ground of the pack given with `--base`.
    #[error("{path}: checked against the base pack {base} (--base), refused: {message}")]
    Base { path: PathBuf, base: PathBuf, message: String },
    /// The pack given with `--base` cannot be compared with.
    #[error("--base {base}: {message}")]
    BaseUnusable { base: PathBuf, message: String },
    #[error(
        "{path}: tile {tile} has no data at all (a void larger than a tile); give --void-value METRES to say what voids are (e.g. 0 for a land-only DEM's oceans), or fill the raster's voids first"
    )]
    NoData { path: PathBuf, tile: TileAddress },
    #[error("{path}: {message}")]
    Shard { path: PathBuf, message: String },
    #[error("accuracy audit failed: {message}; the pack was moved to {rejected}")]
    Audit { message: String, rejected: PathBuf },
    #[error("accuracy audit failed: {message}; and moving the failed pack {pack} aside failed: {cause}")]
    RejectFailed { message: String, pack: PathBuf, cause: std::io::Error },
    #[error("accuracy audit of the patch failed before anything was written: {message}; {pack} is unchanged")]
    PatchAudit { message: String, pack: PathBuf },
}
