//! Tile addresses on the cube-sphere quadtree, their packed keys, and the
//! sample layout every tile carries.
//!
//! The key decision here is the key order: `(depth, face, Hilbert index)`.
//! Depth-major puts every coarse tile at the front of a pack (what a viewer
//! needs first, and what a ranged reader fetches in one request), and the
//! Hilbert curve within a face keeps tiles that are near on the ground near in
//! the file with no long jumps (Morton order jumps across a quadrant at every
//! power of two). The curve refines itself: the four children of the tile with
//! Hilbert index `h` have indices `4h..4h+4`, so siblings are contiguous.
//!
//! Key bit layout (u64, most significant first):
//!
//! ```text
//!  63    59 58  56 55                                              0
//! +--------+------+-------------------------------------------------+
//! | depth  | face | Hilbert index of (x, y) at `depth`, right-aligned|
//! | 5 bits |3 bits| 2*depth bits used, the rest zero (56 bits)       |
//! +--------+------+-------------------------------------------------+
//! ```

use std::fmt;
use std::str::FromStr;

use crate::face::{Edge, Face, IntAxis, dot, neg};

/// Deepest addressable level. Depth 28 keeps the key in 64 bits; on Earth a
/// depth-28 tile is about 4 cm across with 0.3 mm between samples.
pub const MAX_DEPTH: u8 = 28;

/// Cells along a tile edge between its core samples.
pub const TILE_CELLS: u32 = 128;
/// Core samples along a tile edge (cells + 1: the edges are shared).
pub const TILE_CORE_SAMPLES: u32 = TILE_CELLS + 1;
/// Samples of neighbour data stored around the core on every side.
pub const TILE_APRON: u32 = 1;
/// Samples along a stored tile edge: core plus apron on both sides (131).
pub const TILE_STORED_SAMPLES: u32 = TILE_CORE_SAMPLES + 2 * TILE_APRON;
/// Samples in a stored tile (131 x 131).
pub const TILE_STORED_SAMPLE_COUNT: usize = (TILE_STORED_SAMPLES * TILE_STORED_SAMPLES) as usize;

/// Why an address, key or text form was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    #[error("face {face} is out of range (faces are 0..6)")]
    FaceOutOfRange { face: u8 },
    #[error("depth {depth} is deeper than the deepest addressable level {max}")]
    DepthTooDeep { depth: u8, max: u8 },
    #[error("cell ({x}, {y}) is outside a depth-{depth} face of {size}x{size} tiles")]
    CellOutOfRange { depth: u8, x: u32, y: u32, size: u32 },
    #[error("tile key {key:#018x} is not valid: {reason}")]
    InvalidKey { key: u64, reason: &'static str },
    #[error("'{text}' is not a tile address (expected face/depth/x/y, e.g. 3/7/45/102): {reason}")]
    Parse { text: String, reason: String },
}

/// A tile: a face, a depth and a cell of the `2^depth x 2^depth` grid on that
/// face. Valid by construction.
///
/// The text form is `face/depth/x/y`, and the key orders tiles as a pack
/// stores them (the test vectors of docs/design/conventions.md):
///
/// ```
/// use planet_geo::TileAddress;
///
/// let tile: TileAddress = "3/7/45/102".parse().unwrap();
/// assert_eq!(tile.key().raw(), 0x3b00_0000_0000_186d);
/// assert_eq!(tile.to_string(), "3/7/45/102");
/// assert!("6/0/0/0".parse::<TileAddress>().is_err(), "there are six faces, 0..=5");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TileAddress {
    face: Face,
    depth: u8,
    x: u32,
    y: u32,
}

/// A tile across one edge of another, with how the two share that edge.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Neighbour {
    pub address: TileAddress,
    /// The edge of `address` that touches the asking tile.
    pub shared_edge: Edge,
    /// True when the coordinate along the shared edge runs the opposite way on
    /// the neighbour (only ever across a cube-face edge).
    pub reversed: bool,
}

