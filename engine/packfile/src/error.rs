//! The one error type of the pack reader and writer.
//!
//! Every variant that concerns bytes names the rule that failed, the byte
//! offset where it failed and, where a tile is involved, the tile, so a user
//! can go from the message to the spec section (docs/planetpack.md) and the
//! hex dump without a debugger.

use std::path::PathBuf;

use planet_geo::address::TileAddress;

#[derive(Debug, thiserror::Error)]
pub enum PackError {
    #[error("{path}: {cause}")]
    File { path: PathBuf, cause: Box<PackError> },
    #[error(
        "the pack changed while it was read ({opened} bytes when opened, {now} now: another program rewrote it); open it again: {cause}"
    )]
    ChangedWhileRead { opened: u64, now: u64, cause: Box<PackError> },
    #[error(
        "{} is being written by {holder} (its lock {}): one writer at a time; let it finish (planet-bake --wait waits for it)",
        pack.display(),
        lock.display()
    )]
    Busy { pack: PathBuf, holder: String, lock: PathBuf },
    #[error("I/O error while {doing}: {cause}")]
    Io { doing: &'static str, cause: std::io::Error },
    /// Bytes fetched from elsewhere (a server) could not be had: the
    /// message names where from and what happened. `asked`: the server was
    /// asked this time; a read refused at once while a failure is waited
    /// out was not (it costs the server nothing, and is no new attempt).
    #[error("{message}")]
    Fetch { failure: FetchFailure, asked: bool, message: String },
    #[error("truncated: the {section} needs bytes {start}..{end} but the file has {file_length} bytes")]
    Truncated { section: &'static str, start: u64, end: u64, file_length: u64 },
    #[error("bad magic at byte 0: expected \"PLNTPACK\", found {found:02x?}")]
    BadMagic { found: [u8; 8] },
    #[error(
        "unsupported version {found} at byte 8 (this reader reads version {supported} and the version before it; `planet-pack upgrade` converts a version 1 pack)"
    )]
    UnsupportedVersion { found: u16, supported: u16 },
    #[error("header checksum mismatch at byte {offset}: stored {stored:#010x}, computed {computed:#010x}")]
    HeaderChecksum { offset: u64, stored: u32, computed: u32 },
    #[error("header field '{field}' at byte {offset} is invalid: {reason}")]
    HeaderField { field: &'static str, offset: u64, reason: String },
    #[error(
        "tile geometry mismatch at byte {offset}: the pack was baked for {core_samples} core samples with a {apron}-sample apron, this reader expects 129 and 1"
    )]
    GeometryMismatch { offset: u64, core_samples: u16, apron: u8 },
    #[error(
        "root directory checksum mismatch (root at byte {offset}): stored {stored:#010x}, computed {computed:#010x}"
    )]
    IndexChecksum { offset: u64, stored: u32, computed: u32 },
    #[error("{page} at byte {offset}: checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    PageChecksum { page: String, offset: u64, stored: u32, computed: u32 },
    #[error("{page} at byte {offset}: {reason}")]
    IndexPage { page: String, offset: u64, reason: String },
    #[error("index entry {entry} at byte {offset}: key {raw:#018x} is not a valid tile key")]
    InvalidKey { entry: u64, offset: u64, raw: u64 },
    #[error(
        "index entry {entry} at byte {offset}: tile {tile} is not after the previous entry's tile {previous} (the index must ascend strictly)"
    )]
    IndexOrder { entry: u64, offset: u64, tile: TileAddress, previous: TileAddress },
    #[error("index entry {entry} at byte {offset}: tile {tile} appears twice")]
    DuplicateKey { entry: u64, offset: u64, tile: TileAddress },
    #[error("index entry {entry} at byte {offset}: tile {tile} field '{field}' is invalid: {reason}")]
    EntryField { entry: u64, offset: u64, tile: TileAddress, field: &'static str, reason: String },
    #[error(
        "index entry {entry} at byte {offset}: tile {tile} payload {payload_offset}..{payload_end} lies outside the payload region {region_start}..{region_end}"
    )]
    PayloadOutOfBounds {
        entry: u64,
        offset: u64,
        tile: TileAddress,
        payload_offset: u64,
        payload_end: u64,
        region_start: u64,
        region_end: u64,
    },
    #[error(
        "index entry {entry} at byte {offset}: tile {tile} payload {payload_offset}..{payload_end} overlaps the payload of tile {other}"
    )]
    PayloadOverlap {
        entry: u64,
        offset: u64,
        tile: TileAddress,
        payload_offset: u64,
        payload_end: u64,
        other: TileAddress,
    },
    #[error(
        "index entry {entry} at byte {offset}: tile {tile} payload length {length} is not legal for codec {codec} (must be {min}..={max})"
    )]
    PayloadLength { entry: u64, offset: u64, tile: TileAddress, length: u32, codec: u8, min: u32, max: u32 },
    #[error("tile {tile} is not in the pack")]
    TileNotFound { tile: TileAddress },
    #[error(
        "tile {tile} payload at byte {offset}: checksum mismatch (stored {stored:#010x}, computed {computed:#010x}); the tile is torn or corrupt"
    )]
    PayloadChecksum { tile: TileAddress, offset: u64, stored: u32, computed: u32 },
    #[error("tile {tile} payload at byte {offset}: {reason}")]
    PayloadDecode { tile: TileAddress, offset: u64, reason: String },
    #[error("invalid tile content for {tile}: {reason}")]
    BadContent { tile: TileAddress, reason: String },
    #[error("invalid pack description: {0}")]
    BadSpec(String),
    #[error("tile {tile} is not in the declared tile set")]
    Undeclared { tile: TileAddress },
    #[error("{missing} declared tiles were never written (first: {first})")]
    Incomplete { missing: usize, first: TileAddress },
    #[error("cannot resume: {0}")]
    ResumeMismatch(String),
    #[error(
        "{path} is locked by another process writing this same bake (a task re-submitted while the first still runs?); wait for it or stop it, then run again"
    )]
    JournalLocked { path: PathBuf },
    #[error(
        "a patch of this pack is pending in {journal}: run `planet-pack repair` on the pack, or re-run that patch, to complete it first"
    )]
    PatchPending { journal: PathBuf },
    #[error(
        "{cause}; an interrupted patch left its redo journal {journal}: run `planet-pack repair` on the pack, or re-run the same patch, to complete it"
    )]
    Interrupted { journal: PathBuf, cause: Box<PackError> },
}

