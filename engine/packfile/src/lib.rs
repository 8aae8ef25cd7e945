//! planet-packfile: the `.planetpack` format, one indexed file per body and
//! quality tier.
//!
//! docs/planetpack.md is the authority on the layout; [`format`](mod@format) is its
//! transcription, [`index`] the paged index's layout and pages, [`codec`] the payload encoding, [`reader`] the validating
//! reader, [`writer`] the deterministic writer, [`parts`] a pack assembled from several sources of finished tiles (a sharded bake's merge), [`patch`] in-place region
//! rewrites and [`journal`] their redo journal; [`crash`] holds the test
//! hooks that kill a writer inside a named crash window. All fail with the
//! one [`PackError`].

#[cfg(feature = "write")]
mod assemble;
pub mod codec;
#[cfg(feature = "write")]
mod commit;
#[cfg(feature = "write")]
pub mod crash;
mod entry;
pub mod error;
pub mod files;
#[cfg(feature = "write")]
mod finish;
pub mod format;
mod header;
mod header_decode;
pub mod index;
#[cfg(feature = "write")]
pub mod journal;
mod law;
#[cfg(feature = "write")]
pub mod lock;
pub mod names;
#[cfg(feature = "write")]
pub mod parts;
#[cfg(feature = "write")]
pub mod patch;
#[cfg(feature = "write")]
pub mod ranged;
pub mod reader;
#[cfg(feature = "write")]
mod record;
#[cfg(feature = "write")]
mod spec;
#[cfg(feature = "write")]
mod staged;
#[cfg(feature = "testing")]
pub mod testing;
#[cfg(feature = "write")]
pub mod upgrade;
#[cfg(feature = "write")]
pub mod writer;

pub use codec::{DecodedTile, EncodedTile, TileContent, stored_index};
pub use error::{FetchFailure, PackError};
pub use format::{Codec, Coverage, DetailLaw, IndexEntry, LastPatch, PackHeader, PatchHistory};
pub use index::IndexLayout;
#[cfg(feature = "write")]
pub use journal::{IndexWrite, PatchJournal, Pending, finish_patch, journal_path, replay_pending};
#[cfg(feature = "write")]
pub use parts::{TileParts, merged_keys};
#[cfg(feature = "write")]
pub use patch::{PatchStamp, PatchSummary, PatchTiles, begin_patch, patch_tiles};
#[cfg(feature = "write")]
pub use ranged::{CopyRange, LaidOut, RangeCopied, copy_range, lock_for_copy, lock_if_laid_out, take_up_copied};
pub use reader::{Pack, PackBytes, ReadFile, VerifySummary};
#[cfg(feature = "write")]
pub use upgrade::{UpgradeSummary, record_detail_law, upgrade, upgrade_copy};
#[cfg(feature = "write")]
pub use writer::{Assembled, PackSpec, PackWriter, WriteSummary, partial_path, tmp_path};
