// Surface detail and materials of the terrain fragment shader. The key
// decision: every bit of detail is procedural value noise of the fragment's
// body-fixed position, never a tiled texture, so nothing repeats at any
// scale a viewer sees. The position is the node centre modulo
// DETAIL_PERIOD_M (formed in f64 on the host) plus the node-local offset,
// and the noise is periodic with that period (every cell size is a power of
// two dividing it; lattice indices wrap by masking), so the noise agrees on
// both sides of a node edge while f32 keeps millimetres. Each octave fades
// out as its cell shrinks toward the pixel's footprint, so distant ground
// does not shimmer.
//
// Materials (earth palette; linear reflectances from the sRGB below):
//   water  class 1 (ocean) or 3 (lake), or class 0 below 0 m; shaded as a
//          reflecting surface by shade_water, inside the coast contour
//   snow   above the snowline of the date (seasonal_snowline_m: from
//          5600 m * cos(latitude)^1.5 at the end of the melt down by up
//          to 2300 m at the late-winter peak) or, with no date, the year's
//          5000 m * cos(latitude)^2 (5000 m at the equator, 3900 m at
//          28 deg, 2500 m at 45 deg, 0 m at the poles),
//          lower on poleward slopes (by a quarter of it at full lean), its
//          edge shaped by noise from 8 km cells to the pixel, on slopes
//          under 40 deg (gone by 50)
//   rock   slopes steeper than 30 deg, fully rock from 45 deg
//   sand   beaches only: a narrow band on the land side of the coast's
//          contour within about 10 m of sea level, pale in any imagery
//          (terrain.frag); inland lowlands keep their grass or imagery
//   grass  low flat land, turning to bare alpine soil from 45 % to 80 % of
//          the snowline
//   talus  the bare alpine ground's steep slopes short of a cliff
// Up close each has its structure (ground_structure): jointed rock
// blocks, stones, gravel, grass tufts, from cellular and value noise of
// the same position.
// Include after common.glsl.

float lattice_value(ivec3 i, int mask, uint seed) {
    uvec3 h = pcg3d(uvec3(i & ivec3(mask)) + uvec3(seed, seed * 7u, seed * 13u));
    return float(h.x >> 8u) * (2.0 / 16777215.0) - 1.0;
}

// Value noise in [-1, 1] with its gradient (per metre), cell size `cell`
// metres (a power of two no larger than DETAIL_PERIOD_M); quintic fade.
vec4 value_noise(vec3 x, float cell, uint seed) {
    vec3 q = x / cell;
    vec3 fl = floor(q);
    vec3 f = q - fl;
    ivec3 i = ivec3(fl);
    int mask = int(DETAIL_PERIOD_M / cell) - 1;
    vec3 u = f * f * f * (f * (f * 6.0 - 15.0) + 10.0);
    vec3 du = 30.0 * f * f * (f * (f - 2.0) + 1.0);
    float a = lattice_value(i, mask, seed);
    float b = lattice_value(i + ivec3(1, 0, 0), mask, seed);
    float c = lattice_value(i + ivec3(0, 1, 0), mask, seed);
    float d = lattice_value(i + ivec3(1, 1, 0), mask, seed);
    float e = lattice_value(i + ivec3(0, 0, 1), mask, seed);
    float g = lattice_value(i + ivec3(1, 0, 1), mask, seed);
    float h = lattice_value(i + ivec3(0, 1, 1), mask, seed);
    float k = lattice_value(i + ivec3(1, 1, 1), mask, seed);
    float k1 = b - a;
    float k2 = c - a;
    float k3 = e - a;
    float k4 = a - b - c + d;
    float k5 = a - c - e + h;
    float k6 = a - b - e + g;
    float k7 = -a + b + c - d + e - g - h + k;
    float value = a + k1 * u.x + k2 * u.y + k3 * u.z + k4 * u.x * u.y + k5 * u.y * u.z + k6 * u.z * u.x + k7 * u.x * u.y * u.z;
    vec3 grad = du * vec3(k1 + k4 * u.y + k6 * u.z + k7 * u.y * u.z, k2 + k5 * u.z + k4 * u.x + k7 * u.z * u.x, k3 + k6 * u.x + k5 * u.y + k7 * u.x * u.y);
    return vec4(value, grad / cell);
}

