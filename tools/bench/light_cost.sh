#!/usr/bin/env bash
# The terrain shader's cost before and after a change, in one run: five
# shots of the SRTM around North Palisade (a 78 km crop baked as the
# Earth's) from 12 km at a 12-degree sun, 960x540, on the release viewer
# built with shaders/surface.glsl as it was at REV ("before") and as it is
# ("after"); prints the shaded terrain pass's and the frame's GPU time
# (median of five, from --stats).
#
#   tools/bench/light_cost.sh REV      (e.g. 8bbaa59, the shader before #51)
set -euo pipefail
cd "$(dirname "$0")/../.."
rev=${1:?usage: tools/bench/light_cost.sh REV}
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
work=$(mktemp -d)
cp shaders/surface.glsl "$work/surface.now.glsl"
trap 'cp "$work/surface.now.glsl" shaders/surface.glsl; rm -rf "$work"' EXIT
cargo build --release --locked -q -p planet-bake -p planet-view
/usr/bin/python3 - "$work/palisade.tif" <<'PY'
import sys
from osgeo import gdal
gdal.Translate(sys.argv[1], "/usr/local/share/planet/dems/sierra-nevada-srtmgl3.tif", srcWin=[1100, 500, 940, 940])
PY
target/release/planet-bake --dem "$work/palisade.tif" --body earth --out "$work/palisade.planetpack" >/dev/null 2>&1
shots() {
    for k in 1 2 3 4 5; do
        target/release/planet-view "$work/palisade.planetpack" --lat 36.93 --lon -118.52 --alt 12000 --heading 300 \
            --pitch -25 --size 960x540 --time 2026-03-21T00:57:00Z --shot "$work/$1.png" --stats "$work/$1-$k.json" 2>/dev/null
    done
    /usr/bin/python3 - "$work" "$1" <<'PY'
import json, statistics, sys
work, label = sys.argv[1:]
runs = [json.load(open(f"{work}/{label}-{k}.json"))["gpu_ms"] for k in range(1, 6)]
shaded = [r["terrain_shaded"] for r in runs]
print(f"| {label} | {statistics.median(shaded):,.0f} ms | {min(shaded):,.0f}-{max(shaded):,.0f} | "
      f"{statistics.median(r['total'] for r in runs):,.0f} ms |")
PY
}
echo "| shader | shaded terrain pass, median of 5 | runs | whole frame, median |"
echo "|---|---:|---|---:|"
git show "$rev:shaders/surface.glsl" > shaders/surface.glsl
cargo build --release --locked -q -p planet-view
shots before
cp "$work/surface.now.glsl" shaders/surface.glsl
cargo build --release --locked -q -p planet-view
shots after
