#!/usr/bin/env bash
# The pictures of docs/tools.md's "Several bodies and a second view": the
# Earth (the demo's pack, Blue Marble imagery) rising over the Moon's limb,
# seen from 10 km over the Moon's eastern limb near the first quarter (each
# body placed by planet_geo::system at --time, the Moon on procedural
# ground), and a second view beside the first (the Sierra from 200 km, and
# from 7 km up looking over the Palisades), both in one slot budget.
#
#   tools/bodies_pictures.sh [OUT_DIR]     (default: docs/images)
#
# Needs tools/demo.sh's packs and a release build of planet-view.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/images}
mkdir -p "$out"
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
view=(target/release/planet-view --size 640x360 --validation)
"${view[@]}" packs/earth.planetpack --body moon --procedural 3 --lat 0 --lon 96 --alt 10000 --heading 270 \
    --pitch -5 --fov 12 --time 2026-03-26T00:00:00Z --shot "$out/bodies-earthrise.png"
"${view[@]}" packs/earth.planetpack packs/sierra.planetpack --lat 37.1 --lon -118.5 --alt 200000 --pitch -90 \
    --view2=37.0,-118.6,7000,60,-12 --time 2026-06-21T18:00:00Z --shot "$out/views-sierra-beside.png"
