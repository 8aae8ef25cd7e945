#!/usr/bin/env bash
# Peak resident memory of planet-bake under a fixed --memory budget while the
# raster's pixels and the pack's tiles both grow 4x per step, up to a raster
# whose decoded pixels alone are larger than the budget. The rasters are
# ETOPO5 (the demo data) resampled with GDAL to 2160 x 1080 Float32 pixels
# and doubled each way per step, to 34560 x 17280 at step 5 (tiled,
# uncompressed GeoTIFFs: 9 MB to 2.4 GB), each baked globally at the depth
# its pixels support (2 to 6), so tiles grow 126, 510, 2,046, 8,190,
# 32,766. Peak RSS is
# /usr/bin/time -v's "Maximum resident set size"; time is the bake's wall
# time including the landmark and accuracy audits.
#
# usage: tools/bench/bake_memory.sh [OUT_DIR] [BUDGET] [JOBS] [STEPS]
#   defaults: target/bake-memory 256M 2 5; PACK_DEPTHS="4 5 6" for the second table
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/bake-memory}
budget=${2:-256M}
jobs=${3:-2}
steps=${4:-5}
mkdir -p "$out"
tools/deps.sh --bench --demo
cargo build --release --locked -q -p planet-bake
bake=${CARGO_TARGET_DIR:-target}/release/planet-bake
etopo5=/usr/share/ferret-vis/data/etopo5.cdf

# ETOPO5 runs 0..360 and gdalwarp does not wrap a source across the
# antimeridian, so its columns are rolled to -180..180 once (as in
# bake_vs_gdal.sh).
if [[ ! -f $out/etopo5-180.tif ]]; then
    /usr/bin/python3 tools/bench/etopo5_180.py "$etopo5" "$out/etopo5-180.tif"
fi

printf '%-13s %9s %6s %7s %9s %10s %10s\n' raster "pixels MB" depth tiles "bake s" "peak RSS" budget
for step in $(seq 0 $((steps - 1))); do
    width=$((2160 << step))
    height=$((1080 << step))
    raster=$out/earth-$width.tif
    if [[ ! -f $raster ]]; then
        gdalwarp -q -overwrite -r bilinear -ts "$width" "$height" -te -180 -90 180 90 -t_srs EPSG:4326 \
            -co TILED=YES -co BIGTIFF=IF_SAFER -ot Float32 "$out/etopo5-180.tif" "$raster"
    fi
    pack=$out/earth-$width.planetpack
    rm -f "$pack" "$pack.partial" "$pack.tmp"
    /usr/bin/time -v -o "$out/time-$width.txt" "$bake" --dem "$raster" --body earth --out "$pack" \
        --memory "$budget" --jobs "$jobs" --tier bench --report "$out/report-$width.json" 2>"$out/log-$width.txt"
    rss_kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out/time-$width.txt")
    read -r depth tiles seconds < <(/usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["depth"], r["tiles"], round(r["timings_s"]["total"], 1))' "$out/report-$width.json")
    printf '%-13s %9d %6d %7d %9s %7d MiB %10s\n' "${width}x$height" $((width * height * 4 / 1000000)) \
        "$depth" "$tiles" "$seconds" $((rss_kib / 1024)) "$budget"
done

# Then the pack alone grows: the smallest raster baked past the depth it
# supports (PACK_DEPTHS, default "4 5 6": 2,046 to 32,766 tiles), so any
# state kept per tile shows as RSS growth at a fixed raster.
raster=$out/earth-2160.tif
printf '\n%-13s %6s %7s %9s %10s\n' raster depth tiles "bake s" "peak RSS KiB"
for depth in ${PACK_DEPTHS:-4 5 6}; do
    pack=$out/earth-2160-d$depth.planetpack
    rm -f "$pack" "$pack.partial" "$pack.tmp"
    /usr/bin/time -v -o "$out/time-d$depth.txt" "$bake" --dem "$raster" --body earth --out "$pack" --depth "$depth" \
        --memory "$budget" --jobs "$jobs" --tier bench --report "$out/report-d$depth.json" 2>"$out/log-d$depth.txt"
    rss_kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out/time-d$depth.txt")
    read -r tiles seconds < <(/usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["tiles"], round(r["timings_s"]["total"], 1))' "$out/report-d$depth.json")
    printf '%-13s %6d %7d %9s %10d\n' 2160x1080 "$depth" "$tiles" "$seconds" "$rss_kib"
    rm -f "$pack"
done
