//! Sharded bakes: every part baked alone, then merged, must be the bytes a
//! single process writes; a killed shard resumes to its own same bytes;
//! the merge names a missing, repeated or foreign shard and writes nothing.

use std::path::{Path, PathBuf};

use planet_bake::{BakeOptions, MergeOptions, MergeStage, WaveOptions, bake, bake_wave, merge, wave_tasks};
use planet_cli::shard::Shard;
use planet_terrain::pack::Pack;

use super::{Quiet, nodes, options, path_str};
use crate::support::*;

/// Bakes every part of `base` cut `count` ways into `dir`, returns the
/// shard files.
fn bake_shards(base: &BakeOptions, dir: &Path, count: u32) -> Vec<PathBuf> {
    (0..count)
        .map(|index| {
            let out = dir.join(format!("part-{index}-of-{count}.planetshard"));
            let o = BakeOptions { out: out.clone(), shard: Some(Shard { index, count }), ..base.clone() };
            let report = bake(&o, &Quiet).unwrap().to_json();
            assert_eq!(report["mode"], "shard");
            assert_eq!(report["accuracy_audit"]["passed"], true);
            out
        })
        .collect()
}

fn merge_options(shards: &[PathBuf], out: &Path) -> MergeOptions {
    MergeOptions {
        shards: shards.to_vec(),
        out: out.to_owned(),
        jobs: Some(2),
        memory: Some(512 << 20),
        resume: false,
        stage: MergeStage::Whole,
    }
}

fn merge_stage(parts: &[PathBuf], out: &Path, stage: MergeStage) -> Result<serde_json::Value, planet_bake::BakeError> {
    merge(&MergeOptions { stage, ..merge_options(parts, out) }, &Quiet).map(|r| r.to_json())
}

/// The merge in stages: laid out for `tasks` copy tasks, which run in
/// `order`, then committed; each stage's report checked.
fn merge_in_stages(parts: &[PathBuf], out: &Path, tasks: u32, order: impl IntoIterator<Item = u32>) {
    let layout = merge_stage(parts, out, MergeStage::LayOut { copy_tasks: tasks }).unwrap();
    assert_eq!(layout["mode"], "merge layout");
    let ranges = layout["range_bytes"].as_array().unwrap();
    assert_eq!(ranges.len(), tasks as usize);
    let mut copied = 0;
    for task in order {
        let report = merge_stage(parts, out, MergeStage::Copy { task }).unwrap();
        assert_eq!((report["mode"].as_str(), report["task"].as_u64()), (Some("merge copy"), Some(u64::from(task))));
        assert_eq!(report["bytes"], ranges[task as usize]);
        copied += report["tiles"].as_u64().unwrap();
    }
    assert_eq!(copied, layout["tiles"].as_u64().unwrap(), "every tile copied once");
    let report = merge_stage(parts, out, MergeStage::Commit).unwrap();
    assert_eq!((report["mode"].as_str(), report["copy_tasks"].as_u64()), (Some("merge"), Some(u64::from(tasks))));
}

/// What a merge leaves beside its pack besides the pack: nothing, once done.
fn leftovers(out: &Path) -> Vec<String> {
    let name = out.file_name().unwrap().to_string_lossy().into_owned();
    let mut left: Vec<String> = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&name) && *n != name)
        .collect();
    left.sort();
    left
}

fn merge_into(shards: &[PathBuf], out: &Path) -> Result<serde_json::Value, planet_bake::BakeError> {
    merge(&merge_options(shards, out), &Quiet).map(|r| r.to_json())
}

/// Bakes every task of every wave above `shards` into `dir`, each wave from
/// the shards and the waves before it, as a scheduler's chain would; returns
/// the shards and every wave file.
fn bake_waves(shards: &[PathBuf], dir: &Path) -> Vec<PathBuf> {
    let count = shards.len() as u32;
    let mut parts = shards.to_vec();
    for (wave, &tasks) in (0u32..).zip(&wave_tasks(count)) {
        let before = parts.clone();
        for task in 0..tasks {
            let out = dir.join(format!("wave-{wave}-{task}-of-{count}.planetwave"));
            let options = WaveOptions { wave, task, ..merge_options(&before, &out).into() };
            let report = bake_wave(&options, &Quiet).unwrap().to_json();
            assert_eq!((report["mode"].as_str(), report["wave"].as_u64()), (Some("wave"), Some(u64::from(wave))));
            assert_eq!(report["accuracy_audit"]["passed"], true);
            // A task with no tiles writes no file.
            assert_eq!(out.exists(), report["tiles"] != 0, "{report}");
            if out.exists() {
                parts.push(out);
            }
        }
    }
    parts
}

