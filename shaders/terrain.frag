#version 450
// Shaded terrain, per fragment from the node's record: the height normal
// from the bound slot's samples (the same fetches the vertex shader uses),
// tilted by a procedural micro-relief near the camera; the pack's imagery,
// filtered by a cubic B-spline, as the colour at every scale, with a
// material by class, slope, latitude and elevation (surface.glsl) carrying
// the structure finer than its texel (the material alone only where a
// texel spans hundreds of pixels, a person's view of the ground); a sun whose
// light and sky fill go out below the horizon; water that reflects the sky
// and the sun's glint, inside coasts drawn as the contour of the class
// samples (surface.glsl), at the sea's level over the floor the samples
// keep, the floor showing through shallow water; cast shadows and ambient
// occlusion from the horizon map (horizon.glsl); aerial perspective.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "heights.glsl"
#include "surface.glsl"
#include "horizon.glsl"

// Depth and stencil tests before shading, said outright: the shaded pass
// tests against the depth prepass (greater-or-equal, no depth writes) and
// this shader neither discards nor writes depth, so testing first changes
// no pixel, and every driver then shades only the fragments that survive
// the prepass instead of the overdraw it exists to skip.
layout(early_fragment_tests) in;

layout(location = 0) in vec2 in_texel;
layout(location = 1) in vec3 in_from_camera;
layout(location = 2) in vec3 in_detail;
layout(location = 3) flat in uint in_node;
layout(location = 4) in vec3 in_up;

layout(location = 0) out vec4 out_colour;
// The frame's counters (sky.frag counts the holes).
layout(set = 0, binding = BINDING_COUNTERS) buffer Counters { uint hole_pixels; uint no_data_pixels; };

// planet_terrain::ground::NO_DATA_CLASS: ground no pack measured.
const uint NO_DATA_CLASS = 255u;

// Ground no pack measured, as what it is: a neutral grey, lit so its shape
// shows, under a faint graticule of 10, 1, 0.1 and 0.01 degrees, each
// family a pixel wide and fading out where its lines come closer than
// about 40 pixels (so no line ends where the spacing changes).
vec3 no_data_albedo(vec3 up, float footprint) {
    float lat = degrees(asin(clamp(up.z, -1.0, 1.0)));
    float lon = degrees(atan(up.y, up.x));
    float degrees_per_pixel = max(footprint, 1e-3) / 111320.0;
    float line = 0.0;
    float spacing = 10.0;
    for (int k = 0; k < 4; ++k) {
        float apart_px = spacing / degrees_per_pixel;
        float off_lat = abs(fract(lat / spacing + 0.5) - 0.5) * apart_px;
        float off_lon = abs(fract(lon / spacing + 0.5) - 0.5) * apart_px * cos(radians(lat));
        float family = 1.0 - smoothstep(0.5, 1.5, min(off_lat, off_lon));
        line = max(line, family * smoothstep(15.0, 60.0, apart_px));
        spacing *= 0.1;
    }
    return srgb_to_linear(vec3(0.50, 0.50, 0.48)) * (1.0 - 0.2 * line);
}

// Whether stored sample `at` of the bound slot is water (ground below 0 m
// where the slot has no classes); indices clamped to the stored square.
float water_at(NodeRecord r, ivec3 origin, ivec2 at, bool has_classes) {
    at = clamp(at, ivec2(0), ivec2(TILE_CELLS + 2));
    uint c = has_classes ? texelFetch(slot_classes, ivec3(origin.xy + at, origin.z), 0).r : 0u;
    // The height decides only for an unclassified sample: fetched only there.
    return water_sample(c, c == 0u ? decode(r, at.x, at.y) : 0.0) ? 1.0 : 0.0;
}

// Cubic B-spline weights of the four samples around a fraction `f`.
vec4 bspline(float f) {
    float g = 1.0 - f;
    return vec4(g * g * g, 3.0 * f * f * f - 6.0 * f * f + 4.0, 3.0 * g * g * g - 6.0 * g * g + 4.0, f * f * f) / 6.0;
}

