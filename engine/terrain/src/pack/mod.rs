//! The `.planetpack` format: one indexed file per body and quality tier.
//!
//! docs/planetpack.md is the authority on the layout; [`format`](mod@format) is its
//! transcription, [`codec`] the payload encoding, [`reader`] the validating
//! reader, [`writer`] the deterministic writer, [`patch`] in-place region
//! rewrites and [`journal`] their redo journal; [`crash`] holds the test
//! hooks that kill a writer inside a named crash window. All fail with the
//! one [`PackError`].

pub mod codec;
pub mod crash;
pub mod error;
pub mod format;
pub mod journal;
pub mod patch;
pub mod reader;
pub mod writer;

pub use codec::{DecodedTile, EncodedTile, TileContent, stored_index};
pub use error::PackError;
pub use format::{Codec, Coverage, IndexEntry, LastPatch, PackHeader, PatchHistory};
pub use journal::{PatchJournal, Pending, finish_patch, journal_path, replay_pending};
pub use patch::{PatchStamp, PatchSummary, begin_patch, patch_tiles};
pub use reader::{Pack, PackBytes, VerifySummary};
pub use writer::{Assembled, PackSpec, PackWriter, WriteSummary, partial_path, tmp_path};
