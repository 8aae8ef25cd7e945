//! The filter's unit tests: seams bit for bit on every edge and corner of
//! the cube, the window and the generic evaluation agreeing, the kernel's
//! weights, and voids.

use std::collections::HashMap;

use planet_terrain::geo::cube::sample_direction;
use planet_terrain::ground::sample_directions;
use planet_terrain::pack::codec::{decode_tile, encode_tile};
use planet_terrain::pack::{Codec, TileContent};

use super::*;

/// A smooth field with no symmetry the cube could hide a seam behind.
fn field(d: glam::DVec3) -> f64 {
    1000.0 * (3.0 * d.x + 1.0).sin() * (2.0 * d.y - 0.5).cos() + 700.0 * d.z + 50.0 * (9.0 * d.x * d.y).sin()
}

/// A level of every tile at `depth`, each sample the field at its
/// direction, quantised and decoded as a pack would store it.
fn level(depth: u8, heights: impl Fn(glam::DVec3) -> f64) -> Level {
    let mut level = Level::new(depth);
    let mut tiles = TileAddress::roots().to_vec();
    for _ in 0..depth {
        tiles = tiles.iter().flat_map(|t| t.children().unwrap()).collect();
    }
    for tile in tiles {
        let h: Vec<f64> = sample_directions(tile).into_iter().map(&heights).collect();
        let content =
            TileContent { heights: &h, classes: None, colour: None, geometric_error: 0.0, measured: true, voids: None };
        let e = encode_tile(tile, Codec::Heights, &content, 1).unwrap();
        level.insert(decode_tile(&e.entry_at(0), Codec::Heights, &e.payload, 0).unwrap());
    }
    level
}

fn parents(depth: u8) -> Vec<TileAddress> {
    let mut tiles = TileAddress::roots().to_vec();
    for _ in 0..depth {
        tiles = tiles.iter().flat_map(|t| t.children().unwrap()).collect();
    }
    tiles
}

/// Every stored sample of every parent, apron included, holds the same bits
/// as every other tile storing the same point (found by its direction, which
/// the cube spells bit for bit alike on every face), and the window gives
/// what the generic evaluation gives.
fn check_seams(parent_depth: u8) {
    let level = level(parent_depth + 1, field);
    let mut seen: HashMap<[u64; 3], (u64, TileAddress)> = HashMap::new();
    let cells = TILE_CELLS as i32;
    for parent in parents(parent_depth) {
        let values = level.filter_tile(parent);
        for j in -1..=cells + 1 {
            for i in -1..=cells + 1 {
                let s = parent.sample(i, j);
                let got = values[stored_index(i, j)].expect("every tap present").height;
                let generic = level.filtered(s.face, s.i as i64, s.j as i64).unwrap().height;
                assert_eq!(got.to_bits(), generic.to_bits(), "{parent} ({i}, {j}): window vs generic");
                let d = sample_direction(s).to_array().map(f64::to_bits);
                let (bits, first) = *seen.entry(d).or_insert((got.to_bits(), parent));
                assert_eq!(bits, got.to_bits(), "{parent} ({i}, {j}) vs {first}: {} vs {got}", f64::from_bits(bits));
            }
        }
    }
}

#[test]
fn the_audits_separable_evaluation_agrees_with_the_bakes_window_to_rounding() {
    // Every parent of depth 1, with one child missing from one of them so
    // the generic path's voids and renormalised taps are compared too.
    let mut level = level(2, field);
    let gone = parents(1)[5].children().unwrap()[2];
    level.tiles.remove(&gone.identity());
    let (mut rounded_apart, mut same_bits) = (0, 0);
    for parent in parents(1) {
        let window = level.filter_tile(parent);
        let audit = level.filtered_separable(parent);
        for (k, (w, a)) in window.iter().zip(&audit).enumerate() {
            let (w, a) = (w.map(|t| t.height), *a);
            assert_eq!(w.is_some(), a.is_some(), "{parent} sample {k}");
            if let (Some(w), Some(a)) = (w, a) {
                assert!((w - a).abs() <= 1e-9 * (1.0 + w.abs()), "{parent} sample {k}: {w} vs {a}");
                if w.to_bits() == a.to_bits() { same_bits += 1 } else { rounded_apart += 1 }
            }
        }
    }
    // The separable path was taken (it rounds differently somewhere), and
    // most samples still agree to the bit.
    assert!(rounded_apart > 0 && same_bits > rounded_apart, "{rounded_apart} {same_bits}");
}

#[test]
fn shared_samples_agree_bit_for_bit_across_tiles_faces_and_corners() {
    check_seams(0);
    check_seams(1);
}

