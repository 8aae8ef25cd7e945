//! The GPU ABI: every number and struct the shaders share with the host,
//! declared once.
//!
//! The key decision: the Rust side is the declaration and the GLSL side is
//! generated from it. [`glsl_header`] renders the constants, the record
//! structs (from their [`crate::gpu_struct!`] field tables), the push
//! constants and the binding numbers into `shaders/generated/abi.glsl`,
//! which every shader includes and which is committed, so a reader of the
//! shaders sees it. A test here fails when the committed header is stale and
//! rewrites it when run with `PLANET_UPDATE_ABI=1` (the sourcegen pattern;
//! it lives in this crate so it runs even while the shaders do not build). Lattice sizes are derived from the tile layout, never
//! written as literals, and every struct's fields are checked at compile
//! time to be packed in order, so a new field or a 65 x 65 lattice changes
//! the host and the shaders together.
//!
//! The crate still links no GPU API: these are plain numbers and Pod structs.

use std::fmt::Write as _;

use crate::address::{TILE_CELLS, TILE_STORED_SAMPLES};
pub use crate::lattice::{LATTICE_CELLS, LATTICE_SIDE, LATTICE_VERTICES, NODE_VERTICES, SKIRT_VERTICES};
use crate::layout::{GpuField, GpuStruct};
pub use crate::precision::NodeBasis;

/// Edge relation codes in [`NodeRecord::edges`], two bits per edge in
/// `Edge::ALL` order.
pub const EDGE_SAME: u32 = 0;
pub const EDGE_COARSER: u32 = 1;
pub const EDGE_FINER: u32 = 2;

/// [`NodeRecord::slot_flags`]: the slot has a colour block.
pub const SLOT_HAS_COLOUR: u32 = 1;
/// [`NodeRecord::slot_flags`]: the slot has surface classes.
pub const SLOT_HAS_CLASSES: u32 = 2;
/// [`NodeRecord::slot_flags`] bits 8..13: how many levels the slot's tile
/// lies deeper than the colour data (its colour block is resampled, so one
/// texel of the imagery spans `2^levels` stored texels). The material
/// handover judges the imagery's own texel, not the slot's grid.
pub const SLOT_COLOUR_LEVELS_SHIFT: u32 = 8;
/// [`NodeRecord::slot_flags`] bits 16..21: how many levels the slot's tile
/// lies deeper than the tiles its classes were taken from (nearest, so one
/// class sample spans `2^levels` stored texels). The coast is drawn as the
/// contour of the class samples themselves, not of their copies.
pub const SLOT_CLASS_LEVELS_SHIFT: u32 = 16;

/// [`PushConstants::flags`]: the sky pass draws the analytic body.
pub const FLAG_ANALYTIC_BODY: u32 = 1;
/// [`PushConstants::flags`]: aerial perspective and the limb are on.
pub const FLAG_ATMOSPHERE: u32 = 2;
/// [`PushConstants::flags`]: the terrain's fragments show the sun's share
/// the horizon map leaves them (white lit, black in shadow), unlit and
/// without atmosphere: the shadow conformance test reads it.
pub const FLAG_SHADOW_MASK: u32 = 4;
/// [`PushConstants::flags`]: the palette selector sits in bits 8..15
/// (0 earth-like, 1 grey regolith, 2 rust).
pub const PALETTE_SHIFT: u32 = 8;
/// [`PushConstants::flags`]: the date is known, and [`SEASON_SHIFT`] holds
/// the season: the snow follows it. Without it the snowline is the
/// year's, whatever the date.
pub const FLAG_SEASON: u32 = 8;
/// [`PushConstants::flags`]: the body has a sea at 0 m
/// (`planet_ground::water`): the vertex shader draws its surface over
/// stored samples under it, and the fragments shade it as water over the
/// floor the samples keep.
pub const FLAG_SEA: u32 = 16;
/// [`PushConstants::flags`]: bits 16..23 hold the season, the fraction of
/// the tropical year since the March equinox in 256ths ([`season_bits`]).
pub const SEASON_SHIFT: u32 = 16;
/// [`PushConstants::flags`]: bit 24 holds which of the frame's views this
/// draw is (0 the main view, 1 the second), so the shaders read that
/// view's [`HorizonBasis`] (camera-relative, so one per view).
pub const VIEW_SHIFT: u32 = 24;
/// Views one frame draws at most: the main view and a second
/// (`--view2`), each with its own camera, cut and horizon basis.
pub const MAX_VIEWS: u32 = 2;

