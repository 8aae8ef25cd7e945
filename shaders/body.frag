#version 450
// The analytic ellipsoid beneath terrain that is still streaming (or of a
// body with no ground at all). The hit is solved in radius-scaled
// coordinates with the numerically stable root and a constant term formed
// in f64 on the host, so it holds near the ground; the fragment writes the
// hit's reversed-Z depth, so terrain nearer than the ellipsoid stays. It is
// lit as the day and night of its point say (light_at): dark on the night
// side, through twilight at the terminator.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(location = 0) noperspective in vec3 in_ray;
layout(location = 0) out vec4 out_colour;

void main() {
    vec3 ray = in_ray;
    vec3 o = pc.camera.xyz * pc.inverse_radii.xyz;
    vec3 d = ray * pc.inverse_radii.xyz;
    float a = dot(d, d);
    float b = dot(o, d);
    float c = pc.radii.w;
    float disc = b * b - a * c;
    if (disc < 0.0 || (c >= 0.0 && b >= 0.0)) discard;
    // Smaller root c / (-b + sqrt(disc)); from inside (c < 0) the far one.
    float t = c >= 0.0 ? c / (-b + sqrt(disc)) : (-b + sqrt(disc)) / a;
    vec3 point = pc.camera.xyz + ray * t;
    vec3 normal = normalize(point * pc.inverse_radii.xyz * pc.inverse_radii.xyz);
    vec3 albedo = palette(0.0, 0u, normal, normal);
    if (((pc.flags >> PALETTE_SHIFT) & 255u) == 0u) albedo = vec3(0.004, 0.02, 0.06);
    float distance_m = t * length(ray);
    out_colour = vec4(finish_colour(apply_atmosphere(light_at(albedo, normal, normal), normalize(ray), distance_m)), 1.0);
    // The ray's forward component is 1 (sky.vert), so t is the view depth.
    gl_FragDepth = pc.x_row.w / t;
}
