//! Tile payloads: quantisation, the prediction transform and zstd.
//!
//! Elevations are stored as u16 fractions of the tile's own range, so the
//! quantisation step is the tile's relief / 65535 and the bake's accuracy
//! claim is a number. Before compression each plane goes through the
//! gradient predictor `left + up - upleft` (exact, modular) and zig-zag
//! coding, and 16-bit residuals are split into a low-byte plane and a
//! high-byte plane: smooth ground leaves small residuals, the high plane is
//! then nearly all zero, and zstd takes both for almost nothing. The
//! transform is a pure function of the samples, so equal tiles give equal
//! bytes on any thread.

use crate::error::PackError;
use crate::format::{Codec, IndexEntry, VOID_BLOCK_LENGTH};
use planet_geo::address::{TILE_STORED_SAMPLE_COUNT, TILE_STORED_SAMPLES, TileAddress};

const WIDTH: usize = TILE_STORED_SAMPLES as usize;
const N: usize = TILE_STORED_SAMPLE_COUNT;

/// What a writer is given for one tile: 131x131 samples in stored order
/// (row `j` = -1..=129 along v, column `i` = -1..=129 along u; index
/// `(j + 1) * 131 + (i + 1)`).
#[derive(Clone, Copy, Debug)]
pub struct TileContent<'a> {
    /// Elevations in metres; all finite.
    pub heights: &'a [f64],
    /// One surface class per sample (codec >= 1).
    pub classes: Option<&'a [u8]>,
    /// Red, green, blue per sample (codec 2).
    pub colour: Option<&'a [[u8; 3]]>,
    /// Metres this tile's surface departs from the finest data it stands for.
    pub geometric_error: f64,
    /// Every sample measured at this depth (voids aside, where `voids`
    /// names them).
    pub measured: bool,
    /// Which samples were voids the bake filled, and how (version 5);
    /// `None`, or a mask of all false, for a tile without voids, which
    /// stores no void block.
    pub voids: Option<TileVoids<'a>>,
}

/// How a bake filled the voids of its DEM (`--void-value`, or from the
/// samples around them). Coarse samples filtered from filled ones were
/// filled the same way.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum VoidFill {
    /// From the DEM's measured values around the void (the bake's default).
    Surrounding,
    /// Every void took this elevation (metres).
    Value(f32),
}

impl std::fmt::Display for VoidFill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VoidFill::Surrounding => f.write_str("filled from the DEM around it"),
            VoidFill::Value(v) => write!(f, "filled with the void value {v} m"),
        }
    }
}

/// A tile's voids as a writer is given them.
#[derive(Clone, Copy, Debug)]
pub struct TileVoids<'a> {
    pub fill: VoidFill,
    /// Per stored sample, whether it was a void.
    pub samples: &'a [bool],
}

/// A tile's voids as a reader decodes them.
#[derive(Clone, Debug, PartialEq)]
pub struct Voids {
    pub fill: VoidFill,
    /// Per stored sample, whether it was a void (at least one is).
    pub samples: Vec<bool>,
}

impl Voids {
    /// As a writer takes them (to store the same block again).
    pub fn as_tile_voids(&self) -> TileVoids<'_> {
        TileVoids { fill: self.fill, samples: &self.samples }
    }
}

/// A tile ready to place: its compressed payload and the index fields the
/// writer needs (offset is filled in at placement).
#[derive(Clone, Debug, PartialEq)]
pub struct EncodedTile {
    pub tile: TileAddress,
    pub payload: Vec<u8>,
    pub checksum: u32,
    pub min_elevation: f32,
    pub max_elevation: f32,
    pub geometric_error: f32,
    pub measured: bool,
    /// The payload ends with a void mask.
    pub voids: bool,
}

impl EncodedTile {
    /// The index entry of this tile with its payload at `payload_offset`.
    pub fn entry_at(&self, payload_offset: u64) -> IndexEntry {
        IndexEntry {
            key: self.tile.key(),
            payload_offset,
            payload_length: self.payload.len() as u32,
            payload_checksum: self.checksum,
            min_elevation: self.min_elevation,
            max_elevation: self.max_elevation,
            geometric_error: self.geometric_error,
            measured: self.measured,
            voids: self.voids,
        }
    }
}

