#!/usr/bin/env bash
# On the GPU machine (no Rust toolchain there): the figures the renderer
# issues ask of a real GPU, written under $OUT. Run from the repository
# root with .gl/ carried (tools/device/prepare.sh made it):
#   GPU time per pass at 1920x1080 for orbit, 10 km, 100 m and 2 m at 1k-
#   and 4k-node budgets, and a 2k-node cut (tools/bench/render_views.sh);
#   frame times along the demo fly-through at 1920x1080;
#   the golden-image tests on this GPU (same content within tolerance);
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
$view .gl/earth.planetpack --headless --path .gl/flythrough.json --fps 30 --size 1920x1080 --uploads 64 \
    --stats "$out/flythrough.json" 2>&1 | tee "$out/flythrough.txt"
PLANET_TEST_ANY_GPU=1 PLANET_GOLDEN_DIR=engine/render/tests/golden PLANET_GOLDEN_FAILURES="$out/golden" \
    PLANET_TEST_TMPDIR=/tmp/planet-tests .gl/bin/render-tests --test-threads 1 2>&1 | tee "$out/render-tests.txt"
