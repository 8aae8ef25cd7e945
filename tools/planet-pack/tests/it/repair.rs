//! `planet-pack repair` on the real binary: it completes a patch killed
//! between its index and its header (the state of issue #13), says so, and
//! clears an interrupted bake's leftovers.
//!
//! The key decision: the interrupted state is built from the patch's own
//! journal (its payloads and index written, its header not), byte for byte
//! what a kill in that window leaves, so the test needs no crash hook.

use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::{Command, Output};

use planet_terrain::TileAddress;
use planet_terrain::geo::address::TILE_STORED_SAMPLE_COUNT;
use planet_terrain::pack::journal::PatchJournal;
use planet_terrain::pack::{Coverage, Pack, PatchStamp, TileContent, begin_patch, journal_path, tmp_path};
use planet_terrain::testing::write_procedural_pack;

fn repair(pack: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_planet-pack")).arg("repair").arg(pack).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn repair_completes_a_patch_killed_before_its_header_and_clears_leftovers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.planetpack");
    write_procedural_pack(&path, 1).unwrap();
    let before = std::fs::read(&path).unwrap();
    let spec = {
        let pack = Pack::open(&path).unwrap();
        let h = pack.header().clone();
        planet_terrain::pack::PackSpec {
            body: h.body,
            tier: h.tier,
            codec: h.codec,
            height_data_depth: h.height_data_depth,
            colour_data_depth: h.colour_data_depth,
            coverage: h.coverage,
            fingerprint: h.fingerprint,
            compression_level: h.compression_level,
        }
    };
    let heights: Vec<f64> = (0..TILE_STORED_SAMPLE_COUNT).map(|k| (k % 977) as f64 * 3.5).collect();
    let classes = vec![2u8; TILE_STORED_SAMPLE_COUNT];
    let colour = vec![[10u8, 200, 30]; TILE_STORED_SAMPLE_COUNT];
    let content = TileContent {
        heights: &heights,
        classes: Some(&classes),
        colour: Some(&colour),
        geometric_error: 5.0,
        measured: false,
        voids: None,
    };
    let tile = TileAddress::new(2, 1, 1, 0).unwrap();
    begin_patch(
        &path,
        &[spec.encode(tile, &content).unwrap()],
        PatchStamp {
            fingerprint: [3; 32],
            region: Coverage { south: 1.0, west: 2.0, north: 3.0, east: 4.0 },
            inputs: [5; 16],
            detail: None,
        },
    )
    .unwrap();
    let after = std::fs::read(&path).unwrap();
    let journal_bytes = std::fs::read(journal_path(&path)).unwrap();
    let journal = PatchJournal::decode(&journal_bytes).unwrap();

    // Killed after the index, before the header: the pack refuses to open.
    std::fs::write(&path, &before).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    for p in &journal.payloads {
        file.write_all_at(p.bytes_in(&journal_bytes), p.offset).unwrap();
    }
    for w in &journal.index_writes {
        file.write_all_at(&w.bytes, w.offset).unwrap();
    }
    drop(file);
    let refused = Command::new(env!("CARGO_BIN_EXE_planet-pack")).arg("verify").arg(&path).output().unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("planet-pack repair"), "{refused:?}");
    std::fs::write(tmp_path(&path), b"an assembled file an interrupted bake left").unwrap();

    let repaired = repair(&path);
    assert!(repaired.status.success(), "{repaired:?}");
    let said = stdout(&repaired);
    assert!(said.contains("completed an interrupted patch from its journal: 1 tiles"), "{said}");
    assert!(said.contains("removed") && said.contains(".tmp"), "{said}");
    assert!(said.contains("opens: 30 tiles"), "{said}");
    assert_eq!(std::fs::read(&path).unwrap(), after, "the replay wrote exactly the patch");
    assert!(!journal_path(&path).exists() && !tmp_path(&path).exists());

    let again = repair(&path);
    assert!(again.status.success() && stdout(&again).contains("nothing to repair"), "{again:?}");
}

/// Regression: on a file that is not a pack, `repair` printed "nothing to
/// repair" and then failed with the file's error.
#[test]
fn repair_of_a_file_that_is_not_a_pack_says_only_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("not-a.planetpack");
    std::fs::write(&path, vec![7u8; 4096]).unwrap();
    let refused = repair(&path);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success() && stderr.contains(path.to_str().unwrap()), "{refused:?}");
    assert!(!stdout(&refused).contains("nothing to repair"), "{refused:?}");
}
