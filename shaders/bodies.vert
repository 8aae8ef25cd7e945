#version 450
// Rigid bodies dropped on the ground (planet-physics), one draw per body:
// the shape's vertices come from gl_VertexIndex (a 16 x 8 UV sphere or a
// box), scaled and turned by the body's axes and placed camera-relative,
// so no vertex buffer exists and the host sends only the push constants.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_scalar_block_layout : require
#define BODY_PASS
#include "generated/abi.glsl"

layout(location = 0) out vec3 out_normal;

const uint SLICES = 16u;
const uint STACKS = 8u;
const uvec2 QUAD[6] = uvec2[](uvec2(0, 0), uvec2(1, 0), uvec2(1, 1), uvec2(0, 0), uvec2(1, 1), uvec2(0, 1));

vec3 on_sphere(uint slice, uint stack) {
    float around = 6.28318530718 * float(slice) / float(SLICES);
    float down = 3.14159265359 * float(stack) / float(STACKS);
    return vec3(sin(down) * cos(around), sin(down) * sin(around), cos(down));
}

void main() {
    uint v = uint(gl_VertexIndex);
    uvec2 corner = QUAD[v % 6u];
    uint quad = v / 6u;
    vec3 local;
    vec3 normal;
    if (uint(body.centre.w) == BODY_SPHERE) {
        local = on_sphere(quad % SLICES + corner.x, quad / SLICES + corner.y);
        normal = local;
    } else {
        // Face `quad`: axis quad / 2, facing + for even faces, - for odd.
        uint axis = quad / 2u;
        float side = (quad % 2u == 0u) ? 1.0 : -1.0;
        local = vec3(0.0);
        local[axis] = side;
        local[(axis + 1u) % 3u] = float(corner.x) * 2.0 - 1.0;
        local[(axis + 2u) % 3u] = float(corner.y) * 2.0 - 1.0;
        normal = vec3(0.0);
        normal[axis] = side;
    }
    mat3 axes = mat3(body.axis_x.xyz, body.axis_y.xyz, body.axis_z.xyz);
    vec3 p = body.centre.xyz + axes * local;
    // Axes are a rotation times half-sizes: normals go through the inverse transpose.
    out_normal = transpose(inverse(axes)) * normal;
    gl_Position = vec4(dot(body.x_row.xyz, p), dot(body.y_row.xyz, p), body.x_row.w, dot(body.w_row.xyz, p));
}
