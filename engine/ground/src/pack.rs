//! Ground from a baked pack.
//!
//! Past the deepest stored tile, a tile is resampled from its nearest stored
//! ancestor by bilinear interpolation in that ancestor's face grid (its own
//! stored samples, apron included). The filter is stated because it is what
//! makes resampled ground continuous: along a shared edge both sides
//! interpolate the same edge samples with the same weights, on one face or
//! across two, since the apron holds the neighbour face's own samples.
//! Colour is resampled through a cubic B-spline of the same samples
//! instead (`ground::bspline`): imagery magnified by bilinear blends showed
//! its texels as diamonds and blobs, kilometres wide; the renderer filters
//! a stored tile's colour with the same spline, so a resampled tile shows
//! what its ancestor showed.

use std::sync::Arc;

use crate::{HeightSource, Provenance, SourceError, SourceTile, TileBounds};
use planet_geo::address::{TILE_CELLS, TILE_STORED_SAMPLES, TileAddress};
use planet_geo::body::Body;
use planet_packfile::codec::Voids;
use planet_packfile::{DecodedTile, DetailLaw, Pack};

#[derive(Debug, Clone)]
pub struct PackSource {
    pack: Arc<Pack>,
}

impl PackSource {
    pub fn new(pack: Arc<Pack>) -> PackSource {
        PackSource { pack }
    }

    /// The deepest stored tile that is `tile` or an ancestor of it
    /// ([`Pack::deepest_stored_ancestor`] starts at the pack's deepest
    /// level, so a depth-20 tile over a depth-9 pack costs no lookups of
    /// empty levels).
    fn stored_ancestor(&self, tile: TileAddress) -> Result<planet_packfile::IndexEntry, SourceError> {
        self.pack.deepest_stored_ancestor(tile)?.ok_or(SourceError::NoData { tile })
    }

    pub fn pack(&self) -> &Pack {
        &self.pack
    }

    /// The law this pack's own data continues past its height data depth,
    /// measured inside its coverage and rounded as its header records it:
    /// what a bake records, and what a version 2 pack, which records none,
    /// is read with.
    pub fn measure_detail_law(&self) -> Result<DetailLaw, SourceError> {
        let coverage = self.pack.header().coverage;
        crate::DetailSource::measure_law(&(Arc::new(self.clone()) as Arc<dyn HeightSource>), coverage)
    }

    /// [`PackSource::measure_detail_law`] of the pack file at `path`, read
    /// with positioned reads (a bake's or a patch's memory counts no mapped
    /// pages for it), every failure naming the file.
    pub fn measure_detail_law_at(path: &std::path::Path) -> Result<DetailLaw, planet_packfile::PackError> {
        use planet_packfile::PackError;
        let measured = Pack::open_unmapped(path).and_then(|pack| {
            PackSource::new(Arc::new(pack)).measure_detail_law().map_err(|e| match e {
                SourceError::Pack(e) => e,
                other => PackError::BadSpec(format!("measuring the detail law: {other}")),
            })
        });
        measured.map_err(|e| e.in_file(path))
    }

    /// The pack's ground with its detail: the law its header records, or,
    /// for a version 2 pack, the law its data measures.
    pub fn with_detail(&self) -> crate::DetailSource {
        let source: Arc<dyn HeightSource> = Arc::new(self.clone());
        let header = self.pack.header();
        match header.detail {
            Some(law) => crate::DetailSource::with_law(source, law),
            None => crate::DetailSource::within(source, header.coverage),
        }
        .resampling_its_data(header.max_depth <= header.height_data_depth)
    }
}

fn provenance_of(decoded: &DecodedTile, stored_depth: u8, data_depth: u8) -> Provenance {
    if decoded.measured && stored_depth <= data_depth {
        Provenance::Measured
    } else {
        Provenance::Resampled { from_depth: stored_depth.min(data_depth) }
    }
}

