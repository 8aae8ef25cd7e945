// GENERATED from planet_geo::abi (engine/geo/src/abi.rs); do not edit.
// Regenerate: PLANET_UPDATE_ABI=1 cargo test -p planet-geo --lib abi_header

const uint LATTICE_CELLS = 32u;
const uint LATTICE_SIDE = 33u;
const uint LATTICE_VERTICES = 1089u;
const uint SKIRT_VERTICES = 132u;
const uint NODE_VERTICES = 1221u;
const float TILE_CELLS = 128.0;
const float STORED_SAMPLES = 131.0;
const float DETAIL_PERIOD_M = 4096.0;

const uint EDGE_SAME = 0u;
const uint EDGE_COARSER = 1u;
const uint EDGE_FINER = 2u;
const uint SLOT_HAS_COLOUR = 1u;
const uint SLOT_HAS_CLASSES = 2u;
const uint SLOT_COLOUR_LEVELS_SHIFT = 8u;
const uint SLOT_CLASS_LEVELS_SHIFT = 16u;
const uint FLAG_ANALYTIC_BODY = 1u;
const uint FLAG_ATMOSPHERE = 2u;
const uint FLAG_SHADOW_MASK = 4u;
const uint PALETTE_SHIFT = 8u;
const uint FLAG_SEASON = 8u;
const uint FLAG_SEA = 16u;
const uint SEASON_SHIFT = 16u;
const uint VIEW_SHIFT = 24u;
const uint MAX_VIEWS = 2u;
const uint BODY_SPHERE = 0u;
const uint BODY_BOX = 1u;
const uint BODY_SPHERE_VERTICES = 768u;
const uint BODY_BOX_VERTICES = 36u;

#define BINDING_RECORDS 0
#define BINDING_SLOT_HEIGHTS 1
#define BINDING_SLOT_COLOUR 2
#define BINDING_SLOT_CLASSES 3
#define BINDING_CAPTURED 4
#define BINDING_COUNTERS 5
#define BINDING_HORIZON 6
#define BINDING_HORIZON_BASIS 7

struct NodeBasis {
    vec3 w_u; // offset 0
    float tan_u; // offset 12
    vec3 w_v; // offset 16
    float tan_v; // offset 28
    vec3 w_d; // offset 32
    float cube_length; // offset 44
    vec3 normal; // offset 48
    float m_length; // offset 60
    vec3 m; // offset 64
    float tan_u_pi4; // offset 76
    vec3 kappa; // offset 80
    float tan_v_pi4; // offset 92
    vec2 sec2_pi4; // offset 96
    vec3 w_u_lo; // offset 104
    vec3 w_v_lo; // offset 116
};

struct NodeRecord {
    NodeBasis basis; // offset 0
    vec3 centre_from_camera; // offset 128
    uint depth; // offset 140
    vec2 uv_offset; // offset 144
    float uv_scale; // offset 152
    uint slot; // offset 156
    float morph_start; // offset 160
    float morph_end; // offset 164
    uint edges; // offset 168
    float centre_height; // offset 172
    float height_base; // offset 176
    float height_step; // offset 180
    float skirt_m; // offset 184
    uint slot_flags; // offset 188
    vec3 detail_origin; // offset 192
};

struct HorizonBasis {
    vec4 camera_in_map; // offset 0
    vec4 east; // offset 16
    vec4 north; // offset 32
    vec4 up; // offset 48
};

layout(scalar, set = 0, binding = BINDING_RECORDS) readonly buffer Records { NodeRecord records[]; };

layout(scalar, set = 0, binding = BINDING_HORIZON_BASIS) readonly buffer Horizon { HorizonBasis horizon_of_view[MAX_VIEWS]; };

#ifdef BODY_PASS
layout(push_constant, std430) uniform Body {
    vec4 x_row; // offset 0
    vec4 y_row; // offset 16
    vec4 w_row; // offset 32
    vec4 centre; // offset 48
    vec4 axis_x; // offset 64
    vec4 axis_y; // offset 80
    vec4 axis_z; // offset 96
    vec4 colour; // offset 112
} body;
#else
layout(push_constant, std430) uniform Frame {
    vec4 x_row; // offset 0
    vec4 y_row; // offset 16
    vec4 w_row; // offset 32
    vec4 sun; // offset 48
    vec4 camera; // offset 64
    vec4 radii; // offset 80
    vec4 inverse_radii; // offset 96
    uint flags; // offset 112
    float atmosphere_height; // offset 116
    float atmosphere_density; // offset 120
    float exposure; // offset 124
} pc;
#endif
