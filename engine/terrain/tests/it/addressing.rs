//! Tile addressing: round trips, the key layout and order, neighbours across
//! every edge (cube-face edges included) and the apron.

use planet_terrain::geo::address::{hilbert_cell, hilbert_index};
use planet_terrain::geo::cube::sample_direction;
use planet_terrain::{AddressError, Edge, Face, MAX_DEPTH, TILE_CELLS, TileAddress, TileKey};
use proptest::prelude::*;

use crate::support::sample_inside;

fn any_tile() -> impl Strategy<Value = TileAddress> {
    (0u8..6, 0u8..=MAX_DEPTH).prop_flat_map(|(face, depth)| {
        let size = 1u32 << depth;
        (0..size, 0..size).prop_map(move |(x, y)| TileAddress::new(face, depth, x, y).unwrap())
    })
}

fn every_tile_to_depth(max_depth: u8) -> impl Iterator<Item = TileAddress> {
    (0..=max_depth).flat_map(|depth| {
        let size = 1u32 << depth;
        (0u8..6).flat_map(move |face| {
            (0..size).flat_map(move |x| (0..size).map(move |y| TileAddress::new(face, depth, x, y).unwrap()))
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parent_and_children_round_trip(tile in any_tile()) {
        if let Some(children) = tile.children() {
            for (q, child) in children.iter().enumerate() {
                prop_assert_eq!(child.parent(), Some(tile));
                prop_assert_eq!(usize::from(child.quadrant()), q);
                prop_assert!(tile.contains(*child));
            }
        } else {
            prop_assert_eq!(tile.depth(), MAX_DEPTH);
        }
        if let Some(parent) = tile.parent() {
            prop_assert!(parent.children().unwrap().contains(&tile));
            prop_assert_eq!(tile.ancestor_at(0), Some(TileAddress::root(tile.face())));
        }
    }

    #[test]
    fn key_round_trips_and_follows_the_documented_layout(tile in any_tile()) {
        let key = tile.key();
        prop_assert_eq!(TileKey::from_raw(key.raw()), Ok(key));
        prop_assert_eq!(key.address(), tile);
        prop_assert_eq!(key.raw() >> 59, u64::from(tile.depth()));
        prop_assert_eq!((key.raw() >> 56) & 7, u64::from(tile.face().index()));
        let index = key.raw() & ((1 << 56) - 1);
        prop_assert_eq!(hilbert_cell(tile.depth(), index), (tile.x(), tile.y()));
    }

    #[test]
    fn text_form_round_trips(tile in any_tile()) {
        let text = tile.to_string();
        prop_assert_eq!(text.parse::<TileAddress>(), Ok(tile));
        prop_assert_eq!(text, format!("{}/{}/{}/{}", tile.face(), tile.depth(), tile.x(), tile.y()));
    }

    #[test]
    fn order_is_depth_then_face_then_hilbert(a in any_tile(), b in any_tile()) {
        let rank = |t: TileAddress| (t.depth(), t.face(), hilbert_index(t.depth(), t.x(), t.y()));
        prop_assert_eq!(a.cmp(&b), rank(a).cmp(&rank(b)));
        prop_assert_eq!(a.key().cmp(&b.key()), rank(a).cmp(&rank(b)));
    }

    #[test]
    fn siblings_are_contiguous_in_key_order(tile in any_tile()) {
        if let Some(children) = tile.children() {
            let parent_index = tile.key().raw() & ((1 << 56) - 1);
            for child in children {
                let index = child.key().raw() & ((1 << 56) - 1);
                prop_assert_eq!(index / 4, parent_index);
            }
        }
    }
}

#[test]
fn hilbert_order_never_jumps() {
    for depth in 1..=7u8 {
        let cells = 1u64 << (2 * depth);
        let mut previous = hilbert_cell(depth, 0);
        assert_eq!(previous, (0, 0));
        for index in 1..cells {
            let (x, y) = hilbert_cell(depth, index);
            let step = previous.0.abs_diff(x) + previous.1.abs_diff(y);
            assert_eq!(step, 1, "depth {depth} index {index}");
            assert_eq!(hilbert_index(depth, x, y), index);
            previous = (x, y);
        }
    }
}

#[test]
fn known_keys() {
    // Test vectors, checked against an independent transcription of the
    // textbook Hilbert xy2d; also listed in docs/design/conventions.md.
    let cases = [
        ("0/0/0/0", 0x0000_0000_0000_0000u64),
        ("5/0/0/0", 0x0500_0000_0000_0000),
        ("0/1/0/0", 0x0800_0000_0000_0000),
        ("0/1/0/1", 0x0800_0000_0000_0001),
        ("0/1/1/1", 0x0800_0000_0000_0002),
        ("0/1/1/0", 0x0800_0000_0000_0003),
        ("3/7/45/102", 0x3b00_0000_0000_186d),
        ("2/20/123456/654321", 0xa200_0042_a94b_ef01),
        ("4/28/268435455/0", 0xe4ff_ffff_ffff_ffff),
    ];
    for (text, raw) in cases {
        let tile: TileAddress = text.parse().unwrap();
        assert_eq!(tile.key().raw(), raw, "{text}: {:#018x}", tile.key().raw());
    }
}

#[test]
fn invalid_addresses_are_refused_with_the_reason() {
    assert_eq!(TileAddress::new(6, 0, 0, 0), Err(AddressError::FaceOutOfRange { face: 6 }));
    assert_eq!(
        TileAddress::new(0, MAX_DEPTH + 1, 0, 0),
        Err(AddressError::DepthTooDeep { depth: MAX_DEPTH + 1, max: MAX_DEPTH })
    );
    assert_eq!(TileAddress::new(0, 2, 4, 0), Err(AddressError::CellOutOfRange { depth: 2, x: 4, y: 0, size: 4 }));
    for bad in ["", "1/2/3", "1/2/3/4/5", "a/0/0/0", "0/0/-1/0", "0/0/0/ 0", "0/99999999999/0/0"] {
        assert!(bad.parse::<TileAddress>().is_err(), "{bad:?} parsed");
    }
    assert!(matches!("0/2/4/0".parse::<TileAddress>(), Err(AddressError::CellOutOfRange { .. })));
    let invalid_keys = [
        29u64 << 59,             // depth too deep
        6u64 << 56,              // face 6
        (1u64 << 59) | 4,        // index 4 does not fit depth 1
        (3u64 << 59) | (1 << 6), // index 64 does not fit depth 3
    ];
    for raw in invalid_keys {
        assert!(matches!(TileKey::from_raw(raw), Err(AddressError::InvalidKey { .. })), "{raw:#x}");
    }
}

#[test]
fn every_neighbour_of_a_neighbour_is_the_tile_itself() {
    let mut cross_face = 0;
    for tile in every_tile_to_depth(4) {
        for edge in Edge::ALL {
            let n = tile.neighbour(edge);
            assert_eq!(n.address.depth(), tile.depth());
            let back = n.address.neighbour(n.shared_edge);
            assert_eq!(back.address, tile, "{tile} across {edge:?} is {n:?}");
            assert_eq!(back.shared_edge, edge);
            assert_eq!(back.reversed, n.reversed);
            if n.address.face() != tile.face() {
                cross_face += 1;
            } else {
                assert!(!n.reversed);
            }
        }
    }
    // Each depth has 4 * 2^depth edges on each of the 6 faces' borders.
    assert_eq!(cross_face, (0..=4).map(|d| 6 * 4 * (1 << d)).sum::<i32>());
}

#[test]
fn shared_edges_have_bit_identical_sample_directions() {
    let last = TILE_CELLS as i32;
    for tile in every_tile_to_depth(4) {
        for edge in Edge::ALL {
            let n = tile.neighbour(edge);
            for k in 0..=last {
                let here = sample_inside(edge, k, 0);
                let along = if n.reversed { last - k } else { k };
                let there = sample_inside(n.shared_edge, along, 0);
                let a = sample_direction(tile.sample(here.0, here.1));
                let b = sample_direction(n.address.sample(there.0, there.1));
                assert_eq!(a, b, "{tile} {edge:?} sample {k} vs {} {:?}", n.address, n.shared_edge);
            }
        }
    }
}

#[test]
fn apron_samples_are_the_neighbours_canonical_samples() {
    let last = TILE_CELLS as i32;
    for tile in every_tile_to_depth(3) {
        for edge in Edge::ALL {
            let n = tile.neighbour(edge);
            for k in 0..=last {
                let apron = match edge {
                    Edge::MinU => (-1, k),
                    Edge::MaxU => (last + 1, k),
                    Edge::MinV => (k, -1),
                    Edge::MaxV => (k, last + 1),
                };
                let along = if n.reversed { last - k } else { k };
                let inside = sample_inside(n.shared_edge, along, 1);
                assert_eq!(
                    sample_direction(tile.sample(apron.0, apron.1)),
                    sample_direction(n.address.sample(inside.0, inside.1)),
                    "{tile} apron {apron:?}"
                );
            }
        }
    }
}

#[test]
fn cube_corner_apron_repeats_the_corner() {
    let corner_tile = TileAddress::new(0, 2, 0, 0).unwrap();
    assert_eq!(corner_tile.sample(-1, -1), corner_tile.sample(0, 0));
    // Away from a cube corner the diagonal apron is a real neighbour sample.
    let inner = TileAddress::new(0, 2, 1, 1).unwrap();
    let diagonal = TileAddress::new(0, 2, 0, 0).unwrap();
    assert_eq!(inner.sample(-1, -1), diagonal.sample(127, 127));
    // On a face edge but not a corner, the diagonal crosses onto the next face.
    let edge_tile = TileAddress::new(0, 2, 3, 1).unwrap();
    let s = edge_tile.sample(129, -1);
    assert_eq!(s.face, Face::new(1).unwrap());
}
