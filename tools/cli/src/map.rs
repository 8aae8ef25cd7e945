//! Maps of a stack of packs: an equirectangular picture of the whole body
//! or of a latitude/longitude box, coloured by elevation, provenance,
//! stored depth or geometric error, with the coast (0 m) and a labelled
//! graticule over it and its legend drawn underneath.
//!
//! The key decision: every pixel is answered by the same readers the other
//! commands use (the stack's ground through a caching `GroundReader`, its
//! `origin_at`, each pack's index), so a map cannot disagree with `sample`;
//! speed comes from reading whole tiles at the depth whose sample spacing
//! matches a pixel and keeping them for one band of rows, never from a
//! second reader. Both `planet-pack map` and the bake's report picture
//! call [`render`].
//!
//! Here: what a map is asked ([`MapSpec`]) and how it is framed (pixels
//! to degrees, the default box of a stack), the ground read once per
//! pixel, and [`render`], which puts the parts together; the colourings
//! and their legends are in `map_colours`, the coast, graticule and patch
//! outlines in `map_overlays` (re-exported here).

use anyhow::{Context, Result};
use planet_terrain::ground::query::{GroundReader, depth_for_spacing};
use planet_terrain::ground::{GroundStack, StackedPack, WATER_CLASSES};
use planet_terrain::pack::Coverage;
use planet_terrain::{Geodetic, HeightSource};

pub use crate::map_colours::{
    FILLED, INVENTED, MEASURED, NO_DATA, RESAMPLED, THROUGH_VOID, palette_metres, provenance_legend,
};
use crate::map_colours::{elevation, provenance, stored};
pub use crate::map_overlays::{COAST, GRATICULE, PATCHED, graticule_step};
use crate::map_overlays::{draw_coast, draw_graticule, draw_last_patches};
use crate::picture::{Picture, draw_legend, legend_height};

/// The widest (and tallest) map drawn, pixels.
pub const MAX_SIDE: u32 = 16384;

/// What a map's colours say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum What {
    /// Ground height, hypsometric colours, sea below 0 m.
    Elevation,
    /// Measured, resampled, or invented (no pack covers it).
    Provenance,
    /// The deepest stored tile depth of the packs.
    Depth,
    /// The geometric error of that stored tile (log scale).
    Error,
}

/// A map to draw.
#[derive(Clone, Copy, Debug)]
pub struct MapSpec {
    pub what: What,
    /// The box drawn; [`Coverage::GLOBAL`] for the whole body.
    pub region: Coverage,
    /// Width of the map in pixels; its height follows from the box.
    pub width: u32,
    /// Whether elevation includes detail synthesized past the data depth.
    pub detail: bool,
    /// The elevation ramp's span (metres, low < high); `None`: the map's
    /// own heights' range.
    pub range: Option<(f64, f64)>,
}

/// Degrees of longitude a box spans, eastward from west (a box that
/// crosses the antimeridian has east < west; the global one spans 360).
pub fn lon_span(c: &Coverage) -> f64 {
    if c.east > c.west { c.east - c.west } else { c.east - c.west + 360.0 }
}

impl MapSpec {
    pub(crate) fn lon_span(&self) -> f64 {
        lon_span(&self.region)
    }

    /// Height of the map (without its legend): degrees are square.
    pub fn map_height(&self) -> u32 {
        let h = f64::from(self.width) * (self.region.north - self.region.south) / self.lon_span();
        h.round().clamp(1.0, f64::from(MAX_SIDE)) as u32
    }

    /// The latitude and longitude (degrees) at the centre of a pixel.
    pub fn point(&self, x: u32, y: u32) -> (f64, f64) {
        let lat = self.region.north
            - (f64::from(y) + 0.5) * (self.region.north - self.region.south) / f64::from(self.map_height());
        let lon = self.region.west + (f64::from(x) + 0.5) * self.lon_span() / f64::from(self.width);
        (lat, if lon > 180.0 { lon - 360.0 } else { lon })
    }

    /// The pixel (column, row) holding a latitude/longitude, if the map does.
    pub fn pixel_of(&self, lat: f64, lon: f64) -> Option<(u32, u32)> {
        let east = (lon - self.region.west).rem_euclid(360.0);
        let x = (east / self.lon_span() * f64::from(self.width)).floor();
        let y = ((self.region.north - lat) / (self.region.north - self.region.south) * f64::from(self.map_height()))
            .floor();
        let inside = (0.0..f64::from(self.width)).contains(&x) && (0.0..f64::from(self.map_height())).contains(&y);
        inside.then_some((x as u32, y as u32))
    }
}

