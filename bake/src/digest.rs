//! An input file's content digest, and the digest manifest that lets the
//! shards of a cluster bake skip re-reading multi-terabyte inputs.
//!
//! The key decision: a file's digest is the SHA-256 of its length and of the
//! SHA-256 of each 64 MiB chunk in order (a two-level tree). Chunks hash in
//! parallel, so one process hashes at the speed of its storage rather than
//! of one core, and the chunk digests can be written down once
//! (`planet-bake digest ... --out MANIFEST`) and checked by sampling: a shard
//! given `--inputs-digest MANIFEST` checks every file's length and re-hashes
//! a few chunks chosen by its shard index, then takes the manifest's digest,
//! so N shards read the inputs once in all (the manifest job) plus a few
//! chunks each, not N times. The pack's fingerprint is the same either way.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::BakeError;

/// Bytes per hashed chunk.
pub(crate) const CHUNK_BYTES: u64 = 64 << 20;
/// Chunks a shard re-hashes per file when it trusts a manifest.
const SAMPLED_CHUNKS: u64 = 4;

/// A file's length and the SHA-256 of each of its chunks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FileDigest {
    pub(crate) length: u64,
    /// Hex SHA-256 of each `CHUNK_BYTES` chunk, in order.
    pub(crate) chunks: Vec<String>,
}

