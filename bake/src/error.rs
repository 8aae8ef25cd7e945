//! How a bake fails. One enum for every stage, so the binary prints one
//! cause chain; each variant names the file or tile at fault and, where
//! there is one, the flag that fixes it, because a bake that fails after an
//! hour must say exactly what to change.

use std::path::PathBuf;

use planet_terrain::TileAddress;
use planet_terrain::pack::PackError;

use crate::raster::RasterError;

#[derive(Debug, thiserror::Error)]
pub enum BakeError {
    #[error(transparent)]
    Raster(#[from] RasterError),
    #[error(transparent)]
    Pack(#[from] PackError),
    #[error("{0}")]
    Options(String),
    #[error("{path}: landmark audit refused the raster: {message}")]
    Landmarks { path: PathBuf, message: String },
    #[error(
        "{path}: tile {tile} has no data at all (a void larger than a tile); give --void-value METRES to say what voids are (e.g. 0 for a land-only DEM's oceans), or fill the raster's voids first"
    )]
    NoData { path: PathBuf, tile: TileAddress },
    #[error("{path}: {message}")]
    Shard { path: PathBuf, message: String },
    #[error("accuracy audit failed: {message}; the pack was moved to {rejected}")]
    Audit { message: String, rejected: PathBuf },
    #[error("accuracy audit of the patch failed before anything was written: {message}; {pack} is unchanged")]
    PatchAudit { message: String, pack: PathBuf },
}
