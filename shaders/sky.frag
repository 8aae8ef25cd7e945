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
layout(set = 0, binding = BINDING_COUNTERS) buffer Counters { uint hole_pixels; };

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
    if ((pc.flags & FLAG_ATMOSPHERE) != 0u) {
        vec2 span = shell_span(pc.camera.xyz, dir);
        if (span.y > 0.0) {
            vec3 inscatter;
            float transmittance;
            march(pc.camera.xyz + dir * span.x, dir, max(span.y - span.x, 0.0), inscatter, transmittance);
            colour = inscatter;
        }
    }
    out_colour = vec4(finish_colour(colour), 1.0);
}
