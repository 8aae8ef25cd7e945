#version 450
// Whatever nothing else drew: space, and the atmosphere along the ray. Early
// fragment tests at depth 0 (reversed Z) run it only where no terrain and no
// ellipsoid landed, which makes it the place to count holes: a pixel here
// whose ray meets the body below its deepest ground is ground that should
// have been drawn and was not.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(early_fragment_tests) in;
layout(location = 0) noperspective in vec3 in_ray;
layout(location = 0) out vec4 out_colour;
// The frame's counters (terrain.frag counts the no-data pixels).
layout(set = 0, binding = BINDING_COUNTERS) buffer Counters { uint hole_pixels; uint no_data_pixels; };

// What the sky holds besides its scattered light: the sun's disc and its
// glow, the stars, and a faint airglow. The key decision: all three are
// light arriving along the ray, dimmed by the same air (`transmittance`)
// the ground's light crosses, and the stars and airglow are hidden in
// proportion to the sky's own brightness, so daylight drowns them as it
// does for an eye; nothing of them is painted over ground or over a day sky.

// The sun's angular radius from 1 AU (0.2666 degrees), radians.
const float SUN_RADIUS = 0.004653;
// The disc's radiance (linear, before exposure): far past white.
const float SUN_RADIANCE = 60.0;
// Cells along a cube-face side of the star field: about 0.18 degrees.
const float STAR_CELLS = 512.0;
// The share of cells holding a star: about 12,600 over the sky.
const float STAR_SHARE = 0.008;

// A uniform number in [0, 1) from a hash lane.
float unit(uint h) {
    return float(h >> 8u) * (1.0 / 16777216.0);
}

// Henyey-Greenstein's forward lobe (aerosols around the sun), per steradian.
float forward_lobe(float mu, float g) {
    float k = 1.0 + g * g - 2.0 * g * mu;
    return (1.0 - g * g) / (12.566371 * k * sqrt(k));
}

// The star field toward body-fixed `dir`, `pixel` radians a pixel: the
// body's turn (w_row.w) takes the direction to the sky's own frame, whose
// cube-face cells hold at most one star each, a point spread over about a
// pixel whatever the field of view.
vec3 stars(vec3 dir, float pixel) {
    float turn = pc.w_row.w;
    float c = cos(turn);
    float s = sin(turn);
    vec3 d = vec3(c * dir.x - s * dir.y, s * dir.x + c * dir.y, dir.z);
    vec3 a = abs(d);
    uint face;
    vec2 uv;
    if (a.x >= a.y && a.x >= a.z) {
        face = d.x > 0.0 ? 0u : 1u;
        uv = d.yz / a.x;
    } else if (a.y >= a.z) {
        face = d.y > 0.0 ? 2u : 3u;
        uv = d.xz / a.y;
    } else {
        face = d.z > 0.0 ? 4u : 5u;
        uv = d.xy / a.z;
    }
    vec2 g = (uv * 0.5 + 0.5) * STAR_CELLS;
    uvec2 cell = uvec2(clamp(floor(g), vec2(0.0), vec2(STAR_CELLS - 1.0)));
    uvec3 h = pcg3d(uvec3(cell, face * 7919u + 4099u));
    if (unit(h.x) >= STAR_SHARE) return vec3(0.0);
    // Inside the cell's middle half, so the spot is whole within it.
    vec2 centre = vec2(cell) + 0.25 + 0.5 * vec2(unit(h.y), unit(h.z));
    // A face's angle per cell shrinks as 1 / (1 + u^2) off its centre.
    float radians_off = length(g - centre) * (2.0 / STAR_CELLS) / (1.0 + dot(uv, uv));
    float spread = max(0.6 * pixel, 1e-6);
    float spot = exp(-0.5 * radians_off * radians_off / (spread * spread));
    uvec3 k = pcg3d(h);
    // Most stars faint, a few bright; cool red to hot blue-white.
    float brightness = 0.02 + pow(unit(k.x), 7.0);
    vec3 tint = mix(vec3(1.0, 0.78, 0.55), vec3(0.75, 0.85, 1.0), unit(k.y));
    return tint * brightness * spot;
}

void main() {
    vec3 ray = in_ray;
    vec3 dir = normalize(ray);
    // The ray against the ellipsoid shrunk to the deepest ground.
    float floor_scale = pc.y_row.w;
    vec3 o = pc.camera.xyz * pc.inverse_radii.xyz / floor_scale;
    vec3 d = ray * pc.inverse_radii.xyz / floor_scale;
    float a = dot(d, d);
    float b = dot(o, d);
    float c = pc.camera.w;
    float disc = b * b - a * c;
    bool below_ground = disc >= 0.0 && (c < 0.0 || b < 0.0);
    if (below_ground && (pc.flags & FLAG_ANALYTIC_BODY) == 0u) atomicAdd(hole_pixels, 1u);
    vec3 colour = vec3(0.0);
    float transmittance = 1.0;
    if ((pc.flags & FLAG_ATMOSPHERE) != 0u) {
        vec2 span = shell_span(pc.camera.xyz, dir);
        if (span.y > 0.0) {
            vec3 inscatter;
            march(pc.camera.xyz + dir * span.x, dir, max(span.y - span.x, 0.0), inscatter, transmittance);
            colour = inscatter;
        }
    }
    // The body itself stands in front of everything beyond it.
    if (!below_ground) {
        float pixel = length(fwidth(dir));
        float mu = dot(dir, pc.sun.xyz);
        // Sunlight through much air has lost its blue: a low sun is orange.
        vec3 sunlight = mix(vec3(1.0, 0.42, 0.16), vec3(1.0, 0.97, 0.92), smoothstep(0.05, 0.6, transmittance));
        float edge = cos(SUN_RADIUS);
        float on_disc = smoothstep(cos(SUN_RADIUS + pixel), edge, mu);
        colour += sunlight * (SUN_RADIANCE * transmittance * on_disc);
        colour += sunlight * (0.35 * forward_lobe(mu, 0.76) * (1.0 - transmittance));
        // Faint light of the dark sky: hidden under a bright one.
        float dark = exp(-400.0 * dot(colour, vec3(0.2126, 0.7152, 0.0722)));
        vec3 airglow = vec3(0.010, 0.022, 0.012) * (1.0 - transmittance);
        colour += dark * (stars(dir, pixel) * transmittance + airglow);
    }
    out_colour = vec4(finish_colour(colour), 1.0);
}
