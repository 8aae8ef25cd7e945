//! Opening `PACK...` as one ground: every command that takes packs takes a
//! stack, later packs over earlier ones inside their coverage, over the
//! body's ellipsoid (the viewer may put a procedural base beneath). One place, so
//! `planet-pack sample`, `planet-pack cut` and `planet-view` cannot disagree
//! about what a list of packs means.
//!
//! The key decision: a pack given as an `http://` or `https://` URL is
//! opened by whatever the binary handed its opener
//! ([`PackOpener::reading_urls`]; `planet-remote`'s `HttpPacks` in the
//! viewer and planet-pack). This crate names no HTTP client and has no
//! feature that brings one, so building the bake beside the viewer cannot
//! link one into it; an opener given nothing (the bake's) names the URL
//! and says it reads files only.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use planet_terrain::ground::{GroundStack, PackSource, StackedPack};
use planet_terrain::pack::Pack;

/// How a binary opens a pack named by URL.
type OpenUrl = dyn Fn(&str) -> Result<Pack> + Send + Sync;

/// Opens packs, files or URLs. A binary makes one and passes it down: no
/// process-global state, so two in one process (tests) do not share a
/// cache setting or counters.
#[derive(Default)]
pub struct PackOpener {
    /// Opens a URL; `None`: this binary reads files only.
    urls: Option<Arc<OpenUrl>>,
}

impl std::fmt::Debug for PackOpener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackOpener").field("reads_urls", &self.urls.is_some()).finish()
    }
}

impl PackOpener {
    /// An opener that opens URLs with `open`, files as any opener does.
    pub fn reading_urls<E>(open: impl Fn(&str) -> std::result::Result<Pack, E> + Send + Sync + 'static) -> PackOpener
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        PackOpener { urls: Some(Arc::new(move |url: &str| Ok(open(url)?))) }
    }

    fn open_url(&self, url: &str) -> Result<Pack> {
        match &self.urls {
            Some(open) => open(url).with_context(|| format!("opening pack {url}")),
            None => anyhow::bail!("opening pack {url}: this tool reads pack files only (it is built without HTTP)"),
        }
    }
}

impl PackOpener {
    /// Opens one pack, a file or a URL (the header and root directory only).
    pub fn open_pack(&self, path: &Path) -> Result<Pack> {
        if is_remote(path) {
            return self.open_url(&path.to_string_lossy());
        }
        Pack::open(path).with_context(|| format!("opening pack {}", path.display()))
    }

    /// Opens every pack (the header and root directory only), naming the
    /// file or URL that fails.
    pub fn open_packs(&self, paths: &[PathBuf]) -> Result<Vec<StackedPack>> {
        paths
            .iter()
            .map(|path| {
                let pack = self.open_pack(path)?;
                Ok(StackedPack { name: path.display().to_string(), source: PackSource::new(Arc::new(pack)) })
            })
            .collect()
    }

    /// `paths` over their body's ellipsoid at 0 m; `None` when there are none.
    pub fn open_stack(&self, paths: &[PathBuf]) -> Result<Option<GroundStack>> {
        Ok(GroundStack::of_packs(self.open_packs(paths)?)?)
    }
}

/// Whether `path` names a remote pack (`http://`, `https://`), whether or
/// not this build can read one.
pub fn is_remote(path: &Path) -> bool {
    let name = path.to_string_lossy();
    name.starts_with("http://") || name.starts_with("https://")
}
