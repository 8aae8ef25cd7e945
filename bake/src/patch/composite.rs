//! The patch composite: what a region patch stores in each sample, and the
//! audit that holds a patch to it. The key decision: the pack being patched
//! is the base. A sample takes a patch raster's value only where that raster
//! measured it (inside its footprint, not a void) and inside the `--region`
//! box; everywhere else it keeps the pack's own value, decoded from the
//! pack's tile. Nothing is filled and nothing is extrapolated, so a patch
//! never invents ground.
//!
//! Across a border of `BORDER_PIXELS` of the coarsest patch raster's pixels
//! inside the box the two are mixed by a smoothstep (weight 0 on the box's
//! edge, 1 from the border inward; distances in degrees of latitude and of
//! longitude), so the patch leaves no cliff at its edge. The weight is a pure
//! function of a sample's latitude and longitude, so a sample two tiles
//! share gets the same weight in both. Heights and colour are mixed by the
//! weight; a surface class is a category, so it switches to the patch's at
//! weight 1/2.
//!
//! Above the pack's height data depth a patched tile's heights are not
//! composited from the patch DEM: like a full bake's they are the filter of
//! the level below, now patched (`refilter`), and the pack's stored value
//! wherever the footprint's ground did not change.

use planet_terrain::geo::address::TILE_STORED_SAMPLES;
use planet_terrain::pack::DecodedTile;
use planet_terrain::pack::codec::{VoidFill, Voids};
use planet_terrain::{Body, TileAddress};

use crate::error::BakeError;
use crate::landmarks::{LandmarkAudit, Verdict};
use crate::options::Region;
use crate::run::{Prepared, Run};
use crate::stages::audit::DepthAudit;
use crate::stages::filter::Tap;
use crate::stages::raster::Raster;
use crate::stages::raster::RasterError;
use crate::stages::sampling::{Inputs, Places, classes_at, colour_at};

/// The blend border, in pixels of the coarsest patch raster.
pub(crate) const BORDER_PIXELS: f64 = 2.0;

/// The weight of the patch at each place: 0 outside the box, a smoothstep
/// across the border inside it, 1 beyond.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Blend {
    pub(crate) region: Region,
    /// Degrees.
    pub(crate) border: f64,
}

impl Blend {
    pub(crate) fn weight(&self, lat: f64, lon: f64) -> f64 {
        let r = &self.region;
        let span = if r.east - r.west >= 360.0 { 360.0 } else { (r.east - r.west).rem_euclid(360.0) };
        let along = (lon - r.west).rem_euclid(360.0);
        let east_west = if span >= 360.0 { f64::INFINITY } else { along.min(span - along) };
        let d = (lat - r.south).min(r.north - lat).min(if along <= span { east_west } else { -1.0 });
        if d <= 0.0 {
            return 0.0;
        }
        let t = if self.border > 0.0 { (d / self.border).min(1.0) } else { 1.0 };
        t * t * (3.0 - 2.0 * t)
    }
}

/// The rasters of a patch; any of them may be absent.
pub(crate) struct Sources {
    /// The DEM, with the scene's layers.
    pub(crate) dem: Option<Inputs>,
    pub(crate) imagery: Option<Raster>,
    pub(crate) classes: Option<Raster>,
}

/// What the patch rasters measured at one tile's stored samples, and the
/// patch's weight there. A block is `None` when its raster was not given.
pub(crate) struct Measured {
    pub(crate) weights: Vec<f64>,
    pub(crate) heights: Option<Vec<Option<f64>>>,
    pub(crate) classes: Option<Vec<Option<u8>>>,
    pub(crate) colour: Option<Vec<Option<[u8; 3]>>>,
}

impl Sources {
    /// Reads every patch raster at `tile`'s stored samples.
    pub(crate) fn measure(&self, body: &Body, tile: TileAddress, blend: &Blend) -> Result<Measured, BakeError> {
        let points = Places::of_tile(body, tile).pairs();
        Ok(Measured {
            weights: points.iter().map(|&(lat, lon)| blend.weight(lat, lon)).collect(),
            heights: self.dem.as_ref().map(|d| d.measured_heights(body, tile)).transpose()?,
            classes: self.classes.as_ref().map(|r| classes_at(r, &points)).transpose()?,
            colour: self.imagery.as_ref().map(|r| colour_at(r, &points)).transpose()?,
        })
    }