/// The [`SEASON_SHIFT`] bits of `year_fraction` (0..1 from the March
/// equinox, wrapped): the nearest 256th, about a day and a half.
pub fn season_bits(year_fraction: f64) -> u32 {
    ((year_fraction.rem_euclid(1.0) * 256.0).round() as u32 % 256) << SEASON_SHIFT
}

/// Descriptor set 0, binding numbers.
pub mod binding {
    /// `NodeRecord`s, a storage buffer read by the vertex shaders.
    pub const RECORDS: u32 = 0;
    /// Slot heights, `R16_UINT` array image, integer fetches.
    pub const SLOT_HEIGHTS: u32 = 1;
    /// Slot colour, `RGBA8` array image with a sampler.
    pub const SLOT_COLOUR: u32 = 2;
    /// Slot surface classes, `R8_UINT` array image.
    pub const SLOT_CLASSES: u32 = 3;
    /// Captured vertex positions (the `CAPTURE` vertex shader variant).
    pub const CAPTURED: u32 = 4;
    /// The frame's counters (hole pixels), written by the sky.
    pub const COUNTERS: u32 = 5;
    /// The horizon map (`ground::horizon`): `R16G16_SFLOAT` array image, one
    /// layer per level, with a linear sampler.
    pub const HORIZON: u32 = 6;
    /// Where the horizon map lies ([`super::HorizonBasis`]), a storage buffer.
    pub const HORIZON_BASIS: u32 = 7;
    /// Every binding, in order.
    pub const ALL: [(&str, u32); 8] = [
        ("RECORDS", RECORDS),
        ("SLOT_HEIGHTS", SLOT_HEIGHTS),
        ("SLOT_COLOUR", SLOT_COLOUR),
        ("SLOT_CLASSES", SLOT_CLASSES),
        ("CAPTURED", CAPTURED),
        ("COUNTERS", COUNTERS),
        ("HORIZON", HORIZON),
        ("HORIZON_BASIS", HORIZON_BASIS),
    ];
}

/// Timestamp query slots of one frame: a pass's time is the difference of
/// the slots around it.
pub mod timestamp {
    /// Before the depth pass (after uploads).
    pub const FRAME_START: u32 = 0;
    /// After the depth pass.
    pub const DEPTH_DONE: u32 = 1;
    /// After the shaded pass.
    pub const SHADED_DONE: u32 = 2;
    /// After the sky.
    pub const SKY_DONE: u32 = 3;
    /// After the second view's passes (written right after [`SKY_DONE`]
    /// when the frame has one view).
    pub const VIEWS_DONE: u32 = 4;
    /// Query slots per frame.
    pub const COUNT: u32 = 5;
}

crate::gpu_struct! {
/// One selected node as the GPU reads it (storage buffer, scalar layout).
pub struct NodeRecord [size = 204] {
    pub basis: NodeBasis,
    /// Node centre minus camera, metres (computed in f64, narrowed last).
    pub centre_from_camera: [f32; 3],
    pub depth: u32,
    /// Where the node reads in its bound slot (see `UvRect`).
    pub uv_offset: [f32; 2],
    pub uv_scale: f32,
    pub slot: u32,
    /// Distances (metres from the camera) where this depth starts and
    /// finishes morphing toward its parent's lattice.
    pub morph_start: f32,
    pub morph_end: f32,
    /// Two bits per edge: `EDGE_SAME`, `EDGE_COARSER`, `EDGE_FINER`.
    pub edges: u32,
    /// Elevation of the node centre (the frame's), metres.
    pub centre_height: f32,
    /// How the bound slot's u16 samples decode: `base + q * step` metres.
    /// The renderer fills these from what it uploaded into the slot.
    pub height_base: f32,
    pub height_step: f32,
    /// Depth (metres) of the skirt hung below the node's edges: it hides the
    /// gaps that remain where neighbours read different tiles (an ancestor
    /// standing in, each tile's own quantisation), so streaming never opens
    /// a hole to the sky.
    pub skirt_m: f32,
    /// What the bound slot holds (`SLOT_HAS_COLOUR`, `SLOT_HAS_CLASSES`).
    pub slot_flags: u32,
    /// The body-fixed node centre modulo [`DETAIL_PERIOD_M`] per axis
    /// (formed in f64): the origin of the fragment shader's surface detail
    /// noise, which is periodic with that period, so a node-local offset
    /// added to it gives the same noise on both sides of a node edge without
    /// a planet-scale f32 position.
    pub detail_origin: [f32; 3],
}
}

