//! Unit tests of refinement (split out of refine.rs to keep it readable).

use super::*;
use planet_geo::body::{Body, Geodetic};
use planet_geo::cube::direction_to_face_grid;
use planet_ground::{AnalyticSource, TileBounds};

/// Ground with error only on the ancestors of one deepest tile under the
/// camera, so refinement runs to `MAX_DEPTH` there, balanced around it.
/// Selection reads its bounds only.
fn spike_ground(body: Body, deepest: TileAddress) -> AnalyticSource {
    AnalyticSource::new(
        body,
        |_| unreachable!("selection reads bounds only"),
        move |tile| TileBounds::invented(-500.0, 2500.0, if tile.contains(deepest) { 1000.0 } else { 0.0 }),
    )
}

/// Near the ground at a face edge, where links cross faces.
fn spike() -> (AnalyticSource, View) {
    let at = Geodetic::from_degrees(0.3, 44.99, 3000.0);
    let (face, s, t) = direction_to_face_grid(at.normal());
    let cell = |c: f64| ((c + 1.0) * 0.5 * f64::from(1u32 << MAX_DEPTH)) as u32;
    let tile = TileAddress::new(face.index(), MAX_DEPTH, cell(s), cell(t)).unwrap();
    let source = spike_ground(Body::earth(), tile);
    let view = View::looking_from(source.body(), at, 80.0, -20.0, 60f64.to_radians(), (1920, 1080));
    (source, view)
}

fn refined<'a>(source: &'a AnalyticSource, view: &View, patches: &'a mut Vec<Patch>) -> Refinement<'a> {
    let settings = SelectionSettings { target_error_px: 0.5, node_budget: 100_000, near_m: 0.1 };
    let mut refine = Refinement::new(source, view, &settings, &[], patches, Tree::default(), 0.0).unwrap();
    refine.run().unwrap();
    assert!(refine.nodes.iter().any(|n| n.tile.depth() == MAX_DEPTH));
    refine
}

#[test]
fn split_spheres_match_the_spheres_of_the_tiles() {
    // Splits build children's spheres from the parent's reused grid
    // points; they must be the spheres BoundingSphere::of_tile (the
    // property-tested one) gives, up to rounding in the warped
    // coordinates.
    let (source, view) = spike();
    let mut patches = Vec::new();
    let refine = refined(&source, &view, &mut patches);
    let e = &refine.context.ellipsoid;
    for n in &refine.nodes {
        let b = BoundingSphere::of_tile(e, n.tile, n.bounds.min_elevation, n.bounds.max_elevation);
        let a = n.sphere;
        assert!((a.centre - b.centre).length() <= 1e-6 * b.radius.max(1.0), "{}: centres differ", n.tile);
        assert!(
            (a.radius - b.radius).abs() <= 1e-6 * b.radius.max(1.0),
            "{}: radii {} vs {}",
            n.tile,
            a.radius,
            b.radius
        );
    }
}

#[test]
fn leaves_link_to_their_neighbour_or_its_parent() {
    let (source, view) = spike();
    let mut patches = Vec::new();
    let refine = refined(&source, &view, &mut patches);
    for n in refine.nodes.iter().filter(|n| n.is_leaf()) {
        for edge in Edge::ALL {
            let neighbour = n.tile.neighbour(edge).address;
            let linked = refine.nodes[n.links[edge as usize] as usize].tile;
            assert!(
                linked == neighbour || Some(linked) == neighbour.parent(),
                "{} across {edge:?} links {linked}, not {neighbour} or its parent",
                n.tile
            );
            if Some(linked) == neighbour.parent() {
                assert!(refine.nodes[n.links[edge as usize] as usize].is_leaf(), "a coarser link is a leaf");
            }
        }
    }
}

/// Pops of one queue, whatever its threshold: the waiting keys are ordered
/// only once the heap runs dry, and never pop before a larger key.
#[test]
fn a_threshold_changes_no_pop_of_the_error_queue() {
    let errors = [3.0, 0.5, f64::INFINITY, 7.25, 0.5, 2.0, 9.0, 0.1, 7.25, 4.0, 1.5, 0.0, 6.0];
    let pops = |threshold: f64| {
        let mut heap = ErrorHeap::default();
        heap.reset(threshold, 4);
        let mut popped = Vec::new();
        for (index, &error) in errors.iter().enumerate() {
            heap.push(error, index as u32);
            // Interleaved, as refinement pushes children between pops.
            if index % 3 == 2 {
                popped.extend(heap.peek());
                heap.pop();
            }
        }
        while let Some(entry) = heap.peek() {
            popped.push(entry);
            heap.pop();
        }
        popped
    };
    let ordered = pops(0.0);
    assert_eq!(ordered.len(), errors.len());
    for threshold in [0.5, 2.0, 7.25, 100.0, f64::INFINITY] {
        assert_eq!(pops(threshold), ordered, "threshold {threshold}");
    }
}