/// Where a sample lies on its face's global grid at one resolution: a face
/// edge holds `cells_per_face_edge + 1` samples, indices `0..=cells`.
/// Samples on a shared face edge exist on both faces; either spelling names
/// the same point.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct FaceSample {
    pub face: Face,
    /// log2 of the cells along a face edge at this resolution (depth + 7).
    pub cells_log2: u8,
    pub i: u64,
    pub j: u64,
}

impl FaceSample {
    /// The unwarped face-grid coordinates (s, t) in [-1, 1] of this sample.
    /// Exact: an integer below 2^53 scaled by a power of two, minus one.
    pub fn grid_coordinates(&self) -> (f64, f64) {
        let scale = (2.0f64).powi(1 - i32::from(self.cells_log2));
        (self.i as f64 * scale - 1.0, self.j as f64 * scale - 1.0)
    }
}

impl TileAddress {
    /// A validated address.
    pub fn new(face: u8, depth: u8, x: u32, y: u32) -> Result<Self, AddressError> {
        let face = Face::new(face).ok_or(AddressError::FaceOutOfRange { face })?;
        if depth > MAX_DEPTH {
            return Err(AddressError::DepthTooDeep { depth, max: MAX_DEPTH });
        }
        let size = 1u32 << depth;
        if x >= size || y >= size {
            return Err(AddressError::CellOutOfRange { depth, x, y, size });
        }
        Ok(TileAddress { face, depth, x, y })
    }

    /// The depth-0 tile that is a whole face.
    pub const fn root(face: Face) -> Self {
        TileAddress { face, depth: 0, x: 0, y: 0 }
    }

    /// The six roots: together they cover the body exactly once.
    pub fn roots() -> [TileAddress; 6] {
        Face::ALL.map(TileAddress::root)
    }

    pub const fn face(self) -> Face {
        self.face
    }
    pub const fn depth(self) -> u8 {
        self.depth
    }
    pub const fn x(self) -> u32 {
        self.x
    }
    pub const fn y(self) -> u32 {
        self.y
    }

    /// Tiles along a face edge at this tile's depth.
    pub const fn tiles_per_face_edge(self) -> u32 {
        1 << self.depth
    }

    pub fn parent(self) -> Option<TileAddress> {
        (self.depth > 0).then(|| TileAddress { face: self.face, depth: self.depth - 1, x: self.x >> 1, y: self.y >> 1 })
    }

    /// Which quarter of its parent this tile is: `dx + 2 * dy` (0..4).
    pub const fn quadrant(self) -> u8 {
        ((self.x & 1) + 2 * (self.y & 1)) as u8
    }

    /// The four children in quadrant order (`dx + 2 * dy`), or `None` at
    /// [`MAX_DEPTH`].
    pub fn children(self) -> Option<[TileAddress; 4]> {
        (self.depth < MAX_DEPTH).then(|| {
            [0u32, 1, 2, 3].map(|q| TileAddress {
                face: self.face,
                depth: self.depth + 1,
                x: 2 * self.x + (q & 1),
                y: 2 * self.y + (q >> 1),
            })
        })
    }

    /// This tile's ancestor (or itself) at `depth`, if `depth <= self.depth()`.
    pub fn ancestor_at(self, depth: u8) -> Option<TileAddress> {
        (depth <= self.depth).then(|| {
            let shift = self.depth - depth;
            TileAddress { face: self.face, depth, x: self.x >> shift, y: self.y >> shift }
        })
    }

    /// True if `self` is `other` or one of its ancestors.
    pub fn contains(self, other: TileAddress) -> bool {
        other.ancestor_at(self.depth) == Some(self)
    }

