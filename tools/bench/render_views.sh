#!/usr/bin/env bash
# GPU time per pass of planet-view at 1920x1080 for the orbit, 10 km, 100 m
# and 2 m views over the Himalaya, at a 1k-node budget with a 1 px target and
# a 4k-node budget with a 0.25 px target (so the budget binds); prints one
# table row per run. Usage: tools/bench/render_views.sh PACK [planet-view binary]
# On a machine without a GPU, set VK_DRIVER_FILES to lavapipe's ICD.
set -euo pipefail
pack=${1:?usage: render_views.sh PACK [planet-view]}
view=${2:-target/release/planet-view}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-7s %6s %6s %6s %6s %9s %8s %8s %8s %8s %6s\n' view budget sse nodes drawn triangles depth_ms shade_ms sky_ms total_ms frames
for pair in 1024:1 4096:0.25; do
    IFS=: read -r budget sse <<<"$pair"
    for spec in "orbit 20000000 -90" "10km 10000 -20" "100m 100 -8" "2m 2 -3"; do
        set -- $spec
        name=$1; agl=$2; pitch=$3
        "$view" "$pack" --lat 27.85 --lon 86.75 --agl "$agl" --heading 300 --pitch "$pitch" \
            --size 1920x1080 --budget "$budget" --sse "$sse" --uploads 256 --slots 2048 --max-frames 400 \
            --shot "$out/$name.png" --stats "$out/$name.json" 2>/dev/null
        python3 - "$out/$name.json" "$name" "$budget" "$sse" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
g = s.get("gpu_ms") or {}
f = lambda k: f"{g[k]:8.2f}" if k in g else "       -"
print(f"{sys.argv[2]:<7} {sys.argv[3]:>6} {sys.argv[4]:>6} {s['nodes_selected']:>6} {s['nodes_drawn']:>6} {s['triangles']:>9} "
      f"{f('terrain_depth')} {f('terrain_shaded')} {f('sky')} {f('total')} {s['frames_rendered']:>6}")
PY
    done
done