// How much of an octave of cell `cell` survives a pixel footprint of
// `footprint` metres: all of it while a cell spans three pixels or more,
// none once it spans about one.
float octave_weight(float cell, float footprint) {
    return 1.0 - smoothstep(0.3 * cell, 0.9 * cell, footprint);
}

// Value noise in about [-1, 1] over the whole body, not periodic: octaves
// of cells from `coarse` metres down, halving, at the point `up * 6371 km`
// (the ellipsoid normal, continuous across nodes; f32 keeps it to under a
// metre, fine for cells of hundreds of metres and more). The detail
// noise's period (DETAIL_PERIOD_M) would repeat every 4 km a variation
// meant for kilometres.
float regional_noise(vec3 up, float coarse, int octaves, float footprint, uint seed) {
    vec3 p = up * 6371000.0;
    float sum = 0.0;
    float norm = 0.0;
    float cell = coarse;
    float amplitude = 1.0;
    for (int o = 0; o < octaves; ++o) {
        vec3 q = p / cell;
        vec3 fl = floor(q);
        vec3 f = q - fl;
        vec3 u = f * f * (3.0 - 2.0 * f);
        ivec3 i = ivec3(fl);
        uint s = seed + uint(o);
        float x00 = mix(lattice_value(i, -1, s), lattice_value(i + ivec3(1, 0, 0), -1, s), u.x);
        float x10 = mix(lattice_value(i + ivec3(0, 1, 0), -1, s), lattice_value(i + ivec3(1, 1, 0), -1, s), u.x);
        float x01 = mix(lattice_value(i + ivec3(0, 0, 1), -1, s), lattice_value(i + ivec3(1, 0, 1), -1, s), u.x);
        float x11 = mix(lattice_value(i + ivec3(0, 1, 1), -1, s), lattice_value(i + ivec3(1, 1, 1), -1, s), u.x);
        float w = octave_weight(cell, footprint) * amplitude;
        sum += w * mix(mix(x00, x10, u.y), mix(x01, x11, u.y), u.z);
        norm += amplitude;
        amplitude *= 0.55;
        cell *= 0.5;
    }
    return sum / norm;
}

// Fractal value noise in about [-1, 1]: octaves from `coarse` metres down,
// halving, each fading against the footprint.
float fractal(vec3 x, float coarse, int octaves, float footprint, uint seed) {
    float sum = 0.0;
    float norm = 0.0;
    float cell = coarse;
    float amplitude = 1.0;
    for (int o = 0; o < octaves; ++o) {
        float w = octave_weight(cell, footprint) * amplitude;
        if (w > 0.0) sum += w * value_noise(x, cell, seed + uint(o)).x;
        norm += amplitude;
        amplitude *= 0.55;
        cell *= 0.5;
    }
    return sum / norm;
}

// Cellular noise over a jittered lattice of `cell`-metre cells (a power
// of two no larger than DETAIL_PERIOD_M, periodic like value_noise): x the
// distance to the nearest feature point and y to the border with the
// second nearest's cell (in cells) along the surface whose normal is
// `n`, z and w two hashes (0..1) of the nearest; `toward` the vector from
// the nearest point to `p` (in cells). Where y is small, `p` lies on the
// border of two cells: a joint between blocks, a gap between stones. The
// surface slices 3D cells, so a border plane can meet it at a grazing
// angle: the distance to the plane itself (or the difference of the two
// distances) drew joints several times as wide as asked.
vec4 cellular(vec3 p, float cell, uint seed, vec3 n, out vec3 toward) {
    vec3 q = p / cell;
    vec3 fl = floor(q);
    vec3 f = q - fl;
    ivec3 i = ivec3(fl);
    int mask = int(DETAIL_PERIOD_M / cell) - 1;
    float f1 = 64.0;
    float f2 = 64.0;
    vec3 second = vec3(8.0);
    vec2 id = vec2(0.0);
    toward = vec3(8.0);
    for (int z = -1; z <= 1; ++z) {
        for (int y = -1; y <= 1; ++y) {
            for (int x = -1; x <= 1; ++x) {
                ivec3 o = ivec3(x, y, z);
                uvec3 h = pcg3d(uvec3((i + o) & ivec3(mask)) + uvec3(seed, seed * 7u, seed * 13u));
                vec3 d = f - (vec3(o) + vec3(h >> 8u) * (1.0 / 16777215.0));
                float dd = dot(d, d);
                if (dd < f1) {
                    f2 = f1;
                    second = toward;
                    f1 = dd;
                    toward = d;
                    id = vec2(float((h.x ^ h.y) & 65535u), float((h.y ^ h.z) & 65535u)) * (1.0 / 65535.0);
                } else if (dd < f2) {
                    f2 = dd;
                    second = d;
                }
            }
        }
    }
    vec3 across = normalize(toward - second);
    float to_plane = abs(dot(0.5 * (toward + second), across));
    // Along the surface: the plane's distance over the sine of its angle
    // with the surface.
    float border = to_plane / max(length(across - n * dot(across, n)), 0.05);
    return vec4(sqrt(f1), border, id);
}