    /// The tile across `edge`, on this face or the adjacent one.
    pub fn neighbour(self, edge: Edge) -> Neighbour {
        let last = self.tiles_per_face_edge() - 1;
        let same_face = |x, y| Neighbour {
            address: TileAddress { face: self.face, depth: self.depth, x, y },
            shared_edge: edge.opposite(),
            reversed: false,
        };
        match edge {
            Edge::MinU if self.x > 0 => return same_face(self.x - 1, self.y),
            Edge::MaxU if self.x < last => return same_face(self.x + 1, self.y),
            Edge::MinV if self.y > 0 => return same_face(self.x, self.y - 1),
            Edge::MaxV if self.y < last => return same_face(self.x, self.y + 1),
            _ => {}
        }
        let crossing = face_edge_crossing(self.face, edge);
        let along = if edge.is_u_edge() { self.y } else { self.x };
        let along = if crossing.reversed { last - along } else { along };
        let across = match crossing.edge {
            Edge::MinU | Edge::MinV => 0,
            Edge::MaxU | Edge::MaxV => last,
        };
        let (x, y) = if crossing.edge.is_u_edge() { (across, along) } else { (along, across) };
        Neighbour {
            address: TileAddress { face: crossing.face, depth: self.depth, x, y },
            shared_edge: crossing.edge,
            reversed: crossing.reversed,
        }
    }

    /// A cheap unique integer for in-memory maps: depth, face, x and y packed
    /// as they are (5 + 3 + 28 + 28 bits). Unlike [`TileAddress::key`] it
    /// costs no Hilbert walk, and it says nothing about file order.
    pub const fn identity(self) -> u64 {
        ((self.depth as u64) << 59) | ((self.face.index() as u64) << 56) | ((self.x as u64) << 28) | self.y as u64
    }

    /// The packed key (see the module documentation for the bit layout).
    pub fn key(self) -> TileKey {
        let h = hilbert_index(self.depth, self.x, self.y);
        TileKey((u64::from(self.depth) << 59) | (u64::from(self.face.index()) << 56) | h)
    }

    /// The unwarped face-grid rectangle this tile covers: (s0, t0, s1, t1).
    pub fn grid_bounds(self) -> (f64, f64, f64, f64) {
        let size = 2.0 / f64::from(self.tiles_per_face_edge());
        let s0 = f64::from(self.x) * size - 1.0;
        let t0 = f64::from(self.y) * size - 1.0;
        (s0, t0, s0 + size, t0 + size)
    }

    /// The unwarped face-grid coordinates of this tile's centre.
    pub fn grid_centre(self) -> (f64, f64) {
        let (s0, t0, s1, t1) = self.grid_bounds();
        (0.5 * (s0 + s1), 0.5 * (t0 + t1))
    }

    /// Where stored sample `(i, j)` lies, for `i, j` in `-1..=129` (core
    /// samples are `0..=128`; -1 and 129 are the apron). `i` runs with `u`,
    /// `j` with `v`.
    ///
    /// An apron sample past a face edge is the adjacent face's canonical grid
    /// sample one step beyond the shared edge. At a cube corner, where three
    /// faces meet and no diagonal neighbour exists, the corner apron sample
    /// repeats the corner sample itself.
    pub fn sample(self, i: i32, j: i32) -> FaceSample {
        let lo = -(TILE_APRON as i32);
        let hi = TILE_CELLS as i32 + TILE_APRON as i32;
        assert!((lo..=hi).contains(&i) && (lo..=hi).contains(&j), "sample ({i}, {j}) is outside the stored tile");
        let cells_log2 = self.depth + 7;
        let n = i64::from(TILE_CELLS) << self.depth;
        let gi = i64::from(self.x) * i64::from(TILE_CELLS) + i64::from(i);
        let gj = i64::from(self.y) * i64::from(TILE_CELLS) + i64::from(j);
        let inside = |g: i64| (0..=n).contains(&g);
        let on_face = |face, gi: i64, gj: i64| FaceSample { face, cells_log2, i: gi as u64, j: gj as u64 };
        match (inside(gi), inside(gj)) {
            (true, true) => on_face(self.face, gi, gj),
            (false, false) => on_face(self.face, gi.clamp(0, n), gj.clamp(0, n)),
            (gi_inside, _) => {
                let (edge, past, along) = match gi_inside {
                    false if gi < 0 => (Edge::MinU, -gi, gj),
                    false => (Edge::MaxU, gi - n, gj),
                    true if gj < 0 => (Edge::MinV, -gj, gi),
                    true => (Edge::MaxV, gj - n, gi),
                };
                let crossing = face_edge_crossing(self.face, edge);
                let along = if crossing.reversed { n - along } else { along };
                let across = match crossing.edge {
                    Edge::MinU | Edge::MinV => past,
                    Edge::MaxU | Edge::MaxV => n - past,
                };
                if crossing.edge.is_u_edge() {
                    on_face(crossing.face, across, along)
                } else {
                    on_face(crossing.face, along, across)
                }
            }
        }
    }
}

