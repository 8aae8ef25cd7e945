// Heights of a node's bound slot, shared by terrain.vert (positions) and
// terrain.frag (per-fragment normals). The key decision: both stages read
// the stored u16 samples with the same integer fetches blended bilinearly
// (never a filtered sampler), so the fragment's normal is the derivative of
// exactly the surface the vertex shader places. `precise` keeps the
// compiler from fusing the vertex path (the conformance test holds it to
// planet_terrain::lod::reference_vertex). Include after common.glsl.

float decode(NodeRecord r, int x, int y) {
    ivec3 origin = slot_origin(r.slot);
    uint q = texelFetch(slot_heights, ivec3(origin.x + x, origin.y + y, origin.z), 0).r;
    precise float h = r.height_base + float(q) * r.height_step;
    return h;
}

// The surface drawn at stored sample (x, y) whose ground is `h`: the sea's,
// 0 m, where the body has one and the sample lies under it (below 0 m,
// class ocean or none), else the ground: planet_terrain::ground::water::
// drawn_height, applied per sample before any blend so the host's queries
// place the same surface. The class is fetched only below 0 m, and a
// slot with no sample below 0 m (its lowest, `height_base`) skips the test
// for the whole node: a branch every lane takes alike, where a per-sample
// one cost a class fetch per sample on land too (lavapipe runs both sides).
float drawn_from(NodeRecord r, int x, int y, float h) {
    if ((pc.flags & FLAG_SEA) == 0u || r.height_base >= 0.0 || h >= 0.0) return h;
    ivec3 origin = slot_origin(r.slot);
    uint c = (r.slot_flags & SLOT_HAS_CLASSES) != 0u ? texelFetch(slot_classes, ivec3(origin.xy + ivec2(x, y), origin.z), 0).r : 0u;
    return (c == 0u || c == 1u) ? 0.0 : h;
}

float drawn_sample(NodeRecord r, int x, int y) {
    return drawn_from(r, x, y, decode(r, x, y));
}

// Stored-texel coordinate of lattice coordinate u (0..32) in the bound slot.
vec2 texel_of(NodeRecord r, float u, float v) {
    precise float tu = 1.0 + TILE_CELLS * (r.uv_offset.x + r.uv_scale * u / float(LATTICE_CELLS));
    precise float tv = 1.0 + TILE_CELLS * (r.uv_offset.y + r.uv_scale * v / float(LATTICE_CELLS));
    return vec2(tu, tv);
}

// The drawn surface (`drawn_sample`) at stored-texel coordinate t: four
// integer fetches blended bilinearly (never a filtered sampler); `last` is
// the highest cell origin allowed.
float bilinear_height(NodeRecord r, vec2 t, float last) {
    precise float u0 = min(floor(t.x), last);
    precise float v0 = min(floor(t.y), last);
    precise float fu = t.x - u0;
    precise float fv = t.y - v0;
    int x = int(u0);
    int y = int(v0);
    float h00 = drawn_sample(r, x, y);
    // On a texel exactly (every vertex of a node reading its own tile) the
    // blend is h00 + 0 * (...) = h00: one fetch instead of four, same bits.
    if (fu == 0.0 && fv == 0.0) return h00;
    float h10 = drawn_sample(r, x + 1, y);
    float h01 = drawn_sample(r, x, y + 1);
    float h11 = drawn_sample(r, x + 1, y + 1);
    precise float bottom = h00 + fu * (h10 - h00);
    precise float top = h01 + fu * (h11 - h01);
    precise float h = bottom + fv * (top - bottom);
    return h;
}

// The drawn surface at stored-texel coordinate t (as bilinear_height), and
// the ground beneath it (the sea floor under water), from one set of four
// fetches: what the fragments shade and measure the water's depth to.
float height_and_floor(NodeRecord r, vec2 t, out float floor_m) {
    vec2 cell = min(floor(t), vec2(TILE_CELLS));
    vec2 f = t - cell;
    ivec2 i = ivec2(cell);
    vec4 g = vec4(decode(r, i.x, i.y), decode(r, i.x + 1, i.y), decode(r, i.x, i.y + 1), decode(r, i.x + 1, i.y + 1));
    floor_m = mix(mix(g.x, g.y, f.x), mix(g.z, g.w, f.x), f.y);
    vec4 d = vec4(drawn_from(r, i.x, i.y, g.x), drawn_from(r, i.x + 1, i.y, g.y), drawn_from(r, i.x, i.y + 1, g.z),
        drawn_from(r, i.x + 1, i.y + 1, g.w));
    return mix(mix(d.x, d.y, f.x), mix(d.z, d.w, f.x), f.y);
}

// The ground spacing (metres) of one stored texel along the face's u and v
// axes, where the ellipsoid normal is `up`.
vec2 texel_metres(NodeRecord r, vec3 up) {
    // 2^-(depth + 6) / uv_scale, built from its bits: exp2 may be approximate.
    float texel_grid = uintBitsToFloat(uint(127 - int(r.depth) - 6) << 23) / r.uv_scale;
    vec3 tangent_u = r.basis.w_u - up * dot(up, r.basis.w_u);
    vec3 tangent_v = r.basis.w_v - up * dot(up, r.basis.w_v);
    return vec2(length(tangent_u), length(tangent_v)) * texel_grid;
}

// The ground normal at stored-texel coordinate t: central differences one
// stored texel either side (the apron makes the edges' neighbours local),
// bilinearly interpolated like the heights, over the texel's ground spacing
// along the face axes. `up` is the ellipsoid normal there.
vec3 height_normal(NodeRecord r, vec2 t, vec3 up) {
    float hu = bilinear_height(r, t + vec2(1.0, 0.0), TILE_CELLS + 1.0) - bilinear_height(r, t - vec2(1.0, 0.0), TILE_CELLS + 1.0);
    float hv = bilinear_height(r, t + vec2(0.0, 1.0), TILE_CELLS + 1.0) - bilinear_height(r, t - vec2(0.0, 1.0), TILE_CELLS + 1.0);
    vec3 tangent_u = r.basis.w_u - up * dot(up, r.basis.w_u);
    vec3 tangent_v = r.basis.w_v - up * dot(up, r.basis.w_v);
    vec2 metres = texel_metres(r, up);
    vec3 n = up - normalize(tangent_u) * (hu / (2.0 * metres.x)) - normalize(tangent_v) * (hv / (2.0 * metres.y));
    return normalize(n);
}
