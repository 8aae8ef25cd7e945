#version 450
// Shaded terrain: the pack's colour block where the slot has one, otherwise
// a palette by surface class and elevation; a sun, a sky fill, and aerial
// perspective along the view ray.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(location = 0) in vec3 in_normal;
layout(location = 1) in vec3 in_from_camera;
layout(location = 2) in vec3 in_colour_uvw;
layout(location = 3) flat in uint in_slot_flags;
layout(location = 4) in float in_height;
layout(location = 5) in vec3 in_up;
layout(location = 6) flat in uint in_slot;

layout(location = 0) out vec4 out_colour;

void main() {
    vec3 normal = normalize(in_normal);
    vec3 up = normalize(in_up);
    vec3 albedo;
    if ((in_slot_flags & SLOT_HAS_COLOUR) != 0u) {
        vec3 srgb = texture(slot_colour, in_colour_uvw).rgb;
        albedo = pow(srgb, vec3(2.2));
    } else {
        uint surface_class = 0u;
        if ((in_slot_flags & SLOT_HAS_CLASSES) != 0u) {
            ivec2 texel = ivec2(in_colour_uvw.xy * STORED_SAMPLES);
            surface_class = texelFetch(slot_classes, ivec3(texel, int(in_slot)), 0).r;
        }
        albedo = palette(in_height, surface_class, normal, up);
    }
    float distance_m = length(in_from_camera);
    vec3 view_dir = in_from_camera / distance_m;
    vec3 lit = light(albedo, normal);
    out_colour = vec4(finish_colour(apply_atmosphere(lit, view_dir, distance_m)), 1.0);
}