/// The box a stack's map shows when none is asked for (bottom pack first):
/// the box around the regional packs above the stack's last global pack,
/// or the whole body when the top pack is global. A small regional pack
/// drawn at world scale is a pixel in a blank rectangle, over a global pack
/// too (the Sierra over the demo Earth was drawn whole-world, though the
/// docs said it was framed).
pub fn stack_coverage(coverages: &[Coverage]) -> Coverage {
    let above = match coverages.iter().rposition(Coverage::is_global) {
        Some(k) => &coverages[k + 1..],
        None => coverages,
    };
    let Some(first) = above.first() else { return Coverage::GLOBAL };
    let mut union = *first;
    for c in &above[1..] {
        union.south = union.south.min(c.south);
        union.north = union.north.max(c.north);
        // Boxes across the antimeridian, or apart by more than half a turn,
        // are framed by the whole turn rather than guessed at.
        if union.west > union.east || c.west > c.east {
            (union.west, union.east) = (-180.0, 180.0);
        } else {
            (union.west, union.east) = (union.west.min(c.west), union.east.max(c.east));
        }
    }
    union
}

/// A map of a pack's coverage at a glance: the whole body for a global
/// pack; a regional pack's box with a quarter of its size (at least 0.01
/// degrees, about a kilometre) around it, so the edge where its data ends
/// shows. The longer side is `max_px` pixels.
pub fn overview(what: What, coverage: &Coverage, max_px: u32) -> MapSpec {
    let c = coverage;
    let region = if c.is_global() {
        *c
    } else {
        let span = lon_span(c);
        let lat_margin = (0.25 * (c.north - c.south)).max(0.01);
        let lon_margin = (0.25 * span).max(0.01);
        let wrap = |lon: f64| {
            if lon < -180.0 {
                lon + 360.0
            } else if lon > 180.0 {
                lon - 360.0
            } else {
                lon
            }
        };
        let (west, east) = if span + 2.0 * lon_margin >= 360.0 {
            (-180.0, 180.0)
        } else {
            (wrap(c.west - lon_margin), wrap(c.east + lon_margin))
        };
        Coverage { south: (c.south - lat_margin).max(-90.0), west, north: (c.north + lat_margin).min(90.0), east }
    };
    let (lat_span, lon_span) = (region.north - region.south, lon_span(&region));
    let width = if lat_span <= lon_span {
        max_px
    } else {
        ((f64::from(max_px) * lon_span / lat_span).round() as u32).clamp(1, max_px)
    };
    MapSpec { what, region, width, detail: false, range: None }
}

/// The map of `packs` (bottom first, as `PACK...`), legend included.
pub fn render(packs: &[StackedPack], spec: &MapSpec) -> Result<Picture> {
    anyhow::ensure!(
        (1..=MAX_SIDE).contains(&spec.width),
        "--width {}: a map is 1..={MAX_SIDE} pixels wide",
        spec.width
    );
    spec.region.validate().map_err(|e| anyhow::anyhow!("--region: {e}"))?;
    let stack = GroundStack::of_packs(packs.to_vec())?.context("give at least one pack")?;
    let (width, height) = (spec.width, spec.map_height());
    let mut picture = Picture::new(width, height + legend_height(width), [0, 0, 0]);
    let (heights, wet, depth) = read_heights(&stack, spec)?;
    let legend = match spec.what {
        What::Elevation => {
            let boxes: Vec<Coverage> = packs.iter().map(|p| p.source.pack().header().coverage).collect();
            let covered = |lat: f64, lon: f64| boxes.iter().any(|b| b.contains(lat, lon));
            elevation(&heights, &covered, depth, spec, &mut picture)?
        }
        What::Provenance => provenance(&stack, spec, &mut picture)?,
        What::Depth | What::Error => stored(packs, spec, &mut picture)?,
    };
    draw_coast(&mut picture, &wet, spec.width);
    draw_graticule(&mut picture, spec);
    let mut legend = legend;
    if spec.what == What::Provenance {
        draw_last_patches(&mut picture, packs, spec, &mut legend);
    }
    draw_legend(&mut picture, height, &legend);
    Ok(picture)
}

pub(crate) fn each_pixel(spec: &MapSpec, mut f: impl FnMut(u32, u32, Geodetic) -> Result<()>) -> Result<()> {
    for y in 0..spec.map_height() {
        for x in 0..spec.width {
            let (lat, lon) = spec.point(x, y);
            f(x, y, Geodetic::from_degrees(lat, lon, 0.0))?;
        }
    }
    Ok(())
}

