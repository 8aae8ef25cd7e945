//! The shard file: what one part of a sharded bake hands the merge.
//!
//! The key decision: a shard file is a valid `.planetpack` of the part's
//! own tiles (so `planet-pack info`/`verify` read it, and it is written,
//! resumed and audited by the same code as a pack), followed, past the
//! pack's `file_length` where readers never look, by a checksummed shard
//! section. The section says which bake and which part this is (the bake's
//! fingerprint, the plan, the tile set's name), carries the surface blocks
//! (classes and colour) of the coarse tiles the plan gives this part, which
//! the merge cannot sample because it opens no raster, and declares the
//! coarse tiles this part's own tiles put in the set (`shard_tiles`). A
//! part of a regional bake can hold no tile of its own (its ground is all
//! voids); a pack holds at least one tile, so its file is the section
//! alone, starting at byte 0:
//!
//! ```text
//! file_length of the pack (0: no pack, a part with no tiles of its own)
//! |  records: per coarse tile, zstd(classes ++ colour), empty without a surface
//! |  table: per coarse tile, key u64 | offset u64 (from the section start) | length u32
//! |         | CRC-32 of the record u32
//! |  declared: per coarse tile of the set this part declares, key u64, ascending
//! |  metadata: JSON (ShardMeta)
//! |  footer (48 bytes): section start u64 | table count u64 | declared count u64
//! |                     | JSON length u64 | CRC-32 of table, declared, JSON and the
//! |                     | four lengths u32 | version u32 | "PLSHARD\x01"
//! end of file
//! ```
//!
//! Opening a section reads and checks its table and metadata only; a
//! record is checked against its own CRC when its surface is read. Every
//! wave task opens every part (version 1 checksummed the records with the
//! rest, so each task read every shard's surfaces: at 1,000 shards of a
//! colour bake, about 126 GB a task), and reads the few records it uses.
//!
//! docs/CLUSTER.md describes it for users.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use planet_terrain::TileAddress;
use planet_terrain::geo::address::{TILE_STORED_SAMPLE_COUNT, TileKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::BakeError;
use crate::stages::sampling::SurfaceSamples;

const MAGIC: [u8; 8] = *b"PLSHARD\x01";
const VERSION: u32 = 3;
const FOOTER: u64 = 48;
const TABLE_ROW: usize = 24;

/// What a shard says about itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ShardMeta {
    pub(crate) shard: u32,
    pub(crate) shards: u32,
    /// The bake's fingerprint (inputs by content, and parameters), hex.
    pub(crate) fingerprint: String,
    /// Depth of the subtree roots.
    pub(crate) root_depth: u8,
    /// The plan's first root key of every part.
    pub(crate) starts: Vec<u64>,
    /// Estimated work of every part.
    pub(crate) work: Vec<u64>,
    /// Tiles in the whole bake where the plan knows them (a global set's),
    /// and the set's name (`SetShape::digest`), hex.
    pub(crate) total_tiles: Option<u64>,
    pub(crate) tile_set_digest: String,
    /// The bake's void policy (`--void-value`), which the merge applies to
    /// the levels it filters.
    pub(crate) void_value: Option<f64>,
    /// The DEM the shard read (for people; identity is the fingerprint).
    pub(crate) dem: String,
    /// The planet-bake build that baked it (`build_id`): shards of two
    /// builds may differ in bytes, so the merge takes only one build's.
    pub(crate) build: String,
    /// Set in a wave file (a task of a wave above the shards, `wave`), whose
    /// `shard` is then the first part of its task's group; absent (and not
    /// written) in a shard file, so a shard's section is what it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) wave: Option<WaveMeta>,
}

/// Which task of which wave a wave file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WaveMeta {
    pub(crate) wave: u32,
    pub(crate) task: u32,
    pub(crate) tasks: u32,
}

