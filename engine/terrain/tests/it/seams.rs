//! The seam check: where two drawn nodes meet, every vertex of one edge is
//! where the other side draws that point (its vertex, or for a coarser
//! neighbour the midpoint its fully morphed odd vertex lands on), computed
//! by `reference_vertex`, the shader's CPU twin, from the node records the
//! renderer would get. One checker for any ground: the analytic test ground
//! and ground with detail synthesized past its data.

use std::collections::HashMap;

use planet_terrain::abi::NodeRecord;
use planet_terrain::camera::View;
use planet_terrain::geo::lattice::LATTICE_CELLS;
use planet_terrain::ground::HeightSource;
use planet_terrain::lod::record::edge_index;
use planet_terrain::lod::residency::Binding;
use planet_terrain::lod::{EdgeRelation, SelectionSettings, UvRect, build_records, reference_vertex, select};
use planet_terrain::{Edge, TileAddress};

/// The worst gaps found, and how much was checked.
#[derive(Clone, Copy, Debug, Default)]
pub struct SeamFigures {
    /// The largest gap, in pixels at its distance from the camera.
    pub worst_px: f64,
    /// The largest gap within 1 km of the camera, in metres.
    pub worst_near_m: f64,
    pub edges: usize,
    /// Edges between a node and a coarser neighbour.
    pub coarse_fine: usize,
    /// Nodes checked deeper than the source's data depth.
    pub past_data: usize,
}

/// Lattice coordinates of vertex `k` along `edge`.
pub fn on_edge(edge: Edge, k: u32) -> (u32, u32) {
    let last = LATTICE_CELLS;
    match edge {
        Edge::MinU => (0, k),
        Edge::MaxU => (last, k),
        Edge::MinV => (k, 0),
        Edge::MaxV => (k, last),
    }
}

/// Selects a cut of `source` from each view (target 1 px, `budget` nodes)
/// and measures the gap at every vertex of every edge of every node, culled
/// or not. `heights` gives a tile's stored samples (only its border is read).
pub fn seam_gaps(
    source: &dyn HeightSource,
    heights: &dyn Fn(TileAddress) -> Vec<f32>,
    views: &[View],
    budget: usize,
) -> SeamFigures {
    let ellipsoid = *source.body().ellipsoid();
    let data_depth = source.data_depth();
    let mut figures = SeamFigures::default();
    for view in views {
        let settings = SelectionSettings { target_error_px: 1.0, node_budget: budget, near_m: 0.1 };
        let mut cut = select(source, view, &settings).unwrap();
        for n in &mut cut.nodes {
            n.culled = None;
        }
        let bindings: Vec<Option<Binding>> = cut
            .nodes
            .iter()
            .map(|n| Some(Binding { tile: n.tile, source: n.tile, slot: 0, uv: UvRect::FULL }))
            .collect();
        let records = build_records(&ellipsoid, view, &cut, &bindings, |_| None);
        let by_tile: HashMap<TileAddress, (&NodeRecord, Vec<f32>)> =
            cut.nodes.iter().zip(&records).map(|(n, r)| (n.tile, (r, heights(n.tile)))).collect();
        figures.past_data += cut.nodes.iter().filter(|n| data_depth.is_some_and(|d| n.tile.depth() > d)).count();
        let ppr = view.pixels_per_radian();
        let last = LATTICE_CELLS;
        for node in &cut.nodes {
            let (record, heights) = &by_tile[&node.tile];
            for edge in Edge::ALL {
                let n = node.tile.neighbour(edge);
                // For each vertex k of this edge, where the other side draws
                // that point: one of its vertices, or the midpoint of two.
                type Counterpart = Box<dyn Fn(u32) -> (u32, u32)>;
                let (other, counterpart): (TileAddress, Counterpart) = match node.edges[edge_index(edge)] {
                    EdgeRelation::Finer => continue, // checked from the finer side
                    EdgeRelation::Same => (
                        n.address,
                        Box::new(move |k| {
                            let m = if n.reversed { last - k } else { k };
                            (m, m)
                        }),
                    ),
                    EdgeRelation::Coarser => {
                        figures.coarse_fine += 1;
                        let coarse = n.address.parent().unwrap();
                        let bit = if n.shared_edge.is_u_edge() { n.address.y() & 1 } else { n.address.x() & 1 };
                        let base = 16 * bit;
                        let to_coarse = move |k: u32| base + (if n.reversed { last - k } else { k }) / 2;
                        // Even fine vertices are coarse vertices; odd ones,
                        // fully morphed, are the midpoint of two.
                        (
                            coarse,
                            Box::new(move |k| {
                                if k % 2 == 0 {
                                    (to_coarse(k), to_coarse(k))
                                } else {
                                    (to_coarse(k - 1), to_coarse(k + 1))
                                }
                            }),
                        )
                    }
                };
                let (other_record, other_heights) = &by_tile[&other];
                for k in 0..=last {
                    let (i, j) = on_edge(edge, k);
                    let here = reference_vertex(record, heights, i, j);
                    let (m0, m1) = counterpart(k);
                    let (a, b) = (on_edge(n.shared_edge, m0), on_edge(n.shared_edge, m1));
                    let there = if m0 == m1 {
                        reference_vertex(other_record, other_heights, a.0, a.1)
                    } else {
                        (reference_vertex(other_record, other_heights, a.0, a.1)
                            + reference_vertex(other_record, other_heights, b.0, b.1))
                            * 0.5
                    };
                    let gap = f64::from((here - there).length());
                    let distance = f64::from(here.length()).max(1e-3);
                    figures.worst_px = figures.worst_px.max(gap * ppr / distance);
                    if distance < 1000.0 {
                        figures.worst_near_m = figures.worst_near_m.max(gap);
                    }
                }
                figures.edges += 1;
            }
        }
    }
    figures
}