    /// The rasters given, with what each is called in messages.
    pub(crate) fn rasters(&self) -> Vec<(&'static str, &Raster)> {
        let mut all = Vec::new();
        if let Some(d) = &self.dem {
            all.push(("the DEM", &d.dem));
        }
        if let Some(r) = &self.imagery {
            all.push(("the imagery", r));
        }
        if let Some(r) = &self.classes {
            all.push(("the class raster", r));
        }
        all
    }
}

/// A height where the patch measured one and has weight; `None` keeps the
/// pack's.
pub(crate) fn mix_height(old: f64, new: Option<f64>, w: f64) -> Option<f64> {
    new.filter(|_| w > 0.0).map(|h| if w >= 1.0 { h } else { old + w * (h - old) })
}

fn mix_colour(old: [u8; 3], new: Option<[u8; 3]>, w: f64) -> Option<[u8; 3]> {
    new.filter(|_| w > 0.0)
        .map(|c| std::array::from_fn(|k| (f64::from(old[k]) + w * (f64::from(c[k]) - f64::from(old[k]))).round() as u8))
}

fn pick_class(new: Option<u8>, w: f64) -> Option<u8> {
    new.filter(|_| w >= 0.5)
}

/// One tile's new content.
pub(crate) struct Composite {
    pub(crate) heights: Vec<f64>,
    pub(crate) classes: Option<Vec<u8>>,
    pub(crate) colour: Option<Vec<[u8; 3]>>,
    /// Samples whose height took (some of) the DEM's.
    pub(crate) from_dem: usize,
    /// Samples whose height kept (some of) the pack's.
    pub(crate) kept: usize,
    /// The old tile's voids where a sample kept (some of) its fill: a
    /// sample the DEM measured with full weight is no longer a void.
    pub(crate) voids: Option<Voids>,
}

/// The composite of the pack's tile `old` and what the patch measured.
pub(crate) fn composite(old: &DecodedTile, m: &Measured) -> Composite {
    let old_heights = old.heights();
    let (mut from_dem, mut kept) = (0, 0);
    let mut voids = old.voids.clone();
    let heights = old_heights
        .iter()
        .enumerate()
        .map(|(k, &h)| {
            let w = m.weights[k];
            match m.heights.as_ref().and_then(|n| mix_height(h, n[k], w)) {
                Some(v) => {
                    from_dem += 1;
                    kept += usize::from(w < 1.0);
                    if let Some(voids) = voids.as_mut().filter(|_| w >= 1.0) {
                        voids.samples[k] = false;
                    }
                    v
                }
                None => {
                    kept += 1;
                    h
                }
            }
        })
        .collect();
    let classes = old.classes.as_ref().map(|c| {
        let new = m.classes.as_ref();
        c.iter().enumerate().map(|(k, &o)| new.and_then(|n| pick_class(n[k], m.weights[k])).unwrap_or(o)).collect()
    });
    let colour = old.colour.as_ref().map(|c| {
        let new = m.colour.as_ref();
        c.iter().enumerate().map(|(k, &o)| new.and_then(|n| mix_colour(o, n[k], m.weights[k])).unwrap_or(o)).collect()
    });
    let voids = voids.filter(|v| v.samples.contains(&true));
    Composite { heights, classes, colour, from_dem, kept, voids }
}

/// The heights of a patched tile above the pack's height data depth: each
/// sample is the filter of the patched level below (`after`) where that
/// differs from the filter of the pack's own level below (`before`), and
/// the pack's stored value where it does not, so a patch changes a coarse
/// sample only where the ground under its footprint changed. Returns the
/// heights, how many samples changed, and the void mask (a changed sample is
/// a void where its new taps were not all measured; `None` where the pack
/// keeps no masks, version 4 and before (`fill` is `None`), or the tile
/// holds no void).
pub(crate) fn refilter(
    old: &DecodedTile,
    before: &[Option<Tap>],
    after: &[Option<Tap>],
    fill: Option<VoidFill>,
) -> (Vec<f64>, usize, Option<Voids>) {
    let mut changed = 0;
    let mut voids = vec![false; old.quantised.len()];
    let heights = (0..old.quantised.len())
        .map(|k| match (before[k], after[k]) {
            (b, Some(a)) if b.map(|b| b.height.to_bits()) != Some(a.height.to_bits()) => {
                changed += 1;
                voids[k] = !a.measured;
                a.height
            }
            _ => {
                voids[k] = old.is_void(k);
                old.dequantise(old.quantised[k])
            }
        })
        .collect();
    let voids = fill.filter(|_| voids.contains(&true)).map(|fill| Voids { fill, samples: voids });
    (heights, changed, voids)
}