// The ground's structure from 10 cm to 10 m, where a pixel resolves it:
// what the material looks like to a person standing on it. `weights` are
// the shares of rock, scree (talus below cliffs and on steep alpine
// ground), bare soil and grass; the result multiplies the albedo (rgb) and
// tilts the normal (`bump`, a gradient per metre). Every feature is a
// function of the place: joints between rock blocks and a tilt per block,
// lichen on the rock; stones with dark gaps between them, domed, on
// scree; gravel in soil; tufts in grass. Each fades out as its size nears
// the pixel's footprint, so the structure never shimmers and costs
// nothing once the ground is farther than a few tens of metres.
vec3 ground_structure(vec4 weights, vec3 x, vec3 n, float footprint, out vec3 bump) {
    bump = vec3(0.0);
    vec3 tint = vec3(1.0);
    float rock = weights.x;
    float scree = weights.y;
    float soil = weights.z;
    float grass = weights.w;
    if (rock > 0.01 && footprint < 0.6) {
        // (Each branch's `seen` is zero where its test stops it: no edge.)
        vec3 toward;
        // Joints between blocks of about 2 m, their lines bent by a warp of
        // the place (straight cell borders read as paving; a warp whose
        // slope nears one folds a joint into a band); finer fractures at
        // 50 cm.
        vec3 warp = vec3(value_noise(x, 8.0, 251u).x, value_noise(x, 8.0, 253u).x, value_noise(x, 8.0, 255u).x);
        vec3 w = x + 0.3 * warp + 0.04 * vec3(value_noise(x, 0.5, 257u).x, value_noise(x, 0.5, 259u).x, 0.0);
        vec4 block = cellular(w, 2.0, 201u, n, toward);
        // Most joints are tight and unseen, so blocks merge into slabs of
        // irregular size; the open ones are dark, 1 to 5 cm wide.
        float open = smoothstep(-0.1, 0.5, value_noise(w, 4.0, 261u).x + 0.5 * value_noise(w, 1.0, 262u).x);
        float width_m = mix(0.004, 0.025, open);
        float joint = (1.0 - smoothstep(width_m, width_m + 1.5 * footprint, 2.0 * block.y)) * open;
        vec4 chip = cellular(w, 0.5, 203u, n, toward);
        float fracture = (1.0 - smoothstep(0.008, 0.008 + 1.5 * footprint, 0.5 * chip.y)) * octave_weight(0.5, footprint)
            * smoothstep(0.3, 0.8, value_noise(w, 1.0, 263u).x);
        float seen = 1.0 - smoothstep(0.2, 0.6, footprint);
        // Each block its own shade and lean.
        float shade = mix(0.78, 1.18, block.z) * mix(0.92, 1.05, chip.z * octave_weight(0.5, footprint));
        vec3 lean = vec3(block.z - 0.5, block.w - 0.5, fract(block.z * 7.13 + block.w * 3.7) - 0.5);
        // Lichen: pale grey-green blotches on the faces.
        float lichen = smoothstep(0.35, 0.6, value_noise(x, 0.5, 207u).x + 0.5 * value_noise(x, 0.125, 209u).x) * octave_weight(0.25, footprint);
        // Granite's grain: feldspar, quartz and mica speckle at a few centimetres.
        float grain = 1.0 + 0.18 * value_noise(x, 0.03125, 271u).x * octave_weight(0.03125, footprint);
        // Weathering: broad darker and paler stains across the slabs.
        float stain = value_noise(x, 4.0, 273u).x + 0.5 * value_noise(x, 1.0, 275u).x;
        vec3 rock_tint = vec3(shade * grain * (1.0 + 0.12 * stain)) * (1.0 - 0.7 * joint) * (1.0 - 0.25 * fracture);
        rock_tint = mix(rock_tint, vec3(1.25, 1.28, 1.1) * shade, 0.45 * lichen * (1.0 - joint));
        tint = mix(tint, mix(vec3(1.0), rock_tint, seen), rock);
        bump += rock * seen * 0.4 * lean;
    }
    if (scree > 0.01 && footprint < 0.25) {
        vec3 toward;
        // Stones of 20-60 cm, domed, with dark gaps, in patches: where the
        // patches thin out, the soil between shows and the gaps fill.
        vec3 w = x + 0.05 * vec3(value_noise(x, 0.5, 265u).x, value_noise(x, 0.5, 267u).x, value_noise(x, 0.5, 269u).x);
        float coarse = smoothstep(-0.3, 0.3, value_noise(x, 8.0, 279u).x);
        float size = mix(0.25, 0.5, coarse);
        vec4 stone = cellular(w, coarse > 0.5 ? 0.5 : 0.25, 221u, n, toward);
        float seen = 1.0 - smoothstep(0.08, 0.25, footprint);
        float stones = smoothstep(-0.5, 0.3, value_noise(x, 4.0, 277u).x + 0.4 * value_noise(x, 1.0, 278u).x);
        float gap = (1.0 - smoothstep(0.02, 0.02 + 1.5 * footprint, size * stone.y)) * mix(0.4, 1.0, stones);
        vec3 stone_tint = vec3(mix(0.72, 1.2, stone.z)) * mix(vec3(1.0), vec3(1.05, 1.0, 0.92), stone.w);
        stone_tint = mix(vec3(1.0), stone_tint, stones) * (1.0 - 0.6 * gap);
        tint = mix(tint, mix(vec3(1.0), stone_tint, seen), scree);
        // A dome's gradient points to its centre: -toward, in cells.
        bump -= scree * seen * stones * 1.2 * toward * (1.0 - gap);
    }
    if (soil > 0.01 && footprint < 0.056) {
        vec3 toward;
        // Gravel of a few centimetres in the soil.
        vec4 pebble = cellular(x, 0.0625, 231u, n, toward);
        float seen = octave_weight(0.0625, footprint);
        float grain = mix(0.8, 1.2, pebble.z) * (1.0 - 0.3 * (1.0 - smoothstep(0.003, 0.003 + 1.5 * footprint, 0.0625 * pebble.y)));
        tint = mix(tint, mix(vec3(1.0), vec3(grain), seen), soil);
        bump -= soil * seen * 0.5 * toward;
    }
    if (grass > 0.01 && footprint < 0.225) {
        // Tufts: shaded bases and straw-coloured tips, by noise at 12 and
        // 3 cm; bare patches between them at 1 m.
        float tuft = value_noise(x, 0.125, 241u).x + 0.7 * value_noise(x, 0.03125, 243u).x * octave_weight(0.03125, footprint);
        float seen = octave_weight(0.25, footprint);
        float bare = smoothstep(0.45, 0.75, value_noise(x, 1.0, 245u).x);
        vec3 grass_tint = mix(vec3(0.78, 0.84, 0.76), vec3(1.25, 1.18, 0.95), smoothstep(-0.7, 0.9, tuft));
        grass_tint = mix(grass_tint, vec3(1.25, 1.05, 0.9), 0.5 * bare);
        tint = mix(tint, mix(vec3(1.0), grass_tint, seen), grass);
        // Blades lean every way: a relief of 12 cm cells, its slope at most
        // about 0.45 (the gradient is per metre: times the cell).
        bump += grass * seen * 0.12 * 0.125 * value_noise(x, 0.125, 247u).yzw;
    }
    return tint;
}

