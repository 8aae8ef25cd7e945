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

use anyhow::{Context, Result};
use planet_terrain::ground::query::{GroundReader, depth_for_spacing};
use planet_terrain::ground::{GroundStack, OriginMemo, Provenance, StackedPack, WATER_CLASSES, locate};
use planet_terrain::pack::Coverage;
use planet_terrain::{Geodetic, HeightSource};

use crate::picture::{
    Legend, Picture, draw_legend, elevation_colour, legend_height, metres_label, ramp_colour, sampled,
};

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

pub const MEASURED: [u8; 3] = [40, 160, 70];
pub const RESAMPLED: [u8; 3] = [235, 170, 40];
pub const INVENTED: [u8; 3] = [200, 50, 50];
/// A void of a pack's DEM its bake filled, where no pack below shows through.
pub const FILLED: [u8; 3] = [150, 90, 200];
/// Measured by a pack below, seen through a void of a pack above.
pub const THROUGH_VOID: [u8; 3] = [60, 190, 190];
/// Where no pack stores a tile (depth and error maps).
pub const NO_DATA: [u8; 3] = [70, 70, 70];

/// Degrees of longitude a box spans, eastward from west (a box that
/// crosses the antimeridian has east < west; the global one spans 360).
pub fn lon_span(c: &Coverage) -> f64 {
    if c.east > c.west { c.east - c.west } else { c.east - c.west + 360.0 }
}