impl FileDigest {
    /// What the fingerprint takes of the file: its length and chunk digests.
    pub(crate) fn feed(&self, h: &mut Sha256) {
        h.update(format!("length {} chunks {}\n", self.length, self.chunks.len()).as_bytes());
        for c in &self.chunks {
            h.update(c.as_bytes());
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn read_error(path: &Path, e: impl std::fmt::Display) -> BakeError {
    BakeError::Io { path: path.to_owned(), doing: "reading it to fingerprint the inputs", cause: e.to_string() }
}

/// The SHA-256 of bytes `from..from + len` of `read_at`.
fn chunk_digest(
    mut read_at: impl FnMut(&mut [u8], u64) -> std::io::Result<()>,
    from: u64,
    len: u64,
) -> std::io::Result<String> {
    let mut h = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    let mut at = from;
    while at < from + len {
        let n = ((from + len - at) as usize).min(buffer.len());
        read_at(&mut buffer[..n], at)?;
        h.update(&buffer[..n]);
        at += n as u64;
    }
    Ok(hex(&h.finalize()))
}

fn chunk_count(length: u64) -> u64 {
    length.div_ceil(CHUNK_BYTES)
}

fn chunk_span(length: u64, k: u64) -> (u64, u64) {
    let from = k * CHUNK_BYTES;
    (from, CHUNK_BYTES.min(length - from))
}

/// A readable input: a local file (chunks read in parallel) or a file in
/// GDAL's virtual file systems (read through GDAL, one handle per chunk).
enum Source<'a> {
    Local(File),
    Virtual(&'a str),
}

impl Source<'_> {
    fn open(path: &Path) -> Result<(Source<'_>, u64), BakeError> {
        match path.to_str().filter(|_| crate::vsi::is_virtual(path)) {
            Some(name) => {
                let length = crate::vsi::size(name).ok_or_else(|| read_error(path, "GDAL cannot open it"))?;
                Ok((Source::Virtual(name), length))
            }
            None => {
                let file = File::open(path).map_err(|e| read_error(path, e))?;
                let length = file.metadata().map_err(|e| read_error(path, e))?.len();
                Ok((Source::Local(file), length))
            }
        }
    }

    fn chunk(&self, length: u64, k: u64) -> std::io::Result<String> {
        let (from, len) = chunk_span(length, k);
        match self {
            Source::Local(file) => {
                let digest = chunk_digest(|b, at| file.read_exact_at(b, at), from, len)?;
                if from + len == length && file.metadata()?.len() != length {
                    return Err(std::io::Error::other(format!(
                        "the file changed length from {length} bytes while read"
                    )));
                }
                Ok(digest)
            }
            Source::Virtual(name) => {
                let mut file = crate::vsi::VsiFile::open(name)?;
                file.seek_to(from)?;
                let digest = chunk_digest(|b, _| file.read_exact(b), from, len)?;
                // The last chunk must end the file: one that grew since its
                // length was taken is not hashed by its first part only.
                if from + len == length && file.read(&mut [0u8; 1])? != 0 {
                    return Err(std::io::Error::other(format!("the file is longer than the {length} bytes it had")));
                }
                Ok(digest)
            }
        }
    }
}

/// Reads every byte of `path` and returns its digest.
pub(crate) fn file_digest(path: &Path) -> Result<FileDigest, BakeError> {
    file_digest_until(path, &AtomicBool::new(false))
}

/// [`file_digest`], given up between chunks once `stop` is set (by a bake
/// whose landmark audit refused the raster meanwhile: a misread raster must
/// cost seconds, not a whole read of a large input).
pub(crate) fn file_digest_until(path: &Path, stop: &AtomicBool) -> Result<FileDigest, BakeError> {
    let (source, length) = Source::open(path)?;
    let chunks = (0..chunk_count(length))
        .into_par_iter()
        .map(|k| match stop.load(Ordering::Relaxed) {
            true => Err(abandoned(path)),
            false => source.chunk(length, k).map_err(|e| read_error(path, e)),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(FileDigest { length, chunks })
}

/// The error of a digest given up: never reported, since what stopped it
/// failed first and is what the bake reports.
pub(crate) fn abandoned(path: &Path) -> BakeError {
    BakeError::DigestAbandoned { path: path.to_owned() }
}

/// Checks `path` against a manifest's `digest` by its length and a few
/// chunks chosen by `salt` (the shard index), and returns the digest.
pub(crate) fn checked_digest(path: &Path, digest: &FileDigest, salt: u32) -> Result<FileDigest, BakeError> {
    let (source, length) = Source::open(path)?;
    let mismatch = |what: String| BakeError::Manifest {
        path: path.to_owned(),
        reason: format!(
            "does not match the --inputs-digest manifest ({what}); the file changed since the manifest was made, or the manifest is of another file: make it again with planet-bake digest"
        ),
    };
    if length != digest.length || digest.chunks.len() as u64 != chunk_count(length) {
        return Err(mismatch(format!("{length} bytes, the manifest says {}", digest.length)));
    }
    let count = chunk_count(length);
    let mut picks: Vec<u64> = (0..SAMPLED_CHUNKS.min(count))
        .map(|n| {
            let seed = Sha256::digest(format!("{salt} {n} {}", digest.chunks.first().map_or("", |c| c)).as_bytes());
            u64::from_le_bytes(seed[..8].try_into().expect("eight bytes")) % count
        })
        .collect();
    // The last chunk too: a file appended to or cut keeps its early chunks.
    picks.extend(count.checked_sub(1));
    picks.sort_unstable();
    picks.dedup();
    for k in picks {
        let got = source.chunk(length, k).map_err(|e| read_error(path, e))?;
        if got != digest.chunks[k as usize] {
            return Err(mismatch(format!("chunk {k} at byte {} differs", k * CHUNK_BYTES)));
        }
    }
    Ok(digest.clone())
}

/// The digest manifest: every input file of a bake, by role and tag.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    pub(crate) format: String,
    pub(crate) chunk_bytes: u64,
    pub(crate) files: Vec<ManifestFile>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ManifestFile {
    /// "dem", "imagery" or "classes".
    pub(crate) role: String,
    /// "file", or "sidecar .aux.xml" and the like.
    pub(crate) tag: String,
    /// Where it was read when the manifest was made (for people; identity
    /// is the digest).
    pub(crate) name: String,
    #[serde(flatten)]
    pub(crate) digest: FileDigest,
}

pub(crate) const MANIFEST_FORMAT: &str = "planet-inputs-digest 1";

impl Manifest {
    pub(crate) fn read(path: &Path) -> Result<Manifest, BakeError> {
        let text = std::fs::read_to_string(path).map_err(|e| BakeError::Io {
            path: path.to_owned(),
            doing: "reading the --inputs-digest manifest",
            cause: e.to_string(),
        })?;
        let manifest: Manifest = serde_json::from_str(&text).map_err(|e| BakeError::Manifest {
            path: path.to_owned(),
            reason: format!("not an inputs digest manifest: {e}"),
        })?;
        if manifest.format != MANIFEST_FORMAT || manifest.chunk_bytes != CHUNK_BYTES {
            return Err(BakeError::Manifest {
                path: path.to_owned(),
                reason: format!(
                    "a manifest of format '{}' with {}-byte chunks; this build reads '{MANIFEST_FORMAT}' with {CHUNK_BYTES}",
                    manifest.format, manifest.chunk_bytes
                ),
            });
        }
        Ok(manifest)
    }

    pub(crate) fn find(&self, role: &str, tag: &str) -> Option<&FileDigest> {
        self.files.iter().find(|f| f.role == role && f.tag == tag).map(|f| &f.digest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_is_checked_by_length_and_sampled_chunks_the_last_always() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.bin");
        // Three and a half chunks, sparse: cheap to make, read like any file.
        let file = File::create(&path).unwrap();
        file.set_len(3 * CHUNK_BYTES + CHUNK_BYTES / 2).unwrap();
        file.write_all_at(b"relief", CHUNK_BYTES + 17).unwrap();
        let digest = file_digest(&path).unwrap();
        assert_eq!(digest.chunks.len(), 4);
        assert_ne!(digest.chunks[0], digest.chunks[1], "chunk 1 holds the bytes written");
        assert_eq!(digest.chunks[0], digest.chunks[2], "zero chunks hash alike");
        assert_eq!(checked_digest(&path, &digest, 3).unwrap(), digest);
        // A byte changed in the last chunk is always found.
        file.write_all_at(b"x", 3 * CHUNK_BYTES + 5).unwrap();
        let e = checked_digest(&path, &digest, 3).unwrap_err().to_string();
        assert!(e.contains("chunk 3 at byte") && e.contains("planet-bake digest"), "{e}");
        // A length that differs is found before any chunk is read.
        file.set_len(3 * CHUNK_BYTES).unwrap();
        let e = checked_digest(&path, &digest, 0).unwrap_err().to_string();
        assert!(e.contains("bytes, the manifest says"), "{e}");
    }
}
