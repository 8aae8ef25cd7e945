#version 450
// The HUD: an overlay the host rasterises, blended over the top-left corner.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(set = 0, binding = BINDING_HUD) uniform texture2DArray hud_overlay;
layout(location = 0) noperspective in vec3 in_ray;
layout(location = 0) out vec4 out_colour;

const ivec2 HUD_ORIGIN = ivec2(8, 8);

void main() {
    ivec2 p = ivec2(gl_FragCoord.xy) - HUD_ORIGIN;
    ivec2 size = textureSize(hud_overlay, 0).xy;
    if (any(lessThan(p, ivec2(0))) || any(greaterThanEqual(p, size))) discard;
    vec4 c = texelFetch(hud_overlay, ivec3(p, 0), 0);
    if (c.a == 0.0) discard;
    out_colour = c;
}
