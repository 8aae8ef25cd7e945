// Every tile of a quantized-mesh export read by an independent decoder
// (npm's @here/quantized-mesh-decoder), and checked against the format and
// against its neighbours:
//   - layer.json names the format, the scheme and the tiles that exist,
//     and every one of them is there and decodes whole;
//   - the header's height range and bounding sphere hold the vertices, and
//     its horizon occlusion point lies above the ellipsoid;
//   - every index is in range, every triangle counter-clockwise seen from
//     above, the edge lists hold exactly the vertices on each edge;
//   - two tiles of one level that share an edge place the same vertices on
//     it (longitude, latitude, and height within their quantization);
//   - where layer.json names the metadata extension, every tile of a level
//     that is a multiple of metadataAvailability carries the next levels'
//     tiles under it, exactly layer.json's `available` clipped to it.
// Tiles written with --gzip (a gzip header) are gunzipped first.
// Writes the position of every 64th vertex (latitude and longitude,
// little-endian f64 pairs) to POINTS and a JSON list of [height, allowed
// error] to HEIGHTS, for the caller to compare with planet-pack's own ground.
//
//   node tools/web/check_tiles.mjs DIR POINTS HEIGHTS
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import decoderModule from '@here/quantized-mesh-decoder';

const decode = decoderModule.default ?? decoderModule;
const [dir, pointsOut, heightsOut] = process.argv.slice(2);
if (!dir || !pointsOut || !heightsOut) {
  console.error('usage: node check_tiles.mjs DIR POINTS HEIGHTS');
  process.exit(2);
}
const failures = [];
const fail = (what) => {
  if (failures.length < 20) console.error(`check_tiles: ${what}`);
  failures.push(what);
};

const layer = JSON.parse(fs.readFileSync(path.join(dir, 'layer.json'), 'utf8'));
for (const [key, want] of [['format', 'quantized-mesh-1.0'], ['scheme', 'tms'], ['tilejson', '2.1.0']]) {
  if (layer[key] !== want) fail(`layer.json ${key} is ${layer[key]}, not ${want}`);
}

// WGS84, as the export's Earth.
const A = 6378137.0;
const B = 6356752.314245;
const E2 = 1 - (B * B) / (A * A);
function ecef(latDeg, lonDeg, h) {
  const lat = (latDeg * Math.PI) / 180;
  const lon = (lonDeg * Math.PI) / 180;
  const n = A / Math.sqrt(1 - E2 * Math.sin(lat) ** 2);
  return [(n + h) * Math.cos(lat) * Math.cos(lon), (n + h) * Math.cos(lat) * Math.sin(lon), (n * (1 - E2) + h) * Math.sin(lat)];
}
// Cesium's estimate of a level's geometric error for 65-sample tiles.
const levelError = (z) => (A * 2 * Math.PI * 0.25) / (65 * 2) / 2 ** z;

// layer.json's ranges at level `level` under tile (z, x, y), as a client
// reading them would clip them.
function rangesUnder(z, x, y, level) {
  const k = level - z;
  const under = { startX: x << k, startY: y << k, endX: ((x + 1) << k) - 1, endY: ((y + 1) << k) - 1 };
  return (layer.available[level] ?? [])
    .map((r) => ({
      startX: Math.max(r.startX, under.startX),
      startY: Math.max(r.startY, under.startY),
      endX: Math.min(r.endX, under.endX),
      endY: Math.min(r.endY, under.endY),
    }))
    .filter((r) => r.startX <= r.endX && r.startY <= r.endY);
}
const metadataLevels = (layer.extensions ?? []).includes('metadata') ? layer.metadataAvailability : undefined;
if ((layer.extensions ?? []).includes('metadata') && !(metadataLevels > 0)) fail('layer.json names the metadata extension without metadataAvailability');
let metadataTiles = 0;
let gzipped = 0;

