//! Per-node draw records, morph ranges, and the CPU reference of the vertex
//! shader.
//!
//! The key decision: the morph is watertight by construction, not by tuning.
//! Odd lattice vertices blend toward the midpoint of their even neighbours
//! (where the parent's lattice draws them) by a factor `k`; on an edge that borders a coarser node `k` is 1, on an edge
//! that borders finer nodes it is 0, and everywhere else it is a function of
//! the vertex's distance with per-depth parameters, the same for every node
//! of a depth. So across a coarse/fine edge both sides sit on the coarse
//! lattice, and across a same-level edge both sides compute the same `k`.
//! (This needs neighbours to differ by at most one level, which selection
//! enforces.) The distance band of a depth is laid out against the cut's
//! effective error: a depth-d vertex is fully morphed where the coarsest
//! parent of any depth-d node would meet the effective error.
//!
//! [`reference_vertex`] is the exact f32 computation the vertex shader
//! performs; the shader is held to it by a conformance test.

use glam::{DVec3, Vec3};

use crate::camera::view::View;
use crate::cut::{Cut, EdgeRelation, SelectedNode};
use crate::residency::Binding;
use planet_geo::abi::{EDGE_COARSER, EDGE_FINER, EDGE_SAME, NodeRecord};
use planet_geo::address::{TILE_CELLS, TILE_STORED_SAMPLES};
use planet_geo::body::Ellipsoid;
use planet_geo::face::Edge;
use planet_geo::lattice::LATTICE_CELLS;
use planet_geo::precision::{NodeCentre, vertex_offset};

/// Fraction of a depth's morph distance over which it morphs.
pub const MORPH_BAND: f32 = 0.3;

/// Per depth, the distance (metres) at which its vertices finish morphing:
/// where the error of a parent of a depth-d node, seen from that far, meets
/// the cut's effective error. The parent's error is bounded below by the
/// errors of depth d-1 nodes in the cut and by twice the errors of depth d
/// nodes (a parent stands for at least its children). This affects how
/// smoothly ground changes level, never whether it is watertight.
pub fn morph_end_distances(cut: &Cut, view: &View) -> Vec<f64> {
    let deepest = cut.nodes.iter().map(|n| n.tile.depth()).max().unwrap_or(0);
    let mut errors = vec![0.0f64; usize::from(deepest) + 1];
    for n in &cut.nodes {
        let d = usize::from(n.tile.depth());
        errors[d] = errors[d].max(n.bounds.geometric_error);
    }
    let effective = cut.effective_screen_error_px.max(1e-6);
    (0..=usize::from(deepest))
        .map(|d| {
            let parent = if d == 0 { 0.0 } else { errors[d - 1].max(2.0 * errors[d]) };
            if parent > 0.0 { parent * view.pixels_per_radian() / effective } else { f64::INFINITY }
        })
        .collect()
}

fn edge_bits(edges: [EdgeRelation; 4]) -> u32 {
    edges.iter().enumerate().fold(0, |bits, (k, r)| {
        let code = match r {
            EdgeRelation::Same => EDGE_SAME,
            EdgeRelation::Coarser => EDGE_COARSER,
            EdgeRelation::Finer => EDGE_FINER,
        };
        bits | (code << (2 * k))
    })
}

/// Builds the record of a node bound as `binding` describes, its frame
/// centred at elevation `centre_height`. The vertex path carries heights
/// relative to it, so it should sit inside what the bound tile holds (see
/// [`centre_height_within`]); a centre far from the ground costs precision.
pub fn node_record(
    ellipsoid: &Ellipsoid,
    view: &View,
    node: &SelectedNode,
    binding: &Binding,
    morph_end: f64,
    centre_height: f64,
) -> NodeRecord {
    let centre = NodeCentre::new(ellipsoid, node.tile, centre_height);
    let from_camera: DVec3 = centre.point - view.position;
    NodeRecord {
        basis: centre.basis,
        centre_from_camera: [from_camera.x as f32, from_camera.y as f32, from_camera.z as f32],
        depth: u32::from(node.tile.depth()),
        uv_offset: [binding.uv.offset[0] as f32, binding.uv.offset[1] as f32],
        uv_scale: binding.uv.scale as f32,
        slot: binding.slot as u32,
        morph_start: (morph_end * (1.0 - f64::from(MORPH_BAND))).min(f64::from(f32::MAX)) as f32,
        morph_end: morph_end.min(f64::from(f32::MAX)) as f32,
        edges: edge_bits(node.edges),
        centre_height: centre_height as f32,
        height_base: 0.0,
        height_step: 0.0,
        skirt_m: skirt_depth(node, binding) as f32,
        slot_flags: 0,
        detail_origin: planet_geo::abi::detail_origin(centre.point),
    }
}