/// The SHA-256 (first 16 bytes, hex) of the running executable: one build
/// of planet-bake, whatever its version string says.
pub(crate) fn build_id() -> Result<String, BakeError> {
    static ID: std::sync::OnceLock<Result<String, String>> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let exe = std::env::current_exe().map_err(|e| format!("finding this executable: {e}"))?;
        let digest = crate::digest::file_digest(&exe).map_err(|e| e.to_string())?;
        let mut h = Sha256::new();
        digest.feed(&mut h);
        Ok(hex(&h.finalize()[..16]))
    })
    .clone()
    .map_err(BakeError::BuildId)
}

impl ShardMeta {
    /// The rules a section's metadata must hold beyond its checksum (a
    /// section can be well formed and still lie).
    fn check(&self, path: &Path) -> Result<(), BakeError> {
        let n = self.shards as usize;
        let rule =
            |ok: bool, what: &str| if ok { Ok(()) } else { Err(broken(path, format!("shard metadata: {what}"))) };
        rule(self.shards >= 1 && self.shard < self.shards, "the shard index must be below the shard count")?;
        rule(self.starts.len() == n && self.work.len() == n, "the plan must have one start and one work per shard")?;
        rule(self.starts.first() == Some(&0), "the plan's first part must start at key 0")?;
        rule(self.starts.windows(2).all(|w| w[0] < w[1]), "the plan's starts must ascend")?;
        rule((1..=planet_terrain::MAX_DEPTH).contains(&self.root_depth), "the root depth is out of range")?;
        if let Some(w) = self.wave {
            let tasks = crate::cluster::plan::WavePlan::new(self.shards).tasks_of(w.wave);
            rule(tasks == Some(w.tasks), "a wave's task count must be the wave plan's for this shard count")?;
            rule(w.task < w.tasks, "a wave's task index must be below its task count")?;
        }
        rule(self.fingerprint.len() == 64 && self.tile_set_digest.len() == 64, "digests are 32 bytes of hex")
    }
}

/// Hex of bytes.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn broken(path: &Path, rule: impl std::fmt::Display) -> BakeError {
    BakeError::Shard { path: path.to_owned(), message: rule.to_string() }
}

/// Appends the shard section to the assembled pack at `path`, whose pack
/// ends at `file_length` (0: a part with no tiles of its own, whose file
/// is the section alone): `coarse` in ascending key order, each with its
/// surface (`None` for a pack without classes or colour), and `declared`,
/// the coarse tiles this part puts in the set, ascending.
pub(crate) fn append_section(
    path: &Path,
    file_length: u64,
    meta: &ShardMeta,
    coarse: &[(TileAddress, Option<SurfaceSamples>)],
    declared: &[TileAddress],
) -> Result<(), BakeError> {
    let fail = |e: std::io::Error| broken(path, format!("writing the shard section: {e}"));
    let file = OpenOptions::new().write(true).create(true).truncate(false).open(path).map_err(fail)?;
    file.set_len(file_length).map_err(fail)?;
    let mut w = BufWriter::new(&file);
    use std::io::Seek;
    w.seek(std::io::SeekFrom::Start(file_length)).map_err(fail)?;
    let mut crc = crc32fast::Hasher::new();
    let mut put = |w: &mut BufWriter<&File>, bytes: &[u8], checked: bool| -> std::io::Result<()> {
        if checked {
            crc.update(bytes);
        }
        w.write_all(bytes)
    };
    let mut table = Vec::with_capacity(coarse.len() * TABLE_ROW);
    let mut at = 0u64;
    for (tile, surface) in coarse {
        let record = match surface {
            Some((classes, colour)) => {
                let mut raw = classes.clone();
                raw.extend(colour.iter().flatten());
                zstd::bulk::compress(&raw, 3).map_err(fail)?
            }
            None => Vec::new(),
        };
        // A record carries its own checksum, in its row.
        put(&mut w, &record, false).map_err(fail)?;
        table.extend_from_slice(&tile.key().raw().to_le_bytes());
        table.extend_from_slice(&at.to_le_bytes());
        table.extend_from_slice(&(record.len() as u32).to_le_bytes());
        table.extend_from_slice(&crc32fast::hash(&record).to_le_bytes());
        at += record.len() as u64;
    }
    put(&mut w, &table, true).map_err(fail)?;
    let keys: Vec<u8> = declared.iter().flat_map(|t| t.key().raw().to_le_bytes()).collect();
    put(&mut w, &keys, true).map_err(fail)?;
    let json = serde_json::to_vec(meta).expect("plain data serialises");
    put(&mut w, &json, true).map_err(fail)?;
    let mut footer = Vec::with_capacity(FOOTER as usize);
    for length in [file_length, coarse.len() as u64, declared.len() as u64, json.len() as u64] {
        footer.extend_from_slice(&length.to_le_bytes());
    }
    // The footer's lengths are checksummed too: a flipped bit there would
    // move where the table and metadata are read from.
    crc.update(&footer);
    footer.extend_from_slice(&crc.finalize().to_le_bytes());
    footer.extend_from_slice(&VERSION.to_le_bytes());
    footer.extend_from_slice(&MAGIC);
    w.write_all(&footer).map_err(fail)?;
    w.flush().map_err(fail)?;
    drop(w);
    file.sync_all().map_err(fail)
}