/// A depth-3 bake of the fixture Earth with imagery and classes (codec 2),
/// its rasters written into `dir`.
fn colour_and_class_bake(dir: &Path) -> BakeOptions {
    let dem = earth_tiff(dir, "earth.tif", nodes(), GEO);
    let (imagery, classes) = colour_and_class_tiffs(dir);
    BakeOptions { depth: Some(3), imagery: Some(imagery), classes: Some(classes), ..options(&dem, &dir.join("unused")) }
}

fn single(base: &BakeOptions, dir: &Path) -> Vec<u8> {
    let out = dir.join("single.planetpack");
    bake(&BakeOptions { out: out.clone(), ..base.clone() }, &Quiet).unwrap();
    std::fs::read(out).unwrap()
}

fn assert_same_bytes(single: &[u8], merged: &Path, what: &str) {
    let merged = std::fs::read(merged).unwrap();
    assert_eq!(merged.len(), single.len(), "{what}: length");
    if let Some(at) = merged.iter().zip(single).position(|(a, b)| a != b) {
        panic!("{what}: the merged pack differs from the single-process one at byte {at}");
    }
}

#[test]
fn shards_merge_to_the_single_process_bytes_with_colour_and_classes() {
    let dir = tempfile::tempdir().unwrap();
    let base = colour_and_class_bake(dir.path());
    let single = single(&base, dir.path());
    let header = Pack::open(dir.path().join("single.planetpack")).unwrap().header().clone();
    assert!(header.height_data_depth >= 1, "the fixture has levels for the merge to filter");
    for count in [1, 3] {
        let shards = bake_shards(&base, dir.path(), count);
        // A shard is a pack a reader opens, holding only its part.
        let part = Pack::open(&shards[0]).unwrap();
        part.verify().unwrap();
        assert!(part.tile_count() < Pack::from_bytes(single.clone()).unwrap().tile_count());
        let out = dir.path().join(format!("merged-{count}.planetpack"));
        let report = merge_into(&shards, &out).unwrap();
        assert_eq!(report["mode"], "merge");
        assert_same_bytes(&single, &out, &format!("{count} shards"));
    }
}

#[test]
fn waves_bake_the_levels_above_the_shards_and_the_merge_only_lays_out_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let base = colour_and_class_bake(dir.path());
    let single = single(&base, dir.path());
    let coarse: u64 = {
        let pack = Pack::from_bytes(single.clone()).unwrap();
        let root = pack.header().height_data_depth;
        pack.all_entries().unwrap().iter().filter(|e| e.tile().depth() < root).count() as u64
    };
    // 8 shards: two waves of several tasks and a last one (8, 2, 1).
    for count in [1, 3, 8] {
        let sub = dir.path().join(format!("n{count}"));
        std::fs::create_dir(&sub).unwrap();
        let shards = bake_shards(&base, &sub, count);
        let parts = bake_waves(&shards, &sub);
        let wave_files = parts.len() - shards.len();
        assert!(wave_files >= wave_tasks(count).len().min(3), "{count} shards: {wave_files} wave files");
        let out = sub.join("merged.planetpack");
        let report = merge_into(&parts, &out).unwrap();
        assert_eq!(report["tiles_filtered"], 0, "{count} shards: the merge only laid out");
        assert_eq!(report["wave_files"], wave_files);
        assert_same_bytes(&single, &out, &format!("{count} shards and their waves"));
        // The merge in stages: copy tasks in any order, the same bytes.
        let staged = sub.join("staged.planetpack");
        merge_in_stages(&parts, &staged, 5, [3, 0, 4, 2, 1]);
        assert_same_bytes(&single, &staged, &format!("{count} shards and their waves, merged in stages"));
        assert_eq!(leftovers(&staged), Vec::<String>::new());
        // The waves' tiles are the coarse levels, each once.
        let held: u64 = parts[shards.len()..].iter().map(|p| Pack::open(p).unwrap().tile_count()).sum();
        assert_eq!(held, coarse, "{count} shards");
    }
}

/// Regression (review of #33): a task with no tiles left a file an earlier
/// bake wrote at its path, which the scripts' globs handed to the next
/// waves and the merge as a part of this bake.
#[test]
fn a_wave_task_with_no_tiles_writes_nothing_and_removes_what_an_earlier_bake_left_at_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let base = BakeOptions { depth: Some(2), ..options(&dem, &dir.path().join("unused")) };
    let shards = bake_shards(&base, dir.path(), 8);
    // Waves of 8, 2 and 1 tasks above a root depth of at most 2: the last
    // wave has no level left.
    let parts = bake_waves(&shards, dir.path());
    let last = dir.path().join("wave-2-0-of-8.planetwave");
    let journal = planet_terrain::pack::writer::partial_path(&last);
    assert!(!last.exists());
    std::fs::write(&last, b"an earlier bake's wave file").unwrap();
    std::fs::write(&journal, b"an earlier bake's journal").unwrap();
    let options = WaveOptions { wave: 2, task: 0, ..merge_options(&parts, &last).into() };
    assert_eq!(bake_wave(&options, &Quiet).unwrap().to_json()["tiles"], 0);
    assert!(!last.exists() && !journal.exists(), "the earlier bake's files are gone");
    let out = dir.path().join("merged.planetpack");
    merge_into(&parts, &out).unwrap();
    assert_same_bytes(&single(&base, dir.path()), &out, "8 shards of a depth-2 bake and their waves");
}

