//! `planet-pack tile`: one tile as a hillshaded picture of its stored
//! samples (`--png`), or any tile's heights as the ground reads them,
//! past the stored depth too (`--heights`, .npy).
//!
//! The key decision: `--png` shows what the pack stores (a tile it does
//! not store is an error naming its deepest stored ancestor), `--heights`
//! what every consumer reads (resampled, with detail unless it is off).

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};
use planet_terrain::TileAddress;
use planet_terrain::ground::{HeightSource, Provenance};
use planet_terrain::pack::Pack;

use crate::image;
use crate::npy::npy_f32;

pub(crate) fn picture(pack: &Pack, tile: TileAddress, out: &Path, scale: u32) -> Result<()> {
    let Some(entry) = pack.entry(tile)? else {
        let hint = match pack.deepest_stored_ancestor(tile)? {
            Some(a) => format!("; its deepest stored ancestor is {}", a.tile()),
            None => String::new(),
        };
        bail!("tile {tile} is not stored in this pack{hint}");
    };
    let decoded = pack.decode(&entry)?;
    let body = &pack.header().body;
    let spacing = body.sample_spacing_m(tile.depth());
    let picture = image::hillshade(&decoded, spacing, scale);
    planet_cli::picture::write_png(out, &picture).with_context(|| format!("writing {}", out.display()))?;
    outln!("wrote {} ({}x{} px, tile {tile})", out.display(), picture.width, picture.height);
    Ok(())
}

/// The heights of any tile as NumPy's .npy (version 1.0): a header that
/// says little-endian f32 of shape (131, 131) in C order, padded so the
/// data starts on a 64-byte boundary, then the samples in stored order
/// (rows of constant j, apron included).
pub(crate) fn tile_heights(ground: &dyn HeightSource, tile: TileAddress, out: &Path) -> Result<()> {
    let t = ground.tile(tile).with_context(|| format!("reading tile {tile}"))?;
    let n = planet_terrain::geo::address::TILE_STORED_SAMPLES;
    let bytes = npy_f32(&t.heights, (n as usize, n as usize));
    planet_cli::fs::write_atomic(out, &bytes).with_context(|| format!("writing {}", out.display()))?;
    let provenance = match t.provenance {
        Provenance::Measured => "measured".to_owned(),
        Provenance::Resampled { from_depth } => format!("resampled from depth {from_depth}"),
        Provenance::Invented => "invented".to_owned(),
    };
    let voids = match &t.voids {
        Some(v) => format!("; {} samples voids, {}", v.samples.iter().filter(|&&s| s).count(), v.fill),
        None => String::new(),
    };
    outln!("wrote {} ({n}x{n} f32 heights of tile {tile}, {provenance}{voids})", out.display());
    Ok(())
}