/// A shard section read back and checked: the metadata, the coarse tiles'
/// table (their surfaces are read on demand) and the declared tiles.
#[derive(Debug)]
pub(crate) struct ShardSection {
    pub(crate) path: PathBuf,
    pub(crate) meta: ShardMeta,
    /// Where the section starts: the pack's `file_length`, or 0 where the
    /// file holds no pack.
    pub(crate) start: u64,
    /// Coarse tiles in ascending key order: key, record offset, length,
    /// the record's CRC-32.
    pub(crate) table: Vec<(TileKey, u64, u32, u32)>,
    /// The coarse tiles this part puts in the set, ascending.
    pub(crate) declared: Vec<TileKey>,
    file: File,
}

impl ShardSection {
    /// Reads and checks the section at the end of `path`, wherever it
    /// starts (the caller checks that against the pack before it).
    pub(crate) fn read(path: &Path) -> Result<ShardSection, BakeError> {
        let file = File::open(path).map_err(|e| broken(path, format!("opening it: {e}")))?;
        let length = file.metadata().map_err(|e| broken(path, e))?.len();
        let not_a_shard = "not a shard file: it has no shard section after its pack (a pack baked whole, not by planet-bake shard, or a shard cut short)";
        if length < FOOTER {
            return Err(broken(path, not_a_shard));
        }
        let mut footer = [0u8; FOOTER as usize];
        file.read_exact_at(&mut footer, length - FOOTER).map_err(|e| broken(path, e))?;
        let u64_at = |k: usize| u64::from_le_bytes(footer[k..k + 8].try_into().expect("eight bytes"));
        let u32_at = |k: usize| u32::from_le_bytes(footer[k..k + 4].try_into().expect("four bytes"));
        if footer[40..] != MAGIC {
            return Err(broken(path, not_a_shard));
        }
        if u32_at(36) != VERSION {
            return Err(broken(path, format!("shard section version {} (this build reads {VERSION})", u32_at(36))));
        }
        let (start, rows, declared_count, json_length) = (u64_at(0), u64_at(8), u64_at(16), u64_at(24));
        let body = length - FOOTER;
        let lengths = rows.checked_mul(TABLE_ROW as u64).zip(declared_count.checked_mul(8));
        let fits = lengths
            .and_then(|(t, d)| t.checked_add(d)?.checked_add(json_length))
            .is_some_and(|tdj| start.checked_add(tdj).is_some_and(|end| end <= body));
        if !fits {
            return Err(broken(
                path,
                format!("shard footer at byte {}: its lengths do not fit the file", length - FOOTER),
            ));
        }
        // The table, declared keys and metadata are checked before any of
        // them is believed; each record is checked when it is read.
        let declared_at = body - json_length - declared_count * 8;
        let table_at = declared_at - rows * TABLE_ROW as u64;
        let mut crc = crc32fast::Hasher::new();
        let mut buffer = vec![0u8; 1 << 20];
        let mut at = table_at;
        while at < body {
            let n = ((body - at) as usize).min(buffer.len());
            file.read_exact_at(&mut buffer[..n], at).map_err(|e| broken(path, e))?;
            crc.update(&buffer[..n]);
            at += n as u64;
        }
        crc.update(&footer[..32]);
        if crc.finalize() != u32_at(32) {
            return Err(broken(
                path,
                format!(
                    "shard section's table and metadata from byte {table_at}: checksum mismatch; the file is torn or corrupt"
                ),
            ));
        }
        let json_at = body - json_length;
        let mut json = vec![0u8; json_length as usize];
        file.read_exact_at(&mut json, json_at).map_err(|e| broken(path, e))?;
        let meta: ShardMeta = serde_json::from_slice(&json)
            .map_err(|e| broken(path, format!("shard metadata at byte {json_at}: {e}")))?;
        meta.check(path)?;
        let mut raw = vec![0u8; (rows as usize) * TABLE_ROW];
        file.read_exact_at(&mut raw, table_at).map_err(|e| broken(path, e))?;
        let mut table: Vec<(TileKey, u64, u32, u32)> = Vec::with_capacity(rows as usize);
        for (n, row) in raw.chunks_exact(TABLE_ROW).enumerate() {
            let key = u64::from_le_bytes(row[0..8].try_into().expect("eight"));
            let key = TileKey::from_raw(key).map_err(|e| {
                broken(path, format!("coarse table row {n} at byte {}: {e}", table_at + (n * TABLE_ROW) as u64))
            })?;
            let offset = u64::from_le_bytes(row[8..16].try_into().expect("eight"));
            let len = u32::from_le_bytes(row[16..20].try_into().expect("four"));
            let crc = u32::from_le_bytes(row[20..24].try_into().expect("four"));
            let inside = offset.checked_add(u64::from(len)).is_some_and(|end| end <= table_at - start);
            if !inside || table.last().is_some_and(|(k, ..)| *k >= key) {
                return Err(broken(path, format!("coarse table row {n}: out of order or out of bounds")));
            }
            table.push((key, offset, len, crc));
        }
        let declared = read_declared(&file, path, declared_at, declared_count, meta.root_depth)?;
        Ok(ShardSection { path: path.to_owned(), meta, start, table, declared, file })
    }