/// A skirt deep enough to cover the worst disagreement at the node's edges:
/// the error of the tile it actually reads (an ancestor's error grows about
/// twofold per level it stands in for), twice over, and never under a metre.
fn skirt_depth(node: &SelectedNode, binding: &Binding) -> f64 {
    let levels = node.tile.depth().saturating_sub(binding.source.depth());
    let error = node.bounds.geometric_error * f64::from(1u32 << levels.min(30));
    (2.0 * error).max(1.0)
}

/// The frame centre elevation for a node: the middle of what its bound
/// tile actually holds (`held`, when known), kept inside the node's bounds;
/// otherwise the middle of the bounds. Source bounds can be loose (a
/// procedural body's are global), and every metre between the centre and
/// the ground is a metre of f32 the vertex path must carry.
pub fn centre_height_within(node: &SelectedNode, held: Option<(f64, f64)>) -> f64 {
    let (lo, hi) = (node.bounds.min_elevation, node.bounds.max_elevation);
    match held {
        Some((a, b)) if a.is_finite() && b.is_finite() && a <= b => (0.5 * (a + b)).clamp(lo.min(hi), hi.max(lo)),
        _ => 0.5 * (lo + hi),
    }
}

/// Records for every drawn node of a cut, given each node's binding (in the
/// cut's node order; `None` for dropped nodes, which get no record) and the
/// elevation range its bound slot holds (`held_range`, when known).
pub fn build_records(
    ellipsoid: &Ellipsoid,
    view: &View,
    cut: &Cut,
    bindings: &[Option<Binding>],
    held_range: impl Fn(&Binding) -> Option<(f64, f64)>,
) -> Vec<NodeRecord> {
    let morph = morph_end_distances(cut, view);
    let drawn = drawn_ranges(cut, bindings, &held_range);
    cut.nodes
        .iter()
        .zip(bindings)
        .filter(|(n, _)| n.culled.is_none())
        .filter_map(|(n, b)| {
            b.as_ref().map(|b| {
                let centre_height = centre_height_within(n, held_range(b));
                let mut record = node_record(ellipsoid, view, n, b, morph[usize::from(n.tile.depth())], centre_height);
                let beside = stand_in_gap_beside(n, &drawn);
                record.skirt_m = record.skirt_m.max(beside as f32);
                record
            })
        })
        .collect()
}

/// What every bound node of a cut draws, while any node is a stand-in (one
/// drawn from an ancestor's tile while its own loads); empty otherwise. A
/// stand-in draws the held range, widened by its bounds (the ground of its
/// edges); any other node its bounds.
fn drawn_ranges(
    cut: &Cut,
    bindings: &[Option<Binding>],
    held_range: &impl Fn(&Binding) -> Option<(f64, f64)>,
) -> std::collections::HashMap<planet_geo::address::TileAddress, Drawn> {
    if !cut.nodes.iter().zip(bindings).any(|(n, b)| b.as_ref().is_some_and(|b| b.source != n.tile)) {
        return std::collections::HashMap::new();
    }
    cut.nodes
        .iter()
        .zip(bindings)
        .filter_map(|(n, b)| {
            let b = b.as_ref()?;
            let (lo, hi) = (n.bounds.min_elevation, n.bounds.max_elevation);
            let drawn = match held_range(b).filter(|_| b.source != n.tile) {
                Some((held_lo, held_hi)) => Drawn { lo: lo.min(held_lo), hi: hi.max(held_hi), stand_in: true },
                None => Drawn { lo, hi, stand_in: b.source != n.tile },
            };
            (drawn.lo.is_finite() && drawn.hi.is_finite()).then_some((n.tile, drawn))
        })
        .collect()
}

/// The elevations a node's drawn surface lies between, and whether it is a
/// stand-in.
#[derive(Clone, Copy)]
struct Drawn {
    lo: f64,
    hi: f64,
    stand_in: bool,
}

/// How far `node`'s edges can lie from what the nodes across them draw,
/// where either side is a stand-in: the span of both sides' drawn ranges
/// (the two sides' gaps can add up: two stand-ins side by side, or a
/// neighbour whose samples leave the stand-in's bounds). A skirt hangs
/// below its own edge, so where a stand-in's edge lies below a
/// neighbour's, the neighbour's skirt must reach down to it (a camera 600 m
/// over the Sierra, 1,500 tiles pending, saw sky through such gaps: the
/// skirts of 2 x their errors did not). The nodes across an edge are one of
/// its depth, the coarser one covering it, or the finer ones along it:
/// balance allows no others.
fn stand_in_gap_beside(
    node: &SelectedNode,
    drawn: &std::collections::HashMap<planet_geo::address::TileAddress, Drawn>,
) -> f64 {
    let Some(&own) = drawn.get(&node.tile) else { return 0.0 };
    let span = |other: Option<&Drawn>| match other {
        Some(o) if own.stand_in || o.stand_in => own.hi.max(o.hi) - own.lo.min(o.lo),
        _ => 0.0,
    };
    let mut widest = if own.stand_in { own.hi - own.lo } else { 0.0 };
    for edge in Edge::ALL {
        let across = node.tile.neighbour(edge).address;
        widest = widest.max(span(drawn.get(&across)));
        widest = across.parent().map_or(widest, |p| widest.max(span(drawn.get(&p))));
        for child in across.children().into_iter().flatten() {
            widest = widest.max(span(drawn.get(&child)));
        }
    }
    widest
}