#[test]
fn a_wave_or_merge_missing_a_wave_task_names_it_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let base = BakeOptions { depth: Some(3), ..options(&dem, &dir.path().join("unused")) };
    let shards = bake_shards(&base, dir.path(), 8);
    let parts = bake_waves(&shards, dir.path());
    let out = dir.path().join("merged.planetpack");
    // Wave 0 has tasks 0..8: leave out task 5's file.
    let without: Vec<PathBuf> = parts.iter().filter(|p| !path_str(p).contains("wave-0-5-")).cloned().collect();
    let e = format!("{:#}", merge_into(&without, &out).unwrap_err());
    assert!(e.contains("wave:task 0:5 are missing"), "{e}");
    assert!(!out.exists());
    let wave1 = dir.path().join("again.planetwave");
    let options = WaveOptions { wave: 1, task: 0, ..merge_options(&without, &wave1).into() };
    let e = format!("{:#}", bake_wave(&options, &Quiet).unwrap_err());
    assert!(e.contains("0:5 are missing"), "{e}");
    let twice: Vec<PathBuf> = parts.iter().chain(&parts[8..9]).cloned().collect();
    let e = format!("{:#}", merge_into(&twice, &out).unwrap_err());
    assert!(e.contains("task 0 of wave 0 is given twice"), "{e}");
    for (wave, task, says) in [(3, 0, "has waves 0 to 2"), (1, 2, "has tasks 0 to 1")] {
        let options = WaveOptions { wave, task, ..merge_options(&parts, &wave1).into() };
        let e = format!("{:#}", bake_wave(&options, &Quiet).unwrap_err());
        assert!(e.contains(says), "{says}: {e}");
    }
    assert!(!out.exists() && !wave1.exists());
}

#[test]
fn a_regional_bake_with_voids_merges_to_the_single_process_bytes() {
    let dir = tempfile::tempdir().unwrap();
    // 20 x 30 degrees of the fixture, with its sea as voids given 0 m.
    let (west, north) = (10.0, 40.0);
    let (w, h) = ((30.0 / STEP) as usize, (20.0 / STEP) as usize);
    let regional: Vec<f32> = (0..w * h)
        .map(|k| {
            let (lat, lon) = (north - (k / w) as f64 * STEP, west + (k % w) as f64 * STEP);
            let v = node_value(lat, lon) as f32;
            if v < 0.0 { -9999.0 } else { v }
        })
        .collect();
    let dem = dir.path().join("regional.tif");
    write_tiff(&dem, (w, h), [west, STEP, 0.0, north, 0.0, -STEP], Some(4326), &[regional], Some(-9999.0));
    let base = BakeOptions { depth: Some(4), void_value: Some(0.0), ..options(&dem, &dir.path().join("unused")) };
    let single = single(&base, dir.path());
    let shards = bake_shards(&base, dir.path(), 2);
    let out = dir.path().join("merged.planetpack");
    merge_into(&shards, &out).unwrap();
    assert_same_bytes(&single, &out, "regional, 2 shards");
}

/// A depth-4 bake of 20 x 40 degrees of the fixture, west of 30 E all
/// voids (given 0 m), with global imagery and classes, written into `dir`.
fn half_voids_bake(dir: &Path) -> BakeOptions {
    let (west, north) = (10.0, 40.0);
    let (w, h) = ((40.0 / STEP) as usize, (20.0 / STEP) as usize);
    let regional: Vec<f32> = (0..w * h)
        .map(|k| {
            let (lat, lon) = (north - (k / w) as f64 * STEP, west + (k % w) as f64 * STEP);
            if lon < 30.0 { -9999.0 } else { node_value(lat, lon) as f32 }
        })
        .collect();
    let dem = dir.join("half-voids.tif");
    write_tiff(&dem, (w, h), [west, STEP, 0.0, north, 0.0, -STEP], Some(4326), &[regional], Some(-9999.0));
    let (imagery, classes) = colour_and_class_tiffs(dir);
    BakeOptions {
        depth: Some(4),
        void_value: Some(0.0),
        imagery: Some(imagery),
        classes: Some(classes),
        ..options(&dem, &dir.join("unused"))
    }
}

/// A shard section's lengths, from its footer (docs/CLUSTER.md, the
/// section's layout): table rows, declared keys, JSON bytes.
fn section_lengths(bytes: &[u8]) -> (usize, usize, usize) {
    let footer = &bytes[bytes.len() - 48..];
    let length = |k: usize| u64::from_le_bytes(footer[k..k + 8].try_into().unwrap()) as usize;
    (length(8), length(16), length(24))
}

