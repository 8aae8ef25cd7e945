// Shared code of the terrain shaders: the slot images, the clip transform
// and the atmosphere model. The host/GPU contract itself (the node record,
// scalar block layout so vec3 packs like the Rust struct; the push
// constants; constants and binding numbers) is generated from
// planet_terrain::abi into generated/abi.glsl, included here, so it exists
// once.

#extension GL_EXT_scalar_block_layout : require
#extension GL_EXT_samplerless_texture_functions : require

#extension GL_GOOGLE_include_directive : require
#include "generated/abi.glsl"

// Binding CAPTURED: captured vertices (terrain.vert CAPTURE); binding
// COUNTERS: the frame's counters (sky.frag, terrain.frag).
layout(set = 0, binding = BINDING_SLOT_HEIGHTS) uniform utexture2DArray slot_heights;
layout(set = 0, binding = BINDING_SLOT_COLOUR) uniform sampler2DArray slot_colour;
layout(set = 0, binding = BINDING_SLOT_CLASSES) uniform utexture2DArray slot_classes;

// Where slot `slot` lives: xy its square's first texel, z its layer. A
// layer holds per_side x per_side squares, read from the image's own width
// (the host's rule, engine/render/src/slot_layout.rs).
ivec3 slot_origin(uint slot) {
    uint side = uint(STORED_SAMPLES);
    uint per_side = uint(textureSize(slot_heights, 0).x) / side;
    uint per_layer = per_side * per_side;
    uint within = slot % per_layer;
    return ivec3(int((within % per_side) * side), int((within / per_side) * side), int(slot / per_layer));
}

// Camera-relative clip transform: clip = (dot(x_row, p), dot(y_row, p), near, dot(w_row, p)),
// reversed Z with the far plane at infinity. The push constants' fields
// are documented on planet_terrain::abi::PushConstants.
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
// atmosphere, each sample lit by its own sun angle (through twilight past
// the terminator, reddened where the sun is low).
void march(vec3 origin, vec3 dir, float length_m, out vec3 inscatter, out float transmittance) {
    const int STEPS = 10;
    float step_m = length_m / float(STEPS);
    float depth = 0.0;
    inscatter = vec3(0.0);
    for (int k = 0; k < STEPS; ++k) {
        vec3 p = origin + dir * ((float(k) + 0.5) * step_m);
        float rho = air_density(p) * pc.atmosphere_density * step_m;
        float mu = dot(normalize(p), pc.sun.xyz);
        float lit = smoothstep(-0.15, 0.25, mu);
        // Sunlight reaching a sample under a low sun has crossed much air,
        // which scattered its blue away first: twilight glows orange.
        vec3 reach = mix(vec3(1.0, 0.42, 0.16), vec3(1.0), smoothstep(-0.05, 0.2, mu));
        inscatter += SCATTER_COLOUR * reach * (lit * rho * exp(-depth));
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

// pcg3d (Jarzynski & Olano 2020): a good 32-bit hash of three integers.
uvec3 pcg3d(uvec3 v) {
    v = v * 1664525u + 1013904223u;
    v.x += v.y * v.z;
    v.y += v.z * v.x;
    v.z += v.x * v.y;
    v ^= v >> 16u;
    v.x += v.y * v.z;
    v.y += v.z * v.x;
    v.z += v.x * v.y;
    return v;
}

vec3 finish_colour(vec3 linear) {
    vec3 mapped = vec3(1.0) - exp(-linear * pc.exposure);
    return pow(mapped, vec3(1.0 / 2.2));
}

// Water: oceans and lakes (classes 1 and 3), or unclassified ground below
// 0 m.
bool water_sample(uint surface_class, float height_m) {
    return surface_class == 1u || surface_class == 3u || (surface_class == 0u && height_m < 0.0);
}

// A palette by surface class and elevation, for ground with no colour block
// (sRGB-encoded values; `palette` returns linear).
vec3 palette_srgb(float height_m, uint surface_class, vec3 normal, vec3 up) {
    uint which = (pc.flags >> PALETTE_SHIFT) & 255u;
    if (which == 1u) return mix(vec3(0.20), vec3(0.42), clamp(0.5 + height_m / 8000.0, 0.0, 1.0));
    if (which == 2u) return mix(vec3(0.35, 0.16, 0.08), vec3(0.62, 0.38, 0.22), clamp(0.5 + height_m / 10000.0, 0.0, 1.0));
    if (water_sample(surface_class, height_m)) {
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

// Daylight at a point whose local up is `up`, lit through a surface with
// `normal`: the sun reddens as it sinks (its path through the air grows;
// unchanged above 15 degrees) and the sky's fill fades through civil and
// nautical twilight (sun 0 to 12 degrees down), so the night side is dark
// and the terminator shows from orbit.
vec3 light_at(vec3 albedo, vec3 normal, vec3 up) {
    float mu = dot(up, pc.sun.xyz);
    vec3 sunlight = mix(vec3(1.0, 0.5, 0.25), vec3(1.0, 0.97, 0.92), smoothstep(0.0, 0.25, mu));
    float fill = smoothstep(-0.21, 0.05, mu);
    float sun = max(dot(normal, pc.sun.xyz), 0.0);
    return albedo * (sunlight * sun * 2.4 + vec3(0.25, 0.3, 0.4) * pc.sun.w * fill);
}

vec3 light(vec3 albedo, vec3 normal) {
    float sun = max(dot(normal, pc.sun.xyz), 0.0);
    return albedo * (vec3(1.0, 0.97, 0.92) * sun * 2.4 + vec3(0.25, 0.3, 0.4) * pc.sun.w);
}
