#version 450
// A full-screen triangle whose interpolated output is the body-fixed view
// ray of each pixel: the ray is linear in NDC, so the rasteriser computes it.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(location = 0) noperspective out vec3 out_ray;

void main() {
    vec2 ndc = vec2(float((gl_VertexIndex << 1) & 2), float(gl_VertexIndex & 2)) * 2.0 - 1.0;
    // Rows x, y and w of the clip transform map a direction d to
    // (ndc.x, ndc.y, 1) * w; solving for d with w = 1 gives a ray whose
    // forward component is 1, so a hit at parameter t lies t metres ahead.
    mat3 m = transpose(mat3(pc.x_row.xyz, pc.y_row.xyz, pc.w_row.xyz));
    out_ray = inverse(m) * vec3(ndc, 1.0);
    // Depth 0: the farthest a reversed-Z buffer holds, so the sky passes only
    // where nothing was drawn.
    gl_Position = vec4(ndc, 0.0, 1.0);
}
