//! Converting a version 1 pack (one flat index, read whole) to the paged
//! index, and recording a detail law in a version 2 pack's header (which
//! makes it version 4; a version 3 pack's law, made for the detail before
//! #49, is replaced the same way).
//!
//! The key decision: the reader reads version 2 only, and version 1 is
//! converted once by `planet-pack upgrade`, so there is one index code path
//! to keep right. The v1 pack is validated as its own spec said (header,
//! flat index checksum, every entry's fields and order) and every payload's
//! checksum is checked as it is copied; the v2 file is laid out as the
//! writer lays out a fresh bake (payloads contiguous in key order, slack
//! left by patches dropped), assembled beside the destination, synced and
//! only then renamed over it. So an upgraded pack of an unpatched bake is
//! byte for byte the pack a version 2 bake of the same tiles writes.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::error::PackError;
use crate::format::{
    DetailLaw, ENTRY_LENGTH, HEADER_LENGTH, IndexEntry, PackHeader, VERSION_FLAT_INDEX, decode_entry, decode_header,
    decode_header_as, encode_header,
};
use crate::index::{IndexBuilder, IndexLayout};
use crate::reader::{PackBytes, ReadFile};
use crate::writer::tmp_path;

/// What an upgrade wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UpgradeSummary {
    pub tiles: u64,
    pub old_length: u64,
    pub new_length: u64,
}

/// The law a caller measures from a pack's tiles (the ground module's
/// measurement; this module cannot read ground).
pub type LawOf<'a> = &'a mut dyn FnMut(&Path) -> Result<DetailLaw, PackError>;

/// Reads the version 1 pack at `src` and writes it as version 4 at `dst`
/// (which may be `src`: the new file replaces it only once complete), the
/// detail law `law_of` measures from the new file's tiles recorded before
/// it is verified and renamed into place.
pub fn upgrade(src: &Path, dst: &Path, law_of: LawOf<'_>) -> Result<UpgradeSummary, PackError> {
    upgrade_inner(src, dst, law_of).map_err(|e| e.in_file(src))
}