// The gradient (per metre) of a micro-relief whose height amplitude is
// proportional to its cell (so every octave tilts the surface alike):
// `roughness` is the slope each octave contributes. Octaves from 8 m down
// to 6 cm.
vec3 micro_relief_gradient(vec3 x, float footprint, float roughness) {
    vec3 grad = vec3(0.0);
    float cell = 8.0;
    for (int o = 0; o < 8; ++o) {
        float w = octave_weight(cell, footprint);
        if (w <= 0.0) break;
        grad += (w * roughness * 0.5 * cell) * value_noise(x, cell, 101u + uint(o)).yzw;
        cell *= 0.5;
    }
    return grad;
}

// The ground normal tilted by the micro-relief and the material's own
// structure (`bump`, a gradient per metre): taken in the tangent plane.
vec3 perturb_normal(vec3 normal, vec3 x, float footprint, float roughness, vec3 bump) {
    if (roughness <= 0.0 && bump == vec3(0.0)) return normal;
    vec3 grad = bump;
    if (roughness > 0.0) grad += micro_relief_gradient(x, footprint, roughness);
    grad -= normal * dot(normal, grad);
    return normalize(normal - grad);
}

vec3 srgb_to_linear(vec3 c) {
    return pow(c, vec3(2.2));
}

// The year's snowline: 5000 m * cos(latitude)^2. Vegetation's belts hang
// from it whatever the date.
float snowline_m(vec3 up) {
    float c = length(up.xy);
    return 5000.0 * c * c;
}

