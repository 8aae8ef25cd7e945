//! The .planetpack format: round trips, deterministic bytes, resume, one
//! crafted file per validation rule, no panics on any input, and patching.

use crate::support;

use std::sync::OnceLock;

use crate::support::{OwnedContent, spec, stamp, tiles_to_depth, write_pack};
use planet_terrain::TileAddress;
use planet_terrain::pack::format::{ENTRY_LENGTH, HEADER_LENGTH};
use planet_terrain::pack::index::IndexLayout;
use planet_terrain::pack::{Codec, DetailLaw, Pack, PackError, PackWriter, partial_path, patch_tiles};
use planet_terrain::testing::refresh_checksums;
use proptest::prelude::*;
use rayon::prelude::*;

const CODECS: [Codec; 3] = [Codec::Heights, Codec::HeightsClasses, Codec::HeightsClassesColour];

fn bytes_of(codec: Codec, tiles: &[TileAddress]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.planetpack");
    write_pack(&path, codec, tiles);
    std::fs::read(&path).unwrap()
}

/// A valid depth-0..=1 codec-0 pack (30 tiles), built once.
fn valid() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| bytes_of(Codec::Heights, &tiles_to_depth(1)))
}

#[test]
fn every_codec_round_trips_within_the_quantisation_step() {
    let tiles = tiles_to_depth(1);
    for codec in CODECS {
        let pack = Pack::from_bytes(bytes_of(codec, &tiles)).unwrap();
        assert_eq!(pack.header().codec, codec);
        assert_eq!(pack.tile_count() as usize, tiles.len());
        for &tile in &tiles {
            let original = OwnedContent::analytic(tile);
            let decoded = pack.read_tile(tile).unwrap();
            let tolerance = decoded.quantisation_step() / 2.0 + 1e-9;
            for (k, (&h, d)) in original.heights.iter().zip(decoded.heights()).enumerate() {
                assert!(
                    (h - d).abs() <= tolerance,
                    "{tile} sample {k}: {h} vs {d} (step {})",
                    decoded.quantisation_step()
                );
            }
            assert!(f64::from(decoded.min_elevation) <= original.heights.iter().cloned().fold(f64::INFINITY, f64::min));
            assert_eq!(decoded.classes.as_deref(), codec.has_classes().then_some(&original.classes[..]));
            assert_eq!(decoded.colour.as_deref(), codec.has_colour().then_some(&original.colour[..]));
        }
        assert_eq!(pack.verify().unwrap().tiles, tiles.len() as u64);
    }
}

#[test]
fn a_newer_reader_reads_every_older_codec() {
    // Codec 0 and 1 payloads decode with their own blocks only; nothing
    // beyond is invented.
    let tile = TileAddress::new(2, 1, 1, 0).unwrap();
    let pack0 = Pack::from_bytes(bytes_of(Codec::Heights, &[tile])).unwrap();
    let pack2 = Pack::from_bytes(bytes_of(Codec::HeightsClassesColour, &[tile])).unwrap();
    let (t0, t2) = (pack0.read_tile(tile).unwrap(), pack2.read_tile(tile).unwrap());
    assert_eq!(t0.quantised, t2.quantised);
    assert!(t0.classes.is_none() && t0.colour.is_none());
    assert_eq!(pack0.header().colour_data_depth, 0);
}

#[test]
fn bytes_are_identical_whatever_the_order_or_thread_count() {
    let tiles = tiles_to_depth(2);
    for codec in CODECS {
        let serial = bytes_of(codec, &tiles);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("parallel.planetpack");
        let mut shuffled = tiles.clone();
        // A fixed permutation, far from key order.
        shuffled.sort_by_key(|t| (t.key().raw().wrapping_mul(0x9e37_79b9_7f4a_7c15)).rotate_left(17));
        let writer = PackWriter::create(&path, spec(codec), tiles.iter().copied()).unwrap();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        pool.install(|| {
            shuffled
                .par_iter()
                .for_each(|&tile| writer.put(tile, &OwnedContent::analytic(tile).as_content(codec)).unwrap());
        });
        writer.finish().unwrap();
        assert!(std::fs::read(&path).unwrap() == serial, "codec {codec:?}: parallel shuffled bytes differ");
        assert!(!partial_path(&path).exists(), "the partial file is removed on success");
    }
}

