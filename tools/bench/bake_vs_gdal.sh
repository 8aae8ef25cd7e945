#!/usr/bin/env bash
# Bake throughput against GDAL writing a zstd COG (a tiled, compressed
# pyramid) of the same raster, side by side in one run, both on every core.
# Each tool runs ROUNDS times (default 3), interleaved, and each figure is
# its best round: on a machine shared with other builds one round of either
# tool can take 1.5x its best. Rates are output samples per second: pack tiles x 131^2 for planet-bake,
# pixels of the full-resolution image plus its overviews for GDAL. A
# one-worker bake of each raster (--jobs 1, before the timed one) gives the
# default pool's parallel efficiency: one-worker seconds / (cores x seconds).
# GDAL runs twice: at its default zstd level (9) and at the level the pack
# was written with (LEVEL, default 4, planet-bake's default), so the
# comparison is stated both ways.
#
# usage: [PLANET_BAKE=path] [LEVEL=n] [ROUNDS=n] tools/bench/bake_vs_gdal.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/bake-bench}
mkdir -p "$out"
tools/deps.sh --bench --demo
cargo build --release --locked -q -p planet-bake
etopo5=/usr/share/ferret-vis/data/etopo5.cdf
# 8192 x 4096 from ETOPO5 (bilinear), so it is real ground that passes the
# landmark audit; written as a tiled GeoTIFF. ETOPO5 runs 0..360, and
# gdalwarp does not wrap a source across the antimeridian, so its columns
# are rolled to -180..180 first.
if [[ ! -f $out/earth-8192.tif ]]; then
    /usr/bin/python3 tools/bench/etopo5_180.py "$etopo5" "$out/etopo5-180.tif"
    gdalwarp -q -overwrite -r bilinear -ts 8192 4096 -te -180 -90 180 90 -t_srs EPSG:4326 \
        -co TILED=YES -ot Float32 "$out/etopo5-180.tif" "$out/earth-8192.tif"
fi

cog_samples() {  # full image plus overviews
    /usr/bin/python3 -c "
from osgeo import gdal
ds = gdal.Open('$1')  # keep the dataset alive while its band is used
b = ds.GetRasterBand(1)
n = b.XSize * b.YSize + sum(b.GetOverview(i).XSize * b.GetOverview(i).YSize for i in range(b.GetOverviewCount()))
print(n)"
}

# PLANET_BAKE=path measures another build (an earlier commit's) the same way.
bake=${PLANET_BAKE:-${CARGO_TARGET_DIR:-target}/release/planet-bake}
level=${LEVEL:-4}
rounds=${ROUNDS:-3}
report() { /usr/bin/python3 -c "import json; r = json.load(open('$1')); print($2)"; }
echo "best of $rounds rounds; machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| raster | tool | output samples | seconds | M samples/s |"
echo "|---|---|---:|---:|---:|"
rate() { echo "scale=2; $1 / $2 / 1000000" | bc; }
for raster in "$etopo5" "$out/earth-8192.tif"; do
    name=$(basename "$raster")
    pack=$out/$name.planetpack
    # Each round runs the timed bake, GDAL at both levels and the one-worker
    # bake in turn, so a disturbance of the shared machine falls on one
    # tool's round, not on one tool; each figure is its best round.
    best_bake= best_audit= best_whole= best_bake1= best_audit1= best_gdal9= best_gdal4=
    min() { if [[ -z $1 ]] || (( $(echo "$2 < $1" | bc) )); then echo "$2"; else echo "$1"; fi; }
    for round in $(seq "$rounds"); do
        start=$(date +%s.%N)
        "$bake" --level "$level" --dem "$raster" --body earth --out "$pack" --report "$out/$name.json" 2>/dev/null
        best_whole=$(min "$best_whole" "$(echo "$(date +%s.%N) - $start" | bc)")
        best_bake=$(min "$best_bake" "$(report "$out/$name.json" "r['timings_s']['bake']")")
        best_audit=$(min "$best_audit" "$(report "$out/$name.json" "r['timings_s']['audit']")")
        for gdal_level in 9 "$level"; do
            start=$(date +%s.%N)
            gdal_translate -q -of COG -co COMPRESS=ZSTD -co LEVEL="$gdal_level" -co NUM_THREADS=ALL_CPUS "$raster" "$out/$name.cog$gdal_level.tif"
            seconds=$(echo "$(date +%s.%N) - $start" | bc)
            if [[ $gdal_level == 9 ]]; then best_gdal9=$(min "$best_gdal9" "$seconds"); else best_gdal4=$(min "$best_gdal4" "$seconds"); fi
        done
        # One worker, for the parallel efficiency of the default pool.
        "$bake" --jobs 1 --level "$level" --dem "$raster" --body earth --out "$pack" --report "$out/$name.1.json" 2>/dev/null
        best_bake1=$(min "$best_bake1" "$(report "$out/$name.1.json" "r['timings_s']['bake']")")
        best_audit1=$(min "$best_audit1" "$(report "$out/$name.1.json" "r['timings_s']['audit']")")
    done
    samples=$(report "$out/$name.json" "r['samples']")
    bake_rate=$(rate "$samples" "$best_bake")
    whole_rate=$(rate "$samples" "$best_whole")
    printf '| %s | planet-bake --level %s, bake only (audit %.2f s more) | %s | %.2f | %s |\n' "$name" "$level" "$best_audit" "$samples" "$best_bake" "$bake_rate"
    printf '| %s | planet-bake --level %s, whole command incl. audits | %s | %.2f | %s |\n' "$name" "$level" "$samples" "$best_whole" "$whole_rate"
    for gdal_level in 9 "$level"; do
        seconds=$best_gdal9
        [[ $gdal_level == 9 ]] || seconds=$best_gdal4
        cog=$(cog_samples "$out/$name.cog$gdal_level.tif")
        gdal_rate=$(rate "$cog" "$seconds")
        printf '| %s | gdal_translate -of COG -co COMPRESS=ZSTD -co LEVEL=%s (%s bytes) | %s | %.2f | %s |\n' "$name" "$gdal_level" "$(stat -c %s "$out/$name.cog$gdal_level.tif")" "$cog" "$seconds" "$gdal_rate"
        echo "| $name | ratios against GDAL at level $gdal_level: bake $(echo "scale=2; $bake_rate / $gdal_rate" | bc), whole command $(echo "scale=2; $whole_rate / $gdal_rate" | bc) | | | |"
    done
    printf '| %s | planet-bake --jobs 1: bake %.2f s, audit %.2f s; parallel efficiency of the default pool: bake %s, audit %s | | | |\n' "$name" "$best_bake1" "$best_audit1" "$(echo "scale=2; $best_bake1 / ($(nproc) * $best_bake)" | bc)" "$(echo "scale=2; $best_audit1 / ($(nproc) * $best_audit)" | bc)"
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
