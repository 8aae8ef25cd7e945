//! Coarse levels from a filter, not a point sample. Every level above the
//! pack's height data depth is built from the level below it as stored
//! (decoded from the staged or written tiles), never from the source, so a
//! depth-0 tile holds the mean of the ground it stands for instead of the
//! few pixels that happen to lie under its lattice, and coarse levels cost
//! no source reads.
//!
//! **The stated filter.** A parent sample is the mean, over its footprint
//! (the square of one parent sample spacing centred on it in the face
//! grid), of the bilinear surface through the child level's samples. In the
//! child grid that is the separable `[1 2 1] x [1 2 1] / 16` kernel on the
//! child samples at `2i-1..=2i+1`; applied level after level it is the area
//! mean of the data-depth surface widened by at most one sample spacing. At
//! a cube corner, where three faces meet, the footprint is the three faces'
//! quarter cells: `(3 c + 2 (e1 + e2 + e3) + d1 + d2 + d3) / 12`, with `e`
//! the three edge neighbours and `d` each face's diagonal neighbour.
//!
//! **Seams stay bit-exact**, across face edges too, because each tap's value
//! and the arithmetic are functions of the place alone. A child sample that
//! several tiles store (edges, aprons; and on face edges, two faces) is
//! always read from one owner: the present holding tile of smallest
//! identity among every spelling of the sample. A sample on a face edge sums
//! its weighted taps in ascending order of their products (each product
//! exact: the weights are powers of two off the cube corners), so the sum
//! does not depend on which face's axes enumerated them; any other sample
//! is summed in its face's one tap order. A parent's apron samples are
//! evaluated as the neighbour's own samples, on the neighbour's face.
//!
//! **Bounded memory.** A level is never held whole: parents are filtered in
//! windows of consecutive keys (Hilbert order, so a window is a compact
//! patch of the face), and a window's [`Level`] holds only the child tiles
//! its parents can read (`needed_children`: the parents' children and two
//! rings of neighbours around them, across face edges too), at most the
//! caller's `held` tiles. Every tile a parent's samples could consult is in
//! its window's level, so the owner rule sees the same tiles and the bits do
//! not depend on the windowing.
//!
//! **Voids.** A tap whose owner tile is absent (a regional bake) drops out
//! and the weights are renormalised; a sample with no tap is a void for
//! the bake's void policy. A sample is measured when all its taps were
//! present and measured (from a measured tile, and not a void).

use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use rayon::prelude::*;

use planet_terrain::geo::address::{TILE_CELLS, TILE_STORED_SAMPLE_COUNT, TILE_STORED_SAMPLES};
use planet_terrain::pack::{DecodedTile, stored_index};
use planet_terrain::{Edge, Face, TileAddress};

const CELLS: i64 = TILE_CELLS as i64;

/// One filtered (or read) value, and whether all that went into it was
/// measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Tap {
    pub(crate) height: f64,
    pub(crate) measured: bool,
}

/// A hasher for tile identities (already well spread integers): a
/// multiplicative mix instead of SipHash, since a filter looks a tile up for
/// every sample on a tile boundary.
#[derive(Default)]
pub(crate) struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0 ^ u64::from(b));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// The value of face-grid sample `(gi, gj)` (off the face's edges, on a
/// tile boundary) from its owner: of the up to four tiles of this face
/// that hold it, the present one of smallest identity. `holder(x, y)` is
/// tile `(x, y)`'s identity and content, if the level has it.
fn owner_on_boundary<'a>(gi: i64, gj: i64, holder: impl Fn(i64, i64) -> Option<(u64, &'a DecodedTile)>) -> Option<Tap> {
    let span = |g: i64| {
        let k = g / CELLS;
        if g % CELLS == 0 { [k - 1, k] } else { [k, k] }
    };
    let mut owner: Option<(u64, Tap)> = None;
    for x in span(gi) {
        for y in span(gj) {
            if let Some((id, t)) = holder(x, y)
                && owner.is_none_or(|(best, _)| id < best)
            {
                owner = Some((id, Level::tap(t, (gi - CELLS * x) as i32, (gj - CELLS * y) as i32)));
            }
        }
    }
    owner.map(|(_, tap)| tap)
}

