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
//! Payloads are never all in memory: the journal is written a payload at a
//! time from the caller's store ([`PatchJournal::write`]), records where
//! each payload's bytes lie in the journal file, and is applied, and read
//! back, from that file, so a patch of any size holds one payload at once.
//!
//! Layout (little-endian): `PLNTJRNL`, version u32 = 2, reserved u32, total
//! length u64; the old header (256 bytes); the new header (256 bytes); the
//! index write count u64 and per write its offset u64, length u64 and bytes
//! (the rewritten index pages and root); the payload count u64 and per
//! payload its tile key u64, offset u64, length u32 and bytes; then the
//! CRC-32 of every preceding byte.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::crash::abort_point;
use crate::error::PackError;
use crate::format::{FINGERPRINT_LENGTH, HEADER_LENGTH, get_u32, get_u64};
use crate::patch::PatchSummary;
use planet_geo::address::{TileAddress, TileKey};

const MAGIC: [u8; 8] = *b"PLNTJRNL";
const VERSION: u32 = 2;
/// Where the fingerprint and `file_length` lie in a header.
const FINGERPRINT_AT: usize = 144;
const FILE_LENGTH_AT: usize = 136;

pub use crate::names::journal_path;

/// One payload the patch writes: where in the pack, and where its bytes lie
/// in the journal file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalPayload {
    pub tile: TileAddress,
    /// Its offset in the pack.
    pub offset: u64,
    pub length: u32,
    /// Its offset in the journal file.
    pub at: u64,
}