/// The period (metres, a power of two) of the surface detail noise: every
/// noise cell size divides it. Large enough that the repetition is never
/// seen (it is far beyond the distance where the finest detail fades), small
/// enough that f32 keeps millimetres inside it.
pub const DETAIL_PERIOD_M: f64 = 4096.0;

/// [`NodeRecord::detail_origin`] of a body-fixed node centre.
pub fn detail_origin(centre: glam::DVec3) -> [f32; 3] {
    let wrap = |x: f64| x.rem_euclid(DETAIL_PERIOD_M) as f32;
    [wrap(centre.x), wrap(centre.y), wrap(centre.z)]
}

crate::gpu_struct! {
/// The push-constant block shared by every pipeline (std430). The clip
/// transform is camera-relative: `clip = (dot(x_row, p), dot(y_row, p),
/// near, dot(w_row, p))`, reversed Z with the far plane at infinity.
pub struct PushConstants [size = 128] {
    /// xyz; w = the near plane (m).
    pub x_row: [f32; 4],
    /// xyz; w = the floor scale: 1 + (deepest ground) / (mean radius).
    pub y_row: [f32; 4],
    /// xyz (the forward axis); w = how far the body has turned under the
    /// stars, radians (the sky's star field turns by it).
    pub w_row: [f32; 4],
    /// Body-fixed direction toward the sun; w = ambient.
    pub sun: [f32; 4],
    /// Body-fixed camera position (m, f32: atmosphere only); w =
    /// `|camera / (radii * floor scale)|^2 - 1`, formed in f64.
    pub camera: [f32; 4],
    /// Ellipsoid radii; w = `|camera / radii|^2 - 1`, formed in f64.
    pub radii: [f32; 4],
    /// 1 / radii; w = mean radius.
    pub inverse_radii: [f32; 4],
    /// `FLAG_*` bits and the palette selector.
    pub flags: u32,
    /// Atmosphere scale height (m).
    pub atmosphere_height: f32,
    /// Extinction at the datum, per metre.
    pub atmosphere_density: f32,
    pub exposure: f32,
}
}

crate::gpu_struct! {
/// The push-constant block of the bodies pass (rigid bodies dropped on the
/// ground), one draw per body: the frame's clip rows again, then the body,
/// camera-relative (differences formed in f64 on the host, small here).
/// Shaders see it as `body` when they define `BODY_PASS` before the header.
pub struct BodyConstants [size = 128] {
    /// The frame's clip rows, as [`PushConstants`] holds them (x_row.w = near).
    pub x_row: [f32; 4],
    pub y_row: [f32; 4],
    pub w_row: [f32; 4],
    /// Centre from the camera (m); w = shape: [`BODY_SPHERE`] or [`BODY_BOX`].
    pub centre: [f32; 4],
    /// The body's axes times its half-sizes (body-fixed directions, m);
    /// their w components are the direction toward the sun's x, y and z.
    pub axis_x: [f32; 4],
    pub axis_y: [f32; 4],
    pub axis_z: [f32; 4],
    /// Linear RGB; w = ambient.
    pub colour: [f32; 4],
}
}

crate::gpu_struct! {
/// Where the frame's horizon map lies from one view (storage buffer, scalar
/// layout, one per view: [`MAX_VIEWS`], indexed by [`VIEW_SHIFT`]): the
/// fragment's map position is `dot(from_camera, east) + camera_in_map.x`,
/// `dot(from_camera, north) + camera_in_map.y` (the camera's offset formed
/// in f64, narrowed last), and level `k` spans `finest * ratio^k` metres.
pub struct HorizonBasis [size = 64] {
    /// The camera minus the map's centre along east, north and up (m);
    /// w = the finest level's side (m).
    pub camera_in_map: [f32; 4],
    /// The map's east axis (body-fixed); w = its levels (0: no map, the
    /// ground is lit and open everywhere).
    pub east: [f32; 4],
    /// The map's north axis; w = the ratio of one level's side to the
    /// next finer one's.
    pub north: [f32; 4],
    /// The map's up axis; w = half the width (radians) over which the sun
    /// goes from hidden to seen as it clears the horizon.
    pub up: [f32; 4],
}
}