// The imagery at stored-texel coordinate `t` (texel i's centre at t = i)
// of the slot at `origin`: a cubic B-spline of its colour texels, from
// four bilinear taps placed so the sampler's blend gives the spline's
// weights. Smooth in value and slope across texels and, since the slot's
// apron holds the neighbours' texels and a resampled slot holds the
// ancestor's spline (planet_terrain's PackSource), across tiles: a
// bilinear blend drew a 4 km texel as a diamond, an isolated dark one as
// a star. For t in 1..129 the taps stay within the slot's texels 0..130.
vec3 imagery_at(ivec3 origin, vec2 t) {
    vec4 wx = bspline(fract(t.x));
    vec4 wy = bspline(fract(t.y));
    vec2 cell = floor(t);
    vec2 lo = vec2(wx.x + wx.y, wy.x + wy.y);
    vec2 hi = vec2(wx.z + wx.w, wy.z + wy.w);
    vec2 at_lo = cell - 1.0 + vec2(wx.y, wy.y) / lo;
    vec2 at_hi = cell + 1.0 + vec2(wx.w, wy.w) / hi;
    vec2 size = vec2(textureSize(slot_colour, 0).xy);
    vec2 base = vec2(origin.xy) + 0.5;
    vec3 a = texture(slot_colour, vec3((base + at_lo) / size, float(origin.z))).rgb;
    vec3 b = texture(slot_colour, vec3((base + vec2(at_hi.x, at_lo.y)) / size, float(origin.z))).rgb;
    vec3 c = texture(slot_colour, vec3((base + vec2(at_lo.x, at_hi.y)) / size, float(origin.z))).rgb;
    vec3 d = texture(slot_colour, vec3((base + at_hi) / size, float(origin.z))).rgb;
    return lo.y * (lo.x * a + hi.x * b) + hi.y * (lo.x * c + hi.x * d);
}

// The sea's share around `t`: the water flags of the 4 x 4 class samples
// around it blended by a cubic B-spline, so the 0.5 contour (the coast)
// runs as a curve where the samples say so, instead of their texel
// staircase or a bilinear blend's 45-degree chamfers. A slot deeper than
// its classes holds nearest copies of them, `2^levels` texels to a sample:
// the spline takes the samples themselves, at that spacing. Where the four
// nearest agree the contour cannot pass and their flag is the answer.
float water_cover(NodeRecord r, vec2 t, bool has_classes) {
    ivec3 origin = slot_origin(r.slot);
    int spacing = 1 << int((r.slot_flags >> SLOT_CLASS_LEVELS_SHIFT) & 7u);
    vec2 q = (t - 1.0) / float(spacing);
    vec2 cell = floor(q);
    vec2 f = q - cell;
    ivec2 i = ivec2(1) + ivec2(cell) * spacing;
    float a = water_at(r, origin, i, has_classes);
    float b = water_at(r, origin, i + ivec2(spacing, 0), has_classes);
    float c = water_at(r, origin, i + ivec2(0, spacing), has_classes);
    float d = water_at(r, origin, i + ivec2(spacing, spacing), has_classes);
    if (a == b && a == c && a == d) return a;
    vec4 wx = bspline(f.x);
    vec4 wy = bspline(f.y);
    float cover = 0.0;
    for (int y = 0; y < 4; ++y) {
        for (int x = 0; x < 4; ++x) {
            cover += wx[x] * wy[y] * water_at(r, origin, i + ivec2(x - 1, y - 1) * spacing, has_classes);
        }
    }
    return cover;
}

