#!/usr/bin/env bash
# The sky, water and shadow pictures of docs/ground.md: the sun rising
# over the Himalaya (looking into it, 3 km over the ground), the night side
# of the demo Earth from orbit, the terminator, the High Sierra under a low
# evening sun, the Pacific toward a low sun from 10 km and level from
# 100 m, the Great Bahama Bank's shallows from 40 km, the Aegean's
# coasts from 120 km, the Sierra's SRTM alone among no data, the cast shadows and ambient occlusion (off, on,
# mask) over the Sierra at a low sun, and at noon.
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
# 06:52 local solar time at 140 W on the equinox: the sun 13 degrees up in
# the east, ahead of a camera 10 km over the Pacific looking east.
"${view[@]}" packs/earth.planetpack --lat 0 --lon -140 --alt 10000 --heading 90 --pitch -8 \
    --time 2026-03-20T16:12:00Z --shot "$out/water-pacific-glint.png"
# The same sea with the sun behind the camera: the sky reflected, no glint.
"${view[@]}" packs/earth.planetpack --lat 0 --lon -140 --alt 10000 --heading 270 --pitch -8 \
    --time 2026-03-20T16:12:00Z --shot "$out/water-pacific-away.png"
# 100 m over the Pacific at midday, looking level: the horizon where a sea
# at 0 m puts it, 0.32 degrees below level (drawn on its floor, 4.3 km
# down, it lay 2.1 degrees below).
"${view[@]}" packs/earth.planetpack --lat 0 --lon -140 --agl 100 --heading 90 --pitch 0 \
    --time 2026-03-20T20:00:00Z --shot "$out/water-pacific-100m.png"
# The Great Bahama Bank's edge from 40 km: its floor 10 m down shows through
# the water; the Tongue of the Ocean, 2 km deep, does not.
"${view[@]}" packs/earth.planetpack --lat 23.6 --lon -78.9 --alt 40000 --heading 20 --pitch -50 \
    --time 2026-03-20T17:15:00Z --shot "$out/water-bahama-bank.png"
# Midday over the Peloponnese: coasts drawn from the 5' land mask.
"${view[@]}" packs/earth.planetpack --lat 36.6 --lon 23.3 --alt 120000 --heading 20 --pitch -40 \
    --time 2026-06-21T12:30:00Z --shot "$out/water-aegean-coasts.png"
# The Sierra's SRTM alone from 30 km: beyond its box, no data, met on a
# gentle slope (no cliff), under a faint graticule.
"${view[@]}" packs/sierra.planetpack --lat 36.3 --lon -118.9 --alt 30000 --heading 30 --pitch -20 \
    --time 2026-06-21T18:00:00Z --shot "$out/no-data-sierra-alone.png"
# 17:06 local solar time at 118.25 W on the equinox: the sun 10 degrees up
# in the west, the Sierra crest's shadow across Owens Valley.
for shadows in off on mask; do
    "${view[@]}" packs/earth.planetpack packs/sierra.planetpack --lat 36.95 --lon -118.25 --alt 10000 \
        --heading 300 --pitch -12 --time 2026-03-21T01:00:00Z --shadows "$shadows" \
        --shot "$out/shadows-sierra-10km-$shadows.png"
done
# Local noon at 118.25 W on the equinox: the sun 53 degrees up; what
# darkens the canyons and cirques is the sky's openness, not a cast shadow.
for shadows in off on; do
    "${view[@]}" packs/earth.planetpack packs/sierra.planetpack --lat 36.95 --lon -118.25 --alt 10000 \
        --heading 300 --pitch -12 --time 2026-03-20T19:53:00Z --shadows "$shadows" \
        --shot "$out/shadows-sierra-10km-noon-$shadows.png"
done
# Snow by season: the SRTM around North Palisade alone (a 78 km crop, wider
# than the light tests' 43 km), local noon on 15 February, 21 June and 15 August.
crop=$(mktemp -d)
/usr/bin/python3 - "$crop/palisade.tif" <<'PY'
import sys
from osgeo import gdal
gdal.Translate(sys.argv[1], "/usr/local/share/planet/dems/sierra-nevada-srtmgl3.tif", srcWin=[1100, 500, 940, 940])
PY
target/release/planet-bake --dem "$crop/palisade.tif" --body earth --out "$crop/palisade.planetpack"
# The light test's view of the same ground at 17:00 local solar time on
# the equinox: the sun 12 degrees up in the west, shadows off, on, mask.
for shadows in off on mask; do
    "${view[@]}" "$crop/palisade.planetpack" --lat 36.93 --lon -118.52 --alt 12000 --heading 300 --pitch -25 \
        --time 2026-03-21T00:57:00Z --shadows "$shadows" --shot "$out/light-sierra-low-sun-$shadows.png"
done
for date in 2026-02-15 2026-06-21 2026-08-15; do
    "${view[@]}" "$crop/palisade.planetpack" --lat 37.02 --lon -118.62 --alt 7000 --heading 330 --pitch -12 \
        --time "${date}T19:54:00Z" --shot "$out/snow-sierra-$date.png"
done
rm -r "$crop"