/// The stored tiles of one depth: what the level above is filtered from.
pub(crate) struct Level {
    depth: u8,
    tiles: HashMap<u64, DecodedTile, BuildHasherDefault<IdentityHasher>>,
}

/// Every `(tile, i, j)` whose core holds the level-`depth` face-grid sample
/// `(face, gi, gj)` (`0 <= gi, gj <= cells`), on every face that spells it,
/// smallest tile identity first.
fn holders(depth: u8, face: Face, gi: i64, gj: i64) -> Vec<(TileAddress, i32, i32)> {
    let last = (1i64 << depth) - 1;
    let mut out: Vec<(TileAddress, i32, i32)> = Vec::with_capacity(4);
    let mut faces: Vec<Face> = Vec::with_capacity(3);
    let mut queue = vec![(face, gi, gj)];
    while let Some((f, gi, gj)) = queue.pop() {
        if faces.contains(&f) {
            continue;
        }
        faces.push(f);
        let span = |g: i64| -> Vec<i64> {
            let k = g / CELLS;
            let mut v = if g % CELLS == 0 { vec![k - 1, k] } else { vec![k] };
            v.retain(|x| (0..=last).contains(x));
            v
        };
        for x in span(gi) {
            for y in span(gj) {
                let tile = TileAddress::new(f.index(), depth, x as u32, y as u32).expect("inside the face");
                let (i, j) = (gi - CELLS * x, gj - CELLS * y);
                out.push((tile, i as i32, j as i32));
                let edges = [
                    (Edge::MinU, x == 0 && i == 0),
                    (Edge::MaxU, x == last && i == CELLS),
                    (Edge::MinV, y == 0 && j == 0),
                    (Edge::MaxV, y == last && j == CELLS),
                ];
                for (edge, on) in edges {
                    if !on {
                        continue;
                    }
                    let n = tile.neighbour(edge);
                    let along = if edge.is_u_edge() { j } else { i };
                    let along = if n.reversed { CELLS - along } else { along };
                    let across = match n.shared_edge {
                        Edge::MinU | Edge::MinV => 0,
                        Edge::MaxU | Edge::MaxV => CELLS,
                    };
                    let (ni, nj) = if n.shared_edge.is_u_edge() { (across, along) } else { (along, across) };
                    let a = n.address;
                    queue.push((a.face(), CELLS * i64::from(a.x()) + ni, CELLS * i64::from(a.y()) + nj));
                }
            }
        }
    }
    out.sort_by_key(|(t, _, _)| t.identity());
    out
}

/// Weighted taps, summed in an order that depends on their values only.
#[derive(Default)]
struct Taps {
    terms: [(f64, u32); 9],
    count: usize,
    weight: u32,
    missing: bool,
    unmeasured: bool,
}

impl Taps {
    fn add(&mut self, tap: Option<Tap>, weight: u32) {
        match tap {
            Some(t) => {
                self.terms[self.count] = (t.height * f64::from(weight), weight);
                self.count += 1;
                self.weight += weight;
                self.unmeasured |= !t.measured;
            }
            None => self.missing = true,
        }
    }

    /// The weighted mean: in ascending order of the products when the
    /// sample lies on a face edge (two faces enumerate its taps along
    /// different axes), in the order added otherwise (every tile storing it
    /// enumerates them in its face's one order).
    fn mean(mut self, on_face_edge: bool) -> Option<Tap> {
        if self.count == 0 {
            return None;
        }
        let terms = &mut self.terms[..self.count];
        if on_face_edge {
            terms.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        }
        let sum = terms.iter().fold(0.0, |s, t| s + t.0);
        Some(Tap { height: sum / f64::from(self.weight), measured: !self.missing && !self.unmeasured })
    }
}

/// The corner rule's taps, as steps (along u, along v) from the corner
/// towards the face's inside (`s`) or past its edge (`-s`), with weights.
const CORNER_TAPS: [((i64, i64), u32); 7] =
    [((0, 0), 3), ((1, 0), 2), ((0, 1), 2), ((-1, 0), 2), ((1, 1), 1), ((-1, 1), 1), ((1, -1), 1)];

/// The kernel's weights in its one tap order (rows along v, each along u).
const KERNEL: [f64; 9] = [1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0];