// The snowline of the date (FLAG_SEASON; without one, the year's). At the
// end of the melt, mid-August in the north and mid-February in the south,
// it is the climatic snowline, 5600 m * cos(latitude)^1.5 (5600 m at the
// equator, 4000 m at 37 deg, 3200 m at 46 deg, 2000 m at 60 deg). At the
// seasonal snow's peak half a year later it lies lower by the seasonal
// snow's reach: none within 10 deg of the equator, growing to 2300 m past
// 40 deg (the Sierra's winter line near 1700 m, the Alps' near 900 m, sea
// level past about 55 deg). Between the two, a cosine of the year.
float seasonal_snowline_m(vec3 up) {
    if ((pc.flags & FLAG_SEASON) == 0u) return snowline_m(up);
    float c = length(up.xy);
    float late_summer = 5600.0 * c * sqrt(c);
    float reach = 2300.0 * smoothstep(0.17, 0.64, abs(up.z));
    // The peak: 35 days before the March equinox in the north, half a
    // year from it in the south.
    float year = float((pc.flags >> SEASON_SHIFT) & 255u) / 256.0;
    float since_peak = year + 35.0 / 365.24 + (up.z < 0.0 ? 0.5 : 0.0);
    float winter = 0.5 + 0.5 * cos(6.2831853 * since_peak);
    return late_summer - reach * winter;
}

// A material: linear albedo, how rough its micro-relief is, and its
// structure where a pixel resolves it (ground_structure): a factor on the
// albedo, applied after any imagery (a 500 m texel would flatten it), and
// a tilt of the normal (a gradient per metre).
struct Material {
    vec3 albedo;
    float roughness;
    vec3 structure;
    vec3 bump;
};

// How far a slope faces the pole: the lean of the ground normal `ground`
// toward the pole in the tangent plane at `up` (the sine of its tilt times
// the cosine of its bearing from the pole; -1..1). Poleward slopes see
// less sun and keep their snow longer.
float poleward(vec3 ground, vec3 up) {
    vec3 lean = ground - up * dot(ground, up);
    vec3 north = vec3(0.0, 0.0, 1.0) - up * up.z;
    float n = length(north);
    return n < 1e-4 ? 0.0 : dot(lean, north / n) * sign(up.z);
}

