#version 450
// Rigid bodies: a flat colour lit by the sun (Lambert plus ambient).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_scalar_block_layout : require
#define BODY_PASS
#include "generated/abi.glsl"

layout(location = 0) in vec3 in_normal;
layout(location = 0) out vec4 out_colour;

void main() {
    vec3 sun = vec3(body.axis_x.w, body.axis_y.w, body.axis_z.w);
    float lit = max(dot(normalize(in_normal), sun), 0.0);
    out_colour = vec4(body.colour.rgb * (body.colour.w + (1.0 - body.colour.w) * lit), 1.0);
}