/// The kernel on nine present taps off a face edge, summed in the tap
/// order: the same operations, so the same bits, as [`Taps::mean`] on them.
fn kernel_in_order(h: &[f64; 9]) -> f64 {
    let mut sum = 0.0;
    for k in 0..9 {
        sum += h[k] * KERNEL[k];
    }
    sum / 16.0
}

impl Level {
    pub(crate) fn new(depth: u8) -> Level {
        Level { depth, tiles: HashMap::default() }
    }

    /// Adds a stored tile; only its heights are kept.
    pub(crate) fn insert(&mut self, mut tile: DecodedTile) {
        debug_assert_eq!(tile.tile.depth(), self.depth);
        (tile.classes, tile.colour) = (None, None);
        self.tiles.insert(tile.tile.identity(), tile);
    }

    fn get(&self, tile: TileAddress) -> Option<&DecodedTile> {
        self.tiles.get(&tile.identity())
    }

    /// The tiles the level holds, in no particular order.
    pub(crate) fn tiles(&self) -> impl Iterator<Item = &DecodedTile> {
        self.tiles.values()
    }

    /// How many tiles the level holds.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.tiles.len()
    }

    fn tap(tile: &DecodedTile, i: i32, j: i32) -> Tap {
        let k = stored_index(i, j);
        Tap { height: tile.dequantise(tile.quantised[k]), measured: tile.sample_measured(k) }
    }

    /// This level's sample at face-grid index `(gi, gj)` of `face`; at most
    /// one index may lie one step past the face (the adjacent face's sample
    /// there). `None` when no tile holding it is present.
    pub(crate) fn value_at(&self, face: Face, gi: i64, gj: i64) -> Option<Tap> {
        let n = CELLS << self.depth;
        let last = (1i64 << self.depth) - 1;
        if !(0..=n).contains(&gi) || !(0..=n).contains(&gj) {
            let (x, y) = ((gi.clamp(0, n) / CELLS).min(last), (gj.clamp(0, n) / CELLS).min(last));
            let tile = TileAddress::new(face.index(), self.depth, x as u32, y as u32).expect("inside the face");
            let s = tile.sample((gi - CELLS * x) as i32, (gj - CELLS * y) as i32);
            return self.value_at(s.face, s.i as i64, s.j as i64);
        }
        if gi % CELLS != 0 && gj % CELLS != 0 {
            let tile = TileAddress::new(face.index(), self.depth, (gi / CELLS) as u32, (gj / CELLS) as u32)
                .expect("inside the face");
            return self.get(tile).map(|t| Level::tap(t, (gi % CELLS) as i32, (gj % CELLS) as i32));
        }
        if gi > 0 && gi < n && gj > 0 && gj < n {
            // Off the face's edges only this face's tiles (at most four)
            // hold it, as `holders` would find them, without its
            // allocations (a window asks this for every sample on a tile
            // boundary).
            return owner_on_boundary(gi, gj, |x, y| {
                let tile = TileAddress::new(face.index(), self.depth, x as u32, y as u32).expect("inside the face");
                self.get(tile).map(|t| (tile.identity(), t))
            });
        }
        holders(self.depth, face, gi, gj).into_iter().find_map(|(t, i, j)| self.get(t).map(|t| Level::tap(t, i, j)))
    }

    /// The filtered sample of the level above at face-grid index `(u, v)` of
    /// `face` (`0 <= u, v <=` that level's cells per face edge), evaluated
    /// from this level alone: the audit's independent evaluation, and the
    /// bake's for apron and cube-corner samples.
    pub(crate) fn filtered(&self, face: Face, u: i64, v: i64) -> Option<Tap> {
        let np = CELLS << (self.depth - 1);
        let (ci, cj) = (2 * u, 2 * v);
        let mut taps = Taps::default();
        let on_face_edge = u == 0 || u == np || v == 0 || v == np;
        if (u == 0 || u == np) && (v == 0 || v == np) {
            let (su, sv) = (if u == 0 { 1 } else { -1 }, if v == 0 { 1 } else { -1 });
            for ((a, b), w) in CORNER_TAPS {
                taps.add(self.value_at(face, ci + su * a, cj + sv * b), w);
            }
            return taps.mean(true);
        }
        // All nine taps inside one tile, off its edges: one lookup.
        let (x, y) = ((ci - 1) / CELLS, (cj - 1) / CELLS);
        let one_tile = ci > 1
            && cj > 1
            && (ci - 1) % CELLS != 0
            && (cj - 1) % CELLS != 0
            && (ci + 1) / CELLS == x
            && (cj + 1) / CELLS == y;
        let tile = one_tile
            .then(|| TileAddress::new(face.index(), self.depth, x as u32, y as u32).ok().and_then(|t| self.get(t)))
            .flatten();
        if let Some(t) = tile {
            let (li, lj) = ((ci - CELLS * x) as i32, (cj - CELLS * y) as i32);
            let at = |k: usize| stored_index(li + (k % 3) as i32 - 1, lj + (k / 3) as i32 - 1);
            let h: [f64; 9] = std::array::from_fn(|k| t.dequantise(t.quantised[at(k)]));
            let measured = (0..9).all(|k| t.sample_measured(at(k)));
            return Some(Tap { height: kernel_in_order(&h), measured });
        }
        for b in -1..=1i64 {
            for a in -1..=1i64 {
                let w = ((2 - a.abs()) * (2 - b.abs())) as u32;
                taps.add(self.value_at(face, ci + a, cj + b), w);
            }
        }
        taps.mean(on_face_edge)
    }

    /// Every stored sample of `parent` (one depth above this level), in
    /// stored order, as the audit evaluates the filter: independently of
    /// [`Level::filter_tile`]. A parent sample whose nine taps lie inside
    /// one child tile, off its edges (all but the child tiles' borders),
    /// takes the kernel separably: a `[1 2 1]` pass along each row of the
    /// child, then one down the columns, over the child's heights dequantised
    /// once; every other sample (tile and face edges, cube corners, apron)
    /// goes through [`Level::filtered`] sample by sample. The separable sum
    /// rounds differently from the bake's one pass (by ~1e-12 of the
    /// heights), well inside the audit's bound.
    pub(crate) fn filtered_separable(&self, parent: TileAddress) -> Vec<Option<f64>> {
        debug_assert_eq!(parent.depth() + 1, self.depth);
        const W: usize = TILE_STORED_SAMPLES as usize;
        let cells = TILE_CELLS as i32;
        let half = cells / 2;
        // Row passes of the four children: rows[q][k] at the child's stored
        // index k holds h[k - 1] + 2 h[k] + h[k + 1] (core columns only).
        let rows: Vec<Option<Vec<f64>>> = parent
            .children()
            .into_iter()
            .flatten()
            .map(|child| {
                self.get(child).map(|t| {
                    let h = t.heights();
                    let mut r = vec![0.0; TILE_STORED_SAMPLE_COUNT];
                    for row in 0..W {
                        for k in row * W + 1..row * W + W - 1 {
                            r[k] = h[k - 1] + 2.0 * h[k] + h[k + 1];
                        }
                    }
                    r
                })
            })
            .collect();
        let mut out = Vec::with_capacity(TILE_STORED_SAMPLE_COUNT);
        for j in -1..=cells + 1 {
            for i in -1..=cells + 1 {
                // Child (qx, qy) and the tap centre's index in it.
                let (qx, qy) = (usize::from(i >= half), usize::from(j >= half));
                let (li, lj) = (2 * i - cells * qx as i32, 2 * j - cells * qy as i32);
                // Off the child's edges (so inside the parent's core too).
                let inside = (2..=cells - 2).contains(&li) && (2..=cells - 2).contains(&lj);
                // `children()` lists the quadrants x first: child 2 qy + qx.
                match rows.get(2 * qy + qx).and_then(Option::as_ref) {
                    Some(r) if inside => {
                        let k = stored_index(li, lj);
                        out.push(Some((r[k - W] + 2.0 * r[k] + r[k + W]) / 16.0));
                    }
                    _ => {
                        let s = parent.sample(i, j);
                        out.push(self.filtered(s.face, s.i as i64, s.j as i64).map(|t| t.height));
                    }
                }
            }
        }
        out
    }

    /// Every stored sample of `parent` (one depth above this level), in
    /// stored order. Core samples read their taps from a window of this
    /// level gathered once (straight from the tile for samples inside one
    /// tile, through the owner rule on tile boundaries); the apron and cube
    /// corners go through [`Level::filtered`], which gives the same bits.
    #[expect(
        clippy::too_many_lines,
        reason = "one pass over a parent's stored samples: core taps from a gathered window, apron and cube corners through Level::filtered; the two paths must give the same bits and are checked side by side"
    )]
    pub(crate) fn filter_tile(&self, parent: TileAddress) -> Vec<Option<Tap>> {
        debug_assert_eq!(parent.depth() + 1, self.depth);
        let face = parent.face();
        let n = CELLS << self.depth;
        // Window over child-grid offsets -1..=257 from the parent's origin.
        const SIDE: usize = 2 * TILE_CELLS as usize + 3;
        let (oi, oj) = (2 * CELLS * i64::from(parent.x()), 2 * CELLS * i64::from(parent.y()));
        let (tx0, ty0) = (2 * i64::from(parent.x()) - 1, 2 * i64::from(parent.y()) - 1);
        // The 16 child tiles the window covers, with their identities.
        let near: Vec<Option<(u64, &DecodedTile)>> = (0..16)
            .map(|k| {
                let (x, y) = (tx0 + k % 4, ty0 + k / 4);
                let inside = (0..n / CELLS).contains(&x) && (0..n / CELLS).contains(&y);
                inside.then(|| TileAddress::new(face.index(), self.depth, x as u32, y as u32).ok()).flatten()
            })
            .map(|t| t.and_then(|t| self.get(t).map(|d| (t.identity(), d))))
            .collect();
        let near_tile = |x: i64, y: i64| near[((x - tx0) + 4 * (y - ty0)) as usize];
        // Heights, and whether each was present (1) and measured (2).
        let mut heights = vec![0.0; SIDE * SIDE];
        let mut state = vec![0u8; SIDE * SIDE];
        // A window sample on a child tile's boundary (the runs below take
        // every interior one): off the face's edges, `value_at`'s owner
        // among the window's tiles, without a lookup by address; on or past
        // a face edge, `value_at` itself.
        let on_boundary = |gi: i64, gj: i64| -> Option<Tap> {
            if gi > 0 && gi < n && gj > 0 && gj < n {
                owner_on_boundary(gi, gj, near_tile)
            } else {
                self.value_at(face, gi, gj)
            }
        };
        let last_a = SIDE as i64 - 2;
        let mut w = 0;
        for b in -1..=last_a {
            let gj = oj + b;
            let interior_row = gj > 0 && gj < n && gj % CELLS != 0;
            let mut a = -1;
            while a <= last_a {
                let gi = oi + a;
                if interior_row && gi > 0 && gi < n && gi % CELLS != 0 {
                    // A run of interior samples of one child tile (up to its
                    // next boundary column), read along its stored row.
                    let run = ((gi / CELLS + 1) * CELLS).min(n).min(oi + last_a + 1) - gi;
                    if let Some((_, t)) = near_tile(gi / CELLS, gj / CELLS) {
                        let first = stored_index((gi % CELLS) as i32, (gj % CELLS) as i32);
                        let quantised = &t.quantised[first..first + run as usize];
                        for (k, &q) in quantised.iter().enumerate() {
                            let measured = 1 + u8::from(t.sample_measured(first + k));
                            (heights[w + k], state[w + k]) = (t.dequantise(q), measured);
                        }
                    }
                    w += run as usize;
                    a += run;
                    continue;
                }
                if let Some(t) = on_boundary(gi, gj) {
                    (heights[w], state[w]) = (t.height, 1 + u8::from(t.measured));
                }
                w += 1;
                a += 1;
            }
        }
        let np = CELLS << parent.depth();
        let cells = TILE_CELLS as i32;
        let (pu, pv) = (CELLS * i64::from(parent.x()), CELLS * i64::from(parent.y()));
        let mut out = Vec::with_capacity(TILE_STORED_SAMPLE_COUNT);
        for j in -1..=cells + 1 {
            for i in -1..=cells + 1 {
                let core = (0..=cells).contains(&i) && (0..=cells).contains(&j);
                let (u, v) = (pu + i64::from(i), pv + i64::from(j));
                if !core || ((u == 0 || u == np) && (v == 0 || v == np)) {
                    let s = parent.sample(i, j);
                    out.push(self.filtered(s.face, s.i as i64, s.j as i64));
                    continue;
                }
                // Window index of tap (a, b) = (-1, -1): child (2i - 1, 2j - 1).
                let first = (2 * j) as usize * SIDE + (2 * i) as usize;
                let index = |k: usize| first + (k / 3) * SIDE + k % 3;
                let on_face_edge = u == 0 || u == np || v == 0 || v == np;
                if !on_face_edge && (0..9).all(|k| state[index(k)] > 0) {
                    let h: [f64; 9] = std::array::from_fn(|k| heights[index(k)]);
                    let measured = (0..9).all(|k| state[index(k)] == 2);
                    out.push(Some(Tap { height: kernel_in_order(&h), measured }));
                    continue;
                }
                let mut taps = Taps::default();
                for (k, &weight) in KERNEL.iter().enumerate() {
                    let at = index(k);
                    let tap = (state[at] > 0).then(|| Tap { height: heights[at], measured: state[at] == 2 });
                    taps.add(tap, weight as u32);
                }
                out.push(taps.mean(on_face_edge));
            }
        }
        debug_assert_eq!(out.len(), (TILE_STORED_SAMPLES * TILE_STORED_SAMPLES) as usize);
        out
    }
}

