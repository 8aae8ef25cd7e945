#!/usr/bin/python3
"""planet-pack's quantized-mesh export beside a peer generator on the same DEM.

The peer is PyPI's `pydelatin` (Delaunay refinement to a maximum error, a
wrapper of fogleman's hmm) with PyPI's `quantized-mesh-encoder` (Kyle
Barron's encoder): a mesher and an encoder, not a tiler, so this script
supplies the tiling, the same for both.

    export_vs_peer.py peer --layer OURS/layer.json --dem DEM --out DIR --parts FILE
        Make exactly the tiles OURS/layer.json's `available` lists, one
        process, one thread: each tile's 65 x 65 grid read from the DEM with
        GDAL (bilinear point reads, the samples on the tile's edges, as
        quantized-mesh places its vertices; no data, outside the DEM, as
        0 m), meshed by Delatin to the level's error (Cesium's, as
        planet-pack uses), its vertices numbered in the order of first use
        (the encoder's index coding needs it and does not do it), encoded
        with the encoder's vertex normals extension and a water mask by
        planet-pack's rule (below 0 m). The time spent reading, meshing,
        encoding and writing goes to FILE as JSON.

    export_vs_peer.py measure --dem DEM --ours DIR --peer DIR --run LABEL,KIND,TIMEFILE[,PARTS]...
        Decode both exports' tiles and compare them: bytes (and gzip's),
        vertices and triangles per tile, the height the mesh draws at every
        grid sample against the DEM read there (max and 99th percentile per
        level, tiles wholly inside the DEM), shared edges between same-level
        neighbours, and each run's wall time and peak memory (GNU time -v
        output; KIND is ours or peer; runs of one label: the fastest counts).
        With --pack, also the ground each side meshes on a sample of tiles a
        level (`planet-pack points`): ours against the DEM, our mesh against
        its own ground, Delatin's vertex count on either.
        Prints Markdown tables and one JSON line per run (and per level).
"""

import argparse
import gzip
import io
import json
import math
import os
import re
import struct
import subprocess
import sys
import time

import numpy as np
from osgeo import gdal

gdal.UseExceptions()

GRID = 65
QMAX = 32767
WGS84_A = 6378137.0


def level_error_m(z):
    """Cesium's geometric error for level z (planet-pack's level_error_m)."""
    return WGS84_A * 2 * math.pi / 4 / (GRID * 2) / 2**z


def extent(z, x, y):
    side = 180.0 / 2**z
    west, south = -180.0 + x * side, -90.0 + y * side
    return west, south, west + side, south + side


def tiles_of(layer_path):
    layer = json.load(open(layer_path))
    for z, ranges in enumerate(layer["available"]):
        for r in ranges:
            for y in range(r["startY"], r["endY"] + 1):
                for x in range(r["startX"], r["endX"] + 1):
                    yield z, x, y


class Dem:
    """The DEM, read over a tile as a 65 x 65 grid whose pixel centres lie on
    0, 1/64, ..., 1 of the tile's extent (north row first). Bilinear at
    each point: XSCALE/YSCALE=1 keeps GDAL's warper from widening the kernel
    when it downsamples (it would average the coarse tiles' grids, where
    planet-pack reads points)."""

    NODATA = -32768.0

    def __init__(self, path):
        self.ds = gdal.Open(path)
        gt = self.ds.GetGeoTransform()
        self.box = (gt[0], gt[3] + gt[5] * self.ds.RasterYSize, gt[0] + gt[1] * self.ds.RasterXSize, gt[3])

    def grid(self, z, x, y):
        """Heights (float32, north row first) and where the DEM has data."""
        west, south, east, north = extent(z, x, y)
        half = (east - west) / (GRID - 1) / 2
        out = gdal.Warp(
            "", self.ds, format="MEM", outputBounds=(west - half, south - half, east + half, north + half),
            width=GRID, height=GRID, resampleAlg="bilinear", dstNodata=self.NODATA, outputType=gdal.GDT_Float32,
            warpOptions=["XSCALE=1", "YSCALE=1"])
        heights = out.GetRasterBand(1).ReadAsArray()
        valid = heights != self.NODATA
        return heights, valid

    def holds(self, z, x, y):
        west, south, east, north = extent(z, x, y)
        return west >= self.box[0] and south >= self.box[1] and east <= self.box[2] and north <= self.box[3]


