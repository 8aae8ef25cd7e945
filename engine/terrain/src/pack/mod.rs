//! The `.planetpack` format: one indexed file per body and quality tier.
//!
//! docs/planetpack.md is the authority on the layout; [`format`](mod@format) is its
//! transcription, [`index`] the paged index's layout and pages, [`codec`] the payload encoding, [`reader`] the validating
//! reader, [`writer`] the deterministic writer, [`parts`] a pack assembled from several sources of finished tiles (a sharded bake's merge), [`patch`] in-place region
//! rewrites and [`journal`] their redo journal; [`crash`] holds the test
//! hooks that kill a writer inside a named crash window. All fail with the
//! one [`PackError`].

mod assemble;
pub mod codec;
mod commit;
pub mod crash;
mod entry;
pub mod error;
mod finish;
pub mod format;
mod header;
mod header_decode;
pub mod index;
pub mod journal;
mod law;
pub mod lock;
pub mod parts;
pub mod patch;
pub mod ranged;
pub mod reader;
mod record;
mod spec;
mod staged;
pub mod upgrade;
pub mod writer;

pub use codec::{DecodedTile, EncodedTile, TileContent, stored_index};
pub use error::{FetchFailure, PackError};
pub use format::{Codec, Coverage, DetailLaw, IndexEntry, LastPatch, PackHeader, PatchHistory};
pub use index::IndexLayout;
pub use journal::{IndexWrite, PatchJournal, Pending, finish_patch, journal_path, replay_pending};
pub use parts::{TileParts, merged_keys};
pub use patch::{PatchStamp, PatchSummary, PatchTiles, begin_patch, patch_tiles};
pub use ranged::{CopyRange, LaidOut, RangeCopied, copy_range, lock_for_copy, lock_if_laid_out, take_up_copied};
pub use reader::{Pack, PackBytes, ReadFile, VerifySummary};
pub use upgrade::{UpgradeSummary, record_detail_law, upgrade, upgrade_copy};
pub use writer::{Assembled, PackSpec, PackWriter, WriteSummary, partial_path, tmp_path};