// The land's colour, lit: its height normal, the imagery with a material
// by palette (for the earth's, by class, slope, elevation and imagery,
// with beaches at the coast's contour `cover`) carrying what is finer than
// its texel, micro-relief near the camera and the horizon map's openness
// at the fragment's own scale. Derivatives are taken by the caller (this runs where some
// land is in the pixel, not everywhere).
vec3 shade_land(NodeRecord r, vec2 t, vec3 up, float height_m, float floor_m, uint surface_class, bool has_classes,
    vec3 imagery, bool has_imagery, float texel_px, float cover, float footprint, float distance_m, vec2 shade) {
    vec3 ground = height_normal(r, t, up);
    float slope = 1.0 - clamp(dot(ground, up), 0.0, 1.0);
    uint which = (pc.flags >> PALETTE_SHIFT) & 255u;
    Material m;
    // Land's material even where the nearest sample is water: the coast's
    // contour blends it with the water's.
    bool nearest_wet = water_sample(surface_class, floor_m);
    float land_m = nearest_wet ? max(height_m, 0.5) : height_m;
    uint land_class = nearest_wet ? 2u : surface_class;
    float imagery_snow = -1.0;
    if (surface_class == NO_DATA_CLASS) {
        return light_ground(no_data_albedo(up, footprint), ground, up, shade);
    } else if (which == 0u) {
        // Snow in the imagery: bright and nearly grey (linear reflectance).
        float lightest = max(imagery.r, max(imagery.g, imagery.b));
        float grey = 1.0 - (lightest - min(imagery.r, min(imagery.g, imagery.b))) / max(lightest, 1e-3);
        if (has_imagery) imagery_snow = smoothstep(0.35, 0.6, lightest) * smoothstep(0.6, 0.85, grey);
        m = earth_material(land_m, land_class, ground, slope, up, in_detail, footprint, imagery_snow);
    } else {
        // Airless palettes: their colour by elevation, varied by noise,
        // darker and rougher on steep slopes.
        float grain = fractal(in_detail, 64.0, 8, footprint, 53u);
        vec3 base = palette(height_m, surface_class, ground, up) * (1.0 + 0.3 * grain);
        float rocky = smoothstep(0.134, 0.293, slope);
        m = Material(base * (1.0 - 0.25 * rocky), mix(0.12, 0.22, rocky), vec3(1.0), vec3(0.0));
    }
    vec3 albedo = m.albedo;
    if (has_imagery && which == 0u) {
        // The imagery is the colour; the material adds what is finer than
        // its texel: the material here over the material as a third of a
        // texel sees it, or 600 m (noise of cells down to about a texel,
        // and the 2 to 8 km field of lush and dry grass the imagery stands
        // for, in both, so it cancels: texel-sized blotches of the
        // material's own were the blobs, its 2 km lattice a grid), its
        // luminance whole and half its hue, so the imagery's mean over a
        // texel stays about its own. Once a texel spans
        // hundreds of pixels the material, tinted by the imagery, takes
        // over: rock on a slope, grass on a flat a 4 km texel cannot say.
        // The material's colour at 150 km turned the Netherlands and the
        // Nile delta into blotches of its own (#55).
        float near = smoothstep(128.0, 1024.0, texel_px);
        vec3 finer = vec3(1.0);
        // (A texel of a few pixels or less has nothing finer to add.)
        if (texel_px > 3.0 && near < 1.0) {
            Material seen = earth_material(land_m, land_class, ground, slope, up, in_detail,
                max(footprint, min(0.3 * footprint * texel_px, 600.0)), imagery_snow);
            const vec3 LUMA = vec3(0.2126, 0.7152, 0.0722);
            vec3 ratio = (m.albedo + 0.01) / (seen.albedo + 0.01);
            float brighter = (dot(m.albedo, LUMA) + 0.01) / (dot(seen.albedo, LUMA) + 0.01);
            finer = clamp(mix(vec3(brighter), ratio, 0.5), 0.4, 2.5);
        }
        albedo = mix(imagery * finer, mix(m.albedo, imagery, 0.35), near);
    } else if (has_imagery) {
        // The imagery where its texel is about a pixel or smaller; the
        // material (still tinted by the imagery) once a texel spans several.
        albedo = mix(imagery, mix(m.albedo, imagery, 0.35), smoothstep(1.5, 8.0, texel_px));
    }
    // Beaches: sand in a narrow band on the land side of the coast's
    // contour, within about 10 m of sea level and, where there is imagery,
    // where it is pale; never inland lowlands (all land below 10 m was
    // sand: the Netherlands and the Nile delta were deserts at 150 km).
    if (which == 0u && has_classes) {
        float shore = smoothstep(0.1, 0.35, cover) * (1.0 - smoothstep(0.4, 0.5, cover));
        float low = 1.0 - smoothstep(4.0, 16.0, height_m);
        float pale = has_imagery ? smoothstep(0.2, 0.35, dot(imagery, vec3(0.2126, 0.7152, 0.0722))) : 1.0;
        albedo = mix(albedo, srgb_to_linear(vec3(0.76, 0.68, 0.50)), shore * low * pale);
    }
    albedo *= m.structure;
    // Micro-relief fades with distance as well as with the footprint.
    // Where the material's own structure shows, it is the relief: the
    // noise's softer relief steps back.
    float structured = length(m.bump) > 0.0 ? 1.0 - smoothstep(0.05, 0.5, footprint) : 0.0;
    float roughness = m.roughness * (1.0 - smoothstep(150.0, 600.0, distance_m)) * (1.0 - 0.4 * structured);
    vec3 normal = perturb_normal(ground, in_detail, footprint, roughness, m.bump);
    if (view_horizon().east.w > 0.0) shade.y *= fine_openness(r, t, up, height_m);
    return light_ground(albedo, normal, up, shade);
}

