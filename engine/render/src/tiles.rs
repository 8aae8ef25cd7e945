//! Tiles produced on the frame, and what a failed one means.
//!
//! The key decision: a failure is judged by what failed, not where. Bytes
//! that could not be read (a network or disk error, after the byte
//! source's own retries) may read next time: the tile is retried after a
//! backoff. Bytes that were read and are wrong (a checksum, a decode) will
//! be wrong next time too: the tile is given up and its ancestor drawn for
//! good. Anything else is not a tile's problem and ends the frame.

use planet_terrain::geo::address::TileAddress;
use planet_terrain::ground::{HeightSource, SourceError, SourceTile};
use planet_terrain::pack::PackError;

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
    matches!(error, SourceError::Pack(pack) if matches!(pack.rule(), PackError::Io { .. }))
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
