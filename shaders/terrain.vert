#version 450
// The terrain vertex shader: one instance per selected node, one vertex per
// lattice point (33 x 33) plus a skirt of 4 x 33 below the node's edges.
// The position path mirrors planet_terrain::lod::reference_vertex
// operation for operation (`precise` keeps the compiler from fusing or
// reordering it), and a conformance test holds the two together.
// Variants: DEPTH_ONLY (position only), CAPTURE (writes positions to a
// storage buffer instead of rasterising).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "heights.glsl"

#ifdef CAPTURE
layout(set = 0, binding = BINDING_CAPTURED) writeonly buffer Captured { vec4 captured[]; };
#endif

precise gl_Position;

#if !defined(DEPTH_ONLY) && !defined(CAPTURE)
// The fragment shader reads the node's record itself (out_node) and
// derives heights, normals and materials per fragment from the stored-texel
// coordinate (affine over the lattice, so interpolation is exact) and the
// detail position (the node centre modulo DETAIL_PERIOD_M plus the
// node-local offset: small numbers, never a planet-scale f32 position).
layout(location = 0) out vec2 out_texel;
layout(location = 1) out vec3 out_from_camera;
layout(location = 2) out vec3 out_detail;
layout(location = 3) flat out uint out_node;
layout(location = 4) out vec3 out_up;
#endif

const float FRAC_PI_4 = 0.78539816339744830962;

float warp_step(float ds, float tan_pi4) {
    precise float x = ds * FRAC_PI_4;
    precise float x2 = x * x;
    precise float sigma = x2 * (-1.0 / 6.0 + x2 * (1.0 / 120.0 + x2 * (-1.0 / 5040.0 + x2 * (1.0 / 362880.0))));
    precise float gamma = x2 * (0.5 - x2 * (1.0 / 24.0 - x2 * (1.0 / 720.0 - x2 * (1.0 / 40320.0 - x2 * (1.0 / 3628800.0)))));
    precise float sin_scaled = ds + ds * sigma;
    precise float a_sin = tan_pi4 * sin_scaled;
    precise float denominator = (1.0 - gamma) - a_sin;
    precise float result = ds * ((sigma + gamma) + a_sin) / denominator;
    return result;
}

precise vec3 fma3(vec3 a, float b, vec3 c) {
    return fma(a, vec3(b), c);
}

// The surface delta of (ds, dt) from the centre, as main + tail.
void surface_delta(NodeBasis f, float ds, float dt, out vec3 main_part, out vec3 tail) {
    precise float c_u = warp_step(ds, f.tan_u_pi4);
    precise float c_v = warp_step(dt, f.tan_v_pi4);
    precise float alpha = f.sec2_pi4.x * (ds + c_u);
    precise float beta = f.sec2_pi4.y * (dt + c_v);
    precise float centre_dot_step = f.tan_u * alpha + f.tan_v * beta;
    precise float step_sq = alpha * alpha + beta * beta;
    precise float length_sq_change = 2.0 * centre_dot_step + step_sq;
    precise float cube_length = sqrt(f.cube_length * f.cube_length + length_sq_change);
    precise float length_sum = cube_length + f.cube_length;
    precise float length_change = length_sq_change / length_sum;
    precise float q = (centre_dot_step * length_change / f.cube_length - step_sq) / length_sum;
    precise float epsilon = length_change / f.cube_length;
    precise vec3 low = fma3(f.w_u_lo, ds, f.w_v_lo * dt);
    precise vec3 m = fma3(f.w_u, ds, fma3(f.w_v, dt, low));
    precise vec3 small = fma3(f.w_u, c_u, fma3(f.w_v, c_v, f.w_d * q));
    precise float shrink = epsilon / (1.0 + epsilon);
    main_part = m;
    tail = small - (m + small) * shrink;
}

precise float length_exact(vec3 v) {
    precise float s = v.x * v.x + v.y * v.y + v.z * v.z;
    return sqrt(s);
}

