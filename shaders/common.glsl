// Shared declarations of the terrain shaders: the node record (the layout of
// planet_terrain::NodeRecord, scalar block layout so vec3 packs like the
// Rust struct), the push constants, and the atmosphere model. Every stage
// includes this file so the contract exists once.

#extension GL_EXT_scalar_block_layout : require
#extension GL_EXT_samplerless_texture_functions : require

const uint LATTICE_CELLS = 32u;
const uint LATTICE_SIDE = 33u;
const uint LATTICE_VERTICES = LATTICE_SIDE * LATTICE_SIDE;
const uint SKIRT_VERTICES = 4u * LATTICE_SIDE;
const uint NODE_VERTICES = LATTICE_VERTICES + SKIRT_VERTICES;
const float TILE_CELLS = 128.0;
const float STORED_SAMPLES = 131.0;

const uint EDGE_COARSER = 1u;
const uint EDGE_FINER = 2u;

const uint SLOT_HAS_COLOUR = 1u;
const uint SLOT_HAS_CLASSES = 2u;

const uint FLAG_ANALYTIC_BODY = 1u;
const uint FLAG_ATMOSPHERE = 2u;
// Palette selector in bits 8..15: 0 earth-like, 1 grey regolith, 2 rust.
const uint PALETTE_SHIFT = 8u;

struct NodeFrame {
    vec3 w_u; float tan_u;
    vec3 w_v; float tan_v;
    vec3 w_d; float cube_length;
    vec3 normal; float m_length;
    vec3 m; float tan_u_pi4;
    vec3 kappa; float tan_v_pi4;
    vec2 sec2_pi4;
    vec3 w_u_lo;
    vec3 w_v_lo;
};

struct NodeRecord {
    NodeFrame frame;
    vec3 centre_from_camera;
    uint depth;
    vec2 uv_offset;
    float uv_scale;
    uint slot;
    float morph_start;
    float morph_end;
    uint edges;
    float centre_height;
    float height_base;
    float height_step;
    float skirt_m;
    uint slot_flags;
};

layout(scalar, set = 0, binding = 0) readonly buffer Records { NodeRecord records[]; };
// Binding 4: captured vertices (terrain.vert CAPTURE); binding 5: the frame's
// counters (sky.frag); binding 6: the HUD overlay (hud.frag).
layout(set = 0, binding = 1) uniform utexture2DArray slot_heights;
layout(set = 0, binding = 2) uniform sampler2DArray slot_colour;
layout(set = 0, binding = 3) uniform utexture2DArray slot_classes;

// Camera-relative clip transform: clip = (dot(x_row, p), dot(y_row, p), near, dot(w_row, p)),
// reversed Z with the far plane at infinity.
layout(push_constant, std430) uniform Frame {
    vec4 x_row;        // xyz; w = near plane (m)
    vec4 y_row;        // xyz; w = the floor scale: 1 + (deepest ground) / (mean radius)
    vec4 w_row;        // xyz (the forward axis); w = unused
    vec4 sun;          // body-fixed direction toward the sun; w = ambient
    vec4 camera;       // body-fixed camera position (m, f32: atmosphere only);
                       // w = |camera / (radii * floor scale)|^2 - 1, formed in f64
    vec4 radii;        // ellipsoid radii; w = |camera / radii|^2 - 1, formed in f64
    vec4 inverse_radii;// 1 / radii; w = mean radius
    uint flags;
    float atmosphere_height; // scale height (m)
    float atmosphere_density; // extinction at the datum per metre
    float exposure;
} pc;

vec4 clip_position(vec3 p) {
    return vec4(dot(pc.x_row.xyz, p), dot(pc.y_row.xyz, p), pc.x_row.w, dot(pc.w_row.xyz, p));
}

// --- atmosphere -------------------------------------------------------------

const vec3 SCATTER_COLOUR = vec3(0.30, 0.52, 1.0);

// Height above the ellipsoid, approximately: the scaled radius's excess times
// the mean radius (exact on a sphere; the oblateness moves it by metres).
float air_density(vec3 body_point) {
    float h = (length(body_point * pc.inverse_radii.xyz) - 1.0) * pc.inverse_radii.w;
    return exp(-max(h, -1000.0) / pc.atmosphere_height);
}

