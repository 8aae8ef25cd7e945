//! The patch redo journal: every state a killed patch can leave is completed
//! by a replay, and a journal that was never complete is discarded.
//!
//! The key decision: a kill is simulated here by cutting the patch short at
//! the byte level (writing part of what `PatchJournal::apply` writes), so
//! every intermediate state of the pack is reached in-process; the bake's
//! tests kill the real binary in each named window.

use std::os::unix::fs::FileExt;

use crate::support::{OwnedContent, analytic_height, spec, stamp, tiles_to_depth, write_pack};
use planet_terrain::TileAddress;
use planet_terrain::pack::journal::PatchJournal;
use planet_terrain::pack::{Codec, Pack, PackError, Pending, begin_patch, finish_patch, journal_path, replay_pending};

const CODEC: Codec = Codec::HeightsClassesColour;

/// A pack, the journal of one patch of it, and the pack's bytes before and
/// after the patch.
fn patched(dir: &std::path::Path) -> (std::path::PathBuf, PatchJournal, Vec<u8>, Vec<u8>) {
    let path = dir.join("p.planetpack");
    write_pack(&path, CODEC, &tiles_to_depth(2));
    let before = std::fs::read(&path).unwrap();
    let rough = |d: glam::DVec3| analytic_height(d) + 41.0 * ((d.x * 1e5).sin() * (d.y * 7e4).cos());
    let patch: Vec<_> = [TileAddress::new(0, 2, 1, 1).unwrap(), TileAddress::new(4, 2, 3, 0).unwrap()]
        .into_iter()
        .map(|t| spec(CODEC).encode(t, &OwnedContent::of(t, rough).as_content(CODEC)).unwrap())
        .collect();
    begin_patch(&path, &patch, stamp(9)).unwrap();
    let journal = PatchJournal::decode(&std::fs::read(journal_path(&path)).unwrap()).unwrap();
    let after = std::fs::read(&path).unwrap();
    assert_ne!(before, after);
    (path, journal, before, after)
}

#[test]
fn every_torn_state_of_a_journaled_patch_is_completed_by_replay() {
    let dir = tempfile::tempdir().unwrap();
    let (path, journal, before, after) = patched(dir.path());
    let journal_bytes = std::fs::read(journal_path(&path)).unwrap();
    // The states a kill leaves: first payload only; payloads and index, not
    // the header; everything (journal not yet removed).
    let first_payload = |f: &std::fs::File| {
        let p = &journal.payloads[0];
        f.write_all_at(p.bytes_in(&journal_bytes), p.offset).unwrap();
    };
    let all_payloads_and_index = |f: &std::fs::File| {
        for p in &journal.payloads {
            f.write_all_at(p.bytes_in(&journal_bytes), p.offset).unwrap();
        }
        for w in &journal.index_writes {
            f.write_all_at(&w.bytes, w.offset).unwrap();
        }
    };
    type Cut<'a> = &'a dyn Fn(&std::fs::File);
    let cuts: [(&str, Cut); 3] =
        [("payloads", &first_payload), ("index", &all_payloads_and_index), ("all", &|f| all_payloads_and_index(f))];
    for (name, cut) in cuts {
        std::fs::write(&path, &before).unwrap();
        cut(&std::fs::OpenOptions::new().write(true).open(&path).unwrap());
        std::fs::write(journal_path(&path), &journal_bytes).unwrap();
        if name == "index" {
            // The state of issue #13: the reader refuses, and says how to mend it.
            let e = Pack::open(&path).unwrap_err();
            assert!(matches!(e.rule(), PackError::IndexChecksum { .. }), "{e}");
            assert!(e.to_string().contains("planet-pack repair"), "{e}");
        }
        // Replay twice: it is idempotent.
        for _ in 0..2 {
            assert!(matches!(replay_pending(&path).unwrap(), Pending::Replayed(_)), "{name}");
            assert_eq!(std::fs::read(&path).unwrap(), after, "{name}: replay gives the patched bytes");
        }
        finish_patch(&path).unwrap();
        assert!(!journal_path(&path).exists());
        Pack::open(&path).unwrap().verify().unwrap();
    }
}

