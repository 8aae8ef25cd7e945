//! Editable ground: small layer records composed over a height source.
//!
//! The key decision: an edit is a record (a crater is a centre, a radius and
//! a profile), not a raster, so it replicates, saves and undoes as bytes.
//! Every record has an explicit order, unique within its stack; a duplicate
//! is refused, never resolved, and layers apply in ascending order, so the
//! composed ground is a pure function of the *set* of layers: the same set
//! inserted in any order gives bit-identical tiles. Distances are chords
//! between points on the ellipsoid, computed in 3D, so a footprint is the
//! same on either side of a cube-face edge or the antimeridian. Every
//! mutation journals the footprints it touched, for the renderer to
//! re-stage exactly the resident tiles they cover.

mod scene;

pub use scene::{Scene, SceneError};

use std::collections::BTreeMap;
use std::sync::Mutex;

use glam::DVec3;

use planet_geo::address::TileAddress;
use planet_geo::body::{Ellipsoid, Geodetic};
use planet_geo::bounds::BoundingSphere;

/// A flatten target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// This elevation, metres.
    Elevation(f64),
    /// The mean of the ground beneath the pad (everything of lower order).
    FootprintMean,
}

/// What a layer does.
#[derive(Clone, Debug, PartialEq)]
pub enum LayerKind {
    /// A bowl `depth_m` deep at its centre rising to a rim `rim_m` high at
    /// `radius_m`, the rim falling away to nothing at twice the radius.
    Crater { lat: f64, lon: f64, radius_m: f64, depth_m: f64, rim_m: f64 },
    /// Flat at the target within `radius_m`, blending back to the ground
    /// over `blend_m` beyond it.
    Flatten { lat: f64, lon: f64, radius_m: f64, target: Target, blend_m: f64 },
    /// A smooth (raised-cosine) raise, or lower with a negative amount.
    Raise { lat: f64, lon: f64, radius_m: f64, amount_m: f64 },
    /// Flat at `elevation_m` inside a polygon of (lat, lon) vertices,
    /// blending back over `blend_m` outside it.
    PolygonFlatten { vertices: Vec<(f64, f64)>, elevation_m: f64, blend_m: f64 },
}

/// One record of a stack.
#[derive(Clone, Debug, PartialEq)]
pub struct Layer {
    pub order: u32,
    pub kind: LayerKind,
}

/// Why a stack refused a mutation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LayerError {
    #[error("a layer with order {0} is already in the stack (orders are unique; refused, not resolved)")]
    DuplicateOrder(u32),
    #[error("no layer with order {0}")]
    NoSuchOrder(u32),
    #[error("layer {order}: {reason}")]
    Invalid { order: u32, reason: String },
}

/// The region a layer can change: every point within `radius` (chord,
/// metres) of `centre` on the ellipsoid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Footprint {
    pub centre: DVec3,
    pub radius: f64,
}

impl Footprint {
    /// True if any point of `tile` (between its elevation bounds) can lie in
    /// the footprint: the footprint's sphere meets the tile's bounding sphere.
    pub fn touches(&self, ellipsoid: &Ellipsoid, tile: TileAddress, min_elevation: f64, max_elevation: f64) -> bool {
        let sphere = BoundingSphere::of_tile(ellipsoid, tile, min_elevation.min(0.0), max_elevation.max(0.0));
        (sphere.centre - self.centre).length() <= sphere.radius + self.radius
    }
}

fn surface(ellipsoid: &Ellipsoid, lat: f64, lon: f64) -> DVec3 {
    ellipsoid.geodetic_to_point(Geodetic::from_degrees(lat, lon, 0.0))
}