// Light scattered toward the camera along a ray segment, and the
// transmittance of that segment: a few-sample march through an exponential
// atmosphere, lit by the sun where the sample point faces it.
void march(vec3 origin, vec3 dir, float length_m, out vec3 inscatter, out float transmittance) {
    const int STEPS = 10;
    float step_m = length_m / float(STEPS);
    float depth = 0.0;
    inscatter = vec3(0.0);
    for (int k = 0; k < STEPS; ++k) {
        vec3 p = origin + dir * ((float(k) + 0.5) * step_m);
        float rho = air_density(p) * pc.atmosphere_density * step_m;
        float lit = smoothstep(-0.15, 0.25, dot(normalize(p), pc.sun.xyz));
        inscatter += SCATTER_COLOUR * (lit * rho * exp(-depth));
        depth += rho;
    }
    transmittance = exp(-depth);
}

// Where a body-fixed ray leaves the atmosphere shell (top at 10 scale heights).
vec2 shell_span(vec3 origin, vec3 dir) {
    float top = max(pc.radii.x, max(pc.radii.y, pc.radii.z)) + 10.0 * pc.atmosphere_height;
    float b = dot(origin, dir);
    float c = dot(origin, origin) - top * top;
    float disc = b * b - c;
    if (disc < 0.0) return vec2(-1.0);
    float s = sqrt(disc);
    return vec2(max(-b - s, 0.0), -b + s);
}

vec3 apply_atmosphere(vec3 surface, vec3 view_dir, float distance_m) {
    if ((pc.flags & FLAG_ATMOSPHERE) == 0u) return surface;
    vec2 span = shell_span(pc.camera.xyz, view_dir);
    if (span.y <= 0.0) return surface;
    float start = span.x;
    float stop = min(distance_m, span.y);
    if (stop <= start) return surface;
    vec3 inscatter;
    float transmittance;
    march(pc.camera.xyz + view_dir * start, view_dir, stop - start, inscatter, transmittance);
    return surface * transmittance + inscatter;
}

vec3 finish_colour(vec3 linear) {
    vec3 mapped = vec3(1.0) - exp(-linear * pc.exposure);
    return pow(mapped, vec3(1.0 / 2.2));
}

// A palette by surface class and elevation, for ground with no colour block
// (sRGB-encoded values; `palette` returns linear).
vec3 palette_srgb(float height_m, uint surface_class, vec3 normal, vec3 up) {
    uint which = (pc.flags >> PALETTE_SHIFT) & 255u;
    if (which == 1u) return mix(vec3(0.20), vec3(0.42), clamp(0.5 + height_m / 8000.0, 0.0, 1.0));
    if (which == 2u) return mix(vec3(0.35, 0.16, 0.08), vec3(0.62, 0.38, 0.22), clamp(0.5 + height_m / 10000.0, 0.0, 1.0));
    bool water = surface_class == 1u || surface_class == 3u || (surface_class == 0u && height_m < 0.0);
    if (water) {
        float deep = clamp(-height_m / 6000.0, 0.0, 1.0);
        return mix(vec3(0.05, 0.18, 0.32), vec3(0.01, 0.04, 0.14), deep);
    }
    float slope = 1.0 - clamp(dot(normal, up), 0.0, 1.0);
    vec3 low = vec3(0.16, 0.30, 0.10);
    vec3 mid = vec3(0.42, 0.36, 0.24);
    vec3 rock = vec3(0.36, 0.33, 0.30);
    vec3 snow = vec3(0.90, 0.92, 0.95);
    vec3 c = mix(low, mid, smoothstep(200.0, 2500.0, height_m));
    c = mix(c, rock, smoothstep(0.25, 0.6, slope));
    return mix(c, snow, smoothstep(3800.0, 5200.0, height_m) * (1.0 - smoothstep(0.5, 0.8, slope)));
}

vec3 palette(float height_m, uint surface_class, vec3 normal, vec3 up) {
    return pow(palette_srgb(height_m, surface_class, normal, up), vec3(2.2));
}

vec3 light(vec3 albedo, vec3 normal) {
    float sun = max(dot(normal, pc.sun.xyz), 0.0);
    return albedo * (vec3(1.0, 0.97, 0.92) * sun * 2.4 + vec3(0.25, 0.3, 0.4) * pc.sun.w);
}