const tiles = new Map();
let vertexTotal = 0;
const points = [];
const heights = [];
for (let z = 0; z < layer.available.length; z++) {
  for (const r of layer.available[z]) {
    for (let y = r.startY; y <= r.endY; y++) {
      for (let x = r.startX; x <= r.endX; x++) {
        const file = path.join(dir, `${z}/${x}/${y}.terrain`);
        if (!fs.existsSync(file)) {
          fail(`${z}/${x}/${y}: listed in layer.json, no file`);
          continue;
        }
        let bytes = fs.readFileSync(file);
        if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
          bytes = zlib.gunzipSync(bytes);
          gzipped++;
        }
        let t;
        try {
          t = decode(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
        } catch (e) {
          fail(`${z}/${x}/${y}: does not decode: ${e}`);
          continue;
        }
        const side = 180 / 2 ** z;
        const west = -180 + x * side;
        const south = -90 + y * side;
        const n = t.vertexData.length / 3;
        const h = t.header;
        const verts = [];
        for (let k = 0; k < n; k++) {
          const u = t.vertexData[k];
          const v = t.vertexData[k + n];
          const q = t.vertexData[k + 2 * n];
          if (u > 32767 || v > 32767 || q > 32767) fail(`${z}/${x}/${y}: vertex ${k} outside 0..32767`);
          const lon = u === 32767 ? west + side : west + (u / 32767) * side;
          const lat = v === 32767 ? south + side : south + (v / 32767) * side;
          const height = h.minHeight + (q / 32767) * (h.maxHeight - h.minHeight);
          verts.push({ u, v, lon, lat, height });
        }
        const step = (h.maxHeight - h.minHeight) / 32767;
        for (const p of verts) {
          if (p.height < h.minHeight - 1e-3 || p.height > h.maxHeight + 1e-3) fail(`${z}/${x}/${y}: a vertex outside the header's heights`);
          const [px, py, pz] = ecef(p.lat, p.lon, p.height);
          const d = Math.hypot(px - h.boundingSphereCenterX, py - h.boundingSphereCenterY, pz - h.boundingSphereCenterZ);
          if (d > h.boundingSphereRadius * (1 + 1e-9) + 1e-3) fail(`${z}/${x}/${y}: a vertex ${d - h.boundingSphereRadius} m outside the bounding sphere`);
          // Every 64th vertex is compared with the packs (all of them
          // takes planet-pack minutes on a 2-core machine).
          if (vertexTotal++ % 64 === 0) {
            points.push(p.lat, p.lon);
            heights.push([p.height, levelError(z) + step]);
          }
        }
        const hop = [h.horizonOcclusionPointX, h.horizonOcclusionPointY, h.horizonOcclusionPointZ];
        // NaN where no point can exist (a tile too large: Cesium then never
        // horizon-culls it); else outside the ellipsoid.
        if (!hop.every(Number.isNaN) && !(Math.hypot(...hop) >= 1 - 1e-9)) fail(`${z}/${x}/${y}: the horizon occlusion point lies inside the ellipsoid`);
        if (hop.every(Number.isNaN) && z > 1) fail(`${z}/${x}/${y}: no horizon occlusion point at level ${z}`);
        const idx = t.triangleIndices;
        for (let k = 0; k < idx.length; k += 3) {
          const [a, b, c] = [idx[k], idx[k + 1], idx[k + 2]];
          if (a >= n || b >= n || c >= n) {
            fail(`${z}/${x}/${y}: triangle ${k / 3} names a vertex past ${n}`);
            break;
          }
          const cross = (verts[b].u - verts[a].u) * (verts[c].v - verts[a].v) - (verts[b].v - verts[a].v) * (verts[c].u - verts[a].u);
          if (cross <= 0) {
            fail(`${z}/${x}/${y}: triangle ${k / 3} is not counter-clockwise`);
            break;
          }
        }
        const edges = { west: (p) => p.u === 0, south: (p) => p.v === 0, east: (p) => p.u === 32767, north: (p) => p.v === 32767 };
        for (const [name, on] of Object.entries(edges)) {
          const listed = new Set(t[`${name}Indices`]);
          const expected = verts.map((p, k) => (on(p) ? k : -1)).filter((k) => k >= 0);
          if (listed.size !== expected.length || expected.some((k) => !listed.has(k))) fail(`${z}/${x}/${y}: the ${name} edge list is not the vertices on it`);
        }
        if (!t.extensions || !t.extensions.vertexNormals) fail(`${z}/${x}/${y}: no vertex normals`);
        if (metadataLevels > 0 && z % metadataLevels === 0) {
          const said = t.extensions?.metadata?.available;
          const expected = [];
          for (let level = z + 1; level <= z + metadataLevels; level++) {
            const ranges = rangesUnder(z, x, y, level);
            if (ranges.length === 0) break;
            expected.push(ranges);
          }
          if (JSON.stringify(said) !== JSON.stringify(expected)) fail(`${z}/${x}/${y}: its metadata's availability ${JSON.stringify(said)} is not layer.json's under it, ${JSON.stringify(expected)}`);
          metadataTiles++;
        }
        tiles.set(`${z}/${x}/${y}`, { verts, step });
      }
    }
  }
}

// Shared edges: the east edge of (x, y) against the west edge of (x + 1, y)
// (wrapping at the antimeridian), the north edge against the south one.
const key = (p) => `${p.lon.toFixed(9)},${p.lat.toFixed(9)}`;
let edgesCompared = 0;
for (const [name, tile] of tiles) {
  const [z, x, y] = name.split('/').map(Number);
  const columns = 2 ** (z + 1);
  for (const [dx, dy, mine, theirs] of [[1, 0, (p) => p.u === 32767, (p) => p.u === 0], [0, 1, (p) => p.v === 32767, (p) => p.v === 0]]) {
    const other = tiles.get(`${z}/${(x + dx) % columns}/${y + dy}`);
    if (!other) continue;
    const shift = dx === 1 && x + 1 === columns ? 360 : 0;
    const a = new Map(tile.verts.filter(mine).map((p) => [key({ ...p, lon: p.lon - shift }), p]));
    const b = other.verts.filter(theirs);
    if (a.size !== b.length) fail(`${name} and its ${dx ? 'east' : 'north'} neighbour put ${a.size} and ${b.length} vertices on their shared edge`);
    for (const p of b) {
      const q = a.get(key(p));
      if (!q) {
        fail(`${name}: its neighbour has a vertex at ${key(p)} on their edge, it has none`);
        break;
      }
      if (Math.abs(q.height - p.height) > tile.step + other.step + 1e-3) fail(`${name}: heights differ across the edge at ${key(p)}: ${q.height} and ${p.height}`);
    }
    edgesCompared++;
  }
}

fs.writeFileSync(pointsOut, Buffer.from(new Float64Array(points).buffer));
fs.writeFileSync(heightsOut, JSON.stringify(heights));
console.log(JSON.stringify({ tiles: tiles.size, vertices: vertexTotal, edges_compared: edgesCompared, metadata_tiles: metadataTiles, gzipped, failures: failures.length }));
process.exit(failures.length ? 1 : 0);