def water_mask(heights):
    """planet-pack's rule for ground without classes: water below 0 m; one
    byte where the tile is all land (0) or all water (255), else 256 x 256
    from the north-west."""
    water = heights < 0
    if water.all() or not water.any():
        return 255 if water.all() else 0
    k = (np.arange(256) * (GRID - 1) + 127) // 255
    return np.where(water[np.ix_(k, k)], 255, 0).astype(np.uint8)


def peer(args):
    from pydelatin import Delatin
    from quantized_mesh_encoder import WaterMaskExtension, VertexNormalsExtension, encode

    dem = Dem(args.dem)
    spent = {"read": 0.0, "mesh": 0.0, "encode": 0.0, "write": 0.0}
    tiles = 0
    start = time.perf_counter()
    for z, x, y in tiles_of(args.layer):
        t0 = time.perf_counter()
        heights, valid = dem.grid(z, x, y)
        heights[~valid] = 0.0
        t1 = time.perf_counter()
        tin = Delatin(heights, max_error=level_error_m(z))
        vertices, triangles = tin.vertices, tin.triangles
        t2 = time.perf_counter()
        # Delatin's x runs east and y north (0..64); the border vertices are
        # the bounds exactly, in the float32 the encoder rounds positions
        # to, so they quantize to 0 and 32767.
        west, south, east, north = (float(np.float32(v)) for v in extent(z, x, y))
        positions = np.empty((len(vertices), 3), dtype=np.float64)
        along = vertices[:, :2] / (GRID - 1)
        positions[:, 0] = np.where(vertices[:, 0] == GRID - 1, east, west + along[:, 0] * (east - west))
        positions[:, 1] = np.where(vertices[:, 1] == GRID - 1, north, south + along[:, 1] * (north - south))
        positions[:, 2] = vertices[:, 2]
        # The format's high-water-mark indices need the vertices numbered in
        # the order the triangles first use them; the encoder does not
        # renumber them, and Delatin's are not in that order (fed as they
        # are, no decoder reads the indices back).
        used, first = np.unique(triangles, return_index=True)
        by_first_use = used[np.argsort(first)]
        renumber = np.empty(len(positions), dtype=np.uint32)
        renumber[by_first_use] = np.arange(len(by_first_use), dtype=np.uint32)
        positions, triangles = positions[by_first_use], renumber[triangles]
        buffer = io.BytesIO()
        extensions = [
            VertexNormalsExtension(indices=triangles, positions=positions),
            WaterMaskExtension(data=water_mask(heights)),
        ]
        encode(buffer, positions, triangles, bounds=(west, south, east, north), extensions=extensions)
        t3 = time.perf_counter()
        path = os.path.join(args.out, str(z), str(x), f"{y}.terrain")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(buffer.getvalue())
        t4 = time.perf_counter()
        for part, seconds in zip(spent, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
            spent[part] += seconds
        tiles += 1
    total = time.perf_counter() - start
    with open(args.parts, "w") as f:
        json.dump({"tiles": tiles, "loop_s": round(total, 3), **{f"{k}_s": round(v, 3) for k, v in spent.items()}}, f)


def decode(data):
    """A quantized-mesh-1.0 tile: heights range, u/v/height, triangles, edges,
    extension sizes."""
    lo, hi = struct.unpack_from("<ff", data, 24)
    n = struct.unpack_from("<I", data, 88)[0]
    uvh = np.frombuffer(data, "<u2", 3 * n, 92).reshape(3, n).astype(np.int64)
    uvh = np.cumsum((uvh >> 1) ^ -(uvh & 1), axis=1)
    wide = n > 65536
    at = 92 + 6 * n
    at += (-at) % (4 if wide else 2)
    index = "<u4" if wide else "<u2"
    width = 4 if wide else 2
    t = struct.unpack_from("<I", data, at)[0]
    codes = np.frombuffer(data, index, 3 * t, at + 4).astype(np.int64)
    at += 4 + width * 3 * t
    zero = codes == 0
    triangles = (np.cumsum(zero) - zero - codes).reshape(-1, 3)
    edges = []
    for _ in range(4):
        count = struct.unpack_from("<I", data, at)[0]
        edges.append(np.frombuffer(data, index, count, at + 4).astype(np.int64))
        at += 4 + width * count
    mesh_bytes = at
    extensions = {}
    while at < len(data):
        kind, length = struct.unpack_from("<BI", data, at)
        extensions[kind] = length + 5
        at += 5 + length
    heights = lo + uvh[2] / QMAX * (hi - lo)
    return {"u": uvh[0], "v": uvh[1], "h": heights, "triangles": triangles, "edges": edges,
            "mesh_bytes": mesh_bytes, "extensions": extensions}


def drawn(tile, tolerance=0.02):
    """The height the mesh draws at each grid sample (north row first,
    barycentric in the tile's u, v plane), NaN where no triangle holds it;
    and the share of triangles counter-clockwise seen from above."""
    gu = tile["u"] * (GRID - 1) / QMAX
    gv = tile["v"] * (GRID - 1) / QMAX
    tri = tile["triangles"]
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    area = (gu[b] - gu[a]) * (gv[c] - gv[a]) - (gu[c] - gu[a]) * (gv[b] - gv[a])
    ccw = float((area > 0).mean()) if len(tri) else 1.0
    keep = area != 0
    a, b, c, area = a[keep], b[keep], c[keep], area[keep]
    corners_u = np.stack([gu[a], gu[b], gu[c]])
    corners_v = np.stack([gv[a], gv[b], gv[c]])
    i0 = np.clip(np.ceil(corners_u.min(0) - 0.05), 0, GRID - 1).astype(np.int64)
    i1 = np.clip(np.floor(corners_u.max(0) + 0.05), 0, GRID - 1).astype(np.int64)
    j0 = np.clip(np.ceil(corners_v.min(0) - 0.05), 0, GRID - 1).astype(np.int64)
    j1 = np.clip(np.floor(corners_v.max(0) + 0.05), 0, GRID - 1).astype(np.int64)
    ci, cj = i1 - i0 + 1, j1 - j0 + 1
    count = ci * cj
    owner = np.repeat(np.arange(len(a)), count)
    offset = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    pi = i0[owner] + offset % ci[owner]
    pj = j0[owner] + offset // ci[owner]
    ua, va, ub, vb, uc, vc = gu[a][owner], gv[a][owner], gu[b][owner], gv[b][owner], gu[c][owner], gv[c][owner]
    # Grid sample k of a side lies at k x 32767 / 64 in the format's units.
    area_o = area[owner]
    la = ((ub - pi) * (vc - pj) - (uc - pi) * (vb - pj)) / area_o
    lb = ((uc - pi) * (va - pj) - (ua - pi) * (vc - pj)) / area_o
    lc = 1 - la - lb
    inside = np.minimum(np.minimum(la, lb), lc)
    h = tile["h"]
    value = la * h[a][owner] + lb * h[b][owner] + lc * h[c][owner]
    take = inside >= -tolerance
    order = np.argsort(inside[take], kind="stable")  # the most inside writes last
    out = np.full(GRID * GRID, np.nan)
    out[((GRID - 1 - pj[take]) * GRID + pi[take])[order]] = value[take][order]
    return out.reshape(GRID, GRID), ccw


def edge_profile(tile, side):
    """The vertices on one edge: position along it (format units) and height."""
    u, v, h = tile["u"], tile["v"], tile["h"]
    on = {"west": u == 0, "east": u == QMAX, "south": v == 0, "north": v == QMAX}[side]
    along = (v if side in ("west", "east") else u)[on]
    order = np.argsort(along)
    return along[order], h[on][order]


def shared_edges(profiles):
    """Same-level neighbours' shared edges, per level: how many, those whose
    vertex positions differ, the vertices one side lacks, and the largest
    height gap between the two edges' polylines (metres, at every vertex of
    either)."""
    levels = {}
    for (z, x, y), p in profiles.items():
        for other, mine, theirs in (((z, x + 1, y), "east", "west"), ((z, x, y + 1), "north", "south")):
            q = profiles.get(other)
            if q is None:
                continue
            (sa, ha), (sb, hb) = p[mine], q[theirs]
            at = np.union1d(sa, sb)
            gap = float(np.abs(np.interp(at, sa, ha) - np.interp(at, sb, hb)).max())
            lonely = len(np.setxor1d(sa, sb))
            e = levels.setdefault(z, {"edges": 0, "edges_differing": 0, "vertices_unmatched": 0, "gap_max_m": 0.0})
            e["edges"] += 1
            e["edges_differing"] += lonely > 0
            e["vertices_unmatched"] += lonely
            e["gap_max_m"] = round(max(e["gap_max_m"], gap), 3)
    return dict(sorted(levels.items()))


def ground_check(args, dem, tiles, kinds):
    """On a sample of the tiles wholly inside the DEM, per level: the ground
    planet-pack meshes (`planet-pack points --detail off` at the grid's
    quantized positions, read as the export reads it: no finer than an
    eighth of the grid's spacing) against the DEM as the peer reads it; our
    mesh against that ground; and Delatin's vertices on either grid, so the
    meshers are compared on the same input."""
    from pydelatin import Delatin

    rows = []
    step = np.floor(np.arange(GRID) * QMAX / (GRID - 1)) / QMAX
    step[-1] = 1.0
    for z in sorted({t[0] for t in tiles}):
        level = [t for t in tiles if t[0] == z and dem.holds(*t)]
        if not level:
            continue
        sample = level[:: max(1, len(level) // args.ground_tiles)][: args.ground_tiles]
        points = []
        for t in sample:
            west, south, east, north = extent(*t)
            lat, lon = np.meshgrid(south + step[::-1] * (north - south), west + step * (east - west), indexing="ij")
            points.append(np.stack([lat.ravel(), lon.ravel()], axis=1))
        work = os.path.join(args.peer, "..", "ground-check")
        os.makedirs(work, exist_ok=True)
        np.concatenate(points).astype("<f8").tofile(os.path.join(work, "points.bin"))
        grid_m = (180.0 / 2**z) / (GRID - 1) * math.radians(WGS84_A)
        subprocess.run([args.planet_pack, "points", args.pack, "--points", os.path.join(work, "points.bin"),
                        "--out", os.path.join(work, "ground.npy"), "--spacing", repr(grid_m / 8), "--detail", "off"],
                       check=True, capture_output=True)
        ground = np.load(os.path.join(work, "ground.npy")).reshape(len(sample), GRID, GRID)
        apart, mesh_off, on_ours, on_dem, ours_vertices = [], [], 0, 0, 0
        for t, g in zip(sample, ground):
            heights, valid = dem.grid(*t)
            apart.append(np.abs(g - heights)[valid])
            tile = decode(open(os.path.join(kinds["ours"], str(t[0]), str(t[1]), f"{t[2]}.terrain"), "rb").read())
            mesh, _ = drawn(tile)
            mesh_off.append(np.abs(mesh - g).ravel())
            ours_vertices += len(tile["u"])
            on_ours += len(Delatin(g.astype(np.float32), max_error=level_error_m(z)).vertices)
            on_dem += len(Delatin(heights, max_error=level_error_m(z)).vertices)
        apart, mesh_off = np.concatenate(apart), np.concatenate(mesh_off)
        mesh_off = mesh_off[~np.isnan(mesh_off)]
        n = len(sample)
        rows.append({"level": z, "tiles": n, "ground_vs_dem_max_m": round(float(apart.max()), 2),
                     "ground_vs_dem_p99_m": round(percentile(apart, 99), 2),
                     "ours_mesh_vs_own_ground_max_m": round(float(mesh_off.max()), 2),
                     "ours_mesh_vs_own_ground_p99_m": round(percentile(mesh_off, 99), 2),
                     "ours_samples_over_allowed": round(float((mesh_off > level_error_m(z)).mean()), 5),
                     "ours_vertices_per_tile": round(ours_vertices / n, 1),
                     "delatin_vertices_on_ours_ground": round(on_ours / n, 1),
                     "delatin_vertices_on_dem": round(on_dem / n, 1)})
    return rows


def time_file(path):
    text = open(path).read()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text).group(1)
    seconds = 0.0
    for part in wall.split(":"):
        seconds = seconds * 60 + float(part)
    rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1))
    user = float(re.search(r"User time \(seconds\): (\S+)", text).group(1))
    system = float(re.search(r"System time \(seconds\): (\S+)", text).group(1))
    return {"wall_s": seconds, "cpu_s": round(user + system, 2), "peak_rss_mib": round(rss_kb / 1024, 1)}