// The earth palette's material at a point: `x` the detail position,
// `ground` the height normal and `slope` 1 - cos of its tilt (not the
// micro-relief), `footprint` the pixel's size in metres.
// `imagery_snow` is the snow cover the pack's imagery shows (0..1), or
// negative without imagery. Snow lies by elevation against the snowline,
// by aspect (poleward slopes hold it, a quarter of the snowline's height
// at full lean), and is shed by steep slopes; its edge is shaped by noise
// from 8 km cells down to the pixel's own scale, so it follows the ground
// at every distance rather than making spots of one size. Where the
// imagery is there it moves that edge (a dry range keeps bare rock far
// above the snowline rule; a white 4 km texel is a snowfield whose edge
// the terrain still draws), not a blob of its own texel.
Material earth_material(float height_m, uint surface_class, vec3 ground, float slope, vec3 up, vec3 x, float footprint, float imagery_snow) {
    float regional = regional_noise(up, 8192.0, 3, footprint, 91u);
    float broad = fractal(x, 256.0, 4, footprint, 11u);
    float fine = fractal(x, 4.0, 6, footprint, 23u);
    if (water_sample(surface_class, height_m)) {
        float deep = clamp(-height_m / 6000.0, 0.0, 1.0);
        vec3 shallow = srgb_to_linear(vec3(0.05, 0.18, 0.32));
        vec3 abyss = srgb_to_linear(vec3(0.01, 0.04, 0.14));
        return Material(mix(shallow, abyss, deep) * (1.0 + 0.08 * fine), 0.02, vec3(1.0), vec3(0.0));
    }
    // Lush to dry grass and two soils by the regional noise, each varied
    // at 256 m and at 4 m, so 10 km, 100 m and 2 m each see their own scale.
    vec3 lush = mix(vec3(0.15, 0.29, 0.09), vec3(0.24, 0.34, 0.12), 0.5 + 0.5 * broad);
    vec3 dry = mix(vec3(0.33, 0.34, 0.17), vec3(0.42, 0.38, 0.22), 0.5 + 0.5 * broad);
    vec3 grass = srgb_to_linear(mix(lush, dry, smoothstep(-0.4, 0.6, regional)));
    vec3 soil = srgb_to_linear(mix(mix(vec3(0.36, 0.30, 0.22), vec3(0.45, 0.38, 0.28), 0.5 + 0.5 * fine),
        vec3(0.40, 0.33, 0.27), 0.5 + 0.5 * regional));
    float strata = fractal(x, 16.0, 7, footprint, 37u) + 0.5 * broad;
    vec3 rock = srgb_to_linear(mix(vec3(0.28, 0.26, 0.25), vec3(0.46, 0.42, 0.38), clamp(0.5 + 0.4 * strata, 0.0, 1.0)));
    vec3 snow = srgb_to_linear(vec3(0.90, 0.92, 0.95));
    float belts = snowline_m(up);
    float bare = smoothstep(0.45 * belts, 0.8 * belts, height_m + 300.0 * broad);
    vec3 albedo = mix(grass * (1.0 + 0.35 * fine), soil, bare);
    float roughness = 0.12;
    float rocky = smoothstep(0.134, 0.293, slope + 0.04 * broad);
    albedo = mix(albedo, rock, rocky);
    roughness = mix(roughness, 0.22, rocky);
    // Talus on the bare alpine ground's steep slopes short of a cliff
    // (lowland slopes keep their grass).
    float talus = (1.0 - rocky) * smoothstep(0.03, 0.09, slope + 0.03 * fine) * bare;
    albedo = mix(albedo, mix(rock, soil, 0.3), 0.6 * talus);
    vec3 bump;
    vec4 shares = vec4(rocky, talus, (1.0 - rocky) * (1.0 - talus) * bare, (1.0 - rocky) * (1.0 - talus) * (1.0 - bare));
    vec3 structure = ground_structure(shares, x, ground, footprint, bump);
    // The snow edge's noise: 8 km cells down to the pixel (each octave
    // fading against the footprint), weighted toward the coarse; its finest
    // part (32 m cells down) only near the edge, where it can matter.
    float aspect = poleward(ground, up);
    float line = seasonal_snowline_m(up);
    float coarse_edge = 0.45 * regional + 0.35 * broad;
    float jitter = imagery_snow >= 0.0 ? 0.5 : (0.1 * max(line, 0.0) + 50.0) * 1.6;
    float band = imagery_snow >= 0.0 ? 0.12 : 60.0;
    float against = imagery_snow >= 0.0
        ? 2.0 * imagery_snow - 1.0 + 0.6 * aspect + jitter * coarse_edge
        : height_m - line + 0.25 * max(line, 0.0) * aspect + jitter * coarse_edge;
    if (abs(against) < band + 0.2 * jitter) against += 0.2 * jitter * fractal(x, 32.0, 6, footprint, 73u);
    float cover = smoothstep(-band, band, against);
    float snowy = cover * (1.0 - smoothstep(0.234, 0.357, slope + 0.05 * fine));
    // Wind-packed snow: drifts and sastrugi, not a mirror-smooth sheet.
    albedo = mix(albedo, snow * (1.0 + 0.10 * fine), snowy);
    roughness = mix(roughness, 0.16, snowy);
    return Material(albedo, roughness, mix(structure, vec3(1.0), snowy), bump * (1.0 - snowy));
}