/// A decoded tile: quantised elevations with their range, and the optional
/// class and colour blocks.
#[derive(Clone, Debug, PartialEq)]
pub struct DecodedTile {
    pub tile: TileAddress,
    pub min_elevation: f32,
    pub max_elevation: f32,
    pub quantised: Vec<u16>,
    pub classes: Option<Vec<u8>>,
    pub colour: Option<Vec<[u8; 3]>>,
    pub measured: bool,
    /// Which samples were voids the bake filled, and how; `None` where the
    /// tile stores no void block.
    pub voids: Option<Voids>,
}

impl DecodedTile {
    /// The elevation (metres) a stored value stands for:
    /// `min + (max - min) * q / 65535`, evaluated in f64.
    pub fn dequantise(&self, q: u16) -> f64 {
        let (min, max) = (f64::from(self.min_elevation), f64::from(self.max_elevation));
        min + (max - min) * (f64::from(q) / 65535.0)
    }

    /// Elevation of stored sample `(i, j)`, `i, j` in -1..=129.
    pub fn elevation(&self, i: i32, j: i32) -> f64 {
        self.dequantise(self.quantised[stored_index(i, j)])
    }

    /// All 131x131 elevations in metres, stored order.
    pub fn heights(&self) -> Vec<f64> {
        self.quantised.iter().map(|&q| self.dequantise(q)).collect()
    }

    /// Whether stored sample `k` (stored order) was measured: the tile is
    /// and the sample was not a void.
    pub fn sample_measured(&self, k: usize) -> bool {
        self.measured && !self.is_void(k)
    }

    /// Whether stored sample `k` (stored order) was a void the bake filled.
    pub fn is_void(&self, k: usize) -> bool {
        self.voids.as_ref().is_some_and(|v| v.samples[k])
    }

    /// The quantisation step: the tile's relief over 65535.
    pub fn quantisation_step(&self) -> f64 {
        (f64::from(self.max_elevation) - f64::from(self.min_elevation)) / 65535.0
    }
}

/// Index of stored sample `(i, j)`, `i, j` in -1..=129.
pub fn stored_index(i: i32, j: i32) -> usize {
    (j + 1) as usize * WIDTH + (i + 1) as usize
}

fn round_down_f32(v: f64) -> f32 {
    let f = v as f32;
    if f64::from(f) > v { f.next_down() } else { f }
}

fn round_up_f32(v: f64) -> f32 {
    let f = v as f32;
    if f64::from(f) < v { f.next_up() } else { f }
}

/// Quantises, transforms and compresses one tile for `codec`.
pub fn encode_tile(
    tile: TileAddress,
    codec: Codec,
    content: &TileContent<'_>,
    level: i32,
) -> Result<EncodedTile, PackError> {
    encode_in_range(tile, codec, content, level, None)
}

/// Like [`encode_tile`], but quantises against `range` (a tile's stored
/// `min_elevation, max_elevation`) when every height lies inside it, so a
/// sample whose height is the decoded value of that range decodes to the
/// very same value again (an in-place patch keeps unchanged samples bit for
/// bit). When a height falls outside `range`, the tile's own range is used,
/// as [`encode_tile`] would.
pub fn encode_tile_keeping_range(
    tile: TileAddress,
    codec: Codec,
    content: &TileContent<'_>,
    level: i32,
    range: (f32, f32),
) -> Result<EncodedTile, PackError> {
    encode_in_range(tile, codec, content, level, Some(range))
}

