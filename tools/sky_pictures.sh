#!/usr/bin/env bash
# The sky pictures of docs/ground.md: the sun rising over the Himalaya
# (looking into it, 3 km over the ground), the night side of the demo Earth
# from orbit, the terminator, and the High Sierra under a low evening sun.
#
#   tools/sky_pictures.sh [OUT_DIR]     (default: docs/images)
#
# Needs tools/demo.sh's packs and a release build of planet-view.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/images}
mkdir -p "$out"
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
view=(target/release/planet-view --size 640x360 --validation)
# 07:00 local solar time at 86.8 E on the equinox: the sun 12 degrees up in the east.
"${view[@]}" packs/earth.planetpack --lat 27.95 --lon 86.8 --agl 3000 --heading 95 --pitch 8 \
    --time 2026-03-20T01:13:00Z --shot "$out/sky-sunrise-himalaya.png"
"${view[@]}" packs/earth.planetpack --lat 0 --lon 0 --alt 15000000 --pitch -90 \
    --time 2026-03-20T00:00:00Z --shot "$out/sky-night-side.png"
"${view[@]}" packs/earth.planetpack --lat 0 --lon 0 --alt 15000000 --pitch -90 \
    --time 2026-03-20T06:00:00Z --shot "$out/sky-terminator.png"
# 18:30 local solar time at 118.5 W in midsummer: the sun low in the north-west.
"${view[@]}" packs/earth.planetpack packs/sierra.planetpack --lat 36.98 --lon -118.5 --agl 1500 \
    --heading 300 --pitch -4 --time 2026-06-22T02:24:00Z --shot "$out/sky-sierra-low-sun.png"
