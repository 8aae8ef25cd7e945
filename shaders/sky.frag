#version 450
// Space, the atmosphere's limb and sky, and the analytic ellipsoid beneath
// terrain that is still streaming. The ellipsoid hit is solved in
// radius-scaled coordinates with the numerically stable root and a constant
// term formed in f64 on the host, so it holds near the ground.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(location = 0) noperspective in vec3 in_ray;
layout(location = 0) out vec4 out_colour;

void main() {
    vec3 ray = in_ray;
    vec3 dir = normalize(ray);
    vec3 o = pc.camera.xyz * pc.inverse_radii.xyz;
    vec3 d = ray * pc.inverse_radii.xyz;
    float a = dot(d, d);
    float b = dot(o, d);
    float c = pc.radii.w;
    float disc = b * b - a * c;
    bool hits = disc >= 0.0 && (c < 0.0 || b < 0.0);
    if (hits && (pc.flags & FLAG_ANALYTIC_BODY) != 0u) {
        // Smaller root c / (-b + sqrt(disc)); from inside (c < 0) the far root.
        float t = c >= 0.0 ? c / (-b + sqrt(disc)) : (-b + sqrt(disc)) / a;
        vec3 point = pc.camera.xyz + ray * t;
        vec3 normal = normalize(point * pc.inverse_radii.xyz * pc.inverse_radii.xyz);
        vec3 albedo = palette(0.0, 0u, normal, normal);
        if (((pc.flags >> PALETTE_SHIFT) & 255u) == 0u) albedo = vec3(0.004, 0.02, 0.06);
        float distance_m = t * length(ray);
        out_colour = vec4(finish_colour(apply_atmosphere(light(albedo, normal), dir, distance_m)), 1.0);
        gl_FragDepth = pc.x_row.w / t;
        return;
    }
    // Background: everything the ray passes through before space (or the ground).
    vec3 colour = vec3(0.0);
    if ((pc.flags & FLAG_ATMOSPHERE) != 0u) {
        vec2 span = shell_span(pc.camera.xyz, dir);
        if (span.y > 0.0) {
            float stop = span.y;
            if (hits) {
                float t = c >= 0.0 ? c / (-b + sqrt(disc)) : (-b + sqrt(disc)) / a;
                stop = min(stop, t * length(ray));
            }
            vec3 inscatter;
            float transmittance;
            march(pc.camera.xyz + dir * span.x, dir, max(stop - span.x, 0.0), inscatter, transmittance);
            colour = inscatter;
        }
    }
    out_colour = vec4(finish_colour(colour), 1.0);
    gl_FragDepth = 0.0;
}