void main() {
    NodeRecord r = records[in_node];
    vec3 up = normalize(in_up);
    vec2 t = clamp(in_texel, vec2(1.0), vec2(TILE_CELLS + 1.0));
    // The drawn surface (the sea's over samples under it) and the ground.
    float floor_m;
    float height_m = height_and_floor(r, t, floor_m);
    // The pixel's size on the ground (metres) and the colour texel's size
    // in pixels (the colour block shares the heights' stored-texel grid).
    float footprint = max(length(dFdx(in_detail)), length(dFdy(in_detail)));
    vec2 texels_per_pixel = fwidth(in_texel);
    // A slot deeper than the colour data holds it resampled: one texel of
    // the imagery spans 2^levels of the slot's.
    float imagery_levels = float((r.slot_flags >> SLOT_COLOUR_LEVELS_SHIFT) & 31u);
    float texel_px = exp2(imagery_levels) / max(max(texels_per_pixel.x, texels_per_pixel.y), 1e-6);
    ivec3 origin = slot_origin(r.slot);
    uint surface_class = 0u;
    bool has_classes = (r.slot_flags & SLOT_HAS_CLASSES) != 0u;
    if (has_classes) {
        surface_class = texelFetch(slot_classes, ivec3(origin.xy + ivec2(t + 0.5), origin.z), 0).r;
    }
    // The share of the picture no pack measured (--stats, the panel).
    if (surface_class == NO_DATA_CLASS) atomicAdd(no_data_pixels, 1u);
    bool has_imagery = (r.slot_flags & SLOT_HAS_COLOUR) != 0u;
    vec3 imagery = has_imagery ? srgb_to_linear(imagery_at(origin, t)) : vec3(0.0);
    uint which = (pc.flags >> PALETTE_SHIFT) & 255u;
    // Water where the class samples' contour says so (earth palette), over
    // a pixel's width of the contour: the cover changes by at most about
    // one per class sample (fwidth of the cover itself jumps where a quad
    // straddles a triangle edge, and drew lines across the sea).
    float cover = which == 0u ? water_cover(r, t, has_classes) : 0.0;
    float class_texels = exp2(float((r.slot_flags >> SLOT_CLASS_LEVELS_SHIFT) & 7u));
    float aa = clamp(0.75 * max(texels_per_pixel.x, texels_per_pixel.y) / class_texels, 1e-3, 0.15);
    float wet = smoothstep(0.5 - aa, 0.5 + aa, cover);
    float distance_m = length(in_from_camera);
    vec3 view_dir = in_from_camera / distance_m;
    // Cast shadow and openness from the horizon map; its debug view paints
    // the sun's share white and the shadow black (the conformance test's).
    vec2 shade = horizon_light(in_from_camera, up);
    if ((pc.flags & FLAG_SHADOW_MASK) != 0u) {
        out_colour = vec4(vec3(shade.x), 1.0);
        return;
    }
    // Land, wherever some of the pixel is (open water skips its normal,
    // material and openness: the sea's fragments cost less than the land's).
    vec3 lit = vec3(0.0);
    if (wet < 1.0) lit = shade_land(r, t, up, height_m, floor_m, surface_class, has_classes, imagery, has_imagery,
        texel_px, cover, footprint, distance_m, shade);
    if (wet > 0.0) {
        // The sea's depth over the floor; a lake's is not known (its DEM
        // height is its surface), nor a sea's over ground the DEM puts at
        // or above 0 m (a coarse DEM's coast against its classes).
        vec3 body = water_body(surface_class == 3u ? 0.0 : max(-floor_m, 0.0));
        if (has_imagery) body = mix(imagery, body, smoothstep(1.5, 8.0, texel_px));
        // The sea is level whatever the bed beneath it does.
        float resolved = waves_resolved(footprint, distance_m);
        vec3 water = shade_water(body, wave_normal(up, in_detail, footprint, resolved), up, view_dir, resolved, shade);
        lit = mix(lit, water, wet);
    }
    out_colour = vec4(finish_colour(apply_atmosphere(lit, view_dir, distance_m)), 1.0);
}