impl MapSpec {
    fn lon_span(&self) -> f64 {
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

fn each_pixel(spec: &MapSpec, mut f: impl FnMut(u32, u32, Geodetic) -> Result<()>) -> Result<()> {
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
fn read_heights(stack: &GroundStack, spec: &MapSpec) -> Result<(Vec<f64>, Vec<bool>, u8)> {
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

/// The hypsometric palette's metres a height is drawn with when the ramp
/// spans `lo..hi`: the sea's colours over the depths below 0 m, the land's
/// over the heights above (all of the land's for ground that never reaches
/// the sea), so a park 2,300-4,300 m up uses the whole land ramp rather
/// than a few shades of it, and the coast stays where the colours turn.
pub fn palette_metres(h: f64, (lo, hi): (f64, f64)) -> f64 {
    const DEEPEST: f64 = -8000.0;
    const HIGHEST: f64 = 5000.0;
    let t = |a: f64, b: f64| if b - a > 1e-6 { ((h - a) / (b - a)).clamp(0.0, 1.0) } else { 0.5 };
    if lo >= 0.0 {
        HIGHEST * t(lo, hi)
    } else if hi <= 0.0 {
        DEEPEST * (1.0 - t(lo, hi))
    } else if h < 0.0 {
        DEEPEST * (h / lo).min(1.0)
    } else {
        HIGHEST * (h / hi).min(1.0)
    }
}

/// The lowest and highest finite height of the pixels inside the packs'
/// coverage (of all pixels when none is inside; 0..1 m when none is finite).
fn fitted_range(heights: &[f64], covered: &dyn Fn(f64, f64) -> bool, spec: &MapSpec) -> (f64, f64) {
    let width = spec.width as usize;
    let inside: Vec<f64> = heights
        .iter()
        .enumerate()
        .filter(|&(k, _)| {
            let (lat, lon) = spec.point((k % width) as u32, (k / width) as u32);
            covered(lat, lon)
        })
        .map(|(_, &h)| h)
        .collect();
    let fitted = if inside.is_empty() { heights } else { &inside[..] };
    let finite = || fitted.iter().copied().filter(|h| h.is_finite());
    let lowest = finite().fold(f64::INFINITY, f64::min);
    let highest = finite().fold(f64::NEG_INFINITY, f64::max);
    if lowest <= highest { (lowest, highest) } else { (0.0, 1.0) }
}

/// The elevation map. The ramp is fitted to the heights inside the packs'
/// coverage (`covered`): the ellipsoid's 0 m that stands in around a
/// regional pack is not ground it holds (the Sierra's ramp started at 0 m).
fn elevation(
    heights: &[f64],
    covered: &dyn Fn(f64, f64) -> bool,
    depth: u8,
    spec: &MapSpec,
    picture: &mut Picture,
) -> Result<Legend> {
    let range = spec.range.unwrap_or_else(|| fitted_range(heights, covered, spec));
    for (k, &h) in heights.iter().enumerate() {
        let colour = elevation_colour(palette_metres(h, range));
        picture.put(k as i64 % i64::from(spec.width), k as i64 / i64::from(spec.width), colour);
    }
    let (lo, hi) = range;
    let mut marks = vec![lo, hi];
    if lo < 0.0 && hi > 0.0 {
        marks.insert(1, 0.0);
    }
    let span = (hi - lo).max(1e-6);
    let ticks = marks.into_iter().map(|m| ((m - lo) / span, metres_label(m))).collect();
    let how = if spec.range.is_some() { "RAMP AS GIVEN" } else { "RAMP FITTED" };
    Ok(Legend::Bar {
        title: format!("ELEVATION M (DEPTH {depth}, {how})"),
        colours: sampled(256, |t| elevation_colour(palette_metres(lo + t * span, range))),
        ticks,
    })
}

fn provenance(stack: &GroundStack, spec: &MapSpec, picture: &mut Picture) -> Result<Legend> {
    // Every pixel is an independent point query of the shared stack, so
    // bands of rows are drawn on every core: the bake's report waits on
    // this picture after the pool has gone idle.
    let (width, rows) = (spec.width, spec.map_height());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, rows.max(1) as usize) as u32;
    let band_rows = rows.div_ceil(threads);
    let bands: Vec<Result<Vec<[u8; 3]>>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|band| {
                scope.spawn(move || {
                    let mut colours = Vec::with_capacity((band_rows * width) as usize);
                    // Neighbouring pixels nearly always share their tiles.
                    let mut memo = OriginMemo::default();
                    for y in band * band_rows..((band + 1) * band_rows).min(rows) {
                        for x in 0..width {
                            let (lat, lon) = spec.point(x, y);
                            let at = Geodetic::from_degrees(lat, lon, 0.0);
                            let origin =
                                stack.origin_at_with(at, &mut memo).context("reading where the ground comes from")?;
                            colours.push(match (origin.filled, origin.provenance) {
                                (Some(_), _) => FILLED,
                                (None, Provenance::Measured) if origin.through_void_of.is_some() => THROUGH_VOID,
                                (None, Provenance::Measured) => MEASURED,
                                (None, Provenance::Resampled { .. }) => RESAMPLED,
                                (None, Provenance::Invented) => INVENTED,
                            });
                        }
                    }
                    Ok(colours)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("a provenance band panicked")).collect()
    });
    for (band, colours) in (0u32..).zip(bands) {
        for (i, colour) in (0u32..).zip(colours?) {
            picture.put(i64::from(i % width), i64::from(band * band_rows + i / width), colour);
        }
    }
    Ok(provenance_legend())
}

/// The coast: pixels where water meets land toward the next pixel right or
/// below. Water is what the packs' surface classes say it is where they
/// hold classes (so a lake above sea level is outlined and a depression
/// below it is not), else ground below 0 m (the same reads the elevation
/// map colours, so the line agrees with it).
pub const COAST: [u8; 3] = [12, 12, 16];
/// Meridians and parallels, and their labels.
pub const GRATICULE: [u8; 3] = [235, 235, 235];

fn draw_coast(picture: &mut Picture, wet: &[bool], width: u32) {
    let width = width as usize;
    for k in 0..wet.len() {
        let (x, y) = (k % width, k / width);
        let right = x + 1 < width && wet[k + 1] != wet[k];
        let below = k + width < wet.len() && wet[k + width] != wet[k];
        if right || below {
            picture.put(x as i64, y as i64, COAST);
        }
    }
}

/// Degrees between graticule lines for a box `span` degrees across: the
/// round step that draws at most eight lines.
pub fn graticule_step(span: f64) -> f64 {
    const STEPS: [f64; 16] =
        [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 45.0];
    STEPS.into_iter().find(|step| span / step <= 8.0).unwrap_or(90.0)
}

/// Dotted meridians and parallels every [`graticule_step`] degrees, each
/// labelled where it meets the map's left or top edge.
fn draw_graticule(picture: &mut Picture, spec: &MapSpec) {
    let (width, rows) = (spec.width, spec.map_height());
    let step = graticule_step(spec.lon_span().max(spec.region.north - spec.region.south));
    let label = |value: f64, positive: char, negative: char| {
        let text = format!("{}", (value.abs() * 1000.0).round() / 1000.0);
        if value == 0.0 { text } else { format!("{text}{}", if value > 0.0 { positive } else { negative }) }
    };
    let mut lat = (spec.region.south / step).ceil() * step;
    while lat <= spec.region.north {
        if let Some((_, y)) = spec.pixel_of(lat, spec.point(0, 0).1) {
            for x in (0..width).step_by(2) {
                picture.put(i64::from(x), i64::from(y), GRATICULE);
            }
            // Not where the meridians' labels run along the top.
            if y >= 12 {
                picture.text(2, i64::from(y) + 2, 1, &label(lat, 'N', 'S'), GRATICULE);
            }
        }
        lat += step;
    }
    let mut east = ((spec.region.west / step).ceil() * step - spec.region.west).rem_euclid(360.0);
    while east < spec.lon_span() {
        let lon = spec.region.west + east;
        let lon = if lon > 180.0 { lon - 360.0 } else { lon };
        if let Some((x, _)) = spec.pixel_of(spec.point(0, 0).0, lon) {
            for y in (0..rows).step_by(2) {
                picture.put(i64::from(x), i64::from(y), GRATICULE);
            }
            picture.text(i64::from(x) + 2, 2, 1, &label(lon, 'E', 'W'), GRATICULE);
        }
        east += step;
    }
}

/// The outline of a patched pack's last patch on a provenance map.
pub const PATCHED: [u8; 3] = [70, 200, 255];

/// Outlines the box of each pack's last region patch (the header keeps the
/// last one's box and the count, not every box) and names it in the
/// legend: a patched pack's provenance map shows where it was patched.
fn draw_last_patches(picture: &mut Picture, packs: &[StackedPack], spec: &MapSpec, legend: &mut Legend) {
    let patched: Vec<(Coverage, u32)> = packs
        .iter()
        .filter_map(|p| {
            let history = p.source.pack().header().patches;
            history.last.map(|last| (last.region, history.count))
        })
        .collect();
    let (width, rows) = (spec.width, spec.map_height());
    for (region, _) in &patched {
        let inside = |x: i64, y: i64| {
            (0..i64::from(width)).contains(&x) && (0..i64::from(rows)).contains(&y) && {
                let (lat, lon) = spec.point(x as u32, y as u32);
                region.contains(lat, lon)
            }
        };
        let mut drawn = 0usize;
        for y in 0..i64::from(rows) {
            for x in 0..i64::from(width) {
                if inside(x, y) && !(inside(x - 1, y) && inside(x + 1, y) && inside(x, y - 1) && inside(x, y + 1)) {
                    picture.put(x, y, PATCHED);
                    drawn += 1;
                }
            }
        }
        // A box a few pixels across or less (a city's patch on a world map)
        // is marked by a square seven pixels across around its centre, so
        // the patch the legend names can be found.
        let centre = spec.pixel_of(0.5 * (region.south + region.north), region.west + 0.5 * lon_span(region));
        if let Some((cx, cy)) = centre.filter(|_| drawn < 16) {
            let (cx, cy) = (i64::from(cx), i64::from(cy));
            for d in -3..=3 {
                for (x, y) in [(cx + d, cy - 3), (cx + d, cy + 3), (cx - 3, cy + d), (cx + 3, cy + d)] {
                    picture.put(x, y, PATCHED);
                }
            }
        }
    }
    if let (Legend::Swatches { items, .. }, Some(count)) = (legend, patched.iter().map(|p| p.1).max()) {
        items.push((PATCHED, format!("LAST PATCH ({count} IN ALL)")));
    }
}

pub fn provenance_legend() -> Legend {
    Legend::Swatches {
        title: "PROVENANCE".into(),
        items: vec![
            (MEASURED, "MEASURED".into()),
            (THROUGH_VOID, "MEASURED BELOW, THROUGH A VOID ABOVE".into()),
            (RESAMPLED, "RESAMPLED".into()),
            (FILLED, "VOID FILLED BY THE BAKE".into()),
            (INVENTED, "INVENTED (NO PACK)".into()),
        ],
    }
}

/// The deepest stored tile over a point among the packs whose box holds it
/// (the topmost on a tie): its depth and geometric error.
fn deepest_stored(packs: &[StackedPack], at: Geodetic, lat: f64, lon: f64) -> Result<Option<(u8, f64)>> {
    let mut best: Option<(u8, f64)> = None;
    for pack in packs.iter().rev() {
        let pack = pack.source.pack();
        let header = pack.header();
        if !header.coverage.contains(lat, lon) {
            continue;
        }
        let (tile, _, _) = locate(&header.body, at, header.max_depth);
        if let Some(entry) = pack.deepest_stored_ancestor(tile)? {
            let depth = entry.tile().depth();
            if best.is_none_or(|(d, _)| depth > d) {
                best = Some((depth, f64::from(entry.geometric_error)));
            }
        }
    }
    Ok(best)
}

fn stored(packs: &[StackedPack], spec: &MapSpec, picture: &mut Picture) -> Result<Legend> {
    let mut cells = Vec::with_capacity(spec.width as usize * spec.map_height() as usize);
    each_pixel(spec, |_, _, at| {
        let (lat, lon) = (at.latitude.to_degrees(), at.longitude.to_degrees());
        cells.push(deepest_stored(packs, at, lat, lon)?);
        Ok(())
    })?;
    let found = || cells.iter().flatten();
    let uncovered = cells.iter().any(Option::is_none);
    match spec.what {
        What::Depth => {
            let lo = found().map(|c| c.0).min().unwrap_or(0);
            let hi = found().map(|c| c.0).max().unwrap_or(0);
            let colour = move |d: u8| ramp_colour(if hi > lo { f64::from(d - lo) / f64::from(hi - lo) } else { 0.5 });
            for (k, cell) in cells.iter().enumerate() {
                let c = cell.map_or(NO_DATA, |(d, _)| colour(d));
                picture.put(k as i64 % i64::from(spec.width), k as i64 / i64::from(spec.width), c);
            }
            let mut items: Vec<([u8; 3], String)> = (lo..=hi).map(|d| (colour(d), d.to_string())).collect();
            if uncovered {
                items.push((NO_DATA, "NONE".into()));
            }
            Ok(Legend::Swatches { title: "STORED DEPTH".into(), items })
        }
        _ => {
            // Errors span decades (0 m for measured leaves to kilometres at
            // the roots), so the scale is logarithmic from the smallest
            // positive error; a zero error takes the scale's low end.
            let positive = || found().map(|c| c.1).filter(|e| *e > 0.0);
            let lo = positive().fold(f64::INFINITY, f64::min);
            let lo = if lo.is_finite() { lo } else { 0.01 };
            let hi = positive().fold(lo * 10.0, f64::max);
            let (l0, l1) = (lo.log10(), hi.log10());
            let t = move |e: f64| ((e.max(lo).log10() - l0) / (l1 - l0)).clamp(0.0, 1.0);
            for (k, cell) in cells.iter().enumerate() {
                let c = cell.map_or(NO_DATA, |(_, e)| ramp_colour(t(e)));
                picture.put(k as i64 % i64::from(spec.width), k as i64 / i64::from(spec.width), c);
            }
            let mid = 10f64.powf(0.5 * (l0 + l1));
            let ticks = vec![(0.0, metres_label(lo)), (t(mid), metres_label(mid)), (1.0, metres_label(hi))];
            let title = if uncovered { "GEOMETRIC ERROR M, LOG (GREY: NONE)" } else { "GEOMETRIC ERROR M, LOG" };
            Ok(Legend::Bar { title: title.into(), colours: sampled(256, ramp_colour), ticks })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pack patched three times, the last over 10..30 N, 20..50 E: its
    /// provenance map outlines that box and names it in the legend.
    #[test]
    fn a_patched_packs_provenance_map_outlines_its_last_patch() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("p.planetpack");
        planet_terrain::testing::write_procedural_pack(&path, 1).expect("a pack");
        // The header a patch leaves: its count, the last box (f32) and inputs.
        let mut bytes = std::fs::read(&path).expect("read");
        bytes[212..216].copy_from_slice(&3u32.to_le_bytes());
        for (k, v) in [10.0f32, 20.0, 30.0, 50.0].into_iter().enumerate() {
            bytes[216 + 4 * k..220 + 4 * k].copy_from_slice(&v.to_le_bytes());
        }
        bytes[232..248].fill(0xab);
        planet_terrain::testing::refresh_checksums(&mut bytes);
        std::fs::write(&path, &bytes).expect("write");
        let pack = planet_terrain::pack::Pack::open(&path).expect("a valid patched header");
        let source = planet_terrain::ground::PackSource::new(std::sync::Arc::new(pack));
        let packs = vec![StackedPack { name: "p".into(), source }];
        let spec = MapSpec { what: What::Provenance, region: Coverage::GLOBAL, width: 360, detail: false, range: None };
        let picture = render(&packs, &spec).expect("a map");
        let at = |lat: f64, lon: f64| {
            let (x, y) = spec.pixel_of(lat, lon).expect("on the map");
            picture.pixel(x, y)
        };
        assert_eq!(at(10.2, 37.3), PATCHED, "the box's south edge");
        assert_eq!(at(21.3, 49.8), PATCHED, "its east edge");
        assert_ne!(at(21.3, 37.3), PATCHED, "not its inside");
        assert_ne!(at(21.3, 60.3), PATCHED, "nor outside it");
        let legend = (spec.map_height()..picture.height).flat_map(|y| (0..360).map(move |x| (x, y)));
        assert!(legend.clone().any(|(x, y)| picture.pixel(x, y) == PATCHED), "the legend names the patch");

        // Regression (#32): a patch under a pixel wide vanished at world
        // scale. Now a square marks it.
        for (k, v) in [45.01f32, 7.01, 45.02, 7.02].into_iter().enumerate() {
            bytes[216 + 4 * k..220 + 4 * k].copy_from_slice(&v.to_le_bytes());
        }
        planet_terrain::testing::refresh_checksums(&mut bytes);
        std::fs::write(&path, &bytes).expect("write");
        let pack = planet_terrain::pack::Pack::open(&path).expect("a valid patched header");
        let source = planet_terrain::ground::PackSource::new(std::sync::Arc::new(pack));
        let picture = render(&[StackedPack { name: "p".into(), source }], &spec).expect("a map");
        let (x, y) = spec.pixel_of(45.015, 7.015).expect("on the map");
        let marked = (-4..=4i64)
            .flat_map(|dy| (-4..=4i64).map(move |dx| (dx, dy)))
            .filter(|&(dx, dy)| picture.pixel((i64::from(x) + dx) as u32, (i64::from(y) + dy) as u32) == PATCHED)
            .count();
        assert!(marked >= 20, "a small patch is marked where it lies ({marked} pixels)");
    }

    /// A map of procedural ground with sea and land: dotted meridians and
    /// parallels every 45 degrees across the globe, and the coast drawn
    /// exactly where the water the pack's classes name meets land.
    #[test]
    fn a_map_draws_its_coast_and_a_graticule() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("p.planetpack");
        planet_terrain::testing::write_procedural_pack(&path, 2).expect("a pack");
        let pack = planet_terrain::pack::Pack::open(&path).expect("open");
        let source = planet_terrain::ground::PackSource::new(std::sync::Arc::new(pack));
        let packs = vec![StackedPack { name: "p".into(), source }];
        let spec = MapSpec { what: What::Elevation, region: Coverage::GLOBAL, width: 360, detail: false, range: None };
        assert_eq!(graticule_step(15.0), 2.0);
        assert_eq!(graticule_step(360.0), 45.0);
        let picture = render(&packs, &spec).expect("a map");
        let stack = GroundStack::of_packs(packs.clone()).expect("a stack").expect("one pack");
        let (heights, wet_by_class, _) = read_heights(&stack, &spec).expect("heights");
        let (width, rows) = (spec.width, spec.map_height());
        // A parallel and a meridian, away from their labels.
        let (_, y) = spec.pixel_of(45.0, 10.0).expect("inside");
        let (x, _) = spec.pixel_of(10.0, -90.0).expect("inside");
        assert_eq!(picture.pixel(100, y), GRATICULE, "the 45 N parallel");
        assert_eq!(picture.pixel(x, 120), GRATICULE, "the 90 W meridian");
        // The pack's classes say ocean where its stored samples are below
        // 0 m; read at the nearest sample rather than interpolated, they
        // cover the same share of the map as the heights' sign (a lone low
        // sample can be water where the interpolated height is not).
        let share = |wet: &mut dyn Iterator<Item = bool>| wet.filter(|&w| w).count() as f64 / heights.len() as f64;
        let (by_class, by_height) =
            (share(&mut wet_by_class.iter().copied()), share(&mut heights.iter().map(|&h| h < 0.0)));
        assert!((by_class - by_height).abs() < 0.01, "water: {by_class} of the map by class, {by_height} by height");
        let wet = |x: u32, y: u32| wet_by_class[(y * width + x) as usize];
        let mut coast = 0;
        for y in 0..rows {
            for x in 0..width {
                let crosses =
                    (x + 1 < width && wet(x + 1, y) != wet(x, y)) || (y + 1 < rows && wet(x, y + 1) != wet(x, y));
                let colour = picture.pixel(x, y);
                if colour != GRATICULE {
                    assert_eq!(colour == COAST, crosses, "({x}, {y})");
                }
                coast += usize::from(crosses);
            }
        }
        assert!(coast > 50, "the ground has a coast here ({coast} pixels)");
    }

    /// Regression (#32, item 3): the coast was the 0 m contour even where a
    /// pack's classes say otherwise. Here the cube face centred on 0 N 0 E
    /// is all water 100 m above sea level (a lake), every other face land
    /// at the same height: the coast runs along that face's edges only.
    #[test]
    fn the_coast_follows_the_packs_water_classes_where_it_holds_them() {
        use planet_terrain::pack::{Codec, PackSpec, PackWriter, TileContent};
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("lake.planetpack");
        let spec = PackSpec {
            body: planet_terrain::Body::earth(),
            tier: "test".into(),
            codec: Codec::HeightsClasses,
            height_data_depth: 0,
            colour_data_depth: 0,
            coverage: Coverage::GLOBAL,
            fingerprint: [1; 32],
            compression_level: 1,
        };
        let tiles: Vec<_> = (0..6u8).map(|f| planet_terrain::TileAddress::new(f, 0, 0, 0).expect("a root")).collect();
        let writer = PackWriter::create(&path, spec, tiles.iter().copied()).expect("a writer");
        let n = planet_terrain::geo::address::TILE_STORED_SAMPLE_COUNT;
        let lake = locate(&planet_terrain::Body::earth(), Geodetic::from_degrees(0.0, 0.0, 0.0), 0).0.face();
        for &tile in &tiles {
            let class = if tile.face() == lake { WATER_CLASSES[0] } else { 2 };
            let content = TileContent {
                heights: &vec![100.0; n],
                classes: Some(&vec![class; n]),
                colour: None,
                geometric_error: 0.0,
                measured: true,
                voids: None,
            };
            writer.put(tile, &content).expect("put");
        }
        writer.finish().expect("finish");
        let pack = planet_terrain::pack::Pack::open(&path).expect("open");
        let source = planet_terrain::ground::PackSource::new(std::sync::Arc::new(pack));
        let packs = vec![StackedPack { name: "lake".into(), source }];
        let spec = MapSpec { what: What::Elevation, region: Coverage::GLOBAL, width: 360, detail: false, range: None };
        let picture = render(&packs, &spec).expect("a map");
        let coast: Vec<(u32, u32)> = (0..spec.map_height())
            .flat_map(|y| (0..spec.width).map(move |x| (x, y)))
            .filter(|&(x, y)| picture.pixel(x, y) == COAST)
            .collect();
        assert!(coast.len() > 100, "the lake's shore is drawn ({} pixels)", coast.len());
        // The face spans 45 degrees each way at the equator: its shore
        // crosses the equator near 45 W and 45 E.
        let near = |lon: f64| {
            let (x, y) = spec.pixel_of(0.5, lon).expect("inside");
            coast.iter().any(|&(cx, cy)| cx.abs_diff(x) <= 1 && cy.abs_diff(y) <= 1)
        };
        assert!(near(-45.0) && near(45.0), "the shore runs along the face's edges");
        assert!(!near(135.0) && !near(-135.0), "land meets land elsewhere: no coast");
    }

    /// Regression (#32): a regional pack's ramp was fitted over the map's
    /// margin too, where the ellipsoid's 0 m stands in, so a park 2,300 to
    /// 4,300 m up started its ramp at 0 m.
    #[test]
    fn the_ramp_fits_the_heights_inside_the_packs_coverage() {
        let region = Coverage { south: 0.0, west: 0.0, north: 10.0, east: 10.0 };
        let spec = MapSpec { what: What::Elevation, region, width: 10, detail: false, range: None };
        let park = Coverage { south: 2.0, west: 2.0, north: 8.0, east: 8.0 };
        let heights: Vec<f64> = (0..spec.map_height())
            .flat_map(|y| (0..10).map(move |x| (x, y)))
            .map(|(x, y)| {
                let (lat, lon) = spec.point(x, y);
                if park.contains(lat, lon) { 2300.0 + 200.0 * lon.floor() } else { 0.0 }
            })
            .collect();
        let covered = |lat: f64, lon: f64| park.contains(lat, lon);
        let (lo, hi) = fitted_range(&heights, &covered, &spec);
        assert!(lo >= 2300.0 && hi > lo, "fitted to the park, not its margin: {lo}..{hi}");
        assert_eq!(fitted_range(&heights, &|_, _| true, &spec).0, 0.0, "a global pack's ramp takes every pixel");
    }

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
