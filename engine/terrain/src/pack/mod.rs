//! The `.planetpack` format: one indexed file per body and quality tier.
//!
//! docs/planetpack.md is the authority on the layout; [`format`](mod@format) is its
//! transcription, [`codec`] the payload encoding, [`reader`] the validating
//! reader, [`writer`] the deterministic writer and [`patch`] in-place region
//! rewrites. All fail with the one [`PackError`].

pub mod codec;
pub mod error;
pub mod format;
pub mod patch;
pub mod reader;
pub mod writer;

pub use codec::{DecodedTile, EncodedTile, TileContent, stored_index};
pub use error::PackError;
pub use format::{Codec, Coverage, IndexEntry, PackHeader};
pub use patch::{PatchSummary, patch_tiles};
pub use reader::{Pack, PackBytes, VerifySummary};
pub use writer::{PackSpec, PackWriter, WriteSummary, partial_path};
