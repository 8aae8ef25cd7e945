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

/// [`UnevenGround`]'s tiles as a centimetre-scale ground whose error does
/// not fall with depth (as where detail is invented past the data): two
/// millimetres at every depth, and a top between 2
/// and 22 mm that varies from tile to tile, so a camera 1 cm up is inside
/// some tiles' bounds (an infinite error) and above their parents'.
#[derive(Debug)]
struct Pebbles(UnevenGround);

impl HeightSource for Pebbles {
    fn body(&self) -> &Body {
        self.0.body()
    }
    fn tile(&self, tile: TileAddress) -> Result<crate::ground::SourceTile, SourceError> {
        self.0.tile(tile)
    }
    fn tile_bounds(&self, tile: TileAddress) -> Result<crate::ground::TileBounds, SourceError> {
        let bounds = self.0.tile_bounds(tile)?;
        Ok(crate::ground::TileBounds {
            min_elevation: 0.0,
            max_elevation: 0.002 + bounds.max_elevation / 4200.0 * 0.02,
            geometric_error: 0.002,
            ..bounds
        })
    }
    fn data_depth(&self) -> Option<u8> {
        None
    }
    fn colour_data_depth(&self) -> Option<u8> {
        None
    }
}

/// Regression: the viewer's flight with physics bodies (ending 2 m above
/// invented ground) once panicked splitting a leaf at `MAX_DEPTH`. With
/// the camera inside the bounds of the tiles under it, their error is
/// infinite down to `MAX_DEPTH`; a split queue entry left by a leaf that a
/// merge took (freeing its block, which the next split reuses) matched a
/// new leaf at `MAX_DEPTH` in the same slot by its equally infinite error.
/// This flight drives the cut to `MAX_DEPTH` under infinite errors with the
/// budget binding and checks the tree each frame; the viewer's exact
/// interleaving (bounds narrowing as tiles load) is not reproduced here.
#[test]
fn a_camera_inside_the_ground_s_bounds_never_splits_past_max_depth() {
    let source = Pebbles(UnevenGround(Body::earth()));
    let mut deepest = 0;
    for budget in (520..=620).step_by(20) {
        let settings = SelectionSettings { target_error_px: 50.0, node_budget: budget, near_m: 0.001 };
        let mut selector = Selector::new();
        for frame in 0..60u32 {
            let f = f64::from(frame);
            // A centimetre up, moving a few millimetres a frame and turning.
            let at = Geodetic::from_degrees(-12.0 + 1e-7 * f, 131.0 + 2e-7 * f, 0.01);
            let view =
                View::looking_from(source.body(), at, 11.0 * f, -30.0 + 0.5 * f, 60f64.to_radians(), (1280, 720));
            let cut = selector.select(&source, &view, &settings).unwrap();
            assert!(cut.nodes.len() <= settings.node_budget);
            deepest = deepest.max(cut.nodes.iter().map(|n| n.tile.depth()).max().unwrap_or(0));
            check_tree(&selector, frame);
        }
    }
    assert_eq!(deepest, MAX_DEPTH, "the cut reaches the deepest level under the camera");
}