/// Where the stored samples along one axis of a resampled tile fall in the
/// ancestor's stored grid: the lower sample and the fraction exactly as
/// `ground::bilinear` computes them (so the result is the same bits), and the
/// nearest sample.
struct Axis {
    lower: Vec<usize>,
    fraction: Vec<f64>,
    nearest: Vec<usize>,
    /// The first of the four samples the cubic B-spline takes, and their weights.
    spline: Vec<(usize, [f64; 4])>,
}

impl Axis {
    fn new(origin: f64, scale: f64) -> Axis {
        let last = TILE_CELLS as f64;
        let (mut lower, mut fraction, mut nearest, mut spline) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for i in -1..TILE_STORED_SAMPLES as i32 - 1 {
            let u = origin + f64::from(i) * scale;
            let u0 = u.floor().clamp(-1.0, last);
            lower.push((u0 + 1.0) as usize);
            fraction.push(u - u0);
            nearest.push((u.round() as i32 + 1) as usize);
            spline.push(crate::bspline_taps(u));
        }
        Axis { lower, fraction, nearest, spline }
    }

    /// `ground::bspline` at column `c` of `self` and row `r` of `rows`.
    fn smooth(&self, rows: &Axis, grid: &[f32], c: usize, r: usize) -> f64 {
        let n = TILE_STORED_SAMPLES as usize;
        let ((x0, wx), (y0, wy)) = (self.spline[c], rows.spline[r]);
        let row = |j: usize| (0..4).map(|i| wx[i] * f64::from(grid[(y0 + j) * n + x0 + i])).sum::<f64>();
        (0..4).map(|j| wy[j] * row(j)).sum()
    }

    /// `ground::bilinear` at column `c` of `self` and row `r` of `rows`.
    fn blend<T: Copy + Into<f64>>(&self, rows: &Axis, grid: &[T], c: usize, r: usize) -> f64 {
        let n = TILE_STORED_SAMPLES as usize;
        let (u0, fu, v0, fv) = (self.lower[c], self.fraction[c], rows.lower[r], rows.fraction[r]);
        let at = |i: usize, j: usize| -> f64 { grid[j * n + i].into() };
        let bottom = at(u0, v0) * (1.0 - fu) + at(u0 + 1, v0) * fu;
        let top = at(u0, v0 + 1) * (1.0 - fu) + at(u0 + 1, v0 + 1) * fu;
        bottom * (1.0 - fv) + top * fv
    }
}

impl crate::Streaming for PackSource {
    fn prefetch(&self, tiles: &[TileAddress]) {
        // A hint: a failure here shows when the tile itself is read.
        let _ = self.pack.prefetch(tiles);
    }
}

impl HeightSource for PackSource {
    fn parts(&self) -> Vec<&dyn HeightSource> {
        Vec::new()
    }
    fn body(&self) -> &Body {
        &self.pack.header().body
    }

    fn streaming(&self) -> Option<&dyn crate::Streaming> {
        Some(self)
    }