/// The keys of the coarse tiles whose surfaces the shard at `path` sampled.
fn surface_keys(path: &Path) -> Vec<u64> {
    let bytes = std::fs::read(path).unwrap();
    let (rows, declared, json) = section_lengths(&bytes);
    let table_at = bytes.len() - 48 - json - 8 * declared - 24 * rows;
    (0..rows).map(|r| u64::from_le_bytes(bytes[table_at + 24 * r..][..8].try_into().unwrap())).collect()
}

/// Rewrites the declared coarse tiles of the shard section at `path` with
/// `change`, checksummed again, as a shard that declared otherwise would
/// have written it.
fn rewrite_declarations(path: &Path, change: impl FnOnce(&mut Vec<u64>)) {
    let mut bytes = std::fs::read(path).unwrap();
    let (rows, declared, json) = section_lengths(&bytes);
    let footer = bytes.split_off(bytes.len() - 48);
    let json_bytes = bytes.split_off(bytes.len() - json);
    let keys_bytes = bytes.split_off(bytes.len() - 8 * declared);
    let mut keys: Vec<u64> = keys_bytes.chunks_exact(8).map(|k| u64::from_le_bytes(k.try_into().unwrap())).collect();
    change(&mut keys);
    let table_at = bytes.len() - 24 * rows;
    keys.iter().for_each(|k| bytes.extend_from_slice(&k.to_le_bytes()));
    bytes.extend_from_slice(&json_bytes);
    let mut lengths = footer[..32].to_vec();
    lengths[16..24].copy_from_slice(&(keys.len() as u64).to_le_bytes());
    let mut crc = crc32fast::Hasher::new();
    crc.update(&bytes[table_at..]);
    crc.update(&lengths);
    bytes.extend_from_slice(&lengths);
    bytes.extend_from_slice(&crc.finalize().to_le_bytes());
    bytes.extend_from_slice(&footer[36..]);
    std::fs::write(path, bytes).unwrap();
}

/// A shard whose declaration was lost leaves its roots without their
/// parents: the merge names it, given the shards alone or the waves baked
/// from them, and writes nothing.
#[test]
fn a_shard_that_lost_its_declared_coarse_tiles_is_named_by_the_merge() {
    let dir = tempfile::tempdir().unwrap();
    let base = half_voids_bake(dir.path());
    let shards = bake_shards(&base, dir.path(), 3);
    let biggest = shards.iter().max_by_key(|p| std::fs::metadata(p).unwrap().len()).unwrap();
    rewrite_declarations(biggest, Vec::clear);
    let out = dir.path().join("merged.planetpack");
    let e = format!("{:#}", merge_into(&shards, &out).unwrap_err());
    assert!(e.contains("has no parent among the coarse tiles the shards declare"), "{e}");
    assert!(e.contains(&biggest.display().to_string()), "{e}");
    let parts = bake_waves(&shards, dir.path());
    let e = format!("{:#}", merge_into(&parts, &out).unwrap_err());
    assert!(e.contains("has no parent among the coarse tiles"), "{e}");
    assert!(!out.exists());
}

/// A shard that declares a coarse tile beyond its ground (one its owner
/// sampled, over voids, with nothing under it in the set) is named by the
/// merge, whose set would otherwise hold a tile the single bake has not.
#[test]
fn a_shard_that_declares_beyond_its_ground_is_named_by_the_merge() {
    let dir = tempfile::tempdir().unwrap();
    let base = half_voids_bake(dir.path());
    let single = Pack::from_bytes(single(&base, dir.path())).unwrap();
    let in_set = |key: u64| single.entry(planet_terrain::TileKey::from_raw(key).unwrap().address()).unwrap().is_some();
    let shards = bake_shards(&base, dir.path(), 3);
    // A sampled coarse tile outside the set whose parent is in it, and a
    // shard it is not the part of.
    let (owner, bogus) = (0..3)
        .find_map(|i| {
            let key = surface_keys(&shards[i]).into_iter().find(|&k| {
                let tile = planet_terrain::TileKey::from_raw(k).unwrap().address();
                !in_set(k) && tile.parent().is_some_and(|p| in_set(p.key().raw()))
            })?;
            Some((i, key))
        })
        .expect("the void half has sampled coarse tiles outside the set");
    let liar = &shards[(owner + 1) % 3];
    rewrite_declarations(liar, |keys| {
        keys.push(bogus);
        keys.sort_unstable();
    });
    let out = dir.path().join("merged.planetpack");
    let e = format!("{:#}", merge_into(&shards, &out).unwrap_err());
    assert!(e.contains("declared beyond its ground") && e.contains(&liar.display().to_string()), "{e}");
    assert!(!out.exists());
}

