//! Packs read over HTTP: `http://` and `https://` URLs wherever a pack path
//! is accepted.
//!
//! The key decision: a remote pack is just another [`PackBytes`](planet_terrain::pack::PackBytes): the
//! terrain core's reader, with its bounded open and page-at-a-time
//! validation, is unchanged, and this crate only answers "give me these
//! bytes". Bytes are fetched in aligned 16 KiB blocks through one HTTP
//! range request per run of missing blocks (so adjacent tiles coalesce),
//! kept in a memory LRU and optionally an on-disk cache with a byte budget,
//! and every response must carry the validator (ETag, else Last-Modified)
//! seen at open: a pack replaced mid-session is an error, never a mix of
//! two versions. Transient failures (5xx, 429, timeouts, broken or
//! truncated bodies) are retried with exponential backoff.
//!
//! The client is `ureq` with rustls: blocking, small, keep-alive connection
//! pooling in its `Agent`; requests run concurrently from the viewer's
//! loader threads, each on its own pooled connection.

mod cache;
mod error;
mod http;
#[cfg(feature = "testing")]
pub mod testing;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use error::RemoteError;
pub use http::{HttpBytes, TransferStats};
use planet_terrain::pack::Pack;

/// Bytes of one cache block (and the unit of a range request).
pub const BLOCK_BYTES: u64 = 16 * 1024;

/// How remote packs are fetched and cached.
#[derive(Clone, Debug)]
pub struct RemoteOptions {
    /// An on-disk block cache shared by every remote pack (none: memory only).
    pub cache_dir: Option<PathBuf>,
    /// The disk cache's budget; the least recently used blocks go first.
    pub cache_bytes: u64,
    /// The memory cache's budget per pack.
    pub memory_bytes: u64,
    /// One request's limit, connection included.
    pub timeout: Duration,
    /// One read's limit, every attempt and wait included: a server that
    /// answers too slowly fails the read by then (with the default 15 s a
    /// request and four retries it took 77 s).
    pub deadline: Duration,
    /// Attempts after the first for a transient failure.
    pub retries: u32,
    /// The first retry's wait; each next one doubles it.
    pub backoff: Duration,
}

impl Default for RemoteOptions {
    fn default() -> RemoteOptions {
        RemoteOptions {
            cache_dir: None,
            cache_bytes: 1 << 30,
            memory_bytes: 64 << 20,
            timeout: Duration::from_secs(15),
            deadline: Duration::from_secs(30),
            retries: 4,
            backoff: Duration::from_millis(100),
        }
    }
}

impl RemoteOptions {
    /// The defaults with what a command line sets: the disk cache (none:
    /// memory only) and its budget, one request's timeout and one read's
    /// deadline, in seconds.
    pub fn from_flags(cache_dir: Option<PathBuf>, cache_bytes: u64, timeout_s: f64, deadline_s: f64) -> RemoteOptions {
        RemoteOptions {
            cache_dir,
            cache_bytes,
            timeout: Duration::from_secs_f64(timeout_s),
            deadline: Duration::from_secs_f64(deadline_s),
            ..RemoteOptions::default()
        }
    }
}

/// Remote packs opened with one set of options, and what reading them has
/// cost. A binary that reads packs over HTTP makes one and hands
/// [`HttpPacks::opener`] to its pack opener (`planet_cli::stack::PackOpener`):
/// the client is injected, not switched on by a feature of the shared CLI
/// crate, so no build of several binaries together (feature unification)
/// links it into the bake, which reads files only.
#[derive(Debug, Default)]
pub struct HttpPacks {
    options: RemoteOptions,
    /// The transfer counters of every pack opened so far.
    opened: Mutex<Vec<Arc<TransferStats>>>,
}

/// What reading remote packs cost, summed over the packs opened.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Transfers {
    pub packs: usize,
    pub requests: u64,
    pub bytes: u64,
    pub retries: u64,
}

impl HttpPacks {
    pub fn new(options: RemoteOptions) -> Arc<HttpPacks> {
        Arc::new(HttpPacks { options, opened: Mutex::default() })
    }

    /// Opens the pack at `url` ([`open_pack`]) and keeps its counters.
    pub fn open(&self, url: &str) -> Result<Pack, RemoteError> {
        let (pack, stats) = open_pack(url, &self.options)?;
        self.opened.lock().unwrap_or_else(|p| p.into_inner()).push(stats);
        Ok(pack)
    }

    /// [`HttpPacks::open`] as a function a pack opener keeps.
    pub fn opener(self: &Arc<Self>) -> impl Fn(&str) -> Result<Pack, RemoteError> + Send + Sync + 'static {
        let packs = Arc::clone(self);
        move |url| packs.open(url)
    }

    /// What every pack opened so far cost; `None` when none was.
    pub fn transfers(&self) -> Option<Transfers> {
        let all = self.opened.lock().unwrap_or_else(|p| p.into_inner());
        (!all.is_empty()).then(|| Transfers {
            packs: all.len(),
            requests: all.iter().map(|t| t.requests()).sum(),
            bytes: all.iter().map(|t| t.bytes()).sum(),
            retries: all.iter().map(|t| t.retries()).sum(),
        })
    }
}

/// True when `path` names a remote pack rather than a file.
pub fn is_url(path: &str) -> bool {
    path.starts_with("http://") || path.starts_with("https://")
}

/// Opens the pack at `url`: one request for the header and the root (the
/// first blocks), validated as any pack is; returns the transfer counters
/// beside it.
pub fn open_pack(url: &str, options: &RemoteOptions) -> Result<(Pack, Arc<TransferStats>), RemoteError> {
    let bytes = HttpBytes::open(url, options)?;
    let stats = bytes.stats();
    let pack = Pack::adopt(Box::new(bytes)).map_err(|cause| RemoteError::Pack { url: url.to_owned(), cause })?;
    Ok((pack, stats))
}
