//! Scene files: a body, the stack of packs a scene was authored against,
//! and its layers, as versioned JSON.
//!
//! The minimal interop shape is
//! `{"version": 1, "body": "earth", "layers": [{"kind": "crater", "order":
//! 1, "lat": .., "lon": .., "radius_m": .., "depth_m": .., "rim_m": ..}, ..]}`
//! with kinds `crater`, `flatten` (`elevation_m`, or `"target": "mean"`;
//! `blend_m`), `raise` (`amount_m`) and `polygon_flatten` (`vertices` as
//! `[[lat, lon], ..]`, `elevation_m`, `blend_m`). Optionally `pack` (one
//! pack) or `packs` (a stack, bottom first; written when there are several,
//! so a one-pack scene reads as it always did). Reading
//! refuses, with the layer's position, anything it cannot represent exactly:
//! another body, an unknown kind or field, a duplicate order. Numbers are
//! written with Rust's shortest round-trip formatting, so a round trip is
//! lossless.

use serde_json::{Map, Value, json};

use crate::layers::{Layer, LayerKind, Target};

pub const SCENE_VERSION: u64 = 1;

#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    pub body: String,
    /// The packs the scene was authored against, bottom first (empty: not
    /// recorded).
    pub packs: Vec<String>,
    pub layers: Vec<Layer>,
}