/// The morph factor of lattice vertex `(i, j)` at `distance` metres.
pub fn morph_factor(record: &NodeRecord, i: u32, j: u32, distance: f32) -> f32 {
    let by_distance = ((distance - record.morph_start) / (record.morph_end - record.morph_start)).clamp(0.0, 1.0);
    let by_distance = if by_distance.is_nan() { 0.0 } else { by_distance };
    let on_edge = |edge: usize| (record.edges >> (2 * edge)) & 3;
    let last = LATTICE_CELLS;
    // Edge order: MinU (i = 0), MaxU (i = 32), MinV (j = 0), MaxV (j = 32).
    let edge = match (i, j) {
        (0, _) => Some(0),
        (i, _) if i == last => Some(1),
        (_, 0) => Some(2),
        (_, j) if j == last => Some(3),
        _ => None,
    };
    match edge.map(on_edge) {
        Some(EDGE_COARSER) => 1.0,
        Some(EDGE_FINER) => 0.0,
        _ => by_distance,
    }
}

/// Height (metres) at fractional lattice coordinate `(u, v)` of a node,
/// from its bound tile's 131 x 131 stored heights: the texel is
/// `1 + 128 * (uv_offset + uv_scale * u / 32)`, read with four integer
/// fetches and blended bilinearly (never a filtered sampler).
pub fn lattice_height(record: &NodeRecord, heights: &[f32], u: f32, v: f32) -> f32 {
    let cells = TILE_CELLS as f32;
    let lattice = LATTICE_CELLS as f32;
    let tu = 1.0 + cells * (record.uv_offset[0] + record.uv_scale * u / lattice);
    let tv = 1.0 + cells * (record.uv_offset[1] + record.uv_scale * v / lattice);
    let (u0, v0) = (tu.floor().min(cells), tv.floor().min(cells));
    let (fu, fv) = (tu - u0, tv - v0);
    let n = TILE_STORED_SAMPLES as usize;
    let at = |x: f32, y: f32| heights[y as usize * n + x as usize];
    let bottom = at(u0, v0) + fu * (at(u0 + 1.0, v0) - at(u0, v0));
    let top = at(u0, v0 + 1.0) + fu * (at(u0 + 1.0, v0 + 1.0) - at(u0, v0 + 1.0));
    bottom + fv * (top - bottom)
}

fn position(record: &NodeRecord, heights: &[f32], u: f32, v: f32) -> Vec3 {
    let cell = 2.0f32.powi(-(record.depth as i32 + 4));
    let (ds, dt) = ((u - 16.0) * cell, (v - 16.0) * cell);
    let h = lattice_height(record, heights, u, v);
    let offset = vertex_offset(&record.basis, ds, dt, h - record.centre_height, h);
    Vec3::from_array(record.centre_from_camera) + offset
}

/// The camera-relative position of lattice vertex `(i, j)` (0..=32) of a
/// node, exactly as the vertex shader computes it. The unmorphed position
/// gives the distance; the distance and the edge relations give `k`. An odd
/// vertex then blends by `k` toward the midpoint of its two even neighbours
/// (along the odd axis; for a cell centre, along the cell's triangle
/// diagonal from (i-1, j-1) to (i+1, j+1)), which is where the parent's
/// lattice draws that point. Blending toward the midpoint, rather than
/// sliding onto one neighbour, does not depend on which way the lattice
/// runs, so two faces whose edge coordinates run opposite ways agree.
/// `(1 - k) p + k t` makes `k = 1` land on `t` exactly.
pub fn reference_vertex(record: &NodeRecord, heights: &[f32], i: u32, j: u32) -> Vec3 {
    let at = |i: u32, j: u32| position(record, heights, i as f32, j as f32);
    let p = at(i, j);
    if i.is_multiple_of(2) && j.is_multiple_of(2) {
        return p;
    }
    let k = morph_factor(record, i, j, p.length());
    if k == 0.0 {
        return p;
    }
    let (a, b) = match (i % 2, j % 2) {
        (1, 0) => (at(i - 1, j), at(i + 1, j)),
        (0, 1) => (at(i, j - 1), at(i, j + 1)),
        _ => (at(i - 1, j - 1), at(i + 1, j + 1)),
    };
    let target = (a + b) * 0.5;
    p * (1.0 - k) + target * k
}

/// Which edge `Edge::ALL[k]` is, for readers of [`NodeRecord::edges`].
pub fn edge_index(edge: Edge) -> usize {
    Edge::ALL.iter().position(|&e| e == edge).expect("one of four")
}