// The sun's light under a sun whose elevation has sine `elevation`: from
// 37 degrees up (the relief sun of the goldens) as it was, below that
// weaker and warmer as its path through the air lengthens: an extinction
// strongest in blue (optical depths 0.05, 0.10, 0.20 per air mass, a
// clear mountain sky's Rayleigh and aerosol together) over the air mass
// beyond 37 degrees' (Kasten and Young's air mass). At 10 degrees the sun
// is (0.82, 0.65, 0.42) of its high light, at 2 degrees (0.41, 0.17, 0.03).
// A body without air (FLAG_ATMOSPHERE off) keeps its sun to the horizon.
vec3 sunlight(float elevation) {
    if ((pc.flags & FLAG_ATMOSPHERE) == 0u) return vec3(1.0, 0.97, 0.92);
    float up_degrees = max(degrees(asin(clamp(elevation, -1.0, 1.0))), 0.0);
    float mass = 1.0 / (max(elevation, 0.0) + 0.50572 * pow(up_degrees + 6.07995, -1.6364));
    return vec3(1.0, 0.97, 0.92) * exp(-vec3(0.05, 0.10, 0.20) * max(mass - 1.66, 0.0));
}

// How much of its high-sun light the sky sheds on the ground under a sun
// of elevation sine `elevation`: all of it from 37 degrees up, about two
// thirds at 10 degrees (clear-sky diffuse light falls with the sun, if
// slower than the direct), fading through twilight to none (on a body
// without air, the fill alone, as before).
float skylight(float elevation) {
    if ((pc.flags & FLAG_ATMOSPHERE) == 0u) return smoothstep(-0.08, 0.12, elevation);
    return smoothstep(-0.08, 0.12, elevation) * mix(0.5, 1.0, smoothstep(0.0, 0.6, elevation));
}

// The sun on ground whose ellipsoid normal is `up`: the direct term (N.L)
// and a sky fill that both fade as the sun sets, so ground whose sun is a
// few degrees below its horizon goes black. The fill is the sky the normal
// sees (a hemisphere: all of it facing up, half of it on a wall). In cast
// shadow (shade.x 0) the ground has the sky's light alone; a low sun's
// is weaker and warmer, and so its shadows read blue and deep.
vec3 light_ground(vec3 albedo, vec3 normal, vec3 up, vec2 shade) {
    float elevation = dot(up, pc.sun.xyz);
    // shade: the sun's share the ground around leaves (cast shadows) and
    // the sky's openness (ambient occlusion), horizon.glsl.
    // The sun's light is dimmed a little by openness too: a closed hollow's
    // floor loses the light its unresolved relief (boulders, runnels) shades.
    float direct = max(dot(normal, pc.sun.xyz), 0.0) * smoothstep(-0.02, 0.04, elevation) * shade.x * mix(1.0, shade.y, 0.5);
    float fill = pc.sun.w * skylight(elevation) * (0.6 + 0.4 * dot(normal, up)) * shade.y;
    // Skylight: a slope turned from the sun is lit by the whole sky dome,
    // about a tenth of full sun on open ground, not the body's thin fill
    // (which left shadowed slopes black, 1:60 against sunlit ones).
    float sky = skylight(elevation) * (0.6 + 0.4 * dot(normal, up)) * shade.y;
    // Night: starlight and airglow, a few thousandths of the day's skylight,
    // so the dark side is dark ground, not a void against the stars.
    float night = (1.0 - smoothstep(-0.08, 0.12, elevation)) * (0.6 + 0.4 * dot(normal, up));
    vec3 night_light = vec3(0.0009, 0.0011, 0.0016) * night;
    return albedo * (sunlight(elevation) * direct * 2.4 + vec3(0.25, 0.3, 0.4) * (fill + 0.6 * sky) + night_light);
}

// Water (oceans and lakes, `water_sample` in common.glsl): a surface that
// reflects, not a tint. The key decision:
// the coast is the half-way contour of the water flags of the four class
// samples around the fragment, blended bilinearly and antialiased over a
// pixel, so a coast follows the class samples as a line instead of their
// texel staircase.

// The sky a water surface reflects along `dir` over ground whose
// ellipsoid normal is `up`: a blue dome whitening toward the horizon and
// brightening around the sun, fading through twilight to the night glow.
vec3 sky_radiance(vec3 dir, vec3 up) {
    float elevation = dot(up, pc.sun.xyz);
    float day = smoothstep(-0.08, 0.12, elevation);
    float rise = max(dot(dir, up), 0.0);
    vec3 dome = mix(vec3(0.42, 0.50, 0.62), vec3(0.07, 0.16, 0.42), sqrt(rise));
    float toward_sun = max(dot(dir, pc.sun.xyz), 0.0);
    dome += vec3(0.9, 0.75, 0.5) * 0.5 * pow(toward_sun, 8.0);
    return dome * day + vec3(0.0009, 0.0011, 0.0016);
}