#[test]
fn a_torn_or_stale_journal_is_discarded_and_a_pending_one_blocks_a_new_patch() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _, before, _) = patched(dir.path());
    let journal_bytes = std::fs::read(journal_path(&path)).unwrap();
    // A new patch refuses while one is pending.
    let e = begin_patch(&path, &[], stamp(1)).unwrap_err();
    assert!(matches!(e.rule(), PackError::PatchPending { .. }), "{e}");
    // Torn anywhere (here: cut short, or one byte flipped): never complete,
    // so the pack was never touched, and the journal goes.
    for torn in [journal_bytes[..journal_bytes.len() / 2].to_vec(), {
        let mut b = journal_bytes.clone();
        b[700] ^= 1;
        b
    }] {
        std::fs::write(&path, &before).unwrap();
        std::fs::write(journal_path(&path), torn).unwrap();
        assert!(matches!(replay_pending(&path).unwrap(), Pending::Discarded { .. }));
        assert!(!journal_path(&path).exists());
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }
    // A complete journal for a pack that has since been replaced.
    write_pack(&path, Codec::Heights, &tiles_to_depth(1));
    let replaced = std::fs::read(&path).unwrap();
    std::fs::write(journal_path(&path), &journal_bytes).unwrap();
    assert!(matches!(replay_pending(&path).unwrap(), Pending::Stale { .. }));
    assert_eq!(std::fs::read(&path).unwrap(), replaced);
    assert!(matches!(replay_pending(&path).unwrap(), Pending::None));
}

/// The journal is parsed a field at a time from the file now (its payloads
/// skipped, not read): a journal whose checksum holds but whose counts or
/// lengths lie, or that is cut anywhere, is refused with a reason, never a
/// panic or a read past its end; and the file reader agrees with the
/// in-memory one on the good journal.
#[test]
fn a_journal_that_lies_about_its_layout_is_refused_never_believed() {
    let dir = tempfile::tempdir().unwrap();
    let (path, journal, _, _) = patched(dir.path());
    let good = std::fs::read(journal_path(&path)).unwrap();
    let with_crc = |mut b: Vec<u8>| {
        let n = b.len();
        let crc = crc32fast::hash(&b[..n - 4]);
        b[n - 4..].copy_from_slice(&crc.to_le_bytes());
        b
    };
    // The index write count, the first write's length, the payload count and
    // the first payload's length, each set to a lie.
    let writes_at = 24 + 2 * 256;
    let first_write_length = writes_at + 8 + 8;
    let payloads_count = (journal.payloads[0].at - 20 - 8) as usize;
    let first_payload_length = (journal.payloads[0].at - 4) as usize;
    for (at, width) in [(writes_at, 8), (first_write_length, 8), (payloads_count, 8), (first_payload_length, 4)] {
        for lie in [0u64, 1, 7, u64::MAX / 2, u64::MAX] {
            let mut b = good.clone();
            b[at..at + width].copy_from_slice(&lie.to_le_bytes()[..width]);
            let b = with_crc(b);
            if b == good {
                continue;
            }
            let reason = PatchJournal::decode(&b).expect_err("a lying layout is refused");
            assert!(!reason.is_empty());
        }
    }
    for cut in (0..good.len()).step_by(97) {
        assert!(PatchJournal::decode(&good[..cut]).is_err(), "cut at {cut}");
    }
    // Replay reads the file; a lying layout there is discarded, the pack untouched.
    let before = std::fs::read(&path).unwrap();
    let mut lie = good.clone();
    lie[payloads_count..payloads_count + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    std::fs::write(journal_path(&path), with_crc(lie)).unwrap();
    assert!(matches!(replay_pending(&path).unwrap(), Pending::Discarded { .. }));
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(PatchJournal::decode(&good).unwrap(), journal);
}

/// A patch's tiles whose store hands back other bytes than it was given
/// for one tile (a scratch file gone bad between the audit and the
/// journal).
struct Corrupted(Vec<planet_terrain::pack::EncodedTile>);

impl planet_terrain::pack::PatchTiles for Corrupted {
    fn count(&self) -> usize {
        self.0.len()
    }

    fn entry(&self, i: usize) -> planet_terrain::pack::IndexEntry {
        self.0[i].entry_at(0)
    }

    fn payload(&self, i: usize) -> std::io::Result<Vec<u8>> {
        let mut bytes = self.0[i].payload.clone();
        if i == 1 {
            bytes[7] ^= 0x10;
        }
        Ok(bytes)
    }
}

/// Regression (review of the streamed journal): a payload that fails its
/// entry's checksum never reaches the journal or the pack, and the journal
/// begun for it is removed: the pack is as it was and nothing is pending.
#[test]
fn a_payload_that_fails_its_checksum_stops_the_patch_before_the_pack_changes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.planetpack");
    write_pack(&path, CODEC, &tiles_to_depth(2));
    let before = std::fs::read(&path).unwrap();
    let patch: Vec<_> = [TileAddress::new(0, 2, 1, 1).unwrap(), TileAddress::new(4, 2, 3, 0).unwrap()]
        .into_iter()
        .map(|t| spec(CODEC).encode(t, &OwnedContent::of(t, |d| analytic_height(d) + 9.0).as_content(CODEC)).unwrap())
        .collect();
    let e = begin_patch(&path, &Corrupted(patch), stamp(4)).unwrap_err();
    assert!(e.to_string().contains("fails its checksum"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert!(!journal_path(&path).exists(), "no journal is left pending");
    assert!(matches!(replay_pending(&path).unwrap(), Pending::None));
}