/// Compares the tile a patch is about to store (`new`, decoded from its
/// payload) with the composite of the pack's tile `old` and what the patch
/// rasters measured, re-read for the audit. Every height must be within half
/// of `new`'s quantisation step (plus float rounding) of the composite: the
/// DEM's value where the DEM measured it inside the box, the mix across the
/// border, and the pack's old value everywhere else; above the pack's height
/// data depth, `refiltered` (the heights [`refilter`] gives, evaluated
/// anew by the audit). Classes and colour must be exact. Returns the tally
/// and the first violation.
pub(crate) fn audit_tile(
    old: &DecodedTile,
    new: &DecodedTile,
    m: &Measured,
    refiltered: Option<&[f64]>,
) -> (DepthAudit, Option<String>) {
    let tile = new.tile;
    let step = new.quantisation_step();
    let mut a = DepthAudit { tiles: 1, ..Default::default() };
    let mut first = None;
    let n = TILE_STORED_SAMPLES as usize;
    let at = |k: usize| format!("tile {tile} sample ({}, {})", (k % n) as i64 - 1, (k / n) as i64 - 1);
    for k in 0..new.quantised.len() {
        let was = old.dequantise(old.quantised[k]);
        let got = new.dequantise(new.quantised[k]);
        let w = m.weights[k];
        let patched = m.heights.as_ref().and_then(|h| mix_height(was, h[k], w));
        let want = refiltered.map_or(patched.unwrap_or(was), |r| r[k]);
        if a.height(got, want, step).is_some() {
            first.get_or_insert_with(|| match patched {
                _ if refiltered.is_some() => {
                    format!("{}: pack {got:.3} m, filter of the patched level below {want:.3} m", at(k))
                }
                Some(_) => format!("{}: pack {got:.3} m, patch composite {want:.3} m (weight {w:.3})", at(k)),
                None => format!(
                    "{}: pack {got:.3} m, but the patch measured nothing here and the pack held {was:.3} m",
                    at(k)
                ),
            });
        }
        if let (Some(o), Some(c)) = (&old.colour, &new.colour) {
            let want = m.colour.as_ref().and_then(|n| mix_colour(o[k], n[k], w)).unwrap_or(o[k]);
            let d = (0..3).map(|i| c[k][i].abs_diff(want[i])).max().unwrap_or(0);
            a.worst_colour = a.worst_colour.max(d);
            if d > 0 {
                a.violations += 1;
                first.get_or_insert_with(|| format!("{}: colour {:?}, composite {want:?}", at(k), c[k]));
            }
        }
        if let (Some(o), Some(c)) = (&old.classes, &new.classes) {
            let want = m.classes.as_ref().and_then(|n| pick_class(n[k], w)).unwrap_or(o[k]);
            if c[k] != want {
                a.class_mismatches += 1;
                a.violations += 1;
                first.get_or_insert_with(|| format!("{}: class {}, composite {want}", at(k), c[k]));
            }
        }
    }
    (a, first)
}

/// Opens the patch rasters (and runs the landmark audit on a DEM); returns
/// them, the audit and the depth the DEM's pixels support.
pub(crate) fn open_sources(run: &Run) -> Result<(Sources, LandmarkAudit, u8), BakeError> {
    let options = run.options;
    if options.has_dem() {
        let Prepared { mut inputs, data_depth, landmarks, .. } = run.prepare()?;
        let (imagery, classes) = (inputs.imagery.take(), inputs.classes.take());
        return Ok((Sources { dem: Some(inputs), imagery, classes }, landmarks, data_depth));
    }
    let (_, imagery_weight, classes_weight) = options.raster_weights();
    let (total, memory) = (imagery_weight + classes_weight, &run.memory);
    let imagery =
        options.imagery.as_deref().map(|p| Raster::open(p, memory.raster_cache(imagery_weight, total))).transpose()?;
    if let Some(i) = imagery.as_ref().filter(|i| i.bands() < 3) {
        return Err(RasterError::Unusable {
            path: i.path().to_owned(),
            reason: format!("imagery needs 3 bands (R, G, B), it has {}", i.bands()),
        }
        .into());
    }
    let classes =
        options.classes.as_deref().map(|p| Raster::open(p, memory.raster_cache(classes_weight, total))).transpose()?;
    let nothing = LandmarkAudit { checks: Vec::new(), verdict: Verdict::NothingToCheck };
    Ok((Sources { dem: None, imagery, classes }, nothing, 0))
}