/// Regional rasters whose coverage the plan and the shards' walks must
/// measure at its hardest: one across the antimeridian (written from 170 E
/// to 190 E) and a polar cap (every longitude north of 60 N, so tiles at
/// the pole lie inside it). Each, cut 4 ways, merges to the single bytes.
#[test]
fn regional_bakes_across_the_antimeridian_and_over_a_pole_merge_to_the_single_process_bytes() {
    let dir = tempfile::tempdir().unwrap();
    // (name, west, north, width and height in degrees)
    let rasters = [("antimeridian", 170.0, 30.0, 20.0, 20.0), ("polar-cap", -180.0, 90.0, 360.0, 30.0)];
    for (name, west, north, width, height) in rasters {
        let (w, h) = ((width / STEP) as usize, (height / STEP) as usize);
        let values: Vec<f32> = (0..w * h)
            .map(|k| {
                let (lat, lon) = (north - (k / w) as f64 * STEP, west + (k % w) as f64 * STEP);
                node_value(lat, if lon > 180.0 { lon - 360.0 } else { lon }) as f32
            })
            .collect();
        let dem = dir.path().join(format!("{name}.tif"));
        write_tiff(&dem, (w, h), [west, STEP, 0.0, north, 0.0, -STEP], Some(4326), &[values], None);
        let sub = dir.path().join(name);
        std::fs::create_dir(&sub).unwrap();
        let base = BakeOptions { depth: Some(4), ..options(&dem, &sub.join("unused")) };
        let single = single(&base, &sub);
        let shards = bake_shards(&base, &sub, 4);
        let out = sub.join("merged.planetpack");
        merge_into(&shards, &out).unwrap();
        assert_same_bytes(&single, &out, name);
    }
}

/// A regional bake chooses its tiles shard by shard (each walks its own
/// part of the coverage, and declares the coarse tiles its tiles put in
/// the set): with half the raster voids, parts whose ground is all voids
/// hold no tile and write the section alone, and the shards, their waves,
/// and the merge in one process or in stages still give the single bytes,
/// colour and classes included (a coarse tile's surface comes from its own
/// part, empty or not).
#[test]
fn a_regional_bake_whose_void_parts_hold_no_tile_merges_to_the_single_process_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let base = half_voids_bake(dir.path());
    let single = single(&base, dir.path());
    let count = 6;
    let mut shards = Vec::new();
    let mut empty = 0;
    for index in 0..count {
        let out = dir.path().join(format!("part-{index}-of-{count}.planetshard"));
        let o = BakeOptions { out: out.clone(), shard: Some(Shard { index, count }), ..base.clone() };
        let report = bake(&o, &Quiet).unwrap().to_json();
        assert_eq!(report["bake_tiles"], serde_json::Value::Null, "a regional set is not known to a shard");
        if report["tiles"] == 0 {
            empty += 1;
            assert!(Pack::open(&out).is_err(), "part {index}: no pack, the section alone");
        }
        shards.push(out);
    }
    assert!((1..count).contains(&empty), "{empty} of {count} parts hold no tile");
    let out = dir.path().join("merged.planetpack");
    merge_into(&shards, &out).unwrap();
    assert_same_bytes(&single, &out, "regional with void parts, merged in one process");
    let parts = bake_waves(&shards, dir.path());
    let staged = dir.path().join("staged.planetpack");
    merge_in_stages(&parts, &staged, 3, [2, 0, 1]);
    assert_same_bytes(&single, &staged, "regional with void parts, waves and a merge in stages");
}