/// How a face edge continues onto the adjacent face.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FaceEdgeCrossing {
    face: Face,
    edge: Edge,
    reversed: bool,
}

/// Derives the adjacent face across `edge` from the integer face bases.
///
/// The edge's points are `normal + w + t * along` for `t` in [-1, 1], where
/// `w` is the outward face axis. The adjacent face is the one whose normal is
/// `w`; projecting the edge onto its (u, v) axes gives which of its edges is
/// shared and whether `t` runs forwards or backwards there.
fn face_edge_crossing(face: Face, edge: Edge) -> FaceEdgeCrossing {
    let b = face.basis();
    let (outward, along): (IntAxis, IntAxis) = match edge {
        Edge::MinU => (neg(b.u), b.v),
        Edge::MaxU => (b.u, b.v),
        Edge::MinV => (neg(b.v), b.u),
        Edge::MaxV => (b.v, b.u),
    };
    let next = Face::with_normal(outward);
    let nb = next.basis();
    let (on_u, on_v) = (dot(b.normal, nb.u), dot(b.normal, nb.v));
    let (edge, sign) = match (on_u, on_v) {
        (-1, 0) => (Edge::MinU, dot(along, nb.v)),
        (1, 0) => (Edge::MaxU, dot(along, nb.v)),
        (0, -1) => (Edge::MinV, dot(along, nb.u)),
        (0, 1) => (Edge::MaxV, dot(along, nb.u)),
        _ => unreachable!("adjacent faces share exactly one edge"),
    };
    FaceEdgeCrossing { face: next, edge, reversed: sign < 0 }
}

impl fmt::Display for TileAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}/{}", self.face, self.depth, self.x, self.y)
    }
}

impl fmt::Debug for TileAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TileAddress({self})")
    }
}

impl FromStr for TileAddress {
    type Err = AddressError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let parse_error = |reason: String| AddressError::Parse { text: text.to_owned(), reason };
        let parts: Vec<&str> = text.split('/').collect();
        if parts.len() != 4 {
            return Err(parse_error(format!("{} fields, not 4", parts.len())));
        }
        let field = |index: usize, name: &str| -> Result<u32, AddressError> {
            let part = parts[index];
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(parse_error(format!("{name} '{part}' is not a decimal number")));
            }
            part.parse::<u32>().map_err(|_| parse_error(format!("{name} '{part}' is too large")))
        };
        let face = field(0, "face")?;
        let depth = field(1, "depth")?;
        let (x, y) = (field(2, "x")?, field(3, "y")?);
        let face = u8::try_from(face).map_err(|_| AddressError::FaceOutOfRange { face: u8::MAX })?;
        let depth = u8::try_from(depth).map_err(|_| AddressError::DepthTooDeep { depth: u8::MAX, max: MAX_DEPTH })?;
        TileAddress::new(face, depth, x, y)
    }
}