#[cfg(test)]
mod tests {
    use planet_terrain::geo::address::TILE_STORED_SAMPLE_COUNT;
    use planet_terrain::pack::Codec;
    use planet_terrain::pack::TileContent;
    use planet_terrain::pack::codec::{decode_tile, encode_tile, encode_tile_keeping_range};

    use super::*;

    const N: usize = TILE_STORED_SAMPLE_COUNT;

    fn encoded(heights: &[f64], range: Option<(f32, f32)>) -> DecodedTile {
        let tile = TileAddress::new(0, 2, 1, 1).unwrap();
        let content =
            TileContent { heights, classes: None, colour: None, geometric_error: 0.0, measured: true, voids: None };
        let e = match range {
            Some(r) => encode_tile_keeping_range(tile, Codec::Heights, &content, 3, r).unwrap(),
            None => encode_tile(tile, Codec::Heights, &content, 3).unwrap(),
        };
        decode_tile(&e.entry_at(0), Codec::Heights, &e.payload, 0).unwrap()
    }

    #[test]
    fn the_weight_is_zero_outside_the_box_and_one_past_the_border() {
        let blend = Blend { region: Region { south: 10.0, west: 10.0, north: 20.0, east: 20.0 }, border: 0.5 };
        assert_eq!(blend.weight(30.0, 15.0), 0.0);
        assert_eq!(blend.weight(0.0, 15.0), 0.0);
        assert_eq!(blend.weight(10.0, 15.0), 0.0, "the box's edge keeps the pack");
        assert_eq!(blend.weight(15.0, 20.1), 0.0);
        assert_eq!(blend.weight(15.0, 15.0), 1.0);
        assert_eq!(blend.weight(10.5, 15.0), 1.0);
        assert!((blend.weight(10.25, 15.0) - 0.5).abs() < 1e-12);
        let across = Blend { region: Region { south: -5.0, west: 170.0, north: 5.0, east: -170.0 }, border: 1.0 };
        assert_eq!(across.weight(0.0, 180.0), 1.0);
        assert_eq!(across.weight(0.0, -175.0), 1.0);
        assert_eq!(across.weight(0.0, 0.0), 0.0);
    }

    /// The bug of issue #13: ground outside the DEM's box filled from the
    /// DEM's edge. The audit must refuse it.
    #[test]
    fn the_audit_refuses_ground_invented_outside_the_box() {
        // A tile: its left half inside the box, its right half outside;
        // the patch DEM measured the left half only.
        let old = encoded(&(0..N).map(|k| 200.0 + (k % 131) as f64).collect::<Vec<_>>(), None);
        let inside = |k: usize| k % 131 < 60;
        let m = Measured {
            weights: (0..N).map(|k| if inside(k) { 1.0 } else { 0.0 }).collect(),
            heights: Some((0..N).map(|k| inside(k).then_some(250.0)).collect()),
            classes: None,
            colour: None,
        };
        let c = composite(&old, &m);
        assert_eq!(c.from_dem, (0..N).filter(|&k| inside(k)).count());
        let right = encoded(&c.heights, Some((old.min_elevation, old.max_elevation)));
        let (a, first) = audit_tile(&old, &right, &m, None);
        assert_eq!(first, None, "{a:?}");
        // Outside, the composite is the old tile bit for bit.
        for k in (0..N).filter(|&k| !inside(k)) {
            assert_eq!(right.quantised[k], old.quantised[k]);
        }
        // Filled from the DEM's edge: every sample 250 m.
        let invented = encoded(&vec![250.0; N], None);
        let (a, first) = audit_tile(&old, &invented, &m, None);
        assert!(a.violations > 0);
        assert!(first.unwrap().contains("the patch measured nothing here"));
        // A void inside the box filled from its neighbours is refused too.
        let mut holed = m.heights.clone().unwrap();
        holed[131 * 60 + 30] = None;
        let m = Measured { heights: Some(holed), ..m };
        let (a, _) = audit_tile(&old, &right, &m, None);
        assert_eq!(a.violations, 1);
    }
}