#[test]
fn a_cube_corner_is_one_point_seen_from_three_faces() {
    // From each face, the two taps past its edges at a corner are the one
    // sample along the third edge, so each face sees the same seven points.
    let level = level(1, field);
    let n = CELLS << 1;
    for face in Face::ALL {
        for (u, v) in [(0, 0), (n, 0), (0, n), (n, n)] {
            let (su, sv) = (if u == 0 { 1 } else { -1 }, if v == 0 { 1 } else { -1 });
            let past_u = level.value_at(face, u - su, v).unwrap();
            let past_v = level.value_at(face, u, v - sv).unwrap();
            assert_eq!(past_u.height.to_bits(), past_v.height.to_bits(), "face {face:?} corner ({u}, {v})");
        }
    }
}

#[test]
fn the_kernel_is_the_footprint_mean_of_the_bilinear_surface() {
    // A constant level filters to itself; a spike at one child sample
    // spreads as [1 2 1] x [1 2 1] / 16 over the parent samples around it.
    let flat = level(1, |_| 250.0);
    for v in flat.filter_tile(TileAddress::new(2, 0, 0, 0).unwrap()) {
        assert_eq!(v.unwrap().height, 250.0);
    }
    let tile = TileAddress::new(0, 1, 0, 0).unwrap();
    let mut spiky = Level::new(1);
    for t in parents(1) {
        let mut h = vec![0.0; TILE_STORED_SAMPLE_COUNT];
        let spot = |i: i32, j: i32| t.sample(i, j) == tile.sample(41, 60);
        for j in -1..=129 {
            for i in -1..=129 {
                if spot(i, j) {
                    h[stored_index(i, j)] = 16.0 * 65535.0;
                }
            }
        }
        let content =
            TileContent { heights: &h, classes: None, colour: None, geometric_error: 0.0, measured: true, voids: None };
        let e = encode_tile(t, Codec::Heights, &content, 1).unwrap();
        spiky.insert(decode_tile(&e.entry_at(0), Codec::Heights, &e.payload, 0).unwrap());
    }
    let root = spiky.filter_tile(TileAddress::new(0, 0, 0, 0).unwrap());
    // Child (41, 60) lies between parent samples (20, 30) and (21, 30).
    let h = |i, j| root[stored_index(i, j)].unwrap().height;
    assert_eq!(h(20, 30), 2.0 * 65535.0);
    assert_eq!(h(21, 30), 2.0 * 65535.0);
    assert_eq!(h(20, 29), 0.0);
    assert_eq!(h(22, 30), 0.0);
}

#[test]
fn absent_tiles_drop_out_and_a_sample_without_taps_is_a_void() {
    let full = level(1, |_| 100.0);
    let mut sparse = Level::new(1);
    let keep = TileAddress::new(3, 1, 0, 0).unwrap();
    for t in parents(1) {
        if t == keep {
            let v = full.get(t).unwrap().clone();
            sparse.insert(DecodedTile { measured: true, ..v });
        }
    }
    let root = sparse.filter_tile(TileAddress::new(3, 0, 0, 0).unwrap());
    let inside = root[stored_index(10, 10)].unwrap();
    assert_eq!(inside, Tap { height: 100.0, measured: true });
    // On the child's far edge some taps are absent: still 100, not measured.
    let edge = root[stored_index(64, 10)].unwrap();
    assert_eq!(edge, Tap { height: 100.0, measured: false });
    assert_eq!(root[stored_index(100, 100)], None);
}

/// Filtering window by window, the level loaded a window's needs at a
/// time, gives the bits of filtering from the whole level in memory, with
/// tiles missing too (the owner rule then picks among fewer), and never
/// holds more than asked (beyond one parent's needs).
#[test]
fn windows_filter_the_same_bits_as_the_whole_level_and_hold_at_most_what_they_are_asked() {
    for parent_depth in 0..=2u8 {
        let mut whole = level(parent_depth + 1, field);
        let mut sparse = Level::new(parent_depth + 1);
        for (k, tile) in parents(parent_depth + 1).into_iter().enumerate() {
            if k % 7 != 3 {
                sparse.insert(whole.get(tile).unwrap().clone());
            }
        }
        let mut all = parents(parent_depth);
        all.sort_by_key(|t| t.key());
        for full in [&mut whole, &mut sparse] {
            for held in [1, 40, 200] {
                let most_needed = all.iter().map(|&p| needed_children(p).len()).max().unwrap();
                let load = |t: TileAddress| Ok::<_, ()>(full.get(t).cloned());
                let mut filtered = 0;
                for_each_window(&all, held, load, |window, below| {
                    assert!(below.len() <= held.max(most_needed), "held {} of {held}", below.len());
                    for &parent in window {
                        let got = below.filter_tile(parent);
                        let want = full.filter_tile(parent);
                        let bits = |v: &[Option<Tap>]| {
                            v.iter().map(|t| t.map(|t| (t.height.to_bits(), t.measured))).collect::<Vec<_>>()
                        };
                        assert_eq!(bits(&got), bits(&want), "{parent}, held {held}");
                        filtered += 1;
                    }
                    Ok(())
                })
                .unwrap();
                assert_eq!(filtered, all.len());
            }
        }
    }
}