/// The child-level tiles (one depth below `parent`) whose samples any
/// stored sample of `parent` can read: its four children and two rings of
/// edge neighbours around them (so the diagonal and cube-corner tiles too),
/// found through `neighbour`, which crosses face edges.
pub(crate) fn needed_children(parent: TileAddress) -> BTreeSet<TileAddress> {
    let children: Vec<TileAddress> = parent.children().into_iter().flatten().collect();
    let mut needed: BTreeSet<TileAddress> = children.iter().copied().collect();
    let mut ring = children;
    for _ in 0..2 {
        let next: Vec<TileAddress> =
            ring.iter().flat_map(|t| Edge::ALL.map(|e| t.neighbour(e).address)).filter(|t| needed.insert(*t)).collect();
        ring = next;
    }
    needed
}

/// Runs `each` over `parents` (ascending keys, one depth) in windows, each
/// with a [`Level`] of every child tile its parents can read, loaded by
/// `load` (`None`: absent). A window grows while its level stays within
/// `held` tiles (a single parent's needs always fit); tiles the next window
/// needs too are carried over, the rest dropped before anything new is
/// loaded, so at most `held` tiles are decoded at once. Loads run in
/// parallel on the caller's rayon pool.
pub(crate) fn for_each_window<E: Send>(
    parents: &[TileAddress],
    held: usize,
    load: impl Fn(TileAddress) -> Result<Option<DecodedTile>, E> + Sync,
    mut each: impl FnMut(&[TileAddress], &Level) -> Result<(), E>,
) -> Result<(), E> {
    let Some(first) = parents.first() else { return Ok(()) };
    let depth = first.depth() + 1;
    let mut level = Level::new(depth);
    let mut start = 0;
    while start < parents.len() {
        let mut needed = needed_children(parents[start]);
        let mut end = start + 1;
        while end < parents.len() {
            let more = needed_children(parents[end]);
            if needed.len() + more.difference(&needed).count() > held {
                break;
            }
            needed.extend(more);
            end += 1;
        }
        let mut next = Level::new(depth);
        for &tile in &needed {
            if let Some(t) = level.tiles.remove(&tile.identity()) {
                next.tiles.insert(tile.identity(), t);
            }
        }
        drop(level);
        let missing: Vec<TileAddress> = needed.into_iter().filter(|t| next.get(*t).is_none()).collect();
        let loaded: Vec<Option<DecodedTile>> = missing.par_iter().map(|&t| load(t)).collect::<Result<_, _>>()?;
        loaded.into_iter().flatten().for_each(|t| next.insert(t));
        each(&parents[start..end], &next)?;
        level = next;
        start = end;
    }
    Ok(())
}

#[cfg(test)]
#[path = "filter_tests.rs"]
mod tests;
