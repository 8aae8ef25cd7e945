//! The redo journal that makes a region patch crash-safe.
//!
//! The key decision: a patch never edits the pack until everything it will
//! write is durable beside it. `PACK.patch-journal` holds the pack's header
//! before the patch, the new payloads with their absolute offsets, the new
//! index and the new header, and one CRC-32 over all of it; it is fsynced
//! (and its directory entry too) before the first byte of the pack changes.
//! Replaying it writes the same bytes at the same offsets, so replay is
//! idempotent and may be interrupted and repeated any number of times. A
//! journal that is torn or fails its checksum was never complete, so the
//! pack was never touched: it is discarded. A complete journal whose pack
//! header is neither the one before nor the one after the patch (the pack
//! was replaced since) is stale and is discarded too. The journal is
//! removed only once the patched pack is synced (and, in the bake, audited),
//! so its presence always means "this patch is not finished".
//!
//! Layout (little-endian): `PLNTJRNL`, version u32 = 2, reserved u32, total
//! length u64; the old header (256 bytes); the new header (256 bytes); the
//! index write count u64 and per write its offset u64, length u64 and bytes
//! (the rewritten index pages and root); the payload count u64 and per
//! payload its tile key u64, offset u64, length u32 and bytes; then the
//! CRC-32 of every preceding byte.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::geo::address::{TileAddress, TileKey};
use crate::pack::crash::abort_point;
use crate::pack::error::PackError;
use crate::pack::format::{FINGERPRINT_LENGTH, HEADER_LENGTH, get_u32, get_u64};
use crate::pack::patch::PatchSummary;

const MAGIC: [u8; 8] = *b"PLNTJRNL";
const VERSION: u32 = 2;
/// Where the fingerprint and `file_length` lie in a header.
const FINGERPRINT_AT: usize = 144;
const FILE_LENGTH_AT: usize = 136;

/// The redo journal beside the pack at `pack`.
pub fn journal_path(pack: &Path) -> PathBuf {
    let mut name = pack.file_name().unwrap_or_default().to_owned();
    name.push(".patch-journal");
    pack.with_file_name(name)
}

/// One payload the patch writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalPayload {
    pub tile: TileAddress,
    pub offset: u64,
    pub bytes: Vec<u8>,
}

/// One index page (or the root) the patch rewrites.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexWrite {
    pub offset: u64,
    pub bytes: Vec<u8>,
}

/// Everything one patch writes into its pack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatchJournal {
    pub old_header: [u8; HEADER_LENGTH],
    pub new_header: [u8; HEADER_LENGTH],
    pub index_writes: Vec<IndexWrite>,
    pub payloads: Vec<JournalPayload>,
}

/// What [`replay_pending`] found beside a pack.
#[derive(Debug)]
pub enum Pending {
    /// No journal: no patch was interrupted after it began writing.
    None,
    /// A torn or corrupt journal, removed: the patch died while writing it,
    /// before it touched the pack.
    Discarded { reason: String },
    /// A complete journal that does not belong to the pack now at the path
    /// (replaced, or gone), removed without being applied.
    Stale { reason: String },
    /// A complete journal, applied to the pack and synced. It is still on
    /// disk: [`finish_patch`] removes it once the caller is done (a bake
    /// audits the patched tiles first).
    Replayed(Box<PatchJournal>),
}

fn fingerprint_of(header: &[u8; HEADER_LENGTH]) -> [u8; FINGERPRINT_LENGTH] {
    header[FINGERPRINT_AT..FINGERPRINT_AT + FINGERPRINT_LENGTH].try_into().expect("32 bytes")
}

impl PatchJournal {
    /// The pack's fingerprint before the patch.
    pub fn base_fingerprint(&self) -> [u8; FINGERPRINT_LENGTH] {
        fingerprint_of(&self.old_header)
    }

    /// The pack's fingerprint once the patch is applied.
    pub fn fingerprint(&self) -> [u8; FINGERPRINT_LENGTH] {
        fingerprint_of(&self.new_header)
    }

    /// The patched tiles, in the order the patch wrote them.
    pub fn tiles(&self) -> Vec<TileAddress> {
        self.payloads.iter().map(|p| p.tile).collect()
    }

