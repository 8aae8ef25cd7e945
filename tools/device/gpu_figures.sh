#!/usr/bin/env bash
# On the GPU machine (no Rust toolchain there): the figures the renderer
# issues ask of a real GPU, written under $OUT. Run from the repository
# root with .gl/ carried (tools/device/prepare.sh made it):
#   GPU time and pipeline statistics per pass at 1920x1080 for orbit, 10 km,
#   100 m and 2 m at 1k- and 4k-node budgets (tools/bench/render_views.sh),
#   and for a 2k-node cut ($OUT/2k.json, summed up in $OUT/gpu_counts.txt:
#   vertex shader runs per drawn node, fragment shader runs per covered
#   pixel, the goal being at most 1.2 in the shaded pass);
#   frame times and per-frame counts along the demo fly-through at 1920x1080;
#   the golden-image and statistics tests on this GPU (same content within
#   tolerance; the statistics test holds the shaded pass to 1.2 fragment
#   runs per covered pixel on a device that counts shader runs);
#   mismatches land in $OUT/golden.
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
view=.gl/bin/planet-view
if ! $view --headless --shot "$out/probe.png" --size 64x64 --alt 1e7 2>"$out/probe.log"; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
$view --headless --shot "$out/probe.png" --size 64x64 --alt 1e7 2>&1 | tee "$out/device.txt"
tools/bench/render_views.sh .gl/earth.planetpack "$view" | tee "$out/render_views.txt"
$view .gl/earth.planetpack --lat 27.85 --lon 86.75 --agl 100 --heading 300 --pitch -8 --size 1920x1080 \
    --budget 2048 --sse 0.5 --uploads 256 --slots 2048 --shot "$out/2k.png" --stats "$out/2k.json"
python3 - "$out/2k.json" <<'PY' | tee "$out/gpu_counts.txt"
import json, sys
s = json.load(open(sys.argv[1]))
c = s.get("gpu_counts")
print(f"device: {s['device']}, {s['width']}x{s['height']}, {s['nodes_drawn']} nodes drawn")
if not c:
    print("pipeline statistics: unavailable on this device")
    sys.exit(0)
for name in ("terrain_depth", "terrain_shaded"):
    p = c[name]
    print(f"{name}: {p['input_primitives']} triangles in, {p['clipping_primitives']} out of the clipper, "
          f"{p['vertex_invocations']} vertex runs ({p['vertex_invocations_per_node']} per node), "
          f"{p['fragment_invocations']} fragment runs")
print(f"covered pixels: {c['covered_pixels']}; per covered pixel, shaded-pass fragment shader runs: "
      f"{c['shaded_fragments_per_covered_pixel']} (goal <= 1.2), fragments through its depth test: "
      f"{c['shaded_samples_per_covered_pixel']}")
PY
$view .gl/earth.planetpack --headless --path .gl/flythrough.json --fps 30 --size 1920x1080 --uploads 64 \
    --stats "$out/flythrough.json" 2>&1 | tee "$out/flythrough.txt"
PLANET_TEST_ANY_GPU=1 PLANET_GOLDEN_DIR=engine/render/tests/golden PLANET_GOLDEN_FAILURES="$out/golden" \
    PLANET_TEST_TMPDIR=/tmp/planet-tests .gl/bin/render-tests --test-threads 1 2>&1 | tee "$out/render-tests.txt"