def percentile(values, q):
    return float(np.percentile(values, q)) if len(values) else float("nan")


def measure(args):
    dem = Dem(args.dem)
    tiles = list(tiles_of(os.path.join(args.ours, "layer.json")))
    kinds = {"ours": args.ours, "peer": args.peer}
    totals = {k: {"bytes": 0, "gzip_bytes": 0, "mesh_bytes": 0, "normals_bytes": 0, "water_bytes": 0,
                  "metadata_bytes": 0, "vertices": 0, "border_vertices": 0, "triangles": 0, "uncovered": 0,
                  "ccw_min": 1.0, "edge_lists_wrong": 0} for k in kinds}
    levels = {}  # (kind, z) -> sums over tiles wholly inside the DEM
    errors = {}  # (kind, z) -> |drawn - DEM| at their samples
    profiles = {k: {} for k in kinds}
    for z, x, y in tiles:
        heights, valid = dem.grid(z, x, y)
        inside = dem.holds(z, x, y)
        for kind, root in kinds.items():
            data = open(os.path.join(root, str(z), str(x), f"{y}.terrain"), "rb").read()
            tile = decode(data)
            u, v = tile["u"], tile["v"]
            border = (u == 0) | (u == QMAX) | (v == 0) | (v == QMAX)
            t = totals[kind]
            t["bytes"] += len(data)
            t["gzip_bytes"] += len(gzip.compress(data, 6, mtime=0))
            t["mesh_bytes"] += tile["mesh_bytes"]
            t["normals_bytes"] += tile["extensions"].get(1, 0)
            t["water_bytes"] += tile["extensions"].get(2, 0)
            t["metadata_bytes"] += tile["extensions"].get(4, 0)
            t["vertices"] += len(u)
            t["border_vertices"] += int(border.sum())
            t["triangles"] += len(tile["triangles"])
            expected = [np.flatnonzero(u == 0), np.flatnonzero(v == 0), np.flatnonzero(u == QMAX),
                        np.flatnonzero(v == QMAX)]
            t["edge_lists_wrong"] += sum(set(e.tolist()) != set(w.tolist()) for e, w in zip(tile["edges"], expected))
            profiles[kind][(z, x, y)] = {s: edge_profile(tile, s) for s in ("west", "east", "south", "north")}
            mesh, ccw = drawn(tile)
            t["ccw_min"] = min(t["ccw_min"], ccw)
            t["uncovered"] += int(np.isnan(mesh).sum())
            if not inside:
                continue
            level = levels.setdefault((kind, z), {"tiles": 0, "bytes": 0, "vertices": 0, "triangles": 0})
            level["tiles"] += 1
            level["bytes"] += len(data)
            level["vertices"] += len(u)
            level["triangles"] += len(tile["triangles"])
            errors.setdefault((kind, z), []).append(np.abs(mesh - heights)[valid & ~np.isnan(mesh)])

    runs = {}
    for spec in args.run:
        label, kind, timing, *parts = spec.split(",")
        measured = time_file(timing)
        if parts:
            measured["parts"] = json.load(open(parts[0]))
        best = runs.get(label)
        rounds = (best or {}).get("rounds", 0) + 1
        if best is None or measured["wall_s"] < best["wall_s"]:
            runs[label] = {**measured, "kind": kind}
        runs[label]["rounds"] = rounds

    n = len(tiles)
    edges = {kind: shared_edges(profiles[kind]) for kind in kinds}
    print(f"{n} tiles, levels {tiles[0][0]}-{tiles[-1][0]}, the same z/x/y for both; "
          f"{sum(dem.holds(*t) for t in tiles)} of them wholly inside the DEM\n")
    print("| run | wall | tiles/s | CPU | peak memory | bytes | bytes a tile | gzip bytes a tile "
          "| vertices a tile (on the border) | triangles a tile |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    records = []
    for label, r in runs.items():
        t = totals[r["kind"]]
        print(f"| {label} | {r['wall_s']:.2f} s | {n / r['wall_s']:.0f} | {r['cpu_s']:.2f} s "
              f"| {r['peak_rss_mib']:.0f} MiB | {t['bytes']:,} | {t['bytes'] / n:,.0f} | {t['gzip_bytes'] / n:,.0f} "
              f"| {t['vertices'] / n:,.0f} ({t['border_vertices'] / n:,.0f}) | {t['triangles'] / n:,.0f} |")
        records.append({"run": label, "tiles": n, "tiles_per_s": round(n / r["wall_s"], 1), **r, **t})
    for label, r in runs.items():
        if "parts" in r:
            parts = r["parts"]
            print(f"\n{label}, where its time goes (s, its best run): GDAL read {parts['read_s']:.2f}, "
                  f"Delatin {parts['mesh_s']:.2f}, encoding (renumbering, normals, header) {parts['encode_s']:.2f}, "
                  f"writing {parts['write_s']:.2f}; the rest of {r['wall_s']:.2f} s wall is Python's start, "
                  f"imports and the listing ({r['wall_s'] - parts['loop_s']:.2f} s)")
    print("\nBytes by part, all tiles (header, vertices, indices and edge lists; normals; water mask; metadata):\n")
    print("| export | mesh | normals | water mask | metadata |")
    print("|---|---:|---:|---:|---:|")
    for kind, t in totals.items():
        print(f"| {kind} | {t['mesh_bytes']:,} | {t['normals_bytes']:,} | {t['water_bytes']:,} "
              f"| {t['metadata_bytes']:,} |")
    print("\nPer level, tiles wholly inside the DEM; error: |height drawn - DEM| at the 65 x 65 grid samples "
          "(the DEM read bilinearly there, as the peer reads it), metres:\n")
    print("| level | tiles | error allowed | vertices ours / peer | triangles ours / peer | bytes ours / peer "
          "| max error ours / peer | p99 error ours / peer | samples over allowed ours / peer |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for z in sorted({z for _, z in levels}):
        o, p = levels[("ours", z)], levels[("peer", z)]
        row = {"level": z, "tiles": o["tiles"], "error_allowed_m": round(level_error_m(z), 2)}
        for kind, lv in (("ours", o), ("peer", p)):
            e = np.concatenate(errors[(kind, z)])
            row[kind] = {"vertices_per_tile": round(lv["vertices"] / lv["tiles"], 1),
                         "triangles_per_tile": round(lv["triangles"] / lv["tiles"], 1),
                         "bytes_per_tile": round(lv["bytes"] / lv["tiles"]),
                         "error_max_m": round(float(e.max()), 2), "error_p99_m": round(percentile(e, 99), 2),
                         "samples_over_allowed": round(float((e > level_error_m(z)).mean()), 5)}
        ro, rp = row["ours"], row["peer"]
        print(f"| {z} | {o['tiles']:,} | {level_error_m(z):,.1f} "
              f"| {ro['vertices_per_tile']:,.0f} / {rp['vertices_per_tile']:,.0f} "
              f"| {ro['triangles_per_tile']:,.0f} / {rp['triangles_per_tile']:,.0f} "
              f"| {ro['bytes_per_tile']:,} / {rp['bytes_per_tile']:,} "
              f"| {ro['error_max_m']:.2f} / {rp['error_max_m']:.2f} "
              f"| {ro['error_p99_m']:.2f} / {rp['error_p99_m']:.2f} "
              f"| {100 * ro['samples_over_allowed']:.2f}% / {100 * rp['samples_over_allowed']:.2f}% |")
        records.append({"level_stats": row})
    print("\nShared edges between same-level neighbours (all tiles): edges whose vertices differ "
          "(vertices one side lacks), and the largest height gap between the two sides' polylines:\n")
    print("| level | error allowed | edges | ours: differing (vertices) | ours: gap max "
          "| peer: differing (vertices) | peer: gap max |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for z in edges["ours"]:
        o, p = edges["ours"][z], edges["peer"][z]
        print(f"| {z} | {level_error_m(z):,.1f} | {o['edges']:,} "
              f"| {o['edges_differing']:,} ({o['vertices_unmatched']:,}) | {o['gap_max_m']:.2f} m "
              f"| {p['edges_differing']:,} ({p['vertices_unmatched']:,}) | {p['gap_max_m']:.2f} m |")
        records.append({"shared_edges": {"level": z, "ours": o, "peer": p}})
    print("\nChecks of every tile: edge lists that are not exactly the vertices on that edge, grid samples no "
          "triangle holds, the least share of a tile's triangles counter-clockwise seen from above:\n")
    print("| export | edge lists wrong | samples no triangle holds | least share CCW |")
    print("|---|---:|---:|---:|")
    for kind, t in totals.items():
        print(f"| {kind} | {t['edge_lists_wrong']} | {t['uncovered']} | {t['ccw_min']:.3f} |")
    if args.pack:
        rows = ground_check(args, dem, tiles, kinds)
        print(f"\nThe ground each meshes, on {args.ground_tiles} tiles a level (fewer where a level has fewer) wholly "
              "inside the DEM: planet-pack's (the pack read as the export reads it) against the DEM read bilinearly; "
              "our mesh against our own ground; Delatin's vertices on either grid:\n")
        print("| level | tiles | ours ground - DEM: max / p99 | ours mesh - own ground: max / p99 (allowed) "
              "| samples over allowed | vertices: ours | Delatin on ours ground | Delatin on the DEM |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['level']} | {r['tiles']} | {r['ground_vs_dem_max_m']:.2f} / {r['ground_vs_dem_p99_m']:.2f} m "
                  f"| {r['ours_mesh_vs_own_ground_max_m']:.2f} / {r['ours_mesh_vs_own_ground_p99_m']:.2f} m "
                  f"({level_error_m(r['level']):,.1f}) | {100 * r['ours_samples_over_allowed']:.2f}% "
                  f"| {r['ours_vertices_per_tile']:,.0f} | {r['delatin_vertices_on_ours_ground']:,.0f} "
                  f"| {r['delatin_vertices_on_dem']:,.0f} |")
            records.append({"ground_check": r})
    print()
    for record in records:
        print(json.dumps(record))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("peer")
    p.add_argument("--layer", required=True)
    p.add_argument("--dem", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--parts", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--dem", required=True)
    m.add_argument("--ours", required=True)
    m.add_argument("--peer", required=True)
    m.add_argument("--run", action="append", default=[], help="LABEL,KIND,TIMEFILE[,PARTS]")
    m.add_argument("--pack", help="the pack, for the ground check (with --planet-pack)")
    m.add_argument("--planet-pack", default="target/release/planet-pack")
    m.add_argument("--ground-tiles", type=int, default=40)
    args = parser.parse_args()
    {"peer": peer, "measure": measure}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