impl PartialOrd for TileAddress {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Addresses order as their keys do.
impl Ord for TileAddress {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

/// A tile's packed key. Valid by construction; order is the file order.
/// A hasher for maps keyed by tiles that selection and residency consult
/// thousands of times a frame: one multiply and rotate per word (the
/// Firefox hasher's step), where the default SipHash costs several times
/// more. Tile keys come from the program, never from an adversary, so a
/// keyed hash buys nothing here.
#[derive(Clone, Copy, Debug, Default)]
pub struct TileHasher(u64);

impl TileHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl std::hash::Hasher for TileHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.add(u64::from(b));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
}

/// A map keyed by tiles (addresses or keys), hashed by [`TileHasher`].
pub type TileMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<TileHasher>>;

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TileKey(u64);

impl TileKey {
    /// Validates a raw key: depth within range, face 0..6, the Hilbert index
    /// inside `4^depth`.
    pub fn from_raw(key: u64) -> Result<TileKey, AddressError> {
        TileKey(key).checked_address().map(|_| TileKey(key))
    }

    pub const fn raw(self) -> u64 {
        self.0
    }

    /// The tile's depth: keys order by depth first, then face, then
    /// Hilbert index.
    pub const fn depth(self) -> u8 {
        (self.0 >> 59) as u8
    }

    pub fn address(self) -> TileAddress {
        self.checked_address().expect("a TileKey is valid by construction")
    }

    fn checked_address(self) -> Result<TileAddress, AddressError> {
        let key = self.0;
        let invalid = |reason| AddressError::InvalidKey { key, reason };
        let depth = (key >> 59) as u8;
        if depth > MAX_DEPTH {
            return Err(invalid("depth field exceeds the deepest addressable level"));
        }
        let face = Face::new(((key >> 56) & 7) as u8).ok_or(invalid("face field is not 0..6"))?;
        let index = key & ((1u64 << 56) - 1);
        if index >> (2 * u32::from(depth)) != 0 {
            return Err(invalid("Hilbert index does not fit the depth"));
        }
        let (x, y) = hilbert_cell(depth, index);
        Ok(TileAddress { face, depth, x, y })
    }
}

impl fmt::Debug for TileKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TileKey({:#018x} = {})", self.0, self.address())
    }
}

/// Hilbert index of cell (x, y) on a `2^depth` grid. The curve starts at
/// (0, 0) and ends at (2^depth - 1, 0) at every depth, which is what makes a
/// parent's index the top bits of its children's.
pub fn hilbert_index(depth: u8, x: u32, y: u32) -> u64 {
    let (mut x, mut y) = (x, y);
    let mut index = 0u64;
    let mut s = (1u32 << depth) >> 1;
    while s > 0 {
        let rx = u32::from(x & s != 0);
        let ry = u32::from(y & s != 0);
        index += u64::from(s) * u64::from(s) * u64::from((3 * rx) ^ ry);
        hilbert_rotate(s, &mut x, &mut y, rx, ry);
        s >>= 1;
    }
    index
}

/// The cell with Hilbert index `index` on a `2^depth` grid.
pub fn hilbert_cell(depth: u8, index: u64) -> (u32, u32) {
    let (mut x, mut y) = (0u32, 0u32);
    let mut t = index;
    let n = 1u64 << depth;
    let mut s = 1u64;
    while s < n {
        let rx = (1 & (t / 2)) as u32;
        let ry = (1 & (t ^ u64::from(rx))) as u32;
        hilbert_rotate(s as u32, &mut x, &mut y, rx, ry);
        x += s as u32 * rx;
        y += s as u32 * ry;
        t /= 4;
        s *= 2;
    }
    (x, y)
}

fn hilbert_rotate(n: u32, x: &mut u32, y: &mut u32, rx: u32, ry: u32) {
    if ry == 0 {
        if rx == 1 {
            // Reflect within the current n x n block; bits above it are
            // ignored by every later step, so wrapping is harmless.
            *x = (n.wrapping_sub(1)).wrapping_sub(*x);
            *y = (n.wrapping_sub(1)).wrapping_sub(*y);
        }
        std::mem::swap(x, y);
    }
}
