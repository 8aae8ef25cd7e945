//! Unit tests of the followed cut's tree (split out of follow.rs): after
//! every frame of a flight, every link, parent and count is what the tree
//! says, which the integration tests can only see through the output.

use super::*;
use crate::geo::body::{Body, Geodetic};
use crate::testing::UnevenGround;

fn check_tree(selector: &Selector, frame: u32) {
    let nodes = &selector.nodes;
    let live = |k: u32| nodes[k as usize].children != FREED;
    let mut leaves = 0;
    for (k, n) in nodes.iter().enumerate().filter(|(k, _)| live(*k as u32)) {
        if let Some(parent) = n.tile.parent() {
            let up = selector.parents[k];
            assert!(live(up) && nodes[up as usize].tile == parent, "frame {frame}: {} has a wrong parent", n.tile);
        }
        if !n.is_leaf() {
            for q in 0..4 {
                let child = &nodes[n.children as usize + q];
                assert_eq!(Some(child.tile), n.tile.children().map(|c| c[q]), "frame {frame}: child of {}", n.tile);
            }
            continue;
        }
        leaves += 1;
        for edge in Edge::ALL {
            let link = n.links[edge as usize];
            assert!(live(link), "frame {frame}: {} links a freed node", n.tile);
            let (linked, neighbour) = (&nodes[link as usize], n.tile.neighbour(edge).address);
            assert!(
                linked.tile == neighbour || (Some(linked.tile) == neighbour.parent() && linked.is_leaf()),
                "frame {frame}: {} across {edge:?} links {}, not {neighbour} or its leaf parent",
                n.tile,
                linked.tile
            );
        }
    }
    assert_eq!(leaves, selector.leaves, "frame {frame}: leaf count");
}

#[test]
fn a_flight_keeps_every_link_parent_and_count_true() {
    let source = UnevenGround(Body::earth());
    let settings = SelectionSettings { target_error_px: 0.05, node_budget: 1500, near_m: 0.1 };
    let mut selector = Selector::new();
    let mut followed = 0;
    let mut merges = 0;
    for frame in 0..80u32 {
        let f = f64::from(frame);
        // Descending and turning fast enough to split, merge and trade.
        let at = Geodetic::from_degrees(35.0 + 0.002 * f, 45.0, 60_000.0 * 0.95f64.powf(f));
        let view = View::looking_from(source.body(), at, 7.0 * f, -25.0, 60f64.to_radians(), (1920, 1080));
        let cut = selector.select(&source, &view, &settings).unwrap();
        assert!(cut.nodes.len() <= settings.node_budget);
        followed += usize::from(selector.followed_last_frame());
        check_tree(&selector, frame);
        if selector.followed_last_frame() {
            merges += selector.changes - selector.splits_made;
        }
    }
    println!("{followed} frames followed, {merges} merges");
    assert!(followed > 40, "most frames are followed ({followed})");
    assert!(merges > 0, "the flight merges");
}