#[test]
fn the_merge_names_missing_repeated_and_foreign_shards_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let base = BakeOptions { depth: Some(2), ..options(&dem, &dir.path().join("unused")) };
    let shards = bake_shards(&base, dir.path(), 3);
    let foreign_dir = dir.path().join("other");
    std::fs::create_dir(&foreign_dir).unwrap();
    let foreign = bake_shards(&BakeOptions { tier: "other".into(), ..base.clone() }, &foreign_dir, 3);
    let out = dir.path().join("merged.planetpack");
    let cases: [(Vec<PathBuf>, &str); 4] = [
        (vec![shards[0].clone(), shards[2].clone()], "shards 1/3 of this bake are missing"),
        (vec![shards[0].clone(), shards[1].clone(), shards[1].clone(), shards[2].clone()], "given twice"),
        (vec![shards[0].clone(), foreign[1].clone(), shards[2].clone()], "a part of a different bake"),
        (vec![shards[0].clone(), shards[1].clone(), dem.clone()], "earth.tif"),
    ];
    for (given, says) in cases {
        let e = merge_into(&given, &out).unwrap_err();
        let text = format!("{e:#}");
        assert!(text.contains(says), "{says}: {text}");
        assert!(!out.exists(), "{says}: nothing at --out");
    }
    // The pack never goes over one of its own shards.
    let e = merge_into(&shards, &shards[2]).unwrap_err().to_string();
    assert!(e.contains("write over its own input"), "{e}");
    Pack::open(&shards[2]).unwrap().verify().unwrap();
    // A shard cut short loses its section's footer: named, not trusted.
    let torn = dir.path().join("torn.planetshard");
    let bytes = std::fs::read(&shards[1]).unwrap();
    std::fs::write(&torn, &bytes[..bytes.len() - 7]).unwrap();
    let e = merge_into(&[shards[0].clone(), torn.clone(), shards[2].clone()], &out).unwrap_err().to_string();
    assert!(e.contains("torn.planetshard") && e.contains("not a shard file"), "{e}");
    // One flipped byte in the section's records fails its checksum.
    let mut flipped = bytes.clone();
    let at = Pack::open(&shards[1]).unwrap().header().file_length as usize + 3;
    flipped[at] ^= 0x40;
    std::fs::write(&torn, &flipped).unwrap();
    let e = merge_into(&[shards[0].clone(), torn.clone(), shards[2].clone()], &out).unwrap_err().to_string();
    assert!(e.contains("checksum mismatch"), "{e}");
    // Regression (#31): a flipped bit inside a shard's tile payload was
    // blamed on --out (and on an intact pack already there): the shard is
    // named, and what is at --out stays as it was.
    for entry in Pack::open(&shards[1]).unwrap().all_entries().unwrap().iter().step_by(7).take(3) {
        let mut damaged = bytes.clone();
        damaged[entry.payload_offset as usize + entry.payload_length as usize / 2] ^= 0x10;
        std::fs::write(&torn, &damaged).unwrap();
        std::fs::write(&out, b"an intact file").unwrap();
        let e = format!("{:#}", merge_into(&[shards[0].clone(), torn.clone(), shards[2].clone()], &out).unwrap_err());
        assert!(e.contains("torn.planetshard") && !e.contains("merged.planetpack"), "tile {}: {e}", entry.tile());
        assert_eq!(std::fs::read(&out).unwrap(), b"an intact file");
    }
    std::fs::remove_file(&out).unwrap();
}

#[test]
fn a_killed_shard_resumes_alone_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let run = |out: &Path, env: &[(&str, &str)], extra: &[&str]| {
        let mut args = vec!["shard", "1/2", "--dem", path_str(&dem), "--out", path_str(out), "--body", "earth"];
        args.extend_from_slice(&["--depth", "2", "--tier", "test", "--level", "3", "--jobs", "2"]);
        args.extend_from_slice(extra);
        std::process::Command::new(env!("CARGO_BIN_EXE_planet-bake"))
            .envs(env.iter().copied())
            .args(&args)
            .output()
            .unwrap()
    };
    let whole = dir.path().join("whole.planetshard");
    assert!(run(&whole, &[], &[]).status.success());
    let killed = dir.path().join("killed.planetshard");
    let died = run(&killed, &[("PLANET_ABORT_AFTER_TILES", "20")], &[]);
    assert!(!died.status.success() && !killed.exists(), "the shard died before its file appeared");
    let resumed = run(&killed, &[], &["--resume"]);
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert!(String::from_utf8_lossy(&resumed.stderr).contains("already baked"));
    assert_eq!(std::fs::read(&whole).unwrap(), std::fs::read(&killed).unwrap(), "resumed shard, byte for byte");
}

/// Regression: the merge walked the shards' coarse tiles in the order of
/// their shard files, not in key order, and refused ("entries out of key
/// order") a bake whose shards each own coarse tiles of two depths: a
/// 0.125-degree global raster (data depth 2) cut in two.
#[test]
fn shards_owning_coarse_tiles_of_several_depths_merge() {
    let dir = tempfile::tempdir().unwrap();
    let step = STEP / 2.0;
    let (w, h) = ((360.0 / step) as usize, (180.0 / step) as usize);
    let heights: Vec<f32> = (0..w * h)
        .map(|k| node_value(90.0 - ((k / w) as f64 + 0.5) * step, -180.0 + ((k % w) as f64 + 0.5) * step) as f32)
        .collect();
    let dem = dir.path().join("earth-fine.tif");
    write_tiff(&dem, (w, h), [-180.0, step, 0.0, 90.0, 0.0, -step], Some(4326), &[heights], None);
    let base = BakeOptions { depth: Some(3), ..options(&dem, &dir.path().join("unused")) };
    let single = single(&base, dir.path());
    let shards = bake_shards(&base, dir.path(), 2);
    let out = dir.path().join("merged.planetpack");
    merge_into(&shards, &out).unwrap();
    assert_same_bytes(&single, &out, "2 shards of a depth-2 bake");
}

/// A stage line and the counts (done, total) that followed it.
type Stage = (String, Vec<(usize, usize)>);