impl JournalPayload {
    /// Its bytes, out of the whole journal's bytes.
    pub fn bytes_in<'a>(&self, journal: &'a [u8]) -> &'a [u8] {
        &journal[self.at as usize..][..self.length as usize]
    }

    /// Its bytes, read from the journal file.
    pub fn read_from(&self, journal: &File) -> std::io::Result<Vec<u8>> {
        let mut bytes = vec![0u8; self.length as usize];
        journal.read_exact_at(&mut bytes, self.at)?;
        Ok(bytes)
    }
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

    /// Where the payloads' bytes begin in the journal file.
    fn payloads_start(&self) -> u64 {
        let index_bytes: u64 = self.index_writes.iter().map(|w| 16 + w.bytes.len() as u64).sum();
        (24 + 2 * HEADER_LENGTH + 8) as u64 + index_bytes + 8
    }

    /// The journal file's length.
    fn total(&self) -> u64 {
        self.payloads_start() + self.payloads.iter().map(|p| 20 + u64::from(p.length)).sum::<u64>() + 4
    }

    /// Sets each payload's place in the journal file from the layout.
    pub(crate) fn place_payloads(&mut self) {
        let mut at = self.payloads_start();
        for p in &mut self.payloads {
            p.at = at + 20;
            at += 20 + u64::from(p.length);
        }
    }

    /// Streams the journal into `out`, payload `i`'s bytes from
    /// `payload(i)`, calling `halfway` once when half of it is written.
    fn encode_into(
        &self,
        out: impl Write,
        payload: &mut dyn FnMut(usize) -> std::io::Result<Vec<u8>>,
        halfway: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let total = self.total();
        let mut w = Hashing { out, crc: crc32fast::Hasher::new(), written: 0 };
        w.write_all(&MAGIC)?;
        w.write_all(&VERSION.to_le_bytes())?;
        w.write_all(&0u32.to_le_bytes())?;
        w.write_all(&total.to_le_bytes())?;
        w.write_all(&self.old_header)?;
        w.write_all(&self.new_header)?;
        w.write_all(&(self.index_writes.len() as u64).to_le_bytes())?;
        for iw in &self.index_writes {
            w.write_all(&iw.offset.to_le_bytes())?;
            w.write_all(&(iw.bytes.len() as u64).to_le_bytes())?;
            w.write_all(&iw.bytes)?;
        }
        w.write_all(&(self.payloads.len() as u64).to_le_bytes())?;
        let mut halved = false;
        for (i, p) in self.payloads.iter().enumerate() {
            let bytes = payload(i)?;
            if bytes.len() != p.length as usize {
                return Err(std::io::Error::other(format!(
                    "tile {}'s payload is {} bytes, its entry says {}",
                    p.tile,
                    bytes.len(),
                    p.length
                )));
            }
            if w.written + 20 != p.at {
                return Err(std::io::Error::other(format!(
                    "tile {}'s payload would lie at byte {} of the journal, its plan says {}",
                    p.tile,
                    w.written + 20,
                    p.at
                )));
            }
            w.write_all(&p.tile.key().raw().to_le_bytes())?;
            w.write_all(&p.offset.to_le_bytes())?;
            w.write_all(&p.length.to_le_bytes())?;
            let half = (total / 2).saturating_sub(w.written) as usize;
            match (halved, half < bytes.len()) {
                (false, true) => {
                    w.write_all(&bytes[..half])?;
                    halfway(&mut w.out)?;
                    w.write_all(&bytes[half..])?;
                    halved = true;
                }
                _ => w.write_all(&bytes)?,
            }
        }
        if !halved {
            halfway(&mut w.out)?;
        }
        let crc = w.crc.clone().finalize();
        w.out.write_all(&crc.to_le_bytes())?;
        debug_assert_eq!(w.written + 4, total);
        w.out.flush()
    }

    /// Parses a journal; any inconsistency is a reason to discard it.
    pub fn decode(b: &[u8]) -> Result<PatchJournal, String> {
        check_envelope(&b[..b.len().min(24)], b.len() as u64)?;
        let computed = crc32fast::hash(&b[..b.len() - 4]);
        check_crc(get_u32(b, b.len() - 4), computed)?;
        parse(&mut std::io::Cursor::new(b), b.len() as u64).map_err(|e| e.to_string())
    }

    /// Reads and parses the journal file at `path`, a buffer at a time (the
    /// payloads stay in the file).
    fn read(path: &Path) -> std::io::Result<Result<PatchJournal, String>> {
        let mut file = File::open(path)?;
        let length = file.metadata()?.len();
        // Read whole (a short read is not a tear: only the file's length
        // says whether it holds a journal's envelope).
        let mut head = [0u8; 24];
        let got = match length >= 24 {
            true => file.read_exact_at(&mut head, 0).map(|()| 24)?,
            false => 0,
        };
        if let Err(reason) = check_envelope(&head[..got], length) {
            return Ok(Err(reason));
        }
        let mut crc = crc32fast::Hasher::new();
        file.seek(SeekFrom::Start(0))?;
        let mut body = BufReader::with_capacity(1 << 20, (&file).take(length - 4));
        loop {
            let chunk = body.fill_buf()?;
            if chunk.is_empty() {
                break;
            }
            crc.update(chunk);
            let n = chunk.len();
            body.consume(n);
        }
        let mut stored = [0u8; 4];
        file.read_exact_at(&mut stored, length - 4)?;
        if let Err(reason) = check_crc(u32::from_le_bytes(stored), crc.finalize()) {
            return Ok(Err(reason));
        }
        file.seek(SeekFrom::Start(0))?;
        // A read that fails is the disk's fault, not the journal's: it must
        // not be discarded for it.
        match parse(&mut BufReader::new(file), length) {
            Ok(journal) => Ok(Ok(journal)),
            Err(JournalFault::Io(e)) => Err(e),
            Err(fault) => Ok(Err(fault.to_string())),
        }
    }

    /// Writes the journal beside `pack`, payload `i`'s bytes from
    /// `payload(i)`, and makes it durable (file and directory entry) before
    /// returning: only then may the pack change.
    pub fn write(
        &self,
        pack: &Path,
        mut payload: impl FnMut(usize) -> std::io::Result<Vec<u8>>,
    ) -> Result<(), PackError> {
        let path = journal_path(pack);
        let written = (|| -> std::io::Result<()> {
            // Never over another process's journal: one patch at a time.
            let file = OpenOptions::new().write(true).create_new(true).open(&path)?;
            let mut halfway = |out: &mut dyn Write| {
                out.flush()?;
                abort_point("patch-journal");
                Ok(())
            };
            let encoded = self.encode_into(BufWriter::with_capacity(1 << 20, &file), &mut payload, &mut halfway);
            if encoded.is_err() {
                // A journal that could not be finished is no journal: the
                // pack was not touched, and nothing is left beside it.
                let _ = std::fs::remove_file(&path);
            }
            encoded?;
            file.sync_all()?;
            sync_dir(pack)
        })();
        written.map_err(PackError::io("writing the patch journal")).map_err(|e| e.in_file(&path))
    }

    /// Writes the journal's bytes into the pack: payloads, then the index,
    /// then the header, then syncs. Idempotent.
    pub fn apply(&self, pack: &Path) -> Result<(), PackError> {
        let path = journal_path(pack);
        let journal =
            File::open(&path).map_err(PackError::io("opening the patch journal")).map_err(|e| e.in_file(&path))?;
        let file = OpenOptions::new().write(true).open(pack).map_err(PackError::io("opening the pack to patch"))?;
        for (n, p) in self.payloads.iter().enumerate() {
            let bytes = p
                .read_from(&journal)
                .map_err(PackError::io("reading a payload from the patch journal"))
                .map_err(|e| e.in_file(&path))?;
            file.write_all_at(&bytes, p.offset).map_err(PackError::io("writing a patched payload"))?;
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
    let read = match PatchJournal::read(&path) {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Pending::None),
        Err(e) => return Err(PackError::io("reading the patch journal")(e).in_file(&path)),
    };
    let journal = match read {
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

/// A writer that hashes and counts what passes through it.
struct Hashing<W> {
    out: W,
    crc: crc32fast::Hasher,
    written: u64,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.crc.update(&buf[..n]);
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// The magic, version and total length, from the first 24 bytes of a
/// journal `length` bytes long.
fn check_envelope(head: &[u8], length: u64) -> Result<(), String> {
    if head.len() < 24 || head[..8] != MAGIC {
        return Err("it does not start with a journal's magic and length (torn or not a journal)".into());
    }
    if get_u32(head, 8) != VERSION {
        return Err(format!("journal version {} is not {VERSION}", get_u32(head, 8)));
    }
    let total = get_u64(head, 16);
    if total != length {
        return Err(format!("it is {length} bytes long but says {total} (torn)"));
    }
    Ok(())
}

fn check_crc(stored: u32, computed: u32) -> Result<(), String> {
    match stored == computed {
        true => Ok(()),
        false => Err(format!("checksum mismatch: stored {stored:#010x}, computed {computed:#010x} (torn)")),
    }
}

/// Parses a journal of `length` bytes whose envelope and checksum passed,
/// reading the index writes and skipping over the payloads' bytes.
fn parse(r: &mut (impl Read + Seek), length: u64) -> Result<PatchJournal, JournalFault> {
    let body_end = length - 4;
    let mut at = 0u64;
    let mut take = |r: &mut dyn ReadSeek, n: u64, keep: bool| -> Result<(u64, Vec<u8>), JournalFault> {
        let start = at;
        at = at.checked_add(n).filter(|&end| end <= body_end).ok_or(JournalFault::Short(length))?;
        match keep {
            true => {
                let mut bytes = vec![0u8; n as usize];
                r.read_exact(&mut bytes)?;
                Ok((start, bytes))
            }
            false => {
                r.seek(SeekFrom::Current(n as i64))?;
                Ok((start, Vec::new()))
            }
        }
    };
    let (_, head) = take(r, (24 + 2 * HEADER_LENGTH) as u64, true)?;
    let header = |at: usize| -> [u8; HEADER_LENGTH] { head[at..at + HEADER_LENGTH].try_into().expect("header") };
    let mut index_writes = Vec::new();
    for _ in 0..get_u64(&take(r, 8, true)?.1, 0) {
        let (_, w) = take(r, 16, true)?;
        let (_, bytes) = take(r, get_u64(&w, 8), true)?;
        index_writes.push(IndexWrite { offset: get_u64(&w, 0), bytes });
    }
    let mut payloads = Vec::new();
    for _ in 0..get_u64(&take(r, 8, true)?.1, 0) {
        let (_, h) = take(r, 20, true)?;
        let key =
            TileKey::from_raw(get_u64(&h, 0)).map_err(|e| JournalFault::Bad(format!("a payload's tile key: {e}")))?;
        let length = get_u32(&h, 16);
        let (at, _) = take(r, u64::from(length), false)?;
        payloads.push(JournalPayload { tile: key.address(), offset: get_u64(&h, 8), length, at });
    }
    if at != body_end {
        return Err(JournalFault::Bad("bytes after the last payload".into()));
    }
    Ok(PatchJournal { old_header: header(24), new_header: header(24 + HEADER_LENGTH), index_writes, payloads })
}

trait ReadSeek: Read + Seek {}
impl<T: Read + Seek> ReadSeek for T {}

/// Why a journal whose checksum passed cannot be parsed.
enum JournalFault {
    Short(u64),
    Bad(String),
    Io(std::io::Error),
}

impl From<std::io::Error> for JournalFault {
    fn from(e: std::io::Error) -> JournalFault {
        JournalFault::Io(e)
    }
}

impl std::fmt::Display for JournalFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JournalFault::Short(length) => {
                write!(f, "it is {length} bytes long, shorter than its own layout says (torn)")
            }
            JournalFault::Bad(reason) => f.write_str(reason),
            JournalFault::Io(e) => write!(f, "reading it: {e}"),
        }
    }
}
