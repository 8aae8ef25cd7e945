#!/usr/bin/env bash
# Pack against GDAL's zstd Cloud Optimized GeoTIFF, side by side in one run:
# the same samples (face 0 of a procedural Earth at depth 5, 4097 x 4097),
# random tile read vs random 512 x 512 block read, and file sizes.
#
# usage: tools/bench/pack_vs_cog.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/pack-bench}
mkdir -p "$out"
tools/deps.sh --bench

cargo bench --locked -p planet-terrain --bench pack -- "$out" 5 | tee "$out/pack.txt"

# Float32 keeps the samples exactly (the pack keeps them to its quantisation
# step, about a centimetre here); Int16 rounds them to whole metres.
gdal_translate -q -of COG -co COMPRESS=ZSTD -co LEVEL=9 -co BLOCKSIZE=512 -co PREDICTOR=YES \
    -co OVERVIEWS=NONE "$out/face0.f32" "$out/face0-float32.tif"
gdal_translate -q -of COG -ot Int16 -co COMPRESS=ZSTD -co LEVEL=9 -co BLOCKSIZE=512 -co PREDICTOR=YES \
    -co OVERVIEWS=NONE "$out/face0.f32" "$out/face0-int16.tif"

echo
echo "# GDAL $(gdal-config --version 2>/dev/null || gdalinfo --version) on the same samples"
for tif in "$out/face0-float32.tif" "$out/face0-int16.tif"; do
    python3_gdal=/usr/bin/python3
    result=$($python3_gdal tools/bench/gdal_block_read.py "$tif" 4000)
    echo "$result"
    echo "size $(stat -c %s "$tif") bytes  $tif"
done
echo "size $(stat -c %s "$out/face0.planetpack") bytes  $out/face0.planetpack"