/// The ground's height (metres) at every pixel's centre, row by row, read
/// at the depth whose spacing matches a pixel; whether each pixel is water
/// (by the packs' surface classes where they hold them, else below 0 m);
/// and that depth.
pub(crate) fn read_heights(stack: &GroundStack, spec: &MapSpec) -> Result<(Vec<f64>, Vec<bool>, u8)> {
    let ground = stack.with_detail(spec.detail);
    let body = stack.body().clone();
    let rows = spec.map_height();
    let pixel_m =
        body.ellipsoid().min_radius() * (spec.region.north - spec.region.south).to_radians() / f64::from(rows);
    let depth = depth_for_spacing(&ground, pixel_m);
    // A band of rows about one tile tall reuses each tile it reads while
    // the tiles kept stay a band's worth, not the whole body's at a deep
    // depth (a 16384-pixel map would otherwise hold gigabytes).
    let band = (body.sample_spacing_m(depth) * 128.0 / pixel_m).ceil().max(1.0) as u32;
    let mut reader = GroundReader::new(&ground, depth);
    let mut heights = Vec::with_capacity(spec.width as usize * rows as usize);
    let mut wet = Vec::with_capacity(heights.capacity());
    each_pixel(spec, |x, y, at| {
        if x == 0 && y % band == 0 {
            reader = GroundReader::new(&ground, depth);
        }
        let (h, class) = reader.height_and_class(at).with_context(|| format!("reading the ground at depth {depth}"))?;
        heights.push(h);
        wet.push(class.map_or(h < 0.0, |c| WATER_CLASSES.contains(&c)));
        Ok(())
    })?;
    Ok((heights, wet, depth))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixels_and_points_agree_across_the_antimeridian() {
        let spec = MapSpec {
            what: What::Provenance,
            region: Coverage { south: -10.0, west: 170.0, north: 10.0, east: -170.0 },
            width: 200,
            detail: false,
            range: None,
        };
        assert_eq!(spec.map_height(), 200);
        let (lat, lon) = spec.point(150, 20);
        assert!(lon < 0.0 && lon > -180.0 && lat > 0.0, "{lat} {lon}");
        assert_eq!(spec.pixel_of(lat, lon), Some((150, 20)));
        assert_eq!(spec.pixel_of(0.0, 0.0), None);
        let global = MapSpec { region: Coverage::GLOBAL, width: 1024, ..spec };
        assert_eq!(global.map_height(), 512);
    }

    #[test]
    fn an_overview_frames_a_regional_box_with_a_margin_and_keeps_its_longer_side() {
        let global = overview(What::Provenance, &Coverage::GLOBAL, 720);
        assert_eq!((global.region, global.width, global.map_height()), (Coverage::GLOBAL, 720, 360));
        let alps = overview(What::Provenance, &Coverage { south: 44.0, west: 5.0, north: 48.0, east: 12.0 }, 720);
        assert_eq!(alps.region, Coverage { south: 43.0, west: 3.25, north: 49.0, east: 13.75 });
        assert_eq!(alps.width, 720);
        // Across the antimeridian, and taller than wide.
        let tall = Coverage { south: -40.0, west: 178.0, north: 40.0, east: -178.0 };
        let o = overview(What::Provenance, &tall, 720);
        assert_eq!(o.region, Coverage { south: -60.0, west: 177.0, north: 60.0, east: -177.0 });
        assert_eq!((o.width, o.map_height()), (36, 720));
        assert!(o.region.validate().is_ok());
        let wide = Coverage { south: 0.0, west: -179.0, north: 10.0, east: 179.0 };
        assert_eq!(overview(What::Provenance, &wide, 720).region.west, -180.0);
        // A 0.04 degree DEM fills its map, with a quarter of its size around.
        let park = Coverage { south: 36.50, west: -118.60, north: 36.54, east: -118.56 };
        let o = overview(What::Elevation, &park, 720);
        assert!((o.region.south - 36.49).abs() < 1e-9 && (o.region.east + 118.55).abs() < 1e-9, "{:?}", o.region);
    }

    #[test]
    fn a_stacks_default_map_frames_its_regional_packs_above_the_last_global_one() {
        let alps = Coverage { south: 44.0, west: 5.0, north: 48.0, east: 12.0 };
        let park = Coverage { south: 46.5, west: 7.5, north: 46.6, east: 7.6 };
        assert_eq!(stack_coverage(&[park]), park);
        assert_eq!(stack_coverage(&[park, alps]), alps);
        assert_eq!(stack_coverage(&[Coverage::GLOBAL, park]), park, "a regional top over a global base");
        assert_eq!(stack_coverage(&[Coverage::GLOBAL, park, alps]), alps);
        assert_eq!(stack_coverage(&[alps, Coverage::GLOBAL]), Coverage::GLOBAL, "a global top");
        assert_eq!(stack_coverage(&[Coverage::GLOBAL]), Coverage::GLOBAL);
        let pacific = Coverage { south: -5.0, west: 179.0, north: 5.0, east: -179.0 };
        let both = stack_coverage(&[pacific, park]);
        assert_eq!((both.south, both.west, both.north, both.east), (-5.0, -180.0, 46.6, 180.0));
    }
}
