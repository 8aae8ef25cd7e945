#!/usr/bin/env bash
# The before/after pictures of docs/ground.md: the demo's stack over the
# Himalaya from 10 km, 100 m and 2 m, with ground detail off and on.
#
#   tools/detail_pictures.sh [OUT_DIR]     (default: docs/images)
#
# Needs tools/demo.sh's packs and a release build of planet-view. The same
# instant for every shot (the sun holds still between them).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/images}
mkdir -p "$out"
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
stack=(packs/earth.planetpack packs/himalaya.planetpack)
for shot in "10km:27.6:86.3:--alt:10000:60:-12" "100m:27.95:86.85:--agl:100:300:-10" "2m:27.95:86.85:--agl:2:300:-4"; do
    IFS=: read -r name lat lon flag height heading pitch <<<"$shot"
    for detail in off on; do
        target/release/planet-view "${stack[@]}" --lat "$lat" --lon "$lon" "$flag" "$height" \
            --heading "$heading" --pitch "$pitch" --size 480x270 --detail "$detail" \
            --time 2026-03-20T05:00:00Z --slots 2048 --budget 2042 \
            --shot "$out/himalaya-$name-detail-$detail.png"
    done
done