/// What a run said: its stages, and after each the counts it gave.
#[derive(Default)]
struct Recorded(std::sync::Mutex<Vec<Stage>>);

impl planet_bake::Progress for Recorded {
    fn stage(&self, message: &str) {
        self.0.lock().unwrap().push((message.to_owned(), Vec::new()));
    }
    fn tiles(&self, done: usize, total: usize) {
        if let Some((_, counts)) = self.0.lock().unwrap().last_mut() {
            counts.push((done, total));
        }
    }
}

/// Regression (#32): the merge's layout and its verification, its longest
/// phases after the filter, said one stage line each and then nothing. Each
/// now counts its tiles to the end, as the bake's phases do.
#[test]
fn the_merge_counts_its_layout_and_its_verification() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    let base = BakeOptions { depth: Some(3), ..options(&dem, &dir.path().join("unused")) };
    let shards = bake_shards(&base, dir.path(), 2);
    let said = Recorded::default();
    merge(&merge_options(&shards, &dir.path().join("merged.planetpack")), &said).unwrap();
    let said = said.0.into_inner().unwrap();
    for phase in ["laying out", "verifying"] {
        let (stage, counts) = said.iter().find(|(s, _)| s.starts_with(phase)).unwrap_or_else(|| panic!("{said:?}"));
        let &(done, total) = counts.last().unwrap_or_else(|| panic!("'{stage}' counted nothing"));
        assert!(total > 0 && done == total, "'{stage}' ended at {done} of {total}");
        assert!(counts.windows(2).all(|w| w[0].0 <= w[1].0), "'{stage}' counts only go up: {counts:?}");
    }
}

/// A merge in stages commits nothing until every copy task of its own
/// layout is done: a missing task, a marker of an earlier layout, parts
/// other than the layout's and a task past the count are each named.
#[test]
fn a_merge_in_stages_names_unfinished_copies_foreign_parts_and_stale_markers() {
    let dir = tempfile::tempdir().unwrap();
    let base = BakeOptions {
        depth: Some(2),
        ..options(&earth_tiff(dir.path(), "earth.tif", nodes(), GEO), &dir.path().join("unused"))
    };
    let shards = bake_shards(&base, dir.path(), 4);
    let parts = bake_waves(&shards, dir.path());
    let out = dir.path().join("staged.planetpack");
    merge_stage(&parts, &out, MergeStage::LayOut { copy_tasks: 3 }).unwrap();
    merge_stage(&parts, &out, MergeStage::Copy { task: 0 }).unwrap();
    merge_stage(&parts, &out, MergeStage::Copy { task: 2 }).unwrap();
    let e = format!("{:#}", merge_stage(&parts, &out, MergeStage::Commit).unwrap_err());
    assert!(e.contains("copy tasks 1 of 3 have not finished"), "{e}");
    let e = format!("{:#}", merge_stage(&parts, &out, MergeStage::Copy { task: 3 }).unwrap_err());
    assert!(e.contains("laid out for 3 copy tasks (0 to 2)"), "{e}");
    // The parts of another bake of the same inputs (cut 2 ways) are whole, but not this layout's.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let foreign = bake_waves(&bake_shards(&base, &other, 2), &other);
    let e = format!("{:#}", merge_stage(&foreign, &out, MergeStage::Copy { task: 1 }).unwrap_err());
    assert!(e.contains(&format!("not the {} files", parts.len())) && e.contains("part-0-of-2"), "{e}");
    // A new layout: the markers of the one before no longer count, even put back by hand.
    let marker = dir.path().join("staged.planetpack.copy-0");
    let earlier = std::fs::read(&marker).unwrap();
    merge_stage(&parts, &out, MergeStage::LayOut { copy_tasks: 3 }).unwrap();
    assert!(!marker.exists(), "the new layout removed the earlier markers");
    std::fs::write(&marker, earlier).unwrap();
    merge_stage(&parts, &out, MergeStage::Copy { task: 1 }).unwrap();
    let e = format!("{:#}", merge_stage(&parts, &out, MergeStage::Commit).unwrap_err());
    assert!(e.contains("copy tasks 0, 2 of 3 have not finished"), "{e}");
    assert!(!out.exists(), "nothing at --out before the commit");
    for task in [0, 2] {
        merge_stage(&parts, &out, MergeStage::Copy { task }).unwrap();
    }
    merge_stage(&parts, &out, MergeStage::Commit).unwrap();
    assert_same_bytes(&single(&base, dir.path()), &out, "4 shards of a depth-2 bake and their waves, in stages");
    // Regression (#50): the finished commit run again said "nothing is laid
    // out here"; it is done, and says so, the pack untouched.
    let committed = std::fs::read(&out).unwrap();
    merge_stage(&parts, &out, MergeStage::Commit).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), committed);
    // A copy or commit with nothing laid out, and a damaged layout record, are named.
    let elsewhere = dir.path().join("elsewhere.planetpack");
    for stage in [MergeStage::Copy { task: 0 }, MergeStage::Commit] {
        let e = format!("{:#}", merge_stage(&parts, &elsewhere, stage).unwrap_err());
        assert!(e.contains("nothing is laid out here") && e.contains("merge layout --copy-tasks M"), "{e}");
    }
    merge_stage(&parts, &elsewhere, MergeStage::LayOut { copy_tasks: 2 }).unwrap();
    std::fs::write(dir.path().join("elsewhere.planetpack.layout"), b"{ not json").unwrap();
    let e = format!("{:#}", merge_stage(&parts, &elsewhere, MergeStage::Copy { task: 0 }).unwrap_err());
    assert!(e.contains("elsewhere.planetpack.layout") && e.contains("reading the merge's layout"), "{e}");
    // Without the waves' files there is nothing finished to lay out.
    let e = format!(
        "{:#}",
        merge_stage(&shards, &dir.path().join("no-waves.planetpack"), MergeStage::LayOut { copy_tasks: 2 })
            .unwrap_err()
    );
    assert!(e.contains("bake the waves first"), "{e}");
}