    fn tile(&self, tile: TileAddress) -> Result<SourceTile, SourceError> {
        let entry = self.stored_ancestor(tile)?;
        let decoded = self.pack.decode(&entry)?;
        let stored = entry.tile();
        let data_depth = self.pack.header().height_data_depth;
        if stored == tile {
            let provenance = provenance_of(&decoded, stored.depth(), data_depth);
            return Ok(SourceTile {
                tile,
                heights: decoded.heights().into_iter().map(|h| h as f32).collect(),
                classes: decoded.classes,
                colour: decoded.colour,
                provenance,
                voids: decoded.voids,
            });
        }
        // Position of this tile's stored samples in the ancestor's grid.
        let k = tile.depth() - stored.depth();
        let scale = 1.0 / f64::from(1u32 << k);
        let cells = f64::from(TILE_CELLS);
        let origin_u = f64::from(tile.x() - (stored.x() << k)) * cells * scale;
        let origin_v = f64::from(tile.y() - (stored.y() << k)) * cells * scale;
        let heights = decoded.heights();
        let planes: Option<[Vec<f32>; 3]> = decoded
            .colour
            .as_ref()
            .map(|colour| [0, 1, 2].map(|c| colour.iter().map(|rgb| f32::from(rgb[c])).collect()));
        // Each stored row and column meets the ancestor's grid at the same
        // place for every sample on it: the cell and fraction `bilinear`
        // would compute, and the nearest sample, found once per axis.
        let columns = Axis::new(origin_u, scale);
        let rows = Axis::new(origin_v, scale);
        let n = TILE_STORED_SAMPLES as usize;
        let mut out = Vec::with_capacity(n * n);
        let mut classes = decoded.classes.as_ref().map(|_| Vec::with_capacity(n * n));
        let mut colour = planes.as_ref().map(|_| Vec::with_capacity(n * n));
        // A resampled sample was a void where any ancestor sample it blends
        // with weight was.
        let void_plane: Option<Vec<f32>> =
            decoded.voids.as_ref().map(|v| v.samples.iter().map(|&s| f32::from(u8::from(s))).collect());
        let mut voids = void_plane.as_ref().map(|_| Vec::with_capacity(n * n));
        for r in 0..n {
            for c in 0..n {
                out.push(columns.blend(&rows, &heights, c, r) as f32);
                if let (Some(dst), Some(plane)) = (voids.as_mut(), void_plane.as_ref()) {
                    dst.push(columns.blend(&rows, plane, c, r) > 0.0);
                }
                // Classes are categories: nearest, never blended.
                if let (Some(dst), Some(src)) = (classes.as_mut(), decoded.classes.as_ref()) {
                    dst.push(src[rows.nearest[r] * n + columns.nearest[c]]);
                }
                if let (Some(dst), Some(planes)) = (colour.as_mut(), planes.as_ref()) {
                    dst.push(planes.each_ref().map(|p| columns.smooth(&rows, p, c, r).round().clamp(0.0, 255.0) as u8));
                }
            }
        }
        Ok(SourceTile {
            tile,
            heights: out,
            classes,
            colour,
            provenance: Provenance::Resampled { from_depth: stored.depth().min(data_depth) },
            voids: decoded
                .voids
                .zip(voids)
                .filter(|(_, samples)| samples.contains(&true))
                .map(|(v, samples)| Voids { fill: v.fill, samples }),
        })
    }

    fn bounds(&self, tile: TileAddress, _reads: crate::Reads) -> Result<TileBounds, SourceError> {
        let entry = self.stored_ancestor(tile)?;
        let data_depth = self.pack.header().height_data_depth;
        let stored_depth = entry.tile().depth();
        // A resampled tile is a bilinear blend of its ancestor's samples, so
        // the ancestor's range bounds it. Its surface is the ancestor's
        // bilinear surface drawn on a finer lattice, which departs from it
        // by a quarter as much per level deeper (curvature error scales with
        // the square of the lattice spacing).
        let levels_below = u32::from(tile.depth() - stored_depth);
        let geometric_error = f64::from(entry.geometric_error) / 4f64.powi(levels_below as i32);
        let provenance = if stored_depth == tile.depth() && entry.measured && stored_depth <= data_depth {
            Provenance::Measured
        } else {
            Provenance::Resampled { from_depth: stored_depth.min(data_depth) }
        };
        Ok(TileBounds {
            min_elevation: f64::from(entry.min_elevation),
            max_elevation: f64::from(entry.max_elevation),
            geometric_error,
            provenance,
            voids: entry.voids,
        })
    }

    fn data_depth(&self) -> Option<u8> {
        Some(self.pack.header().height_data_depth)
    }

    fn colour_data_depth(&self) -> Option<u8> {
        let header = self.pack.header();
        header.codec.has_colour().then_some(header.colour_data_depth)
    }
}