fn upgrade_inner(src: &Path, dst: &Path, law_of: LawOf<'_>) -> Result<UpgradeSummary, PackError> {
    let bytes = ReadFile::open(src)?;
    let file_length = bytes.len();
    let head = bytes.read(0, (HEADER_LENGTH as u64).min(file_length) as usize)?;
    let mut header = decode_header_as(&head, file_length, VERSION_FLAT_INDEX)?;
    let index = bytes.read(header.index_offset, (header.payload_offset - header.index_offset) as usize)?;
    let computed = crc32fast::hash(&index);
    if computed != header.index_checksum {
        return Err(PackError::IndexChecksum { offset: header.index_offset, stored: header.index_checksum, computed });
    }
    let mut entries: Vec<IndexEntry> = Vec::with_capacity(header.tile_count as usize);
    for (n, raw) in index.chunks_exact(ENTRY_LENGTH).enumerate() {
        let offset = header.index_offset + (n * ENTRY_LENGTH) as u64;
        let entry = decode_entry(raw, n as u64, offset, &header)?;
        if let Some(previous) = entries.last()
            && entry.key <= previous.key
        {
            return Err(PackError::IndexOrder {
                entry: n as u64,
                offset,
                tile: entry.tile(),
                previous: previous.tile(),
            });
        }
        entries.push(entry);
    }

    let layout = IndexLayout::for_tiles(header.tile_count).map_err(PackError::BadSpec)?;
    header.payload_offset = layout.end();
    header.file_length = layout.end() + entries.iter().map(|e| u64::from(e.payload_length)).sum::<u64>();
    let tmp = tmp_path(dst);
    let written = (|| -> Result<(), PackError> {
        let io = || PackError::io("writing the upgraded pack");
        let file = File::create(&tmp).map_err(PackError::io("creating the upgraded pack's temporary file"))?;
        let mut index = IndexBuilder::new(layout);
        let mut w = BufWriter::with_capacity(1 << 20, &file);
        w.seek(SeekFrom::Start(header.payload_offset)).map_err(io())?;
        let mut offset = header.payload_offset;
        for entry in &entries {
            let payload = bytes.read(entry.payload_offset, entry.payload_length as usize)?;
            let computed = crc32fast::hash(&payload);
            if computed != entry.payload_checksum {
                return Err(PackError::PayloadChecksum {
                    tile: entry.tile(),
                    offset: entry.payload_offset,
                    stored: entry.payload_checksum,
                    computed,
                });
            }
            w.write_all(&payload).map_err(io())?;
            index.push(&IndexEntry { payload_offset: offset, ..*entry }, &file).map_err(io())?;
            offset += u64::from(entry.payload_length);
        }
        w.flush().map_err(io())?;
        drop(w);
        header.index_checksum = index.finish(&file).map_err(io())?;
        file.write_all_at(&encode_header(&header), 0).map_err(io())?;
        file.sync_all().map_err(PackError::io("syncing the upgraded pack"))
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    finish_upgrade(&tmp, dst, law_of)?;
    Ok(UpgradeSummary { tiles: header.tile_count, old_length: file_length, new_length: header.file_length })
}

/// Copies the version 2 pack at `src` beside `dst` and makes the copy
/// version 4 there, as [`upgrade`] makes a version 1 pack; `src` is only
/// read.
pub fn upgrade_copy(src: &Path, dst: &Path, law_of: LawOf<'_>) -> Result<(), PackError> {
    let tmp = tmp_path(dst);
    if let Err(e) = std::fs::copy(src, &tmp) {
        let _ = std::fs::remove_file(&tmp);
        return Err(PackError::io("copying the pack beside its destination")(e).in_file(src));
    }
    finish_upgrade(&tmp, dst, law_of).map_err(|e| e.in_file(src))
}

/// The last steps of an upgrade into `tmp`: the law measured from its tiles
/// recorded, the file checked as any reader would, then renamed over
/// `dst`; nothing is left at `tmp` on failure.
fn finish_upgrade(tmp: &Path, dst: &Path, law_of: LawOf<'_>) -> Result<(), PackError> {
    let check = law_of(tmp)
        .and_then(|law| record_detail_law_in_new_file(tmp, law))
        .and_then(|()| crate::reader::Pack::open(tmp))
        .and_then(|p| p.verify())
        .and_then(|_| std::fs::rename(tmp, dst).map_err(PackError::io("renaming the upgraded pack into place")));
    if check.is_err() {
        let _ = std::fs::remove_file(tmp);
    }
    check
}

/// Records `law` in the header of the version 2 pack at `path`, which
/// makes it version 4 (or replaces a version 3 pack's law, which fits the
/// detail before #49 only); nothing else changes. Readers may hold the pack, so
/// the header goes through a redo journal, as a patch's does: a crash
/// leaves the old header or a journal that `planet-pack repair` (or the
/// next patch) completes. Refused while a patch journal is pending (the
/// header it expects would be replaced) and for a pack that already
/// records a law (a recorded law is never replaced).
pub fn record_detail_law(path: &Path, law: DetailLaw) -> Result<(), PackError> {
    record_journaled(path, law).map_err(|e| e.in_file(path))
}

/// [`record_detail_law`] for a file no reader has yet (an assembled pack
/// or a fresh copy, renamed into place afterwards): one plain write of the
/// header, then a sync; a crash leaves a temporary file that is made again.
pub(crate) fn record_detail_law_in_new_file(path: &Path, law: DetailLaw) -> Result<(), PackError> {
    (|| {
        let (file, _, mut header) = read_header_for_law(path, law)?;
        header.detail = Some(law);
        file.write_all_at(&encode_header(&header), 0).map_err(PackError::io("writing the header"))?;
        file.sync_all().map_err(PackError::io("syncing the header"))
    })()
    .map_err(|e| e.in_file(path))
}

fn record_journaled(path: &Path, law: DetailLaw) -> Result<(), PackError> {
    let journal = crate::journal::journal_path(path);
    if journal.exists() {
        return Err(PackError::PatchPending { journal });
    }
    let (file, old_header, mut header) = read_header_for_law(path, law)?;
    drop(file);
    header.detail = Some(law);
    let journal = crate::journal::PatchJournal {
        old_header,
        new_header: encode_header(&header),
        index_writes: Vec::new(),
        payloads: Vec::new(),
    };
    journal.write(path, |_| unreachable!("a header-only journal holds no payload"))?;
    journal.apply(path)?;
    crate::journal::finish_patch(path)
}

/// The pack's file (open for writing), its header bytes and its decoded
/// header, once `law` and the pack are fit to record it: a valid law, a
/// header that reads, and no law recorded yet.
fn read_header_for_law(path: &Path, law: DetailLaw) -> Result<(File, [u8; HEADER_LENGTH], PackHeader), PackError> {
    law.check_to_record()?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(PackError::io("opening the pack to record its detail law"))?;
    let file_length = file.metadata().map_err(PackError::io("reading the pack's length"))?.len();
    let mut head = [0u8; HEADER_LENGTH];
    if file_length < HEADER_LENGTH as u64 {
        return Err(PackError::Truncated { section: "header", start: 0, end: HEADER_LENGTH as u64, file_length });
    }
    file.read_exact_at(&mut head, 0).map_err(PackError::io("reading the header"))?;
    let header = decode_header(&head, file_length)?;
    if header.detail.is_some() {
        return Err(PackError::BadSpec(
            "the pack already records a detail law; a recorded law is never replaced".into(),
        ));
    }
    Ok((file, head, header))
}