/// #56: a bake coarser than its raster (the fixture's 0.25-degree pixels
/// at depth 1, 1.4 pixels a sample) reads each sample as the mean over its
/// footprint. The shards average only the ground they read, as they read
/// it: their merge is the single process's bytes, and a shard killed
/// mid-bake leaves its journal (and lock file) beside its output and
/// nothing else (until
/// #56 every shard first averaged the whole raster into a scratch GeoTIFF
/// there), then resumes to the same bytes.
#[test]
fn a_bake_coarser_than_its_raster_shards_to_the_single_process_bytes_and_leaves_no_scratch() {
    let dir = tempfile::tempdir().unwrap();
    let dem = earth_tiff(dir.path(), "earth.tif", nodes(), GEO);
    // `mode`: the subcommand and its part (none: the full bake).
    let run = |out: &Path, env: &[(&str, &str)], mode: &[&str], extra: &[&str]| {
        let mut args = mode.to_vec();
        args.extend_from_slice(&["--dem", path_str(&dem), "--out", path_str(out), "--body", "earth", "--depth", "1"]);
        args.extend_from_slice(&["--tier", "test", "--level", "3", "--jobs", "2"]);
        args.extend_from_slice(extra);
        std::process::Command::new(env!("CARGO_BIN_EXE_planet-bake"))
            .envs(env.iter().copied())
            .args(&args)
            .output()
            .unwrap()
    };
    let single = dir.path().join("single.planetpack");
    let baked = run(&single, &[], &[], &[]);
    assert!(baked.status.success(), "{}", String::from_utf8_lossy(&baked.stderr));
    assert!(
        String::from_utf8_lossy(&baked.stderr).contains("mean over its 1.4 x 1.4 pixel footprint"),
        "the bake averages: {}",
        String::from_utf8_lossy(&baked.stderr)
    );
    let shards: Vec<PathBuf> = (0..3)
        .map(|i| {
            let out = dir.path().join(format!("part-{i}-of-3.planetshard"));
            let shard = format!("{i}/3");
            let o = run(&out, &[], &["shard", &shard], &[]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            out
        })
        .collect();
    // The merge by the same build as the shards (the binary), as a merge must be.
    let merged = dir.path().join("merged.planetpack");
    let merge = std::process::Command::new(env!("CARGO_BIN_EXE_planet-bake"))
        .arg("merge")
        .args(&shards)
        .args(["--out", path_str(&merged)])
        .output()
        .unwrap();
    assert!(merge.status.success(), "{}", String::from_utf8_lossy(&merge.stderr));
    assert_same_bytes(&std::fs::read(&single).unwrap(), &merged, "3 shards of a bake coarser than its raster");

    let killed = dir.path().join("killed.planetshard");
    let died = run(&killed, &[("PLANET_ABORT_AFTER_TILES", "3")], &["shard", "1/3"], &[]);
    assert!(!died.status.success() && !killed.exists(), "the shard died before its file appeared");
    let mut left: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    left.retain(|n| {
        n != "earth.tif" && !n.starts_with("part-") && !n.starts_with("single.") && !n.starts_with("merged.")
    });
    left.sort();
    let name = |p: PathBuf| p.file_name().unwrap().to_string_lossy().into_owned();
    let journal =
        [name(planet_terrain::pack::lock::lock_path(&killed)), name(planet_terrain::pack::partial_path(&killed))];
    assert_eq!(left, journal, "the killed shard leaves its journal (and the writers' lock file) alone");
    let resumed = run(&killed, &[], &["shard", "1/3"], &["--resume"]);
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert_eq!(std::fs::read(&shards[1]).unwrap(), std::fs::read(&killed).unwrap(), "resumed shard, byte for byte");
}