fn smoothstep(t: f64) -> f64 {
    let t = t.clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

fn check(order: u32, ok: bool, reason: &str) -> Result<(), LayerError> {
    if ok { Ok(()) } else { Err(LayerError::Invalid { order, reason: reason.to_owned() }) }
}

impl Layer {
    /// Refuses records that would not describe ground: non-finite numbers,
    /// latitudes off the globe, non-positive radii, polygons of fewer than
    /// three vertices.
    pub fn validate(&self) -> Result<(), LayerError> {
        let o = self.order;
        let place = |lat: f64, lon: f64| (-90.0..=90.0).contains(&lat) && (-360.0..=360.0).contains(&lon);
        match &self.kind {
            LayerKind::Crater { lat, lon, radius_m, depth_m, rim_m } => {
                check(o, place(*lat, *lon), "latitude/longitude off the globe")?;
                check(o, radius_m.is_finite() && *radius_m > 0.0, "radius must be positive")?;
                check(o, depth_m.is_finite() && rim_m.is_finite(), "depth and rim must be finite")
            }
            LayerKind::Flatten { lat, lon, radius_m, target, blend_m } => {
                check(o, place(*lat, *lon), "latitude/longitude off the globe")?;
                check(o, radius_m.is_finite() && *radius_m > 0.0, "radius must be positive")?;
                check(o, blend_m.is_finite() && *blend_m >= 0.0, "blend must be >= 0")?;
                check(o, !matches!(target, Target::Elevation(e) if !e.is_finite()), "elevation must be finite")
            }
            LayerKind::Raise { lat, lon, radius_m, amount_m } => {
                check(o, place(*lat, *lon), "latitude/longitude off the globe")?;
                check(o, radius_m.is_finite() && *radius_m > 0.0, "radius must be positive")?;
                check(o, amount_m.is_finite(), "amount must be finite")
            }
            LayerKind::PolygonFlatten { vertices, elevation_m, blend_m } => {
                check(o, vertices.len() >= 3, "a polygon needs three vertices or more")?;
                check(o, vertices.iter().all(|&(a, b)| place(a, b)), "a vertex is off the globe")?;
                check(o, elevation_m.is_finite(), "elevation must be finite")?;
                check(o, blend_m.is_finite() && *blend_m >= 0.0, "blend must be >= 0")
            }
        }
    }

    /// The region this layer can change.
    pub fn footprint(&self, ellipsoid: &Ellipsoid) -> Footprint {
        match &self.kind {
            LayerKind::Crater { lat, lon, radius_m, .. } => {
                Footprint { centre: surface(ellipsoid, *lat, *lon), radius: 2.0 * radius_m }
            }
            LayerKind::Flatten { lat, lon, radius_m, blend_m, .. } => {
                Footprint { centre: surface(ellipsoid, *lat, *lon), radius: radius_m + blend_m }
            }
            LayerKind::Raise { lat, lon, radius_m, .. } => {
                Footprint { centre: surface(ellipsoid, *lat, *lon), radius: *radius_m }
            }
            LayerKind::PolygonFlatten { vertices, blend_m, .. } => {
                let points: Vec<DVec3> = vertices.iter().map(|&(a, b)| surface(ellipsoid, a, b)).collect();
                let centre = points.iter().copied().sum::<DVec3>() / points.len() as f64;
                let centre = ellipsoid.surface_point_from_normal(ellipsoid.surface_point_to_geodetic(centre).normal());
                let radius = points.iter().map(|p| (*p - centre).length()).fold(0.0, f64::max);
                Footprint { centre, radius: radius + blend_m + 1e-3 * radius }
            }
        }
    }
}

/// Where a flatten pad's "footprint mean" is measured: its centre and rings
/// at a quarter, half, three quarters and all of its radius (8, 16, 24, 32
/// points), as surface positions. The bake and the height function both use
/// these, so a pack baked with a scene matches the scene applied at runtime.
pub fn pad_sample_points(ellipsoid: &Ellipsoid, lat: f64, lon: f64, radius_m: f64) -> Vec<Geodetic> {
    let centre = Geodetic::from_degrees(lat, lon, 0.0);
    let enu = planet_geo::body::east_north_up(centre);
    let origin = ellipsoid.geodetic_to_point(centre);
    let mut points = vec![centre];
    for ring in 1..=4 {
        let r = radius_m * f64::from(ring) / 4.0;
        for k in 0..(8 * ring) {
            let a = std::f64::consts::TAU * f64::from(k) / f64::from(8 * ring);
            let g = ellipsoid.point_to_geodetic(origin + (enu.col(0) * a.cos() + enu.col(1) * a.sin()) * r);
            points.push(Geodetic { height: 0.0, ..g });
        }
    }
    points
}

/// A polygon prepared for point queries in the tangent plane at its centre
/// (a gnomonic projection keeps great-circle edges straight).
struct PreparedPolygon {
    origin: DVec3,
    east: DVec3,
    north: DVec3,
    up: DVec3,
    vertices: Vec<(f64, f64)>,
}

impl PreparedPolygon {
    fn new(ellipsoid: &Ellipsoid, centre: DVec3, vertices: &[(f64, f64)]) -> PreparedPolygon {
        let g = ellipsoid.surface_point_to_geodetic(centre);
        let enu = planet_geo::body::east_north_up(g);
        let mut p = PreparedPolygon {
            origin: centre,
            east: enu.col(0),
            north: enu.col(1),
            up: enu.col(2),
            vertices: Vec::new(),
        };
        p.vertices = vertices.iter().map(|&(a, b)| p.project(surface(ellipsoid, a, b))).collect();
        p
    }

    /// Projects through the body centre onto the tangent plane (metres).
    fn project(&self, point: DVec3) -> (f64, f64) {
        let d = point.normalize();
        let scale = self.origin.dot(self.up) / d.dot(self.up);
        let q = d * scale - self.origin;
        (q.dot(self.east), q.dot(self.north))
    }

    /// Signed distance in the plane: negative inside.
    fn signed_distance(&self, point: DVec3) -> f64 {
        let (x, y) = self.project(point);
        let n = self.vertices.len();
        let (mut inside, mut best) = (false, f64::INFINITY);
        for k in 0..n {
            let (ax, ay) = self.vertices[k];
            let (bx, by) = self.vertices[(k + 1) % n];
            if (ay > y) != (by > y) && x < (bx - ax) * (y - ay) / (by - ay) + ax {
                inside = !inside;
            }
            let (ex, ey) = (bx - ax, by - ay);
            let t = (((x - ax) * ex + (y - ay) * ey) / (ex * ex + ey * ey).max(1e-30)).clamp(0.0, 1.0);
            best = best.min(((x - ax - t * ex).powi(2) + (y - ay - t * ey).powi(2)).sqrt());
        }
        if inside { -best } else { best }
    }
}

/// The ordered set of layers of one body, with the journal of what its
/// mutations touched.
#[derive(Debug, Default)]
pub struct LayerStack {
    layers: BTreeMap<u32, Layer>,
    journal: Vec<Footprint>,
    /// Resolved `FootprintMean` targets, by order; cleared on every mutation.
    means: Mutex<BTreeMap<u32, f64>>,
}

impl Clone for LayerStack {
    fn clone(&self) -> Self {
        LayerStack { layers: self.layers.clone(), journal: self.journal.clone(), means: Mutex::new(BTreeMap::new()) }
    }
}

impl PartialEq for LayerStack {
    fn eq(&self, other: &Self) -> bool {
        self.layers == other.layers
    }
}

impl LayerStack {
    pub fn new() -> LayerStack {
        LayerStack::default()
    }

    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    pub fn len(&self) -> usize {
        self.layers.len()
    }

    /// The layers in the order they apply.
    pub fn layers(&self) -> impl Iterator<Item = &Layer> {
        self.layers.values()
    }

    pub fn get(&self, order: u32) -> Option<&Layer> {
        self.layers.get(&order)
    }

    fn touched(&mut self, ellipsoid: &Ellipsoid, layer: &Layer) {
        self.journal.push(layer.footprint(ellipsoid));
        self.means.lock().expect("means lock").clear();
    }

    /// Adds a layer; refuses a duplicate order.
    pub fn insert(&mut self, ellipsoid: &Ellipsoid, layer: Layer) -> Result<(), LayerError> {
        layer.validate()?;
        if self.layers.contains_key(&layer.order) {
            return Err(LayerError::DuplicateOrder(layer.order));
        }
        self.touched(ellipsoid, &layer);
        self.layers.insert(layer.order, layer);
        Ok(())
    }

    /// Replaces the layer of the same order (its old and new footprints are
    /// both journaled).
    pub fn rewrite(&mut self, ellipsoid: &Ellipsoid, layer: Layer) -> Result<Layer, LayerError> {
        layer.validate()?;
        let old = self.layers.get(&layer.order).cloned().ok_or(LayerError::NoSuchOrder(layer.order))?;
        self.touched(ellipsoid, &old);
        self.touched(ellipsoid, &layer);
        self.layers.insert(layer.order, layer);
        Ok(old)
    }

    pub fn remove(&mut self, ellipsoid: &Ellipsoid, order: u32) -> Result<Layer, LayerError> {
        let old = self.layers.remove(&order).ok_or(LayerError::NoSuchOrder(order))?;
        self.touched(ellipsoid, &old);
        Ok(old)
    }

    /// Moves a layer to a new order; refuses an order already taken.
    pub fn reorder(&mut self, ellipsoid: &Ellipsoid, from: u32, to: u32) -> Result<(), LayerError> {
        if from == to {
            return self.layers.contains_key(&from).then_some(()).ok_or(LayerError::NoSuchOrder(from));
        }
        if self.layers.contains_key(&to) {
            return Err(LayerError::DuplicateOrder(to));
        }
        let mut layer = self.layers.remove(&from).ok_or(LayerError::NoSuchOrder(from))?;
        layer.order = to;
        self.touched(ellipsoid, &layer);
        self.layers.insert(to, layer);
        Ok(())
    }

    /// Takes the footprints touched since the last drain.
    pub fn drain_journal(&mut self) -> Vec<Footprint> {
        std::mem::take(&mut self.journal)
    }

    /// Applies every layer to the heights of samples at `points` (surface
    /// points on the ellipsoid), in ascending order. `mean_below` resolves a
    /// `FootprintMean` target from the ground under that layer.
    pub fn apply(
        &self,
        ellipsoid: &Ellipsoid,
        points: &[DVec3],
        heights: &mut [f64],
        mean_below: &dyn Fn(&Layer) -> f64,
    ) {
        for layer in self.layers.values() {
            let footprint = layer.footprint(ellipsoid);
            let near: Vec<usize> =
                (0..points.len()).filter(|&k| (points[k] - footprint.centre).length() <= footprint.radius).collect();
            if near.is_empty() {
                continue;
            }
            match &layer.kind {
                LayerKind::Crater { radius_m, depth_m, rim_m, .. } => {
                    for &k in &near {
                        let r = (points[k] - footprint.centre).length() / radius_m;
                        heights[k] += if r <= 1.0 {
                            -depth_m + (depth_m + rim_m) * r * r
                        } else {
                            rim_m * (1.0 - smoothstep(r - 1.0))
                        };
                    }
                }
                LayerKind::Flatten { radius_m, target, blend_m, .. } => {
                    let target = match target {
                        Target::Elevation(e) => *e,
                        Target::FootprintMean => {
                            let mut means = self.means.lock().expect("means lock");
                            *means.entry(layer.order).or_insert_with(|| mean_below(layer))
                        }
                    };
                    for &k in &near {
                        let beyond = ((points[k] - footprint.centre).length() - radius_m) / blend_m.max(1e-9);
                        let w = 1.0 - smoothstep(beyond);
                        heights[k] = heights[k] * (1.0 - w) + target * w;
                    }
                }
                LayerKind::Raise { radius_m, amount_m, .. } => {
                    for &k in &near {
                        let r = (points[k] - footprint.centre).length() / radius_m;
                        heights[k] += amount_m * 0.5 * (1.0 + (std::f64::consts::PI * r.min(1.0)).cos());
                    }
                }
                LayerKind::PolygonFlatten { vertices, elevation_m, blend_m } => {
                    let polygon = PreparedPolygon::new(ellipsoid, footprint.centre, vertices);
                    for &k in &near {
                        let w = 1.0 - smoothstep(polygon.signed_distance(points[k]) / blend_m.max(1e-9));
                        heights[k] = heights[k] * (1.0 - w) + elevation_m * w;
                    }
                }
            }
        }
    }

    /// The layers of lower order than `order`, as a stack (for resolving a
    /// footprint mean against the ground below a layer).
    pub fn below(&self, order: u32) -> LayerStack {
        LayerStack {
            layers: self.layers.range(..order).map(|(k, v)| (*k, v.clone())).collect(),
            ..LayerStack::default()
        }
    }
}