/// The stack a scene names: `pack` (one) or `packs` (bottom first), or none.
fn packs_of(root: &Map<String, Value>) -> Result<Vec<String>, SceneError> {
    Ok(match (root.get("pack"), root.get("packs")) {
        (Some(_), Some(_)) => return Err(field_error("scene", "give 'pack' or 'packs', not both")),
        (None | Some(Value::Null), None) => Vec::new(),
        (Some(Value::String(p)), None) => vec![p.clone()],
        (Some(_), None) => return Err(field_error("scene", "'pack' must be a string")),
        (None, Some(list)) => list
            .as_array()
            .and_then(|l| l.iter().map(|p| p.as_str().map(str::to_owned)).collect::<Option<Vec<_>>>())
            .ok_or_else(|| field_error("scene", "'packs' must be an array of strings"))?,
    })
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SceneError {
    #[error("not JSON: {0}")]
    Json(String),
    #[error("unsupported scene version {found} (this reader reads version {SCENE_VERSION})")]
    Version { found: String },
    #[error("the scene is for body '{scene}', not '{expected}'")]
    WrongBody { scene: String, expected: String },
    #[error("layers[{index}]: unknown kind '{kind}' (known: crater, flatten, raise, polygon_flatten)")]
    UnknownKind { index: usize, kind: String },
    #[error("layers[{index}]: order {order} is already used by layers[{first}] (orders are unique)")]
    DuplicateOrder { index: usize, order: u32, first: usize },
    #[error("{place}: {reason}")]
    Field { place: String, reason: String },
}

fn field_error(place: &str, reason: impl Into<String>) -> SceneError {
    SceneError::Field { place: place.to_owned(), reason: reason.into() }
}

fn number(object: &Map<String, Value>, place: &str, name: &str) -> Result<f64, SceneError> {
    object
        .get(name)
        .and_then(Value::as_f64)
        .filter(|v| v.is_finite())
        .ok_or_else(|| field_error(place, format!("'{name}' must be a finite number")))
}

impl Scene {
    pub fn new(body: &str) -> Scene {
        Scene { body: body.to_owned(), packs: Vec::new(), layers: Vec::new() }
    }

    /// Parses a scene for `expected_body` (case-insensitive).
    #[expect(
        clippy::too_many_lines,
        reason = "one match over the scene's layer kinds, a field check a line, each error naming its place; reads as the format's table"
    )]
    pub fn from_json(text: &str, expected_body: &str) -> Result<Scene, SceneError> {
        let value: Value = serde_json::from_str(text).map_err(|e| SceneError::Json(e.to_string()))?;
        let root = value.as_object().ok_or_else(|| field_error("scene", "must be a JSON object"))?;
        match root.get("version") {
            Some(v) if v.as_u64() == Some(SCENE_VERSION) => {}
            other => return Err(SceneError::Version { found: other.map_or("(missing)".to_owned(), Value::to_string) }),
        }
        let body =
            root.get("body").and_then(Value::as_str).ok_or_else(|| field_error("scene", "'body' must be a string"))?;
        if !body.eq_ignore_ascii_case(expected_body) {
            return Err(SceneError::WrongBody { scene: body.to_owned(), expected: expected_body.to_owned() });
        }
        let packs = packs_of(root)?;
        for key in root.keys() {
            if !["version", "body", "pack", "packs", "layers"].contains(&key.as_str()) {
                return Err(field_error("scene", format!("unknown field '{key}'")));
            }
        }
        let list = root
            .get("layers")
            .and_then(Value::as_array)
            .ok_or_else(|| field_error("scene", "'layers' must be an array"))?;
        let mut layers: Vec<Layer> = Vec::with_capacity(list.len());
        for (index, item) in list.iter().enumerate() {
            let place = format!("layers[{index}]");
            let object = item.as_object().ok_or_else(|| field_error(&place, "must be an object"))?;
            let kind = object
                .get("kind")
                .and_then(Value::as_str)
                .ok_or_else(|| field_error(&place, "'kind' must be a string"))?;
            let order = object
                .get("order")
                .and_then(Value::as_u64)
                .and_then(|o| u32::try_from(o).ok())
                .ok_or_else(|| field_error(&place, "'order' must be an integer 0..=4294967295"))?;
            if let Some(first) = layers.iter().position(|l| l.order == order) {
                return Err(SceneError::DuplicateOrder { index, order, first });
            }
            let n = |name: &str| number(object, &place, name);
            let (kind, allowed): (LayerKind, &[&str]) = match kind {
                "crater" => (
                    LayerKind::Crater {
                        lat: n("lat")?,
                        lon: n("lon")?,
                        radius_m: n("radius_m")?,
                        depth_m: n("depth_m")?,
                        rim_m: n("rim_m")?,
                    },
                    &["lat", "lon", "radius_m", "depth_m", "rim_m"],
                ),
                "flatten" => {
                    let target = match (object.get("elevation_m"), object.get("target")) {
                        (Some(_), None) => Target::Elevation(n("elevation_m")?),
                        (None, Some(Value::String(t))) if t == "mean" => Target::FootprintMean,
                        _ => {
                            return Err(field_error(
                                &place,
                                "a flatten needs 'elevation_m' or \"target\": \"mean\" (not both)",
                            ));
                        }
                    };
                    (
                        LayerKind::Flatten {
                            lat: n("lat")?,
                            lon: n("lon")?,
                            radius_m: n("radius_m")?,
                            target,
                            blend_m: n("blend_m")?,
                        },
                        &["lat", "lon", "radius_m", "elevation_m", "target", "blend_m"],
                    )
                }
                "raise" => (
                    LayerKind::Raise {
                        lat: n("lat")?,
                        lon: n("lon")?,
                        radius_m: n("radius_m")?,
                        amount_m: n("amount_m")?,
                    },
                    &["lat", "lon", "radius_m", "amount_m"],
                ),
                "polygon_flatten" => {
                    let raw = object
                        .get("vertices")
                        .and_then(Value::as_array)
                        .ok_or_else(|| field_error(&place, "'vertices' must be an array of [lat, lon]"))?;
                    let vertices = raw
                        .iter()
                        .map(|v| {
                            match v.as_array().map(|a| a.iter().map(Value::as_f64).collect::<Vec<_>>()).as_deref() {
                                Some([Some(lat), Some(lon)]) => Ok((*lat, *lon)),
                                _ => Err(field_error(&place, "each vertex must be [lat, lon]")),
                            }
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    (
                        LayerKind::PolygonFlatten { vertices, elevation_m: n("elevation_m")?, blend_m: n("blend_m")? },
                        &["vertices", "elevation_m", "blend_m"],
                    )
                }
                other => return Err(SceneError::UnknownKind { index, kind: other.to_owned() }),
            };
            for key in object.keys() {
                if key != "kind" && key != "order" && !allowed.contains(&key.as_str()) {
                    return Err(field_error(&place, format!("unknown field '{key}' for a {}", object["kind"])));
                }
            }
            let layer = Layer { order, kind };
            layer.validate().map_err(|e| field_error(&place, e.to_string()))?;
            layers.push(layer);
        }
        Ok(Scene { body: body.to_owned(), packs, layers })
    }

    pub fn to_json(&self) -> String {
        let layers: Vec<Value> = self
            .layers
            .iter()
            .map(|l| match &l.kind {
                LayerKind::Crater { lat, lon, radius_m, depth_m, rim_m } => {
                    json!({"kind": "crater", "order": l.order, "lat": lat, "lon": lon, "radius_m": radius_m, "depth_m": depth_m, "rim_m": rim_m})
                }
                LayerKind::Flatten { lat, lon, radius_m, target, blend_m } => {
                    let mut v = json!({"kind": "flatten", "order": l.order, "lat": lat, "lon": lon, "radius_m": radius_m, "blend_m": blend_m});
                    match target {
                        Target::Elevation(e) => v["elevation_m"] = json!(e),
                        Target::FootprintMean => v["target"] = json!("mean"),
                    }
                    v
                }
                LayerKind::Raise { lat, lon, radius_m, amount_m } => {
                    json!({"kind": "raise", "order": l.order, "lat": lat, "lon": lon, "radius_m": radius_m, "amount_m": amount_m})
                }
                LayerKind::PolygonFlatten { vertices, elevation_m, blend_m } => json!({
                    "kind": "polygon_flatten", "order": l.order,
                    "vertices": vertices.iter().map(|(a, b)| json!([a, b])).collect::<Vec<_>>(),
                    "elevation_m": elevation_m, "blend_m": blend_m,
                }),
            })
            .collect();
        let mut root = json!({"version": SCENE_VERSION, "body": self.body, "layers": layers});
        match self.packs.as_slice() {
            [] => {}
            [one] => root["pack"] = json!(one),
            several => root["packs"] = json!(several),
        }
        serde_json::to_string_pretty(&root).expect("a JSON value serialises")
    }
}