    /// What the patch does: payloads before the old `file_length` go back
    /// into their own slots, the others are appended.
    pub fn summary(&self) -> PatchSummary {
        let old_end = get_u64(&self.old_header, FILE_LENGTH_AT);
        let appended = self.payloads.iter().filter(|p| p.offset >= old_end).count() as u64;
        PatchSummary {
            tiles: self.payloads.len() as u64,
            rewritten_in_place: self.payloads.len() as u64 - appended,
            appended,
            file_length: get_u64(&self.new_header, FILE_LENGTH_AT),
        }
    }

    fn encode(&self) -> Vec<u8> {
        let payload_bytes: usize = self.payloads.iter().map(|p| 20 + p.bytes.len()).sum();
        let index_bytes: usize = self.index_writes.iter().map(|w| 16 + w.bytes.len()).sum();
        let total = 24 + 2 * HEADER_LENGTH + 8 + index_bytes + 8 + payload_bytes + 4;
        let mut b = Vec::with_capacity(total);
        b.extend_from_slice(&MAGIC);
        b.extend_from_slice(&VERSION.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&(total as u64).to_le_bytes());
        b.extend_from_slice(&self.old_header);
        b.extend_from_slice(&self.new_header);
        b.extend_from_slice(&(self.index_writes.len() as u64).to_le_bytes());
        for w in &self.index_writes {
            b.extend_from_slice(&w.offset.to_le_bytes());
            b.extend_from_slice(&(w.bytes.len() as u64).to_le_bytes());
            b.extend_from_slice(&w.bytes);
        }
        b.extend_from_slice(&(self.payloads.len() as u64).to_le_bytes());
        for p in &self.payloads {
            b.extend_from_slice(&p.tile.key().raw().to_le_bytes());
            b.extend_from_slice(&p.offset.to_le_bytes());
            b.extend_from_slice(&(p.bytes.len() as u32).to_le_bytes());
            b.extend_from_slice(&p.bytes);
        }
        let crc = crc32fast::hash(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        debug_assert_eq!(b.len(), total);
        b
    }

    /// Parses a journal; any inconsistency is a reason to discard it.
    pub fn decode(b: &[u8]) -> Result<PatchJournal, String> {
        let short = || format!("it is {} bytes long, shorter than its own layout says (torn)", b.len());
        if b.len() < 24 || b[..8] != MAGIC {
            return Err("it does not start with a journal's magic and length (torn or not a journal)".into());
        }
        if get_u32(b, 8) != VERSION {
            return Err(format!("journal version {} is not {VERSION}", get_u32(b, 8)));
        }
        let total = get_u64(b, 16);
        if total != b.len() as u64 {
            return Err(format!("it is {} bytes long but says {total} (torn)", b.len()));
        }
        let stored = get_u32(b, b.len() - 4);
        let computed = crc32fast::hash(&b[..b.len() - 4]);
        if stored != computed {
            return Err(format!("checksum mismatch: stored {stored:#010x}, computed {computed:#010x} (torn)"));
        }
        let header = |at: usize| -> [u8; HEADER_LENGTH] { b[at..at + HEADER_LENGTH].try_into().expect("header") };
        let mut at = 24 + 2 * HEADER_LENGTH;
        let body_end = b.len() - 4;
        let take = |at: &mut usize, n: usize| -> Result<usize, String> {
            let start = *at;
            *at = at.checked_add(n).filter(|&end| end <= body_end).ok_or_else(short)?;
            Ok(start)
        };
        let writes_at = take(&mut at, 8)?;
        let mut index_writes = Vec::new();
        for _ in 0..get_u64(b, writes_at) {
            let head = take(&mut at, 16)?;
            let length = usize::try_from(get_u64(b, head + 8)).map_err(|_| short())?;
            let bytes_at = take(&mut at, length)?;
            index_writes.push(IndexWrite { offset: get_u64(b, head), bytes: b[bytes_at..at].to_vec() });
        }
        let count_at = take(&mut at, 8)?;
        let mut payloads = Vec::new();
        for _ in 0..get_u64(b, count_at) {
            let head = take(&mut at, 20)?;
            let key = TileKey::from_raw(get_u64(b, head)).map_err(|e| format!("a payload's tile key: {e}"))?;
            let bytes_at = take(&mut at, get_u32(b, head + 16) as usize)?;
            payloads.push(JournalPayload {
                tile: key.address(),
                offset: get_u64(b, head + 8),
                bytes: b[bytes_at..at].to_vec(),
            });
        }
        if at != body_end {
            return Err("bytes after the last payload".into());
        }
        Ok(PatchJournal { old_header: header(24), new_header: header(24 + HEADER_LENGTH), index_writes, payloads })
    }

    /// Writes the journal beside `pack` and makes it durable (file and
    /// directory entry) before returning: only then may the pack change.
    pub fn write(&self, pack: &Path) -> Result<(), PackError> {
        let path = journal_path(pack);
        let bytes = self.encode();
        let written = (|| -> std::io::Result<()> {
            let mut file = File::create(&path)?;
            let half = bytes.len() / 2;
            file.write_all(&bytes[..half])?;
            file.flush()?;
            abort_point("patch-journal");
            file.write_all(&bytes[half..])?;
            file.sync_all()?;
            sync_dir(pack)
        })();
        written.map_err(PackError::io("writing the patch journal")).map_err(|e| e.in_file(&path))
    }

    /// Writes the journal's bytes into the pack: payloads, then the index,
    /// then the header, then syncs. Idempotent.
    pub fn apply(&self, pack: &Path) -> Result<(), PackError> {
        let file = OpenOptions::new().write(true).open(pack).map_err(PackError::io("opening the pack to patch"))?;
        for (n, p) in self.payloads.iter().enumerate() {
            file.write_all_at(&p.bytes, p.offset).map_err(PackError::io("writing a patched payload"))?;
            if n == 0 {
                abort_point("patch-payloads");
            }
        }
        file.sync_data().map_err(PackError::io("syncing patched payloads"))?;
        for w in &self.index_writes {
            file.write_all_at(&w.bytes, w.offset).map_err(PackError::io("rewriting the index"))?;
        }
        abort_point("patch-index");
        file.write_all_at(&self.new_header, 0).map_err(PackError::io("rewriting the header"))?;
        file.sync_all().map_err(PackError::io("syncing the patched pack"))?;
        abort_point("patch-header");
        Ok(())
    }
}

fn sync_dir(pack: &Path) -> std::io::Result<()> {
    match pack.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => File::open(dir)?.sync_all(),
        None => File::open(".")?.sync_all(),
    }
}

