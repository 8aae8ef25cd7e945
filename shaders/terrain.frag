#version 450
// Shaded terrain, per fragment from the node's record: the height normal
// from the bound slot's samples (the same fetches the vertex shader uses),
// tilted by a procedural micro-relief near the camera; a material by class,
// slope, latitude and elevation (surface.glsl) that takes over from the
// pack's colour as the colour texel grows beyond a few pixels; a sun whose
// light and sky fill go out below the horizon; aerial perspective.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "heights.glsl"
#include "surface.glsl"

// Depth and stencil tests before shading, said outright: the shaded pass
// tests against the depth prepass (greater-or-equal, no depth writes) and
// this shader neither discards nor writes depth, so testing first changes
// no pixel, and every driver then shades only the fragments that survive
// the prepass instead of the overdraw it exists to skip.
layout(early_fragment_tests) in;

layout(location = 0) in vec2 in_texel;
layout(location = 1) in vec3 in_from_camera;
layout(location = 2) in vec3 in_detail;
layout(location = 3) flat in uint in_node;
layout(location = 4) in vec3 in_up;

layout(location = 0) out vec4 out_colour;

void main() {
    NodeRecord r = records[in_node];
    vec3 up = normalize(in_up);
    vec2 t = clamp(in_texel, vec2(1.0), vec2(TILE_CELLS + 1.0));
    float height_m = bilinear_height(r, t, TILE_CELLS);
    vec3 ground = height_normal(r, t, up);
    float slope = 1.0 - clamp(dot(ground, up), 0.0, 1.0);
    // The pixel's size on the ground (metres) and the colour texel's size
    // in pixels (the colour block shares the heights' stored-texel grid).
    float footprint = max(length(dFdx(in_detail)), length(dFdy(in_detail)));
    vec2 texels_per_pixel = fwidth(in_texel);
    // A slot deeper than the colour data holds it resampled: one texel of
    // the imagery spans 2^levels of the slot's.
    float imagery_levels = float((r.slot_flags >> SLOT_COLOUR_LEVELS_SHIFT) & 31u);
    float texel_px = exp2(imagery_levels) / max(max(texels_per_pixel.x, texels_per_pixel.y), 1e-6);
    // t stays within texel centres 1.5..STORED_SAMPLES - 0.5 of the slot's
    // square, so the filter never reaches a neighbouring slot's.
    ivec3 origin = slot_origin(r.slot);
    vec3 colour_uvw = vec3((vec2(origin.xy) + t + 0.5) / vec2(textureSize(slot_colour, 0).xy), float(origin.z));
    uint surface_class = 0u;
    if ((r.slot_flags & SLOT_HAS_CLASSES) != 0u) {
        surface_class = texelFetch(slot_classes, ivec3(origin.xy + ivec2(t + 0.5), origin.z), 0).r;
    }
    bool has_imagery = (r.slot_flags & SLOT_HAS_COLOUR) != 0u;
    vec3 imagery = has_imagery ? srgb_to_linear(texture(slot_colour, colour_uvw).rgb) : vec3(0.0);
    uint which = (pc.flags >> PALETTE_SHIFT) & 255u;
    Material m;
    if (which == 0u) {
        // Snow in the imagery: bright and nearly grey (linear reflectance).
        float lightest = max(imagery.r, max(imagery.g, imagery.b));
        float grey = 1.0 - (lightest - min(imagery.r, min(imagery.g, imagery.b))) / max(lightest, 1e-3);
        float imagery_snow = has_imagery ? smoothstep(0.35, 0.6, lightest) * smoothstep(0.6, 0.85, grey) : -1.0;
        m = earth_material(height_m, surface_class, slope, up, in_detail, footprint, imagery_snow);
    } else {
        // Airless palettes: their colour by elevation, varied by noise,
        // darker and rougher on steep slopes.
        float grain = fractal(in_detail, 64.0, 8, footprint, 53u);
        vec3 base = palette(height_m, surface_class, ground, up) * (1.0 + 0.3 * grain);
        float rocky = smoothstep(0.134, 0.293, slope);
        m = Material(base * (1.0 - 0.25 * rocky), mix(0.12, 0.22, rocky));
    }
    vec3 albedo = m.albedo;
    if (has_imagery) {
        // The imagery where its texel is about a pixel or smaller; the
        // material (still tinted by the imagery) once a texel spans several.
        vec3 tinted = mix(m.albedo, imagery, 0.35);
        albedo = mix(imagery, tinted, smoothstep(1.5, 8.0, texel_px));
    }
    // Micro-relief fades with distance as well as with the footprint.
    float distance_m = length(in_from_camera);
    float roughness = m.roughness * (1.0 - smoothstep(150.0, 600.0, distance_m));
    vec3 normal = perturb_normal(ground, in_detail, footprint, roughness);
    vec3 view_dir = in_from_camera / distance_m;
    vec3 lit = light_ground(albedo, normal, up);
    out_colour = vec4(finish_colour(apply_atmosphere(lit, view_dir, distance_m)), 1.0);
}
