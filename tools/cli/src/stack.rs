//! Opening `PACK...` as one ground: every command that takes packs takes a
//! stack, later packs over earlier ones inside their coverage, over the
//! body's ellipsoid (the viewer may put a procedural base beneath). One place, so
//! `planet-pack sample`, `planet-pack cut` and `planet-view` cannot disagree
//! about what a list of packs means.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use planet_terrain::ground::{GroundStack, PackSource, StackedPack};
use planet_terrain::pack::Pack;

/// Opens every pack (the header and index only), naming the file that fails.
pub fn open_packs(paths: &[PathBuf]) -> Result<Vec<StackedPack>> {
    paths
        .iter()
        .map(|path| {
            let pack = Pack::open(path).with_context(|| format!("opening pack {}", path.display()))?;
            Ok(StackedPack { name: path.display().to_string(), source: PackSource::new(Arc::new(pack)) })
        })
        .collect()
}

/// `paths` over their body's ellipsoid at 0 m; `None` when there are none.
pub fn open_stack(paths: &[PathBuf]) -> Result<Option<GroundStack>> {
    Ok(GroundStack::of_packs(open_packs(paths)?)?)
}
