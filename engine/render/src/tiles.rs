//! Tiles produced on the frame, and what a failed one means.
//!
//! The key decision: a failure is judged by what failed, not where. Bytes
//! that could not be read (a network or disk error, after the byte
//! source's own retries) may read next time: the tile is retried after a
//! backoff. Bytes that were read and are wrong (a checksum, a decode) will
//! be wrong next time too: the tile is given up and its ancestor drawn for
//! good. A source that changed under the reader (a file rewritten, a
//! server's pack replaced) is not a tile's problem: it ends the frame, as
//! anything else does.

use planet_terrain::geo::address::TileAddress;
use planet_terrain::ground::{HeightSource, SourceError, SourceTile};
use planet_terrain::pack::PackError;
use std::time::{Duration, Instant};

use crate::conv::EncodedUpload;

/// A tile ready for its slot: produced on the frame (encoded as it is
/// staged), or produced and encoded by the loader (only copied).
#[derive(Debug)]
pub(crate) enum Ready {
    Source(SourceTile),
    Encoded(EncodedUpload),
}

/// An error that may not happen again: reading the bytes failed (a
/// network or disk error, after the byte source's own retries), not the
/// bytes themselves.
pub(crate) fn is_transient(error: &SourceError) -> bool {
    let SourceError::Pack(pack) = error else { return false };
    match pack.rule() {
        PackError::Io { .. } => true,
        PackError::Fetch { failure, .. } => failure.is_transient(),
        _ => false,
    }
}

/// Whether the source was asked for the tile and failed, rather than
/// refusing at once while it waits a failure out (no new attempt).
pub(crate) fn was_asked(error: &SourceError) -> bool {
    !matches!(error, SourceError::Pack(pack) if matches!(pack.rule(), PackError::Fetch { asked: false, .. }))
}

/// While a failure of the same kind goes on, it is said again at most this
/// often (a window open for an hour over a dead server says it once a
/// minute, not once a tile).
const SAY_AGAIN_AFTER: Duration = Duration::from_secs(60);

/// What the scene says about its source failing for now: one notice when
/// reads begin to fail (the error names the source and what happened), the
/// same again only after [`SAY_AGAIN_AFTER`] or when what happened changes,
/// and one when the tiles that waited were read.
#[derive(Debug, Default)]
pub(crate) struct SourceTrouble {
    failing: Option<Failing>,
    notices: Vec<String>,
}

#[derive(Debug)]
struct Failing {
    /// The error's text without its byte range: what is said again.
    kind: &'static str,
    said_at: Instant,
    reads: usize,
    /// A read succeeded after the last failure.
    read_since: bool,
}

impl SourceTrouble {
    /// A read failed for now; `then` says what becomes of its tile.
    pub(crate) fn failed(&mut self, error: &SourceError, then: &str) {
        // Transient errors are I/O errors or fetches failing or slow.
        let kind = match error {
            SourceError::Pack(pack) => match pack.rule() {
                PackError::Fetch { failure, .. } => failure.word(),
                _ => "io",
            },
            SourceError::NoData { .. } => "no data",
        };
        match &mut self.failing {
            Some(failing) if failing.kind == kind && failing.said_at.elapsed() < SAY_AGAIN_AFTER => {
                failing.reads += 1;
                failing.read_since = false;
            }
            _ => {
                let reads = self.failing.as_ref().map_or(0, |f| f.reads) + 1;
                self.notices.push(format!("{error}; {then}"));
                self.failing = Some(Failing { kind, said_at: Instant::now(), reads, read_since: false });
            }
        }
    }

    /// A frame read tiles and none failed for now.
    pub(crate) fn read_again(&mut self) {
        if let Some(failing) = &mut self.failing {
            failing.read_since = true;
        }
    }

    /// Once a read succeeded since the failures and no tile waits for a
    /// retry (`retrying`), the source answers again.
    pub(crate) fn settle(&mut self, retrying: usize) {
        if retrying == 0
            && self.failing.as_ref().is_some_and(|f| f.read_since)
            && let Some(failing) = self.failing.take()
        {
            self.notices.push(format!(
                "the ground's source answers again: the tiles that waited are read ({} reads had failed)",
                failing.reads
            ));
        }
    }

    pub(crate) fn is_failing(&self) -> bool {
        self.failing.is_some()
    }

    pub(crate) fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }
}

/// The stored tile named by an error that concerns one tile's data only
/// (its payload's checksum, decode or content); `None` for anything else.
pub(crate) fn unreadable_tile(error: &SourceError) -> Option<TileAddress> {
    match error {
        SourceError::Pack(pack) => match pack.rule() {
            PackError::PayloadChecksum { tile, .. }
            | PackError::PayloadDecode { tile, .. }
            | PackError::BadContent { tile, .. } => Some(*tile),
            _ => None,
        },
        SourceError::NoData { .. } => None,
    }
}

/// Produces the tiles to upload, several threads at once; each tile's own
/// outcome, in order.
pub(crate) fn produce_tiles(
    source: &dyn HeightSource,
    tiles: Vec<TileAddress>,
) -> Vec<std::result::Result<SourceTile, SourceError>> {
    if tiles.is_empty() {
        return Vec::new();
    }
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(tiles.len());
    let chunk = tiles.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = tiles
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(|&t| source.tile(t)).collect::<Vec<_>>()))
            .collect();
        let mut out = Vec::with_capacity(tiles.len());
        for handle in handles {
            out.extend(handle.join().expect("tile threads do not panic"));
        }
        out
    })
}
