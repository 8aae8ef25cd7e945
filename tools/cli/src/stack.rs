//! Opening `PACK...` as one ground: every command that takes packs takes a
//! stack, later packs over earlier ones inside their coverage, over the
//! body's ellipsoid (the viewer may put a procedural base beneath). One place, so
//! `planet-pack sample`, `planet-pack cut` and `planet-view` cannot disagree
//! about what a list of packs means. A pack given as an `http://` or
//! `https://` URL is read over HTTP range requests (`planet-remote`), with
//! the cache the binary was told of ([`set_remote`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result};
use planet_terrain::ground::{GroundStack, PackSource, StackedPack};
use planet_terrain::pack::Pack;

static REMOTE: OnceLock<planet_remote::RemoteOptions> = OnceLock::new();
/// The transfer counters of every remote pack this process opened.
static TRANSFERS: std::sync::Mutex<Vec<Arc<planet_remote::TransferStats>>> = std::sync::Mutex::new(Vec::new());

/// What every remote pack opened so far cost: requests, bytes, retries;
/// `None` when no pack was remote.
pub fn remote_transfers() -> Option<serde_json::Value> {
    let all = TRANSFERS.lock().unwrap_or_else(|p| p.into_inner());
    (!all.is_empty()).then(|| {
        serde_json::json!({
            "packs": all.len(),
            "requests": all.iter().map(|t| t.requests()).sum::<u64>(),
            "bytes": all.iter().map(|t| t.bytes()).sum::<u64>(),
            "retries": all.iter().map(|t| t.retries()).sum::<u64>(),
        })
    })
}

/// Sets, once per process, how remote packs are cached (`--cache`,
/// `--cache-bytes`); without it they are cached in memory only.
pub fn set_remote(remote: &crate::args::Remote) {
    let options = planet_remote::RemoteOptions {
        cache_dir: remote.cache.clone(),
        cache_bytes: remote.cache_bytes,
        ..Default::default()
    };
    let _ = REMOTE.set(options);
}

/// Whether `path` names a remote pack (`http://`, `https://`).
pub fn is_remote(path: &Path) -> bool {
    planet_remote::is_url(&path.to_string_lossy())
}

/// Opens one pack, a file or a URL (the header and root directory only).
pub fn open_pack(path: &Path) -> Result<Pack> {
    let name = path.to_string_lossy();
    if is_remote(path) {
        let options = REMOTE.get_or_init(Default::default);
        let (pack, stats) = planet_remote::open_pack(&name, options).with_context(|| format!("opening pack {name}"))?;
        TRANSFERS.lock().unwrap_or_else(|p| p.into_inner()).push(stats);
        return Ok(pack);
    }
    Pack::open(path).with_context(|| format!("opening pack {}", path.display()))
}

/// Opens every pack (the header and root directory only), naming the file
/// or URL that fails.
pub fn open_packs(paths: &[PathBuf]) -> Result<Vec<StackedPack>> {
    paths
        .iter()
        .map(|path| {
            let pack = open_pack(path)?;
            Ok(StackedPack { name: path.display().to_string(), source: PackSource::new(Arc::new(pack)) })
        })
        .collect()
}

/// `paths` over their body's ellipsoid at 0 m; `None` when there are none.
pub fn open_stack(paths: &[PathBuf]) -> Result<Option<GroundStack>> {
    Ok(GroundStack::of_packs(open_packs(paths)?)?)
}
