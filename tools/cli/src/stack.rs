//! Opening `PACK...` as one ground: every command that takes packs takes a
//! stack, later packs over earlier ones inside their coverage, over the
//! body's ellipsoid (the viewer may put a procedural base beneath). One place, so
//! `planet-pack sample`, `planet-pack cut` and `planet-view` cannot disagree
//! about what a list of packs means. A pack given as an `http://` or
//! `https://` URL is read over HTTP range requests (`planet-remote`), with
//! the cache the binary was told of ([`PackOpener::new`]), in the binaries
//! built with the `remote` feature; the others (the bake) name the URL and
//! say they read files only, and link no HTTP client.

use std::path::{Path, PathBuf};
use std::sync::Arc;
#[cfg(feature = "remote")]
use std::sync::Mutex;

use anyhow::{Context, Result};
use planet_terrain::ground::{GroundStack, PackSource, StackedPack};
use planet_terrain::pack::Pack;

/// Opens packs, files or URLs, and keeps what the remote ones cost. A
/// binary makes one from its flags and passes it down: no process-global
/// state, so two in one process (tests) do not share a cache setting or
/// counters.
#[derive(Default)]
pub struct PackOpener {
    #[cfg(feature = "remote")]
    remote: planet_remote::RemoteOptions,
    /// The transfer counters of every remote pack this opener opened.
    #[cfg(feature = "remote")]
    transfers: Mutex<Vec<Arc<planet_remote::TransferStats>>>,
}

impl std::fmt::Debug for PackOpener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct("PackOpener");
        #[cfg(feature = "remote")]
        out.field("cache_dir", &self.remote.cache_dir);
        out.finish_non_exhaustive()
    }
}

#[cfg(feature = "remote")]
impl PackOpener {
    /// Remote packs cached as `--cache` and `--cache-bytes` say (in memory
    /// only without them).
    pub fn new(remote: &crate::args::Remote) -> PackOpener {
        let remote = planet_remote::RemoteOptions {
            cache_dir: remote.cache.clone(),
            cache_bytes: remote.cache_bytes,
            timeout: std::time::Duration::from_secs_f64(remote.request_timeout_s),
            deadline: std::time::Duration::from_secs_f64(remote.read_deadline_s),
            ..Default::default()
        };
        PackOpener { remote, transfers: Mutex::default() }
    }

    /// What every remote pack opened so far cost; `None` when no pack was
    /// remote.
    pub fn remote_transfers(&self) -> Option<RemoteTransfers> {
        let all = self.transfers.lock().unwrap_or_else(|p| p.into_inner());
        (!all.is_empty()).then(|| RemoteTransfers {
            packs: all.len(),
            requests: all.iter().map(|t| t.requests()).sum(),
            bytes: all.iter().map(|t| t.bytes()).sum(),
            retries: all.iter().map(|t| t.retries()).sum(),
        })
    }

    fn open_remote(&self, url: &str) -> Result<Pack> {
        let (pack, stats) =
            planet_remote::open_pack(url, &self.remote).with_context(|| format!("opening pack {url}"))?;
        self.transfers.lock().unwrap_or_else(|p| p.into_inner()).push(stats);
        Ok(pack)
    }
}

#[cfg(not(feature = "remote"))]
impl PackOpener {
    fn open_remote(&self, url: &str) -> Result<Pack> {
        anyhow::bail!("opening pack {url}: this tool reads pack files only (it is built without HTTP)")
    }
}

impl PackOpener {
    /// Opens one pack, a file or a URL (the header and root directory only).
    pub fn open_pack(&self, path: &Path) -> Result<Pack> {
        if is_remote(path) {
            return self.open_remote(&path.to_string_lossy());
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

/// What reading remote packs cost, summed over the packs an opener opened.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct RemoteTransfers {
    pub packs: usize,
    pub requests: u64,
    pub bytes: u64,
    pub retries: u64,
}

/// Whether `path` names a remote pack (`http://`, `https://`), whether or
/// not this build can read one.
pub fn is_remote(path: &Path) -> bool {
    let name = path.to_string_lossy();
    name.starts_with("http://") || name.starts_with("https://")
}