    /// The classes and colour the shard sampled for coarse `tile`.
    pub(crate) fn surface(&self, tile: TileAddress) -> Result<SurfaceSamples, BakeError> {
        let key = tile.key();
        let row = self
            .table
            .binary_search_by_key(&key, |r| r.0)
            .map_err(|_| broken(&self.path, format!("coarse tile {tile} has no surface record here")))?;
        let (_, offset, len, crc) = self.table[row];
        let mut record = vec![0u8; len as usize];
        self.file.read_exact_at(&mut record, self.start + offset).map_err(|e| broken(&self.path, e))?;
        if crc32fast::hash(&record) != crc {
            let at = self.start + offset;
            return Err(broken(
                &self.path,
                format!("surface record of {tile} at byte {at}: checksum mismatch; the file is torn or corrupt"),
            ));
        }
        let n = TILE_STORED_SAMPLE_COUNT;
        let raw = zstd::bulk::decompress(&record, 4 * n)
            .map_err(|e| broken(&self.path, format!("surface record of {tile}: {e}")))?;
        if raw.len() != 4 * n {
            return Err(broken(&self.path, format!("surface record of {tile}: {} bytes, not {}", raw.len(), 4 * n)));
        }
        let colour = raw[n..].chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
        Ok((raw[..n].to_vec(), colour))
    }
}

