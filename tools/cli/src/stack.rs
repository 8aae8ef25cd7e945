//! Opening `PACK...` as one ground: every command that takes packs takes a
//! stack, later packs over earlier ones inside their coverage, over the
//! body's ellipsoid (the viewer may put a procedural base beneath). One place, so
//! `planet-pack sample`, `planet-pack cut` and `planet-view` cannot disagree
//! about what a list of packs means. A pack given as an `http://` or
//! `https://` URL is read over HTTP range requests (`planet-remote`), with
//! the cache the binary was told of ([`PackOpener::new`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use planet_terrain::ground::{GroundStack, PackSource, StackedPack};
use planet_terrain::pack::Pack;

/// Opens packs, files or URLs, and keeps what the remote ones cost. A
/// binary makes one from its flags and passes it down: no process-global
/// state, so two in one process (tests) do not share a cache setting or
/// counters.
#[derive(Default)]
pub struct PackOpener {
    remote: planet_remote::RemoteOptions,
    /// The transfer counters of every remote pack this opener opened.
    transfers: Mutex<Vec<Arc<planet_remote::TransferStats>>>,
}

impl std::fmt::Debug for PackOpener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackOpener").field("cache_dir", &self.remote.cache_dir).finish_non_exhaustive()
    }
}

impl PackOpener {
    /// Remote packs cached as `--cache` and `--cache-bytes` say (in memory
    /// only without them).
    pub fn new(remote: &crate::args::Remote) -> PackOpener {
        let remote = planet_remote::RemoteOptions {
            cache_dir: remote.cache.clone(),
            cache_bytes: remote.cache_bytes,
            ..Default::default()
        };
        PackOpener { remote, transfers: Mutex::default() }
    }

    /// What every remote pack opened so far cost: requests, bytes, retries;
    /// `None` when no pack was remote.
    pub fn remote_transfers(&self) -> Option<serde_json::Value> {
        let all = self.transfers.lock().unwrap_or_else(|p| p.into_inner());
        (!all.is_empty()).then(|| {
            serde_json::json!({
                "packs": all.len(),
                "requests": all.iter().map(|t| t.requests()).sum::<u64>(),
                "bytes": all.iter().map(|t| t.bytes()).sum::<u64>(),
                "retries": all.iter().map(|t| t.retries()).sum::<u64>(),
            })
        })
    }

    /// Opens one pack, a file or a URL (the header and root directory only).
    pub fn open_pack(&self, path: &Path) -> Result<Pack> {
        let name = path.to_string_lossy();
        if is_remote(path) {
            let (pack, stats) =
                planet_remote::open_pack(&name, &self.remote).with_context(|| format!("opening pack {name}"))?;
            self.transfers.lock().unwrap_or_else(|p| p.into_inner()).push(stats);
            return Ok(pack);
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

/// Whether `path` names a remote pack (`http://`, `https://`).
pub fn is_remote(path: &Path) -> bool {
    planet_remote::is_url(&path.to_string_lossy())
}