/// [`BodyConstants::centre`]`.w`: a sphere of radius `|axis_x|`.
pub const BODY_SPHERE: u32 = 0;
/// [`BodyConstants::centre`]`.w`: a box spanning the axes both ways.
pub const BODY_BOX: u32 = 1;
/// Vertices of one sphere draw: 16 slices x 8 stacks of two triangles.
pub const BODY_SPHERE_VERTICES: u32 = 16 * 8 * 6;
/// Vertices of one box draw: 6 faces of two triangles.
pub const BODY_BOX_VERTICES: u32 = 36;

/// Bytes of one [`NodeRecord`] in the records buffer.
pub const RECORD_BYTES: usize = std::mem::size_of::<NodeRecord>();

/// Where the generated header lives, relative to the workspace root.
pub const GLSL_HEADER_PATH: &str = "shaders/generated/abi.glsl";

/// The command that rewrites a stale header.
pub const REGENERATE_GLSL_HEADER: &str = "PLANET_UPDATE_ABI=1 cargo test -p planet-geo --lib abi_header";

/// Whether the header committed under `workspace` is exactly what
/// [`glsl_header`] renders (a missing file is stale).
pub fn committed_glsl_header_is_fresh(workspace: &std::path::Path) -> bool {
    std::fs::read_to_string(workspace.join(GLSL_HEADER_PATH)).is_ok_and(|committed| committed == glsl_header())
}

/// The GLSL header the shaders include: constants, structs, bindings and
/// the push constants, in the layouts declared above.
pub fn glsl_header() -> String {
    let mut out = String::new();
    let _ = writeln!(out, "// GENERATED from planet_geo::abi (engine/geo/src/abi.rs); do not edit.");
    let _ = writeln!(out, "// Regenerate: {REGENERATE_GLSL_HEADER}\n");
    let uint = |out: &mut String, name: &str, value: u32| {
        let _ = writeln!(out, "const uint {name} = {value}u;");
    };
    for (name, value) in [
        ("LATTICE_CELLS", LATTICE_CELLS),
        ("LATTICE_SIDE", LATTICE_SIDE),
        ("LATTICE_VERTICES", LATTICE_VERTICES),
        ("SKIRT_VERTICES", SKIRT_VERTICES),
        ("NODE_VERTICES", NODE_VERTICES),
    ] {
        uint(&mut out, name, value);
    }
    let _ = writeln!(out, "const float TILE_CELLS = {TILE_CELLS}.0;");
    let _ = writeln!(out, "const float STORED_SAMPLES = {TILE_STORED_SAMPLES}.0;");
    let _ = writeln!(out, "const float DETAIL_PERIOD_M = {DETAIL_PERIOD_M:.1};");
    out.push('\n');
    for (name, value) in [
        ("EDGE_SAME", EDGE_SAME),
        ("EDGE_COARSER", EDGE_COARSER),
        ("EDGE_FINER", EDGE_FINER),
        ("SLOT_HAS_COLOUR", SLOT_HAS_COLOUR),
        ("SLOT_HAS_CLASSES", SLOT_HAS_CLASSES),
        ("SLOT_COLOUR_LEVELS_SHIFT", SLOT_COLOUR_LEVELS_SHIFT),
        ("SLOT_CLASS_LEVELS_SHIFT", SLOT_CLASS_LEVELS_SHIFT),
        ("FLAG_ANALYTIC_BODY", FLAG_ANALYTIC_BODY),
        ("FLAG_ATMOSPHERE", FLAG_ATMOSPHERE),
        ("FLAG_SHADOW_MASK", FLAG_SHADOW_MASK),
        ("PALETTE_SHIFT", PALETTE_SHIFT),
        ("FLAG_SEASON", FLAG_SEASON),
        ("FLAG_SEA", FLAG_SEA),
        ("SEASON_SHIFT", SEASON_SHIFT),
        ("VIEW_SHIFT", VIEW_SHIFT),
        ("MAX_VIEWS", MAX_VIEWS),
        ("BODY_SPHERE", BODY_SPHERE),
        ("BODY_BOX", BODY_BOX),
        ("BODY_SPHERE_VERTICES", BODY_SPHERE_VERTICES),
        ("BODY_BOX_VERTICES", BODY_BOX_VERTICES),
    ] {
        uint(&mut out, name, value);
    }
    out.push('\n');
    for (name, value) in binding::ALL {
        let _ = writeln!(out, "#define BINDING_{name} {value}");
    }
    out.push('\n');
    glsl_struct(&mut out, NodeBasis::NAME, &NodeBasis::fields());
    glsl_struct(&mut out, NodeRecord::NAME, &NodeRecord::fields());
    glsl_struct(&mut out, HorizonBasis::NAME, &HorizonBasis::fields());
    let _ = writeln!(
        out,
        "layout(scalar, set = 0, binding = BINDING_RECORDS) readonly buffer Records {{ NodeRecord records[]; }};\n"
    );
    let _ = writeln!(
        out,
        "layout(scalar, set = 0, binding = BINDING_HORIZON_BASIS) readonly buffer Horizon {{ HorizonBasis horizon_of_view[MAX_VIEWS]; }};\n"
    );
    // One push-constant block per pipeline layout: the bodies pass has its own.
    out.push_str("#ifdef BODY_PASS\nlayout(push_constant, std430) uniform Body {\n");
    glsl_fields(&mut out, &BodyConstants::fields());
    out.push_str("} body;\n#else\nlayout(push_constant, std430) uniform Frame {\n");
    glsl_fields(&mut out, &PushConstants::fields());
    out.push_str("} pc;\n#endif\n");
    out
}

