#!/usr/bin/env bash
# GPU time and work per pass of planet-view at 1920x1080 for the orbit,
# 10 km, 100 m and 2 m views over the Himalaya, at a 1k-node budget with a
# 1 px target and a 4k-node budget with a 0.25 px target (so the budget
# binds); prints one table row per run. Times per pass, then the pipeline
# statistics of the last frame: vertex shader runs per drawn node in the
# depth (vs/nd_d) and the shaded pass (vs/nd_s), triangles out of the
# clipper in the shaded pass, pixels covered (the frame less the sky's
# pixels), fragment shader runs per covered pixel in each pass (fr/px_d,
# fr/px_s) and fragments through the shaded pass's depth test per covered
# pixel (in/px_s: the shading the prepass leaves); "-" where the device
# cannot count.
# Usage: tools/bench/render_views.sh PACK [planet-view binary]
# On a machine without a GPU, set VK_DRIVER_FILES to lavapipe's ICD.
# MAX_FRAMES (default 400) caps the frames a view may stream for.
set -euo pipefail
pack=${1:?usage: render_views.sh PACK [planet-view]}
view=${2:-target/release/planet-view}
max_frames=${MAX_FRAMES:-400}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-7s %6s %6s %6s %6s %9s %8s %8s %8s %8s %6s %7s %7s %9s %8s %7s %7s %7s\n' view budget sse nodes drawn \
    triangles depth_ms shade_ms sky_ms total_ms frames vs/nd_d vs/nd_s clipped_s covered fr/px_d fr/px_s in/px_s
for pair in 1024:1 4096:0.25; do
    IFS=: read -r budget sse <<<"$pair"
    for spec in "orbit 20000000 -90" "10km 10000 -20" "100m 100 -8" "2m 2 -3"; do
        set -- $spec
        name=$1; agl=$2; pitch=$3
        "$view" "$pack" --lat 27.85 --lon 86.75 --agl "$agl" --heading 300 --pitch "$pitch" \
            --size 1920x1080 --budget "$budget" --sse "$sse" --uploads 256 --slots 2048 --max-frames "$max_frames" \
            --accept-incomplete --shot "$out/$name.png" --stats "$out/$name.json" 2>/dev/null
        python3 - "$out/$name.json" "$name" "$budget" "$sse" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
g = s.get("gpu_ms") or {}
f = lambda k: f"{g[k]:8.2f}" if k in g else "       -"
c = s.get("gpu_counts") or {}
depth, shaded = c.get("terrain_depth") or {}, c.get("terrain_shaded") or {}
n = lambda v, w, p=0: f"{v:{w}.{p}f}" if isinstance(v, (int, float)) else f"{'-':>{w}}"
covered = c.get("covered_pixels")
per_pixel = lambda p: p["fragment_invocations"] / covered if p and covered else None
print(f"{sys.argv[2]:<7} {sys.argv[3]:>6} {sys.argv[4]:>6} {s['nodes_selected']:>6} {s['nodes_drawn']:>6} {s['triangles']:>9} "
      f"{f('terrain_depth')} {f('terrain_shaded')} {f('sky')} {f('total')} {s['frames_rendered']:>6} "
      f"{n(depth.get('vertex_invocations_per_node'), 7)} {n(shaded.get('vertex_invocations_per_node'), 7)} "
      f"{n(shaded.get('clipping_primitives'), 9)} {n(covered, 8)} {n(per_pixel(depth), 7, 2)} {n(per_pixel(shaded), 7, 2)} "
      f"{n(c.get('shaded_samples_per_covered_pixel'), 7, 3)}")
PY
    done
done