/// Why bytes fetched from elsewhere could not be had: what a reader may
/// do about it differs (wait and ask again, or give the pack up).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FetchFailure {
    /// The pack changed since it was opened (its validator or length):
    /// nothing read now may be mixed with what was read before, so the
    /// pack must be opened again.
    Changed,
    /// The server kept answering with errors or broken answers past its
    /// retries; it may answer again later.
    Failing,
    /// The server answered too slowly: a read's deadline passed; it may
    /// answer in time later.
    Slow,
}

impl FetchFailure {
    /// Whether asking again later may succeed.
    pub fn is_transient(self) -> bool {
        !matches!(self, FetchFailure::Changed)
    }

    /// One word for what happened, for messages and statistics.
    pub fn word(self) -> &'static str {
        match self {
            FetchFailure::Changed => "changed",
            FetchFailure::Failing => "failing",
            FetchFailure::Slow => "slow",
        }
    }
}

impl PackError {
    pub(crate) fn io(doing: &'static str) -> impl FnOnce(std::io::Error) -> PackError {
        move |cause| PackError::Io { doing, cause }
    }

    /// This error, naming the file it is about (unless it already names one).
    pub fn in_file(self, path: &std::path::Path) -> PackError {
        match self {
            PackError::File { .. } => self,
            other => PackError::File { path: path.to_owned(), cause: Box::new(other) },
        }
    }

    /// The innermost error, past any file wrapper.
    pub fn rule(&self) -> &PackError {
        match self {
            PackError::File { cause, .. } | PackError::Interrupted { cause, .. } => cause.rule(),
            other => other,
        }
    }
}