precise float dot_exact(vec3 a, vec3 b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

// planet_terrain::precision::vertex_offset; also returns the ellipsoid
// normal at the sample (the centre's normal plus its change).
vec3 vertex_offset(NodeBasis f, float ds, float dt, float height_above_centre, float height, out vec3 local_normal) {
    vec3 main_part;
    vec3 tail;
    surface_delta(f, ds, dt, main_part, tail);
    precise vec3 dm = (main_part + tail) * f.kappa;
    precise float m_length = length_exact(f.m + dm);
    precise float m_length_change = (2.0 * dot_exact(f.m, dm) + dot_exact(dm, dm)) / (m_length + f.m_length);
    precise vec3 normal_change = (dm - f.normal * m_length_change) / m_length;
    precise vec3 elevation = fma3(f.normal, height_above_centre, normal_change * height);
    precise vec3 result = main_part + (tail + elevation);
    local_normal = f.normal + normal_change;
    return result;
}

vec3 position(NodeRecord r, float u, float v, out vec3 local_normal) {
    // 2^-(depth + 4), built from its bits: exp2 may be approximate.
    float cell = uintBitsToFloat(uint(127 - int(r.depth) - 4) << 23);
    precise float ds = (u - 16.0) * cell;
    precise float dt = (v - 16.0) * cell;
    float h = bilinear_height(r, texel_of(r, u, v), TILE_CELLS);
    precise float above = h - r.centre_height;
    precise vec3 offset = vertex_offset(r.basis, ds, dt, above, h, local_normal);
    precise vec3 p = r.centre_from_camera + offset;
    return p;
}

float morph_factor(NodeRecord r, uint i, uint j, float distance_m) {
    uint edge = 4u;
    if (i == 0u) edge = 0u;
    else if (i == LATTICE_CELLS) edge = 1u;
    else if (j == 0u) edge = 2u;
    else if (j == LATTICE_CELLS) edge = 3u;
    if (edge < 4u) {
        uint relation = (r.edges >> (2u * edge)) & 3u;
        if (relation == EDGE_COARSER) return 1.0;
        if (relation == EDGE_FINER) return 0.0;
    }
    // (d - start) / (end - start), clamped; a zero-width band morphs fully
    // beyond its start, as the reference's IEEE division does.
    if (r.morph_end > r.morph_start) {
        precise float t = (distance_m - r.morph_start) / (r.morph_end - r.morph_start);
        return clamp(t, 0.0, 1.0);
    }
    return distance_m > r.morph_start ? 1.0 : 0.0;
}

vec3 lattice_vertex(NodeRecord r, uint i, uint j, out vec3 local_normal) {
    vec3 p = position(r, float(i), float(j), local_normal);
    if ((i & 1u) == 0u && (j & 1u) == 0u) return p;
    float k = morph_factor(r, i, j, length_exact(p));
    if (k == 0.0) return p;
    vec3 ignored;
    vec3 a;
    vec3 b;
    if ((i & 1u) == 1u && (j & 1u) == 0u) {
        a = position(r, float(i - 1u), float(j), ignored);
        b = position(r, float(i + 1u), float(j), ignored);
    } else if ((i & 1u) == 0u) {
        a = position(r, float(i), float(j - 1u), ignored);
        b = position(r, float(i), float(j + 1u), ignored);
    } else {
        a = position(r, float(i - 1u), float(j - 1u), ignored);
        b = position(r, float(i + 1u), float(j + 1u), ignored);
    }
    precise vec3 target = (a + b) * 0.5;
    precise vec3 blended = p * (1.0 - k) + target * k;
    return blended;
}

void main() {
    NodeRecord r = records[gl_InstanceIndex];
    uint index = uint(gl_VertexIndex);
    uint i;
    uint j;
    bool skirt = index >= LATTICE_VERTICES;
    if (skirt) {
        uint e = (index - LATTICE_VERTICES) / LATTICE_SIDE;
        uint along = (index - LATTICE_VERTICES) % LATTICE_SIDE;
        i = e == 0u ? 0u : (e == 1u ? LATTICE_CELLS : along);
        j = e == 2u ? 0u : (e == 3u ? LATTICE_CELLS : along);
    } else {
        i = index % LATTICE_SIDE;
        j = index / LATTICE_SIDE;
    }
    vec3 local_normal;
    vec3 p = lattice_vertex(r, i, j, local_normal);
    local_normal = normalize(local_normal);
    if (skirt) p -= local_normal * r.skirt_m;
#ifdef CAPTURE
    captured[gl_InstanceIndex * int(NODE_VERTICES) + gl_VertexIndex] = vec4(p, 0.0);
    gl_Position = vec4(0.0, 0.0, 0.5, 1.0);
#else
    gl_Position = clip_position(p);
#endif
#if !defined(DEPTH_ONLY) && !defined(CAPTURE)
    out_texel = texel_of(r, float(i), float(j));
    out_up = local_normal;
    out_from_camera = p;
    out_detail = r.detail_origin + (p - r.centre_from_camera);
    out_node = uint(gl_InstanceIndex);
#endif
}
