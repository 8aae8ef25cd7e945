//! The one error type of remote packs: each names the URL and what the
//! server did, so a user can tell a network problem from a bad pack.

use planet_terrain::pack::{FetchFailure, PackError};

#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error("{url}: {cause}")]
    Pack { url: String, cause: PackError },
    #[error("{url}: {}: bytes {start}..{end}: {reason} (after {attempts} attempts)", failure.word())]
    Request { url: String, failure: FetchFailure, start: u64, end: u64, attempts: u32, reason: String },
    #[error(
        "{url}: {}: not asked again yet: {last} (the server is asked again in {retry_in_s:.0} s)",
        failure.word()
    )]
    Unavailable { url: String, failure: FetchFailure, last: String, retry_in_s: f64 },
    #[error("{url}: the server does not serve byte ranges ({reason}); a pack is read a range at a time")]
    NoRanges { url: String, reason: String },
    #[error(
        "{url}: the server gives neither an ETag nor a Last-Modified header, so a pack replaced while it is read could not be told apart; refusing it"
    )]
    NoValidator { url: String },
    #[error(
        "{url}: the pack changed while it was being read (its {header} was {was}, now {now}); tiles of two versions are never mixed: open it again"
    )]
    Changed { url: String, header: &'static str, was: String, now: String },
    #[error("cache {path}: {cause}")]
    Cache { path: std::path::PathBuf, cause: std::io::Error },
}

impl RemoteError {
    /// What happened, as a reader of the pack acts on it: a pack that
    /// changed is given up, a server failing or slow may answer later.
    pub fn failure(&self) -> FetchFailure {
        match self {
            RemoteError::Changed { .. } => FetchFailure::Changed,
            RemoteError::Request { failure, .. } | RemoteError::Unavailable { failure, .. } => *failure,
            RemoteError::Pack { .. }
            | RemoteError::NoRanges { .. }
            | RemoteError::NoValidator { .. }
            | RemoteError::Cache { .. } => FetchFailure::Failing,
        }
    }
}