fn glsl_struct(out: &mut String, name: &str, fields: &[GpuField]) {
    let _ = writeln!(out, "struct {name} {{");
    glsl_fields(out, fields);
    out.push_str("};\n\n");
}

fn glsl_fields(out: &mut String, fields: &[GpuField]) {
    for f in fields {
        let _ = writeln!(out, "    {} {}; // offset {}", f.glsl, f.name, f.offset);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte offsets of fields the shaders and the conformance capture rely
    /// on by position, written out so a reorder is seen in review.
    #[test]
    fn record_offsets_are_the_documented_ones() {
        let offset = |fields: Vec<GpuField>, name: &str| fields.iter().find(|f| f.name == name).unwrap().offset;
        assert_eq!(offset(NodeRecord::fields(), "basis"), 0);
        assert_eq!(offset(NodeRecord::fields(), "centre_from_camera"), 128);
        assert_eq!(offset(NodeRecord::fields(), "slot"), 156);
        assert_eq!(offset(NodeRecord::fields(), "slot_flags"), 188);
        assert_eq!(offset(NodeRecord::fields(), "detail_origin"), 192);
        assert_eq!(offset(NodeBasis::fields(), "w_v_lo"), 116);
        assert_eq!(offset(PushConstants::fields(), "flags"), 112);
        assert_eq!(offset(PushConstants::fields(), "exposure"), 124);
    }

    #[test]
    fn records_cast_to_bytes_field_by_field() {
        let record = NodeRecord { depth: 7, slot: 0x0102_0304, ..NodeRecord::default() };
        let bytes = bytemuck::bytes_of(&record);
        assert_eq!(bytes.len(), RECORD_BYTES);
        assert_eq!(&bytes[140..144], &7u32.to_le_bytes());
        assert_eq!(&bytes[156..160], &0x0102_0304u32.to_le_bytes());
    }

    #[test]
    fn header_declares_every_field_once() {
        let header = glsl_header();
        for f in NodeRecord::fields()
            .iter()
            .chain(&NodeBasis::fields())
            .chain(&PushConstants::fields())
            .chain(&BodyConstants::fields())
            .chain(&HorizonBasis::fields())
        {
            assert!(header.contains(&format!(" {}; // offset {}", f.name, f.offset)), "{}", f.name);
        }
        assert!(header.contains("const uint LATTICE_SIDE = 33u;"));
    }

    /// The committed header must be what [`glsl_header`] renders: the
    /// shaders compiled into `planet-render` include the committed file.
    #[test]
    fn abi_header_is_fresh() {
        let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        if committed_glsl_header_is_fresh(&workspace) {
            return;
        }
        let path = workspace.join(GLSL_HEADER_PATH);
        if std::env::var_os("PLANET_UPDATE_ABI").is_some() {
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("create shaders/generated");
            std::fs::write(&path, glsl_header()).expect("write the header");
            return;
        }
        panic!("{} is stale against planet_geo::abi; regenerate it: {REGENERATE_GLSL_HEADER}", path.display());
    }
}