fn encode_in_range(
    tile: TileAddress,
    codec: Codec,
    content: &TileContent<'_>,
    level: i32,
    keep: Option<(f32, f32)>,
) -> Result<EncodedTile, PackError> {
    let bad = |reason: String| PackError::BadContent { tile, reason };
    if content.heights.len() != N {
        return Err(bad(format!("{} heights, expected {N} (131 x 131)", content.heights.len())));
    }
    if let Some(position) = content.heights.iter().position(|h| !h.is_finite()) {
        let (i, j) = (position % WIDTH, position / WIDTH);
        return Err(bad(format!(
            "height at stored sample ({}, {}) is {}",
            i as i32 - 1,
            j as i32 - 1,
            content.heights[position]
        )));
    }
    if !(content.geometric_error.is_finite() && content.geometric_error >= 0.0) {
        return Err(bad(format!("geometric error {} must be finite and >= 0", content.geometric_error)));
    }
    let classes = codec_block(codec, codec.has_classes(), content.classes, ("classes", "class")).map_err(bad)?;
    let colour = codec_block(codec, codec.has_colour(), content.colour, ("colours", "colour")).map_err(bad)?;
    let voids = stored_voids(content.voids).map_err(bad)?;

    let (lo, hi) =
        content.heights.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &h| (lo.min(h), hi.max(h)));
    let (min, max) = match keep {
        Some((min, max)) if f64::from(min) <= lo && hi <= f64::from(max) => (min, max),
        _ => (round_down_f32(lo), round_up_f32(hi)),
    };
    if !(min.is_finite() && max.is_finite()) {
        return Err(bad(format!("elevation range {lo} .. {hi} does not fit in f32")));
    }
    let range = f64::from(max) - f64::from(min);
    let quantised: Vec<u16> = content
        .heights
        .iter()
        .map(|&h| if range > 0.0 { rounded_u16((h - f64::from(min)) / range * 65535.0) } else { 0 })
        .collect();

    let mut raw = Vec::with_capacity(codec.decoded_length());
    let residuals = predict(&quantised, 0xffff);
    raw.extend(residuals.iter().map(|&r| r as u8));
    raw.extend(residuals.iter().map(|&r| (r >> 8) as u8));
    if let Some(classes) = classes {
        raw.extend_from_slice(classes);
    }
    if let Some(colour) = colour {
        for channel in 0..3 {
            let plane: Vec<u16> = colour.iter().map(|c| u16::from(c[channel])).collect();
            raw.extend(predict(&plane, 0xff).iter().map(|&r| r as u8));
        }
    }
    if let Some(voids) = voids {
        raw.extend_from_slice(&void_block(voids));
    }
    debug_assert_eq!(raw.len(), codec.decoded_length_with(voids.is_some()));
    let payload = compress(&raw, level).map_err(|e| bad(format!("zstd compression failed: {e}")))?;
    Ok(EncodedTile {
        tile,
        checksum: crc32fast::hash(&payload),
        payload,
        min_elevation: min,
        max_elevation: max,
        geometric_error: round_up_f32(content.geometric_error),
        measured: content.measured,
        voids: voids.is_some(),
    })
}

/// Fill code 0: from the samples around the void; 1: the void value.
const FILL_SURROUNDING: u8 = 0;
const FILL_VALUE: u8 = 1;

/// A block the codec stores (`stored`) as the content gives it, one value
/// per sample; `None` where the codec stores none. `names`: the values'
/// and the block's names, for the errors.
fn codec_block<'a, T>(
    codec: Codec,
    stored: bool,
    given: Option<&'a [T]>,
    (values, block): (&str, &str),
) -> Result<Option<&'a [T]>, String> {
    match (stored, given) {
        (true, Some(c)) if c.len() == N => Ok(Some(c)),
        (true, Some(c)) => Err(format!("{} {values}, expected {N}", c.len())),
        (true, None) => Err(format!("codec {} needs a {block} block", codec.code())),
        (false, _) => Ok(None),
    }
}

