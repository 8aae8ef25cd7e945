#!/usr/bin/env bash
# The pictures of docs/ground.md: the demo's stack (ETOPO5 with NASA's SRTM
# of the High Sierra over it) below North Palisade from 10 km, 100 m and
# 2 m, with ground detail off and on, and GDAL's own hillshade of the same
# DEM over the same ground for comparison.
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
stack=(packs/earth.planetpack packs/sierra.planetpack)
for shot in "10km:36.95:-118.25:--alt:10000:300:-12" "100m:37.075:-118.49:--agl:100:330:-10" \
    "2m:37.085:-118.505:--agl:2:330:-4"; do
    IFS=: read -r name lat lon flag height heading pitch <<<"$shot"
    for detail in off on; do
        target/release/planet-view "${stack[@]}" --lat "$lat" --lon "$lon" "$flag" "$height" \
            --heading "$heading" --pitch "$pitch" --size 480x270 --detail "$detail" \
            --time 2026-06-21T16:00:00Z --slots 2048 --budget 2042 --validation \
            --shot "$out/sierra-$name-detail-$detail.png"
    done
done
# GDAL's hillshade of the DEM itself, the Palisades (north up, sun from the
# north-west at 45 degrees), and the pack's own map of the same box.
dem=/usr/local/share/planet/dems/sierra-nevada-srtmgl3.tif
scratch=$(mktemp -d)
gdal_translate -q -projwin -118.75 37.25 -118.47 36.95 "$dem" "$scratch/window.tif"
gdaldem hillshade -q -z 1.5 -s 111120 -az 315 -alt 45 "$scratch/window.tif" "$scratch/hs.tif"
gdal_translate -q -of PNG -outsize 480 0 "$scratch/hs.tif" "$out/sierra-gdaldem-hillshade.png"
rm -f "$out/sierra-gdaldem-hillshade.png.aux.xml"
rm -rf "$scratch"
target/release/planet-pack map packs/sierra.planetpack --png "$out/sierra-map.png" --width 480 \
    --region 36.95,-118.75,37.25,-118.47 --detail off