fn remove_journal(pack: &Path) -> Result<(), PackError> {
    let path = journal_path(pack);
    std::fs::remove_file(&path)
        .and_then(|()| sync_dir(pack))
        .map_err(PackError::io("removing the patch journal"))
        .map_err(|e| e.in_file(&path))
}

/// Completes or discards an interrupted patch of the pack at `pack`: a
/// complete journal that belongs to the pack is applied (and left for
/// [`finish_patch`]); a torn or stale one is removed.
pub fn replay_pending(pack: &Path) -> Result<Pending, PackError> {
    let path = journal_path(pack);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Pending::None),
        Err(e) => return Err(PackError::io("reading the patch journal")(e).in_file(&path)),
    };
    let journal = match PatchJournal::decode(&bytes) {
        Ok(journal) => journal,
        Err(reason) => {
            remove_journal(pack)?;
            return Ok(Pending::Discarded { reason });
        }
    };
    let mut head = [0u8; HEADER_LENGTH];
    let current = File::open(pack).and_then(|f| f.read_exact_at(&mut head, 0).map(|()| head));
    let stale = match current {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some("the pack it patches is gone".to_owned()),
        Err(e) => return Err(PackError::io("reading the pack's header")(e).in_file(pack)),
        Ok(head) if head == journal.old_header || head == journal.new_header => None,
        // A header whose own checksum fails was torn by this patch (the
        // journal was durable before the pack was touched).
        Ok(head) if crc32fast::hash(&head[..252]) != get_u32(&head, 252) => None,
        Ok(_) => {
            Some("the pack's header is neither the one before nor the one after the patch (it was replaced)".into())
        }
    };
    if let Some(reason) = stale {
        remove_journal(pack)?;
        return Ok(Pending::Stale { reason });
    }
    journal.apply(pack).map_err(|e| e.in_file(pack))?;
    Ok(Pending::Replayed(Box::new(journal)))
}

/// Ends a patch: removes its journal once the pack is synced (and, in a
/// bake, audited).
pub fn finish_patch(pack: &Path) -> Result<(), PackError> {
    abort_point("patch-cleanup");
    remove_journal(pack)
}