/// The voids a tile stores: none for a mask of all false (no block), or
/// why they break the block's rules.
fn stored_voids(voids: Option<TileVoids<'_>>) -> Result<Option<TileVoids<'_>>, String> {
    match voids {
        Some(v) if v.samples.len() != N => Err(format!("{} void flags, expected {N}", v.samples.len())),
        Some(TileVoids { fill: VoidFill::Value(v), .. }) if !v.is_finite() => {
            Err(format!("void value {v} must be finite"))
        }
        Some(v) if v.samples.contains(&true) => Ok(Some(v)),
        _ => Ok(None),
    }
}

/// A void block's bytes: the fill code, the void value (f32, 0 unless code
/// 1), then the mask: bit `k % 8` of byte `k / 8` is sample `k`.
fn void_block(voids: TileVoids<'_>) -> Vec<u8> {
    let mut bytes = vec![0u8; VOID_BLOCK_LENGTH];
    let (code, value) = match voids.fill {
        VoidFill::Surrounding => (FILL_SURROUNDING, 0.0f32),
        VoidFill::Value(v) => (FILL_VALUE, v),
    };
    bytes[0] = code;
    bytes[1..5].copy_from_slice(&value.to_le_bytes());
    for (k, _) in voids.samples.iter().enumerate().filter(|&(_, &v)| v) {
        bytes[5 + k / 8] |= 1 << (k % 8);
    }
    bytes
}

/// The void block's fields, or why they break its rules.
fn read_void_block(bytes: &[u8]) -> Result<Voids, String> {
    let value = f32::from_le_bytes(bytes[1..5].try_into().expect("four bytes"));
    let fill = match bytes[0] {
        FILL_SURROUNDING if value.to_bits() == 0 => VoidFill::Surrounding,
        FILL_VALUE if value.is_finite() => VoidFill::Value(value),
        code => return Err(format!("fill code {code} with value {value}: code 0 has value 0, code 1 a finite one")),
    };
    let mask = &bytes[5..];
    let samples: Vec<bool> = (0..N).map(|k| mask[k / 8] & (1 << (k % 8)) != 0).collect();
    // The mask's padding bits past the last sample are zero, and a mask
    // names at least one void (a tile without one stores no block).
    let tail = N % 8;
    if tail != 0 && mask[mask.len() - 1] >> tail != 0 {
        return Err("the void mask sets padding bits".into());
    }
    if !samples.contains(&true) {
        return Err("the void mask names no void".into());
    }
    Ok(Voids { fill, samples })
}

thread_local! {
    /// One compression context per thread, kept for its level: making one
    /// per tile allocated and cleared zstd's level-9 tables every time. A
    /// reused context writes the same bytes (single-shot compression
    /// carries nothing from one call to the next).
    static COMPRESSOR: std::cell::RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
        const { std::cell::RefCell::new(None) };
    static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

fn compress(raw: &[u8], level: i32) -> std::io::Result<Vec<u8>> {
    COMPRESSOR.with(|cell| {
        let mut cell = cell.borrow_mut();
        if cell.as_ref().is_none_or(|(l, _)| *l != level) {
            *cell = Some((level, zstd::bulk::Compressor::new(level)?));
        }
        cell.as_mut().expect("just made").1.compress(raw)
    })
}

fn decompress(payload: &[u8], capacity: usize) -> std::io::Result<Vec<u8>> {
    DECOMPRESSOR.with(|cell| {
        let mut cell = cell.borrow_mut();
        if cell.is_none() {
            *cell = Some(zstd::bulk::Decompressor::new()?);
        }
        cell.as_mut().expect("just made").decompress(payload, capacity)
    })
}

/// Verifies, decompresses and decodes a payload read from `offset`.
pub fn decode_tile(entry: &IndexEntry, codec: Codec, payload: &[u8], offset: u64) -> Result<DecodedTile, PackError> {
    let tile = entry.tile();
    let computed = crc32fast::hash(payload);
    if computed != entry.payload_checksum {
        return Err(PackError::PayloadChecksum { tile, offset, stored: entry.payload_checksum, computed });
    }
    let decode_error = |reason: String| PackError::PayloadDecode { tile, offset, reason };
    let expected = codec.decoded_length_with(entry.voids);
    let raw = decompress(payload, expected).map_err(|e| decode_error(format!("zstd: {e}")))?;
    if raw.len() != expected {
        return Err(decode_error(format!(
            "decompressed to {} bytes, codec {} needs {expected}",
            raw.len(),
            codec.code()
        )));
    }
    let residuals: Vec<u16> =
        raw[..N].iter().zip(&raw[N..2 * N]).map(|(&lo, &hi)| u16::from_le_bytes([lo, hi])).collect();
    let quantised = unpredict(&residuals, 0xffff);
    let mut at = 2 * N;
    let classes = codec.has_classes().then(|| {
        at += N;
        raw[at - N..at].to_vec()
    });
    let colour = codec.has_colour().then(|| {
        let planes: Vec<Vec<u16>> = (0..3)
            .map(|c| {
                let plane: Vec<u16> = raw[at + c * N..at + (c + 1) * N].iter().map(|&b| u16::from(b)).collect();
                unpredict(&plane, 0xff)
            })
            .collect();
        (0..N).map(|k| [planes[0][k] as u8, planes[1][k] as u8, planes[2][k] as u8]).collect()
    });
    let voids = match entry.voids {
        true => Some(read_void_block(&raw[codec.decoded_length()..]).map_err(decode_error)?),
        false => None,
    };
    Ok(DecodedTile {
        tile,
        min_elevation: entry.min_elevation,
        max_elevation: entry.max_elevation,
        quantised,
        classes,
        colour,
        measured: entry.measured,
        voids,
    })
}

/// `x.round().clamp(0.0, 65535.0) as u16` for every `x`, NaN included,
/// without `round`: the x86-64 baseline has no rounding instruction, so it
/// was a libm call a sample. Inside the range the fraction past the
/// truncation is exact, and rounding half away from zero adds one from 0.5.
#[inline(always)]
fn rounded_u16(x: f64) -> u16 {
    let c = x.clamp(0.0, 65535.0);
    let t = c as u16;
    if c - f64::from(t) >= 0.5 { t + 1 } else { t }
}

fn zigzag(d: u16, mask: u16) -> u16 {
    let half = mask / 2 + 1;
    // d is a residual modulo mask + 1; read it as signed and fold the sign into bit 0.
    if d < half { d << 1 } else { ((mask - d) << 1) | 1 }
}

fn unzigzag(z: u16, mask: u16) -> u16 {
    if z & 1 == 0 { z >> 1 } else { mask - (z >> 1) }
}

/// Runs the prediction over a plane in sample order, row by row: `step`
/// receives each value's prediction (the gradient `left + up - upleft`,
/// `left` on the first row, `up` in the first column, 0 for the first
/// sample; modular in `mask + 1`) and returns the value it fixes there.
/// The definition [`predict`] and [`unpredict`] are tested against.
#[cfg(test)]
fn run_prediction(values: &mut [u16], mask: u16, mut step: impl FnMut(usize, u16) -> u16) {
    values[0] = step(0, 0);
    for k in 1..WIDTH {
        values[k] = step(k, values[k - 1] & mask);
    }
    for row in 1..WIDTH {
        let (done, rest) = values.split_at_mut(row * WIDTH);
        let up = &done[(row - 1) * WIDTH..];
        let here = &mut rest[..WIDTH];
        here[0] = step(row * WIDTH, up[0] & mask);
        for c in 1..WIDTH {
            let p = here[c - 1].wrapping_add(up[c]).wrapping_sub(up[c - 1]) & mask;
            here[c] = step(row * WIDTH + c, p);
        }
    }
}

/// Each value's zig-zagged residual against the gradient prediction
/// (`run_prediction`'s). Encoding knows every value beforehand, so each
/// residual comes from values alone: a loop with no chain from one sample
/// to the next, which the compiler vectorises.
fn predict(values: &[u16], mask: u16) -> Vec<u16> {
    let mut residuals = vec![0u16; values.len()];
    let residual = |v: u16, p: u16| zigzag(v.wrapping_sub(p) & mask, mask);
    residuals[0] = residual(values[0], 0);
    for k in 1..WIDTH {
        residuals[k] = residual(values[k], values[k - 1] & mask);
    }
    for row in 1..WIDTH {
        let up = &values[(row - 1) * WIDTH..row * WIDTH];
        let here = &values[row * WIDTH..(row + 1) * WIDTH];
        let out = &mut residuals[row * WIDTH..(row + 1) * WIDTH];
        out[0] = residual(here[0], up[0] & mask);
        for c in 1..WIDTH {
            let p = here[c - 1].wrapping_add(up[c]).wrapping_sub(up[c - 1]) & mask;
            out[c] = residual(here[c], p);
        }
    }
    residuals
}

/// The inverse of [`predict`], the same values as running the prediction
/// with `step` adding each residual, in two passes a row: a value less the
/// one left of it is its residual plus `up - upleft`, all known before the
/// row starts (a loop the compiler vectorises), so only a running sum is
/// left in sequence. Modular arithmetic in 2^16 masked at the end equals
/// arithmetic in `mask + 1` throughout, as `mask + 1` divides 2^16.
fn unpredict(residuals: &[u16], mask: u16) -> Vec<u16> {
    let mut values: Vec<u16> = residuals.iter().map(|&z| unzigzag(z, mask)).collect();
    let mut sum = 0u16;
    for v in &mut values[..WIDTH] {
        sum = sum.wrapping_add(*v);
        *v = sum & mask;
    }
    for row in 1..WIDTH {
        let (done, rest) = values.split_at_mut(row * WIDTH);
        let up = &done[(row - 1) * WIDTH..];
        let here = &mut rest[..WIDTH];
        here[0] = here[0].wrapping_add(up[0]);
        for c in 1..WIDTH {
            here[c] = here[c].wrapping_add(up[c]).wrapping_sub(up[c - 1]);
        }
        let mut sum = 0u16;
        for v in here.iter_mut() {
            sum = sum.wrapping_add(*v);
            *v = sum & mask;
        }
    }
    values
}

#[cfg(test)]
mod tests {
    /// docs/planetpack.md's void block vector: one void at sample (0, 0),
    /// the void value -5 m; and the block read back, its rules enforced.
    #[test]
    fn the_void_block_is_the_specs() {
        let mut samples = vec![false; N];
        samples[stored_index(0, 0)] = true;
        let block = void_block(TileVoids { fill: VoidFill::Value(-5.0), samples: &samples });
        assert_eq!(block.len(), 2_151);
        assert_eq!(block[..5], [0x01, 0x00, 0x00, 0xa0, 0xc0]);
        assert_eq!(block[5 + 16], 0x10);
        assert_eq!(block.iter().filter(|&&b| b != 0).count(), 4);
        assert_eq!(read_void_block(&block), Ok(Voids { fill: VoidFill::Value(-5.0), samples: samples.clone() }));
        let mut padded = block.clone();
        *padded.last_mut().unwrap() |= 0x80;
        assert!(read_void_block(&padded).unwrap_err().contains("padding"));
        let mut empty = block.clone();
        empty[5 + 16] = 0;
        assert!(read_void_block(&empty).unwrap_err().contains("no void"));
        let mut code = block;
        code[0] = 0;
        assert!(read_void_block(&code).unwrap_err().contains("fill code 0"));
    }

    /// A tile with voids round-trips its mask and fill; one without stores
    /// no block (the same bytes as version 4).
    #[test]
    fn voids_round_trip_and_a_tile_without_stores_none() {
        let heights = vec![12.5; N];
        let mut samples = vec![false; N];
        samples[500] = true;
        samples[N - 1] = true;
        let content = |voids| TileContent {
            heights: &heights,
            classes: None,
            colour: None,
            geometric_error: 0.0,
            measured: true,
            voids,
        };
        let tile = TileAddress::new(0, 0, 0, 0).unwrap();
        let with = encode_tile(
            tile,
            Codec::Heights,
            &content(Some(TileVoids { fill: VoidFill::Surrounding, samples: &samples })),
            3,
        )
        .unwrap();
        assert!(with.voids);
        let decoded = decode_tile(&with.entry_at(0), Codec::Heights, &with.payload, 0).unwrap();
        assert_eq!(decoded.voids, Some(Voids { fill: VoidFill::Surrounding, samples: samples.clone() }));
        assert!(decoded.sample_measured(0) && !decoded.sample_measured(500) && decoded.is_void(N - 1));
        let none = vec![false; N];
        let without = encode_tile(
            tile,
            Codec::Heights,
            &content(Some(TileVoids { fill: VoidFill::Surrounding, samples: &none })),
            3,
        )
        .unwrap();
        assert_eq!(without, encode_tile(tile, Codec::Heights, &content(None), 3).unwrap());
        assert!(!without.voids);
        // A flag without a block (or a block without its flag) is refused.
        let mut lying = with.entry_at(0);
        lying.voids = false;
        assert!(decode_tile(&lying, Codec::Heights, &with.payload, 0).is_err());
    }

    use super::*;

    #[test]
    fn quantisation_rounds_as_round_then_clamp() {
        let edges = [0.5, 1.5, 2.5, 65534.5, 0.49999999999999994, 65535.0, 65535.4, 1e300, -0.3, -0.5, -7.0];
        let swept = (0..200_000).map(|k| f64::from(k) * 0.3277 - 17.0);
        for x in edges.into_iter().chain(swept).chain([f64::NAN, f64::INFINITY, f64::NEG_INFINITY]) {
            assert_eq!(rounded_u16(x), x.round().clamp(0.0, 65535.0) as u16, "{x}");
        }
    }

    #[test]
    fn prediction_transform_is_exact_for_extreme_planes() {
        for mask in [0xffu16, 0xffff] {
            let patterns: [Box<dyn Fn(usize) -> u16>; 3] = [
                Box::new(move |k| if k % 2 == 0 { 0 } else { mask }),
                Box::new(move |k| (k as u16).wrapping_mul(40503) & mask),
                Box::new(move |k| if (k / WIDTH + k % WIDTH).is_multiple_of(3) { mask } else { 0 }),
            ];
            for pattern in patterns {
                let values: Vec<u16> = (0..N).map(&pattern).collect();
                let residuals = predict(&values, mask);
                assert!(residuals.iter().all(|&r| r <= mask));
                assert_eq!(unpredict(&residuals, mask), values);
                // Both against the prediction's definition, run in sequence.
                let mut reference = vec![0u16; N];
                let mut scratch = values.clone();
                run_prediction(&mut scratch, mask, |k, p| {
                    reference[k] = zigzag(values[k].wrapping_sub(p) & mask, mask);
                    values[k]
                });
                assert_eq!(residuals, reference);
                let mut decoded = vec![0u16; N];
                run_prediction(&mut decoded, mask, |k, p| unzigzag(reference[k], mask).wrapping_add(p) & mask);
                assert_eq!(unpredict(&residuals, mask), decoded);
            }
        }
    }

    #[test]
    fn a_kept_range_decodes_unchanged_samples_bit_for_bit() {
        let tile = TileAddress::new(0, 3, 1, 2).unwrap();
        let heights: Vec<f64> = (0..N).map(|k| -120.0 + 0.37 * (k % 977) as f64).collect();
        fn content(h: &[f64]) -> TileContent<'_> {
            TileContent { heights: h, classes: None, colour: None, geometric_error: 0.0, measured: true, voids: None }
        }
        let first = encode_tile(tile, Codec::Heights, &content(&heights), 3).unwrap();
        let entry = first.entry_at(0);
        let old = decode_tile(&entry, Codec::Heights, &first.payload, 0).unwrap().heights();
        let mut new = old.clone();
        new[5] = old[6] + 0.123; // one sample changed, inside the range
        let range = (first.min_elevation, first.max_elevation);
        let kept = encode_tile_keeping_range(tile, Codec::Heights, &content(&new), 3, range).unwrap();
        assert_eq!((kept.min_elevation, kept.max_elevation), range);
        let again = decode_tile(&kept.entry_at(0), Codec::Heights, &kept.payload, 0).unwrap().heights();
        for k in (0..N).filter(|&k| k != 5) {
            assert_eq!(again[k].to_bits(), old[k].to_bits(), "sample {k}");
        }
        // Outside the range: the tile's own range, as encode_tile.
        new[7] = 1e4;
        let wider = encode_tile_keeping_range(tile, Codec::Heights, &content(&new), 3, range).unwrap();
        assert_eq!(wider, encode_tile(tile, Codec::Heights, &content(&new), 3).unwrap());
    }

    #[test]
    fn zigzag_folds_small_residuals_to_small_codes() {
        assert_eq!(zigzag(0, 0xffff), 0);
        assert_eq!(zigzag(1, 0xffff), 2);
        assert_eq!(zigzag(0xffff, 0xffff), 1); // -1
        assert_eq!(zigzag(0xff, 0xff), 1);
        for d in 0..=0xffffu16 {
            assert_eq!(unzigzag(zigzag(d, 0xffff), 0xffff), d);
        }
    }
}
