//! `PackSpec`: everything about a pack fixed before its first tile, and
//! the header template a writer derives from it.
//!
//! The key decision: the spec is checked once, when a writer is made
//! (names, box, zstd level, codec against colour depth), and the header a
//! writer stages in its journal's preamble and finally writes is a pure
//! function of the spec, the tile count and the deepest tile, so a resume
//! recognises its bake by comparing bytes.

use crate::codec::{EncodedTile, TileContent, encode_tile};
use crate::error::PackError;
use crate::format::{
    Codec, Coverage, FINGERPRINT_LENGTH, HEADER_LENGTH, MAX_COMPRESSION_LEVEL, MIN_COMPRESSION_LEVEL, PackHeader,
    PatchHistory, validate_name,
};
use crate::index::IndexLayout;
use planet_geo::address::TileAddress;
use planet_geo::body::Body;

/// Everything about a pack that is fixed before its first tile.
#[derive(Clone, Debug, PartialEq)]
pub struct PackSpec {
    pub body: Body,
    pub tier: String,
    pub codec: Codec,
    pub height_data_depth: u8,
    pub colour_data_depth: u8,
    pub coverage: Coverage,
    /// A digest of the bake's inputs and parameters (opaque to the format).
    pub fingerprint: [u8; FINGERPRINT_LENGTH],
    pub compression_level: i8,
}

impl PackSpec {
    pub(super) fn validate(&self) -> Result<(), PackError> {
        validate_name("body name", self.body.name()).map_err(PackError::BadSpec)?;
        validate_name("tier name", &self.tier).map_err(PackError::BadSpec)?;
        self.coverage.validate().map_err(PackError::BadSpec)?;
        if !(MIN_COMPRESSION_LEVEL..=MAX_COMPRESSION_LEVEL).contains(&self.compression_level) {
            return Err(PackError::BadSpec(format!(
                "compression level {} outside zstd's range",
                self.compression_level
            )));
        }
        if !self.codec.has_colour() && self.colour_data_depth != 0 {
            return Err(PackError::BadSpec("a colour data depth needs codec 2".into()));
        }
        Ok(())
    }

    /// Encodes one tile as this pack would store it.
    pub fn encode(&self, tile: TileAddress, content: &TileContent<'_>) -> Result<EncodedTile, PackError> {
        encode_tile(tile, self.codec, content, i32::from(self.compression_level))
    }

    pub(super) fn header_of(&self, tile_count: u64, max_depth: u8) -> Result<PackHeader, PackError> {
        let layout = IndexLayout::for_tiles(tile_count).map_err(PackError::BadSpec)?;
        Ok(PackHeader {
            codec: self.codec,
            height_data_depth: self.height_data_depth,
            colour_data_depth: self.colour_data_depth,
            max_depth,
            compression_level: self.compression_level,
            body: self.body.clone(),
            tier: self.tier.clone(),
            tile_count,
            index_offset: HEADER_LENGTH as u64,
            payload_offset: layout.end(),
            file_length: 0,
            fingerprint: self.fingerprint,
            coverage: self.coverage,
            index_checksum: 0,
            patches: PatchHistory::default(),
            // Measured from the assembled tiles, then recorded
            // (`Assembled::record_detail_law`).
            detail: None,
            sample_voids: true,
        })
    }
}
