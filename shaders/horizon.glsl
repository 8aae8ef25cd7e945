// Cast shadows and ambient occlusion from the frame's horizon map
// (planet_terrain::ground::horizon). The key decision: the map stores, per
// texel, the elevation angle of the ground's horizon toward the sun, and the
// fragment compares its own sun elevation with it, so the shadow's edge
// follows the sun between map rebuilds and is the same test the host's
// `HorizonMap::in_shadow` makes. The level read is the finest whose inner
// nine tenths hold the fragment, blended into the next over its outer part
// so no level edge is seen; past the widest, the ground is lit and open.
// Include after common.glsl.

layout(set = 0, binding = BINDING_HORIZON) uniform sampler2DArray horizon_map;

// The horizon map's basis from the view this draw is of (camera-relative,
// so each view has its own).
HorizonBasis view_horizon() {
    return horizon_of_view[(pc.flags >> VIEW_SHIFT) % MAX_VIEWS];
}

// (horizon angle in radians, openness) of level `level` at map position `p`
// (metres) where the level spans `extent` metres.
vec2 horizon_texel(uint level, vec2 p, float extent) {
    return texture(horizon_map, vec3(p / extent + 0.5, float(level))).rg;
}

// (share of the sun's disc seen, openness of the sky) at a fragment
// `from_camera` metres from the camera, with ellipsoid normal `up`.
vec2 horizon_light(vec3 from_camera, vec3 up) {
    HorizonBasis horizon = view_horizon();
    uint levels = uint(horizon.east.w);
    if (levels == 0u) return vec2(1.0);
    vec2 p = vec2(dot(from_camera, horizon.east.xyz), dot(from_camera, horizon.north.xyz)) + horizon.camera_in_map.xy;
    float reach = max(abs(p.x), abs(p.y));
    float extent = horizon.camera_in_map.w;
    // The sun's elevation from this fragment, against the stored horizon.
    float sun_elevation = asin(clamp(dot(pc.sun.xyz, up), -1.0, 1.0));
    for (uint level = 0u; level < levels; ++level) {
        if (reach < 0.45 * extent) {
            vec2 here = horizon_texel(level, p, extent);
            float outer = smoothstep(0.36, 0.45, reach / extent);
            vec2 beyond = level + 1u < levels ? horizon_texel(level + 1u, p, extent * horizon.north.w) : vec2(-1.5707963, 1.0);
            vec2 light = mix(here, beyond, outer);
            return vec2(smoothstep(-horizon.up.w, horizon.up.w, sun_elevation - light.x), light.y);
        }
        extent *= horizon.north.w;
    }
    return vec2(1.0);
}

// The openness of the sky over relief finer than the map's texels (a
// gully, a cirque's floor), from the node's own heights: one minus the mean
// sine of the rise to eight points three stored texels around. The node's
// tile is chosen for about a pixel of error, so this openness is at the
// scale the screen resolves wherever the fragment is.
float fine_openness(NodeRecord r, vec2 t, vec3 up, float height_m) {
    vec2 metres = texel_metres(r, up);
    float hidden = 0.0;
    for (int k = 0; k < 8; ++k) {
        vec2 d = vec2(cos(0.7853982 * float(k)), sin(0.7853982 * float(k)));
        float rise = bilinear_height(r, clamp(t + 3.0 * d, vec2(1.0), vec2(TILE_CELLS + 1.0)), TILE_CELLS) - height_m;
        float tangent = max(rise, 0.0) / (3.0 * length(d * metres));
        hidden += tangent * inversesqrt(1.0 + tangent * tangent);
    }
    return 1.0 - hidden / 8.0;
}