#[test]
fn resume_after_a_kill_mid_record_gives_identical_bytes() {
    let tiles = tiles_to_depth(1);
    let expected = bytes_of(Codec::HeightsClasses, &tiles);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("resumed.planetpack");
    {
        let writer = PackWriter::create(&path, spec(Codec::HeightsClasses), tiles.iter().copied()).unwrap();
        for &tile in tiles.iter().rev().take(11) {
            writer.put(tile, &OwnedContent::analytic(tile).as_content(Codec::HeightsClasses)).unwrap();
        }
        // Killed: the writer is dropped without finishing.
    }
    // The kill landed mid-record: half of a twelfth record is on disk.
    let partial = partial_path(&path);
    let mut bytes = std::fs::read(&partial).unwrap();
    let torn_tile = tiles[0];
    let encoded = spec(Codec::HeightsClasses)
        .encode(torn_tile, &OwnedContent::analytic(torn_tile).as_content(Codec::HeightsClasses))
        .unwrap();
    bytes.extend_from_slice(b"TILE");
    bytes.extend_from_slice(&torn_tile.key().raw().to_le_bytes());
    bytes.extend_from_slice(&(encoded.payload.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&encoded.payload[..encoded.payload.len() / 2]);
    std::fs::write(&partial, &bytes).unwrap();
    assert!(!path.exists(), "nothing that looks like a finished pack");

    let writer = PackWriter::resume(&path, spec(Codec::HeightsClasses), tiles.iter().copied()).unwrap();
    let pending = writer.pending().unwrap();
    assert_eq!(pending.len(), tiles.len() - 11);
    assert!(pending.contains(&torn_tile), "the torn record is dropped");
    for tile in pending {
        writer.put(tile, &OwnedContent::analytic(tile).as_content(Codec::HeightsClasses)).unwrap();
    }
    writer.finish().unwrap();
    assert!(std::fs::read(&path).unwrap() == expected, "resumed bytes differ from an uninterrupted write");
}

#[test]
fn resume_after_a_kill_while_starting_starts_afresh() {
    // Regression: a kill between creating the journal and finishing its
    // preamble left a short journal that resume refused as "different inputs".
    let tiles = tiles_to_depth(1);
    let expected = bytes_of(Codec::Heights, &tiles);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.planetpack");
    drop(PackWriter::create(&path, spec(Codec::Heights), tiles.iter().copied()).unwrap());
    let journal = std::fs::read(partial_path(&path)).unwrap();
    for cut in [0, 5, journal.len() / 2] {
        std::fs::write(partial_path(&path), &journal[..cut]).unwrap();
        let writer = PackWriter::resume(&path, spec(Codec::Heights), tiles.iter().copied()).unwrap();
        assert_eq!(writer.pending().unwrap().len(), tiles.len());
        for &tile in &tiles {
            writer.put(tile, &OwnedContent::analytic(tile).as_content(Codec::Heights)).unwrap();
        }
        writer.finish().unwrap();
        assert!(std::fs::read(&path).unwrap() == expected, "cut at {cut}");
        drop(PackWriter::create(&path, spec(Codec::Heights), tiles.iter().copied()).unwrap());
    }
}

#[test]
fn resume_refuses_a_different_bake() {
    let tiles = tiles_to_depth(1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.planetpack");
    drop(PackWriter::create(&path, spec(Codec::Heights), tiles.iter().copied()).unwrap());
    let mut other = spec(Codec::Heights);
    other.fingerprint[0] ^= 1;
    let err = PackWriter::resume(&path, other, tiles.iter().copied()).unwrap_err();
    assert!(matches!(err.rule(), PackError::ResumeMismatch(_)), "{err}");
    let err = PackWriter::resume(&path, spec(Codec::Heights), tiles[1..].iter().copied()).unwrap_err();
    assert!(matches!(err.rule(), PackError::ResumeMismatch(_)), "{err}");
}

#[test]
fn a_second_writer_of_the_same_bake_is_refused_while_the_first_runs() {
    let tiles = tiles_to_depth(1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.planetpack");
    let first = PackWriter::create(&path, spec(Codec::Heights), tiles.iter().copied()).unwrap();
    let journal = planet_terrain::pack::partial_path(&path);
    let length = std::fs::metadata(&journal).unwrap().len();
    let create = PackWriter::create(&path, spec(Codec::Heights), tiles.iter().copied()).unwrap_err();
    let resume = PackWriter::resume(&path, spec(Codec::Heights), tiles.iter().copied()).unwrap_err();
    for err in [create, resume] {
        assert!(matches!(err.rule(), PackError::JournalLocked { .. }), "{err}");
    }
    assert_eq!(std::fs::metadata(&journal).unwrap().len(), length, "the refused writer left the journal alone");
    drop(first);
    PackWriter::resume(&path, spec(Codec::Heights), tiles.iter().copied()).expect("free once the first is gone");
}

#[test]
fn finish_refuses_an_incomplete_tile_set_and_leaves_no_pack() {
    let tiles = tiles_to_depth(1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.planetpack");
    let writer = PackWriter::create(&path, spec(Codec::Heights), tiles.iter().copied()).unwrap();
    writer.put(tiles[3], &OwnedContent::analytic(tiles[3]).as_content(Codec::Heights)).unwrap();
    let stray = TileAddress::new(0, 5, 0, 0).unwrap();
    let err = writer.put(stray, &OwnedContent::analytic(stray).as_content(Codec::Heights)).unwrap_err();
    assert!(matches!(err, PackError::Undeclared { .. }));
    let err = writer.finish().unwrap_err();
    assert!(matches!(err.rule(), PackError::Incomplete { missing: 29, .. }), "{err}");
    assert!(!path.exists());
}

#[test]
fn bad_content_is_refused_with_the_place() {
    let tile = TileAddress::new(1, 0, 0, 0).unwrap();
    let mut content = OwnedContent::analytic(tile);
    content.heights[131 * 5 + 7] = f64::NAN;
    let err = spec(Codec::Heights).encode(tile, &content.as_content(Codec::Heights)).unwrap_err();
    assert!(err.to_string().contains("(6, 4)") && err.to_string().contains("NaN"), "{err}");
    let ok = OwnedContent::analytic(tile);
    let mut no_classes = ok.as_content(Codec::HeightsClasses);
    no_classes.classes = None;
    assert!(spec(Codec::HeightsClasses).encode(tile, &no_classes).is_err());
}

// ---- One crafted file per validation rule -------------------------------

fn put_u32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn tile_count(bytes: &[u8]) -> usize {
    u64::from_le_bytes(bytes[112..120].try_into().unwrap()) as usize
}

fn layout(bytes: &[u8]) -> IndexLayout {
    IndexLayout::for_tiles(tile_count(bytes) as u64).unwrap()
}

/// Where index entry `n` of the valid pack lies (its leaf pages are
/// consecutive).
fn entry_at(n: usize) -> usize {
    layout(valid()).leaf_offset(0) as usize + n * ENTRY_LENGTH
}

/// Applies `edit` to a copy of the valid pack and returns the error it
/// meets: at open (header and root) or when a lookup first reads the page
/// that breaks a rule (every page is read here, as `verify` does).
fn refusal(edit: impl FnOnce(&mut Vec<u8>)) -> PackError {
    let mut bytes = valid().to_vec();
    edit(&mut bytes);
    match Pack::from_bytes(bytes) {
        Err(e) => e,
        Ok(pack) => pack.all_entries().expect_err("the crafted pack must be refused"),
    }
}

#[test]
fn rule_magic() {
    let e = refusal(|b| b[0] = b'X');
    assert!(matches!(e, PackError::BadMagic { found } if &found[1..] == b"LNTPACK"), "{e}");
}

#[test]
fn rule_version() {
    let e = refusal(|b| {
        b[8] = 6;
        refresh_checksums(b);
    });
    assert!(matches!(e, PackError::UnsupportedVersion { found: 6, supported: 5 }), "{e}");
    let e = refusal(|b| {
        b[8] = 1;
        refresh_checksums(b);
    });
    assert!(e.to_string().contains("`planet-pack upgrade` converts a version 1 pack"), "{e}");
}

/// Makes the (version 2) valid pack version 4 with a law: H 48/64, first
/// octave 17.5, relief cap 2.5 m (bfloat16 0x4020).
fn with_law(b: &mut [u8]) {
    b[8] = 4;
    b[21] = 48;
    b[22..24].copy_from_slice(&0x4020u16.to_le_bytes());
    b[248..252].copy_from_slice(&17.5f32.to_le_bytes());
}

#[test]
fn rule_detail_law() {
    let mut bytes = valid().to_vec();
    with_law(&mut bytes);
    refresh_checksums(&mut bytes);
    let law = Pack::from_bytes(bytes).unwrap().header().detail.unwrap();
    assert_eq!((law.exponent_64ths, law.first_octave, law.twist_cap), (Some(48), 17.5, 2.5));
    let field_of = |e: PackError| match e {
        PackError::HeaderField { field, offset, .. } => (field, offset),
        other => panic!("{other}"),
    };
    type Case = (&'static str, fn(&mut Vec<u8>), (&'static str, u64));
    let cases: [Case; 7] = [
        ("H of 5/64", |b| b[21] = 5, ("detail_exponent", 21)),
        ("no law in a version 4 pack", |b| b[21] = 0, ("detail_exponent", 21)),
        ("a NaN first octave", |b| b[248..252].copy_from_slice(&f32::NAN.to_le_bytes()), ("detail_first_octave", 248)),
        (
            "a first octave past 120",
            |b| b[248..252].copy_from_slice(&121f32.to_le_bytes()),
            ("detail_first_octave", 248),
        ),
        ("a zero twist cap", |b| b[22..24].copy_from_slice(&[0, 0]), ("detail_twist_cap", 22)),
        ("a negative twist cap", |b| b[22..24].copy_from_slice(&0xc020u16.to_le_bytes()), ("detail_twist_cap", 22)),
        ("law bytes in a version 2 pack", |b| b[8] = 2, ("reserved", 21)),
    ];
    for (what, edit, expected) in cases {
        let e = refusal(|b| {
            with_law(b);
            edit(b);
            refresh_checksums(b);
        });
        assert_eq!(field_of(e), expected, "{what}");
    }
}

/// Regression (#49): a version 3 pack's law was measured for the detail
/// before #49 (white noise, a cell's twist, the gain unbent); applied to
/// today's it drew about twice the relief. It is still checked by the
/// law's rules, then set aside: the pack is read as a version 2 one, its
/// law measured when it is opened.
#[test]
fn a_version_3_packs_law_is_checked_then_set_aside() {
    let mut bytes = valid().to_vec();
    with_law(&mut bytes);
    bytes[8] = 3;
    refresh_checksums(&mut bytes);
    let pack = Pack::from_bytes(bytes).unwrap();
    assert_eq!(pack.header().detail, None, "a law for the old detail is not applied to the new");
    assert_eq!(pack.header().version(), planet_terrain::pack::format::VERSION_WITHOUT_DETAIL_LAW);
    let e = refusal(|b| {
        with_law(b);
        b[8] = 3;
        b[21] = 5;
        refresh_checksums(b);
    });
    assert!(matches!(e, PackError::HeaderField { field: "detail_exponent", offset: 21, .. }), "{e}");
}

#[test]
fn rule_header_checksum() {
    let e = refusal(|b| b[150] ^= 0x40);
    assert!(matches!(e, PackError::HeaderChecksum { offset: 252, .. }), "{e}");
}

#[test]
fn rule_geometry() {
    let e = refusal(|b| {
        b[12..14].copy_from_slice(&65u16.to_le_bytes());
        refresh_checksums(b);
    });
    assert!(matches!(e, PackError::GeometryMismatch { core_samples: 65, apron: 1, .. }), "{e}");
    let e = refusal(|b| {
        b[14] = 2;
        refresh_checksums(b);
    });
    assert!(matches!(e, PackError::GeometryMismatch { apron: 2, .. }), "{e}");
}

#[test]
fn rule_header_fields() {
    let cases: [(usize, u8, &str); 5] = [
        (15, 3, "codec"),
        (16, 2, "compression"),
        (19, 29, "max_depth"),
        // Version 5 before its law is recorded: a law byte set alone makes
        // a law that breaks its rules.
        (21, 1, "detail_exponent"),
        (18, 1, "colour_data_depth"),
    ];
    for (at, value, field) in cases {
        let e = refusal(|b| {
            b[at] = value;
            refresh_checksums(b);
        });
        assert!(
            matches!(&e, PackError::HeaderField { field: f, offset, .. } if *f == field && *offset == at as u64),
            "{field}: {e}"
        );
    }
}

/// Radii outside the physical range (a 1e-300 m body once passed `verify`
/// and then hung the viewer) are a reader rule, at the radii's offset.
#[test]
fn rule_radii_in_physical_range() {
    for radii in [[1e-300f64; 3], [1e12; 3], [6.4e6, 6.4e6, 1e5]] {
        let e = refusal(|b| {
            for (k, r) in radii.iter().enumerate() {
                b[24 + 8 * k..32 + 8 * k].copy_from_slice(&r.to_le_bytes());
            }
            refresh_checksums(b);
        });
        assert!(matches!(&e, PackError::HeaderField { field: "radii", offset: 24, .. }), "{radii:?}: {e}");
        assert!(e.to_string().contains("10..=7000000000 m"), "the rule is named: {e}");
    }
}

/// The patch record: nothing recorded while the count is 0, a valid box
/// once it is not.
#[test]
fn rule_patch_history() {
    let e = refusal(|b| {
        b[232] = 1; // an inputs digest byte with no patch counted
        refresh_checksums(b);
    });
    assert!(matches!(&e, PackError::HeaderField { field: "last_patch", offset: 216, .. }), "{e}");
    let e = refusal(|b| {
        b[212] = 1; // one patch, whose box is all zeros: south == north
        refresh_checksums(b);
    });
    assert!(matches!(&e, PackError::HeaderField { field: "last_patch_region", offset: 216, .. }), "{e}");
    // In version 2, bytes 248..252 are reserved.
    let e = refusal(|b| {
        b[8] = 2;
        b[248] = 1;
        refresh_checksums(b);
    });
    assert!(matches!(&e, PackError::HeaderField { field: "reserved", offset: 248, .. }), "{e}");
}

/// Each page is checked by the checksum its parent holds: the root by the
/// header's, a directory page by its root reference's, a leaf page by its
/// directory reference's.
#[test]
fn rule_index_checksums() {
    let l = layout(valid());
    let e = refusal(|b| b[l.root_offset() as usize + 3] ^= 1);
    assert!(matches!(e, PackError::IndexChecksum { offset: 256, .. }), "{e}");
    let e = refusal(|b| b[l.directory_offset(0) as usize + 2] ^= 1);
    assert!(
        matches!(&e, PackError::PageChecksum { page, offset, .. } if page == "directory page 0" && *offset == l.directory_offset(0)),
        "{e}"
    );
    let e = refusal(|b| b[entry_at(3) + 25] ^= 1);
    assert!(
        matches!(&e, PackError::PageChecksum { page, offset, .. } if page == "leaf page 0" && *offset == l.leaf_offset(0)),
        "{e}"
    );
}

/// References agree with the layout and with each other: counts as the
/// tile count derives them, first keys ascending, a page's first key the
/// one its parent names.
#[test]
fn rule_index_pages() {
    let l = layout(valid());
    let e = refusal(|b| {
        put_u32(b, l.directory_offset(0) as usize + 8, 29);
        refresh_checksums(b);
    });
    assert!(
        matches!(&e, PackError::IndexPage { page, reason, .. } if page == "directory page 0" && reason.contains("count 29")),
        "{e}"
    );
    let e = refusal(|b| {
        put_u32(b, l.root_offset() as usize + 8, 2);
        refresh_checksums(b);
    });
    assert!(matches!(&e, PackError::IndexPage { page, .. } if page == "root directory"), "{e}");
    let e = refusal(|b| {
        b[l.root_offset() as usize..l.root_offset() as usize + 8].copy_from_slice(&(1u64 << 59).to_le_bytes());
        refresh_checksums(b);
    });
    assert!(
        matches!(&e, PackError::IndexPage { page, reason, .. } if page == "directory page 0" && reason.contains("differs from the parent")),
        "{e}"
    );
    let e = refusal(|b| {
        b[l.directory_offset(0) as usize..l.directory_offset(0) as usize + 8]
            .copy_from_slice(&(1u64 << 59).to_le_bytes());
        b[l.root_offset() as usize..l.root_offset() as usize + 8].copy_from_slice(&(1u64 << 59).to_le_bytes());
        refresh_checksums(b);
    });
    assert!(
        matches!(&e, PackError::IndexPage { page, reason, .. } if page == "leaf page 0" && reason.contains("differs from the reference")),
        "{e}"
    );
}

#[test]
fn rule_index_order() {
    let e = refusal(|b| {
        let (a, c) = (entry_at(4), entry_at(5));
        let first: Vec<u8> = b[a..a + ENTRY_LENGTH].to_vec();
        b.copy_within(c..c + ENTRY_LENGTH, a);
        b[c..c + ENTRY_LENGTH].copy_from_slice(&first);
        refresh_checksums(b);
    });
    assert!(matches!(e, PackError::IndexOrder { entry: 5, offset, .. } if offset == entry_at(5) as u64), "{e}");
}

#[test]
fn rule_duplicate_key() {
    let e = refusal(|b| {
        let (a, c) = (entry_at(6), entry_at(7));
        b.copy_within(a..a + 8, c);
        refresh_checksums(b);
    });
    assert!(matches!(e, PackError::DuplicateKey { entry: 7, .. }), "{e}");
}

#[test]
fn rule_invalid_key() {
    let e = refusal(|b| {
        b[entry_at(2)..entry_at(2) + 8].copy_from_slice(&(6u64 << 56).to_le_bytes());
        refresh_checksums(b);
    });
    assert!(matches!(e, PackError::InvalidKey { entry: 2, .. }), "{e}");
}

#[test]
fn rule_payload_outside_the_file() {
    let e = refusal(|b| {
        let len = b.len() as u64;
        b[entry_at(9) + 8..entry_at(9) + 16].copy_from_slice(&(len - 4).to_le_bytes());
        refresh_checksums(b);
    });
    assert!(matches!(e, PackError::PayloadOutOfBounds { entry: 9, .. }), "{e}");
    let e = refusal(|b| {
        b[entry_at(0) + 8..entry_at(0) + 16].copy_from_slice(&100u64.to_le_bytes());
        refresh_checksums(b);
    });
    assert!(matches!(e, PackError::PayloadOutOfBounds { entry: 0, .. }), "inside the header: {e}");
}

#[test]
fn rule_payload_length_for_the_codec() {
    for length in [0u32, 8, 1_000_000] {
        let e = refusal(|b| {
            put_u32(b, entry_at(1) + 16, length);
            refresh_checksums(b);
        });
        assert!(matches!(e, PackError::PayloadLength { entry: 1, codec: 0, .. }), "{length}: {e}");
    }
}

#[test]
fn rule_payloads_do_not_overlap() {
    let e = refusal(|b| {
        let other = b[entry_at(10) + 8..entry_at(10) + 16].to_vec();
        b[entry_at(11) + 8..entry_at(11) + 16].copy_from_slice(&other);
        refresh_checksums(b);
    });
    assert!(matches!(e, PackError::PayloadOverlap { .. }), "{e}");
}

#[test]
fn rule_entry_fields() {
    let e = refusal(|b| {
        let at = entry_at(12);
        b[at + 24..at + 28].copy_from_slice(&5000f32.to_le_bytes());
        b[at + 28..at + 32].copy_from_slice(&(-5000f32).to_le_bytes());
        refresh_checksums(b);
    });
    assert!(matches!(e, PackError::EntryField { entry: 12, field: "min/max elevation", .. }), "{e}");
    let e = refusal(|b| {
        b[entry_at(13) + 36] = 0x80;
        refresh_checksums(b);
    });
    assert!(matches!(e, PackError::EntryField { entry: 13, field: "flags", .. }), "{e}");
    // Bit 1 (a void block follows the payload) exists from version 5 on:
    // a version 4 reader's pack that set it would be misread.
    let e = refusal(|b| {
        with_law(b);
        b[entry_at(13) + 36] |= 0x02;
        refresh_checksums(b);
    });
    let message = e.to_string();
    assert!(matches!(e, PackError::EntryField { entry: 13, field: "flags", .. }), "{e}");
    assert!(message.contains("undefined bits for version 4"), "{message}");
}

#[test]
fn rule_payload_checksum_is_checked_on_read() {
    let mut bytes = valid().to_vec();
    let pack = Pack::from_bytes(bytes.clone()).unwrap();
    let entry = pack.all_entries().unwrap()[17];
    bytes[entry.payload_offset as usize + 20] ^= 0x10;
    let pack = Pack::from_bytes(bytes).expect("payload bytes are checked on read, not at open");
    let e = pack.read_tile(entry.tile()).unwrap_err();
    assert!(matches!(e, PackError::PayloadChecksum { offset, .. } if offset == entry.payload_offset), "{e}");
    assert!(matches!(pack.verify().unwrap_err(), PackError::PayloadChecksum { .. }));
    assert!(pack.read_tile(pack.all_entries().unwrap()[16].tile()).is_ok(), "other tiles still read");
}

#[test]
fn rule_truncated_at_every_section_boundary() {
    let b = valid();
    let count = tile_count(b);
    let payload_start = IndexLayout::for_tiles(count as u64).unwrap().end() as usize;
    let cases = [
        (0, "header"),
        (7, "header"),
        (HEADER_LENGTH - 1, "header"),
        (HEADER_LENGTH, "index"),
        (HEADER_LENGTH + ENTRY_LENGTH / 2, "index"),
        (payload_start - 1, "index"),
        (payload_start, "payload region"),
        (payload_start + 100, "payload region"),
        (b.len() - 1, "payload region"),
    ];
    for (length, section) in cases {
        let e = Pack::from_bytes(b[..length].to_vec()).unwrap_err();
        assert!(matches!(&e, PackError::Truncated { section: s, .. } if *s == section), "cut at {length}: {e}");
    }
    // A file on disk, too: the error names it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.planetpack");
    std::fs::write(&path, &b[..payload_start + 10]).unwrap();
    let e = Pack::open(&path).unwrap_err();
    assert!(e.to_string().starts_with(&path.display().to_string()), "{e}");
    assert!(matches!(e.rule(), PackError::Truncated { .. }));
    std::fs::write(&path, b"").unwrap();
    assert!(matches!(Pack::open(&path).unwrap_err().rule(), PackError::Truncated { file_length: 0, .. }));
}

/// Errors past opening name the file too: a torn tile read through a stack
/// of packs said only "tile ... checksum mismatch", not which pack, and a
/// directory given as a pack failed with "No such device" from mmap.
#[test]
fn a_torn_tile_and_a_directory_are_named_by_their_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("torn.planetpack");
    let mut bytes = valid().to_vec();
    let entry = Pack::from_bytes(bytes.clone()).unwrap().all_entries().unwrap()[17];
    bytes[entry.payload_offset as usize + 20] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    let pack = Pack::open(&path).unwrap();
    for e in [pack.read_tile(entry.tile()).unwrap_err(), pack.decode(&entry).unwrap_err()] {
        assert!(e.to_string().starts_with(&format!("{}: tile {}", path.display(), entry.tile())), "{e}");
        assert!(matches!(e.rule(), PackError::PayloadChecksum { .. }), "{e}");
    }
    let e = Pack::open(dir.path()).unwrap_err().to_string();
    assert!(e.starts_with(&dir.path().display().to_string()) && e.contains("is a directory"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Any mutation of a valid pack is either refused with a typed error or
    /// accepted; reading every tile of an accepted one never panics. Half the
    /// cases repair the checksums so mutations reach the deeper rules and the
    /// payload decoder.
    #[test]
    fn mutated_packs_never_panic(edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8), cut in any::<prop::sample::Index>(), truncate in any::<bool>(), repair in any::<bool>()) {
        let mut bytes = valid().to_vec();
        // Bias half of the edits into the header and index, where the rules live.
        for (k, (index, value)) in edits.iter().enumerate() {
            let span = if k % 2 == 0 { layout(valid()).end() as usize } else { bytes.len() };
            let at = index.index(span);
            bytes[at] = *value;
        }
        if truncate {
            let length = cut.index(bytes.len());
            bytes.truncate(length);
        }
        if repair {
            refresh_checksums(&mut bytes);
        }
        if let Ok(pack) = Pack::from_bytes(bytes) {
            for entry in pack.entries() {
                let Ok(entry) = entry else { break };
                let _ = pack.decode(&entry);
                let _ = pack.entry(entry.tile());
            }
            let _ = pack.verify();
        }
    }
}

// ---- Patching in place ----------------------------------------------------

#[test]
fn patching_rewrites_only_the_patched_tiles() {
    let tiles = tiles_to_depth(2);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("patched.planetpack");
    write_pack(&path, Codec::HeightsClassesColour, &tiles);
    // The entries are read now: the open reader's root is the old one, so
    // once the patch lands its pages no longer match it (which is the point
    // of the page checksums).
    let before = Pack::open(&path).unwrap().all_entries().unwrap();
    let before_bytes = std::fs::read(&path).unwrap();

    // New ground for a few tiles: one flatter (smaller payload, fits in
    // place) and one much rougher (larger, appended).
    let codec = Codec::HeightsClassesColour;
    let flat = TileAddress::new(0, 2, 1, 1).unwrap();
    let rough = TileAddress::new(4, 2, 3, 0).unwrap();
    let ancestor = TileAddress::new(0, 0, 0, 0).unwrap();
    let new_ground = |tile: TileAddress| {
        let noisy = tile == rough;
        OwnedContent::of(tile, move |d| {
            let base = support::analytic_height(d) * 0.5;
            if noisy { base + 37.0 * ((d.x * 1e5).sin() * (d.y * 7e4).cos()) } else { base }
        })
    };
    let patch: Vec<_> = [flat, rough, ancestor]
        .into_iter()
        .map(|t| spec(codec).encode(t, &new_ground(t).as_content(codec)).unwrap())
        .collect();
    let summary = patch_tiles(&path, &patch, stamp(7)).unwrap();
    assert_eq!(summary.tiles, 3);
    assert!(summary.appended >= 1 && summary.rewritten_in_place >= 1, "{summary:?}");

    let after = Pack::open(&path).unwrap();
    after.verify().unwrap();
    let patches = after.header().patches;
    assert_eq!(patches.count, 1, "the header counts the patch");
    let last = patches.last.expect("and records it");
    assert_eq!((last.region.south, last.region.east, last.inputs), (1.0, 4.0, [5; 16]));
    assert_eq!(after.header().fingerprint, [7; 32]);
    let after_bytes = std::fs::read(&path).unwrap();
    for e in &before {
        let tile = e.tile();
        let new = after.entry(tile).unwrap().unwrap();
        if [flat, rough, ancestor].contains(&tile) {
            let expected = patch.iter().find(|p| p.tile == tile).unwrap();
            assert_eq!(after.payload(&new).unwrap().as_ref(), &expected.payload[..], "{tile} holds the fresh encoding");
        } else {
            assert_eq!(new, *e, "{tile}: index entry unchanged");
            let range = e.payload_offset as usize..(e.payload_offset + u64::from(e.payload_length)) as usize;
            assert_eq!(&after_bytes[range.clone()], &before_bytes[range], "{tile}: payload bytes unchanged");
        }
    }
    let missing = TileAddress::new(0, 5, 0, 0).unwrap();
    let stray = spec(codec).encode(missing, &new_ground(missing).as_content(codec)).unwrap();
    assert!(matches!(patch_tiles(&path, &[stray], stamp(7)).unwrap_err().rule(), PackError::TileNotFound { .. }));
}

// ---- The spec's test vector ------------------------------------------------

/// The tiny pack of docs/planetpack.md, "Test vectors": Earth, tier "demo",
/// codec 0, zstd level 3, one tile 0/0/0/0 of flat sea level, fingerprint
/// bytes 0x00..=0x1f.
fn spec_test_vector() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.planetpack");
    let mut s = spec(Codec::Heights);
    s.tier = "demo".into();
    s.height_data_depth = 0;
    s.colour_data_depth = 0;
    s.fingerprint = std::array::from_fn(|k| k as u8);
    let tile = TileAddress::new(0, 0, 0, 0).unwrap();
    let writer = PackWriter::create(&path, s, [tile]).unwrap();
    let heights = vec![0.0; planet_terrain::TILE_STORED_SAMPLE_COUNT];
    let content = planet_terrain::pack::TileContent {
        heights: &heights,
        classes: None,
        colour: None,
        geometric_error: 0.0,
        measured: true,
        voids: None,
    };
    writer.put(tile, &content).unwrap();
    let assembled = writer.assemble().unwrap();
    assembled.record_detail_law(DetailLaw::rounded(Some(48), 17.32, 2.5)).unwrap();
    assembled.commit().unwrap();
    std::fs::read(&path).unwrap()
}

fn hex_dump(bytes: &[u8]) -> String {
    bytes
        .chunks(16)
        .enumerate()
        .map(|(row, chunk)| {
            let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
            format!("{:04x}: {}", row * 16, hex.join(" "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_spec_test_vector_matches_the_writer() {
    let bytes = spec_test_vector();
    // Header, root, directory page and the one leaf entry: everything up to
    // the payload.
    let expected_dump = hex_dump(&bytes[..IndexLayout::for_tiles(1).unwrap().end() as usize]);
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/planetpack.md")).unwrap();
    let start = doc.find("<!-- test-vector:begin -->").expect("docs/planetpack.md has the test vector");
    let end = doc.find("<!-- test-vector:end -->").unwrap();
    let documented: String =
        doc[start..end].lines().filter(|l| l.len() > 6 && l.as_bytes()[4] == b':').collect::<Vec<_>>().join("\n");
    assert_eq!(
        documented, expected_dump,
        "docs/planetpack.md's header + index dump is stale; the writer produces:\n{expected_dump}"
    );
    let pack = Pack::from_bytes(bytes.clone()).unwrap();
    let e = pack.all_entries().unwrap()[0];
    assert_eq!(e.tile().to_string(), "0/0/0/0");
    assert_eq!(pack.file_length(), bytes.len() as u64);
    let documented_length = doc.lines().find_map(|l| l.strip_prefix("Total file length: ")).unwrap();
    assert_eq!(documented_length.trim_end_matches(" bytes."), bytes.len().to_string());
}

// ---- A merge laid out, then copied in ranges ----------------------------

#[test]
fn entries_in_reads_any_run_of_the_key_order_across_leaf_pages() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.planetpack");
    planet_terrain::testing::write_synthetic_index_pack(&path, 3000).unwrap();
    let pack = Pack::open(&path).unwrap();
    let all = pack.all_entries().unwrap();
    for (range, expected) in
        [(1000..2100, 1000..2100), (0..1, 0..1), (2990..5000, 2990..3000), (3000..3001, 3000..3000)]
    {
        let got: Vec<_> = pack.entries_in(range.clone()).collect::<Result<_, _>>().unwrap();
        assert_eq!(got, all[expected], "{range:?}");
    }
}

#[test]
fn a_pack_laid_out_then_copied_in_ranges_in_any_order_is_the_bytes_one_writer_writes() {
    use planet_terrain::pack::{TileParts, copy_range, lock_for_copy, take_up_copied, tmp_path};
    let tiles = tiles_to_depth(3);
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source.planetpack");
    write_pack(&source, Codec::HeightsClassesColour, &tiles);
    let part = Pack::open(&source).unwrap();
    let out = dir.path().join("laid.planetpack");
    let spec = support::spec_for(Codec::HeightsClassesColour, &tiles);
    let writer = PackWriter::create_levels_above(&out, spec, std::iter::empty()).unwrap();
    let laid = writer.lay_out(&[&part], 4).unwrap();
    assert_eq!(laid.ranges.len(), 4);
    assert_eq!(laid.ranges.iter().map(|r| r.tiles).sum::<u64>(), tiles.len() as u64);
    assert!(laid.ranges.iter().all(|r| r.tiles > 0), "{:?}", laid.ranges);
    // The layout holds the journal until its caller has recorded the ranges.
    assert!(matches!(lock_for_copy(&out).unwrap_err().rule(), PackError::JournalLocked { .. }));
    let ranges = laid.ranges.clone();
    drop(laid);
    let copying = lock_for_copy(&out).unwrap();
    let holder = |_| Some(&part as &dyn TileParts);
    // A tile no part given holds is named.
    let none = |_| None::<&dyn TileParts>;
    let e = copy_range(&out, &ranges[1], &none, &mut |_, _| {}).unwrap_err().to_string();
    assert!(e.contains("no part given holds it"), "{e}");
    for range in ranges.iter().rev() {
        copy_range(&out, range, &holder, &mut |_, _| {}).unwrap();
    }
    assert!(
        std::fs::read(tmp_path(&out)).unwrap() == std::fs::read(&source).unwrap(),
        "laid out and copied: the same bytes"
    );
    // A copy task still running (its shared lock) keeps the commit out.
    let e = take_up_copied(&out).unwrap_err();
    assert!(matches!(e.rule(), PackError::JournalLocked { .. }), "{e}");
    drop(copying);
    take_up_copied(&out).unwrap().commit().unwrap();
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&source).unwrap());
    assert!(!partial_path(&out).exists() && !tmp_path(&out).exists());
}

/// Regression (#50): packs were memory-mapped, and `cp` over a pack while
/// `verify` or the viewer read it killed the reader with SIGBUS and no
/// message. Read with positioned reads, a pack truncated or rewritten under
/// its reader is an error naming the change and the file.
#[test]
fn a_pack_rewritten_under_its_reader_is_an_error_not_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.planetpack");
    std::fs::write(&path, valid()).unwrap();
    let pack = Pack::open(&path).unwrap();
    let entries = pack.all_entries().unwrap();
    let last = entries.iter().max_by_key(|e| e.payload_offset).unwrap();
    // Truncated (as `cp` does before it writes): the last payload is gone.
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(last.payload_offset).unwrap();
    let error = pack.read_tile(last.tile()).unwrap_err().to_string();
    assert!(error.contains("changed while it was read") && error.contains("p.planetpack"), "{error}");
    // Rewritten whole with other bytes of the same length: an error too.
    let mut other = valid().to_vec();
    let at = last.payload_offset as usize;
    other[at..at + 4].iter_mut().for_each(|b| *b ^= 0xff);
    std::fs::write(&path, &other).unwrap();
    assert!(pack.read_tile(last.tile()).is_err(), "a changed payload is never decoded");
}

/// Regression (#50): beside a pending patch journal, a torn payload read
/// "torn or corrupt" without naming the journal or `repair`.
#[test]
fn a_torn_tile_beside_a_patch_journal_names_the_journal_and_repair() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.planetpack");
    let mut bytes = valid().to_vec();
    let pack = Pack::from_bytes(bytes.clone()).unwrap();
    let entry = pack.all_entries().unwrap()[3];
    bytes[entry.payload_offset as usize + 5] ^= 0x5a;
    std::fs::write(&path, &bytes).unwrap();
    std::fs::write(planet_terrain::pack::journal_path(&path), b"journal").unwrap();
    let error = Pack::open(&path).unwrap().read_tile(entry.tile()).unwrap_err().to_string();
    assert!(error.contains("patch-journal") && error.contains("planet-pack repair"), "{error}");
}