/// Reads `count` declared keys at `at`: valid keys, ascending, of tiles
/// above `root_depth`.
fn read_declared(file: &File, path: &Path, at: u64, count: u64, root_depth: u8) -> Result<Vec<TileKey>, BakeError> {
    let mut raw = vec![0u8; count as usize * 8];
    file.read_exact_at(&mut raw, at).map_err(|e| broken(path, e))?;
    let mut declared: Vec<TileKey> = Vec::with_capacity(count as usize);
    for (n, bytes) in raw.chunks_exact(8).enumerate() {
        let key = TileKey::from_raw(u64::from_le_bytes(bytes.try_into().expect("eight")))
            .ok()
            .filter(|k| k.depth() < root_depth && declared.last().is_none_or(|last| last < k))
            .ok_or_else(|| {
                broken(
                    path,
                    format!(
                        "declared coarse tile {n} at byte {}: not a tile above the root depth in ascending order",
                        at + 8 * n as u64
                    ),
                )
            })?;
        declared.push(key);
    }
    Ok(declared)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> ShardMeta {
        ShardMeta {
            shard: 1,
            shards: 3,
            fingerprint: "ab".repeat(32),
            root_depth: 2,
            starts: vec![0, 10, 20],
            work: vec![5, 5, 5],
            total_tiles: Some(126),
            tile_set_digest: "cd".repeat(32),
            void_value: Some(0.0),
            dem: "dem.tif".into(),
            build: "0123".into(),
            wave: None,
        }
    }

    /// Coarse tiles above the root depth 2 of `meta`.
    fn declared() -> Vec<TileAddress> {
        vec![TileAddress::new(0, 0, 0, 0).unwrap(), TileAddress::new(0, 1, 1, 0).unwrap()]
    }

    /// A shard file whose "pack" is 1000 opaque bytes, with two coarse
    /// tiles' surfaces.
    fn shard_file(dir: &Path) -> (PathBuf, Vec<(TileAddress, Option<SurfaceSamples>)>) {
        let path = dir.join("x.planetshard");
        std::fs::write(&path, vec![7u8; 1000]).unwrap();
        let n = TILE_STORED_SAMPLE_COUNT;
        let a = TileAddress::new(0, 1, 1, 0).unwrap();
        let b = TileAddress::new(3, 1, 0, 1).unwrap();
        let surface = |s: u8| Some(((0..n).map(|k| (k % 7) as u8 + s).collect(), vec![[s, 2, 3]; n]));
        let mut coarse = vec![(a, surface(1)), (b, surface(9))];
        coarse.sort_by_key(|c| c.0.key());
        append_section(&path, 1000, &meta(), &coarse, &declared()).unwrap();
        (path, coarse)
    }

    #[test]
    fn a_section_reads_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (path, coarse) = shard_file(dir.path());
        let section = ShardSection::read(&path).unwrap();
        assert_eq!(section.meta, meta());
        assert_eq!(section.declared, declared().iter().map(|t| t.key()).collect::<Vec<_>>());
        for (tile, surface) in &coarse {
            assert_eq!(&section.surface(*tile).unwrap(), surface.as_ref().unwrap());
        }
        let absent = TileAddress::new(5, 1, 0, 0).unwrap();
        assert!(section.surface(absent).unwrap_err().to_string().contains("no surface record"));
    }

    /// Regression: a section whose checksum holds can still lie; an empty
    /// plan panicked the merge ("attempt to subtract with overflow").
    #[test]
    fn well_formed_metadata_that_lies_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lie.planetshard");
        type Lie = (fn(&mut ShardMeta), &'static str);
        let lies: [Lie; 5] = [
            (|m| m.starts.clear(), "one start and one work per shard"),
            (|m| m.shard = 3, "below the shard count"),
            (|m| m.starts[0] = 4, "start at key 0"),
            (|m| m.starts[2] = 10, "ascend"),
            (|m| m.root_depth = 200, "root depth"),
        ];
        for (lie, says) in lies {
            let mut m = meta();
            lie(&mut m);
            std::fs::write(&path, vec![7u8; 1000]).unwrap();
            append_section(&path, 1000, &m, &[], &[]).unwrap();
            let e = ShardSection::read(&path).unwrap_err().to_string();
            assert!(e.contains(says), "{says}: {e}");
        }
    }

    /// A part with no tile of its own: the section alone, from byte 0.
    #[test]
    fn a_section_without_a_pack_reads_back_from_byte_zero() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("void.planetshard");
        let tile = TileAddress::new(2, 1, 0, 1).unwrap();
        append_section(&path, 0, &meta(), &[(tile, None)], &declared()).unwrap();
        let section = ShardSection::read(&path).unwrap();
        assert_eq!((section.start, section.table.len(), section.declared.len()), (0, 1, 2));
    }

    /// Declared tiles must be coarse (above the root depth) and ascending.
    #[test]
    fn a_declaration_of_a_root_or_out_of_order_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lie.planetshard");
        let root = TileAddress::new(0, 2, 1, 1).unwrap();
        let (a, b) = (declared()[0], declared()[1]);
        for lie in [vec![a, root], vec![b, a], vec![a, a]] {
            std::fs::write(&path, vec![7u8; 1000]).unwrap();
            append_section(&path, 1000, &meta(), &[], &lie).unwrap();
            let e = ShardSection::read(&path).unwrap_err().to_string();
            assert!(e.contains("declared coarse tile 1") && e.contains("lie.planetshard"), "{lie:?}: {e}");
        }
    }

    /// Random damage (bytes overwritten anywhere in the section, the file
    /// cut or grown) is refused with the file named or read whole, never a
    /// panic: a shard file lies on shared storage that any job can write.
    #[test]
    fn random_damage_to_a_section_is_refused_or_read_never_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let (path, coarse) = shard_file(dir.path());
        let good = std::fs::read(&path).unwrap();
        let damaged = dir.path().join("damaged.planetshard");
        // xorshift64: the same damage on every run.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut refused = 0;
        for _ in 0..2000 {
            let mut bytes = good.clone();
            for _ in 0..1 + next() % 6 {
                let at = 1000 + (next() as usize) % (bytes.len() - 1000);
                bytes[at] = next() as u8;
            }
            match next() % 4 {
                0 => bytes.truncate(1000 + (next() as usize) % (bytes.len() - 1000)),
                1 => bytes.extend((0..next() % 64).map(|_| next() as u8)),
                _ => {}
            }
            std::fs::write(&damaged, &bytes).unwrap();
            let read = ShardSection::read(&damaged)
                .and_then(|s| coarse.iter().try_for_each(|(tile, _)| s.surface(*tile).map(drop)).map(|()| s));
            match read {
                Ok(section) => assert!(section.declared.windows(2).all(|w| w[0] < w[1])),
                Err(e) => {
                    assert!(e.to_string().contains("damaged.planetshard"), "{e}");
                    refused += 1;
                }
            }
        }
        assert!(refused > 1900, "only {refused} of 2000 damaged files refused");
    }

    #[test]
    fn every_flipped_bit_of_the_section_or_a_cut_is_refused_never_believed() {
        let dir = tempfile::tempdir().unwrap();
        let (path, coarse) = shard_file(dir.path());
        let good = std::fs::read(&path).unwrap();
        let flipped = dir.path().join("flipped.planetshard");
        // Read whole: the section, then every record's surface.
        let read_all = |path: &Path| {
            ShardSection::read(path).and_then(|s| coarse.iter().try_for_each(|(tile, _)| s.surface(*tile).map(drop)))
        };
        read_all(&path).unwrap();
        for at in 1000..good.len() {
            for bit in [0x01u8, 0x80] {
                let mut bytes = good.clone();
                bytes[at] ^= bit;
                std::fs::write(&flipped, &bytes).unwrap();
                let e = read_all(&flipped).expect_err("a flipped bit is caught");
                assert!(e.to_string().contains("flipped.planetshard"), "{e}");
            }
        }
        // A flipped record is refused when it is read, not before: opening
        // a section reads its table and metadata alone.
        let mut bytes = good.clone();
        bytes[1003] ^= 0x10;
        std::fs::write(&flipped, &bytes).unwrap();
        let section = ShardSection::read(&flipped).expect("the table and metadata are intact");
        let e = coarse.iter().find_map(|(tile, _)| section.surface(*tile).err()).expect("the record is caught");
        assert!(e.to_string().contains("surface record") && e.to_string().contains("checksum mismatch"), "{e}");
        for cut in [1, 7, 40, 41, good.len() - 1000] {
            std::fs::write(&flipped, &good[..good.len() - cut]).unwrap();
            assert!(ShardSection::read(&flipped).is_err(), "cut by {cut}");
        }
    }
}