// How much of the sea's wave slope the geometry of the fragment resolves:
// 1 near, 0 where the waves are below the pixel or too far to matter.
float waves_resolved(float footprint, float distance_m) {
    return (1.0 - smoothstep(0.5, 4.0, footprint)) * (1.0 - smoothstep(2000.0, 20000.0, distance_m));
}

// Gentle wind waves: slopes of a few percent in cells from 32 m to 25 cm,
// each octave fading against the footprint, all of them with distance.
vec3 wave_normal(vec3 up, vec3 x, float footprint, float resolved) {
    vec3 grad = vec3(0.0);
    float cell = 32.0;
    for (int o = 0; o < 8; ++o) {
        float w = octave_weight(cell, footprint) * resolved;
        if (w > 0.0) grad += (w * 0.035 * 0.5 * cell) * value_noise(x, cell, 211u + uint(o)).yzw;
        cell *= 0.5;
    }
    grad -= up * dot(up, grad);
    return normalize(up - grad);
}

// The water's albedo over a floor `depth_m` below its surface (0 where the
// floor is not known). The floor, sand, shows through shallow water,
// absorbed red first over the way down and back (clear coastal water,
// about 0.35, 0.07 and 0.04 per metre): green over 3 m, blue over 10 m,
// the water's own colour past about 40 m, which darkens toward the abyss.
// The show-through fades in over the first 3 m, so where the depth is not
// known (0) the water is its own colour and a coast against it has no seam.
vec3 water_body(float depth_m) {
    vec3 own = mix(srgb_to_linear(vec3(0.05, 0.18, 0.32)), srgb_to_linear(vec3(0.01, 0.04, 0.14)),
        clamp(depth_m / 6000.0, 0.0, 1.0));
    vec3 through = exp(-vec3(0.35, 0.07, 0.04) * (2.0 * depth_m)) * smoothstep(0.0, 3.0, depth_m);
    return srgb_to_linear(vec3(0.62, 0.56, 0.42)) * through + own * (1.0 - through);
}

// Water lit and reflecting: its body colour under sun and sky, the sky by
// Fresnel (Schlick, F0 0.02), and the sun's glint, a lobe that widens
// where the waves are not resolved (from afar the glint is the spread of
// many wave slopes, a broad patch, not a mirror's point).
vec3 shade_water(vec3 body_albedo, vec3 normal, vec3 up, vec3 view_dir, float resolved, vec2 shade) {
    vec3 to_eye = -view_dir;
    float cos_v = max(dot(normal, to_eye), 0.0);
    float fresnel = 0.02 + 0.98 * pow(1.0 - cos_v, 5.0);
    vec3 reflected = reflect(view_dir, normal);
    // A reflection turned below the horizon by a wave sees the horizon.
    reflected = normalize(reflected - up * min(dot(reflected, up), 0.0));
    vec3 sky = sky_radiance(reflected, up);
    float elevation = dot(up, pc.sun.xyz);
    vec3 sunlight = mix(vec3(1.0, 0.5, 0.25), vec3(1.0, 0.97, 0.92), smoothstep(0.0, 0.25, elevation)) * 2.4;
    vec3 half_way = normalize(pc.sun.xyz + to_eye);
    float shininess = mix(60.0, 900.0, resolved);
    // A microfacet lobe: the Blinn-Phong distribution (s + 2) / 2 pi
    // (n.h)^s, the Fresnel of the half-way vector, over 4 n.v (the sun's
    // cosine cancels): toward a low sun the glint is blinding, as a real
    // sea's is, not a faint sheen.
    float facets = (shininess + 2.0) / 6.2832 * pow(max(dot(normal, half_way), 0.0), shininess);
    float glint = facets * (0.02 + 0.98 * pow(1.0 - max(dot(half_way, to_eye), 0.0), 5.0)) / (4.0 * max(cos_v, 0.05))
        * step(0.0, dot(normal, pc.sun.xyz)) * smoothstep(-0.02, 0.04, elevation) * shade.x;
    vec3 body = light_ground(body_albedo, normal, up, shade);
    return (1.0 - fresnel) * body + fresnel * sky + sunlight * glint;
}
